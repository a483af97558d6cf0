/*
 * Packed op params (sim/oppack.h): every value type survives the trip, keys inside and
 * outside the key table, lookups of one field without expanding, and the visitor walk.
 */
#include "sim/chip/oppack.h"
#include "sim/data/value.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static struct sim_value *sample(void)
{
    struct sim_value *m = sim_value_map();
    sim_value_map_set_int(m, "src_addr", 0x10000000000ll);
    sim_value_map_set_int(m, "nbytes", -5); /* negatives zigzag */
    sim_value_map_set_str(m, "handle_id", "sip0.cube1.pe3/h12345");
    sim_value_map_set_bool(m, "transpose_a", true);
    sim_value_map_set_bool(m, "transpose_b", false);
    sim_value_map_set_float(m, "scale", 0.125);
    sim_value_map_set_take(m, "axis", sim_value_null());
    int64_t shape[3] = {4096, 1, 11008};
    sim_value_map_set_take(m, "shape", sim_value_int_list(shape, 3));
    struct sim_value *inner = sim_value_map();
    sim_value_map_set_str(inner, "a key of its own", "");
    sim_value_map_set_take(m, "nested", inner);
    struct sim_value *l = sim_value_list();
    sim_value_list_push_take(l, sim_value_list());
    sim_value_list_push_take(l, sim_value_str("tcm"));
    sim_value_map_set_take(m, "input_spaces", l);
    return m;
}

Test(oppack, a_value_tree_comes_back_the_same_key_for_key)
{
    struct sim_value *v = sample();
    struct sim_pack b = {0};
    sim_pack_value(&b, v);
    sim_pack_map(&b, 0);
    size_t pos = 0;
    struct sim_value *back = sim_unpack_value(b.p, b.len, &pos);
    cr_assert(sim_value_equal(v, back));
    for (size_t i = 0; i < v->u.map.len; i++)
        cr_assert_str_eq(back->u.map.keys[i], v->u.map.keys[i], "the order of keys is kept");
    struct sim_value *empty = sim_unpack_value(b.p, b.len, &pos);
    cr_assert_eq(empty->type, SIM_V_MAP);
    cr_assert_eq(empty->u.map.len, 0);
    cr_assert_eq(pos, b.len);
    /* smaller than the tree's text, and far smaller than the tree */
    cr_assert_lt(b.len, 120);
    sim_value_free(back);
    sim_value_free(empty);
    sim_value_free(v);
    sim_pack_fini(&b);
}

Test(oppack, one_field_is_read_without_expanding)
{
    struct sim_value *v = sample();
    struct sim_pack b = {0};
    sim_pack_value(&b, v);
    int64_t x;
    cr_assert(sim_unpack_map_int(b.p, b.len, 0, "src_addr", &x));
    cr_assert_eq(x, 0x10000000000ll);
    cr_assert(sim_unpack_map_int(b.p, b.len, 0, "nbytes", &x));
    cr_assert_eq(x, -5);
    cr_assert_not(sim_unpack_map_int(b.p, b.len, 0, "handle_id", &x), "a string is not an int");
    cr_assert_not(sim_unpack_map_int(b.p, b.len, 0, "dst_addr", &x), "absent");
    const char *s;
    size_t len;
    cr_assert(sim_unpack_map_str(b.p, b.len, 0, "handle_id", &s, &len));
    cr_assert_eq(len, strlen("sip0.cube1.pe3/h12345"));
    cr_assert_eq(memcmp(s, "sip0.cube1.pe3/h12345", len), 0);
    sim_value_free(v);
    sim_pack_fini(&b);
}

Test(oppack, keys_by_id_and_by_name_pack_the_same)
{
    struct sim_pack a = {0}, b = {0};
    sim_pack_map(&a, 2);
    sim_pack_key_id(&a, SIM_PK_INPUT_SNAPSHOTS);
    sim_pack_null(&a);
    sim_pack_key_id(&a, SIM_PK_TILE);
    sim_pack_int(&a, 1);
    sim_pack_map(&b, 2);
    sim_pack_key(&b, "input_snapshots");
    sim_pack_null(&b);
    sim_pack_key(&b, "tile");
    sim_pack_int(&b, 1);
    cr_assert_eq(a.len, b.len);
    cr_assert_eq(memcmp(a.p, b.p, a.len), 0);
    sim_pack_fini(&a);
    sim_pack_fini(&b);
}

/* The visitor's events as text. */
static char out[512];
static void put(const char *s)
{
    strncat(out, s, sizeof(out) - strlen(out) - 1);
}
static void v_map_begin(void *c, size_t n)
{
    (void)c;
    char t[16];
    snprintf(t, sizeof(t), "{%zu", n);
    put(t);
}
static void v_map_end(void *c)
{
    (void)c;
    put("}");
}
static void v_list_begin(void *c, size_t n)
{
    (void)c;
    char t[16];
    snprintf(t, sizeof(t), "[%zu", n);
    put(t);
}
static void v_list_end(void *c)
{
    (void)c;
    put("]");
}
static void v_key(void *c, const char *k, size_t len)
{
    (void)c;
    char t[64];
    snprintf(t, sizeof(t), " %.*s=", (int)len, k);
    put(t);
}
static void v_null(void *c)
{
    (void)c;
    put("N");
}
static void v_bool(void *c, bool v)
{
    (void)c;
    put(v ? "T" : "F");
}
static void v_int(void *c, int64_t v)
{
    (void)c;
    char t[32];
    snprintf(t, sizeof(t), "%lld,", (long long)v);
    put(t);
}
static void v_num(void *c, double v)
{
    (void)c;
    char t[32];
    snprintf(t, sizeof(t), "%g,", v);
    put(t);
}
static void v_str(void *c, const char *s, size_t len)
{
    (void)c;
    char t[64];
    snprintf(t, sizeof(t), "'%.*s'", (int)len, s);
    put(t);
}

Test(oppack, the_visitor_walks_every_event_in_order)
{
    struct sim_value *m = sim_value_map();
    sim_value_map_set_int(m, "m", 3);
    int64_t sh[2] = {1, 2};
    sim_value_map_set_take(m, "shape", sim_value_int_list(sh, 2));
    sim_value_map_set_take(m, "x y", sim_value_float(1.5));
    sim_value_map_set_str(m, "dtype", "f16");
    sim_value_map_set_bool(m, "transpose_a", false);
    sim_value_map_set_take(m, "axis", sim_value_null());
    struct sim_pack b = {0};
    sim_pack_value(&b, m);
    struct sim_unpack_visitor v = {v_map_begin, v_map_end, v_list_begin, v_list_end, v_key, v_null,
                                   v_bool,      v_int,     v_num,        v_str,      NULL};
    size_t pos = 0;
    out[0] = '\0';
    sim_unpack_visit(b.p, b.len, &pos, &v);
    cr_assert_str_eq(out, "{6 m=3, shape=[21,2,] x y=1.5, dtype='f16' transpose_a=F axis=N}");
    cr_assert_eq(pos, b.len);
    /* walking the map by hand */
    pos = 0;
    cr_assert_eq(sim_unpack_map_open(b.p, b.len, &pos), 6);
    size_t len;
    const char *k = sim_unpack_key(b.p, b.len, &pos, &len);
    cr_assert_eq(len, 1);
    cr_assert_eq(k[0], 'm');
    sim_value_free(m);
    sim_pack_fini(&b);
}
