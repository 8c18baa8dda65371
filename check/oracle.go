package check

import "github.com/replayspec/replayspec/trace"

// Oracle judges one rule family over a whole trace.
type Oracle struct {
	Family string
	Rules  []string // the rule IDs it can report
	Check  func(t trace.Trace) []Violation

	run func(x *index) []Violation
}

func oracle(family string, ids []string, run func(x *index) []Violation) Oracle {
	return Oracle{
		Family: family,
		Rules:  ids,
		Check:  func(t trace.Trace) []Violation { return sortViolations(run(newIndex(t))) },
		run:    run,
	}
}

// Oracles returns one oracle per rule family API..AGT, in family order.
// RPV belongs to the rocprofv3 front end and is judged elsewhere.
func Oracles() []Oracle {
	return []Oracle{
		oracle("API", []string{"API-2", "API-3", "API-4", "API-6", "ACT-5", "LCX-1"}, checkAPI),
		oracle("ACT", []string{"ACT-1", "ACT-3", "ACT-6"}, checkACT),
		oracle("CB", []string{"CB-1", "CB-2", "CB-3", "CB-4"}, checkCB),
		oracle("UD", []string{"UD-1", "UD-2"}, checkUD),
		oracle("PC", []string{"PC-1", "PC-2", "PC-3", "PC-4", "PC-5", "PC-6", "PC-7"}, checkPC),
		oracle("CONT", []string{"CONT-1", "CONT-2", "CONT-3", "CONT-4"}, checkCONT),
		oracle("MEM", []string{"MEM-1", "MEM-2", "MEM-3", "MEM-5", "MEM-6"}, checkMEM),
		oracle("DID", []string{"DID-1", "DID-2", "DID-3", "DID-4", "DID-5"}, checkDID),
		oracle("CMP", []string{"CMP-1", "CMP-2", "CMP-3", "CMP-4"}, checkCMP),
		oracle("COR", []string{"COR-1", "COR-2", "COR-3"}, checkCOR),
		oracle("LCX", []string{"LCX-2", "LCX-3", "LCX-4", "LCX-5", "LCX-6", "LCX-7", "SVC-1"}, checkLCX),
		oracle("SVC", []string{"SVC-2", "SVC-3"}, checkSVC),
		oracle("AGT", []string{"AGT-1"}, checkAGT),
	}
}

// Trace runs every oracle over t and returns what they found, in trace
// order then rule order.
func Trace(t trace.Trace) []Violation {
	x := newIndex(t)
	var vs []Violation
	for _, o := range Oracles() {
		vs = append(vs, o.run(x)...)
	}
	return sortViolations(vs)
}

// eachDispatch calls f for every dispatch in order of first appearance.
func (x *index) eachDispatch(f func(d *dispatchView)) {
	for _, id := range x.order {
		f(x.dispatches[id])
	}
}
