package report

import (
	"encoding/json"
	"io"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// JSONVersion names the shape of the JSON report; it changes only when a
// field is renamed or removed.
const JSONVersion = "replayspec.report/v1"

// JSONReport is the machine-readable report. Field names are stable.
type JSONReport struct {
	Report  string       `json:"report"` // JSONVersion
	Target  string       `json:"target,omitempty"`
	Summary JSONSummary  `json:"summary"`
	Results []JSONResult `json:"results"`
}

// JSONSummary counts results by verdict.
type JSONSummary struct {
	Total     int     `json:"total"`
	Passed    int     `json:"passed"`
	Failed    int     `json:"failed"`
	Errors    int     `json:"errors"`
	Skipped   int     `json:"skipped"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

// JSONResult is one spec's outcome.
type JSONResult struct {
	Name       string          `json:"name"`
	File       string          `json:"file,omitempty"`
	Verdict    string          `json:"verdict"` // pass, fail, error, skip
	Rules      []string        `json:"rules,omitempty"`
	Passes     int             `json:"passes"`
	Events     int             `json:"events"`
	ElapsedMS  float64         `json:"elapsed_ms"`
	Violations []JSONViolation `json:"violations,omitempty"`
	// Expected are violations the spec listed under expect.violations.
	Expected []JSONViolation `json:"expected,omitempty"`
	// Unseen are rules of expect.violations no oracle reported.
	Unseen []string `json:"unseen,omitempty"`
	// Unexercised are rules the spec names that no oracle examined.
	Unexercised []string `json:"unexercised,omitempty"`
	// NothingJudged: no oracle found anything to examine in the trace.
	NothingJudged bool `json:"nothing_judged,omitempty"`
	// Unobserved are expectations (expect keys) the trace cannot show.
	Unobserved []string `json:"unobserved_expectations,omitempty"`
	// Judged is every oracle rule's verdict on the trace, with the
	// instances examined: pass means examined and held.
	Judged     []JSONRule `json:"judged,omitempty"`
	Error      string     `json:"error,omitempty"`
	SkipReason string     `json:"skip_reason,omitempty"`
	TraceFile  string     `json:"trace_file,omitempty"`
}

// JSONRule is one rule's verdict on one trace.
type JSONRule struct {
	Rule      string `json:"rule"`
	Verdict   string `json:"verdict"` // pass, fail, not exercised, not observable
	Instances int    `json:"instances"`
	// Missing are the event sources the trace lacks (not observable).
	Missing []string `json:"missing,omitempty"`
}

// JSONViolation is one broken rule or expectation.
type JSONViolation struct {
	Rule     string `json:"rule"`
	Family   string `json:"family"`
	Requires string `json:"requires"`
	Message  string `json:"message"`
	Dispatch uint64 `json:"dispatch,omitempty"`
	Label    string `json:"label,omitempty"`
	// Events are the events involved, as in the trace.
	Events []trace.Event `json:"events,omitempty"`
}

// BuildJSON turns results into the JSON report's structure.
func BuildJSON(results []runner.Result, opts Options) JSONReport {
	s := Summarize(results)
	rep := JSONReport{
		Report: JSONVersion,
		Target: opts.Target,
		Summary: JSONSummary{Total: s.Total, Passed: s.Passed, Failed: s.Failed, Errors: s.Errors,
			Skipped: s.Skipped, ElapsedMS: ms(s.Elapsed.Seconds())},
		Results: make([]JSONResult, 0, len(results)),
	}
	for _, r := range results {
		jr := JSONResult{
			Name:          r.Spec.Name,
			File:          r.Spec.File,
			Verdict:       string(r.Verdict()),
			Rules:         r.Spec.Rules,
			Passes:        Passes(r.Trace),
			Events:        len(r.Trace.Events),
			ElapsedMS:     ms(r.Elapsed.Seconds()),
			Violations:    jsonViolations(r.Violations),
			Expected:      jsonViolations(r.Expected),
			Unseen:        r.Unseen,
			Unexercised:   r.Unexercised,
			NothingJudged: r.NothingJudged,
			Unobserved:    r.Unobserved,
			Judged:        jsonRules(r.Rules),
			SkipReason:    r.SkipReason,
			TraceFile:     opts.TraceFiles[r.Spec.Name],
		}
		if r.Err != nil {
			jr.Error = r.Err.Error()
		}
		rep.Results = append(rep.Results, jr)
	}
	return rep
}

// JSON writes the machine-readable report, indented.
func JSON(w io.Writer, results []runner.Result, opts Options) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(BuildJSON(results, opts))
}

func jsonRules(rs []check.RuleResult) []JSONRule {
	var out []JSONRule
	for _, r := range rs {
		jr := JSONRule{Rule: r.Rule, Verdict: string(r.Verdict), Instances: r.Instances}
		for _, m := range r.Missing {
			jr.Missing = append(jr.Missing, string(m))
		}
		out = append(out, jr)
	}
	return out
}

func jsonViolations(vs []check.Violation) []JSONViolation {
	var out []JSONViolation
	for _, v := range vs {
		out = append(out, JSONViolation{Rule: v.Rule, Family: family(v.Rule), Requires: requires(v),
			Message: v.Message, Dispatch: v.Dispatch, Label: v.Label, Events: v.Events})
	}
	return out
}

// ms converts seconds to milliseconds rounded to microseconds.
func ms(sec float64) float64 {
	return float64(int64(sec*1e6+0.5)) / 1e3
}
