/* POSIX.1-2008 (clock_gettime, strdup, ...): set here, not by the build, so
 * that the file compiles as it stands with any C11 compiler flags. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "model.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- agent kinds */

static const char *const sq[] = {"SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_LDS", "SQ_WAVE_CYCLES",
                                 "SQ_BUSY_CYCLES"};
static const char *const tcc_ea[] = {"TCC_HIT", "TCC_MISS", "TCC_EA_RDREQ"};
static const char *const tcp[] = {"TCP_TCC_READ_REQ", "TCP_TOTAL_CACHE_ACCESSES"};
static const char *const grbm[] = {"GRBM_COUNT", "GRBM_GUI_ACTIVE"};
static const char *const ta[] = {"TA_BUSY_CYCLES"};

/* The register limits split one counter list differently per kind (AGT-1):
 * TCC has 2 registers on MI200, 1 on MI300, 4 on the consumer part, which
 * lacks TCC_EA_RDREQ. */
static const rt_counter_block mi200_blocks[] = {
    {"SQ", 8, sq, 6}, {"TCC", 2, tcc_ea, 3}, {"TCP", 4, tcp, 2}, {"GRBM", 2, grbm, 2}, {"TA", 2, ta, 1}};
static const rt_counter_block mi300_blocks[] = {
    {"SQ", 8, sq, 6}, {"TCC", 1, tcc_ea, 3}, {"TCP", 4, tcp, 2}, {"GRBM", 2, grbm, 2}, {"TA", 2, ta, 1}};
static const rt_counter_block consumer_blocks[] = {
    {"SQ", 8, sq, 6}, {"TCC", 4, tcc_ea, 2}, {"TCP", 4, tcp, 2}, {"GRBM", 2, grbm, 2}, {"TA", 2, ta, 1}};
/* A CUDA device exposes no AMD blocks: two modeled ones. */
static const rt_counter_block nvidia_blocks[] = {{"SQ", 2, sq, 3}, {"GRBM", 1, grbm, 2}};

static const model_kind kinds[] = {
    {"MI200", "MI210", "gfx90a", "MI200", true, 64, mi200_blocks, 5, false},
    {"MI300", "MI300X", "gfx942", "MI300", true, 64, mi300_blocks, 5, false},
    {"consumer", "RX 7900 XTX", "gfx1100", "consumer", false, 32, consumer_blocks, 5, false},
    {"nvidia", "NVIDIA GPU", "sm", "nvidia", false, 64, nvidia_blocks, 2, true},
};

const model_kind *model_kind_named(const char *name) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    }
    return NULL;
}

/* ---------------------------------------------------------------- kernels */

typedef struct {
    const char *name;
    int buffers;
    bool scalar;
    uint64_t ns_per_wave, valu_per_item; /* the AMD model */
    uint64_t nvidia_valu;                /* the CUDA model */
} kernel_def;

static const kernel_def library[] = {
    {"increment", 1, false, 40, 3, 3},
    {"accumulate", 2, false, 60, 4, 4},
    {"atomic_counter", 1, false, 80, 2, 1},
    {"fill", 1, true, 30, 2, 1},
    {"saxpy", 2, true, 70, 5, 4},
    {"increment_pair", 2, false, 50, 4, 6}, /* the one kernel that writes two buffers */
};

static const kernel_def *find(const char *name) {
    for (size_t i = 0; name != NULL && i < sizeof library / sizeof library[0]; i++) {
        if (strcmp(library[i].name, name) == 0) return &library[i];
    }
    return NULL;
}

static uint64_t dim(uint32_t v) { return v == 0 ? 1 : v; }

uint64_t model_grid(const rt_packet *p) { return dim(p->grid[0]) * dim(p->grid[1]) * dim(p->grid[2]); }

bool model_bind(const rt_packet *p, model_buffers *mb, char *err, size_t errlen) {
    memset(mb, 0, sizeof *mb);
    const kernel_def *k = find(p->kernel);
    if (k == NULL) {
        snprintf(err, errlen, "unknown kernel %s", p->kernel ? p->kernel : "(none)");
        return false;
    }
    uint64_t elements = UINT64_MAX;
    bool scalar_seen = false;
    for (int i = 0; i < p->nargs; i++) {
        if (p->args[i].buffer == NULL) {
            mb->scalar = p->args[i].scalar;
            scalar_seen = true;
            continue;
        }
        if (mb->nbuffers == k->buffers) break;
        mb->arg[mb->nbuffers++] = i;
        uint64_t e = p->args[i].buffer->size / 4;
        if (e < elements) elements = e;
    }
    if (mb->nbuffers != k->buffers || scalar_seen != k->scalar) {
        snprintf(err, errlen, "kernel %s takes %d buffers%s", k->name, k->buffers, k->scalar ? " and a scalar" : "");
        return false;
    }
    if (elements == 0) {
        snprintf(err, errlen, "kernel %s: a buffer holds no int32 element", k->name);
        return false;
    }
    mb->grid = model_grid(p);
    mb->items = mb->grid < elements ? mb->grid : elements; /* items past a buffer's end do nothing */
    return true;
}

/* Arithmetic wraps, as on the GPU: done on uint32. */
static int32_t add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t mul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }

void model_run(const rt_packet *p, const model_buffers *mb) {
    int32_t *x = mb->data[0], *y = mb->nbuffers > 1 ? mb->data[1] : NULL;
    const char *k = p->kernel;
    if (strcmp(k, "increment") == 0) {
        for (uint64_t i = 0; i < mb->items; i++) x[i] = add(x[i], 1);
    } else if (strcmp(k, "accumulate") == 0) {
        for (uint64_t i = 0; i < mb->items; i++) x[i] = add(x[i], y[i]);
    } else if (strcmp(k, "atomic_counter") == 0) {
        x[0] = add(x[0], (int32_t)(uint32_t)mb->grid); /* one atomic add per work item */
    } else if (strcmp(k, "fill") == 0) {
        for (uint64_t i = 0; i < mb->items; i++) x[i] = mb->scalar;
    } else if (strcmp(k, "saxpy") == 0) {
        for (uint64_t i = 0; i < mb->items; i++) x[i] = add(mul(mb->scalar, y[i]), x[i]);
    } else if (strcmp(k, "increment_pair") == 0) {
        for (uint64_t i = 0; i < mb->items; i++) {
            x[i] = add(x[i], 1);
            y[i] = add(y[i], 1);
        }
    }
}

/* ---------------------------------------------------------------- counters */

static bool has_counter(const model_kind *k, const char *name) {
    for (size_t b = 0; b < k->nblocks; b++) {
        for (size_t c = 0; c < k->blocks[b].ncounters; c++) {
            if (strcmp(k->blocks[b].counters[c], name) == 0) return true;
        }
    }
    return false;
}

bool model_counter(const model_kind *kind, const rt_packet *p, const char *name, uint64_t *value) {
    const kernel_def *k = find(p->kernel);
    if (k == NULL || !has_counter(kind, name)) return false;
    char err[128];
    model_buffers mb;
    if (!model_bind(p, &mb, err, sizeof err)) return false;
    uint64_t grid = mb.grid;
    if (kind->nvidia_counters) {
        uint64_t waves = (grid + 63) / 64;
        uint64_t params = (uint64_t)k->buffers + (k->scalar ? 1 : 0);
        if (strcmp(name, "SQ_WAVES") == 0) *value = waves;
        else if (strcmp(name, "SQ_INSTS_VALU") == 0) *value = grid * k->nvidia_valu;
        else if (strcmp(name, "SQ_INSTS_SALU") == 0) *value = waves * (params + 1);
        else if (strcmp(name, "GRBM_COUNT") == 0) *value = grid;
        else if (strcmp(name, "GRBM_GUI_ACTIVE") == 0) *value = waves;
        else return false;
        return true;
    }
    uint64_t wg = dim(p->workgroup[0]) * dim(p->workgroup[1]) * dim(p->workgroup[2]);
    uint64_t groups = (grid + wg - 1) / wg;
    uint64_t waves = groups * ((wg + kind->wave_size - 1) / kind->wave_size);
    uint64_t duration = 1000 + waves * k->ns_per_wave; /* the model's ns */
    uint64_t cycles = duration * 2;                    /* a 2 GHz shader clock */
    uint64_t buffers = (uint64_t)k->buffers;
    uint64_t lines = (mb.items * 4 * buffers + 127) / 128;
    uint64_t hits = lines * 3 / 4;
    if (strcmp(name, "SQ_WAVES") == 0) *value = waves;
    else if (strcmp(name, "SQ_INSTS_VALU") == 0) *value = mb.items * k->valu_per_item;
    else if (strcmp(name, "SQ_INSTS_SALU") == 0) *value = waves * 6;
    else if (strcmp(name, "SQ_INSTS_LDS") == 0) *value = 0;
    else if (strcmp(name, "SQ_WAVE_CYCLES") == 0) *value = waves * k->ns_per_wave * 2;
    else if (strcmp(name, "SQ_BUSY_CYCLES") == 0 || strcmp(name, "GRBM_COUNT") == 0 ||
             strcmp(name, "GRBM_GUI_ACTIVE") == 0) *value = cycles;
    else if (strcmp(name, "TCC_HIT") == 0) *value = hits;
    else if (strcmp(name, "TCC_MISS") == 0 || strcmp(name, "TCC_EA_RDREQ") == 0) *value = lines - hits;
    else if (strcmp(name, "TCP_TCC_READ_REQ") == 0) *value = lines;
    else if (strcmp(name, "TCP_TOTAL_CACHE_ACCESSES") == 0) *value = (mb.items * 4 * buffers + 63) / 64;
    else if (strcmp(name, "TA_BUSY_CYCLES") == 0) *value = waves * 4 * buffers;
    else return false;
    return true;
}
