/*
 * The details pane: every field of one op (the selected one, else the one under the time
 * cursor on the selected row): name, component, kind (the record's op_kind; for a
 * TileToken stage also the engine work of its stage type), engine, start, end, duration
 * in cycles and ns, layer, tile, cmdq, and all its details (op record params) as a tree,
 * in flight as when finished.
 * With no op, what lies at the cursor's time (tokens, the last marker).
 */
#ifndef TUI_DETAILS_H
#define TUI_DETAILS_H

#include "tui/panes/pane.h"

struct tui_details;

/* A details pane over the view's model (borrowed through v, which must outlive it). */
struct tui_details *tui_details_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_details_free(struct tui_details *d);

/* Its operations (tui/panes/pane.h); self is the struct tui_details. */
extern const struct tui_pane_ops tui_details_ops;

#endif
