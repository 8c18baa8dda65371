package cuda

import (
	"math"
	"unsafe"

	"github.com/ebitengine/purego"
)

// call invokes a driver entry point and turns a non-zero CUresult into an
// error. Pointer arguments converted to uintptr in the caller's argument
// list stay alive and unmoved for the call (go:uintptrescapes, as SyscallN).
//
//go:uintptrescapes
func call(name string, fn uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(fn, args...)
	if r != 0 {
		return &driverError{call: name, code: r}
	}
	return nil
}

// Typed wrappers for the calls made in more than one place. They must run
// on the driver thread (worker.do).

func (d *driver) alloc(size uint64) (uint64, error) {
	var p uint64
	err := call("cuMemAlloc", d.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(size))
	return p, err
}

func (d *driver) free(p uint64) error { return call("cuMemFree", d.memFree, uintptr(p)) }

func (d *driver) htod(dst uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return call("cuMemcpyHtoD", d.memcpyHtoD, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
}

func (d *driver) dtoh(dst []byte, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return call("cuMemcpyDtoH", d.memcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
}

func (d *driver) dtodAsync(dst, src, n uint64, stream uintptr) error {
	return call("cuMemcpyDtoDAsync", d.memcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), stream)
}

func (d *driver) syncStream(stream uintptr) error {
	return call("cuStreamSynchronize", d.streamSynchronize, stream)
}

func (d *driver) newEvent() (uintptr, error) {
	var ev uintptr
	err := call("cuEventCreate", d.eventCreate, uintptr(unsafe.Pointer(&ev)), 0)
	return ev, err
}

func (d *driver) destroyEvent(ev uintptr) {
	if d.eventDestroy != 0 && ev != 0 {
		_ = call("cuEventDestroy", d.eventDestroy, ev)
	}
}

func (d *driver) record(ev, stream uintptr) error {
	return call("cuEventRecord", d.eventRecord, ev, stream)
}

// elapsedNs is the time between two completed events, in ns. The driver
// reports float milliseconds with about 0.5 us resolution.
func (d *driver) elapsedNs(start, end uintptr) (int64, error) {
	var ms float32
	if err := call("cuEventElapsedTime", d.eventElapsedTime, uintptr(unsafe.Pointer(&ms)), start, end); err != nil {
		return 0, err
	}
	return int64(math.Round(float64(ms) * 1e6)), nil
}
