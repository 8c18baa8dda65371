package harness

import (
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// What a tool can see of memory from inside its callbacks: a real tool
// learns the application's allocations from memory-allocation tracing and
// may copy device memory while it holds a callback. Copied at PASS ENTER
// and PASS EXIT, the buffers show the memory each pass starts from and
// leaves, so that restores are judged at the black-box profile (MEM-2,
// MEM-3, MEM-4; docs/oracles.md).

// liveBuffer is one buffer of the application that is allocated and not
// freed.
type liveBuffer struct {
	name  string
	alloc hsa.Allocation
}

// liveBuffers lists the application's live buffers in spec order; the
// caller only reads the list (the same one until memory changes: no
// allocation and no lock a pass).
func (a *app) liveBuffers() []liveBuffer {
	if l := a.live.Load(); l != nil {
		return *l
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if l := a.live.Load(); l != nil {
		return *l
	}
	l := a.liveOf(nil)
	a.live.Store(&l)
	return l
}

// liveOf appends the live buffers to dst, read from buffers and freed; the
// caller holds mu.
func (a *app) liveOf(dst []liveBuffer) []liveBuffer {
	for _, b := range a.s.Application.Buffers {
		if al, ok := a.buffers[b.Name]; ok && !a.freed[b.Name] {
			dst = append(dst, liveBuffer{b.Name, al})
		}
	}
	return dst
}

// wholeRead reads a buffer whole through hsa.Mapper and keeps its digest
// and element count: use is made once per application, and mu holds the
// results for the one reading. A runtime that digests in place
// (digestReader) is asked that instead.
type wholeRead struct {
	digester digestReader // the runtime, where it digests in place; else nil
	mapper   hsa.Mapper   // the runtime, where it reads in place; else nil
	mu       sync.Mutex
	use      func(src []byte, digest string)
	digest   string
	elements uint64
}

// digestReader is a runtime that reads an allocation whole for its digest
// and size alone (sim.Runtime.ReadDigest), recorded as ReadWith's read.
type digestReader interface {
	ReadDigest(a hsa.Allocation) (digest string, size uint64, err error)
}

// digestOf reads b whole and returns its digest and element count; ok is
// false when it cannot be read (freed by another thread meanwhile).
func (a *app) digestOf(b hsa.Allocation) (digest string, elements uint64, ok bool) {
	if d := a.read.digester; d != nil {
		digest, size, err := d.ReadDigest(b) // no lock of ours, nor a function handed over
		return digest, size / 4, err == nil
	}
	if m := a.read.mapper; m != nil {
		r := &a.read
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.use == nil {
			r.use = func(src []byte, d string) {
				if d == "" {
					d = trace.Digest(src)
				}
				r.digest, r.elements = d, uint64(len(src)/4)
			}
		}
		r.digest, r.elements = "", 0
		err := m.ReadWith(b, r.use)
		return r.digest, r.elements, err == nil
	}
	data := make([]byte, b.Size)
	if err := a.rt.Read(b, 0, data); err != nil {
		return "", 0, false
	}
	return trace.Digest(data), uint64(len(data) / 4), true
}

// copyMemory copies every live buffer of the application from inside the
// PASS callback "where" names, on thread th, and records each copy as a
// tool_memory event. The copies are the tool's own: they are neither the
// SDK's snapshot nor its restore, and the runtime's account shows them
// inside the callback (check/traffic.go tells them apart).
func (t *tool) copyMemory(th hsa.ThreadID, where *window) {
	if t.app == nil {
		return
	}
	t.app.memMu.RLock() // no buffer freed, its address reused, meanwhile
	defer t.app.memMu.RUnlock()
	for _, b := range t.app.liveBuffers() {
		digest, elements, ok := t.app.digestOf(b.alloc)
		if !ok {
			continue
		}
		t.rec.EmitRef(&trace.Event{Type: trace.ToolMemory, Thread: uint64(th), Dispatch: where.dispatch,
			Op: where.op, Phase: where.phase, Pass: where.pass, Buffer: b.name, Digest: digest, Elements: elements})
	}
}

// signalOf is the completion signal of the dispatch thread is submitting,
// if any.
func (a *app) signalOf(thread hsa.ThreadID) (hsa.Signal, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sig, ok := a.signals[thread]
	return sig, ok
}

// loadSignal records the value of the application's completion signal as
// the tool loads it from inside the callback "where" names: the
// application hands its tool the signal it waits on, and until the loop
// has ended it must still read 1 (CMP-2).
func (t *tool) loadSignal(th hsa.ThreadID, where *window) {
	if t.app == nil {
		return
	}
	sig, ok := t.app.signalOf(th)
	if !ok {
		return
	}
	t.rec.EmitRef(&trace.Event{Type: trace.ToolSignal, Thread: uint64(th), Dispatch: where.dispatch, Op: where.op,
		Phase: where.phase, Pass: where.pass, Signal: uint64(sig.ID()), Value: trace.I64(sig.Value())})
}
