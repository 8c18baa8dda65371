package harness

import (
	"context"
	"fmt"
	"testing"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// TestRepetitionsAreForgotten: what the tool and the application learn of
// a repeated dispatch's repetitions (and of what the tool writes inside
// their windows) does not outlive them, so a million of them run in the
// memory of a few. The tool keeps the last two repetitions' at most.
func TestRepetitionsAreForgotten(t *testing.T) {
	const reps = 200
	s := spec.Defaults(spec.Spec{Version: spec.Version, Name: "forget",
		Agents: []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: []spec.Context{
			{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}},
			{Name: "counters", Services: spec.Services{CounterCollection: &spec.CounterCollection{Counters: []string{"SQ_WAVES"}}}},
		},
		Tool: spec.Tool{Plan: spec.Plan{Passes: "0", Continue: &spec.ContinuePolicy{Converge: &spec.Converge{Counter: "SQ_WAVES", AtMost: 3}},
			Actions: []spec.Action{{In: spec.WindowPassEnter, Pass: 1, Call: spec.ActionDispatch, Dispatch: "side"}}}},
		Application: spec.Application{
			Buffers: []spec.Buffer{{Name: "c", Agent: "gpu0", Elements: 4}, {Name: "s", Agent: "gpu0", Kind: "fine", Elements: 4}},
			Dispatches: []spec.Dispatch{
				{Name: "count", Kernel: "atomic_counter", Agent: "gpu0", Args: []string{"c"}, Grid: 256, Repeat: reps},
				{Name: "side", Kernel: "fill", Agent: "gpu0", Args: []string{"s"}, Scalar: 7, ByTool: true},
			}},
	})
	apps, passes := 0, 0
	tl := runKeeping(t, s, func(e *trace.Event) {
		switch {
		case e.Type == trace.AppComplete:
			apps++
		case e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter:
			passes++
		}
	})
	if apps != reps || passes < 2*reps {
		t.Fatalf("%d completions and %d passes: want %d, and at least 2 passes each (the tool's dispatch is written in pass 1)", apps, passes, reps)
	}
	// Each repetition labels two dispatch ids (its own and the tool's);
	// the last two repetitions' are kept.
	const kept = 4
	for name, n := range map[string]int{"labelOf": len(tl.labelOf), "recorded": len(tl.recorded), "inPass": len(tl.inPass),
		"counters": len(tl.counters), "started": len(tl.started), "completed": len(tl.app.completed)} {
		if n > kept {
			t.Errorf("the tool's %s holds %d entries after %d repetitions; want at most %d", name, n, reps, kept)
		}
	}
}

// TestLoopLeavesNoEntryAPass: a never-ending loop's passes each get
// records, and the tool's note of which pass had its first one does not
// grow with the passes (the pass before is never published again).
func TestLoopLeavesNoEntryAPass(t *testing.T) {
	const passes = 300
	s := timedLoop("loop", 4)
	s.Tool.Plan = spec.Plan{Passes: "0", Continue: &spec.ContinuePolicy{Always: true}}
	s.Limits.MaxPasses = passes
	s = spec.Defaults(s)
	records := 0
	tl := runKeeping(t, s, func(e *trace.Event) {
		if e.Type == trace.Record {
			records++
		}
	})
	if records < passes {
		t.Fatalf("%d records: want one a pass at least (%d passes)", records, passes)
	}
	if n := len(tl.recorded); n > 1 {
		t.Errorf("the tool notes %d passes' first records after a %d-pass loop; want the last pass's only", n, passes)
	}
}

// timedLoop is a spec of one dispatch, d, that increments a buffer x of
// the given elements on gpu0, under a replay context and a kernel_trace
// context (timing); extra contexts come after them. Its plan is the
// caller's.
func timedLoop(name string, elements uint64, extra ...spec.Context) spec.Spec {
	return spec.Spec{Version: spec.Version, Name: name,
		Agents: []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: append([]spec.Context{
			{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}},
			{Name: "timing", Services: spec.Services{KernelTrace: &spec.Empty{}}},
		}, extra...),
		Application: spec.Application{
			Buffers:    []spec.Buffer{{Name: "x", Agent: "gpu0", Elements: elements}},
			Dispatches: []spec.Dispatch{{Name: "d", Kernel: "increment", Agent: "gpu0", Args: []string{"x"}}},
		},
	}
}

// runKeeping runs s on the scheduled simulator, handing each event to
// sink and keeping none, and returns the tool, to look at what it kept.
func runKeeping(t testing.TB, s spec.Spec, sink func(*trace.Event)) *tool {
	t.Helper()
	cfg := sim.Config{Scheduled: true}
	for _, a := range s.Agents {
		cfg.Agents = append(cfg.Agents, sim.AgentConfig{Name: a.Name, Kind: a.Kind})
	}
	rt, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := trace.NewRecorder(rt.Clock)
	rec.SetSink(sink, false)
	rt.SetRecorder(rec)
	sdk := replay.New(rt, replay.Options{Recorder: rec, MaxPasses: s.Limits.MaxPasses})
	tl := newTool(sdk, rt, rt, rec, s)
	tl.setUp()
	if err := runApplication(context.Background(), rt, rt, sdk, rec, s, tl); err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestRecordWindowOncePerPass: the plan's calls from a service callback
// are made from each pass's first record only (MEM-6), however many
// records a pass has (two contexts trace its kernel here), and again in
// the next pass (the tool's note of the first record moves on with it).
func TestRecordWindowOncePerPass(t *testing.T) {
	const passes = 4
	s := timedLoop("record-window", 4, spec.Context{Name: "timing2", Services: spec.Services{KernelTrace: &spec.Empty{}}})
	s.Tool.Plan = spec.Plan{Passes: spec.Passes(fmt.Sprint(passes)), Actions: []spec.Action{
		{In: spec.WindowRecord, Pass: -1, Call: spec.ActionDispatch, Dispatch: "side"},
	}}
	s.Application.Dispatches = append(s.Application.Dispatches,
		spec.Dispatch{Name: "side", Kernel: "fill", Agent: "gpu0", Args: []string{"x"}, Scalar: 9, ByTool: true})
	s = spec.Defaults(s)
	records, written := map[uint64]int{}, map[uint64]int{}
	runKeeping(t, s, func(e *trace.Event) {
		switch {
		case e.Type == trace.Record && e.Label == "" && e.Pass != nil && e.Dispatch == 1:
			records[*e.Pass]++
		case e.Type == trace.ToolDispatch && e.Pass != nil:
			written[*e.Pass]++
		}
	})
	for p := range uint64(passes) {
		if records[p] < 2 || written[p] != 1 {
			t.Errorf("pass %d: %d records, the tool's dispatch written %d times; want 2 or more, and once", p, records[p], written[p])
		}
	}
}

// TestNothingStaysPublished: once its loops have ended, no thread has a
// pass published (CB-4: a later record of the thread is no loop's), also
// after the tool wrote a dispatch of its own inside a pass, whose own
// passes are published and withdrawn in between.
func TestNothingStaysPublished(t *testing.T) {
	s := timedLoop("unpublished", 4)
	s.Tool.Plan = spec.Plan{Passes: "3", Actions: []spec.Action{
		{In: spec.WindowPassEnter, Pass: 1, Call: spec.ActionDispatch, Dispatch: "side"},
	}}
	s.Application.Dispatches = append(s.Application.Dispatches,
		spec.Dispatch{Name: "side", Kernel: "fill", Agent: "gpu0", Args: []string{"x"}, Scalar: 9, ByTool: true})
	tl := runKeeping(t, spec.Defaults(s), func(*trace.Event) {})
	if len(tl.published) == 0 {
		t.Fatal("no thread ever published a pass")
	}
	for th, p := range tl.published {
		if p.on {
			t.Errorf("thread %d still has pass %d of dispatch %d published", th, p.pass, p.dispatch)
		}
	}
}

// TestToolDispatchGivesThePassBack: a dispatch the tool writes inside a
// pass, replayed in a window of its own on another agent, publishes its
// own passes; once it is done the outer pass is published again, so the
// outer kernel's record of that pass still carries it (CB-4).
func TestToolDispatchGivesThePassBack(t *testing.T) {
	s := timedLoop("give-back", 4)
	s.Agents = append(s.Agents, spec.Agent{Name: "gpu1", Kind: "MI300"})
	s.Tool.Plan = spec.Plan{Passes: "3", Actions: []spec.Action{
		{In: spec.WindowPassEnter, Pass: 1, Call: spec.ActionDispatch, Dispatch: "side"},
	}}
	s.Application.Buffers = append(s.Application.Buffers, spec.Buffer{Name: "y", Agent: "gpu1", Elements: 4})
	s.Application.Dispatches = append(s.Application.Dispatches,
		spec.Dispatch{Name: "side", Kernel: "fill", Agent: "gpu1", Args: []string{"y"}, Scalar: 9, ByTool: true})
	outer, side := map[uint64]int{}, 0
	runKeeping(t, spec.Defaults(s), func(e *trace.Event) {
		switch {
		case e.Type == trace.Record && e.Dispatch == 1 && e.Pass != nil:
			outer[*e.Pass]++
		case e.Type == trace.Record && e.Dispatch == 1:
			t.Errorf("a record of the outer dispatch with no pass (event %d)", e.Seq)
		case e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && e.Dispatch != 1:
			side++
		}
	})
	if side < 2 || outer[0] != 1 || outer[1] != 1 || outer[2] != 1 {
		t.Errorf("the tool's dispatch ran %d passes, the outer dispatch's records by pass %v: want 2 or more, and one a pass", side, outer)
	}
}
