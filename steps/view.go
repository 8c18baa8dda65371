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
	open := false
	for _, e := range evs {
		switch {
		case e.Type == trace.AppDispatch && e.Label == label:
			open, v.thread = true, e.Thread
		case e.Type == trace.AppDispatch && e.Thread == v.thread:
			open = false
		case open && e.Type == trace.DispatchID && e.Thread == v.thread && v.id == 0:
			v.id = e.Dispatch
		}
	}
	if v.thread == 0 {
		return nil, w.failf("the application never dispatched %q", label)
	}
	for _, e := range evs {
		if v.id != 0 && e.Dispatch == v.id {
			v.ev = append(v.ev, e)
		}
		if strings.HasPrefix(string(e.Type), "app_") && e.Label == label {
			v.app = append(v.app, e)
		}
	}
	return v, nil
}

func (v *dispatchView) of(t trace.Type) []trace.Event {
	var out []trace.Event
	for _, e := range v.ev {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func (v *dispatchView) callbacks(op, phase string) []trace.Event {
	var out []trace.Event
	for _, e := range v.of(trace.Callback) {
		if (op == "" || e.Op == op) && (phase == "" || e.Phase == phase) {
			out = append(out, e)
		}
	}
	return out
}

func (v *dispatchView) appOf(t trace.Type) []trace.Event {
	var out []trace.Event
	for _, e := range v.app {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func (v *dispatchView) records(service string) []trace.Event {
	var out []trace.Event
	for _, e := range v.of(trace.Record) {
		if service == "" || e.Service == service {
			out = append(out, e)
		}
	}
	return out
}

// passes lists the current_pass of the PASS callbacks of a phase.
func passes(evs []trace.Event) []uint64 {
	var out []uint64
	for _, e := range evs {
		p, _ := e.PassOf()
		out = append(out, p)
	}
	return out
}

// seqs renders events for a failure message.
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

func list(ns []uint64) string {
	if len(ns) == 0 {
		return "none"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func seqOf(e trace.Event) uint64 { return e.Seq }

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

func equalPasses(got, want []uint64) bool {
	return slices.Equal(got, want) || (len(got) == 0 && len(want) == 0)
}

// byType filters the whole trace.
func byType(evs []trace.Event, t trace.Type) []trace.Event {
	var out []trace.Event
	for _, e := range evs {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}
