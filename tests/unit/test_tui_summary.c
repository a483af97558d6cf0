/* The summary pane (tui/panes/summary.c), headless, on the fixture model whose figures are
 * worked out by hand in each test. */
#include "test_tui_pane.h"
#include "tui/panes/summary.h"

#include <stdio.h>
#include <stdlib.h>

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

/* The pane of a loaded model (the worker's figures) and of the same model live (computed
 * here): their first renders. */
static void first_renders(struct trace_model *m, char **loaded, char **live)
{
    struct tui_view lv, fv;
    tui_view_init(&lv, m, true);
    tui_view_init(&fv, m, true);
    lv.live = true;
    struct tui_canvas *c = tui_canvas_new(60, 20, true);
    struct tui_summary *s = tui_summary_new(&lv);
    render(&tui_summary_ops, s, c, &lv, false);
    *live = dump(c);
    tui_summary_free(s);
    s = tui_summary_new(&fv);
    tui_summary_ops.render(s, c, (struct tui_rect){0, 0, c->w, c->h}, &fv, false);
    *loaded = dump(c);
    if (strstr(*loaded, "summing up")) { /* the worker's still: a frame comes for them */
        cr_assert(tui_summary_ops.sync(s, &fv), "a frame to come while the worker runs");
        cr_assert(tui_summary_ops.work(s, &fv, 0), "the main loop comes back for them");
        char *waiting = *loaded;
        render(&tui_summary_ops, s, c, &fv, false); /* waits for the work to end */
        *loaded = dump(c);
        char *both = malloc(strlen(waiting) + strlen(*loaded) + 2);
        sprintf(both, "%s\n%s", waiting, *loaded);
        free(waiting);
        free(*loaded);
        *loaded = both;
    }
    tui_summary_free(s);
    tui_canvas_free(c);
}

/* A small loaded trace's figures are in its first frame, those of the model live. */
Test(tui_summary, a_small_loaded_traces_first_frame_has_its_figures)
{
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "300000", 1); /* a worker would take 0.3 s */
    struct trace_model *m = tui_test_model();
    char *loaded, *live;
    first_renders(m, &loaded, &live);
    cr_assert_str_eq(loaded, live);
    free(loaded), free(live);
    trace_model_free(m);
}

/* A big one's are summed up on a worker from the moment the pane is made, and its first
 * frame waits a few ms at most: the pane says it is summing up, the main loop is asked to
 * come back, and the figures come a frame later, the same as live. */
Test(tui_summary, a_big_loaded_traces_figures_come_a_frame_later)
{
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "300000", 1); /* the worker takes 0.3 s */
    enum { N = 1 << 18 };                                   /* from this many events on */
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    for (uint64_t i = 0; i < N; i++) {
        struct trace_event e = {
            .start = 2 * i, .end = 2 * i + 1, .track = t, .cmdq_id = TRACE_NO_CMDQ};
        trace_model_add_event(m, &e);
    }
    trace_model_finish(m);
    char *loaded, *live;
    first_renders(m, &loaded, &live);
    cr_assert(strstr(loaded, "summing up 262k events..."), "%s", loaded);
    cr_assert(strstr(loaded, live), "then the figures:\n%s\nwant:\n%s", loaded, live);
    cr_assert(strstr(live, " 50.0%"), "%s", live);
    free(loaded), free(live);
    trace_model_free(m);
}

/* A growing model's summary is summed up again at most every quarter second while it grows,
 * and at once when it holds still (a run paused at its target): the figures of a run that
 * stopped are its own, not those of a moment before. */
Test(tui_summary, a_run_that_stops_shows_its_own_figures)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    v.live = true;
    struct tui_summary *s = tui_summary_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 20, true);
    render(&tui_summary_ops, s, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "utilization of 1000 cyc"), "%s", d);
    free(d);
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    tui_test_event(m, t, "gemm_f16", TRACE_KIND_GEMM, 1000, 1500); /* the run goes on */
    trace_model_finish(m);
    tui_summary_ops.sync(s, &v);
    tui_summary_ops.render(s, c, (struct tui_rect){0, 0, c->w, c->h}, &v, false);
    d = dump(c);
    cr_assert(strstr(d, "utilization of 1000 cyc"), "not at once while it grows: %s", d);
    free(d);
    nanosleep(&(struct timespec){0, 80 * 1000 * 1000}, NULL); /* then it holds still */
    cr_assert_not(tui_summary_ops.work(s, &v, 0), "summed up now");
    tui_summary_ops.render(s, c, (struct tui_rect){0, 0, c->w, c->h}, &v, false);
    d = dump(c);
    cr_assert(strstr(d, "utilization of 1500 cyc"), "%s", d);
    free(d);
    tui_canvas_free(c);
    tui_summary_free(s);
    trace_model_free(m);
}
