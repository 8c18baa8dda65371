package trace

// packed is how a recorder (and Read) keeps an event until the trace is
// handed over as one []Event: the fields that the events of a replay loop
// use, inline (320 bytes where an Event is 704), and any other event
// whole behind rest. The six fields of the closed sets (type, op, phase,
// call, status, service) are kept as a byte each, their word's place in
// words; a value outside the sets makes the event one of the rest. A long run is mostly its loop's events (callbacks,
// their returns, kernels, records, memory traffic), so the chunks hold
// about 45% of the bytes the same events take as Events; the rest are a
// few per dispatch (agents, the application's submissions and read-backs,
// configuration).
//
// Packing copies field values, pointers and slices included, so an
// unpacked event is the event that was pushed, shared pointers and all
// (TestPackedRoundTrip checks every field of Event).
type packed struct {
	Seq, Time, Thread, Agent, Queue, Dispatch, Context uint64
	Start, End, Signal, Bytes, Elements                uint64

	Kernel, Label, Buffer, MemIn, MemOut, Digest string

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
func (p *packed) pack(e *Event) {
	typ, ok1 := wordOf(string(e.Type))
	op, ok2 := wordOf(string(e.Op))
	phase, ok3 := wordOf(string(e.Phase))
	call, ok4 := wordOf(string(e.Call))
	status, ok5 := wordOf(string(e.Status))
	service, ok6 := wordOf(string(e.Service))
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || hasUnpacked(e) {
		c := *e
		*p = packed{rest: &c}
		return
	}
	*p = packed{
		typ: typ, op: op, phase: phase, call: call, status: status, service: service,
		Seq: e.Seq, Time: e.Time, Thread: e.Thread, Agent: e.Agent, Queue: e.Queue, Dispatch: e.Dispatch, Context: e.Context,
		Start: e.Start, End: e.End, Signal: e.Signal, Bytes: e.Bytes, Elements: e.Elements,
		Kernel: e.Kernel, Label: e.Label, Buffer: e.Buffer, MemIn: e.MemIn, MemOut: e.MemOut, Digest: e.Digest,
		Pass: e.Pass, Total: e.Total, UserData: e.UserData, PayloadSize: e.PayloadSize,
		Result: e.Result, Value: e.Value, Corr: e.Corr, Info: e.Info,
		Payload: e.Payload, Regions: e.Regions,
	}
}

// unpack writes the event p holds into e, which must be the zero Event.
func (p *packed) unpack(e *Event) {
	if p.rest != nil {
		*e = *p.rest
		return
	}
	e.Seq, e.Time, e.Thread, e.Agent, e.Queue, e.Dispatch, e.Context = p.Seq, p.Time, p.Thread, p.Agent, p.Queue, p.Dispatch, p.Context
	e.Start, e.End, e.Signal, e.Bytes, e.Elements = p.Start, p.End, p.Signal, p.Bytes, p.Elements
	e.Kernel, e.Label, e.Buffer, e.MemIn, e.MemOut, e.Digest = p.Kernel, p.Label, p.Buffer, p.MemIn, p.MemOut, p.Digest
	e.Type, e.Op, e.Phase = Type(words[p.typ]), Op(words[p.op]), Phase(words[p.phase])
	e.Call, e.Status, e.Service = Call(words[p.call]), Status(words[p.status]), Service(words[p.service])
	e.Pass, e.Total, e.UserData, e.PayloadSize = p.Pass, p.Total, p.UserData, p.PayloadSize
	e.Result, e.Value, e.Corr, e.Info = p.Result, p.Value, p.Corr, p.Info
	e.Payload, e.Regions = p.Payload, p.Regions
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

// wordOf returns w's place in words, and whether it has one.
func wordOf(w string) (uint8, bool) {
	if w == "" {
		return 0, true
	}
	k, ok := wordPlace[w]
	return k, ok
}
