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

// TestGPUCountersAcrossPasses replays with a metric list that needs
// several passes: pass i collects group i, and memory holds one run.
func TestGPUCountersAcrossPasses(t *testing.T) {
	rt := countersOrSkip(t)
	q, x := xcheckRun(t, rt)
	metrics := append(append([]string(nil), xcheckMetrics...), "dram__bytes_read.sum", "dram__bytes_write.sum",
		"lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "sm__cycles_elapsed.avg", "gpc__cycles_elapsed.max",
		"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sm__inst_executed_pipe_lsu.sum", "smsp__sass_inst_executed_op_global_ld.sum")
	groups, err := rt.CounterGroups(metrics)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d metrics in %d single-pass groups", len(metrics), len(groups))
	snap, err := rt.Snapshot(0, agentID, []hsa.Allocation{x})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	seen := map[string]bool{}
	for i, g := range groups {
		if i > 0 {
			if _, err := snap.Restore(); err != nil {
				t.Fatal(err)
			}
		}
		p := xcheckPacket(x)
		p.Profile = &hsa.Profile{Counters: g}
		if err := q.Submit(1, p); err != nil {
			t.Fatalf("pass %d (%v): %v", i, g, err)
		}
		for _, m := range g {
			if _, ok := p.Profile.Values[m]; !ok {
				t.Errorf("pass %d lacks %s", i, m)
			}
			seen[m] = true
		}
	}
	if len(seen) != len(metrics) {
		t.Errorf("collected %d of %d metrics", len(seen), len(metrics))
	}
	if got := readInts(t, rt, x); got[0] != 1 || got[xcheckElems-1] != 1 {
		t.Fatalf("after %d passes: %d %d, want one increment", len(groups), got[0], got[xcheckElems-1])
	}
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
	ncu := ncuPath()
	if ncu == "" {
		t.Skip("no Nsight Compute (ncu) on this machine")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ncu, "--replay-mode", "kernel", "--clock-control", "none", "-k", "increment", "-c", "1",
		"--csv", "--page", "raw", "--metrics", strings.Join(xcheckMetrics, ","), self, "-test.run=^TestGPUNCUTarget$", "-test.count=1")
	cmd.Env = append(os.Environ(), "REPLAYSPEC_NCU_TARGET=1", "REPLAYSPEC_CUPTI=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ncu: %v\n%s", err, out)
	}
	theirs, err := ncuValues(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
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
	// A single-pass group used before the session (its counter data then
	// belongs to the range profiler object the session ends).
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
