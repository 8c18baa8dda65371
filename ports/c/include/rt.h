/*
 * rt.h: the GPU runtime under the C SDK, an HSA-like model: agents, memory,
 * user-mode queues of AQL-like packets, signals. Two backends implement it:
 * the host backend (kernels run on the CPU over host memory) and the CUDA
 * backend (the driver API through dlopen, kernels as PTX).
 *
 * The runtime has an interception table, as HSA has for tools: the SDK
 * installs hooks on API entry and exit (correlation ids), on allocation
 * (the replay allocation tracker) and on queue creation (its write
 * interceptor). An observer sees what an interposer on the runtime sees
 * (kernels run, signals, copies); the driver turns that into runtime events.
 */
#ifndef RT_H
#define RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rt_runtime rt_runtime;
typedef struct rt_queue rt_queue;
typedef struct rt_signal rt_signal;

enum { RT_OK = 0, RT_ERR = -1, RT_ERR_NEVER_ENDED = -2 };

typedef struct {
    const char *name;
    int registers; /* counters of this block collectable in one pass */
    const char *const *counters;
    size_t ncounters;
} rt_counter_block;

typedef struct {
    uint64_t id; /* 1, 2, ... */
    const char *product, *arch;
    const char *family;  /* MI200, MI300, consumer, nvidia */
    bool data_center;    /* an MI2xx/MI3xx part (SVC-3) */
    const rt_counter_block *blocks;
    size_t nblocks;
} rt_agent;

typedef enum { RT_MEM_DEVICE = 1, RT_MEM_FINE, RT_MEM_HOST, RT_MEM_KERNARG } rt_mem_kind;

typedef struct {
    uint64_t handle; /* the address the agent sees; unique, non-zero */
    uint64_t agent;
    rt_mem_kind kind;
    uint64_t size;
} rt_alloc;

typedef struct {
    const rt_alloc *buffer; /* NULL: a scalar */
    int32_t scalar;
} rt_arg;

enum { RT_MAX_ARGS = 4, RT_MAX_COUNTERS = 32 };

/* rt_profile stands in for the instrumentation packets a real SDK injects:
 * the counters to collect, and what the runtime measured. The dispatch's
 * counters share its counter registers, so they must fit one pass on the
 * agent; device counters are counted by the agent's own counting session,
 * outside those registers (decision 17.7). The runtime refuses a packet
 * whose dispatch counters need more than one pass, or that asks for a
 * counter its agent lacks, before anything runs. */
typedef struct {
    const char *counters[RT_MAX_COUNTERS];
    size_t ncounters;
    const char *device[RT_MAX_COUNTERS];
    size_t ndevice;
    uint64_t start, end;
    uint64_t values[RT_MAX_COUNTERS];
    uint64_t device_values[RT_MAX_COUNTERS];
} rt_profile;

/* rt_agent_has_counter says whether one of the agent's blocks has it. */
bool rt_agent_has_counter(const rt_agent *a, const char *counter);
/* rt_counter_passes is how many passes the agent needs to collect the
 * counters (repeats counted once): a pass holds at most a block's
 * registers of that block's counters. -1: a counter the agent lacks, or a
 * block without registers. */
int rt_counter_passes(const rt_agent *a, const char *const *counters, size_t n);

enum { RT_PACKET_KERNEL = 1, RT_PACKET_BARRIER };

typedef struct {
    int type;
    const char *kernel;
    uint32_t grid[3], workgroup[3];
    rt_arg args[RT_MAX_ARGS];
    int nargs;
    rt_signal *completion; /* decremented when the packet completes */
    bool from_graph;       /* written by a graph launch (ACT-6) */
    uint64_t tag;          /* echoed by the runtime's kernel report: the dispatch id */
    rt_profile *profile;   /* NULL: not profiled */
} rt_packet;

/* ---------------------------------------------------------------- backends */

typedef struct {
    const char *name; /* "host", "cuda" */
    size_t (*agent_count)(void *b);
    const rt_agent *(*agent)(void *b, size_t i);
    int (*alloc)(void *b, uint64_t agent, rt_mem_kind kind, uint64_t size, uint64_t *handle);
    int (*free)(void *b, uint64_t handle);
    /* copies between host memory and an allocation */
    int (*read)(void *b, uint64_t handle, uint64_t offset, void *dst, uint64_t n);
    int (*write)(void *b, uint64_t handle, uint64_t offset, const void *src, uint64_t n);
    /* run one kernel to completion; start and end on rs_now_ns's clock */
    int (*run)(void *b, uint64_t agent, const rt_packet *p, uint64_t *start, uint64_t *end);
    /* a modeled counter's value for one run */
    bool (*counter)(void *b, uint64_t agent, const rt_packet *p, const char *name, uint64_t *value);
    void (*close)(void *b);
    char *(*error)(void *b); /* the last error, for messages */
} rt_backend;

/* ---------------------------------------------------------------- hooks */

/* The runtime's API calls the SDK is told of: correlation ids nest by
 * them (a launch, and the queue write inside it). */
typedef enum { RT_API_LAUNCH = 1, RT_API_GRAPH_LAUNCH, RT_API_QUEUE_WRITE } rt_api_call;

/* rt_alloc_fn is the caller's record of an allocation or a free, run
 * where it takes effect (rt_alloc_memory, rt_free_memory). */
typedef void (*rt_alloc_fn)(void *arg, const rt_alloc *a);

/* rt_hooks is the interception table the SDK fills. on_alloc hears of an
 * allocation or a free and runs then(then_arg, a) exactly once, under the
 * lock that orders it with what reads its list (the SDK's tracker: a
 * snapshot, a restore), so that no one sees the change before its record. */
typedef struct {
    void *arg;
    void (*api_enter)(void *arg, rt_api_call call);
    void (*api_exit)(void *arg, rt_api_call call);
    void (*on_alloc)(void *arg, const rt_alloc *a, bool freed, rt_alloc_fn then, void *then_arg);
    void (*on_queue)(void *arg, rt_queue *q);
} rt_hooks;

/* An interceptor sees every packet batch written to a queue, on the
 * writing thread, and passes packets on with rt_queue_hw_write. */
typedef int (*rt_interceptor)(void *arg, rt_queue *q, rt_packet *packets, size_t n);

typedef struct {
    uint64_t agent, queue, tag, signal;
    const char *kernel;
    uint64_t start, end;
    const char *mem_in, *mem_out; /* digests of the saved (device) buffers; NULL when not asked */
    const rt_profile *profile;    /* what the runtime counted for this run; NULL when not asked */
} rt_kernel_report;

typedef struct {
    uint64_t addr, bytes;
} rt_region;

/* rt_observer is what an interposer on the runtime sees. */
typedef struct {
    void *arg;
    bool want_digests;
    void (*kernel)(void *arg, const rt_kernel_report *k);
    void (*signal)(void *arg, uint64_t signal, int64_t value);
    void (*copy)(void *arg, bool write, uint64_t agent, const rt_region *r, size_t n, uint64_t bytes);
} rt_observer;

/* ---------------------------------------------------------------- the runtime */

rt_runtime *rt_open(const rt_backend *b, void *backend);
void rt_close(rt_runtime *rt);
const char *rt_backend_name(const rt_runtime *rt);
size_t rt_agent_count(const rt_runtime *rt);
const rt_agent *rt_agent_at(const rt_runtime *rt, size_t i);
const rt_agent *rt_agent_by_id(const rt_runtime *rt, uint64_t id);

void rt_set_hooks(rt_runtime *rt, const rt_hooks *h); /* NULL removes them */
void rt_set_observer(rt_runtime *rt, const rt_observer *o);

/* Memory. Copies in and out of device and fine-grained memory are seen by
 * the observer; host memory is the host's own. A freed block's address goes
 * to the next allocation of the same agent, kind and page count (4096
 * bytes), the last freed first, as the simulator's allocator does; the
 * on_alloc hook hears of a free before the block goes. then (may be NULL)
 * records the allocation or the free where it takes effect: inside the
 * hook, else right there; a free's record comes before its block can be
 * handed on, an allocation's before anyone can list it (MEM-4: a trace
 * whose app_alloc followed a snapshot of the buffer, or whose app_free
 * followed the next allocation at its address, was found under free
 * threads, gen-202997 and gen-213313). */
int rt_alloc_memory(rt_runtime *rt, uint64_t agent, rt_mem_kind kind, uint64_t size, rt_alloc *out, rt_alloc_fn then,
                    void *arg);
int rt_free_memory(rt_runtime *rt, const rt_alloc *a, rt_alloc_fn then, void *arg);
int rt_write_memory(rt_runtime *rt, const rt_alloc *a, const void *src, uint64_t n);
int rt_read_memory(rt_runtime *rt, const rt_alloc *a, void *dst, uint64_t n);
/* Several regions of one agent at once, seen as one copy (a snapshot, a
 * restore). then, when not NULL, runs once the copy succeeded, still under
 * the runtime's memory lock and after the observer saw the copy: what the
 * caller reports there is ordered with every kernel as the memory saw them
 * (a snapshot reported after the lock is let go could follow another
 * thread's kernel that ran after the copy; docs/decisions.md 18.8). */
typedef void (*rt_copied_fn)(void *arg);
int rt_read_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, void *const *dst,
                    rt_copied_fn then, void *arg);
int rt_write_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, const void *const *src);

/* Restores: a copy of several saved regions back into device memory. The
 * n-th restore of the machine (1-based, counting every dispatch) can be
 * made to fail part-way, after its first region (MEM-5); 0: never. A
 * restore of no region copies nothing and cannot fail: the failure is
 * spent on it (decision 17.2). */
void rt_set_restore_failure(rt_runtime *rt, uint64_t nth);
int rt_restore_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, const void *const *src,
                       rt_copied_fn then, void *arg);

/* Staging memory for snapshots: a snapshot of more than the agent's
 * limit cannot be taken (MEM-5). 0: no limit. */
void rt_set_staging_limit(rt_runtime *rt, uint64_t agent, uint64_t bytes);
int rt_staging_reserve(rt_runtime *rt, uint64_t agent, uint64_t bytes, char *err, size_t errlen);
void rt_staging_release(rt_runtime *rt, uint64_t agent, uint64_t bytes);

/* Queues. */
int rt_queue_create(rt_runtime *rt, uint64_t agent, rt_queue **out);
uint64_t rt_queue_id(const rt_queue *q);
uint64_t rt_queue_agent(const rt_queue *q);
rt_runtime *rt_queue_runtime(const rt_queue *q);
void rt_queue_set_interceptor(rt_queue *q, rt_interceptor fn, void *arg);
/* rt_queue_write writes packets as the application does: through the
 * interceptor when one is installed. It returns once every kernel written
 * has completed (completion signals may follow). */
int rt_queue_write(rt_queue *q, rt_packet *packets, size_t n);
/* rt_queue_hw_write puts packets on the hardware, past any interceptor. */
int rt_queue_hw_write(rt_queue *q, rt_packet *packets, size_t n);
/* rt_drain_agent waits until nothing runs on the agent. */
int rt_drain_agent(rt_runtime *rt, uint64_t agent);
/* rt_launch is the launch API an application calls: one API call around
 * the queue write (correlation ids nest: the launch, then the write). */
int rt_launch(rt_runtime *rt, rt_queue *q, rt_packet *packets, size_t n);
/* rt_launch_inside is rt_launch that runs inside(arg) on the calling
 * thread inside the launch call, before the queue write: where the
 * application yields to its other threads (docs/decisions.md 20.3.3). */
int rt_launch_inside(rt_runtime *rt, rt_queue *q, rt_packet *packets, size_t n, void (*inside)(void *arg), void *arg);

/* Signals. */
rt_signal *rt_signal_create(rt_runtime *rt, int64_t value);
void rt_signal_destroy(rt_signal *s);
uint64_t rt_signal_id(const rt_signal *s);
void rt_signal_decrement(rt_signal *s);
int64_t rt_signal_value(rt_signal *s);
/* rt_signal_wait_below waits until the value is below v; false on timeout. */
bool rt_signal_wait_below(rt_signal *s, int64_t v, uint64_t timeout_ns);

/* The backends. */
void *rt_host_backend_new(const char *const *agent_kinds, size_t nagents);
extern const rt_backend rt_host_backend;
void *rt_cuda_backend_new(size_t nagents, char *err, size_t errlen);
extern const rt_backend rt_cuda_backend;

#ifdef __cplusplus
}
#endif
#endif
