package check

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/specs"
	"github.com/replayspec/replayspec/trace"
)

// withCounters gives every counter record of the trace the counters f
// returns for its pass, and every kernel of a pass the runtime's account k
// returns (nil: none, as a trace without the witness).
func withCounters(tr trace.Trace, rec, k func(pass uint64) []trace.Counter) trace.Trace {
	x := newIndex(tr)
	out := tr
	out.Events = append([]trace.Event(nil), tr.Events...)
	for i := range out.Events {
		e := &out.Events[i]
		w := x.window(i)
		if !w.open {
			continue
		}
		switch {
		case e.Type == trace.Record && e.Service == trace.CounterCollection:
			e.Counters = rec(w.pass)
		case e.Type == trace.Kernel && k != nil:
			e.Counters = k(w.pass)
		}
	}
	return out
}

// Counter records are judged by their values (AGT-1, issue 20): against the
// runtime's account of the pass's kernel, against the work every kernel
// does, and against the other passes for counters that do not depend on
// the pass. A port whose counters are wrong, stale or zero fails.
func TestCounterValues(t *testing.T) {
	fixed3 := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3, services: []trace.Service{trace.CounterCollection}}).trace()
	c := func(kv ...any) []trace.Counter {
		var out []trace.Counter
		for i := 0; i < len(kv); i += 2 {
			out = append(out, trace.Counter{Name: kv[i].(string), Value: uint64(kv[i+1].(int))})
		}
		return out
	}
	// A split into three groups, as the simulator counts a 256-item launch.
	groups := [][]trace.Counter{c("SQ_WAVES", 4, "SQ_INSTS_VALU", 768), c("TCC_HIT", 6), c("TCC_MISS", 2)}
	truth := func(p uint64) []trace.Counter { return groups[p] }
	// A tool that samples one group on every pass (converge).
	sampled := func(p uint64) []trace.Counter { return c("SQ_WAVES", 4, "TCC_HIT", 6+int(p)) }
	cases := []struct {
		reason   string
		rec, run func(uint64) []trace.Counter
		msg      string // "" holds
	}{
		{"every record says what its pass's kernel counted", truth, truth, ""},
		{"no runtime account: the values are not judged against one", truth, nil, ""},
		{"a cache counter may differ from pass to pass", sampled, nil, ""},
		{"groups after the first read zero (the H200's reused profiler)", func(p uint64) []trace.Counter {
			if p == 0 {
				return groups[0]
			}
			return c(groups[p][0].Name, 0)
		}, truth, "but the runtime counted"},
		{"a record carries the previous pass's values", func(p uint64) []trace.Counter {
			if p == 2 {
				return c("TCC_MISS", 6)
			}
			return groups[p]
		}, truth, "pass 2's counter_collection record says TCC_MISS = 6, but the runtime counted 2"},
		{"a record carries a counter the runtime did not count", func(p uint64) []trace.Counter {
			return append(groups[p], trace.Counter{Name: "GRBM_COUNT", Value: 9})
		}, truth, "a counter the runtime did not count"},
		{"waves read zero, and there is no runtime account to compare with", func(p uint64) []trace.Counter {
			if p == 1 {
				return c("SQ_WAVES", 0)
			}
			return c("SQ_WAVES", 4)
		}, nil, "SQ_WAVES = 0, but every kernel that runs counts some"},
		{"warps launched read zero on an NVIDIA agent", func(p uint64) []trace.Counter {
			return c("smsp__warps_launched.sum", 8*int(1-min(p, 1)), "dram__bytes_write.sum", 0)
		}, nil, "smsp__warps_launched.sum = 0"},
		{"instructions differ between passes of one loop", func(p uint64) []trace.Counter {
			return c("smsp__inst_executed.sum", 1000+int(p))
		}, nil, "smsp__inst_executed.sum, which does not depend on the pass, reads 1000 in pass 0 and 1001 in pass 1"},
	}
	for _, tc := range cases {
		tr := withCounters(fixed3, tc.rec, tc.run)
		j := Judge(tr)
		var agt []Violation
		said := false
		for _, v := range j.Violations {
			if v.Rule == "AGT-1" {
				agt = append(agt, v)
				said = said || tc.msg != "" && strings.Contains(v.Message, tc.msg)
			}
		}
		switch {
		case tc.msg == "" && len(agt) > 0:
			t.Errorf("%s: %v", tc.reason, agt)
		case tc.msg != "" && !said:
			t.Errorf("%s: got %v, want AGT-1 saying %q", tc.reason, agt, tc.msg)
		}
		if r, _ := j.Rule("AGT-1"); r.Instances == 0 {
			t.Errorf("%s: AGT-1 examined nothing", tc.reason)
		}
	}
	// Names a zero may legitimately read, and counters that move with
	// scheduling, are left alone.
	for _, n := range []string{"SQ_INSTS_LDS", "TCC_MISS", "dram__bytes_read.sum", "sm__ctas_launched.min"} {
		if everyKernelCounts(n) {
			t.Errorf("%s is not work every kernel does", n)
		}
	}
	for _, n := range []string{"SQ_WAVE_CYCLES", "TCC_HIT", "sm__cycles_elapsed.avg", "smsp__inst_executed.max"} {
		if passIndependent(n) {
			t.Errorf("%s may differ between passes", n)
		}
	}
}

// expect.counters values: a spec states what its counters read, exactly on
// the simulator or as a range on hardware, and a port whose records name the
// right counters with wrong or zero values fails at the black-box profile.
func TestCounterValuesExpected(t *testing.T) {
	fixed3 := new(builder).prelude().dispatch(loop{label: "k", dispatch: 1, count: 3, services: []trace.Service{trace.CounterCollection}}).trace()
	groups := [][]trace.Counter{{{Name: "SQ_WAVES", Value: 4}}, {{Name: "TCC_HIT", Value: 6}}, {{Name: "TCC_MISS", Value: 2}}}
	good := withCounters(fixed3, func(p uint64) []trace.Counter { return groups[p] }, nil)
	zeroAfterFirst := withCounters(fixed3, func(p uint64) []trace.Counter {
		if p == 0 {
			return groups[0]
		}
		return []trace.Counter{{Name: groups[p][0].Name}}
	}, nil)
	exact := map[string]spec.Count{"SQ_WAVES": spec.Exactly(4), "TCC_HIT": spec.Exactly(6), "TCC_MISS": spec.Exactly(2)}
	some := map[string]spec.Count{"SQ_WAVES": {Min: 1, Max: math.MaxUint64}, "TCC_HIT": {Min: 1, Max: math.MaxUint64}, "TCC_MISS": {Min: 1, Max: math.MaxUint64}}
	cases := []struct {
		reason string
		tr     trace.Trace
		ce     spec.CountersExpect
		msg    string
	}{
		{"exact values over a split", good, spec.CountersExpect{Dispatch: "k", Values: exact}, ""},
		{"at least one, over a split", good, spec.CountersExpect{Dispatch: "k", Values: some}, ""},
		{"groups after the first read zero", zeroAfterFirst, spec.CountersExpect{Dispatch: "k", Values: some}, "a record says TCC_HIT = 0"},
		{"an exact value differs", good, spec.CountersExpect{Dispatch: "k", Values: map[string]spec.Count{"TCC_HIT": spec.Exactly(7)}}, "a record says TCC_HIT = 6"},
		{"a counter no record carries", good, spec.CountersExpect{Dispatch: "k", Values: map[string]spec.Count{"GRBM_COUNT": {Min: 1, Max: math.MaxUint64}}}, "no such record carries GRBM_COUNT"},
		{"names and values of one pass", good, spec.CountersExpect{Dispatch: "k", Pass: trace.U64(1), Names: []string{"TCC_HIT"}, Values: map[string]spec.Count{"TCC_HIT": spec.Exactly(6)}}, ""},
	}
	for _, c := range cases {
		vs := Expectations(spec.Spec{Expect: spec.Expect{Counters: []spec.CountersExpect{c.ce}}}, c.tr)
		switch {
		case c.msg == "" && len(vs) > 0:
			t.Errorf("%s: %v", c.reason, vs)
		case c.msg != "" && (len(vs) != 1 || !strings.Contains(vs[0].Message, c.msg)):
			t.Errorf("%s: got %v, want one violation saying %q", c.reason, vs, c.msg)
		}
	}
}

// The hardware spec specs/nvidia/counter-values-nvidia.yaml fails on a
// build whose groups after the first read zero, and holds on one whose
// every group reads what the kernel did (a hand-made trace of its shape:
// CUPTI's two groups of its fifteen metrics).
func TestNVIDIACounterSpecFailsOnZeroGroups(t *testing.T) {
	lib, err := specs.NVIDIA()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(lib, func(s spec.Spec) bool { return s.Name == "counter-values-nvidia" })
	if i < 0 {
		t.Fatal("specs/nvidia has no counter-values-nvidia")
	}
	s := lib[i]
	metrics := s.Contexts[1].Services.CounterCollection.Counters
	ctx, _ := (&expectChecker{s: s}).contextID("counters")
	split := [][]string{metrics[:8], metrics[8:]}
	tr := new(builder).prelude().dispatch(loop{label: "inc", dispatch: 1, count: 2, services: []trace.Service{trace.CounterCollection}}).trace()
	record := func(zeroAfter uint64) trace.Trace {
		out := withCounters(tr, func(p uint64) []trace.Counter {
			var cs []trace.Counter
			for k, m := range split[p] {
				v := uint64(1000 + k)
				if p >= zeroAfter {
					v = 0
				}
				cs = append(cs, trace.Counter{Name: m, Value: v})
			}
			return cs
		}, nil)
		return edit(out, typ(trace.Record), func(e *trace.Event) { e.Context = ctx })
	}
	judge := func(tr trace.Trace) (counters, agt []Violation) {
		ex := s.Expect
		only := spec.Spec{Contexts: s.Contexts, Expect: spec.Expect{Counters: ex.Counters}}
		for _, v := range Judge(tr).Violations {
			if v.Rule == "AGT-1" {
				agt = append(agt, v)
			}
		}
		return Expectations(only, tr), agt
	}
	if c, a := judge(record(2)); len(c)+len(a) > 0 {
		t.Errorf("every group read: %v %v", c, a)
	}
	c, a := judge(record(1))
	if len(c) == 0 || !strings.Contains(c[0].Message, "= 0") {
		t.Errorf("groups after the first read zero: the spec's values do not fail: %v", c)
	}
	if len(a) == 0 {
		t.Errorf("groups after the first read zero: AGT-1 does not fail")
	}
}
