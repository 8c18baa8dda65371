package rocprof

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/check"
	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

// toolEvents are the tool's events of one type in a run's trace.
func toolEvents(r *AppRun, typ trace.Type, keep func(trace.Event) bool) []trace.Event {
	var out []trace.Event
	for _, e := range r.Trace {
		if e.Type == typ && (keep == nil || keep(e)) {
			out = append(out, e)
		}
	}
	return out
}

func isReplayContext(e trace.Event) bool {
	return e.Call == trace.CallCreateContext && e.Label == roleKernelReplay
}

// RPV-2: the kernel replay context exists only with the flag, and only
// when the flag is true.
func TestKernelReplayContextOnlyWithFlag(t *testing.T) {
	with := profile(t, "mi300.yaml", kernelReplayArgs).Runs[0]
	if len(toolEvents(with, trace.API, isReplayContext)) != 1 || len(toolEvents(with, trace.Callback, nil)) == 0 {
		t.Errorf("with the flag: no kernel replay context or no callback")
	}
	if n := len(toolEvents(with, trace.Snapshot, nil)); n != 2 {
		t.Errorf("with the flag: %d snapshots, want one per dispatch (2)", n)
	}
	for _, args := range [][]string{
		{"--pmc", "SQ_WAVES SQ_INSTS_VALU TCC_HIT"},
		{"--pmc", "SQ_WAVES", "--replay-mode", "application", "--kernel-replay-beta-enabled"},
	} {
		without := profile(t, "mi300.yaml", args).Runs[0]
		if len(toolEvents(without, trace.API, isReplayContext)) != 0 || len(toolEvents(without, trace.Callback, nil)) != 0 ||
			len(toolEvents(without, trace.PassCount, nil)) != 0 || len(toolEvents(without, trace.Snapshot, nil)) != 0 {
			t.Errorf("%v: the tool used a kernel replay context", args)
		}
		if len(without.Counters) != 2 {
			t.Errorf("%v: %d counter records, want 2 (one per dispatch)", args, len(without.Counters))
		}
	}
}

// RPV-3 / AGT-1: the pass count is the number of groups collectable on the
// dispatch's agent; counters an agent lacks are dropped first.
func TestPassCountPerAgent(t *testing.T) {
	pmc := [][]string{{"SQ_WAVES", "SQ_INSTS_VALU", "TCC_HIT"}, {"SQ_WAVES", "TCC_MISS", "TCC_EA_RDREQ"}}
	rt, err := sim.New(sim.Config{Agents: []sim.AgentConfig{{Kind: "MI300"}, {Kind: "MI200"}, {Kind: "consumer"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"MI300X": 3, "MI210": 2, "RX 7900 XTX": 2}
	for _, a := range rt.Agents() {
		g, err := Groups(a, pmc)
		if err != nil {
			t.Fatal(err)
		}
		if len(g) != want[a.Name] {
			t.Errorf("%s: %d groups %v, want %d", a.Name, len(g), g, want[a.Name])
		}
		for _, grp := range g {
			if slices.Contains(grp, "TCC_EA_RDREQ") && a.Family == hsa.FamilyConsumer {
				t.Errorf("%s: group %v keeps a counter the agent lacks", a.Name, grp)
			}
		}
	}
	g, _ := Groups(rt.Agents()[2], [][]string{{"TCC_EA_RDREQ"}, {"SQ_WAVES", "SQ_WAVES"}})
	if len(g) != 1 || !slices.Equal(g[0], []string{"SQ_WAVES"}) {
		t.Errorf("consumer groups %v, want [[SQ_WAVES]]: a group of missing counters is no pass, a repeated counter is one", g)
	}

	r := profile(t, "mixed.yaml", kernelReplayArgs).Runs[0]
	for _, e := range toolEvents(r, trace.PassCount, nil) {
		if n := int64(len(r.AgentGroups[hsa.AgentID(e.Agent)])); *e.Result != n {
			t.Errorf("dispatch %d on agent %d: pass count %d, want %d", e.Dispatch, e.Agent, *e.Result, n)
		}
	}
	passes := map[uint64]uint64{}
	for _, c := range r.Counters {
		passes[c.Dispatch.DispatchID]++
	}
	if passes[1] != 3 || passes[2] != 2 || passes[3] != 2 {
		t.Errorf("records per dispatch %v, want 1:3 (MI300) 2:2 3:2 (MI200)", passes)
	}
}

// RPV-4: only replay_pass_count is installed; pass i collects group i
// through the per-thread state, cleared after every pass.
func TestPassIndexThroughThreadState(t *testing.T) {
	r := profile(t, "mixed.yaml", kernelReplayArgs).Runs[0]
	for _, e := range toolEvents(r, trace.Returned, func(e trace.Event) bool { return e.Op == trace.OpConfig && e.Phase == trace.PhaseEnter }) {
		if !slices.Contains(e.Payload, "replay_pass_count") || slices.Contains(e.Payload, "replay_continue") {
			t.Errorf("dispatch %d: the tool left %v in the payload, want replay_pass_count and no replay_continue", e.Dispatch, e.Payload)
		}
	}
	if len(r.Published) != 0 {
		t.Errorf("pass state left published after the run: %v", r.Published)
	}
	for _, c := range r.Counters {
		var names []string
		for _, v := range c.Counters {
			names = append(names, v.Name)
		}
		want := r.AgentGroups[c.Dispatch.AgentID][c.Pass]
		if !slices.Equal(names, want) {
			t.Errorf("dispatch %d pass %d collected %v, want group %d %v", c.Dispatch.DispatchID, c.Pass, names, c.Pass, want)
		}
	}
}

// The run's trace is an ordinary trace: the rule oracles find nothing
// wrong in it, and a spec's expect block is judged on it. (The groups do
// not overlap here: the AGT-1 oracle reads a counter collected in two
// passes as a wrapped plan, which is right for one counter list split
// over passes but not for a user's --pmc groups that share a counter.)
func TestTraceIsOrdinary(t *testing.T) {
	res := profile(t, "graph-filter.yaml", []string{"--pmc", "SQ_WAVES SQ_INSTS_VALU TCC_HIT", "--pmc", "TCC_MISS,TCC_EA_RDREQ",
		"--replay-mode", "kernel", "--kernel-replay-beta-enabled", "--kernel-trace"})
	tr := res.Runs[0].TraceOf(res.Spec.Name)
	for _, v := range check.Trace(tr) {
		t.Errorf("oracle: %s", v)
	}
	if vs := check.Expectations(res.Spec, tr); len(vs) != 0 {
		t.Errorf("the spec's expect block: %v", vs)
	}
	bad := res.Spec
	bad.Expect.Completions = map[string]spec.Count{"inc": spec.Exactly(2)}
	if vs := check.Expectations(bad, tr); len(vs) != 1 || !strings.Contains(vs[0].String(), "it saw 1") {
		t.Errorf("a wrong expectation: %v", vs)
	}
}

// RPV-5: without kernel replay several groups run the whole application
// once per group, each on a fresh machine, output in pass_N.
func TestApplicationReplay(t *testing.T) {
	res := profile(t, "mi300.yaml", []string{"--pmc", "SQ_WAVES", "--pmc", "TCC_HIT", "--pmc", "GRBM_COUNT"})
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(res.Runs))
	}
	for i, r := range res.Runs {
		if r.Config.Number != i+1 || r.Config.Dir != "pass_"+string(rune('1'+i)) || r.Config.KernelReplay {
			t.Errorf("run %d: number %d dir %q, kernel replay %v", i, r.Config.Number, r.Config.Dir, r.Config.KernelReplay)
		}
		if len(r.Counters) != 2 || r.Counters[0].Dispatch.DispatchID != 1 {
			t.Errorf("run %d: %d records, first dispatch id %d: want a fresh application (ids from 1)", i+1, len(r.Counters), r.Counters[0].Dispatch.DispatchID)
		}
		if r.InitTime != res.Runs[0].InitTime {
			t.Errorf("run %d starts at %d, run 1 at %d: not a fresh machine", i+1, r.InitTime, res.Runs[0].InitTime)
		}
		for _, c := range r.Counters {
			if len(c.Counters) != 1 || c.Counters[0].Name != r.Config.Groups[0][0] || c.Pass != 0 {
				t.Errorf("run %d collected %v (pass %d), want group %v at pass 0", i+1, c.Counters, c.Pass, r.Config.Groups)
			}
		}
	}
	fs := res.Files()
	for _, n := range []string{"pass_1/replayspec-sim/1000_results.json", "pass_2/replayspec-sim/1000_counter_collection.csv", "pass_3/replayspec-sim/1000_agent_info.csv"} {
		if _, ok := fs[n]; !ok {
			t.Errorf("no %s among %v", n, sortedNames(fs))
		}
	}
}

func sortedNames(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RPV-6: replay_pass on every JSON record (0 when not replayed, as the
// kernel replay writer does); the CSV has the reference's columns either way.
func TestReplayPassFieldAndCSVColumns(t *testing.T) {
	for _, c := range []struct {
		args   []string
		passes []uint64
	}{
		{kernelReplayArgs, []uint64{0, 0, 1, 1, 2, 2}},
		{[]string{"--pmc", "SQ_WAVES"}, []uint64{0, 0}},
	} {
		fs := profile(t, "mi300.yaml", c.args).Files()
		var doc struct {
			Tool []struct {
				CallbackRecords struct {
					CounterCollection []map[string]json.RawMessage `json:"counter_collection"`
				} `json:"callback_records"`
			} `json:"rocprofiler-sdk-tool"`
		}
		if err := json.Unmarshal(fs["replayspec-sim/1000_results.json"], &doc); err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, r := range doc.Tool[0].CallbackRecords.CounterCollection {
			var p uint64
			if err := json.Unmarshal(r["replay_pass"], &p); err != nil {
				t.Fatalf("%v: a record without a numeric replay_pass: %v", c.args, err)
			}
			got = append(got, p)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.passes) {
			t.Errorf("%v: replay_pass values %v, want %v", c.args, got, c.passes)
		}
		head, err := csv.NewReader(bytes.NewReader(fs["replayspec-sim/1000_counter_collection.csv"])).Read()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(head, CounterCSVColumns) {
			t.Errorf("%v: CSV columns %v, want %v", c.args, head, CounterCSVColumns)
		}
	}
}

// RPV-7: kernel trace and stats see one record per pass.
func TestKernelTraceOneRecordPerPass(t *testing.T) {
	res := profile(t, "mi300.yaml", append(append([]string{}, kernelReplayArgs...), "--kernel-trace", "--stats"))
	r := res.Runs[0]
	if len(r.Kernels) != 6 {
		t.Errorf("%d kernel dispatch records, want 6 (2 dispatches x 3 passes)", len(r.Kernels))
	}
	stats := string(res.Files()["replayspec-sim/1000_kernel_stats.csv"])
	if !strings.Contains(stats, `"increment",3,`) {
		t.Errorf("stats do not count every pass as a call:\n%s", stats)
	}
}

// Boolean options honour an explicit false: --kernel-trace=false traces
// nothing, --stats no writes no statistics.
func TestBooleanFalse(t *testing.T) {
	fs := profile(t, "mi300.yaml", []string{"--pmc", "SQ_WAVES", "--kernel-trace=false", "--stats", "no"}).Files()
	for name := range fs {
		if strings.Contains(name, "kernel_trace") || strings.Contains(name, "stats") {
			t.Errorf("%s written although the option was false", name)
		}
	}
}

// Kernel filters: counters only for the dispatches they keep; kernel
// tracing sees every dispatch.
func TestKernelFilters(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []uint64 // dispatch ids with counter records
	}{
		{[]string{"--kernel-include-regex", "^sax"}, []uint64{2}},
		{[]string{"--kernel-exclude-regex", "saxpy"}, []uint64{1, 3, 4, 5}},
		{[]string{"--kernel-iteration-range", "[2-3]"}, []uint64{3, 4}}, // increment's 2nd and 3rd launch, saxpy has one
		{[]string{"--kernel-include-regex", "increment", "--kernel-iteration-range", "1", "4"}, []uint64{1, 5}},
	} {
		res := profile(t, "graph-filter.yaml", append(append(append([]string{}, kernelReplayArgs...), "--kernel-trace"), c.args...))
		r := res.Runs[0]
		var got []uint64
		for _, rec := range r.Counters {
			if !slices.Contains(got, rec.Dispatch.DispatchID) {
				got = append(got, rec.Dispatch.DispatchID)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: counters for dispatches %v, want %v", c.args, got, c.want)
		}
		traced := map[uint64]bool{}
		for _, k := range r.Kernels {
			traced[k.Dispatch.DispatchID] = true
		}
		if len(traced) != 5 {
			t.Errorf("%v: kernel trace covers %d dispatches, want all 5", c.args, len(traced))
		}
		for _, e := range toolEvents(r, trace.PassCount, nil) {
			if !slices.Contains(c.want, e.Dispatch) && *e.Result != 1 {
				t.Errorf("%v: dispatch %d is filtered out but asked for %d passes: it should run once", c.args, e.Dispatch, *e.Result)
			}
		}
	}
}

// Counters no agent has, and (without kernel replay) a group that needs
// several hardware passes, are refused before anything runs.
func TestCounterDiagnostics(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pmc", "SQ_WAVES", "NOT_A_COUNTER"}, `"NOT_A_COUNTER" is not a counter of any agent`},
		{[]string{"--pmc", "TCC_HIT", "TCC_MISS"}, "does not fit one hardware pass on agent 1 (MI300X, gfx942): it needs 2"},
	} {
		p, s := plan(t, "mi300.yaml", c.args)
		_, err := Run(p, s)
		var d *Diagnostic
		if !errors.As(err, &d) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a diagnostic containing %q", c.args, err, c.want)
		}
	}
	// Under kernel replay the same group is split into passes instead.
	p, s := plan(t, "mi300.yaml", []string{"--pmc", "TCC_HIT", "TCC_MISS", "--replay-mode", "kernel", "--kernel-replay-beta-enabled"})
	if _, err := Run(p, s); err != nil {
		t.Errorf("kernel replay refused a group it can split: %v", err)
	}
}
