/*
 * rmsnorm and layernorm over the last axis, the rows split over the launch's PEs; each PE
 * loads its weights once, then its rows in tiles that fit its TCM (f16 and bf16 are cast
 * to f32 first and the result back):
 *
 *   rmsnorm:    out = x * rsqrt(mean(x * x) + eps) * weight
 *   layernorm:  c = x - mean(x); out = c * rsqrt(mean(c * c) + eps) * gamma + beta
 *
 * Arguments: rmsnorm x (rows x d), weight (d), out (rows x d): tensors; eps: f32.
 *            layernorm x (rows x d), gamma (d), beta (d), out (rows x d): tensors; eps: f32.
 */
#include "sim/kernels/kernels.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_TILE_ROWS = 64 };

/* Elements [c0, c0 + len) of a (d) weight argument, as an HBM tensor (1 x len). */
static struct tl_tensor *weight_view(struct tl *tl, const struct kargs *a, size_t i, int64_t d,
                                     int64_t c0, int64_t len)
{
    if (!a->v[i].is_tensor || sim_kutil_row_elems(tl, a, i) * a->v[i].shape[0] != d)
        tl_fail(tl, "argument %zu must hold the %lld weights of a row", i, (long long)d);
    int64_t shape[2] = {1, len};
    return sim_kutil_slab(tl, a, i, (uint64_t)c0, 2, shape);
}

/* A weight chunk in TCM, as f32. */
static struct tl_tensor *load_f32(struct tl *tl, const struct tl_tensor *t)
{
    struct tl_tensor *w = tl_load(tl, t);
    return tl_dtype(w) == SIM_F32 ? w : tl_cast(tl, w, SIM_F32);
}

/*
 * Rows longer than the TCM holds: one row at a time in chunks of its columns. rmsnorm
 * carries the sum of squares across the chunks, then writes x * rsqrt(sum / d + eps) *
 * weight chunk by chunk. layernorm carries the sum (the mean), then the sum of squared
 * deviations from it (the variance: two passes, no cancellation), then writes.
 */
static void norm_chunked(struct tl *tl, const struct kargs *a, bool layer,
                         const struct tl_tensor *x, const struct tl_tensor *out, int64_t rows,
                         int64_t d, const struct tl_tensor *e)
{
    enum sim_dtype dt = tl_dtype(x);
    bool cast = dt != SIM_F32;
    uint64_t in = sim_dtype_size(dt);
    /* a chunk's allocations, per element: the load, its f32 copy, a product or difference,
     * its square, the weighted result, the weights and their f32 copies (two for
     * layernorm), the shifted result, the cast back */
    uint64_t per = 3 * in + 9 * 4, avail = tl_tcm_avail(tl), fixed = 24 * 64;
    int64_t tc = avail > fixed ? (int64_t)((avail - fixed) / per / 64 * 64) : 0;
    if (tc < 1)
        tl_fail(tl, "the TCM has no room for a chunk of a row");
    int64_t one[2] = {1, 1};
    struct tl_tensor *inv_d = tl_const(tl, 1.0 / (double)d, SIM_F32);
    char tile_id[48];
    for (int64_t r = 0; r < rows; r++) {
        snprintf(tile_id, sizeof(tile_id), "%s_row_%lld", layer ? "layernorm" : "rmsnorm",
                 (long long)r);
        tl_set_tile(tl, tile_id);
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *mean = layer ? tl_tcm_tensor(tl, SIM_F32, 2, one) : NULL;
        struct tl_tensor *ss = tl_tcm_tensor(tl, SIM_F32, 2, one), *scale = NULL;
        for (int pass = layer ? 0 : 1; pass < 3; pass++) {
            if (pass == 2) /* rsqrt(ss / d + eps) */
                scale = tl_rsqrt(tl, tl_add(tl, tl_mul(tl, ss, inv_d), e));
            for (int64_t c0 = 0; c0 < d; c0 += tc) {
                int64_t len = d - c0 < tc ? d - c0 : tc, shape[2] = {1, len};
                uint64_t cmark = tl_tcm_mark(tl);
                uint64_t at = (uint64_t)(r * d + c0);
                struct tl_tensor *t = tl_load(tl, tl_view(tl, x, at, 2, shape));
                if (cast)
                    t = tl_cast(tl, t, SIM_F32);
                if (layer && pass > 0)
                    t = tl_sub(tl, t, mean);
                if (pass == 0 || pass == 1) {
                    struct tl_tensor *part =
                        pass == 0 ? tl_sum(tl, t, -1) : tl_sum(tl, tl_mul(tl, t, t), -1);
                    struct tl_tensor *run = pass == 0 ? mean : ss;
                    const struct tl_tensor *in2[2] = {run, part};
                    run = c0 == 0 ? tl_math_into(tl, run, "copy", 1, &in2[1], false, 0)
                                  : tl_math_into(tl, run, "add", 2, in2, false, 0);
                    if (pass == 0)
                        mean = run;
                    else
                        ss = run;
                } else {
                    struct tl_tensor *y = tl_mul(tl, tl_mul(tl, t, scale),
                                                 load_f32(tl, weight_view(tl, a, 1, d, c0, len)));
                    if (layer)
                        y = tl_add(tl, y, load_f32(tl, weight_view(tl, a, 2, d, c0, len)));
                    tl_store(tl, tl_view(tl, out, at, 2, shape), cast ? tl_cast(tl, y, dt) : y);
                }
                tl_tcm_release(tl, cmark);
            }
            if (pass == 0) /* the sum becomes the mean */
                mean = tl_math_into(tl, mean, "mul", 2, (const struct tl_tensor *[]){mean, inv_d},
                                    false, 0);
        }
        tl_tcm_release(tl, mark);
    }
}

static void norm(struct tl *tl, const struct kargs *a, bool layer)
{
    const char *name = layer ? "layernorm" : "rmsnorm";
    size_t x_arg = 0, out_arg = layer ? 3 : 2, eps_arg = layer ? 4 : 3;
    int64_t d = sim_kutil_row_elems(tl, a, x_arg);
    if (a->v[x_arg].ndim != 2 || sim_kutil_row_elems(tl, a, out_arg) != d ||
        a->v[out_arg].shape[0] != a->v[x_arg].shape[0])
        tl_fail(tl, "x and out must be rows x d tensors of the same shape");
    double eps = tl_arg_float(tl, a, eps_arg);
    int64_t rows, row0 = sim_kutil_my_rows(tl, a, out_arg, &rows);
    if (rows == 0)
        return; /* a PE past the last row */
    struct tl_tensor *x = sim_kutil_rows(tl, a, x_arg, row0, rows);
    struct tl_tensor *out = sim_kutil_rows(tl, a, out_arg, row0, rows);
    enum sim_dtype dt = tl_dtype(x);
    bool cast = dt != SIM_F32;

    char mark_name[32];
    snprintf(mark_name, sizeof(mark_name), "%s.begin", name);
    tl_marker(tl, mark_name);
    struct tl_tensor *e = tl_const(tl, eps, SIM_F32);

    /* one tile's allocations per row: the load, f32 copy, (layernorm: mean, centred),
     * square, mean, add, rsqrt, scaled, weighted, (layernorm: shifted), cast back; the
     * weights (and their f32 copies) once */
    uint64_t f = (uint64_t)d * 4, in = (uint64_t)d * sim_dtype_size(dt);
    const uint64_t per_row[] = {in, f, 4, f, f, 4, 4, 4, f, f, f, in};
    uint64_t weights = (layer ? 2 : 1) * ((in + 63) / 64 + (cast ? (f + 63) / 64 : 0)) * 64;
    uint64_t avail = tl_tcm_avail(tl);
    int64_t tile = avail > weights
                       ? sim_kutil_tile_rows(avail - weights, per_row, 12,
                                             rows < MAX_TILE_ROWS ? rows : MAX_TILE_ROWS)
                       : 0;
    if (tile < 1) {
        norm_chunked(tl, a, layer, x, out, rows, d, e);
    } else {
        struct tl_tensor *w = load_f32(tl, weight_view(tl, a, 1, d, 0, d));
        struct tl_tensor *beta = layer ? load_f32(tl, weight_view(tl, a, 2, d, 0, d)) : NULL;
        char tile_id[48];
        for (int64_t r = 0; r < rows; r += tile) {
            int64_t len = rows - r < tile ? rows - r : tile, shape[2] = {len, d};
            snprintf(tile_id, sizeof(tile_id), "%s_tile_%lld", name, (long long)(r / tile));
            tl_set_tile(tl, tile_id);
            uint64_t mark = tl_tcm_mark(tl);
            struct tl_tensor *t = tl_load(tl, tl_view(tl, x, (uint64_t)(r * d), 2, shape));
            if (cast)
                t = tl_cast(tl, t, SIM_F32);
            if (layer)
                t = tl_sub(tl, t, tl_mean(tl, t, -1));
            struct tl_tensor *ms = tl_mean(tl, tl_mul(tl, t, t), -1);
            struct tl_tensor *y = tl_mul(tl, t, tl_rsqrt(tl, tl_add(tl, ms, e)));
            y = tl_mul(tl, y, w);
            if (layer)
                y = tl_add(tl, y, beta);
            if (cast)
                y = tl_cast(tl, y, dt);
            tl_store(tl, tl_view(tl, out, (uint64_t)(r * d), 2, shape), y);
            tl_tcm_release(tl, mark);
        }
    }
    tl_set_tile(tl, NULL);
    snprintf(mark_name, sizeof(mark_name), "%s.end", name);
    tl_marker(tl, mark_name);
}

static void rmsnorm(struct tl *tl, const struct kargs *a)
{
    norm(tl, a, false);
}

static void layernorm(struct tl *tl, const struct kargs *a)
{
    norm(tl, a, true);
}

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d, bool layer)
{
    int rc;
    if ((rc = sim_kutil_at_least(p, "rows", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "d", 1, d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0 ||
        (rc = sim_kutil_pes(b, p, d)) < 0)
        return rc;
    double eps = sim_kparams_float(p, "eps");
    if (!(eps >= 0))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k %s: key 'eps': %g, must be >= 0",
                        p->kernel->name, eps);
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    int64_t n = sim_kparams_int(p, "d"), shape[2] = {sim_kparams_int(p, "rows"), n};
    if ((rc = sim_kutil_tensor(b, "x", dt, 2, shape, SIM_KFILL_RANDOM, -2, 2, true, false, d)) <
            0 ||
        (rc = sim_kutil_tensor(b, layer ? "gamma" : "weight", dt, 1, &n, SIM_KFILL_RANDOM, 0.5, 1.5,
                               false, false, d)) < 0 ||
        (layer && (rc = sim_kutil_tensor(b, "beta", dt, 1, &n, SIM_KFILL_RANDOM, -0.5, 0.5, false,
                                         false, d)) < 0) ||
        (rc = sim_kutil_tensor(b, "out", dt, 2, shape, SIM_KFILL_ZERO, 0, 0, true, true, d)) < 0)
        return rc;
    sim_kbuild_float(b, eps);
    return 0;
}

static int setup_rms(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    return setup(b, p, d, false);
}

static int setup_layer(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    return setup(b, p, d, true);
}

static int check_rows(const struct sim_kref *r, size_t x, size_t out, size_t w, const char *name,
                      struct diag *d)
{
    const struct sim_tensor *tx = r->args[x].t;
    int64_t dim = tx->ndim ? tx->shape[tx->ndim - 1] : 0;
    if (tx->ndim != 2 || sim_tensor_numel(r->args[out].t) != sim_tensor_numel(tx) ||
        (int64_t)sim_tensor_numel(r->args[w].t) != dim)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "%s reference: x and out must be rows x d alike, the weights d long", name);
    return 0;
}

static int ref_rms(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "rmsnorm", 3, 1, d);
    if (rc < 0 || (rc = check_rows(r, 0, 2, 1, "rmsnorm", d)) < 0)
        return rc;
    struct sim_kref_arg *out = &r->args[2];
    out->bound = sim_xcalloc(sim_tensor_numel(out->t), sizeof(double));
    snprintf(out->bound_what, sizeof(out->bound_what), "%lld-term f32 sums of squares",
             (long long)r->args[0].t->shape[1]);
    sim_kref_rmsnorm(r->args[0].t, r->args[1].t, r->args[3].f, out->t, out->bound);
    return 0;
}

static int ref_layer(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "layernorm", 4, 1, d);
    if (rc < 0 || (rc = check_rows(r, 0, 3, 1, "layernorm", d)) < 0 ||
        (rc = check_rows(r, 0, 3, 2, "layernorm", d)) < 0)
        return rc;
    struct sim_kref_arg *out = &r->args[3];
    out->bound = sim_xcalloc(sim_tensor_numel(out->t), sizeof(double));
    snprintf(out->bound_what, sizeof(out->bound_what), "%lld-term f32 sums (mean, variance)",
             (long long)r->args[0].t->shape[1]);
    sim_kref_layernorm(r->args[0].t, r->args[1].t, r->args[2].t, r->args[4].f, out->t, out->bound);
    return 0;
}

static const struct sim_kparam rms_params[] = {
    {"rows", SIM_KP_INT, "64", "rows (split over the PEs)"},
    {"d", SIM_KP_INT, "256", "elements per row (the normalised axis)"},
    {"eps", SIM_KP_FLOAT, "1e-6", "added to the mean square"},
    {"pes", SIM_KP_INT, "0", "PEs the rows are split over (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "element type: f32, f16, bf16 (computed in f32)"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_kparam layer_params[] = {
    {"rows", SIM_KP_INT, "64", "rows (split over the PEs)"},
    {"d", SIM_KP_INT, "256", "elements per row (the normalised axis)"},
    {"eps", SIM_KP_FLOAT, "1e-5", "added to the variance"},
    {"pes", SIM_KP_INT, "0", "PEs the rows are split over (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "element type: f32, f16, bf16 (computed in f32)"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_karg_desc rms_args[] = {
    {"x", SIM_KARG_TENSOR, "dtype", "rows x d", NULL},
    {"weight", SIM_KARG_TENSOR, "dtype", "d", NULL},
    {"out", SIM_KARG_TENSOR, "dtype", "rows x d", NULL},
    {"eps", SIM_KARG_SCALAR, "f32", NULL, NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

static const struct sim_karg_desc layer_args[] = {
    {"x", SIM_KARG_TENSOR, "dtype", "rows x d", NULL},
    {"gamma", SIM_KARG_TENSOR, "dtype", "d", NULL},
    {"beta", SIM_KARG_TENSOR, "dtype", "d", NULL},
    {"out", SIM_KARG_TENSOR, "dtype", "rows x d", NULL},
    {"eps", SIM_KARG_SCALAR, "f32", NULL, NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_rmsnorm = {
    .name = "rmsnorm",
    .summary = "out = x / sqrt(mean(x^2) + eps) * weight over the last axis, rows over PEs",
    .args = rms_args,
    .fn = rmsnorm,
    .params = rms_params,
    .setup = setup_rms,
    .reference = ref_rms,
};

const struct sim_kernel sim_kernel_layernorm = {
    .name = "layernorm",
    .summary = "out = (x - mean) / sqrt(var + eps) * gamma + beta over the last axis",
    .args = layer_args,
    .fn = layernorm,
    .params = layer_params,
    .setup = setup_layer,
    .reference = ref_layer,
};

/* ---- references ---------------------------------------------------------------------------- */

void sim_kref_rmsnorm(const struct sim_tensor *x, const struct sim_tensor *w, double eps,
                      struct sim_tensor *out, double *bound)
{
    int64_t d = x->shape[x->ndim - 1], rows = (int64_t)sim_tensor_numel(x) / d;
    /* the d-term sum of squares in f32 (any order) is within gamma_d of the exact one;
     * its inverse square root within half of that */
    double gamma = sim_kref_gamma((uint64_t)d, SIM_F32);
    double *v = sim_kutil_doubles(x), *wv = sim_kutil_doubles(w);
    for (int64_t r = 0; r < rows; r++) {
        const double *row = v + r * d;
        double ss = 0;
        for (int64_t c = 0; c < d; c++)
            ss += row[c] * row[c];
        double inv = 1.0 / sqrt(ss / (double)d + eps);
        for (int64_t c = 0; c < d; c++) {
            double y = row[c] * inv * wv[c];
            sim_tensor_set(out, (size_t)(r * d + c), y);
            if (bound)
                bound[r * d + c] = gamma / 2 * fabs(y);
        }
    }
    free(v);
    free(wv);
}

void sim_kref_layernorm(const struct sim_tensor *x, const struct sim_tensor *gamma_w,
                        const struct sim_tensor *beta, double eps, struct sim_tensor *out,
                        double *bound)
{
    int64_t d = x->shape[x->ndim - 1], rows = (int64_t)sim_tensor_numel(x) / d;
    /* the mean is within gamma_d * sum|x| / d, the variance's sum within gamma_d of the
     * exact ones; first order, an element moves by |scale * gamma| times the mean's error
     * plus |its centred value * scale * gamma| times the variance's relative error */
    double gamma = sim_kref_gamma((uint64_t)d, SIM_F32);
    double *v = sim_kutil_doubles(x), *g = sim_kutil_doubles(gamma_w), *b = sim_kutil_doubles(beta);
    for (int64_t r = 0; r < rows; r++) {
        const double *row = v + r * d;
        double mean = 0, var = 0, mag = 0;
        for (int64_t c = 0; c < d; c++) {
            mean += row[c];
            mag += fabs(row[c]);
        }
        mean /= (double)d;
        for (int64_t c = 0; c < d; c++)
            var += (row[c] - mean) * (row[c] - mean);
        double inv = 1.0 / sqrt(var / (double)d + eps);
        for (int64_t c = 0; c < d; c++) {
            double y = (row[c] - mean) * inv * g[c];
            sim_tensor_set(out, (size_t)(r * d + c), y + b[c]);
            if (bound)
                bound[r * d + c] = fabs(inv * g[c]) * gamma * mag / (double)d + gamma * fabs(y);
        }
    }
    free(v);
    free(g);
    free(b);
}
