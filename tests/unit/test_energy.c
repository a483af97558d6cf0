/*
 * Energy and power (trace/analysis/energy.h): totals against hand-computed figures of the
 * tiny chip's round numbers (a GEMM of known size, a DMA of known bytes over a known
 * route), power samples that add up to the total, a live run whose streamed trace carries
 * the same counts as its events give loaded back, and traces without energy.
 */
#include "sim/chip/config.h"
#include "sim/host/run.h"
#include "trace/analysis/energy.h"
#include "trace/file/loader.h"
#include "trace/live/live.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tiny chip's config_snapshot, as a live run writes it (clock_ghz at the top). */
static struct sim_value *tiny_snapshot(void)
{
    struct sim_config *c;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &c, &d), 0, "%s", d.msg);
    struct sim_value *v = sim_value_clone(c->snapshot);
    sim_value_map_set_float(v, "clock_ghz", c->clock_ghz);
    sim_config_free(c);
    return v;
}

static struct sim_value *shape(int64_t a, int64_t b)
{
    int64_t v[2] = {a, b};
    return sim_value_int_list(v, 2);
}

static uint64_t add_op(struct trace_model *m, const char *track, enum trace_engine eng,
                       const char *op, enum trace_op_kind kind, uint64_t s, uint64_t e,
                       struct sim_value *details)
{
    struct trace_event ev = {
        .start = s,
        .end = e,
        .track = trace_model_track(m, track, eng, 0),
        .op = trace_model_intern(m, op, strlen(op)),
        .cmdq_id = TRACE_NO_CMDQ,
        .op_kind = (uint8_t)kind,
    };
    uint64_t i = trace_model_add_event(m, &ev);
    trace_model_set_details_take(m, i, details);
    return i;
}

static void add_res(struct trace_model *m, const char *name, uint64_t cycle, uint64_t rd,
                    uint64_t wr)
{
    struct trace_bw_sample s = {cycle, 1024, rd, wr, trace_model_intern(m, name, strlen(name))};
    trace_model_add_bw_sample(m, &s);
}

/* A GEMM of 32 x 64 by 64 x 16 in f32, its operands and result in TCM, on the tiny chip. */
static void add_gemm(struct trace_model *m)
{
    struct sim_value *g = sim_value_map();
    sim_value_map_set_int(g, "m", 32);
    sim_value_map_set_int(g, "n", 16);
    sim_value_map_set_int(g, "k", 64);
    sim_value_map_set_str(g, "dtype_in", "f32");
    sim_value_map_set_str(g, "dtype_out", "f32");
    sim_value_map_set_str(g, "src_a_space", "tcm");
    sim_value_map_set_int(g, "src_a_addr", 0);
    sim_value_map_set_take(g, "shape_a", shape(32, 64));
    sim_value_map_set_str(g, "src_b_space", "tcm");
    sim_value_map_set_int(g, "src_b_addr", 8192);
    sim_value_map_set_take(g, "shape_b", shape(64, 16));
    sim_value_map_set_str(g, "dst_space", "tcm");
    sim_value_map_set_int(g, "dst_addr", 12288);
    sim_value_map_set_take(g, "shape_out", shape(32, 16));
    add_op(m, "sip0.cube0.pe0.pe_gemm", TRACE_ENGINE_TE, "gemm_f32", TRACE_KIND_GEMM, 100, 400, g);
}

/* A DMA of 4096 bytes from the cube's HBM into pe1's TCM: its route is hbm -cube- noc
 * -cube- pe_dma (the resource samples meter both links and the HBM), then one pe link. */
static void add_dma(struct trace_model *m)
{
    struct sim_value *d = sim_value_map();
    sim_value_map_set_int(d, "nbytes", 4096);
    sim_value_map_set_str(d, "src_space", "hbm");
    sim_value_map_set_int(d, "src_addr", 0);
    sim_value_map_set_str(d, "dst_space", "tcm");
    sim_value_map_set_int(d, "dst_addr", 0);
    add_op(m, "sip0.cube0.pe1.pe_dma", TRACE_ENGINE_DMA, "dma_read", TRACE_KIND_MEMORY, 1024, 1800,
           d);
    add_res(m, "sip0.cube0.hbm", 1024, 4096, 0);
    add_res(m, "sip0.cube0.noc<->sip0.cube0.hbm", 1024, 4096, 0);
    add_res(m, "sip0.cube0.noc<->sip0.cube0.pe1.pe_dma", 1024, 0, 4096);
}

/* Tiny's leakage: HBM 1 W, two GEMM engines of 64 f16 MACs at 1 W per 1024. */
#define TINY_STATIC_W 1.125

Test(energy, a_gemm_of_known_size)
{
    struct trace_model *m = trace_model_new();
    trace_model_set_config_take(m, tiny_snapshot());
    add_gemm(m);
    trace_model_finish(m);
    struct trace_energy e;
    cr_assert(trace_energy_compute(m, 0, &e, NULL, NULL));
    /* 32 x 16 x 64 MACs at 1 pJ; TCM reads of A (8 KiB) and B (4 KiB) and the write of C
     * (2 KiB) at 1 pJ/B, each byte over one pe link at 1 pJ/B; one command at 100 pJ */
    cr_assert_eq(e.count[TRACE_EA_MAC_F32], 32768);
    cr_assert_eq(e.count[TRACE_EA_TCM_READ], 12288);
    cr_assert_eq(e.count[TRACE_EA_TCM_WRITE], 2048);
    cr_assert_eq(e.count[TRACE_EA_NOC_PE], 14336);
    cr_assert_eq(e.count[TRACE_EA_PE_CPU_MSG], 1);
    double dyn_pj = 32768 + 12288 + 2048 + 14336 + 100;
    cr_assert_float_eq(e.dynamic_j, dyn_pj * 1e-12, 1e-18);
    cr_assert_float_eq(e.kind_j[TRACE_EK_GEMM], 32768e-12, 1e-18);
    /* 400 cycles at 1 GHz */
    cr_assert_float_eq(e.seconds, 400e-9, 1e-15);
    cr_assert_float_eq(e.static_j, TINY_STATIC_W * 400e-9, 1e-18);
    cr_assert_float_eq(e.total_j, dyn_pj * 1e-12 + TINY_STATIC_W * 400e-9, 1e-18);
    cr_assert_float_eq(e.avg_power_w, e.total_j / 400e-9, 1e-9);
    trace_model_free(m);
}

Test(energy, a_dma_of_known_bytes_over_a_known_route)
{
    struct trace_model *m = trace_model_new();
    trace_model_set_config_take(m, tiny_snapshot());
    add_dma(m);
    trace_model_finish(m);
    struct trace_energy e;
    cr_assert(trace_energy_compute(m, 0, &e, NULL, NULL));
    /* HBM read 4096 B at 10 pJ; two cube links at 1 pJ/B; the TCM write and its pe link at
     * 1 pJ/B each; one command */
    cr_assert_eq(e.count[TRACE_EA_HBM_READ], 4096);
    cr_assert_eq(e.count[TRACE_EA_NOC_CUBE], 8192);
    cr_assert_eq(e.count[TRACE_EA_TCM_WRITE], 4096);
    cr_assert_eq(e.count[TRACE_EA_NOC_PE], 4096);
    cr_assert_eq(e.count[TRACE_EA_HBM_WRITE], 0);
    double dyn_pj = 40960 + 8192 + 4096 + 4096 + 100;
    cr_assert_float_eq(e.dynamic_j, dyn_pj * 1e-12, 1e-18);
    cr_assert_float_eq(e.kind_j[TRACE_EK_HBM], 40960e-12, 1e-18);
    cr_assert_float_eq(e.kind_j[TRACE_EK_NOC], (8192 + 4096) * 1e-12, 1e-18);
    double share;
    cr_assert_eq(trace_energy_top_action(&e, &share), TRACE_EA_HBM_READ);
    cr_assert_float_eq(share, 40960e-12 / e.total_j, 1e-12);
    trace_model_free(m);
}

Test(energy, power_samples_add_up_to_the_total)
{
    struct trace_model *m = trace_model_new();
    trace_model_set_config_take(m, tiny_snapshot());
    add_gemm(m);
    add_dma(m);
    trace_model_finish(m);
    struct trace_energy e;
    struct trace_power_sample *s;
    size_t n;
    cr_assert(trace_energy_compute(m, 256, &e, &s, &n));
    cr_assert_eq(n, 8, "windows of 256 cycles over [0, 2048)");
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(s[i].cycle, i * 256);
        for (int k = 0; k < TRACE_POWER_KINDS; k++)
            sum += s[i].joules[k];
    }
    cr_assert_float_eq(sum, e.total_j, e.total_j * 1e-12);
    /* the GEMM's MACs spread over its span [100, 400): 156/300 of them in window 0 */
    cr_assert_float_eq(s[0].joules[TRACE_EK_GEMM], 32768e-12 * 156 / 300, 1e-18);
    cr_assert_float_eq(s[4].joules[TRACE_EK_GEMM], 0, 1e-30);
    free(s);
    trace_model_free(m);
}

Test(energy, without_a_table_the_energy_is_unknown)
{
    struct trace_model *m = trace_model_new();
    struct sim_value *snap = tiny_snapshot();
    sim_value_map_del(snap, "energy");
    trace_model_set_config_take(m, snap);
    add_gemm(m);
    trace_model_finish(m);
    struct trace_energy e;
    cr_assert(!trace_energy_compute(m, 0, &e, NULL, NULL));
    cr_assert(!trace_energy_of_model(m, &e));
    cr_assert(!e.known);
    cr_assert_null(trace_energy_to_value(&e));
    trace_model_free(m);
}

Test(energy, resource_names_say_their_class)
{
    cr_assert_eq(trace_energy_resource_action("sip0.cube1.hbm", false), TRACE_EA_HBM_READ);
    cr_assert_eq(trace_energy_resource_action("sip0.cube1.hbm", true), TRACE_EA_HBM_WRITE);
    cr_assert_eq(trace_energy_resource_action("host<->sip0.io_cpu", true), TRACE_EA_NOC_HOST);
    cr_assert_eq(trace_energy_resource_action("sip0.io_cpu<->sip0.cube1.noc", false),
                 TRACE_EA_NOC_HOST);
    cr_assert_eq(trace_energy_resource_action("sip0.cube0.noc<->sip0.cube1.noc", false),
                 TRACE_EA_NOC_CUBE_CUBE);
    cr_assert_eq(trace_energy_resource_action("sip0.cube0.noc<->sip1.cube0.noc", false),
                 TRACE_EA_NOC_SIP_SIP);
    cr_assert_eq(trace_energy_resource_action("sip0.cube0.noc<->sip0.cube0.m_cpu", false),
                 TRACE_EA_NOC_CUBE);
    cr_assert_eq(trace_energy_resource_action("sip0.cube0.noc<->sip0.cube0.pe3.pe_dma", true),
                 TRACE_EA_NOC_CUBE);
}

/* A live run on the tiny chip streams a trace whose energy is the one its events, resource
 * samples and config_snapshot give when loaded back, count for count. */
Test(energy, a_live_run_and_its_trace_loaded_back_agree)
{
    char path[320];
    const char *t = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/npuscope-energy-%d.json", t && *t ? t : P_tmpdir,
             (int)getpid());
    struct sim_run_opts ro = {.chip_file = "sim/configs/tiny.yaml",
                              .kernel_spec = "gemm:m=32,n=32,k=32,pes=2"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    struct trace_live_opts o = {.trace_path = path, .prefill_tokens = -1, .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(r), &o, &l, &d), 0, "%s", d.msg);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 50);
        trace_live_sync(l);
    }
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);
    struct trace_energy live;
    cr_assert(trace_energy_of_model(trace_live_model(l), &live));

    struct trace_report *rep = trace_report_new(16);
    struct trace_model *m;
    cr_assert_eq(trace_load_file(path, rep, &m, &d), 0, "%s", d.msg);
    cr_assert_eq(trace_report_warnings(rep) + trace_report_errors(rep), 0);
    struct trace_energy file, again;
    cr_assert(trace_energy_of_model(m, &file), "the file's block");
    cr_assert(trace_energy_compute(m, 0, &again, NULL, NULL), "from its events");
    cr_assert_eq(file.count[TRACE_EA_MAC_F32], 32768, "32 x 32 x 32 MACs, counted once");
    for (int i = 0; i < TRACE_EA_COUNT; i++)
        cr_assert_eq(file.count[i], again.count[i], "%s: %llu in the file, %llu from its events",
                     trace_energy_action_key(i), (unsigned long long)file.count[i],
                     (unsigned long long)again.count[i]);
    cr_assert_float_eq(file.total_j, again.total_j, again.total_j * 1e-9);
    cr_assert_gt(file.count[TRACE_EA_HBM_READ], 0);
    cr_assert_gt(file.count[TRACE_EA_IO_CPU_MSG], 0);
    double sum = 0;
    for (size_t i = 0; i < trace_model_power_count(m); i++)
        for (int k = 0; k < TRACE_POWER_KINDS; k++)
            sum += trace_model_power(m, i)->joules[k];
    cr_assert_float_eq(sum, file.total_j, file.total_j * 1e-9, "the file's samples add up");
    trace_model_free(m);
    trace_report_free(rep);
    trace_live_free(l);
    sim_run_free(r);
    remove(path);
}

Test(energy, an_old_trace_loads_with_its_energy_unknown)
{
    static const char old[] = "{\"version\":\"1.0\",\"run_metadata\":{},\"config_snapshot\":"
                              "{\"clock_ghz\":1},\"timeline_events\":[],\"bandwidth_samples\":[],"
                              "\"summary_metrics\":{\"cycles_total\":0}}";
    struct trace_report *rep = trace_report_new(16);
    struct trace_model *m;
    struct diag d;
    cr_assert_eq(trace_load_buffer(old, strlen(old), "old.json", rep, &m, &d), 0, "%s", d.msg);
    struct trace_energy e;
    cr_assert(!trace_energy_of_model(m, &e));
    cr_assert_eq(trace_model_power_count(m), 0);
    trace_model_free(m);
    trace_report_free(rep);
}
