/*
 * The launch split with the run's usage in one pass (trace_regions_new_launch_run,
 * trace/analysis/regions.h), what the verdict reads: on models whose ops come in end order (as
 * npuscope writes a trace), each launch as the light launch split accounts it (name, span,
 * usage in all and per engine kind), the run as the light run split accounts it, and each
 * launch's events those the split assigns it; on a model in another order, no answer. Each
 * in one pass and in two halves joined (a big model's way): the same, bit for bit.
 */
#include "sim/data/value.h"
#include "trace/analysis/regions.h"
#include "trace/model/model.h"
#include "trace/model/progress.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(launchrun);

enum { TRACKS = 6 };

/* An op before it is added to the model. */
struct gop {
    uint64_t s, e;
    int t;
    int32_t cmdq;
    size_t i; /* the order it was made in (ties) */
};

static uint64_t rnd(uint64_t *r, uint64_t n)
{
    *r = *r * 6364136223846793005ull + 1442695040888963407ull;
    return (*r >> 33) % n;
}

static int cmp_end(const void *a, const void *b)
{
    const struct gop *x = a, *y = b;
    if (x->e != y->e)
        return x->e < y->e ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_start(const void *a, const void *b)
{
    const struct gop *x = a, *y = b;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * n ops over engines of every kind, in end order (by start when by_start): launches in runs,
 * now and then one that comes back later, ops of no launch, zero-length ops, ops overlapping
 * many others, DMA ops with DRAM transfers, markers and KernelLaunch ops that name kernels;
 * the last inflight ops in flight, now past every end.
 */
static struct trace_model *make(uint64_t seed, int n, bool by_start, int inflight)
{
    static const struct {
        const char *name, *op;
        enum trace_engine e;
    } tr[TRACKS] = {{"sip0.cube0.pe0.pe_gemm", "gemm_f16", TRACE_ENGINE_TE},
                    {"sip0.cube0.pe1.pe_gemm", "gemm_f16", TRACE_ENGINE_TE},
                    {"sip0.cube0.pe0.pe_dma", "dma_read", TRACE_ENGINE_DMA},
                    {"sip0.cube0.pe0.pe_math", "exp", TRACE_ENGINE_VE},
                    {"host", "KernelLaunch", TRACE_ENGINE_HOST},
                    {"sip0.other", "barrier", TRACE_ENGINE_OTHER}};
    uint64_t r = seed;
    struct trace_model *m = trace_model_new();
    uint32_t track[TRACKS];
    for (int k = 0; k < TRACKS; k++)
        track[k] = trace_model_track(m, tr[k].name, tr[k].e, 0);
    struct gop *v = calloc((size_t)n, sizeof(*v));
    int32_t cmdq = 3, top = 3;
    uint64_t base = 0;
    for (int i = 0; i < n; i++) {
        base += rnd(&r, 40);
        if (rnd(&r, 60) == 0)
            cmdq = ++top; /* the next launch */
        int32_t c = cmdq;
        if (rnd(&r, 300) == 0)
            cmdq = 3 + (int32_t)rnd(&r, (uint64_t)(top - 2)); /* one comes back */
        if (rnd(&r, 15) == 0)
            c = TRACE_NO_CMDQ;
        uint64_t d = rnd(&r, 8) == 0 ? 0 : rnd(&r, 50) == 0 ? 5000 : 1 + rnd(&r, 200);
        v[i] = (struct gop){base, base + d, (int)rnd(&r, TRACKS), c, (size_t)i};
    }
    qsort(v, (size_t)n, sizeof(*v), by_start ? cmp_start : cmp_end);
    uint64_t now = v[n - 1].e + 100;
    for (int i = 0; i < n; i++) {
        const char *op = tr[v[i].t].op;
        bool fly = i >= n - inflight;
        struct trace_event ev = {.start = v[i].s,
                                 .end = fly ? v[i].s : v[i].e,
                                 .track = track[v[i].t],
                                 .op = trace_model_intern(m, op, strlen(op)),
                                 .layer = TRACE_NO_STR,
                                 .cmdq_id = v[i].cmdq,
                                 .flags = fly ? TRACE_EV_INFLIGHT : 0};
        uint64_t e = trace_model_add_event(m, &ev);
        if (v[i].t == 2)
            for (uint64_t k = 0; k < 1 + rnd(&r, 2); k++) {
                struct trace_transfer x = {.bytes = 1 + rnd(&r, 4096),
                                           .event = (uint32_t)e,
                                           .flags = rnd(&r, 3) ? 0 : TRACE_XFER_WRITE};
                trace_model_add_transfer(m, &x);
            }
        if (v[i].t == 4 && v[i].cmdq != TRACE_NO_CMDQ && rnd(&r, 2)) {
            struct sim_value *d = sim_value_map();
            char kernel[32];
            snprintf(kernel, sizeof(kernel), "kern_%d", (int)(v[i].cmdq % 4));
            sim_value_map_set_str(d, "kernel", kernel);
            trace_model_set_details_take(m, e, d);
        }
    }
    for (int32_t c = 3; c <= top; c += 3) { /* a launch's markers name it and widen it */
        struct sim_value *d = sim_value_map();
        sim_value_map_set_str(d, "kernel", "marked");
        sim_value_map_set_int(d, "cmdq_id", c);
        const char *name = "begin";
        struct trace_marker k = {(uint64_t)c * 50, trace_model_intern(m, name, strlen(name)),
                                 UINT32_MAX, d};
        trace_model_add_marker(m, &k);
    }
    free(v);
    if (inflight)
        trace_model_set_now(m, now);
    trace_model_finish(m);
    return m;
}

static void usage_eq(const struct trace_usage *a, const struct trace_usage *b, bool bytes,
                     const char *what, size_t r, int k)
{
    cr_assert_eq(a->busy, b->busy, "%s %zu kind %d: busy %" PRIu64 " != %" PRIu64, what, r, k,
                 a->busy, b->busy);
    cr_assert_eq(a->ops, b->ops, "%s %zu kind %d: ops", what, r, k);
    cr_assert_eq(a->op_cycles, b->op_cycles, "%s %zu kind %d: op cycles", what, r, k);
    if (bytes) {
        cr_assert_eq(a->read_bytes, b->read_bytes, "%s %zu kind %d: read", what, r, k);
        cr_assert_eq(a->write_bytes, b->write_bytes, "%s %zu kind %d: write", what, r, k);
    }
}

/* rs (the one pass's) and light (the light launch split) say the same of every launch, and
 * the events of each are those light assigns it. */
static void launches_eq(const struct trace_model *m, const struct trace_regions *rs,
                        const struct trace_regions *light)
{
    cr_assert_eq(trace_regions_count(rs), trace_regions_count(light));
    uint64_t nev = trace_model_event_count(m);
    uint64_t *evs = calloc(nev ? nev : 1, sizeof(*evs));
    for (size_t i = 0; i < trace_regions_count(rs); i++) {
        const struct trace_region *a = trace_regions_get(rs, i), *b = trace_regions_get(light, i);
        cr_assert_str_eq(a->name, b->name, "launch %zu", i);
        cr_assert_eq(a->cmdq_id, b->cmdq_id, "launch %zu", i);
        cr_assert_eq(a->occurrence, b->occurrence, "launch %zu", i);
        cr_assert_eq(a->kind, TRACE_REGION_LAUNCH);
        cr_assert_eq(a->start, b->start, "launch %zu", i);
        cr_assert_eq(a->end, b->end, "launch %zu", i);
        usage_eq(&a->all, &b->all, true, "launch", i, -1);
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            usage_eq(&a->engine[k], &b->engine[k], true, "launch", i, k);
        size_t n = trace_regions_events(rs, i, evs);
        cr_assert_eq(n, a->all.ops, "launch %zu", i);
        cr_assert_eq(trace_regions_events(rs, i, NULL), n);
        size_t k = 0;
        for (uint64_t e = 0; e < nev; e++)
            if (trace_regions_of_event(light, e) == i) {
                cr_assert_lt(k, n, "launch %zu", i);
                cr_assert_eq(evs[k], e, "launch %zu: event %zu", i, k);
                k++;
            }
        cr_assert_eq(k, n, "launch %zu", i);
        /* one run when its events follow one another, from the first */
        bool run = true;
        for (size_t j = 1; j < n; j++)
            run &= evs[j] == evs[j - 1] + 1;
        uint64_t first = UINT64_MAX;
        cr_assert_eq(trace_regions_one_run(rs, i, &first), run, "launch %zu", i);
        cr_assert_eq(trace_regions_one_run(rs, i, NULL), run, "launch %zu", i);
        if (run && n)
            cr_assert_eq(first, evs[0], "launch %zu", i);
        cr_assert_not(trace_regions_one_run(light, i, &first), "the light split's: not known");
        for (uint64_t e = 0; e < nev; e++)
            cr_assert_eq(trace_regions_of_event(rs, e), trace_regions_of_event(light, e));
    }
    free(evs);
}

/* The split in one pass and in two halves (threads 1 and 2): every launch, its runs and the
 * run the same; NULL both or neither. */
static void halves_eq(const struct trace_model *m, const char *what)
{
    struct trace_region r1, r2;
    struct trace_regions *one = trace_regions_new_launch_run(m, &r1, NULL, 1);
    struct trace_regions *two = trace_regions_new_launch_run(m, &r2, NULL, 2);
    cr_assert_eq(one == NULL, two == NULL, "%s: an answer from one of the two", what);
    if (!one)
        return;
    usage_eq(&r1.all, &r2.all, true, what, 0, -1);
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        usage_eq(&r1.engine[k], &r2.engine[k], true, what, 0, k);
    cr_assert_eq(trace_regions_count(one), trace_regions_count(two), "%s", what);
    uint64_t nev = trace_model_event_count(m);
    uint64_t *e1 = calloc(nev ? nev : 1, sizeof(*e1)), *e2 = calloc(nev ? nev : 1, sizeof(*e2));
    for (size_t i = 0; i < trace_regions_count(one); i++) {
        const struct trace_region *a = trace_regions_get(one, i), *b = trace_regions_get(two, i);
        cr_assert_str_eq(a->name, b->name, "%s: launch %zu", what, i);
        cr_assert(a->cmdq_id == b->cmdq_id && a->start == b->start && a->end == b->end,
                  "%s: launch %zu", what, i);
        usage_eq(&a->all, &b->all, true, what, i, -1);
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            usage_eq(&a->engine[k], &b->engine[k], true, what, i, k);
        size_t n = trace_regions_events(one, i, e1);
        cr_assert_eq(trace_regions_events(two, i, e2), n, "%s: launch %zu", what, i);
        cr_assert(memcmp(e1, e2, n * sizeof(*e1)) == 0, "%s: launch %zu's events", what, i);
    }
    free(e1), free(e2);
    trace_regions_free(one);
    trace_regions_free(two);
}

Test(launchrun, in_end_order_the_launches_and_the_run_as_the_light_splits_account_them)
{
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct trace_model *m = make(seed, 3000, false, seed % 2 ? 0 : 7);
        struct trace_region run;
        struct trace_regions *rs = trace_regions_new_launch_run(m, &run, NULL, seed % 3);
        cr_assert_not_null(rs, "seed %" PRIu64, seed);
        struct trace_regions *light = trace_regions_new_light(m, TRACE_REGION_LAUNCH, NULL);
        cr_assert_gt(trace_regions_count(light), 20);
        launches_eq(m, rs, light);
        struct trace_regions *lrun = trace_regions_new_light(m, TRACE_REGION_RUN, NULL);
        const struct trace_region *want = trace_regions_get(lrun, 0);
        cr_assert_eq(run.kind, TRACE_REGION_RUN);
        cr_assert_str_eq(run.name, "run");
        cr_assert_eq(run.start, want->start);
        cr_assert_eq(run.end, want->end);
        usage_eq(&run.all, &want->all, true, "run", 0, -1);
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            usage_eq(&run.engine[k], &want->engine[k], false, "run", 0, k);
        trace_regions_free(lrun);
        trace_regions_free(light);
        trace_regions_free(rs);
        trace_model_free(m);
    }
}

Test(launchrun, ops_out_of_end_order_or_transfers_out_of_event_order_give_no_answer)
{
    struct trace_model *m = make(9, 2000, true, 0);
    struct trace_region run;
    cr_assert_null(trace_regions_new_launch_run(m, &run, NULL, 1));
    cr_assert_null(trace_regions_new_launch_run(m, &run, NULL, 2));
    trace_model_free(m);
    /* each half in end order, the two not: the later half's ops end before the earlier's */
    m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    static const uint64_t se[4][2] = {{0, 10}, {5, 20}, {1, 4}, {2, 6}};
    for (int i = 0; i < 4; i++) {
        struct trace_event ev = {
            .start = se[i][0], .end = se[i][1], .track = t, .layer = TRACE_NO_STR, .cmdq_id = 1};
        trace_model_add_event(m, &ev);
    }
    trace_model_finish(m);
    cr_assert_null(trace_regions_new_launch_run(m, &run, NULL, 1));
    cr_assert_null(trace_regions_new_launch_run(m, &run, NULL, 2));
    trace_model_free(m);
    /* two ops in end order whose transfers come the other way round */
    m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    for (int i = 0; i < 2; i++) {
        struct trace_event ev = {.start = 10u * (unsigned)i,
                                 .end = 10u * (unsigned)i + 5,
                                 .track = d,
                                 .layer = TRACE_NO_STR,
                                 .cmdq_id = 1};
        trace_model_add_event(m, &ev);
    }
    for (int i = 1; i >= 0; i--) {
        struct trace_transfer x = {.bytes = 8, .event = (uint32_t)i};
        trace_model_add_transfer(m, &x);
    }
    trace_model_finish(m);
    cr_assert_null(trace_regions_new_launch_run(m, &run, NULL, 1));
    cr_assert_null(trace_regions_new_launch_run(m, &run, NULL, 2));
    trace_model_free(m);
}

Test(launchrun, a_launch_in_many_runs_unites_its_ops_across_them)
{
    /* launch 1's ops around launch 2's, overlapping them: its busy cycles are one union */
    struct trace_model *m = trace_model_new();
    uint32_t te = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    static const struct {
        uint64_t s, e;
        int32_t cmdq;
        int ve;
    } ops[] = {{0, 10, 1, 0}, {5, 20, 2, 1}, {12, 30, 1, 1}, {8, 40, 1, 0}, {35, 41, 2, 0}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        struct trace_event ev = {.start = ops[i].s,
                                 .end = ops[i].e,
                                 .track = ops[i].ve ? ve : te,
                                 .layer = TRACE_NO_STR,
                                 .cmdq_id = ops[i].cmdq};
        trace_model_add_event(m, &ev);
    }
    trace_model_finish(m);
    halves_eq(m, "launch 1 around launch 2");
    struct trace_region run;
    struct trace_regions *rs = trace_regions_new_launch_run(m, &run, NULL, 2);
    cr_assert_not_null(rs);
    cr_assert_eq(trace_regions_count(rs), 2);
    const struct trace_region *l1 = trace_regions_get(rs, 0), *l2 = trace_regions_get(rs, 1);
    cr_assert_eq(l1->all.busy, 40);                     /* [0, 10) [12, 30) [8, 40) */
    cr_assert_eq(l1->engine[TRACE_ENGINE_TE].busy, 40); /* [0, 10) [8, 40) */
    cr_assert_eq(l1->engine[TRACE_ENGINE_VE].busy, 18);
    cr_assert_eq(l2->all.busy, 21); /* [5, 20) [35, 41) */
    cr_assert_eq(run.all.busy, 41);
    cr_assert_eq(run.engine[TRACE_ENGINE_VE].busy, 25); /* [5, 30) */
    uint64_t evs[5];
    cr_assert_eq(trace_regions_events(rs, 0, evs), 3);
    cr_assert_eq(evs[0], 0);
    cr_assert_eq(evs[1], 2);
    cr_assert_eq(evs[2], 3);
    cr_assert_eq(trace_regions_events(rs, 1, evs), 2);
    cr_assert_eq(evs[1], 4);
    trace_regions_free(rs);
    /* another split does not know its events by runs */
    rs = trace_regions_new_light(m, TRACE_REGION_LAUNCH, NULL);
    cr_assert_eq(trace_regions_events(rs, 0, NULL), SIZE_MAX);
    trace_regions_free(rs);
    trace_model_free(m);
}

/* Split in two halves at any point of the events (models of 1 to 80 ops, and of an odd
 * thousand), joined as the one pass finds them: launches whose runs cross the boundary, ops
 * of no length, a span over all the others, ops in flight, ops of no launch. */
Test(launchrun, two_halves_joined_are_the_one_pass_at_every_size)
{
    char what[64];
    for (int n = 1; n <= 80; n++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            struct trace_model *m = make(seed * 100 + (uint64_t)n, n, false, n % 5 == 0 ? 2 : 0);
            snprintf(what, sizeof(what), "%d ops, seed %" PRIu64, n, seed);
            halves_eq(m, what);
            trace_model_free(m);
        }
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct trace_model *m = make(seed, 1001 + 2 * (int)seed, false, seed == 4 ? 3 : 0);
        snprintf(what, sizeof(what), "an odd thousand, seed %" PRIu64, seed);
        halves_eq(m, what);
        trace_model_free(m);
    }
    /* one span over every other op, of the launch they are all in, on each engine kind: the
     * later half's sweeps reach lower than the earlier half's ever does */
    struct trace_model *m = trace_model_new();
    uint32_t te = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    for (int i = 0; i < 40; i++) {
        bool last = i == 39;
        struct trace_event ev = {.start = last ? 0 : 100 + 10 * (uint64_t)i,
                                 .end = last ? 1000 : 105 + 10 * (uint64_t)i,
                                 .track = i % 2 ? ve : te,
                                 .layer = TRACE_NO_STR,
                                 .cmdq_id = i % 7 == 3 ? 2 : 1};
        trace_model_add_event(m, &ev);
    }
    trace_model_finish(m);
    halves_eq(m, "a span over the rest");
    struct trace_region run;
    struct trace_regions *rs = trace_regions_new_launch_run(m, &run, NULL, 2);
    cr_assert_not_null(rs);
    cr_assert_eq(run.all.busy, 1000);
    cr_assert_eq(trace_regions_get(rs, 0)->all.busy, 1000);
    trace_regions_free(rs);
    trace_model_free(m);
}

/* Cancelled, in one pass or in two halves (the earlier half's pass checks, and stops the
 * later's): no answer, and nothing left allocated (ASan). Asked again, the same split. */
Test(launchrun, a_cancelled_split_gives_no_answer_in_one_pass_or_two_halves)
{
    struct trace_model *m = make(5, 40000, false, 0);
    for (unsigned threads = 1; threads <= 2; threads++) {
        struct trace_progress p = {0};
        atomic_store(&p.cancel, true);
        struct trace_region run;
        cr_assert_null(trace_regions_new_launch_run(m, &run, &p, threads), "threads %u", threads);
    }
    halves_eq(m, "after a cancel");
    trace_model_free(m);
}
