/*
 * Time against energy over a sweep (tui/panes/sweepscatter.h): the Pareto front of a sweep
 * over a GEMM array size (the widest array fastest, a middle one the most frugal), drawn
 * headlessly with the front marked; a table without energy says so.
 */
#include "tui/panes/sweepscatter.h"
#include "tui/panes/sweepview.h"
#include "tui/sweep/sweep.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Four points of pe.gemm.macs_per_cycle.f16: time falls as the array grows, energy falls
 * to 1024 and rises again at 4096; a fifth failed. */
static void make_table(struct tui_sweep_table *t, bool energy)
{
    static const int size[] = {64, 256, 1024, 4096, 8192};
    static const double ns[] = {83790, 34638, 22731, 20427, NAN};
    static const double joules[] = {255.3e-6, 125.9e-6, 99.9e-6, 117.4e-6, NAN};
    memset(t, 0, sizeof(*t));
    t->dir = strdup("sw");
    t->sweep_file = strdup("sweep.yaml");
    t->naxes = 1;
    t->axes = calloc(1, sizeof(char *));
    t->axes[0] = strdup("pe.gemm.macs_per_cycle.f16");
    t->nrows = 5;
    t->rows = calloc(5, sizeof(*t->rows));
    for (size_t i = 0; i < 5; i++) {
        struct tui_sweep_row *r = &t->rows[i];
        snprintf(r->id, sizeof(r->id), "%04zu", i);
        r->params = sim_value_map();
        sim_value_map_set_int(r->params, t->axes[0], size[i]);
        r->status = i < 4 ? TUI_SWEEP_OK : TUI_SWEEP_FAILED;
        r->m = (struct tui_sweep_metrics){
            ns[i], ns[i], 0, 0, 0, 0, 0, 0, 1, NAN, NAN, NAN, NAN, energy ? joules[i] : NAN,
            NAN,   NAN};
    }
    t->n_ok = 4;
    t->n_failed = 1;
}

Test(tui_sweepscatter, the_pareto_front_is_the_fastest_and_the_most_frugal)
{
    struct tui_sweep_table t;
    make_table(&t, true);
    bool on[5];
    cr_assert_eq(tui_sweep_pareto(&t, on), 2);
    cr_assert(!on[0] && !on[1] && on[2] && on[3] && !on[4]);
    /* a point as fast as another but dearer is beaten too */
    t.rows[1].m.time_ns = t.rows[3].m.time_ns;
    cr_assert_eq(tui_sweep_pareto(&t, on), 2);
    cr_assert(!on[1]);
    tui_sweep_table_fini(&t);
}

static char *render_e(struct tui_sweep_table *t, bool unicode)
{
    struct tui_sweepview *v = tui_sweepview_new(t);
    tui_sweepview_key(v, 'e');
    struct tui_canvas *c = tui_canvas_new(100, 30, unicode);
    tui_sweepview_render(v, c);
    char *d = tui_canvas_dump(c, false);
    tui_canvas_free(c);
    tui_sweepview_free(v);
    return d;
}

Test(tui_sweepscatter, e_plots_time_against_energy_golden)
{
    cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"));
    struct tui_sweep_table t;
    make_table(&t, true);
    char *d = render_e(&t, true);
    cr_assert(strstr(d, "energy_j vs time_ns: Pareto front 0002 0003"), "%s", d);
    cr_assert(strstr(d, "◆"), "%s", d);
    cr_assert(strstr(d, "●"), "%s", d);
    FILE *f =
        fopen("tests/data/tui/sweep_scatter.txt", getenv("NPUSCOPE_UPDATE_GOLDEN") ? "w" : "r");
    cr_assert_not_null(f);
    if (getenv("NPUSCOPE_UPDATE_GOLDEN")) {
        fputs(d, f);
    } else {
        char *want = calloc(1, 1 << 16);
        size_t n = fread(want, 1, (1 << 16) - 1, f);
        want[n] = '\0';
        cr_expect_str_eq(d, want, "--- got\n%s--- want\n%s", d, want);
        free(want);
    }
    fclose(f);
    free(d);
    d = render_e(&t, false);
    cr_assert(strstr(d, "*") && strstr(d, "o"), "ASCII: %s", d);
    free(d);
    tui_sweep_table_fini(&t);
}

Test(tui_sweepscatter, without_energy_it_says_so)
{
    struct tui_sweep_table t;
    make_table(&t, false);
    char *d = render_e(&t, false);
    cr_assert(strstr(d, "Pareto front (none)"), "%s", d);
    cr_assert(strstr(d, "no point has both a time and an energy"), "%s", d);
    free(d);
    tui_sweep_table_fini(&t);
}
