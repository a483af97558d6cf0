/*
 * The component base (see component.h): the hooks around every service, busy-time
 * accounting, and memory port accesses shared by the models in comp_*.c.
 */
#include "sim/component.h"

#include "sim/chip.h"
#include "sim/oplog.h"

#include <assert.h>

/* Models in comp_*.c */
extern const struct sim_component_ops sim_comp_io_cpu, sim_comp_m_cpu, sim_comp_pe_cpu,
    sim_comp_noc, sim_comp_memory, sim_comp_pe_dma, sim_comp_pe_gemm, sim_comp_pe_math;

const struct sim_component_ops *sim_component_ops_for(enum sim_node_kind kind)
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

void sim_component_handle(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    struct sim_engine *e = sim_proc_engine(p);
    struct sim_oplog *log = msg->data_op ? sim_chip_active_oplog(c->chip) : NULL;
    if (log) /* ADR-0020 D2: _on_process_start */
        sim_oplog_record_start(log, sim_engine_now(e), c->id, msg);
    c->stats.msgs++;
    if (c->ops->service)
        c->ops->service(p, c, msg);
    if (log) /* _on_process_end */
        sim_oplog_record_end(log, sim_engine_now(e), c->id, msg);
}

void sim_component_acquire(struct sim_proc *p, struct sim_component *c)
{
    assert(c->units);
    sim_resource_request(p, c->units);
    if (c->active++ == 0)
        c->active_since = sim_engine_now(sim_proc_engine(p));
}

void sim_component_release(struct sim_proc *p, struct sim_component *c)
{
    assert(c->active > 0);
    if (--c->active == 0)
        c->stats.busy += sim_engine_now(sim_proc_engine(p)) - c->active_since;
    sim_resource_release(p, c->units);
}

sim_time_t sim_component_busy(const struct sim_component *c)
{
    if (c->port)
        return sim_link_busy(c->port);
    sim_time_t b = c->stats.busy;
    if (c->active)
        b += sim_engine_now(sim_chip_engine(c->chip)) - c->active_since;
    return b;
}

void sim_component_mem_access(struct sim_proc *p, struct sim_component *mem, uint64_t nbytes,
                              bool write)
{
    assert(mem->port);
    sim_link_transfer(p, mem->port, nbytes);
    if (write)
        mem->stats.bytes_written += nbytes;
    else
        mem->stats.bytes_read += nbytes;
}
