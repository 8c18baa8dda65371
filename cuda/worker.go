package cuda

import "runtime"

// worker runs closures on one goroutine locked to one OS thread. CUDA binds
// the current context to the calling OS thread, and Go moves goroutines
// between threads: running every driver call here keeps the context current
// without each caller locking its own thread.
type worker struct {
	calls chan func()
	done  chan struct{}
}

func newWorker() *worker {
	w := &worker{calls: make(chan func()), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *worker) loop() {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	defer close(w.done)
	for f := range w.calls {
		f()
	}
}

// do runs f on the driver thread and returns its error. Calls from several
// goroutines are serialized in arrival order.
func (w *worker) do(f func() error) error {
	errc := make(chan error, 1)
	w.calls <- func() { errc <- f() }
	return <-errc
}

// stop ends the thread after the calls already queued.
func (w *worker) stop() {
	close(w.calls)
	<-w.done
}
