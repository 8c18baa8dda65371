package golden

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// library loads every spec of the built-in library; a spec that does not
// load is a failure here too, since it has no golden.
func library(t *testing.T) []spec.Spec {
	t.Helper()
	out, err := specs.Library()
	if err != nil {
		t.Error(err)
	}
	if len(out) == 0 {
		t.Fatal("the built-in library is empty")
	}
	return out
}

// traceOf runs s on the simulator and returns its NDJSON trace.
func traceOf(t *testing.T, s spec.Spec) []byte {
	t.Helper()
	tr, err := simtarget.Sim{}.Run(context.Background(), spec.Defaults(s), target.Options{})
	if err != nil {
		// A run may fail on purpose (a never-ending loop); the trace
		// still holds everything recorded, and that is what is pinned.
		t.Logf("%s: the run returned %v", s.Name, err)
	}
	return trace.Marshal(tr)
}

// The tests below that read a spec's trace or its judged run without
// testing the run itself share one of each per spec: each was the library
// run again (seven times over in this package, under -race in make test).
// TestGolden pins the trace they share, TestDeterministic runs it again.
var (
	tracesRun  = map[string][]byte{}
	resultsRun = map[string]runner.Result{}
)

// sharedTraceOf is traceOf(s), run once for the package's tests.
func sharedTraceOf(t *testing.T, s spec.Spec) []byte {
	t.Helper()
	if b, ok := tracesRun[s.Name]; ok {
		return b
	}
	b := traceOf(t, s)
	tracesRun[s.Name] = b
	return b
}

// sharedRun is runner.Run of s on the simulator, run once for the
// package's tests.
func sharedRun(s spec.Spec) runner.Result {
	if r, ok := resultsRun[s.Name]; ok {
		return r
	}
	r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
	resultsRun[s.Name] = r
	return r
}

func TestGolden(t *testing.T) {
	g := goldie.New(t,
		goldie.WithFixtureDir("."),
		goldie.WithNameSuffix(".ndjson"),
		goldie.WithDiffFn(firstDifferences),
	)
	for _, s := range library(t) {
		t.Run(s.Name, func(t *testing.T) {
			got := sharedTraceOf(t, s)
			g.Assert(t, s.Name, got)
		})
	}
}

// TestGoldenPassesItsSpec keeps a golden from pinning a broken run: each
// spec must pass on the simulator through the whole pipeline.
func TestGoldenPassesItsSpec(t *testing.T) {
	for _, s := range library(t) {
		t.Run(s.Name, func(t *testing.T) {
			r := sharedRun(s)
			if v := r.Verdict(); v != runner.Pass {
				var msg strings.Builder
				for _, vi := range r.Violations {
					msg.WriteString("\n" + vi.String())
				}
				t.Errorf("%s: verdict %s (err %v, unseen %v)%s", s.File, v, r.Err, r.Unseen, msg.String())
			}
		})
	}
}

// TestNoOrphanGoldens keeps goldens and specs in step: a golden without a
// spec is stale (removed with -update).
func TestNoOrphanGoldens(t *testing.T) {
	names := map[string]bool{}
	for _, s := range library(t) {
		names[s.Name] = true
	}
	files, _ := filepath.Glob("*.ndjson")
	cases, _ := filepath.Glob("*/*.ndjson") // a matrix's cases: BASE/ID.ndjson
	for _, f := range append(files, cases...) {
		name := filepath.ToSlash(strings.TrimSuffix(f, ".ndjson"))
		if names[name] {
			continue
		}
		if update() {
			if err := os.Remove(f); err != nil {
				t.Error(err)
			}
			continue
		}
		t.Errorf("golden/%s has no spec named %q in specs/: remove it (make golden does)", f, name)
	}
}

// TestDeterministic runs every spec repeatedly: the trace must be the same
// bytes every time (20 runs, 3 with -short).
func TestDeterministic(t *testing.T) {
	runs := 20
	if testing.Short() {
		// make test (-short, -race): two runs, each spec's trace the same
		// bytes twice (TestGolden holds it to the pinned trace besides);
		// twenty in make test-heavy.
		runs = 2
	}
	for _, s := range library(t) {
		t.Run(s.Name, func(t *testing.T) {
			first := sharedTraceOf(t, s) // run 1, shared with TestGolden
			for i := 1; i < runs; i++ {
				if got := traceOf(t, s); !bytes.Equal(got, first) {
					t.Fatalf("run %d differs from run 1:\n%s", i+1, firstDifferences(string(got), string(first)))
				}
			}
		})
	}
}

func update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// firstDifferences is the goldie diff: the first lines that differ, with
// their line numbers, which reads better than a character diff of long
// NDJSON lines.
func firstDifferences(actual, expected string) string {
	const show = 5
	got := strings.Split(actual, "\n")
	want := strings.Split(expected, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "golden has %d lines, this run %d lines (go test ./golden -update rewrites; review the diff)\n", len(want), len(got))
	shown := 0
	for i := 0; i < max(len(got), len(want)) && shown < show; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g == w {
			continue
		}
		shown++
		fmt.Fprintf(&b, "line %d:\n  golden: %s\n  run:    %s\n", i+1, orMissing(w, i < len(want)), orMissing(g, i < len(got)))
		if col := firstColumn(g, w); col > 0 {
			fmt.Fprintf(&b, "  first difference at column %d: golden %q, run %q\n", col, around(w, col), around(g, col))
		}
	}
	return b.String()
}

func orMissing(s string, present bool) string {
	if !present {
		return "(no line)"
	}
	return s
}

// firstColumn is the 1-based column of the first differing byte, 0 when
// one line is missing.
func firstColumn(a, b string) int {
	if a == "" || b == "" {
		return 0
	}
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i + 1
		}
	}
	return n + 1
}

// around is a short excerpt of s at 1-based column col.
func around(s string, col int) string {
	from := max(0, col-1-20)
	to := min(len(s), col-1+20)
	if from > to {
		return ""
	}
	return s[from:to]
}

// TestLibraryEarnsEveryRule: every rule the oracles judge is exercised and
// held by some spec of the library, counted by the oracles themselves, not
// by the specs' rules: lists.
func TestLibraryEarnsEveryRule(t *testing.T) {
	passed := map[string][]string{}
	for _, s := range library(t) {
		r := sharedRun(s)
		for _, rr := range r.Rules {
			if rr.Verdict == check.Pass {
				passed[rr.Rule] = append(passed[rr.Rule], s.Name)
			}
		}
	}
	for _, id := range check.JudgedRules() {
		if len(passed[id]) == 0 {
			t.Errorf("%s: no spec of the library exercised it and held it", id)
		}
	}
}

// A golden cut down to its header, or stripped of what the tool saw, cannot
// pass for its spec: the named rules are no longer exercised.
func TestCutTracesFail(t *testing.T) {
	cuts := []struct {
		reason string
		keep   func(e trace.Event) bool
	}{
		{"only the header is left", func(trace.Event) bool { return false }},
		{"every tool callback is stripped", func(e trace.Event) bool { return e.Type != trace.Callback && e.Type != trace.Returned }},
	}
	for _, s := range library(t) {
		tr, err := trace.Read(bytes.NewReader(sharedTraceOf(t, s)))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		for _, c := range cuts {
			cut := tr
			cut.Events = nil
			for _, e := range tr.Events {
				if c.keep(e) {
					cut.Events = append(cut.Events, e)
				}
			}
			if len(cut.Events) == len(tr.Events) {
				continue // nothing to strip: the same trace, rightly passing
			}
			var r runner.Result
			runner.Judge(&r, s, cut)
			if r.Verdict() == runner.Pass {
				t.Errorf("%s: %s, yet the trace passes its spec", s.Name, c.reason)
			}
		}
	}
}

// TestEmbeddedIsTheLibrary: the embedded traces are exactly one per spec
// and matrix case of the library, so a binary that carries them carries
// every one and nothing stale.
func TestEmbeddedIsTheLibrary(t *testing.T) {
	want := map[string]bool{}
	for _, s := range library(t) {
		want[s.Name] = true
	}
	for _, name := range Names() {
		if !want[name] {
			t.Errorf("golden %s.ndjson pins no spec of the library: remove it", name)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("spec %s has no embedded golden: run make golden", name)
	}
	if _, err := Read("../go.mod"); err == nil {
		t.Error("Read reached outside the goldens")
	}
}
