/* The analysis panes (tui/panes/layers.c, tui/panes/tokens.c, tui/panes/anomalies.c), headless, on
 * tests/data/traces/views.json (two layers of known busy cycles, tokens of known
 * latencies, a planted 10x op), and how the app shows them, jumps from them to the Gantt,
 * and warns of a trace that records a failure. */
#include "test_tui_pane.h"
#include "trace/file/loader.h"
#include "trace/file/report.h"
#include "tui/panes/anomalies.h"
#include "tui/app/app.h"
#include "tui/panes/layers.h"
#include "tui/panes/tokens.h"

TestSuite(tui_views, .init = tui_test_locale);

static struct trace_model *load(const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "tests/data/traces/%s", name);
    struct trace_report *r = trace_report_new(4);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_file(path, r, &m, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_report_errors(r) + trace_report_warnings(r), 0);
    trace_report_free(r);
    return m;
}

static uint32_t id(const struct trace_model *m, const char *s)
{
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const struct trace_event *e = trace_model_event(m, i);
        if (e->layer && strcmp(trace_model_str(m, e->layer), s) == 0)
            return e->layer;
        if (strcmp(trace_model_str(m, e->op), s) == 0)
            return e->op;
    }
    cr_assert_fail("no string %s", s);
    return 0;
}

Test(tui_views, layers_table_sorts_unfolds_and_zooms)
{
    struct trace_model *m = load("views.json");
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_layers *l = tui_layers_new(&v);
    struct tui_canvas *c = tui_canvas_new(100, 12, true);
    render(&tui_layers_ops, l, c, &v, true);
    char *d = dump(c);
    /* attn_0: DMA [0,200), TE [200,500), VE [500,600): busy 600 of 1000; 8 KiB read.
     * ffn_0: DMA [600,700) and [950,1000), TE [700,800), VE [800,950): busy 400; 2 KiB read,
     * 1 KiB written. In order of their first op. */
    cr_assert(strstr(d, "Layers  2 layers, by start up"), "%s", d);
    /* span: the sum of the layer's instances (its ops within each token); slowest: the
     * longest instance */
    cr_assert(strstr(d, "attn_0                   0      600      600      200      300      100  "
                        "60.0%  8.00 KiB      4"),
              "%s", d);
    cr_assert(strstr(d, "ffn_0                  600      400      200      150      100      150  "
                        "40.0%  3.00 KiB      9"),
              "%s", d);
    cr_assert_lt(strstr(d, "attn_0"), strstr(d, "ffn_0"));
    tui_test_golden("layers", d);
    free(d);

    /* F unfolds every layer into its op names */
    cr_assert_eq(tui_layers_ops.action(l, TUI_ACT_FOLD_ALL, &v), TUI_RES_REDRAW);
    render(&tui_layers_ops, l, c, &v, true);
    d = dump(c);
    cr_assert(strstr(d, "   add                    800      150                 0        0      "
                        "150  15.0%       0 B      6"),
              "%s", d);
    /* ... and its instances, one per token (the slowest of several marked *) */
    cr_assert(strstr(d, "   tok 0 prefill            0      600\n"), "%s", d);
    tui_test_golden("layers_open", d);
    free(d);

    /* right to the TE column: sorted by TE busy, most first; r reverses */
    for (int i = 0; i < 4; i++) /* start, span, slowest, DMA, TE */
        tui_layers_ops.action(l, TUI_ACT_PAN_RIGHT, &v);
    tui_layers_ops.action(l, TUI_ACT_FOLD_ALL, &v);
    render(&tui_layers_ops, l, c, &v, true);
    d = dump(c);
    cr_assert(strstr(d, "by TE down"), "%s", d);
    cr_assert_lt(strstr(d, "attn_0"), strstr(d, "ffn_0"), "300 before 100: %s", d);
    free(d);
    tui_layers_ops.action(l, TUI_ACT_REVERSE, &v);
    render(&tui_layers_ops, l, c, &v, true);
    d = dump(c);
    cr_assert(strstr(d, "by TE up"), "%s", d);
    cr_assert_lt(strstr(d, "ffn_0"), strstr(d, "attn_0"), "%s", d);
    free(d);

    /* Enter on ffn_0 (now the first row): the Gantt is asked to show [600, 1000) with the
     * layer's ops marked, and the layer unfolds */
    uint64_t rev = v.goto_rev;
    cr_assert_eq(tui_layers_ops.action(l, TUI_ACT_SELECT, &v), TUI_RES_REDRAW);
    cr_assert_eq(v.goto_rev, rev + 1);
    cr_assert_eq(v.goto_t0, 600);
    cr_assert_eq(v.goto_t1, 1000);
    cr_assert_eq(v.goto_cursor, 600);
    cr_assert_eq(v.goto_event, TUI_NO_EVENT);
    cr_assert_eq(v.mark_layer, id(m, "ffn_0"));
    cr_assert_eq(v.mark_op, TRACE_NO_STR);
    /* the next row is one of its op names (by TE busy, least first: dma_read, 0) */
    tui_layers_ops.action(l, TUI_ACT_DOWN, &v);
    tui_layers_ops.action(l, TUI_ACT_SELECT, &v);
    cr_assert_eq(v.mark_op, id(m, "dma_read"));
    cr_assert_eq(v.goto_t0, 600);
    cr_assert_eq(v.goto_t1, 700);
    tui_canvas_free(c);
    tui_layers_free(l);
    trace_model_free(m);
}

Test(tui_views, layers_of_a_trace_without_them)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_layers *l = tui_layers_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 5, true);
    render(&tui_layers_ops, l, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "no layer_ids in this trace's ENGINE_EVENTs"), "%s", d);
    cr_assert_eq(tui_layers_ops.action(l, TUI_ACT_SELECT, &v), TUI_RES_REDRAW);
    cr_assert_eq(v.goto_rev, 0, "nothing to show");
    free(d);
    tui_canvas_free(c);
    tui_layers_free(l);
    trace_model_free(m);
}

Test(tui_views, tokens_latencies_bytes_and_chart)
{
    struct trace_model *m = load("views.json");
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_tokens *t = tui_tokens_new(&v);
    struct tui_canvas *c = tui_canvas_new(110, 12, true);
    render(&tui_tokens_ops, t, c, &v, true);
    char *d = dump(c);
    cr_assert(strstr(d, "1 prefill, 2 decode  prefill 600 cyc  decode min 150, median 150, mean "
                        "200.0, max 250 cyc"),
              "%s", d);
    cr_assert(
        strstr(d,
               "PREFILL      0          0       600   8.00 KiB        0 B   4.00 KiB        0 B"),
        "%s", d);
    cr_assert(strstr(d, "DECODE       0        600       150   2.00 KiB        0 B        0 B"),
              "%s", d);
    cr_assert(strstr(d, "DECODE       1        750       250        0 B   1.00 KiB        0 B"),
              "%s", d);
    /* the chart: 3 rows of bars, scaled to 250; token 0 is 150 / 250 x 24 = 14.4 eighths:
     * a full cell, a cell of 6/8 and nothing on top; token 1 is three full cells */
    cr_assert(strstr(d, "     250     ████\n"), "%s", d);
    cr_assert(strstr(d, "         ▆▆▆▆████\n"), "%s", d);
    cr_assert(strstr(d, " cycles  ████████\n"), "%s", d);
    tui_test_golden("tokens", d);
    free(d);
    /* Enter on the last token asks the Gantt for its span */
    tui_tokens_ops.action(t, TUI_ACT_END, &v);
    tui_tokens_ops.action(t, TUI_ACT_SELECT, &v);
    cr_assert_eq(v.goto_t0, 750);
    cr_assert_eq(v.goto_t1, 1000);
    cr_assert_str_eq(v.message, "DECODE token #1 (token_index 1): 250 cycles from 750");
    tui_canvas_free(c);
    tui_tokens_free(t);
    trace_model_free(m);
}

Test(tui_views, anomalies_list_the_planted_op_and_jump_to_it)
{
    struct trace_model *m = load("views.json");
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_anomalies *p = tui_anomalies_new(&v);
    struct tui_canvas *c = tui_canvas_new(110, 5, true);
    render(&tui_anomalies_ops, p, c, &v, true);
    char *d = dump(c);
    cr_assert(strstr(d, "Anomalies  1 (1 slow op)"), "%s", d);
    cr_assert(strstr(d, "        840 slow op  add on sip0.cube0.pe0.pe_math: 100 cycles, 10.0x the "
                        "median 10 of 6 VE ops"),
              "%s", d);
    tui_test_golden("anomalies", d);
    free(d);
    /* n shows it: its op selected, the Gantt on [790, 990) (the op and half of it around) */
    cr_assert_eq(tui_anomalies_ops.action(p, TUI_ACT_SEARCH_NEXT, &v), TUI_RES_REDRAW);
    uint64_t planted = v.goto_event;
    cr_assert_neq(planted, TUI_NO_EVENT);
    cr_assert_eq(trace_model_event(m, planted)->start, 840);
    cr_assert_eq(trace_model_event(m, planted)->end, 940);
    cr_assert_eq(v.goto_t0, 790);
    cr_assert_eq(v.goto_t1, 990);
    cr_assert(strstr(v.message, "anomaly 1/1: add on sip0.cube0.pe0.pe_math"), "%s", v.message);
    /* N and n go round the list of one */
    tui_anomalies_ops.action(p, TUI_ACT_SEARCH_PREV, &v);
    cr_assert_eq(v.goto_event, planted);
    tui_canvas_free(c);
    tui_anomalies_free(p);
    trace_model_free(m);
}

/* ---- in the app ------------------------------------------------------------------------ */

struct fixture {
    struct tui_source *src;
    struct tui_app *a;
};

static void setup(struct fixture *f, const char *trace, int w, int h)
{
    f->src = tui_source_model_take(load(trace), trace);
    f->a = tui_app_new(f->src, w, h, true, NULL, NULL, NULL, NULL);
}

static void teardown(struct fixture *f)
{
    tui_app_free(f->a);
    tui_source_free(f->src);
}

static char *frame(struct fixture *f)
{
    while (tui_app_busy(f->a))
        tui_app_work(f->a, 1000000000);
    return tui_canvas_dump(tui_app_render(f->a), false);
}

Test(tui_views, keys_show_each_pane_and_enter_zooms_the_gantt)
{
    struct fixture f;
    setup(&f, "views.json", 120, 40);
    char *d = frame(&f);
    cr_assert(strstr(d, "Summary"), "%s", d);
    free(d);
    tui_app_key(f.a, 'y');
    d = frame(&f);
    cr_assert(strstr(d, "Layers  2 layers"), "%s", d);
    cr_assert_null(strstr(d, " Summary"), "%s", d);
    free(d);
    /* Enter on ffn_0: the Gantt zooms to it and names the layer in its title */
    tui_app_key(f.a, 'j');
    tui_app_key(f.a, TUI_KEY_ENTER);
    d = frame(&f);
    cr_assert(strstr(d, "layer=ffn_0"), "%s", d);
    cr_assert_null(strstr(d, "(fit)"), "%s", d);
    cr_assert(strstr(d, "cursor 600 (600 ns)"), "%s", d);
    cr_assert(strstr(d, "▾ ffn_0"), "unfolded: %s", d);
    free(d);
    /* Esc clears the marks */
    tui_app_key(f.a, TUI_KEY_ESC);
    d = frame(&f);
    cr_assert_null(strstr(d, "layer=ffn_0"), "%s", d);
    free(d);
    /* T and A take the slot; A again gives it back to the summary */
    tui_app_key(f.a, 'T');
    d = frame(&f);
    cr_assert(strstr(d, "Tokens  1 prefill, 2 decode"), "%s", d);
    free(d);
    tui_app_key(f.a, 'A');
    d = frame(&f);
    cr_assert(strstr(d, "Anomalies  1 (1 slow op)"), "%s", d);
    free(d);
    /* n with the anomalies focused jumps to the planted op: the details show it */
    tui_app_key(f.a, 'n');
    d = frame(&f);
    cr_assert(strstr(d, "cursor 840 (840 ns)"), "%s", d);
    cr_assert(strstr(d, "Details: selected op"), "%s", d);
    cr_assert(strstr(d, "cycles    840 (840 ns) .. 940 (940 ns)"), "%s", d);
    free(d);
    tui_app_key(f.a, 'A');
    d = frame(&f);
    cr_assert(strstr(d, "Summary"), "%s", d);
    free(d);
    teardown(&f);
}

Test(tui_views, a_trace_that_records_a_failure_says_so_in_the_header)
{
    struct fixture f;
    setup(&f, "invalid_marker.json", 200, 24);
    char *d = frame(&f);
    const char *nl = strchr(d, '\n');
    char header[512];
    snprintf(header, sizeof(header), "%.*s", (int)(nl - d), d);
    /* the badge, then the error (escaped, cut short) */
    cr_assert(strstr(header, " POST-MORTEM    INVALID TRACE   kernel 'broken' on sip0.cube0.pe0: "
                             "\\e]0;pwned\\x07tile 7 is o... (A lists)  invalid_marker.json"),
              "%s", header);
    for (const char *s = d; *s; s++)
        cr_assert(*s == '\n' || (unsigned char)*s >= 0x20, "a control character on screen");
    free(d);
    /* A lists it (once found: on a worker); n goes to the marker (at the trace's end: the
     * cursor on its last cycle) */
    tui_app_key(f.a, 'A');
    free(frame(&f));
    tui_app_key(f.a, 'n');
    d = frame(&f);
    cr_assert(strstr(d, "Anomalies  1 (1 invalid)"), "%s", d);
    cr_assert(strstr(d, "cursor 149 (149 ns)"), "%s", d);
    free(d);
    teardown(&f);

    /* narrower, the badge keeps its place; the error goes before the file's name */
    setup(&f, "invalid_marker.json", 80, 24);
    d = frame(&f);
    cr_assert(strncmp(d, " POST-MORTEM    INVALID TRACE   invalid_marker.json", 50) == 0, "%.80s",
              d);
    tui_test_golden("app_invalid_80x24", d);
    free(d);
    teardown(&f);
}
