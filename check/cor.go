package check

import (
	"fmt"

	"github.com/replayspec/replayspec/trace"
)

// checkCOR judges correlation ids across passes.
func checkCOR(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		vs = append(vs, x.checkWindowCorrelation(d)...)
	})
	return append(vs, x.checkExternalIDs()...)
}

// COR-1, COR-2: one internal and ancestor id per window, shared by every
// callback and every record of the dispatch.
func (x *index) checkWindowCorrelation(d *dispatchView) []Violation {
	ref := -1
	for _, i := range concat(d.configEnter, d.passEnter, d.passExit, d.configExit) {
		c := x.ev[i].Corr
		if c == nil {
			continue
		}
		if ref < 0 {
			ref = i
			continue
		}
		x.examined("COR-1")
		if r := x.ev[ref].Corr; c.Internal != r.Internal || c.Ancestor != r.Ancestor {
			return []Violation{x.violation("COR-1", d.id, fmt.Sprintf("%s%s of dispatch %d has correlation %d/%d, the window opened with %d/%d", kindText(x.ev[i]), passSuffix(x.ev[i]), d.id, c.Internal, c.Ancestor, r.Internal, r.Ancestor), ref, i)}
		}
	}
	for _, i := range d.records {
		c := x.ev[i].Corr
		if c == nil || c.Internal == 0 {
			continue
		}
		if ref < 0 {
			ref = i
			continue
		}
		x.examined("COR-2")
		if r := x.ev[ref].Corr; c.Internal != r.Internal || c.Ancestor != r.Ancestor {
			return []Violation{x.violation("COR-2", d.id, fmt.Sprintf("a %s record of dispatch %d has correlation %d/%d, the dispatch's is %d/%d", x.ev[i].Service, d.id, c.Internal, c.Ancestor, r.Internal, r.Ancestor), ref, i)}
		}
	}
	return nil
}

// COR-3: a record's external id is the one the tool's correlation callback
// returned for the submit that produced it (the last one on its thread).
// A candidate dispatch's submits all come after its CONFIG ENTER (each
// pass's after its PASS ENTER, the single run after CONFIG EXIT), so the
// callback is never asked for it before the window opens (decision 17.17).
func (x *index) checkExternalIDs() []Violation {
	var vs []Violation
	last := map[uint64]int{} // thread -> position of the last correlation event
	for i, e := range x.ev {
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
			ce := x.ev[c]
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
