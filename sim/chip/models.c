/*
 * The table of timing models (see models.h): which comp_*.c model services each node kind,
 * and the models plug-ins registered. The chip looks its components' models up here; the
 * models call the component base.
 */
#include "sim/chip/models.h"

#include "sim/data/yaml.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(SIM_CONFIG_MODEL_KINDS == SIM_NODE_KIND_COUNT, "a config model per node kind");

/* Models in comp_*.c */
extern const struct sim_component_ops sim_comp_io_cpu, sim_comp_m_cpu, sim_comp_pe_cpu,
    sim_comp_noc, sim_comp_memory, sim_comp_pe_dma, sim_comp_pe_gemm, sim_comp_pe_math;

const struct sim_component_ops *sim_models_builtin(enum sim_node_kind kind)
{
    switch (kind) {
    case SIM_NODE_IO_CPU: return &sim_comp_io_cpu;
    case SIM_NODE_M_CPU: return &sim_comp_m_cpu;
    case SIM_NODE_PE_CPU: return &sim_comp_pe_cpu;
    case SIM_NODE_NOC: return &sim_comp_noc;
    case SIM_NODE_HBM:
    case SIM_NODE_SRAM:
    case SIM_NODE_TCM: return &sim_comp_memory;
    case SIM_NODE_PE_DMA: return &sim_comp_pe_dma;
    case SIM_NODE_PE_GEMM: return &sim_comp_pe_gemm;
    case SIM_NODE_PE_MATH: return &sim_comp_pe_math;
    default: break;
    }
    assert(!"a model for every node kind");
    return &sim_comp_noc;
}

void sim_component_builtin(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    const struct sim_component_ops *ops = sim_models_builtin(c->kind);
    if (ops->service)
        ops->service(p, c, msg);
}

const char *sim_models_kind_name(enum sim_node_kind kind)
{
    return sim_topo_kind_name(kind);
}

const char *sim_models_section(enum sim_node_kind kind)
{
    switch (kind) {
    case SIM_NODE_IO_CPU: return "io_cpu";
    case SIM_NODE_M_CPU: return "m_cpu";
    case SIM_NODE_PE_CPU: return "pe.cpu";
    case SIM_NODE_PE_DMA: return "pe.dma";
    case SIM_NODE_PE_GEMM: return "pe.gemm";
    case SIM_NODE_PE_MATH: return "pe.math";
    case SIM_NODE_HBM: return "memory.hbm";
    case SIM_NODE_SRAM: return "memory.sram";
    case SIM_NODE_TCM: return "memory.tcm";
    default: return NULL;
    }
}

/* The models plug-ins registered: process-wide, as the plug-ins are. */
static struct reg {
    const struct sim_component_ops *ops; /* borrowed: the plug-in's */
    enum sim_node_kind kind;
    char *origin; /* owned */
} * regs;
static size_t n_regs, cap_regs;

/* The node kind named name that a config can give a model, or -1. */
static int model_kind(const char *name)
{
    for (int k = 0; name && k < SIM_NODE_KIND_COUNT; k++)
        if (sim_models_section((enum sim_node_kind)k) &&
            strcmp(sim_topo_kind_name((enum sim_node_kind)k), name) == 0)
            return k;
    return -1;
}

static bool identifier(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

const struct sim_component_ops *sim_models_find(enum sim_node_kind kind, const char *name,
                                                int *other_kind)
{
    if (other_kind)
        *other_kind = -1;
    if (!name || strcmp(name, SIM_MODELS_BUILTIN) == 0)
        return sim_models_builtin(kind);
    for (size_t i = 0; i < n_regs; i++) {
        if (strcmp(regs[i].ops->name, name) != 0)
            continue;
        if (regs[i].kind == kind)
            return regs[i].ops;
        if (other_kind)
            *other_kind = (int)regs[i].kind;
    }
    return NULL;
}

const char *sim_models_closest(enum sim_node_kind kind, const char *name)
{
    const char **names = sim_xcalloc(n_regs + 2, sizeof(*names));
    size_t n = 0;
    names[n++] = SIM_MODELS_BUILTIN;
    for (size_t i = 0; i < n_regs; i++)
        if (regs[i].kind == kind)
            names[n++] = regs[i].ops->name;
    const char *best = sim_yaml_closest(name, names);
    free(names);
    return best;
}

int sim_models_register(const struct sim_component_ops *ops, const char *origin, struct diag *d)
{
    if (!ops->name || !identifier(ops->name))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "a model's name %s%.64s%s is not a C identifier", ops->name ? "'" : "",
                        ops->name ? ops->name : "(NULL)", ops->name ? "'" : "");
    if (strcmp(ops->name, SIM_MODELS_BUILTIN) == 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "model '%s': the name is reserved for the built-in models", ops->name);
    if (!ops->service)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "model '%.64s' has no service", ops->name);
    int kind = model_kind(ops->kind);
    if (kind < 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "model '%.64s': kind %s%.64s%s is not one a config can choose a model "
                        "for (pe_cpu, pe_dma, pe_gemm, pe_math, hbm, sram, tcm, io_cpu, m_cpu)",
                        ops->name, ops->kind ? "'" : "", ops->kind ? ops->kind : "NULL",
                        ops->kind ? "'" : "");
    for (size_t i = 0; i < n_regs; i++)
        if (strcmp(regs[i].ops->name, ops->name) == 0)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "model '%.64s' is already defined by %s", ops->name, regs[i].origin);
    if (n_regs == cap_regs) {
        cap_regs = cap_regs ? 2 * cap_regs : 8;
        regs = sim_xreallocarray(regs, cap_regs, sizeof(*regs));
    }
    regs[n_regs++] = (struct reg){ops, (enum sim_node_kind)kind, sim_xstrdup(origin ? origin : "")};
    return 0;
}

size_t sim_models_count(void)
{
    return n_regs;
}

const struct sim_component_ops *sim_models_at(size_t i)
{
    return i < n_regs ? regs[i].ops : NULL;
}

const char *sim_models_origin(size_t i)
{
    return i < n_regs ? regs[i].origin : NULL;
}

const char *sim_models_origin_of(const struct sim_component_ops *ops)
{
    for (size_t i = 0; i < n_regs; i++)
        if (regs[i].ops == ops)
            return regs[i].origin;
    return NULL;
}

void sim_models_unregister_from(size_t n)
{
    while (n_regs > n)
        free(regs[--n_regs].origin);
}
