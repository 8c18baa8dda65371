package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/trace"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	spec := tempFile(t, dir, "tiny.yaml", okSpec)
	good := filepath.Join(dir, "good.ndjson")
	if code, out, errs := cli(t, "run", "--trace-out", good, spec); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, out, _ := cli(t, "check", good)
	if code != exitOK || !strings.Contains(out, "PASS tiny") {
		t.Errorf("good trace: exit %d\n%s", code, out)
	}
	code, out, _ = cli(t, "check", "--format", "json", good)
	_, _, end, err := report.ReadJSON(strings.NewReader(out))
	if err != nil || code != exitOK || end.Summary == nil || end.Summary.Passed != 1 {
		t.Errorf("json: exit %d, err %v\n%s", code, err, out)
	}
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	head := `{"trace":"` + trace.Version + `","digest":"xxh3-64","spec":"x","sources":["tool","app","runtime","sdk"]}` + "\n"
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"malformed line", head + `{"seq":1,"type":"api"}` + "\n" + `{"seq":2,"type":` + "\n", []string{"bad.ndjson:3:", "docs/trace.md"}},
		{"unknown field", head + `{"seq":1,"type":"api","colour":"red"}` + "\n", []string{"bad.ndjson:2:", "colour"}},
		{"no type", head + `{"seq":1}` + "\n", []string{"bad.ndjson:2:", "no \"type\""}},
		{"no header", `{"seq":1,"type":"api"}` + "\n", []string{"bad.ndjson:1:", "header"}},
		{"empty", "", []string{"bad.ndjson:1:", "empty trace"}},
		{"wrong version", `{"trace":"replayspec.trace/v0"}` + "\n", []string{"bad.ndjson:1:", "not supported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tempFile(t, dir, "bad.ndjson", tc.content)
			code, _, errs := cli(t, "check", f)
			if code != exitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			wantAll(t, "stderr", errs, tc.want...)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		code, _, errs := cli(t, "check", filepath.Join(dir, "nope.ndjson"))
		if code != exitUsage {
			t.Errorf("exit %d, want 2", code)
		}
		wantAll(t, "stderr", errs, "nope.ndjson: no such file")
	})
	t.Run("no argument", func(t *testing.T) {
		code, _, errs := cli(t, "check")
		if code != exitUsage {
			t.Errorf("exit %d, want 2", code)
		}
		wantAll(t, "stderr", errs, "no trace given")
	})
}

// TestCheckBrokenTrace: a trace whose events break a rule fails with the
// rule named, whoever wrote it.
func TestCheckBrokenTrace(t *testing.T) {
	dir := t.TempDir()
	spec := tempFile(t, dir, "tiny.yaml", okSpec)
	tr := filepath.Join(dir, "t.ndjson")
	cli(t, "run", "--trace-out", tr, spec)
	got := readTraceFile(t, tr)
	// Drop every PASS EXIT: each pass must close (CB-2).
	var kept []trace.Event
	for _, e := range got.Events {
		if e.Type == trace.Callback && e.Op == "PASS" && e.Phase == "EXIT" {
			continue
		}
		kept = append(kept, e)
	}
	got.Events = kept
	broken := tempFile(t, dir, "broken.ndjson", string(trace.Marshal(got)))
	code, out, _ := cli(t, "check", broken)
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "report", out, "FAIL tiny", "[CB-2]", "the whole trace in "+broken)
}
