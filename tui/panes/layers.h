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

struct tui_layers;

/* A layer pane over the view's model (borrowed through v, which must outlive it). */
struct tui_layers *tui_layers_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_layers_free(struct tui_layers *l);

/* Its operations (tui/panes/pane.h); self is the struct tui_layers. */
extern const struct tui_pane_ops tui_layers_ops;

#endif
