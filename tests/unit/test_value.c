/*
 * Value trees: the maps that carry op params and configs keep insertion order, replace in
 * place, delete; clones are deep (tensors shared by reference); equality is structural;
 * typed getters fall back on a missing key or another type.
 */
#include "sim/data/tensor.h"
#include "sim/data/value.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *key_at(const struct sim_value *m, size_t i)
{
    return m->u.map.keys[i];
}

Test(value, map_keeps_insertion_order)
{
    struct sim_value *m = sim_value_map();
    /* deliberately not alphabetical: params print in the order the ADR lists them */
    sim_value_map_set_int(m, "src_addr", 4096);
    sim_value_map_set_int(m, "nbytes", 256);
    sim_value_map_set_str(m, "handle_id", "h0");
    sim_value_map_set_bool(m, "a_flag", true);
    cr_assert_eq(m->u.map.len, 4);
    cr_assert_str_eq(key_at(m, 0), "src_addr");
    cr_assert_str_eq(key_at(m, 1), "nbytes");
    cr_assert_str_eq(key_at(m, 2), "handle_id");
    cr_assert_str_eq(key_at(m, 3), "a_flag");
    sim_value_free(m);
}

Test(value, set_replaces_in_place)
{
    struct sim_value *m = sim_value_map();
    sim_value_map_set_int(m, "a", 1);
    sim_value_map_set_int(m, "b", 2);
    sim_value_map_set_int(m, "c", 3);
    sim_value_map_set_str(m, "b", "two"); /* another type, same key */
    cr_assert_eq(m->u.map.len, 3, "no duplicate key");
    cr_assert_str_eq(key_at(m, 1), "b", "the key keeps its position");
    cr_assert_str_eq(sim_value_get_str(m, "b", NULL), "two");
    cr_assert_eq(sim_value_get_int(m, "c", 0), 3);
    sim_value_free(m); /* the old value was freed on replacement: ASan checks no leak */
}

Test(value, del_removes_and_closes_the_gap)
{
    struct sim_value *m = sim_value_map();
    sim_value_map_set_int(m, "a", 1);
    sim_value_map_set_take(m, "b", sim_value_int_list((int64_t[]){1, 2}, 2));
    sim_value_map_set_int(m, "c", 3);
    cr_assert(sim_value_map_del(m, "b"));
    cr_assert_not(sim_value_map_del(m, "b"), "already gone");
    cr_assert_not(sim_value_map_del(m, "zzz"));
    cr_assert_eq(m->u.map.len, 2);
    cr_assert_str_eq(key_at(m, 0), "a");
    cr_assert_str_eq(key_at(m, 1), "c");
    cr_assert_null(sim_value_map_get(m, "b"));
    cr_assert_eq(sim_value_get_int(m, "c", 0), 3);
    /* and the map still grows normally afterwards */
    sim_value_map_set_int(m, "d", 4);
    cr_assert_str_eq(key_at(m, 2), "d");
    cr_assert_not(sim_value_map_del(NULL, "a"));
    struct sim_value *l = sim_value_list();
    cr_assert_not(sim_value_map_del(l, "a"), "not a map");
    sim_value_free(l);
    sim_value_free(m);
}

Test(value, clone_is_deep_and_shares_tensors)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, (int64_t[]){2});
    struct sim_value *m = sim_value_map();
    sim_value_map_set_take(m, "shape", sim_value_int_list((int64_t[]){2, 3}, 2));
    sim_value_map_set_str(m, "dtype", "f16");
    sim_value_map_set_take(m, "snapshot", sim_value_tensor(t));
    struct sim_value *c = sim_value_clone(m);
    cr_assert(sim_value_equal(m, c));
    cr_assert_neq(c, m);

    /* changing the clone leaves the original alone, at every depth */
    struct sim_value *shape = sim_value_map_get(c, "shape");
    cr_assert_neq(shape, sim_value_map_get(m, "shape"));
    shape->u.list.items[0]->u.i = 99;
    sim_value_map_set_str(c, "dtype", "f32");
    cr_assert_eq(sim_value_map_get(m, "shape")->u.list.items[0]->u.i, 2);
    cr_assert_str_eq(sim_value_get_str(m, "dtype", ""), "f16");
    cr_assert_neq(sim_value_map_get(c, "dtype")->u.str.s, sim_value_map_get(m, "dtype")->u.str.s);
    cr_assert_not(sim_value_equal(m, c));

    /* the tensor is shared, with a reference per holder */
    cr_assert_eq(sim_value_map_get(c, "snapshot")->u.tensor, t);
    cr_assert_eq(t->refs, 3);
    sim_value_free(c);
    cr_assert_eq(t->refs, 2);
    sim_value_free(m);
    cr_assert_eq(t->refs, 1);
    sim_tensor_unref(t);
    cr_assert_null(sim_value_clone(NULL));
}

Test(value, clone_keeps_source_positions)
{
    struct sim_value *v = sim_value_str("x");
    v->line = 12;
    v->col = 5;
    struct sim_value *c = sim_value_clone(v);
    cr_assert_eq(c->line, 12);
    cr_assert_eq(c->col, 5);
    sim_value_free(v);
    sim_value_free(c);
}

Test(value, equality_is_structural)
{
    struct sim_value *a = sim_value_map(), *b = sim_value_map();
    sim_value_map_set_int(a, "m", 128);
    sim_value_map_set_take(a, "l", sim_value_int_list((int64_t[]){1, 2, 3}, 3));
    sim_value_map_set_int(b, "m", 128);
    sim_value_map_set_take(b, "l", sim_value_int_list((int64_t[]){1, 2, 3}, 3));
    cr_assert(sim_value_equal(a, b));
    /* key order matters: these maps would serialise differently */
    struct sim_value *c = sim_value_map();
    sim_value_map_set_take(c, "l", sim_value_int_list((int64_t[]){1, 2, 3}, 3));
    sim_value_map_set_int(c, "m", 128);
    cr_assert_not(sim_value_equal(a, c));
    /* an int is not a float, even of the same value */
    struct sim_value *i = sim_value_int(1), *f = sim_value_float(1.0);
    cr_assert_not(sim_value_equal(i, f));
    /* lists of different length; strings with embedded NULs compare by length */
    struct sim_value *l2 = sim_value_int_list((int64_t[]){1, 2}, 2);
    cr_assert_not(sim_value_equal(sim_value_map_get(a, "l"), l2));
    struct sim_value *s1 = sim_value_strn("a\0b", 3), *s2 = sim_value_strn("a\0c", 3);
    cr_assert_not(sim_value_equal(s1, s2));
    cr_assert(sim_value_equal(NULL, NULL));
    cr_assert_not(sim_value_equal(a, NULL));
    struct sim_value *n1 = sim_value_null(), *n2 = sim_value_null();
    cr_assert(sim_value_equal(n1, n2));
    struct sim_value *t1 = sim_value_bool(true), *t2 = sim_value_bool(false);
    cr_assert_not(sim_value_equal(t1, t2));
    struct sim_value *vals[] = {a, b, c, i, f, l2, s1, s2, n1, n2, t1, t2};
    for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++)
        sim_value_free(vals[k]);
}

Test(value, tensors_compare_by_identity)
{
    struct sim_tensor *x = sim_tensor_new(SIM_U8, 1, (int64_t[]){1});
    struct sim_tensor *y = sim_tensor_new(SIM_U8, 1, (int64_t[]){1}); /* same contents */
    struct sim_value *a = sim_value_tensor(x), *b = sim_value_tensor(x), *c = sim_value_tensor(y);
    cr_assert(sim_value_equal(a, b));
    cr_assert_not(sim_value_equal(a, c));
    struct sim_value *n = sim_value_tensor(NULL);
    cr_assert_eq(n->type, SIM_V_NULL, "a NULL tensor is a null value");
    sim_value_free(a);
    sim_value_free(b);
    sim_value_free(c);
    sim_value_free(n);
    sim_tensor_unref(x);
    sim_tensor_unref(y);
}

Test(value, content_equality_compares_tensor_data)
{
    /* two tensors with the same bytes in the same place of equal trees */
    struct sim_tensor *x = sim_tensor_new(SIM_F32, 2, (int64_t[]){2, 3});
    struct sim_tensor *y = sim_tensor_new(SIM_F32, 2, (int64_t[]){2, 3});
    sim_tensor_set(x, 4, 1.5);
    sim_tensor_set(y, 4, 1.5);
    struct sim_value *a = sim_value_map(), *b = sim_value_map();
    sim_value_map_set_take(a, "ins", sim_value_list());
    sim_value_list_push_take(sim_value_map_get(a, "ins"), sim_value_tensor(x));
    sim_value_map_set_take(b, "ins", sim_value_list());
    sim_value_list_push_take(sim_value_map_get(b, "ins"), sim_value_tensor(y));
    cr_assert(sim_value_equal_content(a, b));
    cr_assert_not(sim_value_equal(a, b), "by identity they differ");
    /* one element apart */
    sim_tensor_set(y, 5, 2.0);
    cr_assert_not(sim_value_equal_content(a, b));
    /* the same bytes in another shape or dtype */
    struct sim_tensor *x6 = sim_tensor_new(SIM_F32, 1, (int64_t[]){6});
    struct sim_tensor *xi = sim_tensor_new(SIM_I32, 2, (int64_t[]){2, 3});
    struct sim_tensor *x0 = sim_tensor_new(SIM_F32, 2, (int64_t[]){2, 3});
    struct sim_value *v6 = sim_value_tensor(x6), *vi = sim_value_tensor(xi),
                     *v0 = sim_value_tensor(x0);
    struct sim_value *vz = sim_value_tensor(sim_tensor_new(SIM_F32, 2, (int64_t[]){2, 3}));
    sim_tensor_unref(vz->u.tensor); /* vz holds the only reference */
    cr_assert(sim_value_equal_content(v0, vz), "zero-filled tensors alike");
    cr_assert_not(sim_value_equal_content(v0, v6));
    cr_assert_not(sim_value_equal_content(v0, vi));
    cr_assert(sim_value_equal_content(NULL, NULL));
    cr_assert_not(sim_value_equal_content(a, NULL));
    struct sim_value *vals[] = {a, b, v6, vi, v0, vz};
    for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++)
        sim_value_free(vals[k]);
    struct sim_tensor *ts[] = {x, y, x6, xi, x0};
    for (size_t k = 0; k < sizeof(ts) / sizeof(ts[0]); k++)
        sim_tensor_unref(ts[k]);
}

Test(value, int_list_builds_a_shape)
{
    int64_t dims[] = {128, 256, -1};
    struct sim_value *l = sim_value_int_list(dims, 3);
    cr_assert_eq(l->type, SIM_V_LIST);
    cr_assert_eq(l->u.list.len, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(l->u.list.items[i]->type, SIM_V_INT);
        cr_assert_eq(l->u.list.items[i]->u.i, dims[i]);
    }
    sim_value_free(l);
    struct sim_value *e = sim_value_int_list(NULL, 0);
    cr_assert_eq(e->type, SIM_V_LIST);
    cr_assert_eq(e->u.list.len, 0, "a scalar's shape is the empty tuple");
    sim_value_free(e);
}

Test(value, list_push_grows)
{
    struct sim_value *l = sim_value_list();
    for (int64_t i = 0; i < 100; i++) {
        struct sim_value *item = sim_value_int(i);
        cr_assert_eq(sim_value_list_push_take(l, item), item);
    }
    cr_assert_eq(l->u.list.len, 100);
    cr_assert_eq(l->u.list.items[99]->u.i, 99);
    sim_value_free(l);
}

Test(value, typed_getters_fall_back)
{
    struct sim_value *m = sim_value_map();
    sim_value_map_set_int(m, "m", 64);
    sim_value_map_set_float(m, "gbps", 12.5);
    sim_value_map_set_str(m, "dtype", "bf16");
    sim_value_map_set_bool(m, "transpose_a", true);
    sim_value_map_set_take(m, "axis", sim_value_null());

    cr_assert_eq(sim_value_get_int(m, "m", -1), 64);
    cr_assert_eq(sim_value_get_float(m, "gbps", -1), 12.5);
    cr_assert_eq(sim_value_get_float(m, "m", -1), 64.0, "an int reads as a float");
    cr_assert_str_eq(sim_value_get_str(m, "dtype", NULL), "bf16");
    cr_assert_eq(sim_value_get_bool(m, "transpose_a", false), true);

    /* missing keys and other types give the fallback */
    cr_assert_eq(sim_value_get_int(m, "k", -1), -1);
    cr_assert_eq(sim_value_get_int(m, "gbps", -1), -1, "a float does not read as an int");
    cr_assert_eq(sim_value_get_int(m, "axis", 7), 7, "None is not an int");
    cr_assert_eq(sim_value_get_float(m, "dtype", 2.5), 2.5);
    cr_assert_str_eq(sim_value_get_str(m, "m", "dflt"), "dflt");
    cr_assert_eq(sim_value_get_bool(m, "m", false), false, "an int is not a bool");
    cr_assert_eq(sim_value_get_bool(m, "nope", true), true);

    /* getters on things that are not maps */
    cr_assert_eq(sim_value_get_int(NULL, "m", 5), 5);
    struct sim_value *i = sim_value_int(3);
    cr_assert_null(sim_value_map_get(i, "m"));
    cr_assert_eq(sim_value_get_int(i, "m", 5), 5);
    sim_value_free(i);
    sim_value_free(m);
}

Test(value, strings_are_copied)
{
    char buf[8] = "tcm";
    struct sim_value *s = sim_value_str(buf);
    strcpy(buf, "hbm");
    cr_assert_str_eq(s->u.str.s, "tcm");
    cr_assert_eq(s->u.str.len, 3);
    sim_value_free(s);
    struct sim_value *n = sim_value_strn("abcdef", 3);
    cr_assert_str_eq(n->u.str.s, "abc", "strn copies len bytes and terminates");
    sim_value_free(n);
    sim_value_free(NULL);
}

Test(value, type_names)
{
    static const char *const names[] = {"null", "bool", "int", "float",
                                        "str",  "list", "map", "tensor"};
    for (unsigned t = SIM_V_NULL; t <= SIM_V_TENSOR; t++)
        cr_assert_str_eq(sim_vtype_name((enum sim_vtype)t), names[t]);
    cr_assert_str_eq(sim_vtype_name((enum sim_vtype)42), "?");
}
