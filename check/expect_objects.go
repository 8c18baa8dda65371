package check

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// Expectations on the objects the rules are about: user data at a given
// point, the order of a dispatch's events, its ids, its records narrowed
// to a pass or a context, what its buffers held right after it, and an
// abort at a failed restore. Each names what differed.

// subject is one dispatch of the spec as the trace shows it: the
// application's (app_dispatch) or the tool's own (tool_dispatch).
type subject struct {
	label   string
	thread  uint64
	at, end int      // its window on its thread: [at, end)
	ids     []uint64 // the SDK dispatch ids reserved in it, in order
	byTool  bool
	nested  [][2]int // windows of the tool's own dispatches inside it
	settled int      // the completion event, -1 when none
}

// has reports whether id is one of the subject's dispatch ids.
func (s *subject) has(id uint64) bool { return id != 0 && slices.Contains(s.ids, id) }

// inside reports whether position i is in the subject's own window, not
// in a dispatch the tool wrote from inside it.
func (s *subject) inside(i int) bool {
	if i <= s.at || i >= s.end {
		return false
	}
	for _, w := range s.nested {
		if i >= w[0] && i <= w[1] {
			return false
		}
	}
	return true
}

// subject finds label's dispatch, failing key when the trace has none.
func (c *expectChecker) subject(key, label, requires string) *subject {
	s, found := c.subjects[label]
	if !found {
		s = c.findSubject(label)
		if c.subjects == nil {
			c.subjects = map[string]*subject{}
		}
		c.subjects[label] = s
	}
	if s == nil {
		c.fail(key, label, requires, fmt.Sprintf("the trace has no app_dispatch or tool_dispatch labelled %q", label))
	}
	return s
}

// toolWindows are the windows of every dispatch the tool wrote, made once:
// from its tool_dispatch to its tool_complete (or the end of the trace).
func (c *expectChecker) toolWindows() []*subject {
	if c.tools != nil {
		return *c.tools
	}
	x := c.x
	var tools []*subject
	for _, i := range x.types[ekToolDispatch] {
		e := &x.ev[i]
		s := &subject{label: e.Label, thread: e.Thread, at: i, end: len(x.ev), byTool: true, settled: -1}
		pos := x.byThread[e.Thread]
		k, _ := slices.BinarySearch(pos, i)
		for j := k + 1; j < len(pos); j++ {
			f := &x.ev[pos[j]]
			if f.Type == trace.ToolComplete && f.Label == e.Label {
				s.end, s.settled = pos[j]+1, pos[j]
				break
			}
			if f.Type == trace.AppDispatch || f.Dispatch != 0 && f.Dispatch == e.Dispatch && f.Type != trace.ToolDispatch {
				s.end = pos[j] // the tool gave up on it (its loop never ended) and went on
				break
			}
		}
		tools = append(tools, s)
	}
	c.tools = &tools
	return tools
}

// findSubject joins label's dispatch (the first the tool wrote with that
// label, else the application's) to its window and its dispatch ids; nil
// when the trace has none. Only the label's own thread and window are
// looked at: a spec names a few labels of a trace of many dispatches.
func (c *expectChecker) findSubject(label string) *subject {
	x := c.x
	tools := c.toolWindows()
	var s *subject
	for _, t := range tools {
		if t.label == label {
			cp := *t
			s = &cp
			break
		}
	}
	if s == nil {
		a := x.appLabel[label]
		if a == nil {
			return nil
		}
		s = &subject{label: a.label, thread: a.thread, at: a.at, end: a.end, settled: -1}
		if len(a.complete) > 0 {
			s.settled = a.complete[0]
		}
	}
	// The tool's dispatches written inside it, a tool's own among them:
	// their windows nest (MEM-6, clarified 2026-12-01).
	for _, t := range tools {
		if t.at != s.at && t.thread == s.thread && t.at > s.at && t.at < s.end {
			s.nested = append(s.nested, [2]int{t.at, t.end - 1})
		}
	}
	ids := within(x.types[ekDispatchID], s.at+1, s.end)
	for _, i := range ids {
		if e := &x.ev[i]; e.Thread == s.thread && s.inside(i) && !slices.Contains(s.ids, e.Dispatch) {
			s.ids = append(s.ids, e.Dispatch)
		}
	}
	if len(s.ids) > 0 || x.has(trace.DispatchID) {
		return s
	}
	// A trace without dispatch_id events (no sdk): the ids the dispatch's
	// own events name (docs/trace.md, docs/ports.md O5).
	if !s.byTool {
		if a := x.appLabel[s.label]; a != nil {
			s.ids = slices.Clone(a.named)
		}
		return s
	}
	// The tool's dispatch: the first tagged kernel or callback in its
	// window on its thread that is not the loop's it was written from.
	from := x.ev[s.at].Dispatch
	for _, i := range within(x.byThread[s.thread], s.at+1, s.end) {
		if e := &x.ev[i]; s.inside(i) && (e.Type == trace.Kernel || e.Type == trace.Callback) && e.Dispatch != 0 && e.Dispatch != from {
			s.ids = []uint64{e.Dispatch}
			break
		}
	}
	return s
}

// within is the part of the sorted positions pos in [lo, hi).
func within(pos []int, lo, hi int) []int {
	from, _ := slices.BinarySearch(pos, lo)
	to, _ := slices.BinarySearch(pos, hi)
	return pos[from:max(from, to)]
}

// windowOf names a callback window as specs write it.
func windowOf(e *trace.Event) string {
	if e.Op == "" || e.Phase == "" {
		return ""
	}
	return string(e.Op) + "_" + string(e.Phase)
}

// statusScope narrows a status expectation: the dispatch it was made
// during, the callback it was made from, the pass.
func (c *expectChecker) statusScope(st spec.StatusExpect) (func(*trace.Event) bool, bool) {
	var s *subject
	if st.Dispatch != "" {
		if s = c.subject("statuses", st.Dispatch, "the call is made during "+st.Dispatch); s == nil {
			return nil, false
		}
	}
	return func(e *trace.Event) bool {
		if s != nil && !s.has(e.Dispatch) {
			return false
		}
		if st.In != "" && windowOf(e) != st.In {
			return false
		}
		if p, ok := e.PassOf(); st.Pass != nil && (!ok || p != *st.Pass) {
			return false
		}
		return true
	}, true
}

// statusScopeText says how a status expectation is narrowed.
func statusScopeText(st spec.StatusExpect) string {
	var text []string
	if st.Dispatch != "" {
		text = append(text, "during "+st.Dispatch)
	}
	if st.In != "" {
		text = append(text, "from "+st.In)
	}
	if st.Pass != nil {
		text = append(text, "of pass "+strconv.FormatUint(*st.Pass, 10))
	}
	return strings.Join(text, " ")
}

func (c *expectChecker) memoryAfter(label, buf string, want spec.MemoryExpect) {
	req := fmt.Sprintf("right after %s, buffer %s holds %s", label, buf, memoryText(want))
	var at []int
	for _, i := range c.x.types[ekAppReadback] {
		if e := &c.x.ev[i]; e.Label == label && e.Buffer == buf {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		c.fail("memory_after", label, req, fmt.Sprintf("the application never read %s back after %s (no app_readback)", buf, label))
		return
	}
	for _, i := range at {
		if msg := c.x.wholeBufferMismatch(i, want); msg != "" {
			c.fail("memory_after", label, req, msg, i)
			return
		}
	}
}

func (c *expectChecker) userData(u spec.UserDataExpect) {
	where := u.At
	if u.Pass != nil {
		where += fmt.Sprintf(" of pass %d", *u.Pass)
	}
	req := fmt.Sprintf("the tool is handed user data %d at %s of %s", u.Value, where, u.Dispatch)
	s := c.subject("user_data", u.Dispatch, req)
	if s == nil {
		return
	}
	var typ trace.Type
	switch u.At {
	case spec.PointPassCount:
		typ = trace.PassCount
	case spec.PointContinue:
		typ = trace.Continue
	default:
		typ = trace.Callback
	}
	var matched, wrong []int
	for _, i := range c.x.ofType(typ) {
		e := &c.x.ev[i]
		if !s.has(e.Dispatch) || (typ == trace.Callback && windowOf(e) != u.At) {
			continue
		}
		if p, ok := e.PassOf(); u.Pass != nil && (!ok || p != *u.Pass) {
			continue
		}
		matched = append(matched, i)
		if e.UserData == nil || *e.UserData != u.Value {
			wrong = append(wrong, i)
		}
	}
	switch {
	case len(matched) == 0:
		c.fail("user_data", u.Dispatch, req, fmt.Sprintf("%s never reached %s", u.Dispatch, where))
	case len(wrong) > 0:
		e := &c.x.ev[wrong[0]]
		got := "none"
		if e.UserData != nil {
			got = strconv.FormatUint(*e.UserData, 10)
		}
		c.fail("user_data", u.Dispatch, req, fmt.Sprintf("%d of %d were handed otherwise (first: %s)", len(wrong), len(matched), got), wrong...)
	}
}

// maxStepsShown bounds the sequence a message prints.
const maxStepsShown = 24

func (c *expectChecker) sequence(label string, want []string) {
	req := fmt.Sprintf("%s goes through the %d steps listed, in order", label, len(want))
	s := c.subject("sequence", label, req)
	if s == nil {
		return
	}
	// The steps only the SDK's or the runtime's events show are compared
	// where the trace reports them, and left out of the comparison where
	// it does not (a black-box port): the rest must still hold.
	want = slices.DeleteFunc(slices.Clone(want), func(step string) bool {
		kind, _, _ := strings.Cut(step, " ")
		switch kind {
		case spec.StepSnapshot, spec.StepRestore:
			return !c.sdk
		case spec.StepKernel:
			return !c.runtime
		}
		return false
	})
	var got []string
	var at []int
	for i := range c.x.ev {
		e := &c.x.ev[i]
		if step := c.stepOf(s, i, e); step != "" {
			got = append(got, step)
			at = append(at, i)
		}
	}
	k := 0
	for k < len(got) && k < len(want) && got[k] == want[k] {
		k++
	}
	if k == len(got) && k == len(want) {
		return
	}
	var msg string
	switch {
	case k == len(got):
		msg = fmt.Sprintf("it ended after step %d; want %q next", k, want[k])
	case k == len(want):
		msg = fmt.Sprintf("after the %d steps expected came %q", k, got[k])
	default:
		msg = fmt.Sprintf("step %d is %q, want %q", k+1, got[k], want[k])
	}
	var show []int
	if k < len(at) {
		show = append(show, at[k])
	}
	if k > 0 {
		show = append(show, at[k-1])
	}
	c.fail("sequence", label, req, msg+"; the whole sequence: "+stepsText(got), show...)
}

// stepOf names event i as a step of s's sequence, or "" when it is not one.
func (c *expectChecker) stepOf(s *subject, i int, e *trace.Event) string {
	pass := func(kind string) string {
		p, _ := e.PassOf()
		return kind + " " + strconv.FormatUint(p, 10)
	}
	mine := s.has(e.Dispatch)
	switch e.Type {
	case trace.Callback:
		if !mine {
			return ""
		}
		if e.Op == trace.OpPass {
			return pass(windowOf(e))
		}
		return windowOf(e)
	case trace.PassCount:
		if mine {
			return spec.StepPassCount
		}
	case trace.Continue:
		if mine {
			return pass(spec.StepContinue)
		}
	case trace.Snapshot:
		if mine {
			return spec.StepSnapshot
		}
	case trace.Restore:
		if mine {
			return pass(spec.StepRestore)
		}
	case trace.Kernel:
		if mine {
			return spec.StepKernel
		}
	case trace.Local:
		if mine {
			return "local_" + string(e.Call) + " " + c.contextName(e)
		}
	case trace.API:
		if mine && (e.Call == trace.CallStartContext || e.Call == trace.CallStopContext) {
			return string(e.Call) + " " + c.contextName(e)
		}
	case trace.ToolDispatch:
		if mine {
			return spec.StepDispatch + " " + e.Label
		}
	case trace.AppComplete, trace.ToolComplete:
		if i == s.settled {
			return spec.StepComplete
		}
	}
	return ""
}

// contextName is the spec's name of the context an event names.
func (c *expectChecker) contextName(e *trace.Event) string {
	if e.Label != "" {
		return e.Label
	}
	if k := int(e.Context); k >= 1 && k <= len(c.s.Contexts) {
		return c.s.Contexts[k-1].Name
	}
	return strconv.FormatUint(e.Context, 10)
}

func stepsText(steps []string) string {
	if len(steps) > maxStepsShown {
		return "[" + strings.Join(steps[:maxStepsShown], ", ") + fmt.Sprintf(", ... %d more]", len(steps)-maxStepsShown)
	}
	return "[" + strings.Join(steps, ", ") + "]"
}

// carriesID lists the event types whose dispatch id must be the
// dispatch's own (DID-1, DID-2).
var carriesID = []trace.Type{trace.Callback, trace.Returned, trace.PassCount, trace.Continue, trace.Local,
	trace.Record, trace.Kernel, trace.Snapshot, trace.Restore}

func (c *expectChecker) dispatchIDs(label string, want []uint64) {
	req := fmt.Sprintf("%s has dispatch ids %v, and everything it causes carries them", label, want)
	s := c.subject("dispatch_ids", label, req)
	if s == nil {
		return
	}
	if !slices.Equal(s.ids, want) {
		c.fail("dispatch_ids", label, req, fmt.Sprintf("the SDK reserved %v for it", s.ids), s.at)
		return
	}
	for _, i := range c.x.byThread[s.thread] {
		e := &c.x.ev[i]
		if !s.inside(i) || !slices.Contains(carriesID, e.Type) {
			continue
		}
		if e.Dispatch == 0 && (e.Type == trace.Record || e.Type == trace.Kernel) {
			continue // untagged work: a barrier, an agent-wide sample
		}
		if !s.has(e.Dispatch) {
			c.fail("dispatch_ids", label, req, fmt.Sprintf("%s inside it carries dispatch id %d", kindText(e), e.Dispatch), s.at, i)
			return
		}
	}
}

func (c *expectChecker) correlation(label string, want spec.CorrelationExpect) {
	if len(want.External) > 0 {
		c.externalIDs(label, want.External)
	}
	if want.SameInternal {
		c.sameInternal(label)
	}
}

// externalIDs: the records of each pass (or of the one run) carry the
// external id listed for it (COR-3).
func (c *expectChecker) externalIDs(label string, want []uint64) {
	req := fmt.Sprintf("the records of %s carry external correlation ids %v, pass by pass", label, want)
	s := c.subject("correlation", label, req)
	if s == nil {
		return
	}
	byPass := map[uint64][]int{}
	var passes []uint64
	for _, i := range c.x.types[ekRecord] {
		e := &c.x.ev[i]
		if !s.has(e.Dispatch) || e.Corr == nil {
			continue
		}
		p, _ := c.x.recordPass(i)
		if _, seen := byPass[p]; !seen {
			passes = append(passes, p)
		}
		byPass[p] = append(byPass[p], i)
	}
	slices.Sort(passes)
	if len(passes) != len(want) {
		c.fail("correlation", label, req, fmt.Sprintf("its records come from %d passes, not %d", len(passes), len(want)))
		return
	}
	for k, p := range passes {
		for _, i := range byPass[p] {
			if got := c.x.ev[i].Corr.External; got != want[k] {
				c.fail("correlation", label, req, fmt.Sprintf("a record of pass %d carries external id %d, want %d", p, got, want[k]), i)
				return
			}
		}
	}
}

// sameInternal: every CONFIG and PASS callback and every record of the
// dispatch carries one internal id and one ancestor id (COR-1, COR-2).
func (c *expectChecker) sameInternal(label string) {
	req := fmt.Sprintf("every callback and record of %s carries one internal and one ancestor id", label)
	s := c.subject("correlation", label, req)
	if s == nil {
		return
	}
	first := -1
	for _, typ := range []trace.Type{trace.Callback, trace.Record} {
		for _, i := range c.x.ofType(typ) {
			e := &c.x.ev[i]
			if !s.has(e.Dispatch) {
				continue
			}
			if e.Corr == nil {
				c.fail("correlation", label, req, fmt.Sprintf("%s carries no correlation ids", kindText(e)), i)
				return
			}
			if first < 0 {
				first = i
				continue
			}
			f := c.x.ev[first].Corr
			if e.Corr.Internal != f.Internal || e.Corr.Ancestor != f.Ancestor {
				c.fail("correlation", label, req, fmt.Sprintf("%s carries internal %d ancestor %d; %s carried internal %d ancestor %d",
					kindText(e), e.Corr.Internal, e.Corr.Ancestor, kindText(&c.x.ev[first]), f.Internal, f.Ancestor), first, i)
				return
			}
		}
	}
	if first < 0 {
		c.fail("correlation", label, req, "no callback or record of it carries correlation ids")
	}
}

// recordCountRequires says what a record count requires.
func recordCountRequires(r spec.RecordCount) string {
	scope := []string{fmt.Sprintf("%s %s records", r.Count, r.Service)}
	if r.Dispatch != "" {
		scope = append(scope, "of "+r.Dispatch)
	}
	if r.Pass != nil {
		scope = append(scope, fmt.Sprintf("in pass %d", *r.Pass))
	}
	if r.Context != "" {
		scope = append(scope, "from context "+r.Context)
	}
	return strings.Join(scope, " ")
}

// recordCount counts the part's records that r counts into sum, judged at
// the end; r fails here, settled, when the trace has no dispatch or the
// spec no context it names.
func (c *expectChecker) recordCount(r spec.RecordCount, sum *countSum) {
	req := recordCountRequires(r)
	var s *subject
	if r.Dispatch != "" {
		if s = c.subject("record_counts", r.Dispatch, req); s == nil {
			sum.settled = true
			return
		}
		if a := c.x.appLabel[r.Dispatch]; a != nil {
			sum.dispatch = a.dispatch
		}
	}
	ctx, haveCtx := uint64(0), r.Context != ""
	if haveCtx {
		id, ok := c.contextID(r.Context)
		if !ok {
			c.fail("record_counts", r.Dispatch, req, fmt.Sprintf("the spec has no context %q", r.Context))
			sum.settled = true
			return
		}
		ctx = id
	}
	for _, i := range c.x.types[ekRecord] {
		e := &c.x.ev[i]
		if !c.own(i) || e.Service != trace.Service(r.Service) || (s != nil && !s.has(e.Dispatch)) || (haveCtx && e.Context != ctx) {
			continue
		}
		if r.Pass != nil {
			if p, ok := c.x.recordPass(i); !ok || p != *r.Pass {
				continue
			}
		}
		sum.at.add(e)
	}
}

func (c *expectChecker) runs(label string, want spec.Count) {
	req := fmt.Sprintf("the kernel of %s runs %s times", label, want)
	s := c.subject("runs", label, req)
	if s == nil {
		return
	}
	var at []int
	for _, i := range c.x.types[ekKernel] {
		if s.has(c.x.ev[i].Dispatch) {
			at = append(at, i)
		}
	}
	if !want.Holds(uint64(len(at))) {
		c.fail("runs", label, req, fmt.Sprintf("it ran %d times", len(at)), c.x.concat([]int{s.at}, at)...)
	}
}

// appTypes are the application's own events: after an abort there are
// none.
var appTypes = []trace.Type{trace.AppAlloc, trace.AppFree, trace.AppDispatch, trace.AppComplete,
	trace.AppReadback, trace.AppMemory, trace.AppTimeout}

// aborts: a restore of the dispatch failed part-way and the process ended
// there (MEM-5). The trace shows it the way a failed restore looks from
// outside the SDK: after the dispatch's last PASS EXIT the runtime wrote
// device memory on its thread (the restore began), the SDK claims no
// restore after that pass (it never finished one), and nothing follows:
// no further callback or kernel of it, no application event.
func (c *expectChecker) aborts(label string) {
	req := fmt.Sprintf("a restore of %s fails part-way and the process aborts there", label)
	s := c.subject("aborts", label, req)
	if s == nil {
		return
	}
	if !c.runtime {
		c.fail("aborts", label, req, "the trace does not report the runtime's memory traffic, so a restore that began cannot be seen")
		return
	}
	lastExit := -1
	for _, i := range c.x.types[ekCallback] {
		if e := &c.x.ev[i]; s.has(e.Dispatch) && e.Op == trace.OpPass && e.Phase == trace.PhaseExit {
			lastExit = i
		}
	}
	if lastExit < 0 {
		c.fail("aborts", label, req, "no pass of it ended, so no restore could follow one", s.at)
		return
	}
	began := -1
	for i := lastExit + 1; i < len(c.x.ev); i++ {
		e := &c.x.ev[i]
		switch {
		case e.Type == trace.MemWrite && e.Thread == s.thread && began < 0:
			began = i
		case e.Type == trace.Restore && s.has(e.Dispatch):
			c.fail("aborts", label, req, "the SDK claims a restore after its last pass: the restore finished", lastExit, i)
			return
		case slices.Contains(appTypes, e.Type), e.Type == trace.Callback && s.has(e.Dispatch),
			e.Type == trace.Kernel && s.has(e.Dispatch):
			c.fail("aborts", label, req, fmt.Sprintf("after its last pass came %s", kindText(e)), lastExit, i)
			return
		}
	}
	if began < 0 {
		c.fail("aborts", label, req, "the runtime wrote no memory after its last pass: no restore began", lastExit)
	}
}

// saved: the dispatch's snapshot saved exactly these buffers (MEM-4). A
// region is the buffer the application had allocated at its address, and
// not freed, when the snapshot was taken.
func (c *expectChecker) saved(label string, want []string) {
	req := fmt.Sprintf("the snapshot of %s saves exactly %v", label, want)
	s := c.subject("saved", label, req)
	if s == nil {
		return
	}
	var snaps []int
	for _, i := range c.x.types[ekSnapshot] {
		if e := &c.x.ev[i]; s.has(e.Dispatch) && (e.Status == "" || e.Status.Is(trace.StatusSuccess)) {
			snaps = append(snaps, i)
		}
	}
	if len(snaps) == 0 {
		if len(want) > 0 {
			c.fail("saved", label, req, "it took no snapshot", s.at)
		}
		return
	}
	at := snaps[0]
	var got []string
	for _, r := range c.x.ev[at].Regions {
		got = append(got, c.bufferAt(r.Addr, at))
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		c.fail("saved", label, req, fmt.Sprintf("it saved %v", got), at)
	}
}

// bufferAt names the buffer live at addr just before position before, or
// the address itself when the application allocated nothing there.
func (c *expectChecker) bufferAt(addr uint64, before int) string {
	name := ""
	for i := 0; i < before; i++ {
		switch e := &c.x.ev[i]; {
		case e.Type == trace.AppAlloc && e.Addr == addr:
			name = e.Buffer
		case e.Type == trace.AppFree && e.Addr == addr:
			name = ""
		}
	}
	if name == "" {
		return fmt.Sprintf("0x%x", addr)
	}
	return name
}

// payload: at the callback, the payload had exactly these members non-zero
// and this size (API-5, API-6, LCX-1).
func (c *expectChecker) payload(pe spec.PayloadExpect) {
	where := pe.At
	if pe.Pass != nil {
		where += fmt.Sprintf(" of pass %d", *pe.Pass)
	}
	var want []string
	if pe.Members != nil {
		want = slices.Sorted(slices.Values(pe.Members))
		want = slices.Compact(want)
	}
	var says []string
	if pe.Members != nil {
		says = append(says, fmt.Sprintf("holds exactly the members %v", pe.Members))
	}
	if pe.Size != nil {
		says = append(says, fmt.Sprintf("has size %d", *pe.Size))
	}
	req := fmt.Sprintf("at %s of %s the payload %s", where, pe.Dispatch, strings.Join(says, " and "))
	s := c.subject("payload", pe.Dispatch, req)
	if s == nil {
		return
	}
	matched := 0
	for _, i := range c.x.types[ekCallback] {
		e := &c.x.ev[i]
		if !s.has(e.Dispatch) || windowOf(e) != pe.At {
			continue
		}
		if p, ok := e.PassOf(); pe.Pass != nil && (!ok || p != *pe.Pass) {
			continue
		}
		matched++
		if pe.Members != nil {
			if got := slices.Sorted(slices.Values(e.Payload)); !slices.Equal(got, want) {
				c.fail("payload", pe.Dispatch, req, fmt.Sprintf("%s arrived with %v", kindText(e), e.Payload), i)
				return
			}
		}
		if pe.Size != nil && (e.PayloadSize == nil || *e.PayloadSize != *pe.Size) {
			got := "no size"
			if e.PayloadSize != nil {
				got = fmt.Sprintf("size %d", *e.PayloadSize)
			}
			c.fail("payload", pe.Dispatch, req, fmt.Sprintf("%s arrived with %s", kindText(e), got), i)
			return
		}
	}
	if matched == 0 {
		c.fail("payload", pe.Dispatch, req, fmt.Sprintf("%s never reached %s", pe.Dispatch, where))
	}
}

// counters: the counter records of the dispatch (in the pass, from the
// context) carry exactly these counter names (AGT-1: pass i, group i), and
// each counter given a value reads a value in its range in every such
// record that carries it, and in one at least: values, not only names.
func (c *expectChecker) counters(ce spec.CountersExpect) {
	var scope []string
	if ce.Pass != nil {
		scope = append(scope, fmt.Sprintf("in pass %d", *ce.Pass))
	}
	if ce.Context != "" {
		scope = append(scope, "from context "+ce.Context)
	}
	var want []string
	var says []string
	if len(ce.Names) > 0 {
		want = slices.Compact(slices.Sorted(slices.Values(ce.Names)))
		says = append(says, fmt.Sprintf("carry exactly %v", ce.Names))
	}
	names := slices.Sorted(maps.Keys(ce.Values))
	if len(names) > 0 {
		var vals []string
		for _, n := range names {
			vals = append(vals, fmt.Sprintf("%s %s", n, ce.Values[n]))
		}
		says = append(says, "read "+strings.Join(vals, ", "))
	}
	req := strings.Join(append([]string{fmt.Sprintf("the counter records of %s", ce.Dispatch)}, scope...), " ") +
		" " + strings.Join(says, " and ")
	s := c.subject("counters", ce.Dispatch, req)
	if s == nil {
		return
	}
	ctx, haveCtx := uint64(0), ce.Context != ""
	if haveCtx {
		id, ok := c.contextID(ce.Context)
		if !ok {
			c.fail("counters", ce.Dispatch, req, fmt.Sprintf("the spec has no context %q", ce.Context))
			return
		}
		ctx = id
	}
	matched := 0
	carried := map[string]int{}
	for _, i := range c.x.types[ekRecord] {
		e := &c.x.ev[i]
		if e.Service != trace.CounterCollection || !s.has(e.Dispatch) || (haveCtx && e.Context != ctx) {
			continue
		}
		if ce.Pass != nil {
			if p, ok := c.x.recordPass(i); !ok || p != *ce.Pass {
				continue
			}
		}
		matched++
		var got []string
		for _, k := range e.Counters {
			got = append(got, k.Name)
			if w, ok := ce.Values[k.Name]; ok {
				carried[k.Name]++
				if !w.Holds(k.Value) {
					c.fail("counters", ce.Dispatch, req, fmt.Sprintf("a record says %s = %d", k.Name, k.Value), i)
					return
				}
			}
		}
		if slices.Sort(got); want != nil && !slices.Equal(got, want) {
			c.fail("counters", ce.Dispatch, req, fmt.Sprintf("a record carries %v", got), i)
			return
		}
	}
	if matched == 0 {
		c.fail("counters", ce.Dispatch, req, "there is no such counter record")
		return
	}
	var missing []string
	for _, n := range names {
		if carried[n] == 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		c.fail("counters", ce.Dispatch, req, fmt.Sprintf("no such record carries %s", strings.Join(missing, ", ")))
	}
}
