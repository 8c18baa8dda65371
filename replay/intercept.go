package replay

import (
	"errors"
	"fmt"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// ErrNeverEnded is returned by a submit whose replay loop spent the
// caller's pass budget (or was cancelled) without ending. The application's
// completion is never fired (CMP-4).
var ErrNeverEnded = errors.New("replay: the loop did not end within the pass budget")

// ErrRestoreFailed is returned by a submit whose restore failed part-way:
// the process aborts there (MEM-5), with no CONFIG EXIT and no completion.
var ErrRestoreFailed = errors.New("replay: a restore failed part-way; the process aborts")

// API-5 (clarified 2026-11-30): size is the whole payload's size, in the
// reference's layout, so a tool can tell a member is present from its
// offset.
const (
	dispatchInfoSize = trace.DispatchInfoSize // sizeof(rocprofiler_kernel_dispatch_info_t)
	payloadSize      = trace.PayloadSize      // sizeof(rocprofiler_callback_tracing_kernel_replay_data_t)
)

// Intercept installs the SDK's write interceptor on q, as the SDK does on
// every queue the application creates. A queue that can skip it while the
// SDK is idle (hsa.IdleBypass: nothing started, replay not configured)
// reads the SDK's idle flag instead of calling it: an idle SDK then costs
// one load (ACT-4; aim: at most 1.05x a bare dispatch).
func (s *SDK) Intercept(q hsa.Queue) {
	q.SetWriteInterceptor(s.intercept)
	if b, ok := q.(hsa.IdleBypass); ok {
		b.SetInterceptorIdle(&s.idle)
	}
}

func (s *SDK) onWrite(q hsa.Queue, thread hsa.ThreadID, packets []hsa.Packet, write hsa.WriteFunc) error {
	act := s.active.Load()
	if !act.empty() || s.replayConfigured.Load() {
		if err := s.gone(s.thread(thread)); err != nil {
			return err // a restore failed on this thread: the process is gone (MEM-5)
		}
	}
	if act.empty() {
		if !s.replayConfigured.Load() || s.thread(thread).ownsAgent(q.Agent()) {
			// ACT-4: replay never configured, nothing started: nothing to
			// do, and no loop can ever hold the agent.
			return write(thread, packets)
		}
		// A loop that began while its context was started still owns
		// its agent: a write there waits for it like any other (MEM-6,
		// decision 17.10). The write holds the agent's read lock while it
		// writes, so a loop that begins meanwhile waits for it before its
		// snapshot (MEM-4). Found under free threads (decision 18.2): this
		// path used to look at whether a loop was running and then write
		// holding nothing, so a loop that took the agent between the look
		// and the write had the write run inside it, and its next restore
		// undid what the write did.
		lk := s.agentLocks.of(q.Agent())
		lk.RLock(thread)
		defer lk.RUnlock(thread)
		return write(thread, packets)
	}
	if s.pol.toolDispatchNotCandidate && s.thread(thread).inWindow() {
		// MEM-6 broken: the tool's own dispatch is no candidate.
		return s.submitOnce(act, q, thread, packets, write)
	}
	if len(packets) == 1 && packets[0].Type == hsa.KernelDispatchPacket && !packets[0].FromGraph {
		return s.dispatch(act, q, thread, packets[0], write)
	}
	if s.pol.replayMultiPacket && packets[0].Type == hsa.KernelDispatchPacket && !packets[0].FromGraph {
		// ACT-6 broken: the kernel of a multi-packet write is replayed.
		if err := s.dispatch(act, q, thread, packets[0], write); err != nil {
			return err
		}
		return write(thread, packets[1:])
	}
	return s.submitOnce(act, q, thread, packets, write)
}

// submitOnce runs a submission once, without replay: a multi-packet or
// graph submission (ACT-6). Each kernel packet still gets its dispatch id
// and its ordinary services.
func (s *SDK) submitOnce(act *activeSet, q hsa.Queue, thread hsa.ThreadID, packets []hsa.Packet, write hsa.WriteFunc) error {
	ts := s.thread(thread)
	if act.replay != nil && !(s.pol.toolDispatchNotCandidate && ts.inWindow()) {
		code := trace.WarnMultiPacketSubmission
		for _, p := range packets {
			if p.FromGraph {
				code = trace.WarnGraphLaunch
			}
		}
		s.warnFrom(thread, code, 0, fmt.Sprintf("%d packets", len(packets)))
	}
	if ts.inWindow() && !s.pol.toolDispatchMasked { // LCX-6 broken when planted
		// LCX-6: no loop's local override is for a submission that runs
		// once inside a window; an empty window of its own hides them.
		ts.openWindow(0, 0)
		defer ts.closeWindow()
	}
	out := append([]hsa.Packet(nil), packets...)
	type pending struct {
		sub  submission
		info DispatchInfo
		corr CorrelationID
		at   int
	}
	var subs []pending
	for i := range out {
		if out[i].Type != hsa.KernelDispatchPacket {
			if s.pol.barrierEndsSubmission {
				break // DID-1..3 broken: the packets after a barrier go unseen
			}
			continue
		}
		info := s.reserveDispatch(q, thread, out[i])
		corr := s.correlation(ts)
		corr.External.Value = s.externalCorrelation(act, thread, info, corr.Internal)
		sub := s.prepare(act, ts, thread, info, corr)
		out[i].Tag, out[i].Profile = info.DispatchID, sub.profile
		subs = append(subs, pending{sub, info, corr, i})
	}
	err := s.writeOnAgent(ts, q.Agent(), thread, out, write)
	if err != nil {
		return err
	}
	for _, p := range subs {
		if prof := out[p.at].Profile; prof != nil {
			p.sub.deliver(thread, p.info, p.corr, prof.Start, prof.End)
		}
	}
	return nil
}

// reserveDispatch takes the dispatch id of a logical dispatch (DID-1) and
// advances the dispatch counter exactly once (DID-3).
func (s *SDK) reserveDispatch(q hsa.Queue, thread hsa.ThreadID, p hsa.Packet) DispatchInfo {
	id := s.dispatchIDs.Add(1)
	info := DispatchInfo{
		Size:          dispatchInfoSize,
		AgentID:       q.Agent(),
		QueueID:       q.ID(),
		KernelID:      s.kernels.id(p.Kernel),
		KernelName:    p.Kernel,
		DispatchID:    id,
		WorkgroupSize: p.Workgroup,
		GridSize:      p.Grid,
	}
	s.rec.EmitRef(&trace.Event{Type: trace.DispatchID, Thread: uint64(thread), Dispatch: id,
		Agent: uint64(info.AgentID), Queue: uint64(info.QueueID), Kernel: p.Kernel})
	return info
}

// externalCorrelation asks the tool for the external id of one submit
// (COR-3): the first started context with a callback answers.
func (s *SDK) externalCorrelation(act *activeSet, thread hsa.ThreadID, info DispatchInfo, internal uint64) uint64 {
	for i := range act.contexts {
		if fn := act.contexts[i].externalCorr; fn != nil {
			return fn(thread, info, internal)
		}
	}
	return 0
}

// runOnce is the ordinary single-dispatch path: the application's packet,
// its completion signal included, with the reserved id (DID-1).
func (s *SDK) runOnce(act *activeSet, ts *threadState, q hsa.Queue, thread hsa.ThreadID, p hsa.Packet, info DispatchInfo, corr CorrelationID, write hsa.WriteFunc) error {
	if ts.inWindow() && !s.pol.toolDispatchMasked { // LCX-6 broken when planted
		ts.openWindow(info.DispatchID, 0) // LCX-6, as in submitOnce
		defer ts.closeWindow()
	}
	corr.External.Value = s.externalCorrelation(act, thread, info, corr.Internal)
	sub := s.prepare(act, ts, thread, info, corr)
	p.Tag, p.Profile = info.DispatchID, sub.profile
	if err := s.writeOnAgent(ts, info.AgentID, thread, []hsa.Packet{p}, write); err != nil {
		return err
	}
	if sub.profile != nil {
		sub.deliver(thread, info, corr, sub.profile.Start, sub.profile.End)
	}
	return nil
}

// writeOnAgent writes packets while no other thread's loop holds agent
// (MEM-6: it waits for the loop's end). When this thread's own window holds
// it, the write goes at once, inside that loop's pass: waiting would wait
// for ever (MEM-6, clarified 2026-12-01: the SDK never deadlocks on its own
// window), and the loop's next restore undoes what it writes.
func (s *SDK) writeOnAgent(ts *threadState, agent hsa.AgentID, thread hsa.ThreadID, packets []hsa.Packet, write hsa.WriteFunc) error {
	if ts.ownsAgent(agent) && !s.pol.waitOnOwnWindow {
		return write(thread, packets)
	}
	lk := s.agentLocks.of(agent)
	lk.RLock(thread)
	defer lk.RUnlock(thread)
	return write(thread, packets)
}
