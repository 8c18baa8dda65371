package replay

import (
	"sort"
	"sync"

	"github.com/replayspec/replayspec/hsa"
)

// tracker is the replay allocation tracker: which device memory a snapshot
// must save. It is switched on only by configuring the KERNEL_REPLAY
// service (ACT-4), so a run that never does pays nothing per allocation.
type tracker struct {
	mu      sync.Mutex
	on      bool
	regions map[uint64]hsa.Allocation // by handle
}

func (t *tracker) enable(rt hsa.Runtime) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.on {
		return
	}
	t.on = true
	t.regions = map[uint64]hsa.Allocation{}
	rt.OnAllocate(t.observe)
}

// observe follows allocations and frees. MEM-4: only coarse-grained device
// memory is saved; kernel arguments, host and fine-grained memory are not.
// A freed allocation leaves the tracker.
func (t *tracker) observe(a hsa.Allocation, freed bool) {
	if a.Kind != hsa.DeviceCoarse {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if freed {
		delete(t.regions, a.Handle)
		return
	}
	t.regions[a.Handle] = a
}

// regionsOf lists the tracked allocations owned by agent, in handle order.
func (t *tracker) regionsOf(agent hsa.AgentID) []hsa.Allocation {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.listOf(agent)
}

// listOf is regionsOf for a caller holding mu.
func (t *tracker) listOf(agent hsa.AgentID) []hsa.Allocation {
	var out []hsa.Allocation
	for _, a := range t.regions {
		if a.Agent == agent {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

// saving runs save with agent's tracked allocations, holding the tracker:
// a free, which the runtime reports before it lets the block go
// (hsa.Runtime.OnAllocate), waits until the copy is done, so a snapshot is
// never handed memory another thread freed after the list was made (MEM-4).
// save must not allocate or free.
func (t *tracker) saving(agent hsa.AgentID, save func(regions []hsa.Allocation)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	save(t.listOf(agent))
}

// kernelTable gives kernels stable ids in the order they are first seen.
type kernelTable struct {
	mu  sync.Mutex
	ids map[string]uint64
}

func (k *kernelTable) id(name string) uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids == nil {
		k.ids = map[string]uint64{}
	}
	id, ok := k.ids[name]
	if !ok {
		id = uint64(len(k.ids)) + 1
		k.ids[name] = id
	}
	return id
}

// agentLocks holds one reader/writer lock per agent (MEM-6): a replay loop
// takes the writer side, every ordinary dispatch the reader side.
type agentLocks struct {
	mu      sync.Mutex
	newLock func() hsa.Locker
	locks   map[hsa.AgentID]hsa.Locker
}

func (l *agentLocks) init(newLock func() hsa.Locker) {
	l.newLock = newLock
	l.locks = map[hsa.AgentID]hsa.Locker{}
}

// lockMaker makes rt's own locks, or plain ones for a runtime that
// schedules no threads itself.
func lockMaker(rt hsa.Runtime) func() hsa.Locker {
	if p, ok := rt.(hsa.LockProvider); ok {
		return p.NewLock
	}
	return func() hsa.Locker { return &plainLock{} }
}

func (l *agentLocks) of(agent hsa.AgentID) hsa.Locker {
	l.mu.Lock()
	defer l.mu.Unlock()
	lk, ok := l.locks[agent]
	if !ok {
		lk = l.newLock()
		l.locks[agent] = lk
	}
	return lk
}

// plainLock is the Locker of runtimes that schedule no threads themselves.
type plainLock struct{ mu sync.RWMutex }

func (p *plainLock) Lock(hsa.ThreadID)    { p.mu.Lock() }
func (p *plainLock) Unlock(hsa.ThreadID)  { p.mu.Unlock() }
func (p *plainLock) RLock(hsa.ThreadID)   { p.mu.RLock() }
func (p *plainLock) RUnlock(hsa.ThreadID) { p.mu.RUnlock() }
