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
	h := x.header
	c := expectChecker{x: x, s: s, runtime: h.Reports(trace.SourceRuntime), sdk: h.Reports(trace.SourceSDK)}
	ex := s.Expect
	// on runs f when the trace can show key, and notes it otherwise.
	on := func(key string, present bool, f func()) {
		if !present {
			return
		}
		for _, src := range expectSources[key] {
			if !h.Reports(src) {
				unobserved = append(unobserved, key)
				return
			}
		}
		f()
	}
	on("passes", len(ex.Passes) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.Passes)) {
			c.passes(label, ex.Passes[label])
		}
	})
	on("continue_consulted", len(ex.ContinueConsulted) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.ContinueConsulted)) {
			c.continueConsulted(label, ex.ContinueConsulted[label])
		}
	})
	on("completions", len(ex.Completions) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.Completions)) {
			c.completions(label, ex.Completions[label])
		}
	})
	on("memory", len(ex.Memory) > 0, func() {
		for _, buf := range slices.Sorted(maps.Keys(ex.Memory)) {
			c.memory(buf, ex.Memory[buf])
		}
	})
	on("records", len(ex.Records) > 0, func() {
		for _, svc := range slices.Sorted(maps.Keys(ex.Records)) {
			c.records(svc, ex.Records[svc])
		}
	})
	on("statuses", len(ex.Statuses) > 0, func() {
		for _, st := range ex.Statuses {
			c.status(st)
		}
	})
	on("warnings", len(ex.Warnings) > 0, func() {
		for _, code := range ex.Warnings {
			c.warning(code)
		}
	})
	on("no_warnings", ex.NoWarnings, c.noWarnings)
	on("never_ends", len(ex.NeverEnds) > 0, func() {
		for _, label := range ex.NeverEnds {
			c.neverEnds(label)
		}
	})
	on("timestamps", ex.Timestamps != "", func() { c.timestamps(ex.Timestamps) })
	on("memory_after", len(ex.MemoryAfter) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.MemoryAfter)) {
			for _, buf := range slices.Sorted(maps.Keys(ex.MemoryAfter[label])) {
				c.memoryAfter(label, buf, ex.MemoryAfter[label][buf])
			}
		}
	})
	on("user_data", len(ex.UserData) > 0, func() {
		for _, u := range ex.UserData {
			c.userData(u)
		}
	})
	on("sequence", len(ex.Sequence) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.Sequence)) {
			c.sequence(label, ex.Sequence[label])
		}
	})
	on("dispatch_ids", len(ex.DispatchIDs) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.DispatchIDs)) {
			c.dispatchIDs(label, ex.DispatchIDs[label])
		}
	})
	on("correlation", len(ex.Correlation) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.Correlation)) {
			c.correlation(label, ex.Correlation[label])
		}
	})
	on("record_counts", len(ex.RecordCounts) > 0, func() {
		for _, r := range ex.RecordCounts {
			c.recordCount(r)
		}
	})
	on("runs", len(ex.Runs) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.Runs)) {
			c.runs(label, ex.Runs[label])
		}
	})
	on("payload", len(ex.Payload) > 0, func() {
		for _, pe := range ex.Payload {
			c.payload(pe)
		}
	})
	on("counters", len(ex.Counters) > 0, func() {
		for _, ce := range ex.Counters {
			c.counters(ce)
		}
	})
	on("saved", len(ex.Saved) > 0, func() {
		for _, label := range slices.Sorted(maps.Keys(ex.Saved)) {
			c.saved(label, ex.Saved[label])
		}
	})
	on("aborts", len(ex.Aborts) > 0, func() {
		for _, label := range ex.Aborts {
			c.aborts(label)
		}
	})
	return sortViolations(c.vs), unobserved
}

type expectChecker struct {
	x        *index
	s        spec.Spec
	vs       []Violation
	subjects map[string]*subject // built on first use
	runtime  bool                // the trace reports the runtime's events
	sdk      bool                // the trace reports the SDK's own events
}

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

func (c *expectChecker) memory(buf string, want spec.MemoryExpect) {
	last := -1
	for _, i := range c.x.types[ekAppMemory] {
		if c.x.ev[i].Buffer == buf {
			last = i
		}
	}
	req := fmt.Sprintf("buffer %s holds %s at the end", buf, memoryText(want))
	if last < 0 {
		c.fail("memory", buf, req, fmt.Sprintf("the application never read buffer %s back (no app_memory)", buf))
		return
	}
	if msg := c.x.wholeBufferMismatch(last, want); msg != "" {
		c.fail("memory", buf, req, msg, last)
	}
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

func (c *expectChecker) records(service string, want spec.Count) {
	var at []int
	for _, i := range c.x.types[ekRecord] {
		if c.x.ev[i].Service == trace.Service(service) {
			at = append(at, i)
		}
	}
	if !want.Holds(uint64(len(at))) {
		c.fail("records", "", fmt.Sprintf("%s %s records over the run", want, service), fmt.Sprintf("the run delivered %d %s records", len(at), service), at...)
	}
}

// status: every matching api or local call returned the status, where
// the expectation narrows it to a dispatch, a callback and a pass.
// Contexts are named by the spec and numbered 1.. in the order of
// spec.contexts.
func (c *expectChecker) status(st spec.StatusExpect) {
	req := fmt.Sprintf("%s returns %s", st.Call, st.Status)
	where, scope, ok := c.statusScope(st)
	if !ok {
		return
	}
	if scope != "" {
		req += " " + scope
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
		req += " for context " + st.Context
		id, ok := c.contextID(st.Context)
		if !ok {
			c.fail("statuses", "", req, fmt.Sprintf("the spec has no context %q", st.Context))
			return
		}
		ctx = id
	}
	var matched, wrong []int
	for _, i := range c.x.ofType(typ) {
		e := &c.x.ev[i]
		if e.Call != call || (haveCtx && e.Context != ctx) || !where(e) {
			continue
		}
		matched = append(matched, i)
		if !e.Status.Is(trace.Status(st.Status)) {
			wrong = append(wrong, i)
		}
	}
	switch {
	case len(matched) == 0:
		c.fail("statuses", "", req, "no such call is in the trace")
	case len(wrong) > 0:
		c.fail("statuses", "", req, fmt.Sprintf("%d of %d calls returned otherwise (first: %s)", len(wrong), len(matched), c.x.ev[wrong[0]].Status), wrong...)
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

func (c *expectChecker) warning(code string) {
	var at []int
	for _, i := range c.x.types[ekWarning] {
		if c.x.ev[i].Code == trace.WarningCode(code) {
			at = append(at, i)
		}
	}
	if len(at) != 1 {
		c.fail("warnings", "", fmt.Sprintf("warning %s is printed once", code), fmt.Sprintf("it was printed %d times", len(at)), at...)
	}
}

func (c *expectChecker) noWarnings() {
	if ws := c.x.types[ekWarning]; len(ws) > 0 {
		var codes []string
		for _, i := range ws {
			codes = append(codes, string(c.x.ev[i].Code))
		}
		c.fail("no_warnings", "", "no warning is printed", "warnings were printed: "+strings.Join(codes, ", "), ws...)
	}
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

func (c *expectChecker) timestamps(mode string) {
	req := "kernel and record timestamps differ from pass to pass"
	if mode != "differ_per_pass" {
		c.fail("timestamps", "", req, fmt.Sprintf("unknown timestamps expectation %q", mode))
		return
	}
	replayed := false
	c.x.eachDispatch(func(d *dispatchView) {
		if !d.replayed() {
			return
		}
		replayed = true
		for _, v := range c.x.checkPassTimestamps(d) {
			c.fail("timestamps", v.Label, req, v.Message)
			c.vs[len(c.vs)-1].Events = v.Events
		}
	})
	if !replayed {
		c.fail("timestamps", "", req, "no dispatch was replayed, so no timestamps could differ")
	}
}
