package cuda

import (
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"
)

// CacheControl is what the runtime does to the caches before each counted
// pass.
type CacheControl int

const (
	// CacheFlushAll (the default) evicts the L2 before every counted pass,
	// as Nsight Compute does by default (--cache-control all): every pass
	// then starts from the same cold cache, whatever the restore before it
	// left there, and DRAM and L2 metrics agree with Nsight Compute's.
	CacheFlushAll CacheControl = iota
	// CacheNone leaves the caches as the previous work left them (Nsight
	// Compute's --cache-control none): after a restore the data a kernel
	// reads may be in the L2 already.
	CacheNone
)

// ParseCacheControl reads "all" or "none", the names Nsight Compute uses.
func ParseCacheControl(s string) (CacheControl, error) {
	switch s {
	case "all", "":
		return CacheFlushAll, nil
	case "none":
		return CacheNone, nil
	}
	return 0, fmt.Errorf("cuda: cache control %q: want all or none", s)
}

func (c CacheControl) String() string {
	if c == CacheNone {
		return "none"
	}
	return "all"
}

// SetCacheControl applies to every later counted pass.
func (r *Runtime) SetCacheControl(c CacheControl) {
	r.mu.Lock()
	r.cacheControl = c
	r.mu.Unlock()
}

// cacheControlFromEnv is REPLAYSPEC_CACHE_CONTROL (all or none), for the
// command line and the target, which open the runtime themselves.
func cacheControlFromEnv(def CacheControl) (CacheControl, error) {
	v := os.Getenv("REPLAYSPEC_CACHE_CONTROL")
	if v == "" {
		return def, nil
	}
	c, err := ParseCacheControl(v)
	if err != nil {
		return def, fmt.Errorf("REPLAYSPEC_CACHE_CONTROL: %w", err)
	}
	return c, nil
}

// flushFactor: the flush reads this many times the L2's size. Reading
// (not writing) leaves only clean lines behind, so the counted kernel
// writes no dirty line of the flush back to DRAM; twice the size evicted
// everything in the experiment (L2 misses equal to Nsight Compute's).
const flushFactor = 2

// flushCaches evicts the L2 before a counted pass (driver thread): one
// flush_l2 launch on the legacy default stream, which every queue's
// stream waits for, so the counted kernel starts after it.
func (r *Runtime) flushCaches() error {
	r.mu.Lock()
	mode := r.cacheControl
	r.mu.Unlock()
	if mode == CacheNone {
		return nil
	}
	d := r.drv
	if r.flushBuf == 0 {
		var l2 int32
		const l2Attr = 38 // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
		if err := call("cuDeviceGetAttribute", d.deviceGetAttribute, uintptr(unsafe.Pointer(&l2)), l2Attr, uintptr(r.dev)); err != nil {
			return err
		}
		size := (flushFactor*uint64(max(l2, 1<<20)) + 15) &^ 15
		buf, err := d.alloc(size)
		if err != nil {
			return fmt.Errorf("cuda: cache flush buffer (%d bytes): %w", size, err)
		}
		r.flushBuf, r.flushBytes = buf, size
	}
	vectors := r.flushBytes / 16
	ctas := min((vectors+255)/256, 4096)
	return d.cuLaunch(r.kernels["flush_l2"], uint32(ctas), 256, []uint64{r.flushBuf, vectors}, 0)
}

// ownTag marks the passes the runtime runs itself (calibration,
// CollectMetrics, ReplayMetrics) apart from dispatches' tags.
const ownTag = ^uint64(0)

// calibrationBytes is the buffer calibrate's kernel writes.
const calibrationBytes = 4096

// fill launches the calibration kernel (fill over calibrationBytes) and
// waits (driver thread).
func (r *Runtime) fill() error {
	d := r.drv
	if r.calBuf == 0 {
		buf, err := d.alloc(calibrationBytes)
		if err != nil {
			return err
		}
		r.calBuf = buf
	}
	if err := d.cuLaunch(r.kernels["fill"], calibrationBytes/4/256, 256, []uint64{r.calBuf, 0, calibrationBytes / 4}, 0); err != nil {
		return err
	}
	return call("cuCtxSynchronize", d.ctxSynchronize)
}

// calibrate learns which metrics each pass of s completes: it runs every
// pass once around a kernel that writes 1024 words (driver thread), and
// evaluates the counter data image after each. Group i is what pass i
// added. It runs once per metric set of several passes.
func (r *Runtime) calibrate(s *metricSet) ([][]string, error) {
	groups := make([][]string, s.passes)
	err := r.w.do(func() error {
		p := r.prof
		done := map[string]bool{}
		for k := range s.passes {
			if err := p.beginPass(r.ctx, s, k, ownTag); err != nil {
				return err
			}
			if err := r.fill(); err != nil {
				p.abort()
				return err
			}
			if err := p.finishPass(s, k); err != nil {
				return err
			}
			vals, err := p.evaluate(s, s.metrics)
			if err != nil {
				return err
			}
			for _, m := range s.metrics {
				if v := vals[m]; !done[m] && !math.IsNaN(v) && !math.IsInf(v, 0) {
					done[m] = true
					groups[k] = append(groups[k], m)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: learning the passes of counters %s: %w", strings.Join(s.metrics, " "), err)
	}
	return groups, nil
}

// CollectMetrics counts one kernel launch with metrics that fit one pass
// and returns CUPTI's values unrounded. run must launch exactly one kernel
// (CUPTI's auto range is that kernel) and may Write and Read; it must wait
// for its work.
func (r *Runtime) CollectMetrics(metrics []string, run func() error) (map[string]float64, error) {
	if r.prof == nil {
		return nil, fmt.Errorf("cuda: counters need CUPTI: %w", r.profErr)
	}
	s, err := r.prof.set(metrics)
	if err != nil {
		return nil, err
	}
	if s.passes != 1 {
		return nil, fmt.Errorf("cuda: counters %s need %d passes; CollectMetrics counts one (ReplayMetrics runs them all)", strings.Join(metrics, " "), s.passes)
	}
	vals, _, err := r.replayMetrics(s, func(int) error { return nil }, func(int) error { return run() })
	return vals, err
}

// ReplayMetrics collects metrics in the passes CUPTI schedules for them,
// whatever their number: before pass i, outside the counted range,
// prepare(i) runs (restoring memory before a later pass is its job, so
// that the restore's own launches are not counted); then run(i) launches
// pass i's one kernel and waits for it. It returns the values and the
// passes run.
func (r *Runtime) ReplayMetrics(metrics []string, prepare, run func(i int) error) (map[string]float64, int, error) {
	if r.prof == nil {
		return nil, 0, fmt.Errorf("cuda: counters need CUPTI: %w", r.profErr)
	}
	s, err := r.prof.set(metrics)
	if err != nil {
		return nil, 0, err
	}
	return r.replayMetrics(s, prepare, run)
}

func (r *Runtime) replayMetrics(s *metricSet, prepare, run func(i int) error) (map[string]float64, int, error) {
	var vals map[string]float64
	for k := range s.passes {
		if err := prepare(k); err != nil {
			return nil, k, err
		}
		err := r.w.do(func() error {
			if err := r.flushCaches(); err != nil {
				return err
			}
			return r.prof.beginPass(r.ctx, s, k, ownTag)
		})
		if err != nil {
			return nil, k, fmt.Errorf("pass %d: %w", k, err)
		}
		runErr := run(k)
		err = r.w.do(func() error {
			if err := call("cuCtxSynchronize", r.drv.ctxSynchronize); err != nil || runErr != nil {
				r.prof.abort()
				return err
			}
			if k+1 < s.passes {
				return r.prof.finishPass(s, k)
			}
			var err error
			vals, err = r.prof.endPass(s, k, s.metrics)
			return err
		})
		if runErr != nil {
			return nil, k + 1, runErr
		}
		if err != nil {
			return nil, k + 1, fmt.Errorf("pass %d: %w", k, err)
		}
	}
	return vals, s.passes, nil
}
