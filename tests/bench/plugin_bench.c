/*
 * What calling the kernel API from a plug-in costs: the same kernel run built in and built as
 * a plug-in (a copy of its source in a shared object loaded through its descriptor, as
 * `npuscope run --plugin` does; plugin_bench.sh builds the copies), engine events per CPU
 * second of each (the process's CPU time: what other processes on the shared machine disturb
 * least; per wall second too), the runs of both interleaved, medians of RUNS runs, and the
 * ratio of the CPU rates (target: within 3%; "MISSED" otherwise), and of the fastest runs
 * of each (the least disturbed). Usage: plugin_bench PLUGIN.so... -- BUILTIN_SPEC PLUGIN_SPEC [...]
 * (pairs of kernel specs). The binary exports its symbols (-rdynamic) for the plug-ins.
 */
#include "sim/host/run.h"
#include "sim/kernel/loader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNS = 7 };

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run of spec to its end: events per CPU second, and per wall second into *wall (the
 * run's setup apart). */
static double run_once(const char *spec, uint64_t *events, double *wall)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    if (sim_run_new(&ro, &r, &d) < 0) {
        fprintf(stderr, "plugin_bench: %s: %s\n", spec, d.msg);
        exit(1);
    }
    sim_run_timing_only(r); /* as npuscope run does without --verify */
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    while (!sim_run_over(r))
        sim_run_advance(r, SIM_RUN_EVENTS, 100000);
    double c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0, w = clock_s(CLOCK_MONOTONIC) - w0;
    *events = sim_engine_events(sim_chip_engine(sim_run_chip(r)));
    sim_run_free(r);
    *wall = (double)*events / w;
    return (double)*events / c;
}

int main(int argc, char **argv)
{
    int i = 1;
    struct diag d;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (sim_plugin_load(argv[i], &d) < 0) {
            fprintf(stderr, "plugin_bench: %s: %s\n", d.file, d.msg);
            return 1;
        }
    if (i < argc)
        i++;
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: plugin_bench PLUGIN.so... -- BUILTIN_SPEC PLUGIN_SPEC...\n");
        return 2;
    }
    for (; i + 1 < argc; i += 2) {
        const char *spec[2] = {argv[i], argv[i + 1]};
        double rate[2][RUNS], wall[2][RUNS];
        uint64_t events[2] = {0, 0};
        for (int k = 0; k < RUNS; k++) /* interleaved: the machine's drift hits both alike */
            for (int s = 0; s < 2; s++)
                rate[s][k] = run_once(spec[s], &events[s], &wall[s][k]);
        if (events[0] != events[1]) {
            fprintf(stderr, "plugin_bench: %s ran %llu events, %s %llu: not the same kernel\n",
                    spec[0], (unsigned long long)events[0], spec[1], (unsigned long long)events[1]);
            return 1;
        }
        double med[2], wmed[2];
        for (int s = 0; s < 2; s++) {
            qsort(rate[s], RUNS, sizeof(double), cmp_double);
            qsort(wall[s], RUNS, sizeof(double), cmp_double);
            med[s] = rate[s][RUNS / 2];
            wmed[s] = wall[s][RUNS / 2];
        }
        double ratio = med[1] / med[0], best = rate[1][RUNS - 1] / rate[0][RUNS - 1];
        printf("%-42s built in %7.3f M events/CPU s (%.3f M/wall s; median of %d, %llu "
               "events)\n",
               spec[0], med[0] / 1e6, wmed[0] / 1e6, RUNS, (unsigned long long)events[0]);
        printf("%-42s plug-in  %7.3f M events/CPU s (%.3f M/wall s)\n", spec[1], med[1] / 1e6,
               wmed[1] / 1e6);
        printf("plug-in / built in: %.3f (%+.1f%%; target within 3%%: %s); fastest runs %.3f\n",
               ratio, 100 * (ratio - 1), fabs(ratio - 1) <= 0.03 ? "ok" : "MISSED", best);
    }
    return 0;
}
