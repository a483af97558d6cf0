/*
 * Phase-2 executor speed. A tiled 2048 x 2048 x 2048 f32 GEMM as a kernel on 8 PEs would
 * log it (256 x 256 output tiles; for each k step two dma_reads of operand tiles from HBM
 * into the PE's TCM, a tile GEMM, an add into the accumulator; a dma_write of the finished
 * tile), replayed by the executor, against one direct cblas_sgemm of the same size in the
 * same process. Then the replay overhead per op, from an op log of tiny ops; GEMM batching:
 * op logs of PEs out of step and a run of llm_decode replayed batched and unbatched
 * (no_batch), side by side, and what one call on stacked operands gives against a loop of
 * calls, rows in place, rows copied and columns side by side (the measurements behind the
 * executor's rule, sim_exec_stacking_pays). Medians of several runs; the last line ends with
 * ratio=R (executor throughput / direct throughput). With the argument "tiny" it measures only the
 * per-op overhead, with "batch" only the batching, with "gemm N" it replays the tiled GEMM once on
 * N workers (for profiling).
 */
#include "sim/phase2/exec.h"
#include "sim/data/memstore.h"
#include "sim/host/run.h"
#include "sim/phase2/verify.h"
#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    N = 2048,
    T = 256,    /* tile edge */
    NT = N / T, /* tiles per edge */
    PES = 8,
    RUNS = 5,
    TINY_OPS = 100000,
};

#define A_BASE   0x10000000ull
#define B_BASE   0x20000000ull
#define C_BASE   0x30000000ull
#define TCM_BASE 0x40000000ull
#define TILE_B   ((uint64_t)T * T * 4)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (all threads): steadier than wall time on a busy machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return v[n / 2];
}

static uint64_t rng = 1;

static float rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* Records to mark "accumulate" once logged, by record id (the order of starts). */
static bool *accumulating;
static size_t n_logged;

static void log_msg(struct sim_oplog *log, double t, const char *comp, struct sim_msg *m)
{
    sim_oplog_record_start(log, sim_ns_to_ticks(t), comp, m);
    sim_oplog_record_end(log, sim_ns_to_ticks(t + 1), comp, m);
    sim_msg_fini(m);
    accumulating = realloc(accumulating, (n_logged + 1) * sizeof(*accumulating));
    accumulating[n_logged++] = false;
}

/* A dma_read of a tile into the PE's TCM (the op log names the destination). */
static void dma_read(struct sim_oplog *log, double t, const char *comp, uint64_t src, uint64_t dst)
{
    int64_t ts[] = {T, T};
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_READ);
    sim_handle_set(&m.u.dma_read.src, "hbm", src, SIM_F32, 2, ts, NULL);
    sim_handle_set(&m.u.dma_read.dst, "tcm", dst, SIM_F32, 2, ts, NULL);
    log_msg(log, t, comp, &m);
}

static void mark_accumulating(struct sim_oplog *log)
{
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    for (size_t i = 0; i < n; i++)
        if (accumulating[r[i]->note.id])
            sim_value_map_set_bool(r[i]->params, "accumulate", true);
    free(accumulating);
    accumulating = NULL;
    n_logged = 0;
}

/* The op log of the tiled kernel: PE p computes output tiles p, p + 8, ...; the PEs run in
 * lockstep, so equal steps share a t_start. accumulate: GEMMs add into the accumulator
 * (one op per k step) instead of a GEMM and an add. */
static struct sim_oplog *tiled_gemm_log(bool accumulate)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    int64_t ts[] = {T, T}, tn = (int64_t)T * T;
    double t = 0;
    for (int slot = 0; slot < NT * NT / PES; slot++) {
        for (int kk = 0; kk < NT; kk++, t += 10) {
            for (int pe = 0; pe < PES; pe++) {
                int tile = slot * PES + pe, i = tile / NT, j = tile % NT;
                uint64_t tcm = TCM_BASE + (uint64_t)pe * 0x1000000;
                uint64_t a = tcm, b = tcm + TILE_B, p = tcm + 2 * TILE_B, acc = tcm + 3 * TILE_B;
                char dma[64], gemm[64], math[64];
                snprintf(dma, sizeof(dma), "sip0.cube0.pe%d.pe_dma", pe);
                snprintf(gemm, sizeof(gemm), "sip0.cube0.pe%d.pe_gemm", pe);
                snprintf(math, sizeof(math), "sip0.cube0.pe%d.pe_math", pe);
                dma_read(log, t, dma, A_BASE + (uint64_t)(i * NT + kk) * TILE_B, a);
                dma_read(log, t, dma, B_BASE + (uint64_t)(kk * NT + j) * TILE_B, b);
                struct sim_msg m;
                sim_msg_init(&m, SIM_MK_GEMM);
                sim_handle_set(&m.u.gemm.a, "tcm", a, SIM_F32, 2, ts, NULL);
                sim_handle_set(&m.u.gemm.b, "tcm", b, SIM_F32, 2, ts, NULL);
                bool direct = kk == 0 || accumulate;
                sim_handle_set(&m.u.gemm.out, "tcm", direct ? acc : p, SIM_F32, 2, ts, NULL);
                log_msg(log, t + 2, gemm, &m);
                accumulating[n_logged - 1] = accumulate && kk > 0;
                if (!direct) {
                    sim_msg_init(&m, SIM_MK_MATH);
                    snprintf(m.u.math.op, sizeof(m.u.math.op), "add");
                    m.u.math.n_inputs = 2;
                    sim_handle_set(&m.u.math.inputs[0], "tcm", acc, SIM_F32, 1, &tn, NULL);
                    sim_handle_set(&m.u.math.inputs[1], "tcm", p, SIM_F32, 1, &tn, NULL);
                    sim_handle_set(&m.u.math.out, "tcm", acc, SIM_F32, 1, &tn, NULL);
                    log_msg(log, t + 4, math, &m);
                }
                if (kk == NT - 1) {
                    sim_msg_init(&m, SIM_MK_DMA_WRITE);
                    sim_handle_set(&m.u.dma_write.src, "tcm", acc, SIM_F32, 2, ts, NULL);
                    sim_handle_set(&m.u.dma_write.dst, "hbm",
                                   C_BASE + (uint64_t)(i * NT + j) * TILE_B, SIM_F32, 2, ts, NULL);
                    log_msg(log, t + 6, dma, &m);
                }
            }
        }
    }
    mark_accumulating(log);
    return log;
}

/* Row-major matrix -> tile-major tensor (tile (i, j) at index i * NT + j, each T x T). */
static struct sim_tensor *tile_major(const float *m)
{
    int64_t shape[] = {NT * NT, T, T};
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 3, shape);
    float *d = sim_tensor_data(t);
    for (int i = 0; i < NT; i++)
        for (int j = 0; j < NT; j++)
            for (int r = 0; r < T; r++)
                memcpy(d + ((size_t)(i * NT + j) * T + (size_t)r) * T,
                       m + ((size_t)i * T + (size_t)r) * N + (size_t)j * T, T * sizeof(float));
    return t;
}

/* Largest |x - y| / (1 + |y|) between the executor's tile-major C and the direct one. */
static double max_err(const struct sim_tensor *tc, const float *c)
{
    const float *d = sim_tensor_cdata(tc);
    double e = 0;
    for (int i = 0; i < NT; i++)
        for (int j = 0; j < NT; j++)
            for (int r = 0; r < T; r++)
                for (int q = 0; q < T; q++) {
                    double x = d[((size_t)(i * NT + j) * T + (size_t)r) * T + (size_t)q];
                    double y = c[((size_t)i * T + (size_t)r) * N + (size_t)j * T + (size_t)q];
                    double k = fabs(x - y) / (1 + fabs(y));
                    e = k > e ? k : e;
                }
    return e;
}

struct replay {
    double seconds, cpu;
    struct sim_exec_stats stats;
    double err;
};

static struct replay replay(struct sim_memstore *m, struct sim_oplog *log,
                            const struct sim_exec_opts *o, const float *check)
{
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    double t0 = now_s(), c0 = cpu_s();
    struct sim_exec *x = sim_exec_new(m, o);
    struct diag d;
    if (sim_exec_run(x, r, n, &d) != 0) {
        fprintf(stderr, "phase2_bench: %s\n", d.msg);
        exit(1);
    }
    struct replay res = {now_s() - t0, cpu_s() - c0, *sim_exec_stats(x), 0};
    if (check)
        res.err = max_err(sim_memstore_get(sim_exec_store(x), "hbm", C_BASE), check);
    sim_exec_free(x);
    return res;
}

/* Median wall time of RUNS replays; *cpu the median CPU time. */
static double median_replay(struct sim_memstore *m, struct sim_oplog *log,
                            const struct sim_exec_opts *o, const float *check, double *err,
                            struct sim_exec_stats *st, double *cpu)
{
    double v[RUNS], vc[RUNS];
    for (int i = 0; i < RUNS; i++) {
        struct replay r = replay(m, log, o, i == 0 ? check : NULL);
        v[i] = r.seconds;
        vc[i] = r.cpu;
        if (i == 0) {
            if (err)
                *err = r.err;
            if (st)
                *st = r.stats;
        }
    }
    if (cpu)
        *cpu = median(vc, RUNS);
    return median(v, RUNS);
}

/* Tiny ops: adds of 16 floats on 8 PEs; lockstep (groups of 8) or one t_start each.
 * Returns the median wall ns per op, *cpu_ns the median CPU ns per op. */
static double tiny_ops(bool lockstep, unsigned threads, double *cpu_ns)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_oplog *log = sim_oplog_new(NULL);
    int64_t n = 16;
    for (int pe = 0; pe < PES; pe++) {
        struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n);
        sim_memstore_write(m, "tcm", TCM_BASE + (uint64_t)pe * 0x1000, t, NULL);
        sim_tensor_unref(t);
    }
    for (int i = 0; i < TINY_OPS; i++) {
        int pe = i % PES;
        uint64_t base = TCM_BASE + (uint64_t)pe * 0x1000;
        struct sim_msg msg;
        sim_msg_init(&msg, SIM_MK_MATH);
        snprintf(msg.u.math.op, sizeof(msg.u.math.op), "add");
        msg.u.math.n_inputs = 2;
        sim_handle_set(&msg.u.math.inputs[0], "tcm", base, SIM_F32, 1, &n, NULL);
        sim_handle_set(&msg.u.math.inputs[1], "tcm", base, SIM_F32, 1, &n, NULL);
        sim_handle_set(&msg.u.math.out, "tcm", base, SIM_F32, 1, &n, NULL);
        char comp[64];
        snprintf(comp, sizeof(comp), "sip0.cube0.pe%d.pe_math", pe);
        log_msg(log, lockstep ? (double)(i / PES) : (double)i, comp, &msg);
    }
    double v[RUNS], vc[RUNS];
    for (int i = 0; i < RUNS; i++) {
        struct replay r = replay(m, log, &(struct sim_exec_opts){.threads = threads}, NULL);
        v[i] = r.seconds;
        vc[i] = r.cpu;
    }
    sim_oplog_free(log);
    sim_memstore_free(m);
    *cpu_ns = median(vc, RUNS) / TINY_OPS * 1e9;
    return median(v, RUNS) / TINY_OPS * 1e9;
}

/* CPU time of one fn(ctx): the median of 2 x RUNS runs of reps calls each (CPU time, as
 * these are single-threaded calls: steadier than wall time on a shared machine). */
static double time_reps(void (*fn)(void *), void *ctx, int reps)
{
    double v[2 * RUNS];
    for (int r = 0; r < 2 * RUNS; r++) {
        double t0 = cpu_s();
        for (int q = 0; q < reps; q++)
            fn(ctx);
        v[r] = (cpu_s() - t0) / reps;
    }
    return median(v, 2 * RUNS);
}

/* 8 GEMMs m x k x n, in separate buffers, sharing B (rows) or A (columns). */
struct stack_case {
    int m, n, k;
    float *a[PES], *b[PES], *c[PES], *as, *bs, *cs;
};

static void loop_shared_b(void *p)
{
    struct stack_case *s = p;
    for (int g = 0; g < PES; g++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a[g],
                    s->k, s->b[0], s->n, 0.0f, s->c[g], s->n);
}

/* one call on A rows already one after the other (as in place) */
static void rows_in_place(void *p)
{
    struct stack_case *s = p;
    size_t mk = (size_t)s->m * s->k, mn = (size_t)s->m * s->n;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, PES * s->m, s->n, s->k, 1.0f, s->as,
                s->k, s->b[0], s->n, 0.0f, s->cs, s->n);
    for (int g = 0; g < PES; g++)
        memcpy(s->c[g], s->cs + g * mn, mn * sizeof(float));
    (void)mk;
}

/* the A rows copied into one buffer first */
static void rows_copied(void *p)
{
    struct stack_case *s = p;
    size_t mk = (size_t)s->m * s->k;
    for (int g = 0; g < PES; g++)
        memcpy(s->as + g * mk, s->a[g], mk * sizeof(float));
    rows_in_place(p);
}

static void loop_shared_a(void *p)
{
    struct stack_case *s = p;
    for (int g = 0; g < PES; g++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a[0],
                    s->k, s->b[g], s->n, 0.0f, s->c[g], s->n);
}

/* shared A: the B operands side by side (a strided copy), one call, C copied back out */
static void columns_copied(void *p)
{
    struct stack_case *s = p;
    int wn = PES * s->n;
    for (int g = 0; g < PES; g++)
        for (int q = 0; q < s->k; q++)
            memcpy(s->bs + (size_t)q * wn + (size_t)g * s->n, s->b[g] + (size_t)q * s->n,
                   (size_t)s->n * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, wn, s->k, 1.0f, s->a[0], s->k,
                s->bs, wn, 0.0f, s->cs, wn);
    for (int g = 0; g < PES; g++)
        for (int r = 0; r < s->m; r++)
            memcpy(s->c[g] + (size_t)r * s->n, s->cs + (size_t)r * wn + (size_t)g * s->n,
                   (size_t)s->n * sizeof(float));
}

/*
 * 8 GEMMs of one shape: a loop of 8 calls against one call, on stacked A rows (shared B;
 * in place, or copied into one buffer first) and on B operands side by side (shared A,
 * a strided copy). A star marks where the executor makes one call
 * (sim_exec_stacking_pays, a rule fitted to this table).
 */
static void stacking(void)
{
    static const int shapes[][3] = {{1, 16, 32},   {8, 1, 32},     {32, 1, 16},  {8, 8, 32},
                                    {16, 16, 16},  {32, 32, 32},   {8, 1, 256},  {1, 32, 32},
                                    {4, 32, 32},   {1, 256, 256},  {4, 64, 64},  {8, 64, 64},
                                    {8, 128, 128}, {8, 256, 256},  {16, 64, 64}, {16, 128, 128},
                                    {64, 64, 64},  {64, 256, 256}, {T, T, T}};
    printf("one call for 8 GEMMs against 8 calls (time of one / time of 8; < 1: one is faster;\n"
           "* where the executor makes one call, sim_exec_stacking_pays):\n"
           "      m     n     k   rows in place  rows copied  columns copied\n");
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        struct stack_case s = {.m = shapes[i][0], .n = shapes[i][1], .k = shapes[i][2]};
        size_t mk = (size_t)s.m * s.k, kn = (size_t)s.k * s.n, mn = (size_t)s.m * s.n;
        for (int g = 0; g < PES; g++) {
            s.a[g] = malloc(mk * sizeof(float));
            s.b[g] = malloc(kn * sizeof(float));
            s.c[g] = malloc(mn * sizeof(float));
            for (size_t q = 0; q < mk; q++)
                s.a[g][q] = rnd();
            for (size_t q = 0; q < kn; q++)
                s.b[g][q] = rnd();
        }
        s.as = malloc(PES * mk * sizeof(float));
        s.bs = malloc(PES * kn * sizeof(float));
        s.cs = malloc(PES * mn * sizeof(float));
        for (int g = 0; g < PES; g++)
            memcpy(s.as + g * mk, s.a[g], mk * sizeof(float));
        double work = 2.0 * PES * (double)mn * s.k;
        int reps = (int)(4e8 / work) + 2;
        double lb = time_reps(loop_shared_b, &s, reps), ri = time_reps(rows_in_place, &s, reps);
        double rc = time_reps(rows_copied, &s, reps);
        double la = time_reps(loop_shared_a, &s, reps), cc = time_reps(columns_copied, &s, reps);
        char mark[3];
        for (int w = 0; w < 3; w++)
            mark[w] = sim_exec_stacking_pays((enum sim_exec_stacking)w, s.m, s.n, s.k) ? '*' : ' ';
        printf("  %5d %5d %5d   %12.2f%c  %10.2f%c  %13.2f%c\n", s.m, s.n, s.k, ri / lb,
               mark[SIM_EXEC_STACK_ROWS_IN_PLACE], rc / lb, mark[SIM_EXEC_STACK_ROWS_COPIED],
               cc / la, mark[SIM_EXEC_STACK_COLUMNS]);
        for (int g = 0; g < PES; g++) {
            free(s.a[g]);
            free(s.b[g]);
            free(s.c[g]);
        }
        free(s.as);
        free(s.bs);
        free(s.cs);
    }
}

/* A new f32 tensor of random values. */
static struct sim_tensor *rnd_tensor(unsigned ndim, const int64_t *shape)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, ndim, shape);
    for (size_t i = 0; i < sim_tensor_numel(t); i++)
        ((float *)sim_tensor_data(t))[i] = rnd();
    return t;
}

/*
 * An op log of 8 PEs out of step (PE p starts p x 3 ns after PE 0, so no two ops share a
 * t_start): STEPS steps of a GEMM of m rows by k x n weights, then an add into the PE's
 * running sum. The PEs share the weights (B, loaded into each PE's TCM) and have their
 * own rows, or with share_a share the rows (A: activations every PE holds) and have their
 * own weights (tensor parallel).
 */
static struct sim_oplog *shared_weights_log(struct sim_memstore *m, int rows, int k, int n,
                                            int steps, bool share_a)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    int64_t as[] = {rows, k}, ws[] = {k, n}, cs[] = {rows, n}, cn = (int64_t)rows * n;
    struct sim_tensor *shared = share_a ? rnd_tensor(2, as) : rnd_tensor(2, ws);
    for (int pe = 0; pe < PES; pe++) {
        uint64_t tcm = TCM_BASE + (uint64_t)pe * 0x4000000;
        struct sim_tensor *a = share_a ? sim_tensor_ref(shared) : rnd_tensor(2, as);
        struct sim_tensor *w = share_a ? rnd_tensor(2, ws) : sim_tensor_ref(shared);
        sim_memstore_write(m, "tcm", tcm, a, NULL);
        sim_memstore_write(m, "tcm", tcm + 0x1000000, w, NULL);
        sim_tensor_unref(w);
        struct sim_tensor *acc = sim_tensor_new(SIM_F32, 1, &cn);
        sim_memstore_write(m, "tcm", tcm + 0x3000000, acc, NULL);
        sim_tensor_unref(a);
        sim_tensor_unref(acc);
    }
    sim_tensor_unref(shared);
    for (int step = 0; step < steps; step++)
        for (int pe = 0; pe < PES; pe++) {
            uint64_t tcm = TCM_BASE + (uint64_t)pe * 0x4000000;
            double t = 100.0 * step + 3.0 * pe;
            char gemm[64], math[64];
            snprintf(gemm, sizeof(gemm), "sip0.cube0.pe%d.pe_gemm", pe);
            snprintf(math, sizeof(math), "sip0.cube0.pe%d.pe_math", pe);
            struct sim_msg msg;
            sim_msg_init(&msg, SIM_MK_GEMM);
            sim_handle_set(&msg.u.gemm.a, "tcm", tcm, SIM_F32, 2, as, NULL);
            sim_handle_set(&msg.u.gemm.b, "tcm", tcm + 0x1000000, SIM_F32, 2, ws, NULL);
            sim_handle_set(&msg.u.gemm.out, "tcm", tcm + 0x2000000, SIM_F32, 2, cs, NULL);
            log_msg(log, t, gemm, &msg);
            sim_msg_init(&msg, SIM_MK_MATH);
            snprintf(msg.u.math.op, sizeof(msg.u.math.op), "add");
            msg.u.math.n_inputs = 2;
            sim_handle_set(&msg.u.math.inputs[0], "tcm", tcm + 0x3000000, SIM_F32, 1, &cn, NULL);
            sim_handle_set(&msg.u.math.inputs[1], "tcm", tcm + 0x2000000, SIM_F32, 1, &cn, NULL);
            sim_handle_set(&msg.u.math.out, "tcm", tcm + 0x3000000, SIM_F32, 1, &cn, NULL);
            log_msg(log, t + 1, math, &msg);
        }
    free(accumulating);
    accumulating = NULL;
    n_logged = 0;
    return log;
}

/* Replays of a shared-operand log batched and unbatched, side by side: median wall times
 * of RUNS replays each, and their ratio. */
static void batching_case(const char *what, int rows, int k, int n, int steps, bool share_a)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_oplog *log = shared_weights_log(m, rows, k, n, steps, share_a);
    struct sim_exec_stats sb, su;
    double cb, cu;
    double tb = median_replay(m, log, &(struct sim_exec_opts){.threads = 2}, NULL, NULL, &sb, &cb);
    double tu = median_replay(m, log, &(struct sim_exec_opts){.threads = 2, .no_batch = true}, NULL,
                              NULL, &su, &cu);
    printf("batching, %s (%d GEMMs %dx%dx%d on %d PEs out of step, sharing %s): batched %.4f s "
           "(cpu %.4f, %zu GEMMs in %zu calls), unbatched %.4f s (cpu %.4f, %zu calls); "
           "unbatched/batched %.2f\n",
           what, steps * PES, rows, k, n, PES, share_a ? "A" : "B", tb, cb, sb.gemms_batched,
           sb.gemm_batches, tu, cu, (size_t)steps * PES, tu / tb);
    sim_oplog_free(log);
    sim_memstore_free(m);
}

/* The executor's time replaying one run of a built-in kernel, batched or not (phase 1 runs
 * again each time: phase 2 replays a run once). */
static double kernel_replay(const char *spec, bool no_batch, struct sim_exec_stats *st)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    if (sim_run_new(&ro, &r, &d) != 0) {
        fprintf(stderr, "phase2_bench: %s: %s\n", spec, d.msg);
        exit(1);
    }
    struct sim_verify_capture *cap = sim_verify_capture_attach(r);
    while (!sim_run_over(r))
        sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_verify_opts o = {.exec = {.threads = 2, .no_batch = no_batch}};
    struct sim_verify_report rep;
    if (sim_verify_phase2(r, cap, &o, &rep, &d) != 0) {
        fprintf(stderr, "phase2_bench: %s: %s\n", spec, d.msg);
        exit(1);
    }
    *st = rep.exec;
    sim_verify_report_fini(&rep);
    sim_verify_capture_free(cap);
    sim_run_free(r);
    return st->seconds;
}

/* A kernel's replay batched and unbatched, side by side (medians of RUNS). */
static void batching_kernel(const char *spec)
{
    double vb[RUNS], vu[RUNS];
    struct sim_exec_stats sb, su;
    for (int i = 0; i < RUNS; i++) {
        vb[i] = kernel_replay(spec, false, &sb);
        vu[i] = kernel_replay(spec, true, &su);
    }
    double tb = median(vb, RUNS), tu = median(vu, RUNS);
    printf("batching, npuscope run -k %s --verify (%zu ops, %zu GEMMs alike): batched %.4f s "
           "(%zu waves, %zu GEMM batches of %zu GEMMs, %zu of them on B side by side), unbatched "
           "%.4f s (%zu waves); "
           "unbatched/batched %.2f\n",
           spec, sb.executed, sb.gemms_alike, tb, sb.waves, sb.gemm_batches, sb.gemms_batched,
           sb.col_batches, tu, su.waves, tu / tb);
}

static void batching(void)
{
    batching_case("decode step", 1, 256, 256, 256, false);
    batching_case("decode step, wide", 1, 1024, 1024, 32, false);
    batching_case("small row tiles", 8, 256, 256, 64, false);
    batching_case("row tiles", 64, 256, 256, 16, false);
    batching_case("MLP tiles of a small model", 8, 32, 1, 256, false);
    batching_case("heads of a small model", 32, 16, 1, 256, true);
    batching_case("one token's projections", 1, 32, 16, 256, true);
    batching_kernel("llm_decode:pes=0");
    batching_kernel("llm_decode:pes=0,layers=8,gen=32");
    stacking();
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "tiny") == 0) { /* for profiling the per-op overhead */
        double cpu_ns, ns = tiny_ops(true, 2, &cpu_ns);
        printf("%.0f ns per tiny op (cpu %.0f ns)\n", ns, cpu_ns);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "batch") == 0) {
        batching();
        return 0;
    }
    size_t nn = (size_t)N * N;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float));
    float *c = malloc(nn * sizeof(float));
    for (size_t i = 0; i < nn; i++)
        a[i] = rnd();
    for (size_t i = 0; i < nn; i++)
        b[i] = rnd();

    /* phase 1's store: A and B deployed tile-major, C zero */
    struct sim_memstore *m = sim_memstore_new();
    struct sim_tensor *ta = tile_major(a), *tb = tile_major(b);
    int64_t cs[] = {NT * NT, T, T};
    struct sim_tensor *tc = sim_tensor_new(SIM_F32, 3, cs);
    sim_memstore_write(m, "hbm", A_BASE, ta, NULL);
    sim_memstore_write(m, "hbm", B_BASE, tb, NULL);
    sim_memstore_write(m, "hbm", C_BASE, tc, NULL);
    sim_tensor_unref(ta);
    sim_tensor_unref(tb);
    sim_tensor_unref(tc);
    struct sim_oplog *log = tiled_gemm_log(false);
    struct sim_oplog *log_acc = tiled_gemm_log(true);
    if (argc > 2 && strcmp(argv[1], "gemm") == 0) { /* one replay, for profiling */
        struct replay r =
            replay(m, log, &(struct sim_exec_opts){.threads = (unsigned)atoi(argv[2])}, NULL);
        printf("%.3f s\n", r.seconds);
        return 0;
    }

    double vd[RUNS], vdc[RUNS];
    for (int i = 0; i < RUNS; i++) {
        double t0 = now_s(), c0 = cpu_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c,
                    N);
        vd[i] = now_s() - t0;
        vdc[i] = cpu_s() - c0;
    }
    double direct = median(vd, RUNS), directc = median(vdc, RUNS);
    double gflop = 2.0 * N * N * (double)N * 1e-9;
    printf("direct cblas_sgemm %dx%dx%d: %.3f s (cpu %.3f s), %.1f GFLOP/s\n", N, N, N, direct,
           directc, gflop / direct);

    /* the floor of any tiled replay: the tile GEMMs alone, on data already in place */
    {
        size_t tt = (size_t)T * T;
        float *xa = malloc(tt * sizeof(float)), *xb = malloc(tt * sizeof(float));
        float *tcc = malloc(tt * sizeof(float));
        for (size_t i = 0; i < tt; i++)
            xa[i] = xb[i] = rnd();
        double vt[RUNS], vtc[RUNS];
        for (int r = 0; r < RUNS; r++) {
            double t0 = now_s(), c0 = cpu_s();
            for (int g = 0; g < NT * NT * NT; g++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, T, T, 1.0f, xa, T, xb, T,
                            1.0f, tcc, T);
            vt[r] = now_s() - t0;
            vtc[r] = cpu_s() - c0;
        }
        printf("the %d tile GEMMs %dx%dx%d alone: %.3f s (cpu %.3f s)\n", NT * NT * NT, T, T, T,
               median(vt, RUNS), median(vtc, RUNS));
        free(xa);
        free(xb);
        free(tcc);
    }

    struct sim_exec_stats st;
    double err, cpu;
    double e1 = median_replay(m, log, &(struct sim_exec_opts){.threads = 1}, c, &err, &st, &cpu);
    printf("executor, 1 worker: %.3f s (cpu %.3f s), ratio %.2f (%zu ops, %zu waves, max error "
           "%.1e)\n",
           e1, cpu, direct / e1, st.executed, st.waves, err);
    struct sim_exec_stats snb;
    double enb = median_replay(m, log, &(struct sim_exec_opts){.threads = 2, .no_batch = true},
                               NULL, NULL, &snb, &cpu);
    printf("executor, 2 workers, unbatched: %.3f s (cpu %.3f s), ratio %.2f\n", enb, cpu,
           direct / enb);
    double eacc =
        median_replay(m, log_acc, &(struct sim_exec_opts){.threads = 2}, c, &err, &st, &cpu);
    printf("executor, 2 workers, accumulating GEMMs (no adds): %.3f s (cpu %.3f s), ratio %.2f "
           "(max error %.1e)\n",
           eacc, cpu, direct / eacc, err);

    double c_seq, c_lock, c_lock1;
    double ns_seq = tiny_ops(false, 2, &c_seq), ns_lock = tiny_ops(true, 2, &c_lock);
    double ns_lock1 = tiny_ops(true, 1, &c_lock1);
    printf("replay overhead per tiny op (add of 16 f32, %d ops): %.0f ns (cpu %.0f) one op per "
           "t_start, %.0f ns (cpu %.0f) 8 PEs in lockstep on 2 workers, %.0f ns (cpu %.0f) in "
           "lockstep on 1 worker\n",
           TINY_OPS, ns_seq, c_seq, ns_lock, c_lock, ns_lock1, c_lock1);
    batching();

    double e2 = median_replay(m, log, &(struct sim_exec_opts){.threads = 2}, c, &err, &st, &cpu);
    printf("tiled gemm, batched %.3f s against unbatched %.3f s (%zu GEMMs alike: each PE's own "
           "tiles of A and B, so one by one)\n",
           e2, enb, st.gemms_alike);
    printf("phase2 tiled gemm %dx%dx%d on %d PEs (%dx%d tiles), 2 workers: %.3f s (cpu %.3f s), "
           "%.1f GFLOP/s, %zu GEMM batches, max error %.1e; direct %.3f s; ratio=%.2f\n",
           N, N, N, PES, T, T, e2, cpu, gflop / e2, st.gemm_batches, err, direct, direct / e2);

    sim_oplog_free(log);
    sim_oplog_free(log_acc);
    sim_memstore_free(m);
    free(a);
    free(b);
    free(c);
    return 0;
}
