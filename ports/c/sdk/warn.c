/* Diagnostics, once per process each (PC-6, ACT-6, MEM-5, SVC-3, MEM-6), printed
 * on stderr as one line a driver can map to a warning event; and the SDK's
 * reports to a test driver. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static const char *const codes[] = {
    [warn_pass_count_zero] = "pass_count_zero_without_continue", [warn_multi_packet] = "multi_packet_submission",
    [warn_graph_launch] = "graph_launch", [warn_snapshot_incomplete] = "snapshot_incomplete",
    [warn_service_conflict] = "service_conflict", [warn_reentrant_dispatch] = "reentrant_dispatch",
};

void krs_warn(warning w, uint64_t dispatch, const char *fmt, ...) {
#ifndef KRS_FAULT_WARN_EVERY_TIME
    if (atomic_exchange(&krs_sdk.warned[w], true)) return;
#endif
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One write per line, so that lines from several threads never mix. */
    char line[640];
    if (dispatch != 0) snprintf(line, sizeof line, "krs: warning [%s] dispatch %llu: %s\n", codes[w], (unsigned long long)dispatch, msg);
    else snprintf(line, sizeof line, "krs: warning [%s]: %s\n", codes[w], msg);
    fputs(line, stderr);
    fflush(stderr);
}

void krs_report(const krs_report_t *r) {
    if (krs_sdk.report != NULL) krs_sdk.report(r, krs_sdk.report_args);
}
