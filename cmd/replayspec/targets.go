package main

import (
	"flag"
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
// maxTraceMiB is the trace budget of an exec: driver for one spec (0: the
// default).
func openTarget(name string, faults replay.Faults, maxTraceMiB int64) (target.Target, error) {
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
		return exectarget.NewExec(strings.TrimPrefix(name, "exec:"), exectarget.ExecOptions{MaxBytes: maxTraceMiB << 20})
	}
	return nil, fmt.Errorf("unknown target %q: use sim, cuda, rocr or exec:COMMAND", name)
}

// traceBudget is the --max-trace-mib flag of the commands that run specs.
type traceBudget struct{ mib int64 }

func (b *traceBudget) add(fs *flag.FlagSet) {
	fs.Int64Var(&b.mib, "max-trace-mib", exectarget.DefaultMaxBytes>>20, "an exec: driver may write at most `MiB` of trace for one spec; past it the spec is one error naming this budget, and nothing is judged")
}

// check says what is wrong with the value given, or nil.
func (b *traceBudget) check() error {
	if b.mib < 1 || b.mib > maxOptionMiB {
		return fmt.Errorf("--max-trace-mib %d: want 1 to %d MiB", b.mib, maxOptionMiB)
	}
	return nil
}
