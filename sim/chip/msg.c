/* Messages (see msg.h): initialisation, handles, TileToken stages, time units. */
#include "sim/chip/msg.h"

#include "sim/data/value.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t sim_cycles_from_ns(double ns, double clock_ghz, bool up)
{
    const double max = 9007199254740992.0; /* 2^53: the largest exact integer of a double */
    double c = ns * clock_ghz;
    if (!(c > 0)) /* negative, zero or NaN */
        return 0;
    if (c >= max)
        return (uint64_t)max;
    double r = nearbyint(c);
    if (fabs(c - r) <= 1e-9 * (r > 1 ? r : 1))
        return (uint64_t)r;
    return (uint64_t)(up ? ceil(c) : floor(c));
}

double sim_ticks_to_ns(sim_time_t t)
{
    /* split so large tick counts keep their picosecond digits exact */
    sim_time_t whole = t / SIM_TICKS_PER_NS, frac = t % SIM_TICKS_PER_NS;
    return (double)whole + (double)frac / (double)SIM_TICKS_PER_NS;
}

sim_time_t sim_ns_to_ticks(double ns)
{
    if (!(ns > 0))
        return 0;
    return (sim_time_t)llround(ns * SIM_TICKS_PER_NS);
}

void sim_handle_set(struct sim_handle *h, const char *space, uint64_t addr, enum sim_dtype dtype,
                    unsigned ndim, const int64_t *shape, const char *id)
{
    assert(ndim <= SIM_MAX_DIMS);
    memset(h, 0, sizeof(*h));
    sim_strlcpy(h->space, space, sizeof(h->space));
    h->addr = addr;
    h->dtype = dtype;
    h->ndim = ndim;
    for (unsigned i = 0; i < ndim; i++)
        h->shape[i] = shape[i];
    h->nbytes = sim_handle_numel(h) * sim_dtype_size(dtype);
    sim_strlcpy(h->id, id ? id : "", sizeof(h->id));
}

uint64_t sim_handle_numel(const struct sim_handle *h)
{
    uint64_t n = 1;
    for (unsigned i = 0; i < h->ndim; i++)
        n *= (uint64_t)h->shape[i];
    return n;
}

static const char *const type_names[SIM_MK_COUNT] = {
    [SIM_MK_CONTROL] = "Control",
    [SIM_MK_DMA_READ] = "DmaReadCmd",
    [SIM_MK_DMA_WRITE] = "DmaWriteCmd",
    [SIM_MK_GEMM] = "GemmCmd",
    [SIM_MK_MATH] = "MathCmd",
    [SIM_MK_COMPOSITE] = "CompositeCmd",
    [SIM_MK_TILE_TOKEN] = "TileToken",
    [SIM_MK_IPCQ_COPY] = "IpcqCopy",
    [SIM_MK_MEMORY_WRITE] = "MemoryWrite",
    [SIM_MK_MEMORY_READ] = "MemoryRead",
    [SIM_MK_KERNEL_LAUNCH] = "KernelLaunch",
};

const char *sim_msg_kind_type_name(enum sim_msg_kind kind)
{
    assert(kind < SIM_MK_COUNT);
    return type_names[kind];
}

void sim_msg_init(struct sim_msg *m, enum sim_msg_kind kind)
{
    assert(kind < SIM_MK_COUNT);
    memset(m, 0, sizeof(*m));
    m->kind = kind;
    m->type_name = type_names[kind];
    /* ADR-0020 D4: the commands, IPCQ copies and TileTokens are data ops; control traffic and
     * host requests (ADR-0012, serviced by CPUs and memories on their way) are not */
    m->data_op = kind != SIM_MK_CONTROL && kind != SIM_MK_MEMORY_WRITE &&
                 kind != SIM_MK_MEMORY_READ && kind != SIM_MK_KERNEL_LAUNCH;
    m->cmdq_id = -1;
}

void sim_msg_init_control(struct sim_msg *m, const char *name, uint64_t nbytes)
{
    sim_msg_init(m, SIM_MK_CONTROL);
    sim_strlcpy(m->u.control.name, name, sizeof(m->u.control.name));
    m->u.control.nbytes = nbytes;
    m->type_name = m->u.control.name;
    m->wire_bytes = nbytes;
}

void sim_msg_fini(struct sim_msg *m)
{
    switch (m->kind) {
    case SIM_MK_TILE_TOKEN:
        for (unsigned i = 0; i < m->u.tile.n_stages; i++) {
            sim_value_free(m->u.tile.stages[i].params);
            m->u.tile.stages[i].params = NULL;
        }
        m->u.tile.n_stages = 0;
        m->u.tile.stage_idx = 0;
        break;
    case SIM_MK_IPCQ_COPY:
        sim_tensor_unref(m->u.ipcq.snapshot);
        m->u.ipcq.snapshot = NULL;
        break;
    default: break;
    }
}

static const char *const stage_names[SIM_STAGE_COUNT] = {
    [SIM_STAGE_DMA_READ] = "DMA_READ",
    [SIM_STAGE_GEMM] = "GEMM",
    [SIM_STAGE_MATH] = "MATH",
    [SIM_STAGE_DMA_WRITE] = "DMA_WRITE",
};

const char *sim_stage_type_name(enum sim_stage_type t)
{
    assert(t < SIM_STAGE_COUNT);
    return stage_names[t];
}

void sim_tile_add_stage_take(struct sim_msg *m, enum sim_stage_type type, uint32_t node,
                             uint64_t nbytes, uint64_t flops, struct sim_value *params)
{
    assert(m->kind == SIM_MK_TILE_TOKEN);
    assert(m->u.tile.n_stages < SIM_TILE_MAX_STAGES);
    struct sim_tile_stage *s = &m->u.tile.stages[m->u.tile.n_stages++];
    memset(s, 0, sizeof(*s));
    s->type = type;
    s->node = node;
    s->mem = -1;
    s->mem_b = -1;
    s->nbytes = nbytes;
    s->flops = flops;
    s->params = params ? params : sim_value_map();
}
