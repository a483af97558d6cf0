/*
 * GEMM batching in the phase-2 executor, on hand-built op logs and on the built-in GEMM
 * kernels: identical independent GEMMs meet in one wave even when their PEs do not run in
 * lockstep (different t_starts), those that share B or A run as one call when that pays
 * (reported as a batch, what really ran as one call), the others one by one; dependencies still
 * order them, results agree with a naive product, with an unbatched replay and across
 * worker counts.
 */
#include "exec_fixture.h"
#include "sim/host/run.h"
#include "sim/phase2/verify.h"

#include <stdio.h>

/* C = A B (2-D, row-major) in double, element by element, against c. */
static void check_product(const struct sim_tensor *c, const struct sim_tensor *a,
                          const struct sim_tensor *b, const struct sim_tensor *c0)
{
    size_t m = (size_t)a->shape[0], k = (size_t)a->shape[1], n = (size_t)b->shape[1];
    cr_assert_eq(sim_tensor_numel(c), m * n);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double want = c0 ? sim_tensor_get(c0, i * n + j) : 0;
            for (size_t p = 0; p < k; p++)
                want += sim_tensor_get(a, i * k + p) * sim_tensor_get(b, p * n + j);
            double got = sim_tensor_get(c, i * n + j);
            cr_assert(fabs(got - want) <= 1e-4 + 1e-4 * fabs(want),
                      "C[%zu][%zu] = %.9g, expected %.9g", i, j, got, want);
        }
}

/* PE p's TCM: A at its base, B at OFF_B, C at OFF_C (room for a megabyte each) */
#define OFF_B 0x400000ull
#define OFF_C 0x800000ull

static uint64_t pe_base(unsigned pe)
{
    return 0x1000000ull * (pe + 1);
}

static const char *gemm_comp(unsigned pe)
{
    static char buf[64];
    snprintf(buf, sizeof(buf), "sip0.cube0.pe%u.pe_gemm", pe);
    return buf;
}

enum b_kind {
    B_SAME,   /* one tensor stored at every PE's address */
    B_EQUAL,  /* equal copies: each PE loaded the same weights */
    B_OTHERS, /* different values */
};

/*
 * PE p: A_p (m x k) at base, B (k x n) at base + OFF_B, C_p = A_p B at base + OFF_C,
 * GEMM at t[p]. Returns B (borrowed from the store).
 */
static struct sim_tensor *gemms(struct fx *f, unsigned pes, int64_t m, int64_t k, int64_t n,
                                enum b_kind bk, const double *t)
{
    int64_t as[] = {m, k}, bs[] = {k, n}, cs[] = {m, n};
    struct sim_tensor *b = fx_tensor(f, SIM_F32, 2, bs);
    for (unsigned pe = 0; pe < pes; pe++) {
        uint64_t base = pe_base(pe);
        fx_put(f, "tcm", base, fx_tensor(f, SIM_F32, 2, as));
        struct sim_tensor *bp = bk == B_SAME    ? sim_tensor_ref(b)
                                : bk == B_EQUAL ? sim_tensor_copy(b)
                                                : fx_tensor(f, SIM_F32, 2, bs);
        fx_put(f, "tcm", base + OFF_B, bp);
        fx_gemm(f, t ? t[pe] : 5, gemm_comp(pe), SIM_F32, base, 2, as, base + OFF_B, 2, bs, SIM_F32,
                base + OFF_C, 2, cs);
    }
    sim_tensor_unref(b);
    return sim_memstore_get(f->m, "tcm", pe_base(0) + OFF_B);
}

static void check_pes(struct fx *f, unsigned pes)
{
    for (unsigned pe = 0; pe < pes; pe++) {
        uint64_t base = pe_base(pe);
        check_product(fx_out(f, "tcm", base + OFF_C), sim_memstore_get(f->m, "tcm", base),
                      sim_memstore_get(f->m, "tcm", base + OFF_B), NULL);
    }
}

Test(exec_batch, identical_gemms_sharing_b_run_as_one_call)
{
    struct fx f;
    fx_init(&f);
    gemms(&f, 4, 4, 32, 32, B_SAME, NULL);
    /* and one of another shape */
    int64_t xs[] = {4, 16}, ys[] = {16, 32}, cs[] = {4, 32};
    fx_put(&f, "tcm", 0x900000, fx_tensor(&f, SIM_F32, 2, xs));
    fx_put(&f, "tcm", 0x901000, fx_tensor(&f, SIM_F32, 2, ys));
    fx_gemm(&f, 5, gemm_comp(4), SIM_F32, 0x900000, 2, xs, 0x901000, 2, ys, SIM_F32, 0x902000, 2,
            cs);
    fx_run_ok(&f, NULL);
    int64_t batch = fx_info(&f, 0)->batch;
    cr_assert_geq(batch, 0);
    for (size_t i = 1; i < 4; i++)
        cr_assert_eq(fx_info(&f, i)->batch, batch, "GEMM %zu is in the call", i);
    cr_assert_eq(fx_info(&f, 4)->batch, -1, "another shape is not");
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->gemm_batches, 1);
    cr_assert_eq(s->gemms_batched, 4);
    cr_assert_eq(s->gemms_alike, 4);
    check_pes(&f, 4);
    fx_fini(&f);
}

Test(exec_batch, equal_copies_of_b_are_one_b)
{
    struct fx f;
    fx_init(&f);
    gemms(&f, 4, 1, 64, 64, B_EQUAL, NULL);
    fx_run_ok(&f, NULL);
    cr_assert_eq(sim_exec_stats(f.x)->gemm_batches, 1);
    cr_assert_eq(sim_exec_stats(f.x)->gemms_batched, 4);
    check_pes(&f, 4);
    fx_fini(&f);
}

Test(exec_batch, identical_gemms_with_different_b_run_one_by_one)
{
    struct fx f;
    fx_init(&f);
    gemms(&f, 4, 4, 32, 32, B_OTHERS, NULL);
    fx_run_ok(&f, NULL);
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->gemms_alike, 4, "alike, in one wave");
    cr_assert_eq(s->gemm_batches, 0, "but no call computes two of them");
    cr_assert_eq(s->gemms_batched, 0);
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(fx_info(&f, i)->batch, -1);
    check_pes(&f, 4);
    fx_fini(&f);
}

Test(exec_batch, another_layout_of_b_is_another_batch)
{
    struct fx f;
    fx_init(&f);
    gemms(&f, 4, 4, 32, 32, B_SAME, NULL);
    /* op 3 reads B as column-major: same shapes, another layout */
    sim_value_map_set_str(fx_rec(&f, 3)->params, "layout_b", "col_major");
    fx_run_ok(&f, NULL);
    cr_assert_eq(fx_info(&f, 0)->batch, fx_info(&f, 2)->batch);
    cr_assert_geq(fx_info(&f, 0)->batch, 0);
    cr_assert_eq(fx_info(&f, 3)->batch, -1);
    cr_assert_eq(sim_exec_stats(f.x)->gemms_batched, 3);
    fx_fini(&f);
}

Test(exec_batch, many_rows_are_not_stacked)
{
    /* m = 16, k = n = 64: one call is no faster than four (phase2_bench) */
    struct fx f;
    fx_init(&f);
    gemms(&f, 4, 16, 64, 64, B_SAME, NULL);
    fx_run_ok(&f, NULL);
    cr_assert_eq(sim_exec_stats(f.x)->gemms_alike, 4);
    cr_assert_eq(sim_exec_stats(f.x)->gemm_batches, 0);
    check_pes(&f, 4);
    fx_fini(&f);
}

/*
 * PE p: A (m x k, an equal copy on every PE: activations each PE computed) at base, its
 * own B_p (k x n) at base + OFF_B, C_p = A B_p (+ C_p when accumulating) at base + OFF_C.
 */
static void gemms_sharing_a(struct fx *f, unsigned pes, int64_t m, int64_t k, int64_t n,
                            bool accumulate)
{
    int64_t as[] = {m, k}, bs[] = {k, n}, cs[] = {m, n};
    struct sim_tensor *a = fx_tensor(f, SIM_F32, 2, as);
    for (unsigned pe = 0; pe < pes; pe++) {
        uint64_t base = pe_base(pe);
        fx_put(f, "tcm", base, sim_tensor_copy(a));
        fx_put(f, "tcm", base + OFF_B, fx_tensor(f, SIM_F32, 2, bs));
        if (accumulate)
            fx_put(f, "tcm", base + OFF_C, fx_tensor(f, SIM_F32, 2, cs));
        fx_gemm(f, 5 + pe, gemm_comp(pe), SIM_F32, base, 2, as, base + OFF_B, 2, bs, SIM_F32,
                base + OFF_C, 2, cs);
        if (accumulate)
            sim_value_map_set_bool(fx_rec(f, pe)->params, "accumulate", true);
    }
    sim_tensor_unref(a);
}

Test(exec_batch, gemms_sharing_a_run_as_one_call_on_their_b_side_by_side)
{
    /* 8 x 32 x 1 (a GEMV per PE, as llm_decode's MLP tiles): one call on the B operands
     * copied side by side is faster than 4 (phase2_bench); accumulating, so the C each
     * starts from goes in side by side too */
    struct fx f;
    fx_init(&f);
    gemms_sharing_a(&f, 4, 8, 32, 1, true);
    struct sim_tensor *c0[4];
    for (unsigned pe = 0; pe < 4; pe++)
        c0[pe] = sim_tensor_copy(sim_memstore_get(f.m, "tcm", pe_base(pe) + OFF_C));
    fx_run_ok(&f, NULL);
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->gemm_batches, 1, "%zu calls", s->gemm_batches);
    cr_assert_eq(s->col_batches, 1, "on B side by side");
    cr_assert_eq(s->gemms_batched, 4);
    for (size_t i = 1; i < 4; i++)
        cr_assert_eq(fx_info(&f, i)->batch, fx_info(&f, 0)->batch);
    for (unsigned pe = 0; pe < 4; pe++) {
        uint64_t base = pe_base(pe);
        check_product(fx_out(&f, "tcm", base + OFF_C), sim_memstore_get(f.m, "tcm", base),
                      sim_memstore_get(f.m, "tcm", base + OFF_B), c0[pe]);
        sim_tensor_unref(c0[pe]);
    }
    fx_fini(&f);
}

Test(exec_batch, wide_gemms_sharing_a_run_one_by_one)
{
    /* 1 x 32 x 16 (llm_decode's projections of one token): copying the B operands side by
     * side costs more than the calls it saves (phase2_bench), so they run one by one */
    struct fx f;
    fx_init(&f);
    gemms_sharing_a(&f, 4, 1, 32, 16, false);
    fx_run_ok(&f, NULL);
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->gemms_alike, 4);
    cr_assert_eq(s->gemm_batches, 0);
    for (unsigned pe = 0; pe < 4; pe++) {
        uint64_t base = pe_base(pe);
        check_product(fx_out(&f, "tcm", base + OFF_C), sim_memstore_get(f.m, "tcm", base),
                      sim_memstore_get(f.m, "tcm", base + OFF_B), NULL);
    }
    fx_fini(&f);
}

Test(exec_batch, one_call_where_phase2_bench_measured_it_faster)
{
    /* the rule against phase2_bench's table: one call faster (< 0.9 of the loop's time)
     * and slower or no gain (>= 1) */
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_IN_PLACE, 1, 256, 256));
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_COPIED, 1, 16, 32));
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_COPIED, 8, 1, 32));
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_COPIED, 8, 256, 256));
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_IN_PLACE, 8, 1, 256));
    cr_assert_not(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_COPIED, 8, 1, 256));
    cr_assert_not(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_COPIED, 32, 32, 32));
    cr_assert_not(sim_exec_stacking_pays(SIM_EXEC_STACK_ROWS_IN_PLACE, 256, 256, 256));
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_COLUMNS, 32, 1, 16));
    cr_assert(sim_exec_stacking_pays(SIM_EXEC_STACK_COLUMNS, 8, 1, 32));
    cr_assert_not(sim_exec_stacking_pays(SIM_EXEC_STACK_COLUMNS, 1, 16, 32));
    cr_assert_not(sim_exec_stacking_pays(SIM_EXEC_STACK_COLUMNS, 8, 1, 256));
    cr_assert_not(sim_exec_stacking_pays(SIM_EXEC_STACK_COLUMNS, 64, 64, 64));
}

/*
 * 8 PEs out of step: PE p computes its A with an exp at 10 + 7p ns, multiplies it by the
 * shared B at 20 + 7p and adds a bias at 30 + 7p. No two GEMMs share a t_start, yet they
 * meet in one wave and run as one call; the adds still follow their own GEMM.
 */
static void skewed_kernel(struct fx *f)
{
    int64_t as[] = {1, 64}, bs[] = {64, 64}, cs[] = {1, 64}, na = 64, nc = 64;
    struct sim_tensor *b = fx_tensor(f, SIM_F32, 2, bs);
    for (unsigned pe = 0; pe < 8; pe++) {
        uint64_t base = pe_base(pe);
        char comp[64];
        snprintf(comp, sizeof(comp), "sip0.cube0.pe%u.pe_math", pe);
        fx_put(f, "tcm", base + 0x30000, fx_tensor(f, SIM_F32, 1, &na));
        fx_put(f, "tcm", base + OFF_B, sim_tensor_ref(b));
        fx_put(f, "tcm", base + 0x40000, fx_tensor(f, SIM_F32, 1, &nc));
        fx_unary(f, 10 + 7 * pe, "exp", base + 0x30000, base, na);
        fx_gemm(f, 20 + 7 * pe, gemm_comp(pe), SIM_F32, base, 2, as, base + OFF_B, 2, bs, SIM_F32,
                base + OFF_C, 2, cs);
        fx_binary(f, 30 + 7 * pe, comp, "add", base + OFF_C, base + 0x40000, base + 0x50000, nc);
    }
    sim_tensor_unref(b);
}

/* The record index of PE pe's op number k (0 exp, 1 GEMM, 2 add) in t_start order. */
static size_t skewed_index(struct fx *f, unsigned pe, int k)
{
    size_t n;
    struct sim_op_record *const *r = fx_records(f, &n);
    double t = (k == 0 ? 10 : k == 1 ? 20 : 30) + 7.0 * pe;
    for (size_t i = 0; i < n; i++)
        if (r[i]->t_start == t && strstr(r[i]->component_id, k == 1 ? "pe_gemm" : "pe_math"))
            return i;
    cr_assert_fail("no op %d of PE %u", k, pe);
    return 0;
}

Test(exec_batch, gemms_of_pes_out_of_step_meet_in_one_call)
{
    struct fx f;
    fx_init(&f);
    skewed_kernel(&f);
    fx_run_ok(&f, NULL);
    const struct sim_exec_stats *s = sim_exec_stats(f.x);
    cr_assert_eq(s->gemm_batches, 1, "%zu calls", s->gemm_batches);
    cr_assert_eq(s->gemms_batched, 8);
    size_t g0 = skewed_index(&f, 0, 1);
    for (unsigned pe = 0; pe < 8; pe++) {
        size_t e = skewed_index(&f, pe, 0), g = skewed_index(&f, pe, 1);
        size_t ad = skewed_index(&f, pe, 2);
        cr_assert_eq(fx_info(&f, g)->wave, fx_info(&f, g0)->wave, "PE %u's GEMM waited", pe);
        cr_assert_eq(fx_info(&f, g)->batch, fx_info(&f, g0)->batch);
        cr_assert_lt(fx_info(&f, e)->wave, fx_info(&f, g)->wave, "the exp comes first");
        cr_assert_gt(fx_info(&f, ad)->wave, fx_info(&f, g)->wave, "the add comes after");
        uint64_t base = pe_base(pe);
        int64_t as[] = {1, 64};
        struct sim_tensor *a = sim_tensor_new(SIM_F32, 2, as); /* the exp's result, 1 x 64 */
        memcpy(sim_tensor_data(a), sim_tensor_cdata(fx_out(&f, "tcm", base)), a->nbytes);
        check_product(fx_out(&f, "tcm", base + OFF_C), a,
                      sim_memstore_get(f.m, "tcm", base + OFF_B), NULL);
        sim_tensor_unref(a);
        const struct sim_tensor *c = fx_out(&f, "tcm", base + OFF_C);
        const struct sim_tensor *bias = sim_memstore_get(f.m, "tcm", base + 0x40000);
        const struct sim_tensor *y = fx_out(&f, "tcm", base + 0x50000);
        for (size_t i = 0; i < 64; i++)
            cr_assert_float_eq(fx_f(y, i), fx_f(c, i) + fx_f(bias, i), 1e-6f);
    }
    fx_fini(&f);
}

Test(exec_batch, batched_and_unbatched_replays_agree)
{
    struct fx f, g;
    fx_init(&f);
    fx_init(&g);
    skewed_kernel(&f);
    skewed_kernel(&g);
    fx_run_ok(&f, NULL);
    fx_run_ok(&g, &(struct sim_exec_opts){.no_batch = true});
    cr_assert_eq(sim_exec_stats(g.x)->gemm_batches, 0);
    cr_assert_eq(sim_exec_stats(g.x)->gemms_alike, 0, "no_batch does not look for them");
    for (unsigned pe = 0; pe < 8; pe++) {
        uint64_t at = pe_base(pe) + 0x50000;
        struct sim_tensor *x = fx_out(&f, "tcm", at), *y = fx_out(&g, "tcm", at);
        /* one call may sum in another order than eight: equal up to f32 rounding */
        for (size_t i = 0; i < 64; i++)
            cr_assert_float_eq(fx_f(x, i), fx_f(y, i), 1e-5f * (1 + fabsf(fx_f(y, i))));
    }
    fx_fini(&f);
    fx_fini(&g);
}

Test(exec_batch, a_gemm_reading_an_identical_one_waits_for_it)
{
    /* PE 0: C1 = A B, then C2 = C1 B (identical shapes); PE 1: C3 = A' B later. C1 and C3
     * run as one call; C2 after them, alone. */
    struct fx f;
    fx_init(&f);
    int64_t as[] = {2, 32}, bs[] = {32, 32};
    struct sim_tensor *b = fx_put(&f, "tcm", 0x10000, fx_tensor(&f, SIM_F32, 2, bs));
    struct sim_tensor *a = fx_put(&f, "tcm", 0x20000, fx_tensor(&f, SIM_F32, 2, as));
    struct sim_tensor *a2 = fx_put(&f, "tcm", 0x30000, fx_tensor(&f, SIM_F32, 2, as));
    fx_gemm(&f, 5, gemm_comp(0), SIM_F32, 0x20000, 2, as, 0x10000, 2, bs, SIM_F32, 0x40000, 2, as);
    fx_gemm(&f, 9, gemm_comp(0), SIM_F32, 0x40000, 2, as, 0x10000, 2, bs, SIM_F32, 0x50000, 2, as);
    fx_gemm(&f, 12, gemm_comp(1), SIM_F32, 0x30000, 2, as, 0x10000, 2, bs, SIM_F32, 0x60000, 2, as);
    fx_run_ok(&f, NULL);
    cr_assert_geq(fx_info(&f, 0)->batch, 0);
    cr_assert_eq(fx_info(&f, 0)->batch, fx_info(&f, 2)->batch, "C1 and C3: one call");
    cr_assert_gt(fx_info(&f, 1)->wave, fx_info(&f, 0)->wave, "C2 reads C1");
    cr_assert_eq(fx_info(&f, 1)->batch, -1);
    check_product(fx_out(&f, "tcm", 0x40000), a, b, NULL);
    check_product(fx_out(&f, "tcm", 0x60000), a2, b, NULL);
    check_product(fx_out(&f, "tcm", 0x50000), fx_out(&f, "tcm", 0x40000), b, NULL);
    fx_fini(&f);
}

Test(exec_batch, rows_that_follow_each_other_are_stacked_in_their_order)
{
    /* one A of 4 x 8 rows; PE p multiplies rows 8p .. 8p + 7 by the shared B, the PEs in
     * reverse: one call reads the rows where they are, in address order */
    struct fx f;
    fx_init(&f);
    int64_t all[] = {32, 64}, as[] = {8, 64}, bs[] = {64, 64}, cs[] = {8, 64};
    struct sim_tensor *a = fx_put(&f, "tcm", 0x100000, fx_tensor(&f, SIM_F32, 2, all));
    struct sim_tensor *b = fx_put(&f, "tcm", 0x200000, fx_tensor(&f, SIM_F32, 2, bs));
    for (unsigned p = 0; p < 4; p++) {
        unsigned pe = 3 - p;
        fx_gemm(&f, 5 + p, gemm_comp(pe), SIM_F32, 0x100000 + pe * 8 * 64 * 4, 2, as, 0x200000, 2,
                bs, SIM_F32, 0x300000 + pe * 0x10000, 2, cs);
    }
    fx_run_ok(&f, NULL);
    cr_assert_eq(sim_exec_stats(f.x)->gemm_batches, 1);
    cr_assert_eq(sim_exec_stats(f.x)->gemms_batched, 4);
    for (unsigned pe = 0; pe < 4; pe++) {
        struct sim_tensor *rows = sim_tensor_new(SIM_F32, 2, as);
        memcpy(sim_tensor_data(rows), (const float *)sim_tensor_cdata(a) + pe * 8 * 64,
               rows->nbytes);
        check_product(fx_out(&f, "tcm", 0x300000 + pe * 0x10000), rows, b, NULL);
        sim_tensor_unref(rows);
    }
    fx_fini(&f);
}

Test(exec_batch, accumulating_and_f16_gemms_run_stacked_too)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {2, 48}, bs[] = {48, 40}, cs[] = {2, 40};
    struct sim_tensor *b = fx_tensor(&f, SIM_F16, 2, bs);
    for (unsigned pe = 0; pe < 4; pe++) {
        uint64_t base = pe_base(pe);
        fx_put(&f, "tcm", base, fx_tensor(&f, SIM_F16, 2, as));
        fx_put(&f, "tcm", base + OFF_B, sim_tensor_ref(b));
        fx_put(&f, "tcm", base + OFF_C, fx_tensor(&f, SIM_F32, 2, cs));
        fx_gemm(&f, 5 + pe, gemm_comp(pe), SIM_F16, base, 2, as, base + OFF_B, 2, bs, SIM_F32,
                base + OFF_C, 2, cs);
        sim_value_map_set_bool(fx_rec(&f, pe)->params, "accumulate", true);
    }
    sim_tensor_unref(b);
    fx_run_ok(&f, NULL);
    cr_assert_eq(sim_exec_stats(f.x)->gemm_batches, 1);
    for (unsigned pe = 0; pe < 4; pe++) {
        uint64_t base = pe_base(pe);
        check_product(fx_out(&f, "tcm", base + OFF_C), sim_memstore_get(f.m, "tcm", base),
                      sim_memstore_get(f.m, "tcm", base + OFF_B),
                      sim_memstore_get(f.m, "tcm", base + OFF_C));
    }
    fx_fini(&f);
}

Test(exec_batch, a_big_batch_is_split_by_work_alone)
{
    /* 8 GEMMs of 4 x 512 x 512: a million multiply-adds each; calls of at most about two
     * million, the same with 1 and with 2 workers (so are the bytes) */
    struct fx f, g;
    fx_init(&f);
    fx_init(&g);
    gemms(&f, 8, 4, 512, 512, B_SAME, NULL);
    gemms(&g, 8, 4, 512, 512, B_SAME, NULL);
    fx_run_ok(&f, &(struct sim_exec_opts){.threads = 1});
    fx_run_ok(&g, &(struct sim_exec_opts){.threads = 2});
    cr_assert_eq(sim_exec_stats(f.x)->gemm_batches, 4);
    cr_assert_eq(sim_exec_stats(f.x)->gemms_batched, 8);
    cr_assert_eq(sim_exec_stats(g.x)->gemm_batches, 4);
    for (unsigned pe = 0; pe < 8; pe++) {
        uint64_t at = pe_base(pe) + OFF_C;
        struct sim_tensor *x = fx_out(&f, "tcm", at), *y = fx_out(&g, "tcm", at);
        cr_assert_eq(memcmp(sim_tensor_cdata(x), sim_tensor_cdata(y), x->nbytes), 0, "PE %u", pe);
    }
    check_pes(&f, 8);
    fx_fini(&f);
    fx_fini(&g);
}

/* ---- the built-in GEMM kernels on several PEs ------------------------------------------------ */

static void verify_kernel(const char *spec, struct sim_verify_report *rep, bool no_batch)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s: %s", spec, d.msg);
    struct sim_verify_capture *cap = sim_verify_capture_attach(r);
    while (!sim_run_over(r))
        sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_verify_opts o = {.compare = true, .exec = {.no_batch = no_batch}};
    cr_assert_eq(sim_verify_phase2(r, cap, &o, rep, &d), 0, "%s: %s", spec, d.msg);
    sim_verify_capture_free(cap);
    sim_run_free(r);
}

Test(exec_batch, the_gemm_kernels_batch_across_their_pes)
{
    /* gemm: each PE multiplies its rows of A (in its own HBM) by B; gemm_explicit
     * with small tiles: each PE loads B into its TCM and its tiles of A; llm_decode on
     * every PE: the MLP's tiles of W1 and W3 times the activations every PE holds, one
     * call on their rows stacked */
    static const char *const specs[] = {"gemm:pes=8", "gemm:pes=8,m=64,n=64,k=64",
                                        "gemm_explicit:pes=8,tile=4", "llm_decode:pes=0"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        struct sim_verify_report rep, plain;
        verify_kernel(specs[i], &rep, false);
        verify_kernel(specs[i], &plain, true);
        cr_assert(rep.pass, "%s: verification failed", specs[i]);
        cr_assert(plain.pass, "%s: unbatched verification failed", specs[i]);
        cr_assert_geq(rep.exec.gemm_batches, 1, "%s: no GEMM batch", specs[i]);
        cr_assert_geq(rep.exec.gemms_batched, 4, "%s: %zu GEMMs batched", specs[i],
                      rep.exec.gemms_batched);
        cr_assert_eq(plain.exec.gemm_batches, 0);
        cr_assert_eq(plain.exec.gemms_batched, 0);
        sim_verify_report_fini(&rep);
        sim_verify_report_fini(&plain);
    }
}
