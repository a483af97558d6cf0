/*
 * The comparison view inside the application, headless: two hand-written traces (one op
 * removed, one added, a GEMM longer) one above the other, rows matched by component, the
 * delta column and the summary, an op and its match in the details, alignment, the keys
 * that are not the view's, and closing it.
 */
#include "test_tui_util.h"
#include "trace/diff/diff.h"
#include "trace/file/loader.h"
#include "tui/app/app.h"

TestSuite(tui_diffview, .init = tui_test_locale);

#define DATA "tests/data/traces/"

struct fixture {
    struct tui_source *src;
    struct tui_app *a;
};

static struct trace_model *load(const char *path)
{
    struct trace_model *m = NULL;
    cr_assert_eq(trace_diff_load(path, &m, NULL, NULL), 0, "%s", path);
    return m;
}

static void setup(struct fixture *f, int w, int h)
{
    f->src = tui_source_model_take(load(DATA "diff_base.json"), "traces/diff_base.json");
    f->a = tui_app_new(f->src, w, h, true, NULL, NULL, NULL, NULL);
    tui_app_diff_take(f->a, load(DATA "diff_ops.json"), "traces/diff_ops.json");
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

static void keys(struct fixture *f, const char *s)
{
    for (; *s; s++)
        tui_app_key(f->a, (unsigned char)*s);
}

/* The line of the last frame that contains text, or NULL. */
static char *line_with(const char *d, const char *text)
{
    static char buf[1024];
    const char *p = strstr(d, text);
    if (!p)
        return NULL;
    while (p > d && p[-1] != '\n')
        p--;
    snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "\n"), p);
    return buf;
}

Test(tui_diffview, two_gantts_rows_by_component_and_a_delta_column)
{
    struct fixture f;
    setup(&f, 120, 30);
    char *d = frame(&f);
    cr_assert(strstr(d, "diff_base.json vs diff_ops.json"), "header: %s", d);
    cr_assert(strstr(d, " Compare  one time axis"), "%s", d);
    cr_assert(strstr(d, " A  traces/diff_base.json  1700 cyc"), "%s", d);
    cr_assert(strstr(d, " B  traces/diff_ops.json  1760 cyc (+3.5%)"), "%s", d);
    /* VE 1 exists only in B: A's row says so, B's delta is "new" */
    char *only = line_with(d, " VE 1 ");
    cr_assert(only && strstr(only, "(only in B)"), "%s", d);
    char *ve1 = line_with(strstr(d, " B  "), " VE 1 ");
    cr_assert(ve1 && strstr(ve1, "new"), "%s", ve1 ? ve1 : d);
    char *dma = line_with(strstr(d, " B  "), " DMA 0 ");
    cr_assert(dma && strstr(dma, "-50%"), "%s", dma ? dma : d);
    /* the summary: A, B and the change */
    cr_assert(strstr(d, " cycles      1700        1760        +60 (+3.5%)"), "%s", d);
    cr_assert(strstr(d, " ops +/-     1 removed   1 added"), "%s", d);
    cr_assert(strstr(d, "comparing: a aligns, Enter shows an op and its match, D closes"), "%s", d);
    tui_test_golden("diffview_120x30", d);
    free(d);
    keys(&f, "\x1b"); /* Esc: the message goes, the footer lists the keys of the comparison */
    d = frame(&f);
    cr_assert(strstr(d, "q quit  ? help  D close  a align"), "%s", d);
    free(d);
    /* the rest of the summary: the config key that differs, the launches */
    keys(&f, "\tjjjjjjjjjj");
    d = frame(&f);
    cr_assert(strstr(d, "npu.num_ve: 2 -> 3"), "%s", d);
    cr_assert(strstr(d, "kernel launches (cycles)"), "%s", d);
    cr_assert(strstr(d, " cmdq 3      100         -           only in A"), "%s", d);
    free(d);
    teardown(&f);
}

Test(tui_diffview, an_op_and_its_match_in_the_details)
{
    struct fixture f;
    setup(&f, 120, 30);
    free(frame(&f));
    keys(&f, "j]"); /* the row DMA 0 ... rows are sorted: DMA 0, TE 0, TE 1, VE 0, VE 1 */
    keys(&f, "kg]");
    char *d = frame(&f);
    cr_assert(strstr(d, " op          DMA_LOAD_TILE"), "%s", d);
    cr_assert(strstr(d, "DMA_LOAD_TILE            DMA_LOAD_TILE") ||
                  strstr(d, "DMA_LOAD_TILE  ") != NULL,
              "%s", d);
    cr_assert(strstr(d, " change      cycles ="), "%s", d);
    free(d);
    /* nothing selected, the cursor on an op's start: ] takes that op */
    keys(&f, "\x1b]");
    d = frame(&f);
    cr_assert(strstr(d, " op          DMA_LOAD_TILE"), "%s", d);
    free(d);
    /* the next op on DMA 0 is DMA_STORE_TILE, removed in B */
    keys(&f, "]");
    d = frame(&f);
    cr_assert(strstr(d, "(no match: only in A)"), "%s", d);
    free(d);
    /* TE 0's GEMM is 100 cycles longer in B */
    keys(&f, "jg]");
    d = frame(&f);
    cr_assert(strstr(d, "TE_GEMM_TILE"), "%s", d);
    cr_assert(strstr(d, " change      cycles +100 (+50.0%)"), "%s", d);
    free(d);
    teardown(&f);
}

Test(tui_diffview, align_toggles_and_other_keys_are_refused)
{
    struct fixture f;
    setup(&f, 120, 30);
    free(frame(&f));
    keys(&f, "a");
    char *d = frame(&f);
    cr_assert(strstr(d, " Compare  aligned at each matched launch"), "%s", d);
    cr_assert(strstr(d, "B aligned at the start of each matched launch"), "%s", d);
    free(d);
    keys(&f, "a");
    d = frame(&f);
    cr_assert(strstr(d, " Compare  one time axis"), "%s", d);
    free(d);
    keys(&f, "/");
    d = frame(&f);
    cr_assert(strstr(d, "not while comparing (D closes)"), "%s", d);
    free(d);
    cr_assert_eq(tui_app_key(f.a, 'q'), TUI_RES_QUIT, "q still quits");
    teardown(&f);
}

Test(tui_diffview, D_closes_and_opens_with_the_prompt)
{
    struct fixture f;
    setup(&f, 100, 30);
    free(frame(&f));
    keys(&f, "D");
    char *d = frame(&f);
    cr_assert(strstr(d, "Gantt "), "the usual view again: %s", d);
    cr_assert(strstr(d, "comparison closed"), "%s", d);
    free(d);
    keys(&f, "D");
    d = frame(&f);
    cr_assert(strstr(d, "compare with trace: "), "%s", d);
    free(d);
    keys(&f, DATA "negative_cycle.json\r");
    d = frame(&f);
    cr_assert(strstr(d, "negative_cycle.json: timeline_events[0].start_cycle: -5 is negative"),
              "validate's message: %s", d);
    cr_assert(strstr(d, "Gantt "), "%s", d);
    free(d);
    keys(&f, "D" DATA "diff_ops.json\r");
    d = frame(&f);
    cr_assert(strstr(d, " Compare  "), "%s", d);
    free(d);
    teardown(&f);
}

Test(tui_diffview, small_windows_and_ascii)
{
    struct tui_source *src =
        tui_source_model_take(load(DATA "diff_base.json"), "traces/diff_base.json");
    struct tui_app *a = tui_app_new(src, 60, 14, false, NULL, NULL, NULL, NULL);
    tui_app_diff_take(a, load(DATA "diff_ops.json"), "diff_ops.json");
    while (tui_app_busy(a)) /* the comparison, on its worker */
        tui_app_work(a, 1000000000);
    char *d = tui_canvas_dump(tui_app_render(a), false);
    cr_assert(strstr(d, " Compare "), "%s", d);
    cr_assert(strstr(d, "d busy"), "ASCII heading of the delta column: %s", d);
    for (const char *p = d; *p; p++)
        cr_assert((unsigned char)*p < 0x80, "ASCII only: %s", d);
    free(d);
    tui_app_key(a, '\t');
    d = tui_canvas_dump(tui_app_render(a), false);
    cr_assert(strstr(d, "Summary  A -> B"), "Tab: the summary alone: %s", d);
    free(d);
    tui_app_resize(a, 30, 8);
    d = tui_canvas_dump(tui_app_render(a), false);
    cr_assert(strstr(d, "window too small"), "%s", d);
    free(d);
    tui_app_free(a);
    tui_source_free(src);
}
