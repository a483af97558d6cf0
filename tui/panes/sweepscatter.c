/*
 * The time-versus-energy scatter of a sweep (see sweepscatter.h): a point per ok row with
 * both figures, placed on a grid scaled from the smallest to the largest of each; the
 * Pareto front's points drawn apart and named in the title.
 */
#include "tui/panes/sweepscatter.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool usable(const struct tui_sweep_row *r)
{
    return r->status == TUI_SWEEP_OK && isfinite(r->m.time_ns) && isfinite(r->m.energy_j);
}

size_t tui_sweep_pareto(const struct tui_sweep_table *t, bool *on)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        const struct tui_sweep_row *a = &t->rows[i];
        on[i] = usable(a);
        for (size_t j = 0; j < t->nrows && on[i]; j++) {
            const struct tui_sweep_row *b = &t->rows[j];
            if (j == i || !usable(b))
                continue;
            bool no_worse = b->m.time_ns <= a->m.time_ns && b->m.energy_j <= a->m.energy_j;
            bool better = b->m.time_ns < a->m.time_ns || b->m.energy_j < a->m.energy_j;
            if (no_worse && better)
                on[i] = false; /* b is faster for no more energy, or the reverse */
        }
        n += on[i];
    }
    return n;
}

/* A figure in a few characters: "%.3g". */
static const char *g3(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.3g", v);
    return buf;
}

void tui_sweep_scatter_render(const struct tui_sweep_table *t, const struct tui_sweep_row *sel,
                              struct tui_canvas *c, struct tui_rect r)
{
    bool *on = sim_xcalloc(t->nrows ? t->nrows : 1, sizeof(*on));
    size_t nf = tui_sweep_pareto(t, on);
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    size_t n = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        const struct tui_sweep_row *p = &t->rows[i];
        if (!usable(p))
            continue;
        n++;
        x0 = fmin(x0, p->m.time_ns), x1 = fmax(x1, p->m.time_ns);
        y0 = fmin(y0, p->m.energy_j), y1 = fmax(y1, p->m.energy_j);
    }
    char title[256] = " energy_j vs time_ns: Pareto front";
    size_t k = strlen(title);
    for (size_t i = 0; i < t->nrows && k + 8 < sizeof(title); i++)
        if (on[i])
            k += (size_t)snprintf(title + k, sizeof(title) - k, " %s", t->rows[i].id);
    snprintf(title + k, sizeof(title) - k, "%s", nf ? " " : " (none) ");
    tui_canvas_box(c, r, "");
    tui_canvas_text(c, r.x + 2, r.y, r.w - 4, TUI_STYLE_TITLE_FOCUS, title,
                    TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    struct tui_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (!n) {
        tui_canvas_text(c, in.x + 1, in.y, in.w - 2, TUI_STYLE_DIM,
                        "no point has both a time and an energy (a chip config without an "
                        "energy table?)",
                        TUI_TEXT_ELLIPSIS);
        tui_canvas_unclip(c);
        free(on);
        return;
    }
    /* energy labels on the left (top: the largest), time labels on the last line */
    char a[32], b[32];
    g3(y1, a, sizeof(a));
    g3(y0, b, sizeof(b));
    int lw = (int)(strlen(a) > strlen(b) ? strlen(a) : strlen(b)) + 1;
    int gx = in.x + lw, gw = in.w - lw - 1, gy = in.y, gh = in.h - 1;
    if (gw < 4 || gh < 2) {
        tui_canvas_unclip(c);
        free(on);
        return;
    }
    tui_canvas_text(c, in.x, gy, lw - 1, TUI_STYLE_RULER, a, TUI_TEXT_RIGHT);
    tui_canvas_text(c, in.x, gy + gh - 1, lw - 1, TUI_STYLE_RULER, b, TUI_TEXT_RIGHT);
    g3(x0, a, sizeof(a));
    g3(x1, b, sizeof(b));
    tui_canvas_text(c, gx, in.y + in.h - 1, gw, TUI_STYLE_RULER, a, 0);
    tui_canvas_text(c, gx + gw - (int)strlen(b), in.y + in.h - 1, (int)strlen(b), TUI_STYLE_RULER,
                    b, 0);
    const char *axis = "time_ns";
    int ax = gx + (gw - (int)strlen(axis)) / 2;
    if (ax > gx + (int)strlen(a) && ax + (int)strlen(axis) < gx + gw - (int)strlen(b))
        tui_canvas_text(c, ax, in.y + in.h - 1, (int)strlen(axis), TUI_STYLE_DIM, axis, 0);
    /* the points: the front's last, so that they show over the others */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < t->nrows; i++) {
            const struct tui_sweep_row *p = &t->rows[i];
            if (!usable(p) || on[i] != (pass == 1))
                continue;
            double fx = x1 > x0 ? (p->m.time_ns - x0) / (x1 - x0) : 0.5;
            double fy = y1 > y0 ? (p->m.energy_j - y0) / (y1 - y0) : 0.5;
            int px = gx + (int)lround(fx * (gw - 1));
            int py = gy + gh - 1 - (int)lround(fy * (gh - 1));
            uint32_t glyph =
                on[i] ? (c->unicode ? 0x25C6 /* ◆ */ : '*') : (c->unicode ? 0x25CF /* ● */ : 'o');
            enum tui_style st = p == sel ? TUI_STYLE_SELECTION
                                : on[i]  ? TUI_STYLE_VALUE
                                         : TUI_STYLE_BAR;
            tui_canvas_put(c, px, py, glyph, st);
        }
    }
    tui_canvas_unclip(c);
    free(on);
}
