/*
 * gemm and gemm_explicit: C = A @ B, the rows of C spread over the launch's PEs (each PE
 * computes its shard of C from the matching rows of A and the whole of B).
 *
 * - gemm hands its part to the engine in one tl_composite(gemm): the engine tiles it and
 *   runs its own READ -> GEMM -> WRITE pipeline (op log: one "composite_gemm" per PE with
 *   ADR-0052 D3.5's keys, and the pipeline's TileToken stages).
 * - gemm_explicit does the tiling itself: it loads B into TCM once, then sends one
 *   TileToken per row tile of A through DMA_READ -> GEMM -> DMA_WRITE (tl_tile_gemm), two
 *   tokens in flight (op log: "dma_read" of B, then "TileToken/DMA_READ",
 *   "TileToken/GEMM", "TileToken/DMA_WRITE" per tile, with the params phase 2 replays).
 *
 * Arguments: a (m x k), b (k x n), c (m x n): tensors; m, n, k: i32; gemm_explicit also
 * takes tile: i32 (rows of A per token, 0 or absent: as many as fit the TCM, at most 64).
 * Inputs f32, f16, bf16 give C of the same dtype; i8 gives i32 (exact integer GEMM).
 */
#include "sim/kernels/kernels.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { A_ARG, B_ARG, C_ARG, M_ARG, N_ARG, K_ARG, TILE_ARG };
enum { MAX_TILE_ROWS = 64, DEPTH = 2 };

static uint64_t align64(uint64_t n)
{
    return (n + 63) / 64 * 64;
}

static void expect_shape(struct tl *tl, const struct kargs *a, size_t i, const char *name,
                         int64_t rows, int64_t cols)
{
    const struct karg *k = &a->v[i];
    if (!k->is_tensor || !k->has_dtype || k->ndim != 2 || k->shape[0] != rows ||
        k->shape[1] != cols)
        tl_fail(tl, "argument %zu (%s) must be a %lld x %lld tensor", i, name, (long long)rows,
                (long long)cols);
}

/* This PE's rows of C, the matching rows of A and the whole of B (HBM). */
static int64_t operands(struct tl *tl, const struct kargs *a, struct tl_tensor **ta,
                        struct tl_tensor **tb, struct tl_tensor **tc)
{
    int64_t m = tl_arg_int(tl, a, M_ARG), n = tl_arg_int(tl, a, N_ARG);
    int64_t k = tl_arg_int(tl, a, K_ARG);
    expect_shape(tl, a, A_ARG, "a", m, k);
    expect_shape(tl, a, B_ARG, "b", k, n);
    expect_shape(tl, a, C_ARG, "c", m, n);
    int64_t rows, row0 = sim_kutil_my_rows(tl, a, C_ARG, &rows);
    *tc = sim_kutil_rows(tl, a, C_ARG, row0, rows);
    *ta = sim_kutil_rows(tl, a, A_ARG, row0, rows);
    *tb = sim_kutil_rows(tl, a, B_ARG, 0, k);
    if (tl_dtype(*ta) != tl_dtype(*tb))
        tl_fail(tl, "a is %s and b %s: they must share a dtype", sim_dtype_name(tl_dtype(*ta)),
                sim_dtype_name(tl_dtype(*tb)));
    return rows;
}

/* The composite's tiles: tm x tn output tiles accumulated over k in slices of tk, as large
 * as fit the TCM with DEPTH tiles in flight (each with its A and B slices and its f32
 * accumulator): the whole k when it fits, else slices of it, then smaller tiles. */
static void composite_tiles(struct tl *tl, int64_t rows, int64_t n, int64_t k, size_t ds,
                            uint32_t *tm, uint32_t *tn, uint32_t *tk)
{
    uint64_t avail = tl_tcm_avail(tl);
    int64_t m_ = rows < MAX_TILE_ROWS ? rows : MAX_TILE_ROWS;
    int64_t n_ = n < MAX_TILE_ROWS ? n : MAX_TILE_ROWS, k_ = k;
    for (;;) {
        uint64_t need =
            DEPTH * (align64((uint64_t)(m_ * k_) * ds) + align64((uint64_t)(k_ * n_) * ds) +
                     align64((uint64_t)(m_ * n_) * 4));
        if (need <= avail || (m_ == 1 && n_ == 1 && k_ == 1))
            break;
        if (k_ > 64 || (k_ > 1 && m_ == 1 && n_ == 1))
            k_ = (k_ + 1) / 2;
        else if (m_ >= n_ && m_ > 1)
            m_ = (m_ + 1) / 2;
        else
            n_ = (n_ + 1) / 2;
    }
    *tm = (uint32_t)m_;
    *tn = (uint32_t)n_;
    *tk = (uint32_t)k_;
}

static void gemm(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *ta, *tb, *tc;
    int64_t rows = operands(tl, a, &ta, &tb, &tc);
    if (rows == 0)
        return; /* a PE past the last row of C */
    uint32_t tm, tn, tk;
    composite_tiles(tl, rows, tl_dim(tb, 1), tl_dim(ta, 1), sim_dtype_size(tl_dtype(ta)), &tm, &tn,
                    &tk);
    tl_set_tile(tl, "gemm");
    tl_marker(tl, "gemm.begin");
    tl_wait(tl, tl_composite_gemm_tiled(tl, ta, tb, tc, tm, tn, tk));
    tl_marker(tl, "gemm.end");
    tl_set_tile(tl, NULL);
}

/*
 * C = A @ B when B does not fit the TCM: B in blocks of kb whole rows (the most that fit),
 * each loaded once per group of tm rows of C; each row of the group takes its piece of A
 * (1 x kb, contiguous), its product with the block (tl_dot) is added to the row's f32
 * accumulator (tl_math_into), and the finished row is cast to C's dtype and stored. Every
 * load and store is contiguous: a block of A narrower than A would have to be gathered
 * row by row into one TCM tensor, which phase 2's tensor-granular memory cannot replay.
 */
static void gemm_blocked(struct tl *tl, const struct tl_tensor *ta, const struct tl_tensor *tb,
                         const struct tl_tensor *tc, int64_t rows, int64_t want)
{
    int64_t k = tl_dim(ta, 1), n = tl_dim(tb, 1);
    enum sim_dtype dt = tl_dtype(ta), dc = tl_dtype(tc);
    enum sim_dtype acc_dt = sim_dtype_is_float(dt) ? SIM_F32 : SIM_I32;
    size_t ds = sim_dtype_size(dt);
    uint64_t acc_row = align64((uint64_t)n * 4),
             out_row = align64((uint64_t)n * sim_dtype_size(dc));
    /* per block: B (kb x n), a piece of A (1 x kb), a product (1 x n); per row of the group
     * its accumulator; at the end one cast row */
    uint64_t avail = tl_tcm_avail(tl);
    int64_t tm = want && want < MAX_TILE_ROWS ? want : MAX_TILE_ROWS, kb = 0;
    if (tm > rows)
        tm = rows;
    for (; tm > 0; tm = want ? 0 : tm / 2) {
        uint64_t fixed = (uint64_t)tm * acc_row + acc_row + out_row;
        for (kb = k; kb > 0; kb = kb > 1 ? (kb + 1) / 2 : 0)
            if (fixed + align64((uint64_t)(kb * n) * ds) + align64((uint64_t)kb * ds) <= avail)
                break;
        if (kb > 0)
            break;
    }
    if (tm <= 0 || kb <= 0)
        tl_fail(tl,
                "a row of b (%lld elements) with %lld accumulator row(s) does not fit the %llu "
                "bytes of TCM",
                (long long)n, (long long)(want ? want : 1), (unsigned long long)avail);
    char tile_id[64];
    int64_t one_n[2] = {1, n};
    for (int64_t i0 = 0, id = 0; i0 < rows; i0 += tm, id++) {
        int64_t mi = rows - i0 < tm ? rows - i0 : tm;
        snprintf(tile_id, sizeof(tile_id), "gemm_tile_%lld", (long long)id);
        tl_set_tile(tl, tile_id);
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *acc[MAX_TILE_ROWS];
        for (int64_t r = 0; r < mi; r++)
            acc[r] = tl_tcm_tensor(tl, acc_dt, 2, one_n);
        for (int64_t k0 = 0; k0 < k; k0 += kb) {
            int64_t kl = k - k0 < kb ? k - k0 : kb, sb[2] = {kl, n}, sa[2] = {1, kl};
            uint64_t kmark = tl_tcm_mark(tl);
            struct tl_tensor *b = tl_load(tl, tl_view(tl, tb, (uint64_t)(k0 * n), 2, sb));
            for (int64_t r = 0; r < mi; r++) {
                uint64_t rmark = tl_tcm_mark(tl);
                struct tl_tensor *ar =
                    tl_load(tl, tl_view(tl, ta, (uint64_t)((i0 + r) * k + k0), 2, sa));
                const struct tl_tensor *in[2] = {acc[r], tl_dot(tl, ar, b)};
                acc[r] = k0 == 0 ? tl_math_into(tl, acc[r], "copy", 1, &in[1], false, 0)
                                 : tl_math_into(tl, acc[r], "add", 2, in, false, 0);
                tl_tcm_release(tl, rmark);
            }
            tl_tcm_release(tl, kmark);
        }
        for (int64_t r = 0; r < mi; r++) {
            uint64_t rmark = tl_tcm_mark(tl);
            tl_store(tl, tl_view(tl, tc, (uint64_t)((i0 + r) * n), 2, one_n),
                     dc == acc_dt ? acc[r] : tl_cast(tl, acc[r], dc));
            tl_tcm_release(tl, rmark);
        }
        tl_tcm_release(tl, mark);
    }
}

static void gemm_explicit(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *ta, *tb, *tc;
    int64_t rows = operands(tl, a, &ta, &tb, &tc);
    int64_t k = tl_dim(ta, 1), n = tl_dim(tb, 1);
    int64_t want = a->n > TILE_ARG ? tl_arg_int(tl, a, TILE_ARG) : 0;
    if (want < 0)
        tl_fail(tl, "tile is %lld: rows per token, 0 for as many as fit", (long long)want);
    if (rows == 0)
        return; /* a PE past the last row of C */

    /* rows per token: DEPTH tokens in flight, each holding its A tile and product, next to
     * the whole of B */
    uint64_t ra = (uint64_t)k * sim_dtype_size(tl_dtype(ta));
    uint64_t rc = (uint64_t)n * sim_dtype_size(tl_dtype(tc));
    uint64_t per_row[2 * DEPTH];
    for (int i = 0; i < DEPTH; i++) {
        per_row[2 * i] = ra;
        per_row[2 * i + 1] = rc;
    }
    uint64_t b_bytes = align64((uint64_t)(k * n) * sim_dtype_size(tl_dtype(tb)));
    uint64_t avail = tl_tcm_avail(tl);
    int64_t most = want ? want : MAX_TILE_ROWS;
    most = rows < most ? rows : most;
    int64_t tm =
        b_bytes < avail ? sim_kutil_tile_rows(avail - b_bytes, per_row, 2 * DEPTH, most) : 0;

    tl_marker(tl, "gemm_explicit.begin");
    if (tm < (want ? most : 1)) {
        /* B does not fit next to the tokens: tile K too */
        gemm_blocked(tl, ta, tb, tc, rows, want);
        tl_set_tile(tl, NULL);
        tl_marker(tl, "gemm_explicit.end");
        return;
    }
    struct tl_tensor *b = tl_load(tl, tb); /* B stays in TCM for every tile */
    char tile_id[48];
    for (int64_t r = 0, t = 0; r < rows; t += DEPTH) {
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *inflight[DEPTH];
        int busy = 0;
        for (; busy < DEPTH && r < rows; busy++, r += tm) {
            int64_t len = rows - r < tm ? rows - r : tm;
            int64_t sa[2] = {len, k}, sc[2] = {len, n};
            long long id = t + busy;
            snprintf(tile_id, sizeof(tile_id), "gemm_tile_%lld", id);
            tl_set_tile(tl, tile_id);
            inflight[busy] = tl_tile_gemm(tl, tl_view(tl, ta, (uint64_t)(r * k), 2, sa), b,
                                          tl_view(tl, tc, (uint64_t)(r * n), 2, sc));
        }
        for (int i = 0; i < busy; i++)
            tl_wait(tl, inflight[i]);
        tl_tcm_release(tl, mark);
    }
    tl_set_tile(tl, NULL);
    tl_marker(tl, "gemm_explicit.end");
}

/* ---- setup --------------------------------------------------------------------------------- */

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16, SIM_I8};

static int setup_common(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int rc;
    if ((rc = sim_kutil_at_least(p, "m", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "n", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "k", 1, d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0 ||
        (rc = sim_kutil_pes(b, p, d)) < 0)
        return rc;
    int64_t m = sim_kparams_int(p, "m"), n = sim_kparams_int(p, "n"), k = sim_kparams_int(p, "k");
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    bool fl = sim_dtype_is_float(dt);
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    if ((rc = sim_kutil_tensor(b, "a", dt, 2, sa, SIM_KFILL_RANDOM, fl ? -1 : -8, fl ? 1 : 8, true,
                               false, d)) < 0 ||
        (rc = sim_kutil_tensor(b, "b", dt, 2, sb, SIM_KFILL_RANDOM, fl ? -1 : -8, fl ? 1 : 8, false,
                               false, d)) < 0 ||
        (rc = sim_kutil_tensor(b, "c", sim_kutil_gemm_out(dt), 2, sc, SIM_KFILL_ZERO, 0, 0, true,
                               true, d)) < 0)
        return rc;
    sim_kbuild_int(b, m);
    sim_kbuild_int(b, n);
    sim_kbuild_int(b, k);
    return 0;
}

static int setup_explicit(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int rc = sim_kutil_at_least(p, "tile", 0, d);
    if (rc < 0 || (rc = sim_kutil_at_least(p, "n", 1, d)) < 0)
        return rc;
    /* the smallest tiling: one row of B against one row's accumulator, product and cast */
    int64_t n = sim_kparams_int(p, "n");
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    size_t ds = sim_dtype_size(dt), dc = sim_dtype_size(sim_kutil_gemm_out(dt));
    uint64_t need =
        2 * align64((uint64_t)n * 4) + align64((uint64_t)n * dc) + align64((uint64_t)n * ds) + 64;
    uint64_t have = tl_tcm_stack_bytes(sim_kbuild_config(b));
    if (need > have)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k gemm_explicit: key 'n': %lld: a row of B with a row of C's "
                        "accumulator needs %llu bytes of TCM, a PE of this chip has %llu",
                        (long long)n, (unsigned long long)need, (unsigned long long)have);
    if ((rc = setup_common(b, p, d)) < 0)
        return rc;
    sim_kbuild_int(b, sim_kparams_int(p, "tile"));
    return 0;
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "gemm", 3, 3, d);
    if (rc < 0)
        return rc;
    const struct sim_tensor *a = r->args[A_ARG].t, *b = r->args[B_ARG].t;
    struct sim_tensor *c = r->args[C_ARG].t;
    if (a->ndim != 2 || b->ndim != 2 || c->ndim != 2 || a->shape[1] != b->shape[0] ||
        c->shape[0] != a->shape[0] || c->shape[1] != b->shape[1])
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "gemm reference: a, b and c do not have the shapes of a GEMM");
    struct sim_kref_arg *out = &r->args[C_ARG];
    if (sim_dtype_is_float(a->dtype)) {
        out->bound = sim_xcalloc(sim_tensor_numel(c), sizeof(double));
        snprintf(out->bound_what, sizeof(out->bound_what), "%lld-term f32 dot products",
                 (long long)a->shape[1]);
    }
    sim_kref_gemm(a, b, c, out->bound);
    return 0;
}

static const struct sim_kparam gemm_params[] = {
    {"m", SIM_KP_INT, "128", "rows of A and C (split over the PEs)"},
    {"n", SIM_KP_INT, "128", "columns of B and C"},
    {"k", SIM_KP_INT, "128", "columns of A, rows of B"},
    {"pes", SIM_KP_INT, "0", "PEs the rows are split over (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "input type: f32, f16, bf16 (C alike) or i8 (C i32)"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_kparam explicit_params[] = {
    {"m", SIM_KP_INT, "128", "rows of A and C (split over the PEs)"},
    {"n", SIM_KP_INT, "32", "columns of B and C"},
    {"k", SIM_KP_INT, "64", "columns of A, rows of B (B must fit the TCM)"},
    {"tile", SIM_KP_INT, "0", "rows of A per TileToken (0: as many as fit, at most 64)"},
    {"pes", SIM_KP_INT, "0", "PEs the rows are split over (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "input type: f32, f16, bf16 (C alike) or i8 (C i32)"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

#define GEMM_ARGS                                                                                  \
    {"a", SIM_KARG_TENSOR, "dtype", "m x k", NULL},                                                \
        {"b", SIM_KARG_TENSOR, "dtype", "k x n", NULL},                                            \
        {"c", SIM_KARG_TENSOR, "dtype", "m x n", NULL}, {"m", SIM_KARG_SCALAR, "i32", NULL, NULL}, \
        {"n", SIM_KARG_SCALAR, "i32", NULL, NULL},                                                 \
    {                                                                                              \
        "k", SIM_KARG_SCALAR, "i32", NULL, NULL                                                    \
    }

static const struct sim_karg_desc gemm_args[] = {
    GEMM_ARGS,
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

static const struct sim_karg_desc explicit_args[] = {
    GEMM_ARGS,
    {"tile", SIM_KARG_SCALAR, "i32", NULL, "optional"},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_gemm = {
    .name = "gemm",
    .summary = "C = A @ B with tl_composite(gemm), the rows of C spread over PEs",
    .args = gemm_args,
    .fn = gemm,
    .params = gemm_params,
    .setup = setup_common,
    .reference = reference,
};

const struct sim_kernel sim_kernel_gemm_explicit = {
    .name = "gemm_explicit",
    .summary = "C = A @ B as TileTokens of explicit load / dot / store, rows spread over PEs",
    .args = explicit_args,
    .fn = gemm_explicit,
    .params = explicit_params,
    .setup = setup_explicit,
    .reference = reference,
};

/* ---- reference ----------------------------------------------------------------------------- */

void sim_kref_gemm(const struct sim_tensor *a, const struct sim_tensor *b, struct sim_tensor *c,
                   double *bound)
{
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    /* the kernels accumulate float GEMMs in f32, in whatever order their tiles take */
    double gamma = sim_kref_gamma((uint64_t)k, SIM_F32);
    double *da = sim_kutil_doubles(a), *db = sim_kutil_doubles(b);
    double *bt = sim_xmalloc((size_t)(k * n > 0 ? k * n : 1) * sizeof(double)); /* b^T */
    for (int64_t x = 0; x < k; x++)
        for (int64_t j = 0; j < n; j++)
            bt[j * k + x] = db[x * n + j];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const double *ar = da + i * k, *br = bt + j * k;
            double acc = 0, mag = 0;
            for (int64_t x = 0; x < k; x++) {
                double p = ar[x] * br[x];
                acc += p;
                mag += fabs(p);
            }
            sim_tensor_set(c, (size_t)(i * n + j), acc);
            if (bound)
                bound[i * n + j] = gamma * mag;
        }
    free(da);
    free(db);
    free(bt);
}
