/*
 * The critical path of a finished launch in a live run (C): computed once, then shown again
 * from what was kept while the launch stays as it was, equal to the path computed from
 * scratch; a launch that is still running, or that gained an op since, is computed again.
 */
#include "test_grow.h"
#include "test_tui_util.h"
#include "trace/analysis/regions.h"
#include "trace/verdict/critpath.h"
#include "tui/gantt/gantt.h"

#include <time.h>

TestSuite(tui_livepath, .init = tui_test_locale);

struct fixture {
    struct grow_model g;
    struct tui_view v;
    struct tui_gantt *gantt;
};

/* C on an op of launch cmdq; with wait, the work it started to its end. */
static void press_c(struct fixture *f, int32_t cmdq, bool wait)
{
    uint64_t n = trace_model_event_count(f->g.m);
    for (uint64_t i = 0; i < n; i++)
        if (trace_model_event(f->g.m, i)->cmdq_id == cmdq) {
            f->v.selected = i;
            break;
        }
    tui_gantt_ops.action(f->gantt, TUI_ACT_PATH, &f->v);
    while (wait && tui_gantt_ops.work(f->gantt, &f->v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* The path of launch cmdq from scratch equals the one shown. */
static void path_is_fresh(struct fixture *f, int32_t cmdq)
{
    const struct trace_model *m = f->g.m;
    uint64_t n = trace_model_event_count(m), *evs = calloc(n, sizeof(*evs));
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        if (trace_model_event(m, i)->cmdq_id == cmdq)
            evs[k++] = i;
    struct trace_regions *rs = trace_regions_new_split(m, TRACE_REGION_LAUNCH);
    uint64_t start = 0;
    for (size_t r = 0; r < trace_regions_count(rs); r++)
        if (trace_regions_get(rs, r)->cmdq_id == cmdq)
            start = trace_regions_get(rs, r)->start;
    trace_regions_free(rs);
    struct trace_critpath p;
    trace_critpath_compute(
        &(struct trace_critpath_input){.m = m, .events = evs, .n = k, .start = start}, &p);
    cr_assert_not_null(f->v.path);
    cr_assert_eq(f->v.path->n, p.n);
    for (size_t i = 0; i < p.n; i++)
        cr_assert(f->v.path->steps[i].ev == p.steps[i].ev &&
                      f->v.path->steps[i].wait == p.steps[i].wait,
                  "step %zu", i);
    trace_critpath_fini(&p);
    free(evs);
}

Test(tui_livepath, a_finished_launch_path_is_kept_and_said_so)
{
    struct fixture f;
    /* a path computed on the worker takes a while (every progress check waits 20 ms), so
     * that the first press finds it not ready */
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "20000", 1);
    grow_new(&f.g, 21);
    for (int i = 0; i < 200; i++)
        grow_step(&f.g);
    tui_view_init(&f.v, f.g.m, true);
    f.v.live = true;
    f.gantt = tui_gantt_new(&f.v);
    int32_t done = 2, running = f.g.cmdq; /* launch 2 ended long ago; the last one runs */
    press_c(&f, done, false);
    cr_assert_null(f.v.path, "the first time it is computed on a worker");
    while (tui_gantt_ops.work(f.gantt, &f.v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    path_is_fresh(&f, done);
    cr_assert_null(strstr(f.v.message, "(kept"), "computed: %s", f.v.message);
    tui_gantt_ops.action(f.gantt, TUI_ACT_PATH, &f.v); /* hidden */
    cr_assert_null(f.v.path);
    for (int i = 0; i < 30; i++) /* the run goes on, in other launches */
        grow_step(&f.g);
    press_c(&f, done, true);
    cr_assert(strstr(f.v.message, "(kept"), "the path was kept: %s", f.v.message);
    path_is_fresh(&f, done);
    tui_gantt_ops.action(f.gantt, TUI_ACT_PATH, &f.v);
    /* the launch still running: computed each time */
    press_c(&f, running, false);
    cr_assert_null(f.v.path);
    while (tui_gantt_ops.work(f.gantt, &f.v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    tui_gantt_ops.action(f.gantt, TUI_ACT_PATH, &f.v);
    /* an op added to the finished launch: computed again, and right */
    struct trace_event ev = {.start = f.g.now,
                             .end = f.g.now + 7,
                             .track = f.g.track[0],
                             .op = trace_model_intern(f.g.m, "gemm_f16", 8),
                             .cmdq_id = done};
    trace_model_add_event(f.g.m, &ev);
    trace_model_finish(f.g.m);
    press_c(&f, done, false);
    cr_assert_null(f.v.path, "computed again");
    while (tui_gantt_ops.work(f.gantt, &f.v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    path_is_fresh(&f, done);
    cr_assert_null(strstr(f.v.message, "(kept"), "computed again: %s", f.v.message);
    tui_gantt_free(f.gantt);
    trace_model_free(f.g.m);
}
