package cuda

import (
	"errors"
	"sync"

	"github.com/ebitengine/purego"
	"github.com/replayspec/replayspec/hsa"
)

// hostFuncs is the one purego callback the process registers for
// cuLaunchHostFunc. purego allows about 2000 callbacks per process and never
// frees one, so a callback per completion would run out; instead the
// callback's user data is a key into pending.
var hostFuncs struct {
	once    sync.Once
	fn      uintptr
	mu      sync.Mutex
	next    uintptr
	pending map[uintptr]func()
}

// hostFuncTrampoline returns the callback's C address, registering it once.
func hostFuncTrampoline() uintptr {
	hostFuncs.once.Do(func() {
		hostFuncs.pending = map[uintptr]func(){}
		hostFuncs.fn = purego.NewCallback(runHostFunc)
	})
	return hostFuncs.fn
}

// runHostFunc runs on a driver thread once the stream reaches it. It must
// not call CUDA (the driver forbids it there); it only runs Go code.
func runHostFunc(key uintptr) {
	hostFuncs.mu.Lock()
	f := hostFuncs.pending[key]
	delete(hostFuncs.pending, key)
	hostFuncs.mu.Unlock()
	if f != nil {
		f()
	}
}

func addHostFunc(f func()) uintptr {
	hostFuncs.mu.Lock()
	defer hostFuncs.mu.Unlock()
	hostFuncs.next++
	hostFuncs.pending[hostFuncs.next] = f
	return hostFuncs.next
}

// completeOnHost enqueues, behind everything already on q's stream, a host
// function that decrements sig for thread. It returns at once; the
// decrement happens when the device reaches that point. A barrier packet
// that carries a completion signal takes this path: that is how the replay
// engine fires the application's single completion after its pass loop.
func (q *queue) completeOnHost(thread hsa.ThreadID, sig hsa.Signal) error {
	d := q.rt.drv
	if d.launchHostFunc == 0 {
		return errors.New("cuda: the driver has no cuLaunchHostFunc")
	}
	tramp := hostFuncTrampoline()
	key := addHostFunc(func() {
		if s, ok := sig.(*signal); ok {
			s.decrementBy(thread)
		} else {
			sig.Decrement()
		}
	})
	err := q.rt.w.do(func() error {
		return call("cuLaunchHostFunc", d.launchHostFunc, q.stream, tramp, key)
	})
	if err != nil {
		hostFuncs.mu.Lock()
		delete(hostFuncs.pending, key)
		hostFuncs.mu.Unlock()
	}
	return err
}
