/*
 * stream: reads a vector from memory into TCM as fast as the DMA engine allows and does
 * nothing with it, to measure the memory system: each PE streams its part in transfers of
 * `chunk` bytes with up to `depth` of them in flight (every DMA channel busy), the TCM
 * reused once full. With split=1 each PE reads its own shard (in its own cube's HBM); with
 * split=0 the vector lives whole in the first PE's HBM and each PE reads its slice of it
 * (PEs of other cubes across the links between cubes).
 *
 * Arguments: x (a tensor of n bytes), pe (64 bytes per PE, split: it puts every PE of the
 * launch to work when x is whole), n (i32: x's size), chunk, depth (i32).
 */
#include "sim/kernel/kernel.h"
#include "sim/kernel/tl.h"

#include <stdlib.h>

enum { MAX_DEPTH = 64 };

static void stream(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0);
    int64_t chunk = tl_arg_int(tl, a, 3), depth = tl_arg_int(tl, a, 4);
    uint64_t count = tl_numel(x), lo = 0, hi = count;
    if (!a->v[0].is_tensor || a->v[0].n_shards <= 1) { /* whole: this PE's slice */
        uint64_t p = tl_nranks(tl), r = tl_rank(tl);
        lo = count * r / p;
        hi = count * (r + 1) / p;
    }
    if (chunk < 1 || depth < 1 || depth > MAX_DEPTH)
        tl_fail(tl, "chunk %lld and depth %lld: chunk >= 1, depth 1 .. %d", (long long)chunk,
                (long long)depth, MAX_DEPTH);
    x = tl_reshape(tl, x, 1, &(int64_t){(int64_t)count});
    uint64_t slots = tl_tcm_avail(tl) / (((uint64_t)chunk + 63) / 64 * 64);
    if (slots == 0)
        tl_fail(tl, "a chunk of %lld bytes does not fit the TCM", (long long)chunk);
    if (slots > (uint64_t)depth) /* whole rounds of depth: no transfer left alone at a drain */
        slots -= slots % (uint64_t)depth;
    struct tl_tensor *inflight[MAX_DEPTH];
    unsigned head = 0, n = 0;
    uint64_t used = 0, mark = tl_tcm_mark(tl);
    tl_marker(tl, "stream.begin");
    for (uint64_t at = lo; at < hi; at += (uint64_t)chunk) {
        if (used == slots) { /* the TCM is full: drain, then reuse it */
            for (; n; n--, head = (head + 1) % MAX_DEPTH)
                tl_wait(tl, inflight[head]);
            tl_tcm_release(tl, mark);
            used = 0;
        }
        if (n == (unsigned)depth) {
            tl_wait(tl, inflight[head]);
            head = (head + 1) % MAX_DEPTH;
            n--;
        }
        int64_t len = (int64_t)(hi - at < (uint64_t)chunk ? hi - at : (uint64_t)chunk);
        inflight[(head + n++) % MAX_DEPTH] = tl_load_async(tl, tl_view(tl, x, at, 1, &len));
        used++;
    }
    for (; n; n--, head = (head + 1) % MAX_DEPTH)
        tl_wait(tl, inflight[head]);
    tl_tcm_release(tl, mark);
    tl_marker(tl, "stream.end");
}

static const struct sim_kparam params[] = {
    {"n", SIM_KP_INT, "65536", "bytes of the vector, in total"},
    {"pes", SIM_KP_INT, "1", "PEs the vector is read by"},
    {"chunk", SIM_KP_INT, "4096", "bytes per DMA transfer"},
    {"depth", SIM_KP_INT, "8", "transfers in flight per PE (1 .. 64)"},
    {"split", SIM_KP_INT, "1",
     "1: each PE reads its shard in its own HBM; 0: the vector "
     "is whole in the first PE's HBM"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int64_t n = sim_kparams_int(p, "n"), pes = sim_kparams_int(p, "pes");
    int64_t chunk = sim_kparams_int(p, "chunk"), depth = sim_kparams_int(p, "depth");
    if (n < 1)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k stream: key 'n': %lld, must be >= 1",
                        (long long)n);
    if (pes < 1 || pes > 1 << 20)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "-k stream: key 'pes': %lld, must be >= 1",
                        (long long)pes);
    if (chunk < 1 || chunk > INT32_MAX)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k stream: key 'chunk': %lld, must be >= 1", (long long)chunk);
    if (depth < 1 || depth > MAX_DEPTH)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k stream: key 'depth': %lld, must be 1 .. %d", (long long)depth,
                        MAX_DEPTH);
    int rc = sim_kbuild_pes(b, (unsigned)pes, d);
    if (rc < 0)
        return rc;
    int64_t shape[1] = {n};
    struct sim_ktensor x = {.label = "x",
                            .dtype = SIM_U8,
                            .ndim = 1,
                            .shape = shape,
                            .fill = SIM_KFILL_RANDOM,
                            .lo = 0,
                            .hi = 255,
                            .split = sim_kparams_int(p, "split") != 0};
    int64_t pe_shape[1] = {64 * pes};
    struct sim_ktensor pe = {.label = "pe",
                             .dtype = SIM_U8,
                             .ndim = 1,
                             .shape = pe_shape,
                             .fill = SIM_KFILL_ZERO,
                             .split = true};
    if ((rc = sim_kbuild_tensor(b, &x, d)) < 0 || (rc = sim_kbuild_tensor(b, &pe, d)) < 0)
        return rc;
    sim_kbuild_int(b, n);
    sim_kbuild_int(b, chunk);
    sim_kbuild_int(b, depth);
    return 0;
}

/* Nothing is written: nothing to compute. */
static int reference(const struct sim_kref *r, struct diag *d)
{
    (void)r;
    (void)d;
    return 0;
}

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "u8", "n", NULL},
    {"pe", SIM_KARG_TENSOR, "u8", "64 x PEs", NULL},
    {"n", SIM_KARG_SCALAR, "i32", NULL, "bytes in total"},
    {"chunk", SIM_KARG_SCALAR, "i32", NULL, "bytes per transfer"},
    {"depth", SIM_KARG_SCALAR, "i32", NULL, "transfers in flight"},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_stream = {
    .name = "stream",
    .summary = "reads a vector into TCM with many DMA transfers in flight (memory bandwidth)",
    .args = args,
    .fn = stream,
    .params = params,
    .setup = setup,
    .reference = reference,
};
