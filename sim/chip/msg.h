/*
 * Messages: what travels between the components of a simulated chip. A message names its
 * kind and its type (the class name of ADR-0052 D3.7's fallback: "DmaReadCmd",
 * "TileToken", ...), declares whether it is a data op (ADR-0020 D4: only data ops reach the
 * op log), carries its route (the hops it still has to take) and a payload per kind.
 *
 * Messages are plain structs owned by whoever creates them (a kernel's tl call, the host
 * program); they must outlive their trip through the components, because the op log keys
 * its pending records by the message's address (ADR-0052: id(msg)).
 *
 * Time: the engine's ticks are picoseconds, so every ns value of an op record is exact to
 * 1 ps.
 */
#ifndef SIM_MSG_H
#define SIM_MSG_H

#include "sim/data/dtype.h"
#include "sim/engine/engine.h"
#include "sim/data/tensor.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Engine ticks per simulated nanosecond (ticks are picoseconds). */
#define SIM_TICKS_PER_NS 1000

/* Ticks -> ns (the unit of op records) and ns -> ticks (rounded to the nearest tick). */
double sim_ticks_to_ns(sim_time_t t);
sim_time_t sim_ns_to_ticks(double ns);

/*
 * The clock cycle of an instant ns at clock_ghz, as the trace counts it: within 1e-9
 * relative of an integer it is that integer, else rounded down (the cycle the instant falls
 * in), or up when up is set (a length: the run's cycles). Negative or NaN gives 0; values
 * beyond 2^53 saturate to it. One rule for the trace's events and the run's busy cycles.
 */
uint64_t sim_cycles_from_ns(double ns, double clock_ghz, bool up);

enum {
    SIM_SPACE_MAX = 16,     /* "hbm", "tcm", "sram", ... with the NUL */
    SIM_HANDLE_ID_MAX = 64, /* handle ids like "sip0.cube0.pe1/h12" */
    SIM_OP_NAME_MAX = 32,   /* math op names, control message names */
    SIM_MATH_MAX_INPUTS = 4,
    SIM_TILE_MAX_STAGES = 8,
};

/*
 * A reference to a tensor in a memory space, as ADR-0052 uses it ("handle.space",
 * "handle.addr", "handle_id"): where the bytes are, how they are laid out, and a name.
 */
struct sim_handle {
    char space[SIM_SPACE_MAX]; /* "hbm" | "tcm" | "sram" | any other space */
    uint64_t addr;             /* byte address, the memory store's key */
    enum sim_dtype dtype;
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    uint64_t nbytes;            /* product of the shape x dtype size */
    char id[SIM_HANDLE_ID_MAX]; /* handle_id, unique within a run */
};

/* Fill h: space, addr, dtype and shape; nbytes is computed; id may be NULL ("" then). */
void sim_handle_set(struct sim_handle *h, const char *space, uint64_t addr, enum sim_dtype dtype,
                    unsigned ndim, const int64_t *shape, const char *id);

/* Number of elements of h. */
uint64_t sim_handle_numel(const struct sim_handle *h);

/* Message kinds (SIM_MK_: message kind). */
enum sim_msg_kind {
    SIM_MK_CONTROL,       /* control traffic (issue, memory access, responses): never logged */
    SIM_MK_DMA_READ,      /* DmaReadCmd: a tensor from memory into the PE (ADR-0052 D3.1) */
    SIM_MK_DMA_WRITE,     /* DmaWriteCmd: a tensor from the PE to HBM (D3.2) */
    SIM_MK_GEMM,          /* GemmCmd (D3.3) */
    SIM_MK_MATH,          /* MathCmd (D3.4) */
    SIM_MK_COMPOSITE,     /* CompositeCmd: a tiled READ -> COMPUTE -> WRITE pipeline (D3.5) */
    SIM_MK_TILE_TOKEN,    /* TileToken: one tile of a pipeline, self-routing (D5) */
    SIM_MK_IPCQ_COPY,     /* IPCQ copy between PEs (D3.6) */
    SIM_MK_MEMORY_WRITE,  /* host MemoryWrite (ADR-0012 D5) */
    SIM_MK_MEMORY_READ,   /* host MemoryRead (ADR-0012 D6) */
    SIM_MK_KERNEL_LAUNCH, /* host KernelLaunch (ADR-0012 D7) */
    SIM_MK_COUNT,
};

/* ---- per-kind payloads ------------------------------------------------------------------ */

struct sim_dma_read_cmd {
    struct sim_handle src; /* the tensor read (usually in "hbm") */
    struct sim_handle dst; /* where it lands (usually in the PE's "tcm"); dst.id is the
                              handle_id of the record */
};

struct sim_dma_write_cmd {
    struct sim_handle src; /* the tensor written (usually in "tcm"); src.id is handle_id */
    struct sim_handle dst; /* the destination; ADR-0052 D3.2: always in "hbm" */
};

struct sim_gemm_cmd {
    struct sim_handle a, b, out;
    bool transpose_a, transpose_b;
    enum sim_dtype dtype_acc; /* accumulation dtype (not in the D3.3 params) */
};

struct sim_math_cmd {
    char op[SIM_OP_NAME_MAX]; /* "exp", "add", "sum", "where", ... */
    unsigned n_inputs;
    struct sim_handle inputs[SIM_MATH_MAX_INPUTS];
    struct sim_handle out;
    bool has_axis; /* a reduction over axis */
    int axis;
};

struct sim_composite_cmd {
    char op[SIM_OP_NAME_MAX];        /* "gemm" | "math" */
    char math_op[SIM_OP_NAME_MAX];   /* for op "math": the elementwise op applied */
    struct sim_handle a, b;          /* gemm operands (a only for math) */
    struct sim_handle out;           /* the result, in "hbm" */
    uint32_t tile_m, tile_n, tile_k; /* tile sizes the pipeline uses (0: chosen) */
};

/* TileToken stages (ADR-0014 D6 via ADR-0052 D5). */
enum sim_stage_type {
    SIM_STAGE_DMA_READ,
    SIM_STAGE_GEMM,
    SIM_STAGE_MATH,
    SIM_STAGE_DMA_WRITE,
    SIM_STAGE_COUNT,
};

/* "DMA_READ", "GEMM", "MATH", "DMA_WRITE". */
const char *sim_stage_type_name(enum sim_stage_type t);

struct sim_tile_stage {
    enum sim_stage_type type;
    uint32_t node;            /* topology node of the component that runs the stage */
    int32_t mem;              /* DMA stages: the memory node on the far side, else -1 */
    uint64_t nbytes;          /* bytes moved (DMA stages) */
    int32_t mem_b;            /* a read of two operands: the second's memory, else -1 */
    uint64_t nbytes_b;        /* ... and its part of nbytes (the rest is mem's) */
    uint64_t dram_bytes;      /* DMA stages: the part of nbytes read from or written to HBM */
    uint64_t flops;           /* operations (compute stages): 2mnk for GEMM, elements for MATH */
    enum sim_dtype dtype;     /* compute stages: the input dtype */
    char op[SIM_OP_NAME_MAX]; /* MATH stages: the math op */
    struct sim_value *params; /* owned map: the stage's params (copied by the op log at start) */
};

struct sim_tile_token {
    unsigned n_stages;
    unsigned stage_idx; /* the stage being run (advanced by the pipeline as it moves on) */
    struct sim_tile_stage stages[SIM_TILE_MAX_STAGES];
};

struct sim_ipcq_copy {
    struct sim_handle src;       /* on the sending PE */
    struct sim_handle dst;       /* on the receiving PE */
    struct sim_tensor *snapshot; /* owned reference: the in-flight data, or NULL */
};

struct sim_host_msg;

/* Host requests: the request of the workload (sim/program/workload.h). */
struct sim_host_req {
    const struct sim_host_msg *req; /* borrowed */
    size_t index;                   /* position in the host program (the trace's cmdq_id) */
    uint64_t nbytes;                /* bytes the request writes or reads at a memory */
    bool stream;                    /* its data crosses the NoC to or from the IO_CPU */
    bool stream_host;               /* ... and the host link (sim_chip_host_stream) */
};

struct sim_control {
    char name[SIM_OP_NAME_MAX]; /* "Issue", "HbmRead", "Response", ... (the type name) */
    uint64_t nbytes;            /* bytes it carries over links */
};

/* ---- the message ------------------------------------------------------------------------ */

/* A route: the hops a message takes, in order (sim/chip/topology.h). */
struct sim_topo_hop;
struct sim_hop_log;

struct sim_msg {
    enum sim_msg_kind kind;
    const char *type_name; /* static: "DmaReadCmd", "TileToken", ... (ADR-0052 D3.7) */
    bool data_op;          /* ADR-0020 D4: logged by the component hooks when true */

    const struct sim_topo_hop *hops; /* the route (borrowed), n_hops long */
    size_t n_hops;
    size_t hop;          /* the hop being taken */
    uint64_t wire_bytes; /* bytes the message occupies on a link (command size or payload) */
    struct sim_hop_log *hop_log; /* borrowed, or NULL: where sim_chip_send records each hop */

    /* npuscope annotations copied into op records (not part of ADR-0052) */
    int64_t cmdq_id;      /* index of the host message it belongs to, or -1 */
    const char *kernel;   /* name of the kernel that issued it, or NULL (borrowed) */
    const char *layer_id; /* borrowed, or NULL */
    const char *tile_id;  /* borrowed, or NULL */
    uint32_t site; /* call site of the kernel line that issued it (sim/util/srcsite.h), or 0 */

    union {
        struct sim_dma_read_cmd dma_read;
        struct sim_dma_write_cmd dma_write;
        struct sim_gemm_cmd gemm;
        struct sim_math_cmd math;
        struct sim_composite_cmd composite;
        struct sim_tile_token tile;
        struct sim_ipcq_copy ipcq;
        struct sim_host_req host;
        struct sim_control control;
    } u;
};

/*
 * Initialise m as a message of kind: zeroes it, sets type_name and data_op to the kind's
 * defaults (every command, TileToken and IPCQ copy is a data op; control messages and host
 * requests are not), cmdq_id -1.
 */
void sim_msg_init(struct sim_msg *m, enum sim_msg_kind kind);

/* A control message named name (copied, truncated to SIM_OP_NAME_MAX - 1) of nbytes. */
void sim_msg_init_control(struct sim_msg *m, const char *name, uint64_t nbytes);

/* Release what m owns (TileToken stage params, an IPCQ snapshot). m stays initialised
 * as a message of its kind with nothing owned. */
void sim_msg_fini(struct sim_msg *m);

/* The default type name of a kind ("DmaReadCmd", ...). */
const char *sim_msg_kind_type_name(enum sim_msg_kind kind);

/* Append a stage to a TileToken (takes params; NULL is an empty map). Asserts room. */
void sim_tile_add_stage_take(struct sim_msg *m, enum sim_stage_type type, uint32_t node,
                             uint64_t nbytes, uint64_t flops, struct sim_value *params);

#endif
