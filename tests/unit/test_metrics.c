/* Summary metrics and bandwidth samples, on models whose answers are worked out by hand,
 * and the DRAM traffic rule of FORMAT.md. */
#include "trace/model/format.h"
#include "trace/analysis/metrics.h"
#include "trace/model/model.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the DRAM rule -------------------------------------------------------------------- */

/* The fields of one event: op, direction, tensor_role, src/dst space, bytes, nbytes. */
static int rule(enum trace_engine e, const char *op, const char *dir, const char *role,
                const char *src, const char *dst, int64_t bytes, int64_t nbytes,
                struct trace_transfer *x)
{
    struct trace_dram_fields f = {op, dir, role, src, dst, bytes, nbytes};
    return trace_dram_rule(e, &f, x);
}

Test(dram_rule, spec_traces_use_direction_and_bytes)
{
    struct trace_transfer x[2];
    cr_assert_eq(rule(TRACE_ENGINE_DMA, NULL, "read", NULL, NULL, NULL, 2048, -1, x), 1);
    cr_assert_eq(x[0].bytes, 2048);
    cr_assert_eq(x[0].flags, 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, NULL, "write", "kv", NULL, NULL, 64, -1, x), 1);
    cr_assert_eq(x[0].flags, TRACE_XFER_WRITE | TRACE_XFER_KV);
    /* not a DMA engine, or no usable fields: no traffic */
    cr_assert_eq(rule(TRACE_ENGINE_TE, NULL, "read", NULL, NULL, NULL, 8, -1, x), 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, NULL, "up", NULL, NULL, NULL, 8, -1, x), 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, NULL, "read", NULL, NULL, NULL, -1, -1, x), 0);
}

Test(dram_rule, op_records_by_op_name_and_spaces)
{
    struct trace_transfer x[2];
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_read", NULL, NULL, NULL, NULL, -1, 100, x), 1);
    cr_assert_eq(x[0].flags, 0, "dma_read reads HBM");
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_read", NULL, NULL, "sram", NULL, -1, 100, x), 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_write", NULL, NULL, "tcm", "hbm", -1, 7, x), 1);
    cr_assert_eq(x[0].flags, TRACE_XFER_WRITE);
    cr_assert_eq(x[0].bytes, 7);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_write", NULL, NULL, "tcm", "sram", -1, 7, x), 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "ipcq_copy", NULL, NULL, "sram", "sram", -1, 7, x), 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "ipcq_copy", NULL, NULL, "hbm", "sram", -1, 7, x), 1);
    cr_assert_eq(x[0].flags, 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "ipcq_copy", NULL, NULL, "hbm", "hbm", -1, 7, x), 2);
    cr_assert_eq(x[1].flags, TRACE_XFER_WRITE);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "gemm_f16", NULL, NULL, NULL, NULL, -1, 7, x), 0);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_read", NULL, NULL, NULL, NULL, -1, -1, x), 0,
                 "no nbytes, no traffic");
}

/* A count of bytes past what a transfer keeps (TRACE_XFER_BYTES_MAX, 2^62 - 1) is taken at
 * that, its flags as they are; one at it or below is kept as it is. */
Test(dram_rule, a_count_past_a_transfers_ceiling_is_taken_at_it)
{
    struct trace_transfer x[2];
    int64_t past = (int64_t)1 << 62; /* (its low 62 bits are 0) */
    cr_assert_eq(rule(TRACE_ENGINE_DMA, NULL, "write", "kv", NULL, NULL, past, -1, x), 1);
    cr_assert(x[0].bytes == TRACE_XFER_BYTES_MAX, "%llu", (unsigned long long)x[0].bytes);
    cr_assert(x[0].flags == (TRACE_XFER_WRITE | TRACE_XFER_KV));
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "ipcq_copy", NULL, "kv", "hbm", "hbm", -1, INT64_MAX, x),
                 2);
    cr_assert(x[0].bytes == TRACE_XFER_BYTES_MAX && x[1].bytes == TRACE_XFER_BYTES_MAX);
    cr_assert(x[0].flags == TRACE_XFER_KV && x[1].flags == (TRACE_XFER_WRITE | TRACE_XFER_KV));
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_read", NULL, NULL, NULL, NULL, -1, past - 1, x), 1);
    cr_assert(x[0].bytes == TRACE_XFER_BYTES_MAX);
    cr_assert_eq(rule(TRACE_ENGINE_DMA, "dma_read", NULL, NULL, NULL, NULL, -1, past - 2, x), 1);
    cr_assert(x[0].bytes == TRACE_XFER_BYTES_MAX - 1);
}

/* ---- metrics ----------------------------------------------------------------------------- */

static uint64_t add(struct trace_model *m, uint32_t t, uint64_t s, uint64_t e)
{
    struct trace_event ev = {.start = s, .end = e, .track = t, .cmdq_id = TRACE_NO_CMDQ};
    return trace_model_add_event(m, &ev);
}

static void xfer(struct trace_model *m, uint64_t ev, uint64_t bytes, uint32_t flags)
{
    struct trace_transfer x = {.bytes = bytes, .event = (uint32_t)ev, .flags = flags};
    trace_model_add_transfer(m, &x);
}

Test(metrics, engines_dma_and_tokens)
{
    struct trace_model *m = trace_model_new();
    uint32_t d0 = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t d1 = trace_model_track(m, "DMA 1", TRACE_ENGINE_DMA, 1);
    uint32_t t1a = trace_model_track(m, "a.pe_gemm", TRACE_ENGINE_TE, 1);
    uint32_t t0 = trace_model_track(m, "b.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t t1b = trace_model_track(m, "c.pe_gemm", TRACE_ENGINE_TE, 1);
    trace_model_track(m, "idle.pe_gemm", TRACE_ENGINE_TE, 2); /* no events: not listed */
    uint32_t v0 = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    xfer(m, add(m, d0, 0, 100), 1000, 0);
    xfer(m, add(m, d1, 50, 150), 500, TRACE_XFER_WRITE);
    xfer(m, add(m, d0, 200, 300), 300, TRACE_XFER_KV);
    add(m, d1, 300, 400); /* touches the previous one: never 2 at once */
    add(m, t0, 0, 500);
    add(m, t1a, 0, 10);
    add(m, t1b, 5, 20); /* same engine id: the union counts, 20 cycles */
    add(m, v0, 100, 150);
    struct trace_token tk[4] = {{0, 100, 0, false, NULL},
                                {100, 250, 1, false, NULL},
                                {250, 300, 0, true, NULL},
                                {300, 420, 1, true, NULL}};
    for (int i = 0; i < 4; i++)
        trace_model_add_token(m, &tk[i]);
    trace_model_finish(m);

    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    cr_assert_eq(x.cycles_total, 500);
    cr_assert_eq(x.dram_read, 1300);
    cr_assert_eq(x.dram_write, 500);
    cr_assert_eq(x.dram_source, TRACE_DRAM_TRANSFERS);
    cr_assert(x.has_dma);
    cr_assert_eq(x.dma_active, 350); /* [0,150) + [200,400) */
    cr_assert_float_eq(x.dma_util, 0.7, 1e-12);
    cr_assert_eq(x.dma_max_concurrent, 2);
    cr_assert_eq(x.nte, 2);
    cr_assert_eq(x.te[0].id, 0);
    cr_assert_eq(x.te[0].active, 500);
    cr_assert_float_eq(x.te[0].util, 1.0, 1e-12);
    cr_assert_eq(x.te[1].id, 1);
    cr_assert_eq(x.te[1].active, 20);
    cr_assert_eq(x.nve, 1);
    cr_assert_eq(x.ve[0].active, 50);
    cr_assert(x.has_kv);
    cr_assert_eq(x.kv_read, 300);
    cr_assert_eq(x.kv_write, 0);
    cr_assert_eq(x.prefill_latency, 250);
    cr_assert_float_eq(x.avg_decode_latency, 85.0, 1e-12);

    struct sim_value *v = trace_metrics_to_value(&x);
    cr_assert_eq(sim_value_get_int(v, "cycles_total", 0), 500);
    cr_assert_eq(sim_value_get_int(sim_value_map_get(v, "dma"), "max_concurrent_transfers", 0), 2);
    const struct sim_value *pe = sim_value_map_get(sim_value_map_get(v, "te"), "per_engine");
    cr_assert_eq(pe->u.list.len, 2);
    cr_assert_eq(sim_value_get_int(pe->u.list.items[1], "active_cycles", 0), 20);
    cr_assert_eq(sim_value_get_int(sim_value_map_get(v, "kv_cache"), "bytes_read", 0), 300);
    cr_assert_eq(sim_value_get_int(sim_value_map_get(v, "tokens"), "prefill_latency_cycles", 0),
                 250);
    sim_value_free(v);
    trace_metrics_fini(&x);
    trace_model_free(m);
}

Test(metrics, blocks_that_do_not_apply_are_left_out)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    add(m, t, 10, 20);
    trace_model_finish(m);
    struct sim_value *v = trace_metrics_summary(m);
    cr_assert_eq(v->u.map.len, 4, "cycles_total, dram_bytes_read, dram_bytes_write, te");
    cr_assert_null(sim_value_map_get(v, "dma"));
    cr_assert_null(sim_value_map_get(v, "kv_cache"));
    cr_assert_null(sim_value_map_get(v, "tokens"));
    sim_value_free(v);
    trace_model_free(m);
}

Test(metrics, an_inflight_transfer_counts_until_now)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    struct trace_event e = {.start = 0, .track = d, .flags = TRACE_EV_INFLIGHT};
    e.op = trace_model_intern(m, "dma_read", 8);
    uint64_t i = trace_model_add_event(m, &e);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "nbytes", 100);
    trace_model_set_details_take(m, i, p);
    trace_model_set_now(m, 50);
    trace_model_finish(m);
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    cr_assert_eq(x.cycles_total, 50);
    cr_assert_eq(x.dma_active, 50);
    cr_assert_eq(x.dram_read, 100);
    trace_metrics_fini(&x);
    struct trace_bw_sample *s;
    size_t n = trace_metrics_bandwidth(m, 10, &s);
    cr_assert_eq(n, 5, "spread over [0, now)");
    cr_assert_eq(s[0].read_bytes, 20);
    free(s);
    trace_model_free(m);
}

/* ---- busy time and peak in any event order ----------------------------------------------- */

struct bspan {
    uint64_t s, e;
};

static int cmp_bspan(const void *a, const void *b)
{
    const struct bspan *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* The measure of the union of v[0..n) and the most of them covering one cycle, by brute
 * force: every cycle of the (small) time range counted. */
static void brute(const struct bspan *v, size_t n, uint64_t tmax, uint64_t *active, uint64_t *peak)
{
    uint32_t *cover = calloc(tmax + 1, sizeof(*cover));
    for (size_t i = 0; i < n; i++)
        for (uint64_t t = v[i].s; t < v[i].e; t++)
            cover[t]++;
    *active = *peak = 0;
    for (uint64_t t = 0; t <= tmax; t++) {
        *active += cover[t] > 0;
        *peak = cover[t] > *peak ? cover[t] : *peak;
    }
    free(cover);
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/*
 * The same events added in three orders: nearly by start (a few places out, as traces come),
 * far out of order (blocks swapped) and backwards. Busy time per kind and the DMA peak are
 * the brute force's every time, with more events than a few of the sweep's chunks, empty
 * spans and events of other kinds among them.
 */
Test(metrics, busy_time_and_peak_in_any_event_order)
{
    enum { N = 150000, KINDS = 3, TRACKS = 3 };
    static const enum trace_engine eng[KINDS] = {TRACE_ENGINE_DMA, TRACE_ENGINE_TE,
                                                 TRACE_ENGINE_VE};
    struct bspan *ev = malloc(N * sizeof(*ev)), *per[KINDS];
    uint32_t *kind = malloc(N * sizeof(*kind)), *order = malloc(N * sizeof(*order));
    size_t nper[KINDS] = {0};
    uint64_t seed = 7, t = 0, tmax = 0;
    for (int k = 0; k < KINDS; k++)
        per[k] = malloc(N * sizeof(*per[k]));
    for (size_t i = 0; i < N; i++) {
        t += lcg(&seed) % 40; /* gaps between the spans of a kind, and overlaps */
        uint64_t len = lcg(&seed) % 5 == 0 ? 0 : lcg(&seed) % 40; /* some empty */
        ev[i] = (struct bspan){t, t + len};
        kind[i] = (uint32_t)(lcg(&seed) % (KINDS * TRACKS + 1)); /* the last: a host track */
        if (kind[i] < KINDS * TRACKS)
            per[kind[i] / TRACKS][nper[kind[i] / TRACKS]++] = ev[i];
        tmax = t + len > tmax ? t + len : tmax;
    }
    uint64_t want_active[KINDS], want_peak[KINDS];
    for (int k = 0; k < KINDS; k++) {
        qsort(per[k], nper[k], sizeof(*per[k]), cmp_bspan);
        brute(per[k], nper[k], tmax, &want_active[k], &want_peak[k]);
    }
    for (int o = 0; o < 3; o++) {
        for (uint32_t i = 0; i < N; i++)
            order[i] = o == 2 ? N - 1 - i : i;
        if (o == 0) /* neighbours swapped here and there */
            for (uint32_t i = 0; i + 1 < N; i += 2 + lcg(&seed) % 5) {
                uint32_t x = order[i];
                order[i] = order[i + 1], order[i + 1] = x;
            }
        if (o == 1) /* the second quarter after the third */
            for (uint32_t i = N / 4; i < N / 2; i++) {
                uint32_t x = order[i];
                order[i] = order[i + N / 4], order[i + N / 4] = x;
            }
        struct trace_model *m = trace_model_new();
        uint32_t tr[KINDS * TRACKS + 1];
        for (int k = 0; k < KINDS * TRACKS; k++) {
            char name[16];
            snprintf(name, sizeof(name), "e%d", k);
            tr[k] = trace_model_track(m, name, eng[k / TRACKS], k % TRACKS);
        }
        tr[KINDS * TRACKS] = trace_model_track(m, "host", TRACE_ENGINE_HOST, 0);
        for (uint32_t i = 0; i < N; i++)
            add(m, tr[kind[order[i]]], ev[order[i]].s, ev[order[i]].e);
        trace_model_finish(m);
        struct trace_metrics x;
        trace_metrics_compute(m, &x);
        cr_assert_eq(x.dma_active, want_active[0], "order %d: DMA busy %llu, want %llu", o,
                     (unsigned long long)x.dma_active, (unsigned long long)want_active[0]);
        cr_assert_eq(x.dma_max_concurrent, want_peak[0], "order %d: DMA peak %llu, want %llu", o,
                     (unsigned long long)x.dma_max_concurrent, (unsigned long long)want_peak[0]);
        cr_assert_eq(x.te_active, want_active[1], "order %d: TE busy", o);
        cr_assert_eq(x.ve_active, want_active[2], "order %d: VE busy", o);
        trace_metrics_fini(&x);
        trace_model_free(m);
    }
    for (int k = 0; k < KINDS; k++)
        free(per[k]);
    free(ev);
    free(kind);
    free(order);
}

/* ---- bandwidth --------------------------------------------------------------------------- */

Test(bandwidth, bytes_are_shared_by_overlap_and_add_up_exactly)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    xfer(m, add(m, d, 0, 3), 1000, 0);                /* 333, 333, 334 */
    xfer(m, add(m, d, 10, 10), 64, TRACE_XFER_WRITE); /* zero length: all in window 10 */
    trace_model_finish(m);
    struct trace_bw_sample *s;
    size_t n = trace_metrics_bandwidth(m, 1, &s);
    cr_assert_eq(n, 4);
    uint64_t want[3] = {333, 333, 334};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(s[i].cycle, (uint64_t)i);
        cr_assert_eq(s[i].window, 1);
        cr_assert_eq(s[i].read_bytes, want[i]);
        cr_assert_eq(s[i].write_bytes, 0);
    }
    cr_assert_eq(s[3].cycle, 10, "empty windows are left out");
    cr_assert_eq(s[3].write_bytes, 64);
    free(s);
    trace_model_free(m);
}

Test(bandwidth, random_transfers_sum_to_the_summary)
{
    unsigned seed = 31;
    for (int round = 0; round < 30; round++) {
        struct trace_model *m = trace_model_new();
        uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
        for (int i = 0; i < 200; i++) {
            uint64_t s = (uint64_t)rand_r(&seed) % 100000;
            uint64_t e = s + (uint64_t)rand_r(&seed) % 5000;
            xfer(m, add(m, d, s, e), (uint64_t)rand_r(&seed) % 1000000,
                 rand_r(&seed) % 2 ? TRACE_XFER_WRITE : 0);
        }
        trace_model_finish(m);
        uint64_t w = 1 + (uint64_t)rand_r(&seed) % 3000;
        struct trace_bw_sample *s;
        size_t n = trace_metrics_bandwidth(m, w, &s);
        struct trace_metrics x;
        trace_metrics_compute(m, &x);
        uint64_t rd = 0, wr = 0;
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(s[i].window, w);
            cr_assert_eq(s[i].cycle % w, 0);
            cr_assert(i == 0 || s[i].cycle > s[i - 1].cycle);
            cr_assert(s[i].read_bytes || s[i].write_bytes);
            rd += s[i].read_bytes, wr += s[i].write_bytes;
        }
        cr_assert_eq(rd, x.dram_read);
        cr_assert_eq(wr, x.dram_write);
        trace_metrics_fini(&x);
        free(s);
        trace_model_free(m);
    }
}

Test(bandwidth, an_enormous_span_widens_the_window)
{
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    xfer(m, add(m, d, 0, 1ull << 50), 12345, 0);
    xfer(m, add(m, d, 1ull << 52, (1ull << 52) + 1), 5, 0);
    trace_model_finish(m);
    struct trace_bw_sample *s;
    size_t n = trace_metrics_bandwidth(m, 1, &s);
    cr_assert_gt(n, 0);
    cr_assert_leq(n, (1u << 21) + 1);
    uint64_t rd = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_geq(s[i].window, (1ull << 52) >> 21);
        rd += s[i].read_bytes;
    }
    cr_assert_eq(rd, 12350);
    free(s);
    trace_model_free(m);
}

Test(bandwidth, without_transfers_dram_accesses_then_file_samples_count)
{
    struct trace_model *m = trace_model_new();
    uint32_t dram = trace_model_intern(m, "DRAM", 4), spm = trace_model_intern(m, "SPM", 3);
    struct trace_mem_access a[3] = {{.cycle = 5, .bytes = 32, .mem_type = dram},
                                    {.cycle = 1030, .bytes = 64, .mem_type = dram, .write = true},
                                    {.cycle = 7, .bytes = 999, .mem_type = spm}};
    for (int i = 0; i < 3; i++)
        trace_model_add_mem_access(m, &a[i]);
    trace_model_finish(m);
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    cr_assert_eq(x.dram_source, TRACE_DRAM_MEM_EVENTS);
    cr_assert_eq(x.dram_read, 32, "SPM accesses are not DRAM traffic");
    cr_assert_eq(x.dram_write, 64);
    trace_metrics_fini(&x);
    struct trace_bw_sample *s;
    size_t n = trace_metrics_bandwidth(m, 1024, &s);
    cr_assert_eq(n, 2);
    cr_assert_eq(s[1].cycle, 1024);
    cr_assert_eq(s[1].write_bytes, 64);
    free(s);
    trace_model_free(m);

    m = trace_model_new();
    struct trace_bw_sample fs[2] = {{0, 64, 10, 1, TRACE_NO_STR}, {128, 64, 5, 2, TRACE_NO_STR}};
    trace_model_add_bw_sample(m, &fs[0]);
    trace_model_add_bw_sample(m, &fs[1]);
    trace_model_finish(m);
    trace_metrics_compute(m, &x);
    cr_assert_eq(x.dram_source, TRACE_DRAM_SAMPLES);
    cr_assert_eq(x.dram_read, 15);
    cr_assert_eq(x.dram_write, 3);
    trace_metrics_fini(&x);
    n = trace_metrics_bandwidth(m, 1024, &s);
    cr_assert_eq(n, 2, "the file's samples as they are");
    cr_assert_eq(memcmp(s, fs, sizeof(fs)), 0);
    free(s);
    trace_model_free(m);
}

/* The figures with a progress to check (the summary pane's worker, which waits there while
 * hidden behind a pane that computes): the same as without, the checks counted; cancelled,
 * none (and nothing left to free but what fini frees). */
Test(metrics, checked_as_they_go_the_same_figures_and_a_cancel_stops_them)
{
    enum { N = 3 * TRACE_PROGRESS_EVERY + 17 };
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t te = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint64_t seed = 5;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t s = 10 * i, e = s + 1 + lcg(&seed) % 30;
        uint64_t ev = add(m, i % 3 ? d : te, s, e);
        if (i % 3)
            xfer(m, ev, 64 + lcg(&seed) % 4096, i % 2 ? TRACE_XFER_WRITE : 0);
    }
    trace_model_finish(m);
    struct trace_metrics a, b;
    trace_metrics_compute(m, &a);
    struct trace_progress p = {0};
    cr_assert(trace_metrics_compute_at(m, &b, &p));
    cr_expect_eq(atomic_load(&p.total), (uint64_t)N, "its step counts the events");
    unsigned long long last = atomic_load(&p.done);
    cr_expect_eq(last, 3 * TRACE_PROGRESS_EVERY, "checked every %d events: the last at %llu",
                 (int)TRACE_PROGRESS_EVERY, last);
    cr_expect(a.dma_active == b.dma_active && a.dma_max_concurrent == b.dma_max_concurrent &&
                  a.te_active == b.te_active && a.dram_read == b.dram_read &&
                  a.dram_write == b.dram_write && a.nte == b.nte &&
                  a.cycles_total == b.cycles_total,
              "the same figures");
    struct trace_bw_sample *sa, *sb;
    size_t na = trace_metrics_bandwidth(m, 0, &sa);
    size_t nb = trace_metrics_bandwidth_at(m, 0, &sb, &p);
    cr_assert_gt(na, 1);
    cr_assert_eq(na, nb);
    for (size_t i = 0; i < na; i++)
        cr_expect(sa[i].cycle == sb[i].cycle && sa[i].window == sb[i].window &&
                      sa[i].read_bytes == sb[i].read_bytes &&
                      sa[i].write_bytes == sb[i].write_bytes,
                  "sample %zu the same", i);
    free(sa), free(sb);
    trace_metrics_fini(&a);
    trace_metrics_fini(&b);
    atomic_store(&p.cancel, true);
    cr_expect_not(trace_metrics_compute_at(m, &b, &p), "cancelled: no figures");
    trace_metrics_fini(&b);
    cr_expect_eq(trace_metrics_bandwidth_at(m, 0, &sb, &p), 0, "cancelled: no samples");
    cr_expect_null(sb);
    trace_model_free(m);
}

/* A run that gives way to the user's (the first frame's summary while a key's analysis runs)
 * waits at its first check, before its first pass over the model's millions of transfers,
 * for the figures and for the bandwidth alike, and goes on, the same, once nothing holds it. */
struct held_run {
    const struct trace_model *m;
    struct trace_progress p;
    bool bandwidth, ok;
    size_t n;
    struct trace_metrics x;
    struct trace_bw_sample *s;
};

static void *held_main(void *arg)
{
    struct held_run *h = arg;
    if (h->bandwidth)
        h->n = trace_metrics_bandwidth_at(h->m, 0, &h->s, &h->p);
    else
        h->ok = trace_metrics_compute_at(h->m, &h->x, &h->p);
    return NULL;
}

Test(metrics, a_run_giving_way_waits_before_its_first_pass_over_the_transfers)
{
    enum { N = 2 * TRACE_PROGRESS_EVERY + 5 };
    struct trace_model *m = trace_model_new();
    uint32_t d = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    for (uint64_t i = 0; i < N; i++)
        xfer(m, add(m, d, 10 * i, 10 * i + 7), 256, i % 2 ? TRACE_XFER_WRITE : 0);
    trace_model_finish(m);
    struct trace_metrics want;
    trace_metrics_compute(m, &want);
    struct trace_bw_sample *ws;
    size_t wn = trace_metrics_bandwidth(m, 0, &ws);
    for (int bw = 0; bw < 2; bw++) {
        atomic_uint users = 1; /* a run of the user's under way */
        struct held_run h = {.m = m, .bandwidth = bw};
        atomic_store(&h.p.yielding, true);
        h.p.yield_to = &users;
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, held_main, &h), 0);
        nanosleep(&(struct timespec){0, 30 * 1000 * 1000}, NULL);
        const char *at = atomic_load(&h.p.what);
        cr_expect(at && strcmp(at, bw ? "the bandwidth: its windows" : "the DRAM traffic") == 0,
                  "held at its first pass (%s), not after it", at ? at : "no step");
        cr_expect_eq(atomic_load(&h.p.done), 0, "at its first check");
        atomic_store(&users, 0); /* the user's run ended */
        pthread_join(th, NULL);
        if (bw) {
            cr_assert_eq(h.n, wn, "the same samples");
            for (size_t i = 0; i < wn; i++)
                cr_expect(h.s[i].read_bytes == ws[i].read_bytes &&
                              h.s[i].write_bytes == ws[i].write_bytes,
                          "sample %zu", i);
            free(h.s);
        } else {
            cr_assert(h.ok);
            cr_expect(h.x.dram_read == want.dram_read && h.x.dram_write == want.dram_write &&
                          h.x.dma_active == want.dma_active,
                      "the same figures");
            trace_metrics_fini(&h.x);
        }
    }
    free(ws);
    trace_metrics_fini(&want);
    trace_model_free(m);
}
