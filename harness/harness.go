// Package harness plays a spec's tool and application against the replay
// engine on any hsa.Runtime, recording what each observes into the trace.
// Targets (target/) choose the runtime; the harness is the same for all.
package harness

import (
	"context"
	"errors"
	"fmt"
	"sort"

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

// Run plays s (with defaults applied) on rt. Agents of rt are matched to
// the spec's agents in order. The trace is in opts.Recorder whether or not
// Run fails.
func Run(rt hsa.Runtime, th Threads, s spec.Spec, opts Options) error {
	agents := rt.Agents()
	if len(agents) < len(s.Agents) {
		return fmt.Errorf("the spec needs %d agents; the runtime has %d", len(s.Agents), len(agents))
	}
	sdk := replay.New(rt, replay.Options{Recorder: opts.Recorder, MaxPasses: s.Limits.MaxPasses,
		Context: opts.Context, Faults: opts.Faults})
	t := newTool(sdk, rt, th, opts.Recorder, s)
	a := &app{rt: rt, sdk: sdk, tool: t, rec: opts.Recorder, s: s, th: th,
		agents: map[string]hsa.AgentID{}, buffers: map[string]hsa.Allocation{},
		queues: map[string]hsa.Queue{}, completed: map[string]bool{}, freed: map[string]bool{}}
	for i, ag := range s.Agents {
		a.agents[ag.Name] = agents[i].ID
		opts.Recorder.Emit(trace.Event{Type: trace.AgentInfo, Agent: uint64(agents[i].ID), Label: ag.Name,
			Family: string(agents[i].Family), Message: agents[i].Name + " " + agents[i].Arch})
	}
	t.setUp() // the tool is loaded before the application allocates (ACT-4)
	if err := a.allocate(); err != nil {
		return err
	}
	byThread := map[hsa.ThreadID][]spec.Dispatch{}
	for _, d := range s.Application.Dispatches {
		byThread[hsa.ThreadID(d.Thread)] = append(byThread[hsa.ThreadID(d.Thread)], d)
	}
	ids := make([]hsa.ThreadID, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		id := id
		th.Go(id, func() { a.runThread(id, byThread[id]) })
	}
	th.Wait()
	a.readBack()
	return errors.Join(a.errs...)
}
