/*
 * The memory pane: per memory space (hbm, tcm, sram, ...; dram and spm for spec traces), a
 * tab listing the regions the trace shows being read and written: address, bytes, shape
 * and dtype when known, first and last access, read and write counts, the last writer, and
 * which regions are live at the cursor's time. Derived from the events' details
 * (ADR-0052 D3 src_space/src_addr/dst_space/dst_addr/nbytes..., a spec trace's dram_addr
 * and bytes) and MEM_ACCESS_EVENTs; computed in the background, a slice per frame, from
 * the first time the pane is shown.
 */
#ifndef TUI_MEMINSPECT_H
#define TUI_MEMINSPECT_H

#include "tui/panes/pane.h"

struct tui_meminspect;

/* A memory pane over the view's model (borrowed through v, which must outlive it). */
struct tui_meminspect *tui_meminspect_new(struct tui_view *v);
/* Free the pane (NULL is a no-op). */
void tui_meminspect_free(struct tui_meminspect *mi);

/* Its operations (tui/panes/pane.h); self is the struct tui_meminspect. */
extern const struct tui_pane_ops tui_meminspect_ops;

/* For tests: the spaces found so far and the regions of one. */
size_t tui_meminspect_space_count(const struct tui_meminspect *mi);
const char *tui_meminspect_space_name(const struct tui_meminspect *mi, size_t i);
size_t tui_meminspect_region_count(const struct tui_meminspect *mi, size_t space);

#endif
