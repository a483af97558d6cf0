/*
 * The analyses of a big trace, as the viewer runs them: the time to load the file (what the
 * viewer waits for before its first frame) and the time of each analysis a key opens the
 * first time (v the verdict, C the critical path of the whole run, y the layers, A the
 * anomalies, T the tokens), with the peak RSS. Medians of RUNS runs of each analysis on one
 * load. Usage: analysis_bench FILE [RUNS [KEYS]] (KEYS: the analyses to time, by key, e.g.
 * "vC"; all by default); prints one line per figure, and "MISSED" where an analysis takes
 * more than a second.
 */
#include "sim/util/xalloc.h"
#include "trace/analysis/regions.h"
#include "trace/analysis/tokens.h"
#include "trace/file/loader.h"
#include "trace/verdict/anomaly.h"
#include "trace/verdict/critpath.h"
#include "trace/verdict/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { MAX_RUNS = 15, PATH_MAX_DECODE = 200000 /* as the Gantt's path */ };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds of this process: on a machine shared with others, what the wall time would be
 * with a core of its own. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void verdict(const struct trace_model *m)
{
    trace_verdict_free(trace_verdict_new(m, NULL));
}

static void critpath(const struct trace_model *m)
{
    uint64_t n = trace_model_event_count(m);
    uint64_t *evs = sim_xreallocarray(NULL, n ? n : 1, sizeof(*evs));
    uint64_t start = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        evs[i] = i;
        uint64_t s = trace_model_event(m, i)->start;
        start = s < start ? s : start;
    }
    struct trace_critpath p;
    struct trace_critpath_input in = {.m = m,
                                      .events = evs,
                                      .n = (size_t)n,
                                      .start = n ? start : 0,
                                      .max_decode = PATH_MAX_DECODE};
    trace_critpath_compute(&in, &p);
    trace_critpath_fini(&p);
    free(evs);
}

static void layers(const struct trace_model *m)
{
    trace_regions_free(trace_regions_new(m, TRACE_REGION_LAYER));
}

static void anomalies(const struct trace_model *m)
{
    struct trace_anomalies a;
    trace_anomalies_find(m, NULL, &a);
    trace_anomalies_fini(&a);
}

static void tokens(const struct trace_model *m)
{
    struct trace_token_profile p;
    trace_token_profile_compute(m, &p);
    trace_token_profile_fini(&p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: analysis_bench FILE [RUNS [KEYS]]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    struct diag d = {0};
    struct trace_model *m = NULL;
    double t0 = now_s(), c0 = cpu_s();
    if (trace_load_file(argv[1], NULL, &m, &d) != 0) {
        fprintf(stderr, "analysis_bench: %s\n", d.msg);
        return 1;
    }
    double load = now_s() - t0, load_cpu = cpu_s() - c0;
    printf("events           %llu\n", (unsigned long long)trace_model_event_count(m));
    printf("load             %.2f s, %.2f s CPU (the view's first frame waits for it)\n", load,
           load_cpu);
    printf("rss after load   %.0f MB\n", peak_rss_mb());
    static const struct {
        char key;
        const char *name;
        void (*fn)(const struct trace_model *);
    } an[] = {{'v', "verdict (v)", verdict},
              {'C', "critical path (C)", critpath},
              {'y', "layers (y)", layers},
              {'A', "anomalies (A)", anomalies},
              {'T', "tokens (T)", tokens}};
    const char *keys = argc > 3 ? argv[3] : "vCyAT";
    for (size_t k = 0; k < sizeof(an) / sizeof(an[0]); k++) {
        if (!strchr(keys, an[k].key))
            continue;
        double t[MAX_RUNS], c[MAX_RUNS];
        for (int r = 0; r < runs; r++) {
            double s = now_s(), cs = cpu_s();
            an[k].fn(m);
            t[r] = now_s() - s;
            c[r] = cpu_s() - cs;
        }
        qsort(t, (size_t)runs, sizeof(t[0]), cmp_d);
        qsort(c, (size_t)runs, sizeof(c[0]), cmp_d);
        double med = t[(runs - 1) / 2], cmed = c[(runs - 1) / 2];
        printf("%-18s %.3f s, %.3f s CPU (medians of %d)%s\n", an[k].name, med, cmed, runs,
               cmed > 1.0 ? "  MISSED: over 1 s" : "");
    }
    printf("peak rss         %.0f MB\n", peak_rss_mb());
    trace_model_free(m);
    return 0;
}
