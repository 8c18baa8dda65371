package check

import (
	"fmt"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkAGT judges the mapping of passes to counter groups.
func checkAGT(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if d.replayed() {
			vs = append(vs, x.checkGroupsPerPass(d)...)
		}
	})
	return vs
}

// AGT-1: pass i collects group i of the agent: no counter is collected in
// two passes of one dispatch (no wrap), so every pass has its own group.
// It is judged for tools that split counters over a fixed loop; a tool that
// collects one and the same set on every pass (sampling until a value
// converges) is not splitting groups.
func (x *index) checkGroupsPerPass(d *dispatchView) []Violation {
	n, ok := x.passCount(d)
	if !ok || n < 2 || x.sameSetEveryPass(d) {
		return nil
	}
	x.examined("AGT-1")
	type cc struct {
		context uint64
		counter string
	}
	firstSeen := map[cc]int{}
	var recs []int
	for _, i := range d.records {
		if x.ev[i].Service == trace.CounterCollection {
			recs = append(recs, i)
		}
	}
	sort.Ints(recs)
	// No skip: a pass that collected nothing while a later pass did
	// left its group out (unless the tool stopped a context locally).
	collected := map[uint64]int{}
	for _, i := range recs {
		if p, ok := x.recordPass(i); ok {
			if _, seen := collected[p]; !seen {
				collected[p] = i
			}
		}
	}
	for p := uint64(0); p+1 < uint64(len(d.passEnter)) && len(d.locals) == 0; p++ {
		if _, got := collected[p]; got {
			continue
		}
		for q := p + 1; q < uint64(len(d.passEnter)); q++ {
			if later, got := collected[q]; got {
				return []Violation{x.violation("AGT-1", d.id, fmt.Sprintf("pass %d of dispatch %d collected no counters but pass %d did: a group was skipped", p, d.id, q), d.passEnter[p], later)}
			}
		}
	}
	for _, i := range recs {
		e := x.ev[i]
		p, ok := x.recordPass(i)
		if !ok {
			continue
		}
		for _, c := range e.Counters {
			k := cc{e.Context, c.Name}
			prev, seen := firstSeen[k]
			if !seen {
				firstSeen[k] = i
				continue
			}
			if q, _ := x.recordPass(prev); q != p {
				return []Violation{x.violation("AGT-1", d.id, fmt.Sprintf("counter %s was collected in pass %d and again in pass %d of dispatch %d: the passes wrapped or repeated a group", c.Name, q, p, d.id), prev, i)}
			}
		}
	}
	return nil
}

// sameSetEveryPass reports whether every counter record of the dispatch
// names the same counters.
func (x *index) sameSetEveryPass(d *dispatchView) bool {
	first := ""
	for _, i := range d.records {
		e := x.ev[i]
		if e.Service != trace.CounterCollection {
			continue
		}
		names := ""
		for _, c := range e.Counters {
			names += c.Name + ","
		}
		if first == "" {
			first = names
		} else if names != first {
			return false
		}
	}
	return true
}
