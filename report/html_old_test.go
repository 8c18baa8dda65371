package report

// The timelines as they were drawn before issue 23 made the page read a
// trace as a stream (the held trace indexed whole), kept here only to
// show that the streamed drawing makes the same panels, byte for byte
// (html_stream_test.go). It is the rewrite's oracle, not a second drawing:
// a change to what the page draws, made on purpose, retires this file and
// the comparisons that use it, rather than being made twice.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/trace"
)

// oldTlItem is a column: one event, or a fold of many.
type oldTlItem struct {
	ev   int // index in the trace; -1 for a fold
	fold *oldTlFold
}

// oldTlFold counts what a folded run of passes or events held.
type oldTlFold struct {
	passes []uint64 // the focal dispatch's passes by rank; nil: a fold of events
	ranks  [2]int   // the first and last rank folded
	events int
	kinds  map[string]int
}

func (f *oldTlFold) add(e trace.Event) {
	f.events++
	if f.kinds == nil {
		f.kinds = map[string]int{}
	}
	f.kinds[foldKind(e)]++
}

// merge counts what g folded into f, a fold of events.
func (f *oldTlFold) merge(g *oldTlFold) {
	f.events += g.events
	if f.kinds == nil {
		f.kinds = map[string]int{}
	}
	for k, n := range g.kinds {
		f.kinds[k] += n
	}
}

func (f *oldTlFold) title() string {
	var b strings.Builder
	switch {
	case f.passes == nil:
		fmt.Fprintf(&b, "%d events folded", f.events)
	case f.ranks[0] == f.ranks[1]:
		fmt.Fprintf(&b, "pass %d folded", f.passes[f.ranks[0]])
	default:
		fmt.Fprintf(&b, "passes %d-%d folded (%d passes)", f.passes[f.ranks[0]], f.passes[f.ranks[1]], f.ranks[1]-f.ranks[0]+1)
	}
	b.WriteString(": ")
	keys := slices.Sorted(maps.Keys(f.kinds))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", f.kinds[k], k)
	}
	b.WriteString(". Zoom in on the passes kept either side, or write the trace (--trace-out) to read them all.")
	return b.String()
}

// oldSpan is the events a dispatch's picture covers: from the application's
// dispatch to its wait returning, everything between on every thread.
type oldSpan struct {
	dispatch    uint64
	first, last int // indices into the trace
	label       string
	kernel      string
	thread      uint64
	agent       uint64
	queue       uint64
	cited       int
}

// oldDispatchSpans finds every dispatch of a trace and the events its picture
// covers.
func oldDispatchSpans(t trace.Trace, cited map[uint64]bool) []oldSpan {
	byID := map[uint64]*oldSpan{}
	var order []uint64
	apps := map[threadLabel][]int{}  // app_dispatch indices
	waits := map[threadLabel][]int{} // app_complete and app_timeout indices
	for i, e := range t.Events {
		switch e.Type {
		case trace.AppDispatch:
			k := threadLabel{e.Thread, e.Label}
			apps[k] = append(apps[k], i)
		case trace.AppComplete, trace.AppTimeout:
			k := threadLabel{e.Thread, e.Label}
			waits[k] = append(waits[k], i)
		}
		if e.Dispatch == 0 {
			continue
		}
		s, ok := byID[e.Dispatch]
		if !ok {
			s = &oldSpan{dispatch: e.Dispatch, first: i, thread: e.Thread}
			byID[e.Dispatch] = s
			order = append(order, e.Dispatch)
		}
		s.last = i
		if s.label == "" && e.Label != "" && e.Type == trace.Callback {
			s.label = e.Label
		}
		if s.kernel == "" {
			s.kernel = e.Kernel
		}
		if s.agent == 0 && e.Agent != 0 {
			s.agent, s.queue = e.Agent, e.Queue
		}
	}
	// citedUpTo[i] counts the cited events before index i: a oldSpan's count
	// is a difference, however many spans overlap.
	citedUpTo := make([]int, len(t.Events)+1)
	for i, e := range t.Events {
		citedUpTo[i+1] = citedUpTo[i]
		if cited[e.Seq] {
			citedUpTo[i+1]++
		}
	}
	out := make([]oldSpan, 0, len(order))
	for _, id := range order {
		s := *byID[id]
		k := threadLabel{s.thread, s.label}
		if s.label != "" {
			// The application's dispatch before it, its wait after.
			if l := apps[k]; len(l) > 0 {
				j := sort.SearchInts(l, s.first) - 1
				if j >= 0 {
					s.first = l[j]
				}
			}
			if l := waits[k]; len(l) > 0 {
				j := sort.SearchInts(l, s.last)
				if j < len(l) {
					s.last = l[j]
				}
			}
		}
		s.cited = citedUpTo[s.last+1] - citedUpTo[s.first]
		out = append(out, s)
	}
	return out
}

// oldTimelinePanels draws each dispatch of a trace (maxPanels at most); ids
// of elements start with prefix. It returns the panels and how many
// dispatches were left out.
func oldTimelinePanels(t trace.Trace, cited map[uint64]bool, prefix string) ([]tlPanel, int) {
	spans := oldDispatchSpans(t, cited)
	left := 0
	if len(spans) > maxPanels {
		// Those a violation cites first, then in order.
		idx := make([]int, len(spans))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(min(spans[b].cited, 1), min(spans[a].cited, 1))
		})
		keep := idx[:maxPanels]
		slices.Sort(keep)
		kept := make([]oldSpan, 0, maxPanels)
		for _, i := range keep {
			kept = append(kept, spans[i])
		}
		left = len(spans) - maxPanels
		spans = kept
	}
	agents := map[uint64]trace.Event{}
	for _, e := range t.Events {
		if e.Type == trace.AgentInfo {
			agents[e.Agent] = e
		}
		if e.Type != trace.AgentInfo && e.Type != trace.API && e.Type != trace.AppAlloc {
			break // agents are listed first
		}
	}
	panels := make([]tlPanel, 0, len(spans))
	for _, s := range spans {
		panels = append(panels, oldDrawSpan(t, s, cited, agents, prefix))
	}
	return panels, left
}

// segments says which pass of the focal dispatch each event of the oldSpan
// belongs to, as the pass's rank in order of first appearance (-1 before
// the first pass; the last pass after it), and lists the passes by rank.
// Ranks, not pass numbers, so that a trace's pass numbers (a port's, a
// hostile file's) never size a loop here.
func oldSegments(t trace.Trace, s oldSpan) (seg []int, passes []uint64) {
	seg = make([]int, s.last-s.first+1)
	rank := map[uint64]int{}
	cur := -1
	for i := s.first; i <= s.last; i++ {
		e := t.Events[i]
		seg[i-s.first] = cur
		if e.Dispatch != s.dispatch {
			continue
		}
		p, ok := e.PassOf()
		if !ok {
			continue
		}
		switch {
		case e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter:
			r, seen := rank[p]
			if !seen {
				r = len(passes)
				rank[p] = r
				passes = append(passes, p)
			}
			cur = r
			seg[i-s.first] = r
		case e.Type == trace.Restore:
			// A restore is part of the pass it prepares (the next one).
			seg[i-s.first] = cur + 1
		}
	}
	return seg, passes
}

// items lays a oldSpan's events out in columns, folding what does not fit.
func oldItems(t trace.Trace, s oldSpan, cited map[uint64]bool) (out []oldTlItem, notes []string) {
	seg, passes := oldSegments(t, s)
	n := len(passes)
	if n > foldAbove {
		keep := map[int]bool{}
		for i := s.first; i <= s.last; i++ {
			if cited[t.Events[i].Seq] {
				keep[seg[i-s.first]] = true
			}
		}
		folded := func(r int) bool { return r >= keepPasses && r < n-keepPasses && !keep[r] }
		// Runs of folded passes are cut into at most foldBuckets boxes
		// each: bucket(r) is the first rank of r's box.
		var runs [][2]int
		for r := range n {
			if !folded(r) {
				continue
			}
			if k := len(runs); k > 0 && runs[k-1][1] == r-1 {
				runs[k-1][1] = r
			} else {
				runs = append(runs, [2]int{r, r})
			}
		}
		bucket := func(r int) int {
			j := sort.Search(len(runs), func(j int) bool { return runs[j][1] >= r })
			run := runs[j]
			size := (run[1] - run[0] + foldBuckets) / foldBuckets
			return run[0] + (r-run[0])/size*size
		}
		var cur *oldTlFold
		curKey := -1
		for i := s.first; i <= s.last; i++ {
			e := t.Events[i]
			r := seg[i-s.first]
			if r >= n || !folded(r) || cited[e.Seq] {
				cur = nil
				if drawn(e) || cited[e.Seq] {
					out = append(out, oldTlItem{ev: i})
				}
				continue
			}
			if k := bucket(r); cur == nil || k != curKey {
				cur, curKey = &oldTlFold{ranks: [2]int{r, r}, passes: passes}, k
				out = append(out, oldTlItem{ev: -1, fold: cur})
			}
			cur.ranks = [2]int{min(cur.ranks[0], r), max(cur.ranks[1], r)}
			cur.add(e)
		}
		notes = append(notes, fmt.Sprintf("%d passes: the first and last %d are drawn, and every pass holding a cited event; the others are folded into grey boxes (hover for what each holds)", n, keepPasses))
	} else {
		for i := s.first; i <= s.last; i++ {
			if e := t.Events[i]; drawn(e) || cited[e.Seq] {
				out = append(out, oldTlItem{ev: i})
			}
		}
	}
	if len(out) <= maxItems {
		return out, notes
	}
	// Still too many: fold the middle, keeping the cited.
	kept := make([]oldTlItem, 0, 2*keepItems+foldBuckets*2)
	kept = append(kept, out[:keepItems]...)
	mid := out[keepItems : len(out)-keepItems]
	size := max(1, (len(mid)+foldBuckets-1)/foldBuckets)
	var cur *oldTlFold
	in := 0 // items in cur
	for _, it := range mid {
		if it.ev >= 0 && cited[t.Events[it.ev].Seq] {
			kept = append(kept, it)
			cur = nil
			continue
		}
		if cur == nil || in >= size {
			cur = &oldTlFold{}
			kept = append(kept, oldTlItem{ev: -1, fold: cur})
			in = 0
		}
		in++
		if it.fold != nil {
			cur.merge(it.fold)
		} else {
			cur.add(t.Events[it.ev])
		}
	}
	kept = append(kept, out[len(out)-keepItems:]...)
	notes = append(notes, fmt.Sprintf("%d columns: the first and last %d are drawn, and every cited event; the rest are folded", len(out), keepItems))
	return kept, notes
}

type oldOpenAt struct {
	col float64
	ev  int
}

// oldDrawSpan draws one dispatch.
func oldDrawSpan(t trace.Trace, s oldSpan, cited map[uint64]bool, agents map[uint64]trace.Event, prefix string) tlPanel {
	its, notes := oldItems(t, s, cited)
	p := tlPanel{ID: fmt.Sprintf("%s-d%d", prefix, s.dispatch), Notes: notes, dispatch: s.dispatch, cited: map[uint64]bool{}}
	title := fmt.Sprintf("dispatch %d", s.dispatch)
	if s.label != "" {
		title += " · " + s.label
	}
	if s.kernel != "" {
		title += " (" + s.kernel + ")"
	}
	if s.agent != 0 {
		title += fmt.Sprintf(" on %s queue %d", agentName(s.agent, agents), s.queue)
	}
	title += fmt.Sprintf(", thread %d", s.thread)
	p.Title = title

	// Lanes: the threads, then the queues, in order.
	lanes := map[laneKey]bool{}
	for _, it := range its {
		if it.ev >= 0 {
			lanes[laneOf(t.Events[it.ev])] = true
		}
	}
	lanes[laneKey{thread: s.thread}] = true
	keys := slices.SortedFunc(maps.Keys(lanes), func(a, b laneKey) int {
		if a.queue != b.queue {
			if a.queue {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.thread, b.thread), cmp.Compare(a.agent, b.agent), cmp.Compare(a.q, b.q))
	})
	row := map[laneKey]int{}
	for i, k := range keys {
		row[k] = i
		label := fmt.Sprintf("thread %d", k.thread)
		switch {
		case k.queue:
			label = fmt.Sprintf("%s queue %d", agentName(k.agent, agents), k.q)
		case k.thread == 0:
			label = "runtime / process"
		}
		p.Lanes = append(p.Lanes, tlLane{Label: label, Y: topPad + i*laneH + laneH/2 + 4})
	}
	y := func(k laneKey) int { return topPad + row[k]*laneH }

	// Columns.
	col := 0.5
	cols := make([]float64, len(its))
	for i, it := range its {
		cols[i] = col
		if it.fold != nil {
			col += foldCols
		} else {
			col++
		}
	}
	width := col + 0.5
	p.Width = int(width * colW)
	p.Height = topPad*2 + len(keys)*laneH

	// Drawn back to front: lane bands, windows, passes and folds, then
	// the marks.
	var back, wins, passes, front []tlShape
	for i := range keys {
		cls := "band"
		if i%2 == 1 {
			cls += " odd"
		}
		back = append(back, tlShape{Kind: "rect", Class: cls, X: "0", W: px(width), Y: topPad + i*laneH, H: laneH})
	}
	open := map[openKey]oldOpenAt{}
	closeSlice := func(k openKey, o oldOpenAt, end float64, e trace.Event, unclosed bool) {
		enter := t.Events[o.ev]
		focal := enter.Dispatch == s.dispatch
		cls := "slice"
		top, h := 2, laneH-4
		label := ""
		if k.op == trace.OpConfig {
			cls += " win"
			label = "window"
		} else {
			cls += " pass"
			top, h = 7, laneH-14
			label = "pass " + strconv.FormatUint(k.pass, 10)
		}
		if !focal {
			cls += " other"
		}
		if unclosed {
			cls += " unclosed"
			label += " (no EXIT)"
		}
		x0 := o.col - 0.45
		w := end + 0.45 - x0
		tt := fmt.Sprintf("%s of dispatch %d on thread %d: seq %d to %d", label, enter.Dispatch, enter.Thread, enter.Seq, e.Seq)
		if enter.Time != 0 || e.Time != 0 {
			tt += fmt.Sprintf(", %d to %d ns", enter.Time, e.Time)
		}
		yy := y(laneKey{thread: k.thread})
		sh := tlShape{Kind: "rect", Class: cls, X: px(x0), W: px(w), Y: yy + top, H: h, Title: tt}
		if k.op == trace.OpConfig {
			wins = append(wins, sh)
			return
		}
		passes = append(passes, sh)
		if w >= 2.5 {
			passes = append(passes, tlShape{Kind: "text", Class: "slabel", X: px(x0 + 0.2), Y: yy + top + h - 4, Label: label})
		}
	}
	for i, it := range its {
		c := cols[i]
		if it.fold != nil {
			passes = append(passes, tlShape{Kind: "fold", Class: "fold", X: px(c - 0.4), W: px(foldCols - 0.2), Y: topPad, H: len(keys) * laneH, Title: it.fold.title()})
			label := "…"
			if f := it.fold; f.passes != nil {
				label = strconv.FormatUint(f.passes[f.ranks[0]], 10) // the box's first pass
			}
			passes = append(passes, tlShape{Kind: "text", Class: "flabel", X: px(c - 0.3), Y: topPad + 10, Label: label})
			continue
		}
		e := t.Events[it.ev]
		k := laneOf(e)
		yy := y(k)
		isCited := cited[e.Seq]
		focal := e.Dispatch == s.dispatch || e.Dispatch == 0
		if e.Type == trace.Callback && (e.Op == trace.OpConfig || e.Op == trace.OpPass) {
			pass, _ := e.PassOf()
			if e.Op == trace.OpConfig {
				pass = 0
			}
			ok := openKey{e.Thread, e.Dispatch, e.Op, pass}
			if e.Phase == trace.PhaseEnter {
				open[ok] = oldOpenAt{col: c, ev: it.ev}
			} else if o, found := open[ok]; found {
				closeSlice(ok, o, c, e, false)
				delete(open, ok)
			}
		}
		cls, glyph := markClass(e)
		sh := tlShape{Kind: "mark", Class: cls, Glyph: glyph, X: px(c), Y: yy + laneH/2, Title: check.FormatEvent(e) + timeOf(e)}
		if e.Type == trace.Kernel {
			sh = tlShape{Kind: "rect", Class: "kernel", X: px(c - 0.4), W: px(0.8), Y: yy + 5, H: laneH - 10, Title: sh.Title}
		}
		if !focal {
			sh.Class += " other"
		}
		if isCited {
			sh.Class += " cited"
			sh.ID = fmt.Sprintf("%s-e%d", p.ID, e.Seq)
			p.cited[e.Seq] = true
			front = append(front, tlShape{Kind: "text", Class: "seq", X: px(c), Y: yy + 3, Label: strconv.FormatUint(e.Seq, 10)})
		}
		front = append(front, sh)
	}
	// Slices whose EXIT never came run to the end of the picture.
	last := t.Events[s.last]
	for _, k := range slices.SortedFunc(maps.Keys(open), func(a, b openKey) int {
		return cmp.Compare(open[a].ev, open[b].ev)
	}) {
		closeSlice(k, open[k], width-0.5, last, true)
	}
	p.Shapes = slices.Concat(back, wins, passes, front)
	return p
}
