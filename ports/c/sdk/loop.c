/* The replay window of one candidate dispatch: CONFIG, the pass-count
 * table, the pass loop with snapshot and restore, and the single
 * completion. Written from kernel-replay.txt; rule IDs beside the code. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void deliver_callback(const context *replay, krs_correlation_id_t corr, int op, krs_callback_phase_t phase,
                             krs_callback_tracing_kernel_replay_data_t *payload, krs_user_data_t *ud) {
    if ((op == KRS_KERNEL_REPLAY_CONFIG && !replay->replay_config) || (op == KRS_KERNEL_REPLAY_PASS && !replay->replay_pass)) {
        return; /* not subscribed to this operation */
    }
    corr.external.value = 0; /* external ids belong to submits (COR-3) */
    krs_callback_tracing_record_t rec = {
        .context_id = {replay->id}, .thread_id = krs_thread_id(), .correlation_id = corr,
        .kind = KRS_CALLBACK_TRACING_KERNEL_REPLAY, .operation = op, .phase = phase, .payload = payload,
    };
    replay->replay_cb(rec, ud, replay->replay_args);
}

static void config_payload(krs_callback_tracing_kernel_replay_data_t *p, krs_kernel_dispatch_info_t info) {
    /* API-6: during CONFIG the pass fields are zero; the tool fills its two
     * callbacks at CONFIG ENTER. */
    p->size = sizeof *p; /* API-5: the whole payload */
#ifdef KRS_FAULT_PAYLOAD_SIZE_SHORT
    p->size = sizeof *p - 16; /* stops short of the local context members */
#endif
    p->dispatch_info = info;
    p->current_pass = 0;
    p->total_passes = 0;
    p->replay_start_context = NULL;
    p->replay_stop_context = NULL;
#ifdef KRS_FAULT_PASS_FIELDS_IN_CONFIG
    p->total_passes = 1;
#endif
}

static void pass_payload(krs_callback_tracing_kernel_replay_data_t *p, krs_kernel_dispatch_info_t info, uint64_t pass,
                         uint64_t total) {
    memset(p, 0, sizeof *p);
    p->size = sizeof *p;
#ifdef KRS_FAULT_PAYLOAD_SIZE_SHORT
    p->size = sizeof *p - 16;
#endif
    p->dispatch_info = info;
    p->current_pass = pass; /* PC-7: 0-based */
    p->total_passes = total; /* PC-5: 0 for an indefinite loop */
    /* API-6: the tool's two callbacks are zero during PASS. */
    p->replay_start_context = krs_local_start; /* LCX-1 */
    p->replay_stop_context = krs_local_stop;
}

/* run_pass submits one pass: the application's packet with its completion
 * left out (CMP-2), the reserved id (DID-1), the services this pass has. */
static int run_pass(const active *before, rt_queue *q, const rt_packet *p, krs_kernel_dispatch_info_t info,
                    krs_correlation_id_t corr, uint64_t pass, uint64_t first_start[2]) {
#ifdef KRS_FAULT_EXTERNAL_CORRELATION_REUSED
    static _Thread_local uint64_t reused;
    if (pass == 0) reused = krs_external_correlation(before, info, corr.internal);
    corr.external.value = reused;
#else
    corr.external.value = krs_external_correlation(before, info, corr.internal);
#endif
    static _Thread_local submission sub;
    krs_prepare(before, info, &sub);
    rt_packet pk = *p;
    pk.tag = info.dispatch_id;
    pk.profile = sub.profiled ? &sub.profile : NULL;
#ifndef KRS_FAULT_COMPLETION_EVERY_PASS
    pk.completion = NULL;
#endif
    int rc = rt_queue_hw_write(q, &pk, 1);
    if (rc != RT_OK) return rc;
#ifdef KRS_FAULT_REUSE_FIRST_PASS_TIMESTAMPS
    if (pass == 0) { first_start[0] = sub.profile.start; first_start[1] = sub.profile.end; }
    else { sub.profile.start = first_start[0]; sub.profile.end = first_start[1]; }
#else
    (void)pass;
    (void)first_start;
#endif
    krs_deliver(&sub, info, p->kernel, corr); /* CB-4: on this thread, inside the pass */
    return RT_OK;
}

/* complete fires the application's completion once, after the loop: one
 * barrier packet carrying its signal, behind the passes (CMP-1, CMP-2). */
static int complete(rt_queue *q, const rt_packet *p) {
    if (p->completion == NULL) return RT_OK;
    rt_packet barrier = {.type = RT_PACKET_BARRIER, .completion = p->completion};
    return rt_queue_hw_write(q, &barrier, 1);
}

/* MEM-6: a loop owns its agent: no other dispatch runs there until it ends
 * (the planted fault NO_AGENT_LOCK takes no lock). */
static void lock_agent(window *w, pthread_rwlock_t *lk) {
    (void)w; (void)lk;
#ifdef KRS_FAULT_REPLAY_REENTRANT
    if (krs_owns_agent(w->agent)) return; /* it holds the lock already */
#endif
#ifndef KRS_FAULT_NO_AGENT_LOCK
    atomic_fetch_add(&krs_sdk.loops, 1);
    pthread_rwlock_wrlock(lk); /* a nested window waits for another thread's loop there */
    w->holds = true;
#endif
}

static void unlock_agent(window *w, pthread_rwlock_t *lk) {
    (void)w; (void)lk;
#ifndef KRS_FAULT_NO_AGENT_LOCK
    if (!w->holds) return;
    w->holds = false;
    pthread_rwlock_unlock(lk);
    atomic_fetch_sub(&krs_sdk.loops, 1);
#endif
}

int krs_replay_dispatch(const active *a, const context *replay, rt_queue *q, const rt_packet *p) {
    krs_kernel_dispatch_info_t info = krs_reserve_dispatch(q, p); /* DID-1: before CONFIG */
    krs_correlation_id_t corr = krs_capture_correlation();        /* COR-1: once, as the window opens */
    /* MEM-6 (clarified 2026-12-01): the window opens, nested in any this
     * thread has open; one of them on this agent makes the SDK decline to
     * replay, so that it never waits for its own window. */
    bool reentrant = krs_window_on(info.agent_id);
#ifdef KRS_FAULT_REPLAY_REENTRANT
    reentrant = false; /* a window of its own on an agent its thread holds */
#endif
#ifdef KRS_FAULT_DECLINE_NESTED
    reentrant = krs_in_window(); /* declined on any agent */
#endif
    window *w = krs_window_open(info.dispatch_id, info.agent_id);
    if (w == NULL) return RT_ERR;
    krs_user_data_t ud = {0};                                     /* UD-1: one per sequence */
    krs_callback_tracing_kernel_replay_data_t cfg;
    memset(&cfg, 0, sizeof cfg);
    config_payload(&cfg, info);

    /* CB-1: CONFIG ENTER opens the window; the tool installs its callbacks. */
    deliver_callback(replay, corr, KRS_KERNEL_REPLAY_CONFIG, KRS_CALLBACK_PHASE_ENTER, &cfg, &ud);
    krs_kernel_replay_pass_count_cb_t pass_count = cfg.replay_pass_count;
    krs_kernel_replay_continue_cb_t cont = cfg.replay_continue;

    /* The pass-count table (PC-1..PC-6); CB-3: called once, after CONFIG
     * ENTER returned. */
    bool replayed = false, indefinite = false;
    uint64_t n = 0;
    if (pass_count != NULL) {
        n = pass_count(info, ud);
#ifdef KRS_FAULT_PASS_COUNT_CALLED_TWICE
        n = pass_count(info, ud);
#endif
#ifdef KRS_FAULT_REPLAY_SINGLE_PASS
        replayed = n >= 1;
#else
        replayed = n > 1; /* PC-2: one pass needs no snapshot and no restore */
#endif
        if (n == 0 && cont != NULL) replayed = indefinite = true; /* PC-5 */
        if (n == 0 && cont == NULL) {
            /* PC-6: refused with a warning, not an error; run once */
            krs_warn(warn_pass_count_zero, info.dispatch_id,
                     "replay_pass_count returned 0 without replay_continue; the dispatch is not replayed");
#ifdef KRS_FAULT_REPLAY_ZERO_WITHOUT_CONTINUE
            replayed = indefinite = true;
#endif
        }
    }

    if (replayed && reentrant) {
        /* MEM-6: it runs once, inside the outer pass; the outer loop's next
         * restore undoes what it writes there. */
        krs_warn(warn_reentrant_dispatch, info.dispatch_id,
                 "a dispatch written inside a replay window on its own agent %llu is not replayed; it runs once, "
                 "inside the window's pass", (unsigned long long)info.agent_id);
        replayed = false;
    }
    if (!replayed) {
#ifdef KRS_FAULT_SNAPSHOT_WHEN_NOT_REPLAYED
        char e[64];
        krs_snapshot_free(krs_snapshot(info.agent_id, info, p->kernel, e, sizeof e));
#endif
        /* CB-1 (ref): EXIT follows ENTER directly, then the ordinary run. */
        config_payload(&cfg, info);
        deliver_callback(replay, corr, KRS_KERNEL_REPLAY_CONFIG, KRS_CALLBACK_PHASE_EXIT, &cfg, &ud);
        krs_window_close();
        return krs_run_once(a, q, p, info, corr);
    }

    /* MEM-6: no other dispatch runs on this agent while the loop replays. */
    pthread_rwlock_t *lk = krs_agent_lock(info.agent_id);
    lock_agent(w, lk);
    /* MEM-4: drain, then save the agent's tracked device memory. */
    rt_drain_agent(krs_sdk.rt, info.agent_id);
    char err[256];
    snapshot *snap = krs_snapshot(info.agent_id, info, p->kernel, err, sizeof err);
    if (snap == NULL) {
        /* MEM-5: warn, and run the dispatch once without replay. */
        unlock_agent(w, lk);
        krs_warn(warn_snapshot_incomplete, info.dispatch_id,
                 "the memory snapshot could not be completed; the dispatch runs once without replay (%s)", err);
        config_payload(&cfg, info);
        deliver_callback(replay, corr, KRS_KERNEL_REPLAY_CONFIG, KRS_CALLBACK_PHASE_EXIT, &cfg, &ud);
        krs_window_close();
        return krs_run_once(a, q, p, info, corr);
    }

    krs_loop_begin(w, a); /* LCX-4, LCX-7: the contexts active as the loop begins */
    uint64_t total = indefinite ? 0 : n;
#ifdef KRS_FAULT_INDEFINITE_TOTAL_NON_ZERO
    if (indefinite) total = 1;
#endif
    uint64_t first_times[2] = {0, 0};
    bool ended = false;
    int rc = RT_OK;
    krs_user_data_t pass_ud = ud;
    for (uint64_t pass = 0; !ended; pass++) {
#ifndef KRS_FAULT_USER_DATA_NOT_RESEEDED
        pass_ud = ud; /* UD-2: every pass starts from the CONFIG value */
#endif
#ifdef KRS_FAULT_CORRELATION_PER_PASS
        if (pass > 0) corr.internal = atomic_fetch_add(&krs_sdk.correlation_ids, 1) + 1;
#endif
#ifdef KRS_FAULT_DISPATCH_ID_PER_PASS
        if (pass > 0) info = krs_reserve_dispatch(q, p);
#endif
        krs_callback_tracing_kernel_replay_data_t pl;
        pass_payload(&pl, info, pass, total);
        loop_state *ls = &w->loop;
        ls->in_pass_enter = true; /* LCX-2 */
        deliver_callback(replay, corr, KRS_KERNEL_REPLAY_PASS, KRS_CALLBACK_PHASE_ENTER, &pl, &pass_ud);
        ls->in_pass_enter = false;
        rc = run_pass(a, q, p, info, corr, pass, first_times);
#ifdef KRS_FAULT_USER_DATA_WRITE_LOST
        pass_ud = ud; /* what the tool wrote in PASS ENTER is lost before its EXIT */
#endif
        if (rc != RT_OK) break;
        bool last_fixed = !indefinite && pass + 1 >= n;
#ifdef KRS_FAULT_SKIP_LAST_PASS_EXIT
        bool skip_exit = last_fixed;
#else
        bool skip_exit = false;
#endif
        pass_payload(&pl, info, pass, total);
        /* CONT-4: PASS EXIT for every executed pass */
        if (!skip_exit) deliver_callback(replay, corr, KRS_KERNEL_REPLAY_PASS, KRS_CALLBACK_PHASE_EXIT, &pl, &pass_ud);

        /* CONT-1: continue is consulted after the pass and its EXIT. A
         * fixed loop never asks after its last pass (CONT-2); an
         * indefinite one asks after every pass (CONT-3). */
        if (last_fixed) {
            ended = true;
#ifdef KRS_FAULT_CONTINUE_AFTER_LAST_PASS
            if (cont != NULL) (void)cont(info, pass, total, pass_ud);
#endif
        } else if (cont != NULL) {
            int more = cont(info, pass, total, pass_ud);
#ifdef KRS_FAULT_IGNORE_CONTINUE
            if (!indefinite) more = 1;
#endif
            ended = more == 0; /* PC-4: it can end a fixed loop early, never extend it */
        }
        if (!ended && krs_sdk.pass_budget != 0 && pass + 1 >= krs_sdk.pass_budget) {
            /* CMP-4: the SDK itself never gives up; the test harness's budget
             * does, and then the loop never ends: no CONFIG EXIT, no
             * completion. */
            krs_report(&(krs_report_t){.kind = KRS_REPORT_NEVER_ENDED, .info = info, .kernel_name = p->kernel, .pass = pass + 1});
            krs_loop_end(w);
            krs_snapshot_free(snap);
            unlock_agent(w, lk);
            krs_window_close();
            return RT_ERR_NEVER_ENDED;
        }
#ifdef KRS_FAULT_RESTORE_AFTER_LAST_PASS
        krs_restore(snap, info, p->kernel, pass + 1);
#else
        /* MEM-3: the loop breaks before restore, so the last pass's memory stays. */
#ifndef KRS_FAULT_SKIP_RESTORE
        if (!ended) krs_restore(snap, info, p->kernel, pass + 1); /* MEM-2 */
#endif
#endif
    }
    krs_loop_end(w); /* LCX-4: every context's pre-loop state holds again */
    krs_snapshot_free(snap);
    if (rc != RT_OK) {
        unlock_agent(w, lk);
        krs_window_close();
        return rc;
    }
#ifdef KRS_FAULT_COMPLETION_BEFORE_CONFIG_EXIT
    rc = complete(q, p);
    config_payload(&cfg, info);
    deliver_callback(replay, corr, KRS_KERNEL_REPLAY_CONFIG, KRS_CALLBACK_PHASE_EXIT, &cfg, &ud);
#elif defined(KRS_FAULT_COMPLETION_EVERY_PASS)
    config_payload(&cfg, info);
    deliver_callback(replay, corr, KRS_KERNEL_REPLAY_CONFIG, KRS_CALLBACK_PHASE_EXIT, &cfg, &ud);
    (void)complete; /* every pass carried the completion already */
#else
    /* CB-1 (ref), CMP-2 (ref): CONFIG EXIT closes the window after the last
     * pass, then the application's completion fires once. */
    config_payload(&cfg, info);
    deliver_callback(replay, corr, KRS_KERNEL_REPLAY_CONFIG, KRS_CALLBACK_PHASE_EXIT, &cfg, &ud);
    rc = complete(q, p);
#endif
    unlock_agent(w, lk);
    krs_window_close();
    return rc;
}
