/*
 * What recording the kernels' call sites costs: a headless llm_decode:layers=32,gen=256 run
 * of the npuscope binary against the same run of a binary built with the call sites
 * compiled out (tl.h's TL_NO_SITES: every tl call straight to its function, no site
 * interned, op records with site 0), both in this invocation, alternating, medians of RUNS
 * runs each: the wall time's overhead (target <= 3%) and the peak RSS difference per op
 * record (target <= 4 bytes). Usage: srcsite_bench NPUSCOPE NPUSCOPE_NOSITES.
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

static const char *const SPEC = "llm_decode:layers=32,gen=256";

struct result {
    double wall_s, rss_mb, records;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `bin run --headless -k SPEC`, its stdout read for the op records; fill r. 0 or -1. */
static int run(const char *bin, struct result *r)
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
        execl(bin, bin, "run", "--headless", "-k", SPEC, (char *)NULL);
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
            len = 0; /* the summary's first lines come first */
    }
    out[len] = '\0';
    close(fd[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "srcsite_bench: %s failed\n", bin);
        return -1;
    }
    r->wall_s = now_s() - t0;
    r->rss_mb = (double)ru.ru_maxrss / 1024.0;
    const char *p = strstr(out, "op records");
    r->records = p ? strtod(p + strlen("op records"), NULL) : 0;
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *verdict(int ok)
{
    return ok ? "ok" : "MISSED";
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: srcsite_bench NPUSCOPE NPUSCOPE_NOSITES\n");
        return 2;
    }
    double wall[2][RUNS], rss[2][RUNS], records[2] = {0, 0};
    for (int i = 0; i < RUNS; i++)
        for (int s = 0; s < 2; s++) { /* alternating, so a slow spell hits both */
            struct result r;
            if (run(argv[1 + s], &r) < 0)
                return 1;
            wall[s][i] = r.wall_s;
            rss[s][i] = r.rss_mb;
            records[s] = r.records;
        }
    for (int s = 0; s < 2; s++) {
        qsort(wall[s], RUNS, sizeof(double), cmp);
        qsort(rss[s], RUNS, sizeof(double), cmp);
    }
    double w = wall[0][RUNS / 2], w0 = wall[1][RUNS / 2];
    double m = rss[0][RUNS / 2], m0 = rss[1][RUNS / 2];
    double over = (w - w0) / w0 * 100;
    printf("%s headless, medians of %d: with call sites %.2f s, without %.2f s: %+.1f%% "
           "(target <= 3%%: %s)\n",
           SPEC, RUNS, w, w0, over, verdict(over <= 3));
    if (records[0] != records[1] || records[0] <= 0) {
        fprintf(stderr, "srcsite_bench: the two runs made %.0f and %.0f op records\n", records[0],
                records[1]);
        return 1;
    }
    double per = (m - m0) * 1024 * 1024 / records[0];
    printf("%s headless: peak RSS %.1f MB with call sites, %.1f MB without: %+.2f bytes per op "
           "record over %.0f records (target <= 4: %s)\n",
           SPEC, m, m0, per, records[0], verdict(per <= 4));
    return 0;
}
