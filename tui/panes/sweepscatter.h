/*
 * Time against energy over a sweep's points (the sweep table's `e`): a scatter of each
 * point that has both, time across and energy up, with the Pareto front marked (the points
 * no other point beats on both: nothing faster for less energy) and the selected point
 * highlighted. tui_sweep_pareto says which points are on the front.
 */
#ifndef TUI_SWEEPSCATTER_H
#define TUI_SWEEPSCATTER_H

#include "tui/sweep/sweep.h"
#include "tui/term/canvas.h"

#include <stdbool.h>
#include <stddef.h>

/* Which rows of t are on the Pareto front of (time_ns, energy_j): on[i] for row i (false
 * for a row without both figures, or not ok). Returns how many are. */
size_t tui_sweep_pareto(const struct tui_sweep_table *t, bool *on);

/* Draw the scatter of t into r of c; sel is the selected row (NULL: none). */
void tui_sweep_scatter_render(const struct tui_sweep_table *t, const struct tui_sweep_row *sel,
                              struct tui_canvas *c, struct tui_rect r);

#endif
