package check

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/trace"
)

// checkPC judges the pass-count table: what each answer of
// replay_pass_count makes the SDK do.
func checkPC(x *index) []Violation {
	var vs []Violation
	zeroWarned := false
	for _, i := range x.types[ekWarning] {
		zeroWarned = zeroWarned || x.ev[i].Code == trace.WarnPassCountZeroWithoutContinue
	}
	x.eachDispatch(func(d *dispatchView) {
		if len(d.configEnter) == 0 || len(d.failedSnapshots) > 0 {
			return // a failed snapshot runs the dispatch once: MEM-5 judges it
		}
		if x.declined(d) {
			return // the tool's, inside its own window's agent: declined, MEM-6 judges it (nested.go)
		}
		if _, returned := x.returnOf(d, trace.OpConfig, trace.PhaseEnter); !returned && len(d.passCounts) == 0 && x.cutOff(d) {
			return // the process died inside its CONFIG ENTER (a nested window's restore failed): nothing was asked
		}
		r, ok := x.passCount(d)
		switch {
		case len(d.passCounts) == 0:
			x.examined("PC-1")
			vs = append(vs, x.checkNotReplayed("PC-1", d, "replay_pass_count was not installed")...)
		case !ok:
			// The call was recorded without its answer: nothing to judge.
		case r == 1:
			x.examined("PC-2")
			vs = append(vs, x.checkNotReplayed("PC-2", d, "replay_pass_count returned 1")...)
		case r == 0 && !x.continueInstalled(d):
			// Without replay_continue: refused, with a warning (PC-6).
			x.examined("PC-6")
			if !zeroWarned && x.reportsWarnings() {
				vs = append(vs, x.violation("PC-6", d.id, fmt.Sprintf("replay_pass_count returned 0 and dispatch %d ran unreplayed, but no %s warning was printed", d.id, trace.WarnPassCountZeroWithoutContinue), d.passCounts[0]))
			}
			vs = append(vs, x.checkNotReplayed("PC-6", d, "replay_pass_count returned 0 without replay_continue")...)
		case r == 0:
			x.examined("PC-5")
			x.examined("PC-8")
			vs = append(vs, x.checkIndefiniteTotals(d)...)
		case r > 1:
			x.examined("PC-7")
			x.examined("PC-8")
			if x.continueInstalled(d) || len(d.continues) > 0 {
				x.examined("PC-4")
			} else {
				x.examined("PC-3")
			}
			vs = append(vs, x.checkFixedPasses(d, uint64(r))...)
		}
		vs = append(vs, x.checkPassIndices(d)...)
	})
	return append(vs, x.checkWarnedNotReplayed("PC-6", trace.WarnPassCountZeroWithoutContinue)...)
}

// continueInstalled reports whether the tool set replay_continue in CONFIG
// ENTER: from its own record when the trace has one, else from the SDK
// having called it.
func (x *index) continueInstalled(d *dispatchView) bool {
	if ret, ok := x.returnOf(d, trace.OpConfig, trace.PhaseEnter); ok {
		return slices.Contains(x.ev[ret].Payload, trace.MemberReplayContinue)
	}
	return len(d.continues) > 0 || d.replayed()
}

// asksForLoop reports whether the tool's answers ask for d to be replayed:
// a fixed count above 1, or 0 with replay_continue set.
func (x *index) asksForLoop(d *dispatchView) bool {
	r, ok := x.passCount(d)
	return ok && (r > 1 || r == 0 && x.continueInstalled(d))
}

// snapshotMayHaveFailed: without the SDK's own account, a loop that never
// began may be one whose snapshot failed (MEM-5), unless the trace carries
// the warnings and no snapshot_incomplete was printed before d ended.
func (x *index) snapshotMayHaveFailed(d *dispatchView) bool {
	end := len(x.ev)
	if a := x.appOf(d); a != nil {
		end = min(end, firstOr(a.complete, end), firstOr(a.timeout, end))
	}
	return x.snapshotMayHaveFailedBefore(end)
}

// snapshotMayHaveFailedBefore is snapshotMayHaveFailed for a dispatch that
// ended at end (the application's or the tool's wait).
func (x *index) snapshotMayHaveFailedBefore(end int) bool {
	if !x.reportsWarnings() {
		return true
	}
	for _, i := range x.types[ekWarning] {
		if i < end && x.ev[i].Code == trace.WarnSnapshotIncomplete {
			x.examined("MEM-5") // the failure warned of, the dispatch run once
			return true
		}
	}
	return false
}

// reportsWarnings: the trace carries the SDK's diagnostics (what the
// process printed, an app event: docs/trace.md), so a missing warning is a
// finding rather than a blind spot.
func (x *index) reportsWarnings() bool { return x.reportsType(trace.Warning) }

// reportsType: the trace's header lists the source of events of type t.
func (x *index) reportsType(t trace.Type) bool {
	src, ok := t.Source()
	return ok && x.header.Reports(src)
}

// checkNotReplayed: no PASS, no snapshot or restore, one plain run.
func (x *index) checkNotReplayed(rule string, d *dispatchView, why string) []Violation {
	var vs []Violation
	if extra := x.concat(d.passEnter, d.snapshots, d.restores); len(extra) > 0 {
		vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("%s, yet dispatch %d shows %d PASS callbacks, %d snapshots, %d restores", why, d.id, len(d.passEnter), len(d.snapshots), len(d.restores)), append(extra, d.passCounts...)...))
	}
	// A failed restore on another thread may end the process before this
	// dispatch ran (MEM-5): no run is owed then.
	if x.has(trace.Kernel) && len(d.kernels) != 1 && !x.diedBeforeRun(d) {
		vs = append(vs, x.violation(rule, d.id, fmt.Sprintf("%s, yet dispatch %d's kernel ran %d times, not once", why, d.id, len(d.kernels)), x.concat(d.passCounts, d.kernels)...))
	}
	return vs
}

// PC-5: an indefinite loop reports total_passes 0 in every PASS.
func (x *index) checkIndefiniteTotals(d *dispatchView) []Violation {
	for _, i := range x.concat(d.passEnter, d.passExit) {
		if t := x.ev[i].Total; t != nil && *t != 0 {
			return []Violation{x.violation("PC-5", d.id, fmt.Sprintf("replay_pass_count returned 0, yet PASS %s of pass %s reports total_passes %d", x.ev[i].Phase, passText(&x.ev[i]), *t), d.passCounts[0], i)}
		}
	}
	return nil
}

// PC-3, PC-4, PC-7: a fixed loop of n runs n passes, fewer only when
// continue said 0, and reports total_passes n.
func (x *index) checkFixedPasses(d *dispatchView, n uint64) []Violation {
	var vs []Violation
	passes := uint64(len(d.passEnter))
	runs := d.passEnter // where each pass shows
	if x.passesHidden() {
		// A CONFIG-only subscription sees no PASS callback (decision in
		// docs/decisions.md): the passes are the kernel's runs, when the
		// trace shows them; without the runtime the count is not
		// observable (found by internal/specgen through the C port).
		if !x.header.Reports(trace.SourceRuntime) {
			return nil
		}
		runs = d.kernels
		passes = uint64(len(runs))
	}
	pc := d.passCounts[0]
	stop := -1
	for _, i := range d.continues {
		if r := x.ev[i].Result; r != nil && *r == 0 {
			stop = i
			break
		}
	}
	switch {
	case passes > n:
		vs = append(vs, x.violation("PC-4", d.id, fmt.Sprintf("replay_pass_count returned %d but %d passes ran", n, passes), pc, runs[n]))
	case stop >= 0:
		if p, ok := x.passOf(stop); ok && passes != p+1 {
			vs = append(vs, x.violation("PC-4", d.id, fmt.Sprintf("replay_continue returned 0 after pass %d, so %d passes should have run, not %d", p, p+1, passes), pc, stop))
		}
	case !x.header.Reports(trace.SourceSDK) && (passes == 0 || x.passesHidden() && passes == 1) && x.snapshotMayHaveFailed(d):
		// Without the SDK's reports a loop that never began (a failed
		// snapshot runs the dispatch once, MEM-5) cannot be told apart;
		// where the passes are the kernel's runs, neither can a loop
		// cut to one pass (found by internal/specgen through the C port
		// at the runtime profile, gen-000737 of seed 11). The SDK warns
		// of a failed snapshot (once per process): with the warnings in
		// the trace and none printed, no snapshot failed.
	case passes != n && len(d.neverEnded) == 0 && !x.cutOff(d) && !x.openLoop(d):
		at := []int{pc}
		if passes > 0 {
			at = append(at, runs[passes-1])
		}
		vs = append(vs, x.violation("PC-3", d.id, fmt.Sprintf("replay_pass_count returned %d and continue never said 0, but %d passes ran", n, passes), at...))
		// The count the tool gave is not the count that ran: something
		// other than the tool decided it.
		vs = append(vs, x.violation("PC-8", d.id, fmt.Sprintf("the tool asked for %d passes and %d ran: the count was overridden", n, passes), at...))
	}
	for _, i := range x.concat(d.passEnter, d.passExit) {
		if t := x.ev[i].Total; t != nil && *t != n {
			vs = append(vs, x.violation("PC-7", d.id, fmt.Sprintf("PASS %s of pass %s reports total_passes %d, the fixed count is %d", x.ev[i].Phase, passText(&x.ev[i]), *t, n), pc, i))
			vs = append(vs, x.violation("PC-8", d.id, fmt.Sprintf("the tool asked for %d passes, the SDK reports %d: the count was overridden", n, *t), pc, i))
			break
		}
	}
	return vs
}

// PC-7: the passes entered are 0, 1, 2, ... in order.
func (x *index) checkPassIndices(d *dispatchView) []Violation {
	if len(d.passEnter) > 0 {
		x.examined("PC-7")
	}
	n, from := x.elided(d)
	for k, i := range d.passEnter {
		if n > 0 && uint64(k) >= from {
			k += n // past the passes a part of a loop leaves out
		}
		if p, ok := x.passOf(i); !ok || p != uint64(k) {
			return []Violation{x.violation("PC-7", d.id, fmt.Sprintf("pass number %d entered reports current_pass %s, want %d", k+1, passText(&x.ev[i]), k), i)}
		}
	}
	return nil
}
