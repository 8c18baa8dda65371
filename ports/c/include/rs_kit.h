/*
 * rs_kit.h: the replayspec driver kit for C and C++ ports.
 *
 * A port of kernel replay (an SDK, a tool library around it, or a model of
 * one) becomes a replayspec driver (docs/driver-protocol.md) with this kit:
 *
 *   - rs_json_*: a small strict JSON reader (libc only);
 *   - rs_spec_*: the spec the runner sends, read into plain C structs, with
 *     helpers that walk its tool plan (pass counts, continue policies, local
 *     toggles) and its application;
 *   - rs_trace_* and rs_emit: the trace (docs/trace.md, replayspec.trace/v2)
 *     written through typed events, never hand-written JSON; events of a
 *     source the port's profile does not report are left out;
 *   - rs_driver_main: the protocol itself (handshake, probe, spec on stdin,
 *     trace, end line, exit status).
 *
 * Every function is thread-safe where it says so; the trace writer is.
 */
#ifndef RS_KIT_H
#define RS_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- JSON */

typedef enum {
    RS_JSON_NULL,
    RS_JSON_BOOL,
    RS_JSON_NUMBER,
    RS_JSON_STRING,
    RS_JSON_ARRAY,
    RS_JSON_OBJECT
} rs_json_kind;

typedef struct rs_json rs_json;
struct rs_json {
    rs_json_kind kind;
    bool boolean;
    char *text;      /* a string's value, or a number as written */
    size_t len;      /* items of an array or object */
    rs_json **items; /* array items, or object values */
    char **keys;     /* object keys, parallel to items */
};

/* rs_json_parse reads one JSON document (trailing whitespace allowed). On
 * error it returns NULL and writes a message with the byte offset to err. */
rs_json *rs_json_parse(const char *text, size_t n, char *err, size_t errlen);
void rs_json_free(rs_json *v);
/* rs_json_get is the value of key in an object, or NULL. */
const rs_json *rs_json_get(const rs_json *obj, const char *key);

/* ---------------------------------------------------------------- spec */

/* The spec as the runner sends it (spec.Defaults applied): docs/spec-format.md. */

typedef enum { RS_PASSES_NONE, RS_PASSES_NUMBER, RS_PASSES_GROUPS } rs_passes_kind;

typedef struct {
    char *name, *kind;
    uint64_t snapshot_limit; /* 0: none */
    uint64_t restore_fails_at; /* the n-th restore fails part-way; 0: never */
} rs_spec_agent;

typedef struct {
    char **names;
    size_t n;
} rs_names;

typedef struct {
    char *name;
    bool start;      /* started before the application runs */
    char *stop_after; /* NULL or a dispatch name */
    /* services: has_* says the service is configured */
    bool has_kernel_replay;
    rs_names replay_operations; /* empty: all (ACT-2) */
    bool has_counter_collection;
    rs_names counters;
    bool has_kernel_trace;
    bool has_device_counting;
    rs_names device_counters;
    bool has_pc_sampling, has_spm, has_thread_trace;
    bool has_external_correlation;
    bool external_increment; /* mode increment; else fixed */
    uint64_t external_value;
} rs_spec_context;

typedef enum { RS_CONTINUE_UNSET, RS_CONTINUE_STOP_AFTER, RS_CONTINUE_ALWAYS, RS_CONTINUE_CONVERGE } rs_continue_kind;

typedef struct {
    int64_t pass; /* -1: every pass */
    rs_names start, stop;
} rs_spec_local;

/* A per-pass choice of the contexts that collect (plan.collect). */
typedef struct {
    int64_t pass; /* -1: every pass */
    rs_names contexts;
} rs_spec_collect;

/* RS_WINDOW_RECORD: the tool's first service record of a pass, delivered
 * inside the pass (tool.plan.actions only). */
typedef enum { RS_WINDOW_CONFIG_ENTER, RS_WINDOW_CONFIG_EXIT, RS_WINDOW_PASS_ENTER, RS_WINDOW_PASS_EXIT, RS_WINDOW_RECORD } rs_window;
/* RS_ACTION_FREE frees a buffer, RS_ACTION_ALLOC allocates a by_tool one
 * (memory-actions): each once in a run, the first time its callback comes. */
typedef enum {
    RS_ACTION_START_CONTEXT, RS_ACTION_STOP_CONTEXT, RS_ACTION_DISPATCH, RS_ACTION_FREE, RS_ACTION_ALLOC
} rs_action_call;

/* A call the tool makes from inside a replay callback (plan.actions). */
typedef struct {
    rs_window in;
    int64_t pass; /* for PASS windows; -1: every pass */
    rs_action_call call;
    char *context, *dispatch;
    char *buffer; /* RS_ACTION_FREE, RS_ACTION_ALLOC */
} rs_spec_action;

typedef struct {
    rs_passes_kind passes;
    uint64_t pass_number; /* for RS_PASSES_NUMBER */
    rs_continue_kind cont;
    uint64_t stop_after;
    char *converge_counter;
    uint64_t converge_at_most;
    rs_spec_local *local;
    size_t nlocal;
    bool has_user_data;
    uint64_t user_data;
    bool write_user_data_in_pass;
    rs_spec_collect *collect;
    size_t ncollect;
    rs_spec_action *actions;
    size_t nactions;
} rs_spec_plan;

typedef struct {
    bool start; /* local_start; else local_stop */
    char *context;
    rs_window in;
    uint64_t pass;
} rs_spec_misuse;

typedef struct {
    char *name, *agent, *kind; /* kind: device, fine, host, kernarg */
    uint64_t elements;
    int64_t fill;
    int64_t *values;
    size_t nvalues;
    char *free_after;
    char *alloc_after; /* NULL: allocated before the application starts */
    bool by_tool;      /* allocated by the tool from a callback (RS_ACTION_ALLOC), never by the application */
} rs_spec_buffer;

typedef struct {
    char *name, *kernel, *agent, *queue;
    uint64_t thread;
    rs_names args;
    int32_t scalar;
    uint32_t grid, workgroup;
    int packets;        /* packets in the submission */
    int kernel_packets; /* how many are kernel dispatches (the last carries the completion) */
    bool barriers_between; /* a barrier packet between each two kernel packets */
    bool graph;
    bool by_tool; /* the tool writes it from a callback (a dispatch action) */
    rs_spec_plan *plan; /* NULL: the tool's plan */
    char *during_dispatch; /* NULL: none */
    uint64_t during_pass;
    char *after;
} rs_spec_dispatch;

typedef struct {
    char *name;
    rs_names rules, requires;
    rs_spec_agent *agents;
    size_t nagents;
    rs_spec_context *contexts;
    size_t ncontexts;
    rs_spec_plan plan;
    rs_spec_misuse *misuse;
    size_t nmisuse;
    bool configure_twice;
    rs_spec_buffer *buffers;
    size_t nbuffers;
    rs_spec_dispatch *dispatches;
    size_t ndispatches;
    uint64_t max_passes;
} rs_spec;

/* rs_spec_parse reads the runner's JSON form of a spec. Unknown keys are
 * errors (a newer runner must not be misread). NULL and err on failure. */
rs_spec *rs_spec_parse(const char *json, size_t n, char *err, size_t errlen);
void rs_spec_free(rs_spec *s);

/* Walking the spec. */
const rs_spec_plan *rs_spec_plan_for(const rs_spec *s, const char *dispatch);
const rs_spec_dispatch *rs_spec_dispatch_named(const rs_spec *s, const char *name);
const rs_spec_context *rs_spec_context_named(const rs_spec *s, size_t *index, const char *name);
const rs_spec_buffer *rs_spec_buffer_named(const rs_spec *s, size_t *index, const char *name);
size_t rs_spec_agent_index(const rs_spec *s, const char *name); /* nagents if absent */
bool rs_names_has(const rs_names *n, const char *name);
/* rs_plan_continue is what the plan's replay_continue answers after pass
 * (0-based); converged tells whether the converge counter read the same on
 * this pass and the one before (the tool's own bookkeeping). */
int rs_plan_continue(const rs_spec_plan *p, uint64_t pass, bool converged);
/* The kernel library (spec.Kernels): buffers taken and whether a scalar. */
bool rs_kernel_shape(const char *kernel, int *buffers, bool *scalar);

/* ---------------------------------------------------------------- trace */

/* Sources (docs/trace.md): who reports an event. A profile is a set. */
enum {
    RS_SRC_TOOL = 1u << 0,
    RS_SRC_APP = 1u << 1,
    RS_SRC_RUNTIME = 1u << 2,
    RS_SRC_SDK = 1u << 3,
};
#define RS_PROFILE_BLACK_BOX (RS_SRC_TOOL | RS_SRC_APP)
#define RS_PROFILE_RUNTIME (RS_SRC_TOOL | RS_SRC_APP | RS_SRC_RUNTIME)
#define RS_PROFILE_FULL (RS_SRC_TOOL | RS_SRC_APP | RS_SRC_RUNTIME | RS_SRC_SDK)

typedef enum {
    RS_EV_API = 1, RS_EV_CALLBACK, RS_EV_CALLBACK_RETURN, RS_EV_PASS_COUNT, RS_EV_CONTINUE,
    RS_EV_LOCAL, RS_EV_RECORD, RS_EV_CORRELATION, RS_EV_TOOL_DISPATCH, RS_EV_TOOL_COMPLETE,
    RS_EV_DISPATCH_ID, RS_EV_SNAPSHOT, RS_EV_RESTORE, RS_EV_WARNING, RS_EV_NEVER_ENDED,
    RS_EV_AGENT, RS_EV_KERNEL, RS_EV_SIGNAL, RS_EV_MEM_READ, RS_EV_MEM_WRITE,
    RS_EV_APP_ALLOC, RS_EV_APP_FREE, RS_EV_APP_DISPATCH, RS_EV_APP_COMPLETE,
    RS_EV_APP_READBACK, RS_EV_APP_MEMORY, RS_EV_APP_TIMEOUT,
    RS_EV_API_CALL, /* tool: an API call's enter or exit, as API tracing showed it (COR-1) */
    /* What a black-box port observes besides (docs/driver-protocol.md):
     * the tool's copy of one buffer in a PASS callback (contents, digest
     * and elements only), the application's completion signal as the tool
     * loads it in an EXIT callback, and as the application loads it after
     * its wait (value). */
    RS_EV_TOOL_MEMORY, RS_EV_TOOL_SIGNAL, RS_EV_APP_SIGNAL
} rs_event_type;

typedef enum { RS_OP_NONE = 0, RS_OP_CONFIG = 1, RS_OP_PASS = 2, RS_OP_LAST = 3 } rs_op;
typedef enum { RS_PHASE_NONE = 0, RS_PHASE_ENTER = 1, RS_PHASE_EXIT = 2 } rs_phase;

/* Statuses: rocprofiler_status_t's values (REFERENCE.md). */
typedef enum {
    RS_ST_SUCCESS = 0, RS_ST_ERROR = 1, RS_ST_CONTEXT_NOT_FOUND = 2, RS_ST_KIND_NOT_FOUND = 4,
    RS_ST_OPERATION_NOT_FOUND = 5, RS_ST_CONTEXT_ERROR = 9, RS_ST_CONTEXT_INVALID = 10,
    RS_ST_CONTEXT_NOT_STARTED = 11, RS_ST_SERVICE_ALREADY_CONFIGURED = 15,
    RS_ST_CONFIGURATION_LOCKED = 16, RS_ST_NOT_IMPLEMENTED = 17, RS_ST_INVALID_ARGUMENT = 19
} rs_status;
/* rs_status_name is the trace's name for status value v ("ERROR" for a
 * value the kit does not list, so that nothing passes by accident). */
const char *rs_status_name(int v);

typedef enum {
    RS_CALL_NONE, RS_CALL_CREATE_CONTEXT, RS_CALL_CONFIGURE_CALLBACK, RS_CALL_CONFIGURE_COUNTERS,
    RS_CALL_CONFIGURE_KERNEL_TRACE, RS_CALL_CONFIGURE_DEVICE, RS_CALL_CONFIGURE_PC_SAMPLING,
    RS_CALL_CONFIGURE_SPM, RS_CALL_CONFIGURE_THREAD_TRACE, RS_CALL_CONFIGURE_EXTERNAL,
    RS_CALL_START_CONTEXT, RS_CALL_STOP_CONTEXT, RS_CALL_OPERATION_NAME, RS_CALL_OPERATION_ID,
    RS_CALL_LOCAL_START, RS_CALL_LOCAL_STOP,
    /* api_call: the application's launch, and the queue submission inside it */
    RS_CALL_LAUNCH_KERNEL, RS_CALL_GRAPH_LAUNCH, RS_CALL_QUEUE_SUBMIT
} rs_call;

typedef enum {
    RS_SVC_NONE, RS_SVC_KERNEL_TRACE, RS_SVC_COUNTER_COLLECTION, RS_SVC_DEVICE_COUNTING,
    RS_SVC_PC_SAMPLING, RS_SVC_SPM, RS_SVC_THREAD_TRACE
} rs_service;

typedef enum {
    RS_WARN_NONE, RS_WARN_PASS_COUNT_ZERO, RS_WARN_MULTI_PACKET, RS_WARN_GRAPH_LAUNCH,
    RS_WARN_SNAPSHOT_INCOMPLETE, RS_WARN_SERVICE_CONFLICT, RS_WARN_REENTRANT_DISPATCH
} rs_warning;
/* rs_warning_code is the trace's code ("pass_count_zero_without_continue", ...). */
const char *rs_warning_code(rs_warning w);
rs_warning rs_warning_parse(const char *code);

typedef enum { RS_MEM_NONE, RS_MEM_DEVICE, RS_MEM_FINE, RS_MEM_HOST, RS_MEM_KERNARG } rs_mem_kind;

/* Payload members, as bits in the reference's order (API-6). */
enum {
    RS_PL_SIZE = 1u << 0, RS_PL_DISPATCH_INFO = 1u << 1, RS_PL_CURRENT_PASS = 1u << 2,
    RS_PL_TOTAL_PASSES = 1u << 3, RS_PL_REPLAY_PASS_COUNT = 1u << 4,
    RS_PL_REPLAY_CONTINUE = 1u << 5, RS_PL_REPLAY_START_CONTEXT = 1u << 6,
    RS_PL_REPLAY_STOP_CONTEXT = 1u << 7
};

typedef struct { uint64_t internal, external, ancestor; } rs_corr;
typedef struct { const char *name; uint64_t value; } rs_counter;
typedef struct { uint64_t addr, bytes; } rs_region;
typedef struct {
    uint64_t size, kernel_id;
    uint32_t private_segment, group_segment;
    uint32_t workgroup[3], grid[3];
} rs_info;

/* rs_event is one event. Fields that do not apply to its type are left
 * zero; the has_* flags mark numbers that are written even when zero. */
typedef struct {
    rs_event_type type;
    uint64_t time; /* 0: now, on the kit's clock */
    uint64_t thread, agent, queue, dispatch;
    const char *kernel, *family, *product, *arch;
    uint64_t context;
    const char *label, *buffer;
    rs_op op;
    rs_phase phase;
    bool has_pass, has_total, has_user_data, has_result, has_value, has_payload_size, has_op_id;
    uint64_t pass, total;
    const rs_corr *corr;
    uint64_t user_data;
    rs_call call;
    int64_t result;
    bool has_status;
    int status; /* an rs_status value */
    unsigned payload; /* RS_PL_* bits, for callback and callback_return */
    uint64_t payload_size;
    const rs_info *info;
    bool domain_kernel_replay;
    const rs_op *operations; /* configure: the operations listed (none: all) */
    size_t noperations;
    const char *op_name; /* operation queries: the name asked or answered */
    uint64_t op_id;
    rs_service service;
    uint64_t start, end;
    const rs_counter *counters;
    size_t ncounters;
    uint64_t signal;
    int64_t value;
    int packets, kernel_packets;
    bool graph;
    const uint32_t *grid, *workgroup; /* [3] */
    const char *const *args; /* app_dispatch, tool_dispatch: the buffers the kernel takes */
    size_t nargs;
    uint64_t addr, bytes;
    rs_mem_kind mem_kind;
    const rs_region *regions;
    size_t nregions;
    const char *mem_in, *mem_out, *digest; /* 16 hex digits */
    const void *contents; /* app_readback, app_memory, tool_memory: the buffer, whole */
    uint64_t contents_bytes; /* tool_memory writes its digest and elements only, no runs */
    rs_warning code;
    const char *message;
} rs_event;

typedef struct rs_trace rs_trace;

/* rs_trace_open starts a trace on out: the header line, with the sources of
 * profile. target and implementation name the run. */
rs_trace *rs_trace_open(FILE *out, const char *spec, const char *target, const char *implementation, unsigned profile);
/* rs_emit writes one event, numbered, if its source is in the profile.
 * Thread-safe: events are numbered and written in the order of the calls. */
void rs_emit(rs_trace *t, const rs_event *e);
/* rs_trace_before_emit installs fn, called by every rs_emit on its thread
 * before the event is numbered, outside the trace's lock (fn may emit
 * events itself). A driver that turns another channel into events (the
 * SDK's stderr lines into warnings, docs/driver-protocol.md) drains it
 * there, so that what was printed before an event comes before it in the
 * trace. NULL removes it. */
void rs_trace_before_emit(rs_trace *t, void (*fn)(void *arg), void *arg);
/* rs_trace_reports says whether the profile holds the source of events of type. */
bool rs_trace_reports(const rs_trace *t, rs_event_type type);
/* rs_trace_abort is for a process that must die now (an SDK's fatal
 * error, MEM-5): it writes the end line and flushes, and keeps the trace
 * locked so that nothing follows; the caller then exits (_exit). */
void rs_trace_abort(rs_trace *t);
/* rs_trace_close writes the end line {"end":N} and flushes. */
int rs_trace_close(rs_trace *t);
uint64_t rs_trace_events(const rs_trace *t);

/* rs_now_ns is the kit's clock: monotonic ns, starting near 1e6. Runtimes
 * time kernels on it so that `time`, `start` and `end` share one clock. */
uint64_t rs_now_ns(void);

/* rs_digest: FNV-1a 64 over buffers in order, each preceded by its length
 * as 8 little-endian bytes, as 16 lowercase hex digits (out: 17 bytes).
 * The kit's header says replayspec.trace/v2, whose digests are FNV-1a, so
 * readers judge them by it; trace v3 would name it ("digest":"fnv1a-64"). */
typedef struct { uint64_t h; } rs_digest_state;
void rs_digest_begin(rs_digest_state *d);
void rs_digest_add(rs_digest_state *d, const void *data, uint64_t n);
void rs_digest_end(const rs_digest_state *d, char out[17]);

/* The application thread the caller runs as (1, 2, ...; 0: the main
 * thread). The application sets it when a thread starts; the tool and the
 * runtime observer read it to name the thread events come from (CB-4). */
void rs_set_app_thread(uint64_t thread);
uint64_t rs_app_thread(void);

/* ---------------------------------------------------------------- driver */

typedef struct {
    const char *name, *version;
    /* capabilities: services and behaviours (spec.Capabilities), then rule
     * families; NULL-terminated. */
    const char *const *capabilities;
    unsigned profile; /* RS_PROFILE_* */
    const char *target; /* the trace header's target */
    /* run plays one spec, writing its events to t; 0 when the run held up,
     * non-zero (with a message on stderr) when the implementation broke
     * down. It is called with the trace open; the kit closes it. */
    int (*run)(const rs_spec *s, rs_trace *t, void *arg);
    void *arg;
} rs_port;

/* rs_driver_main speaks replayspec.driver/v1 on stdin/stdout and returns
 * the process exit status: 0, 1 (the run broke down; trace written), or 2
 * (the spec could not be read). */
int rs_driver_main(const rs_port *p);
/* rs_profile_name and rs_profile_parse: "black-box", "runtime", "full". */
const char *rs_profile_name(unsigned profile);
bool rs_profile_parse(const char *name, unsigned *profile);

#ifdef __cplusplus
}
#endif
#endif
