package hsa

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testAgent = Agent{
	ID: 1, Name: "test", Arch: "gfx000",
	CounterBlocks: []CounterBlock{
		{Name: "SQ", Registers: 2, Counters: []string{"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU"}},
		{Name: "TCC", Registers: 1, Counters: []string{"TCC_HIT", "TCC_MISS"}},
		{Name: "GRBM", Registers: 0, Counters: []string{"GRBM_COUNT"}},
	},
}

func TestCounterGroups(t *testing.T) {
	tests := []struct {
		name     string
		counters []string
		want     [][]string
		wantErr  string
	}{
		{name: "none", counters: nil, want: nil},
		{name: "one", counters: []string{"SQ_WAVES"}, want: [][]string{{"SQ_WAVES"}}},
		{name: "fits one pass", counters: []string{"SQ_WAVES", "TCC_HIT", "SQ_INSTS_VALU"},
			want: [][]string{{"SQ_WAVES", "TCC_HIT", "SQ_INSTS_VALU"}}},
		{name: "block limit splits", counters: []string{"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU"},
			want: [][]string{{"SQ_WAVES", "SQ_INSTS_VALU"}, {"SQ_INSTS_SALU"}}},
		{name: "greedy fills earlier passes first", counters: []string{"TCC_HIT", "TCC_MISS", "SQ_WAVES"},
			want: [][]string{{"TCC_HIT", "SQ_WAVES"}, {"TCC_MISS"}}},
		{name: "duplicate collected once", counters: []string{"TCC_HIT", "TCC_HIT"},
			want: [][]string{{"TCC_HIT"}}},
		{name: "unknown counter", counters: []string{"SQ_WAVES", "NOPE"}, wantErr: `no counter "NOPE"`},
		{name: "block without registers", counters: []string{"GRBM_COUNT"}, wantErr: "no counter registers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CounterGroups(testAgent, tt.counters)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCollectableCounters(t *testing.T) {
	tests := []struct {
		name          string
		counters      []string
		have, missing []string
	}{
		{name: "none", counters: nil},
		{name: "all known", counters: []string{"TCC_HIT", "SQ_WAVES"}, have: []string{"TCC_HIT", "SQ_WAVES"}},
		{name: "some missing, order kept", counters: []string{"X", "SQ_WAVES", "Y"},
			have: []string{"SQ_WAVES"}, missing: []string{"X", "Y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			have, missing := CollectableCounters(testAgent, tt.counters)
			if diff := cmp.Diff(tt.have, have); diff != "" {
				t.Errorf("have (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.missing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

// pairs is a CounterSource that knows counters starting with "m" and puts
// two in each pass.
type pairs struct{}

func (pairs) HasCounter(n string) bool { return len(n) > 0 && n[0] == 'm' }
func (pairs) Describe() string         { return "m-metrics" }
func (pairs) Groups(c []string) ([][]string, error) {
	var out [][]string
	for i := 0; i < len(c); i += 2 {
		out = append(out, c[i:min(i+2, len(c))])
	}
	return out, nil
}

func TestCounterSourceReplacesBlocks(t *testing.T) {
	a := Agent{ID: 3, Name: "H", Arch: "sm_90", Counters: pairs{}, CounterBlocks: testAgent.CounterBlocks}
	g, err := CounterGroups(a, []string{"ma", "mb", "ma", "mc"})
	if err != nil || len(g) != 2 || len(g[0]) != 2 || g[1][0] != "mc" {
		t.Fatalf("groups = %v, %v", g, err)
	}
	if _, err := CounterGroups(a, []string{"ma", "SQ_WAVES"}); err == nil || !strings.Contains(err.Error(), `agent 3 (H, sm_90) has no counter "SQ_WAVES" (its counters: m-metrics)`) {
		t.Fatalf("err = %v", err)
	}
	have, missing := CollectableCounters(a, []string{"SQ_WAVES", "mz"})
	if len(have) != 1 || have[0] != "mz" || len(missing) != 1 {
		t.Fatalf("have %v missing %v", have, missing)
	}
	if g, err := CounterGroups(a, nil); g != nil || err != nil {
		t.Fatalf("empty: %v %v", g, err)
	}
}
