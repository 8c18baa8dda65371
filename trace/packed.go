package trace

import "unsafe"

// packed is how a recorder (and Read) keeps an event until the trace is
// handed over as one []Event: the fields that the events of a replay loop
// use, inline (248 bytes where an Event is 704), and any other event whole
// behind rest. A long run is mostly its loop's events (callbacks, their
// returns, kernels, records, memory traffic), so the chunks hold about a
// third of the bytes the same events take as Events; the rest are a few per
// dispatch (agents, the application's submissions and read-backs,
// configuration).
//
// The six fields of the closed sets (type, op, phase, call, status,
// service) are kept as a byte each, their word's place in words; a value
// outside the sets makes the event one of the rest. The six names and
// digests (kernel, label, buffer, mem_in, mem_out, digest) are kept as
// places in the chunks' own table of strings (names), each distinct string
// once: pass after pass a loop records the same kernel, label, buffer and
// digests, and the unpacked events share the one copy.
//
// Every other field is copied as it is, pointers and slices included, so
// an unpacked event is equal to the event that was pushed, field for field
// (TestPackedRoundTrip checks every field of Event).
type packed struct {
	Seq, Time, Thread, Agent, Queue, Dispatch, Context uint64
	Start, End, Signal, Bytes, Elements                uint64

	// Kernel, Label, Buffer, MemIn, MemOut, Digest as places in names.
	kernel, label, buffer, memIn, memOut, digest uint32

	Pass, Total, UserData, PayloadSize *uint64
	Result, Value                      *int64
	Corr                               *Corr
	Info                               *DispatchInfo

	Payload []string
	Regions []Region

	// The closed-set fields, as places in words (0: empty).
	typ, op, phase, call, status, service uint8

	// rest is the whole event when it sets a field packed has no room
	// for; then nothing else of p is used.
	rest *Event
}

// pack stores e in p.
func (c *eventChunks) pack(p *packed, e *Event) {
	typ, ok1 := c.word(0, string(e.Type))
	op, ok2 := c.word(1, string(e.Op))
	phase, ok3 := c.word(2, string(e.Phase))
	call, ok4 := c.word(3, string(e.Call))
	status, ok5 := c.word(4, string(e.Status))
	service, ok6 := c.word(5, string(e.Service))
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || hasUnpacked(e) {
		c := *e
		*p = packed{rest: &c}
		return
	}
	// Field by field, not as one composite value: that was built aside and
	// moved in whole, each pointer through the collector's bulk barrier.
	// Every field is written (a pooled chunk's slot holds an old event).
	p.typ, p.op, p.phase, p.call, p.status, p.service = typ, op, phase, call, status, service
	p.Seq, p.Time, p.Thread, p.Agent, p.Queue, p.Dispatch, p.Context = e.Seq, e.Time, e.Thread, e.Agent, e.Queue, e.Dispatch, e.Context
	p.Start, p.End, p.Signal, p.Bytes, p.Elements = e.Start, e.End, e.Signal, e.Bytes, e.Elements
	p.kernel, p.label, p.buffer = c.names.place(0, e.Kernel), c.names.place(1, e.Label), c.names.place(2, e.Buffer)
	p.memIn, p.memOut, p.digest = c.names.place(3, e.MemIn), c.names.place(4, e.MemOut), c.names.place(5, e.Digest)
	p.Pass, p.Total, p.UserData, p.PayloadSize = e.Pass, e.Total, e.UserData, e.PayloadSize
	p.Result, p.Value, p.Corr, p.Info = e.Result, e.Value, e.Corr, e.Info
	p.Payload, p.Regions = e.Payload, e.Regions
	p.rest = nil
}

// unpack writes the event p holds into e, which must be the zero Event.
func (c *eventChunks) unpack(p *packed, e *Event) {
	if p.rest != nil {
		*e = *p.rest
		return
	}
	// In the order of Event's fields, so that the stores into the fresh
	// flat trace run forward through each event's memory.
	n := &c.names
	e.Seq, e.Type, e.Time, e.Thread = p.Seq, Type(words[p.typ]), p.Time, p.Thread
	e.Agent, e.Queue, e.Dispatch, e.Kernel = p.Agent, p.Queue, p.Dispatch, n.at(p.kernel)
	e.Context, e.Label, e.Buffer = p.Context, n.at(p.label), n.at(p.buffer)
	e.Op, e.Phase, e.Pass, e.Total, e.Corr, e.UserData = Op(words[p.op]), Phase(words[p.phase]), p.Pass, p.Total, p.Corr, p.UserData
	e.Call, e.Result, e.Status = Call(words[p.call]), p.Result, Status(words[p.status])
	e.Payload, e.PayloadSize, e.Info = p.Payload, p.PayloadSize, p.Info
	e.Service, e.Start, e.End = Service(words[p.service]), p.Start, p.End
	e.Signal, e.Value = p.Signal, p.Value
	e.Bytes, e.Regions = p.Bytes, p.Regions
	e.MemIn, e.MemOut, e.Digest, e.Elements = n.at(p.memIn), n.at(p.memOut), n.at(p.digest), p.Elements
}

// hasUnpacked reports whether e sets a field that packed does not hold. A
// field added to Event must be added here or to packed:
// TestPackedRoundTrip fails until it is.
func hasUnpacked(e *Event) bool {
	return e.Family != "" || e.Product != "" || e.Arch != "" ||
		e.Domain != "" || e.Operations != nil || e.OpName != "" || e.OpID != nil ||
		e.Groups != nil || e.Counters != nil ||
		e.Packets != 0 || e.KernelPackets != 0 || e.Graph || e.Grid != nil || e.Workgroup != nil ||
		e.Args != nil || e.Addr != 0 || e.MemKind != "" || e.Runs != nil ||
		e.Code != "" || e.Message != ""
}

// words are the closed sets' values (Types and Vocabulary), after the
// empty string; wordPlace maps each to its place.
var words, wordPlace = func() ([]string, map[string]uint8) {
	ws := []string{""}
	for _, t := range Types() {
		ws = append(ws, string(t))
	}
	ws = append(ws, Vocabulary()...)
	place := make(map[string]uint8, len(ws))
	kept := ws[:0]
	for _, w := range ws {
		if _, dup := place[w]; dup {
			continue
		}
		if len(kept) > 255 {
			break // no place in a byte: an event using these is kept whole
		}
		place[w] = uint8(len(kept))
		kept = append(kept, w)
	}
	return kept, place
}()

// word returns w's place in words, and whether it has one, as field (one
// of pack's six) holds it: through the chunks' cache of the words each
// field had lately, since consecutive events mostly repeat their op,
// phase, status and service and take their type from a few, and this
// spares the map (the type's lookup alone was a third of packing).
func (c *eventChunks) word(field int, w string) (uint8, bool) {
	if w == "" {
		return 0, true
	}
	l := &c.lastWords[field][wordSlot(w)]
	if l.k != 0 && l.w == w {
		return l.k, true
	}
	k, ok := wordPlace[w]
	if ok {
		l.w, l.k = w, k
	}
	return k, ok
}

// wordSlots is how many words of each field word keeps.
const wordSlots = 32

// wordSlot is the slot of the cache where word keeps w (not empty): the
// types of a replay loop's events each have their own
// (TestWordSlotsOfALoop).
func wordSlot(w string) int {
	return (3*len(w) + 5*int(w[0]) + int(w[len(w)/2])) % wordSlots
}

// strtab holds each distinct string once; place 0 is the empty string.
type strtab struct {
	strs  []string
	index map[string]uint32
	// last are, for each of the six fields, strings it put lately and
	// their places, in the slot that placeSlot picks: consecutive events
	// mostly repeat them or take them from a few (a loop's digests before
	// and after its kernel), and this spares the map.
	last [6][placeSlots]struct {
		s string
		k uint32
	}
}

// placeSlots is how many strings of each field place keeps.
const placeSlots = 8

// placeSlot is the slot of place's cache for s (not empty), by where its
// bytes lie: a loop hands the same string (one copy of a digest, of a
// name) pass after pass, and strings apart in memory mostly fall apart.
// Equal strings elsewhere only miss the cache.
func placeSlot(s string) int {
	return int((uintptr(unsafe.Pointer(unsafe.StringData(s))) >> 4) % placeSlots)
}

// at returns the string at place k.
func (t *strtab) at(k uint32) string {
	if k == 0 {
		return "" // also when t holds nothing
	}
	return t.strs[k]
}

// place returns s's place in t, adding it if it is new; field says which of
// the six fields s is (for the cache of the last one).
func (t *strtab) place(field int, s string) uint32 {
	if s == "" {
		return 0
	}
	l := &t.last[field][placeSlot(s)]
	if l.k != 0 && l.s == s {
		return l.k
	}
	k, ok := t.index[s]
	if !ok {
		if t.index == nil {
			t.strs, t.index = []string{""}, map[string]uint32{}
		}
		k = uint32(len(t.strs))
		t.strs = append(t.strs, s)
		t.index[s] = k
	}
	l.s, l.k = s, k
	return k
}
