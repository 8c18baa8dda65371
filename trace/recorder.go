package trace

import "sync"

// Recorder collects events from every part of a run. It is safe for
// concurrent use; it numbers events in the order they arrive and stamps
// them with the clock when they carry no time of their own.
type Recorder struct {
	mu     sync.Mutex
	clock  func() uint64
	events []Event
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
	e.Seq = uint64(len(r.events)) + 1
	if e.Time == 0 && r.clock != nil {
		e.Time = r.clock()
	}
	r.events = append(r.events, e)
	if r.sink != nil {
		r.sink(e)
	}
}

// Events returns a copy of what was recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Len is the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}
