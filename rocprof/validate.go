package rocprof

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Problem is one way a rocprofv3 output breaks a rule.
type Problem struct {
	File     string // set by ValidateDir
	Rule     string // RPV-3, RPV-5, RPV-6, RPV-8, RPV-9, DID-4, or FORMAT for unreadable output
	Dispatch uint64 // 0 when the problem is not about one dispatch
	Msg      string
	// Note marks what the file cannot decide, said so that it does not
	// pass silently; a note does not fail the check.
	Note bool
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File + ": ")
	}
	if p.Note {
		b.WriteString(p.Rule + " (note): ")
	} else {
		b.WriteString(p.Rule + ": ")
	}
	if p.Dispatch != 0 {
		fmt.Fprintf(&b, "dispatch %d: ", p.Dispatch)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Failures are the problems that are not notes: what fails a check.
func Failures(ps []Problem) []Problem {
	var out []Problem
	for _, p := range ps {
		if !p.Note {
			out = append(out, p)
		}
	}
	return out
}

// PassIndependent reports whether a counter's value cannot depend on the
// pass that collected it: wave and instruction counts (RPV-8; the
// reference's own kernel replay validation compares the same ones exactly).
// Cycle and cache counters legitimately differ between executions.
func PassIndependent(name string) bool {
	return name == "SQ_WAVES" || strings.HasPrefix(name, "SQ_INSTS_")
}

// ValidateOptions tune ValidateJSON.
type ValidateOptions struct {
	// PassIndependent overrides the package's PassIndependent.
	PassIndependent func(counter string) bool
	// Groups are the requested counter groups, in --pmc order. Without
	// them (and without config.json beside results.json, which holds them
	// as metadata.config.counters) the validator can only check that pass
	// i collects the same counters on every dispatch of an agent.
	Groups [][]string
	// KernelReplay is the run's kernel_replay setting when known (from
	// config.json); nil lets the records tell (a replay_pass above 0).
	KernelReplay *bool
	// Filtered says kernel filters were configured (from config.json), so
	// dispatch ids may have gaps; nil: unknown.
	Filtered *bool
}

// What the validator reads: only the fields the rules need, with pointers
// and raw messages where absence matters, so that real rocprofv3 output
// (with many more fields) reads too.
type (
	readHandle struct {
		Handle *uint64 `json:"handle"`
	}
	readInfo struct {
		AgentID    readHandle `json:"agent_id"`
		QueueID    readHandle `json:"queue_id"`
		KernelID   *uint64    `json:"kernel_id"`
		DispatchID *uint64    `json:"dispatch_id"`
	}
	readDoc struct {
		Tool *[]readTool `json:"rocprofiler-sdk-tool"`
	}
	readTool struct {
		Agents *[]struct {
			ID   readHandle `json:"id"`
			Type *int       `json:"type"`
		} `json:"agents"`
		Counters []struct {
			ID        readHandle `json:"id"`
			AgentID   readHandle `json:"agent_id"`
			Name      string     `json:"name"`
			IsDerived *uint64    `json:"is_derived"`
		} `json:"counters"`
		CallbackRecords struct {
			CounterCollection []readRecord `json:"counter_collection"`
		} `json:"callback_records"`
		BufferRecords struct {
			KernelDispatch []struct {
				Kind         *uint64   `json:"kind"`
				Operation    *uint64   `json:"operation"`
				Start        *uint64   `json:"start_timestamp"`
				End          *uint64   `json:"end_timestamp"`
				DispatchInfo *readInfo `json:"dispatch_info"`
			} `json:"kernel_dispatch"`
		} `json:"buffer_records"`
		Strings struct {
			CallbackRecords []readName `json:"callback_records"`
			BufferRecords   []readName `json:"buffer_records"`
		} `json:"strings"`
	}
	readName struct {
		Kind       string   `json:"kind"`
		Operations []string `json:"operations"`
	}
	readRecord struct {
		DispatchData *struct {
			Start        *uint64   `json:"start_timestamp"`
			End          *uint64   `json:"end_timestamp"`
			DispatchInfo *readInfo `json:"dispatch_info"`
		} `json:"dispatch_data"`
		Records []struct {
			CounterID readHandle `json:"counter_id"`
			Value     any        `json:"value"` // a number; RPV-9 reports anything else
		} `json:"records"`
		ReplayPass *json.RawMessage `json:"replay_pass"`
		N          *json.RawMessage `json:"n"`
	}
)

// ValidateJSON checks a rocprofv3 results.json against RPV-3, RPV-6 and
// RPV-8 with the default options.
func ValidateJSON(r io.Reader) []Problem { return ValidateJSONWith(r, ValidateOptions{}) }

// ValidateJSONWith is ValidateJSON with options.
func ValidateJSONWith(r io.Reader, opts ValidateOptions) (problems []Problem) {
	if opts.PassIndependent == nil {
		opts.PassIndependent = PassIndependent
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return []Problem{{Rule: "FORMAT", Msg: fmt.Sprintf("cannot read the JSON: %v", err)}}
	}
	var doc readDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return []Problem{{Rule: "FORMAT", Msg: fmt.Sprintf("not rocprofv3 JSON: %v", err)}}
	}
	if doc.Tool == nil || len(*doc.Tool) == 0 {
		return []Problem{{Rule: "FORMAT", Msg: "no \"rocprofiler-sdk-tool\" array with an entry: not rocprofv3 JSON output"}}
	}
	for ti, t := range *doc.Tool {
		ps := (&validator{opts: opts}).tool(t)
		if len(*doc.Tool) > 1 {
			for i := range ps {
				ps[i].Msg = fmt.Sprintf("rocprofiler-sdk-tool[%d]: %s", ti, ps[i].Msg)
			}
		}
		problems = append(problems, ps...)
	}
	// RPV-9: laid out as the writer lays it out.
	return append(problems, jsonFormProblems(data)...)
}

// record is one counter_collection entry as the checks see it.
type record struct {
	index    int
	dispatch uint64
	agent    uint64
	kernel   *uint64
	queue    *uint64
	pass     int64 // -1: no replay_pass
	counters map[string]float64
	names    []string // sorted, the set it collected
	start    *uint64
	end      *uint64
}

type validator struct {
	opts     ValidateOptions
	problems []Problem
}

func (v *validator) add(rule string, dispatch uint64, format string, args ...any) {
	v.problems = append(v.problems, Problem{Rule: rule, Dispatch: dispatch, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) tool(t readTool) []Problem {
	cat := v.catalogue(t)
	recs := v.records(t, cat)
	kernelReplay := false
	for _, r := range recs {
		if r.pass > 0 {
			kernelReplay = true
		}
	}
	if v.opts.KernelReplay != nil {
		kernelReplay = *v.opts.KernelReplay
	}

	// RPV-6: every record says its pass under kernel replay; without it, a
	// dispatch has one record and a pass other than 0 makes no sense.
	for _, r := range recs {
		switch {
		case kernelReplay && r.pass < 0:
			v.add("RPV-6", r.dispatch, "counter_collection[%d] has no replay_pass although the run used kernel replay: its pass cannot be told apart from the dispatch's other passes%s", r.index, nHint(t, r))
		case !kernelReplay && r.pass > 0:
			v.add("RPV-6", r.dispatch, "counter_collection[%d] has replay_pass %d in a run without kernel replay: every record of such a run is pass 0", r.index, r.pass)
		}
	}
	byDispatch := map[uint64][]record{}
	var ids []uint64
	for _, r := range recs {
		if r.dispatch == 0 {
			v.add("RPV-8", 0, "counter_collection[%d] has dispatch_id 0: dispatch ids start at 1", r.index)
			continue
		}
		if byDispatch[r.dispatch] == nil {
			ids = append(ids, r.dispatch)
		}
		byDispatch[r.dispatch] = append(byDispatch[r.dispatch], r)
	}
	slices.Sort(ids)
	v.contiguous(t, ids, cat.byAgent)
	if !kernelReplay {
		for _, id := range ids {
			if n := len(byDispatch[id]); n > 1 {
				v.add("RPV-6", id, "%d counter records share the dispatch id in a run without kernel replay: such a dispatch has one record (with kernel replay each says its replay_pass)", n)
			}
		}
	}
	kernelRecords := v.kernelRecords(t)

	perAgent := map[uint64]replayed{}        // agent -> first replayed dispatch and its pass count
	once := map[uint64][]ranOnce{}           // agent -> dispatches with one record (pass 0)
	groupOf := map[uint64]map[int64]record{} // agent -> pass -> first record seen
	for _, id := range ids {
		rs := byDispatch[id]
		v.sameDispatch(id, rs)
		passes, ok := v.passes(id, rs, kernelReplay)
		if n := len(kernelRecords[id]); n > 0 && n != len(rs) {
			v.add("RPV-8", id, "%d kernel dispatch records but %d counter records: every execution of a dispatch (every pass) has one of each", n, len(rs))
		}
		if !ok {
			continue
		}
		agent := rs[0].agent
		n := len(passes)
		if n > 1 { // a replayed dispatch; one record alone is a dispatch that was not replayed
			if prev, seen := perAgent[agent]; seen && prev.n != n {
				v.add("RPV-8", id, "%d passes, but dispatch %d on the same agent %d had %d: the pass count is the number of counter groups collectable on the agent", n, prev.dispatch, agent, prev.n)
			} else if !seen {
				perAgent[agent] = replayed{id, n}
			}
			v.ownTimestamps(id, passes, kernelRecords[id])
		} else if kernelReplay {
			once[agent] = append(once[agent], ranOnce{id, len(notIn(keys(cat.listedFor(agent)), setOf(passes[0].names))) > 0})
		}
		if v.opts.Groups != nil {
			v.groups(id, passes, expectedGroups(v.opts.Groups, cat.listedFor(agent)), kernelReplay)
		} else {
			// RPV-3 / AGT-1: pass i collects the same group on every dispatch of an agent.
			if groupOf[agent] == nil {
				groupOf[agent] = map[int64]record{}
			}
			for _, r := range passes {
				if g, seen := groupOf[agent][r.pass]; !seen {
					groupOf[agent][r.pass] = r
				} else if !slices.Equal(g.names, r.names) {
					v.add("RPV-3", id, "replay_pass %d collected [%s], but the same pass of dispatch %d on agent %d collected [%s]: pass i must collect counter group i of the agent",
						r.pass, strings.Join(r.names, " "), g.dispatch, agent, strings.Join(g.names, " "))
				}
			}
			if n > 1 {
				v.inferGroups(id, agent, passes, cat)
			}
		}
		v.invariant(id, passes)
	}
	v.declinedOrStopped(perAgent, once, len(t.BufferRecords.KernelDispatch) > 0)
	v.allZero(recs)
	v.nameTables(t)
	return v.problems
}

// ranOnce is a dispatch with one record under kernel replay; short says
// it collected fewer counters than the file lists for its agent (so the
// agent needs more than one pass).
type ranOnce struct {
	dispatch uint64
	short    bool
}

// replayed is an agent's first replayed dispatch and its pass count.
type replayed struct {
	dispatch uint64
	n        int
}

// counterCatalogue is the file's counters list: what each counter id
// names, for which agent, and which counters the file lists per agent
// (rocprofv3 lists only the requested counters an agent has,
// metadata.cpp init with counters).
type counterCatalogue struct {
	name     map[uint64]string
	agent    map[uint64]*uint64 // nil: the entry names no agent
	derived  map[uint64]bool
	byAgent  map[uint64]map[string]bool
	anyAgent map[string]bool // counters listed without an agent id
}

// listedFor is the set of counters the file lists for an agent (nil when
// the list says nothing about it).
func (c counterCatalogue) listedFor(agent uint64) map[string]bool {
	if len(c.anyAgent) == 0 {
		return c.byAgent[agent]
	}
	out := map[string]bool{}
	for n := range c.anyAgent {
		out[n] = true
	}
	for n := range c.byAgent[agent] {
		out[n] = true
	}
	return out
}

// catalogue reads the counters and agents lists (RPV-9: identity): an
// agents list that is empty or names an agent twice, a counter id listed
// twice.
func (v *validator) catalogue(t readTool) counterCatalogue {
	cat := counterCatalogue{name: map[uint64]string{}, agent: map[uint64]*uint64{}, derived: map[uint64]bool{},
		byAgent: map[uint64]map[string]bool{}, anyAgent: map[string]bool{}}
	for _, c := range t.Counters {
		if c.ID.Handle == nil {
			continue
		}
		h := *c.ID.Handle
		if prev, dup := cat.name[h]; dup {
			v.add("RPV-9", 0, "counter id %d is listed twice in counters (%s and %s): the writer lists each counter once, so a counter id names one counter of one agent", h, prev, c.Name)
			continue
		}
		cat.name[h] = c.Name
		cat.agent[h] = c.AgentID.Handle
		cat.derived[h] = c.IsDerived != nil && *c.IsDerived != 0
		if c.AgentID.Handle != nil {
			a := *c.AgentID.Handle
			if cat.byAgent[a] == nil {
				cat.byAgent[a] = map[string]bool{}
			}
			cat.byAgent[a][c.Name] = true
		} else {
			cat.anyAgent[c.Name] = true
		}
	}
	if t.Agents != nil {
		if len(*t.Agents) == 0 {
			v.add("RPV-9", 0, "agents is empty: the writer lists every agent of the machine (the CPU too), and records name their agent by its id")
		}
		seen := map[uint64]bool{}
		for i, a := range *t.Agents {
			if a.ID.Handle == nil {
				v.add("RPV-9", 0, "agents[%d] has no id.handle: the writer writes every agent's id", i)
				continue
			}
			if seen[*a.ID.Handle] {
				v.add("RPV-9", 0, "agent id %d is listed twice in agents: an agent id names one agent", *a.ID.Handle)
			}
			seen[*a.ID.Handle] = true
		}
	}
	return cat
}

// records reads the counter records, reporting unreadable ones, records
// on an agent the agents list does not name, counter ids the counters
// list does not name or names for another agent (RPV-9: referential
// integrity), and negative values of hardware counters (RPV-3: a count is
// never negative; derived counters may be).
func (v *validator) records(t readTool, cat counterCatalogue) []record {
	listed := map[uint64]bool{}
	if t.Agents != nil {
		for _, a := range *t.Agents {
			if a.ID.Handle != nil {
				listed[*a.ID.Handle] = true
			}
		}
	}
	var recs []record
	reported := map[string]bool{} // one report per kind of reference problem
	once := func(key string) bool {
		if reported[key] {
			return false
		}
		reported[key] = true
		return true
	}
	for i, raw := range t.CallbackRecords.CounterCollection {
		if raw.DispatchData == nil || raw.DispatchData.DispatchInfo == nil || raw.DispatchData.DispatchInfo.DispatchID == nil {
			v.add("FORMAT", 0, "counter_collection[%d] has no dispatch_data.dispatch_info.dispatch_id", i)
			continue
		}
		info := raw.DispatchData.DispatchInfo
		r := record{index: i, dispatch: *info.DispatchID, pass: -1, counters: map[string]float64{},
			kernel: info.KernelID, queue: info.QueueID.Handle, start: raw.DispatchData.Start, end: raw.DispatchData.End}
		if info.AgentID.Handle != nil {
			r.agent = *info.AgentID.Handle
			if len(listed) > 0 && !listed[r.agent] && once(fmt.Sprintf("agent %d", r.agent)) {
				v.add("RPV-9", r.dispatch, "counter_collection[%d] is on agent %d, which the agents list does not name: a record's agent_id is one of the listed agents' ids", i, r.agent)
			}
		}
		if raw.ReplayPass != nil {
			var p int64
			if err := json.Unmarshal(*raw.ReplayPass, &p); err != nil || p < 0 {
				v.add("RPV-6", r.dispatch, "counter_collection[%d]: replay_pass is %s, not a pass index (0, 1, 2, ...)", i, string(*raw.ReplayPass))
				continue
			}
			r.pass = p
		}
		for k, c := range raw.Records {
			h := deref(c.CounterID.Handle)
			name, ok := cat.name[h]
			if !ok {
				if once(fmt.Sprintf("unnamed %d", h)) {
					v.add("RPV-9", r.dispatch, "counter_collection[%d].records[%d] has counter_id %d, which the file's counters list does not name: a reader maps ids to names through it", i, k, h)
				}
				name = "counter#" + strconv.FormatUint(h, 10)
			} else if owner := cat.agent[h]; owner != nil && info.AgentID.Handle != nil && *owner != r.agent && once(fmt.Sprintf("owner %d %d", h, r.agent)) {
				v.add("RPV-9", r.dispatch, "counter_collection[%d].records[%d] has counter_id %d, which the counters list gives to agent %d, but the record is on agent %d: counter ids are per agent", i, k, h, *owner, r.agent)
			}
			x, isNum := c.Value.(float64)
			if isNum && x < 0 && !cat.derived[h] && once(fmt.Sprintf("negative %s", name)) {
				v.add("RPV-3", r.dispatch, "counter_collection[%d].records[%d]: %s is %s, a negative count: a hardware counter counts events and is never negative", i, k, name, fmtValue(x))
			}
			r.counters[name] += x // dimension instances add up; a value that is not a number is RPV-9's
		}
		for n := range r.counters {
			r.names = append(r.names, n)
		}
		sort.Strings(r.names)
		recs = append(recs, r)
	}
	return recs
}

// kernelRecords are the kernel dispatch records by dispatch id.
func (v *validator) kernelRecords(t readTool) map[uint64][][2]*uint64 {
	out := map[uint64][][2]*uint64{}
	for _, k := range t.BufferRecords.KernelDispatch {
		if k.DispatchInfo != nil && k.DispatchInfo.DispatchID != nil {
			id := *k.DispatchInfo.DispatchID
			out[id] = append(out[id], [2]*uint64{k.Start, k.End})
		}
	}
	return out
}

// ownTimestamps (DID-4): every pass of a replayed dispatch ran on its own,
// so no two passes share both start and end timestamps, in the counter
// records and in the kernel dispatch records.
func (v *validator) ownTimestamps(id uint64, passes []record, kernels [][2]*uint64) {
	type span struct{ start, end uint64 }
	check := func(what string, spans []*span, label func(i int) string) {
		first := map[span]int{}
		var same []string
		owner := -1
		for i, sp := range spans {
			if sp == nil {
				continue
			}
			if j, seen := first[*sp]; seen {
				if owner < 0 {
					owner = j
				}
				if j == owner {
					same = append(same, label(i))
				}
				continue
			}
			first[*sp] = i
		}
		if len(same) > 0 {
			sp := spans[owner]
			v.add("DID-4", id, "%s %s %s the start and end timestamps of %s (%d..%d): every pass runs the kernel again and has its own", what, strings.Join(same, ", "),
				map[bool]string{true: "has", false: "have"}[len(same) == 1], label(owner), sp.start, sp.end)
		}
	}
	var spans []*span
	for _, r := range passes {
		if r.start != nil && r.end != nil {
			spans = append(spans, &span{*r.start, *r.end})
		} else {
			spans = append(spans, nil)
		}
	}
	check("counter records:", spans, func(i int) string { return "replay_pass " + strconv.FormatInt(passes[i].pass, 10) })
	spans = spans[:0]
	for _, k := range kernels {
		if k[0] != nil && k[1] != nil {
			spans = append(spans, &span{*k[0], *k[1]})
		} else {
			spans = append(spans, nil)
		}
	}
	if len(spans) > 1 {
		check("kernel dispatch records:", spans, func(i int) string { return "execution " + strconv.Itoa(i+1) })
	}
}

// inferGroups (RPV-3) judges a replayed dispatch without the requested
// groups, from what the file does say: the counters list names exactly the
// requested counters each agent has, so the passes together collect all
// of them; and each pass collects its own group, so no pass collects only
// counters that other passes of the dispatch also collect.
func (v *validator) inferGroups(id, agent uint64, passes []record, cat counterCatalogue) {
	union := map[string]bool{}
	for _, r := range passes {
		for _, n := range r.names {
			union[n] = true
		}
	}
	if listed := cat.listedFor(agent); len(listed) > 0 {
		var never []string
		for n := range listed {
			if !union[n] {
				never = append(never, n)
			}
		}
		if len(never) > 0 {
			sort.Strings(never)
			v.add("RPV-3", id, "counter(s) %s never collected in the %d passes, although the counters list names them for agent %d (rocprofv3 lists only the requested counters): every requested counter is collected in some pass",
				strings.Join(never, ", "), len(passes), agent)
		}
	}
	for i, r := range passes {
		others := map[string]bool{}
		for j, o := range passes {
			if j != i {
				for _, n := range o.names {
					others[n] = true
				}
			}
		}
		if len(notIn(r.names, others)) == 0 {
			v.add("RPV-3", id, "replay_pass %d collected [%s], nothing that the dispatch's other passes do not also collect: each pass collects its own counter group (only requested groups that overlap this way would make such a pass; config.json or check-rocprofv3 --pmc tells)",
				r.pass, strings.Join(r.names, " "))
			return
		}
	}
}

// declinedOrStopped says what the file cannot decide: on an agent where
// dispatches replayed, some ran once with replay_pass 0. That is what a
// declined dispatch leaves (a graph launch or a multi-packet submission,
// ACT-6; a snapshot that could not be taken, MEM-5), and also what a replay
// that never started leaves; nothing in the file tells why. Kernel
// dispatch records do tell a replay that lost its later counter records
// (RPV-8 above), so with them the note is narrower.
func (v *validator) declinedOrStopped(first map[uint64]replayed, once map[uint64][]ranOnce, haveKernels bool) {
	agents := make([]uint64, 0, len(once))
	for a := range once {
		agents = append(agents, a)
	}
	slices.Sort(agents)
	for _, a := range agents {
		r, replays := first[a]
		var ids []string
		for _, o := range once[a] {
			if replays || o.short {
				ids = append(ids, strconv.FormatUint(o.dispatch, 10))
			}
		}
		if len(ids) == 0 {
			continue // the agent's counters fit one pass: running once is all there is
		}
		kernels := "and no kernel dispatch records show how many times they ran"
		if haveKernels {
			kernels = "their kernel dispatch records show one execution each, so no replay lost passes"
		}
		why := "although the counters the file lists for the agent need more than one pass"
		if replays {
			why = fmt.Sprintf("while dispatch %d on that agent replayed %d passes", r.dispatch, r.n)
		}
		v.problems = append(v.problems, Problem{Rule: "RPV-8", Note: true, Msg: fmt.Sprintf(
			"dispatch(es) %s on agent %d ran once (replay_pass 0 only) %s; %s. A declined dispatch (a graph launch, a multi-packet submission, a snapshot that could not be taken) and a replay that never started look the same in the file: this is not judged",
			strings.Join(ids, ", "), a, why, kernels)})
	}
}

// nameTables (RPV-9): strings.callback_records and buffer_records are
// filled as the writer fills them, one entry per tracing kind, and every
// kernel dispatch record's kind and operation can be looked up there, as a
// consumer names a record (kind 11 is KERNEL_DISPATCH).
func (v *validator) nameTables(t readTool) {
	for _, table := range []struct {
		name    string
		entries []readName
	}{{"callback_records", t.Strings.CallbackRecords}, {"buffer_records", t.Strings.BufferRecords}} {
		if len(table.entries) == 0 {
			v.add("RPV-9", 0, "strings.%s is empty: the writer fills it with the SDK's tracing kinds and their operations, where a consumer looks a record's kind up", table.name)
		}
	}
	for i, k := range t.BufferRecords.KernelDispatch {
		if k.Kind == nil || k.Operation == nil {
			v.add("RPV-9", dispatchOf(k.DispatchInfo), "buffer_records.kernel_dispatch[%d] has no kind or operation: the writer writes both", i)
			return
		}
		if len(t.Strings.BufferRecords) == 0 {
			return // reported above
		}
		kind, op := *k.Kind, *k.Operation
		if kind >= uint64(len(t.Strings.BufferRecords)) {
			v.add("RPV-9", dispatchOf(k.DispatchInfo), "buffer_records.kernel_dispatch[%d] has kind %d, which strings.buffer_records (%d entries) does not name", i, kind, len(t.Strings.BufferRecords))
			return
		}
		entry := t.Strings.BufferRecords[kind]
		if entry.Kind != BufferKindNames[bufferKindDispatch] {
			v.add("RPV-9", dispatchOf(k.DispatchInfo), "buffer_records.kernel_dispatch[%d] has kind %d, which strings.buffer_records names %q: a kernel dispatch record's kind names KERNEL_DISPATCH", i, kind, entry.Kind)
			return
		}
		if op >= uint64(len(entry.Operations)) || entry.Operations[op] == "" {
			v.add("RPV-9", dispatchOf(k.DispatchInfo), "buffer_records.kernel_dispatch[%d] has operation %d, which strings.buffer_records[%d].operations does not name", i, op, kind)
			return
		}
	}
}

func dispatchOf(info *readInfo) uint64 {
	if info == nil || info.DispatchID == nil {
		return 0
	}
	return *info.DispatchID
}

// nHint explains a record that names its pass "n": the reference's
// validation script accepts that spelling during a rename, but no writer
// we know emits it, so it is not read as replay_pass.
func nHint(t readTool, r record) string {
	if raw := t.CallbackRecords.CounterCollection[r.index]; raw.N != nil {
		return "; it has a field \"n\", which no rocprofv3 writer emits for the pass (the kernel replay writer emits replay_pass)"
	}
	return ""
}

// contiguous: dispatch ids are contiguous where the file can show it. With
// kernel dispatch records every dispatch is there (kernel filters apply
// to counters only); without them, counter records cover every dispatch
// only when no filter was configured and every agent collects something.
func (v *validator) contiguous(t readTool, counterIDs []uint64, agentCounters map[uint64]map[string]bool) {
	ids := map[uint64]bool{}
	for _, id := range counterIDs {
		ids[id] = true
	}
	source := "counter"
	if len(t.BufferRecords.KernelDispatch) > 0 {
		source = "counter and kernel dispatch"
		for _, k := range t.BufferRecords.KernelDispatch {
			if k.DispatchInfo != nil && k.DispatchInfo.DispatchID != nil && *k.DispatchInfo.DispatchID != 0 {
				ids[*k.DispatchInfo.DispatchID] = true
			}
		}
	} else {
		if v.opts.Filtered == nil || *v.opts.Filtered {
			return // filters may leave gaps, or we cannot tell
		}
		for _, a := range deref2(t.Agents) {
			if a.Type != nil && *a.Type == agentTypeGPU && a.ID.Handle != nil && len(agentCounters[*a.ID.Handle]) == 0 {
				return // this agent's dispatches collect nothing
			}
		}
	}
	sorted := make([]uint64, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	var missing []string
	for i := 1; i < len(sorted); i++ {
		for id := sorted[i-1] + 1; id < sorted[i] && len(missing) < 10; id++ {
			missing = append(missing, strconv.FormatUint(id, 10))
		}
	}
	if len(missing) > 0 {
		v.add("RPV-8", 0, "dispatch ids %d..%d are not contiguous: no %s record for %s (every dispatch takes the next id)",
			sorted[0], sorted[len(sorted)-1], source, strings.Join(missing, ", "))
	}
}

// sameDispatch: records that share a dispatch id are one logical dispatch
// (DID-2): same agent, kernel and queue.
func (v *validator) sameDispatch(id uint64, rs []record) {
	first := rs[0]
	for _, r := range rs[1:] {
		if r.agent != first.agent || !samePtr(r.kernel, first.kernel) || !samePtr(r.queue, first.queue) {
			v.add("RPV-8", id, "counter_collection[%d] and [%d] share the dispatch id but not the agent, kernel or queue: records of two dispatches are mixed under one id",
				first.index, r.index)
			return
		}
	}
}

func samePtr(a, b *uint64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// passes checks replay_pass 0..N-1 exactly once and returns the records
// in pass order (ok false when the passes are broken and later checks
// would only repeat the finding).
func (v *validator) passes(id uint64, rs []record, kernelReplay bool) ([]record, bool) {
	if !kernelReplay {
		return rs[:1], len(rs) == 1
	}
	seen := map[int64]int{}
	var maxPass int64 = -1
	for _, r := range rs {
		if r.pass < 0 {
			return nil, false // reported as RPV-6
		}
		seen[r.pass]++
		maxPass = max(maxPass, r.pass)
	}
	ok := true
	var missing []string
	for p := int64(0); p <= maxPass && len(missing) < 10; p++ { // bounded, however large the index claimed
		if seen[p] == 0 {
			missing = append(missing, strconv.FormatInt(p, 10))
		}
	}
	if len(missing) > 0 {
		ok = false
		hint := ""
		if seen[0] == 0 {
			hint = " (a dispatch's passes start at 0; records of its passes may have been filed under another dispatch id)"
		}
		v.add("RPV-8", id, "replay_pass %s is missing: passes must run 0..%d without a gap%s", strings.Join(missing, ", "), maxPass, hint)
	}
	dups := make([]int64, 0, len(seen))
	for p, k := range seen {
		if k > 1 {
			dups = append(dups, p)
		}
	}
	slices.Sort(dups)
	for _, p := range dups {
		ok = false
		v.add("RPV-8", id, "replay_pass %d appears %d times: each pass of a dispatch has exactly one record", p, seen[p])
	}
	if !ok {
		return nil, false
	}
	out := slices.Clone(rs)
	sort.Slice(out, func(i, j int) bool { return out[i].pass < out[j].pass })
	return out, true
}

// expectedGroups are the requested groups as an agent collects them: each
// a set, without the counters the agent does not list, empty ones dropped.
func expectedGroups(groups [][]string, agentHas map[string]bool) [][]string {
	var out [][]string
	for _, g := range groups {
		var keep []string
		for _, c := range counterSet(g) {
			if agentHas == nil || agentHas[c] {
				keep = append(keep, c)
			}
		}
		if len(keep) > 0 {
			out = append(out, keep)
		}
	}
	return out
}

// groups (RPV-3, AGT-1): walking the passes in order, they collect the
// agent's groups in order, a group possibly over several consecutive
// passes when it does not fit one hardware pass, never two groups in one
// pass, every counter, and no pass beyond the last group. A dispatch with
// one record (not replayed) collects the first group's first pass only.
func (v *validator) groups(id uint64, passes []record, groups [][]string, kernelReplay bool) {
	if len(groups) == 0 {
		for _, r := range passes {
			v.add("RPV-3", id, "replay_pass %d collected [%s], but the agent has none of the requested counters", r.pass, strings.Join(r.names, " "))
		}
		return
	}
	if !kernelReplay && len(groups) > 1 {
		return // several groups in one run rotate across dispatches; nothing per pass to check
	}
	g := 0
	remaining := setOf(groups[0])
	for _, r := range passes {
		if g >= len(groups) {
			v.add("RPV-3", id, "replay_pass %d collected [%s] after passes 0..%d had collected all %d requested groups: one pass too many", r.pass, strings.Join(r.names, " "), r.pass-1, len(groups))
			return
		}
		if extra := notIn(r.names, remaining); len(extra) > 0 {
			want := keys(remaining)
			if started := len(remaining) < len(groups[g]); started && g+1 < len(groups) && len(notIn(r.names, setOf(groups[g+1]))) == 0 {
				// The pass already collects the next group: the rest of this one was never collected.
				v.add("RPV-3", id, "requested counter(s) %s of group %d never collected: replay_pass %d already collects group %d, [%s]", strings.Join(want, ", "), g, r.pass, g+1, strings.Join(r.names, " "))
				return
			}
			other := ""
			for j, og := range groups {
				if j != g && len(notIn(r.names, setOf(og))) == 0 {
					other = fmt.Sprintf(" (those are group %d's)", j)
					break
				}
			}
			v.add("RPV-3", id, "replay_pass %d collected [%s]%s, but it should collect counters of group %d, [%s]: pass i collects the agent's groups in order", r.pass, strings.Join(r.names, " "), other, g, strings.Join(want, " "))
			return
		}
		for _, n := range r.names {
			delete(remaining, n)
		}
		if len(remaining) == 0 {
			g++
			if g < len(groups) {
				remaining = setOf(groups[g])
			}
		}
	}
	if len(passes) == 1 && kernelReplay {
		return // a dispatch that was not replayed collects the first pass only
	}
	if g < len(groups) {
		// What no pass collected at all, and the groups left uncollected.
		seen := map[string]bool{}
		for _, r := range passes {
			for _, n := range r.names {
				seen[n] = true
			}
		}
		never := notIn(keys(remaining), seen)
		var left []string
		if len(remaining) < len(groups[g]) {
			left = append(left, fmt.Sprintf("the rest of %d [%s]", g, strings.Join(keys(remaining), " ")))
		} else {
			left = append(left, fmt.Sprintf("%d [%s]", g, strings.Join(keys(remaining), " ")))
		}
		for j, og := range groups[g+1:] {
			never = append(never, notIn(og, seen)...)
			left = append(left, fmt.Sprintf("%d [%s]", g+1+j, strings.Join(og, " ")))
		}
		covered := "no group"
		if g > 0 {
			covered = fmt.Sprintf("groups 0..%d", g-1)
		}
		nowhere := ""
		if len(never) > 0 {
			slices.Sort(never)
			nowhere = fmt.Sprintf(" (%s in no pass at all)", strings.Join(slices.Compact(never), ", "))
		}
		v.add("RPV-3", id, "requested group(s) %s never collected%s: the %d passes cover %s of %d; every requested group is collected in its own pass(es)",
			strings.Join(left, ", "), nowhere, len(passes), covered, len(groups))
	}
}

func setOf(names []string) map[string]bool {
	s := map[string]bool{}
	for _, n := range names {
		s[n] = true
	}
	return s
}

func notIn(names []string, set map[string]bool) []string {
	var out []string
	for _, n := range names {
		if !set[n] {
			out = append(out, n)
		}
	}
	return out
}

func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// invariant (RPV-8): counters that do not depend on the pass agree across
// the passes of a dispatch.
func (v *validator) invariant(id uint64, passes []record) {
	first := map[string]record{}
	reported := map[string]bool{}
	for _, r := range passes {
		for _, name := range r.names {
			if !v.opts.PassIndependent(name) {
				continue
			}
			f, ok := first[name]
			if !ok {
				first[name] = r
				continue
			}
			if f.counters[name] != r.counters[name] && !reported[name] {
				reported[name] = true
				v.add("RPV-8", id, "%s is %s in replay_pass %d but %s in replay_pass %d: a counter that does not depend on the pass must be equal in every pass (was memory restored between passes?)",
					name, fmtValue(f.counters[name]), f.pass, fmtValue(r.counters[name]), r.pass)
			}
		}
	}
}

// allZero (RPV-3): a file whose every counter value is 0 collected nothing
// (a kernel that ran has waves and instructions).
func (v *validator) allZero(recs []record) {
	values := 0
	for _, r := range recs {
		for _, x := range r.counters {
			values++
			if x != 0 {
				return
			}
		}
	}
	if values > 0 {
		v.add("RPV-3", 0, "every counter value in the file (%d, dimension instances added up) is 0: the counters were not really collected", values)
	}
}

func deref2[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func fmtValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ReadConfigJSON reads what the validator needs from a config.json
// (--output-config): the requested counter groups, kernel_replay, and
// whether kernel filters were configured.
func ReadConfigJSON(r io.Reader) (ValidateOptions, error) {
	var doc struct {
		Tool []struct {
			Metadata struct {
				Config struct {
					Counters     [][]string `json:"counters"`
					KernelReplay *bool      `json:"kernel_replay"`
					Include      *string    `json:"kernel_filter_include"`
					Exclude      *string    `json:"kernel_filter_exclude"`
					Range        []uint64   `json:"kernel_filter_range"`
				} `json:"config"`
			} `json:"metadata"`
		} `json:"rocprofiler-sdk-tool"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return ValidateOptions{}, fmt.Errorf("not a rocprofv3 config.json: %v", err)
	}
	if len(doc.Tool) == 0 {
		return ValidateOptions{}, errors.New("not a rocprofv3 config.json: no \"rocprofiler-sdk-tool\" entry")
	}
	c := doc.Tool[0].Metadata.Config
	filtered := (c.Include != nil && *c.Include != ".*" && *c.Include != "") || (c.Exclude != nil && *c.Exclude != "") || len(c.Range) > 0
	opts := ValidateOptions{Groups: c.Counters, KernelReplay: c.KernelReplay, Filtered: &filtered}
	if opts.Groups == nil {
		opts.Groups = [][]string{}
	}
	return opts, nil
}

// ValidateCSV checks a counter_collection.csv: the reference's columns
// are there and there is no Replay_Pass column (RPV-6), and every field is
// quoted and every number written as the writer does (RPV-9).
func ValidateCSV(r io.Reader) []Problem { return ValidateCSVFile("counter_collection.csv", r) }

// ValidateCSVFile checks one CSV file that rocprofv3 writes, told apart
// by its name (PREFIX_counter_collection.csv, _kernel_trace.csv,
// _agent_info.csv, _kernel_stats.csv, _domain_stats.csv): the writer's
// quoting and number forms (RPV-9), and for counter_collection.csv its
// columns (RPV-6). A name rocprofv3 does not write is one problem.
func ValidateCSVFile(name string, r io.Reader) []Problem {
	f, ok := csvFormOf(name)
	if !ok {
		return []Problem{{Rule: "FORMAT", Msg: fmt.Sprintf("%s is not a CSV file rocprofv3 writes (its names end in %s)", name, csvSuffixes())}}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return []Problem{{Rule: "FORMAT", Msg: fmt.Sprintf("cannot read %s: %v", f.suffix, err)}}
	}
	var problems []Problem
	if f.suffix == "counter_collection.csv" {
		problems = counterColumns(data)
	}
	return append(problems, csvFormProblems(f, bytes.NewReader(data))...)
}

func csvSuffixes() string {
	var s []string
	for _, f := range csvForms {
		s = append(s, f.suffix)
	}
	return strings.Join(s, ", ")
}

// counterColumns (RPV-6): counter_collection.csv has the reference's
// columns and no Replay_Pass column.
func counterColumns(data []byte) []Problem {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	head, err := cr.Read()
	if err != nil {
		return []Problem{{Rule: "FORMAT", Msg: fmt.Sprintf("cannot read the CSV header: %v", err)}}
	}
	var problems []Problem
	have := map[string]bool{}
	for _, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		have[h] = true
		if strings.EqualFold(h, "Replay_Pass") {
			problems = append(problems, Problem{Rule: "RPV-6", Msg: fmt.Sprintf("counter_collection.csv has a %s column: the CSV keeps the columns of a run without replay (the pass is in the JSON's replay_pass)", h)})
		}
	}
	var missing []string
	for _, c := range CounterCSVColumns {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, Problem{Rule: "RPV-6", Msg: "counter_collection.csv lacks the reference's column(s) " + strings.Join(missing, ", ")})
	}
	return problems
}

// passDir is a run's folder: pass_N, or pmc_N for a text input file's job
// (rocprofv3.py numbers the runs of one invocation across both).
var passDir = regexp.MustCompile(`^(pass|pmc)_([0-9]+)$`)

// passFolder is one run folder found under a parent.
type passFolder struct {
	name string
	n    int
}

// ErrNoOutput is returned by ValidateDir for a directory without
// rocprofv3 output.
var ErrNoOutput = errors.New("no rocprofv3 output (*results.json, *counter_collection.csv)")

// ValidateDir checks every rocprofv3 output file under dir (ValidateFS on
// the directory).
func ValidateDir(dir string, opts ValidateOptions) (checked []string, problems []Problem, err error) {
	checked, problems, err = ValidateFS(os.DirFS(dir), opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return checked, problems, nil
}

// ValidateFS checks every rocprofv3 output file of fsys: each
// *results.json with ValidateJSONWith (reading the requested groups from
// the *config.json beside it, when opts has none), each CSV file rocprofv3
// writes with ValidateCSVFile, and application replay's pass_N folders for
// gaps (RPV-5). It returns the files checked and the problems; an error
// means fsys could not be read or holds no results.json or
// counter_collection.csv.
func ValidateFS(fsys fs.FS, opts ValidateOptions) (checked []string, problems []Problem, err error) {
	passes := map[string][]passFolder{} // parent -> run folders
	data := 0                           // results.json and counter_collection.csv files
	err = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if m := passDir.FindStringSubmatch(d.Name()); m != nil {
				n, _ := strconv.Atoi(m[2])
				parent := filepath.Dir(filepath.FromSlash(path))
				passes[parent] = append(passes[parent], passFolder{d.Name(), n})
			}
			return nil
		}
		var ps []Problem
		_, isCSV := csvFormOf(d.Name())
		switch {
		case strings.HasSuffix(d.Name(), "results.json"):
			o := opts
			if o.Groups == nil {
				cfgPath := strings.TrimSuffix(path, "results.json") + "config.json"
				if cfg, err := fsys.Open(cfgPath); err == nil {
					read, rerr := ReadConfigJSON(cfg)
					cfg.Close()
					if rerr != nil {
						problems = append(problems, Problem{File: filepath.FromSlash(cfgPath), Rule: "FORMAT", Msg: rerr.Error()})
					} else {
						read.PassIndependent = opts.PassIndependent
						o = read
					}
				}
			}
			f, err := fsys.Open(path)
			if err != nil {
				return err
			}
			ps = ValidateJSONWith(f, o)
			f.Close()
			data++
		case isCSV:
			f, err := fsys.Open(path)
			if err != nil {
				return err
			}
			ps = ValidateCSVFile(d.Name(), f)
			f.Close()
			if strings.HasSuffix(d.Name(), "counter_collection.csv") {
				data++
			}
		default:
			return nil
		}
		rel := filepath.FromSlash(path)
		checked = append(checked, rel)
		for i := range ps {
			ps[i].File = rel
		}
		problems = append(problems, ps...)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if data == 0 {
		return nil, nil, ErrNoOutput
	}
	parents := make([]string, 0, len(passes))
	for p := range passes {
		parents = append(parents, p)
	}
	sort.Strings(parents)
	for _, parent := range parents {
		fs := passes[parent]
		sort.Slice(fs, func(i, j int) bool { return fs[i].n < fs[j].n || fs[i].n == fs[j].n && fs[i].name < fs[j].name })
		for i, f := range fs {
			if f.n != i+1 {
				problems = append(problems, Problem{File: filepath.Join(parent, f.name), Rule: "RPV-5",
					Msg: fmt.Sprintf("the runs' folders must be numbered 1, 2, ... without a gap or a repeat (pass_N, pmc_N for a text input file's jobs); found %s", passList(fs))})
				break
			}
		}
	}
	return checked, problems, nil
}

func passList(fs []passFolder) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.name)
	}
	return strings.Join(s, ", ")
}
