/*
 * The Gantt pane: a row per track, grouped and foldable by the dotted component id
 * (sip / cube / PE) or, for spec traces, by engine kind; a time ruler; a time cursor;
 * markers, tokens and bandwidth as bands above the rows. Zoomed out, a cell shows how
 * busy its track is over the cell's time span (trace_model_track_busy: block eighths for
 * a bar edge, shades for scattered work), never just the last op drawn; it is coloured by
 * the op kind that takes most of the span.
 */
#ifndef TUI_GANTT_H
#define TUI_GANTT_H

#include "tui/panes/pane.h"

struct tui_gantt;

/* A Gantt pane over the view's model, fitted to the whole trace. v must outlive it. */
struct tui_gantt *tui_gantt_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_gantt_free(struct tui_gantt *g);

/* Its operations (tui/panes/pane.h); self is the struct tui_gantt. */
extern const struct tui_pane_ops tui_gantt_ops;

/*
 * Search: select the next (dir > 0) or previous (dir < 0) op whose op name or component
 * matches pattern (case-insensitive substring), after or before the selected op (the
 * cursor when none), wrapping around; its row is unfolded and scrolled to, the cursor
 * moves to its start. Returns the number of matches in the trace (0: nothing changed);
 * *wrapped tells whether the search went round.
 */
uint64_t tui_gantt_search(struct tui_gantt *g, struct tui_view *v, const char *pattern, int dir,
                          bool *wrapped);

/*
 * The same search on a worker thread (tui/panes/task.h; a live model is held still while it
 * runs), as the app's /, n and N do: returns at once; the pane's work then says its progress
 * in the status line and, once it is done, selects the op and says what tui_gantt_search's
 * caller says (the count, whether it wrapped, or that nothing matched). The same pattern
 * again while it runs (n, N) walks on once it is done; another pattern replaces it.
 */
void tui_gantt_search_start(struct tui_gantt *g, struct tui_view *v, const char *pattern, int dir);

/* Whether a search started by tui_gantt_search_start is running. */
bool tui_gantt_searching(const struct tui_gantt *g);

/* Select model event i as a search would: its row unfolded and selected, the cursor at
 * its start, the view showing it. */
void tui_gantt_select(struct tui_gantt *g, struct tui_view *v, uint64_t i);

/* Zoom and pan to show [t0, t1) with a little room on each side (as close as the zoom
 * allows), and put the cursor at cursor (clamped into the view). */
void tui_gantt_show_span(struct tui_gantt *g, struct tui_view *v, uint64_t t0, uint64_t t1,
                         uint64_t cursor);

/* The user's zoom and place on the time axis, to put back after something else moved them
 * (going back resumes a checkpoint's view; a comparison shows its own). */
struct tui_gantt_zoom {
    double cpc, t0;   /* cycles per column, the first column's cycle */
    bool fit, follow; /* the whole trace fitted; live: the right edge at now */
};
void tui_gantt_zoom_get(const struct tui_gantt *g, struct tui_gantt_zoom *z);
/* Put z back: the zoom as it was; the place too, panned to now when it followed now. */
void tui_gantt_zoom_set(struct tui_gantt *g, const struct tui_gantt_zoom *z);

/* Live: true while the view keeps "now" in sight (fitted, or its right edge at now). */
bool tui_gantt_following(const struct tui_gantt *g);

/* The visible time span [*t0, *t1) and the cycles per column of the last layout. */
void tui_gantt_span(const struct tui_gantt *g, uint64_t *t0, uint64_t *t1, double *cpc);

/* Show z (a run started again from event 0 keeps the last one's zoom): at once when it is
 * fitted, else once the trace reaches the end of z's span, or when tui_gantt_settle_zoom
 * says the trace will grow no more. */
void tui_gantt_want_zoom(struct tui_gantt *g, const struct tui_gantt_zoom *z);
void tui_gantt_settle_zoom(struct tui_gantt *g);

/* The label of the selected row (the track or group name), or "". */
const char *tui_gantt_selected_label(const struct tui_gantt *g);

#endif
