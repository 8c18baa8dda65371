package replay

import (
	"fmt"
	"sort"
	"strings"
)

// Fault is a known bug the engine can plant on purpose, so that tests can
// show which oracle catches it (docs/faults.md).
type Fault string

// The planted faults and the rule each breaks.
const (
	FaultCompletionEveryPass         Fault = "completion_every_pass"           // CMP-1, CMP-2
	FaultCompletionBeforeConfigExit  Fault = "completion_before_config_exit"   // CMP-2
	FaultDispatchIDPerPass           Fault = "dispatch_id_per_pass"            // DID-1..3
	FaultContinueAfterLastPass       Fault = "continue_after_last_pass"        // CONT-2
	FaultSkipRestore                 Fault = "skip_restore"                    // MEM-2, MEM-3
	FaultRestoreAfterLastPass        Fault = "restore_after_last_pass"         // MEM-3
	FaultLocalToggleLeaks            Fault = "local_toggle_leaks"              // LCX-4
	FaultUserDataNotReseeded         Fault = "user_data_not_reseeded"          // UD-2
	FaultExternalCorrelationReused   Fault = "external_correlation_reused"     // COR-3
	FaultSnapshotWhenNotReplayed     Fault = "snapshot_when_not_replayed"      // MEM-1
	FaultPassCountCalledTwice        Fault = "pass_count_called_twice"         // CB-3
	FaultSkipLastPassExit            Fault = "skip_last_pass_exit"             // CB-2, CONT-4
	FaultIndefiniteTotalNonZero      Fault = "indefinite_total_nonzero"        // PC-5
	FaultPassFieldsInConfig          Fault = "pass_fields_in_config"           // API-6
	FaultIgnoreContinue              Fault = "ignore_continue"                 // PC-4
	FaultCorrelationPerPass          Fault = "correlation_per_pass"            // COR-1
	FaultNoAgentLock                 Fault = "no_agent_lock"                   // MEM-6
	FaultLocalToggleAnywhere         Fault = "local_toggle_anywhere"           // LCX-2
	FaultPCSamplingHonoursStop       Fault = "pc_sampling_honours_stop"        // SVC-2
	FaultReplaySinglePass            Fault = "replay_single_pass"              // PC-2
	FaultActivateWithoutConfig       Fault = "activate_without_config"         // ACT-3
	FaultReplayZeroWithoutContinue   Fault = "replay_zero_without_continue"    // PC-6
	FaultWarnEveryTime               Fault = "warn_every_time"                 // PC-6, ACT-6
	FaultReuseFirstPassTimestamps    Fault = "reuse_first_pass_timestamps"     // DID-4
	FaultLocalStartNotStartedAllowed Fault = "local_start_not_started_allowed" // LCX-7
)

var allFaults = []Fault{
	FaultCompletionEveryPass, FaultCompletionBeforeConfigExit, FaultDispatchIDPerPass,
	FaultContinueAfterLastPass, FaultSkipRestore, FaultRestoreAfterLastPass,
	FaultLocalToggleLeaks, FaultUserDataNotReseeded, FaultExternalCorrelationReused,
	FaultSnapshotWhenNotReplayed, FaultPassCountCalledTwice, FaultSkipLastPassExit,
	FaultIndefiniteTotalNonZero, FaultPassFieldsInConfig, FaultIgnoreContinue,
	FaultCorrelationPerPass, FaultNoAgentLock, FaultLocalToggleAnywhere,
	FaultPCSamplingHonoursStop, FaultReplaySinglePass, FaultActivateWithoutConfig,
	FaultReplayZeroWithoutContinue, FaultWarnEveryTime, FaultReuseFirstPassTimestamps,
	FaultLocalStartNotStartedAllowed,
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
