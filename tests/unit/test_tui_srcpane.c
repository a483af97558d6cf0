/* The source pane (tui/panes/srcpane.c), headless, on tests/data/traces/srcsites.json (a
 * kernel whose ops name lines of tests/data/traces/mykern.c, a line past its end, malformed
 * and hostile details.src): the per-line table when the source is not found, the source
 * with its figures when it is, Enter highlighting a line's ops on the Gantt and n, N
 * walking them. */
#include "test_tui_pane.h"
#include "trace/file/loader.h"
#include "trace/file/report.h"
#include "tui/panes/srcpane.h"

#include <unistd.h>

TestSuite(tui_srcpane, .init = tui_test_locale);

static struct trace_model *load(const char *path)
{
    struct trace_report *r = trace_report_new(4);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file(path, r, &m, &d), 0, "%s", d.msg);
    trace_report_free(r);
    return m;
}

static void no_controls(const struct tui_canvas *c)
{
    for (int i = 0; i < c->w * c->h; i++) {
        uint32_t cp = c->cells[i].cp;
        cr_assert(c->cells[i].width == 0 || (cp >= 0x20 && (cp < 0x7f || cp > 0x9f)),
                  "control character on screen");
    }
}

Test(tui_srcpane, the_table_without_the_source_then_the_source_with_its_figures)
{
    struct trace_model *m = load("tests/data/traces/srcsites.json");
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_srcpane *p = tui_srcpane_new(&v);
    struct tui_canvas *c = tui_canvas_new(120, 12, true);
    /* from the repository's top, mykern.c is nowhere to be found */
    render(&tui_srcpane_ops, p, c, &v, true);
    char *d = dump(c);
    cr_assert(strstr(d, " Source  mykern  mykern.c  9 ops 435 cyc  (source not found: per-line "
                        "table)"),
              "%s", d);
    /* at the time cursor (the trace's start) the PE's last call came from line 3 */
    cr_assert(strstr(d, ">1      -  34.5%       2       150         0         0  mykern.c:3"), "%s",
              d);
    cr_assert(strstr(d, "malformed src \"nocolon\""), "%s", d);
    cr_assert(strstr(d, "\\e[31mevil.c:2"), "the escape shown escaped: %s", d);
    no_controls(c);
    tui_test_golden("srcpane_table", d);
    free(d);
    tui_srcpane_free(p);

    /* next to the source: every line of it, with the figures of the lines that issued ops */
    cr_assert_eq(chdir("tests/data/traces"), 0);
    p = tui_srcpane_new(&v);
    render(&tui_srcpane_ops, p, c, &v, true);
    d = dump(c);
    cr_assert_eq(chdir("../../.."), 0);
    cr_assert(strstr(d, " Source  mykern  mykern.c  9 ops 435 cyc  Enter ops"), "%s", d);
    cr_assert(
        strstr(d, "      3  34.5%       2       150         0         0      struct tl_tensor *x = "
                  "tl_load(tl, tl_arg(tl, a, 0));"),
        "%s", d);
    cr_assert(strstr(d, "      4  46.0%       1         0       200         0      struct "
                        "tl_tensor *y = tl_dot(tl, x, x);"),
              "%s", d);
    cr_assert(strstr(d, "static void mykern("), "%s", d);
    cr_assert(strstr(d, "mykern.c:99"), "the line past the end listed after the source: %s", d);
    no_controls(c);
    tui_test_golden("srcpane_source", d);
    free(d);

    /* the pane starts on line 3, the first that issued ops: Enter marks it and shows its
     * first op, n the next, n again the first */
    cr_assert_eq(tui_srcpane_ops.action(p, TUI_ACT_SELECT, &v), TUI_RES_REDRAW);
    cr_assert_neq(v.mark_site, TRACE_NO_SITE);
    char s[64];
    cr_assert_str_eq(trace_model_site_text(m, v.mark_site, s, sizeof(s)), "mykern.c:3");
    uint64_t first = v.goto_event;
    cr_assert_eq(trace_model_event(m, first)->start, 0);
    v.selected = first; /* what the app does with the Gantt request */
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_NEXT, &v);
    cr_assert_eq(trace_model_event(m, v.goto_event)->start, 100);
    v.selected = v.goto_event;
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_NEXT, &v);
    cr_assert_eq(v.goto_event, first, "around to the first");
    v.selected = first;
    tui_srcpane_ops.action(p, TUI_ACT_SEARCH_PREV, &v);
    cr_assert_eq(trace_model_event(m, v.goto_event)->start, 100);
    /* Esc clears the mark */
    cr_assert_eq(tui_srcpane_ops.action(p, TUI_ACT_CLEAR, &v), TUI_RES_REDRAW);
    cr_assert_eq(v.mark_site, TRACE_NO_SITE);
    tui_canvas_free(c);
    tui_srcpane_free(p);
    trace_model_free(m);
}

Test(tui_srcpane, a_trace_without_call_sites_says_so)
{
    struct trace_model *m = load("tests/data/traces/spec_example.json");
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_srcpane *p = tui_srcpane_new(&v);
    struct tui_canvas *c = tui_canvas_new(80, 4, true);
    render(&tui_srcpane_ops, p, c, &v, true);
    char *d = dump(c);
    cr_assert(strstr(d, "no call sites in this trace (details.src)"), "%s", d);
    cr_assert_eq(tui_srcpane_ops.action(p, TUI_ACT_SELECT, &v), TUI_RES_REDRAW);
    free(d);
    tui_canvas_free(c);
    tui_srcpane_free(p);
    trace_model_free(m);
}
