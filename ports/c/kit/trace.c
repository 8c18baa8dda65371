/* The trace writer: replayspec.trace/v2 NDJSON (docs/trace.md), one event
 * per line, keys in the order of trace.Event's fields. Events whose source
 * the profile does not report are left out (never faked). */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "rs_kit.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- builder */

typedef struct {
    char *b;
    size_t n, cap;
    bool oom;
} sb;

static void sb_grow(sb *s, size_t more) {
    if (s->oom || s->n + more + 1 <= s->cap) return;
    size_t cap = s->cap == 0 ? 256 : s->cap;
    while (cap < s->n + more + 1) cap *= 2;
    char *b = realloc(s->b, cap);
    if (b == NULL) { s->oom = true; return; }
    s->b = b;
    s->cap = cap;
}

static void sb_raw(sb *s, const char *t, size_t k) {
    sb_grow(s, k);
    if (s->oom) return;
    memcpy(s->b + s->n, t, k);
    s->n += k;
    s->b[s->n] = '\0';
}

static void sb_puts(sb *s, const char *t) { sb_raw(s, t, strlen(t)); }

static void sb_printf(sb *s, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0) sb_raw(s, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

static void sb_str(sb *s, const char *t) {
    sb_raw(s, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)t; *p != '\0'; p++) {
        switch (*p) {
        case '"': sb_raw(s, "\\\"", 2); break;
        case '\\': sb_raw(s, "\\\\", 2); break;
        case '\n': sb_raw(s, "\\n", 2); break;
        case '\r': sb_raw(s, "\\r", 2); break;
        case '\t': sb_raw(s, "\\t", 2); break;
        default:
            if (*p < 0x20) sb_printf(s, "\\u%04x", *p);
            else sb_raw(s, (const char *)p, 1);
        }
    }
    sb_raw(s, "\"", 1);
}

/* key writes ,"name": (the first key of a line has no comma before it). */
static void key(sb *s, const char *name) {
    sb_raw(s, ",\"", 2);
    sb_puts(s, name);
    sb_raw(s, "\":", 2);
}

static void kv_u64(sb *s, const char *name, uint64_t v) { key(s, name); sb_printf(s, "%" PRIu64, v); }
static void kv_i64(sb *s, const char *name, int64_t v) { key(s, name); sb_printf(s, "%" PRId64, v); }
static void kv_str(sb *s, const char *name, const char *v) { key(s, name); sb_str(s, v); }
static void opt_u64(sb *s, const char *name, uint64_t v) { if (v != 0) kv_u64(s, name, v); }
static void opt_str(sb *s, const char *name, const char *v) { if (v != NULL && v[0] != '\0') kv_str(s, name, v); }

/* ---------------------------------------------------------------- names */

static const char *type_name(rs_event_type t) {
    static const char *const names[] = {
        [RS_EV_API] = "api", [RS_EV_CALLBACK] = "callback", [RS_EV_CALLBACK_RETURN] = "callback_return",
        [RS_EV_PASS_COUNT] = "pass_count", [RS_EV_CONTINUE] = "continue", [RS_EV_LOCAL] = "local",
        [RS_EV_RECORD] = "record", [RS_EV_CORRELATION] = "correlation", [RS_EV_TOOL_DISPATCH] = "tool_dispatch",
        [RS_EV_TOOL_COMPLETE] = "tool_complete", [RS_EV_DISPATCH_ID] = "dispatch_id",
        [RS_EV_SNAPSHOT] = "snapshot", [RS_EV_RESTORE] = "restore", [RS_EV_WARNING] = "warning",
        [RS_EV_NEVER_ENDED] = "never_ended", [RS_EV_AGENT] = "agent", [RS_EV_KERNEL] = "kernel",
        [RS_EV_SIGNAL] = "signal", [RS_EV_MEM_READ] = "mem_read", [RS_EV_MEM_WRITE] = "mem_write",
        [RS_EV_APP_ALLOC] = "app_alloc", [RS_EV_APP_FREE] = "app_free", [RS_EV_APP_DISPATCH] = "app_dispatch",
        [RS_EV_APP_COMPLETE] = "app_complete", [RS_EV_APP_READBACK] = "app_readback",
        [RS_EV_APP_MEMORY] = "app_memory", [RS_EV_APP_TIMEOUT] = "app_timeout", [RS_EV_API_CALL] = "api_call",
        [RS_EV_TOOL_MEMORY] = "tool_memory", [RS_EV_TOOL_SIGNAL] = "tool_signal", [RS_EV_APP_SIGNAL] = "app_signal",
    };
    if ((size_t)t < sizeof names / sizeof names[0] && names[t] != NULL) return names[t];
    return NULL;
}

static unsigned source_of(rs_event_type t) {
    switch (t) {
    case RS_EV_API: case RS_EV_CALLBACK: case RS_EV_CALLBACK_RETURN: case RS_EV_PASS_COUNT:
    case RS_EV_CONTINUE: case RS_EV_LOCAL: case RS_EV_RECORD: case RS_EV_CORRELATION:
    case RS_EV_TOOL_DISPATCH: case RS_EV_TOOL_COMPLETE: case RS_EV_API_CALL: case RS_EV_TOOL_MEMORY: case RS_EV_TOOL_SIGNAL:
    case RS_EV_AGENT: /* the tool's query of the agents */
        return RS_SRC_TOOL;
    case RS_EV_DISPATCH_ID: case RS_EV_SNAPSHOT: case RS_EV_RESTORE: case RS_EV_NEVER_ENDED:
        return RS_SRC_SDK;
    case RS_EV_KERNEL: case RS_EV_SIGNAL: case RS_EV_MEM_READ: case RS_EV_MEM_WRITE:
        return RS_SRC_RUNTIME;
    default: /* the application's events, and the warnings its process printed */
        return RS_SRC_APP;
    }
}

static const char *op_name(rs_op op) {
    switch (op) {
    case RS_OP_CONFIG: return "CONFIG";
    case RS_OP_PASS: return "PASS";
    case RS_OP_LAST: return "LAST";
    default: return "NONE";
    }
}

const char *rs_status_name(int v) {
    static const char *const names[] = {
        "SUCCESS", "ERROR", "ERROR_CONTEXT_NOT_FOUND", "ERROR_BUFFER_NOT_FOUND", "ERROR_KIND_NOT_FOUND",
        "ERROR_OPERATION_NOT_FOUND", "ERROR_THREAD_NOT_FOUND", "ERROR_AGENT_NOT_FOUND", "ERROR_COUNTER_NOT_FOUND",
        "ERROR_CONTEXT_ERROR", "ERROR_CONTEXT_INVALID", "ERROR_CONTEXT_NOT_STARTED", "ERROR_CONTEXT_CONFLICT",
        "ERROR_CONTEXT_ID_NOT_ZERO", "ERROR_BUFFER_BUSY", "ERROR_SERVICE_ALREADY_CONFIGURED",
        "ERROR_CONFIGURATION_LOCKED", "ERROR_NOT_IMPLEMENTED", "ERROR_INCOMPATIBLE_ABI", "ERROR_INVALID_ARGUMENT",
    };
    if (v >= 0 && (size_t)v < sizeof names / sizeof names[0]) return names[v];
    return "ERROR";
}

static const char *call_name(rs_call c) {
    static const char *const names[] = {
        [RS_CALL_CREATE_CONTEXT] = "create_context", [RS_CALL_CONFIGURE_CALLBACK] = "configure_callback_tracing",
        [RS_CALL_CONFIGURE_COUNTERS] = "configure_counter_collection",
        [RS_CALL_CONFIGURE_KERNEL_TRACE] = "configure_kernel_trace",
        [RS_CALL_CONFIGURE_DEVICE] = "configure_device_counting", [RS_CALL_CONFIGURE_PC_SAMPLING] = "configure_pc_sampling",
        [RS_CALL_CONFIGURE_SPM] = "configure_spm", [RS_CALL_CONFIGURE_THREAD_TRACE] = "configure_thread_trace",
        [RS_CALL_CONFIGURE_EXTERNAL] = "configure_external_correlation", [RS_CALL_START_CONTEXT] = "start_context",
        [RS_CALL_STOP_CONTEXT] = "stop_context", [RS_CALL_OPERATION_NAME] = "operation_name",
        [RS_CALL_OPERATION_ID] = "operation_id", [RS_CALL_LOCAL_START] = "start", [RS_CALL_LOCAL_STOP] = "stop",
        [RS_CALL_LAUNCH_KERNEL] = "launch_kernel", [RS_CALL_GRAPH_LAUNCH] = "graph_launch",
        [RS_CALL_QUEUE_SUBMIT] = "queue_submit",
    };
    if ((size_t)c < sizeof names / sizeof names[0]) return names[c];
    return NULL;
}

static const char *service_name(rs_service s) {
    switch (s) {
    case RS_SVC_KERNEL_TRACE: return "kernel_trace";
    case RS_SVC_COUNTER_COLLECTION: return "counter_collection";
    case RS_SVC_DEVICE_COUNTING: return "device_counting";
    case RS_SVC_PC_SAMPLING: return "pc_sampling";
    case RS_SVC_SPM: return "spm";
    case RS_SVC_THREAD_TRACE: return "thread_trace";
    default: return NULL;
    }
}

static const char *const warning_codes[] = {
    [RS_WARN_PASS_COUNT_ZERO] = "pass_count_zero_without_continue", [RS_WARN_MULTI_PACKET] = "multi_packet_submission",
    [RS_WARN_GRAPH_LAUNCH] = "graph_launch", [RS_WARN_SNAPSHOT_INCOMPLETE] = "snapshot_incomplete",
    [RS_WARN_SERVICE_CONFLICT] = "service_conflict", [RS_WARN_REENTRANT_DISPATCH] = "reentrant_dispatch",
};

const char *rs_warning_code(rs_warning w) {
    if (w > RS_WARN_NONE && (size_t)w < sizeof warning_codes / sizeof warning_codes[0]) return warning_codes[w];
    return NULL;
}

rs_warning rs_warning_parse(const char *code) {
    for (size_t i = 1; i < sizeof warning_codes / sizeof warning_codes[0]; i++) {
        if (strcmp(warning_codes[i], code) == 0) return (rs_warning)i;
    }
    return RS_WARN_NONE;
}

static const char *mem_kind_name(rs_mem_kind k) {
    switch (k) {
    case RS_MEM_DEVICE: return "device";
    case RS_MEM_FINE: return "fine";
    case RS_MEM_HOST: return "host";
    case RS_MEM_KERNARG: return "kernarg";
    default: return NULL;
    }
}

/* ---------------------------------------------------------------- clock, digest, thread */

static uint64_t clock_origin;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static uint64_t mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void set_origin(void) { clock_origin = mono(); }

uint64_t rs_now_ns(void) {
    pthread_once(&clock_once, set_origin);
    return mono() - clock_origin + 1000000u;
}

void rs_digest_begin(rs_digest_state *d) { d->h = 14695981039346656037ull; }

static void fnv(rs_digest_state *d, const unsigned char *p, uint64_t n) {
    uint64_t h = d->h;
    for (uint64_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    d->h = h;
}

void rs_digest_add(rs_digest_state *d, const void *data, uint64_t n) {
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(n >> (8 * i));
    fnv(d, len, 8);
    fnv(d, data, n);
}

void rs_digest_end(const rs_digest_state *d, char out[17]) { snprintf(out, 17, "%016" PRIx64, d->h); }

static _Thread_local uint64_t app_thread;
void rs_set_app_thread(uint64_t thread) { app_thread = thread; }
uint64_t rs_app_thread(void) { return app_thread; }

/* ---------------------------------------------------------------- trace */

struct rs_trace {
    FILE *out;
    unsigned profile;
    pthread_mutex_t mu;
    uint64_t seq;
    bool failed;
    void (*before)(void *arg); /* rs_trace_before_emit */
    void *before_arg;
};

static void profile_sources(sb *s, unsigned profile) {
    static const struct { unsigned bit; const char *name; } all[] = {
        {RS_SRC_TOOL, "tool"}, {RS_SRC_APP, "app"}, {RS_SRC_RUNTIME, "runtime"}, {RS_SRC_SDK, "sdk"}};
    sb_raw(s, "[", 1);
    bool first = true;
    for (size_t i = 0; i < 4; i++) {
        if ((profile & all[i].bit) == 0) continue;
        if (!first) sb_raw(s, ",", 1);
        sb_str(s, all[i].name);
        first = false;
    }
    sb_raw(s, "]", 1);
}

rs_trace *rs_trace_open(FILE *out, const char *spec, const char *target, const char *implementation, unsigned profile) {
    rs_trace *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->out = out;
    t->profile = profile;
    pthread_mutex_init(&t->mu, NULL);
    sb s = {0};
    sb_puts(&s, "{\"trace\":\"replayspec.trace/v2\"");
    opt_str(&s, "spec", spec);
    opt_str(&s, "target", target);
    opt_str(&s, "implementation", implementation);
    key(&s, "sources");
    profile_sources(&s, profile);
    sb_puts(&s, "}\n");
    if (s.oom || fputs(s.b, out) == EOF) t->failed = true;
    free(s.b);
    return t;
}

bool rs_trace_reports(const rs_trace *t, rs_event_type type) { return (t->profile & source_of(type)) != 0; }

static void payload_members(sb *s, const char *name, unsigned bits) {
    static const char *const members[] = {"size", "dispatch_info", "current_pass", "total_passes",
                                          "replay_pass_count", "replay_continue", "replay_start_context",
                                          "replay_stop_context"};
    if (bits == 0) return;
    key(s, name);
    sb_raw(s, "[", 1);
    bool first = true;
    for (unsigned i = 0; i < 8; i++) {
        if ((bits & (1u << i)) == 0) continue;
        if (!first) sb_raw(s, ",", 1);
        sb_str(s, members[i]);
        first = false;
    }
    sb_raw(s, "]", 1);
}

static void dim3(sb *s, const char *name, const uint32_t *d) {
    key(s, name);
    sb_printf(s, "[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "]", d[0], d[1], d[2]);
}

static void regions(sb *s, const rs_region *r, size_t n) {
    if (n == 0) return;
    key(s, "regions");
    sb_raw(s, "[", 1);
    for (size_t i = 0; i < n; i++) {
        sb_printf(s, "%s{\"addr\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", i ? "," : "", r[i].addr, r[i].bytes);
    }
    sb_raw(s, "]", 1);
}

/* contents writes a whole buffer: its digest, elements and runs (runs
 * left out when with_runs is false). */
static void contents(sb *s, const void *data, uint64_t bytes, bool with_runs) {
    rs_digest_state d;
    char hex[17];
    rs_digest_begin(&d);
    rs_digest_add(&d, data, bytes);
    rs_digest_end(&d, hex);
    kv_str(s, "digest", hex);
    uint64_t elements = bytes / 4;
    kv_u64(s, "elements", elements);
    if (elements == 0 || !with_runs) return;
    key(s, "runs");
    sb_raw(s, "[", 1);
    const unsigned char *p = data;
    int32_t cur = 0;
    uint64_t count = 0;
    bool first = true;
    for (uint64_t i = 0; i < elements; i++) {
        uint32_t u = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                     (uint32_t)p[4 * i + 3] << 24;
        int32_t v = (int32_t)u;
        if (count > 0 && v == cur) { count++; continue; }
        if (count > 0) {
            sb_printf(s, "%s{\"value\":%" PRId32 ",\"count\":%" PRIu64 "}", first ? "" : ",", cur, count);
            first = false;
        }
        cur = v;
        count = 1;
    }
    sb_printf(s, "%s{\"value\":%" PRId32 ",\"count\":%" PRIu64 "}]", first ? "" : ",", cur, count);
}

static void info(sb *s, const rs_info *in) {
    key(s, "info");
    sb_printf(s, "{\"size\":%" PRIu64 ",\"kernel_id\":%" PRIu64 ",\"private_segment_size\":%" PRIu32
                 ",\"group_segment_size\":%" PRIu32,
              in->size, in->kernel_id, in->private_segment, in->group_segment);
    dim3(s, "workgroup", in->workgroup);
    dim3(s, "grid", in->grid);
    sb_raw(s, "}", 1);
}

void rs_trace_before_emit(rs_trace *t, void (*fn)(void *arg), void *arg) {
    pthread_mutex_lock(&t->mu);
    t->before = fn;
    t->before_arg = arg;
    pthread_mutex_unlock(&t->mu);
}

void rs_emit(rs_trace *t, const rs_event *e) {
    if (t == NULL || !rs_trace_reports(t, e->type) || type_name(e->type) == NULL) return;
    pthread_mutex_lock(&t->mu);
    void (*before)(void *) = t->before;
    void *before_arg = t->before_arg;
    pthread_mutex_unlock(&t->mu);
    if (before != NULL) before(before_arg); /* outside the lock: it may emit events itself */
    sb s = {0};
    pthread_mutex_lock(&t->mu);
    uint64_t now = e->time != 0 ? e->time : rs_now_ns();
    sb_printf(&s, "{\"seq\":%" PRIu64, ++t->seq);
    kv_str(&s, "type", type_name(e->type));
    kv_u64(&s, "time", now);
    opt_u64(&s, "thread", e->thread);
    opt_u64(&s, "agent", e->agent);
    opt_u64(&s, "queue", e->queue);
    opt_u64(&s, "dispatch", e->dispatch);
    opt_str(&s, "kernel", e->kernel);
    opt_str(&s, "family", e->family);
    opt_str(&s, "product", e->product);
    opt_str(&s, "arch", e->arch);
    opt_u64(&s, "context", e->context);
    opt_str(&s, "label", e->label);
    opt_str(&s, "buffer", e->buffer);
    if (e->op != RS_OP_NONE) kv_str(&s, "op", op_name(e->op));
    if (e->phase != RS_PHASE_NONE) kv_str(&s, "phase", e->phase == RS_PHASE_ENTER ? "ENTER" : "EXIT");
    if (e->has_pass) kv_u64(&s, "pass", e->pass);
    if (e->has_total) kv_u64(&s, "total", e->total);
    if (e->corr != NULL) {
        key(&s, "corr");
        sb_printf(&s, "{\"internal\":%" PRIu64 ",\"external\":%" PRIu64 ",\"ancestor\":%" PRIu64 "}",
                  e->corr->internal, e->corr->external, e->corr->ancestor);
    }
    if (e->has_user_data) kv_u64(&s, "user_data", e->user_data);
    if (e->call != RS_CALL_NONE && call_name(e->call) != NULL) kv_str(&s, "call", call_name(e->call));
    if (e->has_result) kv_i64(&s, "result", e->result);
    if (e->has_status) kv_str(&s, "status", rs_status_name(e->status));
    payload_members(&s, "payload", e->payload);
    if (e->has_payload_size) kv_u64(&s, "payload_size", e->payload_size);
    if (e->info != NULL) info(&s, e->info);
    if (e->domain_kernel_replay) kv_str(&s, "domain", "KERNEL_REPLAY");
    if (e->noperations > 0) {
        key(&s, "operations");
        sb_raw(&s, "[", 1);
        for (size_t i = 0; i < e->noperations; i++) {
            if (i > 0) sb_raw(&s, ",", 1);
            sb_str(&s, op_name(e->operations[i]));
        }
        sb_raw(&s, "]", 1);
    }
    opt_str(&s, "op_name", e->op_name);
    if (e->has_op_id) kv_u64(&s, "op_id", e->op_id);
    if (service_name(e->service) != NULL) kv_str(&s, "service", service_name(e->service));
    opt_u64(&s, "start", e->start);
    opt_u64(&s, "end", e->end);
    if (e->ncounters > 0) {
        key(&s, "counters");
        sb_raw(&s, "[", 1);
        for (size_t i = 0; i < e->ncounters; i++) {
            if (i > 0) sb_raw(&s, ",", 1);
            sb_raw(&s, "{\"name\":", 8);
            sb_str(&s, e->counters[i].name);
            sb_printf(&s, ",\"value\":%" PRIu64 "}", e->counters[i].value);
        }
        sb_raw(&s, "]", 1);
    }
    opt_u64(&s, "signal", e->signal);
    if (e->has_value) kv_i64(&s, "value", e->value);
    if (e->packets != 0) kv_i64(&s, "packets", e->packets);
    if (e->kernel_packets != 0) kv_i64(&s, "kernel_packets", e->kernel_packets);
    if (e->graph) { key(&s, "graph"); sb_puts(&s, "true"); }
    if (e->grid != NULL) dim3(&s, "grid", e->grid);
    if (e->workgroup != NULL) dim3(&s, "workgroup", e->workgroup);
    if (e->nargs > 0) {
        key(&s, "args");
        sb_raw(&s, "[", 1);
        for (size_t i = 0; i < e->nargs; i++) {
            if (i > 0) sb_raw(&s, ",", 1);
            sb_str(&s, e->args[i]);
        }
        sb_raw(&s, "]", 1);
    }
    opt_u64(&s, "addr", e->addr);
    opt_u64(&s, "bytes", e->bytes);
    if (mem_kind_name(e->mem_kind) != NULL) kv_str(&s, "mem_kind", mem_kind_name(e->mem_kind));
    regions(&s, e->regions, e->nregions);
    opt_str(&s, "mem_in", e->mem_in);
    opt_str(&s, "mem_out", e->mem_out);
    opt_str(&s, "digest", e->digest);
    if (e->contents != NULL) contents(&s, e->contents, e->contents_bytes, e->type != RS_EV_TOOL_MEMORY);
    if (rs_warning_code(e->code) != NULL) kv_str(&s, "code", rs_warning_code(e->code));
    opt_str(&s, "message", e->message);
    sb_puts(&s, "}\n");
    if (s.oom || fputs(s.b, t->out) == EOF) t->failed = true;
    pthread_mutex_unlock(&t->mu);
    free(s.b);
}

uint64_t rs_trace_events(const rs_trace *t) { return t->seq; }

void rs_trace_abort(rs_trace *t) {
    pthread_mutex_lock(&t->mu); /* never unlocked: the process ends */
    fprintf(t->out, "{\"end\":%" PRIu64 "}\n", t->seq);
    fflush(t->out);
}

int rs_trace_close(rs_trace *t) {
    if (t == NULL) return -1;
    pthread_mutex_lock(&t->mu);
    fprintf(t->out, "{\"end\":%" PRIu64 "}\n", t->seq);
    int bad = fflush(t->out) != 0 || ferror(t->out) || t->failed;
    pthread_mutex_unlock(&t->mu);
    pthread_mutex_destroy(&t->mu);
    free(t);
    return bad ? -1 : 0;
}

const char *rs_profile_name(unsigned profile) {
    switch (profile) {
    case RS_PROFILE_BLACK_BOX: return "black-box";
    case RS_PROFILE_RUNTIME: return "runtime";
    case RS_PROFILE_FULL: return "full";
    default: return NULL;
    }
}

bool rs_profile_parse(const char *name, unsigned *profile) {
    static const unsigned all[] = {RS_PROFILE_BLACK_BOX, RS_PROFILE_RUNTIME, RS_PROFILE_FULL};
    for (size_t i = 0; i < 3; i++) {
        if (strcmp(rs_profile_name(all[i]), name) == 0) {
            *profile = all[i];
            return true;
        }
    }
    return false;
}
