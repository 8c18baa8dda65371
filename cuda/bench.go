package cuda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/replayspec/replayspec/hsa"
)

// Benchmark helpers for cmd/cudabench. Nothing else in the package uses them.

// TimeGPU runs f and returns the device time between an event recorded on
// the legacy default stream before f and one after it. Every queue and the
// snapshot and restore copies order themselves against that stream, so the
// span covers all the device work f caused and the device's idle time
// while the host worked between driver calls: for work whose cost is partly
// the host's (a Submit that waits, a restore that reads flags back). For
// device work alone, use a DeviceTimer.
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

// gatePTX holds the legacy default stream until the host says go: one
// thread polls flags[0] in pinned host memory until it is non-zero, then
// writes flags[1] = 1; after limit ns of polling it gives up and writes 2.
const gatePTX = `
.version 6.0
.target sm_52
.address_size 64

.visible .entry gate(
	.param .u64 flags,
	.param .u64 limit
)
{
	.reg .pred %p<3>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<7>;

	ld.param.u64 %rd1, [flags];
	ld.param.u64 %rd2, [limit];
	cvta.to.global.u64 %rd3, %rd1;
	mov.u64 %rd4, %globaltimer;
	mov.u32 %r2, 1;
WAIT:
	ld.volatile.global.u32 %r1, [%rd3];
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mov.u64 %rd5, %globaltimer;
	sub.u64 %rd6, %rd5, %rd4;
	setp.lt.u64 %p2, %rd6, %rd2;
	@%p2 bra WAIT;
	mov.u32 %r2, 2;
DONE:
	st.volatile.global.u32 [%rd3+4], %r2;
	ret;
}
`

// gateLimit bounds how long the gate holds the stream: far longer than the
// host needs to enqueue a restore, short enough that a timed function that
// waits for the device (which the gate would block) fails soon.
const gateLimit = 200 * time.Millisecond

// ErrGateTimedOut: the gate let the stream go before the host released it,
// so the device time includes waiting for the host. A timed function that
// waits for the device itself (a synchronous copy to the host, a Submit)
// always does this: time it with TimeGPU instead.
var ErrGateTimedOut = errors.New("cuda: device timer: the gate timed out (the timed function waited for the device?)")

// DeviceTimer times device work alone. Before the timed function runs it
// launches a one-thread gate kernel on the legacy default stream that
// polls a flag in pinned host memory, and records the start event behind
// it; the function enqueues its work behind the gate; then the end event is
// recorded and the flag set. The device starts the work only once all of it
// is enqueued, so the span between the events is the device's time for the
// work, with no host scheduling gaps in it. The function must not wait for
// the device.
type DeviceTimer struct {
	r          *Runtime
	module     uintptr
	gate       uintptr
	flags      uint64 // 8 bytes of pinned host memory: go, outcome
	start, end uintptr
}

// NewDeviceTimer loads the gate kernel and takes its flag and events.
func (r *Runtime) NewDeviceTimer() (*DeviceTimer, error) {
	t := &DeviceTimer{r: r}
	err := r.w.do(func() error {
		d := r.drv
		image := append([]byte(gatePTX), 0)
		errLog := make([]byte, 4096)
		opts := []uint32{5, 6} // CU_JIT_ERROR_LOG_BUFFER and its size
		vals := []uintptr{uintptr(unsafe.Pointer(&errLog[0])), uintptr(len(errLog))}
		var pin runtime.Pinner
		pin.Pin(&errLog[0])
		err := call("cuModuleLoadDataEx", d.moduleLoadDataEx, uintptr(unsafe.Pointer(&t.module)),
			uintptr(unsafe.Pointer(&image[0])), uintptr(len(opts)),
			uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
		pin.Unpin()
		if err != nil {
			return fmt.Errorf("%w: gate: %s", err, bytes.TrimRight(errLog, "\x00"))
		}
		name := []byte("gate\x00")
		if err := call("cuModuleGetFunction", d.moduleGetFunction, uintptr(unsafe.Pointer(&t.gate)), t.module, uintptr(unsafe.Pointer(&name[0]))); err != nil {
			return err
		}
		var p uintptr
		if err := call("cuMemAllocHost", d.memAllocHost, uintptr(unsafe.Pointer(&p)), 8); err != nil {
			return err
		}
		t.flags = uint64(p)
		if t.start, err = d.newEvent(); err != nil {
			return err
		}
		t.end, err = d.newEvent()
		return err
	})
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// flag is word i of the gate's pinned flags.
func (t *DeviceTimer) flag(i uint64) *uint32 {
	return (*uint32)(unsafe.Pointer(&hostBytes(t.flags, 4*i, 4)[0]))
}

// Time runs f, which enqueues device work on any stream ordered after the
// legacy default stream and does not wait for it, and returns the device
// time of that work. It fails with ErrGateTimedOut when the gate gave up
// (f took longer than gateLimit, or waited for the device).
func (t *DeviceTimer) Time(f func() error) (time.Duration, error) {
	d := t.r.drv
	err := t.r.w.do(func() error {
		atomic.StoreUint32(t.flag(0), 0)
		atomic.StoreUint32(t.flag(1), 0)
		if err := d.cuLaunch(t.gate, 1, 1, []uint64{t.flags, uint64(gateLimit)}, 0); err != nil {
			return err
		}
		return d.record(t.start, 0)
	})
	if err != nil {
		atomic.StoreUint32(t.flag(0), 1) // a launched gate must not hold the stream
		return 0, err
	}
	ferr := f()
	var ns int64
	var outcome uint32
	err = t.r.w.do(func() error {
		rerr := d.record(t.end, 0)
		atomic.StoreUint32(t.flag(0), 1) // release the gate, whatever happened
		if err := d.syncStream(0); err != nil {
			return err
		}
		if rerr != nil {
			return rerr
		}
		outcome = atomic.LoadUint32(t.flag(1))
		var err error
		ns, err = d.elapsedNs(t.start, t.end)
		return err
	})
	switch {
	case ferr != nil:
		return 0, ferr
	case err != nil:
		return 0, err
	case outcome != 1:
		return 0, fmt.Errorf("%w (outcome %d)", ErrGateTimedOut, outcome)
	}
	return time.Duration(ns), nil
}

// Close frees the gate's module, flag and events.
func (t *DeviceTimer) Close() {
	_ = t.r.w.do(func() error {
		d := t.r.drv
		d.destroyEvent(t.start)
		d.destroyEvent(t.end)
		if t.flags != 0 {
			_ = call("cuMemFreeHost", d.memFreeHost, uintptr(t.flags))
		}
		if t.module != 0 && d.moduleUnload != 0 {
			_ = call("cuModuleUnload", d.moduleUnload, t.module)
		}
		*t = DeviceTimer{r: t.r}
		return nil
	})
}

// CopyDeviceToDevice copies n bytes between device allocations with one
// plain cuMemcpyDtoD: the baseline that snapshot and restore bandwidth is
// measured against. Between device allocations it does not wait for the
// device, so a DeviceTimer can time it.
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

// pagesPTX: pages_inc(x, pages, n): work item i increments int32 element
// (i mod 1024) of the 4 KiB page pages[i / 1024] of x. A benchmark writes
// any page pattern with it (contiguous, strided, random), the same pages
// on every run.
const pagesPTX = `
.version 6.0
.target sm_52
.address_size 64

.visible .entry pages_inc(
	.param .u64 x,
	.param .u64 pages,
	.param .u32 n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [pages];
	ld.param.u32 %r1, [n];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.u32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra DONE;
	shr.u32 %r6, %r5, 10;
	and.b32 %r7, %r5, 1023;
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r8, [%rd4];
	mul.wide.u32 %rd5, %r8, 4096;
	mul.wide.u32 %rd6, %r7, 4;
	add.s64 %rd7, %rd1, %rd5;
	add.s64 %rd7, %rd7, %rd6;
	ld.global.u32 %r9, [%rd7];
	add.s32 %r9, %r9, 1;
	st.global.u32 [%rd7], %r9;
DONE:
	ret;
}
`

// PageWriter increments every int32 of a fixed list of 4 KiB pages.
type PageWriter struct {
	r      *Runtime
	module uintptr
	fn     uintptr
	pages  uint64 // device copy of the page list
	count  uint64
}

// NewPageWriter loads pages_inc and uploads the page list.
func (r *Runtime) NewPageWriter(pages []uint32) (*PageWriter, error) {
	if len(pages) == 0 {
		return nil, errors.New("cuda: page writer: no pages")
	}
	pw := &PageWriter{r: r, count: uint64(len(pages))}
	raw := make([]byte, 4*len(pages))
	for i, p := range pages {
		binary.LittleEndian.PutUint32(raw[4*i:], p)
	}
	err := r.w.do(func() error {
		d := r.drv
		image := append([]byte(pagesPTX), 0)
		if err := call("cuModuleLoadDataEx", d.moduleLoadDataEx, uintptr(unsafe.Pointer(&pw.module)),
			uintptr(unsafe.Pointer(&image[0])), 0, 0, 0); err != nil {
			return err
		}
		name := []byte("pages_inc\x00")
		if err := call("cuModuleGetFunction", d.moduleGetFunction, uintptr(unsafe.Pointer(&pw.fn)), pw.module, uintptr(unsafe.Pointer(&name[0]))); err != nil {
			return err
		}
		var err error
		if pw.pages, err = d.alloc(uint64(len(raw))); err != nil {
			return err
		}
		return d.htod(pw.pages, raw)
	})
	if err != nil {
		pw.Close()
		return nil, err
	}
	return pw, nil
}

// Run increments the pages of a (device memory of at least the highest
// page) on the legacy default stream and waits for it.
func (pw *PageWriter) Run(a hsa.Allocation) error {
	live, err := pw.r.lookup(a, 0, 0)
	if err != nil {
		return err
	}
	n := pw.count * 1024
	return pw.r.w.do(func() error {
		d := pw.r.drv
		pw.r.noteWrite(wroteByKernel, uint64(pw.fn), live.Handle, pw.pages, n)
		if err := d.cuLaunch(pw.fn, uint32((n+255)/256), 256, []uint64{live.Handle, pw.pages, n}, 0); err != nil {
			return err
		}
		return d.syncStream(0)
	})
}

// Close frees the page list and the module.
func (pw *PageWriter) Close() {
	_ = pw.r.w.do(func() error {
		d := pw.r.drv
		if pw.pages != 0 {
			_ = d.free(pw.pages)
		}
		if pw.module != 0 && d.moduleUnload != 0 {
			_ = call("cuModuleUnload", d.moduleUnload, pw.module)
		}
		return nil
	})
}

// EmptyLaunch enqueues one launch that does nothing (fill over zero
// items) on the legacy default stream: a DeviceTimer times what one launch
// costs the device.
func (r *Runtime) EmptyLaunch() error {
	return r.w.do(func() error {
		return r.drv.cuLaunch(r.kernels["fill"], 1, 32, []uint64{0, 0, 0}, 0)
	})
}
