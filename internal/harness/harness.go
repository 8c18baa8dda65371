// Package harness plays a spec's tool and application against the replay
// engine on any hsa.Runtime, recording what each observes into the trace.
// Targets (target/) choose the runtime; the harness is the same for all.
package harness

import (
	"context"
	"fmt"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Options for one run.
type Options struct {
	Recorder *trace.Recorder
	Faults   replay.Faults
	Context  context.Context
}

// Run plays s (with defaults applied) on rt: the spec's tool, then its
// application. Agents of rt are matched to the spec's agents in order. The
// trace is in opts.Recorder whether or not Run fails.
func Run(rt hsa.Runtime, th Threads, s spec.Spec, opts Options) error {
	agents := rt.Agents()
	if len(agents) < len(s.Agents) {
		return fmt.Errorf("the spec needs %d agents; the runtime has %d", len(s.Agents), len(agents))
	}
	for i, ag := range s.Agents {
		opts.Recorder.EmitRef(&trace.Event{Type: trace.AgentInfo, Agent: uint64(agents[i].ID), Label: ag.Name,
			Family: agents[i].Family, Product: agents[i].Name, Arch: agents[i].Arch})
	}
	sdk := replay.New(rt, replay.Options{Recorder: opts.Recorder, MaxPasses: s.Limits.MaxPasses,
		Context: opts.Context, Faults: opts.Faults})
	t := newTool(sdk, rt, th, opts.Recorder, s)
	t.setUp() // the tool is loaded before the application allocates (ACT-4)
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return runApplication(ctx, rt, th, sdk, opts.Recorder, s, t)
}
