package sim

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// bootTime is the virtual clock at start, so that no event has time 0
// (which the trace would leave out).
const bootTime = 1_000_000

// Runtime is the simulated HSA runtime.
type Runtime struct {
	cfg     Config
	agents  []*agentState
	mem     *memory
	threads threadRunner
	clock   atomic.Uint64 // virtual ns
	rec     atomic.Pointer[trace.Recorder]

	hookMu    sync.Mutex
	allocHook func(a hsa.Allocation, freed bool)

	restores int // Restore calls so far, guarded by mem.mu (Config.FailRestoreAt)
	// deadlockAt is 1 + the events recorded when every thread blocked
	// (0: no deadlock): what a hung process's trace would hold.
	deadlockAt atomic.Int64
	nextQueue  atomic.Uint64
	nextSignal atomic.Uint64
}

var (
	_ hsa.Runtime      = (*Runtime)(nil)
	_ hsa.Mapper       = (*Runtime)(nil)
	_ hsa.LockProvider = (*Runtime)(nil)
)

// New builds the machine that cfg describes. Attach a recorder with
// SetRecorder (see the package doc).
func New(cfg Config) (*Runtime, error) {
	agents, err := buildAgents(cfg.Agents)
	if err != nil {
		return nil, err
	}
	limit := cfg.MemoryPerAgent
	if limit == 0 {
		limit = defaultMemoryPerAgent
	}
	r := &Runtime{cfg: cfg, agents: agents, mem: newMemory(limit)}
	if cfg.Scheduled {
		b := newBatonRunner()
		b.onDeadlock = func() {
			if rec := r.rec.Load(); rec != nil {
				r.deadlockAt.Store(int64(rec.Cut()) + 1) // nothing more reaches its sink
			}
		}
		r.threads = b
	} else {
		r.threads = newFreeRunner()
	}
	r.clock.Store(bootTime)
	return r, nil
}

// SetRecorder makes the runtime emit its kernel and signal events to rec
// (nil: emit nothing, compute no digests).
func (r *Runtime) SetRecorder(rec *trace.Recorder) { r.rec.Store(rec) }

// Clock is the virtual time in ns. It only moves when the hardware runs a
// packet, so it is the same at the same point of every run.
func (r *Runtime) Clock() uint64 { return r.clock.Load() }

// Agents implements hsa.Runtime; the result is a copy.
func (r *Runtime) Agents() []hsa.Agent {
	out := make([]hsa.Agent, len(r.agents))
	for i, a := range r.agents {
		out[i] = copyAgent(a.info)
	}
	return out
}

func (r *Runtime) agent(id hsa.AgentID) (*agentState, bool) {
	if id == 0 || uint64(id) > uint64(len(r.agents)) {
		return nil, false
	}
	return r.agents[id-1], true
}

// DrainAgent implements hsa.Runtime. The hardware runs every packet inside
// Submit, so an agent is idle whenever no Submit is running on it.
func (r *Runtime) DrainAgent(agent hsa.AgentID) error {
	if _, ok := r.agent(agent); !ok {
		return fmt.Errorf("%w: %d", hsa.ErrUnknownAgent, agent)
	}
	return nil
}

// CreateQueue implements hsa.Runtime.
func (r *Runtime) CreateQueue(agent hsa.AgentID) (hsa.Queue, error) {
	a, ok := r.agent(agent)
	if !ok {
		return nil, fmt.Errorf("%w: %d", hsa.ErrUnknownAgent, agent)
	}
	q := &queue{rt: r, id: hsa.QueueID(r.nextQueue.Add(1)), agent: a}
	q.write = func(thread hsa.ThreadID, packets []hsa.Packet) error { return r.execute(q, thread, packets) }
	return q, nil
}

// CreateSignal implements hsa.Runtime.
func (r *Runtime) CreateSignal(initial int64) hsa.Signal {
	s := &signal{rt: r, id: hsa.SignalID(r.nextSignal.Add(1))}
	s.value.Store(initial)
	return s
}
