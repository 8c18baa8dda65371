package steps

import (
	"context"
	"errors"

	"github.com/replayspec/replayspec/harness"
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// machineFaults are failures of the simulated machine itself (not of the
// engine): memory that cannot be saved, a restore that breaks part-way.
// The spec format has no words for them, so scenarios that need them run
// on failingSim, which is target.Sim with these knobs turned.
type machineFaults struct {
	snapshotOver uint64 // a snapshot of more bytes fails
	restoreAt    int    // the n-th restore fails part-way
}

func (m machineFaults) any() bool { return m.snapshotOver > 0 || m.restoreAt > 0 }

func (w *world) target() target.Target {
	if w.machine.any() {
		return failingSim{w.machine}
	}
	return target.Sim{}
}

// failingSim is the reference engine on a simulator that fails on purpose.
type failingSim struct{ m machineFaults }

func (failingSim) Name() string { return "sim" }

func (f failingSim) Capabilities() []string { return target.Sim{}.Capabilities() }

func (f failingSim) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	cfg := sim.Config{Scheduled: true, FailSnapshotOver: f.m.snapshotOver, FailRestoreAt: f.m.restoreAt}
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
	runErr := harness.Run(rt, simThreads{rt}, s, harness.Options{Recorder: rec, Faults: opts.Faults, Context: ctx})
	t := trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: s.Name, Target: "sim"}, Events: rec.Events()}
	return t, errors.Join(runErr, errors.Join(rt.Faults()...))
}

type simThreads struct{ rt *sim.Runtime }

func (t simThreads) Go(id hsa.ThreadID, fn func()) {
	if err := t.rt.Go(id, fn); err != nil {
		panic(err)
	}
}
func (t simThreads) Wait()                                         { _ = t.rt.Wait() }
func (t simThreads) WaitUntil(id hsa.ThreadID, c func() bool) bool { return t.rt.WaitUntil(id, c) }
