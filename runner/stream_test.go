package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// someOfLibrary is the spec library; under -short (make test, -race) a
// spread of it, all of it in make test-heavy.
func someOfLibrary(t *testing.T) []spec.Spec {
	t.Helper()
	lib, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	if !testing.Short() {
		return lib
	}
	var some []spec.Spec
	for i, s := range lib {
		// Specs of several dispatches are those a stream cuts.
		if i%4 == 0 || len(s.Application.Dispatches) > 1 && i%2 == 0 {
			some = append(some, s)
		}
	}
	return some
}

// TestJudgeStreamedAsJudge: a library spec's trace judged as a stream
// (check.Stream, with a TallyStream) gives the runner the result Judge
// gives over the whole trace, its expectations judged by the stream.
func TestJudgeStreamedAsJudge(t *testing.T) {
	cut := 0
	for _, s := range someOfLibrary(t) {
		whole := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		if whole.Err != nil {
			continue
		}
		st := check.NewStream(whole.Trace.Header)
		st.SegmentsOfAtLeast(0) // short traces: cut at every chance
		st.Expect(s)
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
		expected, unobserved := st.Expectations()
		runner.JudgeStreamed(&streamed, s, j, expected, unobserved, tally.Tally())
		want := *tally.Tally()
		if got := (runner.Tally{Events: len(whole.Trace.Events), Passes: report.Passes(whole.Trace), Stopped: runner.NeverEnded(whole.Trace)}); !cmp.Equal(got, want) {
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

// TestRunStreamedAsWhole: every library spec run with Options.Stream gives the Result a run judged whole gives, whether
// the stream judged it or fell back to its spooled copy.
func TestRunStreamedAsWhole(t *testing.T) {
	t.Run("recorded again", func(t *testing.T) { runStreamedAsWhole(t, simtarget.Sim{}) })
	t.Run("spooled", func(t *testing.T) { runStreamedAsWhole(t, notRepeatable{}) })
}

// notRepeatable is the simulator as a target that does not say it is
// repeatable: a stream then keeps a copy of the events on disk.
type notRepeatable struct{ simtarget.Sim }

func (notRepeatable) Repeatable() bool { return false }

func runStreamedAsWhole(t *testing.T, tg target.Target) {
	defer runner.SetStreamSegments(0)() // the library's traces are short: cut them at every chance
	streamed, whole := 0, 0
	for _, s := range someOfLibrary(t) {
		want := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		got := runner.Run(context.Background(), s, runner.Options{Target: tg, Stream: true})
		if got.Tally != nil {
			streamed++
			if len(got.Trace.Events) != 0 {
				t.Errorf("%s: judged as a stream, yet %d events kept", s.Name, len(got.Trace.Events))
			}
			if got.Tally.Events != len(want.Trace.Events) || got.Tally.Passes != report.Passes(want.Trace) {
				t.Errorf("%s: tally %+v, the whole trace has %d events, %d passes", s.Name, *got.Tally, len(want.Trace.Events), report.Passes(want.Trace))
			}
		} else {
			whole++
			if d := cmp.Diff(want.Trace, got.Trace); d != "" {
				t.Errorf("%s: the trace recorded again or read back from the spool differs (-run whole +again):\n%s", s.Name, d)
			}
		}
		want.Trace, got.Trace, got.Tally = trace.Trace{}, trace.Trace{}, nil
		want.Elapsed, got.Elapsed = 0, 0
		if d := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })); d != "" {
			t.Errorf("%s: streamed result differs (-whole +streamed):\n%s", s.Name, d)
		}
	}
	t.Logf("%d specs judged as a stream, %d judged whole", streamed, whole)
	if streamed == 0 || whole == 0 {
		t.Errorf("streamed %d, read back %d: both paths must be taken", streamed, whole)
	}
}

// TestStreamedRunCutByTheTimeout: a streamed run the timeout cuts short
// still says what ran (its tally) and why it ended; its verdict is an
// error whether or not the oracles could judge what came.
func TestStreamedRunCutByTheTimeout(t *testing.T) {
	s := spec.Spec{Version: spec.Version, Name: "cut",
		Agents:   []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: []spec.Context{{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}}},
	}
	s.Tool.Plan.Passes = "3"
	s.Application.Buffers = []spec.Buffer{{Name: "x", Agent: "gpu0", Elements: 1 << 20}} // milliseconds a pass
	for i := range 2000 {
		s.Application.Dispatches = append(s.Application.Dispatches, spec.Dispatch{Name: fmt.Sprintf("d%d", i), Kernel: "increment", Agent: "gpu0", Args: []string{"x"}})
	}
	// On a loaded machine 300 ms may end before the first pass: the
	// timeout doubles until a pass has run (what is judged is the cut
	// run's report, not how fast the machine is).
	var r runner.Result
	for timeout := 300 * time.Millisecond; ; timeout *= 2 {
		r = runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}, Stream: true, Timeout: timeout, Grace: time.Minute})
		if r.Tally == nil || r.Tally.Passes > 0 || timeout > 20*time.Second {
			break
		}
	}
	if r.Verdict() != runner.Error || r.Err == nil || !strings.Contains(r.Err.Error(), "no result within --timeout") {
		t.Fatalf("verdict %s, error %v; want the timeout's error", r.Verdict(), r.Err)
	}
	if r.Tally == nil || r.Tally.Events == 0 || r.Tally.Passes == 0 {
		t.Fatalf("tally %+v: what ran is not said", r.Tally)
	}
	if r.Tally.Passes >= 3*len(s.Application.Dispatches) {
		t.Errorf("all %d passes ran: the timeout stopped nothing", r.Tally.Passes)
	}
}

// TestTallyNamesRecentLoops: a never_ended event is named by its loop's
// label when the loop's events came within the last dispatches, however
// many came before.
func TestTallyNamesRecentLoops(t *testing.T) {
	var c runner.TallyStream
	// 5×4096+1 dispatches: the last came just after a generation filled,
	// and the one before it must still be known.
	const n = 5*4096 + 1
	for id := uint64(1); id <= n; id++ {
		c.Add(&trace.Event{Type: trace.Callback, Dispatch: id, Label: fmt.Sprintf("d%d", id)})
	}
	c.Add(&trace.Event{Type: trace.NeverEnded, Dispatch: n - 1})
	c.Add(&trace.Event{Type: trace.NeverEnded, Dispatch: n})
	got := c.Tally().Stopped
	if len(got) != 2 || got[0].Label != fmt.Sprintf("d%d", n-1) || !got[0].Known || got[1].Label != fmt.Sprintf("d%d", n) {
		t.Errorf("stopped %+v, want d%d and d%d named", got, n-1, n)
	}
}

// TestTallyNamesLikeAMap: events of interleaved dispatches, several each
// and some unlabelled, name their cut-off loops as a plain map of every
// first label would (the recent ones: all of these are).
func TestTallyNamesLikeAMap(t *testing.T) {
	var c runner.TallyStream
	want := map[uint64]string{}
	rng := uint64(7)
	next := func(n uint64) uint64 { rng = rng*6364136223846793005 + 1442695040888963407; return (rng >> 33) % n }
	type stop struct {
		id    uint64
		label string // as want had it then
		known bool
	}
	var stopped []stop
	for i := range 3000 {
		id := uint64(i/4) + next(3) // dispatches overlap their neighbours
		label := fmt.Sprintf("d%d-%d", id, next(2))
		if next(5) == 0 {
			label = ""
		}
		c.Add(&trace.Event{Type: trace.Callback, Dispatch: id, Label: label})
		if _, ok := want[id]; !ok && label != "" {
			want[id] = label
		}
		if next(50) == 0 {
			c.Add(&trace.Event{Type: trace.NeverEnded, Dispatch: id})
			l, known := want[id]
			stopped = append(stopped, stop{id, l, known})
		}
	}
	got := c.Tally().Stopped
	if len(got) != len(stopped) {
		t.Fatalf("%d stopped, want %d", len(got), len(stopped))
	}
	for i, st := range got {
		w := stopped[i]
		if !w.known {
			w.label = fmt.Sprintf("dispatch %d", w.id)
		}
		if st.Label != w.label || st.Known != w.known {
			t.Errorf("stopped dispatch %d named %q (known %v), want %q", w.id, st.Label, st.Known, w.label)
		}
	}
}
