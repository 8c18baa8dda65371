package check

import (
	"math/rand/v2"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// randomDispatch is a dispatch of kernels and records with times, passes,
// services and contexts drawn from few values, so that they often meet.
func randomDispatch(r *rand.Rand) (*index, *dispatchView) {
	x := &index{instances: map[string]int{}, counted: make([]int, len(registry)), dispatches: map[uint64]*dispatchView{}}
	d := &dispatchView{id: 1}
	x.dispatches[1] = d
	services := []trace.Service{trace.KernelTrace, trace.CounterCollection, trace.PCSampling, trace.SPM}
	t := uint64(0)
	for range 2 + r.IntN(10) {
		if r.IntN(3) > 0 {
			t += uint64(r.IntN(3)) // at times the same, at times back
		} else {
			t -= min(t, uint64(r.IntN(3)))
		}
		e := trace.Event{Dispatch: 1, Start: t, End: t + uint64(r.IntN(2))}
		if r.IntN(8) == 0 {
			e.Start, e.End = 0, 0
		}
		if r.IntN(2) == 0 {
			e.Type = trace.Kernel
			d.kernels = append(d.kernels, len(x.ev))
		} else {
			e.Type = trace.Record
			e.Service = services[r.IntN(len(services))]
			e.Context = uint64(r.IntN(2))
			if r.IntN(10) > 0 {
				e.Pass = trace.U64(uint64(r.IntN(4)))
			}
			d.records = append(d.records, len(x.ev))
		}
		x.ev = append(x.ev, e)
	}
	x.windowOf = make([]int32, len(x.ev))
	for i := range x.windowOf {
		x.windowOf[i] = -1
	}
	return x, d
}

// Where the fast ways say the times and passes only grow, the maps find
// nothing alike, and the instances are the same: DID-4 and DID-5 judge as
// they did by the maps alone.
func TestAscendingAsTheMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	fastTimes, fastPasses := 0, 0
	for round := range 3000 {
		x, d := randomDispatch(r)
		if x.timesAscend(d) {
			fastTimes++
			if vs := x.passTimestampsByMap(d); len(vs) > 0 {
				t.Fatalf("round %d: times ascend, yet the maps find %v", round, vs[0])
			}
		}
		if n, ok := x.recordPassesAscend(d); ok {
			fastPasses++
			if vs := x.recordPassesByMap(d); len(vs) > 0 {
				t.Fatalf("round %d: passes ascend, yet the map finds %v", round, vs[0])
			}
			x.countExamined()
			if got := x.instances["DID-5"]; got != n {
				t.Fatalf("round %d: the map examined %d, the fast way %d", round, got, n)
			}
		}
	}
	if fastTimes < 100 || fastPasses < 100 || fastTimes > 2900 || fastPasses > 2900 {
		t.Errorf("the rounds did not try both ways: %d, %d of 3000 fast", fastTimes, fastPasses)
	}
}
