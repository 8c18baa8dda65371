package harness

import (
	"github.com/replayspec/replayspec/internal/hsa"
	"github.com/replayspec/replayspec/internal/replay"
	"github.com/replayspec/replayspec/trace"
)

// How what a tool observes becomes trace events, for every tool that drives
// the engine: the spec's own and rocprofv3's.

// PayloadMembers names the payload members that are non-zero (API-5, API-6).
func PayloadMembers(p *replay.KernelReplayData) []string {
	var f []string
	add := func(set bool, name string) {
		if set {
			f = append(f, name)
		}
	}
	add(p.Size != 0, trace.MemberSize)
	add(p.DispatchInfo.DispatchID != 0, trace.MemberDispatchInfo)
	add(p.CurrentPass != 0, trace.MemberCurrentPass)
	add(p.TotalPasses != 0, trace.MemberTotalPasses)
	add(p.ReplayPassCount != nil, trace.MemberReplayPassCount)
	add(p.ReplayContinue != nil, trace.MemberReplayContinue)
	add(p.ReplayStartContext != nil, trace.MemberReplayStartContext)
	add(p.ReplayStopContext != nil, trace.MemberReplayStopContext)
	return f
}

// DispatchInfo is the payload's dispatch_info as traces write it.
func DispatchInfo(d replay.DispatchInfo) *trace.DispatchInfo {
	dim := func(v hsa.Dim3) trace.Dim3 { return trace.Dim3{v.X, v.Y, v.Z} }
	return &trace.DispatchInfo{Size: d.Size, KernelID: d.KernelID, PrivateSegment: d.PrivateSegmentSize,
		GroupSegment: d.GroupSegmentSize, Workgroup: dim(d.WorkgroupSize), Grid: dim(d.GridSize)}
}

// Corr is a correlation id triple as traces write it.
func Corr(c replay.CorrelationID) *trace.Corr {
	return &trace.Corr{Internal: c.Internal, External: c.External.Value, Ancestor: c.Ancestor}
}

// RecordEvent is a service record as the tool received it on thread; pass
// is the pass index the tool had published there (nil: none).
func RecordEvent(r replay.Record, thread hsa.ThreadID, pass *uint64) trace.Event {
	e := trace.Event{Type: trace.Record, Service: r.Service.Trace(), Context: uint64(r.Context), Thread: uint64(thread),
		Dispatch: r.Dispatch.DispatchID, Agent: uint64(r.Dispatch.AgentID), Kernel: r.Dispatch.KernelName,
		Corr: Corr(r.Correlation), Start: r.Start, End: r.End, Pass: pass}
	for _, c := range r.Counters {
		e.Counters = append(e.Counters, trace.Counter{Name: c.Name, Value: c.Value})
	}
	return e
}
