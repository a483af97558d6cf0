/*
 * Private to the built-in kernels (the files of sim/kernels/) and their tests: helpers the kernels
 * share (parameter checks, the PEs of a launch, rows of a tensor argument whatever its
 * sharding), and each kernel's reference: its expected outputs computed from its inputs by
 * straightforward loops, independent of the simulator, for phase-2 verification.
 */
#ifndef SIM_KERNELS_KERNELS_H
#define SIM_KERNELS_KERNELS_H

#include "sim/util/diag.h"
#include "sim/data/dtype.h"
#include "sim/kernel/kernel.h"
#include "sim/data/tensor.h"
#include "sim/kernel/tl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- setup helpers (return 0 or -SIM_EINVAL with d filled: "-k NAME: key 'k': ...") ------ */

/* Run the launch on the PEs the "pes" parameter asks for (0: every PE of the chip).
 * Returns the PE count (>= 1), or a negative sim_err. */
int sim_kutil_pes(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d);

/* Integer parameter key must be at least min. */
int sim_kutil_at_least(const struct sim_kparams *p, const char *key, int64_t min, struct diag *d);

/* Integer parameter key must divide by `by` (what names the divisor, e.g. "heads"). */
int sim_kutil_divides(const struct sim_kparams *p, const char *key, int64_t by, const char *what,
                      struct diag *d);

/* The "dtype" parameter must be one of allowed[0..n). */
int sim_kutil_dtype(const struct sim_kparams *p, const enum sim_dtype *allowed, size_t n,
                    struct diag *d);

/* v rounded to dtype dt, as storing it in a tensor of dt and reading it back does. */
double sim_kutil_round(enum sim_dtype dt, double v);

/* The dtype a GEMM of dt inputs produces: i32 for integers, else dt itself. */
enum sim_dtype sim_kutil_gemm_out(enum sim_dtype dt);

/* Add a tensor argument (sim_kbuild_tensor with the fields spelled out). */
int sim_kutil_tensor(struct sim_kbuild *b, const char *label, enum sim_dtype dt, unsigned ndim,
                     const int64_t *shape, enum sim_kfill fill, double lo, double hi, bool split,
                     bool read_back, struct diag *d);

/* ---- model shapes (llm_models.c) --------------------------------------------------------- */

/* The shape of a decoder-only transformer, as llm_decode's model= names it. */
struct sim_llm_model {
    const char *name; /* the preset's, or NULL for a config file */
    int64_t dim, heads, kv_heads, ff, layers;
    enum sim_dtype dtype;
};

/* The preset named name (case-insensitive: "Llama-2-7B"), or NULL. */
const struct sim_llm_model *sim_llm_preset(const char *name);

/* The presets' names, comma-separated, into buf. Returns buf. */
char *sim_llm_preset_names(char *buf, size_t size);

/*
 * The shape spec names: a preset, or the path of a Hugging Face config.json (hidden_size,
 * num_attention_heads, num_key_value_heads (default: the heads), intermediate_size,
 * num_hidden_layers, torch_dtype (default float32)). Returns 0, or a negative code with d
 * filled: the file and the field at fault ("cfg.json: ... the model's config has no
 * 'hidden_size'"), a shape that cannot be (heads that do not divide the width), an unknown
 * preset with the list.
 */
int sim_llm_model_load(const char *spec, struct sim_llm_model *out, struct diag *d);

/* ---- kernel helpers (they stop the kernel on a mismatch, naming it) ---------------------- */

/* Elements per row of tensor argument i (the product of its dimensions after the first). */
int64_t sim_kutil_row_elems(struct tl *tl, const struct kargs *a, size_t i);

/* The first row (of the whole tensor) of this PE's shard of tensor argument i, and its
 * row count in *rows: 0 when this PE holds no shard of it (a PE past the last row of a
 * split). */
int64_t sim_kutil_my_rows(struct tl *tl, const struct kargs *a, size_t i, int64_t *rows);

/* Rows [row0, row0 + nrows) of tensor argument i as an HBM tensor of shape (nrows, ...),
 * from the shard that holds them (split or whole); nrows may be 0. Stops the kernel when
 * no shard holds the whole range. */
struct tl_tensor *sim_kutil_rows(struct tl *tl, const struct kargs *a, size_t i, int64_t row0,
                                 int64_t nrows);

/* The elements [offset, offset + numel(shape)) of tensor argument i (row-major in the whole
 * tensor) as an HBM tensor of that shape, from a shard that holds them all (this PE's
 * first: a replicated part is read from the PE's own HBM). Stops the kernel when no shard
 * does. */
struct tl_tensor *sim_kutil_slab(struct tl *tl, const struct kargs *a, size_t i, uint64_t offset,
                                 unsigned ndim, const int64_t *shape);

/* Part p of n things split into `parts` as evenly as they go, the first n % parts parts
 * one more (the builder's default split): [*lo, *hi). */
void sim_kutil_split(int64_t n, int64_t parts, int64_t p, int64_t *lo, int64_t *hi);

/* Rows per tile: the largest R <= max such that n allocations of R * row_bytes[i] bytes
 * each (every one rounded up to the 64-byte TCM allocation unit) fit in avail bytes; 0 when
 * not even one row fits. */
int64_t sim_kutil_tile_rows(uint64_t avail, const uint64_t *row_bytes, size_t n, int64_t max);

/*
 * Ring all-reduce over every PE of the launch (as allreduce_ring does): x and out are 1-d
 * HBM tensors of n elements on each PE (x this PE's contribution); afterwards every PE's
 * out holds the elementwise sum. The vector is cut into P chunks, reduced round the ring
 * (P - 1 steps) and gathered (P - 1 steps) by IPCQ copies, in rounds of pieces that fit the
 * TCM and the IPCQ slots. Every PE of the launch must call it with the same n. Sets tile
 * ids reduce_scatter_S / all_gather_S, after "tile_prefix." unless it is NULL (the caller
 * sets or clears the tile id afterwards).
 */
void sim_kutil_allreduce(struct tl *tl, const struct tl_tensor *x, const struct tl_tensor *out,
                         int64_t n, const char *tile_prefix);

/* ---- reference adapters (sim_kernel.reference: the launch's arguments, kernel.h) -------- */

/* The reference arguments must be n_tensors tensors followed by n_scalars scalars (more
 * scalars are allowed: optional ones). Returns 0 or -SIM_EINVAL with d filled. */
int sim_kutil_ref_args(const struct sim_kref *r, const char *kernel, size_t n_tensors,
                       size_t n_scalars, struct diag *d);

/* The elements of t as doubles (a new array of numel(t) entries, freed by the caller). */
double *sim_kutil_doubles(const struct sim_tensor *t);

/* ---- references (whole tensors, in the launch's argument order; outputs overwritten) ---- */

/* c = a @ b (a: m x k, b: k x n, c: m x n), accumulated in double (exact for integers);
 * bound (NULL, or one entry per element of c) receives gamma_k(f32) * sum |a b| per element,
 * the bound of a k-term dot product accumulated in f32 (sim_kref_gamma). */
void sim_kref_gemm(const struct sim_tensor *a, const struct sim_tensor *b, struct sim_tensor *c,
                   double *bound);

/* The references below compute in double and round once, into the output's dtype; bound
 * (NULL, or one entry per output element) receives each element's forward error bound
 * (sim_kref_gamma of the reduction it comes out of, carried to the element). */

/* y = softmax(x) over the last axis. */
void sim_kref_softmax(const struct sim_tensor *x, struct sim_tensor *y, double *bound);

/* out = x / sqrt(mean(x^2, -1) + eps) * w. */
void sim_kref_rmsnorm(const struct sim_tensor *x, const struct sim_tensor *w, double eps,
                      struct sim_tensor *out, double *bound);

/* out = (x - mean) / sqrt(var + eps) * gamma + beta, over the last axis. */
void sim_kref_layernorm(const struct sim_tensor *x, const struct sim_tensor *gamma,
                        const struct sim_tensor *beta, double eps, struct sim_tensor *out,
                        double *bound);

/* x and out: (P, n): every row of out is the sum of the rows of x, in the ring's order. */
void sim_kref_allreduce(const struct sim_tensor *x, struct sim_tensor *out);

/* out[i] = x[i] * scale where mask[i / tile] != 0, else 0. */
void sim_kref_sparse_scale(const struct sim_tensor *x, const struct sim_tensor *mask, int64_t tile,
                           double scale, struct sim_tensor *out);

/* The shape of an llm_decode run. */
struct sim_kref_llm {
    int64_t layers, d, heads, kv_heads, ff, prompt, gen;
    double eps;
    unsigned ranks; /* PEs the layers were split over (the all-reduce's terms) */
};

/* Its tensors (sim/kernels/llm_decode.c gives their shapes). */
struct sim_kref_llm_io {
    const struct sim_tensor *prompt, *wq, *wk, *wv, *wo, *w1, *w3, *w2; /* inputs */
    struct sim_tensor *kcache, *vcache, *out;         /* the expected outputs (written) */
    const struct sim_tensor *got_k, *got_v, *got_out; /* the kernel's, or NULL */
    double *bound_k, *bound_v, *bound_out;            /* per element, or NULL */
};

/*
 * llm_decode in double: the expected caches and outputs, and their bounds. Where the
 * kernel's own results are given, each position is recomputed from them (the keys and
 * values attention reads, the output a generated token starts from), so that a rounding
 * difference does not grow through every later token; without them the reference runs on
 * its own results.
 */
void sim_kref_llm_decode(const struct sim_kref_llm *s, const struct sim_kref_llm_io *io);

#endif
