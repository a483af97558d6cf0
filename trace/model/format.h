/*
 * The trace format's vocabulary beyond the model (trace/FORMAT.md): how an op record
 * (ADR-0052 D1) becomes an ENGINE_EVENT (engine from the component kind, cycles from ns,
 * details from params without bulk snapshots), and which events are DRAM traffic. The
 * live path and the loader both go through here, so a run and its trace loaded back give
 * the same model and the same metrics.
 */
#ifndef TRACE_FORMAT_H
#define TRACE_FORMAT_H

#include "sim/data/value.h"
#include "trace/model/model.h"

#include <stdbool.h>
#include <stdint.h>

/* The format version npuscope writes; it reads every 1.x. */
#define TRACE_FORMAT_VERSION "1.0"
#define TRACE_FORMAT_MAJOR   1

/*
 * The largest cycle value (and integer field) a trace may hold: 2^53, the largest integer
 * every JSON reader (cJSON, JavaScript, ...) keeps exact.
 */
#define TRACE_MAX_INT 9007199254740992.0

/*
 * Engine of a component, from its kind (the last dotted part of a node id such as
 * "sip0.cube0.pe0.pe_dma", or the kind alone): pe_dma -> DMA, pe_gemm -> TE,
 * pe_math -> VE, host, io_cpu and m_cpu (the host and the CPUs that carry its messages,
 * trace/analysis/hostspan.h) -> HOST, anything else OTHER.
 */
enum trace_engine trace_engine_for_component(const char *component_id);

/* The op_kind guessed for a spec trace without one: DMA -> memory, TE -> gemm,
 * VE -> math, others unknown. */
enum trace_op_kind trace_kind_for_engine(enum trace_engine e);

/*
 * The engine work of a TileToken stage (ADR-0052 D5), from its stage type: DMA_READ and
 * DMA_WRITE memory, GEMM gemm, MATH math, anything else (NULL included) unknown. A stage's
 * op record keeps op_kind "unknown" (D3.7); this says what the stage does.
 */
enum trace_op_kind trace_kind_for_stage(const char *stage_type);

/* The stage type of a TileToken stage's op name ("TileToken/DMA_READ" -> "DMA_READ"), or
 * NULL for another op name. Borrowed from op_name. */
const char *trace_stage_of_op(const char *op_name);

/*
 * Cycles of a time in ns at clock_ghz (> 0): ns x clock_ghz after snapping values within
 * 1e-9 relative of an integer to it (so 100 ns at 1.5 GHz is 150, not 151), rounded down:
 * the cycle the instant falls in. Every instant (a start, an end, a marker) takes this one
 * rule, so an op that ends when the next starts ends at the cycle the next starts at (end
 * exclusive). up rounds up instead, for a length only: the run's cycles_total, the current
 * cycle of a live run. Negative or NaN gives 0; values beyond TRACE_MAX_INT saturate to it.
 */
uint64_t trace_cycles_from_ns(double ns, double clock_ghz, bool up);

/*
 * ENGINE_EVENT details from op record params (ADR-0052 D3): a deep copy without the bulk
 * snapshots ("snapshot", "input_snapshots") and without tensor values anywhere (tensors in
 * lists become null so list positions keep their meaning). NULL params give NULL.
 */
struct sim_value *trace_details_from_params(const struct sim_value *params);

/* The key under which an ENGINE_EVENT's details keep npuscope's replay annotations. */
#define TRACE_DETAILS_REPLAY "replay"

/* The DMA detail of the trace format naming the role of the tensor moved ("kv": a KV
 * cache). npuscope's op records carry it among their annotations (sim_oplog_set_roles);
 * the details have it at their top. */
#define TRACE_DETAILS_ROLE "tensor_role"
/* The extension details of an op a kernel line issued: "vector_add.c:42" (the source
 * file's basename and the line) and the kernel function. */
#define TRACE_DETAILS_SRC      "src"
#define TRACE_DETAILS_SRC_FUNC "src_func"

/*
 * ENGINE_EVENT details of an op record: trace_details_from_params(params), so the keys at
 * the top are exactly ADR-0052 D3's, then, when the record has replay annotations
 * (sim_op_note.replay: a dma_read's src_space, dst_space, dst_addr, shape, dtype; a GEMM's
 * transpose flags and dtype_acc), those under the one key "replay" (TRACE_DETAILS_REPLAY),
 * but for a tensor role (TRACE_DETAILS_ROLE), which goes to the top.
 * Either may be NULL; NULL when both are.
 */
struct sim_value *trace_details_from_op(const struct sim_value *params,
                                        const struct sim_value *replay);

/* A string field of details: at the top, else under "replay" (where npuscope keeps its
 * annotations; traces written before they moved there have them at the top). NULL when
 * absent. Borrowed. */
const char *trace_details_str(const struct sim_value *details, const char *key);

/*
 * The fields of an event's details the DRAM rule looks at, whatever they were read from
 * (a value tree live, a cJSON tree when loading). Strings NULL and integers -1 when the
 * field is absent or has the wrong type.
 */
struct trace_dram_fields {
    const char *op;          /* ENGINE_EVENT.op (the op_name) */
    const char *direction;   /* details.direction: "read" / "write" (spec traces) */
    const char *tensor_role; /* details.tensor_role: "kv" marks KV-cache traffic */
    const char *src_space;   /* details.src_space (ADR-0052 dma_write, ipcq_copy) */
    const char *dst_space;   /* details.dst_space */
    int64_t bytes;           /* details.bytes (spec traces) */
    int64_t nbytes;          /* details.nbytes (ADR-0052 memory ops) */
};

/*
 * The DRAM traffic of an ENGINE_EVENT (trace/FORMAT.md, "DRAM traffic"): none unless the
 * engine is DMA; then details.direction + details.bytes when both are valid (spec
 * traces), else by op: dma_read reads nbytes from HBM, dma_write writes nbytes to HBM,
 * ipcq_copy reads when its source is HBM and writes when its destination is. Fills out
 * (event left 0) and returns how many transfers (0, 1 or 2).
 */
int trace_dram_rule(enum trace_engine engine, const struct trace_dram_fields *f,
                    struct trace_transfer out[2]);

/* trace_dram_rule over a details value tree (NULL details: only the op counts). */
int trace_dram_from_value(enum trace_engine engine, const char *op, const struct sim_value *details,
                          struct trace_transfer out[2]);

/* trace_dram_rule over what an op record says it moves (sim/chip/oplog.h, struct
 * sim_op_mem): the same transfers as its packed params give, without reading them. */
struct sim_op_mem;
int trace_dram_from_mem(enum trace_engine engine, const char *op, const struct sim_op_mem *mem,
                        struct trace_transfer out[2]);

#endif
