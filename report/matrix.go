package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/driver"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// Rule statuses that only the matrix has.
const (
	NotClaimed    runner.Status = "not claimed"    // the port does not claim the rule's family
	NotObservable runner.Status = "not observable" // the traces lack the sources its oracle needs
	NotExercised  runner.Status = "not exercised"  // specs ran, but none of their traces showed an instance
	NotCovered    runner.Status = "not covered"    // no spec ran that could show it
)

// Matrix is a port's compliance: every rule of the catalogue with the
// verdicts its oracles gave across the specs that ran. A rule passes only
// where an oracle examined an instance of it and it held.
type Matrix struct {
	Protocol       string                `json:"protocol"`
	Target         string                `json:"target"`
	Implementation driver.Implementation `json:"implementation"`
	// Sources are the event sources the port's traces report (its
	// profile): what the oracles could observe.
	Sources []trace.Source        `json:"sources"`
	Totals  map[runner.Status]int `json:"totals"` // specs by status
	Rules   []RuleRow             `json:"rules"`
	Specs   []SpecRow             `json:"specs"`
}

// RuleRow is one rule's line: its status and the specs behind it.
type RuleRow struct {
	Rule     string        `json:"rule"`
	Requires string        `json:"requires"`
	Status   runner.Status `json:"status"`
	// Passed lists the specs whose traces showed the rule held.
	Passed   []string `json:"passed"`
	Failed   []string `json:"failed"`
	Expected []string `json:"expected_failure"`
	Skipped  []string `json:"skipped"`
	Errors   []string `json:"error"`
	// Unobserved lists specs whose traces could not show the rule;
	// Unexercised specs that name it but whose traces never showed it.
	Unobserved  []string `json:"not_observable"`
	Unexercised []string `json:"not_exercised"`
}

// SpecRow is one spec's outcome.
type SpecRow struct {
	Spec   string        `json:"spec"`
	File   string        `json:"file,omitempty"`
	Status runner.Status `json:"status"`
	Reason string        `json:"reason,omitempty"`
	Fails  []string      `json:"fails,omitempty"` // the rules it fails
}

// BuildMatrix sums outcomes up per rule from the oracles' verdicts on each
// trace. families are the rule families the port claims (nil: all). A
// spec counts for a rule where an oracle judged the rule in its trace; a
// breakdown, a spec listed as failing, or a failed expectation ("EXPECT")
// with no oracle violation beside it counts against every rule the spec
// names, since nothing narrower is known.
func BuildMatrix(outcomes []runner.Outcome, families []string) Matrix {
	m := Matrix{Protocol: driver.Version, Totals: map[runner.Status]int{}}
	rows := map[string]*RuleRow{}
	var order []string
	row := func(id string) *RuleRow {
		if r, ok := rows[id]; ok {
			return r
		}
		r := &RuleRow{Rule: id, Passed: []string{}, Failed: []string{}, Expected: []string{}, Skipped: []string{},
			Errors: []string{}, Unobserved: []string{}, Unexercised: []string{}}
		if rule, ok := rules.Lookup(id); ok {
			r.Requires = rule.Text
		}
		rows[id] = r
		order = append(order, id)
		return r
	}
	for _, r := range rules.All() {
		row(r.ID)
	}
	for _, o := range outcomes {
		s := o.Result.Spec
		if m.Sources == nil && o.Result.Trace.Header.Sources != nil {
			m.Sources = o.Result.Trace.Header.Sources
		}
		failing := runner.FailingRules(o.Result)
		m.Totals[o.Status]++
		m.Specs = append(m.Specs, SpecRow{Spec: s.Name, File: s.File, Status: o.Status, Reason: firstLine(o.Reason), Fails: failing})
		switch o.Status {
		case runner.Skipped:
			for _, id := range s.Rules {
				row(id).Skipped = append(row(id).Skipped, s.Name)
			}
			continue
		case runner.Errored:
			for _, id := range s.Rules {
				row(id).Errors = append(row(id).Errors, s.Name)
			}
			continue
		}
		// Only an expectation failed, or the spec is listed as failing:
		// nothing narrower than the spec's rules is known.
		wholeSpec := slices.Equal(failing, []string{check.ExpectRule}) || specListed(o)
		bad := func(r *RuleRow) {
			if o.Status == runner.Expected {
				r.Expected = append(r.Expected, s.Name)
			} else {
				r.Failed = append(r.Failed, s.Name)
			}
		}
		for _, rr := range o.Result.Rules {
			r := row(rr.Rule)
			named := slices.Contains(s.Rules, rr.Rule)
			switch {
			case rr.Verdict == check.Fail && !slices.Contains(s.Expect.Violations, rr.Rule):
				bad(r)
			case wholeSpec && named:
				bad(r)
			case rr.Verdict == check.Pass:
				r.Passed = append(r.Passed, s.Name)
			case rr.Verdict == check.NotObservable && named:
				r.Unobserved = append(r.Unobserved, s.Name)
			case rr.Verdict == check.NotExercised && named:
				r.Unexercised = append(r.Unexercised, s.Name)
			}
		}
		for _, id := range failing { // rules no oracle owns (RPV), expected but unseen
			judged := slices.ContainsFunc(o.Result.Rules, func(rr check.RuleResult) bool { return rr.Rule == id })
			if id != check.ExpectRule && (!judged || slices.Contains(o.Result.Unseen, id)) {
				bad(row(id))
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case rules.Less(a, b):
			return -1
		case rules.Less(b, a):
			return 1
		}
		return 0
	})
	for _, id := range order {
		r := rows[id]
		r.Status = rowStatus(*r)
		if fam, _, _ := strings.Cut(id, "-"); families != nil && !slices.Contains(families, fam) {
			r.Status = NotClaimed
		}
		m.Rules = append(m.Rules, *r)
	}
	return m
}

func specListed(o runner.Outcome) bool {
	for _, e := range o.Listed {
		if !e.Rule {
			return true
		}
	}
	return false
}

// rowStatus: the worst that happened wins; passed needs one trace in which
// an oracle examined the rule and it held.
func rowStatus(r RuleRow) runner.Status {
	switch {
	case len(r.Failed) > 0:
		return runner.Failed
	case len(r.Errors) > 0:
		return runner.Errored
	case len(r.Expected) > 0:
		return runner.Expected
	case len(r.Passed) > 0:
		return runner.Passed
	case len(r.Unobserved) > 0:
		return NotObservable
	case len(r.Unexercised) > 0:
		return NotExercised
	case len(r.Skipped) > 0:
		return runner.Skipped
	}
	return NotCovered
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// WriteJSON writes the matrix as one indented JSON document.
func (m Matrix) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}

// statusOrder is how totals are listed.
var statusOrder = []runner.Status{runner.Passed, runner.Failed, runner.Expected, runner.Skipped, runner.Errored}

// WriteMarkdown writes the matrix as a page a port can publish.
func (m Matrix) WriteMarkdown(w io.Writer) error {
	m = escapeFields(m) // names from outside cannot forge lines or rows
	var b strings.Builder
	name := m.Implementation.Name
	if name == "" {
		name = m.Target
	}
	fmt.Fprintf(&b, "# Kernel replay compliance: %s", name)
	if m.Implementation.Version != "" {
		fmt.Fprintf(&b, " %s", m.Implementation.Version)
	}
	profile := driver.ProfileOf(m.Sources)
	if profile == "" {
		profile = "custom"
	}
	fmt.Fprintf(&b, "\n\nTarget `%s`, protocol `%s`, profile %s (sources %s). %d specs:", m.Target, m.Protocol, profile, sourcesText(m.Sources), len(m.Specs))
	var parts []string
	for _, s := range statusOrder {
		parts = append(parts, fmt.Sprintf("%d %s", m.Totals[s], s))
	}
	b.WriteString(" " + strings.Join(parts, ", ") + ".\n\n")
	rulesBy := map[runner.Status]int{}
	for _, r := range m.Rules {
		rulesBy[r.Status]++
	}
	parts = parts[:0]
	for _, s := range append(statusOrder, NotObservable, NotExercised, NotClaimed, NotCovered) {
		if rulesBy[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", rulesBy[s], s))
		}
	}
	fmt.Fprintf(&b, "%d rules: %s.\n\n", len(m.Rules), strings.Join(parts, ", "))
	b.WriteString("A rule passes where an oracle examined an instance of it in a spec's trace and it held.\n\n")
	b.WriteString("## Rules\n\n| rule | status | passed | failed | expected failure | not observable | not exercised | skipped | error | requires |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range m.Rules {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %s |\n", r.Rule, mark(r.Status),
			len(r.Passed), len(r.Failed), len(r.Expected), len(r.Unobserved), len(r.Unexercised), len(r.Skipped), len(r.Errors), cell(r.Requires))
	}
	b.WriteString("\n## Specs\n\n| spec | status | fails | note |\n| --- | --- | --- | --- |\n")
	for _, s := range m.Specs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(s.Spec), mark(s.Status), cell(strings.Join(s.Fails, ", ")), cell(s.Reason))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mark makes the statuses that need a reader's eye stand out.
func mark(s runner.Status) string {
	if s == runner.Failed || s == runner.Errored {
		return "**" + string(s) + "**"
	}
	return string(s)
}

// cell keeps text inside one table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
