/*
 * Component timing models: what a model is (struct sim_component_ops) and the calls it is
 * built from. The built-in models (sim/chip/comp_*.c) use them, and so may a plug-in's
 * (<npuscope/plugin.h> lists its models): a chip config picks a model per node kind with the
 * `model` key of the kind's section (`pe: {dma: {model: sizedma}}`, sim/configs/README.md).
 *
 * A model's service runs once per message the component handles, in the message's own
 * simulated process: it takes time by waiting (sim_component_wait_ns), by holding one of the
 * component's units (sim_component_acquire / _release: DMA channels, an engine, a CPU), and
 * by accessing memories (sim_component_mem_access, sim_component_dma_move). Calls that take
 * simulated time yield; a service must return once its message is done. The handles
 * (struct sim_proc, sim_component, sim_msg) are opaque and valid only during the service.
 */
#ifndef SIM_TIMING_H
#define SIM_TIMING_H

#include "sim/chip/config.h"

#include <stdbool.h>
#include <stdint.h>

struct sim_proc;
struct sim_component;
struct sim_msg;

/* A timing model: what a kind of component does with a message. */
struct sim_component_ops {
    const char *name; /* the model's name, e.g. "pe_dma"; a plug-in's: a C identifier that a
                         config names (`model: NAME`) */
    /* Service msg at c in process p: the timing model. May block. Must not log. A built-in
     * service may give the message a new route (sim_chip_route_msg) to send it on after the
     * end hook: a self-routing TileToken does. NULL: the service takes no time. */
    void (*service)(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg);
    /* A plug-in's model: the node kind it models ("pe_dma", "pe_gemm", "pe_math", "pe_cpu",
     * "hbm", "sram", "tcm", "io_cpu", "m_cpu"); NULL in the built-in ones. */
    const char *kind;
    /* One line on what it charges, for listings (may be NULL). */
    const char *doc;
};

/*
 * Take one of c's units (a DMA channel, the engine, the CPU), queueing FIFO behind other
 * requesters, and count c busy from then; give it back. Yields. The op record of the
 * message starts when its service first takes a unit (it waited in the queue before). Only
 * components with units (not memories) have them.
 */
void sim_component_acquire(struct sim_proc *p, struct sim_component *c);
void sim_component_release(struct sim_proc *p, struct sim_component *c);

/* Wait ns of simulated time (rounded to the engine's tick, 1 ps). Yields. */
void sim_component_wait_ns(struct sim_proc *p, double ns);

/*
 * Access nbytes of memory component mem (hbm, sram, tcm) from process p: latency_ns +
 * nbytes / gbps over its port, shared with concurrent accesses. Counts the bytes read or
 * written. Yields.
 */
void sim_component_mem_access(struct sim_proc *p, struct sim_component *mem, uint64_t nbytes,
                              bool write);

/* Ns during which at least one of c's units worked, up to now (a memory: its port). */
double sim_component_busy_ns(const struct sim_component *c);

/* The simulated time now, in ns. */
double sim_component_now_ns(const struct sim_component *c);

/* The chip config c belongs to (borrowed: its timing parameters, sim/chip/config.h). */
const struct sim_config *sim_component_config(const struct sim_component *c);

/* c's id ("sip0.cube0.pe0.pe_dma"; borrowed). */
const char *sim_component_id(const struct sim_component *c);

/*
 * The bytes msg moves through a DMA engine (a dma_read's source, a dma_write's or an IPCQ
 * copy's destination, a pipeline stage's), 0 for a message that moves none; *to_memory
 * (may be NULL) is set when they go to the far memory.
 */
uint64_t sim_component_msg_bytes(const struct sim_msg *msg, bool *to_memory);

/* The far memory of a DMA message at DMA engine c (the memory its bytes come from or go
 * to), or NULL when it has none. */
struct sim_component *sim_component_far_memory(struct sim_component *c, const struct sim_msg *msg);

/*
 * The data phase of the built-in DMA model for msg at DMA engine c: the bytes cross the far
 * memory's port and every NoC link between c and that memory, pipelined and shared with the
 * other transfers on them, never faster than the channel's rate (pe.dma.gbps); then the
 * links' and the memory's first-byte latencies. Counts the bytes in c's and the memory's
 * counters, and moves a pipeline's TileToken on to its next stage. Call it once per message,
 * holding a unit (sim_component_acquire). Yields.
 */
void sim_component_dma_move(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg);

/* Service msg at c with the built-in model of c's kind (a model that adds to it, or
 * handles some messages itself and leaves the rest). Yields. */
void sim_component_builtin(struct sim_proc *p, struct sim_component *c, struct sim_msg *msg);

#endif
