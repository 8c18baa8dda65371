package rocprof

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/internal/hsa"
	"github.com/replayspec/replayspec/internal/sim"
	"github.com/replayspec/replayspec/spec"
	"github.com/replayspec/replayspec/trace"
)

var kernelReplayArgs = append(append([]string{}, replayPMC...), "--replay-mode", "kernel", "--kernel-replay-beta-enabled")

func hasEvent(p *Pass, what, ctx string) bool {
	for _, e := range p.Events {
		if e.What == what && (ctx == "" || e.Context == ctx) {
			return true
		}
	}
	return false
}

func countTrace(p *Pass, typ trace.Type) int {
	n := 0
	for _, e := range p.Trace {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// RPV-2: the kernel replay context exists only with the flag.
func TestKernelReplayContextOnlyWithFlag(t *testing.T) {
	with := profile(t, "mi300.yaml", kernelReplayArgs).Passes[0]
	if !hasEvent(with, "create_context", "kernel_replay") || !hasEvent(with, "CONFIG_ENTER", "") {
		t.Errorf("with the flag: no kernel replay context or no CONFIG callback: %+v", with.Events)
	}
	if countTrace(with, trace.Snapshot) != 2 {
		t.Errorf("with the flag: %d snapshots, want one per dispatch (2)", countTrace(with, trace.Snapshot))
	}
	// The same single group without the flag: one plain run.
	without := profile(t, "mi300.yaml", []string{"--pmc", "SQ_WAVES SQ_INSTS_VALU TCC_HIT"}).Passes[0]
	if hasEvent(without, "create_context", "kernel_replay") || hasEvent(without, "CONFIG_ENTER", "") || hasEvent(without, "pass_count", "") {
		t.Errorf("without the flag the tool created or used a kernel replay context: %+v", without.Events)
	}
	if n := countTrace(without, trace.Snapshot); n != 0 {
		t.Errorf("without the flag: %d snapshots", n)
	}
	data, err := without.JSON(Options{}, "x")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("replay_pass")) {
		t.Error("without kernel replay the JSON has replay_pass")
	}
	if len(without.Counters) != 2 {
		t.Errorf("%d counter records, want 2 (one per dispatch)", len(without.Counters))
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
	// A group made only of counters an agent lacks is no pass there.
	g, _ := Groups(rt.Agents()[2], [][]string{{"TCC_EA_RDREQ"}, {"SQ_WAVES"}})
	if len(g) != 1 || g[0][0] != "SQ_WAVES" {
		t.Errorf("consumer groups %v, want [[SQ_WAVES]]", g)
	}

	p := profile(t, "mixed.yaml", kernelReplayArgs).Passes[0]
	for _, e := range p.Events {
		if e.What != "pass_count" {
			continue
		}
		if n := uint64(len(p.AgentGroups[e.Agent])); e.N != n {
			t.Errorf("dispatch %d on agent %d: pass count %d, want %d", e.Dispatch, e.Agent, e.N, n)
		}
	}
	passes := map[uint64]uint64{}
	for _, r := range p.Counters {
		passes[r.Dispatch.DispatchID]++
	}
	if passes[1] != 3 || passes[2] != 2 || passes[3] != 2 {
		t.Errorf("records per dispatch %v, want 1:3 (MI300) 2:2 3:2 (MI200)", passes)
	}
}

// RPV-4: no replay_continue, no local toggles; pass i collects group i
// through the per-thread state, cleared after every pass.
func TestPassIndexThroughThreadState(t *testing.T) {
	p := profile(t, "mixed.yaml", kernelReplayArgs).Passes[0]
	for _, e := range p.Events {
		switch e.What {
		case "CONFIG_ENTER":
			if !slices.Equal(e.Payload, []string{"replay_pass_count"}) {
				t.Errorf("CONFIG ENTER left %v in the payload, want only replay_pass_count", e.Payload)
			}
		}
	}
	for _, e := range p.Trace {
		if e.Type == trace.Local || e.Type == trace.Continue {
			t.Errorf("the tool used %s: %+v", e.Type, e)
		}
	}
	if len(p.Published) != 0 {
		t.Errorf("pass state left published after the run: %v", p.Published)
	}
	for _, r := range p.Counters {
		if r.Pass == nil {
			t.Fatalf("dispatch %d: record without a pass", r.Dispatch.DispatchID)
		}
		var names []string
		for _, c := range r.Counters {
			names = append(names, c.Name)
		}
		want := p.AgentGroups[r.Dispatch.AgentID][*r.Pass]
		if !slices.Equal(names, want) {
			t.Errorf("dispatch %d pass %d collected %v, want group %d %v", r.Dispatch.DispatchID, *r.Pass, names, *r.Pass, want)
		}
	}
}

// RPV-5: without kernel replay several groups run the whole application
// once per group, each on a fresh machine, output in pass_N.
func TestApplicationReplay(t *testing.T) {
	res := profile(t, "mi300.yaml", []string{"--pmc", "SQ_WAVES", "--pmc", "TCC_HIT", "--pmc", "GRBM_COUNT", "-f", "csv", "json"})
	if len(res.Passes) != 3 {
		t.Fatalf("%d runs, want 3", len(res.Passes))
	}
	for i, p := range res.Passes {
		if p.Number != i+1 || p.KernelReplay {
			t.Errorf("run %d: number %d, kernel replay %v", i, p.Number, p.KernelReplay)
		}
		if len(p.Counters) != 2 || p.Counters[0].Dispatch.DispatchID != 1 {
			t.Errorf("run %d: %d records, first dispatch id %d: want a fresh application (ids from 1)", i+1, len(p.Counters), p.Counters[0].Dispatch.DispatchID)
		}
		if p.InitTime != res.Passes[0].InitTime {
			t.Errorf("run %d starts at %d, run 1 at %d: not a fresh machine", i+1, p.InitTime, res.Passes[0].InitTime)
		}
		for _, r := range p.Counters {
			if len(r.Counters) != 1 || r.Counters[0].Name != res.Options.PMC[i][0] {
				t.Errorf("run %d collected %v, want group %v", i+1, r.Counters, res.Options.PMC[i])
			}
		}
	}
	fs := files(t, res)
	for _, n := range []string{"pass_1/1000_results.json", "pass_2/1000_counter_collection.csv", "pass_3/1000_results.json"} {
		if _, ok := fs[n]; !ok {
			t.Errorf("no %s among %v", n, keys(fs))
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RPV-6: replay_pass in every JSON record under kernel replay, none
// without; the CSV has the reference's columns either way.
func TestReplayPassFieldAndCSVColumns(t *testing.T) {
	for _, c := range []struct {
		args     []string
		wantPass bool
	}{
		{kernelReplayArgs, true},
		{[]string{"--pmc", "SQ_WAVES"}, false},
	} {
		res := profile(t, "mi300.yaml", append(c.args, "-f", "json", "csv"))
		fs := files(t, res)
		var doc struct {
			Tool []struct {
				CallbackRecords struct {
					CounterCollection []map[string]json.RawMessage `json:"counter_collection"`
				} `json:"callback_records"`
			} `json:"rocprofiler-sdk-tool"`
		}
		if err := json.Unmarshal(fs["1000_results.json"], &doc); err != nil {
			t.Fatal(err)
		}
		recs := doc.Tool[0].CallbackRecords.CounterCollection
		if len(recs) == 0 {
			t.Fatal("no counter records")
		}
		for i, r := range recs {
			if _, ok := r["replay_pass"]; ok != c.wantPass {
				t.Errorf("%v: record %d has replay_pass: %v, want %v", c.args, i, ok, c.wantPass)
			}
		}
		header, err := csv.NewReader(bytes.NewReader(fs["1000_counter_collection.csv"])).Read()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(header, CounterCSVColumns) {
			t.Errorf("%v: CSV columns %v, want %v", c.args, header, CounterCSVColumns)
		}
	}
}

// RPV-7: kernel trace and stats see one record per pass.
func TestKernelTraceOneRecordPerPass(t *testing.T) {
	res := profile(t, "mi300.yaml", append(kernelReplayArgs, "--kernel-trace", "--stats"))
	p := res.Passes[0]
	if len(p.Kernels) != 6 {
		t.Errorf("%d kernel dispatch records, want 6 (2 dispatches x 3 passes)", len(p.Kernels))
	}
	stats := string(files(t, res)["1000_kernel_stats.csv"])
	if !strings.Contains(stats, `"increment","3"`) {
		t.Errorf("stats do not count every pass as a call:\n%s", stats)
	}
}

// Counters no agent has, and (without kernel replay) a group that needs
// several hardware passes, are refused before anything runs.
func TestCounterDiagnostics(t *testing.T) {
	s, err := spec.Load("testdata/mi300.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pmc  [][]string
		mode string
		want string
	}{
		{[][]string{{"SQ_WAVES", "NOT_A_COUNTER"}}, "", `"NOT_A_COUNTER" is not a counter of any agent`},
		{[][]string{{"TCC_HIT", "TCC_MISS"}}, "", "does not fit one hardware pass on agent 1 (MI300X, gfx942): it needs 2"},
	} {
		_, err := Run(Options{PMC: c.pmc, ReplayMode: c.mode}, s)
		var d *Diagnostic
		if !errors.As(err, &d) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a diagnostic containing %q", c.pmc, err, c.want)
		}
	}
	// Under kernel replay the same group is split into passes instead.
	if _, err := Run(Options{PMC: [][]string{{"TCC_HIT", "TCC_MISS"}}, ReplayMode: "kernel", KernelReplayBeta: true}, s); err != nil {
		t.Errorf("kernel replay refused a group it can split: %v", err)
	}
}
