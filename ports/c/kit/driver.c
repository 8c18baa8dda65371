/* The driver protocol, replayspec.driver/v1 (docs/driver-protocol.md):
 * handshake first, then the spec on stdin (empty: a probe), then the trace
 * and its end line. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "rs_kit.h"

#include <stdlib.h>
#include <string.h>

static void handshake(const rs_port *p) {
    /* Names and capabilities are the port's own constants: plain words, so
     * they need no escaping beyond what rs_emit's strings get. */
    printf("{\"protocol\":\"replayspec.driver/v1\",\"implementation\":{\"name\":\"%s\",\"version\":\"%s\"},"
           "\"capabilities\":[",
           p->name, p->version);
    for (size_t i = 0; p->capabilities != NULL && p->capabilities[i] != NULL; i++) {
        printf("%s\"%s\"", i ? "," : "", p->capabilities[i]);
    }
    printf("],\"profile\":\"%s\",\"sources\":[", rs_profile_name(p->profile));
    static const struct { unsigned bit; const char *name; } all[] = {
        {RS_SRC_TOOL, "tool"}, {RS_SRC_APP, "app"}, {RS_SRC_RUNTIME, "runtime"}, {RS_SRC_SDK, "sdk"}};
    bool first = true;
    for (size_t i = 0; i < 4; i++) {
        if ((p->profile & all[i].bit) == 0) continue;
        printf("%s\"%s\"", first ? "" : ",", all[i].name);
        first = false;
    }
    printf("]}\n");
    fflush(stdout); /* the runner sends the spec only after reading this */
}

static char *read_all(FILE *in, size_t *n) {
    size_t cap = 1 << 16;
    *n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) return NULL;
    for (;;) {
        if (*n == cap) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) { free(buf); return NULL; }
            buf = grown;
            cap *= 2;
        }
        size_t k = fread(buf + *n, 1, cap - *n, in);
        *n += k;
        if (k == 0) break;
    }
    if (ferror(in)) { free(buf); return NULL; }
    return buf;
}

int rs_driver_main(const rs_port *p) {
    if (rs_profile_name(p->profile) == NULL) {
        fprintf(stderr, "rs_kit: the port's profile is not one of black-box, runtime, full\n");
        return 2;
    }
    handshake(p);
    size_t n;
    char *body = read_all(stdin, &n);
    if (body == NULL) {
        fprintf(stderr, "rs_kit: reading the spec from stdin failed\n");
        return 2;
    }
    if (n == 0) { /* the probe: handshake only */
        free(body);
        return 0;
    }
    char err[512];
    rs_spec *s = rs_spec_parse(body, n, err, sizeof err);
    free(body);
    if (s == NULL) {
        fprintf(stderr, "rs_kit: reading the spec from stdin: %s\n", err);
        return 2;
    }
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    char impl[256];
    snprintf(impl, sizeof impl, "%s %s", p->name, p->version);
    rs_trace *t = rs_trace_open(stdout, s->name, p->target, impl, p->profile);
    if (t == NULL) {
        fprintf(stderr, "rs_kit: out of memory\n");
        rs_spec_free(s);
        return 1;
    }
    int rc = p->run(s, t, p->arg);
    if (rs_trace_close(t) != 0) {
        fprintf(stderr, "rs_kit: writing the trace failed\n");
        rc = 1;
    }
    rs_spec_free(s);
    return rc == 0 ? 0 : 1;
}
