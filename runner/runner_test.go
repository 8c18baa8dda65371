package runner_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// fakeTarget runs fn as its Run.
type fakeTarget struct {
	fn func(ctx context.Context) (trace.Trace, error)
}

func (fakeTarget) Name() string { return "fake" }
func (f fakeTarget) Run(ctx context.Context, _ spec.Spec, _ target.Options) (trace.Trace, error) {
	return f.fn(ctx)
}

func TestRunAbandonsATargetThatIgnoresItsContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	tg := fakeTarget{func(ctx context.Context) (trace.Trace, error) {
		<-release // never looks at ctx
		return trace.Trace{}, nil
	}}
	done := make(chan runner.Result, 1)
	go func() {
		done <- runner.Run(context.Background(), spec.Spec{Name: "stuck"}, runner.Options{Target: tg, Timeout: 50 * time.Millisecond, Grace: 50 * time.Millisecond})
	}()
	r := <-done // the test's own timeout would catch a hang
	if r.Verdict() != runner.Error || !strings.Contains(r.Err.Error(), "did not stop within 50ms of being told to; abandoned") ||
		!strings.Contains(r.Err.Error(), "no result within --timeout 50ms") {
		t.Errorf("verdict %s, err %v", r.Verdict(), r.Err)
	}
}

func TestRunTurnsATargetPanicIntoAnError(t *testing.T) {
	tg := fakeTarget{func(context.Context) (trace.Trace, error) { panic("boom") }}
	r := runner.Run(context.Background(), spec.Spec{Name: "p"}, runner.Options{Target: tg})
	if r.Verdict() != runner.Error || !strings.Contains(r.Err.Error(), "internal error: the target panicked: boom") {
		t.Errorf("verdict %s, err %v", r.Verdict(), r.Err)
	}
}

// A target that returns a header and no events ran or recorded nothing:
// an error of the run, and so never an expected failure (issue 25: it was
// "XFAIL expected failure" without --xfail).
func TestEmptyTraceIsAnError(t *testing.T) {
	tg := fakeTarget{func(context.Context) (trace.Trace, error) {
		return trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: "e", Sources: trace.AllSources}}, nil
	}}
	s := spec.Spec{Name: "e"}
	s.Application.Dispatches = []spec.Dispatch{{Name: "d"}}
	r := runner.Run(context.Background(), s, runner.Options{Target: tg})
	if r.Verdict() != runner.Error || !errors.Is(r.Err, runner.ErrEmptyTrace) || !strings.Contains(r.Err.Error(), "target fake returned a trace with a header and no events") {
		t.Fatalf("verdict %s, err %v", r.Verdict(), r.Err)
	}
	if o := (runner.XFail{}).Outcome(r); o.Status != runner.Errored {
		t.Errorf("without a list: %s %q, want error", o.Status, o.Reason)
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tg := fakeTarget{func(c context.Context) (trace.Trace, error) {
		cancel()
		<-c.Done()
		return trace.Trace{}, c.Err()
	}}
	r := runner.Run(ctx, spec.Spec{Name: "i"}, runner.Options{Target: tg})
	if !errors.Is(r.Err, runner.ErrInterrupted) {
		t.Errorf("err %v, want ErrInterrupted", r.Err)
	}
}

// neverEnded is a trace in which the harness cut dispatch 1 ("d") off.
func neverEnded() trace.Trace {
	return trace.Trace{Header: trace.Header{Trace: trace.Version, Sources: trace.AllSources}, Events: []trace.Event{
		{Seq: 1, Type: trace.AppDispatch, Thread: 1, Label: "d", Signal: 1},
		{Seq: 2, Type: trace.PassCount, Thread: 1, Dispatch: 1, Label: "d", Result: trace.I64(3)},
		{Seq: 3, Type: trace.NeverEnded, Thread: 1, Dispatch: 1, Pass: trace.U64(7)},
		{Seq: 4, Type: trace.AppTimeout, Thread: 1, Label: "d", Signal: 1},
	}}
}

func TestBudgetIsAnErrorNotAViolation(t *testing.T) {
	s := spec.Spec{Name: "b", Limits: spec.Limits{MaxPasses: 7}, Expect: spec.Expect{Completions: map[string]spec.Count{"d": {Min: 1, Max: 1, Text: "1"}}}}
	s.Application.Dispatches = []spec.Dispatch{{Name: "d"}}
	tg := fakeTarget{func(context.Context) (trace.Trace, error) { return neverEnded(), nil }}
	r := runner.Run(context.Background(), s, runner.Options{Target: tg})
	if r.Verdict() != runner.Error || !strings.Contains(r.Err.Error(), "the harness stopped d after 7 passes, its pass budget (limits.max_passes 7") {
		t.Fatalf("verdict %s, err %v", r.Verdict(), r.Err)
	}
	for _, v := range r.Violations {
		if v.Rule == "CMP-4" || v.Rule == "EXPECT" {
			t.Errorf("the harness's budget is blamed on the implementation: %v", v)
		}
	}
	s.Expect = spec.Expect{NeverEnds: []string{"d"}}
	if r := runner.Run(context.Background(), s, runner.Options{Target: tg}); r.Err != nil {
		t.Errorf("a loop the spec says never ends is no error: %v", r.Err)
	}
}

func TestSelect(t *testing.T) {
	all := []spec.Spec{
		{Name: "fixed-three-passes", Rules: []string{"PC-3", "MEM-1"}},
		{Name: "counters", Rules: []string{"AGT-1"}},
		{Name: "caught", Expect: spec.Expect{Violations: []string{"CMP-1"}}},
	}
	names := func(ss []spec.Spec) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		f    runner.Filter
		want string
	}{
		{runner.Filter{}, "fixed-three-passes,counters,caught"},
		{runner.Filter{Name: regexp.MustCompile("^c")}, "counters,caught"},
		{runner.Filter{Rules: []string{"PC-3"}}, "fixed-three-passes"},
		{runner.Filter{Rules: []string{"MEM", "CMP"}}, "fixed-three-passes,caught"},
		{runner.Filter{Names: []string{"caught"}}, "caught"},
		{runner.Filter{Names: []string{}}, ""},
	} {
		if got := names(runner.Select(all, c.f)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
}

func TestRunPlan(t *testing.T) {
	fail := fakeTarget{func(context.Context) (trace.Trace, error) { return trace.Trace{}, errors.New("broke") }}
	specs := []spec.Spec{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	var done []string
	plan := runner.Plan{FailFast: true, Done: func(i, total int, a runner.Attempted) { done = append(done, a.Result.Spec.Name) }}
	out, stop := runner.RunPlan(context.Background(), specs, runner.Options{Target: fail}, plan)
	if len(out) != 1 || !slices.Equal(done, []string{"a"}) || !strings.Contains(string(stop), "--fail-fast: stopped after a failed; 2 of 3 specs not run") {
		t.Errorf("fail-fast: %d results, done %v, stop %q", len(out), done, stop)
	}
	runs := 0
	count := fakeTarget{func(context.Context) (trace.Trace, error) { runs++; return trace.Trace{}, nil }}
	out, stop = runner.RunPlan(context.Background(), specs[:2], runner.Options{Target: count}, runner.Plan{Count: 3})
	if runs != 6 || len(out) != 6 || out[0].Result.Run != 1 || out[2].Result.Run != 3 || out[3].Result.Spec.Name != "b" || stop != "" {
		t.Errorf("-count 3: %d runs, %d results, stop %q", runs, len(out), stop)
	}
	ctx, cancel := context.WithCancel(context.Background())
	plan = runner.Plan{Done: func(int, int, runner.Attempted) { cancel() }}
	out, stop = runner.RunPlan(ctx, specs, runner.Options{Target: count}, plan)
	if len(out) != 1 || !strings.Contains(string(stop), "interrupted after 1 of 3 specs") {
		t.Errorf("interrupted: %d results, stop %q", len(out), stop)
	}
}

func TestXFailCheck(t *testing.T) {
	xf, err := runner.ParseXFail("known.txt", []byte("PC-3  real\nPC-99  no such rule\nfixed  a spec\nfxied  a typo\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = xf.Check([]string{"fixed"})
	if err == nil {
		t.Fatal("entries naming nothing were accepted")
	}
	for _, want := range []string{"known.txt:2: PC-99 is not a rule of the catalogue", `known.txt:4: "fxied" names no rule and no spec of this run`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "known.txt:1") || strings.Contains(err.Error(), "known.txt:3") {
		t.Errorf("good entries refused: %v", err)
	}
}

// TestVocabularyAgrees: the spec's copies of the trace's closed sets (spec
// must not import trace) are the same lists.
func TestVocabularyAgrees(t *testing.T) {
	var enum []string
	for _, s := range trace.StatusEnum {
		enum = append(enum, string(s))
	}
	if !slices.Equal(enum, spec.StatusNames) {
		t.Errorf("spec.StatusNames %v\ntrace.StatusEnum %v", spec.StatusNames, enum)
	}
	for _, c := range []trace.Call{trace.CallCreateContext, trace.CallConfigureCallback, trace.CallConfigureCounters,
		trace.CallConfigureKernelTrace, trace.CallConfigureDevice, trace.CallConfigurePCSampling, trace.CallConfigureSPM,
		trace.CallConfigureThreadTrace, trace.CallConfigureExternal, trace.CallStartContext, trace.CallStopContext,
		trace.CallOperationName, trace.CallOperationID} {
		if !slices.Contains(spec.StatusCalls, string(c)) {
			t.Errorf("spec.StatusCalls lacks %s", c)
		}
	}
}

// TestLoadingCountsAgainstTheTimeout: the time spent reading a spec is
// part of its time; a spec whose loading used it all has none left.
func TestLoadingCountsAgainstTheTimeout(t *testing.T) {
	quick := fakeTarget{func(context.Context) (trace.Trace, error) { return trace.Trace{}, nil }}
	opts := runner.Options{Target: quick, Timeout: time.Second, Spent: func(spec.Spec) time.Duration { return 2 * time.Second }}
	r := runner.Run(context.Background(), spec.Spec{Name: "big"}, opts)
	if r.Verdict() != runner.Error || !strings.Contains(r.Err.Error(), "no result within --timeout 1s") || r.Elapsed < 2*time.Second {
		t.Errorf("verdict %s, elapsed %s, err %v", r.Verdict(), r.Elapsed, r.Err)
	}
	opts.Spent = func(spec.Spec) time.Duration { return 0 }
	if r := runner.Run(context.Background(), spec.Spec{Name: "small"}, opts); r.Err != nil && strings.Contains(r.Err.Error(), "timeout") {
		t.Errorf("a spec with its time left timed out: %v", r.Err)
	}
}

func TestPlanRunsSaturates(t *testing.T) {
	for _, tc := range []struct {
		n    int
		plan runner.Plan
		want uint64
	}{
		{3, runner.Plan{}, 3},
		{3, runner.Plan{Count: 4}, 12},
		{3, runner.Plan{Count: 4, Retry: runner.Retry{Retries: 2}}, 36},
		{1 << 40, runner.Plan{Count: 1 << 30}, math.MaxUint64},
	} {
		if got := tc.plan.Runs(tc.n); got != tc.want {
			t.Errorf("%d specs, %+v: Runs = %d, want %d", tc.n, tc.plan, got, tc.want)
		}
	}
}
