package cudatarget

import (
	"context"
	"errors"
	"time"

	"github.com/replayspec/replayspec/internal/cuda"
	"github.com/replayspec/replayspec/internal/harness"
	"github.com/replayspec/replayspec/internal/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// CUDA is the reference engine on an NVIDIA GPU through the CUDA driver:
// real device memory, real snapshot and restore, real timestamps.
type CUDA struct {
	// Faults plants known bugs in the reference engine.
	Faults replay.Faults
}

// Open checks that a driver and a device are there before claiming
// the target; without them the run is refused, never faked.
func Open() (target.Target, error) {
	rt, err := cuda.Open(nil)
	if err != nil {
		return nil, &target.Unavailable{Reason: "target cuda: " + err.Error()}
	}
	rt.Close()
	return CUDA{}, nil
}

// Name implements Target.
func (CUDA) Name() string { return "cuda" }

// Capabilities implements Capable. One device, so no multi-agent specs;
// counter groups follow the NVIDIA agent's blocks, not an MI300's, so specs
// whose pass counts come from AMD counter groups are skipped; a snapshot
// cannot be made to fail on purpose.
func (CUDA) Capabilities() []string {
	return []string{"indefinite", "local-contexts", "concurrency", "pc-sampling", "spm", "thread-trace", "device-counting"}
}

// Run implements Target.
func (tg CUDA) Run(ctx context.Context, s spec.Spec, opts target.Options) (trace.Trace, error) {
	rec := trace.NewRecorder(nil)
	if opts.Sink != nil {
		rec.SetSink(opts.Sink)
	}
	rt, err := cuda.Open(rec)
	if err != nil {
		return trace.Trace{}, &target.Unavailable{Reason: "target cuda: " + err.Error()}
	}
	defer rt.Close()
	rec.SetClock(rt.Now)
	threads := &harness.FreeThreads{Timeout: 30 * time.Second}
	if dl, ok := ctx.Deadline(); ok {
		threads.Timeout = time.Until(dl)
	}
	runErr := harness.Run(rt, threads, s, harness.Options{Recorder: rec, Faults: tg.Faults, Context: ctx})
	t := trace.Trace{Header: trace.Header{Trace: trace.Version, Spec: s.Name, Target: "cuda", Implementation: "replayspec reference engine on CUDA", Sources: trace.AllSources}, Events: rec.Events()}
	return t, errors.Join(runErr)
}
