/*
 * The named elementwise and reduction ops of the kernel API (see tl.h): each is a call of
 * tl_math by the op's name, on the MATH engine.
 */
#define TL_NO_SITES /* the API calls itself: its callers' call sites stand */
#include "sim/kernel/tl.h"

#include "sim/kernel/tl_int.h"

/* r, with the call the kernel made (not tl_math) as its last one. */
static struct tl_tensor *named(struct tl *tl, struct tl_tensor *r, const char *call)
{
    tl->last_call = call;
    return r;
}

static struct tl_tensor *unary(struct tl *tl, const char *op, const struct tl_tensor *x)
{
    return tl_math(tl, op, 1, &x, false, 0, SIM_DTYPE_COUNT);
}

static struct tl_tensor *binary(struct tl *tl, const char *op, const struct tl_tensor *a,
                                const struct tl_tensor *b)
{
    const struct tl_tensor *in[2] = {a, b};
    return tl_math(tl, op, 2, in, false, 0, SIM_DTYPE_COUNT);
}

static struct tl_tensor *reduce(struct tl *tl, const char *op, const struct tl_tensor *x, int axis)
{
    return tl_math(tl, op, 1, &x, true, axis, SIM_DTYPE_COUNT);
}

struct tl_tensor *tl_exp(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "exp", x), __func__);
}

struct tl_tensor *tl_log(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "log", x), __func__);
}

struct tl_tensor *tl_sqrt(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "sqrt", x), __func__);
}

struct tl_tensor *tl_rsqrt(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "rsqrt", x), __func__);
}

struct tl_tensor *tl_neg(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "neg", x), __func__);
}

struct tl_tensor *tl_abs(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "abs", x), __func__);
}

struct tl_tensor *tl_relu(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "relu", x), __func__);
}

struct tl_tensor *tl_gelu(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "gelu", x), __func__);
}

struct tl_tensor *tl_silu(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "silu", x), __func__);
}

struct tl_tensor *tl_sigmoid(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "sigmoid", x), __func__);
}

struct tl_tensor *tl_tanh(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "tanh", x), __func__);
}

struct tl_tensor *tl_recip(struct tl *tl, const struct tl_tensor *x)
{
    TL_CALL(tl);
    return named(tl, unary(tl, "recip", x), __func__);
}

struct tl_tensor *tl_cast(struct tl *tl, const struct tl_tensor *x, enum sim_dtype dtype)
{
    TL_CALL(tl);
    return named(tl, tl_math(tl, "cast", 1, &x, false, 0, dtype), __func__);
}

struct tl_tensor *tl_add(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return named(tl, binary(tl, "add", a, b), __func__);
}

struct tl_tensor *tl_sub(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return named(tl, binary(tl, "sub", a, b), __func__);
}

struct tl_tensor *tl_mul(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return named(tl, binary(tl, "mul", a, b), __func__);
}

struct tl_tensor *tl_div(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return named(tl, binary(tl, "div", a, b), __func__);
}

struct tl_tensor *tl_maximum(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return named(tl, binary(tl, "maximum", a, b), __func__);
}

struct tl_tensor *tl_minimum(struct tl *tl, const struct tl_tensor *a, const struct tl_tensor *b)
{
    TL_CALL(tl);
    return named(tl, binary(tl, "minimum", a, b), __func__);
}

struct tl_tensor *tl_where(struct tl *tl, const struct tl_tensor *cond, const struct tl_tensor *a,
                           const struct tl_tensor *b)
{
    TL_CALL(tl);
    const struct tl_tensor *in[3] = {cond, a, b};
    return named(tl, tl_math(tl, "where", 3, in, false, 0, SIM_DTYPE_COUNT), __func__);
}

struct tl_tensor *tl_sum(struct tl *tl, const struct tl_tensor *x, int axis)
{
    TL_CALL(tl);
    return named(tl, reduce(tl, "sum", x, axis), __func__);
}

struct tl_tensor *tl_mean(struct tl *tl, const struct tl_tensor *x, int axis)
{
    TL_CALL(tl);
    return named(tl, reduce(tl, "mean", x, axis), __func__);
}

struct tl_tensor *tl_max(struct tl *tl, const struct tl_tensor *x, int axis)
{
    TL_CALL(tl);
    return named(tl, reduce(tl, "max", x, axis), __func__);
}

struct tl_tensor *tl_min(struct tl *tl, const struct tl_tensor *x, int axis)
{
    TL_CALL(tl);
    return named(tl, reduce(tl, "min", x, axis), __func__);
}
