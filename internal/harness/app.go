package harness

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/replayspec/replayspec/internal/hsa"
	"github.com/replayspec/replayspec/internal/replay"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Hooks connect the application to the tool that profiles it: the tool
// learns which thread is which, what each thread is submitting, and says
// which pass a dispatch is in (for dispatches that start "during" one).
type Hooks interface {
	ThreadStarted(thread hsa.ThreadID)
	Submitting(thread hsa.ThreadID, dispatch string)
	InPass(dispatch string) (pass uint64, ok bool)
	Completed(thread hsa.ThreadID, dispatch string)
}

// RunApplication plays s's application (buffers, queues, threads and
// dispatches) on rt under sdk, recording what the application observes,
// and returns once every thread is done. Agents of rt are matched to the
// spec's agents in order. Any tool, the spec's own or rocprofv3's, drives
// it through hooks.
func RunApplication(rt hsa.Runtime, th Threads, sdk *replay.SDK, rec *trace.Recorder, s spec.Spec, hooks Hooks) error {
	agents := rt.Agents()
	if len(agents) < len(s.Agents) {
		return fmt.Errorf("the spec needs %d agents; the runtime has %d", len(s.Agents), len(agents))
	}
	a := &app{rt: rt, sdk: sdk, hooks: hooks, rec: rec, s: s, th: th,
		agents: map[string]hsa.AgentID{}, buffers: map[string]hsa.Allocation{},
		queues: map[string]hsa.Queue{}, completed: map[string]bool{}, freed: map[string]bool{}}
	for i, ag := range s.Agents {
		a.agents[ag.Name] = agents[i].ID
	}
	if err := a.allocate(); err != nil {
		return err
	}
	byThread := map[hsa.ThreadID][]spec.Dispatch{}
	for _, d := range s.Application.Dispatches {
		byThread[hsa.ThreadID(d.Thread)] = append(byThread[hsa.ThreadID(d.Thread)], d)
	}
	ids := make([]hsa.ThreadID, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := th.Go(id, func() { a.runThread(id, byThread[id]) }); err != nil {
			return err
		}
	}
	waitErr := th.Wait()
	a.readBack()
	a.mu.Lock()
	defer a.mu.Unlock()
	return errors.Join(append(a.errs, waitErr)...)
}

// app is one run of an application.
type app struct {
	rt    hsa.Runtime
	sdk   *replay.SDK
	hooks Hooks
	rec   *trace.Recorder
	s     spec.Spec
	th    Threads

	agents  map[string]hsa.AgentID
	buffers map[string]hsa.Allocation

	mu        sync.Mutex
	queues    map[string]hsa.Queue
	completed map[string]bool
	freed     map[string]bool
	errs      []error
}

func (a *app) fail(err error) {
	a.mu.Lock()
	a.errs = append(a.errs, err)
	a.mu.Unlock()
}

// allocate makes and fills every buffer.
func (a *app) allocate() error {
	for _, b := range a.s.Application.Buffers {
		kind, ok := hsa.ParseMemoryKind(b.Kind)
		if !ok {
			return fmt.Errorf("buffer %s: unknown kind %q", b.Name, b.Kind)
		}
		al, err := a.rt.Allocate(a.agents[b.Agent], kind, b.Elements*4)
		if err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		data := make([]byte, b.Elements*4)
		for i := uint64(0); i < b.Elements; i++ {
			v := b.Fill
			if i < uint64(len(b.Values)) {
				v = b.Values[i]
			} else if len(b.Values) > 0 {
				v = 0
			}
			binary.LittleEndian.PutUint32(data[i*4:], uint32(int32(v)))
		}
		if err := a.rt.Write(al, 0, data); err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		a.buffers[b.Name] = al
	}
	return nil
}

func (a *app) queue(agent, name string) (hsa.Queue, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := agent + "/" + name
	if q, ok := a.queues[key]; ok {
		return q, nil
	}
	q, err := a.rt.CreateQueue(a.agents[agent])
	if err != nil {
		return nil, err
	}
	a.sdk.Intercept(q)
	a.queues[key] = q
	return q, nil
}

// runThread runs one thread's dispatches in order.
func (a *app) runThread(id hsa.ThreadID, ds []spec.Dispatch) {
	a.hooks.ThreadStarted(id)
	for _, d := range ds {
		if !a.waitToStart(id, d) {
			a.fail(fmt.Errorf("dispatch %s: what it waits for never happened", d.Name))
			continue
		}
		if err := a.dispatch(id, d); err != nil {
			a.fail(fmt.Errorf("dispatch %s: %w", d.Name, err))
		}
		a.mu.Lock()
		a.completed[d.Name] = true
		a.mu.Unlock()
		a.freeAfter(d.Name)
		a.hooks.Completed(id, d.Name)
	}
}

func (a *app) waitToStart(id hsa.ThreadID, d spec.Dispatch) bool {
	switch {
	case d.After != "":
		return a.th.WaitUntil(id, func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.completed[d.After]
		})
	case d.During != nil:
		w := d.During
		return a.th.WaitUntil(id, func() bool {
			p, ok := a.hooks.InPass(w.Dispatch)
			return ok && p == w.Pass
		})
	}
	return true
}

func (a *app) dispatch(id hsa.ThreadID, d spec.Dispatch) error {
	q, err := a.queue(d.Agent, d.Queue)
	if err != nil {
		return err
	}
	sig := a.rt.CreateSignal(1)
	pk := hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: d.Kernel, Grid: hsa.Dim3{X: d.Grid, Y: 1, Z: 1},
		Workgroup: hsa.Dim3{X: d.Workgroup, Y: 1, Z: 1}, Completion: sig, FromGraph: d.Graph}
	var bufs []hsa.Allocation
	for _, name := range d.Args {
		b := a.buffers[name]
		bufs = append(bufs, b)
		pk.Args = append(pk.Args, hsa.Arg{Buffer: &b})
	}
	if k, ok := spec.LookupKernel(d.Kernel); ok && k.Scalar {
		pk.Args = append(pk.Args, hsa.Arg{Scalar: d.Scalar})
	}
	packets := []hsa.Packet{pk}
	for i := 1; i < d.Packets; i++ {
		packets = append(packets, hsa.Packet{Type: hsa.BarrierPacket})
	}
	a.hooks.Submitting(id, d.Name)
	a.rec.Emit(trace.Event{Type: trace.AppDispatch, Thread: uint64(id), Label: d.Name, Kernel: d.Kernel,
		Agent: uint64(q.Agent()), Queue: uint64(q.ID()), Signal: uint64(sig.ID())})

	// The launch API and the queue write inside it: the dispatch's internal
	// correlation id is the inner call, its ancestor the outer (COR-1).
	a.sdk.EnterAPI(id)
	a.sdk.EnterAPI(id)
	err = q.Submit(id, packets...)
	a.sdk.ExitAPI(id)
	a.sdk.ExitAPI(id)
	switch {
	case errors.Is(err, replay.ErrNeverEnded):
		// CMP-4: the application would block here for ever.
		a.rec.Emit(trace.Event{Type: trace.AppTimeout, Thread: uint64(id), Label: d.Name, Signal: uint64(sig.ID())})
		return nil
	case err != nil:
		return err
	}
	if !sig.WaitBelow(1) {
		a.rec.Emit(trace.Event{Type: trace.AppTimeout, Thread: uint64(id), Label: d.Name, Signal: uint64(sig.ID())})
		return nil
	}
	a.rec.Emit(trace.Event{Type: trace.AppComplete, Thread: uint64(id), Label: d.Name, Signal: uint64(sig.ID())})
	contents, err := a.read(savedOnly(bufs))
	if err != nil {
		return err
	}
	a.rec.Emit(trace.Event{Type: trace.AppReadback, Thread: uint64(id), Label: d.Name, Digest: trace.Digest(contents...)})
	return nil
}

func (a *app) read(bufs []hsa.Allocation) ([][]byte, error) {
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		out[i] = make([]byte, b.Size)
		if err := a.rt.Read(b, 0, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// freeAfter frees the buffers the spec ties to the end of this dispatch.
func (a *app) freeAfter(name string) {
	for _, b := range a.s.Application.Buffers {
		if b.FreeAfter == name {
			if err := a.rt.Free(a.buffers[b.Name]); err != nil {
				a.fail(fmt.Errorf("free %s: %w", b.Name, err))
			}
			a.mu.Lock()
			a.freed[b.Name] = true
			a.mu.Unlock()
		}
	}
}

// readBack reads every live buffer at the end of the run.
func (a *app) readBack() {
	for _, b := range a.s.Application.Buffers {
		if a.freed[b.Name] {
			continue
		}
		contents, err := a.read([]hsa.Allocation{a.buffers[b.Name]})
		if err != nil {
			a.fail(fmt.Errorf("read %s: %w", b.Name, err))
			continue
		}
		data := contents[0]
		var vals []int64
		for i := 0; i+4 <= len(data) && i < 16*4; i += 4 {
			vals = append(vals, int64(int32(binary.LittleEndian.Uint32(data[i:]))))
		}
		a.rec.Emit(trace.Event{Type: trace.AppMemory, Label: b.Name, Digest: trace.Digest(data), Values: vals})
	}
}

// savedOnly keeps the coarse-grained device buffers, the ones the runtime's
// mem_in/mem_out digests describe (docs/trace.md).
func savedOnly(bufs []hsa.Allocation) []hsa.Allocation {
	var out []hsa.Allocation
	for _, b := range bufs {
		if b.Kind == hsa.DeviceCoarse {
			out = append(out, b)
		}
	}
	return out
}
