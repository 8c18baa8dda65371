package cudatarget

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/replayspec/replayspec/cuda"
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/internal/harness"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// CUDA is the reference engine on an NVIDIA GPU through the CUDA driver:
// real device memory, real snapshot and restore, real timestamps, and real
// counters (NVIDIA metrics through CUPTI) where CUPTI loads.
type CUDA struct {
	// Faults plants known bugs in the reference engine.
	Faults replay.Faults

	counters bool // CUPTI loaded: the agent counts NVIDIA metrics
}

// Open checks that a driver and a device are there before claiming
// the target; without them the run is refused, never faked.
func Open() (target.Target, error) {
	rt, err := cuda.Open(nil)
	if err != nil {
		return nil, &target.Unavailable{Reason: "target cuda: " + err.Error()}
	}
	ok, _ := rt.CountersAvailable()
	rt.Close()
	return CUDA{counters: ok}, nil
}

// Name implements Target.
func (CUDA) Name() string { return "cuda" }

// Capabilities implements Capable. One device, so no multi-agent specs; a
// snapshot cannot be made to fail on purpose, a restore can
// (cuda.Options.FailRestoreAt, "restore-failure"); the tool's own calls
// from callbacks ("tool-actions") are the harness's and run as on the
// simulator. "counters" and
// "device-counting" stay unclaimed: the specs that require them count AMD
// counters (SQ_*, TCC_*, GRBM_*), which an NVIDIA device does not have
// (docs/cuda.md lists them); with CUPTI the target claims
// "nvidia-counters", the specs that count NVIDIA metrics (specs/nvidia/).
func (c CUDA) Capabilities() []string {
	caps := []string{"indefinite", "local-contexts", "concurrency", "pc-sampling", "spm", "thread-trace",
		spec.CapRestoreFailure, spec.CapToolActions, spec.CapRepeat}
	if c.counters {
		caps = append(caps, "nvidia-counters")
	}
	return caps
}

// Header implements target.Streaming: the recorder hands each event on
// as it is recorded.
func (tg CUDA) Header(s spec.Spec) trace.Header {
	return trace.Header{Trace: trace.Version, Digest: trace.DigestXXH3, Spec: s.Name, Target: "cuda", Implementation: "replayspec reference engine on CUDA", Sources: trace.AllSources}
}

// Run implements Target.
func (tg CUDA) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	rec := trace.NewRecorder(nil)
	if opts.Sink != nil {
		rec.SetSink(opts.Sink, !opts.Discard)
	}
	var o cuda.Options
	for _, a := range s.Agents {
		// One device: the earliest failure any agent asks for happens.
		if n := int(min(a.RestoreFailsAt, 1<<31)); n > 0 && (o.FailRestoreAt == 0 || n < o.FailRestoreAt) {
			o.FailRestoreAt = n
		}
	}
	rt, err := cuda.OpenWith(rec, o)
	if err != nil {
		return trace.Trace{}, &target.Unavailable{Reason: "target cuda: " + err.Error()}
	}
	defer rt.Close()
	if err := checkNVIDIACounters(s, rt.Agents()[0]); err != nil {
		return trace.Trace{}, err
	}
	rec.SetClock(rt.Now)
	threads := &harness.FreeThreads{Timeout: 30 * time.Second}
	if dl, ok := ctx.Deadline(); ok {
		threads.Timeout = time.Until(dl)
	}
	runErr := harness.Run(rt, threads, s, harness.Options{Recorder: rec, Faults: tg.Faults, Context: ctx})
	t := trace.Trace{Header: tg.Header(s), Events: rec.Events()}
	if errors.Is(runErr, replay.ErrRestoreFailed) && o.FailRestoreAt > 0 {
		// The spec fails a restore on purpose; the process aborting there
		// is the run it asked for (expect.aborts judges the trace).
		runErr = nil
	}
	return t, errors.Join(runErr)
}

// checkNVIDIACounters refuses a spec whose nvidia agent would count a
// metric the device does not have: the tool would drop it silently (as it
// drops counters an agent lacks), so the error names the agent instead.
func checkNVIDIACounters(s spec.Spec, a hsa.Agent) error {
	var agent string
	for _, ag := range s.Agents {
		if ag.Kind == "nvidia" {
			agent = ag.Name
		}
	}
	if agent == "" {
		return nil
	}
	var counters []string
	for _, c := range s.Contexts {
		for _, cc := range []*spec.CounterCollection{c.Services.CounterCollection, c.Services.DeviceCounting} {
			if cc != nil {
				counters = append(counters, cc.Counters...)
			}
		}
	}
	if len(counters) == 0 {
		return nil
	}
	if _, err := hsa.CounterGroups(a, counters); err != nil {
		return fmt.Errorf("spec %s: agent %s (nvidia): %w", s.Name, agent, err)
	}
	return nil
}
