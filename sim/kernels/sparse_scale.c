/*
 * sparse_scale: out = x * scale over a block-sparse x, skipping the tiles that hold only
 * zeros. Control flow on memory data (ADR-0020 D3): tl_load returns real data in phase 1,
 * so the kernel reads its block mask (one i32 per tile of x) and never touches the tiles
 * the mask marks empty, and after loading a tile it checks the values themselves and skips
 * the multiply and the store of a tile that turns out to be all zeros. out starts as
 * zeros, so a skipped tile is already right. Each computed tile logs "dma_read", "mul",
 * "dma_write"; a tile skipped by the mask logs nothing, one skipped by its values only its
 * "dma_read". Markers give the counts: "sparse_scale.tiles=T,masked=M,zero=Z".
 *
 * Arguments: x (n), mask (n / tile, i32: 0 marks an empty tile), out (n): tensors, split
 * alike over the PEs; tile: i32 (elements per tile); scale: f32.
 */
#include "sim/kernels/kernels.h"

#include <stdio.h>
#include <string.h>

enum { X_ARG, MASK_ARG, OUT_ARG, TILE_ARG, SCALE_ARG };

/* This PE's part of 1-d tensor argument i, from the shard on this PE. */
static struct tl_tensor *mine(struct tl *tl, const struct kargs *a, size_t i)
{
    int64_t rows, row0 = sim_kutil_my_rows(tl, a, i, &rows);
    struct tl_tensor *t = sim_kutil_rows(tl, a, i, row0, rows);
    int64_t n = (int64_t)tl_numel(t);
    return tl_reshape(tl, t, 1, &n);
}

static bool all_zero(struct tl *tl, const struct tl_tensor *t)
{
    const struct sim_tensor *d = tl_data(tl, t);
    const unsigned char *p = sim_tensor_cdata(d);
    for (size_t i = 0; i < d->nbytes; i++)
        if (p[i])
            return false;
    return true;
}

static void sparse_scale(struct tl *tl, const struct kargs *a)
{
    int64_t tile = tl_arg_int(tl, a, TILE_ARG);
    double scale = tl_arg_float(tl, a, SCALE_ARG);
    struct tl_tensor *x = mine(tl, a, X_ARG), *mask = mine(tl, a, MASK_ARG);
    struct tl_tensor *out = mine(tl, a, OUT_ARG);
    int64_t n = (int64_t)tl_numel(x), tiles = (int64_t)tl_numel(mask);
    if (tile < 1 || n != tiles * tile || (int64_t)tl_numel(out) != n)
        tl_fail(tl,
                "x and out hold %lld and %lld elements here, the mask %lld tiles of %lld: "
                "they must agree",
                (long long)n, (long long)tl_numel(out), (long long)tiles, (long long)tile);

    tl_marker(tl, "sparse_scale.begin");
    struct tl_tensor *m = tl_load(tl, mask); /* real data: the branch below reads it */
    struct tl_tensor *s = tl_const(tl, scale, tl_dtype(x));
    int64_t masked = 0, zero = 0;
    char tile_id[48];
    for (int64_t t = 0; t < tiles; t++) {
        if (tl_get(tl, m, (uint64_t)t) == 0) {
            masked++;
            continue;
        }
        snprintf(tile_id, sizeof(tile_id), "sparse_tile_%lld", (long long)t);
        tl_set_tile(tl, tile_id);
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *v = tl_load(tl, tl_view(tl, x, (uint64_t)(t * tile), 1, &tile));
        if (all_zero(tl, v)) {
            zero++;
        } else {
            tl_store(tl, tl_view(tl, out, (uint64_t)(t * tile), 1, &tile), tl_mul(tl, v, s));
        }
        tl_tcm_release(tl, mark);
    }
    tl_set_tile(tl, NULL);
    char summary[96];
    snprintf(summary, sizeof(summary), "sparse_scale.tiles=%lld,masked=%lld,zero=%lld",
             (long long)tiles, (long long)masked, (long long)zero);
    tl_marker(tl, summary);
}

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int rc;
    if ((rc = sim_kutil_at_least(p, "n", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "tile", 1, d)) < 0 ||
        (rc = sim_kutil_divides(p, "n", sim_kparams_int(p, "tile"), "tile", d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0)
        return rc;
    int pes = sim_kutil_pes(b, p, d);
    if (pes < 1)
        return pes;
    int64_t n = sim_kparams_int(p, "n"), tiles = n / sim_kparams_int(p, "tile");
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    if (tiles % pes != 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k %s: key 'n': %lld tiles do not split over %d PEs", p->kernel->name,
                        (long long)tiles, pes);
    /* the mask: 0 or 1 per tile (integers are drawn in [0, 2) and rounded down) */
    if ((rc = sim_kutil_tensor(b, "x", dt, 1, &n, SIM_KFILL_RANDOM, -1, 1, true, false, d)) < 0 ||
        (rc = sim_kutil_tensor(b, "mask", SIM_I32, 1, &tiles, SIM_KFILL_RANDOM, 0, 2, true, false,
                               d)) < 0 ||
        (rc = sim_kutil_tensor(b, "out", dt, 1, &n, SIM_KFILL_ZERO, 0, 0, true, true, d)) < 0)
        return rc;
    sim_kbuild_int(b, sim_kparams_int(p, "tile"));
    sim_kbuild_float(b, sim_kparams_float(p, "scale"));
    return 0;
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "sparse_scale", 3, 2, d);
    if (rc < 0)
        return rc;
    const struct sim_tensor *x = r->args[X_ARG].t, *mask = r->args[MASK_ARG].t;
    int64_t tile = r->args[TILE_ARG].i;
    if (tile < 1 || sim_tensor_numel(x) != sim_tensor_numel(mask) * (size_t)tile ||
        sim_tensor_numel(r->args[OUT_ARG].t) != sim_tensor_numel(x))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "sparse_scale reference: x, out and the mask's tiles do not agree");
    sim_kref_sparse_scale(x, mask, tile, r->args[SCALE_ARG].f, r->args[OUT_ARG].t);
    return 0;
}

static const struct sim_kparam params[] = {
    {"n", SIM_KP_INT, "8192", "elements of x in total"},
    {"tile", SIM_KP_INT, "128", "elements per tile (one mask entry each)"},
    {"scale", SIM_KP_FLOAT, "2", "the factor"},
    {"pes", SIM_KP_INT, "0", "PEs x is split over (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "element type: f32, f16, bf16"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "dtype", "n", NULL},
    {"mask", SIM_KARG_TENSOR, "i32", "n / tile", NULL},
    {"out", SIM_KARG_TENSOR, "dtype", "n", NULL},
    {"tile", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"scale", SIM_KARG_SCALAR, "f32", NULL, NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_sparse_scale = {
    .name = "sparse_scale",
    .summary = "out = x * scale, skipping the tiles a loaded block mask or the data mark empty",
    .args = args,
    .fn = sparse_scale,
    .params = params,
    .setup = setup,
    .reference = reference,
};

void sim_kref_sparse_scale(const struct sim_tensor *x, const struct sim_tensor *mask, int64_t tile,
                           double scale, struct sim_tensor *out)
{
    size_t n = sim_tensor_numel(x);
    for (size_t i = 0; i < n; i++)
        sim_tensor_set(out, i,
                       sim_tensor_get(mask, i / (size_t)tile) != 0
                           ? sim_tensor_get(x, i) * sim_kutil_round(x->dtype, scale)
                           : 0);
}
