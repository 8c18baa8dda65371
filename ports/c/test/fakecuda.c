/* A stand-in for libcuda.so.1 on machines without an NVIDIA GPU, so that
 * CI exercises the C port's CUDA runtime end to end: loading the driver
 * with dlopen, resolving its symbols, the primary context, the module, the
 * memory kinds, the parameter layout of every launch. "Device" memory is
 * host memory; a launch runs the named kernel on the CPU, reading its
 * parameters as the PTX declares them (buffers as u64, scalars as s32, then
 * u32 n). It proves the plumbing, not the GPU: the H200 run does that. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int current; /* a context was made current on some thread */

CUresult cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return i == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char *name, int len, int d) { (void)d; snprintf(name, (size_t)len, "fake CUDA device"); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) { (void)d; *v = attr == 75 ? 9 : 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { (void)d; *ctx = &current; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { current = ctx != NULL; return ctx == NULL; }
CUresult cuCtxSynchronize(void) { return current ? 0 : 201; }
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "fake CUDA error"; return 0; }

static const char *module_text;
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
    (void)n; (void)opts; (void)vals;
    module_text = image;
    *m = (void *)&module_text;
    return strstr(image, ".version") != NULL ? 0 : 218;
}
CUresult cuModuleUnload(void *m) { (void)m; return 0; }

typedef struct { char name[32]; } function;
static function functions[16];
static int nfunctions;
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    (void)m;
    char entry[64];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    if (module_text == NULL || strstr(module_text, entry) == NULL) return 500; /* CUDA_ERROR_NOT_FOUND */
    if (nfunctions == 16) return 2;
    function *fn = &functions[nfunctions++];
    snprintf(fn->name, sizeof fn->name, "%s", name);
    *f = fn;
    return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return *p ? 0 : 2; }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemAllocHost_v2(void **p, size_t n) { *p = calloc(1, n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (const void *)(uintptr_t)s, n); return 0; }

static int32_t *buf(void **params, int i) { return (int32_t *)(uintptr_t)*(uint64_t *)params[i]; }
static int32_t s32(void **params, int i) { return *(int32_t *)params[i]; }
static uint32_t u32(void **params, int i) { return *(uint32_t *)params[i]; }

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
    (void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream;
    if (!current || extra != NULL || bx == 0 || bx > 1024) return 1;
    const char *k = ((function *)f)->name;
    uint64_t threads = (uint64_t)gx * bx;
    if (strcmp(k, "increment") == 0) {
        int32_t *x = buf(params, 0);
        for (uint64_t i = 0; i < threads && i < u32(params, 1); i++) x[i] = (int32_t)((uint32_t)x[i] + 1u);
    } else if (strcmp(k, "accumulate") == 0) {
        int32_t *y = buf(params, 0), *x = buf(params, 1);
        for (uint64_t i = 0; i < threads && i < u32(params, 2); i++) y[i] = (int32_t)((uint32_t)y[i] + (uint32_t)x[i]);
    } else if (strcmp(k, "atomic_counter") == 0) {
        int32_t *c = buf(params, 0);
        for (uint64_t i = 0; i < threads && i < u32(params, 1); i++) c[0] = (int32_t)((uint32_t)c[0] + 1u);
    } else if (strcmp(k, "fill") == 0) {
        int32_t *x = buf(params, 0);
        for (uint64_t i = 0; i < threads && i < u32(params, 2); i++) x[i] = s32(params, 1);
    } else if (strcmp(k, "saxpy") == 0) {
        int32_t *y = buf(params, 0), *x = buf(params, 1);
        uint32_t a = (uint32_t)s32(params, 2);
        for (uint64_t i = 0; i < threads && i < u32(params, 3); i++) y[i] = (int32_t)(a * (uint32_t)x[i] + (uint32_t)y[i]);
    } else if (strcmp(k, "increment_pair") == 0) {
        int32_t *x = buf(params, 0), *y = buf(params, 1);
        for (uint64_t i = 0; i < threads && i < u32(params, 2); i++) {
            x[i] = (int32_t)((uint32_t)x[i] + 1u);
            y[i] = (int32_t)((uint32_t)y[i] + 1u);
        }
    } else {
        return 500;
    }
    return 0;
}
