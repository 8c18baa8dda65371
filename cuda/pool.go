package cuda

// bufferPool keeps released snapshot buffers for the next snapshot of the
// same size: cuMemAlloc and cuMemFree of a large buffer cost as much as
// copying it (and cuMemFree waits for the device), and replay snapshots the
// same regions dispatch after dispatch. Driver thread only.
type bufferPool struct {
	free  map[uint64][]uint64 // size -> device pointers
	bytes uint64
	limit uint64
}

// defaultPoolLimit bounds the device memory the pool keeps idle.
const defaultPoolLimit = 4 << 30

func newBufferPool(limit uint64) *bufferPool {
	return &bufferPool{free: map[uint64][]uint64{}, limit: limit}
}

// alloc takes a kept buffer of exactly size bytes, or allocates one. When
// the device is out of memory it gives the kept buffers back and retries.
func (p *bufferPool) alloc(d *driver, size uint64) (uint64, error) {
	if list := p.free[size]; len(list) > 0 {
		ptr := list[len(list)-1]
		p.free[size] = list[:len(list)-1]
		p.bytes -= size
		return ptr, nil
	}
	ptr, err := d.alloc(size)
	if isOutOfMemory(err) && p.bytes > 0 {
		p.drain(d)
		ptr, err = d.alloc(size)
	}
	return ptr, err
}

// release keeps the buffer while the pool is under its limit.
func (p *bufferPool) release(d *driver, ptr, size uint64) {
	if p.bytes+size > p.limit {
		_ = d.free(ptr)
		return
	}
	p.free[size] = append(p.free[size], ptr)
	p.bytes += size
}

// drain frees every kept buffer.
func (p *bufferPool) drain(d *driver) {
	for size, list := range p.free {
		for _, ptr := range list {
			_ = d.free(ptr)
		}
		delete(p.free, size)
	}
	p.bytes = 0
}
