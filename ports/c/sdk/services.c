/* Which services take part in a submit, and their records. Asked on the
 * submitting thread (CB-4), with the thread's local mask (SVC-1, SVC-2)
 * and the combination limits (SVC-3). */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <string.h>

#include "internal.h"

static bool covers(uint64_t configured, uint64_t agent) { return configured == 0 || configured == agent; }

static void add(submission *sub, krs_service_t svc, const context *c) {
    service_use *u = &sub->use[sub->n++];
    u->svc = svc;
    u->ctx = c;
    u->ncounters = 0;
}

static void drop(submission *sub, krs_service_t svc) {
    size_t k = 0;
    for (size_t i = 0; i < sub->n; i++) {
        if (sub->use[i].svc != svc) sub->use[k++] = sub->use[i];
    }
    sub->n = k;
}

static bool list_has(const char *const *list, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], name) == 0) return true;
    }
    return false;
}

void krs_prepare(const active *a, krs_kernel_dispatch_info_t info, submission *sub) {
    memset(sub, 0, sizeof *sub);
    bool counters = false, pcs = false, spm = false, att = false;
    const rt_agent *ag = rt_agent_by_id(krs_sdk.rt, info.agent_id);
    const char *collecting[RT_MAX_COUNTERS]; /* the dispatch counters of this pass so far */
    size_t ncollecting = 0;
    for (size_t i = 0; i < a->n; i++) {
        const context *c = &a->ctx[i];
        if (c->counters && krs_participates(KRS_SERVICE_COUNTER_COLLECTION, c->id)) {
            const char *names[RT_MAX_COUNTERS];
            size_t k = c->select(info, names, RT_MAX_COUNTERS, c->counter_sink.args);
            if (k > RT_MAX_COUNTERS) k = RT_MAX_COUNTERS;
            if (k > RT_MAX_COUNTERS - ncollecting) k = RT_MAX_COUNTERS - ncollecting;
            if (k > 0) {
                /* Two contexts' dispatch counters that together need two
                 * passes cannot share this one: the later context is left
                 * out of it, as SVC-3 leaves the second service out
                 * (decision 17.9 of docs/decisions.md). */
                memcpy(collecting + ncollecting, names, k * sizeof names[0]);
                int passes = ag != NULL ? rt_counter_passes(ag, collecting, ncollecting + k) : 1;
                if (passes > 1) {
                    krs_warn(warn_service_conflict, info.dispatch_id,
                             "counter_collection of context %llu needs another pass beside the counters already "
                             "collected; it is left out", (unsigned long long)c->id);
                } else {
                    ncollecting += k;
                    add(sub, KRS_SERVICE_COUNTER_COLLECTION, c);
                    service_use *u = &sub->use[sub->n - 1];
                    memcpy(u->counters, names, k * sizeof names[0]);
                    u->ncounters = k;
                    counters = true;
                }
            }
        }
        if (c->kernel_trace && krs_participates(KRS_SERVICE_KERNEL_TRACE, c->id)) add(sub, KRS_SERVICE_KERNEL_TRACE, c);
        if (c->device_counting && covers(c->device_agent, info.agent_id) &&
            krs_participates(KRS_SERVICE_DEVICE_COUNTING, c->id)) {
            /* Configured for every agent, it counts on each what that agent
             * has (decision 17.7), as the tool drops the dispatch counters an
             * agent lacks (AGT-1); nothing to count, no record. */
            service_use u = {.svc = KRS_SERVICE_DEVICE_COUNTING, .ctx = c};
            for (size_t k = 0; k < c->ndevice_counters && u.ncounters < RT_MAX_COUNTERS; k++) {
                if (ag != NULL && rt_agent_has_counter(ag, c->device_counters[k])) u.counters[u.ncounters++] = c->device_counters[k];
            }
            if (u.ncounters > 0) sub->use[sub->n++] = u;
        }
        if (c->pc_sampling && covers(c->pc_agent, info.agent_id) && krs_participates(KRS_SERVICE_PC_SAMPLING, c->id)) {
            add(sub, KRS_SERVICE_PC_SAMPLING, c);
            pcs = true;
        }
        if (c->spm && krs_participates(KRS_SERVICE_SPM, c->id)) {
            add(sub, KRS_SERVICE_SPM, c);
            spm = true;
        }
        if (c->thread_trace && krs_participates(KRS_SERVICE_THREAD_TRACE, c->id)) {
            add(sub, KRS_SERVICE_THREAD_TRACE, c);
            att = true;
        }
    }
    if (sub->n == 0) return;
    /* SVC-3 (decision 1 of docs/decisions.md): dispatch counters and PC
     * sampling cannot share a pass on MI2xx/MI3xx, thread trace and SPM
     * nowhere; warn once and leave the second service out. */
    if (counters && pcs && ag != NULL && ag->data_center) {
        krs_warn(warn_service_conflict, info.dispatch_id,
                 "counter_collection and pc_sampling cannot share a pass on %s; pc_sampling is left out", ag->arch);
        drop(sub, KRS_SERVICE_PC_SAMPLING);
    }
    if (att && spm) {
        krs_warn(warn_service_conflict, info.dispatch_id,
                 "thread_trace and spm cannot share a pass; spm is left out");
        drop(sub, KRS_SERVICE_SPM);
    }
    sub->profiled = true;
    for (size_t i = 0; i < sub->n; i++) {
        /* device counting goes to the agent's own session, not the
         * dispatch's registers (decision 17.7) */
        bool device = sub->use[i].svc == KRS_SERVICE_DEVICE_COUNTING;
        const char **list = device ? sub->profile.device : sub->profile.counters;
        size_t *n = device ? &sub->profile.ndevice : &sub->profile.ncounters;
        for (size_t k = 0; k < sub->use[i].ncounters; k++) {
            const char *name = sub->use[i].counters[k];
            if (!list_has(list, *n, name) && *n < RT_MAX_COUNTERS) list[(*n)++] = name;
        }
    }
}

static uint64_t value_of(const rt_profile *p, bool device, const char *name) {
    const char *const *list = device ? p->device : p->counters;
    const uint64_t *values = device ? p->device_values : p->values;
    size_t n = device ? p->ndevice : p->ncounters;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], name) == 0) return values[i];
    }
    return 0;
}

void krs_deliver(const submission *sub, krs_kernel_dispatch_info_t info, const char *kernel, krs_correlation_id_t corr) {
    uint64_t start = sub->profile.start, end = sub->profile.end;
    for (size_t i = 0; i < sub->n; i++) {
        const service_use *u = &sub->use[i];
        krs_counter_value_t vals[RT_MAX_COUNTERS];
        size_t nv = 0;
        const record_sink *sink = NULL;
        uint64_t span = end > start ? end - start : 0;
        switch (u->svc) {
        case KRS_SERVICE_COUNTER_COLLECTION:
        case KRS_SERVICE_DEVICE_COUNTING:
            for (size_t k = 0; k < u->ncounters; k++) {
                vals[nv++] = (krs_counter_value_t){u->counters[k],
                                                   value_of(&sub->profile, u->svc == KRS_SERVICE_DEVICE_COUNTING, u->counters[k])};
            }
            sink = u->svc == KRS_SERVICE_COUNTER_COLLECTION ? &u->ctx->counter_sink : &u->ctx->device_sink;
            break;
        case KRS_SERVICE_KERNEL_TRACE:
            sink = &u->ctx->trace_sink;
            break;
        case KRS_SERVICE_PC_SAMPLING:
            vals[nv++] = (krs_counter_value_t){"pc_samples", span / 64 + 1};
            sink = &u->ctx->pc_sink;
            break;
        case KRS_SERVICE_SPM:
            vals[nv++] = (krs_counter_value_t){"spm_samples", span / 256 + 1};
            sink = &u->ctx->spm_sink;
            break;
        case KRS_SERVICE_THREAD_TRACE:
            vals[nv++] = (krs_counter_value_t){"att_bytes", 4096 * (span / 512 + 1)};
            sink = &u->ctx->att_sink;
            break;
        }
        krs_record_t r = {
            .service = u->svc, .context_id = {u->ctx->id}, .thread_id = krs_thread_id(), .dispatch_info = info,
            .kernel_name = kernel, .correlation_id = corr, .start_timestamp = start, .end_timestamp = end,
            .counters = nv > 0 ? vals : NULL, .counter_count = nv,
        };
        sink->record(&r, sink->args);
    }
}
