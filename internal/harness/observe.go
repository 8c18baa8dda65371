package harness

import (
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/trace"
)

// How what a tool observes becomes trace events, for every tool that drives
// the engine: the spec's own and rocprofv3's.

// PayloadMembers names the payload members that are non-zero (API-5, API-6).
// Every callback records it twice, so the list for each of the 256 sets
// is made once and shared (read-only, as every event field is).
func PayloadMembers(p *replay.KernelReplayData) []string {
	mask := bit(p.Size != 0, 0) | bit(p.DispatchInfo.DispatchID != 0, 1) | bit(p.CurrentPass != 0, 2) |
		bit(p.TotalPasses != 0, 3) | bit(p.ReplayPassCount != nil, 4) | bit(p.ReplayContinue != nil, 5) |
		bit(p.ReplayStartContext != nil, 6) | bit(p.ReplayStopContext != nil, 7)
	return memberLists[mask]
}

// bit is 1<<i when on, else 0: the bit of payloadMembers[i].
func bit(on bool, i uint) int {
	if on {
		return 1 << i
	}
	return 0
}

// payloadMembers are the members in the reference's order (docs/trace.md).
var payloadMembers = [...]string{trace.MemberSize, trace.MemberDispatchInfo, trace.MemberCurrentPass, trace.MemberTotalPasses,
	trace.MemberReplayPassCount, trace.MemberReplayContinue, trace.MemberReplayStartContext, trace.MemberReplayStopContext}

// memberLists[mask] lists the members whose bits mask sets; nil for none.
var memberLists = func() (out [1 << len(payloadMembers)][]string) {
	for mask := range out {
		for i, name := range payloadMembers {
			if mask&(1<<i) != 0 {
				out[mask] = append(out[mask], name)
			}
		}
	}
	return out
}()

// DispatchInfo is the payload's dispatch_info as traces write it. The
// callbacks of one dispatch carry the same one, so consecutive equal values
// share a pointer.
func DispatchInfo(d replay.DispatchInfo) *trace.DispatchInfo {
	dim := func(v hsa.Dim3) trace.Dim3 { return trace.Dim3{v.X, v.Y, v.Z} }
	v := trace.DispatchInfo{Size: d.Size, KernelID: d.KernelID, PrivateSegment: d.PrivateSegmentSize,
		GroupSegment: d.GroupSegmentSize, Workgroup: dim(d.WorkgroupSize), Grid: dim(d.GridSize)}
	// Field by field: == on the whole struct calls the runtime's compare.
	if p := lastInfo.last.Load(); p != nil && p.Size == v.Size && p.KernelID == v.KernelID &&
		p.PrivateSegment == v.PrivateSegment && p.GroupSegment == v.GroupSegment && p.Workgroup == v.Workgroup && p.Grid == v.Grid {
		return p
	}
	return lastInfo.keep(v)
}

// Corr is a correlation id triple as traces write it; consecutive equal
// triples share a pointer, as DispatchInfo's do.
func Corr(c replay.CorrelationID) *trace.Corr {
	v := trace.Corr{Internal: c.Internal, External: c.External.Value, Ancestor: c.Ancestor}
	if p := lastCorr.last.Load(); p != nil && *p == v {
		return p
	}
	return lastCorr.keep(v)
}

// PassOf is a pass index as events carry it (trace.U64): past trace.U64's
// shared small values, consecutive equal passes share a pointer, as
// DispatchInfo's do, so that a long loop's callbacks, records and
// continue answers of one pass allocate it once, not once each.
func PassOf(v uint64) *uint64 {
	if v < smallPasses {
		return trace.U64(v)
	}
	if p := lastPass.last.Load(); p != nil && *p == v {
		return p
	}
	return lastPass.keep(v)
}

// smallPasses: trace.U64 hands out shared pointers below this
// (trace/event.go); were it to change, only allocations would.
const smallPasses = 1024

var (
	lastInfo shared[trace.DispatchInfo]
	lastCorr shared[trace.Corr]
	lastPass shared[uint64]
)

// shared holds the pointer handed out last: a caller hands it out again
// when it points to the same value, else a new one (keep). Events only
// ever read what their pointers point to, so sharing is invisible but for
// the allocations it saves. The last pointer is an atomic one, not a
// mutex's: a callback shares two or three values, and a load costs nothing
// where a lock's round trip did; two threads that race to replace it each
// keep their own (an allocation more, never a wrong value: a pointer is
// stored only once it is filled). The callers compare, each its own type:
// == on a type parameter calls the runtime's comparison, a third of what
// sharing cost.
type shared[T any] struct {
	last atomic.Pointer[T]
}

// keep hands out a new pointer to v, shared from now on.
func (s *shared[T]) keep(v T) *T {
	p := new(T) // not &v, which would allocate on every call
	*p = v
	s.last.Store(p)
	return p
}

// RecordEvent is a service record as the tool received it on thread; pass
// is the pass index the tool had published there (nil: none).
func RecordEvent(r replay.Record, thread hsa.ThreadID, pass *uint64) trace.Event {
	var e trace.Event
	recordEvent(&e, &r, thread, pass)
	return e
}

// recordEvent fills e, a zero event, as RecordEvent says. Field by field
// into the caller's event: a literal of the 704-byte event was built aside
// and copied twice more on the way (a third of the tool's record callback).
func recordEvent(e *trace.Event, r *replay.Record, thread hsa.ThreadID, pass *uint64) {
	e.Type, e.Service, e.Context, e.Thread = trace.Record, r.Service.Trace(), uint64(r.Context), uint64(thread)
	e.Dispatch, e.Agent, e.Kernel = r.Dispatch.DispatchID, uint64(r.Dispatch.AgentID), r.Dispatch.KernelName
	e.Corr, e.Start, e.End, e.Pass = Corr(r.Correlation), r.Start, r.End, pass
	for _, c := range r.Counters {
		e.Counters = append(e.Counters, trace.Counter{Name: c.Name, Value: c.Value})
	}
}
