package cuda

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// profiler collects NVIDIA metrics through CUPTI's range profiler in user
// replay: this package runs the passes and restores memory itself, and
// CUPTI only programs the counters around one range per pass.
//
// Scheduling: CUPTI's host API turns a metric list into a configuration
// image and says how many passes it needs. Groups splits a list into
// groups that each need one pass (in request order: a metric joins the
// current group while CUPTI says the group still fits one pass, else it
// opens the next), so replay pass i collects group i with values that are
// read right after the pass. It is an hsa.CounterSource.
type profiler struct {
	lib   *cuptiLib
	chip  string
	cchip []byte // chip name, NUL-terminated, pinned
	avail []byte // counter availability image of the context, pinned
	pin   runtime.Pinner

	// passesOf builds the configuration of a metric list and returns the
	// passes CUPTI needs for it (a test substitutes it).
	passesOf func(metrics []string) (int, error)

	mu      sync.Mutex
	valid   map[string]int // passes a metric needs alone; 0: CUPTI does not know it
	groups  map[string][][]string
	configs map[string]*passConfig

	// Driver thread only.
	object uintptr // range profiler object, enabled at the first collection

	// spent is the time of each CUPTI call made while collecting, for the
	// benchmark's breakdown (driver thread; read under the worker).
	spent map[string]callTime
}

// callTime is the calls of one CUPTI entry point and their total time.
type callTime struct {
	n     int
	total time.Duration
}

// passConfig is one single-pass group: its configuration image, the host
// object that made it (which evaluates the values) and its counter data
// image, all pinned while the profiler lives.
type passConfig struct {
	metrics []string
	names   *cstrings
	host    uintptr
	config  []byte
	data    []byte
	passes  int
	pin     runtime.Pinner
	dataPin runtime.Pinner // data belongs to the range profiler object that sized it
}

// newProfiler loads CUPTI and reads the device's chip name and the
// context's counter availability. It runs on the driver thread with the
// context current.
func newProfiler(ctx uintptr) (*profiler, error) {
	lib, err := loadCUPTI(dlopen)
	if err != nil {
		return nil, err
	}
	p := &profiler{lib: lib, valid: map[string]int{}, groups: map[string][][]string{}, configs: map[string]*passConfig{}}
	p.passesOf = p.countPasses
	init := sized(&pInitialize{}, unsafe.Sizeof(cuptiHdr{}))
	if err := invoke(lib, "cuptiProfilerInitialize", lib.profilerInitialize, init); err != nil {
		return nil, err
	}
	chip := sized(&pChipName{deviceIndex: 0}, end(unsafe.Offsetof(pChipName{}.chipName), 8))
	if err := invoke(lib, "cuptiDeviceGetChipName", lib.deviceGetChipName, chip); err != nil {
		return nil, err
	}
	p.chip = goString(chip.chipName)
	p.cchip = append([]byte(p.chip), 0)
	p.pin.Pin(&p.cchip[0])
	avail := sized(&pCounterAvailability{ctx: ctx}, end(unsafe.Offsetof(pCounterAvailability{}.image), 8))
	if err := invoke(lib, "cuptiProfilerGetCounterAvailability", lib.getCounterAvailability, avail); err != nil {
		return nil, err
	}
	p.avail = make([]byte, avail.imageSize)
	if len(p.avail) > 0 {
		p.pin.Pin(&p.avail[0])
		avail.image = bytesPtr(p.avail)
		if err := invoke(lib, "cuptiProfilerGetCounterAvailability", lib.getCounterAvailability, avail); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// hostConfig makes the configuration image of metrics. keep leaves the host
// object alive for evaluation (the caller deinitializes it); otherwise it
// is released and host is 0.
func (p *profiler) hostConfig(metrics []string, keep bool) (config []byte, passes int, host uintptr, err error) {
	lib := p.lib
	hi := sized(&pHostInitialize{profilerType: cuptiRangeProfilerType, chipName: bytesPtr(p.cchip), availability: bytesPtr(p.avail)},
		end(unsafe.Offsetof(pHostInitialize{}.host), 8))
	if err := invoke(lib, "cuptiProfilerHostInitialize", lib.hostInitialize, hi); err != nil {
		return nil, 0, 0, err
	}
	host = hi.host
	defer func() {
		if err != nil || !keep {
			p.deinitHost(host)
			host = 0
		}
	}()
	names := newCStrings(metrics)
	defer names.free()
	add := sized(&pConfigAddMetrics{host: host, names: names.array(), numMetrics: uintptr(len(metrics))},
		end(unsafe.Offsetof(pConfigAddMetrics{}.numMetrics), 8))
	if err := invoke(lib, "cuptiProfilerHostConfigAddMetrics", lib.hostConfigAddMetrics, add); err != nil {
		return nil, 0, host, err
	}
	size := sized(&pConfigImageSize{host: host}, end(unsafe.Offsetof(pConfigImageSize{}.size), 8))
	if err := invoke(lib, "cuptiProfilerHostGetConfigImageSize", lib.hostGetConfigImageSize, size); err != nil {
		return nil, 0, host, err
	}
	config = make([]byte, size.size)
	var pin runtime.Pinner
	defer pin.Unpin()
	if len(config) > 0 {
		pin.Pin(&config[0])
	}
	img := sized(&pConfigImage{host: host, size: uintptr(len(config)), image: bytesPtr(config)}, end(unsafe.Offsetof(pConfigImage{}.image), 8))
	if err := invoke(lib, "cuptiProfilerHostGetConfigImage", lib.hostGetConfigImage, img); err != nil {
		return nil, 0, host, err
	}
	np := sized(&pNumOfPasses{size: uintptr(len(config)), image: bytesPtr(config)}, end(unsafe.Offsetof(pNumOfPasses{}.passes), 8))
	if err := invoke(lib, "cuptiProfilerHostGetNumOfPasses", lib.hostGetNumOfPasses, np); err != nil {
		return nil, 0, host, err
	}
	return config, int(np.passes), host, nil
}

func (p *profiler) deinitHost(host uintptr) {
	if host == 0 {
		return
	}
	d := sized(&pHostObject{host: host}, end(unsafe.Offsetof(pHostObject{}.host), 8))
	_ = invoke(p.lib, "cuptiProfilerHostDeinitialize", p.lib.hostDeinitialize, d)
}

func (p *profiler) countPasses(metrics []string) (int, error) {
	_, n, _, err := p.hostConfig(metrics, false)
	return n, err
}

// HasCounter reports whether CUPTI knows the metric on this chip.
func (p *profiler) HasCounter(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hasLocked(name)
}

func (p *profiler) hasLocked(name string) bool { return p.alonePassesLocked(name) > 0 }

// alonePassesLocked is the passes a metric needs by itself, 0 when CUPTI
// does not know it.
func (p *profiler) alonePassesLocked(name string) int {
	if n, seen := p.valid[name]; seen {
		return n
	}
	n, err := p.passesOf([]string{name})
	if err != nil || n < 1 {
		n = 0
	}
	p.valid[name] = n
	return n
}

// AlonePasses is the passes a metric needs by itself (0: unknown metric).
func (p *profiler) AlonePasses(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.alonePassesLocked(name)
}

// Describe names the catalogue for error messages.
func (p *profiler) Describe() string {
	return fmt.Sprintf("NVIDIA metrics of chip %s through CUPTI, e.g. smsp__inst_executed.sum, dram__bytes_read.sum", p.chip)
}

// Groups splits metrics into groups that each fit one pass (see profiler).
func (p *profiler) Groups(metrics []string) ([][]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := strings.Join(metrics, "\x00")
	if g, ok := p.groups[key]; ok {
		return cloneGroups(g), nil
	}
	var groups [][]string
	var cur []string
	for _, m := range metrics {
		if !p.hasLocked(m) {
			return nil, fmt.Errorf("cuda: CUPTI does not know metric %q on chip %s", m, p.chip)
		}
		try := append(slices.Clone(cur), m)
		n, err := p.passesOf(try)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			cur = try
			continue
		}
		if len(cur) > 0 {
			groups = append(groups, cur)
			n = p.alonePassesLocked(m)
		}
		if n != 1 {
			return nil, fmt.Errorf("cuda: metric %q needs %d passes by itself; a replay pass collects what fits one", m, n)
		}
		cur = []string{m}
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	p.groups[key] = groups
	return cloneGroups(groups), nil
}

// Passes is what CUPTI says the whole metric list needs when it schedules
// the passes itself (for comparison with Groups).
func (p *profiler) Passes(metrics []string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.passesOf(metrics)
}

func cloneGroups(g [][]string) [][]string {
	out := make([][]string, len(g))
	for i := range g {
		out[i] = slices.Clone(g[i])
	}
	return out
}

// config returns the single-pass configuration of a group, made once.
func (p *profiler) config(metrics []string) (*passConfig, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := strings.Join(metrics, "\x00")
	if c, ok := p.configs[key]; ok {
		return c, nil
	}
	config, n, host, err := p.hostConfig(metrics, true)
	if err != nil {
		return nil, fmt.Errorf("cuda: counters %s: %w", strings.Join(metrics, " "), err)
	}
	if n != 1 {
		p.deinitHost(host)
		return nil, fmt.Errorf("cuda: counters %s need %d passes; one dispatch collects one group (hsa.CounterGroups splits them)", strings.Join(metrics, " "), n)
	}
	c := &passConfig{metrics: slices.Clone(metrics), names: newCStrings(metrics), host: host, config: config}
	c.pin.Pin(&c.config[0])
	p.configs[key] = c
	return c, nil
}

// timed is invoke, adding the call's time to spent.
func timed[T any](p *profiler, name string, fn uintptr, params *T) error {
	began := time.Now()
	err := invoke(p.lib, name, fn, params)
	if p.spent == nil {
		p.spent = map[string]callTime{}
	}
	c := p.spent[name]
	c.n++
	c.total += time.Since(began)
	p.spent[name] = c
	return err
}

// begin opens one range of one pass around the work that follows: driver
// thread, context current.
func (p *profiler) begin(ctx uintptr, c *passConfig) error {
	lib := p.lib
	if p.object == 0 {
		en := sized(&pRPEnable{ctx: ctx}, end(unsafe.Offsetof(pRPEnable{}.object), 8))
		if err := timed(p, "cuptiRangeProfilerEnable", lib.rpEnable, en); err != nil {
			return err
		}
		p.object = en.object
	}
	if c.data == nil {
		sz := sized(&pRPCounterDataSize{object: p.object, names: c.names.array(), numMetrics: uintptr(len(c.metrics)), maxRanges: 1, maxNodes: 1},
			end(unsafe.Offsetof(pRPCounterDataSize{}.size), 8))
		if err := timed(p, "cuptiRangeProfilerGetCounterDataSize", lib.rpGetCounterDataSize, sz); err != nil {
			return err
		}
		c.data = make([]byte, sz.size)
		c.dataPin.Pin(&c.data[0])
	}
	ini := sized(&pRPCounterDataInit{object: p.object, size: uintptr(len(c.data)), data: bytesPtr(c.data)}, end(unsafe.Offsetof(pRPCounterDataInit{}.data), 8))
	if err := timed(p, "cuptiRangeProfilerCounterDataImageInitialize", lib.rpCounterDataImageInitialize, ini); err != nil {
		return err
	}
	set := sized(&pRPSetConfig{object: p.object, configSize: uintptr(len(c.config)), config: bytesPtr(c.config),
		counterDataSize: uintptr(len(c.data)), counterData: bytesPtr(c.data), rangeMode: cuptiUserRange, replayMode: cuptiUserReplay,
		maxRangesPerPass: 1, numNestingLevels: 1, minNestingLevel: 1, passIndex: 0, targetNestingLevel: 1},
		end(unsafe.Offsetof(pRPSetConfig{}.targetNestingLevel), 2))
	if err := timed(p, "cuptiRangeProfilerSetConfig", lib.rpSetConfig, set); err != nil {
		return err
	}
	if err := timed(p, "cuptiRangeProfilerStart", lib.rpStart, p.objectParams()); err != nil {
		return err
	}
	name := []byte("replayspec\x00")
	var pin runtime.Pinner
	pin.Pin(&name[0])
	defer pin.Unpin()
	push := sized(&pRPPushRange{object: p.object, name: bytesPtr(name)}, end(unsafe.Offsetof(pRPPushRange{}.name), 8))
	return timed(p, "cuptiRangeProfilerPushRange", lib.rpPushRange, push)
}

func (p *profiler) objectParams() *pRPObject {
	return sized(&pRPObject{object: p.object}, end(unsafe.Offsetof(pRPObject{}.object), 8))
}

// end closes the range after the work completed, decodes it and evaluates
// the group's metrics.
func (p *profiler) end(c *passConfig) (map[string]float64, error) {
	done, err := p.stopPass()
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, fmt.Errorf("cuda: counters %s: CUPTI wants another pass", strings.Join(c.metrics, " "))
	}
	return p.evaluate(c)
}

// evaluate decodes the counter data of a finished session and evaluates
// its metrics.
func (p *profiler) evaluate(c *passConfig) (map[string]float64, error) {
	lib := p.lib
	dec := sized(&pRPDecode{object: p.object}, end(unsafe.Offsetof(pRPDecode{}.dropped), 8))
	if err := timed(p, "cuptiRangeProfilerDecodeData", lib.rpDecodeData, dec); err != nil {
		return nil, err
	}
	if dec.dropped != 0 {
		return nil, fmt.Errorf("cuda: counters: CUPTI dropped %d ranges", dec.dropped)
	}
	info := sized(&pRPCounterDataInfo{counterData: bytesPtr(c.data), size: uintptr(len(c.data))}, end(unsafe.Offsetof(pRPCounterDataInfo{}.ranges), 8))
	if err := timed(p, "cuptiRangeProfilerGetCounterDataInfo", lib.rpGetCounterDataInfo, info); err != nil {
		return nil, err
	}
	if info.ranges < 1 {
		return nil, fmt.Errorf("cuda: counters: CUPTI recorded no range")
	}
	vals := make([]float64, len(c.metrics))
	var pin runtime.Pinner
	pin.Pin(&vals[0])
	defer pin.Unpin()
	ev := sized(&pEvaluate{host: c.host, counterData: bytesPtr(c.data), dataSize: uintptr(len(c.data)), rangeIndex: 0,
		names: c.names.array(), numMetrics: uintptr(len(c.metrics)), values: uintptr(unsafe.Pointer(&vals[0]))},
		end(unsafe.Offsetof(pEvaluate{}.values), 8))
	if err := timed(p, "cuptiProfilerHostEvaluateToGpuValues", lib.hostEvaluateToGpuValues, ev); err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(vals))
	for i, m := range c.metrics {
		out[m] = vals[i]
	}
	return out, nil
}

// beginSession sets a configuration of any number of passes up for user
// replay: CUPTI schedules the passes; each pass is a range opened with
// startPass and closed with stopPass. Driver thread.
func (p *profiler) beginSession(ctx uintptr, c *passConfig) error {
	// A fresh range profiler object: one that collected another
	// configuration before ends a new session after one pass (seen on the
	// H200: values NaN for what the other passes would have counted).
	p.disable()
	if err := p.begin(ctx, c); err != nil {
		return err
	}
	// begin opened the first pass's range already.
	return nil
}

// startPass opens the range of a later pass of a session.
func (p *profiler) startPass() error {
	lib := p.lib
	if err := timed(p, "cuptiRangeProfilerStart", lib.rpStart, p.objectParams()); err != nil {
		return err
	}
	name := []byte("replayspec\x00")
	var pin runtime.Pinner
	pin.Pin(&name[0])
	defer pin.Unpin()
	push := sized(&pRPPushRange{object: p.object, name: bytesPtr(name)}, end(unsafe.Offsetof(pRPPushRange{}.name), 8))
	return timed(p, "cuptiRangeProfilerPushRange", lib.rpPushRange, push)
}

// stopPass closes the pass's range; done says CUPTI has every pass.
func (p *profiler) stopPass() (done bool, err error) {
	lib := p.lib
	if err := timed(p, "cuptiRangeProfilerPopRange", lib.rpPopRange, p.objectParams()); err != nil {
		return false, err
	}
	stop := sized(&pRPStop{object: p.object}, end(unsafe.Offsetof(pRPStop{}.allPassSubmitted), 1))
	if err := timed(p, "cuptiRangeProfilerStop", lib.rpStop, stop); err != nil {
		return false, err
	}
	return stop.allPassSubmitted != 0, nil
}

// multiConfig is the configuration of a whole metric list, as many passes
// as CUPTI schedules, made once.
func (p *profiler) multiConfig(metrics []string) (*passConfig, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := "multi\x00" + strings.Join(metrics, "\x00")
	if c, ok := p.configs[key]; ok {
		return c, c.passes, nil
	}
	config, n, host, err := p.hostConfig(metrics, true)
	if err != nil {
		return nil, 0, err
	}
	c := &passConfig{metrics: slices.Clone(metrics), names: newCStrings(metrics), host: host, config: config, passes: n}
	c.pin.Pin(&c.config[0])
	p.configs[key] = c
	return c, n, nil
}

// disable ends the range profiler object; the next collection enables a
// fresh one. A finished multi-pass session leaves CUPTI's pass state behind
// (seen on the H200: the next single-pass configuration then wanted
// another pass, or failed to initialize its counter data), so
// ReplayMetrics ends with this.
func (p *profiler) disable() {
	if p.object != 0 {
		_ = invoke(p.lib, "cuptiRangeProfilerDisable", p.lib.rpDisable, p.objectParams())
		p.object = 0
	}
	// Counter data images were sized and initialized for the old object
	// (reusing one after the object changed crashed inside CUPTI).
	p.mu.Lock()
	for _, c := range p.configs {
		c.dataPin.Unpin()
		c.data = nil
	}
	p.mu.Unlock()
}

// close releases everything (driver thread).
func (p *profiler) close() {
	lib := p.lib
	if p.object != 0 {
		_ = invoke(lib, "cuptiRangeProfilerDisable", lib.rpDisable, p.objectParams())
		p.object = 0
	}
	p.mu.Lock()
	for k, c := range p.configs {
		p.deinitHost(c.host)
		c.names.free()
		c.pin.Unpin()
		c.dataPin.Unpin()
		delete(p.configs, k)
	}
	p.mu.Unlock()
	_ = invoke(lib, "cuptiProfilerDeInitialize", lib.profilerDeInitialize, sized(&pInitialize{}, unsafe.Sizeof(cuptiHdr{})))
	p.pin.Unpin()
}

// integral turns metric values into the model's unsigned integers (the
// nearest integer). A value that is no count is an error, never a 0 that a
// record would carry as if counted: NaN (CUPTI evaluates NaN for a metric it
// did not collect, as every group after the first read on the H200 when the
// range profiler object was reused), an infinity, or a negative number.
// Exact values are what CollectMetrics returns.
func integral(vals map[string]float64) (map[string]uint64, error) {
	out := make(map[string]uint64, len(vals))
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		switch v := vals[k]; {
		case math.IsNaN(v) || math.IsInf(v, 0) || v < -0.5:
			bad = append(bad, fmt.Sprintf("%s = %v", k, v))
		case v < 0:
			out[k] = 0 // -0.5 < v < 0: rounding noise around a zero count
		default:
			out[k] = uint64(math.Round(v))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("cuda: counters: CUPTI evaluated %s: not a count (a metric it did not collect in this pass reads NaN); no record is made of it", strings.Join(bad, ", "))
	}
	return out, nil
}

// Spent lists the time of each CUPTI call made while collecting, and
// resets it.
func (p *profiler) takeSpent() map[string]callTime {
	out := p.spent
	p.spent = nil
	return out
}
