package rocprof

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
// pass that collected it: wave and instruction counts (RPV-8). Cycle and
// cache counters legitimately differ between executions and are not
// compared.
func PassIndependent(name string) bool {
	return name == "SQ_WAVES" || strings.HasPrefix(name, "SQ_INSTS_")
}

// ValidateOptions tune ValidateJSON.
type ValidateOptions struct {
	// PassIndependent overrides the package's PassIndependent.
	PassIndependent func(counter string) bool
}

// What the validator reads: only the fields the rules need, with pointers
// where absence matters, so that real rocprofv3 output (with many more
// fields) reads too.
type (
	readHandle struct {
		Handle *uint64 `json:"handle"`
	}
	readDoc struct {
		Tool *[]readTool `json:"rocprofiler-sdk-tool"`
	}
	readTool struct {
		Metadata struct {
			Config struct {
				KernelReplay *bool `json:"kernel_replay"`
			} `json:"config"`
		} `json:"metadata"`
		Counters []struct {
			ID      readHandle `json:"id"`
			AgentID readHandle `json:"agent_id"`
			Name    string     `json:"name"`
		} `json:"counters"`
		CallbackRecords struct {
			CounterCollection []readRecord `json:"counter_collection"`
		} `json:"callback_records"`
	}
	readRecord struct {
		DispatchData *struct {
			DispatchInfo *struct {
				AgentID    readHandle `json:"agent_id"`
				DispatchID *uint64    `json:"dispatch_id"`
			} `json:"dispatch_info"`
		} `json:"dispatch_data"`
		Records []struct {
			CounterID readHandle `json:"counter_id"`
			Value     *float64   `json:"value"`
		} `json:"records"`
		ReplayPass *json.RawMessage `json:"replay_pass"`
	}
)

// ValidateJSON checks a rocprofv3 results.json against RPV-3, RPV-6 and
// RPV-8 with the default options.
func ValidateJSON(r io.Reader) []Problem { return ValidateJSONWith(r, ValidateOptions{}) }

// record is one counter_collection entry as the checks see it.
type record struct {
	index    int
	dispatch uint64
	agent    uint64
	pass     int64 // -1: no replay_pass
	counters map[string]float64
	names    string // sorted counter names, the group's signature
}

// ValidateJSONWith is ValidateJSON with options.
func ValidateJSONWith(r io.Reader, opts ValidateOptions) (problems []Problem) {
	invariant := opts.PassIndependent
	if invariant == nil {
		invariant = PassIndependent
	}
	add := func(rule string, dispatch uint64, format string, args ...any) {
		problems = append(problems, Problem{Rule: rule, Dispatch: dispatch, Msg: fmt.Sprintf(format, args...)})
	}
	var doc readDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		add("FORMAT", 0, "not rocprofv3 JSON: %v", err)
		return problems
	}
	if doc.Tool == nil || len(*doc.Tool) == 0 {
		add("FORMAT", 0, "no \"rocprofiler-sdk-tool\" array with an entry: not rocprofv3 JSON output")
		return problems
	}
	for ti, t := range *doc.Tool {
		ps := validateTool(t, invariant)
		if len(*doc.Tool) > 1 {
			for i := range ps {
				ps[i].Msg = fmt.Sprintf("rocprofiler-sdk-tool[%d]: %s", ti, ps[i].Msg)
			}
		}
		problems = append(problems, ps...)
	}
	return problems
}

func validateTool(t readTool, invariant func(string) bool) (problems []Problem) {
	add := func(rule string, dispatch uint64, format string, args ...any) {
		problems = append(problems, Problem{Rule: rule, Dispatch: dispatch, Msg: fmt.Sprintf(format, args...)})
	}
	names := map[uint64]string{}
	for _, c := range t.Counters {
		if c.ID.Handle != nil {
			names[*c.ID.Handle] = c.Name
		}
	}
	var recs []record
	withPass, withoutPass := 0, 0
	for i, raw := range t.CallbackRecords.CounterCollection {
		rec := record{index: i, pass: -1, counters: map[string]float64{}}
		if raw.DispatchData == nil || raw.DispatchData.DispatchInfo == nil || raw.DispatchData.DispatchInfo.DispatchID == nil {
			add("FORMAT", 0, "counter_collection[%d] has no dispatch_data.dispatch_info.dispatch_id", i)
			continue
		}
		info := raw.DispatchData.DispatchInfo
		rec.dispatch = *info.DispatchID
		if info.AgentID.Handle != nil {
			rec.agent = *info.AgentID.Handle
		}
		if raw.ReplayPass != nil {
			var p int64
			if err := json.Unmarshal(*raw.ReplayPass, &p); err != nil || p < 0 {
				add("RPV-6", rec.dispatch, "counter_collection[%d]: replay_pass is %s, not a pass index (0, 1, 2, ...)", i, string(*raw.ReplayPass))
				continue
			}
			rec.pass = p
			withPass++
		} else {
			withoutPass++
		}
		var list []string
		for _, v := range raw.Records {
			name := fmt.Sprintf("counter#%d", deref(v.CounterID.Handle))
			if n, ok := names[deref(v.CounterID.Handle)]; ok {
				name = n
			}
			if v.Value != nil {
				rec.counters[name] += *v.Value // dimension instances add up
			}
			list = append(list, name)
		}
		sort.Strings(list)
		rec.names = strings.Join(dedupe(list), " ")
		recs = append(recs, rec)
	}
	kernelReplay := withPass > 0 || (t.Metadata.Config.KernelReplay != nil && *t.Metadata.Config.KernelReplay)

	// RPV-6: under kernel replay every record says its pass.
	if kernelReplay && withoutPass > 0 {
		for _, r := range recs {
			if r.pass < 0 {
				add("RPV-6", r.dispatch, "counter_collection[%d] has no replay_pass although the run used kernel replay: its pass cannot be told apart from the dispatch's other passes", r.index)
			}
		}
	}

	// RPV-8: dispatch ids are non-zero and contiguous.
	ids := map[uint64]bool{}
	for _, r := range recs {
		if r.dispatch == 0 {
			add("RPV-8", 0, "counter_collection[%d] has dispatch_id 0: dispatch ids start at 1", r.index)
			continue
		}
		ids[r.dispatch] = true
	}
	sorted := make([]uint64, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	if len(sorted) > 1 {
		var missing []string
		for i := 1; i < len(sorted); i++ {
			for id := sorted[i-1] + 1; id < sorted[i] && len(missing) < 10; id++ {
				missing = append(missing, strconv.FormatUint(id, 10))
			}
		}
		if len(missing) > 0 {
			add("RPV-8", 0, "dispatch ids %d..%d are not contiguous: no record for %s", sorted[0], sorted[len(sorted)-1], strings.Join(missing, ", "))
		}
	}

	byDispatch := map[uint64][]record{}
	for _, r := range recs {
		byDispatch[r.dispatch] = append(byDispatch[r.dispatch], r)
	}
	if !kernelReplay {
		for _, id := range sorted {
			if n := len(byDispatch[id]); n > 1 {
				add("RPV-6", id, "%d counter records share the dispatch id and none has replay_pass: without kernel replay a dispatch has one record, with it each needs its pass", n)
			}
		}
		return problems
	}

	// RPV-8: passes 0..N-1 exactly once per dispatch.
	type agentPasses struct {
		dispatch uint64
		n        int
	}
	perAgent := map[uint64]agentPasses{}
	groupOf := map[uint64]map[int64]struct {
		dispatch uint64
		names    string
	}{}
	for _, id := range sorted {
		rs := byDispatch[id]
		seen := map[int64]int{}
		var maxPass int64 = -1
		for _, r := range rs {
			if r.pass < 0 {
				continue
			}
			seen[r.pass]++
			maxPass = max(maxPass, r.pass)
		}
		// At most len(seen)+10 steps, however large a pass index the file claims.
		var missing []string
		for p := int64(0); p <= maxPass && len(missing) < 10; p++ {
			if seen[p] == 0 {
				missing = append(missing, strconv.FormatInt(p, 10))
			}
		}
		if len(missing) > 0 {
			add("RPV-8", id, "replay_pass %s is missing: passes must run 0..%d without a gap", strings.Join(missing, ", "), maxPass)
		}
		dups := make([]int64, 0, len(seen))
		for p, k := range seen {
			if k > 1 {
				dups = append(dups, p)
			}
		}
		sort.Slice(dups, func(i, j int) bool { return dups[i] < dups[j] })
		for _, p := range dups {
			add("RPV-8", id, "replay_pass %d appears %d times: each pass of a dispatch has exactly one record", p, seen[p])
		}
		n := int(maxPass + 1)
		agent := rs[0].agent
		if prev, ok := perAgent[agent]; ok && prev.n != n && n > 0 {
			add("RPV-8", id, "%d passes, but dispatch %d on the same agent %d had %d: the pass count is the number of counter groups collectable on the agent", n, prev.dispatch, agent, prev.n)
		} else if !ok && n > 0 {
			perAgent[agent] = agentPasses{id, n}
		}
		// RPV-3 / AGT-1: pass i collects group i on every dispatch of an agent.
		if groupOf[agent] == nil {
			groupOf[agent] = map[int64]struct {
				dispatch uint64
				names    string
			}{}
		}
		for _, r := range rs {
			if r.pass < 0 || seen[r.pass] != 1 {
				continue
			}
			g, ok := groupOf[agent][r.pass]
			if !ok {
				groupOf[agent][r.pass] = struct {
					dispatch uint64
					names    string
				}{id, r.names}
			} else if g.names != r.names {
				add("RPV-3", id, "replay_pass %d collected [%s], but the same pass of dispatch %d on agent %d collected [%s]: pass i must collect counter group i of the agent", r.pass, r.names, g.dispatch, agent, g.names)
			}
		}
		// RPV-8: counters that do not depend on the pass agree across passes.
		first := map[string]record{}
		reported := map[string]bool{}
		for _, r := range rs {
			for _, name := range sortedKeys(r.counters) {
				if !invariant(name) {
					continue
				}
				v := r.counters[name]
				f, ok := first[name]
				if !ok {
					first[name] = r
					continue
				}
				if f.counters[name] != v && !reported[name] {
					reported[name] = true
					add("RPV-8", id, "%s is %s in replay_pass %d but %s in replay_pass %d: a counter that does not depend on the pass must be equal in every pass (was memory restored between passes?)",
						name, fmtValue(f.counters[name]), f.pass, fmtValue(v), r.pass)
				}
			}
		}
	}
	return problems
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fmtValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ValidateCSV checks a counter_collection.csv: the reference's columns
// are there and there is no Replay_Pass column (RPV-6).
func ValidateCSV(r io.Reader) []Problem {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return []Problem{{Rule: "FORMAT", Msg: fmt.Sprintf("cannot read the CSV header: %v", err)}}
	}
	var problems []Problem
	have := map[string]bool{}
	for _, h := range header {
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

// ValidateDir checks every rocprofv3 output file under dir: each
// *results.json with ValidateJSONWith, each *counter_collection.csv with
// ValidateCSV, and application replay's pass_N folders for gaps (RPV-5).
// It returns the files checked and the problems; an error means dir could
// not be read or holds no output.
func ValidateDir(dir string, opts ValidateOptions) (checked []string, problems []Problem, err error) {
	passes := map[string][]int{} // parent -> pass numbers
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if m := passDir.FindStringSubmatch(d.Name()); m != nil {
				n, _ := strconv.Atoi(m[1])
				parent := filepath.Dir(rel)
				passes[parent] = append(passes[parent], n)
			}
			return nil
		}
		var ps []Problem
		switch {
		case strings.HasSuffix(d.Name(), "results.json"):
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			ps = ValidateJSONWith(f, opts)
			f.Close()
		case strings.HasSuffix(d.Name(), "counter_collection.csv"):
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			ps = ValidateCSV(f)
			f.Close()
		default:
			return nil
		}
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
	if len(checked) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", dir, ErrNoOutput)
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
