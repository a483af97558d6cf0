/*
 * Tensors (see tensor.h): allocation, reference counting, views sharing the bytes of their
 * base, and element access through double for code that does not care about the dtype.
 */
#include "sim/data/tensor.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_shape_nbytes(enum sim_dtype dtype, unsigned ndim, const int64_t *shape, size_t *out)
{
    if (ndim > SIM_MAX_DIMS)
        return -1;
    /* The product of the non-zero dimensions must fit even when another one is 0, so that
     * a shape is valid or not whatever its zeros. */
    size_t n = sim_dtype_size(dtype);
    bool empty = false;
    for (unsigned i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > SIZE_MAX)
            return -1;
        size_t dim = (size_t)shape[i];
        if (dim == 0) {
            empty = true;
            continue;
        }
        if (n > SIZE_MAX / dim)
            return -1;
        n *= dim;
    }
    *out = empty ? 0 : n;
    return 0;
}

static struct sim_tensor *alloc_header(enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                       size_t nbytes)
{
    struct sim_tensor *t = sim_xcalloc(1, sizeof(*t));
    t->refs = 1;
    t->dtype = dtype;
    t->ndim = ndim;
    if (ndim)
        memcpy(t->shape, shape, ndim * sizeof(shape[0]));
    t->nbytes = nbytes;
    return t;
}

struct sim_tensor *sim_tensor_new(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    size_t nbytes;
    if (sim_shape_nbytes(dtype, ndim, shape, &nbytes) != 0)
        sim_die("invalid tensor shape (negative dimension, too many dimensions or overflow)");
    struct sim_tensor *t = alloc_header(dtype, ndim, shape, nbytes);
    /* A 0-byte tensor still gets a real, unique pointer. */
    t->data = sim_xcalloc(1, nbytes ? nbytes : 1);
    return t;
}

struct sim_tensor *sim_tensor_copy(const struct sim_tensor *src)
{
    struct sim_tensor *t = sim_tensor_new(src->dtype, src->ndim, src->shape);
    if (src->nbytes)
        memcpy(t->data, src->data, src->nbytes);
    return t;
}

struct sim_tensor *sim_tensor_ref(struct sim_tensor *t)
{
    assert(t && t->refs > 0);
    t->refs++;
    return t;
}

void sim_tensor_unref(struct sim_tensor *t)
{
    if (!t)
        return;
    assert(t->refs > 0);
    if (--t->refs > 0)
        return;
    if (t->base)
        sim_tensor_unref(t->base);
    else
        free(t->data);
    free(t);
}

char *sim_shape_format(unsigned ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t len = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k = snprintf(buf + len, size - len, __VA_ARGS__);                                      \
        if (k < 0 || (size_t)k >= size - len)                                                      \
            return buf;                                                                            \
        len += (size_t)k;                                                                          \
    } while (0)
    PUT("(");
    for (unsigned i = 0; i < ndim; i++)
        PUT("%s%lld", i ? ", " : "", (long long)shape[i]);
    PUT(ndim == 1 ? ",)" : ")");
#undef PUT
    return buf;
}

/* "f32 (2, 3) (24 bytes)" */
static void layout_format(enum sim_dtype dtype, unsigned ndim, const int64_t *shape, char *buf,
                          size_t size)
{
    char sh[SIM_MAX_DIMS * 22 + 8];
    size_t nbytes;
    sim_shape_format(ndim, shape, sh, sizeof(sh));
    if (sim_shape_nbytes(dtype, ndim, shape, &nbytes) == 0)
        snprintf(buf, size, "%s %s (%zu byte%s)", sim_dtype_name(dtype), sh, nbytes,
                 nbytes == 1 ? "" : "s");
    else
        snprintf(buf, size, "%s %s", sim_dtype_name(dtype), sh);
}

struct sim_tensor *sim_tensor_view(struct sim_tensor *t, enum sim_dtype dtype, unsigned ndim,
                                   const int64_t *shape, struct diag *d)
{
    char from[SIM_MAX_DIMS * 22 + 48], to[SIM_MAX_DIMS * 22 + 48];
    layout_format(t->dtype, t->ndim, t->shape, from, sizeof(from));
    size_t nbytes;
    if (ndim > SIM_MAX_DIMS) {
        diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "cannot view %s with %u dimensions (%d at most)",
                 from, ndim, SIM_MAX_DIMS);
        return NULL;
    }
    layout_format(dtype, ndim, shape, to, sizeof(to));
    if (sim_shape_nbytes(dtype, ndim, shape, &nbytes) != 0) {
        diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                 "cannot view %s as %s: negative dimension or size overflow", from, to);
        return NULL;
    }
    if (nbytes != t->nbytes) {
        diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "cannot view %s as %s: byte counts differ", from,
                 to);
        return NULL;
    }
    /* Views always hang off the tensor that owns the bytes, so chains stay one deep; they
     * start where t's bytes start (t may view its base from an offset). */
    struct sim_tensor *base = t->base ? t->base : t;
    struct sim_tensor *v = alloc_header(dtype, ndim, shape, nbytes);
    v->data = t->data;
    v->base = sim_tensor_ref(base);
    return v;
}

size_t sim_tensor_numel(const struct sim_tensor *t)
{
    size_t n = 1;
    for (unsigned i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    return n;
}

/* One element of any dtype, as stored (f16 and bf16 as their bits). */
union elem {
    float f;
    uint16_t u16;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint32_t u32;
};

double sim_tensor_get(const struct sim_tensor *t, size_t i)
{
    assert(i < sim_tensor_numel(t));
    const unsigned char *p = (const unsigned char *)t->data + i * sim_dtype_size(t->dtype);
    union elem e;
    memcpy(&e, p, sim_dtype_size(t->dtype));
    switch (t->dtype) {
    case SIM_F32: return e.f;
    case SIM_F16: return sim_f16_to_f32(e.u16);
    case SIM_BF16: return sim_bf16_to_f32(e.u16);
    case SIM_I8: return e.i8;
    case SIM_I16: return e.i16;
    case SIM_I32: return e.i32;
    case SIM_I64: return (double)e.i64;
    case SIM_U8: return e.u8;
    case SIM_U16: return e.u16;
    case SIM_U32: return e.u32;
    case SIM_BOOL: return e.u8 != 0;
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
    return 0;
}

/* v truncated toward zero and clamped to [lo, hi]; NaN gives 0. Never undefined. */
static int64_t to_int(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

void sim_tensor_set(struct sim_tensor *t, size_t i, double v)
{
    assert(i < sim_tensor_numel(t));
    unsigned char *p = (unsigned char *)t->data + i * sim_dtype_size(t->dtype);
    union elem e;
    switch (t->dtype) {
    case SIM_F32: e.f = (float)v; break;
    case SIM_F16: e.u16 = sim_f32_to_f16((float)v); break;
    case SIM_BF16: e.u16 = sim_f32_to_bf16((float)v); break;
    case SIM_I8: e.i8 = (int8_t)to_int(v, INT8_MIN, INT8_MAX); break;
    case SIM_I16: e.i16 = (int16_t)to_int(v, INT16_MIN, INT16_MAX); break;
    case SIM_I32: e.i32 = (int32_t)to_int(v, INT32_MIN, INT32_MAX); break;
    case SIM_I64:
        /* 2^63 is the first double past INT64_MAX; -2^63 is exact. */
        if (isnan(v))
            e.i64 = 0;
        else if (v >= 9223372036854775808.0)
            e.i64 = INT64_MAX;
        else if (v <= -9223372036854775808.0)
            e.i64 = INT64_MIN;
        else
            e.i64 = (int64_t)v;
        break;
    case SIM_U8: e.u8 = (uint8_t)to_int(v, 0, UINT8_MAX); break;
    case SIM_U16: e.u16 = (uint16_t)to_int(v, 0, UINT16_MAX); break;
    case SIM_U32: e.u32 = (uint32_t)to_int(v, 0, UINT32_MAX); break;
    case SIM_BOOL: e.u8 = v != 0; break;
    case SIM_DTYPE_COUNT: assert(!"bad dtype"); return;
    }
    memcpy(p, &e, sim_dtype_size(t->dtype));
}
