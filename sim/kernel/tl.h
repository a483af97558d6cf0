/*
 * The kernel API (ADR-0020 D3, D8): what a kernel, a plain C function
 *
 *     void my_kernel(struct tl *tl, const struct kargs *a);
 *
 * calls to move data and compute on its PE. Each kernel instance runs in its own
 * coroutine; a tl call builds a message, the PE_CPU issues it (issue_ns) and the engine
 * that services it (PE_DMA, PE_GEMM, PE_MATH) takes its modelled time while the other
 * kernels and engines go on. The component hooks log every data op; this API never does.
 *
 * Phase 1 semantics (ADR-0020 D3):
 * - tl_load returns real data read from the memory store after the DMA time, so a kernel
 *   can branch on loaded values (tl_data, tl_get).
 * - tl_store writes to the memory store when it is issued (visibility = issue), then the
 *   DMA time runs; a load after a store sees the stored data.
 * - compute results (tl_dot, math ops, tl_composite) are pending in phase 1: they can be
 *   passed to other ops, stored and waited for, but reading their data is an error that
 *   stops the kernel (and only it) with a message naming the kernel, the op and the rule.
 *   tl_wait(h) synchronises time only.
 *
 * Tensors: a struct tl_tensor is a handle (space, address, dtype, shape) owned by the
 * kernel instance. A handle belongs to the innermost TCM scope open when it was made:
 * one made after tl_tcm_mark(m) is valid until tl_tcm_release(m) (or, made before any
 * mark, until the run ends), so a kernel looping a million times keeps a few handles
 * (tl_math_into updates a handle made outside the loop in place). HBM tensors come from
 * the launch arguments (tl_arg) and views of them (tl_view); loads and compute results
 * live in the PE's TCM, allocated by a stack allocator (tl_tcm_mark / tl_tcm_release).
 * Shapes use numpy broadcasting for elementwise ops; reductions keep the reduced axis
 * with size 1 (keepdims), so tl_sub(x, tl_max(x, 1)) works row by row.
 *
 * Errors in a kernel's use of the API (a wrong shape, an HBM operand to tl_dot, TCM
 * exhausted) stop the kernel the same way, naming the call and the problem.
 */
#ifndef SIM_TL_H
#define SIM_TL_H

#include "sim/data/dtype.h"
#include "sim/data/tensor.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tl; /* a kernel instance's context */
struct sim_config;
struct tl_tensor; /* a handle */

/* ---- arguments (ADR-0012 D7: tensor args by PE-tagged shards, scalars by value) ---------- */

struct kshard {
    int sip, cube, pe;     /* the PE holding the shard */
    uint64_t pa;           /* its PA in that PE's address space */
    uint64_t nbytes;       /* its size */
    uint64_t offset_bytes; /* where it starts in the whole tensor */
};

struct karg {
    bool is_tensor;
    /* tensor */
    bool has_dtype;       /* the workload gave the element type and shape of the whole tensor */
    enum sim_dtype dtype; /* (npuscope extension of ADR-0012); else u8 bytes */
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    const struct kshard *shards; /* all shards, in the order of the launch */
    size_t n_shards;
    int mine; /* index of this PE's first shard, or -1 */
    /* scalar */
    enum sim_dtype scalar_dtype; /* i32, i64, f16, f32 or bool */
    int64_t i;                   /* integer and bool scalars */
    double f;                    /* every scalar, as a double */
};

struct kargs {
    size_t n;
    const struct karg *v;
    const struct sim_value *grid; /* the launch's grid and meta maps as given (borrowed), */
    const struct sim_value *meta; /* or NULL */
    unsigned rank;   /* this PE's index among the launch's PEs (sorted by sip, cube, pe) */
    unsigned nranks; /* number of PEs the launch runs on */
    int sip, cube, pe;
};

/* Integer / float value of scalar argument i; a missing or non-scalar argument stops the
 * kernel ("argument 3 is a tensor, expected a scalar"). */
int64_t tl_arg_int(struct tl *tl, const struct kargs *a, size_t i);
double tl_arg_float(struct tl *tl, const struct kargs *a, size_t i);

/*
 * Tensor argument i as an HBM tensor: this PE's shard (its rows of the whole tensor when
 * the shard is a whole number of rows, else a 1-d run of elements), or, when this PE holds
 * no shard and the argument has exactly one, that shard (an input shared by every PE).
 * Stops the kernel when neither applies.
 */
struct tl_tensor *tl_arg(struct tl *tl, const struct kargs *a, size_t i);

/* Shard j of tensor argument i (any PE's), shaped like tl_arg does. */
struct tl_tensor *tl_arg_shard(struct tl *tl, const struct kargs *a, size_t i, size_t j);

/* A view of t's memory: offset_elems elements further, with another shape (and t's dtype).
 * Stops the kernel when it would reach past the end of t. */
struct tl_tensor *tl_view(struct tl *tl, const struct tl_tensor *t, uint64_t offset_elems,
                          unsigned ndim, const int64_t *shape);

/* The same bytes with another shape (element counts must match). */
struct tl_tensor *tl_reshape(struct tl *tl, const struct tl_tensor *t, unsigned ndim,
                             const int64_t *shape);

/* ---- who and where -------------------------------------------------------------------- */

const char *tl_kernel_name(const struct tl *tl);
const char *tl_pe_id(const struct tl *tl); /* "sip0.cube0.pe1" */
unsigned tl_rank(const struct tl *tl);
unsigned tl_nranks(const struct tl *tl);
double tl_now_ns(const struct tl *tl); /* simulated time */

/* ---- tensor information (allowed on pending tensors) ------------------------------------ */

enum sim_dtype tl_dtype(const struct tl_tensor *t);
unsigned tl_ndim(const struct tl_tensor *t);
int64_t tl_dim(const struct tl_tensor *t, unsigned i); /* negative i counts from the end */
uint64_t tl_numel(const struct tl_tensor *t);
const char *tl_space(const struct tl_tensor *t); /* "hbm", "tcm", "sram" */
uint64_t tl_addr(const struct tl_tensor *t);     /* device address */
bool tl_is_pending(const struct tl_tensor *t);   /* a phase-1 compute result */

/* ---- memory --------------------------------------------------------------------------- */

/* Copy src (HBM or SRAM) into TCM and return the TCM tensor, with its data. Blocks for the
 * DMA. A range never written stops the kernel; a range bound to a pending result gives a
 * pending tensor. A range of a pattern region (sim/chip.h) loads as a pattern-backed
 * tensor: its values are there (tl_get, tl_data), its bytes are never produced unless
 * asked for (sim_tensor_cdata), so streaming gigabytes of pattern weights costs nothing. */
struct tl_tensor *tl_load(struct tl *tl, const struct tl_tensor *src);

/* The same, not waiting: the result's data is available after tl_wait. */
struct tl_tensor *tl_load_async(struct tl *tl, const struct tl_tensor *src);

/* Write src (a TCM tensor, loaded or pending) to dst (an HBM tensor of the same byte
 * size): visible in the memory store now, then the DMA time. Blocks for the DMA. */
void tl_store(struct tl *tl, const struct tl_tensor *dst, const struct tl_tensor *src);

/* The same, not waiting: returns a handle to tl_wait on. */
struct tl_tensor *tl_store_async(struct tl *tl, const struct tl_tensor *dst,
                                 const struct tl_tensor *src);

/* Wait until the op that produced t has finished (timing only: a compute result stays
 * pending). Returns at once for a finished op. */
void tl_wait(struct tl *tl, const struct tl_tensor *t);

/* TCM allocation is a stack: mark, allocate (loads, results), release back to the mark. */
uint64_t tl_tcm_mark(struct tl *tl);
void tl_tcm_release(struct tl *tl, uint64_t mark);

/* Bytes the TCM allocator can still hand out (to size tiles); every allocation is rounded
 * up to a multiple of 64 bytes. */
uint64_t tl_tcm_avail(const struct tl *tl);

/* ---- data (phase 1: loaded tensors only) ------------------------------------------------ */

/* The data of a loaded tensor (borrowed; read its values with sim_tensor_get, its bytes with
 * sim_tensor_cdata, which materialises a pattern). A pending compute result stops the kernel:
 * "kernel 'softmax' on sip0.cube0.pe1: tl_data() on the pending result of 'exp': compute
 * results are not available in phase 1 (ADR-0020 D3)". */
const struct sim_tensor *tl_data(struct tl *tl, const struct tl_tensor *t);

/* Element i (row-major) of a loaded tensor as a double; same rule. */
double tl_get(struct tl *tl, const struct tl_tensor *t, uint64_t i);

/* ---- compute (pending results in TCM) ---------------------------------------------------- */

/* a (m x k) @ b (k x n) on the GEMM engine; operands in TCM. Result dtype: f32 for float
 * inputs, i32 for integer ones. Blocks for the engine. */
struct tl_tensor *tl_dot(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);

/* The same with transposes and an output dtype. */
struct tl_tensor *tl_dot_ex(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b,
                            bool transpose_a, bool transpose_b, enum sim_dtype out_dtype);

/* A tiled GEMM or elementwise pipeline over HBM tensors, run by the engine on its own
 * (ADR-0020's tl.composite): op "gemm" computes out = a @ b; op "math" computes
 * out = math_op(a) elementwise (b NULL). Returns at once with a pending handle (out). */
struct tl_tensor *tl_composite(struct tl *tl, const char *op, const struct tl_tensor *a,
                               const struct tl_tensor *b, const struct tl_tensor *out,
                               const char *math_op);

/*
 * One output tile of a GEMM as a TileToken (ADR-0052 D5) that routes itself through the
 * PE's engines, the explicit counterpart of tl_composite: DMA_READ of a (an m x k tile in
 * HBM or SRAM) into TCM, GEMM of that by b (k x n, already in TCM), DMA_WRITE of the m x n
 * product to out (HBM; its dtype is the product's). Each stage is logged as
 * "TileToken/DMA_READ", "TileToken/GEMM", "TileToken/DMA_WRITE" with the params of the op
 * it stands for (a copy's src/dst spaces and addresses, shape, dtype; a GEMM's D3.3 keys),
 * so phase 2 replays it. The TCM tile and product are taken from the stack allocator now
 * (release them after tl_wait); out is pending from now on (visibility = issue). Returns
 * at once: a pending handle on out to tl_wait on.
 */
struct tl_tensor *tl_tile_gemm(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b,
                               const struct tl_tensor *out);

/* Elementwise, on the MATH engine, inputs in TCM, broadcasting. Block for the engine. */
struct tl_tensor *tl_exp(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_log(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_sqrt(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_rsqrt(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_neg(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_abs(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_relu(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_gelu(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_silu(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_sigmoid(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_tanh(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_recip(struct tl *tl, const struct tl_tensor *x);
struct tl_tensor *tl_cast(struct tl *tl, const struct tl_tensor *x, enum sim_dtype dtype);
struct tl_tensor *tl_add(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);
struct tl_tensor *tl_sub(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);
struct tl_tensor *tl_mul(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);
struct tl_tensor *tl_div(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);
struct tl_tensor *tl_maximum(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);
struct tl_tensor *tl_minimum(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b);
/* cond ? a : b elementwise (cond: nonzero is true). */
struct tl_tensor *tl_where(struct tl *tl, const struct tl_tensor *cond, const struct tl_tensor *a,
                           const struct tl_tensor *b);

/* Reductions over axis (negative counts from the end), keeping it with size 1. */
struct tl_tensor *tl_sum(struct tl *tl, const struct tl_tensor *x, int axis);
struct tl_tensor *tl_mean(struct tl *tl, const struct tl_tensor *x, int axis);
struct tl_tensor *tl_max(struct tl *tl, const struct tl_tensor *x, int axis);
struct tl_tensor *tl_min(struct tl *tl, const struct tl_tensor *x, int axis);

/* A scalar constant of dtype in TCM (shape (1,)), real data: for x * 0.5, x + eps. */
struct tl_tensor *tl_const(struct tl *tl, double value, enum sim_dtype dtype);

/* Any elementwise or reduction op by name (what the named functions call): n inputs,
 * has_axis/axis for a reduction, out_dtype SIM_DTYPE_COUNT for the first input's. */
struct tl_tensor *tl_math(struct tl *tl, const char *op, unsigned n,
                          const struct tl_tensor *const *inputs, bool has_axis, int axis,
                          enum sim_dtype out_dtype);

/* ---- between PEs (IPCQ) ------------------------------------------------------------------ */

/* Send src (a TCM tensor) to the PE of rank dst_rank of this launch: the copy crosses the
 * NoC to that PE's DMA, which writes it into one of that PE's IPCQ slots, in its cube's
 * SRAM (ADR-0023 D9.7; logged as "ipcq_copy" from "tcm" to "sram", ADR-0052 D3.6).
 * Returns at once (a handle to tl_wait on). */
struct tl_tensor *tl_ipcq_send(struct tl *tl, unsigned dst_rank, const struct tl_tensor *src);

/* The next tensor another PE sent to this one (in arrival order), in its IPCQ slot in SRAM:
 * its data when the sender's was real (tl_get works), pending when it was a compute
 * result; tl_load it into TCM to compute on it. Blocks until one has arrived. A slot is
 * reused once the ring of slots (the PE's share of the SRAM) wraps around. */
struct tl_tensor *tl_ipcq_recv(struct tl *tl);

/* ---- annotations --------------------------------------------------------------------------- */

/* A named instant on this PE (the trace's MARKER_EVENT). name is copied. */
void tl_marker(struct tl *tl, const char *name);

/* Token boundaries of LLM decode (the trace's TOKEN_EVENT): begin token `index` in the
 * decode phase (else prefill), end the open one. */
void tl_token_begin(struct tl *tl, int64_t index, bool decode);
void tl_token_end(struct tl *tl);

/* Name the layer and the tile the following ops belong to (the trace's layer_id and
 * tile_id); NULL clears. Copied. */
void tl_set_layer(struct tl *tl, const char *layer_id);
void tl_set_tile(struct tl *tl, const char *tile_id);

/* Stop the kernel with an error of its own (printf format), e.g. bad arguments. The
 * message gets the kernel and PE prefix. Never returns. */
void tl_fail(struct tl *tl, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* ==== Tiling at any size ======================================================================
 * What the built-in kernels use to run at any size: values carried across the iterations of
 * a loop that releases its TCM, composites with tiles chosen by the kernel.
 *
 * A rule for kernels that phase 2 must replay: phase 2's memory holds tensors (ADR-0020 D7),
 * so an op should read a TCM tensor as it was written (whole, or reshaped), not part of one
 * that several ops wrote: a slice of an activation goes through HBM (store it, load the
 * slice), where views of a tensor are safe. */

/* n zeroed bytes of host memory owned by the kernel instance (freed with the run, also when
 * the kernel stops on an error): a kernel's own bookkeeping, e.g. arrays of handles. */
void *tl_kernel_alloc(struct tl *tl, size_t n);

/* Bytes of the IPCQ slot ring a PE receives into (its share of its cube's SRAM): a tensor
 * sent with tl_ipcq_send must fit it, and a sender that runs ahead of its receiver by more
 * than the ring would overwrite slots not yet read. */
uint64_t tl_ipcq_capacity(const struct tl *tl);

/* Bytes of TCM the stack allocator has on a chip of config cfg (what tl_tcm_avail starts
 * from): for a kernel's setup to refuse sizes whose smallest tile cannot fit. */
uint64_t tl_tcm_stack_bytes(const struct sim_config *cfg);

/* A TCM tensor of dtype and shape from the stack allocator, with no data yet: the
 * destination of tl_math_into (reading it before an op wrote it is an error). */
struct tl_tensor *tl_tcm_tensor(struct tl *tl, enum sim_dtype dtype, unsigned ndim,
                                const int64_t *shape);

/*
 * tl_math, the result written into dst (a TCM tensor allocated earlier, with as many
 * elements as the result and the dtype wanted) instead of a new allocation: for a value
 * carried across the iterations of a loop that releases the TCM it allocates (a running max
 * or sum). dst may be one of the inputs of an elementwise op (updated in place). dst itself
 * becomes the pending result and is returned (its handle lives on in the scope it was made
 * in, whatever scopes the loop opens and closes). Blocks for the engine.
 */
struct tl_tensor *tl_math_into(struct tl *tl, struct tl_tensor *dst, const char *op, unsigned n,
                               const struct tl_tensor *const *inputs, bool has_axis, int axis);

/*
 * tl_composite(tl, "gemm", a, b, out, NULL) with the pipeline's tiles chosen by the kernel:
 * tile_m x tile_n output tiles, each accumulated over k in slices of tile_k (0: the
 * pipeline's defaults, 64 x 64 and the whole k), so that a tile's operands fit the TCM the
 * kernel has. Returns at once with a pending handle (out).
 */
struct tl_tensor *tl_composite_gemm_tiled(struct tl *tl, const struct tl_tensor *a,
                                          const struct tl_tensor *b, const struct tl_tensor *out,
                                          uint32_t tile_m, uint32_t tile_n, uint32_t tile_k);

/* ==== Call sites ================================================================================
 * Every call above records where the kernel made it (file, line, function: its call site), so
 * that each op a call causes names the line of the kernel that issued it (the trace's
 * details.src, `npuscope annotate`, the TUI's source pane). The functions keep their names and
 * signatures; the macros below, defined after the prototypes, wrap each call in an inline
 * function that first hands the call site to tl_at. A call site is a static object (one per
 * line of a kernel that calls the API), interned once on its first call: a call costs a store.
 *
 * Define TL_NO_SITES before including this header to call the functions themselves (what
 * the API's own implementation does), or take a function's address as usual: `(tl_load)`.
 * A compiler without GNU C statement expressions gets no call sites. */

/* A call site: file, function and line of a call in a kernel's source (static strings); id
 * is 0 until the site is first used, then its number among the process's call sites. */
struct tl_site {
    const char *file;
    const char *func;
    int line;
    uint32_t id;
};

/* The call of tl about to be made is made from site (interned on its first use). What the
 * macros below call; a kernel never needs to. */
void tl_at(struct tl *tl, struct tl_site *site);

#if !defined(TL_NO_SITES) && defined(__GNUC__)
/* The call site of the code it appears in, as a static struct tl_site. */
#define TL_SITE                                                                                    \
    __extension__({                                                                                \
        static struct tl_site tl_site_ = {__FILE__, __func__, __LINE__, 0};                        \
        &tl_site_;                                                                                 \
    })

static inline int64_t tl_arg_int_at_(struct tl_site *site_, struct tl *tl, const struct kargs *a,
                                     size_t i)
{
    tl_at(tl, site_);
    return tl_arg_int(tl, a, i);
}
#define tl_arg_int(...) tl_arg_int_at_(TL_SITE, __VA_ARGS__)

static inline double tl_arg_float_at_(struct tl_site *site_, struct tl *tl, const struct kargs *a,
                                      size_t i)
{
    tl_at(tl, site_);
    return tl_arg_float(tl, a, i);
}
#define tl_arg_float(...) tl_arg_float_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_arg_at_(struct tl_site *site_, struct tl *tl,
                                           const struct kargs *a, size_t i)
{
    tl_at(tl, site_);
    return tl_arg(tl, a, i);
}
#define tl_arg(...) tl_arg_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_arg_shard_at_(struct tl_site *site_, struct tl *tl,
                                                 const struct kargs *a, size_t i, size_t j)
{
    tl_at(tl, site_);
    return tl_arg_shard(tl, a, i, j);
}
#define tl_arg_shard(...) tl_arg_shard_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_view_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *t, uint64_t offset_elems,
                                            unsigned ndim, const int64_t *shape)
{
    tl_at(tl, site_);
    return tl_view(tl, t, offset_elems, ndim, shape);
}
#define tl_view(...) tl_view_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_reshape_at_(struct tl_site *site_, struct tl *tl,
                                               const struct tl_tensor *t, unsigned ndim,
                                               const int64_t *shape)
{
    tl_at(tl, site_);
    return tl_reshape(tl, t, ndim, shape);
}
#define tl_reshape(...) tl_reshape_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_load_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *src)
{
    tl_at(tl, site_);
    return tl_load(tl, src);
}
#define tl_load(...) tl_load_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_load_async_at_(struct tl_site *site_, struct tl *tl,
                                                  const struct tl_tensor *src)
{
    tl_at(tl, site_);
    return tl_load_async(tl, src);
}
#define tl_load_async(...) tl_load_async_at_(TL_SITE, __VA_ARGS__)

static inline void tl_store_at_(struct tl_site *site_, struct tl *tl, const struct tl_tensor *dst,
                                const struct tl_tensor *src)
{
    tl_at(tl, site_);
    tl_store(tl, dst, src);
}
#define tl_store(...) tl_store_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_store_async_at_(struct tl_site *site_, struct tl *tl,
                                                   const struct tl_tensor *dst,
                                                   const struct tl_tensor *src)
{
    tl_at(tl, site_);
    return tl_store_async(tl, dst, src);
}
#define tl_store_async(...) tl_store_async_at_(TL_SITE, __VA_ARGS__)

static inline void tl_wait_at_(struct tl_site *site_, struct tl *tl, const struct tl_tensor *t)
{
    tl_at(tl, site_);
    tl_wait(tl, t);
}
#define tl_wait(...) tl_wait_at_(TL_SITE, __VA_ARGS__)

static inline uint64_t tl_tcm_mark_at_(struct tl_site *site_, struct tl *tl)
{
    tl_at(tl, site_);
    return tl_tcm_mark(tl);
}
#define tl_tcm_mark(...) tl_tcm_mark_at_(TL_SITE, __VA_ARGS__)

static inline void tl_tcm_release_at_(struct tl_site *site_, struct tl *tl, uint64_t mark)
{
    tl_at(tl, site_);
    tl_tcm_release(tl, mark);
}
#define tl_tcm_release(...) tl_tcm_release_at_(TL_SITE, __VA_ARGS__)

static inline const struct sim_tensor *tl_data_at_(struct tl_site *site_, struct tl *tl,
                                                   const struct tl_tensor *t)
{
    tl_at(tl, site_);
    return tl_data(tl, t);
}
#define tl_data(...) tl_data_at_(TL_SITE, __VA_ARGS__)

static inline double tl_get_at_(struct tl_site *site_, struct tl *tl, const struct tl_tensor *t,
                                uint64_t i)
{
    tl_at(tl, site_);
    return tl_get(tl, t, i);
}
#define tl_get(...) tl_get_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_dot_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_dot(tl, a, b);
}
#define tl_dot(...) tl_dot_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_dot_ex_at_(struct tl_site *site_, struct tl *tl,
                                              const struct tl_tensor *a, const struct tl_tensor *b,
                                              bool transpose_a, bool transpose_b,
                                              enum sim_dtype out_dtype)
{
    tl_at(tl, site_);
    return tl_dot_ex(tl, a, b, transpose_a, transpose_b, out_dtype);
}
#define tl_dot_ex(...) tl_dot_ex_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_composite_at_(struct tl_site *site_, struct tl *tl,
                                                 const char *op, const struct tl_tensor *a,
                                                 const struct tl_tensor *b,
                                                 const struct tl_tensor *out, const char *math_op)
{
    tl_at(tl, site_);
    return tl_composite(tl, op, a, b, out, math_op);
}
#define tl_composite(...) tl_composite_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_tile_gemm_at_(struct tl_site *site_, struct tl *tl,
                                                 const struct tl_tensor *a,
                                                 const struct tl_tensor *b,
                                                 const struct tl_tensor *out)
{
    tl_at(tl, site_);
    return tl_tile_gemm(tl, a, b, out);
}
#define tl_tile_gemm(...) tl_tile_gemm_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_exp_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_exp(tl, x);
}
#define tl_exp(...) tl_exp_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_log_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_log(tl, x);
}
#define tl_log(...) tl_log_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_sqrt_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_sqrt(tl, x);
}
#define tl_sqrt(...) tl_sqrt_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_rsqrt_at_(struct tl_site *site_, struct tl *tl,
                                             const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_rsqrt(tl, x);
}
#define tl_rsqrt(...) tl_rsqrt_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_neg_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_neg(tl, x);
}
#define tl_neg(...) tl_neg_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_abs_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_abs(tl, x);
}
#define tl_abs(...) tl_abs_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_relu_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_relu(tl, x);
}
#define tl_relu(...) tl_relu_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_gelu_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_gelu(tl, x);
}
#define tl_gelu(...) tl_gelu_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_silu_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_silu(tl, x);
}
#define tl_silu(...) tl_silu_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_sigmoid_at_(struct tl_site *site_, struct tl *tl,
                                               const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_sigmoid(tl, x);
}
#define tl_sigmoid(...) tl_sigmoid_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_tanh_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_tanh(tl, x);
}
#define tl_tanh(...) tl_tanh_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_recip_at_(struct tl_site *site_, struct tl *tl,
                                             const struct tl_tensor *x)
{
    tl_at(tl, site_);
    return tl_recip(tl, x);
}
#define tl_recip(...) tl_recip_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_cast_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x, enum sim_dtype dtype)
{
    tl_at(tl, site_);
    return tl_cast(tl, x, dtype);
}
#define tl_cast(...) tl_cast_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_add_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_add(tl, a, b);
}
#define tl_add(...) tl_add_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_sub_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_sub(tl, a, b);
}
#define tl_sub(...) tl_sub_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_mul_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_mul(tl, a, b);
}
#define tl_mul(...) tl_mul_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_div_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_div(tl, a, b);
}
#define tl_div(...) tl_div_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_maximum_at_(struct tl_site *site_, struct tl *tl,
                                               const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_maximum(tl, a, b);
}
#define tl_maximum(...) tl_maximum_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_minimum_at_(struct tl_site *site_, struct tl *tl,
                                               const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_minimum(tl, a, b);
}
#define tl_minimum(...) tl_minimum_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_where_at_(struct tl_site *site_, struct tl *tl,
                                             const struct tl_tensor *cond,
                                             const struct tl_tensor *a, const struct tl_tensor *b)
{
    tl_at(tl, site_);
    return tl_where(tl, cond, a, b);
}
#define tl_where(...) tl_where_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_sum_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x, int axis)
{
    tl_at(tl, site_);
    return tl_sum(tl, x, axis);
}
#define tl_sum(...) tl_sum_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_mean_at_(struct tl_site *site_, struct tl *tl,
                                            const struct tl_tensor *x, int axis)
{
    tl_at(tl, site_);
    return tl_mean(tl, x, axis);
}
#define tl_mean(...) tl_mean_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_max_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x, int axis)
{
    tl_at(tl, site_);
    return tl_max(tl, x, axis);
}
#define tl_max(...) tl_max_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_min_at_(struct tl_site *site_, struct tl *tl,
                                           const struct tl_tensor *x, int axis)
{
    tl_at(tl, site_);
    return tl_min(tl, x, axis);
}
#define tl_min(...) tl_min_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_const_at_(struct tl_site *site_, struct tl *tl, double value,
                                             enum sim_dtype dtype)
{
    tl_at(tl, site_);
    return tl_const(tl, value, dtype);
}
#define tl_const(...) tl_const_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_math_at_(struct tl_site *site_, struct tl *tl, const char *op,
                                            unsigned n, const struct tl_tensor *const *inputs,
                                            bool has_axis, int axis, enum sim_dtype out_dtype)
{
    tl_at(tl, site_);
    return tl_math(tl, op, n, inputs, has_axis, axis, out_dtype);
}
#define tl_math(...) tl_math_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_ipcq_send_at_(struct tl_site *site_, struct tl *tl,
                                                 unsigned dst_rank, const struct tl_tensor *src)
{
    tl_at(tl, site_);
    return tl_ipcq_send(tl, dst_rank, src);
}
#define tl_ipcq_send(...) tl_ipcq_send_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_ipcq_recv_at_(struct tl_site *site_, struct tl *tl)
{
    tl_at(tl, site_);
    return tl_ipcq_recv(tl);
}
#define tl_ipcq_recv(...) tl_ipcq_recv_at_(TL_SITE, __VA_ARGS__)

static inline void tl_marker_at_(struct tl_site *site_, struct tl *tl, const char *name)
{
    tl_at(tl, site_);
    tl_marker(tl, name);
}
#define tl_marker(...) tl_marker_at_(TL_SITE, __VA_ARGS__)

static inline void tl_token_begin_at_(struct tl_site *site_, struct tl *tl, int64_t index,
                                      bool decode)
{
    tl_at(tl, site_);
    tl_token_begin(tl, index, decode);
}
#define tl_token_begin(...) tl_token_begin_at_(TL_SITE, __VA_ARGS__)

static inline void tl_token_end_at_(struct tl_site *site_, struct tl *tl)
{
    tl_at(tl, site_);
    tl_token_end(tl);
}
#define tl_token_end(...) tl_token_end_at_(TL_SITE, __VA_ARGS__)

static inline void tl_set_layer_at_(struct tl_site *site_, struct tl *tl, const char *layer_id)
{
    tl_at(tl, site_);
    tl_set_layer(tl, layer_id);
}
#define tl_set_layer(...) tl_set_layer_at_(TL_SITE, __VA_ARGS__)

static inline void tl_set_tile_at_(struct tl_site *site_, struct tl *tl, const char *tile_id)
{
    tl_at(tl, site_);
    tl_set_tile(tl, tile_id);
}
#define tl_set_tile(...) tl_set_tile_at_(TL_SITE, __VA_ARGS__)

static inline void *tl_kernel_alloc_at_(struct tl_site *site_, struct tl *tl, size_t n)
{
    tl_at(tl, site_);
    return tl_kernel_alloc(tl, n);
}
#define tl_kernel_alloc(...) tl_kernel_alloc_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_tcm_tensor_at_(struct tl_site *site_, struct tl *tl,
                                                  enum sim_dtype dtype, unsigned ndim,
                                                  const int64_t *shape)
{
    tl_at(tl, site_);
    return tl_tcm_tensor(tl, dtype, ndim, shape);
}
#define tl_tcm_tensor(...) tl_tcm_tensor_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *tl_math_into_at_(struct tl_site *site_, struct tl *tl,
                                                 struct tl_tensor *dst, const char *op, unsigned n,
                                                 const struct tl_tensor *const *inputs,
                                                 bool has_axis, int axis)
{
    tl_at(tl, site_);
    return tl_math_into(tl, dst, op, n, inputs, has_axis, axis);
}
#define tl_math_into(...) tl_math_into_at_(TL_SITE, __VA_ARGS__)

static inline struct tl_tensor *
tl_composite_gemm_tiled_at_(struct tl_site *site_, struct tl *tl, const struct tl_tensor *a,
                            const struct tl_tensor *b, const struct tl_tensor *out, uint32_t tile_m,
                            uint32_t tile_n, uint32_t tile_k)
{
    tl_at(tl, site_);
    return tl_composite_gemm_tiled(tl, a, b, out, tile_m, tile_n, tile_k);
}
#define tl_composite_gemm_tiled(...) tl_composite_gemm_tiled_at_(TL_SITE, __VA_ARGS__)

#endif /* call sites */

#endif
