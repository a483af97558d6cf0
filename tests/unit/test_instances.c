/*
 * Layer instances (trace/analysis/instances.h): a layer's ops within each token's span, the
 * sum of their spans and the slowest, against hand-computed values.
 */
#include "trace/analysis/instances.h"

#include <criterion/criterion.h>
#include <stdlib.h>
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

/* The instance cell of op start c by the rule instances.h states, found directly: among the
 * tokens sorted by start (then index), the last starting at or before c, when c lies in its
 * span or is its start; else none (SIZE_MAX). */
static size_t token_of(const struct trace_token *const *sorted, size_t n, uint64_t c)
{
    size_t lo = 0;
    while (lo < n && sorted[lo]->start <= c)
        lo++;
    if (!lo)
        return SIZE_MAX;
    const struct trace_token *t = sorted[lo - 1];
    return c < t->end || t->start == c ? lo - 1 : SIZE_MAX;
}

static int cmp_tok(const void *a, const void *b)
{
    const struct trace_token *x = *(const struct trace_token *const *)a,
                             *y = *(const struct trace_token *const *)b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->token_index < y->token_index ? -1 : x->token_index > y->token_index;
}

/* Tokens with gaps, overlaps, equal starts and empty spans; ops mostly in time order (as a
 * run records them) with jumps back and forward and ops before the first token and after
 * the last: every layer's instances as the rule gives them op by op. */
Test(instances, ops_in_and_out_of_time_order_against_the_rule_op_by_op)
{
    for (unsigned seed = 1; seed <= 40; seed++) {
        srand(seed);
        struct trace_model *m = trace_model_new();
        uint32_t t = trace_model_track(m, "pe0.pe_dma", TRACE_ENGINE_DMA, 0);
        size_t nt = 1 + (size_t)rand() % 23;
        uint64_t at = 50;
        for (size_t k = 0; k < nt; k++) {
            uint64_t len = (uint64_t)(rand() % 4 == 0 ? 0 : 1 + rand() % 40);
            token(m, at, at + len, (int64_t)k, k > 0);
            int r = rand() % 6; /* the next start: after a gap, at the end, inside, the same */
            at = r == 0 ? at + len + 7 : r == 1 ? at : r == 2 && len ? at + len / 2 : at + len;
        }
        static const char *const layers[] = {"layer0", "layer1", "layer2"};
        uint64_t c = 0;
        for (int i = 0; i < 600; i++) {
            int r = rand() % 10;
            c = r == 0 ? (uint64_t)(rand() % (int)(at + 80)) : c + (uint64_t)(rand() % 5);
            op(m, t, layers[rand() % 3], c, c + (uint64_t)(rand() % 9));
        }
        trace_model_finish(m);
        const struct trace_token **sorted = calloc(nt, sizeof(*sorted));
        for (size_t k = 0; k < nt; k++)
            sorted[k] = trace_model_token(m, k);
        qsort(sorted, nt, sizeof(*sorted), cmp_tok);
        struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
        size_t nl = trace_regions_count(rs);
        /* the reference: per (region, sorted token), the first start and the last end */
        uint64_t *lo = calloc(nl * nt, sizeof(*lo)), *hi = calloc(nl * nt, sizeof(*hi));
        for (size_t i = 0; i < nl * nt; i++)
            lo[i] = UINT64_MAX;
        for (uint64_t e = 0; e < trace_model_event_count(m); e++) {
            const struct trace_event *ev = trace_model_event(m, e);
            size_t r = trace_regions_of_event(rs, e), k = token_of(sorted, nt, ev->start);
            if (r == SIZE_MAX || k == SIZE_MAX)
                continue;
            uint64_t end = ev->end > ev->start ? ev->end : ev->start;
            lo[r * nt + k] = ev->start < lo[r * nt + k] ? ev->start : lo[r * nt + k];
            hi[r * nt + k] = end > hi[r * nt + k] ? end : hi[r * nt + k];
        }
        struct trace_instances in;
        trace_instances_compute(rs, &in);
        cr_assert(in.per_token);
        for (size_t r = 0; r < nl; r++) {
            const struct trace_layer_insts *L = &in.layers[r];
            size_t n = 0;
            for (size_t k = 0; k < nt; k++) {
                if (lo[r * nt + k] == UINT64_MAX)
                    continue;
                cr_assert_lt(n, L->n, "seed %u layer %zu: too few instances", seed, r);
                cr_assert_eq(L->v[n].start, lo[r * nt + k], "seed %u layer %zu token %zu", seed, r,
                             k);
                cr_assert_eq(L->v[n].end, hi[r * nt + k], "seed %u layer %zu token %zu", seed, r,
                             k);
                cr_assert(trace_model_token(m, L->v[n].token) == sorted[k],
                          "seed %u layer %zu: the instance of token %zu", seed, r, k);
                n++;
            }
            cr_assert_eq(n, L->n, "seed %u layer %zu: %zu instances, not %zu", seed, r, L->n, n);
        }
        trace_instances_fini(&in);
        free(lo);
        free(hi);
        free(sorted);
        trace_regions_free(rs);
        trace_model_free(m);
    }
}
