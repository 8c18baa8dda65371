package check

import (
	"fmt"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// The tool's own dispatches inside a replay window (MEM-6, clarified
// 2026-12-01). A kernel dispatch the tool writes from a CONFIG or PASS
// callback, or from a service callback within a pass, is a candidate like
// any other: CONFIG ENTER fires for it first, on its thread, with its own
// dispatch id and pass-count question. On an agent whose window is already
// open on that thread the SDK declines it: a reentrant_dispatch
// diagnostic, CONFIG EXIT, one run inside the outer pass, whose writes the
// outer loop's next restore undoes; it never waits for its own window. On
// another agent it opens a window of its own, nested in the outer pass,
// with its own snapshot, passes and single completion, and closing it
// leaves the outer window open.

// toolWrite is one dispatch the tool wrote, as its thread shows it.
type toolWrite struct {
	at, end  int    // tool_dispatch, and tool_complete (len(ev) when it never came)
	complete bool   // tool_complete came
	thread   uint64 // the thread it was written on
	label    string
	agent    uint64
	from     uint64   // the dispatch whose callback it was written from
	id       uint64   // its own dispatch id, 0 when the trace names none
	open     []uint64 // the dispatches whose windows were open on its thread, outermost first
}

// toolWrites finds every dispatch the tool wrote and the windows open
// around it; built once.
func (x *index) toolWrites() []*toolWrite {
	if x.writes != nil {
		return *x.writes
	}
	var out []*toolWrite
	if !x.has(trace.ToolDispatch) {
		x.writes = &out // the tool wrote none: no need to walk every thread
		return out
	}
	returns, hasIDs := x.has(trace.Returned), x.has(trace.DispatchID)
	for _, pos := range x.byThread {
		var open []uint64 // windows open on this thread, outermost first
		var writing []*toolWrite
		for _, i := range pos {
			e := &x.ev[i]
			if e.Type == trace.AppDispatch {
				open, writing = open[:0], writing[:0] // the application's next dispatch: all is over
				continue
			}
			if e.Dispatch != 0 && e.Type != trace.ToolDispatch {
				// An event of an outer window's dispatch: every window and
				// write nested inside it is over (a loop that never ended
				// leaves no CONFIG EXIT, and the tool gives up on it).
				if k := slices.Index(open, e.Dispatch); k >= 0 {
					open = open[:k+1]
				}
				if k := slices.IndexFunc(writing, func(w *toolWrite) bool { return w.from == e.Dispatch }); k >= 0 {
					writing = writing[:k]
				}
			}
			if e.Type == trace.DispatchID || (!hasIDs && (e.Type == trace.Callback || e.Type == trace.Kernel)) {
				// Its own id: the first reserved (or, without the SDK's
				// events, named: its CONFIG ENTER first, which a tool that
				// subscribes to CONFIG alone is the only one to see;
				// decision 17.21) in its window, not in a deeper one.
				if n := len(writing); n > 0 && writing[n-1].id == 0 && e.Dispatch != 0 && e.Dispatch != writing[n-1].from {
					writing[n-1].id = e.Dispatch
				}
			}
			switch {
			case e.Type == trace.Callback && e.Op == trace.OpConfig && e.Phase == trace.PhaseEnter:
				open = append(open, e.Dispatch)
			case e.Op == trace.OpConfig && e.Phase == trace.PhaseExit &&
				(e.Type == trace.Returned || !returns && e.Type == trace.Callback):
				// The window closes as CONFIG EXIT returns (without the
				// tool's returns in the trace: at CONFIG EXIT; a dispatch
				// written from it still names it, below).
				if k := slices.Index(open, e.Dispatch); k >= 0 {
					open = slices.Delete(open, k, k+1)
				}
			case e.Type == trace.NeverEnded || e.Type == trace.AppTimeout:
				// The loop ended without CONFIG EXIT: its window is over.
				if k := slices.Index(open, e.Dispatch); k >= 0 {
					open = open[:k]
				} else if e.Type == trace.AppTimeout {
					open = open[:0]
				}
			case e.Type == trace.ToolDispatch:
				w := &toolWrite{at: i, end: len(x.ev), thread: e.Thread, label: e.Label, agent: e.Agent,
					from: e.Dispatch, open: slices.Clone(open)}
				if w.from != 0 && !slices.Contains(w.open, w.from) {
					w.open = append(w.open, w.from)
				}
				out = append(out, w)
				writing = append(writing, w)
			case e.Type == trace.ToolComplete:
				for k := len(writing) - 1; k >= 0; k-- {
					if writing[k].label == e.Label {
						writing[k].end, writing[k].complete = i, true
						writing = slices.Delete(writing, k, k+1)
						break
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *toolWrite) int { return a.at - b.at })
	x.writes = &out
	return out
}

// windowOnAgent is the innermost window open around w on w's own agent:
// the one that declines it; 0 when none.
func (x *index) windowOnAgent(w *toolWrite) uint64 {
	for k := len(w.open) - 1; k >= 0; k-- {
		if d := x.dispatches[w.open[k]]; d != nil && d.agent != 0 && d.agent == w.agent {
			return d.id
		}
	}
	return 0
}

// declined reports whether d is a dispatch the tool wrote inside a window
// of its thread on d's own agent: the SDK runs it once (MEM-6 judges it,
// not the pass-count table).
func (x *index) declined(d *dispatchView) bool {
	if x.declinedIDs == nil {
		x.declinedIDs = map[uint64]bool{}
		for _, w := range x.toolWrites() {
			if w.id != 0 && x.windowOnAgent(w) != 0 {
				x.declinedIDs[w.id] = true
			}
		}
	}
	return x.declinedIDs[d.id]
}

// toolNeverCompleted reports whether d is a dispatch the tool wrote whose
// wait never returned (no tool_complete): a loop that may have ended the
// process (MEM-5), nested in the window it was written from.
func (x *index) toolNeverCompleted(d *dispatchView) bool {
	for _, w := range x.toolWrites() {
		if w.id == d.id {
			return !w.complete
		}
	}
	return false
}

// checkNested judges the tool's own dispatches inside windows (MEM-6).
func checkNested(x *index) []Violation {
	var vs []Violation
	warned := -1 // the first reentrant_dispatch diagnostic (once per process)
	for _, i := range x.types[ekWarning] {
		if x.ev[i].Code == trace.WarnReentrantDispatch {
			if warned < 0 {
				warned = i
			}
		}
	}
	vs = append(vs, x.checkWarnedOnce("MEM-6", trace.WarnReentrantDispatch)...)
	for _, w := range x.toolWrites() {
		if len(w.open) == 0 {
			continue // not written inside a window
		}
		d := x.dispatches[w.id]
		if w.id == 0 || d == nil {
			// No id, no callback, no kernel of its own in the bracket: a
			// candidate got no CONFIG, unless nothing was started.
			if v := x.checkToolCandidate(w, &dispatchView{}); v != nil {
				vs = append(vs, *v)
			}
			continue
		}
		if v := x.checkToolCandidate(w, d); v != nil {
			vs = append(vs, *v)
			continue
		}
		if len(d.configEnter) == 0 || !x.asksForLoop(d) {
			continue // not replayed by the tool's own answer: PC-1, PC-2, PC-6 judge it
		}
		if outer := x.windowOnAgent(w); outer != 0 {
			vs = append(vs, x.checkDeclined(w, d, x.dispatches[outer], warned)...)
		} else {
			vs = append(vs, x.checkNestedWindow(w, d)...)
		}
	}
	return vs
}

// checkToolCandidate: CONFIG ENTER fires for the tool's dispatch, on its
// thread, before it runs, whenever a started context's subscription
// covered CONFIG all along while it was written.
func (x *index) checkToolCandidate(w *toolWrite, d *dispatchView) *Violation {
	hi := w.end
	if d.id != 0 {
		hi = min(x.decidedBy(d, nil), w.end)
	}
	active, _, _, known := x.activeSubscription(w.at, hi)
	if !known || !active {
		return nil
	}
	x.examined("MEM-6")
	var why string
	at := []int{w.at}
	switch {
	case len(d.configEnter) == 0 && len(d.kernels) == 0 && !w.complete && x.processDied():
		return nil // the process died before the SDK reached it (MEM-5)
	case len(d.configEnter) == 0:
		why = "got no CONFIG callback"
		at = append(at, d.kernels...)
	case x.ev[d.configEnter[0]].Thread != w.thread:
		why = fmt.Sprintf("got CONFIG ENTER on thread %d, not on its own", x.ev[d.configEnter[0]].Thread)
		at = append(at, d.configEnter[0])
	case len(d.kernels) > 0 && d.kernels[0] < d.configEnter[0]:
		why = "ran before its CONFIG ENTER"
		at = append(at, d.kernels[0], d.configEnter[0])
	default:
		return nil
	}
	name := fmt.Sprintf("the tool's dispatch %s (dispatch %d)", w.label, d.id)
	if d.id == 0 {
		name = fmt.Sprintf("the tool's dispatch %s", w.label)
	}
	v := x.violation("MEM-6", d.id, fmt.Sprintf("%s, written inside dispatch %d's replay window, %s: a dispatch the tool writes inside a window is a candidate like any other", name, w.from, why), at...)
	return &v
}

// checkDeclined: on an agent whose window is open on its thread, the
// tool's dispatch is declined with a diagnostic, runs once inside the
// window without waiting for it, and the outer loop's next restore undoes
// what it wrote.
func (x *index) checkDeclined(w *toolWrite, d, outer *dispatchView, warned int) []Violation {
	x.examined("MEM-6")
	var vs []Violation
	v := func(msg string, at ...int) {
		vs = append(vs, x.violation("MEM-6", d.id, fmt.Sprintf("the tool's dispatch %s (dispatch %d) on agent %d, written inside dispatch %d's window on that agent, %s", w.label, d.id, w.agent, outer.id, msg), at...))
	}
	if d.replayed() || len(d.snapshots) > 0 {
		v(fmt.Sprintf("was replayed (%d passes, %d snapshots); the SDK declines it", len(d.passEnter), len(d.snapshots)), x.concat([]int{w.at}, d.passEnter, d.snapshots)...)
		return vs
	}
	exit := firstOr(d.configExit, len(x.ev))
	cut := len(d.configExit) == 0 && x.cutOff(d)
	if len(d.configExit) == 0 && !cut {
		v("got no CONFIG EXIT", append([]int{w.at}, d.configEnter...)...)
	}
	// Cut off (a failed restore on another thread ended the process before
	// its CONFIG EXIT), it may have died before its diagnostic was printed
	// (decision 17.23).
	if x.reportsWarnings() && !cut && !x.warnedInTime(warned, d, exit) {
		v(fmt.Sprintf("was declined without a %s diagnostic before its CONFIG EXIT", trace.WarnReentrantDispatch), append([]int{w.at}, d.configExit...)...)
	}
	if !x.has(trace.Kernel) {
		// Without the runtime's kernels: the tool's wait for it never
		// returned and its thread said nothing more, while no loop of
		// another thread shows the process dying (MEM-5): its thread
		// waits for itself.
		if !w.complete && len(d.configExit) > 0 && x.silentAfter(w.thread, w.at) && !x.diedElsewhere(w.thread) {
			v("was declined, but the tool's wait for it never returned: its thread waits for the window it holds itself (the SDK never deadlocks on its own window)", w.at, exit)
		}
		return vs
	}
	switch {
	case len(d.kernels) == 0 && !w.complete && x.diedElsewhere(w.thread):
		// A failed restore on another thread ended the process before the
		// declined dispatch ran (MEM-5): no run is owed.
		return vs
	case len(d.kernels) == 0 && !w.complete:
		// The trace ends with the tool waiting inside its callback for a
		// dispatch that never ran: its thread waits for its own window.
		v("never ran: its thread waits for the window it holds itself (the SDK never deadlocks on its own window)", w.at, exit)
		return vs
	case len(d.kernels) != 1:
		v(fmt.Sprintf("ran %d times; declined, it runs once", len(d.kernels)), append([]int{w.at}, d.kernels...)...)
		return vs
	case d.kernels[0] > w.end:
		v("ran after the tool's callback went on: it runs once, inside the outer pass", w.at, d.kernels[0])
		return vs
	}
	return append(vs, x.checkRestoreUndoes(w, d, outer)...)
}

// silentAfter reports whether, after position from, thread th recorded
// nothing but what belongs to the tool's dispatch written there: no
// tool_complete, no callback return of the window around it, no
// application event.
func (x *index) silentAfter(th uint64, from int) bool {
	pos := x.byThread[th]
	for j := sort.SearchInts(pos, from+1); j < len(pos); j++ {
		if e := &x.ev[pos[j]]; e.Type == trace.ToolComplete || !x.byTool[pos[j]] && e.Type != trace.ToolDispatch {
			return false
		}
	}
	return true
}

// diedElsewhere reports whether a loop on another thread than th shows the
// process dying in a failed restore (MEM-5).
func (x *index) diedElsewhere(th uint64) bool {
	for _, d := range x.dispatches {
		if d.thread != th && x.aborted(d) {
			return true
		}
	}
	return false
}

// checkRestoreUndoes: the outer loop's restore after the declined kernel
// gives the next pass the memory every pass starts from, whatever the
// tool's kernel wrote.
func (x *index) checkRestoreUndoes(w *toolWrite, d, outer *dispatchView) []Violation {
	k := d.kernels[0]
	r := -1
	for _, i := range outer.restores {
		if i > k {
			r = i
			break
		}
	}
	if r < 0 || len(outer.kernels) == 0 {
		return nil // the last pass, or no loop: nothing undoes it
	}
	j := slices.IndexFunc(outer.kernels, func(i int) bool { return i > r })
	if j < 0 {
		return nil
	}
	next, first := outer.kernels[j], outer.kernels[0]
	in, want := x.ev[next].MemIn, x.ev[first].MemIn
	if in == "" || want == "" || next == first || x.writtenBefore(outer, first) || x.otherKernelBetween(outer.id, r, next) {
		return nil // not comparable: another kernel may have written the memory since
	}
	x.examined("MEM-6")
	if in != want {
		p, _ := x.passOf(next)
		if w := x.window(next); w.open {
			p = w.pass
		}
		return []Violation{x.violation("MEM-6", outer.id, fmt.Sprintf("the restore before pass %d of dispatch %d did not undo what the tool's declined dispatch %s wrote inside its window: the pass started from %s, the first from %s", p, outer.id, w.label, in, want), k, r, next)}
	}
	return nil
}

// checkNestedWindow: on another agent the tool's dispatch opens a window
// of its own there, nested inside the window it was written from, with
// its own loop and single completion; closing it leaves the outer one
// open.
func (x *index) checkNestedWindow(w *toolWrite, d *dispatchView) []Violation {
	if len(d.failedSnapshots) > 0 {
		return nil // its snapshot failed: it runs once (MEM-5)
	}
	x.examined("MEM-6")
	v := func(msg string, at ...int) []Violation {
		return []Violation{x.violation("MEM-6", d.id, fmt.Sprintf("the tool's dispatch %s (dispatch %d) on agent %d, where no window of its thread was open, %s", w.label, d.id, w.agent, msg), at...)}
	}
	if !d.replayed() && !x.hiddenLoop(d) && len(d.neverEnded) == 0 && !x.cutOff(d) {
		if !x.header.Reports(trace.SourceSDK) && x.snapshotMayHaveFailedBefore(w.end) {
			// Without the SDK's account its snapshot may have failed: a
			// snapshot_incomplete was printed before the tool's wait for
			// it returned (once a process), or the trace carries no
			// warnings (MEM-5; decision 17.22).
			return nil
		}
		r, _ := x.passCount(d)
		return v(fmt.Sprintf("was not replayed though the tool asked for %d passes: it opens a window of its own there", r), x.concat([]int{w.at}, d.passCounts, d.kernels)...)
	}
	if len(d.configExit) == 0 {
		return nil // it never ended (CMP-4) or the process died in it: CMP and MEM-5 judge it
	}
	exit := d.configExit[0]
	if exit > w.end {
		return v("closed its window after the tool's callback went on: it nests inside the outer pass", w.at, w.end, exit)
	}
	// Closing it leaves the outer window open: the callback it was
	// written from returns after it, and the outer window ends later.
	if outer := x.dispatches[w.from]; outer != nil {
		oe := firstOr(outer.configExit, len(x.ev))
		if from := &x.ev[w.at]; from.Op == trace.OpConfig && from.Phase == trace.PhaseExit {
			// Written from the outer CONFIG EXIT: that window closes as
			// the callback returns.
			oe = len(x.ev)
			if ret, ok := x.returnOf(outer, trace.OpConfig, trace.PhaseExit); ok {
				oe = ret
			}
		}
		if oe < exit {
			return v(fmt.Sprintf("closed after the window of dispatch %d it was written in had closed", w.from), oe, exit)
		}
	}
	// Its single completion: the tool's signal, once, after CONFIG EXIT.
	if sig := x.ev[w.at].Signal; sig != 0 && x.header.Reports(trace.SourceRuntime) {
		var decs []int
		for _, i := range x.types[ekSignal] {
			if e := &x.ev[i]; e.Signal == sig && i > w.at && i <= w.end {
				decs = append(decs, i)
			}
		}
		switch {
		case len(decs) != 1:
			return v(fmt.Sprintf("completed %d times; its window completes it once", len(decs)), append([]int{w.at}, decs...)...)
		case decs[0] < exit:
			return v("completed before its CONFIG EXIT", decs[0], exit)
		}
	}
	return nil
}

// warnedInTime: the once-per-process reentrant_dispatch diagnostic came
// before d's CONFIG EXIT, or it names another declined dispatch whose
// window began before then: that thread took the one print first and may
// write it after d's CONFIG EXIT (found by make soak on the C port, one run
// in about 50 of gen-211511).
func (x *index) warnedInTime(warned int, d *dispatchView, exit int) bool {
	if warned < 0 {
		return false
	}
	if warned < exit {
		return true
	}
	if o := x.dispatches[x.ev[warned].Dispatch]; o != nil && o != d && len(o.configEnter) > 0 {
		return o.configEnter[0] < exit
	}
	return false
}
