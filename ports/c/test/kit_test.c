/* Unit tests of the driver kit: the JSON reader, the spec reader, the trace
 * writer (profiles, runs, escaping) and the digest. Built with the
 * sanitizers by `make test`. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_kit.h"

static int failures;

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            failures++;                                                \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                              \
            fprintf(stderr, "\n");                                     \
        }                                                              \
    } while (0)

static void test_json(void) {
    char err[256];
    const char *ok = " {\"a\": [1, -2.5e3, true, null, \"x\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}} ";
    rs_json *v = rs_json_parse(ok, strlen(ok), err, sizeof err);
    CHECK(v != NULL, "%s", err);
    if (v != NULL) {
        const rs_json *a = rs_json_get(v, "a");
        CHECK(a != NULL && a->kind == RS_JSON_ARRAY && a->len == 5, "array");
        CHECK(a != NULL && strcmp(a->items[1]->text, "-2.5e3") == 0, "a number is kept as written");
        CHECK(a != NULL && strcmp(a->items[4]->text, "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0, "escapes decode to UTF-8");
        CHECK(rs_json_get(v, "missing") == NULL, "absent key");
        rs_json_free(v);
    }
    static const struct { const char *text, *want; } bad[] = {
        {"", "unexpected end"},
        {"{\"a\":1,\"a\":2}", "twice"},
        {"[1,]", "bad number"},
        {"{\"a\" 1}", "want ':'"},
        {"\"\\ud800\"", "surrogate"},
        {"[1] x", "text after"},
        {"01", "text after"},
        {"\"a\nb\"", "control character"},
        {"tru", "bad literal"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rs_json *b = rs_json_parse(bad[i].text, strlen(bad[i].text), err, sizeof err);
        CHECK(b == NULL && strstr(err, bad[i].want) != NULL, "%s: got %s", bad[i].text, b ? "a value" : err);
        rs_json_free(b);
    }
    /* deep nesting is refused, not a stack overflow */
    char deep[300];
    memset(deep, '[', sizeof deep);
    rs_json *d = rs_json_parse(deep, sizeof deep, err, sizeof err);
    CHECK(d == NULL && strstr(err, "nested too deep") != NULL, "%s", err);
}

static const char *good_spec =
    "{\"version\":1,\"name\":\"s\",\"agents\":[{\"name\":\"g\",\"kind\":\"MI300\",\"snapshot_limit\":64}],"
    "\"contexts\":[{\"name\":\"r\",\"start\":true,\"services\":{\"kernel_replay\":{\"operations\":[\"CONFIG\"]}}},"
    "{\"name\":\"c\",\"start\":false,\"stop_after\":\"d\",\"services\":{\"counter_collection\":{\"counters\":[\"SQ_WAVES\"]},"
    "\"external_correlation\":{\"mode\":\"fixed\",\"value\":7}}}],"
    "\"tool\":{\"plan\":{\"passes\":\"groups\",\"continue\":{\"converge\":{\"counter\":\"SQ_WAVES\",\"at_most\":4}},"
    "\"local\":[{\"pass\":-1,\"stop\":[\"c\"]}],\"user_data\":18446744073709551615,"
    "\"actions\":[{\"in\":\"PASS_EXIT\",\"pass\":0,\"call\":\"free\",\"buffer\":\"gone\"},"
    "{\"in\":\"PASS_EXIT\",\"pass\":0,\"call\":\"alloc\",\"buffer\":\"new\"}]},"
    "\"misuse\":[{\"call\":\"local_stop\",\"context\":\"c\",\"in\":\"PASS_EXIT\",\"pass\":1}]},"
    "\"application\":{\"buffers\":[{\"name\":\"x\",\"agent\":\"g\",\"kind\":\"fine\",\"elements\":4,\"values\":[1,-2]},"
    "{\"name\":\"gone\",\"agent\":\"g\",\"elements\":8},{\"name\":\"new\",\"agent\":\"g\",\"elements\":8,\"by_tool\":true}],"
    "\"dispatches\":[{\"name\":\"d\",\"kernel\":\"saxpy\",\"agent\":\"g\",\"queue\":\"q1\",\"thread\":2,\"args\":[\"x\",\"x\"],"
    "\"scalar\":-3,\"grid\":4,\"workgroup\":64,\"packets\":1,\"plan\":{\"passes\":0}}]},"
    "\"expect\":{\"passes\":{\"d\":\"2..3\"},\"anything\":[1,2]},\"limits\":{\"max_passes\":50}}";

static void test_spec(void) {
    char err[256];
    rs_spec *s = rs_spec_parse(good_spec, strlen(good_spec), err, sizeof err);
    CHECK(s != NULL, "%s", err);
    if (s != NULL) {
        CHECK(s->agents[0].snapshot_limit == 64, "snapshot_limit");
        CHECK(s->contexts[0].replay_operations.n == 1 && !s->contexts[1].start, "contexts");
        CHECK(s->contexts[1].has_external_correlation && !s->contexts[1].external_increment &&
                  s->contexts[1].external_value == 7, "external correlation");
        CHECK(s->plan.passes == RS_PASSES_GROUPS && s->plan.cont == RS_CONTINUE_CONVERGE &&
                  s->plan.converge_at_most == 4, "plan");
        CHECK(s->plan.has_user_data && s->plan.user_data == UINT64_MAX, "64-bit user data survives");
        CHECK(s->plan.nlocal == 1 && s->plan.local[0].pass == -1, "local toggles");
        CHECK(s->nmisuse == 1 && s->misuse[0].in == RS_WINDOW_PASS_EXIT && !s->misuse[0].start, "misuse");
        CHECK(s->buffers[0].nvalues == 2 && s->buffers[0].values[1] == -2, "values");
        CHECK(s->nbuffers == 3 && !s->buffers[1].by_tool && s->buffers[2].by_tool, "by_tool buffers");
        CHECK(s->plan.nactions == 2 && s->plan.actions[0].call == RS_ACTION_FREE && s->plan.actions[1].call == RS_ACTION_ALLOC &&
                  strcmp(s->plan.actions[0].buffer, "gone") == 0 && strcmp(s->plan.actions[1].buffer, "new") == 0 &&
                  s->plan.actions[1].in == RS_WINDOW_PASS_EXIT && s->plan.actions[1].pass == 0,
              "memory actions");
        const rs_spec_plan *p = rs_spec_plan_for(s, "d");
        CHECK(p->passes == RS_PASSES_NUMBER && p->pass_number == 0, "a dispatch's own plan");
        CHECK(s->dispatches[0].scalar == -3 && s->dispatches[0].thread == 2, "dispatch");
        CHECK(s->max_passes == 50, "limits");
        CHECK(rs_plan_continue(&s->plan, 2, false) == 1 && rs_plan_continue(&s->plan, 3, false) == 0 &&
                  rs_plan_continue(&s->plan, 1, true) == 0, "converge: bound and convergence");
        rs_spec_free(s);
    }
    static const struct { const char *from, *to, *want; } bad[] = {
        {"\"version\":1", "\"version\":2", "version"},
        {"\"max_passes\":50", "\"max_passes\":50,\"pases\":1", "unknown key \"pases\""},
        {"\"kernel\":\"saxpy\"", "\"kernel\":\"sort\"", "unknown kernel"},
        {"\"args\":[\"x\",\"x\"]", "\"args\":[\"x\",\"y\"]", "no buffer y"},
        {"\"mode\":\"fixed\"", "\"mode\":\"random\"", "increment or fixed"},
        {"\"elements\":4", "\"elements\":-4", "non-negative"},
        {"\"call\":\"alloc\",\"buffer\":\"new\"", "\"call\":\"alloc\",\"buffer\":\"gone\"", "not by_tool"},
        {"\"call\":\"free\",\"buffer\":\"gone\"", "\"call\":\"free\",\"buffer\":\"w\"", "no buffer w"},
        {"\"call\":\"free\"", "\"call\":\"forget\"", "unknown call forget"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *at = strstr(good_spec, bad[i].from);
        CHECK(at != NULL, "%s not in the spec", bad[i].from);
        if (at == NULL) continue;
        char text[4096];
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good_spec), good_spec, bad[i].to, at + strlen(bad[i].from));
        rs_spec *b = rs_spec_parse(text, strlen(text), err, sizeof err);
        CHECK(b == NULL && strstr(err, bad[i].want) != NULL, "%s: got %s", bad[i].to, b ? "a spec" : err);
        rs_spec_free(b);
    }
}

static char *trace_of(unsigned profile, void (*emit)(rs_trace *)) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    rs_trace *t = rs_trace_open(f, "s", "test", "kit", profile);
    emit(t);
    rs_trace_close(t);
    fclose(f);
    return buf;
}

static void emit_some(rs_trace *t) {
    int32_t data[6] = {5, 5, 5, -1, 7, 7};
    rs_emit(t, &(rs_event){.type = RS_EV_APP_MEMORY, .time = 9, .buffer = "x\"y", .contents = data,
                           .contents_bytes = sizeof data});
    rs_emit(t, &(rs_event){.type = RS_EV_KERNEL, .time = 10, .agent = 1, .kernel = "increment"});
    rs_emit(t, &(rs_event){.type = RS_EV_WARNING, .time = 11, .code = RS_WARN_SERVICE_CONFLICT, .message = "tab\there"});
    rs_emit(t, &(rs_event){.type = RS_EV_CALLBACK, .time = 12, .op = RS_OP_PASS, .phase = RS_PHASE_ENTER,
                           .has_pass = true, .pass = 0, .has_user_data = true, .user_data = 0,
                           .payload = RS_PL_SIZE | RS_PL_REPLAY_STOP_CONTEXT, .has_status = false});
}

static void test_trace(void) {
    char *full = trace_of(RS_PROFILE_FULL, emit_some);
    CHECK(strstr(full, "\"sources\":[\"tool\",\"app\",\"runtime\",\"sdk\"]") != NULL, "%s", full);
    CHECK(strstr(full, "\"buffer\":\"x\\\"y\",\"digest\":") != NULL, "escaped buffer name: %s", full);
    CHECK(strstr(full, "\"runs\":[{\"value\":5,\"count\":3},{\"value\":-1,\"count\":1},{\"value\":7,\"count\":2}]") != NULL,
          "runs: %s", full);
    CHECK(strstr(full, "\"message\":\"tab\\there\"") != NULL, "escaped message: %s", full);
    CHECK(strstr(full, "\"pass\":0,") != NULL && strstr(full, "\"user_data\":0") != NULL, "zeros that mean something: %s", full);
    CHECK(strstr(full, "\"payload\":[\"size\",\"replay_stop_context\"]") != NULL, "payload members: %s", full);
    CHECK(strstr(full, "{\"end\":4}") != NULL, "end line: %s", full);
    free(full);
    char *bb = trace_of(RS_PROFILE_BLACK_BOX, emit_some);
    CHECK(strstr(bb, "\"sources\":[\"tool\",\"app\"]") != NULL, "%s", bb);
    CHECK(strstr(bb, "\"kernel\"") == NULL, "black-box leaves runtime events out: %s", bb);
    CHECK(strstr(bb, "\"seq\":2,\"type\":\"warning\"") != NULL, "black-box keeps the warnings the process printed (an app event): %s", bb);
    CHECK(strstr(bb, "{\"end\":3}") != NULL && strstr(bb, "\"seq\":3,\"type\":\"callback\"") != NULL, "numbered as written: %s", bb);
    free(bb);
}

/* What a black-box port records besides: the tool's copies (digest and
 * elements, no runs), the signal as the tool and the application load it,
 * a dispatch's buffers, and the agents as the tool's query lists them. */
static void emit_observed(rs_trace *t) {
    int32_t data[4] = {1, 1, 1, 1};
    const char *args[] = {"x", "y"};
    rs_emit(t, &(rs_event){.type = RS_EV_AGENT, .time = 1, .agent = 1, .family = "MI300"});
    rs_emit(t, &(rs_event){.type = RS_EV_APP_DISPATCH, .time = 2, .thread = 1, .label = "k", .args = args, .nargs = 2});
    rs_emit(t, &(rs_event){.type = RS_EV_TOOL_MEMORY, .time = 3, .thread = 1, .dispatch = 1, .buffer = "x",
                           .op = RS_OP_PASS, .phase = RS_PHASE_ENTER, .has_pass = true, .pass = 0, .contents = data,
                           .contents_bytes = sizeof data});
    rs_emit(t, &(rs_event){.type = RS_EV_TOOL_SIGNAL, .time = 4, .thread = 1, .dispatch = 1, .op = RS_OP_CONFIG,
                           .phase = RS_PHASE_EXIT, .signal = 9, .has_value = true, .value = 1});
    rs_emit(t, &(rs_event){.type = RS_EV_APP_SIGNAL, .time = 5, .thread = 1, .label = "k", .signal = 9, .has_value = true, .value = 0});
}

static void test_observed(void) {
    char *bb = trace_of(RS_PROFILE_BLACK_BOX, emit_observed);
    CHECK(strstr(bb, "{\"end\":5}") != NULL, "every observation is the tool's or the application's: %s", bb);
    CHECK(strstr(bb, "\"type\":\"agent\"") != NULL, "the agents, as the tool lists them: %s", bb);
    CHECK(strstr(bb, "\"args\":[\"x\",\"y\"]") != NULL, "a dispatch's buffers: %s", bb);
    CHECK(strstr(bb, "\"type\":\"tool_memory\"") != NULL && strstr(bb, "\"elements\":4}") != NULL &&
              strstr(bb, "\"runs\"") == NULL,
          "a copy: digest and elements, no runs: %s", bb);
    CHECK(strstr(bb, "\"type\":\"tool_signal\"") != NULL && strstr(bb, "\"signal\":9,\"value\":1}") != NULL,
          "the signal as the tool loads it: %s", bb);
    CHECK(strstr(bb, "\"type\":\"app_signal\"") != NULL && strstr(bb, "\"value\":0}") != NULL, "as the application loads it: %s", bb);
    free(bb);
}

/* A before-emit hook that writes a pending warning, as the driver's stderr
 * drain does: it runs before every event, may emit itself, and what it
 * emits comes first. */
typedef struct {
    rs_trace *t;
    int calls, pending;
} hook_state;

static void hook(void *arg) {
    hook_state *h = arg;
    h->calls++;
    if (h->pending > 0) {
        h->pending--; /* emits from inside the hook; the hook sees its own call and returns */
        rs_emit(h->t, &(rs_event){.type = RS_EV_WARNING, .time = 20, .code = RS_WARN_GRAPH_LAUNCH, .message = "m"});
    }
}

static hook_state hooked;

static void emit_hooked(rs_trace *t) {
    hooked = (hook_state){.t = t, .pending = 1};
    rs_trace_before_emit(t, hook, &hooked);
    rs_emit(t, &(rs_event){.type = RS_EV_KERNEL, .time = 21, .agent = 1, .kernel = "increment"});
    rs_emit(t, &(rs_event){.type = RS_EV_KERNEL, .time = 22, .agent = 1, .kernel = "fill"});
    rs_trace_before_emit(t, NULL, NULL);
    rs_emit(t, &(rs_event){.type = RS_EV_KERNEL, .time = 23, .agent = 1, .kernel = "saxpy"});
}

static void test_before_emit(void) {
    char *out = trace_of(RS_PROFILE_FULL, emit_hooked);
    CHECK(strstr(out, "\"seq\":1,\"type\":\"warning\"") != NULL && strstr(out, "\"seq\":2,\"type\":\"kernel\"") != NULL,
          "what the hook writes comes before the event that called it: %s", out);
    CHECK(hooked.calls == 3 && strstr(out, "{\"end\":4}") != NULL, "the hook runs before every event until removed (%d calls): %s",
          hooked.calls, out);
    free(out);
}

static void test_digest(void) {
    /* The digest the Go reference gives 256 elements of 5 (golden/fixed-three-passes.ndjson). */
    int32_t fives[256];
    for (int i = 0; i < 256; i++) fives[i] = 5;
    rs_digest_state d;
    char hex[17];
    rs_digest_begin(&d);
    rs_digest_add(&d, fives, sizeof fives);
    rs_digest_end(&d, hex);
    CHECK(strcmp(hex, "d198b8b5d58b5659") == 0, "digest %s", hex);
    unsigned p;
    CHECK(rs_profile_parse("black-box", &p) && p == RS_PROFILE_BLACK_BOX && !rs_profile_parse("glass", &p), "profiles");
}

int main(void) {
    test_json();
    test_spec();
    test_trace();
    test_before_emit();
    test_observed();
    test_digest();
    if (failures > 0) {
        fprintf(stderr, "kit_test: %d failures\n", failures);
        return 1;
    }
    printf("kit_test: ok\n");
    return 0;
}
