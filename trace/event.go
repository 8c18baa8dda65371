// Package trace defines the trace: one ordered stream of events that a run
// of a spec produces. It is the contract between targets (ours or a port's),
// the rule oracles, the goldens and the reports. docs/trace.md documents it.
package trace

// Version is written in the header line of every NDJSON trace. Bump it on
// any change a reader could notice.
const Version = "replayspec.trace/v1"

// Type is what an event records.
type Type string

// Event types. Who emits each is part of the contract (docs/trace.md):
// "tool" events are what the tool saw or did, "runtime" events are what the
// GPU runtime did, "sdk" events are what the SDK declared, "app" events are
// what the application observed.
const (
	// tool
	API         Type = "api"         // an SDK API call by the tool and its status
	Callback    Type = "callback"    // a KERNEL_REPLAY callback received by the tool
	PassCount   Type = "pass_count"  // replay_pass_count called; Result is its answer
	Continue    Type = "continue"    // replay_continue called; Result is its answer
	Local       Type = "local"       // replay_start_context/replay_stop_context called
	Record      Type = "record"      // a service record delivered to the tool
	Correlation Type = "correlation" // the external correlation callback called on a submit

	// sdk
	DispatchID Type = "dispatch_id" // a dispatch id reserved (the counter advanced)
	Warning    Type = "warning"     // a diagnostic the SDK printed
	NeverEnded Type = "never_ended" // the pass budget ran out in an indefinite loop

	// runtime
	AgentInfo Type = "agent"    // an agent of the machine, listed at the start
	Snapshot  Type = "snapshot" // device memory saved
	Restore   Type = "restore"  // device memory written back before a pass
	Kernel    Type = "kernel"   // a kernel ran on the GPU
	Signal    Type = "signal"   // a signal was decremented

	// app
	AppDispatch Type = "app_dispatch" // the application wrote a dispatch
	AppComplete Type = "app_complete" // the application's wait for completion returned
	AppReadback Type = "app_readback" // the application read a dispatch's buffers after completion
	AppMemory   Type = "app_memory"   // the application read a buffer back at the end
	AppTimeout  Type = "app_timeout"  // the application gave up waiting (never completed)
)

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
	Family   string `json:"family,omitempty"` // agent family (MI200, MI300, consumer, nvidia)
	Context  uint64 `json:"context,omitempty"`
	Label    string `json:"label,omitempty"` // the spec's name for a dispatch or buffer

	// Replay callbacks and tool calls.
	Op       string  `json:"op,omitempty"`    // CONFIG, PASS
	Phase    string  `json:"phase,omitempty"` // ENTER, EXIT
	Pass     *uint64 `json:"pass,omitempty"`
	Total    *uint64 `json:"total,omitempty"`
	Corr     *Corr   `json:"corr,omitempty"`
	UserData *uint64 `json:"user_data,omitempty"`
	Call     string  `json:"call,omitempty"`   // API or local call name
	Result   *int64  `json:"result,omitempty"` // what a tool callback returned
	Status   string  `json:"status,omitempty"` // status name an SDK call returned
	// Payload flags what the tool found in the payload when it checks
	// API-6 (which fields were set), e.g. "pass_fields_zero".
	Payload []string `json:"payload,omitempty"`

	// Records.
	Service  string    `json:"service,omitempty"`
	Start    uint64    `json:"start,omitempty"`
	End      uint64    `json:"end,omitempty"`
	Counters []Counter `json:"counters,omitempty"`

	// Runtime and application.
	Signal  uint64  `json:"signal,omitempty"`
	Value   *int64  `json:"value,omitempty"` // signal value after a decrement
	Bytes   uint64  `json:"bytes,omitempty"`
	Regions int     `json:"regions,omitempty"`
	MemIn   string  `json:"mem_in,omitempty"`  // digest of the kernel's buffers before it ran
	MemOut  string  `json:"mem_out,omitempty"` // digest after it ran
	Digest  string  `json:"digest,omitempty"`  // digest of a buffer the application read
	Values  []int64 `json:"values,omitempty"`  // leading elements of that buffer

	// Diagnostics.
	Code    string `json:"code,omitempty"` // stable warning code
	Message string `json:"message,omitempty"`
}

// Header is the first line of an NDJSON trace.
type Header struct {
	Trace          string `json:"trace"` // Version
	Spec           string `json:"spec,omitempty"`
	Target         string `json:"target,omitempty"`
	Implementation string `json:"implementation,omitempty"`
}

// Trace is a header and its events in order.
type Trace struct {
	Header Header
	Events []Event
}

// U64 returns a pointer to v, for the optional numeric fields.
func U64(v uint64) *uint64 { return &v }

// I64 returns a pointer to v, for the optional numeric fields.
func I64(v int64) *int64 { return &v }

// PassOf returns the event's pass and whether it has one.
func (e Event) PassOf() (uint64, bool) {
	if e.Pass == nil {
		return 0, false
	}
	return *e.Pass, true
}
