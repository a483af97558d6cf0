/*
 * The sweep table in the TUI (`npuscope view DIR` on a sweep directory): a row per point
 * with its parameters and headline metrics, sortable by any column, and a small bar plot
 * of a metric against one axis through the selected point (the other axes held at its
 * values), drawn with block characters like the Gantt's. It holds view state only and
 * borrows the table (tui/sweep/sweep.h); it renders into a canvas and never touches the
 * terminal, so it is tested headlessly. The caller (tui/cli/cli_sweep.c) owns the loop and
 * carries out what a key asks for: open a point's trace, compare two points, reload.
 */
#ifndef TUI_SWEEPVIEW_H
#define TUI_SWEEPVIEW_H

#include "tui/term/canvas.h"
#include "tui/sweep/sweep.h"

#include <stdbool.h>

struct tui_sweepview;

/* What a key asks the caller to do. */
enum tui_sweepview_event {
    TUI_SWEEPVIEW_NONE,    /* nothing changed */
    TUI_SWEEPVIEW_REDRAW,  /* render again */
    TUI_SWEEPVIEW_QUIT,    /* leave */
    TUI_SWEEPVIEW_OPEN,    /* open the selected point's trace */
    TUI_SWEEPVIEW_COMPARE, /* compare the marked point with the selected one */
    TUI_SWEEPVIEW_RELOAD,  /* read the results again (tui_sweepview_set_table) */
};

/* A view of t (borrowed: it must outlive the view or be replaced first). */
struct tui_sweepview *tui_sweepview_new(const struct tui_sweep_table *t);
void tui_sweepview_free(struct tui_sweepview *v);

/* Show t instead (the results read again): the sort, the selected and the marked points
 * (by id) and the plot stay. */
void tui_sweepview_set_table(struct tui_sweepview *v, const struct tui_sweep_table *t);

/* A key (a code point or TUI_KEY_*). */
enum tui_sweepview_event tui_sweepview_key(struct tui_sweepview *v, int key);

/* The selected point, and the one marked for comparison (NULL when none). Borrowed. */
const struct tui_sweep_row *tui_sweepview_selected(const struct tui_sweepview *v);
const struct tui_sweep_row *tui_sweepview_marked(const struct tui_sweepview *v);

/* A message for the status line (trusted text; cleared by the next key). */
void tui_sweepview_status(struct tui_sweepview *v, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Draw the whole view into c. */
void tui_sweepview_render(struct tui_sweepview *v, struct tui_canvas *c);

#endif
