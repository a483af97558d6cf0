/*
 * The phase-2 executor: dependency inference (RAW, WAR, WAW, independence, dependency_ids,
 * memory ops before math at equal t_start), GEMM in f32 / f16 / bf16 / i8
 * against naive loops, math ops and reductions along each axis, memory op replay
 * (snapshots, sub-ranges of larger tensors), skipped records, error messages, and that
 * phase 1's store is never touched. GEMM batching: test_exec_batch.c.
 */
#include "exec_fixture.h"

#include <stdio.h>

#define PE0 "sip0.cube0.pe0.pe_math"
#define PE1 "sip0.cube0.pe1.pe_math"

static const int64_t N4 = 4;

/* tcm a = [1 2 3 4], tcm b = [0.5 0.25 -1 2] in phase 1's store */
static void two_vectors(struct fx *f, uint64_t a, uint64_t b)
{
    struct sim_tensor *ta = sim_tensor_new(SIM_F32, 1, &N4);
    struct sim_tensor *tb = sim_tensor_new(SIM_F32, 1, &N4);
    const float va[] = {1, 2, 3, 4}, vb[] = {0.5f, 0.25f, -1, 2};
    memcpy(sim_tensor_data(ta), va, sizeof(va));
    memcpy(sim_tensor_data(tb), vb, sizeof(vb));
    fx_put(f, "tcm", a, ta);
    fx_put(f, "tcm", b, tb);
}

/* ---- dependency inference ------------------------------------------------------------------ */

Test(exec, raw_chain_at_one_t_start_runs_in_order)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4);   /* X = exp(a) */
    fx_unary(&f, 10, "neg", 0x100, 0x200, 4); /* Y = -X: reads what op 0 writes */
    fx_run_ok(&f, NULL);
    cr_assert_gt(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave, "RAW: the reader runs after");
    struct sim_tensor *y = fx_out(&f, "tcm", 0x200);
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(fx_f(y, (size_t)i), -expf((float)(i + 1)), 1e-5, "element %d", i);
    fx_fini(&f);
}

Test(exec, war_the_overwrite_waits_for_the_reader)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4); /* reads a */
    fx_unary(&f, 10, "exp", 0x40, 0x0, 4);  /* overwrites a */
    fx_run_ok(&f, NULL);
    cr_assert_gt(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave, "WAR: the writer runs after");
    struct sim_tensor *r = fx_out(&f, "tcm", 0x100), *a = fx_out(&f, "tcm", 0x0);
    cr_assert_float_eq(fx_f(r, 3), -4.0f, 0, "the reader saw the old a");
    cr_assert_float_eq(fx_f(a, 2), expf(-1.0f), 1e-6, "a was overwritten");
    fx_fini(&f);
}

Test(exec, waw_the_later_record_wins)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x300, 4);
    fx_unary(&f, 10, "exp", 0x40, 0x300, 4);
    fx_run_ok(&f, NULL);
    cr_assert_neq(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave, "WAW: never in one wave");
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x300), 0), expf(0.5f), 1e-6);
    fx_fini(&f);
}

Test(exec, independent_ops_share_a_wave)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4);
    fx_unary(&f, 10, "exp", 0x40, 0x200, 4);
    fx_unary(&f, 10, "sqrt", 0x0, 0x300, 4); /* reads a too: two readers do not conflict */
    fx_run_ok(&f, NULL);
    cr_assert_eq(fx_info(&f, 0)->wave, fx_info(&f, 1)->wave);
    cr_assert_eq(fx_info(&f, 0)->wave, fx_info(&f, 2)->wave);
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->waves, 1);
    cr_assert_eq(s->parallel_ops, 3);
    cr_assert_eq(s->executed, 3);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x300), 3), 2.0f, 0);
    fx_fini(&f);
}

Test(exec, overlapping_ranges_conflict_even_at_other_keys)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    /* op 0 writes [0x100, 0x110); op 1 reads [0x108, 0x110) (2 floats) from the middle */
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4);
    uint64_t addrs[] = {0x108};
    unsigned nd[] = {1};
    int64_t sh[1][SIM_MAX_DIMS] = {{2}};
    int64_t two = 2;
    fx_math(&f, 10, PE1, "neg", SIM_F32, 1, addrs, nd, sh, 0x200, 1, &two, false, 0);
    fx_run_ok(&f, NULL);
    cr_assert_gt(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave);
    struct sim_tensor *r = fx_out(&f, "tcm", 0x200);
    cr_assert_float_eq(fx_f(r, 0), -expf(3.0f), 1e-5, "read element 2 of exp(a)");
    cr_assert_float_eq(fx_f(r, 1), -expf(4.0f), 1e-4);
    fx_fini(&f);
}

Test(exec, dependency_ids_order_ops_addresses_do_not)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4);
    fx_unary(&f, 10, "exp", 0x40, 0x200, 4);
    int64_t dep = 0;
    fx_deps(&f, 1, &dep, 1);
    fx_run_ok(&f, NULL);
    cr_assert_gt(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave, "op 1 waits for op 0");
    fx_fini(&f);
}

Test(exec, dependency_ids_may_name_a_later_record_of_the_same_t_start)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4);
    fx_unary(&f, 10, "exp", 0x40, 0x200, 4);
    int64_t dep = 1;
    fx_deps(&f, 0, &dep, 1);
    fx_run_ok(&f, NULL);
    cr_assert_gt(fx_info(&f, 0)->wave, fx_info(&f, 1)->wave, "op 0 waits for op 1");
    fx_fini(&f);
}

Test(exec, dependency_on_a_later_t_start_is_an_error)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4);
    fx_unary(&f, 20, "exp", 0x40, 0x200, 4);
    int64_t dep = 1;
    fx_deps(&f, 0, &dep, 1);
    struct diag d;
    cr_assert_lt(fx_run(&f, NULL, &d), 0);
    cr_assert(strstr(d.msg, "op #0 neg on " PE0 " at 10 ns") != NULL, "%s", d.msg);
    cr_assert(strstr(d.msg, "names op #1 (exp at 20 ns), which runs later") != NULL, "%s", d.msg);
    fx_fini(&f);
}

Test(exec, dependency_errors_name_the_problem)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4);
    fx_unary(&f, 10, "exp", 0x40, 0x200, 4);
    int64_t d0 = 1, d1 = 0, bad = 7;
    fx_deps(&f, 0, &d0, 1);
    fx_deps(&f, 1, &d1, 1);
    struct diag d;
    cr_assert_lt(fx_run(&f, NULL, &d), 0);
    cr_assert(strstr(d.msg, "cycle") != NULL, "%s", d.msg);
    fx_deps(&f, 1, &bad, 1);
    fx_deps(&f, 0, &bad, 0);
    cr_assert_lt(fx_run(&f, NULL, &d), 0);
    cr_assert(strstr(d.msg, "op #1 exp") && strstr(d.msg, "op #7, which does not exist"), "%s",
              d.msg);
    fx_fini(&f);
}

Test(exec, memory_ops_run_before_math_at_equal_t_start)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "neg", 0x0, 0x100, 4); /* recorded first, reads tcm 0x0 */
    struct sim_tensor *nine = fx_full(4, 9);
    fx_ipcq(&f, 10, "sram", 0x0, "tcm", 0x0, 4, nine); /* then a copy into tcm 0x0 */
    sim_tensor_unref(nine);
    fx_run_ok(&f, NULL);
    cr_assert_lt(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave, "the copy goes first");
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x100), 2), -9.0f, 0, "neg saw the copy");
    fx_fini(&f);
}

Test(exec, different_t_starts_run_in_time_order_whatever_the_addresses)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    /* recorded out of order: the log sorts by t_start */
    fx_unary(&f, 20, "neg", 0x100, 0x200, 4);
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4);
    fx_run_ok(&f, NULL);
    cr_assert_str_eq(fx_rec(&f, 0)->op_name, "exp");
    cr_assert_eq(sim_exec_stats(f.x)->groups, 2);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x200), 0), -expf(1.0f), 1e-5);
    fx_fini(&f);
}

/* ---- GEMM ------------------------------------------------------------------------------------ */

/* The naive product of op(A) and op(B) for 2-D tensors, element (i, j), in double. */
static double naive_gemm(const struct sim_tensor *a, const struct sim_tensor *b, bool ta, bool tb,
                         bool acol, bool bcol, size_t batch, size_t i, size_t j)
{
    size_t ar = (size_t)a->shape[a->ndim - 2], ac = (size_t)a->shape[a->ndim - 1];
    size_t br = (size_t)b->shape[b->ndim - 2], bc = (size_t)b->shape[b->ndim - 1];
    size_t k = ta ? ar : ac;
    size_t abase = a->ndim > 2 ? batch * ar * ac : 0, bbase = b->ndim > 2 ? batch * br * bc : 0;
    double s = 0;
    for (size_t p = 0; p < k; p++) {
        size_t ai = ta ? p : i, aj = ta ? i : p; /* element (ai, aj) of the stored A */
        size_t bi = tb ? j : p, bj = tb ? p : j;
        double x = sim_tensor_get(a, abase + (acol ? aj * ar + ai : ai * ac + aj));
        double y = sim_tensor_get(b, bbase + (bcol ? bj * br + bi : bi * bc + bj));
        s += x * y;
    }
    return s;
}

/* Check C (m x n per batch, row-major) against the naive product with tolerance. */
static void check_gemm(const struct sim_tensor *c, const struct sim_tensor *a,
                       const struct sim_tensor *b, bool ta, bool tb, bool acol, bool bcol,
                       double rtol, double atol)
{
    size_t m = (size_t)c->shape[c->ndim - 2], n = (size_t)c->shape[c->ndim - 1];
    size_t nb = sim_tensor_numel(c) / (m * n);
    for (size_t b0 = 0; b0 < nb; b0++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double want = naive_gemm(a, b, ta, tb, acol, bcol, b0, i, j);
                double got = sim_tensor_get(c, b0 * m * n + i * n + j);
                cr_assert(fabs(got - want) <= atol + rtol * fabs(want),
                          "C[%zu][%zu][%zu] = %.9g, expected %.9g", b0, i, j, got, want);
            }
}

struct gemm_case {
    enum sim_dtype din, dout;
    double rtol, atol;
};

static void gemm_dtype_case(const struct gemm_case *gc)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {37, 53}, bs[] = {53, 29}, cs[] = {37, 29};
    struct sim_tensor *a = fx_put(&f, "tcm", 0x10000, fx_tensor(&f, gc->din, 2, as));
    struct sim_tensor *b = fx_put(&f, "tcm", 0x20000, fx_tensor(&f, gc->din, 2, bs));
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", gc->din, 0x10000, 2, as, 0x20000, 2, bs, gc->dout,
            0x30000, 2, cs);
    fx_run_ok(&f, NULL);
    struct sim_tensor *c = fx_out(&f, "tcm", 0x30000);
    cr_assert_eq(c->dtype, gc->dout);
    check_gemm(c, a, b, false, false, false, false, gc->rtol, gc->atol);
    fx_fini(&f);
}

Test(exec, gemm_f32_matches_naive_loops)
{
    gemm_dtype_case(&(struct gemm_case){SIM_F32, SIM_F32, 1e-5, 1e-5});
}

Test(exec, gemm_f16_matches_naive_loops_within_f16_rounding)
{
    gemm_dtype_case(&(struct gemm_case){SIM_F16, SIM_F16, 1e-3, 1e-3});
}

Test(exec, gemm_bf16_matches_naive_loops_within_bf16_rounding)
{
    gemm_dtype_case(&(struct gemm_case){SIM_BF16, SIM_BF16, 1e-2, 1e-2});
}

Test(exec, gemm_f16_in_f32_out_keeps_f32_precision)
{
    gemm_dtype_case(&(struct gemm_case){SIM_F16, SIM_F32, 1e-5, 1e-5});
}

Test(exec, gemm_i8_to_i32_is_exact)
{
    gemm_dtype_case(&(struct gemm_case){SIM_I8, SIM_I32, 0, 0});
}

Test(exec, gemm_i8_products_past_the_i8_range_are_exact)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {1, 3}, bs[] = {3, 1}, cs[] = {1, 1};
    struct sim_tensor *a = sim_tensor_new(SIM_I8, 2, as), *b = sim_tensor_new(SIM_I8, 2, bs);
    int8_t va[] = {-128, 127, 100}, vb[] = {-128, 127, 100};
    memcpy(sim_tensor_data(a), va, 3);
    memcpy(sim_tensor_data(b), vb, 3);
    fx_put(&f, "tcm", 0x0, a);
    fx_put(&f, "tcm", 0x100, b);
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_I8, 0x0, 2, as, 0x100, 2, bs, SIM_I32, 0x200, 2,
            cs);
    fx_run_ok(&f, NULL);
    /* 16384 + 16129 + 10000 */
    cr_assert_eq(((int32_t *)sim_tensor_cdata(fx_out(&f, "tcm", 0x200)))[0], 42513);
    fx_fini(&f);
}

Test(exec, gemm_transposes_inferred_from_m_k_n_or_given)
{
    struct fx f;
    fx_init(&f);
    /* A stored as k x m = 7 x 5 (transposed), B stored as n x k = 3 x 7 (transposed) */
    int64_t as[] = {7, 5}, bs[] = {3, 7}, cs[] = {5, 3};
    struct sim_tensor *a = fx_put(&f, "tcm", 0x1000, fx_tensor(&f, SIM_F32, 2, as));
    struct sim_tensor *b = fx_put(&f, "tcm", 0x2000, fx_tensor(&f, SIM_F32, 2, bs));
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_GEMM);
    fx_handle(&m.u.gemm.a, "tcm", 0x1000, SIM_F32, 2, as);
    fx_handle(&m.u.gemm.b, "tcm", 0x2000, SIM_F32, 2, bs);
    fx_handle(&m.u.gemm.out, "tcm", 0x3000, SIM_F32, 2, cs);
    m.u.gemm.transpose_a = m.u.gemm.transpose_b = true;
    fx_log(&f, 5, 6, "sip0.cube0.pe0.pe_gemm", &m);
    /* as D3.3 alone has it (another simulator's log): m, k, n but no flags */
    cr_assert(sim_value_map_del(fx_rec(&f, 0)->note.replay, "transpose_a"));
    cr_assert(sim_value_map_del(fx_rec(&f, 0)->note.replay, "transpose_b"));
    fx_run_ok(&f, NULL);
    check_gemm(fx_out(&f, "tcm", 0x3000), a, b, true, true, false, false, 1e-5, 1e-5);

    /* square operands are ambiguous: the op log's flags (ADR-0020 D5) decide */
    int64_t sq[] = {6, 6};
    struct sim_tensor *s1 = fx_put(&f, "tcm", 0x4000, fx_tensor(&f, SIM_F32, 2, sq));
    struct sim_tensor *s2 = fx_put(&f, "tcm", 0x5000, fx_tensor(&f, SIM_F32, 2, sq));
    sim_msg_init(&m, SIM_MK_GEMM);
    fx_handle(&m.u.gemm.a, "tcm", 0x4000, SIM_F32, 2, sq);
    fx_handle(&m.u.gemm.b, "tcm", 0x5000, SIM_F32, 2, sq);
    fx_handle(&m.u.gemm.out, "tcm", 0x6000, SIM_F32, 2, sq);
    m.u.gemm.transpose_a = true;
    fx_log(&f, 7, 8, "sip0.cube0.pe0.pe_gemm", &m);
    fx_run_ok(&f, NULL);
    check_gemm(fx_out(&f, "tcm", 0x6000), s1, s2, true, false, false, false, 1e-5, 1e-5);
    fx_fini(&f);
}

Test(exec, gemm_col_major_layouts)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {4, 6}, bs[] = {6, 5}, cs[] = {4, 5};
    struct sim_tensor *a = fx_put(&f, "tcm", 0x1000, fx_tensor(&f, SIM_F32, 2, as));
    struct sim_tensor *b = fx_put(&f, "tcm", 0x2000, fx_tensor(&f, SIM_F32, 2, bs));
    for (int out_col = 0; out_col < 2; out_col++) {
        fx_gemm(&f, 5 + out_col, "sip0.cube0.pe0.pe_gemm", SIM_F32, 0x1000, 2, as, 0x2000, 2, bs,
                SIM_F32, 0x3000 + 0x100 * (uint64_t)out_col, 2, cs);
        struct sim_value *p = fx_rec(&f, (size_t)out_col)->params;
        sim_value_map_set_str(p, "layout_a", "col_major");
        sim_value_map_set_str(p, "layout_b", "col_major");
        if (out_col)
            sim_value_map_set_str(p, "layout_out", "col_major");
    }
    fx_run_ok(&f, NULL);
    check_gemm(fx_out(&f, "tcm", 0x3000), a, b, false, false, true, true, 1e-5, 1e-5);
    /* the column-major output holds C^T in row-major terms */
    struct sim_tensor *ct = fx_out(&f, "tcm", 0x3100);
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 5; j++)
            cr_assert_float_eq(sim_tensor_get(ct, j * 4 + i),
                               naive_gemm(a, b, false, false, true, true, 0, i, j), 1e-5);
    fx_fini(&f);
}

Test(exec, gemm_batched_operands_and_a_shared_b)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {3, 4, 6}, bs[] = {6, 5}, cs[] = {3, 4, 5};
    struct sim_tensor *a = fx_put(&f, "tcm", 0x1000, fx_tensor(&f, SIM_F32, 3, as));
    struct sim_tensor *b = fx_put(&f, "tcm", 0x2000, fx_tensor(&f, SIM_F32, 2, bs));
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F32, 0x1000, 3, as, 0x2000, 2, bs, SIM_F32, 0x3000,
            3, cs);
    fx_run_ok(&f, NULL);
    check_gemm(fx_out(&f, "tcm", 0x3000), a, b, false, false, false, false, 1e-5, 1e-5);
    fx_fini(&f);
}

Test(exec, gemm_dtype_acc_f16_rounds_every_partial_sum)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {1, 5}, bs[] = {5, 1}, cs[] = {1, 1};
    struct sim_tensor *a = sim_tensor_new(SIM_F16, 2, as), *b = sim_tensor_new(SIM_F16, 2, bs);
    const double va[] = {2048, 1, 1, 1, 1};
    for (size_t i = 0; i < 5; i++) {
        sim_tensor_set(a, i, va[i]);
        sim_tensor_set(b, i, 1);
    }
    fx_put(&f, "tcm", 0x0, a);
    fx_put(&f, "tcm", 0x100, b);
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F16, 0x0, 2, as, 0x100, 2, bs, SIM_F32, 0x200, 2,
            cs);
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F16, 0x0, 2, as, 0x100, 2, bs, SIM_F32, 0x300, 2,
            cs);
    sim_value_map_set_str(fx_rec(&f, 1)->params, "dtype_acc", "f16");
    fx_run_ok(&f, NULL);
    /* f16 has a spacing of 2 at 2048: 2048 + 1 is a tie, rounded to even 2048, four times */
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x200), 0), 2052.0f, 0, "f32 accumulator");
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x300), 0), 2048.0f, 0, "f16 accumulator");
    fx_fini(&f);
}

Test(exec, gemm_accumulate_adds_to_the_output)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {2, 3}, bs[] = {3, 2}, cs[] = {2, 2};
    struct sim_tensor *a = fx_put(&f, "tcm", 0x0, fx_tensor(&f, SIM_F32, 2, as));
    struct sim_tensor *b = fx_put(&f, "tcm", 0x100, fx_tensor(&f, SIM_F32, 2, bs));
    struct sim_tensor *c = sim_tensor_new(SIM_F32, 2, cs);
    for (size_t i = 0; i < 4; i++)
        sim_tensor_set(c, i, 10.0 * (double)(i + 1));
    fx_put(&f, "tcm", 0x200, c);
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F32, 0x0, 2, as, 0x100, 2, bs, SIM_F32, 0x200, 2,
            cs);
    sim_value_map_set_bool(fx_rec(&f, 0)->params, "accumulate", true);
    fx_run_ok(&f, NULL);
    struct sim_tensor *r = fx_out(&f, "tcm", 0x200);
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++)
            cr_assert_float_eq(sim_tensor_get(r, i * 2 + j),
                               10.0 * (double)(i * 2 + j + 1) +
                                   naive_gemm(a, b, false, false, false, false, 0, i, j),
                               1e-5);
    cr_assert_float_eq(sim_tensor_get(c, 0), 10.0, 0, "phase 1's C is untouched");
    fx_fini(&f);
}

Test(exec, composite_gemm_replays_on_the_gemm_path)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {8, 4}, bs[] = {4, 8}, cs[] = {8, 8};
    struct sim_tensor *a = fx_tensor(&f, SIM_F32, 2, as), *b = fx_tensor(&f, SIM_F32, 2, bs);
    sim_memstore_write(f.m, "hbm", 0x0, a, NULL);
    sim_memstore_write(f.m, "hbm", 0x1000, b, NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_COMPOSITE);
    snprintf(m.u.composite.op, sizeof(m.u.composite.op), "gemm");
    fx_handle(&m.u.composite.a, "hbm", 0x0, SIM_F32, 2, as);
    fx_handle(&m.u.composite.b, "hbm", 0x1000, SIM_F32, 2, bs);
    fx_handle(&m.u.composite.out, "hbm", 0x2000, SIM_F32, 2, cs);
    fx_log(&f, 5, 50, "sip0.cube0.pe0.pe_cpu", &m);
    fx_run_ok(&f, NULL);
    cr_assert_str_eq(fx_rec(&f, 0)->op_name, "composite_gemm");
    check_gemm(fx_out(&f, "hbm", 0x2000), a, b, false, false, false, false, 1e-5, 1e-5);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
    fx_fini(&f);
}

/* D3.5 names no input for a composite math op: the op log's replay annotations do */
Test(exec, composite_math_replays_from_its_replay_annotations)
{
    struct fx f;
    fx_init(&f);
    int64_t xs[] = {4, 8};
    struct sim_tensor *x = fx_tensor(&f, SIM_F32, 2, xs);
    sim_memstore_write(f.m, "hbm", 0x0, x, NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_COMPOSITE);
    snprintf(m.u.composite.op, sizeof(m.u.composite.op), "math");
    snprintf(m.u.composite.math_op, sizeof(m.u.composite.math_op), "exp");
    fx_handle(&m.u.composite.a, "hbm", 0x0, SIM_F32, 2, xs);
    fx_handle(&m.u.composite.out, "hbm", 0x1000, SIM_F32, 2, xs);
    fx_log(&f, 5, 50, "sip0.cube0.pe0.pe_cpu", &m);
    const struct sim_op_record *r = fx_rec(&f, 0);
    cr_assert_str_eq(r->op_name, "composite_math");
    cr_assert_str_eq(r->op_kind, "math");
    /* params stay D3.5's three keys for op "math" */
    cr_assert_eq(r->params->u.map.len, 3);
    fx_run_ok(&f, NULL);
    const struct sim_tensor *y = fx_out(&f, "hbm", 0x1000);
    cr_assert_not_null(y);
    for (size_t i = 0; i < 32; i++)
        cr_assert_float_eq(((const float *)sim_tensor_cdata(y))[i],
                           expf(((const float *)sim_tensor_cdata(x))[i]), 1e-6f, "element %zu", i);
    sim_tensor_unref(x);
    fx_fini(&f);
}

/* ---- math ------------------------------------------------------------------------------------ */

/* Every elementwise op of the table agrees with its scalar definition on f32 data. */
Test(exec, every_elementwise_op_matches_its_scalar_definition)
{
    size_t nops;
    const struct sim_exec_math_op *ops = sim_exec_math_ops(&nops);
    for (size_t k = 0; k < nops; k++) {
        const struct sim_exec_math_op *op = &ops[k];
        if (op->shape != SIM_EXEC_MATH_ELEMENTWISE)
            continue;
        struct fx f;
        fx_init(&f);
        int64_t n = 33;
        uint64_t addrs[SIM_EXEC_MAX_INPUTS];
        unsigned nd[SIM_EXEC_MAX_INPUTS];
        int64_t sh[SIM_EXEC_MAX_INPUTS][SIM_MAX_DIMS];
        struct sim_tensor *in[SIM_EXEC_MAX_INPUTS];
        for (unsigned i = 0; i < op->arity; i++) {
            in[i] = sim_tensor_new(SIM_F32, 1, &n);
            for (int64_t e = 0; e < n; e++) /* positive, so log and sqrt are defined */
                sim_tensor_set(in[i], (size_t)e, 0.25 + 2 * fabs(fx_rand(&f)));
            if (i == 0 && op->arity == 3) /* where: a condition with both outcomes */
                for (int64_t e = 0; e < n; e++)
                    sim_tensor_set(in[i], (size_t)e, e % 3 == 0);
            addrs[i] = 0x1000 * (i + 1);
            nd[i] = 1;
            sh[i][0] = n;
            fx_put(&f, "tcm", addrs[i], in[i]);
        }
        fx_math(&f, 1, PE0, op->name, SIM_F32, op->arity, addrs, nd, sh, 0x9000, 1, &n, false, 0);
        fx_run_ok(&f, NULL);
        struct sim_tensor *out = fx_out(&f, "tcm", 0x9000);
        for (size_t e = 0; e < (size_t)n; e++) {
            double args[SIM_EXEC_MAX_INPUTS];
            for (unsigned i = 0; i < op->arity; i++)
                args[i] = sim_tensor_get(in[i], e);
            double want = op->scalar(args), got = sim_tensor_get(out, e);
            cr_assert(fabs(got - want) <= 1e-6 + 1e-5 * fabs(want), "%s element %zu: %g vs %g",
                      op->name, e, got, want);
        }
        fx_fini(&f);
    }
}

Test(exec, broadcasting_follows_numpy)
{
    struct fx f;
    fx_init(&f);
    int64_t xs[] = {2, 3, 4}, ys[] = {3, 1}, zs[] = {4};
    struct sim_tensor *x = fx_put(&f, "tcm", 0x0, fx_tensor(&f, SIM_F32, 3, xs));
    struct sim_tensor *y = fx_put(&f, "tcm", 0x1000, fx_tensor(&f, SIM_F32, 2, ys));
    struct sim_tensor *z = fx_put(&f, "tcm", 0x2000, fx_tensor(&f, SIM_F32, 1, zs));
    uint64_t a1[] = {0x0, 0x1000};
    unsigned n1[] = {3, 2};
    int64_t s1[2][SIM_MAX_DIMS] = {{2, 3, 4}, {3, 1}};
    fx_math(&f, 1, PE0, "sub", SIM_F32, 2, a1, n1, s1, 0x3000, 3, xs, false, 0);
    uint64_t a2[] = {0x2000, 0x0};
    unsigned n2[] = {1, 3};
    int64_t s2[2][SIM_MAX_DIMS] = {{4}, {2, 3, 4}};
    fx_math(&f, 1, PE1, "mul", SIM_F32, 2, a2, n2, s2, 0x4000, 3, xs, false, 0);
    fx_run_ok(&f, NULL);
    struct sim_tensor *r1 = fx_out(&f, "tcm", 0x3000), *r2 = fx_out(&f, "tcm", 0x4000);
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++)
            for (size_t k = 0; k < 4; k++) {
                size_t e = (i * 3 + j) * 4 + k;
                cr_assert_float_eq(fx_f(r1, e), fx_f(x, e) - fx_f(y, j), 1e-7);
                cr_assert_float_eq(fx_f(r2, e), fx_f(z, k) * fx_f(x, e), 1e-7);
            }
    fx_fini(&f);
}

/* Reduce the (2, 3, 4) tensor x over axis (-1: all axes) with op, naively: element out_i
 * of the result. */
static double naive_reduce(const struct sim_tensor *x, const char *op, int axis, size_t out_i)
{
    const size_t dims[] = {2, 3, 4};
    size_t idx[3], count = 0;
    double acc = 0;
    for (idx[0] = 0; idx[0] < 2; idx[0]++)
        for (idx[1] = 0; idx[1] < 3; idx[1]++)
            for (idx[2] = 0; idx[2] < 4; idx[2]++) {
                size_t o = 0; /* the output position: the index without the axis */
                for (int d = 0; d < 3; d++)
                    if (d != axis)
                        o = o * dims[d] + idx[d];
                if (axis >= 0 && o != out_i)
                    continue;
                double v = sim_tensor_get(x, (idx[0] * 3 + idx[1]) * 4 + idx[2]);
                if (count == 0)
                    acc = v;
                else if (!strcmp(op, "max"))
                    acc = v > acc ? v : acc;
                else if (!strcmp(op, "min"))
                    acc = v < acc ? v : acc;
                else
                    acc += v;
                count++;
            }
    return !strcmp(op, "mean") ? acc / (double)count : acc;
}

Test(exec, reductions_along_each_axis_and_over_all)
{
    const char *ops[] = {"sum", "max", "min", "mean"};
    for (size_t k = 0; k < 4; k++)
        for (int axis = -1; axis < 3; axis++) {
            struct fx f;
            fx_init(&f);
            int64_t xs[] = {2, 3, 4};
            struct sim_tensor *x = fx_put(&f, "tcm", 0x0, fx_tensor(&f, SIM_F32, 3, xs));
            int64_t os[2];
            unsigned on = 0;
            for (int d = 0; d < 3; d++)
                if (d != axis && axis >= 0)
                    os[on++] = xs[d];
            uint64_t a[] = {0x0};
            unsigned nd[] = {3};
            int64_t s[1][SIM_MAX_DIMS] = {{2, 3, 4}};
            /* axis given as negative for the last one, to check normalisation */
            int ax = axis == 2 ? -1 : axis;
            fx_math(&f, 1, PE0, ops[k], SIM_F32, 1, a, nd, s, 0x1000, on, os, axis >= 0, ax);
            fx_run_ok(&f, NULL);
            struct sim_tensor *r = fx_out(&f, "tcm", 0x1000);
            size_t n = sim_tensor_numel(r);
            cr_assert_eq(n, axis < 0 ? 1 : 24 / (size_t)xs[axis]);
            for (size_t i = 0; i < n; i++)
                cr_assert_float_eq(sim_tensor_get(r, i), naive_reduce(x, ops[k], axis, i), 1e-6,
                                   "%s axis %d element %zu", ops[k], axis, i);
            fx_fini(&f);
        }
}

Test(exec, integer_math_is_exact)
{
    struct fx f;
    fx_init(&f);
    int64_t n = 3;
    struct sim_tensor *a = sim_tensor_new(SIM_I32, 1, &n), *b = sim_tensor_new(SIM_I32, 1, &n);
    int32_t va[] = {2000000000, -7, 16777217}, vb[] = {147483647, 3, 1};
    memcpy(sim_tensor_data(a), va, sizeof(va));
    memcpy(sim_tensor_data(b), vb, sizeof(vb));
    fx_put(&f, "tcm", 0x0, a);
    fx_put(&f, "tcm", 0x100, b);
    uint64_t addrs[] = {0x0, 0x100};
    unsigned nd[] = {1, 1};
    int64_t sh[2][SIM_MAX_DIMS] = {{3}, {3}};
    fx_math(&f, 1, PE0, "add", SIM_I32, 2, addrs, nd, sh, 0x200, 1, &n, false, 0);
    fx_math(&f, 1, PE1, "sum", SIM_I32, 1, addrs, nd, sh, 0x300, 0, NULL, false, 0);
    fx_run_ok(&f, NULL);
    const int32_t *r = sim_tensor_cdata(fx_out(&f, "tcm", 0x200));
    cr_assert_eq(r[0], 2147483647);
    cr_assert_eq(r[1], -4);
    cr_assert_eq(r[2], 16777218, "beyond f32's 24 bits");
    cr_assert_eq(((int32_t *)sim_tensor_cdata(fx_out(&f, "tcm", 0x300)))[0],
                 2000000000 - 7 + 16777217);
    fx_fini(&f);
}

Test(exec, f16_math_rounds_its_result_to_f16)
{
    struct fx f;
    fx_init(&f);
    int64_t n = 2;
    struct sim_tensor *a = sim_tensor_new(SIM_F16, 1, &n);
    sim_tensor_set(a, 0, 1.0);
    sim_tensor_set(a, 1, 2.0);
    fx_put(&f, "tcm", 0x0, a);
    uint64_t addrs[] = {0x0};
    unsigned nd[] = {1};
    int64_t sh[1][SIM_MAX_DIMS] = {{2}};
    fx_math(&f, 1, PE0, "exp", SIM_F16, 1, addrs, nd, sh, 0x100, 1, &n, false, 0);
    fx_run_ok(&f, NULL);
    struct sim_tensor *r = fx_out(&f, "tcm", 0x100);
    cr_assert_eq(r->dtype, SIM_F16);
    /* e = 2.71828...: the nearest f16 is 2.71875 */
    cr_assert_float_eq(sim_tensor_get(r, 0), 2.71875, 0);
    fx_fini(&f);
}

/* ---- memory ops ------------------------------------------------------------------------------ */

Test(exec, dma_write_from_hbm_uses_its_snapshot_not_the_live_source)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "hbm", 0x0, fx_full(4, 1));
    fx_dma_write(&f, 10, "hbm", 0x0, 0x1000, 4); /* D4: snapshot of [1 1 1 1] */
    fx_put(&f, "hbm", 0x0, fx_full(4, 7));       /* phase 1 changes the source later */
    fx_run_ok(&f, NULL);
    cr_assert_float_eq(fx_f(fx_out(&f, "hbm", 0x1000), 0), 1.0f, 0, "the snapshot's value");
    fx_fini(&f);
}

Test(exec, dma_write_from_tcm_copies_what_phase_2_computed)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4);
    fx_dma_write(&f, 20, "tcm", 0x100, 0x5000, 4); /* no snapshot for tcm sources */
    fx_run_ok(&f, NULL);
    cr_assert_null(sim_memstore_get(f.m, "hbm", 0x5000), "phase 1's store is untouched");
    cr_assert_float_eq(fx_f(fx_out(&f, "hbm", 0x5000), 3), expf(4.0f), 1e-4);
    fx_fini(&f);
}

Test(exec, ipcq_copy_uses_its_snapshot_else_the_source)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "sram", 0x0, fx_full(4, 3));
    struct sim_tensor *snap = fx_full(4, 5);
    fx_ipcq(&f, 10, "sram", 0x0, "tcm", 0x100, 4, snap);
    sim_tensor_unref(snap);
    fx_ipcq(&f, 11, "sram", 0x0, "tcm", 0x200, 4, NULL); /* fresh read: 3 */
    /* without a store the op log has no snapshot: phase 2 reads the source then */
    sim_oplog_set_store(f.log, NULL);
    fx_ipcq(&f, 12, "sram", 0x0, "tcm", 0x300, 4, NULL);
    fx_put(&f, "sram", 0x0, fx_full(4, 8));
    fx_run_ok(&f, NULL);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x100), 0), 5.0f, 0);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x200), 0), 3.0f, 0);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x300), 0), 8.0f, 0);
    fx_fini(&f);
}

Test(exec, dma_read_replays_when_the_record_names_its_destination)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "hbm", 0x0, fx_full(4, 2));
    for (int i = 0; i < 2; i++) {
        struct sim_msg m;
        sim_msg_init(&m, SIM_MK_DMA_READ);
        fx_handle(&m.u.dma_read.src, "hbm", 0x0, SIM_F32, 1, &N4);
        fx_handle(&m.u.dma_read.dst, "tcm", 0x100 * (uint64_t)(i + 1), SIM_F32, 1, &N4);
        fx_log(&f, 10 + i, 11 + i, "sip0.cube0.pe0.pe_dma", &m);
    }
    /* the second as ADR-0052 D3.1 alone has it (no destination) */
    struct sim_value *p = fx_rec(&f, 1)->note.replay;
    const char *extra[] = {"src_space", "dst_space", "dst_addr", "shape", "dtype"};
    for (size_t i = 0; i < 5; i++)
        cr_assert(sim_value_map_del(p, extra[i]), "the op log's replay annotations give '%s'",
                  extra[i]);
    fx_run_ok(&f, NULL);
    cr_assert_eq(fx_info(&f, 0)->status, SIM_EXEC_DONE);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x100), 3), 2.0f, 0);
    cr_assert_eq(fx_info(&f, 1)->status, SIM_EXEC_SKIP_NO_DATA, "D3.1 alone: phase 1 loaded it");
    cr_assert_null(sim_memstore_get(sim_exec_store(f.x), "tcm", 0x200));
    fx_fini(&f);
}

Test(exec, writes_inside_a_larger_tensor_update_its_bytes_on_a_private_copy)
{
    struct fx f;
    fx_init(&f);
    int64_t ms[] = {4, 4};
    struct sim_tensor *m = sim_tensor_new(SIM_F32, 2, ms);
    for (size_t i = 0; i < 16; i++)
        sim_tensor_set(m, i, (double)i);
    fx_put(&f, "hbm", 0x1000, m);
    struct sim_tensor *row = fx_full(4, -1);
    fx_ipcq(&f, 10, "sram", 0x0, "hbm", 0x1000 + 16, 4, row); /* row 1 of m */
    sim_tensor_unref(row);
    fx_unary(&f, 20, "neg", 0x1000 + 32, 0x100, 4); /* reads row 2 out of m */
    sim_value_map_set_take(fx_rec(&f, 1)->params, "input_spaces", sim_value_list());
    sim_value_list_push_take(sim_value_map_get(fx_rec(&f, 1)->params, "input_spaces"),
                             sim_value_str("hbm"));
    fx_run_ok(&f, NULL);
    struct sim_tensor *r = fx_out(&f, "hbm", 0x1000);
    cr_assert_eq(r->nbytes, 64, "still the whole matrix");
    cr_assert_float_eq(fx_f(r, 4), -1.0f, 0);
    cr_assert_float_eq(fx_f(r, 8), 8.0f, 0);
    cr_assert_float_eq(fx_f(m, 4), 4.0f, 0, "phase 1's matrix is unchanged");
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x100), 1), -9.0f, 0);
    cr_assert_null(sim_memstore_get(sim_exec_store(f.x), "hbm", 0x1010), "no stray entry");
    fx_fini(&f);
}

/* ---- skipped records and TileToken stages ---------------------------------------------------- */

Test(exec, unknown_records_are_skipped_tile_token_stages_replayed)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MEMORY_WRITE);
    fx_log(&f, 1, 2, "sip0.io_cpu", &m);

    /* a MATH stage carrying a math op's keys, and a GEMM stage with timing only */
    sim_msg_init(&m, SIM_MK_TILE_TOKEN);
    struct sim_value *sp = sim_value_map();
    sim_value_map_set_str(sp, "op", "neg");
    int64_t a = 0x40;
    sim_value_map_set_take(sp, "input_addrs", sim_value_int_list(&a, 1));
    struct sim_value *shapes = sim_value_list();
    sim_value_list_push_take(shapes, sim_value_int_list(&N4, 1));
    sim_value_map_set_take(sp, "input_shapes", shapes);
    sim_value_map_set_int(sp, "dst_addr", 0x500);
    sim_value_map_set_take(sp, "shape_out", sim_value_int_list(&N4, 1));
    sim_value_map_set_str(sp, "dtype", "f32");
    sim_tile_add_stage_take(&m, SIM_STAGE_MATH, 0, 0, 4, sp);
    sim_tile_add_stage_take(&m, SIM_STAGE_GEMM, 0, 0, 100, NULL);
    fx_log(&f, 3, 4, "sip0.cube0.pe0.pe_math", &m);
    sim_msg_init(&m, SIM_MK_TILE_TOKEN);
    sim_tile_add_stage_take(&m, SIM_STAGE_GEMM, 0, 0, 100, NULL);
    fx_log(&f, 5, 6, "sip0.cube0.pe0.pe_gemm", &m);

    fx_run_ok(&f, NULL);
    cr_assert_eq(fx_info(&f, 0)->status, SIM_EXEC_SKIP_UNKNOWN);
    cr_assert_str_eq(fx_rec(&f, 1)->op_name, "TileToken/MATH");
    cr_assert_eq(fx_info(&f, 1)->status, SIM_EXEC_DONE);
    cr_assert_eq(fx_info(&f, 1)->kind, SIM_EXEC_KIND_MATH);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x500), 2), 1.0f, 0);
    cr_assert_eq(fx_info(&f, 2)->status, SIM_EXEC_SKIP_NO_DATA);
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->executed, 1);
    cr_assert_eq(s->skipped, 2);
    fx_fini(&f);
}

/* ---- errors ---------------------------------------------------------------------------------- */

Test(exec, errors_name_the_op_and_the_problem)
{
    struct {
        const char *op;
        const char *drop_key;
        uint64_t src;
        const char *expect;
    } cases[] = {
        {"frobnicate", NULL, 0x0, "unknown math op 'frobnicate' with 1 input"},
        {"exp", "shape_out", 0x0, "params: 'shape_out' is missing"},
        {"exp", "dtype", 0x0, "params: 'dtype' is missing"},
        {"exp", NULL, 0x9990, "input 0: tcm 0x9990: no tensor holds these 16 bytes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fx f;
        fx_init(&f);
        sim_oplog_set_store(f.log, NULL); /* no snapshot to fall back on */
        two_vectors(&f, 0x0, 0x40);
        fx_unary(&f, 10, cases[i].op, cases[i].src, 0x100, 4);
        if (cases[i].drop_key)
            sim_value_map_del(fx_rec(&f, 0)->params, cases[i].drop_key);
        struct diag d;
        cr_assert_lt(fx_run(&f, NULL, &d), 0, "case %zu", i);
        char head[128];
        snprintf(head, sizeof(head), "op #0 %s on " PE0 " at 10 ns: ", cases[i].op);
        cr_assert(strncmp(d.msg, head, strlen(head)) == 0, "%s", d.msg);
        cr_assert(strstr(d.msg, cases[i].expect) != NULL, "%s", d.msg);
        cr_assert_null(strchr(d.msg, '\n'));
        fx_fini(&f);
    }
}

Test(exec, a_gemm_whose_shapes_do_not_fit_is_an_error)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {4, 5}, bs[] = {6, 3}, cs[] = {4, 3};
    fx_put(&f, "tcm", 0x0, fx_tensor(&f, SIM_F32, 2, as));
    fx_put(&f, "tcm", 0x1000, fx_tensor(&f, SIM_F32, 2, bs));
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F32, 0x0, 2, as, 0x1000, 2, bs, SIM_F32, 0x2000, 2,
            cs);
    struct diag d;
    cr_assert_lt(fx_run(&f, NULL, &d), 0);
    cr_assert(strstr(d.msg, "gemm_f32") && strstr(d.msg, "inner dimensions differ"), "%s", d.msg);
    fx_fini(&f);
}

/* ---- isolation and parallelism ----------------------------------------------------------------
 */

/* 8 PEs in lockstep: GEMM, add a bias, tanh, write back to hbm. */
static void lockstep_kernel(struct fx *f)
{
    int64_t as[] = {16, 32}, bs[] = {32, 16}, cs[] = {16, 16}, n = 256;
    for (uint64_t pe = 0; pe < 8; pe++) {
        uint64_t base = 0x100000 * (pe + 1);
        char comp[64];
        fx_put(f, "tcm", base, fx_tensor(f, SIM_F32, 2, as));
        fx_put(f, "tcm", base + 0x1000, fx_tensor(f, SIM_F32, 2, bs));
        fx_put(f, "tcm", base + 0x3000, fx_tensor(f, SIM_F32, 2, cs));
        snprintf(comp, sizeof(comp), "sip0.cube0.pe%llu.pe_gemm", (unsigned long long)pe);
        fx_gemm(f, 10, comp, SIM_F32, base, 2, as, base + 0x1000, 2, bs, SIM_F32, base + 0x2000, 2,
                cs);
        snprintf(comp, sizeof(comp), "sip0.cube0.pe%llu.pe_math", (unsigned long long)pe);
        fx_binary(f, 20, comp, "add", base + 0x2000, base + 0x3000, base + 0x4000, n);
        uint64_t a[] = {base + 0x4000};
        unsigned nd[] = {1};
        int64_t sh[1][SIM_MAX_DIMS] = {{n}};
        fx_math(f, 30, comp, "tanh", SIM_F32, 1, a, nd, sh, base + 0x5000, 1, &n, false, 0);
        fx_dma_write(f, 40, "tcm", base + 0x5000, 0x10000000 + pe * 0x1000, n);
    }
}

Test(exec, two_workers_give_the_bytes_one_gives)
{
    struct fx f, g;
    fx_init(&f);
    fx_init(&g);
    lockstep_kernel(&f);
    lockstep_kernel(&g);
    fx_run_ok(&f, &(struct sim_exec_opts){.threads = 1});
    fx_run_ok(&g, &(struct sim_exec_opts){.threads = 2});
    cr_assert_eq(sim_exec_stats(g.x)->waves, 4, "one wave per t_start: the PEs are independent");
    cr_assert_eq(sim_exec_stats(g.x)->parallel_ops, 32);
    for (uint64_t pe = 0; pe < 8; pe++) {
        struct sim_tensor *x = fx_out(&f, "hbm", 0x10000000 + pe * 0x1000);
        struct sim_tensor *y = fx_out(&g, "hbm", 0x10000000 + pe * 0x1000);
        cr_assert_eq(x->nbytes, 1024);
        cr_assert_eq(memcmp(sim_tensor_cdata(x), sim_tensor_cdata(y), x->nbytes), 0, "PE %llu",
                     (unsigned long long)pe);
    }
    fx_fini(&f);
    fx_fini(&g);
}

Test(exec, phase_1_store_is_never_modified)
{
    struct fx f;
    fx_init(&f);
    lockstep_kernel(&f);
    size_t before = sim_memstore_space_len(f.m, "tcm");
    uint64_t gen = sim_memstore_generation(f.m);
    struct sim_tensor *a = sim_memstore_get(f.m, "tcm", 0x100000);
    float a0 = fx_f(a, 0);
    fx_run_ok(&f, NULL);
    cr_assert_eq(sim_memstore_space_len(f.m, "tcm"), before);
    cr_assert_eq(sim_memstore_generation(f.m), gen);
    cr_assert_eq(sim_memstore_space_len(f.m, "hbm"), 0);
    cr_assert_float_eq(fx_f(a, 0), a0, 0);
    cr_assert_gt(sim_memstore_space_len(sim_exec_store(f.x), "hbm"), 0);
    fx_fini(&f);
}

Test(exec, an_empty_log_does_nothing)
{
    struct fx f;
    fx_init(&f);
    fx_run_ok(&f, NULL);
    cr_assert_eq(sim_exec_stats(f.x)->records, 0);
    cr_assert_eq(sim_exec_stats(f.x)->waves, 0);
    sim_exec_free(NULL);
    fx_fini(&f);
}

Test(exec, writes_follow_byte_ranges_not_only_addresses)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "tcm", 0x0, fx_full(16, 1));  /* 64 bytes at 0x0 */
    fx_put(&f, "tcm", 0x400, fx_full(2, 5)); /* 8 bytes at 0x400 */
    two_vectors(&f, 0x100, 0x140);
    fx_unary(&f, 10, "neg", 0x100, 0x0, 4);   /* 16 bytes at 0x0: the first quarter */
    fx_unary(&f, 10, "neg", 0x140, 0x400, 4); /* 16 bytes at 0x400: more than is there */
    fx_run_ok(&f, NULL);
    struct sim_tensor *r = fx_out(&f, "tcm", 0x0);
    cr_assert_eq(r->nbytes, 64, "the first tile of a larger tensor is written into it");
    cr_assert_float_eq(fx_f(r, 0), -1.0f, 0);
    cr_assert_float_eq(fx_f(r, 3), -4.0f, 0);
    cr_assert_float_eq(fx_f(r, 4), 1.0f, 0, "the other bytes stay");
    struct sim_tensor *s = fx_out(&f, "tcm", 0x400);
    cr_assert_eq(s->nbytes, 16, "a smaller tensor is replaced");
    cr_assert_float_eq(fx_f(s, 3), -2.0f, 0);
    fx_fini(&f);
}

Test(exec, a_copy_of_part_of_a_tensor_reads_back_in_any_layout)
{
    struct fx f;
    fx_init(&f);
    int64_t ms[] = {4, 4};
    struct sim_tensor *m = sim_tensor_new(SIM_F32, 2, ms);
    for (size_t i = 0; i < 16; i++)
        sim_tensor_set(m, i, (double)i);
    fx_put(&f, "hbm", 0x1000, m);
    struct sim_msg msg;
    sim_msg_init(&msg, SIM_MK_DMA_READ);
    fx_handle(&msg.u.dma_read.src, "hbm", 0x1000 + 16, SIM_F32, 1, &N4);
    fx_handle(&msg.u.dma_read.dst, "tcm", 0x100, SIM_F32, 1, &N4);
    fx_log(&f, 10, 11, "sip0.cube0.pe0.pe_dma", &msg);
    struct sim_value *p = fx_rec(&f, 0)->params;
    sim_value_map_set_str(p, "dst_space", "tcm");
    sim_value_map_set_int(p, "dst_addr", 0x100);
    /* neg reads the copied row as 2 x 2 */
    uint64_t a[] = {0x100};
    unsigned nd[] = {2};
    int64_t sh[1][SIM_MAX_DIMS] = {{2, 2}};
    int64_t os[] = {2, 2};
    fx_math(&f, 20, PE0, "neg", SIM_F32, 1, a, nd, sh, 0x200, 2, os, false, 0);
    fx_run_ok(&f, NULL);
    struct sim_tensor *r = fx_out(&f, "tcm", 0x200);
    for (size_t i = 0; i < 4; i++)
        cr_assert_float_eq(fx_f(r, i), -(float)(4 + i), 0, "element %zu", i);
    /* the copy itself, read through the store as other layouts */
    struct sim_tensor *v;
    int64_t two[] = {2, 2};
    cr_assert_eq(sim_memstore_read(sim_exec_store(f.x), "tcm", 0x100, SIM_U32, 2, two, &v, NULL),
                 0);
    float f5 = 5.0f;
    uint32_t bits;
    memcpy(&bits, &f5, 4);
    cr_assert_eq(((uint32_t *)sim_tensor_cdata(v))[1], bits, "element 1 of row 1 is 5.0f");
    sim_tensor_unref(v);
    fx_fini(&f);
}

Test(exec, a_copy_of_what_phase_2_computed_reads_it_live_not_its_stale_snapshot)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_put(&f, "tcm", 0x100, fx_full(4, 0)); /* what phase 1 had there: exp is pending */
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4);
    fx_ipcq(&f, 20, "tcm", 0x100, "sram", 0x0, 4, NULL); /* the op log reads a stale snapshot */
    cr_assert_not_null(sim_value_map_get(fx_rec(&f, 1)->params, "snapshot"));
    cr_assert_eq(sim_value_map_get(fx_rec(&f, 1)->params, "snapshot")->type, SIM_V_TENSOR);
    fx_run_ok(&f, NULL);
    cr_assert_float_eq(fx_f(fx_out(&f, "sram", 0x0), 3), expf(4.0f), 1e-4, "the live result");
    fx_fini(&f);
}

Test(exec, data_phase_1_had_again_is_copied_from_the_snapshot)
{
    struct fx f;
    fx_init(&f);
    two_vectors(&f, 0x0, 0x40);
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4); /* computed ... */
    struct sim_tensor *five = fx_full(4, 5), *nine = fx_full(4, 9);
    fx_ipcq(&f, 20, "sram", 0x0, "tcm", 0x100, 4, five); /* ... then phase-1 data over it */
    fx_ipcq(&f, 30, "tcm", 0x100, "sram", 0x40, 4, nine);
    sim_tensor_unref(five);
    sim_tensor_unref(nine);
    fx_run_ok(&f, NULL);
    cr_assert_float_eq(fx_f(fx_out(&f, "tcm", 0x100), 0), 5.0f, 0);
    cr_assert_float_eq(fx_f(fx_out(&f, "sram", 0x40), 0), 9.0f, 0, "the snapshot serves again");
    fx_fini(&f);
}
