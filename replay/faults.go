package replay

import (
	"fmt"
	"sort"
	"strings"
)

// Fault is a known bug the engine can plant on purpose, so that tests can
// show which oracle catches it (docs/faults.md).
type Fault string

// The planted faults. faultTable below says which rules each breaks.
const (
	FaultCompletionEveryPass         Fault = "completion_every_pass"
	FaultCompletionBeforeConfigExit  Fault = "completion_before_config_exit"
	FaultDispatchIDPerPass           Fault = "dispatch_id_per_pass"
	FaultContinueAfterLastPass       Fault = "continue_after_last_pass"
	FaultSkipRestore                 Fault = "skip_restore"
	FaultRestoreAfterLastPass        Fault = "restore_after_last_pass"
	FaultLocalToggleLeaks            Fault = "local_toggle_leaks"
	FaultUserDataNotReseeded         Fault = "user_data_not_reseeded"
	FaultExternalCorrelationReused   Fault = "external_correlation_reused"
	FaultSnapshotWhenNotReplayed     Fault = "snapshot_when_not_replayed"
	FaultPassCountCalledTwice        Fault = "pass_count_called_twice"
	FaultSkipLastPassExit            Fault = "skip_last_pass_exit"
	FaultIndefiniteTotalNonZero      Fault = "indefinite_total_nonzero"
	FaultPassFieldsInConfig          Fault = "pass_fields_in_config"
	FaultIgnoreContinue              Fault = "ignore_continue"
	FaultCorrelationPerPass          Fault = "correlation_per_pass"
	FaultNoAgentLock                 Fault = "no_agent_lock"
	FaultLocalToggleAnywhere         Fault = "local_toggle_anywhere"
	FaultPCSamplingHonoursStop       Fault = "pc_sampling_honours_stop"
	FaultReplaySinglePass            Fault = "replay_single_pass"
	FaultActivateWithoutConfig       Fault = "activate_without_config"
	FaultReplayZeroWithoutContinue   Fault = "replay_zero_without_continue"
	FaultWarnEveryTime               Fault = "warn_every_time"
	FaultReuseFirstPassTimestamps    Fault = "reuse_first_pass_timestamps"
	FaultLocalStartNotStartedAllowed Fault = "local_start_not_started_allowed"

	// What trace v2 records, and the runtime's own account, can catch.
	FaultSnapshotSilently     Fault = "snapshot_silently"
	FaultRestoreMisreported   Fault = "restore_misreported"
	FaultSnapshotUnsavedKinds Fault = "snapshot_unsaved_kinds"
	FaultSnapshotSkipsBuffer  Fault = "snapshot_skips_buffer"
	FaultPayloadSizeShort     Fault = "payload_size_short"
	FaultDispatchInfoGrid     Fault = "dispatch_info_grid"
	FaultUserDataWriteLost    Fault = "user_data_write_lost"
	FaultReplayMultiPacket    Fault = "replay_multi_packet"
	FaultActivateUnstarted    Fault = "activate_unstarted"

	// The tool's own dispatches inside a window (MEM-6, clarified 2026-12-01).
	FaultToolDispatchNotCandidate Fault = "tool_dispatch_not_candidate"
	FaultReplayReentrant          Fault = "replay_reentrant"
	FaultDeclineNested            Fault = "decline_nested"
	FaultWaitOnOwnWindow          Fault = "wait_on_own_window"
	// Situations beyond one loop on one thread (issue 20): later and
	// concurrent loops, frees during a loop, the tool's own dispatches.
	FaultLocalOverridePerProcess       Fault = "local_override_per_process"
	FaultLocalOverrideNextLoop         Fault = "local_override_next_loop"
	FaultLocalStartIgnored             Fault = "local_start_ignored"
	FaultToolDispatchMasked            Fault = "tool_dispatch_masked"
	FaultRestoreIntoFreed              Fault = "restore_into_freed"
	FaultSnapshotSavesKernArg          Fault = "snapshot_saves_kernarg"
	FaultIndefiniteOnePassNoCompletion Fault = "indefinite_one_pass_no_completion"
	FaultWarnOncePerThread             Fault = "warn_once_per_thread"
	FaultPCSamplingHonoursStopOnMI     Fault = "pc_sampling_honours_stop_on_mi"
	FaultBarrierEndsSubmission         Fault = "barrier_ends_submission"
	// What the application's API calls, as API tracing shows them, can catch.
	FaultAncestorProcessWide Fault = "ancestor_process_wide"
)

// faultTable is the one list of planted faults, each with the rules it is
// meant to break: a run with it planted must show a violation of one.
var faultTable = []struct {
	fault  Fault
	breaks []string
	plants string // what goes wrong, for docs/faults.md
}{
	{FaultCompletionEveryPass, []string{"CMP-1", "CMP-2"}, "every pass's kernel carries the application's completion signal (fires N times, before the loop ends)"},
	{FaultCompletionBeforeConfigExit, []string{"CMP-2"}, "the one completion fires before CONFIG EXIT instead of after it"},
	{FaultDispatchIDPerPass, []string{"DID-1", "DID-2", "DID-3"}, "passes after the first reserve a fresh dispatch id"},
	{FaultContinueAfterLastPass, []string{"CONT-2"}, "a fixed loop also consults replay_continue after its final pass"},
	{FaultSkipRestore, []string{"MEM-2", "MEM-3"}, "no restore before passes 1..N-1"},
	{FaultRestoreAfterLastPass, []string{"MEM-3"}, "an extra restore after the last pass (memory ends as before the dispatch)"},
	{FaultLocalToggleLeaks, []string{"LCX-4"}, "a loop's local mask outlives the loop and masks the thread's later dispatches"},
	{FaultUserDataNotReseeded, []string{"UD-2"}, "a user-data write made in a PASS carries into the next pass"},
	{FaultExternalCorrelationReused, []string{"COR-3"}, "the external correlation callback is asked on pass 0 only; later passes reuse its id"},
	{FaultSnapshotWhenNotReplayed, []string{"MEM-1"}, "a dispatch that is not replayed (PC-1, PC-2, PC-6) is snapshotted anyway"},
	{FaultPassCountCalledTwice, []string{"CB-3"}, "replay_pass_count is called twice per dispatch"},
	{FaultSkipLastPassExit, []string{"CB-2", "CONT-4"}, "the last pass of a fixed loop gets no PASS EXIT"},
	{FaultIndefiniteTotalNonZero, []string{"PC-5"}, "an indefinite loop reports total_passes = pass+1 instead of 0"},
	{FaultPassFieldsInConfig, []string{"API-6"}, "CONFIG payloads carry current_pass and total_passes 1"},
	{FaultIgnoreContinue, []string{"PC-4"}, "a fixed loop ignores replay_continue returning 0"},
	{FaultCorrelationPerPass, []string{"COR-1"}, "passes after the first get a fresh internal correlation id"},
	{FaultNoAgentLock, []string{"MEM-6"}, "a replay loop does not lock its agent; other dispatches run between its passes"},
	{FaultLocalToggleAnywhere, []string{"LCX-2"}, "local start/stop succeed outside PASS ENTER"},
	{FaultPCSamplingHonoursStop, []string{"SVC-2"}, "PC sampling and device counting obey local toggles"},
	{FaultReplaySinglePass, []string{"PC-2"}, "a pass count of 1 is replayed (snapshot, one PASS)"},
	{FaultActivateWithoutConfig, []string{"ACT-3"}, "a KERNEL_REPLAY subscription without CONFIG (PASS only) activates replay"},
	{FaultReplayZeroWithoutContinue, []string{"PC-6"}, "pass count 0 without replay_continue is replayed (2 passes) instead of rejected"},
	{FaultWarnEveryTime, []string{"PC-6", "ACT-6"}, "warnings are printed every time, not once per process"},
	{FaultReuseFirstPassTimestamps, []string{"DID-4"}, "records of every pass carry pass 0's start/end timestamps"},
	{FaultLocalStartNotStartedAllowed, []string{"LCX-7"}, "a local start of a context not active before the loop succeeds"},
	{FaultSnapshotSilently, []string{"MEM-1"}, "a dispatch that is not replayed is snapshotted, and the SDK reports nothing (only the runtime saw it)"},
	{FaultRestoreMisreported, []string{"MEM-2"}, "every restore claims a page more than the runtime wrote"},
	{FaultSnapshotUnsavedKinds, []string{"MEM-4"}, "the snapshot also saves fine-grained, host and kernel-argument memory of the agent"},
	{FaultSnapshotSkipsBuffer, []string{"MEM-4", "MEM-2"}, "the snapshot leaves the last tracked device buffer out"},
	{FaultPayloadSizeShort, []string{"API-5"}, "the payload says it is 104 bytes, short of its last members (the engine's old size)"},
	{FaultDispatchInfoGrid, []string{"API-5"}, "dispatch_info reports twice the grid the application launched"},
	{FaultUserDataWriteLost, []string{"UD-2"}, "what the tool writes in PASS ENTER does not reach that pass's EXIT and continue"},
	{FaultReplayMultiPacket, []string{"ACT-6"}, "the kernel of a multi-packet submission is replayed"},
	{FaultActivateUnstarted, []string{"ACT-3"}, "a configured replay context that was never started activates replay (while another context is started)"},
	{FaultToolDispatchNotCandidate, []string{"MEM-6"}, "a dispatch the tool writes inside a replay window is no candidate: no CONFIG, no pass count, it runs once (the withdrawn decision 11)"},
	{FaultReplayReentrant, []string{"MEM-6"}, "a dispatch the tool writes inside a window on that window's own agent is replayed in a window of its own there, not declined"},
	{FaultDeclineNested, []string{"MEM-6"}, "a dispatch the tool writes inside a window on another agent is declined and runs once, instead of opening its own window there"},
	{FaultWaitOnOwnWindow, []string{"MEM-6"}, "a declined dispatch waits for its agent's lock, which its own thread's window holds (the thread waits for itself)"},
	{FaultLocalOverridePerProcess, []string{"LCX-6", "LCX-3"}, "the loops' local override is one for the process: a local call masks every thread's loop, and a loop that is about to take its agent clears it"},
	{FaultLocalOverrideNextLoop, []string{"LCX-4"}, "a loop's local override is kept when the loop ends and the thread's next loop starts with it"},
	{FaultLocalStartIgnored, []string{"SVC-1", "LCX-3"}, "a local start after a local stop of the same context in one loop returns SUCCESS but the stop holds to the loop's end"},
	{FaultToolDispatchMasked, []string{"LCX-6"}, "the tool's own dispatch, written from a replay callback, is prepared under the loop's local override"},
	{FaultRestoreIntoFreed, []string{"MEM-4"}, "the SDK saves and restores by address, whole regions, and writes back a region freed since the snapshot (into whatever lives there now)"},
	{FaultSnapshotSavesKernArg, []string{"MEM-4"}, "the snapshot also saves the agent's kernel-argument memory"},
	{FaultIndefiniteOnePassNoCompletion, []string{"CMP-1"}, "an indefinite loop that ends after its first pass never fires the application's completion"},
	{FaultWarnOncePerThread, []string{"ACT-6"}, "the multi-packet and graph warnings are printed once per thread, not once per process"},
	{FaultPCSamplingHonoursStopOnMI, []string{"SVC-2"}, "PC sampling and device counting obey local stops on MI200 and MI300 agents"},
	{FaultBarrierEndsSubmission, []string{"DID-1", "DID-2", "DID-3"}, "in a multi-packet submission, kernel packets after a barrier packet get no dispatch id and no services"},
	{FaultAncestorProcessWide, []string{"COR-1", "COR-2"}, "an API call's ancestor is the process's last entered call (one variable for every thread), not its own thread's innermost open call; a dispatch inherits it"},
}

var allFaults = func() []Fault {
	out := make([]Fault, len(faultTable))
	for i, f := range faultTable {
		out[i] = f.fault
	}
	return out
}()

// Plants says what goes wrong when fault f is planted.
func Plants(f Fault) string {
	for _, t := range faultTable {
		if t.fault == f {
			return t.plants
		}
	}
	return ""
}

// Breaks returns the rules fault f is meant to break.
func Breaks(f Fault) []string {
	for _, t := range faultTable {
		if t.fault == f {
			return append([]string(nil), t.breaks...)
		}
	}
	return nil
}

// AllFaults lists every fault the engine can plant.
func AllFaults() []Fault { return append([]Fault(nil), allFaults...) }

// Faults is a set of planted faults; the zero value plants none.
type Faults map[Fault]bool

// Has reports whether f is planted.
func (fs Faults) Has(f Fault) bool { return fs[f] }

// ParseFaults reads a comma-separated list of fault names.
func ParseFaults(list string) (Faults, error) {
	fs := Faults{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		known := false
		for _, f := range allFaults {
			if string(f) == name {
				fs[f], known = true, true
			}
		}
		if !known {
			names := make([]string, len(allFaults))
			for i, f := range allFaults {
				names[i] = string(f)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("unknown fault %q; known faults: %s", name, strings.Join(names, ", "))
		}
	}
	return fs, nil
}
