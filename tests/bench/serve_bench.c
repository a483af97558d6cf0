/*
 * What serving costs a run (make bench): the wall time of a long LLM decode headless with a
 * trace file, served with nobody watching (--listen), and served with a viewer that says
 * hello and then never reads (the worst a viewer can do: the run must not wait for it).
 * Medians of RUNS rounds of the three, wall time and the run's CPU time (user + system,
 * steadier on a shared machine); "MISSED" when serving costs more than 10% of CPU. Usage:
 * serve_bench NPUSCOPE.
 */
#include "trace/wire/proto.h"
#include "tui/source/runsock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* Run npuscope with mode "headless", "served" or "stuck"; returns the wall time or -1, and
 * the CPU time (user + system) the run took in *cpu. */
static double run(const char *bin, const char *mode, const char *dir, double *cpu)
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
    struct rusage ru;
    if (fd >= 0) {
        /* the run ends once it has finished and nobody watches: leave once it finished */
        for (;;) {
            if (wait4(pid, &status, WNOHANG, &ru) == pid)
                break;
            struct stat st;
            if (stat(trace, &st) == 0 && st.st_size > 0) {
                close(fd);
                fd = -1;
                wait4(pid, &status, 0, &ru);
                break;
            }
            usleep(1000);
        }
    } else {
        wait4(pid, &status, 0, &ru);
    }
    if (fd >= 0)
        close(fd);
    double t = now_s() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
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
    static const char *const modes[3] = {"headless", "served", "stuck"};
    double wall[3][RUNS], cpu[3][RUNS];
    for (int i = 0; i < RUNS; i++)
        for (int m = 0; m < 3; m++)
            if ((wall[m][i] = run(argv[1], modes[m], dir, &cpu[m][i])) < 0) {
                rmdir(dir);
                fprintf(stderr, "serve_bench: a run failed\n");
                return 1;
            }
    rmdir(dir);
    static const char *const what[3] = {
        "headless:                         ", "served, nobody watching:          ",
        "served, a viewer that never reads:"};
    double w0 = median(wall[0]), c0 = median(cpu[0]);
    printf("run -k %s -o (medians of %d; CPU: user + system of the run)\n", SPEC, RUNS);
    for (int m = 0; m < 3; m++) {
        double w = median(wall[m]), c = median(cpu[m]);
        printf("%s %8.3f s wall", what[m], w);
        if (m)
            printf(" (%+5.1f%%)", 100 * (w / w0 - 1));
        printf(", %8.3f s CPU", c);
        if (m)
            printf(" (%+5.1f%%)%s", 100 * (c / c0 - 1),
                   c > c0 * 1.10 ? "  MISSED (at most +10% CPU)" : "");
        printf("\n");
    }
    return 0;
}
