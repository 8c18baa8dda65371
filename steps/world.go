// Package steps holds the godog step definitions of the conformance
// features (features/*.feature). A scenario's Given and When steps build a
// spec.Spec; the first Then step runs it through runner.Run, the pipeline
// of the CLI (spec -> target -> trace -> checks); every Then step judges
// only the trace or what the application observed. Scenario state lives in
// the context.Context, so scenarios run concurrently.
package steps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

// world is one scenario: the spec being built, and once run, its result.
type world struct {
	s       spec.Spec
	faults  replay.Faults
	machine machineFaults
	envSet  []string // environment variables a step set, unset after
	// plans are what the scenario changed of one dispatch's plan.
	plans     map[string]*spec.Plan
	planOrder []string

	ran bool
	res runner.Result
	// oneRun is what the application's buffers hold after the same
	// application ran once with no tool at all (for "the result of one run").
	oneRun map[string][]int64
}

type worldKey struct{}

func newWorld(ctx context.Context) context.Context {
	w := &world{faults: replay.Faults{}}
	w.s = spec.Spec{Version: spec.Version, Name: "scenario"}
	return context.WithValue(ctx, worldKey{}, w)
}

func get(ctx context.Context) *world {
	w, _ := ctx.Value(worldKey{}).(*world)
	if w == nil {
		panic("steps: no scenario state in the context")
	}
	return w
}

// runTimeout bounds one scenario's run: a hang is a failure, never a stall.
const runTimeout = 20 * time.Second

// result runs the spec once (at the first Then step) and returns the result.
func (w *world) result(ctx context.Context) (*runner.Result, error) {
	if w.ran {
		return &w.res, nil
	}
	w.ran = true
	if err := w.applyPlans(); err != nil {
		return nil, err
	}
	w.applyMachine()
	w.applyRequires()
	if err := spec.Validate(w.s); err != nil {
		return nil, fmt.Errorf("the scenario builds an invalid spec: %w", err)
	}
	w.res = runner.Run(ctx, w.s, runner.Options{Target: w.target(), Timeout: runTimeout})
	if w.res.SkipReason != "" {
		return nil, fmt.Errorf("the target skipped the scenario: %s", w.res.SkipReason)
	}
	return &w.res, nil
}

// events returns the events of the run.
func (w *world) events(ctx context.Context) ([]trace.Event, error) {
	r, err := w.result(ctx)
	if err != nil {
		return nil, err
	}
	return r.Trace.Events, nil
}

// reference runs the application alone (no contexts, no tool) and keeps
// the leading values of each buffer it reads back at the end.
func (w *world) reference(ctx context.Context) (map[string][]int64, error) {
	if w.oneRun != nil {
		return w.oneRun, nil
	}
	s := w.s
	s.Name = w.s.Name + "-one-run"
	s.Contexts, s.Tool, s.Expect = nil, spec.Tool{}, spec.Expect{}
	s.Application.Dispatches = append([]spec.Dispatch(nil), s.Application.Dispatches...)
	for i := range s.Application.Dispatches {
		s.Application.Dispatches[i].Plan = nil
		s.Application.Dispatches[i].During = nil
	}
	r := runner.Run(ctx, s, runner.Options{Target: simtarget.Sim{}, Timeout: runTimeout})
	if r.Err != nil {
		return nil, fmt.Errorf("the application alone did not run: %w", r.Err)
	}
	w.oneRun = map[string][]int64{}
	for _, e := range r.Trace.Events {
		if e.Type == trace.AppMemory {
			w.oneRun[e.Buffer] = elementsOf(e)
		}
	}
	return w.oneRun, nil
}

// violations quotes the oracle failures of a result, one per paragraph.
func violations(vs []check.Violation) string {
	if len(vs) == 0 {
		return "(none)"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Error()
	}
	return strings.Join(parts, "\n")
}

// failf is a step failure that also quotes what the rule oracles reported,
// since that usually explains the failure.
func (w *world) failf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if w.ran && (len(w.res.Violations) > 0 || w.res.Err != nil) {
		msg += "\nthe rule checks reported:\n" + violations(w.res.Violations)
		if w.res.Err != nil {
			msg += "\nthe run failed: " + w.res.Err.Error()
		}
	}
	return fmt.Errorf("%s", msg)
}

// earned keeps a scenario from passing on a rule it never showed: every
// rule it is tagged with that the oracles judge must have been examined in
// its trace (pass or fail), not left unexercised.
func (w *world) earned(scn *godog.Scenario) error {
	var idle []string
	for _, tag := range scn.Tags {
		id := strings.TrimPrefix(tag.Name, "@")
		for _, rr := range w.res.Rules {
			if rr.Rule == id && rr.Verdict == check.NotExercised {
				idle = append(idle, id)
			}
		}
	}
	if len(idle) > 0 {
		return fmt.Errorf("the scenario is tagged %s, but no oracle examined an instance of %s in its trace: the scenario does not show what its tags claim", strings.Join(idle, ", "), strings.Join(idle, ", "))
	}
	return nil
}
