package check

import (
	"slices"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// contextIn says what the trace proves about context ctx's global state at
// every moment strictly between positions lo and hi: on (started all
// along), off (stopped all along), or neither when some consistent reading
// of the trace has it one way and another the other way. known is false
// when the trace records none of the tool's calls: then nothing can be said
// and callers judge nothing.
//
// A start_context or stop_context takes effect inside the call, and its api
// event is recorded when the call returns: somewhere after the calling
// thread's previous event and before the api event. Under free threads
// another thread's events fall in between (found under free threads,
// decision 18.1), so the trace only bounds the moment; so does it the
// moment an SDK read the started contexts for a dispatch (see
// writeWindow). A call whose whole span lies before lo counts; one whose
// span reaches into (lo, hi) may have taken effect on either side, so its
// state is possible too.
func (x *index) contextIn(ctx uint64, lo, hi int) (on, off, known bool) {
	if !x.has(trace.API) {
		return false, false, false
	}
	type call struct {
		from, at int // the effect lies after from and before at
		on       bool
	}
	var before, spanning []call
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
		if e.Context != ctx || !e.Status.Is(trace.StatusSuccess) || (e.Call != trace.CallStartContext && e.Call != trace.CallStopContext) {
			continue
		}
		c := call{from: x.prevOnThread(i), at: i, on: e.Call == trace.CallStartContext}
		switch {
		case c.at <= lo:
			before = append(before, c)
		case c.from < hi:
			spanning = append(spanning, c)
		}
	}
	// The states possible at lo: a context starts stopped; after calls,
	// what any call that may have taken effect last left.
	possible := map[bool]bool{}
	if len(before) == 0 {
		possible[false] = true
	}
	for k, c := range before {
		last := true
		for j, o := range before {
			if j != k && o.from >= c.at {
				last = false // o surely took effect after c
				break
			}
		}
		if last {
			possible[c.on] = true
		}
	}
	for _, c := range spanning {
		possible[c.on] = true
	}
	return possible[true] && !possible[false], possible[false] && !possible[true], true
}

// contextActive says whether ctx was surely started at every moment
// between lo and hi; known as contextIn's.
func (x *index) contextActive(ctx uint64, lo, hi int) (active, known bool) {
	on, _, known := x.contextIn(ctx, lo, hi)
	return on, known
}

// contextInactive says whether ctx was surely stopped at every moment
// between lo and hi; known as contextIn's.
func (x *index) contextInactive(ctx uint64, lo, hi int) (inactive, known bool) {
	_, off, known := x.contextIn(ctx, lo, hi)
	return off, known
}

// prevOnThread is the position of the event recorded before i on i's
// thread, -1 when none: a call recorded at i began after it. Events that
// name no thread (0) come from anywhere (the runtime's traffic under free
// threads, warnings); among them only those of i's own source are taken
// to be in program order with it (the tool's calls while setting up).
func (x *index) prevOnThread(i int) int {
	if x.seams != nil && i < len(x.seams.prologueFrom) {
		return x.seams.prologueFrom[i] // carried from an earlier segment (stream.go)
	}
	th := x.ev[i].Thread
	pos := x.byThread[th]
	k, _ := slices.BinarySearch(pos, i)
	if th != 0 {
		if k > 0 {
			return pos[k-1]
		}
		return -1
	}
	// A walk back among the events of no thread, asked again and again of
	// the same few (an allocation, before every pass of a loop): kept.
	if at, ok := x.prevNoThread[i]; ok {
		return at
	}
	at := -1
	src, _ := x.ev[i].Type.Source()
	for k--; k >= 0; k-- {
		if s, _ := x.ev[pos[k]].Type.Source(); s == src {
			at = pos[k]
			break
		}
	}
	if x.prevNoThread == nil {
		x.prevNoThread = map[int]int{}
	}
	x.prevNoThread[i] = at
	return at
}

// writeWindow bounds the moment the SDK took dispatch d's write and read
// which contexts were started, the moment the dispatch's window opened
// (ACT-1, decision 12): after lo and before hi. lo is the application's
// dispatch whose window holds d (the write comes after it), else the
// thread's event before d's first one; hi is d's first event that follows
// the decision: its CONFIG ENTER, a pass, its snapshot, its kernel, a
// record, CONFIG EXIT, or the application's completion.
func (x *index) writeWindow(d *dispatchView) (lo, hi int) {
	hi = x.decidedBy(d, x.appOf(d))
	first := min(hi, firstOr(d.reserves, hi), firstOr(d.correlations, hi), firstOr(d.passCounts, hi))
	lo = -1
	if a := x.appAround(d.thread, first); a != nil {
		lo = a.at
	}
	if lo < 0 && first < len(x.ev) {
		lo = x.prevOnThread(first)
	}
	return lo, hi
}

// decidedBy is the first position by which the SDK had decided whether d
// is replayed (len(ev) when nothing shows it).
func (x *index) decidedBy(d *dispatchView, a *appView) int {
	hi := len(x.ev)
	if a != nil {
		hi = min(a.end, firstOr(a.complete, hi), firstOr(a.timeout, hi))
	}
	if d == nil {
		return hi
	}
	for _, l := range [][]int{d.configEnter, d.configExit, d.passEnter, d.snapshots, d.failedSnapshots, d.kernels, d.records} {
		hi = min(hi, firstOr(l, hi))
	}
	return hi
}

// replayConfigs returns the api events that configured KERNEL_REPLAY.
func (x *index) replayConfigs() []int {
	var out []int
	for _, i := range x.types[ekAPI] {
		e := &x.ev[i]
		if e.Call == trace.CallConfigureCallback && e.Domain == trace.DomainKernelReplay {
			out = append(out, i)
		}
	}
	return out
}

// coversConfig reads a configure call's operations: none subscribes to
// everything (ACT-2); else CONFIG must be listed.
func coversConfig(e *trace.Event) bool {
	if len(e.Operations) == 0 {
		return true
	}
	for _, op := range e.Operations {
		if trace.Op(strings.TrimPrefix(strings.ToUpper(string(op)), "ROCPROFILER_KERNEL_REPLAY_")) == trace.OpConfig {
			return true
		}
	}
	return false
}
