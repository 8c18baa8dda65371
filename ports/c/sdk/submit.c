/* A submit without replay: the dispatch id and correlation ids of each
 * kernel packet, and the submission run once, plain (no replay asked),
 * several packets or a graph (ACT-6), or the tool's own from a callback. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

/* DID-1, DID-3: one id per logical dispatch, reserved before CONFIG; the
 * counter advances exactly once. */
krs_kernel_dispatch_info_t krs_reserve_dispatch(rt_queue *q, const rt_packet *p) {
    krs_kernel_dispatch_info_t info = {
        .size = sizeof(krs_kernel_dispatch_info_t),
        .agent_id = rt_queue_agent(q),
        .queue_id = rt_queue_id(q),
        .kernel_id = krs_kernel_id(p->kernel),
        .dispatch_id = atomic_fetch_add(&krs_sdk.dispatch_ids, 1) + 1,
        .workgroup_size = {p->workgroup[0], p->workgroup[1], p->workgroup[2]},
        .grid_size = {p->grid[0], p->grid[1], p->grid[2]},
    };
#ifdef KRS_FAULT_DISPATCH_INFO_GRID
    info.grid_size.x = p->workgroup[0]; /* the workgroup where the grid belongs */
#endif
    krs_report(&(krs_report_t){.kind = KRS_REPORT_DISPATCH_ID, .info = info, .kernel_name = p->kernel});
    return info;
}

/* COR-3: each submit asks the tool's external correlation callback; the
 * first started context that has one answers. */
uint64_t krs_external_correlation(const active *a, krs_kernel_dispatch_info_t info, uint64_t internal) {
    for (size_t i = 0; i < a->n; i++) {
        if (a->ctx[i].external) return a->ctx[i].external_cb(info, internal, a->ctx[i].external_args);
    }
    return 0;
}

pthread_rwlock_t *krs_agent_lock(uint64_t agent) {
    return agent >= 1 && agent <= krs_sdk.nagents ? &krs_sdk.agent_locks[agent - 1] : NULL;
}

/* write_on_agent writes packets while no other thread's loop holds the
 * agent (MEM-6: it waits for the loop's end). When a window of this thread
 * holds it, the write goes at once, inside that loop's pass: waiting would
 * wait for ever (MEM-6, clarified 2026-12-01: the SDK never deadlocks on
 * its own window), and the loop's next restore undoes what it writes. */
static int write_on_agent(rt_queue *q, rt_packet *packets, size_t n) {
    uint64_t agent = rt_queue_agent(q);
    pthread_rwlock_t *lk = krs_owns_agent(agent) ? NULL : krs_agent_lock(agent);
#ifdef KRS_FAULT_NO_AGENT_LOCK
    lk = NULL;
#endif
    if (lk != NULL) pthread_rwlock_rdlock(lk);
    int rc = rt_queue_hw_write(q, packets, n);
    if (lk != NULL) pthread_rwlock_unlock(lk);
    return rc;
}

/* krs_run_once is the ordinary single-dispatch path: the application's
 * packet, its completion signal included, with the reserved id (DID-1),
 * while no loop replays on the agent (MEM-6). Inside a window (the tool's
 * own dispatch) it gets an empty window, so that no loop's override
 * reaches it (LCX-6). */
int krs_run_once(const active *a, rt_queue *q, const rt_packet *p, krs_kernel_dispatch_info_t info,
                 krs_correlation_id_t corr) {
    bool inside = krs_in_window();
    if (inside && krs_window_open(info.dispatch_id, 0) == NULL) return RT_ERR;
    corr.external.value = krs_external_correlation(a, info, corr.internal);
    submission *sub = malloc(sizeof *sub); /* heap: the tool may nest dispatches in its callbacks */
    if (sub == NULL) {
        if (inside) krs_window_close();
        return RT_ERR;
    }
    krs_prepare(a, info, sub);
    rt_packet pk = *p;
    pk.tag = info.dispatch_id;
    pk.profile = sub->profiled ? &sub->profile : NULL;
    int rc = write_on_agent(q, &pk, 1);
    if (rc == RT_OK) krs_deliver(sub, info, p->kernel, corr);
    free(sub);
    if (inside) krs_window_close();
    return rc;
}

/* prepare_each gives each kernel packet of a submission that runs once its
 * own dispatch id (DID-1), correlation ids (COR-1, COR-3) and services,
 * tagged on the copy in out; other packets are copied as they are. */
static void prepare_each(const active *a, rt_queue *q, const rt_packet *packets, size_t n, rt_packet *out,
                         submission *subs, krs_kernel_dispatch_info_t *infos, krs_correlation_id_t *corrs) {
    for (size_t i = 0; i < n; i++) {
        out[i] = packets[i];
        if (out[i].type != RT_PACKET_KERNEL) continue;
        infos[i] = krs_reserve_dispatch(q, &out[i]);
        corrs[i] = krs_capture_correlation();
        corrs[i].external.value = krs_external_correlation(a, infos[i], corrs[i].internal);
        krs_prepare(a, infos[i], &subs[i]);
        out[i].tag = infos[i].dispatch_id;
        out[i].profile = subs[i].profiled ? &subs[i].profile : NULL;
    }
}

/* ACT-6: a submission of several packets, or a graph launch, runs once;
 * every kernel packet keeps its own id and its ordinary services (inside a
 * window, with no loop's override: LCX-6). */
int krs_run_unreplayed(const active *a, rt_queue *q, rt_packet *packets, size_t n) {
    if (krs_replay_context(a) != NULL) {
        bool graph = false;
        for (size_t i = 0; i < n; i++) graph = graph || packets[i].from_graph;
        if (graph) krs_warn(warn_graph_launch, 0, "graph launches are not replayed; this one runs once");
        else krs_warn(warn_multi_packet, 0, "only a submission of exactly one kernel dispatch packet is replayed; this one of %zu packets runs once", n);
    }
    bool inside = krs_in_window();
    rt_packet *out = calloc(n + 1, sizeof *out);
    submission *subs = calloc(n + 1, sizeof *subs); /* heap: too big for the stack, and callbacks may nest */
    krs_kernel_dispatch_info_t *infos = calloc(n + 1, sizeof *infos);
    krs_correlation_id_t *corrs = calloc(n + 1, sizeof *corrs);
    int rc = RT_ERR;
    if (out == NULL || subs == NULL || infos == NULL || corrs == NULL) goto done;
    if (inside && krs_window_open(0, 0) == NULL) goto done;
    prepare_each(a, q, packets, n, out, subs, infos, corrs);
    rc = write_on_agent(q, out, n);
    for (size_t i = 0; rc == RT_OK && i < n; i++) {
        if (out[i].type == RT_PACKET_KERNEL) krs_deliver(&subs[i], infos[i], out[i].kernel, corrs[i]);
    }
    if (inside) krs_window_close();
done:
    free(out);
    free(subs);
    free(infos);
    free(corrs);
    return rc;
}
