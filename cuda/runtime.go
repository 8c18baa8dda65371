package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/replayspec/replayspec/hsa"
	"github.com/replayspec/replayspec/trace"
)

// agentID is the only agent: Open drives device 0.
const agentID hsa.AgentID = 1

// Runtime is hsa.Runtime on one CUDA device.
type Runtime struct {
	drv   *driver
	w     executor
	rec   *trace.Recorder
	agent hsa.Agent
	clock *deviceClock
	pool  *bufferPool // driver thread only
	prof  *profiler   // nil when CUPTI is not there (profErr says why)

	profErr    error
	noCounters bool

	ctx     uintptr
	dev     int32
	module  uintptr
	kernels map[string]uintptr // entry name -> CUfunction, compare included

	// SignalTimeout bounds Signal.WaitBelow; zero waits forever.
	SignalTimeout time.Duration

	mu           sync.Mutex
	allocs       map[uint64]*allocation
	serial       uint64
	nextQueue    hsa.QueueID
	nextSignal   hsa.SignalID
	queues       []*queue
	hook         func(hsa.Allocation, bool)
	restoreMode  RestoreMode
	cacheControl CacheControl
	closed       bool

	// failRestoreAt makes the n-th Restore of the runtime fail part-way
	// (Options.FailRestoreAt); restores counts them (under mu).
	failRestoreAt, restores int

	// zeroLaterGroups plants issue 22's bug: every group after a set's
	// first reads 0 (REPLAYSPEC_CUDA_FAULT=zero-later-groups), so that a
	// GPU run can show the value checks fail on it.
	zeroLaterGroups bool

	// Driver thread only.
	flushBuf, flushBytes uint64 // what flushCaches reads
	calBuf               uint64 // what calibrate's kernel writes
	staging              []byte // pinned host memory for restore flags, kept
	stagingPtr           uintptr
	open                 map[*snapshot]struct{} // live snapshots: noteWrite tells each
}

var _ hsa.Runtime = (*Runtime)(nil)

// Options tune Open.
type Options struct {
	// HandOff runs every driver call on one goroutine locked to one OS
	// thread, fed by a channel (the earlier design; for benchmarks).
	// By default each caller runs its own calls, locked to its thread.
	HandOff bool
	// NoCounters leaves CUPTI alone: the agent counts nothing.
	NoCounters bool
	// FailRestoreAt makes the n-th Restore call (1-based, every snapshot's
	// restores counted together) fail in its first copy, as a spec's
	// restore_fails_at asks (MEM-5); 0 never.
	FailRestoreAt int
	// CacheControl is what happens to the caches before each counted pass
	// (default: flushed, as Nsight Compute does). REPLAYSPEC_CACHE_CONTROL
	// (all or none) overrides it.
	CacheControl CacheControl
}

// Open loads the driver, takes device 0's primary context and loads the
// kernel library. rec (may be nil) receives kernel and signal events.
func Open(rec *trace.Recorder) (*Runtime, error) { return OpenWith(rec, Options{}) }

// OpenWith is Open with options.
func OpenWith(rec *trace.Recorder, o Options) (*Runtime, error) {
	lib, err := loadDriverLibrary(dlopen)
	if err != nil {
		return nil, err
	}
	drv, err := resolveDriver(lib)
	if err != nil {
		return nil, err
	}
	cache, err := cacheControlFromEnv(o.CacheControl)
	if err != nil {
		return nil, err
	}
	fault := os.Getenv("REPLAYSPEC_CUDA_FAULT")
	if fault != "" && fault != "zero-later-groups" {
		return nil, fmt.Errorf("REPLAYSPEC_CUDA_FAULT=%q: the one planted fault is zero-later-groups", fault)
	}
	r := &Runtime{
		drv: drv, w: &lockedCaller{}, rec: rec, cacheControl: cache, zeroLaterGroups: fault == "zero-later-groups",
		failRestoreAt: o.FailRestoreAt,
		allocs:        map[uint64]*allocation{}, kernels: map[string]uintptr{},
		pool:          newBufferPool(defaultPoolLimit),
		noCounters:    o.NoCounters,
		SignalTimeout: 30 * time.Second,
	}
	if o.HandOff {
		r.w = newHandOff()
	}
	if err := r.w.do(r.start); err != nil {
		r.w.stop()
		return nil, err
	}
	r.w.bind(drv, r.ctx)
	return r, nil
}

// start runs on the driver thread: device, context, module, clock.
func (r *Runtime) start() error {
	d := r.drv
	if err := call("cuInit", d.init, 0); err != nil {
		return fmt.Errorf("no CUDA device: %w", err)
	}
	var count int32
	if err := call("cuDeviceGetCount", d.deviceGetCount, uintptr(unsafe.Pointer(&count))); err != nil {
		return fmt.Errorf("no CUDA device: %w", err)
	}
	if count == 0 {
		return errors.New("no CUDA device: the driver loaded and reports 0 devices")
	}
	if err := call("cuDeviceGet", d.deviceGet, uintptr(unsafe.Pointer(&r.dev)), 0); err != nil {
		return fmt.Errorf("no CUDA device: %w", err)
	}
	name := make([]byte, 256)
	if err := call("cuDeviceGetName", d.deviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(r.dev)); err != nil {
		return err
	}
	var major, minor int32
	const ccMajor, ccMinor = 75, 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
	if err := call("cuDeviceGetAttribute", d.deviceGetAttribute, uintptr(unsafe.Pointer(&major)), ccMajor, uintptr(r.dev)); err != nil {
		return err
	}
	if err := call("cuDeviceGetAttribute", d.deviceGetAttribute, uintptr(unsafe.Pointer(&minor)), ccMinor, uintptr(r.dev)); err != nil {
		return err
	}
	if err := call("cuDevicePrimaryCtxRetain", d.primaryCtxRetain, uintptr(unsafe.Pointer(&r.ctx)), uintptr(r.dev)); err != nil {
		return err
	}
	if err := call("cuCtxSetCurrent", d.ctxSetCurrent, r.ctx); err != nil {
		return err
	}
	if err := r.loadModule(); err != nil {
		return err
	}
	clock, err := newDeviceClock(d)
	if err != nil {
		return err
	}
	r.clock = clock
	r.agent = hsa.Agent{
		ID:     agentID,
		Name:   string(bytes.TrimRight(name, "\x00")),
		Arch:   fmt.Sprintf("sm_%d%d", major, minor),
		Family: hsa.FamilyNVIDIA,
	}
	if r.noCounters {
		r.profErr = errors.New("no CUPTI profiler: Options.NoCounters")
	} else if os.Getenv("REPLAYSPEC_CUPTI") == "off" {
		r.profErr = errors.New("no CUPTI profiler found: REPLAYSPEC_CUPTI=off")
	} else if r.prof, r.profErr = newProfiler(r.ctx); r.profErr == nil {
		r.prof.calibrate = r.calibrate
		r.prof.filler = r.fill
		r.agent.Counters = r.prof
	}
	return nil
}

// loadModule JIT-compiles the PTX library; on failure the error carries the
// JIT's error log, which names the offending PTX line.
func (r *Runtime) loadModule() error {
	d := r.drv
	image := modulePTX()
	errLog := make([]byte, 8192)
	// CU_JIT_ERROR_LOG_BUFFER (5) and its size (6): option values are
	// passed as void*, the size by value.
	opts := []uint32{5, 6}
	vals := []uintptr{uintptr(unsafe.Pointer(&errLog[0])), uintptr(len(errLog))}
	var pin runtime.Pinner
	pin.Pin(&errLog[0])
	defer pin.Unpin()
	err := call("cuModuleLoadDataEx", d.moduleLoadDataEx, uintptr(unsafe.Pointer(&r.module)),
		uintptr(unsafe.Pointer(&image[0])), uintptr(len(opts)),
		uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(errLog)
	if err != nil {
		return fmt.Errorf("%w: %s", err, bytes.TrimRight(errLog, "\x00"))
	}
	names := append([]string(nil), internalKernels...)
	for _, k := range kernelLibrary {
		names = append(names, k.name)
	}
	for _, n := range names {
		cname := append([]byte(n), 0)
		var fn uintptr
		if err := call("cuModuleGetFunction", d.moduleGetFunction, uintptr(unsafe.Pointer(&fn)), r.module, uintptr(unsafe.Pointer(&cname[0]))); err != nil {
			return fmt.Errorf("%w: kernel %s", err, n)
		}
		r.kernels[n] = fn
	}
	return nil
}

// Close destroys the queues, frees what is still allocated, releases the
// context and stops the driver thread.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	queues, allocs := r.queues, r.allocs
	r.queues, r.allocs = nil, map[uint64]*allocation{}
	r.mu.Unlock()
	err := r.w.do(func() error {
		d := r.drv
		_ = call("cuCtxSynchronize", d.ctxSynchronize)
		for _, q := range queues {
			q.destroy()
		}
		for _, a := range allocs {
			_ = r.freeMemory(a)
		}
		r.pool.drain(d)
		r.clock.destroy(d)
		if r.prof != nil {
			r.prof.close()
		}
		for _, b := range []uint64{r.flushBuf, r.calBuf} {
			if b != 0 {
				_ = d.free(b)
			}
		}
		if r.stagingPtr != 0 {
			_ = call("cuMemFreeHost", d.memFreeHost, r.stagingPtr)
			r.stagingPtr, r.staging = 0, nil
		}
		if d.moduleUnload != 0 {
			_ = call("cuModuleUnload", d.moduleUnload, r.module)
		}
		if d.primaryCtxRelease != 0 {
			return call("cuDevicePrimaryCtxRelease", d.primaryCtxRelease, uintptr(r.dev))
		}
		return nil
	})
	r.w.stop()
	return err
}

// Agents returns the one device.
func (r *Runtime) Agents() []hsa.Agent { return []hsa.Agent{r.agent} }

// HasKernel reports whether name is an application kernel of the library.
func (r *Runtime) HasKernel(name string) bool {
	_, ok := findKernel(name)
	return ok
}

// OnAllocate installs the allocation hook.
func (r *Runtime) OnAllocate(hook func(a hsa.Allocation, freed bool)) {
	r.mu.Lock()
	r.hook = hook
	r.mu.Unlock()
}

// Now is the runtime clock (ns) that kernel timestamps use: host monotonic
// time since Open. A recorder may use it as its clock.
func (r *Runtime) Now() uint64 { return r.clock.now() }

func (r *Runtime) checkAgent(a hsa.AgentID) error {
	if a != agentID {
		return fmt.Errorf("%w: %d", hsa.ErrUnknownAgent, a)
	}
	return nil
}

// CountersAvailable reports whether the agent counts NVIDIA metrics
// (CUPTI loaded), and why not.
func (r *Runtime) CountersAvailable() (bool, error) { return r.prof != nil, r.profErr }

// CounterGroups splits metrics into the groups that replay passes collect,
// one group a pass (hsa.CounterGroups on the agent does the same).
func (r *Runtime) CounterGroups(metrics []string) ([][]string, error) {
	return hsa.CounterGroups(r.agent, metrics)
}

// CounterPasses is the pass count CUPTI gives the whole list when it
// schedules the passes itself.
func (r *Runtime) CounterPasses(metrics []string) (int, error) {
	if r.prof == nil {
		return 0, r.profErr
	}
	return r.prof.Passes(metrics)
}

// Ping makes one trivial driver call (cuCtxGetCurrent) through the same
// path as every other: for measuring the cost of reaching the driver.
func (r *Runtime) Ping() error {
	return r.w.do(func() error {
		if r.drv.ctxGetCurrent == 0 {
			return nil
		}
		var c uintptr
		return call("cuCtxGetCurrent", r.drv.ctxGetCurrent, uintptr(unsafe.Pointer(&c)))
	})
}

// CounterAlonePasses is the passes a metric needs by itself (0: CUPTI does
// not know it).
func (r *Runtime) CounterAlonePasses(metric string) int {
	if r.prof == nil {
		return 0
	}
	return r.prof.AlonePasses(metric)
}

// CounterCallTimes reports, per CUPTI entry point called while collecting
// since the last report, the calls and their mean time, slowest first.
func (r *Runtime) CounterCallTimes() string {
	if r.prof == nil {
		return ""
	}
	var spent map[string]callTime
	_ = r.w.do(func() error { spent = r.prof.takeSpent(); return nil })
	names := make([]string, 0, len(spent))
	for n := range spent {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return spent[names[i]].total > spent[names[j]].total })
	var parts []string
	for _, n := range names {
		c := spent[n]
		parts = append(parts, fmt.Sprintf("%s %d× %.3f ms", strings.TrimPrefix(n, "cupti"), c.n, c.total.Seconds()*1e3/float64(c.n)))
	}
	return strings.Join(parts, "; ")
}
