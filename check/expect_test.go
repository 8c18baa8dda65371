package check

import (
	"strings"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

func TestExpectations(t *testing.T) {
	base := new(builder).prelude()
	base.dispatch(loop{label: "k", dispatch: 1, count: 5, cont: []int64{1, 1, 0}, services: []trace.Service{trace.KernelTrace, trace.CounterCollection}})
	base.add(trace.Event{Type: trace.AppMemory, Buffer: "buf", Elements: 4, Runs: []trace.Run{{Value: 1, Count: 4}}})
	base.add(trace.Event{Type: trace.Local, Thread: 1, Dispatch: 1, Call: trace.LocalStop, Context: 2, Op: trace.OpConfig, Phase: trace.PhaseEnter, Status: "ERROR_CONTEXT_ERROR"})
	tr := base.trace()
	one := int64(1)
	ctxs := []spec.Context{{Name: "replay"}, {Name: "timing"}}
	good := spec.Expect{
		Passes:            map[string]spec.Count{"k": spec.Exactly(3)},
		ContinueConsulted: map[string][]uint64{"k": {0, 1, 2}},
		Completions:       map[string]spec.Count{"k": spec.Exactly(1)},
		Memory:            map[string]spec.MemoryExpect{"buf": {All: &one}},
		Records:           map[string]spec.Count{string(trace.KernelTrace): spec.Exactly(3), string(trace.CounterCollection): {Min: 1, Max: 9}},
		Statuses:          []spec.StatusExpect{{Call: "local_stop", Context: "timing", Status: "ERROR_CONTEXT_ERROR"}, {Call: string(trace.CallConfigureCallback), Context: "replay", Status: "SUCCESS"}},
		NoWarnings:        true,
		Timestamps:        "differ_per_pass",
	}
	if vs := Expectations(spec.Spec{Contexts: ctxs, Expect: good}, tr); len(vs) > 0 {
		for _, v := range vs {
			t.Errorf("unexpected:\n%s", v)
		}
	}
	cases := []struct {
		key    string
		expect spec.Expect
		tr     trace.Trace
	}{
		{"passes", spec.Expect{Passes: map[string]spec.Count{"k": spec.Exactly(5)}}, tr},
		{"passes", spec.Expect{Passes: map[string]spec.Count{"nope": spec.Exactly(1)}}, tr},
		{"continue_consulted", spec.Expect{ContinueConsulted: map[string][]uint64{"k": {0, 1, 2, 3}}}, tr},
		{"completions", spec.Expect{Completions: map[string]spec.Count{"k": spec.Exactly(2)}}, tr},
		{"memory", spec.Expect{Memory: map[string]spec.MemoryExpect{"buf": {Values: []int64{1, 2}}}}, tr},
		{"memory", spec.Expect{Memory: map[string]spec.MemoryExpect{"buf": {All: new(int64)}}}, tr},
		{"memory", spec.Expect{Memory: map[string]spec.MemoryExpect{"other": {All: &one}}}, tr},
		{"records", spec.Expect{Records: map[string]spec.Count{string(trace.KernelTrace): {Min: 4, Max: 10}}}, tr},
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_stop", Context: "timing", Status: "SUCCESS"}}}, tr},
		{"statuses", spec.Expect{Statuses: []spec.StatusExpect{{Call: "local_start", Status: "SUCCESS"}}}, tr},
		{"warnings", spec.Expect{Warnings: []string{"graph_launch"}}, tr},
		{"no_warnings", spec.Expect{NoWarnings: true}, insertAfter(tr, typ(trace.API), trace.Event{Type: trace.Warning, Code: "graph_launch"})},
		{"never_ends", spec.Expect{NeverEnds: []string{"k"}}, tr},
		{"timestamps", spec.Expect{Timestamps: "differ_per_pass"}, edit(tr, typ(trace.Kernel), func(e *trace.Event) { e.Start, e.End = 1, 2 })},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			vs := Expectations(spec.Spec{Contexts: ctxs, Expect: c.expect}, c.tr)
			if len(vs) == 0 {
				t.Fatalf("expect.%s: no violation", c.key)
			}
			for _, v := range vs {
				if v.Rule != ExpectRule || !strings.HasPrefix(v.Requires, "expect."+c.key+":") {
					t.Errorf("violation names %s / %q, want EXPECT and expect.%s", v.Rule, v.Requires, c.key)
				}
			}
		})
	}
	// never_ends holds on a trace that never ended.
	if vs := Expectations(spec.Spec{Expect: spec.Expect{NeverEnds: []string{"k"}}}, neverEnded()); len(vs) > 0 {
		t.Errorf("never_ends on a never-ended trace: %v", vs)
	}
}
