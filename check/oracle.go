package check

import "github.com/replayspec/replayspec/trace"

// family is the oracle of one rule family: one pass over the index that
// examines every rule of the family it can (index.examined) and returns
// what broke. A family's rules are listed in the registry (judge.go) with
// the sources each needs.
type family struct {
	name string
	run  func(x *index) []Violation
	// loop: the family reads a loop through its PASS callbacks, so it
	// does not judge a dispatch whose passes no callback shows.
	loop bool
}

// families are run in this order; the order only affects nothing but
// speed, since violations are sorted afterwards.
var families = []family{
	{"API", checkAPI, false},
	{"ACT", checkACT, false},
	{"CB", checkCB, true},
	{"UD", checkUD, true},
	{"PC", checkPC, true},
	{"CONT", checkCONT, true},
	{"MEM", checkMEM, true},
	{"DID", checkDID, true},
	{"CMP", checkCMP, false},
	{"COR", checkCOR, false},
	{"LCX", checkLCX, true},
	{"SVC", checkSVC, true},
	{"AGT", checkAGT, true},
}

// Trace runs every oracle over t and returns what they found, in trace
// order then rule order. Judge says, besides, what each rule's verdict is.
func Trace(t trace.Trace) []Violation { return Judge(t).Violations }

// eachDispatch calls f for every dispatch in order of first appearance;
// for a family that reads loops through PASS callbacks, not for one whose
// passes no callback shows (decision 17.4).
func (x *index) eachDispatch(f func(d *dispatchView)) {
	for _, id := range x.order {
		if d := x.dispatches[id]; !(x.loopFamily && d.passesUnseen) {
			f(d)
		}
	}
}
