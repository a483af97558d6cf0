/*
 * The live memory inspector: the memory pane of a simulation running in the process or
 * served to this viewer (read through tui/source/memview.h). A tab per space of the memory store
 * (hbm, tcm, sram, ...) lists every tensor there: address, shape, dtype, bytes, and the
 * op that last wrote it with its time; a pattern region is one row whatever its size, its
 * pattern ("pattern zero", "fill 0x3c00") as the writer. Enter shows the selected tensor's
 * values as a scrollable table formatted for its dtype (x: the raw bytes in hex), read a
 * value at a time (a pattern region is never materialised; a value not fetched yet from a
 * served run shows as '.'); Esc goes back to the list. Everything is read through the view
 * at each redraw, and its generation says when to redraw, so the pane is right after
 * every step.
 */
#ifndef TUI_MEMLIVE_H
#define TUI_MEMLIVE_H

#include "tui/panes/pane.h"

struct tui_memlive;
struct tui_memview;

/* A pane over a memory view (tui/source/memview.h; borrowed: it must outlive the pane). */
struct tui_memlive *tui_memlive_new(struct tui_memview *mem, struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_memlive_free(struct tui_memlive *p);

/* Its operations (tui/panes/pane.h); self is the struct tui_memlive. */
extern const struct tui_pane_ops tui_memlive_ops;

/*
 * Format element i of a tensor of dtype (data: its bytes) as the value table shows it:
 * floats with up to 6 significant digits (%.6g), integers exactly, bool as 0 / 1. Returns
 * buf. For tests.
 */
char *tui_memlive_format(int dtype, const void *data, size_t i, char *buf, size_t size);

#endif
