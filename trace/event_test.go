package trace

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Small optional numbers share a pointer and cost no allocation; others
// are their own.
func TestSmallNumbersShare(t *testing.T) {
	if U64(3) != U64(3) || *U64(3) != 3 || I64(-1) != I64(-1) || *I64(-1) != -1 || *I64(1021) != 1021 {
		t.Errorf("small values: %d %d", *U64(3), *I64(-1))
	}
	if U64(1<<40) == U64(1<<40) || *U64(1 << 40) != 1<<40 || *I64(-2) != -2 || *I64(5000) != 5000 {
		t.Errorf("large values")
	}
	if n := testing.AllocsPerRun(100, func() { U64(7); I64(7) }); n != 0 {
		t.Errorf("U64/I64 of small values allocate %v times", n)
	}
}

// A recorder numbers what it is given, keeps it in order across its chunks,
// and Take hands it over once.
func TestRecorderKeepsOrderAcrossChunks(t *testing.T) {
	r := NewRecorder(func() uint64 { return 7 })
	var sunk int
	r.SetSink(func(*Event) { sunk++ }, true)
	const n = 5000
	for i := range n {
		r.Emit(Event{Type: Kernel, Start: uint64(i)})
	}
	if got := r.Events(); len(got) != n || got[n-1].Seq != n || got[n-1].Start != n-1 || got[0].Time != 7 {
		t.Fatalf("Events: %d events, last %+v", len(got), got[len(got)-1])
	}
	got := r.Take()
	for i, e := range got {
		if e.Seq != uint64(i+1) || e.Start != uint64(i) {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	if len(got) != n || sunk != n || len(r.Take()) != 0 || r.Len() != n {
		t.Errorf("took %d, sink saw %d, left %d, Len %d", len(got), sunk, len(r.Take()), r.Len())
	}
}

// A recorder's events come back equal and in order, from Events (a copy:
// taking it leaves the recorder as it was) and from Take, for a run that
// fills part of a chunk, several, and events kept whole beside packed
// ones; and a taken trace is the caller's, left as it was while later
// recorders reuse the chunks it was unpacked from (chunkPool).
func TestRecorderTakesWhatItKept(t *testing.T) {
	event := func(i int) Event {
		e := Event{Type: Callback, Op: OpPass, Phase: PhaseEnter, Pass: U64(uint64(i)), Label: fmt.Sprint("d", i%7), Start: uint64(i)}
		if i%5 == 0 {
			e.Message = "kept whole when packed" // a field packed has no room for
		}
		return e
	}
	check := func(what string, got []Event, n int) {
		t.Helper()
		if len(got) != n {
			t.Fatalf("%s: %d events of %d", what, len(got), n)
		}
		for i := range got {
			want := event(i)
			want.Seq, want.Time = uint64(i+1), 7
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("%s: event %d of %d came back as %+v, want %+v", what, i, n, got[i], want)
			}
		}
	}
	sizes := []int{0, 1, firstChunk, chunkEvents + 3, 5*chunkEvents + 5, 3 * chunkEvents, 2 * chunkEvents}
	if testing.Short() { // still more than one full chunk, pooled and taken again; all in make test-heavy
		sizes = []int{0, 1, firstChunk, chunkEvents + 3, 3 * chunkEvents, 2 * chunkEvents}
	}
	record := func() []*Recorder {
		var rs []*Recorder
		for _, n := range sizes {
			r := NewRecorder(func() uint64 { return 7 })
			for i := range n {
				r.Emit(event(i))
			}
			rs = append(rs, r)
		}
		return rs
	}
	rs := record()
	for k, r := range rs {
		check(fmt.Sprint("Events of ", sizes[k]), r.Events(), sizes[k])
	}
	record() // more recorders, while rs still hold theirs
	var kept [][]Event
	for k, r := range rs {
		got := r.Take()
		check(fmt.Sprint("Take of ", sizes[k]), got, sizes[k])
		if len(r.Take()) != 0 || len(r.Events()) != 0 {
			t.Errorf("%d events: the recorder kept some after Take", sizes[k])
		}
		kept = append(kept, got)
	}
	for _, r := range record() {
		r.Take()
	}
	for _, got := range kept {
		check("a trace taken earlier", got, len(got))
	}
}

// A trace that goes wrong on line n reads as the events before it, with
// the line named; a long trace reads back whole and in order.
func TestReadKeepsWhatCameBeforeABadLine(t *testing.T) {
	head := `{"trace":"` + Version + `","digest":"xxh3-64","sources":["tool","runtime"]}` + "\n"
	var b strings.Builder
	b.WriteString(head)
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, `{"seq":%d,"type":"kernel","start":%d}`+"\n", i, i)
	}
	tr, err := Read(strings.NewReader(b.String()))
	if err != nil || len(tr.Events) != 3000 || tr.Events[2999].Start != 3000 || tr.Events[0].Seq != 1 {
		t.Fatalf("err %v, %d events", err, len(tr.Events))
	}
	for _, bad := range []string{`{"seq":3,"type":"kernel","bogus":1}`, `{"seq":3,"type":"nope"}`, `{"seq":3}`} {
		tr, err := Read(strings.NewReader(head + `{"seq":1,"type":"kernel"}` + "\n" + `{"seq":2,"type":"api"}` + "\n" + bad + "\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 4 || len(tr.Events) != 2 || tr.Events[1].Type != API {
			t.Errorf("%s: err %v, events %+v", bad, err, tr.Events)
		}
	}
}
