package harness

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/replayspec/replayspec/hsa"
)

// Threads runs the application's threads. The simulator schedules them
// deterministically; FreeThreads runs them as plain goroutines.
type Threads interface {
	Go(thread hsa.ThreadID, fn func()) error
	Wait() error
	// WaitUntil blocks thread until cond holds; false when it never can.
	WaitUntil(thread hsa.ThreadID, cond func() bool) bool
}

// Scheduler is implemented by Threads that know which application thread
// runs now (the simulator's deterministic scheduler: only the holder of its
// baton runs). The tool then asks it instead of reading the goroutine's id,
// which costs a traceback on every callback.
type Scheduler interface {
	// Scheduled reports whether one application thread runs at a time.
	Scheduled() bool
	// Running is that thread (0: none; the caller is not on one).
	Running() hsa.ThreadID
}

// Yielder is implemented by Threads whose threads take turns at yield
// points (the simulator's scheduler). The application yields inside each
// launch call, so that another thread's API calls can come between its
// launch and the submission inside it (COR-1: a dispatch's ids are its own
// thread's calls', whatever ran meanwhile). Free threads interleave on
// their own.
type Yielder interface {
	Yield(thread hsa.ThreadID)
}

// FreeThreads runs threads as plain goroutines, for runtimes that do not
// schedule threads themselves (real hardware).
type FreeThreads struct {
	wg      sync.WaitGroup
	Timeout time.Duration // for WaitUntil; default 30 s
}

// Go starts fn on its own goroutine.
func (f *FreeThreads) Go(_ hsa.ThreadID, fn func()) error {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		fn()
	}()
	return nil
}

// Wait waits for every thread.
func (f *FreeThreads) Wait() error {
	f.wg.Wait()
	return nil
}

// WaitUntil polls cond until it holds or the timeout passes.
func (f *FreeThreads) WaitUntil(_ hsa.ThreadID, cond func() bool) bool {
	limit := f.Timeout
	if limit == 0 {
		limit = 30 * time.Second
	}
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Microsecond)
	}
	return true
}

// goroutineID reads the running goroutine's id. Where threads are not
// scheduled (FreeThreads, the simulator's parallel mode) the tool uses it to
// see which application thread a callback really runs on (CB-4) instead of
// trusting what the SDK says. It formats a traceback: several microseconds.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
