package runner

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Plan says how RunPlan goes through the specs.
type Plan struct {
	// Count runs every spec this many times (flake hunting); 0 or 1 once.
	Count int
	// FailFast stops starting specs after the first that fails or errs
	// (a flake does not count); those already running finish.
	FailFast bool
	// Jobs runs this many specs at once (0 or 1: one at a time). Results
	// are still handed to Done in the specs' order.
	Jobs int
	// Retry reruns unexpected failures to tell flakes from failures.
	Retry Retry
	// Started, when set, is called as each spec starts (from the worker
	// that runs it).
	Started func(i, total int, s spec.Spec)
	// Done, when set, is called for each spec in the specs' order, as soon
	// as it and every spec before it have finished: reports and traces are
	// written here, so a run that is killed keeps what it did.
	Done func(i, total int, a Attempted)
	// Record, when set, gives each run of each case (Options.Record) a
	// sink for its events as they are recorded; run numbers the runs of
	// a spec when Count > 1 (0 otherwise), as Result.Run does.
	Record func(s spec.Spec, run int) (sink func(*trace.Event), finish func())
	// Summaries: once Done has had a case, its events are forgotten (the
	// trace's header stays), so that a run of many specs holds one trace
	// per worker, not one per spec. The cases RunPlan returns then carry
	// no events.
	Summaries bool
}

// DefaultMaxRuns is how many runs one plan may make before the CLI refuses
// it (--max-runs): every case is a spec run, judged and reported, and its
// summary is kept to the end of the run.
const DefaultMaxRuns = 100_000

// Runs is the most runs a plan of n specs may make: each spec Count times,
// each run again up to Retry.Retries times. It is worked out before
// anything is made (--count 1000000 is a typo, not a job list), and
// saturates rather than overflow.
func (p Plan) Runs(n int) uint64 {
	total := uint64(max(n, 0))
	for _, f := range []int{max(p.Count, 1), 1 + max(p.Retry.Retries, 0)} {
		hi, lo := bits.Mul64(total, uint64(f))
		if hi != 0 {
			return math.MaxUint64
		}
		total = lo
	}
	return total
}

// Stop says why RunPlan stopped before running every spec ("" when it did
// not).
type Stop string

// RunAll runs specs in order, calling progress (when not nil) after each.
func RunAll(ctx context.Context, specs []spec.Spec, opts Options, progress func(done, total int, r Result)) []Result {
	var plan Plan
	if progress != nil {
		plan.Done = func(i, total int, a Attempted) { progress(i+1, total, a.Result) }
	}
	cases, _ := RunPlan(ctx, specs, opts, plan)
	out := make([]Result, len(cases))
	for i, a := range cases {
		out[i] = a.Result
	}
	return out
}

// RunPlan runs specs (each Count times) on Jobs workers, with reruns, and
// hands each case to plan.Done in order. It stops starting specs when ctx
// is cancelled (the specs running then are reported as errors, with what
// they recorded) or, with FailFast, after the first failure. It returns
// the cases handed to Done.
func RunPlan(ctx context.Context, specs []spec.Spec, opts Options, plan Plan) ([]Attempted, Stop) {
	count := max(plan.Count, 1)
	// Case i is run i%count+1 of spec i/count: worked out as each starts,
	// so that a large Count costs nothing until it runs (the CLI refuses
	// one over its budget first: Runs).
	total := len(specs) * count
	job := func(i int) (spec.Spec, int) {
		if count == 1 {
			return specs[i], 0
		}
		return specs[i/count], i%count + 1
	}
	// pending holds cases that finished before an earlier one: at most
	// one per worker beyond the first not yet done.
	type finished struct {
		a   Attempted
		ran bool
	}
	pending := map[int]finished{}
	var handed []Attempted
	var mu sync.Mutex
	next := 0 // the first case not yet handed to Done
	failedAt := ""
	// finish records case i (ran: false for one not started because the
	// run was stopping) and hands every finished case, in order, to Done.
	finish := func(i int, a Attempted, didRun bool) {
		mu.Lock()
		defer mu.Unlock()
		pending[i] = finished{a, didRun}
		for next < total {
			f, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if !f.ran {
				continue
			}
			a := f.a
			if plan.Done != nil {
				plan.Done(len(handed), total, a)
			}
			if plan.Summaries {
				a.Result.Trace.Events = nil
				if f := a.Failed; f != nil {
					kept := *f
					kept.Trace.Events = nil
					a.Failed = &kept
				}
			}
			handed = append(handed, a)
			if v := a.Result.Verdict(); plan.FailFast && failedAt == "" && !a.Flaky && (v == Fail || v == Error) {
				failedAt = a.Result.Spec.Name
			}
		}
	}
	stopping := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failedAt != "" || ctx.Err() != nil
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(plan.Jobs, total)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if stopping() {
					finish(i, Attempted{}, false)
					continue
				}
				s, run := job(i)
				if plan.Started != nil {
					plan.Started(i, total, s)
				}
				o := opts
				if plan.Record != nil {
					o.Record = func(s spec.Spec) (func(*trace.Event), func()) { return plan.Record(s, run) }
				}
				a := RunAttempts(ctx, s, o, plan.Retry)
				a.Result.Run = run
				if a.Failed != nil {
					a.Failed.Run = run
				}
				finish(i, a, true)
			}
		}()
	}
	for i := range total {
		if stopping() {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	n := len(handed)
	switch {
	case ctx.Err() != nil:
		return handed, Stop(fmt.Sprintf("interrupted after %d of %d specs", n, total))
	case failedAt != "" && n < total:
		return handed, Stop(fmt.Sprintf("--fail-fast: stopped after %s failed; %d of %d specs not run", failedAt, total-n, total))
	}
	return handed, ""
}

// Filter selects specs: by a regular expression on the name (like go
// test -run), by the rules or rule families they name, by name list (a
// rerun of the last failures).
type Filter struct {
	Name *regexp.Regexp
	// Rules are rule IDs (PC-3) or families (PC); a spec is kept when its
	// rules: or expect.violations name one.
	Rules []string
	// Names, when not nil, keeps only the specs so named.
	Names []string
}

// Select keeps the specs that f admits, in order.
func Select(specs []spec.Spec, f Filter) []spec.Spec {
	var out []spec.Spec
	for _, s := range specs {
		if f.Name != nil && !f.Name.MatchString(s.Name) {
			continue
		}
		if f.Names != nil && !slices.Contains(f.Names, s.Name) {
			continue
		}
		if len(f.Rules) > 0 && !namesRule(s, f.Rules) {
			continue
		}
		out = append(out, s)
	}
	return out
}

func namesRule(s spec.Spec, want []string) bool {
	for _, id := range append(slices.Clone(s.Rules), s.Expect.Violations...) {
		fam, _, _ := strings.Cut(id, "-")
		if slices.Contains(want, id) || slices.Contains(want, fam) {
			return true
		}
	}
	return false
}
