/*
 * The critical path of a growing set (trace/verdict/critinc.h): grown event by event and in
 * random chunks, over ops that read and write memory (RAW through the interval maps), share
 * tiles, name explicit dependencies, stay in flight, last no cycle or one, and now and then
 * come late, its path at every step equals trace_critpath_compute's over the whole set, for
 * the run and for each of several launches; and it starts over only when it must.
 */
#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/verdict/critinc.h"
#include "trace/verdict/critpath.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(critinc);

enum { TRACKS = 8, OPEN = 48, LAUNCHES = 3 };

struct grow {
    struct trace_model *m;
    uint32_t track[TRACKS];
    uint64_t open[OPEN];
    size_t nopen;
    uint64_t now, rng, steps;
    int late;      /* 1 in late steps an op comes with a start before now (0: never) */
    int composite; /* composite ops and, from step composite on, their stages */
};

static uint64_t rnd(struct grow *g, uint64_t n)
{
    g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (g->rng >> 33) % n;
}

static void grow_init(struct grow *g, uint64_t seed, int late, int composite)
{
    memset(g, 0, sizeof(*g));
    g->rng = seed;
    g->late = late;
    g->composite = composite;
    g->m = trace_model_new();
    static const struct {
        const char *name;
        enum trace_engine e;
    } t[TRACKS] = {
        {"sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA}, {"sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE},
        {"sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE}, {"sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA},
        {"sip0.cube0.pe1.pe_gemm", TRACE_ENGINE_TE}, {"sip0.cube0.pe1.pe_math", TRACE_ENGINE_VE},
        {"host.io_cpu", TRACE_ENGINE_HOST},          {"sip0.other", TRACE_ENGINE_OTHER}};
    for (int i = 0; i < TRACKS; i++)
        g->track[i] = trace_model_track(g->m, t[i].name, t[i].e, 0);
    g->now = 10;
    trace_model_set_now(g->m, g->now);
    trace_model_finish(g->m);
}

static int64_t addr(struct grow *g)
{
    return (int64_t)rnd(g, 24) * 64;
}

/* Details that read and write tcm (and hbm): a DMA read, a GEMM or a math op. */
static void details(struct grow *g, uint64_t ev, int kind)
{
    struct sim_value *d = sim_value_map();
    if (kind == 0) { /* dma_read hbm -> tcm */
        sim_value_map_set_int(d, "src_addr", addr(g));
        sim_value_map_set_int(d, "nbytes", 64 + (int64_t)rnd(g, 3) * 64);
        sim_value_map_set_str(d, "handle_id", "h");
        struct sim_value *r = sim_value_map_set_take(d, "replay", sim_value_map());
        sim_value_map_set_str(r, "src_space", "hbm");
        sim_value_map_set_str(r, "dst_space", "tcm");
        sim_value_map_set_int(r, "dst_addr", addr(g));
    } else if (kind == 1) { /* a 4x4 @ 4x4 f32 GEMM: 64 bytes an operand */
        int64_t sq[2] = {4, 4};
        sim_value_map_set_int(d, "src_a_addr", addr(g));
        sim_value_map_set_int(d, "src_b_addr", addr(g));
        sim_value_map_set_int(d, "dst_addr", addr(g));
        sim_value_map_set_take(d, "shape_a", sim_value_int_list(sq, 2));
        sim_value_map_set_take(d, "shape_b", sim_value_int_list(sq, 2));
        sim_value_map_set_take(d, "shape_out", sim_value_int_list(sq, 2));
        sim_value_map_set_str(d, "dtype_in", "f32");
        sim_value_map_set_str(d, "dtype_out", "f32");
        sim_value_map_set_int(d, "m", 4);
        sim_value_map_set_int(d, "k", 4);
        sim_value_map_set_int(d, "n", 4);
        sim_value_map_set_str(d, "src_a_space", "tcm");
        sim_value_map_set_str(d, "src_b_space", "tcm");
        sim_value_map_set_str(d, "dst_space", "tcm");
    } else { /* math over 16 f32 */
        int64_t in = addr(g), out = addr(g), shape[1] = {16};
        sim_value_map_set_take(d, "input_addrs", sim_value_int_list(&in, 1));
        struct sim_value *shapes = sim_value_map_set_take(d, "input_shapes", sim_value_list());
        sim_value_list_push_take(shapes, sim_value_int_list(shape, 1));
        struct sim_value *sp = sim_value_map_set_take(d, "input_spaces", sim_value_list());
        sim_value_list_push_take(sp, sim_value_str("tcm"));
        struct sim_value *dt = sim_value_map_set_take(d, "input_dtypes", sim_value_list());
        sim_value_list_push_take(dt, sim_value_str("f32"));
        sim_value_map_set_int(d, "dst_addr", out);
        sim_value_map_set_str(d, "dst_space", "tcm");
        sim_value_map_set_take(d, "shape_out", sim_value_int_list(shape, 1));
        sim_value_map_set_str(d, "dtype", "f32");
        sim_value_map_set_take(d, "axis", sim_value_null());
    }
    trace_model_set_details_take(g->m, ev, d);
}

/* Start an op on track k at start (now, or before when it comes late). */
static void start_op(struct grow *g, int k, uint64_t start)
{
    static const char *const names[3] = {"dma_read", "gemm_f32", "exp"};
    static const enum trace_op_kind kinds[3] = {TRACE_KIND_MEMORY, TRACE_KIND_GEMM,
                                                TRACE_KIND_MATH};
    int kind = k < 6 ? k % 3 : -1;
    const char *op = kind >= 0 ? names[kind] : k == 6 ? "KernelLaunch" : "barrier";
    if (g->composite && kind == 1 && rnd(g, 5) == 0)
        op = "composite_gemm";
    if (g->composite && g->steps >= (uint64_t)g->composite && kind >= 0 && rnd(g, 4) == 0)
        op = "TileToken/stage";
    char tile[8];
    snprintf(tile, sizeof(tile), "t%d", (int)rnd(g, 4));
    struct trace_event ev = {.start = start,
                             .end = start,
                             .track = g->track[k],
                             .op = trace_model_intern(g->m, op, strlen(op)),
                             .tile = rnd(g, 3) == 0 ? trace_model_intern(g->m, tile, strlen(tile))
                                                    : TRACE_NO_STR,
                             .cmdq_id = (int32_t)rnd(g, LAUNCHES),
                             .op_kind = (uint8_t)(kind >= 0 ? kinds[kind] : TRACE_KIND_UNKNOWN),
                             .flags = TRACE_EV_INFLIGHT};
    uint64_t i = trace_model_add_event(g->m, &ev);
    if (kind >= 0 && rnd(g, 6))
        details(g, i, kind);
    if (i > 3 && rnd(g, 7) == 0)
        trace_model_add_dep(g->m, i, i - 1 - rnd(g, i < 40 ? i - 1 : 40));
    if (g->nopen < OPEN)
        g->open[g->nopen++] = i;
    else
        trace_model_end_event(g->m, i, g->now);
}

/* One step: end some ops in flight (in any order), start some, now moves on (by one cycle
 * now and then: ops of one cycle, ends a cycle early meeting starts). */
static void grow_step(struct grow *g)
{
    g->steps++;
    for (size_t k = 0; k < g->nopen;) {
        if (rnd(g, 3) && !(k == 0 && g->steps % 40 < 25)) {
            k++;
            continue;
        }
        trace_model_end_event(g->m, g->open[k], g->now);
        g->open[k] = g->open[--g->nopen];
    }
    int starts = (int)rnd(g, 4);
    for (int s = 0; s < starts; s++)
        start_op(g, (int)rnd(g, TRACKS), g->now);
    if (rnd(g, 6) == 0) { /* of no length */
        start_op(g, (int)rnd(g, TRACKS), g->now);
        trace_model_end_event(g->m, g->open[--g->nopen], g->now);
    }
    if (g->late && rnd(g, (uint64_t)g->late) == 0 && g->now > 200)
        start_op(g, 6, g->now - 1 - rnd(g, 150));
    g->now += rnd(g, 3) == 0 ? 1 : 1 + rnd(g, 12);
    trace_model_set_now(g->m, g->now);
    trace_model_finish(g->m);
}

/* The events of launch l (-1: all). */
static size_t events_of(const struct trace_model *m, int l, uint64_t *out)
{
    size_t n = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        if (l < 0 || trace_model_event(m, i)->cmdq_id == l)
            out[n++] = i;
    return n;
}

#define PEQ(x) cr_assert_eq(a->x, b->x, "%s: step %" PRIu64, #x, step)

static void same_path(const struct trace_critpath *a, const struct trace_critpath *b, uint64_t step)
{
    if (getenv("CRITINC_DEBUG") && a->n != b->n)
        for (size_t s = 0; s < (a->n > b->n ? a->n : b->n); s++)
            fprintf(stderr, "%zu: %ld %ld %d | %ld %ld %d\n", s,
                    s < a->n ? (long)a->steps[s].ev : -1, s < a->n ? (long)a->steps[s].wait : -1,
                    s < a->n ? (int)a->steps[s].why : -1, s < b->n ? (long)b->steps[s].ev : -1,
                    s < b->n ? (long)b->steps[s].wait : -1, s < b->n ? (int)b->steps[s].why : -1);
    PEQ(n);
    PEQ(start);
    PEQ(end);
    PEQ(ops);
    PEQ(decoded);
    PEQ(with_addresses);
    PEQ(with_tiles);
    PEQ(with_explicit);
    PEQ(truncated);
    PEQ(spaces.n);
    for (unsigned s = 0; s < a->spaces.n; s++)
        cr_assert_str_eq(a->spaces.names[s], b->spaces.names[s]);
    for (size_t s = 0; s < a->n; s++) {
        const struct trace_path_step *x = &a->steps[s], *y = &b->steps[s];
        cr_assert_eq(x->ev, y->ev, "step %" PRIu64 " path step %zu", step, s);
        cr_assert_eq(x->pred, y->pred, "step %" PRIu64 " path step %zu", step, s);
        cr_assert_eq(x->wait, y->wait, "step %" PRIu64 " path step %zu", step, s);
        cr_assert_eq(x->why, y->why, "step %" PRIu64 " path step %zu", step, s);
        if (x->why == TRACE_DEP_RAW) {
            cr_assert_eq(x->range.space, y->range.space, "step %" PRIu64, step);
            cr_assert_eq(x->range.lo, y->range.lo, "step %" PRIu64 " path step %zu", step, s);
            cr_assert_eq(x->range.hi, y->range.hi, "step %" PRIu64 " path step %zu", step, s);
        }
    }
}

/* The ops handed to each_info, counted by index. */
struct handed {
    size_t *count;
    size_t n;
};

static void count_info(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    (void)oi;
    struct handed *h = ctx;
    cr_assert_lt(i, h->n);
    h->count[i]++;
}

/*
 * Grow a model for steps steps, updating each set's state every chunk steps (0: random
 * chunks of 1 to 20), the states taking a call's new events in parts of part (0: their
 * default), and checking it against the path from scratch. Returns the restarts of the
 * states (all: the run's).
 */
static size_t grow_and_check_parts(uint64_t seed, int steps, int chunk, int late, int composite,
                                   size_t max_decode, size_t part)
{
    struct grow g;
    grow_init(&g, seed, late, composite);
    struct trace_critinc *st[LAUNCHES + 1];
    for (int l = 0; l <= LAUNCHES; l++) {
        st[l] = trace_critinc_new();
        trace_critinc_set_part(st[l], part);
    }
    size_t cap = 8 * (size_t)steps + 64;
    uint64_t *evs = malloc(cap * sizeof(*evs));
    size_t *count = calloc(cap, sizeof(*count));
    size_t checks = 0;
    for (int i = 0; i < steps;) {
        int c = chunk ? chunk : 1 + (int)rnd(&g, 20);
        for (int k = 0; k < c && i < steps; k++, i++)
            grow_step(&g);
        for (int l = -1; l < LAUNCHES; l++) {
            size_t n = events_of(g.m, l, evs);
            cr_assert_lt(n, cap);
            struct handed h = {count, n};
            struct trace_critpath_input in = {.m = g.m,
                                              .events = evs,
                                              .n = n,
                                              .start = 3,
                                              .max_decode = max_decode,
                                              .threads = 1};
            struct trace_critpath want, got;
            trace_critpath_compute(&in, &want);
            if (l < 0) { /* each op's info handed once, unless it started over */
                in.each_info = count_info, in.each_ctx = &h;
            }
            size_t before = trace_critinc_restarts(st[l + 1]);
            trace_critinc_update(st[l + 1], &in, &got);
            same_path(&got, &want, g.steps);
            if (l < 0 && trace_critinc_restarts(st[0]) == before && want.decoded)
                for (size_t j = 0; j < n; j++)
                    cr_assert_leq(count[j], 1, "op %zu handed twice", j);
            if (l < 0 && trace_critinc_restarts(st[0]) != before)
                memset(count, 0, cap * sizeof(*count));
            trace_critpath_fini(&want);
            trace_critpath_fini(&got);
            checks++;
        }
    }
    cr_assert_gt(checks, 0);
    size_t restarts = 0;
    for (int l = 0; l <= LAUNCHES; l++) {
        restarts += trace_critinc_restarts(st[l]);
        trace_critinc_free(st[l]);
    }
    free(evs);
    free(count);
    trace_model_free(g.m);
    return restarts;
}

static size_t grow_and_check(uint64_t seed, int steps, int chunk, int late, int composite,
                             size_t max_decode)
{
    return grow_and_check_parts(seed, steps, chunk, late, composite, max_decode, 0);
}

Test(critinc, grown_event_by_event_equals_the_path_from_scratch)
{
    size_t r = grow_and_check(1, 400, 1, 0, 0, 0);
    cr_assert_eq(r, LAUNCHES + 1, "started once each, never over: %zu", r);
}

Test(critinc, grown_in_random_chunks_equals_the_path_from_scratch)
{
    for (uint64_t seed = 2; seed < 6; seed++) {
        size_t r = grow_and_check(seed, 500, 0, 0, 0, 0);
        cr_assert_eq(r, LAUNCHES + 1, "seed %" PRIu64 ": %zu starts", seed, r);
    }
}

Test(critinc, thousands_of_ops_at_a_time_equal_the_path_from_scratch)
{
    /* (ends out of order by the thousand: sorted by radix, not by comparison) */
    size_t r = grow_and_check(12, 12000, 5000, 0, 0, 0);
    cr_assert_eq(r, LAUNCHES + 1, "%zu starts", r);
}

Test(critinc, new_ops_taken_in_parts_equal_the_path_from_scratch)
{
    /* parts of one event, a prime, a few more: each part's frontier held before the ops of
     * the parts after it, so that no part starts the state over */
    static const size_t parts[] = {1, 2, 7, 61};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        size_t r = grow_and_check_parts(13 + i, 300, 0, 0, 0, 0, parts[i]);
        cr_assert_eq(r, LAUNCHES + 1, "parts of %zu: %zu starts", parts[i], r);
        r = grow_and_check_parts(17 + i, 3000, 1000, 0, 0, 0, parts[i] * 97);
        cr_assert_eq(r, LAUNCHES + 1, "parts of %zu: %zu starts", parts[i] * 97, r);
    }
    /* one part whatever the number of events (as before parts) */
    size_t r = grow_and_check_parts(19, 300, 0, 0, 0, 0, SIZE_MAX);
    cr_assert_eq(r, LAUNCHES + 1, "one part: %zu starts", r);
    /* late ops, composite ops, the decode budget: the same paths as in one part */
    grow_and_check_parts(7, 300, 0, 9, 0, 0, 3);
    grow_and_check_parts(8, 300, 0, 0, 150, 0, 5);
    grow_and_check_parts(10, 300, 0, 0, 0, 200, 11);
}

Test(critinc, ops_that_come_late_start_it_over_and_it_stays_equal)
{
    size_t r = grow_and_check(7, 500, 0, 9, 0, 0);
    cr_assert_gt(r, LAUNCHES + 1, "a late op starts it over");
}

Test(critinc, composite_ops_left_out_once_stages_come)
{
    grow_and_check(8, 400, 0, 0, 150, 0);
    grow_and_check(9, 400, 1, 0, 1, 0);
}

Test(critinc, the_decode_budget_crossed_gives_the_path_without_ranges)
{
    size_t r = grow_and_check(10, 400, 0, 0, 0, 200);
    cr_assert_gt(r, LAUNCHES + 1);
}

Test(critinc, another_set_starts_over)
{
    struct grow g;
    grow_init(&g, 11, 0, 0);
    for (int i = 0; i < 100; i++)
        grow_step(&g);
    uint64_t *evs = malloc(2000 * sizeof(*evs));
    size_t n = events_of(g.m, 1, evs);
    struct trace_critinc *st = trace_critinc_new();
    struct trace_critpath_input in = {.m = g.m, .events = evs, .n = n, .start = 0, .threads = 1};
    struct trace_critpath want, got;
    trace_critinc_update(st, &in, &got);
    trace_critpath_fini(&got);
    n = events_of(g.m, 2, evs); /* another launch: not the last set grown */
    in.n = n;
    trace_critinc_update(st, &in, &got);
    trace_critpath_compute(&in, &want);
    same_path(&got, &want, 0);
    cr_assert_eq(trace_critinc_restarts(st), 2);
    trace_critpath_fini(&want);
    trace_critpath_fini(&got);
    trace_critinc_free(st);
    free(evs);
    trace_model_free(g.m);
}

/* A live run's last op is often one in flight a cycle after it started: an op of one cycle
 * then, whose end must not come before its own start. Its path goes back through the ops
 * before it (not the op alone), and the next call joins that path rather than walking the
 * whole of it again. */
Test(critinc, an_op_in_flight_a_cycle_after_its_start_keeps_the_path_before_it)
{
    struct trace_model *m = trace_model_new();
    uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    struct trace_critinc *st = trace_critinc_new();
    uint64_t evs[64];
    size_t n = 0;
    uint64_t t = 0;
    for (int call = 0; call < 20; call++) {
        if (n) /* the op in flight ends after ten cycles */
            trace_model_end_event(m, evs[n - 1], t += 10);
        struct trace_event e = {.start = t,
                                .end = t,
                                .track = ve,
                                .op = trace_model_intern(m, "mul", 3),
                                .op_kind = TRACE_KIND_MATH,
                                .flags = TRACE_EV_INFLIGHT};
        evs[n++] = trace_model_add_event(m, &e);
        trace_model_set_now(m, t + 1);
        trace_model_finish(m);
        struct trace_critpath_input in = {.m = m, .events = evs, .n = n, .threads = 1};
        struct trace_critpath got, want;
        trace_critinc_update(st, &in, &got);
        trace_critpath_compute(&in, &want);
        same_path(&got, &want, (uint64_t)call);
        cr_assert_eq(got.n, n, "call %d: every op on the path, not %zu", call, got.n);
        for (size_t i = 1; i < got.n; i++)
            cr_assert_eq(got.steps[i].pred, evs[i - 1], "call %d, step %zu", call, i);
        trace_critpath_fini(&got);
        trace_critpath_fini(&want);
    }
    cr_assert_eq(trace_critinc_restarts(st), 1, "taken on from the first call");
    trace_critinc_free(st);
    trace_model_free(m);
}
