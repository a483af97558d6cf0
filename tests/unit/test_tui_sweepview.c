/*
 * The sweep table in the TUI (tui/panes/sweepview.h), rendered headlessly: sorting by the
 * cursor's column, the plot following the cursor, marking and comparing, text from the
 * results escaped, a window too small.
 */
#include "tui/term/keymap.h"
#include "tui/sweep/sweep.h"
#include "tui/panes/sweepview.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table of a 2 x 2 sweep as collect gives it. */
static void make_table(struct tui_sweep_table *t)
{
    memset(t, 0, sizeof(*t));
    t->dir = strdup("out");
    t->sweep_file = strdup("sweep.yaml");
    t->naxes = 2;
    t->axes = calloc(2, sizeof(char *));
    t->axes[0] = strdup("pe.dma.gbps");
    t->axes[1] = strdup("n");
    t->nrows = 4;
    t->rows = calloc(4, sizeof(*t->rows));
    static const int gbps[] = {16, 16, 64, 64}, n[] = {65536, 262144, 65536, 262144};
    static const double cycles[] = {122690, 456098, 85826, 308642};
    static const double kcycles[] = {98003, 431411, 61139, 283955};
    for (size_t i = 0; i < 4; i++) {
        struct tui_sweep_row *r = &t->rows[i];
        snprintf(r->id, sizeof(r->id), "%04zu", i);
        r->params = sim_value_map();
        sim_value_map_set_int(r->params, "pe.dma.gbps", gbps[i]);
        sim_value_map_set_int(r->params, "n", n[i]);
        r->status = TUI_SWEEP_OK;
        r->m = (struct tui_sweep_metrics){cycles[i], cycles[i],  0.4, 0, 0.01, 1,   1,   6.5,
                                          0.1,       kcycles[i], 0.5, 0, 0.02, NAN, NAN, NAN};
        r->trace = strdup("points/x/trace.json");
    }
    t->rows[3].status = TUI_SWEEP_FAILED;
    t->rows[3].error = strdup("boom \x1b[31m");
    t->n_ok = 3;
    t->n_failed = 1;
}

/* The row (0-based, after the column header) of the canvas that shows point id. */
static int row_of(const char *dump, const char *id)
{
    int line = 0;
    for (const char *p = dump; *p; line++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 8 && strncmp(p + 2, id, strlen(id)) == 0 && p[2 + strlen(id)] == ' ')
            return line;
        p += len + (nl != NULL);
    }
    return -1;
}

Test(tui_sweepview, sorts_plots_marks_and_escapes)
{
    struct tui_sweep_table t;
    make_table(&t);
    struct tui_sweepview *v = tui_sweepview_new(&t);
    struct tui_canvas *c = tui_canvas_new(150, 30, false); /* wide enough for the error */
    tui_sweepview_render(v, c);
    char *dump = tui_canvas_dump(c, false);
    cr_assert(strstr(dump, " SWEEP  out  4 points: 3 ok, 1 failed"), "%s", dump);
    cr_assert(strstr(dump, "pe.dma.gbps"), "%s", dump);
    cr_assert(row_of(dump, "0000") < row_of(dump, "0002"), "%s", dump);
    /* the error's escape sequence is shown escaped */
    cr_assert(strstr(dump, "boom \\e[31m"), "%s", dump);
    cr_assert(!strchr(dump, '\x1b'));
    /* the plot: cycles against the first axis, through point 0000 */
    cr_assert(strstr(dump, "cycles_total vs pe.dma.gbps (n=65536)"), "%s", dump);
    cr_assert(strstr(dump, "122690"), "%s", dump);
    free(dump);

    /* the cursor onto cycles_total (id, two axes, status, cycles), s sorts by it */
    for (int i = 0; i < 4; i++)
        tui_sweepview_key(v, TUI_KEY_RIGHT);
    cr_assert_eq(tui_sweepview_key(v, 's'), TUI_SWEEPVIEW_REDRAW);
    tui_sweepview_render(v, c);
    dump = tui_canvas_dump(c, false);
    cr_assert(row_of(dump, "0002") < row_of(dump, "0000"), "%s", dump);
    cr_assert(row_of(dump, "0000") < row_of(dump, "0003"), "%s", dump);
    cr_assert(row_of(dump, "0003") < row_of(dump, "0001"), "%s", dump);
    cr_assert(strstr(dump, "cycles_total^"), "%s", dump);
    free(dump);
    /* again: descending */
    tui_sweepview_key(v, 's');
    tui_sweepview_render(v, c);
    dump = tui_canvas_dump(c, false);
    cr_assert(row_of(dump, "0001") < row_of(dump, "0003"), "%s", dump);
    free(dump);
    /* the selection stays on its point: 0000, now the third row */
    cr_assert_str_eq(tui_sweepview_selected(v)->id, "0000");
    cr_assert_eq(tui_sweepview_key(v, TUI_KEY_ENTER), TUI_SWEEPVIEW_OPEN);

    /* the cursor back onto n: the plot follows */
    tui_sweepview_key(v, TUI_KEY_LEFT);
    tui_sweepview_key(v, TUI_KEY_LEFT);
    tui_sweepview_render(v, c);
    dump = tui_canvas_dump(c, false);
    cr_assert(strstr(dump, "cycles_total vs n (pe.dma.gbps=16)"), "%s", dump);
    free(dump);

    /* compare: a mark first */
    cr_assert_eq(tui_sweepview_key(v, 'd'), TUI_SWEEPVIEW_REDRAW);
    tui_sweepview_key(v, ' ');
    cr_assert_str_eq(tui_sweepview_marked(v)->id, "0000");
    tui_sweepview_key(v, TUI_KEY_UP);
    cr_assert_eq(tui_sweepview_key(v, 'd'), TUI_SWEEPVIEW_COMPARE);
    cr_assert_eq(tui_sweepview_key(v, 'q'), TUI_SWEEPVIEW_QUIT);

    /* too small a window says so */
    tui_canvas_resize(c, 30, 5);
    tui_sweepview_render(v, c);
    dump = tui_canvas_dump(c, false);
    cr_assert(strstr(dump, "window too small"), "%s", dump);
    free(dump);
    tui_canvas_free(c);
    tui_sweepview_free(v);
    tui_sweep_table_fini(&t);
}
