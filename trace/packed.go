package trace

// packed is how a recorder (and Read) keeps an event until the trace is
// handed over as one []Event: the fields that the events of a replay loop
// use, inline (408 bytes where an Event is 704), and any other event
// whole behind rest. A long run is mostly its loop's events (callbacks,
// their returns, kernels, records, memory traffic), so the chunks hold
// about 58% of the bytes the same events take as Events; the rest are a
// few per dispatch (agents, the application's submissions and read-backs,
// configuration).
//
// Packing copies field values, pointers and slices included, so an
// unpacked event is the event that was pushed, shared pointers and all
// (TestPackedRoundTrip checks every field of Event).
type packed struct {
	Seq, Time, Thread, Agent, Queue, Dispatch, Context uint64
	Start, End, Signal, Bytes, Elements                uint64

	Type    Type
	Kernel  string
	Label   string
	Buffer  string
	Op      Op
	Phase   Phase
	Call    Call
	Status  Status
	Service Service
	MemIn   string
	MemOut  string
	Digest  string

	Pass, Total, UserData, PayloadSize *uint64
	Result, Value                      *int64
	Corr                               *Corr
	Info                               *DispatchInfo

	Payload []string
	Regions []Region

	// rest is the whole event when it sets a field packed has no room
	// for; then nothing else of p is used.
	rest *Event
}

// pack stores e in p.
func (p *packed) pack(e *Event) {
	if hasUnpacked(e) {
		c := *e
		*p = packed{rest: &c}
		return
	}
	*p = packed{
		Seq: e.Seq, Time: e.Time, Thread: e.Thread, Agent: e.Agent, Queue: e.Queue, Dispatch: e.Dispatch, Context: e.Context,
		Start: e.Start, End: e.End, Signal: e.Signal, Bytes: e.Bytes, Elements: e.Elements,
		Type: e.Type, Kernel: e.Kernel, Label: e.Label, Buffer: e.Buffer, Op: e.Op, Phase: e.Phase,
		Call: e.Call, Status: e.Status, Service: e.Service, MemIn: e.MemIn, MemOut: e.MemOut, Digest: e.Digest,
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
	e.Type, e.Kernel, e.Label, e.Buffer, e.Op, e.Phase = p.Type, p.Kernel, p.Label, p.Buffer, p.Op, p.Phase
	e.Call, e.Status, e.Service, e.MemIn, e.MemOut, e.Digest = p.Call, p.Status, p.Service, p.MemIn, p.MemOut, p.Digest
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
