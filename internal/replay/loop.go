package replay

import (
	"fmt"

	"github.com/replayspec/replayspec/internal/hsa"
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
	if s.opts.Faults.Has(FaultPassCountCalledTwice) {
		n = payload.ReplayPassCount(info, seq)
	}
	cont := payload.ReplayContinue
	switch {
	case n == 1 && !s.opts.Faults.Has(FaultReplaySinglePass):
		return plan{} // PC-2: one pass needs no snapshot
	case n == 0 && cont == nil:
		// PC-6: rejected with a warning (once per process).
		s.warn(trace.WarnPassCountZeroWithoutContinue, info.DispatchID, "")
		if s.opts.Faults.Has(FaultReplayZeroWithoutContinue) {
			return plan{replay: true, passes: 2}
		}
		return plan{}
	}
	return plan{replay: true, passes: n, continueFn: cont} // PC-3, PC-4, PC-5
}

// dispatch handles one single-packet kernel dispatch while some context is
// started: the replay window of the reference's write interceptor.
func (s *SDK) dispatch(act *activeSet, q hsa.Queue, thread hsa.ThreadID, p hsa.Packet, write hsa.WriteFunc) error {
	ts := s.thread(thread)
	info := s.reserveDispatch(q, thread, p) // DID-1: before CONFIG
	corr := s.correlation(ts)               // COR-1: captured once
	if act.replay == nil {
		return s.runOnce(act, ts, q, thread, p, info, corr, write)
	}
	sub := act.replay
	var seq UserData // UD-1: one value for the whole sequence
	cfg := &KernelReplayData{Size: payloadSize, DispatchInfo: info}
	if s.opts.Faults.Has(FaultPassFieldsInConfig) {
		cfg.CurrentPass, cfg.TotalPasses = 1, 1
	}
	s.callback(sub, thread, corr, OpConfig, PhaseEnter, cfg, &seq) // CB-1
	pl := s.decide(cfg, info, seq)
	if !pl.replay {
		if s.opts.Faults.Has(FaultSnapshotWhenNotReplayed) || s.opts.Faults.Has(FaultSnapshotSilently) {
			if snap, err := s.rt.Snapshot(thread, info.AgentID, s.tracker.regionsOf(info.AgentID)); err == nil {
				if !s.opts.Faults.Has(FaultSnapshotSilently) {
					s.rec.Emit(trace.Event{Type: trace.Snapshot, Thread: uint64(thread), Dispatch: info.DispatchID, Agent: uint64(info.AgentID), Bytes: snap.Bytes()})
				}
				snap.Release()
			}
		}
		s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq) // CB-1 (ref): EXIT right after ENTER
		return s.runOnce(act, ts, q, thread, p, info, corr, write)
	}
	lk := s.agentLocks.of(info.AgentID)
	locked := !s.opts.Faults.Has(FaultNoAgentLock)
	if locked {
		lk.Lock(thread) // MEM-6: the loop owns the agent
		ts.setOwns(info.AgentID)
	}
	unlock := func() {
		if locked {
			ts.setOwns(0)
			lk.Unlock(thread)
			locked = false
		}
	}
	defer unlock()
	snap, err := s.snapshot(q, thread, info)
	if err != nil {
		// MEM-5: warn (once) and run once without replay. The failed
		// snapshot itself is recorded every time, for the trace's readers.
		s.rec.Emit(trace.Event{Type: trace.Snapshot, Thread: uint64(thread), Dispatch: info.DispatchID,
			Agent: uint64(info.AgentID), Status: StatusError.Trace(), Message: err.Error()})
		s.warn(trace.WarnSnapshotIncomplete, info.DispatchID, err.Error())
		unlock()
		s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq)
		return s.runOnce(act, ts, q, thread, p, info, corr, write)
	}
	defer snap.Release()
	ended, err := s.loop(act, ts, sub, q, thread, corr, p, info, pl, seq, snap, write)
	if err != nil || !ended {
		return err
	}
	early := s.opts.Faults.Has(FaultCompletionBeforeConfigExit)
	if early {
		if err := fire(thread, p, write); err != nil {
			return err
		}
	}
	s.callback(sub, thread, corr, OpConfig, PhaseExit, cfg, &seq) // CB-1 (ref): closes the window
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
// device memory (MEM-1, MEM-4).
func (s *SDK) snapshot(q hsa.Queue, thread hsa.ThreadID, info DispatchInfo) (hsa.Snapshot, error) {
	if err := q.Drain(); err != nil {
		return nil, err
	}
	if err := s.rt.DrainAgent(info.AgentID); err != nil {
		return nil, err
	}
	regions := s.tracker.regionsOf(info.AgentID)
	snap, err := s.rt.Snapshot(thread, info.AgentID, regions)
	if err != nil {
		return nil, err
	}
	s.rec.Emit(trace.Event{Type: trace.Snapshot, Thread: uint64(thread), Dispatch: info.DispatchID,
		Agent: uint64(info.AgentID), Bytes: snap.Bytes(), Regions: regionsOf(regions)})
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

// loop runs the passes. It reports whether the loop ended; a loop that
// spends the caller's budget is reported as never-ended (CMP-4) and its
// completion is not fired.
func (s *SDK) loop(act *activeSet, ts *threadState, sub *toolContext, q hsa.Queue, thread hsa.ThreadID, corr CorrelationID,
	p hsa.Packet, info DispatchInfo, pl plan, seq UserData, snap hsa.Snapshot, write hsa.WriteFunc) (bool, error) {
	faults := s.opts.Faults
	ts.beginLoop(act)
	defer ts.endLoop(faults.Has(FaultLocalToggleLeaks))
	fixed := pl.passes > 0
	total := pl.passes // PC-5: 0 for an indefinite loop
	passUD := seq
	var firstStart, firstEnd, extern uint64
	for pass := uint64(0); ; pass++ {
		if pass > 0 && !faults.Has(FaultSkipRestore) {
			if err := s.restore(snap, thread, info.DispatchID, pass); err != nil {
				return false, err
			}
		}
		if !faults.Has(FaultUserDataNotReseeded) {
			passUD = seq // UD-2: every pass starts from the CONFIG value
		}
		passCorr := corr
		if faults.Has(FaultCorrelationPerPass) && pass > 0 {
			passCorr.Internal = s.correlationIDs.Add(1)
		}
		if faults.Has(FaultDispatchIDPerPass) && pass > 0 {
			info = s.reserveDispatch(q, thread, p)
		}
		payload := &KernelReplayData{Size: payloadSize, DispatchInfo: info, CurrentPass: pass, TotalPasses: total,
			ReplayStartContext: ts.start, ReplayStopContext: ts.stop}
		if !fixed && faults.Has(FaultIndefiniteTotalNonZero) {
			payload.TotalPasses = pass + 1
		}
		ts.setPassEnter(true)
		s.callback(sub, thread, passCorr, OpPass, PhaseEnter, payload, &passUD) // CB-2
		ts.setPassEnter(false)

		// One pass: the application's completion left out (CMP-2).
		pass1 := p
		pass1.Completion = nil
		if faults.Has(FaultCompletionEveryPass) {
			pass1.Completion = p.Completion
		}
		if !faults.Has(FaultExternalCorrelationReused) || pass == 0 {
			extern = s.externalCorrelation(act, thread, info, passCorr.Internal)
		}
		recCorr := passCorr
		recCorr.External.Value = extern
		svc := s.prepare(act, ts, thread, info, recCorr)
		pass1.Tag, pass1.Profile = info.DispatchID, svc.profile
		if err := write(thread, []hsa.Packet{pass1}); err != nil {
			return false, err
		}
		if svc.profile != nil {
			start, end := svc.profile.Start, svc.profile.End
			if faults.Has(FaultReuseFirstPassTimestamps) {
				if pass == 0 {
					firstStart, firstEnd = start, end
				}
				start, end = firstStart, firstEnd
			}
			svc.deliver(thread, info, recCorr, start, end) // CB-4: inside the pass
		}

		last := fixed && pass+1 >= pl.passes
		if faults.Has(FaultUserDataWriteLost) {
			passUD = seq // what the tool wrote in PASS ENTER never reaches its EXIT
		}
		if !(last && faults.Has(FaultSkipLastPassExit)) {
			s.callback(sub, thread, passCorr, OpPass, PhaseExit, payload, &passUD) // CONT-4
		}
		// CONT-1: consulted after the pass and its EXIT. CONT-2: a fixed
		// loop never asks after its last pass. CONT-3: an indefinite loop
		// asks every time.
		switch {
		case last:
			if faults.Has(FaultContinueAfterLastPass) && pl.continueFn != nil {
				pl.continueFn(info, pass, total, passUD)
			}
		case pl.continueFn != nil:
			if pl.continueFn(info, pass, total, passUD) == 0 && !(fixed && faults.Has(FaultIgnoreContinue)) {
				last = true // PC-4: continue can end a fixed loop early
			}
		}
		if last {
			if faults.Has(FaultRestoreAfterLastPass) {
				if err := s.restore(snap, thread, info.DispatchID, pass+1); err != nil {
					return false, err
				}
			}
			return true, nil // MEM-3: break before restore
		}
		if s.budgetSpent(pass + 1) {
			s.rec.Emit(trace.Event{Type: trace.NeverEnded, Thread: uint64(thread), Dispatch: info.DispatchID, Pass: trace.U64(pass + 1),
				Message: fmt.Sprintf("the loop ran %d passes without ending; the application's completion is never fired", pass+1)})
			return false, ErrNeverEnded
		}
	}
}

func (s *SDK) budgetSpent(passes uint64) bool {
	if s.opts.MaxPasses > 0 && passes >= s.opts.MaxPasses {
		return true
	}
	return s.opts.Context.Err() != nil
}

// restore writes the snapshot back before pass (MEM-2). A restore that
// fails part-way is fatal: never a silent wrong result (MEM-5). The SDK
// claims no restore it did not finish; the runtime's own account shows the
// bytes it wrote before failing (docs/decisions.md 13).
func (s *SDK) restore(snap hsa.Snapshot, thread hsa.ThreadID, dispatch, pass uint64) error {
	n, err := snap.Restore()
	if err != nil {
		return fmt.Errorf("%w: before pass %d of dispatch %d: %w", ErrRestoreFailed, pass, dispatch, err)
	}
	s.rec.Emit(trace.Event{Type: trace.Restore, Thread: uint64(thread), Dispatch: dispatch, Pass: trace.U64(pass), Bytes: n})
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
	ts := s.thread(thread)
	ts.enterCallback()
	defer ts.exitCallback()
	r.callback(CallbackRecord{Context: sub.id, Thread: thread, Correlation: corr, Kind: KindKernelReplay,
		Operation: op, Phase: ph, Payload: payload}, ud)
}
