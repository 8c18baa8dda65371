package steps

import (
	"context"
	"slices"
	"strings"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// Faults made on purpose: planted in the engine, in the simulated machine,
// or by hand in the trace of a run.

func registerFaults(sc *godog.ScenarioContext) {
	step(sc, `^the engine has the planted faults? ([a-z_, ]+)$`, plantFaults)
	step(sc, `^the machine cannot save more than (\d+) bytes of device memory at once$`, snapshotLimit)
	step(sc, `^the machine fails part-way through its restore number (\d+)$`, restoreFails)
	step(sc, `^the trace is altered so that the last pass repeats the first pass's counter group$`, wrapGroups)
}

func plantFaults(ctx context.Context, list string) error {
	fs, err := replay.ParseFaults(strings.Join(words(list), ","))
	if err != nil {
		return err
	}
	w := get(ctx)
	for f := range fs {
		w.faults[f] = true
	}
	return nil
}

func snapshotLimit(ctx context.Context, n uint64) error {
	get(ctx).machine.snapshotOver = n
	return nil
}

func restoreFails(ctx context.Context, n int) error {
	get(ctx).machine.restoreAt = n
	return nil
}

// wrapGroups is a hand-made fault: the counter record of the last pass is
// rewritten to repeat pass 0's group, as a tool that wraps would deliver
// it; the rule checks then judge the altered trace.
func wrapGroups(ctx context.Context) error {
	w := get(ctx)
	r, err := w.result(ctx)
	if err != nil {
		return err
	}
	evs := slices.Clone(r.Trace.Events)
	var firstRec, lastRec = -1, -1
	for i, e := range evs {
		if e.Type == trace.Record && e.Service == trace.CounterCollection && e.Pass != nil {
			if firstRec < 0 {
				firstRec = i
			}
			lastRec = i
		}
	}
	if firstRec < 0 || firstRec == lastRec {
		return w.failf("the run should deliver counter records from several passes")
	}
	evs[lastRec].Counters = slices.Clone(evs[firstRec].Counters)
	r.Trace.Events = evs
	r.Violations = check.Trace(r.Trace)
	return nil
}

// machineFaults are failures of the simulated machine itself (not of the
// engine): memory that cannot be saved, a restore that breaks part-way.
// A snapshot limit is written into the spec (agents[].snapshot_limit). A
// failing restore is turned on the simulator target itself rather than
// through agents[].restore_fails_at: a spec that asks for the failure gets
// the abort as its run, while these scenarios want to see the run stop
// with the engine's error.
type machineFaults struct {
	snapshotOver uint64 // a snapshot of more bytes fails
	restoreAt    int    // the n-th restore fails part-way
}

// applyMachine writes the snapshot limit into the spec's agents.
func (w *world) applyMachine() {
	if w.machine.snapshotOver == 0 {
		return
	}
	for i := range w.s.Agents {
		w.s.Agents[i].SnapshotLimit = w.machine.snapshotOver
	}
	w.s.Requires = append(w.s.Requires, "snapshot-failure")
}

func (w *world) target() target.Target {
	return simtarget.Sim{Faults: w.faults, FailRestoreAt: w.machine.restoreAt}
}
