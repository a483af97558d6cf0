/*
 * The kernel API's phase-1 semantics (ADR-0020 D3) on the tiny chip: loads return real
 * data and kernels branch on it; stores are visible at issue; compute results are pending
 * and reading them stops only that kernel; the runner leaves logging to the components.
 * Times are computed by hand from sim/configs/tiny.yaml (see test_component.c).
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/chip/oplog.h"
#include "sim/kernel/runner.h"
#include "sim/kernel/tl.h"
#include "sim/kernel/tl_int.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define NS(x) ((sim_time_t)(x)*SIM_TICKS_PER_NS)

static struct sim_config *cfg;
static struct sim_chip *chip;

static void setup_tiny(void)
{
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    chip = sim_chip_new(cfg, 0);
}

static void teardown_tiny(void)
{
    sim_chip_free(chip);
    sim_config_free(cfg);
}

TestSuite(tl, .init = setup_tiny, .fini = teardown_tiny);

/* n f32 values v0, v0 + step, ... at PA pa of PE pe's HBM window. */
static void put(int pe, uint64_t pa, int64_t n, double v0, double step)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n);
    for (int64_t i = 0; i < n; i++)
        sim_tensor_set(t, (size_t)i, v0 + step * (double)i);
    sim_chip_mem_write(chip, "hbm", sim_chip_dev_addr(pe, pa), t, "test");
    sim_tensor_unref(t);
}

/* The HBM tensor at pa of the kernel's PE (an argument without a launch). */
static struct tl_tensor *hbm(struct tl *tl, uint64_t pa, int64_t n)
{
    struct kshard s = {0, 0, 0, pa, (uint64_t)n * 4, 0};
    sscanf(tl_pe_id(tl), "sip%d.cube%d.pe%d", &s.sip, &s.cube, &s.pe);
    struct karg arg = {.is_tensor = true,
                       .has_dtype = true,
                       .dtype = SIM_F32,
                       .ndim = 1,
                       .shape = {n},
                       .shards = &s,
                       .n_shards = 1,
                       .mine = 0};
    struct kargs a = {.n = 1, .v = &arg};
    return tl_arg(tl, &a, 0); /* the handle does not keep arg or s */
}

static struct sim_proc *start(const char *name, sim_kernel_fn fn, int pe)
{
    return sim_runner_run(chip, name, fn, NULL, pe);
}

static void run_all(void)
{
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
}

static size_t records(struct sim_op_record *const **r)
{
    size_t n;
    *r = sim_oplog_records(sim_chip_oplog(chip), &n);
    return n;
}

/* ---- timing through the components --------------------------------------------------------- */

static void load_add_store(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 256));
    struct tl_tensor *y = tl_load(tl, hbm(tl, 0x400, 256));
    struct tl_tensor *s = tl_add(tl, x, y);
    tl_store(tl, hbm(tl, 0x800, 256), s);
}

Test(tl, each_call_is_issued_by_the_pe_cpu_and_timed_by_its_engine)
{
    put(0, 0x0, 256, 0, 1);
    put(0, 0x400, 256, 0, 1);
    struct sim_proc *p = start("las", load_add_store, 0);
    run_all();
    cr_assert(sim_proc_done(p));
    cr_assert_null(sim_proc_error(p));
    /* load x: issue 1; pe link 64 / 32 + 1 = 3 (starts at 4); DMA 10 + max(channel
     * 1024 / 4, HBM 1024 / 8, links 1024 / 16) + HBM 50 + links 2 + 2 = 320: [4, 324].
     * load y: [328, 648]. add of 256 elements on the MATH engine: issue to 649, link to
     * 652, 2 + 256 / 16 = 18: [652, 670]. store: issue to 671, link to 674, DMA 320:
     * [674, 994] */
    struct sim_op_record *const *r;
    cr_assert_eq(records(&r), 4);
    const char *names[4] = {"dma_read", "dma_read", "add", "dma_write"};
    const double t0[4] = {4, 328, 652, 674}, t1[4] = {324, 648, 670, 994};
    for (int i = 0; i < 4; i++) {
        cr_assert_str_eq(r[i]->op_name, names[i]);
        cr_assert_float_eq(r[i]->t_start, t0[i], 1e-9, "%s", names[i]);
        cr_assert_float_eq(r[i]->t_end, t1[i], 1e-9, "%s", names[i]);
        cr_assert_str_eq(r[i]->note.kernel, "las");
    }
    cr_assert_str_eq(r[2]->component_id, "sip0.cube0.pe0.pe_math");
    /* the PE_CPU issued four commands, 1 ns each */
    int cpu = sim_topo_find(sim_chip_topo(chip), "sip0.cube0.pe0.pe_cpu");
    cr_assert_eq(sim_component_busy(sim_chip_component(chip, cpu)), NS(4));
    /* the add's record names its TCM inputs, whose data the load put there */
    const struct sim_value *snaps = sim_value_map_get(r[2]->params, "input_snapshots");
    cr_assert_eq(snaps->u.list.items[1]->type, SIM_V_TENSOR);
    cr_assert_float_eq(sim_tensor_get(snaps->u.list.items[1]->u.tensor, 5), 5.0, 0);
}

/* ---- phase-1 data -------------------------------------------------------------------------- */

static double seen[4];

static void store_then_load(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 4));
    /* the store is visible when issued: a load right after it (the DMA still running)
     * sees the new data */
    struct tl_tensor *w = tl_store_async(tl, hbm(tl, 0x100, 4), x);
    struct tl_tensor *back = tl_load(tl, hbm(tl, 0x100, 4));
    for (int i = 0; i < 4; i++)
        seen[i] = tl_get(tl, back, (uint64_t)i);
    tl_wait(tl, w);
}

Test(tl, a_load_after_a_store_sees_the_stored_data)
{
    put(0, 0x0, 4, 7, 1);
    put(0, 0x100, 4, -1, 0);
    struct sim_proc *p = start("stl", store_then_load, 0);
    run_all();
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(seen[i], 7.0 + i, 0);
}

static void branch(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *flag = tl_load(tl, hbm(tl, 0x0, 1));
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x40, 4));
    if (tl_get(tl, flag, 0) > 0.5)
        tl_exp(tl, x);
    else
        tl_neg(tl, x);
}

static const char *branch_taken(double flag)
{
    static char name[32];
    teardown_tiny();
    setup_tiny();
    put(0, 0x0, 1, flag, 0);
    put(0, 0x40, 4, 1, 1);
    start("branch", branch, 0);
    run_all();
    struct sim_op_record *const *r;
    size_t n = records(&r);
    cr_assert_eq(n, 3);
    snprintf(name, sizeof(name), "%s", r[2]->op_name);
    return name;
}

Test(tl, a_kernel_branches_on_loaded_data)
{
    cr_assert_str_eq(branch_taken(1.0), "exp");
    cr_assert_str_eq(branch_taken(0.0), "neg");
}

static void read_pending(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 16));
    struct tl_tensor *e = tl_exp(tl, x);
    tl_wait(tl, e); /* timing only: still pending */
    cr_assert(tl_is_pending(e));
    tl_data(tl, e);
    tl_neg(tl, x); /* never reached */
}

static int other_done;

static void other(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 16));
    tl_add(tl, x, x);
    other_done = 1;
}

Test(tl, reading_a_pending_result_stops_only_that_kernel)
{
    put(0, 0x0, 16, 0, 1);
    put(1, 0x0, 16, 0, 1);
    other_done = 0;
    struct sim_proc *bad = start("softmax", read_pending, 1);
    struct sim_proc *good = start("other", other, 0);
    run_all();
    cr_assert(sim_proc_done(bad));
    cr_assert_str_eq(sim_proc_error(bad),
                     "kernel 'softmax' on sip0.cube0.pe1: tl_data() on the pending result of "
                     "'exp': compute results are not available in phase 1 (ADR-0020 D3)");
    cr_assert(sim_proc_done(good));
    cr_assert_null(sim_proc_error(good));
    cr_assert_eq(other_done, 1);
    /* the failed kernel's ops up to the failure were logged, nothing after it */
    struct sim_op_record *const *r;
    size_t n = records(&r), neg = 0;
    for (size_t i = 0; i < n; i++)
        neg += strcmp(r[i]->op_name, "neg") == 0;
    cr_assert_eq(neg, 0);
    cr_assert_eq(n, 4); /* two loads, exp, add */
    cr_assert_eq(sim_engine_live_procs(sim_chip_engine(chip)), 0);
}

static void get_pending(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 4));
    tl_get(tl, tl_mul(tl, x, x), 0);
}

Test(tl, element_access_of_a_pending_result_is_the_same_error)
{
    put(0, 0x0, 4, 1, 1);
    struct sim_proc *p = start("k", get_pending, 0);
    run_all();
    cr_assert_str_eq(sim_proc_error(p),
                     "kernel 'k' on sip0.cube0.pe0: tl_get() on the pending result of 'mul': "
                     "compute results are not available in phase 1 (ADR-0020 D3)");
}

static void store_pending_then_load(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 4));
    tl_store(tl, hbm(tl, 0x100, 4), tl_sqrt(tl, x)); /* binds the destination */
    struct tl_tensor *back = tl_load(tl, hbm(tl, 0x100, 4));
    cr_assert(tl_is_pending(back));
    tl_data(tl, back);
}

Test(tl, a_stored_pending_result_loads_back_pending)
{
    put(0, 0x0, 4, 1, 1);
    put(0, 0x100, 4, 9, 0); /* stale data the load must not return */
    struct sim_proc *p = start("k", store_pending_then_load, 0);
    run_all();
    cr_assert_str_eq(sim_proc_error(p),
                     "kernel 'k' on sip0.cube0.pe0: tl_data() on the pending result of 'sqrt': "
                     "compute results are not available in phase 1 (ADR-0020 D3)");
    /* the records: load, sqrt, the store (dma_write), the load back */
    struct sim_op_record *const *r;
    cr_assert_eq(records(&r), 4);
    cr_assert_str_eq(r[2]->op_name, "dma_write");
}

static void load_unwritten(struct tl *tl, const struct kargs *a)
{
    (void)a;
    tl_load(tl, hbm(tl, 0x5000, 4));
}

Test(tl, loading_memory_never_written_stops_the_kernel)
{
    struct sim_proc *p = start("k", load_unwritten, 0);
    run_all();
    cr_assert(strstr(sim_proc_error(p), "kernel 'k' on sip0.cube0.pe0: tl_load(): hbm 0x5000") ==
                  sim_proc_error(p),
              "%s", sim_proc_error(p));
}

static double tile_vals[2];

static void tiles(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *whole = hbm(tl, 0x0, 8);
    int64_t two = 2;
    struct tl_tensor *t = tl_load(tl, tl_view(tl, whole, 4, 1, &two));
    tile_vals[0] = tl_get(tl, t, 0);
    tile_vals[1] = tl_get(tl, t, 1);
    /* write that tile over elements 0..1, then read the whole vector back */
    tl_store(tl, tl_view(tl, whole, 0, 1, &two), t);
    struct tl_tensor *w = tl_load(tl, whole);
    tile_vals[0] += 100 * tl_get(tl, w, 0);
    tile_vals[1] += 100 * tl_get(tl, w, 1);
}

Test(tl, tiles_of_a_larger_tensor_load_and_store_in_place)
{
    put(0, 0x0, 8, 0, 1);
    struct sim_proc *p = start("k", tiles, 0);
    run_all();
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    cr_assert_float_eq(tile_vals[0], 4 + 100 * 4, 0);
    cr_assert_float_eq(tile_vals[1], 5 + 100 * 5, 0);
}

static void bad_dot(struct tl *tl, const struct kargs *a)
{
    (void)a;
    int64_t s1[2] = {2, 3}, s2[2] = {4, 2};
    struct tl_tensor *x = tl_load(tl, tl_reshape(tl, hbm(tl, 0x0, 6), 2, s1));
    struct tl_tensor *y = tl_load(tl, tl_reshape(tl, hbm(tl, 0x40, 8), 2, s2));
    tl_dot(tl, x, y);
}

static void hbm_operand(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *x = tl_load(tl, hbm(tl, 0x0, 6));
    tl_add(tl, x, hbm(tl, 0x0, 6));
}

static void tcm_full(struct tl *tl, const struct kargs *a)
{
    (void)a;
    for (;;)
        tl_load(tl, hbm(tl, 0x0, 1024));
}

Test(tl, misuse_stops_the_kernel_with_the_call_and_the_problem)
{
    put(0, 0x0, 1024, 0, 1);
    put(1, 0x0, 1024, 0, 1);
    struct sim_proc *p1 = start("k1", bad_dot, 0);
    struct sim_proc *p2 = start("k2", hbm_operand, 1);
    run_all();
    cr_assert_str_eq(sim_proc_error(p1),
                     "kernel 'k1' on sip0.cube0.pe0: tl_dot(): inner dimensions differ: a (2, 3), "
                     "b (4, 2)");
    cr_assert(strstr(sim_proc_error(p2), "tl_add(): input 1 is in hbm: tl_load it into TCM "
                                         "first") != NULL,
              "%s", sim_proc_error(p2));

    teardown_tiny();
    setup_tiny();
    put(0, 0x0, 1024, 0, 1);
    struct sim_proc *p3 = start("k3", tcm_full, 0);
    run_all();
    /* tiny's TCM: 16384 bytes, 1/4 IPCQ ring and 1/16 constants: 11264 for the allocator;
     * 4096-byte loads: two fit, the third does not */
    cr_assert_str_eq(sim_proc_error(p3),
                     "kernel 'k3' on sip0.cube0.pe0: tl_load(): the TCM is full: 8192 of 11264 "
                     "bytes in use, 4096 more needed (tl_tcm_release frees what a loop no longer "
                     "uses)");
}

/* ---- async ops, composite, IPCQ, annotations ---------------------------------------------- */

static double waited_at, issued_at;
static bool composite_pending;

static void composite(struct tl *tl, const struct kargs *a)
{
    (void)a;
    int64_t s[2] = {64, 64};
    struct tl_tensor *x = tl_reshape(tl, hbm(tl, 0x0, 64 * 64), 2, s);
    struct tl_tensor *y = tl_reshape(tl, hbm(tl, 0x4000, 64 * 64), 2, s);
    struct tl_tensor *out = tl_reshape(tl, hbm(tl, 0x8000, 64 * 64), 2, s);
    struct tl_tensor *h = tl_composite(tl, "gemm", x, y, out, NULL);
    issued_at = tl_now_ns(tl);
    tl_wait(tl, h);
    waited_at = tl_now_ns(tl);
    composite_pending = tl_is_pending(h);
}

Test(tl, a_composite_returns_at_once_and_tl_wait_only_waits)
{
    put(0, 0x0, 64 * 64, 0, 0);
    put(0, 0x4000, 64 * 64, 0, 0);
    struct sim_proc *p = start("k", composite, 0);
    run_all();
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    cr_assert_float_eq(issued_at, 1.0, 1e-9, "returned after the issue (1 ns)");
    cr_assert(composite_pending);
    struct sim_op_record *const *r;
    size_t n = records(&r);
    cr_assert_eq(n, 4); /* one tile: read, gemm, write, and the composite */
    double end = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i]->op_name, "composite_gemm") == 0)
            end = r[i]->t_end;
    cr_assert_float_eq(waited_at, end, 1e-9, "tl_wait returns when the composite is done");
}

static double received[2][3];

static void ring(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *mine = tl_load(tl, hbm(tl, 0x0, 3));
    struct tl_tensor *s = tl_ipcq_send(tl, (tl_rank(tl) + 1) % tl_nranks(tl), mine);
    struct tl_tensor *got = tl_ipcq_recv(tl);
    for (int i = 0; i < 3; i++)
        received[tl_rank(tl)][i] = tl_get(tl, got, (uint64_t)i);
    tl_wait(tl, s);
}

static const struct sim_kernel ring_kernel = {.name = "ring", .fn = ring};

Test(tl, ipcq_copies_carry_data_between_the_pes_of_a_launch)
{
    put(0, 0x0, 3, 10, 1);
    put(1, 0x0, 3, 20, 1);
    struct sim_kernel_launch kl = {0};
    int pes[2] = {0, 1};
    struct sim_launch_group *g = sim_runner_group_new(chip, &ring_kernel, &kl, pes, 2, 7);
    struct sim_proc *p0 = sim_runner_start(g, 0), *p1 = sim_runner_start(g, 1);
    run_all();
    cr_assert_null(sim_proc_error(p0), "%s", sim_proc_error(p0));
    cr_assert_null(sim_proc_error(p1), "%s", sim_proc_error(p1));
    cr_assert_float_eq(received[0][0], 20, 0, "rank 0 got rank 1's data");
    cr_assert_float_eq(received[1][2], 12, 0, "rank 1 got rank 0's data");
    struct sim_op_record *const *r;
    size_t n = records(&r), copies = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(r[i]->op_name, "ipcq_copy") != 0)
            continue;
        copies++;
        cr_assert_eq(r[i]->note.cmdq_id, 7);
        const struct sim_value *snap = sim_value_map_get(r[i]->params, "snapshot");
        cr_assert_eq(snap->type, SIM_V_TENSOR, "the in-flight data");
        bool to_pe1 = strcmp(r[i]->component_id, "sip0.cube0.pe1.pe_dma") == 0;
        cr_assert_float_eq(sim_tensor_get(snap->u.tensor, 0), to_pe1 ? 10 : 20, 0);
    }
    cr_assert_eq(copies, 2);
}

static void annotated(struct tl *tl, const struct kargs *a)
{
    (void)a;
    tl_marker(tl, "begin");
    tl_token_begin(tl, 0, false);
    tl_set_layer(tl, "ffn_3");
    tl_set_tile(tl, "ffn_3_tile_0");
    tl_load(tl, hbm(tl, 0x0, 4));
    tl_set_layer(tl, NULL);
    tl_set_tile(tl, NULL);
    tl_token_begin(tl, 1, true); /* ends token 0 */
    tl_load(tl, hbm(tl, 0x0, 4));
    tl_token_end(tl);
    tl_marker(tl, "end");
}

Test(tl, markers_and_token_boundaries_are_recorded_with_times)
{
    put(0, 0x0, 4, 0, 1);
    start("decode", annotated, 0);
    run_all();
    cr_assert_eq(sim_chip_marker_count(chip), 2);
    const struct sim_chip_marker *m0 = sim_chip_marker(chip, 0), *m1 = sim_chip_marker(chip, 1);
    cr_assert_str_eq(m0->name, "begin");
    cr_assert_str_eq(m0->component, "sip0.cube0.pe0.pe_cpu");
    cr_assert_str_eq(m0->kernel, "decode");
    cr_assert_float_eq(m0->t_ns, 0, 1e-9);
    cr_assert_str_eq(m1->name, "end");
    cr_assert_eq(sim_chip_token_count(chip), 2);
    const struct sim_chip_token *t0 = sim_chip_token(chip, 0), *t1 = sim_chip_token(chip, 1);
    cr_assert_eq(t0->index, 0);
    cr_assert_not(t0->decode);
    cr_assert(t1->decode);
    cr_assert_not(t0->open);
    cr_assert_not(t1->open);
    cr_assert_float_eq(t0->t_end_ns, t1->t_start_ns, 1e-9);
    cr_assert_float_eq(t1->t_end_ns, m1->t_ns, 1e-9);
    cr_assert_gt(t0->t_end_ns, t0->t_start_ns);
    /* the layer and tile named the first load's record, not the second's */
    struct sim_op_record *const *r;
    cr_assert_eq(records(&r), 2);
    cr_assert_str_eq(r[0]->note.layer_id, "ffn_3");
    cr_assert_str_eq(r[0]->note.tile_id, "ffn_3_tile_0");
    cr_assert_null(r[1]->note.layer_id);
    cr_assert_null(r[1]->note.tile_id);
}

Test(tl, a_chip_freed_with_async_ops_in_flight_releases_them)
{
    put(0, 0x0, 64 * 64, 0, 0);
    put(0, 0x4000, 64 * 64, 0, 0);
    put(1, 0x0, 3, 20, 1);
    start("k", composite, 0);
    struct sim_kernel_launch kl = {0};
    int pes[2] = {0, 1};
    struct sim_launch_group *g = sim_runner_group_new(chip, &ring_kernel, &kl, pes, 2, 0);
    sim_runner_start(g, 1); /* rank 1 sends to rank 0, which never runs: its copy in flight */
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_EVENTS, 40);
    cr_assert_gt(sim_oplog_pending_count(sim_chip_oplog(chip)), 0, "ops in flight");
    /* the fixture frees the chip now */
}

/* ---- a long kernel's memory stays flat ----------------------------------------------------- */

static size_t most_handles, handles_at_end, carriers_at_end;

/* Many iterations of load (sync and async), compute, store and IPCQ-free work in a scope. */
static void long_loop(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct tl_tensor *src = hbm(tl, 0x0, 64), *dst = hbm(tl, 0x400, 64); /* outer scope */
    for (int i = 0; i < 3000; i++) {
        uint64_t mark = tl_tcm_mark(tl);
        struct tl_tensor *x = tl_load(tl, src);
        struct tl_tensor *y = tl_load_async(tl, tl_view(tl, src, 0, 1, (int64_t[]){64}));
        tl_wait(tl, y);
        tl_set_layer(tl, i % 2 ? "layer1" : "layer0"); /* interned, not copied each time */
        struct tl_tensor *s = tl_add(tl, tl_reshape(tl, x, 2, (int64_t[]){8, 8}),
                                     tl_reshape(tl, y, 2, (int64_t[]){8, 8}));
        tl_wait(tl, tl_store_async(tl, dst, s));
        if (tl->n_tensors > most_handles)
            most_handles = tl->n_tensors;
        tl_tcm_release(tl, mark);
    }
    handles_at_end = tl->n_tensors;
    carriers_at_end = tl->carriers != NULL; /* every async op has delivered and gone */
}

Test(tl, a_long_kernel_frees_its_handles_and_async_ops_as_it_goes)
{
    put(0, 0x0, 64, 1, 1);
    most_handles = handles_at_end = carriers_at_end = 0;
    struct sim_proc *p = start("long", long_loop, 0);
    run_all();
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    cr_assert_leq(most_handles, 16, "handles of one iteration at most: %zu", most_handles);
    cr_assert_eq(handles_at_end, 2, "the two handles of the outer scope");
    cr_assert_eq(carriers_at_end, 0);
    size_t n;
    sim_oplog_records(sim_chip_oplog(chip), &n);
    cr_assert_eq(n, 3000 * 4, "every op was still logged");
}

/* Nested scopes taken at the same TCM top: releasing the inner one leaves the outer open,
 * so what the outer scope makes after it is still freed with the outer one. */
static size_t after_outer, after_inner, after_all;

static void nested_marks(struct tl *tl, const struct kargs *a)
{
    (void)a;
    for (int i = 0; i < 100; i++) {
        uint64_t outer = tl_tcm_mark(tl);
        uint64_t inner = tl_tcm_mark(tl); /* nothing made in between: the same top */
        struct tl_tensor *v = hbm(tl, 0x0, 64);
        tl_tcm_release(tl, inner);
        hbm(tl, 0x100, 64); /* the outer scope's */
        hbm(tl, 0x200, 64);
        (void)v;
        after_inner = tl->n_tensors;
        tl_tcm_release(tl, outer);
        after_outer = tl->n_tensors;
    }
    after_all = tl->n_scopes;
}

Test(tl, a_scope_released_inside_another_at_the_same_top_leaves_the_outer_open)
{
    after_outer = after_inner = after_all = SIZE_MAX;
    struct sim_proc *p = start("nested", nested_marks, 0);
    run_all();
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    cr_assert_eq(after_outer, 0, "the outer release frees what the outer scope made");
    cr_assert_leq(after_inner, 3);
    cr_assert_eq(after_all, 0, "no scope left open");
}
