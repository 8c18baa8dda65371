package runner_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// TestJudgeStreamedAsJudge: a library spec's trace judged as a stream
// (check.Stream, with a TallyStream) gives the runner the result Judge
// gives over the whole trace, with the spec's expectations left out.
func TestJudgeStreamedAsJudge(t *testing.T) {
	cut := 0
	lib, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range lib {
		s.Expect = spec.Expect{}
		if !runner.Streamable(s) {
			t.Fatalf("%s: a spec with no expectations is not streamable", s.Name)
		}
		whole := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		if whole.Err != nil {
			continue
		}
		st := check.NewStream(whole.Trace.Header)
		var tally runner.TallyStream
		for i := range whole.Trace.Events {
			tally.Add(&whole.Trace.Events[i])
			st.Add(whole.Trace.Events[i])
		}
		j, ok := st.Finish()
		if !ok {
			continue
		}
		if st.Segments() > 1 {
			cut++
		}
		streamed := runner.Result{Spec: s, Trace: trace.Trace{Header: whole.Trace.Header}, Elapsed: whole.Elapsed}
		runner.JudgeStreamed(&streamed, s, j, tally.Tally())
		want := *tally.Tally()
		if got := (runner.Tally{Events: len(whole.Trace.Events), Passes: passes(whole.Trace), Stopped: runner.NeverEnded(whole.Trace)}); !cmp.Equal(got, want) {
			t.Errorf("%s: tally %+v, want %+v", s.Name, want, got)
		}
		whole.Trace, streamed.Trace, streamed.Tally = trace.Trace{}, trace.Trace{}, nil
		if d := cmp.Diff(whole, streamed, cmp.Comparer(func(a, b error) bool { return a == b })); d != "" {
			t.Errorf("%s: streamed result differs (-whole +streamed):\n%s", s.Name, d)
		}
	}
	if cut == 0 {
		t.Error("no library trace was judged in more than one segment")
	}
}

func passes(t trace.Trace) int {
	n := 0
	for _, e := range t.Events {
		if e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter {
			n++
		}
	}
	return n
}
