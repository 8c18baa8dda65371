package trace

import "sync"

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
	// lastWords is the closed-set word each of pack's six fields had last,
	// and its place (0: none yet).
	lastWords [6]struct {
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
		c.chunks = append(c.chunks, make([]packed, 0, size))
		k++
	}
	c.chunks[k] = append(c.chunks[k], packed{})
	c.pack(&c.chunks[k][len(c.chunks[k])-1], e)
	c.n++
}

// flatten returns the events as one slice; with release, it forgets them,
// dropping each chunk as it is unpacked.
func (c *eventChunks) flatten(release bool) []Event {
	if c.n == 0 {
		return nil
	}
	out := make([]Event, c.n)
	c.unpackInto(out, release)
	return out
}

// unpackInto unpacks the events into out (zero Events, c.n of them); with
// release, it forgets them, dropping each chunk as it is unpacked.
func (c *eventChunks) unpackInto(out []Event, release bool) {
	i := 0
	for k, ch := range c.chunks {
		for j := range ch {
			c.unpack(&ch[j], &out[i])
			i++
		}
		if release {
			c.chunks[k] = nil
		}
	}
	if release {
		*c = eventChunks{}
	}
}

// A recorder keeps its first headEvents events as they are, in chunks of
// Events, and packs only those beyond. A run of normal size (a thousand
// passes of a loop record about 13,000 events) is then never packed nor
// unpacked: where packing each event and unpacking it into a fresh flat
// trace was a quarter of a pass's CPU, Take now copies the chunks into the
// flat trace once (or hands over the one chunk of a short run). The
// chunks of full size go back to a pool for the next recorder, so that a
// run of many specs allocates each trace's chunks about once. A long run
// pays the head once (11.5 MiB beside a trace of hundreds) and keeps the
// rest packed as before.
const headEvents = 16 * chunkEvents

// headPool holds emptied head chunks of chunkEvents events, for reuse.
var headPool sync.Pool

// Recorder collects events from every part of a run. It is safe for
// concurrent use; it numbers events in the order they arrive and stamps
// them with the clock when they carry no time of their own.
type Recorder struct {
	mu     sync.Mutex
	clock  func() uint64
	head   [][]Event   // the first events (at most headEvents), as they are
	heads  int         // events in head
	events eventChunks // the events after head, packed
	n      int         // events recorded, taken or not
	sink   func(Event)
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
// come: Take then returns none).
func (r *Recorder) SetSink(sink func(Event), keep bool) {
	r.mu.Lock()
	r.sink, r.keep = sink, keep || sink == nil
	r.mu.Unlock()
}

// Emit appends e, giving it the next sequence number.
func (r *Recorder) Emit(e Event) {
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
		r.keepEvent(&e)
	}
	if r.sink != nil {
		r.sink(e)
	}
}

// keepEvent adds a copy of e: to the head while it has room, else packed.
func (r *Recorder) keepEvent(e *Event) {
	if r.heads == headEvents {
		r.events.push(e)
		return
	}
	k := len(r.head) - 1
	if k < 0 || len(r.head[k]) == cap(r.head[k]) {
		ch, _ := headPool.Get().([]Event)
		if ch == nil {
			size := firstChunk
			if k >= 0 {
				size = min(2*cap(r.head[k]), chunkEvents)
			}
			ch = make([]Event, 0, size)
		}
		r.head = append(r.head, ch)
		k++
	}
	r.head[k] = append(r.head[k], *e)
	r.heads++
}

// flatten returns the events as one slice; with release, it forgets them,
// the head's chunks going back to the pool once copied. A head of one
// chunk, alone, is handed over as it is.
func (r *Recorder) flatten(release bool) []Event {
	if r.heads+r.events.n == 0 {
		return nil
	}
	if release && len(r.head) == 1 && r.events.n == 0 {
		out := r.head[0]
		r.head, r.heads = nil, 0
		return out
	}
	out := make([]Event, r.heads+r.events.n)
	i := 0
	for k, ch := range r.head {
		i += copy(out[i:], ch)
		if release {
			r.head[k] = nil
			if cap(ch) == chunkEvents {
				// Not cleared: clearing a chunk while the collector runs
				// costs as much as filling it, the taken events hold what
				// it points to anyway, and the pool is emptied by the
				// collector within two cycles.
				headPool.Put(ch[:0])
			}
		}
	}
	if release {
		r.head, r.heads = nil, 0
	}
	r.events.unpackInto(out[i:], release)
	return out
}

// Events returns a copy of what was recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flatten(false)
}

// Take returns what was recorded and forgets it: the head as it was kept,
// or, past it, one slice made at its final size with each chunk dropped
// as it is unpacked.
func (r *Recorder) Take() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flatten(true)
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

// TakeAfter returns prefix followed by the events held, as one new slice
// made at its final size, and forgets the events. It keeps its first chunk,
// emptied, for the next events: a stream's segments are mostly a few
// events each, and a new chunk for each was a tenth of judging a stream.
func (b *Buffer) TakeAfter(prefix []Event) []Event {
	out := make([]Event, len(prefix), len(prefix)+b.c.n)
	copy(out, prefix)
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
