/*
 * The anomalies of a growing model kept up to date (trace/verdict/anomaly.h,
 * trace_anomaly_inc_update): at every step of a model that grows as a live run does (ops ending
 * out of order, one in flight for long, ops recorded late, slow ops, long idle gaps, DRAM
 * traffic above the peak), the list equals the one found from scratch, with the default
 * options and with few kept of each kind; also for an empty model and another model.
 */
#include "test_grow.h"
#include "trace/verdict/anomaly.h"

#include <criterion/criterion.h>

static void anomalies_eq(const struct trace_anomalies *a, const struct trace_anomalies *b,
                         uint64_t step)
{
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        cr_assert_eq(a->found[k], b->found[k], "step %llu: %zu of kind %d found, not %zu",
                     (unsigned long long)step, a->found[k], k, b->found[k]);
    cr_assert_eq(a->n, b->n, "step %llu", (unsigned long long)step);
    cr_assert(a->bw_peak == b->bw_peak);
    for (size_t i = 0; i < a->n; i++) {
        const struct trace_anomaly *x = &a->v[i], *y = &b->v[i];
        cr_assert(x->kind == y->kind && x->start == y->start && x->end == y->end &&
                      x->event == y->event && x->track == y->track && x->marker == y->marker,
                  "step %llu anomaly %zu: kind %d [%llu, %llu) ev %llu, not kind %d [%llu, %llu) "
                  "ev %llu",
                  (unsigned long long)step, i, x->kind, (unsigned long long)x->start,
                  (unsigned long long)x->end, (unsigned long long)x->event, y->kind,
                  (unsigned long long)y->start, (unsigned long long)y->end,
                  (unsigned long long)y->event);
        cr_assert(x->value == y->value && x->reference == y->reference &&
                      x->per_work == y->per_work && x->count == y->count &&
                      x->repeats == y->repeats && x->first == y->first && x->last == y->last,
                  "step %llu anomaly %zu: value %g/%g reference %g/%g count %llu/%llu",
                  (unsigned long long)step, i, x->value, y->value, x->reference, y->reference,
                  (unsigned long long)x->count, (unsigned long long)y->count);
    }
}

static void check(struct trace_anomaly_inc *st, const struct trace_model *m,
                  const struct trace_anomaly_opts *o, uint64_t step)
{
    struct trace_anomalies a, b;
    trace_anomaly_inc_update(st, m, NULL, &a);
    trace_anomalies_find(m, o, &b);
    anomalies_eq(&a, &b, step);
    trace_anomalies_fini(&a);
    trace_anomalies_fini(&b);
}

/* A peak low enough that some windows of the growing model's DMA traffic exceed it. */
static void low_peak(struct trace_model *m)
{
    struct sim_value *cfg = sim_value_map();
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_float(mem, "dram_peak_bw_bytes_per_cycle", 2.0);
    trace_model_set_config_take(m, cfg);
}

Test(anomaly_inc, equals_from_scratch_at_every_step_of_a_growing_model)
{
    struct grow_model g;
    grow_new(&g, 31);
    low_peak(g.m);
    struct trace_anomaly_opts dflt, few;
    trace_anomaly_opts_default(&dflt);
    trace_anomaly_opts_default(&few);
    few.max_per_kind = 3;
    struct trace_anomaly_inc *a = trace_anomaly_inc_new(NULL), *b = trace_anomaly_inc_new(&few);
    size_t seen[TRACE_ANOMALY_KIND_COUNT] = {0};
    for (uint64_t step = 0; step < 900; step++) {
        check(a, g.m, &dflt, step);
        check(b, g.m, &few, step);
        grow_step(&g);
    }
    for (size_t k = 0; k < g.nopen; k++)
        trace_model_end_event(g.m, g.open[k], g.now);
    trace_model_finish(g.m);
    check(a, g.m, &dflt, 900);
    struct trace_anomalies r;
    trace_anomalies_find(g.m, NULL, &r);
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        seen[k] = r.found[k];
    trace_anomalies_fini(&r);
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        cr_assert_gt(seen[k], 0, "the model has anomalies of kind %d", k);
    trace_anomaly_inc_free(a);
    trace_anomaly_inc_free(b);
    trace_model_free(g.m);
}

Test(anomaly_inc, an_empty_model_then_another_model)
{
    struct grow_model g, h;
    grow_new(&g, 32);
    grow_new(&h, 33);
    low_peak(h.m);
    struct trace_anomaly_inc *st = trace_anomaly_inc_new(NULL);
    check(st, g.m, NULL, 0);
    for (uint64_t step = 0; step < 150; step++) {
        check(st, g.m, NULL, step);
        grow_step(&g);
        grow_step(&h);
    }
    for (uint64_t step = 0; step < 150; step++) {
        check(st, h.m, NULL, step);
        grow_step(&h);
    }
    trace_anomaly_inc_free(st);
    trace_model_free(g.m);
    trace_model_free(h.m);
}
