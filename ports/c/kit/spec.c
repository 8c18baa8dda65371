/* The spec as the runner sends it (docs/driver-protocol.md, "Spec"), read
 * into plain structs. Unknown keys are refused so that a newer runner is
 * never misread; `expect` is skipped whole: a port must not see what the
 * run is expected to show. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "rs_kit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *err;
    size_t errlen;
    bool failed;
} ctx;

static void bad(ctx *c, const char *path, const char *fmt, ...) {
    if (c->failed) return;
    c->failed = true;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "spec: %s: %s", path, msg);
}

/* known checks that obj is an object with only the given keys. */
static bool known(ctx *c, const rs_json *obj, const char *path, const char *const *keys) {
    if (obj == NULL || obj->kind != RS_JSON_OBJECT) {
        bad(c, path, "want an object");
        return false;
    }
    for (size_t i = 0; i < obj->len; i++) {
        bool ok = false;
        for (const char *const *k = keys; *k != NULL; k++) ok = ok || strcmp(*k, obj->keys[i]) == 0;
        if (!ok) {
            bad(c, path, "unknown key \"%s\"", obj->keys[i]);
            return false;
        }
    }
    return true;
}

static char *dup_str(ctx *c, const rs_json *v, const char *path) {
    if (v == NULL) return NULL;
    if (v->kind != RS_JSON_STRING) { bad(c, path, "want a string"); return NULL; }
    char *s = strdup(v->text);
    if (s == NULL) bad(c, path, "out of memory");
    return s;
}

static bool get_u64(ctx *c, const rs_json *v, const char *path, uint64_t *out) {
    if (v == NULL) return false;
    if (v->kind != RS_JSON_NUMBER || v->text[0] == '-' || strpbrk(v->text, ".eE") != NULL) {
        bad(c, path, "want a non-negative integer");
        return false;
    }
    errno = 0;
    unsigned long long x = strtoull(v->text, NULL, 10);
    if (errno != 0) { bad(c, path, "out of range"); return false; }
    *out = (uint64_t)x;
    return true;
}

static bool get_i64(ctx *c, const rs_json *v, const char *path, int64_t *out) {
    if (v == NULL) return false;
    if (v->kind != RS_JSON_NUMBER || strpbrk(v->text, ".eE") != NULL) {
        bad(c, path, "want an integer");
        return false;
    }
    errno = 0;
    long long x = strtoll(v->text, NULL, 10);
    if (errno != 0) { bad(c, path, "out of range"); return false; }
    *out = (int64_t)x;
    return true;
}

static bool get_bool(ctx *c, const rs_json *v, const char *path, bool *out) {
    if (v == NULL) return false;
    if (v->kind != RS_JSON_BOOL) { bad(c, path, "want true or false"); return false; }
    *out = v->boolean;
    return true;
}

static void get_names(ctx *c, const rs_json *v, const char *path, rs_names *out) {
    if (v == NULL) return;
    if (v->kind != RS_JSON_ARRAY) { bad(c, path, "want a list of names"); return; }
    out->names = calloc(v->len + 1, sizeof *out->names);
    if (out->names == NULL) { bad(c, path, "out of memory"); return; }
    for (size_t i = 0; i < v->len; i++) {
        out->names[i] = dup_str(c, v->items[i], path);
        if (out->names[i] == NULL) return;
        out->n++;
    }
}

static void free_names(rs_names *n) {
    for (size_t i = 0; i < n->n; i++) free(n->names[i]);
    free(n->names);
}

/* array returns the items of an array (count in *n), or NULL. */
static rs_json **array(ctx *c, const rs_json *v, const char *path, size_t *n) {
    *n = 0;
    if (v == NULL) return NULL;
    if (v->kind != RS_JSON_ARRAY) { bad(c, path, "want a list"); return NULL; }
    *n = v->len;
    return v->items;
}

static void *alloc_n(ctx *c, size_t n, size_t size, const char *path) {
    void *p = calloc(n == 0 ? 1 : n, size);
    if (p == NULL) bad(c, path, "out of memory");
    return p;
}

static const char *const agent_keys[] = {"name", "kind", "snapshot_limit", "restore_fails_at", NULL};
static const char *const context_keys[] = {"name", "start", "stop_after", "services", NULL};
static const char *const service_keys[] = {"kernel_replay", "counter_collection", "kernel_trace", "device_counting",
                                           "pc_sampling", "spm", "thread_trace", "external_correlation", NULL};
static const char *const none_keys[] = {NULL};
static const char *const replay_keys[] = {"operations", NULL};
static const char *const counter_keys[] = {"counters", NULL};
static const char *const external_keys[] = {"mode", "value", NULL};
static const char *const tool_keys[] = {"plan", "misuse", "configure_twice", NULL};
static const char *const plan_keys[] = {"passes", "continue", "local", "user_data", "write_user_data_in_pass",
                                        "collect", "actions", NULL};
static const char *const collect_keys[] = {"pass", "contexts", NULL};
static const char *const action_keys[] = {"in", "pass", "call", "context", "dispatch", "buffer", NULL};
static const char *const continue_keys[] = {"stop_after", "always", "converge", NULL};
static const char *const converge_keys[] = {"counter", "at_most", NULL};
static const char *const local_keys[] = {"pass", "start", "stop", NULL};
static const char *const misuse_keys[] = {"call", "context", "in", "pass", NULL};
static const char *const app_keys[] = {"buffers", "dispatches", NULL};
static const char *const buffer_keys[] = {"name", "agent", "kind", "elements", "fill", "values", "free_after",
                                          "alloc_after", "by_tool", NULL};
static const char *const dispatch_keys[] = {"name", "kernel", "agent", "queue", "thread", "args", "scalar", "grid",
                                            "workgroup", "packets", "kernel_packets", "barriers_between", "graph", "by_tool", "plan",
                                            "during", "after", NULL};
static const char *const during_keys[] = {"dispatch", "pass", NULL};
static const char *const limits_keys[] = {"max_passes", NULL};
static const char *const top_keys[] = {"version", "name", "description", "rules", "requires", "agents", "contexts",
                                       "tool", "application", "expect", "limits", NULL};

/* read_window reads a callback window; record says RECORD is one too (a
 * tool action may be made from a service's record within a pass). */
static bool read_window(ctx *c, const rs_json *v, const char *path, rs_window *w, bool record) {
    static const char *const names[] = {"CONFIG_ENTER", "CONFIG_EXIT", "PASS_ENTER", "PASS_EXIT", "RECORD"};
    if (v == NULL || v->kind != RS_JSON_STRING) { bad(c, path, "want CONFIG_ENTER, CONFIG_EXIT, PASS_ENTER or PASS_EXIT"); return false; }
    for (int i = 0; i < (record ? 5 : 4); i++) {
        if (strcmp(names[i], v->text) == 0) { *w = (rs_window)i; return true; }
    }
    bad(c, path, "unknown window %s", v->text);
    return false;
}

static void read_plan(ctx *c, const rs_json *v, rs_spec_plan *p) {
    memset(p, 0, sizeof *p);
    p->passes = RS_PASSES_NONE;
    if (v == NULL) return;
    if (!known(c, v, "plan", plan_keys)) return;
    const rs_json *passes = rs_json_get(v, "passes");
    if (passes != NULL) {
        if (passes->kind == RS_JSON_STRING && strcmp(passes->text, "groups") == 0) p->passes = RS_PASSES_GROUPS;
        else if (passes->kind == RS_JSON_STRING && strcmp(passes->text, "none") == 0) p->passes = RS_PASSES_NONE;
        else if (get_u64(c, passes, "plan.passes", &p->pass_number)) p->passes = RS_PASSES_NUMBER;
    }
    const rs_json *cont = rs_json_get(v, "continue");
    if (cont != NULL && known(c, cont, "plan.continue", continue_keys)) {
        bool always = false;
        const rs_json *conv = rs_json_get(cont, "converge");
        if (get_u64(c, rs_json_get(cont, "stop_after"), "plan.continue.stop_after", &p->stop_after)) {
            p->cont = RS_CONTINUE_STOP_AFTER;
        } else if (get_bool(c, rs_json_get(cont, "always"), "plan.continue.always", &always) && always) {
            p->cont = RS_CONTINUE_ALWAYS;
        } else if (conv != NULL && known(c, conv, "plan.continue.converge", converge_keys)) {
            p->cont = RS_CONTINUE_CONVERGE;
            p->converge_counter = dup_str(c, rs_json_get(conv, "counter"), "converge.counter");
            get_u64(c, rs_json_get(conv, "at_most"), "converge.at_most", &p->converge_at_most);
        }
    }
    size_t n;
    rs_json **items = array(c, rs_json_get(v, "local"), "plan.local", &n);
    if (items != NULL) {
        p->local = alloc_n(c, n, sizeof *p->local, "plan.local");
        for (size_t i = 0; p->local != NULL && i < n; i++) {
            if (!known(c, items[i], "plan.local[]", local_keys)) break;
            get_i64(c, rs_json_get(items[i], "pass"), "plan.local[].pass", &p->local[i].pass);
            get_names(c, rs_json_get(items[i], "start"), "plan.local[].start", &p->local[i].start);
            get_names(c, rs_json_get(items[i], "stop"), "plan.local[].stop", &p->local[i].stop);
            p->nlocal++;
        }
    }
    items = array(c, rs_json_get(v, "collect"), "plan.collect", &n);
    if (items != NULL) {
        p->collect = alloc_n(c, n, sizeof *p->collect, "plan.collect");
        for (size_t i = 0; p->collect != NULL && i < n; i++) {
            if (!known(c, items[i], "plan.collect[]", collect_keys)) break;
            get_i64(c, rs_json_get(items[i], "pass"), "plan.collect[].pass", &p->collect[i].pass);
            get_names(c, rs_json_get(items[i], "contexts"), "plan.collect[].contexts", &p->collect[i].contexts);
            p->ncollect++;
        }
    }
    items = array(c, rs_json_get(v, "actions"), "plan.actions", &n);
    if (items != NULL) {
        p->actions = alloc_n(c, n, sizeof *p->actions, "plan.actions");
        for (size_t i = 0; p->actions != NULL && i < n; i++) {
            rs_spec_action *a = &p->actions[i];
            if (!known(c, items[i], "plan.actions[]", action_keys)) break;
            p->nactions++;
            if (!read_window(c, rs_json_get(items[i], "in"), "plan.actions[].in", &a->in, true)) break;
            get_i64(c, rs_json_get(items[i], "pass"), "plan.actions[].pass", &a->pass);
            const rs_json *call = rs_json_get(items[i], "call");
            if (call == NULL || call->kind != RS_JSON_STRING) { bad(c, "plan.actions[].call", "missing"); break; }
            if (strcmp(call->text, "start_context") == 0) a->call = RS_ACTION_START_CONTEXT;
            else if (strcmp(call->text, "stop_context") == 0) a->call = RS_ACTION_STOP_CONTEXT;
            else if (strcmp(call->text, "dispatch") == 0) a->call = RS_ACTION_DISPATCH;
            else if (strcmp(call->text, "free") == 0) a->call = RS_ACTION_FREE;
            else if (strcmp(call->text, "alloc") == 0) a->call = RS_ACTION_ALLOC;
            else { bad(c, "plan.actions[].call", "unknown call %s", call->text); break; }
            a->context = dup_str(c, rs_json_get(items[i], "context"), "plan.actions[].context");
            a->dispatch = dup_str(c, rs_json_get(items[i], "dispatch"), "plan.actions[].dispatch");
            a->buffer = dup_str(c, rs_json_get(items[i], "buffer"), "plan.actions[].buffer");
        }
    }
    p->has_user_data = get_u64(c, rs_json_get(v, "user_data"), "plan.user_data", &p->user_data);
    get_bool(c, rs_json_get(v, "write_user_data_in_pass"), "plan.write_user_data_in_pass", &p->write_user_data_in_pass);
}

static void free_plan(rs_spec_plan *p) {
    free(p->converge_counter);
    for (size_t i = 0; i < p->ncollect; i++) free_names(&p->collect[i].contexts);
    free(p->collect);
    for (size_t i = 0; i < p->nactions; i++) {
        free(p->actions[i].context);
        free(p->actions[i].dispatch);
        free(p->actions[i].buffer);
    }
    free(p->actions);
    for (size_t i = 0; i < p->nlocal; i++) {
        free_names(&p->local[i].start);
        free_names(&p->local[i].stop);
    }
    free(p->local);
}

static void read_context(ctx *c, const rs_json *v, rs_spec_context *x) {
    if (!known(c, v, "contexts[]", context_keys)) return;
    x->name = dup_str(c, rs_json_get(v, "name"), "contexts[].name");
    x->start = true;
    get_bool(c, rs_json_get(v, "start"), "contexts[].start", &x->start);
    x->stop_after = dup_str(c, rs_json_get(v, "stop_after"), "contexts[].stop_after");
    const rs_json *sv = rs_json_get(v, "services");
    if (!known(c, sv, "contexts[].services", service_keys)) return;
    const rs_json *k;
    if ((k = rs_json_get(sv, "kernel_replay")) != NULL && known(c, k, "services.kernel_replay", replay_keys)) {
        x->has_kernel_replay = true;
        get_names(c, rs_json_get(k, "operations"), "services.kernel_replay.operations", &x->replay_operations);
    }
    if ((k = rs_json_get(sv, "counter_collection")) != NULL && known(c, k, "services.counter_collection", counter_keys)) {
        x->has_counter_collection = true;
        get_names(c, rs_json_get(k, "counters"), "services.counter_collection.counters", &x->counters);
    }
    if ((k = rs_json_get(sv, "device_counting")) != NULL && known(c, k, "services.device_counting", counter_keys)) {
        x->has_device_counting = true;
        get_names(c, rs_json_get(k, "counters"), "services.device_counting.counters", &x->device_counters);
    }
    if ((k = rs_json_get(sv, "kernel_trace")) != NULL) x->has_kernel_trace = known(c, k, "services.kernel_trace", none_keys);
    if ((k = rs_json_get(sv, "pc_sampling")) != NULL) x->has_pc_sampling = known(c, k, "services.pc_sampling", none_keys);
    if ((k = rs_json_get(sv, "spm")) != NULL) x->has_spm = known(c, k, "services.spm", none_keys);
    if ((k = rs_json_get(sv, "thread_trace")) != NULL) x->has_thread_trace = known(c, k, "services.thread_trace", none_keys);
    if ((k = rs_json_get(sv, "external_correlation")) != NULL && known(c, k, "services.external_correlation", external_keys)) {
        x->has_external_correlation = true;
        const rs_json *mode = rs_json_get(k, "mode");
        if (mode == NULL || mode->kind != RS_JSON_STRING ||
            (strcmp(mode->text, "increment") != 0 && strcmp(mode->text, "fixed") != 0)) {
            bad(c, "services.external_correlation.mode", "want increment or fixed");
            return;
        }
        x->external_increment = strcmp(mode->text, "increment") == 0;
        get_u64(c, rs_json_get(k, "value"), "services.external_correlation.value", &x->external_value);
    }
}

static void read_dispatch(ctx *c, const rs_json *v, rs_spec_dispatch *d) {
    if (!known(c, v, "dispatches[]", dispatch_keys)) return;
    d->name = dup_str(c, rs_json_get(v, "name"), "dispatches[].name");
    d->kernel = dup_str(c, rs_json_get(v, "kernel"), "dispatches[].kernel");
    d->agent = dup_str(c, rs_json_get(v, "agent"), "dispatches[].agent");
    d->queue = dup_str(c, rs_json_get(v, "queue"), "dispatches[].queue");
    if (d->queue == NULL && !c->failed) d->queue = strdup("q0");
    d->thread = 1;
    get_u64(c, rs_json_get(v, "thread"), "dispatches[].thread", &d->thread);
    get_names(c, rs_json_get(v, "args"), "dispatches[].args", &d->args);
    int64_t scalar = 0;
    if (get_i64(c, rs_json_get(v, "scalar"), "dispatches[].scalar", &scalar)) d->scalar = (int32_t)scalar;
    uint64_t u = 0;
    if (get_u64(c, rs_json_get(v, "grid"), "dispatches[].grid", &u)) d->grid = (uint32_t)u;
    d->workgroup = 64;
    if (get_u64(c, rs_json_get(v, "workgroup"), "dispatches[].workgroup", &u)) d->workgroup = (uint32_t)u;
    d->packets = 1;
    if (get_u64(c, rs_json_get(v, "packets"), "dispatches[].packets", &u)) d->packets = (int)u;
    d->kernel_packets = 1;
    if (get_u64(c, rs_json_get(v, "kernel_packets"), "dispatches[].kernel_packets", &u)) d->kernel_packets = (int)u;
    if (d->kernel_packets < 1) d->kernel_packets = 1;
    get_bool(c, rs_json_get(v, "barriers_between"), "dispatches[].barriers_between", &d->barriers_between);
    int least = d->barriers_between ? 2 * d->kernel_packets - 1 : d->kernel_packets;
    if (d->packets < least) d->packets = least;
    get_bool(c, rs_json_get(v, "graph"), "dispatches[].graph", &d->graph);
    get_bool(c, rs_json_get(v, "by_tool"), "dispatches[].by_tool", &d->by_tool);
    const rs_json *plan = rs_json_get(v, "plan");
    if (plan != NULL) {
        d->plan = alloc_n(c, 1, sizeof *d->plan, "dispatches[].plan");
        if (d->plan != NULL) read_plan(c, plan, d->plan);
    }
    const rs_json *during = rs_json_get(v, "during");
    if (during != NULL && known(c, during, "dispatches[].during", during_keys)) {
        d->during_dispatch = dup_str(c, rs_json_get(during, "dispatch"), "during.dispatch");
        get_u64(c, rs_json_get(during, "pass"), "during.pass", &d->during_pass);
    }
    d->after = dup_str(c, rs_json_get(v, "after"), "dispatches[].after");
}

rs_spec *rs_spec_parse(const char *json, size_t n, char *err, size_t errlen) {
    rs_json *doc = rs_json_parse(json, n, err, errlen);
    if (doc == NULL) return NULL;
    ctx c = {.err = err, .errlen = errlen};
    rs_spec *s = calloc(1, sizeof *s);
    if (s == NULL) { rs_json_free(doc); snprintf(err, errlen, "out of memory"); return NULL; }
    s->max_passes = 10000;
    if (!known(&c, doc, "spec", top_keys)) goto done;
    uint64_t version = 0;
    if (!get_u64(&c, rs_json_get(doc, "version"), "version", &version) || version != 1) {
        bad(&c, "version", "this driver reads spec version 1");
        goto done;
    }
    s->name = dup_str(&c, rs_json_get(doc, "name"), "name");
    if (s->name == NULL) { bad(&c, "name", "missing"); goto done; }
    get_names(&c, rs_json_get(doc, "rules"), "rules", &s->rules);
    get_names(&c, rs_json_get(doc, "requires"), "requires", &s->requires);

    size_t k;
    rs_json **items = array(&c, rs_json_get(doc, "agents"), "agents", &k);
    s->agents = alloc_n(&c, k, sizeof *s->agents, "agents");
    for (size_t i = 0; s->agents != NULL && i < k; i++) {
        if (!known(&c, items[i], "agents[]", agent_keys)) break;
        s->agents[i].name = dup_str(&c, rs_json_get(items[i], "name"), "agents[].name");
        s->agents[i].kind = dup_str(&c, rs_json_get(items[i], "kind"), "agents[].kind");
        get_u64(&c, rs_json_get(items[i], "snapshot_limit"), "agents[].snapshot_limit", &s->agents[i].snapshot_limit);
        get_u64(&c, rs_json_get(items[i], "restore_fails_at"), "agents[].restore_fails_at", &s->agents[i].restore_fails_at);
        s->nagents++;
    }
    items = array(&c, rs_json_get(doc, "contexts"), "contexts", &k);
    s->contexts = alloc_n(&c, k, sizeof *s->contexts, "contexts");
    for (size_t i = 0; s->contexts != NULL && i < k; i++) {
        s->ncontexts++;
        read_context(&c, items[i], &s->contexts[i]);
    }
    read_plan(&c, NULL, &s->plan);
    const rs_json *tool = rs_json_get(doc, "tool");
    if (tool != NULL && known(&c, tool, "tool", tool_keys)) {
        read_plan(&c, rs_json_get(tool, "plan"), &s->plan);
        get_bool(&c, rs_json_get(tool, "configure_twice"), "tool.configure_twice", &s->configure_twice);
        items = array(&c, rs_json_get(tool, "misuse"), "tool.misuse", &k);
        s->misuse = alloc_n(&c, k, sizeof *s->misuse, "tool.misuse");
        for (size_t i = 0; items != NULL && s->misuse != NULL && i < k; i++) {
            rs_spec_misuse *m = &s->misuse[i];
            if (!known(&c, items[i], "tool.misuse[]", misuse_keys)) break;
            const rs_json *call = rs_json_get(items[i], "call"), *in = rs_json_get(items[i], "in");
            if (call == NULL || call->kind != RS_JSON_STRING || in == NULL || in->kind != RS_JSON_STRING) {
                bad(&c, "tool.misuse[]", "want call and in");
                break;
            }
            m->start = strcmp(call->text, "local_start") == 0;
            if (!m->start && strcmp(call->text, "local_stop") != 0) { bad(&c, "tool.misuse[].call", "unknown call %s", call->text); break; }
            if (!read_window(&c, in, "tool.misuse[].in", &m->in, false)) break;
            m->context = dup_str(&c, rs_json_get(items[i], "context"), "tool.misuse[].context");
            get_u64(&c, rs_json_get(items[i], "pass"), "tool.misuse[].pass", &m->pass);
            s->nmisuse++;
        }
    }
    const rs_json *app = rs_json_get(doc, "application");
    if (!known(&c, app, "application", app_keys)) goto done;
    items = array(&c, rs_json_get(app, "buffers"), "application.buffers", &k);
    s->buffers = alloc_n(&c, k, sizeof *s->buffers, "application.buffers");
    for (size_t i = 0; s->buffers != NULL && i < k; i++) {
        rs_spec_buffer *b = &s->buffers[i];
        if (!known(&c, items[i], "buffers[]", buffer_keys)) break;
        s->nbuffers++;
        b->name = dup_str(&c, rs_json_get(items[i], "name"), "buffers[].name");
        b->agent = dup_str(&c, rs_json_get(items[i], "agent"), "buffers[].agent");
        b->kind = dup_str(&c, rs_json_get(items[i], "kind"), "buffers[].kind");
        if (b->kind == NULL && !c.failed) b->kind = strdup("device");
        get_u64(&c, rs_json_get(items[i], "elements"), "buffers[].elements", &b->elements);
        get_i64(&c, rs_json_get(items[i], "fill"), "buffers[].fill", &b->fill);
        size_t nv;
        rs_json **vals = array(&c, rs_json_get(items[i], "values"), "buffers[].values", &nv);
        if (vals != NULL) {
            b->values = alloc_n(&c, nv, sizeof *b->values, "buffers[].values");
            for (size_t j = 0; b->values != NULL && j < nv; j++) {
                if (get_i64(&c, vals[j], "buffers[].values[]", &b->values[j])) b->nvalues++;
            }
        }
        b->free_after = dup_str(&c, rs_json_get(items[i], "free_after"), "buffers[].free_after");
        b->alloc_after = dup_str(&c, rs_json_get(items[i], "alloc_after"), "buffers[].alloc_after");
        get_bool(&c, rs_json_get(items[i], "by_tool"), "buffers[].by_tool", &b->by_tool);
    }
    items = array(&c, rs_json_get(app, "dispatches"), "application.dispatches", &k);
    s->dispatches = alloc_n(&c, k, sizeof *s->dispatches, "application.dispatches");
    for (size_t i = 0; s->dispatches != NULL && i < k; i++) {
        s->ndispatches++;
        read_dispatch(&c, items[i], &s->dispatches[i]);
    }
    const rs_json *limits = rs_json_get(doc, "limits");
    if (limits != NULL && known(&c, limits, "limits", limits_keys)) {
        get_u64(&c, rs_json_get(limits, "max_passes"), "limits.max_passes", &s->max_passes);
    }
    /* Names must resolve: a driver may trust them afterwards. */
    for (size_t i = 0; !c.failed && i < s->ndispatches; i++) {
        rs_spec_dispatch *d = &s->dispatches[i];
        int nbuf;
        bool scalar;
        if (d->name == NULL || d->kernel == NULL || d->agent == NULL) bad(&c, "dispatches[]", "missing name, kernel or agent");
        else if (!rs_kernel_shape(d->kernel, &nbuf, &scalar)) bad(&c, d->name, "unknown kernel %s", d->kernel);
        else if ((size_t)nbuf != d->args.n) bad(&c, d->name, "kernel %s takes %d buffers", d->kernel, nbuf);
        else if (rs_spec_agent_index(s, d->agent) == s->nagents) bad(&c, d->name, "no agent %s", d->agent);
        for (size_t a = 0; !c.failed && a < d->args.n; a++) {
            if (rs_spec_buffer_named(s, NULL, d->args.names[a]) == NULL) bad(&c, d->name, "no buffer %s", d->args.names[a]);
        }
    }
    for (size_t i = 0; !c.failed && i < s->nbuffers; i++) {
        if (s->buffers[i].name == NULL || s->buffers[i].agent == NULL || rs_spec_agent_index(s, s->buffers[i].agent) == s->nagents) {
            bad(&c, "buffers[]", "a buffer without a name or a known agent");
        }
    }
    for (size_t i = 0; !c.failed && i <= s->ndispatches; i++) {
        const rs_spec_plan *p = i < s->ndispatches ? s->dispatches[i].plan : &s->plan;
        for (size_t j = 0; p != NULL && !c.failed && j < p->nactions; j++) {
            const rs_spec_action *a = &p->actions[j];
            if (a->call != RS_ACTION_FREE && a->call != RS_ACTION_ALLOC) continue;
            const rs_spec_buffer *b = a->buffer != NULL ? rs_spec_buffer_named(s, NULL, a->buffer) : NULL;
            if (b == NULL) bad(&c, "plan.actions[].buffer", "no buffer %s", a->buffer != NULL ? a->buffer : "(missing)");
            else if (a->call == RS_ACTION_ALLOC && !b->by_tool) bad(&c, "plan.actions[].buffer", "buffer %s is not by_tool: the tool does not allocate it", b->name);
        }
    }
done:
    rs_json_free(doc);
    if (c.failed) {
        rs_spec_free(s);
        return NULL;
    }
    return s;
}

void rs_spec_free(rs_spec *s) {
    if (s == NULL) return;
    free(s->name);
    free_names(&s->rules);
    free_names(&s->requires);
    for (size_t i = 0; i < s->nagents; i++) { free(s->agents[i].name); free(s->agents[i].kind); }
    free(s->agents);
    for (size_t i = 0; i < s->ncontexts; i++) {
        rs_spec_context *x = &s->contexts[i];
        free(x->name); free(x->stop_after);
        free_names(&x->replay_operations); free_names(&x->counters); free_names(&x->device_counters);
    }
    free(s->contexts);
    free_plan(&s->plan);
    for (size_t i = 0; i < s->nmisuse; i++) free(s->misuse[i].context);
    free(s->misuse);
    for (size_t i = 0; i < s->nbuffers; i++) {
        rs_spec_buffer *b = &s->buffers[i];
        free(b->name); free(b->agent); free(b->kind); free(b->values); free(b->free_after); free(b->alloc_after);
    }
    free(s->buffers);
    for (size_t i = 0; i < s->ndispatches; i++) {
        rs_spec_dispatch *d = &s->dispatches[i];
        free(d->name); free(d->kernel); free(d->agent); free(d->queue);
        free_names(&d->args);
        if (d->plan != NULL) { free_plan(d->plan); free(d->plan); }
        free(d->during_dispatch); free(d->after);
    }
    free(s->dispatches);
    free(s);
}

const rs_spec_dispatch *rs_spec_dispatch_named(const rs_spec *s, const char *name) {
    for (size_t i = 0; name != NULL && i < s->ndispatches; i++) {
        if (s->dispatches[i].name != NULL && strcmp(s->dispatches[i].name, name) == 0) return &s->dispatches[i];
    }
    return NULL;
}

const rs_spec_plan *rs_spec_plan_for(const rs_spec *s, const char *dispatch) {
    const rs_spec_dispatch *d = rs_spec_dispatch_named(s, dispatch);
    if (d != NULL && d->plan != NULL) return d->plan;
    return &s->plan;
}

const rs_spec_context *rs_spec_context_named(const rs_spec *s, size_t *index, const char *name) {
    for (size_t i = 0; name != NULL && i < s->ncontexts; i++) {
        if (s->contexts[i].name != NULL && strcmp(s->contexts[i].name, name) == 0) {
            if (index != NULL) *index = i;
            return &s->contexts[i];
        }
    }
    return NULL;
}

const rs_spec_buffer *rs_spec_buffer_named(const rs_spec *s, size_t *index, const char *name) {
    for (size_t i = 0; name != NULL && i < s->nbuffers; i++) {
        if (s->buffers[i].name != NULL && strcmp(s->buffers[i].name, name) == 0) {
            if (index != NULL) *index = i;
            return &s->buffers[i];
        }
    }
    return NULL;
}

size_t rs_spec_agent_index(const rs_spec *s, const char *name) {
    for (size_t i = 0; name != NULL && i < s->nagents; i++) {
        if (s->agents[i].name != NULL && strcmp(s->agents[i].name, name) == 0) return i;
    }
    return s->nagents;
}

bool rs_names_has(const rs_names *n, const char *name) {
    for (size_t i = 0; i < n->n; i++) {
        if (strcmp(n->names[i], name) == 0) return true;
    }
    return false;
}

int rs_plan_continue(const rs_spec_plan *p, uint64_t pass, bool converged) {
    switch (p->cont) {
    case RS_CONTINUE_STOP_AFTER:
        return pass >= p->stop_after ? 0 : 1;
    case RS_CONTINUE_CONVERGE:
        /* converged, or the fallback bound that keeps the loop finite */
        return (pass + 1 >= p->converge_at_most || converged) ? 0 : 1;
    default:
        return 1;
    }
}

bool rs_kernel_shape(const char *kernel, int *buffers, bool *scalar) {
    static const struct { const char *name; int buffers; bool scalar; } lib[] = {
        {"increment", 1, false}, {"accumulate", 2, false}, {"atomic_counter", 1, false},
        {"fill", 1, true}, {"saxpy", 2, true}, {"increment_pair", 2, false},
    };
    for (size_t i = 0; i < sizeof lib / sizeof lib[0]; i++) {
        if (strcmp(lib[i].name, kernel) == 0) {
            *buffers = lib[i].buffers;
            *scalar = lib[i].scalar;
            return true;
        }
    }
    return false;
}
