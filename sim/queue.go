package sim

import (
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
)

// queue is a user-mode queue; the hardware behind it runs every packet
// synchronously inside Submit.
type queue struct {
	rt    *Runtime
	id    hsa.QueueID
	agent *agentState

	mu        sync.Mutex
	intercept hsa.WriteInterceptor
	idle      *atomic.Bool  // while true the interceptor is skipped (hsa.IdleBypass)
	write     hsa.WriteFunc // the hardware, made once so a submit allocates nothing
}

func (q *queue) ID() hsa.QueueID    { return q.id }
func (q *queue) Agent() hsa.AgentID { return q.agent.info.ID }

// Submit passes packets through the interceptor, on the submitting
// goroutine, when one is installed; otherwise straight to the hardware.
func (q *queue) Submit(thread hsa.ThreadID, packets ...hsa.Packet) error {
	q.mu.Lock()
	intercept, idle := q.intercept, q.idle
	q.mu.Unlock()
	if intercept == nil || idle != nil && idle.Load() {
		return q.rt.execute(q, thread, packets)
	}
	return intercept(q, thread, packets, q.write)
}

// SetInterceptorIdle implements hsa.IdleBypass.
func (q *queue) SetInterceptorIdle(idle *atomic.Bool) {
	q.mu.Lock()
	q.idle = idle
	q.mu.Unlock()
}

func (q *queue) SetWriteInterceptor(w hsa.WriteInterceptor) {
	q.mu.Lock()
	q.intercept = w
	q.mu.Unlock()
}

// Drain returns at once: every packet written has already completed.
func (q *queue) Drain() error { return nil }
