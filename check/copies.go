package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/trace"
)

// What the tool copied of the application's memory from inside its PASS
// callbacks (tool_memory, docs/trace.md) decides restores at every profile,
// the black-box one included: the memory each pass starts from (PASS ENTER)
// and leaves (PASS EXIT), buffer by buffer, against what the application
// reads back. Between a pass's EXIT and the next pass's ENTER only the
// SDK's restore may change memory (REFERENCE.md: restore follows continue
// and precedes PASS ENTER); a copy taken first in the callback comes before
// anything the tool does there.
//
// Under free threads the copies are judged only where nothing else can
// have written memory between them (otherWorkIn): another thread's
// dispatch on another agent in flight (peer access, decision 18.3), a
// dispatch the tool wrote from a callback where it is not undone by a
// restore, or, after the loop, any other dispatch at all.

// passCopies is one loop's copies by pass.
type passCopies struct {
	enter, exit byPass[*memCopy]
}

// memCopy is one copy of the application's buffers, taken in one callback.
type memCopy struct {
	from, to int           // the callback it was taken in; its last tool_memory
	buffers  copiedBuffers // buffer -> its tool_memory event
}

// copiedBuffers maps each buffer of one copy to its (first) tool_memory
// event, sorted by name: a copy holds a few buffers, and a map per pass
// and phase was most of what judging a long loop allocated.
type copiedBuffers []copiedBuffer

type copiedBuffer struct {
	name   string
	at     int
	digest string // the event's, kept here: oracles compare them pass by pass
}

// find returns buffer's place in c, and whether it is there. A copy of a
// few buffers is searched in turn: most hold one, and its name is most
// often the very string asked for, told equal at once (a binary search
// compared the strings' bytes, a third of judging the copies of a pass).
func (c copiedBuffers) find(buffer string) (int, bool) {
	if len(c) > 8 {
		return slices.BinarySearchFunc(c, buffer, func(b copiedBuffer, name string) int { return strings.Compare(b.name, name) })
	}
	for k := range c {
		if c[k].name == buffer {
			return k, true
		}
		if c[k].name > buffer {
			return k, false
		}
	}
	return len(c), false
}

// pos is buffer's tool_memory event, 0 when the copy has none.
func (c copiedBuffers) pos(buffer string) int {
	if k, ok := c.find(buffer); ok {
		return c[k].at
	}
	return 0
}

// addFirst records buffer's copy at i, of digest, unless it is there
// already.
func (c *copiedBuffers) addFirst(buffer string, i int, digest string) {
	if len(*c) == 0 { // most copies are of one buffer
		*c = append(*c, copiedBuffer{buffer, i, digest})
		return
	}
	if k, ok := c.find(buffer); !ok {
		*c = slices.Insert(*c, k, copiedBuffer{buffer, i, digest})
	}
}

func (c *memCopy) digest(x *index, buffer string) (string, bool) {
	if c == nil {
		return "", false
	}
	k, ok := c.buffers.find(buffer)
	if !ok {
		return "", false
	}
	return c.buffers[k].digest, true
}

// copiesOf groups d's tool_memory events by pass and phase.
func (x *index) copiesOf(d *dispatchView) *passCopies {
	if d.copied != nil {
		return d.copied
	}
	pc := &passCopies{enter: newByPass[*memCopy](x, d), exit: newByPass[*memCopy](x, d)}
	// One array for the copies and one for their buffers: there are at
	// most as many copies, and buffers, as tool_memory events, so taking
	// each from its array never moves one already taken. A callback's
	// copies come together: a copy takes the rest of places, and leaves
	// what it did not fill to the next (one more buffer for it after that
	// moves it to an array of its own).
	copies := x.memCopies.take(len(d.copies))
	places := x.places.take(len(d.copies))[:len(d.copies)]
	var last *memCopy
	for _, i := range d.copies {
		p, ok := x.passOf(i)
		if !ok {
			continue
		}
		by, from := &pc.enter, i
		switch x.opPhaseAt(i) { // PASS and its phase, from the column: the event is read below for its buffer only
		case cbPassEnter:
			if w := x.window(i); w.open && w.dispatch == d.id && w.pass == p {
				from = w.enter
			}
		case cbPassExit:
			by = &pc.exit
			if at := x.exitOf(d, p); at > 0 && at < i {
				from = at
			}
		default:
			continue
		}
		c := by.get(p)
		if c == nil {
			if last != nil {
				places = places[len(last.buffers):]
				last.buffers = slices.Clip(last.buffers)
			}
			copies = append(copies, memCopy{from: from, to: i, buffers: places[:0]})
			c = &copies[len(copies)-1]
			last = c
			by.set(p, c)
		}
		c.from, c.to = min(c.from, from), max(c.to, i)
		buffer, digest := x.copyOf(i) // from the columns: the event is not read
		c.buffers.addFirst(buffer, i, digest)
	}
	d.copied = pc
	return pc
}

// bufferFacts is what checkCopies learns of one buffer of a loop, once.
type bufferFacts struct {
	name       string
	saved      savedness
	why        string     // why it is not saved (savednessOf)
	alloc      allocation // the application's allocation of it
	asSnapshot bool       // pass 0's copy of it stands for the snapshot
}

// savedness is what MEM-4 owes one buffer in one loop.
type savedness int

const (
	unknownSaved savedness = iota // it may or may not be saved: not judged
	saved                         // coarse-grained device memory of the loop's agent, live before the loop
	notSaved                      // another kind, another agent's, or allocated after the snapshot
)

// savednessOf says whether d's snapshot owes buffer; why names the reason
// it is not saved. lo is d's writeWindow's lower bound: what was allocated
// before it, the SDK had when it took the write.
func (x *index) savednessOf(d *dispatchView, buffer string, lo int) (s savedness, why string, a allocation) {
	a, ok := x.allocationNamed(buffer)
	if !ok {
		return unknownSaved, "", a
	}
	switch {
	case !a.kind.Saved():
		return notSaved, fmt.Sprintf("%s memory", a.kind), a
	case d.agent != 0 && a.agent != d.agent:
		return notSaved, fmt.Sprintf("agent %d's memory", a.agent), a
	}
	if a.at < lo {
		return saved, "", a
	}
	// Allocated after the loop's first PASS ENTER: surely after its
	// snapshot, so no restore may touch it (MEM-4).
	if len(d.passEnter) > 0 && x.prevOnThread(a.at) > d.passEnter[0] {
		return notSaved, "allocated since the snapshot", a
	}
	return unknownSaved, "", a
}

// allocationNamed is the application's (first) allocation of buffer.
func (x *index) allocationNamed(buffer string) (allocation, bool) {
	if x.allocByName == nil {
		x.allocByName = map[string]int{}
		for k, a := range x.allocations() {
			if _, dup := x.allocByName[a.buffer]; !dup {
				x.allocByName[a.buffer] = k
			}
		}
	}
	k, ok := x.allocByName[buffer]
	if !ok {
		return allocation{}, false
	}
	return x.allocations()[k], true
}

// workSpan is a dispatch in flight: written at start, done by end.
type workSpan struct {
	thread, agent uint64
	dispatch      uint64 // an application's: the SDK's id for it (0: not known)
	start, end    int
	done          bool     // end is its completion (else only a bound)
	tool          bool     // a dispatch the tool wrote from a callback
	args          []string // the buffers its kernel takes; nil: not said
}

// writes reports whether w's kernel may write buffer ("": any): a kernel
// writes through its arguments only, and a dispatch that does not name
// them may write anything.
func (w workSpan) writes(buffer string) bool {
	return buffer == "" || w.args == nil || slices.Contains(w.args, buffer)
}

// flights is every dispatch in flight, sorted by start, with the latest end
// among each prefix, so that those overlapping a stretch are found without
// a walk of the whole trace.
type flights struct {
	spans  []workSpan
	maxEnd []int // maxEnd[i]: the latest end among spans[:i+1]
}

// overlapping calls f for each span that starts before hi and ends after
// lo, until f returns true; it reports whether one did.
func (fl *flights) overlapping(lo, hi int, f func(w workSpan) bool) bool {
	from := sort.Search(len(fl.maxEnd), func(i int) bool { return fl.maxEnd[i] > lo })
	to := sort.Search(len(fl.spans), func(i int) bool { return fl.spans[i].start >= hi })
	for _, w := range fl.spans[from:max(from, to)] {
		if w.end > lo && f(w) {
			return true
		}
	}
	return false
}

// inFlight lists every dispatch of the trace with the stretch in which its
// kernel may run: an application's from app_dispatch to its completion (or
// timeout, else the thread's next dispatch), a tool's from tool_dispatch to
// tool_complete.
func (x *index) inFlight() *flights {
	if x.spans != nil {
		return x.spans
	}
	var out []workSpan
	for _, a := range x.apps {
		end, done := a.end, false
		for _, i := range a.complete {
			if i > a.at && i < end {
				end, done = i, true
			}
		}
		for _, i := range a.timeout {
			if i > a.at && i < end {
				end, done = i, false
			}
		}
		out = append(out, workSpan{thread: a.thread, agent: x.ev[a.at].Agent, dispatch: a.dispatch, start: a.at, end: end, done: done, args: x.ev[a.at].Args})
	}
	for _, i := range x.types[ekToolDispatch] {
		e := &x.ev[i]
		end, done := len(x.ev), false
		pos := x.byThread[e.Thread]
		k, _ := slices.BinarySearch(pos, i)
		// Its own completion: a dispatch the tool writes from inside this
		// one's window (MEM-6, nested) completes on the same thread first.
		for _, j := range pos[k+1:] {
			if f := &x.ev[j]; f.Type == trace.ToolComplete && sameToolDispatch(e, f) {
				end, done = j, true
				break
			}
		}
		out = append(out, workSpan{thread: e.Thread, agent: e.Agent, start: i, end: end, done: done, tool: true, args: e.Args})
	}
	slices.SortStableFunc(out, func(a, b workSpan) int { return a.start - b.start })
	fl := &flights{spans: out, maxEnd: make([]int, len(out))}
	for i, w := range out {
		fl.maxEnd[i] = w.end
		if i > 0 {
			fl.maxEnd[i] = max(w.end, fl.maxEnd[i-1])
		}
	}
	x.spans = fl
	return fl
}

// freedIn: the application freed buffer b between positions lo and hi; the
// tool's later copy of b reads whatever took its place (found under free
// threads: another thread freed it and allocated a buffer at its address,
// gen-001319).
func (x *index) freedIn(b string, lo, hi int) bool {
	for _, i := range x.types[ekAppFree] {
		if i > lo && i < hi && x.ev[i].Buffer == b {
			return true
		}
	}
	return false
}

// restoredByOther: another thread's loop may have written buffer b back
// between positions lo and hi, to what d's copy then read (now). A loop's
// restore writes back its own agent's saved memory, which d's kernel on
// another agent may write too (peer access, decision 18.3), so b may change
// between d's copies though d's restore never touched it (found under free
// threads on the C port, gen-206283, gen-213313). With the SDK's account
// its restore event says where it wrote, recorded with its copy (decision
// 18.8). Without it, the other loop must have been between two of its
// passes then, and b must read at one of its PASS ENTERs as d's copy read
// it: what its restores bring back. a is b's allocation (allocationNamed,
// the zero allocation when none is known), which the caller knows.
func (x *index) restoredByOther(d *dispatchView, b, now string, lo, hi int, a allocation) bool {
	if !a.kind.Saved() || a.agent == d.agent {
		return false // only another agent's saved memory is another loop's to restore
	}
	if x.header.Reports(trace.SourceSDK) {
		for _, r := range x.types[ekRestore] {
			if r <= lo || r >= hi || x.ev[r].Dispatch == d.id {
				continue
			}
			for _, reg := range x.ev[r].Regions {
				if at, live := x.allocationAt(reg.Addr, r); live && at.buffer == b {
					return true
				}
			}
		}
		return false
	}
	for _, o := range x.dispatches {
		if o == d || o.thread == d.thread || o.agent != a.agent || len(o.passEnter) == 0 {
			continue
		}
		oc := x.copiesOf(o)
		for j := 1; j <= len(o.passEnter); j++ {
			if j == len(o.passEnter) && !x.cutOff(o) {
				break // after its last pass o restores nothing (MEM-3)
			}
			from, to := x.exitOf(o, uint64(j-1)), len(x.ev)
			if q, ok := x.passOf(max(from, 0)); from <= 0 || !ok || q != uint64(j-1) {
				continue // pass j-1's EXIT not seen
			}
			if j < len(o.passEnter) {
				to = o.passEnter[j]
			}
			if from >= hi || to <= lo {
				continue // no restore of o's could fall between d's copies
			}
			found := false
			oc.enter.each(func(c *memCopy) bool { return c == nil }, func(_ uint64, c *memCopy) {
				if dg, ok := c.digest(x, b); ok && dg == now {
					found = true
				}
			})
			if found {
				return true
			}
		}
	}
	return false
}

// sameToolDispatch: f is the tool_complete of tool_dispatch e, by its
// signal where the trace names one, else by its label.
func sameToolDispatch(e, f *trace.Event) bool {
	if e.Signal != 0 && f.Signal != 0 {
		return e.Signal == f.Signal
	}
	return e.Label == f.Label
}

// otherWorkIn reports whether something other than d's own passes and
// restores may have written buffer ("": any) between positions lo and hi:
// another thread's dispatch in flight on another agent (on d's agent too
// when sameAgent: after the loop, where its lock no longer holds them
// back), or a dispatch the tool wrote on d's thread when ownTool.
func (x *index) otherWorkIn(d *dispatchView, lo, hi int, sameAgent, ownTool bool, buffer string) bool {
	return x.inFlight().overlapping(lo, hi, func(w workSpan) bool {
		switch {
		case !w.writes(buffer):
			return false
		case w.thread == d.thread:
			return w.tool && ownTool
		case w.agent != d.agent || d.agent == 0:
			return true
		}
		// On d's agent another dispatch waits for the loop's lock, held
		// until CONFIG EXIT (MEM-6): it can run only after that.
		return sameAgent && (len(d.configExit) == 0 || w.end > d.configExit[0])
	})
}

// checkCopies judges d's restores from the tool's copies: MEM-2 (every
// pass starts from the memory pass 0 started from), MEM-4 and ACT-4 (the
// restore writes back every saved buffer and nothing else), MEM-3 (nothing
// touches memory after the last pass, and it holds one run's result).
func (x *index) checkCopies(d *dispatchView) []Violation {
	if len(d.copies) == 0 || len(d.passEnter) == 0 {
		return nil
	}
	pc := x.copiesOf(d)
	e0 := pc.enter.get(0)
	if e0 == nil {
		return nil
	}
	var vs []Violation
	// What each buffer is to this loop, learned once and asked every
	// pass: a loop copies the application's few buffers, so they are
	// kept in turn, not in maps keyed by name (hashed a few times a pass).
	var facts []bufferFacts
	lo, _ := x.writeWindow(d)
	fact := func(b string) *bufferFacts {
		for k := range facts {
			if facts[k].name == b {
				return &facts[k]
			}
		}
		f := bufferFacts{name: b}
		f.saved, f.why, f.alloc = x.savednessOf(d, b, lo)
		facts = append(facts, f)
		return &facts[len(facts)-1] // valid until the next buffer is learned
	}
	classify := func(b string) savedness { return fact(b).saved }
	configured := x.replayConfiguredAt()
	// Pass 0's copy stands for the snapshot where nothing else can have
	// written the buffer since the SDK may have taken it (after CONFIG
	// ENTER): another agent's kernel may write it through peer access in
	// between, and the restores bring back the snapshot, not pass 0's
	// memory (decision 18.3).
	snapFrom := d.passEnter[0]
	if len(d.configEnter) > 0 {
		snapFrom = d.configEnter[0]
	}
	for _, cb := range e0.buffers {
		fact(cb.name).asSnapshot = !x.otherWorkIn(d, snapFrom, e0.to, false, false, cb.name)
	}
	mem2, mem4 := false, false
	var restored, leftOut []string // a pass's, kept for the next
	for k := uint64(1); k < uint64(x.passesRun(d)); k++ {
		ek, xp := pc.enter.get(k), pc.exit.get(k-1)
		if ek == nil {
			continue
		}
		// MEM-2: pass k starts from what pass 0 started from, in every
		// saved buffer. A dispatch the tool wrote on the loop's thread is
		// undone by the next restore, so it does not excuse the pass.
		if !mem2 {
			var differ []string
			var at []int
			for _, cb := range ek.buffers {
				b := cb.name
				before, ok := e0.digest(x, b)
				if f := fact(b); !ok || f.saved != saved || !f.asSnapshot || x.otherWorkIn(d, e0.from, ek.to, false, false, b) || x.freedIn(b, e0.from, ek.to) {
					continue
				}
				x.examinedAt(slotMEM2)
				if now := cb.digest; now != before {
					differ = append(differ, fmt.Sprintf("%s (%s, pass 0 %s)", b, now, before))
					at = append(at, e0.buffers.pos(b), ek.buffers.pos(b))
				}
			}
			if differ != nil {
				mem2 = true
				vs = append(vs, x.violation("MEM-2", d.id, fmt.Sprintf("pass %d of dispatch %d started from other memory than pass 0, as the tool copied it at PASS ENTER: %s", k, d.id, strings.Join(differ, ", ")), at...))
			}
		}
		if xp == nil || mem4 {
			continue
		}
		// Between pass k-1's EXIT and pass k's ENTER only the restore
		// writes: it writes back the saved buffers and nothing else.
		restored, leftOut = restored[:0], leftOut[:0]
		for _, cb := range ek.buffers {
			b := cb.name
			after, okX := xp.digest(x, b)
			now := cb.digest
			f := fact(b)
			if !okX || x.otherWorkIn(d, xp.from, ek.to, false, true, b) || x.freedIn(b, xp.from, ek.to) || x.restoredByOther(d, b, now, xp.from, ek.to, f.alloc) {
				continue
			}
			switch f.saved {
			case notSaved:
				x.examinedAt(slotMEM4)
				if now != after {
					mem4 = true
					vs = append(vs, x.violation("MEM-4", d.id, fmt.Sprintf("the restore before pass %d of dispatch %d wrote buffer %s, which is %s: only coarse-grained device memory the snapshot saved is written back (the tool copied %s at pass %d's EXIT, %s at pass %d's ENTER)", k, d.id, b, f.why, after, k-1, now, k), f.alloc.at, xp.buffers.pos(b), ek.buffers.pos(b)))
				}
			case saved:
				before, ok0 := e0.digest(x, b)
				if !ok0 || !f.asSnapshot || after == before {
					continue // pass k-1 left it as it was: nothing to restore
				}
				x.examinedAt(slotMEM4)
				if configured >= 0 && f.alloc.at > configured {
					x.examinedAt(slotACT4)
				}
				switch now {
				case before:
					restored = append(restored, b)
				case after:
					leftOut = append(leftOut, b)
				}
			}
		}
		// A buffer the restore left untouched while it wrote another back
		// was missed by the snapshot or the restore; a restore that wrote
		// nothing at all is MEM-2's.
		if len(restored) > 0 && len(leftOut) > 0 {
			mem4 = true
			for _, b := range leftOut {
				f := fact(b)
				at := []int{f.alloc.at, xp.buffers.pos(b), ek.buffers.pos(b), ek.buffers.pos(restored[0])}
				msg := fmt.Sprintf("device buffer %s was written by pass %d of dispatch %d and left out of the restore before pass %d, while %s was written back: the snapshot or the restore missed it", b, k-1, d.id, k, restored[0])
				vs = append(vs, x.violation("MEM-4", d.id, msg, at...))
				if configured >= 0 && f.alloc.at > configured {
					vs = append(vs, x.violation("ACT-4", d.id, fmt.Sprintf("buffer %s was allocated after replay was configured, so the tracker should know it, yet the restore before pass %d left it out", b, k), at...))
				}
				break
			}
		}
	}
	return append(vs, x.checkCopiedResult(d, pc, classify, snapFrom)...)
}

// MEM-3 from the copies: what the application reads back after the
// completion is what the last pass left (the loop breaks before the
// restore) and what pass 0 left (one run's result).
func (x *index) checkCopiedResult(d *dispatchView, pc *passCopies, classify func(string) savedness, snapFrom int) []Violation {
	a := x.appOf(d)
	last := uint64(x.passesRun(d) - 1)
	xl, x0, e0, el := pc.exit.get(last), pc.exit.get(0), pc.enter.get(0), pc.enter.get(last)
	if a == nil || xl == nil || len(a.complete) == 0 {
		return nil
	}
	// One run's result is pass 0's output when the last pass started from
	// the same memory in what no restore brings back (decision 17.1), and
	// nothing else wrote any buffer since.
	sameUnsaved := el != nil
	for _, cb := range e0.buffers {
		b := cb.name
		if classify(b) == saved {
			continue
		}
		before, _ := e0.digest(x, b)
		if now, ok := el.digest(x, b); !ok || now != before {
			sameUnsaved = false
		}
	}
	for _, rb := range a.readback {
		e := &x.ev[rb]
		if rb < a.complete[0] || classify(e.Buffer) != saved {
			continue
		}
		left, ok := xl.digest(x, e.Buffer)
		if !ok || x.otherWorkIn(d, xl.from, rb, true, true, e.Buffer) {
			continue
		}
		x.examined("MEM-3")
		if e.Digest != left {
			msg := fmt.Sprintf("the application read buffer %s back as %s after %s completed, but the last pass (%d) left %s: memory was written after the last pass", e.Buffer, e.Digest, a.label, last, left)
			if first, _ := e0.digest(x, e.Buffer); first == e.Digest {
				msg += " (it is what the loop started from: restored after the last pass)"
			}
			return []Violation{x.violation("MEM-3", d.id, msg, xl.buffers.pos(e.Buffer), rb)}
		}
		one, ok := x0.digest(x, e.Buffer)
		if ok && sameUnsaved && one != e.Digest && !x.otherWorkOnArgs(d, a, snapFrom, rb) {
			return []Violation{x.violation("MEM-3", d.id, fmt.Sprintf("the application read buffer %s back as %s after %s completed; one run (pass 0) left %s", e.Buffer, e.Digest, a.label, one), x0.buffers.pos(e.Buffer), rb)}
		}
	}
	return nil
}

// otherWorkOnArgs: something else may have written one of the buffers a's
// kernel takes (any, when the application does not name them) between lo
// and hi, after the loop too.
func (x *index) otherWorkOnArgs(d *dispatchView, a *appView, lo, hi int) bool {
	args := x.ev[a.at].Args
	if len(args) == 0 {
		return x.otherWorkIn(d, lo, hi, true, true, "")
	}
	for _, b := range args {
		if x.otherWorkIn(d, lo, hi, true, true, b) {
			return true
		}
	}
	return false
}

// replayConfiguredAt is the position of the first successful KERNEL_REPLAY
// configuration (ACT-4: the tracker is on from there), -1 when none.
func (x *index) replayConfiguredAt() int {
	for _, c := range x.replayConfigs() {
		if x.ev[c].Status.Is(trace.StatusSuccess) {
			return c
		}
	}
	return -1
}
