// Package runner is the one pipeline: spec -> target -> trace -> checks ->
// result. The CLI, the Gherkin steps and the Go tests all run specs here.
package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync/atomic"
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
	// Run numbers the runs of one spec when specs run several times
	// (-count); 0 when each runs once.
	Run int
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
	// Err is a target failure (it could not run, or broke down), or the
	// harness's own limit (the time, the pass budget) running out.
	Err        error
	SkipReason string
	Elapsed    time.Duration
	// Tally, when set, stands for the events of a trace judged as a stream
	// and not kept (Trace then holds its header only).
	Tally *Tally
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
	// Timeout bounds one spec's wall time, from the start of its run to
	// the end of its judging (default 60 s): a target that never answers
	// is an error, never a hang.
	Timeout time.Duration
	// Grace is how long a target is given to stop once the time is up
	// (default 2 s); one that does not is abandoned, its trace being what
	// it recorded so far.
	Grace time.Duration
	// OnPass, when set, is called as each pass starts, with the number of
	// passes the spec has run so far (for progress on long runs).
	OnPass func(s spec.Spec, passes int)
	// OnJudge, when set, is called when the target is done with a spec and
	// its trace is being judged (for progress: judging a long trace takes
	// a while of its own).
	OnJudge func(s spec.Spec)
	// Spent, when set, is the time already spent on a spec before it runs
	// (reading and checking its file): it counts against the timeout and
	// in the spec's time.
	Spent func(s spec.Spec) time.Duration
	// Record, when set, is asked as each run of a spec starts on its
	// target for a sink that sees every event as it is recorded, and a
	// finish called once the target is done with it (or abandoned): how a
	// trace is written to its file as it is made. It is not asked for a
	// spec that is skipped. A target abandoned after its grace may still
	// call the sink after finish.
	Record func(s spec.Spec) (sink func(*trace.Event), finish func())
	// Stream judges a spec's events as they are recorded, with its
	// expectations, and keeps none of them in memory (check.Stream), when
	// its target says its header before it runs (target.Streaming): the
	// Result then holds the trace's header and a Tally, not its events.
	// The events go to an unlinked temporary file too, read back whole
	// only when the oracles cannot judge the trace a segment at a time.
	Stream bool
}

// DefaultTimeout bounds a spec when Options.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// ErrAbandoned is the error of a spec whose target did not stop within its
// grace: what it recorded is lost with it, unless it streamed its events
// somewhere (the CLI's FILE.partial keeps them).
var ErrAbandoned = errors.New("abandoned (what it recorded is lost with it)")

// DefaultGrace is how long a target gets to stop once its time is up.
const DefaultGrace = 2 * time.Second

// ErrInterrupted is wrapped by the error of a spec whose run was
// interrupted (SIGINT, SIGTERM): its caller's context was cancelled.
var ErrInterrupted = errors.New("interrupted")

// ErrEmptyTrace is wrapped by the error of a spec whose target returned a
// trace with no events.
var ErrEmptyTrace = errors.New("empty trace")

// errTimeout is wrapped by the error of a spec that ran out of time.
var errTimeout = errors.New("timed out")

// errNotJudged is wrapped by the error of a streamed run whose events the
// oracles could not judge apart and that could not be recorded again.
var errNotJudged = errors.New("not judged")

// errBudget is wrapped by the error of a spec whose loop the harness cut
// off at its pass budget without the spec expecting it.
var errBudget = errors.New("pass budget spent")

// Run runs one spec through the pipeline. It returns within the timeout
// and its grace, whatever the target does.
func Run(ctx context.Context, s spec.Spec, opts Options) Result {
	r := Result{Spec: s}
	tg := opts.Target
	if tg == nil {
		r.Err = errors.New("runner: no target to run the spec on (Options.Target is nil)")
		return r
	}
	need := s
	need.Requires = spec.Needs(s)
	if miss := target.Missing(tg, need); len(miss) > 0 {
		r.SkipReason = fmt.Sprintf("target %s does not claim %v", tg.Name(), miss)
		return r
	}
	timeout := cmpOr(opts.Timeout, DefaultTimeout)
	grace := cmpOr(opts.Grace, DefaultGrace)
	var spent time.Duration
	if opts.Spent != nil {
		spent = opts.Spent(s)
	}
	start := time.Now().Add(-spent)
	deadline := start.Add(timeout)
	runCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	var st *streamer
	if opts.Stream {
		// A target that records the same trace every time need not copy
		// it: the rare trace the oracles cannot judge apart is recorded
		// again (unless a Record sink must see it once only).
		rp, repeatable := tg.(target.Repeatable)
		st = newStreamer(tg, s, !repeatable || !rp.Repeatable() || opts.Record != nil) // nil: run and judged whole
	}
	whole := opts
	if st != nil {
		defer st.close()
		opts.Run.Sink = chainSinks(st.add, opts.Run.Sink)
		opts.Run.Discard = true
	}
	t, err := runTarget(runCtx, tg, s, opts, grace)
	if st != nil {
		t = st.finish(t)
		switch {
		case st.again(t) && runCtx.Err() == nil:
			whole.OnPass = nil // its passes were counted the first time
			t, err = runTarget(runCtx, tg, s, whole, grace)
		case st.again(t):
			// Its events were judged as they came and let go; a trace
			// cut short by the time rarely reads apart (its last
			// dispatch is half there), and there is no time to record it
			// again. Nothing is judged: the counts say what ran.
			err = errors.Join(err, fmt.Errorf("%w: its events were judged as they came and not kept, and the oracles needed them whole; run the spec with --trace-out to keep them", errNotJudged))
		}
		if st.judged == nil && len(t.Events) == 0 && st.err != nil {
			err = errors.Join(err, fmt.Errorf("%w: the oracles needed the trace whole, and its temporary copy could not be read back: %w (set TMPDIR to a directory with room, or keep the trace with --trace-out)", errNotJudged, st.err))
		}
	}
	r.Trace = t
	switch {
	case ctx.Err() != nil:
		err = errors.Join(fmt.Errorf("%w after %s: the trace holds what was recorded until then", ErrInterrupted, round(time.Since(start))), err)
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		// The engine ends a loop when the time is up and may return
		// cleanly: a spec that used all its time did not finish.
		err = errors.Join(fmt.Errorf("%w: no result within --timeout %s; the trace holds what was recorded until then", errTimeout, timeout), err)
	case err == nil:
		err = budgetSpent(s, stoppedIn(t, st))
	}
	if err == nil && len(t.Events) == 0 && (st == nil || st.tally.t.Events == 0) {
		// A spec always dispatches something, so a trace with no event
		// is a target that ran or recorded nothing: an error of the run,
		// never a verdict on the rules (nor an expected failure).
		err = fmt.Errorf("%w: target %s returned a trace with a header and no events; it ran nothing or recorded nothing, so nothing could be judged (look at the trace with --trace-out, and at the target's own output)", ErrEmptyTrace, tg.Name())
	}
	r.Err = err
	if errors.Is(err, target.ErrOverBudget) {
		// A trace cut at a budget is not judged: its missing end would
		// read as rule violations. The error names the budget.
		r.Elapsed = time.Since(start)
		return r
	}
	if errors.Is(err, errNotJudged) {
		r.Tally = st.tally.Tally()
		r.Elapsed = time.Since(start)
		return r
	}
	if opts.OnJudge != nil {
		opts.OnJudge(s)
	}
	if st != nil && st.judged != nil {
		JudgeStreamed(&r, s, *st.judged, st.expected, st.unobserved, st.tally.Tally())
		r.Elapsed = time.Since(start)
		return r
	}
	judgeBy(ctx, &r, s, t, deadline.Add(grace))
	r.Elapsed = time.Since(start)
	return r
}

// chainSinks is a sink that hands each event to first, then to then; a nil
// one is left out.
func chainSinks(first, then func(*trace.Event)) func(*trace.Event) {
	switch {
	case first == nil:
		return then
	case then == nil:
		return first
	}
	return func(e *trace.Event) {
		first(e)
		then(e)
	}
}

// runTarget runs the spec on the target in a goroutine, so that a target
// that does not stop when its context ends is abandoned after grace; a
// panic in the target is an error of the spec, not a crash of the run.
func runTarget(ctx context.Context, tg target.Target, s spec.Spec, opts Options, grace time.Duration) (trace.Trace, error) {
	type outcome struct {
		t   trace.Trace
		err error
	}
	// Only the passes are counted on the way: a copy of every event would
	// double the memory of a long run.
	var passes atomic.Int64
	ro := opts.Run
	if opts.Record != nil {
		sink, finish := opts.Record(s)
		defer finish()
		ro.Sink = chainSinks(ro.Sink, sink)
	}
	if opts.OnPass != nil {
		ro.Sink = chainSinks(ro.Sink, func(e *trace.Event) {
			if e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter {
				opts.OnPass(s, int(passes.Add(1)))
			}
		})
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o.err = fmt.Errorf("internal error: the target panicked: %v\n%s", p, debug.Stack())
			}
			done <- o
		}()
		o.t, o.err = tg.Run(ctx, spec.Defaults(s), ro)
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		select {
		case o = <-done:
		case <-time.After(grace):
			return abandonedTrace(tg, s),
				fmt.Errorf("the target did not stop within %s of being told to; %w", grace, ErrAbandoned)
		}
	}
	return o.t, o.err
}

// abandonedTrace is what is left of a run whose target did not stop: no
// events (they are lost with the target), under the header the target
// would have written when it says so in advance (a streaming target), so
// that the trace file stays readable; else one that claims no source.
func abandonedTrace(tg target.Target, s spec.Spec) trace.Trace {
	if st, ok := tg.(target.Streaming); ok {
		return trace.Trace{Header: st.Header(spec.Defaults(s))}
	}
	return trace.Trace{Header: trace.Header{Trace: trace.Version, Digest: trace.DigestXXH3, Spec: s.Name, Target: tg.Name(), Sources: []trace.Source{}}}
}

// budgetSpent is the error of a trace in which the harness cut off a loop
// the spec means to end: the harness's own pass budget ran out, which says
// nothing about the implementation. A loop the spec means never to end
// (listed under expect.never_ends, or an indefinite loop whose continue
// always says go on) is what the budget is for (CMP-4).
func budgetSpent(s spec.Spec, stopped []Stopped) error {
	budget := spec.Defaults(s).Limits.MaxPasses
	for _, ne := range stopped {
		// A loop the trace cannot tie to a dispatch of the spec (its ids
		// are broken) is left to the oracles: DID says what is wrong.
		if !ne.Known || slices.Contains(s.Expect.NeverEnds, ne.Label) || neverMeantToEnd(s, ne.Label) {
			continue
		}
		return fmt.Errorf("%w: the harness stopped %s after %d passes, its pass budget (limits.max_passes %d, or --max-passes); "+
			"list it under expect.never_ends if its loop must never end, else raise the budget or make its continue policy end the loop",
			errBudget, ne.Label, ne.Passes, budget)
	}
	return nil
}

// neverMeantToEnd reports whether dispatch label's plan is an indefinite
// loop whose continue always says go on.
func neverMeantToEnd(s spec.Spec, label string) bool {
	name := label
	if base, _, ok := spec.SplitRepetition(label); ok {
		name = base // a repetition follows its repeated dispatch's plan
	}
	for _, d := range s.Application.Dispatches {
		if d.Name != name {
			continue
		}
		p := s.Tool.Plan
		if d.Plan != nil {
			p = *d.Plan
		}
		n, fixed := p.Passes.Number()
		return fixed && n == 0 && p.Continue != nil && p.Continue.Always
	}
	return false
}

// Stopped is a dispatch whose loop the harness cut off (a never_ended
// event): the spec's label for it and the passes it ran.
type Stopped struct {
	Label    string
	Dispatch uint64
	Passes   uint64
	// Known is set when an event of the dispatch carries the spec's label.
	Known bool
}

// NeverEnded lists the dispatches of t whose loop the harness cut off,
// named by the spec's label when an event of the dispatch carries one.
func NeverEnded(t trace.Trace) []Stopped {
	var out []Stopped
	var labels map[uint64]string
	// By position, not by value: ranging over the events by value copied
	// every one (704 bytes), twice a run.
	for i := range t.Events {
		e := &t.Events[i]
		if e.Type != trace.NeverEnded {
			continue
		}
		if labels == nil {
			labels = map[uint64]string{}
			for k := range t.Events {
				o := &t.Events[k]
				if o.Dispatch != 0 && o.Label != "" && labels[o.Dispatch] == "" {
					labels[o.Dispatch] = o.Label
				}
			}
		}
		st := Stopped{Dispatch: e.Dispatch, Label: labels[e.Dispatch], Known: labels[e.Dispatch] != ""}
		if !st.Known {
			st.Label = fmt.Sprintf("dispatch %d", e.Dispatch)
		}
		st.Passes, _ = e.PassOf()
		out = append(out, st)
	}
	return out
}

// Judge fills r's verdicts for trace t of spec s: the oracles, the spec's
// own expectations, the violations it expects, and the rules it names.
// When r.Err is set the run did not finish: its expectations are not
// checked (they would only echo the breakdown), and a loop the harness cut
// off is not held against the implementation (CMP-4).
func Judge(r *Result, s spec.Spec, t trace.Trace) {
	j, exp, unobserved := check.JudgeSpec(s, t) // one index of the trace for both
	settle(r, s, j, exp, unobserved, func() []Stopped { return NeverEnded(t) })
}

// settle fills r from the oracles' judgement j and the spec's expectations
// (exp, unobserved); stopped lists the loops the harness cut off, asked
// only when the run did not finish.
func settle(r *Result, s spec.Spec, j check.Judgement, exp []check.Violation, unobserved []string, stopped func() []Stopped) {
	vs := j.Violations
	if r.Err == nil {
		vs = append(vs, exp...)
		r.Unobserved = unobserved
	} else if errors.Is(r.Err, errTimeout) || errors.Is(r.Err, errBudget) || errors.Is(r.Err, ErrInterrupted) {
		cut := map[uint64]bool{}
		for _, st := range stopped() {
			cut[st.Dispatch] = true
		}
		vs = slices.DeleteFunc(slices.Clone(vs), func(v check.Violation) bool { return v.Rule == "CMP-4" && cut[v.Dispatch] })
		j.Rules = slices.Clone(j.Rules)
		for i, rr := range j.Rules {
			if rr.Rule == "CMP-4" && rr.Verdict == check.Fail && !slices.ContainsFunc(vs, func(v check.Violation) bool { return v.Rule == "CMP-4" }) {
				j.Rules[i].Verdict, j.Rules[i].Violations = check.NotExercised, nil // cut off by the harness: not judged
			}
		}
	}
	r.Violations, r.Expected, r.Unseen = sortOut(vs, s.Expect.Violations)
	if r.Err != nil {
		r.Expected, r.Unseen = nil, nil
	}
	r.Rules = j.Rules
	r.Unexercised = unexercised(s.Rules, j)
	r.NothingJudged = j.Count()[check.Pass]+j.Count()[check.Fail] == 0
}

// judgeBy judges within the time left (until by): an oracle pass over a
// huge trace must not overrun the spec's bound. A judgement that does not
// finish in time leaves the spec an error.
func judgeBy(ctx context.Context, r *Result, s spec.Spec, t trace.Trace, by time.Time) {
	done := make(chan Result, 1)
	in := *r
	go func() {
		out := in
		defer func() {
			if p := recover(); p != nil {
				out.Err = errors.Join(out.Err, fmt.Errorf("internal error: judging the trace panicked: %v\n%s", p, debug.Stack()))
			}
			done <- out
		}()
		Judge(&out, s, t)
	}()
	wait := time.Until(by)
	if wait < time.Second {
		wait = time.Second // a spec that spent its time still has its partial trace looked at
	}
	select {
	case *r = <-done:
	case <-ctx.Done():
		r.Err = errors.Join(r.Err, fmt.Errorf("%w while judging the trace (%d events)", ErrInterrupted, len(t.Events)))
	case <-time.After(wait):
		r.Err = errors.Join(r.Err, fmt.Errorf("%w: judging the trace (%d events) did not finish within the spec's time", errTimeout, len(t.Events)))
	}
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

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
