// Package target runs a spec on an implementation under test and returns
// its trace: the reference engine on the simulator, on real hardware, or an
// external port through the driver protocol.
package target

import (
	"context"
	"fmt"
	"strings"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Options for one run.
type Options struct {
	// Faults plants known bugs in the reference engine (ignored by
	// external ports).
	Faults replay.Faults
	// Sink, when set, sees every event as it is recorded (streaming).
	Sink func(trace.Event)
}

// Target executes specs.
type Target interface {
	// Name is how --target names it.
	Name() string
	// Run executes s (defaults applied) and returns its trace. The trace
	// holds what was recorded even when err is not nil.
	Run(ctx context.Context, s spec.Spec, opts Options) (trace.Trace, error)
}

// Capable is implemented by targets that claim capabilities; a spec that
// requires one not claimed is skipped, never passed.
type Capable interface {
	Capabilities() []string
}

// Missing lists the spec's requirements a target does not claim.
func Missing(t Target, s spec.Spec) []string {
	c, ok := t.(Capable)
	if !ok {
		return nil
	}
	have := map[string]bool{}
	for _, x := range c.Capabilities() {
		have[x] = true
	}
	var miss []string
	for _, r := range s.Requires {
		if !have[r] {
			miss = append(miss, r)
		}
	}
	return miss
}

// Unavailable is returned when a target cannot run on this machine (no
// driver, no GPU). It is a usage problem, not a failed check.
type Unavailable struct{ Reason string }

func (u *Unavailable) Error() string { return u.Reason }

// Open returns the target a --target value names.
func Open(name string) (Target, error) {
	switch {
	case name == "" || name == "sim":
		return Sim{}, nil
	case name == "cuda":
		return openCUDA()
	case name == "rocr":
		return nil, &Unavailable{"target rocr: no AMD GPU runtime is available to this build; see docs/architecture.md"}
	case strings.HasPrefix(name, "exec:"):
		return openExec(strings.TrimPrefix(name, "exec:"))
	}
	return nil, fmt.Errorf("unknown target %q: use sim, cuda, rocr or exec:COMMAND", name)
}
