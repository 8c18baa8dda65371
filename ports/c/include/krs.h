/*
 * krs.h: an independent C implementation of the SDK side of kernel replay,
 * written from kernel-replay.txt and RULES.md. Names follow the shape of the
 * reference's C API (contexts, callback tracing, the KERNEL_REPLAY payload)
 * with a krs_ prefix; nothing of the reference's code is used.
 *
 * The SDK sits on a runtime (rt.h): it hooks queue writes there, as the
 * reference hooks the HSA queue write interceptor.
 */
#ifndef KRS_H
#define KRS_H

#include <stddef.h>
#include <stdint.h>

#include "rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses: the reference enum's values (REFERENCE.md). */
typedef enum {
    KRS_STATUS_SUCCESS = 0,
    KRS_STATUS_ERROR = 1,
    KRS_STATUS_ERROR_CONTEXT_NOT_FOUND = 2,
    KRS_STATUS_ERROR_KIND_NOT_FOUND = 4,
    KRS_STATUS_ERROR_OPERATION_NOT_FOUND = 5,
    KRS_STATUS_ERROR_AGENT_NOT_FOUND = 7,
    KRS_STATUS_ERROR_COUNTER_NOT_FOUND = 8,
    KRS_STATUS_ERROR_CONTEXT_ERROR = 9,
    KRS_STATUS_ERROR_CONTEXT_INVALID = 10,
    KRS_STATUS_ERROR_CONTEXT_NOT_STARTED = 11,
    KRS_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED = 15,
    KRS_STATUS_ERROR_CONFIGURATION_LOCKED = 16,
    KRS_STATUS_ERROR_INVALID_ARGUMENT = 19,
} krs_status_t;

typedef struct { uint64_t handle; } krs_context_id_t;

typedef union {
    uint64_t value;
    void *ptr;
} krs_user_data_t;

typedef struct {
    uint64_t internal;
    krs_user_data_t external;
    uint64_t ancestor;
} krs_correlation_id_t;

typedef struct { uint32_t x, y, z; } krs_dim3_t;

/* The kernel dispatch info: 72 bytes, as the reference's. */
typedef struct {
    uint64_t size;
    uint64_t agent_id;
    uint64_t queue_id;
    uint64_t kernel_id;
    uint64_t dispatch_id;
    uint32_t private_segment_size;
    uint32_t group_segment_size;
    krs_dim3_t workgroup_size;
    krs_dim3_t grid_size;
} krs_kernel_dispatch_info_t;

/* Callback tracing kinds and the KERNEL_REPLAY operations (API-2, API-3:
 * no SNAPSHOT or RESTORE; LAST is 3). */
typedef enum {
    KRS_CALLBACK_TRACING_NONE = 0,
    KRS_CALLBACK_TRACING_KERNEL_REPLAY = 1,
    KRS_CALLBACK_TRACING_LAST = 2,
} krs_callback_tracing_kind_t;

typedef enum {
    KRS_KERNEL_REPLAY_NONE = 0,
    KRS_KERNEL_REPLAY_CONFIG = 1,
    KRS_KERNEL_REPLAY_PASS = 2,
    KRS_KERNEL_REPLAY_LAST = 3,
} krs_kernel_replay_operation_t;

typedef enum {
    KRS_CALLBACK_PHASE_NONE = 0,
    KRS_CALLBACK_PHASE_ENTER = 1,
    KRS_CALLBACK_PHASE_EXIT = 2,
} krs_callback_phase_t;

typedef uint64_t (*krs_kernel_replay_pass_count_cb_t)(krs_kernel_dispatch_info_t dispatch_info,
                                                      krs_user_data_t user_data);
typedef int (*krs_kernel_replay_continue_cb_t)(krs_kernel_dispatch_info_t dispatch_info, uint64_t current_pass,
                                               uint64_t total_passes, krs_user_data_t user_data);
typedef krs_status_t (*krs_kernel_replay_context_cb_t)(krs_context_id_t context);

/* The payload: one flat struct (API-5), in the reference's field order
 * (API-6); size is the whole struct's size, 128 bytes. */
typedef struct {
    uint64_t size;
    krs_kernel_dispatch_info_t dispatch_info;
    uint64_t current_pass;
    uint64_t total_passes;
    krs_kernel_replay_pass_count_cb_t replay_pass_count;
    krs_kernel_replay_continue_cb_t replay_continue;
    krs_kernel_replay_context_cb_t replay_start_context;
    krs_kernel_replay_context_cb_t replay_stop_context;
} krs_callback_tracing_kernel_replay_data_t;

typedef struct {
    krs_context_id_t context_id;
    uint64_t thread_id; /* the OS thread */
    krs_correlation_id_t correlation_id;
    krs_callback_tracing_kind_t kind;
    int operation;
    krs_callback_phase_t phase;
    void *payload;
} krs_callback_tracing_record_t;

typedef void (*krs_callback_tracing_cb_t)(krs_callback_tracing_record_t record, krs_user_data_t *user_data,
                                          void *callback_args);

/* Services whose records reach the tool. */
typedef enum {
    KRS_SERVICE_KERNEL_TRACE = 1,
    KRS_SERVICE_COUNTER_COLLECTION,
    KRS_SERVICE_DEVICE_COUNTING,
    KRS_SERVICE_PC_SAMPLING,
    KRS_SERVICE_SPM,
    KRS_SERVICE_THREAD_TRACE,
} krs_service_t;

typedef struct {
    const char *name;
    uint64_t value;
} krs_counter_value_t;

typedef struct {
    krs_service_t service;
    krs_context_id_t context_id;
    uint64_t thread_id;
    krs_kernel_dispatch_info_t dispatch_info;
    const char *kernel_name;
    krs_correlation_id_t correlation_id;
    uint64_t start_timestamp, end_timestamp;
    const krs_counter_value_t *counters;
    size_t counter_count;
} krs_record_t;

typedef void (*krs_record_cb_t)(const krs_record_t *record, void *args);
/* The tool chooses a dispatch's counters, on the submitting thread; it
 * writes up to max names (the SDK keeps its own copy) and returns the count. */
typedef size_t (*krs_counter_select_cb_t)(krs_kernel_dispatch_info_t info, const char **names, size_t max,
                                          void *args);
typedef uint64_t (*krs_external_correlation_cb_t)(krs_kernel_dispatch_info_t info, uint64_t internal, void *args);

/* ---------------------------------------------------------------- the API */

/* krs_init attaches the SDK to a runtime: it hooks the runtime's
 * interception table. One SDK per process. */
krs_status_t krs_init(rt_runtime *rt);
void krs_fini(void);

krs_status_t krs_create_context(krs_context_id_t *context);
krs_status_t krs_start_context(krs_context_id_t context);
krs_status_t krs_stop_context(krs_context_id_t context);

/* KERNEL_REPLAY is an ordinary callback tracing domain (API-1). ops NULL
 * with count 0 subscribes to every operation (ACT-2). */
krs_status_t krs_configure_callback_tracing_service(krs_context_id_t context, krs_callback_tracing_kind_t kind,
                                                    const krs_kernel_replay_operation_t *operations,
                                                    size_t operation_count, krs_callback_tracing_cb_t callback,
                                                    void *callback_args);
krs_status_t krs_configure_counter_collection(krs_context_id_t context, krs_counter_select_cb_t select,
                                              krs_record_cb_t record, void *args);
krs_status_t krs_configure_kernel_trace(krs_context_id_t context, krs_record_cb_t record, void *args);
/* agent 0: every agent */
krs_status_t krs_configure_device_counting(krs_context_id_t context, uint64_t agent, const char *const *counters,
                                           size_t counter_count, krs_record_cb_t record, void *args);
krs_status_t krs_configure_pc_sampling(krs_context_id_t context, uint64_t agent, krs_record_cb_t record, void *args);
krs_status_t krs_configure_spm(krs_context_id_t context, krs_record_cb_t record, void *args);
krs_status_t krs_configure_thread_trace(krs_context_id_t context, krs_record_cb_t record, void *args);
krs_status_t krs_configure_external_correlation(krs_context_id_t context, krs_external_correlation_cb_t callback,
                                                void *args);

/* API tracing: fn is told of every runtime API call's enter and exit, on
 * the thread that makes it, with the correlation id the SDK gave the call
 * (its ancestor: the call open around it on that thread). One subscription
 * for the process (the reference configures callback tracing of a runtime
 * API domain on a context); NULL ends it. */
typedef void (*krs_api_tracing_cb_t)(rt_api_call call, krs_callback_phase_t phase, krs_correlation_id_t corr,
                                     void *args);
krs_status_t krs_configure_api_tracing(krs_api_tracing_cb_t callback, void *args);

/* Operation name and id queries (API-4). */
krs_status_t krs_query_callback_tracing_kind_operation_name(krs_callback_tracing_kind_t kind, int operation,
                                                            const char **name);
krs_status_t krs_query_callback_tracing_kind_operation_id(krs_callback_tracing_kind_t kind, const char *name,
                                                          int *operation);

/* The agent's description, as the runtime gives it (counter blocks for a
 * tool that splits counters per agent, AGT-1). */
const rt_agent *krs_query_agent(uint64_t agent_id);

/* ---------------------------------------------------------------- experimental: outside the rules */

/* A loop of more than budget passes is cut off and reported (the SDK itself
 * has no cap, CMP-4; a test harness needs one). The submit then returns
 * RT_ERR_NEVER_ENDED without completing. 0: no budget. */
void krs_experimental_set_pass_budget(uint64_t budget);

/* The localized context functions a PASS payload carries; a tool that kept
 * them from a payload could call them anywhere. Offered so that a test tool
 * can make the calls LCX-2 forbids before its first PASS. */
void krs_experimental_local_context_functions(krs_kernel_replay_context_cb_t *start,
                                              krs_kernel_replay_context_cb_t *stop);

/* A restore that fails part-way is fatal (MEM-5): the SDK calls this, then
 * aborts. A test driver uses it to close its trace first. */
typedef void (*krs_fatal_cb_t)(const char *message, void *args);
void krs_experimental_set_fatal_callback(krs_fatal_cb_t callback, void *args);

/* What the SDK says about itself: a test driver's "sdk" events. */
typedef enum {
    KRS_REPORT_DISPATCH_ID = 1, /* a dispatch id was reserved */
    KRS_REPORT_SNAPSHOT,        /* memory saved (status SUCCESS), or a snapshot that failed */
    KRS_REPORT_RESTORE,         /* memory written back before pass `pass` */
    KRS_REPORT_NEVER_ENDED,     /* the pass budget ran out */
} krs_report_kind_t;

typedef struct {
    krs_report_kind_t kind;
    krs_kernel_dispatch_info_t info;
    const char *kernel_name;
    uint64_t pass;
    uint64_t bytes;
    const rt_region *regions;
    size_t region_count;
    krs_status_t status;
    const char *message;
} krs_report_t;

typedef void (*krs_report_cb_t)(const krs_report_t *report, void *args);
void krs_experimental_set_report_callback(krs_report_cb_t callback, void *args);

/* Warnings are printed on stderr, once per process each, as one line:
 *   krs: warning [CODE] dispatch N: message
 * (" dispatch N" when about one dispatch). CODE is the trace's warning
 * code; docs/porting.md shows how a driver maps these lines to events. */

#ifdef __cplusplus
}
#endif
#endif
