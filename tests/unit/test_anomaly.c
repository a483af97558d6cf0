/* Anomalies (trace/verdict/anomaly.h) on hand-made models: a planted 10x op, a long idle gap inside
 * a launch, a bandwidth window above the peak, an INVALID_TRACE marker; and what is not an
 * anomaly. */
#include "anomaly_model.h"
#include "sim/data/value.h"
#include "trace/verdict/anomaly.h"
#include "trace/model/model.h"

#include <criterion/criterion.h>
#include <string.h>

static uint64_t op(struct trace_model *m, uint32_t t, const char *name, uint64_t s, uint64_t e,
                   int32_t cmdq)
{
    struct trace_event ev = {.start = s, .end = e, .track = t, .cmdq_id = cmdq};
    ev.op = trace_model_intern(m, name, strlen(name));
    return trace_model_add_event(m, &ev);
}

static size_t count(const struct trace_anomalies *a, enum trace_anomaly_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += a->v[i].kind == k;
    return n;
}

Test(anomaly, a_planted_10x_op_is_found_and_nothing_else)
{
    struct trace_model *m = trace_model_new();
    uint32_t te = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    /* nine gemms of 100 cycles back to back, and the sixth lasts 1000 */
    uint64_t t = 0, planted = 0;
    for (int i = 0; i < 9; i++) {
        uint64_t d = i == 5 ? 1000 : 100;
        uint64_t ev = op(m, te, "gemm", t, t + d, 1);
        if (i == 5)
            planted = ev;
        t += d;
    }
    /* "gemm" on another engine kind is another distribution: 4x of its own median */
    for (int i = 0; i < 5; i++)
        op(m, ve, "gemm", 10 * (uint64_t)i, 10 * (uint64_t)i + (i == 4 ? 8 : 2), 1);
    trace_model_finish(m);
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    cr_assert_eq(a.n, 1, "%zu anomalies", a.n);
    cr_assert_eq(a.v[0].kind, TRACE_ANOMALY_SLOW_OP);
    cr_assert_eq(a.v[0].event, planted);
    cr_assert_eq(a.v[0].track, te);
    cr_assert_eq(a.v[0].start, 500);
    cr_assert_eq(a.v[0].end, 1500);
    cr_assert_float_eq(a.v[0].value, 1000, 1e-9);
    cr_assert_float_eq(a.v[0].reference, 100, 1e-9);
    cr_assert_eq(a.v[0].count, 9);
    char line[256];
    cr_assert_str_eq(trace_anomaly_describe(m, &a.v[0], line, sizeof(line)),
                     "gemm on TE 0: 1000 cycles, 10.0x the median 100 of 9 TE ops");
    cr_assert_eq(a.found[TRACE_ANOMALY_SLOW_OP], 1);
    cr_assert_eq(a.bw_peak, 0, "no config: no peak");
    trace_anomalies_fini(&a);

    /* a stricter factor finds nothing; too few ops find nothing */
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.slow_factor = 10;
    trace_anomalies_find(m, &o, &a);
    cr_assert_eq(a.n, 0, "exactly 10x is not above 10x");
    trace_anomalies_fini(&a);
    trace_anomaly_opts_default(&o);
    o.slow_min_ops = 10;
    trace_anomalies_find(m, &o, &a);
    cr_assert_eq(a.n, 0);
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

/* A host message is a span on the host's link and another on the io_cpu that serves it:
 * the link's longer spans are their own distribution, not slow io_cpu work. */
Test(anomaly, host_messages_on_the_link_and_on_the_io_cpu_apart)
{
    struct trace_model *m = trace_model_new();
    uint32_t link = trace_model_track(m, "host", TRACE_ENGINE_HOST, 0);
    uint32_t io = trace_model_track(m, "sip0.io_cpu", TRACE_ENGINE_HOST, 0);
    uint64_t t = 0, planted = 0;
    for (int i = 0; i < 8; i++) {
        op(m, link, "MemoryWrite", t, t + 758, 1);
        uint64_t d = i == 6 ? 1000 : 100;
        uint64_t ev = op(m, io, "MemoryWrite", t + 758, t + 758 + d, 1);
        if (i == 6)
            planted = ev;
        t += 758 + d;
    }
    trace_model_finish(m);
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    cr_assert_eq(a.n, 1, "%zu anomalies: the link's spans are no slow io_cpu work", a.n);
    cr_assert_eq(a.v[0].event, planted);
    cr_assert_eq(a.v[0].count, 8, "compared with the io_cpu's own 8");
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

static void nbytes(struct trace_model *m, uint64_t ev, int64_t n)
{
    struct sim_value *d = sim_value_map();
    sim_value_map_set_int(d, "nbytes", n);
    trace_model_set_details_take(m, ev, d);
}

Test(anomaly, an_op_that_did_more_work_may_take_longer)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    /* loads of 1 KiB in 100 cycles; one of 10 KiB in 1000 (as fast), one of 1 KiB in 800 */
    uint64_t t = 0, slow = 0;
    for (int i = 0; i < 8; i++, t += 2000) {
        uint64_t ev = op(m, d, "dma_read", t, t + (i == 3 ? 1000 : i == 6 ? 800 : 100), 1);
        nbytes(m, ev, i == 3 ? 10240 : 1024);
        if (i == 6)
            slow = ev;
    }
    trace_model_finish(m);
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.idle_min_cycles = UINT64_MAX;
    struct trace_anomalies a;
    trace_anomalies_find(m, &o, &a);
    cr_assert_eq(a.n, 1, "%zu anomalies", a.n);
    cr_assert_eq(a.v[0].event, slow);
    cr_assert_float_eq(a.v[0].per_work, 8.0, 1e-9);
    char line[256];
    cr_assert_str_eq(trace_anomaly_describe(m, &a.v[0], line, sizeof(line)),
                     "dma_read on DMA 0: 800 cycles, 8.0x the median 100 of 8 DMA ops (8.0x per "
                     "unit of work)");
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

Test(anomaly, a_long_gap_inside_a_launch_but_not_between_launches)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t h = trace_model_track(m, "HOST 0", TRACE_ENGINE_HOST, 0);
    /* launch 1: loads of 50 cycles with gaps of 10, one gap of 500 */
    uint64_t t = 0, after = 0;
    for (int i = 0; i < 8; i++) {
        if (i == 6)
            t += 490;
        uint64_t ev = op(m, d, "load", t, t + 50, 1);
        if (i == 6)
            after = ev;
        t += 60;
    }
    /* launch 2 starts 5000 cycles later: a gap between launches is not one */
    t += 5000;
    for (int i = 0; i < 3; i++, t += 60)
        op(m, d, "load", t, t + 50, 2);
    /* the host waits for its launches: never an anomaly */
    op(m, h, "request", 0, 10, 1);
    op(m, h, "request", 10, 20, 1);
    op(m, h, "request", 5000, 5010, 1);
    op(m, h, "request", 5010, 5020, 1);
    op(m, h, "request", 9000, 9010, 1);
    trace_model_finish(m);
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    cr_assert_eq(a.n, 1, "%zu anomalies", a.n);
    cr_assert_eq(a.v[0].kind, TRACE_ANOMALY_IDLE_GAP);
    cr_assert_eq(a.v[0].event, after);
    cr_assert_eq(a.v[0].track, d);
    cr_assert_eq(a.v[0].start, 350);
    cr_assert_eq(a.v[0].end, 850);
    cr_assert_float_eq(a.v[0].reference, 10, 1e-9);
    cr_assert_eq(a.v[0].count, 7);
    char line[256];
    cr_assert_str_eq(trace_anomaly_describe(m, &a.v[0], line, sizeof(line)),
                     "launch cmdq 1: nothing ran for 500 cycles (50.0x its median gap 10), then "
                     "load on DMA 0");
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

Test(anomaly, waiting_for_another_engine_is_no_idle_gap_a_stalled_launch_is)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t v0 = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint32_t d1 = trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    /* pe0: its VE waits 400 cycles for each load of its DMA, one cycle between them; then
     * after [4000, 6000) where nothing runs, two more rounds */
    uint64_t after = 0;
    for (uint64_t t = 0; t < 7000; t += 501) {
        if (t >= 3500 && t < 6000)
            t = 6000;
        uint64_t ev = op(m, d0, "dma_read", t, t + 400, 3);
        if (t == 6000)
            after = ev;
        op(m, v0, "exp", t + 401, t + 501, 3);
    }
    /* pe1 of the same launch idles 2000 cycles while pe0 works: waiting for it */
    op(m, d1, "dma_read", 0, 100, 3);
    op(m, d1, "dma_read", 2100, 2200, 3);
    trace_model_finish(m);
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    cr_assert_eq(a.n, 1, "%zu anomalies", a.n);
    cr_assert_eq(a.v[0].kind, TRACE_ANOMALY_IDLE_GAP);
    cr_assert_eq(a.v[0].event, after);
    cr_assert_eq(a.v[0].start, 3507);
    cr_assert_eq(a.v[0].end, 6000);
    char line[256];
    cr_assert_str_eq(trace_anomaly_describe(m, &a.v[0], line, sizeof(line)),
                     "launch cmdq 3: nothing ran for 2493 cycles (2493.0x its median gap 1), then "
                     "dma_read on sip0.cube0.pe0.pe_dma");
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

Test(anomaly, bandwidth_above_the_peak_and_invalid_markers_in_time_order)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    /* 64 bytes per cycle is the peak: 128 KiB in the window [1024, 2048) is 128 B/cycle */
    uint64_t ok = op(m, d, "dma_read", 0, 1024, TRACE_NO_CMDQ);
    uint64_t hot = op(m, d, "dma_read", 1024, 2048, TRACE_NO_CMDQ);
    trace_model_add_transfer(m, &(struct trace_transfer){.bytes = 65536, .event = (uint32_t)ok});
    trace_model_add_transfer(m, &(struct trace_transfer){.bytes = 131072, .event = (uint32_t)hot});
    struct sim_value *det = sim_value_map();
    sim_value_map_set_str(det, "error", "kernel 'k' on sip0.cube0.pe0: \x1b[31mboom");
    trace_model_add_marker(
        m, &(struct trace_marker){.cycle = 3000,
                                  .name = trace_model_intern(m, "INVALID_TRACE", 13),
                                  .track = UINT32_MAX,
                                  .details = det});
    trace_model_add_marker(m, &(struct trace_marker){.cycle = 10,
                                                     .name = trace_model_intern(m, "other", 5),
                                                     .track = UINT32_MAX});
    struct sim_value *cfg = sim_value_map();
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_int(mem, "dram_peak_bw_bytes_per_cycle", 64);
    trace_model_set_config_take(m, cfg);
    trace_model_finish(m);
    size_t first;
    cr_assert_eq(trace_invalid_markers(m, &first), 1);
    cr_assert_eq(first, 0);
    cr_assert_str_eq(trace_invalid_error(m, first), "kernel 'k' on sip0.cube0.pe0: \x1b[31mboom");
    cr_assert_null(trace_invalid_error(m, 1));
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    cr_assert_float_eq(a.bw_peak, 64, 1e-9);
    cr_assert_eq(a.n, 2);
    cr_assert_eq(a.v[0].kind, TRACE_ANOMALY_BANDWIDTH);
    cr_assert_eq(a.v[0].start, 1024);
    cr_assert_eq(a.v[0].end, 2048);
    cr_assert_float_eq(a.v[0].value, 128, 1e-9);
    cr_assert_eq(a.v[1].kind, TRACE_ANOMALY_INVALID);
    cr_assert_eq(a.v[1].start, 3000);
    cr_assert_eq(a.v[1].marker, 0);
    char line[256];
    cr_assert_str_eq(trace_anomaly_describe(m, &a.v[0], line, sizeof(line)),
                     "DRAM 128.0 bytes/cycle over [1024, 2048), 200% of the peak 64.0");
    cr_assert(strstr(trace_anomaly_describe(m, &a.v[1], line, sizeof(line)),
                     "INVALID_TRACE: kernel 'k'"));
    cr_assert_eq(count(&a, TRACE_ANOMALY_SLOW_OP), 0);
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

Test(anomaly, the_peak_from_an_npuscope_config)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 2.0);
    struct sim_value *chip = sim_value_map_set_take(cfg, "chip", sim_value_map());
    sim_value_map_set_int(chip, "sips", 2);
    sim_value_map_set_int(chip, "cubes_per_sip", 4);
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    struct sim_value *hbm = sim_value_map_set_take(mem, "hbm", sim_value_map());
    sim_value_map_set_int(hbm, "gbps", 256);
    trace_model_set_config_take(m, cfg);
    trace_model_finish(m);
    cr_assert_float_eq(trace_dram_peak(m), 256.0 * 8 / 2, 1e-9);
    trace_model_free(m);
}

Test(anomaly, many_of_a_kind_keep_the_most_severe)
{
    struct trace_model *m = trace_model_new();
    uint32_t te[3] = {trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0),
                      trace_model_track(m, "TE 1", TRACE_ENGINE_TE, 1),
                      trace_model_track(m, "TE 2", TRACE_ENGINE_TE, 2)};
    uint64_t t = 0;
    for (int i = 0; i < 20; i++, t += 10)
        op(m, te[0], "gemm", t, t + 10, 1);
    op(m, te[0], "gemm", 1000, 1100, 1);
    op(m, te[1], "gemm", 2000, 2300, 1);
    op(m, te[2], "gemm", 3000, 3200, 1);
    trace_model_finish(m);
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.max_per_kind = 2;
    o.idle_min_cycles = UINT64_MAX;
    struct trace_anomalies a;
    trace_anomalies_find(m, &o, &a);
    cr_assert_eq(a.found[TRACE_ANOMALY_SLOW_OP], 3);
    cr_assert_eq(a.n, 2);
    cr_assert_eq(a.v[0].start, 2000, "the two slowest, in time order");
    cr_assert_eq(a.v[1].start, 3000);
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

/* A slow op that recurs on its component (the same copy of every all-reduce) is one entry
 * with its count, not one per occurrence; per token when it recurs with the tokens. */
Test(anomaly, a_repeated_slow_op_is_one_entry_with_its_count)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma0 = trace_model_track(m, "pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t dma1 = trace_model_track(m, "pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    uint64_t t = 0;
    for (int tok = 0; tok < 4; tok++) {
        uint64_t t0 = t;
        for (int i = 0; i < 10; i++, t += 50) {
            op(m, dma0, "ipcq_copy", t, t + 48, 1);
            op(m, dma1, "ipcq_copy", t, t + 48, 1);
        }
        /* pe0's copy over the cube's edge: 6x the others, every token (one 2x slower) */
        op(m, dma0, "ipcq_copy", t, t + (tok == 2 ? 600 : 300), 1);
        t += 700;
        trace_model_add_token(
            m, &(struct trace_token){.start = t0, .end = t, .token_index = tok, .decode = true});
    }
    op(m, dma1, "ipcq_copy", t, t + 400, 1); /* once on pe1 */
    trace_model_finish(m);
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.idle_min_cycles = UINT64_MAX;
    struct trace_anomalies a;
    trace_anomalies_find(m, &o, &a);
    cr_assert_eq(a.n, 2, "one entry per component, not one per occurrence: %zu", a.n);
    const struct trace_anomaly *x = a.v[0].track == dma0 ? &a.v[0] : &a.v[1];
    const struct trace_anomaly *y = a.v[0].track == dma0 ? &a.v[1] : &a.v[0];
    cr_assert_eq(x->repeats, 4);
    cr_assert_eq(x->value, 600, "the slowest of them stands for them");
    cr_assert_lt(x->first, x->last);
    cr_assert_eq(y->repeats, 1);
    char buf[512];
    trace_anomaly_describe(m, x, buf, sizeof(buf));
    cr_assert(strstr(buf, "; 4 times from cycle "), "%s", buf);
    cr_assert(strstr(buf, ", once per token"), "%s", buf);
    trace_anomaly_describe(m, y, buf, sizeof(buf));
    cr_assert(!strstr(buf, "times from"), "%s", buf);
    trace_anomalies_fini(&a);
    trace_model_free(m);
}

/* The bandwidth windows found on a second thread beside the slow ops and the idle gaps (as
 * from TRACE_ANOMALY_THREAD_MIN events): the same anomalies, in the same order, as on one. */
Test(anomaly, two_threads_find_what_one_finds)
{
    struct trace_model *m = anomaly_model(997);
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.max_per_kind = 50; /* (the most severe kept of each: severities compared, ties broken) */
    struct trace_anomalies a[2];
    for (unsigned k = 0; k < 2; k++) {
        o.threads = k + 1;
        trace_anomalies_find(m, &o, &a[k]);
    }
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++) {
        cr_assert_gt(a[0].found[k], 0, "kind %d found", k);
        cr_assert_eq(a[1].found[k], a[0].found[k], "kind %d", k);
    }
    cr_assert_eq(a[1].n, a[0].n);
    cr_assert_float_eq(a[1].bw_peak, a[0].bw_peak, 1e-12);
    for (size_t i = 0; i < a[0].n; i++)
        cr_assert(anomaly_same(&a[1].v[i], &a[0].v[i]), "anomaly %zu", i);
    trace_anomalies_fini(&a[0]);
    trace_anomalies_fini(&a[1]);
    trace_model_free(m);
}

/* Cancelled, the bandwidth windows' thread stops too: nothing of theirs is found. */
Test(anomaly, cancelled_on_two_threads_both_stop)
{
    struct trace_model *m = anomaly_model(997);
    struct trace_progress pg = {0};
    atomic_store(&pg.cancel, true);
    for (unsigned k = 1; k <= 2; k++) {
        struct trace_anomaly_opts o;
        trace_anomaly_opts_default(&o);
        o.threads = k;
        o.progress = &pg;
        struct trace_anomalies a;
        trace_anomalies_find(m, &o, &a);
        cr_assert_eq(a.found[TRACE_ANOMALY_BANDWIDTH], 0, "threads %u", k);
        cr_assert_eq(a.found[TRACE_ANOMALY_SLOW_OP], 0, "threads %u", k);
        trace_anomalies_fini(&a);
    }
    trace_model_free(m);
}
