/*
 * The phase-2 data executor (ADR-0020 D6, D10; ADR-0052 D3, D4, A4): replays the op log of
 * a phase-1 run with real data, on its own shallow snapshot of the phase-1 memory store, so
 * phase 1's store is never modified. GEMMs go through OpenBLAS (sim/phase2/matmul.c is the
 * only file of npuscope that includes <cblas.h>), math ops are plain C loops, memory ops
 * copy tensors between (space, addr) entries. Nothing of it runs or is allocated unless a
 * caller asks. Its files share sim/phase2/exec_int.h, which says what each one does.
 *
 * Order. Records are taken in the order given (the op log's t_start-sorted list) and
 * grouped by equal t_start; within a group memory ops come first (ADR-0052 A4), the others
 * keep their order. Read and write sets are address ranges [addr, addr + nbytes) per space;
 * an op depends on every earlier op of its group it conflicts with (RAW, WAR, WAW) and on
 * the records its dependency_ids name (indices into the same record list). Consecutive
 * groups are scheduled together, so an op depends on every earlier op it conflicts with,
 * whatever its t_start, and ops that do not conflict may run in any order (ADR-0020 D6:
 * the order is the dependencies'). They are split into waves: the ops of a wave have
 * disjoint write sets and none writes what another reads, so they run concurrently on the
 * worker pool without any locking of data. A GEMM that could run waits while an identical
 * one (same shapes, dtypes, layouts and transpose flags) is still to come, so the GEMMs of
 * PEs that do not run in lockstep meet in one wave. There, identical GEMMs that compute in
 * f32 run as one call when that is faster (sim_exec_stacking_pays): those that read the
 * same B (the same bytes) on their A rows stacked (in place when they lie one after the
 * other, else copied), those that read the same A on their B operands side by side (a
 * strided copy into one buffer), the result's rows or columns copied to each output; that
 * call is a GEMM batch. Other identical GEMMs run one by one.
 *
 * Memory semantics (ADR-0020 D7: the canonical state is byte-addressable). A read of
 * [addr, addr + n) uses the tensor stored at addr when it has n bytes (reinterpreted to the
 * op's dtype and shape), else the part of a larger tensor holding that range. A write
 * replaces the tensor stored at addr when that has the same size; else, when a larger
 * tensor holds the range (the one at addr included: the first tile of an output matrix),
 * it writes into that tensor's bytes, copying it first when anyone else references it;
 * otherwise it stores a new tensor at addr (replacing a smaller one). Copies share tensors
 * by reference; nothing shared is ever mutated.
 *
 * What is replayed, per op_kind / op_name:
 *   memory  dma_read    copy (src_space, default "hbm", src_addr) -> (dst_space, dst_addr)
 *                       as dtype and shape: the op log adds ADR-0020 D5's destination keys
 *                       to D3.1's; a record with D3.1's keys alone (another simulator's)
 *                       was materialised by phase 1 (ADR-0020 D3) and is skipped.
 *           dma_write   (D3.2) the snapshot when the record has one (D4), else a copy
 *                       from (src_space, src_addr), as dtype and shape, to (dst_space,
 *                       dst_addr).
 *           ipcq_copy   (D3.6) the snapshot, else a copy from the source.
 *                       A snapshot serves only for data phase 1 had: when phase 2 computed
 *                       the source (a GEMM or math result, or a copy of one; phase 1 held
 *                       no such data, ADR-0020 D3), the copy reads it live.
 *   gemm    gemm_*      (D3.3) C = op(A) op(B) with optional keys transpose_a/_b, layout_a/
 *                       _b/_out ("row_major" | "col_major"), dtype_acc (ADR-0020 D5) and
 *                       accumulate (bool: C += op(A) op(B)). Leading dimensions of the
 *                       operands are a batch. f32/f16/bf16 through cblas_sgemm in f32
 *                       (16-bit accumulators are emulated exactly with loops), integers
 *                       exactly with C loops (i8 x i8 -> i32 by default).
 *           composite_gemm (D3.5) the same, from its operand and output addresses.
 *   math    op_name     (D3.4) an op of the math table (sim_exec_math_ops), inputs read
 *                       live from the store (the input_snapshots serve verification),
 *                       broadcast numpy-style to shape_out; reductions over axis.
 *   unknown             skipped (D3.7), except TileToken/<stage_type> records, replayed by
 *                       stage type when their params carry the keys of the matching record
 *                       above: DMA_READ / DMA_WRITE those of a copy (src_space, src_addr,
 *                       dst_space, dst_addr, nbytes, optional shape and dtype), GEMM those
 *                       of gemm_*, MATH those of a math op plus "op" (the math op's name).
 *                       composite_math and stages without such keys are skipped.
 *
 * Single caller thread: the executor's functions are not thread-safe; it runs its own
 * workers inside sim_exec_run.
 */
#ifndef SIM_EXEC_H
#define SIM_EXEC_H

#include "sim/util/diag.h"
#include "sim/data/dtype.h"
#include "sim/chip/oplog.h"
#include "sim/data/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_exec;
struct sim_memstore;

enum {
    SIM_EXEC_DEFAULT_THREADS = 2, /* the machine npuscope targets has 2 cores */
    SIM_EXEC_MAX_THREADS = 64,
    SIM_EXEC_MAX_INPUTS = 4, /* math inputs (SIM_MATH_MAX_INPUTS) */
};

/* Options; all zero is the default. */
struct sim_exec_opts {
    unsigned threads;     /* workers, the calling thread included: 0 = the default (2),
                             1 = everything on the caller's thread */
    bool no_batch;        /* run each GEMM on its own, as soon as it can run (for
                             measurements) */
    bool corrupt;         /* test hook: perturb the result of op corrupt_index (first
                             element + 1, or flipped for bool) after computing it, so tests
                             can check that verification catches it at that op */
    size_t corrupt_index; /* a record index */
};

/* What became of one record. */
enum sim_exec_status {
    SIM_EXEC_PENDING,      /* not reached (the run stopped before it) */
    SIM_EXEC_DONE,         /* replayed */
    SIM_EXEC_SKIP_UNKNOWN, /* op_kind "unknown" (D3.7) */
    SIM_EXEC_SKIP_NO_DATA, /* nothing to replay (a dma_read without destination, a
                              composite_math, a TileToken stage without data keys) */
};

/* How an op is replayed. */
enum sim_exec_kind {
    SIM_EXEC_KIND_NONE, /* skipped */
    SIM_EXEC_KIND_COPY, /* a memory op */
    SIM_EXEC_KIND_GEMM,
    SIM_EXEC_KIND_MATH,
};

/* Per-record result of a run (see sim_exec_op_info). */
struct sim_exec_op_info {
    enum sim_exec_status status;
    enum sim_exec_kind kind;
    size_t group;  /* index of its t_start group, in order */
    size_t wave;   /* index of its wave, counted over the whole run: ops with the same wave
                      ran concurrently */
    int64_t batch; /* index of its GEMM batch (the one call that computed it with one or
                      more other GEMMs), or -1 */
};

/* Figures of a run. */
struct sim_exec_stats {
    size_t records;       /* records given */
    size_t executed;      /* replayed (SIM_EXEC_DONE) */
    size_t skipped;       /* SKIP_UNKNOWN + SKIP_NO_DATA */
    size_t groups;        /* t_start groups */
    size_t waves;         /* waves run */
    size_t parallel_ops;  /* ops that ran in a wave of 2 or more */
    size_t gemms_alike;   /* GEMMs that met an identical independent GEMM in their wave */
    size_t gemm_batches;  /* GEMM batches: calls that computed 2 or more GEMMs at once */
    size_t gemms_batched; /* GEMMs computed in those calls */
    size_t col_batches;   /* of the batches, those on B operands side by side (sharing A);
                             the others stack A rows (sharing B) */
    double seconds;       /* wall time of sim_exec_run */
};

/* GEMM parameters as decoded from a record (for checks and for the reference). */
struct sim_exec_gemm {
    int64_t m, n, k;
    int64_t batch;  /* product of the output's leading dimensions (1 for 2-D) */
    bool a_batched; /* A has the batch dimensions (else one A for every batch) */
    bool b_batched; /* likewise B */
    bool transpose_a, transpose_b;
    bool a_col_major, b_col_major, out_col_major;
    bool accumulate; /* C += op(A) op(B): the output's previous value is inputs[2] */
    enum sim_dtype dtype_in_a, dtype_in_b, dtype_acc, dtype_out;
};

/* Math parameters as decoded from a record. */
struct sim_exec_math {
    const char *op; /* borrowed name of the op in the math table */
    bool has_axis;
    int axis; /* normalised to 0 .. ndim-1 of input 0 */
};

/*
 * One op as it ran, handed to the op hook after the op computed its result and before the
 * result is written to the store (so inputs still hold what the op read). Everything is
 * borrowed for the duration of the call.
 */
struct sim_exec_op_data {
    size_t index; /* the record's index */
    const struct sim_op_record *rec;
    enum sim_exec_kind kind;
    unsigned n_inputs;
    const struct sim_tensor *inputs[SIM_EXEC_MAX_INPUTS]; /* GEMM: A, B (and C when
                                          accumulating); math: its inputs; copy: the source
                                          (the snapshot when one was used) */
    const char *input_spaces[SIM_EXEC_MAX_INPUTS];        /* NULL for a snapshot source */
    uint64_t input_addrs[SIM_EXEC_MAX_INPUTS];
    bool from_snapshot;              /* copy: the source is the record's snapshot */
    const struct sim_tensor *output; /* the result, in the destination's dtype and shape */
    const char *dst_space;
    uint64_t dst_addr;
    struct sim_exec_gemm gemm; /* kind GEMM */
    struct sim_exec_math math; /* kind MATH */
};

/*
 * Called on the caller's thread for every replayed op, in record order within a wave and
 * wave after wave. Return 0 to go on, anything else to stop the run (sim_exec_run then
 * returns 1 and leaves the remaining records pending).
 */
typedef int (*sim_exec_op_fn)(void *ctx, const struct sim_exec_op_data *op);

/* How identical GEMMs m x k x n run as one call (ADR-0020 D6's batch). */
enum sim_exec_stacking {
    SIM_EXEC_STACK_ROWS_IN_PLACE, /* sharing B, their A rows one after the other in memory */
    SIM_EXEC_STACK_ROWS_COPIED,   /* sharing B, their A rows copied into one buffer */
    SIM_EXEC_STACK_COLUMNS,       /* sharing A, their B operands copied side by side */
};

/*
 * Whether one call on GEMMs m x k x n stacked as how is faster than a call each: the
 * executor's rule, fitted to phase2_bench's measurements. One call saves each GEMM but one
 * a call's fixed cost (about as much as copying 512 floats) and the packing of the shared
 * operand (about a quarter of copying it); it copies each GEMM's result (m n floats) out
 * of the stacked one and its own operand in (m k floats for copied rows; k n for columns,
 * a strided copy, which also costs about 8 floats a row). It pays when the copies are at
 * most the larger of the two savings.
 */
bool sim_exec_stacking_pays(enum sim_exec_stacking how, int64_t m, int64_t n, int64_t k);

/*
 * A new executor working on a shallow snapshot of phase1 (sim_memstore_snapshot; phase1
 * itself is only read here and never again). opts may be NULL. No thread is started
 * before a wave needs one.
 */
struct sim_exec *sim_exec_new(const struct sim_memstore *phase1, const struct sim_exec_opts *opts);

/* Stop the workers and free everything, the executor's store included. NULL is a no-op. */
void sim_exec_free(struct sim_exec *x);

/* Install (or with NULL remove) the op hook. */
void sim_exec_set_op_hook(struct sim_exec *x, sim_exec_op_fn fn, void *ctx);

/*
 * Replay recs[0..n) (t_start-sorted, as sim_oplog_records gives them; borrowed for the
 * call). Returns 0 when every record was replayed or skipped, 1 when the op hook stopped
 * the run, or a negative code with d naming the record ("op #12 gemm_f16 on
 * sip0.cube0.pe0.pe_gemm at 120.5 ns: ...") for a record whose params are malformed, an
 * input that is not in the store, a dependency on a record that starts later, or an
 * unknown math op. May be called once per executor.
 */
int sim_exec_run(struct sim_exec *x, struct sim_op_record *const *recs, size_t n, struct diag *d);

/* The executor's memory store: the state after the replay. Borrowed. */
struct sim_memstore *sim_exec_store(struct sim_exec *x);

/*
 * The n bytes at (space, addr) of the executor's memory into buf, assembled from every
 * stored tensor overlapping the range (in address order; bytes no tensor holds read as 0).
 * Returns how many of the bytes some tensor held.
 */
uint64_t sim_exec_read_bytes(struct sim_exec *x, const char *space, uint64_t addr, uint64_t n,
                             void *buf);

/* What became of record i of the last run (i < the n given). Borrowed. */
const struct sim_exec_op_info *sim_exec_op_info(const struct sim_exec *x, size_t i);

/* Figures of the last run. */
const struct sim_exec_stats *sim_exec_stats(const struct sim_exec *x);

/* ---- the math table --------------------------------------------------------------------- */

/* How a math op combines its inputs. */
enum sim_exec_math_shape {
    SIM_EXEC_MATH_ELEMENTWISE, /* out[i] = f(in0[i], in1[i], ...) with broadcasting */
    SIM_EXEC_MATH_REDUCE,      /* out = reduction of in0 over axis (all axes when none) */
};

/*
 * One entry of the math table. Only the scalar functions are public: they are the
 * straightforward definition of each op, which verification uses as its reference; the
 * executor's vectorizable loops are private to mathops.c.
 */
struct sim_exec_math_op {
    const char *name;
    unsigned arity; /* number of inputs */
    enum sim_exec_math_shape shape;
    /* elementwise: the value of one element from its inputs' values */
    double (*scalar)(const double *args);
    /* reduce: acc = combine(acc, x) from init over the reduced elements, then finish(acc,
       count) (NULL: acc itself) */
    double init;
    double (*combine)(double acc, double x);
    double (*finish)(double acc, double count);
};

/* The op called name taking arity inputs, or NULL. ("max" with one input is the
 * reduction, with two the elementwise maximum.) */
const struct sim_exec_math_op *sim_exec_math_find(const char *name, unsigned arity);

/* All entries, *n of them, for listings and tests. */
const struct sim_exec_math_op *sim_exec_math_ops(size_t *n);

#endif
