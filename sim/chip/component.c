/*
 * The component base (see component.h): the hooks around every service, busy-time
 * accounting, and memory port accesses shared by the models in comp_*.c.
 */
#include "sim/chip/component.h"

#include "sim/chip/oplog.h"
#include "sim/util/xalloc.h"

#include <assert.h>

/* An interval c serves (an op record's or a span's) begins at t: a busy period opens when
 * none was in flight. A span's end, rounded up, may reach past the next start: the busy
 * period then counts from that end, so the overlap counts once. */
static void serve_begin(struct sim_component *c, sim_time_t t)
{
    if (c->serving++ == 0) {
        uint64_t s = sim_cycles_from_ns(sim_ticks_to_ns(t), c->clock_ghz, false);
        c->serving_from = s > c->serving_to ? s : c->serving_to;
        c->serving_to = c->serving_from;
    }
}

/* That interval ends at t (up: rounded up, as a span's end is in the trace). */
static void serve_end(struct sim_component *c, sim_time_t t, bool up)
{
    assert(c->serving > 0);
    uint64_t e = sim_cycles_from_ns(sim_ticks_to_ns(t), c->clock_ghz, up);
    if (e > c->serving_to)
        c->serving_to = e;
    if (--c->serving == 0)
        c->stats.busy_cycles += c->serving_to - c->serving_from;
}

/* Start the op record of the data op p waits with at c, if any, at `now`. */
static void start_waiting(struct sim_component *c, const struct sim_proc *p, sim_time_t now)
{
    for (size_t i = c->n_waits; i-- > 0;) {
        struct sim_component_wait w = c->waits[i];
        if (w.p != p)
            continue;
        c->waits[i] = c->waits[--c->n_waits];
        serve_begin(c, now);
        if (c->oplog)
            sim_oplog_record_start_queued(c->oplog, now, c->id, w.msg, now - w.t_in);
        return;
    }
}

void sim_component_handle(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg)
{
    struct sim_engine *e = sim_proc_engine(p);
    struct sim_oplog *log = msg->data_op ? c->oplog : NULL;
    sim_time_t t_in = sim_engine_now(e);
    /* a composite runs its tiles elsewhere: it starts on arrival */
    bool deferred = msg->data_op && c->units && msg->kind != SIM_MK_COMPOSITE;
    bool counted = msg->data_op || sim_component_spans(c); /* what its trace track holds */
    if (deferred) { /* _on_process_start once it has a unit (sim_component_acquire) */
        if (c->n_waits == c->cap_waits) {
            c->cap_waits = c->cap_waits ? 2 * c->cap_waits : 8;
            c->waits = sim_xreallocarray(c->waits, c->cap_waits, sizeof(*c->waits));
        }
        c->waits[c->n_waits++] = (struct sim_component_wait){p, msg, t_in};
    } else {
        if (counted)
            serve_begin(c, t_in);
        if (log) /* ADR-0020 D2: _on_process_start */
            sim_oplog_record_start(log, t_in, c->id, msg);
    }
    c->stats.msgs++;
    if (c->ops->service)
        c->ops->service(p, c, msg);
    if (deferred) /* a service that never took a unit started on arrival */
        start_waiting(c, p, t_in);
    /* a data op's record ends in its cycle; a span (a control message) is rounded out */
    if (counted)
        serve_end(c, sim_engine_now(e), !msg->data_op);
    if (log) /* _on_process_end */
        sim_oplog_record_end(log, sim_engine_now(e), c->id, msg);
    else if (c->hooks && c->hooks->serviced && !msg->data_op)
        c->hooks->serviced(c, msg, t_in, sim_engine_now(e));
}

void sim_component_acquire(struct sim_proc *p, struct sim_component *c)
{
    assert(c->units);
    sim_resource_request(p, c->units);
    sim_time_t now = sim_engine_now(sim_proc_engine(p));
    if (c->active++ == 0)
        c->active_since = now;
    if (c->n_waits)
        start_waiting(c, p, now);
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

bool sim_component_spans(const struct sim_component *c)
{
    return c->kind == SIM_NODE_IO_CPU || c->kind == SIM_NODE_M_CPU;
}

uint64_t sim_component_busy_cycles(const struct sim_component *c)
{
    uint64_t b = c->stats.busy_cycles;
    if (c->serving) { /* in flight: busy up to now, as the trace counts it */
        sim_time_t now = sim_engine_now(c->engine);
        uint64_t e = sim_cycles_from_ns(sim_ticks_to_ns(now), c->clock_ghz, true);
        b += (e > c->serving_to ? e : c->serving_to) - c->serving_from;
    }
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

void sim_component_wait_ns(struct sim_proc *p, double ns)
{
    sim_wait(p, sim_ns_to_ticks(ns));
}

double sim_component_busy_ns(const struct sim_component *c)
{
    return (double)sim_component_busy(c) / SIM_TICKS_PER_NS;
}

double sim_component_now_ns(const struct sim_component *c)
{
    return (double)sim_engine_now(c->engine) / SIM_TICKS_PER_NS;
}

const struct sim_config *sim_component_config(const struct sim_component *c)
{
    return c->cfg;
}

const char *sim_component_id(const struct sim_component *c)
{
    return c->id;
}
