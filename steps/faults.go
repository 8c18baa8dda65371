package steps

import (
	"context"
	"errors"

	"github.com/replayspec/replayspec/harness"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// machineFaults are failures of the simulated machine itself (not of the
// engine): memory that cannot be saved, a restore that breaks part-way.
// A snapshot limit is part of the spec format (agents[].snapshot_limit); a
// failing restore is not, so scenarios that need one run on failingSim,
// which is target.Sim with that knob turned.
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
	if w.machine.restoreAt > 0 {
		return failingSim{w.machine}
	}
	return target.Sim{}
}

// failingSim is the reference engine on a simulator that fails on purpose.
type failingSim struct{ m machineFaults }

func (failingSim) Name() string { return "sim" }

func (f failingSim) Capabilities() []string { return target.Sim{}.Capabilities() }

func (f failingSim) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	cfg := sim.Config{Scheduled: true, FailRestoreAt: f.m.restoreAt}
	for _, a := range s.Agents {
		cfg.Agents = append(cfg.Agents, sim.AgentConfig{Name: a.Name, Kind: a.Kind})
	}
	rt, err := sim.New(cfg)
	if err != nil {
		return trace.Trace{}, err
	}
	rec := trace.NewRecorder(rt.Clock)
	rt.SetRecorder(rec)
	stop := context.AfterFunc(ctx, rt.Cancel)
	defer stop()
	runErr := harness.Run(rt, rt, s, harness.Options{Recorder: rec, Faults: opts.Faults, Context: ctx})
	t := trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: s.Name, Target: "sim"}, Events: rec.Events()}
	return t, errors.Join(runErr, errors.Join(rt.Faults()...))
}
