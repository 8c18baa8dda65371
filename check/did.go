package check

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkDID judges dispatch identity: one id per logical dispatch, carried
// by everything the dispatch causes, with passes told apart by pass index.
func checkDID(x *index) []Violation {
	var vs []Violation
	for _, a := range x.apps {
		vs = append(vs, x.checkAppIdentity(a)...)
		vs = append(vs, x.checkEveryPacketNamed(a)...)
	}
	vs = append(vs, x.checkIDCounter()...)
	vs = append(vs, x.checkNamedIDs()...)
	vs = append(vs, x.checkSeenCounter()...)
	for _, a := range x.apps {
		vs = append(vs, x.checkPacketsTraced(a)...)
	}
	x.eachDispatch(func(d *dispatchView) {
		if d.replayed() {
			vs = append(vs, x.checkPassTimestamps(d)...)
			vs = append(vs, x.checkRecordPasses(d)...)
		}
	})
	return vs
}

// DID-3, DID-1, DID-2 for one application dispatch: one reservation, and
// every replay event in its window carries that id.
func (x *index) checkAppIdentity(a *appView) []Violation {
	var vs []Violation
	if len(a.reserves) > 0 {
		x.examined("DID-3")
	}
	// One id per kernel packet the application wrote (a submission of
	// several is several logical dispatches, none replayed: ACT-6).
	want := max(x.ev[a.at].KernelPackets, 1)
	if len(a.reserves) > want {
		vs = append(vs, x.violation("DID-3", a.dispatch, fmt.Sprintf("%s reserved %d dispatch ids for %d kernel packet(s)", a.label, len(a.reserves), want), append([]int{a.at}, a.reserves...)...))
		// Go on: the extra ids also break DID-1 and DID-2 below, and a
		// report that names every broken rule says more than the first.
	}
	if a.dispatch == 0 {
		return vs
	}
	var ids []uint64 // a few: those reserved, or those its events name
	for _, r := range a.reserves[:min(want, len(a.reserves))] {
		ids = append(ids, x.ev[r].Dispatch)
	}
	ids = append(ids, a.named...) // no dispatch_id events: the ids its events name (O5)
	x.examined("DID-1")
	x.examined("DID-2")
	reported := map[string]bool{}
	var kernels []int       // the window's tagged kernels
	var ran map[uint64]bool // the ids they carry, when there are several packets
	if want > 1 {
		ran = map[uint64]bool{}
	}
	pos := x.byThread[a.thread]
	for j := sort.SearchInts(pos, a.at+1); j < len(pos) && pos[j] < a.end; j++ {
		i := pos[j]
		if x.byTool[i] {
			continue // the tool's own dispatch from a callback has its own id
		}
		k := x.col[i].kind
		switch k {
		case ekCallback, ekPassCount, ekContinue, ekKernel, ekRecord, ekSnapshot, ekRestore:
		default:
			continue
		}
		if id := x.col[i].dispatch; id != 0 && id == a.dispatch {
			// Its own id, the most of them: nothing to read in the event.
			if k == ekKernel {
				kernels = x.pushPos(kernels, i)
				if ran != nil {
					ran[id] = true
				}
			}
			continue
		}
		e := &x.ev[i]
		if e.Type == trace.Kernel && e.Dispatch != 0 {
			kernels = x.pushPos(kernels, i)
			if ran != nil {
				ran[e.Dispatch] = true
			}
		}
		if e.Dispatch == 0 && (e.Type == trace.Kernel || e.Type == trace.Record) {
			continue // untagged work (a barrier, an agent-wide sample)
		}
		if !slices.Contains(ids, e.Dispatch) && e.Dispatch != a.dispatch {
			rule := "DID-2"
			if e.Type == trace.Kernel || e.Type == trace.Snapshot || e.Type == trace.Restore {
				rule = "DID-1" // a submit of this dispatch did not reuse the id
			}
			if reported[rule] {
				continue
			}
			reported[rule] = true
			v := x.violation(rule, a.dispatch, fmt.Sprintf("%s of %s carries dispatch id %d, the reserved id is %d", kindText(e), a.label, e.Dispatch, a.dispatch), firstOr(a.reserves, a.at), i)
			v.Label = a.label
			vs = append(vs, v)
		}
	}
	// Each of several kernel packets is a logical dispatch with its own id
	// (decision 7) and runs once (ACT-6): as many kernels as packets, with
	// fewer ids among them, means packets shared an id. This needs no
	// reservation event, so it holds at every profile that shows kernels
	// (docs/ports.md O5).
	if want > 1 && len(kernels) >= want && len(ran) < want && !reported["DID-1"] {
		v := x.violation("DID-1", a.dispatch, fmt.Sprintf("%s wrote %d kernel packets; %d kernels ran, carrying %d dispatch id(s): each packet has its own", a.label, want, len(kernels), len(ran)), append([]int{a.at}, kernels...)...)
		v.Label = a.label
		vs = append(vs, v)
	}
	return vs
}

// DID-1 without dispatch_id events: the ids the application's dispatches
// are named by (index.joinApps) are one per logical dispatch, so no two
// dispatches share one. With the SDK's reservations, DID-3 judges that
// (checkIDCounter); this is what a trace without them still shows
// (docs/ports.md O5).
func (x *index) checkNamedIDs() []Violation {
	if x.has(trace.DispatchID) {
		return nil
	}
	var vs []Violation
	owner := map[uint64]*appView{}
	for _, a := range x.apps {
		for _, id := range a.named {
			prev := owner[id]
			if prev == nil {
				owner[id] = a
				continue
			}
			v := x.violation("DID-1", id, fmt.Sprintf("dispatch id %d names two logical dispatches, %s and %s: each has its own id", id, prev.label, a.label), prev.at, a.at)
			v.Label = a.label
			vs = append(vs, v)
		}
	}
	return vs
}

func firstOr(list []int, def int) int {
	if len(list) > 0 {
		return list[0]
	}
	return def
}

// DID-3, DID-1: reserved ids are unique and consecutive, and every id in
// use was reserved.
func (x *index) checkIDCounter() []Violation {
	res := x.types[ekDispatchID]
	if len(res) == 0 {
		return nil
	}
	var vs []Violation
	seen := map[uint64]int{}
	var ids []uint64
	for _, i := range res {
		id := x.ev[i].Dispatch
		if prev, dup := seen[id]; dup {
			vs = append(vs, x.violation("DID-3", id, fmt.Sprintf("dispatch id %d was reserved twice", id), prev, i))
			continue
		}
		seen[id] = i
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// In a process a failed restore ended, a dispatch may have taken its id
	// and died before its reservation was recorded (MEM-5): an application
	// dispatch with no id and no completion may stand for each gap.
	c := &counterSeq{}
	if x.processDied() {
		for _, a := range x.apps {
			if a.dispatch == 0 && len(a.complete) == 0 {
				c.allow++
			}
		}
	}
	seq := make([]counted, len(ids))
	for k, id := range ids {
		seq[k] = counted{id: id, at: x.global(seen[id]), ev: x.ev[seen[id]]}
		if d := x.dispatches[id]; d != nil {
			seq[k].label = d.label
		}
	}
	vs = append(vs, x.counter(c, seq)...)
	x.eachDispatch(func(d *dispatchView) {
		if len(d.reserves) > 0 {
			return
		}
		for _, list := range [][]int{d.configEnter, d.passEnter, d.passCounts, d.kernels} {
			if len(list) > 0 {
				vs = append(vs, x.violation("DID-1", d.id, fmt.Sprintf("dispatch id %d is used but was never reserved", d.id), list[0]))
				return
			}
		}
	})
	return vs
}

// dispatchScoped services make one record per dispatch run.
func dispatchScoped(service trace.Service) bool {
	switch service {
	case trace.KernelTrace, trace.CounterCollection, trace.SPM, trace.ThreadTrace:
		return true
	}
	return false
}

type span struct{ start, end uint64 }

// DID-4: each pass's kernel and records have their own timestamps.
func (x *index) checkPassTimestamps(d *dispatchView) []Violation {
	x.examined("DID-4")
	if x.timesAscend(d) {
		return nil // no two alike
	}
	return x.passTimestampsByMap(d)
}

// passTimestampsByMap is checkPassTimestamps' search for times alike.
func (x *index) passTimestampsByMap(d *dispatchView) []Violation {
	var vs []Violation
	kernelAt := map[span]int{}
	for _, k := range d.kernels {
		e := &x.ev[k]
		s := span{e.Start, e.End}
		if s == (span{}) {
			continue
		}
		if prev, dup := kernelAt[s]; dup {
			vs = append(vs, x.violation("DID-4", d.id, fmt.Sprintf("two passes of dispatch %d report the same kernel time %d..%d", d.id, s.start, s.end), prev, k))
			break
		}
		kernelAt[s] = k
	}
	type key struct {
		service trace.Service
		context uint64
		s       span
	}
	recordAt := map[key]int{}
	for _, i := range d.records {
		e := &x.ev[i]
		s := span{e.Start, e.End}
		if !dispatchScoped(e.Service) || s == (span{}) {
			continue
		}
		p, ok := x.recordPass(i)
		k := key{e.Service, e.Context, s}
		if prev, dup := recordAt[k]; dup {
			if q, okq := x.recordPass(prev); ok && okq && p != q {
				vs = append(vs, x.violation("DID-4", d.id, fmt.Sprintf("%s records of passes %d and %d share the time %d..%d", e.Service, q, p, s.start, s.end), prev, i))
				break
			}
		}
		recordAt[k] = i
	}
	return vs
}

// timesAscend: d's kernels start each after the last, and so do its
// dispatch-scoped records of each service and context: then no two share
// a time, which is what checkPassTimestamps looks for in maps, and a loop
// in time order (every one that holds) needs none.
func (x *index) timesAscend(d *dispatchView) bool {
	var last uint64
	seen := false
	for _, k := range d.kernels {
		e := &x.ev[k]
		if e.Start == 0 && e.End == 0 {
			continue
		}
		if seen && e.Start <= last {
			return false
		}
		last, seen = e.Start, true
	}
	var by ascending
	for _, i := range d.records {
		e := &x.ev[i]
		if !dispatchScoped(e.Service) || e.Start == 0 && e.End == 0 {
			continue
		}
		if !by.next(e.Service, e.Context, e.Start) {
			return false
		}
	}
	return true
}

// ascending follows, per service and context, whether a value only grows.
type ascending []struct {
	service trace.Service
	context uint64
	last    uint64
}

// next reports whether v is above the last value of service and context.
func (a *ascending) next(service trace.Service, context uint64, v uint64) bool {
	for k := range *a {
		if c := &(*a)[k]; c.service == service && c.context == context {
			if v <= c.last {
				return false
			}
			c.last = v
			return true
		}
	}
	*a = append(*a, struct {
		service trace.Service
		context uint64
		last    uint64
	}{service, context, v})
	return true
}

// DID-5: the records of a replayed dispatch name their pass, one record
// per pass per service and context.
func (x *index) checkRecordPasses(d *dispatchView) []Violation {
	if n, ok := x.recordPassesAscend(d); ok {
		x.examinedTimes("DID-5", n) // as recordPassesByMap would count them
		return nil
	}
	return x.recordPassesByMap(d)
}

// recordPassesByMap is checkRecordPasses' search for a pass claimed twice.
func (x *index) recordPassesByMap(d *dispatchView) []Violation {
	type key struct {
		service trace.Service
		context uint64
		pass    uint64
	}
	seen := map[key]int{}
	for _, i := range d.records {
		e := &x.ev[i]
		if e.Service != trace.KernelTrace && e.Service != trace.CounterCollection {
			continue
		}
		x.examined("DID-5")
		p, ok := x.passOf(i)
		if !ok {
			return []Violation{x.violation("DID-5", d.id, fmt.Sprintf("a %s record of replayed dispatch %d carries no pass index", e.Service, d.id), i)}
		}
		k := key{e.Service, e.Context, p}
		if prev, dup := seen[k]; dup {
			return []Violation{x.violation("DID-5", d.id, fmt.Sprintf("two %s records of context %d claim pass %d", e.Service, e.Context, p), prev, i)}
		}
		seen[k] = i
	}
	return nil
}

// recordPassesAscend: every kernel trace and counter record of d names its
// pass, and per service and context the passes only grow: then none is
// claimed twice, which is what checkRecordPasses looks for in a map. n is
// how many records it examines.
func (x *index) recordPassesAscend(d *dispatchView) (n int, ok bool) {
	var by ascending
	for _, i := range d.records {
		e := &x.ev[i]
		if e.Service != trace.KernelTrace && e.Service != trace.CounterCollection {
			continue
		}
		n++
		p, has := x.passOf(i)
		// Stored as p+1 so that pass 0 is above nothing seen yet.
		if !has || p == ^uint64(0) || !by.next(e.Service, e.Context, p+1) {
			return 0, false
		}
	}
	return n, true
}

// DID-3 without the SDK's reservations, from the ids the tool sees: every
// logical dispatch (each kernel packet an application wrote, each dispatch
// the tool wrote from a callback) shows its id in its callbacks and
// records (and in its kernels, at the runtime profile). When every one of them shows exactly its own, the ids are the
// counter's values, one per logical dispatch, so they follow each other
// with no gap: a counter that advanced without a logical dispatch (on every
// pass, say) shows as the next dispatch's id jumping. Judged only when
// every logical dispatch is named: one the tool never saw would leave a gap
// of its own.
func (x *index) checkSeenCounter() []Violation {
	if x.has(trace.DispatchID) {
		return nil // the reservations say it (checkIDCounter)
	}
	type named struct {
		id    uint64
		label string
		at    int
	}
	var all []named
	seenIn := func(pos []int, from, to int, tool bool, except uint64) []uint64 {
		var ids []uint64
		for j := sort.SearchInts(pos, from+1); j < len(pos) && pos[j] < to; j++ {
			i := pos[j]
			e := &x.ev[i]
			if x.byTool[i] != tool || e.Dispatch == 0 || e.Dispatch == except {
				continue
			}
			switch {
			case e.Type == trace.Callback, e.Type == trace.PassCount, e.Type == trace.Kernel:
			case e.Type == trace.Record && dispatchScoped(e.Service):
			default:
				continue
			}
			if !slices.Contains(ids, e.Dispatch) {
				ids = append(ids, e.Dispatch)
			}
		}
		return ids
	}
	for _, a := range x.apps {
		ids := seenIn(x.byThread[a.thread], a.at, a.end, false, 0)
		want := max(x.ev[a.at].KernelPackets, 1)
		if len(ids) < want {
			return x.counter(&counterSeq{seen: true, abstain: true}, nil) // a logical dispatch the tool did not see: not judged
		}
		// More ids than logical dispatches break DID-1/DID-2; the first
		// the tool saw is the one reserved, as the full profile's first
		// reservation is, so that the counter is still judged.
		for _, id := range ids[:want] {
			all = append(all, named{id, a.label, a.at})
		}
	}
	for _, w := range x.inFlight().spans {
		if !w.tool {
			continue
		}
		ids := seenIn(x.byThread[w.thread], w.start, w.end, true, x.ev[w.start].Dispatch)
		if len(ids) == 0 {
			return x.counter(&counterSeq{seen: true, abstain: true}, nil)
		}
		all = append(all, named{ids[0], x.ev[w.start].Label, w.start})
	}
	slices.SortFunc(all, func(a, b named) int { return cmp.Compare(a.id, b.id) })
	seq := make([]counted, len(all))
	for k, n := range all {
		seq[k] = counted{id: n.id, label: n.label, at: x.global(n.at), ev: x.ev[n.at]}
	}
	return x.counter(&counterSeq{seen: true}, seq)
}

// DID-1 as the tool sees a submission of several kernel packets: each is a
// logical dispatch with its own id (decision 7), so a kernel-trace context
// started all the while the submission was in flight records one dispatch
// per packet, each with its id, on the submitting thread inside the
// submission's window (as every record of a plain dispatch comes, DID-2).
// Fewer ids there than packets: some packet was given no id, so no record.
// Needs no reservation or kernel event, so it holds at the black-box
// profile.
func (x *index) checkPacketsTraced(a *appView) []Violation {
	want := x.ev[a.at].KernelPackets
	if want < 2 || len(a.complete) == 0 || x.has(trace.DispatchID) {
		return nil // with the SDK's reservations, checkAppIdentity judges it
	}
	done := a.complete[0]
	for _, i := range x.types[ekAPI] {
		cfg := &x.ev[i]
		if cfg.Call != trace.CallConfigureKernelTrace || !cfg.Status.Is(trace.StatusSuccess) || i > a.at {
			continue
		}
		if on, known := x.contextActive(cfg.Context, a.at, done); !known || !on {
			continue
		}
		ids := map[uint64]bool{}
		pos := x.byThread[a.thread]
		for j := sort.SearchInts(pos, a.at+1); j < len(pos) && pos[j] < done; j++ {
			if e := &x.ev[pos[j]]; e.Type == trace.Record && e.Service == trace.KernelTrace && e.Context == cfg.Context && e.Dispatch != 0 && !x.byTool[pos[j]] {
				ids[e.Dispatch] = true
			}
		}
		x.examined("DID-1")
		if len(ids) < want {
			v := x.violation("DID-1", a.dispatch, fmt.Sprintf("%s wrote %d kernel packets, each its own logical dispatch with its own id, but context %d's kernel trace, started all along, recorded %d dispatch id(s) for them: some packet got no id", a.label, want, cfg.Context, len(ids)), a.at, done)
			v.Label = a.label
			return []Violation{v}
		}
	}
	return nil
}
