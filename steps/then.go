package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// The Then steps: each judges the trace of the run, or what the
// application observed, never the engine's state.

// --- the rule oracles -------------------------------------------------

func checksPass(ctx context.Context) error {
	w := get(ctx)
	r, err := w.result(ctx)
	if err != nil {
		return err
	}
	if r.Err != nil || len(r.Violations) > 0 {
		return w.failf("the rule checks should find nothing wrong")
	}
	return nil
}

func checksReport(ctx context.Context, ids string) error {
	w := get(ctx)
	r, err := w.result(ctx)
	if err != nil {
		return err
	}
	var got []string
	for _, v := range r.Violations {
		if !slices.Contains(got, v.Rule) {
			got = append(got, v.Rule)
		}
	}
	for _, id := range words(ids) {
		if !slices.Contains(got, id) {
			return fmt.Errorf("the rule checks should report a violation of %s; they reported %s:\n%s",
				id, strings.Join(got, ", "), violations(r.Violations))
		}
	}
	return nil
}

func checksReportOnly(ctx context.Context, ids string) error {
	if err := checksReport(ctx, ids); err != nil {
		return err
	}
	w := get(ctx)
	want := words(ids)
	for _, v := range w.res.Violations {
		if !slices.Contains(want, v.Rule) {
			return fmt.Errorf("the rule checks should report only %s, but also reported:\n%s", ids, v.Error())
		}
	}
	return nil
}

func runFails(ctx context.Context, text string) error {
	w := get(ctx)
	r, err := w.result(ctx)
	if err != nil {
		return err
	}
	if r.Err == nil || !strings.Contains(r.Err.Error(), text) {
		return w.failf("the run should stop with an error mentioning %q; it ended with %v", text, r.Err)
	}
	return nil
}

// --- passes -----------------------------------------------------------

func passesRun(ctx context.Context, label, which string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	want, err := numbers(which)
	if err != nil {
		return err
	}
	enters, exits := passes(v.callbacks("PASS", "ENTER")), passes(v.callbacks("PASS", "EXIT"))
	if !equalPasses(enters, want) || !equalPasses(exits, want) {
		return w.failf("%s should run passes %s; the tool saw PASS ENTER for %s and PASS EXIT for %s:\n%s",
			v.label, list(want), list(enters), list(exits), show(v.of(trace.Callback)...))
	}
	return nil
}

func nPassesRun(ctx context.Context, label string, n uint64) error {
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	return passesRun(ctx, label, strings.Join(want, ", "))
}

// notReplayed: no PASS, no snapshot or restore, and the kernel ran once.
func notReplayed(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if p := v.callbacks("PASS", ""); len(p) > 0 {
		return w.failf("%s should not be replayed, yet the tool saw PASS callbacks:\n%s", v.label, show(p...))
	}
	if s := append(saved(v.of(trace.Snapshot)), v.of(trace.Restore)...); len(s) > 0 {
		return w.failf("%s should not be replayed, yet memory was saved or restored:\n%s", v.label, show(s...))
	}
	if k := byType(v.window(), trace.Kernel); len(k) != 1 {
		return w.failf("%s should run once, its kernel ran %d times:\n%s", v.label, len(k), show(k...))
	}
	return nil
}

func kernelRuns(ctx context.Context, label string, n int) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if k := byType(v.window(), trace.Kernel); len(k) != n {
		return w.failf("the kernel of %s should run %d times on the GPU, it ran %d times:\n%s", v.label, n, len(k), show(k...))
	}
	return nil
}

func times(s string) int {
	switch s {
	case "once":
		return 1
	case "twice":
		return 2
	}
	var n int
	fmt.Sscanf(s, "%d times", &n)
	return n
}

func kernelRunsTimes(ctx context.Context, label, t string) error {
	return kernelRuns(ctx, label, times(t))
}

func totalPasses(ctx context.Context, n uint64) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	ps := v.callbacks("PASS", "")
	if len(ps) == 0 {
		return w.failf("no pass ran")
	}
	for _, e := range ps {
		if e.Total == nil || *e.Total != n {
			return w.failf("every pass should report total passes %d:\n%s", n, show(e))
		}
	}
	return nil
}

func configOnce(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	cfg := v.callbacks("CONFIG", "")
	if len(cfg) != 2 || cfg[0].Phase != "ENTER" || cfg[1].Phase != "EXIT" {
		return w.failf("%s should get one CONFIG ENTER then one CONFIG EXIT:\n%s", v.label, show(cfg...))
	}
	for _, e := range v.callbacks("PASS", "") {
		if e.Seq < cfg[0].Seq || e.Seq > cfg[1].Seq {
			return w.failf("every pass should lie between CONFIG ENTER and EXIT:\n%s", show(cfg[0], e, cfg[1]))
		}
	}
	return nil
}

func noReplayCallback(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if cb := append(v.of(trace.Callback), v.of(trace.PassCount)...); len(cb) > 0 {
		return w.failf("%s should cause no replay callback at all:\n%s", v.label, show(cb...))
	}
	return notReplayed(ctx, label)
}

func passesBracketed(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	ps := v.callbacks("PASS", "")
	if len(ps) == 0 || len(ps)%2 != 0 {
		return w.failf("every pass should have an ENTER and an EXIT:\n%s", show(ps...))
	}
	for i := 0; i < len(ps); i += 2 {
		a, b := ps[i], ps[i+1]
		if a.Phase != "ENTER" || b.Phase != "EXIT" || *a.Pass != *b.Pass || *a.Pass != uint64(i/2) {
			return w.failf("pass %d should be an ENTER followed by its EXIT:\n%s", i/2, show(a, b))
		}
	}
	return nil
}

// passCountOnce: asked once, after CONFIG ENTER returned, before any pass.
func passCountOnce(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	pc := v.of(trace.PassCount)
	ce := v.callbacks("CONFIG", "ENTER")
	if len(pc) != 1 || len(ce) != 1 || pc[0].Seq < ce[0].Seq {
		return w.failf("the pass count should be asked once, after CONFIG ENTER:\n%s", show(append(ce, pc...)...))
	}
	if p, ok := first(v.callbacks("PASS", "ENTER")); ok && p.Seq < pc[0].Seq {
		return w.failf("the pass count should be asked before the first pass:\n%s", show(pc[0], p))
	}
	return nil
}

// --- continue -----------------------------------------------------------

func continueAfter(ctx context.Context, label, which string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	want, err := numbers(which)
	if err != nil {
		return err
	}
	got := passes(v.of(trace.Continue))
	if !equalPasses(got, want) {
		return w.failf("continue should be consulted after passes %s of %s; it was after %s:\n%s", list(want), v.label, list(got), show(v.of(trace.Continue)...))
	}
	return nil
}

func continueNever(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	if c := v.of(trace.Continue); len(c) > 0 {
		return w.failf("continue should never be consulted:\n%s", show(c...))
	}
	return nil
}

// continueAfterExit: every consultation directly follows the PASS EXIT of
// the pass it names, and comes before the next pass begins.
func continueAfterExit(ctx context.Context) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	var prev *trace.Event
	for i, e := range v.ev {
		if e.Type == trace.Continue {
			if prev == nil || prev.Op != "PASS" || prev.Phase != "EXIT" || *prev.Pass != *e.Pass {
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

func oneCompletion(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	c := v.appOf(trace.AppComplete)
	if len(c) != 1 || len(v.appOf(trace.AppTimeout)) > 0 {
		return w.failf("the application should see %s complete once; it saw:\n%s", v.label, show(v.app...))
	}
	// The completion signal was decremented once while it was in flight.
	sig := v.appOf(trace.AppDispatch)[0].Signal
	var decs []trace.Event
	for _, e := range v.all {
		if e.Type == trace.Signal && e.Signal == sig {
			decs = append(decs, e)
		}
	}
	if len(decs) != 1 {
		return w.failf("the completion signal of %s should fire once; it was decremented %d times:\n%s", v.label, len(decs), show(decs...))
	}
	return nil
}

func oneCompletionAfterLoop(ctx context.Context, label string) error {
	if err := oneCompletion(ctx, label); err != nil {
		return err
	}
	w := get(ctx)
	v, _ := w.view(ctx, label)
	sig := v.appOf(trace.AppDispatch)[0].Signal
	var dec trace.Event
	for _, e := range v.all {
		if e.Type == trace.Signal && e.Signal == sig {
			dec = e
		}
	}
	for _, e := range v.of(trace.Callback) {
		if e.Seq > dec.Seq {
			return w.failf("%s's completion should fire after the last pass and CONFIG EXIT, it fired before:\n%s", v.label, show(dec, e))
		}
	}
	for _, k := range v.of(trace.Kernel) {
		if k.Signal == sig && len(v.callbacks("PASS", "")) > 0 {
			return w.failf("no pass may carry the application's completion signal:\n%s", show(k))
		}
	}
	return nil
}

func neverCompletes(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if len(v.appOf(trace.AppComplete)) > 0 || len(v.appOf(trace.AppTimeout)) != 1 {
		return w.failf("the application should wait for %s for ever (the run gives up): \n%s", v.label, show(v.app...))
	}
	return nil
}

func neverEnded(ctx context.Context, label string, n uint64) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	ne := v.of(trace.NeverEnded)
	if len(ne) != 1 || ne[0].Pass == nil || *ne[0].Pass != n {
		return w.failf("the loop of %s should be reported as never ending after %d passes:\n%s", v.label, n, show(ne...))
	}
	return nil
}

// sameObservation: two dispatches look the same to the application: one
// completion and the same buffer contents read back.
func sameObservation(ctx context.Context, a, b string) error {
	w := get(ctx)
	va, err := w.view(ctx, a)
	if err != nil {
		return err
	}
	vb, err := w.view(ctx, b)
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

// --- memory -----------------------------------------------------------

func finalValues(w *world, evs []trace.Event, buf string) ([]int64, error) {
	var vals []int64
	found := false
	for _, e := range evs {
		if e.Type == trace.AppMemory && e.Label == buf {
			vals, found = e.Values, true
		}
	}
	if !found {
		return nil, w.failf("the application never read %q back", buf)
	}
	return vals, nil
}

func holdsAll(ctx context.Context, buf string, want int64) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	vals, err := finalValues(w, evs, buf)
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
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	got, err := finalValues(w, evs, buf)
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
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	s := v.of(trace.Snapshot)
	p, ok := first(v.callbacks("PASS", "ENTER"))
	if len(s) != 1 || !ok || s[0].Seq > p.Seq {
		return w.failf("memory should be saved once, before the first pass:\n%s", show(append(s, v.callbacks("PASS", "ENTER")...)...))
	}
	return nil
}

func noSnapshot(ctx context.Context, label string) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	if s := append(saved(v.of(trace.Snapshot)), v.of(trace.Restore)...); len(s) > 0 {
		return w.failf("no memory should be saved or restored for %s:\n%s", v.label, show(s...))
	}
	return nil
}

func restoredBefore(ctx context.Context, which string) error {
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	want, err := numbers(which)
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
		for _, e := range v.callbacks("PASS", "") {
			if e.Phase == "EXIT" && *e.Pass+1 == *r.Pass {
				exit = e
			}
			if e.Phase == "ENTER" && *e.Pass == *r.Pass {
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
	w := get(ctx)
	v, err := w.view(ctx, "")
	if err != nil {
		return err
	}
	ks := v.of(trace.Kernel)
	if len(ks) < 2 {
		return w.failf("expected several passes:\n%s", show(ks...))
	}
	for _, k := range ks[1:] {
		if k.MemIn != ks[0].MemIn {
			return w.failf("every pass should start from the memory the application left; pass 0 began from %s, a later pass from %s:\n%s", ks[0].MemIn, k.MemIn, show(ks...))
		}
	}
	return nil
}

func snapshotRegions(ctx context.Context, label string, n int) error {
	w := get(ctx)
	v, err := w.view(ctx, label)
	if err != nil {
		return err
	}
	s := v.of(trace.Snapshot)
	if len(s) != 1 || s[0].Regions != n {
		return w.failf("the snapshot of %s should save %d regions of device memory:\n%s", v.label, n, show(s...))
	}
	return nil
}

// exclusive: b's kernel runs on the agent only once a's loop has ended.
func exclusive(ctx context.Context, b, a string) error {
	w := get(ctx)
	va, err := w.view(ctx, a)
	if err != nil {
		return err
	}
	vb, err := w.view(ctx, b)
	if err != nil {
		return err
	}
	end, ok := last(va.callbacks("CONFIG", "EXIT"))
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

// --- warnings -----------------------------------------------------------

func warnsOnce(ctx context.Context, code string) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	var ws []trace.Event
	for _, e := range byType(evs, trace.Warning) {
		if e.Code == code {
			ws = append(ws, e)
		}
	}
	if len(ws) != 1 {
		return w.failf("the SDK should warn %s once; it did %d times:\n%s", code, len(ws), show(byType(evs, trace.Warning)...))
	}
	return nil
}

func noWarning(ctx context.Context) error {
	w := get(ctx)
	evs, err := w.events(ctx)
	if err != nil {
		return err
	}
	if ws := byType(evs, trace.Warning); len(ws) > 0 {
		return w.failf("the SDK should print no warning:\n%s", show(ws...))
	}
	return nil
}

// saved keeps the snapshots that succeeded: a failed attempt (MEM-5) saves
// nothing.
func saved(snaps []trace.Event) []trace.Event {
	var out []trace.Event
	for _, e := range snaps {
		if e.Status == "" || e.Status == "SUCCESS" {
			out = append(out, e)
		}
	}
	return out
}
