package check

import (
	"fmt"
	"sort"
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
func (x *index) checkGroupsPerPass(d *dispatchView) []Violation {
	type cc struct {
		context uint64
		counter string
	}
	firstSeen := map[cc]int{}
	var recs []int
	for _, i := range d.records {
		if x.ev[i].Service == svcCounterCollection {
			recs = append(recs, i)
		}
	}
	sort.Ints(recs)
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
