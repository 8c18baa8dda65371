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

/* tool.c */
void tool_init(port *p);
void tool_setup(void);
void tool_fini(void);
/* What the application tells the tool (its hooks). */
void tool_submitting(size_t dispatch);
void tool_completed(size_t dispatch);

/* app.c */
int app_run(port *p);
/* app_submit_from_tool writes a by_tool dispatch from inside the replay
 * callback `from` names (op, phase, pass, dispatch), on the calling
 * thread, waits for it, and brackets its events with tool_dispatch and
 * tool_complete. */
int app_submit_from_tool(size_t dispatch, const rs_event *from);

/* Trace helpers. */
void port_fail(port *p, const char *fmt, ...);

#endif
