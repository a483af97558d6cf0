/*
 * ThreadSanitizer driver for the anomalies' second thread (trace/verdict/anomaly.h; make
 * tsan): launches of gemms, some slow and some after a long gap, and DMA reads, some beyond
 * the DRAM's peak; their anomalies found with the bandwidth windows on a second thread
 * (threads 2) and on one (threads 1): the two lists must agree to the last bit; then on a
 * worker, cancelled from the calling thread while both its threads read. Exit 0 when they
 * agree; any data race between the threads makes ThreadSanitizer report and fail.
 */
#include "tests/unit/anomaly_model.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { LAUNCHES = 4001 };

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
    struct trace_model *m = anomaly_model(LAUNCHES);
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
        bad = !anomaly_same(&a[0].v[i], &a[1].v[i]);
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
