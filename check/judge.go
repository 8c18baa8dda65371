package check

import (
	"slices"

	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Verdict is what the oracles concluded about one rule in one trace. Only
// an examined instance that held is a pass: silence is never one.
type Verdict string

// Verdicts, from best to worst news for a reader who wants to know what
// was checked.
const (
	Pass          Verdict = "pass"           // instances were examined and every one held
	Fail          Verdict = "fail"           // an instance broke the rule
	NotExercised  Verdict = "not exercised"  // the trace could show the rule, but nothing in it did
	NotObservable Verdict = "not observable" // the trace lacks the sources the rule's oracle needs
)

// RuleResult is one rule's verdict in one trace.
type RuleResult struct {
	Rule       string
	Verdict    Verdict
	Instances  int            // what the oracle examined
	Violations []Violation    // what broke, when Verdict is Fail
	Missing    []trace.Source // sources the trace lacks, when NotObservable
}

// Judgement is what every oracle made of one trace.
type Judgement struct {
	// Rules has one result per rule the oracles judge, in catalogue order.
	Rules []RuleResult
	// Violations are every oracle's findings, in trace order.
	Violations []Violation
}

// Rule returns the result for id.
func (j Judgement) Rule(id string) (RuleResult, bool) {
	for _, r := range j.Rules {
		if r.Rule == id {
			return r, true
		}
	}
	return RuleResult{}, false
}

// Count tallies the verdicts.
func (j Judgement) Count() map[Verdict]int {
	n := map[Verdict]int{}
	for _, r := range j.Rules {
		n[r.Verdict]++
	}
	return n
}

// Judge runs every oracle over t and gives each rule its verdict: the rules
// whose sources the header does not list are not observable; of the rest,
// a rule with a violation fails, a rule with examined instances passes, and
// a rule nothing in the trace exercised says so.
func Judge(t trace.Trace) Judgement {
	return judge(newIndex(t))
}

// JudgeSpec is Judge and JudgeExpectations(s, t) over one index of the
// trace, which is what costs: a runner that wants both builds it once.
func JudgeSpec(s spec.Spec, t trace.Trace) (j Judgement, expected []Violation, unobserved []string) {
	x := newIndexInts(t, nil, takePositions())
	j = judge(x)
	expected, unobserved = judgeExpectations(s, x)
	x.givePositions() // nothing judged keeps the index's lists
	return j, expected, unobserved
}

func judge(x *index) Judgement {
	return judgement(x.header, sortViolations(runFamilies(x)), x.instances)
}

// runFamilies runs every oracle family over x; x.instances counts what
// they examined.
func runFamilies(x *index) []Violation {
	var vs []Violation
	for _, f := range families {
		vs = append(vs, f.run(x)...)
	}
	x.countExamined()
	return vs
}

// judgement gives each rule its verdict from what the oracles found (vs,
// sorted) and examined, under the sources header h reports.
func judgement(h trace.Header, vs []Violation, instances map[string]int) Judgement {
	byRule := map[string][]Violation{}
	for _, v := range vs {
		byRule[v.Rule] = append(byRule[v.Rule], v)
	}
	j := Judgement{Violations: vs}
	for _, o := range registry {
		r := RuleResult{Rule: o.rule, Instances: instances[o.rule], Violations: byRule[o.rule]}
		missing := o.missing(h)
		switch {
		case len(r.Violations) > 0:
			// A violation is evidence whatever the header claims.
			r.Verdict = Fail
			r.Instances = max(r.Instances, len(r.Violations))
		case missing != nil:
			r.Verdict, r.Missing, r.Instances = NotObservable, missing, 0
		case r.Instances > 0:
			r.Verdict = Pass
		default:
			r.Verdict = NotExercised
		}
		j.Rules = append(j.Rules, r)
	}
	return j
}

// examined records that the oracle of rule looked at one more instance of
// it. Every oracle calls it where it judges, whether or not the instance
// holds: that count is what turns silence into "not exercised". It is
// called several times an event: a rule of the registry is counted in
// x.counted by its place there (ruleSlot), which countExamined moves into
// x.instances once the oracles are done; a map keyed by the rule's string
// cost a tenth of judging.
func (x *index) examined(rule string) {
	if k := ruleSlot(rule); k >= 0 {
		x.counted[k]++
		return
	}
	x.instances[rule]++
}

// examinedAt is examined of the rule at place k of the registry: the
// rules an oracle examines once an event or a pass are looked up once,
// into the slots below (ruleSlot's hash and compare, a call each time,
// was a twentieth of judging a long loop).
func (x *index) examinedAt(k int) { x.counted[k]++ }

var (
	slotACT4 = mustSlot("ACT-4")
	slotAPI5 = mustSlot("API-5")
	slotAPI6 = mustSlot("API-6")
	slotCB4  = mustSlot("CB-4")
	slotCOR1 = mustSlot("COR-1")
	slotCOR2 = mustSlot("COR-2")
	slotLCX1 = mustSlot("LCX-1")
	slotLCX3 = mustSlot("LCX-3")
	slotMEM2 = mustSlot("MEM-2")
	slotMEM4 = mustSlot("MEM-4")
	slotMEM5 = mustSlot("MEM-5")
)

// mustSlot is rule's place in the registry; a rule not there is a bug.
func mustSlot(rule string) int {
	k := ruleSlot(rule)
	if k < 0 {
		panic("check: rule " + rule + " is not in the registry")
	}
	return k
}

// examinedTimes is examined n times over.
func (x *index) examinedTimes(rule string, n int) {
	if n <= 0 {
		return
	}
	if k := ruleSlot(rule); k >= 0 {
		x.counted[k] += n
		return
	}
	x.instances[rule] += n
}

// countExamined adds what examined counted by place into x.instances (a
// rule examined is there, as many times as it was), and starts the count
// again.
func (x *index) countExamined() {
	for k, n := range x.counted {
		if n > 0 {
			x.instances[registry[k].rule] += n
			x.counted[k] = 0
		}
	}
}

// ruleSlot is rule's place in the registry, -1 when it is not there. A
// rule ID is a family and a digit ("MEM-2", "CONT-4"): a few of its bytes
// hash it into ruleSlots, built from the registry, where no two rules
// meet (TestRuleSlots); the name is then compared, so another string is
// never taken for a rule.
func ruleSlot(rule string) int {
	n := len(rule)
	if n < 4 {
		return -1
	}
	k := int(ruleSlots[ruleHash(rule)]) - 1
	if k < 0 || registry[k].rule != rule {
		return -1
	}
	return k
}

// ruleHash mixes a rule ID's first two bytes, its digit and its length.
func ruleHash(rule string) int {
	n := len(rule)
	return (int(rule[0]) + int(rule[1])*5 + int(rule[n-1]) + n*29) % ruleSlotCount
}

const ruleSlotCount = 256

// ruleSlots holds each rule's place in the registry, plus one; 0 none.
var ruleSlots = func() (slots [ruleSlotCount]uint8) {
	for k, o := range registry {
		h := ruleHash(o.rule)
		if slots[h] != 0 {
			panic("check: rules " + registry[slots[h]-1].rule + " and " + o.rule + " hash alike: change ruleHash")
		}
		slots[h] = uint8(k + 1)
	}
	return slots
}()

// ruleOracle is how one rule is judged: the sources its oracle needs (any
// one of the alternatives, each a set that must all be present), and the
// family function that examines it.
type ruleOracle struct {
	rule    string
	sources [][]trace.Source
}

// missing returns the sources of the cheapest alternative the header lacks
// (nil when some alternative is fully present).
func (o ruleOracle) missing(h trace.Header) []trace.Source {
	var best []trace.Source
	for _, alt := range o.sources {
		var lack []trace.Source
		for _, s := range alt {
			if !h.Reports(s) {
				lack = append(lack, s)
			}
		}
		if lack == nil {
			return nil
		}
		if best == nil || len(lack) < len(best) {
			best = lack
		}
	}
	return best
}

// Sources of the oracles, named for how they read.
var (
	tool    = trace.SourceTool
	app     = trace.SourceApp
	runtime = trace.SourceRuntime
	sdk     = trace.SourceSDK
)

func need(alts ...[]trace.Source) [][]trace.Source { return alts }
func all(s ...trace.Source) []trace.Source         { return s }

// registry says, for every rule the oracles judge, which sources they need.
// TestRegistryMatchesCatalogue keeps it equal to the catalogue (RPV is the
// rocprofv3 front end's, judged on its output files). docs/oracles.md says,
// rule by rule and profile by profile, which observations decide it; only
// MEM-1 and ACT-4 need more than a tool and an application can see (a
// snapshot is a read: it changes nothing they could observe).
var registry = []ruleOracle{
	{"API-1", need(all(tool))},
	{"API-2", need(all(tool))},
	{"API-3", need(all(tool))},
	{"API-4", need(all(tool))},
	{"API-5", need(all(tool), all(tool, app))},
	{"API-6", need(all(tool))},
	{"API-7", need(all(tool))},
	{"ACT-1", need(all(tool))},
	{"ACT-2", need(all(tool, app))},
	{"ACT-3", need(all(tool), all(tool, sdk))},
	{"ACT-4", need(all(tool, app, runtime))},
	{"ACT-5", need(all(tool))},
	{"ACT-6", need(all(tool, app), all(tool, sdk))},
	{"CB-1", need(all(tool))},
	{"CB-2", need(all(tool))},
	{"CB-3", need(all(tool))},
	{"CB-4", need(all(tool), all(tool, runtime))},
	{"UD-1", need(all(tool))},
	{"UD-2", need(all(tool))},
	{"PC-1", need(all(tool))},
	{"PC-2", need(all(tool))},
	{"PC-3", need(all(tool))},
	{"PC-4", need(all(tool))},
	{"PC-5", need(all(tool))},
	{"PC-6", need(all(tool))},
	{"PC-7", need(all(tool))},
	{"PC-8", need(all(tool))},
	{"CONT-1", need(all(tool))},
	{"CONT-2", need(all(tool))},
	{"CONT-3", need(all(tool))},
	{"CONT-4", need(all(tool))},
	{"MEM-1", need(all(tool, sdk), all(tool, runtime))},
	{"MEM-2", need(all(tool))},
	{"MEM-3", need(all(tool, app))},
	{"MEM-4", need(all(tool, app))},
	{"MEM-5", need(all(tool, sdk), all(tool, app))},
	{"MEM-6", need(all(tool, runtime), all(tool, app))},
	{"DID-1", need(all(tool))},
	{"DID-2", need(all(tool))},
	{"DID-3", need(all(tool, app))},
	{"DID-4", need(all(tool))},
	{"DID-5", need(all(tool))},
	{"CMP-1", need(all(app))},
	{"CMP-2", need(all(tool, app))},
	{"CMP-3", need(all(app))},
	{"CMP-4", need(all(tool, app))},
	{"COR-1", need(all(tool))},
	{"COR-2", need(all(tool))},
	{"COR-3", need(all(tool))},
	{"LCX-1", need(all(tool))},
	{"LCX-2", need(all(tool))},
	{"LCX-3", need(all(tool))},
	{"LCX-4", need(all(tool))},
	{"LCX-5", need(all(tool))},
	{"LCX-6", need(all(tool))},
	{"LCX-7", need(all(tool))},
	{"SVC-1", need(all(tool))},
	{"SVC-2", need(all(tool))},
	{"SVC-3", need(all(tool, app))},
	{"AGT-1", need(all(tool))},
}

// judgedElsewhere are the rule families no trace oracle judges.
var judgedElsewhere = []string{"RPV"}

// Registry lists the rules the oracles judge and the sources each needs,
// for the documentation and the compliance matrix.
func Registry() map[string][][]trace.Source {
	out := make(map[string][][]trace.Source, len(registry))
	for _, o := range registry {
		out[o.rule] = o.sources
	}
	return out
}

// JudgedRules lists the rule IDs the oracles judge, in catalogue order.
func JudgedRules() []string {
	var ids []string
	for _, r := range rules.All() {
		if !slices.Contains(judgedElsewhere, r.Family) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}
