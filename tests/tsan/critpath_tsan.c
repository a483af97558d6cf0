/*
 * ThreadSanitizer driver for the critical path's second thread (trace/verdict/critpath.h;
 * make tsan): a launch of many ops with op columns, its path computed with the details read
 * ahead on a second thread and on one (the paths and the infos handed over must agree; the
 * arithmetic handed on the second thread too, in order), then on a worker thread, as the
 * viewer runs it, cancelled from the calling thread while it reads. Exit 0 when they agree
 * and the cancelled one stops; any data race between the reader, the sweep and the thread
 * that cancels makes ThreadSanitizer report and fail.
 */
#include "trace/analysis/opinfo.h"
#include "trace/model/model.h"
#include "trace/model/progress.h"
#include "trace/verdict/critpath.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 120000 };

struct sums {
    size_t n, out_of_order, raw;
    double flops, lo;
};

static void each(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    struct sums *s = ctx;
    s->out_of_order += i != s->n;
    s->n++;
    s->flops += oi->flops;
    for (unsigned r = 0; r < oi->nreads; r++)
        s->lo += (double)oi->reads[r].lo;
}

/* The arithmetic of an op read on the second thread: counted as each counts it. */
static void each_raw(void *ctx, size_t i, uint32_t track, const struct trace_opinfo_raw *r)
{
    (void)track;
    struct sums *s = ctx;
    s->out_of_order += i != s->n;
    s->n++;
    s->flops += r->flops;
    s->raw++;
}

struct job {
    const struct trace_model *m;
    const uint64_t *ev;
    struct trace_progress prog;
    struct trace_critpath p;
    struct sums s;
    bool raw; /* the arithmetic handed on the second thread too */
};

static void *run(void *arg)
{
    struct job *j = arg;
    struct trace_critpath_input in = {.m = j->m,
                                      .events = j->ev,
                                      .n = N,
                                      .progress = &j->prog,
                                      .each_info = each,
                                      .each_raw = j->raw ? each_raw : NULL,
                                      .each_ctx = &j->s,
                                      .threads = 2};
    trace_critpath_compute(&in, &j->p);
    return NULL;
}

int main(void)
{
    struct trace_model *m = trace_model_new();
    uint32_t tr[4];
    for (int t = 0; t < 4; t++) {
        char name[40];
        snprintf(name, sizeof(name), "sip0.cube0.pe%d.pe_math", t);
        tr[t] = trace_model_track(m, name, TRACE_ENGINE_VE, t);
    }
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    uint64_t *ev = calloc(N, sizeof(*ev));
    uint32_t exp_op = trace_model_intern(m, "exp", 3);
    for (size_t i = 0; i < N; i++) {
        struct trace_event e = {.start = 10 * i,
                                .end = 10 * i + 25 + i % 7,
                                .track = tr[i % 4],
                                .op = exp_op,
                                .op_kind = TRACE_KIND_MATH};
        ev[i] = trace_model_add_event(m, &e);
        struct trace_opinfo o = {.flops = (double)(i % 13), .nreads = (unsigned)(i % 3)};
        for (unsigned r = 0; r < o.nreads; r++) {
            uint64_t lo = 256 * ((i + 997 * (r + 1)) % 1000);
            o.reads[r] = (struct trace_range){(uint8_t)(i % 2), lo, lo + 256};
        }
        o.has_write = true;
        o.write = (struct trace_range){1, 256 * (i % 1000), 256 * (i % 1000) + 256};
        trace_opinfo_store(m, ev[i], &o, &sp);
    }
    trace_model_finish(m);

    /* two threads and one: the same */
    struct job a = {.m = m, .ev = ev}, b = {.m = m, .ev = ev};
    run(&a);
    struct trace_critpath_input in = {
        .m = m, .events = ev, .n = N, .each_info = each, .each_ctx = &b.s, .threads = 1};
    trace_critpath_compute(&in, &b.p);
    int bad = 0;
    if (a.p.n != b.p.n || a.p.n < 100 || a.s.n != N || a.s.out_of_order || a.s.flops != b.s.flops ||
        a.s.lo != b.s.lo) {
        fprintf(stderr, "critpath_tsan: two threads gave another path or other infos\n");
        bad = 1;
    }
    for (size_t k = 0; !bad && k < a.p.n; k++)
        if (a.p.steps[k].ev != b.p.steps[k].ev || a.p.steps[k].why != b.p.steps[k].why) {
            fprintf(stderr, "critpath_tsan: step %zu differs\n", k);
            bad = 1;
        }
    /* the arithmetic handed on the second thread: the same sums, in order */
    struct job r = {.m = m, .ev = ev, .raw = true};
    run(&r);
    if (r.p.n != b.p.n || r.s.n != N || r.s.out_of_order || r.s.flops != b.s.flops || !r.s.raw) {
        fprintf(stderr, "critpath_tsan: the arithmetic handed on the second thread differs\n");
        bad = 1;
    }
    trace_critpath_fini(&r.p);
    trace_critpath_fini(&a.p);
    trace_critpath_fini(&b.p);

    /* on a worker, as the viewer runs it, cancelled while it reads */
    struct job c = {.m = m, .ev = ev, .raw = true};
    pthread_t th;
    if (pthread_create(&th, NULL, run, &c) != 0)
        return 1;
    while (atomic_load(&c.prog.done) < 2 * TRACE_PROGRESS_EVERY &&
           atomic_load(&c.prog.what) == NULL)
        ; /* until it has started */
    struct timespec ts = {0, 20 * 1000 * 1000L};
    nanosleep(&ts, NULL);
    atomic_store(&c.prog.cancel, true);
    pthread_join(th, NULL);
    if (c.p.n != 0 && c.s.n != N) {
        fprintf(stderr, "critpath_tsan: cancelled, yet a path of a part\n");
        bad = 1;
    }
    trace_critpath_fini(&c.p);
    free(ev);
    trace_model_free(m);
    if (!bad)
        printf("critpath_tsan: ok\n");
    return bad;
}
