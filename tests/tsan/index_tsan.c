/*
 * ThreadSanitizer driver for the index written behind the viewer's first frame
 * (trace/cache/index.h, trace_index_load_later; make tsan): a trace is loaded from its JSON,
 * its index written on the job's thread while this thread reads the same model as the
 * viewer does (metrics, every track's busy time and seek, every event's details and op
 * columns), then the index read back must hold as many events. Exit 0 when it does; any
 * data race makes ThreadSanitizer report and fail the run.
 */
#include "trace/analysis/metrics.h"
#include "trace/analysis/opinfo.h"
#include "trace/cache/index.h"

#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void event(FILE *f, int i)
{
    fprintf(f,
            "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":%d,"
            "\"cmdq_id\":null,\"layer_id\":null,\"tile_id\":null,\"op\":\"OP%d\","
            "\"start_cycle\":%d,\"end_cycle\":%d,\"details\":{\"m\":%d,\"name\":\"n%d\"}}",
            i % 3, i % 11, (i * 7919) % 40000, (i * 7919) % 40000 + 9, i, i);
}

/* What the viewer reads of a model while the index is written. */
static uint64_t read_model(const struct trace_model *m)
{
    uint64_t sum = 0;
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    trace_metrics_fini(&x);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        sum += trace_model_track_busy(m, t, 0, trace_model_t_max(m));
        sum += trace_model_track_seek(m, t, trace_model_t_max(m) / 2);
    }
    struct trace_spaces sp;
    trace_spaces_init(&sp);
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        struct trace_opinfo oi;
        trace_opinfo_of_event(m, i, &sp, &oi);
        struct sim_value *v = trace_model_event_details(m, i);
        sum += v != NULL;
        sim_value_free(v);
    }
    return sum;
}

int main(void)
{
    struct scratch sc;
    if (!scratch_make(&sc, "index-tsan"))
        return 1;
    const char *path = sc.path;
    int status = 1;
    struct trace_model *m = NULL, *again = NULL;
    struct trace_index_job *job;
    enum trace_index_use u;
    struct diag d;
    if (scratch_write_events(path, 20000, event) != 0 ||
        trace_index_load_later(path, false, &m, NULL, &u, &d, NULL, &job) < 0 || !job) {
        fprintf(stderr, "index_tsan: no model or no index to write\n");
        goto out;
    }
    if (trace_index_job_start(job, m) < 0) {
        trace_index_job_finish(job, NULL);
        goto out;
    }
    uint64_t sum = 0;
    for (int k = 0; k < 3; k++)
        sum += read_model(m);
    if (trace_index_job_finish(job, &d) < 0) {
        fprintf(stderr, "index_tsan: %s\n", d.msg);
        goto out;
    }
    if (trace_index_load_later(path, false, &again, NULL, &u, &d, NULL, &job) < 0 ||
        u != TRACE_INDEX_HIT || trace_model_event_count(again) != trace_model_event_count(m) ||
        read_model(again) * 3 != sum) {
        fprintf(stderr, "index_tsan: the index does not hold the model read\n");
        goto out;
    }
    printf("index_tsan: %llu events read while their index was written\n",
           (unsigned long long)trace_model_event_count(m));
    status = 0;
out:
    trace_model_free(again);
    trace_model_free(m);
    if (!scratch_remove(&sc))
        status = 1;
    return status;
}
