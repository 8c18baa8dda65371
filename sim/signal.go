package sim

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

type signal struct {
	rt    *Runtime
	id    hsa.SignalID
	value atomic.Int64
	// mu orders changes: a decrement is recorded before its new value can
	// be seen, so a waiter that sees it records its wakeup after the
	// signal event (the trace stays a linearization under free threads).
	mu sync.Mutex
}

func (s *signal) ID() hsa.SignalID { return s.id }
func (s *signal) Value() int64     { return s.value.Load() }

func (s *signal) Store(v int64) {
	s.mu.Lock()
	s.value.Store(v)
	s.mu.Unlock()
}

// Decrement is a decrement by software (the replay engine firing a held
// back completion, CMP-2). Under the scheduler the caller is the thread
// that holds the baton; otherwise the event names no thread.
func (s *signal) Decrement() { s.decrementBy(s.rt.threads.holder()) }

func (s *signal) decrementBy(thread hsa.ThreadID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.value.Load() - 1
	s.rt.emitSignal(thread, s.id, v)
	s.value.Store(v)
}

// WaitBelow waits like WaitUntil for the thread that holds the baton, so a
// scheduled waiter passes it on instead of blocking it. Only application
// threads may call it under the scheduler.
func (s *signal) WaitBelow(v int64) bool {
	return s.rt.threads.waitUntil(s.rt.threads.holder(),
		func() bool { return s.value.Load() < v }, fmt.Sprintf("signal %d below %d", s.id, v))
}

// completeSignal decrements a packet's completion signal as the hardware
// does, on the submitting thread.
func (r *Runtime) completeSignal(thread hsa.ThreadID, sig hsa.Signal) {
	if sig == nil {
		return
	}
	if s, ok := sig.(*signal); ok && s.rt == r {
		s.decrementBy(thread)
		return
	}
	sig.Decrement() // someone else's signal: it records its own decrement
}

func (r *Runtime) emitSignal(thread hsa.ThreadID, id hsa.SignalID, value int64) {
	rec := r.rec.Load()
	if rec == nil {
		return
	}
	rec.EmitRef(&trace.Event{Type: trace.Signal, Time: r.Clock(), Thread: uint64(thread), Signal: uint64(id), Value: trace.I64(value)})
}
