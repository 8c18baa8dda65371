package spec

import (
	"regexp"

	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/trace"
)

// The closed vocabularies of the format. Those the trace and the rule
// catalogue already name are taken from there (one list each); schema.json
// repeats them, and the schema test keeps the two in step.
var (
	SupportedVersions = []int{Version}
	AgentKinds        = strs(trace.Families)
	BufferKinds       = []string{"device", "fine", "host", "kernarg"}
	ReplayOperations  = strs([]trace.Op{trace.OpConfig, trace.OpPass})
	CorrelationModes  = []string{"increment", "fixed"}
	MisuseCalls       = []string{MisuseLocalStart, MisuseLocalStop}
	MisuseWindows     = []string{WindowConfigEnter, WindowConfigExit, WindowPassEnter, WindowPassExit}
	WarningCodes      = strs([]trace.WarningCode{trace.WarnPassCountZeroWithoutContinue, trace.WarnMultiPacketSubmission,
		trace.WarnGraphLaunch, trace.WarnSnapshotIncomplete, trace.WarnServiceConflict, trace.WarnReentrantDispatch})
	ServiceNames = strs(trace.AllServices)
	RuleFamilies = rules.Families()
	Capabilities = []string{"indefinite", "local-contexts", "concurrency", "pc-sampling",
		"spm", "thread-trace", "device-counting", "multi-agent", "counters", "snapshot-failure", "nvidia-counters",
		CapRestoreFailure, CapToolActions, CapMemoryActions, CapRepeat}
	TimestampChecks = []string{"differ_per_pass"}
	// CallbackWindows are the replay callbacks a call can be made from.
	CallbackWindows = []string{WindowConfigEnter, WindowConfigExit, WindowPassEnter, WindowPassExit}
	// ActionWindows are where tool.plan.actions are made: the replay
	// callbacks and a service's record callback within a pass.
	ActionWindows = append(append([]string(nil), CallbackWindows...), WindowRecord)
	ActionCalls   = []string{ActionStartContext, ActionStopContext, ActionDispatch, ActionFree, ActionAlloc}
	// PayloadMembers are the replay payload's members, in the reference's
	// order (API-6); traces name them the same way.
	PayloadMembers = func() []string {
		var out []string
		for _, m := range trace.PayloadLayout {
			out = append(out, m.Member)
		}
		return out
	}()
	// UserDataPoints are where expect.user_data looks: the callbacks and
	// the tool's two functions.
	UserDataPoints = []string{WindowConfigEnter, WindowConfigExit, WindowPassEnter, WindowPassExit,
		PointPassCount, PointContinue}
)

// Capabilities of new behaviours that a target must claim.
const (
	CapRestoreFailure = "restore-failure"
	CapToolActions    = "tool-actions"
	// CapMemoryActions: the tool frees and allocates buffers from inside
	// its callbacks (tool.plan.actions, call free and alloc).
	CapMemoryActions = "memory-actions"
	// CapRepeat: the application submits a dispatch with repeat N times,
	// labelling repetition K NAME#K (Dispatch.Repeat). Inferred from use.
	CapRepeat = "repeat"
)

// The replay callbacks, as specs name them.
const (
	WindowConfigEnter = "CONFIG_ENTER"
	WindowConfigExit  = "CONFIG_EXIT"
	WindowPassEnter   = "PASS_ENTER"
	WindowPassExit    = "PASS_EXIT"
	// WindowRecord is the tool's first service record of a pass, delivered
	// inside the pass (CB-4): an action there is made from a service
	// callback within a pass (MEM-6, clarified 2026-12-01).
	WindowRecord = "RECORD"
)

// The calls a tool can make from a callback (tool.plan.actions[].call).
const (
	ActionStartContext = "start_context"
	ActionStopContext  = "stop_context"
	ActionDispatch     = "dispatch"
	ActionFree         = "free"
	ActionAlloc        = "alloc"
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
var ruleID = rules.IDPattern

// strs turns a list of a string type into strings.
func strs[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

// namePattern keeps names usable in key paths, Gherkin steps and file
// names: no spaces, no dots, no brackets.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

const nameRule = "letters, digits, _ and - (not first)"
