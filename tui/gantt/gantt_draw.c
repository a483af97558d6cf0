/*
 * Drawing the Gantt pane (see gantt.h): the title, the rulers, the bands of markers,
 * tokens and bandwidth, and each row's cells from the model's busy-time index. A cell is
 * decided from the tracks' level-of-detail summaries (trace/model/lod.h) where they settle
 * it, so a wide view of a long run reads few events; else from the busy time itself, a few
 * binary searches. Either way it draws the same.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/model/lod.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

static void bw_build(struct tui_gantt *g)
{
    size_t n = trace_model_bw_sample_count(g->m);
    if (n == g->bw_built)
        return;
    struct bw_index *b = &g->bw;
    free(b->start), free(b->end), free(b->pre);
    uint64_t *tmp = sim_xcalloc(n * 3 + 1, sizeof(uint64_t));
    size_t all = n;
    n = 0;
    for (size_t i = 0; i < all; i++) { /* the DRAM's samples, not a resource's */
        const struct trace_bw_sample *s = trace_model_bw_sample(g->m, i);
        if (!trace_bw_sample_is_dram(s))
            continue;
        tmp[n * 3] = s->cycle;
        tmp[n * 3 + 1] = s->window ? s->window : 1;
        tmp[n * 3 + 2] = s->read_bytes + s->write_bytes;
        n++;
    }
    qsort(tmp, n, 3 * sizeof(uint64_t), cmp_u64pair);
    b->start = sim_xcalloc(n + 1, sizeof(*b->start));
    b->end = sim_xcalloc(n + 1, sizeof(*b->end));
    b->pre = sim_xcalloc(n + 1, sizeof(*b->pre));
    b->max_rate = 0;
    for (size_t i = 0; i < n; i++) {
        b->start[i] = tmp[i * 3];
        b->end[i] = tmp[i * 3] + tmp[i * 3 + 1];
        b->pre[i + 1] = b->pre[i] + (double)tmp[i * 3 + 2];
        double rate = (double)tmp[i * 3 + 2] / (double)tmp[i * 3 + 1];
        if (rate > b->max_rate)
            b->max_rate = rate;
    }
    b->n = n;
    free(tmp);
    g->bw_built = all;
}

/* Bytes moved within [a, b), each sample's bytes spread evenly over its window. */
static double bw_bytes(const struct bw_index *b, uint64_t a, uint64_t e)
{
    /* first sample that starts at or after a, stepping back over one that overlaps a */
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->start[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    double bytes = 0;
    size_t i = lo;
    if (i > 0 && b->end[i - 1] > a) {
        size_t k = i - 1;
        uint64_t s = a, f = b->end[k] < e ? b->end[k] : e;
        bytes += (b->pre[k + 1] - b->pre[k]) * (double)(f - s) / (double)(b->end[k] - b->start[k]);
    }
    /* samples starting inside [a, e) */
    size_t j;
    lo = i, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->start[mid] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    j = lo; /* [i, j) start inside */
    if (j > i) {
        bytes += b->pre[j - 1] - b->pre[i]; /* all but the last, assumed inside */
        size_t k = j - 1;
        uint64_t f = b->end[k] < e ? b->end[k] : e;
        bytes += (b->pre[k + 1] - b->pre[k]) * (double)(f - b->start[k]) /
                 (double)(b->end[k] - b->start[k]);
    }
    return bytes;
}

static void draw_ruler(struct tui_gantt *g, struct tui_canvas *c, int y,
                       const struct tui_glyphs *gl)
{
    char probe[32];
    tui_fmt_cycle_tick(probe, sizeof(probe), tui_gantt_t_max(g), 1);
    double step = tui_ruler_step(g->cpc * ((double)strlen(probe) + 2));
    uint64_t s = (uint64_t)step;
    tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ', TUI_STYLE_RULER);
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_RULER, "cycles", 0);
    uint64_t first = (uint64_t)ceil(g->t0 / step) * s;
    for (uint64_t t = first; t < tui_gantt_view_end(g); t += s) {
        long col = tui_gantt_col_of(g, t);
        if (col < 0 || col >= g->plot_w)
            continue;
        char label[32];
        tui_fmt_cycle_tick(label, sizeof(label), t, s);
        tui_canvas_put(c, g->plot_x + (int)col, y, gl->tick, TUI_STYLE_RULER);
        tui_canvas_text(c, g->plot_x + (int)col + 1, y, g->plot_w - (int)col - 1, TUI_STYLE_RULER,
                        label, 0);
    }
}

static void draw_ns_ruler(struct tui_gantt *g, struct tui_canvas *c, int y,
                          const struct tui_glyphs *gl)
{
    double ghz = trace_model_clock_ghz(g->m);
    char probe[32];
    tui_fmt_ns(probe, sizeof(probe), (double)tui_gantt_t_max(g) / ghz);
    double step = tui_ruler_step(g->cpc / ghz * ((double)strlen(probe) + 2));
    /* zoomed in far, a label needs the decimals of the step: room for the longer ones */
    size_t w0 = strlen(probe);
    tui_fmt_ns_tick(probe, sizeof(probe), (double)tui_gantt_t_max(g) / ghz, step);
    if (strlen(probe) > w0)
        step = tui_ruler_step(g->cpc / ghz * ((double)strlen(probe) + 2));
    tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ', TUI_STYLE_RULER);
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_RULER, "ns", 0);
    double first = ceil(g->t0 / ghz / step) * step;
    for (double ns = first; ns * ghz < (double)tui_gantt_view_end(g); ns += step) {
        long col = (long)floor((ns * ghz - g->t0) / g->cpc);
        if (col < 0 || col >= g->plot_w)
            continue;
        char label[32];
        tui_fmt_ns_tick(label, sizeof(label), ns, step);
        tui_canvas_put(c, g->plot_x + (int)col, y, gl->tick, TUI_STYLE_RULER);
        tui_canvas_text(c, g->plot_x + (int)col + 1, y, g->plot_w - (int)col - 1, TUI_STYLE_RULER,
                        label, 0);
    }
}

static int cmp_marker_col(const void *a, const void *b)
{
    const long *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Markers in view as (column, marker index) pairs sorted by column; caller frees. */
static long *markers_in_view(const struct tui_gantt *g, size_t *n)
{
    size_t nm = trace_model_marker_count(g->m), k = 0;
    long *cols = sim_xcalloc(nm * 2 + 2, sizeof(long));
    for (size_t i = 0; i < nm; i++) {
        long col = tui_gantt_col_of(g, trace_model_marker(g->m, i)->cycle);
        if (col >= 0 && col < g->plot_w)
            cols[k * 2] = col, cols[k * 2 + 1] = (long)i, k++;
    }
    qsort(cols, k, 2 * sizeof(long), cmp_marker_col);
    *n = k;
    return cols;
}

static void draw_markers_band(struct tui_gantt *g, struct tui_canvas *c, int y,
                              const struct tui_glyphs *gl)
{
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_MARKER, "markers", 0);
    size_t n;
    long *cols = markers_in_view(g, &n);
    for (size_t k = 0; k < n; k++) {
        long col = cols[k * 2];
        const struct trace_marker *mk = trace_model_marker(g->m, (size_t)cols[k * 2 + 1]);
        tui_canvas_put(c, g->plot_x + (int)col, y, gl->marker_mark, TUI_STYLE_MARKER);
        long next = k + 1 < n ? cols[(k + 1) * 2] : g->plot_w;
        int room = (int)(next - col - 2);
        if (room > 0)
            tui_canvas_textn(c, g->plot_x + (int)col + 1, y, room, TUI_STYLE_MARKER,
                             trace_model_str(g->m, mk->name), trace_model_str_len(g->m, mk->name),
                             TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
    free(cols);
}

static void draw_tokens_band(struct tui_gantt *g, struct tui_canvas *c, int y,
                             const struct tui_glyphs *gl)
{
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_LABEL, "tokens", 0);
    size_t n = trace_model_token_count(g->m);
    uint64_t a0, b0, e = tui_gantt_view_end(g);
    tui_gantt_cell_range(g, 0, &a0, &b0);
    for (size_t i = 0; i < n; i++) {
        const struct trace_token *t = trace_model_token(g->m, i);
        if (t->end <= a0 || t->start >= e)
            continue;
        long c0 = tui_gantt_col_of(g, t->start), c1 = (long)ceil(((double)t->end - g->t0) / g->cpc);
        if (c0 < 0)
            c0 = 0;
        if (c1 > g->plot_w)
            c1 = g->plot_w;
        if (c1 <= c0)
            c1 = c0 + 1;
        bool alt = (t->token_index & 1) != 0;
        enum tui_style st = !t->decode ? TUI_STYLE_TOKEN_PREFILL
                            : alt      ? TUI_STYLE_TOKEN_ALT
                                       : TUI_STYLE_TOKEN_DECODE;
        uint32_t glyph = alt ? gl->shade[3] : gl->eighths[8];
        for (long x = c0; x < c1; x++)
            tui_canvas_put(c, g->plot_x + (int)x, y, glyph, st);
    }
}

static double bw_peak(const struct tui_gantt *g)
{
    const struct sim_value *mem = sim_value_map_get(trace_model_config(g->m), "memory");
    double peak = sim_value_get_float(mem, "dram_peak_bw_bytes_per_cycle", 0);
    return peak > 0 ? peak : 0;
}

static void draw_bw_band(struct tui_gantt *g, struct tui_canvas *c, int y,
                         const struct tui_glyphs *gl)
{
    bw_build(g);
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_LABEL, "DRAM bw", 0);
    double scale = bw_peak(g);
    if (scale < g->bw.max_rate)
        scale = g->bw.max_rate;
    if (scale <= 0)
        return;
    for (int i = 0; i < g->plot_w; i++) {
        uint64_t a, b;
        tui_gantt_cell_range(g, i, &a, &b);
        double rate = bw_bytes(&g->bw, a, b) / (double)(b - a);
        if (rate <= 0)
            continue;
        int level = (int)ceil(rate / scale * 8 - 1e-9);
        level = level < 1 ? 1 : level > 8 ? 8 : level;
        tui_canvas_put(c, g->plot_x + i, y, gl->spark[level], TUI_STYLE_BANDWIDTH);
    }
}

static const enum tui_style kind_styles[TRACE_KIND_COUNT] = {
    [TRACE_KIND_MEMORY] = TUI_STYLE_OP_MEMORY,
    [TRACE_KIND_GEMM] = TUI_STYLE_OP_GEMM,
    [TRACE_KIND_MATH] = TUI_STYLE_OP_MATH,
    [TRACE_KIND_UNKNOWN] = TUI_STYLE_OP_UNKNOWN,
};

/* Whether an op the view marks (a layer's, tui_view_mark) runs in [a, b) of track. */
static bool cell_marked(const struct tui_gantt *g, const struct tui_view *v, uint32_t track,
                        uint64_t a, uint64_t b)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    for (size_t k = trace_model_track_seek(g->m, track, a), s = 0; k < n && s < SCAN_EVENTS;
         k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start >= b)
            break;
        bool hit =
            v->mark_site != TRACE_NO_SITE
                ? e->site == v->mark_site
                : e->layer == v->mark_layer && (v->mark_op == TRACE_NO_STR || e->op == v->mark_op);
        if (hit && tui_gantt_ev_end(g, e) > a)
            return true;
    }
    return false;
}

/* The style of a busy cell: the selected op or a marked one, an op in flight, or the op
 * kind with the most time in the cell (dimmed when the kind filter hides it). */
static enum tui_style cell_style(const struct tui_gantt *g, const struct tui_view *v,
                                 uint32_t track, uint64_t a, uint64_t b)
{
    if (v->selected != TUI_NO_EVENT) {
        const struct trace_event *s = trace_model_event(g->m, v->selected);
        if (s->track == track && s->start < b && tui_gantt_ev_end(g, s) > a)
            return TUI_STYLE_OP_SELECTED;
    }
    if ((v->mark_layer != TRACE_NO_STR || v->mark_site != TRACE_NO_SITE) &&
        cell_marked(g, v, track, a, b))
        return TUI_STYLE_OP_SELECTED;
    if (g->path && tui_gantt_on_path(g, track, a, b))
        return TUI_STYLE_CRITICAL;
    /* a track with ops of one kind only (the usual engine) needs no look at its ops
     * before its first op in flight (a long run's ops lie in a file: looking at them for
     * every cell of a wide view would map them all) */
    uint8_t kb = trace_model_track_kinds(g->m, track);
    if (kb && !(kb & (kb - 1)) && b <= trace_model_track_inflight_start(g->m, track)) {
        int kind = __builtin_ctz(kb);
        return v->filter_kind >= 0 && kind != v->filter_kind ? TUI_STYLE_DIM : kind_styles[kind];
    }
    const uint32_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    uint64_t w[TRACE_KIND_COUNT] = {0};
    bool inflight = false;
    size_t seen = 0;
    for (size_t k = trace_model_track_seek(g->m, track, a), s = 0;
         k < n && s < SCAN_EVENTS && seen < SAMPLE_EVENTS; k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start >= b)
            break;
        uint64_t end = tui_gantt_ev_end(g, e);
        if (end <= a)
            continue;
        seen++;
        uint64_t lo = e->start > a ? e->start : a, hi = end < b ? end : b;
        w[e->op_kind < TRACE_KIND_COUNT ? e->op_kind : TRACE_KIND_UNKNOWN] += hi - lo;
        if (e->flags & TRACE_EV_INFLIGHT)
            inflight = true;
    }
    if (inflight)
        return TUI_STYLE_OP_INFLIGHT;
    int best = TRACE_KIND_UNKNOWN;
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (w[k] > w[best])
            best = k;
    if (v->filter_kind >= 0 && best != v->filter_kind)
        return TUI_STYLE_DIM;
    return kind_styles[best];
}

/* The glyph of a cell busy for busy of its cycles [a, b): full; a bar edge (left or
 * right aligned block) when the busy part is one run touching an edge; else a shade. */
static uint32_t cell_glyph(const struct tui_gantt *g, uint32_t track, uint64_t a, uint64_t b,
                           uint64_t busy, const struct tui_glyphs *gl)
{
    uint64_t w = b - a;
    if (busy >= w)
        return gl->eighths[8];
    uint64_t e8 = (busy * 8 + w / 2) / w;
    e8 = e8 < 1 ? 1 : e8 > 7 ? 7 : e8;
    /* busy before a, and the cover at b is that plus busy: two more lookups answer
     * "one run from the left edge" and "one run to the right edge" */
    uint64_t ca = trace_model_track_cover(g->m, track, a);
    if (trace_model_track_cover(g->m, track, a + busy) - ca == busy)
        return gl->eighths[e8];
    if (ca + busy - trace_model_track_cover(g->m, track, b - busy) == busy)
        return e8 >= 4 ? gl->right_half : gl->right_8th;
    return busy * 3 <= w ? gl->shade[1] : busy * 3 <= 2 * w ? gl->shade[2] : gl->shade[3];
}

/* The shade of a cell busy for busy of its w cycles. */
static int shade_of(uint64_t busy, uint64_t w)
{
    return busy * 3 <= w ? 1 : busy * 3 <= 2 * w ? 2 : 3;
}

/* cell_glyph for column i of track, from the bounds on its busy cycles where they settle
 * it: all of it busy; or a shade, when the summary shows the busy time is no run from
 * either edge (some idle time before some busy time, and some busy time before some idle
 * time). Else from the busy cycles themselves. */
static uint32_t cell_glyph_lod(struct tui_gantt *g, uint32_t track, int i, uint64_t a, uint64_t b,
                               const struct tui_glyphs *gl)
{
    uint64_t w = b - a, lo, hi;
    tui_gantt_busy_bounds(g, track, i, &lo, &hi);
    if (lo >= w)
        return gl->eighths[8];
    if (hi < w && shade_of(lo, w) == shade_of(hi, w) &&
        trace_model_track_shape(g->m, track, a, b) ==
            (TRACE_SHAPE_IDLE_BUSY | TRACE_SHAPE_BUSY_IDLE))
        return gl->shade[shade_of(lo, w)];
    return cell_glyph(g, track, a, b, tui_gantt_busy_exact(g, track, i), gl);
}

/* Whether some op of track may be wide enough in view to carry its name: one spans at
 * least 5 columns, so 3 columns in a row (its inner ones, whatever the rounding at its
 * ends) are busy all through. */
static bool names_possible(struct tui_gantt *g, uint32_t track)
{
    if (g->cpc < 16)
        return true;
    int run = 0;
    for (int i = 0; i < g->plot_w; i++) {
        uint64_t a, b, lo, hi;
        tui_gantt_cell_range(g, i, &a, &b);
        tui_gantt_busy_bounds(g, track, i, &lo, &hi);
        run = hi >= b - a ? run + 1 : 0;
        if (run >= 3)
            return true;
    }
    return false;
}

static void draw_track_row(struct tui_gantt *g, struct tui_canvas *c, const struct tui_view *v,
                           int y, uint32_t track, const struct tui_glyphs *gl)
{
    for (int i = 0; i < g->plot_w; i++) {
        uint64_t lo, hi;
        tui_gantt_busy_bounds(g, track, i, &lo, &hi);
        if (!hi || (!lo && !tui_gantt_busy_exact(g, track, i)))
            continue;
        uint64_t a, b;
        tui_gantt_cell_range(g, i, &a, &b);
        enum tui_style st = cell_style(g, v, track, a, b);
        uint32_t mono = c->mono ? tui_mono_fill(st) : 0; /* no colours: the kind's character */
        tui_canvas_put(c, g->plot_x + i, y, mono ? mono : cell_glyph_lod(g, track, i, a, b, gl),
                       st);
    }
    /* names on the ops wide enough to hold them */
    if (!names_possible(g, track))
        return;
    const uint32_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    uint64_t a0, b0, e = tui_gantt_view_end(g);
    tui_gantt_cell_range(g, 0, &a0, &b0);
    for (size_t k = trace_model_track_seek(g->m, track, a0), s = 0; k < n && s < TEXT_EVENTS;
         k++, s++) {
        const struct trace_event *ev = trace_model_event(g->m, idx[k]);
        if (ev->start >= e)
            break;
        uint64_t end = tui_gantt_ev_end(g, ev);
        long c0 = (long)ceil(((double)ev->start - g->t0) / g->cpc);
        long c1 = (long)floor(((double)end - g->t0) / g->cpc);
        if (c0 < 0)
            c0 = 0;
        if (c1 > g->plot_w)
            c1 = g->plot_w;
        if (c1 - c0 < 5 || !tui_gantt_event_passes(g, v, ev))
            continue;
        const char *name = trace_model_str(g->m, ev->op);
        size_t len = trace_model_str_len(g->m, ev->op);
        int room = (int)(c1 - c0 - 2);
        if (room < 6 && room < tui_text_width(name, len, c->unicode, TUI_TEXT_UNTRUSTED))
            continue; /* a few letters and an ellipsis would only be noise */
        enum tui_style st = idx[k] == v->selected ? TUI_STYLE_OP_SELECTED : TUI_STYLE_OP_TEXT;
        tui_canvas_textn(c, g->plot_x + (int)c0 + 1, y, room, st, name, len,
                         TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
}

/* The glyph class of a group cell busy for busy of its w cycles (all its tracks'): 0
 * empty, 1-3 shades, 4 full. */
static int group_class(uint64_t busy, uint64_t w)
{
    return !busy ? 0 : busy >= w ? 4 : shade_of(busy, w);
}

/* A group row: how busy its tracks are on average, as a shade. */
static void draw_group_row(struct tui_gantt *g, struct tui_canvas *c, const struct tui_view *v,
                           int y, int node, const struct tui_glyphs *gl)
{
    const struct gnode *gn = &g->nodes[node];
    uint32_t *tracks = sim_xcalloc(gn->ntracks + 1, sizeof(*tracks));
    size_t nt = 0;
    for (size_t k = 0; k < gn->ntracks; k++)
        if (tui_gantt_track_passes(g, v, gn->tracks[k]))
            tracks[nt++] = gn->tracks[k];
    for (int i = 0; nt && i < g->plot_w; i++) {
        uint64_t a, b, lo = 0, hi = 0;
        tui_gantt_cell_range(g, i, &a, &b);
        for (size_t k = 0; k < nt; k++) {
            uint64_t l, h;
            tui_gantt_busy_bounds(g, tracks[k], i, &l, &h);
            lo += l, hi += h;
        }
        uint64_t w = (b - a) * nt;
        int cls = group_class(lo, w);
        if (cls != group_class(hi, w)) { /* the summary does not settle it: the busy time */
            lo = 0;
            for (size_t k = 0; k < nt; k++)
                lo += tui_gantt_busy_exact(g, tracks[k], i);
            cls = group_class(lo, w);
        }
        if (!cls)
            continue;
        uint32_t glyph = cls == 4 ? gl->eighths[8] : gl->shade[cls];
        tui_canvas_put(c, g->plot_x + i, y, glyph, TUI_STYLE_GROUP);
    }
    free(tracks);
}

static void draw_label(struct tui_gantt *g, struct tui_canvas *c, int y, size_t row, bool focused,
                       const struct tui_glyphs *gl)
{
    const struct gnode *n = &g->nodes[g->rows[row]];
    bool sel = row == g->sel;
    enum tui_style st = sel && focused             ? TUI_STYLE_LABEL_SEL
                        : sel                      ? TUI_STYLE_SELECTION
                        : n->is_track || n->is_res ? TUI_STYLE_LABEL
                                                   : TUI_STYLE_GROUP;
    tui_canvas_fill(c, (struct tui_rect){g->rect.x, y, g->label_w, 1}, ' ', st);
    int x = g->rect.x + n->depth;
    if (!n->is_track && !n->is_res) {
        tui_canvas_put(c, x, y, n->folded ? gl->fold_closed : gl->fold_open, st);
        x += 2;
    } else {
        x += 1;
    }
    tui_canvas_text(c, x, y, g->rect.x + g->label_w - x, st, n->label,
                    TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
}

static void draw_title(struct tui_gantt *g, struct tui_canvas *c, const struct tui_view *v,
                       bool focused)
{
    struct tui_rect r = g->rect;
    enum tui_style st = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', st);
    char buf[256], cpc[32];
    int n = snprintf(buf, sizeof(buf), " Gantt  %s cyc/col", tui_fmt_si(cpc, sizeof(cpc), g->cpc));
    if (g->fit)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, " (fit)");
    if (v->live && !g->follow)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  not following now (L)");
    if (v->filter_engine >= 0)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  engine=%s",
                      trace_engine_name((enum trace_engine)v->filter_engine));
    if (v->filter_kind >= 0)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  kind=%s",
                      trace_op_kind_name((enum trace_op_kind)v->filter_kind));
    if (v->mark_site != TRACE_NO_SITE) {
        char site[160], name[48];
        trace_model_site_text(g->m, v->mark_site, site, sizeof(site));
        sim_escape(site, strlen(site), name, sizeof(name));
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  line=%s", name);
    }
    if (v->mark_layer != TRACE_NO_STR) {
        char name[48]; /* names cut short: the title stays within buf */
        const char *l = trace_model_str(g->m, v->mark_layer);
        sim_escape(l, strlen(l), name, sizeof(name));
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  layer=%s", name);
        if (v->mark_op != TRACE_NO_STR) {
            const char *o = trace_model_str(g->m, v->mark_op);
            sim_escape(o, strlen(o), name, sizeof(name));
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, " op=%s", name);
        }
    }
    if ((g->show_heat && g->heat_y < 0) || (g->show_util && g->util_y < 0))
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  %s: no room (z, b)",
                      g->show_heat && g->heat_y < 0 ? "heatmap" : "utilization");
    if (g->nrows > (size_t)g->rows_h && g->rows_h > 0)
        snprintf(buf + n, sizeof(buf) - (size_t)n, "  rows %zu-%zu/%zu", g->top + 1,
                 g->top + (size_t)g->rows_h < g->nrows ? g->top + (size_t)g->rows_h : g->nrows,
                 g->nrows);
    tui_canvas_text(c, r.x, r.y, r.w, st, buf, TUI_TEXT_ELLIPSIS);
}

void tui_gantt_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                      bool focused)
{
    struct tui_gantt *g = self;
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    tui_gantt_layout(g, r, v);
    tui_gantt_strip_layout(g);
    tui_gantt_scroll_to_sel(g);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    draw_title(g, c, v, focused);
    if (r.h < 2) {
        tui_canvas_unclip(c);
        return;
    }
    for (int y = r.y + 1; y < r.y + r.h; y++)
        tui_canvas_put(c, g->plot_x - 1, y, gl->vline, TUI_STYLE_BORDER);
    draw_ruler(g, c, r.y + 1, gl);
    if (g->ruler_rows > 1)
        draw_ns_ruler(g, c, r.y + 2, gl);
    if (g->band_markers >= 0)
        draw_markers_band(g, c, g->band_markers, gl);
    if (g->band_tokens >= 0)
        draw_tokens_band(g, c, g->band_tokens, gl);
    if (g->band_bw >= 0)
        draw_bw_band(g, c, g->band_bw, gl);

    tui_gantt_busy_reset(g);
    if (trace_model_event_count(g->m) == 0 && g->rows_h > 0)
        tui_canvas_text(c, g->plot_x + 1, g->rows_y, g->plot_w - 1, TUI_STYLE_DIM,
                        "no ENGINE_EVENTs in this trace", TUI_TEXT_ELLIPSIS);
    else if (g->nrows == 0 && g->rows_h > 0)
        tui_canvas_text(c, g->plot_x + 1, g->rows_y, g->plot_w - 1, TUI_STYLE_DIM,
                        "no rows pass the filters (Esc clears them)", TUI_TEXT_ELLIPSIS);
    for (int k = 0; k < g->rows_h && g->top + (size_t)k < g->nrows; k++) {
        size_t row = g->top + (size_t)k;
        int y = g->rows_y + k;
        draw_label(g, c, y, row, focused, gl);
        const struct gnode *n = &g->nodes[g->rows[row]];
        if (n->is_track)
            draw_track_row(g, c, v, y, n->track, gl);
        else if (n->is_res || tui_gantt_res_only(g, g->rows[row]))
            tui_gantt_draw_res_row(g, c, y, g->rows[row], gl);
        else
            draw_group_row(g, c, v, y, g->rows[row], gl);
    }
    tui_gantt_draw_strips(g, c, gl);
    /* marker lines through empty cells of the rows */
    size_t nm;
    long *cols = markers_in_view(g, &nm);
    for (size_t k = 0; k < nm; k++) {
        for (int y = g->rows_y; y < g->rows_y + g->rows_h; y++) {
            const struct tui_cell *cell = tui_canvas_cell(c, g->plot_x + (int)cols[k * 2], y);
            if (cell && cell->cp == ' ')
                tui_canvas_put(c, g->plot_x + (int)cols[k * 2], y, gl->vline_light,
                               TUI_STYLE_MARKER);
        }
    }
    free(cols);
    /* the time cursor */
    long cc = tui_gantt_col_of(g, v->cursor);
    if (cc >= 0 && cc < g->plot_w) {
        int x = g->plot_x + (int)cc;
        tui_canvas_put(c, x, r.y + 1, gl->cursor_mark, TUI_STYLE_CURSOR);
        for (int y = r.y + 2; y < r.y + r.h; y++) {
            const struct tui_cell *cell = tui_canvas_cell(c, x, y);
            if (!cell || y == g->heat_y) /* the heatmap's legend is text */
                continue;
            if (cell->cp == ' ' || (cell->cp == gl->vline_light && y >= g->rows_y))
                tui_canvas_put(c, x, y, gl->vline, TUI_STYLE_CURSOR);
            else
                tui_canvas_restyle(c, x, y, TUI_STYLE_CURSOR);
        }
    }
    tui_canvas_unclip(c);
}
