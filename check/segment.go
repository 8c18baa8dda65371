package check

import (
	"slices"
	"sync"

	"github.com/replayspec/replayspec/trace"
)

// segment holds Stream's open segment as the oracles read it: one slice,
// the prologue (as it stood when the segment began) and then the
// segment's events, so that judging it copies nothing. Kept packed
// (trace.Buffer) and unpacked into a new slice for each judgement, every
// event was copied twice more and the slice was a fresh allocation to
// clear: a fifth of judging a stream.
//
// The slice is reused from segment to segment. Past plainEvents events,
// the rest are kept packed (a third of the bytes), so that a segment that
// is never cut (a long fixed loop, a dispatch that stays in flight) is
// held about as small as before; it is unpacked behind the plain ones
// when judged.
type segment struct {
	ev   []trace.Event // prologue, then the segment's first events
	np   int           // the prologue's events at ev's front
	over trace.Buffer  // the events past plainEvents
	// cols are the columns (columns.go) of the prologue and of every
	// event pushed, plain or packed, filled as each arrives.
	cols columns
}

// plainEvents: the segment's events held unpacked, at most. Segments are
// cut at the first chance past Stream.minSegment events (4,096), and a
// loop every 256 passes: most stay within this. 16,384 events are 11 MiB.
// A fixed loop of up to about 1,100 passes (14 events a pass) is held
// plain: at 8,192, a loop of 1,000 packed and unpacked its last 5,800
// events, a tenth of the CPU of its pass streamed. (A segment past this
// is unpacked whole when judged anyway: what packing its tail saves is
// held while it is recorded, not when it is judged.)
const plainEvents = 16384

// keptEvents: the largest slice kept for the next segment, and in
// segmentSlices for the next stream (14 MiB): room for plainEvents events,
// a prologue and what append added when it grew (a quarter at most).
const keptEvents = 20480

// Len is the number of the segment's events (the prologue not counted).
func (g *segment) Len() int { return len(g.ev) - g.np + g.over.Len() }

// Push adds a copy of e at the end.
func (g *segment) Push(e *trace.Event) { g.push(e, g.cols.kc.of(e.Type)) }

// push is Push of e, of kind k.
func (g *segment) push(e *trace.Event, k evKind) {
	g.cols.pushKind(e, k) // e is in the cache now
	if g.over.Len() == 0 && len(g.ev)-g.np < plainEvents {
		if g.ev == nil {
			g.ev, g.cols = pooledSlice(g.cols)
		}
		g.ev = appendEvent(g.ev, e)
		return
	}
	g.over.Push(e)
}

// appendEvent is append(ev, *e), grown first and then written in place:
// append(ev, *e) copies the 704-byte event onto the stack and from there
// into the slice.
func appendEvent(ev []trace.Event, e *trace.Event) []trace.Event {
	n := len(ev)
	if n == cap(ev) {
		ev = slices.Grow(ev, 1)
	}
	ev = ev[:n+1]
	ev[n] = *e
	return ev
}

// segmentSlices keeps a finished stream's segment slice for the next
// stream: a run of one long dispatch is one segment, and growing its
// slice from nothing (and clearing each new one) cost more than judging
// it (BenchmarkPipelinePassStreamed). One slot, the largest slice given
// back, and not a sync.Pool: a stream allocates a few MiB, so the
// collector ran between most runs and emptied the pool, and the next run
// grew its slice again (4-6 µs of the ~20 a pass streamed). The slot
// holds at most keptEvents events (14 MiB) and their columns (32 bytes an
// event, and what they keep aside) for as long as the process lives, and,
// not cleared, what the last stream's events point to until the next
// stream writes over them.
var segmentSlices struct {
	sync.Mutex
	ev   []trace.Event
	cols columns // kept with ev
}

// pooledSlice is the slice segmentSlices holds (emptied), or nil, and the
// columns kept with it holding c's entries (c itself when the slot holds
// none); the slot is then empty, so that no two streams share a slice.
func pooledSlice(c columns) ([]trace.Event, columns) {
	segmentSlices.Lock()
	ev, kept := segmentSlices.ev, segmentSlices.cols
	segmentSlices.ev, segmentSlices.cols = nil, columns{}
	segmentSlices.Unlock()
	if kept.rows == nil {
		return ev, c
	}
	kept.reset()
	kept.kc = c.kc
	kept.appendAll(&c)
	return ev, kept
}

// begin empties the segment and puts prologue before its events.
func (g *segment) begin(prologue []trace.Event) {
	old, cols := g.ev, g.cols
	if old == nil {
		old, cols = pooledSlice(columns{kc: g.cols.kc})
	}
	if cap(old) > keptEvents+len(prologue) {
		old = nil // grown for a long segment: let it go
	}
	if cap(cols.rows) > keptEvents+len(prologue) {
		cols = columns{kc: cols.kc}
	}
	// Not cleared: the next events overwrite the last's, and what those
	// point to is held a segment longer at most.
	g.ev = append(old[:0], prologue...)
	g.np = len(prologue)
	g.over = trace.Buffer{}
	g.cols = cols
	g.cols.reset()
	for i := range prologue {
		g.cols.push(&prologue[i])
	}
}

// all is the prologue and the segment's events, in one slice owned by g:
// valid until the next begin, keep or Push.
func (g *segment) all() []trace.Event {
	if g.over.Len() > 0 {
		g.ev = g.over.TakeAfter(g.ev)
	}
	return g.ev
}

// keep leaves in the segment only its events [0, head) and [from, Len()):
// a loop's head and its last pass (Stream.cutLoop). all must have been
// called since the last Push.
func (g *segment) keep(head, from int) {
	ev := g.ev
	n := copy(ev[g.np+head:], ev[g.np+from:])
	end := g.np + head + n
	clear(ev[end:])
	g.ev = ev[:end]
	g.cols.cutOut(g.np+head, g.np+from)
}

// release gives the segment's slice to the next stream (when it is larger
// than the one the slot holds) and empties g.
// Nothing may read it after: a violation holds copies of its events.
func (g *segment) release() {
	if ev := g.ev; cap(ev) > 0 && cap(ev) <= keptEvents {
		segmentSlices.Lock()
		if cap(ev) > cap(segmentSlices.ev) {
			segmentSlices.ev = ev[:0]
			segmentSlices.cols = columns{}
			if cap(g.cols.rows) <= keptEvents {
				segmentSlices.cols = g.cols
			}
		}
		segmentSlices.Unlock()
	}
	*g = segment{}
}
