// Package report writes the results of running specs for people (Text), for
// machines (JSON), for CI (JUnit) and for eyes (Timeline, and HTMLPage: one
// self-contained page with the compliance matrix and a picture of each
// dispatch). Every format but the page is a stream: a spec's result is
// written as the spec finishes, so a run that is interrupted or killed
// keeps what it did; the page draws each spec as it finishes and is written
// at the end.
package report

import (
	"fmt"
	"io"
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
	// Verbose lists, under each spec of the text report, every rule
	// judged with its verdict and the instances examined.
	Verbose bool
	// Color marks verdicts with ANSI colours in the text report.
	Color bool
	// TraceFiles maps a spec name to the file its NDJSON trace was
	// written to, so that a failure can point at it.
	TraceFiles map[string]string
	// Rerun is the command that runs a spec again and writes its trace,
	// for "where to look"; nil gives "replayspec run --trace-out
	// NAME.ndjson FILE".
	Rerun func(s spec.Spec) string
	// XFailFile names the expected-failure list applied, if any.
	XFailFile string
}

// Header opens a stream.
type Header struct {
	Target    string
	XFailFile string
	// Shard is the run's --shard k/n, when it ran one shard; Cases is
	// how many results the run is to report: merge knows from them which
	// shards it was given, which are missing and whether each is whole.
	Shard string
	Cases int
	// Generated says which generated specs run beside the library, if any.
	Generated *Generated
}

// Generated describes the generated specs of a run: Count specs, of seeds
// Seed to Seed+Count-1, drawn within Caps (what the target claims);
// Command writes them as files.
type Generated struct {
	Count   int      `json:"count"`
	Seed    int      `json:"seed"`
	Caps    []string `json:"caps"`
	Command string   `json:"command"`
}

// Line is how the text report states it.
func (g *Generated) Line() string {
	return fmt.Sprintf("GENERATED %d %s beside the library, seeds %d..%d (--gen %d --gen-seed %d); as files: %s",
		g.Count, plural(g.Count, "spec", "specs"), g.Seed, g.Seed+g.Count-1, g.Count, g.Seed, g.Command)
}

// End closes a stream: what became of the expected-failure list, and why
// the run stopped early, if it did.
type End struct {
	Stale   []JSONStale
	Stopped string
}

// Stream writes results as they come: Add after each spec, End once.
type Stream interface {
	Add(r JSONResult) error
	End(e End) error
}

// Formats are the report formats a Stream writes.
var Formats = []string{"text", "json", "junit"}

// NewStream starts a report in format on w; its header is written now.
func NewStream(format string, w io.Writer, h Header, opts Options) (Stream, error) {
	switch format {
	case "text":
		s := &textStream{w: w, opts: opts, gen: h.Generated}
		if h.Generated != nil {
			return s, s.write(h.Generated.Line() + "\n")
		}
		return s, nil
	case "json":
		return newJSONStream(w, h)
	case "junit":
		return newJUnitStream(w, h)
	}
	return nil, fmt.Errorf("unknown format %q: use %s", format, strings.Join(Formats, ", "))
}

// Record makes the report's record of one outcome.
func Record(o runner.Outcome, opts Options) JSONResult {
	r := o.Result
	jr := JSONResult{
		Name:             r.Spec.Name,
		File:             r.Spec.File,
		Run:              r.Run,
		Verdict:          string(r.Verdict()),
		Outcome:          string(o.Status),
		Rules:            r.Spec.Rules,
		ExpectViolations: r.Spec.Expect.Violations,
		Passes:           Passes(r.Trace),
		Events:           len(r.Trace.Events),
		ElapsedMS:        ms(r.Elapsed.Seconds()),
		Violations:       jsonViolations(r.Violations),
		Expected:         jsonViolations(r.Expected),
		Unseen:           r.Unseen,
		Unexercised:      r.Unexercised,
		NothingJudged:    r.NothingJudged,
		Unobserved:       r.Unobserved,
		Judged:           jsonRules(r.Rules),
		SkipReason:       r.SkipReason,
		TraceFile:        opts.TraceFiles[r.Spec.Name],
		Sources:          r.Trace.Header.Sources,
	}
	if jr.Name == "" {
		jr.Name = r.Spec.File
	}
	if o.Status != runner.Passed && o.Status != runner.Failed {
		jr.Reason = o.Reason
	}
	for _, e := range o.Listed {
		jr.Listed = append(jr.Listed, e.Key)
	}
	if r.Err != nil {
		jr.Error = r.Err.Error()
	}
	stopped := runner.NeverEnded(r.Trace)
	if t := r.Tally; t != nil {
		jr.Passes, jr.Events, stopped = t.Passes, t.Events, t.Stopped
	}
	for _, st := range stopped {
		jr.NeverEnded = append(jr.NeverEnded, JSONStopped{Label: st.Label, Passes: st.Passes})
	}
	if r.Spec.File != "" && jr.TraceFile == "" {
		if opts.Rerun != nil {
			jr.Rerun = opts.Rerun(r.Spec)
		} else {
			jr.Rerun = "replayspec run --trace-out " + r.Spec.Name + ".ndjson " + r.Spec.File
		}
	}
	return jr
}

// FlakeOutcome makes a flaky case's outcome say so, with why: it failed,
// then passed on a rerun, or it is listed as known-flaky (file).
func FlakeOutcome(o *runner.Outcome, a runner.Attempted, file string) {
	if !a.Flaky {
		return
	}
	o.Status = runner.Flaky
	o.Reason = fmt.Sprintf("failed, then passed on attempt %d", a.Attempts)
	if a.Known != "" {
		o.Reason = fmt.Sprintf("failed on all %d attempts; listed in %s as known-flaky (%s)", a.Attempts, file, a.Known)
	}
}

// Attempts adds to a record what its reruns showed: how many, and for a
// flake the failure it showed first.
func Attempts(rec *JSONResult, a runner.Attempted) {
	if a.Attempts > 1 {
		rec.Attempts = a.Attempts
	}
	if !a.Flaky || a.Failed == nil {
		return
	}
	var b strings.Builder
	for _, v := range a.Failed.Violations {
		b.WriteString(v.String() + "\n")
	}
	if a.Failed.Err != nil {
		b.WriteString(a.Failed.Err.Error() + "\n")
	}
	rec.FlakyFailure = b.String()
}

// Outcomes gives results the outcomes of a run without an
// expected-failure list: the runner's verdicts.
func Outcomes(results []runner.Result) []runner.Outcome {
	return (runner.XFail{}).Apply(results)
}

// Write writes a whole report of outcomes in format: a stream written at
// once.
func Write(w io.Writer, format string, outcomes []runner.Outcome, opts Options, end End) error {
	h := Header{Target: opts.Target, XFailFile: opts.XFailFile}
	st, err := NewStream(format, w, h, opts)
	if err != nil {
		return err
	}
	for _, o := range outcomes {
		if err := st.Add(Record(o, opts)); err != nil {
			return err
		}
	}
	return st.End(end)
}

// Text writes a report of results for people.
func Text(w io.Writer, results []runner.Result, opts Options) error {
	return Write(w, "text", Outcomes(results), opts, End{})
}

// JSON writes the JSON report stream of results.
func JSON(w io.Writer, results []runner.Result, opts Options) error {
	return Write(w, "json", Outcomes(results), opts, End{})
}

// JUnit writes the JUnit report of results.
func JUnit(w io.Writer, results []runner.Result, opts Options) error {
	return Write(w, "junit", Outcomes(results), opts, End{})
}

// StaleOf turns the list's stale entries into the report's.
func StaleOf(file string, st []runner.StaleEntry) []JSONStale {
	var out []JSONStale
	for _, s := range st {
		out = append(out, JSONStale{Line: s.Entry.Line, Key: s.Entry.Key, Held: s.Held, Message: s.Message(file)})
	}
	return out
}

// summer counts records by outcome.
type summer struct{ s JSONSummary }

func (m *summer) add(r JSONResult) {
	m.s.Total++
	m.s.ElapsedMS += r.ElapsedMS
	switch runner.Status(r.Outcome) {
	case runner.Passed:
		m.s.Passed++
	case runner.Failed:
		m.s.Failed++
	case runner.Errored:
		m.s.Errors++
	case runner.Skipped:
		m.s.Skipped++
	case runner.Expected:
		m.s.XFailed++
	case runner.Flaky:
		m.s.Flaky++
	}
}

func (m *summer) summary() JSONSummary {
	s := m.s
	s.ElapsedMS = float64(int64(s.ElapsedMS*1e3+0.5)) / 1e3
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

func requiresOf(id string) string {
	return requires(check.Violation{Rule: id})
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

func fromMS(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func sourcesText(ss []trace.Source) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " and ")
}
