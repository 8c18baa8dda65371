// Package tracediff compares two traces of one spec, recorded by two
// implementations, modulo what may legitimately differ between them:
// clocks, counter values, where ids come from (dispatch, signal, queue and
// correlation ids are renumbered in order of appearance, agents and
// buffers named by the spec's names), the order in which threads
// interleave, and what the weaker of the two cannot observe (only the
// sources both traces report are compared). It reports the first
// divergence of each application dispatch with the rules the differing
// events touch.
package tracediff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/trace"
)

// Options say what else may differ.
type Options struct {
	// Traffic compares the runtime's memory traffic (mem_read, mem_write)
	// and the bytes a restore claims. Off by default: how much a restore
	// writes is the implementation's business (dirty pages or whole
	// buffers), so long as the oracles accept it on each side.
	Traffic bool

	splits bool // both traces record the tool's counter split
	// shared are buffers dispatches of several threads use, and racy the
	// dispatches that use one: what such a buffer holds depends on how
	// the threads interleave, so its contents are not compared.
	shared, racy map[string]bool
}

// Process names the events that belong to no dispatch: the tool's setup,
// the agents, allocations, warnings, the final read-backs. They are
// compared as a set, since threads may order them differently.
const Process = "(process)"

// Divergence is the first difference in one dispatch's events.
type Divergence struct {
	// Dispatch is the application's (or the tool's) dispatch label, or
	// Process.
	Dispatch string
	// Step is the 0-based position of the first difference in the
	// dispatch's compared events.
	Step int
	// A and B are the differing events, normalized ("" where that side
	// has no more events).
	A, B string
	// Before is the event both sides agree on just before the difference.
	Before string
	// Rules are the rules whose oracles read the differing events.
	Rules []string
}

// VerdictDiff is a rule the oracles judged differently on the two traces.
type VerdictDiff struct {
	Rule string
	A, B check.Verdict
}

// Report is what differs between two traces of one spec.
type Report struct {
	Spec string
	// Sources are the sources both traces report: what was compared.
	Sources []trace.Source
	// Dispatches are the groups compared, in order of first appearance.
	Dispatches  []string
	Divergences []Divergence
	Verdicts    []VerdictDiff
}

// Same reports whether nothing differs.
func (r Report) Same() bool { return len(r.Divergences) == 0 && len(r.Verdicts) == 0 }

// Compare compares trace a with trace b.
func Compare(a, b trace.Trace, opts Options) Report {
	r := Report{Spec: a.Header.Spec}
	for _, s := range trace.AllSources {
		if a.Header.Reports(s) && b.Header.Reports(s) {
			r.Sources = append(r.Sources, s)
		}
	}
	// Agents are named by the spec's names when both traces list them
	// (runtime events); else by their ids, on both sides alike.
	named := agentsListed(a) && agentsListed(b)
	// The tool's record of its counter split is optional (a port's tool
	// may not keep it, decision 7): compared only when both have it.
	opts.splits = recordsSplits(a) && recordsSplits(b)
	opts.shared, opts.racy = map[string]bool{}, map[string]bool{}
	for _, t := range []trace.Trace{a, b} {
		racyBuffers(t, opts.shared, opts.racy)
	}
	ga := normalize(a, r.Sources, opts, named)
	gb := normalize(b, r.Sources, opts, named)
	names := ga.order
	for _, n := range gb.order {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	r.Dispatches = names
	for _, n := range names {
		ea, eb := ga.events[n], gb.events[n]
		if n == Process {
			ea, eb = sortedLines(ea), sortedLines(eb)
		}
		if d, ok := firstDifference(n, ea, eb); ok {
			r.Divergences = append(r.Divergences, d)
		}
	}
	r.Verdicts = verdictDiffs(check.Judge(restrict(a, r.Sources, opts.splits)), check.Judge(restrict(b, r.Sources, opts.splits)))
	return r
}

// restrict keeps the events of the given sources and says so in the
// header, and the tool's counter split only when both traces record it,
// so that both traces are judged on what both could observe.
func restrict(t trace.Trace, sources []trace.Source, splits bool) trace.Trace {
	out := trace.Trace{Header: t.Header}
	out.Header.Sources = sources
	for _, e := range t.Events {
		if src, ok := e.Type.Source(); ok && slices.Contains(sources, src) {
			if e.Type == trace.PassCount && !splits {
				e.Groups, e.Context = nil, 0
			}
			out.Events = append(out.Events, e)
		}
	}
	return out
}

func verdictDiffs(a, b check.Judgement) []VerdictDiff {
	var out []VerdictDiff
	for _, ra := range a.Rules {
		rb, ok := b.Rule(ra.Rule)
		if ok && rb.Verdict != ra.Verdict {
			out = append(out, VerdictDiff{Rule: ra.Rule, A: ra.Verdict, B: rb.Verdict})
		}
	}
	return out
}

// event is one normalized event: its line and its type.
type event struct {
	line string
	typ  trace.Type
}

func sortedLines(es []event) []event {
	out := slices.Clone(es)
	sort.SliceStable(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

func firstDifference(name string, a, b []event) (Divergence, bool) {
	for i := 0; i < max(len(a), len(b)); i++ {
		var ea, eb event
		if i < len(a) {
			ea = a[i]
		}
		if i < len(b) {
			eb = b[i]
		}
		if ea.line == eb.line {
			continue
		}
		d := Divergence{Dispatch: name, Step: i, A: ea.line, B: eb.line}
		if i > 0 {
			d.Before = a[i-1].line
		}
		for _, t := range []trace.Type{ea.typ, eb.typ} {
			for _, id := range Touches[t] {
				if !slices.Contains(d.Rules, id) {
					d.Rules = append(d.Rules, id)
				}
			}
		}
		return d, true
	}
	return Divergence{}, false
}

// groups are a trace's normalized events, by dispatch.
type groups struct {
	order  []string
	events map[string][]event
}

func (g *groups) add(name string, e event) {
	if _, ok := g.events[name]; !ok {
		g.order = append(g.order, name)
	}
	g.events[name] = append(g.events[name], e)
}

// normalize groups t's events by the dispatch they belong to (as
// docs/trace.md joins them: a thread's events from an app_dispatch to its
// next belong to it, the tool's own dispatch is bracketed, and an event
// that names an SDK dispatch id belongs to the dispatch that reserved it)
// and writes each as a line without what may differ.
func normalize(t trace.Trace, sources []trace.Source, opts Options, named bool) groups {
	n := &normalizer{opts: opts, agents: map[uint64]string{}, ids: map[string]map[string]map[uint64]int{}}
	for _, e := range t.Events {
		switch e.Type {
		case trace.AgentInfo:
			if named {
				n.agents[e.Agent] = e.Label
			}
		}
	}
	g := groups{events: map[string][]event{}}
	window := map[uint64][]string{} // per thread: the dispatch labels open, innermost last
	byID := map[uint64]string{}     // SDK dispatch id -> label
	for _, e := range t.Events {
		// Regions are named by the buffer live there when the event
		// happened: a runtime may give a freed buffer's address to the
		// next allocation (CUDA does; found diffing against the H200).
		switch e.Type {
		case trace.AppAlloc:
			n.allocs = append(n.allocs, alloc{e.Buffer, e.Addr, e.Bytes})
		case trace.AppFree:
			n.allocs = slices.DeleteFunc(n.allocs, func(a alloc) bool { return a.buffer == e.Buffer })
		}
		src, _ := e.Type.Source()
		if !slices.Contains(sources, src) {
			continue
		}
		open := window[e.Thread]
		cur := ""
		if len(open) > 0 {
			cur = open[len(open)-1]
		}
		switch e.Type {
		case trace.AppDispatch:
			window[e.Thread] = []string{e.Label}
			cur = e.Label
		case trace.ToolDispatch:
			window[e.Thread] = append(open, e.Label)
			cur = e.Label
		case trace.DispatchID:
			if cur != "" {
				byID[e.Dispatch] = cur
			}
		}
		name := cur
		switch {
		case e.Type == trace.Warning || e.Type == trace.AppMemory || e.Type == trace.AgentInfo || e.Type == trace.AppAlloc || e.Type == trace.AppFree:
			// Once per process; allocations and frees too, whether or not
			// the implementation names the thread that made them (ours
			// does since decision 18.5, the C port does not).
			name = Process
		case e.Type == trace.AppComplete || e.Type == trace.AppTimeout || e.Type == trace.AppReadback:
			name = e.Label
		case e.Dispatch != 0 && byID[e.Dispatch] != "" && e.Type != trace.ToolDispatch:
			name = byID[e.Dispatch]
		}
		if name == "" {
			name = Process
		}
		if e.Type == trace.ToolComplete && len(open) > 0 {
			window[e.Thread] = open[:len(open)-1]
		}
		if line, ok := n.line(name, e); ok {
			g.add(name, event{line, e.Type})
		}
	}
	// Consecutive records (one submit's services) may arrive in another
	// order; compare them as sets within each run.
	for name, es := range g.events {
		g.events[name] = sortRecordRuns(es)
	}
	return g
}

func sortRecordRuns(es []event) []event {
	out := slices.Clone(es)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].typ == trace.Record {
			j++
		}
		if j > i {
			sort.SliceStable(out[i:j], func(a, b int) bool { return out[i+a].line < out[i+b].line })
			i = j
			continue
		}
		i++
	}
	return out
}

// racyBuffers adds to shared the buffers whose contents depend on how
// threads interleave, and to racy the dispatches that use one. A buffer
// dispatches of several threads read back (each dispatch reads back its
// arguments) is one; so is every buffer a dispatch that uses one reads
// back, since it may have computed from it (accumulate(b1, b0) on one
// thread while another's atomic_counter writes b0: found diffing the
// simulator against the H200), and so on to a fixed point.
func racyBuffers(t trace.Trace, shared, racy map[string]bool) {
	threads := map[string]map[uint64]bool{}
	users := map[string][]string{} // buffer -> dispatch labels
	uses := map[string][]string{}  // dispatch label -> buffers
	use := func(buffer, label string, thread uint64) {
		if threads[buffer] == nil {
			threads[buffer] = map[uint64]bool{}
		}
		threads[buffer][thread] = true
		users[buffer] = append(users[buffer], label)
		uses[label] = append(uses[label], buffer)
	}
	// A dispatch uses what it reads back, and what its snapshot saved: a
	// loop that never ended reads nothing back, yet its kernels' digests
	// cover the saved buffers (found diffing the simulator against the
	// H200). Snapshot regions are named by the buffer live there then.
	var live []alloc
	var cutOff []trace.Event    // dispatches that timed out: nothing says what they touched
	open := map[uint64]string{} // thread -> its application dispatch
	for _, e := range t.Events {
		switch e.Type {
		case trace.AppAlloc:
			live = append(live, alloc{e.Buffer, e.Addr, e.Bytes})
		case trace.AppFree:
			live = slices.DeleteFunc(live, func(a alloc) bool { return a.buffer == e.Buffer })
		case trace.AppDispatch:
			open[e.Thread] = e.Label
		case trace.AppReadback:
			use(e.Buffer, e.Label, e.Thread)
		case trace.AppTimeout:
			cutOff = append(cutOff, e)
		case trace.Snapshot:
			label := open[e.Thread]
			if label == "" {
				continue
			}
			for _, r := range e.Regions {
				for _, a := range live {
					if r.Addr >= a.addr && r.Addr < a.addr+max(a.bytes, 1) {
						use(a.buffer, label, e.Thread)
					}
				}
			}
		}
	}
	var todo []string
	for b, ths := range threads {
		if len(ths) > 1 {
			todo = append(todo, b)
		}
	}
	// A dispatch that timed out read nothing back, so which buffers it
	// wrote is unknown (a fine-grained one is in no snapshot either): what
	// other threads read back may depend on it (gen-000722 on the H200).
	for _, e := range cutOff {
		racy[e.Label] = true
		for b, ths := range threads {
			for th := range ths {
				if th != e.Thread {
					todo = append(todo, b)
					break
				}
			}
		}
	}
	for len(todo) > 0 {
		b := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if shared[b] {
			continue
		}
		shared[b] = true
		for _, l := range users[b] {
			racy[l] = true
			todo = append(todo, uses[l]...)
		}
	}
}

// recordsSplits reports whether some pass_count of t carries the tool's
// counter split.
func recordsSplits(t trace.Trace) bool {
	return slices.ContainsFunc(t.Events, func(e trace.Event) bool { return e.Type == trace.PassCount && len(e.Groups) > 0 })
}

// agentsListed reports whether every agent an event names is listed by an
// agent event with its spec name.
func agentsListed(t trace.Trace) bool {
	listed := map[uint64]bool{}
	for _, e := range t.Events {
		if e.Type == trace.AgentInfo && e.Label != "" {
			listed[e.Agent] = true
		}
	}
	for _, e := range t.Events {
		if e.Agent != 0 && !listed[e.Agent] {
			return false
		}
	}
	return true
}

// opName is an operation's name without the C enumerator's prefix, which
// readers accept as the same name (docs/trace.md).
func opName(o trace.Op) string {
	return strings.TrimPrefix(strings.ToUpper(string(o)), "ROCPROFILER_KERNEL_REPLAY_")
}

type alloc struct {
	buffer      string
	addr, bytes uint64
}

// normalizer writes events without what may differ.
type normalizer struct {
	opts   Options
	agents map[uint64]string
	allocs []alloc
	// ids renumbers ids per dispatch group: group -> kind -> id -> n.
	ids map[string]map[string]map[uint64]int
}

// id renumbers an id of kind within a group, in order of appearance.
func (n *normalizer) id(group, kind string, v uint64) string {
	if v == 0 {
		return "0"
	}
	if n.ids[group] == nil {
		n.ids[group] = map[string]map[uint64]int{}
	}
	m := n.ids[group][kind]
	if m == nil {
		m = map[uint64]int{}
		n.ids[group][kind] = m
	}
	k, ok := m[v]
	if !ok {
		k = len(m) + 1
		m[v] = k
	}
	return fmt.Sprintf("%s%d", kind, k)
}

func (n *normalizer) agent(v uint64) string {
	if l, ok := n.agents[v]; ok && l != "" {
		return l
	}
	return fmt.Sprintf("agent%d", v)
}

// region names a memory region by the buffer allocated there.
func (n *normalizer) region(r trace.Region) string {
	for _, a := range n.allocs {
		if r.Addr >= a.addr && r.Addr < a.addr+max(a.bytes, 1) {
			if off := r.Addr - a.addr; off > 0 {
				return fmt.Sprintf("%s+%d:%d", a.buffer, off, r.Bytes)
			}
			return fmt.Sprintf("%s:%d", a.buffer, r.Bytes)
		}
	}
	return fmt.Sprintf("?:%d", r.Bytes)
}

func (n *normalizer) buffers(rs []trace.Region) string {
	var names []string
	for _, r := range rs {
		b, _, _ := strings.Cut(n.region(r), ":")
		b, _, _ = strings.Cut(b, "+")
		if !slices.Contains(names, b) {
			names = append(names, b)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// line writes e without clocks, counter values and ids' origins; false
// when the event is not compared at all.
func (n *normalizer) line(group string, e trace.Event) (string, bool) {
	var f []string
	add := func(k string, v any) { f = append(f, fmt.Sprintf("%s=%v", k, v)) }
	opt := func(k string, v string) {
		if v != "" {
			add(k, v)
		}
	}
	f = append(f, string(e.Type))
	if e.Thread != 0 {
		add("thread", e.Thread)
	}
	switch e.Type {
	case trace.MemRead, trace.MemWrite:
		if !n.opts.Traffic {
			return "", false
		}
		add("agent", n.agent(e.Agent))
		add("buffers", n.buffers(e.Regions))
		add("bytes", e.Bytes)
		return strings.Join(f, " "), true
	case trace.AgentInfo:
		add("label", e.Label)
		return strings.Join(f, " "), true
	case trace.Warning:
		add("code", e.Code)
		return strings.Join(f, " "), true
	}
	if e.Agent != 0 {
		add("agent", n.agent(e.Agent))
	}
	if e.Queue != 0 {
		add("queue", n.id(group, "q", e.Queue))
	}
	if e.Dispatch != 0 {
		add("dispatch", n.id(group, "d", e.Dispatch))
	}
	opt("kernel", e.Kernel)
	if e.Context != 0 && (e.Type != trace.PassCount || n.opts.splits) {
		add("context", e.Context)
	}
	opt("label", e.Label)
	opt("buffer", e.Buffer)
	opt("op", opName(e.Op))
	opt("phase", string(e.Phase))
	if p, ok := e.PassOf(); ok {
		add("pass", p)
	}
	if e.Total != nil {
		add("total", *e.Total)
	}
	if e.Corr != nil {
		// An ancestor is another call's internal id: one numbering for
		// both keeps which call encloses which (COR-1).
		add("corr", n.id(group, "i", e.Corr.Internal)+"/"+n.id(group, "x", e.Corr.External)+"/"+n.id(group, "i", e.Corr.Ancestor))
	}
	if e.UserData != nil {
		add("user_data", *e.UserData)
	}
	opt("call", string(e.Call))
	if e.Result != nil {
		if e.Type == trace.Correlation {
			add("result", n.id(group, "x", uint64(*e.Result)))
		} else {
			add("result", *e.Result)
		}
	}
	opt("status", strings.TrimPrefix(string(e.Status), "ROCPROFILER_STATUS_"))
	if len(e.Payload) > 0 {
		add("payload", strings.Join(e.Payload, ","))
	}
	if e.PayloadSize != nil {
		add("payload_size", *e.PayloadSize)
	}
	if e.Info != nil {
		add("info", fmt.Sprintf("size=%d grid=%v workgroup=%v", e.Info.Size, e.Info.Grid, e.Info.Workgroup))
	}
	opt("domain", string(e.Domain))
	if len(e.Operations) > 0 {
		ops := make([]string, len(e.Operations))
		for i, o := range e.Operations {
			ops[i] = opName(o)
		}
		add("operations", strings.Join(ops, ","))
	}
	opt("op_name", opName(e.OpName))
	if e.OpID != nil {
		add("op_id", *e.OpID)
	}
	if len(e.Groups) > 0 && n.opts.splits {
		add("groups", e.Groups)
	}
	opt("service", string(e.Service))
	if len(e.Counters) > 0 {
		names := make([]string, len(e.Counters))
		for i, c := range e.Counters {
			names[i] = c.Name
		}
		add("counters", strings.Join(names, ","))
	}
	if e.Signal != 0 {
		add("signal", n.id(group, "s", e.Signal))
	}
	if e.Value != nil {
		add("value", *e.Value)
	}
	if e.Packets != 0 {
		add("packets", e.Packets)
	}
	if e.KernelPackets != 0 {
		add("kernel_packets", e.KernelPackets)
	}
	if e.Graph {
		add("graph", true)
	}
	if e.Grid != nil {
		add("grid", *e.Grid)
	}
	if e.Workgroup != nil {
		add("workgroup", *e.Workgroup)
	}
	opt("mem_kind", string(e.MemKind))
	switch e.Type {
	case trace.Snapshot:
		if len(e.Regions) > 0 || e.Bytes > 0 {
			add("saved", n.buffers(e.Regions))
			add("bytes", e.Bytes)
		}
	case trace.Restore:
		if n.opts.Traffic {
			add("buffers", n.buffers(e.Regions))
			add("bytes", e.Bytes)
		}
	case trace.AppAlloc:
		add("bytes", e.Bytes)
	}
	if !n.opts.racy[group] {
		opt("mem_in", e.MemIn)
		opt("mem_out", e.MemOut)
	}
	if !n.opts.shared[e.Buffer] {
		opt("digest", e.Digest)
	}
	if e.Elements != 0 {
		add("elements", e.Elements)
	}
	return strings.Join(f, " "), true
}
