/* Per-region accounting (trace/analysis/regions.h) on models whose answers are worked out by hand:
 * each kind of split, busy cycles as unions, windows that share an op, launch names. */
#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/analysis/regions.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t add(struct trace_model *m, uint32_t t, const char *op, uint64_t s, uint64_t e,
                    int32_t cmdq, const char *layer)
{
    struct trace_event ev = {.start = s,
                             .end = e,
                             .track = t,
                             .op = trace_model_intern(m, op, strlen(op)),
                             .layer = layer ? trace_model_intern(m, layer, strlen(layer)) : 0,
                             .cmdq_id = cmdq};
    return trace_model_add_event(m, &ev);
}

static void marker(struct trace_model *m, const char *name, uint64_t cycle, const char *kernel,
                   int cmdq)
{
    struct sim_value *d = NULL;
    if (kernel) {
        d = sim_value_map();
        sim_value_map_set_str(d, "kernel", kernel);
        sim_value_map_set_int(d, "cmdq_id", cmdq);
    }
    struct trace_marker k = {cycle, trace_model_intern(m, name, strlen(name)), UINT32_MAX, d};
    trace_model_add_marker(m, &k);
}

static const struct trace_op_usage *op_usage(const struct trace_model *m,
                                             const struct trace_region *r, const char *name)
{
    for (size_t i = 0; i < r->nops; i++)
        if (strcmp(trace_model_str(m, r->ops[i].op), name) == 0)
            return &r->ops[i];
    return NULL;
}

Test(regions, the_run_unions_overlaps_and_counts_ops_and_bytes)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t d1 = trace_model_track(m, "DMA 1", TRACE_ENGINE_DMA, 1);
    uint32_t t0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint64_t e0 = add(m, d0, "load", 0, 100, TRACE_NO_CMDQ, NULL);
    add(m, d0, "load", 50, 150, TRACE_NO_CMDQ, NULL); /* overlaps on its own track */
    uint64_t e2 = add(m, d1, "store", 120, 220, TRACE_NO_CMDQ, NULL);
    add(m, t0, "gemm", 300, 400, TRACE_NO_CMDQ, NULL);
    trace_model_add_transfer(m, &(struct trace_transfer){.bytes = 1000, .event = (uint32_t)e0});
    trace_model_add_transfer(
        m,
        &(struct trace_transfer){.bytes = 500, .event = (uint32_t)e2, .flags = TRACE_XFER_WRITE});
    trace_model_finish(m);

    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_RUN);
    cr_assert_eq(trace_regions_count(rs), 1);
    const struct trace_region *r = trace_regions_get(rs, 0);
    cr_assert_str_eq(r->name, "run");
    cr_assert_eq(r->start, 0);
    cr_assert_eq(r->end, 400);
    cr_assert_eq(r->all.ops, 4);
    cr_assert_eq(r->all.op_cycles, 400);
    cr_assert_eq(r->all.busy, 320, "0..220 and 300..400");
    cr_assert_eq(r->engine[TRACE_ENGINE_DMA].busy, 220, "a union over both DMA tracks");
    cr_assert_eq(r->engine[TRACE_ENGINE_DMA].ops, 3);
    cr_assert_eq(r->engine[TRACE_ENGINE_DMA].read_bytes, 1000);
    cr_assert_eq(r->engine[TRACE_ENGINE_DMA].write_bytes, 500);
    cr_assert_eq(r->engine[TRACE_ENGINE_TE].busy, 100);
    cr_assert_eq(r->engine[TRACE_ENGINE_VE].ops, 0);
    cr_assert_eq(r->ntracks, 3);
    cr_assert_eq(trace_region_track(r, d0)->u.busy, 150);
    cr_assert_eq(trace_region_track(r, d0)->u.op_cycles, 200);
    cr_assert_eq(trace_region_track(r, d0)->u.read_bytes, 1000);
    cr_assert_eq(trace_region_track(r, d1)->u.write_bytes, 500);
    cr_assert_float_eq(trace_region_util(r, trace_region_track(r, t0)->u.busy), 0.25, 1e-12);
    cr_assert_eq(op_usage(m, r, "load")->count, 2);
    cr_assert_eq(op_usage(m, r, "load")->cycles, 200);
    cr_assert_eq(op_usage(m, r, "gemm")->cycles, 100);
    cr_assert_eq(trace_regions_of_event(rs, e2), 0);
    trace_regions_free(rs);
    trace_model_free(m);
}

Test(regions, launches_follow_cmdq_ids_and_take_kernel_names_from_markers)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "p.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t v0 = trace_model_track(m, "p.pe_math", TRACE_ENGINE_VE, 0);
    add(m, d0, "dma_read", 100, 200, 3, NULL);
    add(m, v0, "add", 200, 250, 3, NULL);
    uint64_t late = add(m, d0, "dma_read", 500, 600, 7, NULL);
    uint64_t host = add(m, d0, "dma_read", 0, 10, TRACE_NO_CMDQ, NULL);
    add(m, d0, "dma_read", 700, 800, 9, NULL);
    marker(m, "vadd.begin", 90, "vadd", 3);
    marker(m, "vadd.end", 260, "vadd", 3);
    marker(m, "vadd.begin", 490, "vadd", 7);
    trace_model_finish(m);

    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAUNCH);
    cr_assert_eq(trace_regions_count(rs), 3);
    const struct trace_region *a = trace_regions_get(rs, 0), *b = trace_regions_get(rs, 1);
    const struct trace_region *c = trace_regions_get(rs, 2);
    cr_assert_str_eq(a->name, "vadd");
    cr_assert_eq(a->occurrence, 0);
    cr_assert_eq(a->cmdq_id, 3);
    cr_assert_eq(a->start, 90, "its markers widen the span");
    cr_assert_eq(a->end, 260);
    cr_assert_eq(a->all.ops, 2);
    cr_assert_eq(a->all.busy, 150);
    cr_assert_str_eq(b->name, "vadd");
    cr_assert_eq(b->occurrence, 1, "the second launch of the same kernel");
    cr_assert_str_eq(c->name, "cmdq 9", "no marker names it");
    cr_assert_eq(trace_regions_of_event(rs, late), 1);
    cr_assert_eq(trace_regions_of_event(rs, host), SIZE_MAX, "no cmdq_id: no launch");
    cr_assert_eq(trace_regions_at(rs, 150), SIZE_MAX, "launches are not windows");
    trace_regions_free(rs);
    trace_model_free(m);
}

Test(regions, markers_make_windows_that_share_an_op_by_time)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint64_t cross = add(m, d0, "load", 150, 250, TRACE_NO_CMDQ, NULL);
    add(m, d0, "load", 20, 40, TRACE_NO_CMDQ, NULL);
    add(m, d0, "load", 300, 400, TRACE_NO_CMDQ, NULL);
    marker(m, "a", 100, NULL, 0);
    marker(m, "a", 110, NULL, 0); /* raised again (another PE): one boundary */
    marker(m, "b", 200, NULL, 0);
    trace_model_finish(m);

    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_MARKER);
    cr_assert_eq(trace_regions_count(rs), 3);
    const struct trace_region *s = trace_regions_get(rs, 0), *a = trace_regions_get(rs, 1);
    const struct trace_region *b = trace_regions_get(rs, 2);
    cr_assert_str_eq(s->name, TRACE_REGION_START_NAME);
    cr_assert_eq(s->end, 100);
    cr_assert_eq(s->all.busy, 20);
    cr_assert_str_eq(a->name, "a");
    cr_assert_eq(a->start, 100);
    cr_assert_eq(a->end, 200);
    cr_assert_eq(a->all.busy, 50, "the part of the crossing op before b");
    cr_assert_eq(a->all.ops, 1, "ops belong where they start");
    cr_assert_eq(a->all.op_cycles, 100);
    cr_assert_eq(b->start, 200);
    cr_assert_eq(b->end, 400);
    cr_assert_eq(b->all.busy, 150);
    cr_assert_eq(b->all.ops, 1);
    cr_assert_eq(trace_region_track(b, d0)->u.busy, 150);
    cr_assert_eq(s->all.busy + a->all.busy + b->all.busy, 220, "windows add up to the run");
    cr_assert_eq(trace_regions_of_event(rs, cross), 1);
    cr_assert_eq(trace_regions_at(rs, 0), 0);
    cr_assert_eq(trace_regions_at(rs, 199), 1);
    cr_assert_eq(trace_regions_at(rs, 10000), 2);
    trace_regions_free(rs);
    trace_model_free(m);
}

Test(regions, layers_in_order_of_their_first_op)
{
    struct trace_model *m = trace_model_new();
    uint32_t t0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    add(m, t0, "gemm", 500, 600, 1, "attn_1");
    add(m, t0, "gemm", 100, 200, 2, "ffn_1");
    add(m, t0, "gemm", 700, 800, 3, "ffn_1");
    add(m, t0, "gemm", 900, 950, 4, NULL);
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    cr_assert_eq(trace_regions_count(rs), 2);
    cr_assert_str_eq(trace_regions_get(rs, 0)->name, "ffn_1");
    cr_assert_eq(trace_regions_get(rs, 0)->start, 100);
    cr_assert_eq(trace_regions_get(rs, 0)->end, 800);
    cr_assert_eq(trace_regions_get(rs, 0)->all.busy, 200);
    cr_assert_str_eq(trace_regions_get(rs, 1)->name, "attn_1");
    cr_assert_eq(trace_regions_kind(rs), TRACE_REGION_LAYER);
    trace_regions_free(rs);
    trace_model_free(m);
}

Test(regions, per_op_name_spans_busy_cycles_per_engine_and_bytes)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t d1 = trace_model_track(m, "DMA 1", TRACE_ENGINE_DMA, 1);
    uint32_t v0 = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    /* "load" on two DMA engines: [0,100) and [50,120) overlap (120 busy), [300,350) */
    uint64_t a = add(m, d0, "load", 0, 100, 1, "L0");
    add(m, d1, "load", 50, 120, 1, "L0");
    uint64_t c = add(m, d0, "load", 300, 350, 1, "L0");
    /* "mix" on a DMA and a VE: the same cycles [200,260) count once over all engines */
    add(m, d1, "mix", 200, 260, 1, "L0");
    add(m, v0, "mix", 200, 260, 1, "L0");
    add(m, v0, "mix", 400, 400, 1, "L0"); /* empty: counted, never busy */
    add(m, v0, "load", 0, 500, 1, "L1");  /* another layer: not L0's */
    trace_model_add_transfer(m, &(struct trace_transfer){.bytes = 64, .event = (uint32_t)a});
    trace_model_add_transfer(
        m, &(struct trace_transfer){.bytes = 32, .event = (uint32_t)c, .flags = TRACE_XFER_WRITE});
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    cr_assert_eq(trace_regions_count(rs), 2);
    const struct trace_region *r = trace_regions_get(rs, 0);
    cr_assert_str_eq(r->name, "L0");
    const struct trace_op_usage *ld = op_usage(m, r, "load"), *mx = op_usage(m, r, "mix");
    cr_assert(ld && mx);
    cr_assert_eq(ld->count, 3);
    cr_assert_eq(ld->cycles, 100 + 70 + 50);
    cr_assert_eq(ld->start, 0);
    cr_assert_eq(ld->end, 350);
    cr_assert_eq(ld->busy, 120 + 50);
    cr_assert_eq(ld->engine_busy[TRACE_ENGINE_DMA], 170);
    cr_assert_eq(ld->engine_busy[TRACE_ENGINE_VE], 0);
    cr_assert_eq(ld->read_bytes, 64);
    cr_assert_eq(ld->write_bytes, 32);
    cr_assert_eq(mx->count, 3);
    cr_assert_eq(mx->start, 200);
    cr_assert_eq(mx->end, 400);
    cr_assert_eq(mx->busy, 60);
    cr_assert_eq(mx->engine_busy[TRACE_ENGINE_DMA], 60);
    cr_assert_eq(mx->engine_busy[TRACE_ENGINE_VE], 60);
    cr_assert_eq(trace_region_op(r, ld->op), ld);
    cr_assert_null(trace_region_op(r, trace_model_intern(m, "nothing", 7)));
    /* the other layer has its own "load" */
    const struct trace_op_usage *l1 = op_usage(m, trace_regions_get(rs, 1), "load");
    cr_assert_eq(l1->engine_busy[TRACE_ENGINE_VE], 500);
    cr_assert_eq(l1->busy, 500);
    trace_regions_free(rs);
    trace_model_free(m);
}

Test(regions, splits_that_find_nothing_are_empty)
{
    struct trace_model *m = trace_model_new();
    uint32_t t0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    add(m, t0, "gemm", 0, 10, TRACE_NO_CMDQ, NULL);
    trace_model_finish(m);
    for (int k = TRACE_REGION_LAUNCH; k < TRACE_REGION_KIND_COUNT; k++) {
        struct trace_regions *rs = trace_regions_new(m, (enum trace_region_kind)k);
        cr_assert_eq(trace_regions_count(rs), 0, "%s", trace_region_kind_name(k));
        cr_assert_eq(trace_regions_of_event(rs, 0), SIZE_MAX);
        trace_regions_free(rs);
    }
    struct trace_model *empty = trace_model_new();
    trace_model_finish(empty);
    struct trace_regions *rs = trace_regions_new(empty, TRACE_REGION_RUN);
    cr_assert_eq(trace_regions_count(rs), 1);
    cr_assert_eq(trace_region_length(trace_regions_get(rs, 0)), 0);
    cr_assert_eq(trace_region_util(trace_regions_get(rs, 0), 0), 0);
    trace_regions_free(rs);
    trace_regions_free(NULL);
    trace_model_free(empty);
    trace_model_free(m);
}

Test(regions, an_inflight_op_counts_until_now)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    struct trace_event ev = {
        .start = 100, .end = 100, .track = d0, .cmdq_id = 1, .flags = TRACE_EV_INFLIGHT};
    trace_model_add_event(m, &ev);
    trace_model_set_now(m, 180);
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAUNCH);
    cr_assert_eq(trace_regions_get(rs, 0)->all.busy, 80);
    cr_assert_eq(trace_regions_get(rs, 0)->end, 180);
    trace_regions_free(rs);
    trace_model_free(m);
}

/* ---- many ops: the sorts for large regions ------------------------------------------------ */

/* The length of the union of n intervals (s, e) (sorted here). */
static int cmp_iv(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static uint64_t union_len(uint64_t (*iv)[2], size_t n)
{
    qsort(iv, n, sizeof(*iv), cmp_iv);
    uint64_t total = 0;
    for (size_t i = 0; i < n;) {
        uint64_t s = iv[i][0], e = iv[i][1];
        for (i++; i < n && iv[i][0] <= e; i++)
            e = iv[i][1] > e ? iv[i][1] : e;
        total += e - s;
    }
    return total;
}

Test(regions, a_region_of_many_overlapping_ops_unions_them_as_a_small_one)
{
    /* 30000 ops on six tracks of three kinds, four op names, lengths and gaps at random
     * (starts far apart too, so that the sort by start needs several digits): busy per
     * engine kind, per op name and per op name and kind are unions worked out here */
    struct trace_model *m = trace_model_new();
    static const enum trace_engine kinds[6] = {TRACE_ENGINE_DMA, TRACE_ENGINE_DMA, TRACE_ENGINE_TE,
                                               TRACE_ENGINE_TE,  TRACE_ENGINE_VE,  TRACE_ENGINE_VE};
    static const char *const names[4] = {"load", "gemm", "exp", "store"};
    uint32_t tr[6];
    for (int t = 0; t < 6; t++) {
        char name[24];
        snprintf(name, sizeof(name), "track %d", t);
        tr[t] = trace_model_track(m, name, kinds[t], t);
    }
    enum { N = 30000 };
    static uint64_t ev[N][4]; /* track, op, start, end */
    uint64_t seed = 12345, at[6] = {0};
    for (size_t i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int t = (int)((seed >> 33) % 6), op = (int)((seed >> 40) % 4);
        uint64_t len = 1 + (seed >> 45) % 200, gap = (seed >> 20) % 150;
        if ((seed >> 10) % 1000 == 0)
            gap = (uint64_t)1 << 36; /* a long pause */
        at[t] += gap;
        uint64_t s = at[t] > 100 ? at[t] - (seed >> 5) % 100 : at[t]; /* overlaps */
        ev[i][0] = (uint64_t)t, ev[i][1] = (uint64_t)op, ev[i][2] = s, ev[i][3] = s + len;
        add(m, tr[t], names[op], s, s + len, TRACE_NO_CMDQ, NULL);
    }
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_RUN);
    const struct trace_region *r = trace_regions_get(rs, 0);
    uint64_t(*iv)[2] = malloc(N * sizeof(*iv));
    for (int k = 0; k < 3; k++) { /* each engine kind */
        enum trace_engine e =
            (enum trace_engine[]){TRACE_ENGINE_DMA, TRACE_ENGINE_TE, TRACE_ENGINE_VE}[k];
        size_t n = 0;
        for (size_t i = 0; i < N; i++)
            if (kinds[ev[i][0]] == e)
                iv[n][0] = ev[i][2], iv[n++][1] = ev[i][3];
        cr_assert_eq(r->engine[e].busy, union_len(iv, n), "engine kind %d", (int)e);
    }
    for (int op = 0; op < 4; op++) {
        const struct trace_op_usage *u = op_usage(m, r, names[op]);
        cr_assert_not_null(u);
        size_t n = 0;
        for (size_t i = 0; i < N; i++)
            if (ev[i][1] == (uint64_t)op)
                iv[n][0] = ev[i][2], iv[n++][1] = ev[i][3];
        cr_assert_eq(u->count, n);
        cr_assert_eq(u->busy, union_len(iv, n), "%s", names[op]);
        for (int k = 0; k < 3; k++) {
            enum trace_engine e =
                (enum trace_engine[]){TRACE_ENGINE_DMA, TRACE_ENGINE_TE, TRACE_ENGINE_VE}[k];
            n = 0;
            for (size_t i = 0; i < N; i++)
                if (ev[i][1] == (uint64_t)op && kinds[ev[i][0]] == e)
                    iv[n][0] = ev[i][2], iv[n++][1] = ev[i][3];
            cr_assert_eq(u->engine_busy[e], union_len(iv, n), "%s on kind %d", names[op], (int)e);
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < N; i++)
        iv[n][0] = ev[i][2], iv[n++][1] = ev[i][3];
    cr_assert_eq(r->all.busy, union_len(iv, n), "every engine");
    free(iv);
    trace_regions_free(rs);
    trace_model_free(m);
}

/* ---- windows: busy cycles cut at their edges ---------------------------------------------- */

Test(regions, one_op_across_many_windows_counts_in_each_for_its_part)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t t0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    add(m, d0, "load", 50, 950, TRACE_NO_CMDQ, NULL);
    add(m, t0, "gemm", 420, 420, TRACE_NO_CMDQ, NULL); /* zero length: an op, no busy */
    add(m, t0, "gemm", 1000, 1000, TRACE_NO_CMDQ, NULL);
    for (int k = 1; k <= 9; k++) {
        char name[16];
        snprintf(name, sizeof(name), "w%d", k);
        marker(m, name, (uint64_t)k * 100, NULL, 0);
    }
    marker(m, "same", 500, NULL, 0); /* a second boundary at 500: an empty window */
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new_light(m, TRACE_REGION_MARKER, NULL);
    cr_assert_eq(trace_regions_count(rs), 11);
    static const uint64_t busy[11] = {50, 100, 100, 100, 100, 0, 100, 100, 100, 100, 50};
    uint64_t sum = 0;
    for (size_t k = 0; k < 11; k++) {
        const struct trace_region *r = trace_regions_get(rs, k);
        cr_assert_eq(r->all.busy, busy[k], "window %zu", k);
        cr_assert_eq(r->engine[TRACE_ENGINE_DMA].busy, busy[k], "window %zu", k);
        cr_assert_eq(r->engine[TRACE_ENGINE_TE].busy, 0);
        const struct trace_track_usage *u = trace_region_track(r, d0);
        cr_assert_eq(u ? u->u.busy : 0, busy[k], "window %zu", k);
        cr_assert_eq(u != NULL, busy[k] > 0, "a track is listed where it was busy");
        sum += r->all.busy;
    }
    cr_assert_eq(trace_regions_get(rs, 5)->start, 500);
    cr_assert_eq(trace_regions_get(rs, 5)->end, 500);
    cr_assert_eq(trace_regions_get(rs, 4)->all.ops, 1, "the zero-length op where it starts");
    cr_assert_eq(trace_region_track(trace_regions_get(rs, 4), t0)->u.busy, 0);
    cr_assert_eq(trace_regions_get(rs, 10)->all.ops, 1);
    cr_assert_eq(sum, 900, "windows add up to the run");
    trace_regions_free(rs);

    rs = trace_regions_new_light(m, TRACE_REGION_RUN, NULL);
    cr_assert_eq(trace_regions_get(rs, 0)->all.busy, 900);
    cr_assert_eq(trace_regions_get(rs, 0)->all.ops, 3);
    trace_regions_free(rs);
    trace_model_free(m);
}

Test(regions, window_busy_per_track_kind_and_all_is_the_union_cut_at_each_window)
{
    /* 3000 ops of random lengths (zero too) on six tracks of three kinds, 40 markers, some
     * at one cycle (empty windows): every window's busy cycles per track, per kind and over
     * all engines against a cycle by cycle count */
    struct trace_model *m = trace_model_new();
    static const enum trace_engine kinds[6] = {TRACE_ENGINE_DMA, TRACE_ENGINE_DMA, TRACE_ENGINE_TE,
                                               TRACE_ENGINE_TE,  TRACE_ENGINE_VE,  TRACE_ENGINE_VE};
    enum { N = 3000, T = 6, CYCLES = 20000, MARKERS = 40 };
    uint32_t tr[T];
    for (int t = 0; t < T; t++) {
        char name[24];
        snprintf(name, sizeof(name), "track %d", t);
        tr[t] = trace_model_track(m, name, kinds[t], t);
    }
    static bool on[T][CYCLES];
    static uint32_t nops[T][CYCLES]; /* ops starting at each cycle */
    memset(on, 0, sizeof(on));
    memset(nops, 0, sizeof(nops));
    uint64_t seed = 777;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int t = (int)((seed >> 33) % T);
        uint64_t s = (seed >> 20) % (CYCLES - 2000), len = (seed >> 45) % 400;
        if ((seed >> 8) % 7 == 0)
            len = 0;
        if (s > 12000 && s < 14000)
            continue; /* a stretch without ops: empty windows */
        add(m, tr[t], "op", s, s + len, TRACE_NO_CMDQ, NULL);
        nops[t][s]++;
        for (uint64_t c = s; c < s + len; c++)
            on[t][c] = true;
    }
    for (int k = 0; k < MARKERS; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        char name[16];
        snprintf(name, sizeof(name), "m%d", k);
        uint64_t c = 100 + (seed >> 30) % (CYCLES - 2500);
        marker(m, name, c, NULL, 0);
        if (k % 8 == 0)
            marker(m, "again", c, NULL, 0);
    }
    trace_model_finish(m);
    for (int light = 0; light < 2; light++) {
        struct trace_regions *rs = light ? trace_regions_new_light(m, TRACE_REGION_MARKER, NULL)
                                         : trace_regions_new(m, TRACE_REGION_MARKER);
        cr_assert_gt(trace_regions_count(rs), MARKERS);
        uint64_t total = 0;
        for (size_t w = 0; w < trace_regions_count(rs); w++) {
            const struct trace_region *r = trace_regions_get(rs, w);
            uint64_t all = 0, kind[TRACE_ENGINE_COUNT] = {0}, track[T] = {0}, ops[T] = {0};
            for (uint64_t c = r->start; c < r->end && c < CYCLES; c++) {
                bool any = false, k_on[TRACE_ENGINE_COUNT] = {false};
                for (int t = 0; t < T; t++) {
                    track[t] += on[t][c];
                    ops[t] += nops[t][c];
                    k_on[kinds[t]] |= on[t][c];
                    any |= on[t][c];
                }
                for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
                    kind[k] += k_on[k];
                all += any;
            }
            cr_assert_eq(r->all.busy, all, "window %zu", w);
            total += all;
            for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
                cr_assert_eq(r->engine[k].busy, kind[k], "window %zu kind %d", w, k);
            for (int t = 0; t < T; t++) {
                const struct trace_track_usage *u = trace_region_track(r, tr[t]);
                cr_assert_eq(u ? u->u.busy : 0, track[t], "window %zu track %d", w, t);
                cr_assert_eq(u ? u->u.ops : 0, ops[t], "window %zu track %d", w, t);
                cr_assert_eq(u != NULL, track[t] > 0 || ops[t] > 0, "window %zu track %d", w, t);
            }
        }
        struct trace_regions *run = trace_regions_new_light(m, TRACE_REGION_RUN, NULL);
        cr_assert_eq(trace_regions_get(run, 0)->all.busy, total, "windows add up to the run");
        trace_regions_free(run);
        trace_regions_free(rs);
    }
    trace_model_free(m);
}

Test(regions, bytes_of_interleaved_regions_whatever_the_transfers_order)
{
    /* two layers whose ops alternate, each op with 0, 1 or 2 transfers: each layer's bytes,
     * with the transfers recorded in event order and the other way round */
    for (int reversed = 0; reversed < 2; reversed++) {
        struct trace_model *m = trace_model_new();
        uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
        enum { N = 200 };
        uint64_t ev[N], want[2][2] = {{0}}; /* layer, read / write */
        for (int i = 0; i < N; i++)
            ev[i] = add(m, d0, "load", (uint64_t)i * 10, (uint64_t)i * 10 + 5, TRACE_NO_CMDQ,
                        i % 2 ? "L1" : "L0");
        struct trace_transfer xs[2 * N];
        size_t nx = 0;
        for (int i = 0; i < N; i++)
            for (int k = 0; k < i % 3; k++) {
                bool w = (i + k) % 2;
                xs[nx++] = (struct trace_transfer){.bytes = (uint64_t)(i * 7 + k + 1),
                                                   .event = (uint32_t)ev[i],
                                                   .flags = w ? TRACE_XFER_WRITE : 0};
                want[i % 2][w] += (uint64_t)(i * 7 + k + 1);
            }
        for (size_t k = 0; k < nx; k++)
            trace_model_add_transfer(m, &xs[reversed ? nx - 1 - k : k]);
        trace_model_finish(m);
        for (int light = 0; light < 2; light++) {
            struct trace_regions *rs = light ? trace_regions_new_light(m, TRACE_REGION_LAYER, NULL)
                                             : trace_regions_new(m, TRACE_REGION_LAYER);
            cr_assert_eq(trace_regions_count(rs), 2);
            for (size_t l = 0; l < 2; l++) {
                const struct trace_region *r = trace_regions_get(rs, l);
                cr_assert_eq(r->all.read_bytes, want[l][0], "layer %zu", l);
                cr_assert_eq(r->all.write_bytes, want[l][1], "layer %zu", l);
                cr_assert_eq(trace_region_track(r, d0)->u.read_bytes, want[l][0]);
                cr_assert_eq(op_usage(m, r, "load")->write_bytes, want[l][1]);
            }
            trace_regions_free(rs);
        }
        struct trace_regions *run = trace_regions_new_light(m, TRACE_REGION_RUN, NULL);
        cr_assert_eq(trace_regions_get(run, 0)->all.read_bytes, want[0][0] + want[1][0]);
        cr_assert_eq(trace_regions_get(run, 0)->all.write_bytes, want[0][1] + want[1][1]);
        trace_regions_free(run);
        trace_model_free(m);
    }
}
