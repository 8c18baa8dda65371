package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

func cb(seq, time, thread, dispatch uint64, op trace.Op, phase trace.Phase, pass uint64) trace.Event {
	return trace.Event{Seq: seq, Type: trace.Callback, Time: time, Thread: thread, Dispatch: dispatch, Label: "inc",
		Op: op, Phase: phase, Pass: trace.U64(pass), Total: trace.U64(2)}
}

// sample is a two-pass dispatch whose last PASS EXIT is missing.
func sample() trace.Trace {
	return trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: "s", Sources: trace.AllSources}, Events: []trace.Event{
		{Seq: 1, Type: trace.AppDispatch, Time: 1000, Thread: 1, Label: "inc", Signal: 1},
		cb(2, 1000, 1, 1, "CONFIG", "ENTER", 0),
		{Seq: 3, Type: trace.Snapshot, Time: 1100, Thread: 1, Dispatch: 1, Bytes: 64, Regions: []trace.Region{{Addr: 1 << 32, Bytes: 64}}},
		cb(4, 1200, 1, 1, "PASS", "ENTER", 0),
		{Seq: 5, Type: trace.Kernel, Time: 3000, Thread: 1, Agent: 1, Queue: 1, Dispatch: 1, Kernel: "increment", Start: 2000, End: 3000},
		cb(6, 3100, 1, 1, "PASS", "EXIT", 0),
		{Seq: 7, Type: trace.Restore, Time: 3200, Thread: 1, Dispatch: 1, Pass: trace.U64(1), Bytes: 64, Regions: []trace.Region{{Addr: 1 << 32, Bytes: 64}}},
		cb(8, 3300, 1, 1, "PASS", "ENTER", 1),
		{Seq: 9, Type: trace.Kernel, Time: 5000, Thread: 1, Agent: 1, Queue: 1, Dispatch: 1, Kernel: "increment", Start: 4000, End: 5000},
		{Seq: 10, Type: trace.Signal, Time: 5000, Thread: 1, Signal: 1, Value: trace.I64(0)},
		cb(11, 5100, 1, 1, "CONFIG", "EXIT", 0),
		{Seq: 12, Type: trace.Warning, Time: 5100, Code: "graph_launch", Message: "m"},
		{Seq: 13, Type: trace.AppComplete, Time: 5200, Thread: 1, Label: "inc", Signal: 1},
	}}
}

func results() []runner.Result {
	t := sample()
	fail := check.Violation{Rule: "CB-2", Message: "pass 1 has no PASS EXIT", Dispatch: 1, Label: "inc", Events: []trace.Event{t.Events[7]}}
	return []runner.Result{
		{Spec: spec.Spec{Name: "ok", File: "specs/ok.yaml", Rules: []string{"PC-3"}}, Trace: t, Elapsed: 200 * time.Microsecond},
		{Spec: spec.Spec{Name: "bad", File: "specs/bad.yaml", Rules: []string{"PC-3", "MEM-1"}}, Trace: t, Violations: []check.Violation{fail}},
		{Spec: spec.Spec{Name: "skipped", File: "specs/skip.yaml"}, SkipReason: "target cuda does not claim [indefinite]"},
		{Spec: spec.Spec{Name: "broken", File: "specs/broken.yaml", Rules: []string{"DID-1"}}, Err: errors.New("driver died")},
		{Spec: spec.Spec{Name: "caught", File: "specs/caught.yaml", Rules: []string{"CMP-1"}, Expect: spec.Expect{Violations: []string{"CMP-1", "CMP-2"}}},
			Expected: []check.Violation{{Rule: "CMP-1"}}, Unseen: []string{"CMP-2"}},
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, results(), Options{TraceFiles: map[string]string{"bad": "out/bad.ndjson"}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"PASS ok (2 passes, 0.2 ms)\n",
		"FAIL bad (2 passes,",
		"  spec: specs/bad.yaml\n",
		"  [CB-2] each executed pass gets one PASS ENTER followed by one PASS EXIT",
		"    found:    pass 1 has no PASS EXIT\n",
		"    dispatch: inc (id 1)\n",
		"    events:   seq 8 callback PASS ENTER label=inc dispatch=1 pass=1",
		"  where to look: the spec specs/bad.yaml; the whole trace in out/bad.ndjson\n",
		"SKIP skipped: target cuda does not claim [indefinite]\n",
		"ERROR broken",
		"the run did not finish: driver died",
		"replayspec run --trace-out broken.ndjson specs/broken.yaml",
		"FAIL caught",
		"[CMP-2] expected but not reported",
		"5 specs: 1 passed, 2 failed, 1 errors, 1 skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	_ = Text(&b, results()[:1], Options{Quiet: true})
	if strings.Contains(b.String(), "PASS") || !strings.Contains(b.String(), "1 spec: 1 passed") {
		t.Errorf("quiet report:\n%s", b.String())
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, results(), Options{Target: "sim"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 7 {
		t.Fatalf("want a start line, 5 result lines and an end line, one JSON object each:\n%s", b.String())
	}
	start, recs, end, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if start.Report != JSONVersion || start.Target != "sim" || len(recs) != 5 {
		t.Errorf("start %+v, %d results", start, len(recs))
	}
	if s := end.Summary; s == nil || s.Total != 5 || s.Failed != 2 || s.Skipped != 1 || s.Errors != 1 || s.Passed != 1 {
		t.Errorf("summary %+v", end.Summary)
	}
	bad := recs[1]
	if bad.Verdict != "fail" || bad.Outcome != "failed" || bad.Passes != 2 || len(bad.Violations) != 1 {
		t.Fatalf("failed result: %+v", bad)
	}
	if v := bad.Violations[0]; v.Rule != "CB-2" || v.Family != "CB" || v.Requires == "" || len(v.Events) != 1 {
		t.Errorf("violation %+v", v)
	}
	// A stream cut short is read as far as it goes, and says so.
	cut := strings.Join(lines[:3], "\n")
	_, recs, end, err = ReadJSON(strings.NewReader(cut))
	if err != nil || len(recs) != 2 || !strings.Contains(end.Stopped, "cut short") {
		t.Errorf("cut stream: %d results, end %+v, err %v", len(recs), end, err)
	}
}

func junitDoc(t *testing.T, b []byte) map[string]junitCase {
	t.Helper()
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	byName := map[string]junitCase{}
	for _, su := range doc.Suites {
		tests, failures := 0, 0
		for _, c := range su.Cases {
			byName[c.Name] = c
			tests++
			if c.Failure != nil {
				failures++
			}
		}
		if su.Tests != tests || su.Failures != failures {
			t.Errorf("suite %s says %d tests %d failures, holds %d and %d", su.Name, su.Tests, su.Failures, tests, failures)
		}
	}
	return byName
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, results(), Options{}); err != nil {
		t.Fatal(err)
	}
	byName := junitDoc(t, b.Bytes())
	for _, name := range []string{"ok/spec", "ok/PC-3", "bad/spec", "bad/PC-3", "bad/MEM-1", "skipped/spec", "broken/spec", "broken/DID-1", "caught/CMP-1", "caught/CMP-2"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no testcase %s", name)
		}
	}
	if len(byName) != 11 {
		t.Errorf("%d testcases, want 11: SPEC/spec and one per rule named or expected, whatever broke", len(byName))
	}
	// CB-2 is not named by "bad": its failure goes on bad/spec, so that a
	// broken rule does not add a testcase.
	if c := byName["bad/spec"]; c.Failure == nil || c.Failure.Type != "CB-2" || !strings.Contains(c.Failure.Message, "[CB-2] pass 1 has no PASS EXIT") {
		t.Errorf("bad/spec: %+v", c)
	}
	if c := byName["bad/PC-3"]; c.Failure != nil {
		t.Errorf("bad/PC-3 holds no CB-2 failure: %+v", c)
	}
	if byName["skipped/spec"].Skipped == nil || byName["broken/spec"].Error == nil || byName["broken/DID-1"].Error == nil {
		t.Errorf("skip and error are not marked")
	}
	if c := byName["caught/CMP-2"]; c.Failure == nil || c.Failure.Type != "CMP-2" {
		t.Errorf("caught/CMP-2: %+v", c)
	}
	if c := byName["caught/CMP-1"]; c.Failure != nil {
		t.Errorf("caught/CMP-1 was expected and seen, so it holds no failure: %+v", c)
	}
	if byName["ok/spec"].Time != "0.000200" || byName["ok/PC-3"].Time != "0.000000" {
		t.Errorf("times: the spec case carries the run's time, rule cases none of their own: %s %s", byName["ok/spec"].Time, byName["ok/PC-3"].Time)
	}
}

func TestJUnitOneFailurePerCase(t *testing.T) {
	r := results()[1]
	r.Violations = append(r.Violations, check.Violation{Rule: "PC-3", Message: "first"}, check.Violation{Rule: "PC-3", Message: "second"})
	var b bytes.Buffer
	if err := JUnit(&b, []runner.Result{r}, Options{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<failure"); n != 2 {
		t.Errorf("%d <failure> elements, want 2 (bad/spec and bad/PC-3, one each):\n%s", n, b.String())
	}
	if c := junitDoc(t, b.Bytes())["bad/PC-3"]; c.Failure == nil || !strings.Contains(c.Failure.Message, "(and 1 more)") || !strings.Contains(c.Failure.Body, "second") {
		t.Errorf("bad/PC-3: %+v", c.Failure)
	}
}

func TestXFailInEveryFormat(t *testing.T) {
	xf, err := runner.ParseXFail("known.txt", []byte("bad  the port has no PASS EXIT yet\nok  once broken\n"))
	if err != nil {
		t.Fatal(err)
	}
	outcomes := xf.Apply(results()[:2])
	opts := Options{XFailFile: "known.txt"}
	var text, js, junit bytes.Buffer
	for f, w := range map[string]*bytes.Buffer{"text": &text, "json": &js, "junit": &junit} {
		if err := Write(w, f, outcomes, opts, End{}); err != nil {
			t.Fatal(err)
		}
	}
	wantAll := func(name, got string, want ...string) {
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
	}
	wantAll("text", text.String(), "XFAIL bad (2 passes", "expected failure: the port has no PASS EXIT yet",
		"ERROR ok", "listed as failing (known.txt:2) but passed", "1 expected failure")
	_, recs, end, _ := ReadJSON(&js)
	if recs[1].Outcome != "expected failure" || recs[0].Outcome != "error" || end.Summary.XFailed != 1 || end.Summary.Errors != 1 || end.Summary.Failed != 0 {
		t.Errorf("json outcomes %q %q, summary %+v", recs[0].Outcome, recs[1].Outcome, end.Summary)
	}
	cases := junitDoc(t, junit.Bytes())
	if c := cases["bad/spec"]; c.Skipped == nil || c.Failure != nil || !strings.Contains(c.Skipped.Message, "expected failure") {
		t.Errorf("an expected failure is a skip in JUnit, never a failure: %+v", c)
	}
	if c := cases["ok/spec"]; c.Error == nil || !strings.Contains(c.Error.Message, "remove it") {
		t.Errorf("a listed spec that passed is an error: %+v", c)
	}
	if strings.Contains(junit.String(), "<failure") {
		t.Errorf("no failure is left once the list is applied:\n%s", junit.String())
	}
}

// A spec that failed with nothing judged, and one whose port returned an
// empty trace, are a failure and an error in every format when no list is
// given: never an expected failure, never a JUnit skip (issue 25).
func TestNothingJudgedIsNeverExpected(t *testing.T) {
	silent := runner.Result{Spec: spec.Spec{Name: "silent", File: "specs/silent.yaml"}, NothingJudged: true}
	empty := runner.Result{Spec: spec.Spec{Name: "empty", File: "specs/empty.yaml"}, Err: fmt.Errorf("%w: target exec:x returned a trace with a header and no events", runner.ErrEmptyTrace)}
	outcomes := (runner.XFail{}).Apply([]runner.Result{silent, empty})
	var text, junit bytes.Buffer
	_ = Write(&text, "text", outcomes, Options{}, End{})
	_ = Write(&junit, "junit", outcomes, Options{}, End{})
	if strings.Contains(text.String(), "XFAIL") || !strings.Contains(text.String(), "FAIL silent") || !strings.Contains(text.String(), "ERROR empty") {
		t.Errorf("text:\n%s", text.String())
	}
	cases := junitDoc(t, junit.Bytes())
	if c := cases["silent/spec"]; c.Failure == nil || c.Skipped != nil {
		t.Errorf("silent/spec is a failure: %+v", c)
	}
	if c := cases["empty/spec"]; c.Error == nil || c.Skipped != nil || !strings.Contains(c.Error.Message, "no events") {
		t.Errorf("empty/spec is an error: %+v", c)
	}
	if strings.Contains(junit.String(), "<skipped") {
		t.Errorf("nothing is skipped:\n%s", junit.String())
	}
}

func TestStaleEntryExplained(t *testing.T) {
	xf, _ := runner.ParseXFail("known.txt", []byte("PC-3  not yet\n"))
	outcomes := []runner.Outcome{xf.Outcome(results()[0])} // as a stream sees it
	end := End{Stale: StaleOf("known.txt", xf.Stale(outcomes))}
	var text, junit bytes.Buffer
	_ = Write(&text, "text", outcomes, Options{XFailFile: "known.txt"}, end)
	_ = Write(&junit, "junit", outcomes, Options{XFailFile: "known.txt"}, end)
	if !strings.Contains(text.String(), "STALE known.txt:1: rule PC-3 is listed as failing, but it failed in no spec and held in ok: remove it from known.txt") {
		t.Errorf("text:\n%s", text.String())
	}
	if c := junitDoc(t, junit.Bytes())["xfail/PC-3"]; c.Failure == nil || c.Failure.Type != "stale-xfail" {
		t.Errorf("junit: %+v\n%s", c, junit.String())
	}
}

func TestControlCharactersEscaped(t *testing.T) {
	r := results()[3]
	r.Spec.Name = "evil\x1b[2J"
	r.Err = errors.New("driver said:\n\x1b]0;owned\x07 line\r overwritten")
	var b bytes.Buffer
	_ = Text(&b, []runner.Result{r}, Options{})
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
	for _, want := range []string{`ERROR evil\x1b[2J`, `\x1b]0;owned\a line\r overwritten`, "driver said:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q: %q", want, out)
		}
	}
}

func TestColourOnlyWhenAsked(t *testing.T) {
	var plain, coloured bytes.Buffer
	_ = Text(&plain, results()[:2], Options{})
	_ = Text(&coloured, results()[:2], Options{Color: true})
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("colour without asking: %q", plain.String())
	}
	if !strings.Contains(coloured.String(), "\x1b[32mPASS\x1b[0m ok") || !strings.Contains(coloured.String(), "\x1b[31mFAIL\x1b[0m bad") {
		t.Errorf("no colour: %q", coloured.String())
	}
}

func TestVerboseListsRulesJudged(t *testing.T) {
	r := results()[0]
	r.Rules = []check.RuleResult{{Rule: "PC-3", Verdict: check.Pass, Instances: 3}, {Rule: "CMP-4", Verdict: check.NotExercised}}
	var b bytes.Buffer
	_ = Text(&b, []runner.Result{r}, Options{Verbose: true})
	for _, want := range []string{"rules judged:", "PC-3    pass           3 instances  [named by the spec]", "CMP-4   not exercised  0 instances"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("-v report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestTimeline(t *testing.T) {
	var b bytes.Buffer
	if err := Timeline(&b, results()[:1], Options{}); err != nil {
		t.Fatal(err)
	}
	var doc TimelineFile
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	find := func(name string) *TimelineEvent {
		for i := range doc.TraceEvents {
			if doc.TraceEvents[i].Name == name {
				return &doc.TraceEvents[i]
			}
		}
		t.Errorf("no event %q", name)
		return &TimelineEvent{}
	}
	p0 := find("pass 0")
	if p0.Phase != "X" || p0.TS != 1.2 || p0.Dur == nil || *p0.Dur != 1.9 || p0.TID != 1 {
		t.Errorf("pass 0: %+v", p0)
	}
	// Pass 1's EXIT never came: its slice ends where its window's does,
	// so that slices nest on failure paths too.
	if p1 := find("pass 1 (no EXIT)"); p1.Args["unclosed"] != true || math.Abs(*p1.Dur-1.8) > 1e-9 {
		t.Errorf("pass 1: %+v", p1)
	}
	if w := find("replay window, dispatch 1"); *w.Dur != 4.1 {
		t.Errorf("window: %+v", w)
	}
	k := find("increment")
	if k.TID != queueTrackBase || k.TS != 2 || *k.Dur != 1 {
		t.Errorf("kernel: %+v", k)
	}
	if r := find("restore before pass 1"); r.Phase != "i" || r.Args["bytes"] != 64.0 {
		t.Errorf("restore: %+v", r)
	}
	find("snapshot")
	find("completion fired")
	find("warning graph_launch")
	names := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Phase == "M" && e.Name == "thread_name" {
			names[e.Args["name"].(string)] = true
		}
	}
	if !names["thread 1"] || !names["agent 1 queue 1"] {
		t.Errorf("tracks: %v", names)
	}
}

func TestMillis(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0.0 ms", 200 * time.Microsecond: "0.2 ms", 12500 * time.Microsecond: "12.5 ms", 30 * time.Microsecond: "0.030 ms"} {
		if got := millis(d); got != want {
			t.Errorf("millis(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestTimelineSlicesNest: on one track, any two slices are disjoint or one
// holds the other, on failure paths too (an EXIT that never came, a loop
// the harness cut off, a second dispatch after a broken one). Before, an
// unclosed slice was drawn to the end of the trace, across its parent's
// end and its successors.
func TestTimelineSlicesNest(t *testing.T) {
	broken := sample()
	// A second dispatch on the same thread after the first one's missing
	// PASS EXIT, and a third whose loop the harness cut off (no EXITs).
	broken.Events = append(broken.Events,
		cb(14, 6000, 1, 2, "CONFIG", "ENTER", 0), cb(15, 6100, 1, 2, "PASS", "ENTER", 0), cb(16, 6200, 1, 2, "PASS", "EXIT", 0), cb(17, 6300, 1, 2, "CONFIG", "EXIT", 0),
		cb(18, 7000, 1, 3, "CONFIG", "ENTER", 0), cb(19, 7100, 1, 3, "PASS", "ENTER", 0),
		trace.Event{Seq: 20, Type: trace.NeverEnded, Time: 7200, Thread: 1, Dispatch: 3, Pass: trace.U64(1)},
		cb(21, 8000, 1, 4, "CONFIG", "ENTER", 0), cb(22, 8100, 1, 4, "CONFIG", "EXIT", 0),
		trace.Event{Seq: 23, Type: trace.AppComplete, Time: 9000, Thread: 1, Label: "inc"},
	)
	evs := TimelineOf(broken, 1, "broken")
	type span struct {
		name       string
		start, end float64
	}
	byTrack := map[uint64][]span{}
	for _, e := range evs {
		if e.Phase == "X" && e.Cat != "kernel" {
			byTrack[e.TID] = append(byTrack[e.TID], span{e.Name, e.TS, e.TS + *e.Dur})
		}
	}
	if len(byTrack[1]) != 8 {
		t.Fatalf("%d slices on thread 1, want 8: %+v", len(byTrack[1]), byTrack[1])
	}
	for tid, spans := range byTrack {
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				disjoint := a.end <= b.start || b.end <= a.start
				nested := (a.start <= b.start && b.end <= a.end) || (b.start <= a.start && a.end <= b.end)
				if !disjoint && !nested {
					t.Errorf("track %d: %q [%g, %g] and %q [%g, %g] overlap without nesting", tid, a.name, a.start, a.end, b.name, b.start, b.end)
				}
			}
		}
	}
}
