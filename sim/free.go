package sim

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/replayspec/replayspec/hsa"
)

// freeRunner runs application threads as plain goroutines, truly in
// parallel (Config.Scheduled off).
type freeRunner struct {
	mu        sync.Mutex
	live      map[hsa.ThreadID]bool
	wg        sync.WaitGroup
	cancelled atomic.Bool
	all       []error
	reported  int
}

func newFreeRunner() *freeRunner { return &freeRunner{live: map[hsa.ThreadID]bool{}} }

func (f *freeRunner) start(id hsa.ThreadID, fn func()) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := checkThreadID(id, f.live[id]); err != nil {
		return err
	}
	f.live[id] = true
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer func() {
			f.mu.Lock()
			delete(f.live, id)
			f.mu.Unlock()
		}()
		if err := runApp(id, fn); err != nil {
			f.fault(err)
		}
	}()
	return nil
}

func (f *freeRunner) wait() error {
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := f.all[f.reported:]
	f.reported = len(f.all)
	return errors.Join(errs...)
}

func (f *freeRunner) yield(hsa.ThreadID) { runtime.Gosched() }

// waitUntil polls: spin politely first, then sleep a little, so that a
// long wait does not burn a core.
func (f *freeRunner) waitUntil(_ hsa.ThreadID, cond func() bool, _ string) bool {
	return poll(cond, f.cancelled.Load)
}

func (f *freeRunner) waitLock(id hsa.ThreadID, _ *threadLock, _ bool, take func() bool, what string) bool {
	return f.waitUntil(id, take, what)
}

func poll(cond func() bool, aborted func() bool) bool {
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		if aborted() {
			return false
		}
		if i < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

func (f *freeRunner) holder() hsa.ThreadID { return 0 }

func (f *freeRunner) cancel()         { f.cancelled.Store(true) }
func (f *freeRunner) isAborted() bool { return f.cancelled.Load() }

func (f *freeRunner) fault(err error) {
	f.mu.Lock()
	f.all = append(f.all, err)
	f.mu.Unlock()
}

func (f *freeRunner) faults() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]error(nil), f.all...)
}
