package check

import (
	"github.com/replayspec/replayspec/trace"
)

// Cutting inside a loop (issue 23): a never-ending loop is one application
// dispatch, so Stream's segments, cut only between dispatches, held it
// whole. A loop alone in its segment is cut between passes as well: after
// a pass's continue said go on, with nothing else in flight. Each part
// judged is the segment's start through pass 0 (the dispatch's opening:
// carried into every part), the last pass judged before (so that each pass
// is compared with the one before it), and the passes since; the index is
// told which passes it leaves out (index.cut), and that the loop goes on
// (what is judged at a loop's end waits for the part that holds it).
// Instances are the part's less those of what it carried; until its end
// the loop may end by the pass budget or by itself, and each part is
// counted both ways (selfEnding). Only clean passes are left out: a part
// that finds a violation is not cut (its events stay in the segment, and
// the loop is not cut again), and a loop cut before that then breaks a
// rule, or holds what the parts cannot carry, leaves the trace to Judge
// (Finish says it is not separable): what an oracle reports once per
// dispatch, or only the first of, or reads across every pass, is then
// found as Judge finds it. docs/oracles.md, "Judged as a stream".

// defaultLoopEvery: a part holds at least this many new passes, so that
// judging what it carries again is a small share of the work.
const defaultLoopEvery = 256

// loopCut is the loop being cut, in the open segment.
type loopCut struct {
	id, thread uint64
	label      string
	off        bool // not cut again: something in it the parts cannot carry
	ended      bool // its never_ended report came, or its continue said stop
	// adj: what the parts' instances would add up to more, were the loop
	// to end by itself rather than by the pass budget (selfEnding).
	adj map[string]int
	// Positions in seg: the end of pass 0's continue (the head, carried),
	// where the pass after the last continue begins and where the last
	// pass begun.
	headEnd, next, last int
	lastPass            uint64 // the pass the last continue answered
	fresh               int    // passes ended in seg since the last cut
	carried             int    // seg's first events, carried: the head and the last judged pass
	elidedTo            uint64 // passes [1, elidedTo) are left out of seg
	hidden              int    // events of the trace left out of seg
	// blind, in tests only, is a naive stream: the index is not told
	// what a part leaves out, and the parts' findings are taken as they
	// are (TestLoopCutsMustTellTheOracles).
	blind bool
}

func (l *loopCut) wasCut() bool { return l != nil && l.carried > 0 }

// hiddenBefore is how many events of the trace lie left out before seg's
// event i.
func (l *loopCut) hiddenBefore(i int) int {
	if l == nil || i < l.headEnd {
		return 0
	}
	return l.hidden
}

func (l *loopCut) elision(open bool) elision {
	if l.blind {
		return elision{dispatch: l.id, open: open} // a test's broken stream: not told what a part leaves out
	}
	return elision{dispatch: l.id, lo: 1, hi: l.elidedTo, open: open}
}

// CutLoopsEvery sets how many passes of a loop alone in its segment are
// judged at a time (0: loops are not cut, a loop is held whole). Tests set
// it low to cut every loop they have.
func (s *Stream) CutLoopsEvery(passes int) { s.loopEvery = passes }

// cutsLoops: loops are cut between passes. Only at the full profile (see
// Stream.fullProfile), and, while the spec's expectations are judged,
// only when they allow it (expectJudge.cutsLoops): the parts between cuts
// are judged by the oracles, the passes a cut leaves out are counted by
// the expectations that add events up over the run (expectJudge.hidden),
// and the expectations judge the last part. A loop whose dispatch they
// name otherwise than by never_ends is not cut (expectJudge.loopSafe).
func (s *Stream) cutsLoops() bool {
	return s.loopEvery > 0 && s.fullProfile && (s.expect == nil || s.expect.cutsLoops())
}

// LoopCuts is how many times a loop was cut between passes.
func (s *Stream) LoopCuts() int { return s.loopCuts }

// followLoop watches e, just added to seg, for a loop to cut.
func (s *Stream) followLoop(e *trace.Event, k evKind) {
	l := s.loop
	if l != nil && l.ended {
		return // what follows is judged with the loop's last part, whole
	}
	if l != nil && k == ekNeverEnded && e.Dispatch == l.id {
		l.ended = true // the pass budget ended it (CMP-4), as its parts were judged
		return
	}
	if l.wasCut() && (s.whole || l.off) {
		// Cut before, and now something the parts cannot carry, or a
		// part that broke a rule: Judge says what the loop is.
		s.loopLost = true
		return
	}
	if !s.cutsLoops() || s.whole {
		return
	}
	if l == nil {
		// Only an indefinite loop (pass count 0) is cut, the one that may
		// never end: a fixed loop's passes are few. It begins at pass 0's
		// PASS ENTER, and is cut only when its application dispatch is
		// the segment's only one.
		if k == ekPassCount && e.Result != nil && *e.Result == 0 {
			s.indefinite = e.Dispatch
		}
		if e.Dispatch == s.indefinite && k == ekCallback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter && e.Dispatch != 0 &&
			s.apps == 1 && len(s.pending) == 1 && len(s.tools) == 0 && len(s.windows) == 1 {
			if p, ok := e.PassOf(); ok && p == 0 {
				s.loop = &loopCut{id: e.Dispatch, thread: e.Thread, blind: s.blindLoops, adj: map[string]int{}}
				for label := range s.pending {
					s.loop.label = label
				}
				// An expectation that counts its passes, runs or records
				// needs the loop whole: one part.
				s.loop.off = s.expect != nil && !s.expect.loopSafe(s.loop.label)
			}
		}
		return
	}
	if l.off {
		return
	}
	if e.Thread != l.thread || e.Dispatch != 0 && e.Dispatch != l.id || carried(k) || k == ekAppDispatch {
		// Another thread's events, another dispatch (one the tool
		// wrote), a call later parts would need: what the parts cannot
		// carry. The rest of the loop is one part.
		l.off = true
		s.loopLost = l.wasCut()
		return
	}
	if k != ekContinue || e.Dispatch != l.id {
		return
	}
	if e.Result == nil || *e.Result == 0 {
		// The loop ends here, by itself: what follows is its last
		// part's, judged with the completion.
		l.ended = true
		return
	}
	pass, _ := e.PassOf()
	end := s.seg.Len()
	if l.headEnd == 0 {
		if pass != 0 {
			l.off = true
			return
		}
		l.headEnd, l.next = end, end
		return
	}
	l.last, l.next, l.lastPass = l.next, end, pass
	l.fresh++
	if l.fresh >= s.loopEvery && len(s.windows) == 0 && len(s.tools) == 0 &&
		s.apps == 1 && len(s.pending) == 1 && s.pending[l.label] == 1 {
		s.cutLoop()
	}
}

// cutLoop judges the open segment, whose loop goes on, and keeps of it
// only its head and its last pass.
func (s *Stream) cutLoop() {
	l := s.loop
	s.drain() // what it writes is the judging goroutine's until then
	np := len(s.prologue)
	ev := s.seg.all() // the prologue, then the segment: judged in place
	x := newIndexCols(trace.Trace{Header: s.header, Events: ev}, &s.seg.cols)
	x.seams = &seams{prologueFrom: s.prologueFrom, scratch: true}
	x.cut = l.elision(true)
	vs := runFamilies(x)
	ending, adj := selfEnding(x)
	for _, v := range append(vs, ending...) {
		if k := violationKey(v); l.blind && !s.reported[k] {
			s.reported[k] = true // the naive stream: a part's findings taken as they are
			s.violations = append(s.violations, v)
		} else if !s.reported[k] {
			// A broken pass: the rest of the loop is judged in one
			// part, which finds it as Judge does; after a cut, Judge
			// judges the trace.
			l.off = true
			s.loopLost = l.wasCut()
			return // its events stay in the segment
		}
	}
	base, baseAdj := s.base(s.prologue, s.prologueFrom), map[string]int(nil)
	if l.wasCut() {
		base, baseAdj = s.loopBase(ev[:np+l.carried], s.seg.cols.prefix(np+l.carried))
	}
	for rule, n := range adj {
		l.adj[rule] += n
	}
	for rule, n := range baseAdj {
		l.adj[rule] -= n
	}
	for rule, n := range x.instances {
		s.instances[rule] += n - base[rule]
	}
	for rule, n := range base {
		if _, ok := x.instances[rule]; !ok {
			s.instances[rule] -= n
		}
	}
	s.note(x, kindSignal|kindReadback)
	if s.expect != nil {
		s.expect.hidden(x, np+l.headEnd, np+l.last) // the passes kept nowhere
	}
	s.seg.keep(l.headEnd, l.last) // the head and the last pass
	l.hidden += l.last - l.headEnd
	l.carried = l.headEnd + len(ev) - np - l.last
	l.elidedTo = l.lastPass
	l.next, l.fresh = l.carried, 0
	s.loopCuts++
}

// loopBase is the instances of what a part of a loop carried (ev: the
// prologue, the head and the last judged pass), judged alone: the part
// counts them again. adj is as selfEnding's.
func (s *Stream) loopBase(ev []trace.Event, cols *columns) (instances, adj map[string]int) {
	x := newIndexCols(trace.Trace{Header: s.header, Events: ev}, cols)
	x.seams = &seams{prologueFrom: s.prologueFrom, scratch: true}
	x.cut = s.loop.elision(true)
	runFamilies(x)
	_, adj = selfEnding(x)
	return x.instances, adj
}

// selfEnding judges x, a part of a loop judged as one the pass budget
// ends (CMP-4), again as one that ends by itself: only the completion's
// oracles (checkCMP) tell them apart. vs are what they find then; adj is
// what that adds to each rule's instances. Which of the two the loop was
// is known at its end (Stream.judgeSegment).
func selfEnding(x *index) (vs []Violation, adj map[string]int) {
	kept := x.instances
	x.instances = map[string]int{}
	checkCMP(x)
	budget := x.instances
	x.instances = map[string]int{}
	x.cut.ends = true
	vs = checkCMP(x)
	x.cut.ends = false
	adj = x.instances
	for rule, n := range budget {
		adj[rule] -= n
	}
	x.instances = kept
	return vs, adj
}
