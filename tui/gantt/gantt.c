/*
 * The Gantt pane: rows (a tree of groups over the model's tracks), the view of time
 * (start, cycles per column, the cursor), and the drawing of each cell from the model's
 * busy-time index. Every cell costs a few binary searches, whatever the zoom, so a frame
 * of a trace of millions of events is drawn in milliseconds. This file holds the pane's
 * life and its sync with the model; gantt_int.h says which file does the rest.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/resources.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct tui_gantt *tui_gantt_new(struct tui_view *v)
{
    struct tui_gantt *g = sim_xcalloc(1, sizeof(*g));
    g->m = v->m;
    g->fit = true;
    g->follow = true;
    g->cpc = 1;
    g->t0 = (double)trace_model_t_min(v->m);
    g->band_markers = g->band_tokens = g->band_bw = -1;
    g->util_y = g->heat_y = g->power_y = -1;
    g->sel_node = -1;
    g->cursor_seen = v->cursor;
    tui_gantt_res_sync(g);
    tui_gantt_tree_build(g);
    tui_gantt_rows_build(g, v);
    tui_gantt_update_hover(g, v);
    g->seen_gen = trace_model_generation(v->m);
    return g;
}

void tui_gantt_free(struct tui_gantt *g)
{
    if (!g)
        return;
    tui_gantt_path_stop(g);
    tui_gantt_tree_free(g);
    tui_gantt_path_free(g, NULL);
    trace_resources_free(g->res);
    free(g->rows);
    free(g->bw.start), free(g->bw.end), free(g->bw.pre);
    free(g->busy);
    free(g->busy_done);
    tui_gantt_search_free(g);
    free(g);
}

static void gantt_free(void *self)
{
    tui_gantt_free(self);
}

/* Bring the rows and the view up to date with the model and the filters. */
static bool gantt_sync(void *self, struct tui_view *v)
{
    struct tui_gantt *g = self;
    bool changed = false;
    uint64_t gen = trace_model_generation(g->m);
    if (tui_gantt_res_sync(g))
        changed = true;
    if (trace_model_track_count(g->m) != g->tracks_built ||
        trace_resources_count(g->res) != g->res_built)
        tui_gantt_tree_build(g), changed = true;
    if (g->rows_stale || g->rows_engine != v->filter_engine || g->rows_kind != v->filter_kind) {
        tui_gantt_rows_build(g, v);
        changed = true;
    }
    if (gen != g->seen_gen) {
        g->seen_gen = gen;
        changed = true;
        if (g->zoom_wanted && (double)tui_gantt_t_max(g) >= g->want_t0 + g->plot_w * g->want_cpc)
            tui_gantt_settle_zoom(g);
        if (g->fit && (g->fit_min != tui_gantt_t_min(g) || g->fit_max != tui_gantt_t_max(g)))
            tui_gantt_view_fit(g);
        if (v->live)
            tui_gantt_follow_now(g);
    }
    if (tui_gantt_path_sync(g, v))
        changed = true;
    if (v->cursor != g->cursor_seen) { /* moved by another pane: bring it into view */
        tui_gantt_show_time(g, v->cursor);
        g->cursor_seen = v->cursor;
        changed = true;
    }
    if (changed)
        tui_gantt_update_hover(g, v);
    return changed;
}

/* The critical path being computed (gantt_path.c). */
static bool gantt_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    (void)budget_ns;
    bool path = tui_gantt_path_work(self, v);
    return tui_gantt_search_work(self, v) || path;
}

/* Where the time goes (the critical path, the strips), then the Gantt's other keys. */
static enum tui_result gantt_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_gantt *g = self;
    switch (a) {
    case TUI_ACT_PATH: return tui_gantt_path_toggle(g, v);
    case TUI_ACT_PATH_NEXT: return tui_gantt_path_step(g, v, 1);
    case TUI_ACT_PATH_PREV: return tui_gantt_path_step(g, v, -1);
    case TUI_ACT_HEATMAP:
        g->show_heat = !g->show_heat;
        g->strip_label_want = tui_gantt_strip_label_width(g, v->unicode);
        tui_view_message(v, TUI_STYLE_STATUS, "%s",
                         g->show_heat
                             ? "bandwidth heatmap: each HBM and link read (rd) and written "
                               "(wr, a link: away from the host); H hides it"
                             : "bandwidth heatmap hidden");
        return TUI_RES_REDRAW;
    case TUI_ACT_UTILIZATION:
        g->show_util = !g->show_util;
        g->strip_label_want = tui_gantt_strip_label_width(g, v->unicode);
        tui_view_message(v, TUI_STYLE_STATUS, "%s",
                         g->show_util
                             ? "utilization: the share of each engine kind busy per column; "
                               "E hides it"
                             : "utilization strip hidden");
        return TUI_RES_REDRAW;
    case TUI_ACT_POWER:
        g->show_power = (g->show_power + 1) % 3;
        g->strip_label_want = tui_gantt_strip_label_width(g, v->unicode);
        tui_view_message(v, TUI_STYLE_STATUS, "%s",
                         g->show_power == 1   ? "power: the chip's watts per column; W again: "
                                                "by component kind"
                         : g->show_power == 2 ? "power by component kind; W hides it"
                                              : "power strip hidden");
        return TUI_RES_REDRAW;
    default: return tui_gantt_action(self, a, v);
    }
}

const struct tui_pane_ops tui_gantt_ops = {
    .name = "Gantt",
    .sync = gantt_sync,
    .render = tui_gantt_render,
    .action = gantt_action,
    .mouse = tui_gantt_mouse,
    .work = gantt_work,
    .free = gantt_free,
    .uses_view = true,
};

void tui_gantt_select(struct tui_gantt *g, struct tui_view *v, uint64_t i)
{
    if (i >= trace_model_event_count(g->m))
        return;
    if (trace_model_track_count(g->m) != g->tracks_built) {
        tui_gantt_tree_build(g);
        tui_gantt_rows_build(g, v);
    }
    tui_gantt_select_event(g, v, i);
    tui_gantt_update_follow(g);
}

void tui_gantt_show_span(struct tui_gantt *g, struct tui_view *v, uint64_t t0, uint64_t t1,
                         uint64_t cursor)
{
    double span = t1 > t0 ? (double)(t1 - t0) : 1, pad = span / 16;
    int w = g->plot_w > 0 ? g->plot_w : 1;
    g->cpc = (span + 2 * pad) / w;
    g->t0 = (double)t0 - pad;
    g->fit = false;
    tui_gantt_view_clamp(g);
    tui_view_set_cursor(v, cursor);
    tui_gantt_cursor_clamp(g, v);
    g->cursor_seen = v->cursor;
    tui_gantt_update_hover(g, v);
    tui_gantt_update_follow(g);
}

void tui_gantt_zoom_get(const struct tui_gantt *g, struct tui_gantt_zoom *z)
{
    *z = (struct tui_gantt_zoom){g->cpc, g->t0, g->fit, g->follow};
}

void tui_gantt_zoom_set(struct tui_gantt *g, const struct tui_gantt_zoom *z)
{
    if (!(z->cpc > 0))
        return;
    g->cpc = z->cpc;
    g->t0 = z->t0;
    g->fit = z->fit;
    g->follow = z->follow;
    g->follow_at = UINT64_MAX; /* a view following now pans to the now it finds */
    tui_gantt_view_clamp(g);
    tui_gantt_follow_now(g);
}

bool tui_gantt_following(const struct tui_gantt *g)
{
    return g->follow;
}

void tui_gantt_span(const struct tui_gantt *g, uint64_t *t0, uint64_t *t1, double *cpc)
{
    uint64_t a, b;
    tui_gantt_cell_range(g, 0, &a, &b);
    *t0 = a;
    *t1 = tui_gantt_view_end(g);
    *cpc = g->cpc;
}

const char *tui_gantt_selected_label(const struct tui_gantt *g)
{
    if (g->sel >= g->nrows)
        return "";
    return g->nodes[g->rows[g->sel]].label;
}

void tui_gantt_want_zoom(struct tui_gantt *g, const struct tui_gantt_zoom *z)
{
    g->zoom_wanted = !z->fit && z->cpc >= 1;
    g->want_t0 = z->t0;
    g->want_cpc = z->cpc;
}

void tui_gantt_settle_zoom(struct tui_gantt *g)
{
    if (!g->zoom_wanted)
        return;
    g->zoom_wanted = false;
    g->cpc = g->want_cpc;
    g->t0 = g->want_t0;
    g->fit = false;
    tui_gantt_view_clamp(g);
    tui_gantt_update_follow(g);
}
