package cuda

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/replayspec/replayspec/hsa"
)

// TestGPUCUPTIProbe is the experiment behind issue 22's first item: how
// CUPTI's range profiler must be driven when this package replays the
// kernel itself. It runs one strategy, named by REPLAYSPEC_PROBE, over
// several replayed dispatches of increment (1% of a 1 GiB buffer, the
// Nsight Compute target's launch) and prints one JSON line per pass: the
// values, what cuptiRangeProfilerStop reported, the time of the pass and,
// per dispatch, the time of each CUPTI call. Each strategy runs in a
// process of its own (CUPTI keeps state per process). It skips unless
// asked for: the strategies are documented in docs/cuda.md with what they
// gave on the H200.
//
//	groups-user         one single-pass configuration per group, one
//	                    range profiler object, SetConfig before every
//	                    pass (what the runtime did before issue 22)
//	groups-app          the same in application replay
//	groups-user-state   the same, SetConfig with Stop's pass state
//	groups-fresh        a fresh range profiler object every pass
//	union-app           one configuration of every metric (CUPTI's pass
//	                    schedule), application replay, SetConfig with
//	                    passIndex k before pass k, decode and evaluate
//	                    after every pass
//	union-user          that configuration in user replay, SetConfig once
//	                    for the process, decode at the end of a dispatch
//	union-user-reset    SetConfig at every dispatch
//	union-user-each     SetConfig at every dispatch, decode and evaluate
//	                    after every pass
//	symbols             which profiler entry points libcupti exports
//	kernel-replay, repeat-one, legacy-user, legacy-kernel
//	                    issue 22's speed item: probe_speed_gpu_test.go
//
// The union and speed strategies take REPLAYSPEC_PROBE_METRICS (names,
// comma-separated, or @FILE) instead of the candidates below.
// REPLAYSPEC_PROBE_RANGE=auto uses CUPTI_AutoRange (the range is the
// kernel) instead of a user range around it; REPLAYSPEC_PROBE_DISPATCHES
// sets the dispatches (default 20). Dispatch d flushes the L2 before
// each pass by writing nothing (d%3 == 0), twice (1) or four times (2) the
// L2's size of scratch memory.
func TestGPUCUPTIProbe(t *testing.T) {
	strat := os.Getenv("REPLAYSPEC_PROBE")
	if strat == "" {
		t.Skip("an experiment: set REPLAYSPEC_PROBE to a strategy (see the comment)")
	}
	if strat == "symbols" {
		probeSymbols(t)
		return
	}
	rt := countersOrSkip(t)
	pr := newProbe(t, rt)
	dispatches := 20
	if n, err := strconv.Atoi(os.Getenv("REPLAYSPEC_PROBE_DISPATCHES")); err == nil && n > 0 {
		dispatches = n
	}
	switch {
	case strings.HasPrefix(strat, "groups-"):
		pr.groups(strat, dispatches)
	case strings.HasPrefix(strat, "union-"):
		pr.union(strat, dispatches)
	case strat == "kernel-replay" || strat == "repeat-one" || strings.HasPrefix(strat, "legacy-"):
		pr.speed(strat, dispatches) // probe_speed_gpu_test.go
	default:
		t.Fatalf("unknown strategy %q", strat)
	}
}

var probeCandidates = []string{
	"smsp__inst_executed.sum", "smsp__thread_inst_executed.sum", "sm__ctas_launched.sum", "smsp__warps_launched.sum",
	"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
	"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
	"sm__cycles_elapsed.avg", "gpc__cycles_elapsed.max", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
	"sm__inst_executed_pipe_lsu.sum", "smsp__sass_inst_executed_op_global_ld.sum",
	"smsp__sass_inst_executed_op_global_st.sum", "gpu__time_duration.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
	"lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
	"smsp__cycles_active.avg", "dram__sectors_read.sum", "lts__t_bytes.sum", "sm__warps_active.avg.per_cycle_active",
}

type probe struct {
	t       *testing.T
	rt      *Runtime
	p       *profiler
	x       hsa.Allocation
	grid    uint64
	scratch uint64
	l2      uint64
	auto    bool
	ev0     uintptr
	ev1     uintptr
	pin     runtime.Pinner
	stop    pRPStop
	enc     *json.Encoder
	metrics []string
	name    []byte
}

type probeLine struct {
	Strategy   string            `json:"strategy"`
	Range      string            `json:"range"`
	Dispatch   int               `json:"dispatch"`
	Pass       int               `json:"pass"`
	Flush      int               `json:"flush"`
	FlushUs    float64           `json:"flush_us,omitempty"`
	WallMs     float64           `json:"wall_ms"`
	KernelUs   float64           `json:"kernel_us"`
	StopPass   uintptr           `json:"stop_pass"`
	StopNest   uintptr           `json:"stop_nest"`
	All        uint8             `json:"all"`
	Err        string            `json:"err,omitempty"`
	Values     map[string]string `json:"values,omitempty"`
	Calls      map[string]string `json:"calls,omitempty"`
	Groups     [][]string        `json:"groups,omitempty"`
	UnionPass  int               `json:"union_passes,omitempty"`
	L2         uint64            `json:"l2,omitempty"`
	Skipped    []string          `json:"skipped,omitempty"`
	RestoreUs  float64           `json:"restore_us,omitempty"`
	ReleaseUs  float64           `json:"release_us,omitempty"`
	SnapshotUs float64           `json:"snapshot_us,omitempty"`
}

func newProbe(t *testing.T, rt *Runtime) *probe {
	pr := &probe{t: t, rt: rt, p: rt.prof, auto: os.Getenv("REPLAYSPEC_PROBE_RANGE") == "auto", enc: json.NewEncoder(os.Stdout)}
	pr.name = []byte("replayspec\x00")
	pr.pin.Pin(&pr.name[0])
	t.Cleanup(pr.pin.Unpin)
	const size = 1 << 30
	x, err := rt.Allocate(agentID, hsa.DeviceCoarse, size)
	if err != nil {
		t.Fatal(err)
	}
	pr.x = x
	pr.grid = size / 4 / 100
	fill := hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "fill", Grid: hsa.Dim3{X: size / 4}, Workgroup: hsa.Dim3{X: 256},
		Args: []hsa.Arg{buf(x), {Scalar: 7}}}
	q, err := rt.CreateQueue(agentID)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Submit(1, fill); err != nil {
		t.Fatal(err)
	}
	err = rt.w.do(func() error {
		d := rt.drv
		var l2 int32
		if err := call("cuDeviceGetAttribute", d.deviceGetAttribute, uintptr(unsafe.Pointer(&l2)), 38, uintptr(rt.dev)); err != nil {
			return err
		}
		pr.l2 = uint64(l2)
		var err error
		if pr.scratch, err = d.alloc(4 * pr.l2); err != nil {
			return err
		}
		if pr.ev0, err = d.newEvent(); err != nil {
			return err
		}
		pr.ev1, err = d.newEvent()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, m := range probeCandidates {
		if rt.prof.AlonePasses(m) == 1 {
			pr.metrics = append(pr.metrics, m)
		} else {
			skipped = append(skipped, m)
		}
	}
	_ = pr.enc.Encode(probeLine{Strategy: "setup", L2: pr.l2, Skipped: skipped})
	return pr
}

func (pr *probe) rangeName() string {
	if pr.auto {
		return "auto"
	}
	return "user"
}

// flush writes n L2 sizes of scratch (driver thread) and waits.
func (pr *probe) flush(n uint64) (time.Duration, error) {
	if n == 0 {
		return 0, nil
	}
	d := pr.rt.drv
	began := time.Now()
	words := n * pr.l2 / 4
	if err := d.cuLaunch(pr.rt.kernels["fill"], uint32((words+255)/256), 256, []uint64{pr.scratch, 1, words}, 0); err != nil {
		return 0, err
	}
	err := call("cuCtxSynchronize", d.ctxSynchronize)
	return time.Since(began), err
}

func (pr *probe) launch() (float64, error) {
	d := pr.rt.drv
	l, err := pr.rt.prepare(&hsa.Packet{Type: hsa.KernelDispatchPacket, Kernel: "increment", Grid: hsa.Dim3{X: uint32(pr.grid)},
		Workgroup: hsa.Dim3{X: 256}, Args: []hsa.Arg{buf(pr.x)}})
	if err != nil {
		return 0, err
	}
	if err := d.record(pr.ev0, 0); err != nil {
		return 0, err
	}
	if err := d.cuLaunch(l.fn, l.blocks, l.block, l.values, 0); err != nil {
		return 0, err
	}
	if err := d.record(pr.ev1, 0); err != nil {
		return 0, err
	}
	if err := call("cuCtxSynchronize", d.ctxSynchronize); err != nil {
		return 0, err
	}
	ns, err := d.elapsedNs(pr.ev0, pr.ev1)
	return float64(ns) / 1e3, err
}

// Raw range profiler calls (driver thread).

func (pr *probe) enable() error {
	p := pr.p
	p.disable() // the runtime's own object (calibration), if any
	en := sized(&pRPEnable{ctx: pr.rt.ctx}, end(unsafe.Offsetof(pRPEnable{}.object), 8))
	if err := timed(p, "cuptiRangeProfilerEnable", p.lib.rpEnable, en); err != nil {
		return err
	}
	p.object = en.object
	return nil
}

func (pr *probe) disable() error {
	p := pr.p
	err := timed(p, "cuptiRangeProfilerDisable", p.lib.rpDisable, p.objectParams())
	p.object = 0
	return err
}

func (pr *probe) newData(metrics []string) ([]byte, error) {
	p := pr.p
	names := newCStrings(metrics)
	defer names.free()
	sz := sized(&pRPCounterDataSize{object: p.object, names: names.array(), numMetrics: uintptr(len(metrics)), maxRanges: 1, maxNodes: 1},
		end(unsafe.Offsetof(pRPCounterDataSize{}.size), 8))
	if err := timed(p, "cuptiRangeProfilerGetCounterDataSize", p.lib.rpGetCounterDataSize, sz); err != nil {
		return nil, err
	}
	data := make([]byte, sz.size)
	pr.pin.Pin(&data[0])
	return data, nil
}

func (pr *probe) initData(data []byte) error {
	p := pr.p
	ini := sized(&pRPCounterDataInit{object: p.object, size: uintptr(len(data)), data: bytesPtr(data)}, end(unsafe.Offsetof(pRPCounterDataInit{}.data), 8))
	return timed(p, "cuptiRangeProfilerCounterDataImageInitialize", p.lib.rpCounterDataImageInitialize, ini)
}

func (pr *probe) setConfig(config, data []byte, replay uint32, passIndex uintptr, nest uint16) error {
	p := pr.p
	rng := uint32(cuptiUserRange)
	if pr.auto {
		rng = 1
	}
	set := sized(&pRPSetConfig{object: p.object, configSize: uintptr(len(config)), config: bytesPtr(config),
		counterDataSize: uintptr(len(data)), counterData: bytesPtr(data), rangeMode: rng, replayMode: replay,
		maxRangesPerPass: 1, numNestingLevels: 1, minNestingLevel: 1, passIndex: passIndex, targetNestingLevel: nest},
		end(unsafe.Offsetof(pRPSetConfig{}.targetNestingLevel), 2))
	return timed(p, "cuptiRangeProfilerSetConfig", p.lib.rpSetConfig, set)
}

// run is one pass: Start, [Push], the kernel, [Pop], Stop.
func (pr *probe) run() (float64, error) {
	p := pr.p
	if err := timed(p, "cuptiRangeProfilerStart", p.lib.rpStart, p.objectParams()); err != nil {
		return 0, err
	}
	if !pr.auto {
		push := sized(&pRPPushRange{object: p.object, name: bytesPtr(pr.name)}, end(unsafe.Offsetof(pRPPushRange{}.name), 8))
		if err := timed(p, "cuptiRangeProfilerPushRange", p.lib.rpPushRange, push); err != nil {
			return 0, err
		}
	}
	us, err := pr.launch()
	if err != nil {
		return 0, err
	}
	if !pr.auto {
		if err := timed(p, "cuptiRangeProfilerPopRange", p.lib.rpPopRange, p.objectParams()); err != nil {
			return us, err
		}
	}
	stop := sized(&pRPStop{object: p.object}, end(unsafe.Offsetof(pRPStop{}.allPassSubmitted), 1))
	err = timed(p, "cuptiRangeProfilerStop", p.lib.rpStop, stop)
	pr.stop = *stop
	return us, err
}

func (pr *probe) decode() error {
	p := pr.p
	dec := sized(&pRPDecode{object: p.object}, end(unsafe.Offsetof(pRPDecode{}.dropped), 8))
	if err := timed(p, "cuptiRangeProfilerDecodeData", p.lib.rpDecodeData, dec); err != nil {
		return err
	}
	if dec.dropped != 0 {
		return fmt.Errorf("dropped %d ranges", dec.dropped)
	}
	return nil
}

func (pr *probe) eval(host uintptr, data []byte, metrics []string) (map[string]string, error) {
	p := pr.p
	info := sized(&pRPCounterDataInfo{counterData: bytesPtr(data), size: uintptr(len(data))}, end(unsafe.Offsetof(pRPCounterDataInfo{}.ranges), 8))
	if err := timed(p, "cuptiRangeProfilerGetCounterDataInfo", p.lib.rpGetCounterDataInfo, info); err != nil {
		return nil, err
	}
	if info.ranges < 1 {
		return nil, fmt.Errorf("no range in the counter data")
	}
	names := newCStrings(metrics)
	defer names.free()
	vals := make([]float64, len(metrics))
	var pin runtime.Pinner
	pin.Pin(&vals[0])
	defer pin.Unpin()
	ev := sized(&pEvaluate{host: host, counterData: bytesPtr(data), dataSize: uintptr(len(data)), rangeIndex: 0,
		names: names.array(), numMetrics: uintptr(len(metrics)), values: uintptr(unsafe.Pointer(&vals[0]))},
		end(unsafe.Offsetof(pEvaluate{}.values), 8))
	if err := timed(p, "cuptiProfilerHostEvaluateToGpuValues", p.lib.hostEvaluateToGpuValues, ev); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, m := range metrics {
		out[m] = strconv.FormatFloat(vals[i], 'g', -1, 64)
	}
	return out, nil
}

func (pr *probe) calls() map[string]string {
	out := map[string]string{}
	for n, c := range pr.p.takeSpent() {
		out[strings.TrimPrefix(n, "cupti")] = fmt.Sprintf("%d× %.3f ms", c.n, c.total.Seconds()*1e3/float64(c.n))
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

const (
	replayApplication = 1
	replayUser        = 3
)

// groups: one single-pass configuration per group.
func (pr *probe) groups(strat string, dispatches int) {
	rt, p := pr.rt, pr.p
	groups, err := p.Groups(pr.metrics)
	if err != nil {
		pr.t.Fatal(err)
	}
	cfgs := make([]*metricSet, len(groups))
	for i, g := range groups {
		if cfgs[i], err = p.configure(g); err != nil {
			pr.t.Fatal(err)
		}
	}
	_ = pr.enc.Encode(probeLine{Strategy: strat, Range: pr.rangeName(), Groups: groups})
	datas := make([][]byte, len(groups))
	err = rt.w.do(func() error {
		if err := pr.enable(); err != nil {
			return err
		}
		for i, g := range groups {
			var err error
			if datas[i], err = pr.newData(g); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		pr.t.Fatal(err)
	}
	replay := uint32(replayUser)
	if strat == "groups-app" {
		replay = replayApplication
	}
	for d := range dispatches {
		began := time.Now()
		snap, err := rt.Snapshot(0, agentID, []hsa.Allocation{pr.x})
		if err != nil {
			pr.t.Fatal(err)
		}
		snapUs := float64(time.Since(began).Microseconds())
		for k, g := range groups {
			line := probeLine{Strategy: strat, Range: pr.rangeName(), Dispatch: d, Pass: k, Flush: 2 * (d % 3), SnapshotUs: snapUs}
			if k > 0 {
				line.RestoreUs = pr.timedRestore(snap)
			}
			err := rt.w.do(func() error {
				fl, err := pr.flush(uint64(line.Flush))
				if err != nil {
					return err
				}
				line.FlushUs = float64(fl.Microseconds())
				began := time.Now()
				defer func() { line.WallMs = time.Since(began).Seconds() * 1e3 }()
				if strat == "groups-fresh" {
					if err := pr.disable(); err != nil {
						return err
					}
					if err := pr.enable(); err != nil {
						return err
					}
					if datas[k], err = pr.newData(g); err != nil {
						return err
					}
				}
				if err := pr.initData(datas[k]); err != nil {
					return err
				}
				var passIndex uintptr
				nest := uint16(1)
				if strat == "groups-user-state" && (d > 0 || k > 0) {
					passIndex, nest = pr.stop.passIndex, uint16(pr.stop.targetNestingLevel)
				}
				if err := pr.setConfig(cfgs[k].config, datas[k], replay, passIndex, nest); err != nil {
					return err
				}
				if line.KernelUs, err = pr.run(); err != nil {
					return err
				}
				line.StopPass, line.StopNest, line.All = pr.stop.passIndex, pr.stop.targetNestingLevel, pr.stop.allPassSubmitted
				if err := pr.decode(); err != nil {
					return err
				}
				line.Values, err = pr.eval(cfgs[k].host, datas[k], g)
				return err
			})
			line.Err = errText(err)
			_ = pr.enc.Encode(line)
		}
		began = time.Now()
		snap.Release()
		_ = pr.enc.Encode(probeLine{Strategy: strat, Dispatch: d, Pass: -1, Calls: pr.calls(), ReleaseUs: float64(time.Since(began).Microseconds())})
	}
}

// union: one configuration of every metric, CUPTI's pass schedule.
func (pr *probe) union(strat string, dispatches int) {
	rt, p := pr.rt, pr.p
	metrics := pr.probeMetrics()
	c, err := p.set(metrics)
	if err != nil {
		pr.t.Fatal(err)
	}
	n := c.passes
	_ = pr.enc.Encode(probeLine{Strategy: strat, Range: pr.rangeName(), UnionPass: n})
	var data []byte
	err = rt.w.do(func() error {
		if err := pr.enable(); err != nil {
			return err
		}
		data, err = pr.newData(metrics)
		return err
	})
	if err != nil {
		pr.t.Fatal(err)
	}
	each := strat == "union-app" || strat == "union-user-each"
	for d := range dispatches {
		snap, err := rt.Snapshot(0, agentID, []hsa.Allocation{pr.x})
		if err != nil {
			pr.t.Fatal(err)
		}
		err = rt.w.do(func() error {
			if err := pr.initData(data); err != nil {
				return err
			}
			if strat == "union-user-reset" || strat == "union-user-each" || (strat == "union-user" && d == 0) {
				return pr.setConfig(c.config, data, replayUser, 0, 1)
			}
			return nil
		})
		if err != nil {
			_ = pr.enc.Encode(probeLine{Strategy: strat, Dispatch: d, Pass: -2, Err: err.Error()})
		}
		for k := 0; k < n+2; k++ {
			line := probeLine{Strategy: strat, Range: pr.rangeName(), Dispatch: d, Pass: k, Flush: 2 * (d % 3)}
			if k > 0 {
				line.RestoreUs = pr.timedRestore(snap)
			}
			err := rt.w.do(func() error {
				fl, err := pr.flush(uint64(line.Flush))
				if err != nil {
					return err
				}
				line.FlushUs = float64(fl.Microseconds())
				began := time.Now()
				defer func() { line.WallMs = time.Since(began).Seconds() * 1e3 }()
				if strat == "union-app" {
					if err := pr.setConfig(c.config, data, replayApplication, uintptr(k), 1); err != nil {
						return err
					}
				}
				if line.KernelUs, err = pr.run(); err != nil {
					return err
				}
				line.StopPass, line.StopNest, line.All = pr.stop.passIndex, pr.stop.targetNestingLevel, pr.stop.allPassSubmitted
				if each || pr.stop.allPassSubmitted != 0 {
					if err := pr.decode(); err != nil {
						return err
					}
					line.Values, err = pr.eval(c.host, data, metrics)
				}
				return err
			})
			line.Err = errText(err)
			_ = pr.enc.Encode(line)
			if err != nil || line.All != 0 || (strat == "union-app" && k+1 >= n) {
				break
			}
		}
		snap.Release()
		_ = pr.enc.Encode(probeLine{Strategy: strat, Dispatch: d, Pass: -1, Calls: pr.calls()})
	}
}

// probeSymbols lists the profiler entry points the CUPTI library exports,
// the range profiler's and the older profiler API's.
func probeSymbols(t *testing.T) {
	var lib library
	var err error
	for _, name := range cuptiLibraries {
		if lib, err = dlopen(name); err == nil {
			break
		}
	}
	if lib == nil {
		t.Skip("no CUPTI")
	}
	for _, s := range []string{"cuptiProfilerBeginSession", "cuptiProfilerEndSession", "cuptiProfilerSetConfig", "cuptiProfilerUnsetConfig",
		"cuptiProfilerBeginPass", "cuptiProfilerEndPass", "cuptiProfilerEnableProfiling", "cuptiProfilerDisableProfiling",
		"cuptiProfilerFlushCounterData", "cuptiProfilerIsPassCollected", "cuptiRangeProfilerSetConfig", "cuptiRangeProfilerCounterDataGetRangeInfo",
		"cuptiProfilerHostGetSinglePassSets", "cuptiGetCacheControl", "cuptiActivityEnableHWTrace", "cuptiCheckpointSave",
		"cuptiProfilerHostGetMaxNumHardwareMetricsPerPass", "cuptiProfilerHostGetMetricProperties", "cuptiGetVersion"} {
		addr, err := lib.Sym(s)
		fmt.Printf("symbol %s: %v %v\n", s, addr != 0, err)
	}
}

// timedRestore restores snap before a later pass and returns how long it
// took in µs; a failed restore ends the probe.
func (pr *probe) timedRestore(snap interface{ Restore() (uint64, error) }) float64 {
	began := time.Now()
	if _, err := snap.Restore(); err != nil {
		pr.t.Fatal(err)
	}
	return float64(time.Since(began).Microseconds())
}
