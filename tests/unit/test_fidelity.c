/*
 * Timing fidelity: microbenchmarks whose answers follow from the chip config by hand
 * (tests/unit/fidelity_cases.h: streaming from HBM on 1 to 8 PEs and across cubes, single
 * DMA transfers by size, host writes by size, a GEMM tile at the TE's rate, a GEMM at TE
 * peak and one whose operand lives in another cube, an all-reduce over IPCQ on the ring of
 * one cube and of two), each within its tolerance of the
 * analytic value; and the placement of a GEMM's operands: B's bytes come from B's HBM,
 * over the links between cubes.
 */
#include "tests/unit/fidelity_cases.h"

#include "sim/chip/component.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

static void check(size_t i)
{
    const struct fid_case *k = &fid_cases[i];
    double want;
    char err[256] = "";
    double got = fid_run(k, &want, err, sizeof(err));
    cr_assert_geq(got, 0, "%s: %s", k->name, err);
    cr_assert_leq(fabs(got / want - 1), k->tolerance, "%s: simulated %.1f ns, expected %.1f (%s)",
                  k->name, got, want, k->why);
}

ParameterizedTestParameters(fidelity, each_case_is_within_its_tolerance)
{
    static size_t idx[FID_N_CASES];
    for (size_t i = 0; i < FID_N_CASES; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, FID_N_CASES);
}

ParameterizedTest(size_t *i, fidelity, each_case_is_within_its_tolerance)
{
    check(*i);
}

/* The bytes a link of the run carried (both directions when name matches either). */
static uint64_t link_bytes(struct sim_chip *chip, const char *name)
{
    for (size_t i = 0; i < sim_chip_link_count(chip); i++) {
        struct sim_chip_link_stats ls;
        sim_chip_link_stats(chip, i, &ls);
        if (strcmp(ls.name, name) == 0)
            return ls.bytes;
    }
    return 0;
}

Test(fidelity, a_gemm_reads_each_operand_from_the_memory_holding_it)
{
    /* f16 1024^3 on 8 PEs: A split by rows (each PE's 128 rows in its own cube's HBM), B
     * whole in cube0's HBM. Each PE reads its A rows once per column of tiles (16 x 128
     * rows x 1024 x 2 = 4 MiB) and B once per row of tiles (2 x 2 MiB = 4 MiB): cube1's
     * HBM serves only its PEs' A (16 MiB), cube0's its PEs' A and everybody's B (48 MiB),
     * and B's 16 MiB for cube1 cross the cube0 -> cube1 link. The host reads C back
     * after the launch: 1 MiB more from each HBM */
    struct sim_run_opts o = {.kernel_spec = "gemm:m=1024,n=1024,k=1024,dtype=f16,pes=8,data=zero"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_chip *chip = sim_run_chip(r);
    const struct sim_topo *t = sim_chip_topo(chip);
    const struct sim_component *h0 = sim_chip_component(chip, sim_topo_find(t, "sip0.cube0.hbm"));
    const struct sim_component *h1 = sim_chip_component(chip, sim_topo_find(t, "sip0.cube1.hbm"));
    uint64_t mib = 1 << 20;
    cr_assert_eq(h1->stats.bytes_read, 17 * mib);
    cr_assert_eq(h0->stats.bytes_read, 49 * mib);
    uint64_t x = link_bytes(chip, "sip0.cube0.noc->sip0.cube1.noc");
    cr_assert_geq(x, 16 * mib, "B crosses to cube1: %llu bytes", (unsigned long long)x);
    cr_assert_lt(x, 16 * mib + mib, "and little else: %llu", (unsigned long long)x);
    sim_run_free(r);
}

Test(fidelity, no_link_carries_more_than_its_bandwidth)
{
    /* 8 PEs stream the whole vector from cube0's HBM: the run's link table, bytes over
     * bandwidth x run time, stays at most 100% on every link, the busiest above 40% */
    struct sim_run_opts o = {.kernel_spec =
                                 "stream:n=16777216,chunk=65536,pes=8,split=0,data=zero"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    double top = 0;
    for (size_t i = 0; i < s.n_links; i++) {
        cr_assert_leq(s.links[i].utilization, 1.0 + 1e-9, "%s at %.1f%%", s.links[i].name,
                      100 * s.links[i].utilization);
        top = fmax(top, s.links[i].utilization);
    }
    cr_assert_gt(top, 0.4);
    sim_run_summary_fini(&s);
    sim_run_free(r);
}

Test(fidelity, a_one_unit_engine_never_shows_overlapping_ops)
{
    /* gemm on one PE: two tiles in flight, one GEMM engine. A tile that arrives while the
     * other computes waits; its record starts when the engine takes it (ADR-0052 D1's
     * t_start), the wait is its queued_ns annotation. 64 x 64 x 1024 f16 tiles take 4106 ns
     * each on the engine: so does every record */
    struct sim_run_opts o = {.kernel_spec = "gemm:m=256,n=256,k=1024,dtype=f16,pes=1,data=zero"};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    size_t n, k = 0, queued = 0;
    struct sim_op_record *const *rec = sim_oplog_records(sim_chip_oplog(sim_run_chip(r)), &n);
    double last_end = 0;
    for (size_t i = 0; i < n; i++) { /* records are in start order */
        if (strcmp(rec[i]->op_name, "TileToken/GEMM") != 0)
            continue;
        k++;
        cr_assert_geq(rec[i]->t_start, last_end - 1e-9, "record %zu starts at %.1f before %.1f", i,
                      rec[i]->t_start, last_end);
        cr_assert_float_eq(rec[i]->t_end - rec[i]->t_start, 4106.0, 1e-6);
        last_end = rec[i]->t_end;
        struct sim_value *replay = NULL;
        sim_value_free(sim_op_record_params(rec[i], &replay));
        queued += sim_value_get_int(replay, "queued_ns", 0) > 0;
        sim_value_free(replay);
    }
    cr_assert_eq(k, 16);
    cr_assert_gt(queued, 0, "tiles waited for the engine");
    sim_run_free(r);
}
