package check

import (
	"fmt"
	"maps"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkLCX judges localized context control: where the calls are legal,
// what they return, and which records they mask, for how long, for whom.
func checkLCX(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		vs = append(vs, x.checkLocalStatuses(d)...)
		if d.replayed() {
			vs = append(vs, x.checkMasking(d)...)
		}
	})
	vs = append(vs, x.checkMaskScope()...)
	return append(vs, x.checkNoGlobalToggles()...)
}

// LCX-2, LCX-7: outside PASS ENTER a call fails with CONTEXT_ERROR; inside,
// starting or stopping a context that was not active before the loop fails
// with CONTEXT_NOT_STARTED (clarified 2026-11-30: the stop too) and the
// calls on active contexts succeed.
func (x *index) checkLocalStatuses(d *dispatchView) []Violation {
	var vs []Violation
	lo, hi := -1, -1
	if len(d.locals) > 0 {
		lo, hi = x.writeWindow(d)
	}
	for _, i := range d.locals {
		e := x.ev[i]
		if e.Op != trace.OpPass || e.Phase != trace.PhaseEnter {
			x.examined("LCX-2")
			if !e.Status.Is(trace.StatusContextError) {
				vs = append(vs, x.violation("LCX-2", d.id, fmt.Sprintf("local %s of context %d from %s %s returned %s, want ERROR_CONTEXT_ERROR", e.Call, e.Context, e.Op, e.Phase, e.Status), i))
			}
			continue
		}
		if len(d.configEnter) == 0 {
			continue
		}
		// "Active when the loop began": when the SDK took the write
		// (decision 12), which the trace places between lo and hi. A
		// context another thread started or stopped meanwhile may be
		// either (found under free threads, decision 18.1).
		active, inactive, known := x.contextIn(e.Context, lo, hi)
		if !known || (!active && !inactive) {
			continue
		}
		x.examined("LCX-7")
		switch {
		case inactive && !e.Status.Is(trace.StatusContextNotStarted):
			vs = append(vs, x.violation("LCX-7", d.id, fmt.Sprintf("local %s of context %d, inactive before the loop, returned %s, want ERROR_CONTEXT_NOT_STARTED", e.Call, e.Context, e.Status), i))
		case active && !e.Status.Is(trace.StatusSuccess):
			vs = append(vs, x.violation("LCX-7", d.id, fmt.Sprintf("local %s of active context %d in PASS ENTER returned %s, want SUCCESS", e.Call, e.Context, e.Status), i))
		}
	}
	return vs
}

// maskState is one context's local override within one loop.
type maskState struct {
	stopped     bool // the last successful call was a stop
	everStopped bool // a stop succeeded earlier in this loop
	stopAt      int  // position of the last successful stop
}

// off says whether the context's dispatch-scoped services are masked. All
// four follow the last successful call: counters and SPM honour a stop and
// a start; kernel trace and thread trace honour "a stop only", which
// (SVC-1 with LCX-3, clarified 2026-11-30) still ends when the context is
// started again, since a start of a context inactive before the loop is
// refused (LCX-7) and never reaches the mask.
func (m maskState) off() bool { return m.stopped }

// LCX-3, SVC-1: within a loop the masks persist from pass to pass and
// decide which dispatch-scoped records each pass delivers.
func (x *index) checkMasking(d *dispatchView) []Violation {
	var vs []Violation
	type cs struct {
		context uint64
		service trace.Service
	}
	byPass := map[uint64][]int{}
	for _, i := range d.records {
		if p, ok := x.recordPass(i); ok && dispatchScoped(x.ev[i].Service) {
			byPass[p] = append(byPass[p], i)
		}
	}
	localsByPass := map[uint64][]int{}
	for _, i := range d.locals {
		e := x.ev[i]
		if p, ok := e.PassOf(); ok && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && e.Status.Is(trace.StatusSuccess) {
			localsByPass[p] = append(localsByPass[p], i)
		}
	}
	vs = append(vs, x.checkStartOfInactive(d)...)
	masks := map[uint64]maskState{}
	producing := map[cs]bool{} // what records while unmasked
	type passView struct {
		pass  uint64
		enter int
		masks map[uint64]maskState
		got   map[cs]bool
	}
	var passes []passView
	for _, pe := range d.passEnter {
		p, _ := x.ev[pe].PassOf()
		for _, l := range localsByPass[p] {
			e := x.ev[l]
			m := masks[e.Context]
			switch e.Call {
			case trace.LocalStop:
				m.stopped, m.everStopped, m.stopAt = true, true, l
			case trace.LocalStart:
				m.stopped = false
			}
			masks[e.Context] = m
		}
		// Every pass from the first local call on is an instance: of LCX-3
		// (the mask holds, or persists) and, for the contexts masked with a
		// service that consults the override, of SVC-1.
		if len(masks) > 0 {
			x.examined("LCX-3")
			for ctx := range masks {
				if x.scopedServiceOf(ctx) {
					x.examined("SVC-1")
				}
			}
		}
		var got map[cs]bool // most passes of most loops have no records to note
		for _, i := range byPass[p] {
			e := x.ev[i]
			m := masks[e.Context]
			if got == nil {
				got = map[cs]bool{}
			}
			got[cs{e.Context, e.Service}] = true
			if !m.off() {
				producing[cs{e.Context, e.Service}] = true
				continue
			}
			rule, why := "LCX-3", fmt.Sprintf("context %d was stopped locally in an earlier pass and not started again", e.Context)
			if x.ev[m.stopAt].Pass != nil && *x.ev[m.stopAt].Pass == p {
				rule, why = "SVC-1", fmt.Sprintf("context %d was stopped locally in this pass", e.Context)
			}
			vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("pass %d delivered a %s record: %s", p, e.Service, why), m.stopAt, i))
		}
		var snapshot map[uint64]maskState // none until the first local call
		if len(masks) > 0 {
			snapshot = maps.Clone(masks)
		}
		passes = append(passes, passView{p, pe, snapshot, got})
	}
	// LCX-3 the other way round: an unmasked context keeps recording.
	if x.serviceConflictWarned() {
		return vs
	}
	lastGot := map[cs]uint64{}
	for _, pv := range passes {
		for k := range pv.got {
			lastGot[k] = max(lastGot[k], pv.pass)
		}
	}
	for _, pv := range passes {
		if len(producing) > 0 && len(passes) > 1 {
			x.examined("LCX-3")
		}
		for k := range producing {
			// A counter context the loop never toggled may rightly have
			// nothing to collect in a pass (pass i collects group i, and
			// there may be fewer groups than passes); one started again
			// after a local stop must collect, up to the last pass in
			// which it collected: past that its groups may have run out
			// (found by internal/specgen).
			if k.service == trace.CounterCollection && (!pv.masks[k.context].everStopped || pv.pass > lastGot[k]) {
				continue
			}
			if !pv.masks[k.context].off() && !pv.got[k] {
				vs = append(vs, x.violation("LCX-3", d.id, fmt.Sprintf("context %d is not masked in pass %d, yet delivered no %s record there (it does in other passes)", k.context, pv.pass, k.service), pv.enter))
				break
			}
		}
	}
	return vs
}

// SVC-1 (clarified 2026-11-30), LCX-7: a local start of a context that was
// not active when the loop began never makes it collect, whatever the call
// returned: trace services would not collect there without an override
// (SVC-1), and counters and SPM cannot be switched on locally (LCX-7).
func (x *index) checkStartOfInactive(d *dispatchView) []Violation {
	if len(d.configEnter) == 0 {
		return nil
	}
	var vs []Violation
	var byContext map[uint64]*passedRecords // built at the first such start
	lo, hi := x.writeWindow(d)
	for _, l := range d.locals {
		e := x.ev[l]
		p, ok := e.PassOf()
		if !ok || e.Call != trace.LocalStart || e.Op != trace.OpPass || e.Phase != trace.PhaseEnter {
			continue
		}
		if inactive, known := x.contextInactive(e.Context, lo, hi); !known || !inactive {
			continue
		}
		x.examined("SVC-1")
		if byContext == nil {
			byContext = x.scopedRecordsByContext(d)
		}
		i, q, found := byContext[e.Context].firstFrom(p)
		if !found {
			continue
		}
		r := x.ev[i]
		rule := "SVC-1"
		if r.Service == trace.CounterCollection || r.Service == trace.SPM {
			rule = "LCX-7"
		}
		vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("context %d was not active when the loop began, yet after a local start in pass %d it delivered a %s record in pass %d", e.Context, p, r.Service, q), l, i))
	}
	return vs
}

// passedRecords are one context's dispatch-scoped records of a dispatch
// that belong to a pass, in trace order, with the largest pass so far at
// each: the first record of pass p or later is then found by binary
// search, so a start in every pass of a long loop stays linear.
type passedRecords struct {
	at            []int
	pass, maxPass []uint64
}

func (x *index) scopedRecordsByContext(d *dispatchView) map[uint64]*passedRecords {
	out := map[uint64]*passedRecords{}
	for _, i := range d.records {
		r := x.ev[i]
		q, ok := x.recordPass(i)
		if !ok || !dispatchScoped(r.Service) {
			continue
		}
		c := out[r.Context]
		if c == nil {
			c = &passedRecords{}
			out[r.Context] = c
		}
		top := q
		if n := len(c.maxPass); n > 0 && c.maxPass[n-1] > top {
			top = c.maxPass[n-1]
		}
		c.at, c.pass, c.maxPass = append(c.at, i), append(c.pass, q), append(c.maxPass, top)
	}
	return out
}

// firstFrom is the first record, in trace order, of pass p or later.
func (c *passedRecords) firstFrom(p uint64) (at int, pass uint64, found bool) {
	if c == nil {
		return 0, 0, false
	}
	j := sort.Search(len(c.maxPass), func(j int) bool { return c.maxPass[j] >= p })
	if j == len(c.maxPass) {
		return 0, 0, false
	}
	return c.at[j], c.pass[j], true
}

func (x *index) serviceConflictWarned() bool {
	for _, i := range x.byType[trace.Warning] {
		if x.ev[i].Code == trace.WarnServiceConflict {
			return true
		}
	}
	return false
}

// LCX-4, LCX-6: a local stop never masks a dispatch outside its loop: not
// the thread's next dispatches, not another thread's concurrent one.
func (x *index) checkMaskScope() []Violation {
	type key struct {
		context uint64
		service trace.Service
		agent   uint64
	}
	// What contexts record when no local call touched them, per agent:
	// on plain runs, and in loops before their first local call.
	plain := map[key]bool{}
	x.eachDispatch(func(d *dispatchView) {
		touched := map[uint64]int{}
		for _, l := range d.locals {
			if _, seen := touched[x.ev[l].Context]; !seen && x.ev[l].Status.Is(trace.StatusSuccess) {
				touched[x.ev[l].Context] = l
			}
		}
		for _, i := range d.records {
			e := x.ev[i]
			if at, seen := touched[e.Context]; dispatchScoped(e.Service) && (!seen || i < at) {
				plain[key{e.Context, e.Service, d.agent}] = true
			}
		}
	})
	// Loops that stopped a context locally.
	type stopped struct {
		d       *dispatchView
		context uint64
		stop    int
	}
	var stops []stopped
	x.eachDispatch(func(d *dispatchView) {
		for _, l := range d.locals {
			if e := x.ev[l]; e.Call == trace.LocalStop && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && e.Status.Is(trace.StatusSuccess) {
				stops = append(stops, stopped{d, e.Context, l})
			}
		}
	})
	if len(stops) == 0 {
		return nil
	}
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if d.replayed() {
			return
		}
		// Where the plain run happened: its kernel, else (a black-box
		// trace) its first record or its CONFIG EXIT.
		k := firstOr(d.kernels, firstOr(d.records, firstOr(d.configExit, -1)))
		if k < 0 {
			return
		}
		lo, hi := x.writeWindow(d)
		have := map[key]bool{}
		for _, i := range d.records {
			e := x.ev[i]
			have[key{e.Context, e.Service, d.agent}] = true
		}
		for _, s := range stops {
			if s.d == d {
				continue
			}
			end := len(x.ev)
			if len(s.d.configExit) > 0 {
				end = s.d.configExit[0]
			}
			// LCX-4: after the loop on its thread; LCX-6: during it, on
			// another thread. Each such dispatch is an instance.
			var rule string
			switch {
			case s.d.thread == d.thread && k > end:
				rule = "LCX-4"
			case (s.d.thread != d.thread || x.byTool[k]) && k > s.stop && k < end:
				rule = "LCX-6" // another thread's, or the tool's own from the loop's callbacks
			default:
				continue
			}
			x.examined(rule)
			for want := range plain {
				if want.context != s.context || want.agent != d.agent || have[want] {
					continue
				}
				// Owed only when surely started as d's write was taken
				// (decision 18.1).
				if active, known := x.contextActive(want.context, lo, hi); known && !active {
					continue
				}
				if x.leftOutBeside(d, want.service) {
					continue // SVC-3 left it out of this submit, not a mask
				}
				if rule == "LCX-4" {
					vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("dispatch %d ran after dispatch %d's loop but got no %s record from context %d, which that loop had stopped locally", d.id, s.d.id, want.service, want.context), s.stop, k))
				} else {
					vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("dispatch %d on thread %d got no %s record from context %d while thread %d's loop had stopped it locally", d.id, d.thread, want.service, want.context, s.d.thread), s.stop, k))
				}
				return
			}
		}
	})
	return vs
}

// LCX-5: local calls never turn into a global start or stop: no
// start_context/stop_context happens on the loop's thread inside its
// window.
func (x *index) checkNoGlobalToggles() []Violation {
	byThread := map[uint64][]int{}
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if e.Op != "" {
			continue // the tool's own global call from a callback: it says so
		}
		if e.Call == trace.CallStartContext || e.Call == trace.CallStopContext {
			byThread[e.Thread] = append(byThread[e.Thread], i)
		}
	}
	if len(byThread) == 0 {
		return nil
	}
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if !d.replayed() || len(d.configEnter) == 0 {
			return
		}
		if len(d.locals) > 0 {
			x.examined("LCX-5")
		}
		from := d.configEnter[0]
		until := len(x.ev)
		switch {
		case len(d.configExit) > 0:
			until = d.configExit[0]
		case len(d.neverEnded) > 0:
			// The pass budget ended the loop (decision 6): no CONFIG
			// EXIT comes, and the window is closed.
			until = d.neverEnded[0]
		}
		list := byThread[d.thread]
		if j := sort.SearchInts(list, from); j < len(list) && list[j] < until {
			e := x.ev[list[j]]
			vs = append(vs, x.violation("LCX-5", d.id, fmt.Sprintf("global %s of context %d happened inside dispatch %d's replay window", e.Call, e.Context, d.id), from, list[j]))
		}
	})
	return vs
}

// scopedServiceOf reports whether context ctx configured a dispatch-scoped
// service (one that consults the local override, SVC-1).
func (x *index) scopedServiceOf(ctx uint64) bool {
	for _, i := range x.byType[trace.API] {
		e := x.ev[i]
		if e.Context != ctx || !e.Status.Is(trace.StatusSuccess) {
			continue
		}
		for svc, call := range configureCalls {
			if e.Call == call && dispatchScoped(svc) {
				return true
			}
		}
	}
	return false
}
