package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/replayspec/replayspec/hsa"
)

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "no agents", cfg: Config{}, wantErr: "no agents"},
		{name: "unknown kind lists the allowed ones", cfg: Config{Agents: []AgentConfig{{Kind: "H100"}}},
			wantErr: `unknown kind "H100" (allowed: MI200, MI300, consumer)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestAgents(t *testing.T) {
	rt, err := New(Config{Agents: []AgentConfig{{Kind: "MI200"}, {Name: "gpu1", Kind: "MI300"}, {Kind: "consumer"}}})
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		ID         hsa.AgentID
		Name, Arch string
		Family     hsa.Family
	}
	var got []summary
	for _, a := range rt.Agents() {
		got = append(got, summary{a.ID, a.Name, a.Arch, a.Family})
	}
	want := []summary{
		{1, "MI210", "gfx90a", hsa.FamilyMI200},
		{2, "gpu1", "gfx942", hsa.FamilyMI300},
		{3, "RX 7900 XTX", "gfx1100", hsa.FamilyConsumer},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	// A caller cannot change the runtime's counter tables.
	rt.Agents()[0].CounterBlocks[0].Counters[0] = "changed"
	if rt.Agents()[0].CounterBlocks[0].Counters[0] == "changed" {
		t.Error("Agents returned the runtime's own tables")
	}
}

// AGT-1: one counter list gives a different group set on every kind.
func TestCounterGroupsDifferPerKind(t *testing.T) {
	counters := []string{"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "TCC_HIT", "TCC_MISS", "TCC_EA_RDREQ", "GRBM_COUNT"}
	tests := []struct {
		kind        string
		wantMissing []string
		wantGroups  int
	}{
		{kind: "MI300", wantGroups: 3},
		{kind: "MI200", wantGroups: 2},
		{kind: "consumer", wantMissing: []string{"TCC_EA_RDREQ"}, wantGroups: 1},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			rt, _ := newTestRuntime(t, Config{}, tt.kind)
			agent := rt.Agents()[0]
			have, missing := hsa.CollectableCounters(agent, counters)
			if diff := cmp.Diff(tt.wantMissing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if len(missing) > 0 {
				if _, err := hsa.CounterGroups(agent, counters); err == nil {
					t.Errorf("CounterGroups accepted %v", missing)
				}
			}
			groups, err := hsa.CounterGroups(agent, have)
			if err != nil {
				t.Fatal(err)
			}
			if len(groups) != tt.wantGroups {
				t.Errorf("%d groups %v, want %d", len(groups), groups, tt.wantGroups)
			}
		})
	}
}
