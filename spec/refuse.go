package spec

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file holds the refusals that need the whole spec: names the
// format's grammar accepts but nothing can honour (a counter no agent
// has, a status no call returns), values a 32-bit element cannot hold,
// waits that can never end, buffers used after they are freed, pass counts
// the budget would cut off, and capabilities used but not required. Each
// would otherwise surface at run time as a hang or a failure blamed on the
// implementation.

// Value range of one 32-bit element as specs write it: signed or unsigned.
const (
	minElement = math.MinInt32
	maxElement = math.MaxUint32
)

// Capabilities a spec's contents imply (Needs); a declared requires: list
// is checked against these, and only these.
const (
	CapIndefinite     = "indefinite"
	CapLocalContexts  = "local-contexts"
	CapConcurrency    = "concurrency"
	CapPCSampling     = "pc-sampling"
	CapSPM            = "spm"
	CapThreadTrace    = "thread-trace"
	CapDeviceCounting = "device-counting"
	CapMultiAgent     = "multi-agent"
	CapCounters       = "counters"
	CapSnapshotFail   = "snapshot-failure"
	CapNvidiaCounters = "nvidia-counters"
)

// counterCaps is the capability counter collection needs on an agent kind
// whose counters are not the catalogue's; the others need CapCounters.
var counterCaps = map[string]string{"nvidia": CapNvidiaCounters}

// Needs lists the capabilities a target must claim to run s: its
// requires: list when it has one, else what its contents use (an
// indefinite loop, local toggles, several threads or agents, services,
// a snapshot limit). A target that lacks one skips the spec.
func Needs(s Spec) []string {
	if len(s.Requires) > 0 {
		return s.Requires
	}
	var out []string
	for _, u := range uses(s) {
		if !slices.Contains(out, u.cap) {
			out = append(out, u.cap)
		}
	}
	return out
}

// use is one place of a spec that needs a capability.
type use struct{ cap, path string }

// uses lists where s needs each inferred capability, first use first.
func uses(s Spec) []use {
	var out []use
	add := func(c, path string) { out = append(out, use{c, path}) }
	for _, p := range plansInUse(s) {
		if n, ok := p.plan.Passes.Number(); ok && n == 0 && p.plan.Continue != nil {
			add(CapIndefinite, p.path+".passes")
		}
		if len(p.plan.Local) > 0 {
			add(CapLocalContexts, p.path+".local")
		}
		if len(p.plan.Collect) > 0 { // carried out with local calls in PASS ENTER
			add(CapLocalContexts, p.path+".collect")
		}
	}
	if len(s.Tool.Misuse) > 0 {
		add(CapLocalContexts, "tool.misuse")
	}
	for i, d := range s.Application.Dispatches {
		if d.Repeat > 0 {
			add(CapRepeat, fmt.Sprintf("application.dispatches[%d].repeat", i))
		}
	}
	threads := map[uint64]bool{}
	for i, d := range s.Application.Dispatches {
		if d.ByTool {
			continue // written by the tool from a callback: no thread of its own
		}
		threads[max(d.Thread, DefaultThread)] = true
		if len(threads) == 2 {
			add(CapConcurrency, fmt.Sprintf("application.dispatches[%d].thread", i))
		}
	}
	if len(s.Agents) > 1 {
		add(CapMultiAgent, "agents[1]")
	}
	for i, a := range s.Agents {
		if a.SnapshotLimit > 0 {
			add(CapSnapshotFail, fmt.Sprintf("agents[%d].snapshot_limit", i))
		}
	}
	counters := CapCounters
	for _, a := range s.Agents {
		if c, ok := counterCaps[a.Kind]; ok {
			counters = c
		}
	}
	for i, c := range s.Contexts {
		p := fmt.Sprintf("contexts[%d].services.", i)
		sv := c.Services
		for _, x := range []struct {
			on   bool
			cap  string
			name string
		}{
			{sv.CounterCollection != nil, counters, "counter_collection"},
			{sv.DeviceCounting != nil, CapDeviceCounting, "device_counting"},
			{sv.PCSampling != nil, CapPCSampling, "pc_sampling"},
			{sv.SPM != nil, CapSPM, "spm"},
			{sv.ThreadTrace != nil, CapThreadTrace, "thread_trace"},
		} {
			if x.on {
				add(x.cap, p+x.name)
			}
		}
	}
	return out
}

// planInUse is a plan some dispatch runs under, with where it is written.
type planInUse struct {
	plan      Plan
	path      string
	dispatchI int // -1 for the tool's plan
}

// plansInUse lists the tool's plan (when a dispatch runs under it) and
// every dispatch's own plan.
func plansInUse(s Spec) []planInUse {
	var out []planInUse
	toolUsed := false
	for i, d := range s.Application.Dispatches {
		if d.Plan != nil {
			out = append(out, planInUse{*d.Plan, fmt.Sprintf("application.dispatches[%d].plan", i), i})
		} else {
			toolUsed = true
		}
	}
	if toolUsed {
		out = append([]planInUse{{s.Tool.Plan, "tool.plan", -1}}, out...)
	}
	return out
}

// planOf is the plan dispatch d runs under.
func planOf(s Spec, d Dispatch) Plan {
	if d.Plan != nil {
		return *d.Plan
	}
	return s.Tool.Plan
}

// refuse runs every whole-spec refusal; validate calls it once.
func (v *validator) refuse(s Spec) {
	v.counters(s)
	v.statuses(s.Expect.Statuses)
	v.elementValues(s)
	v.budget(s)
	v.requirements(s)
	order := newOrder(s, v.dispatches)
	v.waits(s, order)
	v.useAfterFree(s, order)
	v.memory(s) // budget.go
}

// counters: every counter a context names, and a converge counter, must be
// in the catalogue of the spec's agent kinds, spelt as it is there.
func (v *validator) counters(s Spec) {
	// A counter the agent lacks is dropped by the tool (AGT-1) and is
	// fine; one that no kind has is a typo.
	for _, a := range s.Agents {
		if _, ok := CounterCatalogue[a.Kind]; !ok {
			return // agents whose counters only their target knows
		}
	}
	var kinds []string
	for k := range CounterCatalogue {
		kinds = append(kinds, k)
	}
	known, _ := KnownCounters(kinds) // sorted
	check := func(path, name string) {
		if slices.Contains(known, name) {
			return
		}
		msg := fmt.Sprintf("unknown counter %q", name)
		if up := strings.ToUpper(name); up != name && slices.Contains(known, up) {
			msg = fmt.Sprintf("unknown counter %q: counter names are upper case, write %s", name, up)
		}
		v.fail(path, msg, known...)
	}
	collected := map[string]bool{}
	for i, c := range s.Contexts {
		p := fmt.Sprintf("contexts[%d].services.", i)
		if cc := c.Services.CounterCollection; cc != nil {
			for j, name := range cc.Counters {
				check(fmt.Sprintf("%scounter_collection.counters[%d]", p, j), name)
				collected[name] = true
			}
		}
		if dc := c.Services.DeviceCounting; dc != nil {
			for j, name := range dc.Counters {
				check(fmt.Sprintf("%sdevice_counting.counters[%d]", p, j), name)
			}
		}
	}
	for _, p := range plansInUse(s) {
		cv := p.plan.Continue
		if cv == nil || cv.Converge == nil || cv.Converge.Counter == "" {
			continue
		}
		path := p.path + ".continue.converge.counter"
		name := cv.Converge.Counter
		switch {
		case !slices.Contains(known, name):
			check(path, name)
		case !collected[name]:
			v.fail(path, fmt.Sprintf("no context collects counter %s, so the loop could never see it converge: add it to a counter_collection's counters", name))
		}
	}
}

// statuses: expect.statuses names calls that exist and statuses they can
// return (with or without the ROCPROFILER_STATUS_ prefix).
func (v *validator) statuses(ss []StatusExpect) {
	for i, st := range ss {
		p := fmt.Sprintf("expect.statuses[%d]", i)
		v.oneOf(p+".call", "call", st.Call, StatusCalls)
		name := strings.TrimPrefix(st.Status, "ROCPROFILER_STATUS_")
		if slices.Contains(StatusNames, name) {
			continue
		}
		msg := fmt.Sprintf("unknown status %q", st.Status)
		if up := strings.ToUpper(name); slices.Contains(StatusNames, up) {
			msg += ": status names are upper case, write " + up
		}
		v.fail(p+".status", msg, StatusNames...)
	}
}

// elementValues: an element is 32 bits; a value outside what 32 bits hold
// would be silently truncated.
func (v *validator) elementValues(s Spec) {
	in := func(path string, x int64) {
		if x < minElement || x > maxElement {
			v.fail(path, fmt.Sprintf("%d does not fit in a 32-bit element: want %d to %d", x, int64(minElement), int64(maxElement)))
		}
	}
	for i, b := range s.Application.Buffers {
		p := fmt.Sprintf("application.buffers[%d]", i)
		in(p+".fill", b.Fill)
		for j, x := range b.Values {
			in(fmt.Sprintf("%s.values[%d]", p, j), x)
		}
	}
	for _, k := range sortedKeys(s.Expect.Memory) {
		m := s.Expect.Memory[k]
		if m.All != nil {
			in("expect.memory."+k+".all", *m.All)
		}
		for j, x := range m.Values {
			in(fmt.Sprintf("expect.memory.%s.values[%d]", k, j), x)
		}
	}
}

// budget: the pass budget (limits.max_passes) caps every loop, fixed ones
// too; a plan that asks for more passes than it allows would be cut off
// by the harness, not by the implementation.
func (v *validator) budget(s Spec) {
	limit := s.Limits.MaxPasses
	if limit == 0 {
		limit = DefaultMaxPasses
	}
	over := func(path string, n uint64, what string) {
		v.fail(path, fmt.Sprintf("%s %d passes, more than the pass budget limits.max_passes %d: raise limits.max_passes or ask for fewer", what, n, limit))
	}
	for _, p := range plansInUse(s) {
		n, fixed := p.plan.Passes.Number()
		if fixed && n > limit {
			over(p.path+".passes", n, "asks for")
		}
		c := p.plan.Continue
		if c == nil || !fixed || n != 0 {
			continue
		}
		switch {
		case c.StopAfter != nil && *c.StopAfter+1 > limit:
			over(p.path+".continue.stop_after", *c.StopAfter+1, "ends after")
		case c.Converge != nil && c.Converge.AtMost > limit:
			over(p.path+".continue.converge.at_most", c.Converge.AtMost, "may run")
		}
	}
}

// requirements: a written requires: list must name what the spec uses,
// else a target without it would run the spec and fail it. Naming more is
// allowed: the cases of a matrix share one list, and a spec may keep a
// target that lacks something from running it at all.
func (v *validator) requirements(s Spec) {
	if len(s.Requires) == 0 {
		return
	}
	used := uses(s)
	for _, u := range used {
		if !slices.Contains(s.Requires, u.cap) && !slices.ContainsFunc(used[:slices.Index(used, u)], func(o use) bool { return o.cap == u.cap }) {
			v.fail(u.path, fmt.Sprintf("uses %s: add %q to requires", u.cap, u.cap))
		}
	}
}

// order is how dispatches wait for each other: each thread runs its
// dispatches in the order listed, after waits for a completion, during
// for a start.
type order struct {
	s     Spec
	index map[string]int
	// waitsOn[i] are the dispatches whose start (or completion) i's start
	// needs: the previous one of its thread, after, during.
	waitsOn [][]int
	// waiters[j] are the dispatches whose start needs j (waitsOn reversed).
	waiters [][]int
	prev    []int // the previous dispatch of the same thread, or -1
	// completed memoizes completedBy.
	completed map[int]map[int]bool
}

func newOrder(s Spec, index map[string]int) *order {
	ds := s.Application.Dispatches
	o := &order{s: s, index: index, waitsOn: make([][]int, len(ds)), waiters: make([][]int, len(ds)),
		prev: make([]int, len(ds)), completed: map[int]map[int]bool{}}
	last := map[uint64]int{}
	for i, d := range ds {
		th := max(d.Thread, DefaultThread)
		o.prev[i] = -1
		if j, ok := last[th]; ok {
			o.prev[i] = j
			o.waitsOn[i] = append(o.waitsOn[i], j)
		}
		last[th] = i
		for _, name := range []string{d.After, duringOf(d)} {
			if j, ok := index[name]; ok && name != "" && j != i {
				o.waitsOn[i] = append(o.waitsOn[i], j)
			}
		}
	}
	for i, js := range o.waitsOn {
		for _, j := range js {
			o.waiters[j] = append(o.waiters[j], i)
		}
	}
	return o
}

// completedBy is the set of dispatches that start only once j has
// completed: the next one of j's thread, those with after: j, and
// everything that waits on those in turn.
func (o *order) completedBy(j int) map[int]bool {
	if m, ok := o.completed[j]; ok {
		return m
	}
	ds := o.s.Application.Dispatches
	out := map[int]bool{}
	var queue []int
	for _, x := range o.waiters[j] {
		if o.prev[x] == j || ds[x].After == ds[j].Name {
			if !out[x] {
				out[x] = true
				queue = append(queue, x)
			}
		}
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range o.waiters[x] {
			if !out[y] {
				out[y] = true
				queue = append(queue, y)
			}
		}
	}
	o.completed[j] = out
	return out
}

// circles are the groups of dispatches that wait on each other through a
// thread's order (strongly connected components with a thread edge
// inside; circles of after/during alone are reported by cycles).
func (o *order) circles() [][]int {
	n := len(o.waitsOn)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var connect func(v int)
	connect = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range o.waitsOn[v] {
			switch {
			case index[w] < 0:
				connect(w)
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		in := map[int]bool{}
		for _, w := range comp {
			in[w] = true
		}
		for _, w := range comp {
			if p := o.prev[w]; p >= 0 && in[p] && len(comp) > 1 {
				slices.Sort(comp)
				out = append(out, comp)
				return
			}
		}
	}
	for i := range n {
		if index[i] < 0 {
			connect(i)
		}
	}
	return out
}

// waits: a dispatch must be able to start. It cannot when its waits and
// its thread's order form a circle, when it waits to start during a pass
// of a dispatch that has completed by then, or during a pass that dispatch
// never runs. At run time such a spec would deadlock and blame the target.
func (v *validator) waits(s Spec, o *order) {
	ds := s.Application.Dispatches
	for _, c := range o.circles() {
		var names []string
		for _, k := range c {
			names = append(names, ds[k].Name)
		}
		v.fail(fmt.Sprintf("application.dispatches[%d]", c[0]), "can never start: "+strings.Join(names, ", ")+
			" wait on each other through after/during and their threads' order (a thread runs its dispatches in the order listed)")
	}
	for i, d := range ds {
		if d.During == nil {
			continue
		}
		j, ok := o.index[d.During.Dispatch]
		if !ok || j == i {
			continue
		}
		dp := fmt.Sprintf("application.dispatches[%d].during", i)
		if o.completedBy(j)[i] {
			v.fail(dp+".dispatch", fmt.Sprintf("%s has completed before %s can start (it is earlier on %s's thread, or waited for with after), so %s can never start during its pass %d",
				ds[j].Name, d.Name, d.Name, d.Name, d.During.Pass))
			continue
		}
		if n, why, known := passBound(s, ds[j]); known && d.During.Pass >= n {
			v.fail(dp+".pass", fmt.Sprintf("%s runs %s, so it is never in pass %d (passes count from 0): %s would wait for ever", ds[j].Name, why, d.During.Pass, d.Name))
		}
	}
}

// PassBound is the most passes dispatch d of s can run: 0 when it is not
// replayed, the fixed count (or less, by its continue policy), the
// counter groups of its agent, or for an indefinite loop what its policy
// or the pass budget allows. known is false where only a run can tell (a
// kind whose counters only its target knows; pass count 0 without
// continue, which runs once with a warning).
func PassBound(s Spec, d Dispatch) (n uint64, known bool) {
	n, _, known = passBound(s, d)
	return n, known
}

// passBound is PassBound with the reason, for messages.
func passBound(s Spec, d Dispatch) (uint64, string, bool) {
	replay := false
	for _, c := range s.Contexts {
		replay = replay || c.Services.KernelReplay != nil
	}
	if !replay {
		return 0, "no pass (no context configures kernel_replay)", true
	}
	p := planOf(s, d)
	limit := s.Limits.MaxPasses
	if limit == 0 {
		limit = DefaultMaxPasses
	}
	n, fixed := p.Passes.Number()
	switch {
	case p.Passes.Unset():
		return 0, "no pass (its plan leaves passes unset)", true
	case p.Passes == PassesGroups:
		var ctr []string
		for _, c := range s.Contexts {
			if c.Services.CounterCollection != nil {
				ctr = c.Services.CounterCollection.Counters
				break
			}
		}
		kind := ""
		for _, a := range s.Agents {
			if a.Name == d.Agent {
				kind = a.Kind
			}
		}
		g, ok := CounterGroupCount(kind, ctr)
		if !ok {
			return 0, "", false
		}
		n = uint64(max(g, 1))
	case fixed && n == 0 && p.Continue == nil:
		return 1, "", false // PC-6: runs once, with a warning
	case fixed && n == 0:
		n = limit
	}
	why := fmt.Sprintf("at most %d passes", n)
	if c := p.Continue; c != nil {
		switch {
		case c.StopAfter != nil && *c.StopAfter+1 < n:
			n, why = *c.StopAfter+1, fmt.Sprintf("at most %d passes (continue stops after pass %d)", *c.StopAfter+1, *c.StopAfter)
		case c.Converge != nil && c.Converge.AtMost < n:
			n, why = c.Converge.AtMost, fmt.Sprintf("at most %d passes (converge at_most)", c.Converge.AtMost)
		}
	}
	return n, why, true
}

// useAfterFree: a buffer freed after dispatch F cannot be used by a
// dispatch that surely starts after F has completed, nor read at the end.
func (v *validator) useAfterFree(s Spec, o *order) {
	ds := s.Application.Dispatches
	for bi, b := range s.Application.Buffers {
		f, ok := o.index[b.FreeAfter]
		if b.FreeAfter == "" || !ok {
			continue
		}
		for i, d := range ds {
			if i == f || !slices.Contains(d.Args, b.Name) {
				continue
			}
			if o.completedBy(f)[i] {
				v.fail(fmt.Sprintf("application.dispatches[%d].args", i), fmt.Sprintf("buffer %s is freed once %s has completed (application.buffers[%d].free_after), before %s starts: use after free",
					b.Name, b.FreeAfter, bi, d.Name))
			}
		}
		if _, ok := s.Expect.Memory[b.Name]; ok {
			v.fail("expect.memory."+b.Name, fmt.Sprintf("buffer %s is freed after %s, so the application cannot read it at the end: check it with a dispatch that uses it, or drop free_after", b.Name, b.FreeAfter))
		}
	}
}
