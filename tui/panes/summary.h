/*
 * The summary pane: where the time went, in numbers. Utilization per engine kind as bars,
 * DRAM bytes read and written, bandwidth min / mean / max against the configured peak, the
 * busiest components, token latencies. Recomputed when the model changes.
 */
#ifndef TUI_SUMMARY_H
#define TUI_SUMMARY_H

#include "tui/panes/pane.h"

struct tui_summary;

/* A summary pane over the view's model (borrowed through v, which must outlive it). */
struct tui_summary *tui_summary_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_summary_free(struct tui_summary *s);

/* Its operations (tui/panes/pane.h); self is the struct tui_summary. */
extern const struct tui_pane_ops tui_summary_ops;

#endif
