package replay

import (
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// TracingKind is a callback tracing domain (rocprofiler_callback_tracing_kind_t).
// The engine serves KERNEL_REPLAY; other domains are not modelled.
type TracingKind int

// KindKernelReplay is ROCPROFILER_CALLBACK_TRACING_KERNEL_REPLAY (API-1).
const KindKernelReplay TracingKind = 1

// Operation is rocprofiler_kernel_replay_operation_t (API-2, API-3).
type Operation uint32

// Kernel replay operations. SNAPSHOT and RESTORE are reserved for later and
// have no values (API-3): LAST is 3.
const (
	OpNone   Operation = 0
	OpConfig Operation = 1
	OpPass   Operation = 2
	OpLast   Operation = 3
)

// operationNames name the enum, LAST included: it is the enum's bound and no
// operation (API-3), so OperationName refuses it and OperationID's loop
// stops before it. An array by value, not a map: every callback names its
// operation.
var operationNames = [...]trace.Op{OpNone: trace.OpNone, OpConfig: trace.OpConfig, OpPass: trace.OpPass, OpLast: trace.OpLast}

func (o Operation) String() string {
	if o < Operation(len(operationNames)) {
		return string(operationNames[o])
	}
	return "INVALID"
}

// Phase is the callback phase.
type Phase int

// Callback phases.
const (
	PhaseNone  Phase = 0
	PhaseEnter Phase = 1
	PhaseExit  Phase = 2
)

func (p Phase) String() string {
	switch p {
	case PhaseEnter:
		return string(trace.PhaseEnter)
	case PhaseExit:
		return string(trace.PhaseExit)
	}
	return "NONE"
}

// ContextID names a context. Zero is no context.
type ContextID uint64

// UserData is the tool's per-sequence value (a union of a value and a
// pointer in C; a value here).
type UserData struct{ Value uint64 }

// DispatchInfo is rocprofiler_kernel_dispatch_info_t. KernelName is ours:
// the reference keeps names in a separate symbol table.
type DispatchInfo struct {
	Size               uint64
	AgentID            hsa.AgentID
	QueueID            hsa.QueueID
	KernelID           uint64
	KernelName         string
	DispatchID         uint64
	PrivateSegmentSize uint32
	GroupSegmentSize   uint32
	WorkgroupSize      hsa.Dim3
	GridSize           hsa.Dim3
}

// CorrelationID is the correlation id triple.
type CorrelationID struct {
	Internal uint64
	External UserData
	Ancestor uint64
}

// PassCountFunc is replay_pass_count: how many passes (0 = indefinite).
type PassCountFunc func(info DispatchInfo, userData UserData) uint64

// ContinueFunc is replay_continue: non-zero for another pass.
type ContinueFunc func(info DispatchInfo, currentPass, totalPasses uint64, userData UserData) int

// LocalContextFunc is replay_start_context / replay_stop_context.
type LocalContextFunc func(ctx ContextID) Status

// KernelReplayData is the one flat payload of both operations (API-5), in
// the reference's field order (API-6).
type KernelReplayData struct {
	Size         uint64
	DispatchInfo DispatchInfo
	// PASS, read-only.
	CurrentPass uint64
	TotalPasses uint64 // 0 for an indefinite loop (PC-5)
	// CONFIG, set by the tool in CONFIG ENTER.
	ReplayPassCount PassCountFunc
	ReplayContinue  ContinueFunc
	// PASS, SDK-provided, legal in PASS ENTER only (LCX-2).
	ReplayStartContext LocalContextFunc
	ReplayStopContext  LocalContextFunc
}

// CallbackRecord is rocprofiler_callback_tracing_record_t for this domain.
type CallbackRecord struct {
	Context     ContextID
	Thread      hsa.ThreadID
	Correlation CorrelationID
	Kind        TracingKind
	Operation   Operation
	Phase       Phase
	Payload     *KernelReplayData
}

// TracingCallback receives KERNEL_REPLAY callbacks. userData points at the
// sequence's single user-data value (UD-1).
type TracingCallback func(rec CallbackRecord, userData *UserData)

// Service is a data-collection service whose behaviour under replay the
// rules describe (SVC-1, SVC-2).
type Service int

// Services.
const (
	CounterCollection Service = iota + 1 // dispatch counter collection
	KernelTrace                          // kernel dispatch tracing
	DeviceCounting                       // agent-wide counting
	PCSampling
	SPM
	ThreadTrace
)

// serviceNames by value (every record names its service): "" for none.
var serviceNames = [...]trace.Service{
	CounterCollection: trace.CounterCollection, KernelTrace: trace.KernelTrace,
	DeviceCounting: trace.DeviceCounting, PCSampling: trace.PCSampling, SPM: trace.SPM,
	ThreadTrace: trace.ThreadTrace,
}

func (s Service) String() string { return string(s.Trace()) }

// Trace is the service as traces name it.
func (s Service) Trace() trace.Service {
	if s >= 0 && int(s) < len(serviceNames) {
		return serviceNames[s]
	}
	return ""
}

// CounterValue is one counter of a record.
type CounterValue struct {
	Name  string
	Value uint64
}

// Record is what a service delivers for one submit of a dispatch.
type Record struct {
	Service     Service
	Context     ContextID
	Thread      hsa.ThreadID // the thread the record callback runs on
	Dispatch    DispatchInfo
	Correlation CorrelationID
	Start, End  uint64
	Counters    []CounterValue
}

// RecordFunc receives records.
type RecordFunc func(Record)

// CounterSelectFunc is dispatch counting's dispatch callback: it runs on the
// submitting thread before each submit (inside the pass, CB-4) and names
// the counters to collect; none means no record.
type CounterSelectFunc func(thread hsa.ThreadID, info DispatchInfo, corr CorrelationID) []string

// APICallRecord is one enter or exit of an API call as API tracing reports
// it to the tool: the thread it runs on, the call, and the correlation id
// the SDK gave it (its ancestor: the call open around it on that thread).
type APICallRecord struct {
	Thread      hsa.ThreadID
	Call        trace.Call
	Phase       Phase
	Correlation CorrelationID
}

// APITracingFunc receives API calls, on the thread that makes them.
type APITracingFunc func(APICallRecord)

// ExternalCorrelationFunc is the tool's external correlation callback,
// asked for an id on every submit (COR-3).
type ExternalCorrelationFunc func(thread hsa.ThreadID, info DispatchInfo, internal uint64) uint64
