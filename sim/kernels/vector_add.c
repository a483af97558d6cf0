/*
 * vector_add: out = x + y, elementwise. The reference kernel of the tl API: each PE adds
 * its shard of the vectors (the launch splits them by rows), tile by tile so the tiles fit
 * its TCM: load x and y, add on the MATH engine, store the sum, release the tiles.
 *
 * Arguments: x, y, out (tensors of n elements), n (i32: the element count of the whole
 * vectors).
 */
#include "sim/kernel/kernel.h"
#include "sim/kernel/tl.h"

enum { MAX_TILE = 4096 };

static void vector_add(struct tl *tl, const struct kargs *a)
{
    if (a->n >= 3 && a->v[2].is_tensor && a->v[2].mine < 0 && a->v[2].n_shards > 1)
        return; /* a PE that holds no part of out (past the last element of a split) */
    struct tl_tensor *x = tl_arg(tl, a, 0), *y = tl_arg(tl, a, 1), *out = tl_arg(tl, a, 2);
    int64_t n = tl_arg_int(tl, a, 3);
    uint64_t count = tl_numel(x);
    if (tl_numel(y) != count || tl_numel(out) != count)
        tl_fail(tl, "x, y and out hold %llu, %llu and %llu elements: they must be equal",
                (unsigned long long)count, (unsigned long long)tl_numel(y),
                (unsigned long long)tl_numel(out));
    if (n < 0 || count > (uint64_t)n)
        tl_fail(tl, "n is %lld but this PE's shard alone holds %llu elements", (long long)n,
                (unsigned long long)count);

    /* three tiles (x, y, the sum) live at once: size them to the free TCM, in whole
     * 64-byte allocation units */
    size_t ds = sim_dtype_size(tl_dtype(x));
    uint64_t tile = tl_tcm_avail(tl) / 3 / 64 * 64 / ds;
    if (tile > MAX_TILE)
        tile = MAX_TILE;
    if (tile == 0)
        tl_fail(tl, "the TCM has no room for a tile");
    x = tl_reshape(tl, x, 1, &(int64_t){(int64_t)count});
    y = tl_reshape(tl, y, 1, &(int64_t){(int64_t)count});
    out = tl_reshape(tl, out, 1, &(int64_t){(int64_t)count});

    tl_marker(tl, "vector_add.begin");
    for (uint64_t at = 0; at < count; at += tile) {
        int64_t len = (int64_t)(count - at < tile ? count - at : tile);
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *tx = tl_load(tl, tl_view(tl, x, at, 1, &len));
        struct tl_tensor *ty = tl_load(tl, tl_view(tl, y, at, 1, &len));
        struct tl_tensor *sum = tl_add(tl, tx, ty);
        tl_store(tl, tl_view(tl, out, at, 1, &len), sum);
        tl_tcm_release(tl, mark);
    }
    tl_marker(tl, "vector_add.end");
}

static const struct sim_kparam params[] = {
    {"n", SIM_KP_INT, "4096", "elements of each vector, in total"},
    {"pes", SIM_KP_INT, "1", "PEs the vectors are split over"},
    {"dtype", SIM_KP_DTYPE, "f32", "element type"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int64_t n = sim_kparams_int(p, "n"), pes = sim_kparams_int(p, "pes");
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    if (n < 1)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k vector_add: key 'n': %lld, must be >= 1", (long long)n);
    if (pes < 1 || pes > 1 << 20)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k vector_add: key 'pes': %lld, must be >= 1", (long long)pes);
    int rc = sim_kbuild_pes(b, (unsigned)pes, d);
    if (rc < 0)
        return rc;
    int64_t shape[1] = {n};
    /* split over the PEs as evenly as they go (the first PEs one element more) */
    struct sim_ktensor x = {.label = "x",
                            .dtype = dt,
                            .ndim = 1,
                            .shape = shape,
                            .fill = SIM_KFILL_RANDOM,
                            .lo = -1,
                            .hi = 1,
                            .split = true};
    struct sim_ktensor y = x, out = x;
    y.label = "y";
    out.label = "out";
    out.fill = SIM_KFILL_ZERO;
    out.read_back = true;
    if ((rc = sim_kbuild_tensor(b, &x, d)) < 0 || (rc = sim_kbuild_tensor(b, &y, d)) < 0 ||
        (rc = sim_kbuild_tensor(b, &out, d)) < 0)
        return rc;
    sim_kbuild_int(b, n);
    return 0;
}

/* Element i of an integer tensor set to v wrapped to its width (numpy's integer add). */
static void set_wrapped(struct sim_tensor *t, size_t i, int64_t v)
{
    unsigned char *p = (unsigned char *)sim_tensor_data(t) + i * sim_dtype_size(t->dtype);
    uint64_t u = (uint64_t)v;
    switch (sim_dtype_size(t->dtype)) {
    case 1: *p = (uint8_t)u; break;
    case 2: *(uint16_t *)(void *)p = (uint16_t)u; break;
    case 4: *(uint32_t *)(void *)p = (uint32_t)u; break;
    default: *(uint64_t *)(void *)p = u; break;
    }
}

/* out = x + y, element by element. */
static int reference(const struct sim_kref *r, struct diag *d)
{
    if (r->n < 3 || !r->args[0].is_tensor || !r->args[1].is_tensor || !r->args[2].is_tensor)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "vector_add reference: expected tensors x, y, out");
    const struct sim_tensor *x = r->args[0].t, *y = r->args[1].t;
    struct sim_tensor *out = r->args[2].t;
    size_t n = sim_tensor_numel(out);
    if (sim_tensor_numel(x) != n || sim_tensor_numel(y) != n)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "vector_add reference: x, y and out differ in size");
    bool ints = !sim_dtype_is_float(out->dtype) && out->dtype != SIM_BOOL;
    for (size_t i = 0; i < n; i++) {
        double a = sim_tensor_get(x, i), b = sim_tensor_get(y, i);
        if (ints)
            set_wrapped(out, i, (int64_t)a + (int64_t)b);
        else
            sim_tensor_set(out, i, a + b);
    }
    return 0;
}

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "dtype", "n", NULL},
    {"y", SIM_KARG_TENSOR, "dtype", "n", NULL},
    {"out", SIM_KARG_TENSOR, "dtype", "n", NULL},
    {"n", SIM_KARG_SCALAR, "i32", NULL, "elements in total"},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_vector_add = {
    .name = "vector_add",
    .summary = "out = x + y elementwise, the vectors split over PEs",
    .args = args,
    .fn = vector_add,
    .params = params,
    .setup = setup,
    .reference = reference,
};
