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

// Recorder collects events from every part of a run. It is safe for
// concurrent use; it numbers events in the order they arrive and stamps
// them with the clock when they carry no time of their own.
type Recorder struct {
	mu     sync.Mutex
	clock  func() uint64
	chunks [][]Event
	n      int
	sink   func(Event)
}

// NewRecorder returns a recorder whose events are stamped by clock (nil:
// no time stamps).
func NewRecorder(clock func() uint64) *Recorder {
	return &Recorder{clock: clock}
}

// SetClock sets the clock that stamps events (for runtimes made after
// their recorder).
func (r *Recorder) SetClock(clock func() uint64) {
	r.mu.Lock()
	r.clock = clock
	r.mu.Unlock()
}

// SetSink makes the recorder pass every event to sink as it arrives, as
// well as keeping it (a streaming trace writer uses it).
func (r *Recorder) SetSink(sink func(Event)) {
	r.mu.Lock()
	r.sink = sink
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
	k := len(r.chunks) - 1
	if k < 0 || len(r.chunks[k]) == cap(r.chunks[k]) {
		size := firstChunk
		if k >= 0 {
			size = min(2*cap(r.chunks[k]), chunkEvents)
		}
		r.chunks = append(r.chunks, make([]Event, 0, size))
		k++
	}
	r.chunks[k] = append(r.chunks[k], e)
	if r.sink != nil {
		r.sink(e)
	}
}

// Events returns a copy of what was recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flatten()
}

// Take returns what was recorded and forgets it, dropping each chunk as it
// is copied so that the events are held about once, not twice.
func (r *Recorder) Take() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Event, 0, r.held())
	for i, c := range r.chunks {
		out = append(out, c...)
		r.chunks[i] = nil
	}
	r.chunks = nil
	return out
}

func (r *Recorder) flatten() []Event {
	out := make([]Event, 0, r.held())
	for _, c := range r.chunks {
		out = append(out, c...)
	}
	return out
}

// held is how many events the chunks hold.
func (r *Recorder) held() int {
	n := 0
	for _, c := range r.chunks {
		n += len(c)
	}
	return n
}

// Len is the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}
