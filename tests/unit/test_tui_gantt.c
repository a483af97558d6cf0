/*
 * The Gantt pane, headless: what the cells show for known events (full blocks, bar edges,
 * shades for scattered work), the ruler, bands, grouping and folding, zoom and pan around
 * the cursor, selection, next op, search, filters, and hostile names.
 */
#include "test_tui_util.h"
#include "tui/gantt/gantt.h"

TestSuite(tui_gantt, .init = tui_test_locale);

/* A Gantt over a model, drawn into a canvas of w x h. */
struct fixture {
    struct trace_model *m;
    struct tui_view v;
    struct tui_gantt *g;
    struct tui_canvas *c;
};

static void setup(struct fixture *f, struct trace_model *m, int w, int h, bool unicode)
{
    f->m = m;
    tui_view_init(&f->v, m, unicode);
    f->g = tui_gantt_new(&f->v);
    f->c = tui_canvas_new(w, h, unicode);
}

static void draw(struct fixture *f)
{
    tui_gantt_ops.sync(f->g, &f->v);
    tui_gantt_ops.render(f->g, f->c, (struct tui_rect){0, 0, f->c->w, f->c->h}, &f->v, true);
}

static enum tui_result act(struct fixture *f, enum tui_action a)
{
    enum tui_result r = tui_gantt_ops.action(f->g, a, &f->v);
    draw(f);
    return r;
}

static void teardown(struct fixture *f)
{
    tui_canvas_free(f->c);
    tui_gantt_free(f->g);
    trace_model_free(f->m);
}

static char *line(const struct tui_canvas *c, int y)
{
    static char buf[1024];
    char *d = tui_canvas_dump(c, false);
    char *p = d;
    for (int i = 0; i < y; i++)
        p = strchr(p, '\n') + 1;
    size_t n = strcspn(p, "\n");
    snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
    free(d);
    return buf;
}

/* Row y of the canvas whose label contains text, or -1. */
static int row_of(const struct tui_canvas *c, const char *text)
{
    for (int y = 0; y < c->h; y++) {
        char *l = line(c, y);
        if (strstr(l, text))
            return y;
    }
    return -1;
}

/*
 * The fixture model at 63 columns: labels take 12 columns ("▾ sip0.cube0"), a separator
 * one, so 50 columns show [0, 1000): 20 cycles per column, column i = [20i, 20i + 20).
 */
enum { W = 63, PX = 13 };

Test(tui_gantt, fit_all_golden)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    char *d = tui_canvas_dump(f.c, true);
    tui_test_golden("gantt_fit", d);
    free(d);
    teardown(&f);
}

Test(tui_gantt, cells_show_how_busy_each_column_is)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    cr_assert_str_eq(line(f.c, 0), " Gantt  20 cyc/col (fit)");
    /* rows in tree order under the merged group "sip0.cube0" */
    int y_grp = row_of(f.c, "sip0.cube0"), y_pe0 = row_of(f.c, "pe0"), y_pe1 = row_of(f.c, "pe1");
    cr_assert_eq(y_grp, 6);
    cr_assert_eq(y_pe0, 7);
    cr_assert_eq(y_pe1, 10);
    int dma0 = 8, gemm0 = 9, dma1 = 11, math1 = 12;
    cr_assert(strstr(line(f.c, dma0), "pe_dma"));
    cr_assert(strstr(line(f.c, gemm0), "pe_gemm"));
    cr_assert(strstr(line(f.c, math1), "pe_math"));
    /* pe1.pe_dma: [0,50) and [60,110): columns 0,1 full; column 2 = [40,60) busy 10 of
     * 20 from its left edge: a half block; columns 3,4 full; column 5 = [100,120): half */
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 0, dma1), "\u2588");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 1, dma1), "\u2588");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 2, dma1), "\u258c");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 3, dma1), "\u2588");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 5, dma1), "\u258c");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 6, dma1), " ");
    /* pe0.pe_dma's write [510,600): column 25 = [500,520) is busy on its right half */
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 25, dma0), "\u2590");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 26, dma0), "\u2588");
    /* pe1.pe_math in [300,400): 5-cycle ops every 10 cycles, half of each column busy in
     * two runs: a medium shade, not a full bar */
    for (int col = 15; col < 20; col++)
        cr_assert_str_eq(tui_test_glyph(f.c, PX + col, math1), "\u2592", "column %d", col);
    /* colours by op kind */
    cr_assert_eq(tui_canvas_cell(f.c, PX + 22, gemm0)->style, TUI_STYLE_OP_GEMM);
    cr_assert_eq(tui_canvas_cell(f.c, PX + 3, dma1)->style, TUI_STYLE_OP_MEMORY);
    cr_assert_eq(tui_canvas_cell(f.c, PX + 16, math1)->style, TUI_STYLE_OP_MATH);
    /* pe0 group row: its two tracks average over [200,500) one busy of two: a shade */
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 12, y_pe0), "\u2592");
    cr_assert_eq(tui_canvas_cell(f.c, PX + 12, y_pe0)->style, TUI_STYLE_GROUP);
    teardown(&f);
}

Test(tui_gantt, ruler_and_bands)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    /* labels need 4 digits + 2 spaces = 6 columns = 120 cycles: ticks every 200 cycles, at
     * columns 0, 10, 20...; the cursor (at the start) marks column 0 */
    char *ruler = line(f.c, 1);
    cr_assert(strncmp(ruler, "cycles", 6) == 0, "%s", ruler);
    cr_assert(strstr(ruler, "\u25bc0        \u2502200      \u2502400      \u2502600"), "%s", ruler);
    cr_assert(strstr(line(f.c, 2), "ns"), "a clock is known: a second ruler in ns");
    cr_assert(strstr(line(f.c, 2), "\u2502200 ns"));
    /* the marker at cycle 700 = column 35 */
    cr_assert(strncmp(line(f.c, 3), "markers", 7) == 0);
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 35, 3), "\u25c6");
    cr_assert(strstr(line(f.c, 3), "\u25c6PREFILL_DONE"));
    /* its line goes through empty cells of the rows */
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 35, 8), "\u250a");
    /* tokens: prefill [0,400) columns 0-19, decode 0 [400,700), decode 1 (alternate) */
    cr_assert_eq(tui_canvas_cell(f.c, PX + 5, 4)->style, TUI_STYLE_TOKEN_PREFILL);
    cr_assert_eq(tui_canvas_cell(f.c, PX + 25, 4)->style, TUI_STYLE_TOKEN_DECODE);
    cr_assert_eq(tui_canvas_cell(f.c, PX + 40, 4)->style, TUI_STYLE_TOKEN_ALT);
    /* bandwidth: 6400 B over [0,100) is 64 B/cycle, the peak: full; 3200 over [500,600)
     * is half the peak: level 4 of 8 */
    cr_assert(strncmp(line(f.c, 5), "DRAM bw", 7) == 0);
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 2, 5), "\u2588");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 27, 5), "\u2584");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 10, 5), " ");
    teardown(&f);
}

Test(tui_gantt, zoom_keeps_the_cursor_column_and_pan_moves_the_ruler)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    f.v.cursor = 500; /* column 25 */
    act(&f, TUI_ACT_ZOOM_IN);
    uint64_t t0, t1;
    double cpc;
    tui_gantt_span(f.g, &t0, &t1, &cpc);
    cr_assert_eq(cpc, 10.0);
    cr_assert_eq(t0, 250u, "500 stays at column 25: 500 - 25 * 10");
    cr_assert_str_eq(tui_test_glyph(f.c, PX + 25, 1), "\u25bc");
    cr_assert_str_eq(line(f.c, 0), " Gantt  10 cyc/col");
    char before[1024];
    snprintf(before, sizeof(before), "%s", line(f.c, 1));
    act(&f, TUI_ACT_PAN_RIGHT); /* an eighth of 50 columns: 6 columns, 60 cycles */
    tui_gantt_span(f.g, &t0, &t1, &cpc);
    cr_assert_eq(t0, 310u);
    cr_assert_eq(f.v.cursor, 560u, "the cursor keeps its column");
    cr_assert_str_neq(line(f.c, 1), before);
    act(&f, TUI_ACT_ZOOM_OUT);
    act(&f, TUI_ACT_ZOOM_OUT);
    tui_gantt_span(f.g, &t0, &t1, &cpc);
    cr_assert_eq(cpc, 20.0, "zooming out stops at the whole trace");
    cr_assert_eq(t0, 0u);
    act(&f, TUI_ACT_ZOOM_IN);
    act(&f, TUI_ACT_FIT);
    cr_assert_str_eq(line(f.c, 0), " Gantt  20 cyc/col (fit)");
    /* never closer than one cycle per column */
    for (int i = 0; i < 10; i++)
        act(&f, TUI_ACT_ZOOM_IN);
    tui_gantt_span(f.g, &t0, &t1, &cpc);
    cr_assert_eq(cpc, 1.0);
    cr_assert_eq(t1 - t0, 50u);
    teardown(&f);
}

Test(tui_gantt, deep_zoom_writes_op_names_on_their_bars)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    f.v.cursor = 300;
    for (int i = 0; i < 3; i++)
        act(&f, TUI_ACT_ZOOM_IN); /* 2.5 cycles per column: the gemm spans 120 columns */
    cr_assert(strstr(line(f.c, 9), "gemm_f16"), "%s", line(f.c, 9));
    teardown(&f);
}

Test(tui_gantt, the_op_under_the_cursor_is_hovered_and_enter_selects_it)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    act(&f, TUI_ACT_DOWN);
    act(&f, TUI_ACT_DOWN);
    act(&f, TUI_ACT_DOWN); /* sip0.cube0, pe0, pe_dma, pe_gemm */
    cr_assert_str_eq(tui_gantt_selected_label(f.g), "pe_gemm");
    cr_assert_eq(f.v.hover, TUI_NO_EVENT, "nothing runs on pe_gemm at cycle 0");
    f.v.cursor = 300;
    act(&f, TUI_ACT_CURSOR_RIGHT);
    cr_assert_eq(f.v.cursor, 320u);
    cr_assert_neq(f.v.hover, TUI_NO_EVENT);
    cr_assert_str_eq(trace_model_str(f.m, trace_model_event(f.m, f.v.hover)->op), "gemm_f16");
    cr_assert_eq(f.v.selected, TUI_NO_EVENT);
    act(&f, TUI_ACT_SELECT);
    cr_assert_eq(f.v.selected, f.v.hover);
    cr_assert_eq(tui_canvas_cell(f.c, PX + 22, 9)->style, TUI_STYLE_OP_SELECTED);
    teardown(&f);
}

Test(tui_gantt, next_and_previous_op_on_the_selected_row)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    act(&f, TUI_ACT_DOWN);
    act(&f, TUI_ACT_DOWN); /* pe0.pe_dma: [0,100) [100,200) [510,600) */
    act(&f, TUI_ACT_NEXT_OP);
    cr_assert_eq(f.v.cursor, 100u);
    act(&f, TUI_ACT_NEXT_OP);
    cr_assert_eq(f.v.cursor, 510u);
    cr_assert_str_eq(trace_model_str(f.m, trace_model_event(f.m, f.v.selected)->op), "dma_write");
    act(&f, TUI_ACT_NEXT_OP);
    cr_assert_eq(f.v.cursor, 510u, "no later op: stays");
    cr_assert_str_eq(f.v.message, "no later op on this row");
    act(&f, TUI_ACT_PREV_OP);
    cr_assert_eq(f.v.cursor, 100u);
    act(&f, TUI_ACT_PREV_OP);
    cr_assert_eq(f.v.cursor, 0u);
    teardown(&f);
}

Test(tui_gantt, groups_fold_and_unfold)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    act(&f, TUI_ACT_DOWN); /* pe0 */
    act(&f, TUI_ACT_SELECT);
    cr_assert(strstr(line(f.c, 7), "\u25b8 pe0"), "%s", line(f.c, 7));
    cr_assert(strstr(line(f.c, 8), "pe1"), "pe0's tracks are hidden");
    act(&f, TUI_ACT_SELECT);
    cr_assert(strstr(line(f.c, 8), "pe_dma"));
    act(&f, TUI_ACT_FOLD_ALL);
    cr_assert(strstr(line(f.c, 6), "\u25b8 sip0.cube0"));
    cr_assert_eq(row_of(f.c, "pe0"), -1);
    act(&f, TUI_ACT_FOLD_ALL);
    cr_assert_eq(row_of(f.c, "pe0"), 7);
    teardown(&f);
}

Test(tui_gantt, search_finds_ops_and_components)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    bool wrapped;
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "GEMM", 1, &wrapped), 1u);
    cr_assert_str_eq(trace_model_str(f.m, trace_model_event(f.m, f.v.selected)->op), "gemm_f16");
    cr_assert_eq(f.v.cursor, 200u);
    cr_assert_str_eq(tui_gantt_selected_label(f.g), "pe_gemm");
    /* "pe1.pe_math" matches its 11 ops by component */
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "pe1.pe_math", 1, &wrapped), 11u);
    cr_assert_eq(f.v.cursor, 300u);
    cr_assert(!wrapped);
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "pe1.pe_math", 1, &wrapped), 11u);
    cr_assert_eq(f.v.cursor, 310u);
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "pe1.pe_math", -1, &wrapped), 11u);
    cr_assert_eq(f.v.cursor, 300u);
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "pe1.pe_math", -1, &wrapped), 11u);
    cr_assert(wrapped, "before the first match the search wraps to the last");
    cr_assert_eq(f.v.cursor, 800u);
    uint64_t sel = f.v.selected;
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "no such op", 1, &wrapped), 0u);
    cr_assert_eq(f.v.selected, sel, "no match changes nothing");
    teardown(&f);
}

Test(tui_gantt, a_folded_group_unfolds_to_show_a_match)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    act(&f, TUI_ACT_FOLD_ALL);
    bool wrapped;
    cr_assert_eq(tui_gantt_search(f.g, &f.v, "exp", 1, &wrapped), 6u);
    draw(&f);
    cr_assert_str_eq(tui_gantt_selected_label(f.g), "pe_math");
    cr_assert_neq(row_of(f.c, "pe_math"), -1);
    teardown(&f);
}

Test(tui_gantt, filters_by_engine_and_op_kind)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, true);
    draw(&f);
    act(&f, TUI_ACT_FILTER_ENGINE);
    cr_assert_eq(f.v.filter_engine, TRACE_ENGINE_DMA);
    cr_assert(strstr(line(f.c, 0), "engine=DMA"));
    cr_assert_eq(row_of(f.c, "pe_gemm"), -1);
    cr_assert_eq(row_of(f.c, "pe_math"), -1);
    cr_assert_neq(row_of(f.c, "pe_dma"), -1);
    act(&f, TUI_ACT_FILTER_ENGINE);
    cr_assert_eq(f.v.filter_engine, TRACE_ENGINE_TE);
    act(&f, TUI_ACT_FILTER_ENGINE);
    act(&f, TUI_ACT_FILTER_ENGINE);
    cr_assert_eq(f.v.filter_engine, -1, "after the last engine present: all");
    act(&f, TUI_ACT_FILTER_KIND);
    cr_assert_eq(f.v.filter_kind, TRACE_KIND_MEMORY);
    cr_assert_eq(row_of(f.c, "pe_math"), -1);
    act(&f, TUI_ACT_FILTER_KIND);
    cr_assert_eq(f.v.filter_kind, TRACE_KIND_GEMM);
    cr_assert(strstr(line(f.c, 0), "kind=gemm"));
    cr_assert_neq(row_of(f.c, "pe_gemm"), -1);
    cr_assert_eq(row_of(f.c, "pe_dma"), -1);
    teardown(&f);
}

Test(tui_gantt, zoomed_out_scattered_work_is_a_shade_not_a_bar)
{
    /* 10000 one-cycle ops every four cycles: 25% busy everywhere. Zoomed out, each column
     * covers hundreds of ops; it must read as lightly busy, whatever op was drawn last. */
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    for (uint64_t i = 0; i < 10000; i++)
        tui_test_event(m, t, "dma", TRACE_KIND_MEMORY, i * 4, i * 4 + 1);
    trace_model_finish(m);
    struct fixture f;
    setup(&f, m, 60, 6, true);
    draw(&f);
    int y = row_of(f.c, "DMA 0");
    cr_assert_geq(y, 0);
    int px = 9; /* "DMA 0" fits the narrowest label column (8) and its separator */
    cr_assert_str_eq(tui_test_glyph(f.c, px - 1, y), "\u2502");
    for (int col = 0; col < 40; col++)
        cr_assert_str_eq(tui_test_glyph(f.c, px + col, y), "\u2591", "column %d", col);
    teardown(&f);
}

Test(tui_gantt, spec_traces_group_by_engine_kind)
{
    struct trace_model *m = trace_model_new();
    uint32_t te1 = trace_model_track(m, "TE 1", TRACE_ENGINE_TE, 1);
    uint32_t dma = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint32_t te0 = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint32_t ve = trace_model_track(m, "VE 0", TRACE_ENGINE_VE, 0);
    tui_test_event(m, dma, "DMA_LOAD_TILE", TRACE_KIND_MEMORY, 1000, 1100);
    tui_test_event(m, te0, "TE_GEMM_TILE", TRACE_KIND_GEMM, 1100, 1300);
    tui_test_event(m, te1, "TE_GEMM_TILE", TRACE_KIND_GEMM, 1150, 1300);
    tui_test_event(m, ve, "VE_LAYERNORM_TILE", TRACE_KIND_MATH, 1300, 1380);
    trace_model_finish(m);
    struct fixture f;
    setup(&f, m, 60, 10, true);
    draw(&f);
    /* DMA and VE have one engine each: their rows stand alone; TE has two under a group,
     * in engine_id order; kinds in the order DMA, TE, VE */
    cr_assert(strstr(line(f.c, 2), " DMA 0"), "%s", line(f.c, 2));
    cr_assert(strstr(line(f.c, 3), "\u25be TE"), "%s", line(f.c, 3));
    cr_assert(strstr(line(f.c, 4), "  TE 0"), "%s", line(f.c, 4));
    cr_assert(strstr(line(f.c, 5), "  TE 1"), "%s", line(f.c, 5));
    cr_assert(strstr(line(f.c, 6), " VE 0"), "%s", line(f.c, 6));
    char *d = tui_canvas_dump(f.c, false);
    tui_test_golden("gantt_spec", d);
    free(d);
    teardown(&f);
}

Test(tui_gantt, hostile_names_are_drawn_escaped)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "\x1b]0;pwned\x07", TRACE_ENGINE_OTHER, 0);
    tui_test_event(m, t, "\x1b]52;c;SGVsbG8=\x07\r", TRACE_KIND_UNKNOWN, 0, 1000);
    trace_model_finish(m);
    struct fixture f;
    setup(&f, m, 80, 6, true);
    draw(&f);
    char *d = tui_canvas_dump(f.c, false);
    cr_assert_null(strchr(d, 0x1b));
    cr_assert_null(strchr(d, 0x07));
    cr_assert_null(strchr(d, '\r'));
    cr_assert(strstr(d, "\\e]0;pwn"), "%s", d);
    cr_assert(strstr(d, "\\e]52;c;"), "%s", d);
    free(d);
    teardown(&f);
}

Test(tui_gantt, ascii_canvas_golden)
{
    struct fixture f;
    setup(&f, tui_test_model(), W, 15, false);
    draw(&f);
    char *d = tui_canvas_dump(f.c, false);
    for (const char *p = d; *p; p++)
        cr_assert((unsigned char)*p < 0x80, "non-ASCII output on an ASCII canvas");
    tui_test_golden("gantt_fit_ascii", d);
    free(d);
    teardown(&f);
}

Test(tui_gantt, an_empty_trace_says_so)
{
    struct trace_model *m = trace_model_new();
    trace_model_finish(m);
    struct fixture f;
    setup(&f, m, 60, 8, true);
    draw(&f);
    char *d = tui_canvas_dump(f.c, false);
    cr_assert(strstr(d, "no ENGINE_EVENTs in this trace"), "%s", d);
    free(d);
    act(&f, TUI_ACT_ZOOM_IN);
    act(&f, TUI_ACT_NEXT_OP);
    act(&f, TUI_ACT_SELECT);
    teardown(&f);
}
