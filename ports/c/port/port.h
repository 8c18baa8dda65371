/* The C port's driver: the spec's tool (on the krs SDK) and its
 * application (on the rt runtime), recording what each observes. This is
 * what both share; app.h is the application's side, tool.h the tool's.
 * Includes and calls go one way: tool.c uses app.h, app.c never tool.h
 * (it knows the tool only through the hooks main.c fills in). */
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

/* port_fail reports a breakdown of the driver (app.c). */
void port_fail(port *p, const char *fmt, ...);

#endif
