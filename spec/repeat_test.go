package spec

import (
	"strings"
	"testing"
)

func TestSplitRepetition(t *testing.T) {
	for _, c := range []struct {
		label, name string
		k           uint64
		ok          bool
	}{
		{"d0#17", "d0", 17, true},
		{"d0#0", "d0", 0, true},
		{"a-b_c#18446744073709551615", "a-b_c", 1<<64 - 1, true},
		{"d0", "", 0, false},
		{"d0#", "", 0, false},
		{"#3", "", 0, false},
		{"d0#017", "", 0, false}, // one label, one repetition: no leading zero
		{"d0#+1", "", 0, false},
		{"d0#-1", "", 0, false},
		{"d0#1x", "", 0, false},
		{"d0#18446744073709551616", "", 0, false},
	} {
		name, k, ok := SplitRepetition(c.label)
		if name != c.name || k != c.k || ok != c.ok {
			t.Errorf("SplitRepetition(%q) = %q, %d, %v; want %q, %d, %v", c.label, name, k, ok, c.name, c.k, c.ok)
		}
		if ok && RepetitionLabel(name, k) != c.label {
			t.Errorf("RepetitionLabel(%q, %d) = %q, want %q back", name, k, RepetitionLabel(name, k), c.label)
		}
	}
}

// TestRepeatValidation: what repeat means where it meets the rest of a
// spec, and a clear refusal where it would have no one meaning.
func TestRepeatValidation(t *testing.T) {
	const a = "    - {name: a, kernel: increment, agent: gpu0, args: [x]}\n"
	const b = "    - {name: b, kernel: increment, agent: gpu0, args: [x]}\n"
	for _, c := range []struct {
		name     string
		old, new string // a replacement in refuseBase
		want     string // "" when the spec must load
	}{
		{"repeat", a, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 1000}\n", ""},
		{"repeat 0", a, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 0}\n",
			"application.dispatches[0].repeat: must be at least 1"},
		{"repeat negative", a, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: -1}\n", "application.dispatches[0].repeat"},
		{"repeat over the bound", a, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 2000000000000}\n", "want at most 1099511627776"},
		{"multi-packet repeat", a, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 3, kernel_packets: 2, barriers_between: true}\n", ""},
		{"a name with #", a, "    - {name: 'a#1', kernel: increment, agent: gpu0, args: [x]}\n", `dispatch name "a#1": use letters`},
		{"by_tool repeat", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], plan: {passes: 3, actions: [{in: PASS_ENTER, call: dispatch, dispatch: b}]}}\n" +
			"    - {name: b, kernel: increment, agent: gpu0, args: [x], by_tool: true, repeat: 2}\nrequires: [tool-actions, counters]\n",
			"application.dispatches[1].repeat: a by_tool dispatch is written by the tool"},
		{"repeat during", a + b, a + "    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, repeat: 2, during: {dispatch: a, pass: 1}}\nrequires: [concurrency, counters]\n",
			"application.dispatches[1].repeat: a repeated dispatch cannot start during a pass"},
		{"during a repeated dispatch", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 2}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, during: {dispatch: a, pass: 1}}\nrequires: [concurrency, counters]\n",
			`application.dispatches[1].during.dispatch: dispatch "a" repeats (repeat: 2); nothing waits for a repeated dispatch`},
		{"after a repeated dispatch", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 2}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, after: a}\nrequires: [concurrency, counters]\n",
			`application.dispatches[1].after: dispatch "a" repeats (repeat: 2)`},
		{"after a repetition", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 2}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, after: 'a#1'}\nrequires: [concurrency, counters]\n",
			`application.dispatches[1].after: "a#1" is one repetition of dispatch a`},
		{"a repeated dispatch waits", a + b, a + "    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, after: a, repeat: 3}\nrequires: [concurrency, counters, repeat]\n", ""},
		{"requires leaves repeat out", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 2}\n" + b + "requires: [counters]\n",
			`application.dispatches[0].repeat: uses repeat: add "repeat" to requires`},
		{"free after a repetition", "fill: 1}", "fill: 1, free_after: 'a#0'}", `application.buffers[0].free_after: "a#0" is one repetition`},
		{"expectation on a repetition", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 4}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}\nexpect:\n  passes: {'a#3': 3}\n  memory_after: {'a#0': {x: {all: 2}}}\n", ""},
		{"expectation on a repeated dispatch", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 4}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}\nexpect:\n  passes: {a: 3}\n",
			`expect.passes.a: dispatch "a" repeats 4 times and is no one dispatch: name one repetition, a#0 to a#3`},
		{"expectation past the repetitions", a + b, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 4}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}\nexpect:\n  completions: {'a#4': 1}\n",
			"expect.completions.a#4: dispatch a repeats 4 times: its repetitions are a#0 to a#3"},
		{"repetition of a dispatch that does not repeat", a + b, a + b + "expect:\n  never_ends: ['a#0']\n",
			`expect.never_ends[0]: "a#0" names a repetition, but dispatch a has no repeat`},
		{"repetition of no dispatch", a + b, a + b + "expect:\n  runs: {'z#0': 1}\n", `no dispatch named "z"`},
		{"repeat over the memory budget", a, "    - {name: a, kernel: increment, agent: gpu0, args: [x], repeat: 100000}\n",
			"application.dispatches[0].repeat: running this spec needs about"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(refuseBase, c.old, c.new, 1)
			if text == refuseBase {
				t.Fatalf("the case changes nothing: %q not in the base", c.old)
			}
			_, err := Parse("base.yaml", []byte(text))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused, want loaded: %v", err)
			case c.want != "" && err == nil:
				t.Errorf("loaded, want refused with %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("error\n%v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestRepeatCountsInTheBudget: a repeated dispatch is counted as its
// repetitions, from repeat alone, and the refusal names it; a budget
// raised past it lets it load.
func TestRepeatCountsInTheBudget(t *testing.T) {
	one := EstimateOf(Spec{Application: Application{Dispatches: []Dispatch{{Name: "a"}}}})
	many := EstimateOf(Spec{Application: Application{Dispatches: []Dispatch{{Name: "a", Repeat: 1000}}}})
	if got, want := many.Passes, 1000*one.Passes; got != want {
		t.Errorf("1000 repetitions estimated at %d bytes of trace, want 1000 times one dispatch's %d", got, one.Passes)
	}
	if got := mulSat(1<<40, 1<<30); got != 1<<64-1 {
		t.Errorf("mulSat(2^40, 2^30) = %d: wrapped", got)
	}
	if got := addSat(1<<63, 1<<63); got != 1<<64-1 {
		t.Errorf("addSat(2^63, 2^63) = %d: wrapped", got)
	}
	if got, want := mulSat(3, 5), uint64(15); got != want {
		t.Errorf("mulSat(3, 5) = %d", got)
	}
	if n := Dispatches(Spec{Application: Application{Dispatches: []Dispatch{{Name: "a", Repeat: 7}, {Name: "b"}}}}); n != 8 {
		t.Errorf("Dispatches = %d, want 8", n)
	}
	text := strings.Replace(refuseBase, "args: [x]}\n    - {name: b", "args: [x], repeat: 100000}\n    - {name: b", 1)
	_, err := Parse("base.yaml", []byte(text))
	if err == nil || !strings.Contains(err.Error(), "most of it is the trace of dispatch a, repeated 100000 times; lower its repeat, or raise --memory-budget") {
		t.Fatalf("100,000 repetitions of 3 passes: err %v, want the repeat named", err)
	}
	SetMemoryBudget(1 << 40)
	defer SetMemoryBudget(0)
	if _, err := Parse("base.yaml", []byte(text)); err != nil {
		t.Errorf("with the budget raised: %v", err)
	}
}

// TestStreamedTraceIsNotCharged: a process that hands its events on as
// they come (the driver) is charged one dispatch's trace, so a repeat the
// held estimate refuses passes, and a budget still bounds its buffers.
func TestStreamedTraceIsNotCharged(t *testing.T) {
	text := strings.Replace(refuseBase, "args: [x]}\n    - {name: b", "args: [x], repeat: 100000}\n    - {name: b", 1)
	defer SetTraceStreamed(true)()
	if _, err := Parse("base.yaml", []byte(text)); err != nil {
		t.Fatalf("100,000 repetitions, the trace streamed: %v", err)
	}
	one := EstimateOf(Spec{Application: Application{Dispatches: []Dispatch{{Name: "a"}}}})
	many := EstimateOf(Spec{Application: Application{Dispatches: []Dispatch{{Name: "a", Repeat: 1000}, {Name: "b"}}}})
	if many.Passes != one.Passes {
		t.Errorf("streamed: 1001 dispatches charged %d bytes of trace, want one dispatch's %d", many.Passes, one.Passes)
	}
	SetMemoryBudget(1 << 20)
	defer SetMemoryBudget(0)
	if _, err := Parse("base.yaml", []byte(text)); err == nil {
		t.Error("a 1 MiB budget, streamed: accepted; the run's fixed cost alone is over it")
	}
}
