/*
 * Components: the modelled hardware that services messages (ADR-0020 D2, D9). One
 * component per node of the topology; its behaviour is a const struct of ops per node kind
 * (sim/chip/timing.h: the built-in ones in sim/chip/comp_*.c or a plug-in's, picked by
 * sim/chip/models.h). The base (sim_component_handle) runs every
 * message the same way:
 *
 *     start hook   op log record_start, when the message is a data op and a log is attached
 *     service      the kind's timing model: may block (engine waits, resources, links)
 *     end hook     op log record_end
 *
 * and sim_chip_send (sim/chip/chip.h) forwards the message hop by hop. Component models never
 * log: the hooks are the single source of truth for op records. Every timing parameter
 * comes from the chip config (sim/chip/config.h):
 *
 *     io_cpu, m_cpu   overhead_ns per message
 *     pe_cpu          issue_ns per command issued, launch_ns per kernel instance started
 *     noc             routers forward (the links carry the time)
 *     hbm, sram, tcm  latency_ns + bytes / gbps on the memory's port, shared by concurrent
 *                     accesses (contention)
 *     pe_dma          on one of `channels`: setup_ns, then the far memory's port access and
 *                     the channel rate together (max of the two), then the latency of the
 *                     links between the DMA and that memory
 *     pe_gemm         setup_ns + ceil(m*n*k / macs_per_cycle[dtype]) cycles (2*m*n*k flops
 *                     at 2*macs_per_cycle flops per cycle)
 *     pe_math         setup_ns + ceil(elements / lanes) * cycles[op] cycles
 */
#ifndef SIM_COMPONENT_H
#define SIM_COMPONENT_H

#include "sim/engine/engine.h"
#include "sim/chip/msg.h"
#include "sim/chip/timing.h"
#include "sim/chip/topology.h"

#include <stdbool.h>
#include <stdint.h>

struct sim_chip;
struct sim_component;
struct sim_oplog;

/*
 * What the base tells the chip besides op records, through static functions of the chip:
 * NULL in a component nobody observes (sim_chip_observe sets them), so a run that nobody
 * watches pays one pointer test per message.
 */
struct sim_component_hooks {
    /* c (an io_cpu or m_cpu) serviced msg, a message that is no data op, over
     * [t_in, t_out) */
    void (*serviced)(struct sim_component *c, const struct sim_msg *msg, sim_time_t t_in,
                     sim_time_t t_out);
    /* nbytes went through the port of memory c over [t_in, t_out) */
    void (*accessed)(struct sim_component *c, uint64_t nbytes, bool write, sim_time_t t_in,
                     sim_time_t t_out);
};

/* Counters of a component, for the run summary and the TUI. */
struct sim_component_stats {
    sim_time_t busy;        /* ticks during which at least one unit was working */
    uint64_t msgs;          /* messages serviced */
    uint64_t bytes_read;    /* memories: bytes read from them; DMA: bytes it moved in */
    uint64_t bytes_written; /* memories: bytes written to them; DMA: bytes it moved out */
    /* cycles inside the union of its ops' and spans' intervals, each instant rounded to its
     * cycle as the trace rounds it: the busy cycles of its track (sim_component_busy_cycles) */
    uint64_t busy_cycles;
};

struct sim_component {
    const struct sim_component_ops *ops; /* borrowed, static or a plug-in's */
    struct sim_chip *chip;               /* borrowed: the chip it belongs to */
    const struct sim_config *cfg;        /* borrowed: the chip's config */
    struct sim_engine *engine;           /* borrowed: the chip's engine */
    struct sim_oplog *oplog;             /* borrowed: the chip's op log, NULL when not logging */
    int node;                            /* topology node index */
    const char *id;                      /* borrowed from the topology: "sip0.cube0.pe0.pe_dma" */
    enum sim_node_kind kind;
    int sip, cube, pe; /* coordinates (-1 where they do not apply) */

    struct sim_resource *units; /* owned by the engine: the engines / channels / CPU, or NULL */
    struct sim_link *port;      /* owned by the engine: a memory's port, or NULL */

    const struct sim_component_hooks *hooks; /* borrowed, static; NULL: nothing to tell */
    int32_t resource; /* its metered resource (sim_chip_resource: an HBM), or -1 */

    struct sim_component_stats stats;
    unsigned active;         /* units working now */
    sim_time_t active_since; /* when active went from 0 to 1 */
    double clock_ghz;        /* the chip's clock, for busy_cycles */
    unsigned serving;        /* op records and spans in flight */
    uint64_t serving_from;   /* cycle the current busy period counts from */
    uint64_t serving_to;     /* latest end cycle of the current (or last) busy period */
    /* owned: data ops arrived and not yet given a unit, whose op records start when they
     * get one (sim_component_acquire): ADR-0052 D1's t_start is when service begins */
    struct sim_component_wait *waits;
    size_t n_waits, cap_waits;
};

/* A data op waiting at a component for a unit. */
struct sim_component_wait {
    const struct sim_proc *p; /* the process servicing it */
    const struct sim_msg *msg;
    sim_time_t t_in; /* when it arrived */
};

/*
 * Service msg at c: start hook, the kind's service, end hook (see the file comment). Runs
 * in process p and yields while the service waits. The message must stay valid until it
 * returns.
 */
void sim_component_handle(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg);

/* Busy ticks of c up to now (a unit working now counts up to now). */
sim_time_t sim_component_busy(const struct sim_component *c);

/* Whether c's service of a control message (not a data op) is a span of the trace: the
 * CPUs that handle host messages (io_cpu, m_cpu). */
bool sim_component_spans(const struct sim_component *c);

/*
 * Busy cycles of c up to now: the measure of the union of the intervals its op records and
 * host spans cover (ADR-0052 D1's t_start to t_end; what its trace track holds), each
 * instant in the cycle the trace puts it in, so that this is the busy figure of its track
 * in the trace (trace_model_track_busy) to the cycle. What is in flight counts up to now.
 */
uint64_t sim_component_busy_cycles(const struct sim_component *c);

/* Account an access of nbytes at memory mem made over [t_in, t_out) through its port as
 * part of a path (sim_chip_dma_data, sim_chip_host_stream): its counters and hooks. */
void sim_component_mem_accounted(struct sim_component *mem, uint64_t nbytes, bool write,
                                 sim_time_t t_in, sim_time_t t_out);

/* Service times in ns of the compute models (see the file comment), for a GEMM of m x k
 * by k x n with input dtype, and a math op over elements. */
double sim_component_gemm_ns(const struct sim_config *cfg, uint64_t m, uint64_t n, uint64_t k,
                             enum sim_dtype dtype);
double sim_component_math_ns(const struct sim_config *cfg, const char *op, uint64_t elements);

/* The config's name of a math op's cost ("maximum" costs as "max", ...); NULL when the
 * config has no cost for it (it then costs 1 cycle per group). */
const char *sim_component_math_cost_name(const char *op);

/*
 * A TileToken's stage is done at c: advance it to its next stage and route it there
 * (ADR-0014 D6 self-routing), so sim_chip_send carries it on after the end hook. The last
 * stage leaves the token where it is.
 */
void sim_component_tile_forward(struct sim_component *c, struct sim_msg *msg);

/* Run a CompositeCmd as a pipeline of TileTokens (READ -> COMPUTE -> WRITE), two tiles in
 * flight, in process p at the compute engine c. Yields until every tile is written. */
void sim_component_run_composite(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg);

#endif
