/* The runtime core: queues, signals, the interception table and the
 * observer, over one backend (host or CUDA). Queue writes execute
 * synchronously and in order on the writing thread. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "rt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rs_kit.h" /* the digest and the clock */

typedef struct mem_entry {
    rt_alloc a;
    struct mem_entry *next;
} mem_entry;

struct rt_runtime {
    const rt_backend *b;
    void *backend;
    pthread_mutex_t mu;
    rt_hooks hooks;
    bool has_hooks;
    rt_observer obs;
    bool has_obs;
    mem_entry *mem;
    mem_entry *cache; /* freed blocks, kept for reuse (rt_alloc_memory): the last freed first */
    uint64_t next_queue, next_signal;
    uint64_t *staging_limit, *staging_used; /* per agent index */
    uint64_t *in_flight;                     /* kernels running, per agent index */
    pthread_cond_t idle;
    rt_queue **queues;
    size_t nqueues;
    uint64_t restores, restore_fails_at;
    /* Kernel runs and copies touch memory one at a time, and each is
     * reported to the observer before the next begins, so the trace's
     * order of kernels and copies is the order in which they touched
     * memory (MEM-3 reads a read-back against the last kernel before it;
     * the simulator keeps the same order under its memory lock). Found
     * running generated specs: a kernel reported after another thread's
     * later kernel made MEM-3 blame a restore. */
    pthread_mutex_t mem_mu;
};

struct rt_queue {
    rt_runtime *rt;
    uint64_t id, agent;
    pthread_mutex_t mu; /* in-order execution */
    rt_interceptor icpt;
    void *icpt_arg;
};

struct rt_signal {
    rt_runtime *rt;
    uint64_t id;
    int64_t value;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

rt_runtime *rt_open(const rt_backend *b, void *backend) {
    rt_runtime *rt = calloc(1, sizeof *rt);
    if (rt == NULL) return NULL;
    rt->b = b;
    rt->backend = backend;
    pthread_mutex_init(&rt->mu, NULL);
    pthread_mutex_init(&rt->mem_mu, NULL);
    pthread_cond_init(&rt->idle, NULL);
    size_t n = b->agent_count(backend);
    rt->staging_limit = calloc(n + 1, sizeof *rt->staging_limit);
    rt->staging_used = calloc(n + 1, sizeof *rt->staging_used);
    rt->in_flight = calloc(n + 1, sizeof *rt->in_flight);
    if (rt->staging_limit == NULL || rt->staging_used == NULL || rt->in_flight == NULL) {
        rt_close(rt);
        return NULL;
    }
    return rt;
}

void rt_close(rt_runtime *rt) {
    if (rt == NULL) return;
    for (int list = 0; list < 2; list++) {
        for (mem_entry *m = list == 0 ? rt->mem : rt->cache, *next; m != NULL; m = next) {
            next = m->next;
            rt->b->free(rt->backend, m->a.handle);
            free(m);
        }
    }
    for (size_t i = 0; i < rt->nqueues; i++) {
        pthread_mutex_destroy(&rt->queues[i]->mu);
        free(rt->queues[i]);
    }
    free(rt->queues);
    if (rt->b->close != NULL) rt->b->close(rt->backend);
    free(rt->staging_limit);
    free(rt->staging_used);
    free(rt->in_flight);
    pthread_cond_destroy(&rt->idle);
    pthread_mutex_destroy(&rt->mem_mu);
    pthread_mutex_destroy(&rt->mu);
    free(rt);
}

const char *rt_backend_name(const rt_runtime *rt) { return rt->b->name; }
size_t rt_agent_count(const rt_runtime *rt) { return rt->b->agent_count(rt->backend); }
const rt_agent *rt_agent_at(const rt_runtime *rt, size_t i) { return rt->b->agent(rt->backend, i); }

const rt_agent *rt_agent_by_id(const rt_runtime *rt, uint64_t id) {
    size_t n = rt_agent_count(rt);
    return id >= 1 && id <= n ? rt_agent_at(rt, id - 1) : NULL;
}

void rt_set_hooks(rt_runtime *rt, const rt_hooks *h) {
    pthread_mutex_lock(&rt->mu);
    rt->has_hooks = h != NULL;
    if (h != NULL) rt->hooks = *h;
    pthread_mutex_unlock(&rt->mu);
}

void rt_set_observer(rt_runtime *rt, const rt_observer *o) {
    rt->has_obs = o != NULL;
    if (o != NULL) rt->obs = *o;
}

static rt_hooks hooks_of(rt_runtime *rt, bool *ok) {
    pthread_mutex_lock(&rt->mu);
    rt_hooks h = rt->hooks;
    *ok = rt->has_hooks;
    pthread_mutex_unlock(&rt->mu);
    return h;
}

static void api_enter(rt_runtime *rt, rt_api_call call) {
    bool ok;
    rt_hooks h = hooks_of(rt, &ok);
    if (ok && h.api_enter != NULL) h.api_enter(h.arg, call);
}

static void api_exit(rt_runtime *rt, rt_api_call call) {
    bool ok;
    rt_hooks h = hooks_of(rt, &ok);
    if (ok && h.api_exit != NULL) h.api_exit(h.arg, call);
}

/* ---------------------------------------------------------------- counters */

static const rt_counter_block *block_of(const rt_agent *a, const char *counter) {
    for (size_t b = 0; b < a->nblocks; b++) {
        for (size_t c = 0; c < a->blocks[b].ncounters; c++) {
            if (strcmp(a->blocks[b].counters[c], counter) == 0) return &a->blocks[b];
        }
    }
    return NULL;
}

bool rt_agent_has_counter(const rt_agent *a, const char *counter) { return block_of(a, counter) != NULL; }

int rt_counter_passes(const rt_agent *a, const char *const *counters, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const rt_counter_block *blk = block_of(a, counters[i]);
        if (blk == NULL || blk->registers <= 0) return -1;
    }
    int passes = 0;
    for (size_t b = 0; b < a->nblocks; b++) {
        size_t used = 0; /* this block's counters, each once */
        for (size_t i = 0; i < n; i++) {
            bool repeat = false;
            for (size_t j = 0; j < i && !repeat; j++) repeat = strcmp(counters[j], counters[i]) == 0;
            if (!repeat && block_of(a, counters[i]) == &a->blocks[b]) used++;
        }
        size_t regs = (size_t)a->blocks[b].registers;
        int need = regs > 0 ? (int)((used + regs - 1) / regs) : 0;
        if (need > passes) passes = need;
    }
    return passes;
}

/* profile_refused says why the agent cannot run a packet with this
 * profile: a dispatch counter set that needs several passes, or a counter
 * the agent lacks. Checked before the kernel runs, as hardware refuses the
 * packet (decisions 17.7, 17.9). */
static bool profile_refused(const rt_agent *a, const rt_profile *p, char *why, size_t len) {
    for (size_t i = 0; i < p->ndevice; i++) {
        if (!rt_agent_has_counter(a, p->device[i])) {
            snprintf(why, len, "agent %llu (%s) has no device counter %s", (unsigned long long)a->id, a->arch, p->device[i]);
            return true;
        }
    }
    for (size_t i = 0; i < p->ncounters; i++) {
        if (!rt_agent_has_counter(a, p->counters[i])) {
            snprintf(why, len, "agent %llu (%s) has no counter %s", (unsigned long long)a->id, a->arch, p->counters[i]);
            return true;
        }
    }
    int passes = rt_counter_passes(a, p->counters, p->ncounters);
    if (passes < 0 || passes > 1) {
        snprintf(why, len, "the dispatch's %zu counters need %d passes on agent %llu (%s); one dispatch collects one group",
                 p->ncounters, passes, (unsigned long long)a->id, a->arch);
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- memory */

static mem_entry *lookup(rt_runtime *rt, uint64_t handle) {
    for (mem_entry *m = rt->mem; m != NULL; m = m->next) {
        if (m->a.handle == handle) return m;
    }
    return NULL;
}

/* A freed block is not given back to the backend: the next allocation of
 * its shape (agent, kind and pages) takes it, the last one freed first, as
 * a caching allocator does and as the simulator does. A stale address then
 * names the new buffer, so a restore that writes into memory freed during
 * a loop lands there and is seen (MEM-4). Blocks are whole pages, so that
 * any size of the shape fits the block. */
enum { rt_page = 4096 };

static uint64_t pages_of(uint64_t size) { return size / rt_page + (size % rt_page != 0); }

/* take_cached unlinks the last freed block of this shape, if any. The
 * caller holds rt->mu. */
static mem_entry *take_cached(rt_runtime *rt, uint64_t agent, rt_mem_kind kind, uint64_t size) {
    for (mem_entry **pp = &rt->cache; *pp != NULL; pp = &(*pp)->next) {
        mem_entry *m = *pp;
        if (m->a.agent == agent && m->a.kind == kind && pages_of(m->a.size) == pages_of(size)) {
            *pp = m->next;
            return m;
        }
    }
    return NULL;
}

int rt_alloc_memory(rt_runtime *rt, uint64_t agent, rt_mem_kind kind, uint64_t size, rt_alloc *out, rt_alloc_fn then,
                    void *arg) {
    if (rt_agent_by_id(rt, agent) == NULL || size == 0 || size > UINT64_MAX - rt_page) return RT_ERR;
    pthread_mutex_lock(&rt->mu);
    mem_entry *m = take_cached(rt, agent, kind, size);
    pthread_mutex_unlock(&rt->mu);
    if (m != NULL) {
        /* a new allocation reads as zeros, as a fresh one does; no copy the
         * observer sees, and no one can reach the block yet */
        void *zeros = calloc(1, size);
        int rc = zeros != NULL ? rt->b->write(rt->backend, m->a.handle, 0, zeros, size) : RT_ERR;
        free(zeros);
        if (rc != RT_OK) {
            rt->b->free(rt->backend, m->a.handle);
            free(m);
            return RT_ERR;
        }
        m->a.size = size;
    } else {
        m = calloc(1, sizeof *m);
        if (m == NULL) return RT_ERR;
        uint64_t handle;
        if (rt->b->alloc(rt->backend, agent, kind, pages_of(size) * rt_page, &handle) != RT_OK) {
            free(m);
            return RT_ERR;
        }
        m->a = (rt_alloc){.handle = handle, .agent = agent, .kind = kind, .size = size};
    }
    pthread_mutex_lock(&rt->mu);
    m->next = rt->mem;
    rt->mem = m;
    pthread_mutex_unlock(&rt->mu);
    *out = m->a;
    bool ok;
    rt_hooks h = hooks_of(rt, &ok);
    if (ok && h.on_alloc != NULL) {
        h.on_alloc(h.arg, out, false, then, arg);
    } else if (then != NULL) {
        then(arg, out);
    }
    return RT_OK;
}

int rt_free_memory(rt_runtime *rt, const rt_alloc *a, rt_alloc_fn then, void *arg) {
    pthread_mutex_lock(&rt->mu);
    mem_entry *m = lookup(rt, a->handle);
    rt_alloc freed = m != NULL ? m->a : (rt_alloc){0};
    pthread_mutex_unlock(&rt->mu);
    if (m == NULL) return RT_ERR;
    /* The hook first, while the block is still live: the tracker learns of
     * a free as it begins, so a snapshot or restore it is serving ends
     * before the block goes (MEM-4, MEM-5). The free's record comes there
     * too, before the block can go to another allocation. */
    bool ok;
    rt_hooks h = hooks_of(rt, &ok);
    if (ok && h.on_alloc != NULL) {
        h.on_alloc(h.arg, &freed, true, then, arg);
    } else if (then != NULL) {
        then(arg, &freed);
    }
    pthread_mutex_lock(&rt->mu);
    mem_entry **pp = &rt->mem;
    while (*pp != NULL && (*pp)->a.handle != freed.handle) pp = &(*pp)->next;
    m = *pp;
    if (m != NULL) {
        *pp = m->next;
        m->next = rt->cache;
        rt->cache = m;
    }
    pthread_mutex_unlock(&rt->mu);
    return m != NULL ? RT_OK : RT_ERR;
}

static bool live(rt_runtime *rt, const rt_alloc *a) {
    pthread_mutex_lock(&rt->mu);
    mem_entry *m = lookup(rt, a->handle);
    bool ok = m != NULL && m->a.size == a->size;
    pthread_mutex_unlock(&rt->mu);
    return ok;
}

static bool device_side(rt_mem_kind k) { return k == RT_MEM_DEVICE || k == RT_MEM_FINE; }

static void observe_copy(rt_runtime *rt, bool write, uint64_t agent, const rt_alloc *const *a, size_t n) {
    if (!rt->has_obs || rt->obs.copy == NULL || n == 0) return;
    rt_region stack[16];
    rt_region *r = n <= 16 ? stack : calloc(n, sizeof *r);
    if (r == NULL) return;
    uint64_t bytes = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!device_side(a[i]->kind)) continue;
        r[k++] = (rt_region){a[i]->handle, a[i]->size};
        bytes += a[i]->size;
    }
    if (k > 0) rt->obs.copy(rt->obs.arg, write, agent, r, k, bytes);
    if (r != stack) free(r);
}

int rt_write_memory(rt_runtime *rt, const rt_alloc *a, const void *src, uint64_t n) {
    return rt_write_regions(rt, a->agent, &a, 1, &src) == RT_OK && n == a->size ? RT_OK : RT_ERR;
}

int rt_read_memory(rt_runtime *rt, const rt_alloc *a, void *dst, uint64_t n) {
    return n == a->size ? rt_read_regions(rt, a->agent, &a, 1, &dst, NULL, NULL) : RT_ERR;
}

int rt_read_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, void *const *dst,
                    rt_copied_fn then, void *arg) {
    pthread_mutex_lock(&rt->mem_mu);
    for (size_t i = 0; i < n; i++) {
        if (!live(rt, regions[i]) || rt->b->read(rt->backend, regions[i]->handle, 0, dst[i], regions[i]->size) != RT_OK) {
            pthread_mutex_unlock(&rt->mem_mu);
            return RT_ERR;
        }
    }
    observe_copy(rt, false, agent, regions, n);
    if (then != NULL) then(arg);
    pthread_mutex_unlock(&rt->mem_mu);
    return RT_OK;
}

static int write_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, const void *const *src,
                         rt_copied_fn then, void *arg) {
    pthread_mutex_lock(&rt->mem_mu);
    for (size_t i = 0; i < n; i++) {
        if (!live(rt, regions[i]) || rt->b->write(rt->backend, regions[i]->handle, 0, src[i], regions[i]->size) != RT_OK) {
            pthread_mutex_unlock(&rt->mem_mu);
            return RT_ERR;
        }
    }
    observe_copy(rt, true, agent, regions, n);
    if (then != NULL) then(arg);
    pthread_mutex_unlock(&rt->mem_mu);
    return RT_OK;
}

int rt_write_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, const void *const *src) {
    return write_regions(rt, agent, regions, n, src, NULL, NULL);
}

void rt_set_restore_failure(rt_runtime *rt, uint64_t nth) { rt->restore_fails_at = nth; }

int rt_restore_regions(rt_runtime *rt, uint64_t agent, const rt_alloc *const *regions, size_t n, const void *const *src,
                       rt_copied_fn then, void *arg) {
    pthread_mutex_lock(&rt->mu);
    uint64_t nth = ++rt->restores;
    bool fail = rt->restore_fails_at != 0 && nth == rt->restore_fails_at;
    pthread_mutex_unlock(&rt->mu);
    /* A restore with no live region makes no copy, so an injected failure
     * has nothing to strike in: it is spent on this restore, which succeeds
     * (decision 17.2). */
    if (!fail || n == 0) return write_regions(rt, agent, regions, n, src, then, arg);
    /* the injected failure: the first region is written, then the copy fails */
    rt_write_regions(rt, agent, regions, 1, src);
    fprintf(stderr, "rt: restore %llu failed after its first region (injected)\n", (unsigned long long)nth);
    return RT_ERR;
}

void rt_set_staging_limit(rt_runtime *rt, uint64_t agent, uint64_t bytes) {
    if (rt_agent_by_id(rt, agent) != NULL) rt->staging_limit[agent] = bytes;
}

int rt_staging_reserve(rt_runtime *rt, uint64_t agent, uint64_t bytes, char *err, size_t errlen) {
    if (rt_agent_by_id(rt, agent) == NULL) return RT_ERR;
    pthread_mutex_lock(&rt->mu);
    uint64_t limit = rt->staging_limit[agent];
    int rc = RT_OK;
    if (limit != 0 && rt->staging_used[agent] + bytes > limit) {
        snprintf(err, errlen, "staging memory of agent %llu exhausted: %llu bytes asked, %llu of %llu free",
                 (unsigned long long)agent, (unsigned long long)bytes,
                 (unsigned long long)(limit - rt->staging_used[agent]), (unsigned long long)limit);
        rc = RT_ERR;
    } else {
        rt->staging_used[agent] += bytes;
    }
    pthread_mutex_unlock(&rt->mu);
    return rc;
}

void rt_staging_release(rt_runtime *rt, uint64_t agent, uint64_t bytes) {
    if (rt_agent_by_id(rt, agent) == NULL) return;
    pthread_mutex_lock(&rt->mu);
    rt->staging_used[agent] -= bytes <= rt->staging_used[agent] ? bytes : rt->staging_used[agent];
    pthread_mutex_unlock(&rt->mu);
}

/* ---------------------------------------------------------------- signals */

rt_signal *rt_signal_create(rt_runtime *rt, int64_t value) {
    rt_signal *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->rt = rt;
    s->value = value;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_mutex_lock(&rt->mu);
    s->id = ++rt->next_signal;
    pthread_mutex_unlock(&rt->mu);
    return s;
}

void rt_signal_destroy(rt_signal *s) {
    if (s == NULL) return;
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

uint64_t rt_signal_id(const rt_signal *s) { return s->id; }

void rt_signal_decrement(rt_signal *s) {
    pthread_mutex_lock(&s->mu);
    int64_t v = --s->value;
    /* the observer sees the decrement before any waiter can wake */
    if (s->rt->has_obs && s->rt->obs.signal != NULL) s->rt->obs.signal(s->rt->obs.arg, s->id, v);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int64_t rt_signal_value(rt_signal *s) {
    pthread_mutex_lock(&s->mu);
    int64_t v = s->value;
    pthread_mutex_unlock(&s->mu);
    return v;
}

bool rt_signal_wait_below(rt_signal *s, int64_t v, uint64_t timeout_ns) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(timeout_ns / 1000000000u);
    until.tv_nsec += (long)(timeout_ns % 1000000000u);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->mu);
    while (s->value >= v) {
        if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT) break;
    }
    bool ok = s->value < v;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

/* ---------------------------------------------------------------- queues */

int rt_queue_create(rt_runtime *rt, uint64_t agent, rt_queue **out) {
    if (rt_agent_by_id(rt, agent) == NULL) return RT_ERR;
    rt_queue *q = calloc(1, sizeof *q);
    if (q == NULL) return RT_ERR;
    q->rt = rt;
    q->agent = agent;
    pthread_mutex_init(&q->mu, NULL);
    pthread_mutex_lock(&rt->mu);
    rt_queue **grown = realloc(rt->queues, (rt->nqueues + 1) * sizeof *grown);
    if (grown == NULL) {
        pthread_mutex_unlock(&rt->mu);
        pthread_mutex_destroy(&q->mu);
        free(q);
        return RT_ERR;
    }
    rt->queues = grown;
    rt->queues[rt->nqueues++] = q;
    q->id = ++rt->next_queue;
    pthread_mutex_unlock(&rt->mu);
    bool ok;
    rt_hooks h = hooks_of(rt, &ok);
    if (ok && h.on_queue != NULL) h.on_queue(h.arg, q);
    *out = q;
    return RT_OK;
}

uint64_t rt_queue_id(const rt_queue *q) { return q->id; }
uint64_t rt_queue_agent(const rt_queue *q) { return q->agent; }
rt_runtime *rt_queue_runtime(const rt_queue *q) { return q->rt; }

void rt_queue_set_interceptor(rt_queue *q, rt_interceptor fn, void *arg) {
    pthread_mutex_lock(&q->rt->mu);
    q->icpt = fn;
    q->icpt_arg = arg;
    pthread_mutex_unlock(&q->rt->mu);
}

/* digest_saved digests the device (coarse-grained) buffers of the kernel's
 * own agent, each once, in argument order: the memory replay saves (MEM-4).
 * Another agent's buffer a kernel reaches through peer access is not saved,
 * so it is not digested either (decision 17.3, docs/trace.md). */
static bool digest_saved(rt_runtime *rt, uint64_t agent, const rt_packet *p, char out[17]) {
    rs_digest_state d;
    rs_digest_begin(&d);
    for (int i = 0; i < p->nargs; i++) {
        const rt_alloc *a = p->args[i].buffer;
        if (a == NULL || a->kind != RT_MEM_DEVICE || a->agent != agent) continue;
        bool seen = false;
        for (int j = 0; j < i; j++) seen = seen || (p->args[j].buffer != NULL && p->args[j].buffer->handle == a->handle);
        if (seen) continue;
        void *tmp = malloc(a->size);
        if (tmp == NULL || rt->b->read(rt->backend, a->handle, 0, tmp, a->size) != RT_OK) {
            free(tmp);
            return false;
        }
        rs_digest_add(&d, tmp, a->size);
        free(tmp);
    }
    rs_digest_end(&d, out);
    return true;
}

static void agent_busy(rt_runtime *rt, uint64_t agent, bool busy) {
    pthread_mutex_lock(&rt->mu);
    if (busy) rt->in_flight[agent]++;
    else if (--rt->in_flight[agent] == 0) pthread_cond_broadcast(&rt->idle);
    pthread_mutex_unlock(&rt->mu);
}

/* run_reported runs one kernel and reports it, under mem_mu: its digests,
 * its run and its report are one step of the memory's history. */
static int run_reported(rt_queue *q, rt_packet *p) {
    rt_runtime *rt = q->rt;
    bool digests = rt->has_obs && rt->obs.want_digests;
    char in[17] = "", out[17] = "";
    if (digests && !digest_saved(rt, q->agent, p, in)) return RT_ERR;
    uint64_t start = 0, end = 0;
    agent_busy(rt, q->agent, true);
    int rc = rt->b->run(rt->backend, q->agent, p, &start, &end);
    agent_busy(rt, q->agent, false);
    if (rc != RT_OK) return rc;
    if (digests && !digest_saved(rt, q->agent, p, out)) return RT_ERR;
    if (p->profile != NULL) {
        p->profile->start = start;
        p->profile->end = end;
        for (size_t i = 0; i < p->profile->ncounters; i++) {
            if (!rt->b->counter(rt->backend, q->agent, p, p->profile->counters[i], &p->profile->values[i])) {
                fprintf(stderr, "rt: agent %llu cannot count %s\n", (unsigned long long)q->agent, p->profile->counters[i]);
                return RT_ERR;
            }
        }
        for (size_t i = 0; i < p->profile->ndevice; i++) { /* the agent's own counting session */
            if (!rt->b->counter(rt->backend, q->agent, p, p->profile->device[i], &p->profile->device_values[i])) {
                fprintf(stderr, "rt: agent %llu cannot count %s\n", (unsigned long long)q->agent, p->profile->device[i]);
                return RT_ERR;
            }
        }
    }
    if (rt->has_obs && rt->obs.kernel != NULL) {
        rt_kernel_report k = {.agent = q->agent, .queue = q->id, .tag = p->tag, .kernel = p->kernel,
                              .start = start, .end = end, .mem_in = digests ? in : NULL, .mem_out = digests ? out : NULL,
                              .signal = p->completion != NULL ? p->completion->id : 0, .profile = p->profile};
        rt->obs.kernel(rt->obs.arg, &k);
    }
    return RT_OK;
}

static int run_kernel(rt_queue *q, rt_packet *p) {
    rt_runtime *rt = q->rt;
    for (int i = 0; i < p->nargs; i++) {
        if (p->args[i].buffer != NULL && !live(rt, p->args[i].buffer)) {
            fprintf(stderr, "rt: kernel %s: argument %d is not a live allocation\n", p->kernel, i);
            return RT_ERR;
        }
    }
    char why[256];
    const rt_agent *ag = rt_agent_by_id(rt, q->agent);
    if (p->profile != NULL && ag != NULL && profile_refused(ag, p->profile, why, sizeof why)) {
        fprintf(stderr, "rt: kernel %s refused: %s\n", p->kernel, why);
        return RT_ERR;
    }
    pthread_mutex_lock(&rt->mem_mu);
    int rc = run_reported(q, p);
    pthread_mutex_unlock(&rt->mem_mu);
    if (rc != RT_OK) return rc;
    if (p->completion != NULL) rt_signal_decrement(p->completion);
    return RT_OK;
}

int rt_queue_hw_write(rt_queue *q, rt_packet *packets, size_t n) {
    pthread_mutex_lock(&q->mu);
    int rc = RT_OK;
    for (size_t i = 0; i < n && rc == RT_OK; i++) {
        rt_packet *p = &packets[i];
        if (p->type == RT_PACKET_KERNEL) rc = run_kernel(q, p);
        else if (p->completion != NULL) rt_signal_decrement(p->completion); /* a barrier: in order, so done */
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int rt_queue_write(rt_queue *q, rt_packet *packets, size_t n) {
    api_enter(q->rt, RT_API_QUEUE_WRITE);
    pthread_mutex_lock(&q->rt->mu);
    rt_interceptor fn = q->icpt;
    void *arg = q->icpt_arg;
    pthread_mutex_unlock(&q->rt->mu);
    int rc = fn != NULL ? fn(arg, q, packets, n) : rt_queue_hw_write(q, packets, n);
    api_exit(q->rt, RT_API_QUEUE_WRITE);
    return rc;
}

int rt_launch(rt_runtime *rt, rt_queue *q, rt_packet *packets, size_t n) {
    return rt_launch_inside(rt, q, packets, n, NULL, NULL);
}

/* The launch call, then inside it what the caller does before its queue
 * write (the application yields there, decision 20.3.3), then the write. */
int rt_launch_inside(rt_runtime *rt, rt_queue *q, rt_packet *packets, size_t n, void (*inside)(void *arg), void *arg) {
    rt_api_call call = n > 0 && packets[0].from_graph ? RT_API_GRAPH_LAUNCH : RT_API_LAUNCH;
    api_enter(rt, call);
    if (inside != NULL) inside(arg);
    int rc = rt_queue_write(q, packets, n);
    api_exit(rt, call);
    return rc;
}

int rt_drain_agent(rt_runtime *rt, uint64_t agent) {
    if (rt_agent_by_id(rt, agent) == NULL) return RT_ERR;
    pthread_mutex_lock(&rt->mu);
    while (rt->in_flight[agent] > 0) pthread_cond_wait(&rt->idle, &rt->mu);
    pthread_mutex_unlock(&rt->mu);
    return RT_OK;
}
