/*
 * The comparison computed with its progress (trace_diff_new_progress, as the comparison
 * view computes it on a worker): the same comparison as trace_diff_new when it runs to
 * the end, every op's match included; NULL, nothing leaked, when it is cancelled, whatever
 * step it was in.
 */
#include "trace/diff/diff.h"
#include "trace/model/progress.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#define DATA "tests/data/traces/"

static struct trace_model *load(const char *path)
{
    struct trace_model *m = NULL;
    cr_assert_eq(trace_diff_load(path, &m, NULL, NULL), 0, "%s", path);
    return m;
}

Test(diff_progress, the_same_comparison_as_without)
{
    struct trace_model *a = load(DATA "diff_base.json"), *b = load(DATA "diff_ops.json");
    struct trace_progress p;
    memset(&p, 0, sizeof(p));
    struct trace_diff *x = trace_diff_new(a, b, NULL), *y = trace_diff_new_progress(a, b, NULL, &p);
    cr_assert_not_null(y);
    cr_assert_eq(y->changes, x->changes);
    cr_assert_eq(y->match, x->match);
    cr_assert_eq(y->nlaunches, x->nlaunches);
    cr_assert_eq(y->nmarkers, x->nmarkers);
    cr_assert_eq(y->run.ops_added, x->run.ops_added);
    cr_assert_eq(y->run.ops_removed, x->run.ops_removed);
    cr_assert(x->run.ops_added + x->run.ops_removed > 0, "the fixtures differ in their ops");
    for (int s = 0; s < 2; s++)
        for (uint64_t i = 0; i < trace_model_event_count(s ? b : a); i++)
            cr_assert_eq(trace_diff_match_event(y, s, i), trace_diff_match_event(x, s, i));
    cr_assert_eq(y->note, x->note);
    trace_diff_free(x);
    trace_diff_free(y);
    trace_model_free(a);
    trace_model_free(b);
}

/* Cancel p after delay_us. */
struct canceller {
    struct trace_progress *p;
    unsigned delay_us;
};

static void *cancel_later(void *arg)
{
    struct canceller *c = arg;
    struct timespec ts = {0, (long)c->delay_us * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&c->p->cancel, true);
    return NULL;
}

Test(diff_progress, cancelled_it_gives_nothing)
{
    struct trace_model *a = load(DATA "diff_base.json"), *b = load(DATA "diff_ops.json");
    struct trace_progress p;
    memset(&p, 0, sizeof(p));
    atomic_store(&p.cancel, true);
    cr_assert_null(trace_diff_new_progress(a, b, NULL, &p), "cancelled before it starts");
    /* cancelled at some later check: each check pauses 1 ms, the cancel comes at 0-20 ms */
    for (unsigned d = 0; d <= 20000; d += 2000) {
        memset(&p, 0, sizeof(p));
        p.delay_us = 1000;
        struct canceller c = {&p, d};
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, cancel_later, &c), 0);
        struct trace_diff *x = trace_diff_new_progress(a, b, NULL, &p);
        pthread_join(t, NULL);
        if (x) /* it may end before the cancel: then it is whole */
            cr_assert(!atomic_load(&p.cancel) || x->changes > 0);
        trace_diff_free(x);
    }
    trace_model_free(a);
    trace_model_free(b);
}
