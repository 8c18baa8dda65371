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
	v := &validator{file: s.File, pos: pos}
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
	if _, ok := v.dispatches[name]; !ok {
		v.fail(path, fmt.Sprintf("no dispatch named %q", name), sortedKeys(v.dispatches)...)
	}
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
		v.oneOf(fmt.Sprintf("agents[%d].kind", i), "agent kind", a.Kind, AgentKinds)
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
	for i, d := range s.Application.Dispatches {
		v.name(fmt.Sprintf("application.dispatches[%d].name", i), "dispatch", d.Name, seen)
		if _, dup := v.dispatches[d.Name]; !dup {
			v.dispatches[d.Name] = i
		}
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
		v.dispatchRef(path+".stop_after", c.StopAfter)
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
		v.dispatchRef(path+".free_after", b.FreeAfter)
	}
}

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
	if d.Plan != nil {
		v.plan(path+".plan", *d.Plan)
	}
	if d.During != nil {
		v.dispatchRef(path+".during.dispatch", d.During.Dispatch)
		if d.During.Dispatch == d.Name {
			v.fail(path+".during.dispatch", "a dispatch cannot start during itself")
		}
	}
	if d.After != "" || v.written(path+".after") {
		v.dispatchRef(path+".after", d.After)
		if d.After == d.Name {
			v.fail(path+".after", "a dispatch cannot start after itself")
		}
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
	}
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
