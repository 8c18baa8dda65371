package cuda

import (
	"time"

	"github.com/replayspec/replayspec/hsa"
)

// TimeGPU runs f and returns the device time between an event recorded on
// the legacy default stream before f and one after it. Every queue and the
// snapshot and restore copies order themselves against that stream, so the
// span covers all the device work f caused (and device idle time while the
// host worked between driver calls). For benchmarks (cmd/cudabench).
func (r *Runtime) TimeGPU(f func() error) (time.Duration, error) {
	var start, end uintptr
	err := r.w.do(func() error {
		var err error
		if start, err = r.drv.newEvent(); err != nil {
			return err
		}
		if end, err = r.drv.newEvent(); err != nil {
			return err
		}
		return r.drv.record(start, 0)
	})
	defer r.w.do(func() error { r.drv.destroyEvent(start); r.drv.destroyEvent(end); return nil })
	if err != nil {
		return 0, err
	}
	if err := f(); err != nil {
		return 0, err
	}
	var ns int64
	err = r.w.do(func() error {
		if err := r.drv.record(end, 0); err != nil {
			return err
		}
		if err := r.drv.syncStream(0); err != nil {
			return err
		}
		var err error
		ns, err = r.drv.elapsedNs(start, end)
		return err
	})
	return time.Duration(ns), err
}

// CopyDeviceToDevice copies n bytes between device allocations with one
// plain cuMemcpyDtoD: the baseline that snapshot and restore bandwidth is
// measured against.
func (r *Runtime) CopyDeviceToDevice(dst, src hsa.Allocation, n uint64) error {
	if _, err := r.lookup(dst, 0, n); err != nil {
		return err
	}
	if _, err := r.lookup(src, 0, n); err != nil {
		return err
	}
	return r.w.do(func() error {
		return call("cuMemcpyDtoD", r.drv.memcpyDtoD, uintptr(dst.Handle), uintptr(src.Handle), uintptr(n))
	})
}
