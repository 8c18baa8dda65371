package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/replayspec/replayspec/report"
)

// foreverSpec runs until it is stopped: an indefinite loop with a budget
// far beyond what the test waits for.
const foreverSpec = `version: 1
name: forever
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - {name: replay, services: {kernel_replay: {}}}
tool:
  plan:
    passes: 0
    continue: {always: true}
application:
  buffers: [{name: x, agent: gpu0, elements: 16}]
  dispatches: [{name: d, kernel: increment, agent: gpu0, args: [x]}]
limits: {max_passes: 60000}
expect: {never_ends: [d]}
`

// TestInterruptEndsDriversAndKeepsResults: SIGINT or SIGTERM in the middle
// of a run through exec drivers ends every driver's process group, keeps
// the results that finished (streamed before the signal) and exits 130 or
// 143.
func TestInterruptEndsDriversAndKeepsResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as processes")
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			tiny := tempFile(t, dir, "tiny.yaml", okSpec)
			forever := tempFile(t, dir, "forever.yaml", foreverSpec)
			marker := fmt.Sprintf("REPLAYSPEC_INTERRUPT_TEST=%d-%s", os.Getpid(), c.sig)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := replayspecBin(t, ctx, "run", "--target", "exec:replayspec driver", "--gen", "0", "--format", "json",
				"--trace-out", filepath.Join(dir, "out"), "--timeout", "90s", tiny, forever)
			cmd.Env = append(cmd.Env, marker)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The first spec's result is streamed while the second runs.
			got, err := readUntil(out, `"name":"tiny"`)
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, got, stderr.String())
			}
			waitFor(t, "a driver of the second spec", func() bool { return len(marked(marker)) > 0 })
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := readUntil(out, `"event":"end"`)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Errorf("exit %v, want status %d\n%s", err, c.code, stderr.String())
			}
			_, results, end, err := report.ReadJSON(strings.NewReader(got + rest))
			if err != nil || len(results) != 2 || results[0].Outcome != "passed" || !strings.Contains(results[1].Error, "interrupted") {
				t.Errorf("results %+v (%v)", results, err)
			}
			if !strings.Contains(end.Stopped, "interrupted by "+signalName(c.sig)+": 1 of 2 specs finished") {
				t.Errorf("end line %+v", end)
			}
			if _, err := os.Stat(filepath.Join(dir, "out", "tiny.ndjson")); err != nil {
				t.Errorf("the finished spec's trace: %v", err)
			}
			waitFor(t, "every driver to end", func() bool { return len(marked(marker)) == 0 })
		})
	}
}

// marked lists the processes whose environment holds marker: the run's
// drivers and their children.
func marked(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !strings.Contains(string(env), marker) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie has ended; its parent has yet to reap it
		}
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFor polls cond until it holds; the go test timeout bounds it.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 3000 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for %s", what)
}

// crashForTest is a command only the test binary has: it breaks the way a
// bug would.
func init() {
	register(command{name: "crash-for-test", summary: "(tests only) crash", run: func(_ context.Context, args []string, _ env) int {
		if len(args) > 0 && args[0] == "goroutine" {
			done := make(chan struct{})
			go func() { defer close(done); panic("a bug in a goroutine") }()
			<-done
			// The deferred close runs before the panic ends the process:
			// wait for it here, or a loaded machine lets the recoverable
			// panic below win the race (exit 3 where SIGABRT is the point).
			time.Sleep(time.Hour)
		}
		panic("a bug")
	}})
}

// TestCrashIsNotBadInput: exit 2 means bad input; a bug in replayspec
// exits 3 (a panic the command recovers) or aborts (one it cannot).
func TestCrashIsNotBadInput(t *testing.T) {
	code, _, errs := cli(t, "crash-for-test")
	if code != exitInternal || !strings.Contains(errs, "internal error (a bug in replayspec, not in your input): a bug") {
		t.Errorf("exit %d, want 3\n%s", code, errs)
	}
	if testing.Short() {
		return
	}
	cmd := replayspecBin(t, context.Background(), "crash-for-test", "goroutine")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the crash did not fail: %v", err)
	}
	ws, _ := ee.Sys().(syscall.WaitStatus)
	if ee.ExitCode() == exitUsage || !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		t.Errorf("a goroutine's panic: %v (status %d), want SIGABRT, never exit 2\n%s", err, ee.ExitCode(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "a bug in a goroutine") {
		t.Errorf("the panic is not on stderr:\n%s", stderr.String())
	}
}
