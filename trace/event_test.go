package trace

import (
	"errors"
	"fmt"
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
	r.SetSink(func(Event) { sunk++ }, true)
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
