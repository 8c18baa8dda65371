// Package report writes the results of running specs for people (Text), for
// machines (JSON), for CI (JUnit) and for eyes (Timeline).
package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Options shape a report.
type Options struct {
	// Target names the target the specs ran on (for headers).
	Target string
	// Quiet leaves passing and skipped specs out of the text report; the
	// summary line stays.
	Quiet bool
	// TraceFiles maps a spec name to the file its NDJSON trace was
	// written to, so that a failure can point at it.
	TraceFiles map[string]string
	// Rerun is the command that runs a spec again and writes its trace,
	// for "where to look"; nil gives "replayspec run --trace-out
	// NAME.ndjson FILE".
	Rerun func(s spec.Spec) string
	// Flakes are the cases that failed and then passed on a rerun, or
	// failed and are listed as known-flaky: JUnit lists them in a suite of
	// their own.
	Flakes []runner.Attempted
}

// Summary counts results by verdict.
type Summary struct {
	Total   int           `json:"total"`
	Passed  int           `json:"passed"`
	Failed  int           `json:"failed"`
	Errors  int           `json:"errors"`
	Skipped int           `json:"skipped"`
	Elapsed time.Duration `json:"-"`
}

// Summarize counts results by verdict.
func Summarize(results []runner.Result) Summary {
	var s Summary
	for _, r := range results {
		s.Total++
		s.Elapsed += r.Elapsed
		switch r.Verdict() {
		case runner.Pass:
			s.Passed++
		case runner.Fail:
			s.Failed++
		case runner.Error:
			s.Errors++
		case runner.Skip:
			s.Skipped++
		}
	}
	return s
}

// Passes counts the passes a trace ran (PASS ENTER callbacks).
func Passes(t trace.Trace) int {
	n := 0
	for _, e := range t.Events {
		if e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter {
			n++
		}
	}
	return n
}

// family is the rule family of a rule ID ("PC" for "PC-3"); expectations
// are their own family.
func family(id string) string {
	if r, ok := rules.Lookup(id); ok {
		return r.Family
	}
	if id == check.ExpectRule {
		return check.ExpectRule
	}
	f, _, _ := strings.Cut(id, "-")
	return f
}

// requires is what a rule requires, from the violation or the catalogue.
func requires(v check.Violation) string {
	if v.Requires != "" {
		return v.Requires
	}
	if r, ok := rules.Lookup(v.Rule); ok {
		return r.Text
	}
	return ""
}

// millis renders a duration in milliseconds, e.g. "0.2 ms", "12.5 ms",
// with more decimals below 0.1 ms so that a fast spec never reads "0.0".
func millis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	prec := 1
	if ms > 0 && ms < 0.1 {
		prec = 3
	}
	return strconv.FormatFloat(ms, 'f', prec, 64) + " ms"
}
