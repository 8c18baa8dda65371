package runner_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

// result builds a runner.Result: the spec's name and rules, the rules it
// fails ("EXPECT" for its own expectations), an error or a skip.
func result(name string, rules []string, fails []string, err error, skip string) runner.Result {
	r := runner.Result{Spec: spec.Spec{Name: name, Rules: rules}, Err: err, SkipReason: skip}
	for _, id := range fails {
		r.Violations = append(r.Violations, check.Violation{Rule: id, Message: "broken"})
	}
	return r
}

func TestParseXFail(t *testing.T) {
	xf, err := runner.ParseXFail("known.txt", []byte("# known failures of the port\nMEM-3  restore is not implemented yet\n\nfixed-three-passes\tcrashes on MI300 (issue 12)\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []runner.XEntry{
		{Key: "MEM-3", Rule: true, Reason: "restore is not implemented yet", Line: 2},
		{Key: "fixed-three-passes", Reason: "crashes on MI300 (issue 12)", Line: 4},
	}
	if len(xf.Entries) != 2 || xf.Entries[0] != want[0] || xf.Entries[1] != want[1] {
		t.Errorf("entries %+v, want %+v", xf.Entries, want)
	}
	for _, c := range []struct{ in, err string }{
		{"MEM-3\n", "known.txt:1: MEM-3 has no reason"},
		{"MEM-3 a\nMEM-3 b\n", "known.txt:2: MEM-3 is listed twice (first on line 1)"},
	} {
		if _, err := runner.ParseXFail("known.txt", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: err %v, want %q", c.in, err, c.err)
		}
	}
}

func TestApply(t *testing.T) {
	xf, err := runner.ParseXFail("known.txt", []byte(`
MEM-3      restore after the last pass
COR-3      stale: the port fixed it
crashy     the driver dies on this one
fixed-now  stale: it passes
`))
	if err != nil {
		t.Fatal(err)
	}
	results := []runner.Result{
		result("ok", []string{"PC-3"}, nil, nil, ""),
		result("mem", []string{"MEM-3"}, []string{"MEM-3"}, nil, ""),
		result("mem-and-more", []string{"MEM-3"}, []string{"MEM-3", "CMP-1"}, nil, ""),
		result("crashy", []string{"PC-3"}, nil, errors.New("driver crashed"), ""),
		result("fixed-now", []string{"PC-3"}, nil, nil, ""),
		result("cor", []string{"COR-3"}, nil, nil, ""),
		result("needs-spm", []string{"SVC-2"}, nil, nil, "target does not claim [spm]"),
		result("broken", []string{"UD-1"}, nil, errors.New("driver timed out"), ""),
		result("expect", []string{"MEM-3"}, []string{"EXPECT"}, nil, ""),
	}
	want := []struct {
		status runner.Status
		reason string
	}{
		{runner.Passed, ""},
		{runner.Expected, "MEM-3: restore after the last pass"},
		{runner.Failed, "fails CMP-1"},
		{runner.Expected, "the driver dies on this one"},
		{runner.Errored, "spec fixed-now is listed as failing (known.txt:5) but passed: remove it from known.txt"},
		{runner.Errored, "rule COR-3 is listed as failing (known.txt:3) but passed here and failed nowhere: remove it from known.txt"},
		{runner.Skipped, "target does not claim [spm]"},
		{runner.Errored, "driver timed out"},
		{runner.Failed, "fails EXPECT"}, // expectations are listed by spec name, not rule
	}
	got := xf.Apply(results)
	if len(got) != len(want) {
		t.Fatalf("%d outcomes for %d results", len(got), len(results))
	}
	for i, w := range want {
		if got[i].Status != w.status || got[i].Reason != w.reason {
			t.Errorf("%s: %s %q, want %s %q", results[i].Spec.Name, got[i].Status, got[i].Reason, w.status, w.reason)
		}
	}
	if !runner.Unexpected(got) {
		t.Error("Unexpected is false with failures and errors")
	}
	if runner.Unexpected(got[:2]) {
		t.Error("Unexpected is true for a pass and an expected failure")
	}
	// No list: the runner's verdicts.
	for i, o := range (runner.XFail{}).Apply(results) {
		if string(o.Status) != map[runner.Verdict]string{runner.Pass: "passed", runner.Fail: "failed", runner.Error: "error", runner.Skip: "skipped"}[results[i].Verdict()] {
			t.Errorf("%s: %s without a list, verdict %s", results[i].Spec.Name, o.Status, results[i].Verdict())
		}
	}
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
	}
	families := []string{"API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR", "LCX", "SVC", "AGT"}
	m := report.BuildMatrix(xf.Apply(results), families)
	status := map[string]report.RuleRow{}
	for _, r := range m.Rules {
		status[r.Rule] = r
	}
	for id, want := range map[string]runner.Status{
		"PC-3": runner.Failed, "MEM-3": runner.Expected, "CMP-1": runner.Failed, "SVC-2": runner.Skipped,
		"UD-1": runner.Passed, "COR-3": runner.Failed, "DID-1": runner.Passed, "CB-1": runner.Failed, "RPV-1": report.NotClaimed, "API-1": report.NotCovered,
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
	if m.Totals[runner.Failed] != 3 || m.Totals[runner.Expected] != 1 || m.Totals[runner.Skipped] != 1 || m.Totals[runner.Passed] != 1 {
		t.Errorf("totals %v", m.Totals)
	}

	var md, js bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"| PC-3 | **failed** | 1 | 1 | 0 | 0 | 0 |", "| MEM-3 | expected failure | 0 | 0 | 1 |", "| RPV-1 | not claimed |", "| b | **failed** | EXPECT |"} {
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
