/* The SDK's insides, shared by its files. One SDK per process.
 *
 * The files call one way only, from the queue's side down; none calls a
 * file above it (the runtime calls krs_intercept, and a tool's callback may
 * write a dispatch that comes back through the runtime, never by a call):
 *
 *   intercept.c   the queue write interceptor: picks the path for a write
 *     loop.c      the replay window of one candidate dispatch
 *     submit.c    dispatch ids, correlation, a submission run once
 *     services.c  which services take part in a submit; their records
 *     local.c tracker.c warn.c context.c
 *                 the per-thread override, memory, diagnostics, contexts:
 *                 state the files above read and change
 *
 * (context.c names krs_intercept only to install it on each new queue.) */
#ifndef KRS_INTERNAL_H
#define KRS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "krs.h"

/* Planted faults (docs/ports.md): each KRS_FAULT_* switch breaks one rule on
 * purpose, so that the suite can be shown to catch it through the protocol.
 * None is defined in the normal build. */
#include "faults.h"

enum { max_contexts = 16 };

typedef struct {
    krs_record_cb_t record;
    void *args;
} record_sink;

/* A context and the services configured on it. */
typedef struct {
    uint64_t id;
    bool started;
    bool replay;                    /* KERNEL_REPLAY configured here (ACT-5: one context at most) */
    bool replay_config, replay_pass; /* the operations it covers */
    krs_callback_tracing_cb_t replay_cb;
    void *replay_args;
    bool counters;
    krs_counter_select_cb_t select;
    record_sink counter_sink;
    bool kernel_trace;
    record_sink trace_sink;
    bool device_counting;
    uint64_t device_agent;
    char **device_counters;
    size_t ndevice_counters;
    record_sink device_sink;
    bool pc_sampling;
    uint64_t pc_agent;
    record_sink pc_sink;
    bool spm;
    record_sink spm_sink;
    bool thread_trace;
    record_sink att_sink;
    bool external;
    krs_external_correlation_cb_t external_cb;
    void *external_args;
} context;

/* active is a copy of the started contexts, taken once per submit so that a
 * global start or stop on another thread cannot tear a dispatch. */
typedef struct {
    context ctx[max_contexts];
    size_t n;
} active;

typedef struct tracked {
    rt_alloc a;
    uint64_t generation; /* tells a reallocation at the same address apart */
    struct tracked *next;
} tracked;

typedef struct {
    rt_runtime *rt;
    pthread_mutex_t mu;
    context *contexts[max_contexts];
    size_t ncontexts;
    uint64_t replay_context; /* 0: KERNEL_REPLAY not configured */
    /* ACT-4: the allocation tracker, on once KERNEL_REPLAY is configured */
    bool tracking;
    tracked *allocations;
    uint64_t generation;
    atomic_uint_fast64_t dispatch_ids, correlation_ids;
    char **kernel_names;
    size_t nkernels;
    pthread_rwlock_t *agent_locks; /* MEM-6, per agent (index id-1) */
    atomic_int_fast64_t loops;     /* loops holding an agent's lock now */
    size_t nagents;
    atomic_bool warned[8];
    uint64_t pass_budget;
    krs_report_cb_t report;
    void *report_args;
    krs_fatal_cb_t fatal;
    void *fatal_args;
} sdk_state;

extern sdk_state krs_sdk;

/* The per-thread, per-loop override map of LCX-3..7. */
typedef struct {
    bool in_loop;
    bool in_pass_enter;            /* LCX-2: the one window where toggles are legal */
    const active *before;          /* contexts active when the loop began (LCX-4, LCX-7); lives as long as the loop */
    int8_t override[max_contexts]; /* by context id-1: 0 as before the loop, 1 on, -1 off */
} loop_state;

/* The replay windows open on a thread, innermost last (MEM-6, clarified
 * 2026-12-01): a dispatch the tool writes inside one is a candidate like
 * any other, declined on an agent whose window is open on the thread, and
 * opening a window of its own on another, so they nest as deep as there
 * are agents. A submission that runs once inside a window gets an empty
 * one (agent 0, no loop), so that no loop's override reaches it (LCX-6). */
enum { max_windows = 32 };
typedef struct {
    uint64_t dispatch, agent;
    bool holds; /* its loop holds the agent's lock (MEM-6) */
    loop_state loop;
} window;

window *krs_window_open(uint64_t dispatch, uint64_t agent); /* NULL: nested too deep */
void krs_window_close(void);
bool krs_in_window(void);
bool krs_window_on(uint64_t agent);  /* a window of this thread is open on agent */
bool krs_owns_agent(uint64_t agent); /* a window of this thread holds agent's lock */
loop_state *krs_loop(void);          /* the innermost window's loop; NULL when it has none */

/* context.c */
context *krs_context_find(uint64_t id); /* under krs_sdk.mu */
uint64_t krs_thread_id(void);
krs_correlation_id_t krs_capture_correlation(void);
void krs_active_copy(active *out);
const context *krs_replay_context(const active *a); /* started, covering CONFIG (ACT-1) */
uint64_t krs_kernel_id(const char *name);

/* intercept.c */
int krs_intercept(void *arg, rt_queue *q, rt_packet *packets, size_t n);

/* loop.c */
int krs_replay_dispatch(const active *a, const context *replay, rt_queue *q, const rt_packet *p);

/* submit.c */
krs_kernel_dispatch_info_t krs_reserve_dispatch(rt_queue *q, const rt_packet *p);
uint64_t krs_external_correlation(const active *a, krs_kernel_dispatch_info_t info, uint64_t internal);
pthread_rwlock_t *krs_agent_lock(uint64_t agent); /* MEM-6; NULL for an unknown agent */
int krs_run_once(const active *a, rt_queue *q, const rt_packet *p, krs_kernel_dispatch_info_t info,
                 krs_correlation_id_t corr);
int krs_run_unreplayed(const active *a, rt_queue *q, rt_packet *packets, size_t n); /* ACT-6 */

/* local.c */
krs_status_t krs_local_start(krs_context_id_t ctx);
krs_status_t krs_local_stop(krs_context_id_t ctx);
/* participates: does ctx's service take part in this thread's submit? */
bool krs_participates(krs_service_t svc, uint64_t ctx);
void krs_loop_begin(window *w, const active *before);
void krs_loop_end(window *w);

/* services.c */
typedef struct {
    krs_service_t svc;
    const context *ctx;
    const char *counters[RT_MAX_COUNTERS];
    size_t ncounters;
} service_use;

typedef struct {
    service_use use[max_contexts * 6];
    size_t n;
    rt_profile profile;
    bool profiled;
} submission;

void krs_prepare(const active *a, krs_kernel_dispatch_info_t info, submission *sub);
void krs_deliver(const submission *sub, krs_kernel_dispatch_info_t info, const char *kernel,
                 krs_correlation_id_t corr);

/* tracker.c */
typedef struct snapshot snapshot;
/* krs_track keeps the tracker's list and runs then (the caller's record of
 * the change) under the tracker's lock: a snapshot or restore sees an
 * allocation or a free only after its record (MEM-4). */
void krs_track(void *arg, const rt_alloc *a, bool freed, rt_alloc_fn then, void *then_arg);
/* krs_snapshot saves the tracked device memory of the agent (MEM-4); NULL
 * with a message when it cannot be completed (MEM-5). */
snapshot *krs_snapshot(uint64_t agent, krs_kernel_dispatch_info_t info, const char *kernel, char *err, size_t errlen);
/* krs_restore writes it back; a failure part-way is fatal (MEM-5). */
void krs_restore(snapshot *s, krs_kernel_dispatch_info_t info, const char *kernel, uint64_t pass);
void krs_snapshot_free(snapshot *s);

/* warn.c */
typedef enum {
    warn_pass_count_zero = 1, warn_multi_packet, warn_graph_launch, warn_snapshot_incomplete, warn_service_conflict,
    warn_reentrant_dispatch
} warning;
void krs_warn(warning w, uint64_t dispatch, const char *fmt, ...);
void krs_report(const krs_report_t *r);

#endif
