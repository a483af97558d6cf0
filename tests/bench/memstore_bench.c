/*
 * Memory store speed: ns per write and per read of an existing key (what phase 1 pays on
 * every tl_store / tl_load), over 1M operations on 4096 distinct addresses in a shuffled
 * order, median of 5 runs. The baseline is a plain array indexed by the same key numbers,
 * doing the same reference counting, measured in the same run.
 *
 * Then pattern regions: 1 GiB loaded in 64 KiB tiles through the chip's memory functions
 * as tl_load does it (read the range from HBM, copy it, write it to TCM), from a zero
 * region and from the same region materialised, and the peak RSS each leaves.
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/data/memstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { NKEYS = 4096, NOPS = 1000000, RUNS = 5 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v)
{
    qsort(v, RUNS, sizeof(*v), cmp_double);
    return v[RUNS / 2];
}

static uint32_t keys[NOPS];
static uint64_t addrs[NKEYS];
static struct sim_tensor *tensors[NKEYS];
static struct sim_tensor *array[NKEYS];
static volatile size_t sink;

static double bench_store_write(struct sim_memstore *m)
{
    struct sim_memstore_writer w = {"tl_store", 0};
    double t0 = now_ns();
    for (uint32_t k = 0; k < NOPS; k++) {
        uint32_t i = keys[k];
        w.t_ns = (double)k;
        sim_memstore_write(m, "tcm", addrs[i], tensors[(i + k) & (NKEYS - 1)], &w);
    }
    return (now_ns() - t0) / NOPS;
}

static double bench_store_read(struct sim_memstore *m)
{
    size_t sum = 0;
    double t0 = now_ns();
    for (uint32_t k = 0; k < NOPS; k++) {
        struct sim_tensor *r;
        if (sim_memstore_read(m, "tcm", addrs[keys[k]], SIM_MEMSTORE_SAME_DTYPE, 0, NULL, &r,
                              NULL) == 0) {
            sum += r->nbytes;
            sim_tensor_unref(r);
        }
    }
    double ns = (now_ns() - t0) / NOPS;
    sink = sum;
    return ns;
}

static double bench_array_write(void)
{
    double t0 = now_ns();
    for (uint32_t k = 0; k < NOPS; k++) {
        uint32_t i = keys[k];
        struct sim_tensor *old = array[i];
        array[i] = sim_tensor_ref(tensors[(i + k) & (NKEYS - 1)]);
        sim_tensor_unref(old);
    }
    return (now_ns() - t0) / NOPS;
}

static double bench_array_read(void)
{
    size_t sum = 0;
    double t0 = now_ns();
    for (uint32_t k = 0; k < NOPS; k++) {
        struct sim_tensor *r = sim_tensor_ref(array[keys[k]]);
        sum += r->nbytes;
        sim_tensor_unref(r);
    }
    double ns = (now_ns() - t0) / NOPS;
    sink = sum;
    return ns;
}

/* ---- pattern regions ------------------------------------------------------------------- */

enum { REGION = 1 << 30, TILE = 64 << 10 };

static long peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* Load the 1 GiB region at HBM address 0 of chip in tiles, as tl_load's data path does;
 * returns the seconds. */
static double load_tiles(struct sim_chip *chip)
{
    int64_t n = TILE / 2; /* f16 elements */
    uint64_t tcm = sim_chip_dev_addr(0, 0);
    size_t sum = 0;
    double t0 = now_ns();
    for (uint64_t off = 0; off < REGION; off += TILE) {
        struct sim_tensor *t = NULL;
        if (sim_chip_mem_read(chip, "hbm", off, SIM_F16, 1, &n, &t, NULL) < 0)
            abort();
        struct sim_tensor *c = sim_tensor_copy(t);
        sim_tensor_unref(t);
        sim_chip_mem_write(chip, "tcm", tcm, c, "dma_read");
        sum += (size_t)sim_tensor_get(c, 0);
        sim_tensor_unref(c);
    }
    sink = sum;
    return (now_ns() - t0) / 1e9;
}

/* The 1 GiB f16 region at HBM address 0 of a new chip: a zero pattern, or real zeros. */
static struct sim_chip *region_chip(const struct sim_config *cfg, bool materialised)
{
    struct sim_chip *chip = sim_chip_new(cfg, 0);
    int64_t n = REGION / 2;
    struct sim_fill f = {.unit = 1};
    struct sim_tensor *t = sim_tensor_new_fill(SIM_F16, 1, &n, &f);
    if (materialised)
        memset(sim_tensor_data(t), 0, t->nbytes); /* every page resident */
    sim_chip_mem_write(chip, "hbm", 0, t, "MemoryWrite");
    sim_tensor_unref(t);
    return chip;
}

static void bench_patterns(void)
{
    struct sim_config *cfg;
    if (sim_config_load_embedded("sim/configs/large.yaml", &cfg, NULL) < 0)
        abort();
    double z[RUNS], m[RUNS];
    long rss0 = peak_rss_mib(), rss_zero = 0;
    for (int r = 0; r < RUNS; r++) {
        struct sim_chip *chip = region_chip(cfg, false);
        z[r] = load_tiles(chip);
        sim_chip_free(chip);
        rss_zero = peak_rss_mib();
    }
    for (int r = 0; r < RUNS; r++) {
        struct sim_chip *chip = region_chip(cfg, true);
        m[r] = load_tiles(chip);
        sim_chip_free(chip);
    }
    long rss_mat = peak_rss_mib();
    double mz = median(z), mm = median(m);
    unsigned tiles = REGION / TILE;
    printf("pattern regions: 1 GiB loaded in %u tiles of %d KiB (read, copy, write to TCM), "
           "median of %d runs\n",
           tiles, TILE >> 10, RUNS);
    printf("  zero region          %8.4f s  %7.3f us/tile   peak RSS +%ld MiB\n", mz,
           mz * 1e6 / tiles, rss_zero - rss0);
    printf("  materialised region  %8.4f s  %7.3f us/tile   peak RSS +%ld MiB\n", mm,
           mm * 1e6 / tiles, rss_mat - rss0);
    printf("  the pattern costs x%.4f of the materialised loads (target: nearly nothing)\n",
           mz / mm);
    sim_config_free(cfg);
}

int main(void)
{
    uint64_t x = 88172645463325252ull; /* xorshift64: a fixed, reproducible order */
    for (uint32_t k = 0; k < NOPS; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        keys[k] = (uint32_t)(x & (NKEYS - 1));
    }
    struct sim_memstore *m = sim_memstore_new();
    for (uint32_t i = 0; i < NKEYS; i++) {
        addrs[i] = 0x80000000ull + (uint64_t)i * 0x400; /* 1 KiB tiles, like TCM buffers */
        tensors[i] = sim_tensor_new(SIM_F16, 2, (int64_t[]){16, 32});
        array[i] = sim_tensor_ref(tensors[i]);
        sim_memstore_write(m, "tcm", addrs[i], tensors[i], NULL);
    }
    sim_memstore_write(m, "hbm", 0, tensors[0], NULL); /* more than one space to look in */
    sim_memstore_write(m, "sram", 0, tensors[0], NULL);

    double sw[RUNS], sr[RUNS], aw[RUNS], ar[RUNS];
    for (int r = 0; r < RUNS; r++) {
        aw[r] = bench_array_write();
        sw[r] = bench_store_write(m);
        ar[r] = bench_array_read();
        sr[r] = bench_store_read(m);
    }
    double msw = median(sw), msr = median(sr), maw = median(aw), mar = median(ar);
    printf("memstore: %d ops over %d addresses, median of %d runs\n", NOPS, NKEYS, RUNS);
    printf("  write  %6.1f ns/op   (plain array %5.1f ns/op, x%.1f)\n", msw, maw, msw / maw);
    printf("  read   %6.1f ns/op   (plain array %5.1f ns/op, x%.1f)\n", msr, mar, msr / mar);
    printf("  write+read %5.1f ns   (target: well under 100 ns)\n", msw + msr);

    sim_memstore_free(m);
    for (uint32_t i = 0; i < NKEYS; i++) {
        sim_tensor_unref(array[i]);
        sim_tensor_unref(tensors[i]);
    }
    bench_patterns();
    return 0;
}
