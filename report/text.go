package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Text writes a report for people: one line per spec, and for each failure
// the rule, what it requires, what was found, the events involved and
// where to look.
func Text(w io.Writer, results []runner.Result, opts Options) error {
	bw := bufio.NewWriter(w)
	for _, r := range results {
		writeResult(bw, r, opts)
	}
	s := Summarize(results)
	fmt.Fprintf(bw, "\n%d %s: %d passed, %d failed, %d errors, %d skipped (%s)\n",
		s.Total, plural(s.Total, "spec", "specs"), s.Passed, s.Failed, s.Errors, s.Skipped, millis(s.Elapsed))
	return bw.Flush()
}

func writeResult(w io.Writer, r runner.Result, opts Options) {
	name := r.Spec.Name
	if name == "" {
		name = r.Spec.File
	}
	v := r.Verdict()
	stats := fmt.Sprintf("%d %s, %s", Passes(r.Trace), plural(Passes(r.Trace), "pass", "passes"), millis(r.Elapsed))
	switch v {
	case runner.Pass:
		if opts.Quiet {
			return
		}
		for _, ne := range neverEnded(r.Trace) {
			stats += fmt.Sprintf("; %s never ended, as expected, after %d passes", ne.label, ne.passes)
		}
		if len(r.Expected) > 0 {
			stats += "; caught as expected: " + strings.Join(ruleIDs(r.Expected), ", ")
		}
		if len(r.Unobserved) > 0 {
			stats += "; not observable here: expect." + strings.Join(r.Unobserved, ", expect.")
		}
		fmt.Fprintf(w, "PASS %s (%s)\n", name, stats)
		return
	case runner.Skip:
		if opts.Quiet {
			return
		}
		fmt.Fprintf(w, "SKIP %s: %s\n", name, r.SkipReason)
		return
	case runner.Error:
		fmt.Fprintf(w, "ERROR %s (%s)\n", name, stats)
		fmt.Fprintf(w, "  the target could not run the spec: %s\n", indentRest(r.Err.Error(), "  "))
	default:
		fmt.Fprintf(w, "FAIL %s (%s)\n", name, stats)
	}
	if r.Spec.File != "" {
		fmt.Fprintf(w, "  spec: %s\n", r.Spec.File)
	}
	for _, ne := range neverEnded(r.Trace) {
		fmt.Fprintf(w, "  note: %s never ended: its indefinite loop was stopped after %d passes, when the run's pass budget (limits.max_passes, --max-passes) or time (--timeout) ran out\n", ne.label, ne.passes)
	}
	for _, vi := range r.Violations {
		writeViolation(w, vi)
	}
	if len(r.Unexercised) > 0 {
		fmt.Fprintf(w, "  [not exercised] %s\n", strings.Join(r.Unexercised, ", "))
		fmt.Fprintf(w, "    found:    the spec names %s under rules, but no oracle examined an instance of %s in the trace:\n", plural(len(r.Unexercised), "this rule", "these rules"), plural(len(r.Unexercised), "it", "them"))
		fmt.Fprintf(w, "              the spec does not show %s, or the implementation never did what the spec sets up\n", plural(len(r.Unexercised), "it", "them"))
	}
	if r.NothingJudged {
		fmt.Fprintf(w, "  [nothing judged] no oracle found anything to examine in the trace (%d events): silence is not a pass\n", len(r.Trace.Events))
	}
	for _, id := range r.Unseen {
		fmt.Fprintf(w, "  [%s] expected but not reported\n", id)
		fmt.Fprintf(w, "    found:    the spec lists %s under expect.violations, but no oracle reported it\n", id)
		if req := requiresOf(id); req != "" {
			fmt.Fprintf(w, "    requires: %s\n", req)
		}
	}
	fmt.Fprintf(w, "  where to look: %s\n", whereToLook(r, opts))
}

func writeViolation(w io.Writer, v check.Violation) {
	fmt.Fprintf(w, "  [%s] %s\n", v.Rule, requires(v))
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
func whereToLook(r runner.Result, opts Options) string {
	var parts []string
	if r.Spec.File != "" {
		parts = append(parts, "the spec "+r.Spec.File)
	}
	if f := opts.TraceFiles[r.Spec.Name]; f != "" {
		parts = append(parts, "the whole trace in "+f)
	} else if r.Spec.File != "" {
		rerun := opts.Rerun
		if rerun == nil {
			rerun = func(s spec.Spec) string { return "replayspec run --trace-out " + r.Spec.Name + ".ndjson " + s.File }
		}
		parts = append(parts, "the whole trace: "+rerun(r.Spec))
	}
	if len(parts) == 0 {
		return "the events above (seq numbers count from the trace's first event)"
	}
	return strings.Join(parts, "; ")
}

func requiresOf(id string) string {
	return requires(check.Violation{Rule: id})
}

func ruleIDs(vs []check.Violation) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vs {
		if !seen[v.Rule] {
			seen[v.Rule] = true
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

// endless is a dispatch whose indefinite loop spent the pass budget.
type endless struct {
	label  string
	passes uint64
}

// neverEnded lists the dispatches of t that never ended, named by the
// spec's label when an event of the dispatch carries it.
func neverEnded(t trace.Trace) []endless {
	var out []endless
	for _, e := range t.Events {
		if e.Type != trace.NeverEnded {
			continue
		}
		ne := endless{label: fmt.Sprintf("dispatch %d", e.Dispatch)}
		ne.passes, _ = e.PassOf()
		for _, o := range t.Events {
			if o.Dispatch == e.Dispatch && o.Label != "" {
				ne.label = o.Label
				break
			}
		}
		out = append(out, ne)
	}
	return out
}
