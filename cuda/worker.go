package cuda

import (
	"runtime"
	"sync"
	"time"
)

// executor runs driver calls with the runtime's context current on the
// calling OS thread, one call at a time.
type executor interface {
	// do runs f and returns its error. Calls from several goroutines are
	// serialized.
	do(f func() error) error
	// bind makes every later call set ctx current first (0: none yet).
	bind(d *driver, ctx uintptr)
	stop()
}

// lockedCaller runs f on the caller's own goroutine, locked to its OS
// thread for the call, after making the context current there: no
// hand-off between threads, so no wake-up of a parked thread on the hot
// path (which cost 110-130 µs at times on the H200 machine). A mutex
// serializes callers; cuCtxSetCurrent is a thread-local store in the
// driver, cheaper than any hand-off.
type lockedCaller struct {
	mu  sync.Mutex
	d   *driver
	ctx uintptr
}

func (w *lockedCaller) do(f func() error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if w.ctx != 0 {
		if err := call("cuCtxSetCurrent", w.d.ctxSetCurrent, w.ctx); err != nil {
			return err
		}
	}
	return f()
}

func (w *lockedCaller) bind(d *driver, ctx uintptr) {
	w.mu.Lock()
	w.d, w.ctx = d, ctx
	w.mu.Unlock()
}

func (w *lockedCaller) stop() {}

// handOff runs closures on one goroutine locked to one OS thread, fed by a
// channel: the design before lockedCaller, kept so that the benchmark can
// measure both in one run (Options.HandOff).
type handOff struct {
	calls chan func()
	done  chan struct{}
}

// spinFor is how long each side of a hand-off polls before it sleeps.
const spinFor = 50 * time.Microsecond

func newHandOff() *handOff {
	w := &handOff{calls: make(chan func(), 64), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *handOff) loop() {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	defer close(w.done)
	for {
		f, ok := receive(w.calls)
		if !ok {
			return
		}
		f()
	}
}

// receive polls c for spinFor, then blocks.
func receive[T any](c chan T) (T, bool) {
	deadline := time.Now().Add(spinFor)
	for i := 0; ; i++ {
		select {
		case v, ok := <-c:
			return v, ok
		default:
		}
		if i%64 == 63 && time.Now().After(deadline) {
			break
		}
	}
	v, ok := <-c
	return v, ok
}

func (w *handOff) do(f func() error) error {
	errc := make(chan error, 1)
	w.calls <- func() { errc <- f() }
	err, _ := receive(errc)
	return err
}

// bind: the one thread made the context current in start and keeps it.
func (w *handOff) bind(*driver, uintptr) {}

func (w *handOff) stop() {
	close(w.calls)
	<-w.done
}
