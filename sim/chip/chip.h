/*
 * A chip instance: one simulation of one chip config. It owns the engine, the topology,
 * one component per topology node, the engine links behind the topology's links (one per
 * direction, plus a host link per sip into its IO_CPU), the memory store and the op log,
 * and what kernels report besides op records (markers, token boundaries).
 *
 * Messages travel with sim_chip_send: hop by hop along their route, crossing each link
 * (latency + bytes / bandwidth, shared) and being serviced by the component at the end of
 * the route (sim/chip/component.h); nodes crossed on the way (routers, CPUs) forward without
 * servicing. Phase-1 memory data goes through sim_chip_mem_*: byte-addressable on top of
 * the tensor-granular memory store, with pattern regions that are never materialised.
 *
 * Addresses: a PA is an address in one PE's address space (ADR-0012: the shard tags say
 * which PE). The memory store is keyed by device addresses, the PA in its PE's window:
 * sim_chip_dev_addr = (global PE index << SIM_CHIP_PE_WINDOW_BITS) | PA.
 */
#ifndef SIM_CHIP_H
#define SIM_CHIP_H

#include "sim/chip/component.h"
#include "sim/chip/config.h"
#include "sim/util/diag.h"
#include "sim/engine/engine.h"
#include "sim/data/memstore.h"
#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"
#include "sim/chip/topology.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_chip;

/* Bits of a PE's address window: PAs are below 2^40, device address = window | PA. */
#define SIM_CHIP_PE_WINDOW_BITS 40
#define SIM_CHIP_PA_MAX         ((UINT64_C(1) << SIM_CHIP_PE_WINDOW_BITS) - 1)

/* Bytes a command or control message occupies on a link. */
#define SIM_CHIP_CMD_BYTES 64

/* ---- hop traces ------------------------------------------------------------------------ */

/* One hop a message took (ADR-0012: explicit hop traces). */
struct sim_hop_rec {
    enum sim_hop_kind kind; /* SERVICE or LINK */
    int node;               /* SERVICE: the node; LINK: the node it left (-1: the host) */
    int to;                 /* LINK: the node it reached (-1: the host) */
    int link;               /* LINK: topology link index, or -1 for a host link */
    bool transit;           /* SERVICE: crossed on the way, not serviced (takes no time) */
    sim_time_t t_in, t_out; /* ticks: when it entered and left the hop */
};

struct sim_hop_log {
    struct sim_hop_rec *v; /* owned */
    size_t n, cap;
};

void sim_hop_log_push(struct sim_hop_log *l, const struct sim_hop_rec *r);
void sim_hop_log_fini(struct sim_hop_log *l);

/* ---- what kernels report ----------------------------------------------------------------- */

/* A named instant (trace MARKER_EVENT). */
struct sim_chip_marker {
    double t_ns;
    char *name;      /* owned */
    char *component; /* owned: the PE CPU that raised it */
    char *kernel;    /* owned, or NULL */
    int64_t cmdq_id;
    char *error; /* owned: a failure's marker (SIM_CHIP_INVALID_MARKER): what went wrong;
                    else NULL */
};

/* The name of the marker of a failure (trace format §11: "INVALID_TRACE"). */
#define SIM_CHIP_INVALID_MARKER "INVALID_TRACE"

/* A token of LLM decode (trace TOKEN_EVENT). */
struct sim_chip_token {
    double t_start_ns, t_end_ns; /* t_end_ns == t_start_ns while open */
    int64_t index;
    bool decode;     /* DECODE, else PREFILL */
    bool open;       /* begun, not ended */
    char *component; /* owned */
    char *kernel;    /* owned, or NULL */
    int64_t cmdq_id;
};

/* A link's counters (one direction). */
struct sim_chip_link_stats {
    const char *name;        /* borrowed: "sip0.cube0.noc->sip0.cube0.hbm", "host->sip0.io_cpu" */
    enum sim_link_class cls; /* SIM_LINK_HOST for host links */
    uint64_t bytes;          /* bytes that crossed it (messages, DMA data, host payloads) */
    double gbps;             /* its bandwidth: utilization is bytes / (gbps x span ns) */
    sim_time_t busy;         /* ticks with at least one transfer on it */
    unsigned max_concurrent;
};

/* ---- what the chip reports besides op records ------------------------------------------- */

/*
 * Metered resources: each cube's HBM and every link but those inside a PE (the NoC, the
 * links between cubes and sips, the IO_CPU's links to its cubes, and the host link of each
 * sip). A link's two directions are one resource: "write" is the direction away from the
 * host (into the chip, towards the memories), "read" the direction towards it, as an HBM
 * is written and read.
 */
enum sim_res_kind {
    SIM_RES_HBM,  /* an HBM's port: reads and writes share its bandwidth */
    SIM_RES_LINK, /* a link: each direction has the full bandwidth */
};

struct sim_chip_resource {
    const char *name; /* borrowed: "sip0.cube1.hbm", "sip0.cube0.noc<->sip0.cube0.hbm",
                         "host<->sip0.io_cpu" (the end nearer the host first) */
    enum sim_res_kind kind;
    enum sim_link_class cls; /* LINK: its class (SIM_LINK_HOST for a host link) */
    int node;                /* HBM: its node; LINK: the end nearer the host (-1: the host) */
    int to;                  /* LINK: the other end; HBM: -1 */
    double gbps;             /* peak bandwidth (per direction for a link), GB/s */
};

/*
 * A span of control work. Host messages (ADR-0012) are control traffic, not data ops, so
 * the op log does not record them; the chip reports them here instead: a message crossing
 * the host link (a request going in, its Completion coming back) and each service of a
 * message by an io_cpu or m_cpu.
 */
enum sim_span_kind {
    SIM_SPAN_HOST_LINK, /* msg crossed the host link of the sip of io_cpu `node` */
    SIM_SPAN_SERVICE,   /* the io_cpu or m_cpu `node` serviced msg */
};

struct sim_host_response;

struct sim_span {
    enum sim_span_kind kind;
    int node;       /* SERVICE: the CPU; HOST_LINK: the io_cpu at the device end */
    bool to_device; /* HOST_LINK: the request going in; else its Completion coming back */
    const struct sim_msg *msg;            /* borrowed for the call: the message (for the
                                             Completion: the request it answers) */
    const struct sim_host_response *resp; /* HOST_LINK back: the response (borrowed), or NULL */
    uint64_t nbytes;                      /* HOST_LINK: bytes that crossed */
    sim_time_t t_start, t_end;            /* ticks */
};

/* What an observer hears. Pointers are borrowed for the call; either may be NULL. */
struct sim_chip_observer {
    void (*on_span)(void *ctx, const struct sim_span *s);
    /* nbytes crossed resource res (sim_chip_resource) over [t0, t1) ticks, in the write
     * direction or the read one. Called for every message hop and memory access: keep it
     * cheap. */
    void (*on_traffic)(void *ctx, uint32_t res, bool write, uint64_t nbytes, sim_time_t t0,
                       sim_time_t t1);
    void *ctx;
};

/* ---- the chip ----------------------------------------------------------------------------- */

/*
 * A new chip for cfg (borrowed: must outlive the chip) at time 0: engine, topology,
 * components, links, an empty memory store and an op log attached to it. stack_size is
 * the coroutine stack of every process (0: the engine's default). Cannot fail for a
 * validated config.
 */
struct sim_chip *sim_chip_new(const struct sim_config *cfg, size_t stack_size);

/* Free the chip and everything it owns. NULL is a no-op. */
void sim_chip_free(struct sim_chip *c);

/* Have fn(ptr) called when the chip is freed, after the engine (and every process) is
 * gone, in reverse order of registration: for what processes use until the end. */
void sim_chip_defer_free(struct sim_chip *c, void (*fn)(void *), void *ptr);

/* Turn op logging on (the default) or off (timing only: the hooks do nothing). */
void sim_chip_set_logging(struct sim_chip *c, bool on);

/* The op log when logging is on, else NULL: what every component's hooks record into. */
struct sim_oplog *sim_chip_active_oplog(const struct sim_chip *c);

/* Borrowed parts. */
struct sim_engine *sim_chip_engine(const struct sim_chip *c);
const struct sim_config *sim_chip_config(const struct sim_chip *c);
const struct sim_topo *sim_chip_topo(const struct sim_chip *c);
struct sim_memstore *sim_chip_store(const struct sim_chip *c);
struct sim_oplog *sim_chip_oplog(const struct sim_chip *c);
/* The roles of memory ranges (sim/chip/roles.h) the op log names in DMA ops' records: a
 * kernel launch tags its KV caches there. */
struct sim_roles *sim_chip_roles(const struct sim_chip *c);
/* The names of memory ranges for the memory inspector: a kernel launch tags its tensor
 * arguments' shards with their names in the kernel's argument table ("kcache", "wq"), kept
 * (owner -1) until another launch names the same range. */
struct sim_roles *sim_chip_names(const struct sim_chip *c);

/* Components: one per topology node, indexed like the nodes. */
size_t sim_chip_component_count(const struct sim_chip *c);
struct sim_component *sim_chip_component(const struct sim_chip *c, int node);

/* Links: the topology's links in both directions (2i: a->b, 2i+1: b->a), then one host
 * link per sip into its IO_CPU and one back. */
size_t sim_chip_link_count(const struct sim_chip *c);
void sim_chip_link_stats(const struct sim_chip *c, size_t i, struct sim_chip_link_stats *out);

/* Metered resources (see struct sim_chip_resource), in a fixed order: the HBMs by node,
 * then the links in topology order, then the host links by sip. */
size_t sim_chip_resource_count(const struct sim_chip *c);
void sim_chip_resource(const struct sim_chip *c, size_t i, struct sim_chip_resource *out);

/* Subscribe an observer of spans and traffic (copied); returns its id for
 * sim_chip_unobserve. Nothing is reported for what happened before. */
int sim_chip_observe(struct sim_chip *c, const struct sim_chip_observer *o);
void sim_chip_unobserve(struct sim_chip *c, int id);

/* Markers and tokens, in the order they were raised. Borrowed. */
size_t sim_chip_marker_count(const struct sim_chip *c);
const struct sim_chip_marker *sim_chip_marker(const struct sim_chip *c, size_t i);
size_t sim_chip_token_count(const struct sim_chip *c);
const struct sim_chip_token *sim_chip_token(const struct sim_chip *c, size_t i);

/*
 * s as a string that lives as long as the chip: equal strings give the same pointer, so a
 * kernel naming the layer of its ops ten million times stores the name once (tl_set_layer,
 * tl_set_tile). NULL gives NULL.
 */
const char *sim_chip_intern(struct sim_chip *c, const char *s);

/* Record a marker / open or close a token at now; component and kernel are copied. */
void sim_chip_add_marker(struct sim_chip *c, const char *name, const char *component,
                         const char *kernel, int64_t cmdq_id);
/* Record that the run met a failure at now (a kernel instance failed, a request's
 * completion failed): a SIM_CHIP_INVALID_MARKER marker carrying error (copied); component
 * (the node where it happened), kernel and cmdq_id as for sim_chip_add_marker. */
void sim_chip_add_failure(struct sim_chip *c, const char *error, const char *component,
                          const char *kernel, int64_t cmdq_id);
/* Returns the token's index for sim_chip_token_end. */
size_t sim_chip_token_begin(struct sim_chip *c, int64_t index, bool decode, const char *component,
                            const char *kernel, int64_t cmdq_id);
void sim_chip_token_end(struct sim_chip *c, size_t token);

/* ---- addresses ------------------------------------------------------------------------- */

/* Global index of PE (sip, cube, pe), or -1 when the chip has no such PE. */
int sim_chip_pe_index(const struct sim_chip *c, int64_t sip, int64_t cube, int64_t pe);
/* Coordinates of global PE g (in range). */
void sim_chip_pe_coords(const struct sim_chip *c, int g, int *sip, int *cube, int *pe);

/* Device address of PA pa in the window of global PE g. */
uint64_t sim_chip_dev_addr(int g, uint64_t pa);
/* The global PE whose window holds device address a, and the PA inside it. */
int sim_chip_addr_pe(uint64_t a);
uint64_t sim_chip_addr_pa(uint64_t a);

/*
 * The memory node that holds device address addr of space: "hbm" -> the HBM of the
 * window's cube, "sram" -> its cube's SRAM, "tcm" (and any other space) -> the window's
 * PE's TCM. -1 when the window names no PE of the chip.
 */
int sim_chip_mem_node(const struct sim_chip *c, const char *space, uint64_t addr);

/* ---- messages --------------------------------------------------------------------------- */

/* The route between two nodes, computed once and kept. Borrowed. */
const struct sim_topo_route *sim_chip_route(struct sim_chip *c, int from, int to);

/* Give msg the route from node `from` to node `to` (hop 0: the sender). */
void sim_chip_route_msg(struct sim_chip *c, struct sim_msg *msg, int from, int to);

/*
 * Carry msg along its route from its current hop, in process p: each link is crossed with
 * msg->wire_bytes (its latency and bandwidth, shared); the first service hop (the sender)
 * and the nodes in between are crossed without service; the last node services it
 * (sim_component_handle). When that service gives the message a new route, it is carried
 * on along it. Records every hop in msg->hop_log when set. Yields.
 */
void sim_chip_send(struct sim_proc *p, struct sim_chip *c, struct sim_msg *msg);

/* Cross the host link of sip `sip` (to_device: host -> IO_CPU, else back) with nbytes of
 * msg, the request (back: the request its response answers, resp). Records the hop in
 * log (may be NULL) and reports the span to observers. Yields. */
void sim_chip_host_hop(struct sim_proc *p, struct sim_chip *c, int sip, bool to_device,
                       uint64_t nbytes, const struct sim_msg *msg,
                       const struct sim_host_response *resp, struct sim_hop_log *log);

/*
 * DMA data: nbytes between the DMA node dma and memory node mem (to_memory: a write),
 * pipelined over the links of their route and the memory's port (sim_link_transfer_path):
 * a data phase at the rate of the most contended of them, lasting at least min_ticks (the
 * DMA channel's own rate), then the route's link latencies and the memory's latency once.
 * Counts the bytes at the memory and on every link; observers hear of them. Yields.
 */
void sim_chip_dma_data(struct sim_proc *p, struct sim_chip *c, int dma, int mem, bool to_memory,
                       uint64_t nbytes, sim_time_t min_ticks);

/*
 * As sim_chip_dma_data, and when mem_b >= 0 a second stream of nbytes_b read from memory
 * mem_b into the same DMA at the same time (the two operands of a GEMM tile): each stream
 * over its own route and port, the links both cross carrying both, the data phase ending
 * when the most contended of all has served its bytes, then the longer of the two
 * streams' latencies. Yields.
 */
void sim_chip_dma_read2(struct sim_proc *p, struct sim_chip *c, int dma, int mem, bool to_memory,
                        uint64_t nbytes, int mem_b, uint64_t nbytes_b, sim_time_t min_ticks);

/*
 * A host request's payload of nbytes streaming between the host and memory node mem
 * (write: into the memory), cut-through over the route between the sip's IO_CPU and the
 * memory, the sip's host link when host is true, and the memory's port: the data phase at
 * the rate of the most contended of them, then the memory's latency (the request's header
 * has paid the links' latencies). Yields.
 */
void sim_chip_host_stream(struct sim_proc *p, struct sim_chip *c, int mem, bool write,
                          uint64_t nbytes, bool host);

/* ---- phase-1 memory data ---------------------------------------------------------------- */

/*
 * The memory is byte-addressable (ADR-0020 D7) on top of the tensor-granular memory store.
 * Plain tensors are kept consistent byte for byte (a write copies its bytes into every
 * plain tensor it overlaps). A pattern region (a pattern-backed tensor, sim/tensor.h: a
 * MemoryWrite pattern, a kernel's data=zero inputs) is never written into nor
 * materialised: a write over part of it is stored as a tensor of its own laid on top, and
 * reads assemble the written tensors over the pattern, in write order.
 */

/*
 * Read nbytes-matching data at (space, addr) as dtype and shape, as a new reference in
 * *out: the tensor stored there (reinterpreted / reshaped by the memory store) when it holds
 * the latest bytes of the range; else a copy of the range's bytes: from the one tensor that
 * holds them all (pattern-backed, costing nothing, when that is a pattern region with
 * nothing written over the range), or assembled from every tensor overlapping it.
 * Errors: -SIM_ENOENT when no tensor holds some byte of the range, -SIM_EINVAL when the
 * layouts do not fit (d names them).
 */
int sim_chip_mem_read(struct sim_chip *c, const char *space, uint64_t addr, enum sim_dtype dtype,
                      unsigned ndim, const int64_t *shape, struct sim_tensor **out, struct diag *d);

/*
 * Write t at (space, addr) at now, labelled op for the memory inspector: when the range
 * lies inside a larger plain tensor already stored, its bytes are copied into that tensor;
 * otherwise the store keeps a reference to t (over a pattern region: laid on top of it).
 * Every other plain tensor overlapping the range gets its bytes (a pattern t's bytes are
 * produced for the overlap only). Clears a pending binding of the range.
 */
void sim_chip_mem_write(struct sim_chip *c, const char *space, uint64_t addr, struct sim_tensor *t,
                        const char *op);

/*
 * The n bytes at (space, addr) into buf, assembled from every stored tensor overlapping
 * the range in the order they were written; bytes no tensor holds read as 0. Materialises
 * nothing. Returns the number of bytes that some tensor held.
 */
uint64_t sim_chip_mem_read_bytes(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                                 void *buf);

/*
 * Pending bindings (ADR-0020 D3): a tl_store of a compute result binds its destination
 * to the op that will produce it in phase 2; a later load of the range gets a pending
 * handle. bind records it (op copied); pending returns the op name of a binding that
 * overlaps [addr, addr + n) or NULL.
 */
void sim_chip_bind_pending(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                           const char *op);
const char *sim_chip_pending(const struct sim_chip *c, const char *space, uint64_t addr,
                             uint64_t n);

/* bind, by a write named writer ("dma_write"): the tensors the range overlaps show writer
 * as their last writer in the memory inspector (sim_memstore_touch), their values pending. */
void sim_chip_bind_pending_by(struct sim_chip *c, const char *space, uint64_t addr, uint64_t n,
                              const char *op, const char *writer);

#endif
