package exectarget_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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

// The fake drivers are this test binary run again (the os/exec habit): the
// environment variable makes TestHelperProcess play the driver named after
// "--" and exit before the test framework prints anything.
const helperEnv = "REPLAYSPEC_EXEC_HELPER"

// fake returns the command of a fake driver.
func fake(t *testing.T, mode string) string {
	t.Helper()
	t.Setenv(helperEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0") // a -race binary otherwise waits 1 s at exit
	return fmt.Sprintf("'%s' -test.run=^TestHelperProcess$ -- %s", os.Args[0], mode)
}

func hello(caps ...string) {
	if caps == nil {
		caps = simtarget.Sim{}.Capabilities()
	}
	fmt.Printf(`{"protocol":%q,"implementation":{"name":"fake","version":"0"},"capabilities":["%s"]}`+"\n",
		driver.Version, strings.Join(caps, `","`))
}

// readSpec reads stdin; an empty stdin is the probe, answered by the
// handshake alone.
func readSpec() (spec.Spec, bool) {
	body, _ := io.ReadAll(os.Stdin)
	if len(body) == 0 {
		return spec.Spec{}, false
	}
	s, err := spec.ParseJSON("stdin", body)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return s, true
}

// simTrace is the reference trace of s, as NDJSON lines.
func simTrace(s spec.Spec) []string {
	t, _ := simtarget.Sim{}.Run(context.Background(), s, target.Options{})
	return strings.Split(strings.TrimRight(string(trace.Marshal(t)), "\n"), "\n")
}

// extraModes are fake drivers defined in other test files.
var extraModes = map[string]func() int{}

func fakeDriver(mode string) int {
	if f, ok := extraModes[mode]; ok {
		return f()
	}
	impl := driver.Implementation{Name: "fake", Version: "0"}
	switch mode {
	case "reference":
		if err := driver.Serve(context.Background(), os.Stdin, os.Stdout, impl, simtarget.Sim{}, target.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "silent":
		time.Sleep(time.Hour)
	case "banner":
		fmt.Println("starting fake driver v0 ...")
		return 0
	case "old-protocol":
		fmt.Println(`{"protocol":"replayspec.driver/v0","implementation":{"name":"fake","version":"0"},"capabilities":[]}`)
		return 0
	case "unknown-capability":
		hello("indefinite", "teleportation")
		return 0
	case "narrow":
		hello("counters", "MEM")
		if _, ok := readSpec(); ok {
			fmt.Fprintln(os.Stderr, "fake: asked to run a spec it does not claim")
			return 1
		}
		return 0
	case "dies-at-once":
		fmt.Fprintln(os.Stderr, "fake: cannot open /dev/gpu0")
		return 4
	}
	hello()
	s, ok := readSpec()
	if !ok {
		return 0
	}
	lines := simTrace(s)
	switch mode {
	case "crash":
		fmt.Println(strings.Join(lines[:3], "\n"))
		fmt.Fprintln(os.Stderr, "fake: panic: index out of range [3] with length 3")
		return 3
	case "signal":
		fmt.Println(strings.Join(lines[:3], "\n"))
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "non-json":
		fmt.Println(strings.Join(lines[:2], "\n"))
		fmt.Println("pass 0 done, restoring memory")
		fmt.Printf("{\"end\":%d}\n", len(lines)-1)
	case "half-way":
		// An unflushed buffer: the output is cut mid-line and it exits 0.
		out := strings.Join(lines, "\n")
		fmt.Print(out[:len(out)/2])
	case "half-way-lines":
		fmt.Println(strings.Join(lines[:4], "\n"))
	case "end-count":
		fmt.Println(strings.Join(lines, "\n"))
		fmt.Printf("{\"end\":%d}\n", len(lines)+5)
	case "hang":
		fmt.Println(strings.Join(lines[:2], "\n"))
		fmt.Fprintln(os.Stderr, "fake: waiting for the GPU ...")
		time.Sleep(time.Hour)
	case "hang-with-child":
		// A child that inherits stdout and outlives us unless the whole
		// process group is killed.
		child := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", "silent")
		child.Stdout = os.Stdout
		_ = child.Start()
		fmt.Fprintf(os.Stderr, "child pid %d\n", child.Process.Pid)
		fmt.Println(lines[0])
		time.Sleep(time.Hour)
	case "flood-bytes":
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for {
			os.Stdout.Write(chunk)
		}
	case "flood-lines":
		fmt.Println(lines[0])
		for i := 1; ; i++ {
			fmt.Printf("{\"seq\":%d,\"type\":\"signal\",\"signal\":1}\n", i)
		}
	case "after-end":
		fmt.Println(strings.Join(lines, "\n"))
		fmt.Printf("{\"end\":%d}\n", len(lines)-1)
		fmt.Println(lines[1])
	default:
		fmt.Fprintln(os.Stderr, "unknown fake driver mode", mode)
		return 99
	}
	return 0
}

// TestHelperProcess is the fake driver when the test binary is run again
// with the environment variable set; otherwise there is nothing to test.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("the fake drivers run only as a child process")
	}
	for i, a := range os.Args {
		if a == "--" && i+1 < len(os.Args) {
			os.Exit(fakeDriver(os.Args[i+1]))
		}
	}
	os.Exit(99)
}

func loadSpec(t *testing.T) spec.Spec {
	t.Helper()
	s, err := spec.Load("../../specs/fixed-three-passes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hangBound is how long a run bounded by a timeout of a second or less may
// take before a test calls it hung: far above what it takes, so that a
// loaded machine cannot trip it (what the timeouts cost is for benchmarks,
// not tests).
const hangBound = 30 * time.Second

// endsWithin fails the test if f has not returned after limit.
func endsWithin(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s had not ended after %s: it hangs", what, limit)
	}
}

var testLimits = exectarget.ExecOptions{HandshakeTimeout: 15 * time.Second, MaxBytes: 1 << 20, MaxLines: 2000}

// A driver whose trace passes the budget (here one that never stops writing
// well-formed events) is one error naming the budget and how to raise it;
// the trace cut there is neither judged nor kept, so no rule is reported
// against the events it never had the chance to write (issue 23 item 2).
func TestExecTraceBudget(t *testing.T) {
	s := loadSpec(t)
	tg, err := exectarget.NewExec(fake(t, "flood-lines"), exectarget.ExecOptions{HandshakeTimeout: 15 * time.Second, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatalf("handshake probe: %v", err)
	}
	r := runner.Run(context.Background(), s, runner.Options{Target: tg, Timeout: 15 * time.Second})
	var x *exectarget.ExecError
	if r.Verdict() != runner.Error || !errors.As(r.Err, &x) || !errors.Is(r.Err, target.ErrOverBudget) {
		t.Fatalf("verdict %s, err %v: want an error over the budget", r.Verdict(), r.Err)
	}
	if x.What != "over its trace budget" || !strings.Contains(x.Detail, "more than 1 MiB of trace") || !strings.Contains(x.Detail, "raise it with --max-trace-mib") {
		t.Errorf("the error does not name the budget and its flag: %q: %q", x.What, x.Detail)
	}
	if x.Events < 100 || !strings.Contains(r.Err.Error(), fmt.Sprintf("events read: %d", x.Events)) {
		t.Errorf("the error does not count the events read before the budget: %d\n%v", x.Events, r.Err)
	}
	if len(r.Violations) != 0 || len(r.Rules) != 0 || len(r.Trace.Events) != 0 {
		t.Errorf("a trace cut at the budget was judged or kept: %d violations, %d rules judged, %d events", len(r.Violations), len(r.Rules), len(r.Trace.Events))
	}
}

// TestExecBadDrivers runs a spec through each kind of broken driver: each
// is an error that names the spec, what happened, the last lines read and
// the end of stderr, well within the per-spec timeout.
func TestExecBadDrivers(t *testing.T) {
	s := loadSpec(t)
	cases := []struct {
		mode   string
		what   string
		detail string
		last   string // in the last lines shown
		stderr string
		events int // at least
	}{
		{mode: "crash", what: "crashed", detail: "exited with status 3", last: `"seq":2`, stderr: "index out of range", events: 2},
		{mode: "signal", what: "crashed", detail: "was killed by SIGKILL (signal 9: killed)", last: `"seq":2`, events: 2},
		{mode: "non-json", what: "bad output", detail: "stdout line 4 (trace line 3)", last: "pass 0 done"},
		{mode: "half-way", what: "bad output", detail: "line"},
		{mode: "half-way-lines", what: "stopped half-way", detail: "no end line", last: `"seq":3`, events: 3},
		{mode: "end-count", what: "stopped half-way", detail: "events but"},
		{mode: "after-end", what: "bad output", detail: "output after the end line"},
		{mode: "hang", what: "timed out", detail: "no complete trace before the deadline", last: `"seq":1`, stderr: "waiting for the GPU", events: 1},
		{mode: "hang-with-child", what: "timed out", detail: "killed", last: `"trace"`},
		{mode: "flood-bytes", what: "over its trace budget", detail: "wrote more than 1 MiB of trace on stdout (1048576 bytes)"},
		{mode: "flood-lines", what: "flooded its output", detail: "more than 2000 lines"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			tg, err := exectarget.NewExec(fake(t, c.mode), testLimits)
			if err != nil {
				t.Fatalf("handshake probe: %v", err)
			}
			// Only a driver that hangs needs a short timeout; the others
			// get one no loaded machine reaches, so that a slow start never
			// reads as a hang. The short one still leaves a hanging driver
			// time to start (under its reaper: two processes of a -race
			// binary on a loaded machine) and write what the test reads.
			timeout := 15 * time.Second
			if c.what == "timed out" {
				timeout = 4 * time.Second
			}
			var r runner.Result
			endsWithin(t, hangBound, "a run with a per-spec timeout of "+timeout.String(), func() {
				r = runner.Run(context.Background(), s, runner.Options{Target: tg, Timeout: timeout})
			})
			if r.Verdict() != runner.Error {
				t.Fatalf("verdict %s, want error; err: %v", r.Verdict(), r.Err)
			}
			var x *exectarget.ExecError
			if !errors.As(r.Err, &x) {
				t.Fatalf("err is %T, want *exectarget.ExecError: %v", r.Err, r.Err)
			}
			msg := r.Err.Error()
			if x.Spec != s.Name || !strings.Contains(msg, "on spec "+s.Name) {
				t.Errorf("error does not name the spec %s: %s", s.Name, msg)
			}
			if x.What != c.what || !strings.Contains(x.Detail, c.detail) {
				t.Errorf("got %q: %q, want %q containing %q\n%s", x.What, x.Detail, c.what, c.detail, msg)
			}
			if c.last != "" && !strings.Contains(strings.Join(x.Last, "\n"), c.last) {
				t.Errorf("last lines %q do not show %q", x.Last, c.last)
			}
			if c.stderr != "" && !strings.Contains(x.Stderr, c.stderr) {
				t.Errorf("stderr tail %q does not hold %q", x.Stderr, c.stderr)
			}
			if x.Events < c.events || (len(r.Trace.Events) != x.Events && !errors.Is(r.Err, target.ErrOverBudget)) {
				t.Errorf("events read %d (trace holds %d), want at least %d", x.Events, len(r.Trace.Events), c.events)
			}
			var child int
			if _, err := fmt.Sscanf(x.Stderr, "child pid %d", &child); err == nil {
				// The kill reached the whole process group (the child has
				// no parent left to reap it but init, so poll briefly).
				gone := false
				for range 50 {
					if syscall.Kill(child, 0) == syscall.ESRCH || isZombie(child) {
						gone = true
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if !gone {
					t.Errorf("the driver's child %d outlived the kill", child)
					_ = syscall.Kill(child, syscall.SIGKILL)
				}
			}
			if tg.Stderr(s.Name) != x.Stderr {
				t.Errorf("Stderr(%s) = %q, want the tail of the run %q", s.Name, tg.Stderr(s.Name), x.Stderr)
			}
		})
	}
}

// TestExecBadHandshakes: a driver that cannot say what it is never runs a
// spec; the target does not open, and says why.
func TestExecBadHandshakes(t *testing.T) {
	cases := []struct{ mode, want string }{
		{"old-protocol", `speaks protocol "replayspec.driver/v0"; this runner speaks "replayspec.driver/v1"`},
		{"banner", "the first line is not a handshake"},
		{"unknown-capability", "unknown capabilities teleportation"},
		{"dies-at-once", "exited with status 4 before writing its handshake"},
		{"silent", "no handshake line within 300ms"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			// As above: the short timeout only for the driver that says nothing.
			timeout := 15 * time.Second
			if c.mode == "silent" {
				timeout = 300 * time.Millisecond
			}
			var err error
			endsWithin(t, hangBound, "a handshake probe with a timeout of "+timeout.String(), func() {
				_, err = exectarget.NewExec(fake(t, c.mode), exectarget.ExecOptions{HandshakeTimeout: timeout})
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "(handshake probe)") {
				t.Errorf("err does not say it was the probe: %v", err)
			}
			if c.mode == "dies-at-once" && !strings.Contains(err.Error(), "cannot open /dev/gpu0") {
				t.Errorf("err does not show stderr: %v", err)
			}
		})
	}
}

// TestExecSkipsUnclaimed: a spec needing what the port does not claim is
// skipped with the reason, and the driver is not even asked.
func TestExecSkipsUnclaimed(t *testing.T) {
	tg, err := exectarget.NewExec(fake(t, "narrow"), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	if c, f := tg.Capabilities(), tg.Families(); strings.Join(c, ",") != "counters" || strings.Join(f, ",") != "MEM" {
		t.Errorf("capabilities %q, families %q; want [counters] and [MEM]", c, f)
	}
	s := loadSpec(t)
	s.Requires = []string{"counters", "thread-trace"}
	r := runner.Run(context.Background(), s, runner.Options{Target: tg})
	if r.Verdict() != runner.Skip || !strings.Contains(r.SkipReason, "thread-trace") || strings.Contains(r.SkipReason, "counters") {
		t.Fatalf("verdict %s (%s; %v), want skip naming thread-trace only", r.Verdict(), r.SkipReason, r.Err)
	}
}

// TestExecReference: the reference engine behind the protocol gives the
// in-process trace byte for byte, and the handshake is read.
func TestExecReference(t *testing.T) {
	tg, err := exectarget.NewExec(fake(t, "reference"), exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Handshake().Implementation.Name; got != "fake" {
		t.Errorf("implementation %q", got)
	}
	if got := len(tg.Families()); got != len(spec.RuleFamilies) {
		t.Errorf("families %d, want all %d", got, len(spec.RuleFamilies))
	}
	s := spec.Defaults(loadSpec(t))
	var streamed int
	got, err := tg.Run(context.Background(), s, target.Options{Sink: func(*trace.Event) { streamed++ }})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := simtarget.Sim{}.Run(context.Background(), s, target.Options{})
	if !bytes.Equal(trace.Marshal(got), trace.Marshal(want)) {
		t.Errorf("trace through the driver differs from the in-process one")
	}
	if streamed != len(want.Events) {
		t.Errorf("sink saw %d events, want %d", streamed, len(want.Events))
	}
}

// isZombie reports whether pid has exited but is not reaped yet.
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

func TestSplitCommand(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "replayspec driver", want: []string{"replayspec", "driver"}},
		{in: `  python3   "my driver.py" --x 'a b' c\ d`, want: []string{"python3", "my driver.py", "--x", "a b", "c d"}},
		{in: `sh -c "echo \"hi\" \$HOME"`, want: []string{"sh", "-c", `echo "hi" $HOME`}},
		{in: `a ''`, want: []string{"a", ""}},
		{in: `a 'b`, err: "unterminated single quote"},
		{in: `a "b`, err: "unterminated double quote"},
		{in: `a \`, err: "lone backslash"},
		{in: "  ", err: "empty command"},
	}
	for _, c := range cases {
		_, err := exectarget.NewExec(c.in, testLimits)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		got, err := exectarget.SplitCommand(c.in)
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestExecProgramMissing(t *testing.T) {
	_, err := exectarget.Open("no-such-driver-program --x")
	var u *target.Unavailable
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "cannot find the driver program") {
		t.Fatalf("err = %v, want Unavailable", err)
	}
}
