package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// Every type of this version has a evKind of its own, and one it does not
// know has none of theirs: the index files events by evKind.
func TestKindOfEveryType(t *testing.T) {
	seen := map[evKind]trace.Type{}
	for _, ty := range trace.Types() {
		k := evKindOf(ty)
		if k >= ekOther {
			t.Errorf("type %s has no evKind", ty)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("types %s and %s share evKind %d", prev, ty, k)
		}
		seen[k] = ty
	}
	if len(seen) != int(ekOther) {
		t.Errorf("%d evKinds for %d types", ekOther, len(seen))
	}
	for _, ty := range []trace.Type{"", trace.Type("no such type"), trace.Callback + "x"} {
		if k := evKindOf(ty); k != ekOther {
			t.Errorf("unknown type %q has evKind %d", ty, k)
		}
	}
}

// Every rule of the registry is counted in a place of its own, and a
// string that is no rule of it in none (examined counts it by name).
func TestRuleSlots(t *testing.T) {
	for k, o := range registry {
		if got := ruleSlot(o.rule); got != k {
			t.Errorf("%s: place %d, want %d", o.rule, got, k)
		}
	}
	for _, s := range []string{"", "M", "MEM", "MEM-", "MEM-9", "MEM-22", "XYZ-1", "EXPECT", "RPV-1", "mem-2", "MEM-2 "} {
		if k := ruleSlot(s); k >= 0 {
			t.Errorf("%q counted as %s", s, registry[k].rule)
		}
	}
	// What examined counts reaches the instances, by name.
	x := &index{instances: map[string]int{}, counted: make([]int, len(registry))}
	x.examined("MEM-2")
	x.examined("MEM-2")
	x.examined("not a rule")
	x.countExamined()
	x.examined("API-1")
	x.countExamined()
	if x.instances["MEM-2"] != 2 || x.instances["not a rule"] != 1 || x.instances["API-1"] != 1 || len(x.instances) != 3 {
		t.Errorf("instances %v", x.instances)
	}
}

// The index's columns say what the events say: each event's kind and
// pass, whether it has one or not.
func TestIndexColumns(t *testing.T) {
	tr := bigTrace(2000)
	tr.Events = append(tr.Events, trace.Event{Type: "no such type", Pass: trace.U64(^uint64(0))}, trace.Event{Type: trace.Callback, Pass: trace.U64(0)},
		trace.Event{Type: trace.Returned, Op: trace.OpPass, Phase: "middle"}, trace.Event{Type: trace.Returned, Op: "SNAPSHOT", Phase: trace.PhaseEnter})
	x := newIndex(tr)
	for i := range tr.Events {
		e := &tr.Events[i]
		if x.col[i].kind != evKindOf(e.Type) {
			t.Fatalf("event %d (%s): kind %d", i, e.Type, x.col[i].kind)
		}
		want := cbOther
		for _, c := range []struct {
			op    trace.Op
			phase trace.Phase
			is    opPhase
		}{{trace.OpConfig, trace.PhaseEnter, cbConfigEnter}, {trace.OpConfig, trace.PhaseExit, cbConfigExit}, {trace.OpPass, trace.PhaseEnter, cbPassEnter}, {trace.OpPass, trace.PhaseExit, cbPassExit}} {
			if e.Op == c.op && e.Phase == c.phase {
				want = c.is
			}
		}
		if x.col[i].op != want {
			t.Fatalf("event %d (%s %s): opPhase %d, want %d", i, e.Op, e.Phase, x.col[i].op, want)
		}
		if x.col[i].thread != e.Thread {
			t.Fatalf("event %d: thread %d, the event's %d", i, x.col[i].thread, e.Thread)
		}
		if x.col[i].dispatch != e.Dispatch {
			t.Fatalf("event %d: dispatch %d, the event's %d", i, x.col[i].dispatch, e.Dispatch)
		}
		p, ok := x.passOf(i)
		if q, okq := e.PassOf(); p != q || ok != okq {
			t.Fatalf("event %d: pass %d (%v), the event's %d (%v)", i, p, ok, q, okq)
		}
	}
}

// ofType lists the events of each type, known to this version or not, in
// trace order.
func TestOfType(t *testing.T) {
	tr := bigTrace(500)
	tr.Events = append(tr.Events, trace.Event{Type: "no such type"}, trace.Event{Type: trace.Warning}, trace.Event{Type: "no such type"})
	x := newIndex(tr)
	for _, ty := range append(trace.Types(), "no such type", "nor this") {
		var want []int
		for i := range tr.Events {
			if tr.Events[i].Type == ty {
				want = append(want, i)
			}
		}
		if got := x.ofType(ty); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", ty, got, want)
		}
		if x.has(ty) != (len(want) > 0) {
			t.Errorf("%s: has %v", ty, x.has(ty))
		}
	}
}

// TestKindCacheAsSwitch: the index's cache of types' kinds answers as
// evKindOf does, for every type in any copy of its string, for a prefix of
// one (the same bytes, shorter), and for unknown types, asked in an order
// that makes every slot hit and miss.
func TestKindCacheAsSwitch(t *testing.T) {
	var types []trace.Type
	for _, ty := range trace.Types() {
		s := string(ty)
		types = append(types, ty, trace.Type(strings.Clone(s)), trace.Type(s[:len(s)-1]), trace.Type(s+"x"))
	}
	types = append(types, "", "nonesuch")
	var c kindCache
	check := func(round int, ty trace.Type) {
		t.Helper()
		if got, want := c.of(ty), evKindOf(ty); got != want {
			t.Fatalf("round %d: kind of %q: cache says %d, evKindOf %d", round, ty, got, want)
		}
	}
	for _, ty := range types {
		s := string(ty)
		check(-1, ty)
		if len(s) > 1 {
			check(-1, trace.Type(s[:len(s)-1])) // the bytes just cached, shorter
		}
		check(-1, ty)
	}
	for round := range 3 {
		for k := range types {
			check(round, types[(k*7+round)%len(types)])
		}
	}
}

// TestPayloadMembersEndWithin: no payload member ends past the whole
// payload, so that API-5 (checkPayloadSize) need not read a callback's
// members when its size covers the whole payload.
func TestPayloadMembersEndWithin(t *testing.T) {
	for _, m := range trace.PayloadLayout {
		if end, ok := trace.MemberEnd(m.Member); !ok || end > trace.PayloadSize {
			t.Errorf("payload member %s ends at %d (known %v), past the whole payload's %d bytes: checkPayloadSize must read the members at every size", m.Member, end, ok, trace.PayloadSize)
		}
	}
}
