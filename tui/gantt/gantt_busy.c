/*
 * The busy cycles of the Gantt's cells within a frame (see gantt_int.h): per track and
 * column, bounds from the model's level-of-detail summaries (trace/model/lod.h), made exact
 * (from the track's index) only for the cells whose drawing they do not settle.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/xalloc.h"
#include "trace/model/lod.h"

#include <stdlib.h>
#include <string.h>

/*
 * Bounds on the busy cycles of track in column i ([0] low, [1] high), computed once per
 * frame from the model's level-of-detail summary (trace/model/lod.h): no event is read
 * for a column whose boundaries the summary settles. busy_exact makes them the busy cycles
 * themselves (two lookups in the track's index).
 */
static const uint64_t *busy_bounds(struct tui_gantt *g, uint32_t track, int i)
{
    uint64_t *row = g->busy + (size_t)track * (size_t)g->plot_w * 2;
    if (!g->busy_done[track]) {
        /* one pair of bounds per column boundary: neighbouring columns share it */
        uint64_t prev_b = UINT64_MAX, plo = 0, phi = 0;
        for (int k = 0; k < g->plot_w; k++) {
            uint64_t a, b, alo, ahi, blo, bhi;
            tui_gantt_cell_range(g, k, &a, &b);
            if (a == prev_b)
                alo = plo, ahi = phi;
            else
                trace_model_track_cover_bounds(g->m, track, a, &alo, &ahi);
            trace_model_track_cover_bounds(g->m, track, b, &blo, &bhi);
            row[2 * k] = blo > ahi ? blo - ahi : 0;
            row[2 * k + 1] = bhi - alo < b - a ? bhi - alo : b - a;
            prev_b = b, plo = blo, phi = bhi;
        }
        g->busy_done[track] = 1;
    }
    return row + 2 * i;
}

uint64_t tui_gantt_busy_exact(struct tui_gantt *g, uint32_t track, int i)
{
    busy_bounds(g, track, i);
    uint64_t *r = g->busy + ((size_t)track * (size_t)g->plot_w + (size_t)i) * 2;
    if (r[0] != r[1]) {
        uint64_t a, b;
        tui_gantt_cell_range(g, i, &a, &b);
        r[0] = r[1] =
            trace_model_track_cover(g->m, track, b) - trace_model_track_cover(g->m, track, a);
    }
    return r[0];
}

void tui_gantt_busy_bounds(struct tui_gantt *g, uint32_t track, int i, uint64_t *lo, uint64_t *hi)
{
    const uint64_t *r = busy_bounds(g, track, i);
    *lo = r[0], *hi = r[1];
}

void tui_gantt_busy_reset(struct tui_gantt *g)
{
    size_t nt = trace_model_track_count(g->m);
    size_t need = nt * (size_t)g->plot_w * 2;
    if (need > g->busy_cap) {
        free(g->busy);
        g->busy = sim_xcalloc(need, sizeof(*g->busy));
        g->busy_cap = need;
    }
    if (nt > g->busy_done_cap) {
        free(g->busy_done);
        g->busy_done = sim_xcalloc(nt, 1);
        g->busy_done_cap = nt;
    }
    if (nt)
        memset(g->busy_done, 0, nt);
}
