package main

import (
	"fmt"
	"strings"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/cuda"
	"github.com/replayspec/replayspec/target/exec"
	"github.com/replayspec/replayspec/target/sim"
)

// openTarget returns the implementation a --target value names. This is
// the one place where the pipeline (runner, check, report) meets the
// implementations: nothing in the contract packages imports them.
func openTarget(name string, faults replay.Faults) (target.Target, error) {
	if len(faults) > 0 && name != "" && name != "sim" {
		return nil, fmt.Errorf("--fault plants bugs in the reference engine on the simulator; target %q cannot take it (drop --fault, or use --target sim)", name)
	}
	switch {
	case name == "" || name == "sim":
		return simtarget.Sim{Faults: faults}, nil
	case name == "cuda":
		return cudatarget.Open()
	case name == "rocr":
		return nil, &target.Unavailable{Reason: "target rocr: no AMD GPU runtime is available to this build; see docs/architecture.md"}
	case strings.HasPrefix(name, "exec:"):
		return exectarget.Open(strings.TrimPrefix(name, "exec:"))
	}
	return nil, fmt.Errorf("unknown target %q: use sim, cuda, rocr or exec:COMMAND", name)
}
