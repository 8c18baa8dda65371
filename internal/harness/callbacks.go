package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// onReplay is the tool's KERNEL_REPLAY callback.
func (t *tool) onReplay(rec replay.CallbackRecord, ud *replay.UserData) {
	p := rec.Payload
	info := p.DispatchInfo
	th := t.here(rec.Thread)
	t.mu.Lock()
	if rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter {
		t.labelOf[info.DispatchID] = t.label[th]
		if kp := t.keep(th); kp != nil { // forgotten once the next repetition is done (Completed)
			kp.ids = append(kp.ids, info.DispatchID)
		}
	}
	label := t.labelOf[info.DispatchID]
	t.mu.Unlock()
	pl := t.planFor(label)

	op, phase := trace.Op(rec.Operation.String()), trace.Phase(rec.Phase.String())
	// One pointer for the callback's events (the tool never writes
	// current_pass): trace.U64 allocates past its small values, and a
	// long loop's callbacks would allocate it three times each.
	pass := PassOf(p.CurrentPass)
	t.rec.EmitRef(&trace.Event{Type: trace.Callback, Thread: uint64(th), Context: uint64(rec.Context),
		Op: op, Phase: phase, Dispatch: info.DispatchID,
		Agent: uint64(info.AgentID), Queue: uint64(info.QueueID), Kernel: info.KernelName,
		Pass: pass, Total: trace.U64(p.TotalPasses), Corr: Corr(rec.Correlation),
		UserData: trace.U64(ud.Value), Payload: PayloadMembers(p), PayloadSize: trace.U64(p.Size),
		Info: DispatchInfo(info), Label: label})

	where := window{op: op, phase: phase, dispatch: info.DispatchID}
	if rec.Operation == replay.OpPass {
		where.pass = pass
		// MEM-2, MEM-3, MEM-4: the memory the pass starts from (ENTER) or
		// left (EXIT), copied first, before anything the tool does here.
		t.copyMemory(th, &where)
	}
	if phase == trace.PhaseExit {
		t.loadSignal(th, &where) // CMP-2: held back until the loop has ended
	}
	switch {
	case rec.Operation == replay.OpConfig && rec.Phase == replay.PhaseEnter:
		t.misuse(th, info.DispatchID, "CONFIG_ENTER", 0)
		if pl.UserData != nil {
			ud.Value = *pl.UserData // UD-1: written once, for the whole sequence
		}
		if !pl.Passes.Unset() {
			p.ReplayPassCount = t.passCount(th, *pl)
		}
		if pl.Continue != nil {
			p.ReplayContinue = t.continueFunc(th, label, *pl.Continue)
		}
		t.actions(th, pl, spec.WindowConfigEnter, &where)
	case rec.Operation == replay.OpConfig:
		t.misuse(th, info.DispatchID, "CONFIG_EXIT", 0)
		t.actions(th, pl, spec.WindowConfigExit, &where)
	case rec.Phase == replay.PhaseEnter:
		t.mu.Lock()
		*t.publishedOf(th) = published{info.DispatchID, p.CurrentPass, true} // CB-4: publish the pass for this thread
		if t.during[label] != nil {
			t.inPass[label] = int64(p.CurrentPass) // a dispatch waits for this pass (InPass)
		}
		t.mu.Unlock()
		t.collect(th, p, pl)
		t.localToggles(th, p, pl)
		t.misuse(th, info.DispatchID, "PASS_ENTER", p.CurrentPass)
		if pl.WriteUserDataInPass {
			ud.Value = 1000 + p.CurrentPass // UD-2: the next pass must not see this
		}
		t.actions(th, pl, spec.WindowPassEnter, &where)
	default: // PASS EXIT
		t.misuse(th, info.DispatchID, "PASS_EXIT", p.CurrentPass)
		t.actions(th, pl, spec.WindowPassExit, &where)
		t.waitForDuring(th, label, p.CurrentPass)
		t.mu.Lock()
		*t.publishedOf(th) = published{} // CB-4: ordinary dispatches never see a stale pass
		if t.during[label] != nil {
			t.inPass[label] = -1
		}
		t.mu.Unlock()
	}
	// What the tool leaves behind is recorded when it returns (UD-1, UD-2,
	// API-6): user data it wrote, payload members it set. Not deferred:
	// the callback returns only here, and a deferred closure holding the
	// callback's values cost as much as the event (a panic in the tool is
	// the thread's error, sim.runApp, not a return).
	if t.app != nil && t.app.diedInCallback(th) {
		return // the process died inside the callback (a nested window's restore failed)
	}
	t.rec.EmitRef(&trace.Event{Type: trace.Returned, Thread: uint64(th), Context: uint64(rec.Context),
		Op: op, Phase: phase, Dispatch: info.DispatchID, Pass: pass,
		UserData: trace.U64(ud.Value), Payload: PayloadMembers(p), Label: label})
}

// planFor is the plan of the dispatch label names: its own, else the
// tool's. Callers only read it.
func (t *tool) planFor(label string) *spec.Plan {
	if len(t.plans) == 0 {
		return &t.s.Tool.Plan // no dispatch has a plan of its own: nothing to look up
	}
	if pl, ok := t.plans[label]; ok {
		return pl
	}
	if base, _, ok := spec.SplitRepetition(label); ok {
		if pl, ok := t.plans[base]; ok {
			return pl // a repetition follows its repeated dispatch's plan
		}
	}
	return &t.s.Tool.Plan
}

// passCount is the tool's replay_pass_count for one dispatch.
func (t *tool) passCount(th hsa.ThreadID, pl spec.Plan) replay.PassCountFunc {
	return func(info replay.DispatchInfo, ud replay.UserData) uint64 {
		n, fixed := pl.Passes.Number()
		var split [][]string
		var of replay.ContextID // the context whose counters were split
		if !fixed {             // "groups": one pass per counter group on this agent (AGT-1)
			n = 1
			if len(t.counterCx) > 0 {
				split = t.groups(info.AgentID, t.counterList(t.counterCx[0]))
				of = t.ctxByName[t.counterCx[0]]
				n = uint64(max(len(split), 1))
			}
		}
		t.rec.EmitRef(&trace.Event{Type: trace.PassCount, Thread: uint64(t.here(th)), Dispatch: info.DispatchID,
			Agent: uint64(info.AgentID), Context: uint64(of), UserData: trace.U64(ud.Value), Info: DispatchInfo(info), Groups: split, Result: trace.I64(int64(n))})
		return n
	}
}

func (t *tool) counterList(ctx string) []string {
	for _, c := range t.s.Contexts {
		if c.Name == ctx && c.Services.CounterCollection != nil {
			return c.Services.CounterCollection.Counters
		}
	}
	return nil
}

// continueFunc is the tool's replay_continue for one dispatch.
func (t *tool) continueFunc(th hsa.ThreadID, label string, c spec.ContinuePolicy) replay.ContinueFunc {
	return func(info replay.DispatchInfo, pass, total uint64, ud replay.UserData) int {
		r := 1
		switch {
		case c.StopAfter != nil:
			if pass >= *c.StopAfter {
				r = 0
			}
		case c.Converge != nil:
			if pass+1 >= c.Converge.AtMost || t.converged(label, c.Converge.Counter, pass) {
				r = 0 // converged, or the fallback bound
			}
		}
		t.rec.EmitRef(&trace.Event{Type: trace.Continue, Thread: uint64(t.here(th)), Dispatch: info.DispatchID,
			Pass: PassOf(pass), Total: trace.U64(total), UserData: trace.U64(ud.Value), Info: DispatchInfo(info), Result: trace.I64(int64(r))})
		return r
	}
}

// converged: the counter read the same on this pass and the one before.
func (t *tool) converged(label, counter string, pass uint64) bool {
	if pass == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := t.counters[label+"/"+counter]
	now, ok1 := seen[pass]
	before, ok2 := seen[pass-1]
	return ok1 && ok2 && now == before
}

// collect carries out the plan's per-pass choice of contexts: the listed
// ones are started locally, every other started context that has a
// dispatch-scoped service is stopped (LCX-3 keeps the choice for later
// passes until the plan changes it).
func (t *tool) collect(th hsa.ThreadID, p *replay.KernelReplayData, pl *spec.Plan) {
	for _, c := range pl.Collect {
		if c.Pass != -1 && uint64(c.Pass) != p.CurrentPass {
			continue
		}
		for _, ctx := range t.s.Contexts {
			t.mu.Lock()
			live := t.live[ctx.Name]
			t.mu.Unlock()
			if live && dispatchScoped(ctx.Services) && !slices.Contains(c.Contexts, ctx.Name) {
				t.local(th, p.DispatchInfo.DispatchID, trace.LocalStop, ctx.Name, p.ReplayStopContext, trace.OpPass, trace.PhaseEnter, &p.CurrentPass)
			}
		}
		for _, name := range c.Contexts {
			t.local(th, p.DispatchInfo.DispatchID, trace.LocalStart, name, p.ReplayStartContext, trace.OpPass, trace.PhaseEnter, &p.CurrentPass)
		}
	}
}

// dispatchScoped: the context has a service that consults the per-pass
// override at dispatch time (SVC-1).
func dispatchScoped(sv spec.Services) bool {
	return sv.CounterCollection != nil || sv.KernelTrace != nil || sv.SPM != nil || sv.ThreadTrace != nil
}

// actions makes the plan's calls from inside this callback: global starts
// and stops of contexts, dispatches of the tool's own, and frees and
// allocations of buffers.
func (t *tool) actions(th hsa.ThreadID, pl *spec.Plan, in string, where *window) {
	for _, a := range pl.Actions {
		if a.In != in || (where.pass != nil && a.Pass != -1 && uint64(a.Pass) != *where.pass) {
			continue
		}
		if t.app != nil && t.app.diedInCallback(th) {
			return // the process died in what the tool wrote: nothing more happens
		}
		switch a.Call {
		case spec.ActionStartContext, spec.ActionStopContext:
			t.setStarted(th, a.Context, a.Call == spec.ActionStartContext, where)
		case spec.ActionDispatch:
			d, ok := t.dispatchNamed(a.Dispatch)
			if !ok || t.app == nil {
				continue
			}
			done, fresh := t.writing(th, d.Name)
			if !fresh {
				continue // never from inside its own windows: that would never end
			}
			err := t.app.submitFromTool(th, d, where)
			done()
			if err != nil {
				t.app.fail(fmt.Errorf("the tool's dispatch %s: %w", d.Name, err))
			}
		case spec.ActionFree, spec.ActionAlloc:
			if t.app != nil {
				t.app.memoryFromTool(th, a.Call, a.Buffer)
			}
		}
	}
}

// writing notes that the tool writes its dispatch name on thread th: the
// dispatch th is submitting is name until done, and the pass th had
// published comes back then (a window of name's own may nest inside the
// pass and publish its passes). fresh is false when th is already writing
// name: its plan's actions would write it again from its own callbacks.
func (t *tool) writing(th hsa.ThreadID, name string) (done func(), fresh bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if slices.Contains(t.writes[th], name) {
		return nil, false
	}
	t.writes[th] = append(t.writes[th], name)
	label := t.label[th]
	pub := *t.publishedOf(th)
	t.label[th] = name
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.writes[th] = t.writes[th][:len(t.writes[th])-1]
		t.label[th] = label
		*t.publishedOf(th) = pub
	}, true
}

func (t *tool) dispatchNamed(name string) (spec.Dispatch, bool) {
	if d, ok := t.byName[name]; ok {
		return *d, true
	}
	return spec.Dispatch{}, false
}

// localToggles makes the plan's local starts and stops for this pass with
// the payload's functions (LCX-1).
func (t *tool) localToggles(th hsa.ThreadID, p *replay.KernelReplayData, pl *spec.Plan) {
	for _, lt := range pl.Local {
		if lt.Pass != -1 && uint64(lt.Pass) != p.CurrentPass {
			continue
		}
		for _, name := range lt.Stop {
			t.local(th, p.DispatchInfo.DispatchID, trace.LocalStop, name, p.ReplayStopContext, trace.OpPass, trace.PhaseEnter, &p.CurrentPass)
		}
		for _, name := range lt.Start {
			t.local(th, p.DispatchInfo.DispatchID, trace.LocalStart, name, p.ReplayStartContext, trace.OpPass, trace.PhaseEnter, &p.CurrentPass)
		}
	}
}

func (t *tool) local(th hsa.ThreadID, dispatch uint64, call trace.Call, ctxName string, fn replay.LocalContextFunc, op trace.Op, phase trace.Phase, pass *uint64) {
	if fn == nil {
		return
	}
	ctx := t.ctxByName[ctxName]
	st := fn(ctx)
	e := trace.Event{Type: trace.Local, Thread: uint64(th), Call: call, Context: uint64(ctx), Op: op, Phase: phase,
		Dispatch: dispatch, Status: st.Trace(), Label: ctxName}
	if pass != nil {
		e.Pass = trace.U64(*pass)
	}
	t.rec.EmitRef(&e)
}

// misuse makes the spec's deliberate wrong calls from the window "in",
// with the functions the SDK hands this thread (LCX-2, LCX-7).
func (t *tool) misuse(th hsa.ThreadID, dispatch uint64, in string, pass uint64) {
	for _, m := range t.s.Tool.Misuse {
		if m.In != in || (in[:4] == "PASS" && m.Pass != pass) {
			continue
		}
		start, stop := t.sdk.LocalContextFuncs(th)
		fn, call := start, trace.LocalStart
		if m.Call == spec.MisuseLocalStop {
			fn, call = stop, trace.LocalStop
		}
		o, p, _ := strings.Cut(in, "_")
		op, phase := trace.Op(o), trace.Phase(p)
		var pp *uint64
		if op == trace.OpPass {
			pp = &pass
		}
		t.local(th, dispatch, call, m.Context, fn, op, phase, pp)
	}
}

// waitForDuring holds the end of a pass until every dispatch that must
// start during it has started, so that overlap is real on free threads.
func (t *tool) waitForDuring(th hsa.ThreadID, label string, pass uint64) {
	for _, d := range t.during[label] {
		if d.During.Pass != pass {
			continue
		}
		name := d.Name
		t.th.WaitUntil(th, func() bool {
			t.mu.Lock()
			defer t.mu.Unlock()
			return t.started[name]
		})
	}
}
