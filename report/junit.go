package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// JUnit types: the subset of the JUnit XML schema that CI systems read.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failures  []junitFailed `xml:"failure,omitempty"`
	Error     *junitFailed  `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	Flaky     []junitFailed `xml:"flakyFailure,omitempty"`
}

type junitFailed struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes one testsuite with a testcase per spec and rule the spec
// touches: the rules it names, expects to see violated, or violates (at
// least one per spec, named "spec" when it touches no rule), so CI can cut
// results by rule. A failure carries the rule ID and the message; a
// skipped spec is <skipped>; a target error is <error> on each testcase.
func JUnit(w io.Writer, results []runner.Result, opts Options) error {
	suite := junitSuite{Name: "replayspec"}
	if opts.Target != "" {
		suite.Name += " (" + opts.Target + ")"
	}
	var total float64
	for _, r := range results {
		total += r.Elapsed.Seconds()
		suite.Cases = append(suite.Cases, markFlaky(junitCases(r), r.Spec.Name, opts.Flakes)...)
	}
	for _, c := range suite.Cases {
		suite.Tests++
		switch {
		case c.Skipped != nil:
			suite.Skipped++
		case c.Error != nil:
			suite.Errors++
		case len(c.Failures) > 0:
			suite.Failures++
		}
	}
	suite.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	suites := []junitSuite{suite}
	if len(opts.Flakes) > 0 {
		suites = append(suites, flakeSuite(opts.Flakes, opts.Target)) // report/flakes.go
	}
	if err := enc.Encode(junitSuites{Suites: suites}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitCases(r runner.Result) []junitCase {
	ids := rulesOf(r)
	if len(ids) == 0 {
		ids = []string{"spec"}
	}
	name := r.Spec.Name
	if name == "" {
		name = r.Spec.File
	}
	byRule := map[string][]junitFailed{}
	for _, v := range r.Violations {
		byRule[v.Rule] = append(byRule[v.Rule], junitFailed{
			Message: fmt.Sprintf("[%s] %s", v.Rule, v.Message),
			Type:    v.Rule,
			Body:    failureBody(r, v),
		})
	}
	for _, id := range r.Unexercised {
		byRule[id] = append(byRule[id], junitFailed{
			Message: fmt.Sprintf("[%s] named by the spec but not exercised: no oracle examined an instance of it", id),
			Type:    "not-exercised",
			Body:    requiresOf(id),
		})
	}
	if r.NothingJudged {
		byRule[ids[0]] = append(byRule[ids[0]], junitFailed{
			Message: "nothing judged: no oracle found anything to examine in the trace",
			Type:    "nothing-judged",
		})
	}
	for _, id := range r.Unseen {
		byRule[id] = append(byRule[id], junitFailed{
			Message: fmt.Sprintf("[%s] expected under expect.violations but no oracle reported it", id),
			Type:    id,
			Body:    requiresOf(id),
		})
	}
	each := seconds(r.Elapsed.Seconds() / float64(len(ids)))
	var cases []junitCase
	for _, id := range ids {
		c := junitCase{Name: name + "/" + id, Classname: "replayspec." + name, File: r.Spec.File, Time: each}
		switch r.Verdict() {
		case runner.Skip:
			c.Skipped = &junitSkipped{Message: r.SkipReason}
		case runner.Error:
			c.Error = &junitFailed{Message: r.Err.Error(), Type: "target"}
		}
		c.Failures = byRule[id]
		if rr, ok := ruleResult(r, id); ok && rr.Verdict == check.NotObservable && c.Skipped == nil && len(c.Failures) == 0 {
			c.Skipped = &junitSkipped{Message: fmt.Sprintf("not observable: the trace lacks %s events", sourcesText(rr.Missing))}
		}
		cases = append(cases, c)
	}
	return cases
}

func failureBody(r runner.Result, v check.Violation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "spec: %s\nrule: %s: %s\nfound: %s\n", r.Spec.File, v.Rule, requires(v), v.Message)
	if v.Label != "" {
		fmt.Fprintf(&b, "about: %s\n", v.Label)
	}
	for _, e := range v.Events {
		b.WriteString("event: " + check.FormatEvent(e) + "\n")
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.6f", s) }

// rulesOf lists the rules a result touches, in the spec's order, then
// those it was expected or found to break.
func rulesOf(r runner.Result) []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, id := range r.Spec.Rules {
		add(id)
	}
	for _, id := range r.Spec.Expect.Violations {
		add(id)
	}
	for _, v := range r.Violations {
		add(v.Rule)
	}
	for _, id := range r.Unseen {
		add(id)
	}
	return out
}

func ruleResult(r runner.Result, id string) (check.RuleResult, bool) {
	for _, rr := range r.Rules {
		if rr.Rule == id {
			return rr, true
		}
	}
	return check.RuleResult{}, false
}

func sourcesText(ss []trace.Source) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " and ")
}
