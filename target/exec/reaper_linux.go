//go:build linux

package exectarget

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The reaper: on Linux each driver runs under a small process of our own
// (this program started again, with reaperEnv set) that is a child
// subreaper (prctl PR_SET_CHILD_SUBREAPER). Whatever the driver starts
// and leaves behind, a child in its process group or a daemon that called
// setsid and forked again, is re-parented to the reaper rather than to
// init; so when the driver exits, when the runner tells the reaper to stop
// (SIGTERM), or when the runner dies (the reaper's parent-death signal),
// the reaper kills every process left under it, waits for each, tells the
// runner how the driver ended (a line on fd 3) and exits. Nothing a driver
// starts survives it, short of a process that kills the reaper itself.
// Without the reaper (another OS, or a program that did not call
// ReaperMain), the runner kills the driver's process group, which misses
// children that called setsid.

const (
	reaperEnv      = "REPLAYSPEC_EXEC_REAPER" // the runner's pid, in a reaper
	prSetPdeathsig = 1
	prSetSubreaper = 36
	// reaperDrain bounds how long the reaper keeps killing what is left: a
	// fork bomb outpacing SIGKILL is given up on, not waited for.
	reaperDrain = 10 * time.Second
)

// reaperOn says whether drivers run under the reaper: ReaperMain was
// called in this program, which can therefore be started as one.
var reaperOn bool

// ReaperMain must be the first thing main (and a test's TestMain) does in
// a program that runs exec targets: in a process started as a driver's
// reaper it reaps, then exits; in any other it turns the reaper on for
// the drivers this program starts.
func ReaperMain() {
	if os.Getenv(reaperEnv) == "" {
		if _, err := os.Executable(); err == nil {
			reaperOn = true
		}
		return
	}
	os.Exit(reap())
}

// reaperCommand is the command that runs argv under a reaper, and the pipe
// its status line comes on (the runner closes it).
func reaperCommand(ctx context.Context, argv []string) (*exec.Cmd, *os.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, self, argv...)
	cmd.Env = append(os.Environ(), reaperEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.ExtraFiles = []*os.File{w} // fd 3: the driver's status
	// Its own process group, so that a terminal's Ctrl-C reaches neither
	// it nor the driver; a parent-death signal, so that a runner killed
	// outright still has its drivers ended.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
	cmd.Cancel = func() error { return stopReaper(cmd) }
	cmd.WaitDelay = reaperDrain + 5*time.Second // a reaper that does not stop is killed
	return cmd, r, nil
}

// stopReaper tells a reaper to end its driver and everything under it.
func stopReaper(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

// reap is the reaper's life; its exit status is 0 unless it broke.
func reap() int {
	parent, _ := strconv.Atoi(os.Getenv(reaperEnv))
	os.Unsetenv(reaperEnv) // the driver is no reaper, even if it is this program
	status := os.NewFile(3, "status")
	say := func(format string, a ...any) { fmt.Fprintf(status, format+"\n", a...) }
	if os.Getppid() != parent {
		say("start the runner ended before its driver started")
		return 1
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetSubreaper, 1, 0); e != 0 {
		say("start prctl(PR_SET_CHILD_SUBREAPER): %v", e)
		return 1
	}
	stop := make(chan os.Signal, 4)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)

	argv := os.Args[1:]
	if len(argv) == 0 {
		say("start no driver command")
		return 1
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		say("start %v", err)
		return 0
	}
	// The driver holds stdin, stdout and stderr now: the runner's reading
	// ends with the driver's, not with ours.
	for _, fd := range []int{0, 1, 2} {
		_ = syscall.Close(fd)
	}

	driverDone := make(chan syscall.WaitStatus, 1)
	allGone := make(chan struct{})
	go func() {
		for {
			var ws syscall.WaitStatus
			p, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case err == syscall.EINTR:
				continue
			case err != nil: // ECHILD: nothing is left under us
				close(allGone)
				return
			case p == pid:
				driverDone <- ws
			}
		}
	}()

	var ws syscall.WaitStatus
	exited := false
	for waiting := true; waiting; {
		select {
		case ws = <-driverDone:
			exited, waiting = true, false
		case sig := <-stop:
			// A parent-death signal can come from the runner's thread
			// ending while the runner lives on: only a real death counts.
			if sig == syscall.SIGHUP && os.Getppid() == parent {
				continue
			}
			waiting = false
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	killAll(allGone)
	if !exited {
		select {
		case ws = <-driverDone:
			exited = true
		default:
		}
	}
	switch {
	case !exited:
		say("lost")
	case ws.Signaled():
		say("signal %d", int(ws.Signal()))
	default:
		say("exit %d", ws.ExitStatus())
	}
	return 0
}

// killAll kills every process under the reaper, again and again (what a
// killed process leaves is re-parented to us), until none is left.
func killAll(allGone <-chan struct{}) {
	self := os.Getpid()
	deadline := time.Now().Add(reaperDrain)
	for time.Now().Before(deadline) {
		for _, c := range children(self) {
			_ = syscall.Kill(c.pid, syscall.SIGKILL)
			if c.pgid != c.pid && c.pgid != self {
				_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
			}
		}
		select {
		case <-allGone:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

type proc struct{ pid, pgid int }

// children lists the processes whose parent is ppid (from /proc).
func children(ppid int) []proc {
	var out []proc
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		f, err := os.Open(d)
		if err != nil {
			continue
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ')'.
		i := strings.LastIndexByte(line, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(line[i+1:])
		if len(fields) < 3 {
			continue
		}
		p, _ := strconv.Atoi(fields[1])
		if p != ppid {
			continue
		}
		pid, _ := strconv.Atoi(strings.Fields(line)[0])
		pgid, _ := strconv.Atoi(fields[2])
		out = append(out, proc{pid, pgid})
	}
	return out
}

// readStatus reads the reaper's status line: how the driver ended. ok is
// false when there is none (the reaper itself was killed).
func readStatus(r *os.File) (exit error, ok bool) {
	_ = r.SetReadDeadline(time.Now().Add(time.Second))
	line, _ := bufio.NewReader(r).ReadString('\n')
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	n, _ := strconv.Atoi(rest)
	switch word {
	case "exit":
		if n == 0 {
			return nil, true
		}
		return &driverExit{code: n}, true
	case "signal":
		return &driverExit{signal: syscall.Signal(n)}, true
	case "start":
		return &startError{rest}, true
	}
	return nil, false
}
