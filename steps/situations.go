package steps

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// The steps of situations beyond one loop on one thread (issue 20): an
// override of one dispatch's own loop, memory freed and reallocated while a
// loop runs, and submissions written from other threads or with barriers
// between their kernel packets.

func registerSituations(sc *godog.ScenarioContext) {
	step(sc, `^in (pass \d+|every pass) of `+name+`, the tool (starts|stops) ("[\w-]+"(?:(?:, | and )"[\w-]+")*) locally$`, localOf)
	step(sc, `^as pass (\d+) (begins|ends), the tool frees `+name+` and allocates `+name+` in its place, filled with (-?\d+)$`, freesAndAllocates)
	step(sc, `^thread (\d+) submits "([a-z_]+)" on "([\w-]+)" together with a barrier packet in one write(?: on the `+kind+` agent)?(?: as "([\w-]+)")?$`, threadSubmitsWithBarrier)
	step(sc, `^thread (\d+) launches "([a-z_]+)" on "([\w-]+)" as part of a graph(?: on the `+kind+` agent)?(?: as "([\w-]+)")?$`, threadGraphLaunch)
	step(sc, `^the application submits (\d+) "([a-z_]+)" dispatches on "([\w-]+)" in one write, with a barrier between each two(?: as "([\w-]+)")?$`, submitsBarriersBetween)
	step(sc, `^as pass (\d+) begins, the tool writes "([a-z_]+)"(?: with (-?\d+))? on "([\w-]+)" of its own(?: as "([\w-]+)")?$`, toolWrites)
	step(sc, `^the tool's own dispatch `+name+` gets one `+svcPhrase+` record from `+name+`$`, toolDispatchRecord)
}

// toolDispatchRecord: the records that arrive between the tool's
// tool_dispatch and tool_complete on its thread are its own dispatch's.
func toolDispatchRecord(ctx context.Context, label, svc, ctxName string) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	id, err := w.ctxID(ctxName)
	if err != nil {
		return err
	}
	var got []trace.Event
	open := map[uint64]bool{}
	seen := false
	for _, e := range evs {
		switch {
		case e.Type == trace.ToolDispatch && e.Label == label:
			open[e.Thread], seen = true, true
		case e.Type == trace.ToolComplete && e.Label == label:
			open[e.Thread] = false
		case open[e.Thread] && e.Type == trace.Record && e.Service == serviceName(svc) && e.Context == id:
			got = append(got, e)
		}
	}
	if !seen {
		return w.failf("the tool never wrote %q", label)
	}
	if len(got) != 1 {
		return w.failf("%s should deliver one %s record for the tool's dispatch %s; it delivered %d:\n%s", ctxName, svc, label, len(got), show(got...))
	}
	return nil
}

// toolWrites: in PASS ENTER of a pass the tool writes a dispatch of its
// own, on the first agent (decision 11).
func toolWrites(ctx context.Context, pass uint64, kernel, scalar, bufs, name string) error {
	w := get(ctx)
	if err := w.addDispatch(sentence(kernel, scalar, bufs, "", name)); err != nil {
		return err
	}
	d := &w.s.Application.Dispatches[len(w.s.Application.Dispatches)-1]
	d.ByTool = true
	p := toolPlan(ctx)
	p.Actions = append(p.Actions, spec.Action{In: spec.WindowPassEnter, Pass: int64(pass), Call: spec.ActionDispatch, Dispatch: d.Name})
	return nil
}

// localOf is `local` for one dispatch's own plan.
func localOf(ctx context.Context, when, dispatch, call, names string) error {
	lt, err := localToggle(when, call, names)
	if err != nil {
		return err
	}
	p := get(ctx).plan(dispatch)
	p.Local = append(p.Local, lt)
	return nil
}

// localToggle reads "pass N" or "every pass", "starts" or "stops" and the
// contexts named.
func localToggle(when, call, names string) (spec.LocalToggle, error) {
	pass := int64(-1)
	if when != "every pass" {
		n, err := strconv.ParseInt(strings.TrimPrefix(when, "pass "), 10, 64)
		if err != nil {
			return spec.LocalToggle{}, fmt.Errorf("unknown pass %q", when)
		}
		pass = n
	}
	lt := spec.LocalToggle{Pass: pass}
	if call == "starts" {
		lt.Start = words(names)
	} else {
		lt.Stop = words(names)
	}
	return lt, nil
}

// freesAndAllocates: from PASS ENTER or PASS EXIT of a pass, the tool
// frees an application buffer and allocates one of its agent, kind and
// size, which the simulator places where the freed one was (MEM-4).
func freesAndAllocates(ctx context.Context, pass uint64, when, freed, made string, fill int64) error {
	w := get(ctx)
	i := slices.IndexFunc(w.s.Application.Buffers, func(b spec.Buffer) bool { return b.Name == freed })
	if i < 0 {
		return fmt.Errorf("no buffer %q", freed)
	}
	b := w.s.Application.Buffers[i]
	w.s.Application.Buffers = append(w.s.Application.Buffers, spec.Buffer{Name: made, Agent: b.Agent, Kind: b.Kind,
		Elements: b.Elements, Fill: fill, ByTool: true})
	in := spec.WindowPassEnter
	if when == "ends" {
		in = spec.WindowPassExit
	}
	p := toolPlan(ctx)
	p.Actions = append(p.Actions,
		spec.Action{In: in, Pass: int64(pass), Call: spec.ActionFree, Buffer: freed},
		spec.Action{In: in, Pass: int64(pass), Call: spec.ActionAlloc, Buffer: made})
	return nil
}

func threadSubmitsWithBarrier(ctx context.Context, thread uint64, kernel, bufs, agentKind, name string) error {
	o := sentence(kernel, "", bufs, agentKind, name)
	o.thread, o.packets = thread, 2
	return get(ctx).addDispatch(o)
}

func threadGraphLaunch(ctx context.Context, thread uint64, kernel, bufs, agentKind, name string) error {
	o := sentence(kernel, "", bufs, agentKind, name)
	o.thread, o.graph = thread, true
	return get(ctx).addDispatch(o)
}

// submitsBarriersBetween: n kernel packets of one write, a barrier packet
// between each two (DID-1: each kernel packet is its own dispatch).
func submitsBarriersBetween(ctx context.Context, n int, kernel, bufs, name string) error {
	w := get(ctx)
	if err := w.addDispatch(sentence(kernel, "", bufs, "", name)); err != nil {
		return err
	}
	d := &w.s.Application.Dispatches[len(w.s.Application.Dispatches)-1]
	d.KernelPackets, d.Packets, d.BarriersBetween = n, 2*n-1, true
	return nil
}

// applyRequires: a scenario whose tool acts from its callbacks states the
// capabilities that takes (the loader asks for them), beside everything
// else the spec uses.
func (w *world) applyRequires() {
	toolActs, memory := false, false
	plans := []spec.Plan{w.s.Tool.Plan}
	for _, d := range w.s.Application.Dispatches {
		if d.Plan != nil {
			plans = append(plans, *d.Plan)
		}
	}
	for _, p := range plans {
		for _, a := range p.Actions {
			toolActs = true
			memory = memory || a.Call == spec.ActionFree || a.Call == spec.ActionAlloc
		}
	}
	if !toolActs {
		return
	}
	bare := w.s
	bare.Requires = nil
	need := append(spec.Needs(bare), spec.CapToolActions)
	if memory {
		need = append(need, spec.CapMemoryActions)
	}
	for _, c := range need {
		if !slices.Contains(w.s.Requires, c) {
			w.s.Requires = append(w.s.Requires, c)
		}
	}
}
