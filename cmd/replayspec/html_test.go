package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportHTMLFromResults: report --from makes the page of saved results
// with their traces (found by trace_file, or in --traces), against a
// baseline and another target's results, whose traces are compared as
// diff compares them.
func TestReportHTMLFromResults(t *testing.T) {
	dir := t.TempDir()
	spec := library + "/fixed-three-passes.yaml"
	other := library + "/timing-last-pass.yaml"
	simJSON, portJSON := filepath.Join(dir, "sim.json"), filepath.Join(dir, "port.json")
	base := filepath.Join(dir, "base.csv")
	code, out, errs := cli(t, "run", "--format", "json", "--results", base, "--trace-out", filepath.Join(dir, "sim"), spec, other)
	if code != exitOK {
		t.Fatalf("run on sim: exit %d\n%s", code, errs)
	}
	tempFile(t, dir, "sim.json", out)
	code, out, errs = cli(t, "run", "--format", "json", "--fault", "skip_restore", "--trace-out", filepath.Join(dir, "port-traces"), spec, other)
	if code != exitFail {
		t.Fatalf("run with skip_restore: exit %d, want 1\n%s", code, errs)
	}
	tempFile(t, dir, "port.json", out)
	// The port's traces move: --traces finds them by name.
	if err := os.Rename(filepath.Join(dir, "port-traces"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "page.html")
	code, out, errs = cli(t, "report", "--from", portJSON, "--traces", filepath.Join(dir, "moved"), "--compare", simJSON, "--baseline", base, "--html", page)
	if code != exitFail {
		t.Fatalf("report --from: exit %d, want 1 (the port fails); stderr:\n%s", code, errs)
	}
	if out != "" || strings.Contains(errs, "no trace at hand") {
		t.Errorf("with --html alone, stdout should be empty and every trace found; stdout %q stderr %q", out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{
		`<span class="name">fixed-three-passes</span>`, `class="slice pass`, // a timeline, from the moved trace
		`New failures</h3>`,                                                       // against the baseline: it passed on sim
		`against the other run`, "first divergence of the traces", "touches MEM-", // the diff view
		"<code>MEM-2</code>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(html, "no trace at hand") || strings.Contains(html, "only verdicts are compared") {
		t.Error("a trace was not found")
	}

	// run --html with --baseline: the page says what changed.
	runPage := filepath.Join(dir, "run.html")
	if code, _, errs := cli(t, "run", "--quiet", "--fault", "skip_restore", "--baseline", base, "--html", runPage, spec, other); code != exitFail {
		t.Fatalf("run --baseline --html: exit %d, want 1\n%s", code, errs)
	}
	if b, err := os.ReadFile(runPage); err != nil || !strings.Contains(string(b), `New failures</h3><ul class="refs"><li><a href="#s0">fixed-three-passes</a>`) {
		t.Errorf("run --html --baseline: the page does not list fixed-three-passes as a new failure (%v)", err)
	}

	// Without --html, --from writes the matrix of the saved results.
	code, out, _ = cli(t, "report", "--from", simJSON)
	if code != exitOK || !strings.Contains(out, "| PC-3 | passed |") {
		t.Errorf("report --from sim.json: exit %d, matrix:\n%s", code, out)
	}
	// Misuse is refused before anything is read.
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"report", "--baseline", base, spec}, "add --html FILE"},
		{[]string{"report", "--traces", dir, spec}, "add --from RESULTS.json"},
		{[]string{"report", "--from", simJSON, spec}, "name no spec"},
		{[]string{"report", "--from", simJSON, "--html", simJSON}, "--html"},
		{[]string{"run", "--html", spec, spec}, "--html"},
	} {
		code, _, errs := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, errs, c.msg)
		}
	}
}

// report --from --traces reads each trace as a stream, however large (no
// budget: issue 23); one that cannot be read part-way shows no timeline,
// and the page and stderr say where it broke.
func TestReportHTMLTornTrace(t *testing.T) {
	dir := t.TempDir()
	spec := library + "/fixed-three-passes.yaml"
	traces := filepath.Join(dir, "traces")
	code, out, errs := cli(t, "run", "--format", "json", "--trace-out", traces, spec, library+"/timing-last-pass.yaml")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	results := tempFile(t, dir, "r.json", out)
	file := filepath.Join(traces, "fixed-three-passes.ndjson")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	page := filepath.Join(dir, "page.html")
	for _, c := range []struct {
		name, text, want string
	}{
		{"whole", string(b), `class="slice pass`},
		{"torn", strings.Join(lines[:40], "") + `{"seq":40,"type":"kern` + "\n" + strings.Join(lines[41:], ""), "fixed-three-passes.ndjson:41: "},
	} {
		if err := os.WriteFile(file, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, errs := cli(t, "report", "--from", results, "--traces", traces, "--html", page)
		html := readFile(t, page)
		// Its section: up to the next spec's.
		html = html[strings.Index(html, `<span class="name">fixed-three-passes</span>`):]
		if i := strings.Index(html[1:], `<span class="name">`); i >= 0 {
			html = html[:i+1]
		}
		if !strings.Contains(html, c.want) {
			t.Errorf("%s: the page lacks %q; stderr %s", c.name, c.want, errs)
		}
		if c.name == "torn" && (strings.Contains(html, `class="slice pass`) || !strings.Contains(errs, "fixed-three-passes: no timeline: "+file+":41: ")) {
			t.Errorf("torn: the page should draw nothing of it and stderr say where it broke; stderr %s", errs)
		}
	}
}
