package check

import (
	"fmt"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkAGT judges the mapping of passes to counter groups.
func checkAGT(x *index) []Violation {
	var vs []Violation
	x.eachDispatch(func(d *dispatchView) {
		if len(d.passCounts) > 0 && x.ev[d.passCounts[0]].Groups != nil {
			vs = append(vs, x.checkToolSplit(d)...)
			return
		}
		if d.replayed() {
			vs = append(vs, x.checkGroupsPerPass(d)...)
		}
	})
	return vs
}

// AGT-1 against the tool's own split (pass_count's groups): the count it
// answered is the number of groups of the dispatch's agent, and pass i
// collected exactly group i, with no wrap or skip.
func (x *index) checkToolSplit(d *dispatchView) []Violation {
	pc := d.passCounts[0]
	groups := x.ev[pc].Groups
	x.examined("AGT-1")
	if r, ok := x.passCount(d); ok && r != int64(max(len(groups), 1)) {
		return []Violation{x.violation("AGT-1", d.id, fmt.Sprintf("the tool split its counters into %d groups for agent %d but answered %d passes", len(groups), d.agent, r), pc)}
	}
	if !d.replayed() {
		return nil
	}
	of := x.ev[pc].Context // the context whose counters were split; 0: not said
	if of != 0 && len(d.configEnter) > 0 {
		// A split of a context that was not started when the loop began
		// (decision 12) is collected by nobody: nothing to compare
		// (found by internal/specgen); nor is one that may not have been
		// started then (decision 18.1).
		lo, hi := x.writeWindow(d)
		if on, known := x.contextActive(of, lo, hi); known && !on {
			return nil
		}
	}
	got := map[uint64][]string{}
	first := map[uint64]int{}
	for _, i := range d.records {
		e := &x.ev[i]
		p, ok := x.recordPass(i)
		if e.Service != trace.CounterCollection || !ok || (of != 0 && e.Context != of) {
			continue
		}
		if _, seen := first[p]; !seen {
			first[p] = i
		}
		for _, c := range e.Counters {
			got[p] = append(got[p], c.Name)
		}
	}
	masked := len(d.locals) > 0 // a local stop may leave a pass without its group
	for k, pe := range d.passEnter {
		p := uint64(k)
		if p >= uint64(len(groups)) {
			break
		}
		want, have := sortedSet(groups[p]), sortedSet(got[p])
		if len(have) == 0 && masked {
			continue
		}
		if fmt.Sprint(want) != fmt.Sprint(have) {
			at := []int{pc, pe}
			if i, ok := first[p]; ok {
				at = append(at, i)
			}
			return []Violation{x.violation("AGT-1", d.id, fmt.Sprintf("pass %d collected %v, but the tool's group %d for this agent is %v", p, have, p, want), at...)}
		}
	}
	return nil
}

func sortedSet(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// AGT-1: pass i collects group i of the agent: no counter is collected in
// two passes of one dispatch (no wrap), so every pass has its own group.
// It is judged, context by context, for tools that split counters over a
// fixed loop; a context that collects one and the same set on every pass
// (sampling until a value converges) is not splitting groups.
func (x *index) checkGroupsPerPass(d *dispatchView) []Violation {
	n, ok := x.passCount(d)
	if !ok || n < 2 {
		return nil
	}
	sampling := x.samplingContexts(d)
	type cc struct {
		context uint64
		counter string
	}
	firstSeen := map[cc]int{}
	var recs []int
	for _, i := range d.records {
		if e := &x.ev[i]; e.Service == trace.CounterCollection && !sampling[e.Context] {
			recs = append(recs, i)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	x.examined("AGT-1")
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
		e := &x.ev[i]
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

// samplingContexts are the contexts whose counter records of the dispatch
// all name the same counters: a tool sampling one set until it converges,
// not splitting groups over passes. Each context is its own tool's choice
// (found by internal/specgen: two contexts sampling different sets).
func (x *index) samplingContexts(d *dispatchView) map[uint64]bool {
	sets := map[uint64]string{}
	out := map[uint64]bool{}
	for _, i := range d.records {
		e := &x.ev[i]
		if e.Service != trace.CounterCollection {
			continue
		}
		names := ""
		for _, c := range e.Counters {
			names += c.Name + ","
		}
		if first, seen := sets[e.Context]; !seen {
			sets[e.Context], out[e.Context] = names, true
		} else if names != first {
			out[e.Context] = false
		}
	}
	return out
}
