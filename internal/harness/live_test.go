package harness

import (
	"slices"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// TestCopiesFollowAllocAndFree: the buffers the tool copies at each PASS
// ENTER and EXIT (MEM-2, MEM-3, MEM-4) are those allocated and not freed
// at that moment, as the trace's app_alloc and app_free events say, while
// the tool itself frees one buffer and allocates another inside the loop.
// The tool's list of live buffers is kept between allocations and frees
// (app.liveBuffers): one that missed either would copy the wrong ones.
func TestCopiesFollowAllocAndFree(t *testing.T) {
	s := spec.Defaults(spec.Spec{Version: spec.Version, Name: "live",
		Agents: []spec.Agent{{Name: "gpu0", Kind: "MI300"}},
		Contexts: []spec.Context{
			{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}},
		},
		Tool: spec.Tool{Plan: spec.Plan{Passes: "4", Actions: []spec.Action{
			{In: spec.WindowPassEnter, Pass: 1, Call: spec.ActionAlloc, Buffer: "y"},
			{In: spec.WindowPassExit, Pass: 2, Call: spec.ActionFree, Buffer: "z"},
		}}},
		Application: spec.Application{
			Buffers: []spec.Buffer{{Name: "x", Agent: "gpu0", Elements: 4}, {Name: "y", Agent: "gpu0", Elements: 4, ByTool: true},
				{Name: "z", Agent: "gpu0", Elements: 4}},
			Dispatches: []spec.Dispatch{{Name: "d", Kernel: "increment", Agent: "gpu0", Args: []string{"x"}}},
		},
	})
	live := map[string]bool{}
	var copied, liveThen []string // the buffers a PASS callback copied, and those live as it began
	var checked []string
	inPass := false
	check := func() {
		if !slices.Equal(copied, liveThen) {
			t.Errorf("a PASS callback copied %v; live as it began: %v", copied, liveThen)
		}
		checked = append(checked, slices.Concat([]string{"|"}, copied)...)
	}
	tl := runKeeping(t, s, func(e *trace.Event) {
		switch {
		case e.Type == trace.AppAlloc:
			live[e.Buffer] = true
		case e.Type == trace.AppFree:
			delete(live, e.Buffer)
		case e.Type == trace.Callback && e.Op == trace.OpPass:
			copied, liveThen, inPass = nil, nil, true
			for _, b := range s.Application.Buffers {
				if live[b.Name] {
					liveThen = append(liveThen, b.Name)
				}
			}
		case e.Type == trace.ToolMemory && inPass:
			copied = append(copied, e.Buffer)
		case e.Type == trace.Returned && inPass:
			check()
			inPass = false
		}
	})
	want := []string{"|", "x", "z", "|", "x", "z", // pass 0
		"|", "x", "z", "|", "x", "y", "z", // pass 1: y allocated in ENTER, after its copy
		"|", "x", "y", "z", "|", "x", "y", "z", // pass 2: z freed in EXIT, after its copy
		"|", "x", "y", "|", "x", "y"} // pass 3
	if !slices.Equal(checked, want) {
		t.Errorf("copies by callback %v, want %v", checked, want)
	}
	// A freed buffer left in the list is not copied (its read fails), so
	// the list itself is asked too.
	var names []string
	for _, b := range tl.app.liveBuffers() {
		names = append(names, b.name)
	}
	if !slices.Equal(names, []string{"x", "y"}) {
		t.Errorf("live buffers after the run: %v, want [x y]", names)
	}
}
