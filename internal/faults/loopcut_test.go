package faults

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// loopTally counts what a cross-check of loops cut between passes saw.
type loopTally struct {
	traces, separable, loops, cuts, ahead, expectCuts int
	cutSpecs                                          map[string]bool // the specs whose loop was cut with their expectations
}

// sameExpectCutLoops fails t when spec s's expectations, judged with tr as
// a stream with every loop alone in its segment cut every few passes as
// far as they allow (check.JudgeStreamSpecLoops), conclude something else
// than check.JudgeSpec over the whole trace.
func (n *loopTally) sameExpectCutLoops(t *testing.T, name string, s spec.Spec, tr trace.Trace) {
	t.Helper()
	if !check.HasExpectations(s) {
		return
	}
	wj, wexp, wunseen := check.JudgeSpec(s, tr)
	everies := []int{1, 3, 8}
	if testing.Short() {
		everies = everies[:1]
	}
	for _, every := range everies {
		j, exp, unseen, segments, cuts, ok := check.JudgeStreamSpecLoops(s, tr, 0, every)
		if !ok {
			return
		}
		if every == 1 && cuts > 0 {
			n.expectCuts++
			if n.cutSpecs == nil {
				n.cutSpecs = map[string]bool{}
			}
			n.cutSpecs[s.Name] = true
		}
		if !reflect.DeepEqual(exp, wexp) || !reflect.DeepEqual(unseen, wunseen) {
			t.Errorf("%s: its expectations judged as a stream of %d segments, its loop cut %d times every %d passes, differ from the whole trace's (-whole +stream):\n%s%s", name, segments, cuts, every, cmp.Diff(wexp, exp), cmp.Diff(wunseen, unseen))
			return
		}
		if d := judgementDiff(wj, j); d != "" {
			t.Errorf("%s: judged with its expectations as a stream of %d segments, its loop cut %d times every %d passes, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, cuts, every, d)
			return
		}
	}
}

// sameCutLoops fails t when tr, judged as a stream with every loop alone
// in its segment cut every few passes (check.JudgeStreamLoops), concludes
// something else than check.Judge over the whole trace.
func (n *loopTally) sameCutLoops(t *testing.T, name string, tr trace.Trace) {
	t.Helper()
	n.traces++
	want := check.Judge(tr)
	for _, every := range []int{1, 3, 8} {
		got, segments, cuts, ok := check.JudgeStreamLoops(tr, every)
		if !ok {
			break
		}
		if every == 1 {
			n.separable++
			if cuts > 0 {
				n.loops++
				t.Logf("%s: loop cut %d times", name, cuts)
			}
		}
		n.cuts += cuts
		if d := judgementDiff(want, got); d != "" {
			t.Errorf("%s: judged as a stream of %d segments, its loop cut %d times every %d passes, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, cuts, every, d)
			return
		}
	}
	// As replayspec judges a stream: segments of many events, and a loop
	// cut only once its dispatch was seen, ahead, to begin one.
	for _, size := range []int{64, 1 << 20} {
		got, segments, cuts, ok := check.JudgeStreamSized(tr, size, 3)
		if !ok {
			continue
		}
		if size > len(tr.Events) && cuts > 0 {
			n.ahead++
		}
		if d := judgementDiff(want, got); d != "" {
			t.Errorf("%s: judged as a stream of %d segments of at least %d events, its loop cut %d times, the judgement differs from the whole trace's (-whole +stream):\n%s", name, segments, size, cuts, d)
			return
		}
	}
}

// longLoops are the library's specs whose indefinite loops run long
// enough to be cut: a never-ending loop's pass budget, and a loop that
// stops after a pass, made 40 and 30.
func longLoops(specs []spec.Spec) []spec.Spec {
	var out []spec.Spec
	for _, s := range specs {
		c := s.Tool.Plan.Continue
		if s.Tool.Plan.Passes != "0" || c == nil {
			continue
		}
		switch {
		case c.Always:
			s.Limits.MaxPasses = 40
		case c.StopAfter != nil:
			stop := uint64(30)
			c2 := *c
			c2.StopAfter = &stop
			s.Tool.Plan.Continue = &c2
		default:
			continue
		}
		out = append(out, s)
	}
	return out
}

// foreverExpectSpec is foreverSpec with expectations a stream may judge
// with the loop cut: that it never ends, and the buffer's last read.
func foreverExpectSpec(passes uint64) spec.Spec {
	s := foreverSpec(passes)
	s.Name = "forever-expect"
	two := int64(2)
	s.Expect = spec.Expect{NeverEnds: []string{"d0"}, Memory: map[string]spec.MemoryExpect{"x": {All: &two}}}
	return s
}

// withExpectations are the variants of foreverSpec and loopAfter with
// expectations: the same runs, judged by the oracles once.
var withExpectations = map[string]bool{"forever-expect": true, "forever-records": true, "forever-records-wrong": true, "loop-after-never-ends": true}

// loopAfterNeverEnds is loopAfter expecting its loop, which ends by
// itself, never to end: an expectation that fails, judged on the loop's
// last part.
func loopAfterNeverEnds() spec.Spec {
	s := loopAfter()
	s.Name = "loop-after-never-ends"
	s.Expect = spec.Expect{NeverEnds: []string{"d0"}}
	return s
}

// foreverRecordsSpec is foreverSpec with expectations that add events up
// over the run: every pass's record, in all and in one pass, the calls that
// start contexts, and no warning. A cut counts the passes it leaves out
// (check's expectJudge.hidden); the rest are counted in the parts.
func foreverRecordsSpec(passes uint64) spec.Spec {
	s := foreverSpec(passes)
	s.Name = "forever-records"
	seven := uint64(7)
	s.Expect = spec.Expect{Records: map[string]spec.Count{"kernel_trace": spec.Exactly(passes)},
		RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Count: spec.Exactly(passes)},
			{Service: "kernel_trace", Pass: &seven, Context: "timing", Count: spec.Exactly(1)}},
		Statuses:   []spec.StatusExpect{{Call: "start_context", Status: "SUCCESS"}},
		NoWarnings: true}
	return s
}

// foreverRecordsWrong expects of foreverSpec's run-wide counts what it
// does not do: one record too few, one too many, a warning it never gives,
// and a context the spec does not have; each failure names the events it
// counted first, whichever part counted them.
func foreverRecordsWrong(passes uint64) spec.Spec {
	s := foreverSpec(passes)
	s.Name = "forever-records-wrong"
	s.Expect = spec.Expect{Records: map[string]spec.Count{"kernel_trace": spec.Exactly(passes - 1)},
		RecordCounts: []spec.RecordCount{{Service: "kernel_trace", Count: spec.Exactly(passes + 1)},
			{Service: "kernel_trace", Context: "nowhere", Count: spec.Exactly(1)}},
		Warnings: []string{string(trace.WarnGraphLaunch)}}
	return s
}

// foreverSpec: one never-ending loop of passes passes on one thread, alone
// (as target/sim's BenchmarkScaleStreamed runs it).
func foreverSpec(passes uint64) spec.Spec {
	s := spec.Spec{Version: spec.Version, Name: "forever",
		Agents: []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: []spec.Context{
			{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}},
			{Name: "timing", Services: spec.Services{KernelTrace: &spec.Empty{}}},
		},
	}
	s.Tool.Plan.Passes = "0"
	s.Tool.Plan.Continue = &spec.ContinuePolicy{Always: true}
	s.Limits.MaxPasses = passes
	s.Application.Buffers = []spec.Buffer{{Name: "x", Agent: "gpu0", Elements: 64, Fill: 1}}
	s.Application.Dispatches = []spec.Dispatch{{Name: "d0", Kernel: "increment", Agent: "gpu0", Thread: 1, Args: []string{"x"}}}
	return spec.Defaults(s)
}

// loopAfter: an indefinite loop that stops by itself after pass 30,
// after three dispatches of two passes each on the same thread: a stream
// that cuts a segment only once it is long cuts before the loop only by
// seeing ahead (its pass count of 0) that it may run long.
func loopAfter() spec.Spec {
	s := foreverSpec(40)
	s.Name = "loop-after"
	stop := uint64(30)
	s.Tool.Plan.Continue = &spec.ContinuePolicy{StopAfter: &stop}
	loop := s.Application.Dispatches[0]
	s.Application.Dispatches = nil
	for i := range 3 {
		d := loop
		d.Name = fmt.Sprintf("before%d", i)
		d.Plan = &spec.Plan{Passes: "2"}
		s.Application.Dispatches = append(s.Application.Dispatches, d)
	}
	s.Application.Dispatches = append(s.Application.Dispatches, loop)
	return spec.Defaults(s)
}

// brokenPass plants a fault in pass k of a trace's loop by editing the
// trace: what no engine fault does to one pass alone.
type brokenPass struct {
	name string
	edit func(e *trace.Event, k uint64) (keep bool)
}

func passIs(e *trace.Event, k uint64) bool { p, ok := e.PassOf(); return ok && p == k }

var brokenPasses = []brokenPass{
	{"pass k not restored", func(e *trace.Event, k uint64) bool {
		return !(e.Type == trace.Restore && passIs(e, k))
	}},
	{"pass k's PASS ENTER names pass k+1", func(e *trace.Event, k uint64) bool {
		if e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && passIs(e, k) {
			p := k + 1
			e.Pass = &p
		}
		return true
	}},
	{"pass k's PASS EXIT missing", func(e *trace.Event, k uint64) bool {
		return !(e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseExit && passIs(e, k))
	}},
	{"continue after pass k answered 0, yet the loop went on", func(e *trace.Event, k uint64) bool {
		if e.Type == trace.Continue && passIs(e, k) {
			zero := int64(0)
			e.Result = &zero
		}
		return true
	}},
	{"continue after pass k missing", func(e *trace.Event, k uint64) bool {
		return !(e.Type == trace.Continue && passIs(e, k))
	}},
	{"pass k's record missing", func(e *trace.Event, k uint64) bool {
		return !(e.Type == trace.Record && passIs(e, k))
	}},
	{"pass k's kernel ran twice", nil}, // see plant
}

// plant applies b to pass k of tr.
func plant(tr trace.Trace, b brokenPass, k uint64) trace.Trace {
	out := trace.Trace{Header: tr.Header}
	for _, e := range tr.Events {
		if b.edit == nil {
			out.Events = append(out.Events, e)
			if e.Type == trace.Kernel && passOfKernel(tr, e) == k {
				out.Events = append(out.Events, e)
			}
			continue
		}
		if b.edit(&e, k) {
			out.Events = append(out.Events, e)
		}
	}
	for i := range out.Events {
		out.Events[i].Seq = uint64(i + 1)
	}
	return out
}

// passOfKernel: the pass whose record follows kernel e (same end time).
func passOfKernel(tr trace.Trace, e trace.Event) uint64 {
	for _, r := range tr.Events {
		if r.Type == trace.Record && r.Dispatch == e.Dispatch && r.End == e.End {
			p, _ := r.PassOf()
			return p
		}
	}
	return ^uint64(0)
}

// TestStreamCutsLoopsAsJudge: never-ending loops and loops that stop late,
// with every planted fault at the three profiles, and a loop with one pass
// broken by hand at each profile, judged as a stream with the loop cut
// every 1, 3 and 8 passes, give Judge's judgement. Under -short: without
// the engine's faults.
func TestStreamCutsLoopsAsJudge(t *testing.T) {
	specs := append(longLoops(library(t)), foreverSpec(40), foreverExpectSpec(40), foreverRecordsSpec(40), foreverRecordsWrong(40), loopAfter(), loopAfterNeverEnds())
	faults := replay.AllFaults()
	if testing.Short() {
		faults = faults[:0]
	}
	var n loopTally
	eachProfileAndFault(specs, faults, func(name string, s spec.Spec, tr trace.Trace) {
		if !withExpectations[s.Name] { // their traces are forever's and loop-after's
			n.sameCutLoops(t, name, tr)
		}
		n.sameExpectCutLoops(t, name, s, tr)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A loop after other dispatches, in segments that are not cut short:
	// the stream cuts before it only by seeing its pass count ahead.
	after, err := simtarget.Sim{}.Run(ctx, loopAfter(), target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, segments, cuts, ok := check.JudgeStreamSized(after, 1<<20, 3); !ok || segments != 2 || cuts == 0 {
		t.Errorf("loop-after in segments of at least 2^20 events: separable %v, %d segments, its loop cut %d times; want the three dispatches before it in one segment and the loop cut in the other", ok, segments, cuts)
	} else if d := cmp.Diff(check.Judge(after), got); d != "" {
		t.Errorf("loop-after: (-whole +stream):\n%s", d)
	}
	tr, err := simtarget.Sim{}.Run(ctx, foreverSpec(40), target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ks := []uint64{1, 2, 5, 17, 38, 39}
	if testing.Short() {
		ks = []uint64{2, 38} // a pass after the first part's head, and one near the budget's end
	}
	for name, sources := range threeProfiles {
		seen := tr
		if sources != nil {
			seen = tr.Only(sources)
		}
		for _, b := range brokenPasses {
			for _, k := range ks {
				broken := plant(seen, b, k)
				if reflect.DeepEqual(broken.Events, seen.Events) { // not cmp.Equal: seconds under -race
					continue // the profile does not show what was broken
				}
				n.sameCutLoops(t, fmt.Sprintf("forever, %s (k=%d) at %s", b.name, k, name), broken)
				n.sameExpectCutLoops(t, fmt.Sprintf("forever with expectations, %s (k=%d) at %s", b.name, k, name), foreverExpectSpec(40), broken)
				n.sameExpectCutLoops(t, fmt.Sprintf("forever with run-wide counts, %s (k=%d) at %s", b.name, k, name), foreverRecordsSpec(40), broken)
			}
		}
	}
	t.Logf("%d traces: %d judged as a stream, %d with a loop cut between passes (%d cuts at 1, 3 and 8 passes); %d cut in segments cut for nothing else; %d with their spec's expectations and the loop cut",
		n.traces, n.separable, n.loops, n.cuts, n.ahead, n.expectCuts)
	if n.loops == 0 || n.ahead == 0 || n.expectCuts == 0 {
		t.Error("no loop was cut between passes (or none with expectations): the comparison compared nothing")
	}
	for _, name := range []string{"forever-expect", "forever-records", "forever-records-wrong"} {
		if !n.cutSpecs[name] {
			t.Errorf("%s: its loop was never cut with its expectations judged: the comparison compared nothing", name)
		}
	}
}
