/*
 * The token pane: the trace's TOKEN_EVENTs (trace/analysis/tokens.h) with their phase, latency and
 * the DRAM bytes read and written within each token's span (KV-cache bytes among them),
 * under a chart of decode latency over the token index drawn with block characters.
 * Enter zooms the Gantt to the selected token. Recomputed when the model changes, at most
 * a few times a second while a live model grows.
 */
#ifndef TUI_TOKENS_H
#define TUI_TOKENS_H

#include "tui/panes/pane.h"

struct tui_tokens;

/* A token pane over the view's model (borrowed through v, which must outlive it). */
struct tui_tokens *tui_tokens_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_tokens_free(struct tui_tokens *t);

/* Its operations (tui/panes/pane.h); self is the struct tui_tokens. */
extern const struct tui_pane_ops tui_tokens_ops;

#endif
