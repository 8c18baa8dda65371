// Package hsa is the runtime model that every target implements: agents,
// queues carrying AQL packets, signals, memory and kernels. It holds
// interfaces and plain types only; the simulator (sim/), the CUDA target
// (cuda/) and any later runtime plug in behind it, and the replay engine
// (replay/) speaks only to it.
//
// It is public because it is the seam a new runtime plugs into: a port
// author who implements these interfaces for their runtime can run the
// reference engine, and so the whole spec library, on it.
package hsa

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/replayspec/replayspec/trace"
)

// AgentID names a GPU agent. Zero is never a valid agent.
type AgentID uint64

// QueueID names a queue. Zero is never a valid queue.
type QueueID uint64

// SignalID names a signal. Zero is never a valid signal.
type SignalID uint64

// ThreadID is the stable id of an application thread. Go has no thread-local
// storage, so every call that a real runtime would attribute to the calling OS
// thread takes the thread explicitly.
type ThreadID uint64

// Family groups agents whose hardware behaves alike for the rules (SVC-3);
// the families are the trace's vocabulary, listed once there.
type Family = trace.Family

// Agent families.
const (
	FamilyMI200    = trace.FamilyMI200
	FamilyMI300    = trace.FamilyMI300
	FamilyConsumer = trace.FamilyConsumer
	FamilyNVIDIA   = trace.FamilyNVIDIA
)

// CounterBlock is one hardware counter block: the counters it can count and
// how many of them it can count at once.
type CounterBlock struct {
	Name      string
	Registers int      // counters of this block collectable in one pass
	Counters  []string // counter names served by this block
}

// Agent describes one GPU.
type Agent struct {
	ID            AgentID
	Name          string // product name, e.g. "MI300X"
	Arch          string // gfx architecture, e.g. "gfx942"
	Family        Family
	CounterBlocks []CounterBlock
	// Counters, when set, is the agent's own counter catalogue and pass
	// scheduler; it replaces CounterBlocks for CounterGroups and
	// CollectableCounters. NVIDIA agents use it: which metrics fit one pass
	// is the vendor library's decision, not a register count.
	Counters CounterSource
}

// CounterSource names and schedules the counters of an agent whose
// counters do not come in blocks of registers.
type CounterSource interface {
	// HasCounter reports whether the agent can count name.
	HasCounter(name string) bool
	// Groups splits known, distinct counters into passes: pass i collects
	// group i, and every group fits one hardware pass.
	Groups(counters []string) ([][]string, error)
	// Describe names the catalogue for error messages.
	Describe() string
}

// Dim3 is a grid or workgroup size.
type Dim3 struct{ X, Y, Z uint32 }

// Size is the number of work items (at least 1 per dimension counts).
func (d Dim3) Size() uint64 {
	return uint64(max(d.X, 1)) * uint64(max(d.Y, 1)) * uint64(max(d.Z, 1))
}

// MemoryKind is the kind of pool an allocation comes from (MEM-4).
type MemoryKind int

// Memory kinds. Only DeviceCoarse memory is snapshotted by kernel replay.
const (
	DeviceCoarse MemoryKind = iota + 1 // coarse-grained device memory
	DeviceFine                         // fine-grained device memory
	Host                               // host memory visible to the agent
	KernArg                            // kernel-argument memory
)

var memoryKindNames = map[MemoryKind]string{
	DeviceCoarse: "device", DeviceFine: "fine", Host: "host", KernArg: "kernarg",
}

func (k MemoryKind) String() string {
	if s, ok := memoryKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("MemoryKind(%d)", int(k))
}

// ParseMemoryKind reads the names that String writes.
func ParseMemoryKind(s string) (MemoryKind, bool) {
	for k, n := range memoryKindNames {
		if n == s {
			return k, true
		}
	}
	return 0, false
}

// Allocation is a block of memory owned by an agent.
type Allocation struct {
	Handle uint64 // unique, non-zero
	Agent  AgentID
	Kind   MemoryKind
	Size   uint64 // bytes
}

// Arg is one kernel argument: a buffer or a scalar. Every kernel of the
// library works on 32-bit signed integers.
type Arg struct {
	Buffer *Allocation // nil for a scalar
	Scalar int32
}

// PacketType is the AQL packet type.
type PacketType int

// AQL packet types that the model knows.
const (
	KernelDispatchPacket PacketType = iota + 1
	BarrierPacket
)

// Packet is one AQL packet written to a queue.
type Packet struct {
	Type PacketType

	// Kernel dispatch fields.
	Kernel    string // name in the runtime's kernel library
	Grid      Dim3
	Workgroup Dim3
	Args      []Arg

	// Completion, when non-nil, is decremented by one when the packet
	// completes. The replay engine leaves it out of every pass (CMP-2).
	Completion Signal

	// Profile, when non-nil, asks the runtime to time the dispatch and count
	// counters; the runtime fills the result before signalling completion.
	// It stands in for the AQL instrumentation packets a real SDK injects.
	Profile *Profile

	// FromGraph marks a packet written by a graph launch (ACT-6: such
	// dispatches are not replayed).
	FromGraph bool

	// Tag is an opaque id that the runtime echoes in its own trace events so
	// a reader can join them to the logical dispatch; the replay engine puts
	// the dispatch id here.
	Tag uint64
}

// Profile is what a profiled dispatch asks for and what it got.
type Profile struct {
	Counters []string // counters to collect; empty for timing only
	// Device are counters of the agent-wide counting session (device
	// counting): the runtime samples them around the kernel, outside the
	// dispatch's counter registers, so they never make it need a second
	// pass (decision 17.7).
	Device []string

	// Filled by the runtime.
	Start, End uint64            // kernel start and end timestamps, ns
	Values     map[string]uint64 // one value per requested counter
}

// WriteInterceptor sees every packet batch written to a queue, on the
// writing thread, before it reaches the hardware. It must call write (zero,
// one or several times) to pass packets on; ThreadID is the writer.
type WriteInterceptor func(q Queue, thread ThreadID, packets []Packet, write WriteFunc) error

// WriteFunc writes packets to the hardware queue on behalf of thread. A
// queue makes it once (a method value), so that passing it costs nothing.
type WriteFunc func(thread ThreadID, packets []Packet) error

// Queue is a user-mode AQL queue bound to one agent.
type Queue interface {
	ID() QueueID
	Agent() AgentID
	// Submit writes packets as the application does: through the
	// interceptor when one is installed. The model's queues execute in
	// order and Submit returns once the written kernel dispatches have
	// completed, so a Profile is filled when it returns. A barrier that
	// carries a completion signal may complete later (on CUDA it is a host
	// callback behind the stream): wait on its signal.
	Submit(thread ThreadID, packets ...Packet) error
	// SetWriteInterceptor installs (or, with nil, removes) the interceptor.
	SetWriteInterceptor(WriteInterceptor)
	// Drain waits until every packet written so far has completed.
	Drain() error
}

// IdleBypass is implemented by queues that skip their write interceptor
// while its owner says it has nothing to do. The queue reads idle on every
// write: an idle interceptor then costs one load, not a call.
type IdleBypass interface {
	SetInterceptorIdle(idle *atomic.Bool)
}

// Signal is an HSA signal: a 64-bit value that packets decrement on
// completion and threads wait on.
type Signal interface {
	ID() SignalID
	Value() int64
	Store(v int64)
	Decrement()
	// WaitBelow blocks until the value is below v, the wait is cancelled
	// or the runtime gives up; ok is false when it returned without the
	// condition holding.
	WaitBelow(v int64) (ok bool)
}

// Snapshot is a saved copy of device memory that can be written back.
type Snapshot interface {
	// Bytes is the number of bytes saved.
	Bytes() uint64
	// Restore writes saved bytes back. A runtime that knows which bytes
	// changed since the last restore (dirty ranges, a compare kernel)
	// restores only those; restored is what it wrote. Regions freed since
	// the snapshot are skipped (MEM-4).
	Restore() (restored uint64, err error)
	// Release frees what the snapshot holds.
	Release()
}

// Runtime is the interface every target implements.
type Runtime interface {
	Agents() []Agent
	CreateQueue(agent AgentID) (Queue, error)
	CreateSignal(initial int64) Signal
	Allocate(agent AgentID, kind MemoryKind, size uint64) (Allocation, error)
	Free(a Allocation) error
	Write(a Allocation, offset uint64, data []byte) error
	Read(a Allocation, offset uint64, data []byte) error
	// HasKernel reports whether the kernel library holds name.
	HasKernel(name string) bool
	// DrainAgent waits until every queue of the agent is idle.
	DrainAgent(agent AgentID) error
	// Snapshot saves the given allocations (all owned by agent) on behalf
	// of thread, which also makes the snapshot's restores: a runtime that
	// records its memory traffic names the thread.
	Snapshot(thread ThreadID, agent AgentID, regions []Allocation) (Snapshot, error)
	// OnAllocate registers a hook called for every allocation and free,
	// as the SDK's allocation tracker sees them: an allocation once made,
	// a free before the block can go to another allocation (an
	// interposer's view of the free call). A nil hook removes it.
	OnAllocate(hook func(a Allocation, freed bool))
}

// Errors shared by runtimes.
var (
	ErrUnknownAgent  = errors.New("hsa: unknown agent")
	ErrUnknownKernel = errors.New("hsa: unknown kernel")
	ErrOutOfMemory   = errors.New("hsa: out of memory")
	ErrBadAccess     = errors.New("hsa: access outside allocation")
	ErrFreed         = errors.New("hsa: allocation already freed")
)

// Agent looks up an agent by id.
func FindAgent(rt Runtime, id AgentID) (Agent, bool) {
	for _, a := range rt.Agents() {
		if a.ID == id {
			return a, true
		}
	}
	return Agent{}, false
}

// Locker is a reader/writer lock whose holder is a thread. The replay
// engine keeps one per agent (MEM-6). A runtime that schedules threads
// itself (the simulator) implements LockProvider so that it sees a thread
// block; other runtimes get a plain lock.
type Locker interface {
	Lock(ThreadID)
	Unlock(ThreadID)
	RLock(ThreadID)
	RUnlock(ThreadID)
}

// SnapshotHook is implemented by runtimes that can run their caller's
// function at the moment a snapshot's copy is done, before they let go of
// the memory: what the caller records there is ordered with every kernel
// and copy of another thread as the memory saw them. The SDK records its
// snapshot there; recorded after Snapshot returned, another thread's
// kernel could land between the copy and the SDK's account of it, and a
// trace would show a copy taken before a kernel it holds (docs/decisions.md
// 18.8).
type SnapshotHook interface {
	// SnapshotWithHook is Snapshot; saved runs once, only when the copy
	// succeeded, with what Bytes will report.
	SnapshotWithHook(thread ThreadID, agent AgentID, regions []Allocation, saved func(bytes uint64)) (Snapshot, error)
}

// RestoreHook is the same for a restore, implemented by a runtime's
// Snapshot: restored runs once the restore's writes are done, only when it
// succeeded, with the bytes it wrote.
type RestoreHook interface {
	RestoreWithHook(restored func(bytes uint64)) (uint64, error)
}

// AllocHook is implemented by runtimes that can run their caller's
// function under the lock that orders memory, as an allocation is made or
// let go: the application records its allocation and fills it there, and
// records its free there, so that under free threads no other thread's
// snapshot or copy sees the memory before the trace says it exists, nor
// after the trace says it is gone.
type AllocHook interface {
	// AllocateWith is Allocate; made fills the new allocation in place
	// (data is all of it), recorded as WriteWith's write.
	AllocateWith(agent AgentID, kind MemoryKind, size uint64, made func(a Allocation, data []byte)) (Allocation, error)
	// FreeWith is Free; freed runs once the block is let go, only when
	// the free succeeded.
	FreeWith(a Allocation, freed func()) error
}

// SnapshotLister is implemented by runtimes that call the allocation hook
// (OnAllocate) under the lock that orders memory, and can take a
// snapshot's list of regions under that lock too: the SDK lists its
// tracked allocations there, so that no allocation or free of another
// thread falls between the list and the copy (MEM-4). The hook must then
// not call back into the runtime.
type SnapshotLister interface {
	// SnapshotListed is SnapshotWithHook with the regions list names,
	// listed under the runtime's memory lock.
	SnapshotListed(thread ThreadID, agent AgentID, list func() []Allocation, saved func(bytes uint64)) (Snapshot, error)
}

// LockProvider is implemented by runtimes that supply their own Locker.
type LockProvider interface {
	NewLock() Locker
}

// Mapper is implemented by runtimes whose device memory the host can reach
// in place (the simulator's is host memory): a whole allocation is written
// or read through one call, with the same traffic as Write or Read of all
// of it, but without a host copy of its size.
type Mapper interface {
	// WriteWith lets fill write the whole of a, as Write(a, 0, ...) would.
	WriteWith(a Allocation, fill func(dst []byte)) error
	// ReadWith lets use read the whole of a, as Read(a, 0, ...) would;
	// the bytes are valid only during the call. digest is trace.Digest of
	// them when the runtime already knows it ("" when not).
	ReadWith(a Allocation, use func(src []byte, digest string)) error
}
