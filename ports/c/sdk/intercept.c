/* The queue write interceptor: every packet batch the application writes
 * passes here, on the writing thread. A single kernel dispatch packet may
 * be replayed; anything else runs once (ACT-6). A dispatch the tool writes
 * from inside a replay window comes here too, and is a candidate like any
 * other (MEM-6, clarified 2026-12-01). */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdlib.h>

#include "internal.h"

int krs_intercept(void *arg, rt_queue *q, rt_packet *packets, size_t n) {
    (void)arg;
    /* the started contexts as this write is intercepted: the window keeps
     * them to its end (decision 12); heap, not stack: a callback may write
     * a dispatch of its own, and this runs again, nested */
    active *a = malloc(sizeof *a);
    if (a == NULL) return RT_ERR;
    krs_active_copy(a);
    int rc;
    if (a->n == 0) {
        /* nothing started: nothing to do, except that a loop begun while
         * its context was started still owns its agent (MEM-6; found by
         * replayspec's spec generator in the Go engine, then here) */
        uint64_t agent = rt_queue_agent(q);
        pthread_rwlock_t *lk = atomic_load(&krs_sdk.loops) > 0 && !krs_owns_agent(agent) ? krs_agent_lock(agent) : NULL;
        if (lk != NULL) pthread_rwlock_rdlock(lk);
        rc = rt_queue_hw_write(q, packets, n);
        if (lk != NULL) pthread_rwlock_unlock(lk);
#ifdef KRS_FAULT_TOOL_DISPATCH_NOT_CANDIDATE
    } else if (krs_in_window() && n == 1 && packets[0].type == RT_PACKET_KERNEL) {
        /* the tool's own dispatch is no candidate: no CONFIG (MEM-6 broken) */
        krs_kernel_dispatch_info_t info = krs_reserve_dispatch(q, &packets[0]);
        rc = krs_run_once(a, q, &packets[0], info, krs_capture_correlation());
#endif
#ifdef KRS_FAULT_REPLAY_MULTI_PACKET
    } else if (n > 1 && packets[0].type == RT_PACKET_KERNEL && !packets[0].from_graph && krs_replay_context(a) != NULL) {
        /* the first kernel packet of a multi-packet submission replayed */
        rc = krs_replay_dispatch(a, krs_replay_context(a), q, &packets[0]);
        if (rc == RT_OK) rc = krs_run_unreplayed(a, q, packets + 1, n - 1);
#endif
    } else if (n != 1 || packets[0].type != RT_PACKET_KERNEL || packets[0].from_graph) {
        rc = krs_run_unreplayed(a, q, packets, n);
    } else {
        const context *replay = krs_replay_context(a);
        if (replay == NULL) {
            krs_kernel_dispatch_info_t info = krs_reserve_dispatch(q, &packets[0]);
            rc = krs_run_once(a, q, &packets[0], info, krs_capture_correlation());
        } else {
            rc = krs_replay_dispatch(a, replay, q, &packets[0]);
        }
    }
    free(a);
    return rc;
}
