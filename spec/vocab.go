package spec

import "regexp"

// The closed vocabularies of the format. schema.json repeats them; the
// schema test keeps the two in step.
var (
	SupportedVersions = []int{Version}
	AgentKinds        = []string{"MI200", "MI300", "consumer", "nvidia"}
	BufferKinds       = []string{"device", "fine", "host", "kernarg"}
	ReplayOperations  = []string{"CONFIG", "PASS"}
	CorrelationModes  = []string{"increment", "fixed"}
	MisuseCalls       = []string{MisuseLocalStart, MisuseLocalStop}
	MisuseWindows     = []string{WindowConfigEnter, WindowConfigExit, WindowPassEnter, WindowPassExit}
	WarningCodes      = []string{"pass_count_zero_without_continue", "multi_packet_submission",
		"graph_launch", "snapshot_incomplete", "service_conflict"}
	ServiceNames = []string{"counter_collection", "kernel_trace", "device_counting",
		"pc_sampling", "spm", "thread_trace"}
	RuleFamilies = []string{"API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP",
		"COR", "LCX", "SVC", "AGT", "RPV"}
	Capabilities = []string{"indefinite", "local-contexts", "concurrency", "pc-sampling",
		"spm", "thread-trace", "device-counting", "multi-agent", "counters", "snapshot-failure", "nvidia-counters",
		CapRestoreFailure, CapToolActions}
	TimestampChecks = []string{"differ_per_pass"}
	// CallbackWindows are the replay callbacks a call can be made from.
	CallbackWindows = []string{WindowConfigEnter, WindowConfigExit, WindowPassEnter, WindowPassExit}
	ActionCalls     = []string{ActionStartContext, ActionStopContext, ActionDispatch}
	// PayloadMembers are the replay payload's members, in the reference's
	// order (API-6); traces name them the same way.
	PayloadMembers = []string{"size", "dispatch_info", "current_pass", "total_passes",
		"replay_pass_count", "replay_continue", "replay_start_context", "replay_stop_context"}
	// UserDataPoints are where expect.user_data looks: the callbacks and
	// the tool's two functions.
	UserDataPoints = []string{WindowConfigEnter, WindowConfigExit, WindowPassEnter, WindowPassExit,
		PointPassCount, PointContinue}
)

// Capabilities of new behaviours that a target must claim.
const (
	CapRestoreFailure = "restore-failure"
	CapToolActions    = "tool-actions"
)

// The replay callbacks, as specs name them.
const (
	WindowConfigEnter = "CONFIG_ENTER"
	WindowConfigExit  = "CONFIG_EXIT"
	WindowPassEnter   = "PASS_ENTER"
	WindowPassExit    = "PASS_EXIT"
)

// The calls a tool can make from a callback (tool.plan.actions[].call).
const (
	ActionStartContext = "start_context"
	ActionStopContext  = "stop_context"
	ActionDispatch     = "dispatch"
)

// The tool's functions, as expect.user_data names them.
const (
	PointPassCount = "pass_count"
	PointContinue  = "continue"
)

// The deliberate misuses a tool can commit (tool.misuse[].call).
const (
	MisuseLocalStart = "local_start"
	MisuseLocalStop  = "local_stop"
)

// Limits on sizes the simulator can hold.
const MaxElements = 1 << 28

// ruleID is FAMILY-N; the family is checked against RuleFamilies.
var ruleID = regexp.MustCompile(`^([A-Z]+)-([1-9][0-9]*)$`)

// namePattern keeps names usable in key paths, Gherkin steps and file
// names: no spaces, no dots, no brackets.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

const nameRule = "letters, digits, _ and - (not first)"
