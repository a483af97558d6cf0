/*
 * Trace I/O benchmark and big-trace generator.
 *
 *   trace_bench gen N FILE      write a realistic N-event trace with the streaming writer
 *   trace_bench load FILE       load and validate FILE once, print time and memory
 *   trace_bench all N DIR       the benchmark: writer MB/s, loader MB/s, peak RSS and
 *                               resident bytes per event on a generated N-event trace,
 *                               next to Python's json.load of the same file; medians
 *
 * Every measured run is a child process, so its peak RSS is its own (wait4's rusage).
 */
#include "sim/util/xalloc.h"
#include "trace/model/format.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"
#include "trace/file/writer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- the generator ------------------------------------------------------------------------ */

enum { SIPS = 2, CUBES = 2, PES = 4 };

/* A trace shaped like a tiled GEMM run: per PE, DMA reads of tiles, GEMMs, math ops and
 * DMA writes, with ADR-0052 params as details. */
static int generate(uint64_t n, const char *path, struct diag *d)
{
    struct sim_value *md = sim_value_map();
    sim_value_map_set_str(md, "run_id", "bench");
    sim_value_map_set_str(md, "workload_type", "CUSTOM");
    struct sim_value *cfg = sim_value_map();
    sim_value_map_set_float(cfg, "clock_ghz", 1.5);
    struct trace_writer *w = trace_writer_open(path, md, cfg, d);
    sim_value_free(md);
    sim_value_free(cfg);
    if (!w)
        return -1;
    struct sim_value *rd = sim_value_map();
    sim_value_map_set_int(rd, "src_addr", 0);
    sim_value_map_set_int(rd, "nbytes", 8192);
    sim_value_map_set_str(rd, "handle_id", "h0");
    struct sim_value *gm = sim_value_map();
    sim_value_map_set_int(gm, "src_a_addr", 0);
    sim_value_map_set_int(gm, "src_b_addr", 65536);
    sim_value_map_set_int(gm, "dst_addr", 131072);
    sim_value_map_set_int(gm, "m", 64);
    sim_value_map_set_int(gm, "k", 64);
    sim_value_map_set_int(gm, "n", 64);
    struct sim_value *mt = sim_value_map();
    sim_value_map_set_take(mt, "input_addrs", sim_value_int_list((int64_t[]){131072}, 1));
    sim_value_map_set_str(mt, "dtype", "f32");
    sim_value_map_set_take(mt, "axis", sim_value_null());
    struct sim_value *wr = sim_value_map();
    sim_value_map_set_str(wr, "dst_space", "hbm");
    sim_value_map_set_int(wr, "dst_addr", 0);
    sim_value_map_set_int(wr, "nbytes", 8192);

    /* a live run has its component ids as strings already: name them once */
    char comp[SIPS * CUBES * PES][4][48], handle[32];
    double tick[SIPS * CUBES * PES] = {0};
    static const char *const kinds[4] = {"pe_dma", "pe_gemm", "pe_math", "pe_dma"};
    static const char *const ops[4] = {"dma_read", "gemm_f16", "exp", "dma_write"};
    static const enum trace_engine engines[4] = {TRACE_ENGINE_DMA, TRACE_ENGINE_TE, TRACE_ENGINE_VE,
                                                 TRACE_ENGINE_DMA};
    static const double dur[4] = {20.5, 45.25, 12.0, 20.5};
    for (int pe = 0; pe < SIPS * CUBES * PES; pe++)
        for (int k = 0; k < 4; k++)
            snprintf(comp[pe][k], sizeof(comp[pe][k]), "sip%d.cube%d.pe%d.%s", pe / (CUBES * PES),
                     pe / PES % CUBES, pe % PES, kinds[k]);
    int rc = 0;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        int pe = (int)(i / 4 % (SIPS * CUBES * PES)), step = (int)(i % 4);
        struct sim_value *det = step == 0 ? rd : step == 1 ? gm : step == 2 ? mt : wr;
        uint64_t addr = (i * 8192) % (1ull << 34);
        if (step != 2) /* the address field of each op's params */
            det->u.map.vals[step == 1 ? 2 : step == 3 ? 1 : 0]->u.i = (int64_t)addr;
        if (step == 0) {
            handle[0] = 'h';
            handle[1 + trace_fmt_u64(handle + 1, i)] = '\0';
            struct sim_value *h = rd->u.map.vals[2]; /* handle_id, replaced in place */
            free(h->u.str.s);
            h->u.str.s = sim_xstrdup(handle);
            h->u.str.len = strlen(handle);
        }
        double t0 = tick[pe], t1 = t0 + dur[step];
        tick[pe] = t1;
        struct trace_writer_event e = {
            .engine = engines[step],
            .engine_id = pe,
            .cmdq_id = (int32_t)(i / 64),
            .op = ops[step],
            .start_cycle = trace_cycles_from_ns(t0, 1.5, false),
            .end_cycle = trace_cycles_from_ns(t1, 1.5, false),
            .component_id = comp[pe][step],
            .op_kind = step == 0 || step == 3 ? TRACE_KIND_MEMORY
                       : step == 1            ? TRACE_KIND_GEMM
                                              : TRACE_KIND_MATH,
            .t_start_ns = t0,
            .t_end_ns = t1,
            .details = det,
        };
        rc = trace_writer_engine_event(w, &e);
    }
    sim_value_free(rd);
    sim_value_free(gm);
    sim_value_free(mt);
    sim_value_free(wr);
    if (rc < 0) {
        trace_writer_abort(w);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "write failed");
    }
    return trace_writer_close(w, NULL, 0, NULL, d);
}

/* ---- measured runs in child processes ----------------------------------------------------- */

struct result {
    double secs;      /* wall clock */
    double cpu;       /* user + system CPU time of the measured process */
    long maxrss_kib;  /* the child's peak RSS */
    double per_event; /* resident bytes per event after loading (load runs) */
};

/* Run fn(arg) in a child; the child writes its figures into a pipe. */
static int measure(int (*fn)(const char *, uint64_t, struct result *), const char *path, uint64_t n,
                   struct result *res)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        struct result r = {0};
        int rc = fn(path, n, &r);
        if (write(fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
            rc = -1;
        _exit(rc < 0 ? 1 : 0);
    }
    close(fd[1]);
    ssize_t k = read(fd[0], res, sizeof(*res));
    close(fd[0]);
    double inner_cpu = res->cpu; /* a child that ran its own child reports that one's */
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    res->maxrss_kib = ru.ru_maxrss;
    res->cpu = inner_cpu > 0 ? inner_cpu
                             : (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return k == (ssize_t)sizeof(*res) && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int run_gen(const char *path, uint64_t n, struct result *r)
{
    struct diag d;
    double t = now_s();
    if (generate(n, path, &d) < 0) {
        fprintf(stderr, "trace_bench: %s: %s\n", d.file, d.msg);
        return -1;
    }
    r->secs = now_s() - t;
    return 0;
}

static int run_load(const char *path, uint64_t n, struct result *r)
{
    (void)n;
    struct diag d;
    struct trace_report *rep = trace_report_new(10);
    long before = rss_kib();
    double t = now_s();
    struct trace_model *m;
    if (trace_load_file(path, rep, &m, &d) < 0) {
        fprintf(stderr, "trace_bench: %s: %s\n", d.file, d.msg);
        return -1;
    }
    r->secs = now_s() - t;
    uint64_t ev = trace_model_event_count(m);
    r->per_event = ev ? (double)(rss_kib() - before) * 1024.0 / (double)ev : 0;
    if (trace_report_errors(rep) || trace_report_warnings(rep))
        fprintf(stderr, "trace_bench: %s: %llu errors, %llu warnings\n", path,
                (unsigned long long)trace_report_errors(rep),
                (unsigned long long)trace_report_warnings(rep));
    trace_model_free(m);
    trace_report_free(rep);
    return 0;
}

static int run_python(const char *path, uint64_t n, struct result *r)
{
    (void)n;
    double t = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        execlp("python3", "python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", path,
               (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    r->secs = now_s() - t;
    /* the python child's peak and CPU time, passed up in per_event's and cpu's place */
    r->per_event = (double)ru.ru_maxrss;
    r->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
}

static int bench(uint64_t n, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/bench_trace.json", dir);
    enum { GEN_RUNS = 3, LOAD_RUNS = 5, PY_RUNS = 3 };
    double ws[GEN_RUNS], wr[GEN_RUNS], wc[GEN_RUNS], ls[LOAD_RUNS], lr[LOAD_RUNS], lb[LOAD_RUNS];
    double lc[LOAD_RUNS], ps[PY_RUNS], pr[PY_RUNS], pc[PY_RUNS];
    struct result r;
    for (int i = 0; i < GEN_RUNS; i++) {
        if (measure(run_gen, path, n, &r) < 0)
            return -1;
        ws[i] = r.secs, wr[i] = (double)r.maxrss_kib / 1024, wc[i] = r.cpu;
    }
    double mb = file_mb(path);
    for (int i = 0; i < LOAD_RUNS; i++) {
        if (measure(run_load, path, n, &r) < 0)
            return -1;
        ls[i] = r.secs, lr[i] = (double)r.maxrss_kib / 1024, lb[i] = r.per_event, lc[i] = r.cpu;
    }
    for (int i = 0; i < PY_RUNS; i++) {
        if (measure(run_python, path, n, &r) < 0) {
            fprintf(stderr, "trace_bench: python3 failed\n");
            return -1;
        }
        ps[i] = r.secs, pr[i] = r.per_event / 1024, pc[i] = r.cpu;
    }
    double mws = median(ws, GEN_RUNS), mls = median(ls, LOAD_RUNS), mps = median(ps, PY_RUNS);
    double mwc = median(wc, GEN_RUNS), mlc = median(lc, LOAD_RUNS), mpc = median(pc, PY_RUNS);
    double load[3] = {0};
    if (getloadavg(load, 3) < 1)
        load[0] = 0;
    printf("trace: %llu events, %.1f MB (load average %.1f on %ld CPUs: wall times are noisy,\n"
           "CPU times less so; medians)\n",
           (unsigned long long)n, mb, load[0], sysconf(_SC_NPROCESSORS_ONLN));
    printf("                                    wall       MB/s     CPU       MB/s   peak RSS\n");
    printf(
        "  writer (stream, fsync, rename)  %6.2f s  %7.1f  %6.2f s  %7.1f  %7.1f MiB  (%d runs)\n",
        mws, mb / mws, mwc, mb / mwc, median(wr, GEN_RUNS), GEN_RUNS);
    printf(
        "  loader (load and validate)      %6.2f s  %7.1f  %6.2f s  %7.1f  %7.1f MiB  (%d runs)\n",
        mls, mb / mls, mlc, mb / mlc, median(lr, LOAD_RUNS), LOAD_RUNS);
    printf(
        "  python3 json.load (baseline)    %6.2f s  %7.1f  %6.2f s  %7.1f  %7.1f MiB  (%d runs)\n",
        mps, mb / mps, mpc, mb / mpc, median(pr, PY_RUNS), PY_RUNS);
    printf("  loader: %.1f resident bytes per event; %.2fx python's speed (CPU), %.3fx its peak "
           "memory\n",
           median(lb, LOAD_RUNS), mpc / mlc, median(lr, LOAD_RUNS) / median(pr, PY_RUNS));
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    struct diag d;
    if (argc == 4 && strcmp(argv[1], "gen") == 0) {
        if (generate(strtoull(argv[2], NULL, 10), argv[3], &d) < 0) {
            fprintf(stderr, "trace_bench: %s: %s\n", d.file, d.msg);
            return 1;
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "load") == 0) {
        struct result r;
        if (measure(run_load, argv[2], 0, &r) < 0)
            return 1;
        printf("%s: %.3f s, %.1f MB/s, peak RSS %.1f MiB, %.1f resident bytes/event\n", argv[2],
               r.secs, file_mb(argv[2]) / r.secs, (double)r.maxrss_kib / 1024, r.per_event);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "all") == 0)
        return bench(strtoull(argv[2], NULL, 10), argv[3]) < 0;
    fprintf(stderr, "usage: trace_bench gen N FILE | load FILE | all N DIR\n");
    return 2;
}
