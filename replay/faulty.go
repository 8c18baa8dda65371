package replay

import (
	"errors"
	"sort"
	"sync"

	"github.com/replayspec/replayspec/hsa"
)

// Planted faults that are a collaborator gone wrong rather than a step of
// the loop: the runtime the SDK saves memory with, the agent locks the loop
// takes, and the queue writes whose timestamps it reads (the tool's side is
// faulty_tool.go; the loop's own decisions, faulty_policy.go). Each wrapper
// is installed only when its fault is planted, so that the replay loop
// reads like the spec and an SDK with no fault planted pays nothing.

// faultyRuntime is the runtime as a buggy SDK would drive it.
type faultyRuntime struct {
	hsa.Runtime
	faults Faults

	mu     sync.Mutex
	allocs map[uint64]hsa.Allocation // every live allocation, any kind
}

// withFaults wraps rt when a runtime-side fault is planted.
func withFaults(rt hsa.Runtime, fs Faults) hsa.Runtime {
	if !fs.Has(FaultSnapshotUnsavedKinds) && !fs.Has(FaultSnapshotSkipsBuffer) && !fs.Has(FaultRestoreMisreported) &&
		!fs.Has(FaultSnapshotSavesKernArg) && !fs.Has(FaultRestoreIntoFreed) {
		return rt
	}
	return &faultyRuntime{Runtime: rt, faults: fs, allocs: map[uint64]hsa.Allocation{}}
}

// OnAllocate sees every allocation too, so that a snapshot can take what
// the tracker rightly leaves out.
func (f *faultyRuntime) OnAllocate(hook func(a hsa.Allocation, freed bool)) {
	if hook == nil {
		f.Runtime.OnAllocate(nil)
		return
	}
	f.Runtime.OnAllocate(func(a hsa.Allocation, freed bool) {
		f.mu.Lock()
		if freed {
			delete(f.allocs, a.Handle)
		} else {
			f.allocs[a.Handle] = a
		}
		f.mu.Unlock()
		hook(a, freed)
	})
}

func (f *faultyRuntime) Snapshot(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation) (hsa.Snapshot, error) {
	return f.SnapshotWithHook(thread, agent, regions, nil)
}

// SnapshotWithHook keeps the runtime's hook (decision 18.8) under the
// faults: they change what is saved and claimed, not when it is recorded.
func (f *faultyRuntime) SnapshotWithHook(thread hsa.ThreadID, agent hsa.AgentID, regions []hsa.Allocation, saved func(bytes uint64)) (hsa.Snapshot, error) {
	regions = f.planted(agent, regions)
	if f.faults.Has(FaultRestoreIntoFreed) {
		snap, err := f.copySnapshot(regions)
		if err == nil && saved != nil {
			saved(snap.Bytes())
		}
		return snap, err
	}
	var snap hsa.Snapshot
	var err error
	if h, ok := f.Runtime.(hsa.SnapshotHook); ok {
		snap, err = h.SnapshotWithHook(thread, agent, regions, saved)
	} else if snap, err = f.Runtime.Snapshot(thread, agent, regions); err == nil && saved != nil {
		saved(snap.Bytes())
	}
	return f.claimed(snap, err)
}

// SnapshotListed keeps the runtime's listing under its memory lock
// (decision 18.9) under the faults, as SnapshotWithHook keeps its hook. A
// runtime that lists no other way, or the copy restore_into_freed makes
// itself, is handed the list made first.
func (f *faultyRuntime) SnapshotListed(thread hsa.ThreadID, agent hsa.AgentID, list func() []hsa.Allocation, saved func(bytes uint64)) (hsa.Snapshot, error) {
	l, ok := f.Runtime.(hsa.SnapshotLister)
	if !ok || f.faults.Has(FaultRestoreIntoFreed) {
		return f.SnapshotWithHook(thread, agent, list(), saved)
	}
	return f.claimed(l.SnapshotListed(thread, agent, func() []hsa.Allocation { return f.planted(agent, list()) }, saved))
}

// planted is what the snapshot faults make of the tracked regions.
func (f *faultyRuntime) planted(agent hsa.AgentID, regions []hsa.Allocation) []hsa.Allocation {
	if f.faults.Has(FaultSnapshotUnsavedKinds) {
		// MEM-4 broken: fine-grained, host and kernel-argument memory saved too.
		f.mu.Lock()
		for _, a := range f.allocs {
			if a.Agent == agent && a.Kind != hsa.DeviceCoarse {
				regions = append(regions, a)
			}
		}
		f.mu.Unlock()
	}
	if f.faults.Has(FaultSnapshotSavesKernArg) {
		// MEM-4 broken: kernel-argument memory taken for device memory.
		f.mu.Lock()
		for _, a := range f.allocs {
			if a.Agent == agent && a.Kind == hsa.KernArg {
				regions = append(regions, a)
			}
		}
		f.mu.Unlock()
		sort.Slice(regions, func(i, j int) bool { return regions[i].Handle < regions[j].Handle })
	}
	if f.faults.Has(FaultSnapshotSkipsBuffer) && len(regions) > 0 {
		regions = regions[:len(regions)-1] // MEM-4 broken: one device buffer left out
	}
	return regions
}

// claimed is the snapshot as restore_misreported has the SDK account for it.
func (f *faultyRuntime) claimed(snap hsa.Snapshot, err error) (hsa.Snapshot, error) {
	if err != nil || !f.faults.Has(FaultRestoreMisreported) {
		return snap, err
	}
	return misreported{snap}, nil
}

// misreported claims a page more than each restore wrote (MEM-2 broken: the
// SDK's account differs from what the runtime did).
type misreported struct{ hsa.Snapshot }

func (m misreported) Restore() (uint64, error) {
	n, err := m.Snapshot.Restore()
	return n + 4096, err
}

func (m misreported) RestoreWithHook(restored func(bytes uint64)) (uint64, error) {
	claim := func(n uint64) { restored(n + 4096) }
	if h, ok := m.Snapshot.(hsa.RestoreHook); ok {
		n, err := h.RestoreWithHook(claim)
		return n + 4096, err
	}
	n, err := m.Snapshot.Restore()
	if err == nil {
		claim(n)
	}
	return n + 4096, err
}

// faultyLocks makes the agent locks of a loop with no_agent_lock planted:
// the loop's lock takes nothing, so other dispatches run between its passes
// (MEM-6 broken). Read locks are the runtime's: with no loop ever holding
// the write side they never wait.
func faultyLocks(newLock func() hsa.Locker, fs Faults) func() hsa.Locker {
	if !fs.Has(FaultNoAgentLock) {
		return newLock
	}
	return func() hsa.Locker { return unlockedLoops{newLock()} }
}

type unlockedLoops struct{ hsa.Locker }

func (unlockedLoops) Lock(hsa.ThreadID)   {}
func (unlockedLoops) Unlock(hsa.ThreadID) {}

// faultyWrites wraps the SDK's write interceptor when
// reuse_first_pass_timestamps is planted: the start and end the runtime
// reports for a kernel packet read, for every later packet of the same
// dispatch (a replay loop's passes), as those of its first packet, 0 and 0
// when that one was profiled by nobody (DID-4 broken).
func faultyWrites(intercept hsa.WriteInterceptor, fs Faults) hsa.WriteInterceptor {
	if !fs.Has(FaultReuseFirstPassTimestamps) {
		return intercept
	}
	var mu sync.Mutex
	first := map[uint64][2]uint64{} // dispatch id -> its first packet's start, end
	return func(q hsa.Queue, thread hsa.ThreadID, packets []hsa.Packet, write hsa.WriteFunc) error {
		return intercept(q, thread, packets, func(thread hsa.ThreadID, packets []hsa.Packet) error {
			err := write(thread, packets)
			mu.Lock()
			defer mu.Unlock()
			for _, p := range packets {
				if p.Type != hsa.KernelDispatchPacket || p.Tag == 0 {
					continue
				}
				t, seen := first[p.Tag]
				if !seen {
					if p.Profile != nil {
						t = [2]uint64{p.Profile.Start, p.Profile.End}
					}
					first[p.Tag] = t
				} else if p.Profile != nil {
					p.Profile.Start, p.Profile.End = t[0], t[1]
				}
			}
			return err
		})
	}
}

// copySnapshot is the snapshot of restore_into_freed: the SDK copies each
// region out itself and keeps it by address, and every restore copies
// every region back whole, never asking whether the region was freed since
// (MEM-4 broken). A region freed and not reused cannot be written (the
// runtime refuses); one whose address a new allocation reuses is written
// into that allocation.
func (f *faultyRuntime) copySnapshot(regions []hsa.Allocation) (hsa.Snapshot, error) {
	c := &copiedSnapshot{rt: f.Runtime}
	for _, a := range regions {
		data := make([]byte, a.Size)
		if err := f.Runtime.Read(a, 0, data); err != nil {
			return nil, err
		}
		c.regions = append(c.regions, a)
		c.saved = append(c.saved, data)
		c.bytes += a.Size
	}
	return c, nil
}

type copiedSnapshot struct {
	rt      hsa.Runtime
	regions []hsa.Allocation
	saved   [][]byte
	bytes   uint64
}

func (c *copiedSnapshot) Bytes() uint64 { return c.bytes }

func (c *copiedSnapshot) Restore() (uint64, error) {
	var n uint64
	for i, a := range c.regions {
		err := c.rt.Write(a, 0, c.saved[i])
		switch {
		case errors.Is(err, hsa.ErrFreed), errors.Is(err, hsa.ErrBadAccess):
			continue // nothing lives there now
		case err != nil:
			return n, err
		}
		n += a.Size
	}
	return n, nil
}

func (c *copiedSnapshot) Release() { c.regions, c.saved = nil, nil }
