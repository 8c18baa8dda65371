package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const goodPatch = `# lock-early: the lock is released early
#
# Breaks: MEM-6 MEM-2
#
# Why a port author writes it.

diff --git a/sdk/loop.c b/sdk/loop.c
index 1..2 100644
--- a/sdk/loop.c
+++ b/sdk/loop.c
@@ -1,3 +1,3 @@
 a
-b
+c
 d
`

func TestParsePatch(t *testing.T) {
	f, err := parsePatch("lock-early", goodPatch)
	if err != nil {
		t.Fatal(err)
	}
	if f.Title != "the lock is released early" || strings.Join(f.Breaks, " ") != "MEM-6 MEM-2" ||
		strings.Join(f.Files, " ") != "sdk/loop.c" || !strings.HasPrefix(f.Diff, "diff --git a/sdk/loop.c") {
		t.Errorf("parsed %+v", f)
	}
	bad := []struct{ name, text, want string }{
		{"lock-early", strings.Replace(goodPatch, "# Breaks: MEM-6 MEM-2\n", "", 1), "Breaks"},
		{"lock-early", strings.Replace(goodPatch, "MEM-6 MEM-2", "MEM-6 MEM-99", 1), "MEM-99"},
		{"lock-early", strings.Replace(goodPatch, "# lock-early:", "# other:", 1), "line 1"},
		{"Lock_Early", goodPatch, "lower-case"},
		{"lock-early", strings.ReplaceAll(goodPatch, "sdk/loop.c", "../Makefile"), "sources only"},
		{"lock-early", strings.Split(goodPatch, "diff --git")[0], "no diff"},
		{"lock-early", strings.Replace(goodPatch, "# Why", "Why", 1), "header is '#' lines"},
	}
	for _, b := range bad {
		if _, err := parsePatch(b.name, b.text); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error about %q", b.want, err, b.want)
		}
	}
}

// writePort makes a port tree with a faults.h table and one source.
func writePort(t *testing.T, table, source string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range sourceDirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sdk/faults.h", "/* Planted faults\n *\n"+table+" */\n")
	write("sdk/loop.c", source)
	write("port/main.c", "#ifndef KRS_FAULT_NAME\n#define KRS_FAULT_NAME \"\"\n#endif\n")
	return dir
}

func TestReadSwitches(t *testing.T) {
	// Columns are padded, but a long name or description may leave one space.
	table := " *   SKIP_RESTORE                   no restore between passes                      MEM-2, MEM-3\n" +
		" *   NO_AGENT_LOCK                  plain dispatches run during a loop             MEM-6\n" +
		" *   LOCAL_START_NOT_STARTED_ALLOWED local start of a context not active (LCX-7) succeeds LCX-7\n"
	uses := "#ifdef KRS_FAULT_SKIP_RESTORE\n#endif\n#ifndef KRS_FAULT_NO_AGENT_LOCK\n#endif\n#ifdef KRS_FAULT_LOCAL_START_NOT_STARTED_ALLOWED\n#endif\n"
	fs, err := readSwitches(writePort(t, table, uses))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 3 || fs[0].Name != "SKIP_RESTORE" || strings.Join(fs[0].Breaks, " ") != "MEM-2 MEM-3" ||
		fs[0].Title != "no restore between passes" || fs[1].Kind != Switch ||
		fs[2].Title != "local start of a context not active (LCX-7) succeeds" || strings.Join(fs[2].Breaks, " ") != "LCX-7" {
		t.Errorf("read %+v", fs)
	}
	// The table and the sources must agree both ways.
	if _, err := readSwitches(writePort(t, table, uses+"#ifdef KRS_FAULT_SOMETHING_NEW\n#endif\n")); err == nil ||
		!strings.Contains(err.Error(), "SOMETHING_NEW") {
		t.Errorf("a switch missing from the table: %v", err)
	}
	if _, err := readSwitches(writePort(t, table, "#ifdef KRS_FAULT_SKIP_RESTORE\n#endif\n")); err == nil ||
		!strings.Contains(err.Error(), "NO_AGENT_LOCK") {
		t.Errorf("a row no source tests: %v", err)
	}
	if _, err := readSwitches(writePort(t, strings.Replace(table, "MEM-6", "MEM-60", 1), uses)); err == nil {
		t.Error("a row naming no rule was accepted")
	}
}

func outcomeOf(m map[string][]string) outcome {
	o := outcome{}
	for spec, rs := range m {
		o[spec] = map[string]bool{}
		for _, r := range rs {
			o[spec][r] = true
		}
	}
	return o
}

// TestScoreSubtractsBaseline: a violation the unmodified driver shows with
// the same flags, in the same spec, never counts for a fault (the pass
// budget makes indefinite-never-ends fail EXPECT on every driver).
func TestScoreSubtractsBaseline(t *testing.T) {
	baseline := merge(
		outcomeOf(map[string][]string{"indefinite-never-ends": {expectRule}, "a": {}}),
		outcomeOf(map[string][]string{"indefinite-never-ends": {expectRule, "CMP-4"}, "flaky": {"MEM-3"}}),
	)
	f := Fault{Name: "x", Breaks: []string{"CMP-4", "MEM-3"}}
	cases := []struct {
		name   string
		run    outcome
		named  string
		missed string
		new    map[string]int
	}{
		{"only what the baseline shows", outcomeOf(map[string][]string{"indefinite-never-ends": {expectRule, "CMP-4"}, "flaky": {"MEM-3"}}),
			"", "CMP-4 MEM-3", map[string]int{}},
		{"the same rule in another spec", outcomeOf(map[string][]string{"indefinite-never-ends": {"CMP-4"}, "a": {"MEM-3"}}),
			"MEM-3", "CMP-4", map[string]int{"MEM-3": 1}},
		{"every rule, and others", outcomeOf(map[string][]string{"a": {"MEM-3", "CMP-4", errorRule}, "b": {"CMP-4"}}),
			"CMP-4 MEM-3", "", map[string]int{"MEM-3": 1, "CMP-4": 2, errorRule: 1}},
	}
	for _, c := range cases {
		got := score(f, c.run, baseline)
		if strings.Join(got.Named, " ") != c.named || strings.Join(got.Missed, " ") != c.missed || len(got.New) != len(c.new) {
			t.Errorf("%s: named %v missed %v new %v", c.name, got.Named, got.Missed, got.New)
		}
		for r, n := range c.new {
			if got.New[r] != n {
				t.Errorf("%s: %s in %d specs, want %d", c.name, r, got.New[r], n)
			}
		}
	}
}

func TestCount(t *testing.T) {
	faults := []Fault{{Name: "A", Kind: Switch}, {Name: "b", Kind: Patch}, {Name: "c", Kind: Patch}}
	cells := map[string]cell{
		"A": {Named: []string{"MEM-2"}},
		"b": {Named: []string{"MEM-2"}, Missed: []string{"MEM-3"}},
		"c": {Missed: []string{"LCX-4"}},
	}
	for _, c := range []struct {
		kind        Kind
		named, full int
	}{{Switch, 1, 1}, {Patch, 1, 0}, {"", 2, 1}} {
		got := count(faults, cells, c.kind)
		if got.Named != c.named || got.Full != c.full {
			t.Errorf("%s: %+v, want %d named, %d full", kindName(c.kind), got, c.named, c.full)
		}
	}
	if p := count(faults, cells, "").percent(); p < 66.6 || p > 66.7 {
		t.Errorf("percent %v", p)
	}
}

func TestAudit(t *testing.T) {
	faults := []Fault{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	cells := map[string]map[string]cell{
		"full":      {"a": {Named: []string{"MEM-2"}}, "b": {Missed: []string{"LCX-4"}}, "c": {Missed: []string{"COR-1"}}, "d": {Named: []string{"COR-1"}}},
		"black-box": {"a": {Named: []string{"MEM-2"}}},
	}
	reasons := map[reasonKey]reason{
		{"c", "full"}:      {"no spec has two threads", 1},
		{"a", "full"}:      {"stale", 2},
		{"a", "runtime"}:   {"not run: not judged", 3},
		{"gone", "full"}:   {"no such fault", 4},
		{"a", "black-box"}: {"stale too", 5},
		{"d", "full"}:      {"race (free threads): named in some runs only", 6}, // named in this run: not stale
	}
	got := strings.Join(audit(faults, cells, reasons, "unnamed.txt"), "\n")
	for _, want := range []string{"b at full: LCX-4 not named", "unnamed.txt:2: a at full is named", "unnamed.txt:5: a at black-box", "no fault is named gone"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit misses %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "c at full") || strings.Contains(got, "runtime") {
		t.Errorf("audit judged a cell with a reason, or one not run:\n%s", got)
	}
	if strings.Contains(got, "d at full") {
		t.Errorf("audit called a race's line stale in a run that named the fault:\n%s", got)
	}
}

func TestReadReasons(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "unnamed.txt")
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# comment\n\nfoo black-box: the runtime's reads are not seen\n")
	r, err := readReasons(file, allProfiles)
	if err != nil || r[reasonKey{"foo", "black-box"}].Text != "the runtime's reads are not seen" {
		t.Errorf("%v %v", r, err)
	}
	for _, bad := range []string{"foo blackbox: x\n", "foo full\n", "foo full: \n", "foo full: a\nfoo full: b\n"} {
		write(bad)
		if _, err := readReasons(file, allProfiles); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestReadOutcome(t *testing.T) {
	stream := `{"report":"replayspec.report/v2","event":"start","target":"exec:x"}
{"event":"result","name":"a","verdict":"fail","outcome":"failed","passes":0,"events":1,"elapsed_ms":1,"violations":[{"rule":"MEM-2","family":"MEM","requires":"","message":""},{"rule":"EXPECT","family":"EXPECT","requires":"","message":""}]}
{"event":"result","name":"b","verdict":"error","outcome":"error","passes":0,"events":0,"elapsed_ms":1,"error":"driver died"}
{"event":"result","name":"c","verdict":"pass","outcome":"passed","passes":0,"events":1,"elapsed_ms":1}
`
	o, err := readOutcome(bytes.NewBufferString(stream + `{"event":"end","summary":{"total":3,"passed":1,"failed":1,"errors":1,"skipped":0,"expected_failures":0,"elapsed_ms":3}}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !o["a"]["MEM-2"] || !o["a"][expectRule] || !o["b"][errorRule] || len(o["c"]) != 0 || len(o) != 3 {
		t.Errorf("read %v", o)
	}
	if _, err := readOutcome(bytes.NewBufferString(stream)); err == nil {
		t.Error("a report cut short was read as whole")
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "head\n" + docBegin + "\nold\n" + docEnd + "\ntail\n"
	got, err := replaceSection(doc, docBegin, docEnd, "new\n")
	if err != nil || got != "head\n"+docBegin+"\nnew\n"+docEnd+"\ntail\n" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := replaceSection("no markers", docBegin, docEnd, ""); err == nil {
		t.Error("a document without markers was accepted")
	}
}

// TestTheFaultsOfThePort reads the real catalogue: the switch table agrees
// with the sources, every patch has its header, there are at least 20, and
// each applies to the port as it is now (so a change to the port that
// breaks a patch fails here, not only in CI's matrix).
func TestTheFaultsOfThePort(t *testing.T) {
	port := filepath.Join("..", "..", "ports", "c")
	switches, err := readSwitches(port)
	if err != nil {
		t.Fatal(err)
	}
	patches, err := readPatches(filepath.Join(port, "faults"))
	if err != nil {
		t.Fatal(err)
	}
	if len(switches) == 0 || len(patches) < 20 {
		t.Fatalf("%d switches, %d patches: the matrix needs both, and at least 20 patches", len(switches), len(patches))
	}
	// make faults builds the same switches (its list is read from the table).
	if _, err := exec.LookPath("make"); err == nil {
		fl, err := readFlags(port)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range switches {
			names = append(names, f.Name)
		}
		if strings.Join(fl.FAULTS, " ") != strings.Join(names, " ") {
			t.Errorf("make -C ports/c faults builds\n  %v\nbut sdk/faults.h lists\n  %v", fl.FAULTS, names)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the patches are not applied")
	}
	for _, p := range patches {
		dir := t.TempDir()
		for _, d := range sourceDirs {
			if err := copyDir(filepath.Join(port, d), filepath.Join(dir, d)); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", "apply", "--check", "-")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
		cmd.Stdin = strings.NewReader(p.Diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s no longer applies to ports/c: %v\n%s", p.File, err, out)
		}
	}
}
