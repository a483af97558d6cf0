/*
 * The source pane: the kernel source of the selected op (the kernel of its launch), one
 * row per line with the ops the line issued, their cycles per engine kind and their share
 * of the kernel's (trace/analysis/srcprof.h, computed once per model change from the
 * events' compact site ids, at most every second while a live model grows); lines of
 * other files the kernel called the API from (a helper's) follow the source. Live, a
 * marker in the margin shows how many PEs' last op came from the line. Enter highlights
 * the line's ops on the Gantt and shows the first; n and N walk them. When the source file
 * cannot be found (the current directory, the built-in kernels) it says so and shows the
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

/* Its operations (tui/panes/pane.h); self is the struct tui_srcpane. */
extern const struct tui_pane_ops tui_srcpane_ops;

#endif
