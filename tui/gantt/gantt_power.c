/*
 * The power strip under the Gantt's rows (see gantt_int.h), on its time axis: W shows the
 * chip's power in each column (the joules of the trace's power samples over the column's
 * cycles, trace/analysis/energy.h, as watts), a second W adds a row per component kind
 * (GEMM, MATH, HBM, SRAM, TCM, NoC, CPUs, static), a third hides it. Each row's blocks are
 * scaled to the busiest column of the total, named in the label, so rows compare.
 */
#include "tui/gantt/gantt_int.h"

#include "trace/analysis/energy.h"

#include <math.h>
#include <stdio.h>

/* Whether the model has power samples: the strip has something to show. */
static bool have_power(const struct tui_gantt *g)
{
    return trace_model_power_count(g->m) > 0 && trace_model_clock_ghz(g->m) > 0;
}

/* The kinds with energy, in order; returns how many. */
static int kinds_with_energy(const struct tui_gantt *g, int *out)
{
    double sum[TRACE_POWER_KINDS] = {0};
    for (size_t i = 0; i < trace_model_power_count(g->m); i++)
        for (int k = 0; k < TRACE_POWER_KINDS; k++)
            sum[k] += trace_model_power(g->m, i)->joules[k];
    int n = 0;
    for (int k = 0; k < TRACE_POWER_KINDS; k++)
        if (sum[k] > 0)
            out[n++] = k;
    return n;
}

int tui_gantt_power_rows(const struct tui_gantt *g)
{
    if (!g->show_power)
        return 0;
    if (!have_power(g))
        return 1; /* says that the energy is unknown */
    int kinds[TRACE_POWER_KINDS];
    return g->show_power > 1 ? 1 + kinds_with_energy(g, kinds) : 1;
}

/* Watts of kind (-1: all) over the cycles of column i. */
static double column_watts(const struct tui_gantt *g, int i, int kind, double ghz)
{
    uint64_t a, b;
    tui_gantt_cell_range(g, i, &a, &b);
    if (b <= a)
        return 0;
    double j = trace_energy_kind_between(g->m, a, b, kind);
    return isfinite(j) ? j / ((double)(b - a) / (ghz * 1e9)) : 0;
}

static void label(struct tui_gantt *g, struct tui_canvas *c, int y, const char *text)
{
    tui_canvas_fill(c, (struct tui_rect){g->rect.x, y, g->label_w, 1}, ' ', TUI_STYLE_LABEL);
    tui_canvas_text(c, g->rect.x + 1, y, g->label_w - 1, TUI_STYLE_LABEL, text, TUI_TEXT_ELLIPSIS);
    tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ', TUI_STYLE_NORMAL);
}

void tui_gantt_draw_power(struct tui_gantt *g, struct tui_canvas *c, const struct tui_glyphs *gl)
{
    if (g->power_y < 0)
        return;
    if (!have_power(g)) {
        label(g, c, g->power_y, "power");
        tui_canvas_text(c, g->plot_x, g->power_y, g->plot_w, TUI_STYLE_DIM,
                        "energy unknown: the chip config has no energy table", TUI_TEXT_ELLIPSIS);
        return;
    }
    double ghz = trace_model_clock_ghz(g->m), max = 0;
    for (int i = 0; i < g->plot_w; i++) {
        double w = column_watts(g, i, -1, ghz);
        max = w > max ? w : max;
    }
    int kinds[TRACE_POWER_KINDS], nk = g->show_power > 1 ? kinds_with_energy(g, kinds) : 0;
    for (int r = 0; r < g->power_h && r <= nk; r++) {
        int y = g->power_y + r, kind = r ? kinds[r - 1] : -1;
        char text[48], w[32];
        if (r)
            snprintf(text, sizeof(text), "  %s",
                     trace_energy_kind_name((enum trace_energy_kind)kind));
        else
            snprintf(text, sizeof(text), "power <=%s", trace_energy_fmt(max, "W", w, sizeof(w)));
        label(g, c, y, text);
        for (int i = 0; i < g->plot_w && max > 0; i++) {
            double f = column_watts(g, i, kind, ghz) / max;
            if (f <= 0)
                continue;
            int level = (int)ceil(f * 8 - 1e-9);
            level = level < 1 ? 1 : level > 8 ? 8 : level;
            tui_canvas_put(c, g->plot_x + i, y, gl->spark[level], TUI_STYLE_BANDWIDTH);
        }
    }
}
