/*
 * The layer breakdown pane: a table of the trace's layer_ids (trace/analysis/regions.h, the layer
 * split), each unfoldable into its op names, with the span of its ops, busy cycles per
 * engine kind, its share of the run, DRAM bytes and op count; sorted by any column
 * (left / right choose it, r reverses). Enter zooms the Gantt to the layer (or op name)
 * and highlights its ops there. Recomputed when the model changes, at most a few times a
 * second while a live model grows.
 */
#ifndef TUI_LAYERS_H
#define TUI_LAYERS_H

#include "tui/panes/pane.h"

#include <stdbool.h>

struct tui_layers;

/* A layer pane over the view's model (borrowed through v, which must outlive it). */
struct tui_layers *tui_layers_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_layers_free(struct tui_layers *l);

/* The layers of a loaded trace computed ahead of y, with the pane closed (the app calls it
 * once the verdict ahead is done, from frame to frame): at the lowest priority, behind the
 * user's analyses (tui/panes/task.h), so that y shows them at once; once the pane opens, a
 * run under way goes on as its own. Live, nothing (a run would hold the model). Returns
 * whether a run is under way. */
bool tui_layers_ahead(struct tui_layers *l, const struct tui_view *v);

/* Its operations (tui/panes/pane.h); self is the struct tui_layers. */
extern const struct tui_pane_ops tui_layers_ops;

#endif
