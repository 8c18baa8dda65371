package replay

import (
	"fmt"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// plan is what the tool's answers in CONFIG make of a dispatch (the
// pass-count table, PC-1..PC-6).
type plan struct {
	replay     bool
	passes     uint64 // N for a fixed loop; 0 for an indefinite one
	continueFn ContinueFunc
}

func (s *SDK) decide(payload *KernelReplayData, info DispatchInfo, seq UserData) plan {
	if payload.ReplayPassCount == nil {
		return plan{} // PC-1: opt-out
	}
	n := payload.ReplayPassCount(info, seq) // CB-3: once, after CONFIG ENTER returned
	cont := payload.ReplayContinue
	// An if chain, not a switch: gremlins (make mutation) counts a case
	// expression as never run, and would not mutate these conditions.
	if n == 1 && !s.pol.replaySinglePass {
		return plan{} // PC-2: one pass needs no snapshot
	}
	if n == 0 && cont == nil {
		// PC-6: rejected with a warning (once per process).
		s.warn(trace.WarnPassCountZeroWithoutContinue, info.DispatchID, "")
		if s.pol.replayZeroWithoutContinue { // PC-6 broken
			return plan{replay: true, passes: 2}
		}
		return plan{}
	}
	return plan{replay: true, passes: n, continueFn: cont} // PC-3, PC-4, PC-5
}

// dispatch handles one single-packet kernel dispatch while some context is
// started: the replay window of the reference's write interceptor. A
// dispatch the tool writes from inside a window (a CONFIG or PASS callback,
// or a service callback within a pass) comes here too: a candidate like
// any other (MEM-6, clarified 2026-12-01).
func (s *SDK) dispatch(act *activeSet, q hsa.Queue, thread hsa.ThreadID, p hsa.Packet, write hsa.WriteFunc) error {
	ts := s.thread(thread)
	info := s.reserveDispatch(q, thread, p) // DID-1: before CONFIG
	corr := s.correlation(ts)               // COR-1: captured once
	if act.replay == nil {
		return s.runOnce(act, ts, q, thread, p, info, corr, write)
	}
	sub := act.replay
	// MEM-6: a window of this thread already open on the agent: the SDK
	// declines to replay there, and so never waits for its own window.
	reentrant := ts.windowOn(info.AgentID) && !s.pol.replayReentrant
	nested := ts.inWindow()
	w := ts.openWindow(info.DispatchID, info.AgentID)
	closed := false
	closeWindow := func() {
		if !closed {
			ts.closeWindow()
			closed = true
		}
	}
	defer closeWindow()
	var seq UserData // UD-1: one value for the whole sequence
	// API-6: a CONFIG payload carries no pass fields.
	cfg := &KernelReplayData{Size: payloadSize, DispatchInfo: info}
	s.callback(sub, thread, corr, OpConfig, PhaseEnter, cfg, &seq) // CB-1
	if err := s.gone(ts); err != nil {
		return err
	}
	pl := s.decide(cfg, info, seq)
	if pl.replay && (reentrant || s.pol.declineNested && nested) {
		// MEM-6 (clarified): it runs once, inside the outer pass; the
		// outer loop's next restore undoes what it writes there.
		s.warn(trace.WarnReentrantDispatch, info.DispatchID, fmt.Sprintf("agent %d", info.AgentID))
		pl = plan{}
	}
	if !pl.replay {
		if s.pol.snapshotNotReplayed {
			s.snapshotNotReplayed(thread, info) // MEM-1 broken
		}
		s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq) // CB-1 (ref): EXIT right after ENTER
		if err := s.gone(ts); err != nil {
			return err
		}
		closeWindow()
		return s.runOnce(act, ts, q, thread, p, info, corr, write)
	}
	if s.shared != nil {
		s.shared.clear() // LCX-6 broken: a new loop's override, for everyone
	}
	lk := s.agentLocks.of(info.AgentID)
	owned := ts.ownsAgent(info.AgentID) // only with replay_reentrant planted
	if !owned {
		lk.Lock(thread) // MEM-6: the loop owns the agent; a nested window waits for another thread's
	}
	ts.setHolds(w, true)
	locked := true
	unlock := func() {
		if locked {
			ts.setHolds(w, false)
			if !owned {
				lk.Unlock(thread)
			}
			locked = false
		}
	}
	defer unlock()
	snap, err := s.snapshot(q, thread, info)
	if err != nil {
		// MEM-5: warn (once) and run once without replay. The failed
		// snapshot itself is recorded every time, for the trace's readers.
		s.rec.EmitRef(&trace.Event{Type: trace.Snapshot, Thread: uint64(thread), Dispatch: info.DispatchID,
			Agent: uint64(info.AgentID), Status: StatusError.Trace(), Message: err.Error()})
		s.warn(trace.WarnSnapshotIncomplete, info.DispatchID, err.Error())
		unlock()
		s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq)
		closeWindow()
		return s.runOnce(act, ts, q, thread, p, info, corr, write)
	}
	defer snap.Release()
	ran, ended, err := s.loop(act, ts, w, sub, q, thread, corr, p, info, pl, seq, snap, write)
	if err != nil || !ended {
		return err
	}
	if s.pol.indefiniteOnePassNoCompletion && pl.passes == 0 && ran == 1 {
		// CMP-1 broken: the held-back completion is never released.
		s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq)
		return nil
	}
	early := s.pol.completionBeforeConfigExit // CMP-2 broken
	if early {
		if err := fire(thread, p, write); err != nil {
			return err
		}
	}
	s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq) // CB-1 (ref): closes the window
	if err := s.gone(ts); err != nil {
		return err
	}
	if early {
		return nil
	}
	return fire(thread, p, write) // CMP-1, CMP-2: the one completion, after CONFIG EXIT
}

// fire releases the application's held-back completion: one barrier packet
// carrying its signal, written behind the loop's passes on the same queue,
// so each runtime completes it its own way (a host callback on CUDA).
func fire(thread hsa.ThreadID, p hsa.Packet, write hsa.WriteFunc) error {
	if p.Completion == nil {
		return nil
	}
	return write(thread, []hsa.Packet{{Type: hsa.BarrierPacket, Completion: p.Completion}})
}

// snapshot drains the queue and the agent, then saves the agent's tracked
// device memory (MEM-1, MEM-4). The SDK records it where the runtime
// copies (decision 18.8): recorded after the copy returned, another
// thread's kernel could land between the two, and the trace would show a
// snapshot taken after a kernel whose writes it does not hold. The tracked
// regions are listed where no other thread's allocation or free can fall
// between the list and the copy (decision 18.9): under the runtime's
// memory lock (hsa.SnapshotLister), or else with the tracker held.
func (s *SDK) snapshot(q hsa.Queue, thread hsa.ThreadID, info DispatchInfo) (snap hsa.Snapshot, err error) {
	if err := q.Drain(); err != nil {
		return nil, err
	}
	if err := s.rt.DrainAgent(info.AgentID); err != nil {
		return nil, err
	}
	var regions []hsa.Allocation
	saved := func(bytes uint64) {
		s.rec.EmitRef(&trace.Event{Type: trace.Snapshot, Thread: uint64(thread), Dispatch: info.DispatchID,
			Agent: uint64(info.AgentID), Bytes: bytes, Regions: regionsOf(regions)})
	}
	if l, ok := s.rt.(hsa.SnapshotLister); ok {
		// Listed where the runtime allocates and frees: nothing comes or
		// goes between the list and the copy.
		return l.SnapshotListed(thread, info.AgentID, func() []hsa.Allocation {
			regions = s.tracker.regionsOf(info.AgentID)
			return regions
		}, saved)
	}
	s.tracker.saving(info.AgentID, func(listed []hsa.Allocation) {
		regions = listed
		if h, ok := s.rt.(hsa.SnapshotHook); ok {
			snap, err = h.SnapshotWithHook(thread, info.AgentID, regions, saved)
			return
		}
		if snap, err = s.rt.Snapshot(thread, info.AgentID, regions); err == nil {
			saved(snap.Bytes()) // a runtime with no hook: as close to the copy as the SDK can
		}
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// regionsOf is how snapshot events name the allocations saved.
func regionsOf(allocs []hsa.Allocation) []trace.Region {
	out := make([]trace.Region, len(allocs))
	for i, a := range allocs {
		out[i] = trace.Region{Addr: a.Handle, Bytes: a.Size}
	}
	return out
}

// loop runs the passes. It reports how many ran and whether the loop
// ended; a loop that spends the caller's budget is reported as never-ended
// (CMP-4) and its completion is not fired.
func (s *SDK) loop(act *activeSet, ts *threadState, w *window, sub *toolContext, q hsa.Queue, thread hsa.ThreadID, corr CorrelationID,
	p hsa.Packet, info DispatchInfo, pl plan, seq UserData, snap hsa.Snapshot, write hsa.WriteFunc) (ran uint64, ended bool, err error) {
	ts.beginLoop(w, act)
	defer ts.endLoop(w, &s.pol) // LCX-4: the override ends with the loop
	fixed := pl.passes > 0
	total := pl.passes // PC-5: 0 for an indefinite loop
	passUD := seq
	// The pass's one packet, written from here each pass: the runtimes
	// run what is written before write returns and keep nothing of it.
	one := make([]hsa.Packet, 1)
	restorer := s.newRestorer(thread)
	// The pass's payload and services, made anew in place every pass: a
	// tool sees them only while its callbacks and records run, within the
	// pass (a fresh allocation a pass cost two or three).
	payload := new(KernelReplayData)
	svc := new(submission)
	for pass := uint64(0); ; pass++ {
		if pass > 0 && !s.pol.skipRestore {
			// MEM-2: every later pass starts from the snapshot.
			if err := s.restore(snap, restorer, info.DispatchID, pass); err != nil {
				return pass, false, err
			}
		}
		if !s.pol.userDataNotReseeded {
			passUD = seq // UD-2: every pass starts from the CONFIG value
		}
		passCorr := corr // COR-1: the dispatch's correlation in every pass
		if s.pol.correlationPerPass && pass > 0 {
			passCorr.Internal = s.correlationIDs.Add(1) // COR-1 broken
		}
		if s.pol.dispatchIDPerPass && pass > 0 { // DID-1..3 broken
			info = s.reserveDispatch(q, thread, p)
		}
		*payload = KernelReplayData{Size: payloadSize, DispatchInfo: info, CurrentPass: pass, TotalPasses: total,
			ReplayStartContext: ts.start, ReplayStopContext: ts.stop}
		// CB-2; LCX-2: local toggles are legal only inside PASS ENTER.
		ts.setPassEnter(true)
		s.callback(sub, thread, passCorr, OpPass, PhaseEnter, payload, &passUD)
		ts.setPassEnter(false)
		if err := s.gone(ts); err != nil {
			return pass, false, err
		}

		// One pass: the application's completion left out (CMP-2).
		pass1 := p
		if !s.pol.completionEveryPass { // CMP-1, CMP-2 broken when planted
			pass1.Completion = nil
		}
		recCorr := passCorr
		recCorr.External.Value = s.externalCorrelation(act, thread, info, passCorr.Internal) // COR-3: asked every pass
		s.prepareInto(svc, act, ts, thread, info, recCorr)
		pass1.Tag, pass1.Profile = info.DispatchID, svc.profile
		one[0] = pass1
		if err := write(thread, one); err != nil {
			return pass, false, err
		}
		if svc.profile != nil {
			svc.deliver(thread, info, recCorr, svc.profile.Start, svc.profile.End) // CB-4: inside the pass; DID-4
			if err := s.gone(ts); err != nil {
				return pass, false, err
			}
		}

		last := fixed && pass+1 >= pl.passes
		s.callback(sub, thread, passCorr, OpPass, PhaseExit, payload, &passUD) // CB-2, CONT-4
		if err := s.gone(ts); err != nil {
			return pass, false, err
		}
		// CONT-1: consulted after the pass and its EXIT. CONT-2: a fixed
		// loop never asks after its last pass. CONT-3: an indefinite loop
		// asks every time. (An if chain, as in decide.)
		if last {
			if s.pol.continueAfterLastPass && pl.continueFn != nil {
				pl.continueFn(info, pass, total, passUD) // CONT-2 broken
			}
		} else if pl.continueFn != nil {
			if pl.continueFn(info, pass, total, passUD) == 0 {
				last = true // PC-4: continue can end a fixed loop early
			}
		}
		if last {
			if s.pol.restoreAfterLastPass {
				// MEM-3 broken: memory ends as before the dispatch.
				if err := s.restore(snap, restorer, info.DispatchID, pass+1); err != nil {
					return pass + 1, false, err
				}
			}
			return pass + 1, true, nil // MEM-3: break before restore
		}
		if s.budgetSpent(pass + 1) {
			s.rec.EmitRef(&trace.Event{Type: trace.NeverEnded, Thread: uint64(thread), Dispatch: info.DispatchID, Pass: trace.U64(pass + 1),
				Message: fmt.Sprintf("the loop ran %d passes without ending; the application's completion is never fired", pass+1)})
			return pass + 1, false, ErrNeverEnded
		}
	}
}

func (s *SDK) budgetSpent(passes uint64) bool {
	if s.opts.MaxPasses > 0 && passes >= s.opts.MaxPasses {
		return true
	}
	return s.opts.Context.Err() != nil
}

// restore writes the snapshot back before pass (MEM-2), recorded where the
// runtime writes, as the snapshot is (decision 18.8). A restore that fails
// part-way is fatal: never a silent wrong result (MEM-5). The SDK claims no
// restore it did not finish; the runtime's own account shows the bytes it
// wrote before failing (docs/decisions.md 13).
func (s *SDK) restore(snap hsa.Snapshot, r *restorer, dispatch, pass uint64) error {
	r.dispatch, r.pass = dispatch, pass
	var err error
	if h, ok := snap.(hsa.RestoreHook); ok {
		_, err = h.RestoreWithHook(r.hook)
	} else {
		var n uint64
		if n, err = snap.Restore(); err == nil {
			r.hook(n)
		}
	}
	if err != nil {
		s.thread(r.thread).setAborted()
		return fmt.Errorf("%w: before pass %d of dispatch %d: %w", ErrRestoreFailed, pass, dispatch, err)
	}
	return nil
}

// restorer records a loop's restores: its hook is made once a loop, not
// once a pass (a closure per restore escaped to the heap), and reads the
// dispatch and pass restore sets before each.
type restorer struct {
	thread         hsa.ThreadID
	dispatch, pass uint64
	hook           func(bytes uint64)
}

func (s *SDK) newRestorer(thread hsa.ThreadID) *restorer {
	r := &restorer{thread: thread}
	r.hook = func(bytes uint64) {
		s.rec.EmitRef(&trace.Event{Type: trace.Restore, Thread: uint64(r.thread), Dispatch: r.dispatch, Pass: trace.U64(r.pass), Bytes: bytes})
	}
	return r
}

// gone says whether a restore failed part-way (MEM-5: the process aborts)
// in a window nested in this loop's, while one of its callbacks or records
// ran on the thread: the loop takes no further step, as the reference's
// abort stops it there. (Other threads' loops go on to their ends in this
// model; the oracles owe what they do after the death nothing, decision
// 17.19.)
func (s *SDK) gone(ts *threadState) error {
	if ts.isAborted() {
		return fmt.Errorf("%w: the process aborted while this loop waited in a callback", ErrRestoreFailed)
	}
	return nil
}

// callback delivers one KERNEL_REPLAY callback if the subscription covers
// the operation.
func (s *SDK) callback(sub *toolContext, thread hsa.ThreadID, corr CorrelationID, op Operation, ph Phase, payload *KernelReplayData, ud *UserData) {
	r := sub.replay
	if (op == OpConfig && !r.config) || (op == OpPass && !r.pass) {
		return
	}
	corr.External = UserData{} // external ids belong to submits (docs/trace.md)
	r.callback(CallbackRecord{Context: sub.id, Thread: thread, Correlation: corr, Kind: KindKernelReplay,
		Operation: op, Phase: ph, Payload: payload}, ud)
}
