/*
 * llm_decode: a decoder-only transformer (Llama-style: RMSNorm, multi-head attention with
 * optional grouped-query KV heads, a gated MLP) running a prompt (prefill) and then
 * generating tokens (decode), each layer spread over the launch's PEs (tensor parallel).
 *
 * Tensor parallel, Megatron style: rank r of R owns attention heads [h0, h1) (and the KV
 * heads they read) and MLP columns [f0, f1), both split as evenly as they go (32 heads over
 * 24 PEs: 8 PEs with 2, 16 with 1; ff 11008 over 30 PEs: 28 with 367, 2 with 366). Every
 * rank holds the whole residual stream; per layer it computes its heads' attention and its
 * columns' MLP, whose partial sums (after the output projection and after the down
 * projection) are added across the ranks by the ring all-reduce over IPCQ
 * (sim_kutil_allreduce, the code of allreduce_ring). A rank's weight shards are in the HBM
 * of its own cube, per layer (the launch splits axis 1 of each weight).
 *
 * Per step (a chunk of the prompt, or one generated token) of m tokens at positions
 * t0 .. t0 + m - 1, the activations are feature-major (d x m: a column per token):
 *
 *   h   = rmsnorm(x)                      over d, in chunks of rows, cast to the dtype
 *   q_i = h^T Wq[l,i], k_g, v_g likewise   Wq, Wk, Wv per head d x dh (in x out), tiled
 *                                         over K = d; k, v appended to the KV cache
 *   o_i = softmax(q_i K^T / sqrt(dh) + causal mask) V   per head, over key blocks with a
 *                                         running max and sum (flash attention)
 *   x  += sum over ranks of sum_i Wo[l,i] o_i            Wo per head d x dh (out x in),
 *                                         tiled over N = d; all-reduce
 *   h   = rmsnorm(x)
 *   g   = silu(W1 h) * (W3 h)              W1, W3 f x d (out x in), tiled over N = f
 *   x  += sum over ranks of W2^T g         W2 f x d (in x out), tiled over K = f; all-reduce
 *
 * The prompt is processed in chunks of m tokens (as many as the TCM allows, a single chunk
 * for short prompts) with causal attention inside a chunk; then each generated token is a
 * step of its own whose input is the previous position's output rounded to the dtype (no
 * sampling: choosing a token would branch on a compute result, which phase 1 does not have,
 * ADR-0020 D3). After the last layer rank 0 writes the step's hidden states to out (a
 * chunk's columns become rows through a GEMM with the identity).
 *
 * What it reports (rank 0): a TOKEN_EVENT per step (tl_token_begin / tl_token_end: PREFILL
 * for a chunk of the prompt, token_index its first position; DECODE for a generated token),
 * a MARKER_EVENT "layerL" at the start of every layer of every step and "PREFILL_DONE"
 * after the prompt; every rank's ops carry layer_id "layerL" and tile_id "tokT.attn" /
 * "tokT.mlp" (T the step's first position).
 *
 * Arguments: prompt (P x d), wq (L x H x d x dh), wk, wv (L x KV x d x dh),
 * wo (L x H x d x dh), w1, w3, w2 (L x ff x d), kcache, vcache (L x KV x T x dh),
 * work (R x (5 d M + T), f32), hwork (R x d M), out (T x d): tensors (weights and caches
 * split over the ranks on axis 1, work and hwork a row per rank; M the most tokens per step
 * the scratch holds); layers, heads, kv_heads, prompt_len, gen: i32; eps: f32. T = P + gen.
 * Weights, caches, hwork and out are of the dtype (f32, f16, bf16): GEMMs run on it, accumulating
 * in f32; everything else runs in f32.
 */
#include "sim/kernels/kernels.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    PROMPT_ARG,
    WQ_ARG,
    WK_ARG,
    WV_ARG,
    WO_ARG,
    W1_ARG,
    W3_ARG,
    W2_ARG,
    KC_ARG,
    VC_ARG,
    WORK_ARG,
    HWORK_ARG,
    OUT_ARG,
    LAYERS_ARG,
    HEADS_ARG,
    KV_HEADS_ARG,
    PROMPT_LEN_ARG,
    GEN_ARG,
    EPS_ARG,
    N_ARGS,
};

/* Tokens per step at most (the prompt's chunks), and regions of a rank's work row: five of
 * d x M (the residual x^T, the two partial sums, the all-reduced sum, the step's hidden
 * states as rows), then the positions 0 .. T-1 (for the causal mask and the identity). */
enum { MAX_STEP = 64, BLOCK = 8 };
enum { R_XT, R_PA, R_PM, R_SUM, R_XROWS, N_REGIONS, R_POS = N_REGIONS };

/* The shape of a run and this rank's share of it. */
struct llm_shape {
    int64_t L, D, H, KV, dh, F, P, G, T;
    int64_t R, r;
    int64_t h0, h1; /* q heads */
    int64_t g0, g1; /* KV heads their queries read */
    int64_t f0, f1; /* MLP columns */
    int64_t mcap;   /* tokens per step the work rows hold */
};

/* Rank r's heads, KV heads and columns. */
static void shape_rank(struct llm_shape *s, int64_t r)
{
    s->r = r;
    sim_kutil_split(s->H, s->R, r, &s->h0, &s->h1);
    int64_t grp = s->H / s->KV;
    s->g0 = s->h1 > s->h0 ? s->h0 / grp : 0;
    s->g1 = s->h1 > s->h0 ? (s->h1 - 1) / grp + 1 : 0;
    sim_kutil_split(s->F, s->R, r, &s->f0, &s->f1);
}

static uint64_t al(uint64_t n)
{
    return (n + 63) / 64 * 64;
}

/*
 * TCM a step of m tokens needs: the largest of its phases, with the weights in blocks of
 * `rows` rows (1: the tightest a step can run in; more leaves the blocks room, so that a
 * long prompt is not cut into chunks so large that the weights go through in slivers). nh,
 * ng, nf: the most heads, KV heads and MLP columns of any rank.
 */
static uint64_t step_need(const struct llm_shape *s, int64_t m, int64_t nh, int64_t ng, int64_t nf,
                          size_t ds, int64_t rows)
{
    uint64_t D = (uint64_t)s->D, dh = (uint64_t)s->dh, M = (uint64_t)m;
    uint64_t mdh4 = al(M * dh * 4), mdhs = al(M * dh * ds), m4 = al(M * 4);
    uint64_t rd = (uint64_t)(rows < s->D ? rows : s->D), rf = (uint64_t)(rows < nf ? rows : nf);
    rf = rf ? rf : 1;
    /* q, k, v: accumulators, the casts kept for the attention, a block of h and weights */
    uint64_t qkv = (uint64_t)(nh + 2 * ng) * (mdh4 + mdhs) + al(rd * M * ds) +
                   (uint64_t)(nh + 2 * ng) * al(rd * dh * ds) + mdh4;
    /* attention: the queries, the outputs, one head's accumulator and running values, a
     * one-key block */
    uint64_t attn = (uint64_t)nh * mdhs * 2 + mdh4 + 4 * m4 + 12 * m4 + 2 * al(dh * ds) + mdh4;
    /* output projection: the head outputs, a block of wo for each head */
    uint64_t wo = (uint64_t)nh * mdhs + (uint64_t)nh * al(rd * dh * ds) + 3 * al(rd * M * 4);
    /* MLP: h, the accumulator and a product (d x m), a block of each weight, temporaries */
    uint64_t mlp = al(D * M * ds) + 2 * al(D * M * 4) + 3 * al(rf * D * ds) + 6 * al(rf * M * 4);
    /* a chunk's columns to rows and back: x^T, x, the identity, the cast */
    uint64_t io = 2 * al(D * M * 4) + al(D * M * ds) + 4 * al(M * M * 4) + 2 * m4;
    uint64_t need = qkv;
    need = attn > need ? attn : need;
    need = wo > need ? wo : need;
    need = mlp > need ? mlp : need;
    return io > need ? io : need;
}

/* The most heads, KV heads and MLP columns any rank has. */
static void max_share(const struct llm_shape *s, int64_t *nh, int64_t *ng, int64_t *nf)
{
    struct llm_shape t = *s;
    *nh = *ng = *nf = 0;
    for (int64_t r = 0; r < s->R; r++) {
        shape_rank(&t, r);
        *nh = t.h1 - t.h0 > *nh ? t.h1 - t.h0 : *nh;
        *ng = t.g1 - t.g0 > *ng ? t.g1 - t.g0 : *ng;
        *nf = t.f1 - t.f0 > *nf ? t.f1 - t.f0 : *nf;
    }
}

/* ---- the kernel ------------------------------------------------------------------------ */

/* This PE's shards of a tensor argument, in order of their offsets (elements). */
struct shard_index {
    bool made;
    size_t n;
    uint64_t *first, *len;
    struct tl_tensor **t;
};

struct llm {
    struct shard_index shards[N_ARGS];
    struct tl *tl;
    const struct kargs *a;
    struct llm_shape s;
    enum sim_dtype dt;
    size_t ds;
    struct tl_tensor *work, *hwork;              /* this rank's rows (HBM, 1-d) */
    struct tl_tensor *eps, *scale, *inv_d, *neg; /* f32 constants */
    struct tl_tensor **q, **o;                   /* per head of this rank, during a layer */
};

/* Elements [off, off + numel(shape)) of region reg of this rank's work row. */
static struct tl_tensor *work(struct llm *m, int reg, uint64_t off, unsigned ndim,
                              const int64_t *shape)
{
    uint64_t base = (uint64_t)reg * (uint64_t)(m->s.D * m->s.mcap);
    return tl_view(m->tl, m->work, base + off, ndim, shape);
}

/* Rows [r0, r0 + n) of a d x k feature-major region (k columns, the step's tokens). */
static struct tl_tensor *work_rows(struct llm *m, int reg, int64_t k, int64_t r0, int64_t n)
{
    int64_t shape[2] = {n, k};
    return work(m, reg, (uint64_t)(r0 * k), 2, shape);
}

static struct tl_tensor *hwork_rows(struct llm *m, int64_t k, int64_t r0, int64_t n)
{
    int64_t shape[2] = {n, k};
    return tl_view(m->tl, m->hwork, (uint64_t)(r0 * k), 2, shape);
}

static struct tl_tensor *to_dt(struct llm *m, struct tl_tensor *t)
{
    return tl_dtype(t) == m->dt ? t : tl_cast(m->tl, t, m->dt);
}

static struct tl_tensor *to_f32(struct llm *m, struct tl_tensor *t)
{
    return tl_dtype(t) == SIM_F32 ? t : tl_cast(m->tl, t, SIM_F32);
}

/* This PE's shards of argument i as flat HBM tensors, for mat_rows: made once, before the
 * kernel opens any TCM scope, so that the handles live as long as the kernel. */
static struct shard_index *shards_of(struct llm *m, size_t i)
{
    struct shard_index *x = &m->shards[i];
    if (x->made)
        return x;
    x->made = true;
    const struct karg *k = &m->a->v[i];
    if (k->mine < 0)
        return x;
    size_t ds = sim_dtype_size(k->dtype), n = 0;
    while ((size_t)k->mine + n < k->n_shards && k->shards[k->mine + n].sip == m->a->sip &&
           k->shards[k->mine + n].cube == m->a->cube && k->shards[k->mine + n].pe == m->a->pe)
        n++;
    x->n = n;
    x->first = (uint64_t *)tl_kernel_alloc(m->tl, n * sizeof(uint64_t));
    x->len = (uint64_t *)tl_kernel_alloc(m->tl, n * sizeof(uint64_t));
    x->t = tl_kernel_alloc(m->tl, n * sizeof(*x->t));
    for (size_t j = 0; j < n; j++) {
        const struct kshard *sh = &k->shards[(size_t)k->mine + j];
        int64_t elems = (int64_t)(sh->nbytes / ds);
        x->first[j] = sh->offset_bytes / ds;
        x->len[j] = (uint64_t)elems;
        x->t[j] = tl_reshape(m->tl, tl_arg_shard(m->tl, m->a, i, (size_t)k->mine + j), 1, &elems);
    }
    return x;
}

/* Rows [r0, r0 + n) of the (rows x cols) matrix `mat` of weight or cache argument i (its
 * matrices one after the other), as an HBM tensor: from this PE's shard that holds them,
 * else from any shard (sim_kutil_slab). */
static struct tl_tensor *mat_rows(struct llm *m, size_t i, int64_t mat, int64_t rows, int64_t cols,
                                  int64_t r0, int64_t n)
{
    int64_t shape[2] = {n, cols};
    uint64_t off = (uint64_t)((mat * rows + r0) * cols), len = (uint64_t)(n * cols);
    const struct shard_index *x = shards_of(m, i);
    /* the shards are in order of their offsets: the last one starting at or before off */
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->first[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && off + len <= x->first[lo - 1] + x->len[lo - 1])
        return tl_view(m->tl, x->t[lo - 1], off - x->first[lo - 1], 2, shape);
    return sim_kutil_slab(m->tl, m->a, i, off, 2, shape);
}

/* dst = src (copy) on the first use, dst + src after: a running accumulator in TCM. */
static struct tl_tensor *accumulate(struct tl *tl, struct tl_tensor *dst, struct tl_tensor *src,
                                    bool first)
{
    const struct tl_tensor *in[2] = {dst, src};
    return first ? tl_math_into(tl, dst, "copy", 1, &in[1], false, 0)
                 : tl_math_into(tl, dst, "add", 2, in, false, 0);
}

/* The largest n <= most whose per-unit bytes (plus fixed) fit what the TCM has left. */
static int64_t fit(struct tl *tl, uint64_t fixed, uint64_t per_unit, int64_t most)
{
    uint64_t avail = tl_tcm_avail(tl);
    if (avail <= fixed)
        return 0;
    int64_t n = (int64_t)((avail - fixed) / (per_unit ? per_unit : 1));
    return n < most ? n : most;
}

/* Positions [p0, p0 + n) (f32) as an HBM tensor of the given shape. */
static struct tl_tensor *positions(struct llm *m, int64_t p0, unsigned ndim, const int64_t *shape)
{
    return work(m, R_POS, (uint64_t)p0, ndim, shape);
}

/* Write the positions 0 .. T-1 into the work row: 0, then each stretch [n, 2n) is [0, n)
 * plus n (log2 T steps, not an op per element). */
static void make_positions(struct llm *m)
{
    struct tl *tl = m->tl;
    int64_t T = m->s.T, one = 1;
    uint64_t mark = tl_tcm_mark(tl);
    tl_store(tl, positions(m, 0, 1, &one), tl_const(tl, 0, SIM_F32));
    for (int64_t n = 1; n < T; n *= 2) {
        int64_t len = T - n < n ? T - n : n;
        struct tl_tensor *t = tl_load(tl, positions(m, 0, 1, &len));
        tl_store(tl, positions(m, n, 1, &len), tl_add(tl, t, tl_const(tl, (double)n, SIM_F32)));
        tl_tcm_release(tl, mark);
    }
}

/* The identity (k x k, f32) from the positions: eq(pos[0..k) as a row, as a column). */
static struct tl_tensor *identity(struct llm *m, int64_t k)
{
    struct tl *tl = m->tl;
    int64_t row[2] = {1, k}, col[2] = {k, 1};
    struct tl_tensor *a = tl_load(tl, positions(m, 0, 2, row));
    struct tl_tensor *b = tl_load(tl, positions(m, 0, 2, col));
    const struct tl_tensor *in[2] = {a, b};
    return tl_math(tl, "eq", 2, in, false, 0, SIM_F32);
}

/* The step's input into x^T: prompt rows t0.. (m of them), or the previous position's
 * output (src: its f32 hidden state) rounded to the dtype. */
static void step_input(struct llm *m, int64_t t0, int64_t k, const struct tl_tensor *src)
{
    struct tl *tl = m->tl;
    uint64_t mark = tl_tcm_mark(tl);
    int64_t D = m->s.D, xt[2] = {D, k};
    struct tl_tensor *x;
    if (src) {
        x = to_f32(m, to_dt(m, tl_load(tl, src))); /* what out holds */
    } else {
        x = to_f32(m, tl_load(tl, sim_kutil_rows(tl, m->a, PROMPT_ARG, t0, k)));
        if (k > 1) /* rows to columns: x^T = x^T I */
            x = tl_dot_ex(tl, x, identity(m, k), true, false, SIM_F32);
    }
    tl_store(tl, work(m, R_XT, 0, 2, xt), x);
    tl_tcm_release(tl, mark);
}

/* hwork = rmsnorm(x^T) in the dtype: the sum of squares over the d rows in blocks, then
 * the scaled blocks (one pass when x^T fits at once). */
static void norm(struct llm *m, int64_t k)
{
    struct tl *tl = m->tl;
    int64_t D = m->s.D, one[2] = {1, k};
    uint64_t mark = tl_tcm_mark(tl);
    struct tl_tensor *ss = tl_tcm_tensor(tl, SIM_F32, 2, one);
    /* a block's allocations per row: x, its square, the scaled row, its cast */
    int64_t rb =
        fit(tl, 8 * al((uint64_t)k * 4), 3 * (uint64_t)k * 4 + (uint64_t)k * m->ds + 256, D);
    if (rb < 1)
        tl_fail(tl, "rmsnorm: no room in the TCM for a row of %lld tokens", (long long)k);
    struct tl_tensor *whole = NULL;
    for (int64_t r0 = 0; r0 < D; r0 += rb) {
        int64_t n = D - r0 < rb ? D - r0 : rb;
        uint64_t bmark = tl_tcm_mark(tl);
        struct tl_tensor *t = tl_load(tl, work_rows(m, R_XT, k, r0, n));
        ss = accumulate(tl, ss, tl_sum(tl, tl_mul(tl, t, t), 0), r0 == 0);
        if (n == D)
            whole = t; /* kept for the second pass */
        else
            tl_tcm_release(tl, bmark);
    }
    struct tl_tensor *r = tl_rsqrt(tl, tl_add(tl, tl_mul(tl, ss, m->inv_d), m->eps));
    for (int64_t r0 = 0; r0 < D; r0 += rb) {
        int64_t n = D - r0 < rb ? D - r0 : rb;
        uint64_t bmark = tl_tcm_mark(tl);
        struct tl_tensor *t = whole ? whole : tl_load(tl, work_rows(m, R_XT, k, r0, n));
        tl_store(tl, hwork_rows(m, k, r0, n), to_dt(m, tl_mul(tl, t, r)));
        tl_tcm_release(tl, bmark);
    }
    tl_tcm_release(tl, mark);
}

/* x^T += the all-reduced partial sums of region reg, in blocks of rows (tile: the step's
 * tile id, which the all-reduce's steps extend and this restores). */
static void residual(struct llm *m, int reg, int64_t k, const char *tile)
{
    struct tl *tl = m->tl;
    int64_t D = m->s.D, n = D * k;
    sim_kutil_allreduce(tl, work(m, reg, 0, 1, &n), work(m, R_SUM, 0, 1, &n), n, tile);
    tl_set_tile(tl, tile);
    int64_t rb = fit(tl, 0, 3 * (uint64_t)k * 4 + 192, D);
    if (rb < 1)
        tl_fail(tl, "no room in the TCM for a row of %lld tokens", (long long)k);
    for (int64_t r0 = 0; r0 < D; r0 += rb) {
        int64_t rows = D - r0 < rb ? D - r0 : rb;
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *x = tl_load(tl, work_rows(m, R_XT, k, r0, rows));
        struct tl_tensor *y = tl_load(tl, work_rows(m, R_SUM, k, r0, rows));
        tl_store(tl, work_rows(m, R_XT, k, r0, rows), tl_add(tl, x, y));
        tl_tcm_release(tl, mark);
    }
}

/* q, k, v of this rank's heads: h^T W over K = d in blocks (each block of h loaded once
 * for every head); k and v go to the cache rows t0.., the queries stay in TCM (m->q). */
static void qkv(struct llm *m, int64_t l, int64_t t0, int64_t k)
{
    struct tl *tl = m->tl;
    const struct llm_shape *s = &m->s;
    int64_t nh = s->h1 - s->h0, ng = s->g1 - s->g0, nacc = nh + 2 * ng, D = s->D, dh = s->dh;
    int64_t shape[2] = {k, dh};
    struct tl_tensor **acc = tl_kernel_alloc(tl, (size_t)(nacc ? nacc : 1) * sizeof(*acc));
    for (int64_t i = 0; i < nacc; i++)
        acc[i] = tl_tcm_tensor(tl, SIM_F32, 2, shape);
    /* a block: h's rows and every head's weight rows (loaded at once, the DMA channels in
     * parallel), a product */
    uint64_t per = (uint64_t)k * m->ds + (uint64_t)(nacc * dh) * m->ds + 64 * (uint64_t)(nacc + 1);
    int64_t kb =
        fit(tl, 2 * al((uint64_t)(k * dh) * 4) + (uint64_t)nacc * al((uint64_t)(k * dh) * m->ds),
            per, D);
    if (kb < 1)
        tl_fail(tl, "q, k, v: no room in the TCM for a block of %lld tokens", (long long)k);
    struct tl_tensor **w = tl_kernel_alloc(tl, (size_t)(nacc ? nacc : 1) * sizeof(*w));
    for (int64_t k0 = 0; k0 < D; k0 += kb) {
        int64_t n = D - k0 < kb ? D - k0 : kb;
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *h = tl_load_async(tl, hwork_rows(m, k, k0, n));
        for (int64_t i = 0; i < nacc; i++) {
            size_t arg = i < nh ? WQ_ARG : i < nh + ng ? WK_ARG : WV_ARG;
            int64_t head = i < nh ? s->h0 + i : s->g0 + (i - nh) % ng;
            int64_t heads = i < nh ? s->H : s->KV;
            w[i] = tl_load_async(tl, mat_rows(m, arg, l * heads + head, D, dh, k0, n));
        }
        for (int64_t i = 0; i < nacc; i++) {
            uint64_t pmark = tl_tcm_mark(tl);
            acc[i] = accumulate(tl, acc[i], tl_dot_ex(tl, h, w[i], true, false, SIM_F32), k0 == 0);
            tl_tcm_release(tl, pmark);
        }
        tl_tcm_release(tl, mark);
    }
    for (int64_t i = nh; i < nacc; i++) { /* k and v join the caches */
        uint64_t mark = tl_tcm_mark(tl);
        int64_t g = s->g0 + (i - nh) % ng;
        tl_store(tl, mat_rows(m, i < nh + ng ? KC_ARG : VC_ARG, l * s->KV + g, s->T, dh, t0, k),
                 to_dt(m, acc[i]));
        tl_tcm_release(tl, mark);
    }
    for (int64_t i = 0; i < nh; i++)
        m->q[i] = to_dt(m, acc[i]);
}

/* Attention of this rank's heads over keys 0 .. t0 + k - 1, in blocks of keys with a
 * running max and sum per query (flash attention); the outputs o_i^T (dh x k) stay in TCM
 * (m->o), in the dtype. */
static void attention(struct llm *m, int64_t l, int64_t t0, int64_t k)
{
    struct tl *tl = m->tl;
    const struct llm_shape *s = &m->s;
    int64_t nh = s->h1 - s->h0, dh = s->dh, n = t0 + k, grp = s->H / s->KV;
    int64_t col[2] = {k, 1}, row[2] = {1, k}, ot[2] = {dh, k};
    for (int64_t i = 0; i < nh; i++)
        m->o[i] = tl_tcm_tensor(tl, m->dt, 2, ot);
    for (int64_t i = 0; i < nh; i++) {
        int64_t head = s->h0 + i, g = head / grp, kv = l * s->KV + g;
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *acc = tl_tcm_tensor(tl, SIM_F32, 2, ot);
        struct tl_tensor *mx = tl_tcm_tensor(tl, SIM_F32, 2, col);
        struct tl_tensor *sum = tl_tcm_tensor(tl, SIM_F32, 2, col);
        /* a block of keys: K and V rows, scores and their temporaries (per key: k each) */
        uint64_t per = 2 * (uint64_t)dh * m->ds + 10 * (uint64_t)k * 4 + (uint64_t)k * m->ds + 64;
        int64_t nb = fit(tl, 16 * al((uint64_t)k * 4) + 2 * al((uint64_t)(dh * k) * 4), per, n);
        if (nb < 1)
            tl_fail(tl, "attention: no room in the TCM for a key block");
        for (int64_t j0 = 0; j0 < n; j0 += nb) {
            int64_t len = n - j0 < nb ? n - j0 : nb;
            uint64_t bmark = tl_tcm_mark(tl);
            struct tl_tensor *K = tl_load_async(tl, mat_rows(m, KC_ARG, kv, s->T, dh, j0, len));
            struct tl_tensor *V = tl_load_async(tl, mat_rows(m, VC_ARG, kv, s->T, dh, j0, len));
            struct tl_tensor *sc =
                tl_mul(tl, tl_dot_ex(tl, m->q[i], K, false, true, SIM_F32), m->scale);
            if (j0 + len > t0 + 1) { /* keys after a query's position: masked */
                int64_t kr[2] = {1, len};
                struct tl_tensor *kp = tl_load(tl, positions(m, j0, 2, kr));
                struct tl_tensor *qp = tl_load(tl, positions(m, t0, 2, col));
                const struct tl_tensor *cmp[2] = {kp, qp};
                sc = tl_where(tl, tl_math(tl, "gt", 2, cmp, false, 0, SIM_F32), m->neg, sc);
            }
            if (j0 == 0) {
                mx = tl_math_into(tl, mx, "max", 1, (const struct tl_tensor *[]){sc}, true, -1);
                struct tl_tensor *e = tl_exp(tl, tl_sub(tl, sc, mx));
                sum = tl_math_into(tl, sum, "sum", 1, (const struct tl_tensor *[]){e}, true, -1);
                acc = accumulate(tl, acc, tl_dot_ex(tl, V, to_dt(m, e), true, true, SIM_F32), true);
            } else {
                struct tl_tensor *mn = tl_maximum(tl, mx, tl_max(tl, sc, -1));
                struct tl_tensor *alpha = tl_exp(tl, tl_sub(tl, mx, mn));
                struct tl_tensor *e = tl_exp(tl, tl_sub(tl, sc, mn));
                sum = tl_math_into(
                    tl, sum, "add", 2,
                    (const struct tl_tensor *[]){tl_mul(tl, sum, alpha), tl_sum(tl, e, -1)}, false,
                    0);
                struct tl_tensor *pv = tl_dot_ex(tl, V, to_dt(m, e), true, true, SIM_F32);
                struct tl_tensor *scaled = tl_mul(tl, acc, tl_reshape(tl, alpha, 2, row));
                acc = tl_math_into(tl, acc, "add", 2, (const struct tl_tensor *[]){scaled, pv},
                                   false, 0);
                mx = tl_math_into(tl, mx, "copy", 1, (const struct tl_tensor *[]){mn}, false, 0);
            }
            tl_tcm_release(tl, bmark);
        }
        /* normalised into the head's output (allocated below the head's work) */
        const struct tl_tensor *in[2] = {acc, tl_reshape(tl, sum, 2, row)};
        m->o[i] = tl_math_into(tl, m->o[i], "div", 2, in, false, 0);
        tl_tcm_release(tl, mark);
    }
}

/* The output projection of this rank's heads: partial^T = sum_i Wo[l,i] o_i^T (d x k), in
 * blocks of rows of Wo (N = d), into region R_PA. */
static void out_proj(struct llm *m, int64_t l, int64_t k)
{
    struct tl *tl = m->tl;
    const struct llm_shape *s = &m->s;
    int64_t nh = s->h1 - s->h0, D = s->D, dh = s->dh;
    if (nh == 0)
        return; /* no heads here: the partial sum stays zero */
    /* a block: every head's rows of wo (loaded at once), the accumulator and a product */
    uint64_t per = (uint64_t)(nh * dh) * m->ds + 2 * (uint64_t)k * 4 + 64 * (uint64_t)(nh + 2);
    int64_t nb = fit(tl, 0, per, D);
    if (nb < 1)
        tl_fail(tl, "output projection: no room in the TCM for a row of wo");
    struct tl_tensor **w = tl_kernel_alloc(tl, (size_t)nh * sizeof(*w));
    for (int64_t n0 = 0; n0 < D; n0 += nb) {
        int64_t n = D - n0 < nb ? D - n0 : nb, shape[2] = {n, k};
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *acc = tl_tcm_tensor(tl, SIM_F32, 2, shape);
        for (int64_t i = 0; i < nh; i++)
            w[i] = tl_load_async(tl, mat_rows(m, WO_ARG, l * s->H + s->h0 + i, D, dh, n0, n));
        for (int64_t i = 0; i < nh; i++) {
            uint64_t pmark = tl_tcm_mark(tl);
            acc = accumulate(tl, acc, tl_dot(tl, w[i], m->o[i]), i == 0);
            tl_tcm_release(tl, pmark);
        }
        tl_store(tl, work_rows(m, R_PA, k, n0, n), acc);
        tl_tcm_release(tl, mark);
    }
}

/* The MLP of this rank's columns: g = silu(W1 h) * (W3 h) per block of columns (N = ff),
 * then partial^T += W2^T g (K = ff), into region R_PM. */
static void mlp(struct llm *m, int64_t l, int64_t k)
{
    struct tl *tl = m->tl;
    const struct llm_shape *s = &m->s;
    int64_t nf = s->f1 - s->f0, D = s->D, dk[2] = {D, k};
    if (nf == 0)
        return; /* no columns here: the partial sum stays zero */
    uint64_t mark = tl_tcm_mark(tl);
    struct tl_tensor *h = tl_load(tl, hwork_rows(m, k, 0, D));
    struct tl_tensor *acc = tl_tcm_tensor(tl, SIM_F32, 2, dk);
    /* a block: a product (d x k), rows of w1, w3, w2, its temporaries (k per row) */
    uint64_t per = 3 * (uint64_t)D * m->ds + 6 * (uint64_t)k * 4 + (uint64_t)k * m->ds + 448;
    int64_t nb = fit(tl, al((uint64_t)(D * k) * 4), per, nf);
    if (nb < 1)
        tl_fail(tl, "MLP: no room in the TCM for a row of w1");
    for (int64_t j0 = 0; j0 < nf; j0 += nb) {
        int64_t n = nf - j0 < nb ? nf - j0 : nb, col = s->f0 + j0;
        uint64_t bmark = tl_tcm_mark(tl);
        /* the three weights' rows at once, the DMA channels in parallel */
        struct tl_tensor *w1 = tl_load_async(tl, mat_rows(m, W1_ARG, l, s->F, D, col, n));
        struct tl_tensor *w3 = tl_load_async(tl, mat_rows(m, W3_ARG, l, s->F, D, col, n));
        struct tl_tensor *w2 = tl_load_async(tl, mat_rows(m, W2_ARG, l, s->F, D, col, n));
        struct tl_tensor *u1 = tl_dot(tl, w1, h), *u3 = tl_dot(tl, w3, h);
        struct tl_tensor *g = to_dt(m, tl_mul(tl, tl_silu(tl, u1), u3));
        acc = accumulate(tl, acc, tl_dot_ex(tl, w2, g, true, false, SIM_F32), j0 == 0);
        tl_tcm_release(tl, bmark);
    }
    tl_store(tl, work_rows(m, R_PM, k, 0, D), acc);
    tl_tcm_release(tl, mark);
}

/* After the last layer: the step's hidden states as rows (x = (x^T)^T, through a GEMM with
 * the identity for a chunk), kept in R_XROWS for the next step's input; rank 0 also writes
 * them, in the dtype, to out rows t0... */
static void step_output(struct llm *m, int64_t t0, int64_t k)
{
    struct tl *tl = m->tl;
    int64_t D = m->s.D, rows[2] = {k, D};
    uint64_t mark = tl_tcm_mark(tl);
    struct tl_tensor *x = tl_load(tl, work_rows(m, R_XT, k, 0, D));
    x = k > 1 ? tl_dot_ex(tl, identity(m, k), x, false, true, SIM_F32) : tl_reshape(tl, x, 2, rows);
    tl_store(tl, work(m, R_XROWS, 0, 2, rows), x);
    if (m->s.r == 0)
        tl_store(tl, sim_kutil_rows(tl, m->a, OUT_ARG, t0, k), to_dt(m, x));
    tl_tcm_release(tl, mark);
}

/* One step: the layers over tokens t0 .. t0 + k - 1. */
static void step(struct llm *m, int64_t t0, int64_t k)
{
    struct tl *tl = m->tl;
    char name[48];
    for (int64_t l = 0; l < m->s.L; l++) {
        /* the views a layer makes (its work regions, the all-reduce's) go with it */
        uint64_t layer_mark = tl_tcm_mark(tl);
        snprintf(name, sizeof(name), "layer%lld", (long long)l);
        if (m->s.r == 0)
            tl_marker(tl, name);
        tl_set_layer(tl, name);
        snprintf(name, sizeof(name), "tok%lld.attn", (long long)t0);
        tl_set_tile(tl, name);
        norm(m, k);
        uint64_t mark = tl_tcm_mark(tl);
        qkv(m, l, t0, k);
        attention(m, l, t0, k);
        out_proj(m, l, k);
        tl_tcm_release(tl, mark);
        residual(m, R_PA, k, name);
        snprintf(name, sizeof(name), "tok%lld.mlp", (long long)t0);
        tl_set_tile(tl, name);
        norm(m, k);
        mlp(m, l, k);
        residual(m, R_PM, k, name);
        tl_tcm_release(tl, layer_mark);
    }
    snprintf(name, sizeof(name), "tok%lld.output", (long long)t0);
    tl_set_tile(tl, name);
    step_output(m, t0, k);
    tl_set_layer(tl, NULL);
    tl_set_tile(tl, NULL);
}

static void expect_dims(struct tl *tl, const struct kargs *a, size_t i, const char *name,
                        unsigned nd, const int64_t *want)
{
    const struct karg *k = &a->v[i];
    bool ok = k->is_tensor && k->has_dtype && k->ndim == nd;
    for (unsigned d = 0; ok && d < nd; d++)
        ok = k->shape[d] == want[d];
    if (!ok) {
        char buf[96];
        tl_fail(tl, "%s must be %s", name, sim_shape_format(nd, want, buf, sizeof(buf)));
    }
}

static void llm_decode(struct tl *tl, const struct kargs *a)
{
    struct llm m = {.tl = tl, .a = a};
    struct llm_shape *s = &m.s;
    s->L = tl_arg_int(tl, a, LAYERS_ARG);
    s->H = tl_arg_int(tl, a, HEADS_ARG);
    s->KV = tl_arg_int(tl, a, KV_HEADS_ARG);
    s->P = tl_arg_int(tl, a, PROMPT_LEN_ARG);
    s->G = tl_arg_int(tl, a, GEN_ARG);
    s->T = s->P + s->G;
    s->D = sim_kutil_row_elems(tl, a, OUT_ARG);
    s->F = a->v[W1_ARG].ndim == 3 ? a->v[W1_ARG].shape[1] : 0;
    if (s->L < 1 || s->H < 1 || s->KV < 1 || s->H % s->KV || s->D % s->H || s->P < 1 || s->G < 0 ||
        s->F < 1)
        tl_fail(tl,
                "layers %lld, heads %lld, kv_heads %lld (d = %lld), prompt %lld, gen %lld: "
                "layers, heads, kv_heads and prompt must be >= 1, heads must divide d and "
                "kv_heads divide heads, gen >= 0",
                (long long)s->L, (long long)s->H, (long long)s->KV, (long long)s->D,
                (long long)s->P, (long long)s->G);
    s->dh = s->D / s->H;
    s->R = tl_nranks(tl);
    shape_rank(s, tl_rank(tl));
    int64_t L = s->L, D = s->D, dh = s->dh;
    expect_dims(tl, a, PROMPT_ARG, "prompt", 2, (int64_t[]){s->P, D});
    expect_dims(tl, a, WQ_ARG, "wq", 4, (int64_t[]){L, s->H, D, dh});
    expect_dims(tl, a, WK_ARG, "wk", 4, (int64_t[]){L, s->KV, D, dh});
    expect_dims(tl, a, WV_ARG, "wv", 4, (int64_t[]){L, s->KV, D, dh});
    expect_dims(tl, a, WO_ARG, "wo", 4, (int64_t[]){L, s->H, D, dh});
    expect_dims(tl, a, W1_ARG, "w1", 3, (int64_t[]){L, s->F, D});
    expect_dims(tl, a, W3_ARG, "w3", 3, (int64_t[]){L, s->F, D});
    expect_dims(tl, a, W2_ARG, "w2", 3, (int64_t[]){L, s->F, D});
    expect_dims(tl, a, KC_ARG, "kcache", 4, (int64_t[]){L, s->KV, s->T, dh});
    expect_dims(tl, a, VC_ARG, "vcache", 4, (int64_t[]){L, s->KV, s->T, dh});
    expect_dims(tl, a, OUT_ARG, "out", 2, (int64_t[]){s->T, D});
    m.dt = tl_dtype(tl_arg_shard(tl, a, OUT_ARG, 0));
    m.ds = sim_dtype_size(m.dt);
    int64_t wrows, w0 = sim_kutil_my_rows(tl, a, WORK_ARG, &wrows);
    int64_t hrows, h0 = sim_kutil_my_rows(tl, a, HWORK_ARG, &hrows);
    int64_t wlen = sim_kutil_row_elems(tl, a, WORK_ARG),
            hlen = sim_kutil_row_elems(tl, a, HWORK_ARG);
    s->mcap = hlen / D;
    if (wrows != 1 || hrows != 1 || s->mcap < 1 || wlen < N_REGIONS * D * s->mcap + s->T ||
        a->v[WORK_ARG].dtype != SIM_F32 || a->v[HWORK_ARG].dtype != m.dt)
        tl_fail(tl,
                "work (f32) and hwork (%s) must give each PE a row, of %d x d x M + T and d x M "
                "elements",
                sim_dtype_name(m.dt), N_REGIONS);
    m.work = tl_reshape(tl, sim_kutil_rows(tl, a, WORK_ARG, w0, 1), 1, &wlen);
    m.hwork = tl_reshape(tl, sim_kutil_rows(tl, a, HWORK_ARG, h0, 1), 1, &hlen);
    m.eps = tl_const(tl, tl_arg_float(tl, a, EPS_ARG), SIM_F32);
    m.scale = tl_const(tl, 1.0 / sqrt((double)dh), SIM_F32);
    m.inv_d = tl_const(tl, 1.0 / (double)D, SIM_F32);
    m.neg = tl_const(tl, -1e30, SIM_F32);
    int64_t nh = s->h1 - s->h0 > 0 ? s->h1 - s->h0 : 1;
    for (size_t i = WQ_ARG; i <= VC_ARG; i++)
        shards_of(&m, i);
    m.q = tl_kernel_alloc(tl, (size_t)nh * sizeof(*m.q));
    m.o = tl_kernel_alloc(tl, (size_t)nh * sizeof(*m.o));

    /* tokens per prefill step: as many as the TCM allows next to weight blocks of BLOCK
     * rows (every rank the same) */
    int64_t maxh, maxg, maxf, chunk = s->P < s->mcap ? s->P : s->mcap;
    max_share(s, &maxh, &maxg, &maxf);
    while (chunk > 1 && step_need(s, chunk, maxh, maxg, maxf, m.ds, BLOCK) > tl_tcm_avail(tl))
        chunk /= 2;

    tl_set_tile(tl, "positions");
    make_positions(&m);
    char tile[48];
    int64_t last = 0; /* tokens of the last step */
    for (int64_t t0 = 0; t0 < s->P; t0 += chunk) {
        int64_t k = s->P - t0 < chunk ? s->P - t0 : chunk;
        if (s->r == 0)
            tl_token_begin(tl, t0, false);
        snprintf(tile, sizeof(tile), "tok%lld.input", (long long)t0);
        tl_set_tile(tl, tile);
        step_input(&m, t0, k, NULL);
        step(&m, t0, k);
        if (s->r == 0)
            tl_token_end(tl);
        last = k;
    }
    if (s->r == 0)
        tl_marker(tl, "PREFILL_DONE");
    for (int64_t t = s->P; t < s->T; t++) {
        if (s->r == 0)
            tl_token_begin(tl, t, true);
        /* the previous position's hidden state, rounded to the dtype as out holds it */
        int64_t row[2] = {1, D};
        snprintf(tile, sizeof(tile), "tok%lld.input", (long long)t);
        tl_set_tile(tl, tile);
        step_input(&m, t, 1, work(&m, R_XROWS, (uint64_t)((last - 1) * D), 2, row));
        step(&m, t, 1);
        if (s->r == 0)
            tl_token_end(tl);
        last = 1;
    }
}

/* ---- setup --------------------------------------------------------------------------------- */

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16};

/* A weight or cache split on axis 1 by ranges[r] = [lo, hi) of each rank. */
static int split_tensor(struct sim_kbuild *b, const char *label, enum sim_dtype dt, unsigned nd,
                        const int64_t *shape, enum sim_kfill fill, double w, const int64_t *ranges,
                        bool read_back, struct diag *d)
{
    struct sim_ktensor t = {.label = label,
                            .dtype = dt,
                            .ndim = nd,
                            .shape = shape,
                            .fill = fill,
                            .lo = -w,
                            .hi = w,
                            .split = true,
                            .read_back = read_back,
                            .split_axis = 1,
                            .split_ranges = ranges};
    return sim_kbuild_tensor(b, &t, d);
}

/* The params with model= applied: the model's shape where the spec does not say
 * otherwise (explicit arguments win). */
static int apply_model(struct sim_kparams *q, struct diag *d)
{
    const char *spec = sim_kparams_text(q, "model");
    if (!*spec)
        return 0;
    struct sim_llm_model m;
    int rc = sim_llm_model_load(spec, &m, d);
    if (rc < 0)
        return rc;
    static const char *const keys[] = {"dim", "heads", "kv_heads", "ff", "layers"};
    const int64_t vals[] = {m.dim, m.heads, m.kv_heads, m.ff, m.layers};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!sim_kparams_given(q, keys[i]))
            sim_kparams_set_int(q, keys[i], vals[i]);
    if (!sim_kparams_given(q, "dtype"))
        sim_kparams_set_dtype(q, "dtype", m.dtype);
    return 0;
}

static int setup(struct sim_kbuild *b, const struct sim_kparams *in, struct diag *d)
{
    int rc;
    struct sim_kparams q = *in;
    const struct sim_kparams *p = &q;
    if ((rc = apply_model(&q, d)) < 0)
        return rc;
    if ((rc = sim_kutil_at_least(p, "layers", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "dim", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "heads", 1, d)) < 0 ||
        (rc = sim_kutil_divides(p, "dim", sim_kparams_int(p, "heads"), "heads", d)) < 0 ||
        (rc = sim_kutil_at_least(p, "kv_heads", 0, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "ff", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "prompt", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "gen", 0, d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0)
        return rc;
    struct llm_shape s = {
        .L = sim_kparams_int(p, "layers"),
        .D = sim_kparams_int(p, "dim"),
        .H = sim_kparams_int(p, "heads"),
        .KV = sim_kparams_int(p, "kv_heads"),
        .F = sim_kparams_int(p, "ff"),
        .P = sim_kparams_int(p, "prompt"),
        .G = sim_kparams_int(p, "gen"),
    };
    if (s.KV == 0)
        s.KV = s.H;
    if (s.H % s.KV != 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k llm_decode: key 'kv_heads': %lld does not divide heads (%lld)",
                        (long long)s.KV, (long long)s.H);
    if ((rc = sim_kutil_pes(b, p, d)) < 0)
        return rc;
    s.R = rc;
    s.dh = s.D / s.H;
    s.T = s.P + s.G;
    s.mcap = s.P < MAX_STEP ? s.P : MAX_STEP;
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    size_t ds = sim_dtype_size(dt);
    int64_t maxh, maxg, maxf;
    max_share(&s, &maxh, &maxg, &maxf);
    uint64_t need = step_need(&s, 1, maxh, maxg, maxf, ds, 1);
    uint64_t have = tl_tcm_stack_bytes(sim_kbuild_config(b));
    if (need > have)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k llm_decode: key 'dim': %lld: a step of one token needs %llu bytes of "
                        "TCM even in tiles of one row, a PE of this chip has %llu",
                        (long long)s.D, (unsigned long long)need, (unsigned long long)have);

    int64_t L = s.L, D = s.D, dh = s.dh, F = s.F;
    int64_t *heads = sim_xcalloc(2 * (size_t)s.R, sizeof(int64_t));
    int64_t *kv = sim_xcalloc(2 * (size_t)s.R, sizeof(int64_t));
    int64_t *cols = sim_xcalloc(2 * (size_t)s.R, sizeof(int64_t));
    for (int64_t r = 0; r < s.R; r++) {
        shape_rank(&s, r);
        heads[2 * r] = s.h0, heads[2 * r + 1] = s.h1;
        kv[2 * r] = s.g0, kv[2 * r + 1] = s.g1;
        cols[2 * r] = s.f0, cols[2 * r + 1] = s.f1;
    }
    /* weights uniform in +-sqrt(3 / fan_in): variance 1 / fan_in */
    double wd = sqrt(3.0 / (double)D), wf = sqrt(3.0 / (double)F);
    int64_t s_prompt[2] = {s.P, D}, s_q[4] = {L, s.H, D, dh}, s_kv[4] = {L, s.KV, D, dh};
    int64_t s_ff[3] = {L, F, D}, s_cache[4] = {L, s.KV, s.T, dh};
    int64_t s_work[2] = {s.R, N_REGIONS * D * s.mcap + s.T}, s_hwork[2] = {s.R, D * s.mcap};
    int64_t s_out[2] = {s.T, D};
    (void)((rc = sim_kutil_tensor(b, "prompt", dt, 2, s_prompt, SIM_KFILL_RANDOM, -1, 1, false,
                                  false, d)) < 0 ||
           (rc = split_tensor(b, "wq", dt, 4, s_q, SIM_KFILL_RANDOM, wd, heads, false, d)) < 0 ||
           (rc = split_tensor(b, "wk", dt, 4, s_kv, SIM_KFILL_RANDOM, wd, kv, false, d)) < 0 ||
           (rc = split_tensor(b, "wv", dt, 4, s_kv, SIM_KFILL_RANDOM, wd, kv, false, d)) < 0 ||
           (rc = split_tensor(b, "wo", dt, 4, s_q, SIM_KFILL_RANDOM, wd, heads, false, d)) < 0 ||
           (rc = split_tensor(b, "w1", dt, 3, s_ff, SIM_KFILL_RANDOM, wd, cols, false, d)) < 0 ||
           (rc = split_tensor(b, "w3", dt, 3, s_ff, SIM_KFILL_RANDOM, wd, cols, false, d)) < 0 ||
           (rc = split_tensor(b, "w2", dt, 3, s_ff, SIM_KFILL_RANDOM, wf, cols, false, d)) < 0 ||
           (rc = split_tensor(b, "kcache", dt, 4, s_cache, SIM_KFILL_ZERO, 0, kv, true, d)) < 0 ||
           (rc = split_tensor(b, "vcache", dt, 4, s_cache, SIM_KFILL_ZERO, 0, kv, true, d)) < 0 ||
           (rc = sim_kutil_tensor(b, "work", SIM_F32, 2, s_work, SIM_KFILL_ZERO, 0, 0, true, false,
                                  d)) < 0 ||
           (rc = sim_kutil_tensor(b, "hwork", dt, 2, s_hwork, SIM_KFILL_ZERO, 0, 0, true, false,
                                  d)) < 0 ||
           (rc = sim_kutil_tensor(b, "out", dt, 2, s_out, SIM_KFILL_ZERO, 0, 0, false, true, d)) <
               0);
    free(heads);
    free(kv);
    free(cols);
    if (rc < 0)
        return rc;
    sim_kbuild_int(b, L);
    sim_kbuild_int(b, s.H);
    sim_kbuild_int(b, s.KV);
    sim_kbuild_int(b, s.P);
    sim_kbuild_int(b, s.G);
    sim_kbuild_float(b, sim_kparams_float(p, "eps"));
    return 0;
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "llm_decode", OUT_ARG + 1, N_ARGS - OUT_ARG - 1, d);
    if (rc < 0)
        return rc;
    struct sim_kref_arg *a = r->args;
    struct sim_kref_llm s = {
        .layers = a[LAYERS_ARG].i,
        .heads = a[HEADS_ARG].i,
        .kv_heads = a[KV_HEADS_ARG].i,
        .prompt = a[PROMPT_LEN_ARG].i,
        .gen = a[GEN_ARG].i,
        .eps = a[EPS_ARG].f,
        .ranks = r->npes,
        .d = a[OUT_ARG].t->ndim == 2 ? a[OUT_ARG].t->shape[1] : 0,
        .ff = a[W1_ARG].t->ndim == 3 ? a[W1_ARG].t->shape[1] : 0,
    };
    int64_t L = s.layers, D = s.d, T = s.prompt + s.gen;
    bool ok = L >= 1 && s.heads >= 1 && s.kv_heads >= 1 && s.heads % s.kv_heads == 0 && D >= 1 &&
              D % s.heads == 0 && s.prompt >= 1 && s.gen >= 0 && s.ff >= 1;
    int64_t dh = ok ? D / s.heads : 0;
    const int64_t want[][4] = {
        [PROMPT_ARG] = {s.prompt, D},
        [WQ_ARG] = {L, s.heads, D, dh},
        [WK_ARG] = {L, s.kv_heads, D, dh},
        [WV_ARG] = {L, s.kv_heads, D, dh},
        [WO_ARG] = {L, s.heads, D, dh},
        [W1_ARG] = {L, s.ff, D},
        [W3_ARG] = {L, s.ff, D},
        [W2_ARG] = {L, s.ff, D},
        [KC_ARG] = {L, s.kv_heads, T, dh},
        [VC_ARG] = {L, s.kv_heads, T, dh},
        [OUT_ARG] = {T, D},
    };
    static const unsigned nd[] = {
        [PROMPT_ARG] = 2, [WQ_ARG] = 4, [WK_ARG] = 4, [WV_ARG] = 4, [WO_ARG] = 4, [W1_ARG] = 3,
        [W3_ARG] = 3,     [W2_ARG] = 3, [KC_ARG] = 4, [VC_ARG] = 4, [OUT_ARG] = 2};
    for (size_t i = 0; ok && i <= OUT_ARG; i++) {
        if (nd[i] == 0)
            continue;
        ok = a[i].t->ndim == nd[i] && memcmp(a[i].t->shape, want[i], nd[i] * sizeof(int64_t)) == 0;
    }
    if (!ok)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "llm_decode reference: the tensors do not have the shapes of the model");
    struct sim_kref_llm_io io = {
        .prompt = a[PROMPT_ARG].t,
        .wq = a[WQ_ARG].t,
        .wk = a[WK_ARG].t,
        .wv = a[WV_ARG].t,
        .wo = a[WO_ARG].t,
        .w1 = a[W1_ARG].t,
        .w3 = a[W3_ARG].t,
        .w2 = a[W2_ARG].t,
        .kcache = a[KC_ARG].t,
        .vcache = a[VC_ARG].t,
        .out = a[OUT_ARG].t,
        .got_k = a[KC_ARG].got,
        .got_v = a[VC_ARG].got,
        .got_out = a[OUT_ARG].got,
    };
    const size_t outs[3] = {KC_ARG, VC_ARG, OUT_ARG};
    double **bounds[3] = {&io.bound_k, &io.bound_v, &io.bound_out};
    for (int i = 0; i < 3; i++) {
        struct sim_kref_arg *o = &a[outs[i]];
        o->bound = *bounds[i] = sim_xcalloc(sim_tensor_numel(o->t), sizeof(double));
        snprintf(o->bound_what, sizeof(o->bound_what), "%s",
                 i < 2 ? "d-term dot products, inputs rounded to the dtype"
                       : "the projections' dot products and the all-reduce, per layer");
    }
    sim_kref_llm_decode(&s, &io);
    return 0;
}

static const struct sim_kparam params[] = {
    {"layers", SIM_KP_INT, "2", "transformer layers"},
    {"dim", SIM_KP_INT, "32", "model width d"},
    {"heads", SIM_KP_INT, "2", "attention heads (must divide dim)"},
    {"kv_heads", SIM_KP_INT, "0", "key/value heads, grouped-query (must divide heads; 0: heads)"},
    {"ff", SIM_KP_INT, "64", "MLP width (w1, w3: d -> ff, w2: ff -> d)"},
    {"prompt", SIM_KP_INT, "4", "prompt tokens (prefill)"},
    {"gen", SIM_KP_INT, "4", "generated tokens (decode)"},
    {"eps", SIM_KP_FLOAT, "1e-6", "rmsnorm epsilon"},
    {"pes", SIM_KP_INT, "0", "PEs the layers are split over, tensor parallel (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32",
     "weights, KV caches and out (the rest runs in f32): f32, f16, bf16"},
    {"model", SIM_KP_TEXT, "",
     "a model's shape: a preset (llama-2-7b, llama-3-8b, mistral-7b, qwen2-7b, ...) or a "
     "config.json; dim, heads, kv_heads, ff, layers, dtype given here win"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_karg_desc args[] = {
    {"prompt", SIM_KARG_TENSOR, "dtype", "prompt x dim", NULL},
    {"wq", SIM_KARG_TENSOR, "dtype", "layers x heads x dim x dh", NULL},
    {"wk", SIM_KARG_TENSOR, "dtype", "layers x kv_heads x dim x dh", NULL},
    {"wv", SIM_KARG_TENSOR, "dtype", "layers x kv_heads x dim x dh", NULL},
    {"wo", SIM_KARG_TENSOR, "dtype", "layers x heads x dim x dh", NULL},
    {"w1", SIM_KARG_TENSOR, "dtype", "layers x ff x dim", NULL},
    {"w3", SIM_KARG_TENSOR, "dtype", "layers x ff x dim", NULL},
    {"w2", SIM_KARG_TENSOR, "dtype", "layers x ff x dim", NULL},
    {"kcache", SIM_KARG_TENSOR, "dtype", "layers x kv_heads x T x dh", NULL},
    {"vcache", SIM_KARG_TENSOR, "dtype", "layers x kv_heads x T x dh", NULL},
    {"work", SIM_KARG_TENSOR, "f32", "PEs x 5 dim M + T", NULL},
    {"hwork", SIM_KARG_TENSOR, "dtype", "PEs x dim M", NULL},
    {"out", SIM_KARG_TENSOR, "dtype", "T x dim", NULL},
    {"layers", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"heads", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"kv_heads", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"prompt_len", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"gen", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"eps", SIM_KARG_SCALAR, "f32", NULL, NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

/* The KV cache, marked in the trace: its loads and stores are summary_metrics.kv_cache. */
static const struct sim_karg_role roles[] = {
    {"kcache", "kv"},
    {"vcache", "kv"},
    {NULL, NULL},
};

const struct sim_kernel sim_kernel_llm_decode = {
    .name = "llm_decode",
    .summary = "a Llama-style transformer, tensor parallel over PEs: prefill a prompt, then "
               "decode tokens with a growing KV cache",
    .args = args,
    .fn = llm_decode,
    .params = params,
    .setup = setup,
    .reference = reference,
    .roles = roles,
};

/* ---- reference ----------------------------------------------------------------------------- */

/*
 * The kernel's math in double, rounding to the dtype where the kernel casts (the GEMMs'
 * activation operands h, q, the probabilities and the head outputs, the MLP activation g,
 * the caches and out). An autoregressive run is a feedback loop: one rounding that falls
 * the other way in f16 early on grows through every later token, so the reference recomputes
 * each position from the kernel's own earlier results where the run gives them (got_k,
 * got_v, got_out: the keys and values attention reads, the previous position's output that
 * a generated token starts from), and compares what that position computes. Each output
 * element's bound is the forward error bound of the reductions that produce it: the dot
 * products (gamma_n in f32, accumulated in any order), the all-reduce (gamma_R), and a
 * rounding of each product's activation that may fall the other way in the kernel (2 u of
 * the dtype times the terms: the activation is within one unit in the last place of the
 * reference's).
 */

/* v rounded to dt (f32 rounds too: the kernel stores f32). */
static double rnd(enum sim_dtype dt, double v)
{
    switch (dt) {
    case SIM_F16: return sim_f16_to_f32(sim_f32_to_f16((float)v));
    case SIM_BF16: return sim_bf16_to_f32(sim_f32_to_bf16((float)v));
    default: return (float)v;
    }
}

/* h = x / sqrt(mean(x^2) + eps), rounded to dt. */
static void ref_norm(const double *x, int64_t d, double eps, enum sim_dtype dt, double *h)
{
    double ss = 0;
    for (int64_t i = 0; i < d; i++)
        ss += x[i] * x[i];
    double r = 1.0 / sqrt(ss / (double)d + eps);
    for (int64_t i = 0; i < d; i++)
        h[i] = rnd(dt, x[i] * r);
}

void sim_kref_llm_decode(const struct sim_kref_llm *s, const struct sim_kref_llm_io *io)
{
    int64_t L = s->layers, D = s->d, H = s->heads, KV = s->kv_heads, F = s->ff, dh = D / H;
    int64_t T = s->prompt + s->gen, grp = H / KV;
    enum sim_dtype dt = io->out->dtype;
    /* a cast point's rounding may fall the other way in the kernel: one ulp, 2u */
    double uc = dt == SIM_F32 ? 0 : 2 * sim_kref_unit_roundoff(dt);
    double g_d = sim_kref_gamma((uint64_t)D, SIM_F32), g_f = sim_kref_gamma((uint64_t)F, SIM_F32);
    double g_r = sim_kref_gamma((uint64_t)(s->ranks > 1 ? s->ranks : 1), SIM_F32);
    double g_t = sim_kref_gamma((uint64_t)T, SIM_F32);
    double *prompt = sim_kutil_doubles(io->prompt), *wq = sim_kutil_doubles(io->wq);
    double *wk = sim_kutil_doubles(io->wk), *wv = sim_kutil_doubles(io->wv);
    double *wo = sim_kutil_doubles(io->wo), *w1 = sim_kutil_doubles(io->w1);
    double *w3 = sim_kutil_doubles(io->w3), *w2 = sim_kutil_doubles(io->w2);
    double *gk = io->got_k ? sim_kutil_doubles(io->got_k) : NULL;
    double *gv = io->got_v ? sim_kutil_doubles(io->got_v) : NULL;
    double *gout = io->got_out ? sim_kutil_doubles(io->got_out) : NULL;
    size_t cache_n = (size_t)(L * KV * T * dh);
    double *kc = sim_xcalloc(cache_n, sizeof(double)), *vc = sim_xcalloc(cache_n, sizeof(double));
    double *outv = sim_xcalloc((size_t)(T * D), sizeof(double));
    double *x = sim_xcalloc((size_t)D, sizeof(double)), *h = sim_xcalloc((size_t)D, sizeof(double));
    double *q = sim_xcalloc((size_t)dh, sizeof(double)),
           *o = sim_xcalloc((size_t)D, sizeof(double));
    double *g = sim_xcalloc((size_t)F, sizeof(double)), *p = sim_xcalloc((size_t)T, sizeof(double));
    double *acc = sim_xcalloc((size_t)D, sizeof(double)),
           *mag = sim_xcalloc((size_t)D, sizeof(double));
    double *bnd = sim_xcalloc((size_t)D, sizeof(double));
    /* the caches attention reads: the kernel's when given */
    const double *ck = gk ? gk : kc, *cv = gv ? gv : vc;
    for (int64_t t = 0; t < T; t++) {
        for (int64_t i = 0; i < D; i++) {
            if (t < s->prompt)
                x[i] = prompt[t * D + i];
            else /* the previous position's output, as out holds it */
                x[i] = gout ? gout[(t - 1) * D + i] : outv[(t - 1) * D + i];
            bnd[i] = 0;
        }
        for (int64_t l = 0; l < L; l++) {
            ref_norm(x, D, s->eps, dt, h);
            /* keys and values of this position */
            for (int64_t gi = 0; gi < KV; gi++)
                for (int kvs = 0; kvs < 2; kvs++) {
                    const double *w = (kvs ? wv : wk) + (l * KV + gi) * D * dh;
                    double *dst = (kvs ? vc : kc) + ((l * KV + gi) * T + t) * dh;
                    double *bd = (kvs ? io->bound_v : io->bound_k);
                    for (int64_t j = 0; j < dh; j++) {
                        double sum = 0, m = 0;
                        for (int64_t i = 0; i < D; i++) {
                            sum += h[i] * w[i * dh + j];
                            m += fabs(h[i] * w[i * dh + j]);
                        }
                        dst[j] = rnd(dt, sum);
                        if (bd)
                            bd[((l * KV + gi) * T + t) * dh + j] = (g_d + uc) * m;
                    }
                }
            /* attention per head over positions 0..t; o (d): the heads' outputs */
            for (int64_t hd = 0; hd < H; hd++) {
                const double *w = wq + (l * H + hd) * D * dh;
                for (int64_t j = 0; j < dh; j++) {
                    double sum = 0;
                    for (int64_t i = 0; i < D; i++)
                        sum += h[i] * w[i * dh + j];
                    q[j] = rnd(dt, sum);
                }
                const double *K = ck + (l * KV + hd / grp) * T * dh;
                const double *V = cv + (l * KV + hd / grp) * T * dh;
                double mx = -INFINITY, den = 0;
                for (int64_t u = 0; u <= t; u++) {
                    double sc = 0;
                    for (int64_t j = 0; j < dh; j++)
                        sc += q[j] * K[u * dh + j];
                    p[u] = sc / sqrt((double)dh);
                    mx = p[u] > mx ? p[u] : mx;
                }
                for (int64_t u = 0; u <= t; u++)
                    den += p[u] = exp(p[u] - mx);
                for (int64_t j = 0; j < dh; j++) {
                    double sum = 0;
                    for (int64_t u = 0; u <= t; u++)
                        sum += rnd(dt, p[u]) * V[u * dh + j];
                    o[hd * dh + j] = rnd(dt, sum / den);
                }
            }
            /* output projection (Wo per head: d x dh, out x in) and the residual */
            for (int64_t i = 0; i < D; i++) {
                double sum = 0, m = 0;
                for (int64_t hd = 0; hd < H; hd++)
                    for (int64_t j = 0; j < dh; j++) {
                        double v = wo[((l * H + hd) * D + i) * dh + j] * o[hd * dh + j];
                        sum += v;
                        m += fabs(v);
                    }
                x[i] += sum;
                /* the dot products, the all-reduce, the head outputs' rounding, and the
                 * softmax's sums over the positions */
                bnd[i] += (g_d + g_r + uc + g_t) * m;
            }
            /* gated MLP: g = silu(W1 h) * (W3 h), x += W2^T g */
            ref_norm(x, D, s->eps, dt, h);
            for (int64_t f = 0; f < F; f++) {
                const double *r1 = w1 + (l * F + f) * D, *r3 = w3 + (l * F + f) * D;
                double u1 = 0, u3 = 0;
                for (int64_t i = 0; i < D; i++) {
                    u1 += r1[i] * h[i];
                    u3 += r3[i] * h[i];
                }
                g[f] = rnd(dt, u1 / (1 + exp(-u1)) * u3);
            }
            for (int64_t i = 0; i < D; i++) {
                acc[i] = 0;
                mag[i] = 0;
            }
            for (int64_t f = 0; f < F; f++) {
                const double *r2 = w2 + (l * F + f) * D;
                for (int64_t i = 0; i < D; i++) {
                    acc[i] += r2[i] * g[f];
                    mag[i] += fabs(r2[i] * g[f]);
                }
            }
            for (int64_t i = 0; i < D; i++) {
                x[i] += acc[i];
                bnd[i] += (g_f + g_r + uc) * mag[i];
            }
        }
        for (int64_t i = 0; i < D; i++) {
            outv[t * D + i] = rnd(dt, x[i]);
            if (io->bound_out)
                io->bound_out[t * D + i] = bnd[i];
        }
    }
    for (size_t i = 0; i < cache_n; i++) {
        sim_tensor_set(io->kcache, i, kc[i]);
        sim_tensor_set(io->vcache, i, vc[i]);
    }
    for (int64_t i = 0; i < T * D; i++)
        sim_tensor_set(io->out, (size_t)i, outv[i]);
    double *all[] = {prompt, wq,   wk, wv, wo, w1, w3, w2, gk,  gv,  gout, kc,
                     vc,     outv, x,  h,  q,  o,  g,  p,  acc, mag, bnd};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
}
