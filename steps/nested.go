package steps

import (
	"context"
	"slices"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// The tool's own dispatches, written from inside a replay window (MEM-6,
// clarified 2026-12-01): how a scenario makes the tool write one, and what
// it sees of it.

func registerNested(sc *godog.ScenarioContext) {
	step(sc, `^in pass (\d+) of `+name+` the tool writes `+dispatchTail+`$`, writesInPass)
	step(sc, `^as the first record of pass (\d+) of `+name+` arrives, the tool writes `+dispatchTail+`$`, writesFromRecord)
	step(sc, `^`+name+` gets its own CONFIG, on the thread of `+name+`, before it runs$`, ownConfig)
	step(sc, `^`+name+` runs inside pass (\d+) of `+name+`$`, runsInsidePass)
	step(sc, `^`+name+` opens its window inside pass (\d+) of `+name+`, which goes on after it closes$`, nestedWindow)
}

// toolWritesIn adds a dispatch the tool writes (by_tool) and the action in
// outer's plan that writes it.
func toolWritesIn(ctx context.Context, in string, pass int64, outer, kernel, scalar, bufs, agentKind, dispatch string) error {
	w := get(ctx)
	o := sentence(kernel, scalar, bufs, agentKind, dispatch)
	if err := w.addDispatch(o); err != nil {
		return err
	}
	d := &w.s.Application.Dispatches[len(w.s.Application.Dispatches)-1]
	d.ByTool, d.Thread = true, 0
	p := w.plan(outer)
	p.Actions = append(p.Actions, spec.Action{In: in, Pass: pass, Call: spec.ActionDispatch, Dispatch: d.Name})
	return nil
}

func writesInPass(ctx context.Context, pass int64, outer, kernel, scalar, bufs, agentKind, dispatch string) error {
	return toolWritesIn(ctx, spec.WindowPassEnter, pass, outer, kernel, scalar, bufs, agentKind, dispatch)
}

func writesFromRecord(ctx context.Context, pass int64, outer, kernel, scalar, bufs, agentKind, dispatch string) error {
	return toolWritesIn(ctx, spec.WindowRecord, pass, outer, kernel, scalar, bufs, agentKind, dispatch)
}

// ownConfig: CONFIG ENTER fires for the tool's dispatch with its own id, on
// the thread of the dispatch it was written in, before its kernel.
func ownConfig(ctx context.Context, label, outer string) error {
	w, v, o, err := twoDispatchesOf(ctx, label, outer)
	if err != nil {
		return err
	}
	enter := v.callbacks(trace.OpConfig, trace.PhaseEnter)
	if len(enter) != 1 || v.id == o.id {
		return w.failf("%s should get one CONFIG ENTER of its own (dispatch %d, %s is %d):\n%s", v.label, v.id, o.label, o.id, show(enter...))
	}
	if enter[0].Thread != o.thread {
		return w.failf("%s's CONFIG ENTER should fire on thread %d, %s's:\n%s", v.label, o.thread, o.label, show(enter...))
	}
	if k := v.of(trace.Kernel); len(k) == 0 || k[0].Seq < enter[0].Seq {
		return w.failf("%s should run after its CONFIG ENTER:\n%s", v.label, show(v.of(trace.Callback, trace.Kernel)...))
	}
	return nil
}

// passBounds are the PASS ENTER and PASS EXIT of pass p of a dispatch.
func passBounds(w *world, v *dispatchView, p uint64) (enter, exit trace.Event, err error) {
	en := where(v.callbacks(trace.OpPass, trace.PhaseEnter), func(e trace.Event) bool { return e.Pass != nil && *e.Pass == p })
	ex := where(v.callbacks(trace.OpPass, trace.PhaseExit), func(e trace.Event) bool { return e.Pass != nil && *e.Pass == p })
	if len(en) != 1 || len(ex) != 1 {
		return enter, exit, w.failf("%s has no pass %d:\n%s", v.label, p, show(v.callbacks(trace.OpPass, anyPhase)...))
	}
	return en[0], ex[0], nil
}

// runsInsidePass: the tool's dispatch ran once, between pass p's ENTER and
// EXIT of the dispatch it was written in.
func runsInsidePass(ctx context.Context, label string, p uint64, outer string) error {
	w, v, o, err := twoDispatchesOf(ctx, label, outer)
	if err != nil {
		return err
	}
	enter, exit, err := passBounds(w, o, p)
	if err != nil {
		return err
	}
	k := v.of(trace.Kernel)
	if len(k) != 1 || k[0].Seq < enter.Seq || k[0].Seq > exit.Seq {
		return w.failf("%s should run once, inside pass %d of %s:\n%s", v.label, p, o.label, show(append([]trace.Event{enter}, append(k, exit)...)...))
	}
	return nil
}

// nestedWindow: the tool's dispatch's CONFIG ENTER and EXIT, and all its
// passes, lie inside pass p of outer, and outer's pass goes on after it.
func nestedWindow(ctx context.Context, label string, p uint64, outer string) error {
	w, v, o, err := twoDispatchesOf(ctx, label, outer)
	if err != nil {
		return err
	}
	enter, exit, err := passBounds(w, o, p)
	if err != nil {
		return err
	}
	cfg := v.callbacks(trace.OpConfig, anyPhase)
	if len(cfg) != 2 || cfg[0].Seq < enter.Seq || cfg[1].Seq > exit.Seq {
		return w.failf("%s's window (CONFIG ENTER to EXIT) should lie inside pass %d of %s:\n%s", v.label, p, o.label, show(append([]trace.Event{enter}, append(cfg, exit)...)...))
	}
	after := where(o.of(trace.Kernel, trace.Callback), func(e trace.Event) bool { return e.Seq > cfg[1].Seq })
	if len(after) == 0 || !slices.ContainsFunc(after, func(e trace.Event) bool { return e.Seq == exit.Seq }) {
		return w.failf("%s's pass %d should go on after %s's window closed:\n%s", o.label, p, v.label, show(after...))
	}
	return nil
}
