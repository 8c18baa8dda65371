/* The replay allocation tracker and snapshot/restore (MEM-1..5, ACT-4).
 * What is saved: coarse-grained device allocations made while the tracker
 * is on, owned by the dispatch's agent. Host, fine-grained and
 * kernel-argument memory are not (MEM-4). A region freed, or reallocated,
 * since the snapshot is skipped on restore. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

void krs_track(void *arg, const rt_alloc *a, bool freed, rt_alloc_fn then, void *then_arg) {
    (void)arg;
    pthread_mutex_lock(&krs_sdk.mu);
    if (!krs_sdk.tracking) { /* ACT-4: no replay configured, no tracking work */
    } else if (freed) {
        for (tracked **pp = &krs_sdk.allocations; *pp != NULL; pp = &(*pp)->next) {
            if ((*pp)->a.handle == a->handle) {
                tracked *t = *pp;
                *pp = t->next;
                free(t);
                break;
            }
        }
#ifdef KRS_FAULT_SNAPSHOT_UNSAVED_KINDS
    } else {
#else
    } else if (a->kind == RT_MEM_DEVICE) {
#endif
        tracked *t = calloc(1, sizeof *t);
        if (t != NULL) {
            t->a = *a;
            t->generation = ++krs_sdk.generation;
            t->next = krs_sdk.allocations;
            krs_sdk.allocations = t;
        }
    }
    /* The record of the change, still locked: a snapshot or restore on
     * another thread lists the allocation only after its app_alloc, and
     * stops listing a freed one only after its app_free (MEM-4; found under
     * free threads, gen-202997). */
    if (then != NULL) then(then_arg, a);
    pthread_mutex_unlock(&krs_sdk.mu);
}

struct snapshot {
    uint64_t agent, bytes;
    size_t n;
    rt_alloc *regions;
    uint64_t *generations;
    void **copies;
};

void krs_snapshot_free(snapshot *s) {
    if (s == NULL) return;
    for (size_t i = 0; i < s->n; i++) free(s->copies[i]);
    rt_staging_release(krs_sdk.rt, s->agent, s->bytes);
    free(s->copies);
    free(s->regions);
    free(s->generations);
    free(s);
}

/* report_copied reports a snapshot or restore from inside the runtime's
 * copy (rt_copied_fn). */
static void report_copied(void *arg) { krs_report(arg); }

static void report_failure(krs_kernel_dispatch_info_t info, const char *kernel, const char *msg) {
    krs_report(&(krs_report_t){.kind = KRS_REPORT_SNAPSHOT, .info = info, .kernel_name = kernel,
                               .status = KRS_STATUS_ERROR, .message = msg});
}

snapshot *krs_snapshot(uint64_t agent, krs_kernel_dispatch_info_t info, const char *kernel, char *err, size_t errlen) {
    snapshot *s = calloc(1, sizeof *s);
    if (s == NULL) { snprintf(err, errlen, "out of memory"); report_failure(info, kernel, err); return NULL; }
    s->agent = agent;
    pthread_mutex_lock(&krs_sdk.mu);
    size_t n = 0;
    for (tracked *t = krs_sdk.allocations; t != NULL; t = t->next) n += t->a.agent == agent;
    s->regions = calloc(n + 1, sizeof *s->regions);
    s->generations = calloc(n + 1, sizeof *s->generations);
    s->copies = calloc(n + 1, sizeof *s->copies);
    if (s->regions != NULL && s->generations != NULL && s->copies != NULL) {
        /* oldest first: the list is newest first */
        size_t k = n;
        for (tracked *t = krs_sdk.allocations; t != NULL; t = t->next) {
            if (t->a.agent != agent) continue;
            k--;
            s->regions[k] = t->a;
            s->generations[k] = t->generation;
        }
        s->n = n;
#ifdef KRS_FAULT_SNAPSHOT_SKIPS_BUFFER
        if (s->n > 1) s->n--; /* the newest buffer is left out */
#endif
    }
    /* The tracker stays locked until the copy is made: a free on another
     * thread waits in its hook (krs_track), so no region listed goes, or
     * is handed to a new allocation, before it is read (MEM-4, MEM-5). */
    if (s->regions == NULL || s->generations == NULL || s->copies == NULL) {
        pthread_mutex_unlock(&krs_sdk.mu);
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    uint64_t bytes = 0;
    for (size_t i = 0; i < s->n; i++) bytes += s->regions[i].size;
    if (rt_staging_reserve(krs_sdk.rt, agent, bytes, err, errlen) != RT_OK) goto fail_locked;
    s->bytes = bytes;
    const rt_alloc **src = calloc(s->n + 1, sizeof *src);
    if (src == NULL) { snprintf(err, errlen, "out of memory"); goto fail_locked; }
    for (size_t i = 0; i < s->n; i++) {
        src[i] = &s->regions[i];
        s->copies[i] = malloc(s->regions[i].size);
        if (s->copies[i] == NULL) { free(src); snprintf(err, errlen, "out of memory"); goto fail_locked; }
    }
    rt_region *rr = calloc(s->n + 1, sizeof *rr);
    for (size_t i = 0; rr != NULL && i < s->n; i++) rr[i] = (rt_region){s->regions[i].handle, s->regions[i].size};
    krs_report_t saved = {.kind = KRS_REPORT_SNAPSHOT, .info = info, .kernel_name = kernel, .bytes = bytes,
                          .regions = rr, .region_count = rr != NULL ? s->n : 0, .status = KRS_STATUS_SUCCESS};
    /* reported where the runtime copies, under its memory lock (decision
     * 18.8 of docs/decisions.md) */
#ifdef KRS_FAULT_SNAPSHOT_SILENTLY
    int rc = rt_read_regions(krs_sdk.rt, agent, src, s->n, s->copies, NULL, NULL);
    (void)saved;
#else
    int rc = rt_read_regions(krs_sdk.rt, agent, src, s->n, s->copies, report_copied, &saved);
#endif
    pthread_mutex_unlock(&krs_sdk.mu);
    free(src);
    free(rr);
    if (rc != RT_OK) { snprintf(err, errlen, "copying device memory out failed"); goto fail; }
    return s;
fail_locked:
    pthread_mutex_unlock(&krs_sdk.mu);
fail:
    report_failure(info, kernel, err);
    krs_snapshot_free(s);
    return NULL;
}

/* still_tracked: the region is live and the same allocation as when saved. */
static bool still_tracked(const rt_alloc *a, uint64_t generation) {
    for (tracked *t = krs_sdk.allocations; t != NULL; t = t->next) {
        if (t->a.handle == a->handle) return t->generation == generation && t->a.size == a->size;
    }
    return false;
}

/* fatal ends the process: a restore that fails part-way is never a silent
 * wrong result (MEM-5). No restore is reported: it did not happen. */
static void fatal(krs_kernel_dispatch_info_t info, uint64_t pass, const char *why) {
    char msg[256];
    snprintf(msg, sizeof msg, "the restore before pass %llu of dispatch %llu failed: %s",
             (unsigned long long)pass, (unsigned long long)info.dispatch_id, why);
    fprintf(stderr, "krs: fatal: %s\n", msg);
    fflush(stderr);
    if (krs_sdk.fatal != NULL) krs_sdk.fatal(msg, krs_sdk.fatal_args);
    abort();
}

void krs_restore(snapshot *s, krs_kernel_dispatch_info_t info, const char *kernel, uint64_t pass) {
    const rt_alloc **dst = calloc(s->n + 1, sizeof *dst);
    const void **src = calloc(s->n + 1, sizeof *src);
    rt_region *rr = calloc(s->n + 1, sizeof *rr);
    if (dst == NULL || src == NULL || rr == NULL) fatal(info, pass, "out of memory");
    size_t k = 0;
    uint64_t bytes = 0;
    pthread_mutex_lock(&krs_sdk.mu);
    for (size_t i = 0; i < s->n; i++) {
        if (!still_tracked(&s->regions[i], s->generations[i])) continue; /* MEM-4: freed or reallocated */
        dst[k] = &s->regions[i];
        src[k] = s->copies[i];
        rr[k] = (rt_region){s->regions[i].handle, s->regions[i].size};
        bytes += s->regions[i].size;
        k++;
    }
#ifdef KRS_FAULT_RESTORE_MISREPORTED
    bytes += 4096; /* claims more than it wrote */
#endif
    krs_report_t restored = {.kind = KRS_REPORT_RESTORE, .info = info, .kernel_name = kernel, .pass = pass,
                             .bytes = bytes, .regions = rr, .region_count = k, .status = KRS_STATUS_SUCCESS};
    /* Still locked while the copy is made: a free on another thread waits
     * in its hook (krs_track), so a region judged live here cannot be
     * freed and handed to a new allocation before it is written (MEM-4).
     * Reported where the runtime writes (decision 18.8); never when it failed. */
    int rc = rt_restore_regions(krs_sdk.rt, s->agent, dst, k, src, report_copied, &restored);
    pthread_mutex_unlock(&krs_sdk.mu);
    if (rc != RT_OK) fatal(info, pass, "the copy failed part-way");
    free(dst);
    free(src);
    free(rr);
}
