package rocprof

import (
	"slices"
	"testing"

	"github.com/replayspec/replayspec/spec"
)

// Which of a spec's expectations prof judges: all of a spec written for
// prof; of a spec with a tool of its own, what the application sees of
// memory replay restores, and nothing its own tool shapes.
func TestApplicationExpect(t *testing.T) {
	one := spec.Count{}
	base := func() spec.Spec {
		return spec.Spec{
			Agents:   []spec.Agent{{Name: "g0", Kind: "MI300"}, {Name: "g1", Kind: "MI300"}},
			Contexts: []spec.Context{{Name: "c"}},
			Application: spec.Application{
				Buffers: []spec.Buffer{{Name: "x", Agent: "g0"}, {Name: "f", Agent: "g0", Kind: "fine"},
					{Name: "p", Agent: "g1"}, {Name: "t", Agent: "g0"}},
				Dispatches: []spec.Dispatch{{Name: "a", Agent: "g0", Args: []string{"x", "f"}},
					{Name: "b", Agent: "g0", Args: []string{"p"}}, {Name: "tool", Agent: "g0", Args: []string{"t"}, ByTool: true}},
			},
			Expect: spec.Expect{
				Passes:      map[string]spec.Count{"a": one},
				Completions: map[string]spec.Count{"a": one, "b": one, "tool": one},
				Memory:      map[string]spec.MemoryExpect{"x": {}, "f": {}, "p": {}, "t": {}},
				Records:     map[string]spec.Count{"counter_collection": one},
			},
		}
	}
	kept, dropped := ApplicationExpect(base())
	if got := mapKeys(kept.Completions); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("completions %v, want a and b (the tool's own dispatch is its doing)", got)
	}
	if got := mapKeys(kept.Memory); !slices.Equal(got, []string{"x"}) {
		t.Errorf("memory %v, want x alone: f is fine-grained, p is written from another agent, t by the tool", got)
	}
	if kept.Passes != nil || kept.Records != nil || !slices.Equal(dropped, []string{"passes", "completions", "memory", "records"}) {
		t.Errorf("dropped %v, kept %+v", dropped, kept)
	}

	s := base()
	s.Contexts = nil
	if kept, dropped := ApplicationExpect(s); dropped != nil || kept.Passes == nil || len(kept.Memory) != 4 {
		t.Errorf("a spec without a tool of its own is written for prof: all applies; dropped %v", dropped)
	}

	s = base()
	s.Agents[0].RestoreFailsAt = 1
	if kept, _ := ApplicationExpect(s); kept.Completions != nil || kept.Memory != nil {
		t.Errorf("a machine that fails a restore: %+v, want nothing of the application's judged", kept)
	}

	s = base()
	s.Expect.NeverEnds = []string{"a"}
	if kept, _ := ApplicationExpect(s); !slices.Equal(mapKeys(kept.Completions), []string{"b"}) || len(kept.Memory) != 0 {
		t.Errorf("a dispatch the spec's tool never ends: %+v, want b's completion alone, no memory of a's buffers", kept)
	}
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
