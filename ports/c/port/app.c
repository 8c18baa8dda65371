/* The spec's application: buffers, queues, threads and dispatches on the
 * rt runtime, recording what the application observes. It knows nothing
 * of replay: it launches, waits on its signal and reads memory back. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"

typedef struct {
    size_t agent; /* spec index */
    const char *name;
    rt_queue *q;
} named_queue;

/* An application thread as the launch's yield sees it (yield_in_launch):
 * running, so it may reach a launch of its own; waiting (for what it starts
 * after or during, or for its completion), so it reaches none until
 * something else happens; or done. open: its launch calls now open. */
typedef enum { THREAD_RUNS, THREAD_WAITS, THREAD_DONE } thread_state;

typedef struct {
    uint64_t thread;
    thread_state state;
    int open;
} app_thread;

static struct {
    port *p;
    const app_hooks *hooks; /* the tool, as far as the application knows it */
    rt_alloc *buffers;      /* by spec index */
    bool *live;        /* allocated and not freed */
    bool *tool_freed, *tool_allocated; /* by spec index: the tool's memory actions done */
    named_queue *queues;
    size_t nqueues;
    /* the threads, for the launch's yield; under their own lock, so that
     * a yield never waits on the driver's (p->mu) */
    pthread_mutex_t threads_mu;
    pthread_cond_t threads_cv; /* on CLOCK_MONOTONIC */
    app_thread *threads;
    size_t nthreads;
} app;

/* A dispatch's completion wait: its signal is decremented before the
 * launch returns unless the loop never ends (CMP-4); then the application
 * would block for ever, and gives up after this long. */
static const uint64_t wait_normal_ns = 30 * 1000000000ull, wait_after_error_ns = 50 * 1000000ull;

/* The launch yields (docs/decisions.md 20.3.3): inside its launch call,
 * before its submission, a thread waits until another application thread
 * has a launch of its own open, or no other thread runs (each waits, or is
 * done), or this long has passed. */
static const long yield_bound_ns = 5 * 1000000L;

void port_fail(port *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "krs-driver: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    pthread_mutex_lock(&p->mu);
    p->failed = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static const rs_spec *spec(void) { return app.p->s; }
static void emit(const rs_event *e) { rs_emit(app.p->t, e); }

static rs_mem_kind kind_of(const char *k) {
    if (strcmp(k, "fine") == 0) return RS_MEM_FINE;
    if (strcmp(k, "host") == 0) return RS_MEM_HOST;
    if (strcmp(k, "kernarg") == 0) return RS_MEM_KERNARG;
    return RS_MEM_DEVICE;
}

static rt_mem_kind rt_kind(rs_mem_kind k) {
    switch (k) {
    case RS_MEM_FINE: return RT_MEM_FINE;
    case RS_MEM_HOST: return RT_MEM_HOST;
    case RS_MEM_KERNARG: return RT_MEM_KERNARG;
    default: return RT_MEM_DEVICE;
    }
}

/* allocate makes and fills one buffer, on the calling thread: an
 * application thread, a tool's callback on one (a by_tool buffer), or the
 * main thread (0) before the threads start. */
/* An allocation's record, written by the runtime where the allocation takes
 * effect (rt_alloc_memory): before any snapshot on another thread can list
 * it. */
typedef struct {
    const char *name;
    uint64_t agent, bytes;
    rs_mem_kind kind;
} alloc_note;

static void record_alloc(void *arg, const rt_alloc *a) {
    const alloc_note *n = arg;
    emit(&(rs_event){.type = RS_EV_APP_ALLOC, .thread = rs_app_thread(), .buffer = n->name, .agent = n->agent,
                     .mem_kind = n->kind, .addr = a->handle, .bytes = n->bytes});
}

/* A free's record, written where the free takes effect (rt_free_memory):
 * before its block can go to another allocation, whose app_alloc would
 * otherwise come first (gen-213313). */
static void record_free(void *arg, const rt_alloc *a) {
    emit(&(rs_event){.type = RS_EV_APP_FREE, .thread = rs_app_thread(), .buffer = arg, .addr = a->handle});
}

static int allocate(size_t i) {
    const rs_spec_buffer *b = &spec()->buffers[i];
    uint64_t agent = rs_spec_agent_index(spec(), b->agent) + 1;
    rs_mem_kind kind = kind_of(b->kind);
    uint64_t bytes = b->elements * 4;
    rt_alloc al;
    alloc_note note = {b->name, agent, bytes, kind};
    if (rt_alloc_memory(app.p->rt, agent, rt_kind(kind), bytes, &al, record_alloc, &note) != RT_OK) {
        port_fail(app.p, "buffer %s: allocating %llu bytes failed", b->name, (unsigned long long)bytes);
        return -1;
    }
    int32_t *data = malloc(bytes);
    if (data == NULL) {
        port_fail(app.p, "buffer %s: out of memory", b->name);
        return -1;
    }
    for (uint64_t e = 0; e < b->elements; e++) {
        int64_t v = b->nvalues > 0 ? (e < b->nvalues ? b->values[e] : 0) : b->fill;
        data[e] = (int32_t)(uint32_t)(uint64_t)v;
    }
    int rc = rt_write_memory(app.p->rt, &al, data, bytes);
    free(data);
    if (rc != RT_OK) {
        port_fail(app.p, "buffer %s: writing its initial values failed", b->name);
        return -1;
    }
    pthread_mutex_lock(&app.p->mu);
    app.buffers[i] = al;
    app.live[i] = true;
    pthread_mutex_unlock(&app.p->mu);
    app.hooks->allocated(i, &al, false);
    return 0;
}

static rt_queue *queue_for(const rs_spec_dispatch *d) {
    size_t agent = rs_spec_agent_index(spec(), d->agent);
    rt_queue *q = NULL;
    pthread_mutex_lock(&app.p->mu);
    for (size_t i = 0; i < app.nqueues && q == NULL; i++) {
        if (app.queues[i].agent == agent && strcmp(app.queues[i].name, d->queue) == 0) q = app.queues[i].q;
    }
    if (q == NULL && rt_queue_create(app.p->rt, agent + 1, &q) == RT_OK) {
        named_queue *grown = realloc(app.queues, (app.nqueues + 1) * sizeof *grown);
        if (grown != NULL) {
            app.queues = grown;
            app.queues[app.nqueues++] = (named_queue){agent, d->queue, q};
        }
    }
    pthread_mutex_unlock(&app.p->mu);
    return q;
}

static size_t index_of(const char *name) {
    const rs_spec_dispatch *d = rs_spec_dispatch_named(spec(), name);
    return d == NULL ? SIZE_MAX : (size_t)(d - spec()->dispatches);
}

static void set_thread_state(thread_state st);

/* wait_to_start: `after` waits for a completion, `during` for a pass; a
 * thread that blocks here waits as far as the others' launches are
 * concerned (yield_in_launch). */
static bool wait_to_start(const rs_spec_dispatch *d) {
    size_t other = SIZE_MAX;
    if (d->after != NULL) other = index_of(d->after);
    else if (d->during_dispatch != NULL) other = index_of(d->during_dispatch);
    if (other == SIZE_MAX) return true;
    pthread_mutex_lock(&app.p->mu);
    for (;;) {
        port *p = app.p;
        if (p->failed) break;
        if (d->after != NULL && p->completed[other]) break;
        if (d->during_dispatch != NULL && p->in_pass[other] == (int64_t)d->during_pass) break;
        if (d->during_dispatch != NULL && p->completed[other]) { /* the pass never came */
            pthread_mutex_unlock(&app.p->mu);
            set_thread_state(THREAD_RUNS);
            return false;
        }
        set_thread_state(THREAD_WAITS); /* the lock order: p->mu, then threads_mu */
        pthread_cond_wait(&p->cv, &p->mu);
    }
    bool ok = !app.p->failed;
    pthread_mutex_unlock(&app.p->mu);
    set_thread_state(THREAD_RUNS);
    return ok;
}

/* packets builds d's submission: its kernel packets (the last carries the
 * completion signal; a barrier between each two with barriers_between),
 * then barriers up to d->packets. *pk is freed by the caller. */
static int build_packets(const rs_spec_dispatch *d, rt_signal *sig, rt_packet **out) {
    int packets = d->packets < d->kernel_packets ? d->kernel_packets : d->packets;
    rt_packet *pk = calloc((size_t)packets, sizeof *pk);
    if (pk == NULL) return -1;
    rt_packet kernel = {.type = RT_PACKET_KERNEL, .kernel = d->kernel, .grid = {d->grid, 1, 1},
                        .workgroup = {d->workgroup, 1, 1}, .from_graph = d->graph};
    pthread_mutex_lock(&app.p->mu);
    for (size_t a = 0; a < d->args.n && a < RT_MAX_ARGS; a++) {
        size_t bi;
        rs_spec_buffer_named(spec(), &bi, d->args.names[a]);
        kernel.args[kernel.nargs++] = (rt_arg){.buffer = &app.buffers[bi]};
    }
    pthread_mutex_unlock(&app.p->mu);
    int nbuf;
    bool scalar;
    if (rs_kernel_shape(d->kernel, &nbuf, &scalar) && scalar && kernel.nargs < RT_MAX_ARGS) {
        kernel.args[kernel.nargs++] = (rt_arg){.scalar = d->scalar};
    }
    /* The kernel packets, with a barrier between each two when the spec
     * asks (barriers_between), then barriers up to packets. */
    int at = 0;
    for (int i = 0; i < d->kernel_packets; i++) {
        if (i > 0 && d->barriers_between) pk[at++] = (rt_packet){.type = RT_PACKET_BARRIER};
        pk[at++] = kernel;
    }
    pk[at - 1].completion = sig;
    while (at < packets) pk[at++] = (rt_packet){.type = RT_PACKET_BARRIER};
    *out = pk;
    return packets;
}

/* load_signal records the value the application loads from its completion
 * signal once its wait returned or gave up: it starts at 1, and one
 * completion takes it to 0 (CMP-1; still 1 for a loop that never ended,
 * CMP-4). */
static void load_signal(uint64_t thread, const rs_spec_dispatch *d, rt_signal *sig) {
    emit(&(rs_event){.type = RS_EV_APP_SIGNAL, .thread = thread, .label = d->name, .signal = rt_signal_id(sig),
                     .has_value = true, .value = rt_signal_value(sig)});
}

/* ---------------------------------------------------------------- the launch's yield */

/* this_thread is the calling application thread's entry; NULL on any other
 * thread. Called with threads_mu held. */
static app_thread *this_thread(void) {
    uint64_t thread = rs_app_thread();
    for (size_t i = 0; i < app.nthreads; i++) {
        if (app.threads[i].thread == thread) return &app.threads[i];
    }
    return NULL;
}

static void set_thread_state(thread_state st) {
    pthread_mutex_lock(&app.threads_mu);
    app_thread *me = this_thread();
    if (me != NULL && me->state != st) {
        me->state = st;
        pthread_cond_broadcast(&app.threads_cv);
    }
    pthread_mutex_unlock(&app.threads_mu);
}

/* others_moved: another thread has a launch open, or none runs towards
 * one. Called with threads_mu held. */
static bool others_moved(const app_thread *me) {
    bool runs = false;
    for (size_t i = 0; i < app.nthreads; i++) {
        const app_thread *o = &app.threads[i];
        if (o == me) continue;
        if (o->open > 0) return true;
        runs = runs || o->state == THREAD_RUNS;
    }
    return !runs;
}

/* yield_in_launch runs inside the launch call, before the queue write
 * (rt_launch_inside): the launch is now open, and the thread waits for
 * another one's to open, as the simulator's application yields there
 * (harness.Yielder, decision 20.3.2). Then a dispatch captures its ids
 * while the other thread's calls are open too: an SDK that keeps one stack
 * of open calls for the process gives it the other thread's (COR-1). The
 * wait is bounded: the other thread may be held by this one (a lock, a
 * loop, this launch's completion), which the application cannot see.
 * *opened tells launch() to close the count again. */
static void yield_in_launch(void *arg) {
    bool *opened = arg;
    pthread_mutex_lock(&app.threads_mu);
    app_thread *me = this_thread();
    if (me == NULL) {
        pthread_mutex_unlock(&app.threads_mu);
        return;
    }
    me->open++;
    *opened = true;
    pthread_cond_broadcast(&app.threads_cv);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += yield_bound_ns;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!others_moved(me)) {
        if (pthread_cond_timedwait(&app.threads_cv, &app.threads_mu, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&app.threads_mu);
}

/* launch is the application's launch call (rt_launch) with its yield. */
static int launch(rt_queue *q, rt_packet *pk, size_t n) {
    bool opened = false;
    int rc = rt_launch_inside(app.p->rt, q, pk, n, yield_in_launch, &opened);
    if (opened) {
        pthread_mutex_lock(&app.threads_mu);
        app_thread *me = this_thread();
        if (me != NULL) me->open--;
        pthread_mutex_unlock(&app.threads_mu);
    }
    return rc;
}

static void dispatch(uint64_t thread, size_t di) {
    const rs_spec_dispatch *d = &spec()->dispatches[di];
    rt_queue *q = queue_for(d);
    rt_signal *sig = rt_signal_create(app.p->rt, 1);
    rt_packet *pk = NULL;
    int packets = q != NULL && sig != NULL ? build_packets(d, sig, &pk) : -1;
    if (packets < 0) {
        port_fail(app.p, "dispatch %s: no queue, signal or memory", d->name);
        rt_signal_destroy(sig);
        return;
    }
    app.hooks->submitting(di, sig);
    uint32_t grid[3] = {d->grid, 1, 1}, wg[3] = {d->workgroup, 1, 1};
    emit(&(rs_event){.type = RS_EV_APP_DISPATCH, .thread = thread, .label = d->name, .kernel = d->kernel,
                     .agent = rt_queue_agent(q), .queue = rt_queue_id(q), .signal = rt_signal_id(sig),
                     .packets = packets, .kernel_packets = d->kernel_packets > 1 ? d->kernel_packets : 0,
                     .graph = d->graph, .grid = grid, .workgroup = wg, .args = (const char *const *)d->args.names,
                     .nargs = d->args.n});
    int rc = launch(q, pk, (size_t)packets);
    app.hooks->submitted();
    free(pk);
    if (rc != RT_OK && rc != RT_ERR_NEVER_ENDED) {
        port_fail(app.p, "dispatch %s: the launch failed", d->name);
        rt_signal_destroy(sig);
        return;
    }
    /* a wait that blocks (CMP-4: a loop that never ended) lets the others'
     * launches go on without this thread (yield_in_launch) */
    bool completed = rt_signal_value(sig) < 1;
    if (!completed) {
        set_thread_state(THREAD_WAITS);
        completed = rt_signal_wait_below(sig, 1, rc == RT_OK ? wait_normal_ns : wait_after_error_ns);
        set_thread_state(THREAD_RUNS);
    }
    if (!completed) {
        emit(&(rs_event){.type = RS_EV_APP_TIMEOUT, .thread = thread, .label = d->name, .signal = rt_signal_id(sig)});
        load_signal(thread, d, sig);
        rt_signal_destroy(sig);
        return;
    }
    emit(&(rs_event){.type = RS_EV_APP_COMPLETE, .thread = thread, .label = d->name, .signal = rt_signal_id(sig)});
    load_signal(thread, d, sig);
    rt_signal_destroy(sig);
    /* The application reads each of the dispatch's buffers back, whole. */
    for (size_t a = 0; a < d->args.n; a++) {
        bool seen = false;
        for (size_t b = 0; b < a; b++) seen = seen || strcmp(d->args.names[a], d->args.names[b]) == 0;
        if (seen) continue;
        size_t bi;
        rs_spec_buffer_named(spec(), &bi, d->args.names[a]);
        pthread_mutex_lock(&app.p->mu);
        rt_alloc al = app.buffers[bi];
        pthread_mutex_unlock(&app.p->mu);
        void *data = malloc(al.size);
        if (data == NULL || rt_read_memory(app.p->rt, &al, data, al.size) != RT_OK) {
            free(data);
            port_fail(app.p, "dispatch %s: reading buffer %s back failed", d->name, d->args.names[a]);
            return;
        }
        emit(&(rs_event){.type = RS_EV_APP_READBACK, .thread = thread, .label = d->name, .buffer = d->args.names[a],
                         .contents = data, .contents_bytes = al.size});
        free(data);
    }
}

static void mark(size_t di, bool *flags) {
    pthread_mutex_lock(&app.p->mu);
    flags[di] = true;
    pthread_cond_broadcast(&app.p->cv);
    pthread_mutex_unlock(&app.p->mu);
}

int app_submit_from_tool(size_t di, const rs_event *from) {
    const rs_spec_dispatch *d = &spec()->dispatches[di];
    uint64_t thread = rs_app_thread();
    rt_queue *q = queue_for(d);
    rt_signal *sig = rt_signal_create(app.p->rt, 1);
    rt_packet *pk = NULL;
    int packets = q != NULL && sig != NULL ? build_packets(d, sig, &pk) : -1;
    if (packets < 0) {
        rt_signal_destroy(sig);
        return -1;
    }
    rs_event e = *from;
    e.type = RS_EV_TOOL_DISPATCH;
    e.thread = thread;
    e.label = d->name;
    e.kernel = d->kernel;
    e.agent = rt_queue_agent(q);
    e.queue = rt_queue_id(q);
    e.signal = rt_signal_id(sig);
    e.args = (const char *const *)d->args.names;
    e.nargs = d->args.n;
    emit(&e);
    mark(di, app.p->started); /* a pass waiting on a `during` sees it (tool.c) */
    /* the tool knows its own dispatch's signal: its callbacks load that one
     * (the tool puts the outer dispatch's back when this returns) */
    app.hooks->submitting(di, sig);
    int rc = launch(q, pk, (size_t)packets); /* launched as the application does (COR-1), with its yield */
    free(pk);
    bool done = rc == RT_OK && rt_signal_wait_below(sig, 1, wait_normal_ns);
    mark(di, app.p->completed);
    if (done) emit(&(rs_event){.type = RS_EV_TOOL_COMPLETE, .thread = thread, .label = d->name, .signal = rt_signal_id(sig)});
    rt_signal_destroy(sig);
    /* Its own loop never ended (CMP-4): the tool would wait for ever; it
     * gives up as the application does, without tool_complete. */
    if (rc == RT_ERR_NEVER_ENDED) return 0;
    return done ? 0 : -1;
}

/* free_buffer frees buffer i on the calling thread (an application thread,
 * or a tool's callback on one), recording it. */
static void free_buffer(size_t i) {
    const rs_spec_buffer *b = &spec()->buffers[i];
    pthread_mutex_lock(&app.p->mu);
    rt_alloc al = app.buffers[i];
    bool was_live = app.live[i];
    app.live[i] = false;
    pthread_mutex_unlock(&app.p->mu);
    if (!was_live) {
        port_fail(app.p, "free %s: the buffer is not allocated", b->name);
        return;
    }
    app.hooks->allocated(i, &al, true); /* allocation tracing sees the free as it begins */
    if (rt_free_memory(app.p->rt, &al, record_free, (void *)b->name) != RT_OK) port_fail(app.p, "free %s failed", b->name);
}

static void free_after(size_t di) {
    const char *name = spec()->dispatches[di].name;
    for (size_t i = 0; i < spec()->nbuffers; i++) {
        const rs_spec_buffer *b = &spec()->buffers[i];
        if (b->free_after != NULL && strcmp(b->free_after, name) == 0) free_buffer(i);
    }
}

int app_memory_from_tool(bool alloc, size_t buffer) {
    if (buffer >= spec()->nbuffers) return -1;
    pthread_mutex_lock(&app.p->mu);
    bool *done = alloc ? &app.tool_allocated[buffer] : &app.tool_freed[buffer];
    bool first = !*done;
    *done = true;
    pthread_mutex_unlock(&app.p->mu);
    if (!first) return 0; /* once in a run: a plan's action comes in every dispatch that follows the plan */
    if (!alloc) {
        free_buffer(buffer);
        return 0;
    }
    return allocate(buffer);
}

/* alloc_after makes the buffers allocated once this dispatch completed,
 * on its thread, after its frees (so the runtime may hand their memory on). */
static void alloc_after(size_t di) {
    const char *name = spec()->dispatches[di].name;
    for (size_t i = 0; i < spec()->nbuffers; i++) {
        const rs_spec_buffer *b = &spec()->buffers[i];
        if (b->alloc_after != NULL && strcmp(b->alloc_after, name) == 0) allocate(i);
    }
}

typedef struct {
    uint64_t thread;
} thread_arg;

static void *run_thread(void *arg) {
    uint64_t thread = ((thread_arg *)arg)->thread;
    rs_set_app_thread(thread);
    for (size_t i = 0; i < spec()->ndispatches; i++) {
        const rs_spec_dispatch *d = &spec()->dispatches[i];
        if (d->thread != thread || d->by_tool) continue; /* by_tool: the tool writes it */
        if (!wait_to_start(d)) {
            port_fail(app.p, "dispatch %s: what it waits for never happened", d->name);
        } else {
            dispatch(thread, i);
        }
        pthread_mutex_lock(&app.p->mu);
        app.p->completed[i] = true;
        pthread_cond_broadcast(&app.p->cv);
        pthread_mutex_unlock(&app.p->mu);
        free_after(i);
        alloc_after(i);
        app.hooks->completed(i);
    }
    set_thread_state(THREAD_DONE);
    return NULL;
}

int app_run(port *p, const app_hooks *hooks) {
    memset(&app, 0, sizeof app);
    app.p = p;
    app.hooks = hooks;
    const rs_spec *s = p->s;
    app.buffers = calloc(s->nbuffers + 1, sizeof *app.buffers);
    app.live = calloc(s->nbuffers + 1, sizeof *app.live);
    app.tool_freed = calloc(s->nbuffers + 1, sizeof *app.tool_freed);
    app.tool_allocated = calloc(s->nbuffers + 1, sizeof *app.tool_allocated);
    if (app.buffers == NULL || app.live == NULL || app.tool_freed == NULL || app.tool_allocated == NULL) {
        port_fail(p, "out of memory");
        return -1;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&app.threads_mu, NULL);
    pthread_cond_init(&app.threads_cv, &ca);
    pthread_condattr_destroy(&ca);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nbuffers; i++) {
        /* alloc_after: once that dispatch completed; by_tool: when the tool says */
        if (s->buffers[i].alloc_after == NULL && !s->buffers[i].by_tool) rc = allocate(i);
    }
    /* one thread per distinct thread number, started in increasing order */
    uint64_t *threads = calloc(s->ndispatches + 1, sizeof *threads);
    size_t nthreads = 0;
    for (size_t i = 0; rc == 0 && threads != NULL && i < s->ndispatches; i++) {
        if (s->dispatches[i].by_tool) continue;
        bool seen = false;
        for (size_t k = 0; k < nthreads; k++) seen = seen || threads[k] == s->dispatches[i].thread;
        if (!seen) threads[nthreads++] = s->dispatches[i].thread;
    }
    for (size_t a = 0; a < nthreads; a++) {
        for (size_t b = a + 1; b < nthreads; b++) {
            if (threads[b] < threads[a]) { uint64_t t = threads[a]; threads[a] = threads[b]; threads[b] = t; }
        }
    }
    pthread_t *tids = calloc(nthreads + 1, sizeof *tids);
    thread_arg *args = calloc(nthreads + 1, sizeof *args);
    /* every thread runs from the start, so that the first launch yields to
     * a thread not yet scheduled; one that cannot start is done */
    app.threads = calloc(nthreads + 1, sizeof *app.threads);
    for (size_t k = 0; app.threads != NULL && k < nthreads; k++) {
        app.threads[k] = (app_thread){.thread = threads[k], .state = THREAD_RUNS};
    }
    app.nthreads = app.threads != NULL ? nthreads : 0;
    size_t started = 0;
    for (size_t k = 0; tids != NULL && args != NULL && k < nthreads; k++) {
        args[k].thread = threads[k];
        if (pthread_create(&tids[k], NULL, run_thread, &args[k]) != 0) {
            port_fail(p, "cannot start thread %llu", (unsigned long long)threads[k]);
            break;
        }
        started++;
    }
    pthread_mutex_lock(&app.threads_mu);
    for (size_t k = started; k < app.nthreads; k++) app.threads[k].state = THREAD_DONE;
    pthread_cond_broadcast(&app.threads_cv);
    pthread_mutex_unlock(&app.threads_mu);
    for (size_t k = 0; k < started; k++) pthread_join(tids[k], NULL);
    free(tids);
    free(args);
    free(threads);
    pthread_mutex_lock(&app.threads_mu);
    free(app.threads);
    app.threads = NULL;
    app.nthreads = 0;
    pthread_mutex_unlock(&app.threads_mu);
    pthread_cond_destroy(&app.threads_cv);
    pthread_mutex_destroy(&app.threads_mu);
    /* At the end the application reads every live buffer. */
    for (size_t i = 0; rc == 0 && i < s->nbuffers; i++) {
        if (!app.live[i]) continue;
        void *data = malloc(app.buffers[i].size);
        if (data == NULL || rt_read_memory(p->rt, &app.buffers[i], data, app.buffers[i].size) != RT_OK) {
            port_fail(p, "reading buffer %s failed", s->buffers[i].name);
        } else {
            emit(&(rs_event){.type = RS_EV_APP_MEMORY, .buffer = s->buffers[i].name, .contents = data,
                             .contents_bytes = app.buffers[i].size});
        }
        free(data);
    }
    free(app.buffers);
    free(app.live);
    free(app.tool_freed);
    free(app.tool_allocated);
    free(app.queues);
    return rc != 0 || p->failed ? -1 : 0;
}
