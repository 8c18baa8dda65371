/* The CUDA backend: the NVIDIA driver API loaded with dlopen (no CUDA
 * headers or libraries at build time: the few prototypes are declared
 * here), the kernel library as the same PTX the Go CUDA target loads
 * (cuda_ptx.h, generated). One device is one agent of the "nvidia" family;
 * counters are the modeled NVIDIA blocks (docs/cuda.md). */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_ptx.h"
#include "model.h"
#include "rs_kit.h"
#include "rt.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

enum { CUDA_SUCCESS = 0, CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

typedef struct {
    CUresult (*init)(unsigned);
    CUresult (*device_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_name)(char *, int, CUdevice);
    CUresult (*device_attribute)(int *, int, CUdevice);
    CUresult (*ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_release)(CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_synchronize)(void);
    CUresult (*module_load)(CUmodule *, const void *, unsigned, int *, void **);
    CUresult (*module_function)(CUfunction *, CUmodule, const char *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*mem_alloc_host)(void **, size_t);
    CUresult (*mem_free_host)(void *);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **);
    CUresult (*error_string)(CUresult, const char **);
} cuda_api;

typedef struct mem {
    uint64_t handle;
    bool host; /* cuMemAllocHost: a host pointer the device can use */
    struct mem *next;
} mem;

enum { nkernels = 6 };
static const char *const kernel_names[nkernels] = {"increment", "accumulate", "atomic_counter", "fill", "saxpy",
                                                   "increment_pair"};

typedef struct {
    void *lib;
    cuda_api api;
    CUdevice dev;
    CUcontext ctx;
    CUmodule module;
    CUfunction fn[nkernels];
    rt_agent agent;
    char product[128], arch[32];
    const model_kind *kind;
    pthread_mutex_t mu;
    mem *mems;
    char err[256];
} cuda;

/* bind makes sure the primary context is current on the calling thread. */
static bool bind(cuda *c) { return c->api.ctx_set_current(c->ctx) == CUDA_SUCCESS; }

static const char *describe(cuda *c, CUresult r) {
    const char *s = NULL;
    if (c->api.error_string != NULL) c->api.error_string(r, &s);
    return s != NULL ? s : "unknown CUDA error";
}

static bool check(cuda *c, CUresult r, const char *what) {
    if (r == CUDA_SUCCESS) return true;
    snprintf(c->err, sizeof c->err, "%s: %s (CUresult %d)", what, describe(c, r), r);
    fprintf(stderr, "cuda runtime: %s\n", c->err);
    return false;
}

static void *sym(void *lib, const char *a, const char *b) {
    void *p = dlsym(lib, a);
    if (p == NULL && b != NULL) p = dlsym(lib, b);
    return p;
}

static void cuda_close(void *b) {
    cuda *c = b;
    if (c == NULL) return;
    if (c->lib != NULL && c->ctx != NULL) {
        bind(c);
        for (mem *m = c->mems, *next; m != NULL; m = next) {
            next = m->next;
            free(m);
        }
        if (c->module != NULL && c->api.module_unload != NULL) c->api.module_unload(c->module);
        if (c->api.ctx_release != NULL) c->api.ctx_release(c->dev);
    }
    /* libcuda stays loaded: drivers do not all survive being unloaded and
     * loaded again in one process (the probe before the handshake, then the
     * run). */
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void *rt_cuda_backend_new(size_t nagents, char *err, size_t errlen) {
    if (nagents != 1) {
        snprintf(err, errlen, "the CUDA runtime drives one device; the spec names %zu agents", nagents);
        return NULL;
    }
    cuda *c = calloc(1, sizeof *c);
    if (c == NULL) { snprintf(err, errlen, "out of memory"); return NULL; }
    pthread_mutex_init(&c->mu, NULL);
    c->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (c->lib == NULL) {
        snprintf(err, errlen, "cannot load the CUDA driver libcuda.so.1: %s", dlerror());
        cuda_close(c);
        return NULL;
    }
    cuda_api *a = &c->api;
    /* The _v2 names are the 64-bit ABIs cuda.h maps the plain names to. */
    *(void **)&a->init = sym(c->lib, "cuInit", NULL);
    *(void **)&a->device_count = sym(c->lib, "cuDeviceGetCount", NULL);
    *(void **)&a->device_get = sym(c->lib, "cuDeviceGet", NULL);
    *(void **)&a->device_name = sym(c->lib, "cuDeviceGetName", NULL);
    *(void **)&a->device_attribute = sym(c->lib, "cuDeviceGetAttribute", NULL);
    *(void **)&a->ctx_retain = sym(c->lib, "cuDevicePrimaryCtxRetain", NULL);
    *(void **)&a->ctx_release = sym(c->lib, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
    *(void **)&a->ctx_set_current = sym(c->lib, "cuCtxSetCurrent", NULL);
    *(void **)&a->ctx_synchronize = sym(c->lib, "cuCtxSynchronize", NULL);
    *(void **)&a->module_load = sym(c->lib, "cuModuleLoadDataEx", NULL);
    *(void **)&a->module_function = sym(c->lib, "cuModuleGetFunction", NULL);
    *(void **)&a->module_unload = sym(c->lib, "cuModuleUnload", NULL);
    *(void **)&a->mem_alloc = sym(c->lib, "cuMemAlloc_v2", "cuMemAlloc");
    *(void **)&a->mem_free = sym(c->lib, "cuMemFree_v2", "cuMemFree");
    *(void **)&a->mem_alloc_host = sym(c->lib, "cuMemAllocHost_v2", "cuMemAllocHost");
    *(void **)&a->mem_free_host = sym(c->lib, "cuMemFreeHost", NULL);
    *(void **)&a->memcpy_htod = sym(c->lib, "cuMemcpyHtoD_v2", "cuMemcpyHtoD");
    *(void **)&a->memcpy_dtoh = sym(c->lib, "cuMemcpyDtoH_v2", "cuMemcpyDtoH");
    *(void **)&a->launch = sym(c->lib, "cuLaunchKernel", NULL);
    *(void **)&a->error_string = sym(c->lib, "cuGetErrorString", NULL);
    if (a->init == NULL || a->device_count == NULL || a->device_get == NULL || a->device_name == NULL ||
        a->device_attribute == NULL || a->ctx_retain == NULL || a->ctx_set_current == NULL ||
        a->ctx_synchronize == NULL || a->module_load == NULL || a->module_function == NULL || a->mem_alloc == NULL ||
        a->mem_free == NULL || a->mem_alloc_host == NULL || a->mem_free_host == NULL || a->memcpy_htod == NULL ||
        a->memcpy_dtoh == NULL || a->launch == NULL) {
        snprintf(err, errlen, "the CUDA driver lacks an entry point this runtime needs");
        cuda_close(c);
        return NULL;
    }
    int count = 0, major = 0, minor = 0;
    if (!check(c, a->init(0), "cuInit") || !check(c, a->device_count(&count), "cuDeviceGetCount") || count < 1 ||
        !check(c, a->device_get(&c->dev, 0), "cuDeviceGet") ||
        !check(c, a->device_name(c->product, sizeof c->product, c->dev), "cuDeviceGetName") ||
        !check(c, a->device_attribute(&major, CU_ATTR_CC_MAJOR, c->dev), "cuDeviceGetAttribute") ||
        !check(c, a->device_attribute(&minor, CU_ATTR_CC_MINOR, c->dev), "cuDeviceGetAttribute") ||
        !check(c, a->ctx_retain(&c->ctx, c->dev), "cuDevicePrimaryCtxRetain") || !bind(c) ||
        !check(c, a->module_load(&c->module, cuda_ptx_module, 0, NULL, NULL), "cuModuleLoadDataEx")) {
        snprintf(err, errlen, "%s", count < 1 && c->err[0] == '\0' ? "no CUDA device" : c->err);
        cuda_close(c);
        return NULL;
    }
    for (int i = 0; i < nkernels; i++) {
        if (!check(c, a->module_function(&c->fn[i], c->module, kernel_names[i]), "cuModuleGetFunction")) {
            snprintf(err, errlen, "%s", c->err);
            cuda_close(c);
            return NULL;
        }
    }
    snprintf(c->arch, sizeof c->arch, "sm_%d%d", major, minor);
    c->kind = model_kind_named("nvidia");
    c->agent = (rt_agent){.id = 1, .product = c->product, .arch = c->arch, .family = c->kind->family,
                          .data_center = false, .blocks = c->kind->blocks, .nblocks = c->kind->nblocks};
    return c;
}

static size_t agent_count(void *b) { (void)b; return 1; }
static const rt_agent *agent(void *b, size_t i) { return i == 0 ? &((cuda *)b)->agent : NULL; }

static mem *find(cuda *c, uint64_t handle) {
    for (mem *m = c->mems; m != NULL; m = m->next) {
        if (m->handle == handle) return m;
    }
    return NULL;
}

/* Both device kinds are cuMemAlloc (the driver has no coarse/fine split);
 * host and kernarg memory is pinned host memory the device can address. */
static int alloc(void *b, uint64_t ag, rt_mem_kind kind, uint64_t size, uint64_t *handle) {
    cuda *c = b;
    (void)ag;
    mem *m = calloc(1, sizeof *m);
    if (m == NULL || !bind(c)) { free(m); return RT_ERR; }
    m->host = kind == RT_MEM_HOST || kind == RT_MEM_KERNARG;
    if (m->host) {
        void *p = NULL;
        if (!check(c, c->api.mem_alloc_host(&p, size), "cuMemAllocHost")) { free(m); return RT_ERR; }
        memset(p, 0, size);
        m->handle = (uint64_t)(uintptr_t)p;
    } else {
        CUdeviceptr p = 0;
        if (!check(c, c->api.mem_alloc(&p, size), "cuMemAlloc")) { free(m); return RT_ERR; }
        m->handle = p;
    }
    pthread_mutex_lock(&c->mu);
    m->next = c->mems;
    c->mems = m;
    pthread_mutex_unlock(&c->mu);
    *handle = m->handle;
    return RT_OK;
}

static int release(void *b, uint64_t handle) {
    cuda *c = b;
    pthread_mutex_lock(&c->mu);
    mem **pp = &c->mems;
    while (*pp != NULL && (*pp)->handle != handle) pp = &(*pp)->next;
    mem *m = *pp;
    if (m != NULL) *pp = m->next;
    pthread_mutex_unlock(&c->mu);
    if (m == NULL || !bind(c)) { free(m); return RT_ERR; }
    bool ok = m->host ? check(c, c->api.mem_free_host((void *)(uintptr_t)m->handle), "cuMemFreeHost")
                      : check(c, c->api.mem_free(m->handle), "cuMemFree");
    free(m);
    return ok ? RT_OK : RT_ERR;
}

static bool is_host(cuda *c, uint64_t handle) {
    pthread_mutex_lock(&c->mu);
    mem *m = find(c, handle);
    bool host = m != NULL && m->host;
    pthread_mutex_unlock(&c->mu);
    return host;
}

static int cread(void *b, uint64_t handle, uint64_t offset, void *dst, uint64_t n) {
    cuda *c = b;
    if (is_host(c, handle)) { memcpy(dst, (const char *)(uintptr_t)handle + offset, n); return RT_OK; }
    return bind(c) && check(c, c->api.memcpy_dtoh(dst, handle + offset, n), "cuMemcpyDtoH") ? RT_OK : RT_ERR;
}

static int cwrite(void *b, uint64_t handle, uint64_t offset, const void *src, uint64_t n) {
    cuda *c = b;
    if (is_host(c, handle)) { memcpy((char *)(uintptr_t)handle + offset, src, n); return RT_OK; }
    return bind(c) && check(c, c->api.memcpy_htod(handle + offset, src, n), "cuMemcpyHtoD") ? RT_OK : RT_ERR;
}

static int run(void *b, uint64_t ag, const rt_packet *p, uint64_t *start, uint64_t *end) {
    cuda *c = b;
    (void)ag;
    model_buffers mb;
    if (!model_bind(p, &mb, c->err, sizeof c->err)) {
        fprintf(stderr, "cuda runtime: %s\n", c->err);
        return RT_ERR;
    }
    int k = -1;
    for (int i = 0; i < nkernels; i++) {
        if (strcmp(kernel_names[i], p->kernel) == 0) k = i;
    }
    if (k < 0 || mb.grid > 0xFFFFFFFFull) return RT_ERR;
    /* Every parameter in an 8-byte slot (a 32-bit one reads the low half),
     * buffers and scalars in argument order, then n: the work items allowed
     * to touch memory (all of them for atomic_counter). */
    uint64_t values[RT_MAX_ARGS + 1];
    void *params[RT_MAX_ARGS + 1];
    int nv = 0;
    for (int i = 0; i < p->nargs; i++) {
        values[nv++] = p->args[i].buffer != NULL ? p->args[i].buffer->handle : (uint64_t)(uint32_t)p->args[i].scalar;
    }
    values[nv++] = strcmp(p->kernel, "atomic_counter") == 0 ? mb.grid : mb.items;
    for (int i = 0; i < nv; i++) params[i] = &values[i];
    uint64_t wg = (uint64_t)(p->workgroup[0] ? p->workgroup[0] : 1) * (p->workgroup[1] ? p->workgroup[1] : 1) *
                  (p->workgroup[2] ? p->workgroup[2] : 1);
    if (p->workgroup[0] == 0 || wg > 1024) wg = 256;
    uint64_t blocks = (mb.grid + wg - 1) / wg;
    if (blocks == 0) blocks = 1;
    if (!bind(c)) return RT_ERR;
    *start = rs_now_ns();
    if (!check(c, c->api.launch(c->fn[k], (unsigned)blocks, 1, 1, (unsigned)wg, 1, 1, 0, NULL, params, NULL), "cuLaunchKernel") ||
        !check(c, c->api.ctx_synchronize(), "cuCtxSynchronize")) {
        return RT_ERR;
    }
    *end = rs_now_ns();
    if (*end <= *start) *end = *start + 1;
    return RT_OK;
}

static bool counter(void *b, uint64_t ag, const rt_packet *p, const char *name, uint64_t *value) {
    cuda *c = b;
    return ag == 1 && model_counter(c->kind, p, name, value);
}

static char *error(void *b) { return ((cuda *)b)->err; }

const rt_backend rt_cuda_backend = {
    .name = "cuda", .agent_count = agent_count, .agent = agent, .alloc = alloc, .free = release,
    .read = cread, .write = cwrite, .run = run, .counter = counter, .close = cuda_close, .error = error,
};
