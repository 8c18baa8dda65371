package check

import "fmt"

// checkUD judges the one user-data value per replay sequence.
func checkUD(x *index) []Violation {
	var vs []Violation
	sequenceValue := map[uint64]int{} // non-zero CONFIG values -> position that set them
	x.eachDispatch(func(d *dispatchView) {
		v, at, ok := x.sequenceValue(d)
		if !ok {
			return
		}
		// UD-1: a fresh sequence does not start with another's value.
		if len(d.configEnter) > 0 {
			ce := x.ev[d.configEnter[0]]
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

// sequenceValue is what the tool wrote at CONFIG ENTER, as the SDK handed
// it back: replay_pass_count's user data, else the first PASS ENTER's.
func (x *index) sequenceValue(d *dispatchView) (v uint64, at int, ok bool) {
	for _, i := range concat(d.passCounts, d.passEnter) {
		if u := x.ev[i].UserData; u != nil {
			return *u, i, true
		}
	}
	return 0, 0, false
}

func (x *index) checkSequenceValue(d *dispatchView, v uint64, at int) []Violation {
	var vs []Violation
	for _, i := range d.passCounts {
		if u := x.ev[i].UserData; u != nil && *u != v {
			vs = append(vs, x.violation("UD-1", d.id, fmt.Sprintf("replay_pass_count got user data %d, the sequence holds %d", *u, v), at, i))
		}
	}
	exitValue := map[uint64]uint64{} // pass -> user data its EXIT saw
	for _, i := range d.passExit {
		e := x.ev[i]
		if p, ok := e.PassOf(); ok && e.UserData != nil {
			exitValue[p] = *e.UserData
		}
	}
	for _, i := range d.passEnter {
		e := x.ev[i]
		if e.UserData == nil || *e.UserData == v {
			continue
		}
		p, _ := e.PassOf()
		// UD-2 when it is what the previous pass wrote; UD-1 otherwise.
		if prev, ok := exitValue[p-1]; p > 0 && ok && prev == *e.UserData {
			vs = append(vs, x.violation("UD-2", d.id, fmt.Sprintf("PASS ENTER of pass %d saw user data %d written in pass %d, not the CONFIG value %d", p, *e.UserData, p-1, v), at, i))
			continue
		}
		vs = append(vs, x.violation("UD-1", d.id, fmt.Sprintf("PASS ENTER of pass %d saw user data %d, the sequence holds %d", p, *e.UserData, v), at, i))
	}
	// UD-2: continue sees what its own pass left, as that pass's EXIT did.
	for _, i := range d.continues {
		e := x.ev[i]
		p, ok := e.PassOf()
		want, seen := exitValue[p]
		if !ok || !seen || e.UserData == nil || *e.UserData == want {
			continue
		}
		vs = append(vs, x.violation("UD-2", d.id, fmt.Sprintf("replay_continue after pass %d got user data %d, the pass's EXIT saw %d", p, *e.UserData, want), x.exitOf(d, p), i))
	}
	return vs
}

// exitOf is the position of the PASS EXIT of pass p (or of d's first EXIT).
func (x *index) exitOf(d *dispatchView, p uint64) int {
	if d.exitByPass == nil {
		d.exitByPass = map[uint64]int{}
		for _, i := range d.passExit {
			if q, ok := x.ev[i].PassOf(); ok {
				if _, dup := d.exitByPass[q]; !dup {
					d.exitByPass[q] = i
				}
			}
		}
	}
	if i, ok := d.exitByPass[p]; ok {
		return i
	}
	if len(d.passExit) > 0 {
		return d.passExit[0]
	}
	return 0
}
