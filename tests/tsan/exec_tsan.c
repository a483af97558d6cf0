/*
 * ThreadSanitizer driver for the phase-2 executor (make tsan). Criterion's sandbox cannot
 * start under ThreadSanitizer, so this is a plain program: it replays op logs whose waves
 * run on the 2 workers (GEMM batches as one call each, f16 and f32 math, copies into
 * sub-ranges of a larger tensor, ops reading one shared input) and checks that the result
 * is byte for byte the one of a single-threaded replay. Exit 0 when all agree; any data
 * race makes ThreadSanitizer report and fail the run.
 */
#include "sim/phase2/exec.h"
#include "sim/data/memstore.h"
#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 42;

static double rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static void put(struct sim_memstore *m, const char *space, uint64_t addr, enum sim_dtype dt,
                unsigned ndim, const int64_t *shape)
{
    struct sim_tensor *t = sim_tensor_new(dt, ndim, shape);
    for (size_t i = 0; i < sim_tensor_numel(t); i++)
        sim_tensor_set(t, i, rnd());
    sim_memstore_write(m, space, addr, t, NULL);
    sim_tensor_unref(t);
}

static void log_msg(struct sim_oplog *log, double t, const char *comp, struct sim_msg *m)
{
    sim_oplog_record_start(log, sim_ns_to_ticks(t), comp, m);
    sim_oplog_record_end(log, sim_ns_to_ticks(t + 1), comp, m);
    sim_msg_fini(m);
}

static void math(struct sim_oplog *log, double t, const char *comp, const char *op,
                 enum sim_dtype dt, unsigned n, const uint64_t *in, uint64_t out, int64_t len)
{
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MATH);
    snprintf(m.u.math.op, sizeof(m.u.math.op), "%s", op);
    m.u.math.n_inputs = n;
    for (unsigned i = 0; i < n; i++)
        sim_handle_set(&m.u.math.inputs[i], "tcm", in[i], dt, 1, &len, NULL);
    sim_handle_set(&m.u.math.out, "tcm", out, dt, 1, &len, NULL);
    log_msg(log, t, comp, &m);
}

/* Phase 1 of a kernel on 8 PEs, over several steps, the odd PEs a little behind. The PEs
 * of a dtype share the weights B: their GEMMs run as one call per dtype, the two calls on
 * the two workers. In the same wave each PE multiplies activations every PE holds (one A)
 * by weights of its own: one call on their B operands side by side, a third task. */
static void build(struct sim_memstore *m, struct sim_oplog *log)
{
    int64_t as[] = {2, 400}, bs[] = {400, 240}, cs[] = {2, 240}, n = 2 * 240, big = 8 * n;
    put(m, "hbm", 0x80000000, SIM_F32, 1, &big); /* the output, written tile by tile */
    put(m, "tcm", 0x0, SIM_F32, 1, &n);          /* a bias every PE reads */
    put(m, "tcm", 0x10000000, SIM_F32, 2, bs);   /* the weights, in each dtype */
    put(m, "tcm", 0x20000000, SIM_F16, 2, bs);
    int64_t hs[] = {32, 16}, ws[] = {16, 1}, os[] = {32, 1};
    put(m, "tcm", 0x30000000, SIM_F32, 2, hs); /* the activations */
    for (int step = 0; step < 6; step++) {
        for (uint64_t pe = 0; pe < 8; pe++) {
            double t = 100.0 * step + (pe % 2 ? 3 : 0);
            uint64_t base = 0x1000000 * (pe + 1);
            char comp[64];
            enum sim_dtype dt = pe % 2 ? SIM_F16 : SIM_F32;
            if (step == 0) {
                put(m, "tcm", base, dt, 2, as);
                struct sim_tensor *w =
                    sim_memstore_get(m, "tcm", dt == SIM_F16 ? 0x20000000 : 0x10000000);
                sim_memstore_write(m, "tcm", base + 0x100000, w, NULL);
                sim_memstore_write(m, "tcm", base + 0x500000,
                                   sim_memstore_get(m, "tcm", 0x30000000), NULL);
                put(m, "tcm", base + 0x600000, SIM_F32, 2, ws);
            }
            struct sim_msg g;
            sim_msg_init(&g, SIM_MK_GEMM);
            sim_handle_set(&g.u.gemm.a, "tcm", base, dt, 2, as, NULL);
            sim_handle_set(&g.u.gemm.b, "tcm", base + 0x100000, dt, 2, bs, NULL);
            sim_handle_set(&g.u.gemm.out, "tcm", base + 0x200000, SIM_F32, 2, cs, NULL);
            snprintf(comp, sizeof(comp), "sip0.cube0.pe%llu.pe_gemm", (unsigned long long)pe);
            log_msg(log, t, comp, &g);
            sim_msg_init(&g, SIM_MK_GEMM);
            sim_handle_set(&g.u.gemm.a, "tcm", base + 0x500000, SIM_F32, 2, hs, NULL);
            sim_handle_set(&g.u.gemm.b, "tcm", base + 0x600000, SIM_F32, 2, ws, NULL);
            sim_handle_set(&g.u.gemm.out, "tcm", base + 0x700000, SIM_F32, 2, os, NULL);
            log_msg(log, t, comp, &g);
            snprintf(comp, sizeof(comp), "sip0.cube0.pe%llu.pe_math", (unsigned long long)pe);
            uint64_t in1[] = {base + 0x200000, 0x0};
            math(log, t + 10, comp, "add", SIM_F32, 2, in1, base + 0x300000, n);
            uint64_t in2[] = {base + 0x300000};
            math(log, t + 20, comp, "tanh", SIM_F32, 1, in2, base + 0x400000, n);
            struct sim_msg w;
            sim_msg_init(&w, SIM_MK_DMA_WRITE);
            sim_handle_set(&w.u.dma_write.src, "tcm", base + 0x300000, SIM_F32, 1, &n, NULL);
            sim_handle_set(&w.u.dma_write.dst, "hbm", 0x80000000 + pe * (uint64_t)n * 4, SIM_F32, 1,
                           &n, NULL);
            snprintf(comp, sizeof(comp), "sip0.cube0.pe%llu.pe_dma", (unsigned long long)pe);
            log_msg(log, t + 30, comp, &w);
        }
    }
}

static struct sim_exec *replay(struct sim_memstore *m, struct sim_oplog *log, unsigned threads)
{
    struct sim_exec_opts o = {.threads = threads};
    struct sim_exec *x = sim_exec_new(m, &o);
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    struct diag d;
    if (sim_exec_run(x, r, n, &d) != 0) {
        fprintf(stderr, "exec_tsan: %s\n", d.msg);
        exit(1);
    }
    return x;
}

static int same_space(struct sim_exec *a, struct sim_exec *b, const char *space)
{
    size_t na, nb;
    struct sim_memstore_entry *ea = sim_memstore_entries(sim_exec_store(a), space, &na);
    struct sim_memstore_entry *eb = sim_memstore_entries(sim_exec_store(b), space, &nb);
    int ok = na == nb;
    for (size_t i = 0; ok && i < na; i++)
        ok = ea[i].addr == eb[i].addr && ea[i].tensor->nbytes == eb[i].tensor->nbytes &&
             memcmp(sim_tensor_cdata(ea[i].tensor), sim_tensor_cdata(eb[i].tensor),
                    ea[i].tensor->nbytes) == 0;
    free(ea);
    free(eb);
    return ok;
}

int main(void)
{
    struct sim_memstore *m = sim_memstore_new();
    struct sim_oplog *log = sim_oplog_new(m);
    build(m, log);
    struct sim_exec *one = replay(m, log, 1);
    int fails = 0;
    for (int round = 0; round < 3; round++) {
        struct sim_exec *two = replay(m, log, 2);
        const struct sim_exec_stats *s = sim_exec_stats(two);
        if (s->parallel_ops == 0 || s->gemm_batches == 0 || s->col_batches == 0) {
            fprintf(stderr, "exec_tsan: nothing ran in parallel\n");
            fails++;
        }
        if (!same_space(one, two, "tcm") || !same_space(one, two, "hbm")) {
            fprintf(stderr, "exec_tsan: 2 workers differ from 1 (round %d)\n", round);
            fails++;
        }
        if (round == 0)
            printf("exec_tsan: %zu ops, %zu waves, %zu ran in parallel, %zu GEMM batches (%zu "
                   "on B side by side)\n",
                   s->executed, s->waves, s->parallel_ops, s->gemm_batches, s->col_batches);
        sim_exec_free(two);
    }
    sim_exec_free(one);
    sim_oplog_free(log);
    sim_memstore_free(m);
    if (!fails)
        printf("exec_tsan: 2 workers agree with 1, byte for byte\n");
    return fails != 0;
}
