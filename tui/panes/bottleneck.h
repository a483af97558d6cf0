/*
 * The bottleneck pane (v): where the time goes. A line for the run and one per kernel
 * launch (host messages that run no kernel summed on one line): its time, what bounded it
 * and that bound's share of the critical path, the busy share of each engine kind; below,
 * the evidence of the selected line (trace/verdict/verdict.h). Enter shows the selected launch's
 * critical path on the Gantt. Live, the verdict follows the run (a launch still running
 * says so), computed again at most about twice a second and never for more than a tenth
 * of the time.
 */
#ifndef TUI_BOTTLENECK_H
#define TUI_BOTTLENECK_H

#include "tui/panes/pane.h"

struct tui_bottleneck;

/* A bottleneck pane over the view's model (borrowed through v, which must outlive it). */
struct tui_bottleneck *tui_bottleneck_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_bottleneck_free(struct tui_bottleneck *b);

/* Its operations (tui/panes/pane.h); self is the struct tui_bottleneck. */
extern const struct tui_pane_ops tui_bottleneck_ops;

#endif
