/*
 * softmax over the last axis, y = exp(x - max(x)) / sum(exp(x - max(x))) row by row, the
 * rows split over the launch's PEs. Each PE takes its rows in tiles that fit its TCM: load,
 * max (a reduction), sub, exp, sum (a reduction), div, store; f16 and bf16 inputs are cast
 * to f32 first and the result back. Every math op is logged with its input snapshots.
 *
 * Arguments: x, y (rows x cols): tensors; axis: i32 (optional, -1 or the last axis).
 */
#include "sim/kernels/kernels.h"

#include <math.h>
#include <stdio.h>

enum { X_ARG, Y_ARG, AXIS_ARG };
enum { MAX_TILE_ROWS = 64 };

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
    if (tile < 1)
        tl_fail(tl, "a row of %lld elements does not fit the TCM", (long long)cols);

    tl_marker(tl, "softmax.begin");
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
    sim_kref_softmax(r->args[X_ARG].t, r->args[Y_ARG].t);
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

void sim_kref_softmax(const struct sim_tensor *x, struct sim_tensor *y)
{
    int64_t cols = x->shape[x->ndim - 1], rows = (int64_t)sim_tensor_numel(x) / cols;
    for (int64_t r = 0; r < rows; r++) {
        size_t at = (size_t)(r * cols);
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < cols; c++)
            mx = fmax(mx, sim_tensor_get(x, at + (size_t)c));
        for (int64_t c = 0; c < cols; c++)
            sum += exp(sim_tensor_get(x, at + (size_t)c) - mx);
        for (int64_t c = 0; c < cols; c++)
            sim_tensor_set(y, at + (size_t)c, exp(sim_tensor_get(x, at + (size_t)c) - mx) / sum);
    }
}
