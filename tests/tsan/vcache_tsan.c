/*
 * ThreadSanitizer driver for keeping a verdict (trace/cache/vcache.h; make tsan), as the
 * viewer does: the verdict packed, the pack written on a thread of its own while this one
 * checks the verdict against an experiment (trace_verdict_check changes its items) and
 * frees it; then read back, it is the verdict judged. Exit 0 when it is; any data race
 * between the two threads makes ThreadSanitizer report and fail.
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
    struct trace_vcache_pack *k = v ? trace_vcache_pack(v, path, NULL, &d) : NULL;
    pthread_t th;
    bad = bad || !k || pthread_create(&th, NULL, writer, k) != 0;
    uint64_t n = 0, waits = 0;
    if (!bad) {
        n = v->launches[0].path.n, waits = v->launches[0].waits;
        struct trace_verdict_check c = {.cmdq_id = 1, .bound = TRACE_BOUND_NONE};
        trace_verdict_check(v, &c, 1);
        trace_verdict_free(v);
        pthread_join(th, NULL);
        trace_vcache_pack_free(k);
        struct trace_verdict *kept = trace_vcache_load(m, path, NULL, &d);
        bad = !kept || kept->nlaunches != 1 || kept->launches[0].path.n != n ||
              kept->launches[0].waits != waits || kept->launches[0].checked || n < N;
        trace_verdict_free(kept);
    }
    if (bad)
        fprintf(stderr, "vcache_tsan: the verdict kept is not the verdict judged (%s)\n", d.msg);
    else
        printf("vcache_tsan: a verdict of %llu steps written on a thread while checked and freed, "
               "read back the same\n",
               (unsigned long long)n);
    trace_model_free(m);
    if (!scratch_remove(&sc))
        bad = 1;
    return bad;
}
