/*
 * The inside of the anomalies (trace/verdict/anomaly.h) that anomaly.c, which finds them over a
 * whole model, shares with anomaly_inc.c, which keeps a growing model's up to date: the lists
 * and tables both use and the steps whose results must be the same. Nothing outside
 * trace/verdict uses it.
 */
#ifndef TRACE_ANOMALY_INT_H
#define TRACE_ANOMALY_INT_H

#include "sim/util/keytab.h"
#include "trace/analysis/metrics.h"
#include "trace/verdict/anomaly.h"

#include <stddef.h>
#include <stdint.h>

struct list {
    struct trace_anomaly *v; /* owned */
    size_t n, cap;
};

/* An op by (engine kind, op name) and duration. */
struct opdur {
    uint64_t key; /* op name << 32 | a HOST track << 8 | engine kind */
    uint64_t dur;
    uint64_t ev;
};

/* Append a to l. */
void trace_anomaly_push_(struct list *l, const struct trace_anomaly *a);
/* The end of an event: in-flight events run until now. */
uint64_t trace_anomaly_ev_end_(const struct trace_model *m, const struct trace_event *ev);
/* The INVALID_TRACE markers into l. */
void trace_anomaly_find_invalid_(const struct trace_model *m, struct list *l);
/* The work op ev does, from its details (0: they do not say). */
double trace_anomaly_work_(const struct trace_model *m, uint64_t ev);
/* The slow ops of one group (count ops, the median and the median op) from its candidates
 * (reordered), slowest first, into l: those slow per unit of work too, one entry per track;
 * group is scratch. work_of_event(ctx, m, ev), when not NULL, gives trace_anomaly_work_'s
 * answer (remembered). */
void trace_anomaly_slow_group_(
    const struct trace_model *m, const struct trace_anomaly_opts *o, size_t count, uint64_t median,
    uint64_t median_ev, struct opdur *cand, size_t nc, struct list *group, struct list *l,
    double (*work_of_event)(void *ctx, const struct trace_model *m, uint64_t ev), void *ctx);
/* The bandwidth windows of m above peak into l, checking pg (may be NULL: when it is
 * cancelled, l is incomplete). */
void trace_anomaly_find_bandwidth_(const struct trace_model *m, const struct trace_anomaly_opts *o,
                                   double peak, struct trace_progress *pg, struct list *l);
/* Keep the most severe max of l's anomalies (0: all), appended to out; l emptied. */
void trace_anomaly_keep_(struct list *out, struct list *l, size_t max);
/* Time order: start, then kind, track, event (for qsort). */
int trace_anomaly_cmp_time_(const void *pa, const void *pb);

#endif
