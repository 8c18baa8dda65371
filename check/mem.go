package check

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// checkMEM judges snapshot, restore and the memory a loop leaves behind.
func checkMEM(x *index) []Violation {
	var vs []Violation
	memKnown := x.header.Reports(trace.SourceSDK)
	kernelsByAgent := map[uint64][]int{}
	for _, k := range x.types[ekKernel] {
		kernelsByAgent[x.ev[k].Agent] = x.pushPos(kernelsByAgent[x.ev[k].Agent], k)
	}
	x.eachDispatch(func(d *dispatchView) {
		if memKnown {
			x.examined("MEM-1")
		}
		if len(d.configEnter) == 0 {
			if len(d.snapshots) > 0 {
				vs = append(vs, x.violation("MEM-1", d.id, fmt.Sprintf("dispatch %d was never a replay candidate, yet memory was snapshotted", d.id), d.snapshots...))
			}
			// The runtime's account: no device memory read before it ran,
			// said or silent (all a trace without the SDK's reports shows).
			vs = append(vs, x.checkTraffic(d)...)
			return
		}
		if !memKnown && len(d.passExit) > 0 && x.aborted(d) {
			// MEM-5 as the tool and the application see a restore that
			// failed part-way: the process ended after a PASS EXIT
			// instead of running on with half-restored memory.
			x.examined("MEM-5")
		}
		if d.replayed() {
			if memKnown {
				vs = append(vs, x.checkSnapshot(d)...)
				vs = append(vs, x.checkRestores(d)...)
			}
			vs = append(vs, x.checkSameInput(d)...)
			vs = append(vs, x.checkExclusiveAgent(d, kernelsByAgent)...)
			vs = append(vs, x.checkCopies(d)...)
			vs = append(vs, x.checkAgentHeldSeen(d)...)
		} else if len(d.snapshots) > 0 && !x.hiddenLoop(d) && (len(d.snapshots) > 1 || !x.diedBeforeFirstPass(d)) {
			// (A loop the process's end cut off before its first pass
			// took its one snapshot: MEM-5, decision 17.19.)
			vs = append(vs, x.violation("MEM-1", d.id, fmt.Sprintf("dispatch %d is not replayed, yet memory was snapshotted", d.id), d.snapshots...))
		}
		vs = append(vs, x.checkTraffic(d)...)
		vs = append(vs, x.checkOneRunResult(d)...)
	})
	vs = append(vs, x.checkFailedSnapshots()...)
	return append(vs, x.checkWarnedNotReplayed("MEM-5", trace.WarnSnapshotIncomplete)...)
}

// MEM-5: a snapshot that could not be completed makes the SDK warn and run
// the dispatch once, without replay.
func (x *index) checkFailedSnapshots() []Violation {
	var vs []Violation
	warned := false
	for _, i := range x.types[ekWarning] {
		warned = warned || x.ev[i].Code == trace.WarnSnapshotIncomplete
	}
	x.eachDispatch(func(d *dispatchView) {
		if len(d.failedSnapshots) == 0 {
			return
		}
		x.examined("MEM-5")
		switch {
		case !warned:
			vs = append(vs, x.violation("MEM-5", d.id, fmt.Sprintf("the snapshot of dispatch %d failed and no snapshot_incomplete warning was printed", d.id), d.failedSnapshots...))
		case d.replayed():
			vs = append(vs, x.violation("MEM-5", d.id, fmt.Sprintf("the snapshot of dispatch %d failed, yet it was replayed (%d passes)", d.id, len(d.passEnter)), append(d.failedSnapshots, d.passEnter...)...))
		case len(d.kernels) != 1:
			vs = append(vs, x.violation("MEM-5", d.id, fmt.Sprintf("the snapshot of dispatch %d failed; it must run once, but the kernel ran %d times", d.id, len(d.kernels)), append(d.failedSnapshots, d.kernels...)...))
		}
	})
	return vs
}

// kernelsOfPass returns d's kernel events inside its pass p.
func (x *index) kernelsOfPass(d *dispatchView, p uint64) []int {
	if d.kernelsByPass == nil {
		b := x.positionsByPass(d)
		for _, k := range d.kernels {
			if w := x.window(k); w.open && w.dispatch == d.id {
				b.set(w.pass, x.pushPos(b.get(w.pass), k))
			}
		}
		d.kernelsByPass = &b
	}
	return d.kernelsByPass.get(p)
}

// MEM-1: one snapshot, after CONFIG ENTER and before the first kernel.
func (x *index) checkSnapshot(d *dispatchView) []Violation {
	if len(d.snapshots) != 1 {
		return []Violation{x.violation("MEM-1", d.id, fmt.Sprintf("replayed dispatch %d took %d snapshots, want 1", d.id, len(d.snapshots)), x.concat(d.snapshots, d.passEnter[:1])...)}
	}
	s := d.snapshots[0]
	first := d.passEnter[0]
	if len(d.kernels) > 0 && d.kernels[0] < first {
		first = d.kernels[0]
	}
	if s > first || s < d.configEnter[0] {
		return []Violation{x.violation("MEM-1", d.id, fmt.Sprintf("dispatch %d's snapshot is not between CONFIG ENTER and its first kernel", d.id), d.configEnter[0], s, first)}
	}
	return nil
}

// MEM-2, MEM-3: one restore before each pass after the first, none after
// the last.
func (x *index) checkRestores(d *dispatchView) []Violation {
	var vs []Violation
	passes := uint64(x.passesRun(d))
	if passes > 1 {
		x.examined("MEM-2")
	}
	byPass := x.positionsByPass(d)
	// After the last pass's EXIT no restore is due (MEM-3). A last pass
	// still open when the trace ends (the process died in another loop's
	// failed restore, decision 17.19) has no EXIT to bound it.
	lastExit := len(x.ev)
	if len(d.passExit) > 0 && len(d.passExit) >= len(d.passEnter) {
		lastExit = d.passExit[len(d.passExit)-1]
	}
	for _, r := range d.restores {
		p, ok := x.passOf(r)
		if ok && p == passes && x.cutOff(d) {
			// The restore before a pass the process's end cut off (a failed
			// restore on another thread, decision 17.19): it was due.
			continue
		}
		if (ok && p >= passes) || r > lastExit {
			vs = append(vs, x.violation("MEM-3", d.id, fmt.Sprintf("memory was restored after the last pass (%d passes ran)", passes), lastExit, r))
			continue
		}
		if ok {
			byPass.set(p, x.pushPos(byPass.get(p), r))
		}
	}
	for p := uint64(1); p < passes; p++ {
		if x.leftOut(d, p) {
			continue // judged in an earlier part of the loop
		}
		rs := byPass.get(p)
		prevExit := x.exitOf(d, p-1)
		start := d.passEnter[x.passIndex(d, p)]
		if ks := x.kernelsOfPass(d, p); len(ks) > 0 {
			start = ks[0]
		}
		switch {
		case len(rs) == 0:
			vs = append(vs, x.violation("MEM-2", d.id, fmt.Sprintf("no restore before pass %d", p), prevExit, start))
		case len(rs) > 1:
			vs = append(vs, x.violation("MEM-2", d.id, fmt.Sprintf("%d restores before pass %d", len(rs), p), rs...))
		case rs[0] < prevExit || rs[0] > start:
			vs = append(vs, x.violation("MEM-2", d.id, fmt.Sprintf("the restore for pass %d is not between pass %d's EXIT and pass %d's kernel", p, p-1, p), prevExit, rs[0], start))
		}
	}
	return vs
}

// MEM-2: every pass starts from the same memory. A pass in whose PASS
// ENTER the tool ran a dispatch of its own (decision 11) is left out: the
// tool's kernel may have written the saved memory after the restore, and
// the trace does not say what it wrote. So is a pass before which another
// agent's kernel ran (decision 18.3): under free threads it may have
// written this agent's memory (peer access) without breaking MEM-6.
func (x *index) checkSameInput(d *dispatchView) []Violation {
	first := -1
	for _, k := range d.kernels {
		if x.ev[k].MemIn == "" || x.writtenBefore(d, k) {
			continue
		}
		if first < 0 {
			first = k
			continue
		}
		x.examinedAt(slotMEM2) // a later pass's input, compared with the first's
		if x.ev[k].MemIn != x.ev[first].MemIn {
			return []Violation{x.violation("MEM-2", d.id, fmt.Sprintf("a later pass of dispatch %d started from memory %s, the first from %s", d.id, x.ev[k].MemIn, x.ev[first].MemIn), first, k)}
		}
	}
	return nil
}

// MEM-3: the application reads what one run produced: the last run's
// output, equal to the first pass's output. The kernel's digests cover the
// saved (device) buffers in argument order; the application's read-backs
// are per buffer, whole, so the digest is rebuilt from them.
func (x *index) checkOneRunResult(d *dispatchView) []Violation {
	a := x.appOf(d)
	if a == nil || len(d.kernels) == 0 || len(a.readback) == 0 {
		return nil
	}
	var bufs [][]trace.Run
	for _, rb := range a.readback {
		e := &x.ev[rb]
		// Saved: coarse-grained device memory of the dispatch's own agent
		// (MEM-4; another agent's is not, decision 17.3).
		if k, agent, ok := x.allocOf(e.Buffer); !ok || !k.Saved() || (d.agent != 0 && agent != d.agent) {
			continue
		}
		// What the application read must be the whole buffer, and its
		// digest its values (check/buffers.go): a partial read would be
		// compared with the kernel's digest of the whole.
		if msg := x.notWhole(rb); msg != "" {
			x.examined("MEM-3")
			return []Violation{x.violation("MEM-3", d.id, msg+"; one run's result is judged on the whole buffer", rb)}
		}
		if trace.CountOf(e.Runs) > maxRebuild {
			return nil // too large to rebuild: the expectation on memory judges it
		}
		bufs = append(bufs, e.Runs)
	}
	got := x.header.DigestAlgorithm().DigestRuns(bufs...) // from the runs, by the header's algorithm: no copy of the buffers
	lastK, firstK := d.kernels[len(d.kernels)-1], d.kernels[0]
	at := a.readback[len(a.readback)-1]
	if x.otherKernelBetween(d.id, lastK, at) {
		// Another dispatch's kernel ran between the last pass and the
		// read-back (another thread's, or the tool's from CONFIG EXIT):
		// the trace does not say which buffers it wrote, so what the
		// application read proves nothing about a restore.
		return nil
	}
	x.examined("MEM-3")
	if out := x.ev[lastK].MemOut; out != "" && out != got {
		return []Violation{x.violation("MEM-3", d.id, fmt.Sprintf("the application read %s after %s completed, the last run left %s", got, a.label, out), lastK, at)}
	}
	// One run's output is the first pass's, unless the tool wrote the
	// memory before the first or the last pass (decision 17.11), or
	// another dispatch's kernel ran meanwhile (on another agent, MEM-6):
	// it may have changed an input the SDK does not save (decision 17.1),
	// or, from the snapshot on, one it saves (peer access, decision 18.3).
	from := firstK
	if len(d.snapshots) > 0 {
		from = min(from, d.snapshots[0])
	}
	if out := x.ev[firstK].MemOut; out != "" && out != got && !x.writtenBefore(d, firstK) && !x.writtenBefore(d, lastK) &&
		!x.otherKernelBetween(d.id, from, lastK) {
		return []Violation{x.violation("MEM-3", d.id, fmt.Sprintf("the application read %s after %s completed, one run (the first pass) gives %s", got, a.label, out), firstK, at)}
	}
	return nil
}

// writtenBefore reports whether, between dispatch d's previous kernel (or
// its snapshot) and its kernel k, that is between the memory the SDK made
// ready for the pass and the pass, a kernel ran that may have written the
// memory the pass starts from without breaking a rule: a dispatch the tool
// wrote from a callback (found by internal/specgen, decision 17.11), or a
// kernel on another agent, which may write this agent's memory through
// peer access while the loop holds only its own agent (MEM-6; found under
// free threads, decision 18.3). The trace does not say what such a kernel
// wrote. Another dispatch's kernel on d's own agent is not excused: it
// breaks MEM-6, which reports it.
func (x *index) writtenBefore(d *dispatchView, k int) bool {
	// The latest of d's snapshots and kernels before k (both lists are in
	// trace order): looked up, not collected, since MEM-2 asks for every
	// kernel of a loop.
	// Before the first, from the dispatch's CONFIG ENTER: what another
	// agent wrote earlier is in the snapshot, so in every pass's input
	// alike (and a trace without the SDK's snapshot events would else be
	// searched back to its start).
	from := firstOr(d.configEnter, 0) - 1
	if i := sort.SearchInts(d.kernels, k); i > 0 {
		from = d.kernels[i-1]
	}
	if i := sort.SearchInts(d.snapshots, k); i > 0 {
		from = max(from, d.snapshots[i-1])
	}
	ks := x.types[ekKernel]
	for j := sort.SearchInts(ks, from+1); j < len(ks) && ks[j] < k; j++ {
		o := &x.ev[ks[j]]
		if x.byTool[ks[j]] || (o.Dispatch != d.id && (d.agent == 0 || o.Agent != d.agent)) {
			return true
		}
	}
	return false
}

// otherKernelBetween reports whether a kernel of another dispatch than id
// ran between positions from and to.
func (x *index) otherKernelBetween(id uint64, from, to int) bool {
	ks := x.types[ekKernel]
	for j := sort.SearchInts(ks, from+1); j < len(ks) && ks[j] < to; j++ {
		if x.ev[ks[j]].Dispatch != id {
			return true
		}
	}
	return false
}

// maxRebuild bounds the elements an oracle hashes from runs.
const maxRebuild = 1 << 26

// allocOf is the memory kind and the agent the application allocated
// buffer with.
func (x *index) allocOf(buffer string) (trace.MemKind, uint64, bool) {
	for _, i := range x.types[ekAppAlloc] {
		if x.ev[i].Buffer == buffer {
			return x.ev[i].MemKind, x.ev[i].Agent, true
		}
	}
	return "", 0, false
}

// MEM-6: from the snapshot to CONFIG EXIT no other dispatch's kernel runs
// on the replaying agent.
func (x *index) checkExclusiveAgent(d *dispatchView, kernelsByAgent map[uint64][]int) []Violation {
	if d.agent == 0 {
		return nil
	}
	from := d.passEnter[0]
	if len(d.snapshots) > 0 && d.snapshots[0] < from {
		from = d.snapshots[0]
	}
	until := len(x.ev)
	if len(d.configExit) > 0 {
		until = d.configExit[0]
	} else if len(d.passExit) > 0 {
		until = d.passExit[len(d.passExit)-1]
	}
	ks := kernelsByAgent[d.agent]
	x.examined("MEM-6")
	for j := sort.SearchInts(ks, from); j < len(ks) && ks[j] < until; j++ {
		// The tool's own dispatch from the loop's callbacks runs on the
		// loop's thread, which holds the agent (decision 11).
		if other := &x.ev[ks[j]]; other.Dispatch != d.id && !(x.byTool[ks[j]] && other.Thread == d.thread) {
			return []Violation{x.violation("MEM-6", d.id, fmt.Sprintf("dispatch %d's kernel ran on agent %d while dispatch %d was replaying there", other.Dispatch, d.agent, d.id), from, ks[j], until)}
		}
	}
	return nil
}

// MEM-6 as the application and the tool see it, without the runtime's
// kernels: another thread's dispatch on the loop's agent that was written
// after the loop's first PASS ENTER (the agent's lock was held by then)
// and completed before its CONFIG EXIT (the lock was still held) ran on the
// agent inside the window; and a kernel of another dispatch whose record's
// times on that agent overlap the loop's passes ran beside them (the agent
// is drained before the snapshot, decision 11 lets only the loop thread's
// own tool dispatches in).
func (x *index) checkAgentHeldSeen(d *dispatchView) []Violation {
	if d.agent == 0 {
		return nil
	}
	from := d.passEnter[0]
	until := len(x.ev)
	if len(d.configExit) > 0 {
		until = d.configExit[0]
	} else if len(d.passExit) > 0 {
		until = d.passExit[len(d.passExit)-1]
	}
	judge := !x.has(trace.Kernel) // with kernels, checkExclusiveAgent counts the instance
	var vs []Violation
	examined := false
	x.inFlight().overlapping(from, until, func(w workSpan) bool {
		if w.agent != d.agent || w.thread == d.thread {
			return false
		}
		examined = true
		if w.done && w.start > from && w.end < until {
			vs = append(vs, x.violation("MEM-6", d.id, fmt.Sprintf("%s, on agent %d, was written after dispatch %d's first pass began and completed before its CONFIG EXIT: it ran while dispatch %d was replaying there", x.spanName(w), d.agent, d.id, d.id), from, w.start, w.end, until))
			return true
		}
		return false
	})
	if vs != nil {
		if judge {
			x.examined("MEM-6")
		}
		return vs
	}
	// The loop's passes as its own records time them.
	var lo, hi uint64
	for _, i := range d.records {
		e := &x.ev[i]
		if !dispatchScoped(e.Service) || e.Start == 0 || e.End < e.Start {
			continue
		}
		if lo == 0 || e.Start < lo {
			lo = e.Start
		}
		hi = max(hi, e.End)
	}
	if lo != 0 {
		recs, longest := x.timedRecords(d.agent)
		own := x.toolRecordsOn(d.thread)
		// Records that start before hi and may end after lo.
		k := sort.Search(len(recs), func(k int) bool { return x.ev[recs[k]].Start+longest > lo })
		for ; k < len(recs) && x.ev[recs[k]].Start < hi; k++ {
			e := &x.ev[recs[k]]
			if e.Dispatch == d.id || e.Dispatch == 0 || own[e.Dispatch] {
				continue
			}
			examined = true
			if e.End > lo {
				if judge {
					x.examined("MEM-6")
				}
				return []Violation{x.violation("MEM-6", d.id, fmt.Sprintf("dispatch %d's kernel ran on agent %d at %d..%d, while dispatch %d was replaying there (its passes ran %d..%d, by the tool's records)", e.Dispatch, d.agent, e.Start, e.End, d.id, lo, hi), d.passEnter[0], recs[k])}
			}
		}
	}
	if examined && judge {
		x.examined("MEM-6") // what the tool and the application saw decides it
	}
	return nil
}

// timedRecords are agent's dispatch-scoped records with times, sorted by
// start, and the longest of them.
func (x *index) timedRecords(agent uint64) ([]int, uint64) {
	if x.recordsByAgent == nil {
		x.recordsByAgent, x.longestRecord = map[uint64][]int{}, map[uint64]uint64{}
		for _, i := range x.types[ekRecord] {
			e := &x.ev[i]
			if !dispatchScoped(e.Service) || e.Start == 0 || e.End < e.Start {
				continue
			}
			x.recordsByAgent[e.Agent] = x.pushPos(x.recordsByAgent[e.Agent], i)
			x.longestRecord[e.Agent] = max(x.longestRecord[e.Agent], e.End-e.Start+1)
		}
		for _, list := range x.recordsByAgent {
			byStart := func(a, b int) int { return cmp.Compare(x.ev[a].Start, x.ev[b].Start) }
			if !slices.IsSortedFunc(list, byStart) { // records mostly come in time order
				slices.SortStableFunc(list, byStart)
			}
		}
	}
	return x.recordsByAgent[agent], x.longestRecord[agent]
}

// toolRecordsOn: the ids of the dispatches the tool wrote from callbacks on
// thread, as their records inside the tool's brackets show them.
func (x *index) toolRecordsOn(thread uint64) map[uint64]bool {
	if x.toolRecordIDs == nil {
		x.toolRecordIDs = map[uint64]map[uint64]bool{}
		for _, i := range x.types[ekRecord] {
			if e := &x.ev[i]; x.byTool[i] {
				if x.toolRecordIDs[e.Thread] == nil {
					x.toolRecordIDs[e.Thread] = map[uint64]bool{}
				}
				x.toolRecordIDs[e.Thread][e.Dispatch] = true
			}
		}
	}
	return x.toolRecordIDs[thread]
}

// spanName names a dispatch in flight for a message.
func (x *index) spanName(w workSpan) string {
	if w.tool {
		return fmt.Sprintf("the tool's dispatch %s", x.ev[w.start].Label)
	}
	return fmt.Sprintf("the application's dispatch %s", x.ev[w.start].Label)
}
