package replay

import (
	"sync"

	"github.com/replayspec/replayspec/internal/hsa"
)

// Planted faults that are a collaborator gone wrong rather than a step of
// the loop: the runtime the SDK saves memory with, and the payload the tool
// is handed. Wrapping the collaborator keeps the replay loop reading like
// the spec.

// faultyRuntime is the runtime as a buggy SDK would drive it.
type faultyRuntime struct {
	hsa.Runtime
	faults Faults

	mu     sync.Mutex
	allocs map[uint64]hsa.Allocation // every live allocation, any kind
}

// withFaults wraps rt when a runtime-side fault is planted.
func withFaults(rt hsa.Runtime, fs Faults) hsa.Runtime {
	if !fs.Has(FaultSnapshotUnsavedKinds) && !fs.Has(FaultSnapshotSkipsBuffer) && !fs.Has(FaultRestoreMisreported) {
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
	if f.faults.Has(FaultSnapshotSkipsBuffer) && len(regions) > 0 {
		regions = regions[:len(regions)-1] // MEM-4 broken: one device buffer left out
	}
	snap, err := f.Runtime.Snapshot(thread, agent, regions)
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

// faultyPayload hands the tool a payload with a short size or a wrong grid
// (API-5 broken).
func faultyPayload(cb TracingCallback, fs Faults) TracingCallback {
	if !fs.Has(FaultPayloadSizeShort) && !fs.Has(FaultDispatchInfoGrid) {
		return cb
	}
	return func(rec CallbackRecord, ud *UserData) {
		if p := rec.Payload; p != nil {
			if fs.Has(FaultPayloadSizeShort) {
				p.Size = payloadSize - 24 // the members' sizes summed without dispatch_info's
			}
			if fs.Has(FaultDispatchInfoGrid) {
				p.DispatchInfo.GridSize.X *= 2
			}
		}
		cb(rec, ud)
	}
}
