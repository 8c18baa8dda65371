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
	MisuseWindows     = []string{"CONFIG_ENTER", "CONFIG_EXIT", "PASS_ENTER", "PASS_EXIT"}
	WarningCodes      = []string{"pass_count_zero_without_continue", "multi_packet_submission",
		"graph_launch", "snapshot_incomplete", "service_conflict"}
	ServiceNames = []string{"counter_collection", "kernel_trace", "device_counting",
		"pc_sampling", "spm", "thread_trace"}
	RuleFamilies = []string{"API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP",
		"COR", "LCX", "SVC", "AGT", "RPV"}
	Capabilities = []string{"indefinite", "local-contexts", "concurrency", "pc-sampling",
		"spm", "thread-trace", "device-counting", "multi-agent", "counters", "snapshot-failure", "nvidia-counters"}
	TimestampChecks = []string{"differ_per_pass"}
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
