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

#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { X_ARG, MASK_ARG, OUT_ARG, TILE_ARG, SCALE_ARG };
enum { MASK_CHUNK = 4096, MAX_PIECE = 16384 };

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
    struct tl_tensor *s = tl_const(tl, scale, tl_dtype(x));
    /* the mask in chunks of at most MASK_CHUNK entries; a tile of x in pieces that fit the
     * TCM next to their product (a tile is one piece unless it is larger than the TCM) */
    int64_t masked = 0, zero = 0;
    size_t ds = sim_dtype_size(tl_dtype(x));
    char tile_id[48];
    for (int64_t m0 = 0; m0 < tiles; m0 += MASK_CHUNK) {
        int64_t mn = tiles - m0 < MASK_CHUNK ? tiles - m0 : MASK_CHUNK;
        uint64_t mask_mark = tl_tcm_mark(tl);
        /* real data: the branch below reads it */
        struct tl_tensor *m = tl_load(tl, tl_view(tl, mask, (uint64_t)m0, 1, &mn));
        int64_t piece = (int64_t)(tl_tcm_avail(tl) / 2 / 64 * 64 / ds);
        if (piece > MAX_PIECE)
            piece = MAX_PIECE;
        if (piece < 1)
            tl_fail(tl, "the TCM has no room for a piece of a tile");
        for (int64_t t = m0; t < m0 + mn; t++) {
            if (tl_get(tl, m, (uint64_t)(t - m0)) == 0) {
                masked++;
                continue;
            }
            snprintf(tile_id, sizeof(tile_id), "sparse_tile_%lld", (long long)t);
            tl_set_tile(tl, tile_id);
            bool all = true;
            for (int64_t at = 0; at < tile; at += piece) {
                int64_t len = tile - at < piece ? tile - at : piece;
                uint64_t mark = tl_tcm_mark(tl);
                uint64_t off = (uint64_t)(t * tile + at);
                struct tl_tensor *v = tl_load(tl, tl_view(tl, x, off, 1, &len));
                if (!all_zero(tl, v)) {
                    all = false;
                    tl_store(tl, tl_view(tl, out, off, 1, &len), tl_mul(tl, v, s));
                }
                tl_tcm_release(tl, mark);
            }
            zero += all;
        }
        tl_tcm_release(tl, mask_mark);
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
    int64_t n = sim_kparams_int(p, "n"), tile = sim_kparams_int(p, "tile"), tiles = n / tile;
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    /* the tiles split over the PEs as evenly as they go; x and out follow the mask */
    int64_t *ranges = sim_xcalloc(2 * (size_t)pes, sizeof(int64_t));
    for (int r = 0; r < pes; r++) {
        sim_kutil_split(tiles, pes, r, &ranges[2 * r], &ranges[2 * r + 1]);
        ranges[2 * r] *= tile;
        ranges[2 * r + 1] *= tile;
    }
    /* the mask: 0 or 1 per tile (integers are drawn in [0, 2) and rounded down) */
    struct sim_ktensor x = {.label = "x",
                            .dtype = dt,
                            .ndim = 1,
                            .shape = &n,
                            .fill = SIM_KFILL_RANDOM,
                            .lo = -1,
                            .hi = 1,
                            .split = true,
                            .split_ranges = ranges};
    struct sim_ktensor out = x;
    out.label = "out";
    out.fill = SIM_KFILL_ZERO;
    out.read_back = true;
    rc = sim_kbuild_tensor(b, &x, d);
    if (rc == 0)
        rc =
            sim_kutil_tensor(b, "mask", SIM_I32, 1, &tiles, SIM_KFILL_RANDOM, 0, 2, true, false, d);
    if (rc == 0)
        rc = sim_kbuild_tensor(b, &out, d);
    free(ranges);
    if (rc < 0)
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
