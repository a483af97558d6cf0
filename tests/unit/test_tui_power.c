/*
 * Energy in the viewer, headless: the power strip under the Gantt (W: the total, W again:
 * a row per component kind, and "energy unknown" for a trace without it), the summary
 * pane's energy lines and the tokens pane's energy per token, on the small trace of the
 * golden tests given a chip with the default energy table and an HBM ramp.
 */
#include "test_tui_pane.h"
#include "trace/analysis/energy.h"
#include "tui/gantt/gantt.h"
#include "tui/panes/summary.h"
#include "tui/panes/tokens.h"

TestSuite(tui_power, .init = tui_test_locale);

/* The golden model on a 1 sip x 1 cube x 2 PE chip at 1 GHz with the default energy
 * table; its HBM reads 2560 x k bytes in window k of 100 cycles; the energy computed with
 * power windows of 50 cycles. */
static struct trace_model *power_model(void)
{
    struct trace_model *m = tui_test_model();
    uint32_t hbm = trace_model_intern(m, "sip0.cube0.hbm", 14);
    for (uint64_t k = 0; k < 10; k++)
        trace_model_add_bw_sample(m, &(struct trace_bw_sample){k * 100, 100, k * 2560, 0, hbm});
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.0);
    struct sim_value *chip = sim_value_map_set_take(cfg, "chip", sim_value_map());
    sim_value_map_set_int(chip, "sips", 1);
    sim_value_map_set_int(chip, "cubes_per_sip", 1);
    sim_value_map_set_int(chip, "pes_per_cube", 2);
    sim_value_map_set_take(cfg, "energy", sim_value_map());
    trace_model_set_config_take(m, cfg);
    trace_model_finish(m);
    struct trace_energy e;
    struct trace_power_sample *s;
    size_t n;
    cr_assert(trace_energy_compute(m, 50, &e, &s, &n));
    trace_model_set_energy_take(m, trace_energy_to_value(&e), s, n);
    return m;
}

struct gfix {
    struct trace_model *m;
    struct tui_view v;
    struct tui_gantt *g;
    struct tui_canvas *c;
};

static void gdraw(struct gfix *f)
{
    tui_gantt_ops.sync(f->g, &f->v);
    tui_gantt_ops.render(f->g, f->c, (struct tui_rect){0, 0, f->c->w, f->c->h}, &f->v, true);
}

static void gsetup(struct gfix *f, struct trace_model *m)
{
    f->m = m;
    tui_view_init(&f->v, f->m, true);
    f->g = tui_gantt_new(&f->v);
    f->c = tui_canvas_new(100, 24, true);
    gdraw(f);
}

static void gkey(struct gfix *f, enum tui_action a)
{
    tui_gantt_ops.action(f->g, a, &f->v);
    gdraw(f);
}

static void gfree(struct gfix *f)
{
    tui_canvas_free(f->c);
    tui_gantt_free(f->g);
    trace_model_free(f->m);
}

/* The line of the dump that holds text, or NULL. */
static const char *line_with(const char *dump, const char *text)
{
    static char buf[1024];
    const char *p = strstr(dump, text);
    if (!p)
        return NULL;
    while (p > dump && p[-1] != '\n')
        p--;
    size_t n = strcspn(p, "\n");
    snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
    return buf;
}

Test(tui_power, the_power_strip_and_its_kinds_golden)
{
    struct gfix f;
    gsetup(&f, power_model());
    char *d = tui_canvas_dump(f.c, false);
    cr_assert_null(strstr(d, "power <="), "hidden until W: %s", d);
    free(d);
    gkey(&f, TUI_ACT_POWER);
    d = tui_canvas_dump(f.c, false);
    const char *row = line_with(d, "power <=");
    cr_assert_not_null(row, "%s", d);
    cr_assert(strstr(row, "█"), "the busiest column is full: %s", row);
    cr_assert(strstr(f.v.message, "W again: by component kind"), "%s", f.v.message);
    tui_test_golden("gantt_power", d);
    free(d);
    gkey(&f, TUI_ACT_POWER);
    d = tui_canvas_dump(f.c, false);
    cr_assert_not_null(line_with(d, "  hbm"), "%s", d);
    cr_assert_not_null(line_with(d, "  static"), "%s", d);
    cr_assert_not_null(line_with(d, "  gemm"), "%s", d);
    tui_test_golden("gantt_power_kinds", d);
    free(d);
    gkey(&f, TUI_ACT_POWER);
    d = tui_canvas_dump(f.c, false);
    cr_assert_null(strstr(d, "power <="), "a third W hides it: %s", d);
    free(d);
    gfree(&f);
}

Test(tui_power, without_energy_the_strip_says_unknown)
{
    struct gfix f;
    gsetup(&f, tui_test_model());
    gkey(&f, TUI_ACT_POWER);
    char *d = tui_canvas_dump(f.c, false);
    cr_assert(strstr(d, "energy unknown: the chip config has no energy table"), "%s", d);
    free(d);
    gfree(&f);
}

Test(tui_power, summary_pane_energy_lines_golden)
{
    struct trace_model *m = power_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_summary *s = tui_summary_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 26, true);
    render(&tui_summary_ops, s, c, &v, false);
    char *d = dump(c);
    struct trace_energy e;
    cr_assert(trace_energy_of_model(m, &e));
    char want[64], a[32], b[32];
    snprintf(want, sizeof(want), "energy %s, avg %s", trace_energy_fmt(e.total_j, "J", a, 32),
             trace_energy_fmt(e.avg_power_w, "W", b, 32));
    cr_assert(strstr(d, want), "%s in %s", want, d);
    cr_assert(strstr(d, "of the energy"), "%s", d);
    tui_test_golden("summary_energy", d);
    free(d);
    tui_canvas_free(c);
    tui_summary_free(s);
    trace_model_free(m);
}

Test(tui_power, tokens_pane_energy_per_token_golden)
{
    struct trace_model *m = power_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_tokens *t = tui_tokens_new(&v);
    struct tui_canvas *c = tui_canvas_new(90, 16, true);
    render(&tui_tokens_ops, t, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "energy"), "%s", d);
    /* the second decode token [700, 1000): the power samples' joules over its span */
    char want[32];
    trace_energy_fmt(trace_energy_between(m, 700, 1000), "J", want, sizeof(want));
    const char *row = line_with(d, "DECODE       1");
    cr_assert_not_null(row, "%s", d);
    cr_assert(strstr(row, want), "%s in %s", want, row);
    tui_test_golden("tokens_energy", d);
    free(d);
    tui_canvas_free(c);
    tui_tokens_ops.free(t);
    trace_model_free(m);
}
