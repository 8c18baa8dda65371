/* Contexts and their services, the operation queries, and attaching the
 * SDK to a runtime. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Static_assert(sizeof(krs_kernel_dispatch_info_t) == 72, "dispatch info is 72 bytes, as the reference's");
_Static_assert(sizeof(krs_callback_tracing_kernel_replay_data_t) == 128, "API-5: the payload is 128 bytes");

sdk_state krs_sdk;

uint64_t krs_thread_id(void) { return (uint64_t)(uintptr_t)pthread_self(); }

static void api_enter(void *arg, rt_api_call call);
static void api_exit(void *arg, rt_api_call call);
static void on_queue(void *arg, rt_queue *q);

krs_status_t krs_init(rt_runtime *rt) {
    if (krs_sdk.rt != NULL) return KRS_STATUS_ERROR_CONFIGURATION_LOCKED;
    memset(&krs_sdk, 0, sizeof krs_sdk);
    krs_sdk.rt = rt;
    pthread_mutex_init(&krs_sdk.mu, NULL);
    krs_sdk.nagents = rt_agent_count(rt);
    krs_sdk.agent_locks = calloc(krs_sdk.nagents + 1, sizeof *krs_sdk.agent_locks);
    if (krs_sdk.agent_locks == NULL) return KRS_STATUS_ERROR;
    for (size_t i = 0; i < krs_sdk.nagents; i++) pthread_rwlock_init(&krs_sdk.agent_locks[i], NULL);
    rt_hooks h = {.arg = NULL, .api_enter = api_enter, .api_exit = api_exit, .on_alloc = krs_track, .on_queue = on_queue};
    rt_set_hooks(rt, &h);
    return KRS_STATUS_SUCCESS;
}

void krs_fini(void) {
    if (krs_sdk.rt == NULL) return;
    rt_set_hooks(krs_sdk.rt, NULL);
    for (size_t i = 0; i < krs_sdk.ncontexts; i++) {
        context *c = krs_sdk.contexts[i];
        for (size_t k = 0; k < c->ndevice_counters; k++) free(c->device_counters[k]);
        free(c->device_counters);
        free(c);
    }
    for (tracked *t = krs_sdk.allocations, *next; t != NULL; t = next) {
        next = t->next;
        free(t);
    }
    for (size_t i = 0; i < krs_sdk.nkernels; i++) free(krs_sdk.kernel_names[i]);
    free(krs_sdk.kernel_names);
    for (size_t i = 0; i < krs_sdk.nagents; i++) pthread_rwlock_destroy(&krs_sdk.agent_locks[i]);
    free(krs_sdk.agent_locks);
    pthread_mutex_destroy(&krs_sdk.mu);
    memset(&krs_sdk, 0, sizeof krs_sdk);
}

/* ---------------------------------------------------------------- correlation: the API stack per thread */

enum { max_api_depth = 16 };
typedef struct {
    uint64_t id, ancestor;
} api_frame;
static _Thread_local api_frame api_stack[max_api_depth];
static _Thread_local size_t api_depth;

/* The tool's API tracing, set before the application's threads start. */
static pthread_mutex_t api_tracing_mu = PTHREAD_MUTEX_INITIALIZER;
static krs_api_tracing_cb_t api_tracing;
static void *api_tracing_args;

krs_status_t krs_configure_api_tracing(krs_api_tracing_cb_t callback, void *args) {
    pthread_mutex_lock(&api_tracing_mu);
    api_tracing = callback;
    api_tracing_args = args;
    pthread_mutex_unlock(&api_tracing_mu);
    return KRS_STATUS_SUCCESS;
}

static void trace_api(rt_api_call call, krs_callback_phase_t phase, api_frame f) {
    pthread_mutex_lock(&api_tracing_mu);
    krs_api_tracing_cb_t fn = api_tracing;
    void *args = api_tracing_args;
    pthread_mutex_unlock(&api_tracing_mu);
    if (fn != NULL) fn(call, phase, (krs_correlation_id_t){.internal = f.id, .ancestor = f.ancestor}, args);
}

/* COR-1: every API call gets an id of its own; its ancestor is the
 * innermost call open on the same thread (0: none). */
static void api_enter(void *arg, rt_api_call call) {
    (void)arg;
    api_frame f = {.id = atomic_fetch_add(&krs_sdk.correlation_ids, 1) + 1};
    size_t d = api_depth < max_api_depth ? api_depth : max_api_depth;
    if (d > 0) f.ancestor = api_stack[d - 1].id;
    if (api_depth < max_api_depth) api_stack[api_depth] = f;
    api_depth++;
    trace_api(call, KRS_CALLBACK_PHASE_ENTER, f);
}

static void api_exit(void *arg, rt_api_call call) {
    (void)arg;
    if (api_depth == 0) return;
    api_depth--;
    api_frame f = api_depth < max_api_depth ? api_stack[api_depth] : (api_frame){0};
    trace_api(call, KRS_CALLBACK_PHASE_EXIT, f);
}

/* COR-1: a dispatch's internal id is the innermost API call open on its
 * thread, its ancestor that call's own ancestor (docs/decisions.md 20.3.1). */
krs_correlation_id_t krs_capture_correlation(void) {
    krs_correlation_id_t c = {0};
    size_t d = api_depth < max_api_depth ? api_depth : max_api_depth;
    if (d == 0) {
        c.internal = atomic_fetch_add(&krs_sdk.correlation_ids, 1) + 1;
        return c;
    }
    c.internal = api_stack[d - 1].id;
    c.ancestor = api_stack[d - 1].ancestor;
    return c;
}

static void on_queue(void *arg, rt_queue *q) {
    (void)arg;
    rt_queue_set_interceptor(q, krs_intercept, NULL);
}

/* ---------------------------------------------------------------- contexts */

context *krs_context_find(uint64_t id) {
    if (id == 0 || id > krs_sdk.ncontexts) return NULL;
    return krs_sdk.contexts[id - 1];
}

krs_status_t krs_create_context(krs_context_id_t *out) {
    if (krs_sdk.rt == NULL || out == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    context *c = calloc(1, sizeof *c);
    if (c == NULL) return KRS_STATUS_ERROR;
    pthread_mutex_lock(&krs_sdk.mu);
    if (krs_sdk.ncontexts == max_contexts) {
        pthread_mutex_unlock(&krs_sdk.mu);
        free(c);
        return KRS_STATUS_ERROR;
    }
    krs_sdk.contexts[krs_sdk.ncontexts++] = c;
    c->id = krs_sdk.ncontexts;
    pthread_mutex_unlock(&krs_sdk.mu);
    out->handle = c->id;
    return KRS_STATUS_SUCCESS;
}

/* with runs f on a context under the lock; a context that is started takes
 * no new service. */
#define WITH_CONTEXT(id, c, ...)                                           \
    do {                                                                   \
        pthread_mutex_lock(&krs_sdk.mu);                                   \
        context *c = krs_context_find(id);                                 \
        krs_status_t st_ = KRS_STATUS_SUCCESS;                             \
        if (c == NULL) st_ = KRS_STATUS_ERROR_CONTEXT_NOT_FOUND;           \
        else if (c->started) st_ = KRS_STATUS_ERROR_CONFIGURATION_LOCKED;  \
        else { __VA_ARGS__ }                                               \
        pthread_mutex_unlock(&krs_sdk.mu);                                 \
        return st_;                                                        \
    } while (0)

krs_status_t krs_configure_callback_tracing_service(krs_context_id_t id, krs_callback_tracing_kind_t kind,
                                                    const krs_kernel_replay_operation_t *ops, size_t nops,
                                                    krs_callback_tracing_cb_t cb, void *args) {
    if (kind != KRS_CALLBACK_TRACING_KERNEL_REPLAY) return KRS_STATUS_ERROR_KIND_NOT_FOUND;
    if (cb == NULL || (ops == NULL && nops != 0)) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < nops; i++) {
        if (ops[i] != KRS_KERNEL_REPLAY_CONFIG && ops[i] != KRS_KERNEL_REPLAY_PASS) return KRS_STATUS_ERROR_OPERATION_NOT_FOUND;
    }
    WITH_CONTEXT(id.handle, c, {
        if (krs_sdk.replay_context != 0) {
            st_ = KRS_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED; /* ACT-5 */
        } else {
            c->replay = true;
            c->replay_cb = cb;
            c->replay_args = args;
            c->replay_config = nops == 0; /* ACT-2: no list means every operation */
            c->replay_pass = nops == 0;
            for (size_t i = 0; i < nops; i++) {
                if (ops[i] == KRS_KERNEL_REPLAY_CONFIG) c->replay_config = true;
                if (ops[i] == KRS_KERNEL_REPLAY_PASS) c->replay_pass = true;
            }
            krs_sdk.replay_context = c->id;
            krs_sdk.tracking = true; /* ACT-4: the tracker is switched on here, and only here */
        }
    });
}

krs_status_t krs_configure_counter_collection(krs_context_id_t id, krs_counter_select_cb_t select,
                                              krs_record_cb_t record, void *args) {
    if (select == NULL || record == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    WITH_CONTEXT(id.handle, c, {
        c->counters = true;
        c->select = select;
        c->counter_sink = (record_sink){record, args};
    });
}

krs_status_t krs_configure_kernel_trace(krs_context_id_t id, krs_record_cb_t record, void *args) {
    if (record == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    WITH_CONTEXT(id.handle, c, {
        c->kernel_trace = true;
        c->trace_sink = (record_sink){record, args};
    });
}

krs_status_t krs_configure_device_counting(krs_context_id_t id, uint64_t agent, const char *const *counters, size_t n,
                                           krs_record_cb_t record, void *args) {
    if (record == NULL || n > RT_MAX_COUNTERS || (n > 0 && counters == NULL)) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    if (agent != 0 && rt_agent_by_id(krs_sdk.rt, agent) == NULL) return KRS_STATUS_ERROR_AGENT_NOT_FOUND;
    WITH_CONTEXT(id.handle, c, {
        c->device_counters = calloc(n + 1, sizeof *c->device_counters);
        if (c->device_counters == NULL) {
            st_ = KRS_STATUS_ERROR;
        } else {
            for (size_t i = 0; i < n; i++) c->device_counters[i] = strdup(counters[i]);
            c->ndevice_counters = n;
            c->device_counting = true;
            c->device_agent = agent;
            c->device_sink = (record_sink){record, args};
        }
    });
}

krs_status_t krs_configure_pc_sampling(krs_context_id_t id, uint64_t agent, krs_record_cb_t record, void *args) {
    if (record == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    if (agent != 0 && rt_agent_by_id(krs_sdk.rt, agent) == NULL) return KRS_STATUS_ERROR_AGENT_NOT_FOUND;
    WITH_CONTEXT(id.handle, c, {
        c->pc_sampling = true;
        c->pc_agent = agent;
        c->pc_sink = (record_sink){record, args};
    });
}

krs_status_t krs_configure_spm(krs_context_id_t id, krs_record_cb_t record, void *args) {
    if (record == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    WITH_CONTEXT(id.handle, c, {
        c->spm = true;
        c->spm_sink = (record_sink){record, args};
    });
}

krs_status_t krs_configure_thread_trace(krs_context_id_t id, krs_record_cb_t record, void *args) {
    if (record == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    WITH_CONTEXT(id.handle, c, {
        c->thread_trace = true;
        c->att_sink = (record_sink){record, args};
    });
}

krs_status_t krs_configure_external_correlation(krs_context_id_t id, krs_external_correlation_cb_t cb, void *args) {
    if (cb == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    WITH_CONTEXT(id.handle, c, {
        c->external = true;
        c->external_cb = cb;
        c->external_args = args;
    });
}

static krs_status_t set_started(krs_context_id_t id, bool on) {
    pthread_mutex_lock(&krs_sdk.mu);
    context *c = krs_context_find(id.handle);
    if (c != NULL) c->started = on;
    pthread_mutex_unlock(&krs_sdk.mu);
    return c == NULL ? KRS_STATUS_ERROR_CONTEXT_NOT_FOUND : KRS_STATUS_SUCCESS;
}

krs_status_t krs_start_context(krs_context_id_t id) { return set_started(id, true); }
krs_status_t krs_stop_context(krs_context_id_t id) { return set_started(id, false); }

void krs_active_copy(active *out) {
    out->n = 0;
    pthread_mutex_lock(&krs_sdk.mu);
    for (size_t i = 0; i < krs_sdk.ncontexts; i++) {
        if (krs_sdk.contexts[i]->started) out->ctx[out->n++] = *krs_sdk.contexts[i];
    }
    pthread_mutex_unlock(&krs_sdk.mu);
}

/* ACT-1, ACT-3: replay needs an active context whose KERNEL_REPLAY
 * subscription covers CONFIG. */
const context *krs_replay_context(const active *a) {
#ifdef KRS_FAULT_ACTIVATE_UNSTARTED
    /* the configured replay context activates whether started or not */
    static _Thread_local context configured;
    pthread_mutex_lock(&krs_sdk.mu);
    context *c0 = krs_context_find(krs_sdk.replay_context);
    if (c0 != NULL) configured = *c0;
    pthread_mutex_unlock(&krs_sdk.mu);
    if (c0 != NULL && configured.replay_config) return &configured;
#endif
    for (size_t i = 0; i < a->n; i++) {
        const context *c = &a->ctx[i];
#ifdef KRS_FAULT_ACTIVATE_WITHOUT_CONFIG
        if (c->replay) return c;
#else
        if (c->replay && c->replay_config) return c;
#endif
    }
    return NULL;
}

uint64_t krs_kernel_id(const char *name) {
    pthread_mutex_lock(&krs_sdk.mu);
    uint64_t id = 0;
    for (size_t i = 0; i < krs_sdk.nkernels && id == 0; i++) {
        if (strcmp(krs_sdk.kernel_names[i], name) == 0) id = i + 1;
    }
    if (id == 0) {
        char **grown = realloc(krs_sdk.kernel_names, (krs_sdk.nkernels + 1) * sizeof *grown);
        if (grown != NULL) {
            krs_sdk.kernel_names = grown;
            krs_sdk.kernel_names[krs_sdk.nkernels++] = strdup(name);
            id = krs_sdk.nkernels;
        }
    }
    pthread_mutex_unlock(&krs_sdk.mu);
    return id;
}

/* ---------------------------------------------------------------- queries */

static const char *const op_names[] = {[KRS_KERNEL_REPLAY_CONFIG] = "CONFIG", [KRS_KERNEL_REPLAY_PASS] = "PASS"};

/* API-3, API-4: CONFIG and PASS are the operations; NONE and LAST are the
 * enum's bounds and SNAPSHOT and RESTORE do not exist. */
krs_status_t krs_query_callback_tracing_kind_operation_name(krs_callback_tracing_kind_t kind, int op, const char **name) {
    if (kind != KRS_CALLBACK_TRACING_KERNEL_REPLAY) return KRS_STATUS_ERROR_KIND_NOT_FOUND;
    if (op != KRS_KERNEL_REPLAY_CONFIG && op != KRS_KERNEL_REPLAY_PASS) return KRS_STATUS_ERROR_OPERATION_NOT_FOUND;
    if (name != NULL) *name = op_names[op];
    return KRS_STATUS_SUCCESS;
}

krs_status_t krs_query_callback_tracing_kind_operation_id(krs_callback_tracing_kind_t kind, const char *name, int *op) {
    if (kind != KRS_CALLBACK_TRACING_KERNEL_REPLAY) return KRS_STATUS_ERROR_KIND_NOT_FOUND;
    if (name == NULL) return KRS_STATUS_ERROR_INVALID_ARGUMENT;
    const char *prefix = "KRS_KERNEL_REPLAY_";
    if (strncmp(name, prefix, strlen(prefix)) == 0) name += strlen(prefix);
    for (int i = KRS_KERNEL_REPLAY_CONFIG; i <= KRS_KERNEL_REPLAY_PASS; i++) {
        if (strcmp(op_names[i], name) == 0) {
            if (op != NULL) *op = i;
            return KRS_STATUS_SUCCESS;
        }
    }
    return KRS_STATUS_ERROR_OPERATION_NOT_FOUND;
}

const rt_agent *krs_query_agent(uint64_t agent_id) {
    return krs_sdk.rt == NULL ? NULL : rt_agent_by_id(krs_sdk.rt, agent_id);
}

void krs_experimental_set_pass_budget(uint64_t budget) { krs_sdk.pass_budget = budget; }

void krs_experimental_local_context_functions(krs_kernel_replay_context_cb_t *start, krs_kernel_replay_context_cb_t *stop) {
    if (start != NULL) *start = krs_local_start;
    if (stop != NULL) *stop = krs_local_stop;
}

void krs_experimental_set_fatal_callback(krs_fatal_cb_t cb, void *args) {
    krs_sdk.fatal = cb;
    krs_sdk.fatal_args = args;
}

void krs_experimental_set_report_callback(krs_report_cb_t cb, void *args) {
    krs_sdk.report = cb;
    krs_sdk.report_args = args;
}
