/*
 * The timing-fidelity microbenchmarks: runs of the simulator whose answer follows from the
 * chip config by hand (the formulas of sim/configs/README.md). tests/unit/test_fidelity.c
 * asserts each within its tolerance; tests/bench/fidelity_bench.c prints them as a table
 * (expected, simulated, ratio). Each case names its chip (NULL: the embedded default), a
 * `-k` spec, what is measured and the analytic value, computed from the loaded config.
 */
#ifndef TESTS_FIDELITY_CASES_H
#define TESTS_FIDELITY_CASES_H

#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/chip/oplog.h"
#include "sim/host/host.h"
#include "sim/host/run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum fid_measure {
    FID_MARKERS, /* first "<what>.begin" marker to the last "<what>.end" (ns) */
    FID_OP,      /* the first op record named <what>: its t_end - t_start (ns) */
    FID_REQUEST, /* host request 0: t_done - t_issue (ns) */
};

struct fid_case {
    const char *name;
    const char *chip; /* NULL: the default chip */
    const char *spec;
    enum fid_measure measure;
    const char *what;
    double (*expected)(const struct sim_config *c);
    double tolerance; /* |simulated / expected - 1| at most this */
    const char *why;  /* the bound and, beyond 3%, what the difference is */
};

#define FID_MIB (1024.0 * 1024.0)

/* One DMA transfer of n bytes alone between a PE and its cube's HBM (sim/configs/README.md):
 * setup, the bytes at the slowest of channel, HBM and cube links, the latencies once. */
static inline double fid_dma_one(const struct sim_config *c, double n)
{
    double bw = fmin(c->pe_dma.gbps, fmin(c->hbm.gbps, c->noc.cube.gbps));
    return c->pe_dma.setup_ns + n / bw + c->hbm.latency_ns + 2 * c->noc.cube.latency_ns;
}

/* Streaming 16 MiB in 64 KiB transfers over P PEs of one cube (P <= PEs per cube), each with
 * every channel busy: the larger of the DMA engines' time (transfers one after the other on
 * each channel, alone) and the cube's HBM (or its link to the router) moving all the bytes. */
static inline double fid_stream(const struct sim_config *c, double pes, double cubes)
{
    double total = 16 * FID_MIB, per_pe = total / pes, chunk = 65536;
    double t_dma = per_pe / chunk / c->pe_dma.channels * fid_dma_one(c, chunk);
    double t_hbm = total / cubes / fmin(c->hbm.gbps, c->noc.cube.gbps);
    return fmax(t_dma, t_hbm);
}

static inline double fid_stream1(const struct sim_config *c)
{
    return fid_stream(c, 1, 1);
}
static inline double fid_stream2(const struct sim_config *c)
{
    return fid_stream(c, 2, 1);
}
static inline double fid_stream4(const struct sim_config *c)
{
    return fid_stream(c, 4, 1);
}
static inline double fid_stream8(const struct sim_config *c)
{
    return fid_stream(c, 8, 2);
}

/* The whole 16 MiB in cube0's HBM, read by 8 PEs of two cubes: cube1's half crosses the
 * cube0 -> cube1 link. */
static inline double fid_stream_cross(const struct sim_config *c)
{
    double half = 8 * FID_MIB;
    return fmax(2 * half / fmin(c->hbm.gbps, c->noc.cube.gbps), half / c->noc.cube_cube.gbps);
}

static inline double fid_dma_64(const struct sim_config *c)
{
    return fid_dma_one(c, 64);
}
static inline double fid_dma_4k(const struct sim_config *c)
{
    return fid_dma_one(c, 4096);
}
static inline double fid_dma_64k(const struct sim_config *c)
{
    return fid_dma_one(c, 65536);
}
static inline double fid_dma_1m(const struct sim_config *c)
{
    return fid_dma_one(c, FID_MIB);
}

/* A MemoryWrite of n bytes from a host buffer into cube0's HBM: the 64-byte header over
 * the host link, the IO_CPU, the route io_cpu -> noc -> hbm; the payload streamed over all
 * of them and the HBM port at the slowest one's rate, the HBM's latency; the completion
 * back the same way. */
static inline double fid_host_write(const struct sim_config *c, double n)
{
    double host = c->noc.host.latency_ns + 64 / c->noc.host.gbps;
    double route = c->noc.host.latency_ns + c->noc.cube.latency_ns +
                   64 / fmin(c->noc.host.gbps, c->noc.cube.gbps);
    double bw = fmin(c->noc.host.gbps, fmin(c->noc.cube.gbps, c->hbm.gbps));
    return 2 * host + 2 * c->io_cpu.overhead_ns + 2 * route + c->hbm.latency_ns + n / bw;
}

static inline double fid_host_4k(const struct sim_config *c)
{
    return fid_host_write(c, 4096);
}
static inline double fid_host_1m(const struct sim_config *c)
{
    return fid_host_write(c, FID_MIB);
}
static inline double fid_host_16m(const struct sim_config *c)
{
    return fid_host_write(c, 16 * FID_MIB);
}

/* One 64 x 64 x 1024 f16 GEMM tile, operands in TCM: setup + m n k / MACs per cycle. */
static inline double fid_gemm_tile(const struct sim_config *c)
{
    return c->pe_gemm.setup_ns +
           ceil(64.0 * 64 * 1024 / c->pe_gemm.macs_per_cycle.f16) / c->clock_ghz;
}

/* C = A @ B, f32 2048^3 on one PE: 1024 tiles of 64 x 64 x 2048 back to back on the GEMM
 * engine (each tile's 1 MiB read, on its own DMA channel, is shorter than a tile's GEMM:
 * with two tiles in flight the reads hide under the GEMMs). */
static inline double fid_gemm_peak(const struct sim_config *c)
{
    double tile =
        c->pe_gemm.setup_ns + ceil(64.0 * 64 * 2048 / c->pe_gemm.macs_per_cycle.f32) / c->clock_ghz;
    return 32 * 32 * tile;
}

/* f16 1024^3 on 8 PEs, B (2 MiB) in cube0's HBM only: each of cube1's 4 PEs reads a 128 KiB
 * column block of B per tile, 32 tiles, all over the cube0 -> cube1 link. */
static inline double fid_gemm_remote(const struct sim_config *c)
{
    double bytes = 4 * 32 * 1024.0 * 64 * 2;
    return bytes / c->noc.cube_cube.gbps;
}

/* An all-reduce over IPCQ on the ring of P PEs (allreduce_ring, one round: a chunk of
 * n / P f32 elements fits a piece), in the order the kernel's ops run on the ring's
 * critical chain: each step waits for the chunk from its left neighbour. A DMA between a
 * PE's TCM and a memory of its cube: setup, the bytes at the slowest of channel, memory
 * and cube links, the memory's and the two links' latencies. An IPCQ send: the payload
 * over the route to the right neighbour (cut-through at its slowest link, the latencies
 * once), then the receiver's DMA copying it into its SRAM slot. An add: setup + a group of
 * lanes per cycle. Every op also costs its issue and the PE link both ways; the PEs start
 * one m_cpu overhead apart. */
static inline double fid_allreduce(const struct sim_config *c, double P, double n, bool cross)
{
    double b = n * 4 / P, elems = n / P;
    double dma = c->pe_dma.setup_ns + 2 * c->noc.cube.latency_ns;
    double hbm =
        dma + b / fmin(c->pe_dma.gbps, fmin(c->hbm.gbps, c->noc.cube.gbps)) + c->hbm.latency_ns;
    double sram =
        dma + b / fmin(c->pe_dma.gbps, fmin(c->sram.gbps, c->noc.cube.gbps)) + c->sram.latency_ns;
    double link_bw = cross ? fmin(c->noc.cube.gbps, c->noc.cube_cube.gbps) : c->noc.cube.gbps;
    double link_lat = 2 * c->noc.cube.latency_ns + (cross ? c->noc.cube_cube.latency_ns : 0);
    double send = b / link_bw + link_lat + sram;
    double add =
        c->pe_math.setup_ns + ceil(elems / c->pe_math.lanes) * c->pe_math.cycles.add / c->clock_ghz;
    double ops = 2 + 4 * (P - 1) + 1 + 3 * (P - 1) - 1;
    return hbm + send                            /* this PE's own piece, out */
           + (P - 2) * (sram + hbm + add + send) /* reduce-scatter: partial sums passed on */
           + (sram + hbm + add + hbm)            /* its last step: the chunk's sum stored */
           + send                                /* all-gather: the full chunk out */
           + (P - 2) * (sram + hbm + send)       /* full chunks stored and passed on */
           + (sram + hbm)                        /* the last one stored */
           + ops * (c->pe_cpu.issue_ns + 2 * c->noc.pe.latency_ns) + (P - 1) * c->m_cpu.overhead_ns;
}

static inline double fid_allreduce4(const struct sim_config *c)
{
    return fid_allreduce(c, 4, 65536, false);
}
static inline double fid_allreduce8(const struct sim_config *c)
{
    return fid_allreduce(c, 8, 131072, true);
}

static const struct fid_case fid_cases[] = {
    {"stream 1 PE", NULL, "stream:n=16777216,chunk=65536,pes=1,data=zero", FID_MARKERS, "stream",
     fid_stream1, 0.03, "DMA: 2 channels of 64 KiB transfers back to back"},
    {"stream 2 PEs", NULL, "stream:n=16777216,chunk=65536,pes=2,data=zero", FID_MARKERS, "stream",
     fid_stream2, 0.03, "DMA (the HBM just keeps up)"},
    {"stream 4 PEs", NULL, "stream:n=16777216,chunk=65536,pes=4,data=zero", FID_MARKERS, "stream",
     fid_stream4, 0.03, "the cube's HBM"},
    {"stream 8 PEs, 2 cubes", NULL, "stream:n=16777216,chunk=65536,pes=8,data=zero", FID_MARKERS,
     "stream", fid_stream8, 0.03, "both cubes' HBMs"},
    {"stream 8 PEs from cube0", NULL, "stream:n=16777216,chunk=65536,pes=8,split=0,data=zero",
     FID_MARKERS, "stream", fid_stream_cross, 0.03, "the cube0 -> cube1 link"},
    {"one DMA of 64 B", NULL, "stream:n=64,chunk=64,depth=1,data=zero", FID_OP, "dma_read",
     fid_dma_64, 0.03, "setup + HBM and link latencies"},
    {"one DMA of 4 KiB", NULL, "stream:n=4096,chunk=4096,depth=1,data=zero", FID_OP, "dma_read",
     fid_dma_4k, 0.03, "latencies + the channel's rate"},
    {"one DMA of 64 KiB", NULL, "stream:n=65536,chunk=65536,depth=1,data=zero", FID_OP, "dma_read",
     fid_dma_64k, 0.03, "the channel's rate"},
    {"one DMA of 1 MiB", "sim/configs/large.yaml", "stream:n=1048576,chunk=1048576,depth=1", FID_OP,
     "dma_read", fid_dma_1m, 0.03, "the channel's rate (large chip)"},
    {"host write 4 KiB", NULL, "stream:n=4096,chunk=4096,data=random", FID_REQUEST, NULL,
     fid_host_4k, 0.03, "latencies: header out and back, IO_CPU twice"},
    {"host write 1 MiB", NULL, "stream:n=1048576,chunk=4096,data=random", FID_REQUEST, NULL,
     fid_host_1m, 0.03, "the host link, cut-through"},
    {"host write 16 MiB", NULL, "stream:n=16777216,chunk=4096,data=random", FID_REQUEST, NULL,
     fid_host_16m, 0.03, "the host link, cut-through"},
    {"GEMM tile in TCM", NULL, "gemm:m=64,n=64,k=1024,dtype=f16,pes=1,data=zero", FID_OP,
     "TileToken/GEMM", fid_gemm_tile, 0.03, "the TE at its MACs per cycle"},
    {"GEMM f32 2048^3, 1 PE", NULL, "gemm:m=2048,n=2048,k=2048,dtype=f32,pes=1,data=zero",
     FID_MARKERS, "gemm", fid_gemm_peak, 0.03, "TE peak (the reads hidden)"},
    {"GEMM f16 1024^3, B in cube0", NULL, "gemm:m=1024,n=1024,k=1024,dtype=f16,pes=8,data=zero",
     FID_MARKERS, "gemm", fid_gemm_remote, 0.05,
     "cube0 -> cube1 link carrying B; + 3.5%: the last tiles' GEMM and write after it, and "
     "workers computing leave it idle at times"},
    {"all-reduce, ring of 4 PEs", NULL, "allreduce_ring:n=65536,pes=4,data=zero", FID_MARKERS,
     "allreduce", fid_allreduce4, 0.03, "IPCQ steps on the ring, one cube"},
    {"all-reduce, ring of 8 PEs", NULL, "allreduce_ring:n=131072,pes=8,data=zero", FID_MARKERS,
     "allreduce", fid_allreduce8, 0.06,
     "IPCQ steps on the ring over two cubes; -5%: the value charges every step the "
     "cube_cube link, which 2 of the ring's 8 edges cross (an upper bound)"},
};

enum { FID_N_CASES = sizeof(fid_cases) / sizeof(fid_cases[0]) };

/* Run case k; the simulated value in ns, its expected value in *expected, or -1 when the
 * run failed or had nothing to measure (err says why). */
static inline double fid_run(const struct fid_case *k, double *expected, char *err, size_t size)
{
    struct sim_run_opts o = {.chip_file = k->chip, .kernel_spec = k->spec};
    struct sim_run *r;
    struct diag d;
    if (sim_run_new(&o, &r, &d) < 0) {
        snprintf(err, size, "%.200s", d.msg);
        return -1;
    }
    sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_chip *chip = sim_run_chip(r);
    *expected = k->expected(sim_chip_config(chip));
    double v = -1, lo = INFINITY, hi = -INFINITY;
    char begin[64], end[64];
    switch (k->measure) {
    case FID_MARKERS:
        /* allreduce_ring marks its start "allreduce.reduce_scatter" */
        snprintf(begin, sizeof(begin), "%s.%s", k->what,
                 strcmp(k->what, "allreduce") == 0 ? "reduce_scatter" : "begin");
        snprintf(end, sizeof(end), "%s.end", k->what);
        for (size_t i = 0; i < sim_chip_marker_count(chip); i++) {
            const struct sim_chip_marker *m = sim_chip_marker(chip, i);
            if (strcmp(m->name, begin) == 0 && m->t_ns < lo)
                lo = m->t_ns;
            if (strcmp(m->name, end) == 0 && m->t_ns > hi)
                hi = m->t_ns;
        }
        v = hi >= lo ? hi - lo : -1;
        break;
    case FID_OP: {
        size_t n;
        struct sim_op_record *const *rec = sim_oplog_records(sim_chip_oplog(chip), &n);
        for (size_t i = 0; i < n && v < 0; i++)
            if (strcmp(rec[i]->op_name, k->what) == 0)
                v = rec[i]->t_end - rec[i]->t_start;
        break;
    }
    case FID_REQUEST:
        if (sim_host_result_count(sim_run_host(r))) {
            const struct sim_host_result *h = sim_host_result(sim_run_host(r), 0);
            v = h->t_done_ns - h->t_issue_ns;
        }
        break;
    }
    if (v < 0)
        snprintf(err, size, "nothing to measure");
    sim_run_free(r);
    return v;
}

#endif
