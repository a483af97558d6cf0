/*
 * The compute engines. PE_GEMM: a GEMM of m x k by k x n takes setup_ns +
 * ceil(m*n*k / macs_per_cycle[dtype]) cycles at clock_ghz (2*m*n*k flops at two flops per
 * multiply-accumulate). PE_MATH: an op over n elements takes setup_ns + ceil(n / lanes) *
 * cycles[op] cycles; a reduction counts its input elements. Both run one op at a time.
 * A CompositeCmd serviced here runs the tiled pipeline of comp_pipeline.c.
 */
#include "sim/chip/chip.h"
#include "sim/chip/component.h"

#include <math.h>
#include <string.h>

double sim_component_gemm_ns(const struct sim_config *cfg, uint64_t m, uint64_t n, uint64_t k,
                             enum sim_dtype dtype)
{
    const char *name = sim_dtype_name(dtype);
    double macs = sim_config_gemm_macs(cfg, name);
    if (macs <= 0) /* no rate of its own: small integers go at the i8 rate, others at f32 */
        macs = sim_config_gemm_macs(cfg, sim_dtype_is_float(dtype) ? "f32" : "i8");
    double cycles = ceil((double)m * (double)n * (double)k / macs);
    return cfg->pe_gemm.setup_ns + sim_config_cycles_to_ns(cfg, cycles);
}

static const struct {
    const char *op, *cost;
} cost_alias[] = {
    {"maximum", "max"},   {"minimum", "min"}, {"reciprocal", "recip"},
    {"logsumexp", "exp"}, {"square", "mul"},  {"pow", "exp"},
};

const char *sim_component_math_cost_name(const char *op)
{
    for (size_t i = 0; i < sizeof(cost_alias) / sizeof(cost_alias[0]); i++) /* per math op */
        if (op[0] == cost_alias[i].op[0] && strcmp(op, cost_alias[i].op) == 0)
            return cost_alias[i].cost;
    return op;
}

double sim_component_math_ns(const struct sim_config *cfg, const char *op, uint64_t elements)
{
    double per = sim_config_math_cycles(cfg, sim_component_math_cost_name(op));
    if (per < 0)
        per = 1;
    double groups = ceil((double)elements / cfg->pe_math.lanes);
    return cfg->pe_math.setup_ns + sim_config_cycles_to_ns(cfg, groups * per);
}

static void busy_for(struct sim_proc *p, struct sim_component *c, double ns)
{
    sim_component_acquire(p, c);
    sim_wait(p, sim_ns_to_ticks(ns));
    sim_component_release(p, c);
}

static void gemm_mnk(const struct sim_gemm_cmd *g, uint64_t *m, uint64_t *n, uint64_t *k)
{
    const struct sim_handle *a = &g->a, *b = &g->b;
    uint64_t a0 = a->ndim >= 2 ? (uint64_t)a->shape[a->ndim - 2] : 1;
    uint64_t a1 = a->ndim >= 1 ? (uint64_t)a->shape[a->ndim - 1] : 1;
    uint64_t b0 = b->ndim >= 2 ? (uint64_t)b->shape[b->ndim - 2] : 1;
    uint64_t b1 = b->ndim >= 1 ? (uint64_t)b->shape[b->ndim - 1] : 1;
    *m = g->transpose_a ? a1 : a0;
    *k = g->transpose_a ? a0 : a1;
    *n = g->transpose_b ? b0 : b1;
    /* a batched GEMM: leading dims of A multiply m */
    for (unsigned i = 0; i + 2 < a->ndim; i++)
        *m *= (uint64_t)a->shape[i];
}

static void gemm_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    const struct sim_config *cfg = sim_chip_config(c->chip);
    switch (msg->kind) {
    case SIM_MK_GEMM: {
        uint64_t m, n, k;
        gemm_mnk(&msg->u.gemm, &m, &n, &k);
        busy_for(p, c, sim_component_gemm_ns(cfg, m, n, k, msg->u.gemm.a.dtype));
        break;
    }
    case SIM_MK_TILE_TOKEN: {
        const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
        /* flops = 2mnk: mnk multiply-accumulates */
        busy_for(p, c, sim_component_gemm_ns(cfg, st->flops / 2, 1, 1, st->dtype));
        sim_component_tile_forward(c, msg);
        break;
    }
    case SIM_MK_COMPOSITE: sim_component_run_composite(p, c, msg); break;
    default: busy_for(p, c, cfg->pe_gemm.setup_ns); break;
    }
}

static void math_service(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    const struct sim_config *cfg = sim_chip_config(c->chip);
    switch (msg->kind) {
    case SIM_MK_MATH: {
        const struct sim_math_cmd *m = &msg->u.math;
        /* a reduction reads every input element; an elementwise op makes every output */
        uint64_t n = m->has_axis && m->n_inputs ? sim_handle_numel(&m->inputs[0])
                                                : sim_handle_numel(&m->out);
        busy_for(p, c, sim_component_math_ns(cfg, m->op, n));
        break;
    }
    case SIM_MK_TILE_TOKEN: {
        const struct sim_tile_stage *st = &msg->u.tile.stages[msg->u.tile.stage_idx];
        busy_for(p, c, sim_component_math_ns(cfg, st->op, st->flops));
        sim_component_tile_forward(c, msg);
        break;
    }
    case SIM_MK_COMPOSITE: sim_component_run_composite(p, c, msg); break;
    default: busy_for(p, c, cfg->pe_math.setup_ns); break;
    }
}

const struct sim_component_ops sim_comp_pe_gemm = {.name = "pe_gemm", .service = gemm_service};
const struct sim_component_ops sim_comp_pe_math = {.name = "pe_math", .service = math_service};
