/*
 * Where the time goes on the Gantt, headless: the utilization rows of an HBM and a link,
 * the utilization strip (E) and the bandwidth heatmap (H) on the small trace of the golden
 * tests with a bandwidth ramp on its HBM, and the critical path (C) walked with ( and ).
 */
#include "test_tui_util.h"
#include "trace/verdict/critpath.h"
#include "tui/gantt/gantt.h"

TestSuite(tui_strips, .init = tui_test_locale);

/*
 * The golden model with resource samples: sip0.cube0.hbm reads a ramp over windows of 100
 * cycles (window k carries k tenths of its 256 GB/s, so 0% .. 90%) and writes the ramp
 * down; the link between the cube's router and the HBM carries half the reads at its
 * 128 GB/s. The config gives the peaks.
 */
static struct trace_model *strips_model(void)
{
    struct trace_model *m = tui_test_model();
    uint32_t hbm = trace_model_intern(m, "sip0.cube0.hbm", 14);
    const char *ln = "sip0.cube0.noc<->sip0.cube0.hbm";
    uint32_t link = trace_model_intern(m, ln, strlen(ln));
    for (uint64_t k = 0; k < 10; k++) {
        trace_model_add_bw_sample(
            m, &(struct trace_bw_sample){k * 100, 100, k * 2560, (9 - k) * 2560, hbm});
        trace_model_add_bw_sample(m, &(struct trace_bw_sample){k * 100, 100, k * 1280, 0, link});
    }
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.0);
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_int(mem, "dram_peak_bw_bytes_per_cycle", 64);
    struct sim_value *h = sim_value_map_set_take(mem, "hbm", sim_value_map());
    sim_value_map_set_int(h, "gbps", 256);
    struct sim_value *noc = sim_value_map_set_take(cfg, "noc", sim_value_map());
    struct sim_value *cube = sim_value_map_set_take(noc, "cube", sim_value_map());
    sim_value_map_set_int(cube, "gbps", 128);
    trace_model_set_config_take(m, cfg);
    trace_model_finish(m);
    return m;
}

struct fixture {
    struct trace_model *m;
    struct tui_view v;
    struct tui_gantt *g;
    struct tui_canvas *c;
};

static void setup(struct fixture *f, int w, int h, bool unicode)
{
    f->m = strips_model();
    tui_view_init(&f->v, f->m, unicode);
    f->g = tui_gantt_new(&f->v);
    f->c = tui_canvas_new(w, h, unicode);
}

static void draw(struct fixture *f)
{
    tui_gantt_ops.sync(f->g, &f->v);
    tui_gantt_ops.render(f->g, f->c, (struct tui_rect){0, 0, f->c->w, f->c->h}, &f->v, true);
}

/* An action, then the work it started (a path computed on a worker) to its end. */
static void act(struct fixture *f, enum tui_action a)
{
    tui_gantt_ops.action(f->g, a, &f->v);
    while (tui_gantt_ops.work(f->g, &f->v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    draw(f);
}

static void teardown(struct fixture *f)
{
    tui_canvas_free(f->c);
    tui_gantt_free(f->g);
    trace_model_free(f->m);
}

/* The line of the canvas that starts with label (after a space), or NULL. */
static const char *row(const char *dump, const char *label)
{
    static char buf[1024];
    for (const char *p = dump; *p;) {
        size_t n = strcspn(p, "\n");
        if (n > strlen(label) && strncmp(p + 1, label, strlen(label)) == 0) {
            snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
            return buf;
        }
        p += n + (p[n] == '\n');
    }
    return NULL;
}

Test(tui_strips, utilization_strip_and_heatmap_golden)
{
    struct fixture f;
    setup(&f, 100, 34, true);
    draw(&f);
    act(&f, TUI_ACT_UTILIZATION);
    act(&f, TUI_ACT_HEATMAP);
    char *d = tui_canvas_dump(f.c, false);
    /* the ramp: the first window empty, the last shaded darkest; writes the other way */
    const char *rd = row(d, "c0.hbm rd");
    cr_assert_not_null(rd, "%s", d);
    cr_assert(strstr(rd, "█"), "%s", rd);
    cr_assert(strstr(row(d, "c0.noc-hbm rd"), "░"), "%s", d);
    cr_assert_not_null(row(d, "util DMA x2"), "%s", d);
    cr_assert(strstr(d, "of peak: HBM 256 GB/s, link 128 GB/s"), "%s", d);
    tui_test_golden("gantt_strips", d);
    free(d);
    teardown(&f);
}

Test(tui_strips, ascii_and_narrow_golden)
{
    struct fixture f;
    setup(&f, 80, 24, false);
    draw(&f);
    act(&f, TUI_ACT_HEATMAP);
    act(&f, TUI_ACT_UTILIZATION);
    char *d = tui_canvas_dump(f.c, false);
    cr_assert_not_null(row(d, "c0.hbm wr"), "%s", d);
    tui_test_golden("gantt_strips_ascii", d);
    free(d);
    /* H again hides the heatmap, E the strip */
    act(&f, TUI_ACT_HEATMAP);
    act(&f, TUI_ACT_UTILIZATION);
    d = tui_canvas_dump(f.c, false);
    cr_assert_null(row(d, "c0.hbm wr"));
    cr_assert_null(row(d, "util DMA x2"));
    free(d);
    teardown(&f);
}

Test(tui_strips, resource_rows_sit_in_their_groups)
{
    struct fixture f;
    setup(&f, 100, 34, true);
    draw(&f);
    char *d = tui_canvas_dump(f.c, false);
    /* the HBM's row in its cube, beside the PEs; the links folded at the end */
    cr_assert_not_null(row(d, " hbm"), "%s", d);
    cr_assert(strstr(d, "▸ links"), "%s", d);
    free(d);
    teardown(&f);
}

Test(tui_strips, the_critical_path_is_walked_op_by_op)
{
    struct fixture f;
    setup(&f, 100, 34, true);
    draw(&f);
    /* the golden model's ops carry no cmdq_id: the path is the run's */
    act(&f, TUI_ACT_PATH);
    cr_assert_not_null(f.v.path);
    cr_assert(strstr(f.v.message, "critical path of the run"), "%s", f.v.message);
    size_t n = f.v.path->n;
    cr_assert_gt(n, 1);
    cr_assert_eq(f.v.path_step, 0);
    cr_assert_eq(f.v.selected, f.v.path->steps[0].ev);
    act(&f, TUI_ACT_PATH_NEXT);
    cr_assert_eq(f.v.path_step, 1);
    cr_assert_eq(f.v.selected, f.v.path->steps[1].ev);
    cr_assert_eq(f.v.cursor, trace_model_event(f.m, f.v.path->steps[1].ev)->start);
    cr_assert(strstr(f.v.message, "path 2/"), "%s", f.v.message);
    act(&f, TUI_ACT_PATH_PREV);
    cr_assert_eq(f.v.path_step, 0);
    act(&f, TUI_ACT_PATH_PREV);
    cr_assert(strstr(f.v.message, "the first op"), "%s", f.v.message);
    act(&f, TUI_ACT_PATH);
    cr_assert_null(f.v.path, "P again hides it");
    teardown(&f);
}
