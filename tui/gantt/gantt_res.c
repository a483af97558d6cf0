/*
 * The Gantt's utilization rows (see gantt_int.h): a row per resource with bandwidth
 * samples, each column a block as high as the share of the resource's peak it carried
 * over the column's cycles (the eighths of a sparkline). gantt_rows.c places them: an HBM
 * in its cube's group, the links under a group of their own after everything else, folded
 * when it first appears (there are dozens), each labelled by what its ends do not share.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/resources.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tui_gantt_res_sync(struct tui_gantt *g)
{
    if (!g->res) {
        g->res = trace_resources_new(g->m);
        g->res_synced = tui_now_ns();
    } else {
        /* rebuilt at most every 100 times what the last rebuild took (1% of the time): a
         * long run's hundreds of thousands of samples take milliseconds, a few steps' none,
         * so what a step added shows at once (as going back to it shows it) */
        uint64_t now = tui_now_ns();
        if (now - g->res_synced < 100 * g->res_cost &&
            g->res_built == trace_resources_count(g->res))
            return false;
        if (trace_resources_sync(g->res)) {
            g->res_synced = tui_now_ns();
            g->res_cost = g->res_synced - now;
            return true; /* new samples: the rows redraw */
        }
    }
    return trace_resources_count(g->res) != g->res_built;
}

/* The resources below node (itself when it is one), into out (n of them at most). */
static size_t res_below(const struct tui_gantt *g, int node, size_t *out, size_t cap, size_t n)
{
    const struct gnode *x = &g->nodes[node];
    if (x->is_res) {
        if (n < cap)
            out[n++] = x->res;
        return n;
    }
    for (size_t k = 0; k < x->nkids; k++)
        n = res_below(g, x->kids[k], out, cap, n);
    return n;
}

void tui_gantt_draw_res_row(struct tui_gantt *g, struct tui_canvas *c, int y, int node,
                            const struct tui_glyphs *gl)
{
    size_t cap = trace_resources_count(g->res) + 1;
    size_t *rs = sim_xcalloc(cap, sizeof(*rs));
    size_t n = res_below(g, node, rs, cap, 0);
    /* live: nothing past now, whatever a transfer under way reported of its end (a run gone
     * back to a time draws what the run going forward drew there) */
    uint64_t now = trace_model_now(g->m);
    for (int i = 0; n && i < g->plot_w; i++) {
        uint64_t a, b;
        tui_gantt_cell_range(g, i, &a, &b);
        if (now && a >= now)
            break;
        if (now && b > now)
            b = now;
        double u = 0;
        for (size_t k = 0; k < n; k++) {
            double x = trace_resources_util(g->res, rs[k], a, b);
            u = x > u ? x : u;
        }
        if (!(u > 0))
            continue;
        int level = (int)ceil(u * 8 - 1e-9);
        level = level < 1 ? 1 : level > 8 ? 8 : level;
        tui_canvas_put(c, g->plot_x + i, y, gl->spark[level],
                       g->nodes[node].is_res ? TUI_STYLE_BANDWIDTH : TUI_STYLE_GROUP);
    }
    free(rs);
}

void tui_gantt_res_describe(struct tui_gantt *g, struct tui_view *v, int node)
{
    const struct gnode *n = &g->nodes[node];
    const struct trace_resource *r = trace_resources_get(g->res, n->res);
    if (!r)
        return;
    uint64_t a, b;
    long col = tui_gantt_col_of(g, v->cursor);
    tui_gantt_cell_range(g, (int)(col < 0 ? 0 : col), &a, &b);
    double rd, wr, ur, uw;
    trace_resources_bytes(g->res, n->res, a, b, &rd, &wr);
    trace_resources_util2(g->res, n->res, a, b, &ur, &uw);
    double ghz = trace_model_clock_ghz(g->m);
    double cyc = (double)(b - a);
    char q[128], r1[32], w1[32], pk[32] = "";
    size_t len = trace_model_str_len(g->m, r->name);
    sim_escape(trace_model_str(g->m, r->name), len, q, sizeof(q));
    bool link = r->kind != TRACE_RES_HBM;
    if (ghz > 0) {
        snprintf(r1, sizeof(r1), "%.1f GB/s", rd / cyc * ghz);
        snprintf(w1, sizeof(w1), "%.1f GB/s", wr / cyc * ghz);
        if (r->peak > 0)
            snprintf(pk, sizeof(pk), " of %.0f GB/s", r->peak * ghz);
    } else {
        snprintf(r1, sizeof(r1), "%.1f B/cycle", rd / cyc);
        snprintf(w1, sizeof(w1), "%.1f B/cycle", wr / cyc);
    }
    tui_view_message(v, TUI_STYLE_STATUS, "%s at the cursor: %s %s (%.0f%%), %s %s (%.0f%%)%s", q,
                     link ? "towards the host" : "read", r1, ur * 100,
                     link ? "away from it" : "written", w1, uw * 100, pk);
}
