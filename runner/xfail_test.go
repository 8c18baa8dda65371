package runner_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
)

// result builds a runner.Result: the spec's name and rules, the rules it
// fails ("EXPECT" for its own expectations), an error or a skip. The
// oracles' verdicts follow: a failed rule fails, a named one held.
func result(name string, rules []string, fails []string, err error, skip string) runner.Result {
	r := runner.Result{Spec: spec.Spec{Name: name, Rules: rules}, Err: err, SkipReason: skip}
	for _, id := range fails {
		r.Violations = append(r.Violations, check.Violation{Rule: id, Message: "broken"})
	}
	if err != nil || skip != "" {
		return r
	}
	for _, id := range check.JudgedRules() {
		rr := check.RuleResult{Rule: id, Verdict: check.NotExercised}
		switch {
		case slices.Contains(fails, id):
			rr.Verdict, rr.Instances = check.Fail, 1
		case slices.Contains(rules, id):
			rr.Verdict, rr.Instances = check.Pass, 1
		}
		r.Rules = append(r.Rules, rr)
	}
	return r
}

// nothingJudged is a spec that names no rule and whose trace showed
// nothing: it fails, and names no rule it fails.
func nothingJudged(name string) runner.Result {
	r := result(name, nil, nil, nil, "")
	r.NothingJudged = true
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
listed-silent  the port records nothing yet
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
		nothingJudged("silent"),
		nothingJudged("listed-silent"),
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
		// A failure that names no rule is excused by no rule entry (issue 25).
		{runner.Failed, "nothing judged: no oracle examined anything in the trace"},
		{runner.Expected, "the port records nothing yet"}, // only its name lists it
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
