/*
 * The bottleneck pane (v): where the time goes. A line for the run and one per kernel
 * launch (host messages that run no kernel summed on one line): its time, what bounded it
 * and that bound's share of the critical path, the busy share of each engine kind; below,
 * the evidence of the selected line (trace/verdict/verdict.h). Enter shows the selected launch's
 * critical path on the Gantt. Live, the verdict follows the run (a launch still running
 * says so), computed again at most about twice a second and never for more than a tenth
 * of the time.
 *
 * A loaded trace's verdict is computed ahead, before the key (tui_bottleneck_ahead): once
 * the first frame is drawn, so that v shows it at once, or the progress of the computation
 * under way. A live run's is kept warm the same way past a million events, following the
 * run while the pane is closed as it does while it is open (each verdict taken on from the
 * last). The experiment
 * starts only once the pane opens.
 *
 * A saved trace opened through the cache keeps the verdict it judged beside its index
 * (trace/cache/vcache.h), written on a thread of its own once the verdict is on screen (with
 * the pane closed, once no analysis a key asked for runs: the path C waits for comes
 * first), and a later view of the same trace reads it back rather than judging it again.
 * Its paths keep their steps' spans (trace_critpath.spans), which the Gantt draws a path
 * of without looking its ops up, the path itself lent rather than copied.
 */
#ifndef TUI_BOTTLENECK_H
#define TUI_BOTTLENECK_H

#include "tui/panes/pane.h"

struct tui_bottleneck;

/* A bottleneck pane over the view's model (borrowed through v, which must outlive it). */
struct tui_bottleneck *tui_bottleneck_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_bottleneck_free(struct tui_bottleneck *b);
/* The process is about to end without freeing b: a verdict being kept is waited for a
 * moment (TUI_BOTTLENECK_KEEP_WAIT_MS), then given up (its temporary file removed: none is
 * kept). NULL: nothing. */
enum { TUI_BOTTLENECK_KEEP_WAIT_MS = 200 };
void tui_bottleneck_leave(struct tui_bottleneck *b);

/*
 * Compute a loaded trace's verdict ahead while the pane is closed (call it between frames
 * once the first is drawn): once, on the worker (tui/panes/task.h, a task run ahead: the
 * user's analyses come first). A live run's follows the run as the open pane's does (at its
 * priority: it holds the run while it works). Returns whether it asks to be called again
 * soon: a loaded trace's while its verdict is judged, until it is taken and kept beside the
 * index (nothing else wakes the loop when the run ends: a viewer left alone, then closed,
 * would keep none).
 */
bool tui_bottleneck_ahead(struct tui_bottleneck *b, struct tui_view *v);

/* Its operations (tui/panes/pane.h); self is the struct tui_bottleneck. */
extern const struct tui_pane_ops tui_bottleneck_ops;

#endif
