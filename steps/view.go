package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/trace"
)

// dispatchView is what the trace shows of one application dispatch: the
// application's own events (by label) and the tool, SDK and runtime events
// of the dispatch id the SDK reserved for it (docs/trace.md, "Joining
// events to a dispatch").
type dispatchView struct {
	label  string
	id     uint64
	thread uint64
	ev     []trace.Event // every event carrying the dispatch id, in order
	app    []trace.Event // app_* events of the label
	all    []trace.Event // the whole trace
	// written is the tool_dispatch of a dispatch the tool wrote (by_tool)
	// from a callback; nil for the application's own.
	written *trace.Event
}

// dispatchOf is where a Then step about one dispatch begins: the scenario,
// and the dispatch it calls label ("" is the first one) as the trace of its
// run shows it.
func dispatchOf(ctx context.Context, label string) (*world, *dispatchView, error) {
	w := get(ctx)
	v, err := w.view(ctx, label)
	return w, v, err
}

// twoDispatchesOf is where a Then step comparing two dispatches begins.
func twoDispatchesOf(ctx context.Context, a, b string) (*world, *dispatchView, *dispatchView, error) {
	w, va, err := dispatchOf(ctx, a)
	if err != nil {
		return nil, nil, nil, err
	}
	vb, err := w.view(ctx, b)
	return w, va, vb, err
}

// passCallbacksOf is where a Then step about every pass of the first
// dispatch begins: its PASS callbacks; it fails when no pass ran.
func passCallbacksOf(ctx context.Context) (*world, []trace.Event, error) {
	w, v, err := dispatchOf(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	ps := v.callbacks(trace.OpPass, anyPhase)
	if len(ps) == 0 {
		return nil, nil, w.failf("no pass ran")
	}
	return w, ps, nil
}

// passesOf is where a Then step about some passes of a dispatch begins: the
// dispatch, and the passes the step lists ("0, 1 and 2").
func passesOf(ctx context.Context, label, which string) (*world, *dispatchView, []uint64, error) {
	want, err := numbers(which)
	if err != nil {
		return nil, nil, nil, err
	}
	w, v, err := dispatchOf(ctx, label)
	return w, v, want, err
}

// traceOf is where a Then step about the whole run begins: the scenario and
// the events of its run.
func traceOf(ctx context.Context) (*world, []trace.Event, error) {
	w := get(ctx)
	evs, err := w.events(ctx)
	return w, evs, err
}

// view finds the dispatch the scenario calls label ("" is the first one).
func (w *world) view(ctx context.Context, label string) (*dispatchView, error) {
	evs, err := w.events(ctx)
	if err != nil {
		return nil, err
	}
	if label == "" {
		if len(w.s.Application.Dispatches) == 0 {
			return nil, fmt.Errorf("the scenario has no dispatch")
		}
		label = w.s.Application.Dispatches[0].Name
	}
	v := &dispatchView{label: label, all: evs}
	for _, a := range check.Join(trace.Trace{Events: evs}) {
		if a.Label == label {
			v.thread, v.id = a.Thread, a.Dispatch
			break
		}
	}
	if v.thread == 0 {
		v.toolWritten(evs)
	}
	if v.thread == 0 {
		return nil, w.failf("the application never dispatched %q", label)
	}
	v.ev = where(evs, func(e trace.Event) bool { return v.id != 0 && e.Dispatch == v.id })
	v.app = where(evs, func(e trace.Event) bool { return strings.HasPrefix(string(e.Type), "app_") && e.Label == label })
	return v, nil
}

// toolWritten finds a dispatch the tool wrote from a callback: its
// tool_dispatch, and the first dispatch id reserved on that thread after
// it (docs/trace.md, "Joining events to a dispatch").
func (v *dispatchView) toolWritten(evs []trace.Event) {
	for i, e := range evs {
		if e.Type != trace.ToolDispatch || e.Label != v.label {
			continue
		}
		v.written, v.thread = &evs[i], e.Thread
		for _, f := range evs[i+1:] {
			if f.Thread == e.Thread && f.Type == trace.DispatchID {
				v.id = f.Dispatch
				return
			}
		}
		return
	}
}

// --- finding events: where is the one filter the others are made of ------

// where keeps the events keep accepts, in order (trace events, or
// rocprofv3's).
func where[E any](evs []E, keep func(E) bool) []E {
	var out []E
	for _, e := range evs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// byType keeps the events of the given types, in trace order.
func byType(evs []trace.Event, types ...trace.Type) []trace.Event {
	return where(evs, func(e trace.Event) bool { return slices.Contains(types, e.Type) })
}

// of keeps the dispatch's events of the given types.
func (v *dispatchView) of(types ...trace.Type) []trace.Event { return byType(v.ev, types...) }

// appOf keeps the application's events of the dispatch of the given types.
func (v *dispatchView) appOf(types ...trace.Type) []trace.Event { return byType(v.app, types...) }

// anyPhase asks callbacks for both phases of an operation.
const anyPhase trace.Phase = ""

// callbacks keeps the dispatch's replay callbacks of an operation and phase.
func (v *dispatchView) callbacks(op trace.Op, phase trace.Phase) []trace.Event {
	return where(v.ev, func(e trace.Event) bool {
		return e.Type == trace.Callback && e.Op == op && (phase == anyPhase || e.Phase == phase)
	})
}

// records keeps the dispatch's service records of one service ("" is all).
func (v *dispatchView) records(service trace.Service) []trace.Event {
	return where(v.ev, func(e trace.Event) bool {
		return e.Type == trace.Record && (service == "" || e.Service == service)
	})
}

// savesAndRestores keeps the snapshots that saved memory and the restores of the
// dispatch.
func (v *dispatchView) savesAndRestores() []trace.Event {
	return where(v.ev, func(e trace.Event) bool {
		return e.Type == trace.Restore || e.Type == trace.Snapshot && savedMemory(e)
	})
}

// savedMemory: a snapshot that succeeded; a failed attempt (MEM-5) saves
// nothing.
func savedMemory(e trace.Event) bool { return e.Status == "" || e.Status.Is(trace.StatusSuccess) }

// window: the events on the dispatch's thread from its app_dispatch to the
// thread's next one.
func (v *dispatchView) window() []trace.Event {
	var out []trace.Event
	open := false
	for _, e := range v.all {
		if e.Thread != v.thread {
			continue
		}
		if v.written != nil {
			// The tool's own: from its tool_dispatch to its tool_complete.
			switch {
			case e.Seq == v.written.Seq:
				open = true
			case open && e.Type == trace.ToolComplete && e.Label == v.label:
				return out
			case open:
				out = append(out, e)
			}
			continue
		}
		if e.Type == trace.AppDispatch {
			open = e.Label == v.label
			continue
		}
		if open {
			out = append(out, e)
		}
	}
	return out
}

// completionSignals: the decrements of the dispatch's completion signal.
func (v *dispatchView) completionSignals() []trace.Event {
	sig := v.appOf(trace.AppDispatch)[0].Signal
	return where(v.all, func(e trace.Event) bool { return e.Type == trace.Signal && e.Signal == sig })
}

// apiCalls keeps the API calls of one name.
func apiCalls(evs []trace.Event, call trace.Call) []trace.Event {
	return where(evs, func(e trace.Event) bool { return e.Type == trace.API && e.Call == call })
}

func first(evs []trace.Event) (trace.Event, bool) {
	if len(evs) == 0 {
		return trace.Event{}, false
	}
	return evs[0], true
}

func last(evs []trace.Event) (trace.Event, bool) {
	if len(evs) == 0 {
		return trace.Event{}, false
	}
	return evs[len(evs)-1], true
}

// --- judging events --------------------------------------------------------

// expectNone fails, quoting them, when there are events where none should be.
func (w *world) expectNone(evs []trace.Event, format string, args ...any) error {
	if len(evs) > 0 {
		return w.failf(format+":\n%s", append(args, show(evs...))...)
	}
	return nil
}

// expectEvery fails, quoting it, on the first event that is not ok.
func (w *world) expectEvery(evs []trace.Event, ok func(trace.Event) bool, format string, args ...any) error {
	for _, e := range evs {
		if !ok(e) {
			return w.failf(format+":\n%s", append(args, show(e))...)
		}
	}
	return nil
}

// replayedKernels are the kernel runs of a dispatch that should run several
// passes: it fails when the kernel ran less than twice.
func (w *world) replayedKernels(v *dispatchView) ([]trace.Event, error) {
	ks := v.of(trace.Kernel)
	if len(ks) < 2 {
		return nil, w.failf("the dispatch should run several passes:\n%s", show(ks...))
	}
	return ks, nil
}

// passes lists the current_pass of events (0 where one carries none).
func passes(evs []trace.Event) []uint64 {
	var out []uint64
	for _, e := range evs {
		p, _ := e.PassOf()
		out = append(out, p)
	}
	return out
}

func equalPasses(got, want []uint64) bool {
	return slices.Equal(got, want) || (len(got) == 0 && len(want) == 0)
}

// show renders events for a failure message.
func show(evs ...trace.Event) string {
	if len(evs) == 0 {
		return "  (no events)"
	}
	var b strings.Builder
	for i, e := range evs {
		if i == 12 {
			fmt.Fprintf(&b, "  ... %d more", len(evs)-12)
			break
		}
		b.WriteString("  " + check.FormatEvent(e) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
