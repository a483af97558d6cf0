/*
 * The analyses of a big trace, as the viewer runs them: the time to load the file (what the
 * viewer waits for before its first frame) and the time of each analysis a key opens the
 * first time (v the verdict, C the critical path of the launch at the cursor as the Gantt
 * finds it, R the critical path of the whole run, y the layers (and their instances), A the
 * anomalies, T the tokens, / a search over every op, K the line profile of the source pane, M and B
 * the metrics and bandwidth samples the summary pane of the first frame computes), with the peak
 * RSS. Medians of RUNS runs of each analysis on one load. Usage: analysis_bench FILE [RUNS
 * [KEYS]] (KEYS: the analyses to time, by key, e.g. "vC"; all by default); prints one line
 * per figure (each analysis with the CPU of all its threads, and the CPU and page faults of
 * the thread that called it: the fresh pages it touched where the user waits), and "MISSED"
 * where an analysis takes more than a second from its key (the median). C also times
 * the way the Gantt found the launch before (the launch split accounted, twice) and prints
 * the ratio. With ANALYSIS_BENCH_INDEX=1 in the environment the trace is opened through its
 * binary index as `npuscope view` opens it ($XDG_CACHE_HOME/npuscope/, written by the first
 * such run): a second run spends seconds, not a minute, before the analyses. With
 * ANALYSIS_BENCH_DUMP=FILE every figure of the verdict (its doubles exact, its paths' steps
 * hashed) and the paths of C and of the run go to FILE first, to compare two builds. With
 * ANALYSIS_BENCH_STEPS=1 the verdict's last run is also split by the steps its progress names
 * (the time each was the current one, polled every half millisecond from a second thread
 * while this one judges): where a verdict's second goes, for two builds compared step by step.
 * ANALYSIS_BENCH_BUDGET=SIZE sets the memory budget (as `--mem-budget SIZE` does) before the
 * trace is opened: what the budget's give-backs cost the analyses, one budget against another.
 */
#include "sim/util/xalloc.h"
#include "trace/analysis/instances.h"
#include "trace/analysis/metrics.h"
#include "trace/analysis/regions.h"
#include "trace/analysis/srcprof.h"
#include "trace/analysis/tokens.h"
#include "trace/cache/index.h"
#include "trace/file/loader.h"
#include "trace/model/budget.h"
#include "trace/verdict/anomaly.h"
#include "trace/verdict/critpath.h"
#include "trace/verdict/verdict.h"
#include "tui/gantt/gantt.h"
#include "tui/term/view.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { MAX_RUNS = 15 };

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

/* Page faults of the calling thread so far: the fresh pages an analysis touched on the
 * thread the user waits for (those faulted in ahead on another thread are not here), a
 * figure the machine's load does not blur. */
static long thread_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* CPU seconds of the calling thread so far: the part of an analysis the user waits for
 * that a second core cannot take, a figure a busy host blurs less than the wall time. */
static double thread_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static FILE *path_dump; /* where the paths computed go, or NULL (ANALYSIS_BENCH_DUMP) */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* FNV-1a of n bytes at p into h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* One line of what a path holds, its steps hashed. */
static void dump_path(FILE *f, const struct trace_critpath *p)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < p->n; i++) {
        const struct trace_path_step *s = &p->steps[i];
        uint64_t x[6] = {s->ev,
                         s->pred,
                         s->wait,
                         (uint64_t)s->why,
                         (uint64_t)s->range.space,
                         s->range.lo ^ (s->range.hi << 1)};
        h = fnv(h, x, sizeof(x));
    }
    fprintf(f,
            " path n=%zu span=%llu..%llu ops=%llu decoded=%llu a=%d t=%d x=%d tr=%d sp=%u "
            "steps=%016llx\n",
            p->n, (unsigned long long)p->start, (unsigned long long)p->end,
            (unsigned long long)p->ops, (unsigned long long)p->decoded, p->with_addresses,
            p->with_tiles, p->with_explicit, p->truncated, (unsigned)p->spaces.n,
            (unsigned long long)h);
}

/* Every figure of a verdict's item, the doubles exact. */
static void dump_item(FILE *f, const char *what, const struct trace_verdict_item *it)
{
    fprintf(f, "%s running=%d bound=%d link=%u share=%a length=%llu", what, it->running,
            (int)it->bound, it->link, it->share, (unsigned long long)it->length);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        fprintf(f, " busy%d=%a", e, it->busy[e]);
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        fprintf(f, " time%d=%a", k, it->time[k]);
    fprintf(f, " flops=%a peak=%a dram=%llu bw=%a hbm=%a/%u link=%a/%u host=%a/%u waits=%llu",
            it->flops, it->peak_flops, (unsigned long long)it->dram_bytes, it->peak_bw,
            it->hbm_util, it->hbm, it->link_util, it->busiest_link, it->host_util, it->host_link,
            (unsigned long long)it->waits);
    for (int d = 0; d < TRACE_DEP_COUNT; d++)
        fprintf(f, " w%d=%llu", d, (unsigned long long)it->wait_by[d]);
    fprintf(f, " longest=%llu@%llu missing=%u dma=%llu/%llu\n",
            (unsigned long long)it->longest_wait, (unsigned long long)it->longest_wait_ev,
            it->missing, (unsigned long long)it->dma_ops, (unsigned long long)it->dma_bytes);
    dump_path(f, &it->path);
}

static void critpath(const struct trace_model *m);
static void launch_path(const struct trace_model *m, bool accounted);

/* ANALYSIS_BENCH_DUMP=FILE: every figure of the verdict into FILE, to compare two builds. */
static void dump_verdict(const struct trace_model *m, const char *file)
{
    FILE *f = fopen(file, "w");
    if (!f) {
        perror(file);
        return;
    }
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    const struct trace_region *rr = &v->run_region;
    fprintf(f, "run region %llu..%llu ops=%llu busy=%llu rd=%llu wr=%llu\n",
            (unsigned long long)rr->start, (unsigned long long)rr->end,
            (unsigned long long)rr->all.ops, (unsigned long long)rr->all.busy,
            (unsigned long long)rr->all.read_bytes, (unsigned long long)rr->all.write_bytes);
    dump_item(f, "run", &v->run);
    for (size_t i = 0; i < v->nlaunches; i++) {
        const struct trace_region *r = v->launches[i].region;
        char what[64];
        snprintf(what, sizeof(what), "launch %zu cmdq=%d %llu..%llu ops=%llu", i, (int)r->cmdq_id,
                 (unsigned long long)r->start, (unsigned long long)r->end,
                 (unsigned long long)r->all.ops);
        dump_item(f, what, &v->launches[i]);
    }
    trace_verdict_free(v);
    path_dump = f;
    fprintf(f, "launch path (C)\n");
    launch_path(m, false);
    fprintf(f, "run path\n");
    critpath(m);
    path_dump = NULL;
    fclose(f);
}

/* ANALYSIS_BENCH_STEPS: the steps of the last verdict judged, in the order they came, and
 * how long each was the current one (a step met twice adds up). */
enum { MAX_STEPS = 32 };
static bool by_steps;
static struct step_time {
    const char *what; /* a static string (trace_progress_step's) */
    double s;
    double cpu;  /* the worker thread's CPU seconds */
    double sys;  /* ... of which in the kernel */
    long faults; /* its page faults */
} steps[MAX_STEPS];
static size_t nsteps;

/* The judging thread's progress, watched from a second thread: the step it is at and
 * where it was when that step began. */
struct watch {
    struct trace_progress p;
    pthread_t judge; /* the thread judging */
    pid_t tid;       /* ... its id */
    atomic_bool done;
    const char *cur;
    struct step_time at;
};

/* The page faults of thread tid of this process so far, and into *sys its CPU seconds in
 * the kernel (0 when unknown). */
static long faults_of(pid_t tid, double *sys)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* (the name may hold spaces) */
    long minflt = 0, majflt = 0, stime = 0;
    *sys = 0;
    /* after the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
     * cmajflt utime stime (clock ticks) */
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %ld %*u %ld %*u %*u %ld", &minflt,
                     &majflt, &stime) != 3)
        return 0;
    *sys = (double)stime / (double)sysconf(_SC_CLK_TCK);
    return minflt + majflt;
}

/* The CPU seconds of thread th so far (0 when unknown). */
static double cpu_of(pthread_t th)
{
    clockid_t id;
    struct timespec t;
    if (pthread_getcpuclockid(th, &id) != 0 || clock_gettime(id, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Where the judging thread is now. */
static struct step_time step_now(const struct watch *w)
{
    struct step_time t = {.s = now_s(), .cpu = cpu_of(w->judge)};
    t.faults = faults_of(w->tid, &t.sys);
    return t;
}

/* The time, the judging thread's CPU time and page faults from w's step's start to now added
 * to that step's, the next step (what) starting now. */
static void step_add(struct watch *w, const char *what)
{
    struct step_time now = step_now(w);
    size_t k = 0;
    while (k < nsteps && steps[k].what != w->cur)
        k++;
    if (k == nsteps && nsteps < MAX_STEPS)
        steps[nsteps++] = (struct step_time){w->cur, 0, 0, 0, 0};
    if (k < nsteps) {
        steps[k].s += now.s - w->at.s;
        steps[k].cpu += now.cpu - w->at.cpu;
        steps[k].sys += now.sys - w->at.sys;
        steps[k].faults += now.faults - w->at.faults;
    }
    w->cur = what, w->at = now;
}

static void *watch_main(void *arg)
{
    struct watch *w = arg;
    while (!atomic_load(&w->done)) {
        nanosleep(&(struct timespec){0, 500 * 1000}, NULL);
        const char *what = atomic_load(&w->p.what);
        if (what && what != w->cur)
            step_add(w, what);
    }
    return NULL;
}

/* A verdict judged on this thread, as every analysis here is, a second thread noting which
 * step its progress is at. */
static void verdict_by_steps(const struct trace_model *m)
{
    struct watch w = {.judge = pthread_self(), .tid = gettid(), .cur = "(before the first step)"};
    atomic_init(&w.done, false);
    nsteps = 0;
    w.at = step_now(&w);
    pthread_t th;
    bool watched = pthread_create(&th, NULL, watch_main, &w) == 0;
    trace_verdict_free(
        trace_verdict_new(m, &(struct trace_verdict_opts){.progress = &w.p, .step_spans = true}));
    if (!watched)
        return;
    atomic_store(&w.done, true);
    pthread_join(th, NULL);
    step_add(&w, NULL); /* (its last: until it was done) */
}

/* (as the viewer judges a saved trace: with the paths' spans, for the Gantt) */
static void verdict(const struct trace_model *m)
{
    if (by_steps)
        verdict_by_steps(m);
    else
        trace_verdict_free(trace_verdict_new(m, &(struct trace_verdict_opts){.step_spans = true}));
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
                                      /* as the Gantt's path */
                                      .with_details = trace_critpath_details_bounded};
    in.each_ctx = &in.n;
    trace_critpath_compute(&in, &p);
    if (path_dump)
        dump_path(path_dump, &p);
    trace_critpath_fini(&p);
    free(evs);
}

/* The path of the launch at the middle of the run as C finds it: the launch split to find
 * the launch at the cursor and its name, its events, their path. accounted: the split
 * accounted, as C did before. */
static void launch_path(const struct trace_model *m, bool accounted)
{
    uint64_t mid = trace_model_t_max(m) / 2;
    struct trace_regions *rs = accounted ? trace_regions_new(m, TRACE_REGION_LAUNCH)
                                         : trace_regions_new_split(m, TRACE_REGION_LAUNCH);
    int32_t cmdq = TRACE_NO_CMDQ;
    for (size_t r = 0; r < trace_regions_count(rs); r++) {
        const struct trace_region *x = trace_regions_get(rs, r);
        if (x->start <= mid && mid < x->end)
            cmdq = x->cmdq_id;
    }
    if (accounted) /* the viewer now finds the launch and its name from one split */
        trace_regions_free(rs);
    uint64_t n = trace_model_event_count(m), k = 0, start = UINT64_MAX;
    uint64_t *evs = sim_xreallocarray(NULL, n ? n : 1, sizeof(*evs));
    for (uint64_t i = 0; i < n; i++) {
        const struct trace_event *e = trace_model_event(m, i);
        if (cmdq != TRACE_NO_CMDQ && e->cmdq_id != cmdq)
            continue;
        evs[k++] = i;
        start = e->start < start ? e->start : start;
    }
    if (accounted)
        rs = trace_regions_new(m, TRACE_REGION_LAUNCH);
    for (size_t r = 0; r < trace_regions_count(rs); r++)
        if (trace_regions_get(rs, r)->cmdq_id == cmdq)
            start = trace_regions_get(rs, r)->start;
    trace_regions_free(rs);
    struct trace_critpath p;
    struct trace_critpath_input in = {.m = m,
                                      .events = evs,
                                      .n = (size_t)k,
                                      .start = k ? start : 0,
                                      /* as the Gantt's path */
                                      .with_details = trace_critpath_details_bounded};
    in.each_ctx = &in.n;
    trace_critpath_compute(&in, &p);
    if (path_dump)
        dump_path(path_dump, &p);
    trace_critpath_fini(&p);
    free(evs);
}

static void launch_path_now(const struct trace_model *m)
{
    launch_path(m, false);
}

static void launch_path_before(const struct trace_model *m)
{
    launch_path(m, true);
}

/* A search for an op name that matches nothing, from the cursor: every op looked at. */
static void search(const struct trace_model *m)
{
    struct tui_view v;
    tui_view_init(&v, m, false);
    struct tui_gantt *g = tui_gantt_new(&v);
    bool wrapped;
    tui_gantt_search(g, &v, "no-such-op-name", 1, &wrapped);
    tui_gantt_free(g);
}

static void lineprof(const struct trace_model *m)
{
    trace_srcprof_free(trace_srcprof_new(m));
}

/* as the pane computes them: the layer split accounted, then each layer's instances */
static void layers(const struct trace_model *m)
{
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAYER);
    struct trace_instances in;
    trace_instances_compute(rs, &in);
    trace_instances_fini(&in);
    trace_regions_free(rs);
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

/* The summary's metrics (busy time and peak of each engine kind, DRAM traffic, tokens): the
 * metrics pane of the first frame waits for them. */
static void metrics(const struct trace_model *m)
{
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    trace_metrics_fini(&x);
}

/* The summary's bandwidth samples (its DRAM bandwidth line), which the first frame's metrics
 * pane computes beside the metrics. */
static void bandwidth(const struct trace_model *m)
{
    struct trace_bw_sample *smp = NULL;
    trace_metrics_bandwidth(m, 0, &smp);
    free(smp);
}

/* Median wall and CPU seconds of runs runs of fn, and the medians of its calling thread's
 * CPU seconds and page faults. */
static void time_fn(void (*fn)(const struct trace_model *), const struct trace_model *m, int runs,
                    double *med, double *cmed, double *tmed, double *fmed)
{
    double t[MAX_RUNS], c[MAX_RUNS], tc[MAX_RUNS], f[MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        double s = now_s(), cs = cpu_s(), ts = thread_cpu_s();
        long fs = thread_faults();
        fn(m);
        t[r] = now_s() - s;
        c[r] = cpu_s() - cs;
        tc[r] = thread_cpu_s() - ts;
        f[r] = (double)(thread_faults() - fs);
    }
    qsort(t, (size_t)runs, sizeof(t[0]), cmp_d);
    qsort(c, (size_t)runs, sizeof(c[0]), cmp_d);
    qsort(tc, (size_t)runs, sizeof(tc[0]), cmp_d);
    qsort(f, (size_t)runs, sizeof(f[0]), cmp_d);
    *med = t[(runs - 1) / 2];
    *cmed = c[(runs - 1) / 2];
    *tmed = tc[(runs - 1) / 2];
    *fmed = f[(runs - 1) / 2];
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
    const char *budget = getenv("ANALYSIS_BENCH_BUDGET");
    uint64_t budget_bytes;
    if (budget && *budget) {
        if (trace_budget_parse(budget, &budget_bytes) < 0) {
            fprintf(stderr, "analysis_bench: ANALYSIS_BENCH_BUDGET: not a size: %s\n", budget);
            return 2;
        }
        trace_budget_set(budget_bytes);
    }
    double t0 = now_s(), c0 = cpu_s();
    const char *via_index = getenv("ANALYSIS_BENCH_INDEX");
    struct trace_index_counts counts;
    if (via_index && strcmp(via_index, "1") == 0
            ? trace_index_load(argv[1], false, &m, &counts, NULL, &d, NULL) < 0
            : trace_load_file(argv[1], NULL, &m, &d) != 0) {
        fprintf(stderr, "analysis_bench: %s\n", d.msg);
        return 1;
    }
    double load = now_s() - t0, load_cpu = cpu_s() - c0;
    printf("events           %llu\n", (unsigned long long)trace_model_event_count(m));
    printf("load             %.2f s, %.2f s CPU (the view's first frame waits for it)\n", load,
           load_cpu);
    printf("rss after load   %.0f MB\n", peak_rss_mb());
    const char *st = getenv("ANALYSIS_BENCH_STEPS");
    by_steps = st && strcmp(st, "1") == 0;
    const char *dump = getenv("ANALYSIS_BENCH_DUMP");
    if (dump && *dump)
        dump_verdict(m, dump);
    static const struct {
        char key;
        const char *name;
        void (*fn)(const struct trace_model *);
        void (*before)(const struct trace_model *); /* the way it was done before, or NULL */
    } an[] = {{'v', "verdict (v)", verdict, NULL},
              {'C', "path, launch (C)", launch_path_now, launch_path_before},
              {'R', "path, run", critpath, NULL},
              {'y', "layers (y)", layers, NULL},
              {'A', "anomalies (A)", anomalies, NULL},
              {'T', "tokens (T)", tokens, NULL},
              {'/', "search (/)", search, NULL},
              {'K', "line profile (K)", lineprof, NULL},
              {'M', "metrics (frame)", metrics, NULL},
              {'B', "bandwidth (frame)", bandwidth, NULL}};
    const char *keys = argc > 3 ? argv[3] : "vCRyAT/KMB";
    for (size_t k = 0; k < sizeof(an) / sizeof(an[0]); k++) {
        if (!strchr(keys, an[k].key))
            continue;
        double med, cmed, tmed, fmed, bmed, bcmed, btmed, bfmed;
        time_fn(an[k].fn, m, runs, &med, &cmed, &tmed, &fmed);
        printf("%-18s %.3f s, %.3f s CPU (%.3f s and %.0f page faults on its thread; medians of "
               "%d)%s\n",
               an[k].name, med, cmed, tmed, fmed, runs, med > 1.0 ? "  MISSED: over 1 s" : "");
        for (size_t i = 0; by_steps && an[k].key == 'v' && i < nsteps; i++)
            printf("  %-38s %6.1f ms; on its thread %6.1f ms CPU (%5.1f in the kernel), %6ld "
                   "page faults\n",
                   steps[i].what, steps[i].s * 1e3, steps[i].cpu * 1e3, steps[i].sys * 1e3,
                   steps[i].faults);
        if (an[k].before) {
            time_fn(an[k].before, m, runs, &bmed, &bcmed, &btmed, &bfmed);
            printf("%-18s %.3f s, %.3f s CPU before (launch split accounted): %.1fx\n", "", bmed,
                   bcmed, cmed > 0 ? bcmed / cmed : 0);
        }
    }
    printf("peak rss         %.0f MB\n", peak_rss_mb());
    trace_model_free(m);
    return 0;
}
