package specgen_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
)

// freeThreadSeeds are the generated specs (replayspec gen --seed N --count 1
// --caps C) on which free threads found the bugs of docs/decisions.md
// "Found under free threads": each is run many times.
var freeThreadSeeds = []struct {
	caps  []string
	seed  int
	found string
}{
	{specgen.CUDACaps, 158, "ACT-2, ACT-3, LCX-7: a context stopped by another thread while the write was taken (18.1)"},
	{specgen.CUDACaps, 81, "MEM-3: a kernel recorded after another thread's that ran after it (18.4)"},
	{specgen.CUDACaps, 182, "ACT-3 (18.1), MEM-3 (18.4)"},
	{specgen.CUDACaps, 443, "MEM-3 (18.4)"},
	{specgen.CUDACaps, 532, "ACT-3 (18.1)"},
	{specgen.CUDACaps, 844, "ACT-2, ACT-3, LCX-7 (18.1)"},
	{specgen.SimCaps, 1319, "MEM-2, MEM-3: another agent's kernel wrote the loop's buffer (18.3)"},
	{specgen.SimCaps, 2651, "MEM-2, MEM-3 (18.3)"},
	{specgen.SimCaps, 2753, "MEM-2, MEM-3 (18.3), LCX-7 (18.1)"},
}

var (
	freeSpecs = flag.Int("free.specs", 0, "TestGeneratedSpecsUnderFreeThreads: how many generated specs beside the known ones (0: a few hundred)")
	freeRuns  = flag.Int("free.runs", 0, "TestGeneratedSpecsUnderFreeThreads: runs of each (0: a few)")
)

// TestGeneratedSpecsUnderFreeThreads runs generated specs on the simulator
// with application threads truly in parallel (simtarget.Sim{Parallel:
// true}), each several times, and requires every rule oracle to hold on
// every trace: an oracle may fail only where the trace proves a violation
// under every order the threads could have run in, and the engine must
// keep the rules whatever that order (docs/decisions.md, "Found under free
// threads"). The specs that found the bugs run many times; a batch of
// others a few times each. make explore runs far more (-free.specs,
// -free.runs), offline.
func TestGeneratedSpecsUnderFreeThreads(t *testing.T) {
	found, batch, runs := 100, 300, 5
	if raceEnabled || testing.Short() {
		found, batch, runs = 25, 60, 2
	}
	if *freeSpecs > 0 {
		batch = *freeSpecs
	}
	if *freeRuns > 0 {
		runs = *freeRuns
	}
	type job struct {
		caps []string
		seed int
		runs int
	}
	var jobs []job
	for _, f := range freeThreadSeeds {
		jobs = append(jobs, job{f.caps, f.seed, found})
	}
	for i := range batch {
		caps := specgen.SimCaps
		if i%2 == 1 {
			caps = specgen.CUDACaps
		}
		jobs = append(jobs, job{caps, 5001 + i, runs})
	}
	total := 0
	for _, j := range jobs {
		name := fmt.Sprintf("gen-%06d", j.seed)
		s := spec.Defaults(specgen.Example(specgen.Config{Caps: j.caps, Name: name}, j.seed))
		for run := range j.runs {
			total++
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			tr, err := simtarget.Sim{Parallel: true}.Run(ctx, s, target.Options{})
			cancel()
			if err != nil {
				t.Errorf("%s (caps %s), run %d: %v", name, strings.Join(j.caps, ","), run+1, err)
				break
			}
			if vs := check.Judge(tr).Violations; len(vs) > 0 {
				var b strings.Builder
				for _, v := range vs {
					b.WriteString("\n" + v.String())
				}
				t.Errorf("%s (replayspec gen --seed %d --count 1 --caps %s), run %d under free threads:%s",
					name, j.seed, capsName(j.caps), run+1, b.String())
				break
			}
		}
	}
	t.Logf("%d runs of %d generated specs under free threads", total, len(jobs))
}

func capsName(caps []string) string {
	switch strings.Join(caps, ",") {
	case strings.Join(specgen.CUDACaps, ","):
		return "cuda"
	case strings.Join(specgen.SimCaps, ","):
		return "sim"
	}
	return strings.Join(caps, ",")
}
