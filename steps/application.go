package steps

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cucumber/godog"

	"github.com/replayspec/replayspec/spec"
)

// The steps of the application: its buffers, and the dispatches it makes
// and on which thread; each adds to the spec of the scenario.

func registerApplication(sc *godog.ScenarioContext) {
	step(sc, `^the application has a (?:(device|fine-grained|host|kernel-argument) )?buffer `+name+` of (\d+) elements filled with (-?\d+)(?: on the `+kind+` agent)?$`, buffer)
	step(sc, `^the application (?:then )?dispatches `+dispatchTail+`$`, dispatches)
	step(sc, `^(?:meanwhile, )?(?:application )?thread (\d+) dispatches `+dispatchTail+` while "([\w-]+)" is in pass (\d+)$`, dispatchesDuring)
	step(sc, `^(?:application )?thread (\d+) dispatches `+dispatchTail+`$`, dispatchesOnThread)
	step(sc, `^the application submits "([a-z_]+)" on "([\w-]+)" together with a barrier packet in one write(?: as "([\w-]+)")?$`, submitsWithBarrier)
	step(sc, `^the application launches "([a-z_]+)" on "([\w-]+)" as part of a graph(?: as "([\w-]+)")?$`, graphLaunch)
	step(sc, `^the application frees `+name+` once `+name+` has completed$`, freeAfter)
}

// bufferKinds are the buffer kinds as scenarios name them, and as specs do.
var bufferKinds = map[string]string{"": "", "device": "", "fine-grained": "fine", "host": "host", "kernel-argument": "kernarg"}

// buffer adds an application buffer.
func buffer(ctx context.Context, kind, name string, elements uint64, fill int64, agentKind string) error {
	w := get(ctx)
	agent, err := w.agent(agentKind)
	if err != nil {
		return err
	}
	k, ok := bufferKinds[kind]
	if !ok {
		return fmt.Errorf("unknown buffer kind %q", kind)
	}
	w.s.Application.Buffers = append(w.s.Application.Buffers, spec.Buffer{Name: name, Agent: agent, Elements: elements, Fill: fill, Kind: k})
	return nil
}

func freeAfter(ctx context.Context, buf, dispatch string) error {
	w := get(ctx)
	for i := range w.s.Application.Buffers {
		if w.s.Application.Buffers[i].Name == buf {
			w.s.Application.Buffers[i].FreeAfter = dispatch
			return nil
		}
	}
	return fmt.Errorf("no buffer %q", buf)
}

// ensureBuffer makes a buffer the scenario did not declare: 256 elements
// of 1 on the dispatch's agent.
func (w *world) ensureBuffer(name, agent string) {
	for _, b := range w.s.Application.Buffers {
		if b.Name == name {
			return
		}
	}
	w.s.Application.Buffers = append(w.s.Application.Buffers, spec.Buffer{Name: name, Agent: agent, Elements: 256, Fill: 1})
}

func (w *world) dispatch(name string) (*spec.Dispatch, error) {
	for i := range w.s.Application.Dispatches {
		if w.s.Application.Dispatches[i].Name == name {
			return &w.s.Application.Dispatches[i], nil
		}
	}
	return nil, fmt.Errorf("the application has no dispatch %q (yet)", name)
}

// dispatchOpts are the parts of a dispatch sentence.
type dispatchOpts struct {
	kernel, scalar, bufs, agentKind, name string
	thread                                uint64
	during                                *spec.During
	packets                               int
	graph                                 bool
}

// sentence is the common part of a dispatch sentence (dispatchTail).
func sentence(kernel, scalar, bufs, agentKind, name string) dispatchOpts {
	return dispatchOpts{kernel: kernel, scalar: scalar, bufs: bufs, agentKind: agentKind, name: name}
}

func (w *world) addDispatch(o dispatchOpts) error {
	agent, err := w.agent(o.agentKind)
	if err != nil {
		return err
	}
	k, ok := spec.LookupKernel(o.kernel)
	if !ok {
		return fmt.Errorf("unknown kernel %q", o.kernel)
	}
	d := spec.Dispatch{Kernel: o.kernel, Agent: agent, Args: words(o.bufs), Thread: o.thread, During: o.during,
		Packets: o.packets, Graph: o.graph}
	if len(d.Args) != k.Buffers {
		return fmt.Errorf("kernel %s takes %d buffers, the step names %d", o.kernel, k.Buffers, len(d.Args))
	}
	for _, b := range d.Args {
		w.ensureBuffer(b, agent)
	}
	if o.scalar != "" {
		v, err := strconv.ParseInt(o.scalar, 10, 32)
		if err != nil {
			return err
		}
		d.Scalar = int32(v)
	}
	d.Name = o.name
	if d.Name == "" {
		d.Name = o.kernel
		for n := 2; ; n++ {
			if _, err := w.dispatch(d.Name); err != nil {
				break
			}
			d.Name = fmt.Sprintf("%s-%d", o.kernel, n)
		}
	}
	if d.Thread == 1 {
		d.Thread = 0
	}
	w.s.Application.Dispatches = append(w.s.Application.Dispatches, d)
	return nil
}

func dispatches(ctx context.Context, kernel, scalar, bufs, agentKind, name string) error {
	return get(ctx).addDispatch(sentence(kernel, scalar, bufs, agentKind, name))
}

func dispatchesOnThread(ctx context.Context, thread uint64, kernel, scalar, bufs, agentKind, name string) error {
	o := sentence(kernel, scalar, bufs, agentKind, name)
	o.thread = thread
	return get(ctx).addDispatch(o)
}

func dispatchesDuring(ctx context.Context, thread uint64, kernel, scalar, bufs, agentKind, name, other string, pass uint64) error {
	o := sentence(kernel, scalar, bufs, agentKind, name)
	o.thread, o.during = thread, &spec.During{Dispatch: other, Pass: pass}
	return get(ctx).addDispatch(o)
}

func submitsWithBarrier(ctx context.Context, kernel, bufs, name string) error {
	o := sentence(kernel, "", bufs, "", name)
	o.packets = 2
	return get(ctx).addDispatch(o)
}

func graphLaunch(ctx context.Context, kernel, bufs, name string) error {
	o := sentence(kernel, "", bufs, "", name)
	o.graph = true
	return get(ctx).addDispatch(o)
}
