/*
 * The component base (see component.h): the hooks around every service, busy-time
 * accounting, and memory port accesses shared by the models in comp_*.c.
 */
#include "sim/chip/component.h"

#include "sim/chip/oplog.h"

#include <assert.h>

void sim_component_handle(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    struct sim_engine *e = sim_proc_engine(p);
    struct sim_oplog *log = msg->data_op ? c->oplog : NULL;
    if (log) /* ADR-0020 D2: _on_process_start */
        sim_oplog_record_start(log, sim_engine_now(e), c->id, msg);
    c->stats.msgs++;
    sim_time_t t_in = sim_engine_now(e);
    if (c->ops->service)
        c->ops->service(p, c, msg);
    if (log) /* _on_process_end */
        sim_oplog_record_end(log, sim_engine_now(e), c->id, msg);
    else if (c->hooks && c->hooks->serviced && !msg->data_op)
        c->hooks->serviced(c, msg, t_in, sim_engine_now(e));
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
        b += sim_engine_now(c->engine) - c->active_since;
    return b;
}

void sim_component_mem_access(struct sim_proc *p, struct sim_component *mem, uint64_t nbytes,
                              bool write)
{
    assert(mem->port);
    sim_time_t t_in = sim_engine_now(mem->engine);
    sim_link_transfer(p, mem->port, nbytes);
    sim_component_mem_accounted(mem, nbytes, write, t_in, sim_engine_now(mem->engine));
}

void sim_component_mem_accounted(struct sim_component *mem, uint64_t nbytes, bool write,
                                 sim_time_t t_in, sim_time_t t_out)
{
    if (mem->hooks && mem->hooks->accessed)
        mem->hooks->accessed(mem, nbytes, write, t_in, t_out);
    if (write)
        mem->stats.bytes_written += nbytes;
    else
        mem->stats.bytes_read += nbytes;
}
