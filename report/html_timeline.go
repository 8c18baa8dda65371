package report

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/trace"
)

// The page's timelines are drawn along the order of events, not their
// clocks: every drawn event gets a column, so a replay window reads as the
// sequence the rules talk about (CONFIG opens, snapshot, pass 0, restore,
// pass 1, ..., CONFIG closes, one completion) on any port, clocks or none.
// Each event's time is in its tooltip.
const (
	colW     = 16 // px per column at zoom 1
	laneH    = 30 // px per lane
	topPad   = 8
	foldCols = 2 // columns a folded run of passes takes

	// A loop of more than foldAbove passes shows its first and last
	// keepPasses passes, and every pass holding a cited event; the
	// passes between are folded into at most foldBuckets boxes each.
	foldAbove   = 48
	keepPasses  = 8
	foldBuckets = 24
	// However a panel was folded, it draws at most maxItems columns:
	// the first and last keepItems items and the cited ones, the rest
	// folded (a window of one dispatch spanning another's long loop).
	maxItems  = 600
	keepItems = 200
	// A spec draws at most maxPanels dispatches: those a violation cites
	// first, then in order.
	maxPanels = 64
)

// tlPanel is one dispatch's timeline, ready to draw.
type tlPanel struct {
	ID     string
	Title  string
	Notes  []string
	Lanes  []tlLane
	Width  int
	Height int
	Shapes []tlShape

	dispatch uint64
	cited    map[uint64]bool // the cited events drawn, by seq
}

type tlLane struct {
	Label string
	Y     int // the label's baseline
}

// tlShape is one thing drawn. X and W are columns (zoomed by the page's
// script); Y and H pixels.
type tlShape struct {
	Kind  string // rect, mark, text, fold
	Class string
	X, W  string // px at zoom 1, formatted
	Y, H  int
	Label string
	Title string
	ID    string
	Glyph string // a mark's symbol in the page's <defs>
}

// tlItem is a column: one event, or a fold of many.
type tlItem struct {
	ev   int         // the event's index in the trace; -1 for a fold
	e    trace.Event // the event
	fold *tlFold
}

// tlFold counts what a folded run of passes or events held.
type tlFold struct {
	passes *passRanks // the focal dispatch's passes; nil: a fold of events
	ranks  [2]int     // the first and last rank folded
	events int
	kinds  map[string]int
	into   *tlFold // where its events are counted instead: a fold of events it was folded into
}

func (f *tlFold) add(e trace.Event) {
	if f.into != nil {
		f.into.add(e)
		return
	}
	f.events++
	if f.kinds == nil {
		f.kinds = map[string]int{}
	}
	f.kinds[foldKind(e)]++
}

func (f *tlFold) title() string {
	var b strings.Builder
	switch {
	case f.passes == nil:
		fmt.Fprintf(&b, "%d events folded", f.events)
	case f.ranks[0] == f.ranks[1]:
		fmt.Fprintf(&b, "pass %d folded", f.passes.pass(f.ranks[0]))
	default:
		fmt.Fprintf(&b, "passes %d-%d folded (%d passes)", f.passes.pass(f.ranks[0]), f.passes.pass(f.ranks[1]), f.ranks[1]-f.ranks[0]+1)
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

func foldKind(e trace.Event) string {
	switch e.Type {
	case trace.Kernel:
		return "kernel runs"
	case trace.Restore:
		return "restores"
	case trace.Callback:
		return "callbacks"
	case trace.Warning:
		return "warnings"
	}
	return string(e.Type) + " events"
}

// drawn reports whether an event gets a column of its own: what the
// picture is about. The rest (records, memory traffic, API calls, ids)
// is drawn only when a violation cites it.
func drawn(e trace.Event) bool {
	switch e.Type {
	case trace.Callback, trace.Kernel, trace.Snapshot, trace.Restore, trace.Signal, trace.Warning, trace.NeverEnded,
		trace.AppDispatch, trace.AppComplete, trace.AppTimeout, trace.PassCount, trace.Continue, trace.Local,
		trace.ToolDispatch, trace.ToolComplete:
		return true
	}
	return false
}

// timelinePanels draws each dispatch of the trace events gives (maxPanels
// at most); ids of elements start with prefix. It returns the panels, how
// many dispatches were left out, and whether the trace holds any event.
// The trace is read as a stream, three or four times: the survey, the
// passes of the dispatches drawn, the columns of a folded loop counted,
// the columns kept. What is held is the columns drawn.
func timelinePanels(events Events, cited map[uint64]bool, prefix string) ([]tlPanel, int, bool, error) {
	sv, err := survey(events, cited, false)
	if errors.Is(err, errResurvey) {
		sv, err = survey(events, cited, true)
	}
	if err != nil || sv.events == 0 {
		return nil, 0, false, err
	}
	draws := make([]*spanDraw, len(sv.spans))
	for i, s := range sv.spans {
		draws[i] = &spanDraw{s: s, cur: -1, keep: map[int]bool{}}
	}
	// The passes of each, and those holding a cited event.
	if err := eachInSpans(events, draws, func(d *spanDraw, _ int, e *trace.Event) {
		seg := d.segment(e)
		if cited[e.Seq] {
			d.keep[seg] = true
		}
		if drawn(*e) || cited[e.Seq] {
			d.total++
		}
	}); err != nil {
		return nil, 0, true, err
	}
	var folding []*spanDraw
	for _, d := range draws {
		d.cur = -1
		if d.prepare() {
			folding = append(folding, d)
			d.total = 0
		}
	}
	// A folded loop's columns, counted: how many there are says whether
	// the middle is folded again.
	if err := eachInSpans(events, folding, func(d *spanDraw, i int, e *trace.Event) {
		d.itemize(i, e, cited, func(tlItem) { d.total++ })
	}); err != nil {
		return nil, 0, true, err
	}
	for _, d := range draws {
		d.cur, d.fold = -1, nil
		if d.total > maxItems {
			d.size = max(1, (d.total-2*keepItems+foldBuckets-1)/foldBuckets)
		}
	}
	// The columns kept.
	if err := eachInSpans(events, draws, func(d *spanDraw, i int, e *trace.Event) {
		d.itemize(i, e, cited, func(it tlItem) { d.column(it, cited) })
		if i == d.s.last {
			d.last = *e
		}
	}); err != nil {
		return nil, 0, true, err
	}
	panels := make([]tlPanel, 0, len(draws))
	for _, d := range draws {
		if d.total > maxItems {
			d.notes = append(d.notes, fmt.Sprintf("%d columns: the first and last %d are drawn, and every cited event; the rest are folded", d.total, keepItems))
		}
		panels = append(panels, drawSpan(d.s, d.items, d.notes, d.last, cited, sv.agents, prefix))
	}
	return panels, sv.left, true, nil
}

// errSpansRead stops a reading once every span is read.
var errSpansRead = errors.New("every span read")

// eachInSpans reads events once, handing each event to f for every span
// of draws that holds it.
func eachInSpans(events Events, draws []*spanDraw, f func(d *spanDraw, i int, e *trace.Event)) error {
	if len(draws) == 0 {
		return nil
	}
	order := slices.Clone(draws)
	slices.SortStableFunc(order, func(a, b *spanDraw) int { return cmp.Compare(a.s.first, b.s.first) })
	var active []*spanDraw
	next, i := 0, -1
	err := events(func(e *trace.Event) error {
		i++
		for next < len(order) && order[next].s.first == i {
			active = append(active, order[next])
			next++
		}
		for _, d := range active {
			f(d, i, e)
		}
		active = slices.DeleteFunc(active, func(d *spanDraw) bool { return d.s.last <= i })
		if next == len(order) && len(active) == 0 {
			return errSpansRead
		}
		return nil
	})
	if errors.Is(err, errSpansRead) {
		return nil
	}
	return err
}

// spanDraw is one dispatch's picture while the readings make it.
type spanDraw struct {
	s     span
	ranks passRanks
	cur   int          // the rank of the focal dispatch's pass now; -1 before its first
	keep  map[int]bool // the ranks holding a cited event
	runs  [][2]int     // runs of folded ranks; nil: the loop is drawn whole
	notes []string
	total int // its columns before the middle is folded

	fold    *tlFold // the fold of passes being filled
	foldKey int     // its bucket
	at      int     // columns so far
	size    int     // columns in a fold of the middle; 0: nothing is
	mid     *tlFold // the fold of the middle being filled
	inMid   int
	items   []tlItem
	last    trace.Event
}

// segment says which pass of the focal dispatch e belongs to, as the
// pass's rank in order of first appearance (-1 before the first pass; the
// last pass after it). Ranks, not pass numbers, so that a trace's pass
// numbers (a port's, a hostile file's) never size a loop here.
func (d *spanDraw) segment(e *trace.Event) int {
	if e.Dispatch != d.s.dispatch {
		return d.cur
	}
	p, ok := e.PassOf()
	if !ok {
		return d.cur
	}
	switch {
	case e.Type == trace.Callback && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter:
		d.cur = d.ranks.add(p)
	case e.Type == trace.Restore:
		// A restore is part of the pass it prepares (the next one).
		return d.cur + 1
	}
	return d.cur
}

// prepare decides, its passes counted, whether the loop is folded: the
// first and last keepPasses passes and every pass holding a cited event
// are drawn, the passes between folded.
func (d *spanDraw) prepare() bool {
	n := d.ranks.n
	if n <= foldAbove {
		return false
	}
	for r := keepPasses; r < n-keepPasses; r++ {
		if d.keep[r] {
			continue
		}
		if k := len(d.runs); k > 0 && d.runs[k-1][1] == r-1 {
			d.runs[k-1][1] = r
		} else {
			d.runs = append(d.runs, [2]int{r, r})
		}
		if next := d.nextKept(r); next > r+1 {
			d.runs[len(d.runs)-1][1] = next - 1 // the run goes on to the next kept pass
			r = next - 1
		}
	}
	d.notes = append(d.notes, fmt.Sprintf("%d passes: the first and last %d are drawn, and every pass holding a cited event; the others are folded into grey boxes (hover for what each holds)", n, keepPasses))
	return true
}

// nextKept is the first rank after r drawn in the middle of the loop (a
// pass holding a cited event), or where the last passes start.
func (d *spanDraw) nextKept(r int) int {
	next := d.ranks.n - keepPasses
	for k := range d.keep {
		if k > r && k < next {
			next = k
		}
	}
	return next
}

func (d *spanDraw) folded(r int) bool {
	return d.runs != nil && r >= keepPasses && r < d.ranks.n-keepPasses && !d.keep[r]
}

// bucket is the first rank of r's box: runs of folded passes are cut into
// at most foldBuckets boxes each.
func (d *spanDraw) bucket(r int) int {
	j := sort.Search(len(d.runs), func(j int) bool { return d.runs[j][1] >= r })
	run := d.runs[j]
	size := (run[1] - run[0] + foldBuckets) / foldBuckets
	return run[0] + (r-run[0])/size*size
}

// itemize lays the span's event e (index i) out in columns, handing each
// new column to emit; a folded pass's events go into its column's fold.
func (d *spanDraw) itemize(i int, e *trace.Event, cited map[uint64]bool, emit func(tlItem)) {
	r := d.segment(e)
	if !d.folded(r) || cited[e.Seq] {
		d.fold = nil
		if drawn(*e) || cited[e.Seq] {
			emit(tlItem{ev: i, e: *e})
		}
		return
	}
	if k := d.bucket(r); d.fold == nil || k != d.foldKey {
		d.fold, d.foldKey = &tlFold{ranks: [2]int{r, r}, passes: &d.ranks}, k
		emit(tlItem{ev: -1, fold: d.fold})
	}
	d.fold.ranks = [2]int{min(d.fold.ranks[0], r), max(d.fold.ranks[1], r)}
	d.fold.add(*e)
}

// column keeps a column: all of them when they fit in maxItems, else the
// first and last keepItems and the cited events, the rest folded (a window
// of one dispatch spanning another's long loop).
func (d *spanDraw) column(it tlItem, cited map[uint64]bool) {
	j := d.at
	d.at++
	if d.size == 0 || j < keepItems || j >= d.total-keepItems {
		d.items = append(d.items, it)
		return
	}
	if it.fold == nil && cited[it.e.Seq] {
		d.items = append(d.items, it)
		d.mid = nil
		return
	}
	if d.mid == nil || d.inMid >= d.size {
		d.mid = &tlFold{}
		d.items = append(d.items, tlItem{ev: -1, fold: d.mid})
		d.inMid = 0
	}
	d.inMid++
	if it.fold != nil {
		it.fold.into = d.mid // its events, all still to come, are the middle's
	} else {
		d.mid.add(it.e)
	}
}

// passRanks numbers a dispatch's passes in order of first appearance. It
// holds runs of pass numbers in a constant step (0, 1, 2, ... is one run),
// so that a loop of any length in order costs one run; pass numbers in no
// order cost a run each.
type passRanks struct {
	runs  []passRun
	n     int
	index map[uint64]int // every pass's rank, once there are many runs
}

type passRun struct {
	first, step uint64
	count, rank int
}

const maxPassRuns = 16

func (p *passRanks) rank(pass uint64) (int, bool) {
	if p.index != nil {
		r, ok := p.index[pass]
		return r, ok
	}
	for _, run := range p.runs {
		if pass == run.first {
			return run.rank, true
		}
		if run.step == 0 || pass < run.first || (pass-run.first)%run.step != 0 {
			continue
		}
		if k := (pass - run.first) / run.step; k < uint64(run.count) {
			return run.rank + int(k), true
		}
	}
	return 0, false
}

// add is the rank of pass, a new one if it was not seen.
func (p *passRanks) add(pass uint64) int {
	if r, ok := p.rank(pass); ok {
		return r
	}
	r := p.n
	p.n++
	if p.index != nil {
		p.index[pass] = r
	}
	if k := len(p.runs) - 1; k >= 0 {
		run := &p.runs[k]
		switch {
		case run.count == 1 && pass > run.first:
			run.step, run.count = pass-run.first, 2
			return r
		case run.count > 1 && pass > run.first && (pass-run.first)%run.step == 0 && (pass-run.first)/run.step == uint64(run.count):
			run.count++
			return r
		}
	}
	p.runs = append(p.runs, passRun{first: pass, count: 1, rank: r})
	if p.index == nil && len(p.runs) > maxPassRuns {
		p.index = map[uint64]int{}
		for _, run := range p.runs {
			for k := range run.count {
				p.index[run.first+uint64(k)*run.step] = run.rank + k
			}
		}
	}
	return r
}

// pass is the pass number of rank r.
func (p *passRanks) pass(r int) uint64 {
	j := sort.Search(len(p.runs), func(j int) bool { return p.runs[j].rank+p.runs[j].count > r })
	run := p.runs[j]
	return run.first + uint64(r-run.rank)*run.step
}

type laneKey struct {
	queue  bool
	thread uint64
	agent  uint64
	q      uint64
}

func laneOf(e trace.Event) laneKey {
	if e.Type == trace.Kernel {
		return laneKey{queue: true, agent: e.Agent, q: e.Queue}
	}
	return laneKey{thread: e.Thread}
}

type openKey struct {
	thread, dispatch uint64
	op               trace.Op
	pass             uint64
}

type openAt struct {
	col   float64
	ev    int // its index in the trace
	enter trace.Event
}

// drawSpan draws one dispatch: its columns its, and the last event of its
// span.
func drawSpan(s span, its []tlItem, notes []string, last trace.Event, cited map[uint64]bool, agents map[uint64]trace.Event, prefix string) tlPanel {
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
			lanes[laneOf(it.e)] = true
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
	open := map[openKey]openAt{}
	closeSlice := func(k openKey, o openAt, end float64, e trace.Event, unclosed bool) {
		enter := o.enter
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
				label = strconv.FormatUint(f.passes.pass(f.ranks[0]), 10) // the box's first pass
			}
			passes = append(passes, tlShape{Kind: "text", Class: "flabel", X: px(c - 0.3), Y: topPad + 10, Label: label})
			continue
		}
		e := it.e
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
				open[ok] = openAt{col: c, ev: it.ev, enter: e}
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
	for _, k := range slices.SortedFunc(maps.Keys(open), func(a, b openKey) int {
		return cmp.Compare(open[a].ev, open[b].ev)
	}) {
		closeSlice(k, open[k], width-0.5, last, true)
	}
	p.Shapes = slices.Concat(back, wins, passes, front)
	return p
}

func agentName(id uint64, agents map[uint64]trace.Event) string {
	name := "agent " + strconv.FormatUint(id, 10)
	if a, ok := agents[id]; ok {
		var parts []string
		if a.Label != "" {
			parts = append(parts, a.Label)
		}
		if a.Family != "" {
			parts = append(parts, string(a.Family))
		}
		if len(parts) > 0 {
			name += " (" + strings.Join(parts, " ") + ")"
		}
	}
	return name
}

// markClass picks an event's class and glyph.
func markClass(e trace.Event) (class, glyph string) {
	switch e.Type {
	case trace.Callback:
		if e.Phase == trace.PhaseEnter {
			return "cb", "enter"
		}
		return "cb", "exit"
	case trace.Signal:
		if e.Value != nil && *e.Value == 0 {
			return "done", "done"
		}
		return "sig", "sig"
	case trace.Snapshot:
		return "snap", "snap"
	case trace.Restore:
		return "restore", "restore"
	case trace.AppDispatch:
		return "appd", "appd"
	case trace.AppComplete:
		return "appc", "appc"
	case trace.AppTimeout, trace.NeverEnded:
		return "bad", "bad"
	case trace.Warning:
		return "warn", "warn"
	}
	return "call", "call"
}

func timeOf(e trace.Event) string {
	switch {
	case e.Type == trace.Kernel && e.End != 0:
		return fmt.Sprintf(" [%d to %d ns]", e.Start, e.End)
	case e.Time != 0:
		return fmt.Sprintf(" [%d ns]", e.Time)
	}
	return ""
}

func px(cols float64) string {
	return strconv.FormatFloat(cols*colW, 'f', 1, 64)
}
