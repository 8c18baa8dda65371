package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CUPTI's profiler host API and range profiler (CUDA 12.6 and later),
// loaded at run time like the driver. Every entry point takes one
// parameter struct whose first field is the struct's size: the library
// accepts the sizes of older headers, so each struct below stops at the
// last field this package uses, and structSize is computed from it.

// cuptiLibraries are tried in order; REPLAYSPEC_CUPTI names a file to try
// first. The toolkit keeps CUPTI beside the perf libraries it loads.
var cuptiLibraries = []string{
	"libcupti.so.13", "libcupti.so.12", "libcupti.so",
	"/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
	"/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13",
	"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	"/usr/local/cuda/lib64/libcupti.so",
}

// cuptiLib holds the entry points.
type cuptiLib struct {
	getResultString                                                uintptr
	profilerInitialize, profilerDeInitialize, deviceGetChipName    uintptr
	getCounterAvailability                                         uintptr
	hostInitialize, hostDeinitialize, hostConfigAddMetrics         uintptr
	hostGetConfigImageSize, hostGetConfigImage, hostGetNumOfPasses uintptr
	hostEvaluateToGpuValues                                        uintptr
	rpEnable, rpDisable, rpSetConfig, rpStart, rpStop              uintptr
	rpPushRange, rpPopRange, rpDecodeData, rpGetCounterDataSize    uintptr
	rpCounterDataImageInitialize, rpGetCounterDataInfo             uintptr
}

func (c *cuptiLib) symbols() []symbol {
	return []symbol{
		{&c.getResultString, []string{"cuptiGetResultString"}, false},
		{&c.profilerInitialize, []string{"cuptiProfilerInitialize"}, false},
		{&c.profilerDeInitialize, []string{"cuptiProfilerDeInitialize"}, false},
		{&c.deviceGetChipName, []string{"cuptiDeviceGetChipName"}, false},
		{&c.getCounterAvailability, []string{"cuptiProfilerGetCounterAvailability"}, false},
		{&c.hostInitialize, []string{"cuptiProfilerHostInitialize"}, false},
		{&c.hostDeinitialize, []string{"cuptiProfilerHostDeinitialize"}, false},
		{&c.hostConfigAddMetrics, []string{"cuptiProfilerHostConfigAddMetrics"}, false},
		{&c.hostGetConfigImageSize, []string{"cuptiProfilerHostGetConfigImageSize"}, false},
		{&c.hostGetConfigImage, []string{"cuptiProfilerHostGetConfigImage"}, false},
		{&c.hostGetNumOfPasses, []string{"cuptiProfilerHostGetNumOfPasses"}, false},
		{&c.hostEvaluateToGpuValues, []string{"cuptiProfilerHostEvaluateToGpuValues"}, false},
		{&c.rpEnable, []string{"cuptiRangeProfilerEnable"}, false},
		{&c.rpDisable, []string{"cuptiRangeProfilerDisable"}, false},
		{&c.rpSetConfig, []string{"cuptiRangeProfilerSetConfig"}, false},
		{&c.rpStart, []string{"cuptiRangeProfilerStart"}, false},
		{&c.rpStop, []string{"cuptiRangeProfilerStop"}, false},
		{&c.rpPushRange, []string{"cuptiRangeProfilerPushRange"}, false},
		{&c.rpPopRange, []string{"cuptiRangeProfilerPopRange"}, false},
		{&c.rpDecodeData, []string{"cuptiRangeProfilerDecodeData"}, false},
		{&c.rpGetCounterDataSize, []string{"cuptiRangeProfilerGetCounterDataSize"}, false},
		{&c.rpCounterDataImageInitialize, []string{"cuptiRangeProfilerCounterDataImageInitialize"}, false},
		{&c.rpGetCounterDataInfo, []string{"cuptiRangeProfilerGetCounterDataInfo"}, false},
	}
}

// resolveCUPTI looks every entry point up; the error names the missing ones.
func resolveCUPTI(lib library) (*cuptiLib, error) {
	c := &cuptiLib{}
	var missing []string
	for _, s := range c.symbols() {
		for _, name := range s.names {
			if addr, err := lib.Sym(name); err == nil && addr != 0 {
				*s.slot = addr
				break
			}
		}
		if *s.slot == 0 && !s.optional {
			missing = append(missing, s.names[0])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no CUPTI profiler found: the library lacks %s", strings.Join(missing, ", "))
	}
	return c, nil
}

// loadCUPTI opens the first CUPTI that loads and has the range profiler.
// The perf libraries beside a CUPTI found by path are loaded first, so that
// CUPTI finds them without LD_LIBRARY_PATH.
func loadCUPTI(open openLibrary) (*cuptiLib, error) {
	names := cuptiLibraries
	if p := os.Getenv("REPLAYSPEC_CUPTI"); p != "" {
		names = append([]string{p}, names...)
	}
	var tried []string
	for _, name := range names {
		if strings.HasPrefix(name, "/") {
			dir := filepath.Dir(name)
			for _, perf := range []string{"libnvperf_host.so", "libnvperf_target.so"} {
				_, _ = open(filepath.Join(dir, perf))
			}
		}
		lib, err := open(name)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		c, err := resolveCUPTI(lib)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		return c, nil
	}
	return nil, fmt.Errorf("no CUPTI profiler found: tried %s", strings.Join(tried, ", "))
}

// cuptiError is a non-zero CUptiResult.
type cuptiError struct {
	call string
	code uintptr
	text string
}

func (e *cuptiError) Error() string {
	return fmt.Sprintf("cupti: %s: %s (%d)", e.call, e.text, e.code)
}

// cuptiInvalidMetric is CUPTI_ERROR_INVALID_METRIC_NAME.
const cuptiInvalidMetric = 21

// call runs one CUPTI entry point on a parameter struct. The struct and
// whatever it points to must stay pinned for the call (see pinned).
func (c *cuptiLib) call(name string, fn uintptr, params unsafe.Pointer) error {
	r, _, _ := purego.SyscallN(fn, uintptr(params))
	if r == 0 {
		return nil
	}
	text := "CUptiResult"
	var s *byte
	if c.getResultString != 0 {
		if rr, _, _ := purego.SyscallN(c.getResultString, r, uintptr(unsafe.Pointer(&s))); rr == 0 && s != nil {
			text = goString(s)
		}
	}
	return &cuptiError{call: name, code: r, text: text}
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for ptr := unsafe.Pointer(p); *(*byte)(ptr) != 0; ptr = unsafe.Add(ptr, 1) {
		b = append(b, *(*byte)(ptr))
	}
	return string(b)
}

// cstrings holds NUL-terminated copies of names and an array of pointers to
// them, pinned while CUPTI may read them.
type cstrings struct {
	bytes [][]byte
	ptrs  []uintptr
	pin   runtime.Pinner
}

func newCStrings(names []string) *cstrings {
	cs := &cstrings{}
	for _, n := range names {
		b := append([]byte(n), 0)
		cs.pin.Pin(&b[0])
		cs.bytes = append(cs.bytes, b)
		cs.ptrs = append(cs.ptrs, uintptr(unsafe.Pointer(&b[0])))
	}
	if len(cs.ptrs) > 0 {
		cs.pin.Pin(&cs.ptrs[0])
	}
	return cs
}

func (cs *cstrings) array() uintptr {
	if len(cs.ptrs) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&cs.ptrs[0]))
}

func (cs *cstrings) free() { cs.pin.Unpin() }

// bytesPtr is the address of b's first byte, 0 for an empty slice.
func bytesPtr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

// The parameter structs, x86-64 and arm64 layouts (size_t and pointers are
// 8 bytes; enums are 4). hdr is the common head: structSize and pPriv.
type cuptiHdr struct {
	structSize uintptr
	priv       uintptr
}

type pInitialize struct{ cuptiHdr }

type pChipName struct {
	cuptiHdr
	deviceIndex uintptr
	chipName    *byte
}

type pCounterAvailability struct {
	cuptiHdr
	ctx       uintptr
	imageSize uintptr
	image     uintptr
}

type pHostInitialize struct {
	cuptiHdr
	profilerType uint32
	chipName     uintptr
	availability uintptr
	host         uintptr
}

type pHostObject struct {
	cuptiHdr
	host uintptr
}

type pConfigAddMetrics struct {
	cuptiHdr
	host       uintptr
	names      uintptr
	numMetrics uintptr
}

type pConfigImageSize struct {
	cuptiHdr
	host uintptr
	size uintptr
}

type pConfigImage struct {
	cuptiHdr
	host  uintptr
	size  uintptr
	image uintptr
}

type pNumOfPasses struct {
	cuptiHdr
	size   uintptr
	image  uintptr
	passes uintptr
}

type pEvaluate struct {
	cuptiHdr
	host        uintptr
	counterData uintptr
	dataSize    uintptr
	rangeIndex  uintptr
	names       uintptr
	numMetrics  uintptr
	values      uintptr
}

type pRPEnable struct {
	cuptiHdr
	ctx    uintptr
	object uintptr
}

type pRPObject struct {
	cuptiHdr
	object uintptr
}

type pRPStop struct {
	cuptiHdr
	object             uintptr
	passIndex          uintptr
	targetNestingLevel uintptr
	allPassSubmitted   uint8
}

type pRPPushRange struct {
	cuptiHdr
	object uintptr
	name   uintptr
}

type pRPDecode struct {
	cuptiHdr
	object  uintptr
	dropped uintptr
}

type pRPCounterDataSize struct {
	cuptiHdr
	object     uintptr
	names      uintptr
	numMetrics uintptr
	maxRanges  uintptr
	maxNodes   uint32
	size       uintptr
}

type pRPCounterDataInit struct {
	cuptiHdr
	object uintptr
	size   uintptr
	data   uintptr
}

type pRPSetConfig struct {
	cuptiHdr
	object             uintptr
	configSize         uintptr
	config             uintptr
	counterDataSize    uintptr
	counterData        uintptr
	rangeMode          uint32
	replayMode         uint32
	maxRangesPerPass   uintptr
	numNestingLevels   uint16
	minNestingLevel    uint16
	passIndex          uintptr
	targetNestingLevel uint16
}

type pRPCounterDataInfo struct {
	cuptiHdr
	counterData uintptr
	size        uintptr
	ranges      uintptr
}

// Enumerations.
const (
	cuptiRangeProfilerType = 0 // CUPTI_PROFILER_TYPE_RANGE_PROFILER
	cuptiAutoRange         = 1 // CUPTI_AutoRange: each kernel launch is a range
	cuptiUserRange         = 2 // CUPTI_UserRange
	cuptiApplicationReplay = 1 // CUPTI_ApplicationReplay: SetConfig names the pass
	cuptiUserReplay        = 3 // CUPTI_UserReplay
)

// sized returns p with structSize set to end, the offset just past the
// struct's last used field.
func sized[T any](p *T, end uintptr) *T {
	(*cuptiHdr)(unsafe.Pointer(p)).structSize = end
	return p
}

// end is the offset just past a field: offset plus size.
func end(off, size uintptr) uintptr { return off + size }

// invoke pins p for one call.
func invoke[T any](c *cuptiLib, name string, fn uintptr, p *T) error {
	var pin runtime.Pinner
	pin.Pin(p)
	defer pin.Unpin()
	return c.call(name, fn, unsafe.Pointer(p))
}

var errNoCUPTI = errors.New("cupti: not loaded")
