package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// TestCopiedBuffersFind holds find (names compared in turn in a small copy,
// a binary search in a large one) to a binary search over the sorted
// names, for every name present and for names between and around them, and
// addFirst to keeping the copy sorted with each name once.
func TestCopiedBuffersFind(t *testing.T) {
	for n := 0; n <= 12; n++ {
		var c copiedBuffers
		for k := n - 1; k >= 0; k-- { // added out of order, twice
			c.addFirst(fmt.Sprintf("b%02d", 2*k+1), k, "")
			c.addFirst(fmt.Sprintf("b%02d", 2*k+1), -1, "")
		}
		if len(c) != n || !slices.IsSortedFunc(c, func(a, b copiedBuffer) int { return strings.Compare(a.name, b.name) }) {
			t.Fatalf("%d buffers added: %v", n, c)
		}
		for k := 0; k <= 2*n+1; k++ {
			name := fmt.Sprintf("b%02d", k)
			want, wantOK := slices.BinarySearchFunc(c, name, func(b copiedBuffer, name string) int { return strings.Compare(b.name, name) })
			if got, ok := c.find(name); got != want || ok != wantOK {
				t.Errorf("%d buffers: find(%s) = %d, %v; want %d, %v", n, name, got, ok, want, wantOK)
			}
			if ok := k%2 == 1 && k < 2*n; wantOK != ok {
				t.Fatalf("%d buffers: %s there: %v", n, name, wantOK)
			}
		}
	}
}

// TestCopiesOfInterleaved holds copiesOf (each copy's buffers in one
// shared array, a copy filled after a later one began moved out of it) to
// the copies made the simple way, a map by pass and phase, over copies
// of one, two and three buffers whose tool_memory events come together
// and interleaved with another pass's.
func TestCopiesOfInterleaved(t *testing.T) {
	type key struct {
		exit bool
		pass uint64
	}
	mem := func(phase trace.Phase, pass uint64, buffer string) trace.Event {
		return trace.Event{Type: trace.ToolMemory, Dispatch: 1, Thread: 1, Op: trace.OpPass, Phase: phase,
			Pass: &pass, Buffer: buffer, Digest: fmt.Sprintf("%s@%s%d", buffer, phase, pass)}
	}
	var ev []trace.Event
	for p := range uint64(4) {
		for _, b := range []string{"c", "a", "b"}[:p%3+1] {
			ev = append(ev, mem(trace.PhaseEnter, p, b))
		}
		ev = append(ev, mem(trace.PhaseExit, p, "a"))
		if p > 0 {
			// Pass p-1's copies again, after pass p's began: one buffer
			// more, and one copied already (its first copy stands).
			ev = append(ev, mem(trace.PhaseEnter, p-1, "d"), mem(trace.PhaseExit, p-1, "c"), mem(trace.PhaseEnter, p-1, "c"))
		}
	}
	x := newIndex(trace.Trace{Events: ev})
	want := map[key]map[string]int{}
	for i, e := range ev {
		k := key{e.Phase == trace.PhaseExit, *e.Pass}
		if want[k] == nil {
			want[k] = map[string]int{}
		}
		if _, ok := want[k][e.Buffer]; !ok {
			want[k][e.Buffer] = i
		}
	}
	pc := x.copiesOf(x.dispatches[1])
	for k, bufs := range want {
		by := &pc.enter
		if k.exit {
			by = &pc.exit
		}
		c := by.get(k.pass)
		if c == nil {
			t.Fatalf("no copy at %+v", k)
		}
		if len(c.buffers) != len(bufs) {
			t.Errorf("copy at %+v holds %v, want %v", k, c.buffers, bufs)
		}
		for b, at := range bufs {
			if got := c.buffers.pos(b); got != at {
				t.Errorf("copy at %+v has buffer %s at %d, want %d", k, b, got, at)
			}
			if dg, _ := c.digest(x, b); dg != ev[at].Digest {
				t.Errorf("copy at %+v has buffer %s of digest %s, want %s", k, b, dg, ev[at].Digest)
			}
		}
	}
}
