package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
)

// textStream writes a report for people: one line per spec as it
// finishes, and for each failure the rule, what it requires, what was
// found, the events involved and where to look.
type textStream struct {
	w    io.Writer
	opts Options
	sum  summer
	gen  *Generated // the generated specs, said again at the end
}

func (s *textStream) Add(r JSONResult) error {
	s.sum.add(r)
	r = escapeFields(r) // every name from outside, through Name
	var b strings.Builder
	writeRecord(&b, r, s.opts)
	return s.write(b.String())
}

// write sends text out, control characters escaped, verdicts coloured.
func (s *textStream) write(text string) error {
	if text == "" {
		return nil
	}
	text = Clean(text, true)
	if s.opts.Color {
		text = colour(text)
	}
	bw := bufio.NewWriter(s.w)
	bw.WriteString(text)
	return bw.Flush()
}

func (s *textStream) End(e End) error {
	e = escapeFields(e)
	var b strings.Builder
	for _, st := range e.Stale {
		fmt.Fprintf(&b, "STALE %s\n", st.Message)
	}
	sum := s.sum.summary()
	fmt.Fprintf(&b, "\n%d %s: %d passed, %d failed, %d errors, %d skipped", sum.Total, plural(sum.Total, "spec", "specs"),
		sum.Passed, sum.Failed, sum.Errors, sum.Skipped)
	if sum.XFailed > 0 || s.opts.XFailFile != "" {
		fmt.Fprintf(&b, ", %d expected %s", sum.XFailed, plural(sum.XFailed, "failure", "failures"))
	}
	if sum.Flaky > 0 {
		fmt.Fprintf(&b, ", %d flaky", sum.Flaky)
	}
	if len(e.Stale) > 0 {
		fmt.Fprintf(&b, ", %d stale %s in %s", len(e.Stale), plural(len(e.Stale), "entry", "entries"), Name(s.opts.XFailFile))
	}
	fmt.Fprintf(&b, " (%s)\n", millis(fromMS(sum.ElapsedMS)))
	if e.Stopped != "" {
		fmt.Fprintf(&b, "STOPPED %s\n", e.Stopped)
	}
	if s.gen != nil {
		b.WriteString(s.gen.Line() + "\n")
	}
	return s.write(b.String())
}

// verdictWords are the first words of a spec's block, by outcome.
var verdictWords = map[runner.Status]string{
	runner.Passed: "PASS", runner.Failed: "FAIL", runner.Errored: "ERROR", runner.Skipped: "SKIP", runner.Expected: "XFAIL",
	runner.Flaky: "FLAKY",
}

var colours = map[string]string{
	"PASS": "\033[32m", "FAIL": "\033[31m", "ERROR": "\033[1;31m", "SKIP": "\033[33m", "XFAIL": "\033[36m", "FLAKY": "\033[35m", "STALE": "\033[1;31m", "STOPPED": "\033[1;33m",
}

// colour marks the verdict word that starts a line.
func colour(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		word, rest, ok := strings.Cut(l, " ")
		if c, known := colours[word]; ok && known {
			lines[i] = c + word + "\033[0m " + rest
		}
	}
	return strings.Join(lines, "")
}

func writeRecord(w io.Writer, r JSONResult, opts Options) {
	name := r.Name
	if r.Run > 0 {
		name = fmt.Sprintf("%s#%d", name, r.Run)
	}
	status := runner.Status(r.Outcome)
	word := verdictWords[status]
	stats := fmt.Sprintf("%d %s, %s", r.Passes, plural(r.Passes, "pass", "passes"), millis(fromMS(r.ElapsedMS)))
	switch {
	case status == runner.Passed:
		if opts.Quiet {
			return
		}
		for _, ne := range r.NeverEnded {
			stats += fmt.Sprintf("; %s never ended, as expected, after %d passes", ne.Label, ne.Passes)
		}
		if len(r.Expected) > 0 {
			stats += "; caught as expected: " + strings.Join(ruleIDs(r.Expected), ", ")
		}
		if len(r.Unobserved) > 0 {
			stats += "; not observable here: expect." + strings.Join(r.Unobserved, ", expect.")
		}
		fmt.Fprintf(w, "PASS %s (%s)\n", name, stats)
		writeJudged(w, r, opts)
		return
	case status == runner.Skipped:
		if !opts.Quiet {
			fmt.Fprintf(w, "SKIP %s: %s\n", name, r.SkipReason)
		}
		return
	case status == runner.Flaky:
		fmt.Fprintf(w, "FLAKY %s (%s): %s\n", name, stats, r.Reason)
		return
	case status == runner.Expected:
		fmt.Fprintf(w, "XFAIL %s (%s): expected failure: %s\n", name, stats, r.Reason)
		if !opts.Verbose {
			return
		}
	case runner.Verdict(r.Verdict) == runner.Error:
		fmt.Fprintf(w, "ERROR %s (%s)\n", name, stats)
		fmt.Fprintf(w, "  the run did not finish: %s\n", indentRest(r.Error, "  "))
	case status == runner.Errored:
		// The list made a passing spec an error: it says it fails.
		fmt.Fprintf(w, "ERROR %s (%s)\n  %s\n", name, stats, r.Reason)
		return
	default:
		fmt.Fprintf(w, "%s %s (%s)\n", word, name, stats)
	}
	if r.File != "" {
		fmt.Fprintf(w, "  spec: %s\n", r.File)
	}
	for _, ne := range r.NeverEnded {
		fmt.Fprintf(w, "  note: %s never ended: its loop was stopped after %d passes, when the run's pass budget (limits.max_passes, --max-passes) or time (--timeout) ran out\n", ne.Label, ne.Passes)
	}
	for _, vi := range r.Violations {
		writeViolation(w, vi)
	}
	if len(r.Unexercised) > 0 {
		fmt.Fprintf(w, "  [not exercised] %s\n", strings.Join(r.Unexercised, ", "))
		fmt.Fprintf(w, "    found:    the spec names %s under rules, but no oracle examined an instance of %s in the trace:\n", plural(len(r.Unexercised), "this rule", "these rules"), plural(len(r.Unexercised), "it", "them"))
		fmt.Fprintf(w, "              the spec does not show %s, or the implementation never did what the spec sets up\n", plural(len(r.Unexercised), "it", "them"))
	}
	if r.NothingJudged && runner.Verdict(r.Verdict) != runner.Error {
		fmt.Fprintf(w, "  [nothing judged] no oracle found anything to examine in the trace (%d events): silence is not a pass\n", r.Events)
	}
	for _, id := range r.Unseen {
		fmt.Fprintf(w, "  [%s] expected but not reported\n", id)
		fmt.Fprintf(w, "    found:    the spec lists %s under expect.violations, but no oracle reported it\n", id)
		if req := requiresOf(id); req != "" {
			fmt.Fprintf(w, "    requires: %s\n", req)
		}
	}
	writeJudged(w, r, opts)
	fmt.Fprintf(w, "  where to look: %s\n", whereToLook(r))
}

// writeJudged lists, with -v, every rule judged and its instances.
func writeJudged(w io.Writer, r JSONResult, opts Options) {
	if !opts.Verbose || len(r.Judged) == 0 {
		return
	}
	fmt.Fprintf(w, "  rules judged:\n")
	for _, j := range r.Judged {
		line := fmt.Sprintf("    %-7s %-14s %d %s", j.Rule, j.Verdict, j.Instances, plural(j.Instances, "instance", "instances"))
		if len(j.Missing) > 0 {
			line += " (the trace lacks " + strings.Join(j.Missing, " and ") + " events)"
		}
		if slices.Contains(r.Rules, j.Rule) {
			line += "  [named by the spec]"
		}
		fmt.Fprintln(w, line)
	}
}

func writeViolation(w io.Writer, v JSONViolation) {
	fmt.Fprintf(w, "  [%s] %s\n", v.Rule, v.Requires)
	fmt.Fprintf(w, "    found:    %s\n", indentRest(v.Message, "              "))
	switch {
	case v.Label != "" && v.Dispatch != 0:
		fmt.Fprintf(w, "    dispatch: %s (id %d)\n", v.Label, v.Dispatch)
	case v.Label != "":
		fmt.Fprintf(w, "    about:    %s\n", v.Label)
	case v.Dispatch != 0:
		fmt.Fprintf(w, "    dispatch: id %d\n", v.Dispatch)
	}
	for i, e := range v.Events {
		lead := "              "
		if i == 0 {
			lead = "    events:   "
		}
		fmt.Fprintf(w, "%s%s\n", lead, check.FormatEvent(e))
	}
}

// whereToLook points at the spec file and the whole trace.
func whereToLook(r JSONResult) string {
	var parts []string
	if r.File != "" {
		parts = append(parts, "the spec "+r.File)
	}
	switch {
	case r.TraceFile != "":
		parts = append(parts, "the whole trace in "+r.TraceFile)
	case r.Rerun != "":
		parts = append(parts, "the whole trace: "+r.Rerun)
	}
	if len(parts) == 0 {
		return "the events above (seq numbers count from the trace's first event)"
	}
	return strings.Join(parts, "; ")
}

func ruleIDs(vs []JSONViolation) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// indentRest indents every line of s but the first.
func indentRest(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
