/*
 * Verification: the D11 tolerance table and numpy allclose semantics, the report of a
 * mismatch (errors, first index and multi-index, both values), built-in kernels verified
 * end to end against their references (a table the kernel authors extend), and the op by
 * op check catching a deliberately corrupted op at its index.
 */
#include "exec_fixture.h"

#include "sim/host/host.h"
#include "sim/kernel/kernel.h"
#include "sim/host/run.h"
#include "sim/phase2/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sim_tensor *vec_of(enum sim_dtype dt, const double *v, int64_t n)
{
    struct sim_tensor *t = sim_tensor_new(dt, 1, &n);
    for (int64_t i = 0; i < n; i++)
        sim_tensor_set(t, (size_t)i, v[i]);
    return t;
}

static struct sim_verify_output compare(enum sim_dtype dt, const double *got,
                                        const double *expected, int64_t n)
{
    struct sim_tensor *g = vec_of(dt, got, n), *e = vec_of(dt, expected, n);
    struct sim_verify_output o;
    sim_verify_compare("out", g, e, &o);
    sim_tensor_unref(g);
    sim_tensor_unref(e);
    return o;
}

/* ---- tolerances -------------------------------------------------------------------------------
 */

Test(verify, tolerance_table_follows_adr_0020_d11)
{
    struct sim_verify_tol t = sim_verify_tolerance(SIM_F32);
    cr_assert(t.rtol == 1e-5 && t.atol == 1e-5 && !t.exact);
    t = sim_verify_tolerance(SIM_F16);
    cr_assert(t.rtol == 1e-3 && t.atol == 1e-3 && !t.exact);
    t = sim_verify_tolerance(SIM_BF16);
    cr_assert(t.rtol == 1e-2 && t.atol == 1e-2 && !t.exact);
    const enum sim_dtype ints[] = {SIM_I8, SIM_I16, SIM_I32, SIM_I64,
                                   SIM_U8, SIM_U16, SIM_U32, SIM_BOOL};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        cr_assert(sim_verify_tolerance(ints[i]).exact, "%s", sim_dtype_name(ints[i]));
}

Test(verify, the_bound_of_a_k_term_sum_is_gamma_k)
{
    /* gamma_k = k u / (1 - k u): u = 2^-24 for f32, 2^-11 for f16, 2^-8 for bf16 */
    double u = ldexp(1, -24);
    cr_assert_float_eq(sim_kref_gamma(1031, SIM_F32), 1031 * u / (1 - 1031 * u), 1e-18);
    cr_assert_eq(sim_kref_unit_roundoff(SIM_F16), ldexp(1, -11));
    cr_assert_eq(sim_kref_unit_roundoff(SIM_BF16), ldexp(1, -8));
    cr_assert_eq(sim_kref_gamma(4, SIM_I32), 0, "integers are exact");
    cr_assert(isinf(sim_kref_gamma(300, SIM_BF16)), "k u >= 1: no bound");
}

/* a (m x k) @ b (k x n) with values in [-1, 1): what the reference expects (and its bounds),
 * and an f32 result accumulated in blocks of kb terms (skipping block `drop`, or none) */
static void blocked_gemm(int64_t m, int64_t k, int64_t n, int64_t kb, int64_t drop,
                         struct sim_tensor **got, struct sim_tensor **want, double **bound)
{
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
    struct sim_tensor *a = sim_tensor_new(SIM_F32, 2, sa), *b = sim_tensor_new(SIM_F32, 2, sb);
    uint64_t seed = 12345;
    for (size_t i = 0; i < sim_tensor_numel(a); i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        sim_tensor_set(a, i, (double)(seed >> 40) / (double)(1 << 23) - 1);
    }
    for (size_t i = 0; i < sim_tensor_numel(b); i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        sim_tensor_set(b, i, (double)(seed >> 40) / (double)(1 << 23) - 1);
    }
    *want = sim_tensor_new(SIM_F32, 2, sc);
    *got = sim_tensor_new(SIM_F32, 2, sc);
    *bound = calloc((size_t)(m * n), sizeof(double));
    const struct sim_kernel *gk = sim_kernel_find("gemm");
    struct sim_kref_arg args[6] = {
        {.name = "a", .is_tensor = true, .t = a},
        {.name = "b", .is_tensor = true, .t = b},
        {.name = "c", .is_tensor = true, .is_output = true, .t = *want},
        {.name = "m", .scalar_dtype = SIM_I32, .i = m},
        {.name = "n", .scalar_dtype = SIM_I32, .i = n},
        {.name = "k", .scalar_dtype = SIM_I32, .i = k},
    };
    struct sim_kref kr = {args, 6, 1};
    struct diag d;
    cr_assert_eq(gk->reference(&kr, &d), 0, "%s", d.msg);
    cr_assert_not_null(args[2].bound);
    cr_assert_str_eq(args[2].bound_what, "1031-term f32 dot products");
    memcpy(*bound, args[2].bound, (size_t)(m * n) * sizeof(double));
    free(args[2].bound);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float acc = 0;
            for (int64_t k0 = 0; k0 < k; k0 += kb) {
                if (k0 / kb == drop)
                    continue;
                float part = 0;
                for (int64_t x = k0; x < k && x < k0 + kb; x++)
                    part += (float)sim_tensor_get(a, (size_t)(i * k + x)) *
                            (float)sim_tensor_get(b, (size_t)(x * n + j));
                acc += part;
            }
            sim_tensor_set(*got, (size_t)(i * n + j), acc);
        }
    sim_tensor_unref(a);
    sim_tensor_unref(b);
}

Test(verify, a_long_reduction_passes_within_its_bound_and_a_dropped_k_block_fails)
{
    /* k = 1031: a correct f32 result accumulated block by block differs from the double
     * reference by more than D11's 1e-5 here and there, but within gamma_k sum |a b| */
    struct sim_tensor *got, *want;
    double *bound;
    blocked_gemm(16, 1031, 24, 64, -1, &got, &want, &bound);
    struct sim_verify_output o;
    sim_verify_compare_bounded("c", got, want, bound, "1031-term f32 dot products", &o);
    cr_assert(o.pass, "%zu mismatches, max abs err %g", o.n_mismatch, o.max_abs_err);
    cr_assert_str_eq(o.bound_what, "1031-term f32 dot products");
    cr_assert_gt(o.max_bound, 0);
    sim_verify_output_fini(&o);
    sim_tensor_unref(got);
    sim_tensor_unref(want);
    free(bound);
    /* the same with the fifth block of 64 terms left out: every element fails */
    blocked_gemm(16, 1031, 24, 64, 4, &got, &want, &bound);
    sim_verify_compare_bounded("c", got, want, bound, "1031-term f32 dot products", &o);
    cr_assert_not(o.pass);
    cr_assert_gt(o.n_mismatch, 16 * 24 * 9 / 10, "%zu of %d", o.n_mismatch, 16 * 24);
    cr_assert(o.first_tol > 0);
    sim_verify_output_fini(&o);
    sim_tensor_unref(got);
    sim_tensor_unref(want);
    free(bound);
}

Test(verify, allclose_is_atol_plus_rtol_times_the_expected_value)
{
    /* expected 100: the bound is 1e-5 + 1e-5 * 100 = 1.01e-3 */
    double e[] = {100, 0};
    double inside[] = {100.001, 0.000009}, outside[] = {100.0011, 0.000011};
    struct sim_verify_output o = compare(SIM_F32, inside, e, 2);
    cr_assert(o.pass);
    sim_verify_output_fini(&o);
    o = compare(SIM_F32, outside, e, 2);
    cr_assert_not(o.pass);
    cr_assert_eq(o.n_mismatch, 2);
    sim_verify_output_fini(&o);
    /* the bound scales with the expected value, not the result (numpy's asymmetry) */
    double e2[] = {0.0}, g2[] = {1.5e-5};
    o = compare(SIM_F32, g2, e2, 1);
    cr_assert_not(o.pass);
    sim_verify_output_fini(&o);
}

Test(verify, f16_and_bf16_get_their_looser_tolerances)
{
    double e[] = {1.0}, g16[] = {1.00146484375}; /* an f16 value 0.0015 above 1 */
    struct sim_verify_output o = compare(SIM_F16, g16, e, 1);
    cr_assert(o.pass, "within 1e-3 + 1e-3 * 1");
    sim_verify_output_fini(&o);
    double g16b[] = {1.0029296875};
    o = compare(SIM_F16, g16b, e, 1);
    cr_assert_not(o.pass);
    sim_verify_output_fini(&o);
    double gbf[] = {1.0078125}; /* bf16's next value after 1 */
    o = compare(SIM_BF16, gbf, e, 1);
    cr_assert(o.pass, "within 2e-2");
    sim_verify_output_fini(&o);
}

Test(verify, integers_compare_exactly_even_past_2_to_the_53)
{
    int64_t n = 1;
    struct sim_tensor *a = sim_tensor_new(SIM_I64, 1, &n), *b = sim_tensor_new(SIM_I64, 1, &n);
    ((int64_t *)sim_tensor_data(a))[0] = (INT64_C(1) << 60) + 1;
    ((int64_t *)sim_tensor_data(b))[0] = (INT64_C(1) << 60);
    struct sim_verify_output o;
    sim_verify_compare("x", a, b, &o);
    cr_assert_not(o.pass, "doubles would round both to 2^60");
    cr_assert(o.tol.exact);
    sim_verify_output_fini(&o);
    double e[] = {5, -3}, g[] = {5, -3};
    o = compare(SIM_I8, g, e, 2);
    cr_assert(o.pass);
    sim_verify_output_fini(&o);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
}

Test(verify, nan_is_never_close_infinities_only_to_themselves)
{
    double e[] = {NAN, INFINITY, -INFINITY, 1}, g[] = {NAN, INFINITY, INFINITY, 1};
    struct sim_verify_output o = compare(SIM_F32, g, e, 4);
    cr_assert_not(o.pass);
    cr_assert_eq(o.n_mismatch, 2, "NaN vs NaN and +inf vs -inf");
    cr_assert_eq(o.first_index, 0);
    cr_assert_float_eq(o.max_abs_err, 0, 0, "non-finite pairs are not in the errors");
    sim_verify_output_fini(&o);
}

Test(verify, a_mismatch_reports_errors_and_the_first_index)
{
    int64_t shape[] = {2, 3};
    struct sim_tensor *g = sim_tensor_new(SIM_F32, 2, shape),
                      *e = sim_tensor_new(SIM_F32, 2, shape);
    for (size_t i = 0; i < 6; i++) {
        sim_tensor_set(e, i, (double)i + 1);
        sim_tensor_set(g, i, (double)i + 1);
    }
    sim_tensor_set(g, 4, 7.5); /* [1][1]: 5 -> 7.5 */
    sim_tensor_set(g, 5, 6.6); /* [1][2]: 6 -> 6.6 */
    struct sim_verify_output o;
    sim_verify_compare("out", g, e, &o);
    cr_assert_not(o.pass);
    cr_assert_str_eq(o.name, "out");
    cr_assert_eq(o.dtype, SIM_F32);
    cr_assert_eq(o.ndim, 2);
    cr_assert_eq(o.n_elements, 6);
    cr_assert_eq(o.n_mismatch, 2);
    cr_assert_float_eq(o.max_abs_err, 2.5, 1e-6);
    cr_assert_float_eq(o.max_rel_err, 0.5, 1e-6);
    cr_assert(o.has_first);
    cr_assert_eq(o.first_index, 4);
    cr_assert_eq(o.first_multi[0], 1);
    cr_assert_eq(o.first_multi[1], 1);
    cr_assert_float_eq(o.first_got, 7.5, 0);
    cr_assert_float_eq(o.first_expected, 5, 0);

    struct sim_verify_report rep = {0};
    rep.outputs = &o;
    rep.n_outputs = 1;
    char *text = sim_verify_report_text(&rep);
    cr_assert(strstr(text, "out: f32 (2, 3): max abs err 2.5, max rel err 0.5 (rtol 1e-05, atol "
                           "1e-05): FAIL: 2 of 6 elements differ; the first at [1, 1] (flat 4): "
                           "got 7.5, expected 5") != NULL,
              "%s", text);
    cr_assert(strstr(text, "verify: FAIL\n") != NULL, "%s", text);
    free(text);
    sim_verify_output_fini(&o);
    sim_tensor_unref(g);
    sim_tensor_unref(e);
}

Test(verify, layouts_that_differ_are_a_problem_not_a_crash)
{
    double v[] = {1, 2, 3, 4};
    struct sim_tensor *a = vec_of(SIM_F32, v, 4), *b = vec_of(SIM_F32, v, 3);
    struct sim_tensor *c = vec_of(SIM_F16, v, 4);
    struct sim_verify_output o;
    sim_verify_compare("y", a, b, &o);
    cr_assert_not(o.pass);
    cr_assert_str_eq(o.problem, "the result has shape (4,), the reference (3,)");
    sim_verify_output_fini(&o);
    sim_verify_compare("y", c, a, &o);
    cr_assert_not(o.pass);
    cr_assert_str_eq(o.problem, "the result is f16, the reference f32");
    sim_verify_output_fini(&o);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
    sim_tensor_unref(c);
}

/* ---- built-in kernels end to end --------------------------------------------------------------
 */

/* Run spec to its end with launches captured. */
static struct sim_run *run_kernel(const char *spec, struct sim_verify_capture **cap)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s: %s", spec, d.msg);
    *cap = sim_verify_capture_attach(r);
    while (!sim_run_over(r))
        sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    cr_assert_eq(s.n_failures, 0, "%s: phase 1 failed: %s", spec,
                 s.n_failures ? s.failures[0].message : "");
    sim_run_summary_fini(&s);
    return r;
}

static void verify_spec(const char *spec, const struct sim_verify_opts *o,
                        struct sim_verify_report *rep)
{
    struct sim_verify_capture *cap;
    struct sim_run *r = run_kernel(spec, &cap);
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_verify_phase2(r, cap, o, rep, &d), 0, "%s: %s", spec, d.msg);
    sim_verify_capture_free(cap);
    sim_run_free(r);
}

/*
 * Every built-in kernel with a reference, at each dtype it supports: phase 2's outputs
 * must agree with the reference. Kernel authors: add your kernel's specs here.
 */
static const char *const kernel_specs[] = {
    "vector_add",
    "vector_add:n=20000,dtype=f32",       /* several tiles: the TCM is reused */
    "vector_add:n=20000,pes=4,dtype=f32", /* split over PEs */
    "vector_add:n=12000,pes=2,dtype=f16",
    "vector_add:n=12000,pes=2,dtype=bf16",
    "vector_add:n=9000,pes=3,dtype=i8",
    "vector_add:n=5000,dtype=i32",
};

Test(verify, built_in_kernels_agree_with_their_references, .timeout = 120)
{
    for (size_t i = 0; i < sizeof(kernel_specs) / sizeof(kernel_specs[0]); i++) {
        struct sim_verify_report rep;
        verify_spec(kernel_specs[i], &(struct sim_verify_opts){.compare = true}, &rep);
        char *text = sim_verify_report_text(&rep);
        cr_assert(rep.pass, "%s:\n%s", kernel_specs[i], text);
        cr_assert_geq(rep.n_outputs, 1, "%s has outputs to compare:\n%s", kernel_specs[i], text);
        cr_assert_eq(rep.n_notes, 0, "%s:\n%s", kernel_specs[i], text);
        cr_assert_gt(rep.exec.executed, 0);
        free(text);
        sim_verify_report_fini(&rep);
    }
}

Test(verify, vector_add_report_names_its_output)
{
    struct sim_verify_report rep;
    verify_spec("vector_add:n=8192,pes=2", &(struct sim_verify_opts){.compare = true}, &rep);
    cr_assert_eq(rep.n_outputs, 1);
    const struct sim_verify_output *o = &rep.outputs[0];
    cr_assert_str_eq(o->name, "out");
    cr_assert_eq(o->dtype, SIM_F32);
    cr_assert_eq(o->ndim, 1);
    cr_assert_eq(o->shape[0], 8192);
    cr_assert(o->pass);
    cr_assert_eq(o->n_elements, 8192);
    char *text = sim_verify_report_text(&rep);
    cr_assert(strstr(text, "  out: f32 (8192,): max abs err 0, max rel err 0 (rtol 1e-05, atol "
                           "1e-05): PASS\n") != NULL,
              "%s", text);
    cr_assert(strstr(text, "verify: PASS\n") != NULL, "%s", text);
    free(text);
    sim_verify_report_fini(&rep);
}

/* The index of the first record named name in spec's op log, by running phase 1. */
static size_t first_record(const char *spec, const char *name)
{
    struct sim_verify_capture *cap;
    struct sim_run *r = run_kernel(spec, &cap);
    size_t n;
    struct sim_op_record *const *recs = sim_oplog_records(sim_chip_oplog(sim_run_chip(r)), &n);
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < n && at == SIZE_MAX; i++)
        if (strcmp(recs[i]->op_name, name) == 0)
            at = i;
    sim_verify_capture_free(cap);
    sim_run_free(r);
    cr_assert_neq(at, SIZE_MAX, "%s logs no %s", spec, name);
    return at;
}

Test(verify, a_corrupted_op_fails_the_outputs)
{
    const char *spec = "vector_add:n=20000";
    size_t add = first_record(spec, "add");
    struct sim_verify_report rep;
    verify_spec(
        spec,
        &(struct sim_verify_opts){.compare = true, .exec = {.corrupt = true, .corrupt_index = add}},
        &rep);
    cr_assert_not(rep.pass);
    cr_assert_eq(rep.n_outputs, 1);
    cr_assert_eq(rep.outputs[0].n_mismatch, 1, "one element of the first tile");
    cr_assert_eq(rep.outputs[0].first_index, 0);
    sim_verify_report_fini(&rep);
}

Test(verify, ops_mode_names_the_corrupted_op)
{
    const char *spec = "vector_add:n=20000,pes=2";
    const char *names[] = {"add", "dma_read", "dma_write"};
    for (size_t k = 0; k < 3; k++) {
        /* a later one too: the second tile's op, not the first */
        size_t at = first_record(spec, names[k]) + (k == 0 ? 0 : 3);
        struct sim_verify_report rep;
        verify_spec(spec,
                    &(struct sim_verify_opts){.compare = true,
                                              .ops = true,
                                              .exec = {.corrupt = true, .corrupt_index = at}},
                    &rep);
        char *text = sim_verify_report_text(&rep);
        cr_assert_not(rep.pass, "%s", text);
        cr_assert(rep.op_failed, "%s", text);
        cr_assert(rep.stopped);
        cr_assert_eq(rep.first_op.index, at, "corrupted #%zu, reported #%zu:\n%s", at,
                     rep.first_op.index, text);
        char head[128];
        snprintf(head, sizeof(head), "the first to diverge is op #%zu ", at);
        cr_assert(strstr(text, head) != NULL, "%s", text);
        free(text);
        sim_verify_report_fini(&rep);
    }
}

Test(verify, ops_mode_passes_an_honest_run)
{
    struct sim_verify_report rep;
    verify_spec("vector_add:n=20000,pes=2,dtype=f16",
                &(struct sim_verify_opts){.compare = true, .ops = true}, &rep);
    char *text = sim_verify_report_text(&rep);
    cr_assert(rep.pass, "%s", text);
    cr_assert_not(rep.op_failed);
    cr_assert_eq(rep.ops_checked, rep.exec.executed, "%s", text);
    cr_assert(strstr(text, "every one agrees") != NULL, "%s", text);
    free(text);
    sim_verify_report_fini(&rep);
}

/* ---- the op checker on hand-made logs ----------------------------------------------------- */

static int run_checked(struct fx *f, struct sim_verify_ops *v)
{
    size_t n;
    struct sim_op_record *const *r = fx_records(f, &n);
    sim_exec_free(f->x);
    f->x = sim_exec_new(f->m, NULL);
    sim_exec_set_op_hook(f->x, sim_verify_ops_hook, v);
    struct diag d;
    return sim_exec_run(f->x, r, n, &d);
}

Test(verify, an_input_phase_1_saw_otherwise_names_the_op_that_wrote_it)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "tcm", 0x0, fx_full(4, 1));
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4); /* phase 1 saw [1 1 1 1] */
    /* but the log says an IPCQ copy put [7 7 7 7] there before: phase 2 replays it */
    struct sim_tensor *seven = fx_full(4, 7);
    fx_ipcq(&f, 5, "sram", 0x0, "tcm", 0x0, 4, seven);
    sim_tensor_unref(seven);
    struct sim_verify_ops *v = sim_verify_ops_new();
    cr_assert_eq(run_checked(&f, v), 1, "the replay stops");
    const struct sim_verify_op_failure *fl = sim_verify_ops_failure(v);
    cr_assert_not_null(fl);
    cr_assert_eq(fl->index, 0, "the copy (first in time) wrote what exp then read");
    cr_assert_str_eq(fl->op_name, "ipcq_copy");
    cr_assert(strstr(fl->what, "tcm 0x0 (input 0 of op #1 exp), element 0: 7 in phase 2, 1 when "
                               "phase 1 ran it") != NULL,
              "%s", fl->what);
    sim_verify_ops_free(v);
    fx_fini(&f);
}

Test(verify, an_input_nothing_replayed_wrote_is_reported_on_its_reader)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "tcm", 0x0, fx_full(4, 1));
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4); /* snapshot [1 1 1 1] */
    fx_put(&f, "tcm", 0x0, fx_full(4, 2));  /* phase 1 goes on and overwrites it */
    struct sim_verify_ops *v = sim_verify_ops_new();
    cr_assert_eq(run_checked(&f, v), 1);
    const struct sim_verify_op_failure *fl = sim_verify_ops_failure(v);
    cr_assert_not_null(fl);
    cr_assert_eq(fl->index, 0);
    cr_assert_str_eq(fl->op_name, "exp");
    cr_assert_str_eq(fl->component_id, "sip0.cube0.pe0.pe_math");
    cr_assert_float_eq(fl->t_start, 10, 0);
    cr_assert(strstr(fl->what, "nothing replayed wrote tcm 0x0") != NULL, "%s", fl->what);
    sim_verify_ops_free(v);
    fx_fini(&f);
}

Test(verify, computed_inputs_are_not_held_to_phase_1_snapshots)
{
    struct fx f;
    fx_init(&f);
    fx_put(&f, "tcm", 0x0, fx_full(4, 1));
    fx_put(&f, "tcm", 0x100, fx_full(4, 0)); /* what phase 1 had where exp's result goes */
    fx_unary(&f, 10, "exp", 0x0, 0x100, 4);
    fx_unary(&f, 20, "neg", 0x100, 0x200, 4); /* its snapshot of 0x100 is stale zeros */
    struct sim_verify_ops *v = sim_verify_ops_new();
    cr_assert_eq(run_checked(&f, v), 0);
    cr_assert_null(sim_verify_ops_failure(v));
    cr_assert_eq(sim_verify_ops_checked(v), 2);
    sim_verify_ops_free(v);
    fx_fini(&f);
}

Test(verify, large_gemms_pass_the_op_check_within_the_rounding_bound)
{
    struct fx f;
    fx_init(&f);
    int64_t as[] = {16, 2048}, bs[] = {2048, 16}, cs[] = {16, 16};
    fx_put(&f, "tcm", 0x0, fx_tensor(&f, SIM_F32, 2, as));
    fx_put(&f, "tcm", 0x100000, fx_tensor(&f, SIM_F32, 2, bs));
    fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F32, 0x0, 2, as, 0x100000, 2, bs, SIM_F32,
            0x200000, 2, cs);
    struct sim_verify_ops *v = sim_verify_ops_new();
    cr_assert_eq(run_checked(&f, v), 0, "%s",
                 sim_verify_ops_failure(v) ? sim_verify_ops_failure(v)->what : "");
    sim_verify_ops_free(v);
    fx_fini(&f);
}

Test(verify, the_op_check_catches_a_corrupted_gemm_and_reduction)
{
    for (int which = 0; which < 2; which++) {
        struct fx f;
        fx_init(&f);
        int64_t as[] = {8, 64}, bs[] = {64, 8}, cs[] = {8, 8};
        fx_put(&f, "tcm", 0x0, fx_tensor(&f, SIM_F32, 2, as));
        fx_put(&f, "tcm", 0x10000, fx_tensor(&f, SIM_F32, 2, bs));
        fx_gemm(&f, 5, "sip0.cube0.pe0.pe_gemm", SIM_F32, 0x0, 2, as, 0x10000, 2, bs, SIM_F32,
                0x20000, 2, cs);
        uint64_t a[] = {0x20000};
        unsigned nd[] = {2};
        int64_t sh[1][SIM_MAX_DIMS] = {{8, 8}};
        int64_t os[] = {8, 1};
        fx_math(&f, 6, "sip0.cube0.pe0.pe_math", "sum", SIM_F32, 1, a, nd, sh, 0x30000, 2, os, true,
                1);
        size_t n;
        struct sim_op_record *const *r = fx_records(&f, &n);
        struct sim_verify_ops *v = sim_verify_ops_new();
        f.x = sim_exec_new(
            f.m, &(struct sim_exec_opts){.corrupt = true, .corrupt_index = (size_t)which});
        sim_exec_set_op_hook(f.x, sim_verify_ops_hook, v);
        struct diag d;
        cr_assert_eq(sim_exec_run(f.x, r, n, &d), 1);
        const struct sim_verify_op_failure *fl = sim_verify_ops_failure(v);
        cr_assert_not_null(fl);
        cr_assert_eq(fl->index, (size_t)which);
        cr_assert(strstr(fl->what, "result element [0, 0] (flat 0)") != NULL, "%s", fl->what);
        sim_verify_ops_free(v);
        fx_fini(&f);
    }
}

Test(verify, the_capture_knows_each_argument_of_a_launch)
{
    struct sim_verify_capture *cap;
    struct sim_run *r = run_kernel("vector_add:n=1200,pes=3,dtype=f16", &cap);
    cr_assert_eq(sim_verify_capture_count(cap), 1);
    const struct sim_launch *l = sim_verify_capture_launch(cap, 0);
    cr_assert_str_eq(l->kernel, "vector_add");
    cr_assert_eq(l->npes, 3);
    cr_assert_eq(l->n_args, 4);
    const char *names[] = {"x", "y", "out", "n"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_str_eq(l->args[i].name, names[i]);
    cr_assert(l->args[0].is_tensor && !l->args[0].is_output && !l->args[0].pending_input);
    cr_assert(l->args[2].is_tensor && l->args[2].is_output);
    cr_assert_not(l->args[3].is_tensor);
    cr_assert_eq(l->args[3].i, 1200);
    cr_assert_eq(l->args[3].scalar_dtype, SIM_I32);
    const struct sim_tensor *x = l->args[0].deployed;
    cr_assert_eq(x->dtype, SIM_F16);
    cr_assert_eq(x->ndim, 1);
    cr_assert_eq(x->shape[0], 1200);
    /* the deployed data is the host's buffers, shard after shard */
    struct sim_tensor *out0 = l->args[2].deployed;
    for (size_t i = 0; i < 1200; i++)
        cr_assert_eq(sim_tensor_get(out0, i), 0, "out is deployed as zeros");
    /* the same spec builds the same buffers (seeded): x is their shards end to end */
    struct sim_workload *wl;
    struct sim_host_buffers *bufs;
    struct diag d;
    cr_assert_eq(sim_kernel_workload("vector_add:n=1200,pes=3,dtype=f16", sim_run_config(r), NULL,
                                     &wl, &bufs, NULL, &d),
                 0, "%s", d.msg);
    for (unsigned k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof(name), "vector_add.x#%u", k);
        const struct sim_tensor *shard = sim_host_buffers_find(bufs, name);
        cr_assert_not_null(shard, "%s", name);
        cr_assert_eq(shard->nbytes, 800);
        cr_assert_eq(
            memcmp((const char *)sim_tensor_cdata(x) + 800 * k, sim_tensor_cdata(shard), 800), 0,
            "%s", name);
    }
    sim_workload_free(wl);
    sim_host_buffers_free(bufs);
    sim_verify_capture_free(cap);
    sim_run_free(r);
}
