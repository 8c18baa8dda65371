/* krs-driver: the C port of kernel replay behind the replayspec driver
 * protocol.
 *
 *   krs-driver [--runtime host|cuda] [--profile black-box|runtime|full]
 *
 * The profile says what the trace reports (docs/driver-protocol.md,
 * "Observability profiles"): black-box is what the tool and the
 * application see; runtime adds what an interposer on the runtime sees;
 * full adds the SDK's own reports, with its warnings read from its stderr
 * lines as a driver around a real SDK would. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "tool.h"

#ifndef KRS_FAULT_NAME
#define KRS_FAULT_NAME ""
#endif

typedef struct {
    bool cuda;
} options;

/* ---------------------------------------------------------------- runtime and sdk events */

/* on_kernel reports a kernel run with what the runtime counted for it
 * (the dispatch's counters, then the agent's, each once): the witness the
 * oracles hold the SDK's counter records to (AGT-1, docs/trace.md). */
static void on_kernel(void *arg, const rt_kernel_report *k) {
    rs_counter cs[2 * RT_MAX_COUNTERS];
    size_t n = 0;
    const rt_profile *p = k->profile;
    for (int dev = 0; p != NULL && dev < 2; dev++) {
        size_t m = dev ? p->ndevice : p->ncounters;
        for (size_t i = 0; i < m; i++) {
            const char *name = dev ? p->device[i] : p->counters[i];
            bool seen = false;
            for (size_t j = 0; j < n && !seen; j++) seen = strcmp(cs[j].name, name) == 0;
            if (!seen) cs[n++] = (rs_counter){name, dev ? p->device_values[i] : p->values[i]};
        }
    }
    rs_emit(arg, &(rs_event){.type = RS_EV_KERNEL, .thread = rs_app_thread(), .agent = k->agent, .queue = k->queue,
                             .dispatch = k->tag, .kernel = k->kernel, .start = k->start, .end = k->end,
                             .signal = k->signal, .mem_in = k->mem_in, .mem_out = k->mem_out,
                             .counters = n > 0 ? cs : NULL, .ncounters = n});
}

static void on_signal(void *arg, uint64_t signal, int64_t value) {
    rs_emit(arg, &(rs_event){.type = RS_EV_SIGNAL, .thread = rs_app_thread(), .signal = signal, .has_value = true,
                             .value = value});
}

static void on_copy(void *arg, bool write, uint64_t agent, const rt_region *r, size_t n, uint64_t bytes) {
    rs_region rr[64];
    size_t k = n < 64 ? n : 64;
    for (size_t i = 0; i < k; i++) rr[i] = (rs_region){r[i].addr, r[i].bytes};
    rs_emit(arg, &(rs_event){.type = write ? RS_EV_MEM_WRITE : RS_EV_MEM_READ, .thread = rs_app_thread(),
                             .agent = agent, .bytes = bytes, .regions = rr, .nregions = k});
}

static void on_report(const krs_report_t *r, void *arg) {
    rs_trace *t = arg;
    rs_region rr[64];
    size_t k = r->region_count < 64 ? r->region_count : 64;
    for (size_t i = 0; i < k; i++) rr[i] = (rs_region){r->regions[i].addr, r->regions[i].bytes};
    rs_event e = {.thread = rs_app_thread(), .dispatch = r->info.dispatch_id};
    switch (r->kind) {
    case KRS_REPORT_DISPATCH_ID:
        e.type = RS_EV_DISPATCH_ID;
        e.agent = r->info.agent_id;
        e.queue = r->info.queue_id;
        e.kernel = r->kernel_name;
        break;
    case KRS_REPORT_SNAPSHOT:
        e.type = RS_EV_SNAPSHOT;
        e.agent = r->info.agent_id;
        e.bytes = r->bytes;
        e.regions = rr;
        e.nregions = k;
        if (r->status != KRS_STATUS_SUCCESS) {
            e.has_status = true;
            e.status = r->status;
            e.message = r->message;
        }
        break;
    case KRS_REPORT_RESTORE:
        e.type = RS_EV_RESTORE;
        e.has_pass = true;
        e.pass = r->pass;
        e.bytes = r->bytes;
        e.regions = rr;
        e.nregions = k;
        break;
    case KRS_REPORT_NEVER_ENDED:
        e.type = RS_EV_NEVER_ENDED;
        e.has_pass = true;
        e.pass = r->pass;
        break;
    }
    rs_emit(t, &e);
}

/* ---------------------------------------------------------------- warnings from stderr */

/* The SDK prints each warning as one stderr line
 *   krs: warning [CODE] dispatch N: message
 * A driver around a real SDK has nothing else to go by, so this one reads
 * them the same way: stderr goes through a pipe, each line is passed on to
 * the real stderr, and warning lines become warning events.
 *
 * Where a warning lands in the trace matters (ACT-3 judges the contexts
 * started when it was printed), and a reader thread alone writes it when it
 * happens to be scheduled, events later. So the pipe is also drained before
 * every event the driver writes (rs_trace_before_emit): a line the SDK
 * wrote (one write, atomic on a pipe) before some thread's next event is
 * in the trace before that event. Bytes leave the pipe only under mu, and
 * their lines are written before mu is released. */
typedef struct {
    int read_fd, saved_fd;
    rs_trace *t;
    pthread_t reader;
    pthread_mutex_t mu;
    bool open;
    char line[2048];
    size_t nline;
} stderr_map;

static _Thread_local bool draining; /* this thread holds mu and is writing warnings */

static void map_line(rs_trace *t, char *line) {
    const char *prefix = "krs: warning [";
    if (strncmp(line, prefix, strlen(prefix)) != 0) return;
    char *code = line + strlen(prefix);
    char *close = strchr(code, ']');
    if (close == NULL) return;
    *close = '\0';
    char *rest = close + 1;
    unsigned long long dispatch = 0;
    if (strncmp(rest, " dispatch ", 10) == 0) dispatch = strtoull(rest + 10, &rest, 10);
    if (strncmp(rest, ": ", 2) == 0) rest += 2;
    rs_warning w = rs_warning_parse(code);
    if (w == RS_WARN_NONE) return;
    rs_emit(t, &(rs_event){.type = RS_EV_WARNING, .code = w, .dispatch = dispatch, .message = rest});
}

/* drain_locked reads what the pipe holds now (non-blocking), copies it to
 * the real stderr and maps its whole lines; false at the end of the pipe.
 * Called with mu held. */
static bool drain_locked(stderr_map *m) {
    char buf[4096];
    for (;;) {
        ssize_t n = read(m->read_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return true; /* EAGAIN: nothing more now */
        if (n == 0) return false;
        if (write(m->saved_fd, buf, (size_t)n) < 0) { /* the runner keeps the tail */ }
        draining = true;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != '\n') {
                if (m->nline < sizeof m->line - 1) m->line[m->nline++] = buf[i]; /* longer lines are cut */
                continue;
            }
            m->line[m->nline] = '\0';
            map_line(m->t, m->line);
            m->nline = 0;
        }
        draining = false;
    }
}

/* drain is the trace's before-emit hook. */
static void drain(void *arg) {
    stderr_map *m = arg;
    if (draining) return; /* a warning being written: the pipe is this thread's already */
    pthread_mutex_lock(&m->mu);
    if (m->open) drain_locked(m);
    pthread_mutex_unlock(&m->mu);
}

static void *read_stderr(void *arg) {
    stderr_map *m = arg;
    for (bool more = true; more;) {
        struct pollfd p = {.fd = m->read_fd, .events = POLLIN};
        if (poll(&p, 1, -1) < 0 && errno != EINTR) break;
        pthread_mutex_lock(&m->mu);
        more = drain_locked(m);
        pthread_mutex_unlock(&m->mu);
    }
    return NULL;
}

static bool map_stderr(stderr_map *m, rs_trace *t) {
    int fds[2];
    m->t = t;
    fflush(stderr);
    if (pipe(fds) != 0) return false;
    m->saved_fd = dup(2);
    if (m->saved_fd < 0 || dup2(fds[1], 2) < 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) return false;
    close(fds[1]);
    m->read_fd = fds[0];
    pthread_mutex_init(&m->mu, NULL);
    m->open = true;
    if (pthread_create(&m->reader, NULL, read_stderr, m) != 0) return false;
    rs_trace_before_emit(t, drain, m);
    return true;
}

static void unmap_stderr(stderr_map *m) {
    fflush(stderr);
    dup2(m->saved_fd, 2); /* closes the pipe's last write end: the reader sees EOF */
    pthread_join(m->reader, NULL);
    rs_trace_before_emit(m->t, NULL, NULL);
    pthread_mutex_lock(&m->mu); /* a hook called before it was removed finds the pipe closed */
    m->open = false;
    pthread_mutex_unlock(&m->mu);
    close(m->read_fd);
    close(m->saved_fd);
}

/* ---------------------------------------------------------------- a fatal restore */

/* A restore that fails part-way ends the process (MEM-5). The trace is
 * what the run showed up to there: the driver closes it and exits before
 * the SDK aborts, so the runner reads a whole trace of a process that died
 * as the rules require (docs/decisions.md 13). */
typedef struct {
    rs_trace *t;
    stderr_map *warnings;
    bool mapped;
} fatal_ctx;

static void on_fatal(const char *message, void *arg) {
    fatal_ctx *f = arg;
    (void)message;
    /* The warnings printed so far go into the trace, and the trace is closed
     * at once: other threads run until the process ends, and unmapping
     * stderr first (restore fd 2, join the reader) left them time to write
     * more, their warnings to the real stderr and lost to the trace. */
    if (f->mapped) drain(f->warnings);
    rs_trace_abort(f->t);
    _exit(0);
}

/* ---------------------------------------------------------------- one spec */

static int run(const rs_spec *s, rs_trace *t, void *arg) {
    const options *o = arg;
    port p = {.s = s, .t = t};
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    p.started = calloc(s->ndispatches + 1, sizeof *p.started);
    p.completed = calloc(s->ndispatches + 1, sizeof *p.completed);
    p.in_pass = calloc(s->ndispatches + 1, sizeof *p.in_pass);
    const char **kinds = calloc(s->nagents + 1, sizeof *kinds);
    if (p.started == NULL || p.completed == NULL || p.in_pass == NULL || kinds == NULL) {
        fprintf(stderr, "krs-driver: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < s->ndispatches; i++) p.in_pass[i] = -1;
    for (size_t i = 0; i < s->nagents; i++) kinds[i] = s->agents[i].kind;

    char err[512] = "";
    void *backend = o->cuda ? rt_cuda_backend_new(s->nagents, err, sizeof err) : rt_host_backend_new(kinds, s->nagents);
    free(kinds);
    if (backend == NULL) {
        fprintf(stderr, "krs-driver: the %s runtime cannot start: %s\n", o->cuda ? "cuda" : "host", err);
        return 1;
    }
    p.rt = rt_open(o->cuda ? &rt_cuda_backend : &rt_host_backend, backend);
    if (p.rt == NULL) {
        fprintf(stderr, "krs-driver: out of memory\n");
        return 1;
    }
    uint64_t restore_fails_at = 0; /* machine-wide: the smallest value wins */
    for (size_t i = 0; i < s->nagents; i++) {
        rt_set_staging_limit(p.rt, i + 1, s->agents[i].snapshot_limit);
        uint64_t n = s->agents[i].restore_fails_at;
        if (n != 0 && (restore_fails_at == 0 || n < restore_fails_at)) restore_fails_at = n;
    }
    rt_set_restore_failure(p.rt, restore_fails_at);
    if (rs_trace_reports(t, RS_EV_KERNEL)) {
        rt_observer obs = {.arg = t, .want_digests = true, .kernel = on_kernel, .signal = on_signal, .copy = on_copy};
        rt_set_observer(p.rt, &obs);
    }
    stderr_map warnings = {0};
    bool mapped = rs_trace_reports(t, RS_EV_WARNING) && map_stderr(&warnings, t);

    krs_init(p.rt);
    krs_experimental_set_pass_budget(s->max_passes);
    fatal_ctx fatal = {.t = t, .warnings = &warnings, .mapped = mapped};
    krs_experimental_set_fatal_callback(on_fatal, &fatal);
    if (rs_trace_reports(t, RS_EV_DISPATCH_ID)) krs_experimental_set_report_callback(on_report, t);
    for (size_t i = 0; i < s->nagents; i++) {
        const rt_agent *a = rt_agent_at(p.rt, i);
        rs_emit(t, &(rs_event){.type = RS_EV_AGENT, .agent = a->id, .label = s->agents[i].name, .family = a->family,
                               .product = a->product, .arch = a->arch});
    }
    tool_init(&p);
    tool_setup(); /* the tool is loaded before the application allocates (ACT-4) */
    /* The application knows the tool only through its hooks (port.h). */
    const app_hooks hooks = {.submitting = tool_submitting, .submitted = tool_submitted,
                             .completed = tool_completed, .allocated = tool_allocated};
    int rc = p.failed ? -1 : app_run(&p, &hooks);
    krs_fini();
    tool_fini();
    if (mapped) unmap_stderr(&warnings);
    rt_close(p.rt);
    free(p.started);
    free(p.completed);
    free(p.in_pass);
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    return rc == 0 ? 0 : 1;
}

static const char *const host_capabilities[] = {
    "indefinite", "local-contexts", "concurrency", "pc-sampling", "spm", "thread-trace", "device-counting",
    "multi-agent", "counters", "snapshot-failure", "tool-actions", "restore-failure", "memory-actions",
    /* every rule family but RPV: rocprofv3's front end is not part of this port */
    "API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR", "LCX", "SVC", "AGT", NULL};

/* One device, modeled NVIDIA counter blocks (AMD group splits do not
 * apply), and no way to make a snapshot fail on purpose. Freed blocks are
 * reused by the runtime core (runtime.c), on CUDA as on the host. */
static const char *const cuda_capabilities[] = {
    "indefinite", "local-contexts", "concurrency", "pc-sampling", "spm", "thread-trace", "device-counting", "tool-actions",
    "restore-failure", "memory-actions",
    "API", "ACT", "CB", "UD", "PC", "CONT", "MEM", "DID", "CMP", "COR", "LCX", "SVC", "AGT", NULL};

static void usage(void) {
    fprintf(stderr, "usage: krs-driver [--runtime host|cuda] [--profile black-box|runtime|full]\n");
}

int main(int argc, char **argv) {
    options o = {0};
    unsigned profile = RS_PROFILE_FULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc) {
            const char *r = argv[++i];
            if (strcmp(r, "cuda") == 0) o.cuda = true;
            else if (strcmp(r, "host") != 0) { usage(); return 2; }
        } else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
            if (!rs_profile_parse(argv[++i], &profile)) { usage(); return 2; }
        } else {
            usage();
            return 2;
        }
    }
    if (o.cuda) {
        /* Refuse at once, before the handshake, on a machine that cannot
         * run CUDA: the runner then reports why and blames no spec. */
        char err[512] = "";
        void *probe = rt_cuda_backend_new(1, err, sizeof err);
        if (probe == NULL) {
            fprintf(stderr, "krs-driver: the cuda runtime cannot start: %s\n", err);
            return 3;
        }
        rt_cuda_backend.close(probe);
    }
    char name[128];
    snprintf(name, sizeof name, "krs C port%s%s", KRS_FAULT_NAME[0] ? " with fault " : "", KRS_FAULT_NAME);
    rs_port driver = {
        .name = name, .version = "0.1", .capabilities = o.cuda ? cuda_capabilities : host_capabilities,
        .profile = profile, .target = o.cuda ? "krs/cuda" : "krs/host", .run = run, .arg = &o,
    };
    return rs_driver_main(&driver);
}
