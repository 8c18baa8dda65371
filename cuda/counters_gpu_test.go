package cuda

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/replayspec/replayspec/hsa"
)

// countersOrSkip opens the runtime and skips unless CUPTI counts.
func countersOrSkip(t *testing.T) *Runtime {
	t.Helper()
	rt := openOrSkip(t, nil)
	if ok, why := rt.CountersAvailable(); !ok {
		t.Skip(why.Error())
	}
	return rt
}

// xcheckElems is the cross-checked kernel's size: increment over 16 MiB.
const xcheckElems = 1 << 22

// xcheckMetrics do not depend on timing or cache state.
var xcheckMetrics = []string{
	"smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "sm__ctas_launched.sum",
	"smsp__warps_launched.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
	"l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
}

// xcheckRun is the cross-checked work: increment over xcheckElems items,
// 256 a block, on a fresh buffer.
func xcheckRun(t *testing.T, rt *Runtime) (hsa.Queue, hsa.Allocation) {
	q, err := rt.CreateQueue(agentID)
	if err != nil {
		t.Fatal(err)
	}
	x, err := rt.Allocate(agentID, hsa.DeviceCoarse, 4*xcheckElems)
	if err != nil {
		t.Fatal(err)
	}
	return q, x
}

func xcheckPacket(x hsa.Allocation) hsa.Packet {
	return hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment", Grid: hsa.Dim3{X: xcheckElems},
		Workgroup: hsa.Dim3{X: 256}, Args: []hsa.Arg{buf(x)}}
}

// TestGPUCounters checks real values that follow from the launch alone.
func TestGPUCounters(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	p := xcheckPacket(x)
	p.Profile = &hsa.Profile{Counters: []string{"sm__ctas_launched.sum", "smsp__warps_launched.sum",
		"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "smsp__inst_executed.sum"}}
	groups, err := rt.CounterGroups(p.Profile.Counters)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 {
		t.Fatalf("groups %v: want these four in one pass", groups)
	}
	if err := q.Submit(1, p); err != nil {
		t.Fatal(err)
	}
	v := p.Profile.Values
	if v["sm__ctas_launched.sum"] != xcheckElems/256 || v["smsp__warps_launched.sum"] != xcheckElems/32 ||
		v["l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"] != 4*xcheckElems || v["smsp__inst_executed.sum"] < xcheckElems/32 {
		t.Fatalf("values %v", v)
	}
	if got := readInts(t, rt, x); got[0] != 1 || got[xcheckElems-1] != 1 {
		t.Fatalf("profiled launch did not run once: %d %d", got[0], got[xcheckElems-1])
	}
	_, err = hsa.CounterGroups(rt.Agents()[0], []string{"smsp__inst_executed.sum", "no_such__metric.sum"})
	if err == nil || !strings.Contains(err.Error(), `agent 1 (`) || !strings.Contains(err.Error(), `"no_such__metric.sum"`) {
		t.Fatalf("unknown metric: %v", err)
	}
}

// groupMetrics need several passes together (four on the H200): launch
// counts, instructions, L1, L2 and DRAM traffic, and time.
var groupMetrics = []string{
	"smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "sm__ctas_launched.sum", "smsp__warps_launched.sum",
	"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
	"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"sm__inst_executed_pipe_lsu.sum", "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
	"dram__bytes_read.sum", "dram__bytes_write.sum", "dram__sectors_read.sum",
	"lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
	"lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
	"lts__t_bytes.sum", "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "gpc__cycles_elapsed.max", "smsp__cycles_active.avg",
}

// tolerance is how far one of our values may be from Nsight Compute's on
// the same launch: rel of ncu's value plus abs. docs/cuda.md says why
// each class differs.
type tolerance struct{ rel, abs float64 }

func metricTolerance(m string) tolerance {
	switch {
	case strings.HasPrefix(m, "gpu__time_duration"), strings.Contains(m, "cycles"):
		// Time: the auto range wraps the kernel in CUPTI's own start and
		// stop (about 1.3 µs more than ncu on a 9 µs kernel).
		return tolerance{rel: 0.3, abs: 3000}
	case m == "dram__bytes_write.sum":
		// What the L2 writes back while the kernel runs: ~0 after a flush.
		return tolerance{rel: 0.05, abs: 256 << 10}
	case strings.HasPrefix(m, "lts__t_bytes"), strings.HasPrefix(m, "lts__t_sectors_op"):
		// Every L2 request in the range, the profiler's own too: ncu's
		// range held 2-4% more on the H200.
		return tolerance{rel: 0.05, abs: 4096}
	case strings.HasPrefix(m, "dram__"), strings.HasPrefix(m, "lts__"):
		// The kernel's cache traffic after the flush.
		return tolerance{rel: 0.03, abs: 4096}
	}
	return tolerance{rel: xcheckTolerance} // events of a fixed launch
}

func (tol tolerance) ok(ours, ncu float64) bool {
	return math.Abs(ours-ncu) <= tol.rel*math.Abs(ncu)+tol.abs
}

// ncuRun profiles TestGPUNCUTarget (the cross-checked launch) with metrics
// under Nsight Compute's kernel replay, caches flushed as by default.
func ncuRun(t *testing.T, metrics []string) map[string]float64 {
	t.Helper()
	ncu := ncuPath()
	if ncu == "" {
		t.Skip("no Nsight Compute (ncu) on this machine")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ncu, "--replay-mode", "kernel", "--clock-control", "none", "--cache-control", "all", "-k", "increment", "-c", "1",
		"--csv", "--page", "raw", "--metrics", strings.Join(metrics, ","), self, "-test.run=^TestGPUNCUTarget$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REPLAYSPEC_NCU_TARGET=1", "REPLAYSPEC_CUPTI=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ncu: %v\n%s", err, out)
	}
	theirs, err := ncuValues(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return theirs
}

// replayedDispatches is how many dispatches the cross-checks replay in
// one process.
const replayedDispatches = 20

// TestGPUGroupsMatchNsightCompute is issue 22's check: a metric list that
// needs several passes, replayed the engine's way (snapshot, pass i
// collects group i, restore before every later pass) for 20 dispatches in
// one process; every metric of every group on every dispatch is compared
// with Nsight Compute on the same launch. It failed before issue 22
// (every group after the first read NaN, turned into 0, and the next
// replay failed in cuptiRangeProfilerCounterDataImageInitialize).
func TestGPUGroupsMatchNsightCompute(t *testing.T) {
	rt := countersOrSkip(t)
	theirs := ncuRun(t, groupMetrics)
	q, x := xcheckRun(t, rt)
	groups, err := rt.CounterGroups(groupMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) < 2 {
		t.Fatalf("groups %v: the check needs several passes", groups)
	}
	t.Logf("%d metrics in %d passes: %v", len(groupMetrics), len(groups), groups)
	bad := 0
	for d := range replayedDispatches {
		snap, err := rt.Snapshot(0, agentID, []hsa.Allocation{x})
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range groups {
			if i > 0 {
				if _, err := snap.Restore(); err != nil {
					t.Fatal(err)
				}
			}
			p := xcheckPacket(x)
			p.Tag = uint64(d + 1)
			p.Profile = &hsa.Profile{Counters: g}
			if err := q.Submit(1, p); err != nil {
				t.Fatalf("dispatch %d pass %d (%v): %v", d, i, g, err)
			}
			for _, m := range g {
				v, ok := p.Profile.Values[m]
				tol := metricTolerance(m)
				if !ok || !tol.ok(float64(v), theirs[m]) {
					bad++
					t.Errorf("dispatch %d pass %d: %s = %d (present %v), ncu %.0f (tolerance %.1f%% + %.0f)", d, i, m, v, ok, theirs[m], 100*tol.rel, tol.abs)
				} else if d == 0 || d == replayedDispatches-1 {
					t.Logf("dispatch %d pass %d: %s = %d, ncu %.0f", d, i, m, v, theirs[m])
				}
			}
		}
		snap.Release()
	}
	if got := readInts(t, rt, x); got[0] != replayedDispatches || got[xcheckElems-1] != replayedDispatches {
		t.Fatalf("after %d replayed dispatches: %d %d, want one increment each", replayedDispatches, got[0], got[xcheckElems-1])
	}
	t.Logf("CUPTI calls: %s", rt.CounterCallTimes())
}

// TestGPUCountersAnyOrder collects the groups of a several-pass list in
// other orders than the engine's (reversed, then rotated), dispatch after
// dispatch. CUPTI takes a configuration's passes in order only, so a group
// asked for out of order is collected alone (its own configuration); each
// gives the values it gives in order, or a clear error; never a wrong
// value, never 0 for a value it lacks. Before issue 22's fix of the pass
// order, every group after the first out-of-order one read NaN.
func TestGPUCountersAnyOrder(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	groups, err := rt.CounterGroups(groupMetrics)
	if err != nil {
		t.Fatal(err)
	}
	exact := func(m string) bool { return metricTolerance(m) == tolerance{rel: xcheckTolerance} }
	want := map[string]uint64{}
	collect := func(d, i int) (map[string]uint64, error) {
		p := xcheckPacket(x)
		p.Tag = uint64(1000 + d)
		p.Profile = &hsa.Profile{Counters: groups[i]}
		err := q.Submit(1, p)
		return p.Profile.Values, err
	}
	for i := range groups {
		v, err := collect(0, i)
		if err != nil {
			t.Fatal(err)
		}
		for m, x := range v {
			want[m] = x
		}
	}
	n := len(groups)
	for d := 1; d <= 10; d++ {
		for j := range n {
			i := n - 1 - j // reversed
			if d%2 == 0 {
				i = (j + d) % n // rotated
			}
			v, err := collect(d, i)
			if err != nil {
				if !strings.Contains(err.Error(), "need") {
					t.Fatalf("dispatch %d group %d: %v", d, i, err)
				}
				t.Logf("dispatch %d group %d out of order: %v", d, i, err)
				continue
			}
			for _, m := range groups[i] {
				if exact(m) && v[m] != want[m] {
					t.Errorf("dispatch %d group %d: %s = %d, in order %d", d, i, m, v[m], want[m])
				}
			}
		}
	}
}

// TestGPUCountersUnfinishedDispatch: a dispatch whose loop ends before
// its last pass (continue said stop) leaves CUPTI mid-sequence; the next
// dispatch's pass 0 must still be right (the runtime runs the passes left
// first). Before, the next dispatch read NaN.
func TestGPUCountersUnfinishedDispatch(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	groups, err := rt.CounterGroups(groupMetrics)
	if err != nil {
		t.Fatal(err)
	}
	exact := func(m string) bool { return metricTolerance(m) == tolerance{rel: xcheckTolerance} }
	want := map[string]uint64{}
	for d := range 8 {
		last := len(groups) - 1
		if d%2 == 1 {
			last = d % len(groups) // ends early: passes 0..last
		}
		for i := 0; i <= last; i++ {
			p := xcheckPacket(x)
			p.Tag = uint64(2000 + d)
			p.Profile = &hsa.Profile{Counters: groups[i]}
			if err := q.Submit(1, p); err != nil {
				t.Fatalf("dispatch %d pass %d: %v", d, i, err)
			}
			for _, m := range groups[i] {
				w, seen := want[m]
				if !seen {
					want[m] = p.Profile.Values[m]
				} else if exact(m) && p.Profile.Values[m] != w {
					t.Errorf("dispatch %d pass %d: %s = %d, first dispatch %d", d, i, m, p.Profile.Values[m], w)
				}
			}
		}
	}
	t.Logf("CUPTI calls: %s", rt.CounterCallTimes())
}

// TestGPUCountersSwitchSets alternates two metric sets dispatch after
// dispatch (two tools with their own lists): each keeps its right values.
func TestGPUCountersSwitchSets(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	a := []string{"sm__ctas_launched.sum", "smsp__warps_launched.sum", "dram__bytes_read.sum"}
	b := []string{"smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"}
	want := map[string]uint64{"sm__ctas_launched.sum": xcheckElems / 256, "smsp__warps_launched.sum": xcheckElems / 32,
		"smsp__sass_inst_executed_op_global_ld.sum": xcheckElems / 32, "smsp__sass_inst_executed_op_global_st.sum": xcheckElems / 32}
	for d := range 2 * replayedDispatches {
		list := a
		if d%2 == 1 {
			list = b
		}
		p := xcheckPacket(x)
		p.Tag = uint64(d + 1)
		p.Profile = &hsa.Profile{Counters: list}
		if err := q.Submit(1, p); err != nil {
			t.Fatalf("dispatch %d %v: %v", d, list, err)
		}
		for _, m := range list {
			if w, ok := want[m]; ok && p.Profile.Values[m] != w {
				t.Errorf("dispatch %d: %s = %d, want %d", d, m, p.Profile.Values[m], w)
			}
		}
		if v := p.Profile.Values["dram__bytes_read.sum"]; d%2 == 0 && v < 4*xcheckElems {
			t.Errorf("dispatch %d: dram__bytes_read.sum = %d after a flush, want at least the %d bytes read", d, v, 4*xcheckElems)
		}
	}
	t.Logf("CUPTI calls: %s", rt.CounterCallTimes())
}

// TestGPUNCUTarget is the program Nsight Compute profiles for
// TestGPUMatchesNsightCompute; it does nothing unless asked to.
func TestGPUNCUTarget(t *testing.T) {
	if os.Getenv("REPLAYSPEC_NCU_TARGET") == "" {
		t.Skip("runs only under Nsight Compute, started by TestGPUMatchesNsightCompute")
	}
	rt := openOrSkip(t, nil)
	q, x := xcheckRun(t, rt)
	if err := q.Submit(1, xcheckPacket(x)); err != nil {
		t.Fatal(err)
	}
}

// ncuPath finds Nsight Compute's command line.
func ncuPath() string {
	if p, err := exec.LookPath("ncu"); err == nil {
		return p
	}
	for _, pat := range []string{"/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda/bin/ncu"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	return ""
}

// xcheckTolerance: the cross-checked metrics count events of a fixed
// launch; ours must equal Nsight Compute's to this relative difference.
const xcheckTolerance = 1e-3

// TestGPUMatchesNsightCompute runs the same launch under Nsight Compute
// (this test binary, re-run as TestGPUNCUTarget) and under our collector,
// and compares the metrics that do not depend on timing.
func TestGPUMatchesNsightCompute(t *testing.T) {
	rt := countersOrSkip(t)
	theirs := ncuRun(t, xcheckMetrics)
	q, x := xcheckRun(t, rt)
	ours, err := rt.CollectMetrics(xcheckMetrics, func() error { return q.Submit(1, xcheckPacket(x)) })
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range xcheckMetrics {
		o, n := ours[m], theirs[m]
		t.Logf("%s: ours %.0f, ncu %.0f", m, o, n)
		if n == 0 || math.Abs(o-n)/n > xcheckTolerance {
			t.Errorf("%s: ours %.0f, ncu %.0f (tolerance %.1f%%)", m, o, n, 100*xcheckTolerance)
		}
	}
}

// ncuValues reads the metric row of ncu's --csv --page raw output.
func ncuValues(out []byte) (map[string]float64, error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, `"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) < 3 {
		return nil, fmt.Errorf("ncu printed %d CSV lines, want a header, units and a row", len(lines))
	}
	r := csv.NewReader(strings.NewReader(strings.Join(lines[:3], "\n")))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	vals := map[string]float64{}
	for i, h := range recs[0] {
		if i < len(recs[2]) {
			if v, err := strconv.ParseFloat(strings.ReplaceAll(recs[2][i], ",", ""), 64); err == nil {
				vals[h] = v
			}
		}
	}
	return vals, nil
}

// TestGPUReplayMetricsCUPTISchedule lets CUPTI schedule a list that needs
// several passes (a throughput metric alone needs several): this package
// runs each pass and restores memory before the later ones.
func TestGPUReplayMetricsCUPTISchedule(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	metrics := []string{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "smsp__inst_executed.sum", "sm__ctas_launched.sum"}
	want, err := rt.CounterPasses(metrics)
	if err != nil {
		t.Fatal(err)
	}
	// A single-pass group used before the session: another set on the
	// same profiler.
	before := xcheckPacket(x)
	before.Profile = &hsa.Profile{Counters: []string{"sm__ctas_launched.sum"}}
	if err := q.Submit(1, before); err != nil {
		t.Fatal(err)
	}
	if err := rt.Write(x, 0, make([]byte, 4*xcheckElems)); err != nil {
		t.Fatal(err)
	}
	snap, err := rt.Snapshot(0, agentID, []hsa.Allocation{x})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	vals, passes, err := rt.ReplayMetrics(metrics, func(i int) error {
		if i > 0 {
			_, err := snap.Restore()
			return err
		}
		return nil
	}, func(int) error { return q.Submit(1, xcheckPacket(x)) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CUPTI scheduled %d passes, ran %d: %v", want, passes, vals)
	if passes != want || passes < 2 || vals["sm__ctas_launched.sum"] != xcheckElems/256 {
		t.Fatalf("passes %d (CUPTI %d), values %v", passes, want, vals)
	}
	if got := readInts(t, rt, x); got[0] != 1 || got[xcheckElems-1] != 1 {
		t.Fatalf("after %d passes: %d %d, want one increment", passes, got[0], got[xcheckElems-1])
	}
	// A single-pass group still works after a multi-pass session.
	p := xcheckPacket(x)
	p.Profile = &hsa.Profile{Counters: []string{"sm__ctas_launched.sum"}}
	if err := q.Submit(1, p); err != nil || p.Profile.Values["sm__ctas_launched.sum"] != xcheckElems/256 {
		t.Fatalf("single pass after a session: %v %v", p.Profile.Values, err)
	}
}

// TestGPUSinglePassProbe logs, metric by metric, whether a group that
// CUPTI's host API schedules in one pass is collected in one range-profiler
// pass: some are not (CUPTI wants another pass), which Groups cannot see.
func TestGPUSinglePassProbe(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	for _, m := range []string{"gpu__time_duration.sum", "gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second",
		"dram__cycles_active.avg", "dram__cycles_elapsed.avg", "dram__bytes_read.sum", "sm__cycles_elapsed.avg",
		"fbpa__dram_sectors.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
		"idc__request_cycles_active.avg.pct_of_peak_sustained_elapsed"} {
		_, err := rt.CollectMetrics([]string{m}, func() error { return q.Submit(1, xcheckPacket(x)) })
		t.Logf("%s: alone %d pass(es) by the host API; one range: %v", m, rt.CounterAlonePasses(m), err)
	}
}
