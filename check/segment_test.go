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
