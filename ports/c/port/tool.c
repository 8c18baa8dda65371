/* The spec's tool: it configures contexts on the krs SDK, answers the
 * KERNEL_REPLAY callbacks as the plan says, and records everything it
 * observes, as a rocprofiler-sdk tool library would. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "tool.h"

typedef struct {
    size_t dispatch; /* spec index */
    uint64_t pass;
    const char *counter;
    uint64_t value;
} seen_counter;

typedef struct {
    uint64_t id;
    size_t dispatch;
} id_label;

/* groups: one counter context's counters split for one agent (AGT-1). */
typedef struct {
    uint64_t agent;
    size_t ngroups;
    const char *group[RT_MAX_COUNTERS][RT_MAX_COUNTERS];
    size_t size[RT_MAX_COUNTERS];
} groups;

static struct {
    port *p;
    krs_context_id_t *ids; /* by spec context index */
    groups *split;         /* by spec context index x agent index */
    size_t first_counter_ctx;
    bool has_counter_ctx;
    id_label *labels;
    size_t nlabels, caplabels;
    seen_counter *seen;
    size_t nseen, capseen;
    uint64_t external_next;
    bool *live; /* by spec context index: started globally by the tool */
    id_label *acted; /* (dispatch id, pass) whose first record the tool has had (RECORD actions) */
    size_t nacted, capacted;
    /* The application's buffers as memory-allocation tracing reports
     * them (by spec buffer index); mem guards them and is held across a
     * copy, so that a buffer is not freed while the tool reads it. */
    pthread_mutex_t mem;
    rt_alloc *allocs;
    bool *alive;
} tool;

/* The pass this thread published at PASS ENTER (CB-4), and its dispatch:
 * records are merged on (dispatch id, current_pass), as the spec advises,
 * so a record of another dispatch inside the pass (the tool's own) is not
 * taken for the loop's. -1: none. */
static _Thread_local int64_t published = -1;
static _Thread_local uint64_t published_dispatch;
/* The dispatch this thread is submitting (spec index) and its completion
 * signal, told by the app; while the tool writes one of its own from a
 * callback, that one. */
static _Thread_local size_t submitting = SIZE_MAX;
static _Thread_local rt_signal *submitting_signal;
/* The tool's own dispatches this thread is writing, outermost first: a
 * plan's actions never write one again from inside its own windows. */
enum { max_writing = 32 };
static _Thread_local size_t writing[max_writing];
static _Thread_local size_t nwriting;

static const rs_spec *spec(void) { return tool.p->s; }

static void emit(const rs_event *e) { rs_emit(tool.p->t, e); }

static rs_info info_of(krs_kernel_dispatch_info_t d) {
    return (rs_info){.size = d.size, .kernel_id = d.kernel_id, .private_segment = d.private_segment_size,
                     .group_segment = d.group_segment_size,
                     .workgroup = {d.workgroup_size.x, d.workgroup_size.y, d.workgroup_size.z},
                     .grid = {d.grid_size.x, d.grid_size.y, d.grid_size.z}};
}

static void api(rs_call call, uint64_t ctx, const char *label, krs_status_t st, uint64_t thread) {
    emit(&(rs_event){.type = RS_EV_API, .thread = thread, .context = ctx, .label = label, .call = call,
                     .has_status = true, .status = st});
}

/* where names the replay callback a call is made from (none: op NONE). */
typedef struct {
    rs_op op;
    rs_phase phase;
    bool in_pass;
    uint64_t pass, dispatch;
} where;

/* set_started starts or stops a context globally, from thread (0: while
 * setting up), recording the call and the callback it is made from. */
static void set_started(uint64_t thread, size_t ctx, bool on, where w) {
    krs_status_t st = on ? krs_start_context(tool.ids[ctx]) : krs_stop_context(tool.ids[ctx]);
    if (st == KRS_STATUS_SUCCESS) {
        pthread_mutex_lock(&tool.p->mu);
        tool.live[ctx] = on;
        pthread_mutex_unlock(&tool.p->mu);
    }
    emit(&(rs_event){.type = RS_EV_API, .thread = thread, .context = tool.ids[ctx].handle,
                     .label = spec()->contexts[ctx].name, .call = on ? RS_CALL_START_CONTEXT : RS_CALL_STOP_CONTEXT,
                     .has_status = true, .status = st, .op = w.op, .phase = w.phase, .has_pass = w.in_pass,
                     .pass = w.pass, .dispatch = w.dispatch});
}

/* ---------------------------------------------------------------- labels */

static void remember_label(uint64_t id, size_t dispatch) {
    pthread_mutex_lock(&tool.p->mu);
    if (tool.nlabels == tool.caplabels) {
        size_t cap = tool.caplabels == 0 ? 16 : tool.caplabels * 2;
        id_label *grown = realloc(tool.labels, cap * sizeof *grown);
        if (grown != NULL) { tool.labels = grown; tool.caplabels = cap; }
    }
    if (tool.nlabels < tool.caplabels) tool.labels[tool.nlabels++] = (id_label){id, dispatch};
    pthread_mutex_unlock(&tool.p->mu);
}

/* dispatch_of is the spec dispatch the SDK's id belongs to (SIZE_MAX if unknown). */
static size_t dispatch_of(uint64_t id) {
    size_t d = SIZE_MAX;
    pthread_mutex_lock(&tool.p->mu);
    for (size_t i = 0; i < tool.nlabels; i++) {
        if (tool.labels[i].id == id) d = tool.labels[i].dispatch;
    }
    pthread_mutex_unlock(&tool.p->mu);
    return d;
}

static const char *label_of(size_t d) { return d < spec()->ndispatches ? spec()->dispatches[d].name : NULL; }
static const char *kernel_of(size_t d) { return d < spec()->ndispatches ? spec()->dispatches[d].kernel : NULL; }
static const rs_spec_plan *plan_of(size_t d) { return rs_spec_plan_for(spec(), label_of(d)); }

/* ---------------------------------------------------------------- counter groups (AGT-1) */

static bool agent_has(const rt_agent *a, const char *counter, size_t *block) {
    for (size_t b = 0; b < a->nblocks; b++) {
        for (size_t c = 0; c < a->blocks[b].ncounters; c++) {
            if (strcmp(a->blocks[b].counters[c], counter) == 0) { *block = b; return true; }
        }
    }
    return false;
}

/* split places counters greedily, in request order, into the fewest passes
 * the agent's blocks can serve; counters the agent lacks are dropped. */
static void split(const rt_agent *a, const rs_names *counters, groups *g) {
    memset(g, 0, sizeof *g);
    g->agent = a->id;
    int used[RT_MAX_COUNTERS][8];
    memset(used, 0, sizeof used);
    for (size_t i = 0; i < counters->n; i++) {
        size_t block;
        const char *name = counters->names[i];
        if (!agent_has(a, name, &block) || block >= 8 || a->blocks[block].registers <= 0) continue;
        bool dup = false;
        for (size_t k = 0; k < i; k++) dup = dup || strcmp(counters->names[k], name) == 0;
        if (dup) continue;
        size_t k = 0;
        while (k < g->ngroups && used[k][block] >= a->blocks[block].registers) k++;
        if (k == RT_MAX_COUNTERS) continue;
        if (k == g->ngroups) g->ngroups++;
        g->group[k][g->size[k]++] = name;
        used[k][block]++;
    }
}

static const groups *groups_for(size_t ctx, uint64_t agent) {
    size_t na = spec()->nagents;
    if (agent < 1 || agent > na) return NULL;
    groups *g = &tool.split[ctx * na + (agent - 1)];
    return g->agent == agent ? g : NULL;
}

/* ---------------------------------------------------------------- what the tool sees of memory */

/* copy_memory copies every live buffer of the application from inside the
 * PASS callback w names, as a tool may copy device memory while it holds
 * a callback, and records each copy (tool_memory): the memory a pass
 * starts from (ENTER) and leaves (EXIT), MEM-2, MEM-3, MEM-4. The copies
 * are the tool's, not the SDK's snapshot or restore: the runtime's read of
 * each comes just before its tool_memory on this thread. */
static void copy_memory(where w) {
    pthread_mutex_lock(&tool.mem);
    for (size_t i = 0; tool.allocs != NULL && i < spec()->nbuffers; i++) {
        if (!tool.alive[i]) continue;
        rt_alloc al = tool.allocs[i];
        void *data = malloc(al.size > 0 ? al.size : 1);
        if (data == NULL) break;
        if (rt_read_memory(tool.p->rt, &al, data, al.size) == RT_OK) {
            emit(&(rs_event){.type = RS_EV_TOOL_MEMORY, .thread = rs_app_thread(), .dispatch = w.dispatch,
                             .buffer = spec()->buffers[i].name, .op = w.op, .phase = w.phase, .has_pass = w.in_pass,
                             .pass = w.pass, .contents = data, .contents_bytes = al.size});
        }
        free(data);
    }
    pthread_mutex_unlock(&tool.mem);
}

/* load_signal records the application's completion signal as the tool
 * loads it from inside the callback w names: the application hands it
 * its signal, and until the loop has ended it still reads 1 (CMP-2). */
static void load_signal(where w) {
    if (submitting_signal == NULL) return;
    emit(&(rs_event){.type = RS_EV_TOOL_SIGNAL, .thread = rs_app_thread(), .dispatch = w.dispatch, .op = w.op,
                     .phase = w.phase, .has_pass = w.in_pass, .pass = w.pass, .signal = rt_signal_id(submitting_signal),
                     .has_value = true, .value = rt_signal_value(submitting_signal)});
}

void tool_allocated(size_t buffer, const rt_alloc *a, bool freed) {
    pthread_mutex_lock(&tool.mem);
    if (tool.allocs != NULL && buffer < spec()->nbuffers) {
        tool.allocs[buffer] = *a;
        tool.alive[buffer] = !freed;
    }
    pthread_mutex_unlock(&tool.mem);
}

/* ---------------------------------------------------------------- the tool's callbacks */

static uint64_t pass_count(krs_kernel_dispatch_info_t info, krs_user_data_t ud) {
    size_t d = dispatch_of(info.dispatch_id);
    const rs_spec_plan *pl = plan_of(d);
    uint64_t n = pl->pass_number;
    if (pl->passes == RS_PASSES_GROUPS) { /* one pass per counter group on this agent (AGT-1) */
        n = 1;
        if (tool.has_counter_ctx) {
            const groups *g = groups_for(tool.first_counter_ctx, info.agent_id);
            if (g != NULL && g->ngroups > 1) n = g->ngroups;
        }
    }
    rs_info in = info_of(info);
    emit(&(rs_event){.type = RS_EV_PASS_COUNT, .thread = rs_app_thread(), .dispatch = info.dispatch_id,
                     .agent = info.agent_id, .has_user_data = true, .user_data = ud.value, .info = &in,
                     .has_result = true, .result = (int64_t)n});
    return n;
}

static bool converged(size_t d, const char *counter, uint64_t pass) {
    if (pass == 0 || counter == NULL) return false;
    bool have_now = false, have_before = false;
    uint64_t now = 0, before = 0;
    pthread_mutex_lock(&tool.p->mu);
    for (size_t i = 0; i < tool.nseen; i++) {
        seen_counter *c = &tool.seen[i];
        if (c->dispatch != d || strcmp(c->counter, counter) != 0) continue;
        if (c->pass == pass) { have_now = true; now = c->value; }
        if (c->pass == pass - 1) { have_before = true; before = c->value; }
    }
    pthread_mutex_unlock(&tool.p->mu);
    return have_now && have_before && now == before;
}

static int continue_cb(krs_kernel_dispatch_info_t info, uint64_t pass, uint64_t total, krs_user_data_t ud) {
    size_t d = dispatch_of(info.dispatch_id);
    const rs_spec_plan *pl = plan_of(d);
    int r = rs_plan_continue(pl, pass, pl->cont == RS_CONTINUE_CONVERGE && converged(d, pl->converge_counter, pass));
    rs_info in = info_of(info);
    emit(&(rs_event){.type = RS_EV_CONTINUE, .thread = rs_app_thread(), .dispatch = info.dispatch_id,
                     .has_pass = true, .pass = pass, .has_total = true, .total = total, .has_user_data = true,
                     .user_data = ud.value, .info = &in, .has_result = true, .result = r});
    return r;
}

static void local_call(uint64_t dispatch, bool start, size_t ctx, krs_kernel_replay_context_cb_t fn, rs_op op,
                       rs_phase phase, bool in_pass, uint64_t pass) {
    if (fn == NULL) return; /* nothing to call: the payload did not carry it */
    krs_status_t st = fn(tool.ids[ctx]);
    emit(&(rs_event){.type = RS_EV_LOCAL, .thread = rs_app_thread(), .call = start ? RS_CALL_LOCAL_START : RS_CALL_LOCAL_STOP,
                     .context = tool.ids[ctx].handle, .op = op, .phase = phase, .has_pass = in_pass, .pass = pass,
                     .dispatch = dispatch, .has_status = true, .status = st, .label = spec()->contexts[ctx].name});
}

/* misuse makes the spec's deliberate wrong calls from one window (LCX-2,
 * LCX-7) with the functions a PASS payload carries. */
static void misuse(uint64_t dispatch, rs_window in, uint64_t pass) {
    krs_kernel_replay_context_cb_t start, stop;
    krs_experimental_local_context_functions(&start, &stop);
    bool pass_window = in == RS_WINDOW_PASS_ENTER || in == RS_WINDOW_PASS_EXIT;
    for (size_t i = 0; i < spec()->nmisuse; i++) {
        const rs_spec_misuse *m = &spec()->misuse[i];
        if (m->in != in || (pass_window && m->pass != pass)) continue;
        size_t ctx;
        if (rs_spec_context_named(spec(), &ctx, m->context) == NULL) continue;
        rs_op op = pass_window ? RS_OP_PASS : RS_OP_CONFIG;
        rs_phase ph = (in == RS_WINDOW_CONFIG_ENTER || in == RS_WINDOW_PASS_ENTER) ? RS_PHASE_ENTER : RS_PHASE_EXIT;
        local_call(dispatch, m->start, ctx, m->start ? start : stop, op, ph, pass_window, pass);
    }
}

static void local_toggles(uint64_t dispatch, const krs_callback_tracing_kernel_replay_data_t *pl, const rs_spec_plan *plan) {
    for (size_t i = 0; i < plan->nlocal; i++) {
        const rs_spec_local *lt = &plan->local[i];
        if (lt->pass != -1 && (uint64_t)lt->pass != pl->current_pass) continue;
        for (size_t k = 0; k < lt->stop.n; k++) {
            size_t ctx;
            if (rs_spec_context_named(spec(), &ctx, lt->stop.names[k]) != NULL) {
                local_call(dispatch, false, ctx, pl->replay_stop_context, RS_OP_PASS, RS_PHASE_ENTER, true, pl->current_pass);
            }
        }
        for (size_t k = 0; k < lt->start.n; k++) {
            size_t ctx;
            if (rs_spec_context_named(spec(), &ctx, lt->start.names[k]) != NULL) {
                local_call(dispatch, true, ctx, pl->replay_start_context, RS_OP_PASS, RS_PHASE_ENTER, true, pl->current_pass);
            }
        }
    }
}

/* payload_members names the payload members that are non-zero (API-5, API-6). */
static unsigned payload_members(const krs_callback_tracing_kernel_replay_data_t *p) {
    unsigned m = 0;
    if (p->size != 0) m |= RS_PL_SIZE;
    if (p->dispatch_info.dispatch_id != 0) m |= RS_PL_DISPATCH_INFO;
    if (p->current_pass != 0) m |= RS_PL_CURRENT_PASS;
    if (p->total_passes != 0) m |= RS_PL_TOTAL_PASSES;
    if (p->replay_pass_count != NULL) m |= RS_PL_REPLAY_PASS_COUNT;
    if (p->replay_continue != NULL) m |= RS_PL_REPLAY_CONTINUE;
    if (p->replay_start_context != NULL) m |= RS_PL_REPLAY_START_CONTEXT;
    if (p->replay_stop_context != NULL) m |= RS_PL_REPLAY_STOP_CONTEXT;
    return m;
}

/* wait_for_during holds the end of a pass until every dispatch that must
 * start during it has started, so that overlap is real; on threads that
 * run free, "started" is not yet "ran". A dispatch on another agent may run
 * to completion inside the pass, so the pass waits for it; one on the same
 * agent must wait for the loop (MEM-6), so the pass gives it a moment only:
 * long enough that an SDK without the agent lock would let it run here.
 * Nor does it wait for one that cannot finish before this loop ends: one
 * whose callback wrote a dispatch to this loop's agent (MEM-6, decision 11),
 * which waits for the loop. */
static bool agent_waits_for_loop(const rs_spec_dispatch *self, size_t d) {
    for (size_t j = 0; j < spec()->ndispatches; j++) {
        if (j != d && tool.p->started[j] && !tool.p->completed[j] && strcmp(spec()->dispatches[j].agent, self->agent) == 0 &&
            spec()->dispatches[j].by_tool)
            return true;
    }
    return false;
}

static void wait_for_during(size_t d, uint64_t pass) {
    const rs_spec_dispatch *self = &spec()->dispatches[d];
    for (size_t i = 0; i < spec()->ndispatches; i++) {
        const rs_spec_dispatch *o = &spec()->dispatches[i];
        if (o->during_dispatch == NULL || strcmp(o->during_dispatch, label_of(d)) != 0 || o->during_pass != pass) continue;
        bool same_agent = strcmp(o->agent, self->agent) == 0;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += same_agent ? 0 : 30;
        until.tv_nsec += same_agent ? 20 * 1000000L : 0;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&tool.p->mu);
        while (!tool.p->started[i] && !tool.p->failed) pthread_cond_wait(&tool.p->cv, &tool.p->mu);
        while (!tool.p->completed[i] && !tool.p->failed && !agent_waits_for_loop(self, d)) {
            if (pthread_cond_timedwait(&tool.p->cv, &tool.p->mu, &until) != 0) break;
        }
        pthread_mutex_unlock(&tool.p->mu);
    }
}

static void set_in_pass(size_t d, int64_t pass) {
    if (d >= spec()->ndispatches) return;
    pthread_mutex_lock(&tool.p->mu);
    tool.p->in_pass[d] = pass;
    pthread_cond_broadcast(&tool.p->cv);
    pthread_mutex_unlock(&tool.p->mu);
}

/* dispatch_scoped: the context has a service that consults the per-pass
 * override at dispatch time (SVC-1). */
static bool dispatch_scoped(const rs_spec_context *c) {
    return c->has_counter_collection || c->has_kernel_trace || c->has_spm || c->has_thread_trace;
}

/* collect carries out the plan's per-pass choice of contexts: the listed
 * ones are started locally, every other started context with a
 * dispatch-scoped service stopped (LCX-3 keeps the choice for later passes
 * until the plan changes it). */
static void collect(uint64_t dispatch, const krs_callback_tracing_kernel_replay_data_t *pl, const rs_spec_plan *plan) {
    for (size_t i = 0; i < plan->ncollect; i++) {
        const rs_spec_collect *c = &plan->collect[i];
        if (c->pass != -1 && (uint64_t)c->pass != pl->current_pass) continue;
        for (size_t k = 0; k < spec()->ncontexts; k++) {
            const rs_spec_context *x = &spec()->contexts[k];
            pthread_mutex_lock(&tool.p->mu);
            bool live = tool.live[k];
            pthread_mutex_unlock(&tool.p->mu);
            if (live && dispatch_scoped(x) && !rs_names_has(&c->contexts, x->name)) {
                local_call(dispatch, false, k, pl->replay_stop_context, RS_OP_PASS, RS_PHASE_ENTER, true, pl->current_pass);
            }
        }
        for (size_t k = 0; k < c->contexts.n; k++) {
            size_t ctx;
            if (rs_spec_context_named(spec(), &ctx, c->contexts.names[k]) != NULL) {
                local_call(dispatch, true, ctx, pl->replay_start_context, RS_OP_PASS, RS_PHASE_ENTER, true, pl->current_pass);
            }
        }
    }
}

/* actions makes the plan's calls from inside this callback: global starts
 * and stops of contexts (decision 12), dispatches of the tool's own,
 * written through the application's queues (decision 11), and frees and
 * allocations of buffers, with the application's memory (MEM-4). */
static void actions(const rs_spec_plan *plan, rs_window in, where w) {
    for (size_t i = 0; i < plan->nactions; i++) {
        const rs_spec_action *a = &plan->actions[i];
        if (a->in != in || (w.in_pass && a->pass != -1 && (uint64_t)a->pass != w.pass)) continue;
        size_t ctx;
        switch (a->call) {
        case RS_ACTION_START_CONTEXT:
        case RS_ACTION_STOP_CONTEXT:
            if (rs_spec_context_named(spec(), &ctx, a->context) != NULL) {
                set_started(rs_app_thread(), ctx, a->call == RS_ACTION_START_CONTEXT, w);
            }
            break;
        case RS_ACTION_DISPATCH: {
            const rs_spec_dispatch *d = rs_spec_dispatch_named(spec(), a->dispatch);
            if (d == NULL) break;
            size_t di = (size_t)(d - spec()->dispatches);
            bool again = nwriting == max_writing;
            for (size_t k = 0; k < nwriting; k++) again = again || writing[k] == di;
            if (again) break; /* never from inside its own windows: that would never end */
            /* It is a candidate like any other (MEM-6, clarified
             * 2026-12-01): its CONFIG is answered with its own plan, and a
             * window of its own may nest in this pass and publish its
             * passes; the outer pass comes back after. */
            writing[nwriting++] = di;
            size_t outer = submitting;
            rt_signal *outer_signal = submitting_signal;
            int64_t pub = published;
            uint64_t pub_dispatch = published_dispatch;
            submitting = di;
            rs_event from = {.op = w.op, .phase = w.phase, .has_pass = w.in_pass, .pass = w.pass, .dispatch = w.dispatch};
            int rc = app_submit_from_tool(di, &from);
            submitting = outer;
            submitting_signal = outer_signal;
            published = pub;
            published_dispatch = pub_dispatch;
            nwriting--;
            if (rc != 0) port_fail(tool.p, "the tool's dispatch %s failed", d->name);
            break;
        }
        case RS_ACTION_FREE:
        case RS_ACTION_ALLOC: {
            size_t b;
            if (rs_spec_buffer_named(spec(), &b, a->buffer) == NULL) break;
            if (app_memory_from_tool(a->call == RS_ACTION_ALLOC, b) != 0) {
                port_fail(tool.p, "the tool's %s of buffer %s failed", a->call == RS_ACTION_ALLOC ? "allocation" : "free", a->buffer);
            }
            break;
        }
        }
    }
}

static void on_replay(krs_callback_tracing_record_t rec, krs_user_data_t *ud, void *args) {
    (void)args;
    krs_callback_tracing_kernel_replay_data_t *pl = rec.payload;
    krs_kernel_dispatch_info_t info = pl->dispatch_info;
    bool config = rec.operation == KRS_KERNEL_REPLAY_CONFIG, enter = rec.phase == KRS_CALLBACK_PHASE_ENTER;
    if (config && enter) remember_label(info.dispatch_id, submitting);
    size_t d = dispatch_of(info.dispatch_id);
    const rs_spec_plan *plan = plan_of(d);
    uint64_t thread = rs_app_thread(); /* the thread it really runs on, not what the SDK says (CB-4) */
    rs_op op = config ? RS_OP_CONFIG : RS_OP_PASS;
    rs_phase phase = enter ? RS_PHASE_ENTER : RS_PHASE_EXIT;
    rs_info in = info_of(info);
    rs_corr corr = {rec.correlation_id.internal, rec.correlation_id.external.value, rec.correlation_id.ancestor};
    uint64_t received = ud->value;
    emit(&(rs_event){.type = RS_EV_CALLBACK, .thread = thread, .context = rec.context_id.handle, .op = op,
                     .phase = phase, .dispatch = info.dispatch_id, .agent = info.agent_id, .queue = info.queue_id,
                     .kernel = kernel_of(d), .has_pass = true, .pass = pl->current_pass, .has_total = true,
                     .total = pl->total_passes, .corr = &corr, .has_user_data = true, .user_data = received,
                     .payload = payload_members(pl), .has_payload_size = true, .payload_size = pl->size,
                     .info = &in, .label = label_of(d)});
    where w = {.op = op, .phase = phase, .in_pass = !config, .pass = pl->current_pass, .dispatch = info.dispatch_id};
    if (!config) copy_memory(w); /* first, before anything the tool does here */
    if (!enter) load_signal(w);  /* CMP-2: held back until the loop has ended */
    if (config && enter) {
        misuse(info.dispatch_id, RS_WINDOW_CONFIG_ENTER, 0);
        if (plan->has_user_data) ud->value = plan->user_data; /* UD-1: once, for the whole sequence */
        if (plan->passes != RS_PASSES_NONE) pl->replay_pass_count = pass_count;
        if (plan->cont != RS_CONTINUE_UNSET) pl->replay_continue = continue_cb;
        actions(plan, RS_WINDOW_CONFIG_ENTER, w);
    } else if (config) {
        misuse(info.dispatch_id, RS_WINDOW_CONFIG_EXIT, 0);
        actions(plan, RS_WINDOW_CONFIG_EXIT, w);
    } else if (enter) {
        published = (int64_t)pl->current_pass; /* CB-4: publish the pass for this thread */
        published_dispatch = info.dispatch_id;
        collect(info.dispatch_id, pl, plan);
        local_toggles(info.dispatch_id, pl, plan);
        misuse(info.dispatch_id, RS_WINDOW_PASS_ENTER, pl->current_pass);
        if (plan->write_user_data_in_pass) ud->value = 1000 + pl->current_pass; /* UD-2 */
        /* A dispatch that starts during this pass starts once the pass's
         * local toggles are made: on free threads it could otherwise run to
         * its end before them, outside the situation its spec sets up. */
        set_in_pass(d, (int64_t)pl->current_pass);
        actions(plan, RS_WINDOW_PASS_ENTER, w);
    } else {
        misuse(info.dispatch_id, RS_WINDOW_PASS_EXIT, pl->current_pass);
        actions(plan, RS_WINDOW_PASS_EXIT, w);
        wait_for_during(d, pl->current_pass);
        published = -1; /* CB-4: ordinary dispatches never see a stale pass */
        set_in_pass(d, -1);
    }
    emit(&(rs_event){.type = RS_EV_CALLBACK_RETURN, .thread = thread, .context = rec.context_id.handle, .op = op,
                     .phase = phase, .dispatch = info.dispatch_id, .has_pass = true, .pass = pl->current_pass,
                     .has_user_data = true, .user_data = ud->value, .payload = payload_members(pl),
                     .label = label_of(d)});
}

/* select_counters picks the group of the pass published on this thread: a
 * tool that splits counters over passes collects group i in pass i, no
 * wrap (AGT-1); a list that fits one group is collected on every pass, as a
 * tool sampling the same counters until they converge does. Outside a
 * loop: group 0. */
static size_t select_counters(krs_kernel_dispatch_info_t info, const char **names, size_t max, void *args) {
    size_t ctx = (size_t)(uintptr_t)args;
    const groups *g = groups_for(ctx, info.agent_id);
    if (g == NULL || g->ngroups == 0) return 0;
    bool in_loop = published >= 0 && published_dispatch == info.dispatch_id;
    uint64_t pass = in_loop ? (uint64_t)published : 0;
    size_t d = dispatch_of(info.dispatch_id);
    if (g->ngroups == 1 && plan_of(d)->passes != RS_PASSES_GROUPS) pass = 0;
    if (pass >= g->ngroups) return 0;
    size_t n = g->size[pass] < max ? g->size[pass] : max;
    memcpy(names, g->group[pass], n * sizeof names[0]);
    return n;
}

static rs_service service_of(krs_service_t s) {
    switch (s) {
    case KRS_SERVICE_KERNEL_TRACE: return RS_SVC_KERNEL_TRACE;
    case KRS_SERVICE_COUNTER_COLLECTION: return RS_SVC_COUNTER_COLLECTION;
    case KRS_SERVICE_DEVICE_COUNTING: return RS_SVC_DEVICE_COUNTING;
    case KRS_SERVICE_PC_SAMPLING: return RS_SVC_PC_SAMPLING;
    case KRS_SERVICE_SPM: return RS_SVC_SPM;
    case KRS_SERVICE_THREAD_TRACE: return RS_SVC_THREAD_TRACE;
    }
    return RS_SVC_NONE;
}

/* first_record reports whether this is the first record of the pass, and
 * notes it (pass ids are small: they fit the label's dispatch field). */
static bool first_record(uint64_t dispatch, uint64_t pass) {
    pthread_mutex_lock(&tool.p->mu);
    bool first = true;
    for (size_t i = 0; first && i < tool.nacted; i++) {
        first = !(tool.acted[i].id == dispatch && tool.acted[i].dispatch == pass);
    }
    if (first) {
        if (tool.nacted == tool.capacted) {
            size_t cap = tool.capacted == 0 ? 16 : tool.capacted * 2;
            id_label *grown = realloc(tool.acted, cap * sizeof *grown);
            if (grown != NULL) { tool.acted = grown; tool.capacted = cap; }
        }
        if (tool.nacted < tool.capacted) tool.acted[tool.nacted++] = (id_label){dispatch, (size_t)pass};
    }
    pthread_mutex_unlock(&tool.p->mu);
    return first;
}

static void on_record(const krs_record_t *r, void *args) {
    (void)args;
    size_t d = dispatch_of(r->dispatch_info.dispatch_id);
    bool in_loop = published >= 0 && published_dispatch == r->dispatch_info.dispatch_id;
    if (in_loop && r->service == KRS_SERVICE_COUNTER_COLLECTION && d != SIZE_MAX) {
        pthread_mutex_lock(&tool.p->mu);
        for (size_t i = 0; i < r->counter_count; i++) {
            if (tool.nseen == tool.capseen) {
                size_t cap = tool.capseen == 0 ? 32 : tool.capseen * 2;
                seen_counter *grown = realloc(tool.seen, cap * sizeof *grown);
                if (grown == NULL) break;
                tool.seen = grown;
                tool.capseen = cap;
            }
            tool.seen[tool.nseen++] = (seen_counter){d, (uint64_t)published, r->counters[i].name, r->counters[i].value};
        }
        pthread_mutex_unlock(&tool.p->mu);
    }
    rs_counter cs[RT_MAX_COUNTERS];
    size_t n = r->counter_count < RT_MAX_COUNTERS ? r->counter_count : RT_MAX_COUNTERS;
    for (size_t i = 0; i < n; i++) cs[i] = (rs_counter){r->counters[i].name, r->counters[i].value};
    rs_corr corr = {r->correlation_id.internal, r->correlation_id.external.value, r->correlation_id.ancestor};
    emit(&(rs_event){.type = RS_EV_RECORD, .service = service_of(r->service), .context = r->context_id.handle,
                     .thread = rs_app_thread(), .dispatch = r->dispatch_info.dispatch_id, .agent = r->dispatch_info.agent_id,
                     .kernel = r->kernel_name, .corr = &corr, .start = r->start_timestamp, .end = r->end_timestamp,
                     .counters = cs, .ncounters = n, .has_pass = in_loop, .pass = in_loop ? (uint64_t)published : 0});
    if (in_loop && first_record(r->dispatch_info.dispatch_id, (uint64_t)published)) {
        /* The plan's calls from a service callback within a pass: made
         * from the pass's first record (MEM-6, clarified 2026-12-01). */
        where w = {.in_pass = true, .pass = (uint64_t)published, .dispatch = r->dispatch_info.dispatch_id};
        actions(plan_of(d), RS_WINDOW_RECORD, w);
    }
}

static uint64_t external_id(krs_kernel_dispatch_info_t info, uint64_t internal, void *args) {
    (void)internal;
    const rs_spec_context *c = &spec()->contexts[(size_t)(uintptr_t)args];
    uint64_t id = c->external_value;
    if (c->external_increment) { /* COR-3: a blind tool gets a new id per submit */
        pthread_mutex_lock(&tool.p->mu);
        id = ++tool.external_next;
        pthread_mutex_unlock(&tool.p->mu);
    }
    emit(&(rs_event){.type = RS_EV_CORRELATION, .thread = rs_app_thread(), .dispatch = info.dispatch_id,
                     .has_result = true, .result = (int64_t)id});
    return id;
}

/* COR-1, COR-2: the application's API calls as API tracing shows them,
 * on the thread that makes them: what a dispatch's ids are judged against. */
static void on_api_call(rt_api_call call, krs_callback_phase_t phase, krs_correlation_id_t c, void *args) {
    (void)args;
    rs_call name = call == RT_API_LAUNCH         ? RS_CALL_LAUNCH_KERNEL
                   : call == RT_API_GRAPH_LAUNCH ? RS_CALL_GRAPH_LAUNCH
                                                 : RS_CALL_QUEUE_SUBMIT;
    rs_corr corr = {c.internal, 0, c.ancestor};
    emit(&(rs_event){.type = RS_EV_API_CALL, .thread = rs_app_thread(), .call = name,
                     .phase = phase == KRS_CALLBACK_PHASE_ENTER ? RS_PHASE_ENTER : RS_PHASE_EXIT, .corr = &corr});
}

/* ---------------------------------------------------------------- set-up */

void tool_init(port *p) {
    memset(&tool, 0, sizeof tool);
    tool.p = p;
    pthread_mutex_init(&tool.mem, NULL);
    tool.allocs = calloc(p->s->nbuffers + 1, sizeof *tool.allocs);
    tool.alive = calloc(p->s->nbuffers + 1, sizeof *tool.alive);
    if (tool.allocs == NULL || tool.alive == NULL) port_fail(p, "tool: out of memory");
}

static void configure(size_t i) {
    const rs_spec_context *c = &spec()->contexts[i];
    krs_context_id_t id = tool.ids[i];
    void *arg = (void *)(uintptr_t)i;
    if (c->has_kernel_replay) {
        krs_kernel_replay_operation_t ops[2];
        rs_op traced[2];
        size_t n = 0;
        for (size_t k = 0; k < c->replay_operations.n && n < 2; k++) {
            bool cfg = strcmp(c->replay_operations.names[k], "CONFIG") == 0;
            ops[n] = cfg ? KRS_KERNEL_REPLAY_CONFIG : KRS_KERNEL_REPLAY_PASS;
            traced[n++] = cfg ? RS_OP_CONFIG : RS_OP_PASS;
        }
        krs_status_t st = krs_configure_callback_tracing_service(id, KRS_CALLBACK_TRACING_KERNEL_REPLAY, n ? ops : NULL, n, on_replay, NULL);
        emit(&(rs_event){.type = RS_EV_API, .context = id.handle, .label = c->name, .call = RS_CALL_CONFIGURE_CALLBACK,
                         .has_status = true, .status = st, .domain_kernel_replay = true, .operations = traced,
                         .noperations = n});
    }
    if (c->has_counter_collection) {
        api(RS_CALL_CONFIGURE_COUNTERS, id.handle, c->name, krs_configure_counter_collection(id, select_counters, on_record, arg), 0);
    }
    if (c->has_kernel_trace) api(RS_CALL_CONFIGURE_KERNEL_TRACE, id.handle, c->name, krs_configure_kernel_trace(id, on_record, arg), 0);
    if (c->has_device_counting) {
        api(RS_CALL_CONFIGURE_DEVICE, id.handle, c->name,
            krs_configure_device_counting(id, 0, (const char *const *)c->device_counters.names, c->device_counters.n, on_record, arg), 0);
    }
    if (c->has_pc_sampling) api(RS_CALL_CONFIGURE_PC_SAMPLING, id.handle, c->name, krs_configure_pc_sampling(id, 0, on_record, arg), 0);
    if (c->has_spm) api(RS_CALL_CONFIGURE_SPM, id.handle, c->name, krs_configure_spm(id, on_record, arg), 0);
    if (c->has_thread_trace) api(RS_CALL_CONFIGURE_THREAD_TRACE, id.handle, c->name, krs_configure_thread_trace(id, on_record, arg), 0);
    if (c->has_external_correlation) {
        api(RS_CALL_CONFIGURE_EXTERNAL, id.handle, c->name, krs_configure_external_correlation(id, external_id, arg), 0);
    }
}

/* query_operations asks the domain's name and id queries (API-3, API-4):
 * every id up to one past LAST, the two real names, the two reserved and
 * LAST, the enum's bound. */
static void query_operations(void) {
    for (uint64_t op = 1; op <= 4; op++) {
        const char *name = NULL;
        krs_status_t st = krs_query_callback_tracing_kind_operation_name(KRS_CALLBACK_TRACING_KERNEL_REPLAY, (int)op, &name);
        emit(&(rs_event){.type = RS_EV_API, .call = RS_CALL_OPERATION_NAME, .has_status = true, .status = st,
                         .op_name = st == KRS_STATUS_SUCCESS ? name : NULL, .has_op_id = true, .op_id = op});
    }
    static const char *const names[] = {"CONFIG", "PASS", "SNAPSHOT", "RESTORE", "LAST"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int op = 0;
        krs_status_t st = krs_query_callback_tracing_kind_operation_id(KRS_CALLBACK_TRACING_KERNEL_REPLAY, names[i], &op);
        emit(&(rs_event){.type = RS_EV_API, .call = RS_CALL_OPERATION_ID, .has_status = true, .status = st,
                         .op_name = names[i], .has_op_id = st == KRS_STATUS_SUCCESS, .op_id = (uint64_t)op});
    }
}

void tool_setup(void) {
    const rs_spec *s = spec();
    tool.ids = calloc(s->ncontexts + 1, sizeof *tool.ids);
    tool.split = calloc((s->ncontexts + 1) * (s->nagents + 1), sizeof *tool.split);
    tool.live = calloc(s->ncontexts + 1, sizeof *tool.live);
    if (tool.ids == NULL || tool.split == NULL || tool.live == NULL) {
        port_fail(tool.p, "tool: out of memory");
        return;
    }
    krs_configure_api_tracing(on_api_call, NULL);
    bool replay = false;
    for (size_t i = 0; i < s->ncontexts; i++) {
        const rs_spec_context *c = &s->contexts[i];
        krs_status_t st = krs_create_context(&tool.ids[i]);
        api(RS_CALL_CREATE_CONTEXT, tool.ids[i].handle, c->name, st, 0);
        replay = replay || c->has_kernel_replay;
        if (c->has_counter_collection) {
            if (!tool.has_counter_ctx) tool.first_counter_ctx = i;
            tool.has_counter_ctx = true;
            for (size_t a = 0; a < s->nagents; a++) {
                const rt_agent *ag = krs_query_agent(a + 1);
                if (ag != NULL) split(ag, &c->counters, &tool.split[i * s->nagents + a]);
            }
        }
        configure(i);
    }
    if (s->configure_twice) { /* ACT-5: a second configuration of the domain */
        krs_context_id_t id = {0};
        krs_status_t st = krs_create_context(&id);
        api(RS_CALL_CREATE_CONTEXT, id.handle, "second_replay", st, 0);
        st = krs_configure_callback_tracing_service(id, KRS_CALLBACK_TRACING_KERNEL_REPLAY, NULL, 0, on_replay, NULL);
        emit(&(rs_event){.type = RS_EV_API, .context = id.handle, .label = "second_replay",
                         .call = RS_CALL_CONFIGURE_CALLBACK, .has_status = true, .status = st, .domain_kernel_replay = true});
    }
    if (replay) query_operations();
    for (size_t i = 0; i < s->ncontexts; i++) {
        if (s->contexts[i].start) set_started(0, i, true, (where){0});
    }
}

void tool_fini(void) {
    krs_configure_api_tracing(NULL, NULL);
    free(tool.ids);
    free(tool.split);
    free(tool.live);
    free(tool.labels);
    free(tool.seen);
    free(tool.acted);
    free(tool.allocs);
    free(tool.alive);
    pthread_mutex_destroy(&tool.mem);
    memset(&tool, 0, sizeof tool);
}

void tool_submitting(size_t dispatch, rt_signal *completion) {
    submitting = dispatch;
    submitting_signal = completion;
    pthread_mutex_lock(&tool.p->mu);
    tool.p->started[dispatch] = true;
    pthread_cond_broadcast(&tool.p->cv);
    pthread_mutex_unlock(&tool.p->mu);
}

void tool_submitted(void) { submitting_signal = NULL; }

/* tool_completed stops the contexts the spec stops after this dispatch. */
void tool_completed(size_t dispatch) {
    const char *name = label_of(dispatch);
    for (size_t i = 0; i < spec()->ncontexts; i++) {
        const rs_spec_context *c = &spec()->contexts[i];
        if (c->stop_after != NULL && strcmp(c->stop_after, name) == 0) set_started(rs_app_thread(), i, false, (where){0});
    }
}
