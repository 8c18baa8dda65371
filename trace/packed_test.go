package trace

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// nonZero sets v (a field of Event) to a value other than its zero value:
// an empty but non-nil slice when empty is true, since nil and empty are
// different events to a reader of []Event.
func nonZero(t *testing.T, v reflect.Value, empty bool) {
	switch v.Kind() {
	case reflect.Uint64, reflect.Uint32:
		v.SetUint(3)
	case reflect.Int, reflect.Int64:
		v.SetInt(-3)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		n := 1
		if empty {
			n = 0
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
	default:
		t.Fatalf("no non-zero value for a %s field: teach nonZero", v.Type())
	}
}

// The recorder keeps events packed: every field of Event, set alone or all
// together, comes back out of the chunks as it went in (pointers and
// slices the same ones, not copies), across chunk boundaries. A field added
// to Event that neither packed nor hasUnpacked knows comes back zero, and
// this fails naming it.
func TestPackedRoundTrip(t *testing.T) {
	typ := reflect.TypeFor[Event]()
	var want []Event
	var all Event
	for i := range typ.NumField() {
		for _, empty := range []bool{false, true} {
			var e Event
			nonZero(t, reflect.ValueOf(&e).Elem().Field(i), empty)
			want = append(want, e)
		}
		nonZero(t, reflect.ValueOf(&all).Elem().Field(i), false)
	}
	want = append(want, all, Event{})
	for len(want) < 3*firstChunk+5 { // more than one chunk
		want = append(want, want[len(want)%typ.NumField()])
	}
	var c eventChunks
	for i := range want {
		c.push(&want[i])
	}
	got := c.flatten(true)
	if len(got) != len(want) || c.n != 0 || c.chunks != nil {
		t.Fatalf("flatten gave %d events of %d, left %d", len(got), len(want), c.n)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			w, g := reflect.ValueOf(want[i]), reflect.ValueOf(got[i])
			for f := range typ.NumField() {
				if !reflect.DeepEqual(w.Field(f).Interface(), g.Field(f).Interface()) {
					t.Errorf("event %d: field %s went in as %#v, came out as %#v: add it to packed or to hasUnpacked", i, typ.Field(f).Name, w.Field(f).Interface(), g.Field(f).Interface())
				}
			}
			continue
		}
		w, g := reflect.ValueOf(want[i]), reflect.ValueOf(got[i])
		for f := range typ.NumField() {
			if k := w.Field(f).Kind(); (k == reflect.Pointer || k == reflect.Slice) && w.Field(f).Pointer() != g.Field(f).Pointer() {
				t.Errorf("event %d: field %s came out as a copy, not the value that went in", i, typ.Field(f).Name)
			}
		}
	}
}

// The events of a replay loop are kept packed, not whole: every word of
// the closed sets, in each of the six fields that hold one, fits in a
// packed event and comes back as it went in; a value outside the sets
// (a port's typo) is kept whole and comes back too.
func TestPackedWords(t *testing.T) {
	if len(words) < 2 || len(words) > 256 {
		t.Fatalf("%d closed-set words", len(words))
	}
	set := []func(e *Event, w string){
		func(e *Event, w string) { e.Type = Type(w) },
		func(e *Event, w string) { e.Op = Op(w) },
		func(e *Event, w string) { e.Phase = Phase(w) },
		func(e *Event, w string) { e.Call = Call(w) },
		func(e *Event, w string) { e.Status = Status(w) },
		func(e *Event, w string) { e.Service = Service(w) },
	}
	loop := Event{Seq: 9, Type: Callback, Op: OpPass, Phase: PhaseEnter, Pass: U64(2), Payload: []string{"size"}, Info: &DispatchInfo{Size: 72}}
	for _, w := range append(slices.Clone(words), "not a word") {
		for f, setf := range set {
			e := loop
			setf(&e, w)
			var c eventChunks
			var p packed
			c.pack(&p, &e)
			if (p.rest == nil) != (w != "not a word") {
				t.Errorf("field %d = %q: kept whole %v", f, w, p.rest != nil)
			}
			var got Event
			c.unpack(&p, &got)
			if !reflect.DeepEqual(got, e) {
				t.Errorf("field %d = %q: went in as %+v, came out as %+v", f, w, e, got)
			}
		}
	}
}

// Names and digests are kept once each and come back in their events,
// whether they repeat the event before, an older one, or are new.
func TestPackedNames(t *testing.T) {
	names := []string{"d0", "d1", "d0", "", "d2", "d2", "d1", ""}
	var want []Event
	for i := range 50 {
		a, b := names[i%len(names)], names[(i/3)%len(names)]
		want = append(want, Event{Seq: uint64(i + 1), Type: ToolMemory, Kernel: b, Label: a, Buffer: b, MemIn: a, MemOut: b, Digest: a})
	}
	var c eventChunks
	for i := range want {
		c.push(&want[i])
	}
	if got := len(c.names.strs); got != 4 { // "", d0, d1, d2
		t.Errorf("%d strings kept, want 4 (each once)", got)
	}
	if got := c.flatten(true); !reflect.DeepEqual(got, want) {
		t.Errorf("went in as %+v\ncame out as %+v", want, got)
	}
}

// What packing is for: a packed event takes at most half the bytes of an
// Event (docs/benchmarks.md, Memory), so that a long run's chunks and the
// flat trace made from them fit together in a little over one trace.
func TestPackedIsSmall(t *testing.T) {
	if p, e := unsafe.Sizeof(packed{}), unsafe.Sizeof(Event{}); 2*p > e {
		t.Errorf("a packed event takes %d bytes, an Event %d: more than half", p, e)
	}
}

// TestBufferTakeAfter: a Buffer gives back what was pushed, after the
// prefix, and is empty afterwards.
func TestBufferTakeAfter(t *testing.T) {
	var b Buffer
	prefix := []Event{{Seq: 1, Type: API}}
	var want []Event
	want = append(want, prefix...)
	for i := range 3000 { // more than one chunk
		e := Event{Seq: uint64(i + 2), Type: Kernel, Label: fmt.Sprintf("d%d", i%7), Dispatch: uint64(i)}
		b.Push(&e)
		want = append(want, e)
	}
	if b.Len() != 3000 {
		t.Fatalf("Len %d, want 3000", b.Len())
	}
	got := b.TakeAfter(prefix)
	if d := quickDiff(want, got); d != "" {
		t.Errorf("taken (-pushed +taken):\n%s", d)
	}
	if b.Len() != 0 || len(b.TakeAfter(nil)) != 0 {
		t.Error("the buffer still holds events once taken")
	}
	// A prefix with room takes the events in its own array (a stream's
	// segment slice is reused from run to run).
	roomy := make([]Event, 1, 1+3000)
	roomy[0] = prefix[0]
	for i := range 3000 {
		b.Push(&want[i+1])
	}
	if got := b.TakeAfter(roomy); &got[0] != &roomy[0] || quickDiff(want, got) != "" {
		t.Errorf("taken after a roomy prefix: same array %v, diff:\n%s", &got[0] == &roomy[0], cmp.Diff(want, got))
	}
	// Taken again and again, as a stream's segments are: each take is
	// what was pushed since the last, and what was taken before stays as
	// it was (the chunk the buffer keeps is not the taken events').
	var takes [][]Event
	for round := range 3 {
		for i := range 5 + round*40 {
			b.Push(&Event{Seq: uint64(100*round + i), Type: Kernel, Label: fmt.Sprintf("r%d", round), Pass: U64(uint64(i))})
		}
		takes = append(takes, b.TakeAfter(nil))
	}
	for round, got := range takes {
		if len(got) != 5+round*40 {
			t.Fatalf("take %d: %d events, want %d", round, len(got), 5+round*40)
		}
		for i, e := range got {
			if e.Seq != uint64(100*round+i) || e.Label != fmt.Sprintf("r%d", round) || e.Pass == nil || *e.Pass != uint64(i) {
				t.Fatalf("take %d, event %d: %+v", round, i, e)
			}
		}
	}
	// Takes of several chunks from two buffers at once: the chunks one
	// gives up (chunkPool) fill the other's, and every take stays as it was.
	var two [2]Buffer
	var long [][]Event
	for round := range 4 {
		for k := range two {
			for i := range 3*chunkEvents + round {
				two[k].Push(&Event{Seq: uint64(i), Dispatch: uint64(10*round + k), Type: Kernel, Label: fmt.Sprintf("b%d", k)})
			}
			long = append(long, two[k].TakeAfter(nil))
		}
	}
	for j, got := range long {
		round, k := j/2, j%2
		if len(got) != 3*chunkEvents+round {
			t.Fatalf("buffer %d, take %d: %d events", k, round, len(got))
		}
		for i, e := range got {
			if e.Seq != uint64(i) || e.Dispatch != uint64(10*round+k) || e.Label != fmt.Sprintf("b%d", k) {
				t.Fatalf("buffer %d, take %d, event %d: %+v", k, round, i, e)
			}
		}
	}
}

// The types a replay loop records pass after pass each have their own slot
// in word's cache, so that packing them never looks in the map; a slot
// for every word is checked by TestPackedWords.
func TestWordSlotsOfALoop(t *testing.T) {
	loop := []Type{Callback, Returned, MemRead, MemWrite, Restore, Kernel, Record, ToolMemory, ToolSignal, Continue, PassCount}
	seen := map[int]Type{}
	for _, typ := range loop {
		k := wordSlot(string(typ))
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share slot %d of word's cache", other, typ, k)
		}
		seen[k] = typ
	}
	// Through one cache, every word in every field, again and again
	// (words that share a slot take it in turn), comes back as itself.
	var c eventChunks
	for round := range 3 {
		for f := range 6 {
			for i, w := range words {
				if round == 1 {
					w = words[len(words)-1-i]
				}
				if k, ok := c.word(f, w); !ok || words[k] != w {
					t.Errorf("field %d: word(%q) = %d (%q), %v", f, w, k, words[k], ok)
				}
			}
		}
	}
	if _, ok := c.word(0, "not a word"); ok {
		t.Errorf("a word outside the closed sets has a place")
	}
}

// pack writes every field of its slot: a slot that held another event (a
// pooled chunk's) keeps nothing of it. Each event of the set, packed over
// each other, comes back as itself.
func TestPackOverwritesItsSlot(t *testing.T) {
	typ := reflect.TypeFor[Event]()
	var all Event // every field packed holds inline set
	for i := range typ.NumField() {
		var probe Event
		nonZero(t, reflect.ValueOf(&probe).Elem().Field(i), false)
		if hasUnpacked(&probe) {
			continue
		}
		nonZero(t, reflect.ValueOf(&all).Elem().Field(i), false)
	}
	all.Type, all.Op, all.Phase, all.Call, all.Status, all.Service = Callback, OpPass, PhaseEnter, LocalStart, StatusSuccess, KernelTrace
	whole := all
	whole.Message = "kept whole"
	events := []Event{all, {Seq: 1}, whole, {Seq: 2, Type: Kernel}, all, {}}
	var c eventChunks
	for _, old := range events {
		for _, e := range events {
			var p packed
			c.pack(&p, &old)
			c.pack(&p, &e)
			var got Event
			c.unpack(&p, &got)
			if !reflect.DeepEqual(got, e) {
				t.Errorf("packed over %+v:\ngot  %+v\nwant %+v", old, got, e)
			}
		}
	}
}

// place's cache (by where a string's bytes lie) never mistakes one string
// for another: through one table, copies of the same names made apart and
// other names that fall into their slots each come back as themselves,
// every copy of a name at one place.
func TestPlaceCache(t *testing.T) {
	var tab strtab
	var names []string
	for i := range 300 {
		names = append(names, strings.Clone(fmt.Sprintf("%016x", i%23))) // 13 copies of each, apart
	}
	placeOf := map[string]uint32{}
	for round := range 3 {
		for i := range names {
			s := names[(i*7+round)%len(names)]
			f := i % 6
			k := tab.place(f, s)
			if got := tab.at(k); got != s {
				t.Fatalf("place(%d, %q) = %d, which holds %q", f, s, k, got)
			}
			if was, ok := placeOf[s]; ok && was != k {
				t.Fatalf("%q at %d and at %d", s, was, k)
			}
			placeOf[s] = k
		}
	}
	if len(tab.strs) != 24 { // "" and 23 names, each once
		t.Errorf("%d strings kept, want 24", len(tab.strs))
	}
}
