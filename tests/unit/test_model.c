/* The trace model: interning, tracks, sorted per-track indexes, seek, busy time (checked
 * against a cycle-by-cycle brute force, for loaded and live models), details, time range. */
#include "sim/chip/oppack.h"
#include "trace/model/format.h"
#include "trace/model/model.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t add(struct trace_model *m, uint32_t track, uint64_t s, uint64_t e)
{
    struct trace_event ev = {.start = s, .end = e, .track = track, .cmdq_id = TRACE_NO_CMDQ};
    ev.op = trace_model_intern(m, "op", 2);
    return trace_model_add_event(m, &ev);
}

Test(model, event_record_is_48_bytes)
{
    cr_assert_eq(sizeof(struct trace_event), 48);
}

Test(model, interning_gives_one_id_per_distinct_string)
{
    struct trace_model *m = trace_model_new();
    uint32_t a = trace_model_intern(m, "dma_read", 8);
    uint32_t b = trace_model_intern(m, "dma_write", 9);
    cr_assert_neq(a, TRACE_NO_STR);
    cr_assert_neq(a, b);
    cr_assert_eq(trace_model_intern(m, "dma_read!", 8), a); /* only len bytes count */
    cr_assert_str_eq(trace_model_str(m, b), "dma_write");
    cr_assert_eq(trace_model_str_len(m, b), 9);
    uint32_t z = trace_model_intern(m, "a\0b", 3);
    cr_assert_neq(z, trace_model_intern(m, "a", 1));
    cr_assert_eq(trace_model_str_len(m, z), 3);
    cr_assert_eq(memcmp(trace_model_str(m, z), "a\0b", 4), 0);
    cr_assert_str_eq(trace_model_str(m, TRACE_NO_STR), "");
    trace_model_free(m);
}

Test(model, interned_strings_survive_growth)
{
    struct trace_model *m = trace_model_new();
    enum { N = 50000 };
    static uint32_t ids[N];
    static const char *ptr[N];
    char buf[64];
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof(buf), "layer_%d_tile_%d", i / 64, i % 64);
        ids[i] = trace_model_intern(m, buf, (size_t)n);
        ptr[i] = trace_model_str(m, ids[i]);
    }
    /* a long string takes its own chunk and does not disturb the others */
    static char big[20000];
    memset(big, 'x', sizeof(big));
    uint32_t bid = trace_model_intern(m, big, sizeof(big));
    for (int i = 0; i < N; i++) {
        int n = snprintf(buf, sizeof(buf), "layer_%d_tile_%d", i / 64, i % 64);
        cr_assert_eq(trace_model_intern(m, buf, (size_t)n), ids[i]);
        cr_assert_eq(trace_model_str(m, ids[i]), ptr[i], "a string moved");
        cr_assert_str_eq(ptr[i], buf);
    }
    cr_assert_eq(trace_model_str_len(m, bid), sizeof(big));
    trace_model_free(m);
}

Test(model, a_track_is_found_by_name)
{
    struct trace_model *m = trace_model_new();
    uint32_t a = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t b = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    cr_assert_neq(a, b);
    for (int i = 0; i < 200; i++) { /* force the track table to grow */
        char name[32];
        snprintf(name, sizeof(name), "t%d", i);
        trace_model_track(m, name, TRACE_ENGINE_OTHER, i);
    }
    cr_assert_eq(trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0), a);
    cr_assert_eq(trace_model_track_count(m), 202);
    const struct trace_track *t = trace_model_track_get(m, b);
    cr_assert_str_eq(trace_model_str(m, t->name), "sip0.cube0.pe0.pe_gemm");
    cr_assert_eq(t->engine, TRACE_ENGINE_TE);
    cr_assert_eq(t->engine_id, 0);
    trace_model_free(m);
}

Test(model, track_events_are_sorted_by_start_then_arrival)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t u = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint64_t e0 = add(m, t, 50, 60);
    uint64_t e1 = add(m, u, 0, 5);
    uint64_t e2 = add(m, t, 10, 20);
    uint64_t e3 = add(m, t, 50, 55);
    uint64_t e4 = add(m, t, 0, 100);
    trace_model_finish(m);
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, t, &idx);
    cr_assert_eq(n, 4);
    cr_assert_eq(idx[0], e4);
    cr_assert_eq(idx[1], e2);
    cr_assert_eq(idx[2], e0); /* same start as e3, added first */
    cr_assert_eq(idx[3], e3);
    n = trace_model_track_events(m, u, &idx);
    cr_assert_eq(n, 1);
    cr_assert_eq(idx[0], e1);
    cr_assert_eq(trace_model_event_count(m), 5);
    cr_assert_eq(trace_model_event(m, e2)->start, 10);
    trace_model_free(m);
}

Test(model, seek_finds_the_first_event_reaching_past_t)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    add(m, t, 0, 10);
    add(m, t, 5, 100); /* long: covers everything after it */
    add(m, t, 20, 30);
    add(m, t, 200, 210);
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_seek(m, t, 0), 0);
    cr_assert_eq(trace_model_track_seek(m, t, 9), 0);
    cr_assert_eq(trace_model_track_seek(m, t, 10), 1); /* end is exclusive */
    cr_assert_eq(trace_model_track_seek(m, t, 50), 1); /* [5,100) still runs at 50 */
    cr_assert_eq(trace_model_track_seek(m, t, 100), 3);
    cr_assert_eq(trace_model_track_seek(m, t, 150), 3);
    cr_assert_eq(trace_model_track_seek(m, t, 210), 4);
    trace_model_free(m);
}

Test(model, busy_counts_overlaps_once)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    add(m, t, 0, 10);
    add(m, t, 5, 15);  /* overlaps: union [0,15) */
    add(m, t, 15, 20); /* touches: union [0,20) */
    add(m, t, 30, 40); /* separate */
    add(m, t, 32, 35); /* inside */
    add(m, t, 50, 50); /* empty */
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_busy(m, t, 0, 100), 30);
    cr_assert_eq(trace_model_track_busy(m, t, 10, 35), 15);
    cr_assert_eq(trace_model_track_busy(m, t, 20, 30), 0);
    cr_assert_eq(trace_model_track_busy(m, t, 39, 41), 1);
    cr_assert_eq(trace_model_track_busy(m, t, 41, 39), 0);
    trace_model_free(m);
}

/* ---- brute force ------------------------------------------------------------------------ */

enum { HORIZON = 600 };

struct ref_ev {
    uint64_t s, e;
    bool inflight;
};

static uint64_t ref_busy(const struct ref_ev *ev, size_t n, uint64_t now, uint64_t a, uint64_t b)
{
    static bool on[2 * HORIZON];
    memset(on, 0, sizeof(on));
    for (size_t i = 0; i < n; i++) {
        uint64_t e = ev[i].inflight ? now : ev[i].e;
        for (uint64_t c = ev[i].s; c < e && c < 2 * HORIZON; c++)
            on[c] = true;
    }
    uint64_t busy = 0;
    for (uint64_t c = a; c < b && c < 2 * HORIZON; c++)
        busy += on[c];
    return busy;
}

/* Check busy for random windows and seek for every t against the reference. */
static void check_track(struct trace_model *m, uint32_t t, const struct ref_ev *ev, size_t n,
                        uint64_t now, unsigned *seed)
{
    for (int q = 0; q < 60; q++) {
        uint64_t a = (uint64_t)rand_r(seed) % HORIZON, b = a + (uint64_t)rand_r(seed) % HORIZON;
        cr_assert_eq(trace_model_track_busy(m, t, a, b), ref_busy(ev, n, now, a, b),
                     "busy [%llu, %llu) now %llu", (unsigned long long)a, (unsigned long long)b,
                     (unsigned long long)now);
    }
    const uint32_t *idx;
    size_t len = trace_model_track_events(m, t, &idx);
    cr_assert_eq(len, n);
    for (size_t k = 1; k < len; k++)
        cr_assert(trace_model_event(m, idx[k - 1])->start <= trace_model_event(m, idx[k])->start);
    for (uint64_t x = 0; x < HORIZON + 50; x += 7) {
        size_t p = trace_model_track_seek(m, t, x);
        /* every event before p ends at or before x; the one at p ends after x */
        for (size_t k = 0; k < p; k++) {
            const struct trace_event *e = trace_model_event(m, idx[k]);
            uint64_t end = (e->flags & TRACE_EV_INFLIGHT) ? now : e->end;
            cr_assert(end <= x, "seek(%llu) = %zu skips a running event", (unsigned long long)x, p);
        }
        if (p < len) {
            const struct trace_event *e = trace_model_event(m, idx[p]);
            uint64_t end = (e->flags & TRACE_EV_INFLIGHT) ? now : e->end;
            uint64_t best = end;
            for (size_t k = 0; k <= p; k++) {
                const struct trace_event *f = trace_model_event(m, idx[k]);
                uint64_t fe = (f->flags & TRACE_EV_INFLIGHT) ? now : f->end;
                if (fe > best)
                    best = fe;
            }
            cr_assert(best > x, "seek(%llu) = %zu is too far", (unsigned long long)x, p);
        }
    }
}

Test(model, busy_and_seek_match_brute_force_for_loaded_events)
{
    unsigned seed = 12345;
    for (int round = 0; round < 20; round++) {
        struct trace_model *m = trace_model_new();
        uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
        struct ref_ev ev[80];
        size_t n = 5 + (size_t)rand_r(&seed) % 75;
        for (size_t i = 0; i < n; i++) {
            ev[i].s = (uint64_t)rand_r(&seed) % HORIZON;
            ev[i].e = ev[i].s + (uint64_t)rand_r(&seed) % (round % 2 ? 10 : 120);
            ev[i].inflight = false;
            add(m, t, ev[i].s, ev[i].e); /* any order */
        }
        trace_model_finish(m);
        check_track(m, t, ev, n, 0, &seed);
        trace_model_free(m);
    }
}

Test(model, live_incremental_finish_matches_brute_force)
{
    unsigned seed = 777;
    for (int round = 0; round < 10; round++) {
        struct trace_model *m = trace_model_new();
        uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
        struct ref_ev ev[200];
        uint64_t id[200];
        size_t n = 0;
        uint64_t now = 0;
        while (now < HORIZON - 20) {
            /* start a few ops at now (start order), end some running ones */
            int starts = rand_r(&seed) % 3;
            for (int k = 0; k < starts && n < 200; k++) {
                struct trace_event e = {.start = now, .track = t, .flags = TRACE_EV_INFLIGHT};
                id[n] = trace_model_add_event(m, &e);
                ev[n] = (struct ref_ev){now, 0, true};
                n++;
            }
            now += 1 + (uint64_t)rand_r(&seed) % 6;
            for (size_t i = 0; i < n; i++)
                if (ev[i].inflight && rand_r(&seed) % 4 == 0) {
                    /* a long-lived op ends sometimes, far behind the others */
                    trace_model_end_event(m, id[i], now);
                    ev[i].e = now, ev[i].inflight = false;
                }
            trace_model_set_now(m, now);
            if (rand_r(&seed) % 3 == 0) { /* not every step: batches of changes */
                trace_model_finish(m);
                check_track(m, t, ev, n, now, &seed);
            }
        }
        trace_model_finish(m);
        check_track(m, t, ev, n, now, &seed);
        trace_model_free(m);
    }
}

Test(model, an_inflight_event_counts_up_to_now)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    struct trace_event e = {.start = 100, .track = t, .flags = TRACE_EV_INFLIGHT};
    uint64_t i = trace_model_add_event(m, &e);
    trace_model_set_now(m, 150);
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_busy(m, t, 0, 1000), 50);
    cr_assert_eq(trace_model_track_seek(m, t, 120), 0);
    cr_assert_eq(trace_model_t_max(m), 150);
    uint64_t g = trace_model_generation(m);
    trace_model_set_now(m, 180);
    cr_assert_neq(trace_model_generation(m), g);
    cr_assert_eq(trace_model_track_busy(m, t, 0, 1000), 80);
    trace_model_end_event(m, i, 170);
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_busy(m, t, 0, 1000), 70);
    cr_assert(!(trace_model_event(m, i)->flags & TRACE_EV_INFLIGHT));
    cr_assert_eq(trace_model_event(m, i)->end, 170);
    cr_assert_eq(trace_model_track_seek(m, t, 175), 1);
    trace_model_free(m);
}

Test(model, a_track_says_where_its_first_inflight_event_starts)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t u = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    struct trace_event done = {.start = 10, .end = 40, .track = t};
    trace_model_add_event(m, &done);
    struct trace_event a = {.start = 100, .track = t, .flags = TRACE_EV_INFLIGHT};
    struct trace_event b = {.start = 120, .track = t, .flags = TRACE_EV_INFLIGHT};
    uint64_t ia = trace_model_add_event(m, &a);
    trace_model_add_event(m, &b);
    trace_model_set_now(m, 130);
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_inflight_start(m, t), 100);
    cr_assert_eq(trace_model_track_inflight_start(m, u), UINT64_MAX, "no event at all");
    trace_model_end_event(m, ia, 125);
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_inflight_start(m, t), 120);
    trace_model_free(m);
}

/* A track's op kinds are those of its events as they come, in flight or not, before a
 * finish and after; an op_kind out of range counts as unknown. */
Test(model, a_track_keeps_the_op_kinds_of_its_events)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t u = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    cr_assert_eq(trace_model_track_kinds(m, t), 0, "no event: no kind");
    trace_model_add_event(
        m, &(struct trace_event){.start = 0, .end = 5, .track = t, .op_kind = TRACE_KIND_GEMM});
    cr_assert_eq(trace_model_track_kinds(m, t), 1u << TRACE_KIND_GEMM, "before a finish");
    cr_assert_eq(trace_model_track_kinds(m, u), 0, "another track's are its own");
    trace_model_add_event(
        m, &(struct trace_event){
               .start = 5, .track = t, .op_kind = TRACE_KIND_MATH, .flags = TRACE_EV_INFLIGHT});
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_kinds(m, t), (1u << TRACE_KIND_GEMM) | (1u << TRACE_KIND_MATH),
                 "one in flight counts");
    trace_model_add_event(m, &(struct trace_event){.start = 1, .end = 2, .track = u, .op_kind = 9});
    cr_assert_eq(trace_model_track_kinds(m, u), 1u << TRACE_KIND_UNKNOWN, "out of range");
    trace_model_free(m);
}

Test(model, live_details_are_kept_and_dram_traffic_recorded)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t gemm = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    struct trace_event e = {.start = 0, .end = 10, .track = dma};
    e.op = trace_model_intern(m, "dma_write", 9);
    uint64_t i = trace_model_add_event(m, &e);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "dst_space", "hbm");
    sim_value_map_set_int(p, "nbytes", 4096);
    struct sim_value *copy = sim_value_clone(p);
    trace_model_set_details_take(m, i, p);
    struct sim_value *d = trace_model_event_details(m, i);
    cr_assert(sim_value_equal(d, copy));
    sim_value_free(d);
    sim_value_free(copy);
    cr_assert_eq(trace_model_transfer_count(m), 1);
    cr_assert_eq(trace_model_transfer(m, 0)->bytes, 4096);
    cr_assert_eq(trace_model_transfer(m, 0)->flags, TRACE_XFER_WRITE);
    cr_assert_eq(trace_model_transfer(m, 0)->event, i);
    /* setting details again replaces them and does not count the traffic twice */
    struct sim_value *p2 = sim_value_map();
    sim_value_map_set_int(p2, "nbytes", 1);
    trace_model_set_details_take(m, i, p2);
    cr_assert_eq(trace_model_transfer_count(m), 1);
    /* a GEMM is no DRAM traffic; an event without details has none */
    e.track = gemm;
    uint64_t j = trace_model_add_event(m, &e);
    cr_assert_null(trace_model_event_details(m, j));
    struct sim_value *g = sim_value_map();
    sim_value_map_set_int(g, "nbytes", 64);
    trace_model_set_details_take(m, j, g);
    cr_assert_eq(trace_model_transfer_count(m), 1);
    trace_model_free(m);
}

static int released;
static void release(void *ctx)
{
    released += *(int *)ctx;
}

Test(model, loaded_details_are_parsed_from_the_source_on_demand)
{
    static const char src[] =
        "[{\"type\":\"ENGINE_EVENT\",\"details\":{\"m\":64,\"x\":[1.5,\"s\"]}},"
        "{\"type\":\"ENGINE_EVENT\"}]";
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    struct trace_event e = {.start = 1, .end = 2, .track = t, .details = 1};
    uint64_t a = trace_model_add_event(m, &e);
    e.details = (uint64_t)(strstr(src, "},{") - src) + 2;
    uint64_t b = trace_model_add_event(m, &e);
    int one = 1;
    released = 0;
    trace_model_attach_source(m, src, sizeof(src) - 1, release, &one);
    struct sim_value *d = trace_model_event_details(m, a);
    cr_assert_not_null(d);
    cr_assert_eq(sim_value_get_int(d, "m", 0), 64);
    const struct sim_value *x = sim_value_map_get(d, "x");
    cr_assert_eq(x->type, SIM_V_LIST);
    cr_assert_eq(x->u.list.items[0]->type, SIM_V_FLOAT);
    cr_assert_str_eq(x->u.list.items[1]->u.str.s, "s");
    sim_value_free(d);
    cr_assert_null(trace_model_event_details(m, b));
    trace_model_free(m);
    cr_assert_eq(released, 1);
}

Test(model, time_range_covers_events_markers_and_tokens)
{
    struct trace_model *m = trace_model_new();
    cr_assert_eq(trace_model_t_min(m), 0);
    cr_assert_eq(trace_model_t_max(m), 0);
    uint32_t t = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    add(m, t, 1000, 1100);
    struct trace_token tok = {.start = 900, .end = 2000, .decode = true};
    trace_model_add_token(m, &tok);
    struct trace_marker mk = {
        .cycle = 2500, .name = trace_model_intern(m, "DONE", 4), .track = UINT32_MAX};
    trace_model_add_marker(m, &mk);
    cr_assert_eq(trace_model_t_min(m), 900);
    cr_assert_eq(trace_model_t_max(m), 2500);
    cr_assert_eq(trace_model_token_count(m), 1);
    cr_assert_eq(trace_model_marker_count(m), 1);
    cr_assert_str_eq(trace_model_str(m, trace_model_marker(m, 0)->name), "DONE");
    trace_model_free(m);
}

Test(model, clock_comes_from_config_snapshot)
{
    struct trace_model *m = trace_model_new();
    cr_assert_eq(trace_model_clock_ghz(m), 0);
    struct sim_value *c = sim_value_map();
    sim_value_map_set_float(c, "clock_ghz", 1.5);
    trace_model_set_config_take(m, c);
    cr_assert_eq(trace_model_clock_ghz(m), 1.5);
    c = sim_value_map();
    sim_value_map_set_int(c, "clock_ghz", 2);
    trace_model_set_config_take(m, c);
    cr_assert_eq(trace_model_clock_ghz(m), 2.0);
    c = sim_value_map();
    sim_value_map_set_int(c, "clock_ghz", -1);
    trace_model_set_config_take(m, c);
    cr_assert_eq(trace_model_clock_ghz(m), 0);
    trace_model_free(m);
}

Test(model, ignored_things_are_counted)
{
    struct trace_model *m = trace_model_new();
    trace_model_count_ignored(m, true);
    trace_model_count_ignored(m, false);
    trace_model_count_ignored(m, false);
    cr_assert_eq(trace_model_ignored_events(m), 1);
    cr_assert_eq(trace_model_ignored_fields(m), 2);
    trace_model_free(m);
}

Test(model, enum_names_round_trip)
{
    for (int i = 0; i < TRACE_ENGINE_COUNT; i++) {
        enum trace_engine e;
        cr_assert_eq(trace_engine_parse(trace_engine_name((enum trace_engine)i), &e), 0);
        cr_assert_eq((int)e, i);
    }
    for (int i = 0; i < TRACE_KIND_COUNT; i++) {
        enum trace_op_kind k;
        cr_assert_eq(trace_op_kind_parse(trace_op_kind_name((enum trace_op_kind)i), &k), 0);
        cr_assert_eq((int)k, i);
    }
    enum trace_engine e;
    cr_assert_eq(trace_engine_parse("dma", &e), -1); /* case matters, as in the spec */
    cr_assert_str_eq(trace_engine_name(TRACE_ENGINE_HOST), "HOST");
    cr_assert_str_eq(trace_op_kind_name(TRACE_KIND_GEMM), "gemm");
}

Test(model, packed_live_details_move_from_memory_to_the_spill_when_the_op_ends)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t op = trace_model_intern(m, "dma_read", 8);
    /* a dma_read's params and its replay annotations, packed as the op log does */
    struct sim_value *p = sim_value_map(), *r = sim_value_map();
    sim_value_map_set_int(p, "src_addr", 4096);
    sim_value_map_set_int(p, "nbytes", 256);
    sim_value_map_set_str(p, "handle_id", "sip0.cube0.pe0/h1");
    sim_value_map_set_str(r, "src_space", "hbm");
    sim_value_map_set_int(r, "dst_addr", 64);
    struct sim_pack b = {0};
    sim_pack_value(&b, p);
    sim_pack_value(&b, r);
    struct sim_value *want = trace_details_from_op(p, r);

    enum { N = 30000 }; /* enough to push the spill past its buffer */
    for (uint64_t i = 0; i < N; i++) {
        struct trace_event e = {
            .start = 10 * i, .track = dma, .op = op, .flags = TRACE_EV_INFLIGHT};
        uint64_t k = trace_model_add_event(m, &e);
        struct trace_transfer x = {.bytes = 256}; /* as the live feed says it, at the start */
        trace_model_set_transfers(m, k, &x, 1);
        trace_model_set_details_packed(m, k, 10.0 * (double)i, NAN, b.p, b.len);
        if (i == 0) { /* in flight: its details and start time already */
            struct sim_value *d = trace_model_event_details(m, k);
            cr_assert(sim_value_equal(d, want));
            sim_value_free(d);
            double t0, t1;
            cr_assert(trace_model_event_ns(m, k, &t0, &t1));
            cr_assert_float_eq(t0, 0.0, 1e-12);
            cr_assert(isnan(t1));
        }
        trace_model_end_event(m, k, 10 * i + 5);
        trace_model_set_details_packed(m, k, 10.0 * (double)i, 10.0 * (double)i + 4.5, b.p, b.len);
    }
    trace_model_finish(m);
    cr_assert_eq(trace_model_transfer_count(m), N, "one DRAM read per op, counted once");
    cr_assert_eq(trace_model_transfer(m, N - 1)->event, N - 1);
    for (uint64_t k = 0; k < N; k += 4999) {
        struct sim_value *d = trace_model_event_details(m, k);
        cr_assert(sim_value_equal(d, want), "event %llu", (unsigned long long)k);
        sim_value_free(d);
        double t0, t1;
        cr_assert(trace_model_event_ns(m, k, &t0, &t1));
        cr_assert_float_eq(t1 - t0, 4.5, 1e-9);
    }
    /* what stays in memory per event: the record (48 bytes), its place in its track's index
     * (a 32-bit event number), a share of a block, its transfer (12) */
    uint64_t per = trace_model_event_bytes(m) / N;
    cr_assert_leq(per, 48 + 4 + 1 + 12, "%llu bytes per event", (unsigned long long)per);
    sim_value_free(want);
    sim_value_free(p);
    sim_value_free(r);
    sim_pack_fini(&b);
    trace_model_free(m);
}

/* A loader that says how many events are coming gets arrays that never move while they
 * come (each move copies them: past the memory budget, page by page in its file), and the
 * same model as one that did not say. */
Test(model, expected_events_fill_without_moving_and_give_the_same_model)
{
    enum { N = 20000 };
    struct trace_model *a = trace_model_new(), *b = trace_model_new();
    trace_model_expect(b, N);
    uint32_t ta[2] = {trace_model_track(a, "t0", TRACE_ENGINE_DMA, 0),
                      trace_model_track(a, "t1", TRACE_ENGINE_TE, 0)};
    uint32_t tb[2] = {trace_model_track(b, "t0", TRACE_ENGINE_DMA, 0),
                      trace_model_track(b, "t1", TRACE_ENGINE_TE, 0)};
    const struct trace_event *first = NULL;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t s = (i * 7919) % 5000, e = s + 1 + i % 13;
        add(a, ta[i % 2], s, e);
        add(b, tb[i % 2], s, e);
        first = first ? first : trace_model_event(b, 0);
        cr_assert_eq(trace_model_event(b, 0), first, "moved at event %llu", (unsigned long long)i);
    }
    trace_model_finish(a);
    trace_model_finish(b);
    cr_assert_eq(trace_model_event_count(a), trace_model_event_count(b));
    cr_assert_eq(
        memcmp(trace_model_event(a, 0), trace_model_event(b, 0), N * sizeof(struct trace_event)),
        0);
    for (uint32_t k = 0; k < 2; k++) {
        const uint32_t *ia, *ib;
        size_t na = trace_model_track_events(a, k, &ia), nb = trace_model_track_events(b, k, &ib);
        cr_assert_eq(na, nb);
        cr_assert_eq(memcmp(ia, ib, na * sizeof(*ia)), 0);
        cr_assert_eq(trace_model_track_busy(a, k, 0, 6000), trace_model_track_busy(b, k, 0, 6000));
    }
    trace_model_free(a);
    trace_model_free(b);
}

/* The track's index holds its events in (start, arrival) order. */
static void assert_in_order(const struct trace_model *m, uint32_t t, size_t n)
{
    const uint32_t *idx;
    cr_assert_eq(trace_model_track_events(m, t, &idx), n);
    for (size_t k = 1; k < n; k++) {
        uint64_t a = trace_model_event(m, idx[k - 1])->start,
                 b = trace_model_event(m, idx[k])->start;
        cr_assert(a < b || (a == b && idx[k - 1] < idx[k]), "positions %zu and %zu out of order",
                  k - 1, k);
    }
}

Test(model, events_staged_ahead_of_the_finish_give_the_same_tracks)
{
    unsigned seed = 4242;
    for (int round = 0; round < 24; round++) {
        struct trace_model *m = trace_model_new();
        uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
        struct ref_ev ev[200];
        size_t n = 20 + (size_t)rand_r(&seed) % 180;
        uint64_t at = 0;
        for (size_t i = 0; i < n; i++) {
            /* mostly in start order, a few a little behind (ops that end out of order), in
             * some rounds one far behind, before what an earlier finish published */
            at += (uint64_t)rand_r(&seed) % 4;
            uint64_t s = at;
            if (rand_r(&seed) % 5 == 0)
                s = at > 6 ? at - (uint64_t)rand_r(&seed) % 6 : 0;
            if (round % 3 == 2 && rand_r(&seed) % 40 == 0)
                s = (uint64_t)rand_r(&seed) % (at + 1);
            ev[i] = (struct ref_ev){s, s + 1 + (uint64_t)rand_r(&seed) % 9, false};
            add(m, t, ev[i].s, ev[i].e);
            if (rand_r(&seed) % 7 == 0)
                trace_model_stage(m);
            if (round % 2 && rand_r(&seed) % 50 == 0) {
                trace_model_finish(m);
                assert_in_order(m, t, i + 1);
                check_track(m, t, ev, i + 1, 0, &seed);
            }
        }
        trace_model_finish(m);
        assert_in_order(m, t, n);
        check_track(m, t, ev, n, 0, &seed);
        trace_model_free(m);
    }
}

Test(model, staged_events_are_not_published_before_the_finish)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    add(m, t, 10, 20);
    trace_model_finish(m);
    add(m, t, 30, 40);
    add(m, t, 25, 28); /* a little out of order */
    trace_model_stage(m);
    const uint32_t *idx;
    cr_assert_eq(trace_model_track_events(m, t, &idx), 1, "the finish publishes, not the stage");
    trace_model_finish(m);
    cr_assert_eq(trace_model_track_events(m, t, &idx), 3);
    cr_assert_eq(idx[0], 0);
    cr_assert_eq(idx[1], 2);
    cr_assert_eq(idx[2], 1);
    trace_model_free(m);
}

Test(model, a_big_track_out_of_order_after_staging_is_sorted)
{
    /* a few events a little behind (put in place as staged), then the rest in any order:
     * the whole track sorted at the finish, equal starts in event order */
    unsigned seed = 99;
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    size_t n = 6000;
    for (size_t i = 0; i < n; i++) {
        uint64_t s = i < 3000 ? i - (i % 7 == 3) * 2 : (uint64_t)rand_r(&seed) % 500;
        add(m, t, s, s + 3);
        if (i % 500 == 499)
            trace_model_stage(m);
    }
    trace_model_finish(m);
    assert_in_order(m, t, n);
    trace_model_free(m);
}
