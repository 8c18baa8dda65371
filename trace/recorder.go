package trace

import (
	"slices"
	"sync"
	"unsafe"
)

// Events go into chunks so that a long run never copies what it has
// recorded to grow (a slice that grows copies every event several times
// over and holds two copies while it does). Chunks start small, so that a
// short run does not pay for a large one, and double up to chunkEvents.
const (
	firstChunk  = 32
	chunkEvents = 1024
)

// eventChunks is a list of events that grows without copying them. It
// keeps each event packed (packed.go: 248 bytes where an Event is 704),
// since the flat slice that flatten makes is held beside the chunks at the
// end of a run: a long run's peak is the two together.
type eventChunks struct {
	chunks [][]packed
	n      int
	names  strtab // the strings the packed events name
	// lastWords are, for each of pack's six fields, the closed-set words
	// it had lately and their places (0: none yet), in a slot each that
	// wordSlot picks.
	lastWords [6][wordSlots]struct {
		w string
		k uint8
	}
}

// push adds a copy of e at the end.
func (c *eventChunks) push(e *Event) {
	k := len(c.chunks) - 1
	if k < 0 || len(c.chunks[k]) == cap(c.chunks[k]) {
		size := firstChunk
		if k >= 0 {
			size = min(2*cap(c.chunks[k]), chunkEvents)
		}
		ch, _ := chunkPool.Get().([]packed)
		if ch == nil {
			ch = make([]packed, 0, size)
		}
		c.chunks = append(c.chunks, ch)
		k++
	}
	// Within its capacity, so not zeroed first: pack writes every field
	// (a pooled chunk holds what it held before).
	n := len(c.chunks[k])
	c.chunks[k] = c.chunks[k][:n+1]
	c.pack(&c.chunks[k][n], e)
	c.n++
}

// flatten returns the events as one slice; with release, it forgets them,
// dropping each chunk as it is unpacked.
func (c *eventChunks) flatten(release bool) []Event {
	if c.n == 0 {
		return nil
	}
	out := make([]Event, c.n)
	i := 0
	for k, ch := range c.chunks {
		for j := range ch {
			c.unpack(&ch[j], &out[i])
			i++
		}
		if release {
			c.chunks[k] = nil
			if cap(ch) == chunkEvents {
				chunkPool.Put(ch[:0])
			}
		}
	}
	if release {
		*c = eventChunks{}
	}
	return out
}

// chunkPool holds full-size chunks that flatten has released, for the next
// push that needs one: a run of many specs (a library, a benchmark's
// loop) allocates its chunks about once, where each run's made a fifth of
// the bytes a loop's pass allocates. They are not cleared: clearing a
// chunk while the collector marks costs about what filling it does, what
// they point to is the flattened events' anyway, and the collector
// empties the pool within two cycles.
var chunkPool sync.Pool

// Recorder collects events from every part of a run. It is safe for
// concurrent use; it numbers events in the order they arrive and stamps
// them with the clock when they carry no time of their own.
type Recorder struct {
	mu     sync.Mutex
	clock  func() uint64
	events eventChunks
	n      int // events recorded, taken or not
	sink   func(*Event)
	keep   bool // keep events besides handing them to the sink
}

// NewRecorder returns a recorder whose events are stamped by clock (nil:
// no time stamps).
func NewRecorder(clock func() uint64) *Recorder {
	return &Recorder{clock: clock, keep: true}
}

// SetClock sets the clock that stamps events (for runtimes made after
// their recorder).
func (r *Recorder) SetClock(clock func() uint64) {
	r.mu.Lock()
	r.clock = clock
	r.mu.Unlock()
}

// SetSink makes the recorder pass every event to sink as it arrives, as
// well as keeping it (a streaming trace writer uses it), or instead of
// keeping it when keep is false (a caller that judges the events as they
// come: Take then returns none). The sink may read the event only until
// it returns (copy what it keeps): it is the emitter's own, often on its
// stack.
func (r *Recorder) SetSink(sink func(*Event), keep bool) {
	r.mu.Lock()
	r.sink, r.keep = sink, keep || sink == nil
	r.mu.Unlock()
}

// Cut stops handing events to the sink: those recorded from now on are
// numbered, and kept if the recorder keeps events, but no sink sees them.
// It returns how many were recorded before. (The simulator cuts where its
// process hangs, sim.Runtime.DeadlockedAt: what it records after never
// happened in the process it models. Cut there, the sink needs no check
// of its own on every event.)
func (r *Recorder) Cut() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sink = nil
	return r.n
}

// Emit appends e, giving it the next sequence number.
func (r *Recorder) Emit(e Event) { r.EmitRef(&e) }

// EmitRef is Emit of *e, which it numbers (Seq) and stamps (Time, when
// zero) in place: the caller's event is kept as a copy and handed to the
// sink where it lies, not copied twice more on the way (704 bytes each, a
// dozen events a pass). The caller may reuse *e once it returns (with its
// Time cleared, if it is to be stamped again).
func (r *Recorder) EmitRef(e *Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	e.Seq = uint64(r.n)
	if e.Time == 0 && r.clock != nil {
		e.Time = r.clock()
	}
	if r.keep {
		r.events.push(e)
	}
	if r.sink != nil {
		r.sink(lent(e))
	}
}

// lent hides from escape analysis that e goes to the sink: the sink is a
// function value, so the compiler must assume it keeps e, and would move
// every caller's event to the heap (an allocation each). SetSink's
// contract says a sink keeps no pointer to the event past its return, so
// e may lie on the caller's stack. The pointer is read back through a
// uintptr, which escape analysis does not follow (the runtime's own
// noescape does the same); nothing between can move the stack.
func lent(e *Event) *Event {
	p := uintptr(unsafe.Pointer(e))
	return *(**Event)(unsafe.Pointer(&p))
}

// Events returns a copy of what was recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events.flatten(false)
}

// Take returns what was recorded and forgets it, dropping each chunk as it
// is unpacked.
func (r *Recorder) Take() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events.flatten(true)
}

// Len is the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Buffer holds events packed (248 bytes where an Event is 704) until they
// are taken as one slice: a reader that must keep a stretch of a trace
// whole before it can use it (check.Stream's open segment) keeps it here.
type Buffer struct{ c eventChunks }

// Push adds a copy of e at the end.
func (b *Buffer) Push(e *Event) { b.c.push(e) }

// Len is the number of events held.
func (b *Buffer) Len() int { return b.c.n }

// TakeAfter appends the events held to prefix, as append does (in
// prefix's own array when it has room, else in one new one made at its
// final size), and forgets the events. It keeps its first chunk,
// emptied, for the next events: a stream's segments are mostly a few
// events each, and a new chunk for each was a tenth of judging a stream.
func (b *Buffer) TakeAfter(prefix []Event) []Event {
	out := slices.Grow(prefix, b.c.n)
	var first []packed
	for k, ch := range b.c.chunks {
		for j := range ch {
			out = append(out, Event{})
			b.c.unpack(&ch[j], &out[len(out)-1])
		}
		if k == 0 {
			first = ch
		}
		b.c.chunks[k] = nil
	}
	chunks := b.c.chunks[:0]
	b.c = eventChunks{}
	if first != nil {
		clear(first) // what the events held is the taken events' now
		b.c.chunks = append(chunks, first[:0])
	}
	return out
}
