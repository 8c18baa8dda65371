// Package spec is the data model of a replay scenario: the machine, the
// tool's plan and the application, and what the spec expects. Specs are
// written in YAML (docs/spec-format.md), built by Gherkin steps, or sent to
// a driver as JSON; all three produce this type.
package spec

// Version is the spec format version this package reads.
const Version = 1

// Spec is one scenario.
type Spec struct {
	Version     int    `yaml:"version" json:"version"`
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Rules lists the rule IDs the spec shows (for the coverage report).
	Rules []string `yaml:"rules,omitempty" json:"rules,omitempty"`
	// Requires lists capabilities a target must claim to run the spec
	// (e.g. "indefinite", "local-contexts", "concurrency", "pc-sampling").
	Requires []string `yaml:"requires,omitempty" json:"requires,omitempty"`

	Agents      []Agent     `yaml:"agents" json:"agents"`
	Contexts    []Context   `yaml:"contexts,omitempty" json:"contexts,omitempty"`
	Tool        Tool        `yaml:"tool,omitempty" json:"tool,omitempty"`
	Application Application `yaml:"application" json:"application"`
	Expect      Expect      `yaml:"expect,omitempty" json:"expect,omitempty"`
	Limits      Limits      `yaml:"limits,omitempty" json:"limits,omitempty"`

	// File is where the spec was loaded from; not part of the format.
	File string `yaml:"-" json:"-"`
	// Case is set on a case of a spec with a matrix (Name is then
	// Case.Name()); not part of the format: a case is sent to a driver as
	// the plain spec it is.
	Case *Case `yaml:"-" json:"-"`
}

// Agent is one GPU of the simulated machine.
type Agent struct {
	Name string `yaml:"name" json:"name"`
	// Kind is MI200, MI300 or consumer (the simulator's agent kinds), or
	// nvidia (a CUDA device: NVIDIA metric names, needs nvidia-counters).
	Kind string `yaml:"kind" json:"kind"`
	// SnapshotLimit makes a snapshot of more than this many bytes fail on
	// this agent (MEM-5); 0 means no limit. Needs the snapshot-failure
	// capability.
	SnapshotLimit uint64 `yaml:"snapshot_limit,omitempty" json:"snapshot_limit,omitempty"`
	// RestoreFailsAt makes the n-th restore of the run (1-based, counting
	// every dispatch) fail part-way on this machine (MEM-5); 0 never.
	// Needs the restore-failure capability.
	RestoreFailsAt uint64 `yaml:"restore_fails_at,omitempty" json:"restore_fails_at,omitempty"`
}

// Context is one SDK context the tool creates, configures and (by default)
// starts before the application runs.
type Context struct {
	Name string `yaml:"name" json:"name"`
	// Start says whether the tool starts the context before the
	// application runs; default true.
	Start *bool `yaml:"start,omitempty" json:"start,omitempty"`
	// StopAfter stops the context globally after the named dispatch.
	StopAfter string   `yaml:"stop_after,omitempty" json:"stop_after,omitempty"`
	Services  Services `yaml:"services" json:"services"`
}

// Started reports the context's Start value with its default.
func (c Context) Started() bool { return c.Start == nil || *c.Start }

// Services are the services a context configures. A nil field is a service
// not configured.
type Services struct {
	// KernelReplay subscribes to the KERNEL_REPLAY callback domain.
	KernelReplay *KernelReplay `yaml:"kernel_replay,omitempty" json:"kernel_replay,omitempty"`
	// CounterCollection is dispatch counter collection; the counters of
	// each pass come from the tool's plan.
	CounterCollection *CounterCollection `yaml:"counter_collection,omitempty" json:"counter_collection,omitempty"`
	KernelTrace       *Empty             `yaml:"kernel_trace,omitempty" json:"kernel_trace,omitempty"`
	DeviceCounting    *CounterCollection `yaml:"device_counting,omitempty" json:"device_counting,omitempty"`
	PCSampling        *Empty             `yaml:"pc_sampling,omitempty" json:"pc_sampling,omitempty"`
	SPM               *Empty             `yaml:"spm,omitempty" json:"spm,omitempty"`
	ThreadTrace       *Empty             `yaml:"thread_trace,omitempty" json:"thread_trace,omitempty"`
	// ExternalCorrelation installs the tool's external correlation id
	// callback, called on every submit.
	ExternalCorrelation *ExternalCorrelation `yaml:"external_correlation,omitempty" json:"external_correlation,omitempty"`
}

// Empty is a service with no options; write it as {}.
type Empty struct{}

// KernelReplay is the replay subscription.
type KernelReplay struct {
	// Operations subscribed: empty means all (null list, count 0; ACT-2),
	// else a list of CONFIG and PASS.
	Operations []string `yaml:"operations,omitempty" json:"operations,omitempty"`
}

// CounterCollection names counters. For dispatch counter collection the
// tool splits them into groups per agent; pass i collects group i.
type CounterCollection struct {
	Counters []string `yaml:"counters" json:"counters"`
}

// ExternalCorrelation is how the tool's external correlation callback
// answers: "increment" returns 1, 2, 3 ... on every call (the blind tool of
// COR-3); "fixed" returns Value every time.
type ExternalCorrelation struct {
	Mode  string `yaml:"mode" json:"mode"`
	Value uint64 `yaml:"value,omitempty" json:"value,omitempty"`
}

// Tool is what the tool does in the replay callbacks: its default plan, and
// the misuses it commits on purpose.
type Tool struct {
	Plan Plan `yaml:"plan,omitempty" json:"plan,omitempty"`
	// Misuse lists deliberate API misuses, each checked for the status the
	// rules give.
	Misuse []Misuse `yaml:"misuse,omitempty" json:"misuse,omitempty"`
	// ConfigureTwice makes the tool configure KERNEL_REPLAY on a second
	// context too (ACT-5).
	ConfigureTwice bool `yaml:"configure_twice,omitempty" json:"configure_twice,omitempty"`
}

// Plan is what the tool answers for one dispatch.
type Plan struct {
	// Passes is what replay_pass_count returns: a number (0 = indefinite),
	// "groups" (one per counter group on the dispatch's agent, AGT-1), or
	// "none" to leave replay_pass_count unset (PC-1). Empty means "none".
	// Written passes: 3, passes: 0, passes: groups or passes: none.
	Passes Passes `yaml:"passes,omitempty" json:"passes,omitempty"`
	// Continue is the replay_continue policy; nil leaves it unset.
	Continue *ContinuePolicy `yaml:"continue,omitempty" json:"continue,omitempty"`
	// Local lists local context toggles made in PASS ENTER.
	Local []LocalToggle `yaml:"local,omitempty" json:"local,omitempty"`
	// UserData is written into the sequence's user data at CONFIG ENTER.
	UserData *uint64 `yaml:"user_data,omitempty" json:"user_data,omitempty"`
	// WriteUserDataInPass makes the tool overwrite user data in every PASS
	// ENTER with 1000+pass (UD-2: the next pass must not see it).
	WriteUserDataInPass bool `yaml:"write_user_data_in_pass,omitempty" json:"write_user_data_in_pass,omitempty"`
	// Collect is a per-pass plan of which contexts collect: in PASS ENTER
	// of the pass the tool starts the listed contexts locally and stops
	// every other started context that has a dispatch-scoped service.
	Collect []PassContexts `yaml:"collect,omitempty" json:"collect,omitempty"`
	// Actions are calls the tool makes from inside its replay callbacks:
	// a global start or stop of a context, or a dispatch of its own.
	Actions []Action `yaml:"actions,omitempty" json:"actions,omitempty"`
}

// PassContexts is "in this pass, these contexts collect".
type PassContexts struct {
	// Pass is the 0-based pass, or -1 for "every pass".
	Pass     int64    `yaml:"pass" json:"pass"`
	Contexts []string `yaml:"contexts" json:"contexts"`
}

// Action is one call the tool makes from inside a replay callback.
type Action struct {
	// In is the callback: CONFIG_ENTER, CONFIG_EXIT, PASS_ENTER or PASS_EXIT.
	In string `yaml:"in" json:"in"`
	// Pass is the pass for PASS_* callbacks (default 0; -1 every pass).
	Pass int64 `yaml:"pass,omitempty" json:"pass,omitempty"`
	// Call is start_context, stop_context (global calls, naming Context),
	// dispatch (naming a by_tool Dispatch of the application list), or
	// free and alloc (naming a Buffer: freeing it, or allocating a by_tool
	// buffer, from inside the loop; each happens once in a run).
	Call     string `yaml:"call" json:"call"`
	Context  string `yaml:"context,omitempty" json:"context,omitempty"`
	Dispatch string `yaml:"dispatch,omitempty" json:"dispatch,omitempty"`
	Buffer   string `yaml:"buffer,omitempty" json:"buffer,omitempty"`
}

// ContinuePolicy says when replay_continue returns 0. Exactly one field is
// set.
type ContinuePolicy struct {
	// StopAfter returns 0 after this pass (0-based) and 1 before it.
	StopAfter *uint64 `yaml:"stop_after,omitempty" json:"stop_after,omitempty"`
	// Always returns 1 every time (for a fixed loop: never ends it early;
	// for an indefinite loop: never ends, CMP-4).
	Always bool `yaml:"always,omitempty" json:"always,omitempty"`
	// Converge returns 0 once the counter's value is equal on two
	// consecutive passes, or after AtMost passes (the fallback bound).
	Converge *Converge `yaml:"converge,omitempty" json:"converge,omitempty"`
}

// Converge is "until converged, at most m".
type Converge struct {
	Counter string `yaml:"counter" json:"counter"`
	AtMost  uint64 `yaml:"at_most" json:"at_most"`
}

// LocalToggle is one local start or stop made in PASS ENTER of a pass.
type LocalToggle struct {
	// Pass is the 0-based pass, or -1 for "every pass".
	Pass  int64    `yaml:"pass" json:"pass"`
	Start []string `yaml:"start,omitempty" json:"start,omitempty"`
	Stop  []string `yaml:"stop,omitempty" json:"stop,omitempty"`
}

// Misuse is one deliberate wrong call by the tool.
type Misuse struct {
	// Call is "local_start" or "local_stop".
	Call string `yaml:"call" json:"call"`
	// Context is the context named in the call.
	Context string `yaml:"context" json:"context"`
	// In is where the call is made: CONFIG_ENTER, CONFIG_EXIT, PASS_EXIT
	// (LCX-2) or PASS_ENTER (legal window; LCX-7 for a context never
	// started).
	In string `yaml:"in" json:"in"`
	// Pass is the pass for PASS_* windows (default 0).
	Pass uint64 `yaml:"pass,omitempty" json:"pass,omitempty"`
}

// Application is the program being profiled.
type Application struct {
	Buffers    []Buffer   `yaml:"buffers,omitempty" json:"buffers,omitempty"`
	Dispatches []Dispatch `yaml:"dispatches" json:"dispatches"`
}

// Buffer is one allocation the application makes before it dispatches.
type Buffer struct {
	Name  string `yaml:"name" json:"name"`
	Agent string `yaml:"agent" json:"agent"`
	// Kind is device (coarse-grained, the default), fine, host or kernarg.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`
	// Elements is the number of 32-bit elements.
	Elements uint64 `yaml:"elements" json:"elements"`
	// Init sets every element to Fill, or to Values when given (the rest
	// zero).
	Fill   int64   `yaml:"fill,omitempty" json:"fill,omitempty"`
	Values []int64 `yaml:"values,omitempty" json:"values,omitempty"`
	// FreeAfter frees the buffer after the named dispatch completes.
	FreeAfter string `yaml:"free_after,omitempty" json:"free_after,omitempty"`
	// AllocAfter allocates the buffer only once the named dispatch has
	// completed, on its thread (after that dispatch's frees); until then
	// the buffer does not exist.
	AllocAfter string `yaml:"alloc_after,omitempty" json:"alloc_after,omitempty"`
	// ByTool: the application does not allocate this buffer; the tool does,
	// from inside a replay callback (tool.plan.actions, call alloc).
	ByTool bool `yaml:"by_tool,omitempty" json:"by_tool,omitempty"`
}

// Dispatch is one kernel launch by the application.
type Dispatch struct {
	Name   string `yaml:"name" json:"name"`
	Kernel string `yaml:"kernel" json:"kernel"`
	Agent  string `yaml:"agent" json:"agent"`
	// Queue names the queue (one is created per distinct name and agent);
	// default "q0".
	Queue string `yaml:"queue,omitempty" json:"queue,omitempty"`
	// Thread is the application thread (default 1). Threads run
	// concurrently; each runs its dispatches in the order listed.
	Thread uint64 `yaml:"thread,omitempty" json:"thread,omitempty"`
	// Args names buffers, in the kernel's order.
	Args []string `yaml:"args" json:"args"`
	// Scalar is the kernel's scalar argument (fill value, saxpy a).
	Scalar    int32  `yaml:"scalar,omitempty" json:"scalar,omitempty"`
	Grid      uint32 `yaml:"grid,omitempty" json:"grid,omitempty"`
	Workgroup uint32 `yaml:"workgroup,omitempty" json:"workgroup,omitempty"`
	// Packets: 1 (default) is an ordinary submission; more sends the
	// dispatch with a barrier in one multi-packet write (ACT-6).
	Packets int `yaml:"packets,omitempty" json:"packets,omitempty"`
	// KernelPackets is how many of the submission's packets are kernel
	// dispatches of this kernel (default 1); only the last carries the
	// completion signal. More than 1 is a multi-packet submission (ACT-6).
	KernelPackets int `yaml:"kernel_packets,omitempty" json:"kernel_packets,omitempty"`
	// BarriersBetween puts a barrier packet between each two kernel
	// packets of the submission (kernel_packets of at least 2), before
	// the barriers that end it: the application orders the dispatches of
	// one write (ACT-6, DID-1..3).
	BarriersBetween bool `yaml:"barriers_between,omitempty" json:"barriers_between,omitempty"`
	// Graph marks the dispatch as part of a graph launch (ACT-6).
	Graph bool `yaml:"graph,omitempty" json:"graph,omitempty"`
	// Repeat makes the application submit the dispatch this many times in
	// order on its thread, each an ordinary dispatch labelled NAME#K (K
	// from 0; RepetitionLabel), without the spec listing them: a spec of
	// a million dispatches in a few lines, and in memory of its size. 0
	// (left out) is one dispatch labelled NAME.
	Repeat uint64 `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	// ByTool: the application does not run this dispatch; the tool writes
	// it from inside a replay callback (tool.plan.actions, call dispatch).
	ByTool bool `yaml:"by_tool,omitempty" json:"by_tool,omitempty"`
	// Plan overrides the tool's plan for this dispatch.
	Plan *Plan `yaml:"plan,omitempty" json:"plan,omitempty"`
	// During starts the dispatch while another dispatch is in a pass.
	During *During `yaml:"during,omitempty" json:"during,omitempty"`
	// After starts the dispatch once another has completed.
	After string `yaml:"after,omitempty" json:"after,omitempty"`
}

// During is "while dispatch D is inside pass P".
type During struct {
	Dispatch string `yaml:"dispatch" json:"dispatch"`
	Pass     uint64 `yaml:"pass" json:"pass"`
}

// Limits bound a run so that a never-ending loop cannot hang its caller.
type Limits struct {
	// MaxPasses is the pass budget per dispatch for indefinite loops
	// (default 10000).
	MaxPasses uint64 `yaml:"max_passes,omitempty" json:"max_passes,omitempty"`
}

// Expect is what the spec itself requires of the trace, on top of the
// universal rule oracles. Maps are keyed by dispatch or buffer name.
type Expect struct {
	// Passes is the number of passes each dispatch ran (0: not replayed).
	Passes map[string]Count `yaml:"passes,omitempty" json:"passes,omitempty"`
	// ContinueConsulted lists the passes after which replay_continue was
	// called.
	ContinueConsulted map[string][]uint64 `yaml:"continue_consulted,omitempty" json:"continue_consulted,omitempty"`
	// Completions is the number of completions the application saw.
	Completions map[string]Count `yaml:"completions,omitempty" json:"completions,omitempty"`
	// Memory is what a buffer holds when the application reads it at the
	// end.
	Memory map[string]MemoryExpect `yaml:"memory,omitempty" json:"memory,omitempty"`
	// Records counts service records (by service name, over the run).
	Records map[string]Count `yaml:"records,omitempty" json:"records,omitempty"`
	// Statuses lists SDK calls and the status each must return.
	Statuses []StatusExpect `yaml:"statuses,omitempty" json:"statuses,omitempty"`
	// Warnings lists warning codes that must appear (each once).
	Warnings []string `yaml:"warnings,omitempty" json:"warnings,omitempty"`
	// NoWarnings requires that no warning was printed.
	NoWarnings bool `yaml:"no_warnings,omitempty" json:"no_warnings,omitempty"`
	// NeverEnds names dispatches whose indefinite loop must not end (CMP-4).
	NeverEnds []string `yaml:"never_ends,omitempty" json:"never_ends,omitempty"`
	// Timestamps: "differ_per_pass" requires start/end differ per pass.
	Timestamps string `yaml:"timestamps,omitempty" json:"timestamps,omitempty"`
	// MemoryAfter is what the dispatch's buffers hold when the application
	// reads them right after the dispatch completed: dispatch -> buffer.
	MemoryAfter map[string]map[string]MemoryExpect `yaml:"memory_after,omitempty" json:"memory_after,omitempty"`
	// UserData is the user data the tool is handed at given points of a
	// dispatch's sequence.
	UserData []UserDataExpect `yaml:"user_data,omitempty" json:"user_data,omitempty"`
	// Sequence is the exact order of a dispatch's callbacks, tool calls,
	// memory saves and restores, kernel runs and completion.
	Sequence map[string][]string `yaml:"sequence,omitempty" json:"sequence,omitempty"`
	// DispatchIDs are the SDK dispatch ids of a dispatch (one per kernel
	// packet), carried by everything the dispatch causes.
	DispatchIDs map[string][]uint64 `yaml:"dispatch_ids,omitempty" json:"dispatch_ids,omitempty"`
	// Correlation states a dispatch's correlation ids.
	Correlation map[string]CorrelationExpect `yaml:"correlation,omitempty" json:"correlation,omitempty"`
	// RecordCounts counts records of a service, narrowed to a dispatch, a
	// pass and a context.
	RecordCounts []RecordCount `yaml:"record_counts,omitempty" json:"record_counts,omitempty"`
	// Runs is how many times each dispatch's kernel ran on the GPU.
	Runs map[string]Count `yaml:"runs,omitempty" json:"runs,omitempty"`
	// Payload states the replay payload a callback received: the members
	// that were non-zero and its size.
	Payload []PayloadExpect `yaml:"payload,omitempty" json:"payload,omitempty"`
	// Counters names the counters the counter records of a pass carry.
	Counters []CountersExpect `yaml:"counters,omitempty" json:"counters,omitempty"`
	// Saved names, per dispatch, exactly the buffers its snapshot saved
	// (MEM-4); an empty list: nothing was saved.
	Saved map[string][]string `yaml:"saved,omitempty" json:"saved,omitempty"`
	// Aborts names dispatches during which the process must abort: a
	// restore failed part-way (MEM-5) and nothing ran after it.
	Aborts []string `yaml:"aborts,omitempty" json:"aborts,omitempty"`
	// Violations lists rule IDs the oracles must report (a spec that
	// shows a fault is caught); when set, those failures are the pass
	// condition and any other failure still fails.
	Violations []string `yaml:"violations,omitempty" json:"violations,omitempty"`
}

// Count is an exact number or a range, written 3, "2..5" or ">=1".
type Count struct {
	Min, Max uint64
	Text     string
}

// MemoryExpect is what a buffer must hold: every element equal to All, or
// the leading elements equal to Values.
type MemoryExpect struct {
	All    *int64  `yaml:"all,omitempty" json:"all,omitempty"`
	Values []int64 `yaml:"values,omitempty" json:"values,omitempty"`
}

// StatusExpect is "this call returns this status", optionally only where
// it is made: during a dispatch, from a callback, in a pass.
type StatusExpect struct {
	Call     string `yaml:"call" json:"call"`
	Context  string `yaml:"context,omitempty" json:"context,omitempty"`
	Dispatch string `yaml:"dispatch,omitempty" json:"dispatch,omitempty"`
	// In is the callback the call was made from (CONFIG_ENTER, ...).
	In string `yaml:"in,omitempty" json:"in,omitempty"`
	// Pass narrows a PASS_* window to one pass.
	Pass   *uint64 `yaml:"pass,omitempty" json:"pass,omitempty"`
	Status string  `yaml:"status" json:"status"`
}

// UserDataExpect is "at this point of the dispatch's sequence the tool is
// handed this user data".
type UserDataExpect struct {
	Dispatch string `yaml:"dispatch" json:"dispatch"`
	// At is CONFIG_ENTER, CONFIG_EXIT, PASS_ENTER, PASS_EXIT (the
	// callbacks), pass_count or continue (the tool's functions).
	At string `yaml:"at" json:"at"`
	// Pass narrows PASS_* and continue to one pass; else every one.
	Pass  *uint64 `yaml:"pass,omitempty" json:"pass,omitempty"`
	Value uint64  `yaml:"value" json:"value"`
}

// CorrelationExpect states a dispatch's correlation ids.
type CorrelationExpect struct {
	// External lists the external ids of the dispatch's records, pass by
	// pass (one entry for a dispatch that is not replayed).
	External []uint64 `yaml:"external,omitempty" json:"external,omitempty"`
	// SameInternal: every callback and record of the dispatch carries one
	// internal id and one ancestor id.
	SameInternal bool `yaml:"same_internal,omitempty" json:"same_internal,omitempty"`
}

// PayloadExpect is "at this callback of the dispatch, the payload had
// exactly these members non-zero (and this size)".
type PayloadExpect struct {
	Dispatch string `yaml:"dispatch" json:"dispatch"`
	// At is CONFIG_ENTER, CONFIG_EXIT, PASS_ENTER or PASS_EXIT.
	At   string  `yaml:"at" json:"at"`
	Pass *uint64 `yaml:"pass,omitempty" json:"pass,omitempty"`
	// Members lists the non-zero members by the reference's names.
	Members []string `yaml:"members,omitempty" json:"members,omitempty"`
	Size    *uint64  `yaml:"size,omitempty" json:"size,omitempty"`
}

// CountersExpect is "the counter records of this dispatch (in this pass,
// from this context) carry exactly these counters" (Names), and "each of
// these counters reads a value in its range, in every such record that
// carries it and in at least one" (Values).
type CountersExpect struct {
	Dispatch string           `yaml:"dispatch" json:"dispatch"`
	Pass     *uint64          `yaml:"pass,omitempty" json:"pass,omitempty"`
	Context  string           `yaml:"context,omitempty" json:"context,omitempty"`
	Names    []string         `yaml:"names,omitempty" json:"names,omitempty"`
	Values   map[string]Count `yaml:"values,omitempty" json:"values,omitempty"`
}

// RecordCount is the number of records of a service, narrowed to one
// dispatch, one pass and one context where given.
type RecordCount struct {
	Service  string  `yaml:"service" json:"service"`
	Dispatch string  `yaml:"dispatch,omitempty" json:"dispatch,omitempty"`
	Pass     *uint64 `yaml:"pass,omitempty" json:"pass,omitempty"`
	Context  string  `yaml:"context,omitempty" json:"context,omitempty"`
	Count    Count   `yaml:"count" json:"count"`
}
