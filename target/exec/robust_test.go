//go:build unix

package exectarget_test

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

	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

const pidFileEnv = "REPLAYSPEC_PIDFILE"

func init() {
	extraModes["done-with-child"] = doneWithChild
	extraModes["black-box"] = func() int { return blackBox("black-box", false, false) }
	extraModes["black-box-full-header"] = func() int { return blackBox("black-box", true, false) }
	extraModes["black-box-kernel-event"] = func() int { return blackBox("black-box", false, true) }
	extraModes["unknown-profile"] = func() int { return blackBox("glass-box", false, false) }
	extraModes["runner"] = interruptedRunner
	extraModes["hang-with-child-pidfile"] = hangWithChildPidFile
}

// doneWithChild writes its whole trace and end line, leaves a child
// holding stdout and stderr, and exits 0: the end line and the exit are
// enough, and the child is ended with the group.
func doneWithChild() int {
	hello()
	s, ok := readSpec()
	if !ok {
		return 0
	}
	lines := simTrace(s)
	child := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "silent")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	_ = child.Start()
	fmt.Fprintf(os.Stderr, "child pid %d\n", child.Process.Pid)
	fmt.Println(strings.Join(lines, "\n"))
	fmt.Printf("{\"end\":%d}\n", len(lines)-1)
	return 0
}

// blackBox plays a port of the black-box profile: its handshake says so,
// and its trace holds the tool's and the application's events only; or,
// broken, a header that claims every source, or a runtime event.
func blackBox(profile string, fullHeader, kernelEvent bool) int {
	fmt.Printf(`{"protocol":%q,"implementation":{"name":"fake","version":"0"},"capabilities":[],"profile":%q}`+"\n", driver.Version, profile)
	s, ok := readSpec()
	if !ok {
		return 0
	}
	t, _ := simtarget.Sim{}.Run(context.Background(), s, target.Options{})
	t.Header.Sources = []trace.Source{trace.SourceTool, trace.SourceApp}
	if fullHeader {
		t.Header.Sources = trace.AllSources
	}
	var kept []trace.Event
	for _, e := range t.Events {
		src, _ := e.Type.Source()
		if src == trace.SourceTool || src == trace.SourceApp || (kernelEvent && e.Type == trace.Kernel) {
			kept = append(kept, e)
		}
	}
	t.Events = kept
	os.Stdout.Write(trace.Marshal(t))
	fmt.Printf("{\"end\":%d}\n", len(kept))
	return 0
}

func TestExecEndLineAndExitAreEnough(t *testing.T) {
	tg, err := exectarget.NewExec(fake(t, "done-with-child"), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	s := loadSpec(t)
	// The child the driver left behind sleeps for an hour: a run that
	// waited for it would end only at the spec's timeout, after hangBound.
	var r runner.Result
	endsWithin(t, hangBound, "a run whose driver wrote its end line and exited", func() {
		r = runner.Run(context.Background(), s, runner.Options{Target: tg, Timeout: 40 * time.Second})
	})
	if r.Verdict() != runner.Pass {
		t.Fatalf("verdict %s, want pass: %v", r.Verdict(), r.Err)
	}
	var child int
	if _, err := fmt.Sscanf(tg.Stderr(s.Name), "child pid %d", &child); err != nil {
		t.Fatalf("no child pid in stderr %q", tg.Stderr(s.Name))
	}
	if !gone(child) {
		t.Errorf("the driver's child %d outlived the session", child)
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
}

func TestExecSources(t *testing.T) {
	s := loadSpec(t)
	t.Run("black-box", func(t *testing.T) {
		tg, err := exectarget.NewExec(fake(t, "black-box"), testLimits)
		if err != nil {
			t.Fatal(err)
		}
		if got := tg.Handshake().ReportedSources(); !driver.SameSources(got, []trace.Source{trace.SourceTool, trace.SourceApp}) {
			t.Errorf("sources %v", got)
		}
		r := runner.Run(context.Background(), s, runner.Options{Target: tg})
		if r.Err != nil {
			t.Fatalf("a black-box trace that keeps to its profile is read: %v", r.Err)
		}
	})
	for _, c := range []struct{ mode, want string }{
		{"black-box-full-header", "the trace header reports sources [tool app runtime sdk], but the handshake declared [tool app]"},
		{"black-box-kernel-event", `is a kernel event, of source "runtime", which the trace header does not report`},
	} {
		t.Run(c.mode, func(t *testing.T) {
			tg, err := exectarget.NewExec(fake(t, c.mode), testLimits)
			if err != nil {
				t.Fatal(err)
			}
			r := runner.Run(context.Background(), s, runner.Options{Target: tg})
			var x *exectarget.ExecError
			if !errors.As(r.Err, &x) || x.What != "bad output" || !strings.Contains(x.Detail, c.want) {
				t.Fatalf("err = %v, want bad output: %s", r.Err, c.want)
			}
		})
	}
	t.Run("unknown-profile", func(t *testing.T) {
		_, err := exectarget.NewExec(fake(t, "unknown-profile"), testLimits)
		if err == nil || !strings.Contains(err.Error(), `unknown profile "glass-box"`) {
			t.Fatalf("err = %v", err)
		}
	})
}

// interruptedRunner is a runner process: it handles interrupts as the CLI
// does and runs a spec on a driver that hangs with a child.
func interruptedRunner() int {
	stop := exectarget.HandleInterrupts()
	defer stop()
	cmd := fmt.Sprintf("'%s' -test.run=^TestHelperProcess$ -- hang-with-child-pidfile", os.Args[0])
	tg, err := exectarget.NewExec(cmd, testLimits)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	s, _ := specForHelper()
	_, _ = tg.Run(context.Background(), s, target.Options{})
	return 4 // the signal should have ended us first
}

func hangWithChildPidFile() int {
	hello()
	if _, ok := readSpec(); !ok {
		return 0
	}
	child := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "silent")
	child.Stdout = os.Stdout
	_ = child.Start()
	_ = os.WriteFile(os.Getenv(pidFileEnv), fmt.Appendf(nil, "%d %d", os.Getpid(), child.Process.Pid), 0o644)
	time.Sleep(time.Hour)
	return 0
}

// TestInterruptEndsDriverGroups: SIGTERM to a runner (a CI runner giving
// up) ends its drivers and what they started, and the runner exits 143.
func TestInterruptEndsDriverGroups(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	t.Setenv(pidFileEnv, pidFile)
	_ = fake(t, "runner") // sets the helper's environment
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "runner")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var driverPid, childPid int
	deadline := time.Now().Add(10 * time.Second)
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
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("runner exit: %v, want status %d", err, 128+int(syscall.SIGTERM))
	}
	for _, pid := range []int{driverPid, childPid} {
		if !gone(pid) {
			t.Errorf("process %d outlived the interrupted runner", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// specForHelper loads the test spec from a helper process.
func specForHelper() (spec.Spec, error) { return spec.Load("../../specs/fixed-three-passes.yaml") }

// gone polls briefly until pid no longer runs (exited, or a zombie that
// nobody but init will reap).
func gone(pid int) bool {
	for range 100 {
		if syscall.Kill(pid, 0) == syscall.ESRCH || isZombie(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
