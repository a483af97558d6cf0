/*
 * GEMMs of phase 2 (see exec.h): f32, f16 and bf16 through OpenBLAS's cblas_sgemm in f32
 * (16-bit accumulators emulated exactly with loops), integers exactly with C loops; a batch
 * of identical GEMMs sharing an operand as one call (the other operands stacked as rows or
 * side by side as columns) and the rule saying when that pays. The only file of npuscope
 * that includes <cblas.h>.
 */
#include "sim/phase2/exec_int.h"

#include "sim/util/xalloc.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

/* Element (r, c) of op(X) for a matrix stored with layout col and transpose flag t, whose
 * stored logical shape is rows x cols: its flat index. */
static size_t mat_index(size_t r, size_t c, bool t, bool col, size_t rows, size_t cols)
{
    size_t i = t ? c : r, j = t ? r : c; /* (i, j) in the stored logical matrix */
    return col ? j * rows + i : i * cols + j;
}

/* op(A) (m x k) of batch b as a row-major f32 or i64 buffer. */
static void canon_f32(const float *src, bool t, bool col, size_t rows, size_t cols, size_t m,
                      size_t k, float *dst)
{
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            dst[i * k + p] = src[mat_index(i, p, t, col, rows, cols)];
}

static void canon_i64(const int64_t *src, bool t, bool col, size_t rows, size_t cols, size_t m,
                      size_t k, int64_t *dst)
{
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            dst[i * k + p] = src[mat_index(i, p, t, col, rows, cols)];
}

/* Stored logical shape (rows, cols) of an operand: its last two dimensions. */
static void mat_rc(const struct operand *o, size_t *rows, size_t *cols)
{
    *rows = (size_t)o->shape[o->ndim - 2];
    *cols = (size_t)o->shape[o->ndim - 1];
}

static float round_acc(float v, enum sim_dtype acc)
{
    if (acc == SIM_F16)
        return sim_f16_to_f32(sim_f32_to_f16(v));
    if (acc == SIM_BF16)
        return sim_bf16_to_f32(sim_f32_to_bf16(v));
    return v;
}

static void gemm_float(struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k, nb = (size_t)g->batch;
    float *oa, *ob, *oc = NULL;
    const float *A = sim_exec_as_f32(o->tin[0], &oa), *B = sim_exec_as_f32(o->tin[1], &ob);
    size_t csz = nb * m * n;
    /* C starts at zero (a new tensor, or calloc) or at the accumulated value */
    float *C = o->tout->dtype == SIM_F32 ? sim_tensor_data(o->tout)
                                         : (oc = sim_xcalloc(csz ? csz : 1, sizeof(float)));
    if (g->accumulate) {
        float *o0;
        const float *C0 = sim_exec_as_f32(o->tin[2], &o0);
        if (C0 != C) /* C is the accumulator itself when the output was reused */
            memcpy(C, C0, csz * sizeof(float));
        free(o0);
    }
    float beta = g->accumulate ? 1.0f : 0.0f;
    size_t ar, ac, br, bc;
    mat_rc(&o->in[0], &ar, &ac);
    mat_rc(&o->in[1], &br, &bc);
    size_t astep = g->a_batched ? ar * ac : 0, bstep = g->b_batched ? br * bc : 0;

    if (g->dtype_acc == SIM_F32) {
        /* One order for the call: the output's. An operand in the other layout is its
         * transpose in this one. */
        bool colo = g->out_col_major;
        enum CBLAS_ORDER order = colo ? CblasColMajor : CblasRowMajor;
        bool ta = g->transpose_a ^ (g->a_col_major != colo);
        bool tb = g->transpose_b ^ (g->b_col_major != colo);
        size_t lda = g->a_col_major ? ar : ac, ldb = g->b_col_major ? br : bc;
        size_t ldc = colo ? m : n;
        if (lda == 0)
            lda = 1;
        if (ldb == 0)
            ldb = 1;
        if (ldc == 0)
            ldc = 1;
        if (m && n && k)
            for (size_t b = 0; b < nb; b++)
                cblas_sgemm(order, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                            (blasint)m, (blasint)n, (blasint)k, 1.0f, A + b * astep, (blasint)lda,
                            B + b * bstep, (blasint)ldb, beta, C + b * m * n, (blasint)ldc);
    } else {
        /* a 16-bit accumulator: every partial sum rounded to it, in k order */
        float *ca = sim_xmalloc((m * k + 1) * sizeof(float));
        float *cbt = sim_xmalloc((n * k + 1) * sizeof(float));
        for (size_t b = 0; b < nb; b++) {
            canon_f32(A + b * astep, g->transpose_a, g->a_col_major, ar, ac, m, k, ca);
            /* op(B)^T as n x k: row j is column j of op(B) */
            canon_f32(B + b * bstep, !g->transpose_b, g->b_col_major, br, bc, n, k, cbt);
            float *Cb = C + b * m * n;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    size_t ci = g->out_col_major ? j * m + i : i * n + j;
                    /* C holds the accumulated value only when accumulating: a new output's
                     * bytes are uninitialised */
                    float acc = g->accumulate ? round_acc(Cb[ci], g->dtype_acc) : 0.0f;
                    for (size_t p = 0; p < k; p++)
                        acc = round_acc(acc + ca[i * k + p] * cbt[j * k + p], g->dtype_acc);
                    Cb[ci] = acc;
                }
        }
        free(ca);
        free(cbt);
    }
    if (oc) {
        sim_exec_from_f32(oc, o->tout);
        free(oc);
    }
    free(oa);
    free(ob);
}

static void gemm_int(struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k, nb = (size_t)g->batch;
    int64_t *A = sim_exec_as_i64(o->tin[0]), *B = sim_exec_as_i64(o->tin[1]);
    size_t ar, ac, br, bc;
    mat_rc(&o->in[0], &ar, &ac);
    mat_rc(&o->in[1], &br, &bc);
    size_t astep = g->a_batched ? ar * ac : 0, bstep = g->b_batched ? br * bc : 0;
    size_t csz = nb * m * n;
    int64_t *C =
        g->accumulate ? sim_exec_as_i64(o->tin[2]) : sim_xcalloc(csz ? csz : 1, sizeof(*C));
    int64_t *ca = sim_xmalloc((m * k + 1) * sizeof(*ca));
    int64_t *cb = sim_xmalloc((k * n + 1) * sizeof(*cb));
    int64_t *row = sim_xmalloc((n ? n : 1) * sizeof(*row));
    bool i32 = g->dtype_acc != SIM_I64;
    for (size_t b = 0; b < nb; b++) {
        canon_i64(A + b * astep, g->transpose_a, g->a_col_major, ar, ac, m, k, ca);
        canon_i64(B + b * bstep, g->transpose_b, g->b_col_major, br, bc, k, n, cb);
        int64_t *Cb = C + b * m * n;
        for (size_t i = 0; i < m; i++) {
            for (size_t j = 0; j < n; j++)
                row[j] = Cb[g->out_col_major ? j * m + i : i * n + j];
            for (size_t p = 0; p < k; p++) {
                int64_t a = ca[i * k + p];
                const int64_t *bp = cb + p * n;
                for (size_t j = 0; j < n; j++)
                    row[j] = WADD(row[j], WMUL(a, bp[j]));
            }
            for (size_t j = 0; j < n; j++) {
                /* an i32 accumulator wraps at 32 bits */
                int64_t v = i32 ? (int64_t)(int32_t)(uint32_t)(uint64_t)row[j] : row[j];
                Cb[g->out_col_major ? j * m + i : i * n + j] = v;
            }
        }
    }
    sim_exec_from_i64(C, o->tout);
    free(row);
    free(ca);
    free(cb);
    free(C);
    free(A);
    free(B);
}

bool sim_exec_gemm_stackable(const struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    /* op(A) is row-major when a stored transpose is read column-major, or neither */
    return sim_dtype_is_float(g->dtype_in_a) && sim_dtype_is_float(g->dtype_in_b) &&
           g->dtype_acc == SIM_F32 && g->batch == 1 && !g->out_col_major &&
           g->transpose_a == g->a_col_major;
}

bool sim_exec_gemm_rows_adjacent(struct xop *const *ops, size_t n)
{
    size_t mk = (size_t)ops[0]->g.m * (size_t)ops[0]->g.k;
    for (size_t i = 0; i < n; i++) {
        const struct sim_tensor *a = ops[i]->tin[0];
        if (a->dtype != SIM_F32 ||
            (i && (const float *)sim_tensor_cdata(a) !=
                      (const float *)sim_tensor_cdata(ops[i - 1]->tin[0]) + mk))
            return false;
    }
    return true;
}

void sim_exec_gemm_run_stacked(struct xop *const *ops, size_t cnt)
{
    const struct sim_exec_gemm *g = &ops[0]->g;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k, mn = m * n, mk = m * k;
    float *ob, *oa = NULL;
    const float *B = sim_exec_as_f32(ops[0]->tin[1], &ob);
    const float *A;
    if (sim_exec_gemm_rows_adjacent(ops, cnt)) {
        A = sim_tensor_cdata(ops[0]->tin[0]);
    } else {
        oa = sim_xmalloc((cnt * mk + 1) * sizeof(float));
        for (size_t i = 0; i < cnt; i++) {
            float *own;
            const float *ai = sim_exec_as_f32(ops[i]->tin[0], &own);
            memcpy(oa + i * mk, ai, mk * sizeof(float));
            free(own);
        }
        A = oa;
    }
    /* C starts at zero or at the accumulated values, stacked like A */
    float *C = sim_xcalloc(cnt * mn + 1, sizeof(float));
    if (g->accumulate)
        for (size_t i = 0; i < cnt; i++) {
            float *own;
            const float *c0 = sim_exec_as_f32(ops[i]->tin[2], &own);
            memcpy(C + i * mn, c0, mn * sizeof(float));
            free(own);
        }
    size_t br, bc;
    mat_rc(&ops[0]->in[1], &br, &bc);
    size_t ldb = g->b_col_major ? br : bc;
    bool tb = g->transpose_b ^ g->b_col_major; /* the call is row-major, as C */
    if (m && n && k)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)(cnt * m),
                    (blasint)n, (blasint)k, 1.0f, A, (blasint)k, B, (blasint)(ldb ? ldb : 1),
                    g->accumulate ? 1.0f : 0.0f, C, (blasint)n);
    for (size_t i = 0; i < cnt; i++) {
        struct sim_tensor *out = ops[i]->tout;
        if (out->dtype == SIM_F32)
            memcpy(sim_tensor_data(out), C + i * mn, mn * sizeof(float));
        else
            sim_exec_from_f32(C + i * mn, out);
    }
    free(C);
    free(oa);
    free(ob);
}

bool sim_exec_gemm_columnable(const struct xop *o)
{
    const struct sim_exec_gemm *g = &o->g;
    /* op(B) is row-major when a stored transpose is read column-major, or neither */
    return sim_dtype_is_float(g->dtype_in_a) && sim_dtype_is_float(g->dtype_in_b) &&
           g->dtype_acc == SIM_F32 && g->batch == 1 && !g->out_col_major &&
           g->transpose_b == g->b_col_major;
}

void sim_exec_gemm_run_columns(struct xop *const *ops, size_t cnt)
{
    const struct sim_exec_gemm *g = &ops[0]->g;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k, wn = cnt * n;
    size_t ar, ac, br, bc;
    mat_rc(&ops[0]->in[0], &ar, &ac);
    mat_rc(&ops[0]->in[1], &br, &bc);
    size_t lda = g->a_col_major ? ar : ac, ldb = g->b_col_major ? br : bc;
    bool ta = g->transpose_a ^ g->a_col_major; /* the call is row-major, as C */
    float *oa;
    const float *A = sim_exec_as_f32(ops[0]->tin[0], &oa);
    /* op(B_i) (k x n, row-major with ldb) into columns i n .. i n + n - 1 of W (k x wn) */
    float *W = sim_xmalloc((k * wn + 1) * sizeof(float));
    for (size_t i = 0; i < cnt; i++) {
        float *own;
        const float *bi = sim_exec_as_f32(ops[i]->tin[1], &own);
        for (size_t q = 0; q < k; q++)
            memcpy(W + q * wn + i * n, bi + q * ldb, n * sizeof(float));
        free(own);
    }
    /* C (m x wn) starts at zero or at the accumulated values, side by side like W */
    float *C = sim_xcalloc(m * wn + 1, sizeof(float));
    if (g->accumulate)
        for (size_t i = 0; i < cnt; i++) {
            float *own;
            const float *c0 = sim_exec_as_f32(ops[i]->tin[2], &own);
            for (size_t r = 0; r < m; r++)
                memcpy(C + r * wn + i * n, c0 + r * n, n * sizeof(float));
            free(own);
        }
    if (m && n && k)
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (blasint)m,
                    (blasint)wn, (blasint)k, 1.0f, A, (blasint)(lda ? lda : 1), W, (blasint)wn,
                    g->accumulate ? 1.0f : 0.0f, C, (blasint)wn);
    float *one = NULL; /* a result gathered for conversion */
    for (size_t i = 0; i < cnt; i++) {
        struct sim_tensor *out = ops[i]->tout;
        float *dst = out->dtype == SIM_F32
                         ? sim_tensor_data(out)
                         : (one ? one : (one = sim_xmalloc((m * n + 1) * sizeof(float))));
        for (size_t r = 0; r < m; r++)
            memcpy(dst + r * n, C + r * wn + i * n, n * sizeof(float));
        if (out->dtype != SIM_F32)
            sim_exec_from_f32(one, out);
    }
    free(one);
    free(C);
    free(W);
    free(oa);
}

bool sim_exec_stacking_pays(enum sim_exec_stacking how, int64_t m, int64_t n, int64_t k)
{
    /* in floats copied, as measured (phase2_bench's table): a call's fixed cost, and what
     * a strided copy costs per row besides its floats */
    enum { CALL_COST = 512, ROW_COST = 8 };
    double fm = (double)m, fn = (double)n, fk = (double)k, copies;
    switch (how) {
    case SIM_EXEC_STACK_ROWS_IN_PLACE: copies = fm * fn; break;
    case SIM_EXEC_STACK_ROWS_COPIED: copies = fm * fn + fm * fk; break;
    default: copies = (fk + fm) * (fn + ROW_COST); break; /* B in, C out, row by row */
    }
    /* packing the shared operand once instead of once per GEMM: B (k x n) for rows, A
     * (m x k) for columns */
    double pack = (how == SIM_EXEC_STACK_COLUMNS ? fm * fk : fk * fn) / 4;
    return copies <= (pack > CALL_COST ? pack : CALL_COST);
}

void sim_exec_gemm_run(struct xop *o)
{
    if (sim_dtype_is_float(o->g.dtype_in_a))
        gemm_float(o);
    else
        gemm_int(o);
}
