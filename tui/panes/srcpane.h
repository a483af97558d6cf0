/*
 * The source pane: the kernel source of the selected op (the kernel of its launch), one
 * row per line with the ops the line issued, their cycles per engine kind and their share
 * of the kernel's (trace/analysis/srcprof.h, computed once per model change from the
 * events' compact site ids, at most every second while a live model grows); lines of
 * other files the kernel called the API from (a helper's) follow the source. A marker in
 * the margin shows how many PEs' last op came from the line, now (live) or at the time
 * cursor (a saved trace); '*' instead of '>' when the selected op's PE is among them. Enter
 * highlights the line's ops on the Gantt and shows the first; n and N walk them. When the source
 * file cannot be found (the current directory, the built-in kernels) it says so and shows the
 * per-line table alone.
 */
#ifndef TUI_SRCPANE_H
#define TUI_SRCPANE_H

#include "tui/panes/pane.h"

struct tui_srcpane;

/* A source pane over the view's model (borrowed through v, which must outlive it). */
struct tui_srcpane *tui_srcpane_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_srcpane_free(struct tui_srcpane *p);

/* Step by line on a model that does not run (a saved trace, a finished run): select the
 * next op, after the focused one, of the focused op's PE (any PE when none is focused) from
 * another call site than the focused op's (trace/analysis/srcstep.h), through a goto of the
 * view (the time cursor to its start), and say where in the status line. */
void tui_srcpane_step_line(struct tui_view *v);

/* Its operations (tui/panes/pane.h); self is the struct tui_srcpane. */
extern const struct tui_pane_ops tui_srcpane_ops;

#endif
