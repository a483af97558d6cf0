/*
 * The Gantt pane's keys and mouse (see gantt_int.h): zoom, pan, the cursor, stepping from
 * op to op, folding, the engine and kind filters.
 */
#include "tui/gantt/gantt_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void zoom(struct tui_gantt *g, struct tui_view *v, double factor)
{
    long col = tui_gantt_col_of(g, v->cursor);
    if (col < 0 || col >= g->plot_w)
        col = g->plot_w / 2;
    double cpc = g->cpc * factor;
    double maxc = tui_gantt_fit_cpc(g);
    if (cpc >= maxc) {
        tui_gantt_view_fit(g);
        return;
    }
    g->cpc = cpc < 1 ? 1 : cpc;
    g->t0 = (double)v->cursor - (double)col * g->cpc;
    g->fit = false;
    tui_gantt_view_clamp(g);
}

static void pan(struct tui_gantt *g, struct tui_view *v, int dir)
{
    double cols = g->plot_w / 8 > 1 ? g->plot_w / 8 : 1;
    double before = g->t0;
    g->t0 += dir * cols * g->cpc;
    g->fit = false;
    tui_gantt_view_clamp(g);
    double moved = g->t0 - before;
    double c = (double)v->cursor + moved;
    tui_view_set_cursor(v, c < 0 ? 0 : (uint64_t)c);
    tui_gantt_cursor_clamp(g, v);
}

static void cursor_move(struct tui_gantt *g, struct tui_view *v, int dir)
{
    uint64_t step = (uint64_t)ceil(g->cpc);
    uint64_t c = v->cursor;
    if (dir < 0)
        c = c > tui_gantt_t_min(g) + step ? c - step : tui_gantt_t_min(g);
    else
        c = c + step < tui_gantt_t_max(g) ? c + step : tui_gantt_t_max(g) - 1;
    tui_view_set_cursor(v, c);
    long col = tui_gantt_col_of(g, c);
    if (col < 0 || col >= g->plot_w) {
        g->t0 += (col < 0 ? -1 : 1) * (g->plot_w / 8 > 1 ? g->plot_w / 8 : 1) * g->cpc;
        g->fit = false;
        tui_gantt_view_clamp(g);
    }
    tui_gantt_cursor_clamp(g, v);
}

/* Select event i: its row (unfolded), the cursor at its start, the view showing it. */
void tui_gantt_select_event(struct tui_gantt *g, struct tui_view *v, uint64_t i)
{
    const struct trace_event *e = trace_model_event(g->m, i);
    int n = tui_gantt_track_node(g, e->track);
    if (n >= 0) {
        tui_gantt_unfold_to(g, n);
        if (g->rows_stale)
            tui_gantt_rows_build(g, v);
        for (size_t r = 0; r < g->nrows; r++)
            if (g->rows[r] == n)
                tui_gantt_set_sel(g, r);
    }
    tui_view_select(v, i);
    tui_gantt_show_time(g, e->start);
    tui_view_set_cursor(v, e->start);
    tui_gantt_cursor_clamp(g, v);
    tui_gantt_scroll_to_sel(g);
    tui_gantt_update_hover(g, v);
    g->cursor_seen = v->cursor;
}

/* In track t, the first op starting after (dir > 0) or the last starting before time t. */
static uint64_t track_step(const struct tui_gantt *g, const struct tui_view *v, uint32_t track,
                           uint64_t t, int dir)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first with start > t */
        size_t mid = lo + (hi - lo) / 2;
        if (trace_model_event(g->m, idx[mid])->start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (dir > 0) {
        for (size_t k = lo, s = 0; k < n && s < HOVER_SCAN; k++, s++)
            if (tui_gantt_event_passes(g, v, trace_model_event(g->m, idx[k])))
                return idx[k];
        return TUI_NO_EVENT;
    }
    /* last with start < t */
    lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (trace_model_event(g->m, idx[mid])->start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo, s = 0; k > 0 && s < HOVER_SCAN; k--, s++)
        if (tui_gantt_event_passes(g, v, trace_model_event(g->m, idx[k - 1])))
            return idx[k - 1];
    return TUI_NO_EVENT;
}

static enum tui_result next_op(struct tui_gantt *g, struct tui_view *v, int dir)
{
    if (g->sel >= g->nrows)
        return TUI_RES_HANDLED;
    const struct gnode *n = &g->nodes[g->rows[g->sel]];
    uint64_t best = TUI_NO_EVENT;
    for (size_t k = 0; k < (n->is_track ? 1 : n->ntracks); k++) {
        uint32_t t = n->is_track ? n->track : n->tracks[k];
        if (!n->is_track && !tui_gantt_track_passes(g, v, t))
            continue;
        uint64_t e = track_step(g, v, t, v->cursor, dir);
        if (e == TUI_NO_EVENT)
            continue;
        uint64_t s = trace_model_event(g->m, e)->start;
        if (best == TUI_NO_EVENT || (dir > 0 ? s < trace_model_event(g->m, best)->start
                                             : s > trace_model_event(g->m, best)->start))
            best = e;
    }
    if (best == TUI_NO_EVENT) {
        tui_view_message(v, TUI_STYLE_STATUS,
                         dir > 0 ? "no later op on this row" : "no earlier op on this row");
        return TUI_RES_REDRAW;
    }
    int sel_node = g->rows[g->sel];
    tui_gantt_select_event(g, v, best);
    /* stay on a group row when stepping through a group */
    for (size_t r = 0; r < g->nrows; r++)
        if (g->rows[r] == sel_node)
            tui_gantt_set_sel(g, r);
    tui_gantt_update_hover(g, v);
    return TUI_RES_REDRAW;
}

static enum tui_result enter(struct tui_gantt *g, struct tui_view *v)
{
    if (g->sel >= g->nrows)
        return TUI_RES_HANDLED;
    struct gnode *n = &g->nodes[g->rows[g->sel]];
    if (n->is_res) {
        tui_gantt_res_describe(g, v, g->rows[g->sel]);
        return TUI_RES_REDRAW;
    }
    if (!n->is_track) {
        n->folded = !n->folded;
        tui_gantt_rows_build(g, v);
        return TUI_RES_REDRAW;
    }
    if (v->hover == TUI_NO_EVENT) {
        tui_view_message(v, TUI_STYLE_STATUS, "no op under the cursor on this row");
        return TUI_RES_REDRAW;
    }
    tui_view_select(v, v->hover);
    return TUI_RES_REDRAW;
}

static void fold_all(struct tui_gantt *g, struct tui_view *v)
{
    bool any_open = false;
    for (size_t i = 1; i < g->nnodes; i++)
        if (!g->nodes[i].is_track && !g->nodes[i].is_res && g->nodes[i].nkids &&
            !g->nodes[i].folded && g->nodes[i].key)
            any_open = true;
    for (size_t i = 1; i < g->nnodes; i++)
        if (!g->nodes[i].is_track && !g->nodes[i].is_res)
            g->nodes[i].folded = any_open;
    tui_gantt_rows_build(g, v);
}

/* The next value of a filter: -1 (all), then each value some track or event has. */
static int next_engine(struct tui_gantt *g, int cur)
{
    size_t nt = trace_model_track_count(g->m);
    for (int e = cur + 1; e < TRACE_ENGINE_COUNT; e++)
        for (uint32_t t = 0; t < nt; t++)
            if ((int)trace_model_track_get(g->m, t)->engine == e)
                return e;
    return -1;
}

static int next_kind(struct tui_gantt *g, int cur)
{
    size_t nt = trace_model_track_count(g->m);
    for (int k = cur + 1; k < TRACE_KIND_COUNT; k++)
        for (uint32_t t = 0; t < nt; t++)
            if (trace_model_track_kinds(g->m, t) & (1u << k))
                return k;
    return -1;
}

enum tui_result tui_gantt_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_gantt *g = self;
    size_t page = g->rows_h > 1 ? (size_t)g->rows_h - 1 : 1;
    switch (a) {
    case TUI_ACT_ZOOM_IN: zoom(g, v, 0.5); break;
    case TUI_ACT_ZOOM_OUT: zoom(g, v, 2); break;
    case TUI_ACT_FIT: tui_gantt_view_fit(g); break;
    case TUI_ACT_PAN_LEFT: pan(g, v, -1); break;
    case TUI_ACT_PAN_RIGHT: pan(g, v, 1); break;
    case TUI_ACT_CURSOR_LEFT: cursor_move(g, v, -1); break;
    case TUI_ACT_CURSOR_RIGHT: cursor_move(g, v, 1); break;
    case TUI_ACT_START:
        tui_view_set_cursor(v, tui_gantt_t_min(g));
        tui_gantt_show_time(g, tui_gantt_t_min(g));
        break;
    case TUI_ACT_END:
        tui_view_set_cursor(v, tui_gantt_t_max(g) - 1);
        tui_gantt_show_time(g, tui_gantt_t_max(g) - 1);
        break;
    case TUI_ACT_UP: tui_gantt_set_sel(g, g->sel > 0 ? g->sel - 1 : 0); break;
    case TUI_ACT_DOWN: tui_gantt_set_sel(g, g->sel + 1 < g->nrows ? g->sel + 1 : g->sel); break;
    case TUI_ACT_PAGE_UP: tui_gantt_set_sel(g, g->sel > page ? g->sel - page : 0); break;
    case TUI_ACT_PAGE_DOWN:
        tui_gantt_set_sel(g,
                          g->sel + page < g->nrows ? g->sel + page : (g->nrows ? g->nrows - 1 : 0));
        break;
    case TUI_ACT_SELECT: return enter(g, v);
    case TUI_ACT_NEXT_OP: return next_op(g, v, 1);
    case TUI_ACT_PREV_OP: return next_op(g, v, -1);
    case TUI_ACT_FOLD_ALL: fold_all(g, v); break;
    case TUI_ACT_FILTER_ENGINE: tui_view_filter(v, next_engine(g, v->filter_engine), -1); break;
    case TUI_ACT_FILTER_KIND: tui_view_filter(v, -1, next_kind(g, v->filter_kind)); break;
    case TUI_ACT_FOLLOW:
        if (!v->live)
            return TUI_RES_IGNORED;
        if (!g->fit)
            g->t0 = (double)tui_gantt_t_max(g) - g->plot_w * g->cpc;
        tui_gantt_view_clamp(g);
        tui_view_set_cursor(v, tui_gantt_t_max(g) - 1);
        break;
    default: return TUI_RES_IGNORED;
    }
    if (g->rows_engine != v->filter_engine || g->rows_kind != v->filter_kind)
        tui_gantt_rows_build(g, v);
    if (a == TUI_ACT_FILTER_ENGINE || a == TUI_ACT_FILTER_KIND) {
        if (v->selected != TUI_NO_EVENT &&
            !tui_gantt_event_passes(g, v, trace_model_event(g->m, v->selected)))
            tui_view_select(v, TUI_NO_EVENT);
    }
    tui_gantt_cursor_clamp(g, v);
    tui_gantt_scroll_to_sel(g);
    tui_gantt_update_hover(g, v);
    g->cursor_seen = v->cursor;
    tui_gantt_update_follow(g);
    return TUI_RES_REDRAW;
}

enum tui_result tui_gantt_mouse(void *self, int x, int y, int button, struct tui_view *v)
{
    struct tui_gantt *g = self;
    long col = x - g->plot_x;
    if (y >= g->rows_y && y < g->rows_y + g->rows_h && button == 1) {
        size_t row = g->top + (size_t)(y - g->rows_y);
        if (row >= g->nrows)
            return TUI_RES_HANDLED;
        tui_gantt_set_sel(g, row);
        if (col < 0 && !g->nodes[g->rows[row]].is_track && !g->nodes[g->rows[row]].is_res)
            return enter(g, v);
    }
    if (col >= 0 && col < g->plot_w) {
        uint64_t a, b;
        tui_gantt_cell_range(g, (int)col, &a, &b);
        tui_view_set_cursor(v, a);
        if (button == 4)
            zoom(g, v, 0.5);
        else if (button == 5)
            zoom(g, v, 2);
    }
    tui_gantt_cursor_clamp(g, v);
    tui_gantt_update_hover(g, v);
    g->cursor_seen = v->cursor;
    if (button == 1 && v->hover != TUI_NO_EVENT && y >= g->rows_y)
        tui_view_select(v, v->hover);
    tui_gantt_update_follow(g);
    return TUI_RES_REDRAW;
}
