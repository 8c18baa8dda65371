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
	Rule     string // RPV-3, RPV-5, RPV-6, RPV-8, or FORMAT for unreadable output
	Dispatch uint64 // 0 when the problem is not about one dispatch
	Msg      string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File + ": ")
	}
	b.WriteString(p.Rule + ": ")
	if p.Dispatch != 0 {
		fmt.Fprintf(&b, "dispatch %d: ", p.Dispatch)
	}
	b.WriteString(p.Msg)
	return b.String()
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
		Agents []struct {
			ID   readHandle `json:"id"`
			Type *int       `json:"type"`
		} `json:"agents"`
		Counters []struct {
			ID      readHandle `json:"id"`
			AgentID readHandle `json:"agent_id"`
			Name    string     `json:"name"`
		} `json:"counters"`
		CallbackRecords struct {
			CounterCollection []readRecord `json:"counter_collection"`
		} `json:"callback_records"`
		BufferRecords struct {
			KernelDispatch []struct {
				DispatchInfo *readInfo `json:"dispatch_info"`
			} `json:"kernel_dispatch"`
		} `json:"buffer_records"`
	}
	readRecord struct {
		DispatchData *struct {
			DispatchInfo *readInfo `json:"dispatch_info"`
		} `json:"dispatch_data"`
		Records []struct {
			CounterID readHandle `json:"counter_id"`
			Value     *float64   `json:"value"`
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
}

type validator struct {
	opts     ValidateOptions
	problems []Problem
}

func (v *validator) add(rule string, dispatch uint64, format string, args ...any) {
	v.problems = append(v.problems, Problem{Rule: rule, Dispatch: dispatch, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) tool(t readTool) []Problem {
	names := map[uint64]string{}
	agentCounters := map[uint64]map[string]bool{} // agent handle -> counters the file lists for it
	for _, c := range t.Counters {
		if c.ID.Handle == nil {
			continue
		}
		names[*c.ID.Handle] = c.Name
		if c.AgentID.Handle != nil {
			a := *c.AgentID.Handle
			if agentCounters[a] == nil {
				agentCounters[a] = map[string]bool{}
			}
			agentCounters[a][c.Name] = true
		}
	}
	recs := v.records(t, names)
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
	v.contiguous(t, ids, agentCounters)
	if !kernelReplay {
		for _, id := range ids {
			if n := len(byDispatch[id]); n > 1 {
				v.add("RPV-6", id, "%d counter records share the dispatch id in a run without kernel replay: such a dispatch has one record (with kernel replay each says its replay_pass)", n)
			}
		}
	}
	kernelRecords := map[uint64]int{}
	for _, k := range t.BufferRecords.KernelDispatch {
		if k.DispatchInfo != nil && k.DispatchInfo.DispatchID != nil {
			kernelRecords[*k.DispatchInfo.DispatchID]++
		}
	}

	perAgent := map[uint64]struct {
		dispatch uint64
		n        int
	}{}
	groupOf := map[uint64]map[int64]record{} // agent -> pass -> first record seen
	for _, id := range ids {
		rs := byDispatch[id]
		v.sameDispatch(id, rs)
		passes, ok := v.passes(id, rs, kernelReplay)
		if n := kernelRecords[id]; n > 0 && n != len(rs) {
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
				perAgent[agent] = struct {
					dispatch uint64
					n        int
				}{id, n}
			}
		}
		if v.opts.Groups != nil {
			v.groups(id, passes, expectedGroups(v.opts.Groups, agentCounters[agent]), kernelReplay)
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
		}
		v.invariant(id, passes)
	}
	v.allZero(recs)
	return v.problems
}

// records reads the counter records, reporting unreadable ones.
func (v *validator) records(t readTool, names map[uint64]string) []record {
	var recs []record
	for i, raw := range t.CallbackRecords.CounterCollection {
		if raw.DispatchData == nil || raw.DispatchData.DispatchInfo == nil || raw.DispatchData.DispatchInfo.DispatchID == nil {
			v.add("FORMAT", 0, "counter_collection[%d] has no dispatch_data.dispatch_info.dispatch_id", i)
			continue
		}
		info := raw.DispatchData.DispatchInfo
		r := record{index: i, dispatch: *info.DispatchID, pass: -1, counters: map[string]float64{},
			kernel: info.KernelID, queue: info.QueueID.Handle}
		if info.AgentID.Handle != nil {
			r.agent = *info.AgentID.Handle
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
			name, ok := names[h]
			if !ok {
				v.add("FORMAT", r.dispatch, "counter_collection[%d].records[%d] has counter_id %d, which the file's counters list does not name", i, k, h)
				name = "counter#" + strconv.FormatUint(h, 10)
			}
			if c.Value != nil {
				r.counters[name] += *c.Value // dimension instances add up
			}
		}
		for n := range r.counters {
			r.names = append(r.names, n)
		}
		sort.Strings(r.names)
		recs = append(recs, r)
	}
	return recs
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
		for _, a := range t.Agents {
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
		var never []string
		never = append(never, keys(remaining)...)
		for _, og := range groups[g+1:] {
			never = append(never, og...)
		}
		v.add("RPV-3", id, "requested counter(s) %s never collected: the %d passes cover groups 0..%d of %d; every requested group is collected in some pass", strings.Join(never, ", "), len(passes), g-1, len(groups))
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

var passDir = regexp.MustCompile(`^pass_([0-9]+)$`)

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
	passes := map[string][]int{} // parent -> pass numbers
	data := 0                    // results.json and counter_collection.csv files
	err = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if m := passDir.FindStringSubmatch(d.Name()); m != nil {
				n, _ := strconv.Atoi(m[1])
				parent := filepath.Dir(filepath.FromSlash(path))
				passes[parent] = append(passes[parent], n)
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
		ns := passes[parent]
		sort.Ints(ns)
		for i, n := range ns {
			if n != i+1 {
				problems = append(problems, Problem{File: filepath.Join(parent, fmt.Sprintf("pass_%d", n)), Rule: "RPV-5",
					Msg: fmt.Sprintf("application replay folders must be pass_1, pass_2, ... without a gap; found %s", passList(ns))})
				break
			}
		}
	}
	return checked, problems, nil
}

func passList(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprintf("pass_%d", n))
	}
	return strings.Join(s, ", ")
}
