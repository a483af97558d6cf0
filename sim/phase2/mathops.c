/*
 * The math ops of phase 2 (see exec.h for the table, exec_int.h for the rest): the
 * elementwise and reduction kernels in f32 and i64, the table naming them, and a math op's
 * execution with numpy-style broadcasting.
 */
#include "sim/phase2/exec_int.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* T is a type: it cannot be parenthesized */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define EW_UNARY(NAME, T, EXPR)                                                                    \
    static void NAME(T *o, const T *const *in, const size_t *s, size_t n)                          \
    {                                                                                              \
        const T *a = in[0];                                                                        \
        if (s[0]) {                                                                                \
            for (size_t i = 0; i < n; i++) {                                                       \
                T x = a[i];                                                                        \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            T x = a[0];                                                                            \
            T v = (EXPR);                                                                          \
            for (size_t i = 0; i < n; i++)                                                         \
                o[i] = v;                                                                          \
        }                                                                                          \
    }

#define EW_BINARY(NAME, T, EXPR)                                                                   \
    static void NAME(T *o, const T *const *in, const size_t *s, size_t n)                          \
    {                                                                                              \
        const T *a = in[0], *b = in[1];                                                            \
        if (s[0] && s[1]) {                                                                        \
            for (size_t i = 0; i < n; i++) {                                                       \
                T x = a[i], y = b[i];                                                              \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (s[0]) {                                                                         \
            T y = b[0];                                                                            \
            for (size_t i = 0; i < n; i++) {                                                       \
                T x = a[i];                                                                        \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else if (s[1]) {                                                                         \
            T x = a[0];                                                                            \
            for (size_t i = 0; i < n; i++) {                                                       \
                T y = b[i];                                                                        \
                o[i] = (EXPR);                                                                     \
            }                                                                                      \
        } else {                                                                                   \
            T x = a[0], y = b[0];                                                                  \
            T v = (EXPR);                                                                          \
            for (size_t i = 0; i < n; i++)                                                         \
                o[i] = v;                                                                          \
        }                                                                                          \
    }

/* NOLINTEND(bugprone-macro-parentheses) */

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

static float geluf(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

EW_UNARY(f_exp, float, expf(x))
EW_UNARY(f_log, float, logf(x))
EW_UNARY(f_sqrt, float, sqrtf(x))
EW_UNARY(f_rsqrt, float, 1.0f / sqrtf(x))
EW_UNARY(f_neg, float, -x)
EW_UNARY(f_abs, float, fabsf(x))
EW_UNARY(f_recip, float, 1.0f / x)
EW_UNARY(f_square, float, (x) * (x))
EW_UNARY(f_tanh, float, tanhf(x))
EW_UNARY(f_sigmoid, float, sigmoidf(x))
EW_UNARY(f_relu, float, x > 0.0f ? x : 0.0f)
EW_UNARY(f_silu, float, sigmoidf(x) * (x))
EW_UNARY(f_gelu, float, geluf(x))
EW_UNARY(f_copy, float, x)
EW_BINARY(f_add, float, x + y)
EW_BINARY(f_sub, float, x - y)
EW_BINARY(f_mul, float, (x) * (y))
EW_BINARY(f_div, float, x / y)
EW_BINARY(f_max, float, (x > y || x != x) ? x : y)
EW_BINARY(f_min, float, (x < y || x != x) ? x : y)
EW_BINARY(f_pow, float, powf(x, y))
EW_BINARY(f_gt, float, x > y ? 1.0f : 0.0f)
EW_BINARY(f_ge, float, x >= y ? 1.0f : 0.0f)
EW_BINARY(f_lt, float, x < y ? 1.0f : 0.0f)
EW_BINARY(f_le, float, x <= y ? 1.0f : 0.0f)
EW_BINARY(f_eq, float, x == y ? 1.0f : 0.0f)
EW_BINARY(f_ne, float, x != y ? 1.0f : 0.0f)

EW_UNARY(i_neg, int64_t, WNEG(x))
EW_UNARY(i_abs, int64_t, x < 0 ? WNEG(x) : x)
EW_UNARY(i_square, int64_t, WMUL(x, x))
EW_UNARY(i_relu, int64_t, x > 0 ? x : 0)
EW_UNARY(i_copy, int64_t, x)
EW_BINARY(i_add, int64_t, WADD(x, y))
EW_BINARY(i_sub, int64_t, WSUB(x, y))
EW_BINARY(i_mul, int64_t, WMUL(x, y))
EW_BINARY(i_max, int64_t, x > y ? x : y)
EW_BINARY(i_min, int64_t, x < y ? x : y)
EW_BINARY(i_gt, int64_t, x > y)
EW_BINARY(i_ge, int64_t, x >= y)
EW_BINARY(i_lt, int64_t, x < y)
EW_BINARY(i_le, int64_t, x <= y)
EW_BINARY(i_eq, int64_t, x == y)
EW_BINARY(i_ne, int64_t, x != y)

static void f_where(float *o, const float *const *in, const size_t *s, size_t n)
{
    const float *c = in[0], *a = in[1], *b = in[2];
    if (s[0] && s[1] && s[2]) {
        for (size_t i = 0; i < n; i++)
            o[i] = c[i] != 0.0f ? a[i] : b[i];
    } else {
        for (size_t i = 0; i < n; i++)
            o[i] = c[i * s[0]] != 0.0f ? a[i * s[1]] : b[i * s[2]];
    }
}

static void i_where(int64_t *o, const int64_t *const *in, const size_t *s, size_t n)
{
    const int64_t *c = in[0], *a = in[1], *b = in[2];
    for (size_t i = 0; i < n; i++)
        o[i] = c[i * s[0]] ? a[i * s[1]] : b[i * s[2]];
}

/* Reductions: sums accumulate in double, so long rows keep f32 accuracy. */
static void red_sum_f32(float *restrict o, const float *in, size_t outer, size_t len, size_t inner,
                        bool mean)
{
    double *acc = sim_xmalloc((inner ? inner : 1) * sizeof(*acc));
    for (size_t a = 0; a < outer; a++) {
        const float *p = in + a * len * inner;
        if (inner == 1) {
            double s = 0;
            for (size_t r = 0; r < len; r++)
                s += p[r];
            acc[0] = s;
        } else {
            for (size_t j = 0; j < inner; j++)
                acc[j] = 0;
            for (size_t r = 0; r < len; r++)
                for (size_t j = 0; j < inner; j++)
                    acc[j] += p[r * inner + j];
        }
        for (size_t j = 0; j < inner; j++)
            o[a * inner + j] = (float)(mean ? acc[j] / (double)len : acc[j]);
    }
    free(acc);
}

static void r_sum(float *restrict o, const float *in, size_t outer, size_t len, size_t inner)
{
    red_sum_f32(o, in, outer, len, inner, false);
}

static void r_mean(float *restrict o, const float *in, size_t outer, size_t len, size_t inner)
{
    red_sum_f32(o, in, outer, len, inner, true);
}

/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define RED_EXT(NAME, T, BETTER, EMPTY)                                                            \
    static void NAME(T *restrict o, const T *in, size_t outer, size_t len, size_t inner)           \
    {                                                                                              \
        for (size_t a = 0; a < outer; a++) {                                                       \
            const T *p = in + a * len * inner;                                                     \
            T *q = o + a * inner;                                                                  \
            if (len == 0) {                                                                        \
                for (size_t j = 0; j < inner; j++)                                                 \
                    q[j] = (EMPTY);                                                                \
                continue;                                                                          \
            }                                                                                      \
            for (size_t j = 0; j < inner; j++)                                                     \
                q[j] = p[j];                                                                       \
            for (size_t r = 1; r < len; r++)                                                       \
                for (size_t j = 0; j < inner; j++) {                                               \
                    T x = p[r * inner + j], m = q[j];                                              \
                    q[j] = (BETTER) ? x : m;                                                       \
                }                                                                                  \
        }                                                                                          \
    }

/* NOLINTEND(bugprone-macro-parentheses) */

/* NaN propagates (numpy's max and min): a NaN, once met, is kept */
RED_EXT(r_max, float, (x > m || x != x) && m == m, NAN)
RED_EXT(r_min, float, (x < m || x != x) && m == m, NAN)
RED_EXT(ri_max, int64_t, x > m, 0)
RED_EXT(ri_min, int64_t, x < m, 0)

static void ri_sum(int64_t *restrict o, const int64_t *in, size_t outer, size_t len, size_t inner)
{
    for (size_t a = 0; a < outer; a++) {
        const int64_t *p = in + a * len * inner;
        int64_t *q = o + a * inner;
        for (size_t j = 0; j < inner; j++)
            q[j] = 0;
        for (size_t r = 0; r < len; r++)
            for (size_t j = 0; j < inner; j++)
                q[j] = WADD(q[j], p[r * inner + j]);
    }
}

/* The scalar definitions (the reference verification uses). */
static double s_exp(const double *a)
{
    return exp(a[0]);
}
static double s_log(const double *a)
{
    return log(a[0]);
}
static double s_sqrt(const double *a)
{
    return sqrt(a[0]);
}
static double s_rsqrt(const double *a)
{
    return 1.0 / sqrt(a[0]);
}
static double s_neg(const double *a)
{
    return -a[0];
}
static double s_abs(const double *a)
{
    return fabs(a[0]);
}
static double s_recip(const double *a)
{
    return 1.0 / a[0];
}
static double s_square(const double *a)
{
    return a[0] * a[0];
}
static double s_tanh(const double *a)
{
    return tanh(a[0]);
}
static double s_sigmoid(const double *a)
{
    return 1.0 / (1.0 + exp(-a[0]));
}
static double s_relu(const double *a)
{
    return a[0] > 0 ? a[0] : 0;
}
static double s_silu(const double *a)
{
    return a[0] / (1.0 + exp(-a[0]));
}
static double s_gelu(const double *a)
{
    return 0.5 * a[0] * (1.0 + erf(a[0] / sqrt(2.0)));
}
static double s_copy(const double *a)
{
    return a[0];
}
static double s_add(const double *a)
{
    return a[0] + a[1];
}
static double s_sub(const double *a)
{
    return a[0] - a[1];
}
static double s_mul(const double *a)
{
    return a[0] * a[1];
}
static double s_div(const double *a)
{
    return a[0] / a[1];
}
static double s_max(const double *a)
{
    return isnan(a[0]) || isnan(a[1]) ? NAN : a[0] > a[1] ? a[0] : a[1];
}
static double s_min(const double *a)
{
    return isnan(a[0]) || isnan(a[1]) ? NAN : a[0] < a[1] ? a[0] : a[1];
}
static double s_pow(const double *a)
{
    return pow(a[0], a[1]);
}
static double s_gt(const double *a)
{
    return a[0] > a[1];
}
static double s_ge(const double *a)
{
    return a[0] >= a[1];
}
static double s_lt(const double *a)
{
    return a[0] < a[1];
}
static double s_le(const double *a)
{
    return a[0] <= a[1];
}
static double s_eq(const double *a)
{
    return a[0] == a[1];
}
static double s_ne(const double *a)
{
    return a[0] != a[1];
}
static double s_where(const double *a)
{
    return a[0] != 0 ? a[1] : a[2];
}
static double c_sum(double acc, double x)
{
    return acc + x;
}
static double c_max(double acc, double x)
{
    return isnan(acc) || isnan(x) ? NAN : x > acc ? x : acc;
}
static double c_min(double acc, double x)
{
    return isnan(acc) || isnan(x) ? NAN : x < acc ? x : acc;
}
static double fin_mean(double acc, double count)
{
    return acc / count;
}

#define EW(NAME, AR, F, I)                                                                         \
    {                                                                                              \
        {#NAME, AR, SIM_EXEC_MATH_ELEMENTWISE, s_##NAME, 0, 0, 0}, F, I, 0, 0                      \
    }
#define EWS(NAME, AR, S, F, I)                                                                     \
    {                                                                                              \
        {NAME, AR, SIM_EXEC_MATH_ELEMENTWISE, S, 0, 0, 0}, F, I, 0, 0                              \
    }
#define RED(NAME, INIT, C, FIN, F, I)                                                              \
    {                                                                                              \
        {NAME, 1, SIM_EXEC_MATH_REDUCE, 0, INIT, C, FIN}, 0, 0, F, I                               \
    }

/* The math ops: a new op is one line here (and its scalar definition above). */
static const struct math_impl math_table[] = {
    EW(exp, 1, f_exp, NULL),
    EW(log, 1, f_log, NULL),
    EW(sqrt, 1, f_sqrt, NULL),
    EW(rsqrt, 1, f_rsqrt, NULL),
    EW(neg, 1, f_neg, i_neg),
    EW(abs, 1, f_abs, i_abs),
    EW(recip, 1, f_recip, NULL),
    EWS("reciprocal", 1, s_recip, f_recip, NULL),
    EW(square, 1, f_square, i_square),
    EW(tanh, 1, f_tanh, NULL),
    EW(sigmoid, 1, f_sigmoid, NULL),
    EW(relu, 1, f_relu, i_relu),
    EW(silu, 1, f_silu, NULL),
    EW(gelu, 1, f_gelu, NULL),
    EW(copy, 1, f_copy, i_copy),
    EWS("cast", 1, s_copy, f_copy, i_copy),
    EW(add, 2, f_add, i_add),
    EW(sub, 2, f_sub, i_sub),
    EW(mul, 2, f_mul, i_mul),
    EW(div, 2, f_div, NULL),
    EW(max, 2, f_max, i_max),
    EWS("maximum", 2, s_max, f_max, i_max),
    EW(min, 2, f_min, i_min),
    EWS("minimum", 2, s_min, f_min, i_min),
    EW(pow, 2, f_pow, NULL),
    EW(gt, 2, f_gt, i_gt),
    EW(ge, 2, f_ge, i_ge),
    EW(lt, 2, f_lt, i_lt),
    EW(le, 2, f_le, i_le),
    EW(eq, 2, f_eq, i_eq),
    EW(ne, 2, f_ne, i_ne),
    EW(where, 3, f_where, i_where),
    RED("sum", 0.0, c_sum, NULL, r_sum, ri_sum),
    RED("mean", 0.0, c_sum, fin_mean, r_mean, NULL),
    RED("max", -INFINITY, c_max, NULL, r_max, ri_max),
    RED("min", INFINITY, c_min, NULL, r_min, ri_min),
};

enum { N_MATH = sizeof(math_table) / sizeof(math_table[0]) };

const struct math_impl *sim_exec_math_lookup(const char *name, unsigned arity)
{
    for (size_t i = 0; i < N_MATH; i++)
        if (math_table[i].pub.arity == arity && math_table[i].pub.name[0] == name[0] &&
            strcmp(math_table[i].pub.name, name) == 0)
            return &math_table[i];
    return NULL;
}

const struct sim_exec_math_op *sim_exec_math_find(const char *name, unsigned arity)
{
    const struct math_impl *m = sim_exec_math_lookup(name, arity);
    return m ? &m->pub : NULL;
}

static struct sim_exec_math_op math_pub[N_MATH];
static pthread_once_t math_pub_once = PTHREAD_ONCE_INIT;

static void math_pub_init(void)
{
    for (size_t i = 0; i < N_MATH; i++)
        math_pub[i] = math_table[i].pub;
}

const struct sim_exec_math_op *sim_exec_math_ops(size_t *n)
{
    pthread_once(&math_pub_once, math_pub_init);
    *n = N_MATH;
    return math_pub;
}

/* ---- math execution ---------------------------------------------------------------------- */

/*
 * Strides of an input of shape (ndim, shape) broadcast to the output (ondim, oshape):
 * element strides aligned to the output's dimensions, 0 where the input is broadcast.
 * Returns false when the shapes are not broadcast-compatible.
 */
bool sim_exec_bcast_strides(unsigned ndim, const int64_t *shape, unsigned ondim,
                            const int64_t *oshape, size_t *stride)
{
    if (ndim > ondim)
        return false;
    size_t s = 1;
    for (unsigned k = ondim; k-- > 0;) {
        unsigned off = ondim - ndim;
        if (k < off) {
            stride[k] = 0;
            continue;
        }
        int64_t d = shape[k - off];
        if (d == oshape[k])
            stride[k] = d == 1 ? 0 : s;
        else if (d == 1)
            stride[k] = 0;
        else
            return false;
        s *= (size_t)d;
    }
    return true;
}

/* True when the input fills the output element for element (same numel, compatible). */
static bool full_input(unsigned ndim, const int64_t *shape, size_t onumel)
{
    return shape_numel(ndim, shape) == onumel;
}

/* Run an elementwise op over buffers of element size esz with broadcasting. */
static void ew_apply(const struct xop *o, void *out, const void *const *in, size_t esz, bool i64)
{
    const struct operand *od = &o->out;
    size_t onumel = shape_numel(od->ndim, od->shape);
    unsigned n = o->n_in;
    size_t s1[SIM_EXEC_MAX_INPUTS];
    bool flat = true;
    for (unsigned i = 0; i < n; i++) {
        size_t ni = shape_numel(o->in[i].ndim, o->in[i].shape);
        if (full_input(o->in[i].ndim, o->in[i].shape, onumel) && onumel != 1)
            s1[i] = 1;
        else if (ni == 1)
            s1[i] = 0;
        else
            flat = false;
    }
    if (flat || od->ndim == 0) {
        if (od->ndim == 0)
            for (unsigned i = 0; i < n; i++)
                s1[i] = 0;
        if (i64)
            o->m->ew_i64(out, (const int64_t *const *)in, s1, onumel);
        else
            o->m->ew_f32(out, (const float *const *)in, s1, onumel);
        return;
    }
    /* general broadcasting: iterate over all dimensions but the last, run the last one */
    unsigned nd = od->ndim;
    size_t st[SIM_EXEC_MAX_INPUTS][SIM_MAX_DIMS];
    for (unsigned i = 0; i < n; i++) {
        bool ok = sim_exec_bcast_strides(o->in[i].ndim, o->in[i].shape, nd, od->shape, st[i]);
        assert(ok && "broadcasting checked at decode");
        (void)ok;
    }
    size_t inner = (size_t)od->shape[nd - 1];
    size_t outer = inner ? onumel / inner : 0;
    size_t idx[SIM_MAX_DIMS] = {0};
    size_t sl[SIM_EXEC_MAX_INPUTS];
    for (unsigned i = 0; i < n; i++)
        sl[i] = st[i][nd - 1] ? 1 : 0; /* the last dimension's stride is 1 or 0 */
    for (size_t r = 0; r < outer; r++) {
        const void *p[SIM_EXEC_MAX_INPUTS];
        for (unsigned i = 0; i < n; i++) {
            size_t off = 0;
            for (unsigned k = 0; k + 1 < nd; k++)
                off += idx[k] * st[i][k];
            p[i] = (const unsigned char *)in[i] + off * esz;
        }
        void *q = (unsigned char *)out + r * inner * esz;
        if (i64)
            o->m->ew_i64(q, (const int64_t *const *)p, sl, inner);
        else
            o->m->ew_f32(q, (const float *const *)p, sl, inner);
        for (unsigned k = nd - 1; k-- > 0;) {
            if (++idx[k] < (size_t)od->shape[k])
                break;
            idx[k] = 0;
        }
    }
}

/* Reduction geometry of input 0: [outer][len][inner]. */
void sim_exec_red_dims(const struct xop *o, size_t *outer, size_t *len, size_t *inner)
{
    const struct operand *a = &o->in[0];
    size_t n = shape_numel(a->ndim, a->shape);
    if (!o->has_axis || a->ndim == 0) {
        *outer = 1, *len = n, *inner = 1;
        return;
    }
    size_t ou = 1, in = 1;
    for (int k = 0; k < o->axis; k++)
        ou *= (size_t)a->shape[k];
    for (unsigned k = (unsigned)o->axis + 1; k < a->ndim; k++)
        in *= (size_t)a->shape[k];
    *outer = ou, *len = (size_t)a->shape[o->axis], *inner = in;
}

/* Integer path: every input an integer or bool, and the op has integer kernels. */
static bool math_on_ints(const struct xop *o)
{
    if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE ? !o->m->ew_i64 : !o->m->red_i64)
        return false;
    if (!dtype_is_int(o->out.dtype) && o->out.dtype != SIM_BOOL)
        return false;
    for (unsigned i = 0; i < o->n_in; i++)
        if (sim_dtype_is_float(o->tin[i]->dtype))
            return false;
    return true;
}

void sim_exec_math_run(struct xop *o)
{
    size_t onumel = sim_tensor_numel(o->tout);
    if (math_on_ints(o)) {
        int64_t *in[SIM_EXEC_MAX_INPUTS] = {0};
        for (unsigned i = 0; i < o->n_in; i++)
            in[i] = sim_exec_as_i64(o->tin[i]);
        int64_t *out = sim_xmalloc((onumel ? onumel : 1) * sizeof(*out));
        if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE) {
            ew_apply(o, out, (const void *const *)in, sizeof(int64_t), true);
        } else {
            size_t outer, len, inner;
            sim_exec_red_dims(o, &outer, &len, &inner);
            o->m->red_i64(out, in[0], outer, len, inner);
        }
        sim_exec_from_i64(out, o->tout);
        free(out);
        for (unsigned i = 0; i < o->n_in; i++)
            free(in[i]);
        return;
    }
    const float *in[SIM_EXEC_MAX_INPUTS] = {0};
    float *owned[SIM_EXEC_MAX_INPUTS] = {0};
    for (unsigned i = 0; i < o->n_in; i++)
        in[i] = sim_exec_as_f32(o->tin[i], &owned[i]);
    float *out = o->tout->dtype == SIM_F32 ? sim_tensor_data(o->tout)
                                           : sim_xmalloc((onumel ? onumel : 1) * sizeof(*out));
    if (o->m->pub.shape == SIM_EXEC_MATH_ELEMENTWISE) {
        ew_apply(o, out, (const void *const *)in, sizeof(float), false);
    } else {
        size_t outer, len, inner;
        sim_exec_red_dims(o, &outer, &len, &inner);
        o->m->red_f32(out, in[0], outer, len, inner);
    }
    if (out != sim_tensor_data(o->tout)) {
        sim_exec_from_f32(out, o->tout);
        free(out);
    }
    for (unsigned i = 0; i < o->n_in; i++)
        free(owned[i]);
}
