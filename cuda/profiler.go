package cuda

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// profiler collects NVIDIA metrics through CUPTI's range profiler in
// application replay: this package runs every pass of a dispatch itself
// (and restores memory between them), and tells CUPTI which pass of a
// configuration each run is.
//
// How CUPTI must be driven here (issue 22, measured on the H200 with
// CUPTI 13.0; the experiment is TestGPUCUPTIProbe, docs/cuda.md has its
// table): one range profiler object keeps one counter data layout, so
// giving it several configurations, each with its own counter data image,
// reads NaN or fails (cuptiRangeProfilerCounterDataImageInitialize:
// CUPTI_ERROR_UNKNOWN); what works is one configuration image per metric
// set, holding every pass CUPTI schedules for the set, and one counter data
// image sized for the set, both built once and reused by every dispatch.
// cuptiRangeProfilerSetConfig in application replay names pass k before
// the next Start..Stop, though CUPTI runs the pass after the one it ran
// last whatever passIndex says (the probe's repeat-pass strategy), hence
// the order kept below; the counter data image, decoded after each pass,
// holds everything collected since it was last initialized (at pass 0).
// What a pass costs is CUPTI's programming of it, the same through every
// API CUPTI 13.0 offers (docs/cuda.md "Cost").
//
// Scheduling therefore follows CUPTI: Groups builds the set's
// configuration and, when CUPTI schedules more than one pass, learns which
// metrics each pass completes by running the passes once around a tiny
// kernel (calibrate): group i is what pass i completes, so replay pass i
// collects group i with values read right after it. It is an
// hsa.CounterSource.
type profiler struct {
	lib   *cuptiLib
	chip  string
	cchip []byte // chip name, NUL-terminated, pinned
	avail []byte // counter availability image of the context, pinned
	pin   runtime.Pinner

	// passesOf returns the passes CUPTI needs for a metric list (host API
	// only); configure builds a set's configuration; calibrate learns the
	// groups of a set of several passes (it runs on the device). Tests
	// substitute them.
	passesOf  func(metrics []string) (int, error)
	configure func(metrics []string) (*metricSet, error)
	calibrate func(s *metricSet) ([][]string, error)

	mu     sync.Mutex
	valid  map[string]int // passes a metric needs alone; 0: CUPTI does not know it
	sets   map[string]*metricSet
	groups map[string][][]string     // request list -> groups
	owners map[string][]passOfSet    // group -> the sets and passes that collect it, newest last
	inUse  atomic.Pointer[metricSet] // the set bound last: resolve prefers its groups

	// Driver thread only.
	object  uintptr    // range profiler object, enabled at the first collection
	bound   *metricSet // the set whose counter data layout the object holds
	lastSet *metricSet // the set, pass and dispatch that ran last, for cumulative images
	lastRun int
	lastTag uint64
	// next is the pass CUPTI runs next for the bound set (what Stop
	// reported; 0 once every pass ran): in application replay CUPTI takes
	// a configuration's passes in order, and a SetConfig naming another
	// pass collects nothing usable (seen on the H200: every metric NaN,
	// and the later passes too).
	next int
	// filler runs one tiny kernel and waits (driver thread): the kernel
	// of the passes that finish a sequence a dispatch left unfinished.
	filler func() error
	// fresh: a change of metric set enables a new object (the object
	// keeps one counter data layout); false re-sizes the set's image on the
	// same object instead (REPLAYSPEC_CUPTI_SWITCH=resize, an experiment).
	fresh bool

	// spent is the time of each CUPTI call made while collecting, for the
	// benchmark's breakdown (driver thread; read under the worker).
	spent map[string]callTime
}

// passOfSet is one pass of one metric set.
type passOfSet struct {
	set  *metricSet
	pass int
}

// callTime is the calls of one CUPTI entry point and their total time.
type callTime struct {
	n     int
	total time.Duration
}

// metricSet is one configuration: a metric list, the host object that
// made its configuration image (and evaluates its values), the passes
// CUPTI schedules for it, the groups each pass completes, and the counter
// data image, all pinned while the profiler lives.
type metricSet struct {
	key     string
	metrics []string
	names   *cstrings
	host    uintptr
	config  []byte
	passes  int
	pin     runtime.Pinner

	calOnce sync.Once
	calErr  error
	cal     [][]string // metrics completed by each pass (calibrated)

	// Driver thread only.
	data    []byte // counter data image, sized on the object bound to s
	dataPin runtime.Pinner
}

// newProfiler loads CUPTI and reads the device's chip name and the
// context's counter availability. It runs on the driver thread with the
// context current.
func newProfiler(ctx uintptr) (*profiler, error) {
	lib, err := loadCUPTI(dlopen)
	if err != nil {
		return nil, err
	}
	p := newProfilerState()
	p.lib = lib
	p.fresh = os.Getenv("REPLAYSPEC_CUPTI_SWITCH") != "resize"
	p.passesOf = p.countPasses
	p.configure = p.hostSet
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

// newProfilerState is a profiler with its maps made and no CUPTI.
func newProfilerState() *profiler {
	return &profiler{valid: map[string]int{}, sets: map[string]*metricSet{}, groups: map[string][][]string{},
		owners: map[string][]passOfSet{}, fresh: true}
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

// hostSet is configure on CUPTI: the configuration image and host object of
// a metric list.
func (p *profiler) hostSet(metrics []string) (*metricSet, error) {
	config, n, host, err := p.hostConfig(metrics, true)
	if err != nil {
		return nil, err
	}
	if n < 1 || len(config) == 0 {
		p.deinitHost(host)
		return nil, fmt.Errorf("cupti: an empty configuration (%d passes) for %s", n, strings.Join(metrics, " "))
	}
	s := &metricSet{metrics: slices.Clone(metrics), names: newCStrings(metrics), host: host, config: config, passes: n}
	s.pin.Pin(&s.config[0])
	return s, nil
}

// HasCounter reports whether CUPTI knows the metric on this chip.
func (p *profiler) HasCounter(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.alonePassesLocked(name) > 0
}

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

func setKey(metrics []string) string { return strings.Join(metrics, "\x00") }

// set returns the metric set of metrics, configured once.
func (p *profiler) set(metrics []string) (*metricSet, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.setLocked(metrics)
}

func (p *profiler) setLocked(metrics []string) (*metricSet, error) {
	key := setKey(metrics)
	if s, ok := p.sets[key]; ok {
		return s, nil
	}
	s, err := p.configure(metrics)
	if err != nil {
		return nil, fmt.Errorf("cuda: counters %s: %w", strings.Join(metrics, " "), err)
	}
	s.key = key
	p.sets[key] = s
	return s, nil
}

// Groups splits metrics into the passes CUPTI schedules for them (see
// profiler): group i is what pass i of the set's configuration completes.
// A metric CUPTI needs several passes for by itself is refused: a replay
// pass collects what one pass completes (ReplayMetrics takes any list).
func (p *profiler) Groups(metrics []string) ([][]string, error) {
	p.mu.Lock()
	key := setKey(metrics)
	if g, ok := p.groups[key]; ok {
		p.mu.Unlock()
		return cloneGroups(g), nil
	}
	for _, m := range metrics {
		switch n := p.alonePassesLocked(m); {
		case n == 0:
			p.mu.Unlock()
			return nil, fmt.Errorf("cuda: CUPTI does not know metric %q on chip %s", m, p.chip)
		case n > 1:
			p.mu.Unlock()
			return nil, fmt.Errorf("cuda: metric %q needs %d passes by itself; a replay pass collects what one pass completes", m, n)
		}
	}
	s, err := p.setLocked(metrics)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	groups, err := p.groupsOf(s)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.groups[key] = groups
	for i, g := range groups {
		k := setKey(g)
		p.owners[k] = append(slices.DeleteFunc(p.owners[k], func(o passOfSet) bool { return o.set == s }), passOfSet{s, i})
	}
	return cloneGroups(groups), nil
}

// groupsOf is the set's groups: all of it for one pass, else calibrated
// once (outside the profiler's lock: calibration runs on the device).
func (p *profiler) groupsOf(s *metricSet) ([][]string, error) {
	if s.passes == 1 {
		return [][]string{slices.Clone(s.metrics)}, nil
	}
	s.calOnce.Do(func() {
		if p.calibrate == nil {
			s.calErr = fmt.Errorf("cuda: counters %s need %d passes and no device is there to learn them", strings.Join(s.metrics, " "), s.passes)
			return
		}
		var cal [][]string
		if cal, s.calErr = p.calibrate(s); s.calErr == nil {
			s.calErr = checkGroups(s, cal)
			s.cal = cal
		}
	})
	if s.calErr != nil {
		return nil, s.calErr
	}
	return cloneGroups(s.cal), nil
}

// checkGroups: one group a pass, none empty, every metric in one.
func checkGroups(s *metricSet, groups [][]string) error {
	if len(groups) != s.passes {
		return fmt.Errorf("cuda: counters %s: %d groups for %d passes", strings.Join(s.metrics, " "), len(groups), s.passes)
	}
	seen := map[string]bool{}
	for i, g := range groups {
		if len(g) == 0 {
			return fmt.Errorf("cuda: counters %s: CUPTI's pass %d of %d completes no metric by itself; collect the list with ReplayMetrics",
				strings.Join(s.metrics, " "), i, s.passes)
		}
		for _, m := range g {
			seen[m] = true
		}
	}
	for _, m := range s.metrics {
		if !seen[m] {
			return fmt.Errorf("cuda: counters %s: no pass completes %s", strings.Join(s.metrics, " "), m)
		}
	}
	return nil
}

// Passes is what CUPTI says the whole metric list needs.
func (p *profiler) Passes(metrics []string) (int, error) {
	s, err := p.set(metrics)
	if err != nil {
		return 0, err
	}
	return s.passes, nil
}

func cloneGroups(g [][]string) [][]string {
	out := make([][]string, len(g))
	for i := range g {
		out[i] = slices.Clone(g[i])
	}
	return out
}

// resolve finds the set and pass that collect one dispatch's counters: a
// group Groups made (the set in use first, then the newest), else the list
// as a set of its own, which must then fit one pass.
func (p *profiler) resolve(counters []string, current *metricSet) (*metricSet, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if owners := p.owners[setKey(counters)]; len(owners) > 0 {
		for _, o := range owners {
			if o.set == current {
				return o.set, o.pass, nil
			}
		}
		o := owners[len(owners)-1]
		return o.set, o.pass, nil
	}
	s, err := p.setLocked(counters)
	if err != nil {
		return nil, 0, err
	}
	if s.passes != 1 {
		return nil, 0, fmt.Errorf("cuda: counters %s need %d passes; one dispatch collects one group (hsa.CounterGroups splits them)",
			strings.Join(counters, " "), s.passes)
	}
	return s, 0, nil
}

// ownSet is counters as a set of their own, which must fit one pass: where
// a group is asked for out of its set's order (driver thread; it takes
// the profiler's lock, which no holder keeps while waiting for the
// driver thread).
func (p *profiler) ownSet(counters []string) (*metricSet, error) {
	s, err := p.set(counters)
	if err != nil {
		return nil, err
	}
	if s.passes != 1 {
		return nil, fmt.Errorf("cuda: counters %s need %d passes by themselves", strings.Join(counters, " "), s.passes)
	}
	return s, nil
}

// timed is invoke, adding the call's time to spent.
func timed[T any](p *profiler, name string, fn uintptr, params *T) error {
	began := time.Now()
	err := invoke(p.lib, name, fn, params)
	p.spend(name, time.Since(began))
	return err
}

// spend adds one call of name that took d to spent.
func (p *profiler) spend(name string, d time.Duration) {
	if p.spent == nil {
		p.spent = map[string]callTime{}
	}
	c := p.spent[name]
	c.n++
	c.total += d
	p.spent[name] = c
}

func (p *profiler) objectParams() *pRPObject {
	return sized(&pRPObject{object: p.object}, end(unsafe.Offsetof(pRPObject{}.object), 8))
}

// bind makes s the set the range profiler object collects (driver thread):
// the object is enabled at the first collection; a change of set takes a
// fresh object (see fresh) and sizes the set's counter data image on it.
func (p *profiler) bind(ctx uintptr, s *metricSet) error {
	lib := p.lib
	if p.bound != s && p.bound != nil && p.fresh {
		p.disable()
	}
	if p.object == 0 {
		en := sized(&pRPEnable{ctx: ctx}, end(unsafe.Offsetof(pRPEnable{}.object), 8))
		if err := timed(p, "cuptiRangeProfilerEnable", lib.rpEnable, en); err != nil {
			return err
		}
		p.object = en.object
		p.bound = nil
	}
	if p.bound == s {
		return nil
	}
	sz := sized(&pRPCounterDataSize{object: p.object, names: s.names.array(), numMetrics: uintptr(len(s.metrics)), maxRanges: 1, maxNodes: 1},
		end(unsafe.Offsetof(pRPCounterDataSize{}.size), 8))
	if err := timed(p, "cuptiRangeProfilerGetCounterDataSize", lib.rpGetCounterDataSize, sz); err != nil {
		return err
	}
	if uintptr(len(s.data)) != sz.size {
		s.dataPin.Unpin()
		s.data = make([]byte, sz.size)
		s.dataPin.Pin(&s.data[0])
	}
	p.bound, p.lastSet, p.next = s, nil, 0
	p.inUse.Store(s)
	return nil
}

// errOutOfSequence: the pass asked for does not follow the pass CUPTI ran
// last for the same dispatch.
var errOutOfSequence = errors.New("cuda: counters: CUPTI runs a configuration's passes in order")

// beginPass opens pass k of set s for dispatch tag around the next kernel
// launch (driver thread): CUPTI's auto range, so the range is the kernel
// alone. Pass 0 starts the counter data image afresh, first running the
// passes a dispatch left unfinished (with filler's kernel) so that CUPTI is
// back at pass 0; pass k > 0 must follow pass k-1 of the same dispatch,
// else it is errOutOfSequence (the image holds passes 0..k-1 of this
// dispatch, and CUPTI expects pass k).
func (p *profiler) beginPass(ctx uintptr, s *metricSet, k int, tag uint64) error {
	lib := p.lib
	if k < 0 || k >= s.passes {
		return fmt.Errorf("cuda: pass %d of counters %s, which CUPTI collects in %d", k, strings.Join(s.metrics, " "), s.passes)
	}
	if err := p.bind(ctx, s); err != nil {
		p.reset()
		return err
	}
	if k > 0 && (p.next != k || p.lastSet != s || p.lastRun != k-1 || p.lastTag != tag) {
		return fmt.Errorf("%w: pass %d of [%s] asked for after pass %d (dispatch %d), CUPTI's next is %d", errOutOfSequence,
			k, strings.Join(s.metrics, " "), p.lastRun, p.lastTag, p.next)
	}
	if k == 0 && p.next != 0 {
		if err := p.finishSequence(s); err != nil {
			p.reset()
			return fmt.Errorf("cuda: counters: finishing the passes a dispatch left: %w", err)
		}
	}
	if k == 0 {
		if err := p.initImage(s); err != nil {
			p.reset()
			return err
		}
	}
	p.lastSet, p.lastTag = nil, tag
	if err := p.setConfig(s, k); err != nil {
		p.reset()
		return err
	}
	if err := timed(p, "cuptiRangeProfilerStart", lib.rpStart, p.objectParams()); err != nil {
		p.reset()
		return err
	}
	return nil
}

func (p *profiler) initImage(s *metricSet) error {
	ini := sized(&pRPCounterDataInit{object: p.object, size: uintptr(len(s.data)), data: bytesPtr(s.data)}, end(unsafe.Offsetof(pRPCounterDataInit{}.data), 8))
	return timed(p, "cuptiRangeProfilerCounterDataImageInitialize", p.lib.rpCounterDataImageInitialize, ini)
}

func (p *profiler) setConfig(s *metricSet, k int) error {
	set := sized(&pRPSetConfig{object: p.object, configSize: uintptr(len(s.config)), config: bytesPtr(s.config),
		counterDataSize: uintptr(len(s.data)), counterData: bytesPtr(s.data), rangeMode: cuptiAutoRange, replayMode: cuptiApplicationReplay,
		maxRangesPerPass: 1, numNestingLevels: 1, minNestingLevel: 1, passIndex: uintptr(k), targetNestingLevel: 1},
		end(unsafe.Offsetof(pRPSetConfig{}.targetNestingLevel), 2))
	return timed(p, "cuptiRangeProfilerSetConfig", p.lib.rpSetConfig, set)
}

// finishSequence runs the passes from next to the last around filler's
// kernel, so that CUPTI's next pass is 0 again. The image gets nothing
// anyone reads: pass 0 initializes it.
func (p *profiler) finishSequence(s *metricSet) error {
	if p.filler == nil {
		return errors.New("no kernel to run the passes with")
	}
	for guard := 0; p.next != 0; guard++ {
		if guard >= s.passes {
			return fmt.Errorf("CUPTI still wants pass %d after %d passes", p.next, guard)
		}
		if err := p.setConfig(s, p.next); err != nil {
			return err
		}
		if err := timed(p, "cuptiRangeProfilerStart", p.lib.rpStart, p.objectParams()); err != nil {
			return err
		}
		if err := p.filler(); err != nil {
			return err
		}
		if err := p.stop(); err != nil {
			return err
		}
	}
	return nil
}

// stop ends the pass in progress and decodes it; next follows CUPTI.
func (p *profiler) stop() error {
	lib := p.lib
	stop := sized(&pRPStop{object: p.object}, end(unsafe.Offsetof(pRPStop{}.allPassSubmitted), 1))
	if err := timed(p, "cuptiRangeProfilerStop", lib.rpStop, stop); err != nil {
		return err
	}
	if stop.allPassSubmitted != 0 {
		p.next = 0
	} else {
		p.next = int(stop.passIndex)
	}
	dec := sized(&pRPDecode{object: p.object}, end(unsafe.Offsetof(pRPDecode{}.dropped), 8))
	if err := timed(p, "cuptiRangeProfilerDecodeData", lib.rpDecodeData, dec); err != nil {
		return err
	}
	if dec.dropped != 0 {
		return fmt.Errorf("cuda: counters: CUPTI dropped %d ranges: a counted pass must launch exactly one kernel", dec.dropped)
	}
	return nil
}

// finishPass closes pass k after its kernel completed and decodes it into
// the set's counter data image (driver thread).
func (p *profiler) finishPass(s *metricSet, k int) error {
	if err := p.stop(); err != nil {
		p.reset()
		return err
	}
	p.lastSet, p.lastRun = s, k
	return nil
}

// endPass closes pass k and evaluates metrics (a subset of the set's) from
// everything collected since the image started. A metric without a value
// is an error, never 0.
func (p *profiler) endPass(s *metricSet, k int, metrics []string) (map[string]float64, error) {
	if err := p.finishPass(s, k); err != nil {
		return nil, err
	}
	vals, err := p.evaluate(s, metrics)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, m := range metrics {
		if v := vals[m]; math.IsNaN(v) || math.IsInf(v, 0) {
			missing = append(missing, fmt.Sprintf("%s (%v)", m, v))
		}
	}
	if len(missing) > 0 {
		p.reset() // CUPTI's pass state is not what we think: start afresh
		return nil, fmt.Errorf("cuda: counters: no value for %s after pass %d of %d of [%s]: CUPTI did not collect them in the passes run since pass 0",
			strings.Join(missing, ", "), k, s.passes, strings.Join(s.metrics, " "))
	}
	return vals, nil
}

// evaluate reads metrics (names of s) out of s's counter data image.
func (p *profiler) evaluate(s *metricSet, metrics []string) (map[string]float64, error) {
	lib := p.lib
	info := sized(&pRPCounterDataInfo{counterData: bytesPtr(s.data), size: uintptr(len(s.data))}, end(unsafe.Offsetof(pRPCounterDataInfo{}.ranges), 8))
	if err := timed(p, "cuptiRangeProfilerGetCounterDataInfo", lib.rpGetCounterDataInfo, info); err != nil {
		return nil, err
	}
	if info.ranges < 1 {
		return nil, fmt.Errorf("cuda: counters: CUPTI recorded no range (no kernel ran in the pass)")
	}
	names := s.names
	if !slices.Equal(metrics, s.metrics) {
		names = newCStrings(metrics)
		defer names.free()
	}
	vals := make([]float64, len(metrics))
	var pin runtime.Pinner
	pin.Pin(&vals[0])
	defer pin.Unpin()
	ev := sized(&pEvaluate{host: s.host, counterData: bytesPtr(s.data), dataSize: uintptr(len(s.data)), rangeIndex: 0,
		names: names.array(), numMetrics: uintptr(len(metrics)), values: uintptr(unsafe.Pointer(&vals[0]))},
		end(unsafe.Offsetof(pEvaluate{}.values), 8))
	if err := timed(p, "cuptiProfilerHostEvaluateToGpuValues", lib.hostEvaluateToGpuValues, ev); err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(vals))
	for i, m := range metrics {
		out[m] = vals[i]
	}
	return out, nil
}

// abort closes a pass whose kernel never ran (driver thread).
func (p *profiler) abort() {
	if p.object != 0 {
		stop := sized(&pRPStop{object: p.object}, end(unsafe.Offsetof(pRPStop{}.allPassSubmitted), 1))
		_ = invoke(p.lib, "cuptiRangeProfilerStop", p.lib.rpStop, stop)
	}
	p.reset()
}

// reset drops the object after a failed call: the next collection starts
// on a fresh one rather than on state CUPTI may have left half done.
func (p *profiler) reset() {
	p.disable()
}

// disable ends the range profiler object; the next collection enables a
// fresh one, and every set's counter data image is sized again on it.
func (p *profiler) disable() {
	if p.object != 0 {
		_ = timed(p, "cuptiRangeProfilerDisable", p.lib.rpDisable, p.objectParams())
		p.object = 0
	}
	p.bound, p.lastSet = nil, nil
}

// close releases everything (driver thread).
func (p *profiler) close() {
	lib := p.lib
	p.disable()
	p.mu.Lock()
	for k, s := range p.sets {
		p.deinitHost(s.host)
		s.names.free()
		s.pin.Unpin()
		s.dataPin.Unpin()
		delete(p.sets, k)
	}
	p.mu.Unlock()
	_ = invoke(lib, "cuptiProfilerDeInitialize", lib.profilerDeInitialize, sized(&pInitialize{}, unsafe.Sizeof(cuptiHdr{})))
	p.pin.Unpin()
}

// integral turns metric values into the model's unsigned integers (the
// nearest integer). A value that is no count is an error, never a 0 that a
// record would carry as if counted: NaN (CUPTI evaluates NaN for a metric it
// did not collect, as every group after the first read on the H200 when the
// range profiler object was reused), an infinity, or a negative number
// (beyond rounding noise around 0). Exact values are what CollectMetrics
// returns.
func integral(vals map[string]float64) (map[string]uint64, error) {
	out := make(map[string]uint64, len(vals))
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		switch v := vals[k]; {
		case math.IsNaN(v) || math.IsInf(v, 0) || v < -0.5 || v >= math.MaxUint64:
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

// takeSpent lists the time of each CUPTI call made while collecting, and
// resets it.
func (p *profiler) takeSpent() map[string]callTime {
	out := p.spent
	p.spent = nil
	return out
}
