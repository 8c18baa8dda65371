package trace

import (
	"reflect"
	"testing"
)

// EmitRef hands the sink the caller's own event, numbered and stamped in
// place, and keeps a copy; an event built on the caller's stack stays
// there (no allocation an event: the sink is a function value, which
// escape analysis would take to keep it, lent says why it may not).
func TestEmitRefHandsOverInPlace(t *testing.T) {
	for _, keep := range []bool{false, true} {
		r := NewRecorder(func() uint64 { return 9 })
		var seen []Event
		var at *Event
		r.SetSink(func(e *Event) { seen, at = append(seen, *e), e }, keep)
		e := Event{Type: Kernel, Kernel: "k", Start: 3}
		r.EmitRef(&e)
		r.Emit(Event{Type: Signal, Time: 4})
		want := []Event{{Seq: 1, Time: 9, Type: Kernel, Kernel: "k", Start: 3}, {Seq: 2, Time: 4, Type: Signal}}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("keep %v: the sink saw %+v, want %+v", keep, seen, want)
		}
		if e.Seq != 1 || e.Time != 9 {
			t.Errorf("keep %v: EmitRef left the caller's event at seq %d time %d, want it numbered and stamped in place", keep, e.Seq, e.Time)
		}
		if got := r.Take(); keep != (len(got) == 2) || keep && !reflect.DeepEqual(got, want) {
			t.Errorf("keep %v: took %+v", keep, got)
		}
		r.EmitRef(&e)
		if at != &e {
			t.Errorf("keep %v: the sink was handed a copy, not the caller's event", keep)
		}
	}
	r := NewRecorder(func() uint64 { return 9 })
	n := 0
	r.SetSink(func(e *Event) { n += int(e.Start) }, false)
	if allocs := testing.AllocsPerRun(200, func() {
		r.EmitRef(&Event{Type: Kernel, Kernel: "k", Start: 1, Label: "d0"})
		r.Emit(Event{Type: Kernel, Start: 1})
	}); allocs != 0 {
		t.Errorf("an event handed to a sink allocates %v times: the caller's event went to the heap", allocs)
	}
}
