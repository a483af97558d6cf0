/*
 * The strips under the Gantt's rows, on its time axis (see gantt_int.h): E shows the
 * utilization of each engine kind over time (the share of its engines busy in each
 * column, as the height of a block), H the bandwidth heatmap: a row per HBM and per link
 * with traffic, read and written apart (a link's "rd" towards the host, "wr" away from it),
 * each cell shaded by the bandwidth against the resource's configured peak, with a legend
 * of the scale in GB/s. Both follow the Gantt's zoom, pan and cursor.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/resources.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether track t has ops (a track may hold only markers). */
static bool has_ops(const struct tui_gantt *g, uint32_t t)
{
    const uint32_t *idx;
    return trace_model_track_events(g->m, t, &idx) > 0;
}

/* The engine kinds with tracks that have ops, in order; returns how many. */
static int kinds_present(const struct tui_gantt *g, int *out)
{
    int n = 0;
    size_t nt = trace_model_track_count(g->m);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++) {
        bool any = false;
        for (uint32_t t = 0; t < nt && !any; t++)
            any = (int)trace_model_track_get(g->m, t)->engine == e && has_ops(g, t);
        if (any)
            out[n++] = e;
    }
    return n;
}

/* Resources whose samples have traffic: the heatmap shows 2 rows for each. */
static size_t heat_resources(const struct tui_gantt *g)
{
    size_t n = 0;
    for (size_t i = 0; g->res && i < trace_resources_count(g->res); i++) {
        const struct trace_resource *r = trace_resources_get(g->res, i);
        n += r->read || r->write;
    }
    return n;
}

void tui_gantt_strip_layout(struct tui_gantt *g)
{
    g->util_y = g->heat_y = g->power_y = -1;
    g->util_h = g->heat_h = g->power_h = 0;
    int room = g->rows_h - BAND_ROWS;
    int want_power = tui_gantt_power_rows(g);
    if (want_power && room > 0) {
        g->power_h = want_power < room ? want_power : room;
        room -= g->power_h;
    }
    if (g->show_util && room > 0) {
        int kinds[TRACE_ENGINE_COUNT];
        int n = kinds_present(g, kinds);
        g->util_h = n < room ? n : room;
        room -= g->util_h;
    }
    if (g->show_heat && room > 1) {
        size_t want = 1 + 2 * heat_resources(g); /* the legend, then the rows */
        g->heat_h = want < (size_t)room ? (int)want : room;
    }
    int bottom = g->rows_y + g->rows_h;
    if (g->heat_h) {
        bottom -= g->heat_h;
        g->heat_y = bottom;
    }
    if (g->util_h) {
        bottom -= g->util_h;
        g->util_y = bottom;
    }
    if (g->power_h) {
        bottom -= g->power_h;
        g->power_y = bottom;
    }
    g->rows_h = bottom - g->rows_y;
}

/* The height of a utilization cell: n engines busy for busy cycles of a column of w; 0
 * when none is busy. */
static int util_level(uint64_t busy, size_t n, uint64_t w)
{
    if (!busy)
        return 0;
    double f = (double)busy / ((double)n * (double)w);
    int level = (int)ceil(f * 8 - 1e-9);
    return level < 1 ? 1 : level > 8 ? 8 : level;
}

static void draw_util(struct tui_gantt *g, struct tui_canvas *c, const struct tui_glyphs *gl)
{
    int kinds[TRACE_ENGINE_COUNT];
    int nk = kinds_present(g, kinds);
    size_t nt = trace_model_track_count(g->m);
    uint32_t *tracks = sim_xcalloc(nt ? nt : 1, sizeof(*tracks));
    for (int k = 0; k < nk && k < g->util_h; k++) {
        int y = g->util_y + k;
        size_t n = 0;
        for (uint32_t t = 0; t < nt; t++)
            if ((int)trace_model_track_get(g->m, t)->engine == kinds[k] && has_ops(g, t))
                tracks[n++] = t;
        char label[32];
        snprintf(label, sizeof(label), "util %s x%zu",
                 trace_engine_name((enum trace_engine)kinds[k]), n);
        tui_canvas_fill(c, (struct tui_rect){g->rect.x, y, g->label_w, 1}, ' ', TUI_STYLE_LABEL);
        tui_canvas_text(c, g->rect.x + 1, y, g->label_w - 1, TUI_STYLE_LABEL, label,
                        TUI_TEXT_ELLIPSIS);
        tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ', TUI_STYLE_NORMAL);
        for (int i = 0; i < g->plot_w; i++) {
            uint64_t a, b, lo = 0, hi = 0;
            tui_gantt_cell_range(g, i, &a, &b);
            for (size_t j = 0; j < n; j++) {
                uint64_t l, h;
                tui_gantt_busy_bounds(g, tracks[j], i, &l, &h);
                lo += l, hi += h;
            }
            int level = util_level(lo, n, b - a);
            if (level != util_level(hi, n, b - a)) { /* not settled by the summary */
                lo = 0;
                for (size_t j = 0; j < n; j++)
                    lo += tui_gantt_busy_exact(g, tracks[j], i);
                level = util_level(lo, n, b - a);
            }
            if (level)
                tui_canvas_put(c, g->plot_x + i, y, gl->spark[level], TUI_STYLE_BANDWIDTH);
        }
    }
    free(tracks);
}

/* The shade of a share of the peak: nothing, then quarters. */
static void heat_cell(double u, const struct tui_glyphs *gl, uint32_t *glyph, enum tui_style *st)
{
    static const enum tui_style styles[4] = {TUI_STYLE_HEAT_1, TUI_STYLE_HEAT_2, TUI_STYLE_HEAT_3,
                                             TUI_STYLE_HEAT_4};
    int q = u <= 0.25 ? 0 : u <= 0.5 ? 1 : u <= 0.75 ? 2 : 3;
    *glyph = q < 3 ? gl->shade[q + 1] : gl->eighths[8];
    *st = styles[q];
}

/* The legend: the shades as quarters of the peak, and the peaks in GB/s. */
static void draw_legend(struct tui_gantt *g, struct tui_canvas *c, int y,
                        const struct tui_glyphs *gl)
{
    tui_canvas_fill(c, (struct tui_rect){g->rect.x, y, g->rect.w, 1}, ' ', TUI_STYLE_NORMAL);
    tui_canvas_text(c, g->rect.x + 1, y, g->label_w - 1, TUI_STYLE_LABEL, "bandwidth",
                    TUI_TEXT_ELLIPSIS);
    int x = g->plot_x;
    static const double at[4] = {0.25, 0.5, 0.75, 1.0};
    for (int q = 0; q < 4 && x < g->plot_x + g->plot_w - 6; q++) {
        uint32_t glyph;
        enum tui_style st;
        heat_cell(at[q] - 0.01, gl, &glyph, &st);
        tui_canvas_put(c, x, y, glyph, st);
        x += 1 + tui_canvas_printf(c, x + 1, y, g->plot_x + g->plot_w - x - 1, TUI_STYLE_DIM,
                                   "%s%d%% ", q ? "" : "<=", (int)(at[q] * 100));
    }
    /* the peaks, each kind of resource once */
    double ghz = trace_model_clock_ghz(g->m);
    char text[256] = "of peak";
    size_t len = strlen(text);
    double seen[8];
    int nseen = 0;
    for (size_t i = 0; g->res && i < trace_resources_count(g->res); i++) {
        const struct trace_resource *r = trace_resources_get(g->res, i);
        if (!(r->read || r->write))
            continue;
        double pk = r->peak > 0 ? r->peak : r->max_rate;
        bool dup = false;
        for (int k = 0; k < nseen && !dup; k++)
            dup = seen[k] == pk;
        if (dup || nseen == 8 || len >= sizeof(text) - 40)
            continue;
        seen[nseen++] = pk;
        const char *what = r->kind == TRACE_RES_HBM         ? "HBM"
                           : r->kind == TRACE_RES_HOST_LINK ? "host link"
                                                            : "link";
        if (ghz > 0)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s %s %.0f GB/s%s",
                                    nseen == 1 ? ":" : ",", what, pk * ghz,
                                    r->peak > 0 ? "" : " (busiest)");
        else
            len +=
                (size_t)snprintf(text + len, sizeof(text) - len, "%s %s %.1f B/cycle%s",
                                 nseen == 1 ? ":" : ",", what, pk, r->peak > 0 ? "" : " (busiest)");
    }
    tui_canvas_text(c, x, y, g->plot_x + g->plot_w - x, TUI_STYLE_DIM, text, TUI_TEXT_ELLIPSIS);
}

/* A short name of resource name for its rows: "c0.hbm" for sip0.cube0.hbm, a link by the
 * ends' parts after what they share ("c0.noc-pe1.pe_dma"); "sipN." is left out on a chip of
 * one sip. */
static void short_name(const char *name, bool one_sip, char *out, size_t size)
{
    char tmp[256];
    const char *sep = strstr(name, "<->");
    if (!sep) {
        snprintf(tmp, sizeof(tmp), "%s", name);
    } else {
        const char *a = name, *b = sep + 3;
        size_t shared = 0;
        for (size_t k = 0; a + k < sep && b[k] && a[k] == b[k]; k++)
            if (a[k] == '.')
                shared = k + 1;
        snprintf(tmp, sizeof(tmp), "%.*s%.*s-%s", (int)shared, a,
                 (int)(sep - a - (ptrdiff_t)shared), a + shared, b + shared);
    }
    size_t n = 0;
    for (const char *p = tmp; *p && n + 1 < size;) {
        if (one_sip && strncmp(p, "sip0.", 5) == 0) {
            p += 5;
        } else if (strncmp(p, "cube", 4) == 0 && p[4] >= '0' && p[4] <= '9') {
            out[n++] = 'c';
            p += 4;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
}

static void draw_heat(struct tui_gantt *g, struct tui_canvas *c, const struct tui_glyphs *gl)
{
    draw_legend(g, c, g->heat_y, gl);
    int y = g->heat_y + 1, end = g->heat_y + g->heat_h;
    for (size_t i = 0; g->res && i < trace_resources_count(g->res) && y < end; i++) {
        const struct trace_resource *r = trace_resources_get(g->res, i);
        if (!(r->read || r->write))
            continue;
        const char *name = trace_model_str(g->m, r->name);
        char sn[160];
        short_name(name, !strstr(name, "sip1"), sn, sizeof(sn));
        for (int dir = 0; dir < 2 && y < end; dir++, y++) {
            char label[200], q[180];
            sim_escape(sn, strlen(sn), q, sizeof(q));
            snprintf(label, sizeof(label), "%s %s", q, dir ? "wr" : "rd");
            tui_canvas_fill(c, (struct tui_rect){g->rect.x, y, g->label_w, 1}, ' ',
                            TUI_STYLE_LABEL);
            /* the name's end and the direction matter most: cut from the left */
            int w = tui_text_width(label, strlen(label), c->unicode, 0);
            const char *shown = label;
            while (w > g->label_w - 1 && *shown) {
                shown++;
                w = tui_text_width(shown, strlen(shown), c->unicode, 0);
            }
            tui_canvas_text(c, g->rect.x + 1, y, g->label_w - 1, TUI_STYLE_LABEL, shown, 0);
            tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ',
                            TUI_STYLE_NORMAL);
            for (int k = 0; k < g->plot_w; k++) {
                uint64_t a, b;
                tui_gantt_cell_range(g, k, &a, &b);
                double rd, wr;
                trace_resources_util2(g->res, i, a, b, &rd, &wr);
                double u = dir ? wr : rd;
                if (!(u > 0))
                    continue;
                uint32_t glyph;
                enum tui_style st;
                heat_cell(u, gl, &glyph, &st);
                tui_canvas_put(c, g->plot_x + k, y, glyph, st);
            }
        }
    }
}

int tui_gantt_strip_label_width(const struct tui_gantt *g, bool unicode)
{
    int w = g->show_util || g->show_power ? 16 : 0; /* "util HOST x4096" and a space */
    for (size_t i = 0; g->show_heat && g->res && i < trace_resources_count(g->res); i++) {
        const char *name = trace_model_str(g->m, trace_resources_get(g->res, i)->name);
        char sn[160];
        short_name(name, !strstr(name, "sip1"), sn, sizeof(sn));
        int x = tui_text_width(sn, strlen(sn), unicode, TUI_TEXT_UNTRUSTED) + 5; /* " rd " */
        w = x > w ? x : w;
    }
    return w;
}

void tui_gantt_draw_strips(struct tui_gantt *g, struct tui_canvas *c, const struct tui_glyphs *gl)
{
    if (g->util_y >= 0)
        draw_util(g, c, gl);
    if (g->heat_y >= 0)
        draw_heat(g, c, gl);
    tui_gantt_draw_power(g, c, gl);
}
