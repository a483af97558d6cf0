/*
 * The token profile of a growing model kept up to date (trace/analysis/tokens.h,
 * trace_token_inc_update): at every step of a model that grows as a live run does (transfers
 * ending out of order, one in flight for long, tokens appended as they end), the profile
 * equals the one computed from scratch; also for a model without tokens or transfers, a token
 * that starts where the sweep has passed, and another model.
 */
#include "test_grow.h"
#include "trace/analysis/tokens.h"

#include <criterion/criterion.h>

static void profile_eq(const struct trace_token_profile *a, const struct trace_token_profile *b,
                       uint64_t step)
{
    cr_assert(a->n == b->n && a->nprefill == b->nprefill && a->ndecode == b->ndecode,
              "step %llu: %zu tokens, not %zu", (unsigned long long)step, a->n, b->n);
    cr_assert(a->source == b->source && a->has_kv == b->has_kv, "step %llu",
              (unsigned long long)step);
    cr_assert(a->prefill_latency == b->prefill_latency && a->decode_min == b->decode_min &&
                  a->decode_max == b->decode_max && a->decode_median == b->decode_median &&
                  a->decode_mean == b->decode_mean,
              "step %llu", (unsigned long long)step);
    for (size_t i = 0; i < a->n; i++) {
        const struct trace_token_row *x = &a->rows[i], *y = &b->rows[i];
        cr_assert(x->token == y->token && x->decode == y->decode && x->index == y->index &&
                      x->start == y->start && x->end == y->end && x->latency == y->latency,
                  "step %llu row %zu", (unsigned long long)step, i);
        cr_assert(x->read_bytes == y->read_bytes && x->write_bytes == y->write_bytes &&
                      x->kv_read == y->kv_read && x->kv_write == y->kv_write,
                  "step %llu row %zu: read %llu not %llu, write %llu not %llu",
                  (unsigned long long)step, i, (unsigned long long)x->read_bytes,
                  (unsigned long long)y->read_bytes, (unsigned long long)x->write_bytes,
                  (unsigned long long)y->write_bytes);
    }
}

static void check(struct trace_token_inc *st, const struct trace_model *m, uint64_t step)
{
    struct trace_token_profile a, b;
    trace_token_inc_update(st, m, NULL, &a);
    trace_token_profile_compute(m, &b);
    profile_eq(&a, &b, step);
    trace_token_profile_fini(&a);
    trace_token_profile_fini(&b);
}

Test(tokens_inc, equals_from_scratch_at_every_step_of_a_growing_model)
{
    struct grow_model g;
    grow_new(&g, 11);
    struct trace_token_inc *st = trace_token_inc_new();
    uint64_t bytes = 0;
    for (uint64_t step = 0; step < 900; step++) {
        check(st, g.m, step);
        grow_step(&g);
    }
    for (size_t k = 0; k < g.nopen; k++)
        trace_model_end_event(g.m, g.open[k], g.now);
    trace_model_finish(g.m);
    check(st, g.m, 900);
    struct trace_token_profile p;
    trace_token_profile_compute(g.m, &p);
    for (size_t i = 0; i < p.n; i++)
        bytes += p.rows[i].read_bytes;
    cr_assert_gt(p.n, 40);
    cr_assert_gt(bytes, 0, "the tokens see traffic");
    trace_token_profile_fini(&p);
    trace_token_inc_free(st);
    trace_model_free(g.m);
}

/* Tokens that start where the sweep has passed (prefill tokens all from cycle 0, added late);
 * then a model without transfers; then another model. */
Test(tokens_inc, odd_tokens_and_models)
{
    struct grow_model g, h;
    grow_new(&g, 12);
    grow_new(&h, 13);
    struct trace_token_inc *st = trace_token_inc_new();
    check(st, h.m, 0); /* empty */
    for (uint64_t step = 0; step < 200; step++) {
        check(st, g.m, step);
        grow_step(&g);
        if (step == 100 || step == 150) {
            trace_model_add_token(g.m, &(struct trace_token){.start = 0, .end = g.now / 3});
            trace_model_finish(g.m);
        }
    }
    struct trace_model *bare = trace_model_new();
    uint32_t t = trace_model_track(bare, "TE", TRACE_ENGINE_TE, 0);
    trace_model_add_event(bare, &(struct trace_event){.start = 0, .end = 10, .track = t});
    trace_model_add_token(bare, &(struct trace_token){.start = 0, .end = 20});
    trace_model_finish(bare);
    check(st, bare, 0);
    for (uint64_t step = 0; step < 100; step++) {
        check(st, h.m, step);
        grow_step(&h);
    }
    trace_token_inc_free(st);
    trace_model_free(bare);
    trace_model_free(g.m);
    trace_model_free(h.m);
}

/* Transfers on a coarse grid of cycles, started in order but of any length: many start
 * where others start or end, some last no time, some are KV; the tokens' bytes, from the
 * breakpoints sorted as starts and ends apart and taken in the order they were made on a
 * tie, are those of the growing sweep (which sorts them whole, its own way), to the last
 * byte, at every step. */
Test(tokens_inc, ties_of_cycles_in_the_order_made)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t rd = trace_model_intern(m, "dma_read", 8);
    for (uint64_t t = 0; t < 40; t++)
        trace_model_add_token(m, &(struct trace_token){.start = 800 * t + 4 * (t & 1),
                                                       .end = 800 * t + 803,
                                                       .token_index = t,
                                                       .decode = t > 0});
    struct trace_token_inc *st = trace_token_inc_new();
    uint64_t x = 7, s = 0;
    for (int i = 0; i < 20011; i++) { /* (a prime) */
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        s += (x >> 60) % 3 == 0 ? 8 : 0;
        uint64_t len = (x >> 20) % 5 * 8;
        struct trace_event ev = {.start = s,
                                 .end = s + len,
                                 .track = dma,
                                 .op = rd,
                                 .layer = TRACE_NO_STR,
                                 .tile = TRACE_NO_STR,
                                 .cmdq_id = 1};
        uint64_t e = trace_model_add_event(m, &ev);
        uint32_t flags = ((x >> 40) & 1 ? TRACE_XFER_WRITE : 0) | (i % 3 ? 0 : TRACE_XFER_KV);
        trace_model_add_transfer(m, &(struct trace_transfer){.bytes = 1 + (x >> 45) % 777,
                                                             .event = (uint32_t)e,
                                                             .flags = flags});
        if (i % 2500 == 2499)
            check(st, m, (uint64_t)i);
    }
    trace_model_finish(m);
    check(st, m, 20011);
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    uint64_t kv = 0, wr = 0;
    for (size_t i = 0; i < p.n; i++)
        kv += p.rows[i].kv_read + p.rows[i].kv_write, wr += p.rows[i].write_bytes;
    cr_assert(p.has_kv && kv > 0 && wr > 0, "KV %llu, written %llu", (unsigned long long)kv,
              (unsigned long long)wr);
    trace_token_profile_fini(&p);
    trace_token_inc_free(st);
    trace_model_free(m);
}
