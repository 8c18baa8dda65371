package check

import (
	"fmt"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// The runtime's account of memory moved outside kernels (mem_read,
// mem_write) checks the SDK's account of itself (snapshot, restore) and the
// rules about what is saved: an SDK that snapshots silently, restores other
// bytes than it claims, or saves memory it must not is caught here.

// allocation is one buffer of the application, as app_alloc and app_free
// describe it.
type allocation struct {
	buffer      string
	agent       uint64
	kind        trace.MemKind
	addr, bytes uint64
	at, freedAt int // positions; freedAt is len(ev) while live
}

func (a allocation) holds(addr uint64) bool { return addr >= a.addr && addr < a.addr+a.bytes }

// allocations lists the application's buffers in allocation order.
func (x *index) allocations() []allocation {
	if x.allocs != nil {
		return *x.allocs
	}
	var out []allocation
	for _, i := range x.mergeSorted(x.types[ekAppAlloc], x.types[ekAppFree]) {
		e := &x.ev[i]
		if e.Type == trace.AppAlloc {
			out = append(out, allocation{buffer: e.Buffer, agent: e.Agent, kind: e.MemKind, addr: e.Addr, bytes: e.Bytes, at: i, freedAt: len(x.ev)})
			continue
		}
		for k := len(out) - 1; k >= 0; k-- {
			if out[k].addr == e.Addr && out[k].freedAt == len(x.ev) {
				out[k].freedAt = i
				break
			}
		}
	}
	x.allocs = &out
	return out
}

// allocationAt finds the buffer that holds addr at position pos.
func (x *index) allocationAt(addr uint64, pos int) (allocation, bool) {
	for _, a := range x.allocations() {
		if a.at < pos && pos < a.freedAt && a.holds(addr) {
			return a, true
		}
	}
	return allocation{}, false
}

// aborted reports whether d's loop ended on a restore that failed part-way
// (MEM-5: fatal): after its last PASS EXIT the runtime wrote memory that the
// SDK never reported as restored, no further pass ran and the window never
// closed. What comes after (CONFIG EXIT, the completion, the remaining
// passes) is not owed then: the process ended.
func (x *index) aborted(d *dispatchView) bool {
	if len(d.configExit) > 0 || len(d.neverEnded) > 0 || x.openLoop(d) {
		return false
	}
	if len(d.passExit) == 0 && x.hiddenLoop(d) {
		// No PASS callback shows the loop (decision 9): its passes are
		// its kernels, and the restore after the last one began
		// (found by internal/specgen, decision 17.4).
		if !x.header.Reports(trace.SourceRuntime) || !x.header.Reports(trace.SourceSDK) || len(d.kernels) == 0 {
			return x.endedInLoop(d)
		}
		n := len(d.kernels)
		tail := x.trafficOf(d, trace.MemWrite, d.kernels[n-1], len(x.ev))
		claimed := len(x.restoresByPass(d).get(uint64(n))) > 0
		return len(tail) > 0 && !claimed
	}
	if len(d.passExit) == 0 {
		return false
	}
	if !x.header.Reports(trace.SourceRuntime) || !x.header.Reports(trace.SourceSDK) {
		return x.endedInLoop(d)
	}
	n := len(d.passEnter)
	if len(d.passExit) < n {
		return false
	}
	tail := x.trafficOf(d, trace.MemWrite, x.exitOf(d, uint64(n-1)), len(x.ev))
	claimed := len(x.restoresByPass(d).get(uint64(n))) > 0
	return len(tail) > 0 && !claimed
}

// processDied says whether the process ended in a failed restore (MEM-5,
// decision 13): some dispatch's loop was aborted.
func (x *index) processDied() bool {
	if x.died == 0 {
		x.died = 1
		for _, d := range x.dispatches {
			if x.aborted(d) {
				x.died = 2
				break
			}
		}
	}
	return x.died == 2
}

// cutOff says that d's end is not owed: a failed restore ended the process
// in d's own loop (aborted), or in another's while d was still under way
// on its thread (no CONFIG EXIT, no completion, no never-ended report).
// Threads run on until the process ends, so another dispatch may have
// begun, or be half-way through its loop, when the trace stops (decision
// 17.19, found running generated specs through the C port).
func (x *index) cutOff(d *dispatchView) bool {
	if x.aborted(d) {
		return true
	}
	if len(d.configExit) > 0 || len(d.neverEnded) > 0 || !x.processDied() {
		return false
	}
	a := x.appOf(d)
	return a == nil || (len(a.complete) == 0 && len(a.timeout) == 0)
}

// diedBeforeRun: a failed restore on another thread ended the process
// before d's kernel ran (it waited for its agent's lock, say) and before
// anyone saw it complete (MEM-5): no run of it is owed.
func (x *index) diedBeforeRun(d *dispatchView) bool {
	if d == nil || len(d.kernels) > 0 || len(d.failedSnapshots) > 0 || !x.processDied() {
		return false
	}
	a := x.appOf(d)
	return a == nil || (len(a.complete) == 0 && len(a.timeout) == 0)
}

// diedBeforeFirstPass: d's loop was under way (the tool asked for one,
// and it was not declined) when a failed restore on another thread ended
// the process, before its first pass began and before its kernel ran. Its
// snapshot may have been taken; no pass is owed (MEM-5, decision 17.19;
// found under free threads on the C port, gen-205207).
func (x *index) diedBeforeFirstPass(d *dispatchView) bool {
	return len(d.passEnter) == 0 && len(d.kernels) == 0 && len(d.failedSnapshots) == 0 &&
		x.asksForLoop(d) && !x.declined(d) && x.cutOff(d)
}

// restoresByPass groups d's restore events by the pass they precede.
func (x *index) restoresByPass(d *dispatchView) *byPass[[]int] {
	if d.restoreByPass == nil {
		b := x.positionsByPass(d)
		for _, r := range d.restores {
			if p, ok := x.passOf(r); ok {
				b.set(p, x.pushPos(b.get(p), r))
			}
		}
		d.restoreByPass = &b
	}
	return d.restoreByPass
}

// restoredFrom: d has a restore before pass n or a later one.
func (x *index) restoredFrom(d *dispatchView, n uint64) bool {
	found := false
	x.restoresByPass(d).each(func(r []int) bool { return len(r) == 0 }, func(p uint64, _ []int) {
		found = found || p >= n
	})
	return found
}

// allocatedBefore finds the last buffer allocated at addr before position
// pos, freed since or not.
func (x *index) allocatedBefore(addr uint64, pos int) (allocation, bool) {
	var found allocation
	ok := false
	for _, a := range x.allocations() {
		if a.at < pos && a.holds(addr) {
			found, ok = a, true
		}
	}
	return found, ok
}

// trafficOf returns the runtime's events of type typ on d's thread and agent
// between positions from and to. It walks the thread's own events: the
// window may hold other threads' whole loops (a thread that waited for the
// agent's lock inside it), and those are not its business. The tool's own
// copies of memory (tool_memory) are the tool's, not the SDK's: left out.
func (x *index) trafficOf(d *dispatchView, typ trace.Type, from, to int) []int {
	return x.trafficInto(nil, d, typ, from, to)
}

// trafficInto is trafficOf appended to out.
func (x *index) trafficInto(out []int, d *dispatchView, typ trace.Type, from, to int) []int {
	list := x.byThread[d.thread]
	want := evKindOf(typ)
	for j := sort.SearchInts(list, from); j < len(list) && list[j] < to; j++ {
		if x.col[list[j]].kind != want || x.toolReads[list[j]] {
			continue // read without touching the event
		}
		e := &x.ev[list[j]]
		if e.Type == typ && (e.Agent == d.agent || d.agent == 0) && !(j > 0 && x.fillsAlloc(list[j-1], list[j])) {
			out = append(out, list[j])
		}
	}
	return out
}

// fillsAlloc reports whether the runtime's write w, next on its thread
// after the application's allocation a, is the application filling the
// buffer it just made (a tool that allocates from a callback does so
// inside a loop's window, between a pass and the next restore), not the
// SDK's doing.
func (x *index) fillsAlloc(a, w int) bool {
	al, wr := &x.ev[a], &x.ev[w]
	if al.Type != trace.AppAlloc || wr.Type != trace.MemWrite {
		return false
	}
	for _, g := range wr.Regions {
		if g.Addr < al.Addr || g.Addr+g.Bytes > al.Addr+al.Bytes {
			return false
		}
	}
	return len(wr.Regions) > 0
}

func (x *index) bytesOf(list []int) uint64 {
	var n uint64
	for _, i := range list {
		n += x.ev[i].Bytes
	}
	return n
}

// checkTraffic compares what the runtime moved for d with what the SDK
// reported and with what MEM-4 allows to be saved.
func (x *index) checkTraffic(d *dispatchView) []Violation {
	if !x.header.Reports(trace.SourceRuntime) {
		return nil
	}
	// The window opens at CONFIG ENTER, or for a dispatch that was no
	// candidate, when the application wrote it; it closes at the first
	// pass, or the plain run (for a candidate that never ran, at the end
	// of the trace; for a dispatch that was no candidate, at its
	// completion or the end of the application's window, before its
	// read-backs).
	start := -1
	firstWork := len(x.ev)
	on := d
	if len(d.configEnter) > 0 {
		start = d.configEnter[0]
	} else if a := x.appOf(d); a != nil {
		start, firstWork = a.at, a.end
		for _, list := range [][]int{a.complete, a.timeout} {
			if len(list) > 0 && list[0] > a.at {
				firstWork = min(firstWork, list[0])
			}
		}
		if d.thread == 0 {
			// No CONFIG ENTER and no dispatch_id event gave its thread
			// (docs/ports.md O5): the application's, which wrote it.
			on = &dispatchView{thread: a.thread, agent: d.agent}
		}
	}
	if start < 0 {
		return nil
	}
	var vs []Violation
	if len(d.passEnter) > 0 {
		firstWork = d.passEnter[0]
	} else if len(d.kernels) > 0 {
		firstWork = min(firstWork, d.kernels[0])
	}
	reads := x.trafficOf(on, trace.MemRead, start, firstWork)
	sdk := x.header.Reports(trace.SourceSDK)
	switch {
	case len(d.snapshots) == 0 && x.diedBeforeRun(d) && !slices.ContainsFunc(reads, func(i int) bool { return x.ev[i].Thread == d.thread }):
		// A failed restore on another thread ended the process before this
		// dispatch took a snapshot or ran (it waited for its agent, say):
		// nothing was saved, and nothing is owed (MEM-5). The reads are
		// other threads'.
	case len(d.configEnter) > 0 && len(d.failedSnapshots) == 0 && x.hiddenLoop(d) && (sdk || len(d.kernels) > 1 || !x.snapshotMayHaveFailed(d)):
		// Replayed with no PASS callback to show it (decision 9, docs/ports.md
		// D3): the reads are its snapshot, not a snapshot of a dispatch left
		// unreplayed. With the SDK's account, its snapshot is the one read
		// and says what was read; without it, the reads are all there is
		// (docs/ports.md O5). Without the SDK, one kernel may be a loop
		// that never began (a failed snapshot, MEM-5): the case below,
		// unless the trace carries the warnings and none said so.
		x.examined("MEM-1")
		vs = append(vs, x.checkSavedKinds(d, reads, firstWork)...)
		if !sdk {
			break
		}
		switch {
		case len(d.snapshots) == 0 && len(reads) > 0:
			vs = append(vs, x.violation("MEM-1", d.id, fmt.Sprintf("dispatch %d was replayed out of the tool's sight, and the runtime read %d bytes of device memory before it ran, but the SDK reports no snapshot: a silent snapshot", d.id, x.bytesOf(reads)), append([]int{start}, reads...)...))
		case len(d.snapshots) == 1:
			if claim, seen := x.ev[d.snapshots[0]].Bytes, x.bytesOf(reads); claim != seen {
				vs = append(vs, x.violation("MEM-1", d.id, fmt.Sprintf("the SDK says its snapshot of dispatch %d saved %d bytes; the runtime read %d", d.id, claim, seen), append([]int{d.snapshots[0]}, reads...)...))
			}
		}
	case !d.replayed() && x.diedBeforeFirstPass(d):
		// Its loop began, and the process ended before its first pass: the
		// reads on its thread are its snapshot, of saved memory only.
		x.examined("MEM-1")
		vs = append(vs, x.checkSavedKinds(d, reads, firstWork)...)
	case !d.replayed() && !sdk && len(reads) > 0 && x.asksForLoop(d) && !x.declined(d) && x.snapshotMayHaveFailed(d):
		// The tool asked for a loop that never began: only a snapshot that
		// could not be completed excuses that (MEM-5), and it may have read
		// memory before it failed. Without the SDK's report of the failure
		// the reads cannot be told from a silent snapshot: not judged, as
		// PC-3 is not (docs/ports.md O1, O5), unless no snapshot_incomplete
		// warning was printed.
	case !d.replayed() && len(d.failedSnapshots) == 0:
		// MEM-1: no snapshot for a dispatch that is not replayed, said or
		// silent.
		x.examined("MEM-1")
		if len(reads) > 0 && len(d.snapshots) == 0 {
			vs = append(vs, x.violation("MEM-1", d.id, fmt.Sprintf("dispatch %d is not replayed, yet the runtime read %d bytes of device memory before it ran: a snapshot the SDK did not report", d.id, x.bytesOf(reads)), append([]int{start}, reads...)...))
		}
	case d.replayed():
		x.examined("MEM-1")
		if sdk && len(d.snapshots) == 1 {
			if claim, seen := x.ev[d.snapshots[0]].Bytes, x.bytesOf(reads); claim != seen {
				vs = append(vs, x.violation("MEM-1", d.id, fmt.Sprintf("the SDK says its snapshot of dispatch %d saved %d bytes; the runtime read %d", d.id, claim, seen), append([]int{d.snapshots[0]}, reads...)...))
			}
		}
		vs = append(vs, x.checkSavedKinds(d, reads, firstWork)...)
		vs = append(vs, x.checkRestoreTraffic(d, sdk)...)
	}
	return vs
}

// MEM-4: the snapshot reads the agent's coarse-grained device buffers, all
// of them, and nothing else: never fine-grained, host or kernel-argument
// memory.
func (x *index) checkSavedKinds(d *dispatchView, reads []int, at int) []Violation {
	if len(x.types[ekAppAlloc]) == 0 {
		return nil
	}
	x.examined("MEM-4")
	var vs []Violation
	saved := map[string]bool{}
	for _, i := range reads {
		for _, g := range x.ev[i].Regions {
			a, ok := x.allocationAt(g.Addr, i)
			if !ok {
				continue // device globals and other memory the SDK may track
			}
			saved[a.buffer] = true
			if !a.kind.Saved() {
				vs = append(vs, x.violation("MEM-4", d.id, fmt.Sprintf("the snapshot of dispatch %d read %d bytes of buffer %s, which is %s memory: only coarse-grained device memory is saved", d.id, g.Bytes, a.buffer, a.kind), a.at, i))
			}
		}
	}
	configured := -1 // ACT-4: the tracker is on from the replay configuration
	for _, c := range x.replayConfigs() {
		if x.ev[c].Status.Is(trace.StatusSuccess) {
			configured = c
			break
		}
	}
	// The SDK listed what it tracks after it took the dispatch's write and
	// before its snapshot read anything; an allocation or free is made
	// inside the call its event follows. A buffer another thread allocated
	// or freed meanwhile may be either side of the listing (found under
	// free threads, decision 18.6): only one live all along is owed.
	lo, _ := x.writeWindow(d)
	hi := at
	if len(reads) > 0 {
		hi = min(hi, reads[0])
	}
	if len(d.snapshots) > 0 {
		hi = min(hi, d.snapshots[0])
	}
	for _, a := range x.allocations() {
		if !a.kind.Saved() || a.agent != d.agent || a.at > lo || (a.freedAt < len(x.ev) && x.prevOnThread(a.freedAt) < hi) {
			continue
		}
		tracked := configured >= 0 && a.at > configured
		if tracked {
			x.examined("ACT-4")
		}
		if saved[a.buffer] {
			continue
		}
		ev := append([]int{a.at, at}, reads...)
		vs = append(vs, x.violation("MEM-4", d.id, fmt.Sprintf("device buffer %s lives on dispatch %d's agent, but its snapshot did not read it", a.buffer, d.id), ev...))
		if tracked {
			vs = append(vs, x.violation("ACT-4", d.id, fmt.Sprintf("buffer %s was allocated after replay was configured, so the tracker should know it, yet the snapshot left it out", a.buffer), ev...))
		}
		break
	}
	return vs
}

// MEM-2, MEM-4: what the runtime wrote before each pass is what the SDK
// says it restored, and never a buffer freed since the snapshot.
func (x *index) checkRestoreTraffic(d *dispatchView, sdk bool) []Violation {
	var vs []Violation
	if n := x.passesRun(d); sdk && len(d.passEnter) > 0 && len(d.passExit) > 0 {
		// After the last pass: a restore the runtime began and the SDK
		// never completed stopped the loop (MEM-5: fatal, not silent).
		end := len(x.ev)
		if len(d.configExit) > 0 {
			end = d.configExit[0]
		}
		tail := x.trafficOf(d, trace.MemWrite, x.exitOf(d, uint64(n-1)), end)
		claimed := x.restoredFrom(d, uint64(n))
		if len(tail) > 0 && !claimed {
			x.examined("MEM-5")
		}
	}
	var scratch []int // each pass's writes in turn: a slice a pass was most of judging's allocations
	for k := 1; k < len(d.passEnter); k++ {
		p := k // the pass, past those a part of a loop leaves out
		if n, from := x.elided(d); n > 0 && uint64(k) >= from {
			p = k + n
		}
		from := x.exitOf(d, uint64(p-1))
		writes := x.trafficInto(scratch[:0], d, trace.MemWrite, from, d.passEnter[k])
		scratch = writes
		if len(writes) > 0 {
			x.examinedAt(slotMEM2) // the runtime saw memory written back before this pass
		}
		for _, i := range writes {
			for _, g := range x.ev[i].Regions {
				a, ok := x.allocatedBefore(g.Addr, i)
				switch {
				case !ok:
				case a.freedAt < i:
					vs = append(vs, x.violation("MEM-4", d.id, fmt.Sprintf("the restore before pass %d wrote into buffer %s, freed since the snapshot", p, a.buffer), a.freedAt, i))
				case x.prevOnThread(a.at) > d.passEnter[0]:
					// Allocated after the loop's first pass began, so after
					// its snapshot: the address held a region freed since
					// (MEM-4: a restore skips a region freed or reallocated).
					vs = append(vs, x.violation("MEM-4", d.id, fmt.Sprintf("the restore before pass %d wrote into buffer %s, allocated at %#x after the snapshot: a region freed or reallocated since the snapshot must be skipped", p, a.buffer, g.Addr), a.at, i))
				}
			}
		}
		if !sdk {
			continue
		}
		claim := x.restoresByPass(d).get(uint64(p))
		// MEM-5: memory was written but the SDK never finished the restore,
		// yet the pass ran: a wrong result, silently.
		x.examinedAt(slotMEM5)
		if len(claim) == 0 && len(writes) > 0 {
			vs = append(vs, x.violation("MEM-5", d.id, fmt.Sprintf("the runtime wrote %d bytes before pass %d but the SDK reports no completed restore, and the pass ran anyway", x.bytesOf(writes), p), append(writes, d.passEnter[k])...))
		}
		if len(claim) == 1 {
			if c, seen := x.ev[claim[0]].Bytes, x.bytesOf(writes); c != seen {
				vs = append(vs, x.violation("MEM-2", d.id, fmt.Sprintf("the SDK says it restored %d bytes before pass %d; the runtime wrote %d", c, p, seen), append(claim, writes...)...))
			}
		}
	}
	return vs
}

// endedInLoop: without the accounts of the runtime and the SDK, a process
// that died in d's loop shows only as a loop whose thread's last word from
// the tool and the application was d's: no CONFIG EXIT, no completion, no
// timeout, and no read-back at the end of the run.
func (x *index) endedInLoop(d *dispatchView) bool {
	a := x.appOf(d)
	switch {
	case a == nil && !x.toolNeverCompleted(d):
		return false // neither the application's nor a tool's dispatch left waiting
	case a != nil && (len(a.complete) > 0 || len(a.timeout) > 0):
		return false
	}
	// The loop's last event the tool saw: its last PASS EXIT, or in a
	// loop no PASS callback shows, its last consultation or CONFIG ENTER.
	last := -1
	for _, list := range [][]int{d.passExit, d.continues, d.passCounts, d.configEnter} {
		if len(list) > 0 {
			last = max(last, list[len(list)-1])
		}
	}
	if last < 0 {
		return false
	}
	if len(d.passEnter) > 0 && d.passEnter[len(d.passEnter)-1] > last {
		// Its last word was a PASS ENTER: it was inside a pass, not in a
		// restore (a callback of its that never returned is a hang, or a
		// nested window's death, which that window shows).
		return false
	}
	// The loop's thread said nothing more of its own: an application
	// thread whose launch returns records the completion or the timeout,
	// so its launch never returned. Other threads may have run on until
	// the process ended (decision 17.19), but the application never read
	// its memory back at the end, as a process that lives on does.
	pos := x.byThread[d.thread]
	// Until that callback returns, what the tool does from it (a free, an
	// allocation: memory-actions) is the loop's own too (decision 17.20).
	inside := x.ev[last].Type == trace.Callback
	for j := sort.SearchInts(pos, last+1); j < len(pos); j++ {
		e := &x.ev[pos[j]]
		if e.Type == trace.Returned && e.Dispatch == d.id {
			inside = false
		}
		if inside || e.Dispatch == d.id || x.byTool[pos[j]] || e.Type == trace.ToolDispatch || e.Type == trace.ToolComplete {
			continue // the loop's own, and the tool's dispatch from its callback
		}
		if src, _ := e.Type.Source(); src == trace.SourceTool || src == trace.SourceApp {
			return false
		}
	}
	for _, i := range x.types[ekAppMemory] {
		if i > last {
			return false
		}
	}
	return true
}
