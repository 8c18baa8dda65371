package sim

import (
	"fmt"
	"sync"

	"github.com/replayspec/replayspec/hsa"
)

// threadLock is a reader/writer lock held by threads (MEM-6). A thread
// that cannot take it waits through the runner: under the scheduler it is
// not runnable and the baton moves on; otherwise it polls. A waiting
// writer keeps new readers out, so a replay is not starved by a stream of
// ordinary dispatches. Unlocking a lock one does not hold is recorded as a
// fault, never a crash.
type threadLock struct {
	threads        threadRunner
	mu             sync.Mutex
	writer         hsa.ThreadID
	readers        map[hsa.ThreadID]int
	waitingWriters int
}

func newThreadLock(threads threadRunner) *threadLock {
	return &threadLock{threads: threads, readers: map[hsa.ThreadID]int{}}
}

func (l *threadLock) Lock(t hsa.ThreadID)  { l.acquire(t, true) }
func (l *threadLock) RLock(t hsa.ThreadID) { l.acquire(t, false) }

// acquire waits with a condition that takes the lock when it can, so the
// check and the taking are one step even when threads run in parallel.
// When waiting is aborted (Cancel, deadlock) it returns without the lock.
func (l *threadLock) acquire(t hsa.ThreadID, write bool) {
	take := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.writer != 0 || (write && len(l.readers) > 0) || (!write && l.waitingWriters > 0) {
			return false
		}
		if write {
			l.writer = t
		} else {
			l.readers[t]++
		}
		return true
	}
	if take() {
		return
	}
	what := "a read lock"
	if write {
		what = "a write lock"
		l.mu.Lock()
		l.waitingWriters++
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			l.waitingWriters--
			l.mu.Unlock()
		}()
	}
	l.threads.waitLock(t, l, write, take, what)
}

// takeable reports whether a thread of kind write could take the lock now:
// exactly when take (in acquire) would.
func (l *threadLock) takeable(write bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writer == 0 && !(write && len(l.readers) > 0) && !(!write && l.waitingWriters > 0)
}

func (l *threadLock) Unlock(t hsa.ThreadID) {
	l.mu.Lock()
	holder := l.writer
	if holder == t {
		l.writer = 0
	}
	l.mu.Unlock()
	if holder != t {
		l.misuse(fmt.Errorf("sim: lock misuse: thread %d unlocks a write lock held by thread %d", t, holder))
	}
}

func (l *threadLock) RUnlock(t hsa.ThreadID) {
	l.mu.Lock()
	held := l.readers[t] > 0
	if held {
		if l.readers[t]--; l.readers[t] == 0 {
			delete(l.readers, t)
		}
	}
	l.mu.Unlock()
	if !held {
		l.misuse(fmt.Errorf("sim: lock misuse: thread %d read-unlocks a lock it does not read-hold", t))
	}
}

// misuse records a fault, unless waiting was aborted: then a Lock may
// have returned without the lock and its Unlock is expected. It runs
// without l.mu, since the scheduler takes l.mu under its own lock.
func (l *threadLock) misuse(err error) {
	if !l.threads.isAborted() {
		l.threads.fault(err)
	}
}
