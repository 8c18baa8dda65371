package report

import (
	"cmp"
	"errors"
	"slices"
	"sort"

	"github.com/replayspec/replayspec/trace"
)

// The page reads a trace as a stream (issue 23): a first reading, the
// survey, finds the dispatches it will draw; later readings draw them
// (html_timeline.go). Neither holds the trace: the survey keeps a record
// of each dispatch only until the application's wait for it returns, and
// then only if it may be drawn (maxPanels of those with a cited event,
// maxPanels of the others), so that a trace of any number of dispatches
// in a row costs the same.

// span is the events a dispatch's picture covers: from the application's
// dispatch to its wait returning, everything between on every thread.
type span struct {
	dispatch    uint64
	first, last int // indices into the trace
	label       string
	kernel      string
	thread      uint64
	agent       uint64
	queue       uint64
	cited       int
}

type threadLabel struct {
	thread uint64
	label  string
}

// surveyed is what the survey found: the dispatches to draw in order of
// first appearance, how many were left out, the agents, and how many
// events the trace holds.
type surveyed struct {
	spans  []span
	left   int
	agents map[uint64]trace.Event
	events int
}

// errResurvey ends a survey that forgot too much: a dispatch came back
// after the application's wait for it returned, or the application's
// dispatch before it is no longer known. The trace is surveyed again
// keeping every dispatch (a few words each, never their events): the same
// page, at a cost only such a trace pays.
var errResurvey = errors.New("survey again, keeping every dispatch")

// surveySpan is a dispatch while the survey reads.
type surveySpan struct {
	span
	rank        int
	f, l        int  // its own first and last events' indices
	citedBefore int  // cited events before span.first
	citedAtL    int  // cited events up to l
	closed      bool // its wait returned after l: span.last is that wait
	citedAtLast int  // when closed: cited events up to span.last
}

// appAt is an application's dispatch: its index, and the cited events
// before it.
type appAt struct{ i, citedBefore int }

// appHistory is the application's dispatches under one thread and label,
// the last two only unless the survey keeps everything.
type appHistory struct {
	recent  []appAt
	trimmed bool
}

// recentApps is how many of a label's dispatches the survey keeps: the
// one before a dispatch's first event is the last or, rarely, the one
// before it (a dispatch's label comes with its first callback).
const recentApps = 2

// maxIDRuns bounds the runs of dispatch ids the survey remembers; ids in no
// order past it are surveyed keeping every dispatch.
const maxIDRuns = 1 << 12

// survey reads events once and finds the dispatches to draw: every
// dispatch's span (dispatchSpans before issue 23), then those a violation
// cites first, then in order, maxPanels at most. keepAll keeps every
// dispatch's record to the end (errResurvey's case).
func survey(events Events, cited map[uint64]bool, keepAll bool) (surveyed, error) {
	sv := surveyed{agents: map[uint64]trace.Event{}}
	live := map[uint64]*surveySpan{}
	byKey := map[threadLabel][]*surveySpan{} // the open, labelled ones, by their wait's key
	apps := map[threadLabel]*appHistory{}
	var seen idRuns          // the dispatches closed and let go
	var best [2][]rankedSpan // the lowest ranks closed: with a cited event, without
	ranks, cnt := 0, 0
	agentsFirst := true
	keep := func(st *surveySpan) {
		st.cited = st.citedAtLast - st.citedBefore
		k := 1
		if st.cited > 0 {
			k = 0
		}
		at, _ := slices.BinarySearchFunc(best[k], st.rank, func(x rankedSpan, r int) int { return cmp.Compare(x.rank, r) })
		if at < maxPanels {
			l := slices.Insert(best[k], at, rankedSpan{st.rank, st.span})
			best[k] = l[:min(len(l), maxPanels)]
		}
	}
	closeAt := func(st *surveySpan, w int) {
		st.last, st.closed, st.citedAtLast = w, true, cnt
		if keepAll {
			return
		}
		delete(live, st.dispatch)
		seen.add(st.dispatch)
		keep(st)
	}
	i := -1
	err := events(func(e *trace.Event) error {
		i++
		citedBefore := cnt
		if cited[e.Seq] {
			cnt++
		}
		if agentsFirst {
			if e.Type == trace.AgentInfo {
				sv.agents[e.Agent] = *e
			}
			agentsFirst = e.Type == trace.AgentInfo || e.Type == trace.API || e.Type == trace.AppAlloc // agents are listed first
		}
		if d := e.Dispatch; d != 0 {
			st := live[d]
			switch {
			case st == nil && seen.has(d):
				return errResurvey
			case st == nil:
				if !keepAll && seen.len() > maxIDRuns {
					return errResurvey
				}
				st = &surveySpan{span: span{dispatch: d, first: i, thread: e.Thread}, rank: ranks, f: i, citedBefore: citedBefore}
				ranks++
				live[d] = st
			case st.closed:
				// Its events went on after its wait (keepAll only): the
				// span runs on to the next wait.
				st.closed = false
				byKey[threadLabel{st.thread, st.label}] = append(byKey[threadLabel{st.thread, st.label}], st)
			}
			st.l, st.citedAtL = i, cnt
			if st.label == "" && e.Label != "" && e.Type == trace.Callback {
				st.label = e.Label
				k := threadLabel{st.thread, st.label}
				// The application's dispatch before it (its first event's).
				if h := apps[k]; h != nil {
					j := len(h.recent) - 1
					for j >= 0 && h.recent[j].i >= st.f {
						j--
					}
					switch {
					case j >= 0:
						st.first, st.citedBefore = h.recent[j].i, h.recent[j].citedBefore
					case h.trimmed:
						return errResurvey
					}
				}
				byKey[k] = append(byKey[k], st)
			}
			if st.kernel == "" {
				st.kernel = e.Kernel
			}
			if st.agent == 0 && e.Agent != 0 {
				st.agent, st.queue = e.Agent, e.Queue
			}
		}
		switch e.Type {
		case trace.AppDispatch:
			k := threadLabel{e.Thread, e.Label}
			h := apps[k]
			if h == nil {
				h = &appHistory{}
				apps[k] = h
			}
			h.recent = append(h.recent, appAt{i, citedBefore})
			if !keepAll && len(h.recent) > recentApps {
				h.recent = slices.Delete(h.recent, 0, len(h.recent)-recentApps)
				h.trimmed = true
			}
		case trace.AppComplete, trace.AppTimeout:
			// Its wait: the first after a dispatch's last event ends its
			// span, unless its events go on.
			k := threadLabel{e.Thread, e.Label}
			for _, st := range byKey[k] {
				closeAt(st, i)
			}
			delete(byKey, k)
		}
		return nil
	})
	if err != nil {
		return surveyed{}, err
	}
	sv.events = i + 1
	var all []rankedSpan
	for _, st := range live {
		if !st.closed {
			st.last, st.citedAtLast = st.l, st.citedAtL
		}
		if keepAll {
			st.cited = st.citedAtLast - st.citedBefore
			all = append(all, rankedSpan{st.rank, st.span})
		} else {
			keep(st)
		}
	}
	if !keepAll {
		all = slices.Concat(best[0], best[1])
	}
	slices.SortFunc(all, func(a, b rankedSpan) int { return cmp.Compare(a.rank, b.rank) })
	spans := make([]span, len(all))
	for j, r := range all {
		spans[j] = r.span
	}
	sv.spans, _ = choose(spans)
	if ranks > maxPanels {
		sv.left = ranks - maxPanels
	}
	return sv, nil
}

// rankedSpan is a span and its dispatch's rank in order of first
// appearance.
type rankedSpan struct {
	rank int
	span
}

// choose picks the spans to draw from spans in order of first appearance:
// maxPanels at most, those a violation cites first, then in order. It
// returns them in order, and how many of spans it left out.
func choose(spans []span) ([]span, int) {
	if len(spans) <= maxPanels {
		return spans, 0
	}
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(min(spans[b].cited, 1), min(spans[a].cited, 1))
	})
	keep := idx[:maxPanels]
	slices.Sort(keep)
	kept := make([]span, 0, maxPanels)
	for _, i := range keep {
		kept = append(kept, spans[i])
	}
	return kept, len(spans) - maxPanels
}

// idRuns is a set of dispatch ids held as runs of consecutive ids: the ids
// an engine hands out in order are one run.
type idRuns struct{ runs [][2]uint64 }

func (s *idRuns) find(id uint64) int {
	return sort.Search(len(s.runs), func(j int) bool { return s.runs[j][1] >= id })
}

func (s *idRuns) has(id uint64) bool {
	j := s.find(id)
	return j < len(s.runs) && s.runs[j][0] <= id
}

func (s *idRuns) len() int { return len(s.runs) }

func (s *idRuns) add(id uint64) {
	j := s.find(id)
	if j < len(s.runs) && s.runs[j][0] <= id {
		return
	}
	// id joins the run before it, the run after it, both, or neither.
	before := j > 0 && s.runs[j-1][1]+1 == id
	after := j < len(s.runs) && id+1 == s.runs[j][0]
	switch {
	case before && after:
		s.runs[j-1][1] = s.runs[j][1]
		s.runs = slices.Delete(s.runs, j, j+1)
	case before:
		s.runs[j-1][1] = id
	case after:
		s.runs[j][0] = id
	default:
		s.runs = slices.Insert(s.runs, j, [2]uint64{id, id})
	}
}
