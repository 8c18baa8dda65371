package spec

import (
	"strings"
	"testing"
)

// refuseBase is a valid spec the cases below change in one place.
const refuseBase = `version: 1
name: base
agents:
  - {name: gpu0, kind: MI300}
contexts:
  - name: replay
    services:
      kernel_replay: {}
      counter_collection: {counters: [SQ_WAVES]}
tool:
  plan:
    passes: 3
application:
  buffers:
    - {name: x, agent: gpu0, elements: 64, fill: 1}
  dispatches:
    - {name: a, kernel: increment, agent: gpu0, args: [x]}
    - {name: b, kernel: increment, agent: gpu0, args: [x]}
`

func TestRefuse(t *testing.T) {
	if _, err := Parse("base.yaml", []byte(refuseBase)); err != nil {
		t.Fatalf("the base spec must load: %v", err)
	}
	for _, c := range []struct {
		name, reason string
		old, new     string // a replacement in refuseBase
		want         string // "" when the spec must load
	}{
		{"lower-case counter", "silently dropped at run time before; prof --pmc already refuses it",
			"counters: [SQ_WAVES]", "counters: [sq_waves]", `base.yaml:9:39: contexts[0].services.counter_collection.counters[0]: unknown counter "sq_waves": counter names are upper case, write SQ_WAVES`},
		{"unknown counter", "a typo would collect nothing",
			"counters: [SQ_WAVES]", "counters: [SQ_WAVEZ]", `unknown counter "SQ_WAVEZ" (allowed: GRBM_COUNT`},
		{"counter another kind has", "the tool drops what an agent lacks (AGT-1): not a typo",
			"kind: MI300", "kind: consumer\n", ""},
		{"converge on a counter that does not exist", "the loop could never converge",
			"    passes: 3\n", "    passes: 0\n    continue: {converge: {counter: NOPE, at_most: 4}}\nrequires: [indefinite, counters]\n", `tool.plan.continue.converge.counter: unknown counter "NOPE"`},
		{"converge on a counter nobody collects", "it exists, but no record carries it",
			"    passes: 3\n", "    passes: 0\n    continue: {converge: {counter: TCC_HIT, at_most: 4}}\nrequires: [indefinite, counters]\n", "no context collects counter TCC_HIT"},
		{"unknown status call", "a call no trace has could never match",
			"    passes: 3\n", "    passes: 3\nexpect:\n  statuses: [{call: start_ctx, status: SUCCESS}]\n", `expect.statuses[0].call: unknown call "start_ctx"`},
		{"unknown status", "a status no call returns",
			"    passes: 3\n", "    passes: 3\nexpect:\n  statuses: [{call: start_context, status: success}]\n", `unknown status "success": status names are upper case, write SUCCESS`},
		{"status with its C prefix", "readers accept the prefix",
			"    passes: 3\n", "    passes: 3\nexpect:\n  statuses: [{call: start_context, status: ROCPROFILER_STATUS_SUCCESS}]\n", ""},
		{"fill beyond 32 bits", "silently truncated before",
			"fill: 1}", "fill: 4294967296}", "application.buffers[0].fill: 4294967296 does not fit in a 32-bit element"},
		{"values below 32 bits", "silently truncated before",
			"fill: 1}", "values: [1, -2147483649]}", "application.buffers[0].values[1]: -2147483649 does not fit"},
		{"largest unsigned element", "0xffffffff is one element's bits",
			"fill: 1}", "fill: 4294967295}", ""},
		{"passes above the budget", "the harness would cut the loop off and blame the implementation",
			"    passes: 3\n", "    passes: 50\nlimits: {max_passes: 10}\n", "tool.plan.passes: asks for 50 passes, more than the pass budget limits.max_passes 10"},
		{"converge bound above the budget", "the budget, not the tool, would end it",
			"    passes: 3\n", "    passes: 0\n    continue: {converge: {counter: SQ_WAVES, at_most: 20}}\nrequires: [indefinite, counters]\nlimits: {max_passes: 10}\n", "may run 20 passes, more than the pass budget"},
		{"during a pass that never runs", "it deadlocked at run time and blamed the target",
			"args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}", "args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, during: {dispatch: a, pass: 3}}\nrequires: [counters, concurrency]",
			"application.dispatches[1].during.pass: a runs at most 3 passes, so it is never in pass 3"},
		{"during a dispatch that is not replayed", "no pass ever starts",
			"args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}", "args: [x], plan: {passes: none}}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, during: {dispatch: a, pass: 0}}\nrequires: [counters, concurrency]",
			"a runs no pass (its plan leaves passes unset)"},
		{"during an earlier dispatch of the same thread", "it has completed before",
			"args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}", "args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], during: {dispatch: a, pass: 1}}",
			"a has completed before b can start"},
		{"after a later dispatch of the same thread", "the thread blocks on a dispatch it has yet to run",
			"args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}", "args: [x], after: b}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}",
			"application.dispatches[0]: can never start: a, b wait on each other"},
		{"during a pass that runs", "another thread's dispatch overlaps pass 1",
			"args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}", "args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2, during: {dispatch: a, pass: 1}}\nrequires: [counters, concurrency]", ""},
		{"use after free", "the buffer is gone when b runs",
			"fill: 1}", "fill: 1, free_after: a}", "application.dispatches[1].args: buffer x is freed once a has completed"},
		{"expect memory of a freed buffer", "the application never reads it at the end",
			"fill: 1}\n  dispatches:\n    - {name: a, kernel: increment, agent: gpu0, args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}\n",
			"fill: 1, free_after: b}\n  dispatches:\n    - {name: a, kernel: increment, agent: gpu0, args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}\nexpect:\n  memory: {x: {all: 3}}\n",
			"expect.memory.x: buffer x is freed after b, so the application cannot read it at the end"},
		{"requires more than it uses", "allowed: a matrix's cases share one list",
			"name: base\n", "name: base\nrequires: [counters, spm]\n", ""},
		{"uses what it does not require", "a target without it would run and fail it",
			"name: base\n", "name: base\nrequires: [spm]\n", `uses counters: add "counters" to requires`},
		{"requires left out", "inferred instead",
			"name: base\n", "name: base\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(refuseBase, c.old, c.new, 1)
			if text == refuseBase && c.old != c.new {
				t.Fatalf("the case changes nothing: %q not in the base", c.old)
			}
			_, err := Parse("base.yaml", []byte(text))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused, want loaded (%s): %v", c.reason, err)
			case c.want != "" && err == nil:
				t.Errorf("loaded, want refused with %q (%s)", c.want, c.reason)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("error\n%v\nwant it to contain %q (%s)", err, c.want, c.reason)
			}
		})
	}
}

func TestNeedsInfersFromUse(t *testing.T) {
	s, err := Parse("base.yaml", []byte(strings.Replace(refuseBase, "args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x]}",
		"args: [x]}\n    - {name: b, kernel: increment, agent: gpu0, args: [x], thread: 2}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(Needs(s), ","); got != "concurrency,counters" {
		t.Errorf("Needs = %s, want concurrency,counters", got)
	}
	s.Requires = []string{"counters", "concurrency"}
	if got := strings.Join(Needs(s), ","); got != "counters,concurrency" {
		t.Errorf("a written requires: wins: Needs = %s", got)
	}
}

func TestReadFileCaps(t *testing.T) {
	if _, err := ReadFile("/dev/zero", 1<<20); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("/dev/zero: err %v, want it refused as larger than the cap", err)
	}
}

func TestMemoryBudget(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"one maximum buffer", "elements: 64, fill: 1}", "elements: 268435456, fill: 1}", "application.buffers[0].elements: running this spec needs about 5152 MiB of memory (32 MiB any run needs + 5120 MiB for its buffers + <1 MiB of trace for its passes), over the budget of 2048 MiB: most of it is buffer"},
		{"a long indefinite loop", "    passes: 3\n", "    passes: 0\n    continue: {always: true}\nrequires: [indefinite, counters]\nlimits: {max_passes: 1000000}\n", "needs about 61 GiB of memory (<1 GiB any run needs + <1 GiB for its buffers + 61 GiB of trace for its passes), over the budget of 2048 MiB: most of it is dispatch a, which may run 1000000 passes"},
		{"the default budget of an indefinite loop", "    passes: 3\n", "    passes: 0\n    continue: {always: true}\nrequires: [indefinite, counters]\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("base.yaml", []byte(strings.Replace(refuseBase, c.old, c.new, 1)))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
	defer SetMemoryBudget(0)
	SetMemoryBudget(8 << 30) // --memory-budget 8192
	if _, err := Parse("base.yaml", []byte(strings.Replace(refuseBase, "elements: 64, fill: 1}", "elements: 268435456, fill: 1}", 1))); err != nil {
		t.Errorf("a raised budget admits it: %v", err)
	}
}
