/*
 * The Gantt pane's view of time (see gantt_int.h): the first visible cycle and the cycles
 * per column, fitting and following the trace, the cursor, the op under it, and the
 * layout of the pane.
 */
#include "tui/gantt/gantt_int.h"

#include <math.h>
#include <stdlib.h>

uint64_t tui_gantt_t_min(const struct tui_gantt *g)
{
    return trace_model_t_min(g->m);
}

uint64_t tui_gantt_t_max(const struct tui_gantt *g)
{
    uint64_t a = trace_model_t_min(g->m), b = trace_model_t_max(g->m);
    return b > a ? b : a + 1;
}

double tui_gantt_fit_cpc(const struct tui_gantt *g)
{
    double span = (double)(tui_gantt_t_max(g) - tui_gantt_t_min(g));
    double cpc = g->plot_w > 0 ? span / g->plot_w : 1;
    return cpc < 1 ? 1 : cpc;
}

void tui_gantt_view_clamp(struct tui_gantt *g)
{
    double maxc = tui_gantt_fit_cpc(g);
    if (g->cpc > maxc)
        g->cpc = maxc;
    if (g->cpc < 1)
        g->cpc = 1;
    double lo = (double)tui_gantt_t_min(g), hi = (double)tui_gantt_t_max(g) - g->plot_w * g->cpc;
    if (g->t0 > hi)
        g->t0 = hi;
    if (g->t0 < lo)
        g->t0 = lo;
    g->t0 = floor(g->t0);
}

void tui_gantt_view_fit(struct tui_gantt *g)
{
    g->cpc = tui_gantt_fit_cpc(g);
    g->t0 = (double)tui_gantt_t_min(g);
    g->fit = true;
    g->fit_min = tui_gantt_t_min(g);
    g->fit_max = tui_gantt_t_max(g);
}

/* Cycles covered by column i: [*a, *b). */
void tui_gantt_cell_range(const struct tui_gantt *g, int i, uint64_t *a, uint64_t *b)
{
    double x = g->t0 + i * g->cpc;
    *a = (uint64_t)floor(x);
    *b = (uint64_t)floor(x + g->cpc);
    if (*b <= *a)
        *b = *a + 1;
}

uint64_t tui_gantt_view_end(const struct tui_gantt *g)
{
    uint64_t a, b;
    tui_gantt_cell_range(g, g->plot_w > 0 ? g->plot_w - 1 : 0, &a, &b);
    return b;
}

/* Column of time t (may be outside [0, plot_w)). */
long tui_gantt_col_of(const struct tui_gantt *g, uint64_t t)
{
    return (long)floor(((double)t - g->t0) / g->cpc);
}

/* Keep the cursor inside the trace and inside the view. */
void tui_gantt_cursor_clamp(struct tui_gantt *g, struct tui_view *v)
{
    uint64_t c = v->cursor;
    uint64_t a, b;
    if (c < tui_gantt_t_min(g))
        c = tui_gantt_t_min(g);
    if (c >= tui_gantt_t_max(g))
        c = tui_gantt_t_max(g) - 1;
    tui_gantt_cell_range(g, 0, &a, &b);
    if (c < a)
        c = a;
    uint64_t e = tui_gantt_view_end(g);
    if (c >= e)
        c = e - 1;
    tui_view_set_cursor(v, c);
}

/* Pan the view so that time t is shown, about a quarter in from the edge it was beyond. */
void tui_gantt_show_time(struct tui_gantt *g, uint64_t t)
{
    long col = tui_gantt_col_of(g, t);
    if (col >= 0 && col < g->plot_w)
        return;
    g->t0 = (double)t - g->plot_w * g->cpc / 4;
    if (col >= g->plot_w)
        g->t0 = (double)t - g->plot_w * g->cpc * 3 / 4;
    g->fit = false;
    tui_gantt_view_clamp(g);
}

uint64_t tui_gantt_ev_end(const struct tui_gantt *g, const struct trace_event *e)
{
    if (e->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(g->m);
        return now > e->start ? now : e->start + 1;
    }
    return e->end > e->start ? e->end : e->start + 1;
}

bool tui_gantt_event_passes(const struct tui_gantt *g, const struct tui_view *v,
                            const struct trace_event *e)
{
    if (v->filter_kind >= 0 && e->op_kind != v->filter_kind)
        return false;
    if (v->filter_engine >= 0 &&
        (int)trace_model_track_get(g->m, e->track)->engine != v->filter_engine)
        return false;
    return true;
}

/* The op of track under time t: the latest-starting op covering t, else the op covering
 * most of the column [a, b). TUI_NO_EVENT when none. */
static uint64_t op_at(const struct tui_gantt *g, const struct tui_view *v, uint32_t track,
                      uint64_t t, uint64_t a, uint64_t b)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    uint64_t best = TUI_NO_EVENT, best_start = 0;
    for (size_t k = trace_model_track_seek(g->m, track, t), s = 0; k < n && s < HOVER_SCAN;
         k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start > t)
            break;
        if (tui_gantt_ev_end(g, e) > t && tui_gantt_event_passes(g, v, e) &&
            (best == TUI_NO_EVENT || e->start >= best_start))
            best = idx[k], best_start = e->start;
    }
    if (best != TUI_NO_EVENT)
        return best;
    uint64_t best_ov = 0;
    for (size_t k = trace_model_track_seek(g->m, track, a), s = 0; k < n && s < SCAN_EVENTS;
         k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start >= b)
            break;
        uint64_t end = tui_gantt_ev_end(g, e);
        uint64_t lo = e->start > a ? e->start : a, hi = end < b ? end : b;
        if (hi > lo && hi - lo > best_ov && tui_gantt_event_passes(g, v, e))
            best = idx[k], best_ov = hi - lo;
    }
    return best;
}

void tui_gantt_update_hover(struct tui_gantt *g, struct tui_view *v)
{
    uint64_t h = TUI_NO_EVENT;
    if (g->sel < g->nrows && g->nodes[g->rows[g->sel]].is_track) {
        uint64_t a, b;
        long col = tui_gantt_col_of(g, v->cursor);
        tui_gantt_cell_range(g, (int)(col < 0 ? 0 : col), &a, &b);
        h = op_at(g, v, g->nodes[g->rows[g->sel]].track, v->cursor, a, b);
    }
    tui_view_hover(v, h);
}

/* Live: keep the right edge at the end of the trace ("now") at the same zoom. */
void tui_gantt_follow_now(struct tui_gantt *g)
{
    uint64_t end = tui_gantt_t_max(g);
    if (end == g->follow_at)
        return;
    if (g->follow && !g->fit) {
        g->t0 = (double)end - g->plot_w * g->cpc;
        tui_gantt_view_clamp(g);
    }
    g->follow_at = end;
}

/* After the user moved the view: it follows "now" while its last column shows it. */
void tui_gantt_update_follow(struct tui_gantt *g)
{
    g->follow = g->fit || (double)tui_gantt_view_end(g) + g->cpc >= (double)tui_gantt_t_max(g);
    g->follow_at = tui_gantt_t_max(g);
}

void tui_gantt_layout(struct tui_gantt *g, struct tui_rect r, const struct tui_view *v)
{
    bool ns_ruler = trace_model_clock_ghz(g->m) > 0 && r.h >= 12;
    (void)v;
    int want = g->label_want;
    if ((g->show_heat || g->show_util || g->show_power) && g->strip_label_want > want)
        want = g->strip_label_want;
    if (want > LABEL_MAX)
        want = LABEL_MAX;
    if (want > r.w / 3)
        want = r.w / 3 > LABEL_MIN ? r.w / 3 : LABEL_MIN;
    int old_w = g->plot_w;
    g->rect = r;
    g->label_w = want;
    g->plot_x = r.x + want + 1;
    g->plot_w = r.w - want - 1;
    if (g->plot_w < 1)
        g->plot_w = 1;
    int y = r.y + 1; /* below the title */
    g->ruler_rows = ns_ruler ? 2 : 1;
    y += g->ruler_rows;
    /* a band only where at least BAND_ROWS rows of tracks remain below it */
    int end = r.y + r.h;
    g->band_markers = trace_model_marker_count(g->m) && end - y > BAND_ROWS ? y++ : -1;
    g->band_tokens = trace_model_token_count(g->m) && end - y > BAND_ROWS ? y++ : -1;
    g->band_bw = trace_model_dram_sample_count(g->m) && end - y > BAND_ROWS ? y++ : -1;
    g->rows_y = y;
    g->rows_h = r.y + r.h - y;
    if (g->rows_h < 0)
        g->rows_h = 0;
    if (g->fit || old_w != g->plot_w) {
        if (g->fit)
            tui_gantt_view_fit(g);
        else
            tui_gantt_view_clamp(g);
    }
}
