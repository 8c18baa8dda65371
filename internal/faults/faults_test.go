package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/replayspec/replayspec/replay"
)

// TestCatchesCoversEveryFault keeps the Catches table in step with the
// engine's list of faults.
func TestCatchesCoversEveryFault(t *testing.T) {
	all := replay.AllFaults()
	for _, f := range all {
		if len(Catches[f]) == 0 {
			t.Errorf("fault %s has no entry in Catches", f)
		}
	}
	for f := range Catches {
		if !slices.Contains(all, f) {
			t.Errorf("Catches names %s, which replay.AllFaults does not list", f)
		}
	}
}

// TestMatrix plants every fault, one at a time, runs the whole library with
// it and requires some spec to report a violation of a rule the fault is
// meant to break. It prints the matrix fault -> rules caught -> specs.
//
//	go test ./faults -run TestMatrix -v
func TestMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the library once per planted fault (make test-heavy)")
	}
	specs := library(t)
	faults := replay.AllFaults()
	catches := judgeEach(faults, func(fs replay.Faults) []Outcome { return Run(context.Background(), specs, fs, 2) })
	table := Matrix(catches)
	t.Log("\n" + table)
	checkDoc(t, table)
	for _, c := range catches {
		gap, known := OracleGaps[c.Fault]
		switch {
		case c.Caught() && known:
			t.Errorf("fault %s is now caught (%v): remove it from OracleGaps", c.Fault, Rules(c.ByOracle))
			continue
		case c.Caught():
			continue
		case known:
			t.Logf("known oracle gap, fault %s not caught: %s (noticed by expectations of: %v)", c.Fault, gap, c.ByExpectation)
			continue
		}
		t.Errorf("fault %s: no spec reported any of %v through an oracle (expectations that failed: %v; other rules reported: %v)",
			c.Fault, Catches[c.Fault], c.ByExpectation, Rules(c.Other))
	}
}

// Matrix renders catches as a Markdown table.
func Matrix(catches []Catch) string {
	var b strings.Builder
	b.WriteString("| fault | what it plants | meant to break | caught (rule: specs) | also noticed by expectations of |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, c := range catches {
		var caught []string
		for _, r := range Rules(c.ByOracle) {
			caught = append(caught, fmt.Sprintf("%s: %s", r, short(c.ByOracle[r])))
		}
		got := strings.Join(caught, "; ")
		if got == "" {
			got = "**not caught**"
			if _, known := OracleGaps[c.Fault]; known {
				got += " (known oracle gap)"
			}
		}
		exp := short(c.ByExpectation)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", c.Fault, replay.Plants(c.Fault), strings.Join(Catches[c.Fault], ", "), got, exp)
	}
	return b.String()
}

// short lists up to four specs and counts the rest.
func short(specs []string) string {
	const most = 4
	if len(specs) == 0 {
		return "-"
	}
	if len(specs) <= most {
		return strings.Join(specs, ", ")
	}
	return fmt.Sprintf("%s (+%d more)", strings.Join(specs[:most], ", "), len(specs)-most)
}

var update = flag.Bool("update", false, "rewrite the fault matrix in docs/faults.md")

// The matrix between these lines of docs/faults.md is what TestMatrix
// found; -update rewrites it.
const (
	docPath  = "../../docs/faults.md"
	docBegin = "<!-- fault matrix: go test ./internal/faults -run TestMatrix -update -->\n"
	docEnd   = "<!-- end of fault matrix -->\n"
)

func checkDoc(t *testing.T, table string) {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i, j := strings.Index(text, docBegin), strings.Index(text, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no fault matrix between %q and %q", docPath, docBegin, docEnd)
	}
	want := text[:i+len(docBegin)] + table + text[j:]
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != text {
		t.Errorf("the fault matrix in %s is out of date: go test ./internal/faults -run TestMatrix -update", docPath)
	}
}

// judgeEach runs each fault alone through run and judges it, two faults at
// a time (each run spreads its specs over a small pool), so a whole matrix
// takes seconds.
func judgeEach(faults []replay.Fault, run func(replay.Faults) []Outcome) []Catch {
	catches := make([]Catch, len(faults))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, f := range faults {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			catches[i] = Judge(f, run(replay.Faults{f: true}))
		}()
	}
	wg.Wait()
	return catches
}
