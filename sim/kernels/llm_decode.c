/*
 * llm_decode: a small decoder-only transformer running a prompt (prefill) and then
 * generating tokens (decode), one sequence per PE of the launch (a batch). Per token and
 * per layer:
 *
 *   attention   h = rmsnorm(x); k = h @ Wk, v = h @ Wv appended to the layer's KV cache in
 *               HBM (which grows by one row per token); q = h @ Wq; per head, scores of q
 *               against the cache rows 0..t (mul, sum), scaled by 1/sqrt(head_dim),
 *               softmax over the positions (max, sub, exp, sum, div), weighted sum of the
 *               value rows (mul, sum); x += o @ Wo
 *   MLP         h = rmsnorm(x); x += silu(h @ W1) @ W2
 *
 * (rmsnorm without weights; one attention head is d / heads wide.) The prompt is fed one
 * token at a time, so prefill and decode steps have the same shape; in decode the input of
 * step t is the hidden state of step t - 1 (no sampling: choosing a token would branch on
 * a compute result, which phase 1 does not have, ADR-0020 D3). The residual stream stays
 * in f32 in an HBM scratch row, next to the attention output and the MLP activation (the
 * kernel keeps its TCM small by passing them through HBM); out row t receives the hidden
 * state after the last layer at position t, in the dtype.
 *
 * What it reports: a TOKEN_EVENT per position (tl_token_begin / tl_token_end: PREFILL for
 * the prompt, DECODE after), a MARKER_EVENT "layerL" at the start of every layer of every
 * token and "PREFILL_DONE" after the prompt; its ops carry layer_id "layerL" and tile_id
 * "tokT.attn" / "tokT.mlp".
 *
 * Arguments: prompt (prompt x d), wq, wk, wv, wo (layers*d x d), w1 (layers*d x ff),
 * w2 (layers*ff x d), kcache, vcache (layers*T x d, T = prompt + gen), scratch (1 x
 * max(d, ff) + d, f32), out (T x d): tensors (prompt, caches, scratch, out one per PE; weights
 * shared); layers, heads, prompt, gen: i32; eps: f32. Weights, caches and out are of the dtype
 * (f32, f16, bf16); the dots run on it, accumulating in f32, and everything else runs in f32.
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
    W2_ARG,
    KC_ARG,
    VC_ARG,
    SCRATCH_ARG,
    OUT_ARG,
    LAYERS_ARG,
    HEADS_ARG,
    PROMPT_LEN_ARG,
    GEN_ARG,
    EPS_ARG,
};

struct llm {
    struct tl *tl;
    const struct kargs *a;
    int64_t layers, d, heads, ff, prompt, gen, T;
    enum sim_dtype dt;
    struct tl_tensor *x_in, *kc, *vc, *scratch, *out; /* this PE's, in HBM */
    struct tl_tensor *eps, *scale;                    /* f32 constants in TCM */
};

static struct tl_tensor *f32(struct llm *m, struct tl_tensor *t)
{
    return tl_dtype(t) == SIM_F32 ? t : tl_cast(m->tl, t, SIM_F32);
}

static struct tl_tensor *to_dt(struct llm *m, struct tl_tensor *t)
{
    return tl_dtype(t) == m->dt ? t : tl_cast(m->tl, t, m->dt);
}

/* Row i (1 x cols) of the 2-d HBM tensor t. */
static struct tl_tensor *row(struct llm *m, const struct tl_tensor *t, int64_t i)
{
    int64_t shape[2] = {1, tl_dim(t, 1)};
    return tl_view(m->tl, t, (uint64_t)(i * shape[1]), 2, shape);
}

/* Rows [i, i + n) of t. */
static struct tl_tensor *rows(struct llm *m, const struct tl_tensor *t, int64_t i, int64_t n)
{
    int64_t shape[2] = {n, tl_dim(t, 1)};
    return tl_view(m->tl, t, (uint64_t)(i * shape[1]), 2, shape);
}

/* The first n elements of the scratch row (an activation), as 1 x n. */
static struct tl_tensor *scratch(struct llm *m, int64_t n)
{
    int64_t shape[2] = {1, n};
    return tl_view(m->tl, m->scratch, 0, 2, shape);
}

/* Columns of the scratch row for the activations (the attention output, d, and the MLP
 * activation, ff); the residual stream (d) follows them. */
static int64_t act_cols(int64_t d, int64_t ff)
{
    return ff > d ? ff : d;
}

/* The residual stream in the scratch row, as 1 x d. */
static struct tl_tensor *resid(struct llm *m)
{
    int64_t shape[2] = {1, m->d};
    return tl_view(m->tl, m->scratch, (uint64_t)act_cols(m->d, m->ff), 2, shape);
}

/* Weight matrix l (rows x cols) of weight argument i, in TCM. */
static struct tl_tensor *weight(struct llm *m, size_t i, int64_t l, int64_t nrows)
{
    return tl_load(m->tl, sim_kutil_rows(m->tl, m->a, i, l * nrows, nrows));
}

/* x (1 x d, f32) * rsqrt(mean(x * x) + eps), as the dtype of the dots. */
static struct tl_tensor *rmsnorm(struct llm *m, struct tl_tensor *x)
{
    struct tl *tl = m->tl;
    struct tl_tensor *ms = tl_mean(tl, tl_mul(tl, x, x), -1);
    return to_dt(m, tl_mul(tl, x, tl_rsqrt(tl, tl_add(tl, ms, m->eps))));
}

static void attention(struct llm *m, int64_t t, int64_t l, const struct tl_tensor *src)
{
    struct tl *tl = m->tl;
    int64_t d = m->d, H = m->heads, dh = d / H, n = t + 1;
    uint64_t base = tl_tcm_mark(tl);
    struct tl_tensor *x = f32(m, tl_load(tl, src));
    struct tl_tensor *h = rmsnorm(m, x);
    uint64_t mark = tl_tcm_mark(tl);

    /* this token's key and value join the cache */
    tl_store(tl, row(m, m->kc, l * m->T + t), to_dt(m, tl_dot(tl, h, weight(m, WK_ARG, l, d))));
    tl_tcm_release(tl, mark);
    tl_store(tl, row(m, m->vc, l * m->T + t), to_dt(m, tl_dot(tl, h, weight(m, WV_ARG, l, d))));
    tl_tcm_release(tl, mark);

    /* scores against cache rows 0..t, per head */
    struct tl_tensor *q = tl_dot(tl, h, weight(m, WQ_ARG, l, d));
    int64_t s3[3] = {n, H, dh}, q3[3] = {1, H, dh}, o2[2] = {1, d};
    struct tl_tensor *K = tl_reshape(tl, f32(m, tl_load(tl, rows(m, m->kc, l * m->T, n))), 3, s3);
    struct tl_tensor *V = tl_reshape(tl, f32(m, tl_load(tl, rows(m, m->vc, l * m->T, n))), 3, s3);
    struct tl_tensor *sc = tl_sum(tl, tl_mul(tl, K, tl_reshape(tl, q, 3, q3)), -1); /* n,H,1 */
    sc = tl_mul(tl, sc, m->scale);
    struct tl_tensor *e = tl_exp(tl, tl_sub(tl, sc, tl_max(tl, sc, 0)));
    struct tl_tensor *p = tl_div(tl, e, tl_sum(tl, e, 0));
    struct tl_tensor *o = tl_reshape(tl, tl_sum(tl, tl_mul(tl, V, p), 0), 2, o2);
    tl_store(tl, scratch(m, d), o);
    tl_tcm_release(tl, mark);

    /* output projection and the residual */
    struct tl_tensor *a = to_dt(m, tl_load(tl, scratch(m, d)));
    tl_store(tl, resid(m), tl_add(tl, x, tl_dot(tl, a, weight(m, WO_ARG, l, d))));
    tl_tcm_release(tl, base);
}

/* The MLP of layer l; after the last layer, the hidden state also goes to out row t. */
static void mlp(struct llm *m, int64_t t, int64_t l)
{
    struct tl *tl = m->tl;
    uint64_t base = tl_tcm_mark(tl);
    struct tl_tensor *x = tl_load(tl, resid(m));
    uint64_t mark = tl_tcm_mark(tl);
    struct tl_tensor *h = rmsnorm(m, x);
    tl_store(tl, scratch(m, m->ff), tl_silu(tl, tl_dot(tl, h, weight(m, W1_ARG, l, m->d))));
    tl_tcm_release(tl, mark);
    struct tl_tensor *g = to_dt(m, tl_load(tl, scratch(m, m->ff)));
    struct tl_tensor *y = tl_add(tl, x, tl_dot(tl, g, weight(m, W2_ARG, l, m->ff)));
    tl_store(tl, resid(m), y);
    if (l == m->layers - 1)
        tl_store(tl, row(m, m->out, t), to_dt(m, y));
    tl_tcm_release(tl, base);
}

/* This PE's rows of tensor argument i, which must number `want`. */
static struct tl_tensor *mine(struct tl *tl, const struct kargs *a, size_t i, int64_t want,
                              const char *name)
{
    int64_t n, row0 = sim_kutil_my_rows(tl, a, i, &n);
    if (n != want)
        tl_fail(tl, "%s: this PE's shard has %lld rows, expected %lld", name, (long long)n,
                (long long)want);
    return sim_kutil_rows(tl, a, i, row0, n);
}

static void expect_weight(struct tl *tl, const struct kargs *a, size_t i, const char *name,
                          int64_t rows_, int64_t cols)
{
    const struct karg *k = &a->v[i];
    if (!k->is_tensor || k->ndim != 2 || k->shape[0] != rows_ || k->shape[1] != cols)
        tl_fail(tl, "%s must be %lld x %lld", name, (long long)rows_, (long long)cols);
}

static void llm_decode(struct tl *tl, const struct kargs *a)
{
    struct llm m = {.tl = tl, .a = a};
    m.layers = tl_arg_int(tl, a, LAYERS_ARG);
    m.heads = tl_arg_int(tl, a, HEADS_ARG);
    m.prompt = tl_arg_int(tl, a, PROMPT_LEN_ARG);
    m.gen = tl_arg_int(tl, a, GEN_ARG);
    m.T = m.prompt + m.gen;
    m.d = sim_kutil_row_elems(tl, a, WQ_ARG);
    m.ff = sim_kutil_row_elems(tl, a, W1_ARG);
    if (m.layers < 1 || m.heads < 1 || m.d % m.heads || m.prompt < 1 || m.gen < 0)
        tl_fail(tl,
                "layers %lld, heads %lld (d = %lld), prompt %lld, gen %lld: layers, heads "
                "and prompt must be >= 1, heads must divide d, gen >= 0",
                (long long)m.layers, (long long)m.heads, (long long)m.d, (long long)m.prompt,
                (long long)m.gen);
    expect_weight(tl, a, WQ_ARG, "wq", m.layers * m.d, m.d);
    expect_weight(tl, a, WK_ARG, "wk", m.layers * m.d, m.d);
    expect_weight(tl, a, WV_ARG, "wv", m.layers * m.d, m.d);
    expect_weight(tl, a, WO_ARG, "wo", m.layers * m.d, m.d);
    expect_weight(tl, a, W1_ARG, "w1", m.layers * m.d, m.ff);
    expect_weight(tl, a, W2_ARG, "w2", m.layers * m.ff, m.d);
    m.x_in = mine(tl, a, PROMPT_ARG, m.prompt, "prompt");
    m.kc = mine(tl, a, KC_ARG, m.layers * m.T, "kcache");
    m.vc = mine(tl, a, VC_ARG, m.layers * m.T, "vcache");
    m.scratch = mine(tl, a, SCRATCH_ARG, 1, "scratch");
    m.out = mine(tl, a, OUT_ARG, m.T, "out");
    m.dt = tl_dtype(m.out);
    long long scratch_cols = act_cols(m.d, m.ff) + m.d;
    if (tl_dim(m.x_in, 1) != m.d || tl_dim(m.kc, 1) != m.d || tl_dim(m.out, 1) != m.d ||
        tl_dim(m.scratch, 1) < scratch_cols || tl_dtype(m.scratch) != SIM_F32)
        tl_fail(tl,
                "prompt, caches and out must have d = %lld columns, scratch be f32 with at "
                "least %lld",
                (long long)m.d, scratch_cols);
    m.eps = tl_const(tl, tl_arg_float(tl, a, EPS_ARG), SIM_F32);
    m.scale = tl_const(tl, 1.0 / sqrt((double)m.d / (double)m.heads), SIM_F32);

    char name[48];
    for (int64_t t = 0; t < m.T; t++) {
        tl_token_begin(tl, t, t >= m.prompt);
        for (int64_t l = 0; l < m.layers; l++) {
            snprintf(name, sizeof(name), "layer%lld", (long long)l);
            tl_marker(tl, name);
            tl_set_layer(tl, name);
            snprintf(name, sizeof(name), "tok%lld.attn", (long long)t);
            tl_set_tile(tl, name);
            /* the prompt's token, else the residual stream (the last token's state) */
            const struct tl_tensor *src = l == 0 && t < m.prompt ? row(&m, m.x_in, t) : resid(&m);
            attention(&m, t, l, src);
            snprintf(name, sizeof(name), "tok%lld.mlp", (long long)t);
            tl_set_tile(tl, name);
            mlp(&m, t, l);
        }
        tl_set_layer(tl, NULL);
        tl_set_tile(tl, NULL);
        tl_token_end(tl);
        if (t == m.prompt - 1)
            tl_marker(tl, "PREFILL_DONE");
    }
}

/* ---- setup --------------------------------------------------------------------------------- */

static const enum sim_dtype dtypes[] = {SIM_F32, SIM_F16, SIM_BF16};

static int setup(struct sim_kbuild *b, const struct sim_kparams *p, struct diag *d)
{
    int rc;
    if ((rc = sim_kutil_at_least(p, "layers", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "dim", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "heads", 1, d)) < 0 ||
        (rc = sim_kutil_divides(p, "dim", sim_kparams_int(p, "heads"), "heads", d)) < 0 ||
        (rc = sim_kutil_at_least(p, "ff", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "prompt", 1, d)) < 0 ||
        (rc = sim_kutil_at_least(p, "gen", 0, d)) < 0 ||
        (rc = sim_kutil_dtype(p, dtypes, sizeof(dtypes) / sizeof(dtypes[0]), d)) < 0 ||
        (rc = sim_kutil_pes(b, p, d)) < 0)
        return rc;
    int64_t B = rc, L = sim_kparams_int(p, "layers"), D = sim_kparams_int(p, "dim");
    int64_t F = sim_kparams_int(p, "ff"), P = sim_kparams_int(p, "prompt");
    int64_t T = P + sim_kparams_int(p, "gen"), S = act_cols(D, F) + D;
    enum sim_dtype dt = sim_kparams_dtype(p, "dtype");
    /* weights uniform in +-sqrt(3 / fan_in): variance 1 / fan_in */
    double wd = sqrt(3.0 / (double)D), wf = sqrt(3.0 / (double)F);
    int64_t s_prompt[2] = {B * P, D}, s_w[2] = {L * D, D}, s_w1[2] = {L * D, F};
    int64_t s_w2[2] = {L * F, D}, s_cache[2] = {B * L * T, D}, s_scratch[2] = {B, S};
    int64_t s_out[2] = {B * T, D};
    static const char *const attn[4] = {"wq", "wk", "wv", "wo"};
    if ((rc = sim_kutil_tensor(b, "prompt", dt, 2, s_prompt, SIM_KFILL_RANDOM, -1, 1, true, false,
                               d)) < 0)
        return rc;
    for (int i = 0; i < 4; i++)
        if ((rc = sim_kutil_tensor(b, attn[i], dt, 2, s_w, SIM_KFILL_RANDOM, -wd, wd, false, false,
                                   d)) < 0)
            return rc;
    if ((rc = sim_kutil_tensor(b, "w1", dt, 2, s_w1, SIM_KFILL_RANDOM, -wd, wd, false, false, d)) <
            0 ||
        (rc = sim_kutil_tensor(b, "w2", dt, 2, s_w2, SIM_KFILL_RANDOM, -wf, wf, false, false, d)) <
            0 ||
        (rc = sim_kutil_tensor(b, "kcache", dt, 2, s_cache, SIM_KFILL_ZERO, 0, 0, true, true, d)) <
            0 ||
        (rc = sim_kutil_tensor(b, "vcache", dt, 2, s_cache, SIM_KFILL_ZERO, 0, 0, true, true, d)) <
            0 ||
        (rc = sim_kutil_tensor(b, "scratch", SIM_F32, 2, s_scratch, SIM_KFILL_ZERO, 0, 0, true,
                               false, d)) < 0 ||
        (rc = sim_kutil_tensor(b, "out", dt, 2, s_out, SIM_KFILL_ZERO, 0, 0, true, true, d)) < 0)
        return rc;
    sim_kbuild_int(b, L);
    sim_kbuild_int(b, sim_kparams_int(p, "heads"));
    sim_kbuild_int(b, P);
    sim_kbuild_int(b, sim_kparams_int(p, "gen"));
    sim_kbuild_float(b, sim_kparams_float(p, "eps"));
    return 0;
}

/* Rows [row0, row0 + n) of the 2-d tensor t, as a new tensor. */
static struct sim_tensor *rows_copy(const struct sim_tensor *t, int64_t row0, int64_t n)
{
    int64_t shape[2] = {n, t->shape[1]};
    struct sim_tensor *c = sim_tensor_new(t->dtype, 2, shape);
    memcpy(sim_tensor_data(c),
           (const char *)sim_tensor_cdata(t) + (size_t)row0 * (c->nbytes / (size_t)n), c->nbytes);
    return c;
}

/* Put rows back where rows_copy took them, and drop the copy. */
static void rows_put(struct sim_tensor *t, int64_t row0, struct sim_tensor *c)
{
    memcpy((char *)sim_tensor_data(t) + (size_t)row0 * (c->nbytes / (size_t)c->shape[0]),
           sim_tensor_cdata(c), c->nbytes);
    sim_tensor_unref(c);
}

static int reference(const struct sim_kref *r, struct diag *d)
{
    int rc = sim_kutil_ref_args(r, "llm_decode", 11, 5, d);
    if (rc < 0)
        return rc;
    const struct sim_kref_arg *a = r->args;
    struct sim_kref_llm s = {
        .layers = a[LAYERS_ARG].i,
        .heads = a[HEADS_ARG].i,
        .prompt = a[PROMPT_LEN_ARG].i,
        .gen = a[GEN_ARG].i,
        .eps = a[EPS_ARG].f,
        .d = a[WQ_ARG].t->ndim == 2 ? a[WQ_ARG].t->shape[1] : 0,
        .ff = a[W1_ARG].t->ndim == 2 ? a[W1_ARG].t->shape[1] : 0,
    };
    int64_t T = s.prompt + s.gen, L = s.layers;
    const struct sim_tensor *prompt = a[PROMPT_ARG].t, *out = a[OUT_ARG].t;
    int64_t B = s.prompt > 0 && prompt->ndim == 2 ? prompt->shape[0] / s.prompt : 0;
    bool ok = L >= 1 && s.heads >= 1 && s.d % s.heads == 0 && s.prompt >= 1 && s.gen >= 0 &&
              B >= 1 && prompt->shape[0] == B * s.prompt && out->ndim == 2 &&
              out->shape[0] == B * T && a[KC_ARG].t->ndim == 2 && a[VC_ARG].t->ndim == 2 &&
              a[KC_ARG].t->shape[0] == B * L * T && a[VC_ARG].t->shape[0] == B * L * T;
    for (size_t i = WQ_ARG; ok && i <= W2_ARG; i++)
        ok = a[i].t->ndim == 2 && a[i].t->shape[0] == L * (i == W2_ARG ? s.ff : s.d);
    if (!ok)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "llm_decode reference: the tensors do not have the shapes of the model");
    for (int64_t b = 0; b < B; b++) {
        struct sim_tensor *p = rows_copy(prompt, b * s.prompt, s.prompt);
        struct sim_tensor *kc = rows_copy(a[KC_ARG].t, b * L * T, L * T);
        struct sim_tensor *vc = rows_copy(a[VC_ARG].t, b * L * T, L * T);
        struct sim_tensor *o = rows_copy(out, b * T, T);
        sim_kref_llm_decode(&s, p, a[WQ_ARG].t, a[WK_ARG].t, a[WV_ARG].t, a[WO_ARG].t, a[W1_ARG].t,
                            a[W2_ARG].t, kc, vc, o);
        sim_tensor_unref(p);
        rows_put(a[KC_ARG].t, b * L * T, kc);
        rows_put(a[VC_ARG].t, b * L * T, vc);
        rows_put(a[OUT_ARG].t, b * T, o);
    }
    return 0;
}

static const struct sim_kparam params[] = {
    {"layers", SIM_KP_INT, "2", "transformer layers"},
    {"dim", SIM_KP_INT, "32", "model width d"},
    {"heads", SIM_KP_INT, "2", "attention heads (must divide dim)"},
    {"ff", SIM_KP_INT, "64", "MLP width"},
    {"prompt", SIM_KP_INT, "4", "prompt tokens (prefill)"},
    {"gen", SIM_KP_INT, "4", "generated tokens (decode)"},
    {"eps", SIM_KP_FLOAT, "1e-6", "rmsnorm epsilon"},
    {"pes", SIM_KP_INT, "1", "sequences, one per PE (0: every PE)"},
    {"dtype", SIM_KP_DTYPE, "f32",
     "weights, KV caches and out (the rest runs in f32): f32, f16, bf16"},
    {NULL, SIM_KP_INT, NULL, NULL},
};

static const struct sim_karg_desc args[] = {
    {"prompt", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"wq", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"wk", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"wv", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"wo", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"w1", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"w2", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"kcache", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"vcache", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"scratch", SIM_KARG_TENSOR, "f32", NULL, NULL},
    {"out", SIM_KARG_TENSOR, "dtype", NULL, NULL},
    {"layers", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"heads", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"prompt", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"gen", SIM_KARG_SCALAR, "i32", NULL, NULL},
    {"eps", SIM_KARG_SCALAR, "f32", NULL, NULL},
    {NULL, SIM_KARG_TENSOR, NULL, NULL, NULL},
};

const struct sim_kernel sim_kernel_llm_decode = {
    .name = "llm_decode",
    .summary = "a small transformer: prefill a prompt, then decode tokens with a growing KV cache",
    .args = args,
    .fn = llm_decode,
    .params = params,
    .setup = setup,
    .reference = reference,
};

/* ---- reference ----------------------------------------------------------------------------- */

/*
 * The reference computes the kernel's math at the kernel's precision: its math ops run on
 * f32 tensors, so every elementwise result here is a float (products, sums of two, the
 * exponential, 1 / sqrt), reductions over an axis (sum, mean) add up in double and round
 * once, and dots accumulate in f32 in index order with fused multiply-adds (as the BLAS
 * kernels of x86-64 do). The chain of a decode is long (every token feeds the next) and
 * its f16 roundings amplify the last bit of an f32 intermediate: a double-precision
 * reference would disagree with an f32 execution by more than ADR-0020 D11's f16
 * tolerance now and then, and at large sizes by more than its f32 one.
 */

/* y (cols) = x (rows) @ W[l] (rows x cols) */
static void matvec(const struct sim_tensor *w, int64_t l, int64_t nrows, int64_t cols,
                   const float *x, float *y)
{
    for (int64_t j = 0; j < cols; j++) {
        float acc = 0;
        for (int64_t i = 0; i < nrows; i++)
            acc = fmaf(x[i], (float)sim_tensor_get(w, (size_t)((l * nrows + i) * cols + j)), acc);
        y[j] = acc;
    }
}

/* h = x * rsqrt(mean(x * x) + eps), rounded to dt (the dots' operand). */
static void ref_norm(const float *x, int64_t d, float eps, enum sim_dtype dt, float *h)
{
    double ss = 0;
    for (int64_t i = 0; i < d; i++)
        ss += (double)(x[i] * x[i]);
    float r = 1.0f / sqrtf((float)(ss / (double)d) + eps);
    for (int64_t i = 0; i < d; i++)
        h[i] = (float)sim_kutil_round(dt, x[i] * r);
}

void sim_kref_llm_decode(const struct sim_kref_llm *s, const struct sim_tensor *prompt,
                         const struct sim_tensor *wq, const struct sim_tensor *wk,
                         const struct sim_tensor *wv, const struct sim_tensor *wo,
                         const struct sim_tensor *w1, const struct sim_tensor *w2,
                         struct sim_tensor *kcache, struct sim_tensor *vcache,
                         struct sim_tensor *out)
{
    int64_t D = s->d, F = s->ff, H = s->heads, dh = D / H, T = s->prompt + s->gen;
    enum sim_dtype dt = out->dtype;
    size_t wide = (size_t)(F > D ? F : D);
    float *x = sim_xcalloc((size_t)D, sizeof(float)), *h = sim_xcalloc((size_t)D, sizeof(float));
    float *v = sim_xcalloc(wide, sizeof(float)), *y = sim_xcalloc(wide, sizeof(float));
    float *q = sim_xcalloc((size_t)D, sizeof(float)), *o = sim_xcalloc((size_t)D, sizeof(float));
    float *p = sim_xcalloc((size_t)T, sizeof(float));
    float eps = (float)s->eps, scale = (float)(1.0 / sqrt((double)dh));
    for (int64_t t = 0; t < T; t++) {
        /* a prompt token, else x goes on from the last token's state */
        for (int64_t i = 0; t < s->prompt && i < D; i++)
            x[i] = (float)sim_tensor_get(prompt, (size_t)(t * D + i));
        for (int64_t l = 0; l < s->layers; l++) {
            size_t crow = (size_t)((l * T + t) * D);
            ref_norm(x, D, eps, dt, h);
            matvec(wk, l, D, D, h, y);
            for (int64_t i = 0; i < D; i++)
                sim_tensor_set(kcache, crow + (size_t)i, y[i]);
            matvec(wv, l, D, D, h, y);
            for (int64_t i = 0; i < D; i++)
                sim_tensor_set(vcache, crow + (size_t)i, y[i]);
            matvec(wq, l, D, D, h, q);
            for (int64_t hd = 0; hd < H; hd++) {
                /* scores over the positions 0..t, their softmax, the weighted values */
                float mx = -INFINITY;
                for (int64_t j = 0; j <= t; j++) {
                    double sc = 0;
                    for (int64_t i = hd * dh; i < (hd + 1) * dh; i++)
                        sc += (double)(q[i] * (float)sim_tensor_get(kcache,
                                                                    (size_t)((l * T + j) * D + i)));
                    p[j] = (float)sc * scale;
                    mx = p[j] > mx ? p[j] : mx;
                }
                double sum = 0;
                for (int64_t j = 0; j <= t; j++)
                    sum += (double)(p[j] = expf(p[j] - mx));
                for (int64_t j = 0; j <= t; j++)
                    p[j] = p[j] / (float)sum;
                for (int64_t i = hd * dh; i < (hd + 1) * dh; i++) {
                    double acc = 0;
                    for (int64_t j = 0; j <= t; j++)
                        acc +=
                            (double)((float)sim_tensor_get(vcache, (size_t)((l * T + j) * D + i)) *
                                     p[j]);
                    o[i] = (float)sim_kutil_round(dt, (float)acc);
                }
            }
            matvec(wo, l, D, D, o, y);
            for (int64_t i = 0; i < D; i++)
                x[i] += y[i];
            ref_norm(x, D, eps, dt, h);
            matvec(w1, l, D, F, h, v);
            for (int64_t i = 0; i < F; i++)
                v[i] = (float)sim_kutil_round(dt, 1.0f / (1.0f + expf(-v[i])) * v[i]);
            matvec(w2, l, F, D, v, y);
            for (int64_t i = 0; i < D; i++)
                x[i] += y[i];
        }
        for (int64_t i = 0; i < D; i++)
            sim_tensor_set(out, (size_t)(t * D + i), x[i]);
    }
    free(x);
    free(h);
    free(v);
    free(y);
    free(q);
    free(o);
    free(p);
}
