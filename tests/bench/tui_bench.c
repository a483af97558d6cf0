/*
 * Frame render time of the TUI on a large trace, without a terminal: the whole screen
 * (header, Gantt, summary, details) rendered into a canvas, as the main loop does after a
 * key press. Generated models of 1 M and 10 M events on 64 tracks; fit-all and deep-zoom frames;
 * the first frame (app created: rows, metrics); medians of several runs. The baseline is
 * the same frames on a 10 k-event model in the same run: the ratio shows how frame time
 * grows with the trace (the busy-time index makes a cell a few binary searches).
 */
#include "median.h"
#include "tui/app/app.h"
#include "tui/term/keymap.h"
#include "tui/source/source.h"
#include "tui/term/view.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 200, H = 60, RUNS = 21 };

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n events spread over 64 tracks (sip0.cubeC.peP.{pe_cpu,pe_dma,pe_gemm,pe_math}), each
 * track a run of ops of 20-200 cycles with gaps of 0-100. */
static struct trace_model *generate(uint64_t n)
{
    static const char *const kinds[4] = {"pe_cpu", "pe_dma", "pe_gemm", "pe_math"};
    static const char *const ops[4] = {"cpu_op", "dma_read", "gemm_f16", "exp"};
    static const enum trace_engine engines[4] = {TRACE_ENGINE_OTHER, TRACE_ENGINE_DMA,
                                                 TRACE_ENGINE_TE, TRACE_ENGINE_VE};
    static const enum trace_op_kind opk[4] = {TRACE_KIND_UNKNOWN, TRACE_KIND_MEMORY,
                                              TRACE_KIND_GEMM, TRACE_KIND_MATH};
    struct trace_model *m = trace_model_new();
    uint32_t tracks[64], opids[4];
    for (int i = 0; i < 64; i++) {
        char name[64];
        snprintf(name, sizeof(name), "sip0.cube%d.pe%d.%s", i / 16, i / 4 % 4, kinds[i % 4]);
        tracks[i] = trace_model_track(m, name, engines[i % 4], i / 4);
    }
    for (int k = 0; k < 4; k++)
        opids[k] = trace_model_intern(m, ops[k], strlen(ops[k]));
    uint64_t t[64] = {0};
    for (uint64_t i = 0; i < n; i++) {
        int k = (int)(i % 64);
        uint64_t gap = next_rand() % 100, len = 20 + next_rand() % 180;
        struct trace_event ev = {.start = t[k] + gap,
                                 .end = t[k] + gap + len,
                                 .track = tracks[k],
                                 .op = opids[k % 4],
                                 .op_kind = (uint8_t)opk[k % 4],
                                 .cmdq_id = TRACE_NO_CMDQ};
        t[k] = ev.end;
        trace_model_add_event(m, &ev);
    }
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.5);
    trace_model_set_config_take(m, cfg);
    trace_model_finish(m);
    return m;
}

struct figures {
    double first, fit, zoom;
};

/* Render frames of a model: the first one, then RUNS after a key each at fit-all, then
 * RUNS after a pan at deep zoom. Times in ms. */
static struct figures measure(uint64_t nevents)
{
    struct figures f;
    struct trace_model *m = generate(nevents);
    struct tui_source *src = tui_source_model_take(m, "generated.json");
    uint64_t t0 = tui_now_ns();
    struct tui_app *a = tui_app_new(src, W, H, true, NULL, NULL, NULL, NULL);
    tui_app_render(a);
    f.first = (double)(tui_now_ns() - t0) / 1e6;
    double v[RUNS];
    for (int i = 0; i < RUNS; i++) {
        uint64_t s = tui_now_ns();
        tui_app_key(a, 'f'); /* fit all: the Gantt is drawn again */
        tui_app_render(a);
        v[i] = (double)(tui_now_ns() - s) / 1e6;
    }
    f.fit = bench_median(v, (size_t)RUNS);
    for (int i = 0; i < 16; i++) /* 2^16 times closer: a few hundred cycles across */
        tui_app_key(a, '+');
    tui_app_render(a);
    for (int i = 0; i < RUNS; i++) {
        uint64_t s = tui_now_ns();
        tui_app_key(a, i % 2 ? 'h' : 'l'); /* pan */
        tui_app_render(a);
        v[i] = (double)(tui_now_ns() - s) / 1e6;
    }
    f.zoom = bench_median(v, (size_t)RUNS);
    tui_app_free(a);
    tui_source_free(src);
    return f;
}

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    struct figures base = measure(10000);
    struct figures big = measure(1000000);
    struct figures huge = measure(10000000);
    printf("tui frame render, %dx%d canvas, 64 tracks, medians of %d frames\n", W, H, RUNS);
    printf("  %-34s %10s %10s %8s %10s %8s\n", "", "10k events", "1M events", "ratio", "10M events",
           "ratio");
    printf("  %-34s %7.2f ms %7.2f ms %7.1fx %7.2f ms %7.1fx\n", "first frame (rows, metrics, all)",
           base.first, big.first, big.first / base.first, huge.first, huge.first / base.first);
    printf("  %-34s %7.2f ms %7.2f ms %7.1fx %7.2f ms %7.1fx\n", "fit all (f, Gantt redrawn)",
           base.fit, big.fit, big.fit / base.fit, huge.fit, huge.fit / base.fit);
    printf("  %-34s %7.2f ms %7.2f ms %7.1fx %7.2f ms %7.1fx\n", "deep zoom (pan, Gantt redrawn)",
           base.zoom, big.zoom, big.zoom / base.zoom, huge.zoom, huge.zoom / base.zoom);
    printf("  a key press must redraw within a frame (33 ms) at 10M events: %s\n",
           huge.fit < 33 && huge.zoom < 33 ? "yes" : "NO");
    return 0;
}
