package check

import (
	"fmt"

	"github.com/replayspec/replayspec/trace"
)

// checkACT judges activation: replay happens only behind a CONFIG
// callback from an active, CONFIG-covering subscription.
func checkACT(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		vs = append(vs, x.checkReplayNeedsConfig(d)...)
	})
	vs = append(vs, x.checkActivatingContext()...)
	vs = append(vs, x.checkActivationPerDispatch()...)
	vs = append(vs, x.checkConfigureOnce()...)
	vs = append(vs, x.checkNoReplayNoWork()...)
	for _, code := range []trace.WarningCode{trace.WarnMultiPacketSubmission, trace.WarnGraphLaunch} {
		vs = append(vs, x.checkWarnedNotReplayed("ACT-6", code)...)
		vs = append(vs, x.checkWarnedOnlyWhenActive(code)...)
	}
	return vs
}

// ACT-3: the "not replayed" warnings of ACT-6 speak of replay, so they may
// only come while a started context's subscription covers CONFIG; one
// printed with no such context shows replay was switched on without it.
// The SDK decides on the contexts started when it intercepts the write, so
// a warning is also in time when such a context was started as a
// submission of its kind, still in flight at the warning, began: another
// thread may stop the context between the write's interception and the
// warning (decision 17.18, found running generated specs through the C port).
func (x *index) checkWarnedOnlyWhenActive(code trace.WarningCode) []Violation {
	configs := x.replayConfigs()
	if len(configs) == 0 {
		return nil
	}
	for _, w := range x.types[ekWarning] {
		if x.ev[w].Code != code {
			continue
		}
		// The warning names no thread: the write it is about came after
		// the earliest application submission it can be about that was
		// still in flight (decision 18.1), else any time before it.
		lo := -1
		for _, a := range x.apps {
			if app := &x.ev[a.at]; (app.Packets > 1 || app.Graph) && a.at < w && w < a.end {
				lo = a.at
				break
			}
		}
		active, judged := false, false
		for _, c := range configs {
			e := &x.ev[c]
			if c > w || !e.Status.Is(trace.StatusSuccess) {
				continue
			}
			off, known := x.contextInactive(e.Context, lo, w)
			judged = judged || known
			active = active || (!off && coversConfig(e))
		}
		if judged && !active {
			return []Violation{x.violation("ACT-3", x.ev[w].Dispatch, fmt.Sprintf("warning %s about replay was printed although no started context's KERNEL_REPLAY subscription covers CONFIG", code), w)}
		}
	}
	return nil
}

// ACT-1: PASS, continue, snapshot and restore only follow a
// CONFIG ENTER of the same dispatch.
func (x *index) checkReplayNeedsConfig(d *dispatchView) []Violation {
	if len(d.configEnter)+len(d.passEnter) > 0 {
		x.examined("ACT-1")
	}
	firstConfig := len(x.ev)
	if len(d.configEnter) > 0 {
		firstConfig = d.configEnter[0]
	}
	for _, list := range [][]int{d.passEnter, d.passExit, d.continues, d.snapshots, d.restores} {
		for _, i := range list {
			if i < firstConfig {
				what := string(x.ev[i].Type)
				if x.ev[i].Type == trace.Callback {
					what = "PASS " + string(x.ev[i].Phase)
				}
				msg := fmt.Sprintf("%s happened for dispatch %d before any CONFIG ENTER of it", what, d.id)
				if len(d.configEnter) == 0 {
					msg = fmt.Sprintf("%s happened for dispatch %d, which never had CONFIG ENTER", what, d.id)
				}
				return []Violation{x.violation("ACT-1", d.id, msg, i)}
			}
		}
	}
	return nil
}

// ACT-3: when the trace shows how the domain was configured, every CONFIG
// ENTER needs a subscription that covers CONFIG on a started context. The
// SDK takes the started contexts as it intercepts the application's write,
// between its app_dispatch and its CONFIG ENTER (decision 12), so a context
// started when the dispatch was written counts even if another thread
// stopped it before CONFIG ENTER fired (decision 17.18, found running
// generated specs through the C port, whose threads are free).
func (x *index) checkActivatingContext() []Violation {
	configs := x.replayConfigs()
	if len(configs) == 0 {
		return nil
	}
	var vs []Violation
	for _, i := range x.types[ekCallback] {
		e := &x.ev[i]
		if e.Op != trace.OpConfig || e.Phase != trace.PhaseEnter {
			continue
		}
		x.examined("ACT-1")
		// The SDK read the started contexts when it took the write, which
		// the trace places after lo and before hi: a context stopped by
		// another thread in between may still have activated it (found
		// under free threads, decision 18.1).
		lo, hi := i-1, i
		if d := x.dispatches[e.Dispatch]; d != nil {
			lo, hi = x.writeWindow(d)
			hi = min(hi, i)
		}
		why := "no configuration of KERNEL_REPLAY covering CONFIG succeeded before it"
		ok := false
		for _, c := range configs {
			ce := &x.ev[c]
			if c > i || !ce.Status.Is(trace.StatusSuccess) || !coversConfig(ce) {
				continue
			}
			off, known := x.contextInactive(ce.Context, lo, hi)
			if !known || !off {
				ok = true
				break
			}
			why = fmt.Sprintf("the replay context %d was not started at that point", ce.Context)
		}
		if !ok {
			vs = append(vs, x.violation("ACT-3", e.Dispatch, fmt.Sprintf("CONFIG ENTER for dispatch %d fired, but %s", e.Dispatch, why), i))
		}
	}
	return vs
}

// checkWarnedNotReplayed keeps the "warn once, run once" rules: code is
// printed at most once, and the dispatch it names is not replayed.
func (x *index) checkWarnedNotReplayed(rule string, code trace.WarningCode) []Violation {
	vs := x.checkWarnedOnce(rule, code)
	for _, i := range x.types[ekWarning] {
		e := &x.ev[i]
		if e.Code != code {
			continue
		}
		if d := x.dispatches[e.Dispatch]; d != nil && e.Dispatch != 0 {
			x.examined(rule)
			if d.replayed() || len(d.snapshots) > 0 {
				at := append([]int{i}, d.passEnter...)
				at = append(at, d.snapshots...)
				vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("dispatch %d was warned about (%s) yet replayed: %d passes, %d snapshots", d.id, code, len(d.passEnter), len(d.snapshots)), at...))
			}
		}
	}
	return vs
}

// checkWarnedOnce: every warning code is printed once per process.
func (x *index) checkWarnedOnce(rule string, code trace.WarningCode) []Violation {
	var seen []int
	for _, i := range x.types[ekWarning] {
		if x.ev[i].Code == code {
			seen = append(seen, i)
		}
	}
	if len(seen) > 1 {
		return []Violation{x.violation(rule, 0, fmt.Sprintf("warning %s was printed %d times; it is printed once per process", code, len(seen)), seen...)}
	}
	return nil
}

// activeSubscription says what the trace proves between positions lo and
// hi: active, a started context's successful KERNEL_REPLAY subscription
// covered CONFIG all along (allOps: one of them subscribed to every
// operation); inactive, none did at any moment. Neither when the contexts
// were started or stopped meanwhile (contextIn). known is false when the
// trace does not show the configuration (nothing can be said).
func (x *index) activeSubscription(lo, hi int) (active, inactive, allOps, known bool) {
	configs := x.replayConfigs()
	if len(configs) == 0 {
		// With the tool's calls in the trace, no configuration means
		// nothing can be active; without them nothing can be said.
		return false, x.has(trace.API), false, x.has(trace.API)
	}
	inactive = true
	for _, c := range configs {
		e := &x.ev[c]
		if c >= hi || !e.Status.Is(trace.StatusSuccess) || !coversConfig(e) {
			continue
		}
		on, off, knownOn := x.contextIn(e.Context, lo, hi)
		if !knownOn {
			return false, false, false, false
		}
		if on {
			active = true
			allOps = allOps || len(e.Operations) == 0
		}
		inactive = inactive && off
	}
	return active, inactive, allOps, true
}

// ACT-2, ACT-3, ACT-6, judged per application dispatch: a single kernel
// packet under an active all-operations subscription gets CONFIG (ACT-2);
// without an active CONFIG-covering subscription it gets nothing of replay
// and runs once (ACT-3); a multi-packet or graph submission is never
// replayed (ACT-6).
func (x *index) checkActivationPerDispatch() []Violation {
	var vs []Violation
	for _, a := range x.apps {
		app := &x.ev[a.at]
		d := x.dispatches[a.dispatch]
		if d == nil {
			d = &dispatchView{id: a.dispatch}
		}
		if app.Packets > 1 || app.Graph {
			x.examined("ACT-6")
			if d.replayed() {
				vs = append(vs, x.violation("ACT-6", d.id, fmt.Sprintf("%s was submitted as %d packets (graph launch: %v), yet it was replayed (%d passes)", a.label, app.Packets, app.Graph, len(d.passEnter)), append([]int{a.at}, d.passEnter...)...))
			}
		}
		// The SDK read the started contexts when it took the write: after
		// app_dispatch, before the first sign of its decision. Only what
		// holds all along that stretch is judged (decision 18.1).
		active, inactive, allOps, known := x.activeSubscription(a.at, x.decidedBy(d, a))
		switch {
		case !known:
		case inactive:
			// ACT-1: not a candidate. ACT-3 when replay was configured but
			// is not active (never started, stopped, PASS only); API-1 and
			// PC-8 when nothing configured it: nothing else can.
			rules := []string{"ACT-1", "ACT-3"}
			if len(x.replayConfigs()) == 0 {
				rules = []string{"ACT-1", "API-1", "PC-8"}
			}
			for _, r := range rules {
				x.examined(r)
			}
			var why string
			var at []int
			if replayed := x.concat(d.configEnter, d.passEnter); len(replayed) > 0 {
				why, at = fmt.Sprintf("%s ran while no started context's subscription covered CONFIG, yet it got %s", a.label, kindText(&x.ev[replayed[0]])), []int{a.at, replayed[0]}
			} else if x.has(trace.Kernel) && len(d.kernels) > 1 {
				why, at = fmt.Sprintf("%s ran while nothing activated replay, yet its kernel ran %d times", a.label, len(d.kernels)), append([]int{a.at}, d.kernels...)
			}
			if why != "" {
				for _, r := range rules {
					vs = append(vs, x.violation(r, d.id, why, at...))
				}
			}
		case !active:
			// Started or stopped by another thread meanwhile: either
			// reading is consistent with the trace.
		case app.Packets > 1 || app.Graph:
			// A candidate, but ACT-6 keeps it from replay (above).
		case allOps && a.dispatch != 0:
			x.examined("ACT-2")
			if len(d.configEnter) == 0 && !x.diedBeforeRun(d) {
				vs = append(vs, x.violation("ACT-2", d.id, fmt.Sprintf("a started context subscribes to every KERNEL_REPLAY operation, yet %s got no CONFIG callback", a.label), a.at))
			}
		}
	}
	return vs
}

// interceptedBy is a position by which the SDK had intercepted a's write:
// the dispatch's first event of the SDK's, of the runtime's, or its
// completion, whichever the trace shows first; a.at when none.
func (x *index) interceptedBy(a *appView, d *dispatchView) int {
	late := len(x.ev)
	for _, list := range [][]int{a.reserves, d.configEnter, d.kernels, a.complete, a.timeout} {
		if len(list) > 0 && list[0] > a.at {
			late = min(late, list[0])
		}
	}
	if late == len(x.ev) {
		return a.at
	}
	return late
}

// ACT-4: a run that never configures replay pays nothing for it: no
// snapshot, said or seen, around any dispatch.
func (x *index) checkNoReplayNoWork() []Violation {
	if len(x.replayConfigs()) > 0 || !x.has(trace.API) || len(x.apps) == 0 {
		return nil
	}
	// A snapshot is a read: only the SDK's account or the runtime's shows
	// one; without them this half of ACT-4 has nothing to look at.
	if !x.reportsType(trace.Snapshot) && !x.reportsType(trace.MemRead) {
		return nil
	}
	var vs []Violation
	for _, a := range x.apps {
		x.examined("ACT-4")
		d := x.dispatches[a.dispatch]
		if d == nil {
			continue
		}
		until := a.end
		if len(d.kernels) > 0 {
			until = d.kernels[0]
		}
		work := x.concat(d.snapshots, d.restores)
		if x.header.Reports(trace.SourceRuntime) {
			work = append(work, x.trafficOf(&dispatchView{thread: a.thread}, trace.MemRead, a.at, until)...)
		}
		if len(work) > 0 {
			vs = append(vs, x.violation("ACT-4", d.id, fmt.Sprintf("replay was never configured, yet memory was saved or restored around %s", a.label), append([]int{a.at}, work...)...))
		}
	}
	return vs
}

// checkConfigureOnce keeps ACT-5: after one context configured the domain,
// every later configuration of it is refused.
func (x *index) checkConfigureOnce() []Violation {
	var vs []Violation
	first := -1
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
		if e.Call != trace.CallConfigureCallback || e.Domain != trace.DomainKernelReplay {
			continue
		}
		if first < 0 {
			if e.Status.Is(trace.StatusSuccess) {
				first = i
			}
			continue
		}
		x.examined("ACT-5")
		if !e.Status.Is(trace.StatusServiceAlreadyConfigured) {
			vs = append(vs, x.violation("ACT-5", 0, fmt.Sprintf("a second configuration of KERNEL_REPLAY (context %d) returned %s", e.Context, e.Status), first, i))
		}
	}
	return vs
}
