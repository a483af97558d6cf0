/*
 * The anomaly pane: what trace/verdict/anomaly.h finds in the trace (INVALID_TRACE markers, slow
 * ops, idle gaps inside a launch, bandwidth above the peak), one line each in time order.
 * Enter, n and N (next, previous) show one on the Gantt: zoomed to it, its op selected.
 * Recomputed when the model changes, at most every second or so while a live model grows.
 */
#ifndef TUI_ANOMALIES_H
#define TUI_ANOMALIES_H

#include "tui/panes/pane.h"

struct tui_anomalies;

/* An anomaly pane over the view's model (borrowed through v, which must outlive it). */
struct tui_anomalies *tui_anomalies_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_anomalies_free(struct tui_anomalies *a);

/* Its operations (tui/panes/pane.h); self is the struct tui_anomalies. */
extern const struct tui_pane_ops tui_anomalies_ops;

#endif
