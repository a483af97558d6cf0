/*
 * The simulation core's speed on a kernel workload: 8 PEs of the default chip each run a
 * loop of load, exp, add, store on 256-element f32 tiles (4 op records per iteration),
 * through the components, links and op log. Prints engine events and op records per
 * second of wall time, and ns per op record; the baseline is the same run with op logging
 * off (ADR-0020 D10: phase 1 costs the same without the op log), measured in the same
 * invocation. Median of 5 runs.
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/kernel/runner.h"
#include "sim/kernel/tl.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { PES = 8, ITERS = 2000, TILE = 256, RUNS = 5 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void loop_kernel(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *x = tl_arg(tl, a, 0), *out = tl_arg(tl, a, 1);
    for (int i = 0; i < ITERS; i++) {
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *t = tl_load(tl, x);
        struct tl_tensor *e = tl_exp(tl, t);
        tl_store(tl, out, tl_add(tl, e, t));
        tl_tcm_release(tl, mark);
    }
}

struct result {
    double seconds;
    uint64_t events, records;
};

static struct result run_once(const struct sim_config *cfg, bool logging)
{
    struct sim_chip *chip = sim_chip_new(cfg, 0);
    sim_chip_set_logging(chip, logging);
    static struct kshard shards[PES][2];
    static struct karg args[PES][2];
    static struct kargs kargs[PES];
    int64_t n = TILE;
    for (int g = 0; g < PES; g++) {
        int sip, cube, pe;
        sim_chip_pe_coords(chip, g, &sip, &cube, &pe);
        struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n);
        sim_chip_mem_write(chip, "hbm", sim_chip_dev_addr(g, 0), t, "bench");
        sim_tensor_unref(t);
        for (int i = 0; i < 2; i++) {
            shards[g][i] = (struct kshard){sip, cube, pe, (uint64_t)i * 0x10000, TILE * 4, 0};
            args[g][i] = (struct karg){.is_tensor = true,
                                       .has_dtype = true,
                                       .dtype = SIM_F32,
                                       .ndim = 1,
                                       .shape = {TILE},
                                       .shards = &shards[g][i],
                                       .n_shards = 1,
                                       .mine = 0};
        }
        kargs[g] = (struct kargs){.n = 2, .v = args[g]};
        sim_runner_run(chip, "loop", loop_kernel, &kargs[g], g);
    }
    double t0 = now_s();
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
    struct result r = {now_s() - t0, sim_engine_events(sim_chip_engine(chip)),
                       sim_oplog_count(sim_chip_oplog(chip))};
    sim_chip_free(chip);
    return r;
}

int main(void)
{
    struct sim_config *cfg;
    struct diag d;
    if (sim_config_load_embedded(SIM_CONFIG_DEFAULT, &cfg, &d) < 0) {
        fprintf(stderr, "simcore_bench: %s\n", d.msg);
        return 1;
    }
    double on[RUNS], off[RUNS];
    struct result last_on = {0}, last_off = {0};
    for (int i = 0; i < RUNS; i++) {
        last_on = run_once(cfg, true);
        last_off = run_once(cfg, false);
        on[i] = last_on.seconds;
        off[i] = last_off.seconds;
    }
    qsort(on, RUNS, sizeof(double), cmp_double);
    qsort(off, RUNS, sizeof(double), cmp_double);
    double m_on = on[RUNS / 2], m_off = off[RUNS / 2];
    printf("kernel loop on %d PEs, %d iterations each (median of %d runs)\n", PES, ITERS, RUNS);
    printf("  op log on:  %.3f s, %llu events (%.0f events/s), %llu op records (%.0f ns/record)\n",
           m_on, (unsigned long long)last_on.events, (double)last_on.events / m_on,
           (unsigned long long)last_on.records, m_on * 1e9 / (double)last_on.records);
    printf("  op log off: %.3f s, %llu events (%.0f events/s)   [baseline]\n", m_off,
           (unsigned long long)last_off.events, (double)last_off.events / m_off);
    printf("  op logging costs %.2fx the timing-only run\n", m_on / m_off);
    sim_config_free(cfg);
    return 0;
}
