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

// ExpectRule is the rule name of a failed spec expectation.
const ExpectRule = "EXPECT"

// Expectations checks the spec's own expect block against the trace.
// expect.violations (expected oracle failures) is the caller's business.
func Expectations(s spec.Spec, t trace.Trace) []Violation {
	vs, _ := JudgeExpectations(s, t)
	return vs
}

// expectSources are the event sources each expectation reads. Where the
// trace lacks them the expectation is not observable there: it is neither
// judged nor passed, and the caller reports it so (a black-box port cannot
// show the SDK's dispatch ids or the runtime's kernel runs; the warnings the
// SDK printed are what the application's process shows, docs/trace.md).
var expectSources = map[string][]trace.Source{
	"passes": {tool}, "continue_consulted": {tool}, "completions": {app}, "memory": {app},
	"memory_after": {app}, "records": {tool}, "statuses": {tool}, "warnings": {app},
	"no_warnings": {app}, "never_ends": {sdk, app}, "timestamps": {tool}, "user_data": {tool},
	"sequence": {tool}, "dispatch_ids": {sdk}, "correlation": {tool}, "record_counts": {tool, sdk},
	"runs": {runtime}, "payload": {tool}, "counters": {tool}, "saved": {sdk}, "aborts": {runtime, sdk},
}

// JudgeExpectations checks the spec's own expect block against the trace
// and lists the keys the trace cannot show (not observable).
func JudgeExpectations(s spec.Spec, t trace.Trace) (vs []Violation, unobserved []string) {
	return judgeExpectations(s, newIndex(t))
}

func judgeExpectations(s spec.Spec, x *index) (vs []Violation, unobserved []string) {
	j := newExpectJudge(s, x.header)
	j.part(x, 0, nil)
	return j.finish()
}

// expectJudge judges a spec's expectations over a trace handed over in
// parts: check.Stream's segments, or the whole trace as one. Most keys are
// about one dispatch (passes, sequence, ...): they are judged in the part
// that holds the events labelled with it, which Stream keeps to one
// (expectHere), and a label no part held is judged at the end against no
// events (its "not found"). The others are added up over the parts and
// judged at the end: records, warnings, statuses and record counts not
// narrowed to a dispatch, the buffers' final contents, timestamps.
type expectJudge struct {
	s       spec.Spec
	h       trace.Header
	keys    map[string]bool     // the keys set and observable in the trace
	unseen  []string            // the keys set and not observable
	labels  map[string]bool     // the dispatches the judged keys name
	keysOf  map[string][]string // the judged keys that name each label
	judged  map[string]bool     // of labels, those a part held
	aborts  map[string]bool     // labels whose abort ends the trace
	vs      []Violation
	records map[string]*evTally // per service
	warned  []*evTally          // per expect.warnings entry
	warns   evTally             // every warning (no_warnings)
	codes   []string            // their codes
	status  []statusSum         // per expect.statuses entry
	counts  []countSum          // per expect.record_counts entry
	memory  map[string]*lastMemory
	// replayed: some part replayed a dispatch (timestamps).
	replayed bool
}

// evTally counts matching events and keeps the first few, which a
// violation shows (maxEvents).
type evTally struct {
	n     int
	first []trace.Event
}

// add counts e and keeps it if it is among the maxEvents first by seq: a
// loop's parts are counted out of order (the passes a cut leaves out
// before the part that holds the loop's head; Stream.cutLoop).
func (t *evTally) add(e *trace.Event) {
	t.n++
	i := len(t.first)
	for i > 0 && t.first[i-1].Seq > e.Seq {
		i--
	}
	switch {
	case len(t.first) < maxEvents:
		t.first = slices.Insert(t.first, i, *e)
	case i < maxEvents:
		copy(t.first[i+1:], t.first[i:maxEvents-1])
		t.first[i] = *e
	}
}

// statusSum is what the parts found of a status expectation: settled once
// it failed for a reason of its own (no such dispatch or context).
type statusSum struct {
	settled bool
	matched int
	wrong   evTally
}

// countSum is what the parts found of a record count.
type countSum struct {
	settled  bool
	at       evTally
	dispatch uint64 // the narrowing dispatch's id, from the part that held it
}

// lastMemory is the last readback of a buffer so far and what it fails
// (nil: it holds what was expected).
type lastMemory struct{ v *Violation }

func newExpectJudge(s spec.Spec, h trace.Header) *expectJudge {
	j := &expectJudge{s: s, h: h, keys: map[string]bool{}, labels: map[string]bool{}, keysOf: map[string][]string{}, judged: map[string]bool{},
		aborts: map[string]bool{}, records: map[string]*evTally{}, memory: map[string]*lastMemory{}}
	ex := s.Expect
	set := map[string]bool{
		"passes": len(ex.Passes) > 0, "continue_consulted": len(ex.ContinueConsulted) > 0,
		"completions": len(ex.Completions) > 0, "memory": len(ex.Memory) > 0, "records": len(ex.Records) > 0,
		"statuses": len(ex.Statuses) > 0, "warnings": len(ex.Warnings) > 0, "no_warnings": ex.NoWarnings,
		"never_ends": len(ex.NeverEnds) > 0, "timestamps": ex.Timestamps != "", "memory_after": len(ex.MemoryAfter) > 0,
		"user_data": len(ex.UserData) > 0, "sequence": len(ex.Sequence) > 0, "dispatch_ids": len(ex.DispatchIDs) > 0,
		"correlation": len(ex.Correlation) > 0, "record_counts": len(ex.RecordCounts) > 0, "runs": len(ex.Runs) > 0,
		"payload": len(ex.Payload) > 0, "counters": len(ex.Counters) > 0, "saved": len(ex.Saved) > 0, "aborts": len(ex.Aborts) > 0,
	}
	// In the order the keys were always judged and listed unobserved.
	for _, key := range expectKeys {
		if !set[key] {
			continue
		}
		observable := true
		for _, src := range expectSources[key] {
			observable = observable && h.Reports(src)
		}
		if !observable {
			j.unseen = append(j.unseen, key)
			continue
		}
		j.keys[key] = true
	}
	name := func(key string, labels ...string) {
		if j.keys[key] {
			for _, l := range labels {
				if l != "" {
					j.labels[l] = true
					j.keysOf[l] = append(j.keysOf[l], key)
				}
			}
		}
	}
	name("passes", slices.Collect(maps.Keys(ex.Passes))...)
	name("continue_consulted", slices.Collect(maps.Keys(ex.ContinueConsulted))...)
	name("completions", slices.Collect(maps.Keys(ex.Completions))...)
	name("never_ends", ex.NeverEnds...)
	name("memory_after", slices.Collect(maps.Keys(ex.MemoryAfter))...)
	name("sequence", slices.Collect(maps.Keys(ex.Sequence))...)
	name("dispatch_ids", slices.Collect(maps.Keys(ex.DispatchIDs))...)
	name("correlation", slices.Collect(maps.Keys(ex.Correlation))...)
	name("runs", slices.Collect(maps.Keys(ex.Runs))...)
	name("saved", slices.Collect(maps.Keys(ex.Saved))...)
	name("aborts", ex.Aborts...)
	for _, u := range ex.UserData {
		name("user_data", u.Dispatch)
	}
	for _, p := range ex.Payload {
		name("payload", p.Dispatch)
	}
	for _, c := range ex.Counters {
		name("counters", c.Dispatch)
	}
	for _, st := range ex.Statuses {
		name("statuses", st.Dispatch)
	}
	for _, r := range ex.RecordCounts {
		name("record_counts", r.Dispatch)
	}
	if j.keys["aborts"] {
		for _, l := range ex.Aborts {
			j.aborts[l] = true
		}
	}
	for range ex.Warnings {
		j.warned = append(j.warned, &evTally{})
	}
	j.status = make([]statusSum, len(ex.Statuses))
	j.counts = make([]countSum, len(ex.RecordCounts))
	return j
}

// cutsLoops: a never-ending loop may be judged in parts (check/loop.go).
// The keys that add events up over the run count the passes a cut leaves
// out as it leaves them (hidden); timestamps compares a dispatch's passes
// with each other, so it needs the loop whole.
func (j *expectJudge) cutsLoops() bool { return !j.keys["timestamps"] }

// hidden counts, for the keys that add events up over the run, the events
// at [from, to) of x: the passes of a loop a cut is about to leave out,
// which no later part holds. A key about one dispatch does not count here:
// its loop is not cut (loopSafe). What a part alone cannot settle (a
// context the spec does not name) is left to the parts that judge.
func (j *expectJudge) hidden(x *index, from, to int) {
	if from >= to {
		return
	}
	c := expectChecker{x: x, s: j.s, from: from, to: to, runtime: j.h.Reports(trace.SourceRuntime), sdk: j.h.Reports(trace.SourceSDK)}
	ex := j.s.Expect
	if j.keys["records"] {
		for _, svc := range slices.Sorted(maps.Keys(ex.Records)) {
			c.records(svc, j.recordsOf(svc))
		}
	}
	if j.keys["statuses"] {
		for k, st := range ex.Statuses {
			if st.Dispatch == "" && !j.status[k].settled {
				c.status(st, &j.status[k])
				j.status[k].settled = false
			}
		}
	}
	if j.keys["warnings"] {
		for k, code := range ex.Warnings {
			c.warning(code, j.warned[k])
		}
	}
	if j.keys["no_warnings"] {
		j.codes = c.warnings(&j.warns, j.codes)
	}
	if j.keys["record_counts"] {
		for k, r := range ex.RecordCounts {
			if r.Dispatch == "" && !j.counts[k].settled {
				c.recordCount(r, &j.counts[k])
				j.counts[k].settled = false
			}
		}
	}
}

// loopSafe: the loop of the dispatch labelled label may be cut: at most
// never_ends names it, which its last part shows whole (its app_dispatch
// is carried into every part, its never_ended and the application's
// timeout come in the last).
func (j *expectJudge) loopSafe(label string) bool {
	for _, key := range j.keysOf[label] {
		if key != "never_ends" {
			return false
		}
	}
	return true
}

// expectKeys are the keys of expect: in the order they are judged.
var expectKeys = []string{"passes", "continue_consulted", "completions", "memory", "records", "statuses", "warnings",
	"no_warnings", "never_ends", "timestamps", "memory_after", "user_data", "sequence", "dispatch_ids", "correlation",
	"record_counts", "runs", "payload", "counters", "saved", "aborts"}

// part judges the trace's part x, whose first np events are a prologue
// carried from earlier parts (counted there): the keys about a dispatch
// for the labels here holds (nil: every label), and what the keys added
// up over parts find in it.
func (j *expectJudge) part(x *index, np int, here map[string]bool) {
	c := expectChecker{x: x, s: j.s, from: np, runtime: j.h.Reports(trace.SourceRuntime), sdk: j.h.Reports(trace.SourceSDK)}
	mine := func(label string) bool {
		if here != nil && !here[label] {
			return false
		}
		j.judged[label] = true
		return true
	}
	ex := j.s.Expect
	each := func(key string, labels []string, f func(label string)) {
		if j.keys[key] {
			for _, label := range labels {
				if mine(label) {
					f(label)
				}
			}
		}
	}
	each("passes", slices.Sorted(maps.Keys(ex.Passes)), func(l string) { c.passes(l, ex.Passes[l]) })
	each("continue_consulted", slices.Sorted(maps.Keys(ex.ContinueConsulted)), func(l string) { c.continueConsulted(l, ex.ContinueConsulted[l]) })
	each("completions", slices.Sorted(maps.Keys(ex.Completions)), func(l string) { c.completions(l, ex.Completions[l]) })
	if j.keys["memory"] {
		for _, buf := range slices.Sorted(maps.Keys(ex.Memory)) {
			c.memory(buf, ex.Memory[buf], j.memory)
		}
	}
	if j.keys["records"] {
		for _, svc := range slices.Sorted(maps.Keys(ex.Records)) {
			c.records(svc, j.recordsOf(svc))
		}
	}
	if j.keys["statuses"] {
		for k, st := range ex.Statuses {
			if !j.status[k].settled && (st.Dispatch == "" || mine(st.Dispatch)) {
				c.status(st, &j.status[k])
			}
		}
	}
	if j.keys["warnings"] {
		for k, code := range ex.Warnings {
			c.warning(code, j.warned[k])
		}
	}
	if j.keys["no_warnings"] {
		j.codes = c.warnings(&j.warns, j.codes)
	}
	each("never_ends", ex.NeverEnds, c.neverEnds)
	if j.keys["timestamps"] {
		j.replayed = c.timestamps(ex.Timestamps) || j.replayed
	}
	each("memory_after", slices.Sorted(maps.Keys(ex.MemoryAfter)), func(l string) {
		for _, buf := range slices.Sorted(maps.Keys(ex.MemoryAfter[l])) {
			c.memoryAfter(l, buf, ex.MemoryAfter[l][buf])
		}
	})
	if j.keys["user_data"] {
		for _, u := range ex.UserData {
			if mine(u.Dispatch) {
				c.userData(u)
			}
		}
	}
	each("sequence", slices.Sorted(maps.Keys(ex.Sequence)), func(l string) { c.sequence(l, ex.Sequence[l]) })
	each("dispatch_ids", slices.Sorted(maps.Keys(ex.DispatchIDs)), func(l string) { c.dispatchIDs(l, ex.DispatchIDs[l]) })
	each("correlation", slices.Sorted(maps.Keys(ex.Correlation)), func(l string) { c.correlation(l, ex.Correlation[l]) })
	if j.keys["record_counts"] {
		for k, r := range ex.RecordCounts {
			if !j.counts[k].settled && (r.Dispatch == "" || mine(r.Dispatch)) {
				c.recordCount(r, &j.counts[k])
			}
		}
	}
	each("runs", slices.Sorted(maps.Keys(ex.Runs)), func(l string) { c.runs(l, ex.Runs[l]) })
	if j.keys["payload"] {
		for _, pe := range ex.Payload {
			if mine(pe.Dispatch) {
				c.payload(pe)
			}
		}
	}
	if j.keys["counters"] {
		for _, ce := range ex.Counters {
			if mine(ce.Dispatch) {
				c.counters(ce)
			}
		}
	}
	each("saved", slices.Sorted(maps.Keys(ex.Saved)), func(l string) { c.saved(l, ex.Saved[l]) })
	each("aborts", ex.Aborts, c.aborts)
	j.vs = append(j.vs, c.vs...)
}

func (j *expectJudge) recordsOf(service string) *evTally {
	t := j.records[service]
	if t == nil {
		t = &evTally{}
		j.records[service] = t
	}
	return t
}

// finish judges the labels no part held (against no events: each is not
// found) and what was added up, and returns every violation and the keys
// the trace cannot show.
func (j *expectJudge) finish() (vs []Violation, unobserved []string) {
	missing := map[string]bool{}
	for l := range j.labels {
		if !j.judged[l] {
			missing[l] = true
		}
	}
	if len(missing) > 0 {
		x := newIndex(trace.Trace{Header: j.h})
		j.part(x, 0, missing)
	}
	ex := j.s.Expect
	if j.keys["records"] {
		for _, svc := range slices.Sorted(maps.Keys(ex.Records)) {
			want, t := ex.Records[svc], j.recordsOf(svc)
			if !want.Holds(uint64(t.n)) {
				j.fail("records", "", fmt.Sprintf("%s %s records over the run", want, svc), fmt.Sprintf("the run delivered %d %s records", t.n, svc), t.first, 0)
			}
		}
	}
	if j.keys["statuses"] {
		for k, st := range ex.Statuses {
			if sum := &j.status[k]; !sum.settled {
				j.statusVerdict(st, sum)
			}
		}
	}
	if j.keys["warnings"] {
		for k, code := range ex.Warnings {
			if t := j.warned[k]; t.n != 1 {
				j.fail("warnings", "", fmt.Sprintf("warning %s is printed once", code), fmt.Sprintf("it was printed %d times", t.n), t.first, 0)
			}
		}
	}
	if j.keys["no_warnings"] && j.warns.n > 0 {
		j.fail("no_warnings", "", "no warning is printed", "warnings were printed: "+strings.Join(j.codes, ", "), j.warns.first, 0)
	}
	if j.keys["memory"] {
		for _, buf := range slices.Sorted(maps.Keys(ex.Memory)) {
			switch m := j.memory[buf]; {
			case m == nil:
				j.fail("memory", buf, memoryRequires(buf, ex.Memory[buf]), fmt.Sprintf("the application never read buffer %s back (no app_memory)", buf), nil, 0)
			case m.v != nil:
				j.vs = append(j.vs, *m.v)
			}
		}
	}
	if j.keys["timestamps"] {
		switch {
		case ex.Timestamps != "differ_per_pass":
			j.fail("timestamps", "", timestampsRequires, fmt.Sprintf("unknown timestamps expectation %q", ex.Timestamps), nil, 0)
		case !j.replayed:
			j.fail("timestamps", "", timestampsRequires, "no dispatch was replayed, so no timestamps could differ", nil, 0)
		}
	}
	if j.keys["record_counts"] {
		for k, r := range ex.RecordCounts {
			if sum := &j.counts[k]; !sum.settled && !r.Count.Holds(uint64(sum.at.n)) {
				j.fail("record_counts", r.Dispatch, recordCountRequires(r), fmt.Sprintf("there were %d", sum.at.n), sum.at.first, sum.dispatch)
			}
		}
	}
	return sortViolations(j.vs), j.unseen
}

// fail notes an expectation that failed over the whole trace, showing the
// events kept of it.
func (j *expectJudge) fail(key, label, requires, msg string, events []trace.Event, dispatch uint64) {
	j.vs = append(j.vs, expectViolation(key, label, requires, msg, events, dispatch))
}

func expectViolation(key, label, requires, msg string, events []trace.Event, dispatch uint64) Violation {
	return Violation{Rule: ExpectRule, Requires: "expect." + key + ": " + requires, Message: msg,
		Events: events, Dispatch: dispatch, Label: label}
}

type expectChecker struct {
	x        *index
	s        spec.Spec
	from     int // the part's own events begin here: before, a prologue
	to       int // and end here (0: at the part's end; Stream.cutLoop)
	vs       []Violation
	subjects map[string]*subject // found on first use, nil: none
	tools    *[]*subject         // the tool's dispatches' windows, made on first use
	runtime  bool                // the trace reports the runtime's events
	sdk      bool                // the trace reports the SDK's own events
}

// own reports whether the event at i is the part's own, counted here.
func (c *expectChecker) own(i int) bool { return i >= c.from && (c.to == 0 || i < c.to) }

func (c *expectChecker) fail(key, label, requires, msg string, at ...int) {
	v := c.x.violation(ExpectRule, 0, msg, at...)
	v.Requires = "expect." + key + ": " + requires
	v.Label = label
	if a := c.x.appLabel[label]; a != nil {
		v.Dispatch = a.dispatch
	}
	c.vs = append(c.vs, v)
}

// app finds the application dispatch of label, failing the key if absent.
func (c *expectChecker) app(key, label, requires string) (*appView, *dispatchView) {
	a := c.x.appLabel[label]
	if a == nil {
		c.fail(key, label, requires, fmt.Sprintf("the trace has no app_dispatch labelled %q", label))
		return nil, nil
	}
	d := c.x.dispatches[a.dispatch]
	if d == nil {
		d = &dispatchView{id: a.dispatch}
	}
	return a, d
}

func (c *expectChecker) passes(label string, want spec.Count) {
	req := fmt.Sprintf("%s runs %s passes", label, want)
	s := c.subject("passes", label, req)
	if s == nil {
		return
	}
	var enters []int
	for _, i := range c.x.types[ekCallback] {
		if e := &c.x.ev[i]; s.has(e.Dispatch) && e.Op == trace.OpPass && e.Phase == trace.PhaseEnter {
			enters = append(enters, i)
		}
	}
	if n := uint64(len(enters)); !want.Holds(n) {
		c.fail("passes", label, req, fmt.Sprintf("%s ran %d passes", label, n), firstOr(enters, s.at))
	}
}

func (c *expectChecker) continueConsulted(label string, want []uint64) {
	req := fmt.Sprintf("replay_continue is consulted after passes %v of %s", want, label)
	a, d := c.app("continue_consulted", label, req)
	if a == nil {
		return
	}
	var got []uint64
	for _, i := range d.continues {
		p, _ := c.x.passOf(i)
		got = append(got, p)
	}
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		c.fail("continue_consulted", label, req, fmt.Sprintf("it was consulted after passes %v", got), c.x.concat([]int{a.at}, d.continues)...)
	}
}

func (c *expectChecker) completions(label string, want spec.Count) {
	req := fmt.Sprintf("the application sees %s completions of %s", want, label)
	s := c.subject("completions", label, req)
	if s == nil {
		return
	}
	typ := trace.AppComplete
	if s.byTool {
		req = fmt.Sprintf("the tool sees %s completions of its dispatch %s", want, label)
		typ = trace.ToolComplete
	}
	var done []int
	for _, i := range c.x.ofType(typ) {
		if c.x.ev[i].Label == label {
			done = append(done, i)
		}
	}
	if n := uint64(len(done)); !want.Holds(n) {
		c.fail("completions", label, req, fmt.Sprintf("it saw %d", n), c.x.concat([]int{s.at}, done)...)
	}
}

// memory keeps the last readback of buf in the part, and what it fails,
// in last (judged once every part is: expectJudge.finish).
func (c *expectChecker) memory(buf string, want spec.MemoryExpect, last map[string]*lastMemory) {
	at := -1
	for _, i := range c.x.types[ekAppMemory] {
		if i >= c.from && c.x.ev[i].Buffer == buf {
			at = i
		}
	}
	if at < 0 {
		return
	}
	m := &lastMemory{}
	if msg := c.x.wholeBufferMismatch(at, want); msg != "" {
		c.fail("memory", buf, memoryRequires(buf, want), msg, at)
		v := c.vs[len(c.vs)-1]
		c.vs = c.vs[:len(c.vs)-1]
		m.v = &v
	}
	last[buf] = m
}

func memoryRequires(buf string, want spec.MemoryExpect) string {
	return fmt.Sprintf("buffer %s holds %s at the end", buf, memoryText(want))
}

// mismatchShown is how many differing elements a message names.
const mismatchShown = 4

// wholeBufferMismatch judges every element of the buffer event at position
// i against want and says what differs ("" when it holds). The event must
// be the whole buffer (notWhole): the size the application allocated, and a
// digest equal to its values.
func (x *index) wholeBufferMismatch(at int, want spec.MemoryExpect) string {
	if msg := x.notWhole(at); msg != "" {
		return msg
	}
	e := &x.ev[at]
	n := trace.CountOf(e.Runs)
	switch {
	case want.Values != nil && uint64(len(want.Values)) > n:
		return fmt.Sprintf("the buffer has %d elements, fewer than the %d values expected", n, len(want.Values))
	}
	expected := func(i uint64) (int64, bool) {
		if want.All != nil {
			return *want.All, true
		}
		if i < uint64(len(want.Values)) {
			return want.Values[i], true
		}
		return 0, false
	}
	var bad uint64
	var shown []string
	var i uint64
	for _, r := range e.Runs {
		if want.All != nil { // one comparison per run
			if r.Value != *want.All {
				bad += r.Count
				for k := uint64(0); k < r.Count && len(shown) < mismatchShown; k++ {
					shown = append(shown, fmt.Sprintf("[%d] is %d", i+k, r.Value))
				}
			}
			i += r.Count
			continue
		}
		for k := uint64(0); k < r.Count; k++ {
			if w, ok := expected(i); ok && w != r.Value {
				bad++
				if len(shown) < mismatchShown {
					shown = append(shown, fmt.Sprintf("[%d] is %d, want %d", i, r.Value, w))
				}
			}
			i++
			if want.All == nil && i >= uint64(len(want.Values)) {
				break
			}
		}
		if i >= uint64(len(want.Values)) {
			break
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d elements differ: %s (digest %s)", bad, n, strings.Join(shown, ", "), e.Digest)
}

func memoryText(m spec.MemoryExpect) string {
	if m.All != nil {
		return fmt.Sprintf("%d in every element", *m.All)
	}
	return fmt.Sprintf("the %d leading values %v", len(m.Values), m.Values)
}

// records counts the part's records of service into t.
func (c *expectChecker) records(service string, t *evTally) {
	for _, i := range c.x.types[ekRecord] {
		if e := &c.x.ev[i]; c.own(i) && e.Service == trace.Service(service) {
			t.add(e)
		}
	}
}

// status: every matching api or local call returned the status, where
// the expectation narrows it to a dispatch, a callback and a pass.
// Contexts are named by the spec and numbered 1.. in the order of
// spec.contexts. The part's calls are counted into sum, judged at the end
// (statusVerdict); an expectation that names no dispatch or context of the
// trace fails here, and is settled.
func (c *expectChecker) status(st spec.StatusExpect, sum *statusSum) {
	where, ok := c.statusScope(st)
	if !ok {
		sum.settled = true
		return
	}
	typ, call := trace.API, trace.Call(st.Call)
	switch st.Call {
	case spec.MisuseLocalStart:
		typ, call = trace.Local, trace.LocalStart
	case spec.MisuseLocalStop:
		typ, call = trace.Local, trace.LocalStop
	}
	ctx, haveCtx := uint64(0), st.Context != ""
	if haveCtx {
		id, ok := c.contextID(st.Context)
		if !ok {
			c.fail("statuses", "", statusRequires(st), fmt.Sprintf("the spec has no context %q", st.Context))
			sum.settled = true
			return
		}
		ctx = id
	}
	for _, i := range c.x.ofType(typ) {
		e := &c.x.ev[i]
		if !c.own(i) || e.Call != call || (haveCtx && e.Context != ctx) || !where(e) {
			continue
		}
		sum.matched++
		if !e.Status.Is(trace.Status(st.Status)) {
			sum.wrong.add(e)
		}
	}
}

// statusRequires says what a status expectation requires.
func statusRequires(st spec.StatusExpect) string {
	req := fmt.Sprintf("%s returns %s", st.Call, st.Status)
	if scope := statusScopeText(st); scope != "" {
		req += " " + scope
	}
	if st.Context != "" {
		req += " for context " + st.Context
	}
	return req
}

// statusVerdict judges a status expectation on what every part found.
func (j *expectJudge) statusVerdict(st spec.StatusExpect, sum *statusSum) {
	switch {
	case sum.matched == 0:
		j.fail("statuses", "", statusRequires(st), "no such call is in the trace", nil, 0)
	case sum.wrong.n > 0:
		j.fail("statuses", "", statusRequires(st), fmt.Sprintf("%d of %d calls returned otherwise (first: %s)", sum.wrong.n, sum.matched, sum.wrong.first[0].Status), sum.wrong.first, 0)
	}
}

func (c *expectChecker) contextID(name string) (uint64, bool) {
	for k, ctx := range c.s.Contexts {
		if ctx.Name == name {
			return uint64(k + 1), true
		}
	}
	id, err := strconv.ParseUint(name, 10, 64)
	return id, err == nil
}

// warning counts the part's warnings of code into t.
func (c *expectChecker) warning(code string, t *evTally) {
	for _, i := range c.x.types[ekWarning] {
		if e := &c.x.ev[i]; c.own(i) && e.Code == trace.WarningCode(code) {
			t.add(e)
		}
	}
}

// warnings counts every warning of the part into t and adds its code to
// codes (no_warnings).
func (c *expectChecker) warnings(t *evTally, codes []string) []string {
	for _, i := range c.x.types[ekWarning] {
		if e := &c.x.ev[i]; c.own(i) {
			t.add(e)
			codes = append(codes, string(e.Code))
		}
	}
	return codes
}

func (c *expectChecker) neverEnds(label string) {
	req := fmt.Sprintf("the loop of %s never ends", label)
	a, d := c.app("never_ends", label, req)
	if a == nil {
		return
	}
	if len(d.neverEnded) == 0 {
		c.fail("never_ends", label, req, fmt.Sprintf("dispatch %d has no never_ended event", d.id), c.x.concat([]int{a.at}, d.configExit, a.complete)...)
	}
	if len(a.timeout) == 0 {
		c.fail("never_ends", label, req, "the application did not time out waiting for it", c.x.concat([]int{a.at}, a.complete)...)
	}
}

// timestampsRequires says what expect.timestamps requires.
const timestampsRequires = "kernel and record timestamps differ from pass to pass"

// timestamps judges the part's replayed dispatches, and reports whether it
// had one (the mode and a trace that replayed none are judged at the end).
func (c *expectChecker) timestamps(mode string) (replayed bool) {
	if mode != "differ_per_pass" {
		return false
	}
	c.x.eachDispatch(func(d *dispatchView) {
		if !d.replayed() {
			return
		}
		replayed = true
		for _, v := range c.x.checkPassTimestamps(d) {
			c.fail("timestamps", v.Label, timestampsRequires, v.Message)
			c.vs[len(c.vs)-1].Events = v.Events
		}
	})
	return replayed
}
