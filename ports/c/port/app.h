/* The application's side of the driver (app.c): buffers, queues, threads
 * and dispatches on the rt runtime. It knows the tool only through the
 * hooks below. */
#ifndef APP_H
#define APP_H

#include "port.h"

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

int app_run(port *p, const app_hooks *hooks);
/* app_submit_from_tool writes a by_tool dispatch from inside the replay
 * callback `from` names (op, phase, pass, dispatch), on the calling
 * thread, waits for it, and brackets its events with tool_dispatch and
 * tool_complete. */
int app_submit_from_tool(size_t dispatch, const rs_event *from);
/* app_memory_from_tool frees buffer (spec index), or allocates and fills
 * it (alloc: a by_tool buffer), for the tool from inside a replay
 * callback, on the calling thread, recording app_free or app_alloc as the
 * application's own frees and allocations are: memory that comes and goes
 * while a loop runs (MEM-4). Each is done once in a run; a repeat is a
 * no-op. 0, or -1 when the runtime refused. */
int app_memory_from_tool(bool alloc, size_t buffer);

#endif
