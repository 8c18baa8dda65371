package steps

import (
	"context"
	"slices"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/trace"
)

// The Then steps of memory: what the application's buffers hold at the
// end, and when the engine saves and restores device memory.

func registerMemory(sc *godog.ScenarioContext) {
	step(sc, `^the buffer `+name+` holds (-?\d+) in every element$`, holdsAll)
	step(sc, `^the buffer `+name+` holds the result of one run$`, holdsOneRun)
	step(sc, `^memory is saved once, before the first pass$`, snapshotOnce)
	step(sc, `^no memory is saved or restored(?: for "([\w-]+)")?$`, noSnapshot)
	step(sc, `^memory is restored before pass(?:es)? `+nums+` only$`, restoredBefore)
	step(sc, `^memory is never restored$`, neverRestored)
	step(sc, `^every pass starts from the memory the application left before the dispatch$`, sameInput)
	step(sc, `^the snapshot(?: of "([\w-]+)")? saves (\d+) regions? of device memory$`, snapshotRegions)
	step(sc, `^the application never reads back a result of "([\w-]+)"$`, noResult)
}

// finalValues: the leading values of a buffer as the application last read
// it back.
func (w *world) finalValues(ctx context.Context, buf string) ([]int64, error) {
	evs, err := w.events(ctx)
	if err != nil {
		return nil, err
	}
	reads, found := last(where(evs, func(e trace.Event) bool { return e.Type == trace.AppMemory && e.Buffer == buf }))
	if !found {
		return nil, w.failf("the application never read %q back", buf)
	}
	return elementsOf(reads), nil
}

func holdsAll(ctx context.Context, buf string, want int64) error {
	w := get(ctx)
	vals, err := w.finalValues(ctx, buf)
	if err != nil {
		return err
	}
	for i, v := range vals {
		if v != want {
			return w.failf("%s should hold %d in every element; element %d is %d (leading values %v)", buf, want, i, v, vals)
		}
	}
	return nil
}

func holdsOneRun(ctx context.Context, buf string) error {
	w := get(ctx)
	got, err := w.finalValues(ctx, buf)
	if err != nil {
		return err
	}
	ref, err := w.reference(ctx)
	if err != nil {
		return err
	}
	if !slices.Equal(got, ref[buf]) {
		return w.failf("%s should hold what one run of the application leaves, %v; it holds %v", buf, ref[buf], got)
	}
	return nil
}

func snapshotOnce(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	s, enters := v.of(trace.Snapshot), v.callbacks(trace.OpPass, trace.PhaseEnter)
	if p, ok := first(enters); len(s) != 1 || !ok || s[0].Seq > p.Seq {
		return w.failf("memory should be saved once, before the first pass:\n%s", show(append(s, enters...)...))
	}
	return nil
}

func noSnapshot(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	return w.expectNone(v.savesAndRestores(), "no memory should be saved or restored for %s", v.label)
}

func neverRestored(ctx context.Context) error { return restoredBefore(ctx, "") }

func restoredBefore(ctx context.Context, which string) error {
	w, v, want, err := passesOf(ctx, "", which)
	if err != nil {
		return err
	}
	rs := v.of(trace.Restore)
	if got := passes(rs); !equalPasses(got, want) {
		return w.failf("memory should be restored before passes %s only; it was restored before %s:\n%s", list(want), list(got), show(rs...))
	}
	// Each restore lies between the previous pass's EXIT and its pass's ENTER.
	for _, r := range rs {
		var exit, enter trace.Event
		for _, e := range v.callbacks(trace.OpPass, anyPhase) {
			if e.Phase == trace.PhaseExit && *e.Pass+1 == *r.Pass {
				exit = e
			}
			if e.Phase == trace.PhaseEnter && *e.Pass == *r.Pass {
				enter = e
			}
		}
		if r.Seq < exit.Seq || r.Seq > enter.Seq {
			return w.failf("the restore for pass %d should come after pass %d ends and before it begins:\n%s", *r.Pass, *r.Pass-1, show(exit, r, enter))
		}
	}
	return nil
}

func sameInput(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	ks, err := w.replayedKernels(v)
	if err != nil {
		return err
	}
	for _, k := range ks[1:] {
		if k.MemIn != ks[0].MemIn {
			return w.failf("every pass should start from the memory the application left; pass 0 began from %s, a later pass from %s:\n%s", ks[0].MemIn, k.MemIn, show(ks...))
		}
	}
	return nil
}

func snapshotRegions(ctx context.Context, label string, n int) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if s := v.of(trace.Snapshot); len(s) != 1 || len(s[0].Regions) != n {
		return w.failf("the snapshot of %s should save %d regions of device memory:\n%s", v.label, n, show(s...))
	}
	return nil
}

func noResult(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	return w.expectNone(v.appOf(trace.AppComplete, trace.AppReadback), "the application should never read back a result of %s", label)
}

// elementsOf expands a buffer event's runs into its elements (scenarios use
// small buffers).
func elementsOf(e trace.Event) []int64 {
	out := make([]int64, 0, e.Elements)
	for _, r := range e.Runs {
		for k := uint64(0); k < r.Count; k++ {
			out = append(out, r.Value)
		}
	}
	return out
}
