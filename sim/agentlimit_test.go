package sim

import (
	"errors"
	"testing"

	"github.com/replayspec/replayspec/hsa"
)

// A spec's snapshot_limit is one agent's (spec.Agent.SnapshotLimit): a
// snapshot on another agent of the machine is not limited by it. A
// machine-wide limit made a generated spec's loop on the other agent fail
// its snapshot, and a dispatch waiting for that loop's first pass hung
// (gen-023977).
func TestSnapshotLimitIsPerAgent(t *testing.T) {
	rt, err := New(Config{Agents: []AgentConfig{{Kind: "MI200", SnapshotLimit: 8}, {Kind: "MI200"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent hsa.AgentID
		fails bool
	}{{1, true}, {2, false}} {
		a, err := rt.Allocate(c.agent, hsa.DeviceCoarse, 100)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.Snapshot(1, c.agent, []hsa.Allocation{a})
		if got := errors.Is(err, ErrInjected); got != c.fails {
			t.Errorf("agent %d: a snapshot of 100 bytes failed %v, want %v (%v)", c.agent, got, c.fails, err)
		}
	}
}
