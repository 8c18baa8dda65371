package specgen_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/replayspec/replayspec/internal/specgen"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/exec"
	"github.com/replayspec/replayspec/target/sim"
)

var (
	soakRuns   = flag.Int("soak.runs", 0, "TestSoak: how many runs in all (0: the test is skipped; make soak runs 100000)")
	soakSpecs  = flag.Int("soak.specs", 1000, "TestSoak: how many generated specs the runs are spread over")
	soakSeed   = flag.Int("soak.seed", 200001, "TestSoak: the first spec's seed (replayspec gen --seed)")
	soakTarget = flag.String("soak.target", "sim", "TestSoak: sim (the reference engine, threads free) or exec:COMMAND (a port through the driver protocol)")
	soakJobs   = flag.Int("soak.jobs", 2, "TestSoak: runs at once")
	soakLimit  = flag.Duration("soak.timeout", 60*time.Second, "TestSoak: the time one run may take (runner.Options.Timeout)")
)

// TestSoak runs generated specs again and again with the application's
// threads free, on the reference engine (simtarget.Sim{Parallel: true}) or
// on a port through its driver, and requires every run to hold: no rule
// oracle may fail a correct implementation under any interleaving
// (DESIGN.md, "Never fail a correct port"). Every run goes through the
// runner, so an error (a hang, a driver that dies, an empty trace) counts
// as a failure too. Half the specs are drawn for the simulator's
// capabilities, half for the CUDA target's. It runs only when asked
// (-soak.runs; make soak), and logs the rate: docs/faults.md, "Soak".
func TestSoak(t *testing.T) {
	if *soakRuns <= 0 {
		t.Skip("-soak.runs not given (make soak)")
	}
	var tg target.Target
	switch name := *soakTarget; {
	case name == "sim":
		tg = simtarget.Sim{Parallel: true}
	case strings.HasPrefix(name, "exec:"):
		var err error
		if tg, err = exectarget.Open(strings.TrimPrefix(name, "exec:")); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("-soak.target %q: want sim or exec:COMMAND", name)
	}
	specs := min(*soakSpecs, *soakRuns)
	type job struct {
		s         spec.Spec
		seed, run int
		caps      string
	}
	jobs := make(chan job)
	var ran, skipped, failed atomic.Int64
	var mu sync.Mutex
	var failures []string
	start := time.Now()
	var wg sync.WaitGroup
	for range max(*soakJobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := runner.Run(context.Background(), j.s, runner.Options{Target: tg, Timeout: *soakLimit})
				if n := ran.Add(1); n%10000 == 0 {
					t.Logf("%d runs, %d failed, %s", n, failed.Load(), time.Since(start).Round(time.Second))
				}
				switch r.Verdict() {
				case runner.Pass:
					continue
				case runner.Skip:
					skipped.Add(1)
					continue
				}
				failed.Add(1)
				var b strings.Builder
				fmt.Fprintf(&b, "%s run %d on %s: %s (replayspec gen --seed %d --count 1 --caps %s --out DIR)", j.s.Name, j.run+1, tg.Name(), r.Verdict(), j.seed, j.caps)
				if r.Err != nil {
					b.WriteString("\n  " + r.Err.Error())
				}
				for _, v := range r.Violations {
					b.WriteString("\n" + v.String())
				}
				if r.NothingJudged {
					b.WriteString("\n  nothing judged")
				}
				mu.Lock()
				failures = append(failures, b.String())
				mu.Unlock()
			}
		}()
	}
	// Spec k runs runs/specs times, one more for the first runs%specs;
	// every other spec is drawn for what the CUDA target claims, which
	// always runs threads freely.
	for k := range specs {
		seed := *soakSeed + k
		caps := specgen.SimCaps
		if k%2 == 1 {
			caps = specgen.CUDACaps
		}
		s := spec.Defaults(specgen.Example(specgen.Config{Caps: caps, Name: fmt.Sprintf("gen-%06d", seed)}, seed))
		n := *soakRuns / specs
		if k < *soakRuns%specs {
			n++
		}
		for run := range n {
			jobs <- job{s, seed, run, capsName(caps)}
		}
	}
	close(jobs)
	wg.Wait()
	took := time.Since(start)
	t.Logf("soak on %s: %d runs of %d generated specs (seeds %d..%d), %d skipped, %d failed, in %s: %.0f runs/s with %d at once",
		tg.Name(), ran.Load(), specs, *soakSeed, *soakSeed+specs-1, skipped.Load(), failed.Load(), took.Round(time.Second),
		float64(ran.Load())/took.Seconds(), *soakJobs)
	for _, f := range failures {
		t.Error(f)
	}
}
