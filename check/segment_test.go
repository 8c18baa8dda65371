package check

import (
	goruntime "runtime"
	"testing"

	"github.com/replayspec/replayspec/trace"
)

// TestSegmentSliceKept: a finished stream's segment slice is kept for the
// next one across collections (a sync.Pool lost it at most runs),
// only the larger of two is kept, and one slice is handed to one stream
// at a time.
func TestSegmentSliceKept(t *testing.T) {
	pooledSlice(columns{}) // whatever other tests left
	push := func(n int) *segment {
		var g segment
		g.begin(nil)
		for i := range n {
			g.Push(&trace.Event{Seq: uint64(i)})
		}
		g.all()
		return &g
	}
	small, large := push(10), push(1000)
	want := cap(large.ev)
	large.release()
	small.release() // smaller: the slot keeps the larger
	goruntime.GC()
	goruntime.GC()
	got, cols := pooledSlice(columns{})
	if cap(got) != want || len(got) != 0 {
		t.Fatalf("after two collections the slot gave len %d cap %d, want the larger slice (cap %d) emptied", len(got), cap(got), want)
	}
	if cap(cols.rows) < 1000 || cols.Len() != 0 {
		t.Fatalf("the slot's columns have len %d cap %d, want those of the larger stream (1,000 events) kept with its slice, emptied", cols.Len(), cap(cols.rows))
	}
	if again, _ := pooledSlice(columns{}); again != nil {
		t.Fatalf("the slot gave its slice twice (cap %d): two streams would share it", cap(again))
	}
	huge := push(keptEvents + 1)
	huge.release()
	if ev, _ := pooledSlice(columns{}); ev != nil {
		t.Fatalf("a slice of %d events was kept (the slot keeps at most %d)", cap(ev), keptEvents)
	}
}

// TestPositionsKept: an index's array of positions is kept for the next
// index, made large enough for all the last one asked for, only the
// larger of two is kept, it is handed to one index at a time, and one
// past keptPositions is let go.
func TestPositionsKept(t *testing.T) {
	takePositions() // whatever other tests left
	judged := func(n int, ints []int) {
		a := indexArrays{ints: ints}
		ev := make([]trace.Event, n)
		for i := range ev {
			ev[i] = trace.Event{Type: trace.Kernel, Thread: 1}
		}
		x := newIndexInts(trace.Trace{Events: ev}, nil, a)
		if x.ints.wanted < 2*n {
			t.Fatalf("an index of %d events asked for %d places, want its threads' and types' lists (%d) at least", n, x.ints.wanted, 2*n)
		}
		x.givePositions()
	}
	judged(1000, nil)
	kept := takePositions()
	first := kept.ints
	if len(first) < 2000 || cap(kept.windowOf) < 1000 || cap(kept.byTool) < 1000 || cap(kept.toolReads) < 1000 {
		t.Fatalf("the slot kept %d places (windows %d, flags %d and %d) after an index of 1,000 events, want room for all it asked for", len(first), cap(kept.windowOf), cap(kept.byTool), cap(kept.toolReads))
	}
	if again := takePositions(); again.ints != nil || again.windowOf != nil || again.byTool != nil || again.toolReads != nil {
		t.Fatalf("the slot gave its arrays twice (%d places): two indexes would share them", len(again.ints))
	}
	judged(1000, first) // fits: the same array comes back
	if got := takePositions().ints; &got[0] != &first[0] {
		t.Fatalf("an index that fit in the array it was given did not give it back")
	}
	judged(10, first)
	judged(10, nil) // smaller: the slot keeps the larger
	if got := takePositions().ints; cap(got) != cap(first) {
		t.Fatalf("the slot holds %d places, want the larger array (%d)", cap(got), cap(first))
	}
	x := &index{ints: arena[int]{wanted: keptPositions + 1}} // as one that asked for more
	x.givePositions()
	if got := takePositions().ints; got != nil {
		t.Fatalf("an array of %d places was kept (the slot keeps at most %d)", len(got), keptPositions)
	}
}
