package cudatarget_test

import (
	"context"
	"errors"
	"testing"

	"github.com/replayspec/replayspec/internal/cudatarget"
	"github.com/replayspec/replayspec/internal/simtarget"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/trace"
)

// TestCUDALibrary runs the spec library on a real GPU and requires the
// same verdicts as the simulator, and traces that agree with the
// simulator's on everything but time and counter values. Without a CUDA
// driver or device it skips with the reason.
func TestCUDALibrary(t *testing.T) {
	gpu, err := cudatarget.Open()
	var u *target.Unavailable
	if errors.As(err, &u) {
		t.Skip(u.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	specs, err := runner.Collect([]string{"../../specs", "../../specs/nvidia"})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, s := range specs {
		onGPU := runner.Run(context.Background(), s, runner.Options{Target: gpu})
		if onGPU.Verdict() == runner.Skip {
			t.Logf("%s: skipped: %s", s.Name, onGPU.SkipReason)
			continue
		}
		ran++
		if onGPU.Verdict() != runner.Pass {
			t.Errorf("%s on cuda: %s: err=%v violations=%v", s.Name, onGPU.Verdict(), onGPU.Err, onGPU.Violations)
			continue
		}
		if threads(s) > 1 {
			continue // free threads interleave differently from the simulator's schedule
		}
		onSim := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		if onSim.Verdict() == runner.Skip {
			continue // NVIDIA metric specs: the simulator has no model of them
		}
		if a, b := comparable(onSim.Trace), comparable(onGPU.Trace); a != b {
			t.Errorf("%s: the cuda trace differs from the simulator's beyond time and counters", s.Name)
		}
	}
	t.Logf("%d specs ran on the GPU", ran)
}

func threads(s spec.Spec) int {
	seen := map[uint64]bool{}
	for _, d := range spec.Defaults(s).Application.Dispatches {
		seen[d.Thread] = true
	}
	return len(seen)
}

// comparable strips what real hardware legitimately changes: clocks,
// counter values and the agent's identity; and the thread of a signal
// decremented by software (the SDK firing the completion), which the
// simulator attributes to the running thread and CUDA cannot see.
func comparable(t trace.Trace) string {
	var out []trace.Event
	for _, e := range t.Events {
		if e.Type == trace.AgentInfo {
			continue
		}
		e.Time, e.Start, e.End, e.Counters, e.Seq = 0, 0, 0, nil, 0
		if e.Type == trace.Signal {
			e.Thread = 0
		}
		out = append(out, e)
	}
	return string(trace.Marshal(trace.Trace{Events: out}))
}
