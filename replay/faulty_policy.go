package replay

import (
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// policy holds the planted faults that are the SDK itself deciding
// otherwise: a step of the loop taken, skipped or taken twice, which no
// wrapper around a collaborator could make happen (faulty.go and
// faulty_tool.go hold those that can). It is read from the fault set once,
// in New; its zero value is the SDK the rules describe, so the rule code
// reads "the rule, unless this fault is planted" in one named field.
type policy struct {
	// decide: the pass-count table.
	replaySinglePass          bool // FaultReplaySinglePass: PC-2 broken
	replayZeroWithoutContinue bool // FaultReplayZeroWithoutContinue: PC-6 broken

	// dispatch: around the loop.
	snapshotNotReplayed        bool // FaultSnapshotWhenNotReplayed, FaultSnapshotSilently: MEM-1 broken
	snapshotSilently           bool // FaultSnapshotSilently: ... and not reported
	completionBeforeConfigExit bool // FaultCompletionBeforeConfigExit: CMP-2 broken

	// loop: the passes.
	skipRestore           bool // FaultSkipRestore: MEM-2, MEM-3 broken
	restoreAfterLastPass  bool // FaultRestoreAfterLastPass: MEM-3 broken
	userDataNotReseeded   bool // FaultUserDataNotReseeded: UD-2 broken
	correlationPerPass    bool // FaultCorrelationPerPass: COR-1 broken
	dispatchIDPerPass     bool // FaultDispatchIDPerPass: DID-1..3 broken
	completionEveryPass   bool // FaultCompletionEveryPass: CMP-1, CMP-2 broken
	continueAfterLastPass bool // FaultContinueAfterLastPass: CONT-2 broken
	localToggleLeaks      bool // FaultLocalToggleLeaks: LCX-4 broken
	localOverrideNextLoop bool // FaultLocalOverrideNextLoop: LCX-4 broken
	// FaultIndefiniteOnePassNoCompletion: CMP-1 broken.
	indefiniteOnePassNoCompletion bool

	// correlation ids of API calls.
	ancestorProcessWide bool // FaultAncestorProcessWide: COR-1, COR-2 broken

	// activation and the interceptor.
	activateUnstarted     bool // FaultActivateUnstarted: ACT-3 broken
	activateWithoutConfig bool // FaultActivateWithoutConfig: ACT-3 broken
	replayMultiPacket     bool // FaultReplayMultiPacket: ACT-6 broken
	warnEveryTime         bool // FaultWarnEveryTime: PC-6, ACT-6 broken
	warnOncePerThread     bool // FaultWarnOncePerThread: ACT-6 broken
	barrierEndsSubmission bool // FaultBarrierEndsSubmission: DID-1..3 broken

	// the tool's own dispatches inside a window (MEM-6, clarified).
	toolDispatchNotCandidate bool // FaultToolDispatchNotCandidate: no CONFIG for it
	replayReentrant          bool // FaultReplayReentrant: replayed on its own window's agent
	declineNested            bool // FaultDeclineNested: declined on another agent too
	waitOnOwnWindow          bool // FaultWaitOnOwnWindow: waits for the lock its thread holds

	// local toggles and the services they mask.
	localToggleAnywhere          bool // FaultLocalToggleAnywhere: LCX-2 broken
	localStartNotStartedAllowed  bool // FaultLocalStartNotStartedAllowed: LCX-7 broken
	agentWideServicesHonourStops bool // FaultPCSamplingHonoursStop: SVC-2 broken
	pcSamplingHonoursStopOnMI    bool // FaultPCSamplingHonoursStopOnMI: SVC-2 broken
	localOverridePerProcess      bool // FaultLocalOverridePerProcess: LCX-6, LCX-3 broken
	localStartIgnored            bool // FaultLocalStartIgnored: SVC-1, LCX-3 broken
	toolDispatchMasked           bool // FaultToolDispatchMasked: LCX-6 broken
}

func policyOf(fs Faults) policy {
	return policy{
		replaySinglePass:          fs.Has(FaultReplaySinglePass),
		replayZeroWithoutContinue: fs.Has(FaultReplayZeroWithoutContinue),

		snapshotNotReplayed:        fs.Has(FaultSnapshotWhenNotReplayed) || fs.Has(FaultSnapshotSilently),
		snapshotSilently:           fs.Has(FaultSnapshotSilently),
		completionBeforeConfigExit: fs.Has(FaultCompletionBeforeConfigExit),

		skipRestore:           fs.Has(FaultSkipRestore),
		restoreAfterLastPass:  fs.Has(FaultRestoreAfterLastPass),
		userDataNotReseeded:   fs.Has(FaultUserDataNotReseeded),
		correlationPerPass:    fs.Has(FaultCorrelationPerPass),
		dispatchIDPerPass:     fs.Has(FaultDispatchIDPerPass),
		completionEveryPass:   fs.Has(FaultCompletionEveryPass),
		continueAfterLastPass: fs.Has(FaultContinueAfterLastPass),
		localToggleLeaks:      fs.Has(FaultLocalToggleLeaks),
		localOverrideNextLoop: fs.Has(FaultLocalOverrideNextLoop),

		indefiniteOnePassNoCompletion: fs.Has(FaultIndefiniteOnePassNoCompletion),

		ancestorProcessWide: fs.Has(FaultAncestorProcessWide),

		activateUnstarted:     fs.Has(FaultActivateUnstarted),
		activateWithoutConfig: fs.Has(FaultActivateWithoutConfig),
		replayMultiPacket:     fs.Has(FaultReplayMultiPacket),
		warnEveryTime:         fs.Has(FaultWarnEveryTime),
		warnOncePerThread:     fs.Has(FaultWarnOncePerThread),
		barrierEndsSubmission: fs.Has(FaultBarrierEndsSubmission),

		toolDispatchNotCandidate: fs.Has(FaultToolDispatchNotCandidate),
		replayReentrant:          fs.Has(FaultReplayReentrant),
		declineNested:            fs.Has(FaultDeclineNested),
		waitOnOwnWindow:          fs.Has(FaultWaitOnOwnWindow),

		localToggleAnywhere:          fs.Has(FaultLocalToggleAnywhere),
		localStartNotStartedAllowed:  fs.Has(FaultLocalStartNotStartedAllowed),
		agentWideServicesHonourStops: fs.Has(FaultPCSamplingHonoursStop),
		pcSamplingHonoursStopOnMI:    fs.Has(FaultPCSamplingHonoursStopOnMI),
		localOverridePerProcess:      fs.Has(FaultLocalOverridePerProcess),
		localStartIgnored:            fs.Has(FaultLocalStartIgnored),
		toolDispatchMasked:           fs.Has(FaultToolDispatchMasked),
	}
}

// snapshotNotReplayed is what the faults snapshot_when_not_replayed and
// snapshot_silently do to a dispatch the tool did not ask to replay: save
// its agent's memory anyway (MEM-1 broken), reported or not.
func (s *SDK) snapshotNotReplayed(thread hsa.ThreadID, info DispatchInfo) {
	snap, err := s.rt.Snapshot(thread, info.AgentID, s.tracker.regionsOf(info.AgentID))
	if err != nil {
		return
	}
	if !s.pol.snapshotSilently {
		s.rec.EmitRef(&trace.Event{Type: trace.Snapshot, Thread: uint64(thread), Dispatch: info.DispatchID, Agent: uint64(info.AgentID), Bytes: snap.Bytes()})
	}
	snap.Release()
}

// sharedOverride is the one override of local_override_per_process: what
// the rules keep per thread and per loop (LCX-6), kept for the whole
// process, so that every thread's loop reads the last local call of any.
type sharedOverride struct {
	mu      sync.Mutex
	enabled map[ContextID]bool
}

func (o *sharedOverride) set(ctx ContextID, on bool) {
	o.mu.Lock()
	o.enabled[ctx] = on
	o.mu.Unlock()
}

func (o *sharedOverride) clear() {
	o.mu.Lock()
	o.enabled = map[ContextID]bool{}
	o.mu.Unlock()
}

func (o *sharedOverride) get(ctx ContextID) (on, set bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	on, set = o.enabled[ctx]
	return on, set
}

// policyFor is the policy prepare applies on agent: with
// pc_sampling_honours_stop_on_mi planted, agent-wide services obey local
// stops on MI2xx/MI3xx agents (SVC-2 broken there only).
func (s *SDK) policyFor(agent hsa.AgentID) *policy {
	if !s.pol.pcSamplingHonoursStopOnMI || !s.agents[agent].Family.DataCenter() {
		return &s.pol
	}
	p := s.pol
	p.agentWideServicesHonourStops = true
	return &p
}
