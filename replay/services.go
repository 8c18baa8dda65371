package replay

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// serviceUse is one service of one context taking part in a submit.
type serviceUse struct {
	svc      Service
	ctx      ContextID
	counters []string
	record   RecordFunc
}

// submission is what the services of the started contexts make of one
// submit: who takes part, and the profile the runtime must fill.
type submission struct {
	uses    []serviceUse
	profile *hsa.Profile
	// spare is the profile a reused submission hands out again (prepareInto).
	spare *hsa.Profile
}

// prepare asks every started context's services whether they take part in
// this submit, on the submitting thread (CB-4), applying the thread's local
// override (SVC-1, SVC-2) and the combination limits (SVC-3).
func (s *SDK) prepare(act *activeSet, ts *threadState, thread hsa.ThreadID, info DispatchInfo, corr CorrelationID) submission {
	var sub submission
	s.prepareInto(&sub, act, ts, thread, info, corr)
	return sub
}

// prepareInto is prepare into sub, reusing its uses and its profile: a
// loop prepares every pass into one submission, as the runtimes fill a
// profile before write returns and keep nothing of it (hsa.Packet), and
// the records are delivered before the next pass prepares.
func (s *SDK) prepareInto(sub *submission, act *activeSet, ts *threadState, thread hsa.ThreadID, info DispatchInfo, corr CorrelationID) {
	clear(sub.uses) // no stale record funcs or counter lists held
	sub.uses, sub.profile = sub.uses[:0], nil
	var counters, pcs, spm, att bool
	var collecting []string // the dispatch counters of this pass so far
	pol := s.policyFor(info.AgentID)
	for i := range act.contexts {
		c := &act.contexts[i]
		id := c.id
		if c.counters != nil && ts.participates(CounterCollection, id, pol) {
			if names := c.counters.selectCounters(thread, info, corr); len(names) > 0 {
				// Two contexts' dispatch counters that need two passes
				// together cannot share this one: the later context is
				// left out of it, as SVC-3 leaves the second service out
				// (decision 17.9).
				merged := append(slices.Clone(collecting), names...)
				if g, err := hsa.CounterGroups(s.agents[info.AgentID], merged); err == nil && len(g) > 1 {
					s.warn(trace.WarnServiceConflict, info.DispatchID, fmt.Sprintf("counter_collection of context %d needs another pass beside the counters already collected: left out", id))
				} else {
					collecting = merged
					sub.uses = append(sub.uses, serviceUse{CounterCollection, id, names, c.counters.record})
					counters = true
				}
			}
		}
		if c.kernelTrace != nil && ts.participates(KernelTrace, id, pol) {
			sub.uses = append(sub.uses, serviceUse{svc: KernelTrace, ctx: id, record: c.kernelTrace})
		}
		if d := c.deviceCounting; d != nil && d.covers(info.AgentID) && ts.participates(DeviceCounting, id, pol) {
			// Configured for every agent, it counts on each what that
			// agent has (decision 17.7), as the tool drops the dispatch
			// counters an agent lacks (AGT-1).
			if names, _ := hsa.CollectableCounters(s.agents[info.AgentID], d.counters); len(names) > 0 {
				sub.uses = append(sub.uses, serviceUse{DeviceCounting, id, names, d.record})
			}
		}
		if d := c.pcSampling; d != nil && d.covers(info.AgentID) && ts.participates(PCSampling, id, pol) {
			sub.uses = append(sub.uses, serviceUse{svc: PCSampling, ctx: id, record: d.record})
			pcs = true
		}
		if c.spm != nil && ts.participates(SPM, id, pol) {
			sub.uses = append(sub.uses, serviceUse{svc: SPM, ctx: id, record: c.spm})
			spm = true
		}
		if c.threadTrace != nil && ts.participates(ThreadTrace, id, pol) {
			sub.uses = append(sub.uses, serviceUse{svc: ThreadTrace, ctx: id, record: c.threadTrace})
			att = true
		}
	}
	if len(sub.uses) == 0 {
		return
	}
	// SVC-3: on MI2xx/MI3xx dispatch counters and PC sampling cannot share a
	// pass; thread trace and SPM never can. Our decision (docs/decisions.md):
	// warn once and leave the second service out of the pass.
	if counters && pcs { // the agent looked up only then: a copy of it every pass cost a fifth of this
		if agent := s.agents[info.AgentID]; agent.Family.DataCenter() {
			s.warn(trace.WarnServiceConflict, info.DispatchID, "counter_collection and pc_sampling on "+agent.Arch+": pc_sampling left out")
			sub.drop(PCSampling)
		}
	}
	if att && spm { // both inject AQL instrumentation, on any agent
		s.warn(trace.WarnServiceConflict, info.DispatchID, "thread_trace and spm: spm left out")
		sub.drop(SPM)
	}
	if sub.spare == nil {
		sub.spare = &hsa.Profile{}
	}
	*sub.spare = hsa.Profile{} // the lists new: a runtime may keep what it was handed
	sub.profile = sub.spare
	for _, u := range sub.uses {
		list := &sub.profile.Counters
		if u.svc == DeviceCounting {
			list = &sub.profile.Device // the agent's own session, not the dispatch's registers
		}
		for _, n := range u.counters {
			if !contains(*list, n) {
				*list = append(*list, n)
			}
		}
	}
}

func (d *deviceService) covers(agent hsa.AgentID) bool { return d.agent == 0 || d.agent == agent }

func (sub *submission) drop(svc Service) {
	kept := sub.uses[:0]
	for _, u := range sub.uses {
		if u.svc != svc {
			kept = append(kept, u)
		}
	}
	sub.uses = kept
}

// deliver hands every record of a completed submit to its service's
// callback, on the submitting thread (CB-4).
func (sub *submission) deliver(thread hsa.ThreadID, info DispatchInfo, corr CorrelationID, start, end uint64) {
	for _, u := range sub.uses {
		r := Record{Service: u.svc, Context: u.ctx, Thread: thread, Dispatch: info, Correlation: corr, Start: start, End: end}
		switch u.svc {
		case CounterCollection, DeviceCounting:
			for _, n := range u.counters {
				// A counter the runtime did not count is left out, never
				// recorded as 0 (a zero would read as counted).
				if v, ok := sub.profile.Values[n]; ok {
					r.Counters = append(r.Counters, CounterValue{n, v})
				}
			}
		case PCSampling:
			r.Counters = []CounterValue{{"pc_samples", (end-start)/64 + 1}}
		case SPM:
			r.Counters = []CounterValue{{"spm_samples", (end-start)/256 + 1}}
		case ThreadTrace:
			r.Counters = []CounterValue{{"att_bytes", 4096 * ((end-start)/512 + 1)}}
		}
		u.record(r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
