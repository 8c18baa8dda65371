package main

import (
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	code, out, errs := cli(t, "list", library)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "fixed-three-passes ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no line for fixed-three-passes:\n%s", out)
	}
	wantAll(t, "line", line, "PC-3,", "../../specs/fixed-three-passes.yaml")

	code, _, errs = cli(t, "list", t.TempDir())
	if code != exitUsage || !strings.Contains(errs, "no spec files") {
		t.Errorf("empty directory: exit %d, stderr %q", code, errs)
	}
}

// A spec with a matrix is listed as its cases, each with its own rules,
// and validate counts them.
func TestListShowsMatrixCases(t *testing.T) {
	_, out, _ := cli(t, "list", library+"/pass-count-table.yaml")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d lines, want the table's 14 cases:\n%s", len(lines), out)
	}
	wantAll(t, "first case", lines[0], "pass-count-table/passes=none,continue=unset ", "PC-1,MEM-1,CB-1")
	wantAll(t, "last case", lines[13], "pass-count-table/passes=0,continue=stop-after-1 ", "PC-5,CONT-3,PC-7")
	code, out, _ := cli(t, "validate", library+"/pass-count-table.yaml")
	if code != exitOK || !strings.Contains(out, "pass-count-table.yaml (14 cases)") {
		t.Errorf("validate: exit %d, %q", code, out)
	}
	code, out, _ = cli(t, "run", "--quiet", "--format", "junit", library+"/counters-by-agent-kind.yaml")
	if code != exitOK || !strings.Contains(out, `classname="replayspec.counters-by-agent-kind/kind=MI200"`) {
		t.Errorf("JUnit does not name the cases: exit %d\n%s", code, out)
	}
}
