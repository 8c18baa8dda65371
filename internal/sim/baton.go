package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/internal/hsa"
)

// batonRunner is the deterministic scheduler: exactly one application
// thread runs at a time, the one holding the baton. At a yield point the
// baton goes to the next runnable thread id after the holder, wrapping to
// the lowest (the holder itself comes last). A blocked thread is runnable
// once its condition holds; conditions are re-checked each time the baton
// moves. Nothing depends on goroutine timing, so runs repeat exactly.
type batonRunner struct {
	mu      sync.Mutex
	live    map[hsa.ThreadID]*appThread
	ids     []hsa.ThreadID // live ids, ascending
	holding hsa.ThreadID
	// held mirrors holding for readers without mu: the harness asks who
	// runs on every callback (Runtime.Running).
	held    atomic.Uint64
	running bool // between Wait's start and its end
	aborted bool // Cancel or a deadlock: waits fail from now on
	wg      sync.WaitGroup

	all      []error
	reported int
}

type appThread struct {
	id   hsa.ThreadID
	wake chan bool   // the baton, with the result of the wait it ends
	cond func() bool // non-nil while blocked
	what string      // what it waits for, for the deadlock report
}

func newBatonRunner() *batonRunner { return &batonRunner{live: map[hsa.ThreadID]*appThread{}} }

func (b *batonRunner) start(id hsa.ThreadID, fn func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := checkThreadID(id, b.live[id] != nil); err != nil {
		return err
	}
	t := &appThread{id: id, wake: make(chan bool, 1)}
	b.live[id] = t
	i, _ := slices.BinarySearch(b.ids, id)
	b.ids = slices.Insert(b.ids, i, id)
	b.wg.Add(1)
	go b.run(t, fn)
	if b.running && b.holding == 0 {
		b.give(t, true) // started from outside while nobody ran
	}
	return nil
}

func (b *batonRunner) run(t *appThread, fn func()) {
	defer b.wg.Done()
	defer b.finish(t) // also on runtime.Goexit (t.FailNow in a test)
	<-t.wake
	if err := runApp(t.id, fn); err != nil {
		b.fault(err)
	}
}

// finish retires t and passes the baton on.
func (b *batonRunner) finish(t *appThread) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.live, t.id)
	if i, ok := slices.BinarySearch(b.ids, t.id); ok {
		b.ids = slices.Delete(b.ids, i, i+1)
	}
	b.setHolder(0)
	if len(b.ids) > 0 {
		b.give(b.pickAfter(t.id))
	}
}

func (b *batonRunner) wait() error {
	b.mu.Lock()
	if !b.running {
		b.running = true
		if len(b.ids) > 0 {
			b.give(b.pickAfter(0))
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running = false
	b.setHolder(0)
	errs := b.all[b.reported:]
	b.reported = len(b.all)
	return errors.Join(errs...)
}

func (b *batonRunner) yield(id hsa.ThreadID) {
	b.mu.Lock()
	t := b.live[id]
	if t == nil || b.holding != id {
		b.mu.Unlock()
		return
	}
	next, ok := b.pickAfter(id)
	if next == t {
		b.mu.Unlock()
		return
	}
	b.give(next, ok)
	b.mu.Unlock()
	<-t.wake
}

func (b *batonRunner) waitUntil(id hsa.ThreadID, cond func() bool, what string) bool {
	b.mu.Lock()
	t := b.live[id]
	if t == nil || b.holding != id {
		running := b.running
		b.mu.Unlock()
		return b.waitOutside(cond, running)
	}
	if cond() {
		b.mu.Unlock()
		return true
	}
	if b.aborted {
		b.mu.Unlock()
		return false
	}
	t.cond, t.what = cond, what
	next, ok := b.pickAfter(id)
	if next == t {
		t.cond, t.what = nil, ""
		b.mu.Unlock()
		return ok
	}
	b.give(next, ok)
	b.mu.Unlock()
	return <-t.wake
}

// waitOutside serves a caller that is not the baton holder (the test's
// own goroutine, say). While threads run it polls; when none run nothing
// can change cond, so it answers at once instead of hanging.
func (b *batonRunner) waitOutside(cond func() bool, running bool) bool {
	if !running {
		return cond()
	}
	return poll(cond, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.aborted || !b.running
	})
}

// pickAfter chooses who gets the baton after thread from, and the result
// its wait ends with. When no live thread can run it records the deadlock
// and aborts waiting, which makes every blocked thread runnable again.
// The caller holds mu and has at least one live thread.
func (b *batonRunner) pickAfter(from hsa.ThreadID) (*appThread, bool) {
	first, _ := slices.BinarySearch(b.ids, from+1)
	if t, ok, found := b.scan(first); found {
		return t, ok
	}
	b.all = append(b.all, b.deadlock())
	b.aborted = true
	t, ok, _ := b.scan(first) // aborted: the first thread in order runs
	return t, ok
}

// scan walks the live threads in round-robin order from index first and
// returns the first that can run.
func (b *batonRunner) scan(first int) (t *appThread, ok, found bool) {
	for i := range b.ids {
		t := b.live[b.ids[(first+i)%len(b.ids)]]
		switch {
		case t.cond == nil:
			return t, true, true
		case b.aborted:
			return t, t.cond(), true
		case t.cond():
			return t, true, true
		}
	}
	return nil, false, false
}

func (b *batonRunner) deadlock() error {
	var waits []string
	for _, id := range b.ids {
		waits = append(waits, fmt.Sprintf("thread %d waits for %s", id, b.live[id].what))
	}
	return fmt.Errorf("%w: every live thread is blocked (%s); waits now fail", ErrDeadlock, strings.Join(waits, "; "))
}

// give hands the baton to t. The caller holds mu.
func (b *batonRunner) give(t *appThread, ok bool) {
	t.cond, t.what = nil, ""
	b.setHolder(t.id)
	t.wake <- ok
}

// setHolder records who holds the baton; the caller holds mu.
func (b *batonRunner) setHolder(id hsa.ThreadID) {
	b.holding = id
	b.held.Store(uint64(id))
}

// holder reads who holds the baton without taking mu: it changes only
// under mu, and a reader on the holder's own goroutine sees its own id.
func (b *batonRunner) holder() hsa.ThreadID { return hsa.ThreadID(b.held.Load()) }

func (b *batonRunner) cancel() {
	b.mu.Lock()
	b.aborted = true
	b.mu.Unlock()
}

func (b *batonRunner) isAborted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.aborted
}

func (b *batonRunner) fault(err error) {
	b.mu.Lock()
	b.all = append(b.all, err)
	b.mu.Unlock()
}

func (b *batonRunner) faults() []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]error(nil), b.all...)
}
