package sim

import (
	"fmt"
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// pageSize is the granularity of dirty tracking; a chunk of pages has a
// stamp of its own so that a restore skips clean chunks without reading
// their page stamps.
const (
	pageSize      = 4096
	pagesPerChunk = 64
)

// allocation is one live (or freed) block of simulated memory.
type allocation struct {
	meta  hsa.Allocation
	data  []byte
	freed bool
	// pageStamp[i] is the memory version of the last write to page i;
	// a snapshot restores the pages stamped after its own mark.
	pageStamp []uint64
	// chunkStamp[c] is the newest page stamp in chunk c.
	chunkStamp []uint64
	// gen is the generation of the bytes (contents.go): equal generations
	// of one allocation mean equal bytes.
	gen uint64
	// whole is the one region of all of it, as a read or write of it whole
	// records it: made once and shared by those events (they only read
	// their fields), not once a pass.
	whole []trace.Region
}

// wholeRegion is the region of a, which names al: al's whole region
// (whole, made on first use) when a is all of al.
func (al *allocation) wholeRegion(a hsa.Allocation) []trace.Region {
	if a.Handle != al.meta.Handle || a.Size != al.meta.Size {
		return []trace.Region{{Addr: a.Handle, Bytes: a.Size}}
	}
	if al.whole == nil {
		al.whole = []trace.Region{{Addr: al.meta.Handle, Bytes: al.meta.Size}}
	}
	return al.whole
}

// memory holds every allocation. One mutex guards data, stamps and the
// table: kernels, reads, writes and restores are serialised like a single
// memory controller.
type memory struct {
	mu       sync.Mutex
	byHandle map[uint64]*allocation
	nextAddr uint64 // where the next allocation starts
	// reusable holds the addresses of freed blocks, by what fits them: a
	// new allocation of the same agent, kind and page count takes the
	// last one freed, as a caching allocator does. A snapshot keeps its
	// regions by identity, so it still tells the new block from the freed
	// one (MEM-4); an SDK that restores by address would not.
	reusable  map[blockShape][]uint64
	version   uint64 // bumped by every write; page stamps use it
	gens      uint64 // the last content generation handed out
	memo      memo   // digests and kernel runs by content (contents.go)
	liveBytes map[hsa.AgentID]uint64
	limit     uint64
}

func newMemory(limit uint64) *memory {
	return &memory{byHandle: map[uint64]*allocation{}, liveBytes: map[hsa.AgentID]uint64{}, limit: limit, nextAddr: baseAddr,
		reusable: map[blockShape][]uint64{}}
}

// blockShape is what a freed block can be reused for.
type blockShape struct {
	agent hsa.AgentID
	kind  hsa.MemoryKind
	pages uint64
}

// place gives a new allocation its address: the last freed block of its
// shape, else fresh memory after a guard page. The caller holds mu.
func (m *memory) place(agent hsa.AgentID, kind hsa.MemoryKind, size uint64) uint64 {
	shape := blockShape{agent, kind, (size + pageSize - 1) / pageSize}
	if free := m.reusable[shape]; len(free) > 0 {
		addr := free[len(free)-1]
		m.reusable[shape] = free[:len(free)-1]
		return addr
	}
	addr := m.nextAddr
	m.nextAddr += shape.pages*pageSize + pageSize
	return addr
}

// lookup finds the live allocation a names. The caller holds mu.
func (m *memory) lookup(a hsa.Allocation) (*allocation, error) {
	al, ok := m.byHandle[a.Handle]
	if !ok {
		return nil, fmt.Errorf("%w: no allocation with handle %d", hsa.ErrBadAccess, a.Handle)
	}
	if al.freed {
		return nil, fmt.Errorf("%w: handle %d", hsa.ErrFreed, a.Handle)
	}
	return al, nil
}

// newGen hands out a content generation never used before. The caller
// holds mu.
func (m *memory) newGen() uint64 {
	m.gens++
	return m.gens
}

// markWritten stamps the pages of [off, off+n) with a new version. The
// caller holds mu.
func (m *memory) markWritten(al *allocation, off, n uint64) {
	if n == 0 {
		return
	}
	m.version++
	for p := off / pageSize; p <= (off+n-1)/pageSize; p++ {
		al.pageStamp[p] = m.version
		al.chunkStamp[p/pagesPerChunk] = m.version
	}
}

// checkRange reports whether [off, off+n) lies inside al, without overflow.
func checkRange(al *allocation, off uint64, n int) error {
	if off > al.meta.Size || uint64(n) > al.meta.Size-off {
		return fmt.Errorf("%w: %d bytes at offset %d of a %d-byte allocation (handle %d)",
			hsa.ErrBadAccess, n, off, al.meta.Size, al.meta.Handle)
	}
	return nil
}

// Allocate implements hsa.Runtime.
func (r *Runtime) Allocate(agent hsa.AgentID, kind hsa.MemoryKind, size uint64) (hsa.Allocation, error) {
	return r.AllocateWith(agent, kind, size, nil)
}

// AllocateWith implements hsa.AllocHook: made (when not nil) fills the new
// allocation in place, recorded as WriteWith's write; then the allocation
// hook hears of it, all under the memory lock (hsa.SnapshotLister).
func (r *Runtime) AllocateWith(agent hsa.AgentID, kind hsa.MemoryKind, size uint64, made func(a hsa.Allocation, data []byte)) (hsa.Allocation, error) {
	if _, ok := r.agent(agent); !ok {
		return hsa.Allocation{}, fmt.Errorf("%w: %d", hsa.ErrUnknownAgent, agent)
	}
	if _, ok := knownMemoryKinds[kind]; !ok {
		return hsa.Allocation{}, fmt.Errorf("sim: allocate: unknown memory kind %v", kind)
	}
	if size == 0 {
		return hsa.Allocation{}, fmt.Errorf("sim: allocate: size must be at least 1 byte")
	}
	m := r.mem
	m.mu.Lock()
	if size > m.limit-m.liveBytes[agent] {
		m.mu.Unlock()
		return hsa.Allocation{}, fmt.Errorf("%w: %d bytes on agent %d (%d of %d in use)",
			hsa.ErrOutOfMemory, size, agent, m.liveBytes[agent], m.limit)
	}
	// A handle is the allocation's device address: page-aligned, a guard
	// page between allocations; a freed block's address is reused.
	meta := hsa.Allocation{Handle: m.place(agent, kind, size), Agent: agent, Kind: kind, Size: size}
	pages := (size + pageSize - 1) / pageSize
	al := &allocation{
		meta:       meta,
		data:       make([]byte, size),
		pageStamp:  make([]uint64, pages),
		chunkStamp: make([]uint64, (pages+pagesPerChunk-1)/pagesPerChunk),
		gen:        m.newGen(),
	}
	m.byHandle[meta.Handle] = al
	m.liveBytes[agent] += size
	if made != nil {
		r.fillWhole(al, func(data []byte) { made(meta, data) })
	}
	r.notifyAllocate(meta, false)
	m.mu.Unlock()
	return meta, nil
}

var knownMemoryKinds = map[hsa.MemoryKind]bool{hsa.DeviceCoarse: true, hsa.DeviceFine: true, hsa.Host: true, hsa.KernArg: true}

// Free implements hsa.Runtime. The block's address goes to the next
// allocation of its shape (place); a stale handle then names that one.
func (r *Runtime) Free(a hsa.Allocation) error { return r.FreeWith(a, nil) }

// FreeWith implements hsa.AllocHook. The allocation hook hears of the free
// before the block is let go, as an interposer on the free call does, and
// freed (when not nil) runs as it is let go, all under the memory lock: a
// snapshot listed under that lock (SnapshotListed) sees the block and the
// buffer both live or both gone. Heard after the lock was let go, a free
// on one thread dropped the SDK's entry for another thread's allocation
// made at the same address meanwhile, and a snapshot could be handed a
// block already freed (MEM-4, generated spec 1319 under free threads).
func (r *Runtime) FreeWith(a hsa.Allocation, freed func()) error {
	m := r.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	al, err := m.lookup(a)
	if err != nil {
		return err
	}
	r.notifyAllocate(al.meta, true)
	al.freed = true
	al.data, al.pageStamp, al.chunkStamp = nil, nil, nil
	m.liveBytes[al.meta.Agent] -= al.meta.Size
	shape := blockShape{al.meta.Agent, al.meta.Kind, (al.meta.Size + pageSize - 1) / pageSize}
	m.reusable[shape] = append(m.reusable[shape], al.meta.Handle)
	if freed != nil {
		freed()
	}
	return nil
}

// baseAddr is the device address of the first allocation.
const baseAddr = 1 << 32

// Write implements hsa.Runtime. The traffic is recorded under the memory
// lock, before another thread can see what was written (decision 18.4).
func (r *Runtime) Write(a hsa.Allocation, offset uint64, data []byte) error {
	return r.mem.access(a, offset, len(data), func(al *allocation) {
		copy(al.data[offset:], data)
		r.mem.markWritten(al, offset, uint64(len(data)))
		al.gen = r.mem.newGen()
		r.traffic(trace.MemWrite, a, []trace.Region{{Addr: a.Handle + offset, Bytes: uint64(len(data))}})
	})
}

// WriteWith implements hsa.Mapper: fill writes the whole allocation in
// place, recorded as one write of all of it.
func (r *Runtime) WriteWith(a hsa.Allocation, fill func(dst []byte)) error {
	return r.mem.access(a, 0, int(a.Size), func(al *allocation) { r.fillWhole(al, fill) })
}

// fillWhole lets fill write all of al in place, recorded as one write of
// all of it. The caller holds the memory lock.
func (r *Runtime) fillWhole(al *allocation, fill func(dst []byte)) {
	fill(al.data)
	r.mem.markWritten(al, 0, al.meta.Size)
	al.gen = r.mem.newGen()
	r.traffic(trace.MemWrite, al.meta, al.wholeRegion(al.meta))
}

// ReadWith implements hsa.Mapper: use reads the whole allocation in place,
// recorded as one read of all of it, with its digest: a buffer read back
// after a kernel usually holds what the kernel's mem_out already hashed
// (contents.go).
func (r *Runtime) ReadWith(a hsa.Allocation, use func(src []byte, digest string)) error {
	return r.mem.access(a, 0, int(a.Size), func(al *allocation) {
		use(al.data, r.mem.memo.digest(contentsOf([]*allocation{al}), [][]byte{al.data}))
		r.traffic(trace.MemRead, a, al.wholeRegion(a))
	})
}

// ReadDigest is ReadWith for a reader that wants only the digest and the
// size (a tool copying a buffer to compare it): the same read, recorded
// the same way, with no function handed over (the harness's copies at
// every PASS ENTER and EXIT).
func (r *Runtime) ReadDigest(a hsa.Allocation) (digest string, size uint64, err error) {
	err = r.mem.access(a, 0, int(a.Size), func(al *allocation) {
		digest, size = r.mem.memo.digest(contentsOf([]*allocation{al}), [][]byte{al.data}), uint64(len(al.data))
		r.traffic(trace.MemRead, a, al.wholeRegion(a))
	})
	return digest, size, err
}

// Read implements hsa.Runtime.
func (r *Runtime) Read(a hsa.Allocation, offset uint64, data []byte) error {
	return r.mem.access(a, offset, len(data), func(al *allocation) {
		copy(data, al.data[offset:])
		r.traffic(trace.MemRead, a, []trace.Region{{Addr: a.Handle + offset, Bytes: uint64(len(data))}})
	})
}

// traffic records memory the runtime moved outside a kernel for the
// application, as an interposer on the runtime would see it: device memory
// only (host memory is plain CPU loads and stores), named for the thread
// holding the baton. The caller holds mem.mu, so the event takes its place
// among the kernels' in the order memory was touched.
func (r *Runtime) traffic(typ trace.Type, a hsa.Allocation, regions []trace.Region) {
	if a.Kind == hsa.DeviceCoarse || a.Kind == hsa.DeviceFine {
		r.trafficAll(typ, r.threads.holder(), a.Agent, regions)
	}
}

// access runs f on a live allocation under the memory lock, once the
// bytes [offset, offset+n) are known to lie inside it.
func (m *memory) access(a hsa.Allocation, offset uint64, n int, f func(al *allocation)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	al, err := m.lookup(a)
	if err != nil {
		return err
	}
	if err := checkRange(al, offset, n); err != nil {
		return err
	}
	f(al)
	return nil
}

// OnAllocate implements hsa.Runtime.
func (r *Runtime) OnAllocate(hook func(a hsa.Allocation, freed bool)) {
	r.hookMu.Lock()
	r.allocHook = hook
	r.hookMu.Unlock()
}

// notifyAllocate calls the hook; the caller holds the memory lock, so the
// hook must not call back into the runtime (hsa.SnapshotLister).
func (r *Runtime) notifyAllocate(a hsa.Allocation, freed bool) {
	r.hookMu.Lock()
	hook := r.allocHook
	r.hookMu.Unlock()
	if hook != nil {
		hook(a, freed)
	}
}
