package replay

import (
	"sync"

	"github.com/replayspec/replayspec/hsa"
)

// Planted faults in what passes between the SDK and the tool: the payload
// and user data the KERNEL_REPLAY callback is handed, the callbacks it is
// (not) handed, the replay_pass_count and replay_continue it sets, and the
// external correlation callback. Each is a wrapper around the tool's
// function, installed only when its fault is planted, so the loop itself
// delivers every callback as the rules say and pays nothing otherwise.
// The SDK hands every KERNEL_REPLAY callback a payload (callback in
// loop.go): the wrappers do not look for a missing one.

// toolFaults wraps the tool's KERNEL_REPLAY callback, in this order: a
// later wrapper sees the call before an earlier one does.
var toolFaults = []struct {
	fault Fault
	wrap  func(TracingCallback) TracingCallback
}{
	{FaultPayloadSizeShort, payloadSizeShort},
	{FaultDispatchInfoGrid, dispatchInfoGrid},
	{FaultPassFieldsInConfig, passFieldsInConfig},
	{FaultIndefiniteTotalNonZero, indefiniteTotalNonZero},
	{FaultUserDataWriteLost, userDataWriteLost},
	{FaultSkipLastPassExit, skipLastPassExit},
	{FaultPassCountCalledTwice, passCountCalledTwice},
	{FaultIgnoreContinue, ignoreContinue},
}

// faultyTool wraps cb in the wrapper of every planted tool fault; with none
// planted it is cb itself.
func faultyTool(cb TracingCallback, fs Faults) TracingCallback {
	for _, t := range toolFaults {
		if fs.Has(t.fault) {
			cb = t.wrap(cb)
		}
	}
	return cb
}

// payloadSizeShort: the payload says it is 104 bytes (API-5 broken).
func payloadSizeShort(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		rec.Payload.Size = payloadSize - 24 // the members' sizes summed without dispatch_info's
		cb(rec, ud)
	}
}

// dispatchInfoGrid: dispatch_info shows twice the grid launched (API-5
// broken).
func dispatchInfoGrid(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		rec.Payload.DispatchInfo.GridSize.X *= 2
		cb(rec, ud)
	}
}

// passFieldsInConfig: CONFIG payloads carry current_pass and total_passes 1
// (API-6 broken).
func passFieldsInConfig(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		if rec.Operation == OpConfig {
			rec.Payload.CurrentPass, rec.Payload.TotalPasses = 1, 1
		}
		cb(rec, ud)
	}
}

// indefiniteTotalNonZero: a PASS of an indefinite loop (total_passes 0,
// PC-5) shows total_passes = pass+1 (PC-5 broken). The payload is the
// loop's again once the tool returns.
func indefiniteTotalNonZero(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		p := rec.Payload
		if rec.Operation != OpPass || p.TotalPasses != 0 {
			cb(rec, ud)
			return
		}
		p.TotalPasses = p.CurrentPass + 1
		cb(rec, ud)
		p.TotalPasses = 0
	}
}

// userDataWriteLost: what the tool writes to user data in PASS ENTER is
// lost: its EXIT and replay_continue see what ENTER was handed (UD-2
// broken).
func userDataWriteLost(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		if rec.Operation == OpPass && rec.Phase == PhaseEnter {
			lost := *ud
			ud = &lost
		}
		cb(rec, ud)
	}
}

// skipLastPassExit: the last pass of a fixed loop gets no PASS EXIT (CB-2,
// CONT-4 broken). A fixed loop's payload carries its pass count (PC-5).
func skipLastPassExit(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		p := rec.Payload
		if rec.Operation == OpPass && rec.Phase == PhaseExit && p.TotalPasses > 0 && p.CurrentPass+1 >= p.TotalPasses {
			return
		}
		cb(rec, ud)
	}
}

// passCountCalledTwice: the replay_pass_count the tool sets in CONFIG ENTER
// is called twice whenever the SDK calls it once (CB-3 broken).
func passCountCalledTwice(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		cb(rec, ud)
		if p := rec.Payload; rec.Operation == OpConfig && rec.Phase == PhaseEnter && p.ReplayPassCount != nil {
			count := p.ReplayPassCount
			p.ReplayPassCount = func(info DispatchInfo, ud UserData) uint64 {
				count(info, ud)
				return count(info, ud)
			}
		}
	}
}

// ignoreContinue: the replay_continue the tool sets in CONFIG ENTER cannot
// end a fixed loop (total_passes > 0) early: its 0 reads as 1 (PC-4
// broken).
func ignoreContinue(cb TracingCallback) TracingCallback {
	return func(rec CallbackRecord, ud *UserData) {
		cb(rec, ud)
		if p := rec.Payload; rec.Operation == OpConfig && rec.Phase == PhaseEnter && p.ReplayContinue != nil {
			cont := p.ReplayContinue
			p.ReplayContinue = func(info DispatchInfo, pass, total uint64, ud UserData) int {
				if r := cont(info, pass, total, ud); r != 0 || total == 0 {
					return r
				}
				return 1
			}
		}
	}
}

// faultyExternalCorrelation wraps the tool's external correlation callback:
// with external_correlation_reused planted it is asked once per dispatch,
// and every later pass of a replayed dispatch reuses its first answer
// (COR-3 broken). Dispatch ids are unique (DID-3), so a dispatch id asked
// again is a later pass of the same loop.
func faultyExternalCorrelation(fn ExternalCorrelationFunc, fs Faults) ExternalCorrelationFunc {
	if !fs.Has(FaultExternalCorrelationReused) {
		return fn
	}
	var mu sync.Mutex
	asked := map[uint64]uint64{} // dispatch id -> the tool's answer
	return func(thread hsa.ThreadID, info DispatchInfo, internal uint64) uint64 {
		mu.Lock()
		id, ok := asked[info.DispatchID]
		mu.Unlock()
		if ok {
			return id
		}
		id = fn(thread, info, internal)
		mu.Lock()
		asked[info.DispatchID] = id
		mu.Unlock()
		return id
	}
}
