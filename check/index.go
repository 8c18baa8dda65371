package check

import (
	"slices"
	"sort"
	"sync"

	"github.com/replayspec/replayspec/trace"
)

// index groups a trace's events once so that every oracle is linear in the
// trace. Positions (ints) index into ev; the order of ev is the order of
// the trace, which oracles trust over the seq field.
type index struct {
	ev     []trace.Event
	header trace.Header

	dispatches map[uint64]*dispatchView
	order      []*dispatchView // by first appearance of their ids

	apps     []*appView // one per app_dispatch, in trace order
	appLabel map[string]*appView

	byThread map[uint64][]int

	// windowOf[i] is the PASS window (in windows) open on event i's
	// thread when it happened, -1 none: see window(i).
	windowOf []int32
	windows  []passRef

	// payloads is true when some callback carries payload flags, i.e. the
	// implementation records them (API-6 is judged only then).
	payloads bool

	// byTool[i] is true when event i belongs to a dispatch the tool wrote
	// from a callback (between tool_dispatch and tool_complete on its
	// thread): it is not the application's, nor the loop's.
	byTool []bool

	// toolReads[i] is true when event i is a runtime's mem_read that is
	// the tool's own copy of memory (followed on its thread by its
	// tool_memory): neither the SDK's snapshot nor anything else it did
	// (check/traffic.go).
	toolReads []bool

	// col[i] is event i's entry of the columns (columns.go): its type as
	// a small number, its pass (passOf: oracles ask it of the same events
	// family after family, and each asking read the event and then the
	// number it points to), dispatch, thread, and whether its op is CONFIG
	// or PASS and its phase ENTER or EXIT. Walks that need no more of an
	// event read it without touching the event.
	col []column
	// cbs and copies are what the columns keep aside of callbacks and
	// tool_memory events (callbackOf, copyOf).
	cbs    []cbAux
	copies []copyAux
	// lastPass keeps passPayload's last answer.
	lastPass payloadVerdict

	// prevNoThread keeps prevOnThread's answers for events of no thread.
	prevNoThread map[int]int

	// died caches processDied: 0 not yet known, 1 no, 2 yes.
	died int8

	// instances counts, per rule, what the oracles examined; counted
	// counts it by the rule's place in the registry while they run
	// (examined).
	instances map[string]int
	counted   []int

	// seams, when the trace is a segment of a streamed one, takes what
	// compares dispatches across segments (counter.go).
	seams *seams

	// cut, when the trace is a part of a loop that a streamed judgement
	// cut between passes (check/loop.go): which passes of which dispatch
	// were judged before and are left out, and whether the loop goes on
	// past the trace's end.
	cut elision

	allocs      *[]allocation  // built on first use
	allocByName map[string]int // the first allocation of each buffer, built on first use
	spans       *flights       // built on first use: every dispatch in flight
	// recordsByAgent: dispatch-scoped records with times, per agent,
	// sorted by start, and the longest of them (MEM-6); built on first use.
	recordsByAgent map[uint64][]int
	longestRecord  map[uint64]uint64
	// toolRecordIDs: per thread, the ids of records of dispatches the tool
	// wrote from a callback on it (MEM-6); built on first use.
	toolRecordIDs map[uint64]map[uint64]bool
	// appsByThread: each thread's application dispatches in trace order;
	// their windows are disjoint. Built on first use (appAround).
	appsByThread map[uint64][]*appView

	// writes are the dispatches the tool wrote, with the windows open
	// around each (nested.go); declinedIDs those declined (MEM-6): both
	// built on first use.
	writes      *[]*toolWrite
	declinedIDs map[uint64]bool

	// types[k] is the positions of the events of kind k, in trace order
	// (ofType); others those of the types this version does not know.
	types  [evKinds][]int
	others map[trace.Type]*[]int

	// While filing (add): per-thread state, and the last thread and
	// dispatch seen, since runs of events share them.
	threads      map[uint64]*threadState
	lastThread   *threadState
	lastThreadID uint64
	lastDispatch *dispatchView
	slab         []int // pushPos's places not yet handed out
	// The arrays the index's lists of positions, and its dispatches'
	// copies (copiesOf), are taken from: kept, they are given to the next
	// index (positions).
	ints      arena[int]
	lists     arena[[]int] // the slots of positionsByPass
	memCopies arena[memCopy]
	places    arena[copiedBuffer]
}

// elision: passes [lo, hi) of dispatch were judged in an earlier part of
// the trace and are not in this one (none when hi <= lo); open: the
// dispatch's loop goes on after this part's last event, so what is judged
// at a loop's end is left to the part that holds it.
type elision struct {
	dispatch uint64
	lo, hi   uint64
	open     bool
	// ends, for an open loop, is how the part is judged to end: by the
	// pass budget (CMP-4), or, with ends set, by itself (a continue of 0,
	// then the completion). Only the completion's oracles ask.
	ends bool
}

// elided is how many passes of d the part leaves out, and the first of them.
func (x *index) elided(d *dispatchView) (n int, from uint64) {
	if x.cut.dispatch != d.id || x.cut.hi <= x.cut.lo {
		return 0, 0
	}
	return int(x.cut.hi - x.cut.lo), x.cut.lo
}

// passesRun is how many passes of d ran: those shown, and those left out.
func (x *index) passesRun(d *dispatchView) int {
	n, _ := x.elided(d)
	return len(d.passEnter) + n
}

// leftOut: pass p of d was judged in an earlier part and is not here.
func (x *index) leftOut(d *dispatchView, p uint64) bool {
	return x.cut.dispatch == d.id && p >= x.cut.lo && p < x.cut.hi
}

// passIndex is where pass p of d (not left out) lies in d.passEnter when
// each pass shows once.
func (x *index) passIndex(d *dispatchView, p uint64) int {
	if n, from := x.elided(d); n > 0 && p >= from {
		return int(p) - n
	}
	return int(p)
}

// openLoop: d's loop goes on past the end of this part of the trace.
func (x *index) openLoop(d *dispatchView) bool {
	return x.cut.open && d != nil && x.cut.dispatch == d.id
}

type passRef struct {
	dispatch uint64
	pass     uint64
	open     bool
	enter    int // position of the PASS ENTER
}

// dispatchView is everything the trace says about one SDK dispatch id.
type dispatchView struct {
	id     uint64
	label  string
	thread uint64 // thread of CONFIG ENTER, else of the reservation
	agent  uint64

	configEnter, configExit []int
	passEnter, passExit     []int
	passCounts, continues   []int
	returns                 []int          // callback_return events: what the tool left behind
	returnAt                *returnIndex   // built on first use: the first return per callback
	restoreByPass           *byPass[[]int] // built on first use
	locals, records         []int
	correlations, reserves  []int
	snapshots, restores     []int
	failedSnapshots         []int // snapshots that could not be completed
	copies                  []int // tool_memory: what the tool copied in its PASS callbacks
	loads                   []int // tool_signal: the application's signal as the tool read it
	copied                  *passCopies

	// Built on first use, for checks that look passes up one by one.
	exitByPass          *byPass[int] // position + 1, 0 none
	kernelsByPass       *byPass[[]int]
	kernels, neverEnded []int
	warnings            []int

	app      *appView // appOf, once known
	appKnown bool
}

// appView is one application dispatch joined to its SDK dispatch id.
type appView struct {
	label    string
	thread   uint64
	signal   uint64
	at       int // position of app_dispatch
	end      int // position of the thread's next app_dispatch, or len(ev)
	dispatch uint64
	reserves []int // dispatch_id events in the window
	// named are the ids a trace without dispatch_id events names it by:
	// that of its first tagged callback or kernel event, then, for a
	// submission of several kernel packets, that of each later packet's
	// kernel (docs/trace.md, docs/ports.md O5).
	named    []uint64
	complete []int
	timeout  []int
	readback []int
	signals  []int // app_signal: the completion signal's value after the wait
}

func (d *dispatchView) replayed() bool { return len(d.passEnter) > 0 }

// passCount is the answer of the (first) replay_pass_count call.
func (x *index) passCount(d *dispatchView) (int64, bool) {
	if len(d.passCounts) == 0 || x.ev[d.passCounts[0]].Result == nil {
		return 0, false
	}
	return *x.ev[d.passCounts[0]].Result, true
}

// recordPass is the pass a record belongs to: the PASS window of its own
// dispatch it arrived in, else the pass the tool had published.
func (x *index) recordPass(i int) (uint64, bool) {
	if w := x.window(i); w.open && w.dispatch == x.ev[i].Dispatch {
		return w.pass, true
	}
	return x.passOf(i)
}

// callbackOf is callback i's payload, payload size and dispatch_info.
func (x *index) callbackOf(i int) *cbAux {
	if x.col != nil {
		if r := &x.col[i]; r.kind == ekCallback && r.aux >= 0 {
			return &x.cbs[r.aux]
		}
	}
	e := &x.ev[i] // an index made by hand, in a test
	return &cbAux{e.Payload, e.PayloadSize, e.Info}
}

// copyOf is tool_memory i's buffer and digest.
func (x *index) copyOf(i int) (buffer, digest string) {
	if x.col != nil {
		if r := &x.col[i]; r.kind == ekToolMemory && r.aux >= 0 {
			c := &x.copies[r.aux]
			return c.buffer, c.digest
		}
	}
	e := &x.ev[i]
	return e.Buffer, e.Digest
}

// passOf is event i's pass and whether it has one (trace.Event.PassOf).
func (x *index) passOf(i int) (uint64, bool) {
	if x.col == nil {
		return x.ev[i].PassOf() // an index made by hand, in a test
	}
	return x.col[i].pass, x.col[i].hasPass
}

func (x *index) has(t trace.Type) bool { return len(x.ofType(t)) > 0 }

// ofType is the positions of the events of type t, in trace order. The
// oracles read types[ekT] for a type they name.
func (x *index) ofType(t trace.Type) []int {
	if k := evKindOf(t); k != ekOther {
		return x.types[k]
	}
	if pos := x.others[t]; pos != nil {
		return *pos
	}
	return nil
}

func (x *index) dispatch(id uint64) *dispatchView {
	d := x.dispatches[id]
	if d == nil {
		d = &dispatchView{id: id}
		x.dispatches[id] = d
		x.order = append(x.order, d)
	}
	return d
}

func newIndex(t trace.Trace) *index { return newIndexCols(t, nil) }

// newIndexCols is newIndex with the events' columns already made (a
// stream's segment makes them as its events arrive), nil to make them
// here. The index reads them and never writes them.
func newIndexCols(t trace.Trace, c *columns) *index { return newIndexInts(t, c, indexArrays{}) }

// newIndexInts is newIndexCols making its arrays in a's (takePositions)
// where they fit: give them back with givePositions once judged.
func newIndexInts(t trace.Trace, c *columns, a indexArrays) *index {
	if c == nil {
		made := columnsOf(t.Events)
		c = &made
	} else if verifyColumns {
		if want := columnsOf(t.Events); c.diff(&want) != "" {
			d := c.diff(&want)
			panic("check: the columns handed to the index are not its events': " + d)
		}
	}
	x := &index{
		ev:         t.Events,
		header:     t.Header,
		dispatches: map[uint64]*dispatchView{},
		appLabel:   map[string]*appView{},
		instances:  make(map[string]int, 64), // about as many rules as the oracles examine
		counted:    make([]int, len(registry)),
		windowOf:   reuse(a.windowOf, len(t.Events)),
		byTool:     reuse(a.byTool, len(t.Events)),
		col:        c.rows,
		cbs:        c.cbs,
		copies:     c.copies,
		toolReads:  reuse(a.toolReads, len(t.Events))[:len(t.Events)],
		threads:    map[uint64]*threadState{},
		ints:       newArena(a.ints),
		lists:      newArena(a.lists),
		memCopies:  newArena(a.memCopies),
		places:     newArena(a.places),
	}
	clear(x.toolReads)
	x.presize()
	for i := range t.Events {
		x.add(i)
	}
	x.finish()
	return x
}

// presize makes each thread's and each type's list of positions at its
// final length before add fills them (grown by appending, they were
// copied about twice over and left as much again for the collector, a
// twentieth of a long run's CPU), from the columns alone: no event is
// read here.
func (x *index) presize() {
	perThread := map[uint64]int{}
	var perKind [evKinds]int
	run, runOf := 0, uint64(0) // runs of events share a thread
	windows := 0
	for i := range x.col {
		k := x.col[i].kind
		if k == ekCallback && x.col[i].op == cbPassEnter {
			windows++ // each opens a PASS window (add)
		}
		if !x.payloads && x.col[i].payload {
			x.payloads = true
		}
		perKind[k]++
		if th := x.col[i].thread; th != runOf {
			if run > 0 {
				perThread[runOf] += run
			}
			run, runOf = 0, th
		}
		run++
	}
	if run > 0 {
		perThread[runOf] += run
	}
	for id, n := range perThread {
		x.threads[id] = &threadState{open: -1, pos: x.takeInts(n)}
	}
	x.windows = make([]passRef, 0, windows)
	for k, n := range perKind {
		if n > 0 && evKind(k) != ekOther {
			x.types[k] = x.takeInts(n)
		}
	}
}

// takeInts is an empty list with room for n positions.
func (x *index) takeInts(n int) []int { return x.ints.take(n) }

// arena hands out room in one array in turn, and counts the room asked
// for, so that the array kept for the next index holds all of it.
type arena[T any] struct {
	free, all []T
	wanted    int
}

func newArena[T any](all []T) arena[T] { return arena[T]{free: all, all: all} }

// take is an empty slice with room for n, from the array while it has
// room.
func (a *arena[T]) take(n int) []T {
	a.wanted += n
	if n > len(a.free) {
		return make([]T, 0, n)
	}
	l := a.free[:0:n]
	a.free = a.free[n:]
	return l
}

// kept empties a and returns its array for the next index, or, when it
// did not hold all that was asked, one that does (made once); nil when
// that is more than limit.
func (a *arena[T]) kept(limit int) []T {
	all := a.all
	if a.wanted > cap(all) {
		if a.wanted > limit {
			return nil
		}
		all = make([]T, a.wanted)
	}
	*a = arena[T]{}
	return all[:cap(all)]
}

// reuse is s emptied when it has room for n, else a new slice of room n.
func reuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:0]
	}
	return make([]T, 0, n)
}

// indexArrays are the arrays an index makes as large as its events, or
// larger: those its lists of positions and its copies are taken from
// (arena), and each event's PASS window and flags.
type indexArrays struct {
	ints      []int
	lists     [][]int
	memCopies []memCopy
	places    []copiedBuffer
	windowOf  []int32
	byTool    []bool
	toolReads []bool
}

// positions keeps the arrays an index of a stream's segment made, for the
// next (one slot, as segmentSlices keeps the segment's events): made anew
// for every segment, they were two fifths of what judging a stream
// allocated, so the collector ran the more often, and its write barriers
// slowed the copying of each event into the segment while it marked. It
// holds the arrays of at most keptPositions places (2.6 MB of them).
var positions struct {
	sync.Mutex
	indexArrays
}

const keptPositions = 16 * keptEvents

// takePositions empties the slot: no two indexes share its arrays.
func takePositions() indexArrays {
	positions.Lock()
	defer positions.Unlock()
	a := positions.indexArrays
	positions.indexArrays = indexArrays{}
	return a
}

// givePositions hands x's arrays to the next index, the array of
// positions made large enough for all x asked for (once, when it did not
// fit), when they are larger than the slot's. Nothing may read x's lists
// after.
func (x *index) givePositions() {
	a := indexArrays{x.ints.kept(keptPositions), x.lists.kept(keptEvents), x.memCopies.kept(keptEvents),
		x.places.kept(keptEvents), x.windowOf[:0], x.byTool[:0], x.toolReads[:0]}
	if a.ints == nil {
		return
	}
	positions.Lock()
	if cap(a.ints) > cap(positions.ints) {
		positions.indexArrays = a
	}
	positions.Unlock()
}

// threadState is what the index keeps per thread while it files events.
type threadState struct {
	pos  []int // the thread's events
	open int32 // the innermost PASS window open on it (x.windows), -1 none
	// outer are the PASS windows a window nested inside them left open:
	// a dispatch the tool writes inside a pass may open its own replay
	// window there (MEM-6, clarified 2026-12-01), and when it closes the
	// outer pass is the one open again.
	outer []int32
	// tools are the dispatches the tool is writing on the thread,
	// outermost first, each as the dispatch it was written from: they
	// nest too. One closes at its tool_complete, or, when the tool gave
	// up on it (its loop never ended), at the next event of the dispatch
	// it was written from (that one's callback went on), or at the
	// thread's next app_dispatch.
	tools []uint64
}

// add files event i, the next in trace order: the lists every oracle
// reads are built in one pass, event by event.
func (x *index) add(i int) {
	thread, dispatch := x.col[i].thread, x.col[i].dispatch
	th := x.lastThread
	if th == nil || x.lastThreadID != thread {
		th = x.threads[thread]
		if th == nil {
			th = &threadState{open: -1}
			x.threads[thread] = th
		}
		x.lastThread, x.lastThreadID = th, thread
	}
	th.pos = append(th.pos, i)
	k := x.col[i].kind
	if k != ekOther {
		x.types[k] = append(x.types[k], i)
	} else {
		if x.others == nil {
			x.others = map[trace.Type]*[]int{}
		}
		t := x.ev[i].Type
		ty := x.others[t]
		if ty == nil {
			ty = new([]int)
			x.others[t] = ty
		}
		*ty = append(*ty, i)
	}
	x.windowOf = append(x.windowOf, th.open)
	switch k {
	case ekToolDispatch:
		x.byTool = append(x.byTool, len(th.tools) > 0) // written from inside one of the tool's own
		th.tools = append(th.tools, dispatch)
	case ekToolComplete:
		if n := len(th.tools); n > 0 {
			th.tools = th.tools[:n-1]
		}
		x.byTool = append(x.byTool, len(th.tools) > 0)
	case ekAppDispatch:
		th.tools = th.tools[:0]
		x.byTool = append(x.byTool, false)
	default:
		if dispatch != 0 && len(th.tools) > 0 {
			if k := slices.Index(th.tools, dispatch); k >= 0 {
				th.tools = th.tools[:k] // the tool gave up on what it wrote from there
			}
		}
		x.byTool = append(x.byTool, len(th.tools) > 0)
	}
	if k == ekToolMemory && len(th.pos) > 1 {
		// The runtime's read just before a tool_memory on its thread is
		// the tool's copy, not the SDK's (a copy is recorded as it ends).
		if prev := th.pos[len(th.pos)-2]; x.col[prev].kind == ekMemRead {
			x.toolReads[prev] = true
		}
	}
	if k == ekCallback {
		switch x.col[i].op {
		case cbPassEnter:
			if th.open >= 0 && x.windows[th.open].dispatch != dispatch {
				th.outer = append(th.outer, th.open) // a window nested in this pass
			}
			th.open = int32(len(x.windows))
			p, _ := x.passOf(i)
			x.windows = append(x.windows, passRef{dispatch: dispatch, pass: p, open: true, enter: i})
		case cbPassExit:
			th.open = -1
			if n := len(th.outer); n > 0 {
				th.open, th.outer = th.outer[n-1], th.outer[:n-1]
			}
		}
	}
	x.file(i, k)
}

// finish makes the lists by thread and type, and joins the application's
// dispatches to SDK ids, once every event is filed.
func (x *index) finish() {
	x.byThread = make(map[uint64][]int, len(x.threads))
	for id, th := range x.threads {
		x.byThread[id] = th.pos
	}
	x.joinApps()
	x.inferNeverEnded()
}

// window is the PASS window open on event i's thread when it happened
// (zero value: none).
func (x *index) window(i int) passRef {
	if k := x.windowOf[i]; k >= 0 {
		return x.windows[k]
	}
	return passRef{}
}

// inferNeverEnded: without the SDK's own events there is no never_ended
// report, but the tool and the application show the same thing: an
// indefinite loop (pass count 0) whose continue never said stop, and an
// application that gave up waiting. The application's timeout then stands
// for the report.
func (x *index) inferNeverEnded() {
	if x.header.Reports(trace.SourceSDK) {
		return
	}
	for _, a := range x.apps {
		d := x.dispatches[a.dispatch]
		if len(a.timeout) > 0 && x.endlessLoop(d) {
			d.neverEnded = append(d.neverEnded, a.timeout[0])
		}
	}
	// A dispatch the tool wrote whose loop never ended: the tool gave up
	// waiting for it, as the application does, and its thread went on
	// with the window it was written from (MEM-6, nested). The first event
	// of its thread after its last continue that is not its own stands for
	// the report.
	for _, w := range x.toolWrites() {
		d := x.dispatches[w.id]
		if w.complete || w.id == 0 || !x.endlessLoop(d) {
			continue
		}
		pos := x.byThread[w.thread]
		last := d.continues[len(d.continues)-1]
		for _, j := range pos[slices.Index(pos, last)+1:] {
			if x.ev[j].Dispatch != d.id {
				d.neverEnded = append(d.neverEnded, j)
				break
			}
		}
	}
}

// endlessLoop: d is an indefinite loop (pass count 0) with no CONFIG EXIT
// whose every continue said go on.
func (x *index) endlessLoop(d *dispatchView) bool {
	if d == nil || len(d.configExit) > 0 || len(d.continues) == 0 {
		return false
	}
	if r, ok := x.passCount(d); !ok || r != 0 {
		return false
	}
	for _, c := range d.continues {
		if res := x.ev[c].Result; res == nil || *res == 0 {
			return false
		}
	}
	return true
}

// file puts event i into its dispatch's lists.
func (x *index) file(i int, k evKind) {
	id := x.col[i].dispatch
	if id == 0 {
		return
	}
	d := x.lastDispatch
	if d == nil || d.id != id {
		d = x.dispatch(id)
		x.lastDispatch = d
	}
	if d.agent == 0 && k != ekRecord {
		d.agent = x.ev[i].Agent // read until one names the agent
	}
	switch k {
	case ekCallback:
		switch x.col[i].op {
		case cbConfigEnter:
			d.configEnter = x.pushPos(d.configEnter, i)
			if len(d.configEnter) == 1 {
				d.thread = x.col[i].thread
			}
		case cbConfigExit:
			d.configExit = x.pushPos(d.configExit, i)
		case cbPassEnter:
			d.passEnter = x.pushPos(d.passEnter, i)
		case cbPassExit:
			d.passExit = x.pushPos(d.passExit, i)
		}
	case ekReturned:
		d.returns = x.pushPos(d.returns, i)
	case ekPassCount:
		d.passCounts = x.pushPos(d.passCounts, i)
	case ekContinue:
		d.continues = x.pushPos(d.continues, i)
	case ekLocal:
		d.locals = x.pushPos(d.locals, i)
	case ekRecord:
		d.records = x.pushPos(d.records, i)
	case ekCorrelation:
		d.correlations = x.pushPos(d.correlations, i)
	case ekDispatchID:
		d.reserves = x.pushPos(d.reserves, i)
		if len(d.configEnter) == 0 && d.thread == 0 {
			d.thread = x.col[i].thread
		}
	case ekSnapshot:
		if e := &x.ev[i]; e.Status != "" && !e.Status.Is(trace.StatusSuccess) {
			d.failedSnapshots = x.pushPos(d.failedSnapshots, i) // MEM-5
		} else {
			d.snapshots = x.pushPos(d.snapshots, i)
		}
	case ekRestore:
		d.restores = x.pushPos(d.restores, i)
	case ekKernel:
		d.kernels = x.pushPos(d.kernels, i)
	case ekNeverEnded:
		d.neverEnded = x.pushPos(d.neverEnded, i)
	case ekWarning:
		d.warnings = x.pushPos(d.warnings, i)
	case ekToolMemory:
		d.copies = x.pushPos(d.copies, i)
	case ekToolSignal:
		d.loads = x.pushPos(d.loads, i)
	}
}

// pushPos appends position i to one of the index's small lists (a
// dispatch's, or its events of one pass). A list's first four places come
// from a slab shared by the index: most lists of most dispatches hold a few
// positions, and growing each from nothing was the index's largest count
// of allocations. The three-index slice keeps lists apart: one that
// outgrows its four places moves to its own array, doubled when full: a
// loop's lists hold one position a pass, and append, which grows a long
// slice by a quarter, allocated three times what such a list held (a
// fifth of what judging a long loop allocated).
func (x *index) pushPos(list []int, i int) []int {
	if len(list) < cap(list) {
		return append(list, i) // inlined: most calls
	}
	return x.growPos(list, i)
}

// growPos is pushPos of a list with no room left.
func (x *index) growPos(list []int, i int) []int {
	switch {
	case cap(list) == 0:
		if len(x.slab) < slabList {
			// No more than the trace can use: a segment of a streamed
			// trace is a few events, and there are many segments.
			n := max(slabList, min(1024*slabList, len(x.ev)))
			x.slab = x.takeInts(n)[:n]
		}
		list, x.slab = x.slab[:0:slabList], x.slab[slabList:]
	case len(list) == cap(list):
		list = append(x.takeInts(2*len(list)), list...)
	}
	return append(list, i)
}

// slabList is how many places a list gets from the slab.
const slabList = 4

// joinApps joins application dispatches to SDK dispatch ids as
// docs/trace.md says: on one thread, the events between an app_dispatch
// and the next belong to it, and the first dispatch_id among them names it.
func (x *index) joinApps() {
	hasIDs := x.has(trace.DispatchID)
	for _, pos := range x.byThread {
		var cur *appView
		var lastRun uint64 // the id of the last kernel in cur's window
		for _, i := range pos {
			switch x.col[i].kind { // read without touching the event
			case ekAppDispatch, ekDispatchID:
			case ekCallback, ekKernel:
				if cur == nil || x.col[i].dispatch == 0 || hasIDs || x.byTool[i] {
					continue // as below
				}
			default:
				continue
			}
			e := &x.ev[i]
			switch e.Type {
			case trace.AppDispatch:
				if cur != nil {
					cur.end = i
				}
				lastRun = 0
				cur = &appView{label: e.Label, thread: e.Thread, signal: e.Signal, at: i, end: len(x.ev)}
				x.apps = append(x.apps, cur)
			case trace.DispatchID:
				if cur != nil && !x.byTool[i] {
					cur.reserves = append(cur.reserves, i)
					if cur.dispatch == 0 {
						cur.dispatch = e.Dispatch
					}
				}
			case trace.Callback, trace.Kernel:
				// A trace without dispatch_id events still names the
				// dispatch through its first tagged event (docs/trace.md).
				if cur == nil || e.Dispatch == 0 || hasIDs || x.byTool[i] {
					continue
				}
				if len(cur.named) == 0 {
					cur.named = append(cur.named, e.Dispatch)
				} else if n := len(cur.named); e.Type == trace.Kernel && n < x.ev[cur.at].KernelPackets && lastRun == cur.named[n-1] && e.Dispatch > lastRun {
					// A submission of several kernel packets is several
					// logical dispatches, each with its own id, reserved
					// in packet order, none replayed (decision 7, ACT-6):
					// once a packet's kernel ran, the next packet names
					// its id by its kernel, an id above the previous
					// packet's (docs/ports.md O5).
					cur.named = append(cur.named, e.Dispatch)
				}
				if e.Type == trace.Kernel {
					lastRun = e.Dispatch
				}
				if cur.dispatch == 0 {
					cur.dispatch = e.Dispatch
				}
			}
		}
	}
	// Threads came from a map: restore trace order for determinism.
	slices.SortFunc(x.apps, func(a, b *appView) int { return a.at - b.at })
	for _, a := range x.apps {
		if _, dup := x.appLabel[a.label]; !dup {
			x.appLabel[a.label] = a
		}
	}
	// Application events carry the label, not the thread window.
	for _, i := range x.types[ekAppComplete] {
		if a := x.appLabel[x.ev[i].Label]; a != nil {
			a.complete = append(a.complete, i)
		}
	}
	for _, i := range x.types[ekAppTimeout] {
		if a := x.appLabel[x.ev[i].Label]; a != nil {
			a.timeout = append(a.timeout, i)
		}
	}
	for _, i := range x.types[ekAppReadback] {
		if a := x.appLabel[x.ev[i].Label]; a != nil {
			a.readback = append(a.readback, i)
		}
	}
	for _, i := range x.types[ekAppSignal] {
		if a := x.appLabel[x.ev[i].Label]; a != nil {
			a.signals = append(a.signals, i)
		}
	}
	for _, a := range x.apps {
		if d := x.dispatches[a.dispatch]; d != nil && d.label == "" {
			d.label = a.label
		}
	}
}

// returnKey names one callback of a dispatch: CONFIG's have pass 0.
type returnKey struct {
	op    trace.Op
	phase trace.Phase
	pass  uint64
}

// returnAt finds the tool's first return from the callback k names.
func (x *index) returnAt(d *dispatchView, k returnKey) (int, bool) {
	if d.returnAt == nil {
		r := &returnIndex{}
		if n := min(len(d.returns), len(d.passEnter)+1); n > 0 {
			// Room for the loop's passes, ENTER and EXIT, in one array:
			// place grows the lists a pass at a time.
			both := x.takeInts(2 * n)[:2*n]
			r.enter, r.exit = both[:0:n], both[n:n:2*n]
		}
		for _, i := range d.returns {
			p, _ := x.passOf(i)
			var key returnKey
			switch x.opPhaseAt(i) {
			case cbPassEnter: // the most of them: read without the event
				key = returnKey{trace.OpPass, trace.PhaseEnter, p}
			case cbPassExit:
				key = returnKey{trace.OpPass, trace.PhaseExit, p}
			default:
				e := &x.ev[i]
				key = returnKey{e.Op, e.Phase, p}
				if e.Op == trace.OpConfig {
					key.pass = 0
				}
			}
			if at := r.place(key, len(d.returns)); at != nil {
				if *at == 0 {
					*at = i + 1
				}
			} else if _, dup := r.other[key]; !dup {
				if r.other == nil {
					r.other = map[returnKey]int{}
				}
				r.other[key] = i
			}
		}
		d.returnAt = r
	}
	if at := d.returnAt.place(k, -1); at != nil && *at != 0 {
		return *at - 1, true
	} else if at != nil {
		return 0, false
	}
	i, ok := d.returnAt.other[k]
	return i, ok
}

// returnIndex is a dispatch's first return from each callback: those of
// PASS ENTER and EXIT by pass (a long loop has two a pass, and a map keyed
// by strings cost more than the rest of its judging), any other in a map.
type returnIndex struct {
	enter, exit []int // by pass: the return's position + 1, 0 none
	other       map[returnKey]int
}

// place is where k's return is kept when it is kept by pass, else nil;
// grow, when not -1, is how long the lists may grow (to no more places
// than the dispatch has returns, whatever pass a broken trace names).
func (r *returnIndex) place(k returnKey, grow int) *int {
	if k.op != trace.OpPass {
		return nil
	}
	var list *[]int
	switch k.phase {
	case trace.PhaseEnter:
		list = &r.enter
	case trace.PhaseExit:
		list = &r.exit
	default:
		return nil
	}
	if k.pass >= uint64(len(*list)) {
		// Past the list: kept in other, if anywhere (a list only grows
		// for passes below grow, and one at or past it is kept there).
		if grow < 0 || k.pass >= uint64(grow) {
			return nil
		}
		*list = append(*list, make([]int, int(k.pass)+1-len(*list))...)
	}
	return &(*list)[k.pass]
}

// returnOf finds the tool's return from d's CONFIG callback of phase (or
// the first PASS one).
func (x *index) returnOf(d *dispatchView, op trace.Op, phase trace.Phase) (int, bool) {
	return x.returnAt(d, returnKey{op, phase, 0})
}

// returnOfPass finds the tool's return from pass p's callback of phase.
func (x *index) returnOfPass(d *dispatchView, phase trace.Phase, p uint64) (int, bool) {
	return x.returnAt(d, returnKey{trace.OpPass, phase, p})
}

// AppDispatch is one application dispatch joined to the SDK dispatch id it
// got.
type AppDispatch struct {
	Label    string
	Thread   uint64
	Dispatch uint64 // 0: the trace names none
}

// Join joins the application's dispatches to SDK dispatch ids as
// docs/trace.md says ("Joining events to a dispatch"), in trace order: the
// one join every reader of a trace uses, the oracles and the steps alike.
func Join(t trace.Trace) []AppDispatch {
	x := newIndex(t)
	out := make([]AppDispatch, len(x.apps))
	for i, a := range x.apps {
		out[i] = AppDispatch{Label: a.label, Thread: a.thread, Dispatch: a.dispatch}
	}
	return out
}

// passesHidden reports whether the tool's replay subscriptions leave PASS
// out: replay is keyed on CONFIG (ACT-1), so dispatches are still
// replayed, but no PASS callback shows their passes to the tool.
func (x *index) passesHidden() bool {
	configs := x.replayConfigs()
	if len(configs) == 0 {
		return false
	}
	for _, c := range configs {
		e := &x.ev[c]
		if !e.Status.Is(trace.StatusSuccess) {
			continue
		}
		if len(e.Operations) == 0 || slices.Contains(e.Operations, trace.OpPass) {
			return false
		}
	}
	return true
}

// hiddenLoop reports whether d was replayed with its passes hidden from the
// tool: its kernel ran more than once, the SDK snapshotted it, the SDK
// consulted replay_continue (which only a loop does), or the tool asked
// for a fixed loop (what a trace without the runtime and the SDK shows).
func (x *index) hiddenLoop(d *dispatchView) bool {
	if len(d.passEnter) > 0 || !x.passesHidden() || x.declined(d) {
		return false // a declined dispatch (MEM-6) runs once whatever the tool asked
	}
	r, ok := x.passCount(d)
	return len(d.kernels) > 1 || len(d.snapshots) > 0 || len(d.continues) > 0 || ok && r > 1
}

// appOf returns the application dispatch joined to d, if any. Oracles ask
// it of every dispatch many times over: the answer is kept on d.
func (x *index) appOf(d *dispatchView) *appView {
	if !d.appKnown {
		d.app, d.appKnown = x.joinedApp(d), true
	}
	return d.app
}

func (x *index) joinedApp(d *dispatchView) *appView {
	if d.label == "" {
		return nil
	}
	a := x.appLabel[d.label]
	if a == nil || a.dispatch != d.id {
		return nil
	}
	return a
}

func in(i int, lo, hi int) bool { return i > lo && i < hi }

// appAround is the application dispatch on thread whose window [at, end)
// holds position i, or nil. A thread's windows are disjoint and ordered,
// so this is a binary search, not a walk over every dispatch of the trace
// (which made judging quadratic in the dispatches of a spec).
func (x *index) appAround(thread uint64, i int) *appView {
	if x.appsByThread == nil {
		x.appsByThread = map[uint64][]*appView{}
		for _, a := range x.apps { // in trace order
			x.appsByThread[a.thread] = append(x.appsByThread[a.thread], a)
		}
	}
	apps := x.appsByThread[thread]
	k := sort.Search(len(apps), func(k int) bool { return apps[k].at >= i }) - 1 // the last starting before i
	if k >= 0 && i < apps[k].end {
		return apps[k]
	}
	return nil
}
