/*
 * Opening a saved trace: the first open (the JSON parsed, the index written), the reopen
 * (the model rebuilt from the index in $XDG_CACHE_HOME/npuscope/), the open without the
 * cache, each with its peak RSS, and `npuscope summary` of the same trace from its JSON
 * (--no-cache) and from its index (wall time and peak RSS of the binary). The trace is an
 * llm_decode run the bench writes with the binary (usage: open_bench NPUSCOPE [SPEC]; default
 * llm_decode:layers=8,gen=64, about 0.6 M events and 330 MB). Every measured open is a child
 * process, so its peak RSS is its own; medians of RUNS. Prints one line per figure, with the
 * per-event cost and what it comes to at 10 M events.
 *
 * `open_bench --open TRACE [--no-cache]` opens one given trace once, in this process, as
 * `npuscope view` does, and prints the open's wall and CPU time to a usable model (of all
 * threads, and of the opening thread alone: the wall time of an open on two idle cores, when
 * the thread parsing ahead keeps ahead), how the index served, the resident memory after the
 * open and the model's bytes per event; then, on a first open, the time of the index written
 * after it (the viewer writes it behind its first frame) and the whole: a big trace measured
 * without a run.
 */
#include "trace/cache/index.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 3 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Run fn(arg) or argv in a child; its wall time and peak RSS (MB). 0, or -1 on failure. */
static int child(int (*fn)(const char *), const char *arg, char *const argv[], double *wall,
                 double *rss)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (fn)
            _exit(fn(arg) == 0 ? 0 : 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    *wall = now_s() - t0;
    *rss = (double)ru.ru_maxrss / 1024.0;
    return 0;
}

static int open_cached(const char *path)
{
    struct trace_model *m;
    struct diag d;
    enum trace_index_use u;
    if (trace_index_load(path, false, &m, NULL, &u, &d, NULL) < 0) {
        fprintf(stderr, "open_bench: %s\n", d.msg);
        return -1;
    }
    trace_model_free(m);
    return u == TRACE_INDEX_HIT || u == TRACE_INDEX_WRITTEN ? 0 : -1;
}

static int open_plain(const char *path)
{
    struct trace_model *m;
    struct diag d;
    if (trace_index_load(path, true, &m, NULL, NULL, &d, NULL) < 0)
        return -1;
    trace_model_free(m);
    return 0;
}

static uint64_t events_of(const char *path)
{
    struct trace_model *m;
    struct diag d;
    if (trace_index_load(path, false, &m, NULL, NULL, &d, NULL) < 0)
        return 0;
    uint64_t n = trace_model_event_count(m);
    trace_model_free(m);
    return n;
}

static void report(const char *what, double *wall, double *rss, uint64_t events)
{
    qsort(wall, RUNS, sizeof(double), cmp);
    qsort(rss, RUNS, sizeof(double), cmp);
    double w = wall[RUNS / 2], r = rss[RUNS / 2];
    printf("  %-28s %8.3f s %8.1f MB peak RSS   %6.2f us/event, %6.1f B/event"
           "   (at 10 M events: %.1f s)\n",
           what, w, r, w / (double)events * 1e6, r * 1048576.0 / (double)events,
           w / (double)events * 1e7);
}

/* CPU seconds of the process (all threads), or of the calling thread alone. */
static double cpu_of(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Resident memory now (MB), from /proc/self/statm. */
static double rss_now_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

/* --open TRACE [--no-cache]: one open of a given trace, measured in this process: the time
 * to a model the viewer can show (trace_index_load_later, as `npuscope view` opens), then
 * the index written from it on its thread (as the viewer does after its first frame). */
static int open_one(const char *path, bool no_cache)
{
    static const char *uses[] = {"unused", "hit", "written", "rebuilt", "failed"};
    struct trace_model *m;
    struct diag d;
    enum trace_index_use u;
    struct trace_index_job *job;
    double w0 = now_s(), c0 = cpu_of(RUSAGE_SELF), t0 = cpu_of(RUSAGE_THREAD);
    if (trace_index_load_later(path, no_cache, &m, NULL, &u, &d, NULL, &job) < 0) {
        fprintf(stderr, "open_bench: %s\n", d.msg);
        return 1;
    }
    double w = now_s() - w0, c = cpu_of(RUSAGE_SELF) - c0, t = cpu_of(RUSAGE_THREAD) - t0,
           rss = rss_now_mb();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t n = trace_model_event_count(m);
    printf("open_bench: %s: %llu events, index %s: model usable in %.3f s wall, %.3f s CPU "
           "(%.3f s on the opening thread), RSS %.1f MB (%.1f B/event), peak %.1f MB, model "
           "%.1f B/event\n",
           path, (unsigned long long)n, uses[u], w, c, t, rss,
           n ? rss * 1048576.0 / (double)n : 0.0, (double)ru.ru_maxrss / 1024.0,
           n ? (double)trace_model_event_bytes(m) / (double)n : 0.0);
    if (job) {
        double j0 = now_s(), jc0 = cpu_of(RUSAGE_SELF);
        int rc = trace_index_job_start(job, m);
        if (rc == 0)
            rc = trace_index_job_finish(job, &d);
        else
            trace_index_job_finish(job, NULL);
        double jw = now_s() - j0, jc = cpu_of(RUSAGE_SELF) - jc0;
        getrusage(RUSAGE_SELF, &ru);
        printf("open_bench: then the index %s in %.3f s wall, %.3f s CPU (on its own thread);"
               " first open in all %.3f s wall, %.3f s CPU, peak %.1f MB\n",
               rc == 0 ? "written" : "not written", jw, jc, w + jw, c + jc,
               (double)ru.ru_maxrss / 1024.0);
        if (rc < 0)
            fprintf(stderr, "open_bench: %s\n", d.msg);
    }
    trace_model_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--open") == 0)
        return open_one(argv[2], argc > 3 && strcmp(argv[3], "--no-cache") == 0);
    if (argc < 2) {
        fprintf(stderr, "usage: open_bench NPUSCOPE [SPEC]\n");
        return 2;
    }
    const char *bin = argv[1], *spec = argc > 2 ? argv[2] : "llm_decode:layers=8,gen=64";
    char dir[] = "/tmp/npuscope-open-bench.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char path[256], cache[256], cmd[1024];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    snprintf(cache, sizeof(cache), "%s/cache", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    int status = 1;
    char run[] = "run", headless[] = "--headless", k[] = "-k", o[] = "-o";
    char *gen[] = {(char *)bin, run, headless, k, (char *)spec, o, path, NULL};
    double w[RUNS], r[RUNS], gw, gr;
    if (child(NULL, NULL, gen, &gw, &gr) < 0) {
        fprintf(stderr, "open_bench: %s run -k %s failed\n", bin, spec);
        goto out;
    }
    struct stat st;
    stat(path, &st);
    uint64_t events = events_of(path);
    printf("open_bench: %s: %llu events, %.0f MB of JSON (written in %.1f s)\n", spec,
           (unsigned long long)events, (double)st.st_size / 1048576.0, gw);
    if (!events)
        goto out;
    char *idx = trace_index_path(path);
    for (int i = 0; i < RUNS; i++) {
        unlink(idx);
        if (child(open_cached, path, NULL, &w[i], &r[i]) < 0)
            goto out_idx;
    }
    report("first open (index written)", w, r, events);
    for (int i = 0; i < RUNS; i++)
        if (child(open_cached, path, NULL, &w[i], &r[i]) < 0)
            goto out_idx;
    report("reopen (from the index)", w, r, events);
    stat(idx, &st);
    printf("  %-28s %8.1f MB, %.1f B/event\n", "index size", (double)st.st_size / 1048576.0,
           (double)st.st_size / (double)events);
    for (int i = 0; i < RUNS; i++)
        if (child(open_plain, path, NULL, &w[i], &r[i]) < 0)
            goto out_idx;
    report("open without the cache", w, r, events);
    char summary[] = "summary", no_cache[] = "--no-cache";
    char *sum_plain[] = {(char *)bin, summary, no_cache, path, NULL};
    for (int i = 0; i < RUNS; i++)
        if (child(NULL, NULL, sum_plain, &w[i], &r[i]) < 0)
            goto out_idx;
    report("summary --no-cache", w, r, events);
    char *sum[] = {(char *)bin, summary, path, NULL};
    for (int i = 0; i < RUNS; i++)
        if (child(NULL, NULL, sum, &w[i], &r[i]) < 0)
            goto out_idx;
    report("summary (from the index)", w, r, events);
    status = 0;
out_idx:
    free(idx);
out:
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        status = 1;
    if (status)
        fprintf(stderr, "open_bench: failed\n");
    return status;
}
