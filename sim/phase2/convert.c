/*
 * Element conversion for the executor (see exec_int.h): tensors of any dtype read as f32 or
 * i64 buffers, and results stored back as a tensor's dtype (checked casts to integers,
 * numpy's wrapping between integers).
 */
#include "sim/phase2/exec_int.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Element i of t as float. */
static float elem_f32(const struct sim_tensor *t, size_t i)
{
    const unsigned char *p = sim_tensor_cdata(t);
    switch (t->dtype) {
    case SIM_F32: return ((const float *)(const void *)p)[i];
    case SIM_F16: return sim_f16_to_f32(((const uint16_t *)(const void *)p)[i]);
    case SIM_BF16: return sim_bf16_to_f32(((const uint16_t *)(const void *)p)[i]);
    case SIM_I8: return (float)((const int8_t *)(const void *)p)[i];
    case SIM_I16: return (float)((const int16_t *)(const void *)p)[i];
    case SIM_I32: return (float)((const int32_t *)(const void *)p)[i];
    case SIM_I64: return (float)((const int64_t *)(const void *)p)[i];
    case SIM_U8: return (float)p[i];
    case SIM_U16: return (float)((const uint16_t *)(const void *)p)[i];
    case SIM_U32: return (float)((const uint32_t *)(const void *)p)[i];
    case SIM_BOOL: return p[i] ? 1.0f : 0.0f;
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
    return 0;
}

static int64_t elem_i64(const struct sim_tensor *t, size_t i)
{
    const unsigned char *p = sim_tensor_cdata(t);
    switch (t->dtype) {
    case SIM_I8: return ((const int8_t *)(const void *)p)[i];
    case SIM_I16: return ((const int16_t *)(const void *)p)[i];
    case SIM_I32: return ((const int32_t *)(const void *)p)[i];
    case SIM_I64: return ((const int64_t *)(const void *)p)[i];
    case SIM_U8: return p[i];
    case SIM_U16: return ((const uint16_t *)(const void *)p)[i];
    case SIM_U32: return ((const uint32_t *)(const void *)p)[i];
    case SIM_BOOL: return p[i] != 0;
    default: break;
    }
    assert(!"not an integer dtype");
    return 0;
}

/* t's elements as f32: t's own data when it is f32, else a new buffer in *owned. */
const float *sim_exec_as_f32(const struct sim_tensor *t, float **owned)
{
    *owned = NULL;
    if (t->dtype == SIM_F32)
        return sim_tensor_cdata(t);
    size_t n = sim_tensor_numel(t);
    float *b = sim_xmalloc((n ? n : 1) * sizeof(*b));
    if (t->dtype == SIM_F16 || t->dtype == SIM_BF16) {
        const uint16_t *h = sim_tensor_cdata(t);
        if (t->dtype == SIM_F16)
            for (size_t i = 0; i < n; i++)
                b[i] = sim_f16_to_f32(h[i]);
        else
            for (size_t i = 0; i < n; i++)
                b[i] = sim_bf16_to_f32(h[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            b[i] = elem_f32(t, i);
    }
    *owned = b;
    return b;
}

int64_t *sim_exec_as_i64(const struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    int64_t *b = sim_xmalloc((n ? n : 1) * sizeof(*b));
    for (size_t i = 0; i < n; i++)
        b[i] = elem_i64(t, i);
    return b;
}

/* float -> integer: truncation toward zero, saturating, NaN -> 0 (a checked cast). */
static int64_t f2i(float v, double lo, double hi)
{
    if (v != v)
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

/* Store src[0..n) as t's dtype. */
void sim_exec_from_f32(const float *src, struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    void *p = sim_tensor_data(t);
    switch (t->dtype) {
    case SIM_F32: memcpy(p, src, n * sizeof(*src)); return;
    case SIM_F16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = sim_f32_to_f16(src[i]);
        return;
    case SIM_BF16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = sim_f32_to_bf16(src[i]);
        return;
    case SIM_I8:
        for (size_t i = 0; i < n; i++)
            ((int8_t *)p)[i] = (int8_t)f2i(src[i], INT8_MIN, INT8_MAX);
        return;
    case SIM_I16:
        for (size_t i = 0; i < n; i++)
            ((int16_t *)p)[i] = (int16_t)f2i(src[i], INT16_MIN, INT16_MAX);
        return;
    case SIM_I32:
        for (size_t i = 0; i < n; i++)
            ((int32_t *)p)[i] = (int32_t)f2i(src[i], INT32_MIN, INT32_MAX);
        return;
    case SIM_I64:
        for (size_t i = 0; i < n; i++)
            ((int64_t *)p)[i] = f2i(src[i], -9223372036854775808.0, 9223372036854774784.0);
        return;
    case SIM_U8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = (uint8_t)f2i(src[i], 0, UINT8_MAX);
        return;
    case SIM_U16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = (uint16_t)f2i(src[i], 0, UINT16_MAX);
        return;
    case SIM_U32:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)p)[i] = (uint32_t)f2i(src[i], 0, UINT32_MAX);
        return;
    case SIM_BOOL:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = src[i] != 0;
        return;
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
}

/* Store src[0..n) as t's dtype; narrower integers wrap (numpy's astype), floats round. */
void sim_exec_from_i64(const int64_t *src, struct sim_tensor *t)
{
    size_t n = sim_tensor_numel(t);
    void *p = sim_tensor_data(t);
    switch (t->dtype) {
    case SIM_I8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = (uint8_t)(uint64_t)src[i];
        return;
    case SIM_U8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = (uint8_t)(uint64_t)src[i];
        return;
    case SIM_I16:
    case SIM_U16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)p)[i] = (uint16_t)(uint64_t)src[i];
        return;
    case SIM_I32:
    case SIM_U32:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)p)[i] = (uint32_t)(uint64_t)src[i];
        return;
    case SIM_I64: memcpy(p, src, n * sizeof(*src)); return;
    case SIM_BOOL:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)p)[i] = src[i] != 0;
        return;
    case SIM_F32:
    case SIM_F16:
    case SIM_BF16: {
        float *f = sim_xmalloc((n ? n : 1) * sizeof(*f));
        for (size_t i = 0; i < n; i++)
            f[i] = (float)src[i];
        sim_exec_from_f32(f, t);
        free(f);
        return;
    }
    case SIM_DTYPE_COUNT: break;
    }
    assert(!"bad dtype");
}
