package steps

import (
	"context"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/trace"
)

// The steps about the replay loop: the passes that run, the callbacks around them, the pass count and continue calls, the agent held meanwhile.

func registerLoop(sc *godog.ScenarioContext) {
	step(sc, `^passes `+nums+` run`+optOf+`$`, passesRun)
	step(sc, `^(?:"([\w-]+)" runs )?exactly (\d+) passes(?: run)?$`, nPassesRun)
	step(sc, `^(?:the dispatch|"([\w-]+)") is not replayed: it runs once, and no memory is saved$`, notReplayed)
	step(sc, `^(?:the dispatch|"([\w-]+)") gets no replay callback and runs once$`, noReplayCallback)
	step(sc, `^the kernel(?: of "([\w-]+)")? runs (once|twice|\d+ times) on the GPU$`, kernelRunsTimes)
	step(sc, `^every pass reports total passes (\d+)$`, totalPasses)
	step(sc, `^CONFIG (?:of "([\w-]+)" )?fires once, ENTER then EXIT, around every pass$`, configOnce)
	step(sc, `^each pass opens with PASS ENTER and closes with PASS EXIT, in order$`, passesBracketed)
	step(sc, `^the pass count is asked once, after CONFIG ENTER and before the first pass$`, passCountOnce)
	step(sc, `^"([\w-]+)" runs on the agent only after "([\w-]+)"'s loop has ended$`, exclusive)
	step(sc, `^continue is consulted after pass(?:es)? `+nums+optOf+`$`, continueAfter)
	step(sc, `^continue is never consulted$`, continueNever)
	step(sc, `^each consultation of continue follows the PASS EXIT of the pass it judges$`, continueAfterExit)
}

func passesRun(ctx context.Context, which, label string) error {
	want, err := numbers(which)
	if err != nil {
		return err
	}
	return runsPasses(ctx, label, want)
}

// nPassesRun: passes 0 to n-1 run.
func nPassesRun(ctx context.Context, label string, n uint64) error {
	want := make([]uint64, n)
	for i := range want {
		want[i] = uint64(i)
	}
	return runsPasses(ctx, label, want)
}

// runsPasses: the dispatch runs exactly the passes want, each opened by a
// PASS ENTER and closed by a PASS EXIT.
func runsPasses(ctx context.Context, label string, want []uint64) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	enters, exits := passes(v.callbacks(trace.OpPass, trace.PhaseEnter)), passes(v.callbacks(trace.OpPass, trace.PhaseExit))
	if !equalPasses(enters, want) || !equalPasses(exits, want) {
		return w.failf("%s should run passes %s; the tool saw PASS ENTER for %s and PASS EXIT for %s:\n%s",
			v.label, list(want), list(enters), list(exits), show(v.of(trace.Callback)...))
	}
	return nil
}

// notReplayed: no PASS, no snapshot or restore, and the kernel ran once.
func notReplayed(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if err := w.expectNone(v.callbacks(trace.OpPass, anyPhase), "%s should not be replayed, yet the tool saw PASS callbacks", v.label); err != nil {
		return err
	}
	if err := w.expectNone(v.savesAndRestores(), "%s should not be replayed, yet memory was saved or restored", v.label); err != nil {
		return err
	}
	if k := byType(v.window(), trace.Kernel); len(k) != 1 {
		return w.failf("%s should run once, its kernel ran %d times:\n%s", v.label, len(k), show(k...))
	}
	return nil
}

func noReplayCallback(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if err := w.expectNone(v.of(trace.Callback, trace.PassCount), "%s should cause no replay callback at all", v.label); err != nil {
		return err
	}
	return notReplayed(ctx, label)
}

func kernelRunsTimes(ctx context.Context, label, t string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if k, n := byType(v.window(), trace.Kernel), times(t); len(k) != n {
		return w.failf("the kernel of %s should run %d times on the GPU, it ran %d times:\n%s", v.label, n, len(k), show(k...))
	}
	return nil
}

func totalPasses(ctx context.Context, n uint64) error {
	w, ps, err := passCallbacksOf(ctx)
	if err != nil {
		return err
	}
	return w.expectEvery(ps, func(e trace.Event) bool { return e.Total != nil && *e.Total == n },
		"every pass should report total passes %d", n)
}

func configOnce(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	cfg := v.callbacks(trace.OpConfig, anyPhase)
	if len(cfg) != 2 || cfg[0].Phase != trace.PhaseEnter || cfg[1].Phase != trace.PhaseExit {
		return w.failf("%s should get one CONFIG ENTER then one CONFIG EXIT:\n%s", v.label, show(cfg...))
	}
	for _, e := range v.callbacks(trace.OpPass, anyPhase) {
		if e.Seq < cfg[0].Seq || e.Seq > cfg[1].Seq {
			return w.failf("every pass should lie between CONFIG ENTER and EXIT:\n%s", show(cfg[0], e, cfg[1]))
		}
	}
	return nil
}

func passesBracketed(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	ps := v.callbacks(trace.OpPass, anyPhase)
	if len(ps) == 0 || len(ps)%2 != 0 {
		return w.failf("every pass should have an ENTER and an EXIT:\n%s", show(ps...))
	}
	for i := 0; i < len(ps); i += 2 {
		a, b := ps[i], ps[i+1]
		if a.Phase != trace.PhaseEnter || b.Phase != trace.PhaseExit || *a.Pass != *b.Pass || *a.Pass != uint64(i/2) {
			return w.failf("pass %d should be an ENTER followed by its EXIT:\n%s", i/2, show(a, b))
		}
	}
	return nil
}

// passCountOnce: asked once, after CONFIG ENTER returned, before any pass.
func passCountOnce(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	pc := v.of(trace.PassCount)
	ce := v.callbacks(trace.OpConfig, trace.PhaseEnter)
	if len(pc) != 1 || len(ce) != 1 || pc[0].Seq < ce[0].Seq {
		return w.failf("the pass count should be asked once, after CONFIG ENTER:\n%s", show(append(ce, pc...)...))
	}
	if p, ok := first(v.callbacks(trace.OpPass, trace.PhaseEnter)); ok && p.Seq < pc[0].Seq {
		return w.failf("the pass count should be asked before the first pass:\n%s", show(pc[0], p))
	}
	return nil
}

// exclusive: b's kernel runs on the agent only once a's loop has ended.
func exclusive(ctx context.Context, b, a string) error {
	w, va, vb, err := twoDispatchesOf(ctx, a, b)
	if err != nil {
		return err
	}
	end, ok := last(va.callbacks(trace.OpConfig, trace.PhaseExit))
	kb, okb := first(vb.of(trace.Kernel))
	if !ok || !okb {
		return w.failf("both %s's loop and %s's kernel should be in the trace", a, b)
	}
	if kb.Seq < end.Seq {
		return w.failf("%s's kernel should wait until %s's loop has ended; it ran inside it:\n%s", b, a, show(kb, end))
	}
	// And it was really submitted during the loop.
	d, _ := first(vb.appOf(trace.AppDispatch))
	if d.Seq > end.Seq {
		return w.failf("%s was only submitted after %s's loop, so nothing was shown:\n%s", b, a, show(d, end))
	}
	return nil
}

// --- continue -----------------------------------------------------------

func continueAfter(ctx context.Context, which, label string) error {
	w, v, want, err := passesOf(ctx, label, which)
	if err != nil {
		return err
	}
	if got := passes(v.of(trace.Continue)); !equalPasses(got, want) {
		return w.failf("continue should be consulted after passes %s of %s; it was after %s:\n%s", list(want), v.label, list(got), show(v.of(trace.Continue)...))
	}
	return nil
}

func continueNever(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	return w.expectNone(v.of(trace.Continue), "continue should never be consulted")
}

// continueAfterExit: every consultation directly follows the PASS EXIT of
// the pass it names, and comes before the next pass begins.
func continueAfterExit(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	var prev *trace.Event
	for i, e := range v.ev {
		if e.Type == trace.Continue {
			if prev == nil || prev.Op != trace.OpPass || prev.Phase != trace.PhaseExit || *prev.Pass != *e.Pass {
				return w.failf("continue after pass %d should follow that pass's EXIT:\n%s", *e.Pass, show(v.ev[max(0, i-2):i+1]...))
			}
		}
		if e.Type == trace.Callback {
			prev = &v.ev[i]
		}
	}
	return nil
}

// --- completion -----------------------------------------------------------
