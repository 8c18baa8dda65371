package specgen_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

var (
	profileSpecs = flag.Int("profile.specs", 0, "TestGeneratedSpecsAtEveryProfile: how many generated specs (0: a few hundred)")
	profileRuns  = flag.Int("profile.runs", 1, "TestGeneratedSpecsAtEveryProfile: runs of each under free threads")
)

// narrower are the profiles below full, by the sources a port there reports.
var narrower = []struct {
	name    string
	sources []trace.Source
}{
	{"black-box", []trace.Source{trace.SourceTool, trace.SourceApp}},
	{"runtime", []trace.Source{trace.SourceTool, trace.SourceApp, trace.SourceRuntime}},
}

// profileSeeds are generated specs (replayspec gen --seed N --count 1
// --caps C) that once failed a correct implementation at a narrower
// profile, judged before the others.
var profileSeeds = []struct {
	caps []string
	seed int
}{
	// A failed restore ended the process in d3's loop right after the
	// tool freed and allocated a buffer from its PASS EXIT callback:
	// at black-box, that free and allocation were taken for d3's thread
	// living on past the loop (CMP-1, CB-1, PC-3, PC-8; every run, on the
	// C port and the engine's driver alike; decision 17.20).
	{specgen.SimCaps, 369},
	// The tool's dispatch, written from CONFIG ENTER by a tool that
	// subscribes to CONFIG alone, never ends: at black-box its CONFIG
	// ENTER was not taken to name it, so it "got no CONFIG callback"
	// (MEM-6) and owed a CONFIG EXIT (CB-1; decision 17.21). The caps the
	// C port's driver claims (no repeat), as its --gen 2000 --gen-seed
	// 1000 made it.
	{cPortCaps, 1165},
	// The tool's dispatches, written from CONFIG ENTER, asked for an
	// indefinite loop on an agent whose snapshot limit the first failed
	// snapshot had already shown (snapshot_incomplete is printed once a
	// process): not replayed, they "opened no window of their own" at
	// black-box and runtime (MEM-6; decision 17.22).
	{cPortCaps, 6777},
}

// cPortCaps are the caps the C port's driver claims: the simulator's but
// repeat.
var cPortCaps = slices.DeleteFunc(slices.Clone(specgen.SimCaps), func(c string) bool { return c == spec.CapRepeat })

// TestGeneratedSpecsAtEveryProfile judges the reference engine's traces of
// generated specs as a port at the black-box and at the runtime profile
// would report them, with its threads scheduled and truly in parallel: an
// oracle that decides a rule from what the tool and the application saw
// (their copies of memory, the signal's value, the ids they saw, the
// warnings printed) must never fail a correct implementation where the
// SDK's or the runtime's account would not (docs/oracles.md).
func TestGeneratedSpecsAtEveryProfile(t *testing.T) {
	n := 300
	if raceEnabled || testing.Short() {
		n = 60
	}
	if *profileSpecs > 0 {
		n = *profileSpecs
	}
	for i := range len(profileSeeds) + n {
		caps := specgen.SimCaps
		if i%2 == 1 {
			caps = specgen.CUDACaps
		}
		seed := 9001 + i - len(profileSeeds)
		if i < len(profileSeeds) {
			caps, seed = profileSeeds[i].caps, profileSeeds[i].seed
		}
		name := fmt.Sprintf("gen-%06d", seed)
		s := spec.Defaults(specgen.Example(specgen.Config{Caps: caps, Name: name}, seed))
		modes := []bool{false}
		for range max(*profileRuns, 1) {
			modes = append(modes, true)
		}
		for _, parallel := range modes {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			tr, err := simtarget.Sim{Parallel: parallel}.Run(ctx, s, target.Options{})
			cancel()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, p := range narrower {
				if vs := check.Judge(tr.Only(p.sources)).Violations; len(vs) > 0 {
					var b strings.Builder
					for _, v := range vs {
						b.WriteString("\n" + v.String())
					}
					t.Errorf("%s (replayspec gen --seed %d --count 1 --caps %s) at the %s profile, free threads %v:%s",
						name, seed, capsName(caps), p.name, parallel, b.String())
				}
			}
		}
	}
}
