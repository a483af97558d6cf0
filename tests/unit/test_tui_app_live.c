/*
 * The app with a source that runs, as a live simulation will: the main loop's work drives
 * it, the header shows its mode and time, ops in flight are drawn in their own style, the
 * view follows the growing trace, and the simulation keys reach the source. The source
 * here is a stand-in that appends one op per tick.
 */
#include "test_tui_util.h"
#include "tui/app/app.h"

TestSuite(tui_live, .init = tui_test_locale);

struct fake {
    struct tui_source base;
    struct trace_model *m;
    uint32_t track;
    uint64_t now, open, ticks, end;
    bool paused;
};

static const struct trace_model *fake_model(struct tui_source *s)
{
    return ((struct fake *)s)->m;
}

static void fake_status(struct tui_source *s, struct tui_source_status *out)
{
    struct fake *f = (struct fake *)s;
    *out = (struct tui_source_status){
        .mode = f->now >= f->end ? TUI_MODE_FINISHED
                : f->paused      ? TUI_MODE_PAUSED
                                 : TUI_MODE_LIVE,
        .name = "demo workload",
        .now = f->now,
        .events_done = f->ticks,
    };
}

static bool fake_running(struct tui_source *s)
{
    struct fake *f = (struct fake *)s;
    return !f->paused && f->now < f->end;
}

/* One step: the open op ends at now, a new one starts, in flight, and now moves on. */
static void step(struct fake *f)
{
    trace_model_end_event(f->m, f->open, f->now);
    struct trace_event ev = {.start = f->now + 10,
                             .end = f->now + 10,
                             .track = f->track,
                             .cmdq_id = TRACE_NO_CMDQ,
                             .op_kind = TRACE_KIND_GEMM,
                             .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(f->m, "gemm_f16", 8);
    f->open = trace_model_add_event(f->m, &ev);
    f->now += 100;
    f->ticks++;
    trace_model_set_now(f->m, f->now);
    trace_model_finish(f->m);
}

static int fake_tick(struct tui_source *s, uint64_t budget_ns, struct diag *d)
{
    (void)budget_ns, (void)d;
    step((struct fake *)s);
    return 0;
}

static int fake_control(struct tui_source *s, enum tui_control c, struct diag *d)
{
    struct fake *f = (struct fake *)s;
    (void)d;
    if (c == TUI_CTL_PAUSE)
        f->paused = !f->paused;
    else if (c == TUI_CTL_STEP)
        f->paused = true, step(f);
    else if (c == TUI_CTL_CONTINUE)
        f->paused = false;
    return 0;
}

static void fake_free(struct tui_source *s)
{
    struct fake *f = (struct fake *)s;
    trace_model_free(f->m);
    free(f);
}

static const struct tui_source_ops fake_ops = {
    .kind = "live",
    .model = fake_model,
    .status = fake_status,
    .running = fake_running,
    .tick = fake_tick,
    .control = fake_control,
    .free = fake_free,
};

static struct fake *fake_new(void)
{
    struct fake *f = sim_xcalloc(1, sizeof(*f));
    f->base.ops = &fake_ops;
    f->m = trace_model_new();
    f->track = trace_model_track(f->m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    f->end = 100000;
    struct trace_event ev = {.start = 0,
                             .end = 0,
                             .track = f->track,
                             .cmdq_id = TRACE_NO_CMDQ,
                             .op_kind = TRACE_KIND_GEMM,
                             .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(f->m, "gemm_f16", 8);
    f->open = trace_model_add_event(f->m, &ev);
    trace_model_finish(f->m);
    return f;
}

static char *screen(struct tui_app *a)
{
    return tui_canvas_dump(tui_app_render(a), false);
}

Test(tui_live, the_loop_runs_the_source_and_shows_it_live)
{
    struct fake *f = fake_new();
    struct tui_app *a = tui_app_new(&f->base, 100, 30, true, NULL, NULL, NULL, NULL);
    free(screen(a));
    cr_assert(tui_app_busy(a), "a running source keeps the loop busy");
    uint64_t gen = trace_model_generation(f->m);
    tui_app_work(a, 1000000);
    cr_assert_neq(trace_model_generation(f->m), gen, "work ran a tick");
    cr_assert(tui_app_needs_render(a));
    for (int i = 0; i < 9; i++)
        tui_app_work(a, 1000000);
    char *d = screen(a);
    cr_assert(strstr(d, " LIVE "), "%s", d);
    cr_assert(strstr(d, "now 1000  events: 10"), "%s", d);
    cr_assert(strstr(d, "demo workload"), "%s", d);
    /* the footer offers the simulation keys */
    cr_assert(strstr(d, "space pause"), "%s", d);
    free(d);
    /* the op in flight, at the right end of the row, in its own style; ended ops in the
     * style of their kind */
    const struct tui_canvas *c = tui_app_render(a);
    int y = -1; /* the row " sip0.cube0.pe0.pe_gemm" */
    for (int i = 0; i < c->h && y < 0; i++)
        if (tui_canvas_cell(c, 1, i)->cp == 's' && tui_canvas_cell(c, 2, i)->cp == 'i')
            y = i;
    cr_assert_geq(y, 0);
    int last = c->w - 1, first = 0;
    while (last > 0 && tui_canvas_cell(c, last, y)->cp == ' ')
        last--;
    while (first < c->w && tui_canvas_cell(c, first, y)->cp != 0x2502)
        first++;
    cr_assert_eq(tui_canvas_cell(c, last, y)->style, TUI_STYLE_OP_INFLIGHT);
    cr_assert_eq(tui_canvas_cell(c, first + 20, y)->style, TUI_STYLE_OP_GEMM);
    tui_app_free(a);
    tui_source_free(&f->base);
}

Test(tui_live, the_view_follows_the_growing_trace_while_fitted)
{
    struct fake *f = fake_new();
    struct tui_app *a = tui_app_new(&f->base, 100, 30, true, NULL, NULL, NULL, NULL);
    for (int i = 0; i < 10; i++)
        tui_app_work(a, 1000000);
    char *d1 = screen(a);
    for (int i = 0; i < 90; i++)
        tui_app_work(a, 1000000);
    char *d2 = screen(a);
    cr_assert(strstr(d1, "(fit)") && strstr(d2, "(fit)"));
    cr_assert(strstr(d2, "│8k") || strstr(d2, "│8000"), "the ruler reaches the new end: %s", d2);
    cr_assert_null(strstr(d1, "│8k"));
    free(d1), free(d2);
    tui_app_free(a);
    tui_source_free(&f->base);
}

Test(tui_live, pause_and_step_reach_the_source)
{
    struct fake *f = fake_new();
    struct tui_app *a = tui_app_new(&f->base, 100, 30, true, NULL, NULL, NULL, NULL);
    tui_app_work(a, 1000000);
    tui_app_key(a, ' ');
    cr_assert(f->paused);
    char *d = screen(a);
    cr_assert(strstr(d, " PAUSED "), "%s", d);
    free(d);
    while (tui_app_busy(a))
        tui_app_work(a, 1000000);
    uint64_t now = f->now;
    tui_app_work(a, 1000000);
    cr_assert_eq(f->now, now, "paused: the loop no longer ticks");
    tui_app_key(a, 's');
    cr_assert_eq(f->now, now + 100, "s steps once");
    tui_app_key(a, 'c');
    cr_assert(!f->paused);
    cr_assert(tui_app_busy(a));
    /* the help lists the simulation keys for a live source */
    tui_app_key(a, '?');
    for (int i = 0; i < 10; i++) /* before the help is first drawn, as keys typed ahead */
        tui_app_key(a, TUI_KEY_PAGE_DOWN);
    /* at the end of the help, or a page or two above it */
    bool listed = false;
    for (int i = 0; i < 4 && !listed; i++) {
        if (i)
            tui_app_key(a, TUI_KEY_PAGE_UP);
        d = screen(a);
        listed = strstr(d, "step one event") != NULL;
        if (!listed && i == 3)
            cr_assert_fail("%s", d);
        free(d);
    }
    tui_app_free(a);
    tui_source_free(&f->base);
}
