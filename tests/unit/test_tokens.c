/* Per-token figures (trace/analysis/tokens.h) on hand-made models: latencies, bytes within each
 * token's span from transfers, memory accesses and samples, KV-cache bytes. */
#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/analysis/tokens.h"

#include <criterion/criterion.h>
#include <string.h>

static void token(struct trace_model *m, bool decode, int64_t index, uint64_t s, uint64_t e)
{
    trace_model_add_token(
        m, &(struct trace_token){.start = s, .end = e, .token_index = index, .decode = decode});
}

static void transfer(struct trace_model *m, uint32_t track, uint64_t s, uint64_t e, uint64_t bytes,
                     uint32_t flags)
{
    struct trace_event ev = {.start = s, .end = e, .track = track, .cmdq_id = TRACE_NO_CMDQ};
    ev.op = trace_model_intern(m, "dma_read", 8);
    uint64_t i = trace_model_add_event(m, &ev);
    trace_model_add_transfer(
        m, &(struct trace_transfer){.bytes = bytes, .event = (uint32_t)i, .flags = flags});
}

Test(tokens, latencies_order_and_bytes_within_each_span)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    /* given out of order: decode 1, prefill 0, decode 0 */
    token(m, true, 1, 300, 400);
    token(m, false, 0, 0, 200);
    token(m, true, 0, 200, 300);
    transfer(m, d, 0, 100, 1000, 0);                 /* inside the prefill token */
    transfer(m, d, 150, 250, 800, TRACE_XFER_WRITE); /* half in prefill, half in decode 0 */
    transfer(m, d, 250, 350, 600, TRACE_XFER_KV);    /* half in decode 0, half in decode 1 */
    transfer(m, d, 390, 390, 64, TRACE_XFER_KV | TRACE_XFER_WRITE); /* length 0, decode 1 */
    transfer(m, d, 400, 500, 5000, 0);                              /* after every token */
    trace_model_finish(m);
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    cr_assert_eq(p.n, 3);
    cr_assert_eq(p.nprefill, 1);
    cr_assert_eq(p.ndecode, 2);
    cr_assert_eq(p.source, TRACE_DRAM_TRANSFERS);
    cr_assert(p.has_kv);
    const struct trace_token_row *r = p.rows;
    cr_assert(!r[0].decode && r[1].decode && r[2].decode);
    cr_assert_eq(r[1].index, 0);
    cr_assert_eq(r[2].index, 1);
    cr_assert_eq(r[0].token, 1, "the model's second TOKEN_EVENT");
    cr_assert_eq(r[0].latency, 200);
    cr_assert_eq(r[0].read_bytes, 1000);
    cr_assert_eq(r[0].write_bytes, 400);
    cr_assert_eq(r[1].read_bytes, 300);
    cr_assert_eq(r[1].write_bytes, 400);
    cr_assert_eq(r[1].kv_read, 300);
    cr_assert_eq(r[1].kv_write, 0);
    cr_assert_eq(r[2].read_bytes, 300);
    cr_assert_eq(r[2].write_bytes, 64);
    cr_assert_eq(r[2].kv_read, 300);
    cr_assert_eq(r[2].kv_write, 64);
    cr_assert_eq(p.prefill_latency, 200);
    cr_assert_eq(p.decode_min, 100);
    cr_assert_eq(p.decode_max, 100);
    cr_assert_eq(p.decode_median, 100);
    cr_assert_float_eq(p.decode_mean, 100.0, 1e-9);
    trace_token_profile_fini(&p);
    trace_model_free(m);
}

Test(tokens, decode_statistics)
{
    struct trace_model *m = trace_model_new();
    static const uint64_t lat[] = {40, 10, 30, 20};
    uint64_t t = 0;
    for (int i = 0; i < 4; i++) {
        token(m, true, i, t, t + lat[i]);
        t += lat[i];
    }
    trace_model_finish(m);
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    cr_assert_eq(p.ndecode, 4);
    cr_assert_eq(p.nprefill, 0);
    cr_assert_eq(p.prefill_latency, 0);
    cr_assert_eq(p.decode_min, 10);
    cr_assert_eq(p.decode_max, 40);
    cr_assert_eq(p.decode_median, 20, "the lower middle one");
    cr_assert_float_eq(p.decode_mean, 25.0, 1e-9);
    cr_assert_eq(p.rows[0].latency, 40, "in token order");
    cr_assert_eq(p.source, TRACE_DRAM_NONE);
    cr_assert_eq(p.rows[3].read_bytes, 0);
    trace_token_profile_fini(&p);
    trace_model_free(m);
}

Test(tokens, bytes_from_memory_accesses_or_samples)
{
    struct trace_model *m = trace_model_new();
    token(m, true, 0, 0, 100);
    token(m, true, 1, 100, 200);
    uint32_t dram = trace_model_intern(m, "DRAM", 4);
    trace_model_add_mem_access(
        m, &(struct trace_mem_access){.cycle = 99, .bytes = 32, .mem_type = dram, .track = 0});
    trace_model_add_mem_access(
        m, &(struct trace_mem_access){.cycle = 100, .bytes = 16, .mem_type = dram, .write = true});
    trace_model_finish(m);
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    cr_assert_eq(p.source, TRACE_DRAM_MEM_EVENTS);
    cr_assert_eq(p.rows[0].read_bytes, 32);
    cr_assert_eq(p.rows[0].write_bytes, 0);
    cr_assert_eq(p.rows[1].write_bytes, 16, "an access at a token's start is the token's");
    trace_token_profile_fini(&p);
    trace_model_free(m);

    m = trace_model_new();
    token(m, true, 0, 0, 100);
    token(m, true, 1, 100, 200);
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){50, 100, 1000, 200, TRACE_NO_STR});
    /* a resource's samples (an HBM's) repeat bytes the DRAM samples count */
    uint32_t hbm = trace_model_intern(m, "sip0.cube0.hbm", 14);
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){50, 100, 1000, 200, hbm});
    trace_model_finish(m);
    trace_token_profile_compute(m, &p);
    cr_assert_eq(p.source, TRACE_DRAM_SAMPLES);
    cr_assert_eq(p.rows[0].read_bytes, 500);
    cr_assert_eq(p.rows[1].read_bytes, 500);
    cr_assert_eq(p.rows[1].write_bytes, 100);
    cr_assert(!p.has_kv);
    trace_token_profile_fini(&p);
    trace_model_free(m);
}
