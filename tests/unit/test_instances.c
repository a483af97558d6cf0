/*
 * Layer instances (trace/analysis/instances.h): a layer's ops within each token's span, the
 * sum of their spans and the slowest, against hand-computed values.
 */
#include "trace/analysis/instances.h"

#include <criterion/criterion.h>
#include <string.h>

static void op(struct trace_model *m, uint32_t track, const char *layer, uint64_t s, uint64_t e)
{
    struct trace_event ev = {.start = s, .end = e, .track = track, .cmdq_id = 1};
    ev.op = trace_model_intern(m, "dma_read", 8);
    ev.layer = trace_model_intern(m, layer, strlen(layer));
    trace_model_add_event(m, &ev);
}

static void token(struct trace_model *m, uint64_t s, uint64_t e, int64_t i, bool decode)
{
    trace_model_add_token(
        m, &(struct trace_token){.start = s, .end = e, .token_index = i, .decode = decode});
}

/* Three tokens, each passing layer0 then layer1: a layer spans the whole run, its
 * instances only their own part. */
Test(instances, a_layer_every_token_passes_is_the_sum_of_its_instances)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint64_t len0[3] = {10, 30, 20}, len1[3] = {5, 5, 7}, at = 0;
    for (int k = 0; k < 3; k++) {
        uint64_t s = at;
        op(m, t, "layer0", at, at + len0[k] / 2);
        op(m, t, "layer0", at + len0[k] / 2, at + len0[k]);
        at += len0[k];
        op(m, t, "layer1", at, at + len1[k]);
        at += len1[k] + 100; /* something else between tokens */
        token(m, s, at, k, k > 0);
    }
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    struct trace_instances in;
    trace_instances_compute(rs, &in);
    cr_assert(in.per_token);
    cr_assert_eq(in.nlayers, 2);
    const struct trace_layer_insts *l0 = &in.layers[0], *l1 = &in.layers[1];
    cr_assert_eq(l0->n, 3);
    cr_assert_eq(
        l0->sum, 60, "10 + 30 + 20, not the whole span %llu",
        (unsigned long long)(trace_regions_get(rs, 0)->end - trace_regions_get(rs, 0)->start));
    cr_assert_eq(l0->slowest, 1, "the second token's instance is the slowest");
    cr_assert_eq(l0->v[1].token, 1);
    cr_assert_eq(l1->sum, 17);
    cr_assert_eq(l1->slowest, 2);
    trace_instances_fini(&in);
    trace_regions_free(rs);
    trace_model_free(m);
}

/* Without tokens a layer is one instance: its whole span. */
Test(instances, without_tokens_one_instance_the_whole_span)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    op(m, t, "layer0", 5, 10);
    op(m, t, "layer0", 50, 70);
    trace_model_finish(m);
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    struct trace_instances in;
    trace_instances_compute(rs, &in);
    cr_assert(!in.per_token);
    cr_assert_eq(in.layers[0].n, 1);
    cr_assert_eq(in.layers[0].sum, 65);
    trace_instances_fini(&in);
    trace_regions_free(rs);
    trace_model_free(m);
}
