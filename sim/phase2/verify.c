/*
 * Verification (see verify.h): the D11 comparison, the op-by-op checker installed as the
 * executor's hook, the capture of kernel launches during phase 1 (an op log observer that
 * reads each launch's tensors from the memory store when the launch starts) and phase 2 of
 * a run with its report.
 */
#include "sim/phase2/verify.h"

#include "sim/chip/chip.h"
#include "sim/util/escape.h"
#include "sim/phase2/exec.h"
#include "sim/kernel/kernel.h"
#include "sim/chip/oplog.h"
#include "sim/host/run.h"
#include "sim/program/workload.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tolerances and comparison ------------------------------------------------------------ */

struct sim_verify_tol sim_verify_tolerance(enum sim_dtype dtype)
{
    switch (dtype) {
    case SIM_F32: return (struct sim_verify_tol){1e-5, 1e-5, false};
    case SIM_F16: return (struct sim_verify_tol){1e-3, 1e-3, false};
    case SIM_BF16: return (struct sim_verify_tol){1e-2, 1e-2, false};
    default: return (struct sim_verify_tol){0, 0, true};
    }
}

static bool is_int(enum sim_dtype t)
{
    return !sim_dtype_is_float(t);
}

/* Element i of an integer (or bool) tensor, exactly. */
static int64_t get_int(const struct sim_tensor *t, size_t i)
{
    const unsigned char *p =
        (const unsigned char *)sim_tensor_cdata(t) + i * sim_dtype_size(t->dtype);
    switch (t->dtype) {
    case SIM_I8: return *(const int8_t *)p;
    case SIM_I16: return *(const int16_t *)(const void *)p;
    case SIM_I32: return *(const int32_t *)(const void *)p;
    case SIM_I64: return *(const int64_t *)(const void *)p;
    case SIM_U8: return *p;
    case SIM_U16: return *(const uint16_t *)(const void *)p;
    case SIM_U32: return *(const uint32_t *)(const void *)p;
    case SIM_BOOL: return *p != 0;
    default: break;
    }
    assert(!"not an integer dtype");
    return 0;
}

/* Element i of a float tensor as double (sim_tensor_get without its checks: this runs
 * over every element of every output). */
static inline double get_float(const struct sim_tensor *t, size_t i)
{
    switch (t->dtype) {
    case SIM_F32: return ((const float *)sim_tensor_cdata(t))[i];
    case SIM_F16: return sim_f16_to_f32(((const uint16_t *)sim_tensor_cdata(t))[i]);
    case SIM_BF16: return sim_bf16_to_f32(((const uint16_t *)sim_tensor_cdata(t))[i]);
    default: return sim_tensor_get(t, i);
    }
}

static void unravel(size_t flat, unsigned ndim, const int64_t *shape, int64_t *multi)
{
    for (unsigned k = ndim; k-- > 0;) {
        size_t d = shape[k] > 0 ? (size_t)shape[k] : 1;
        multi[k] = (int64_t)(flat % d);
        flat /= d;
    }
}

/* "[1, 2]" */
static void multi_format(unsigned ndim, const int64_t *m, char *buf, size_t size)
{
    size_t len = 0;
    len += (size_t)snprintf(buf, size, "[");
    for (unsigned k = 0; k < ndim && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%" PRId64, k ? ", " : "", m[k]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
}

static bool same_shape(const struct sim_tensor *a, const struct sim_tensor *b)
{
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, a->ndim * sizeof(*a->shape)) == 0;
}

void sim_verify_compare(const char *name, const struct sim_tensor *got,
                        const struct sim_tensor *expected, struct sim_verify_output *out)
{
    sim_verify_compare_bounded(name, got, expected, NULL, NULL, out);
}

void sim_verify_compare_bounded(const char *name, const struct sim_tensor *got,
                                const struct sim_tensor *expected, const double *bound,
                                const char *what, struct sim_verify_output *out)
{
    memset(out, 0, sizeof(*out));
    out->name = sim_xstrdup(name);
    if (bound)
        out->bound_what = sim_xstrdup(what && *what ? what : "a forward error bound");
    out->dtype = expected->dtype;
    out->ndim = expected->ndim;
    memcpy(out->shape, expected->shape, expected->ndim * sizeof(*expected->shape));
    out->tol = sim_verify_tolerance(expected->dtype);
    char a[SIM_MAX_DIMS * 22 + 8], b[SIM_MAX_DIMS * 22 + 8];
    if (got->dtype != expected->dtype) {
        out->problem = sim_xasprintf("the result is %s, the reference %s",
                                     sim_dtype_name(got->dtype), sim_dtype_name(expected->dtype));
        return;
    }
    if (!same_shape(got, expected)) {
        out->problem =
            sim_xasprintf("the result has shape %s, the reference %s",
                          sim_shape_format(got->ndim, got->shape, a, sizeof(a)),
                          sim_shape_format(expected->ndim, expected->shape, b, sizeof(b)));
        return;
    }
    size_t n = sim_tensor_numel(expected);
    out->n_elements = n;
    for (size_t i = 0; i < n; i++) {
        double x, y, tol = 0;
        bool ok;
        if (out->tol.exact) {
            int64_t p = get_int(got, i), q = get_int(expected, i);
            ok = p == q;
            x = (double)p, y = (double)q;
        } else {
            x = get_float(got, i), y = get_float(expected, i);
            double bi = bound && isfinite(bound[i]) && bound[i] > 0 ? bound[i] : 0;
            if (bi > out->max_bound)
                out->max_bound = bi;
            tol = out->tol.atol + out->tol.rtol * fabs(y) + bi;
            if (isinf(x) || isinf(y))
                ok = x == y; /* infinities are close only to themselves */
            else
                ok = fabs(x - y) <= tol; /* NaN: false */
        }
        if (isfinite(x) && isfinite(y)) {
            double e = fabs(x - y);
            if (e > out->max_abs_err)
                out->max_abs_err = e;
            if (y != 0 && e / fabs(y) > out->max_rel_err)
                out->max_rel_err = e / fabs(y);
        }
        if (ok)
            continue;
        if (!out->n_mismatch++) {
            out->has_first = true;
            out->first_index = i;
            unravel(i, expected->ndim, expected->shape, out->first_multi);
            out->first_got = x;
            out->first_expected = y;
            out->first_tol = tol;
        }
    }
    out->pass = out->n_mismatch == 0;
}

void sim_verify_output_fini(struct sim_verify_output *o)
{
    free(o->name);
    free(o->bound_what);
    free(o->problem);
    memset(o, 0, sizeof(*o));
}

/* ---- checking op by op ---------------------------------------------------------------------- */

/* A range some replayed op wrote last. */
struct written {
    char *space; /* owned */
    uint64_t lo, hi;
    const struct sim_op_record *writer; /* borrowed for the replay */
    size_t writer_index;
    bool derived; /* its data comes from phase 2's computation (not from phase 1's memory) */
};

struct sim_verify_ops {
    struct written *w;
    size_t n, cap;
    size_t checked;
    bool failed;
    struct sim_verify_op_failure fail;
};

struct sim_verify_ops *sim_verify_ops_new(void)
{
    return sim_xcalloc(1, sizeof(struct sim_verify_ops));
}

static void failure_fini(struct sim_verify_op_failure *f)
{
    free(f->op_name);
    free(f->component_id);
    free(f->what);
    memset(f, 0, sizeof(*f));
}

void sim_verify_ops_free(struct sim_verify_ops *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++)
        free(v->w[i].space);
    free(v->w);
    failure_fini(&v->fail);
    free(v);
}

size_t sim_verify_ops_checked(const struct sim_verify_ops *v)
{
    return v->checked;
}

const struct sim_verify_op_failure *sim_verify_ops_failure(const struct sim_verify_ops *v)
{
    return v->failed ? &v->fail : NULL;
}

static int fail_at(struct sim_verify_ops *v, size_t index, const struct sim_op_record *r,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_at(struct sim_verify_ops *v, size_t index, const struct sim_op_record *r,
                   const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    v->failed = true;
    v->fail.index = index;
    v->fail.op_name = sim_xstrdup(r->op_name);
    v->fail.component_id = sim_xstrdup(r->component_id);
    v->fail.t_start = r->t_start;
    v->fail.what = sim_xstrdup(what);
    return 1;
}

/* The newest written range overlapping [lo, hi) of space, and whether any is derived. */
static const struct written *written_at(const struct sim_verify_ops *v, const char *space,
                                        uint64_t lo, uint64_t hi, bool *derived)
{
    const struct written *newest = NULL;
    *derived = false;
    for (size_t i = v->n; i-- > 0;) {
        const struct written *w = &v->w[i];
        if (w->lo < hi && lo < w->hi && strcmp(w->space, space) == 0) {
            if (!newest)
                newest = w;
            *derived |= w->derived;
        }
    }
    return newest;
}

static void note_write(struct sim_verify_ops *v, const char *space, uint64_t lo, uint64_t hi,
                       const struct sim_exec_op_data *op, bool derived)
{
    struct written *w = NULL;
    for (size_t i = 0; i < v->n && !w; i++) /* the same range again: replace it */
        if (v->w[i].lo == lo && v->w[i].hi == hi && strcmp(v->w[i].space, space) == 0)
            w = &v->w[i];
    if (w) {
        /* keep the order "newest last" */
        struct written keep = *w;
        memmove(w, w + 1, (size_t)(&v->w[v->n] - (w + 1)) * sizeof(*w));
        v->w[v->n - 1] = keep;
        w = &v->w[v->n - 1];
    } else {
        if (v->n == v->cap) {
            v->cap = v->cap ? 2 * v->cap : 64;
            v->w = sim_xreallocarray(v->w, v->cap, sizeof(*v->w));
        }
        w = &v->w[v->n++];
        w->space = sim_xstrdup(space);
        w->lo = lo;
        w->hi = hi;
    }
    w->writer = op->rec;
    w->writer_index = op->index;
    w->derived = derived;
}

/* The value of element i of t as stored (ints exactly, as double). */
static double value_at(const struct sim_tensor *t, size_t i)
{
    return is_int(t->dtype) ? (double)get_int(t, i) : sim_tensor_get(t, i);
}

/* What a cast of v to dtype stores (floats round, integers truncate and saturate, bool
 * tests nonzero), as the executor's conversions do. */
static double cast_to(double v, enum sim_dtype dtype)
{
    int64_t one = 1;
    struct sim_tensor *t = sim_tensor_new(dtype, 1, &one);
    sim_tensor_set(t, 0, v);
    double r = value_at(t, 0);
    sim_tensor_unref(t);
    return r;
}

/* Compare element i of a result with its expected value (slack: extra absolute
 * tolerance). Writes a message and returns false on a mismatch. */
static bool element_ok(const struct sim_tensor *got, size_t i, double expected, double slack,
                       char *msg, size_t size)
{
    struct sim_verify_tol tol = sim_verify_tolerance(got->dtype);
    double g = value_at(got, i);
    bool ok;
    if (tol.exact) {
        expected = cast_to(expected, got->dtype);
        ok = g == expected;
    } else if (isinf(g) || isinf(expected)) {
        ok = g == expected;
    } else if (isnan(expected)) {
        ok = isnan(g); /* the recomputation's NaN is the op's NaN */
    } else {
        ok = fabs(g - expected) <= tol.atol + tol.rtol * fabs(expected) + slack;
    }
    if (!ok) {
        int64_t m[SIM_MAX_DIMS];
        char idx[SIM_MAX_DIMS * 22 + 8];
        unravel(i, got->ndim, got->shape, m);
        multi_format(got->ndim, m, idx, sizeof(idx));
        snprintf(msg, size, "result element %s (flat %zu): got %.9g, expected %.9g", idx, i, g,
                 expected);
    }
    return ok;
}

/* Flat index in a stored matrix operand of element (r, c) of op(X). */
static size_t gemm_index(size_t r, size_t c, bool t, bool col, size_t rows, size_t cols)
{
    size_t i = t ? c : r, j = t ? r : c;
    return col ? j * rows + i : i * cols + j;
}

static double f16_round(double v, enum sim_dtype acc)
{
    if (acc == SIM_F16)
        return sim_f16_to_f32(sim_f32_to_f16((float)v));
    if (acc == SIM_BF16)
        return sim_bf16_to_f32(sim_f32_to_bf16((float)v));
    return v;
}

static bool check_gemm(const struct sim_exec_op_data *op, char *msg, size_t size)
{
    const struct sim_exec_gemm *g = &op->gemm;
    const struct sim_tensor *A = op->inputs[0], *B = op->inputs[1], *out = op->output;
    const struct sim_tensor *C0 = g->accumulate ? op->inputs[2] : NULL;
    size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
    size_t ar = (size_t)A->shape[A->ndim - 2], ac = (size_t)A->shape[A->ndim - 1];
    size_t br = (size_t)B->shape[B->ndim - 2], bc = (size_t)B->shape[B->ndim - 1];
    bool ints = is_int(g->dtype_in_a);
    /* a k-term dot product accumulated in dtype_acc is within gamma_k * sum |a||b| of the
     * exact one: the bound the output check uses too (sim_kref_gamma) */
    double gamma = sim_kref_gamma(k, g->dtype_acc);
    for (size_t b = 0; b < (size_t)g->batch; b++) {
        size_t abase = g->a_batched ? b * ar * ac : 0, bbase = g->b_batched ? b * br * bc : 0;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                size_t oi = b * m * n + (g->out_col_major ? j * m + i : i * n + j);
                double s = C0 ? value_at(C0, oi) : 0, bound = fabs(s);
                int64_t si = C0 && ints ? get_int(C0, oi) : 0;
                bool lowp = !ints && g->dtype_acc != SIM_F32;
                if (lowp)
                    s = f16_round(s, g->dtype_acc);
                for (size_t p = 0; p < k; p++) {
                    size_t ia = abase + gemm_index(i, p, g->transpose_a, g->a_col_major, ar, ac);
                    size_t ib = bbase + gemm_index(p, j, g->transpose_b, g->b_col_major, br, bc);
                    if (ints) {
                        si = (int64_t)((uint64_t)si +
                                       (uint64_t)get_int(A, ia) * (uint64_t)get_int(B, ib));
                        continue;
                    }
                    double x = sim_tensor_get(A, ia), y = sim_tensor_get(B, ib);
                    if (lowp)
                        s = f16_round((float)s + (float)x * (float)y, g->dtype_acc);
                    else
                        s += x * y;
                    bound += fabs(x * y);
                }
                if (ints) {
                    if (g->dtype_acc == SIM_I32)
                        si = (int32_t)(uint32_t)(uint64_t)si; /* the accumulator's width */
                    double e = (double)si;
                    bool ok;
                    if (is_int(out->dtype)) {
                        /* an integer result wraps to its width, like numpy's astype */
                        int64_t want = si, have = get_int(out, oi);
                        size_t bits = 8 * sim_dtype_size(out->dtype);
                        if (bits < 64) {
                            uint64_t mask = ((uint64_t)1 << bits) - 1;
                            ok = ((uint64_t)want & mask) == ((uint64_t)have & mask);
                        } else {
                            ok = want == have;
                        }
                        if (!ok) {
                            snprintf(msg, size,
                                     "result element (flat %zu): got %" PRId64
                                     ", expected %" PRId64,
                                     oi, have, want);
                            return false;
                        }
                        continue;
                    }
                    if (!element_ok(out, oi, e, 0, msg, size))
                        return false;
                    continue;
                }
                double slack = lowp ? 0 : gamma * bound;
                if (!element_ok(out, oi, s, slack, msg, size))
                    return false;
            }
    }
    return true;
}

/* Index into an input broadcast to the output (numpy rules) for output multi-index m. */
static size_t bcast_index(const struct sim_tensor *in, unsigned ondim, const int64_t *m)
{
    size_t idx = 0;
    unsigned off = ondim - in->ndim;
    for (unsigned k = 0; k < in->ndim; k++) {
        int64_t d = in->shape[k];
        idx = idx * (size_t)d + (d == 1 ? 0 : (size_t)m[k + off]);
    }
    return idx;
}

static bool check_math(const struct sim_exec_op_data *op, char *msg, size_t size)
{
    const struct sim_exec_math_op *mop = sim_exec_math_find(op->math.op, op->n_inputs);
    const struct sim_tensor *out = op->output;
    size_t n = sim_tensor_numel(out);
    if (!mop) {
        snprintf(msg, size, "no math op '%s' with %u inputs", op->math.op, op->n_inputs);
        return false;
    }
    if (mop->shape == SIM_EXEC_MATH_ELEMENTWISE) {
        for (size_t i = 0; i < n; i++) {
            int64_t m[SIM_MAX_DIMS];
            unravel(i, out->ndim, out->shape, m);
            double args[SIM_EXEC_MAX_INPUTS];
            for (unsigned k = 0; k < op->n_inputs; k++)
                args[k] = value_at(op->inputs[k], bcast_index(op->inputs[k], out->ndim, m));
            if (!element_ok(out, i, mop->scalar(args), 0, msg, size))
                return false;
        }
        return true;
    }
    /* a reduction: every input element joins the output element without the axis */
    const struct sim_tensor *in = op->inputs[0];
    size_t nin = sim_tensor_numel(in);
    double *acc = sim_xmalloc((n ? n : 1) * sizeof(*acc));
    double *cnt = sim_xcalloc(n ? n : 1, sizeof(*cnt));
    for (size_t i = 0; i < n; i++)
        acc[i] = mop->init;
    for (size_t e = 0; e < nin; e++) {
        int64_t m[SIM_MAX_DIMS];
        unravel(e, in->ndim, in->shape, m);
        size_t o = 0;
        if (op->math.has_axis)
            for (unsigned k = 0; k < in->ndim; k++)
                if ((int)k != op->math.axis)
                    o = o * (size_t)in->shape[k] + (size_t)m[k];
        acc[o] = mop->combine(acc[o], value_at(in, e));
        cnt[o] += 1;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        ok = element_ok(out, i, mop->finish ? mop->finish(acc[i], cnt[i]) : acc[i], 0, msg, size);
    free(acc);
    free(cnt);
    return ok;
}

/* A math op's input i against its phase-1 snapshot, when phase 2 did not compute it. */
static int check_snapshot(struct sim_verify_ops *v, const struct sim_exec_op_data *op, unsigned i)
{
    const struct sim_value *snaps = sim_value_map_get(op->rec->params, "input_snapshots");
    if (!snaps || snaps->type != SIM_V_LIST || i >= snaps->u.list.len || !op->input_spaces[i])
        return 0;
    const struct sim_value *sv = snaps->u.list.items[i];
    const struct sim_tensor *in = op->inputs[i];
    if (sv->type != SIM_V_TENSOR || sv->u.tensor->nbytes != in->nbytes)
        return 0;
    bool derived;
    const struct written *w = written_at(v, op->input_spaces[i], op->input_addrs[i],
                                         op->input_addrs[i] + in->nbytes, &derived);
    if (derived)
        return 0; /* phase 1 never had this data: its snapshot is not a reference */
    const unsigned char *a = sim_tensor_cdata(in), *b = sim_tensor_cdata(sv->u.tensor);
    size_t at = 0;
    while (at < in->nbytes && a[at] == b[at])
        at++;
    if (at == in->nbytes)
        return 0;
    size_t e = at / sim_dtype_size(in->dtype);
    char where[160];
    snprintf(where, sizeof(where),
             "%s 0x%" PRIx64 " (input %u of op #%zu %s), element %zu: %.9g "
             "in phase 2, %.9g when phase 1 ran it",
             op->input_spaces[i], op->input_addrs[i], i, op->index, op->rec->op_name, e,
             value_at(in, e), value_at(sv->u.tensor, e));
    if (w)
        return fail_at(v, w->writer_index, w->writer, "it wrote %s", where);
    return fail_at(v, op->index, op->rec,
                   "nothing replayed wrote %s (phase 2 starts from phase 1's final memory)", where);
}

int sim_verify_ops_hook(void *ctx, const struct sim_exec_op_data *op)
{
    struct sim_verify_ops *v = ctx;
    if (v->failed)
        return 1;
    char msg[512] = "";
    bool ok = true;
    bool src_derived = false;
    switch (op->kind) {
    case SIM_EXEC_KIND_COPY: {
        const struct sim_tensor *src = op->inputs[0], *out = op->output;
        size_t at = 0;
        const unsigned char *a = sim_tensor_cdata(src), *b = sim_tensor_cdata(out);
        if (src->nbytes != out->nbytes) {
            snprintf(msg, sizeof(msg), "the copy has %zu bytes, its source %zu", out->nbytes,
                     src->nbytes);
            ok = false;
            break;
        }
        while (at < src->nbytes && a[at] == b[at])
            at++;
        if (at < src->nbytes) {
            snprintf(msg, sizeof(msg), "the copy differs from its %s at byte %zu",
                     op->from_snapshot ? "snapshot" : "source", at);
            ok = false;
        }
        if (!op->from_snapshot && op->input_spaces[0])
            written_at(v, op->input_spaces[0], op->input_addrs[0], op->input_addrs[0] + src->nbytes,
                       &src_derived);
        break;
    }
    case SIM_EXEC_KIND_GEMM: ok = check_gemm(op, msg, sizeof(msg)); break;
    case SIM_EXEC_KIND_MATH:
        for (unsigned i = 0; i < op->n_inputs; i++)
            if (check_snapshot(v, op, i))
                return 1;
        ok = check_math(op, msg, sizeof(msg));
        break;
    default: return 0;
    }
    v->checked++;
    if (!ok)
        return fail_at(v, op->index, op->rec, "%s", msg);
    bool derived = op->kind != SIM_EXEC_KIND_COPY || src_derived;
    note_write(v, op->dst_space, op->dst_addr, op->dst_addr + op->output->nbytes, op, derived);
    return 0;
}

/* ---- launches ------------------------------------------------------------------------------- */

struct sim_verify_capture {
    struct sim_run *run;
    struct sim_oplog *log;
    int observer;
    struct sim_launch *launches;
    size_t n, cap;
};

static enum sim_dtype scalar_dtype(enum sim_scalar_dtype t)
{
    switch (t) {
    case SIM_SCALAR_I32: return SIM_I32;
    case SIM_SCALAR_I64: return SIM_I64;
    case SIM_SCALAR_FP16: return SIM_F16;
    case SIM_SCALAR_FP32: return SIM_F32;
    case SIM_SCALAR_BOOL: return SIM_BOOL;
    }
    return SIM_I64;
}

/* The label the workload gives the tensor whose first shard is s: a MemoryWrite to the
 * same place, else a MemoryRead from it. */
static const char *label_of(const struct sim_workload *wl, const struct sim_tensor_shard *s)
{
    for (size_t i = 0; i < wl->n_msgs; i++) {
        const struct sim_host_msg *m = &wl->msgs[i];
        if (m->msg_type == SIM_MSG_MEMORY_WRITE && m->u.write.debug_label &&
            m->u.write.dst_sip == s->sip && m->u.write.dst_cube == s->cube &&
            m->u.write.dst_pe == s->pe && m->u.write.dst_pa == s->pa)
            return m->u.write.debug_label;
    }
    for (size_t i = 0; i < wl->n_msgs; i++) {
        const struct sim_host_msg *m = &wl->msgs[i];
        if (m->msg_type == SIM_MSG_MEMORY_READ && m->u.read.debug_label &&
            m->u.read.src_sip == s->sip && m->u.read.src_cube == s->cube &&
            m->u.read.src_pe == s->pe && m->u.read.src_pa == s->pa)
            return m->u.read.debug_label;
    }
    return NULL;
}

/* True when a MemoryRead after message `after` reads part of one of a's shards. */
static bool read_back(const struct sim_workload *wl, size_t after, const struct sim_kernel_arg *a)
{
    for (size_t i = after + 1; i < wl->n_msgs; i++) {
        const struct sim_host_msg *m = &wl->msgs[i];
        if (m->msg_type != SIM_MSG_MEMORY_READ)
            continue;
        const struct sim_memory_read *r = &m->u.read;
        for (size_t j = 0; j < a->n_shards; j++) {
            const struct sim_tensor_shard *s = &a->shards[j];
            if (r->src_sip == s->sip && r->src_cube == s->cube && r->src_pe == s->pe &&
                r->src_pa < s->pa + s->nbytes && s->pa < r->src_pa + r->nbytes)
                return true;
        }
    }
    return false;
}

/* The whole tensor of argument a: its dtype and shape when the workload gives them and
 * they match its bytes, else bytes. */
static struct sim_tensor *whole_tensor(const struct sim_kernel_arg *a)
{
    uint64_t total = 0;
    for (size_t j = 0; j < a->n_shards; j++)
        if ((uint64_t)(a->shards[j].offset_bytes + a->shards[j].nbytes) > total)
            total = (uint64_t)(a->shards[j].offset_bytes + a->shards[j].nbytes);
    size_t nb;
    if (a->has_dtype && a->ndim > 0 &&
        sim_shape_nbytes(a->tensor_dtype, a->ndim, a->shape, &nb) == 0 && nb == total)
        return sim_tensor_new(a->tensor_dtype, a->ndim, a->shape);
    int64_t n = (int64_t)total;
    return sim_tensor_new(SIM_U8, 1, &n);
}

/* Read every shard of a into t from HBM (where tl_arg finds a kernel's tensor arguments):
 * from the chip (phase 1) or the executor (phase 2). Sets *pending when phase 1 had part
 * of it bound to a pending result. */
static void read_shards(struct sim_chip *chip, struct sim_exec *x, const struct sim_kernel_arg *a,
                        struct sim_tensor *t, bool *pending)
{
    for (size_t j = 0; j < a->n_shards; j++) {
        const struct sim_tensor_shard *s = &a->shards[j];
        int g = sim_chip_pe_index(chip, s->sip, s->cube, s->pe);
        uint64_t off = (uint64_t)s->offset_bytes, n = (uint64_t)s->nbytes;
        if (g < 0 || off + n > t->nbytes)
            continue;
        uint64_t addr = sim_chip_dev_addr(g, (uint64_t)s->pa);
        unsigned char *dst = (unsigned char *)sim_tensor_data(t) + off;
        if (x) {
            sim_exec_read_bytes(x, "hbm", addr, n, dst);
        } else {
            sim_chip_mem_read_bytes(chip, "hbm", addr, n, dst);
            if (pending && sim_chip_pending(chip, "hbm", addr, n))
                *pending = true;
        }
    }
}

static void capture_launch(struct sim_verify_capture *c, size_t index)
{
    const struct sim_workload *wl = sim_run_workload(c->run);
    struct sim_chip *chip = sim_run_chip(c->run);
    const struct sim_kernel_launch *kl = &wl->msgs[index].u.launch;
    const struct sim_kernel *k = sim_kernel_find(kl->kernel_ref.name);
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4;
        c->launches = sim_xreallocarray(c->launches, c->cap, sizeof(*c->launches));
    }
    struct sim_launch *l = &c->launches[c->n++];
    memset(l, 0, sizeof(*l));
    l->kernel = sim_xstrdup(kl->kernel_ref.name);
    l->host_index = index;
    l->args = sim_xcalloc(kl->n_args ? kl->n_args : 1, sizeof(*l->args));
    l->n_args = kl->n_args;
    /* PEs: the distinct placements of the shards */
    int64_t(*seen)[3] = NULL;
    size_t nseen = 0;
    for (size_t i = 0; i < kl->n_args; i++) {
        const struct sim_kernel_arg *a = &kl->args[i];
        struct sim_launch_arg *la = &l->args[i];
        /* a built-in kernel names its arguments in its table; else a tensor has the label
         * of its MemoryWrite */
        const char *table_name = sim_kernel_arg_name(k, i);
        if (a->arg_kind == SIM_ARG_SCALAR) {
            la->name = table_name ? sim_xstrdup(table_name) : sim_xasprintf("arg%zu", i);
            la->scalar_dtype = scalar_dtype(a->dtype);
            la->i = a->dtype == SIM_SCALAR_BOOL ? a->value.b
                    : a->dtype == SIM_SCALAR_I32 || a->dtype == SIM_SCALAR_I64
                        ? a->value.i
                        : (int64_t)a->value.f;
            la->f = a->dtype == SIM_SCALAR_FP16 || a->dtype == SIM_SCALAR_FP32 ? a->value.f
                                                                               : (double)la->i;
            continue;
        }
        la->is_tensor = true;
        const char *label = a->n_shards ? label_of(wl, &a->shards[0]) : NULL;
        la->name = table_name ? sim_xstrdup(table_name)
                   : label    ? sim_xstrdup(label)
                              : sim_xasprintf("arg%zu", i);
        la->is_output = read_back(wl, index, a);
        la->deployed = whole_tensor(a);
        read_shards(chip, NULL, a, la->deployed, &la->pending_input);
        for (size_t j = 0; j < a->n_shards; j++) {
            const struct sim_tensor_shard *s = &a->shards[j];
            bool known = false;
            for (size_t q = 0; q < nseen && !known; q++)
                known = seen[q][0] == s->sip && seen[q][1] == s->cube && seen[q][2] == s->pe;
            if (!known) {
                seen = sim_xreallocarray(seen, nseen + 1, sizeof(*seen));
                seen[nseen][0] = s->sip, seen[nseen][1] = s->cube, seen[nseen][2] = s->pe;
                nseen++;
            }
        }
    }
    free(seen);
    l->npes = (unsigned)nseen;
}

/* The first op of a launch starts: the host program has finished what came before it
 * (it runs its messages one after the other) and the kernel has only begun. */
static void on_op_start(void *ctx, const struct sim_op_record *rec)
{
    struct sim_verify_capture *c = ctx;
    if (rec->note.cmdq_id < 0)
        return;
    size_t index = (size_t)rec->note.cmdq_id;
    if (c->n && c->launches[c->n - 1].host_index == index)
        return; /* the common case: another op of the launch just captured */
    const struct sim_workload *wl = sim_run_workload(c->run);
    if (index >= wl->n_msgs || wl->msgs[index].msg_type != SIM_MSG_KERNEL_LAUNCH)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->launches[i].host_index == index)
            return; /* a later hop of the same launch */
    capture_launch(c, index);
}

struct sim_verify_capture *sim_verify_capture_attach(struct sim_run *r)
{
    struct sim_verify_capture *c = sim_xcalloc(1, sizeof(*c));
    c->run = r;
    c->log = sim_chip_oplog(sim_run_chip(r));
    struct sim_oplog_observer o = {.on_start = on_op_start, .ctx = c};
    c->observer = sim_oplog_observe(c->log, &o);
    return c;
}

void sim_verify_capture_free(struct sim_verify_capture *c)
{
    if (!c)
        return;
    sim_oplog_unobserve(c->log, c->observer);
    for (size_t i = 0; i < c->n; i++) {
        struct sim_launch *l = &c->launches[i];
        for (size_t j = 0; j < l->n_args; j++) {
            free(l->args[j].name);
            sim_tensor_unref(l->args[j].deployed);
            sim_tensor_unref(l->args[j].result);
        }
        free(l->args);
        free(l->kernel);
    }
    free(c->launches);
    free(c);
}

size_t sim_verify_capture_count(const struct sim_verify_capture *c)
{
    return c->n;
}

const struct sim_launch *sim_verify_capture_launch(const struct sim_verify_capture *c, size_t i)
{
    assert(i < c->n);
    return &c->launches[i];
}

/* ---- phase 2 and the report ----------------------------------------------------------------- */

static void add_note(struct sim_verify_report *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_note(struct sim_verify_report *rep, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    rep->notes = sim_xreallocarray(rep->notes, rep->n_notes + 1, sizeof(*rep->notes));
    rep->notes[rep->n_notes++] = sim_xstrdup(buf);
}

/* Compare the outputs of launch l with its kernel's reference. */
static void compare_launch(const struct sim_launch *l, bool prefix, struct sim_verify_report *rep)
{
    const struct sim_kernel *k = sim_kernel_find(l->kernel);
    if (!k || !k->reference) {
        add_note(rep, "kernel '%s' has %s: its outputs are not compared", l->kernel,
                 k ? "no reference" : "no built-in definition");
        return;
    }
    for (size_t i = 0; i < l->n_args; i++)
        if (l->args[i].is_tensor && !l->args[i].is_output && l->args[i].pending_input) {
            add_note(rep,
                     "kernel '%s': input '%s' was still to be computed when the launch started "
                     "in phase 1: its outputs are not compared",
                     l->kernel, l->args[i].name);
            return;
        }
    struct sim_kref_arg *args = sim_xcalloc(l->n_args ? l->n_args : 1, sizeof(*args));
    for (size_t i = 0; i < l->n_args; i++) {
        const struct sim_launch_arg *a = &l->args[i];
        args[i] = (struct sim_kref_arg){
            .name = a->name,
            .is_tensor = a->is_tensor,
            .is_output = a->is_output,
            .t = a->is_tensor ? sim_tensor_copy(a->deployed) : NULL,
            .scalar_dtype = a->scalar_dtype,
            .i = a->i,
            .f = a->f,
            .got = a->is_output ? a->result : NULL,
        };
    }
    struct sim_kref kr = {args, l->n_args, l->npes};
    struct diag d;
    diag_clear(&d);
    if (k->reference(&kr, &d) < 0) {
        add_note(rep, "kernel '%s': its reference failed: %s", l->kernel, d.msg);
    } else {
        for (size_t i = 0; i < l->n_args; i++) {
            const struct sim_launch_arg *a = &l->args[i];
            if (!a->is_tensor || !a->is_output || !a->result)
                continue;
            char name[256];
            if (prefix)
                snprintf(name, sizeof(name), "%s#%zu.%s", l->kernel, l->host_index, a->name);
            else
                snprintf(name, sizeof(name), "%s", a->name);
            rep->outputs =
                sim_xreallocarray(rep->outputs, rep->n_outputs + 1, sizeof(*rep->outputs));
            sim_verify_compare_bounded(name, a->result, args[i].t, args[i].bound,
                                       args[i].bound_what, &rep->outputs[rep->n_outputs++]);
        }
    }
    for (size_t i = 0; i < l->n_args; i++) {
        sim_tensor_unref(args[i].t);
        free(args[i].bound);
    }
    free(args);
}

int sim_verify_phase2(struct sim_run *r, struct sim_verify_capture *cap,
                      const struct sim_verify_opts *o, struct sim_verify_report *rep,
                      struct diag *d)
{
    memset(rep, 0, sizeof(*rep));
    struct sim_chip *chip = sim_run_chip(r);
    struct sim_exec *x = sim_exec_new(sim_chip_store(chip), &o->exec);
    struct sim_verify_ops *ops = NULL;
    if (o->ops) {
        ops = sim_verify_ops_new();
        sim_exec_set_op_hook(x, sim_verify_ops_hook, ops);
    }
    size_t n;
    struct sim_op_record *const *recs = sim_oplog_records(sim_chip_oplog(chip), &n);
    int rc = sim_exec_run(x, recs, n, d);
    if (rc < 0) {
        sim_verify_ops_free(ops);
        sim_exec_free(x);
        return rc;
    }
    rep->exec = *sim_exec_stats(x);
    rep->stopped = rc == 1;
    rep->ops_mode = o->ops;
    if (ops) {
        rep->ops_checked = sim_verify_ops_checked(ops);
        const struct sim_verify_op_failure *f = sim_verify_ops_failure(ops);
        if (f) {
            rep->op_failed = true;
            rep->first_op = (struct sim_verify_op_failure){f->index, sim_xstrdup(f->op_name),
                                                           sim_xstrdup(f->component_id), f->t_start,
                                                           sim_xstrdup(f->what)};
        }
    }
    /* the outputs as the host reads them back, from phase 2's memory */
    const struct sim_workload *wl = sim_run_workload(r);
    size_t nl = cap ? sim_verify_capture_count(cap) : 0;
    for (size_t i = 0; i < nl; i++) {
        struct sim_launch *l = &cap->launches[i];
        const struct sim_kernel_launch *kl = &wl->msgs[l->host_index].u.launch;
        for (size_t j = 0; j < l->n_args; j++) {
            struct sim_launch_arg *a = &l->args[j];
            if (!a->is_tensor || !a->is_output)
                continue;
            sim_tensor_unref(a->result);
            a->result = sim_tensor_copy(a->deployed);
            memset(sim_tensor_data(a->result), 0, a->result->nbytes);
            read_shards(chip, x, &kl->args[j], a->result, NULL);
        }
    }
    if (o->compare && !rep->stopped)
        for (size_t i = 0; i < nl; i++)
            compare_launch(&cap->launches[i], nl > 1, rep);
    if (o->compare && nl == 0)
        add_note(rep, "the host program launched no kernel: there are no outputs to compare");
    rep->pass = !rep->op_failed;
    for (size_t i = 0; i < rep->n_outputs; i++)
        rep->pass &= rep->outputs[i].pass;
    sim_verify_ops_free(ops);
    sim_exec_free(x);
    return 0;
}

void sim_verify_report_fini(struct sim_verify_report *r)
{
    for (size_t i = 0; i < r->n_outputs; i++)
        sim_verify_output_fini(&r->outputs[i]);
    free(r->outputs);
    for (size_t i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    free(r->notes);
    if (r->op_failed)
        failure_fini(&r->first_op);
    memset(r, 0, sizeof(*r));
}

/* A growing string. */
struct sbuf {
    char *s;
    size_t len, cap;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->s = sim_xrealloc(b->s, b->cap);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void sb_escaped(struct sbuf *b, const char *s)
{
    char *e = sim_escape_dup(s ? s : "");
    sb_printf(b, "%s", e);
    free(e);
}

char *sim_verify_report_text(const struct sim_verify_report *r)
{
    struct sbuf b = {0};
    const struct sim_exec_stats *x = &r->exec;
    /* what really ran as one call, and the identical GEMMs that still ran one by one
     * (they share no operand, or one call would not be faster) */
    char batched[256] = "";
    size_t alone = x->gemms_alike - x->gemms_batched;
    if (x->gemm_batches)
        snprintf(batched, sizeof(batched),
                 " (%zu GEMMs, one BLAS call per batch: %zu on A rows stacked, %zu on B operands "
                 "side by side)",
                 x->gemms_batched, x->gemm_batches - x->col_batches, x->col_batches);
    if (alone)
        snprintf(batched + strlen(batched), sizeof(batched) - strlen(batched),
                 ", %zu identical GEMMs one by one", alone);
    sb_printf(&b,
              "phase 2: %zu of %zu op records replayed (%zu skipped) in %zu t_start groups, "
              "%zu waves, %zu GEMM batches%s, %.3f s\n",
              x->executed, x->records, x->skipped, x->groups, x->waves, x->gemm_batches, batched,
              x->seconds);
    for (size_t i = 0; i < r->n_outputs; i++) {
        const struct sim_verify_output *o = &r->outputs[i];
        char shape[SIM_MAX_DIMS * 22 + 8];
        sim_shape_format(o->ndim, o->shape, shape, sizeof(shape));
        sb_printf(&b, "  ");
        sb_escaped(&b, o->name);
        sb_printf(&b, ": %s %s: ", sim_dtype_name(o->dtype), shape);
        if (o->problem) {
            sb_printf(&b, "FAIL: %s\n", o->problem);
            continue;
        }
        sb_printf(&b, "max abs err %.3g, max rel err %.3g", o->max_abs_err, o->max_rel_err);
        if (o->tol.exact) {
            sb_printf(&b, " (exact)");
        } else {
            sb_printf(&b, " (rtol %g, atol %g", o->tol.rtol, o->tol.atol);
            if (o->bound_what) {
                sb_printf(&b, ", + bound of ");
                sb_escaped(&b, o->bound_what);
                sb_printf(&b, " up to %.3g", o->max_bound);
            }
            sb_printf(&b, ")");
        }
        if (o->pass) {
            sb_printf(&b, ": PASS\n");
            continue;
        }
        char idx[SIM_MAX_DIMS * 22 + 8];
        multi_format(o->ndim, o->first_multi, idx, sizeof(idx));
        sb_printf(&b,
                  ": FAIL: %zu of %zu elements differ; the first at %s (flat %zu): got %.9g, "
                  "expected %.9g",
                  o->n_mismatch, o->n_elements, idx, o->first_index, o->first_got,
                  o->first_expected);
        if (o->bound_what)
            sb_printf(&b, " (tolerance %.3g)", o->first_tol);
        sb_printf(&b, "\n");
    }
    for (size_t i = 0; i < r->n_notes; i++) {
        sb_printf(&b, "  note: ");
        sb_escaped(&b, r->notes[i]);
        sb_printf(&b, "\n");
    }
    if (r->ops_mode) {
        if (r->op_failed) {
            sb_printf(&b, "ops: %zu checked; the first to diverge is op #%zu ", r->ops_checked,
                      r->first_op.index);
            sb_escaped(&b, r->first_op.op_name);
            sb_printf(&b, " on ");
            sb_escaped(&b, r->first_op.component_id);
            sb_printf(&b, " at %g ns: ", r->first_op.t_start);
            sb_escaped(&b, r->first_op.what);
            sb_printf(&b, "\n");
        } else {
            sb_printf(&b, "ops: %zu checked, every one agrees\n", r->ops_checked);
        }
    }
    sb_printf(&b, "verify: %s\n", r->pass ? "PASS" : "FAIL");
    return b.s;
}
