/*
 * The source pane's walk over a line's ops (Enter, n, N) on a big model: a line whose next
 * op lies past the ops looked at on the main loop is found on a worker, the same op as a
 * plain scan finds, in both directions and around the end; meanwhile the status line says
 * it is looking, and a second N that it still is.
 */
#include "test_tui_pane.h"
#include "tui/panes/srcpane.h"

TestSuite(tui_srcwalk, .init = tui_test_locale);

enum { OPS = 1300000, FAR = 1250000 };

/* OPS ops on one track, all from line 10 of k.c but ops 5 and FAR, from line 20. */
static struct trace_model *model(uint16_t *rare)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint32_t f = trace_model_intern(m, "k.c", 3), fn = trace_model_intern(m, "k", 1);
    uint16_t common = trace_model_site(m, f, fn, 10);
    *rare = trace_model_site(m, f, fn, 20);
    uint32_t op = trace_model_intern(m, "exp", 3);
    for (uint64_t i = 0; i < OPS; i++) {
        struct trace_event e = {.start = 10 * i,
                                .end = 10 * i + 5,
                                .track = t,
                                .op = op,
                                .op_kind = TRACE_KIND_MATH,
                                .cmdq_id = TRACE_NO_CMDQ,
                                .site = i == 5 || i == FAR ? *rare : common};
        trace_model_add_event(m, &e);
    }
    trace_model_finish(m);
    return m;
}

static void settle(struct tui_srcpane *p, struct tui_view *v)
{
    while (tui_srcpane_ops.work(p, v, 1000000000))
        ;
}

Test(tui_srcwalk, a_far_op_of_the_line_is_found_on_the_worker)
{
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "2000", 1); /* a worker's check: 2 ms */
    uint16_t rare;
    struct trace_model *m = model(&rare);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_srcpane *p = tui_srcpane_new(&v);
    struct tui_canvas *c = tui_canvas_new(100, 12, true);
    render(&tui_srcpane_ops, p, c, &v, true); /* the profile, on its worker */
    tui_view_mark_site(&v, rare);
    /* n from op 5: the next op of line 20 is FAR, past what the main loop looks at */
    v.selected = 5;
    v.goto_event = TUI_NO_EVENT;
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_NEXT, &v);
    cr_assert_eq(v.goto_event, TUI_NO_EVENT, "not found on the main loop");
    cr_assert(strstr(v.message, "looking for the line's next op"), "%s", v.message);
    settle(p, &v);
    cr_assert_eq(v.goto_event, (uint64_t)FAR);
    cr_assert(strstr(v.message, "k.c:20: op 1250000 of the trace"), "%s", v.message);
    /* n from FAR: around the end to op 5 (found here: within the first ops looked at) */
    v.selected = FAR;
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_NEXT, &v);
    settle(p, &v);
    cr_assert_eq(v.goto_event, 5u);
    /* N from FAR: back to op 5, on the worker; a second N meanwhile says it is looking */
    v.selected = FAR;
    v.goto_event = TUI_NO_EVENT;
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_PREV, &v);
    cr_assert_eq(v.goto_event, TUI_NO_EVENT);
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_PREV, &v);
    cr_assert(strstr(v.message, "still looking for the line's next op"), "%s", v.message);
    settle(p, &v);
    cr_assert_eq(v.goto_event, 5u);
    tui_canvas_free(c);
    tui_srcpane_free(p);
    trace_model_free(m);
    unsetenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US");
}
