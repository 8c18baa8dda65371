package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/trace"
)

// NotSeenAt lists, per profile, the planted faults that no observation of
// that profile can show under one of the rules they break, with why. The
// black-box and runtime matrices log them and fail once one is caught, so
// that the list stays true (docs/faults.md).
var NotSeenAt = map[string]map[replay.Fault]string{
	"black-box": {
		replay.FaultSnapshotWhenNotReplayed: snapshotIsARead,
		replay.FaultSnapshotSilently:        snapshotIsARead,
		replay.FaultRestoreMisreported:      onlyTheClaimIsWrong,
		replay.FaultSnapshotSavesKernArg: "MEM-4: the kernel only reads its kernel-argument buffer, so saving it and writing it " +
			"back changes no byte a tool or an application could copy; the runtime's reads show the snapshot took it",
	},
	"runtime": {
		replay.FaultRestoreMisreported: onlyTheClaimIsWrong,
	},
}

const (
	snapshotIsARead = "MEM-1: a snapshot of a dispatch that is not replayed only reads memory: " +
		"nothing a tool or an application sees changes; the runtime's copies or the SDK's account show it"
	onlyTheClaimIsWrong = "MEM-2: memory is restored right and only the SDK's account of it (restore.bytes) " +
		"is wrong: without the sdk source there is no claim to contradict"
)

// profileSources are the sources of the narrower profiles.
var profileSources = map[string][]trace.Source{
	"black-box": {trace.SourceTool, trace.SourceApp},
	"runtime":   {trace.SourceTool, trace.SourceApp, trace.SourceRuntime},
}

// TestMatrixAtProfiles plants every fault, one at a time, and runs the
// library as a port at the black-box and at the runtime profile reports it:
// each fault must be reported under one of the rules it breaks, or be
// listed in NotSeenAt with the reason no observation of the profile can
// show it.
//
//	go test ./internal/faults -run TestMatrixAtProfiles -v
func TestMatrixAtProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the library once per fault and profile")
	}
	specs := library(t)
	faults := replay.AllFaults()
	for _, profile := range []string{"black-box", "runtime"} {
		t.Run(profile, func(t *testing.T) {
			catches := judgeEach(faults, func(fs replay.Faults) []Outcome {
				return RunAt(context.Background(), specs, fs, 2, profileSources[profile])
			})
			var b strings.Builder
			caught := 0
			for _, c := range catches {
				fmt.Fprintf(&b, "%-34s meant %-18s caught %v\n", c.Fault, strings.Join(Catches[c.Fault], ","), Rules(c.ByOracle))
				why, listed := NotSeenAt[profile][c.Fault]
				switch {
				case c.Caught() && listed:
					t.Errorf("%s: fault %s is now caught (%v): remove it from NotSeenAt", profile, c.Fault, Rules(c.ByOracle))
				case c.Caught():
					caught++
				case listed:
					t.Logf("%s: fault %s not seen, as listed: %s", profile, c.Fault, why)
				default:
					t.Errorf("%s: fault %s: no spec reported any of %v (expectations that failed: %v; other rules: %v)",
						profile, c.Fault, Catches[c.Fault], c.ByExpectation, Rules(c.Other))
				}
			}
			t.Logf("%s: %d of %d planted faults caught under their rules\n%s", profile, caught, len(catches), b.String())
		})
	}
}
