/*
 * Real-size runs of the npuscope binary, as a user runs them: wall time, engine events per
 * second (of wall time, and of CPU time: user + system, what a loaded machine changes
 * least) and peak RSS (the child's getrusage) of a long LLM decode headless without and
 * with a trace file, the memory each op record costs (the RSS difference between two sizes
 * over the difference in records), and the bare engine's events per second measured in the
 * same invocation as the baseline. Medians of RUNS runs. Usage: realsize_bench NPUSCOPE
 * [ENGINE_BENCH]; prints one line per figure, and "MISSED" where a target is not met.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 3 };

struct result {
    double wall_s;
    double cpu_s; /* the child's user + system time */
    double rss_mb;
    double events, records;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A number after "label" in text, or -1. */
static double field(const char *text, const char *label)
{
    const char *p = strstr(text, label);
    return p ? strtod(p + strlen(label), NULL) : -1;
}

/* Run argv with stdout captured; fill r. Returns 0, or -1 when it failed. */
static int run(char *const argv[], struct result *r)
{
    int fd[2];
    if (pipe(fd) < 0)
        return -1;
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    static char out[1 << 16];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd[0], out + len, sizeof(out) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len == sizeof(out) - 1)
            len = 0; /* only the summary's first lines matter; they come first */
    }
    out[len] = '\0';
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "realsize_bench: %s failed\n", argv[0]);
        return -1;
    }
    r->wall_s = now_s() - t0;
    r->rss_mb = (double)ru.ru_maxrss / 1024.0;
    r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    r->events = field(out, "events           ");
    r->records = field(out, "op records       ");
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall time and RSS of runs runs of `npuscope run --headless [-c chip] -k spec
 * [-o trace]`. */
static int measure_on(const char *bin, const char *chip, const char *spec, const char *trace,
                      int runs, struct result *med)
{
    double wall[RUNS], rss[RUNS], cpu[RUNS];
    struct result r = {0};
    for (int i = 0; i < runs; i++) {
        char o[] = "-o", cmd[] = "run", headless[] = "--headless", k[] = "-k", c[] = "-c";
        char *argv[10], **a = argv;
        *a++ = (char *)bin, *a++ = cmd, *a++ = headless;
        if (chip)
            *a++ = c, *a++ = (char *)chip;
        *a++ = k, *a++ = (char *)spec;
        if (trace)
            *a++ = o, *a++ = (char *)trace;
        *a = NULL;
        if (run(argv, &r) < 0)
            return -1;
        wall[i] = r.wall_s;
        rss[i] = r.rss_mb;
        cpu[i] = r.cpu_s;
    }
    qsort(wall, (size_t)runs, sizeof(double), cmp);
    qsort(rss, (size_t)runs, sizeof(double), cmp);
    qsort(cpu, (size_t)runs, sizeof(double), cmp);
    *med = r;
    med->cpu_s = cpu[runs / 2];
    med->wall_s = wall[runs / 2];
    med->rss_mb = rss[runs / 2];
    return 0;
}

static int measure(const char *bin, const char *spec, const char *trace, struct result *med)
{
    return measure_on(bin, NULL, spec, trace, RUNS, med);
}

static const char *verdict(int ok)
{
    return ok ? "ok" : "MISSED";
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: realsize_bench NPUSCOPE [ENGINE_BENCH]\n");
        return 2;
    }
    const char *bin = argv[1];
    char trace[] = "/tmp/npuscope-bench-XXXXXX.json";
    int tfd = mkstemps(trace, 5);
    if (tfd < 0)
        return 1;
    close(tfd);

    /* the baseline: the bare engine on a timeout-only model, in this invocation */
    double engine_evs = 0;
    if (argc > 2) {
        double v[RUNS];
        for (int i = 0; i < RUNS; i++) {
            FILE *p = popen(argv[2], "r");
            char line[512] = "", last[512] = "";
            while (p && fgets(line, sizeof(line), p))
                strcpy(last, line);
            if (p)
                pclose(p);
            v[i] = field(last, "ev_per_s=");
        }
        qsort(v, RUNS, sizeof(double), cmp);
        engine_evs = v[RUNS / 2];
        printf("baseline: the bare engine, %.2f M events/s\n", engine_evs / 1e6);
    }

    const char *small = "llm_decode:layers=32,gen=64", *big = "llm_decode:layers=32,gen=256";
    struct result s, b, bo;
    if (measure(bin, small, NULL, &s) < 0 || measure(bin, big, NULL, &b) < 0 ||
        measure(bin, big, trace, &bo) < 0) {
        unlink(trace);
        return 1;
    }
    unlink(trace);
    double evs = b.events / b.wall_s;
    printf("%s headless: %.0f op records, %.2f M events in %.2f s: %.2f M events/s "
           "(target >= 5: %s)",
           big, b.records, b.events / 1e6, b.wall_s, evs / 1e6, verdict(evs >= 5e6));
    if (engine_evs > 0)
        printf(", %.1fx slower than the bare engine", engine_evs / evs);
    printf("\n");
    double cpu_evs = b.events / b.cpu_s, cpu_evs_o = bo.events / bo.cpu_s;
    printf("%s headless: %.2f M events per CPU second (%.2f s user + system; target >= 5: %s); "
           "with -o: %.2f (%.2f s)\n",
           big, cpu_evs / 1e6, b.cpu_s, verdict(cpu_evs >= 5e6), cpu_evs_o / 1e6, bo.cpu_s);
    printf("%s headless: peak RSS %.1f MB (target <= 150: %s)\n", big, b.rss_mb,
           verdict(b.rss_mb <= 150));
    printf("%s headless -o: peak RSS %.1f MB (target <= 200: %s), %.2f s, %.2fx the run "
           "without a trace\n",
           big, bo.rss_mb, verdict(bo.rss_mb <= 200), bo.wall_s, bo.wall_s / b.wall_s);
    double per = (b.rss_mb - s.rss_mb) * 1024 * 1024 / (b.records - s.records);
    printf("memory per op record, timing only: %.1f bytes (%s, %.0f vs %.0f records; target "
           "<= 100: %s)\n",
           per, "peak RSS difference", b.records, s.records, verdict(per <= 100));

    /* a Llama-7B-shaped decode step: 13 GB of f16 weights sharded over four cubes */
    const char *llama = "llm_decode:dim=4096,heads=32,ff=11008,layers=32,prompt=128,gen=8,"
                        "dtype=f16,pes=0";
    struct result l;
    if (measure_on(bin, "sim/configs/large.yaml", llama, NULL, 1, &l) < 0)
        return 1;
    printf("Llama-7B shape (-c sim/configs/large.yaml -k %s): %.0f op records, %.1f M events "
           "in %.1f s (%.2f M events/s), peak RSS %.1f MB (target <= 2048: %s)\n",
           llama, l.records, l.events / 1e6, l.wall_s, l.events / l.wall_s / 1e6, l.rss_mb,
           verdict(l.rss_mb <= 2048));
    return 0;
}
