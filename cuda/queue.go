package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/replayspec/replayspec/hsa"
)

// queue is an hsa.Queue on a CUDA stream of its own, with a pair of events
// that time each dispatch.
type queue struct {
	rt         *Runtime
	id         hsa.QueueID
	stream     uintptr
	start, end uintptr // driver thread only

	writeFn hsa.WriteFunc // q.write, made once

	mu   sync.Mutex
	icpt hsa.WriteInterceptor
}

// CreateQueue creates a blocking stream: it orders itself against the legacy
// default stream, on which snapshots and restores run.
func (r *Runtime) CreateQueue(agent hsa.AgentID) (hsa.Queue, error) {
	if err := r.checkAgent(agent); err != nil {
		return nil, err
	}
	q := &queue{rt: r}
	q.writeFn = q.write
	err := r.w.do(func() error {
		d := r.drv
		if err := call("cuStreamCreate", d.streamCreate, uintptr(unsafe.Pointer(&q.stream)), 0); err != nil {
			return err
		}
		var err error
		if q.start, err = d.newEvent(); err != nil {
			return err
		}
		q.end, err = d.newEvent()
		return err
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.nextQueue++
	q.id = r.nextQueue
	r.queues = append(r.queues, q)
	r.mu.Unlock()
	return q, nil
}

func (q *queue) ID() hsa.QueueID    { return q.id }
func (q *queue) Agent() hsa.AgentID { return agentID }
func (q *queue) SetWriteInterceptor(i hsa.WriteInterceptor) {
	q.mu.Lock()
	q.icpt = i
	q.mu.Unlock()
}

// Submit passes packets through the interceptor when one is installed.
func (q *queue) Submit(thread hsa.ThreadID, packets ...hsa.Packet) error {
	q.mu.Lock()
	icpt := q.icpt
	q.mu.Unlock()
	if icpt != nil {
		return icpt(q, thread, packets, q.writeFn)
	}
	return q.write(thread, packets)
}

// write runs packets on the hardware in order. Each dispatch completes
// before write returns (the stream is synchronized), so a packet's
// completion signal is decremented on the submitting goroutine.
func (q *queue) write(thread hsa.ThreadID, packets []hsa.Packet) error {
	for i := range packets {
		p := &packets[i]
		var err error
		switch p.Type {
		case hsa.KernelDispatchPacket:
			err = q.rt.dispatch(q, thread, p)
		case hsa.BarrierPacket:
			if p.Completion != nil {
				// A barrier that completes a signal (the replay engine's one
				// completion after its loop) is a host callback behind
				// everything on the stream: cuLaunchHostFunc. Submit then
				// waits for it, as for a dispatch: the decrement comes
				// before Submit returns, so the application's API call
				// ends after it, as on the simulator (TestCUDALibrary
				// compares the order since the api_call events).
				if err := q.completeOnHost(thread, p.Completion); err != nil {
					return err
				}
				if err := q.Drain(); err != nil {
					return err
				}
				continue
			}
			err = q.Drain()
		default:
			err = fmt.Errorf("cuda: unknown packet type %d", p.Type)
		}
		if err != nil {
			return err
		}
		if s, ok := p.Completion.(*signal); ok && s != nil {
			s.decrementBy(thread)
		} else if p.Completion != nil {
			p.Completion.Decrement()
		}
	}
	return nil
}

// Drain waits for the stream.
func (q *queue) Drain() error {
	return q.rt.w.do(func() error { return q.rt.drv.syncStream(q.stream) })
}

// destroy runs on the driver thread at Close.
func (q *queue) destroy() {
	d := q.rt.drv
	d.destroyEvent(q.start)
	d.destroyEvent(q.end)
	if d.streamDestroy != 0 {
		_ = call("cuStreamDestroy", d.streamDestroy, q.stream)
	}
}

// DrainAgent waits for every queue (and the default stream).
func (r *Runtime) DrainAgent(agent hsa.AgentID) error {
	if err := r.checkAgent(agent); err != nil {
		return err
	}
	return r.w.do(func() error { return call("cuCtxSynchronize", r.drv.ctxSynchronize) })
}
