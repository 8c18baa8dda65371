package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// driverHelperEnv makes TestDriverHelperProcess be `replayspec ARGS...`:
// the test binary is the driver program, so the test needs no build.
const driverHelperEnv = "REPLAYSPEC_DRIVER_HELPER"

func TestDriverHelperProcess(t *testing.T) {
	if os.Getenv(driverHelperEnv) != "1" {
		t.Skip("the driver runs only as a child process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(mainWith(context.Background(), args, os.Stdout, os.Stderr))
}

// driverCommand is `replayspec ARGS` as an exec: command.
func driverCommand(t *testing.T, args ...string) string {
	t.Helper()
	t.Setenv(driverHelperEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0") // a -race binary otherwise waits 1 s at exit
	return fmt.Sprintf("'%s' -test.run=^TestDriverHelperProcess$ -- %s", os.Args[0], strings.Join(args, " "))
}

// TestDriverLibraryThroughExec: the whole library through the protocol
// and `replayspec driver` gives the in-process verdicts and the same trace
// byte for byte.
func TestDriverLibraryThroughExec(t *testing.T) {
	specs, err := runner.Collect([]string{library})
	if err != nil {
		// The library's own tests report a spec that does not load;
		// here the protocol is tested on those that do.
		t.Logf("specs left out: %v", err)
	}
	if len(specs) == 0 {
		t.Fatal("no spec loaded")
	}
	if testing.Short() {
		// One driver process a spec, under -race: a spread of the
		// library here, all of it in make test-heavy.
		specs = spreadOf(specs, 16)
	}
	tg, err := exectarget.NewExec(driverCommand(t, "driver"), exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	viaExec := runner.RunAll(context.Background(), specs, runner.Options{Target: tg}, nil)
	inProc := runner.RunAll(context.Background(), specs, runner.Options{Target: simtarget.Sim{}}, nil)
	for i, want := range inProc {
		got := viaExec[i]
		t.Run(want.Spec.Name, func(t *testing.T) {
			if got.Verdict() != want.Verdict() {
				t.Errorf("verdict through exec %s, in-process %s\nexec error: %v", got.Verdict(), want.Verdict(), got.Err)
			}
			if g, w := trace.Marshal(got.Trace), trace.Marshal(want.Trace); !bytes.Equal(g, w) {
				t.Errorf("trace through exec (%d bytes) differs from in-process (%d bytes)", len(g), len(w))
			}
		})
	}
}

// TestDriverFaultThroughExec: a fault planted in the driver process is
// caught by the oracles of the runner process.
func TestDriverFaultThroughExec(t *testing.T) {
	tg, err := exectarget.NewExec(driverCommand(t, "driver", "--fault", "skip_restore"), exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name := tg.Handshake().Implementation.Name; !strings.Contains(name, "skip_restore") {
		t.Errorf("implementation %q does not say its fault", name)
	}
	specs, err := runner.Collect([]string{library + "/fixed-three-passes.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.Run(context.Background(), specs[0], runner.Options{Target: tg})
	if r.Verdict() != runner.Fail {
		t.Fatalf("verdict %s, want fail (err %v)", r.Verdict(), r.Err)
	}
	var rules []string
	for _, v := range r.Violations {
		rules = append(rules, v.Rule)
	}
	if !strings.Contains(strings.Join(rules, " "), "MEM-2") {
		t.Errorf("violations %v do not name MEM-2", rules)
	}
}

func TestDriverCommand(t *testing.T) {
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		out, errs   string
	}{
		{name: "probe", code: exitOK, out: `{"protocol":"replayspec.driver/v1","implementation":{"name":"replayspec reference engine"`},
		{name: "bad spec", stdin: `{"version":1,"name":"x","agents":[],"application":{"dispatches":[]},"nope":1}`, code: exitUsage, errs: "reading the spec from stdin: stdin:1"},
		{name: "not JSON", stdin: "version: [", code: exitUsage, errs: "JSON syntax"},
		{name: "unknown fault", args: []string{"--fault", "nope"}, code: exitUsage, errs: `unknown fault "nope"`},
		{name: "arguments", args: []string{"specs/"}, code: exitUsage, errs: "the spec comes on stdin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			e := processEnv(&stdout, &stderr)
			e.stdin = strings.NewReader(c.stdin)
			code := mainEnv(context.Background(), append([]string{"driver"}, c.args...), e)
			out, errs := stdout.String(), stderr.String()
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %s", code, c.code, errs)
			}
			wantAll(t, "stdout", out, c.out)
			wantAll(t, "stderr", errs, c.errs)
		})
	}
}

// tenThousandDispatches is a spec of 10,000 dispatches of three passes each
// on one buffer: its trace is some 80 MiB of NDJSON, past the 64 MiB that
// once cut a driver's output (issue 23).
func tenThousandDispatches() spec.Spec {
	s := spec.Spec{Version: spec.Version, Name: "ten-thousand-dispatches",
		Agents: []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: []spec.Context{
			{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}},
			{Name: "timing", Services: spec.Services{KernelTrace: &spec.Empty{}}},
		},
	}
	s.Tool.Plan.Passes = "3"
	s.Application.Buffers = []spec.Buffer{{Name: "x", Agent: "gpu0", Elements: 64, Fill: 1}}
	for i := range 10_000 {
		s.Application.Dispatches = append(s.Application.Dispatches, spec.Dispatch{Name: fmt.Sprintf("d%d", i),
			Kernel: "increment", Agent: "gpu0", Args: []string{"x"}})
	}
	return s
}

// TestTenThousandDispatchesThroughExec: a 10,000-dispatch spec passes
// through `replayspec driver` with the default trace budget as it does
// in-process, with the same trace byte for byte (issue 23 item 2).
func TestTenThousandDispatchesThroughExec(t *testing.T) {
	if testing.Short() {
		t.Skip("heavy: two runs of 10,000 dispatches and an 80 MiB trace through a pipe (make test-heavy)")
	}
	s := tenThousandDispatches()
	opts := runner.Options{Timeout: 10 * time.Minute}
	// One run at a time, keeping only the digest of its trace: each
	// holds the whole trace in memory.
	run := func(tg target.Target) (runner.Verdict, int, string, error) {
		o := opts
		o.Target = tg
		r := runner.Run(context.Background(), s, o)
		b := trace.Marshal(r.Trace)
		return r.Verdict(), len(r.Trace.Events), trace.Digest(b), errors.Join(r.Err, violations(r))
	}
	wantV, wantN, want, err := run(simtarget.Sim{})
	if wantV != runner.Pass {
		t.Fatalf("in-process: verdict %s: %v", wantV, err)
	}
	tg, err := exectarget.NewExec(driverCommand(t, "driver"), exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotV, gotN, got, err := run(tg)
	if gotV != runner.Pass {
		t.Fatalf("through exec: verdict %s, in-process pass: %v", gotV, err)
	}
	if got != want || gotN != wantN {
		t.Errorf("the trace through exec (%d events, digest %s) differs from in-process (%d events, %s)", gotN, got, wantN, want)
	}
}

// violations is r's violations as one error (nil for none).
func violations(r runner.Result) error {
	var errs []error
	for _, v := range r.Violations {
		errs = append(errs, errors.New(v.String()))
	}
	return errors.Join(errs...)
}

// TestDriverLibraryStreamedThroughExec: the library (expectations left
// out) through `replayspec driver`, its events judged as the driver writes
// them (runner.Options.Stream), gives the verdicts, rules and violations
// of the in-process run judged whole, and counts the same events and
// passes (issue 23 item 1).
func TestDriverLibraryStreamedThroughExec(t *testing.T) {
	specs, err := runner.Collect([]string{library})
	if err != nil {
		t.Logf("specs left out: %v", err)
	}
	if testing.Short() {
		specs = spreadOf(specs, 8) // one driver process a spec, under -race
	}
	for i := range specs {
		specs[i].Expect = spec.Expect{}
	}
	tg, err := exectarget.NewExec(driverCommand(t, "driver"), exectarget.ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	viaExec := runner.RunAll(context.Background(), specs, runner.Options{Target: tg, Stream: true}, nil)
	inProc := runner.RunAll(context.Background(), specs, runner.Options{Target: simtarget.Sim{}}, nil)
	streamed := 0
	for i, want := range inProc {
		got := viaExec[i]
		t.Run(want.Spec.Name, func(t *testing.T) {
			if got.Verdict() != want.Verdict() {
				t.Errorf("verdict through exec %s, in-process %s\nexec error: %v", got.Verdict(), want.Verdict(), got.Err)
			}
			if got.Tally == nil {
				if g, w := trace.Marshal(got.Trace), trace.Marshal(want.Trace); !bytes.Equal(g, w) {
					t.Errorf("judged whole, the trace read back (%d bytes) differs from in-process (%d bytes)", len(g), len(w))
				}
				return
			}
			streamed++
			if len(got.Trace.Events) > 0 || got.Tally.Events != len(want.Trace.Events) || got.Tally.Passes != report.Passes(want.Trace) {
				t.Errorf("streamed: %d events kept, tally %+v; in-process %d events, %d passes", len(got.Trace.Events), *got.Tally, len(want.Trace.Events), report.Passes(want.Trace))
			}
			if d := cmp.Diff(want.Rules, got.Rules); d != "" {
				t.Errorf("rules differ (-in-process +streamed through exec):\n%s", d)
			}
			if d := cmp.Diff(want.Violations, got.Violations); d != "" {
				t.Errorf("violations differ (-in-process +streamed through exec):\n%s", d)
			}
		})
	}
	if streamed == 0 {
		t.Error("no spec was judged as a stream through exec")
	}
}

// TestStreamedThroughExecNeedsNoBudget: a spec judged as the driver writes
// it holds nothing, so a trace far past --max-trace-mib passes; the same
// spec judged whole is refused at the budget.
func TestStreamedThroughExecNeedsNoBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("budget.txtar runs the same through the CLI (make test-heavy runs this too)")
	}
	s := tenThousandDispatches()
	s.Application.Dispatches = s.Application.Dispatches[:300] // 3.4 MiB of trace
	tg, err := exectarget.NewExec(driverCommand(t, "driver"), exectarget.ExecOptions{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r := runner.Run(context.Background(), s, runner.Options{Target: tg, Stream: true})
	if r.Verdict() != runner.Pass || r.Tally == nil {
		t.Errorf("streamed: verdict %s, tally %v, error %v", r.Verdict(), r.Tally, errors.Join(r.Err, violations(r)))
	}
	r = runner.Run(context.Background(), s, runner.Options{Target: tg})
	if !errors.Is(r.Err, target.ErrOverBudget) {
		t.Errorf("judged whole: error %v, want the trace budget's", r.Err)
	}
}
