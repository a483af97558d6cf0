/*
 * The regions of a growing model kept up to date (trace/analysis/regions_inc.h): at every step
 * of a model that grows as a live run does, the set an update returns equals the set
 * accounted from scratch, for layer and launch splits at every depth; the same for an empty
 * model, one op, ops ending out of order, a model whose events do not come in start order,
 * and a model replaced under the state. The layers' instances per token likewise.
 */
#include "test_grow.h"
#include "trace/analysis/instances.h"
#include "trace/analysis/regions.h"
#include "trace/analysis/regions_inc.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static void usage_eq(const struct trace_usage *a, const struct trace_usage *b, const char *what,
                     uint64_t step)
{
    cr_assert(a->busy == b->busy && a->ops == b->ops && a->op_cycles == b->op_cycles &&
                  a->read_bytes == b->read_bytes && a->write_bytes == b->write_bytes,
              "step %llu, %s: busy %llu/%llu ops %llu/%llu cycles %llu/%llu bytes %llu/%llu "
              "%llu/%llu",
              (unsigned long long)step, what, (unsigned long long)a->busy,
              (unsigned long long)b->busy, (unsigned long long)a->ops, (unsigned long long)b->ops,
              (unsigned long long)a->op_cycles, (unsigned long long)b->op_cycles,
              (unsigned long long)a->read_bytes, (unsigned long long)b->read_bytes,
              (unsigned long long)a->write_bytes, (unsigned long long)b->write_bytes);
}

/* Every figure of a and b the same, and every event in the same region. */
static void regions_eq(const struct trace_regions *a, const struct trace_regions *b, uint64_t step)
{
    cr_assert_eq(trace_regions_count(a), trace_regions_count(b), "step %llu: %zu regions, not %zu",
                 (unsigned long long)step, trace_regions_count(a), trace_regions_count(b));
    for (size_t i = 0; i < trace_regions_count(a); i++) {
        const struct trace_region *x = trace_regions_get(a, i), *y = trace_regions_get(b, i);
        cr_assert_str_eq(x->name, y->name, "step %llu region %zu", (unsigned long long)step, i);
        cr_assert(x->kind == y->kind && x->occurrence == y->occurrence &&
                      x->cmdq_id == y->cmdq_id && x->layer == y->layer,
                  "step %llu region %zu", (unsigned long long)step, i);
        cr_assert(x->start == y->start && x->end == y->end,
                  "step %llu region %zu: [%llu, %llu) not [%llu, %llu)", (unsigned long long)step,
                  i, (unsigned long long)x->start, (unsigned long long)x->end,
                  (unsigned long long)y->start, (unsigned long long)y->end);
        usage_eq(&x->all, &y->all, "all", step);
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            usage_eq(&x->engine[k], &y->engine[k], "engine", step);
        cr_assert_eq(x->ntracks, y->ntracks, "step %llu region %zu", (unsigned long long)step, i);
        for (size_t t = 0; t < x->ntracks; t++) {
            cr_assert_eq(x->tracks[t].track, y->tracks[t].track);
            usage_eq(&x->tracks[t].u, &y->tracks[t].u, "track", step);
        }
        cr_assert_eq(x->nops, y->nops, "step %llu region %zu", (unsigned long long)step, i);
        for (size_t o = 0; o < x->nops; o++) {
            const struct trace_op_usage *p = &x->ops[o], *q = &y->ops[o];
            cr_assert(p->op == q->op && p->count == q->count && p->cycles == q->cycles &&
                          p->start == q->start && p->end == q->end && p->busy == q->busy &&
                          p->read_bytes == q->read_bytes && p->write_bytes == q->write_bytes,
                      "step %llu region %zu op %zu: busy %llu/%llu", (unsigned long long)step, i, o,
                      (unsigned long long)p->busy, (unsigned long long)q->busy);
            for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
                cr_assert_eq(p->engine_busy[k], q->engine_busy[k], "step %llu",
                             (unsigned long long)step);
        }
    }
    uint64_t n = trace_model_event_count(trace_regions_model(b));
    for (uint64_t e = 0; e < n + 2; e++)
        cr_assert_eq(trace_regions_of_event(a, e), trace_regions_of_event(b, e),
                     "step %llu event %llu", (unsigned long long)step, (unsigned long long)e);
}

static struct trace_regions *scratch(const struct trace_model *m, enum trace_region_kind kind,
                                     enum trace_regions_depth d)
{
    return d == TRACE_REGIONS_FULL    ? trace_regions_new(m, kind)
           : d == TRACE_REGIONS_LIGHT ? trace_regions_new_light(m, kind, NULL)
                                      : trace_regions_new_split(m, kind);
}

/* Update st and compare with the set from scratch. */
static void check(struct trace_regions_inc *st, const struct trace_model *m,
                  enum trace_region_kind kind, enum trace_regions_depth d, uint64_t step)
{
    struct trace_regions *a = trace_regions_inc_update(st, m, NULL);
    cr_assert_not_null(a);
    struct trace_regions *b = scratch(m, kind, d);
    regions_eq(a, b, step);
    trace_regions_free(a);
    trace_regions_free(b);
}

static const enum trace_region_kind kinds[] = {TRACE_REGION_LAYER, TRACE_REGION_LAUNCH,
                                               TRACE_REGION_RUN, TRACE_REGION_MARKER};
enum { NKINDS = sizeof(kinds) / sizeof(kinds[0]), NDEPTHS = 3 };

Test(regions_inc, equals_from_scratch_at_every_step_of_a_growing_model)
{
    struct grow_model g;
    grow_new(&g, 42);
    struct trace_regions_inc *st[NKINDS][NDEPTHS];
    for (int k = 0; k < NKINDS; k++)
        for (int d = 0; d < NDEPTHS; d++)
            st[k][d] = trace_regions_inc_new(kinds[k], (enum trace_regions_depth)d);
    for (uint64_t step = 0; step < 700; step++) {
        for (int k = 0; k < NKINDS; k++)
            for (int d = 0; d < NDEPTHS; d++)
                check(st[k][d], g.m, kinds[k], (enum trace_regions_depth)d, step);
        grow_step(&g);
    }
    /* the run ends: every op ends, all of it folded in */
    for (size_t k = 0; k < g.nopen; k++)
        trace_model_end_event(g.m, g.open[k], g.now);
    g.nopen = 0;
    trace_model_finish(g.m);
    for (int k = 0; k < NKINDS; k++)
        for (int d = 0; d < NDEPTHS; d++) {
            check(st[k][d], g.m, kinds[k], (enum trace_regions_depth)d, 700);
            if (kinds[k] == TRACE_REGION_LAYER || kinds[k] == TRACE_REGION_LAUNCH)
                cr_assert_eq(trace_regions_inc_folded(st[k][d]), trace_model_event_count(g.m));
            trace_regions_inc_free(st[k][d]);
        }
    cr_assert_gt(trace_model_event_count(g.m), 500);
    trace_model_free(g.m);
}

/* An op in flight does not hold back the ops that ended after it started. */
Test(regions_inc, folds_in_every_op_that_ended)
{
    struct grow_model g;
    grow_new(&g, 7);
    struct trace_regions_inc *st = trace_regions_inc_new(TRACE_REGION_LAYER, TRACE_REGIONS_FULL);
    grow_start(&g, 0); /* event 0 stays in flight */
    g.nopen = 0;
    for (int i = 0; i < 5; i++) {
        g.now += 10;
        trace_model_set_now(g.m, g.now);
        grow_start(&g, 1);
        trace_model_end_event(g.m, g.open[--g.nopen], g.now + 5);
    }
    trace_model_finish(g.m);
    check(st, g.m, TRACE_REGION_LAYER, TRACE_REGIONS_FULL, 0);
    cr_assert_eq(trace_regions_inc_folded(st), 5);
    trace_model_end_event(g.m, 0, g.now + 100); /* ends after the others */
    trace_model_finish(g.m);
    check(st, g.m, TRACE_REGION_LAYER, TRACE_REGIONS_FULL, 1);
    cr_assert_eq(trace_regions_inc_folded(st), 6);
    trace_regions_inc_free(st);
    trace_model_free(g.m);
}

Test(regions_inc, an_empty_model_and_one_op)
{
    struct grow_model g;
    grow_new(&g, 1);
    for (int k = 0; k < 2; k++) {
        struct trace_regions_inc *st = trace_regions_inc_new(kinds[k], TRACE_REGIONS_FULL);
        struct grow_model h;
        grow_new(&h, 1);
        check(st, h.m, kinds[k], TRACE_REGIONS_FULL, 0);
        grow_start(&h, 0);
        trace_model_finish(h.m);
        check(st, h.m, kinds[k], TRACE_REGIONS_FULL, 1); /* in flight */
        h.now = 30;
        trace_model_set_now(h.m, h.now);
        trace_model_finish(h.m);
        check(st, h.m, kinds[k], TRACE_REGIONS_FULL, 2); /* in flight, longer */
        trace_model_end_event(h.m, h.open[0], 40);
        trace_model_finish(h.m);
        check(st, h.m, kinds[k], TRACE_REGIONS_FULL, 3);
        trace_regions_inc_free(st);
        trace_model_free(h.m);
    }
    trace_model_free(g.m);
}

/* Events appended out of start order (not a live run's): every update accounts from scratch,
 * and the answer stays the same. */
Test(regions_inc, events_out_of_start_order)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    struct trace_regions_inc *st = trace_regions_inc_new(TRACE_REGION_LAYER, TRACE_REGIONS_FULL);
    uint32_t l = trace_model_intern(m, "L0", 2), op = trace_model_intern(m, "gemm", 4);
    static const uint64_t span[][2] = {{100, 200}, {150, 260}, {20, 120}, {0, 10}, {250, 300}};
    for (size_t i = 0; i < sizeof(span) / sizeof(span[0]); i++) {
        struct trace_event ev = {.start = span[i][0],
                                 .end = span[i][1],
                                 .track = t,
                                 .op = op,
                                 .layer = l,
                                 .cmdq_id = TRACE_NO_CMDQ};
        trace_model_add_event(m, &ev);
        trace_model_finish(m);
        check(st, m, TRACE_REGION_LAYER, TRACE_REGIONS_FULL, i);
    }
    trace_regions_inc_free(st);
    trace_model_free(m);
}

/* A state given another model starts over. */
Test(regions_inc, another_model_starts_over)
{
    struct grow_model a, b;
    grow_new(&a, 3);
    grow_new(&b, 4);
    for (int i = 0; i < 200; i++)
        grow_step(&a), grow_step(&b);
    struct trace_regions_inc *st = trace_regions_inc_new(TRACE_REGION_LAUNCH, TRACE_REGIONS_FULL);
    check(st, a.m, TRACE_REGION_LAUNCH, TRACE_REGIONS_FULL, 0);
    check(st, b.m, TRACE_REGION_LAUNCH, TRACE_REGIONS_FULL, 1);
    check(st, a.m, TRACE_REGION_LAUNCH, TRACE_REGIONS_FULL, 2);
    trace_regions_inc_free(st);
    trace_model_free(a.m);
    trace_model_free(b.m);
}

static void instances_eq(const struct trace_instances *a, const struct trace_instances *b,
                         uint64_t step)
{
    cr_assert(a->nlayers == b->nlayers && a->per_token == b->per_token, "step %llu",
              (unsigned long long)step);
    for (size_t i = 0; i < a->nlayers; i++) {
        const struct trace_layer_insts *x = &a->layers[i], *y = &b->layers[i];
        cr_assert(x->n == y->n && x->sum == y->sum && x->slowest == y->slowest,
                  "step %llu layer %zu: %zu instances, not %zu", (unsigned long long)step, i, x->n,
                  y->n);
        for (size_t k = 0; k < x->n; k++)
            cr_assert(x->v[k].start == y->v[k].start && x->v[k].end == y->v[k].end &&
                          x->v[k].token == y->v[k].token,
                      "step %llu layer %zu instance %zu", (unsigned long long)step, i, k);
    }
}

static void check_instances(struct trace_instances_inc *st, const struct trace_model *m,
                            uint64_t step)
{
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    struct trace_instances a, b;
    trace_instances_inc_update(st, rs, &a);
    trace_instances_compute(rs, &b);
    instances_eq(&a, &b, step);
    trace_instances_fini(&a);
    trace_instances_fini(&b);
    trace_regions_free(rs);
}

Test(regions_inc, layer_instances_equal_from_scratch_at_every_step)
{
    struct grow_model g;
    grow_new(&g, 99);
    struct trace_instances_inc *st = trace_instances_inc_new();
    for (uint64_t step = 0; step < 700; step++) {
        check_instances(st, g.m, step);
        grow_step(&g);
    }
    for (size_t k = 0; k < g.nopen; k++)
        trace_model_end_event(g.m, g.open[k], g.now);
    trace_model_finish(g.m);
    check_instances(st, g.m, 700);
    trace_instances_inc_free(st);
    trace_model_free(g.m);
}

/* A token that starts before the end of one known (prefill tokens sharing a span) moves ops
 * already placed: the state starts over and stays equal. */
Test(regions_inc, layer_instances_when_a_token_starts_early)
{
    struct grow_model g;
    grow_new(&g, 5);
    struct trace_instances_inc *st = trace_instances_inc_new();
    for (uint64_t step = 0; step < 120; step++) {
        check_instances(st, g.m, step);
        grow_step(&g);
        if (step == 60 || step == 90) {
            trace_model_add_token(
                g.m, &(struct trace_token){.start = 5, .end = g.now / 2, .token_index = 100});
            trace_model_finish(g.m);
        }
    }
    trace_instances_inc_free(st);
    trace_model_free(g.m);
}

/* An op recorded far later than any before it, over cycles whose busy intervals the state had
 * already summed up: the state starts over, and the answer stays the same. */
Test(regions_inc, an_op_recorded_very_late)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint32_t l = trace_model_intern(m, "L0", 2), op = trace_model_intern(m, "gemm", 4);
    struct trace_regions_inc *st = trace_regions_inc_new(TRACE_REGION_LAYER, TRACE_REGIONS_FULL);
    for (uint64_t i = 0; i < 2000; i++) {
        struct trace_event ev = {.start = 20 * i,
                                 .end = 20 * i + 10,
                                 .track = t,
                                 .op = op,
                                 .layer = l,
                                 .cmdq_id = TRACE_NO_CMDQ};
        trace_model_add_event(m, &ev);
        if (i % 100 == 99) {
            trace_model_finish(m);
            check(st, m, TRACE_REGION_LAYER, TRACE_REGIONS_FULL, i);
        }
    }
    struct trace_event late = {
        .start = 5, .end = 65, .track = t, .op = op, .layer = l, .cmdq_id = TRACE_NO_CMDQ};
    trace_model_add_event(m, &late);
    trace_model_finish(m);
    check(st, m, TRACE_REGION_LAYER, TRACE_REGIONS_FULL, 2000);
    trace_regions_inc_free(st);
    trace_model_free(m);
}
