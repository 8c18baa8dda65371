package steps

import (
	"context"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/trace"
)

// The steps about completion as the application sees it: once, after the loop, never for a loop that never ends.

func registerCompletion(sc *godog.ScenarioContext) {
	step(sc, `^the application sees (?:"([\w-]+)" complete once|one completion)$`, oneCompletion)
	step(sc, `^the application sees (?:"([\w-]+)" complete once|one completion), after the last pass$`, oneCompletionAfterLoop)
	step(sc, `^the application never sees (?:"([\w-]+)"|the dispatch) complete$`, neverCompletes)
	step(sc, `^the loop(?: of "([\w-]+)")? is reported as never ending after (\d+) passes$`, neverEnded)
	step(sc, `^the application cannot tell "([\w-]+)" from "([\w-]+)"$`, sameObservation)
}

func oneCompletion(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	c := v.appOf(trace.AppComplete)
	if len(c) != 1 || len(v.appOf(trace.AppTimeout)) > 0 {
		return w.failf("the application should see %s complete once; it saw:\n%s", v.label, show(v.app...))
	}
	// The completion signal was decremented once while it was in flight.
	if decs := v.completionSignals(); len(decs) != 1 {
		return w.failf("the completion signal of %s should fire once; it was decremented %d times:\n%s", v.label, len(decs), show(decs...))
	}
	return nil
}

func oneCompletionAfterLoop(ctx context.Context, label string) error {
	if err := oneCompletion(ctx, label); err != nil {
		return err
	}
	w, v, _ := dispatchOf(ctx, label)
	dec, _ := last(v.completionSignals())
	for _, e := range v.of(trace.Callback) {
		if e.Seq > dec.Seq {
			return w.failf("%s's completion should fire after the last pass and CONFIG EXIT, it fired before:\n%s", v.label, show(dec, e))
		}
	}
	for _, k := range v.of(trace.Kernel) {
		if k.Signal == dec.Signal && len(v.callbacks(trace.OpPass, anyPhase)) > 0 {
			return w.failf("no pass may carry the application's completion signal:\n%s", show(k))
		}
	}
	return nil
}

func neverCompletes(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if len(v.appOf(trace.AppComplete)) > 0 || len(v.appOf(trace.AppTimeout)) != 1 {
		return w.failf("the application should wait for %s for ever (the run gives up): \n%s", v.label, show(v.app...))
	}
	return nil
}

func neverEnded(ctx context.Context, label string, n uint64) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if ne := v.of(trace.NeverEnded); len(ne) != 1 || ne[0].Pass == nil || *ne[0].Pass != n {
		return w.failf("the loop of %s should be reported as never ending after %d passes:\n%s", v.label, n, show(ne...))
	}
	return nil
}

// sameObservation: two dispatches look the same to the application: one
// completion and the same buffer contents read back.
func sameObservation(ctx context.Context, a, b string) error {
	w, va, vb, err := twoDispatchesOf(ctx, a, b)
	if err != nil {
		return err
	}
	shape := func(v *dispatchView) string {
		var s []string
		for _, e := range v.app {
			s = append(s, string(e.Type)+" "+e.Digest)
		}
		return strings.Join(s, "; ")
	}
	if shape(va) != shape(vb) {
		return w.failf("the application should not tell %s from %s:\n%s\nversus\n%s", a, b, show(va.app...), show(vb.app...))
	}
	return nil
}

// --- warnings -----------------------------------------------------------
