package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkLCX judges localized context control: where the calls are legal,
// what they return, and which records they mask, for how long, for whom.
func checkLCX(x *index) []Violation {
	var vs []Violation
	var scope map[scopeKey]bool
	if len(x.types[ekLocal]) > 0 {
		scope = x.unmaskedScope()
	}
	x.eachDispatch(func(d *dispatchView) {
		vs = append(vs, x.checkLocalStatuses(d)...)
		if d.replayed() {
			vs = append(vs, x.checkMasking(d, scope)...)
		}
	})
	vs = append(vs, x.checkMaskScope(scope)...)
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
		e := &x.ev[i]
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
	startAt     int  // position of the last successful start
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
func (x *index) checkMasking(d *dispatchView, scope map[scopeKey]bool) []Violation {
	var vs []Violation
	var localsByPass byPass[[]int] // empty, read as such, in the loops that make no local call
	byPass := x.positionsByPass(d)
	for _, i := range d.records {
		if p, ok := x.recordPass(i); ok && dispatchScoped(x.ev[i].Service) {
			byPass.set(p, x.pushPos(byPass.get(p), i))
		}
	}
	if len(d.locals) > 0 {
		localsByPass = x.positionsByPass(d)
	}
	for _, i := range d.locals {
		e := &x.ev[i]
		if p, ok := x.passOf(i); ok && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && e.Status.Is(trace.StatusSuccess) {
			localsByPass.set(p, x.pushPos(localsByPass.get(p), i))
		}
	}
	vs = append(vs, x.checkStartOfInactive(d)...)
	masks := map[uint64]maskState{}
	var producing csSet // what records while unmasked: a few pairs, in the order first seen
	passes := make([]passView, 0, len(d.passEnter))
	// Each pass's services are taken from one array in turn: a pass adds
	// at most one a record, and one array for the loop is one allocation,
	// not one a pass.
	arena := make([]cs, 0, len(d.records))
	for _, pe := range d.passEnter {
		p, _ := x.passOf(pe)
		for _, l := range localsByPass.get(p) {
			e := &x.ev[l]
			m := masks[e.Context]
			switch e.Call {
			case trace.LocalStop:
				m.stopped, m.everStopped, m.stopAt = true, true, l
			case trace.LocalStart:
				m.stopped, m.startAt = false, l
			}
			masks[e.Context] = m
		}
		// Every pass from the first local call on is an instance: of LCX-3
		// (the mask holds, or persists) and, for the contexts masked with a
		// service that consults the override, of SVC-1.
		if len(masks) > 0 {
			x.examinedAt(slotLCX3)
			for ctx := range masks {
				if x.scopedServiceOf(ctx) {
					x.examined("SVC-1")
				}
			}
		}
		got := csSet(arena[len(arena):len(arena):cap(arena)])
		for _, i := range byPass.get(p) {
			e := &x.ev[i]
			m := masks[e.Context]
			got.add(cs{e.Context, e.Service})
			if !m.off() {
				producing.add(cs{e.Context, e.Service})
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
		if len(got) <= cap(arena)-len(arena) {
			arena = arena[:len(arena)+len(got)] // got is in the array: the next pass's start after it
		}
		passes = append(passes, passView{p, pe, snapshot, got})
	}
	vs = append(vs, x.checkBroughtBack(d, scope, passes)...)
	// LCX-3 the other way round: an unmasked context keeps recording.
	if x.serviceConflictWarned() {
		return vs
	}
	lastGot := make([]uint64, len(producing)) // the last pass in which producing[j] recorded
	for _, pv := range passes {
		for j, k := range producing {
			if pv.got.has(k) {
				lastGot[j] = max(lastGot[j], pv.pass)
			}
		}
	}
	cut := x.cutOff(d)
	for _, pv := range passes {
		if cut && pv.pass >= uint64(len(d.passExit)) {
			// The process ended in another loop's failed restore while
			// this pass ran: its records were never owed (decision 17.19).
			continue
		}
		if len(producing) > 0 && len(passes) > 1 {
			x.examinedAt(slotLCX3)
		}
		for j, k := range producing {
			// A counter context the loop never toggled may rightly have
			// nothing to collect in a pass (pass i collects group i, and
			// there may be fewer groups than passes); one started again
			// after a local stop must collect, up to the last pass in
			// which it collected: past that its groups may have run out
			// (found by internal/specgen).
			if k.service == trace.CounterCollection && (!pv.masks[k.context].everStopped || pv.pass > lastGot[j]) {
				continue
			}
			if !pv.masks[k.context].off() && !pv.got.has(k) {
				vs = append(vs, x.violation("LCX-3", d.id, fmt.Sprintf("context %d is not masked in pass %d, yet delivered no %s record there (it does in other passes)", k.context, pv.pass, k.service), pv.enter))
				break
			}
		}
	}
	return vs
}

// passView is one pass of a loop as checkMasking reads it: the masks after
// its PASS ENTER (nil before the loop's first local call) and the
// dispatch-scoped services that recorded in it.
type passView struct {
	pass  uint64
	enter int
	masks map[uint64]maskState
	got   csSet
}

// csSet is a set of (context, service) pairs: a pass records a few, and a
// map per pass was a large part of what judging a long loop allocated.
type csSet []cs

func (s csSet) has(k cs) bool { return slices.Contains(s, k) }

func (s *csSet) add(k cs) {
	if !s.has(k) {
		*s = append(*s, k)
	}
}

// LCX-3, SVC-1: a context stopped locally and started again in the same
// loop collects again from the pass of the start on, whether or not the
// loop ever saw it record: it owes what it records with no override on the
// loop's agent (unmaskedScope). Every service that consults the override
// does so in every pass; dispatch counters collect group i in pass i, so
// they are owed a record only where the tool's split (pass_count's groups)
// or a later record of the loop shows there is a group to collect.
func (x *index) checkBroughtBack(d *dispatchView, scope map[scopeKey]bool, passes []passView) []Violation {
	if len(scope) == 0 || x.cutOff(d) {
		return nil
	}
	groups := -1 // passes the tool's split has groups for; -1 unknown
	var splitBy uint64
	if len(d.passCounts) > 0 {
		if e := &x.ev[d.passCounts[0]]; e.Groups != nil {
			groups, splitBy = len(e.Groups), e.Context
		}
	}
	exited := map[uint64]bool{}
	for _, i := range d.passExit {
		if p, ok := x.passOf(i); ok {
			exited[p] = true
		}
	}
	var vs []Violation
	for _, pv := range passes {
		if !exited[pv.pass] {
			continue // its records may not have come yet
		}
		for _, ctx := range slices.Sorted(maps.Keys(pv.masks)) {
			m := pv.masks[ctx]
			if !m.everStopped || m.stopped {
				continue
			}
			for _, svc := range []trace.Service{trace.KernelTrace, trace.ThreadTrace, trace.SPM, trace.CounterCollection} {
				if !scope[scopeKey{ctx, svc, d.agent}] {
					continue
				}
				if svc == trace.CounterCollection && !(splitBy == ctx && int(pv.pass) < groups) {
					continue // group pv.pass may not exist (checkMasking's lastGot judges the rest)
				}
				rule, why := "LCX-3", fmt.Sprintf("context %d was started again locally in an earlier pass, after a local stop", ctx)
				if p, ok := x.passOf(m.startAt); ok && p == pv.pass {
					rule, why = "SVC-1", fmt.Sprintf("context %d was started locally in this pass, after a local stop", ctx)
				}
				x.examined(rule)
				if pv.got.has(cs{ctx, svc}) || x.leftOutInPass(d, pv, svc) {
					continue
				}
				vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("pass %d delivered no %s record: %s, and it records %s on this agent without an override", pv.pass, svc, why, svc), m.startAt, pv.enter))
				return vs
			}
		}
	}
	return vs
}

// leftOutInPass is leftOutIn for one pass of a loop, read from what the
// pass recorded.
func (x *index) leftOutInPass(d *dispatchView, pv passView, service trace.Service) bool {
	if x.header.Reports(trace.SourceSDK) && !x.serviceConflictWarned() {
		return false
	}
	switch service {
	case trace.SPM:
		return pv.got != nil && x.anyService(pv.got, trace.ThreadTrace)
	case trace.CounterCollection:
		return pv.got != nil && x.anyService(pv.got, trace.CounterCollection)
	}
	return false
}

func (x *index) anyService(got csSet, svc trace.Service) bool {
	for _, k := range got {
		if k.service == svc {
			return true
		}
	}
	return false
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
		e := &x.ev[l]
		p, ok := x.passOf(l)
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
		r := &x.ev[i]
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
		r := &x.ev[i]
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
	for _, i := range x.types[ekWarning] {
		if x.ev[i].Code == trace.WarnServiceConflict {
			return true
		}
	}
	return false
}

// scopeKey is one context's dispatch-scoped service on one agent.
type scopeKey struct {
	context uint64
	service trace.Service
	agent   uint64
}

// unmaskedScope is what contexts record, per agent, where no local call of
// the dispatch's own loop had touched them: on plain runs, and in loops
// before their first local call on the context. It is the baseline that
// every other dispatch's submits are held to (LCX-3, LCX-4, LCX-6).
func (x *index) unmaskedScope() map[scopeKey]bool {
	scope := map[scopeKey]bool{}
	x.eachDispatch(func(d *dispatchView) {
		var touched map[uint64]int
		for _, l := range d.locals {
			if e := &x.ev[l]; e.Status.Is(trace.StatusSuccess) {
				if touched == nil {
					touched = map[uint64]int{}
				}
				if _, seen := touched[e.Context]; !seen {
					touched[e.Context] = l
				}
			}
		}
		for _, i := range d.records {
			e := &x.ev[i]
			if at, seen := touched[e.Context]; dispatchScoped(e.Service) && (!seen || i < at) {
				scope[scopeKey{e.Context, e.Service, d.agent}] = true
			}
		}
	})
	return scope
}

// submitView is one run of a dispatch's kernel with services of its own:
// its plain run, or one pass of its loop.
type submitView struct {
	pass    int64 // -1: the plain run
	at      int   // where it began: its PASS ENTER, else its kernel (or first record, or CONFIG EXIT)
	records []int // its dispatch-scoped records
	// own lists the contexts the dispatch's own loop had called local
	// start or stop on by then: their state in it is the loop's business
	// (LCX-3, SVC-1), not another loop's.
	own map[uint64]bool
}

// submitsOf lists d's submits whose services are done: the plain run that
// ran, or each pass that reached its PASS EXIT (records come inside the
// pass, CB-4).
func (x *index) submitsOf(d *dispatchView) []submitView {
	if !d.replayed() {
		k := firstOr(d.kernels, firstOr(d.records, firstOr(d.configExit, -1)))
		if k < 0 {
			return nil
		}
		var recs []int
		for _, i := range d.records {
			if dispatchScoped(x.ev[i].Service) {
				recs = append(recs, i)
			}
		}
		return []submitView{{pass: -1, at: k, records: recs}}
	}
	exited := newByPass[bool](x, d)
	for _, i := range d.passExit {
		if p, ok := x.passOf(i); ok {
			exited.set(p, true)
		}
	}
	byPass := x.positionsByPass(d)
	for _, i := range d.records {
		if p, ok := x.recordPass(i); ok && dispatchScoped(x.ev[i].Service) {
			byPass.set(p, x.pushPos(byPass.get(p), i))
		}
	}
	var out []submitView
	var own map[uint64]bool
	li := 0
	for _, pe := range d.passEnter {
		p, ok := x.passOf(pe)
		if !ok {
			continue
		}
		// The loop's own calls up to this pass (they come in PASS ENTER,
		// in trace order with the passes).
		for ; li < len(d.locals) && d.locals[li] < x.exitOf(d, p); li++ {
			if e := &x.ev[d.locals[li]]; e.Status.Is(trace.StatusSuccess) {
				if own == nil {
					own = map[uint64]bool{}
				}
				own[e.Context] = true
			}
		}
		if !exited.get(p) {
			continue
		}
		out = append(out, submitView{pass: int64(p), at: pe, records: byPass.get(p), own: maps.Clone(own)})
	}
	return out
}

// localStop is one successful local stop in PASS ENTER, with its loop.
type localStop struct {
	loop    *dispatchView
	context uint64
	at      int // the local event
	end     int // where the loop's override ends: CONFIG EXIT, the never-ended report, or the trace's end
}

// loopEnd is where d's loop, and so its local override, ended (LCX-4).
func (x *index) loopEnd(d *dispatchView) int {
	switch {
	case len(d.configExit) > 0:
		return d.configExit[0]
	case len(d.neverEnded) > 0:
		return d.neverEnded[0]
	}
	return len(x.ev)
}

// stopIntervals are one thread's local stops in trace order, with the
// latest end of the loops of those so far: a position lies inside some
// earlier stop's loop when the running maximum at the last stop before it
// reaches past it.
type stopIntervals struct {
	at, maxEnd []int
}

func (s *stopIntervals) openAt(pos int) bool {
	j := sort.SearchInts(s.at, pos) - 1
	return j >= 0 && s.maxEnd[j] > pos
}

// LCX-4, LCX-6: a loop's local override is its own. It never masks a
// dispatch outside its loop: not a later dispatch on its thread, nor a later
// loop there (LCX-4), not another thread's dispatch or loop running at the
// same time, nor the tool's own dispatch written from the loop's callbacks
// (LCX-6). Every submit of every dispatch is held to what contexts record
// with no override (unmaskedScope): its plain run, and each pass of its own
// loop for the contexts that loop never toggled.
func (x *index) checkMaskScope(scope map[scopeKey]bool) []Violation {
	var stops []localStop
	byContext := map[uint64][]localStop{}
	x.eachDispatch(func(d *dispatchView) {
		for _, l := range d.locals {
			if e := &x.ev[l]; e.Call == trace.LocalStop && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && e.Status.Is(trace.StatusSuccess) {
				s := localStop{loop: d, context: e.Context, at: l, end: x.loopEnd(d)}
				stops = append(stops, s)
				byContext[e.Context] = append(byContext[e.Context], s)
			}
		}
	})
	if len(stops) == 0 {
		return nil
	}
	sort.Slice(stops, func(i, j int) bool { return stops[i].at < stops[j].at })
	for _, list := range byContext {
		sort.Slice(list, func(i, j int) bool { return list[i].at < list[j].at })
	}
	byThread := map[uint64]*stopIntervals{}
	firstEnd := len(x.ev) // the earliest end of a loop that stopped something
	for _, s := range stops {
		iv := byThread[s.loop.thread]
		if iv == nil {
			iv = &stopIntervals{}
			byThread[s.loop.thread] = iv
		}
		top := s.end
		if n := len(iv.maxEnd); n > 0 {
			top = max(top, iv.maxEnd[n-1])
		}
		iv.at, iv.maxEnd = append(iv.at, s.at), append(iv.maxEnd, top)
		firstEnd = min(firstEnd, s.end)
	}
	keysOf := map[uint64][]scopeKey{} // by agent, in a fixed order
	for k := range scope {
		keysOf[k.agent] = append(keysOf[k.agent], k)
	}
	for _, ks := range keysOf {
		sort.Slice(ks, func(i, j int) bool {
			if ks[i].context != ks[j].context {
				return ks[i].context < ks[j].context
			}
			return ks[i].service < ks[j].service
		})
	}
	var vs []Violation
	judge := func(d *dispatchView, subs []submitView, window func() (int, int), what string) {
		if x.diedBeforeRun(d) {
			return // the process ended before it ran (MEM-5): no record is owed
		}
		var lo, hi int
		windowKnown := false
		for _, sb := range subs {
			// The instances: a loop that stopped something ended before
			// this submit (LCX-4); one was running around it on another
			// thread, or this submit is the tool's own inside it (LCX-6).
			after := firstEnd < sb.at
			during := false
			for th, iv := range byThread {
				if th != d.thread && iv.openAt(sb.at) {
					during = true
					break
				}
			}
			if w := x.window(sb.at); w.open && w.dispatch != d.id {
				during = true // written from inside another dispatch's pass
			}
			if iv := byThread[d.thread]; x.byTool[sb.at] && iv != nil && iv.openAt(sb.at) {
				during = true // the tool's own loop, nested in one with a stop (MEM-6, clarified)
			}
			if !after && !during {
				continue
			}
			if after {
				x.examined("LCX-4")
			}
			if during {
				x.examined("LCX-6")
			}
			var have map[cs]bool
			for _, k := range keysOf[d.agent] {
				if sb.own[k.context] || len(byContext[k.context]) == 0 {
					continue
				}
				if k.service == trace.CounterCollection && sb.pass > 0 {
					continue // pass i collects group i, which may not exist
				}
				if have == nil {
					have = map[cs]bool{}
					for _, i := range sb.records {
						have[cs{x.ev[i].Context, x.ev[i].Service}] = true
					}
				}
				if have[cs{k.context, k.service}] {
					continue
				}
				s, rule, found := x.maskingStop(d, sb, byContext[k.context])
				if !found {
					continue
				}
				// Owed only when surely started as d's write was taken
				// (decision 18.1), and not left out beside a service it
				// conflicts with (SVC-3).
				if !windowKnown {
					lo, hi = window()
					windowKnown = true
				}
				if active, known := x.contextActive(k.context, lo, hi); known && !active {
					continue
				}
				if x.leftOutIn(sb.records, d, k.service) {
					continue
				}
				what := what
				if sb.pass >= 0 {
					what = fmt.Sprintf("pass %d of %s", sb.pass, what)
				}
				var msg string
				switch {
				case rule == "LCX-4":
					msg = fmt.Sprintf("%s on thread %d ran after dispatch %d's loop (thread %d) had ended, but got no %s record from context %d, which that loop had stopped locally", what, d.thread, s.loop.id, s.loop.thread, k.service, k.context)
				case s.loop.thread == d.thread:
					msg = fmt.Sprintf("%s, written by the tool from inside dispatch %d's loop, got no %s record from context %d, which that loop had stopped locally: the override is the loop's own", what, s.loop.id, k.service, k.context)
				default:
					msg = fmt.Sprintf("%s on thread %d got no %s record from context %d while thread %d's loop (dispatch %d) had stopped it locally", what, d.thread, k.service, k.context, s.loop.thread, s.loop.id)
				}
				id := d.id
				if id == 0 {
					id = s.loop.id
				}
				vs = append(vs, x.violation(rule, id, msg, s.at, sb.at))
				return // one per dispatch
			}
		}
	}
	x.eachDispatch(func(d *dispatchView) {
		if x.cutOff(d) {
			return
		}
		subs := x.submitsOf(d)
		if !d.replayed() && len(subs) == 1 && x.byTool[subs[0].at] {
			return // the tool's own plain run: judged by its bracket below
		}
		judge(d, subs, func() (int, int) { return x.writeWindow(d) }, fmt.Sprintf("dispatch %d", d.id))
	})
	// The tool's own dispatches written from callbacks, by the events
	// between tool_dispatch and tool_complete: what a trace shows of them
	// even when it carries no kernel and no id of theirs (black-box).
	for _, b := range x.toolBrackets() {
		d := &dispatchView{id: b.dispatch, thread: x.ev[b.at].Thread, agent: x.ev[b.at].Agent}
		judge(d, []submitView{{pass: -1, at: b.at, records: b.records}}, func() (int, int) { return b.at, b.end },
			fmt.Sprintf("the tool's dispatch %s", x.ev[b.at].Label))
	}
	return vs
}

// toolBracket is one dispatch the tool wrote from a callback and saw
// complete, run once: its tool_dispatch, its tool_complete, and the
// dispatch-scoped records between them on its thread.
type toolBracket struct {
	at, end  int
	dispatch uint64 // its own id, when some event between names it; else 0
	records  []int
}

// toolBrackets lists the tool's own dispatches that ran once. One that
// opened a replay window of its own (a PASS callback inside its bracket)
// is a loop, judged pass by pass with the other dispatches.
func (x *index) toolBrackets() []toolBracket {
	var out []toolBracket
	for _, t := range x.types[ekToolDispatch] {
		th := x.ev[t].Thread
		pos := x.byThread[th]
		b := toolBracket{at: t, end: -1}
		looped := false
		for j := sort.SearchInts(pos, t+1); j < len(pos); j++ {
			i := pos[j]
			e := &x.ev[i]
			if e.Type == trace.ToolComplete && e.Label == x.ev[t].Label {
				b.end = i
				break
			}
			if !x.byTool[i] {
				continue
			}
			switch {
			case e.Type == trace.Callback && e.Op == trace.OpPass:
				looped = true
			case e.Type == trace.Record && dispatchScoped(e.Service):
				b.records = append(b.records, i)
				b.dispatch = e.Dispatch
			case (e.Type == trace.Kernel || e.Type == trace.DispatchID) && e.Dispatch != 0 && b.dispatch == 0:
				b.dispatch = e.Dispatch
			}
		}
		if b.end >= 0 && !looped {
			out = append(out, b)
		}
	}
	return out
}

// cs is one context's service.
type cs struct {
	context uint64
	service trace.Service
}

// maskingStop finds the local stop of another loop that could have masked
// submit sb of d, and the rule it would break: the latest one whose loop
// ended before sb (LCX-4), else one whose loop was running around sb on
// another thread, or from whose window the tool wrote d (LCX-6).
func (x *index) maskingStop(d *dispatchView, sb submitView, list []localStop) (localStop, string, bool) {
	var best localStop
	rule := ""
	w := x.window(sb.at)
	for _, s := range list {
		if s.at >= sb.at {
			break
		}
		if s.loop == d {
			continue
		}
		switch {
		case s.end < sb.at:
			best, rule = s, "LCX-4"
		case rule != "LCX-4" && (s.loop.thread != d.thread || (w.open && w.dispatch == s.loop.id) || x.byTool[sb.at]):
			// Another thread's loop around it; or, on the loop's own thread
			// and inside its window, the tool's dispatch written from it
			// (a plain run, or every pass of a window nested in it).
			best, rule = s, "LCX-6"
		}
	}
	return best, rule, rule != ""
}

// leftOutIn reports whether a missing record of service in a submit is
// explained by a conflict (SVC-3, decisions 1 and 17.9), as leftOutBeside
// does for a plain run, looking at that submit's records only.
func (x *index) leftOutIn(records []int, d *dispatchView, service trace.Service) bool {
	if x.header.Reports(trace.SourceSDK) && !x.serviceConflictWarned() {
		return false
	}
	var kept trace.Service
	switch service {
	case trace.SPM:
		kept = trace.ThreadTrace
	case trace.CounterCollection:
		kept = trace.CounterCollection
	default:
		return false
	}
	for _, i := range records {
		if x.ev[i].Service == kept {
			return true
		}
	}
	return false
}

// LCX-5: local calls never turn into a global start or stop: no
// start_context/stop_context happens on the loop's thread inside its
// window.
func (x *index) checkNoGlobalToggles() []Violation {
	byThread := map[uint64][]int{}
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
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
			e := &x.ev[list[j]]
			vs = append(vs, x.violation("LCX-5", d.id, fmt.Sprintf("global %s of context %d happened inside dispatch %d's replay window", e.Call, e.Context, d.id), from, list[j]))
		}
	})
	return vs
}

// scopedServiceOf reports whether context ctx configured a dispatch-scoped
// service (one that consults the local override, SVC-1).
func (x *index) scopedServiceOf(ctx uint64) bool {
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
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
