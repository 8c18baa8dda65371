package check

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/replayspec/replayspec/trace"
)

// checkCB judges callback order and threading.
func checkCB(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		vs = append(vs, x.checkConfigBrackets(d)...)
		vs = append(vs, x.checkPassBrackets(d)...)
		vs = append(vs, x.checkPassCountCall(d)...)
		vs = append(vs, x.checkSameThread(d)...)
	})
	vs = append(vs, x.checkPublishedPass()...)
	return vs
}

// CB-1: one CONFIG ENTER, one CONFIG EXIT after it, every PASS between
// them, and the plain run of a dispatch not replayed after the EXIT.
func (x *index) checkConfigBrackets(d *dispatchView) []Violation {
	if len(d.configEnter) == 0 && len(d.configExit) == 0 {
		return nil // no candidate; ACT-1 judges stray PASS callbacks
	}
	x.examined("CB-1")
	var vs []Violation
	if len(d.configEnter) != 1 {
		vs = append(vs, x.violation("CB-1", d.id, fmt.Sprintf("dispatch %d has %d CONFIG ENTER callbacks", d.id, len(d.configEnter)), x.concat(d.configEnter, d.configExit)...))
	}
	switch {
	case len(d.configExit) == 0 && (len(d.neverEnded) > 0 || x.cutOff(d) || x.openLoop(d)):
		// The harness stopped a never-ending loop (CMP-4), or a failed
		// restore ended the process (MEM-5): no EXIT is due.
	case len(d.configExit) != 1:
		vs = append(vs, x.violation("CB-1", d.id, fmt.Sprintf("dispatch %d has %d CONFIG EXIT callbacks", d.id, len(d.configExit)), x.concat(d.configEnter, d.configExit)...))
	}
	if len(vs) > 0 || len(d.configExit) == 0 {
		return vs
	}
	in, out := d.configEnter[0], d.configExit[0]
	if out < in {
		return []Violation{x.violation("CB-1", d.id, fmt.Sprintf("dispatch %d: CONFIG EXIT came before CONFIG ENTER", d.id), in, out)}
	}
	for _, list := range [][]int{d.passEnter, d.passExit} {
		for _, i := range list {
			if i < in || i > out {
				vs = append(vs, x.violation("CB-1", d.id, fmt.Sprintf("PASS %s of pass %s lies outside the CONFIG window of dispatch %d", x.ev[i].Phase, passText(&x.ev[i]), d.id), in, i, out))
			}
		}
	}
	if !d.replayed() && !x.hiddenLoop(d) {
		for _, k := range d.kernels {
			if k < out {
				vs = append(vs, x.violation("CB-1", d.id, fmt.Sprintf("dispatch %d is not replayed, yet its kernel ran before CONFIG EXIT", d.id), in, k, out))
				break
			}
		}
	}
	return vs
}

// CB-2: each pass is an ENTER followed by its EXIT, never overlapping the
// next. A pass left without its EXIT breaks CONT-4 as well.
func (x *index) checkPassBrackets(d *dispatchView) []Violation {
	if len(d.passEnter)+len(d.passExit) > 0 {
		x.examined("CB-2")
	}
	var vs []Violation
	open := -1
	// The ENTERs and EXITs merged in trace order (mergeSorted, without
	// the list); the passes compared as numbers, as passText shows them.
	for a, b := 0, 0; a < len(d.passEnter) || b < len(d.passExit); {
		var i int
		if b >= len(d.passExit) || a < len(d.passEnter) && d.passEnter[a] < d.passExit[b] {
			i, a = d.passEnter[a], a+1
		} else {
			i, b = d.passExit[b], b+1
		}
		switch x.opPhaseAt(i) {
		case cbPassEnter:
			if open >= 0 {
				vs = append(vs, x.violation("CB-2", d.id, fmt.Sprintf("PASS ENTER of pass %s before pass %s had its EXIT", passText(&x.ev[i]), passText(&x.ev[open])), open, i))
			}
			open = i
		case cbPassExit:
			switch {
			case open < 0:
				vs = append(vs, x.violation("CB-2", d.id, fmt.Sprintf("PASS EXIT of pass %s without a PASS ENTER", passText(&x.ev[i])), i))
			case !x.samePass(i, open):
				vs = append(vs, x.violation("CB-2", d.id, fmt.Sprintf("PASS EXIT names pass %s but pass %s is open", passText(&x.ev[i]), passText(&x.ev[open])), open, i))
			}
			open = -1
		}
	}
	if open >= 0 && !x.cutOff(d) { // the process may end in another loop's restore mid-pass
		vs = append(vs, x.violation("CB-2", d.id, fmt.Sprintf("pass %s had a PASS ENTER and never its EXIT", passText(&x.ev[open])), open))
	}
	return vs
}

// CB-3: replay_pass_count is called at most once, after CONFIG ENTER and
// before the first pass and CONFIG EXIT.
func (x *index) checkPassCountCall(d *dispatchView) []Violation {
	if ret, ok := x.returnOf(d, trace.OpConfig, trace.PhaseEnter); ok {
		// The tool's own record says whether it installed the callback:
		// installed means called, once, after CONFIG ENTER returned.
		x.examined("CB-3")
		installed := slices.Contains(x.ev[ret].Payload, trace.MemberReplayPassCount)
		switch {
		case installed && len(d.passCounts) == 0 && !x.diedBeforeRun(d):
			// (Unless a failed restore on another thread ended the process
			// first, MEM-5.)
			return []Violation{x.violation("CB-3", d.id, fmt.Sprintf("the tool installed replay_pass_count in CONFIG ENTER of dispatch %d, but the SDK never called it", d.id), ret)}
		case !installed && len(d.passCounts) > 0:
			return []Violation{x.violation("CB-3", d.id, fmt.Sprintf("the SDK called replay_pass_count for dispatch %d, which the tool never installed", d.id), ret, d.passCounts[0])}
		case len(d.passCounts) > 0 && d.passCounts[0] < ret:
			return []Violation{x.violation("CB-3", d.id, "replay_pass_count was called before CONFIG ENTER returned", d.passCounts[0], ret)}
		}
	}
	if len(d.passCounts) == 0 {
		return nil
	}
	x.examined("CB-3")
	if len(d.passCounts) > 1 {
		return []Violation{x.violation("CB-3", d.id, fmt.Sprintf("replay_pass_count was called %d times for dispatch %d", len(d.passCounts), d.id), d.passCounts...)}
	}
	pc := d.passCounts[0]
	if len(d.configEnter) > 0 && pc < d.configEnter[0] {
		return []Violation{x.violation("CB-3", d.id, "replay_pass_count was called before CONFIG ENTER", pc, d.configEnter[0])}
	}
	if len(d.passEnter) > 0 && pc > d.passEnter[0] {
		return []Violation{x.violation("CB-3", d.id, "replay_pass_count was called after the first PASS ENTER", d.passEnter[0], pc)}
	}
	if len(d.configExit) > 0 && pc > d.configExit[0] {
		return []Violation{x.violation("CB-3", d.id, "replay_pass_count was called after CONFIG EXIT", d.configExit[0], pc)}
	}
	return nil
}

// agentWide services collect for the whole agent (SVC-2); their records
// need not arrive inside the pass on the submitting thread.
func agentWide(service trace.Service) bool {
	return service == trace.PCSampling || service == trace.DeviceCounting
}

// CB-4: the loop runs on the submitting thread, and the work of a pass
// (its kernel, its dispatch-scoped records) happens inside that pass.
func (x *index) checkSameThread(d *dispatchView) []Violation {
	if len(d.configEnter) == 0 {
		return nil
	}
	var vs []Violation
	cfg := d.configEnter[0]
	x.examined("CB-4")
	for _, list := range [][]int{d.passEnter, d.passExit, d.passCounts, d.continues, d.locals} {
		for _, i := range list {
			if x.col[i].thread != d.thread {
				vs = append(vs, x.violation("CB-4", d.id, fmt.Sprintf("%s for dispatch %d ran on thread %d, its CONFIG on thread %d", kindText(&x.ev[i]), d.id, x.ev[i].Thread, d.thread), cfg, i))
			}
		}
	}
	if !d.replayed() {
		return vs
	}
	for _, list := range [][]int{d.records, d.kernels} {
		for _, i := range list {
			if x.col[i].kind == ekRecord && agentWide(x.ev[i].Service) {
				continue
			}
			if w := x.window(i); !w.open || w.dispatch != d.id || x.col[i].thread != d.thread {
				e := &x.ev[i]
				vs = append(vs, x.violation("CB-4", d.id, fmt.Sprintf("%s of replayed dispatch %d arrived outside its passes (thread %d)", kindText(e), d.id, e.Thread), cfg, i))
			}
		}
	}
	return vs
}

// CB-4: a pass index a record carries is the pass open on its thread; a
// record outside every pass carries none (no stale value).
func (x *index) checkPublishedPass() []Violation {
	var vs []Violation
	for _, i := range x.types[ekRecord] {
		e := &x.ev[i]
		p, ok := x.passOf(i)
		if !ok {
			continue
		}
		x.examinedAt(slotCB4)
		w := x.window(i)
		switch {
		case !w.open:
			vs = append(vs, x.violation("CB-4", e.Dispatch, fmt.Sprintf("a %s record of dispatch %d carries pass %d but no pass is open on thread %d (stale pass)", e.Service, e.Dispatch, p, e.Thread), i))
		case w.dispatch != e.Dispatch:
			vs = append(vs, x.violation("CB-4", e.Dispatch, fmt.Sprintf("a %s record of dispatch %d carries pass %d published by dispatch %d's pass", e.Service, e.Dispatch, p, w.dispatch), w.enter, i))
		case w.pass != p:
			vs = append(vs, x.violation("CB-4", e.Dispatch, fmt.Sprintf("a %s record carries pass %d inside pass %d", e.Service, p, w.pass), w.enter, i))
		}
	}
	return vs
}

// samePass: events i and j name the same pass, or neither names one (as
// their passText reads alike).
func (x *index) samePass(i, j int) bool {
	p, ok := x.passOf(i)
	q, okq := x.passOf(j)
	return ok == okq && (!ok || p == q)
}

func passText(e *trace.Event) string {
	if p, ok := e.PassOf(); ok {
		return strconv.FormatUint(p, 10)
	}
	return "?"
}

func kindText(e *trace.Event) string {
	switch e.Type {
	case trace.Callback:
		return string(e.Op) + " " + string(e.Phase)
	case trace.Record:
		return "a " + string(e.Service) + " record"
	case trace.Kernel:
		return "a kernel"
	}
	return string(e.Type)
}

// concat joins position lists into a new slice.
func (x *index) concat(lists ...[]int) []int {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	out := x.takeInts(n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// mergeSorted merges two ascending position lists.
func (x *index) mergeSorted(a, b []int) []int {
	out := x.takeInts(len(a) + len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j >= len(b) || (i < len(a) && a[i] < b[j]) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}
