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
	for _, code := range []trace.WarningCode{trace.WarnMultiPacketSubmission, trace.WarnGraphLaunch} {
		vs = append(vs, x.checkWarnedNotReplayed("ACT-6", code)...)
		vs = append(vs, x.checkWarnedOnlyWhenActive(code)...)
	}
	return vs
}

// ACT-3: the "not replayed" warnings of ACT-6 speak of replay, so they may
// only come while a started context's subscription covers CONFIG; one
// printed with no such context shows replay was switched on without it.
func (x *index) checkWarnedOnlyWhenActive(code trace.WarningCode) []Violation {
	configs := x.replayConfigs()
	if len(configs) == 0 {
		return nil
	}
	for _, w := range x.byType[trace.Warning] {
		if x.ev[w].Code != code {
			continue
		}
		active, judged := false, false
		for _, c := range configs {
			e := x.ev[c]
			if c > w || !e.Status.Is(trace.StatusSuccess) {
				continue
			}
			on, known := x.contextActive(e.Context, w)
			judged = judged || known
			active = active || (on && coversConfig(e))
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
// ENTER needs a subscription that covers CONFIG on a started context.
func (x *index) checkActivatingContext() []Violation {
	configs := x.replayConfigs()
	if len(configs) == 0 {
		return nil
	}
	var vs []Violation
	for _, i := range x.byType[trace.Callback] {
		e := x.ev[i]
		if e.Op != trace.OpConfig || e.Phase != trace.PhaseEnter {
			continue
		}
		why := "no configuration of KERNEL_REPLAY covering CONFIG succeeded before it"
		ok := false
		for _, c := range configs {
			ce := x.ev[c]
			if c > i || !ce.Status.Is(trace.StatusSuccess) || !coversConfig(ce) {
				continue
			}
			active, known := x.contextActive(ce.Context, i)
			if !known || active {
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
	for _, i := range x.byType[trace.Warning] {
		e := x.ev[i]
		if e.Code != code {
			continue
		}
		if d := x.dispatches[e.Dispatch]; d != nil && e.Dispatch != 0 {
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
	for _, i := range x.byType[trace.Warning] {
		if x.ev[i].Code == code {
			seen = append(seen, i)
		}
	}
	if len(seen) > 1 {
		return []Violation{x.violation(rule, 0, fmt.Sprintf("warning %s was printed %d times; it is printed once per process", code, len(seen)), seen...)}
	}
	return nil
}
