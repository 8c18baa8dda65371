/* The tool's side of the driver (tool.c), on the krs SDK. main.c hands
 * the tool_submitting, tool_submitted, tool_completed and tool_allocated
 * functions to the application as its hooks (app.h). */
#ifndef TOOL_H
#define TOOL_H

#include "port.h"

void tool_init(port *p);
void tool_setup(void);
void tool_fini(void);
void tool_submitting(size_t dispatch, rt_signal *completion);
void tool_submitted(void);
void tool_completed(size_t dispatch);
void tool_allocated(size_t buffer, const rt_alloc *a, bool freed);

#endif
