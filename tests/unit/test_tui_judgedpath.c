/*
 * The critical path the Gantt shows of a launch of a saved trace (C, or Enter on the launch
 * in the bottleneck pane) once its verdict is judged: the verdict's path of that launch,
 * taken rather than computed again, and the same as computed; computed before the verdict,
 * and live. The bottleneck pane hands its verdict of a saved trace to the view.
 */
#include "test_chain.h"
#include "test_tui_pane.h"
#include "trace/verdict/verdict.h"
#include "tui/gantt/gantt.h"
#include "tui/gantt/gantt_int.h"
#include "tui/panes/bottleneck.h"
#include "tui/term/keymap.h"

#include <time.h>

TestSuite(tui_judgedpath, .init = tui_test_locale);

enum { LAUNCHES = 3, OPS = 41 };

/* The Gantt's work to its end. */
static void settle(struct tui_gantt *g, struct tui_view *v)
{
    while (tui_gantt_ops.work(g, v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* C with op `at` selected (TUI_NO_EVENT: nothing, the cursor's launch), to the path shown. */
static void press_c(struct tui_gantt *g, struct tui_view *v, uint64_t at)
{
    v->selected = at;
    v->hover = TUI_NO_EVENT;
    tui_gantt_ops.action(g, TUI_ACT_PATH, v);
    settle(g, v);
    cr_assert_not_null(v->path, "%s", v->message);
}

static void hide(struct tui_gantt *g, struct tui_view *v)
{
    tui_gantt_ops.action(g, TUI_ACT_PATH, v);
    cr_assert_null(v->path);
}

static struct trace_verdict_item *launch_of(struct trace_verdict *vd, int32_t cmdq)
{
    for (size_t i = 0; i < vd->nlaunches; i++)
        if (vd->launches[i].region->cmdq_id == cmdq)
            return &vd->launches[i];
    cr_assert_fail("no launch %d in the verdict", cmdq);
    return NULL;
}

static void same_path(const struct trace_critpath *a, const struct trace_critpath *b)
{
    cr_assert_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const struct trace_path_step *x = &a->steps[i], *y = &b->steps[i];
        cr_assert(x->ev == y->ev && x->pred == y->pred && x->wait == y->wait && x->why == y->why &&
                      x->range.lo == y->range.lo && x->range.hi == y->range.hi,
                  "step %zu", i);
    }
}

Test(tui_judgedpath, a_launch_path_is_the_verdicts_once_judged)
{
    struct trace_model *m = chain_model(LAUNCHES, OPS, 0);
    struct trace_verdict *vd = trace_verdict_new(m, NULL);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_gantt *g = tui_gantt_new(&v);
    /* before the verdict: computed, the same path as the verdict's */
    uint64_t second = OPS; /* launch 2's first op */
    press_c(g, &v, second);
    struct trace_verdict_item *it = launch_of(vd, 2);
    same_path(v.path, &it->path);
    cr_assert_eq(it->path.n, OPS, "the chain's every op: RAW by RAW");
    cr_assert(strstr(v.message, "path of cmdq 2: 41 ops"), "%s", v.message);
    uint64_t wait0 = v.path->steps[0].wait;
    hide(g, &v);
    /* judged: the verdict's (its first wait marked, to tell it from one computed) */
    v.verdict = vd;
    it->path.steps[0].wait += 777;
    press_c(g, &v, second);
    cr_assert_eq(v.path->steps[0].wait, wait0 + 777, "taken from the verdict");
    same_path(v.path, &it->path);
    cr_assert(strstr(v.message, "path of cmdq 2: 41 ops"), "%s", v.message);
    hide(g, &v);
    /* nothing selected: the launch at the cursor, the third */
    struct trace_verdict_item *third = launch_of(vd, 3);
    third->path.steps[0].wait += 555;
    tui_view_set_cursor(&v, third->region->start + 5);
    press_c(g, &v, TUI_NO_EVENT);
    cr_assert_eq(v.path->steps[0].ev, third->path.steps[0].ev);
    cr_assert_eq(v.path->steps[0].wait, third->path.steps[0].wait, "the verdict's");
    hide(g, &v);
    /* live, a verdict is not the model's last word: computed */
    v.live = true;
    press_c(g, &v, second);
    cr_assert_eq(v.path->steps[0].wait, wait0, "computed");
    hide(g, &v);
    tui_gantt_free(g);
    trace_verdict_free(vd);
    trace_model_free(m);
}

Test(tui_judgedpath, the_bottleneck_pane_hands_a_saved_traces_verdict_to_the_view)
{
    struct trace_model *m = chain_model(LAUNCHES, OPS, 0);
    for (int live = 0; live < 2; live++) {
        struct tui_view v;
        tui_view_init(&v, m, true);
        v.live = live;
        struct tui_bottleneck *b = tui_bottleneck_new(&v);
        struct tui_canvas *c = tui_canvas_new(120, 30, true);
        render(&tui_bottleneck_ops, b, c, &v, true); /* the pane opened: judged */
        char *d = dump(c);
        cr_assert(strstr(d, "Bottleneck  run: "), "judged (live %d):\n%s", live, d);
        free(d);
        if (live) {
            cr_assert_null(v.verdict, "live: the Gantt computes its paths");
        } else {
            cr_assert_not_null(v.verdict);
            cr_assert_eq(v.verdict->nlaunches, LAUNCHES);
        }
        tui_bottleneck_free(b);
        cr_assert_null(v.verdict, "freed with the pane");
        tui_canvas_free(c);
    }
    trace_model_free(m);
}

/* C at the first frame (the verdict judged ahead, not there yet) on an op of launch 2 of a
 * model of `ops` ops a launch: its path, once on the Gantt, is the verdict's (borrowed when
 * C waited for it, else computed as the verdict computes it); whether C waited for the
 * verdict, which it asked for, is returned. */
static bool c_at_the_first_frame(size_t ops)
{
    struct trace_model *m = chain_model(LAUNCHES, ops, 0);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_bottleneck *b = tui_bottleneck_new(&v);
    struct tui_gantt *g = tui_gantt_new(&v);
    cr_assert(v.verdict_pending, "a saved trace's verdict is judged ahead");
    v.selected = ops; /* launch 2's first op */
    tui_gantt_ops.action(g, TUI_ACT_PATH, &v);
    cr_assert(v.path || strstr(v.message, "computing the critical path"), "%s", v.message);
    /* the frames after: the Gantt's worker, the verdict judged ahead (it gives way to the
     * worker's run, which a key asked for); C waits for the verdict once the worker finds
     * the launch too large, and asks for it */
    bool waited = false;
    for (int i = 0; i < 10000 && !v.path; i++) {
        tui_gantt_ops.work(g, &v, 1000000000);
        if (v.verdict_wanted) {
            waited = true;
            cr_assert(strstr(v.message, "computing the critical path with the verdict"), "%s",
                      v.message);
        }
        if (!v.path)
            tui_bottleneck_ahead(b, &v);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    cr_assert_not_null(v.path, "%s", v.message);
    cr_assert(strstr(v.message, "path of cmdq 2: "), "%s", v.message);
    for (int i = 0; i < 10000 && !v.verdict; i++) { /* the verdict, for the same path */
        tui_bottleneck_ahead(b, &v);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    cr_assert_not_null(v.verdict);
    cr_assert(!v.verdict_pending && !v.verdict_wanted);
    const struct trace_verdict_item *it = NULL;
    for (size_t i = 0; i < v.verdict->nlaunches; i++)
        if (v.verdict->launches[i].region->cmdq_id == 2)
            it = &v.verdict->launches[i];
    cr_assert_not_null(it);
    cr_assert_neq(v.path, &it->path, "the Gantt's own: the verdict's stays the pane's");
    cr_assert_eq(v.path->steps == it->path.steps, waited, "its steps borrowed when C waited");
    cr_assert_not_null(it->path.spans, "a saved trace's verdict keeps its steps' spans");
    same_path(v.path, &it->path);
    /* drawn from the spans kept: every op of the path on its track, from its start */
    for (size_t i = 0; i < v.path->n; i++) {
        const struct trace_event *e = trace_model_event(m, v.path->steps[i].ev);
        cr_assert(tui_gantt_on_path(g, e->track, e->start, e->start + 1), "step %zu drawn", i);
    }
    tui_gantt_free(g);
    tui_bottleneck_free(b);
    trace_model_free(m);
    return waited;
}

Test(tui_judgedpath, c_at_the_first_frame_computes_a_small_launchs_path_at_once)
{
    cr_assert(!c_at_the_first_frame(OPS), "41 ops: computed at once");
}

Test(tui_judgedpath, c_at_the_first_frame_waits_for_the_verdict_ahead_for_a_large_launch)
{
    cr_assert(c_at_the_first_frame(40000), "40,000 ops: the verdict's path, not computed twice");
}

Test(tui_judgedpath, a_verdict_whose_path_the_gantt_shows_outlives_its_replacement)
{
    struct trace_model *m = chain_model(LAUNCHES, OPS, 0);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_bottleneck *b = tui_bottleneck_new(&v);
    struct tui_canvas *c = tui_canvas_new(120, 30, true);
    render(&tui_bottleneck_ops, b, c, &v, true);
    const struct trace_verdict *old = v.verdict;
    cr_assert_not_null(old, "judged");
    struct trace_critpath want = {0};
    want.n = launch_of((struct trace_verdict *)old, 2)->path.n;
    want.steps = malloc(want.n * sizeof(*want.steps));
    memcpy(want.steps, launch_of((struct trace_verdict *)old, 2)->path.steps,
           want.n * sizeof(*want.steps));
    /* C: the verdict's path, its steps borrowed (not copied: a million steps are 80 MB), the
     * verdict lent while the Gantt's worker spans it and while it shows */
    struct tui_gantt *g = tui_gantt_new(&v);
    v.selected = OPS;
    v.hover = TUI_NO_EVENT;
    tui_gantt_ops.action(g, TUI_ACT_PATH, &v);
    cr_assert_eq(v.verdict_lent, old, "lent while the worker spans it");
    /* the model changes meanwhile: the pane judges it again and takes the new verdict */
    trace_model_add_marker(m, &(struct trace_marker){.cycle = 1,
                                                     .name = trace_model_intern(m, "mark", 4),
                                                     .track = UINT32_MAX});
    for (int i = 0; i < 100 && v.verdict == old; i++)
        render(&tui_bottleneck_ops, b, c, &v, true);
    cr_assert(v.verdict != old, "judged again");
    /* the lent one is kept whole while its path shows: freed, ASan says so */
    same_path(&launch_of((struct trace_verdict *)old, 2)->path, &want);
    settle(g, &v);
    cr_assert_not_null(v.path, "%s", v.message);
    cr_assert_eq(v.path->steps, launch_of((struct trace_verdict *)old, 2)->path.steps,
                 "the verdict's own steps");
    render(&tui_bottleneck_ops, b, c, &v, true);
    cr_assert_eq(v.verdict_lent, old, "lent while its path shows");
    same_path(v.path, &want);
    /* hidden: given back, then freed by the pane; C again borrows the new verdict's */
    hide(g, &v);
    cr_assert_null(v.verdict_lent, "given back once hidden");
    render(&tui_bottleneck_ops, b, c, &v, true); /* (the old one freed now) */
    press_c(g, &v, OPS);
    cr_assert_eq(v.verdict_lent, v.verdict, "the new verdict lent");
    same_path(v.path, &want);
    tui_gantt_free(g);
    tui_bottleneck_free(b);
    tui_canvas_free(c);
    free(want.steps);
    trace_model_free(m);
}
