package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/trace"
)

// JSONVersion names the shape of the JSON report; it changes only when a
// field is renamed or removed. v2 is a stream: one JSON object a line.
const JSONVersion = "replayspec.report/v2"

// JSONLine is one line of the JSON report stream (like go test -json): a
// "start" line first, a "result" line as each spec finishes, an "end"
// line with the summary last. A job that is killed keeps the lines it
// wrote; a stream without its end line was cut short.
type JSONLine struct {
	Report string `json:"report,omitempty"` // JSONVersion, on the start line
	Event  string `json:"event"`            // start, result, end
	// Start.
	Target string `json:"target,omitempty"`
	XFail  string `json:"xfail_file,omitempty"`
	Shard  string `json:"shard,omitempty"` // k/n, of a run of one shard
	Cases  int    `json:"cases,omitempty"` // the results the run is to report
	// Generated: the generated specs run beside the library.
	Generated *Generated `json:"generated,omitempty"`
	// Result: the fields of one spec's result.
	*JSONResult
	// End.
	Summary *JSONSummary `json:"summary,omitempty"`
	// Stale are entries of the expected-failure list that no longer hold.
	Stale []JSONStale `json:"stale,omitempty"`
	// Stopped says why the run ended before every spec ran.
	Stopped string `json:"stopped,omitempty"`
}

// JSONSummary counts results by outcome.
type JSONSummary struct {
	Total     int     `json:"total"`
	Passed    int     `json:"passed"`
	Failed    int     `json:"failed"`
	Errors    int     `json:"errors"`
	Skipped   int     `json:"skipped"`
	XFailed   int     `json:"expected_failures"`
	Flaky     int     `json:"flaky,omitempty"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

// JSONResult is one spec's outcome: everything every format reports, so
// that a merged report (replayspec merge) says what the shards said.
type JSONResult struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	// Seed is a generated spec's seed (0: written by hand); Rerun then
	// runs it again alone.
	Seed int `json:"seed,omitempty"`
	// Run numbers the runs of a spec run several times (-count).
	Run     int    `json:"run,omitempty"`
	Verdict string `json:"verdict"` // pass, fail, error, skip
	// Outcome is the verdict with the expected-failure list applied:
	// passed, failed, expected failure, skipped, error.
	Outcome string `json:"outcome"`
	// Reason says why the outcome is an expected failure, a skip or an
	// error.
	Reason string `json:"reason,omitempty"`
	// Attempts is how many times the case ran (with --retries), when more
	// than once; FlakyFailure is what a flake's first failing attempt
	// showed.
	Attempts     int    `json:"attempts,omitempty"`
	FlakyFailure string `json:"flaky_failure,omitempty" text:"multiline"`
	// Listed are the keys of the expected-failure list that matched.
	Listed           []string        `json:"xfail,omitempty"`
	Rules            []string        `json:"rules,omitempty"`
	ExpectViolations []string        `json:"expect_violations,omitempty"`
	Passes           int             `json:"passes"`
	Events           int             `json:"events"`
	ElapsedMS        float64         `json:"elapsed_ms"`
	Violations       []JSONViolation `json:"violations,omitempty"`
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
	Judged []JSONRule `json:"judged,omitempty"`
	// NeverEnded are the loops the harness cut off.
	NeverEnded []JSONStopped `json:"never_ended,omitempty"`
	Error      string        `json:"error,omitempty" text:"multiline"`
	SkipReason string        `json:"skip_reason,omitempty"`
	TraceFile  string        `json:"trace_file,omitempty"`
	// Sources are the event sources the trace reports (its header).
	Sources []trace.Source `json:"sources,omitempty"`
	// Rerun is the command that runs the spec again and writes its trace.
	Rerun string `json:"rerun,omitempty"`
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
	Message  string `json:"message" text:"multiline"`
	Dispatch uint64 `json:"dispatch,omitempty"`
	Label    string `json:"label,omitempty"`
	// Events are the events involved, as in the trace.
	Events []trace.Event `json:"events,omitempty"`
}

// JSONStopped is a loop the harness cut off.
type JSONStopped struct {
	Label  string `json:"label"`
	Passes uint64 `json:"passes"`
}

// JSONStale is an expected-failure entry that no longer holds.
type JSONStale struct {
	Line    int      `json:"line"`
	Key     string   `json:"key"`
	Held    []string `json:"held"`
	Message string   `json:"message"`
}

// jsonStream writes one line per event.
type jsonStream struct {
	enc *json.Encoder
	w   *bufio.Writer
	sum summer
}

func newJSONStream(w io.Writer, h Header) (*jsonStream, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	s := &jsonStream{enc: enc, w: bw}
	return s, s.line(JSONLine{Report: JSONVersion, Event: "start", Target: h.Target, XFail: h.XFailFile, Shard: h.Shard, Cases: h.Cases, Generated: h.Generated})
}

func (s *jsonStream) line(l JSONLine) error {
	if err := s.enc.Encode(l); err != nil {
		return err
	}
	return s.w.Flush()
}

func (s *jsonStream) Add(r JSONResult) error {
	s.sum.add(r)
	return s.line(JSONLine{Event: "result", JSONResult: &r})
}

func (s *jsonStream) End(e End) error {
	sum := s.sum.summary()
	return s.line(JSONLine{Event: "end", Summary: &sum, Stale: e.Stale, Stopped: e.Stopped})
}

// ReadJSON reads a JSON report stream (as written by --format json) into
// its start line, results and end line; a stream cut short (no end line)
// is read as far as it goes and says so in stopped.
func ReadJSON(r io.Reader) (start JSONLine, results []JSONResult, end JSONLine, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var l JSONLine
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return start, results, end, fmt.Errorf("line %d: %v (want a replayspec --format json stream)", n, err)
		}
		switch l.Event {
		case "start":
			if l.Report != JSONVersion {
				return start, results, end, fmt.Errorf("line %d: report %q, want %s", n, l.Report, JSONVersion)
			}
			start = l
		case "result":
			if l.JSONResult == nil {
				return start, results, end, fmt.Errorf("line %d: a result line without a result", n)
			}
			results = append(results, *l.JSONResult)
		case "end":
			end = l
		default:
			return start, results, end, fmt.Errorf("line %d: unknown event %q (want start, result or end)", n, l.Event)
		}
	}
	if err := sc.Err(); err != nil {
		return start, results, end, err
	}
	if start.Report == "" {
		return start, results, end, errors.New("no start line: not a replayspec --format json stream")
	}
	if end.Event == "" {
		end = JSONLine{Event: "end", Stopped: "the stream was cut short: the run did not finish"}
	}
	return start, results, end, nil
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

// Outcome rebuilds the outcome a record was made from, as far as the
// matrix needs it (no trace): for reports merged from shards.
func Outcome(r JSONResult) runner.Outcome {
	res := runner.Result{Trace: trace.Trace{Header: trace.Header{Sources: r.Sources}}, Run: r.Run, Unseen: r.Unseen, Unexercised: r.Unexercised,
		NothingJudged: r.NothingJudged, Unobserved: r.Unobserved, SkipReason: r.SkipReason}
	res.Spec.Name, res.Spec.File, res.Spec.Rules, res.Spec.Expect.Violations = r.Name, r.File, r.Rules, r.ExpectViolations
	if r.Error != "" {
		res.Err = errors.New(r.Error)
	}
	for _, v := range r.Violations {
		res.Violations = append(res.Violations, check.Violation{Rule: v.Rule, Requires: v.Requires, Message: v.Message, Dispatch: v.Dispatch, Label: v.Label, Events: v.Events})
	}
	for _, v := range r.Expected {
		res.Expected = append(res.Expected, check.Violation{Rule: v.Rule, Requires: v.Requires, Message: v.Message, Dispatch: v.Dispatch, Label: v.Label, Events: v.Events})
	}
	for _, j := range r.Judged {
		rr := check.RuleResult{Rule: j.Rule, Verdict: check.Verdict(j.Verdict), Instances: j.Instances}
		for _, m := range j.Missing {
			rr.Missing = append(rr.Missing, trace.Source(m))
		}
		res.Rules = append(res.Rules, rr)
	}
	o := runner.Outcome{Result: res, Status: runner.Status(r.Outcome), Reason: r.Reason}
	for _, k := range r.Listed {
		o.Listed = append(o.Listed, runner.XEntry{Key: k, Rule: runner.IsRuleKey(k)})
	}
	return o
}
