package cuda

import (
	"fmt"
	"strings"
)

// driver holds the addresses of the driver entry points the runtime calls.
// Zero means an optional symbol the driver lacks.
type driver struct {
	init, deviceGetCount, deviceGet, deviceGetName, deviceGetAttribute uintptr
	primaryCtxRetain, primaryCtxRelease, ctxSetCurrent, ctxSynchronize uintptr
	ctxGetCurrent, memsetD8Async                                       uintptr
	moduleLoadDataEx, moduleGetFunction, moduleUnload                  uintptr
	memAlloc, memFree, memAllocHost, memFreeHost                       uintptr
	memcpyHtoD, memcpyDtoH, memcpyDtoD, memcpyDtoDAsync                uintptr
	streamCreate, streamDestroy, streamSynchronize                     uintptr
	eventCreate, eventDestroy, eventRecord, eventSynchronize           uintptr
	eventElapsedTime, launchKernel, launchHostFunc                     uintptr
}

// symbol is one entry point: the names to try, newest ABI first, and
// whether Open fails without it.
type symbol struct {
	slot     *uintptr
	names    []string
	optional bool
}

// symbols lists every entry point. The _v2 names are the 64-bit-size ABIs
// that cuda.h maps the plain names to; older drivers only have the plain
// ones. cuEventElapsedTime keeps the plain name first because its _v2 exists
// only in recent drivers and the plain one has the signature used here.
func (d *driver) symbols() []symbol {
	return []symbol{
		{&d.init, []string{"cuInit"}, false},
		{&d.deviceGetCount, []string{"cuDeviceGetCount"}, false},
		{&d.deviceGet, []string{"cuDeviceGet"}, false},
		{&d.deviceGetName, []string{"cuDeviceGetName"}, false},
		{&d.deviceGetAttribute, []string{"cuDeviceGetAttribute"}, false},
		{&d.primaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}, false},
		{&d.primaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, true},
		{&d.ctxSetCurrent, []string{"cuCtxSetCurrent"}, false},
		{&d.ctxSynchronize, []string{"cuCtxSynchronize"}, false},
		{&d.ctxGetCurrent, []string{"cuCtxGetCurrent"}, true},
		{&d.memsetD8Async, []string{"cuMemsetD8Async"}, true},
		{&d.moduleLoadDataEx, []string{"cuModuleLoadDataEx"}, false},
		{&d.moduleGetFunction, []string{"cuModuleGetFunction"}, false},
		{&d.moduleUnload, []string{"cuModuleUnload"}, true},
		{&d.memAlloc, []string{"cuMemAlloc_v2", "cuMemAlloc"}, false},
		{&d.memFree, []string{"cuMemFree_v2", "cuMemFree"}, false},
		{&d.memAllocHost, []string{"cuMemAllocHost_v2", "cuMemAllocHost"}, false},
		{&d.memFreeHost, []string{"cuMemFreeHost"}, false},
		{&d.memcpyHtoD, []string{"cuMemcpyHtoD_v2", "cuMemcpyHtoD"}, false},
		{&d.memcpyDtoH, []string{"cuMemcpyDtoH_v2", "cuMemcpyDtoH"}, false},
		{&d.memcpyDtoD, []string{"cuMemcpyDtoD_v2", "cuMemcpyDtoD"}, false},
		{&d.memcpyDtoDAsync, []string{"cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync"}, false},
		{&d.streamCreate, []string{"cuStreamCreate"}, false},
		{&d.streamDestroy, []string{"cuStreamDestroy_v2", "cuStreamDestroy"}, true},
		{&d.streamSynchronize, []string{"cuStreamSynchronize"}, false},
		{&d.eventCreate, []string{"cuEventCreate"}, false},
		{&d.eventDestroy, []string{"cuEventDestroy_v2", "cuEventDestroy"}, true},
		{&d.eventRecord, []string{"cuEventRecord"}, false},
		{&d.eventSynchronize, []string{"cuEventSynchronize"}, false},
		{&d.eventElapsedTime, []string{"cuEventElapsedTime", "cuEventElapsedTime_v2"}, false},
		{&d.launchKernel, []string{"cuLaunchKernel"}, false},
		{&d.launchHostFunc, []string{"cuLaunchHostFunc"}, true},
	}
}

// resolveDriver looks every symbol up, trying its names in order. The error
// lists all required symbols that none of their names resolved.
func resolveDriver(lib library) (*driver, error) {
	d := &driver{}
	var missing []string
	for _, s := range d.symbols() {
		for _, name := range s.names {
			if addr, err := lib.Sym(name); err == nil && addr != 0 {
				*s.slot = addr
				break
			}
		}
		if *s.slot == 0 && !s.optional {
			missing = append(missing, strings.Join(s.names, "|"))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no CUDA driver found: the driver library lacks %s", strings.Join(missing, ", "))
	}
	return d, nil
}
