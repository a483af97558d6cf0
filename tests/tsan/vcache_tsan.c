/*
 * ThreadSanitizer driver for keeping a verdict (trace/cache/vcache.h; make tsan), as the
 * viewer does: the pack begun and its file made here, then filled from the verdict and
 * written on a thread of its own while this one reads the verdict as the screen shows it;
 * once that thread is joined, the verdict checked against an experiment
 * (trace_verdict_check changes its items) and freed. A second pack, filled here, is written
 * on that thread while the verdict is checked and freed. Read back, each is the verdict
 * judged. Exit 0 when they are; any data race between the threads makes ThreadSanitizer
 * report and fail.
 */
#include "trace/cache/vcache.h"
#include "trace/file/writer.h"
#include "trace/model/model.h"

#include "scratch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 20000 };

static void *writer(void *arg)
{
    struct diag d;
    if (trace_vcache_write(arg, &d) < 0)
        fprintf(stderr, "vcache_tsan: %s\n", d.msg);
    return NULL;
}

struct fill {
    struct trace_vcache_pack *k;
    const struct trace_verdict *v;
};

static void *filler(void *arg)
{
    struct fill *f = arg;
    trace_vcache_pack_fill(f->k, f->v);
    return writer(f->k);
}

/* The verdict kept at path is v's (its first launch's path of n steps and its waits). */
static bool kept_same(const struct trace_model *m, const char *path, uint64_t n, uint64_t waits)
{
    struct diag d;
    struct trace_verdict *kept = trace_vcache_load(m, path, NULL, &d);
    bool ok = kept && kept->nlaunches == 1 && kept->launches[0].path.n == n &&
              kept->launches[0].waits == waits && !kept->launches[0].checked && n >= N;
    if (!ok)
        fprintf(stderr, "vcache_tsan: the verdict kept is not the verdict judged (%s)\n",
                kept ? "" : d.msg);
    trace_verdict_free(kept);
    return ok;
}

int main(void)
{
    struct scratch sc;
    if (!scratch_make(&sc, "vcache-tsan"))
        return 1;
    const char *path = sc.path;
    struct trace_model *m = trace_model_new();
    uint32_t ve = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    uint32_t op = trace_model_intern(m, "exp", 3);
    for (uint64_t i = 0; i < N; i++) {
        struct trace_event ev = {.start = 300 * i,
                                 .end = 300 * i + 100,
                                 .track = ve,
                                 .op = op,
                                 .layer = TRACE_NO_STR,
                                 .tile = TRACE_NO_STR,
                                 .cmdq_id = 1};
        trace_model_add_event(m, &ev);
    }
    trace_model_finish(m);
    struct diag d;
    int bad = trace_writer_write_model(m, path, 0, &d) < 0;
    struct trace_verdict *v = bad ? NULL : trace_verdict_new(m, NULL);
    uint64_t n = v ? v->launches[0].path.n : 0, waits = v ? v->launches[0].waits : 0;
    /* filled on the thread while this one reads the verdict as the screen shows it */
    struct fill f = {v ? trace_vcache_pack_begin(v, path, NULL, &d) : NULL, v};
    pthread_t th;
    bad = bad || !f.k || trace_vcache_pack_create(f.k, &d) < 0 ||
          pthread_create(&th, NULL, filler, &f) != 0;
    if (!bad) {
        char buf[TRACE_VERDICT_LINE * 4];
        size_t shown = 0;
        for (int i = 0; i < 50; i++)
            shown += strlen(trace_verdict_bound_text(v, &v->launches[0], buf, sizeof(buf)));
        pthread_join(th, NULL);
        trace_vcache_pack_free(f.k);
        bad = !shown || !kept_same(m, path, n, waits);
    }
    /* packed here, written on the thread while the verdict is checked and freed */
    struct trace_vcache_pack *k = bad ? NULL : trace_vcache_pack(v, path, NULL, &d);
    bad = bad || !k || pthread_create(&th, NULL, writer, k) != 0;
    if (!bad) {
        struct trace_verdict_check c = {.cmdq_id = 1, .bound = TRACE_BOUND_NONE};
        trace_verdict_check(v, &c, 1);
        trace_verdict_free(v);
        v = NULL;
        pthread_join(th, NULL);
        trace_vcache_pack_free(k);
        bad = !kept_same(m, path, n, waits);
    }
    trace_verdict_free(v);
    if (bad)
        fprintf(stderr, "vcache_tsan: failed (%s)\n", d.msg);
    else
        printf("vcache_tsan: a verdict of %llu steps packed on a thread while shown, and written "
               "on one while checked and freed, read back the same twice\n",
               (unsigned long long)n);
    trace_model_free(m);
    if (!scratch_remove(&sc))
        bad = 1;
    return bad;
}
