package steps

import (
	"context"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/trace"
)

// The Then steps of a dispatch's identity: its dispatch id (DID), its
// correlation ids (COR), its user data (UD), and the thread its callbacks
// run on (CB-4).

func registerIdentity(sc *godog.ScenarioContext) {
	// DID
	step(sc, `^one dispatch id is reserved for every dispatch the application makes$`, oneIDEach)
	step(sc, `^everything the dispatch causes carries its one dispatch id(?: of "([\w-]+)")?$`, sameIDEverywhere)
	step(sc, `^each pass has its own kernel start and end times$`, ownTimestamps)
	step(sc, `^the `+svcPhrase+` records of "([\w-]+)" name passes `+nums+`$`, recordsNamePasses)
	step(sc, `^the `+svcPhrase+` records of the passes share the dispatch id and differ in their pass index$`, recordsSameIDDifferentPass)

	// COR
	step(sc, `^every replay callback of the dispatch carries the same internal and ancestor correlation ids$`, sameCorrelation)
	step(sc, `^every pass delivers a `+svcPhrase+` record with those correlation ids and its own timestamps$`, recordPerPassSameCorr)
	step(sc, `^the `+svcPhrase+` records of passes `+nums+` carry external ids `+nums+`$`, externalIDs)
	step(sc, `^thread (\d+)'s launch call opens inside thread (\d+)'s, before its submission$`, launchInsideLaunch)
	step(sc, `^the replay callbacks and records of "([\w-]+)" carry the ids of the innermost API call open on its thread, and as ancestor the call around it$`, idsOfOwnCalls)

	// UD
	step(sc, `^the pass count, every pass and every continue call of the dispatch see user data (\d+)$`, seeUserData)
	step(sc, `^the replay callbacks of "([\w-]+)" never see user data (\d+)$`, neverSeeUserData)
	step(sc, `^every pass begins with user data (\d+) again$`, passBeginsWith)
	step(sc, `^each pass's EXIT and the continue after it see what that pass wrote$`, exitSeesOwnWrite)

	// CB-4
	step(sc, `^every replay callback, pass count and continue call runs on the thread that submitted the dispatch$`, sameThread)
	step(sc, `^each `+svcPhrase+` record of the dispatch arrives inside its pass, on that thread, tagged with that pass$`, recordsInsidePass)
	step(sc, `^the `+svcPhrase+` record of "([\w-]+)" carries no pass index$`, recordNoPass)
}

// --- DID ----------------------------------------------------------------

func oneIDEach(ctx context.Context) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	res, apps := byType(evs, trace.DispatchID), byType(evs, trace.AppDispatch)
	seen := map[uint64]bool{}
	for _, e := range res {
		if seen[e.Dispatch] {
			return w.failf("dispatch id %d was reserved twice:\n%s", e.Dispatch, show(res...))
		}
		seen[e.Dispatch] = true
	}
	// A submission of several kernel packets is that many logical
	// dispatches, each with its own id (decision 7).
	logical := 0
	for _, a := range apps {
		logical += max(a.KernelPackets, 1)
	}
	if len(res) != logical {
		return w.failf("the application made %d dispatches; %d dispatch ids were reserved:\n%s", logical, len(res), show(res...))
	}
	return nil
}

// causedByDispatch are the event types a dispatch causes, each carrying its
// dispatch id.
var causedByDispatch = []trace.Type{trace.Callback, trace.PassCount, trace.Continue, trace.Kernel, trace.Record, trace.Snapshot, trace.Restore, trace.DispatchID}

func sameIDEverywhere(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if v.id == 0 {
		return w.failf("no dispatch id was reserved for %s", v.label)
	}
	caused := byType(v.window(), causedByDispatch...)
	if err := w.expectEvery(caused, func(e trace.Event) bool { return e.Dispatch == v.id },
		"everything %s causes should carry dispatch id %d", v.label, v.id); err != nil {
		return err
	}
	if len(caused) < 2 {
		return w.failf("%s left too little in the trace to judge", v.label)
	}
	return nil
}

func ownTimestamps(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	type span struct{ s, e uint64 }
	check := func(evs []trace.Event, what string) error {
		seen := map[span]bool{}
		for _, e := range evs {
			sp := span{e.Start, e.End}
			if sp.s == 0 && sp.e == 0 {
				return w.failf("%s carries no timestamps:\n%s", what, show(e))
			}
			if seen[sp] {
				return w.failf("two passes share the %s times %d..%d:\n%s", what, sp.s, sp.e, show(evs...))
			}
			seen[sp] = true
		}
		return nil
	}
	ks, err := w.replayedKernels(v)
	if err != nil {
		return err
	}
	if err := check(ks, "kernel"); err != nil {
		return err
	}
	return check(v.records("kernel_trace"), "kernel trace record")
}

func recordsNamePasses(ctx context.Context, svc, label, which string) error {
	w, v, want, err := passesOf(ctx, label, which)
	if err != nil {
		return err
	}
	rs := v.records(serviceName(svc))
	for _, r := range rs {
		if r.Pass == nil {
			return w.failf("every %s record of %s should name its pass:\n%s", svc, v.label, show(r))
		}
	}
	if got := passes(rs); !equalPasses(got, want) {
		return w.failf("the %s records of %s should name passes %s; they name %s:\n%s", svc, v.label, list(want), list(got), show(rs...))
	}
	return nil
}

func recordsSameIDDifferentPass(ctx context.Context, svc string) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	rs := v.records(serviceName(svc))
	if len(rs) < 2 {
		return w.failf("several passes should deliver %s records:\n%s", svc, show(rs...))
	}
	seen := map[uint64]bool{}
	for _, r := range rs {
		p, ok := r.PassOf()
		if r.Dispatch != v.id || !ok || seen[p] {
			return w.failf("every %s record should carry dispatch id %d and a pass index of its own:\n%s", svc, v.id, show(rs...))
		}
		seen[p] = true
	}
	return nil
}

// --- COR ----------------------------------------------------------------

// sameCorr: two events carry the same internal and ancestor correlation ids.
func sameCorr(a, b trace.Event) bool {
	return a.Corr != nil && b.Corr != nil && a.Corr.Internal == b.Corr.Internal && a.Corr.Ancestor == b.Corr.Ancestor
}

func sameCorrelation(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	cbs := v.of(trace.Callback)
	if len(cbs) == 0 || cbs[0].Corr == nil || cbs[0].Corr.Internal == 0 {
		return w.failf("the replay callbacks should carry a correlation id:\n%s", show(cbs...))
	}
	ref := cbs[0]
	for _, e := range cbs {
		if !sameCorr(e, ref) {
			return w.failf("every replay callback should carry correlation %d/%d:\n%s", ref.Corr.Internal, ref.Corr.Ancestor, show(ref, e))
		}
	}
	return nil
}

// openCalls is the API calls open on the dispatch's thread, innermost
// last, when its first callback came: the launch and what is inside it.
func (v *dispatchView) openCalls() (open []trace.Event, at trace.Event, ok bool) {
	for _, e := range v.window() {
		switch {
		case e.Type == trace.APICall && e.Phase == trace.PhaseEnter:
			open = append(open, e)
		case e.Type == trace.APICall && e.Phase == trace.PhaseExit && len(open) > 0:
			open = open[:len(open)-1]
		case e.Type == trace.Callback && e.Dispatch == v.id:
			return open, e, true
		}
	}
	return nil, trace.Event{}, false
}

// launchInsideLaunch: the other thread's launch call entered between the
// launch call's ENTER and its submission's ENTER on this thread.
func launchInsideLaunch(ctx context.Context, other, thread int) error {
	w, evs, err := traceOf(ctx)
	if err != nil {
		return err
	}
	var launch *trace.Event
	for _, e := range byType(evs, trace.APICall) {
		switch {
		case e.Phase != trace.PhaseEnter:
		case e.Thread == uint64(thread) && e.Call == trace.CallLaunchKernel && launch == nil:
			launch = &e
		case e.Thread == uint64(thread) && e.Call == trace.CallQueueSubmit && launch != nil:
			return w.failf("thread %d's launch call should open before thread %d submits:\n%s", other, thread, show(byType(evs, trace.APICall)...))
		case e.Thread == uint64(other) && e.Call == trace.CallLaunchKernel && launch != nil:
			return nil
		}
	}
	return w.failf("no launch call of thread %d inside thread %d's:\n%s", other, thread, show(byType(evs, trace.APICall)...))
}

func idsOfOwnCalls(ctx context.Context, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	open, at, ok := v.openCalls()
	if !ok || len(open) < 2 {
		return w.failf("%q should be written inside a launch and its submission:\n%s", label, show(append(open, at)...))
	}
	inner, outer := open[len(open)-1], open[len(open)-2]
	for _, e := range v.of(trace.Callback, trace.Record) {
		if e.Corr == nil || e.Corr.Internal != inner.Corr.Internal || e.Corr.Ancestor != outer.Corr.Internal {
			return w.failf("%q should carry correlation %d/%d (its thread's %s inside %s):\n%s", label, inner.Corr.Internal, outer.Corr.Internal, inner.Call, outer.Call, show(outer, inner, e))
		}
	}
	return nil
}

func recordPerPassSameCorr(ctx context.Context, svc string) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	cb, ok := first(v.of(trace.Callback))
	if !ok || cb.Corr == nil {
		return w.failf("the dispatch got no replay callback")
	}
	rs := v.records(serviceName(svc))
	if len(rs) != len(v.callbacks(trace.OpPass, trace.PhaseEnter)) {
		return w.failf("every pass should deliver one %s record:\n%s", svc, show(rs...))
	}
	starts := map[uint64]bool{}
	for _, r := range rs {
		if !sameCorr(r, cb) || r.Dispatch != v.id {
			return w.failf("every %s record should carry the callbacks' correlation %d/%d and dispatch %d:\n%s", svc, cb.Corr.Internal, cb.Corr.Ancestor, v.id, show(cb, r))
		}
		if starts[r.Start] {
			return w.failf("two %s records share a start time:\n%s", svc, show(rs...))
		}
		starts[r.Start] = true
	}
	return nil
}

func externalIDs(ctx context.Context, svc, which, ids string) error {
	w, v, ps, err := passesOf(ctx, "", which)
	if err != nil {
		return err
	}
	want, err := numbers(ids)
	if err != nil {
		return err
	}
	rs := v.records(serviceName(svc))
	got := map[uint64]uint64{}
	for _, r := range rs {
		if p, ok := r.PassOf(); ok && r.Corr != nil {
			got[p] = r.Corr.External
		}
	}
	for i, p := range ps {
		if g, ok := got[p]; !ok || g != want[i] {
			return w.failf("the %s record of pass %d should carry external id %d:\n%s", svc, p, want[i], show(rs...))
		}
	}
	return nil
}

// --- UD -----------------------------------------------------------------

func seeUserData(ctx context.Context, want uint64) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	if len(v.of(trace.PassCount)) == 0 || len(v.callbacks(trace.OpPass, anyPhase)) == 0 {
		return w.failf("the dispatch should be replayed:\n%s", show(v.ev...))
	}
	sequence := where(v.ev, func(e trace.Event) bool {
		return e.Type == trace.PassCount || e.Type == trace.Continue || e.Type == trace.Callback && e.Op == trace.OpPass
	})
	return w.expectEvery(sequence, func(e trace.Event) bool { return u(e.UserData) == want },
		"every callback of the sequence should see user data %d", want)
}

func neverSeeUserData(ctx context.Context, label string, bad uint64) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	if len(v.of(trace.Callback)) == 0 {
		return w.failf("%s should get replay callbacks", label)
	}
	return w.expectEvery(v.of(trace.Callback, trace.PassCount), func(e trace.Event) bool { return u(e.UserData) != bad },
		"%s's sequence should not see another sequence's user data %d", label, bad)
}

func passBeginsWith(ctx context.Context, want uint64) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range v.callbacks(trace.OpPass, trace.PhaseEnter) {
		if u(e.UserData) != want {
			return w.failf("pass %d should begin with user data %d:\n%s", u(e.Pass), want, show(e))
		}
	}
	return nil
}

func exitSeesOwnWrite(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	for _, e := range append(v.callbacks(trace.OpPass, trace.PhaseExit), v.of(trace.Continue)...) {
		if u(e.UserData) != 1000+u(e.Pass) {
			return w.failf("after pass %d the tool should see what that pass wrote, %d:\n%s", u(e.Pass), 1000+u(e.Pass), show(e))
		}
	}
	return nil
}

// --- CB-4 ---------------------------------------------------------------

func sameThread(ctx context.Context) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	return w.expectEvery(v.of(trace.Callback, trace.PassCount, trace.Continue), func(e trace.Event) bool { return e.Thread == v.thread },
		"replay callbacks of %s should run on thread %d, the submitter", v.label, v.thread)
}

// openPass is the PASS ENTER of the pass open at an event, if one is.
func (v *dispatchView) openPass(at trace.Event) (trace.Event, bool) {
	var open trace.Event
	isOpen := false
	for _, e := range v.callbacks(trace.OpPass, anyPhase) {
		if e.Seq > at.Seq {
			break
		}
		open, isOpen = e, e.Phase == trace.PhaseEnter
	}
	return open, isOpen
}

func recordsInsidePass(ctx context.Context, svc string) error {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return err
	}
	rs := v.records(serviceName(svc))
	if len(rs) == 0 {
		return w.failf("the dispatch delivered no %s record", svc)
	}
	for _, r := range rs {
		open, ok := v.openPass(r)
		if !ok || r.Thread != v.thread || r.Pass == nil || *r.Pass != u(open.Pass) {
			return w.failf("a %s record should arrive inside its pass on thread %d, tagged with that pass:\n%s", svc, v.thread, show(r))
		}
	}
	return nil
}

func recordNoPass(ctx context.Context, svc, label string) error {
	w, v, err := dispatchOf(ctx, label)
	if err != nil {
		return err
	}
	rs := v.records(serviceName(svc))
	if len(rs) == 0 {
		return w.failf("%s should deliver a %s record", label, svc)
	}
	return w.expectEvery(rs, func(r trace.Event) bool { return r.Pass == nil },
		"%s is not replayed, yet its %s record carries a stale pass index", label, svc)
}
