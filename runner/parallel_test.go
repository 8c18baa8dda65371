package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// flaky is the reference engine with a planted bug on the first fails[name]
// runs of a spec, and on every run of a broken one: a deliberately flaky
// implementation, the same whatever order or worker runs a spec.
type flaky struct {
	mu     sync.Mutex
	runs   map[string]int
	fails  map[string]int
	broken map[string]bool
}

func (f *flaky) Name() string           { return "flaky" }
func (f *flaky) Capabilities() []string { return simtarget.Sim{}.Capabilities() }

func (f *flaky) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	f.mu.Lock()
	f.runs[s.Name]++
	bad := f.broken[s.Name] || f.runs[s.Name] <= f.fails[s.Name]
	f.mu.Unlock()
	tg := simtarget.Sim{}
	if bad {
		tg.Faults = replay.Faults{replay.FaultSkipRestore: true}
	}
	return tg.Run(ctx, s, opts)
}

func library(t *testing.T, names ...string) []spec.Spec {
	t.Helper()
	var out []spec.Spec
	for _, n := range names {
		s, ok := specs.ByName(n)
		if !ok {
			t.Fatalf("no spec %s", n)
		}
		out = append(out, s)
	}
	return out
}

var four = []string{"fixed-three-passes", "early-exit-stop-after", "indefinite-stop-after", "restore-non-idempotent-kernels"}

func TestRetriesTellFlakesFromFailures(t *testing.T) {
	tg := &flaky{runs: map[string]int{},
		fails:  map[string]int{"fixed-three-passes": 1, "early-exit-stop-after": 2},
		broken: map[string]bool{"indefinite-stop-after": true}}
	got := runner.RunParallel(context.Background(), library(t, four...), runner.Options{Target: tg}, 1, runner.Retry{Retries: 1}, nil)
	want := []struct {
		status   runner.CaseStatus
		attempts int
	}{
		{runner.CaseFlake, 2}, // failed once, passed on the rerun
		{runner.CaseFail, 2},  // failed twice: one rerun is not enough to call it a flake
		{runner.CaseFail, 2},  // always fails
		{runner.CasePass, 1},  // never rerun
	}
	for i, w := range want {
		if got[i].Status() != w.status || got[i].Attempts != w.attempts {
			t.Errorf("%s: %s after %d attempts, want %s after %d", four[i], got[i].Status(), got[i].Attempts, w.status, w.attempts)
		}
	}
	if got[0].Failed == nil || len(got[0].Failed.Violations) == 0 || got[0].Result.Verdict() != runner.Pass {
		t.Errorf("a flake keeps its failing attempt and its passing one: %+v", got[0])
	}
}

func TestKnownFlakesAndTheBaseline(t *testing.T) {
	flakes, err := runner.ParseFlakes("flakes.txt", []byte("# known\nindefinite-.*\n"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := runner.ReadBaseline("base.csv", strings.NewReader("case,status,duration,rules\nearly-exit-stop-after,fail,0.1,MEM-2\nrestore-non-idempotent-kernels,fail,0.1,MEM-2\nfixed-three-passes,pass,0.1,\n"))
	if err != nil {
		t.Fatal(err)
	}
	tg := &flaky{runs: map[string]int{}, broken: map[string]bool{
		"fixed-three-passes": true, "early-exit-stop-after": true, "indefinite-stop-after": true}}
	retry := runner.Retry{Retries: 2, Flakes: flakes, Expected: func(n string) bool { _, ok := base.Failing[n]; return ok }}
	got := runner.RunParallel(context.Background(), library(t, four...), runner.Options{Target: tg}, 2, retry, nil)
	want := []struct {
		change   runner.Change
		attempts int
	}{
		{runner.NewFailure, 3},   // fails, not listed: rerun, still fails
		{runner.StillFailing, 1}, // listed: expected, not rerun
		{runner.Flaked, 3},       // fails every time, but listed as known-flaky
		{runner.Fixed, 1},        // listed as failing, passes now
	}
	for i, w := range want {
		if c := base.Compare(four[i], got[i]); c != w.change || got[i].Attempts != w.attempts {
			t.Errorf("%s: %s after %d attempts, want %s after %d", four[i], c, got[i].Attempts, w.change, w.attempts)
		}
	}
	if got[2].Known != "indefinite-.*" {
		t.Errorf("known flake names its pattern: %q", got[2].Known)
	}
	fails := 0
	for i := range got {
		if base.Compare(four[i], got[i]).Fails() {
			fails++
		}
	}
	if fails != 2 {
		t.Errorf("%d cases fail the run, want 2 (the new failure and the fixed case)", fails)
	}
}

// -j: the cases reach the report in the specs' order, as each and every
// one before it is done, and every trace is the bytes one worker gives.
func TestParallelRunsKeepOrderAndTraces(t *testing.T) {
	all, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	serial := runner.RunParallel(context.Background(), all, runner.Options{Target: simtarget.Sim{}}, 1, runner.Retry{}, nil)
	var order []string
	var csv bytes.Buffer
	w, err := report.NewCSV(&csv)
	if err != nil {
		t.Fatal(err)
	}
	par := runner.RunParallel(context.Background(), all, runner.Options{Target: simtarget.Sim{}}, 8, runner.Retry{}, func(i int, a runner.Attempted) {
		order = append(order, fmt.Sprintf("%d:%s", i, a.Result.Spec.Name))
		if err := w.Write(a); err != nil {
			t.Error(err)
		}
	})
	for i := range all {
		if want := fmt.Sprintf("%d:%s", i, all[i].Name); i >= len(order) || order[i] != want {
			t.Fatalf("case %d handed on as %v, want %s", i, order[i:min(i+1, len(order))], want)
		}
		if !bytes.Equal(trace.Marshal(par[i].Result.Trace), trace.Marshal(serial[i].Result.Trace)) {
			t.Errorf("%s: the trace differs with 8 workers", all[i].Name)
		}
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if len(lines) != len(all)+1 || lines[0] != "case,status,duration,rules" {
		t.Fatalf("results file: %d lines, header %q", len(lines), lines[0])
	}
	for i, l := range lines[1:] {
		name := all[i].Name
		if strings.Contains(name, ",") {
			name = `"` + name + `"`
		}
		if !strings.HasPrefix(l, name+",pass,") {
			t.Errorf("line %d: %s, want %s passing", i+2, l, all[i].Name)
		}
	}
	back, err := runner.ReadBaseline("results.csv", &csv)
	if err != nil || len(back.Failing) != 0 {
		t.Errorf("the results file reads back as a baseline with no failure: %v %v", back.Failing, err)
	}
}

func TestBadFlakeAndBaselineFiles(t *testing.T) {
	if _, err := runner.ParseFlakes("f.txt", []byte("ok-.*\n(unclosed\n")); err == nil || !strings.Contains(err.Error(), "f.txt:2:") {
		t.Errorf("bad pattern: %v", err)
	}
	for _, c := range []struct{ text, want string }{
		{"", "empty"},
		{"name,verdict\n", "want the header"},
		{"case,status\nx,bogus\n", `unknown status "bogus"`},
	} {
		if _, err := runner.ReadBaseline("b.csv", strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
	for _, c := range []runner.Change{runner.Unchanged, runner.NewFailure, runner.StillFailing, runner.Fixed, runner.Flaked} {
		if want := c == runner.NewFailure || c == runner.Fixed; c.Fails() != want {
			t.Errorf("%s fails the run: %v, want %v (only new failures and fixed cases do)", c, c.Fails(), want)
		}
	}
}

// TestSummariesForgetEvents: with Summaries, Done sees each case's whole
// trace and what RunPlan keeps afterwards has none of its events (issue 13:
// a run of many specs holds summaries), while verdicts and the header stay.
func TestSummariesForgetEvents(t *testing.T) {
	all, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	all = all[:10]
	seen := 0
	kept, _ := runner.RunPlan(context.Background(), all, runner.Options{Target: simtarget.Sim{}}, runner.Plan{Jobs: 2, Summaries: true,
		Done: func(i, total int, a runner.Attempted) {
			if len(a.Result.Trace.Events) > 0 {
				seen++
			}
		}})
	if seen != len(all) {
		t.Errorf("Done saw events for %d of %d cases", seen, len(all))
	}
	for _, a := range kept {
		if n := len(a.Result.Trace.Events); n != 0 {
			t.Errorf("%s: %d events kept after Done", a.Result.Spec.Name, n)
		}
		if a.Result.Verdict() != runner.Pass || a.Result.Trace.Header.Spec == "" {
			t.Errorf("%s: verdict %s, header %+v: the summary was lost too", a.Result.Spec.Name, a.Result.Verdict(), a.Result.Trace.Header)
		}
	}
}
