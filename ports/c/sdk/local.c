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

static _Thread_local window windows[max_windows];
static _Thread_local int depth;
#ifdef KRS_FAULT_LOCAL_TOGGLE_LEAKS
static _Thread_local int8_t leaked[max_contexts];
#endif

window *krs_window_open(uint64_t dispatch, uint64_t agent) {
    if (depth == max_windows) return NULL;
    window *w = &windows[depth++];
    memset(w, 0, sizeof *w);
    w->dispatch = dispatch;
    w->agent = agent;
    return w;
}

void krs_window_close(void) {
    if (depth > 0) depth--;
}

bool krs_in_window(void) { return depth > 0; }

bool krs_window_on(uint64_t agent) {
    for (int i = 0; i < depth; i++) {
        if (windows[i].agent != 0 && windows[i].agent == agent) return true;
    }
    return false;
}

bool krs_owns_agent(uint64_t agent) {
    for (int i = 0; i < depth; i++) {
        if (windows[i].holds && windows[i].agent == agent) return true;
    }
    return false;
}

loop_state *krs_loop(void) { return depth > 0 && windows[depth - 1].loop.in_loop ? &windows[depth - 1].loop : NULL; }

void krs_loop_begin(window *w, const active *before) {
    w->loop.in_loop = true;
    w->loop.in_pass_enter = false;
    w->loop.before = before;
    memset(w->loop.override, 0, sizeof w->loop.override);
}

void krs_loop_end(window *w) {
#ifdef KRS_FAULT_LOCAL_TOGGLE_LEAKS
    memcpy(leaked, w->loop.override, sizeof leaked);
#endif
    w->loop.in_loop = false;
    w->loop.in_pass_enter = false;
}

static bool active_before(const loop_state *loop, uint64_t id) {
    for (size_t i = 0; i < loop->before->n; i++) {
        if (loop->before->ctx[i].id == id) return true;
    }
    return false;
}

/* toggle masks ctx in or out of the loop of the thread's innermost window. */
static krs_status_t toggle(krs_context_id_t ctx, bool on) {
    loop_state *loop = krs_loop();
#ifdef KRS_FAULT_LOCAL_TOGGLE_ANYWHERE
    if (loop == NULL) return KRS_STATUS_SUCCESS;
#else
    if (loop == NULL || !loop->in_pass_enter) return KRS_STATUS_ERROR_CONTEXT_ERROR; /* LCX-2: nothing recorded */
#endif
    pthread_mutex_lock(&krs_sdk.mu);
    bool exists = krs_context_find(ctx.handle) != NULL;
    pthread_mutex_unlock(&krs_sdk.mu);
    if (!exists) return KRS_STATUS_ERROR_CONTEXT_NOT_FOUND;
    /* LCX-7 (clarified 2026-11-30): a context not active when the loop
     * began can be neither started nor stopped locally. */
#ifdef KRS_FAULT_LOCAL_START_NOT_STARTED_ALLOWED
    if (!active_before(loop, ctx.handle) && !on) return KRS_STATUS_ERROR_CONTEXT_NOT_STARTED;
#else
    if (!active_before(loop, ctx.handle)) return KRS_STATUS_ERROR_CONTEXT_NOT_STARTED;
#endif
    /* LCX-3: sticky until toggled again in this loop; LCX-7: within a pass
     * the last call wins. */
    loop->override[ctx.handle - 1] = on ? 1 : -1;
    return KRS_STATUS_SUCCESS;
}

krs_status_t krs_local_start(krs_context_id_t ctx) { return toggle(ctx, true); }
krs_status_t krs_local_stop(krs_context_id_t ctx) { return toggle(ctx, false); }

bool krs_participates(krs_service_t svc, uint64_t ctx) {
    /* inside a window: a pass of the innermost window's loop, or a
     * submission that runs once there, which no override reaches (LCX-6) */
    const loop_state *loop = krs_loop();
    if (depth > 0 && loop == NULL) return true;
#ifdef KRS_FAULT_LOCAL_TOGGLE_LEAKS
    const int8_t *mask = loop != NULL ? loop->override : leaked;
#else
    if (loop == NULL) return true; /* LCX-4, LCX-6: outside a loop nothing is masked */
    const int8_t *mask = loop->override;
#endif
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
