package rocprof

import (
	"reflect"
	"slices"

	"github.com/replayspec/replayspec/spec"
)

// ApplicationExpect is the part of a spec's expect block that holds under
// rocprofv3. A library spec describes a tool of its own (contexts and a
// tool plan) and its expectations are mostly about that tool: how many
// passes it asked for, when it was called, which records it got. prof
// replaces that tool with rocprofv3's, so those expectations say nothing
// about a prof run. What the application sees does not depend on the tool
// that profiles it (CMP-1, MEM-1): its completions and what it reads back
// from memory that replay restores. Those are kept, except where the
// spec's own tool shapes them:
//   - a dispatch the spec's tool writes (by_tool), keeps looping forever
//     (never_ends) or during which the process aborts (aborts);
//   - memory that is not restored between passes (a fine or host buffer,
//     or one a dispatch on another agent writes), which holds one write
//     per pass, so as many as the tool asked for;
//   - any of it on a machine that fails a restore (restore_fails_at),
//     since which restore that is depends on the tool's pass counts.
//
// A spec without a tool of its own (rocprof/testdata) is written for prof,
// and its whole expect block applies. dropped names the keys left out in
// whole or in part.
func ApplicationExpect(s spec.Spec) (kept spec.Expect, dropped []string) {
	if len(s.Contexts) == 0 && reflect.ValueOf(s.Tool).IsZero() {
		return s.Expect, nil
	}
	ex := s.Expect
	failsRestore := slices.ContainsFunc(s.Agents, func(a spec.Agent) bool { return a.RestoreFailsAt > 0 })
	toolShaped := map[string]bool{} // dispatches whose outcome the spec's tool decides
	for _, n := range append(slices.Clone(ex.NeverEnds), ex.Aborts...) {
		toolShaped[n] = true
	}
	bufAgent, bufKind := map[string]string{}, map[string]string{}
	for _, b := range s.Application.Buffers {
		bufAgent[b.Name], bufKind[b.Name] = b.Agent, b.Kind
	}
	restored := map[string]bool{} // buffers whose final value is one run's
	for _, b := range s.Application.Buffers {
		// A buffer the spec's tool allocates from a callback (by_tool) is
		// the tool's doing: rocprofv3's tool makes no such buffer.
		restored[b.Name] = !failsRestore && (b.Kind == "" || b.Kind == "device") && !b.ByTool
	}
	for _, d := range s.Application.Dispatches {
		if d.ByTool {
			toolShaped[d.Name] = true
		}
		for _, arg := range d.Args {
			if toolShaped[d.Name] || bufAgent[arg] != d.Agent {
				restored[arg] = false
			}
		}
	}
	keep := spec.Expect{}
	for name, c := range ex.Completions {
		if !failsRestore && !toolShaped[name] {
			put(&keep.Completions, name, c)
		}
	}
	for name, m := range ex.Memory {
		if restored[name] {
			put(&keep.Memory, name, m)
		}
	}
	for name, bufs := range ex.MemoryAfter {
		if failsRestore || toolShaped[name] {
			continue
		}
		for b, m := range bufs {
			if restored[b] {
				if keep.MemoryAfter == nil {
					keep.MemoryAfter = map[string]map[string]spec.MemoryExpect{}
				}
				if keep.MemoryAfter[name] == nil {
					keep.MemoryAfter[name] = map[string]spec.MemoryExpect{}
				}
				keep.MemoryAfter[name][b] = m
			}
		}
	}
	full, cut := reflect.ValueOf(ex), reflect.ValueOf(keep)
	for i := 0; i < full.NumField(); i++ {
		if !full.Field(i).IsZero() && !reflect.DeepEqual(full.Field(i).Interface(), cut.Field(i).Interface()) {
			dropped = append(dropped, yamlKey(reflect.TypeOf(ex).Field(i)))
		}
	}
	return keep, dropped
}

func put[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}

func yamlKey(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	for i, c := range tag {
		if c == ',' {
			return tag[:i]
		}
	}
	if tag == "" {
		return f.Name
	}
	return tag
}
