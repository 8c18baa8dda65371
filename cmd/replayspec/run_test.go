package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// neverEnds is an indefinite loop whose continue always says go on: the
// SDK has no cap of its own, so only the run's pass budget ends it.
const neverEnds = `version: 1
name: forever
rules: [CMP-4]
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - name: replay
    services:
      kernel_replay: {}
tool:
  plan:
    passes: 0
    continue: {always: true}
application:
  buffers:
    - {name: x, agent: gpu0, elements: 16}
  dispatches:
    - {name: d, kernel: increment, agent: gpu0, args: [x]}
`

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	good := tempFile(t, dir, "tiny.yaml", okSpec)
	malformed := tempFile(t, dir, "malformed.yaml", "version: 1\nname: [unclosed\n")
	badKey := tempFile(t, dir, "badkey.yaml", strings.Replace(okSpec, "    passes: 3\n", "    passes: 3\n    pases: 4\n", 1))
	for _, tc := range []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"missing file", []string{"run", filepath.Join(dir, "nope.yaml")}, []string{"nope.yaml", "no such file"}},
		{"empty directory", []string{"run", empty}, []string{empty, "no spec files"}},
		{"malformed YAML", []string{"run", malformed}, []string{malformed + ":1:", "YAML"}},
		{"bad key", []string{"run", badKey}, []string{badKey + ":13:5:", "pases", "validate"}},
		{"unknown target", []string{"run", "--target", "vulkan", good}, []string{"unknown target \"vulkan\"", "sim, cuda, rocr"}},
		{"unavailable target", []string{"run", "--target", "rocr", good}, []string{"target rocr is not available", "--target sim"}},
		{"bad shard", []string{"run", "--shard", "3/2", good}, []string{"--shard \"3/2\"", "1 <= k <= n"}},
		{"shard not numbers", []string{"run", "--shard", "a", good}, []string{"want k/n"}},
		{"shard zero", []string{"run", "--shard", "0/0", good}, []string{"1 <= k <= n"}},
		{"unknown fault", []string{"run", "--fault", "no_such_fault", good}, []string{"unknown fault \"no_such_fault\"", "completion_every_pass"}},
		{"unknown format", []string{"run", "--format", "yaml", good}, []string{"unknown format \"yaml\"", "text, json, junit"}},
		{"bad timeout", []string{"run", "--timeout", "-1s", good}, []string{"--timeout"}},
		// Budgets counted before anything is made: a typo of a count is
		// refused at once, saying how the number comes about and what to
		// raise; a matrix of 20^8 cases likewise (bigMatrix).
		{"count over the budget", []string{"run", "--count", "1000000"}, []string{"--count 1000000 = 1000000 runs, over the budget of 100000 runs", "raise --max-runs"}},
		{"count and retries over the budget", []string{"run", "--count", "1000", "--retries", "1000", good}, []string{"--count 1000 × (1 + --retries 1000) = 1001000 runs", "--max-runs"}},
		{"specs times count over a raised budget", []string{"run", "--count", "2", "--max-runs", "5", good, tempFile(t, dir, "cases.yaml", twoCases)}, []string{"3 specs × --count 2 = 6 runs, over the budget of 5 runs"}},
		{"matrix over the budget", []string{"run", tempFile(t, dir, "huge.yaml", bigMatrix)}, []string{"25600000000 combinations", "over the budget of 10000 cases a spec", "--max-cases"}},
		{"matrix over a lowered budget", []string{"run", "--max-cases", "1", tempFile(t, dir, "two.yaml", twoCases)}, []string{"2 combinations", "over the budget of 1 cases a spec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := cli(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, errs)
			}
			wantAll(t, "stderr", errs, tc.want...)
		})
	}
}

// bigMatrix stands for 20^8 cases in a few lines: loading it must end at
// once, with the budget named (spec.TestMatrixCountedBeforeExpanded).
var bigMatrix = func() string {
	var b strings.Builder
	b.WriteString("version: 1\nname: huge\nmatrix:\n")
	for p := range 8 {
		fmt.Fprintf(&b, "  p%d: [", p)
		for v := range 20 {
			if v > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "v%d", v)
		}
		b.WriteString("]\n")
	}
	return b.String() + okSpec[strings.Index(okSpec, "agents:"):]
}()

// twoCases is okSpec as a matrix of two cases.
var twoCases = strings.Replace(okSpec, "agents:", "matrix: {n: [1, 2]}\nagents:", 1)

func TestBudgetsRefuseBeforeMaking(t *testing.T) {
	dir := t.TempDir()
	huge := tempFile(t, dir, "huge.yaml", bigMatrix)
	for _, cmd := range []string{"validate", "list"} {
		code, out, errs := cli(t, cmd, huge)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2\n%s%s", cmd, code, out, errs)
		}
		wantAll(t, cmd, out+errs, "huge.yaml:4:3: matrix: this matrix stands for 20 × 20 × 20 × 20 × 20 × 20 × 20 × 20 = 25600000000 combinations", "--max-cases")
	}
	two := tempFile(t, dir, "two.yaml", twoCases)
	if code, out, errs := cli(t, "validate", "--max-cases", "2", two); code != exitOK || !strings.Contains(out, "(2 cases)") {
		t.Errorf("validate --max-cases 2: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := cli(t, "list", "--max-cases", "1", two); code != exitUsage || !strings.Contains(errs, "over the budget of 1 cases") {
		t.Errorf("list --max-cases 1: exit %d\n%s%s", code, out, errs)
	}
}

func TestRunPasses(t *testing.T) {
	dir := t.TempDir()
	good := tempFile(t, dir, "tiny.yaml", okSpec)
	code, out, errs := cli(t, "run", good)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errs)
	}
	wantAll(t, "report", out, "PASS tiny (3 passes,", "1 spec: 1 passed, 0 failed")
}

func TestRunNeverEndingLoop(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		spec   string
		args   []string
		code   int
		report []string
	}{
		{"default budget", neverEnds + "expect: {never_ends: [d]}\n", nil, exitOK, []string{"PASS forever (10000 passes", "d never ended"}},
		{"expected to never end", neverEnds + "expect: {never_ends: [d]}\n", []string{"--max-passes", "100"}, exitOK, []string{"PASS forever (100 passes", "d never ended"}},
		{"budget from the command line", neverEnds + "expect: {never_ends: [d], passes: {d: 25}}\n", []string{"--max-passes", "25"}, exitOK, []string{"PASS forever (25 passes"}},
		// A loop whose continue always says go on is meant never to end:
		// the budget ends it as designed, and the spec's own expectation
		// that contradicts that fails.
		{"expected to end", neverEnds + "expect: {completions: {d: 1}}\n", []string{"--max-passes", "20"}, exitFail, []string{"FAIL forever", "expect.completions", "d never ended: its loop was stopped after 20 passes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args == nil && (raceDetector || testing.Short()) {
				t.Skip("spends the default budget of 10000 passes: slow under -race and -short")
			}
			f := tempFile(t, dir, "forever.yaml", tc.spec)
			code, out, errs := cli(t, append(append([]string{"run"}, tc.args...), f)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errs)
			}
			wantAll(t, "report", out, tc.report...)
			if strings.Contains(out, "[CMP-4]") {
				t.Errorf("the harness's budget is blamed on the implementation:\n%s", out)
			}
		})
	}
}

func TestRunExpectationContradictsRules(t *testing.T) {
	dir := t.TempDir()
	f := tempFile(t, dir, "five.yaml", strings.Replace(okSpec, "passes: {inc: 3}", "passes: {inc: 5}", 1))
	code, out, _ := cli(t, "run", f)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "report", out, "FAIL tiny", "[EXPECT] expect.passes: inc runs 5 passes", "inc ran 3 passes", "spec: "+f, "where to look", "--trace-out")
}

func TestRunFaultIsCaught(t *testing.T) {
	dir := t.TempDir()
	good := tempFile(t, dir, "tiny.yaml", okSpec)
	tr := filepath.Join(dir, "out", "tiny.ndjson")
	code, out, _ := cli(t, "run", "--fault", "completion_every_pass", "--trace-out", tr, good)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "report", out, "FAIL tiny", "[CMP-1]", "[CMP-2]", "events:", "seq ", "the whole trace in "+tr)
	// A failing run still writes its whole trace, and check judges it the
	// same way.
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"app_memory"`) {
		t.Errorf("the trace of the failing run is not whole: no app_memory event")
	}
	code, out, _ = cli(t, "check", tr)
	if code != exitFail {
		t.Errorf("check: exit %d, want 1", code)
	}
	wantAll(t, "check report", out, "[CMP-1]", "the whole trace in "+tr)
}

func TestRunTraceOut(t *testing.T) {
	dir := t.TempDir()
	one := tempFile(t, dir, "tiny.yaml", okSpec)
	two := tempFile(t, dir, "tiny2.yaml", strings.Replace(okSpec, "name: tiny", "name: tiny2", 1))

	file := filepath.Join(dir, "one.ndjson")
	if code, out, errs := cli(t, "run", "--trace-out", file, one); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	readTraceFile(t, file)

	outDir := filepath.Join(dir, "traces")
	if code, out, errs := cli(t, "run", "--trace-out", outDir, one, two); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, n := range []string{"tiny", "tiny2"} {
		tr := readTraceFile(t, filepath.Join(outDir, n+".ndjson"))
		if tr.Header.Spec != n {
			t.Errorf("%s.ndjson holds the trace of %q", n, tr.Header.Spec)
		}
	}
}

func readTraceFile(t *testing.T, path string) trace.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(tr.Events) == 0 {
		t.Errorf("%s: no events", path)
	}
	return tr
}

func TestRunFormats(t *testing.T) {
	dir := t.TempDir()
	good := tempFile(t, dir, "tiny.yaml", okSpec)
	t.Run("json", func(t *testing.T) {
		code, out, _ := cli(t, "run", "--format", "json", "--fault", "completion_every_pass", good)
		if code != exitFail {
			t.Errorf("exit %d, want 1", code)
		}
		start, results, end, err := report.ReadJSON(strings.NewReader(out))
		if err != nil {
			t.Fatalf("not a JSON stream: %v\n%s", err, out)
		}
		if start.Report != report.JSONVersion || end.Summary.Failed != 1 || len(results) != 1 {
			t.Fatalf("unexpected report: %+v %+v", start, end)
		}
		r := results[0]
		if r.Verdict != "fail" || r.Passes != 3 || len(r.Violations) == 0 || r.Violations[0].Family == "" || len(r.Violations[0].Events) == 0 {
			t.Errorf("unexpected result: %+v", r)
		}
	})
	t.Run("junit", func(t *testing.T) {
		code, out, _ := cli(t, "run", "--format", "junit", "--fault", "completion_every_pass", good)
		if code != exitFail {
			t.Errorf("exit %d, want 1", code)
		}
		var doc struct {
			Suites []struct {
				Tests    int `xml:"tests,attr"`
				Failures int `xml:"failures,attr"`
				Cases    []struct {
					Name     string `xml:"name,attr"`
					Failures []struct {
						Type    string `xml:"type,attr"`
						Message string `xml:"message,attr"`
					} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("not XML: %v\n%s", err, out)
		}
		if len(doc.Suites) != 1 {
			t.Fatalf("%d testsuites, want 1", len(doc.Suites))
		}
		s := doc.Suites[0]
		names := map[string]bool{}
		var cmp []string
		for _, c := range s.Cases {
			names[c.Name] = true
			for _, f := range c.Failures {
				if strings.HasPrefix(f.Type, "CMP-") {
					cmp = append(cmp, c.Name)
				}
			}
		}
		if !names["tiny/PC-3"] || !names["tiny/CMP-1"] || s.Tests != len(s.Cases) || s.Failures == 0 {
			t.Errorf("testcases %v, tests %d, failures %d", names, s.Tests, s.Failures)
		}
		for _, n := range cmp {
			if n != "tiny/CMP-1" && n != "tiny/spec" { // CMP-2 is not named by the spec: it goes on tiny/spec
				t.Errorf("a CMP failure is filed under %s", n)
			}
		}
	})
	t.Run("timeline", func(t *testing.T) {
		tl := filepath.Join(dir, "timeline.json")
		if code, out, errs := cli(t, "run", "--timeline", tl, "--quiet", good); code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		data, err := os.ReadFile(tl)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("timeline is not JSON: %v", err)
		}
		passes, kernels := 0, 0
		for _, e := range doc.TraceEvents {
			if e["ph"] == "X" && e["cat"] == "pass" {
				passes++
			}
			if e["ph"] == "X" && e["cat"] == "kernel" {
				kernels++
			}
		}
		if passes != 3 || kernels != 3 {
			t.Errorf("timeline has %d pass slices and %d kernel slices, want 3 and 3", passes, kernels)
		}
	})
}

func TestRunQuietAndShard(t *testing.T) {
	dir := t.TempDir()
	tempFile(t, dir, "a.yaml", strings.Replace(okSpec, "name: tiny", "name: a", 1))
	tempFile(t, dir, "b.yaml", strings.Replace(okSpec, "name: tiny", "name: b", 1))
	code, out, _ := cli(t, "run", "--shard", "2/2", dir, "--quiet")
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(out, "PASS") || !strings.Contains(out, "1 spec: 1 passed") {
		t.Errorf("quiet shard 2/2 of two specs:\n%s", out)
	}
	code, out, _ = cli(t, "run", "--shard", "1/2", dir)
	if code != exitOK || !strings.Contains(out, "PASS a ") || strings.Contains(out, "PASS b ") {
		t.Errorf("shard 1/2 (exit %d):\n%s", code, out)
	}
}

// TestRunLibrary runs the whole spec library: it must hold on the
// simulator (make run).
func TestRunLibrary(t *testing.T) {
	code, out, errs := cli(t, "run", "--quiet", library)
	if code != exitOK {
		t.Errorf("replayspec run specs/: exit %d\n%s%s", code, out, errs)
	}
}

// TestRunTimeout: a spec that outlives --timeout is an error, reported
// promptly, and its trace is still written.
func TestRunTimeout(t *testing.T) {
	dir := t.TempDir()
	// A 4 MiB buffer: each pass costs milliseconds, so the 200 ms leave a
	// short trace to judge and write (16 elements: some 10^5 events).
	f := tempFile(t, dir, "forever.yaml", strings.Replace(neverEnds, "elements: 16}", "elements: 1048576}", 1)+"expect: {never_ends: [d]}\n")
	tr := filepath.Join(dir, "forever.ndjson")
	// The memory budget would refuse a loop of 10^8 passes: raised, the
	// timeout alone must end it.
	code, out, _ := cli(t, "run", "--max-passes", "100000000", "--memory-budget", "1000000000", "--timeout", "200ms", "--grace", "2m", "--trace-out", tr, f)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "report", out, "ERROR forever", "no result within --timeout 200ms")
	readTraceFile(t, tr)
}

// TestAbandonedRunKeepsItsEvents: a target given no grace to stop is
// abandoned, and the events it streamed before that are still the trace
// (FILE.partial becomes FILE), readable by check: nothing recorded is lost.
func TestAbandonedRunKeepsItsEvents(t *testing.T) {
	dir := t.TempDir()
	f := tempFile(t, dir, "forever.yaml", strings.Replace(neverEnds, "elements: 16}", "elements: 1048576}", 1)+"expect: {never_ends: [d]}\n")
	tr := filepath.Join(dir, "forever.ndjson")
	code, out, _ := cli(t, "run", "--max-passes", "100000000", "--memory-budget", "1000000000", "--timeout", "300ms", "--grace", "1ns", "--trace-out", tr, f)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "report", out, "ERROR forever", "abandoned")
	readTraceFile(t, tr) // fails on no events or an unreadable header
	if _, err := os.Stat(partialFile(tr)); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", partialFile(tr), err)
	}
}

// TestRunXFail: a listed failure is expected (exit 0), a listed spec that
// passes is an error (exit 1), and --matrix writes the compliance matrix.
func TestRunXFail(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "xfail.txt")
	matrix := filepath.Join(dir, "matrix.md")
	if err := os.WriteFile(list, []byte("CMP-1 our port fires the completion every pass\nCMP-2 same bug\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "run", "--fault", "completion_every_pass", "--xfail", list, "--matrix", matrix, "../../specs/fixed-three-passes.yaml")
	if code != exitOK {
		t.Fatalf("exit %d, want 0 (the failure is listed)\n%s\n%s", code, out, errOut)
	}
	wantAll(t, "report", out, "XFAIL fixed-three-passes", "expected failure: CMP-1: our port fires the completion every pass", "1 expected failure")
	if b, err := os.ReadFile(matrix); err != nil || !strings.Contains(string(b), "CMP-1") {
		t.Errorf("matrix: %v\n%s", err, b)
	}
	code, out, errOut = cli(t, "run", "--xfail", list, "../../specs/fixed-three-passes.yaml")
	if code != exitFail {
		t.Fatalf("exit %d, want 1: listed rules that pass must be removed\n%s", code, errOut)
	}
	wantAll(t, "report", out, "STALE "+list+":1: rule CMP-1 is listed as failing, but it failed in no spec and held in fixed-three-passes: remove it from")
}

// TestTimeoutBoundsTheSimulator: --timeout bounds a spec on the
// simulator too. Before, a 10,000-dispatch spec with --timeout 3s ran 90 s:
// once the time was up, the harness went on starting every remaining
// dispatch, each cut off after one pass (thousands of never_ended). Now
// it starts none: at most the loop in flight when the time ran out is cut
// off, and the simulator stops by itself, its trace kept, before the
// grace after which the runner would abandon it. (How long that
// takes is no test's to time on a loaded machine; the runner's own bound
// is tested in runner.)
func TestTimeoutBoundsTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("spends the timeout")
	}
	var b strings.Builder
	b.WriteString("version: 1\nname: many\nagents:\n  - {name: gpu0, kind: MI300}\ncontexts:\n  - {name: replay, services: {kernel_replay: {}}}\n")
	// A 4 MiB buffer: each pass costs milliseconds while the trace stays
	// small, so no machine finishes in the second, and handing over what
	// was recorded takes no time (a trace of millions of events would).
	b.WriteString("tool:\n  plan: {passes: 3}\napplication:\n  buffers: [{name: x, agent: gpu0, elements: 1048576}]\n  dispatches:\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "    - {name: d%d, kernel: increment, agent: gpu0, args: [x]}\n", i)
	}
	f := tempFile(t, t.TempDir(), "many.yaml", b.String())
	// A grace of minutes: whether the simulator stops by itself is the
	// question, not how fast it does on a loaded machine.
	code, out, errs := cli(t, "run", "--format", "json", "--timeout", "1s", "--grace", "2m", f)
	if code != exitFail {
		t.Fatalf("exit %d, want 1\n%s", code, errs)
	}
	_, results, _, err := report.ReadJSON(strings.NewReader(out))
	if err != nil || len(results) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	r := results[0]
	if r.Verdict != "error" || !strings.Contains(r.Error, "no result within --timeout 1s") {
		t.Errorf("verdict %s: %s", r.Verdict, r.Error)
	}
	if strings.Contains(r.Error, "abandoned") || r.Events == 0 {
		t.Errorf("the simulator did not stop when told to and was abandoned, its trace lost: %s", r.Error)
	}
	if len(r.NeverEnded) > 1 {
		t.Errorf("%d loops cut off after the time was up (first %+v): the harness went on starting dispatches", len(r.NeverEnded), r.NeverEnded[0])
	}
	if r.Passes >= 3*10000 {
		t.Errorf("all %d passes ran: the timeout stopped nothing", r.Passes)
	}
	for _, v := range r.Violations {
		if v.Rule == "EXPECT" || v.Rule == "CMP-4" {
			t.Errorf("a timed-out run blames the implementation: %+v", v)
		}
	}
	for _, j := range r.Judged {
		if j.Rule == "CMP-4" && j.Verdict == "fail" {
			t.Errorf("CMP-4 judged failed on a loop the harness cut off")
		}
	}
}

// TestPortsGetGeneratedSpecs: an exec: target (a port) draws portGenerated
// specs beside the library unless told otherwise; other targets none
// (generated.txtar runs fifty through a driver outside -short).
func TestPortsGetGeneratedSpecs(t *testing.T) {
	for _, tc := range []struct {
		n      int
		target string
		want   int
	}{
		{-1, "exec:./my-port", portGenerated},
		{-1, "sim", 0},
		{0, "exec:./my-port", 0},
		{7, "sim", 7},
	} {
		g, err := planGenerated(tc.n, "1", tc.target, "", simtarget.Sim{})
		got := 0
		if g != nil {
			got = g.count
		}
		if err != nil || got != tc.want {
			t.Errorf("--gen %d --target %s: %d generated (%v), want %d", tc.n, tc.target, got, err, tc.want)
		}
	}
	if portGenerated != 50 {
		t.Errorf("portGenerated = %d; docs/cli.md and generated.txtar say 50", portGenerated)
	}
}

// --trace-out, --golden, --timeline and --html (of run and of report) ask
// for no events in memory: each spec is judged as it runs, its trace file
// is the one written as the events came, and its golden, timeline and page
// read the file its events went to (issue 23 item 1). The files, and the page's
// timelines, are byte for byte those of a run that holds its traces
// (holdTraces), on the simulator and through an exec: driver (whose own
// header names its target), no partial file is left, and a golden one
// line off fails at that line.
func TestTraceOutStreamedAsHeld(t *testing.T) {
	filter := "^(fixed-three-passes|converge-single-group|restore-fails-part-way|indefinite-never-ends|concurrent-launches-correlate-per-thread)$"
	for name, target := range map[string][]string{"sim": nil, "exec": {"--target", "exec:" + driverCommand(t, "driver"), "--gen", "0"}} {
		t.Run(name, func(t *testing.T) {
			if name == "exec" && testing.Short() {
				t.Skip("through a driver in make test-heavy (under -short, the simulator)")
			}
			dir := t.TempDir()
			out := func(kind, name string) string { return filepath.Join(dir, kind+"-"+name) }
			for _, how := range []string{"streamed", "held"} {
				args := append([]string{"run", "--quiet", "--trace-out", out("traces", how), "--golden", out("goldens", how), "--update",
					"--timeline", out("timeline", how) + ".json", "--html", out("page", how) + ".html", "-run", filter}, target...)
				holdTraces = how == "held"
				code, stdout, errs := cli(t, args...)
				// report runs the specs too, and draws the same page.
				rargs := []string{"report", "--html", out("report", how) + ".html"}
				if len(target) > 0 {
					rargs = append(rargs, target[:2]...) // --target T; report generates no specs (--gen)
				}
				for _, name := range strings.Split(strings.Trim(filter, "^$()"), "|") {
					rargs = append(rargs, "../../specs/"+name+".yaml")
				}
				rcode, rstdout, rerrs := cli(t, rargs...)
				holdTraces = false
				if code != exitOK && code != exitFail {
					t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, errs)
				}
				if rcode != exitOK && rcode != exitFail {
					t.Fatalf("%v: exit %d\n%s%s", rargs, rcode, rstdout, rerrs)
				}
			}
			pa, pb := timelinesOf(readFile(t, out("page", "streamed")+".html")), timelinesOf(readFile(t, out("page", "held")+".html"))
			if pa != pb || !strings.Contains(pa, `class="slice pass`) {
				t.Errorf("the pages' timelines differ: streamed %d bytes, held %d\n%s", len(pa), len(pb), firstDiff(pa, pb))
			}
			ra, rb := timelinesOf(readFile(t, out("report", "streamed")+".html")), timelinesOf(readFile(t, out("report", "held")+".html"))
			if ra != rb || !strings.Contains(ra, `class="slice pass`) {
				t.Errorf("report --html: the pages' timelines differ: streamed %d bytes, held %d\n%s", len(ra), len(rb), firstDiff(ra, rb))
			}
			for _, kind := range []string{"traces", "goldens"} {
				files, err := os.ReadDir(out(kind, "held"))
				if err != nil || len(files) < 4 {
					t.Fatalf("%s: %d held (%v)", kind, len(files), err)
				}
				for _, f := range files {
					want, err := os.ReadFile(filepath.Join(out(kind, "held"), f.Name()))
					if err != nil {
						t.Fatal(err)
					}
					got, err := os.ReadFile(filepath.Join(out(kind, "streamed"), f.Name()))
					if err != nil {
						t.Error(err)
						continue
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s %s: streamed, %d bytes (%d lines); held, %d bytes (%d lines)", kind, f.Name(), len(got), bytes.Count(got, []byte("\n")), len(want), bytes.Count(want, []byte("\n")))
					}
				}
				if left, _ := filepath.Glob(filepath.Join(out(kind, "streamed"), "*.partial")); len(left) > 0 {
					t.Errorf("partial files left: %v", left)
				}
			}
			if a, b := readFile(t, out("timeline", "streamed")+".json"), readFile(t, out("timeline", "held")+".json"); a != b {
				t.Errorf("the timelines differ: streamed %d bytes, held %d", len(a), len(b))
			}
			// Compared, as it streams, with the held run's goldens: they
			// hold; with one line of one changed, that spec fails there.
			goldens := out("goldens", "held")
			args := append([]string{"run", "--quiet", "--golden", goldens, "-run", filter}, target...)
			if code, stdout, errs := cli(t, args...); code != exitOK || strings.Contains(stdout, "GOLDEN") {
				t.Fatalf("against the held goldens: exit %d\n%s%s", code, stdout, errs)
			}
			g := filepath.Join(goldens, "fixed-three-passes.ndjson")
			b, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			lines[5] = strings.Replace(lines[5], `"seq":5`, `"seq":5,"x":1`, 1)
			if err := os.WriteFile(g, []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, _ := cli(t, args...)
			wantAll(t, "report", stdout, "the trace differs from the golden "+g+" at line 6:", `"seq":5,"x":1`)
			if code != exitFail {
				t.Errorf("a golden one line off: exit %d, want %d", code, exitFail)
			}
		})
	}
}

// timelinesOf is what an HTML page draws of its specs' traces: the
// timelines, and what it says when it has none.
func timelinesOf(page string) string {
	re := regexp.MustCompile(`(?s)<div class="tl" id=.*?</svg>|<p class="notrace">.*?</p>|<p class="note">\d+ more dispatches`)
	return strings.Join(re.FindAllString(page, -1), "\n")
}

// firstDiff shows where a and b first differ.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("at byte %d:\n%.300s\n---\n%.300s", i, a[max(0, i-100):], b[max(0, i-100):])
}

// readFile is the text of file path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
