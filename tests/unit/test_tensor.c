/*
 * Tensors: allocation, reference counting, views sharing bytes with their base
 * (reinterpret and reshape), the layout mismatch message, and element access.
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
        cr_assert_eq(((unsigned char *)t->data)[i], 0);
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
    cr_assert_not_null(e->data);
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
    cr_assert_neq(c->data, a->data);
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
    cr_assert_eq(u->data, f->data, "a view shares the bytes");
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
    cr_assert_eq(*(uint16_t *)t->data, 0x2e66, "f16 stores IEEE half bits");
    cr_assert_float_eq(sim_tensor_get(t, 0), 0.0999755859375, 1e-12);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_BF16, 1, s);
    sim_tensor_set(t, 0, 1.0);
    cr_assert_eq(*(uint16_t *)t->data, 0x3f80);
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
    cr_assert_eq(*(uint32_t *)t->data, UINT32_MAX);
    sim_tensor_set(t, 0, 1e20);
    cr_assert_eq(*(uint32_t *)t->data, UINT32_MAX);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_I64, 1, s);
    sim_tensor_set(t, 0, 1e30);
    cr_assert_eq(*(int64_t *)t->data, INT64_MAX);
    sim_tensor_set(t, 0, -1e30);
    cr_assert_eq(*(int64_t *)t->data, INT64_MIN);
    sim_tensor_set(t, 0, -123456789012.0);
    cr_assert_eq(*(int64_t *)t->data, -123456789012ll);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_I16, 1, s);
    sim_tensor_set(t, 0, -32769);
    cr_assert_eq(*(int16_t *)t->data, INT16_MIN);
    sim_tensor_unref(t);

    t = sim_tensor_new(SIM_BOOL, 1, s);
    sim_tensor_set(t, 0, 0.25);
    cr_assert_eq(*(uint8_t *)t->data, 1);
    sim_tensor_set(t, 0, 0);
    cr_assert_eq(sim_tensor_get(t, 0), 0.0);
    *(uint8_t *)t->data = 7; /* any non-zero byte reads as true */
    cr_assert_eq(sim_tensor_get(t, 0), 1.0);
    sim_tensor_unref(t);
}
