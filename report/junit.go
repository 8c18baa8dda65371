package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
)

// JUnit types: the subset of the JUnit XML schema that CI systems read.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr,omitempty"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	XMLName  xml.Name `xml:"testsuite"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	File     string   `xml:"file,attr,omitempty"`
	// Properties say, for a generated spec, its seed and the command that
	// runs it again.
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Props []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailed  `xml:"failure,omitempty"`
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

// junitStream writes <testsuites> at once, then one <testsuite> per spec as
// the spec finishes, and closes the document at End. Each spec's suite
// has the same testcases whatever happens (SPEC/spec and one SPEC/RULE per
// rule the spec names or expects to see broken), so that the count of
// testcases is stable from run to run; each testcase has at most one
// <failure>. The spec's time is the suite's and its SPEC/spec case's: the
// rule cases are verdicts drawn from that one run and take no time of
// their own.
type junitStream struct {
	w      *bufio.Writer
	enc    *xml.Encoder
	h      Header
	flakes []JSONResult
}

func newJUnitStream(w io.Writer, h Header) (*junitStream, error) {
	bw := bufio.NewWriter(w)
	s := &junitStream{w: bw, enc: xml.NewEncoder(bw), h: h}
	s.enc.Indent("  ", "  ")
	name := "replayspec"
	if h.Target != "" {
		name += " (" + h.Target + ")"
	}
	fmt.Fprintf(bw, "%s<testsuites name=%q>\n", xml.Header, xmlAttr(name))
	if g := h.Generated; g != nil {
		bw.WriteString("  <!-- " + strings.ReplaceAll(g.Line(), "--", "- -") + " -->\n")
	}
	return s, bw.Flush()
}

// xmlAttr escapes s for an attribute written with %q.
func xmlAttr(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return strings.ReplaceAll(b.String(), `"`, "&#34;")
}

func (s *junitStream) suite(su junitSuite) error {
	for _, c := range su.Cases {
		su.Tests++
		switch {
		case c.Skipped != nil:
			su.Skipped++
		case c.Error != nil:
			su.Errors++
		case c.Failure != nil:
			su.Failures++
		}
	}
	if err := s.enc.Encode(su); err != nil {
		return err
	}
	s.w.WriteString("\n")
	return s.w.Flush()
}

func (s *junitStream) Add(r JSONResult) error {
	su := junitSpec(r)
	if runner.Status(r.Outcome) == runner.Flaky {
		markFlaky(&su)
		s.flakes = append(s.flakes, r)
	}
	return s.suite(su)
}

func (s *junitStream) End(e End) error {
	if len(s.flakes) > 0 {
		if err := s.suite(flakeSuite(s.flakes, s.h.Target)); err != nil {
			return err
		}
	}
	if s.h.XFailFile != "" && len(e.Stale) > 0 {
		su := junitSuite{Name: "expected-failure list " + s.h.XFailFile, Time: seconds(0)}
		for _, st := range e.Stale {
			su.Cases = append(su.Cases, junitCase{Name: "xfail/" + st.Key, Classname: "replayspec.xfail", File: s.h.XFailFile, Time: seconds(0),
				Failure: &junitFailed{Type: "stale-xfail", Message: st.Message}})
		}
		if err := s.suite(su); err != nil {
			return err
		}
	}
	if e.Stopped != "" {
		s.w.WriteString("  <!-- stopped: " + strings.ReplaceAll(e.Stopped, "--", "- -") + " -->\n")
	}
	s.w.WriteString("</testsuites>\n")
	return s.w.Flush()
}

// junitSpec is one spec's testsuite.
func junitSpec(r JSONResult) junitSuite {
	name := r.Name
	if r.Run > 0 {
		name = fmt.Sprintf("%s#%d", name, r.Run)
	}
	ids := append([]string{"spec"}, rulesOf(r)...)
	byCase := map[string][]junitFailed{}
	add := func(id string, f junitFailed) { byCase[id] = append(byCase[id], f) }
	caseOf := func(rule string) string {
		if slices.Contains(ids[1:], rule) {
			return rule
		}
		return "spec" // a rule the spec does not name, or its expectations
	}
	errored := runner.Verdict(r.Verdict) == runner.Error
	for _, v := range r.Violations {
		add(caseOf(v.Rule), junitFailed{Message: fmt.Sprintf("[%s] %s", v.Rule, v.Message), Type: v.Rule, Body: failureBody(r, v)})
	}
	for _, id := range r.Unexercised {
		if !errored {
			add(caseOf(id), junitFailed{Message: fmt.Sprintf("[%s] named by the spec but not exercised: no oracle examined an instance of it", id),
				Type: "not-exercised", Body: requiresOf(id)})
		}
	}
	if r.NothingJudged && !errored {
		add("spec", junitFailed{Message: "nothing judged: no oracle found anything to examine in the trace", Type: "nothing-judged"})
	}
	for _, id := range r.Unseen {
		add(caseOf(id), junitFailed{Message: fmt.Sprintf("[%s] expected under expect.violations but no oracle reported it", id), Type: id, Body: requiresOf(id)})
	}
	status := runner.Status(r.Outcome)
	su := junitSuite{Name: name, Time: seconds(r.ElapsedMS / 1e3), File: r.File}
	if r.Seed != 0 {
		su.Properties = &junitProperties{Props: []junitProperty{{"seed", strconv.Itoa(r.Seed)}, {"rerun", r.Rerun}}}
	}
	for _, id := range ids {
		c := junitCase{Name: name + "/" + id, Classname: "replayspec." + r.Name, File: r.File, Time: seconds(0)}
		if id == "spec" {
			c.Time = su.Time
		}
		c.Failure = merge(byCase[id])
		switch {
		case status == runner.Skipped:
			c.Failure, c.Skipped = nil, &junitSkipped{Message: r.SkipReason}
		case errored && id == "spec":
			c.Failure, c.Error = nil, &junitFailed{Message: firstLine(r.Error), Type: "run", Body: r.Error}
		case errored:
			c.Failure, c.Error = nil, &junitFailed{Message: "not judged: the run did not finish (see " + name + "/spec)", Type: "run"}
		case status == runner.Errored && id == "spec":
			c.Error = &junitFailed{Message: firstLine(r.Reason), Type: "stale-xfail", Body: r.Reason}
		}
		if status == runner.Expected && (c.Failure != nil || c.Error != nil) {
			c.Failure, c.Error, c.Skipped = nil, nil, &junitSkipped{Message: "expected failure: " + r.Reason}
		}
		if c.Failure == nil && c.Error == nil && c.Skipped == nil {
			if rr, ok := judgedRule(r, id); ok && rr.Verdict == string(check.NotObservable) {
				c.Skipped = &junitSkipped{Message: fmt.Sprintf("not observable: the trace lacks %s events", strings.Join(rr.Missing, " and "))}
			}
		}
		su.Cases = append(su.Cases, c)
	}
	return su
}

// merge makes one <failure> of several: CI systems show one per testcase.
func merge(fs []junitFailed) *junitFailed {
	switch len(fs) {
	case 0:
		return nil
	case 1:
		return &fs[0]
	}
	var types, bodies []string
	for _, f := range fs {
		if !slices.Contains(types, f.Type) {
			types = append(types, f.Type)
		}
		bodies = append(bodies, f.Message+"\n"+f.Body)
	}
	return &junitFailed{
		Message: fmt.Sprintf("%s (and %d more)", fs[0].Message, len(fs)-1),
		Type:    strings.Join(types, ","),
		Body:    strings.Join(bodies, "\n"),
	}
}

func failureBody(r JSONResult, v JSONViolation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "spec: %s\nrule: %s: %s\nfound: %s\n", r.File, v.Rule, v.Requires, v.Message)
	if v.Label != "" {
		fmt.Fprintf(&b, "about: %s\n", v.Label)
	}
	for _, e := range v.Events {
		b.WriteString("event: " + check.FormatEvent(e) + "\n")
	}
	return b.String()
}

func seconds(s float64) string { return fmt.Sprintf("%.6f", s) }

// rulesOf lists the rules a spec names or expects to see broken, in the
// spec's order: the same whatever the run found.
func rulesOf(r JSONResult) []string {
	var out []string
	for _, id := range append(slices.Clone(r.Rules), r.ExpectViolations...) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func judgedRule(r JSONResult, id string) (JSONRule, bool) {
	for _, rr := range r.Judged {
		if rr.Rule == id {
			return rr, true
		}
	}
	return JSONRule{}, false
}
