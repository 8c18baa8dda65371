// Package faults proves the spec library against the reference engine's
// planted faults: every fault of replay.AllFaults must be caught by at least
// one spec of specs/, through a rule oracle naming a rule the fault is meant
// to break (docs/faults.md).
package faults

import (
	"context"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// Catches maps every planted fault to the rules it is meant to break
// (replay's one fault table). A run with the fault planted must show a
// violation of one of these rules.
var Catches = func() map[replay.Fault][]string {
	m := map[replay.Fault][]string{}
	for _, f := range replay.AllFaults() {
		m[f] = replay.Breaks(f)
	}
	return m
}()

// OracleGaps lists the faults no oracle of check/ can report today, with
// what the oracle lacks. TestMatrix logs them instead of failing, and fails
// once one is caught, so that the list stays true (docs/faults.md).
var OracleGaps = map[replay.Fault]string{}

// Outcome is one spec run with some faults planted.
type Outcome struct {
	Spec   string
	Rules  []string // the spec's rules: list
	Result runner.Result
}

// Run runs every spec on the simulator with faults planted, on a small
// pool of workers, and returns the outcomes in the order of specs.
func Run(ctx context.Context, specs []spec.Spec, fs replay.Faults, workers int) []Outcome {
	return RunAt(ctx, specs, fs, workers, nil)
}

// seeing is a target whose traces keep only the events of some sources: the
// engine as a port at a narrower profile reports it.
type seeing struct {
	simtarget.Sim
	sources []trace.Source
}

// Header says what the narrower port reports.
func (s seeing) Header(sp spec.Spec) trace.Header {
	h := s.Sim.Header(sp)
	h.Sources = s.sources
	return h
}

func (s seeing) Run(ctx context.Context, sp spec.Spec, opts target.Options) (trace.Trace, error) {
	t, err := s.Sim.Run(ctx, sp, opts)
	return t.Only(s.sources), err
}

// RunAt is Run for a port that reports only the given sources (nil: all,
// the full profile): what the same faults look like at the black-box or
// the runtime profile.
func RunAt(ctx context.Context, specs []spec.Spec, fs replay.Faults, workers int, sources []trace.Source) []Outcome {
	var tg target.Target = simtarget.Sim{Faults: fs}
	if sources != nil {
		tg = seeing{simtarget.Sim{Faults: fs}, sources}
	}
	if workers <= 0 {
		workers = max(runtime.GOMAXPROCS(0), 2)
	}
	out := make([]Outcome, len(specs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := specs[i]
				r := runner.Run(ctx, s, runner.Options{Target: tg})
				out[i] = Outcome{Spec: s.Name, Rules: s.Rules, Result: r}
			}
		}()
	}
	for i := range specs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return out
}

// Catch is what the library made of one planted fault.
type Catch struct {
	Fault replay.Fault
	// ByOracle maps each rule of Catches[Fault] that some oracle reported
	// to the specs whose run reported it.
	ByOracle map[string][]string
	// ByExpectation lists specs tagged with one of the fault's rules whose
	// own expectations (rule EXPECT) failed: the spec noticed the fault
	// though no oracle named the rule.
	ByExpectation []string
	// Other lists every other rule reported, with its specs.
	Other map[string][]string
	// Errors lists specs the target could not finish.
	Errors []string
}

// Caught reports whether an oracle reported one of the fault's rules.
func (c Catch) Caught() bool { return len(c.ByOracle) > 0 }

// Judge sorts the outcomes of one fault's run into a Catch.
func Judge(f replay.Fault, outs []Outcome) Catch {
	c := Catch{Fault: f, ByOracle: map[string][]string{}, Other: map[string][]string{}}
	meant := Catches[f]
	for _, o := range outs {
		if o.Result.Err != nil {
			c.Errors = append(c.Errors, o.Spec)
		}
		expectFailed := false
		seen := map[string]bool{}
		for _, v := range append(slices.Clone(o.Result.Violations), o.Result.Expected...) {
			if seen[v.Rule] {
				continue
			}
			seen[v.Rule] = true
			switch {
			case v.Rule == check.ExpectRule:
				expectFailed = true
			case slices.Contains(meant, v.Rule):
				c.ByOracle[v.Rule] = append(c.ByOracle[v.Rule], o.Spec)
			default:
				c.Other[v.Rule] = append(c.Other[v.Rule], o.Spec)
			}
		}
		if expectFailed && slices.ContainsFunc(meant, func(r string) bool { return slices.Contains(o.Rules, r) }) {
			c.ByExpectation = append(c.ByExpectation, o.Spec)
		}
	}
	return c
}

// Rules returns the keys of m, sorted.
func Rules(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
