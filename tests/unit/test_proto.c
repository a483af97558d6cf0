/*
 * The protocol's messages: each one written and read back field for field; a HELLO or a
 * WELCOME of another major version is refused with what to do, a wrong magic as not
 * npuscope; a request of a later version keeps its id and code (answered, not fatal);
 * limits (a pattern, a read, the breakpoints, a tensor list) hold; and fields a later
 * minor version appends are ignored.
 */
#include "trace/wire/proto.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The single frame in b: its type and body. */
static struct trace_wire_frame frame_of(const struct trace_wire_buf *b)
{
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    size_t room;
    uint8_t *p = trace_wire_in_room(&in, &room);
    cr_assert_leq(b->len, room);
    memcpy(p, b->p, b->len);
    trace_wire_in_added(&in, b->len);
    struct trace_wire_frame f;
    const char *why;
    cr_assert_eq(trace_wire_in_next(&in, &f, &why), 1);
    /* the body outlives the reader: copy it */
    static uint8_t body[1 << 20];
    memcpy(body, f.body, f.len);
    f.body = body;
    cr_assert_eq(trace_wire_in_next(&in, &(struct trace_wire_frame){0}, &why), 0);
    trace_wire_in_fini(&in);
    return f;
}

Test(proto, hello_and_welcome_round_trip)
{
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, 7, TRACE_ROLE_VIEWER}, h2;
    trace_proto_put_hello(&b, &h);
    struct trace_wire_frame f = frame_of(&b);
    cr_assert_eq(f.type, TRACE_MSG_HELLO);
    struct diag d;
    cr_assert_eq(trace_proto_get_hello(f.body, f.len, &h2, &d), 0, "%s", d.msg);
    cr_assert_eq(h2.minor, 7);
    cr_assert_eq(h2.role, TRACE_ROLE_VIEWER);

    b.len = 0;
    struct trace_proto_welcome w = {.major = TRACE_PROTO_MAJOR,
                                    .pid = 1234,
                                    .state = 1,
                                    .now = 99,
                                    .now_ns = 99.5,
                                    .events = 7,
                                    .viewers = 2},
                               w2;
    snprintf(w.run_id, sizeof(w.run_id), "npuscope-x-1234");
    snprintf(w.name, sizeof(w.name), "gemm");
    snprintf(w.trace, sizeof(w.trace), "/tmp/t.json");
    trace_proto_put_welcome(&b, &w);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_welcome(f.body, f.len, &w2, &d), 0, "%s", d.msg);
    cr_assert_str_eq(w2.run_id, "npuscope-x-1234");
    cr_assert_str_eq(w2.name, "gemm");
    cr_assert_str_eq(w2.trace, "/tmp/t.json");
    cr_assert(w2.pid == 1234 && w2.state == 1 && w2.now == 99 && w2.now_ns == 99.5 &&
              w2.events == 7 && w2.viewers == 2);
    trace_wire_buf_fini(&b);
}

Test(proto, a_version_from_the_future_or_a_stranger_is_refused)
{
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR + 1, 0, TRACE_ROLE_VIEWER}, h2;
    trace_proto_put_hello(&b, &h);
    struct trace_wire_frame f = frame_of(&b);
    struct diag d;
    cr_assert_lt(trace_proto_get_hello(f.body, f.len, &h2, &d), 0);
    cr_assert(strstr(d.msg, "protocol version 3.0 is not this run's (2.2)"), "%s", d.msg);
    /* a wrong magic */
    ((uint8_t *)f.body)[0] = 'X';
    h.major = TRACE_PROTO_MAJOR;
    cr_assert_lt(trace_proto_get_hello(f.body, f.len, &h2, &d), 0);
    cr_assert(strstr(d.msg, "not an npuscope peer"), "%s", d.msg);
    /* an unknown role */
    b.len = 0;
    h.role = 9;
    trace_proto_put_hello(&b, &h);
    f = frame_of(&b);
    cr_assert_lt(trace_proto_get_hello(f.body, f.len, &h2, &d), 0);
    /* a viewer meeting a run of another major version */
    b.len = 0;
    struct trace_proto_welcome w = {.major = TRACE_PROTO_MAJOR + 1}, w2;
    trace_proto_put_welcome(&b, &w);
    f = frame_of(&b);
    cr_assert_lt(trace_proto_get_welcome(f.body, f.len, &w2, &d), 0);
    cr_assert(strstr(d.msg, "the run speaks protocol version 3.0"), "%s", d.msg);
    trace_wire_buf_fini(&b);
}

Test(proto, requests_round_trip_and_unknown_codes_keep_their_id)
{
    struct trace_wire_buf b = {0};
    struct trace_proto_request q = {.id = 5, .code = TRACE_REQ_BREAK_ADD, .kind = 1}, q2;
    snprintf(q.text, sizeof(q.text), "dma_*");
    trace_proto_put_request(&b, &q);
    struct trace_wire_frame f = frame_of(&b);
    struct diag d;
    cr_assert_eq(trace_proto_get_request(f.body, f.len, &q2, &d), 0, "%s", d.msg);
    cr_assert(q2.id == 5 && q2.code == TRACE_REQ_BREAK_ADD && q2.kind == 1);
    cr_assert_str_eq(q2.text, "dma_*");

    b.len = 0;
    q = (struct trace_proto_request){.id = 6, .code = TRACE_REQ_MEM_READ, .arg = {1, 2, 3, 4}};
    trace_proto_put_request(&b, &q);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_request(f.body, f.len, &q2, &d), 0, "%s", d.msg);
    cr_assert(q2.arg[0] == 1 && q2.arg[1] == 2 && q2.arg[2] == 3 && q2.arg[3] == 4);
    /* too long a read */
    b.len = 0;
    q.arg[3] = TRACE_PROTO_MAX_READ + 1;
    trace_proto_put_request(&b, &q);
    f = frame_of(&b);
    cr_assert_lt(trace_proto_get_request(f.body, f.len, &q2, &d), 0);
    /* a request of a later version (say, a step backwards): read, to be answered */
    b.len = 0;
    q = (struct trace_proto_request){.id = 7, .code = 99};
    trace_proto_put_request(&b, &q);
    trace_wire_put_uv(&b, 12345); /* its argument: appended, ignored */
    trace_wire_frame_end(&b, 0);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_request(f.body, f.len, &q2, &d), 0, "%s", d.msg);
    cr_assert(q2.id == 7 && q2.code == 99);
    /* a pattern holding a NUL */
    b.len = 0;
    size_t st = trace_wire_frame_begin(&b, TRACE_MSG_REQUEST);
    trace_wire_put_uv(&b, 8);
    trace_wire_put_uv(&b, TRACE_REQ_BREAK_ADD);
    trace_wire_put_u8(&b, 0);
    trace_wire_put_bytes(&b, "a\0b", 3);
    trace_wire_frame_end(&b, st);
    f = frame_of(&b);
    cr_assert_lt(trace_proto_get_request(f.body, f.len, &q2, &d), 0);
    trace_wire_buf_fini(&b);
}

Test(proto, status_breaks_and_result_round_trip)
{
    struct trace_wire_buf b = {0};
    struct trace_proto_status s = {.state = TRACE_RUN_PAUSED,
                                   .now = 10,
                                   .events = 20,
                                   .events_per_sec = 1e6,
                                   .notice_rev = 3,
                                   .viewers = 2,
                                   .mem_gen = 9,
                                   .focus_rev = 1,
                                   .focus = 0,
                                   .breaks_rev = 4},
                              s2;
    snprintf(s.notice, sizeof(s.notice), "paused");
    snprintf(s.last_event, sizeof(s.last_event), "ev 20");
    snprintf(s.speed, sizeof(s.speed), "max");
    trace_proto_put_status(&b, &s);
    struct trace_wire_frame f = frame_of(&b);
    struct diag d;
    cr_assert_eq(trace_proto_get_status(f.body, f.len, &s2, &d), 0, "%s", d.msg);
    cr_assert(s2.state == TRACE_RUN_PAUSED && s2.now == 10 && s2.events == 20 && s2.viewers == 2 &&
              s2.mem_gen == 9 && s2.focus == 0 && s2.breaks_rev == 4);
    cr_assert_str_eq(s2.notice, "paused");
    cr_assert_str_eq(s2.last_event, "ev 20");
    cr_assert_str_eq(s2.fired, "");
    /* which breakpoint fired comes last; a STATUS without it still reads */
    snprintf(s.fired, sizeof(s.fired), "op.duration > 1: 3 cycles");
    b.len = 0;
    trace_proto_put_status(&b, &s);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_status(f.body, f.len, &s2, &d), 0, "%s", d.msg);
    cr_assert_str_eq(s2.fired, "op.duration > 1: 3 cycles");
    cr_assert_eq(trace_proto_get_status(f.body, f.len - 1 - strlen(s.fired), &s2, &d), 0, "%s",
                 d.msg);
    cr_assert_str_eq(s2.fired, "");
    s.fired[0] = '\0';
    s.focus = UINT64_MAX;
    s.events_per_sec = NAN; /* a hostile run: unknown */
    b.len = 0;
    trace_proto_put_status(&b, &s);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_status(f.body, f.len, &s2, &d), 0, "%s", d.msg);
    cr_assert_eq(s2.focus, UINT64_MAX);
    cr_assert_eq(s2.events_per_sec, 0);

    b.len = 0;
    const char *list[] = {"an op starts on sip0.*", "marker gemm.begin is raised, hit 2 times"};
    trace_proto_put_breaks(&b, 11, list, 2);
    f = frame_of(&b);
    uint64_t rev;
    char **text;
    size_t n;
    cr_assert_eq(trace_proto_get_breaks(f.body, f.len, &rev, &text, &n, &d), 0, "%s", d.msg);
    cr_assert(rev == 11 && n == 2);
    cr_assert_str_eq(text[0], list[0]);
    cr_assert_str_eq(text[1], list[1]);
    free(text);
    /* more breakpoints than a run keeps */
    b.len = 0;
    size_t st = trace_wire_frame_begin(&b, TRACE_MSG_BREAKS);
    trace_wire_put_uv(&b, 1);
    trace_wire_put_uv(&b, 100000);
    trace_wire_frame_end(&b, st);
    f = frame_of(&b);
    cr_assert_lt(trace_proto_get_breaks(f.body, f.len, &rev, &text, &n, &d), 0);

    b.len = 0;
    trace_proto_put_result(&b, 42, -SIM_ESTATE, "the simulation has finished");
    f = frame_of(&b);
    struct trace_proto_result r;
    cr_assert_eq(trace_proto_get_result(f.body, f.len, &r, &d), 0, "%s", d.msg);
    cr_assert(r.id == 42 && r.rc == -SIM_ESTATE);
    cr_assert_str_eq(r.msg, "the simulation has finished");
    trace_wire_buf_fini(&b);
}

Test(proto, details_and_memory_round_trip)
{
    struct trace_wire_buf b = {0};
    struct sim_value *v = sim_value_map();
    sim_value_map_set_int(v, "nbytes", 4096);
    trace_proto_put_details(&b, 3, 17, 9, v);
    struct trace_wire_frame f = frame_of(&b);
    uint64_t id, ev, xf;
    struct sim_value *w;
    struct diag d;
    cr_assert_eq(trace_proto_get_details(f.body, f.len, &id, &ev, &xf, &w, &d), 0, "%s", d.msg);
    cr_assert(id == 3 && ev == 17 && xf == 9);
    cr_assert(sim_value_equal(v, w));
    sim_value_free(v);
    sim_value_free(w);

    b.len = 0;
    struct trace_proto_memlist l = {.id = 4, .gen = 5, .nspaces = 2, .space = 1, .n = 2};
    snprintf(l.spaces[0].name, sizeof(l.spaces[0].name), "hbm");
    l.spaces[0].len = 10;
    snprintf(l.spaces[1].name, sizeof(l.spaces[1].name), "tcm");
    l.spaces[1].len = 2;
    struct trace_proto_mem_entry e[2] = {
        {.addr = 0x1000,
         .dtype = SIM_F32,
         .ndim = 2,
         .shape = {4, 8},
         .nbytes = 128,
         .writer = "dma_read",
         .t_ns = 12.5,
         .pattern = "fill 0x3c00"},
        {.addr = 0x2000, .dtype = SIM_I8, .ndim = 0, .nbytes = 1, .t_ns = NAN},
    };
    l.entries = e;
    trace_proto_put_memlist(&b, &l, 1 << 20);
    f = frame_of(&b);
    struct trace_proto_memlist l2;
    cr_assert_eq(trace_proto_get_memlist(f.body, f.len, &l2, &d), 0, "%s", d.msg);
    cr_assert(l2.id == 4 && l2.gen == 5 && l2.nspaces == 2 && l2.space == 1 && l2.n == 2);
    cr_assert_not(l2.truncated);
    cr_assert_str_eq(l2.spaces[1].name, "tcm");
    cr_assert(l2.entries[0].addr == 0x1000 && l2.entries[0].shape[1] == 8 &&
              l2.entries[0].nbytes == 128 && l2.entries[0].t_ns == 12.5);
    cr_assert_str_eq(l2.entries[0].writer, "dma_read");
    cr_assert_str_eq(l2.entries[0].pattern, "fill 0x3c00");
    cr_assert_str_eq(l2.entries[1].pattern, "");
    cr_assert(isnan(l2.entries[1].t_ns));
    trace_proto_memlist_fini(&l2);
    /* a budget of one entry: the list says it was cut */
    b.len = 0;
    trace_proto_put_memlist(&b, &l, 1);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_memlist(f.body, f.len, &l2, &d), 0, "%s", d.msg);
    cr_assert(l2.truncated && l2.n == 1);
    trace_proto_memlist_fini(&l2);

    b.len = 0;
    static const uint8_t bytes[] = {1, 2, 3, 4};
    struct trace_proto_memread
        m = {.id = 6, .space = 0, .addr = 0x1000, .off = 64, .gen = 5, .data = bytes, .len = 4},
        m2;
    trace_proto_put_memread(&b, &m);
    f = frame_of(&b);
    cr_assert_eq(trace_proto_get_memread(f.body, f.len, &m2, &d), 0, "%s", d.msg);
    cr_assert(m2.id == 6 && m2.addr == 0x1000 && m2.off == 64 && m2.len == 4 && !m2.gone);
    cr_assert(memcmp(m2.data, bytes, 4) == 0);
    trace_wire_buf_fini(&b);
}

Test(proto, hostile_memory_lists_are_refused)
{
    struct trace_wire_buf b = {0};
    size_t st = trace_wire_frame_begin(&b, TRACE_MSG_MEMLIST);
    trace_wire_put_uv(&b, 1);          /* id */
    trace_wire_put_uv(&b, 1);          /* gen */
    trace_wire_put_uv(&b, 0);          /* spaces */
    trace_wire_put_uv(&b, 0);          /* space */
    trace_wire_put_u8(&b, 0);          /* truncated */
    trace_wire_put_uv(&b, 1000000000); /* entries: far more than the bytes */
    trace_wire_frame_end(&b, st);
    struct trace_wire_frame f = frame_of(&b);
    struct trace_proto_memlist l;
    struct diag d;
    cr_assert_lt(trace_proto_get_memlist(f.body, f.len, &l, &d), 0);
    cr_assert_null(l.entries);
    /* an entry of an unknown dtype */
    b.len = 0;
    st = trace_wire_frame_begin(&b, TRACE_MSG_MEMLIST);
    trace_wire_put_uv(&b, 1);
    trace_wire_put_uv(&b, 1);
    trace_wire_put_uv(&b, 0);
    trace_wire_put_uv(&b, 0);
    trace_wire_put_u8(&b, 0);
    trace_wire_put_uv(&b, 1);
    trace_wire_put_uv(&b, 0);   /* addr */
    trace_wire_put_u8(&b, 200); /* dtype */
    trace_wire_put_raw(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 15);
    trace_wire_frame_end(&b, st);
    f = frame_of(&b);
    cr_assert_lt(trace_proto_get_memlist(f.body, f.len, &l, &d), 0);
    trace_wire_buf_fini(&b);
}
