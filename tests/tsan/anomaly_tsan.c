/*
 * ThreadSanitizer driver for the anomalies' second thread (trace/verdict/anomaly.h; make
 * tsan): launches of gemms, some slow and some after a long gap, and DMA reads, some beyond
 * the DRAM's peak; their anomalies found with the bandwidth windows on a second thread
 * (threads 2) and on one (threads 1): the two lists must agree to the last bit; then on a
 * worker, cancelled from the calling thread while both its threads read. Exit 0 when they
 * agree; any data race between the threads makes ThreadSanitizer report and fail.
 */
#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/verdict/anomaly.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { LAUNCHES = 4001 };

static uint64_t op(struct trace_model *m, uint32_t track, uint32_t name, uint64_t s, uint64_t e,
                   int32_t cmdq)
{
    struct trace_event ev = {.start = s,
                             .end = e,
                             .track = track,
                             .op = name,
                             .layer = TRACE_NO_STR,
                             .tile = TRACE_NO_STR,
                             .cmdq_id = cmdq};
    return trace_model_add_event(m, &ev);
}

struct job {
    const struct trace_model *m;
    struct trace_progress p;
    struct trace_anomalies a;
};

/* The anomalies found on a worker, as the viewer finds them, with a progress to cancel. */
static void *find(void *arg)
{
    struct job *j = arg;
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.threads = 2;
    o.progress = &j->p;
    trace_anomalies_find(j->m, &o, &j->a);
    return NULL;
}

int main(void)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *cfg = sim_value_map();
    struct sim_value *mem = sim_value_map_set_take(cfg, "memory", sim_value_map());
    sim_value_map_set_int(mem, "dram_peak_bw_bytes_per_cycle", 64);
    trace_model_set_config_take(m, cfg);
    uint32_t te = trace_model_track(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, 0);
    uint32_t dma = trace_model_track(m, "sip0.cube0.pe0.pe_dma", TRACE_ENGINE_DMA, 0);
    uint32_t gemm = trace_model_intern(m, "gemm", 4), rd = trace_model_intern(m, "dma_read", 8);
    uint64_t t = 0;
    for (int l = 0; l < LAUNCHES; l++) {
        for (int i = 0; i < 6; i++) {
            uint64_t d = (l * 6 + i) % 13 == 0 ? 2000 : 100;
            t += (l % 17 == 0 && i == 3) ? 5000 : 10;
            op(m, te, gemm, t, t + d, l);
            t += d;
        }
        uint64_t ev = op(m, dma, rd, t, t + 1024, l);
        trace_model_add_transfer(
            m, &(struct trace_transfer){.bytes = l % 7 ? 4096 : 262144, .event = (uint32_t)ev});
        t += 1024;
    }
    trace_model_finish(m);
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    struct trace_anomalies a[2];
    for (unsigned k = 0; k < 2; k++) {
        o.threads = k + 1;
        trace_anomalies_find(m, &o, &a[k]);
    }
    int bad = a[0].n != a[1].n || !a[0].found[TRACE_ANOMALY_BANDWIDTH] ||
              !a[0].found[TRACE_ANOMALY_SLOW_OP] || !a[0].found[TRACE_ANOMALY_IDLE_GAP];
    for (size_t i = 0; !bad && i < a[0].n; i++)
        bad = !trace_anomaly_same(&a[0].v[i], &a[1].v[i]);
    /* on a worker, cancelled from here while both its threads read */
    struct job j = {.m = m};
    pthread_t th;
    if (pthread_create(&th, NULL, find, &j) != 0)
        return 1;
    nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
    atomic_store(&j.p.cancel, true);
    pthread_join(th, NULL);
    trace_anomalies_fini(&j.a);
    if (bad)
        fprintf(stderr, "anomaly_tsan: the anomalies differ (or a kind is missing)\n");
    else
        printf("anomaly_tsan: %zu anomalies, the same on one thread and on two\n", a[0].n);
    trace_anomalies_fini(&a[0]);
    trace_anomalies_fini(&a[1]);
    trace_model_free(m);
    return bad;
}
