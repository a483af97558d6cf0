/*
 * Tensors (see tensor.h): allocation, reference counting, views sharing the bytes of their
 * base, pattern-backed tensors whose bytes are produced on first use, and element access
 * through double for code that does not care about the dtype.
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

static size_t checked_nbytes(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    size_t nbytes;
    if (sim_shape_nbytes(dtype, ndim, shape, &nbytes) != 0)
        sim_die("invalid tensor shape (negative dimension, too many dimensions or overflow)");
    return nbytes;
}

struct sim_tensor *sim_tensor_new(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    size_t nbytes = checked_nbytes(dtype, ndim, shape);
    struct sim_tensor *t = alloc_header(dtype, ndim, shape, nbytes);
    /* A 0-byte tensor still gets a real, unique pointer. */
    t->mem = sim_xcalloc(1, nbytes ? nbytes : 1);
    return t;
}

struct sim_tensor *sim_tensor_new_uninit(enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    size_t nbytes = checked_nbytes(dtype, ndim, shape);
    struct sim_tensor *t = alloc_header(dtype, ndim, shape, nbytes);
    t->mem = sim_xmalloc(nbytes ? nbytes : 1);
    return t;
}

struct sim_tensor *sim_tensor_new_fill(enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                       const struct sim_fill *f)
{
    assert(f->unit == 1 || f->unit == 2 || f->unit == 4 || f->unit == 8);
    struct sim_tensor *t = alloc_header(dtype, ndim, shape, checked_nbytes(dtype, ndim, shape));
    t->fill = *f;
    return t;
}

/* The tensor holding t's bytes. */
static struct sim_tensor *root_of(const struct sim_tensor *t)
{
    return (struct sim_tensor *)(t->base ? t->base : t);
}

/* f as seen from byte `at` of the bytes it fills. */
static void fill_rotate(const struct sim_fill *f, size_t at, struct sim_fill *out)
{
    unsigned char b[SIM_FILL_MAX];
    for (unsigned k = 0; k < f->unit; k++)
        b[k] = f->bytes[(at + k) % f->unit];
    sim_fill_set(out, b, f->unit);
}

bool sim_tensor_pattern(const struct sim_tensor *t, struct sim_fill *f)
{
    const struct sim_tensor *r = root_of(t);
    if (r->mem || r->random)
        return false;
    fill_rotate(&r->fill, t->offset, f);
    return true;
}

/* n bytes of pattern f starting at its byte `at`, into dst. */
static void fill_bytes(const struct sim_fill *f, size_t at, size_t n, unsigned char *dst)
{
    if (n == 0)
        return;
    if (f->unit == 1) {
        memset(dst, f->bytes[0], n);
        return;
    }
    size_t done = 0;
    for (; done < n && done < f->unit; done++)
        dst[done] = f->bytes[(at + done) % f->unit];
    while (done < n) { /* doubling copies of the first unit (the pattern repeats from it) */
        size_t m = done < n - done ? done : n - done;
        memcpy(dst + done, dst, m);
        done += m;
    }
}

static void random_bytes(const struct sim_random *g, size_t at, size_t n, unsigned char *dst);

/* n bytes of the lazy tensor r (not a view) from its byte `at`, into dst. */
static void lazy_bytes(const struct sim_tensor *r, size_t at, size_t n, unsigned char *dst)
{
    if (r->random)
        random_bytes(&r->rnd, at, n, dst);
    else
        fill_bytes(&r->fill, at, n, dst);
}

void sim_tensor_read_bytes(const struct sim_tensor *t, size_t off, size_t n, void *buf)
{
    assert(off <= t->nbytes && n <= t->nbytes - off);
    const struct sim_tensor *r = root_of(t);
    if (r->mem)
        memcpy(buf, (const unsigned char *)r->mem + t->offset + off, n);
    else
        lazy_bytes(r, t->offset + off, n, buf);
}

void *sim_tensor_materialize(struct sim_tensor *t)
{
    struct sim_tensor *r = root_of(t);
    if (!r->mem) {
        unsigned char *m = sim_xmalloc(r->nbytes ? r->nbytes : 1);
        lazy_bytes(r, 0, r->nbytes, m);
        r->mem = m;
    }
    return (unsigned char *)r->mem + t->offset;
}

struct sim_tensor *sim_tensor_copy_range(const struct sim_tensor *src, size_t off,
                                         enum sim_dtype dtype, unsigned ndim, const int64_t *shape)
{
    size_t nbytes = checked_nbytes(dtype, ndim, shape);
    assert(off <= src->nbytes && nbytes <= src->nbytes - off && "a range inside the source");
    const struct sim_tensor *r = root_of(src);
    if (!r->mem && r->random) {
        struct sim_tensor *t = alloc_header(dtype, ndim, shape, nbytes);
        t->random = true;
        t->rnd = r->rnd;
        t->rnd.skip += src->offset + off;
        return t;
    }
    if (!r->mem) {
        struct sim_fill f;
        fill_rotate(&r->fill, src->offset + off, &f);
        return sim_tensor_new_fill(dtype, ndim, shape, &f);
    }
    struct sim_tensor *t = sim_tensor_new_uninit(dtype, ndim, shape);
    if (nbytes)
        memcpy(t->mem, (const unsigned char *)r->mem + src->offset + off, nbytes);
    return t;
}

struct sim_tensor *sim_tensor_copy(const struct sim_tensor *src)
{
    return sim_tensor_copy_range(src, 0, src->dtype, src->ndim, src->shape);
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
        free(t->mem);
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
    struct sim_tensor *v = alloc_header(dtype, ndim, shape, nbytes);
    v->base = sim_tensor_ref(root_of(t));
    v->offset = t->offset;
    return v;
}

struct sim_tensor *sim_tensor_view_at(struct sim_tensor *t, size_t off, enum sim_dtype dtype,
                                      unsigned ndim, const int64_t *shape)
{
    size_t nbytes = checked_nbytes(dtype, ndim, shape);
    assert(off <= t->nbytes && nbytes <= t->nbytes - off && "a view inside the tensor");
    struct sim_tensor *v = alloc_header(dtype, ndim, shape, nbytes);
    v->base = sim_tensor_ref(root_of(t));
    v->offset = t->offset + off;
    return v;
}

size_t sim_tensor_numel(const struct sim_tensor *t)
{
    size_t n = 1;
    for (unsigned i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    return n;
}

struct sim_tensor *sim_tensor_new_random(enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                                         uint64_t state, double lo, double hi)
{
    struct sim_tensor *t = alloc_header(dtype, ndim, shape, checked_nbytes(dtype, ndim, shape));
    t->random = true;
    t->rnd = (struct sim_random){dtype, state, lo, hi, 0};
    return t;
}

/* ---- random values ------------------------------------------------------------------------ */

#define SPLITMIX_STEP UINT64_C(0x9e3779b97f4a7c15)

uint64_t sim_random_advance(uint64_t state, uint64_t n)
{
    return state + n * SPLITMIX_STEP;
}

/* splitmix64's output for the state after a step (a small, well-mixed generator). */
static uint64_t splitmix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void encode(enum sim_dtype dtype, double v, void *out);

/* n bytes of the stream g from its byte `at` (after g->skip), into dst. */
static void random_bytes(const struct sim_random *g, size_t at, size_t n, unsigned char *dst)
{
    size_t size = sim_dtype_size(g->dtype);
    uint64_t b = g->skip + at, e = b / size;
    size_t within = (size_t)(b % size);
    bool integer = !sim_dtype_is_float(g->dtype);
    while (n > 0) {
        uint64_t z = splitmix(g->state + (e + 1) * SPLITMIX_STEP);
        double u = (double)(z >> 11) / (double)(UINT64_C(1) << 53);
        double v = g->lo + (g->hi - g->lo) * u;
        unsigned char el[8];
        encode(g->dtype, integer ? floor(v) : v, el);
        size_t k = size - within < n ? size - within : n;
        memcpy(dst, el + within, k);
        dst += k;
        n -= k;
        within = 0;
        e++;
    }
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
    size_t size = sim_dtype_size(t->dtype);
    union elem e = {0};
    sim_tensor_read_bytes(t, i * size, size, &e);
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
    encode(t->dtype, v, (unsigned char *)sim_tensor_data(t) + i * sim_dtype_size(t->dtype));
}

/* v as an element of dtype, into out (sim_tensor_set's conversion). */
static void encode(enum sim_dtype dtype, double v, void *out)
{
    union elem e;
    switch (dtype) {
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
    memcpy(out, &e, sim_dtype_size(dtype));
}

/* ---- patterns ----------------------------------------------------------------------------- */

void sim_fill_set(struct sim_fill *f, const void *bytes, unsigned unit)
{
    assert(unit == 1 || unit == 2 || unit == 4 || unit == 8);
    const unsigned char *b = bytes;
    memset(f, 0, sizeof(*f));
    f->unit = 1;
    f->bytes[0] = b[0];
    for (unsigned k = 1; k < unit; k++)
        if (b[k] != b[0]) {
            f->unit = unit;
            memcpy(f->bytes, b, unit);
            break;
        }
}

bool sim_fill_is_zero(const struct sim_fill *f)
{
    for (unsigned k = 0; k < f->unit; k++)
        if (f->bytes[k])
            return false;
    return true;
}

int sim_fill_from_value(enum sim_dtype dtype, double v, struct sim_fill *f)
{
    if (isnan(v))
        return -1;
    double lo = 0, hi = 0;
    switch (dtype) {
    case SIM_F32:
    case SIM_F16:
    case SIM_BF16: break;
    case SIM_I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case SIM_I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case SIM_I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case SIM_I64: lo = -9223372036854775808.0, hi = 9223372036854774784.0; break;
    case SIM_U8: hi = UINT8_MAX; break;
    case SIM_U16: hi = UINT16_MAX; break;
    case SIM_U32: hi = UINT32_MAX; break;
    case SIM_BOOL: hi = 1; break;
    case SIM_DTYPE_COUNT: return -1;
    }
    if (!sim_dtype_is_float(dtype) && (v != floor(v) || v < lo || v > hi))
        return -1;
    int64_t one = 1;
    struct sim_tensor *t = sim_tensor_new(dtype, 1, &one);
    sim_tensor_set(t, 0, v);
    bool finite = isfinite(sim_tensor_get(t, 0));
    if (finite)
        sim_fill_set(f, t->mem, (unsigned)t->nbytes);
    sim_tensor_unref(t);
    return finite ? 0 : -1;
}

char *sim_fill_format(const struct sim_fill *f, char *buf, size_t size)
{
    if (sim_fill_is_zero(f)) {
        snprintf(buf, size, "pattern zero");
        return buf;
    }
    char hex[2 * SIM_FILL_MAX + 1];
    for (unsigned k = 0; k < f->unit; k++) /* little-endian: the last byte first */
        snprintf(hex + 2 * k, 3, "%02x", f->bytes[f->unit - 1 - k]);
    snprintf(buf, size, "fill 0x%s", hex);
    return buf;
}
