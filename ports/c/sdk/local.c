/* Localized context control (LCX-1..7, SVC-1, SVC-2): a per-thread,
 * per-loop mask over the contexts that were active when the loop began. It
 * never touches global state (LCX-5). */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <string.h>

#include "internal.h"

static _Thread_local loop_state loop;
#ifdef KRS_FAULT_LOCAL_TOGGLE_LEAKS
static _Thread_local int8_t leaked[max_contexts];
#endif

loop_state *krs_loop(void) { return &loop; }

static _Thread_local window_state window;
window_state *krs_window(void) { return &window; }

void krs_loop_begin(const active *before) {
    loop.in_loop = true;
    loop.in_pass_enter = false;
    loop.before = *before;
    memset(loop.override, 0, sizeof loop.override);
}

void krs_loop_end(void) {
#ifdef KRS_FAULT_LOCAL_TOGGLE_LEAKS
    memcpy(leaked, loop.override, sizeof leaked);
#endif
    loop.in_loop = false;
    loop.in_pass_enter = false;
}

static bool active_before(uint64_t id) {
    for (size_t i = 0; i < loop.before.n; i++) {
        if (loop.before.ctx[i].id == id) return true;
    }
    return false;
}

static krs_status_t toggle(krs_context_id_t ctx, bool on) {
#ifdef KRS_FAULT_LOCAL_TOGGLE_ANYWHERE
    if (!loop.in_loop) return KRS_STATUS_SUCCESS;
#else
    if (!loop.in_loop || !loop.in_pass_enter) return KRS_STATUS_ERROR_CONTEXT_ERROR; /* LCX-2: nothing recorded */
#endif
    pthread_mutex_lock(&krs_sdk.mu);
    bool exists = krs_context_find(ctx.handle) != NULL;
    pthread_mutex_unlock(&krs_sdk.mu);
    if (!exists) return KRS_STATUS_ERROR_CONTEXT_NOT_FOUND;
    /* LCX-7 (clarified 2026-11-30): a context not active when the loop
     * began can be neither started nor stopped locally. */
#ifdef KRS_FAULT_LOCAL_START_NOT_STARTED_ALLOWED
    if (!active_before(ctx.handle) && !on) return KRS_STATUS_ERROR_CONTEXT_NOT_STARTED;
#else
    if (!active_before(ctx.handle)) return KRS_STATUS_ERROR_CONTEXT_NOT_STARTED;
#endif
    /* LCX-3: sticky until toggled again in this loop; LCX-7: within a pass
     * the last call wins. */
    loop.override[ctx.handle - 1] = on ? 1 : -1;
    return KRS_STATUS_SUCCESS;
}

krs_status_t krs_local_start(krs_context_id_t ctx) { return toggle(ctx, true); }
krs_status_t krs_local_stop(krs_context_id_t ctx) { return toggle(ctx, false); }

bool krs_participates(krs_service_t svc, uint64_t ctx) {
    const int8_t *mask = loop.override;
#ifdef KRS_FAULT_LOCAL_TOGGLE_LEAKS
    if (!loop.in_loop) mask = leaked;
#else
    if (!loop.in_loop) return true; /* LCX-4, LCX-6: outside a loop nothing is masked */
#endif
    if (window.ignore_override) return true; /* LCX-6: a dispatch outside the loop, on its thread */
    if (ctx == 0 || ctx > max_contexts) return true;
    int8_t o = mask[ctx - 1];
    switch (svc) {
    case KRS_SERVICE_PC_SAMPLING:
    case KRS_SERVICE_DEVICE_COUNTING:
#ifdef KRS_FAULT_PC_SAMPLING_HONOURS_STOP
        return o >= 0;
#else
        return true; /* SVC-2: agent-wide, they ignore local toggles */
#endif
    case KRS_SERVICE_KERNEL_TRACE:
    case KRS_SERVICE_THREAD_TRACE:
        /* SVC-1 (clarified 2026-11-30): they skip a pass while their context
         * is locally stopped; a later local start ends the stop. A start
         * cannot make them collect where they would not without an
         * override: only contexts active at loop start can be toggled. */
        return o >= 0;
    default: /* counters and SPM honour both a stop and a start */
        return o >= 0;
    }
}
