/*
 * The op log (ADR-0052 D1-D5, D7; ADR-0020 D5): every data op a component services becomes
 * an op record with the seven fields of ADR-0052 D1, params per op_name with exactly the
 * keys and value types of D3.1-D3.7, snapshots per D4 and TileToken stage capture per D5.
 * It is fed only by the component base's hooks (record_start / record_end) and by IPCQ
 * copies (record_copy); the kernel runner never logs (ADR-0020 D3).
 *
 * Observers hear of every op start (the pending record: what is in flight) and every op
 * end (the finished record): the TUI draws in-flight ops, the trace writer streams.
 *
 * Memory: a record is a small fixed struct with interned names; its params are packed
 * (sim/oppack.h) when the op starts and expanded into ADR-0052 D3's map only when someone
 * asks (sim_op_record_params). Whether the log keeps its finished records is a choice
 * (sim_oplog_set_retain): phase 2 replays them and needs them all, with D4's snapshots;
 * a timing-only run hands each record to its observers and lets it go, so its memory does
 * not grow with the number of ops.
 *
 * Single-threaded, like the engine that drives it (ADR-0052 D7).
 */
#ifndef SIM_OPLOG_H
#define SIM_OPLOG_H

#include "sim/engine/engine.h"
#include "sim/chip/msg.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_oplog;
struct sim_memstore;

/*
 * npuscope's annotations of an op record. They are NOT part of ADR-0052's OpRecord (whose
 * seven fields are the ones of struct sim_op_record above this member); the trace needs
 * them (ENGINE_EVENT cmdq_id, layer_id, tile_id; matching an op's start to its end).
 */
struct sim_op_note {
    uint64_t id;          /* record id: the order of record_start calls, from 0; a record's
                             start and end carry the same id */
    int64_t cmdq_id;      /* index of the host message the op belongs to, or -1 */
    const char *kernel;   /* interned by the log: the kernel that issued it, or NULL */
    const char *layer_id; /* interned, or NULL */
    const char *tile_id;  /* interned, or NULL */
    uint32_t site;        /* the call site (kernel file and line) that issued it
                             (sim/util/srcsite.h), or 0: no kernel line did */
    bool in_flight;       /* true for a pending record (started, not ended) */
    /* owned map on a retained finished record, else NULL (see sim_op_record_params): what
     * phase 2 needs to replay the op beyond ADR-0052 D3's params, as ADR-0020 D5 and D8
     * allow: a dma_read's destination (src_space, dst_space, dst_addr, shape, dtype), a
     * GEMM's transpose_a, transpose_b and dtype_acc, a composite math op's input */
    struct sim_value *replay;
};

/*
 * What a memory op (dma_read, dma_write, ipcq_copy) moves: its source and destination
 * spaces and nbytes as its D3 params (and replay annotations) give them, and the role of
 * the memory it touches (sim/chip/roles.h: its tensor_role), or NULL. All zero for other
 * ops. The strings live as long as the op's message: valid in the observers' calls.
 */
struct sim_op_mem {
    const char *src_space, *dst_space, *role;
    int64_t nbytes;
};

/*
 * One op record. The first seven fields are ADR-0052 D1's OpRecord, with its names.
 * params is a map whose keys and value types follow D3 for op_name exactly: Python tuples
 * are lists of ints, None is null, np.ndarray snapshots are SIM_V_TENSOR values holding
 * copies (never references into the memory store).
 */
struct sim_op_record {
    double t_start;           /* ns: the component begins servicing the message */
    double t_end;             /* ns: its service is complete (t_start while in flight) */
    const char *component_id; /* interned by the log: node id, e.g. "sip0.cube0.pe0.pe_dma" */
    const char *op_kind;      /* static: "memory" | "gemm" | "math" | "unknown" */
    const char *op_name;      /* interned: "dma_read", "gemm_f16", "exp", "TileToken/GEMM"... */
    /* owned map (D3) with D4's snapshots on a retained finished record; NULL on the
     * records observers see otherwise: sim_op_record_params expands the packed params */
    struct sim_value *params;
    int64_t *dependency_ids; /* owned (malloc), n_dependency_ids long; empty (ADR-0052 D1) */
    size_t n_dependency_ids;

    struct sim_op_note note; /* npuscope annotations: not part of ADR-0052 */

    /* The params and replay annotations, packed (sim/oppack.h: two maps), owned by the
     * record: what sim_op_record_params expands, and what an observer that keeps an op's
     * details (the trace model) copies. */
    const uint8_t *packed;
    size_t packed_len;

    /* What a memory op moves (not part of ADR-0052 either), for observers that account
     * DRAM traffic without unpacking the params: see struct sim_op_mem. */
    struct sim_op_mem mem;
};

/*
 * The params of rec as ADR-0052 D3's map, with exactly the keys and value types a retained
 * record has (snapshots null unless rec is retained with D4's snapshots: then a deep copy
 * of its params, tensors shared), and in *replay (may be NULL) its replay annotations (an
 * empty map when it has none). New trees the caller frees.
 */
struct sim_value *sim_op_record_params(const struct sim_op_record *rec, struct sim_value **replay);

/* The same from packed bytes kept apart from their record (sim_op_record.packed). */
struct sim_value *sim_op_params_unpack(const uint8_t *packed, size_t len,
                                       struct sim_value **replay);

/* What observers are told. Pointers passed to the callbacks are borrowed for the call. */
struct sim_oplog_observer {
    /* An op started: rec is the pending record (note.in_flight, t_end == t_start). */
    void (*on_start)(void *ctx, const struct sim_op_record *rec);
    /* An op ended: rec is the finished record, as it stays in the log. */
    void (*on_end)(void *ctx, const struct sim_op_record *rec);
    void *ctx;
};

/* A new empty op log (ADR-0052: records and pending empty). store may be NULL: snapshots
 * are then skipped (D4, last paragraph). The store is borrowed. */
struct sim_oplog *sim_oplog_new(struct sim_memstore *store);

/* Free the log, its records and pending entries. NULL is a no-op. */
void sim_oplog_free(struct sim_oplog *log);

/* Attach (or with NULL detach) the memory store used for snapshots. Borrowed. */
void sim_oplog_set_store(struct sim_oplog *log, struct sim_memstore *store);

/*
 * Attach (or with NULL detach) the roles of memory ranges (sim/chip/roles.h; borrowed):
 * a DMA op (dma_read, dma_write, ipcq_copy) whose memory has a role gets it as the
 * annotation "tensor_role" beside its replay annotations (the trace writes it as the
 * DMA detail tensor_role of the trace format).
 */
struct sim_roles;
void sim_oplog_set_roles(struct sim_oplog *log, const struct sim_roles *roles);

/*
 * Keep finished records (the default, what phase 2 and tests need: sim_oplog_records) or
 * not: with retain false a record is released as soon as its observers have heard of its
 * end, and sim_oplog_records has nothing (sim_oplog_count still counts every record).
 */
void sim_oplog_set_retain(struct sim_oplog *log, bool retain);

/*
 * The component component_id begins servicing msg at now (engine ticks). Builds the
 * pending record keyed by msg's address: op_kind, op_name and params from the message
 * (D3; unknown kinds fall back to D3.7); for a TileToken, captures the current stage's
 * type and a copy of its params (D5), shown by the pending record already. Observers hear
 * on_start. A message must not be started twice without an end in between (assert).
 * component_id, msg->kernel, layer_id and tile_id are interned (copied once per distinct
 * string).
 */
void sim_oplog_record_start(struct sim_oplog *log, sim_time_t now, const char *component_id,
                            const struct sim_msg *msg);

/* As sim_oplog_record_start for an op that waited `queued` ticks for a unit of its
 * component before starting now: its replay annotations get "queued_ns" (when > 0). */
void sim_oplog_record_start_queued(struct sim_oplog *log, sim_time_t now, const char *component_id,
                                   const struct sim_msg *msg, sim_time_t queued);

/*
 * The service of msg is complete at now. Completes the pending record: t_end, snapshots
 * (D4: math inputs read from the memory store, as copies, failure -> null; dma_write only
 * when src_space is "hbm"; ipcq copies the message's snapshot or a fresh read), the
 * TileToken merge and rename (D5). Appends it to the records; observers hear on_end.
 * A message that was not started is a bug (assert).
 */
void sim_oplog_record_end(struct sim_oplog *log, sim_time_t now, const char *component_id,
                          const struct sim_msg *msg);

/*
 * An IPCQ inbound copy (D3.6), bypassing start/end: a record "ipcq_copy" of op_kind
 * "memory" from src to dst serviced by component_id over [t_start, t_end]. snapshot is the
 * caller's in-flight data (copied into the record), or NULL to read src freshly from the
 * memory store (null when that fails or no store is attached). annot (may be NULL) gives
 * the annotations (cmdq_id, kernel, layer_id, tile_id). Observers hear start and end.
 * Returns the record id.
 */
uint64_t sim_oplog_record_copy(struct sim_oplog *log, sim_time_t t_start, sim_time_t t_end,
                               const char *component_id, const struct sim_handle *src,
                               const struct sim_handle *dst, const struct sim_tensor *snapshot,
                               const struct sim_msg *annot);

/* Number of finished records (retained or not). */
size_t sim_oplog_count(const struct sim_oplog *log);

/*
 * The retained finished records stable-sorted by t_start (D2: equal t_start keep the order
 * in which they were appended, i.e. of their record_end). Sorting happens here, on access,
 * when records were appended since the last access. Borrowed: valid until the next record
 * is appended or the log is freed. *n receives the count (0 when the log does not retain).
 */
struct sim_op_record *const *sim_oplog_records(struct sim_oplog *log, size_t *n);

/* Pending records (in flight), in the order they started. Borrowed, valid until the next
 * record_* call. */
size_t sim_oplog_pending_count(const struct sim_oplog *log);
const struct sim_op_record *sim_oplog_pending(const struct sim_oplog *log, size_t i);

/* Subscribe an observer (copied). Returns its id for sim_oplog_unobserve. */
int sim_oplog_observe(struct sim_oplog *log, const struct sim_oplog_observer *o);
void sim_oplog_unobserve(struct sim_oplog *log, int id);

/* The op_kind and op_name a message gets (D3), without logging anything. name receives
 * the op name (size bytes). Returns the static op_kind. */
const char *sim_oplog_classify(const struct sim_msg *msg, char *name, size_t size);

#endif
