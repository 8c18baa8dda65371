package sim

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/replayspec/replayspec/hsa"
)

// ErrDeadlock is wrapped by the fault recorded when every live application
// thread is blocked.
var ErrDeadlock = errors.New("sim: deadlock")

// threadRunner runs application threads: the deterministic baton scheduler
// (Config.Scheduled) or plain goroutines.
type threadRunner interface {
	start(id hsa.ThreadID, fn func()) error
	wait() error
	// yield lets other threads run; a no-op unless id holds the baton.
	yield(id hsa.ThreadID)
	// waitUntil blocks id until cond holds (true) or waiting is aborted
	// (false). cond must not call back into the thread functions.
	waitUntil(id hsa.ThreadID, cond func() bool, what string) bool
	// waitLock is waitUntil for a condition that takes lock l, which
	// can hold only while l.takeable(write).
	waitLock(id hsa.ThreadID, l *threadLock, write bool, take func() bool, what string) bool
	// holder is the thread that holds the baton (0: none, or unscheduled).
	holder() hsa.ThreadID
	cancel()
	isAborted() bool
	fault(err error)
	faults() []error
}

// Go registers an application thread. Under the scheduler it runs once
// Wait is called (or at once when an application thread calls Go), so the
// set of threads, not goroutine start-up, decides the order.
func (r *Runtime) Go(thread hsa.ThreadID, fn func()) error { return r.threads.start(thread, fn) }

// Wait runs the registered threads to the end and returns the faults of
// this run: deadlocks (ErrDeadlock), panics, lock misuse.
func (r *Runtime) Wait() error { return r.threads.wait() }

// Yield is a yield point: the baton passes to the next runnable thread.
func (r *Runtime) Yield(thread hsa.ThreadID) { r.threads.yield(thread) }

// WaitUntil blocks thread until cond holds and reports true, or reports
// false when waiting was aborted (Cancel, or a deadlock). cond runs on
// whichever goroutine passes the baton; it must not call Go, Yield,
// WaitUntil, WaitBelow or a lock.
func (r *Runtime) WaitUntil(thread hsa.ThreadID, cond func() bool) bool {
	return r.threads.waitUntil(thread, cond, "a condition")
}

// Scheduled reports whether the deterministic scheduler runs the threads
// (Config.Scheduled): then exactly one application thread runs at a time.
func (r *Runtime) Scheduled() bool { return r.cfg.Scheduled }

// Running is the application thread that runs now under the scheduler, the
// baton's holder (0: none, or the threads run unscheduled).
func (r *Runtime) Running() hsa.ThreadID { return r.threads.holder() }

// Cancel aborts waiting for good: every pending and later wait returns
// false, and a Lock that cannot be taken returns without the lock.
func (r *Runtime) Cancel() { r.threads.cancel() }

// Faults lists every fault recorded so far.
func (r *Runtime) Faults() []error { return r.threads.faults() }

// DeadlockedAt reports how many events the recorder held when the
// scheduler found every live thread blocked. A process in that state
// hangs and records nothing more; the simulator lets waits fail instead,
// so that the run ends, and what is recorded after that point never
// happened in the process it models.
func (r *Runtime) DeadlockedAt() (events int, ok bool) {
	n := r.deadlockAt.Load()
	return int(n - 1), n > 0
}

// NewLock implements hsa.LockProvider.
func (r *Runtime) NewLock() hsa.Locker { return newThreadLock(r.threads) }

// runApp runs fn and turns a panic into an error, so that one broken
// application thread is reported rather than crashing the run.
func runApp(id hsa.ThreadID, fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sim: thread %d panicked: %v\n%s", id, p, debug.Stack())
		}
	}()
	fn()
	return nil
}

func checkThreadID(id hsa.ThreadID, live bool) error {
	if id == 0 {
		return fmt.Errorf("sim: thread id 0 is not valid")
	}
	if live {
		return fmt.Errorf("sim: thread %d is already running", id)
	}
	return nil
}
