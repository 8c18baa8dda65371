package sim

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// Timing model, in virtual ns: deterministic, and the clock moves on with
// every packet, so two passes of one dispatch never share timestamps (DID-4).
const (
	launchLatency  = 2_000
	kernelBaseTime = 1_000
	barrierTime    = 100
	maxWorkgroup   = 1024
)

// execute is the hardware: it checks the whole batch, then runs it in order.
func (r *Runtime) execute(q *queue, thread hsa.ThreadID, packets []hsa.Packet) error {
	// Each packet's kernel as the check found it in the library (nil for a
	// barrier), for the run: a second lookup by name cost a tenth of it.
	var few [4]*kernelDef
	kernels := few[:0]
	for i := range packets {
		k, err := r.checkPacket(q.agent, &packets[i])
		if err != nil {
			return fmt.Errorf("sim: queue %d, packet %d: %w", q.id, i, err)
		}
		kernels = append(kernels, k)
	}
	for i := range packets {
		p := &packets[i]
		if p.Type == hsa.BarrierPacket {
			r.clock.Add(barrierTime)
			r.completeSignal(thread, p.Completion)
			continue
		}
		if err := r.runKernel(q, thread, p, kernels[i]); err != nil {
			return fmt.Errorf("sim: queue %d, packet %d: %w", q.id, i, err)
		}
		r.threads.yield(thread)
	}
	return nil
}

// checkPacket rejects what the hardware could not run, before anything
// runs; it returns the packet's kernel (nil for a barrier).
func (r *Runtime) checkPacket(agent *agentState, p *hsa.Packet) (*kernelDef, error) {
	switch p.Type {
	case hsa.BarrierPacket:
		return nil, nil
	case hsa.KernelDispatchPacket:
	default:
		return nil, fmt.Errorf("unknown packet type %d", p.Type)
	}
	k, ok := library[p.Kernel]
	if !ok {
		return nil, fmt.Errorf("%w: %q", hsa.ErrUnknownKernel, p.Kernel)
	}
	if err := checkArgs(k, p.Args); err != nil {
		return nil, err
	}
	if wg := p.Workgroup.Size(); wg > maxWorkgroup {
		return nil, fmt.Errorf("workgroup of %d work items exceeds %d", wg, maxWorkgroup)
	}
	if p.Profile != nil {
		if _, missing := hsa.CollectableCounters(agent.info, p.Profile.Device); len(missing) > 0 {
			return nil, fmt.Errorf("agent %d (%s) has no device counter %v", agent.info.ID, agent.info.Name, missing)
		}
		if err := checkCounters(agent.info, p.Profile.Counters); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func checkArgs(k *kernelDef, args []hsa.Arg) error {
	want := k.Buffers
	if k.Scalar {
		want++
	}
	if len(args) != want {
		return fmt.Errorf("kernel %s takes %s, got %d arguments", k.Name, arity(k.KernelInfo), len(args))
	}
	for i := range k.Buffers {
		if args[i].Buffer == nil {
			return fmt.Errorf("kernel %s: argument %d must be a buffer, got a scalar", k.Name, i)
		}
	}
	if k.Scalar && args[k.Buffers].Buffer != nil {
		return fmt.Errorf("kernel %s: argument %d must be a scalar, got a buffer", k.Name, k.Buffers)
	}
	return nil
}

func arity(k KernelInfo) string {
	s := fmt.Sprintf("%d buffer(s)", k.Buffers)
	if k.Scalar {
		s += " and a scalar"
	}
	return s
}

// runKernel runs one checked dispatch of kernel k: it reads the buffers,
// applies the kernel, moves the clock, fills the profile, emits the kernel
// event and completes the packet's signal.
func (r *Runtime) runKernel(q *queue, thread hsa.ThreadID, p *hsa.Packet, k *kernelDef) error {
	rec := r.rec.Load()
	var bufs [maxBuffers][]byte
	var lives [maxBuffers]*allocation

	m := r.mem
	m.mu.Lock()
	elements := ^uint64(0)
	for i := range k.Buffers {
		al, err := m.lookup(*p.Args[i].Buffer)
		if err != nil {
			m.mu.Unlock()
			return fmt.Errorf("kernel %s, argument %d: %w", k.Name, i, err)
		}
		lives[i], bufs[i] = al, al.data
		elements = min(elements, al.meta.Size/4)
	}
	if elements == 0 {
		m.mu.Unlock()
		return fmt.Errorf("kernel %s: a buffer argument holds no int32 element", k.Name)
	}
	var scalar int32
	if k.Scalar {
		scalar = p.Args[k.Buffers].Scalar
	}
	grid := p.Grid.Size()
	items := min(grid, elements) // work items past the end of a buffer do nothing
	var memIn, memOut string
	var saved [maxBuffers]*allocation
	var savedBufs [maxBuffers][]byte
	nSaved := 0
	if rec != nil {
		nSaved = savedBuffers(q.agent.info.ID, lives[:k.Buffers], &saved, &savedBufs)
		memIn = m.memo.digest(contentsOf(saved[:nSaved]), savedBufs[:nSaved])
	}
	run := runKey{kernel: k, in: contentsOf(lives[:k.Buffers]), scalar: scalar, items: items, grid: grid}
	k.run(bufs, scalar, items, grid)
	written := items * 4
	if k.Name == "atomic_counter" {
		written = 4
	}
	var wrote [maxBuffers]*allocation
	nWrote := 0
	for i := range max(k.writes, 1) { // the buffers the kernel writes, leading ones
		if i == 0 || lives[i] != lives[0] {
			m.markWritten(lives[i], 0, written)
			wrote[nWrote] = lives[i]
			nWrote++
		}
	}
	if rec != nil {
		m.memo.ran(run, wrote[:nWrote], m.newGen)
	} else {
		// Nothing is digested without a recorder: new generations are
		// always right, and cost no lookup on the bare path.
		for _, al := range wrote[:nWrote] {
			al.gen = m.newGen()
		}
	}
	if rec != nil {
		memOut = m.memo.digest(contentsOf(saved[:nSaved]), savedBufs[:nSaved])
	}
	shape := dispatchShape(k, q.agent.kind, grid, p.Workgroup.Size(), items)
	// The clock moves under the memory lock so that times follow the order
	// in which kernels touched memory.
	end := r.clock.Add(launchLatency + shape.duration)
	start := end - shape.duration
	if rec != nil {
		// The event too is recorded under the memory lock: with threads
		// running in parallel, a kernel that touched memory first must come
		// first in the trace, or the trace says a later kernel's output
		// was read before it was written (MEM-3 on a faithful run).
		// Filled field by field: a literal of the 704-byte event was built
		// aside and copied twice (from a template, then into e).
		var e trace.Event
		e.Type, e.Time, e.Thread, e.Agent, e.Queue = trace.Kernel, end, uint64(thread), uint64(q.agent.info.ID), uint64(q.id)
		e.Kernel, e.Dispatch, e.Start, e.End, e.MemIn, e.MemOut = k.Name, p.Tag, start, end, memIn, memOut
		if p.Completion != nil {
			e.Signal = uint64(p.Completion.ID())
		}
		if p.Profile != nil {
			// The runtime's own account of what it counted for this
			// run: the witness the oracles hold counter records to (AGT-1).
			e.Counters = countedAs(p.Profile, shape)
		}
		rec.EmitRef(&e)
	}
	m.mu.Unlock()

	if p.Profile != nil {
		p.Profile.Start, p.Profile.End = start, end
		p.Profile.Values = counterValues(append(slices.Clone(p.Profile.Counters), p.Profile.Device...), shape)
	}
	r.completeSignal(thread, p.Completion)
	return nil
}

// savedBuffers keeps the coarse-grained device buffers of the kernel's own
// agent: the memory kernel replay saves and restores (MEM-4, decision 8;
// another agent's memory is not, decision 17.3), and so the memory mem_in
// and mem_out describe (docs/trace.md), each once, in argument order. It
// fills saved and their bytes and returns how many there are.
func savedBuffers(agent hsa.AgentID, lives []*allocation, saved *[maxBuffers]*allocation, bufs *[maxBuffers][]byte) int {
	n := 0
	for i, al := range lives {
		if al.meta.Kind == hsa.DeviceCoarse && al.meta.Agent == agent && !slices.Contains(lives[:i], al) {
			saved[n], bufs[n] = al, al.data
			n++
		}
	}
	return n
}
