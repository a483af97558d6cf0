/*
 * Helpers shared by the TUI's headless tests: a UTF-8 locale, small hand-built trace
 * models, and golden files. A golden file (tests/data/tui/NAME.txt) is the expected dump
 * of a canvas; `make golden` rewrites them all (NPUSCOPE_UPDATE_GOLDEN=1) so the change
 * can be read in git diff before it is committed.
 */
#ifndef TEST_TUI_UTIL_H
#define TEST_TUI_UTIL_H

#include "sim/util/escape.h"
#include "sim/data/value.h"
#include "sim/util/xalloc.h"
#include "trace/model/model.h"
#include "tui/term/canvas.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void tui_test_locale(void)
{
    cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"), "the C.UTF-8 locale is needed");
}

/* Append an ENGINE_EVENT [s, e) named op of kind k on track t; returns its index. */
static inline uint64_t tui_test_event(struct trace_model *m, uint32_t t, const char *op,
                                      enum trace_op_kind k, uint64_t s, uint64_t e)
{
    struct trace_event ev = {.start = s, .end = e, .track = t, .cmdq_id = TRACE_NO_CMDQ};
    ev.op = trace_model_intern(m, op, strlen(op));
    ev.op_kind = (uint8_t)k;
    return trace_model_add_event(m, &ev);
}

/*
 * The small trace the golden tests draw: two PEs of one cube, over cycles [0, 1000) at
 * 1 GHz, with a marker, three tokens and two bandwidth samples. Chosen so that at 20
 * cycles per column every feature lands on known columns (see the tests). Three ops carry
 * ADR-0052 params: a dma_read of 4096 bytes at hbm 0x1000, a gemm reading tcm 0x0 and
 * 0x100 into tcm 0x200, a dma_write of 2048 bytes from tcm 0x200 to hbm 0x8000.
 */
static inline struct trace_model *tui_test_model(void)
{
    struct trace_model *m = trace_model_new();
    uint32_t dma0 = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t gemm0 = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t dma1 = trace_model_track(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, 1);
    uint32_t math1 = trace_model_track(m, "sip0.cube0.pe1.pe_math", TRACE_ENGINE_VE, 0);
    uint64_t rd = tui_test_event(m, dma0, "dma_read", TRACE_KIND_MEMORY, 0, 100);
    tui_test_event(m, dma0, "dma_read", TRACE_KIND_MEMORY, 100, 200);
    uint64_t gemm = tui_test_event(m, gemm0, "gemm_f16", TRACE_KIND_GEMM, 200, 500);
    uint64_t wr = tui_test_event(m, dma0, "dma_write", TRACE_KIND_MEMORY, 510, 600);
    /* ADR-0052 D3 params: a read of HBM, a GEMM in TCM, a write of its result to HBM */
    struct sim_value *d = sim_value_map();
    sim_value_map_set_int(d, "src_addr", 0x1000);
    sim_value_map_set_int(d, "nbytes", 4096);
    sim_value_map_set_str(d, "handle_id", "h0");
    trace_model_set_details_take(m, rd, d);
    d = sim_value_map();
    sim_value_map_set_int(d, "src_a_addr", 0x0);
    sim_value_map_set_int(d, "src_b_addr", 0x100);
    sim_value_map_set_int(d, "dst_addr", 0x200);
    int64_t sq[2] = {16, 16};
    sim_value_map_set_take(d, "shape_a", sim_value_int_list(sq, 2));
    sim_value_map_set_take(d, "shape_b", sim_value_int_list(sq, 2));
    sim_value_map_set_take(d, "shape_out", sim_value_int_list(sq, 2));
    sim_value_map_set_str(d, "dtype_in", "f16");
    sim_value_map_set_str(d, "dtype_out", "f32");
    sim_value_map_set_int(d, "m", 16);
    sim_value_map_set_int(d, "k", 16);
    sim_value_map_set_int(d, "n", 16);
    sim_value_map_set_str(d, "src_a_space", "tcm");
    sim_value_map_set_str(d, "src_b_space", "tcm");
    sim_value_map_set_str(d, "dst_space", "tcm");
    trace_model_set_details_take(m, gemm, d);
    d = sim_value_map();
    sim_value_map_set_str(d, "src_space", "tcm");
    sim_value_map_set_int(d, "src_addr", 0x200);
    int64_t sh[2] = {16, 32};
    sim_value_map_set_take(d, "shape", sim_value_int_list(sh, 2));
    sim_value_map_set_str(d, "dtype", "f32");
    sim_value_map_set_str(d, "dst_space", "hbm");
    sim_value_map_set_int(d, "dst_addr", 0x8000);
    sim_value_map_set_int(d, "nbytes", 2048);
    sim_value_map_set_str(d, "handle_id", "h1");
    trace_model_set_details_take(m, wr, d);
    tui_test_event(m, dma1, "dma_read", TRACE_KIND_MEMORY, 0, 50);
    tui_test_event(m, dma1, "dma_read", TRACE_KIND_MEMORY, 60, 110);
    for (uint64_t t = 300; t < 400; t += 10)
        tui_test_event(m, math1, t % 20 ? "add" : "exp", TRACE_KIND_MATH, t, t + 5);
    tui_test_event(m, math1, "exp", TRACE_KIND_MATH, 800, 1000);
    struct trace_marker mk = {.cycle = 700, .track = UINT32_MAX};
    mk.name = trace_model_intern(m, "PREFILL_DONE", 12);
    trace_model_add_marker(m, &mk);
    trace_model_add_token(m, &(struct trace_token){.start = 0, .end = 400, .token_index = 0});
    trace_model_add_token(
        m, &(struct trace_token){.start = 400, .end = 700, .token_index = 0, .decode = true});
    trace_model_add_token(
        m, &(struct trace_token){.start = 700, .end = 1000, .token_index = 1, .decode = true});
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){0, 100, 6400, 0, TRACE_NO_STR});
    trace_model_add_bw_sample(m, &(struct trace_bw_sample){500, 100, 0, 3200, TRACE_NO_STR});
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.0);
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_int(mem, "dram_peak_bw_bytes_per_cycle", 64);
    trace_model_set_config_take(m, cfg);
    struct sim_value *meta = sim_value_map();
    sim_value_map_set_str(meta, "run_id", "run_001");
    sim_value_map_set_str(meta, "model_name", "TinyLLM");
    trace_model_set_metadata_take(m, meta);
    trace_model_finish(m);
    return m;
}

/* Compare a canvas dump with tests/data/tui/NAME.txt, or rewrite the file when
 * NPUSCOPE_UPDATE_GOLDEN is set. */
static inline void tui_test_golden(const char *name, const char *actual)
{
    char path[256];
    snprintf(path, sizeof(path), "tests/data/tui/%s.txt", name);
    if (getenv("NPUSCOPE_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "cannot write %s", path);
        fputs(actual, f);
        fclose(f);
        return;
    }
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "missing golden file %s (make golden writes it)", path);
    char *want = sim_xmalloc(1 << 20);
    size_t n = fread(want, 1, (1 << 20) - 1, f);
    want[n] = '\0';
    fclose(f);
    cr_expect_str_eq(actual, want, "%s differs from the golden file:\n--- got\n%s--- want\n%s",
                     path, actual, want);
    free(want);
}

/* The glyph at (x, y) as UTF-8, for spot checks. */
static inline const char *tui_test_glyph(const struct tui_canvas *c, int x, int y)
{
    static char buf[8];
    const struct tui_cell *cell = tui_canvas_cell(c, x, y);
    cr_assert_not_null(cell);
    buf[sim_utf8_encode(cell->cp, buf)] = '\0';
    return buf;
}

#endif
