package runner

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/spec"
)

// Plan says how RunAll goes through the specs.
type Plan struct {
	// Count runs every spec this many times (flake hunting); 0 or 1 once.
	Count int
	// FailFast stops after the first spec that fails or errs.
	FailFast bool
	// Started, when set, is called as each spec starts.
	Started func(i, total int, s spec.Spec)
	// Done, when set, is called as each spec finishes, before the next
	// starts: reports and traces are written here, so a run that is
	// killed keeps what it did.
	Done func(i, total int, r Result)
}

// Stop says why RunAll stopped before running every spec ("" when it did
// not).
type Stop string

// RunAll runs specs in order, calling progress (when not nil) after each.
func RunAll(ctx context.Context, specs []spec.Spec, opts Options, progress func(done, total int, r Result)) []Result {
	var plan Plan
	if progress != nil {
		plan.Done = func(i, total int, r Result) { progress(i+1, total, r) }
	}
	out, _ := RunPlan(ctx, specs, opts, plan)
	return out
}

// RunPlan runs specs in order (each Count times), calling plan.Done after
// each. It stops early when ctx is cancelled (the spec running then is
// reported as an error, with what it recorded) or, with FailFast, after
// the first failure.
func RunPlan(ctx context.Context, specs []spec.Spec, opts Options, plan Plan) ([]Result, Stop) {
	count := max(plan.Count, 1)
	total := len(specs) * count
	out := make([]Result, 0, total)
	i := 0
	for _, s := range specs {
		for run := 1; run <= count; run++ {
			if ctx.Err() != nil {
				return out, Stop(fmt.Sprintf("interrupted after %d of %d specs", i, total))
			}
			if plan.Started != nil {
				plan.Started(i, total, s)
			}
			r := Run(ctx, s, opts)
			if count > 1 {
				r.Run = run
			}
			out = append(out, r)
			i++
			if plan.Done != nil {
				plan.Done(i-1, total, r)
			}
			if ctx.Err() != nil {
				return out, Stop(fmt.Sprintf("interrupted after %d of %d specs", i, total))
			}
			if v := r.Verdict(); plan.FailFast && (v == Fail || v == Error) {
				if i < total {
					return out, Stop(fmt.Sprintf("--fail-fast: stopped after %s failed; %d of %d specs not run", r.Spec.Name, total-i, total))
				}
				return out, ""
			}
		}
	}
	return out, ""
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
