// Package trace defines the trace: one ordered stream of events that a run
// of a spec produces. It is the contract between targets (ours or a port's),
// the rule oracles, the goldens and the reports. docs/trace.md documents it.
package trace

import "slices"

// Version is written in the header line of every NDJSON trace. Bump it on
// any change a reader could notice (docs/trace.md, "Changes from v2").
// v3 names its digests' algorithm in the header; Read still reads v2.
const Version = "replayspec.trace/v3"

// v2 is the schema before: the same events, digests always FNV-1a.
const v2 = "replayspec.trace/v2"

// Type is what an event records.
type Type string

// Event types. Who emits each is part of the contract (docs/trace.md):
// "tool" events are what the tool saw or did (the memory it copied and the
// agents it queried included), "runtime" events are what the GPU runtime
// did, "sdk" events are what the SDK declared, "app" events are what the
// application observed (its completion signal and what the process printed
// on stderr included).
const (
	// tool
	API         Type = "api"             // an SDK API call by the tool and its status
	Callback    Type = "callback"        // a KERNEL_REPLAY callback received by the tool
	Returned    Type = "callback_return" // the tool returned from that callback
	PassCount   Type = "pass_count"      // replay_pass_count called; Result is its answer
	Continue    Type = "continue"        // replay_continue called; Result is its answer
	Local       Type = "local"           // replay_start_context/replay_stop_context called
	Record      Type = "record"          // a service record delivered to the tool
	Correlation Type = "correlation"     // the external correlation callback called on a submit
	// A dispatch the tool wrote from inside a replay callback, and the
	// return of its wait for it: the events between belong to it.
	ToolDispatch Type = "tool_dispatch"
	ToolComplete Type = "tool_complete"
	// ToolMemory is one buffer of the application as the tool copied it
	// from inside a PASS callback: the memory a pass starts from (ENTER)
	// and leaves (EXIT), MEM-2, MEM-3, MEM-4.
	ToolMemory Type = "tool_memory"
	// ToolSignal is the value the tool loaded, from inside a callback,
	// from the completion signal of the application's dispatch: held back
	// until the loop has ended (CMP-2).
	ToolSignal Type = "tool_signal"
	// AgentInfo is an agent of the machine as the tool's query of the
	// agents lists it, before anything runs.
	AgentInfo Type = "agent"
	// An API call's enter or exit on its thread, with the correlation id
	// the SDK gave it, as the tool's API tracing saw it: the witness a
	// dispatch's correlation ids are judged against (COR-1, COR-2).
	APICall Type = "api_call"

	// sdk
	DispatchID Type = "dispatch_id" // a dispatch id reserved (the counter advanced)
	Snapshot   Type = "snapshot"    // the SDK says it saved device memory
	Restore    Type = "restore"     // the SDK says it wrote memory back before a pass
	NeverEnded Type = "never_ended" // the pass budget ran out in an indefinite loop

	// runtime
	Kernel   Type = "kernel"    // a kernel ran on the GPU
	Signal   Type = "signal"    // a signal was decremented
	MemRead  Type = "mem_read"  // device memory read outside a kernel (a copy out)
	MemWrite Type = "mem_write" // device memory written outside a kernel (a copy in)

	// app
	AppAlloc    Type = "app_alloc"    // the application allocated a buffer
	AppFree     Type = "app_free"     // the application freed a buffer
	AppDispatch Type = "app_dispatch" // the application wrote a dispatch
	AppComplete Type = "app_complete" // the application's wait for completion returned
	AppReadback Type = "app_readback" // the application read one of a dispatch's buffers after completion
	AppMemory   Type = "app_memory"   // the application read a buffer back at the end
	AppTimeout  Type = "app_timeout"  // the application gave up waiting (never completed)
	// AppSignal is the value the application loaded from its completion
	// signal once its wait returned or gave up (CMP-1, CMP-4).
	AppSignal Type = "app_signal"
	// Warning is a diagnostic the SDK printed on the process's stderr, as
	// whoever runs the application reads it (PC-6, ACT-6, MEM-5, SVC-3).
	Warning Type = "warning"
)

// sources maps every event type to who reports it.
var sources = map[Type]Source{
	API: SourceTool, Callback: SourceTool, Returned: SourceTool, PassCount: SourceTool, Continue: SourceTool,
	Local: SourceTool, Record: SourceTool, Correlation: SourceTool, ToolDispatch: SourceTool, ToolComplete: SourceTool, APICall: SourceTool,
	ToolMemory: SourceTool, ToolSignal: SourceTool, AgentInfo: SourceTool,
	DispatchID: SourceSDK, Snapshot: SourceSDK, Restore: SourceSDK, NeverEnded: SourceSDK,
	Kernel: SourceRuntime, Signal: SourceRuntime, MemRead: SourceRuntime, MemWrite: SourceRuntime,
	AppAlloc: SourceApp, AppFree: SourceApp, AppDispatch: SourceApp, AppComplete: SourceApp,
	AppReadback: SourceApp, AppMemory: SourceApp, AppTimeout: SourceApp, AppSignal: SourceApp, Warning: SourceApp,
}

// Source returns who reports events of type t, and whether t is a type of
// this version.
func (t Type) Source() (Source, bool) {
	s, ok := sources[t]
	return s, ok
}

// Types lists every event type of this version, in a fixed order.
func Types() []Type {
	return []Type{API, Callback, Returned, PassCount, Continue, Local, Record, Correlation, ToolDispatch, ToolComplete, APICall,
		ToolMemory, ToolSignal, AgentInfo,
		DispatchID, Snapshot, Restore, NeverEnded,
		Kernel, Signal, MemRead, MemWrite,
		AppAlloc, AppFree, AppDispatch, AppComplete, AppReadback, AppMemory, AppTimeout, AppSignal, Warning}
}

// Corr is the correlation id triple of a callback or record.
type Corr struct {
	Internal uint64 `json:"internal"`
	External uint64 `json:"external"`
	Ancestor uint64 `json:"ancestor"`
}

// Counter is one counter value in a record.
type Counter struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// Dim3 is a grid or workgroup size, x y z.
type Dim3 [3]uint32

// DispatchInfo is what the payload's dispatch_info held beyond the ids the
// event carries at its top level (agent, queue, dispatch).
type DispatchInfo struct {
	Size           uint64 `json:"size"`
	KernelID       uint64 `json:"kernel_id"`
	PrivateSegment uint32 `json:"private_segment_size"`
	GroupSegment   uint32 `json:"group_segment_size"`
	Workgroup      Dim3   `json:"workgroup"`
	Grid           Dim3   `json:"grid"`
}

// Region is a range of memory.
type Region struct {
	Addr  uint64 `json:"addr"`
	Bytes uint64 `json:"bytes"`
}

// Run is Count consecutive 32-bit elements equal to Value: buffers are
// written run-length encoded, whole.
type Run struct {
	Value int64  `json:"value"`
	Count uint64 `json:"count"`
}

// Event is one line of a trace. Fields that do not apply to a type are left
// empty; numbers that may legitimately be zero are pointers so that "zero"
// and "absent" differ.
type Event struct {
	Seq  uint64 `json:"seq"`
	Type Type   `json:"type"`
	// Time is the runtime clock (ns) when the event happened; virtual on the
	// simulator.
	Time   uint64 `json:"time,omitempty"`
	Thread uint64 `json:"thread,omitempty"`

	// Where.
	Agent    uint64 `json:"agent,omitempty"`
	Queue    uint64 `json:"queue,omitempty"`
	Dispatch uint64 `json:"dispatch,omitempty"` // SDK dispatch id
	Kernel   string `json:"kernel,omitempty"`
	Family   Family `json:"family,omitempty"` // agent family
	Product  string `json:"product,omitempty"`
	Arch     string `json:"arch,omitempty"`
	Context  uint64 `json:"context,omitempty"`
	Label    string `json:"label,omitempty"`  // the spec's name for a dispatch, a context or an agent
	Buffer   string `json:"buffer,omitempty"` // the spec's name for a buffer

	// Replay callbacks and tool calls.
	Op    Op      `json:"op,omitempty"`
	Phase Phase   `json:"phase,omitempty"`
	Pass  *uint64 `json:"pass,omitempty"`
	Total *uint64 `json:"total,omitempty"`
	Corr  *Corr   `json:"corr,omitempty"`
	// UserData is the sequence's user data: as the tool received it
	// (callback, pass_count, continue), or as it left it (callback_return).
	UserData *uint64 `json:"user_data,omitempty"`
	Call     Call    `json:"call,omitempty"`   // API or local call name
	Result   *int64  `json:"result,omitempty"` // what a tool callback returned
	Status   Status  `json:"status,omitempty"` // status an SDK call returned
	// Payload names the payload members that were non-zero when the
	// callback began (callback) or when the tool returned
	// (callback_return); PayloadSize is the payload's size member; Info its
	// dispatch_info.
	Payload     []string      `json:"payload,omitempty"`
	PayloadSize *uint64       `json:"payload_size,omitempty"`
	Info        *DispatchInfo `json:"info,omitempty"`
	// A configure call's domain and operations (none: all); an operation
	// query's name and id (empty or absent: the SDK did not know it).
	Domain     Domain  `json:"domain,omitempty"`
	Operations []Op    `json:"operations,omitempty"`
	OpName     Op      `json:"op_name,omitempty"`
	OpID       *uint64 `json:"op_id,omitempty"`

	// Groups is the tool's own split of its counters into passes, on a
	// pass_count answered from the dispatch's agent: group i for pass i.
	Groups [][]string `json:"groups,omitempty"`

	// Records.
	Service  Service   `json:"service,omitempty"`
	Start    uint64    `json:"start,omitempty"`
	End      uint64    `json:"end,omitempty"`
	Counters []Counter `json:"counters,omitempty"`

	// Runtime and application.
	Signal  uint64 `json:"signal,omitempty"`
	Value   *int64 `json:"value,omitempty"`   // signal value after a decrement
	Packets int    `json:"packets,omitempty"` // packets in the application's submission
	// KernelPackets is how many of them are kernel dispatches, when more
	// than one: each is its own logical dispatch (ACT-6).
	KernelPackets int   `json:"kernel_packets,omitempty"`
	Graph         bool  `json:"graph,omitempty"` // the submission came from a graph launch
	Grid          *Dim3 `json:"grid,omitempty"`  // what the application launched
	Workgroup     *Dim3 `json:"workgroup,omitempty"`
	// Args names the buffers a dispatch's kernel takes, in argument order:
	// all it may write (app_dispatch, tool_dispatch).
	Args     []string `json:"args,omitempty"`
	Addr     uint64   `json:"addr,omitempty"`
	Bytes    uint64   `json:"bytes,omitempty"`
	MemKind  MemKind  `json:"mem_kind,omitempty"`
	Regions  []Region `json:"regions,omitempty"`
	MemIn    string   `json:"mem_in,omitempty"`  // digest of the kernel's saved buffers before it ran
	MemOut   string   `json:"mem_out,omitempty"` // digest after it ran
	Digest   string   `json:"digest,omitempty"`  // digest of a buffer the application read
	Elements uint64   `json:"elements,omitempty"`
	Runs     []Run    `json:"runs,omitempty"` // that buffer's elements, run-length encoded

	// Diagnostics.
	Code    WarningCode `json:"code,omitempty"` // stable warning code
	Message string      `json:"message,omitempty"`
}

// Header is the first line of an NDJSON trace.
type Header struct {
	Trace string `json:"trace"` // Version
	// Digest names the algorithm of the trace's digests (v3; absent in v2,
	// whose digests are FNV-1a): see DigestAlgorithm.
	Digest         DigestAlgorithm `json:"digest,omitempty"`
	Spec           string          `json:"spec,omitempty"`
	Target         string          `json:"target,omitempty"`
	Implementation string          `json:"implementation,omitempty"`
	// Sources are the event sources the trace reports: an oracle whose
	// sources are missing says "not observable", never "pass".
	Sources []Source `json:"sources"`
}

// Trace is a header and its events in order.
type Trace struct {
	Header Header
	Events []Event
}

// U64 returns a pointer to v, for the optional numeric fields. Small values
// (passes, totals, counts) share one pointer each, so that a long trace
// does not allocate one per event: like every field of an event, what it
// points to is read, never written.
func U64(v uint64) *uint64 {
	if v < uint64(len(smallU64)) {
		return &smallU64[v]
	}
	p := new(uint64) // not &v: that would move v to the heap on every call
	*p = v
	return p
}

// I64 returns a pointer to v, for the optional numeric fields; small
// values share one pointer each, as with U64.
func I64(v int64) *int64 {
	if v >= -1 && v < int64(len(smallI64))-1 {
		return &smallI64[v+1]
	}
	p := new(int64)
	*p = v
	return p
}

// The shared small values: 0..1023, and -1..1022.
var (
	smallU64 = func() (a [1024]uint64) {
		for i := range a {
			a[i] = uint64(i)
		}
		return a
	}()
	smallI64 = func() (a [1024]int64) {
		for i := range a {
			a[i] = int64(i) - 1
		}
		return a
	}()
)

// PassOf returns the event's pass and whether it has one.
func (e *Event) PassOf() (uint64, bool) {
	if e.Pass == nil {
		return 0, false
	}
	return *e.Pass, true
}

// Reports reports whether the trace's header says it reports src.
func (h Header) Reports(src Source) bool { return slices.Contains(h.Sources, src) }

// Only keeps t's events of the given sources, numbered again from 1, under
// a header that lists just those: the trace a port that sees no more would
// write (docs/driver-protocol.md, "Observability profiles").
func (t Trace) Only(sources []Source) Trace {
	out := Trace{Header: t.Header, Events: make([]Event, 0, len(t.Events))}
	out.Header.Sources = slices.Clone(sources)
	for _, e := range t.Events {
		if src, ok := e.Type.Source(); ok && slices.Contains(sources, src) {
			e.Seq = uint64(len(out.Events) + 1)
			out.Events = append(out.Events, e)
		}
	}
	return out
}
