package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/replayspec/replayspec/report"
	"github.com/replayspec/replayspec/runner"
)

func TestReportOnSim(t *testing.T) {
	out := filepath.Join(t.TempDir(), "compliance.json")
	code, stdout, errs := cli(t, "report", "--format", "json", "--out", out, library+"/fixed-three-passes.yaml")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, errs)
	}
	if stdout != "" {
		t.Errorf("--out given, yet stdout has %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m report.Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Target != "sim" || m.Totals[runner.Failed] != 0 || m.Totals[runner.Errored] != 0 || m.Totals[runner.Passed] == 0 {
		t.Errorf("target %q totals %v", m.Target, m.Totals)
	}
	for _, r := range m.Rules {
		if want := map[string]runner.Status{"PC-3": runner.Passed, "RPV-1": report.NotCovered}[r.Rule]; want != "" && r.Status != want {
			t.Errorf("%s is %s, want %s", r.Rule, r.Status, want)
		}
	}
}

// TestReportPortWithKnownBug: a port (the reference driver with a planted
// fault) lists what it fails; listed failures are expected, a listed rule
// that holds is an error, and an unlisted failure fails the run.
func TestReportPortWithKnownBug(t *testing.T) {
	port := "exec:" + driverCommand(t, "driver", "--fault", "skip_restore")
	spec := library + "/fixed-three-passes.yaml"
	dir := t.TempDir()
	cases := []struct {
		name, list string
		code       int
		md, errs   []string
	}{
		{name: "no list", code: exitFail,
			md:   []string{"| MEM-2 | **failed** |", "| fixed-three-passes | **failed** | MEM-2, MEM-3, EXPECT |", "with faults skip_restore"},
			errs: []string{"fixed-three-passes: failed", "[MEM-2]"}},
		{name: "listed", list: "fixed-three-passes restore is not implemented\n", code: exitOK,
			md: []string{"| MEM-2 | expected failure |", "| fixed-three-passes | expected failure | MEM-2, MEM-3, EXPECT | restore is not implemented |"}},
		{name: "rules listed, expectation not", list: "MEM-2 no restore\nMEM-3 no restore\n", code: exitFail,
			md: []string{"| MEM-2 | **failed** |", "fails EXPECT"}},
		// A listed rule no spec of this run shows is not stale: a subset
		// of the library may run.
		{name: "entry not exercised", list: "fixed-three-passes restore is not implemented\nCOR-3 ids reused\n", code: exitOK,
			md: []string{"| COR-3 | not covered |"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"report", "--target", port}
			if c.list != "" {
				args = append(args, "--xfail", tempFile(t, dir, "known.txt", c.list))
			}
			code, out, errs := cli(t, append(args, spec)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, c.code, out, errs)
			}
			wantAll(t, "markdown", out, c.md...)
			wantAll(t, "stderr", errs, c.errs...)
		})
	}
	// A listed rule that passes where it is shown is an error.
	code, _, errs := cli(t, "report", "--xfail", tempFile(t, dir, "stale.txt", "PC-3 we thought it failed\n"), spec)
	if code != exitFail {
		t.Errorf("stale rule: exit %d, want 1", code)
	}
	wantAll(t, "stderr", errs, "rule PC-3 is listed as failing", "remove it from")
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	// Each refusal comes before a spec runs: one spec will do (the
	// library costs a second under -race).
	library := library + "/fixed-three-passes.yaml"
	for _, c := range []struct {
		args []string
		errs string
	}{
		{[]string{"report", "--format", "html", library}, `unknown format "html"`},
		{[]string{"report", "--xfail", tempFile(t, dir, "x.txt", "PC-3\n"), library}, "PC-3 has no reason"},
		{[]string{"report", "--target", "exec:no-such-driver-program", library}, "cannot find the driver program"},
	} {
		code, _, errs := cli(t, c.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		wantAll(t, "stderr", errs, c.errs)
	}
}
