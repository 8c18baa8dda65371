package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
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
		"the target could not run the spec: driver died",
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
	var rep map[string]any
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	sum := rep["summary"].(map[string]any)
	if rep["report"] != JSONVersion || rep["target"] != "sim" || sum["total"] != 5.0 || sum["failed"] != 2.0 || sum["skipped"] != 1.0 || sum["errors"] != 1.0 {
		t.Errorf("report head: %v", rep)
	}
	bad := rep["results"].([]any)[1].(map[string]any)
	v := bad["violations"].([]any)[0].(map[string]any)
	if bad["verdict"] != "fail" || bad["passes"] != 2.0 || v["rule"] != "CB-2" || v["family"] != "CB" || v["requires"] == "" || len(v["events"].([]any)) != 1 {
		t.Errorf("failed result: %v", bad)
	}
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, results(), Options{}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	s := doc.Suites[0]
	byName := map[string]junitCase{}
	for _, c := range s.Cases {
		byName[c.Name] = c
	}
	for _, name := range []string{"ok/PC-3", "bad/PC-3", "bad/CB-2", "bad/MEM-1", "skipped/spec", "broken/DID-1", "caught/CMP-1", "caught/CMP-2"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no testcase %s in %v", name, s.Cases)
		}
	}
	if c := byName["bad/CB-2"]; len(c.Failures) != 1 || c.Failures[0].Type != "CB-2" || !strings.Contains(c.Failures[0].Message, "[CB-2] pass 1 has no PASS EXIT") {
		t.Errorf("bad/CB-2: %+v", c)
	}
	if c := byName["bad/PC-3"]; len(c.Failures) != 0 {
		t.Errorf("bad/PC-3 holds no CB-2 failure: %+v", c)
	}
	if byName["skipped/spec"].Skipped == nil || byName["broken/DID-1"].Error == nil {
		t.Errorf("skip and error are not marked")
	}
	if c := byName["caught/CMP-2"]; len(c.Failures) != 1 || c.Failures[0].Type != "CMP-2" {
		t.Errorf("caught/CMP-2: %+v", c)
	}
	if c := byName["caught/CMP-1"]; len(c.Failures) != 0 {
		t.Errorf("caught/CMP-1 was expected and seen, so it holds no failure: %+v", c)
	}
	if s.Tests != len(s.Cases) || s.Failures != 2 || s.Skipped != 1 || s.Errors != 1 {
		t.Errorf("counts tests %d failures %d skipped %d errors %d", s.Tests, s.Failures, s.Skipped, s.Errors)
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
	if p1 := find("pass 1 (no EXIT)"); p1.Args["unclosed"] != true || math.Abs(*p1.Dur-1.9) > 1e-9 {
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
