// Package target is the contract between the pipeline and an implementation
// under test: "run this spec, give me its trace". Implementations live
// elsewhere (the reference engine on the simulator, CUDA, an external port
// through the driver protocol) and are wired together by the CLI; nothing
// here knows any of them.
package target

import (
	"context"
	"errors"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Options for one run.
type Options struct {
	// Sink, when set, sees every event as it is recorded (streaming). The
	// event is the target's: a sink copies what it keeps and changes
	// nothing (a pointer, as a 704-byte event copied at every hand-over
	// was a tenth of a streamed pass).
	Sink func(*trace.Event)
	// Discard asks a target whose Sink sees every event (Streaming) not
	// to keep them as well: the trace it returns then has its header and
	// no events. A target may keep them anyway.
	Discard bool
}

// Target executes specs.
type Target interface {
	// Name is how --target names it.
	Name() string
	// Run executes s (defaults applied) and returns its trace. The trace
	// holds what was recorded even when err is not nil.
	Run(ctx context.Context, s spec.Spec, opts Options) (trace.Trace, error)
}

// Streaming is implemented by targets whose Sink sees each event as it is
// recorded, in the trace's order, and that can say their trace's header
// before they run: a caller can then write the trace as it is made (a
// driver behind exec: streams only once it has ended).
type Streaming interface {
	Header(s spec.Spec) trace.Header
}

// Repeatable is implemented by targets that record the same trace, event
// for event, every time they run the same spec (the simulator, scheduled):
// a caller that let the events go may run the spec again to have them.
type Repeatable interface {
	Repeatable() bool
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

// ErrOverBudget is wrapped by the error of a run that passed a budget the
// user sets (how much trace a driver may write). What was recorded was cut
// short, so it is never judged: a cut trace would show rule violations its
// implementation never made. The error names the budget and how to raise it.
var ErrOverBudget = errors.New("over budget")
