/*
 * The wire encoding of the served-run protocol: varints at their limits, value trees
 * round trip, and every way a hostile byte string can lie (overlong integers, lengths and
 * counts beyond the message, nesting too deep, NUL bytes in keys) fails the reader
 * without a large allocation; frames come out of a stream fed a byte at a time, and a
 * declared length of zero or beyond the limit breaks the stream.
 */
#include "trace/wire/wire.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

Test(wire, varints_round_trip_at_their_limits)
{
    static const uint64_t u[] = {0,         1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX - 1,
                                 UINT64_MAX};
    static const int64_t sv[] = {0, -1, 1, -64, 64, INT32_MIN, INT64_MAX, INT64_MIN};
    struct trace_wire_buf b = {0};
    for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
        trace_wire_put_uv(&b, u[i]);
    for (size_t i = 0; i < sizeof(sv) / sizeof(sv[0]); i++)
        trace_wire_put_sv(&b, sv[i]);
    trace_wire_put_f64(&b, -1.5);
    trace_wire_put_u16(&b, 0xBEEF);
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, b.p, b.len);
    for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
        cr_assert_eq(trace_wire_get_uv(&r), u[i]);
    for (size_t i = 0; i < sizeof(sv) / sizeof(sv[0]); i++)
        cr_assert_eq(trace_wire_get_sv(&r), sv[i]);
    cr_assert_eq(trace_wire_get_f64(&r), -1.5);
    cr_assert_eq(trace_wire_get_u16(&r), 0xBEEF);
    cr_assert(trace_wire_rd_ok(&r));
    cr_assert_eq(trace_wire_rd_left(&r), 0);
    /* reading past the end fails, and stays failed */
    cr_assert_eq(trace_wire_get_u8(&r), 0);
    cr_assert_not(trace_wire_rd_ok(&r));
    cr_assert_str_eq(r.what, "truncated message");
    trace_wire_buf_fini(&b);
}

Test(wire, overlong_and_out_of_range_integers_fail)
{
    static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x01};
    static const uint8_t too_big[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02};
    static const uint8_t cut[] = {0x80, 0x80};
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, eleven, sizeof(eleven));
    trace_wire_get_uv(&r);
    cr_assert_not(trace_wire_rd_ok(&r));
    trace_wire_rd_init(&r, too_big, sizeof(too_big));
    trace_wire_get_uv(&r);
    cr_assert_not(trace_wire_rd_ok(&r));
    cr_assert_str_eq(r.what, "integer out of range");
    trace_wire_rd_init(&r, cut, sizeof(cut));
    trace_wire_get_uv(&r);
    cr_assert_not(trace_wire_rd_ok(&r));
}

Test(wire, strings_longer_than_the_message_or_the_limit_fail)
{
    struct trace_wire_buf b = {0};
    trace_wire_put_uv(&b, 1000); /* says 1000 bytes, has 3 */
    trace_wire_put_raw(&b, "abc", 3);
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, b.p, b.len);
    size_t n;
    cr_assert_null(trace_wire_get_bytes(&r, SIZE_MAX, &n));
    cr_assert_not(trace_wire_rd_ok(&r));
    b.len = 0;
    trace_wire_put_str(&b, "hello");
    trace_wire_rd_init(&r, b.p, b.len);
    cr_assert_null(trace_wire_get_str(&r, 4));
    cr_assert_str_eq(r.what, "string too long");
    trace_wire_rd_init(&r, b.p, b.len);
    char *s = trace_wire_get_str(&r, 5);
    cr_assert_str_eq(s, "hello");
    free(s);
    trace_wire_buf_fini(&b);
}

Test(wire, value_trees_round_trip)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_int(v, "i", -42);
    sim_value_map_set_float(v, "f", 0.25);
    sim_value_map_set_bool(v, "b", true);
    sim_value_map_set_take(v, "s", sim_value_strn("a\0b", 3));
    sim_value_map_set_take(v, "n", sim_value_null());
    struct sim_value *l = sim_value_list();
    sim_value_list_push_take(l, sim_value_int(1));
    sim_value_list_push_take(l, sim_value_map());
    sim_value_map_set_take(v, "l", l);
    struct trace_wire_buf b = {0};
    trace_wire_put_value(&b, v);
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, b.p, b.len);
    struct sim_value *w = trace_wire_get_value(&r);
    cr_assert(trace_wire_rd_ok(&r));
    cr_assert_not_null(w);
    cr_assert(sim_value_equal(v, w));
    cr_assert_eq(sim_value_map_get(w, "s")->u.str.len, 3);
    sim_value_free(w);
    sim_value_free(v);
    /* null is NULL, and a NULL writes as null */
    b.len = 0;
    trace_wire_put_value(&b, NULL);
    trace_wire_rd_init(&r, b.p, b.len);
    cr_assert_null(trace_wire_get_value(&r));
    cr_assert(trace_wire_rd_ok(&r));
    trace_wire_buf_fini(&b);
}

Test(wire, hostile_value_trees_fail_cheaply)
{
    struct trace_wire_rd r;
    /* a list of 2^62 items in a few bytes: refused before any allocation */
    static const uint8_t huge[] = {6, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F, 0};
    trace_wire_rd_init(&r, huge, sizeof(huge));
    cr_assert_null(trace_wire_get_value(&r));
    cr_assert_str_eq(r.what, "count beyond the message");
    /* nested deeper than the limit */
    uint8_t deep[200];
    for (size_t i = 0; i < sizeof(deep); i++)
        deep[i] = i % 2 ? 1 : 6; /* list of 1, list of 1, ... */
    trace_wire_rd_init(&r, deep, sizeof(deep));
    cr_assert_null(trace_wire_get_value(&r));
    cr_assert_str_eq(r.what, "value nested too deeply");
    /* a map key holding a NUL */
    static const uint8_t nul_key[] = {7, 1, 3, 'a', 0, 'b', 0};
    trace_wire_rd_init(&r, nul_key, sizeof(nul_key));
    cr_assert_null(trace_wire_get_value(&r));
    cr_assert_str_eq(r.what, "a map key holds a NUL byte");
    /* an unknown tag */
    static const uint8_t tag[] = {42};
    trace_wire_rd_init(&r, tag, sizeof(tag));
    cr_assert_null(trace_wire_get_value(&r));
    cr_assert_not(trace_wire_rd_ok(&r));
}

Test(wire, frames_come_out_of_a_stream_fed_a_byte_at_a_time)
{
    struct trace_wire_buf b = {0};
    for (int k = 0; k < 3; k++) {
        size_t f = trace_wire_frame_begin(&b, (uint8_t)(0x10 + k));
        for (int i = 0; i <= k; i++)
            trace_wire_put_u8(&b, (uint8_t)i);
        cr_assert_eq(trace_wire_frame_end(&b, f), (size_t)(TRACE_WIRE_HEADER + k + 1));
    }
    struct trace_wire_in in;
    trace_wire_in_init(&in, 64);
    int got = 0;
    for (size_t i = 0; i < b.len; i++) {
        size_t room;
        uint8_t *p = trace_wire_in_room(&in, &room);
        cr_assert_gt(room, 0);
        *p = b.p[i];
        trace_wire_in_added(&in, 1);
        struct trace_wire_frame f;
        const char *why;
        int rc;
        while ((rc = trace_wire_in_next(&in, &f, &why)) == 1) {
            cr_assert_eq(f.type, 0x10 + got);
            cr_assert_eq(f.len, (size_t)got + 1);
            got++;
        }
        cr_assert_eq(rc, 0);
    }
    cr_assert_eq(got, 3);
    cr_assert_eq(in.len - in.drop, 0);
    trace_wire_in_fini(&in);
    trace_wire_buf_fini(&b);
}

static int feed(const uint8_t *bytes, size_t n, size_t max, const char **why)
{
    struct trace_wire_in in;
    trace_wire_in_init(&in, max);
    size_t room;
    uint8_t *p = trace_wire_in_room(&in, &room);
    memcpy(p, bytes, n);
    trace_wire_in_added(&in, n);
    struct trace_wire_frame f;
    int rc = trace_wire_in_next(&in, &f, why);
    trace_wire_in_fini(&in);
    return rc;
}

Test(wire, a_zero_or_huge_declared_length_breaks_the_stream)
{
    static const uint8_t zero[] = {0, 0, 0, 0, 1};
    static const uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0xFF, 1};
    static const uint8_t over[] = {64, 0, 0, 0, 1}; /* 68 bytes with the length: > 64 */
    static const uint8_t cut[] = {10, 0, 0, 0, 1, 2};
    const char *why = NULL;
    cr_assert_eq(feed(zero, sizeof(zero), 64, &why), -1);
    cr_assert_str_eq(why, "a frame of length 0");
    cr_assert_eq(feed(huge, sizeof(huge), 64, &why), -1);
    cr_assert_str_eq(why, "a frame longer than the limit");
    cr_assert_eq(feed(over, sizeof(over), 64, &why), -1);
    cr_assert_eq(feed(cut, sizeof(cut), 64, &why), 0, "a truncated frame waits for more");
}
