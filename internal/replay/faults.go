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
)

// faultTable is the one list of planted faults, each with the rules it is
// meant to break: a run with it planted must show a violation of one.
var faultTable = []struct {
	fault  Fault
	breaks []string
}{
	{FaultCompletionEveryPass, []string{"CMP-1", "CMP-2"}},
	{FaultCompletionBeforeConfigExit, []string{"CMP-2"}},
	{FaultDispatchIDPerPass, []string{"DID-1", "DID-2", "DID-3"}},
	{FaultContinueAfterLastPass, []string{"CONT-2"}},
	{FaultSkipRestore, []string{"MEM-2", "MEM-3"}},
	{FaultRestoreAfterLastPass, []string{"MEM-3"}},
	{FaultLocalToggleLeaks, []string{"LCX-4"}},
	{FaultUserDataNotReseeded, []string{"UD-2"}},
	{FaultExternalCorrelationReused, []string{"COR-3"}},
	{FaultSnapshotWhenNotReplayed, []string{"MEM-1"}},
	{FaultPassCountCalledTwice, []string{"CB-3"}},
	{FaultSkipLastPassExit, []string{"CB-2", "CONT-4"}},
	{FaultIndefiniteTotalNonZero, []string{"PC-5"}},
	{FaultPassFieldsInConfig, []string{"API-6"}},
	{FaultIgnoreContinue, []string{"PC-4"}},
	{FaultCorrelationPerPass, []string{"COR-1"}},
	{FaultNoAgentLock, []string{"MEM-6"}},
	{FaultLocalToggleAnywhere, []string{"LCX-2"}},
	{FaultPCSamplingHonoursStop, []string{"SVC-2"}},
	{FaultReplaySinglePass, []string{"PC-2"}},
	{FaultActivateWithoutConfig, []string{"ACT-3"}},
	{FaultReplayZeroWithoutContinue, []string{"PC-6"}},
	{FaultWarnEveryTime, []string{"PC-6", "ACT-6"}},
	{FaultReuseFirstPassTimestamps, []string{"DID-4"}},
	{FaultLocalStartNotStartedAllowed, []string{"LCX-7"}},
	{FaultSnapshotSilently, []string{"MEM-1"}},
	{FaultRestoreMisreported, []string{"MEM-2"}},
	{FaultSnapshotUnsavedKinds, []string{"MEM-4"}},
	{FaultSnapshotSkipsBuffer, []string{"MEM-4", "MEM-2"}},
	{FaultPayloadSizeShort, []string{"API-5"}},
	{FaultDispatchInfoGrid, []string{"API-5"}},
	{FaultUserDataWriteLost, []string{"UD-2"}},
	{FaultReplayMultiPacket, []string{"ACT-6"}},
	{FaultActivateUnstarted, []string{"ACT-3"}},
}

var allFaults = func() []Fault {
	out := make([]Fault, len(faultTable))
	for i, f := range faultTable {
		out[i] = f.fault
	}
	return out
}()

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
