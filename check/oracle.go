package check

import "github.com/replayspec/replayspec/trace"

// family is the oracle of one rule family: one pass over the index that
// examines every rule of the family it can (index.examined) and returns
// what broke. A family's rules are listed in the registry (judge.go) with
// the sources each needs.
type family struct {
	name string
	run  func(x *index) []Violation
}

// families are run in this order; the order only affects nothing but
// speed, since violations are sorted afterwards.
var families = []family{
	{"API", checkAPI},
	{"ACT", checkACT},
	{"CB", checkCB},
	{"UD", checkUD},
	{"PC", checkPC},
	{"CONT", checkCONT},
	{"MEM", checkMEM},
	{"MEM", checkNested}, // MEM-6: the tool's own dispatches inside windows
	{"DID", checkDID},
	{"CMP", checkCMP},
	{"COR", checkCOR},
	{"LCX", checkLCX},
	{"SVC", checkSVC},
	{"AGT", checkAGT},
	{"AGT", checkCounterValues}, // counters.go: the values, not only the names
}

// Trace runs every oracle over t and returns what they found, in trace
// order then rule order. Judge says, besides, what each rule's verdict is.
func Trace(t trace.Trace) []Violation { return Judge(t).Violations }

// eachDispatch calls f for every dispatch in order of first appearance.
func (x *index) eachDispatch(f func(d *dispatchView)) {
	for _, d := range x.order {
		f(d)
	}
}
