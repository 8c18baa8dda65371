package check

import (
	"fmt"
	"slices"

	"github.com/replayspec/replayspec/trace"
)

// checkCOR judges correlation ids across passes, and against the API calls
// the dispatch was written in where the trace shows them.
func checkCOR(x *index) []Violation {
	var vs []Violation
	ws := x.apiWitnesses()
	x.eachDispatch(func(d *dispatchView) {
		w, ok := ws[d.id]
		vs = append(vs, x.checkWindowCorrelation(d, w, ok)...)
	})
	return append(vs, x.checkExternalIDs()...)
}

// apiFrame is an API call open on a thread, as its api_call ENTER showed it.
type apiFrame struct {
	call  trace.Call
	id    uint64 // its correlation id (corr.internal)
	enter int    // position of its ENTER
}

// apiWitness is what the tool's API tracing shows of the calls a dispatch
// was written in: the innermost call open on its thread when its ids were
// captured, and the call around that one.
type apiWitness struct {
	thread uint64
	at     int // the event that shows the capture
	inner  apiFrame
	outer  *apiFrame // nil: the inner call is the outermost
}

// want is the triple the witness asks for: the innermost call's id, and
// the id of the call around it as the ancestor (0 at the outermost).
func (w apiWitness) want() (internal, ancestor uint64) {
	if w.outer != nil {
		return w.inner.id, w.outer.id
	}
	return w.inner.id, 0
}

// events are the positions that show the witness: the calls' ENTERs and
// the event that shows the capture.
func (w apiWitness) events() []int {
	if w.outer != nil {
		return []int{w.outer.enter, w.inner.enter, w.at}
	}
	return []int{w.inner.enter, w.at}
}

func (w apiWitness) String() string {
	s := fmt.Sprintf("the innermost API call open on thread %d was %s %d", w.thread, w.inner.call, w.inner.id)
	if w.outer != nil {
		return s + fmt.Sprintf(", inside %s %d", w.outer.call, w.outer.id)
	}
	return s + ", inside none"
}

// captureAnchors maps the position of each dispatch's first capture event
// (CONFIG ENTER, a reservation or a correlation) to the dispatch's id.
func (x *index) captureAnchors() map[int]uint64 {
	anchor := make(map[int]uint64, len(x.dispatches))
	for _, d := range x.dispatches {
		at := -1
		for _, l := range [][]int{d.configEnter, d.reserves, d.correlations} {
			if len(l) > 0 && (at < 0 || l[0] < at) {
				at = l[0]
			}
		}
		if at >= 0 {
			anchor[at] = d.id
		}
	}
	return anchor
}

// apiWitnesses finds, for each dispatch, the API calls open on its thread
// when its ids were captured (COR-1, COR-2). The capture happens as the
// write is intercepted, so the first of the dispatch's events that are
// made there shows it: its CONFIG ENTER, its dispatch_id, or the external
// correlation callback asked for its submit. On that event's thread the
// api_call ENTERs and EXITs before it give the calls open, nested as the
// thread made them; other threads' calls never count, whatever the
// interleaving, so the judgement holds under free threads. A trace with no
// api_call events has no witness; neither has a dispatch whose capture
// falls outside every call the trace shows.
func (x *index) apiWitnesses() map[uint64]apiWitness {
	if !x.has(trace.APICall) {
		return nil
	}
	anchor := x.captureAnchors()
	// Only the calls and the anchors matter: they are walked in trace
	// order, each thread's calls open on it (the other events of a thread
	// are most of a trace, and a loop may run inside one call).
	anchors := make([]int, 0, len(anchor))
	for at := range anchor {
		anchors = append(anchors, at)
	}
	slices.Sort(anchors)
	calls := x.types[ekAPICall]
	opened := map[uint64][]apiFrame{}
	out := map[uint64]apiWitness{}
	for c, a := 0, 0; c < len(calls) || a < len(anchors); {
		var i int
		if a == len(anchors) || c < len(calls) && calls[c] < anchors[a] {
			i, c = calls[c], c+1
		} else {
			i, a = anchors[a], a+1
		}
		th := x.col[i].thread // an anchor is read from the columns alone
		open := opened[th]
		if e := &x.ev[i]; x.col[i].kind == ekAPICall && e.Corr != nil {
			switch e.Phase {
			case trace.PhaseEnter:
				open = append(open, apiFrame{call: e.Call, id: e.Corr.Internal, enter: i})
			case trace.PhaseExit:
				// The exit ends the call it names and any left open
				// inside it; an exit of no open call changes nothing.
				for k := len(open) - 1; k >= 0; k-- {
					if open[k].id == e.Corr.Internal {
						open = open[:k]
						break
					}
				}
			}
			opened[th] = open
			continue
		}
		id, ok := anchor[i]
		if !ok || len(open) == 0 {
			continue
		}
		w := apiWitness{thread: th, at: i, inner: open[len(open)-1]}
		if n := len(open); n > 1 {
			outer := open[n-2]
			w.outer = &outer
		}
		out[id] = w
	}
	return out
}

// COR-1, COR-2: one internal and ancestor id per window, shared by every
// callback and every record of the dispatch; where the trace shows the API
// calls it was written in (w), the innermost call's id and the id of the
// call around it (decision 20.3.1: as the reference, a dispatch takes the
// thread's innermost open call's id and that call's ancestor).
func (x *index) checkWindowCorrelation(d *dispatchView, w apiWitness, witnessed bool) []Violation {
	var vs []Violation
	wantIn, wantAnc := w.want()
	ref := -1
	for _, i := range x.concat(d.configEnter, d.passEnter, d.passExit, d.configExit) {
		c := x.ev[i].Corr
		if c == nil {
			continue
		}
		if witnessed {
			x.examinedAt(slotCOR1)
			if c.Internal != wantIn || c.Ancestor != wantAnc {
				vs = append(vs, x.violation("COR-1", d.id, fmt.Sprintf("%s%s of dispatch %d has correlation %d/%d; when the dispatch was written %s: its ids are %d/%d", kindText(&x.ev[i]), passSuffix(&x.ev[i]), d.id, c.Internal, c.Ancestor, w, wantIn, wantAnc), append(w.events(), i)...))
				break
			}
			continue
		}
		if ref < 0 {
			ref = i
			continue
		}
		x.examinedAt(slotCOR1)
		if r := x.ev[ref].Corr; c.Internal != r.Internal || c.Ancestor != r.Ancestor {
			return []Violation{x.violation("COR-1", d.id, fmt.Sprintf("%s%s of dispatch %d has correlation %d/%d, the window opened with %d/%d", kindText(&x.ev[i]), passSuffix(&x.ev[i]), d.id, c.Internal, c.Ancestor, r.Internal, r.Ancestor), ref, i)}
		}
	}
	for _, i := range d.records {
		c := x.ev[i].Corr
		if c == nil || c.Internal == 0 {
			continue
		}
		if witnessed {
			x.examinedAt(slotCOR2)
			if c.Internal != wantIn || c.Ancestor != wantAnc {
				return append(vs, x.violation("COR-2", d.id, fmt.Sprintf("a %s record of dispatch %d has correlation %d/%d; when the dispatch was written %s: its ids are %d/%d", x.ev[i].Service, d.id, c.Internal, c.Ancestor, w, wantIn, wantAnc), append(w.events(), i)...))
			}
			continue
		}
		if ref < 0 {
			ref = i
			continue
		}
		x.examinedAt(slotCOR2)
		if r := x.ev[ref].Corr; c.Internal != r.Internal || c.Ancestor != r.Ancestor {
			return append(vs, x.violation("COR-2", d.id, fmt.Sprintf("a %s record of dispatch %d has correlation %d/%d, the dispatch's is %d/%d", x.ev[i].Service, d.id, c.Internal, c.Ancestor, r.Internal, r.Ancestor), ref, i))
		}
	}
	return vs
}

// COR-3: a record's external id is the one the tool's correlation callback
// returned for the submit that produced it (the last one on its thread).
// A candidate dispatch's submits all come after its CONFIG ENTER (each
// pass's after its PASS ENTER, the single run after CONFIG EXIT), so the
// callback is never asked for it before the window opens (decision 17.17).
func (x *index) checkExternalIDs() []Violation {
	var vs []Violation
	last := map[uint64]int{} // thread -> position of the last correlation event
	for i := range x.ev {
		if k := x.col[i].kind; k != ekCorrelation && k != ekRecord {
			continue // read without touching the event
		}
		e := &x.ev[i]
		switch e.Type {
		case trace.Correlation:
			last[e.Thread] = i
			if d := x.dispatches[e.Dispatch]; d != nil && len(d.configEnter) > 0 {
				x.examined("COR-3")
				if i < d.configEnter[0] {
					vs = append(vs, x.violation("COR-3", e.Dispatch, fmt.Sprintf("the external correlation id of dispatch %d was asked before its CONFIG ENTER; a submit of a replay candidate comes after the window opens", e.Dispatch), i, d.configEnter[0]))
				}
			}
		case trace.Record:
			c, ok := last[e.Thread]
			if !ok || e.Corr == nil || agentWide(e.Service) {
				continue
			}
			ce := &x.ev[c]
			if ce.Result == nil || ce.Dispatch != e.Dispatch {
				continue
			}
			x.examined("COR-3")
			// Each pass is its own submit: inside a pass, the id must have
			// been asked for in that same pass, not reused from an earlier one.
			if w := x.window(i); w.open && w.dispatch == e.Dispatch {
				if cw := x.window(c); !cw.open || cw.dispatch != w.dispatch || cw.pass != w.pass {
					vs = append(vs, x.violation("COR-3", e.Dispatch, fmt.Sprintf("a %s record of pass %d carries external id %d, but the external correlation callback was not asked for that pass's submit (the last answer came before the pass began)", e.Service, w.pass, e.Corr.External), c, i))
					continue
				}
			}
			if int64(e.Corr.External) != *ce.Result {
				vs = append(vs, x.violation("COR-3", e.Dispatch, fmt.Sprintf("a %s record carries external id %d, its submit was given %d", e.Service, e.Corr.External, *ce.Result), c, i))
			}
		}
	}
	return vs
}
