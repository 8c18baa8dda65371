package cuda

import (
	"fmt"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/replayspec/replayspec/hsa"
)

// Issue 22's speed item: can CUPTI program a pass faster than the range
// profiler's Start in application replay (~20 ms a pass on the H200)?
// These strategies of TestGPUCUPTIProbe time the other ways CUPTI 13.0
// offers, on the same metric list and kernel as the others:
//
//	kernel-replay       range profiler, CUPTI_KernelReplay: CUPTI replays
//	                    the kernel itself inside one launch (its own save
//	                    and restore); the launch's wall time is every pass
//	repeat-one          range profiler, user replay, a one-pass
//	                    configuration Started and Stopped again and again:
//	                    is Start's cost per Start or per change of pass?
//	legacy-user         the older Profiler API (cuptiProfilerBeginSession
//	                    once, SetConfig per dispatch, BeginPass,
//	                    EnableProfiling, kernel, DisableProfiling, EndPass
//	                    a pass, FlushCounterData at the end); the session
//	                    stays up across passes and dispatches
//	legacy-kernel       the older API in kernel replay
//
// REPLAYSPEC_PROBE_METRICS (comma-separated) replaces the metric list.

// legacyLib is the older Profiler API's entry points.
type legacyLib struct {
	beginSession, endSession, setConfig, unsetConfig          uintptr
	beginPass, endPass, enableProfiling, disableProfiling     uintptr
	flushCounterData, scratchSize, scratchInit, isPassCollect uintptr
}

func openLegacy() (*legacyLib, error) {
	var lib library
	var err error
	names := cuptiLibraries
	if p := os.Getenv("REPLAYSPEC_CUPTI"); p != "" {
		names = append([]string{p}, names...)
	}
	for _, name := range names {
		if lib, err = dlopen(name); err == nil {
			break
		}
	}
	if lib == nil {
		return nil, fmt.Errorf("no CUPTI: %v", err)
	}
	l := &legacyLib{}
	for slot, name := range map[*uintptr]string{
		&l.beginSession: "cuptiProfilerBeginSession", &l.endSession: "cuptiProfilerEndSession",
		&l.setConfig: "cuptiProfilerSetConfig", &l.unsetConfig: "cuptiProfilerUnsetConfig",
		&l.beginPass: "cuptiProfilerBeginPass", &l.endPass: "cuptiProfilerEndPass",
		&l.enableProfiling: "cuptiProfilerEnableProfiling", &l.disableProfiling: "cuptiProfilerDisableProfiling",
		&l.flushCounterData: "cuptiProfilerFlushCounterData", &l.scratchSize: "cuptiProfilerCounterDataImageCalculateScratchBufferSize",
		&l.scratchInit: "cuptiProfilerCounterDataImageInitializeScratchBuffer", &l.isPassCollect: "cuptiProfilerIsPassCollected",
	} {
		addr, err := lib.Sym(name)
		if err != nil || addr == 0 {
			return nil, fmt.Errorf("libcupti lacks %s: %v", name, err)
		}
		*slot = addr
	}
	return l, nil
}

// The older API's parameter structs (cupti_profiler_target.h).
type pLCtx struct {
	cuptiHdr
	ctx uintptr
}

type pLBeginSession struct {
	cuptiHdr
	ctx                uintptr
	imageSize          uintptr
	image              uintptr
	scratchSize        uintptr
	scratch            uintptr
	dump               uint8
	path               uintptr
	rangeMode          uint32
	replayMode         uint32
	maxRangesPerPass   uintptr
	maxLaunchesPerPass uintptr
}

type pLSetConfig struct {
	cuptiHdr
	ctx                uintptr
	config             uintptr
	configSize         uintptr
	minNestingLevel    uint16
	numNestingLevels   uint16
	passIndex          uintptr
	targetNestingLevel uint16
}

type pLEndPass struct {
	cuptiHdr
	ctx                uintptr
	targetNestingLevel uint16
	passIndex          uintptr
	allSubmitted       uint8
}

type pLFlush struct {
	cuptiHdr
	ctx           uintptr
	rangesDropped uintptr
	bytesDropped  uintptr
}

type pLScratchSize struct {
	cuptiHdr
	imageSize   uintptr
	image       uintptr
	scratchSize uintptr
}

type pLScratchInit struct {
	cuptiHdr
	imageSize   uintptr
	image       uintptr
	scratchSize uintptr
	scratch     uintptr
}

const replayKernel = 2 // CUPTI_KernelReplay

func (pr *probe) ctxParams() *pLCtx {
	return sized(&pLCtx{ctx: pr.rt.ctx}, end(unsafe.Offsetof(pLCtx{}.ctx), 8))
}

// probeMetrics is the metric list of the speed strategies: the probe's
// candidates, or REPLAYSPEC_PROBE_METRICS (names, comma-separated, or
// @FILE holding them), less those CUPTI does not collect in one pass alone
// (as cudabench's "in one-pass groups").
func (pr *probe) probeMetrics() []string {
	m := os.Getenv("REPLAYSPEC_PROBE_METRICS")
	if m == "" {
		return pr.metrics
	}
	if f, ok := strings.CutPrefix(m, "@"); ok {
		b, err := os.ReadFile(f)
		if err != nil {
			pr.t.Fatal(err)
		}
		m = strings.TrimSpace(string(b))
	}
	var out []string
	for _, name := range strings.Split(m, ",") {
		if !strings.Contains(name, "Triage") && pr.p.AlonePasses(name) == 1 {
			out = append(out, name)
		}
	}
	return out
}

// speed runs one of the strategies above.
func (pr *probe) speed(strat string, dispatches int) {
	switch strat {
	case "kernel-replay":
		pr.kernelReplay(dispatches)
	case "repeat-one":
		pr.repeatOne(dispatches)
	case "legacy-user", "legacy-kernel":
		pr.legacy(strat, dispatches)
	default:
		pr.t.Fatalf("unknown strategy %q", strat)
	}
}

// kernelReplay: CUPTI replays each launch itself. It runs the whole list,
// then its first metric alone and gpu__time_duration.sum alone (one pass
// each, the bases of a per-extra-pass figure).
func (pr *probe) kernelReplay(dispatches int) {
	rt, p := pr.rt, pr.p
	metrics := pr.probeMetrics()
	for i, list := range [][]string{metrics, metrics[:1], {"gpu__time_duration.sum"}} {
		s, err := p.set(list)
		if err != nil {
			pr.t.Fatal(err)
		}
		strat := fmt.Sprintf("kernel-replay/%d-passes/%d", s.passes, i)
		_ = pr.enc.Encode(probeLine{Strategy: strat, Range: "auto", UnionPass: s.passes})
		var data []byte
		err = rt.w.do(func() error {
			if err := pr.enable(); err != nil {
				return err
			}
			if data, err = pr.newData(list); err != nil {
				return err
			}
			auto := pr.auto
			pr.auto = true
			defer func() { pr.auto = auto }()
			if err := pr.initData(data); err != nil {
				return err
			}
			return pr.setConfig(s.config, data, replayKernel, 0, 1)
		})
		if err != nil {
			_ = pr.enc.Encode(probeLine{Strategy: strat, Pass: -2, Err: err.Error()})
			continue
		}
		for d := range dispatches {
			line := probeLine{Strategy: strat, Range: "auto", Dispatch: d, Flush: 2 * (d % 3)}
			err := rt.w.do(func() error {
				if _, err := pr.flush(uint64(line.Flush)); err != nil {
					return err
				}
				if d > 0 {
					if err := pr.initData(data); err != nil {
						return err
					}
				}
				began := time.Now()
				defer func() { line.WallMs = time.Since(began).Seconds() * 1e3 }()
				if err := timed(p, "cuptiRangeProfilerStart", p.lib.rpStart, p.objectParams()); err != nil {
					return err
				}
				var err error
				if line.KernelUs, err = pr.launch(); err != nil {
					return err
				}
				stop := sized(&pRPStop{object: p.object}, end(unsafe.Offsetof(pRPStop{}.allPassSubmitted), 1))
				if err := timed(p, "cuptiRangeProfilerStop", p.lib.rpStop, stop); err != nil {
					return err
				}
				line.StopPass, line.All = stop.passIndex, stop.allPassSubmitted
				if err := pr.decode(); err != nil {
					return err
				}
				line.Values, err = pr.eval(s.host, data, list)
				return err
			})
			line.Err = errText(err)
			line.Calls = pr.calls()
			_ = pr.enc.Encode(line)
		}
		_ = rt.w.do(pr.disable)
	}
}

// repeatOne: a one-pass configuration of each metric of the list that
// CUPTI collects in one pass alone, user replay, Start/kernel/Stop ten
// times over; then the whole list's passes, each Started ten times in a
// row (application replay naming the same pass again), to tell a Start
// from a change of what is programmed.
func (pr *probe) repeatOne(dispatches int) {
	p := pr.p
	metrics := pr.probeMetrics()
	pr.auto = true
	picks := []string{"dram__bytes_read.sum", "lts__t_sectors_op_read.sum", "smsp__inst_executed.sum", "gpu__time_duration.sum"}
	for _, m := range picks {
		s, err := p.set([]string{m})
		if err != nil || s.passes != 1 {
			_ = pr.enc.Encode(probeLine{Strategy: "repeat-one/" + m, Pass: -2, Err: fmt.Sprintf("%v (passes %d)", err, s.passes)})
			continue
		}
		pr.repeat("repeat-one/"+m, s, []int{0}, min(dispatches, 10))
	}
	s, err := p.set(metrics)
	if err != nil {
		pr.t.Fatal(err)
	}
	var order []int
	for k := range s.passes {
		order = append(order, k)
	}
	pr.repeat("repeat-pass", s, order, min(dispatches, 10))
}

// repeat runs, for each pass k of order, reps Start/kernel/Stop cycles,
// the image initialized and SetConfig naming pass k before each
// (application replay; user replay for a one-pass set).
func (pr *probe) repeat(strat string, s *metricSet, order []int, reps int) {
	rt := pr.rt
	var data []byte
	err := rt.w.do(func() error {
		if err := pr.enable(); err != nil {
			return err
		}
		var err error
		if data, err = pr.newData(s.metrics); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		_ = pr.enc.Encode(probeLine{Strategy: strat, Pass: -2, Err: err.Error()})
		return
	}
	for _, k := range order {
		for r := range reps {
			line := probeLine{Strategy: strat, Range: "auto", Dispatch: r, Pass: k}
			err := rt.w.do(func() error {
				began := time.Now()
				defer func() { line.WallMs = time.Since(began).Seconds() * 1e3 }()
				if err := pr.initData(data); err != nil {
					return err
				}
				replay, pass := uint32(replayApplication), uintptr(k)
				if s.passes == 1 {
					replay, pass = replayUser, 0
				}
				if err := pr.setConfig(s.config, data, replay, pass, 1); err != nil {
					return err
				}
				var err error
				if line.KernelUs, err = pr.run(); err != nil {
					return err
				}
				line.StopPass, line.All = pr.stop.passIndex, pr.stop.allPassSubmitted
				return pr.decode()
			})
			line.Err = errText(err)
			line.Calls = pr.calls()
			_ = pr.enc.Encode(line)
			if err != nil {
				break
			}
		}
	}
	_ = rt.w.do(pr.disable)
}

// legacy: the older Profiler API. Its counter data image is the one the
// range profiler sizes and initializes (the older API's own needs a
// counter data prefix from the perf library); a pristine copy is put back
// before each dispatch.
func (pr *probe) legacy(strat string, dispatches int) {
	rt, p := pr.rt, pr.p
	metrics := pr.probeMetrics()
	l, err := openLegacy()
	if err != nil {
		_ = pr.enc.Encode(probeLine{Strategy: strat, Pass: -2, Err: err.Error()})
		return
	}
	s, err := p.set(metrics)
	if err != nil {
		pr.t.Fatal(err)
	}
	replay := uint32(replayUser)
	if strat == "legacy-kernel" {
		replay = replayKernel
	}
	_ = pr.enc.Encode(probeLine{Strategy: strat, Range: "auto", UnionPass: s.passes})
	var data, pristine, scratch []byte
	ltimed := func(name string, fn uintptr, params unsafe.Pointer) error {
		began := time.Now()
		err := p.lib.call(name, fn, params)
		p.spend(name, time.Since(began))
		return err
	}
	err = rt.w.do(func() error {
		if err := pr.enable(); err != nil {
			return err
		}
		var err error
		if data, err = pr.newData(metrics); err != nil {
			return err
		}
		if err := pr.initData(data); err != nil {
			return err
		}
		if err := pr.disable(); err != nil {
			return err
		}
		pristine = append([]byte(nil), data...)
		ss := sized(&pLScratchSize{imageSize: uintptr(len(data)), image: bytesPtr(data)}, end(unsafe.Offsetof(pLScratchSize{}.scratchSize), 8))
		if err := ltimed("cuptiProfilerCounterDataImageCalculateScratchBufferSize", l.scratchSize, unsafe.Pointer(ss)); err != nil {
			return err
		}
		scratch = make([]byte, ss.scratchSize)
		pr.pin.Pin(&scratch[0])
		si := sized(&pLScratchInit{imageSize: uintptr(len(data)), image: bytesPtr(data), scratchSize: uintptr(len(scratch)), scratch: bytesPtr(scratch)},
			end(unsafe.Offsetof(pLScratchInit{}.scratch), 8))
		if err := ltimed("cuptiProfilerCounterDataImageInitializeScratchBuffer", l.scratchInit, unsafe.Pointer(si)); err != nil {
			return err
		}
		bs := sized(&pLBeginSession{ctx: rt.ctx, imageSize: uintptr(len(data)), image: bytesPtr(data), scratchSize: uintptr(len(scratch)),
			scratch: bytesPtr(scratch), rangeMode: cuptiAutoRange, replayMode: replay, maxRangesPerPass: 1, maxLaunchesPerPass: 1},
			end(unsafe.Offsetof(pLBeginSession{}.maxLaunchesPerPass), 8))
		return ltimed("cuptiProfilerBeginSession", l.beginSession, unsafe.Pointer(bs))
	})
	if err != nil {
		_ = pr.enc.Encode(probeLine{Strategy: strat, Pass: -2, Err: err.Error(), Calls: pr.calls()})
		return
	}
	defer func() {
		_ = rt.w.do(func() error {
			return ltimed("cuptiProfilerEndSession", l.endSession, unsafe.Pointer(pr.ctxParams()))
		})
	}()
	setConfig := func() error {
		sc := sized(&pLSetConfig{ctx: rt.ctx, config: bytesPtr(s.config), configSize: uintptr(len(s.config)), minNestingLevel: 1,
			numNestingLevels: 1, targetNestingLevel: 1}, end(unsafe.Offsetof(pLSetConfig{}.targetNestingLevel), 2))
		return ltimed("cuptiProfilerSetConfig", l.setConfig, unsafe.Pointer(sc))
	}
	passes := s.passes
	if replay == replayKernel {
		passes = 1
	}
	for d := range dispatches {
		snap, err := rt.Snapshot(0, agentID, []hsa.Allocation{pr.x})
		if err != nil {
			pr.t.Fatal(err)
		}
		err = rt.w.do(func() error {
			copy(data, pristine)
			return setConfig()
		})
		if err != nil {
			_ = pr.enc.Encode(probeLine{Strategy: strat, Dispatch: d, Pass: -2, Err: err.Error(), Calls: pr.calls()})
			snap.Release()
			return
		}
		var last probeLine
		for k := 0; k < passes+2; k++ {
			line := probeLine{Strategy: strat, Range: "auto", Dispatch: d, Pass: k, Flush: 2 * (d % 3)}
			if k > 0 {
				line.RestoreUs = pr.timedRestore(snap)
			}
			err := rt.w.do(func() error {
				if _, err := pr.flush(uint64(line.Flush)); err != nil {
					return err
				}
				began := time.Now()
				defer func() { line.WallMs = time.Since(began).Seconds() * 1e3 }()
				if replay == replayUser {
					if err := ltimed("cuptiProfilerBeginPass", l.beginPass, unsafe.Pointer(pr.ctxParams())); err != nil {
						return err
					}
				}
				if err := ltimed("cuptiProfilerEnableProfiling", l.enableProfiling, unsafe.Pointer(pr.ctxParams())); err != nil {
					return err
				}
				var err error
				if line.KernelUs, err = pr.launch(); err != nil {
					return err
				}
				if err := ltimed("cuptiProfilerDisableProfiling", l.disableProfiling, unsafe.Pointer(pr.ctxParams())); err != nil {
					return err
				}
				if replay == replayUser {
					ep := sized(&pLEndPass{ctx: rt.ctx}, end(unsafe.Offsetof(pLEndPass{}.allSubmitted), 1))
					if err := ltimed("cuptiProfilerEndPass", l.endPass, unsafe.Pointer(ep)); err != nil {
						return err
					}
					line.StopPass, line.StopNest, line.All = ep.passIndex, uintptr(ep.targetNestingLevel), ep.allSubmitted
				} else {
					line.All = 1
				}
				if line.All != 0 {
					fl := sized(&pLFlush{ctx: rt.ctx}, end(unsafe.Offsetof(pLFlush{}.bytesDropped), 8))
					if err := ltimed("cuptiProfilerFlushCounterData", l.flushCounterData, unsafe.Pointer(fl)); err != nil {
						return err
					}
					if fl.rangesDropped != 0 || fl.bytesDropped != 0 {
						return fmt.Errorf("dropped %d ranges, %d bytes", fl.rangesDropped, fl.bytesDropped)
					}
					line.Values, err = pr.eval(s.host, data, metrics)
				}
				return err
			})
			line.Err = errText(err)
			_ = pr.enc.Encode(line)
			last = line
			if err != nil || line.All != 0 {
				break
			}
		}
		_ = rt.w.do(func() error {
			return ltimed("cuptiProfilerUnsetConfig", l.unsetConfig, unsafe.Pointer(pr.ctxParams()))
		})
		snap.Release()
		_ = pr.enc.Encode(probeLine{Strategy: strat, Dispatch: d, Pass: -1, Calls: pr.calls()})
		if last.Err != "" {
			return
		}
	}
}
