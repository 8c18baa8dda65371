/* The C port's driver: the spec's tool (on the krs SDK) and its
 * application (on the rt runtime), recording what each observes. */
#ifndef PORT_H
#define PORT_H

#include <pthread.h>

#include "krs.h"
#include "rs_kit.h"
#include "rt.h"

typedef struct {
    const rs_spec *s;
    rs_trace *t;
    rt_runtime *rt;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* any change below: a dispatch started, completed, entered or left a pass */
    bool *started, *completed; /* by dispatch index */
    int64_t *in_pass;          /* by dispatch index: the pass running, -1 outside */
    bool failed;
} port;

/* What the application tells its tool, and all it knows of it: calls go
 * one way, from tool.c into app.c (app_submit_from_tool); the application
 * reaches the tool only through these hooks, which main.c fills in. */
typedef struct {
    /* the calling thread is about to launch dispatch (spec index); its
     * completion signal is handed to the tool, which loads it from its
     * callbacks (CMP-2); submitted: the launch returned */
    void (*submitting)(size_t dispatch, rt_signal *completion);
    void (*submitted)(void);
    /* the dispatch completed, and what the spec ties to its end is done */
    void (*completed)(size_t dispatch);
    /* memory-allocation tracing: buffer (spec index) was allocated and
     * filled, or is about to be freed */
    void (*allocated)(size_t buffer, const rt_alloc *a, bool freed);
} app_hooks;

/* tool.c */
void tool_init(port *p);
void tool_setup(void);
void tool_fini(void);
void tool_submitting(size_t dispatch, rt_signal *completion);
void tool_submitted(void);
void tool_completed(size_t dispatch);
void tool_allocated(size_t buffer, const rt_alloc *a, bool freed);

/* app.c */
int app_run(port *p, const app_hooks *hooks);
/* app_submit_from_tool writes a by_tool dispatch from inside the replay
 * callback `from` names (op, phase, pass, dispatch), on the calling
 * thread, waits for it, and brackets its events with tool_dispatch and
 * tool_complete. */
int app_submit_from_tool(size_t dispatch, const rs_event *from);

/* Trace helpers. */
void port_fail(port *p, const char *fmt, ...);

#endif
