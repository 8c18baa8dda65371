/* The spec's application: buffers, queues, threads and dispatches on the
 * rt runtime, recording what the application observes. It knows nothing
 * of replay: it launches, waits on its signal and reads memory back. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port.h"

typedef struct {
    size_t agent; /* spec index */
    const char *name;
    rt_queue *q;
} named_queue;

static struct {
    port *p;
    rt_alloc *buffers; /* by spec index */
    bool *freed;
    named_queue *queues;
    size_t nqueues;
} app;

/* A dispatch's completion wait: its signal is decremented before the
 * launch returns unless the loop never ends (CMP-4); then the application
 * would block for ever, and gives up after this long. */
static const uint64_t wait_normal_ns = 30 * 1000000000ull, wait_after_error_ns = 50 * 1000000ull;

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

static int allocate(void) {
    for (size_t i = 0; i < spec()->nbuffers; i++) {
        const rs_spec_buffer *b = &spec()->buffers[i];
        uint64_t agent = rs_spec_agent_index(spec(), b->agent) + 1;
        rs_mem_kind kind = kind_of(b->kind);
        uint64_t bytes = b->elements * 4;
        if (rt_alloc_memory(app.p->rt, agent, rt_kind(kind), bytes, &app.buffers[i]) != RT_OK) {
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
        emit(&(rs_event){.type = RS_EV_APP_ALLOC, .buffer = b->name, .agent = agent, .mem_kind = kind,
                         .addr = app.buffers[i].handle, .bytes = bytes});
        int rc = rt_write_memory(app.p->rt, &app.buffers[i], data, bytes);
        free(data);
        if (rc != RT_OK) {
            port_fail(app.p, "buffer %s: writing its initial values failed", b->name);
            return -1;
        }
    }
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

/* wait_to_start: `after` waits for a completion, `during` for a pass. */
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
            return false;
        }
        pthread_cond_wait(&p->cv, &p->mu);
    }
    bool ok = !app.p->failed;
    pthread_mutex_unlock(&app.p->mu);
    return ok;
}

static void dispatch(uint64_t thread, size_t di) {
    const rs_spec_dispatch *d = &spec()->dispatches[di];
    rt_queue *q = queue_for(d);
    rt_signal *sig = rt_signal_create(app.p->rt, 1);
    if (q == NULL || sig == NULL) {
        port_fail(app.p, "dispatch %s: no queue or signal", d->name);
        rt_signal_destroy(sig);
        return;
    }
    int packets = d->packets < 1 ? 1 : d->packets;
    rt_packet *pk = calloc((size_t)packets, sizeof *pk);
    if (pk == NULL) {
        rt_signal_destroy(sig);
        port_fail(app.p, "out of memory");
        return;
    }
    pk[0] = (rt_packet){.type = RT_PACKET_KERNEL, .kernel = d->kernel, .grid = {d->grid, 1, 1},
                        .workgroup = {d->workgroup, 1, 1}, .completion = sig, .from_graph = d->graph};
    for (size_t a = 0; a < d->args.n && a < RT_MAX_ARGS; a++) {
        size_t bi;
        rs_spec_buffer_named(spec(), &bi, d->args.names[a]);
        pk[0].args[pk[0].nargs++] = (rt_arg){.buffer = &app.buffers[bi]};
    }
    int nbuf;
    bool scalar;
    if (rs_kernel_shape(d->kernel, &nbuf, &scalar) && scalar && pk[0].nargs < RT_MAX_ARGS) {
        pk[0].args[pk[0].nargs++] = (rt_arg){.scalar = d->scalar};
    }
    for (int i = 1; i < packets; i++) pk[i] = (rt_packet){.type = RT_PACKET_BARRIER};

    tool_submitting(di);
    uint32_t grid[3] = {d->grid, 1, 1}, wg[3] = {d->workgroup, 1, 1};
    emit(&(rs_event){.type = RS_EV_APP_DISPATCH, .thread = thread, .label = d->name, .kernel = d->kernel,
                     .agent = rt_queue_agent(q), .queue = rt_queue_id(q), .signal = rt_signal_id(sig),
                     .packets = packets, .graph = d->graph, .grid = grid, .workgroup = wg});
    int rc = rt_launch(app.p->rt, q, pk, (size_t)packets);
    free(pk);
    if (rc != RT_OK && rc != RT_ERR_NEVER_ENDED) {
        port_fail(app.p, "dispatch %s: the launch failed", d->name);
        rt_signal_destroy(sig);
        return;
    }
    if (!rt_signal_wait_below(sig, 1, rc == RT_OK ? wait_normal_ns : wait_after_error_ns)) {
        emit(&(rs_event){.type = RS_EV_APP_TIMEOUT, .thread = thread, .label = d->name, .signal = rt_signal_id(sig)});
        rt_signal_destroy(sig);
        return;
    }
    emit(&(rs_event){.type = RS_EV_APP_COMPLETE, .thread = thread, .label = d->name, .signal = rt_signal_id(sig)});
    rt_signal_destroy(sig);
    /* The application reads each of the dispatch's buffers back, whole. */
    for (size_t a = 0; a < d->args.n; a++) {
        bool seen = false;
        for (size_t b = 0; b < a; b++) seen = seen || strcmp(d->args.names[a], d->args.names[b]) == 0;
        if (seen) continue;
        size_t bi;
        rs_spec_buffer_named(spec(), &bi, d->args.names[a]);
        void *data = malloc(app.buffers[bi].size);
        if (data == NULL || rt_read_memory(app.p->rt, &app.buffers[bi], data, app.buffers[bi].size) != RT_OK) {
            free(data);
            port_fail(app.p, "dispatch %s: reading buffer %s back failed", d->name, d->args.names[a]);
            return;
        }
        emit(&(rs_event){.type = RS_EV_APP_READBACK, .thread = thread, .label = d->name, .buffer = d->args.names[a],
                         .contents = data, .contents_bytes = app.buffers[bi].size});
        free(data);
    }
}

static void free_after(size_t di) {
    const char *name = spec()->dispatches[di].name;
    for (size_t i = 0; i < spec()->nbuffers; i++) {
        const rs_spec_buffer *b = &spec()->buffers[i];
        if (b->free_after == NULL || strcmp(b->free_after, name) != 0) continue;
        uint64_t addr = app.buffers[i].handle;
        if (rt_free_memory(app.p->rt, &app.buffers[i]) != RT_OK) port_fail(app.p, "free %s failed", b->name);
        emit(&(rs_event){.type = RS_EV_APP_FREE, .buffer = b->name, .addr = addr});
        app.freed[i] = true;
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
        if (d->thread != thread) continue;
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
        tool_completed(i);
    }
    return NULL;
}

int app_run(port *p) {
    memset(&app, 0, sizeof app);
    app.p = p;
    const rs_spec *s = p->s;
    app.buffers = calloc(s->nbuffers + 1, sizeof *app.buffers);
    app.freed = calloc(s->nbuffers + 1, sizeof *app.freed);
    if (app.buffers == NULL || app.freed == NULL) {
        port_fail(p, "out of memory");
        return -1;
    }
    int rc = allocate();
    /* one thread per distinct thread number, started in increasing order */
    uint64_t *threads = calloc(s->ndispatches + 1, sizeof *threads);
    size_t nthreads = 0;
    for (size_t i = 0; rc == 0 && threads != NULL && i < s->ndispatches; i++) {
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
    size_t started = 0;
    for (size_t k = 0; tids != NULL && args != NULL && k < nthreads; k++) {
        args[k].thread = threads[k];
        if (pthread_create(&tids[k], NULL, run_thread, &args[k]) != 0) {
            port_fail(p, "cannot start thread %llu", (unsigned long long)threads[k]);
            break;
        }
        started++;
    }
    for (size_t k = 0; k < started; k++) pthread_join(tids[k], NULL);
    free(tids);
    free(args);
    free(threads);
    /* At the end the application reads every live buffer. */
    for (size_t i = 0; rc == 0 && i < s->nbuffers; i++) {
        if (app.freed[i]) continue;
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
    free(app.freed);
    free(app.queues);
    return rc != 0 || p->failed ? -1 : 0;
}
