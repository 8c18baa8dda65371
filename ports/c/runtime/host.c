/* The host backend: agents of the kinds the spec library names (MI200,
 * MI300, consumer), memory in host RAM, the kernel library run on the CPU.
 * Counter values are a model (the CPU has no GPU counters): deterministic
 * functions of the kernel, the launch and the agent kind, the same
 * definitions as the simulator's, so that one spec means the same thing on
 * every target. */
/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rs_kit.h"
#include "rt.h"

typedef struct {
    rt_agent *agents;
    const model_kind **kinds;
    size_t nagents;
    char err[256];
} host;

void *rt_host_backend_new(const char *const *agent_kinds, size_t nagents) {
    host *h = calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->agents = calloc(nagents + 1, sizeof *h->agents);
    h->kinds = calloc(nagents + 1, sizeof *h->kinds);
    if (h->agents == NULL || h->kinds == NULL) goto fail;
    for (size_t i = 0; i < nagents; i++) {
        const model_kind *k = model_kind_named(agent_kinds[i]);
        if (k == NULL) {
            fprintf(stderr, "host runtime: unknown agent kind %s (allowed: MI200, MI300, consumer)\n", agent_kinds[i]);
            goto fail;
        }
        h->kinds[i] = k;
        h->agents[i] = (rt_agent){.id = i + 1, .product = k->product, .arch = k->arch, .family = k->family,
                                  .data_center = k->data_center, .blocks = k->blocks, .nblocks = k->nblocks};
    }
    h->nagents = nagents;
    return h;
fail:
    free(h->agents);
    free(h->kinds);
    free(h);
    return NULL;
}

static size_t agent_count(void *b) { return ((host *)b)->nagents; }
static const rt_agent *agent(void *b, size_t i) {
    host *h = b;
    return i < h->nagents ? &h->agents[i] : NULL;
}

static int alloc(void *b, uint64_t ag, rt_mem_kind kind, uint64_t size, uint64_t *handle) {
    (void)b; (void)ag; (void)kind;
    void *p = calloc(1, size);
    if (p == NULL) return RT_ERR;
    *handle = (uint64_t)(uintptr_t)p;
    return RT_OK;
}

static int release(void *b, uint64_t handle) {
    (void)b;
    free((void *)(uintptr_t)handle);
    return RT_OK;
}

static int hread(void *b, uint64_t handle, uint64_t offset, void *dst, uint64_t n) {
    (void)b;
    memcpy(dst, (const char *)(uintptr_t)handle + offset, n);
    return RT_OK;
}

static int hwrite(void *b, uint64_t handle, uint64_t offset, const void *src, uint64_t n) {
    (void)b;
    memcpy((char *)(uintptr_t)handle + offset, src, n);
    return RT_OK;
}

static int run(void *b, uint64_t ag, const rt_packet *p, uint64_t *start, uint64_t *end) {
    host *h = b;
    (void)ag;
    model_buffers mb;
    if (!model_bind(p, &mb, h->err, sizeof h->err)) {
        fprintf(stderr, "host runtime: %s\n", h->err);
        return RT_ERR;
    }
    for (int i = 0; i < mb.nbuffers; i++) mb.data[i] = (int32_t *)(uintptr_t)p->args[mb.arg[i]].buffer->handle;
    *start = rs_now_ns();
    model_run(p, &mb);
    *end = rs_now_ns();
    if (*end <= *start) *end = *start + 1;
    return RT_OK;
}

static bool counter(void *b, uint64_t ag, const rt_packet *p, const char *name, uint64_t *value) {
    host *h = b;
    if (ag < 1 || ag > h->nagents) return false;
    return model_counter(h->kinds[ag - 1], p, name, value);
}

static void hclose(void *b) {
    host *h = b;
    free(h->agents);
    free(h->kinds);
    free(h);
}

static char *error(void *b) { return ((host *)b)->err; }

const rt_backend rt_host_backend = {
    .name = "host", .agent_count = agent_count, .agent = agent, .alloc = alloc, .free = release,
    .read = hread, .write = hwrite, .run = run, .counter = counter, .close = hclose, .error = error,
};
