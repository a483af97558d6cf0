/*
 * The critical path of a live launch as the live verdict keeps it (trace/verdict/critinc.h):
 * a saved trace is opened, its largest launch's events taken in STEPS calls of a growing
 * set, each call with the model's "now" at the least start of the events still to come (as
 * a live model stands when those before have come), and each call timed. Its new events are
 * taken in parts (the default) or, as before parts, all in one; each way in a child process
 * of its own (its peak RSS its own), RUNS times, interleaved; medians. Usage:
 *   critinc_bench TRACE [STEPS] [RUNS]
 * (the trace's index in $XDG_CACHE_HOME is used, or written, as `npuscope view` does).
 */
#include "median.h"
#include "trace/cache/index.h"
#include "trace/model/model.h"
#include "trace/verdict/critinc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_RUNS = 9 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The events of m's launch (command queue, of the first 256) with the most events, into a
 * new array. */
static uint64_t *largest_launch(const struct trace_model *m, size_t *n)
{
    uint64_t nev = trace_model_event_count(m), count[256] = {0};
    for (uint64_t i = 0; i < nev; i++) {
        int32_t q = trace_model_event(m, i)->cmdq_id;
        if (q >= 0 && q < 256)
            count[q]++;
    }
    int32_t best = 0;
    for (int32_t q = 1; q < 256; q++)
        best = count[q] > count[best] ? q : best;
    uint64_t *evs = malloc((count[best] ? count[best] : 1) * sizeof(*evs));
    size_t k = 0;
    for (uint64_t i = 0; i < nev && evs; i++)
        if (trace_model_event(m, i)->cmdq_id == best)
            evs[k++] = i;
    *n = k;
    return evs;
}

/* One way (part: events a part, SIZE_MAX one part), in this process: the calls' total and
 * longest seconds into out[0], out[1]. */
static int grow(const char *path, size_t part, int steps, double out[2])
{
    struct trace_model *m = NULL;
    struct trace_index_counts c;
    struct diag d = {0};
    if (trace_index_load(path, false, &m, &c, NULL, &d, NULL) < 0) {
        fprintf(stderr, "critinc_bench: %s\n", d.msg);
        return 1;
    }
    size_t n;
    uint64_t *evs = largest_launch(m, &n);
    if (!evs || !n) {
        fprintf(stderr, "critinc_bench: %s: no launch\n", path);
        return 1;
    }
    /* each call's now: the least start of the events after it (a saved trace's events come
     * as they ended, not as they started: as a live model stands, none of those to come
     * starts before now) */
    uint64_t *now = malloc((size_t)steps * sizeof(*now)), least = trace_model_t_max(m);
    for (int s = steps; s >= 1 && now; s--) {
        now[s - 1] = least;
        for (size_t i = n * (size_t)(s - 1) / (size_t)steps; i < n * (size_t)s / (size_t)steps;
             i++) {
            uint64_t t = trace_model_event(m, evs[i])->start;
            least = t < least ? t : least;
        }
    }
    struct trace_critinc *st = trace_critinc_new();
    trace_critinc_set_part(st, part);
    out[0] = out[1] = 0;
    for (int s = 1; s <= steps && now; s++) {
        size_t upto = n * (size_t)s / (size_t)steps;
        trace_model_set_now(m, now[s - 1]);
        struct trace_critpath_input in = {
            .m = m, .events = evs, .n = upto, .start = 0, .threads = 1};
        struct trace_critpath p;
        double t0 = now_s();
        trace_critinc_update(st, &in, &p);
        double t = now_s() - t0;
        out[0] += t;
        out[1] = t > out[1] ? t : out[1];
        trace_critpath_fini(&p);
    }
    if (trace_critinc_restarts(st) != 1)
        fprintf(stderr, "critinc_bench: started over %zu times\n", trace_critinc_restarts(st) - 1);
    trace_critinc_free(st);
    free(now);
    free(evs);
    trace_model_free(m);
    return 0;
}

/* One way in a child process: its figures and peak RSS (MB); false when it failed. */
static bool run_child(const char *path, size_t part, int steps, double fig[3])
{
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        double out[2];
        int rc = grow(path, part, steps, out);
        if (rc == 0 && write(fd[1], out, sizeof(out)) != (ssize_t)sizeof(out))
            rc = 1;
        _exit(rc);
    }
    close(fd[1]);
    double out[2];
    bool ok = pid > 0 && read(fd[0], out, sizeof(out)) == (ssize_t)sizeof(out);
    close(fd[0]);
    int status;
    struct rusage ru;
    if (pid <= 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        return false;
    fig[0] = out[0], fig[1] = out[1], fig[2] = (double)ru.ru_maxrss / 1024.0;
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: critinc_bench TRACE [STEPS] [RUNS]\n");
        return 2;
    }
    int steps = argc > 2 ? atoi(argv[2]) : 8, runs = argc > 3 ? atoi(argv[3]) : 3;
    steps = steps < 1 ? 1 : steps;
    runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    static const struct {
        const char *name;
        size_t part;
    } way[2] = {{"in parts", 0}, {"all at once", SIZE_MAX}};
    double fig[2][3][MAX_RUNS];
    for (int r = 0; r < runs; r++)
        for (int w = 0; w < 2; w++) {
            double f[3];
            if (!run_child(argv[1], way[w].part, steps, f)) {
                fprintf(stderr, "critinc_bench: a run failed\n");
                return 1;
            }
            for (int i = 0; i < 3; i++)
                fig[w][i][r] = f[i];
        }
    printf("live launch's path in %d calls (medians of %d):\n", steps, runs);
    double med[2][3];
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < 3; i++)
            med[w][i] = bench_median(fig[w][i], (size_t)runs);
        printf("  new events %-12s %.3f s in all, the longest call %.3f s, peak rss %.0f MB\n",
               way[w].name, med[w][0], med[w][1], med[w][2]);
    }
    printf("  in parts: %.2fx the time, %+.0f MB of peak rss\n",
           med[1][0] > 0 ? med[0][0] / med[1][0] : 0, med[0][2] - med[1][2]);
    return 0;
}
