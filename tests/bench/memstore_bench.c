/*
 * Memory store speed: ns per write and per read of an existing key (what phase 1 pays on
 * every tl_store / tl_load), over 1M operations on 4096 distinct addresses in a shuffled
 * order, median of 5 runs. The baseline is a plain array indexed by the same key numbers,
 * doing the same reference counting, measured in the same run.
 */
#include "sim/data/memstore.h"

#include <stdio.h>
#include <stdlib.h>
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
    return 0;
}
