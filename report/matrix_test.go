package report_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

// result builds a runner.Result: the spec's name and rules, the rules it
// fails ("EXPECT" for its own expectations), an error or a skip. The
// oracles' verdicts follow: a failed rule fails, a named one held, and
// unexercised names what the trace never showed.
func result(name string, rules, fails, unexercised []string, skip string) runner.Result {
	r := runner.Result{Spec: spec.Spec{Name: name, Rules: rules}, SkipReason: skip}
	for _, id := range fails {
		r.Violations = append(r.Violations, check.Violation{Rule: id, Message: "broken"})
	}
	if skip != "" {
		return r
	}
	for _, id := range check.JudgedRules() {
		rr := check.RuleResult{Rule: id, Verdict: check.NotExercised}
		switch {
		case slices.Contains(fails, id):
			rr.Verdict, rr.Instances = check.Fail, 1
		case slices.Contains(unexercised, id):
		case slices.Contains(rules, id):
			rr.Verdict, rr.Instances = check.Pass, 1
		}
		r.Rules = append(r.Rules, rr)
	}
	r.Unexercised = unexercised
	return r
}

func TestMatrix(t *testing.T) {
	xf, _ := runner.ParseXFail("known.txt", []byte("MEM-3 not yet\n"))
	results := []runner.Result{
		result("a", []string{"PC-3", "MEM-3"}, []string{"MEM-3"}, nil, ""),          // PC-3 held, MEM-3 expected
		result("b", []string{"PC-3", "CMP-1"}, []string{"EXPECT"}, nil, ""),         // an expectation: both failed
		result("c", []string{"SVC-2"}, nil, nil, "target does not claim [spm]"),     // skipped
		result("d", []string{"UD-1"}, []string{"COR-3"}, nil, ""),                   // COR-3 failed, UD-1 held
		result("f", []string{"DID-1", "CB-1"}, []string{"CB-1", "EXPECT"}, nil, ""), // the oracle says what broke
		result("e", []string{"RPV-1"}, nil, nil, ""),                                // family not claimed
		result("g", []string{"LCX-4"}, nil, []string{"LCX-4"}, ""),                  // named, never shown
	}
	families := []string{"API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR", "LCX", "SVC", "AGT"}
	m := report.BuildMatrix(xf.Apply(results), families)
	status := map[string]report.RuleRow{}
	for _, r := range m.Rules {
		status[r.Rule] = r
	}
	for id, want := range map[string]runner.Status{
		"PC-3": runner.Failed, "MEM-3": runner.Expected, "CMP-1": runner.Failed, "SVC-2": runner.Skipped,
		"UD-1": runner.Passed, "COR-3": runner.Failed, "DID-1": runner.Passed, "CB-1": runner.Failed, "RPV-1": report.NotClaimed,
		"LCX-4": report.NotExercised, "LCX-5": report.NotCovered,
	} {
		if got := status[id].Status; got != want {
			t.Errorf("%s: %s, want %s (%+v)", id, got, want, status[id])
		}
	}
	if pc := status["PC-3"]; strings.Join(pc.Passed, ",") != "a" || strings.Join(pc.Failed, ",") != "b" {
		t.Errorf("PC-3 passed in %v, failed in %v; want a and b", pc.Passed, pc.Failed)
	}
	if m.Rules[0].Rule != "API-1" || len(m.Rules) < 60 {
		t.Errorf("the matrix does not list the catalogue in order: first %s, %d rules", m.Rules[0].Rule, len(m.Rules))
	}
	if m.Totals[runner.Failed] != 4 || m.Totals[runner.Expected] != 1 || m.Totals[runner.Skipped] != 1 || m.Totals[runner.Passed] != 1 {
		t.Errorf("totals %v", m.Totals)
	}

	var md, js bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"| PC-3 | **failed** | 1 | 1 | 0 | 0 | 0 | 0 | 0 |", "| MEM-3 | expected failure | 0 | 0 | 1 |", "| RPV-1 | not claimed |", "| b | **failed** | EXPECT |"} {
		if !strings.Contains(md.String(), part) {
			t.Errorf("markdown lacks %q:\n%s", part, md.String())
		}
	}
	if err := m.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back report.Matrix
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rules) != len(m.Rules) || back.Rules[0].Passed == nil {
		t.Errorf("JSON does not read back: %v", err)
	}
}
