package cudatarget_test

import (
	"context"
	"errors"
	"testing"

	"github.com/replayspec/replayspec/internal/tracediff"
	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/cuda"
	"github.com/replayspec/replayspec/target/sim"
)

// TestCUDALibrary runs the spec library on a real GPU and requires the
// same verdicts as the simulator, and traces that agree with the
// simulator's modulo what tracediff lets differ (clocks, counter values,
// ids' origins, addresses, thread interleaving, how much a restore
// writes). Without a CUDA driver or device it skips with the reason.
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
		onSim := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
		if onSim.Verdict() == runner.Skip {
			continue // NVIDIA metric specs: the simulator has no model of them
		}
		r := tracediff.Compare(onSim.Trace, onGPU.Trace, tracediff.Options{})
		for _, d := range r.Divergences {
			t.Errorf("%s: %s, step %d (touches %v): sim %q, cuda %q", s.Name, d.Dispatch, d.Step, d.Rules, d.A, d.B)
		}
		for _, v := range r.Verdicts {
			t.Errorf("%s: %s judged %s on sim, %s on cuda", s.Name, v.Rule, v.A, v.B)
		}
	}
	t.Logf("%d specs ran on the GPU", ran)
}
