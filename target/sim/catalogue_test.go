package simtarget

import (
	"slices"
	"testing"

	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
)

// TestCounterCatalogueAgrees: the spec package's copy of the simulator's
// counters and register limits (it validates specs without importing the
// simulator) is the simulator's own table.
func TestCounterCatalogueAgrees(t *testing.T) {
	for _, kind := range sim.Kinds() {
		rt, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: kind}}})
		if err != nil {
			t.Fatal(err)
		}
		have := rt.Agents()[0].CounterBlocks
		want, ok := spec.CounterCatalogue[kind]
		if !ok {
			t.Errorf("spec.CounterCatalogue has no kind %s", kind)
			continue
		}
		if len(have) != len(want) {
			t.Errorf("%s: the simulator has %d counter blocks, the catalogue %d", kind, len(have), len(want))
			continue
		}
		for i := range have {
			if have[i].Name != want[i].Name || have[i].Registers != want[i].Registers || !slices.Equal(have[i].Counters, want[i].Counters) {
				t.Errorf("%s block %d: simulator %+v, catalogue %+v", kind, i, have[i], want[i])
			}
		}
	}
	if len(spec.CounterCatalogue) != len(sim.Kinds()) {
		t.Errorf("the catalogue has %d kinds, the simulator %d", len(spec.CounterCatalogue), len(sim.Kinds()))
	}
}
