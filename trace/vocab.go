package trace

import "strings"

// The closed sets of the wire format. Every producer writes these constants
// and every reader compares against them; no package spells them again.
// A value outside a set still decodes (a port may be wrong, and the oracles
// must be able to say so), so each type is a string.

// Source is who reports an event: what the tool or the application saw, what
// the runtime under the SDK did, or what the SDK says about itself.
type Source string

// Sources.
const (
	SourceTool    Source = "tool"
	SourceApp     Source = "app"
	SourceRuntime Source = "runtime"
	SourceSDK     Source = "sdk"
)

// AllSources is every source, in the order docs/trace.md lists them.
var AllSources = []Source{SourceTool, SourceApp, SourceRuntime, SourceSDK}

// Op is a KERNEL_REPLAY operation (API-2). NONE and LAST are enum bounds,
// never a callback's operation.
type Op string

// Operations.
const (
	OpNone   Op = "NONE"
	OpConfig Op = "CONFIG"
	OpPass   Op = "PASS"
	OpLast   Op = "LAST"
)

// OpIDs is the operation enum of the reference (API-2, API-3): names to ids.
var OpIDs = map[Op]uint64{OpNone: 0, OpConfig: 1, OpPass: 2, OpLast: 3}

// Phase is a callback phase.
type Phase string

// Phases.
const (
	PhaseEnter Phase = "ENTER"
	PhaseExit  Phase = "EXIT"
)

// Service is a service whose records reach the tool.
type Service string

// Services.
const (
	KernelTrace       Service = "kernel_trace"
	CounterCollection Service = "counter_collection"
	DeviceCounting    Service = "device_counting"
	PCSampling        Service = "pc_sampling"
	SPM               Service = "spm"
	ThreadTrace       Service = "thread_trace"
)

// AllServices lists the services in a fixed order.
var AllServices = []Service{KernelTrace, CounterCollection, DeviceCounting, PCSampling, SPM, ThreadTrace}

// Status is the name of a status an SDK call returned, without the
// ROCPROFILER_STATUS_ prefix (readers accept it with the prefix too).
type Status string

// The statuses the rules name (REFERENCE.md lists them all).
const (
	StatusSuccess                  Status = "SUCCESS"
	StatusError                    Status = "ERROR"
	StatusContextNotFound          Status = "ERROR_CONTEXT_NOT_FOUND"
	StatusKindNotFound             Status = "ERROR_KIND_NOT_FOUND"
	StatusOperationNotFound        Status = "ERROR_OPERATION_NOT_FOUND"
	StatusContextError             Status = "ERROR_CONTEXT_ERROR"
	StatusContextInvalid           Status = "ERROR_CONTEXT_INVALID"
	StatusContextNotStarted        Status = "ERROR_CONTEXT_NOT_STARTED"
	StatusServiceAlreadyConfigured Status = "ERROR_SERVICE_ALREADY_CONFIGURED"
	StatusConfigurationLocked      Status = "ERROR_CONFIGURATION_LOCKED"
	StatusInvalidArgument          Status = "ERROR_INVALID_ARGUMENT"
)

// StatusEnum is rocprofiler_status_t in the reference's order: a status's
// index is its value (REFERENCE.md lists them).
var StatusEnum = []Status{
	StatusSuccess, StatusError, StatusContextNotFound, "ERROR_BUFFER_NOT_FOUND",
	StatusKindNotFound, StatusOperationNotFound, "ERROR_THREAD_NOT_FOUND",
	"ERROR_AGENT_NOT_FOUND", "ERROR_COUNTER_NOT_FOUND", StatusContextError,
	StatusContextInvalid, StatusContextNotStarted, "ERROR_CONTEXT_CONFLICT",
	"ERROR_CONTEXT_ID_NOT_ZERO", "ERROR_BUFFER_BUSY", StatusServiceAlreadyConfigured,
	StatusConfigurationLocked, "ERROR_NOT_IMPLEMENTED", "ERROR_INCOMPATIBLE_ABI",
	StatusInvalidArgument,
}

// statusPrefix is the C enumerator prefix a port may keep.
const statusPrefix = "ROCPROFILER_STATUS_"

// Canonical is the status as this package spells it: upper case, no prefix.
func (s Status) Canonical() Status {
	return Status(strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(string(s))), statusPrefix))
}

// Is reports whether s names the same status as want.
func (s Status) Is(want Status) bool { return s.Canonical() == want.Canonical() }

// Call names an SDK call the tool made (api events) or a local context call
// (local events).
type Call string

// API calls.
const (
	CallCreateContext        Call = "create_context"
	CallConfigureCallback    Call = "configure_callback_tracing"
	CallConfigureCounters    Call = "configure_counter_collection"
	CallConfigureKernelTrace Call = "configure_kernel_trace"
	CallConfigureDevice      Call = "configure_device_counting"
	CallConfigurePCSampling  Call = "configure_pc_sampling"
	CallConfigureSPM         Call = "configure_spm"
	CallConfigureThreadTrace Call = "configure_thread_trace"
	CallConfigureExternal    Call = "configure_external_correlation"
	CallStartContext         Call = "start_context"
	CallStopContext          Call = "stop_context"
	CallOperationName        Call = "operation_name"
	CallOperationID          Call = "operation_id"
)

// The application's API calls that API tracing reports (api_call events):
// the launch, and the queue submission inside it through which the SDK
// intercepts the dispatch.
const (
	CallLaunchKernel Call = "launch_kernel" // a kernel launch (hipLaunchKernel, cuLaunchKernel)
	CallGraphLaunch  Call = "graph_launch"  // a graph launch: its packets come from the graph
	CallQueueSubmit  Call = "queue_submit"  // the packets written and the doorbell rung
)

// Local context calls (local events).
const (
	LocalStart Call = "start" // replay_start_context
	LocalStop  Call = "stop"  // replay_stop_context
)

// Domain is a callback tracing domain named in a configure call.
type Domain string

// DomainKernelReplay is the kernel replay callback tracing domain (API-1).
const DomainKernelReplay Domain = "KERNEL_REPLAY"

// WarningCode is the stable code of an SDK diagnostic.
type WarningCode string

// Warning codes (docs/trace.md says when each is printed).
const (
	WarnPassCountZeroWithoutContinue WarningCode = "pass_count_zero_without_continue" // PC-6
	WarnMultiPacketSubmission        WarningCode = "multi_packet_submission"          // ACT-6
	WarnGraphLaunch                  WarningCode = "graph_launch"                     // ACT-6
	WarnSnapshotIncomplete           WarningCode = "snapshot_incomplete"              // MEM-5
	WarnServiceConflict              WarningCode = "service_conflict"                 // SVC-3
	WarnReentrantDispatch            WarningCode = "reentrant_dispatch"               // MEM-6
)

// MemKind is the kind of an allocation (MEM-4 says which kinds replay
// saves).
type MemKind string

// Memory kinds.
const (
	MemDevice  MemKind = "device"  // coarse-grained device memory: saved
	MemFine    MemKind = "fine"    // fine-grained device memory: not saved
	MemHost    MemKind = "host"    // host memory: not saved
	MemKernArg MemKind = "kernarg" // kernel-argument memory: not saved
)

// Saved reports whether MEM-4 has replay save memory of kind k.
func (k MemKind) Saved() bool { return k == MemDevice }

// Family is an agent family: agents whose hardware behaves alike for the
// rules. Specs name agents by it (their kind), the agent event carries it.
type Family string

// Agent families.
const (
	FamilyMI200    Family = "MI200"    // CDNA2, gfx90a
	FamilyMI300    Family = "MI300"    // CDNA3, gfx942
	FamilyConsumer Family = "consumer" // RDNA3, gfx1100
	FamilyNVIDIA   Family = "nvidia"   // CUDA devices
)

// Families lists every agent family.
var Families = []Family{FamilyMI200, FamilyMI300, FamilyConsumer, FamilyNVIDIA}

// DataCenter reports whether the family is one of the MI2xx/MI3xx parts on
// which SVC-3's service combination limits apply.
func (f Family) DataCenter() bool { return f == FamilyMI200 || f == FamilyMI300 }

// Payload members, by the names traces use in `payload`
// (the reference's field order, API-6).
const (
	MemberSize               = "size"
	MemberDispatchInfo       = "dispatch_info"
	MemberCurrentPass        = "current_pass"
	MemberTotalPasses        = "total_passes"
	MemberReplayPassCount    = "replay_pass_count"
	MemberReplayContinue     = "replay_continue"
	MemberReplayStartContext = "replay_start_context"
	MemberReplayStopContext  = "replay_stop_context"
)

// PayloadLayout is the reference payload: each member and the offset just
// past it, in order. size must reach the end of every member an
// implementation fills in (API-5, clarified 2026-11-30): the whole struct
// is PayloadSize bytes.
var PayloadLayout = []struct {
	Member string
	End    uint64
}{
	{MemberSize, 8},
	{MemberDispatchInfo, 8 + DispatchInfoSize},
	{MemberCurrentPass, 8 + DispatchInfoSize + 8},
	{MemberTotalPasses, 8 + DispatchInfoSize + 16},
	{MemberReplayPassCount, 8 + DispatchInfoSize + 24},
	{MemberReplayContinue, 8 + DispatchInfoSize + 32},
	{MemberReplayStartContext, 8 + DispatchInfoSize + 40},
	{MemberReplayStopContext, 8 + DispatchInfoSize + 48},
}

// DispatchInfoSize is the size of the reference's kernel dispatch info:
// size, agent, queue, kernel and dispatch ids (8 bytes each), private and
// group segment sizes (4 each), workgroup and grid sizes (3 x 4 each).
const DispatchInfoSize = 5*8 + 2*4 + 2*12

// PayloadSize is the size of the whole reference payload.
const PayloadSize = 8 + DispatchInfoSize + 48

// MemberEnd returns the offset just past a payload member, and whether the
// member is known.
func MemberEnd(member string) (uint64, bool) {
	for _, m := range PayloadLayout {
		if m.Member == member {
			return m.End, true
		}
	}
	return 0, false
}

// Vocabulary lists every value of the closed sets above, for the test that
// keeps other packages from spelling them out.
func Vocabulary() []string {
	var out []string
	add := func(vs ...string) { out = append(out, vs...) }
	for _, s := range AllSources {
		add(string(s))
	}
	for op := range OpIDs {
		add(string(op))
	}
	add(string(PhaseEnter), string(PhaseExit))
	for _, s := range AllServices {
		add(string(s))
	}
	for _, s := range StatusEnum {
		add(string(s))
	}
	add(string(CallCreateContext), string(CallConfigureCallback), string(CallConfigureCounters),
		string(CallConfigureKernelTrace), string(CallConfigureDevice), string(CallConfigurePCSampling),
		string(CallConfigureSPM), string(CallConfigureThreadTrace), string(CallConfigureExternal),
		string(CallStartContext), string(CallStopContext), string(CallOperationName), string(CallOperationID),
		string(CallLaunchKernel), string(CallGraphLaunch), string(CallQueueSubmit),
		string(LocalStart), string(LocalStop), string(DomainKernelReplay))
	add(string(WarnPassCountZeroWithoutContinue), string(WarnMultiPacketSubmission), string(WarnGraphLaunch),
		string(WarnSnapshotIncomplete), string(WarnServiceConflict), string(WarnReentrantDispatch))
	add(string(MemDevice), string(MemFine), string(MemHost), string(MemKernArg))
	for _, f := range Families {
		add(string(f))
	}
	return out
}
