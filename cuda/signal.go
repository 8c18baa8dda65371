package cuda

import (
	"sync"
	"time"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// signal is an hsa.Signal in host memory. Waiters block on a channel that
// is closed and replaced on every change, so a wait can also time out.
type signal struct {
	id      hsa.SignalID
	rec     *trace.Recorder
	timeout func() time.Duration

	mu      sync.Mutex
	value   int64
	changed chan struct{}
}

// CreateSignal returns a signal holding initial.
func (r *Runtime) CreateSignal(initial int64) hsa.Signal {
	r.mu.Lock()
	r.nextSignal++
	id := r.nextSignal
	r.mu.Unlock()
	return &signal{id: id, rec: r.rec, value: initial, changed: make(chan struct{}),
		timeout: func() time.Duration { return r.SignalTimeout }}
}

func (s *signal) ID() hsa.SignalID { return s.id }

func (s *signal) Value() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value
}

// set changes the value and wakes the waiters; before the new value can be
// seen, record(v) runs (nil: nothing), so a waiter that sees it records its
// wakeup after the change is recorded (the trace stays an order in which
// things happened under free threads, docs/decisions.md 18.4).
func (s *signal) set(f func(int64) int64, record func(v int64)) int64 {
	s.mu.Lock()
	v := f(s.value)
	if record != nil {
		record(v)
	}
	s.value = v
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return v
}

func (s *signal) Store(v int64) { s.set(func(int64) int64 { return v }, nil) }

// Decrement is a decrement by a caller that is no packet (the replay engine
// firing the application's completion once); it is traced with no thread.
func (s *signal) Decrement() { s.decrementBy(0) }

// decrementBy decrements and emits the `signal` event for thread.
func (s *signal) decrementBy(thread hsa.ThreadID) {
	s.set(func(v int64) int64 { return v - 1 }, func(v int64) {
		s.rec.Emit(trace.Event{Type: trace.Signal, Thread: uint64(thread), Signal: uint64(s.id), Value: trace.I64(v)})
	})
}

// WaitBelow waits until the value is below v or the runtime's
// SignalTimeout passes.
func (s *signal) WaitBelow(v int64) bool {
	var deadline <-chan time.Time
	if d := s.timeout(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		deadline = t.C
	}
	for {
		s.mu.Lock()
		cur, ch := s.value, s.changed
		s.mu.Unlock()
		if cur < v {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}
