/*
 * The table of timing models (see models.h): which comp_*.c model services each node kind.
 * The chip looks its components' models up here; the models call the component base.
 */
#include "sim/chip/models.h"

#include <assert.h>

/* Models in comp_*.c */
extern const struct sim_component_ops sim_comp_io_cpu, sim_comp_m_cpu, sim_comp_pe_cpu,
    sim_comp_noc, sim_comp_memory, sim_comp_pe_dma, sim_comp_pe_gemm, sim_comp_pe_math;

const struct sim_component_ops *sim_models_for(enum sim_node_kind kind)
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
