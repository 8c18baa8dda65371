/* model.h: what every backend shares: the agent kinds and their counter
 * blocks, the kernel library's effects on 32-bit integers, and the counter
 * model (deterministic values from the kernel, the launch and the agent
 * kind; docs/cuda.md and sim give the same definitions). */
#ifndef MODEL_H
#define MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rt.h"

typedef struct {
    const char *name, *product, *arch, *family;
    bool data_center;
    uint64_t wave_size;
    const rt_counter_block *blocks;
    size_t nblocks;
    bool nvidia_counters; /* the CUDA agent's model, not the AMD one */
} model_kind;

const model_kind *model_kind_named(const char *name);

/* model_buffers: a kernel packet's buffer arguments bound to host arrays. */
typedef struct {
    int nbuffers;
    int arg[RT_MAX_ARGS];       /* which packet argument each buffer is */
    int32_t *data[RT_MAX_ARGS]; /* filled by the backend */
    int32_t scalar;
    uint64_t items; /* work items that touch memory: min(grid, elements) */
    uint64_t grid;  /* every work item launched */
} model_buffers;

/* model_bind checks a packet against the kernel library. */
bool model_bind(const rt_packet *p, model_buffers *mb, char *err, size_t errlen);
/* model_run applies the kernel on the host arrays. */
void model_run(const rt_packet *p, const model_buffers *mb);
bool model_counter(const model_kind *k, const rt_packet *p, const char *name, uint64_t *value);
uint64_t model_grid(const rt_packet *p);

#endif
