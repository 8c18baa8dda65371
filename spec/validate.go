package spec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Validate checks the rules of the format that a schema cannot: names
// unique and referenced names present, kernel arities, value ranges. It
// checks what was written, before Defaults. Parse and Load call it with
// positions; called on a built Spec the errors have no line numbers.
func Validate(s Spec) error { return validate(s, nil) }

func validate(s Spec, pos positions) error {
	v := &validator{file: s.File, pos: pos, requires: s.Requires, s: s}
	v.spec(s)
	return v.errs.err()
}

// validator collects semantic errors and places them with the positions
// recorded while decoding.
type validator struct {
	file string
	pos  positions
	errs Errors

	agents, contexts, buffers map[string]bool
	dispatches                map[string]int
	byTool                    map[string]bool // dispatches the tool writes
	requires                  []string
	s                         Spec
}

func (v *validator) fail(path, msg string, allowed ...string) {
	p := v.at(path)
	v.errs = append(v.errs, &Error{File: v.file, Line: p.line, Col: p.col, Path: path, Msg: msg, Allowed: allowed})
}

// at is where path was written, or else its nearest written ancestor.
func (v *validator) at(path string) position {
	for path != "" {
		if p, ok := v.pos[path]; ok {
			return p
		}
		path = path[:max(strings.LastIndexAny(path, ".["), 0)]
	}
	return v.pos[""]
}

// written reports whether the spec text had path (false without text).
func (v *validator) written(path string) bool {
	_, ok := v.pos[path]
	return ok
}

func (v *validator) oneOf(path, what, val string, allowed []string) {
	if !slices.Contains(allowed, val) {
		v.fail(path, fmt.Sprintf("unknown %s %q", what, val), allowed...)
	}
}

// names checks a list's names: well formed and unique.
func (v *validator) name(path, what, name string, seen map[string]bool) {
	switch {
	case name == "":
		v.fail(path, what+" name must not be empty")
	case !namePattern.MatchString(name):
		v.fail(path, fmt.Sprintf("%s name %q: use %s", what, name, nameRule))
	case seen[name]:
		v.fail(path, fmt.Sprintf("%s name %q is used twice", what, name))
	}
	seen[name] = true
}

func (v *validator) ref(path, what, name string, known map[string]bool) {
	if !known[name] {
		v.fail(path, fmt.Sprintf("no %s named %q", what, name), sortedKeys(known)...)
	}
}

func (v *validator) dispatchRef(path, name string) {
	if base, k, ok := SplitRepetition(name); ok {
		v.repetitionRef(path, name, base, k)
		return
	}
	i, ok := v.dispatches[name]
	if !ok {
		v.fail(path, fmt.Sprintf("no dispatch named %q", name), sortedKeys(v.dispatches)...)
		return
	}
	if n := v.s.Application.Dispatches[i].Repeat; n > 0 {
		v.fail(path, fmt.Sprintf("dispatch %q repeats %d times and is no one dispatch: name one repetition, %s to %s",
			name, n, RepetitionLabel(name, 0), RepetitionLabel(name, n-1)))
	}
}

// repetitionRef is a reference to one repetition of a repeated dispatch
// (an expectation may name one, as the trace labels it).
func (v *validator) repetitionRef(path, label, base string, k uint64) {
	i, ok := v.dispatches[base]
	switch {
	case !ok:
		v.fail(path, fmt.Sprintf("no dispatch named %q (a label NAME#K names a repetition of a dispatch with repeat)", base), sortedKeys(v.dispatches)...)
	case v.s.Application.Dispatches[i].Repeat == 0:
		v.fail(path, fmt.Sprintf("%q names a repetition, but dispatch %s has no repeat: name it %s", label, base, base))
	case k >= v.s.Application.Dispatches[i].Repeat:
		n := v.s.Application.Dispatches[i].Repeat
		v.fail(path, fmt.Sprintf("dispatch %s repeats %d times: its repetitions are %s to %s", base, n, RepetitionLabel(base, 0), RepetitionLabel(base, n-1)))
	}
}

// dispatchIndex is the place in application.dispatches of the dispatch a
// reference names: a repetition's is its repeated dispatch's.
func (v *validator) dispatchIndex(name string) (int, bool) {
	if base, _, ok := SplitRepetition(name); ok {
		name = base
	}
	i, ok := v.dispatches[name]
	return i, ok
}

// positive rejects a written 0 where 0 would be taken as "default".
func (v *validator) positive(path string, n int64) {
	if n < 0 || (n == 0 && v.written(path)) {
		v.fail(path, fmt.Sprintf("must be at least 1, got %d (leave it out for the default)", n))
	}
}

func (v *validator) spec(s Spec) {
	if s.Version != Version {
		v.fail("version", fmt.Sprintf("version %d is not supported", s.Version), strconv.Itoa(Version))
	}
	if strings.TrimSpace(s.Name) == "" {
		v.fail("name", "must not be empty")
	}
	for i, r := range s.Rules {
		v.ruleID(fmt.Sprintf("rules[%d]", i), r)
	}
	for i, r := range s.Requires {
		v.oneOf(fmt.Sprintf("requires[%d]", i), "capability", r, Capabilities)
	}
	v.collectNames(s)
	for i, a := range s.Agents {
		p := fmt.Sprintf("agents[%d]", i)
		v.oneOf(p+".kind", "agent kind", a.Kind, AgentKinds)
		v.positive(p+".restore_fails_at", int64(min(a.RestoreFailsAt, 1)))
		if a.RestoreFailsAt > 0 {
			v.needs(p+".restore_fails_at", CapRestoreFailure)
		}
	}
	for i, c := range s.Contexts {
		v.context(fmt.Sprintf("contexts[%d]", i), c)
	}
	v.plan("tool.plan", s.Tool.Plan)
	for i, m := range s.Tool.Misuse {
		p := fmt.Sprintf("tool.misuse[%d]", i)
		v.oneOf(p+".call", "call", m.Call, MisuseCalls)
		v.ref(p+".context", "context", m.Context, v.contexts)
		v.oneOf(p+".in", "callback window", m.In, MisuseWindows)
	}
	for i, b := range s.Application.Buffers {
		v.buffer(fmt.Sprintf("application.buffers[%d]", i), b)
	}
	for i, d := range s.Application.Dispatches {
		v.dispatch(fmt.Sprintf("application.dispatches[%d]", i), d)
	}
	v.cycles(s.Application.Dispatches)
	v.lateBuffers(s)
	v.positive("limits.max_passes", int64(min(s.Limits.MaxPasses, 1)))
	v.expect(s.Expect)
	v.refuse(s) // refuse.go: what needs the whole spec
}

// collectNames records every declared name first, so references may
// point forward.
func (v *validator) collectNames(s Spec) {
	v.agents, v.contexts, v.buffers = map[string]bool{}, map[string]bool{}, map[string]bool{}
	v.dispatches = map[string]int{}
	if len(s.Agents) == 0 {
		v.fail("agents", "at least one agent is required")
	}
	for i, a := range s.Agents {
		v.name(fmt.Sprintf("agents[%d].name", i), "agent", a.Name, v.agents)
	}
	for i, c := range s.Contexts {
		v.name(fmt.Sprintf("contexts[%d].name", i), "context", c.Name, v.contexts)
	}
	for i, b := range s.Application.Buffers {
		v.name(fmt.Sprintf("application.buffers[%d].name", i), "buffer", b.Name, v.buffers)
	}
	if len(s.Application.Dispatches) == 0 {
		v.fail("application.dispatches", "at least one dispatch is required")
	}
	seen := map[string]bool{}
	v.byTool = map[string]bool{}
	for i, d := range s.Application.Dispatches {
		v.name(fmt.Sprintf("application.dispatches[%d].name", i), "dispatch", d.Name, seen)
		if _, dup := v.dispatches[d.Name]; !dup {
			v.dispatches[d.Name] = i
		}
		if d.ByTool {
			v.byTool[d.Name] = true
		}
	}
}

// needs fails path unless the spec requires the capability that what is
// written there asks of a target.
func (v *validator) needs(path, capability string) {
	if !slices.Contains(v.requires, capability) {
		v.fail(path, fmt.Sprintf("add %q to requires: a target must claim it to run this", capability))
	}
}

// appDispatchRef is a dispatch reference that the application itself
// acts on (after, during, stop_after, free_after, alloc_after): a dispatch
// the tool writes cannot be one.
func (v *validator) appDispatchRef(path, name string) {
	if base, _, ok := SplitRepetition(name); ok {
		v.fail(path, fmt.Sprintf("%q is one repetition of dispatch %s; nothing waits for a repetition or is tied to its end: list the dispatch out without repeat", name, base))
		return
	}
	if i, ok := v.dispatches[name]; ok && v.s.Application.Dispatches[i].Repeat > 0 {
		v.fail(path, fmt.Sprintf("dispatch %q repeats (repeat: %d); nothing waits for a repeated dispatch or is tied to its end: list the dispatch out without repeat", name, v.s.Application.Dispatches[i].Repeat))
		return
	}
	v.dispatchRef(path, name)
	if v.byTool[name] {
		v.fail(path, fmt.Sprintf("dispatch %q is written by the tool (by_tool); only tool.plan.actions and expect may name it", name))
	}
}

func (v *validator) ruleID(path, id string) {
	m := ruleID.FindStringSubmatch(id)
	switch {
	case m == nil:
		v.fail(path, fmt.Sprintf("rule ID %q: want FAMILY-N, e.g. PC-3", id))
	case !slices.Contains(RuleFamilies, m[1]):
		v.fail(path, fmt.Sprintf("rule ID %q: unknown family %s", id, m[1]), RuleFamilies...)
	}
}

func (v *validator) context(path string, c Context) {
	if c.StopAfter != "" || v.written(path+".stop_after") {
		v.appDispatchRef(path+".stop_after", c.StopAfter)
	}
	if kr := c.Services.KernelReplay; kr != nil {
		for i, op := range kr.Operations {
			v.oneOf(fmt.Sprintf("%s.services.kernel_replay.operations[%d]", path, i), "operation", op, ReplayOperations)
		}
	}
	if ec := c.Services.ExternalCorrelation; ec != nil {
		v.oneOf(path+".services.external_correlation.mode", "mode", ec.Mode, CorrelationModes)
	}
}

func (v *validator) plan(path string, p Plan) {
	if p.Passes != "" {
		if _, err := parsePasses(string(p.Passes)); err != nil {
			v.fail(path+".passes", fmt.Sprintf("passes %q is not a pass count", p.Passes), passesForms...)
		}
	}
	if c := p.Continue; c != nil {
		v.continuePolicy(path+".continue", *c)
	}
	for i, l := range p.Local {
		lp := fmt.Sprintf("%s.local[%d]", path, i)
		if l.Pass < -1 {
			v.fail(lp+".pass", fmt.Sprintf("pass %d: want a pass (0, 1, ...) or -1 for every pass", l.Pass))
		}
		for j, name := range l.Start {
			v.ref(fmt.Sprintf("%s.start[%d]", lp, j), "context", name, v.contexts)
		}
		for j, name := range l.Stop {
			v.ref(fmt.Sprintf("%s.stop[%d]", lp, j), "context", name, v.contexts)
		}
	}
	for i, c := range p.Collect {
		cp := fmt.Sprintf("%s.collect[%d]", path, i)
		if c.Pass < -1 {
			v.fail(cp+".pass", fmt.Sprintf("pass %d: want a pass (0, 1, ...) or -1 for every pass", c.Pass))
		}
		for j, name := range c.Contexts {
			v.ref(fmt.Sprintf("%s.contexts[%d]", cp, j), "context", name, v.contexts)
		}
	}
	for i, a := range p.Actions {
		v.action(fmt.Sprintf("%s.actions[%d]", path, i), a)
	}
}

func (v *validator) action(path string, a Action) {
	v.needs(path, CapToolActions)
	v.oneOf(path+".in", "callback", a.In, ActionWindows)
	v.oneOf(path+".call", "call", a.Call, ActionCalls)
	switch {
	case a.Pass < -1:
		v.fail(path+".pass", fmt.Sprintf("pass %d: want a pass (0, 1, ...) or -1 for every pass", a.Pass))
	case v.written(path+".pass") && !inPass(a.In) && a.In != WindowRecord:
		v.fail(path+".pass", "a pass is only meaningful in PASS_ENTER, PASS_EXIT and RECORD")
	}
	switch a.Call {
	case ActionStartContext, ActionStopContext:
		v.ref(path+".context", "context", a.Context, v.contexts)
		if a.Dispatch != "" || v.written(path+".dispatch") {
			v.fail(path+".dispatch", a.Call+" names a context, not a dispatch")
		}
	case ActionDispatch:
		if base, _, ok := SplitRepetition(a.Dispatch); ok {
			v.fail(path+".dispatch", fmt.Sprintf("%q is a repetition of the application's dispatch %s; the tool writes a by_tool dispatch, named as listed", a.Dispatch, base))
			break
		}
		v.dispatchRef(path+".dispatch", a.Dispatch)
		if _, ok := v.dispatches[a.Dispatch]; ok && !v.byTool[a.Dispatch] {
			v.fail(path+".dispatch", fmt.Sprintf("dispatch %q is the application's; mark it by_tool: true for the tool to write it", a.Dispatch))
		}
		if a.Context != "" || v.written(path+".context") {
			v.fail(path+".context", "dispatch names a dispatch, not a context")
		}
	case ActionFree, ActionAlloc:
		v.memoryAction(path, a)
	}
	if a.Buffer != "" && a.Call != ActionFree && a.Call != ActionAlloc {
		v.fail(path+".buffer", a.Call+" names no buffer")
	}
}

// memoryAction: the tool frees a buffer, or allocates a by_tool one, from
// a callback (MEM-4: a region freed or reallocated during the loop). Each
// happens once, so it names one pass; the buffer is no dispatch's
// argument, since a kernel could not use memory that comes and goes under
// it.
func (v *validator) memoryAction(path string, a Action) {
	v.needs(path, CapMemoryActions)
	v.ref(path+".buffer", "buffer", a.Buffer, v.buffers)
	if a.Context != "" || a.Dispatch != "" || v.written(path+".context") || v.written(path+".dispatch") {
		v.fail(path, a.Call+" names a buffer, not a context or a dispatch")
	}
	if a.Pass == -1 {
		v.fail(path+".pass", a.Call+" happens once: name one pass")
	}
	for _, b := range v.s.Application.Buffers {
		if b.Name != a.Buffer {
			continue
		}
		switch {
		case a.Call == ActionAlloc && !b.ByTool:
			v.fail(path+".buffer", fmt.Sprintf("buffer %q is allocated by the application; mark it by_tool: true for the tool to allocate it", b.Name))
		case a.Call == ActionFree && b.FreeAfter != "":
			v.fail(path+".buffer", fmt.Sprintf("buffer %q is freed after %s already", b.Name, b.FreeAfter))
		}
		for i, d := range v.s.Application.Dispatches {
			if slices.Contains(d.Args, b.Name) {
				v.fail(fmt.Sprintf("application.dispatches[%d].args", i), fmt.Sprintf("buffer %s is freed or allocated by the tool from a callback; no dispatch may use it", b.Name))
			}
		}
		if _, checked := v.s.Expect.Memory[b.Name]; checked && a.Call == ActionFree {
			v.fail("expect.memory."+b.Name, fmt.Sprintf("buffer %s is freed by the tool; nothing reads it at the end", b.Name))
		}
	}
}

// toolAllocates reports whether some plan's action allocates buffer name.
func (v *validator) toolAllocates(name string) bool {
	for _, p := range v.plans() {
		for _, a := range p.Actions {
			if a.Call == ActionAlloc && a.Buffer == name {
				return true
			}
		}
	}
	return false
}

// plans are the tool's plan and every dispatch's own.
func (v *validator) plans() []Plan {
	plans := []Plan{v.s.Tool.Plan}
	for _, d := range v.s.Application.Dispatches {
		if d.Plan != nil {
			plans = append(plans, *d.Plan)
		}
	}
	return plans
}

// toolWrites reports whether some plan's action writes dispatch name.
func (v *validator) toolWrites(name string) bool {
	plans := []Plan{v.s.Tool.Plan}
	for _, d := range v.s.Application.Dispatches {
		if d.Plan != nil {
			plans = append(plans, *d.Plan)
		}
	}
	for _, p := range plans {
		for _, a := range p.Actions {
			if a.Call == ActionDispatch && a.Dispatch == name {
				return true
			}
		}
	}
	return false
}

var continueKeys = []string{"stop_after", "always", "converge"}

func (v *validator) continuePolicy(path string, c ContinuePolicy) {
	if !c.Always && v.written(path+".always") {
		v.fail(path+".always", "always: false is not a policy; write always: true or leave it out")
		return
	}
	set := 0
	for _, on := range []bool{c.StopAfter != nil, c.Always, c.Converge != nil} {
		if on {
			set++
		}
	}
	if set != 1 {
		v.fail(path, fmt.Sprintf("set exactly one policy, not %d", set), continueKeys...)
	}
	if cv := c.Converge; cv != nil {
		if cv.AtMost < 1 {
			v.fail(path+".converge.at_most", "must be at least 1: the fallback bound of the loop")
		}
		if cv.Counter == "" {
			v.fail(path+".converge.counter", "must name a counter")
		}
	}
}

func (v *validator) buffer(path string, b Buffer) {
	v.ref(path+".agent", "agent", b.Agent, v.agents)
	if b.Kind != "" || v.written(path+".kind") {
		v.oneOf(path+".kind", "buffer kind", b.Kind, BufferKinds)
	}
	if b.Elements == 0 || b.Elements > MaxElements {
		v.fail(path+".elements", fmt.Sprintf("%d elements: want 1 to %d", b.Elements, MaxElements))
	}
	if uint64(len(b.Values)) > b.Elements {
		v.fail(path+".values", fmt.Sprintf("%d values for %d elements", len(b.Values), b.Elements))
	}
	if b.FreeAfter != "" || v.written(path+".free_after") {
		v.appDispatchRef(path+".free_after", b.FreeAfter)
	}
	if b.AllocAfter != "" || v.written(path+".alloc_after") {
		v.appDispatchRef(path+".alloc_after", b.AllocAfter)
		if b.FreeAfter != "" && b.FreeAfter == b.AllocAfter {
			v.fail(path+".free_after", fmt.Sprintf("freed after %s, the dispatch it is allocated after", b.FreeAfter))
		}
	}
	switch {
	case b.ByTool:
		for _, k := range []string{"free_after", "alloc_after"} {
			if v.written(path + "." + k) {
				v.fail(path+"."+k, "a by_tool buffer is allocated by the tool from a callback; "+k+" does not apply")
			}
		}
		if v.pos == nil && (b.FreeAfter != "" || b.AllocAfter != "") {
			v.fail(path, "a by_tool buffer takes no free_after or alloc_after")
		}
		if !v.toolAllocates(b.Name) {
			v.fail(path+".by_tool", fmt.Sprintf("no tool.plan.actions entry allocates buffer %q", b.Name))
		}
	case v.written(path + ".by_tool"):
		v.fail(path+".by_tool", "by_tool: false is the default; leave it out")
	}
}

// lateBuffers checks that a buffer allocated after dispatch A is used only
// by dispatches that surely start later: listed after A on A's thread, or
// waiting for A with after.
func (v *validator) lateBuffers(s Spec) {
	ds := s.Application.Dispatches
	for _, b := range s.Application.Buffers {
		ai, ok := v.dispatches[b.AllocAfter]
		if b.AllocAfter == "" || !ok {
			continue
		}
		a := ds[ai]
		for i, d := range ds {
			if !slices.Contains(d.Args, b.Name) {
				continue
			}
			later := (i > ai && threadOf(d) == threadOf(a) && !d.ByTool) || d.After == a.Name
			if !later {
				v.fail(fmt.Sprintf("application.dispatches[%d].args", i),
					fmt.Sprintf("buffer %s does not exist until %s has completed; run %s after it on its thread, or with after: %s", b.Name, a.Name, d.Name, a.Name))
			}
		}
	}
}

func threadOf(d Dispatch) uint64 { return max(d.Thread, DefaultThread) }

func (v *validator) dispatch(path string, d Dispatch) {
	k, known := LookupKernel(d.Kernel)
	if !known {
		v.fail(path+".kernel", fmt.Sprintf("unknown kernel %q", d.Kernel), kernelNames()...)
	}
	v.ref(path+".agent", "agent", d.Agent, v.agents)
	for i, a := range d.Args {
		v.ref(fmt.Sprintf("%s.args[%d]", path, i), "buffer", a, v.buffers)
	}
	if known && len(d.Args) != k.Buffers {
		v.fail(path+".args", fmt.Sprintf("kernel %s takes %d buffer(s), got %d", k.Name, k.Buffers, len(d.Args)))
	}
	if known && !k.Scalar && (d.Scalar != 0 || v.written(path+".scalar")) {
		v.fail(path+".scalar", fmt.Sprintf("kernel %s takes no scalar", k.Name))
	}
	if d.Queue == "" && v.written(path+".queue") {
		v.fail(path+".queue", "must not be empty (leave it out for q0)")
	}
	v.positive(path+".thread", int64(min(d.Thread, 1)))
	v.positive(path+".grid", int64(d.Grid))
	v.positive(path+".workgroup", int64(d.Workgroup))
	v.positive(path+".packets", int64(d.Packets))
	v.positive(path+".kernel_packets", int64(d.KernelPackets))
	if d.KernelPackets > 1 && d.Packets > 0 && d.KernelPackets > d.Packets {
		v.fail(path+".kernel_packets", fmt.Sprintf("%d kernel packets in a submission of %d packets", d.KernelPackets, d.Packets))
	}
	if d.BarriersBetween {
		if d.KernelPackets < 2 {
			v.fail(path+".barriers_between", "needs kernel_packets of at least 2: a barrier goes between two kernel packets")
		} else if need := 2*d.KernelPackets - 1; d.Packets > 0 && d.Packets < need {
			v.fail(path+".packets", fmt.Sprintf("%d kernel packets with a barrier between each two make %d packets, more than %d", d.KernelPackets, need, d.Packets))
		}
	} else if v.written(path + ".barriers_between") {
		v.fail(path+".barriers_between", "barriers_between: false is the default; leave it out")
	}
	if d.Plan != nil {
		v.plan(path+".plan", *d.Plan)
	}
	v.repeat(path, d)
	if d.ByTool {
		v.toolDispatch(path, d)
	} else if !d.ByTool && v.written(path+".by_tool") {
		v.fail(path+".by_tool", "by_tool: false is the default; leave it out")
	}
	if d.During != nil {
		v.appDispatchRef(path+".during.dispatch", d.During.Dispatch)
		if d.During.Dispatch == d.Name {
			v.fail(path+".during.dispatch", "a dispatch cannot start during itself")
		}
		v.passesSeen(path + ".during")
	}
	if d.After != "" || v.written(path+".after") {
		v.appDispatchRef(path+".after", d.After)
		if d.After == d.Name {
			v.fail(path+".after", "a dispatch cannot start after itself")
		}
	}
}

// repeat: a repeated dispatch is submitted by the application, in order
// on its thread, and has a meaning only where each repetition can be an
// ordinary dispatch of its own.
func (v *validator) repeat(path string, d Dispatch) {
	v.positive(path+".repeat", int64(min(d.Repeat, 1)))
	if d.Repeat == 0 {
		return
	}
	if d.ByTool {
		v.fail(path+".repeat", "a by_tool dispatch is written by the tool, once for each action that names it; repeat does not apply")
	}
	if d.During != nil {
		v.fail(path+".repeat", "a repeated dispatch cannot start during a pass: the pass comes once and the repetitions one after another; list the dispatch that starts during it without repeat")
	}
	if d.Repeat > MaxRepeat {
		v.fail(path+".repeat", fmt.Sprintf("repeat %d: want at most %d", d.Repeat, uint64(MaxRepeat)))
	}
}

// MaxRepeat bounds a dispatch's repeat: far beyond any run (the memory
// budget refuses much less), it keeps every count of the spec's
// dispatches within 63 bits.
const MaxRepeat = 1 << 40

// toolDispatch: a dispatch the tool writes from a callback has no life of
// its own in the application: no thread, no waiting, one kernel packet. It
// is a replay candidate like any other (MEM-6, clarified 2026-12-01), so it
// may have a plan of its own.
func (v *validator) toolDispatch(path string, d Dispatch) {
	for _, k := range []string{"thread", "after", "during", "packets", "kernel_packets", "barriers_between", "graph"} {
		if v.written(path + "." + k) {
			v.fail(path+"."+k, "a by_tool dispatch is written by the tool from a callback; "+k+" does not apply")
		}
	}
	if v.pos == nil && (d.Thread != 0 || d.After != "" || d.During != nil || d.Packets > 1 || d.KernelPackets > 1 || d.Graph) {
		v.fail(path, "a by_tool dispatch takes no thread, after, during, packets, kernel_packets or graph")
	}
	if !v.toolWrites(d.Name) {
		v.fail(path+".by_tool", fmt.Sprintf("no tool.plan.actions entry writes dispatch %q", d.Name))
	}
}

// cycles finds dispatches that wait on each other through during/after:
// such a spec could never start.
func (v *validator) cycles(ds []Dispatch) {
	next := func(d Dispatch) []int {
		var out []int
		for _, name := range []string{d.After, duringOf(d)} {
			if j, ok := v.dispatches[name]; ok && name != d.Name {
				out = append(out, j)
			}
		}
		return out
	}
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, len(ds))
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = active
		stack = append(stack, i)
		for _, j := range next(ds[i]) {
			switch state[j] {
			case unseen:
				visit(j)
			case active:
				start := slices.Index(stack, j)
				var names []string
				for _, k := range stack[start:] {
					names = append(names, ds[k].Name)
				}
				names = append(names, ds[j].Name)
				v.fail(fmt.Sprintf("application.dispatches[%d]", i),
					"during/after wait in a cycle: "+strings.Join(names, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
	}
	for i := range ds {
		if state[i] == unseen {
			visit(i)
		}
	}
}

func duringOf(d Dispatch) string {
	if d.During == nil {
		return ""
	}
	return d.During.Dispatch
}

func (v *validator) expect(e Expect) {
	for _, k := range sortedKeys(e.Passes) {
		v.dispatchRef("expect.passes."+k, k)
	}
	for _, k := range sortedKeys(e.ContinueConsulted) {
		v.dispatchRef("expect.continue_consulted."+k, k)
	}
	for _, k := range sortedKeys(e.Completions) {
		v.dispatchRef("expect.completions."+k, k)
	}
	for _, k := range sortedKeys(e.Memory) {
		v.ref("expect.memory."+k, "buffer", k, v.buffers)
		if m := e.Memory[k]; m.All == nil && m.Values == nil {
			v.fail("expect.memory."+k, "say what the buffer holds", "all", "values")
		}
	}
	for _, k := range sortedKeys(e.Records) {
		v.oneOf("expect.records."+k, "service", k, ServiceNames)
	}
	for i, s := range e.Statuses {
		p := fmt.Sprintf("expect.statuses[%d]", i)
		if s.Context != "" || v.written(p+".context") {
			v.ref(p+".context", "context", s.Context, v.contexts)
		}
		if s.Dispatch != "" || v.written(p+".dispatch") {
			v.dispatchRef(p+".dispatch", s.Dispatch)
		}
		if s.In != "" || v.written(p+".in") {
			v.oneOf(p+".in", "callback", s.In, CallbackWindows)
		}
		if s.Pass != nil && !inPass(s.In) {
			v.fail(p+".pass", "a pass narrows in: PASS_ENTER or PASS_EXIT; say which")
		}
	}
	v.expectMore(e)
	for i, w := range e.Warnings {
		v.oneOf(fmt.Sprintf("expect.warnings[%d]", i), "warning code", w, WarningCodes)
	}
	if e.NoWarnings && len(e.Warnings) > 0 {
		v.fail("expect.no_warnings", "no_warnings contradicts the warnings listed")
	}
	for i, d := range e.NeverEnds {
		v.dispatchRef(fmt.Sprintf("expect.never_ends[%d]", i), d)
	}
	if e.Timestamps != "" || v.written("expect.timestamps") {
		v.oneOf("expect.timestamps", "timestamp check", e.Timestamps, TimestampChecks)
	}
	for i, r := range e.Violations {
		v.ruleID(fmt.Sprintf("expect.violations[%d]", i), r)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// expectMore checks the expectations on the rules' own objects.
func (v *validator) expectMore(e Expect) {
	for _, d := range sortedKeys(e.MemoryAfter) {
		p := "expect.memory_after." + d
		v.dispatchRef(p, d)
		if v.byTool[d] {
			v.fail(p, fmt.Sprintf("the application reads back only after its own dispatches; %s is the tool's", d))
		}
		var args []string
		if i, ok := v.dispatchIndex(d); ok {
			args = v.s.Application.Dispatches[i].Args
		}
		for _, b := range sortedKeys(e.MemoryAfter[d]) {
			bp := p + "." + b
			v.ref(bp, "buffer", b, v.buffers)
			if v.buffers[b] && args != nil && !slices.Contains(args, b) {
				v.fail(bp, fmt.Sprintf("the application reads back only the buffers of %s", d), args...)
			}
			if m := e.MemoryAfter[d][b]; m.All == nil && m.Values == nil {
				v.fail(bp, "say what the buffer holds", "all", "values")
			}
		}
	}
	for i, u := range e.UserData {
		p := fmt.Sprintf("expect.user_data[%d]", i)
		v.dispatchRef(p+".dispatch", u.Dispatch)
		v.oneOf(p+".at", "point", u.At, UserDataPoints)
		if u.Pass != nil && !inPass(u.At) && u.At != PointContinue {
			v.fail(p+".pass", "a pass narrows PASS_ENTER, PASS_EXIT and continue only")
		}
	}
	for _, d := range sortedKeys(e.Sequence) {
		p := "expect.sequence." + d
		v.dispatchRef(p, d)
		if len(e.Sequence[d]) == 0 {
			v.fail(p, "list the steps: an empty sequence says nothing happened, which no dispatch can show")
		}
		for i, st := range e.Sequence[d] {
			sp := fmt.Sprintf("%s[%d]", p, i)
			step, err := ParseStep(st)
			if err != nil {
				ae := err.(*allowedError)
				v.fail(sp, ae.msg, ae.allowed...)
				continue
			}
			switch step.Kind {
			case StepLocalStart, StepLocalStop, StepStartContext, StepStopContext:
				v.ref(sp, "context", step.Name, v.contexts)
			case StepDispatch:
				v.dispatchRef(sp, step.Name)
			}
		}
	}
	for _, d := range sortedKeys(e.DispatchIDs) {
		p := "expect.dispatch_ids." + d
		v.dispatchRef(p, d)
		if len(e.DispatchIDs[d]) == 0 {
			v.fail(p, "list the dispatch's ids (one per kernel packet)")
		}
		for i, id := range e.DispatchIDs[d] {
			if id == 0 {
				v.fail(fmt.Sprintf("%s[%d]", p, i), "dispatch ids start at 1")
			}
		}
	}
	for _, d := range sortedKeys(e.Correlation) {
		p := "expect.correlation." + d
		v.dispatchRef(p, d)
		c := e.Correlation[d]
		if len(c.External) == 0 && !c.SameInternal {
			v.fail(p, "say what the ids are", "external", "same_internal")
		}
		if !c.SameInternal && v.written(p+".same_internal") {
			v.fail(p+".same_internal", "same_internal: false states nothing; leave it out")
		}
	}
	for i, r := range e.RecordCounts {
		p := fmt.Sprintf("expect.record_counts[%d]", i)
		v.oneOf(p+".service", "service", r.Service, ServiceNames)
		if r.Dispatch != "" || v.written(p+".dispatch") {
			v.dispatchRef(p+".dispatch", r.Dispatch)
		}
		if r.Context != "" || v.written(p+".context") {
			v.ref(p+".context", "context", r.Context, v.contexts)
		}
		if r.Pass != nil && r.Dispatch == "" {
			v.fail(p+".pass", "a pass belongs to a dispatch; name it")
		}
	}
	for _, d := range sortedKeys(e.Runs) {
		v.dispatchRef("expect.runs."+d, d)
	}
	for i, pe := range e.Payload {
		p := fmt.Sprintf("expect.payload[%d]", i)
		v.dispatchRef(p+".dispatch", pe.Dispatch)
		v.oneOf(p+".at", "callback", pe.At, CallbackWindows)
		if pe.Pass != nil && !inPass(pe.At) {
			v.fail(p+".pass", "a pass narrows PASS_ENTER and PASS_EXIT only")
		}
		for j, m := range pe.Members {
			v.oneOf(fmt.Sprintf("%s.members[%d]", p, j), "payload member", m, PayloadMembers)
		}
		if pe.Members == nil && pe.Size == nil {
			v.fail(p, "say what the payload held", "members", "size")
		}
	}
	for i, ce := range e.Counters {
		p := fmt.Sprintf("expect.counters[%d]", i)
		v.dispatchRef(p+".dispatch", ce.Dispatch)
		if ce.Context != "" || v.written(p+".context") {
			v.ref(p+".context", "context", ce.Context, v.contexts)
		}
		if len(ce.Names) == 0 && len(ce.Values) == 0 {
			v.fail(p+".names", "name the counters (record_counts states that a pass has none), or give their values (values: {NAME: COUNT})")
		}
		for _, name := range sortedKeys(ce.Values) {
			if name == "" {
				v.fail(p+".values", "a counter name is empty")
			}
		}
	}
	for _, d := range sortedKeys(e.Saved) {
		p := "expect.saved." + d
		v.dispatchRef(p, d)
		seen := map[string]bool{}
		for i, b := range e.Saved[d] {
			v.ref(fmt.Sprintf("%s[%d]", p, i), "buffer", b, v.buffers)
			if seen[b] {
				v.fail(fmt.Sprintf("%s[%d]", p, i), fmt.Sprintf("buffer %s is listed twice", b))
			}
			seen[b] = true
		}
	}
	failing := false
	for _, a := range v.s.Agents {
		failing = failing || a.RestoreFailsAt > 0
	}
	for i, d := range e.Aborts {
		p := fmt.Sprintf("expect.aborts[%d]", i)
		v.dispatchRef(p, d)
		if !failing {
			v.fail(p, "nothing in this spec can abort the run: give an agent restore_fails_at")
		}
	}
}

// inPass reports whether a spec's callback name is a PASS callback.
func inPass(window string) bool { return window == WindowPassEnter || window == WindowPassExit }
