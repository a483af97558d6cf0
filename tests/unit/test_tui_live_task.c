/*
 * The analyses of a live run on the worker thread (tui/panes/task.h): the run is held while
 * one reads the model, so that its result, at every step of a growing model, equals the same
 * analysis computed from scratch on a model built anew up to that step; a key that moves the
 * run cancels it at once; a live analysis runs again only after ten times its last run; and
 * the app's main loop does not tick the run while one holds it; a run ahead of a request
 * runs at the lowest priority until its pane opens. The growing model is a
 * stand-in for a live simulation: GEMM and DMA ops of several launches, one in flight.
 */
#include "test_tui_util.h"
#include "trace/verdict/anomaly.h"
#include "trace/verdict/verdict.h"
#include "tui/app/app.h"
#include "tui/source/source.h"
#include "tui/panes/task.h"
#include "tui/term/view.h"

#include <linux/capability.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

TestSuite(tui_live_task, .init = tui_test_locale);

struct grow {
    struct trace_model *m;
    uint32_t te, dma;
    uint64_t now, open, steps;
};

/* One step of the run: the op in flight ends, the next starts (a DMA every third step, a
 * launch every 40 steps, a layer every 10), now moves on. */
static void grow_step(struct grow *g)
{
    trace_model_end_event(g->m, g->open, g->now);
    g->steps++;
    char layer[32];
    snprintf(layer, sizeof(layer), "layer_%llu", (unsigned long long)(g->steps / 10 % 4));
    bool dma = g->steps % 3 == 0;
    const char *op = dma ? "dma_copy" : "gemm_f16";
    struct trace_event ev = {.start = g->now + 10,
                             .end = g->now + 10,
                             .track = dma ? g->dma : g->te,
                             .cmdq_id = (int32_t)(g->steps / 40),
                             .op_kind = dma ? TRACE_KIND_MEMORY : TRACE_KIND_GEMM,
                             .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(g->m, op, strlen(op));
    ev.layer = trace_model_intern(g->m, layer, strlen(layer));
    g->open = trace_model_add_event(g->m, &ev);
    g->now += 50 + g->steps % 7 * 20 + (g->steps % 97 == 0 ? 4000 : 0); /* a slow op now and then */
    trace_model_set_now(g->m, g->now);
    trace_model_finish(g->m);
}

static void grow_init(struct grow *g, uint64_t steps)
{
    memset(g, 0, sizeof(*g));
    g->m = trace_model_new();
    g->te = trace_model_track(g->m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    g->dma = trace_model_track(g->m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    struct trace_event ev = {
        .track = g->te, .cmdq_id = 0, .op_kind = TRACE_KIND_GEMM, .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(g->m, "gemm_f16", 8);
    g->open = trace_model_add_event(g->m, &ev);
    trace_model_finish(g->m);
    while (g->steps < steps)
        grow_step(g);
}

/* What the worker computes: the verdict and the anomalies of the model. */
struct result {
    const struct trace_model *m;
    struct trace_verdict *v;
    struct trace_anomalies a;
    int discarded;
};

static void analyse(void *arg, struct trace_progress *p)
{
    struct result *r = arg;
    struct trace_verdict_opts o = {.progress = p};
    r->v = trace_verdict_new(r->m, &o);
    struct trace_anomaly_opts ao;
    trace_anomaly_opts_default(&ao);
    ao.progress = p;
    trace_anomalies_find(r->m, &ao, &r->a);
}

static void discard(void *arg)
{
    struct result *r = arg;
    trace_verdict_free(r->v);
    r->v = NULL;
    trace_anomalies_fini(&r->a);
    memset(&r->a, 0, sizeof(r->a));
    r->discarded++;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

Test(tui_live_task, the_result_over_the_held_run_equals_one_from_scratch_at_each_step)
{
    struct grow g;
    grow_init(&g, 0);
    struct result r = {.m = g.m};
    struct tui_task *t = tui_task_new();
    tui_task_set_live(t, discard);
    const uint64_t steps[] = {1, 7, 40, 41, 120, 333, 900, 2000};
    for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        while (g.steps < steps[k]) /* the run goes on while no analysis holds it */
            grow_step(&g);
        uint64_t gen = trace_model_generation(g.m);
        tui_task_start(t, analyse, &r, true);
        /* the main loop: the run waits while the worker reads the model */
        while (!tui_task_take_done(t)) {
            if (!tui_task_holding())
                cr_assert(!tui_task_running(t), "running, yet not holding the run");
            sleep_ms(1);
        }
        cr_assert(!tui_task_holding());
        cr_assert_eq(trace_model_generation(g.m), gen);
        /* from scratch: a model built anew up to the same step, analysed here */
        struct grow fresh;
        grow_init(&fresh, g.steps);
        struct trace_verdict *v = trace_verdict_new(fresh.m, NULL);
        struct trace_anomalies a;
        struct trace_anomaly_opts ao;
        trace_anomaly_opts_default(&ao);
        trace_anomalies_find(fresh.m, &ao, &a);
        struct sim_value *want = trace_verdict_to_value(v), *got = trace_verdict_to_value(r.v);
        cr_assert(sim_value_equal(got, want), "step %llu: the verdicts differ",
                  (unsigned long long)g.steps);
        cr_assert_eq(r.a.n, a.n, "step %llu: %zu anomalies, from scratch %zu",
                     (unsigned long long)g.steps, r.a.n, a.n);
        for (size_t i = 0; i < a.n; i++)
            cr_assert(r.a.v[i].kind == a.v[i].kind && r.a.v[i].start == a.v[i].start &&
                      r.a.v[i].end == a.v[i].end);
        sim_value_free(want);
        sim_value_free(got);
        trace_verdict_free(v);
        trace_anomalies_fini(&a);
        trace_model_free(fresh.m);
        trace_verdict_free(r.v);
        r.v = NULL;
        trace_anomalies_fini(&r.a);
        memset(&r.a, 0, sizeof(r.a));
    }
    cr_assert_eq(r.discarded, 0);
    cr_assert_gt(g.steps, 1000);
    tui_task_free(t);
    trace_model_free(g.m);
}

Test(tui_live_task, release_cancels_a_live_analysis_at_once_and_discards_its_result)
{
    struct grow g;
    grow_init(&g, 500);
    struct result r = {.m = g.m};
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "2000000", 1); /* 2 s a progress check */
    struct tui_task *t = tui_task_new();
    unsetenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US");
    struct tui_task *loaded = tui_task_new(); /* a loaded trace's: not live */
    tui_task_set_live(t, discard);
    tui_task_start(t, analyse, &r, true);
    cr_assert(tui_task_holding(), "a live analysis holds the run");
    sleep_ms(20);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tui_task_release();
    double took = ms_since(&t0);
    cr_assert_lt(took, 100, "released in %.0f ms", took);
    cr_assert(!tui_task_holding());
    cr_assert(!tui_task_running(t));
    cr_assert_eq(r.discarded, 1, "its incomplete result was discarded");
    cr_assert_null(r.v);
    cr_assert(!tui_task_take_done(t), "a cancelled run is not done");
    /* the run moves; the next analysis is whole again */
    grow_step(&g);
    tui_task_free(t);
    t = tui_task_new();
    tui_task_set_live(t, discard);
    tui_task_start(t, analyse, &r, true);
    while (!tui_task_take_done(t))
        sleep_ms(1);
    cr_assert_not_null(r.v);
    discard(&r);
    cr_assert(tui_task_due(loaded), "a task that is not live is always due");
    tui_task_free(loaded);
    tui_task_free(t);
    trace_model_free(g.m);
}

static void slow(void *arg, struct trace_progress *p)
{
    (void)arg, (void)p;
    sleep_ms(30);
}

Test(tui_live_task, a_live_analysis_runs_again_after_ten_times_its_last_run)
{
    struct tui_task *t = tui_task_new();
    tui_task_set_live(t, NULL);
    cr_assert(tui_task_due(t), "never ran: due");
    tui_task_start(t, slow, NULL, true);
    while (!tui_task_take_done(t))
        sleep_ms(1);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert(!tui_task_due(t), "not due right after a run of 30 ms");
    while (!tui_task_due(t))
        sleep_ms(5);
    double waited = ms_since(&t0);
    cr_assert_geq(waited, 250, "due again after %.0f ms", waited); /* 10 x 30 ms, less a tick */
    cr_assert_lt(waited, 1000, "due again after %.0f ms", waited);
    tui_task_free(t);
}

/* ---- the app's main loop ------------------------------------------------------------------ */

struct fake {
    struct tui_source base;
    struct grow g;
    bool paused;
};

/* What the main loop polls for while a run ahead works (nothing wakes it when the run
 * ends): pending from the start until the result is taken, also after the run ended. */
Test(tui_live_task, a_run_is_pending_from_its_start_until_its_result_is_taken)
{
    struct tui_task *t = tui_task_new();
    cr_assert(!tui_task_pending(t), "nothing ran");
    tui_task_start(t, slow, NULL, true);
    cr_assert(tui_task_pending(t), "under way");
    while (tui_task_running(t))
        sleep_ms(1);
    cr_assert(tui_task_pending(t), "ended, its result not taken");
    cr_assert(tui_task_take_done(t));
    cr_assert(!tui_task_pending(t), "taken");
    tui_task_start(t, slow, NULL, false); /* here and now */
    cr_assert(tui_task_pending(t), "ended here, its result not taken");
    cr_assert(tui_task_take_done(t));
    cr_assert(!tui_task_pending(t), "taken");
    tui_task_free(t);
}

static const struct trace_model *fake_model(struct tui_source *s)
{
    return ((struct fake *)s)->g.m;
}

static void fake_status(struct tui_source *s, struct tui_source_status *out)
{
    struct fake *f = (struct fake *)s;
    *out = (struct tui_source_status){.mode = f->paused ? TUI_MODE_PAUSED : TUI_MODE_LIVE,
                                      .name = "demo workload",
                                      .now = f->g.now,
                                      .events_done = f->g.steps};
}

static bool fake_running(struct tui_source *s)
{
    return !((struct fake *)s)->paused;
}

static int fake_tick(struct tui_source *s, uint64_t budget_ns, struct diag *d)
{
    (void)budget_ns, (void)d;
    grow_step(&((struct fake *)s)->g);
    return 0;
}

static int fake_control(struct tui_source *s, enum tui_control c, struct diag *d)
{
    struct fake *f = (struct fake *)s;
    (void)d;
    cr_assert(!tui_task_holding(), "the run moves while an analysis reads the model");
    if (c == TUI_CTL_PAUSE)
        f->paused = !f->paused;
    else if (c == TUI_CTL_STEP)
        f->paused = true, grow_step(&f->g);
    return 0;
}

static void fake_free(struct tui_source *s)
{
    struct fake *f = (struct fake *)s;
    trace_model_free(f->g.m);
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

Test(tui_live_task, the_loop_holds_the_run_while_v_computes_and_s_cancels_it)
{
    struct fake *f = sim_xcalloc(1, sizeof(*f));
    f->base.ops = &fake_ops;
    grow_init(&f->g, 200);
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "2000000", 1);
    struct tui_app *a = tui_app_new(&f->base, 120, 40, true, NULL, NULL, NULL, NULL);
    unsetenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US");
    tui_app_work(a, 1000000);
    cr_assert_eq(f->g.steps, 201, "the loop ticks the run");
    tui_app_key(a, 'v');
    free(tui_canvas_dump(tui_app_render(a), false));
    cr_assert(tui_task_holding(), "the verdict computes on the worker");
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t steps = f->g.steps;
    for (int i = 0; i < 20; i++)
        tui_app_work(a, 1000000);
    cr_assert_lt(ms_since(&t0), 100, "the loop is not blocked by the verdict");
    cr_assert_eq(f->g.steps, steps, "the run is held while the verdict reads the model");
    char *d = tui_canvas_dump(tui_app_render(a), false);
    cr_assert(strstr(d, "verdict: computing"), "%s", d);
    cr_assert(strstr(d, "the run waits for it"), "%s", d);
    free(d);
    /* s: the verdict is cancelled before the run steps (fake_control checks) */
    tui_app_key(a, ' ');
    cr_assert(!tui_task_holding());
    tui_app_key(a, 's');
    cr_assert_eq(f->g.steps, steps + 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tui_app_free(a); /* a verdict started again meanwhile is cancelled too */
    cr_assert_lt(ms_since(&t0), 500);
    tui_source_free(&f->base);
}

/* Until *f is set (at most 5 s); until the run of t has ended: a millisecond at a time. */
static void wait_flag(atomic_int *f)
{
    for (int i = 0; i < 5000 && !atomic_load(f); i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void wait_task(const struct tui_task *t)
{
    for (int i = 0; i < 5000 && tui_task_running(t); i++) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(!tui_task_running(t), "the run ended within 5 s");
}

/* A run ahead of a request (the verdict of a loaded trace, its pane closed) runs at the lowest
 * priority, so that the analyses the user asks for take the cores first; once its pane opens
 * (ahead set false) the run under way gets back the priority it had. */
struct ahead_probe {
    atomic_int started, go;
    int nice_first, nice_then;
};

static void ahead_fn(void *arg, struct trace_progress *p)
{
    struct ahead_probe *a = arg;
    (void)p;
    a->nice_first = getpriority(PRIO_PROCESS, (id_t)gettid());
    atomic_store(&a->started, 1);
    wait_flag(&a->go);
    a->nice_then = getpriority(PRIO_PROCESS, (id_t)gettid());
}

Test(tui_live_task, a_run_ahead_yields_by_priority_until_its_pane_opens)
{
    int nice0 = getpriority(PRIO_PROCESS, 0);
    struct ahead_probe a = {0};
    struct tui_task *t = tui_task_new();
    tui_task_set_ahead(t, true);
    tui_task_start(t, ahead_fn, &a, true);
    wait_flag(&a.started);
    cr_assert(atomic_load(&a.started), "the run started");
    /* lowered only when it can be raised back (else it keeps the process's priority) */
    int ahead_nice = tui_task_may_lower() ? TUI_TASK_AHEAD_NICE : nice0;
    cr_expect_eq(a.nice_first, ahead_nice, "ahead: nice %d", a.nice_first);
    tui_task_set_ahead(t, false); /* the pane opens */
    atomic_store(&a.go, 1);
    wait_task(t);
    cr_assert(tui_task_take_done(t));
    cr_expect_eq(a.nice_then, nice0, "its pane open: nice %d, was %d", a.nice_then, nice0);
    /* a run not ahead keeps the process's priority */
    memset(&a, 0, sizeof(a));
    atomic_store(&a.go, 1);
    tui_task_start(t, ahead_fn, &a, true);
    wait_task(t);
    cr_expect_eq(a.nice_first, nice0, "not ahead: nice %d", a.nice_first);
    tui_task_free(t);
}

/* The threads a run ahead starts (the critical path reads ahead on one) take its lowered
 * priority; when its pane opens they are raised with it. */
struct ahead_helper {
    struct ahead_probe *a;
    int nice_first, nice_then;
};

static void *ahead_helper_fn(void *arg)
{
    struct ahead_helper *h = arg;
    h->nice_first = getpriority(PRIO_PROCESS, (id_t)gettid());
    atomic_store(&h->a->started, 1);
    wait_flag(&h->a->go);
    h->nice_then = getpriority(PRIO_PROCESS, (id_t)gettid());
    return NULL;
}

static void ahead_with_thread_fn(void *arg, struct trace_progress *p)
{
    struct ahead_helper *h = arg;
    (void)p;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, ahead_helper_fn, h), 0);
    pthread_join(th, NULL);
}

Test(tui_live_task, a_run_ahead_raised_raises_the_threads_its_analysis_started)
{
    int nice0 = getpriority(PRIO_PROCESS, 0);
    struct ahead_probe a = {0};
    struct ahead_helper h = {.a = &a};
    struct tui_task *t = tui_task_new();
    tui_task_set_ahead(t, true);
    tui_task_start(t, ahead_with_thread_fn, &h, true);
    wait_flag(&a.started);
    cr_assert(atomic_load(&a.started), "the analysis's thread started");
    int ahead_nice = tui_task_may_lower() ? TUI_TASK_AHEAD_NICE : nice0;
    cr_expect_eq(h.nice_first, ahead_nice, "its thread, ahead: nice %d", h.nice_first);
    tui_task_set_ahead(t, false); /* the pane opens */
    atomic_store(&a.go, 1);
    wait_task(t);
    cr_assert(tui_task_take_done(t));
    if (nice0 != TUI_TASK_AHEAD_NICE)
        cr_expect_eq(h.nice_then, nice0, "its pane open, its thread: nice %d, was %d", h.nice_then,
                     nice0);
    tui_task_free(t);
}

/* A user who may not raise a thread's priority back (RLIMIT_NICE 0, no CAP_SYS_NICE: the
 * default for a user's account) would see the verdict computed ahead go on at the lowest
 * priority once its pane opens: the run ahead keeps the process's priority instead. */
static void drop_nice_rights(void)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];
    cr_assert_eq(syscall(SYS_capget, &h, d), 0);
    d[CAP_SYS_NICE / 32].effective &= ~(1u << (CAP_SYS_NICE % 32));
    cr_assert_eq(syscall(SYS_capset, &h, d), 0); /* this thread's, and the threads it makes */
    struct rlimit rl = {0, 0};
    cr_assert_eq(setrlimit(RLIMIT_NICE, &rl), 0);
}

Test(tui_live_task, a_run_ahead_keeps_its_priority_when_it_could_not_get_it_back)
{
    int nice0 = getpriority(PRIO_PROCESS, 0);
    cr_assert_lt(nice0, TUI_TASK_AHEAD_NICE);
    drop_nice_rights();
    cr_assert_not(tui_task_may_lower(), "no right to raise a priority: nothing lowered");
    struct ahead_probe a = {0};
    struct tui_task *t = tui_task_new();
    tui_task_set_ahead(t, true);
    tui_task_start(t, ahead_fn, &a, true);
    wait_flag(&a.started);
    cr_assert(atomic_load(&a.started), "the run started");
    cr_expect_eq(a.nice_first, nice0, "ahead without the right: nice %d, was %d", a.nice_first,
                 nice0);
    tui_task_set_ahead(t, false);
    atomic_store(&a.go, 1);
    wait_task(t);
    cr_expect_eq(a.nice_then, nice0, "its pane open: nice %d, was %d", a.nice_then, nice0);
    tui_task_free(t);
}

/* A pane's run whose pane leaves the screen (another pane took its place: v pressed while
 * the summary is still summed up) goes on at the lowest priority, behind what the user looks
 * at; shown again, it gets back the priority it had. A run started while hidden starts
 * lowered. */
struct hidden_probe {
    atomic_int started, go1, went1, go2;
    int nice_first, nice_mid, nice_then;
};

static void hidden_fn(void *arg, struct trace_progress *p)
{
    struct hidden_probe *h = arg;
    (void)p;
    h->nice_first = getpriority(PRIO_PROCESS, (id_t)gettid());
    atomic_store(&h->started, 1);
    wait_flag(&h->go1);
    h->nice_mid = getpriority(PRIO_PROCESS, (id_t)gettid());
    atomic_store(&h->went1, 1);
    wait_flag(&h->go2);
    h->nice_then = getpriority(PRIO_PROCESS, (id_t)gettid());
}

static void hidden_discard(void *arg)
{
    (void)arg;
}

Test(tui_live_task, a_run_whose_pane_is_hidden_yields_by_priority_until_it_is_shown_again)
{
    int nice0 = getpriority(PRIO_PROCESS, 0);
    cr_assert_lt(nice0, TUI_TASK_AHEAD_NICE);
    /* lowered only when it can be raised back (else it keeps the process's priority) */
    int low = tui_task_may_lower() ? TUI_TASK_AHEAD_NICE : nice0;
    struct hidden_probe h = {0};
    struct tui_task *t = tui_task_new();
    tui_task_start(t, hidden_fn, &h, true);
    wait_flag(&h.started);
    cr_assert(atomic_load(&h.started), "the run started");
    cr_expect_eq(h.nice_first, nice0, "shown: nice %d, was %d", h.nice_first, nice0);
    tui_task_set_hidden(t, true); /* another pane takes its place */
    atomic_store(&h.go1, 1);
    wait_flag(&h.went1);
    cr_expect_eq(h.nice_mid, low, "hidden: nice %d", h.nice_mid);
    tui_task_set_hidden(t, false); /* back on screen */
    atomic_store(&h.go2, 1);
    wait_task(t);
    cr_assert(tui_task_take_done(t));
    cr_expect_eq(h.nice_then, nice0, "shown again: nice %d, was %d", h.nice_then, nice0);

    /* started while hidden: lowered from the start, raised once shown */
    memset(&h, 0, sizeof(h));
    tui_task_set_hidden(t, true);
    tui_task_start(t, hidden_fn, &h, true);
    wait_flag(&h.started);
    cr_expect_eq(h.nice_first, low, "started hidden: nice %d", h.nice_first);
    tui_task_set_hidden(t, false);
    atomic_store(&h.go1, 1);
    atomic_store(&h.go2, 1);
    wait_task(t);
    cr_expect_eq(h.nice_then, nice0, "shown: nice %d, was %d", h.nice_then, nice0);

    /* a run ahead hidden and shown again stays lowered until its own pane opens */
    memset(&h, 0, sizeof(h));
    tui_task_set_ahead(t, true);
    tui_task_start(t, hidden_fn, &h, true);
    wait_flag(&h.started);
    tui_task_set_hidden(t, true);
    tui_task_set_hidden(t, false);
    atomic_store(&h.go1, 1);
    wait_flag(&h.went1);
    cr_expect_eq(h.nice_mid, low, "ahead, shown again: nice %d", h.nice_mid);
    tui_task_set_ahead(t, false); /* its pane opens */
    atomic_store(&h.go2, 1);
    wait_task(t);
    cr_expect_eq(h.nice_then, nice0, "its pane open: nice %d, was %d", h.nice_then, nice0);
    tui_task_free(t);

    /* a live task holds the run while it works: hidden, it keeps its priority */
    memset(&h, 0, sizeof(h));
    t = tui_task_new();
    tui_task_set_live(t, hidden_discard);
    tui_task_start(t, hidden_fn, &h, true);
    wait_flag(&h.started);
    tui_task_set_hidden(t, true);
    atomic_store(&h.go1, 1);
    wait_flag(&h.went1);
    cr_expect_eq(h.nice_mid, nice0, "live, hidden: nice %d, was %d", h.nice_mid, nice0);
    atomic_store(&h.go2, 1);
    wait_task(t);
    tui_task_free(t);
}

/* Whatever the priorities, a run ahead waits while one of the user's runs: it counts on at
 * its progress checks only when none is under way, and once its pane opens it waits no
 * more. */
struct gate_probe {
    atomic_int started, go;
    atomic_ullong checks;
};

static void counting_fn(void *arg, struct trace_progress *p)
{
    struct gate_probe *g = arg;
    atomic_store(&g->started, 1);
    for (uint64_t i = 0; !trace_progress_at(p, i) && !atomic_load(&g->go); i++) {
        atomic_fetch_add(&g->checks, 1);
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void users_fn(void *arg, struct trace_progress *p)
{
    struct gate_probe *g = arg;
    (void)p;
    atomic_store(&g->started, 1);
    wait_flag(&g->go);
}

Test(tui_live_task, a_run_ahead_waits_while_a_run_of_the_users_is_under_way)
{
    struct gate_probe ahead = {0}, user = {0};
    struct tui_task *t = tui_task_new(), *u = tui_task_new();
    tui_task_set_ahead(t, true);
    tui_task_start(t, counting_fn, &ahead, true);
    wait_flag(&ahead.started);
    sleep_ms(20);
    cr_assert_gt(atomic_load(&ahead.checks), 0, "alone, the run ahead goes on");
    tui_task_start(u, users_fn, &user, true); /* the user opens another pane */
    wait_flag(&user.started);
    sleep_ms(5); /* its check under way ends */
    unsigned long long held = atomic_load(&ahead.checks);
    sleep_ms(50);
    cr_expect_eq(atomic_load(&ahead.checks), held, "it waits: %llu checks, then %llu", held,
                 atomic_load(&ahead.checks));
    atomic_store(&user.go, 1); /* the user's run ends */
    wait_task(u);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&ahead.checks), held, "it goes on once the user's run ended");

    /* its pane opens: it is the user's run now, and waits for no other */
    tui_task_set_ahead(t, false);
    memset(&user, 0, sizeof(user));
    tui_task_start(u, users_fn, &user, true);
    wait_flag(&user.started);
    held = atomic_load(&ahead.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&ahead.checks), held, "its pane open, it waits no more");
    /* and set ahead again (the pane closed), it does not wait for itself */
    atomic_store(&user.go, 1);
    wait_task(u);
    tui_task_set_ahead(t, true);
    held = atomic_load(&ahead.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&ahead.checks), held, "the user's run goes on as the user's");
    atomic_store(&ahead.go, 1);
    tui_task_free(u);
    tui_task_free(t); /* cancels it, were it waiting still */
}

/* A narrow run of the user's on screen (its analysis on one thread) leaves a core free: a run
 * ahead and a hidden run go on beside it, where a run that is not narrow holds them; it
 * still counts among the user's runs background work waits for (tui_task_users), and a
 * wide one beside it holds them again. */
Test(tui_live_task, runs_ahead_and_hidden_go_on_beside_a_narrow_run_of_the_users)
{
    struct gate_probe ahead = {0}, hid = {0}, narrow = {0}, wide = {0};
    struct tui_task *a = tui_task_new(), *h = tui_task_new();
    struct tui_task *n = tui_task_new(), *w = tui_task_new();
    tui_task_set_narrow(n, true);
    tui_task_set_ahead(a, true);
    tui_task_start(a, counting_fn, &ahead, true);
    tui_task_set_hidden(h, true);
    tui_task_start(h, counting_fn, &hid, true);
    wait_flag(&ahead.started);
    wait_flag(&hid.started);
    unsigned users0 = atomic_load(tui_task_users());
    tui_task_start(n, users_fn, &narrow, true); /* the summary sums up, say */
    wait_flag(&narrow.started);
    cr_expect_eq(atomic_load(tui_task_users()), users0 + 1, "a narrow run is one of the user's");
    unsigned long long held_a = atomic_load(&ahead.checks), held_h = atomic_load(&hid.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&ahead.checks), held_a, "beside a narrow run, the run ahead goes on");
    cr_expect_gt(atomic_load(&hid.checks), held_h, "beside a narrow run, the hidden run goes on");
    tui_task_start(w, users_fn, &wide, true); /* and the verdict's pane, say */
    wait_flag(&wide.started);
    sleep_ms(5); /* their checks under way end */
    held_a = atomic_load(&ahead.checks), held_h = atomic_load(&hid.checks);
    sleep_ms(50);
    cr_expect_eq(atomic_load(&ahead.checks), held_a, "beside a wide run, the run ahead waits");
    cr_expect_eq(atomic_load(&hid.checks), held_h, "beside a wide run, the hidden run waits");
    atomic_store(&wide.go, 1);
    wait_task(w);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&ahead.checks), held_a, "the wide run ended: it goes on");
    cr_expect_gt(atomic_load(&hid.checks), held_h, "the wide run ended: it goes on hidden");
    atomic_store(&narrow.go, 1);
    wait_task(n);
    cr_expect_eq(atomic_load(tui_task_users()), users0, "the narrow run ended");
    atomic_store(&ahead.go, 1);
    atomic_store(&hid.go, 1);
    tui_task_free(a);
    tui_task_free(h);
    tui_task_free(n);
    tui_task_free(w);
}

/* A run whose pane is hidden waits at its progress checks while a run of the user's on screen
 * is under way (what the user looks at comes first): it counts on once shown again, or once
 * that run ended; a hidden live task (it holds the run) and runs of the user's both on screen
 * never wait; a hidden run of the user's does not hold a run ahead back. */
Test(tui_live_task, a_hidden_run_waits_while_a_run_on_screen_is_under_way)
{
    struct gate_probe hid = {0}, user = {0};
    struct tui_task *t = tui_task_new(), *u = tui_task_new();
    tui_task_start(t, counting_fn, &hid, true);
    wait_flag(&hid.started);
    tui_task_start(u, users_fn, &user, true); /* both on screen: neither waits */
    wait_flag(&user.started);
    unsigned long long held = atomic_load(&hid.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&hid.checks), held, "both on screen, it goes on");
    tui_task_set_hidden(t, true); /* the user's other pane takes its place */
    sleep_ms(5);                  /* its check under way ends */
    held = atomic_load(&hid.checks);
    sleep_ms(50);
    cr_expect_eq(atomic_load(&hid.checks), held, "hidden, it waits: %llu checks, then %llu", held,
                 atomic_load(&hid.checks));
    tui_task_set_hidden(t, false); /* back on screen */
    sleep_ms(50);
    cr_expect_gt(atomic_load(&hid.checks), held, "shown again, it goes on");
    tui_task_set_hidden(t, true);
    sleep_ms(5);
    held = atomic_load(&hid.checks);
    sleep_ms(50);
    cr_expect_eq(atomic_load(&hid.checks), held, "hidden again, it waits");
    atomic_store(&user.go, 1); /* the run on screen ends */
    wait_task(u);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&hid.checks), held, "nothing on screen computes: it goes on hidden");

    /* a run ahead does not wait for a hidden run of the user's */
    struct gate_probe ahead = {0};
    tui_task_set_ahead(u, true);
    tui_task_start(u, counting_fn, &ahead, true);
    wait_flag(&ahead.started);
    held = atomic_load(&ahead.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&ahead.checks), held, "the run ahead goes on beside a hidden one");
    atomic_store(&ahead.go, 1);
    wait_task(u);
    atomic_store(&hid.go, 1);
    wait_task(t);
    tui_task_free(t);

    /* a hidden live task holds the run while it works: it never waits */
    struct gate_probe live = {0};
    memset(&user, 0, sizeof(user));
    t = tui_task_new();
    tui_task_set_live(t, hidden_discard);
    tui_task_set_ahead(u, false);
    tui_task_start(t, counting_fn, &live, true);
    wait_flag(&live.started);
    tui_task_start(u, users_fn, &user, true);
    wait_flag(&user.started);
    tui_task_set_hidden(t, true);
    sleep_ms(5);
    held = atomic_load(&live.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&live.checks), held, "a live task hidden goes on");
    atomic_store(&user.go, 1);
    atomic_store(&live.go, 1);
    tui_task_free(u);
    tui_task_free(t);
}

/* A run no key asked for (the first frame's summary: narrow, on screen) waits at its progress
 * checks while a run a key asked for, not narrow, is under way (C's verdict, say), and goes
 * on once it ended; a run ahead beside it (the verdict before the key) does not hold it, nor
 * another narrow run of the user's; it still counts among the user's runs on screen, which
 * background work waits for (tui_task_users), and is not one a run ahead waits for. */
Test(tui_live_task, a_run_no_key_asked_for_waits_while_one_a_key_asked_for_is_under_way)
{
    struct gate_probe first = {0}, ahead = {0}, narrow = {0};
    struct tui_task *s = tui_task_new(), *a = tui_task_new(), *n = tui_task_new();
    tui_task_set_narrow(s, true);
    tui_task_set_unasked(s, true);
    tui_task_set_narrow(n, true);
    unsigned users0 = atomic_load(tui_task_users());
    tui_task_start(s, counting_fn, &first, true);
    wait_flag(&first.started);
    cr_expect_eq(atomic_load(tui_task_users()), users0 + 1, "on screen: one of the user's runs");
    cr_expect(!tui_task_user_waits(), "not a run the user waits for");
    tui_task_set_ahead(a, true);
    tui_task_start(a, counting_fn, &ahead, true); /* the verdict, ahead of its key */
    wait_flag(&ahead.started);
    tui_task_start(n, users_fn, &narrow, true); /* another narrow run of the user's */
    wait_flag(&narrow.started);
    unsigned long long held = atomic_load(&first.checks), held_a = atomic_load(&ahead.checks);
    sleep_ms(50);
    cr_expect_gt(atomic_load(&first.checks), held,
                 "beside a run ahead and a narrow one, it goes on");
    cr_expect_gt(atomic_load(&ahead.checks), held_a, "the run ahead does not wait for it");
    atomic_store(&narrow.go, 1);
    wait_task(n);
    tui_task_set_ahead(a, false); /* a key now waits for the verdict */
    cr_expect(tui_task_user_waits(), "a run the user waits for");
    sleep_ms(5); /* its check under way ends */
    held = atomic_load(&first.checks);
    sleep_ms(50);
    cr_expect_eq(atomic_load(&first.checks), held, "it waits: %llu checks, then %llu", held,
                 atomic_load(&first.checks));
    cr_expect_gt(atomic_load(&ahead.checks), held_a, "the run asked for goes on");
    atomic_store(&ahead.go, 1);
    wait_task(a);
    cr_expect(!tui_task_user_waits(), "the run asked for ended");
    sleep_ms(50);
    cr_expect_gt(atomic_load(&first.checks), held, "it goes on once that run ended");
    atomic_store(&first.go, 1);
    wait_task(s);
    cr_expect_eq(atomic_load(tui_task_users()), users0, "ended");
    tui_task_free(s);
    tui_task_free(a);
    tui_task_free(n);
}
