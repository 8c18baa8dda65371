package replay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/internal/faults"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target/sim"
)

// The tests of this file are the ones the mutation run (make mutation)
// judges a mutant of this package by: the unit tests of replay_test.go are
// built out of it (build tag mutation), so that a mutant dies only by an
// oracle or an expectation that names a rule it breaks, or by a planted
// fault no longer breaking the rule it is meant to break.

// TestLibraryHolds runs the whole spec library through the engine and the
// rule oracles: every spec must pass.
func TestLibraryHolds(t *testing.T) {
	var why []string
	for _, s := range library(t) {
		// The library's loops end within a few passes, or within the budget
		// their spec sets; a bounded loop an engine runs as indefinite need
		// not spend the default 10000 passes of every spec before PC-3/PC-4
		// and CMP-4 see it (the mutant fixed := pl.passes <= 0 would).
		if s.Limits.MaxPasses == 0 { // unset: spec.DefaultMaxPasses
			s.Limits.MaxPasses = 100
		}
		r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		if v := r.Verdict(); v != runner.Pass {
			var w []string
			for _, vi := range r.Violations {
				w = append(w, vi.Rule+": "+vi.Message)
			}
			for _, id := range r.Unexercised {
				w = append(w, id+": named but not exercised")
			}
			if r.NothingJudged {
				w = append(w, "nothing judged")
			}
			if r.Err != nil {
				w = append(w, "error: "+r.Err.Error())
			}
			t.Errorf("%s: %s\n  %s", s.Name, v, strings.Join(w, "\n  "))
			why = append(why, s.Name+" ["+strings.Join(s.Rules, " ")+"] "+strings.Join(w, "; "))
		}
	}
	logKill(t, why)
}

// TestPlantedFaultsCaught is the fault matrix of internal/faults, here so
// that the mutation run covers the planted faults (faults.go, faulty.go):
// each fault, planted by name as the CLI and the features plant it, must
// still make some spec's oracle report a rule the fault is meant to break.
func TestPlantedFaultsCaught(t *testing.T) {
	if testing.Short() {
		// internal/faults' TestMatrix is the same matrix, in make test-heavy.
		t.Skip("runs the library once per planted fault (make test-heavy)")
	}
	lib := library(t)
	var why []string
	for _, f := range replay.AllFaults() {
		fs, err := replay.ParseFaults(string(f))
		if err != nil {
			t.Fatal(err)
		}
		c := faults.Judge(f, faults.Run(context.Background(), lib, fs, 2))
		if !c.Caught() {
			t.Errorf("planted fault %s: no oracle reported any of %v (other rules reported: %v)", f, replay.Breaks(f), faults.Rules(c.Other))
			why = append(why, "fault "+string(f)+" not caught ("+strings.Join(replay.Breaks(f), " ")+")")
		}
	}
	logKill(t, why)
}

func library(t *testing.T) []spec.Spec {
	t.Helper()
	lib, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// logKill serves the mutation run's account of what killed each mutant
// (docs/faults.md, "Mutation testing"). When REPLAYSPEC_MUTANT_LOG names a
// file and REPLAYSPEC_MUTANT_ORIG the unmutated module root, a failing test
// appends one JSON line: the line of this package that differs from the
// original (the mutant gremlins planted in its copy of the module) and what
// failed. Outside a mutation run it does nothing.
func logKill(t *testing.T, why []string) {
	logPath, orig := os.Getenv("REPLAYSPEC_MUTANT_LOG"), os.Getenv("REPLAYSPEC_MUTANT_ORIG")
	if len(why) == 0 || logPath == "" || orig == "" {
		return
	}
	here, err := filepath.Abs(".")
	if err != nil {
		return
	}
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		mut, err1 := os.ReadFile(name)
		was, err2 := os.ReadFile(filepath.Join(orig, "replay", name))
		if err1 != nil || err2 != nil || string(mut) == string(was) || filepath.Join(orig, "internal", "replay") == here {
			continue
		}
		// gremlins writes the mutated file through go/printer, which may
		// realign comments and fields: compare lines with their runs of
		// spaces and tabs folded, and give the column in the original.
		a, b := lines(string(was)), lines(string(mut))
		for i := range min(len(a), len(b)) {
			na, at := fold(a[i])
			nb, _ := fold(b[i])
			if na == nb {
				continue
			}
			k := 0
			for k < min(len(na), len(nb)) && na[k] == nb[k] {
				k++
			}
			col := len(a[i]) + 1
			if k < len(at) {
				col = at[k] + 1
			}
			line, _ := json.Marshal(map[string]any{"file": name, "line": i + 1, "col": col,
				"was": na, "now": nb, "test": t.Name(), "why": why})
			if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				_, _ = f.Write(append(line, '\n'))
				_ = f.Close()
			}
			return
		}
	}
}

// fold trims s and folds each run of spaces and tabs into one space; at
// gives, for each byte of the result, its index in s.
func fold(s string) (string, []int) {
	var out []byte
	var at []int
	space := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' {
			space = len(out) > 0
			continue
		}
		if space {
			out, at = append(out, ' '), append(at, i-1)
			space = false
		}
		out, at = append(out, s[i]), append(at, i)
	}
	return string(out), at
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return slices.Clip(out)
}
