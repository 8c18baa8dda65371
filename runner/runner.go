// Package runner is the one pipeline: spec -> target -> trace -> checks ->
// result. The CLI, the Gherkin steps and the Go tests all run specs here.
package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// Verdict is the outcome of one spec.
type Verdict string

// Verdicts.
const (
	Pass  Verdict = "pass"
	Fail  Verdict = "fail"  // a rule oracle or an expectation does not hold
	Error Verdict = "error" // the target could not run the spec
	Skip  Verdict = "skip"  // the target does not claim what the spec needs
)

// Result is what running one spec gave.
type Result struct {
	Spec  spec.Spec
	Trace trace.Trace
	// Violations are failures nobody expected.
	Violations []check.Violation
	// Expected are failures the spec listed under expect.violations.
	Expected []check.Violation
	// Unseen lists rules of expect.violations no oracle reported.
	Unseen []string
	// Rules is each oracle rule's verdict on the trace: pass only where an
	// instance was examined and held.
	Rules []check.RuleResult
	// Unexercised lists rules the spec names that no oracle examined in its
	// trace: the spec claims to show them and did not.
	Unexercised []string
	// NothingJudged is set when no oracle examined anything at all: a
	// trace that shows nothing cannot pass.
	NothingJudged bool
	// Unobserved lists the spec's expectations (expect.<key>) the trace's
	// sources cannot show: neither judged nor passed.
	Unobserved []string
	// Err is a target failure (it could not run, or broke down).
	Err        error
	SkipReason string
	Elapsed    time.Duration
}

// Verdict reduces the result to one word.
func (r Result) Verdict() Verdict {
	switch {
	case r.SkipReason != "":
		return Skip
	case r.Err != nil:
		return Error
	case len(r.Violations) > 0 || len(r.Unseen) > 0 || len(r.Unexercised) > 0 || r.NothingJudged:
		return Fail
	}
	return Pass
}

// Options for running specs.
type Options struct {
	Target target.Target
	// Run are the options handed to the target.
	Run target.Options
	// Timeout bounds one spec (default 60 s): a target that never answers
	// is an error, never a hang.
	Timeout time.Duration
}

// Run runs one spec through the pipeline.
func Run(ctx context.Context, s spec.Spec, opts Options) Result {
	r := Result{Spec: s}
	tg := opts.Target
	if tg == nil {
		r.Err = errors.New("runner: no target to run the spec on (Options.Target is nil)")
		return r
	}
	if miss := target.Missing(tg, s); len(miss) > 0 {
		r.SkipReason = fmt.Sprintf("target %s does not claim %v", tg.Name(), miss)
		return r
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	t, err := tg.Run(ctx, spec.Defaults(s), opts.Run)
	r.Elapsed = time.Since(start)
	r.Trace = t
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The engine ends a loop when the time is up and may return
		// cleanly: a spec that used all its time did not finish.
		err = errors.Join(fmt.Errorf("no result within %s; the trace holds what was recorded until then", timeout), err)
	}
	r.Err = err
	Judge(&r, s, t)
	return r
}

// Judge fills r's verdicts for trace t of spec s: the oracles, the spec's
// own expectations, the violations it expects, and the rules it names.
func Judge(r *Result, s spec.Spec, t trace.Trace) {
	j, exp, unobserved := check.JudgeSpec(s, t) // one index of the trace for both
	vs := append(j.Violations, exp...)
	r.Unobserved = unobserved
	r.Violations, r.Expected, r.Unseen = sortOut(vs, s.Expect.Violations)
	r.Rules = j.Rules
	r.Unexercised = unexercised(s.Rules, j)
	r.NothingJudged = j.Count()[check.Pass]+j.Count()[check.Fail] == 0
}

// unexercised lists the named rules whose verdict is "not exercised". A
// rule the trace cannot show (not observable) is not held against the
// spec: the port's profile decides that, and reports say so.
func unexercised(named []string, j check.Judgement) []string {
	var out []string
	for _, id := range named {
		if rr, ok := j.Rule(id); ok && rr.Verdict == check.NotExercised {
			out = append(out, id)
		}
	}
	return out
}

// sortOut separates the violations a spec expects from the rest.
func sortOut(vs []check.Violation, expected []string) (unexpected, matched []check.Violation, unseen []string) {
	seen := map[string]bool{}
	for _, v := range vs {
		if slices.Contains(expected, v.Rule) {
			matched = append(matched, v)
			seen[v.Rule] = true
			continue
		}
		unexpected = append(unexpected, v)
	}
	for _, id := range expected {
		if !seen[id] {
			unseen = append(unseen, id)
		}
	}
	return unexpected, matched, unseen
}

// RunAll runs specs in order, calling progress after each.
func RunAll(ctx context.Context, specs []spec.Spec, opts Options, progress func(done, total int, r Result)) []Result {
	out := make([]Result, 0, len(specs))
	for i, s := range specs {
		r := Run(ctx, s, opts)
		out = append(out, r)
		if progress != nil {
			progress(i+1, len(specs), r)
		}
	}
	return out
}
