/*
 * ThreadSanitizer driver for the give-backs of a model read through its index
 * (trace/model/mapped.h, trace_model_lent_giveback; make tsan): two threads read every
 * event of the mapped model over and over, each asking for a give-back every so many
 * events, as the analyses do, while this thread asks for more and waits for them; the sums
 * read must stay the same (a page given back is read again, the same), and the model is
 * freed with a give-back just asked. Exit 0 when they do; any data race makes
 * ThreadSanitizer report and fail the run.
 */
#include "trace/cache/index.h"
#include "trace/model/mapped.h"

#include "scratch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EVENTS = 20000, PASSES = 20, EVERY = 1000 };

static void event(FILE *f, int i)
{
    fprintf(f,
            "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":%d,"
            "\"cmdq_id\":null,\"layer_id\":null,\"tile_id\":null,\"op\":\"OP%d\","
            "\"start_cycle\":%d,\"end_cycle\":%d,\"details\":{\"m\":%d}}",
            i % 3, i % 11, i * 10, i * 10 + 9, i);
}

static int write_trace(const char *path)
{
    return scratch_write_events(path, EVENTS, event);
}

struct reader {
    const struct trace_model *m;
    uint64_t sums[PASSES];
    pthread_t th;
};

/* Every event's start summed, pass after pass, a give-back asked every EVERY events. */
static void *read_main(void *arg)
{
    struct reader *r = arg;
    uint64_t n = trace_model_event_count(r->m);
    for (int p = 0; p < PASSES; p++) {
        uint64_t sum = 0;
        for (uint64_t i = 0; i < n; i++) {
            sum += trace_model_event(r->m, i)->start;
            if (i % EVERY == EVERY - 1)
                trace_model_lent_giveback(r->m);
        }
        r->sums[p] = sum;
    }
    return NULL;
}

int main(void)
{
    struct scratch sc;
    if (!scratch_make(&sc, "giveback-tsan"))
        return 1;
    const char *path = sc.path;
    int status = 1;
    struct trace_model *first = NULL, *m = NULL;
    struct trace_index_job *job;
    enum trace_index_use u;
    struct diag d;
    /* the index written by a first open, read by a second: its arrays lent from the file */
    if (write_trace(path) != 0 ||
        trace_index_load_later(path, false, &first, NULL, &u, &d, NULL, &job) < 0 || !job ||
        trace_index_job_start(job, first) < 0 || trace_index_job_finish(job, &d) < 0 ||
        trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job) < 0 ||
        u != TRACE_INDEX_HIT || !trace_model_is_lent(m)) {
        fprintf(stderr, "giveback_tsan: no model read through its index\n");
        goto out;
    }
    uint64_t want = 0;
    for (uint64_t i = 0; i < trace_model_event_count(first); i++)
        want += trace_model_event(first, i)->start;
    struct reader r[2] = {{.m = m}, {.m = m}};
    for (int k = 0; k < 2; k++)
        if (pthread_create(&r[k].th, NULL, read_main, &r[k]) != 0) {
            fprintf(stderr, "giveback_tsan: no thread\n");
            goto out;
        }
    for (int k = 0; k < 200; k++) {
        trace_model_lent_giveback(m);
        if (k % 10 == 0)
            trace_model_lent_settle(m);
    }
    for (int k = 0; k < 2; k++)
        pthread_join(r[k].th, NULL);
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < PASSES; p++)
            if (r[k].sums[p] != want) {
                fprintf(stderr, "giveback_tsan: pass %d read %llu, not %llu\n", p,
                        (unsigned long long)r[k].sums[p], (unsigned long long)want);
                goto out;
            }
    trace_model_lent_giveback(m); /* freed with a give-back just asked */
    printf("giveback_tsan: %d events read %d times on two threads while given back\n", EVENTS,
           PASSES);
    status = 0;
out:
    trace_model_free(m);
    trace_model_free(first);
    if (!scratch_remove(&sc))
        status = 1;
    return status;
}
