/*
 * The run's usage for the verdict (trace/verdict/runusage.h): from scratch, what the light
 * run split accounts, with ops out of start order; kept up to date over a growing model, equal
 * to it at every step while it folds the ended ops in rather than reading them again.
 */
#include "test_grow.h"
#include "trace/analysis/regions.h"
#include "trace/verdict/runusage.h"

#include <criterion/criterion.h>
#include <inttypes.h>

TestSuite(runusage);

static void usage_eq(const struct trace_usage *a, const struct trace_usage *b, bool bytes,
                     uint64_t step, int k)
{
    cr_assert_eq(a->busy, b->busy, "busy: step %" PRIu64 " kind %d", step, k);
    cr_assert_eq(a->ops, b->ops, "ops: step %" PRIu64 " kind %d", step, k);
    cr_assert_eq(a->op_cycles, b->op_cycles, "op cycles: step %" PRIu64 " kind %d", step, k);
    if (bytes) {
        cr_assert_eq(a->read_bytes, b->read_bytes, "read: step %" PRIu64, step);
        cr_assert_eq(a->write_bytes, b->write_bytes, "write: step %" PRIu64, step);
    }
}

static void region_eq(const struct trace_region *a, const struct trace_region *b, uint64_t step)
{
    cr_assert_eq(a->start, b->start, "step %" PRIu64, step);
    cr_assert_eq(a->end, b->end, "step %" PRIu64, step);
    cr_assert_str_eq(a->name, b->name);
    cr_assert_eq(a->kind, b->kind);
    usage_eq(&a->all, &b->all, true, step, -1);
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        usage_eq(&a->engine[k], &b->engine[k], false, step, k);
}

Test(runusage, from_scratch_equals_the_light_run_split)
{
    struct grow_model g;
    grow_new(&g, 51);
    for (int i = 0; i < 400; i++) {
        grow_step(&g);
        if (i % 20)
            continue;
        struct trace_regions *rs = trace_regions_new_light(g.m, TRACE_REGION_RUN, NULL);
        struct trace_region r;
        trace_run_usage(g.m, &r);
        region_eq(&r, trace_regions_get(rs, 0), g.steps);
        trace_regions_free(rs);
    }
    trace_model_free(g.m);
}

Test(runusage, kept_up_to_date_equals_from_scratch_at_every_step)
{
    for (uint64_t seed = 52; seed < 55; seed++) {
        struct grow_model g;
        grow_new(&g, seed);
        struct trace_run_usage_inc *st = trace_run_usage_inc_new();
        uint64_t folded = 0;
        int over = 0;
        for (int i = 0; i < 600; i++) {
            grow_step(&g);
            struct trace_region a, b;
            trace_run_usage_inc_update(st, g.m, &a);
            trace_run_usage(g.m, &b);
            region_eq(&a, &b, g.steps);
            folded += trace_run_usage_inc_folded(st);
            over += i > 50 && !trace_run_usage_inc_folded(st); /* started over */
        }
        /* most of the ended ops stay folded in from step to step, the state seldom starts
         * over (an op later than twice the latest so far) */
        cr_assert_gt(folded, 600 * trace_model_event_count(g.m) / 8, "folded %" PRIu64, folded);
        cr_assert_lt(over, 10, "started over %d times", over);
        trace_run_usage_inc_free(st);
        trace_model_free(g.m);
    }
}

Test(runusage, an_ended_op_recorded_very_late)
{
    struct grow_model g;
    grow_new(&g, 58);
    struct trace_run_usage_inc *st = trace_run_usage_inc_new();
    struct trace_region a, b;
    for (int i = 0; i < 300; i++) {
        grow_step(&g);
        trace_run_usage_inc_update(st, g.m, &a);
    }
    for (size_t k = 0; k < g.nopen; k++) /* every op ends: all are folded in */
        trace_model_end_event(g.m, g.open[k], g.now);
    g.nopen = 0;
    trace_model_finish(g.m);
    trace_run_usage_inc_update(st, g.m, &a);
    cr_assert_eq(trace_run_usage_inc_folded(st), trace_model_event_count(g.m));
    /* an op recorded ended, long before the others (as a served viewer may get one) */
    struct trace_event ev = {.start = 5,
                             .end = g.now / 2,
                             .track = g.track[4],
                             .op = trace_model_intern(g.m, "KernelLaunch", 12),
                             .cmdq_id = TRACE_NO_CMDQ};
    trace_model_add_event(g.m, &ev);
    trace_model_finish(g.m);
    trace_run_usage_inc_update(st, g.m, &a);
    trace_run_usage(g.m, &b);
    region_eq(&a, &b, g.steps);
    trace_run_usage_inc_free(st);
    trace_model_free(g.m);
}

Test(runusage, another_model_starts_over)
{
    struct grow_model a, b;
    grow_new(&a, 56);
    grow_new(&b, 57);
    for (int i = 0; i < 200; i++) {
        grow_step(&a);
        grow_step(&b);
    }
    struct trace_run_usage_inc *st = trace_run_usage_inc_new();
    struct trace_region x, y;
    trace_run_usage_inc_update(st, a.m, &x);
    trace_run_usage_inc_update(st, b.m, &x);
    trace_run_usage(b.m, &y);
    region_eq(&x, &y, 0);
    trace_run_usage_inc_free(st);
    trace_model_free(a.m);
    trace_model_free(b.m);
}
