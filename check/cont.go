package check

import (
	"fmt"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkCONT judges when replay_continue is consulted and what its answer
// does, and that every pass is closed.
func checkCONT(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if !d.replayed() && len(d.continues) == 0 {
			return
		}
		if d.replayed() {
			x.examined("CONT-4")
		}
		if len(d.continues) > 0 {
			x.examined("CONT-1")
		}
		vs = append(vs, x.checkPassesClosed(d)...)
		vs = append(vs, x.checkContinuePlacement(d)...)
		vs = append(vs, x.checkContinueCoverage(d)...)
	})
	return vs
}

// CONT-4: every PASS ENTER is followed by its EXIT before the next pass.
func (x *index) checkPassesClosed(d *dispatchView) []Violation {
	open := -1
	for _, i := range x.mergeSorted(d.passEnter, d.passExit) {
		if x.ev[i].Phase == trace.PhaseEnter {
			if open >= 0 {
				return []Violation{x.violation("CONT-4", d.id, fmt.Sprintf("pass %s never got its PASS EXIT", passText(&x.ev[open])), open, i)}
			}
			open = i
		} else {
			open = -1
		}
	}
	if open >= 0 && !x.cutOff(d) { // the process may end in another loop's restore mid-pass
		return []Violation{x.violation("CONT-4", d.id, fmt.Sprintf("pass %s never got its PASS EXIT", passText(&x.ev[open])), open)}
	}
	return nil
}

// CONT-1: each consultation follows the PASS EXIT of the pass it names,
// before anything else of the loop; non-zero runs another pass, zero ends.
func (x *index) checkContinuePlacement(d *dispatchView) []Violation {
	if x.hiddenLoop(d) {
		return x.checkHiddenContinue(d)
	}
	var vs []Violation
	passEvents := x.mergeSorted(d.passEnter, d.passExit)
	consulted := map[uint64]int{}
	r, fixedOK := x.passCount(d)
	for _, c := range d.continues {
		e := &x.ev[c]
		p, _ := x.passOf(c)
		// The PASS callback just before the consultation.
		k := sort.SearchInts(passEvents, c)
		if k == 0 {
			vs = append(vs, x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue (pass %s) was called before any pass of dispatch %d ended", passText(e), d.id), c))
			continue
		}
		prev := &x.ev[passEvents[k-1]]
		if prev.Phase != trace.PhaseExit || passText(prev) != passText(e) {
			vs = append(vs, x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue names pass %s but follows PASS %s of pass %s", passText(e), prev.Phase, passText(prev)), passEvents[k-1], c))
			continue
		}
		if first, twice := consulted[p]; twice {
			vs = append(vs, x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue was consulted twice after pass %d", p), first, c))
			continue
		}
		consulted[p] = c
		next := k < len(passEvents) // a PASS ENTER follows (CONT-4 keeps them paired)
		if e.Result == nil {
			continue
		}
		switch {
		// An indefinite loop that stops on non-zero is CONT-3's finding; a
		// fixed loop at its bound is CONT-2's.
		// A restore that failed part-way ended the process before the
		// pass continue asked for (MEM-5, decision 13).
		case *e.Result != 0 && !next && len(d.neverEnded) == 0 && !x.cutOff(d) && !x.openLoop(d) && !(fixedOK && (r == 0 || p+1 >= uint64(r))):
			vs = append(vs, x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue returned %d after pass %d, yet no further pass ran", *e.Result, p), c))
		case *e.Result == 0 && next:
			vs = append(vs, x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue returned 0 after pass %d, yet another pass ran", p), c, passEvents[k]))
		}
	}
	return vs
}

// CONT-1 for a loop no PASS callback shows (decision 9): its passes are
// its kernel's runs, so the consultation after pass p follows run p+1 and
// precedes run p+2; non-zero runs another pass, zero ends the loop (found
// by internal/specgen: CONT-1 looked for a PASS EXIT that cannot come).
func (x *index) checkHiddenContinue(d *dispatchView) []Violation {
	if !x.header.Reports(trace.SourceRuntime) {
		return nil // the runs are not observable
	}
	consulted := map[uint64]bool{}
	r, fixedOK := x.passCount(d)
	for _, c := range d.continues {
		e := &x.ev[c]
		p, _ := x.passOf(c)
		runs := sort.SearchInts(d.kernels, c) // runs before the consultation
		switch {
		case uint64(runs) != p+1:
			return []Violation{x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue names pass %d but follows %d runs of dispatch %d's kernel", p, runs, d.id), c)}
		case consulted[p]:
			return []Violation{x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue was consulted twice after pass %d", p), c)}
		}
		consulted[p] = true
		if e.Result == nil {
			continue
		}
		next := runs < len(d.kernels)
		switch {
		case *e.Result != 0 && !next && len(d.neverEnded) == 0 && !x.cutOff(d) && !x.openLoop(d) && !(fixedOK && (r == 0 || p+1 >= uint64(r))):
			return []Violation{x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue returned %d after pass %d, yet no further pass ran", *e.Result, p), c)}
		case *e.Result == 0 && next:
			return []Violation{x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue returned 0 after pass %d, yet another pass ran", p), c, d.kernels[runs])}
		}
	}
	return nil
}

// CONT-2, CONT-3, CONT-1: which passes are followed by a consultation.
func (x *index) checkContinueCoverage(d *dispatchView) []Violation {
	r, ok := x.passCount(d)
	if !ok || !d.replayed() {
		return nil
	}
	consulted := map[uint64]int{}
	for _, c := range d.continues {
		if p, has := x.passOf(c); has {
			consulted[p] = c
		}
	}
	last := uint64(x.passesRun(d) - 1)
	var vs []Violation
	switch {
	case r > 1:
		x.examined("CONT-2")
		n := uint64(r)
		// CONT-2: a fixed loop never asks after its final pass.
		if c, asked := consulted[n-1]; asked {
			vs = append(vs, x.violation("CONT-2", d.id, fmt.Sprintf("a fixed loop of %d passes consulted replay_continue after its last pass %d", n, n-1), x.exitOf(d, n-1), c))
		}
		// CONT-1: once the tool installed continue, every pass but the
		// last is followed by a consultation.
		if len(d.continues) == 0 {
			break
		}
		for p := uint64(0); p < last; p++ {
			if _, asked := consulted[p]; !asked && !x.leftOut(d, p) {
				vs = append(vs, x.violation("CONT-1", d.id, fmt.Sprintf("replay_continue is installed but was not consulted after pass %d", p), x.exitOf(d, p)))
				break
			}
		}
	case r == 0:
		x.examined("CONT-3")
		// CONT-3: an indefinite loop asks after every pass, the last too,
		// and ends only on a 0.
		for p := uint64(0); p <= last; p++ {
			if _, asked := consulted[p]; !asked && !x.leftOut(d, p) {
				if p == last && (len(d.neverEnded) > 0 || x.cutOff(d) || x.openLoop(d)) {
					break // the harness cut the loop off after this pass, or the process died in it
				}
				vs = append(vs, x.violation("CONT-3", d.id, fmt.Sprintf("indefinite loop: replay_continue was not consulted after pass %d", p), x.exitOf(d, p)))
				break
			}
		}
		if c, asked := consulted[last]; asked && len(d.neverEnded) == 0 && !x.cutOff(d) && !x.openLoop(d) {
			if res := x.ev[c].Result; res != nil && *res != 0 {
				vs = append(vs, x.violation("CONT-3", d.id, fmt.Sprintf("indefinite loop ended after pass %d although replay_continue returned %d", last, *res), c))
			}
		}
	}
	return vs
}
