package cuda

import (
	"runtime"
	"time"
)

// worker runs closures on one goroutine locked to one OS thread. CUDA binds
// the current context to the calling OS thread, and Go moves goroutines
// between threads: running every driver call here keeps the context current
// without each caller locking its own thread.
type worker struct {
	calls chan func()
	done  chan struct{}
}

// spinFor is how long each side of a hand-off polls before it sleeps.
// Waking a parked OS thread costs tens of microseconds in a VM, as much
// as a whole tiny kernel; a replay loop hands off every few microseconds,
// so a short spin keeps both threads awake through a burst of calls.
const spinFor = 50 * time.Microsecond

func newWorker() *worker {
	w := &worker{calls: make(chan func(), 64), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *worker) loop() {
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

// do runs f on the driver thread and returns its error. Calls from several
// goroutines are serialized in arrival order.
func (w *worker) do(f func() error) error {
	errc := make(chan error, 1)
	w.calls <- func() { errc <- f() }
	err, _ := receive(errc)
	return err
}

// stop ends the thread after the calls already queued.
func (w *worker) stop() {
	close(w.calls)
	<-w.done
}
