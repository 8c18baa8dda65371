package check

import (
	"fmt"

	"github.com/replayspec/replayspec/trace"
)

// checkUD judges the one user-data value per replay sequence. What the tool
// wrote comes from its own record (callback_return); what the SDK handed it
// comes from the callbacks and calls that received it.
func checkUD(x *index) []Violation {
	var vs []Violation
	sequenceValue := map[uint64]int{} // non-zero CONFIG values -> position that set them
	x.eachDispatch(func(d *dispatchView) {
		v, at, ok := x.sequenceValue(d)
		if !ok {
			return
		}
		x.examined("UD-1")
		// UD-1: a fresh sequence does not start with another's value.
		if len(d.configEnter) > 0 {
			ce := &x.ev[d.configEnter[0]]
			if ce.UserData != nil && *ce.UserData != 0 {
				if prev, seen := sequenceValue[*ce.UserData]; seen {
					vs = append(vs, x.violation("UD-1", d.id, fmt.Sprintf("CONFIG ENTER of dispatch %d received user data %d, the value of an earlier sequence", d.id, *ce.UserData), prev, d.configEnter[0]))
				}
			}
		}
		if v != 0 {
			if _, seen := sequenceValue[v]; !seen {
				sequenceValue[v] = at
			}
		}
		vs = append(vs, x.checkSequenceValue(d, v, at)...)
	})
	return vs
}

// sequenceValue is what the tool wrote at CONFIG ENTER: from its own
// record when the trace has it, else as the SDK handed it back
// (replay_pass_count's user data, else the first PASS ENTER's).
func (x *index) sequenceValue(d *dispatchView) (v uint64, at int, ok bool) {
	if ret, has := x.returnOf(d, trace.OpConfig, trace.PhaseEnter); has && x.ev[ret].UserData != nil {
		return *x.ev[ret].UserData, ret, true
	}
	for _, i := range x.concat(d.passCounts, d.passEnter) {
		if u := x.ev[i].UserData; u != nil {
			return *u, i, true
		}
	}
	return 0, 0, false
}

// left is the user data the tool left when it returned from pass p's
// callback of phase, if the trace records it.
func (x *index) left(d *dispatchView, phase trace.Phase, p uint64) (uint64, int, bool) {
	if ret, ok := x.returnOfPass(d, phase, p); ok && x.ev[ret].UserData != nil {
		return *x.ev[ret].UserData, ret, true
	}
	return 0, 0, false
}

func (x *index) checkSequenceValue(d *dispatchView, v uint64, at int) []Violation {
	var vs []Violation
	for _, i := range d.passCounts {
		if u := x.ev[i].UserData; u != nil && *u != v {
			vs = append(vs, x.violation("UD-1", d.id, fmt.Sprintf("replay_pass_count got user data %d, the tool wrote %d in CONFIG ENTER", *u, v), at, i))
		}
	}
	if len(d.passEnter) > 0 {
		x.examined("UD-2")
	}
	// What each pass's EXIT saw, and what the tool left when it returned.
	type seenValue struct {
		v    uint64
		seen bool
	}
	exitValue := newByPass[seenValue](x, d)
	for _, i := range d.passExit {
		e := &x.ev[i]
		p, ok := x.passOf(i)
		if !ok || e.UserData == nil {
			continue
		}
		exitValue.set(p, seenValue{*e.UserData, true})
		// UD-2: a write made in PASS ENTER is seen by the same pass's EXIT.
		if w, ret, wrote := x.left(d, trace.PhaseEnter, p); wrote && w != *e.UserData {
			vs = append(vs, x.violation("UD-2", d.id, fmt.Sprintf("the tool left user data %d in PASS ENTER of pass %d, but that pass's EXIT received %d", w, p, *e.UserData), ret, i))
		}
	}
	for _, i := range d.passEnter {
		e := &x.ev[i]
		if e.UserData == nil || *e.UserData == v {
			continue
		}
		p, _ := x.passOf(i)
		// UD-2 when it is what the previous pass wrote; UD-1 otherwise.
		pv := exitValue.get(p - 1)
		prev, ok := pv.v, pv.seen
		if w, _, wrote := x.left(d, trace.PhaseExit, p-1); wrote {
			prev, ok = w, true
		}
		if p > 0 && ok && prev == *e.UserData {
			vs = append(vs, x.violation("UD-2", d.id, fmt.Sprintf("PASS ENTER of pass %d saw user data %d written in pass %d, not the CONFIG value %d", p, *e.UserData, p-1, v), at, i))
			continue
		}
		vs = append(vs, x.violation("UD-1", d.id, fmt.Sprintf("PASS ENTER of pass %d saw user data %d, the sequence holds %d", p, *e.UserData, v), at, i))
	}
	// UD-2: continue sees what its own pass left: what the tool left in
	// the pass's EXIT, else what that EXIT saw.
	for _, i := range d.continues {
		e := &x.ev[i]
		p, ok := x.passOf(i)
		ev := exitValue.get(p)
		want, seen := ev.v, ev.seen
		ref := x.exitOf(d, p)
		if w, ret, wrote := x.left(d, trace.PhaseExit, p); wrote {
			want, seen, ref = w, true, ret
		}
		if !ok || !seen || e.UserData == nil || *e.UserData == want {
			continue
		}
		vs = append(vs, x.violation("UD-2", d.id, fmt.Sprintf("replay_continue after pass %d got user data %d; the pass left %d", p, *e.UserData, want), ref, i))
	}
	return vs
}

// exitOf is the position of the PASS EXIT of pass p (or of d's first EXIT).
func (x *index) exitOf(d *dispatchView, p uint64) int {
	if d.exitByPass == nil {
		b := newByPass[int](x, d)
		for _, i := range d.passExit {
			if q, ok := x.passOf(i); ok && b.get(q) == 0 {
				b.set(q, i+1)
			}
		}
		d.exitByPass = &b
	}
	if i := d.exitByPass.get(p); i > 0 {
		return i - 1
	}
	if len(d.passExit) > 0 {
		return d.passExit[0]
	}
	return 0
}
