package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/internal/coverage"
	"github.com/replayspec/replayspec/rules"
)

const feature = `@PC
Feature: pass count

  @PC-3 @CONT-1
  Scenario: continue can end a fixed loop early
    Given a tool that asks for 5 passes

  Rule: the API
    @API-2
    Scenario Outline: operation <op> resolves
      Given the operation <op>
      Examples:
        | op     |
        | CONFIG |
        | PASS   |
`

const cucumber = `[{"uri":"features/pc.feature","name":"pass count","elements":[
 {"name":"continue can end a fixed loop early","type":"scenario","steps":[{"result":{"status":"passed"}}]},
 {"name":"operation CONFIG resolves","type":"scenario","steps":[{"result":{"status":"passed"}}]},
 {"name":"operation PASS resolves","type":"scenario","steps":[{"result":{"status":"failed"}}]}]}]`

func TestRules(t *testing.T) {
	dir := t.TempDir()
	feats := filepath.Join(dir, "features")
	if err := os.Mkdir(feats, 0o755); err != nil {
		t.Fatal(err)
	}
	tempFile(t, feats, "pc.feature", feature)
	bdd := tempFile(t, dir, "features.json", cucumber)
	specs := filepath.Join(dir, "specs")
	if err := os.Mkdir(specs, 0o755); err != nil {
		t.Fatal(err)
	}
	tempFile(t, specs, "tiny.yaml", okSpec)

	code, out, errs := cli(t, "rules", "--format", "json", "--specs", specs, "--features", feats, "--bdd-report", bdd)
	if code != exitFail {
		t.Errorf("exit %d, want 1 (most rules have neither spec nor scenario)", code)
	}
	var table []coverage.Rule
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(table) != len(rules.All()) {
		t.Errorf("%d rules listed, want %d", len(table), len(rules.All()))
	}
	by := map[string]coverage.Rule{}
	for _, rc := range table {
		by[rc.ID] = rc
	}
	if rc := by["PC-3"]; !rc.Covered || len(rc.Specs) != 1 || rc.Specs[0].Verdict != "pass" || len(rc.Scenarios) != 1 || rc.Scenarios[0].Status != "passed" {
		t.Errorf("PC-3: %+v", rc)
	}
	if rc := by["CONT-1"]; !rc.Covered || len(rc.Specs) != 0 {
		t.Errorf("CONT-1 is covered by its passing scenario only: %+v", rc)
	}
	if rc := by["API-2"]; len(rc.Scenarios) != 1 || rc.Scenarios[0].Status != "failed" || rc.Scenarios[0].Line != 10 {
		t.Errorf("API-2's outline failed one example: %+v", rc)
	}
	if rc := by["API-2"]; !rc.Covered || len(rc.Specs) != 1 {
		t.Errorf("API-2 is covered by the spec whose trace held it, though tiny does not name it: %+v", rc)
	}
	if rc := by["CMP-1"]; !rc.Covered {
		t.Errorf("CMP-1 is covered by the passing spec: %+v", rc)
	}
	if rc := by["ACT-5"]; rc.Covered {
		t.Errorf("ACT-5 has nothing: %+v", rc)
	}
	wantAll(t, "stderr", errs, "rules are not covered", "ACT-5")

	code, out, _ = cli(t, "rules", "--specs", specs, "--features", filepath.Join(dir, "none"))
	if code != exitFail {
		t.Errorf("exit %d, want 1", code)
	}
	wantAll(t, "text", out, "PC-3    "+by["PC-3"].Text, "specs:     tiny (1 examined)", "no scenarios", "NOT COVERED")

	code, out, _ = cli(t, "rules", "--format", "markdown", "--specs", specs, "--features", feats)
	wantAll(t, "markdown", out, "| rule | requires |", "| PC-3 |", "(unknown)")
	if code != exitFail {
		t.Errorf("markdown: exit %d, want 1", code)
	}
}

func TestRulesBadInput(t *testing.T) {
	dir := t.TempDir()
	// rules runs its specs before it reads the features: one small spec
	// is enough to reach the bad feature and report (the library ran here
	// twice, 3 s of CPU under -race; TestRulesLibrary runs it).
	one := filepath.Join(dir, "one")
	if err := os.Mkdir(one, 0o755); err != nil {
		t.Fatal(err)
	}
	tempFile(t, one, "tiny.yaml", okSpec)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing specs", []string{"rules", "--specs", filepath.Join(dir, "nope")}, "nope: no such file"},
		{"bad format", []string{"rules", "--format", "html"}, "unknown format"},
		{"argument", []string{"rules", "specs/"}, "unexpected argument"},
		{"bad feature", []string{"rules", "--specs", one, "--features", badFeatures(t, dir)}, "bad.feature: Parser errors"},
		{"bad cucumber", []string{"rules", "--specs", one, "--bdd-report", tempFile(t, dir, "x.json", "{")}, "not a cucumber JSON report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := cli(t, tc.args...)
			if code != exitUsage || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tc.want)
			}
		})
	}
}

func TestRulesLibrary(t *testing.T) {
	code, out, _ := cli(t, "rules", "--specs", library, "--features", "../../features")
	if code != exitOK && code != exitFail {
		t.Errorf("exit %d", code)
	}
	if !strings.Contains(out, "rules:") {
		t.Errorf("no summary line:\n%s", out)
	}
}

func badFeatures(t *testing.T, dir string) string {
	d := filepath.Join(dir, "badfeatures")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	tempFile(t, d, "bad.feature", "Feature: x\n  Scenario: y\n    Given z\n  | a |\n Nonsense: here\n")
	return d
}
