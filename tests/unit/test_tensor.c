/*
 * Tensors: allocation, reference counting, views sharing bytes with their base
 * (reinterpret and reshape), the layout mismatch message, and element access; then
 * pattern-backed tensors: their values without their bytes, copies and views that stay
 * patterns, materialising through the accessor, the patterns of values, and random values
 * of the counter-based generator, computed where read.
 */
#include "sim/data/tensor.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

Test(tensor, new_is_zero_filled_with_one_reference)
{
    int64_t shape[] = {2, 3};
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 2, shape);
    cr_assert_eq(t->refs, 1);
    cr_assert_eq(t->dtype, SIM_F32);
    cr_assert_eq(t->ndim, 2);
    cr_assert_eq(t->shape[0], 2);
    cr_assert_eq(t->shape[1], 3);
    cr_assert_eq(t->nbytes, 24);
    cr_assert_eq(sim_tensor_numel(t), 6);
    cr_assert_null(t->base);
    for (size_t i = 0; i < 24; i++)
        cr_assert_eq(((unsigned char *)sim_tensor_cdata(t))[i], 0);
    sim_tensor_unref(t);
}

Test(tensor, scalar_and_empty_shapes)
{
    struct sim_tensor *s = sim_tensor_new(SIM_I64, 0, NULL);
    cr_assert_eq(s->ndim, 0);
    cr_assert_eq(sim_tensor_numel(s), 1, "a scalar has one element");
    cr_assert_eq(s->nbytes, 8);
    int64_t shape[] = {4, 0, 3};
    struct sim_tensor *e = sim_tensor_new(SIM_F16, 3, shape);
    cr_assert_eq(sim_tensor_numel(e), 0);
    cr_assert_eq(e->nbytes, 0);
    cr_assert_not_null(sim_tensor_cdata(e));
    sim_tensor_unref(s);
    sim_tensor_unref(e);
    sim_tensor_unref(NULL);
}

Test(tensor, refcount_keeps_data_alive_until_last_unref)
{
    int64_t shape[] = {4};
    struct sim_tensor *t = sim_tensor_new(SIM_I32, 1, shape);
    struct sim_tensor *r = sim_tensor_ref(t);
    cr_assert_eq(r, t);
    cr_assert_eq(t->refs, 2);
    sim_tensor_unref(t);
    cr_assert_eq(r->refs, 1);
    sim_tensor_set(r, 3, 7); /* still valid: ASan would catch a use after free */
    cr_assert_eq(sim_tensor_get(r, 3), 7.0);
    sim_tensor_unref(r);
}

Test(tensor, mutation_through_a_shared_reference_is_visible)
{
    int64_t shape[] = {3};
    struct sim_tensor *a = sim_tensor_new(SIM_F32, 1, shape);
    struct sim_tensor *b = sim_tensor_ref(a);
    sim_tensor_set(b, 1, 2.5);
    cr_assert_eq(sim_tensor_get(a, 1), 2.5);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
}

Test(tensor, copy_is_detached)
{
    int64_t shape[] = {2};
    struct sim_tensor *a = sim_tensor_new(SIM_I16, 1, shape);
    sim_tensor_set(a, 0, -5);
    struct sim_tensor *c = sim_tensor_copy(a);
    cr_assert_neq(sim_tensor_cdata(c), sim_tensor_cdata(a));
    cr_assert_eq(c->refs, 1);
    cr_assert_eq(sim_tensor_get(c, 0), -5.0);
    sim_tensor_set(a, 0, 9);
    cr_assert_eq(sim_tensor_get(c, 0), -5.0, "the copy does not see later writes");
    sim_tensor_unref(a);
    sim_tensor_unref(c);
}

Test(tensor, reinterpret_f32_as_u32_gives_the_ieee_bits)
{
    int64_t shape[] = {3};
    struct sim_tensor *f = sim_tensor_new(SIM_F32, 1, shape);
    sim_tensor_set(f, 0, 1.0);
    sim_tensor_set(f, 1, -2.0);
    sim_tensor_set(f, 2, 0.5);
    struct sim_tensor *u = sim_tensor_view(f, SIM_U32, 1, shape, NULL);
    cr_assert_not_null(u);
    cr_assert_eq(sim_tensor_cdata(u), sim_tensor_cdata(f), "a view shares the bytes");
    cr_assert_eq(u->base, f);
    cr_assert_eq(f->refs, 2, "the view holds a reference to its base");
    cr_assert_eq(sim_tensor_get(u, 0), (double)0x3f800000u);
    cr_assert_eq(sim_tensor_get(u, 1), (double)0xc0000000u);
    cr_assert_eq(sim_tensor_get(u, 2), (double)0x3f000000u);
    /* writes through the view are writes to the base */
    sim_tensor_set(u, 0, (double)0x40490fdbu);
    cr_assert_float_eq(sim_tensor_get(f, 0), 3.14159274, 1e-7);
    sim_tensor_unref(f);
    cr_assert_eq(u->base->refs, 1, "the base lives on while the view does");
    cr_assert_eq(sim_tensor_get(u, 1), (double)0xc0000000u);
    sim_tensor_unref(u);
}

Test(tensor, reshape_and_dtype_change_together)
{
    int64_t s23[] = {2, 3}, s12[] = {12}, s62[] = {6, 2};
    struct sim_tensor *f = sim_tensor_new(SIM_F32, 2, s23);
    for (size_t i = 0; i < 6; i++)
        sim_tensor_set(f, i, (double)i);
    struct sim_tensor *r = sim_tensor_view(f, SIM_F32, 1, (int64_t[]){6}, NULL);
    cr_assert_not_null(r);
    cr_assert_eq(r->ndim, 1);
    cr_assert_eq(sim_tensor_get(r, 4), 4.0, "row-major order is kept");
    struct sim_tensor *h = sim_tensor_view(f, SIM_F16, 1, s12, NULL);
    cr_assert_not_null(h);
    cr_assert_eq(h->nbytes, 24);
    /* a view of a view hangs off the tensor owning the bytes */
    struct sim_tensor *b = sim_tensor_view(h, SIM_U16, 2, s62, NULL);
    cr_assert_not_null(b);
    cr_assert_eq(b->base, f);
    cr_assert_eq(f->refs, 4);
    /* little-endian: element 1 of f (1.0f = 0x3f800000) is u16 words 2 and 3 */
    cr_assert_eq(sim_tensor_get(b, 2), 0.0);
    cr_assert_eq(sim_tensor_get(b, 3), (double)0x3f80);
    sim_tensor_unref(f);
    sim_tensor_unref(r);
    sim_tensor_unref(h);
    sim_tensor_unref(b);
}

Test(tensor, view_with_other_byte_count_names_both_layouts)
{
    int64_t s23[] = {2, 3}, s5[] = {5};
    struct sim_tensor *f = sim_tensor_new(SIM_F32, 2, s23);
    struct diag d;
    diag_clear(&d);
    cr_assert_null(sim_tensor_view(f, SIM_F16, 1, s5, &d));
    cr_assert_str_eq(
        d.msg, "cannot view f32 (2, 3) (24 bytes) as f16 (5,) (10 bytes): byte counts differ");
    cr_assert_eq(f->refs, 1, "a failed view takes no reference");
    cr_assert_null(sim_tensor_view(f, SIM_I8, 0, NULL, &d));
    cr_assert_str_eq(d.msg,
                     "cannot view f32 (2, 3) (24 bytes) as i8 () (1 byte): byte counts differ");
    cr_assert_null(sim_tensor_view(f, SIM_I8, 1, (int64_t[]){-24}, &d));
    cr_assert(strstr(d.msg, "negative dimension"), "%s", d.msg);
    cr_assert_null(sim_tensor_view(f, SIM_I8, SIM_MAX_DIMS + 1, NULL, &d));
    cr_assert(strstr(d.msg, "9 dimensions"), "%s", d.msg);
    cr_assert_null(sim_tensor_view(f, SIM_I8, 1, s5, NULL), "the diag is optional");
    sim_tensor_unref(f);
}

Test(tensor, shape_format_is_a_python_tuple)
{
    char buf[64];
    cr_assert_str_eq(sim_shape_format(0, NULL, buf, sizeof(buf)), "()");
    cr_assert_str_eq(sim_shape_format(1, (int64_t[]){5}, buf, sizeof(buf)), "(5,)");
    cr_assert_str_eq(sim_shape_format(3, (int64_t[]){2, 3, 4}, buf, sizeof(buf)), "(2, 3, 4)");
    /* a short buffer is cut like snprintf: as much of "(123, 4)" as fits, NUL-terminated */
    memset(buf, 'x', sizeof(buf));
    sim_shape_format(2, (int64_t[]){123, 4}, buf, 6);
    cr_assert_eq(strlen(buf), 5);
    cr_assert_eq(strncmp(buf, "(123, 4)", 5), 0);
    cr_assert_eq(buf[6], 'x', "nothing written past the buffer");
}

Test(tensor, shape_nbytes_rejects_bad_shapes)
{
    size_t n = 99;
    cr_assert_eq(sim_shape_nbytes(SIM_F32, 2, (int64_t[]){2, 3}, &n), 0);
    cr_assert_eq(n, 24);
    cr_assert_eq(sim_shape_nbytes(SIM_I8, 0, NULL, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(sim_shape_nbytes(SIM_F32, 1, (int64_t[]){-1}, &n), -1);
    cr_assert_eq(sim_shape_nbytes(SIM_I64, 2, (int64_t[]){INT64_MAX, 2}, &n), -1);
    cr_assert_eq(sim_shape_nbytes(SIM_U8, 2, (int64_t[]){1ll << 32, 1ll << 32}, &n), -1);
    /* a zero elsewhere does not make an overflowing shape valid */
    cr_assert_eq(sim_shape_nbytes(SIM_U8, 3, (int64_t[]){0, 1ll << 40, 1ll << 40}, &n), -1);
    cr_assert_eq(sim_shape_nbytes(SIM_U8, 2, (int64_t[]){0, 1ll << 40}, &n), 0);
    cr_assert_eq(n, 0);
    cr_assert_eq(sim_shape_nbytes(SIM_U8, SIM_MAX_DIMS + 1, (int64_t[9]){0}, &n), -1);
}

Test(tensor, get_and_set_convert_per_dtype)
{
    int64_t s[] = {1};
    struct sim_tensor *t;

    t = sim_tensor_new(SIM_F16, 1, s);
    sim_tensor_set(t, 0, 0.1);
    cr_assert_eq(*(uint16_t *)sim_tensor_cdata(t), 0x2e66, "f16 stores IEEE half bits");
    cr_assert_float_eq(sim_tensor_get(t, 0), 0.0999755859375, 1e-12);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_BF16, 1, s);
    sim_tensor_set(t, 0, 1.0);
    cr_assert_eq(*(uint16_t *)sim_tensor_cdata(t), 0x3f80);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_I8, 1, s);
    sim_tensor_set(t, 0, -3.9);
    cr_assert_eq(sim_tensor_get(t, 0), -3.0, "truncates toward zero");
    sim_tensor_set(t, 0, 1000);
    cr_assert_eq(sim_tensor_get(t, 0), 127.0, "saturates");
    sim_tensor_set(t, 0, -1000);
    cr_assert_eq(sim_tensor_get(t, 0), -128.0);
    sim_tensor_set(t, 0, NAN);
    cr_assert_eq(sim_tensor_get(t, 0), 0.0);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_U8, 1, s);
    sim_tensor_set(t, 0, -1);
    cr_assert_eq(sim_tensor_get(t, 0), 0.0);
    sim_tensor_set(t, 0, 255.9);
    cr_assert_eq(sim_tensor_get(t, 0), 255.0);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_U32, 1, s);
    sim_tensor_set(t, 0, 4294967295.0);
    cr_assert_eq(*(uint32_t *)sim_tensor_cdata(t), UINT32_MAX);
    sim_tensor_set(t, 0, 1e20);
    cr_assert_eq(*(uint32_t *)sim_tensor_cdata(t), UINT32_MAX);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_I64, 1, s);
    sim_tensor_set(t, 0, 1e30);
    cr_assert_eq(*(int64_t *)sim_tensor_cdata(t), INT64_MAX);
    sim_tensor_set(t, 0, -1e30);
    cr_assert_eq(*(int64_t *)sim_tensor_cdata(t), INT64_MIN);
    sim_tensor_set(t, 0, -123456789012.0);
    cr_assert_eq(*(int64_t *)sim_tensor_cdata(t), -123456789012ll);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_I16, 1, s);
    sim_tensor_set(t, 0, -32769);
    cr_assert_eq(*(int16_t *)sim_tensor_cdata(t), INT16_MIN);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_BOOL, 1, s);
    sim_tensor_set(t, 0, 0.25);
    cr_assert_eq(*(uint8_t *)sim_tensor_cdata(t), 1);
    sim_tensor_set(t, 0, 0);
    cr_assert_eq(sim_tensor_get(t, 0), 0.0);
    *(uint8_t *)sim_tensor_data(t) = 7; /* any non-zero byte reads as true */
    cr_assert_eq(sim_tensor_get(t, 0), 1.0);
    sim_tensor_unref(t);
}

/* ---- pattern-backed tensors ---------------------------------------------------------------- */

/* The f16 pattern of 1.0 (0x3c00). */
static struct sim_fill f16_one(void)
{
    struct sim_fill f;
    cr_assert_eq(sim_fill_from_value(SIM_F16, 1.0, &f), 0);
    return f;
}

Test(tensor, a_pattern_tensor_has_its_values_without_its_bytes)
{
    /* 16 GiB of f16 ones: a header, nothing more */
    int64_t shape[] = {1 << 17, 1 << 16};
    struct sim_fill f = f16_one();
    struct sim_tensor *t = sim_tensor_new_fill(SIM_F16, 2, shape, &f);
    cr_assert_eq(t->nbytes, (size_t)1 << 34);
    cr_assert(sim_tensor_is_lazy(t));
    cr_assert_eq(sim_tensor_get(t, 0), 1.0);
    cr_assert_eq(sim_tensor_get(t, ((size_t)1 << 33) - 1), 1.0, "the last element");
    unsigned char b[5];
    sim_tensor_read_bytes(t, 3, 5, b); /* an unaligned range: 3c 00 3c 00 3c */
    const unsigned char want[5] = {0x3c, 0x00, 0x3c, 0x00, 0x3c};
    cr_assert_arr_eq(b, want, 5);
    struct sim_fill g;
    cr_assert(sim_tensor_pattern(t, &g));
    cr_assert_eq(g.unit, 2);
    cr_assert_eq(g.bytes[0], 0x00);
    cr_assert_eq(g.bytes[1], 0x3c);
    cr_assert(sim_tensor_is_lazy(t), "reading values materialised nothing");
    sim_tensor_unref(t);
}

Test(tensor, copies_and_views_of_a_pattern_stay_patterns)
{
    int64_t n = 1 << 30; /* 2 GiB of f16 */
    struct sim_fill f = f16_one();
    struct sim_tensor *t = sim_tensor_new_fill(SIM_F16, 1, &n, &f);
    struct sim_tensor *c = sim_tensor_copy(t);
    cr_assert(sim_tensor_is_lazy(c));
    cr_assert_eq(c->nbytes, t->nbytes);
    cr_assert_eq(sim_tensor_get(c, 12345), 1.0);
    /* a copy of an odd byte range sees the pattern from there: 00 3c ... as u8 */
    int64_t three = 3;
    struct sim_tensor *r = sim_tensor_copy_range(t, 1, SIM_U8, 1, &three);
    cr_assert(sim_tensor_is_lazy(r));
    cr_assert_eq(sim_tensor_get(r, 0), 0x3c);
    cr_assert_eq(sim_tensor_get(r, 1), 0x00);
    cr_assert_eq(sim_tensor_get(r, 2), 0x3c);
    /* a view reinterprets: f16 1.0 pairs as u32 0x3c003c00 */
    int64_t half = n / 2;
    struct sim_tensor *v = sim_tensor_view(t, SIM_U32, 1, &half, NULL);
    cr_assert_not_null(v);
    cr_assert(sim_tensor_is_lazy(v));
    cr_assert_eq(sim_tensor_get(v, 7), (double)0x3c003c00u);
    int64_t two = 2;
    struct sim_tensor *w = sim_tensor_view_at(t, 6, SIM_F16, 1, &two);
    cr_assert_eq(sim_tensor_get(w, 1), 1.0);
    cr_assert(sim_tensor_is_lazy(t), "none of this materialised the base");
    sim_tensor_unref(w);
    sim_tensor_unref(v);
    sim_tensor_unref(r);
    sim_tensor_unref(c);
    sim_tensor_unref(t);
}

Test(tensor, the_accessor_materialises_and_views_share_the_bytes_after)
{
    int64_t shape[] = {4};
    struct sim_fill f;
    cr_assert_eq(sim_fill_from_value(SIM_F32, 2.5, &f), 0);
    struct sim_tensor *t = sim_tensor_new_fill(SIM_F32, 1, shape, &f);
    struct sim_tensor *v = sim_tensor_view(t, SIM_U32, 1, shape, NULL);
    struct sim_tensor *c = sim_tensor_copy(t);
    /* materialising through the view produces the base's bytes */
    const uint32_t *u = sim_tensor_cdata(v);
    cr_assert_not(sim_tensor_is_lazy(t));
    float x = 2.5f;
    uint32_t bits;
    memcpy(&bits, &x, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(u[i], bits);
    cr_assert_not(sim_tensor_pattern(t, &f), "no longer a pattern");
    /* reference semantics: a write through the base shows in the view, not in the copy */
    sim_tensor_set(t, 1, -1.0);
    cr_assert_eq(sim_tensor_get(v, 1), (double)0xbf800000u);
    cr_assert_eq(sim_tensor_get(c, 1), 2.5);
    cr_assert(sim_tensor_is_lazy(c), "the copy is its own pattern");
    /* a set on a pattern materialises it first */
    sim_tensor_set(c, 0, 7.0);
    cr_assert_eq(sim_tensor_get(c, 0), 7.0);
    cr_assert_eq(sim_tensor_get(c, 3), 2.5);
    sim_tensor_unref(c);
    sim_tensor_unref(v);
    sim_tensor_unref(t);
}

Test(tensor, values_fit_their_dtype_or_not)
{
    struct sim_fill f;
    cr_assert_eq(sim_fill_from_value(SIM_I8, -128, &f), 0);
    cr_assert_eq(f.unit, 1);
    cr_assert_eq(f.bytes[0], 0x80);
    cr_assert_eq(sim_fill_from_value(SIM_I8, 128, &f), -1);
    cr_assert_eq(sim_fill_from_value(SIM_I32, 1.5, &f), -1, "an integer type needs an integer");
    cr_assert_eq(sim_fill_from_value(SIM_U16, -1, &f), -1);
    cr_assert_eq(sim_fill_from_value(SIM_BOOL, 2, &f), -1);
    cr_assert_eq(sim_fill_from_value(SIM_F16, 65504, &f), 0);
    cr_assert_eq(sim_fill_from_value(SIM_F16, 1e5, &f), -1, "beyond f16's range");
    cr_assert_eq(sim_fill_from_value(SIM_F32, NAN, &f), -1);
    cr_assert_eq(sim_fill_from_value(SIM_I64, -1, &f), 0);
    cr_assert_eq(f.unit, 1, "all bytes equal: one byte repeats");
    cr_assert_eq(f.bytes[0], 0xff);
    cr_assert_eq(sim_fill_from_value(SIM_I64, 1, &f), 0);
    cr_assert_eq(f.unit, 8);

    char buf[48];
    cr_assert_eq(sim_fill_from_value(SIM_F32, 0, &f), 0);
    cr_assert_str_eq(sim_fill_format(&f, buf, sizeof(buf)), "pattern zero");
    f = f16_one();
    cr_assert_str_eq(sim_fill_format(&f, buf, sizeof(buf)), "fill 0x3c00");
    cr_assert_eq(sim_fill_from_value(SIM_I64, 1, &f), 0);
    cr_assert_str_eq(sim_fill_format(&f, buf, sizeof(buf)), "fill 0x0000000000000001");
}

/* splitmix64 drawn one by one from state, written here: the k-th value in [lo, hi) */
static double drawn(uint64_t state, uint64_t k, double lo, double hi)
{
    uint64_t z = 0;
    for (uint64_t i = 0; i <= k; i++) {
        z = (state += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        z ^= z >> 31;
    }
    return lo + (hi - lo) * ((double)(z >> 11) / (double)(UINT64_C(1) << 53));
}

Test(tensor, random_values_are_computed_where_read_and_cut_anywhere)
{
    int64_t n = (int64_t)1 << 31; /* 8 GiB of f32 */
    struct sim_tensor *t = sim_tensor_new_random(SIM_F32, 1, &n, 42, -1, 1);
    cr_assert(sim_tensor_is_lazy(t));
    struct sim_fill f;
    cr_assert_not(sim_tensor_pattern(t, &f), "random values are not a repeating pattern");
    for (uint64_t k = 0; k < 40; k += 7)
        cr_assert_eq(sim_tensor_get(t, k), (double)(float)drawn(42, k, -1, 1), "element %llu",
                     (unsigned long long)k);
    /* deep inside: the state moves on by k steps */
    uint64_t far = (uint64_t)1 << 30;
    cr_assert_eq(sim_tensor_get(t, far),
                 (double)(float)drawn(sim_random_advance(42, far), 0, -1, 1));
    /* a copy from an odd byte is the same bytes, still computed where read */
    int64_t six = 6;
    struct sim_tensor *c = sim_tensor_copy_range(t, 4 * 3 + 1, SIM_U8, 1, &six);
    cr_assert(sim_tensor_is_lazy(c));
    unsigned char a[6], b[6];
    sim_tensor_read_bytes(t, 13, 6, a);
    sim_tensor_read_bytes(c, 0, 6, b);
    cr_assert_arr_eq(a, b, 6);
    cr_assert(sim_tensor_is_lazy(t), "nothing materialised");
    sim_tensor_unref(c);
    sim_tensor_unref(t);

    /* integer dtypes round down; materialising gives the values get gave */
    int64_t m = 100;
    struct sim_tensor *i8 = sim_tensor_new_random(SIM_I8, 1, &m, 7, -8, 8);
    double v[100];
    for (int k = 0; k < 100; k++) {
        v[k] = sim_tensor_get(i8, (size_t)k);
        cr_assert_eq(v[k], floor(drawn(7, (uint64_t)k, -8, 8)));
    }
    const int8_t *bytes = sim_tensor_cdata(i8);
    cr_assert_not(sim_tensor_is_lazy(i8));
    for (int k = 0; k < 100; k++)
        cr_assert_eq(bytes[k], v[k]);
    sim_tensor_unref(i8);
}
