/*
 * The Gantt's search on a worker (tui_gantt_search_start, as /, n and N run it): over a
 * model of 60 000 ops with ties in start times, every walk of n and N selects the same ops
 * in the same order as the search done in place (tui_gantt_search), with the same count and
 * wrap; n pressed while a search runs walks on once it is done (also when the next search
 * runs in place, no thread to be had, and so ends before it is started); another pattern
 * replaces a running search; live, a change of the model stops it, and the status line says
 * so.
 */
#include "test_tui_util.h"
#include "tui/gantt/gantt.h"
#include "tui/panes/task.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

TestSuite(tui_search, .init = tui_test_locale);

enum { OPS = 60000 };

/* 8 tracks; ops of four names, starts on a coarse grid so that many share one. */
static struct trace_model *model(void)
{
    static const char *const ops[4] = {"gemm_f16", "exp", "dma_read", "gemm_i8"};
    struct trace_model *m = trace_model_new();
    uint32_t tr[8];
    for (int i = 0; i < 8; i++) {
        char name[64];
        snprintf(name, sizeof(name), "sip0.cube0.pe%d.%s", i / 2, i % 2 ? "pe_math" : "pe_gemm");
        tr[i] = trace_model_track(m, name, i % 2 ? TRACE_ENGINE_VE : TRACE_ENGINE_TE, i);
    }
    uint64_t x = 12345;
    for (uint64_t i = 0; i < OPS; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t s = (x >> 33) % 20000 * 10;
        tui_test_event(m, tr[(x >> 20) % 8], ops[(x >> 40) % 4], TRACE_KIND_MATH, s,
                       s + 5 + (x >> 50) % 20);
    }
    trace_model_finish(m);
    return m;
}

/* Run the Gantt's work until the search is done. */
static void settle(struct tui_gantt *g, struct tui_view *v)
{
    while (tui_gantt_ops.work(g, v, 1000000) || tui_gantt_searching(g))
        ;
}

Test(tui_search, on_the_worker_the_same_matches_in_the_same_order)
{
    struct trace_model *m = model();
    struct tui_view va, vb;
    tui_view_init(&va, m, true);
    tui_view_init(&vb, m, true);
    struct tui_gantt *a = tui_gantt_new(&va), *b = tui_gantt_new(&vb);
    static const char *const pats[] = {"gemm", "EXP", "pe1.pe_math", "i8", "nothing"};
    static const int dirs[] = {1, 1, 1, -1, 1, -1, -1, -1, 1, 1, -1, 1};
    for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
        for (size_t k = 0; k < 40; k++) {
            int dir = dirs[k % (sizeof(dirs) / sizeof(dirs[0]))];
            bool wrapped;
            uint64_t n = tui_gantt_search(a, &va, pats[p], dir, &wrapped);
            tui_gantt_search_start(b, &vb, pats[p], dir);
            settle(b, &vb);
            cr_assert_eq(vb.selected, va.selected, "%s, step %zu: op %llu, in place %llu", pats[p],
                         k, (unsigned long long)vb.selected, (unsigned long long)va.selected);
            cr_assert_eq(vb.cursor, va.cursor);
            char want[300];
            if (n)
                snprintf(want, sizeof(want), "search '%s': %llu match%s", pats[p],
                         (unsigned long long)n, n == 1 ? "" : "es");
            else
                snprintf(want, sizeof(want), "no match for '%s'", pats[p]);
            cr_assert(strstr(vb.message, want), "%s: %s", want, vb.message);
            cr_assert_eq(strstr(vb.message, "wrapped") != NULL, wrapped, "%s", vb.message);
        }
    }
    tui_gantt_free(a);
    tui_gantt_free(b);
    trace_model_free(m);
}

/* Two views of one model: a's searches run in place (tui_gantt_search), b's on the worker,
 * slowed down at each progress check; a has walked three matches of "exp" forward. */
struct pair {
    struct trace_model *m;
    struct tui_view va, vb;
    struct tui_gantt *a, *b;
};

static void pair_open(struct pair *p)
{
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "20000", 1); /* each progress check: 20 ms */
    p->m = model();
    tui_view_init(&p->va, p->m, true);
    tui_view_init(&p->vb, p->m, true);
    p->a = tui_gantt_new(&p->va), p->b = tui_gantt_new(&p->vb);
    bool wrapped;
    for (int k = 0; k < 3; k++)
        tui_gantt_search(p->a, &p->va, "exp", 1, &wrapped);
}

static void pair_close(struct pair *p)
{
    tui_gantt_free(p->a);
    tui_gantt_free(p->b);
    trace_model_free(p->m);
    unsetenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US");
}

Test(tui_search, n_pressed_while_it_runs_walks_on_once_it_is_done)
{
    struct pair p;
    pair_open(&p);
    bool wrapped;
    tui_gantt_search(p.a, &p.va, "exp", -1, &wrapped);
    tui_gantt_search_start(p.b, &p.vb, "exp", 1);
    cr_assert(tui_gantt_searching(p.b), "the search runs on");
    cr_assert_eq(p.vb.selected, TUI_NO_EVENT, "nothing selected until it is done");
    tui_gantt_search_start(p.b, &p.vb, "exp", 1);  /* n */
    tui_gantt_search_start(p.b, &p.vb, "exp", 1);  /* n */
    tui_gantt_search_start(p.b, &p.vb, "exp", -1); /* N */
    settle(p.b, &p.vb);
    /* three forward, one back: where two steps forward end */
    uint64_t two = p.va.selected;
    cr_assert_eq(p.vb.selected, two);
    /* another pattern replaces a running search */
    tui_gantt_search_start(p.b, &p.vb, "exp", 1);
    tui_gantt_search_start(p.b, &p.vb, "dma_read", 1);
    settle(p.b, &p.vb);
    tui_gantt_search(p.a, &p.va, "dma_read", 1, &wrapped);
    cr_assert_eq(p.vb.selected, p.va.selected);
    cr_assert(strstr(p.vb.message, "'dma_read'"), "%s", p.vb.message);
    pair_close(&p);
}

static void *no_op(void *arg)
{
    return arg;
}

/* From now on no thread can be had (RLIMIT_NPROC at 1; root's threads are not counted, so
 * root becomes nobody first): a task then runs in place. False when threads are still made. */
static bool refuse_threads(void)
{
    if (geteuid() == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            return false;
        prctl(PR_SET_DUMPABLE, 1); /* a sanitizer's leak check attaches to it at exit */
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NPROC, &rl) != 0)
        return false;
    rl.rlim_cur = 1;
    if (setrlimit(RLIMIT_NPROC, &rl) != 0)
        return false;
    pthread_t t;
    if (pthread_create(&t, NULL, no_op, NULL) != 0)
        return true;
    pthread_join(t, NULL);
    return false;
}

/* Threads again (the leak check at exit makes one). */
static void allow_threads(void)
{
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NPROC, &rl), 0);
    rl.rlim_cur = rl.rlim_max;
    cr_assert_eq(setrlimit(RLIMIT_NPROC, &rl), 0);
}

Test(tui_search, n_pressed_while_it_runs_walks_on_when_the_next_search_runs_in_place)
{
    struct pair p;
    pair_open(&p);
    tui_gantt_search_start(p.b, &p.vb, "exp", 1);
    cr_assert(tui_gantt_searching(p.b), "the search runs on");
    tui_gantt_search_start(p.b, &p.vb, "exp", 1); /* n */
    tui_gantt_search_start(p.b, &p.vb, "exp", 1); /* n */
    if (!refuse_threads())
        cr_skip_test("threads cannot be refused here");
    settle(p.b, &p.vb); /* each n's search runs in place, done as it starts */
    allow_threads();
    cr_assert_eq(p.vb.selected, p.va.selected, "op %llu, in place %llu",
                 (unsigned long long)p.vb.selected, (unsigned long long)p.va.selected);
    cr_assert(strstr(p.vb.message, "search 'exp': "), "%s", p.vb.message);
    pair_close(&p);
}

Test(tui_search, live_a_change_of_the_model_stops_it_and_says_so)
{
    setenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US", "20000", 1);
    struct trace_model *m = model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    v.live = true;
    struct tui_gantt *g = tui_gantt_new(&v);
    tui_gantt_search_start(g, &v, "exp", 1);
    cr_assert(tui_gantt_searching(g));
    cr_assert(tui_task_holding(), "a live search holds the model still");
    tui_task_release(); /* what stepping the run does first */
    cr_assert(!tui_task_holding());
    settle(g, &v);
    cr_assert(strstr(v.message, "search 'exp' stopped: the run moved on"), "%s", v.message);
    cr_assert_eq(v.selected, TUI_NO_EVENT, "nothing selected");
    /* n searches again, to the end */
    tui_gantt_search_start(g, &v, "exp", 1);
    settle(g, &v);
    cr_assert(strstr(v.message, "search 'exp': "), "%s", v.message);
    cr_assert_neq(v.selected, TUI_NO_EVENT);
    tui_gantt_free(g);
    trace_model_free(m);
    unsetenv("NPUSCOPE_TEST_ANALYSIS_DELAY_US");
}
