package simtarget_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/replayspec/replayspec/runner"
	"github.com/replayspec/replayspec/target/sim"
)

// The pipeline allocates the same per unit whatever the size: a spec four
// times as large allocates at most 1.5 times as much per pass, dispatch or
// thread. Bytes allocated do not depend on the machine's load, so this
// guards the scaling curves of docs/benchmarks.md (an oracle that copies
// a dispatch's events for every pass, say) without timing anything.
func TestAllocationPerUnitIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs specs of thousands of passes")
	}
	for _, tc := range []struct {
		name string
		of   func(n int) shape
		n    int
	}{
		{"passes of a never-ending loop", func(n int) shape { return shape{passes: uint64(n), forever: true, elements: 64} }, 500},
		{"passes of a fixed loop", func(n int) shape { return shape{passes: uint64(n), elements: 64} }, 500},
		{"dispatches", func(n int) shape { return shape{passes: 3, dispatches: n, elements: 64} }, 100},
		{"threads", func(n int) shape { return shape{passes: 3, dispatches: n, threads: n, elements: 64} }, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small, large := allocatedPer(t, tc.of(tc.n), tc.n), allocatedPer(t, tc.of(4*tc.n), 4*tc.n)
			if large > 1.5*small {
				t.Errorf("%.0f bytes a unit at %d, %.0f at %d: allocation grows faster than the spec", small, tc.n, large, 4*tc.n)
			}
		})
	}
}

// allocatedPer runs the spec of shape sh through the pipeline and returns
// the bytes it allocated per unit.
func allocatedPer(t *testing.T, sh shape, units int) float64 {
	s := shapedSpec(sh)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := runner.Run(context.Background(), s, runner.Options{Target: simtarget.Sim{}})
	runtime.ReadMemStats(&after)
	if r.Err != nil || len(r.Violations) > 0 {
		t.Fatalf("err %v, violations %v", r.Err, r.Violations)
	}
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(units)
}
