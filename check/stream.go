package check

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Stream judges a trace as its events arrive, in bounded memory when the
// trace allows it (issue 23): it cuts the trace into segments where nothing
// is in flight, judges each segment with the same oracles as Judge, and
// forgets it. What a later segment still needs of earlier ones (the tool's
// configuration calls, the agents, the buffers) is carried as a prologue
// put before it.
//
// A segment ends before an application's app_dispatch when every earlier
// application dispatch has completed (or timed out), no PASS window is open
// and no dispatch the tool wrote is in flight, on any thread. The verdicts
// are those of Judge over the whole trace only if no event after a cut
// looks back past it; Stream watches for every way it knows an event can
// (a dispatch id or application label of an earlier segment, a thread's
// events before its next app_dispatch, a kind of event one segment lacked
// and another held that an oracle asks the whole trace about, a process
// that died, dispatch ids out of order across a seam, a tool record timed
// near another segment's loop) and then says the trace is not separable:
// the caller judges it whole. TestStreamMatchesJudge and
// TestStreamJudgesAsWhole (internal/faults) hold the two equal over every
// trace the project has, correct and broken (docs/oracles.md). An
// indefinite loop alone in its segment is cut between passes as well
// (loop.go), so a never-ending loop is held a few hundred passes at a time.
// TestStreamCutsLoopsAsJudge holds those cuts to Judge's judgement.
type Stream struct {
	header trace.Header

	prologue []trace.Event // carried into every later segment
	// Where each prologue event lay in the trace, and the prologue event
	// that was the last at or before its thread's previous event (-1
	// none): when a call took effect is bounded by that event
	// (index.prevOnThread), which the prologue does not hold.
	prologueAt, prologueFrom []int
	pendingPrev              []int // the previous event of each of the segment's carried events
	// The position of each thread's last event; for events of no
	// thread, per source.
	lastOnThread map[uint64]int
	lastBySource map[trace.Source]int
	// The thread of the event before and its entry of lastOnThread, not
	// yet written back: a thread's events come in runs.
	curThread uint64
	curAt     int

	seg  segment  // the segment being recorded, after the prologue (a long one is a loop's every event)
	apps int      // app_dispatch events in seg
	ids  []uint64 // scratch: the segment's dispatch ids, when it is cut

	// What is in flight, per thread and for the application.
	windows openCounts     // open PASS windows (they nest, MEM-6)
	tools   openCounts     // dispatches the tool is writing
	pending map[string]int // application dispatches not yet complete

	// What earlier segments hold that no later event may name.
	closedIDs    idRanges            // dispatch ids come in runs: kept as ranges
	closedLabels map[uint64]struct{} // labels by hash: a collision only stops the cutting
	// Labels of a repeated dispatch's repetitions (spec.RepetitionLabel),
	// as ranges of the repetition's index per dispatch name: a million
	// repetitions are one range, not a million hashes.
	closedReps map[string]*idRanges
	// dispatched: threads that wrote an application dispatch before the
	// segment began, and have not written one in it yet (their events
	// belong to their last dispatch, in an earlier segment).
	dispatched map[uint64]bool
	fresh      map[uint64]bool // threads that wrote one in this segment

	// Kinds of events the oracles ask the whole trace about
	// (index.has): which every segment held, and which some segment lacked.
	seen, lacked kinds

	// whole is set from the first event whose rule reads across
	// dispatches (uncut): the rest of the trace is one segment.
	whole bool

	seams    seams // what compares dispatches across segments (counter.go)
	added    int   // events taken so far
	segStart int   // the position in the trace of seg's first event

	times timeSeams // MEM-6's records timed across segments

	// loop is the dispatch whose replay loop the open segment may be cut
	// inside, between passes (loop.go); loopEvery the passes a cut waits
	// for, 0 never.
	loop       *loopCut
	indefinite uint64 // the dispatch the last pass count of 0 was for
	// loopLost: a loop cut between passes broke a rule after a cut, or
	// held what its parts cannot carry: the trace is judged whole.
	loopLost bool
	// fullProfile: the trace reports every source. Loops are cut only
	// then: at a narrower profile some oracles count a loop's passes from
	// what they can see in ways the parts do not add up to (found by
	// internal/faults' TestStreamCutsLoopsAsJudge at the black-box profile).
	fullProfile bool
	loopEvery   int
	loopCuts    int
	// blindLoops, set by a test, cuts loops without telling the oracles
	// what a part leaves out: a broken stream the tests must catch.
	blindLoops bool

	// minSegment: a segment is cut only once it holds this many events,
	// so that the work each judgement repeats (the prologue's, the
	// index's) is shared by many dispatches; 0 cuts at every chance.
	// ahead holds a dispatch's first events while the stream looks for
	// its pass count (Add); aheadBuf is its storage between looks.
	minSegment      int
	ahead, aheadBuf []trace.Event

	// expect judges a spec's expectations segment by segment (Expect).
	// expectAt is the segment each label they name was first seen in:
	// its keys are judged there, so a label seen again in a later
	// segment, or a dispatch expected to abort the process that a later
	// segment follows, sets expectLost, and the trace is judged whole.
	expect     *expectJudge
	expectAt   map[string]int
	expectLost bool
	expected   []Violation
	unobserved []string

	segments   int
	separable  bool
	instances  map[string]int
	violations []Violation
	reported   map[string]bool

	// The prologue's own judgement, subtracted from each segment's.
	baseFor  int // len(prologue) it was made for; -1 none
	baseInst map[string]int
	// lastProcessDied: the last segment judged saw its process die.
	lastProcessDied bool

	// aside, when set (JudgeAside), judges closed segments on a goroutine
	// of its own. What judgeSegment writes (seams, instances, violations,
	// reported, seen, lacked, the base) is that goroutine's while it
	// runs; the stream waits for it (drain) before it touches them.
	aside       *judgeAside
	judgedAside int // segments handed to it (tests)
}

// kinds is a set of the event kinds index.has is asked about, and of the
// payload flags API-6 asks about.
type kinds uint32

const (
	kindPayload kinds = 1 << iota
	kindAPI
	kindAPICall
	kindAgent
	kindReadback
	kindCallback
	kindDispatchID
	kindKernel
	kindReturned
	kindSignal
	kindRecord
	kindLocal
	kindWarning
	kindAlloc
)

var kindOf = map[trace.Type]kinds{
	trace.API: kindAPI, trace.APICall: kindAPICall, trace.AgentInfo: kindAgent,
	trace.AppReadback: kindReadback, trace.Callback: kindCallback, trace.DispatchID: kindDispatchID,
	trace.Kernel: kindKernel, trace.Returned: kindReturned, trace.Signal: kindSignal,
	trace.Record: kindRecord, trace.Local: kindLocal, trace.Warning: kindWarning, trace.AppAlloc: kindAlloc,
}

// carried are the kinds of events a later segment needs from earlier ones:
// the tool's SDK calls (contexts, configuration), the agents, and the
// application's buffers. (These three sets are switches, not maps: they
// are asked about every event, and a map hashes the type's string.)
func carried(k evKind) bool {
	switch k {
	case ekAPI, ekAgentInfo, ekAppAlloc, ekAppFree:
		return true
	}
	return false
}

// uncut are the events whose rules relate dispatches to each other: a
// local context call changes what later loops deliver (LCX), and a warning
// is printed once per process (PC-6, MEM-5). From the first of them on, the
// trace is not cut again.
func uncut(k evKind) bool { return k == ekLocal || k == ekWarning }

// appEvents name an application dispatch by its label.
func appEvent(k evKind) bool {
	switch k {
	case ekAppDispatch, ekAppComplete, ekAppTimeout, ekAppReadback, ekAppSignal:
		return true
	}
	return false
}

// NewStream starts judging a trace with header h.
func NewStream(h trace.Header) *Stream {
	return &Stream{
		header: h, pending: map[string]int{},
		closedLabels: map[uint64]struct{}{}, closedReps: map[string]*idRanges{},
		lastOnThread: map[uint64]int{}, lastBySource: map[trace.Source]int{},
		dispatched: map[uint64]bool{}, fresh: map[uint64]bool{},
		separable: true, instances: map[string]int{}, reported: map[string]bool{}, baseFor: -1,
		loopEvery: defaultLoopEvery, fullProfile: reportsAll(h), minSegment: defaultMinSegment,
	}
}

// defaultMinSegment: the events a segment holds at least before it is cut
// (Stream.minSegment); a few MiB unpacked. maxAhead: the events of a
// dispatch held while looking for its pass count; a dispatch is not
// looked at further (it is not cut before).
const (
	defaultMinSegment = 4096
	maxAhead          = 64
)

// SegmentsOfAtLeast sets how many events a segment holds at least before
// it is cut (0: at every chance, as the tests that compare the stream with
// Judge do).
func (s *Stream) SegmentsOfAtLeast(events int) { s.minSegment = events }

func reportsAll(h trace.Header) bool {
	for _, src := range []trace.Source{trace.SourceTool, trace.SourceApp, trace.SourceRuntime, trace.SourceSDK} {
		if !h.Reports(src) {
			return false
		}
	}
	return true
}

// Separable reports whether every segment so far could be judged on its own.
// Once it is false it stays false, and the caller must judge the trace whole.
func (s *Stream) Separable() bool { return s.separable }

// Segments is how many segments were judged apart.
func (s *Stream) Segments() int { return s.segments }

// Add takes the next event of the trace.
func (s *Stream) Add(e trace.Event) { s.AddEvent(&e) }

// AddEvent is Add of *e, which the stream copies: e may be reused once it
// returns.
func (s *Stream) AddEvent(e *trace.Event) {
	if !s.separable {
		return
	}
	if s.ahead != nil {
		if e.Type == trace.AppDispatch {
			s.release(false) // the held dispatch runs no loop to cut
		} else {
			s.ahead = appendEvent(s.ahead, e)
			if e.Type == trace.PassCount && e.Thread == s.ahead[0].Thread {
				s.release(e.Result != nil && *e.Result == 0)
			} else if len(s.ahead) >= maxAhead {
				s.release(false)
			}
			return
		}
	}
	if e.Type == trace.AppDispatch && s.apps > 0 && !s.whole && s.quiet() {
		switch {
		case s.seg.Len() >= s.minSegment:
			s.cut()
		case s.cutsLoops():
			// A loop is cut only alone in its segment: hold this
			// dispatch's first events until its pass count says
			// whether it may never end, and cut before it if so.
			s.ahead = appendEvent(s.aheadBuf[:0], e)
			return
		}
	}
	s.add(e)
}

// release ends a look ahead: cut before the held dispatch when cut, then
// take the held events as they came.
func (s *Stream) release(cut bool) {
	held := s.ahead
	s.ahead, s.aheadBuf = nil, held
	if cut {
		s.cut()
	}
	for i := range held {
		if !s.separable {
			return
		}
		s.add(&held[i])
	}
}

// add takes e into the open segment.
func (s *Stream) add(e *trace.Event) {
	if s.loopLost || s.expectLost {
		s.giveUp()
		return
	}
	// e's type as a small number, asked of its string once: every step
	// below looks at it.
	k := s.seg.cols.kc.of(e.Type)
	if uncut(k) {
		s.whole = true
	}
	if !s.watch(e, k) {
		s.giveUp()
		return
	}
	s.track(e, k)
	if !s.times.add(e, k) {
		s.giveUp()
		return
	}
	if s.seg.Len() == 0 {
		s.segStart = s.added
	}
	if prev := s.previous(e, s.added); carried(k) {
		s.pendingPrev = append(s.pendingPrev, prev)
	}
	s.seg.push(e, k)
	s.added++
	s.followLoop(e, k)
}

// previous is the position of the event before e on its thread (for an
// event of no thread, the one before of its source), -1 none, and notes e
// as the last.
func (s *Stream) previous(e *trace.Event, at int) int {
	prev := -1
	if e.Thread != 0 {
		if e.Thread != s.curThread {
			if s.curThread != 0 {
				s.lastOnThread[s.curThread] = s.curAt
			}
			s.curThread, s.curAt = e.Thread, -1
			if p, ok := s.lastOnThread[e.Thread]; ok {
				s.curAt = p
			}
		}
		prev, s.curAt = s.curAt, at
		return prev
	}
	src, _ := e.Type.Source()
	if p, ok := s.lastBySource[src]; ok {
		prev = p
	}
	s.lastBySource[src] = at
	return prev
}

// quiet: nothing is in flight anywhere.
func (s *Stream) quiet() bool {
	return len(s.pending) == 0 && len(s.windows) == 0 && len(s.tools) == 0
}

// watch reports false when e looks back past a cut.
func (s *Stream) watch(e *trace.Event, k evKind) bool {
	if s.segments == 0 {
		return true
	}
	switch {
	case e.Dispatch != 0 && s.closedIDs.has(e.Dispatch):
		return false
	case appEvent(k) && s.closedLabel(e.Label):
		return false
	case !carried(k) && k != ekAppDispatch && !s.fresh[e.Thread] && s.dispatched[e.Thread]:
		return false // it belongs to its thread's last dispatch, judged already
	}
	return true
}

// giveUp: the trace is not separable; what is held is of no more use.
func (s *Stream) giveUp() {
	s.separable = false
	s.seg, s.prologue = segment{}, nil
	s.Close()
}

// track keeps what is in flight.
func (s *Stream) track(e *trace.Event, k evKind) {
	switch k {
	case ekCallback:
		if e.Op == trace.OpPass {
			s.windows.count(e.Thread, e.Phase == trace.PhaseEnter)
		}
	case ekToolDispatch:
		s.tools.count(e.Thread, true)
	case ekToolComplete:
		s.tools.count(e.Thread, false)
	case ekAppDispatch:
		s.apps++
		s.pending[e.Label]++
		s.fresh[e.Thread] = true
	case ekAppComplete, ekAppTimeout:
		if s.pending[e.Label] > 0 {
			s.pending[e.Label]--
			if s.pending[e.Label] == 0 {
				delete(s.pending, e.Label)
			}
		}
	}
}

// openCounts counts what is open on each thread (PASS windows, the
// tool's dispatches), a thread listed while it has one open: a few
// threads, looked for in turn (in a map, a PASS EXIT deleted its thread
// and the next PASS ENTER put it back, twice a pass).
type openCounts []openCount

type openCount struct {
	thread uint64
	n      int
}

// count opens one more on thread when up, else closes one (none open:
// nothing to close).
func (o *openCounts) count(thread uint64, up bool) {
	for k := range *o {
		if c := &(*o)[k]; c.thread == thread {
			switch {
			case up:
				c.n++
			case c.n > 1:
				c.n--
			default:
				*o = slices.Delete(*o, k, k+1)
			}
			return
		}
	}
	if up {
		*o = append(*o, openCount{thread, 1})
	}
}

// cut judges the segment recorded so far and forgets it: aside (on the
// judging goroutine, JudgeAside) unless a loop was cut in it, whose
// judgement the stream must know before it goes on.
func (s *Stream) cut() {
	if s.seg.Len() == 0 {
		return
	}
	np := len(s.prologue)
	ev := s.seg.all()
	here := s.expectHere(ev[np:], false)
	if s.expectLost {
		return // add gives up
	}
	job := segJob{ev: ev, np: np, segStart: s.segStart, from: s.prologueFrom, cols: s.seg.cols, here: here}
	aside := s.aside != nil && !s.loop.wasCut()
	if !aside {
		s.drain()
		s.judgeSegment(job, s.loop)
	}
	s.segments++
	ids := s.ids[:0]
	seg := ev[np:]
	for i := range seg {
		e := &seg[i]
		if e.Dispatch != 0 && (len(ids) == 0 || ids[len(ids)-1] != e.Dispatch) {
			ids = append(ids, e.Dispatch) // a dispatch's events come in runs: one each, not thousands to sort
		}
		if e.Type == trace.AppDispatch {
			s.closeLabel(e.Label)
			s.dispatched[e.Thread] = true
		}
		if carried(evKindOf(e.Type)) {
			s.prologue = appendEvent(s.prologue, e)
			s.prologueAt = append(s.prologueAt, s.segStart+i+s.loop.hiddenBefore(i))
		}
	}
	s.closedIDs.add(ids)
	s.ids = ids
	s.times.cut()
	for _, prev := range s.pendingPrev {
		// The last prologue event at or before prev.
		k, _ := slices.BinarySearch(s.prologueAt, prev+1)
		s.prologueFrom = append(s.prologueFrom, k-1)
	}
	s.pendingPrev = s.pendingPrev[:0]
	clear(s.fresh)
	s.apps = 0
	s.loop = nil
	if aside {
		// The job's ev, np and from are not written again: the prologue
		// and prologueFrom are only appended to, and the stream
		// assembles the next segment in another buffer.
		s.seg.ev, s.seg.cols = s.aside.submit(job)
		s.judgedAside++
	}
	s.seg.begin(s.prologue)
}

// note records which kinds of event the segment (with its prologue) held;
// of the kinds in ignore, it says nothing (a part of a loop judges no
// completion, which is all they are asked about for).
func (s *Stream) note(x *index, ignore kinds) {
	var have kinds
	for ty, k := range kindOf {
		if x.has(ty) {
			have |= k
		}
	}
	if x.payloads {
		have |= kindPayload
	}
	s.seen |= have &^ ignore
	s.lacked |= ^have &^ ignore
}

// segJob is a closed segment to judge: ev its prologue (np events) and
// its events, segStart the position of its first event in the trace, from
// the prologue's prologueFrom.
type segJob struct {
	ev           []trace.Event
	np, segStart int
	from         []int
	cols         columns         // ev's (segment.cols)
	here         map[string]bool // the labels of the spec's expectations its events name (Stream.expectHere)
}

// judgeSegment runs the oracles over the prologue and the segment of j,
// in place, and adds what they found to the totals, less what the
// prologue alone gives; l is the loop cut in it, if any (judged inline
// only). It reads and writes only what the judging goroutine owns while
// one judges aside (Stream.aside).
func (s *Stream) judgeSegment(j segJob, l *loopCut) {
	ev := j.ev
	x := newIndexInts(trace.Trace{Header: s.header, Events: ev}, &j.cols, takePositions())
	s.seams.offset = j.segStart - j.np
	s.seams.prologueFrom = j.from
	x.seams = &s.seams
	if l.wasCut() {
		x.cut = l.elision(false)
	}
	vs := runFamilies(x)
	base := s.base(ev[:j.np], j.from)
	if l.wasCut() {
		// The loop's head and last judged pass were counted already.
		var adj map[string]int
		base, adj = s.loopBase(ev[:j.np+l.carried], j.cols.prefix(j.np+l.carried))
		if d := x.dispatches[l.id]; d == nil || len(d.neverEnded) == 0 {
			// It ended by itself, not by the pass budget: the parts
			// count as such a loop's (selfEnding).
			base = maps.Clone(base)
			for rule, n := range adj {
				base[rule] += n
			}
			for rule, n := range l.adj {
				s.instances[rule] += n
			}
		}
		for _, v := range vs {
			if !s.reported[violationKey(v)] && !l.blind {
				// A rule broken after the cut may read what the part left
				// out (the passes before it): Judge says what it is.
				s.loopLost = true
			}
		}
	}
	for rule, n := range x.instances {
		s.instances[rule] += n - base[rule]
	}
	for rule, n := range base {
		if _, ok := x.instances[rule]; !ok {
			s.instances[rule] -= n
		}
	}
	for _, v := range vs {
		if k := violationKey(v); !s.reported[k] {
			s.reported[k] = true
			s.violations = append(s.violations, v)
		}
	}
	s.note(x, 0)
	s.lastProcessDied = x.processDied()
	if s.expect != nil {
		s.expect.part(x, j.np, j.here)
	}
	x.givePositions()
}

// base is the instances of prologue (with its prologueFrom, from) judged
// alone, made again only when the prologue grew: the prologue only grows,
// so its length says which it is.
func (s *Stream) base(prologue []trace.Event, from []int) map[string]int {
	if s.baseFor != len(prologue) {
		x := newIndex(trace.Trace{Header: s.header, Events: slices.Clone(prologue)})
		x.seams = &seams{prologueFrom: from, scratch: true}
		runFamilies(x)
		s.baseInst, s.baseFor = x.instances, len(prologue)
	}
	return s.baseInst
}

// Finish judges the last segment and returns the judgement of the whole
// trace; ok is false when the trace was not separable (judge it whole).
func (s *Stream) Finish() (j Judgement, ok bool) {
	if s.ahead != nil {
		s.release(false)
	}
	if !s.separable {
		s.Close()
		return Judgement{}, false
	}
	last := s.segments
	s.times.cut()
	s.Close()
	ev := s.seg.all()
	here := s.expectHere(ev[len(s.prologue):], true)
	if s.expectLost {
		s.separable = false
		s.seg.release()
		return Judgement{}, false
	}
	s.judgeSegment(segJob{ev: ev, np: len(s.prologue), segStart: s.segStart, from: s.prologueFrom, cols: s.seg.cols, here: here}, s.loop)
	s.segments++
	s.seg.release()
	s.prologue = nil
	// A kind of event one segment lacked and another held, or a process
	// that died (its loss is read against every dispatch under way), is
	// read by the oracles over the whole trace.
	if s.seen&s.lacked != 0 || last > 0 && s.lastProcessDied || s.seams.broken || !s.times.apart() || s.loopLost {
		s.separable = false
		return Judgement{}, false
	}
	for _, c := range []*counterSeq{&s.seams.reserved, &s.seams.seen} {
		n, vs := c.result()
		if n > 0 {
			s.instances["DID-3"] += n
		}
		s.violations = append(s.violations, vs...)
	}
	if s.expect != nil {
		s.expected, s.unobserved = s.expect.finish()
	}
	return judgement(s.header, sortViolations(s.violations), s.instances), true
}

// Expect has the stream judge spec sp's expectations as well, which
// Expectations gives once Finish has judged the trace. Call it before the
// first event. A loop is then cut between passes only as far as the
// expectations allow (cutsLoops).
func (s *Stream) Expect(sp spec.Spec) {
	if !HasExpectations(sp) {
		return
	}
	s.expect = newExpectJudge(sp, s.header)
	s.expectAt = map[string]int{}
}

// HasExpectations reports whether spec s expects anything of its trace
// (expect:, the violations it expects of the oracles aside: the runner's
// business).
func HasExpectations(s spec.Spec) bool {
	ex := s.Expect
	ex.Violations = nil
	return !reflect.ValueOf(ex).IsZero()
}

// Expectations are the spec's expectations that failed, and the keys the
// trace cannot show (JudgeExpectations), once Finish said the trace was
// separable.
func (s *Stream) Expectations() (failed []Violation, unobserved []string) {
	return s.expected, s.unobserved
}

// expectHere lists the labels of the spec's expectations that the events
// of the segment seg name, and notes a label an earlier segment named, or
// a dispatch expected to abort the process in a segment that is not the
// last (expectLost). An api, local or agent event's label names a context
// or an agent, not a dispatch.
func (s *Stream) expectHere(seg []trace.Event, last bool) map[string]bool {
	if s.expect == nil {
		return nil
	}
	here := map[string]bool{}
	prev := "" // the label looked up last: a dispatch's events come in runs
	for i := range seg {
		e := &seg[i]
		if e.Label == "" || e.Label == prev || e.Type == trace.API || e.Type == trace.Local || e.Type == trace.AgentInfo {
			continue
		}
		l := e.Label
		prev = l
		if !s.expect.labels[l] {
			continue
		}
		here[l] = true
		if at, seen := s.expectAt[l]; seen && at != s.segments {
			s.expectLost = true
		}
		s.expectAt[l] = s.segments
		if !last && s.expect.aborts[l] {
			s.expectLost = true
		}
	}
	return here
}

// violationKey identifies a violation: a prologue's is found again by
// every segment it is put before.
func violationKey(v Violation) string {
	var b strings.Builder
	b.WriteString(v.Rule)
	b.WriteByte(0)
	b.WriteString(v.Message)
	b.WriteByte(0)
	b.WriteString(v.Label)
	b.WriteByte(0)
	b.WriteString(strconv.FormatUint(v.Dispatch, 10))
	for _, e := range v.Events {
		b.WriteByte(0)
		b.WriteString(strconv.FormatUint(e.Seq, 10))
		b.WriteString(string(e.Type))
	}
	return b.String()
}

// JudgeStream judges t event by event through a Stream: what a reader that
// never holds the whole trace would conclude. ok is false when t is not
// separable (Judge(t) is then the judgement).
func JudgeStream(t trace.Trace) (j Judgement, segments int, ok bool) {
	j, segments, _, ok = JudgeStreamLoops(t, defaultLoopEvery)
	return j, segments, ok
}

// JudgeStreamLoops is JudgeStream with a loop alone in its segment cut
// every passes passes (Stream.CutLoopsEvery); cuts is how many times one
// was.
func JudgeStreamLoops(t trace.Trace, passes int) (j Judgement, segments, cuts int, ok bool) {
	return JudgeStreamSized(t, 0, passes)
}

// JudgeStreamSized is JudgeStreamLoops with segments of at least events
// events (Stream.SegmentsOfAtLeast): JudgeStream cuts at every chance.
func JudgeStreamSized(t trace.Trace, events, passes int) (j Judgement, segments, cuts int, ok bool) {
	s := NewStream(t.Header)
	s.SegmentsOfAtLeast(events)
	s.CutLoopsEvery(passes)
	s.JudgeAside() // as replayspec check judges: the runner's Stream judges inline
	defer s.Close()
	for i := range t.Events {
		s.Add(t.Events[i])
	}
	j, ok = s.Finish()
	return j, s.Segments(), s.LoopCuts(), ok
}

// JudgeStreamSpec is JudgeSpec(s, t) through a Stream that judges s's
// expectations as well, its segments of at least events events (0: cut at
// every chance). ok is false when t is not separable (JudgeSpec is then
// the judgement).
func JudgeStreamSpec(s spec.Spec, t trace.Trace, events int) (j Judgement, expected []Violation, unobserved []string, segments int, ok bool) {
	j, expected, unobserved, segments, _, ok = JudgeStreamSpecLoops(s, t, events, defaultLoopEvery)
	return j, expected, unobserved, segments, ok
}

// JudgeStreamSpecLoops is JudgeStreamSpec with a loop alone in its
// segment cut every passes passes, as far as s's expectations allow; cuts
// is how many times one was.
func JudgeStreamSpecLoops(s spec.Spec, t trace.Trace, events, passes int) (j Judgement, expected []Violation, unobserved []string, segments, cuts int, ok bool) {
	st := NewStream(t.Header)
	st.SegmentsOfAtLeast(events)
	st.CutLoopsEvery(passes)
	st.Expect(s)
	st.JudgeAside()
	defer st.Close()
	for i := range t.Events {
		st.AddEvent(&t.Events[i])
	}
	if j, ok = st.Finish(); !ok {
		return Judgement{}, nil, nil, st.Segments(), st.LoopCuts(), false
	}
	expected, unobserved = st.Expectations()
	return j, expected, unobserved, st.Segments(), st.LoopCuts(), true
}

// timeSeams keeps a streamed trace separable under MEM-6's reading of the
// tool's records (checkAgentHeldSeen): a loop's passes, as its own timed
// records span them (lo..hi), are compared with every other dispatch's
// timed record on the agent that starts before hi and within the longest
// record's length before lo. A record of an earlier segment must then start
// at least that length before each later loop's lo, and one of a later
// segment at or after each earlier loop's hi; else the trace is judged
// whole.
type timeSeams struct {
	longest uint64
	// Of the closed segments, per agent: the latest record start, the
	// latest loop end, and the least distance from a record's start to a
	// later loop's lo.
	lastStart, lastHi map[uint64]uint64
	slack             map[uint64]uint64
	// Of the open segment: per agent the latest record start; per dispatch
	// its records' span and whether it is a loop.
	segStart map[uint64]uint64
	spans    map[uint64]*timedSpan
	last     *timedSpan // spans[lastID]: a dispatch's events come in runs
	lastID   uint64
}

type timedSpan struct {
	agent, lo, hi uint64
	loop          bool
}

// add takes e; false when a record of it starts before a loop of an
// earlier segment ended.
func (t *timeSeams) add(e *trace.Event, k evKind) bool {
	if t.spans == nil {
		t.lastStart, t.lastHi, t.slack = map[uint64]uint64{}, map[uint64]uint64{}, map[uint64]uint64{}
		t.segStart, t.spans = map[uint64]uint64{}, map[uint64]*timedSpan{}
	}
	if k == ekCallback && e.Op == trace.OpPass && e.Dispatch != 0 {
		t.span(e.Dispatch).loop = true
	}
	if k != ekRecord || !dispatchScoped(e.Service) || e.Start == 0 || e.End < e.Start {
		return true
	}
	t.longest = max(t.longest, e.End-e.Start)
	if hi, ok := t.lastHi[e.Agent]; ok && e.Start < hi {
		return false
	}
	t.segStart[e.Agent] = max(t.segStart[e.Agent], e.Start)
	if e.Dispatch != 0 {
		sp := t.span(e.Dispatch)
		if sp.lo == 0 || e.Start < sp.lo {
			sp.lo, sp.agent = e.Start, e.Agent
		}
		sp.hi = max(sp.hi, e.End)
	}
	return true
}

func (t *timeSeams) span(id uint64) *timedSpan {
	if t.last != nil && t.lastID == id {
		return t.last
	}
	sp := t.spans[id]
	if sp == nil {
		sp = &timedSpan{}
		t.spans[id] = sp
	}
	t.last, t.lastID = sp, id
	return sp
}

// cut closes the open segment.
func (t *timeSeams) cut() {
	for _, sp := range t.spans {
		if !sp.loop || sp.lo == 0 {
			continue
		}
		if start, ok := t.lastStart[sp.agent]; ok {
			gap := uint64(0)
			if sp.lo > start {
				gap = sp.lo - start
			}
			if s, seen := t.slack[sp.agent]; !seen || gap < s {
				t.slack[sp.agent] = gap
			}
		}
		t.lastHi[sp.agent] = max(t.lastHi[sp.agent], sp.hi)
	}
	for agent, start := range t.segStart {
		t.lastStart[agent] = max(t.lastStart[agent], start)
	}
	clear(t.segStart)
	clear(t.spans)
	t.last = nil
}

// apart: at the end, with the longest record known, no earlier record came
// within its length of a later loop's passes.
func (t *timeSeams) apart() bool {
	for _, gap := range t.slack {
		if gap < t.longest {
			return false
		}
	}
	return true
}

// closedLabel reports whether an application dispatch of an earlier
// segment had label.
func (s *Stream) closedLabel(label string) bool {
	if name, k, ok := spec.SplitRepetition(label); ok {
		r := s.closedReps[name]
		return r != nil && r.has(k)
	}
	_, ok := s.closedLabels[labelHash(label)]
	return ok
}

// closeLabel notes that an application dispatch of a segment judged had
// label.
func (s *Stream) closeLabel(label string) {
	if name, k, ok := spec.SplitRepetition(label); ok {
		r := s.closedReps[name]
		if r == nil {
			r = &idRanges{}
			s.closedReps[name] = r
		}
		r.addOne(k)
		return
	}
	s.closedLabels[labelHash(label)] = struct{}{}
}

func labelHash(label string) uint64 { return xxh3.HashString(label) }

// idRanges is a set of dispatch ids as sorted, disjoint, non-adjacent
// ranges: a run's ids are mostly consecutive, so it stays small.
type idRanges []idRange

type idRange struct{ lo, hi uint64 } // lo..hi, both in

// has reports whether id is in the set.
func (r idRanges) has(id uint64) bool {
	k, _ := slices.BinarySearchFunc(r, id, func(g idRange, id uint64) int {
		switch {
		case g.hi < id:
			return -1
		case g.lo > id:
			return 1
		}
		return 0
	})
	return k < len(r) && r[k].lo <= id && id <= r[k].hi
}

// add puts ids (any order, repeats allowed; sorted in place) in the set.
func (r *idRanges) add(ids []uint64) {
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		r.addOne(id)
	}
}

func (r *idRanges) addOne(id uint64) {
	s := *r
	if n := len(s); n > 0 && s[n-1].hi+1 == id {
		s[n-1].hi = id // the common case: the next id
		return
	}
	if n := len(s); n == 0 || s[n-1].hi < id {
		*r = append(s, idRange{id, id})
		return
	}
	if s.has(id) {
		return
	}
	k, _ := slices.BinarySearchFunc(s, id, func(g idRange, id uint64) int {
		if g.hi < id {
			return -1
		}
		return 1
	})
	// s[k] is the first range above id; join the neighbours it touches.
	switch {
	case k > 0 && s[k-1].hi+1 == id && s[k].lo == id+1:
		s[k-1].hi = s[k].hi
		*r = slices.Delete(s, k, k+1)
	case k > 0 && s[k-1].hi+1 == id:
		s[k-1].hi = id
	case s[k].lo == id+1:
		s[k].lo = id
	default:
		*r = slices.Insert(s, k, idRange{id, id})
	}
}
