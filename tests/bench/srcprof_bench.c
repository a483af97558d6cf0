/*
 * The source pane's line profile of a big trace: a model of EVENTS ops generated in memory
 * (8 PEs of 3 engines, 60 kernel launches of two kernels named by their markers, each PE
 * issuing a 12-line loop body, so every op carries a call site), then the time of the
 * profile the pane computes when it opens (trace_srcprof_new: target <= 1 s), of the
 * per-PE markers it draws (the line of each PE's latest op, trace_srcstep) and of a step by
 * line on the saved trace, medians of RUNS, wall and CPU time. Usage: srcprof_bench
 * [EVENTS] (default 10 million).
 */
#include "sim/data/value.h"
#include "trace/analysis/srcprof.h"
#include "trace/analysis/srcstep.h"
#include "trace/model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { RUNS = 3, PES = 8, ENGINES = 3, LINES = 12, LAUNCHES = 60 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static struct trace_model *generate(uint64_t n)
{
    struct trace_model *m = trace_model_new();
    static const char *const eng_name[ENGINES] = {"pe_dma", "pe_gemm", "pe_math"};
    static const enum trace_engine eng[ENGINES] = {TRACE_ENGINE_DMA, TRACE_ENGINE_TE,
                                                   TRACE_ENGINE_VE};
    uint32_t track[PES][ENGINES];
    for (int p = 0; p < PES; p++)
        for (int e = 0; e < ENGINES; e++) {
            char name[64];
            snprintf(name, sizeof(name), "sip0.cube%d.pe%d.%s", p / 4, p % 4, eng_name[e]);
            track[p][e] = trace_model_track(m, name, eng[e], p * ENGINES + e);
        }
    uint16_t site[2][LINES];
    for (int k = 0; k < 2; k++) {
        const char *file = k ? "attention.c" : "matmul.c";
        uint32_t f = trace_model_intern(m, file, strlen(file));
        uint32_t fn = trace_model_intern(m, k ? "attention" : "matmul", k ? 9 : 6);
        for (int l = 0; l < LINES; l++)
            site[k][l] = trace_model_site(m, f, fn, (uint32_t)(40 + 2 * l));
    }
    uint32_t op[ENGINES];
    op[0] = trace_model_intern(m, "dma_read", 8);
    op[1] = trace_model_intern(m, "gemm", 4);
    op[2] = trace_model_intern(m, "exp", 3);
    uint64_t per_launch = n / LAUNCHES + 1, t = 0;
    for (uint64_t i = 0; i < n; i++) {
        int32_t launch = (int32_t)(i / per_launch);
        int k = launch % 2;
        if (i % per_launch == 0) { /* the launch's begin marker names its kernel */
            struct sim_value *d = sim_value_map();
            sim_value_map_set_str(d, "kernel", k ? "attention" : "matmul");
            sim_value_map_set_int(d, "cmdq_id", launch);
            const char *mk = k ? "attention.begin" : "matmul.begin";
            struct trace_marker mark = {t, trace_model_intern(m, mk, strlen(mk)), UINT32_MAX, d};
            trace_model_add_marker(m, &mark);
        }
        int p = (int)(i % PES), l = (int)((i / PES) % LINES), e = l % ENGINES;
        struct trace_event ev = {
            .start = t,
            .end = t + 10 + (uint64_t)l,
            .track = track[p][e],
            .op = op[e],
            .layer = TRACE_NO_STR,
            .tile = TRACE_NO_STR,
            .cmdq_id = launch,
            .op_kind = e == 0   ? TRACE_KIND_MEMORY
                       : e == 1 ? TRACE_KIND_GEMM
                                : TRACE_KIND_MATH,
            .site = site[k][l],
        };
        trace_model_add_event(m, &ev);
        if (p == PES - 1)
            t += 12;
    }
    trace_model_finish(m);
    return m;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    double g0 = now_s();
    struct trace_model *m = generate(n);
    printf("model            %llu events generated in %.1f s\n",
           (unsigned long long)trace_model_event_count(m), now_s() - g0);
    double wall[RUNS], cpu[RUNS], mk[RUNS], step[RUNS];
    uint64_t ops = 0;
    for (int r = 0; r < RUNS; r++) {
        double w0 = now_s(), c0 = cpu_s();
        struct trace_srcprof *p = trace_srcprof_new(m);
        wall[r] = now_s() - w0;
        cpu[r] = cpu_s() - c0;
        ops = 0;
        for (size_t k = 0; k < p->nk; k++)
            ops += p->k[k].ops;
        trace_srcprof_free(p);
        w0 = now_s();
        uint64_t seen = 0;
        for (uint32_t t = 0; t < trace_model_track_count(m); t++)
            seen += trace_srcstep_track_last(m, t, trace_model_t_max(m) / 2) != UINT64_MAX;
        mk[r] = now_s() - w0;
        w0 = now_s();
        uint64_t from = trace_srcstep_last(m, "sip0.cube1.pe2", trace_model_t_max(m) / 2);
        uint64_t to =
            trace_srcstep_next(m, "sip0.cube1.pe2", from, trace_model_event(m, from)->site);
        step[r] = now_s() - w0;
        if (seen != trace_model_track_count(m) || to == UINT64_MAX)
            return 1;
    }
    qsort(wall, RUNS, sizeof(double), cmp_d);
    qsort(cpu, RUNS, sizeof(double), cmp_d);
    qsort(mk, RUNS, sizeof(double), cmp_d);
    qsort(step, RUNS, sizeof(double), cmp_d);
    printf("line profile     %.3f s (cpu %.3f s), %llu ops on their lines, median of %d "
           "(target <= 1 s: %s)\n",
           wall[RUNS / 2], cpu[RUNS / 2], (unsigned long long)ops, RUNS,
           wall[RUNS / 2] <= 1.0 ? "ok" : "MISSED");
    printf("PE markers       %.6f s (the line of each of %zu tracks' latest op)\n", mk[RUNS / 2],
           trace_model_track_count(m));
    printf("step by line     %.6f s (a PE to its next line, on the saved trace)\n", step[RUNS / 2]);
    trace_model_free(m);
    return ops == n ? 0 : 1;
}
