//go:build linux

package exectarget_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
)

const markerEnv = "REPLAYSPEC_REAPER_TEST"

func init() {
	extraModes["setsid-children"] = func() int { return setsidChildren(false) }
	extraModes["setsid-children-hang"] = func() int { return setsidChildren(true) }
	extraModes["daemonize"] = daemonize
}

// setsidChildren is a driver that leaves behind, for each spec, a child
// that called setsid (a session and process group of its own) and a
// daemon that forked again and whose parent exited (re-parented away from
// the driver); then it writes its trace and exits, or hangs.
func setsidChildren(hang bool) int {
	hello()
	s, ok := readSpec()
	if !ok {
		return 0
	}
	for _, mode := range []string{"silent", "daemonize"} {
		c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", mode)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	time.Sleep(100 * time.Millisecond) // let the daemon's parent exit
	lines := simTrace(s)
	fmt.Println(strings.Join(lines, "\n"))
	if hang {
		time.Sleep(time.Hour)
	}
	fmt.Printf("{\"end\":%d}\n", len(lines)-1)
	return 0
}

// daemonize starts a silent grandchild in a new session and exits.
func daemonize() int {
	c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "silent")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	_ = c.Start()
	return 0
}

// markedProcs lists the live processes whose environment holds marker.
func markedProcs(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !strings.Contains(string(env), marker) {
			continue
		}
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		if pid != os.Getpid() && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestNothingADriverStartsSurvives: children a driver starts with setsid,
// and daemons that fork away from it, are ended with the spec, whether the
// driver finishes or is killed at the timeout (issue 25: one setsid child
// per spec outlived the run). The reaper does it; killing the driver's
// process group alone would not (the fallback, shown last).
func TestNothingADriverStartsSurvives(t *testing.T) {
	s := loadSpec(t)
	for _, c := range []struct {
		mode    string
		timeout time.Duration
		reaper  bool
		survive bool
	}{
		{"setsid-children", 15 * time.Second, true, false},
		{"setsid-children-hang", 3 * time.Second, true, false},
		{"setsid-children", 15 * time.Second, false, true}, // without the reaper
	} {
		t.Run(fmt.Sprintf("%s/reaper=%v", c.mode, c.reaper), func(t *testing.T) {
			marker := fmt.Sprintf("%d-%s-%v", os.Getpid(), c.mode, c.reaper)
			t.Setenv(markerEnv, marker)
			defer exectarget.UseReaper(exectarget.UseReaper(c.reaper))
			tg, err := exectarget.NewExec(fake(t, c.mode), exectarget.ExecOptions{Timeout: c.timeout, HandshakeTimeout: 15 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			_, err = tg.Run(ctx, s, target.Options{})
			if (err == nil) != (c.mode == "setsid-children") {
				t.Fatalf("run: %v", err)
			}
			var left []int
			for range 100 { // the reaper has finished before Run returns; allow for a loaded machine
				if left = markedProcs(markerEnv + "=" + marker); len(left) == 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			switch {
			case !c.survive && len(left) > 0:
				t.Errorf("%d processes the driver started outlived its spec: %v", len(left), left)
			case c.survive && len(left) == 0:
				t.Errorf("without the reaper a setsid child should survive (the limit docs/driver-protocol.md states); none did")
			}
		})
	}
}

// TestKilledRunnerLeavesNoDriver: a runner killed outright (SIGKILL, the
// OOM killer) cannot end its drivers itself; their reapers see it die and
// end them with everything they started.
func TestKilledRunnerLeavesNoDriver(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	t.Setenv(pidFileEnv, pidFile)
	_ = fake(t, "runner") // sets the helper's environment
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "runner")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var driverPid, childPid int
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(pidFile)
		if err == nil {
			if _, err := fmt.Sscanf(string(b), "%d %d", &driverPid, &childPid); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the driver never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, pid := range []int{driverPid, childPid} {
		if !gone(pid) {
			t.Errorf("process %d outlived the killed runner", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
