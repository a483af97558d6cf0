/* The summary pane (tui/panes/summary.c), headless, on the fixture model whose figures are
 * worked out by hand in each test. */
#include "test_tui_pane.h"
#include "tui/panes/summary.h"

TestSuite(tui_summary, .init = tui_test_locale);

Test(tui_summary, summary_figures)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_summary *s = tui_summary_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 20, true);
    render(&tui_summary_ops, s, c, &v, false);
    char *d = dump(c);
    /* 1000 cycles. DMA busy: pe0 [0,200) and [510,600), pe1 inside [0,110): union 290.
     * TE 0: the gemm [200,500), 300. VE 0: ten 5-cycle ops and [800,1000): 250. */
    cr_assert(strstr(d, "utilization of 1000 cyc (1.00 us)"), "%s", d);
    cr_assert(strstr(d, " 29.0%"), "%s", d);
    cr_assert(strstr(d, "at most 2 at once"), "%s", d);
    cr_assert(strstr(d, "TE 0"), "%s", d);
    cr_assert(strstr(d, " 30.0%"), "%s", d);
    cr_assert(strstr(d, "VE 0"), "%s", d);
    cr_assert(strstr(d, " 25.0%"), "%s", d);
    /* DRAM: the dma_read's 4096 bytes from HBM, the dma_write's 2048 to HBM; in one
     * 1024-cycle window: 6144 / 1024 = 6 B/cycle max, 6144 / 1000 = 6.14 mean */
    cr_assert(strstr(d, "DRAM read 4.00 KiB  write 2.00 KiB"), "%s", d);
    cr_assert(strstr(d, "BW   mean 6.14 B/cyc (6.1 GB/s)"), "%s", d);
    cr_assert(strstr(d, "min 6  max 6  peak 64 (max is 9% of it)"), "%s", d);
    /* busiest: pe0.pe_gemm 30%, pe0.pe_dma 29%, pe1.pe_math 25%, pe1.pe_dma 10% */
    const char *g = strstr(d, "sip0.cube0.pe0.pe_gemm"), *a = strstr(d, "sip0.cube0.pe0.pe_dma");
    const char *mm = strstr(d, "sip0.cube0.pe1.pe_math"), *b = strstr(d, "sip0.cube0.pe1.pe_dma");
    cr_assert(g && a && mm && b && g < a && a < mm && mm < b, "%s", d);
    /* tokens: prefill [0,400); decode [400,700) and [700,1000) */
    cr_assert(strstr(d, "prefill latency 400 cyc (400 ns)"), "%s", d);
    cr_assert(strstr(d, "decode 2 tokens, avg 300 cyc (300 ns)"), "%s", d);
    tui_test_golden("summary", d);
    free(d);
    tui_canvas_free(c);
    tui_summary_free(s);
    trace_model_free(m);
}

Test(tui_summary, summary_scrolls_when_focused)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_summary *s = tui_summary_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 6, true);
    render(&tui_summary_ops, s, c, &v, true);
    char *before = dump(c);
    cr_assert_eq(tui_summary_ops.action(s, TUI_ACT_DOWN, &v), TUI_RES_REDRAW);
    render(&tui_summary_ops, s, c, &v, true);
    char *after = dump(c);
    cr_assert_str_neq(before, after);
    cr_assert_eq(tui_summary_ops.action(s, TUI_ACT_ZOOM_IN, &v), TUI_RES_IGNORED);
    for (int i = 0; i < 50; i++)
        tui_summary_ops.action(s, TUI_ACT_DOWN, &v);
    render(&tui_summary_ops, s, c, &v, true);
    char *end = dump(c);
    cr_assert(strstr(end, "decode 2 tokens"), "scrolled to the last line: %s", end);
    cr_assert_eq(tui_summary_ops.action(s, TUI_ACT_DOWN, &v), TUI_RES_HANDLED, "no further");
    free(before), free(after), free(end);
    tui_canvas_free(c);
    tui_summary_free(s);
    trace_model_free(m);
}
