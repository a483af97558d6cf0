/*
 * What serving costs a run (make bench): the wall time of a long LLM decode headless with a
 * trace file, served with nobody watching (--listen), and served with a viewer that says
 * hello and then never reads (the worst a viewer can do: the run must not wait for it).
 * Medians of RUNS rounds of the three; "MISSED" when serving costs more than 10%. Usage:
 * serve_bench NPUSCOPE.
 */
#include "trace/proto.h"
#include "tui/runsock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 3 };
#define SPEC "llm_decode:layers=32,gen=256"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run npuscope with mode "headless", "served" or "stuck"; returns the wall time or -1. */
static double run(const char *bin, const char *mode, const char *dir)
{
    char trace[300], sock[300];
    snprintf(trace, sizeof(trace), "%s/t.json", dir);
    snprintf(sock, sizeof(sock), "%s/r.sock", dir);
    char listen[320];
    snprintf(listen, sizeof(listen), "--listen=%s", sock);
    unlink(sock);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        if (strcmp(mode, "headless") == 0)
            execl(bin, bin, "run", "--headless", "-k", SPEC, "-o", trace, (char *)NULL);
        else
            execl(bin, bin, "run", "--headless", listen, "-k", SPEC, "-o", trace, (char *)NULL);
        _exit(127);
    }
    int fd = -1;
    if (strcmp(mode, "stuck") == 0) {
        struct diag d;
        for (int i = 0; i < 1000 && fd < 0; i++) {
            struct stat st;
            if (lstat(sock, &st) == 0 && tui_runsock_connect(sock, &fd, &d) == 0)
                break;
            fd = -1;
            usleep(1000);
        }
        if (fd >= 0) {
            struct trace_wire_buf b = {0};
            struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, TRACE_ROLE_VIEWER};
            trace_proto_put_hello(&b, &h);
            if (write(fd, b.p, b.len) != (ssize_t)b.len)
                fprintf(stderr, "serve_bench: hello not sent\n");
            trace_wire_buf_fini(&b);
        }
    }
    int status;
    if (fd >= 0) {
        /* the run ends once it has finished and nobody watches: leave once it finished */
        for (;;) {
            if (waitpid(pid, &status, WNOHANG) == pid)
                break;
            struct stat st;
            if (stat(trace, &st) == 0 && st.st_size > 0) {
                close(fd);
                fd = -1;
                waitpid(pid, &status, 0);
                break;
            }
            usleep(1000);
        }
    } else {
        waitpid(pid, &status, 0);
    }
    if (fd >= 0)
        close(fd);
    double t = now_s() - t0;
    unlink(trace);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t)
{
    qsort(t, RUNS, sizeof(t[0]), cmp);
    return t[RUNS / 2];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: serve_bench NPUSCOPE\n");
        return 2;
    }
    char dir[] = "/tmp/npuscope-serve-bench.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    /* the three in turn, round after round: a machine whose load drifts weighs on each alike */
    double th[RUNS], ts[RUNS], tk[RUNS];
    for (int i = 0; i < RUNS; i++) {
        th[i] = run(argv[1], "headless", dir);
        ts[i] = run(argv[1], "served", dir);
        tk[i] = run(argv[1], "stuck", dir);
        if (th[i] < 0 || ts[i] < 0 || tk[i] < 0) {
            rmdir(dir);
            fprintf(stderr, "serve_bench: a run failed\n");
            return 1;
        }
    }
    rmdir(dir);
    double h = median(th), s = median(ts), k = median(tk);
    printf("run -k %s -o\n", SPEC);
    printf("headless:                          %.3f s\n", h);
    printf("served, nobody watching:           %.3f s (%+.1f%%)%s\n", s, 100 * (s / h - 1),
           s > h * 1.10 ? "  MISSED (at most +10%)" : "");
    printf("served, a viewer that never reads: %.3f s (%+.1f%%)%s\n", k, 100 * (k / h - 1),
           k > h * 1.10 ? "  MISSED (at most +10%)" : "");
    return 0;
}
