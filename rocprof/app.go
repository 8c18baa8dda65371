package rocprof

// The application player below repeats the minimum of harness/app.go:
// buffers, queues, threads and dispatches. harness plays a spec's tool and
// application together on an SDK it makes itself and does not export the
// application half, so rocprofv3 (a different tool, on an SDK we configure)
// cannot reuse it without changing harness. If harness exported
// "RunApplication(rt hsa.Runtime, th Threads, sdk *replay.SDK, s spec.Spec,
// hooks AppHooks) error" (hooks: BeforeSubmit(thread, dispatch name) and
// InPass(dispatch name) (pass int64)), this file would shrink to a call.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/replay"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
)

type app struct {
	rt   *sim.Runtime
	sdk  *replay.SDK
	tool *tool
	s    spec.Spec

	agents  map[string]hsa.AgentID
	buffers map[string]hsa.Allocation

	mu        sync.Mutex
	queues    map[string]hsa.Queue
	completed map[string]bool
	errs      []error
}

func (a *app) fail(err error) {
	a.mu.Lock()
	a.errs = append(a.errs, err)
	a.mu.Unlock()
}

// run plays the application to the end: buffers first, then one
// simulator thread per spec thread.
func (a *app) run() error {
	if err := a.allocate(); err != nil {
		return err
	}
	byThread := map[hsa.ThreadID][]spec.Dispatch{}
	for _, d := range a.s.Application.Dispatches {
		byThread[hsa.ThreadID(d.Thread)] = append(byThread[hsa.ThreadID(d.Thread)], d)
	}
	ids := make([]hsa.ThreadID, 0, len(byThread))
	for id := range byThread {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		ds := byThread[id]
		if err := a.rt.Go(id, func() { a.runThread(id, ds) }); err != nil {
			return err
		}
	}
	err := a.rt.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return errors.Join(append(a.errs, err)...)
}

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

func (a *app) runThread(id hsa.ThreadID, ds []spec.Dispatch) {
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
		for _, b := range a.s.Application.Buffers {
			if b.FreeAfter == d.Name {
				if err := a.rt.Free(a.buffers[b.Name]); err != nil {
					a.fail(fmt.Errorf("free %s: %w", b.Name, err))
				}
			}
		}
	}
}

func (a *app) waitToStart(id hsa.ThreadID, d spec.Dispatch) bool {
	switch {
	case d.After != "":
		return a.rt.WaitUntil(id, func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.completed[d.After]
		})
	case d.During != nil:
		w := *d.During
		return a.rt.WaitUntil(id, func() bool { return a.tool.inPass(w.Dispatch) == int64(w.Pass) })
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
	for _, name := range d.Args {
		b := a.buffers[name]
		pk.Args = append(pk.Args, hsa.Arg{Buffer: &b})
	}
	if k, ok := spec.LookupKernel(d.Kernel); ok && k.Scalar {
		pk.Args = append(pk.Args, hsa.Arg{Scalar: d.Scalar})
	}
	packets := []hsa.Packet{pk}
	for i := 1; i < d.Packets; i++ {
		packets = append(packets, hsa.Packet{Type: hsa.BarrierPacket})
	}
	a.tool.submitting(id, d.Name)
	// The launch API and the queue write inside it, as the harness does.
	a.sdk.EnterAPI(id)
	a.sdk.EnterAPI(id)
	err = q.Submit(id, packets...)
	a.sdk.ExitAPI(id)
	a.sdk.ExitAPI(id)
	if err != nil {
		return err
	}
	if !sig.WaitBelow(1) {
		return fmt.Errorf("the completion signal never fired")
	}
	return nil
}
