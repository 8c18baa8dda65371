package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
)

// batonRunner is the deterministic scheduler: exactly one application
// thread runs at a time, the one holding the baton. At a yield point the
// baton goes to the next runnable thread id after the holder, wrapping to
// the lowest (the holder itself comes last). A blocked thread is runnable
// once its condition holds; conditions are re-checked each time the baton
// moves. Nothing depends on goroutine timing, so runs repeat exactly.
type batonRunner struct {
	mu   sync.Mutex
	live map[hsa.ThreadID]*appThread
	ids  []hsa.ThreadID // live ids, ascending
	// ready are the live ids not waiting for a lock, ascending; the ones
	// waiting for a lock are in waiters, by lock and kind. A waiter is
	// runnable only when its lock could be taken, so the pick skips a
	// whole queue at once instead of asking each of its threads (with
	// thousands of threads queued on one agent's lock, asking each at
	// every yield made a run quadratic in threads).
	ready   []hsa.ThreadID
	waiters map[*threadLock]*lockQueue
	holding hsa.ThreadID
	// held mirrors holding for readers without mu: the harness asks who
	// runs on every callback (Runtime.Running).
	held    atomic.Uint64
	running bool // between Wait's start and its end
	aborted bool // Cancel or a deadlock: waits fail from now on
	wg      sync.WaitGroup

	all      []error
	reported int
	// onDeadlock runs, under mu, when the deadlock is found, before any
	// wait fails: the runtime notes how much of the trace a hung process
	// would have left (Runtime.DeadlockedAt).
	onDeadlock func()
}

type appThread struct {
	id   hsa.ThreadID
	wake chan bool   // the baton, with the result of the wait it ends
	cond func() bool // non-nil while blocked
	what string      // what it waits for, for the deadlock report
	// lock is the lock it waits for (cond takes it), write the kind.
	lock  *threadLock
	write bool
}

// lockQueue holds the threads waiting for one lock, ascending, by kind.
type lockQueue struct {
	writers, readers []hsa.ThreadID
}

func (q *lockQueue) of(write bool) *[]hsa.ThreadID {
	if write {
		return &q.writers
	}
	return &q.readers
}

func newBatonRunner() *batonRunner {
	return &batonRunner{live: map[hsa.ThreadID]*appThread{}, waiters: map[*threadLock]*lockQueue{}}
}

// insertID and deleteID keep an ascending list of ids.
func insertID(ids *[]hsa.ThreadID, id hsa.ThreadID) {
	i, _ := slices.BinarySearch(*ids, id)
	*ids = slices.Insert(*ids, i, id)
}

func deleteID(ids *[]hsa.ThreadID, id hsa.ThreadID) {
	if i, ok := slices.BinarySearch(*ids, id); ok {
		*ids = slices.Delete(*ids, i, i+1)
	}
}

func (b *batonRunner) start(id hsa.ThreadID, fn func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := checkThreadID(id, b.live[id] != nil); err != nil {
		return err
	}
	t := &appThread{id: id, wake: make(chan bool, 1)}
	b.live[id] = t
	insertID(&b.ids, id)
	insertID(&b.ready, id)
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
	deleteID(&b.ids, t.id)
	deleteID(&b.ready, t.id)
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
	if len(b.ready) == 1 && len(b.waiters) == 0 {
		// The holder is the one live thread not waiting for a lock, and
		// none waits for one: the pick would find it (it runs, so it has
		// no condition) after walking them all.
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

// waitLock blocks id until take takes lock l (of kind write) and reports
// true, or reports false when waiting was aborted. While it waits, the
// thread sits in l's queue: the pick asks it only when l could be taken.
func (b *batonRunner) waitLock(id hsa.ThreadID, l *threadLock, write bool, take func() bool, what string) bool {
	b.mu.Lock()
	t := b.live[id]
	if t == nil || b.holding != id {
		running := b.running
		b.mu.Unlock()
		return b.waitOutside(take, running)
	}
	if take() {
		b.mu.Unlock()
		return true
	}
	if b.aborted {
		b.mu.Unlock()
		return false
	}
	t.cond, t.what, t.lock, t.write = take, what, l, write
	deleteID(&b.ready, id)
	q := b.waiters[l]
	if q == nil {
		q = &lockQueue{}
		b.waiters[l] = q
	}
	insertID(q.of(write), id)
	next, ok := b.pickAfter(id)
	if next == t {
		b.give(t, ok) // its own lock came free in the meantime, or the wait was aborted
		b.mu.Unlock()
		<-t.wake
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
	if !b.aborted {
		if t, found := b.pick(from); found {
			return t, true
		}
		b.all = append(b.all, b.deadlock())
		b.aborted = true
		if b.onDeadlock != nil {
			b.onDeadlock()
		}
	}
	first, _ := slices.BinarySearch(b.ids, from+1)
	t, ok, _ := b.scan(first) // aborted: the first thread in order runs
	return t, ok
}

// after is how far id comes after from in the round-robin order (from+1
// first, wrapping to the lowest, from itself last).
func after(from, id hsa.ThreadID) uint64 { return uint64(id) - uint64(from) - 1 }

// pick finds the first thread after from, in round-robin order, that can
// run: one not blocked, one whose condition holds, or one waiting for a
// lock that its condition then takes. It asks the same conditions in the
// same order as asking every thread would, less those that cannot hold:
// the waiters for a lock that cannot be taken now (a condition that does
// not hold changes nothing, so the locks stay as they are while it looks).
func (b *batonRunner) pick(from hsa.ThreadID) (*appThread, bool) {
	// The first waiter, in order, of a lock that could be taken.
	var queued *appThread
	for l, q := range b.waiters {
		for _, write := range []bool{true, false} {
			ids := *q.of(write)
			if len(ids) == 0 || !l.takeable(write) {
				continue
			}
			i, _ := slices.BinarySearch(ids, from+1)
			id := ids[i%len(ids)]
			if queued == nil || after(from, id) < after(from, queued.id) {
				queued = b.live[id]
			}
		}
	}
	first, _ := slices.BinarySearch(b.ready, from+1)
	for k := range b.ready {
		id := b.ready[(first+k)%len(b.ready)]
		if queued != nil && after(from, queued.id) < after(from, id) {
			break
		}
		t := b.live[id]
		if t.cond == nil || t.cond() {
			return t, true
		}
	}
	if queued != nil && queued.cond() {
		return queued, true
	}
	if queued != nil {
		// Its lock looked free and was not: ask everyone, as the scan does.
		first, _ := slices.BinarySearch(b.ids, from+1)
		t, _, found := b.scan(first)
		return t, found
	}
	return nil, false
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
	if t.lock != nil { // out of the lock's queue, whether it took it or waiting was aborted
		q := b.waiters[t.lock]
		deleteID(q.of(t.write), t.id)
		if len(q.writers) == 0 && len(q.readers) == 0 {
			delete(b.waiters, t.lock)
		}
		insertID(&b.ready, t.id)
		t.lock = nil
	}
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
