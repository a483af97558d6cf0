/*
 * The tracks' level-of-detail summaries (trace/model/lod.h) and the Gantt drawn from them:
 * the bounds on a track's busy time always hold and are exact at the summary's block
 * starts, the shape they prove is true, through coarser levels and a live run's growth
 * with ops in flight; and every cell of the Gantt's rows, groups and utilization strip is
 * what the busy time itself gives, at many zooms and offsets, for dense, sparse,
 * overlapping, empty and single ops.
 */
#include "test_tui_util.h"
#include "trace/model/budget.h"
#include "trace/model/lod.h"
#include "tui/gantt/gantt.h"
#include "tui/gantt/gantt_int.h"

#include <math.h>

TestSuite(lod, .init = tui_test_locale);

static uint64_t rng = 1;
static uint64_t rnd(uint64_t n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return n ? (rng >> 33) % n : 0;
}

enum { NTRACK = 7 };

/* Track k's ops as (start, end) pairs in start order, by a pattern of its own: back to
 * back with a few gaps, sparse, overlapping long and short, empty ones among short, a
 * single op, equal starts, long gaps between bursts. */
static size_t pattern(int k, size_t n, uint64_t *s, uint64_t *e)
{
    uint64_t t = 100 + rnd(50);
    if (k == 4) {
        s[0] = 5000, e[0] = 5000 + 1 + rnd(100000);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t len;
        switch (k) {
        case 0:
            t += rnd(20) == 0 ? rnd(40) : 0;
            len = 1 + rnd(30);
            s[i] = t, e[i] = t + len, t += len;
            break;
        case 1:
            t += 5 + rnd(60);
            len = 1 + rnd(20);
            s[i] = t, e[i] = t + len;
            break;
        case 2:
            t += rnd(25);
            len = rnd(8) == 0 ? 50 + rnd(400) : 1 + rnd(10);
            s[i] = t, e[i] = t + len;
            break;
        case 3:
            t += rnd(12);
            len = rnd(3) == 0 ? 0 : 1 + rnd(6);
            s[i] = t, e[i] = t + len;
            break;
        case 5:
            t += rnd(4) == 0 ? rnd(30) : 0;
            s[i] = t, e[i] = t + 1 + rnd(25);
            break;
        default:
            t += rnd(50) == 0 ? 2000 + rnd(5000) : 1 + rnd(3);
            len = 1 + rnd(4);
            s[i] = t, e[i] = t + len;
            break;
        }
    }
    return n;
}

/* A model of NTRACK tracks of the patterns, n ops each (about), added interleaved by start
 * as a live run adds them, finished every so often. */
static struct trace_model *random_model(size_t n)
{
    struct trace_model *m = trace_model_new();
    uint64_t *s[NTRACK], *e[NTRACK];
    size_t len[NTRACK], at[NTRACK] = {0};
    uint32_t tr[NTRACK];
    for (int k = 0; k < NTRACK; k++) {
        char name[64];
        snprintf(name, sizeof(name), "sip0.cube0.pe%d.pe_dma", k);
        tr[k] = trace_model_track(m, name, TRACE_ENGINE_DMA, k);
        s[k] = sim_xcalloc(n, sizeof(uint64_t));
        e[k] = sim_xcalloc(n, sizeof(uint64_t));
        len[k] = pattern(k, n, s[k], e[k]);
    }
    size_t added = 0;
    for (;;) {
        int best = -1;
        for (int k = 0; k < NTRACK; k++)
            if (at[k] < len[k] && (best < 0 || s[k][at[k]] < s[best][at[best]]))
                best = k;
        if (best < 0)
            break;
        size_t i = at[best]++;
        tui_test_event(m, tr[best], rnd(2) ? "x" : "a_longer_name",
                       rnd(7) == 0 ? TRACE_KIND_MATH : TRACE_KIND_MEMORY, s[best][i], e[best][i]);
        if (++added % 777 == 0)
            trace_model_finish(m);
    }
    trace_model_finish(m);
    for (int k = 0; k < NTRACK; k++)
        free(s[k]), free(e[k]);
    return m;
}

/* The bounds hold everywhere, are exact at block starts and where the busy time is one
 * run; the shape's bits are true. */
static void check_bounds(const struct trace_model *m, uint32_t t, uint64_t span)
{
    for (int q = 0; q < 3000; q++) {
        uint64_t x = q < 40 ? (uint64_t)q : rnd(span + 200);
        uint64_t lo, hi, c = trace_model_track_cover(m, t, x);
        trace_model_track_cover_bounds(m, t, x, &lo, &hi);
        cr_assert(lo <= c && c <= hi, "track %u at %lu: %lu not in [%lu, %lu]", t, (unsigned long)x,
                  (unsigned long)c, (unsigned long)lo, (unsigned long)hi);
        uint64_t a = x, b = x + 1 + rnd(span / (1 + rnd(50)) + 1);
        unsigned sh = trace_model_track_shape(m, t, a, b);
        uint64_t ca = c, cb = trace_model_track_cover(m, t, b), busy = cb - ca;
        if (sh & TRACE_SHAPE_IDLE_BUSY)
            cr_assert(busy > 0 && trace_model_track_cover(m, t, a + busy) - ca != busy,
                      "track %u [%lu, %lu): idle before busy, yet one run from the left", t,
                      (unsigned long)a, (unsigned long)b);
        if (sh & TRACE_SHAPE_BUSY_IDLE)
            cr_assert(busy > 0 && trace_model_track_cover(m, t, b - busy) != ca,
                      "track %u [%lu, %lu): busy before idle, yet one run to the right", t,
                      (unsigned long)a, (unsigned long)b);
    }
}

Test(lod, bounds_hold_and_levels_grow_coarser)
{
    trace_budget_set(1 << 20); /* the summaries' floor: a few levels for this many ops */
    rng = 7;
    struct trace_model *m = random_model(12000);
    cr_assert_gt(trace_model_lod_stride(m), 16, "coarser levels (stride %zu)",
                 trace_model_lod_stride(m));
    /* a thirty-second of the budget, and room to grow to twice that */
    cr_assert_leq(trace_model_lod_bytes(m), 2 * (1 << 20) / 32, "bounded: %zu bytes",
                  trace_model_lod_bytes(m));
    uint64_t span = trace_model_t_max(m);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++)
        check_bounds(m, t, span);
    /* exact at the start of every op of the single-op track and on the dense track's runs */
    uint64_t lo, hi;
    trace_model_track_cover_bounds(m, 4, 5000, &lo, &hi);
    cr_assert_eq(lo, hi);
    trace_model_track_cover_bounds(m, 4, UINT64_MAX, &lo, &hi);
    cr_assert(lo == hi && lo == trace_model_track_cover(m, 4, UINT64_MAX));
    trace_model_free(m);
    trace_budget_set(TRACE_BUDGET_DEFAULT);
}

Test(lod, a_live_run_with_ops_in_flight)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint64_t now = 0, open[8];
    size_t nopen = 0;
    rng = 11;
    for (int step = 0; step < 4000; step++) {
        now += 1 + rnd(20);
        trace_model_set_now(m, now);
        if (nopen < 8 && rnd(2)) {
            struct trace_event ev = {.start = now,
                                     .end = now,
                                     .track = t,
                                     .cmdq_id = TRACE_NO_CMDQ,
                                     .flags = TRACE_EV_INFLIGHT};
            open[nopen++] = trace_model_add_event(m, &ev);
        } else if (nopen) {
            size_t k = rnd(nopen);
            trace_model_end_event(m, open[k], now);
            open[k] = open[--nopen];
        }
        if (step % 50 == 0) {
            trace_model_finish(m);
            check_bounds(m, t, now);
        }
    }
    trace_model_finish(m);
    check_bounds(m, t, now);
    trace_model_free(m);
}

/* ---- the Gantt: every cell as the busy time itself gives it --------------------------- */

static uint64_t cov(const struct trace_model *m, uint32_t t, uint64_t x)
{
    return trace_model_track_cover(m, t, x);
}

/* A track cell's glyph from its busy time ('\0': empty). */
static uint32_t ref_cell(const struct trace_model *m, uint32_t t, uint64_t a, uint64_t b,
                         const struct tui_glyphs *gl)
{
    uint64_t busy = cov(m, t, b) - cov(m, t, a), w = b - a;
    if (!busy)
        return 0;
    if (busy >= w)
        return gl->eighths[8];
    uint64_t e8 = (busy * 8 + w / 2) / w;
    e8 = e8 < 1 ? 1 : e8 > 7 ? 7 : e8;
    uint64_t ca = cov(m, t, a);
    if (cov(m, t, a + busy) - ca == busy)
        return gl->eighths[e8];
    if (ca + busy - cov(m, t, b - busy) == busy)
        return e8 >= 4 ? gl->right_half : gl->right_8th;
    return busy * 3 <= w ? gl->shade[1] : busy * 3 <= 2 * w ? gl->shade[2] : gl->shade[3];
}

/* The cells of track's row where an op's name may be written: as the Gantt picks the ops
 * wide enough, from the first in view, a few hundred at most. */
static void text_cells(const struct tui_gantt *g, const struct trace_model *m, uint32_t t,
                       bool *text)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, t, &idx);
    uint64_t a0, b0, e = tui_gantt_view_end(g);
    tui_gantt_cell_range(g, 0, &a0, &b0);
    for (size_t k = trace_model_track_seek(m, t, a0), s = 0; k < n && s < TEXT_EVENTS; k++, s++) {
        const struct trace_event *ev = trace_model_event(m, idx[k]);
        if (ev->start >= e)
            break;
        long c0 = (long)ceil(((double)ev->start - g->t0) / g->cpc);
        long c1 = (long)floor(((double)tui_gantt_ev_end(g, ev) - g->t0) / g->cpc);
        c0 = c0 < 0 ? 0 : c0;
        c1 = c1 > g->plot_w ? g->plot_w : c1;
        for (long i = c0 + 1; c1 - c0 >= 5 && i < c1 - 1; i++)
            text[i] = true;
    }
}

/* Check every cell of rows, group rows and the utilization strip against the busy time. */
static void check_screen(struct tui_gantt *g, struct tui_canvas *c, struct tui_view *v,
                         const struct trace_model *m, const char *what)
{
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    long cursor = tui_gantt_col_of(g, v->cursor);
    size_t checked = 0;
    for (int k = 0; k < g->rows_h && g->top + (size_t)k < g->nrows; k++) {
        const struct gnode *n = &g->nodes[g->rows[g->top + (size_t)k]];
        int y = g->rows_y + k;
        bool *text = sim_xcalloc((size_t)g->plot_w + 1, 1);
        if (n->is_track)
            text_cells(g, m, n->track, text);
        for (int i = 0; i < g->plot_w; i++) {
            if (i == cursor || text[i])
                continue;
            uint64_t a, b;
            tui_gantt_cell_range(g, i, &a, &b);
            uint32_t want = ' ', got = tui_canvas_cell(c, g->plot_x + i, y)->cp;
            if (n->is_track) {
                want = ref_cell(m, n->track, a, b, gl);
                want = want ? want : ' ';
            } else if (n->ntracks) {
                uint64_t busy = 0, w = (b - a) * n->ntracks;
                for (size_t j = 0; j < n->ntracks; j++)
                    busy += cov(m, n->tracks[j], b) - cov(m, n->tracks[j], a);
                want = !busy               ? ' '
                       : busy >= w         ? gl->eighths[8]
                       : busy * 3 <= w     ? gl->shade[1]
                       : busy * 3 <= 2 * w ? gl->shade[2]
                                           : gl->shade[3];
            }
            cr_assert_eq(got, want, "%s: row %d col %d [%lu, %lu): U+%04X, want U+%04X", what, k, i,
                         (unsigned long)a, (unsigned long)b, got, want);
            checked++;
        }
        free(text);
    }
    cr_assert_gt(checked, 100, "%s: cells checked", what);
    if (g->util_y < 0)
        return;
    size_t nt = trace_model_track_count(m);
    for (int i = 0; i < g->plot_w; i++) {
        if (i == cursor)
            continue;
        uint64_t a, b, busy = 0;
        tui_gantt_cell_range(g, i, &a, &b);
        for (uint32_t t = 0; t < nt; t++)
            busy += cov(m, t, b) - cov(m, t, a);
        uint32_t want = ' ';
        if (busy) {
            double f = (double)busy / ((double)nt * (double)(b - a));
            int level = (int)ceil(f * 8 - 1e-9);
            want = gl->spark[level < 1 ? 1 : level > 8 ? 8 : level];
        }
        cr_assert_eq(c->cells[g->util_y * c->w + g->plot_x + i].cp, want,
                     "%s: utilization col %d: U+%04X, want U+%04X", what, i,
                     c->cells[g->util_y * c->w + g->plot_x + i].cp, want);
    }
}

Test(lod, every_cell_is_what_the_busy_time_gives_at_any_zoom)
{
    trace_budget_set(1 << 20);
    rng = 3;
    struct trace_model *m = random_model(9000);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_gantt *g = tui_gantt_new(&v);
    int widths[] = {97, 160, 61};
    uint64_t span = trace_model_t_max(m);
    for (int wi = 0; wi < 3; wi++) {
        struct tui_canvas *c = tui_canvas_new(widths[wi], 24, true);
        for (int q = 0; q < 40; q++) {
            tui_gantt_ops.sync(g, &v);
            g->show_util = q % 2 == 0;
            g->fit = false;
            /* from the whole run down to a few cycles a column, at odd offsets */
            g->cpc = q == 0 ? (double)span : (double)span / (double)(1 + rnd(q < 20 ? 64 : 50000));
            g->cpc += (double)rnd(1000) / 997.0;
            g->t0 = (double)rnd(span);
            tui_gantt_ops.render(g, c, (struct tui_rect){0, 0, c->w, c->h}, &v, true);
            char what[96];
            snprintf(what, sizeof(what), "width %d, %.3f cycles a column from %.0f", c->w, g->cpc,
                     g->t0);
            check_screen(g, c, &v, m, what);
        }
        tui_canvas_free(c);
    }
    tui_gantt_free(g);
    trace_model_free(m);
    trace_budget_set(TRACE_BUDGET_DEFAULT);
}

Test(lod, a_live_runs_cells_with_ops_in_flight)
{
    struct trace_model *m = trace_model_new();
    uint32_t tr[3];
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof(name), "sip0.cube0.pe%d.pe_dma", k);
        tr[k] = trace_model_track(m, name, TRACE_ENGINE_DMA, k);
    }
    struct tui_view v;
    tui_view_init(&v, m, true);
    v.live = true;
    struct tui_gantt *g = tui_gantt_new(&v);
    struct tui_canvas *c = tui_canvas_new(120, 16, true);
    uint64_t now = 0, open[24];
    size_t nopen = 0;
    rng = 5;
    for (int step = 1; step <= 20000; step++) {
        now += 1 + rnd(6);
        trace_model_set_now(m, now);
        if (nopen < 24 && rnd(2)) {
            struct trace_event ev = {.start = now,
                                     .end = now,
                                     .track = tr[rnd(3)],
                                     .cmdq_id = TRACE_NO_CMDQ,
                                     .op = trace_model_intern(m, "x", 1),
                                     .flags = TRACE_EV_INFLIGHT};
            open[nopen++] = trace_model_add_event(m, &ev);
        } else if (nopen) {
            size_t k = rnd(nopen);
            trace_model_end_event(m, open[k], now);
            open[k] = open[--nopen];
        }
        if (step % 1000 == 0) {
            trace_model_finish(m);
            for (int q = 0; q < 4; q++) {
                tui_gantt_ops.sync(g, &v);
                g->fit = false;
                g->cpc = (double)now / (double)(1 + rnd(q ? 400 : 1));
                g->t0 = (double)rnd(now);
                tui_gantt_ops.render(g, c, (struct tui_rect){0, 0, c->w, c->h}, &v, true);
                char what[96];
                snprintf(what, sizeof(what), "live at %lu, %.3f cycles a column from %.0f",
                         (unsigned long)now, g->cpc, g->t0);
                check_screen(g, c, &v, m, what);
            }
        }
    }
    tui_canvas_free(c);
    tui_gantt_free(g);
    trace_model_free(m);
}
