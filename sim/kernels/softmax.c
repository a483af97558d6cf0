/*
 * softmax over the last axis, y = exp(x - max(x)) / sum(exp(x - max(x))) row by row, the
 * rows split over the launch's PEs. Each PE takes its rows in tiles that fit its TCM: load,
 * max (a reduction), sub, exp, sum (a reduction), div, store; f16 and bf16 inputs are cast
 * to f32 first and the result back. Every math op is logged with its input snapshots.
 *
 * Arguments: x, y (rows x cols): tensors; axis: i32 (optional, -1 or the last axis).
 */
#include "sim/kernels/kernels.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { X_ARG, Y_ARG, AXIS_ARG };
enum { MAX_TILE_ROWS = 64 };

/*
 * Rows longer than the TCM holds: one row at a time in chunks of its columns, twice. The
 * first pass carries the running max m and the running sum s of exp(x - m) across the
 * chunks (online softmax: when a chunk raises the max to m', s becomes
 * s * exp(m - m') + sum(exp(chunk - m'))); the second writes exp(x - m) / s chunk by chunk.
 */
static void softmax_chunked(struct tl *tl, const struct tl_tensor *x, const struct tl_tensor *y,
                            int64_t rows, int64_t cols)
{
    enum sim_dtype dt = tl_dtype(x);
    bool cast = dt != SIM_F32;
    uint64_t in = sim_dtype_size(dt);
    /* a chunk's allocations, per element: the load, its f32 copy, sub, exp, div, the cast
     * back; 64-byte units besides (the reductions, the running values) */
    uint64_t per = 2 * in + 4 * 4, avail = tl_tcm_avail(tl), fixed = 16 * 64;
    int64_t tc = avail > fixed ? (int64_t)((avail - fixed) / per / 64 * 64) : 0;
    if (tc < 1)
        tl_fail(tl, "the TCM has no room for a chunk of a row");
    int64_t one[2] = {1, 1};
    char tile_id[48];
    for (int64_t r = 0; r < rows; r++) {
        snprintf(tile_id, sizeof(tile_id), "softmax_row_%lld", (long long)r);
        tl_set_tile(tl, tile_id);
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *m = tl_tcm_tensor(tl, SIM_F32, 2, one);
        struct tl_tensor *s = tl_tcm_tensor(tl, SIM_F32, 2, one);
        for (int pass = 0; pass < 2; pass++)
            for (int64_t c0 = 0; c0 < cols; c0 += tc) {
                int64_t len = cols - c0 < tc ? cols - c0 : tc, shape[2] = {1, len};
                uint64_t cmark = tl_tcm_mark(tl);
                uint64_t at = (uint64_t)(r * cols + c0);
                struct tl_tensor *t = tl_load(tl, tl_view(tl, x, at, 2, shape));
                if (cast)
                    t = tl_cast(tl, t, SIM_F32);
                if (pass == 1) {
                    struct tl_tensor *o = tl_div(tl, tl_exp(tl, tl_sub(tl, t, m)), s);
                    tl_store(tl, tl_view(tl, y, at, 2, shape), cast ? tl_cast(tl, o, dt) : o);
                } else if (c0 == 0) {
                    m = tl_math_into(tl, m, "max", 1, (const struct tl_tensor *[]){t}, true, -1);
                    struct tl_tensor *e = tl_exp(tl, tl_sub(tl, t, m));
                    s = tl_math_into(tl, s, "sum", 1, (const struct tl_tensor *[]){e}, true, -1);
                } else {
                    struct tl_tensor *mn = tl_maximum(tl, m, tl_max(tl, t, -1));
                    struct tl_tensor *e = tl_exp(tl, tl_sub(tl, t, mn));
                    struct tl_tensor *rescaled = tl_mul(tl, s, tl_exp(tl, tl_sub(tl, m, mn)));
                    s = tl_math_into(tl, s, "add", 2,
                                     (const struct tl_tensor *[]){rescaled, tl_sum(tl, e, -1)},
                                     false, 0);
                    m = tl_math_into(tl, m, "copy", 1, (const struct tl_tensor *[]){mn}, false, 0);
                }
                tl_tcm_release(tl, cmark);
            }
        tl_tcm_release(tl, mark);
    }
}

static void softmax(struct tl *tl, const struct kargs *a)
{
    int64_t cols = sim_kutil_row_elems(tl, a, X_ARG);
    if (sim_kutil_row_elems(tl, a, Y_ARG) != cols || a->v[X_ARG].ndim != a->v[Y_ARG].ndim ||
        a->v[X_ARG].shape[0] != a->v[Y_ARG].shape[0])
        tl_fail(tl, "x and y must have the same shape");
    unsigned nd = a->v[X_ARG].ndim;
    int64_t axis = a->n > AXIS_ARG ? tl_arg_int(tl, a, AXIS_ARG) : -1;
    if (nd != 2 || (axis != -1 && axis != 1))
        tl_fail(tl,
                "softmax of a %u-d tensor over axis %lld: this kernel takes rows x cols and "
                "reduces the last axis (-1)",
                nd, (long long)axis);
    int64_t rows, row0 = sim_kutil_my_rows(tl, a, Y_ARG, &rows);
    if (rows == 0)
        return; /* a PE past the last row */
    struct tl_tensor *x = sim_kutil_rows(tl, a, X_ARG, row0, rows);
    struct tl_tensor *y = sim_kutil_rows(tl, a, Y_ARG, row0, rows);
    enum sim_dtype dt = tl_dtype(x);
    bool cast = dt != SIM_F32;

    /* one tile's allocations, per row: the load, its f32 copy, max, sub, exp, sum, div,
     * the cast result */
    uint64_t f = (uint64_t)cols * 4, in = (uint64_t)cols * sim_dtype_size(dt);
    const uint64_t plain[] = {in, 4, f, f, 4, f}, casting[] = {in, f, 4, f, f, 4, f, in};
    int64_t tile = sim_kutil_tile_rows(tl_tcm_avail(tl), cast ? casting : plain, cast ? 8 : 6,
                                       rows < MAX_TILE_ROWS ? rows : MAX_TILE_ROWS);

    tl_marker(tl, "softmax.begin");
    if (tile < 1) {
        softmax_chunked(tl, x, y, rows, cols);
        tl_set_tile(tl, NULL);
        tl_marker(tl, "softmax.end");
        return;
    }
    char tile_id[48];
    for (int64_t r = 0; r < rows; r += tile) {
        int64_t len = rows - r < tile ? rows - r : tile, shape[2] = {len, cols};
        snprintf(tile_id, sizeof(tile_id), "softmax_tile_%lld", (long long)(r / tile));
        tl_set_tile(tl, tile_id);
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *t = tl_load(tl, tl_view(tl, x, (uint64_t)(r * cols), 2, shape));
        if (cast)
            t = tl_cast(tl, t, SIM_F32);
        struct tl_tensor *e = tl_exp(tl, tl_sub(tl, t, tl_max(tl, t, -1)));
        struct tl_tensor *s = tl_div(tl, e, tl_sum(tl, e, -1));
        if (cast)
            s = tl_cast(tl, s, dt);
        tl_store(tl, tl_view(tl, y, (uint64_t)(r * cols), 2, shape), s);
        tl_tcm_release(tl, mark);
    }
    tl_set_tile(tl, NULL);
    tl_marker(tl, "softmax.end");
}

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int rc;
    if ((rc = sim_kutil_at_least(p, "rows", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "cols", 1, d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0 ||
        (rc = sim_kutil_pes(b, p, d)) < 0)
        return rc;
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    int64_t shape[2] = {sim_kparams_int(p, "rows"), sim_kparams_int(p, "cols")};
    if ((rc = sim_kutil_tensor(b, "x", dt, 2, shape, SIM_KFILL_RANDOM, -4, 4, true, false, d)) <
            0 ||
        (rc = sim_kutil_tensor(b, "y", dt, 2, shape, SIM_KFILL_ZERO, 0, 0, true, true, d)) < 0)
        return rc;
    sim_kbuild_int(b, -1);
    return 0;
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "softmax", 2, 0, d);
    if (rc < 0)
        return rc;
    if (r->args[X_ARG].t->ndim != 2 ||
        sim_tensor_numel(r->args[X_ARG].t) != sim_tensor_numel(r->args[Y_ARG].t))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "softmax reference: x and y must be rows x cols alike");
    struct sim_kref_arg *y = &r->args[Y_ARG];
    y->bound = sim_xcalloc(sim_tensor_numel(y->t), sizeof(double));
    snprintf(y->bound_what, sizeof(y->bound_what), "%lld-term f32 sums of exponentials",
             (long long)r->args[X_ARG].t->shape[1]);
    sim_kref_softmax(r->args[X_ARG].t, y->t, y->bound);
    return 0;
}

static const struct sim_kparam params[] = {
    {"rows", SIM_KP_INT, "64", "rows (split over the PEs)"},
    {"cols", SIM_KP_INT, "256", "elements per row (the softmax axis)"},
    {"pes", SIM_KP_INT, "0", "PEs the rows are split over (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "element type: f32, f16, bf16 (computed in f32)"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "dtype", "rows x cols", NULL},
    {"y", SIM_KARG_TENSOR, "dtype", "rows x cols", NULL},
    {"axis", SIM_KARG_SCALAR, "i32", NULL, "optional, -1"},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_softmax = {
    .name = "softmax",
    .summary = "y = softmax(x) over the last axis, rows split over PEs",
    .args = args,
    .fn = softmax,
    .params = params,
    .setup = setup,
    .reference = reference,
};

void sim_kref_softmax(const struct sim_tensor *x, struct sim_tensor *y, double *bound)
{
    int64_t cols = x->shape[x->ndim - 1], rows = (int64_t)sim_tensor_numel(x) / cols;
    /* the sum of cols exponentials in f32 (any order), and the rescalings of the chunked
     * kernel's running sum (at most two roundings per chunk) */
    double gamma = sim_kref_gamma(3 * (uint64_t)cols, SIM_F32);
    double *v = sim_kutil_doubles(x);
    for (int64_t r = 0; r < rows; r++) {
        const double *row = v + r * cols;
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < cols; c++)
            mx = fmax(mx, row[c]);
        for (int64_t c = 0; c < cols; c++)
            sum += exp(row[c] - mx);
        for (int64_t c = 0; c < cols; c++) {
            double out = exp(row[c] - mx) / sum;
            sim_tensor_set(y, (size_t)(r * cols + c), out);
            if (bound)
                bound[r * cols + c] = gamma * out;
        }
    }
    free(v);
}
