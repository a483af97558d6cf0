/*
 * What the files of the phase-2 executor share (private to sim/phase2/; the API is exec.h):
 * the executor's state, decoded ops and their scheduling scratch, and the functions one
 * file of the executor calls in another. exec.c hands the t_start groups to waves.c, which
 * decodes their records (decode.c), gathers consecutive groups into chunks, finds their
 * dependencies (deps.c), cuts each chunk into waves and runs each wave on the worker pool
 * (pool.c) through the GEMM path (matmul.c: one call for a batch of GEMMs sharing B) and
 * the math table (mathops.c), reading and writing the executor's store (spaces.c).
 */
#ifndef SIM_EXEC_INT_H
#define SIM_EXEC_INT_H

#include "sim/phase2/exec.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ops are scheduled in chunks of at most this many, consecutive t_start groups together
 * (scheduling is quadratic in the chunk; a bigger group is rare and runs chunk after
 * chunk). */
enum { CHUNK_MAX = 512 };

/* A batch of GEMMs sharing B runs as one call of at most about this many multiply-adds
 * when it is bigger (then as several calls, which the workers share); the split depends
 * on the work alone, never on the number of workers, so results do not either. */
enum { STACK_CALL_WORK = 1 << 21 };

/* A wave whose work is below this many element operations (a multiply-add of a GEMM, an
 * element of a math op's input) runs on the caller's thread: waking a worker costs more. */
enum { PARALLEL_MIN_WORK = 1 << 15, TASK_MIN_WORK = 1 << 18 };

/* A dtype standing for "as stored" in copies that give no layout. */
#define AS_STORED ((enum sim_dtype)SIM_DTYPE_COUNT)

/* ---- spaces and their address index ----------------------------------------------------- */

/*
 * The store is keyed by exact address; reads and writes of a range inside a larger tensor
 * need the tensor whose bytes hold it. Each space keeps its keys sorted with their sizes,
 * maintained on every write the executor makes (nobody else writes its store).
 */
struct sentry {
    uint64_t addr;
    uint64_t nbytes;
};

/* A byte range [lo, hi). */
struct ival {
    uint64_t lo, hi;
};

struct space {
    char *name; /* owned */
    struct sentry *e;
    size_t n, cap;
    uint64_t max_nbytes; /* an upper bound of the sizes ever indexed */
    /* the bytes whose data phase 2 computed (a GEMM or math result, or a copy of one):
     * disjoint, sorted ranges */
    struct ival *dv;
    size_t dn, dcap;
};

/* ---- decoded ops ------------------------------------------------------------------------- */

struct range {
    uint32_t sid; /* space index */
    uint64_t lo, hi;
};

/* A tensor an op reads or writes: where and as what. */
struct operand {
    uint32_t sid;
    uint64_t addr;
    enum sim_dtype dtype; /* AS_STORED: the stored tensor's own layout (copies) */
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    size_t nbytes;
    struct sim_tensor *snapshot; /* borrowed from the record's params, or NULL */
};

/*
 * Elementwise kernels take an input stride per input that is 1 (a full input) or 0 (one
 * value broadcast); the all-1 case is a plain loop the compiler vectorizes. Their output
 * may be a full input's own buffer (each element is read before it is written), so it is
 * not restrict. Reductions see their input as [outer][len][inner] and write
 * [outer][inner] to a separate buffer.
 */
typedef void (*ew_f32_fn)(float *o, const float *const *in, const size_t *s, size_t n);
typedef void (*ew_i64_fn)(int64_t *o, const int64_t *const *in, const size_t *s, size_t n);
typedef void (*red_f32_fn)(float *restrict o, const float *in, size_t outer, size_t len,
                           size_t inner);
typedef void (*red_i64_fn)(int64_t *restrict o, const int64_t *in, size_t outer, size_t len,
                           size_t inner);

struct math_impl {
    struct sim_exec_math_op pub;
    ew_f32_fn ew_f32;   /* elementwise */
    ew_i64_fn ew_i64;   /* elementwise on integers, or NULL (computed in f32) */
    red_f32_fn red_f32; /* reduction */
    red_i64_fn red_i64; /* reduction on integers, or NULL */
};

struct xop {
    size_t index; /* record index */
    const struct sim_op_record *rec;
    enum sim_exec_kind kind;
    bool memory_class; /* ordered before the others of its t_start (ADR-0052 A4) */

    unsigned n_in;
    struct operand in[SIM_EXEC_MAX_INPUTS];
    struct operand out;
    bool from_snapshot; /* copy: in[0] is the record's snapshot (decided at prepare) */
    bool move;          /* copy: the bytes are copied by a task (else shared) */
    bool derived;       /* the result is data phase 2 computed (decided at prepare) */

    struct sim_exec_gemm g;
    const struct math_impl *m;
    bool has_axis;
    int axis;

    unsigned n_reads;
    struct range reads[SIM_EXEC_MAX_INPUTS];
    struct range write;

    /* scheduling */
    size_t pos; /* position in its chunk */
    int64_t batch;

    /* a wave's data: references owned between prepare and commit */
    struct sim_tensor *tin[SIM_EXEC_MAX_INPUTS];
    struct sim_tensor *tout;
};

/* Per-record info kept for the whole run (the decoded ops live one group at a time). */
struct rinfo {
    struct sim_exec_op_info pub;
    size_t chunk; /* global chunk number, for dependency checks; SIZE_MAX: not scheduled */
};

/* ---- the worker pool --------------------------------------------------------------------- */

enum task_kind {
    TASK_EACH,    /* the ops one after the other */
    TASK_ROWS,    /* GEMMs sharing B: one call on their A rows stacked (matmul.c) */
    TASK_COLUMNS, /* GEMMs sharing A: one call on their B operands side by side */
};

struct task {
    struct xop **ops;
    size_t n;
    enum task_kind kind;
};

struct pool {
    pthread_t threads[SIM_EXEC_MAX_THREADS];
    unsigned n_threads; /* started, the caller not included */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct task *tasks; /* the current wave's, borrowed */
    size_t n_tasks, next, finished;
    bool quit;
};

struct sim_exec {
    struct sim_exec_opts opts;
    struct sim_memstore *store; /* owned snapshot */
    struct space *spaces;
    size_t n_spaces;

    sim_exec_op_fn hook;
    void *hook_ctx;

    struct rinfo *info; /* n_records */
    size_t n_records;
    struct sim_exec_stats stats;
    bool ran;

    struct pool pool;
    bool pool_started;

    /* where a param key was found last (records of one kind list their keys in the same
     * order), by the address of the key's string constant */
    struct {
        const char *key;
        size_t pos;
    } kcache[128];
};

/* Scratch for one run. */
struct run {
    struct sim_exec *x;
    struct sim_op_record *const *recs;
    size_t n;
    struct diag *d;
    struct xop *ops; /* decoded ops of the current chunk's groups */
    size_t cap_ops;
    size_t used;  /* slots of ops the current chunk's ops take */
    size_t g;     /* ops in order (the current chunk so far) */
    size_t chunk; /* global chunk counter */
    size_t wave;  /* global wave counter */
    int64_t batch;
    /* per chunk */
    struct xop **order; /* chunk ops in position order */
    size_t **preds;     /* per position: predecessor positions */
    size_t *n_preds, *cap_preds;
    struct xop **wave_ops;
    struct task *tasks;
    struct xop **task_ops; /* 2 x CHUNK_MAX: a wave's ops from the start, the GEMMs of its
                              stacked calls from tail down */
    size_t tail;
    struct xop **scratch; /* 3 x CHUNK_MAX, for forming the stacked calls */
    bool *taken;
    /* per chunk position: successors (from the predecessor lists), predecessors not yet
     * run, its GEMM batch key (or -1); the positions ready to run */
    size_t *succ, *succ_at;
    size_t cap_succ;
    size_t *pending;
    size_t *stack; /* scratch of the cycle check */
    size_t *ready, n_ready;
    void *items; /* owned: the conflict finder's scratch (deps.c) */
    int32_t *key;
    size_t *key_left, *key_ready; /* per key: members not yet run, of them ready */
};

/* wrapping integer arithmetic (no signed overflow) */
#define WADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define WSUB(x, y) ((int64_t)((uint64_t)(x) - (uint64_t)(y)))
#define WMUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))
#define WNEG(x)    ((int64_t)(0 - (uint64_t)(x)))

/* ---- small helpers ----------------------------------------------------------------------- */

static inline size_t shape_numel(unsigned ndim, const int64_t *shape)
{
    size_t n = 1;
    for (unsigned i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    return n;
}

static inline bool dtype_is_int(enum sim_dtype t)
{
    return !sim_dtype_is_float(t) && t != SIM_BOOL;
}

/* sim_exec_op_error as the value of a failing function (a constant the static analyzer sees). */
#define OP_FAIL(...) (sim_exec_op_error(__VA_ARGS__), -SIM_EINVAL)

/* ---- spaces.c: the executor's store ------------------------------------------------------ */

/* The index of space name, added (empty) when new. May move x->spaces. */
uint32_t sim_exec_space_id(struct sim_exec *x, const char *name);
/* First position of sp's index whose addr >= addr. */
size_t sim_exec_index_lower(const struct space *sp, uint64_t addr);
/* Index a tensor of nbytes stored at addr. */
void sim_exec_index_set(struct space *sp, uint64_t addr, uint64_t nbytes);
/* Mark [lo, hi) as computed by phase 2 (derived) or not; whether some byte of it is. */
void sim_exec_derived_set(struct space *sp, uint64_t lo, uint64_t hi, bool derived);
bool sim_exec_derived_any(const struct space *sp, uint64_t lo, uint64_t hi);
/* Read operand o into *out (a new reference), or a negative sim_err with d filled. */
int sim_exec_mem_read(struct sim_exec *x, const struct operand *o, struct sim_tensor **out,
                      struct diag *d);
/* Write t (not an offset view) to (sid, addr) on behalf of record r. */
void sim_exec_mem_write(struct sim_exec *x, uint32_t sid, uint64_t addr, struct sim_tensor *t,
                        const struct sim_op_record *r);

/* ---- convert.c: element conversion --------------------------------------------------------- */

/* t's elements as f32 (t's own data when it is f32, else a new buffer in *owned), as a new
 * i64 buffer; src stored as t's dtype. */
const float *sim_exec_as_f32(const struct sim_tensor *t, float **owned);
int64_t *sim_exec_as_i64(const struct sim_tensor *t);
void sim_exec_from_f32(const float *src, struct sim_tensor *t);
void sim_exec_from_i64(const int64_t *src, struct sim_tensor *t);

/* ---- mathops.c: the math table and math ops ------------------------------------------------ */

/* The math op name of that arity, or NULL. */
const struct math_impl *sim_exec_math_lookup(const char *name, unsigned arity);
/* Element strides of an input broadcast to the output's shape; false when incompatible. */
bool sim_exec_bcast_strides(unsigned ndim, const int64_t *shape, unsigned ondim,
                            const int64_t *oshape, size_t *stride);
/* Reduction geometry of o's input 0: [outer][len][inner]. */
void sim_exec_red_dims(const struct xop *o, size_t *outer, size_t *len, size_t *inner);
/* Compute math op o from o->tin into o->tout (a worker may run it). */
void sim_exec_math_run(struct xop *o);

/* ---- matmul.c: GEMMs ----------------------------------------------------------------------- */

/* Compute GEMM o from o->tin into o->tout (a worker may run it). */
void sim_exec_gemm_run(struct xop *o);
/* Whether o can run stacked with others sharing its B: f32 arithmetic, 2-D, op(A) and C
 * row-major. */
bool sim_exec_gemm_stackable(const struct xop *o);
/* Whether ops[0..n) (stackable, same shapes, one B) have their A rows one after the other
 * in one f32 buffer, so a call reads them in place. */
bool sim_exec_gemm_rows_adjacent(struct xop *const *ops, size_t n);
/* Compute ops[0..n) as one call: their A rows stacked (in place or copied) times the B they
 * share, the rows of the result copied to each output (a worker may run it). */
void sim_exec_gemm_run_stacked(struct xop *const *ops, size_t n);
/* Whether o can run with others sharing its A, their B side by side: f32 arithmetic, 2-D,
 * op(B) and C row-major. */
bool sim_exec_gemm_columnable(const struct xop *o);
/* Compute ops[0..n) (columnable, same shapes, one A) as one call: the A they share times
 * their B operands side by side in one buffer (a strided copy), the columns of the result
 * copied to each output (a worker may run it). */
void sim_exec_gemm_run_columns(struct xop *const *ops, size_t n);

/* ---- decode.c: records into ops ------------------------------------------------------------ */

/* Fill d with an error about record r: "op #12 gemm_f16 on sip0.cube0.pe0.pe_gemm at
 * 120.5 ns: ...". */
void sim_exec_op_error(struct diag *d, size_t index, const struct sim_op_record *r, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
/* Decode record index into o. A record with nothing to replay gets kind NONE and *skip. */
int sim_exec_decode(struct sim_exec *x, size_t index, const struct sim_op_record *r, struct xop *o,
                    enum sim_exec_status *skip, struct diag *d);

/* ---- pool.c: the worker pool --------------------------------------------------------------- */

/* Run tasks[0..n) on the pool (or on the caller's thread alone unless parallel), the
 * caller taking its share; returns when all are done. */
void sim_exec_pool_run(struct sim_exec *x, struct task *tasks, size_t n, bool parallel);
/* Stop and join the workers (nothing when none were started). */
void sim_exec_pool_stop(struct sim_exec *x);

/* ---- deps.c: dependencies ------------------------------------------------------------------ */

/* Whether two ranges overlap. */
bool sim_exec_overlaps(const struct range *a, const struct range *b);
/* Make chunk position i a predecessor of position j. */
void sim_exec_add_pred(struct run *R, size_t j, size_t i);
/* Add every conflict (RAW, WAR, WAW) between two ops of R->order[0..g) as a predecessor of
 * the later one. */
void sim_exec_find_conflicts(struct run *R, size_t g);
/* Whether the predecessors (and R->succ, built from them) of R->order[0..g) leave no cycle;
 * uses R->pending as scratch. */
bool sim_exec_acyclic(struct run *R, size_t g);
/* Free the conflict finder's scratch (R->items). */
void sim_exec_finder_free(struct run *R);

/* ---- waves.c: scheduling ------------------------------------------------------------------- */

/* Decode the group recs[gs..ge) (equal t_start) into the current chunk, running the chunk
 * first when the group does not fit. Returns 0, 1 (stopped by the op hook) or a negative
 * error. */
int sim_exec_add_group(struct run *R, size_t gs, size_t ge, size_t group);
/* Run what the current chunk holds. Returns 0, 1 or a negative error. */
int sim_exec_flush(struct run *R);

#endif
