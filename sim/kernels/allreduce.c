/*
 * allreduce_ring: every PE of the launch holds a vector of n elements; afterwards every PE
 * holds their sum. The classic ring: the vector is cut into P chunks (P = PEs); in the
 * reduce-scatter phase (P - 1 steps) each PE sends a partial sum to its right neighbour and
 * adds the chunk arriving from its left one to its own, so that it ends with the full sum
 * of one chunk; in the all-gather phase (P - 1 steps) the full chunks travel round the ring.
 *
 * Chunks move by IPCQ copies (tl_ipcq_send: TCM -> the neighbour's IPCQ slot in its cube's
 * SRAM, logged "ipcq_copy", ADR-0052 D3.6, ADR-0023 D9.7), are loaded from SRAM into TCM
 * ("dma_read"), added ("add", with input snapshots) and stored ("dma_write"). Partial sums
 * are compute results, so in phase 1 most copies carry pending data.
 *
 * Arguments: x, out (P x n, one row per PE): tensors; n: i32.
 */
#include "sim/kernels/kernels.h"

static void tile_name(char *b, size_t size, const char *const part[3], int64_t s);

enum { X_ARG, OUT_ARG, N_ARG };

enum { MAX_PIECE = 16384 };

/* Chunk c of n elements over P: [c * n / P, (c + 1) * n / P). */
static void chunk_range(int64_t n, int64_t P, int64_t c, int64_t *lo, int64_t *hi)
{
    *lo = c * n / P;
    *hi = (c + 1) * n / P;
}

static int64_t mod(int64_t a, int64_t m)
{
    return ((a % m) + m) % m;
}

/* Round q's piece of chunk c of the 1-d vector v (pieces of at most `piece` elements), or
 * NULL when the chunk has no elements left in that round. */
static struct tl_tensor *piece_of(struct tl *tl, const struct tl_tensor *v, int64_t n, int64_t P,
                                  int64_t c, int64_t q, int64_t piece)
{
    int64_t lo, hi;
    chunk_range(n, P, c, &lo, &hi);
    lo += q * piece;
    if (lo >= hi)
        return NULL;
    int64_t len = hi - lo < piece ? hi - lo : piece;
    return tl_view(tl, v, (uint64_t)lo, 1, &len);
}

void sim_kutil_allreduce(struct tl *tl, const struct tl_tensor *x, const struct tl_tensor *out,
                         int64_t n, const char *tile_prefix)
{
    const char *pre = tile_prefix ? tile_prefix : "", *dot = tile_prefix ? "." : "";
    int64_t P = tl_nranks(tl), r = tl_rank(tl);
    size_t ds = sim_dtype_size(tl_dtype(x));
    /* pieces: at most five at once in the TCM (this PE's first piece, a step's part, arrival
     * and sum, the sum kept for the all-gather and what it receives), and a
     * quarter of the receiver's IPCQ slot ring, so that a sender running ahead never
     * overwrites a slot its neighbour has still to read */
    int64_t piece = (int64_t)(tl_tcm_avail(tl) / 5 / 64 * 64 / ds);
    int64_t ipcq = (int64_t)(tl_ipcq_capacity(tl) / 4 / 64 * 64 / ds);
    piece = piece < ipcq ? piece : ipcq;
    piece = piece < MAX_PIECE ? piece : MAX_PIECE;
    if (piece < 1)
        tl_fail(tl, "the all-reduce has no room in the TCM");
    if (P == 1) {
        for (int64_t at = 0; at < n; at += piece) {
            int64_t len = n - at < piece ? n - at : piece;
            uint64_t mark = tl_tcm_mark(tl);
            tl_store(tl, tl_view(tl, out, (uint64_t)at, 1, &len),
                     tl_load(tl, tl_view(tl, x, (uint64_t)at, 1, &len)));
            tl_tcm_release(tl, mark);
        }
        return;
    }
    unsigned right = (unsigned)mod(r + 1, P);
    int64_t longest = (n + P - 1) / P, rounds = (longest + piece - 1) / piece;
    char tile[96];
    for (int64_t q = 0; q < rounds; q++) {
        uint64_t round_mark = tl_tcm_mark(tl);
        /* reduce-scatter: P - 1 steps, each adding the partial sum arriving from the left to
         * this PE's part of that chunk and passing it on; the last leaves the full sum of
         * chunk r + 1 here */
        struct tl_tensor *own = piece_of(tl, x, n, P, r, q, piece), *cur = NULL, *first = NULL;
        if (own)
            first = tl_ipcq_send(tl, right, tl_load(tl, own));
        for (int64_t s = 0; s < P - 1; s++) {
            int64_t c = mod(r - s - 1, P);
            struct tl_tensor *mine = piece_of(tl, x, n, P, c, q, piece);
            if (!mine)
                continue;
            tile_name(tile, sizeof(tile), (const char *const[]){pre, dot, "reduce_scatter"}, s);
            tl_set_tile(tl, tile);
            struct tl_tensor *in = tl_ipcq_recv(tl);
            uint64_t mark = tl_tcm_mark(tl);
            struct tl_tensor *sum = tl_add(tl, tl_load(tl, mine), tl_load(tl, in));
            if (s < P - 2) {
                tl_wait(tl, tl_ipcq_send(tl, right, sum));
                tl_tcm_release(tl, mark);
            } else {
                cur = sum; /* the full sum of chunk r + 1: kept for the all-gather */
                tl_store(tl, piece_of(tl, out, n, P, c, q, piece), cur);
            }
        }
        if (first)
            tl_wait(tl, first);

        /* all-gather: the full chunks travel round the ring */
        struct tl_tensor *sent = cur ? tl_ipcq_send(tl, right, cur) : NULL;
        for (int64_t s = 0; s < P - 1; s++) {
            int64_t c = mod(r - s, P);
            struct tl_tensor *dst = piece_of(tl, out, n, P, c, q, piece);
            if (!dst)
                continue;
            tile_name(tile, sizeof(tile), (const char *const[]){pre, dot, "all_gather"}, s);
            tl_set_tile(tl, tile);
            struct tl_tensor *in = tl_ipcq_recv(tl);
            uint64_t mark = tl_tcm_mark(tl);
            struct tl_tensor *got = tl_load(tl, in);
            tl_store(tl, dst, got);
            if (s < P - 2)
                tl_wait(tl, tl_ipcq_send(tl, right, got));
            tl_tcm_release(tl, mark);
        }
        if (sent)
            tl_wait(tl, sent);
        tl_tcm_release(tl, round_mark);
    }
}

static void allreduce_ring(struct tl *tl, const struct kargs *a)
{
    int64_t n = tl_arg_int(tl, a, N_ARG);
    if (sim_kutil_row_elems(tl, a, X_ARG) != n || sim_kutil_row_elems(tl, a, OUT_ARG) != n)
        tl_fail(tl, "x and out must have rows of n = %lld elements", (long long)n);
    int64_t rows, row0 = sim_kutil_my_rows(tl, a, X_ARG, &rows);
    if (rows != 1)
        tl_fail(tl, "x must hold one row per PE, this PE has %lld", (long long)rows);
    struct tl_tensor *x = tl_reshape(tl, sim_kutil_rows(tl, a, X_ARG, row0, 1), 1, &n);
    struct tl_tensor *out = tl_reshape(tl, sim_kutil_rows(tl, a, OUT_ARG, row0, 1), 1, &n);
    tl_marker(tl, "allreduce.reduce_scatter");
    sim_kutil_allreduce(tl, x, out, n, NULL);
    tl_set_tile(tl, NULL);
    tl_marker(tl, "allreduce.end");
}

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16, SIM_I32};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int rc;
    if ((rc = sim_kutil_at_least(p, "n", 1, d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0 ||
        (rc = sim_kutil_pes(b, p, d)) < 0)
        return rc;
    int64_t P = rc, n = sim_kparams_int(p, "n");
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    bool fl = sim_dtype_is_float(dt);
    int64_t shape[2] = {P, n};
    if ((rc = sim_kutil_tensor(b, "x", dt, 2, shape, SIM_KFILL_RANDOM, fl ? -1 : -100, fl ? 1 : 100,
                               true, false, d)) < 0 ||
        (rc = sim_kutil_tensor(b, "out", dt, 2, shape, SIM_KFILL_ZERO, 0, 0, true, true, d)) < 0)
        return rc;
    sim_kbuild_int(b, n);
    return 0;
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "allreduce_ring", 2, 1, d);
    if (rc < 0)
        return rc;
    const struct sim_tensor *x = r->args[X_ARG].t;
    if (x->ndim != 2 || sim_tensor_numel(r->args[OUT_ARG].t) != sim_tensor_numel(x) ||
        x->shape[1] != r->args[N_ARG].i)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "allreduce_ring reference: x and out must be P x n alike");
    sim_kref_allreduce(x, r->args[OUT_ARG].t);
    return 0;
}

static const struct sim_kparam params[] = {
    {"n", SIM_KP_INT, "1024", "elements of each PE's vector"},
    {"pes", SIM_KP_INT, "0", "PEs in the ring (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32", "element type: f32, f16, bf16, i32"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_karg_desc args[] = {
    {"x", SIM_KARG_TENSOR, "dtype", "P x n, a row per PE", NULL},
    {"out", SIM_KARG_TENSOR, "dtype", "P x n, a row per PE", NULL},
    {"n", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_allreduce_ring = {
    .name = "allreduce_ring",
    .summary = "ring all-reduce (reduce-scatter, all-gather) of a vector per PE over IPCQ",
    .args = args,
    .fn = allreduce_ring,
    .params = params,
    .setup = setup,
    .reference = reference,
};

void sim_kref_allreduce(const struct sim_tensor *x, struct sim_tensor *out)
{
    /* the ring's order: chunk c starts on PE c and collects PE c + 1, c + 2, ... in turn,
     * each partial sum rounded to the dtype (the adds run in it) */
    int64_t P = x->shape[0], n = (int64_t)sim_tensor_numel(x) / P;
    for (int64_t c = 0; c < P; c++)
        for (int64_t i = c * n / P; i < (c + 1) * n / P; i++) {
            double s = sim_tensor_get(x, (size_t)(c * n + i));
            for (int64_t j = 1; j < P; j++) /* round to nearest, as the add does */
                s = sim_kutil_round(x->dtype,
                                    s + sim_tensor_get(x, (size_t)(mod(c + j, P) * n + i)));
            for (int64_t r = 0; r < P; r++)
                sim_tensor_set(out, (size_t)(r * n + i), s);
        }
}

/* b = the three parts, "_" and s (>= 0), cut to size like snprintf: the tile name of a
 * step, made at every step of every all-reduce, so concatenated rather than printed. */
static void tile_name(char *b, size_t size, const char *const part[3], int64_t s)
{
    char digits[24];
    size_t k = 0, n = 0;
    do
        digits[k++] = (char)('0' + s % 10);
    while ((s /= 10) > 0 && k < sizeof(digits));
    for (size_t i = 0; i < 4; i++)
        for (const char *q = i < 3 ? part[i] : "_"; *q && n + 1 < size; q++)
            b[n++] = *q;
    while (k > 0 && n + 1 < size)
        b[n++] = digits[--k];
    b[n] = '\0';
}
