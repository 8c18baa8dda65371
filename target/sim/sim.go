package simtarget

import (
	"context"
	"errors"

	"github.com/replayspec/replayspec/internal/harness"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// Sim is the reference engine on the simulator. By default threads are
// scheduled deterministically (same spec, same trace); Parallel runs them
// truly in parallel, for race and stress tests.
type Sim struct {
	Parallel bool
	// Faults plants known bugs in the reference engine (docs/faults.md).
	Faults replay.Faults
	// FailRestoreAt makes the simulator's n-th restore fail part-way
	// (MEM-5); 0 never.
	FailRestoreAt int
}

// Name implements Target.
func (Sim) Name() string { return "sim" }

// Capabilities implements Capable: the reference claims everything.
func (Sim) Capabilities() []string {
	return []string{"indefinite", "local-contexts", "concurrency", "pc-sampling", "spm", "thread-trace",
		"device-counting", "multi-agent", "counters", "snapshot-failure", spec.CapRestoreFailure, spec.CapToolActions,
		spec.CapMemoryActions, spec.CapRepeat}
}

// Header implements target.Streaming: the recorder hands each event on
// as it is recorded.
func (tg Sim) Header(s spec.Spec) trace.Header {
	return trace.Header{Trace: trace.Version, Digest: trace.DigestXXH3, Spec: s.Name, Target: "sim", Implementation: "replayspec reference engine", Sources: trace.AllSources}
}

// Repeatable implements target.Repeatable: scheduled, the simulator's
// trace of a spec is the same every time; with free threads it is not.
func (tg Sim) Repeatable() bool { return !tg.Parallel }

// Run implements Target.
func (tg Sim) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	cfg := sim.Config{Scheduled: !tg.Parallel, FailRestoreAt: tg.FailRestoreAt}
	for _, a := range s.Agents {
		// The spec's limit is the agent's own (spec.Agent.SnapshotLimit):
		// a machine-wide one made a snapshot on another agent fail, and a
		// generated spec waiting for that agent's loop hung (gen-023977).
		cfg.Agents = append(cfg.Agents, sim.AgentConfig{Name: a.Name, Kind: a.Kind, SnapshotLimit: a.SnapshotLimit})
		// The simulator counts restores over the whole machine: the
		// earliest failure any agent asks for is the one that happens.
		if n := int(min(a.RestoreFailsAt, 1<<31)); n > 0 && (cfg.FailRestoreAt == 0 || n < cfg.FailRestoreAt) {
			cfg.FailRestoreAt = n
		}
	}
	rt, err := sim.New(cfg)
	if err != nil {
		return trace.Trace{}, err
	}
	rec := trace.NewRecorder(rt.Clock)
	if sink := opts.Sink; sink != nil {
		// The runtime cuts the sink off where its process hangs (the trace
		// is cut there below).
		rec.SetSink(sink, !opts.Discard)
	}
	rt.SetRecorder(rec)
	stop := context.AfterFunc(ctx, rt.Cancel)
	defer stop()
	runErr := harness.Run(rt, rt, s, harness.Options{Recorder: rec, Faults: tg.Faults, Context: ctx})
	t := trace.Trace{Header: tg.Header(s), Events: rec.Take()}
	if n, ok := rt.DeadlockedAt(); ok && n <= len(t.Events) {
		// Every thread blocked: the process hangs there, and its trace
		// ends there too, as a port's that a timeout cut would (the
		// oracles judge what was recorded until then; the error says why
		// it ended).
		t.Events = t.Events[:n]
	}
	if errors.Is(runErr, replay.ErrRestoreFailed) && failsRestore(s) {
		// The spec's machine fails a restore on purpose; the process
		// aborting there is the run it asked for, and the trace shows it
		// (expect.aborts judges it), not a target that broke down.
		runErr = nil
	}
	return t, errors.Join(runErr, errors.Join(rt.Faults()...))
}

// failsRestore reports whether the spec's machine fails a restore.
func failsRestore(s spec.Spec) bool {
	for _, a := range s.Agents {
		if a.RestoreFailsAt > 0 {
			return true
		}
	}
	return false
}
