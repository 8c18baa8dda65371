package tracediff

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/rules"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/target"
	"github.com/replayspec/replayspec/target/sim"
	"github.com/replayspec/replayspec/trace"
)

func run(t *testing.T, s spec.Spec, tg simtarget.Sim) trace.Trace {
	t.Helper()
	tr, _ := tg.Run(context.Background(), spec.Defaults(s), target.Options{})
	return tr
}

func librarySpec(t *testing.T, name string) spec.Spec {
	t.Helper()
	s, ok := specs.ByName(name)
	if !ok {
		t.Fatalf("no library spec %s", name)
	}
	return s
}

func TestTheSameRunIsTheSame(t *testing.T) {
	lib, err := specs.Library()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		// make test (-short, -race): every fourth spec, three runs each;
		// golden.TestDeterministic already runs every spec of the library
		// twice and wants the same bytes. All of it in make test-heavy.
		var some []spec.Spec
		for i := 0; i < len(lib); i += 4 {
			some = append(some, lib[i])
		}
		lib = some
	}
	for _, s := range lib {
		tr := run(t, s, simtarget.Sim{})
		for _, traffic := range []bool{false, true} {
			if r := Compare(tr, run(t, s, simtarget.Sim{}), Options{Traffic: traffic}); !r.Same() {
				t.Errorf("%s (traffic %v): two runs differ: %+v", s.Name, traffic, r)
			}
		}
	}
}

// What may legitimately differ between two implementations must not be
// reported: each edit below is something another target does differently
// while doing the same thing.
func TestWhatMayDifferIsIgnored(t *testing.T) {
	base := run(t, librarySpec(t, "concurrent-other-agent-local-stop"), simtarget.Sim{})
	edits := []struct {
		reason string
		edit   func(tr trace.Trace) trace.Trace
	}{
		{"another clock", each(func(e *trace.Event) {
			e.Time = e.Time*3 + 17
			if e.Start != 0 {
				e.Start, e.End = e.Start*3+5, e.End*3+9
			}
		})},
		{"other counter values", each(func(e *trace.Event) {
			for i := range e.Counters {
				e.Counters[i].Value += 1000
			}
		})},
		{"ids from elsewhere: dispatch, signal, queue, correlation", each(func(e *trace.Event) {
			if e.Dispatch != 0 {
				e.Dispatch += 100
			}
			if e.Signal != 0 {
				e.Signal += 7000
			}
			if e.Queue != 0 {
				e.Queue += 40
			}
			if e.Corr != nil {
				c := *e.Corr
				c.Internal = c.Internal + 900
				if c.Ancestor != 0 { // 0 is none, in any numbering
					c.Ancestor += 900
				}
				e.Corr = &c
			}
		})},
		{"agents numbered and described otherwise", each(func(e *trace.Event) {
			if e.Agent != 0 {
				e.Agent += 10
			}
			if e.Type == trace.AgentInfo {
				e.Family, e.Product, e.Arch = "nvidia", "NVIDIA H200", "sm_90"
			}
		})},
		{"memory at other addresses", each(func(e *trace.Event) {
			if e.Addr != 0 {
				e.Addr += 1 << 40
			}
			for i := range e.Regions {
				e.Regions[i].Addr += 1 << 40
			}
		})},
		{"threads interleaved otherwise", func(tr trace.Trace) trace.Trace {
			sort.SliceStable(tr.Events, func(i, j int) bool { return tr.Events[i].Thread < tr.Events[j].Thread })
			return tr
		}},
		{"warnings worded otherwise", each(func(e *trace.Event) { e.Message = strings.ToUpper(e.Message) })},
	}
	for _, ed := range edits {
		r := Compare(base, ed.edit(clone(base)), Options{})
		if len(r.Divergences) > 0 {
			t.Errorf("%s: reported %+v", ed.reason, r.Divergences[0])
		}
	}
}

// A weaker profile: a port that reports only what the tool and the
// application saw is compared on those, and the rest is not held against
// either side.
func TestOnlyCommonSourcesAreCompared(t *testing.T) {
	full := run(t, librarySpec(t, "fixed-three-passes"), simtarget.Sim{})
	weak := clone(full)
	weak.Header.Sources = []trace.Source{trace.SourceTool, trace.SourceApp}
	weak.Events = slices.DeleteFunc(weak.Events, func(e trace.Event) bool {
		src, _ := e.Type.Source()
		return src == trace.SourceRuntime || src == trace.SourceSDK
	})
	r := Compare(full, weak, Options{Traffic: true})
	if !r.Same() {
		t.Errorf("a weaker profile of the same run differs: %+v", r)
	}
	if !slices.Equal(r.Sources, []trace.Source{trace.SourceTool, trace.SourceApp}) {
		t.Errorf("compared sources %v, want tool and app", r.Sources)
	}
}

// A real difference is reported once per dispatch, at its first step, with
// the rules that step touches: the engine with a planted fault against the
// engine without.
func TestDivergencesAreFound(t *testing.T) {
	tests := []struct {
		spec, fault string
		dispatch    string
		rule        string
	}{
		{"fixed-three-passes", "skip_restore", "inc", "MEM-2"},
		{"fixed-three-passes", "completion_every_pass", "inc", "CMP-2"},
		{"early-exit-stop-after", "ignore_continue", "saxpy", "CONT-1"},
		{"user-data-written-in-pass", "user_data_write_lost", "", "UD-2"},
	}
	for _, tt := range tests {
		fs, err := replay.ParseFaults(tt.fault)
		if err != nil {
			t.Fatal(err)
		}
		s := librarySpec(t, tt.spec)
		r := Compare(run(t, s, simtarget.Sim{}), run(t, s, simtarget.Sim{Faults: fs}), Options{})
		if len(r.Divergences) == 0 {
			t.Errorf("%s with %s: no divergence", tt.spec, tt.fault)
			continue
		}
		if tt.dispatch != "" && !slices.ContainsFunc(r.Divergences, func(d Divergence) bool { return d.Dispatch == tt.dispatch }) {
			t.Errorf("%s with %s: no divergence in %s: %+v", tt.spec, tt.fault, tt.dispatch, r.Divergences)
		}
		all := ""
		for _, d := range r.Divergences {
			all += strings.Join(d.Rules, ",") + ","
		}
		if !strings.Contains(all, tt.rule) {
			t.Errorf("%s with %s: divergences name %s, want %s among them", tt.spec, tt.fault, all, tt.rule)
		}
		seen := map[string]bool{}
		for _, d := range r.Divergences {
			if seen[d.Dispatch] {
				t.Errorf("%s with %s: two divergences reported for %s", tt.spec, tt.fault, d.Dispatch)
			}
			seen[d.Dispatch] = true
		}
		if len(r.Verdicts) == 0 {
			t.Errorf("%s with %s: no verdict differs", tt.spec, tt.fault)
		}
	}
}

func TestTouchesCoverEveryType(t *testing.T) {
	for _, typ := range trace.Types() {
		ids, ok := Touches[typ]
		if !ok || len(ids) == 0 {
			t.Errorf("event type %s touches no rule", typ)
		}
		for _, id := range ids {
			if _, ok := rules.Lookup(id); !ok {
				t.Errorf("%s: no rule %s", typ, id)
			}
		}
	}
}

func each(f func(e *trace.Event)) func(trace.Trace) trace.Trace {
	return func(tr trace.Trace) trace.Trace {
		for i := range tr.Events {
			f(&tr.Events[i])
		}
		return tr
	}
}

// clone copies a trace deeply enough for the edits above.
func clone(tr trace.Trace) trace.Trace {
	out := trace.Trace{Header: tr.Header, Events: make([]trace.Event, len(tr.Events))}
	for i, e := range tr.Events {
		e.Counters = slices.Clone(e.Counters)
		e.Regions = slices.Clone(e.Regions)
		out.Events[i] = e
	}
	return out
}

// A port may spell operations and statuses with or without the C
// enumerators' prefixes, and its
// tool may not record its counter split (decision 7): neither is a
// divergence, in the events or in the verdicts.
func TestPortSpellingAndOptionalRecords(t *testing.T) {
	base := run(t, librarySpec(t, "counters-by-agent-kind/kind=MI300"), simtarget.Sim{})
	port := each(func(e *trace.Event) {
		if e.Status != "" {
			e.Status = "ROCPROFILER_STATUS_" + e.Status
		}
		// The reference answers with the enumerator's name, a port may
		// use the short one.
		e.OpName = trace.Op(strings.TrimPrefix(string(e.OpName), "ROCPROFILER_KERNEL_REPLAY_"))
		if e.Type == trace.PassCount {
			e.Groups, e.Context = nil, 0
		}
	})(clone(base))
	if r := Compare(base, port, Options{}); !r.Same() {
		t.Errorf("reported: %+v", r)
	}
	// The split is compared where both keep it.
	other := each(func(e *trace.Event) {
		if e.Type == trace.PassCount && len(e.Groups) > 1 {
			e.Groups = [][]string{e.Groups[1], e.Groups[0]}
		}
	})(clone(base))
	if r := Compare(base, other, Options{}); len(r.Divergences) == 0 {
		t.Error("another split of the counters was not reported")
	}
}

// What a buffer holds that dispatches of two threads write depends on how
// the threads interleave, and so does a buffer computed from it: their
// contents are not compared, those of other buffers are.
func TestSharedBuffersAreRacy(t *testing.T) {
	s := spec.Spec{Version: 1, Name: "race", Requires: []string{"concurrency"},
		Agents:   []spec.Agent{{Name: "g", Kind: "MI300"}},
		Contexts: []spec.Context{{Name: "replay", Services: spec.Services{KernelReplay: &spec.KernelReplay{}}}},
		Application: spec.Application{
			Buffers: []spec.Buffer{{Name: "shared", Agent: "g", Elements: 4}, {Name: "own", Agent: "g", Elements: 4}, {Name: "derived", Agent: "g", Elements: 4}},
			Dispatches: []spec.Dispatch{
				{Name: "a", Kernel: "increment", Agent: "g", Args: []string{"shared"}, Thread: 1},
				{Name: "b", Kernel: "fill", Agent: "g", Args: []string{"shared"}, Thread: 2, Scalar: 5},
				{Name: "c", Kernel: "increment", Agent: "g", Args: []string{"own"}, Thread: 1},
				{Name: "d", Kernel: "accumulate", Agent: "g", Args: []string{"derived", "shared"}, Thread: 1},
			}}}
	base := run(t, s, simtarget.Sim{})
	// The other interleaving: b's fill came last, so the shared buffer
	// holds 5s everywhere, in b's read-back and at the end.
	other := each(func(e *trace.Event) {
		switch e.Buffer {
		case "shared", "derived":
			e.Digest = "0000000000000005"
			e.Runs = []trace.Run{{Value: 5, Count: 4}}
		}
	})(clone(base))
	if r := Compare(base, other, Options{}); len(r.Divergences) > 0 {
		t.Errorf("a shared buffer's contents were compared: %+v", r.Divergences)
	}
	own := each(func(e *trace.Event) {
		if e.Buffer == "own" {
			e.Digest = "0000000000000007"
		}
	})(clone(base))
	if r := Compare(base, own, Options{}); len(r.Divergences) == 0 {
		t.Error("a buffer one thread uses was not compared")
	}
}

// A runtime may hand a freed buffer's address to the next allocation (CUDA
// does): regions are named by the buffer live at the time, so the second
// loop's snapshot of "b" is not taken for one of the freed "a".
func TestAReusedAddressNamesTheLiveBuffer(t *testing.T) {
	base := run(t, librarySpec(t, "buffers-allocated-mid-run"), simtarget.Sim{})
	addr := map[string][2]uint64{}
	for _, e := range base.Events {
		if e.Type == trace.AppAlloc {
			addr[e.Buffer] = [2]uint64{e.Addr, e.Bytes}
		}
	}
	a, b := addr["a"], addr["b"]
	if a[1] == 0 || b[1] != a[1] {
		t.Fatalf("the spec no longer allocates a and b of one size: %v", addr)
	}
	move := func(v uint64) uint64 {
		if v >= b[0] && v < b[0]+b[1] {
			return v - b[0] + a[0]
		}
		return v
	}
	reused := each(func(e *trace.Event) {
		e.Addr = move(e.Addr)
		for i := range e.Regions {
			e.Regions[i].Addr = move(e.Regions[i].Addr)
		}
	})(clone(base))
	for _, traffic := range []bool{false, true} {
		if r := Compare(base, reused, Options{Traffic: traffic}); !r.Same() {
			t.Errorf("traffic %v: b at a's old address reads as a divergence: %+v", traffic, r.Divergences)
		}
	}
}

// A loop that never ends reads nothing back, yet its kernels' digests
// cover what its snapshot saved: when that is a buffer another thread
// writes, the digests depend on the interleaving and are not compared
// (found diffing the simulator against the H200, gen-000045).
func TestANeverEndingLoopOnASharedBufferIsRacy(t *testing.T) {
	s, err := spec.Parse("never-ends-on-shared.yaml", []byte(`version: 1
name: never-ends-on-shared
requires: [concurrency, indefinite]
agents: [{name: g, kind: MI300}]
contexts: [{name: replay, services: {kernel_replay: {}}}]
tool: {plan: {passes: 1}}
limits: {max_passes: 4}
application:
  buffers: [{name: shared, agent: g, elements: 4}]
  dispatches:
    - {name: a, kernel: increment, agent: g, args: [shared], thread: 1, plan: {passes: 0, continue: {always: true}}}
    - {name: b, kernel: fill, agent: g, args: [shared], thread: 2, scalar: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	base := run(t, s, simtarget.Sim{})
	edited := 0
	other := each(func(e *trace.Event) {
		if e.Type == trace.Kernel && e.MemIn != "" {
			e.MemIn, e.MemOut = "0000000000000001", "0000000000000002"
			edited++
		}
	})(clone(base))
	if edited == 0 {
		t.Fatal("no kernel digest to edit: the spec no longer runs a loop")
	}
	if r := Compare(base, other, Options{}); len(r.Divergences) > 0 {
		t.Errorf("the digests of a loop on a shared buffer were compared: %+v", r.Divergences)
	}
}

// A dispatch that timed out read nothing back, so what it wrote is unknown:
// a buffer another thread reads back may hold its writes or not (a fine-
// grained one is in no snapshot), so its contents are not compared
// (found diffing the simulator against the H200, gen-000722).
func TestATimedOutDispatchMakesOtherThreadsBuffersRacy(t *testing.T) {
	s, err := spec.Parse("timed-out-beside.yaml", []byte(`version: 1
name: timed-out-beside
requires: [concurrency, indefinite]
agents: [{name: g, kind: MI300}]
contexts: [{name: replay, services: {kernel_replay: {}}}]
tool: {plan: {passes: 1}}
limits: {max_passes: 4}
application:
  buffers: [{name: fine, agent: g, kind: fine, elements: 4}]
  dispatches:
    - {name: a, kernel: increment, agent: g, args: [fine], thread: 1, plan: {passes: 0, continue: {always: true}}}
    - {name: b, kernel: atomic_counter, agent: g, args: [fine], thread: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	base := run(t, s, simtarget.Sim{})
	other := each(func(e *trace.Event) {
		if e.Buffer == "fine" && e.Digest != "" {
			e.Digest = "0000000000000009"
			e.Runs = []trace.Run{{Value: 9, Count: 4}}
		}
	})(clone(base))
	if r := Compare(base, other, Options{}); len(r.Divergences) > 0 {
		t.Errorf("a buffer a timed-out dispatch of another thread may have written was compared: %+v", r.Divergences)
	}
}
