package sim

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/internal/hsa"
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
	for i := range packets {
		if err := r.checkPacket(q.agent, &packets[i]); err != nil {
			return fmt.Errorf("sim: queue %d, packet %d: %w", q.id, i, err)
		}
	}
	for i := range packets {
		p := &packets[i]
		if p.Type == hsa.BarrierPacket {
			r.clock.Add(barrierTime)
			r.completeSignal(thread, p.Completion)
			continue
		}
		if err := r.runKernel(q, thread, p); err != nil {
			return fmt.Errorf("sim: queue %d, packet %d: %w", q.id, i, err)
		}
		r.threads.yield(thread)
	}
	return nil
}

// checkPacket rejects what the hardware could not run, before anything runs.
func (r *Runtime) checkPacket(agent *agentState, p *hsa.Packet) error {
	switch p.Type {
	case hsa.BarrierPacket:
		return nil
	case hsa.KernelDispatchPacket:
	default:
		return fmt.Errorf("unknown packet type %d", p.Type)
	}
	k, ok := library[p.Kernel]
	if !ok {
		return fmt.Errorf("%w: %q", hsa.ErrUnknownKernel, p.Kernel)
	}
	if err := checkArgs(k, p.Args); err != nil {
		return err
	}
	if wg := p.Workgroup.Size(); wg > maxWorkgroup {
		return fmt.Errorf("workgroup of %d work items exceeds %d", wg, maxWorkgroup)
	}
	if p.Profile != nil {
		if _, missing := hsa.CollectableCounters(agent.info, p.Profile.Device); len(missing) > 0 {
			return fmt.Errorf("agent %d (%s) has no device counter %v", agent.info.ID, agent.info.Name, missing)
		}
		return checkCounters(agent.info, p.Profile.Counters)
	}
	return nil
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

// runKernel runs one checked dispatch: it reads the buffers, applies the
// kernel, moves the clock, fills the profile, emits the kernel event and
// completes the packet's signal.
func (r *Runtime) runKernel(q *queue, thread hsa.ThreadID, p *hsa.Packet) error {
	k := library[p.Kernel]
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
	if rec != nil {
		memIn = trace.Digest(savedBuffers(q.agent.info.ID, bufs[:k.Buffers], lives[:k.Buffers])...)
	}
	k.run(bufs, scalar, items, grid)
	written := items * 4
	if k.Name == "atomic_counter" {
		written = 4
	}
	for i := range max(k.writes, 1) { // the buffers the kernel writes, leading ones
		if i == 0 || lives[i] != lives[0] {
			m.markWritten(lives[i], 0, written)
		}
	}
	if rec != nil {
		memOut = trace.Digest(savedBuffers(q.agent.info.ID, bufs[:k.Buffers], lives[:k.Buffers])...)
	}
	shape := dispatchShape(k, q.agent.kind, grid, p.Workgroup.Size(), items)
	// The clock moves under the memory lock so that times follow the order
	// in which kernels touched memory.
	end := r.clock.Add(launchLatency + shape.duration)
	start := end - shape.duration
	m.mu.Unlock()

	if p.Profile != nil {
		p.Profile.Start, p.Profile.End = start, end
		p.Profile.Values = counterValues(append(slices.Clone(p.Profile.Counters), p.Profile.Device...), shape)
	}
	if rec != nil {
		e := trace.Event{Type: trace.Kernel, Time: end, Thread: uint64(thread), Agent: uint64(q.agent.info.ID),
			Queue: uint64(q.id), Kernel: k.Name, Dispatch: p.Tag, Start: start, End: end, MemIn: memIn, MemOut: memOut}
		if p.Completion != nil {
			e.Signal = uint64(p.Completion.ID())
		}
		rec.Emit(e)
	}
	r.completeSignal(thread, p.Completion)
	return nil
}

// savedBuffers keeps the coarse-grained device buffers of the kernel's own
// agent: the memory kernel replay saves and restores (MEM-4, decision 8;
// another agent's memory is not, decision 17.3), and so the memory mem_in
// and mem_out describe (docs/trace.md), each once, in argument order.
func savedBuffers(agent hsa.AgentID, bufs [][]byte, lives []*allocation) [][]byte {
	var out [][]byte
	for i, b := range bufs {
		if lives[i].meta.Kind == hsa.DeviceCoarse && lives[i].meta.Agent == agent && !slices.Contains(lives[:i], lives[i]) {
			out = append(out, b)
		}
	}
	return out
}
