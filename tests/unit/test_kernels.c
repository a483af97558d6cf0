/*
 * The built-in kernels: each runs on the tiny and the default chip without errors; their op
 * logs have the op names, kinds and params the ADRs give (composite_gemm with D3.5's keys,
 * TileToken stages per D5, ipcq_copy from TCM to an SRAM slot per D3.6, math records with
 * input snapshots); llm_decode reports its markers and tokens; sparse_scale's branch on
 * loaded data changes the op log; a run repeats exactly; each kernel's reference matches
 * values computed by hand and phase 2's replay of its op log (`run --verify`); bad
 * parameters are refused with one clear message.
 */
#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/kernel/kernel.h"
#include "sim/kernels/kernels.h"
#include "sim/chip/oplog.h"
#include "sim/host/run.h"
#include "sim/kernel/runner.h"
#include "sim/kernel/tl.h"
#include "sim/phase2/verify.h"
#include "sim/program/workload.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TINY "sim/configs/tiny.yaml"

/* ---- running a kernel ------------------------------------------------------------------- */

/* Run -k spec on chip (NULL: the default chip) to its end. */
static struct sim_run *run_spec(const char *chip_file, const char *spec)
{
    struct sim_run_opts o = {.chip_file = chip_file, .kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s: %s", spec, d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    return r;
}

/* The run finished every request with no failure. */
static void expect_clean(struct sim_run *r, const char *what)
{
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    cr_assert_eq(s.n_failures, 0, "%s: %s", what,
                 s.n_failures ? (s.failures[0].message ? s.failures[0].message : "?") : "");
    cr_assert(s.host_finished, "%s: the host program did not finish", what);
    cr_assert_eq(s.blocked, 0, "%s", what);
    cr_assert_gt(s.op_records, 0, "%s", what);
    sim_run_summary_fini(&s);
}

static struct sim_run *run_clean(const char *chip_file, const char *spec)
{
    struct sim_run *r = run_spec(chip_file, spec);
    expect_clean(r, spec);
    return r;
}

static struct sim_op_record *const *records(struct sim_run *r, size_t *n)
{
    return sim_oplog_records(sim_chip_oplog(sim_run_chip(r)), n);
}

static bool on_pe(const struct sim_op_record *rec, int g, struct sim_run *r)
{
    int sip, cube, pe;
    sim_chip_pe_coords(sim_run_chip(r), g, &sip, &cube, &pe);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "sip%d.cube%d.pe%d.", sip, cube, pe);
    return strncmp(rec->component_id, prefix, strlen(prefix)) == 0;
}

/* Records named op_name (on global PE g, or any PE when g < 0). */
static size_t count(struct sim_run *r, const char *op_name, int g)
{
    size_t n, c = 0;
    struct sim_op_record *const *rec = records(r, &n);
    for (size_t i = 0; i < n; i++)
        c += strcmp(rec[i]->op_name, op_name) == 0 && (g < 0 || on_pe(rec[i], g, r));
    return c;
}

static const struct sim_value *param(const struct sim_op_record *rec, const char *key)
{
    const struct sim_value *v = sim_value_map_get(rec->params, key);
    cr_assert_not_null(v, "%s: params have no '%s'", rec->op_name, key);
    return v;
}

static int64_t pint(const struct sim_op_record *rec, const char *key)
{
    const struct sim_value *v = param(rec, key);
    cr_assert_eq(v->type, SIM_V_INT, "%s.%s is an int", rec->op_name, key);
    return v->u.i;
}

static const char *pstr(const struct sim_op_record *rec, const char *key)
{
    const struct sim_value *v = param(rec, key);
    cr_assert_eq(v->type, SIM_V_STR, "%s.%s is a string", rec->op_name, key);
    return v->u.str.s;
}

/* A list of ints param equals want[0..n). */
static void expect_ints(const struct sim_op_record *rec, const char *key, const int64_t *want,
                        size_t n)
{
    const struct sim_value *v = param(rec, key);
    cr_assert_eq(v->type, SIM_V_LIST);
    cr_assert_eq(v->u.list.len, n, "%s.%s has %zu items", rec->op_name, key, v->u.list.len);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(v->u.list.items[i]->u.i, want[i], "%s.%s[%zu]", rec->op_name, key, i);
}

/* The KernelLaunch of a generated run. */
static const struct sim_kernel_launch *the_launch(struct sim_run *r)
{
    const struct sim_workload *wl = sim_run_workload(r);
    for (size_t j = 0; j < wl->n_msgs; j++)
        if (wl->msgs[j].msg_type == SIM_MSG_KERNEL_LAUNCH)
            return &wl->msgs[j].u.launch;
    cr_assert_fail("the run has no KernelLaunch");
    return NULL;
}

/* ---- every kernel, both chips ------------------------------------------------------------- */

Test(kernels, the_registry_lists_every_kernel_in_name_order)
{
    static const char *const want[] = {
        "allreduce_ring", "gemm",    "gemm_explicit", "layernorm", "llm_decode",
        "rmsnorm",        "softmax", "sparse_scale",  "stream",    "vector_add"};
    cr_assert_eq(sim_kernel_count(), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sim_kernel_count(); i++) {
        const struct sim_kernel *k = sim_kernel_at(i);
        cr_assert_str_eq(k->name, want[i]);
        cr_assert(k->summary && k->summary[0] && sim_kernel_nargs(k) > 0, "%s is documented",
                  k->name);
        /* every argument has a name, a kind and a type, and the names are distinct */
        for (size_t j = 0; j < sim_kernel_nargs(k); j++) {
            const struct sim_karg_desc *a = &k->args[j];
            cr_assert(a->name[0] && a->dtype && a->dtype[0], "%s argument %zu", k->name, j);
            cr_assert(a->kind == SIM_KARG_TENSOR || a->kind == SIM_KARG_SCALAR);
            for (size_t q = 0; q < j; q++)
                cr_assert_str_neq(k->args[q].name, a->name, "%s: two arguments named %s", k->name,
                                  a->name);
        }
        cr_assert_not_null(k->fn);
        cr_assert_not_null(k->setup);
    }
}

static void run_every_kernel(const char *chip_file)
{
    for (size_t i = 0; i < sim_kernel_count(); i++) {
        struct sim_run *r = run_clean(chip_file, sim_kernel_at(i)->name);
        sim_run_free(r);
    }
}

Test(kernels, every_kernel_runs_on_the_tiny_chip)
{
    run_every_kernel(TINY);
}

Test(kernels, every_kernel_runs_on_the_default_chip)
{
    run_every_kernel(NULL);
}

Test(kernels, the_dtypes_run)
{
    static const char *const specs[] = {
        "gemm:dtype=f16",          "gemm:dtype=bf16",          "gemm:dtype=i8",
        "gemm_explicit:dtype=f16", "gemm_explicit:dtype=bf16", "gemm_explicit:dtype=i8",
        "softmax:dtype=f16",       "softmax:dtype=bf16",       "rmsnorm:dtype=f16",
        "layernorm:dtype=bf16",    "allreduce_ring:dtype=f16", "allreduce_ring:dtype=i32",
        "sparse_scale:dtype=bf16", "llm_decode:dtype=f16",     "llm_decode:dtype=bf16",
    };
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
        sim_run_free(run_clean(TINY, specs[i]));
}

/* ---- gemm: composite_gemm (ADR-0052 D3.5) -------------------------------------------------- */

static void expect_composite(const char *spec, const char *dtype_in, const char *dtype_out,
                             size_t out_size)
{
    /* tiny: 2 PEs, m = k = n = 128: each PE computes 64 rows of C */
    struct sim_run *r = run_clean(TINY, spec);
    size_t n;
    struct sim_op_record *const *rec = records(r, &n);
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rec[i]->op_name, "composite_gemm") != 0)
            continue;
        seen++;
        cr_assert_str_eq(rec[i]->op_kind, "gemm");
        cr_assert(strstr(rec[i]->component_id, ".pe_gemm"));
        cr_assert_str_eq(pstr(rec[i], "op"), "gemm");
        cr_assert_eq(pint(rec[i], "out_nbytes"), (int64_t)(64 * 128 * out_size));
        cr_assert_eq(pint(rec[i], "dst_addr"), pint(rec[i], "out_addr"));
        pint(rec[i], "src_a_addr");
        pint(rec[i], "src_b_addr");
        expect_ints(rec[i], "shape_a", (int64_t[]){64, 128}, 2);
        expect_ints(rec[i], "shape_b", (int64_t[]){128, 128}, 2);
        cr_assert_str_eq(pstr(rec[i], "dtype_in"), dtype_in);
        cr_assert_str_eq(pstr(rec[i], "dtype_out"), dtype_out);
        cr_assert_str_eq(pstr(rec[i], "src_a_space"), "hbm");
        cr_assert_str_eq(pstr(rec[i], "src_b_space"), "hbm");
        cr_assert_str_eq(pstr(rec[i], "dst_space"), "hbm");
    }
    cr_assert_eq(seen, 2, "one composite per PE");
    /* the engine's pipeline: tiles of C accumulated over slices of k, sized to the TCM
     * (tiny: 11264 bytes); the GEMM stages cover the product, each tile is written once */
    for (int g = 0; g < 2; g++) {
        cr_assert_eq(count(r, "composite_gemm", g), 1);
        cr_assert_eq(count(r, "TileToken/DMA_READ", g), count(r, "TileToken/GEMM", g));
        cr_assert_gt(count(r, "TileToken/GEMM", g), count(r, "TileToken/DMA_WRITE", g));
        size_t nrec;
        struct sim_op_record *const *all = records(r, &nrec);
        int64_t macs = 0, written = 0;
        for (size_t i = 0; i < nrec; i++) {
            if (!on_pe(all[i], g, r))
                continue;
            if (strcmp(all[i]->op_name, "TileToken/GEMM") == 0)
                macs += pint(all[i], "m") * pint(all[i], "n") * pint(all[i], "k");
            if (strcmp(all[i]->op_name, "TileToken/DMA_WRITE") == 0)
                written += pint(all[i], "nbytes");
            if (strcmp(all[i]->op_name, "TileToken/DMA_READ") == 0)
                cr_assert_leq(2 * pint(all[i], "nbytes"), 11264, "two tiles fit the TCM");
        }
        cr_assert_eq(macs, 64 * 128 * 128);
        cr_assert_eq(written, (int64_t)(64 * 128 * out_size));
    }
    sim_run_free(r);
}

Test(kernels, gemm_logs_one_composite_gemm_per_pe_with_the_d3_5_keys)
{
    expect_composite("gemm", "f32", "f32", 4);
    expect_composite("gemm:dtype=i8", "i8", "i32", 4);
    expect_composite("gemm:dtype=f16", "f16", "f16", 2);
}

Test(kernels, gemm_runs_on_the_pes_asked)
{
    struct sim_run *r = run_clean(NULL, "gemm:pes=3,m=96");
    cr_assert_eq(count(r, "composite_gemm", -1), 3);
    for (int g = 0; g < 3; g++)
        cr_assert_eq(count(r, "composite_gemm", g), 1);
    sim_run_free(r);
    r = run_clean(NULL, "gemm");
    cr_assert_eq(count(r, "composite_gemm", -1), 8, "pes=0: every PE of the default chip");
    sim_run_free(r);
}

/* ---- gemm_explicit: TileToken stages (ADR-0052 D5) ------------------------------------------ */

static const char *const d33_keys[] = {
    "src_a_addr", "src_b_addr", "dst_addr", "shape_a", "shape_b",     "shape_out",   "dtype_in",
    "dtype_out",  "m",          "k",        "n",       "src_a_space", "src_b_space", "dst_space",
};

Test(kernels, gemm_explicit_sends_tiletokens_through_dma_read_gemm_dma_write)
{
    /* m = 32 over 2 PEs: 16 rows each, k = 64, n = 32, 4 rows per token: 4 tokens per PE */
    struct sim_run *r = run_clean(TINY, "gemm_explicit:m=32,tile=4");
    size_t n;
    struct sim_op_record *const *rec = records(r, &n);
    for (int g = 0; g < 2; g++) {
        cr_assert_eq(count(r, "dma_read", g), 1, "B is loaded once");
        cr_assert_eq(count(r, "TileToken/DMA_READ", g), 4);
        cr_assert_eq(count(r, "TileToken/GEMM", g), 4);
        cr_assert_eq(count(r, "TileToken/DMA_WRITE", g), 4);
        cr_assert_eq(count(r, "gemm_f32", g) + count(r, "composite_gemm", g), 0);
    }
    int64_t rows[2] = {0, 0};
    uint64_t written[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const struct sim_op_record *t = rec[i];
        if (strncmp(t->op_name, "TileToken/", 10) != 0)
            continue;
        int g = on_pe(t, 0, r) ? 0 : 1;
        cr_assert_str_eq(t->op_kind, "unknown", "D3.7, renamed by D5");
        cr_assert_str_eq(pstr(t, "stage_type"), t->op_name + 10);
        cr_assert_not_null(t->note.tile_id);
        cr_assert(strncmp(t->note.tile_id, "gemm_tile_", 10) == 0);
        if (strcmp(t->op_name, "TileToken/DMA_READ") == 0) {
            cr_assert(strstr(t->component_id, ".pe_dma"));
            cr_assert_str_eq(pstr(t, "src_space"), "hbm");
            cr_assert_str_eq(pstr(t, "dst_space"), "tcm");
            cr_assert_eq(pint(t, "nbytes"), 4 * 64 * 4);
            expect_ints(t, "shape", (int64_t[]){4, 64}, 2);
        } else if (strcmp(t->op_name, "TileToken/GEMM") == 0) {
            cr_assert(strstr(t->component_id, ".pe_gemm"));
            for (size_t k = 0; k < sizeof(d33_keys) / sizeof(d33_keys[0]); k++)
                param(t, d33_keys[k]);
            cr_assert_str_eq(pstr(t, "src_a_space"), "tcm");
            cr_assert_str_eq(pstr(t, "src_b_space"), "tcm");
            cr_assert_eq(pint(t, "k"), 64);
            cr_assert_eq(pint(t, "n"), 32);
            rows[g] += pint(t, "m");
        } else {
            cr_assert_str_eq(t->op_name, "TileToken/DMA_WRITE");
            cr_assert_str_eq(pstr(t, "src_space"), "tcm");
            cr_assert_str_eq(pstr(t, "dst_space"), "hbm");
            written[g] += (uint64_t)pint(t, "nbytes");
        }
    }
    for (int g = 0; g < 2; g++) {
        cr_assert_eq(rows[g], 16, "the tokens cover the PE's rows of C");
        cr_assert_eq(written[g], 16 * 32 * 4, "and write its whole shard");
    }
    sim_run_free(r);
}

Test(kernels, gemm_explicit_sizes_its_tiles_to_the_tcm)
{
    /* tiny leaves 11264 bytes to the allocator; B (64 x 32 f32) takes 8192; two tokens of
     * R rows take 2 * (R * 256 + R * 128) bytes: R = 4 is the most that fits */
    struct sim_run *r = run_clean(TINY, "gemm_explicit");
    cr_assert_eq(count(r, "TileToken/GEMM", 0), 64 / 4);
    sim_run_free(r);
    /* the default chip's TCM takes 16 rows (its whole shard) in one token */
    r = run_clean(NULL, "gemm_explicit");
    cr_assert_eq(count(r, "TileToken/GEMM", 0), 1);
    sim_run_free(r);
}

Test(kernels, gemm_explicit_tiles_k_when_b_does_not_fit_the_tcm)
{
    /* tiny: B (128 x 64 f32, 32 KiB) does not fit the 11264 bytes of the allocator. Rows of
     * C are computed against blocks of whole rows of B (loaded once per group of rows), each
     * row's products added into an f32 accumulator, then stored: every load and store is
     * contiguous, and phase 2 agrees with the reference */
    struct sim_run *r = run_clean(TINY, "gemm_explicit:k=128,n=64");
    cr_assert_eq(count(r, "TileToken/GEMM", -1), 0, "no tokens: B is not resident");
    size_t n, blocks = 0, pieces = 0, rows = 0;
    struct sim_op_record *const *rec = records(r, &n);
    for (size_t i = 0; i < n; i++) {
        const struct sim_op_record *o = rec[i];
        if (!on_pe(o, 0, r))
            continue;
        if (strcmp(o->op_name, "dma_read") == 0) {
            int64_t b = pint(o, "nbytes");
            cr_assert(b % (64 * 4) == 0 || b <= 128 * 4, "a block of B or a piece of a row of A");
            blocks += b % (64 * 4) == 0 && b > 128 * 4;
            pieces += b <= 128 * 4;
        }
        if (strcmp(o->op_name, "dma_write") == 0) {
            cr_assert_eq(pint(o, "nbytes"), 64 * 4, "a whole row of C");
            rows++;
        }
    }
    cr_assert_eq(rows, 64, "the PE's 64 rows of C");
    cr_assert_gt(blocks, 1, "B in several blocks of K");
    cr_assert_eq(pieces % 64, 0, "a piece of every row of A per block");
    sim_run_free(r);
    /* the tile parameter sets the rows per group here too */
    r = run_clean(TINY, "gemm_explicit:tile=32,k=128,n=64");
    sim_run_free(r);
}

static void op_sequence(struct sim_run *r, char *buf, size_t size)
{
    size_t n, len = 0;
    struct sim_op_record *const *rec = records(r, &n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++)
        if (on_pe(rec[i], 0, r))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "", rec[i]->op_name);
}

Test(kernels, softmax_reduces_each_row_with_max_sub_exp_sum_div)
{
    /* 4 rows x 8 on 2 PEs: one tile of 2 rows each */
    struct sim_run *r = run_clean(TINY, "softmax:rows=4,cols=8");
    char seq[512];
    op_sequence(r, seq, sizeof(seq));
    cr_assert_str_eq(seq, "dma_read max sub exp sum div dma_write");
    size_t n;
    struct sim_op_record *const *rec = records(r, &n);
    struct sim_chip *chip = sim_run_chip(r);
    for (size_t i = 0; i < n; i++) {
        const struct sim_op_record *m = rec[i];
        if (strcmp(m->op_kind, "math") != 0)
            continue;
        bool reduce = strcmp(m->op_name, "max") == 0 || strcmp(m->op_name, "sum") == 0;
        const struct sim_value *axis = param(m, "axis");
        if (reduce)
            cr_assert(axis->type == SIM_V_INT && axis->u.i == 1, "%s over the last axis",
                      m->op_name);
        else
            cr_assert_eq(axis->type, SIM_V_NULL, "%s is elementwise", m->op_name);
        expect_ints(m, "shape_out", reduce ? (int64_t[]){2, 1} : (int64_t[]){2, 8}, 2);
        const struct sim_value *snaps = param(m, "input_snapshots");
        cr_assert_eq(snaps->type, SIM_V_LIST);
        cr_assert_eq(snaps->u.list.len, param(m, "input_addrs")->u.list.len);
        if (strcmp(m->op_name, "max") != 0)
            continue;
        /* max reads the loaded tile: its snapshot holds the PE's rows of x */
        const struct sim_value *s0 = snaps->u.list.items[0];
        cr_assert_eq(s0->type, SIM_V_TENSOR, "a loaded input has a snapshot");
        struct sim_tensor *x = NULL;
        struct diag d;
        const struct sim_kernel_launch *kl = the_launch(r);
        const struct sim_tensor_shard *sh = &kl->args[0].shards[on_pe(m, 0, r) ? 0 : 1];
        int g = sim_chip_pe_index(chip, sh->sip, sh->cube, sh->pe);
        cr_assert_eq(sim_chip_mem_read(chip, "hbm", sim_chip_dev_addr(g, (uint64_t)sh->pa), SIM_F32,
                                       2, (int64_t[]){2, 8}, &x, &d),
                     0, "%s", d.msg);
        cr_assert_eq(memcmp(sim_tensor_cdata(s0->u.tensor), sim_tensor_cdata(x), x->nbytes), 0);
        sim_tensor_unref(x);
    }
    sim_run_free(r);
}

Test(kernels, softmax_in_f16_casts_to_f32_and_back)
{
    struct sim_run *r = run_clean(TINY, "softmax:rows=4,cols=8,dtype=f16");
    char seq[512];
    op_sequence(r, seq, sizeof(seq));
    cr_assert_str_eq(seq, "dma_read cast max sub exp sum div cast dma_write");
    sim_run_free(r);
}

/* The eps constant reaches the kernel: the add's second input is it. */
static void expect_eps(struct sim_run *r, double eps)
{
    size_t n;
    struct sim_op_record *const *rec = records(r, &n);
    size_t adds = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rec[i]->op_name, "add") != 0)
            continue;
        const struct sim_value *in = param(rec[i], "input_shapes");
        if (in->u.list.items[1]->u.list.len != 1 || in->u.list.items[1]->u.list.items[0]->u.i != 1)
            continue; /* not the add of the constant */
        const struct sim_value *s = param(rec[i], "input_snapshots")->u.list.items[1];
        cr_assert_eq(s->type, SIM_V_TENSOR);
        cr_assert_float_eq(sim_tensor_get(s->u.tensor, 0), (float)eps, 0);
        adds++;
    }
    cr_assert_gt(adds, 0);
}

Test(kernels, rmsnorm_and_layernorm_log_their_formula)
{
    struct sim_run *r = run_clean(TINY, "rmsnorm:rows=2,d=16,eps=0.25");
    char seq[512];
    op_sequence(r, seq, sizeof(seq));
    cr_assert_str_eq(seq, "dma_read dma_read mul mean add rsqrt mul mul dma_write");
    expect_eps(r, 0.25);
    sim_run_free(r);
    r = run_clean(TINY, "layernorm:rows=2,d=16,eps=0.5");
    op_sequence(r, seq, sizeof(seq));
    cr_assert_str_eq(
        seq, "dma_read dma_read dma_read mean sub mul mean add rsqrt mul mul add dma_write");
    expect_eps(r, 0.5);
    sim_run_free(r);
}

/* ---- allreduce_ring: IPCQ copies through SRAM (D3.6, ADR-0023 D9.7) ------------------------- */

Test(kernels, allreduce_ring_moves_chunks_by_ipcq_copies_into_sram_slots)
{
    /* default chip, 8 PEs, n = 1024: chunks of 128; 7 + 7 steps, one copy each per PE */
    struct sim_run *r = run_clean(NULL, "allreduce_ring");
    struct sim_chip *chip = sim_run_chip(r);
    const struct sim_config *cfg = sim_run_config(r);
    uint64_t slice = cfg->sram.capacity_bytes / cfg->pes_per_cube;
    size_t n;
    struct sim_op_record *const *rec = records(r, &n);
    size_t copies[8] = {0};
    for (size_t i = 0; i < n; i++) {
        const struct sim_op_record *c = rec[i];
        if (strcmp(c->op_name, "ipcq_copy") != 0)
            continue;
        cr_assert_str_eq(c->op_kind, "memory");
        cr_assert_str_eq(pstr(c, "src_space"), "tcm");
        cr_assert_str_eq(pstr(c, "dst_space"), "sram");
        expect_ints(c, "shape", (int64_t[]){128}, 1);
        cr_assert_str_eq(pstr(c, "dtype"), "f32");
        cr_assert_eq(pint(c, "nbytes"), 512);
        /* it comes from the left neighbour's TCM into a slot of this PE's share of its
         * cube's SRAM, serviced by this PE's DMA */
        uint64_t dst = (uint64_t)pint(c, "dst_addr"), src = (uint64_t)pint(c, "src_addr");
        int to = sim_chip_addr_pe(dst), from = sim_chip_addr_pe(src);
        cr_assert(on_pe(c, to, r), "%s receives into PE %d", c->component_id, to);
        cr_assert_eq(from, (to + 7) % 8);
        int sip, cube, pe;
        sim_chip_pe_coords(chip, to, &sip, &cube, &pe);
        uint64_t pa = sim_chip_addr_pa(dst);
        cr_assert(pa >= (uint64_t)pe * slice && pa + 512 <= (uint64_t)(pe + 1) * slice);
        copies[to]++;
    }
    for (int g = 0; g < 8; g++)
        cr_assert_eq(copies[g], 14, "PE %d receives 2 (P - 1) chunks", g);
    /* the receivers' loads come from SRAM: the SRAMs were written and read */
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    size_t srams = 0;
    for (size_t i = 0; i < s.n_components; i++)
        if (s.components[i].kind == SIM_NODE_SRAM) {
            cr_assert_eq(s.components[i].bytes_written, 4 * 14 * 512);
            cr_assert_eq(s.components[i].bytes_read, 4 * 14 * 512);
            srams++;
        }
    cr_assert_eq(srams, 2);
    sim_run_summary_fini(&s);
    for (int g = 0; g < 8; g++) {
        cr_assert_eq(count(r, "add", g), 7, "the reduce-scatter adds");
        cr_assert_eq(count(r, "dma_write", g), 8, "every chunk of out is stored");
    }
    sim_run_free(r);
}

Test(kernels, allreduce_ring_first_copies_carry_the_senders_data)
{
    /* tiny, 2 PEs, n = 8: PE r first sends chunk r of its x, which is real data */
    struct sim_run *r = run_clean(TINY, "allreduce_ring:n=8");
    struct sim_chip *chip = sim_run_chip(r);
    const struct sim_kernel_launch *kl = the_launch(r);
    size_t n, seen = 0;
    struct sim_op_record *const *rec = records(r, &n);
    for (size_t i = 0; i < n && seen < 2; i++) {
        if (strcmp(rec[i]->op_name, "ipcq_copy") != 0)
            continue;
        int from = sim_chip_addr_pe((uint64_t)pint(rec[i], "src_addr"));
        const struct sim_value *snap = param(rec[i], "snapshot");
        cr_assert_eq(snap->type, SIM_V_TENSOR);
        const struct sim_tensor_shard *sh = &kl->args[0].shards[from];
        struct sim_tensor *x = NULL;
        struct diag d;
        cr_assert_eq(sim_chip_mem_read(chip, "hbm",
                                       sim_chip_dev_addr(from, (uint64_t)sh->pa + 16 * from),
                                       SIM_F32, 1, (int64_t[]){4}, &x, &d),
                     0, "%s", d.msg);
        cr_assert_eq(memcmp(sim_tensor_cdata(snap->u.tensor), sim_tensor_cdata(x), 16), 0,
                     "chunk %d of PE %d", from, from);
        sim_tensor_unref(x);
        seen++;
    }
    cr_assert_eq(seen, 2);
    sim_run_free(r);
}

/* ---- llm_decode: markers, tokens, annotations, a growing KV cache ------------------------- */

Test(kernels, llm_decode_reports_a_marker_per_layer_and_a_token_per_step)
{
    /* 3 layers, a 2-token prompt (one step) and 3 generated tokens, on 2 PEs: rank 0
     * reports, rank 1 does not */
    struct sim_run *r = run_clean(TINY, "llm_decode:layers=3,prompt=2,gen=3,pes=2");
    struct sim_chip *chip = sim_run_chip(r);
    const char *want[4 * 3 + 1];
    size_t w = 0;
    for (int t = 0; t < 4; t++) {
        want[w++] = "layer0";
        want[w++] = "layer1";
        want[w++] = "layer2";
        if (t == 0)
            want[w++] = "PREFILL_DONE";
    }
    size_t got = 0;
    double last = -1;
    for (size_t i = 0; i < sim_chip_marker_count(chip); i++) {
        const struct sim_chip_marker *m = sim_chip_marker(chip, i);
        cr_assert_str_eq(m->component, "sip0.cube0.pe0.pe_cpu", "only rank 0 reports");
        cr_assert_lt(got, w);
        cr_assert_str_eq(m->name, want[got], "marker %zu", got);
        cr_assert_str_eq(m->kernel, "llm_decode");
        cr_assert_geq(m->t_ns, last);
        last = m->t_ns;
        got++;
    }
    cr_assert_eq(got, w);
    /* the prompt as one PREFILL step (token_index 0), then DECODE 2, 3, 4 */
    static const int64_t index[] = {0, 2, 3, 4};
    cr_assert_eq(sim_chip_token_count(chip), 4);
    double end = 0;
    for (size_t i = 0; i < sim_chip_token_count(chip); i++) {
        const struct sim_chip_token *t = sim_chip_token(chip, i);
        cr_assert_str_eq(t->component, "sip0.cube0.pe0.pe_cpu");
        cr_assert_eq(t->index, index[i]);
        cr_assert_eq(t->decode, i > 0);
        cr_assert_not(t->open);
        cr_assert_geq(t->t_start_ns, end);
        cr_assert_gt(t->t_end_ns, t->t_start_ns);
        end = t->t_end_ns;
    }
    sim_run_free(r);
}

Test(kernels, llm_decode_prefills_in_chunks_the_tcm_allows)
{
    /* a prompt of 9 tokens on the default chip: one PREFILL step; on tiny (11 KiB of TCM)
     * a step of d = 32 f32 fits fewer tokens: several steps, the first at position 0 */
    struct sim_run *r = run_clean(NULL, "llm_decode:prompt=9,gen=1");
    cr_assert_eq(sim_chip_token_count(sim_run_chip(r)), 2);
    sim_run_free(r);
    r = run_clean(TINY, "llm_decode:prompt=9,gen=1,dim=128,heads=4,ff=128");
    struct sim_chip *chip = sim_run_chip(r);
    size_t prefill = 0;
    int64_t next = 0;
    for (size_t i = 0; i < sim_chip_token_count(chip); i++) {
        const struct sim_chip_token *t = sim_chip_token(chip, i);
        if (t->decode)
            continue;
        cr_assert_eq(t->index, next == 0 ? 0 : t->index);
        cr_assert_gt(t->index, next - 1);
        next = t->index + 1;
        prefill++;
    }
    cr_assert_gt(prefill, 1, "the prompt in chunks");
    sim_run_free(r);
}

Test(kernels, llm_decode_annotates_layers_and_steps)
{
    /* defaults on tiny: 2 layers, d 32, 2 heads, ff 64, 4 + 4 tokens, over both PEs */
    struct sim_run *r = run_clean(TINY, "llm_decode");
    size_t n;
    struct sim_op_record *const *rec = records(r, &n);
    size_t annotated = 0;
    for (size_t i = 0; i < n; i++) {
        const struct sim_op_record *o = rec[i];
        cr_assert_not_null(o->note.tile_id, "%s has a tile", o->op_name);
        size_t len = strlen(o->note.tile_id);
        if (strcmp(o->note.tile_id, "positions") == 0 ||
            (len > 6 && strcmp(o->note.tile_id + len - 6, ".input") == 0)) {
            cr_assert_null(o->note.layer_id, "%s", o->note.tile_id); /* before the layers */
            continue;
        }
        cr_assert_not_null(o->note.layer_id, "%s has a layer", o->op_name);
        cr_assert(strcmp(o->note.layer_id, "layer0") == 0 ||
                  strcmp(o->note.layer_id, "layer1") == 0);
        cr_assert(strncmp(o->note.tile_id, "tok", 3) == 0, "%s", o->note.tile_id);
        char *end;
        long t = strtol(o->note.tile_id + 3, &end, 10);
        cr_assert(*end == '.', "%s", o->note.tile_id);
        cr_assert(t == 0 || (t >= 4 && t < 8), "a step starts at 0 (the prompt) or 4..7: %s",
                  o->note.tile_id);
        cr_assert(strncmp(end + 1, "attn", 4) == 0 || strncmp(end + 1, "mlp", 3) == 0 ||
                      strcmp(end + 1, "output") == 0,
                  "%s", o->note.tile_id);
        annotated++;
    }
    cr_assert_gt(annotated, 0);
    /* each PE computes its head's q, k, v and its half of the MLP columns; the partial sums
     * travel by IPCQ (two all-reduces per layer and step: 2 x 2 x 5 on 2 PEs) */
    cr_assert_gt(count(r, "gemm_f32", 0), 0);
    cr_assert_eq(count(r, "gemm_f32", 0), count(r, "gemm_f32", 1));
    cr_assert_eq(count(r, "silu", 0), count(r, "silu", 1));
    cr_assert_gt(count(r, "ipcq_copy", -1), 0);
    sim_run_free(r);
}

Test(kernels, llm_decode_splits_heads_and_columns_over_the_pes_in_their_cubes_hbm)
{
    /* 6 heads in 2 KV groups and ff 100 over the 8 PEs of the default chip: heads 0..5 on
     * PEs 0..5 (PEs 6, 7 have none), KV head 0 on PEs 0..2 and 1 on PEs 3..5 (replicated),
     * 100 columns as 13, 13, 13, 13, 12, 12, 12, 12 */
    struct sim_run *r =
        run_clean(NULL, "llm_decode:dim=48,heads=6,kv_heads=2,ff=100,layers=2,prompt=3,gen=2");
    const struct sim_kernel_launch *kl = the_launch(r);
    /* wq (2 x 6 x 48 x 8), w1 (2 x 100 x 48), wk (2 x 2 x 48 x 8): a shard per layer per PE */
    size_t wq = 1, wk = 2, w1 = 5;
    int64_t head_bytes = 48 * 8 * 4, col_bytes = 48 * 4;
    for (size_t j = 0; j < kl->args[wq].n_shards; j++) {
        const struct sim_tensor_shard *sh = &kl->args[wq].shards[j];
        int g = (int)(sh->cube * 4 + sh->pe);
        cr_assert_lt(g, 6, "PEs 6 and 7 hold no head");
        cr_assert_eq(sh->nbytes, head_bytes);
        cr_assert_eq(sh->offset_bytes % (6 * head_bytes), g * head_bytes, "PE %d: head %d", g, g);
    }
    cr_assert_eq(kl->args[wq].n_shards, 2 * 6);
    cr_assert_eq(kl->args[wk].n_shards, 2 * 6, "each head's PE holds its KV head");
    for (size_t j = 0; j < kl->args[wk].n_shards; j++) {
        const struct sim_tensor_shard *sh = &kl->args[wk].shards[j];
        int g = (int)(sh->cube * 4 + sh->pe);
        cr_assert_eq(sh->offset_bytes % (2 * head_bytes), (g / 3) * head_bytes);
    }
    int64_t cols[8] = {0};
    for (size_t j = 0; j < kl->args[w1].n_shards; j++) {
        const struct sim_tensor_shard *sh = &kl->args[w1].shards[j];
        cols[sh->cube * 4 + sh->pe] += sh->nbytes / col_bytes;
    }
    for (int g = 0; g < 8; g++)
        cr_assert_eq(cols[g], 2 * (g < 4 ? 13 : 12), "PE %d", g);
    /* every PE took part in the all-reduces */
    for (int g = 0; g < 8; g++)
        cr_assert_gt(count(r, "ipcq_copy", g), 0, "PE %d", g);
    sim_run_free(r);
}

/* ---- sparse_scale: control flow on loaded data (ADR-0020 D3) -------------------------------- */

static struct sim_config *own_cfg;
static struct sim_chip *own_chip;

static void own_setup(void)
{
    struct diag d;
    cr_assert_eq(sim_config_load_embedded(TINY, &own_cfg, &d), 0, "%s", d.msg);
    own_chip = sim_chip_new(own_cfg, 0);
}

static void own_teardown(void)
{
    sim_chip_free(own_chip);
    sim_config_free(own_cfg);
}

/* Run sparse_scale on PE 0 of own_chip over x (4 tiles of 4) with the given mask. */
static struct sim_proc *sparse_on(const float *x, const int32_t *mask, struct kshard sh[3],
                                  struct karg args[5])
{
    int64_t n = 16, t = 4;
    struct sim_tensor *tx = sim_tensor_new(SIM_F32, 1, &n), *tm = sim_tensor_new(SIM_I32, 1, &t);
    struct sim_tensor *to = sim_tensor_new(SIM_F32, 1, &n);
    for (int i = 0; i < 16; i++)
        sim_tensor_set(tx, (size_t)i, x[i]);
    for (int i = 0; i < 4; i++)
        sim_tensor_set(tm, (size_t)i, mask[i]);
    sim_chip_mem_write(own_chip, "hbm", sim_chip_dev_addr(0, 0x0), tx, "x");
    sim_chip_mem_write(own_chip, "hbm", sim_chip_dev_addr(0, 0x100), tm, "mask");
    sim_chip_mem_write(own_chip, "hbm", sim_chip_dev_addr(0, 0x200), to, "out");
    sim_tensor_unref(tx);
    sim_tensor_unref(tm);
    sim_tensor_unref(to);
    const uint64_t pa[3] = {0x0, 0x100, 0x200}, bytes[3] = {64, 16, 64};
    const enum sim_dtype dt[3] = {SIM_F32, SIM_I32, SIM_F32};
    for (int i = 0; i < 3; i++) {
        sh[i] = (struct kshard){0, 0, 0, pa[i], bytes[i], 0};
        args[i] = (struct karg){.is_tensor = true,
                                .has_dtype = true,
                                .dtype = dt[i],
                                .ndim = 1,
                                .shape = {i == 1 ? 4 : 16},
                                .shards = &sh[i],
                                .n_shards = 1,
                                .mine = 0};
    }
    args[3] = (struct karg){.scalar_dtype = SIM_I32, .i = 4, .f = 4};
    args[4] = (struct karg){.scalar_dtype = SIM_F32, .i = 3, .f = 3};
    static struct kargs ka;
    ka = (struct kargs){.n = 5, .v = args, .nranks = 1};
    const struct sim_kernel *k = sim_kernel_find("sparse_scale");
    cr_assert_not_null(k);
    struct sim_proc *p = sim_runner_run(own_chip, "sparse_scale", k->fn, &ka, 0);
    sim_engine_run(sim_chip_engine(own_chip), SIM_RUN_END, 0);
    cr_assert(sim_proc_done(p));
    cr_assert_null(sim_proc_error(p), "%s", sim_proc_error(p));
    return p;
}

/* Run kernel name on PE 0 of own_chip with its split tensors' shards all on PE 1: PE 0 has
 * no rows of them; the whole tensors (whole[i]) have their shard on PE 0. */
static void run_without_rows(const char *name, unsigned n_tensors, const bool *whole,
                             const struct karg *scalars, unsigned n_scalars)
{
    struct kshard sh[4];
    struct karg args[8];
    int64_t shape[2] = {4, 4};
    for (unsigned i = 0; i < n_tensors; i++) {
        struct sim_tensor *t = sim_tensor_new(SIM_F32, 2, shape);
        int pe = whole[i] ? 0 : 1;
        sim_chip_mem_write(own_chip, "hbm", sim_chip_dev_addr(pe, 0x1000 * i), t, "t");
        sim_tensor_unref(t);
        sh[i] = (struct kshard){0, 0, pe, 0x1000 * i, 64, 0};
        args[i] = (struct karg){.is_tensor = true,
                                .has_dtype = true,
                                .dtype = SIM_F32,
                                .ndim = 2,
                                .shape = {4, 4},
                                .shards = &sh[i],
                                .n_shards = 1,
                                .mine = whole[i] ? 0 : -1};
    }
    for (unsigned i = 0; i < n_scalars; i++)
        args[n_tensors + i] = scalars[i];
    struct kargs ka = {.n = n_tensors + n_scalars, .v = args, .nranks = 1};
    const struct sim_kernel *k = sim_kernel_find(name);
    cr_assert_not_null(k);
    struct sim_proc *p = sim_runner_run(own_chip, name, k->fn, &ka, 0);
    sim_engine_run(sim_chip_engine(own_chip), SIM_RUN_END, 0);
    cr_assert(sim_proc_done(p), "%s", name);
    cr_assert_null(sim_proc_error(p), "%s: %s", name, sim_proc_error(p));
    size_t n;
    sim_oplog_records(sim_chip_oplog(own_chip), &n);
    cr_assert_eq(n, 0, "%s has nothing to do", name);
}

Test(kernels, a_pe_without_rows_has_nothing_to_do, .init = own_setup, .fini = own_teardown)
{
    struct karg i4 = {.scalar_dtype = SIM_I32, .i = 4, .f = 4};
    struct karg eps = {.scalar_dtype = SIM_F32, .f = 1e-6};
    struct karg axis = {.scalar_dtype = SIM_I32, .i = -1, .f = -1};
    run_without_rows("softmax", 2, (const bool[]){false, false}, &axis, 1);
    run_without_rows("rmsnorm", 3, (const bool[]){false, true, false}, &eps, 1);
    run_without_rows("layernorm", 4, (const bool[]){false, true, true, false}, &eps, 1);
    run_without_rows("gemm", 3, (const bool[]){false, true, false},
                     (const struct karg[]){i4, i4, i4}, 3);
    run_without_rows("gemm_explicit", 3, (const bool[]){false, true, false},
                     (const struct karg[]){i4, i4, i4}, 3);
}

static void own_sequence(char *buf, size_t size)
{
    size_t n, len = 0;
    struct sim_op_record *const *rec = sim_oplog_records(sim_chip_oplog(own_chip), &n);
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s", len ? " " : "", rec[i]->op_name,
                                rec[i]->note.tile_id ? rec[i]->note.tile_id + 12 : "");
}

static const char *last_marker(void)
{
    size_t n = sim_chip_marker_count(own_chip);
    cr_assert_gt(n, 0);
    return sim_chip_marker(own_chip, n - 1)->name;
}

Test(kernels, sparse_scale_computes_every_tile_of_dense_data, .init = own_setup,
     .fini = own_teardown)
{
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i + 1;
    struct kshard sh[3];
    struct karg args[5];
    sparse_on(x, (const int32_t[]){1, 1, 1, 1}, sh, args);
    char seq[512];
    own_sequence(seq, sizeof(seq));
    /* the mask's load, then read, mul, write per tile (the digit: the tile) */
    cr_assert_str_eq(seq, "dma_read dma_read0 mul0 dma_write0 dma_read1 mul1 dma_write1 "
                          "dma_read2 mul2 dma_write2 dma_read3 mul3 dma_write3");
    cr_assert_str_eq(last_marker(), "sparse_scale.tiles=4,masked=0,zero=0");
}

Test(kernels, sparse_scale_skips_the_tiles_its_loaded_mask_and_data_mark_empty, .init = own_setup,
     .fini = own_teardown)
{
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = i >= 12 ? 0.0f : (float)i + 1; /* tile 3 is all zeros */
    struct kshard sh[3];
    struct karg args[5];
    sparse_on(x, (const int32_t[]){1, 0, 1, 1}, sh, args);
    char seq[512];
    own_sequence(seq, sizeof(seq));
    /* tile 1: masked, never read; tile 3: read, found empty, neither scaled nor written */
    cr_assert_str_eq(seq, "dma_read dma_read0 mul0 dma_write0 dma_read2 mul2 dma_write2 dma_read3");
    cr_assert_str_eq(last_marker(), "sparse_scale.tiles=4,masked=1,zero=1");
}

Test(kernels, sparse_scale_generated_mask_decides_the_work)
{
    /* the generated mask is 0 or 1 per tile; the muls follow it PE by PE */
    struct sim_run *r = run_clean(TINY, "sparse_scale:seed=7");
    struct sim_chip *chip = sim_run_chip(r);
    const struct sim_kernel_launch *kl = the_launch(r);
    size_t total = 0;
    for (int g = 0; g < 2; g++) {
        const struct sim_tensor_shard *sh = &kl->args[1].shards[g];
        int64_t tiles = sh->nbytes / 4;
        struct sim_tensor *m = NULL;
        struct diag d;
        cr_assert_eq(sim_chip_mem_read(chip, "hbm", sim_chip_dev_addr(g, (uint64_t)sh->pa), SIM_I32,
                                       1, &tiles, &m, &d),
                     0, "%s", d.msg);
        size_t ones = 0;
        for (int64_t i = 0; i < tiles; i++) {
            double v = sim_tensor_get(m, (size_t)i);
            cr_assert(v == 0 || v == 1);
            ones += v == 1;
        }
        sim_tensor_unref(m);
        cr_assert_gt(ones, 0);
        cr_assert_lt(ones, (size_t)tiles, "some tiles are masked");
        cr_assert_eq(count(r, "mul", g), ones);
        cr_assert_eq(count(r, "dma_write", g), ones);
        cr_assert_eq(count(r, "dma_read", g), ones + 1);
        total += ones;
    }
    cr_assert_lt(total, 64);
    sim_run_free(r);
}

/* ---- the demo workload ----------------------------------------------------------------------- */

Test(kernels, the_demo_workload_runs_six_kernels)
{
    struct sim_run_opts o = {0}; /* no chip, no workload, no kernel: the embedded demo */
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
    sim_run_advance(r, SIM_RUN_END, 0);
    expect_clean(r, "the demo");
    cr_assert_eq(count(r, "composite_gemm", -1), 4, "gemm on cube1's 4 PEs");
    size_t ring = 0, tp = 0, nrec;
    struct sim_op_record *const *all = records(r, &nrec);
    for (size_t i = 0; i < nrec; i++)
        if (strcmp(all[i]->op_name, "ipcq_copy") == 0) {
            ring += strncmp(all[i]->component_id, "sip0.cube0.", 11) == 0;
            tp += strncmp(all[i]->component_id, "sip0.cube1.", 11) == 0;
        }
    cr_assert_eq(ring, 4 * 2 * 3, "the ring of 4 PEs");
    cr_assert_gt(tp, 0, "llm_decode's all-reduces");
    /* softmax, and llm_decode's attention: a head per PE, 2 layers, 1 + 3 steps */
    cr_assert_eq(count(r, "exp", -1), 1 + 2 * 2 * 4);
    struct sim_chip *chip = sim_run_chip(r);
    cr_assert_eq(sim_chip_token_count(chip), 1 + 3, "a prompt of 2 tokens, then 3");
    bool masked = false, zero = false;
    for (size_t i = 0; i < sim_chip_marker_count(chip); i++) {
        const char *name = sim_chip_marker(chip, i)->name;
        masked |= strcmp(name, "sparse_scale.tiles=8,masked=8,zero=0") == 0;
        zero |= strcmp(name, "sparse_scale.tiles=8,masked=0,zero=4") == 0;
    }
    cr_assert(masked && zero, "sparse_scale takes both branches");
    size_t n;
    records(r, &n);
    cr_assert_lt(n, 3000, "a short demo");
    sim_run_free(r);
}

Test(kernels, the_demo_workload_verifies)
{
    struct sim_run_opts o = {0};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&o, &r, &d), 0, "%s", d.msg);
    struct sim_verify_capture *cap = sim_verify_capture_attach(r);
    sim_run_advance(r, SIM_RUN_END, 0);
    struct sim_verify_report rep;
    cr_assert_eq(sim_verify_phase2(r, cap, &(struct sim_verify_opts){.compare = true}, &rep, &d), 0,
                 "%s", d.msg);
    char *text = sim_verify_report_text(&rep);
    cr_assert(rep.pass, "%s", text);
    cr_assert_eq(rep.n_outputs, 6, "an output per launch:\n%s", text);
    cr_assert_eq(rep.n_notes, 0, "%s", text);
    free(text);
    sim_verify_report_fini(&rep);
    sim_verify_capture_free(cap);
    sim_run_free(r);
}

/* ---- repeatability ------------------------------------------------------------------------ */

static bool same_value(const struct sim_value *a, const struct sim_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case SIM_V_TENSOR:
        return a->u.tensor->dtype == b->u.tensor->dtype &&
               a->u.tensor->nbytes == b->u.tensor->nbytes &&
               memcmp(sim_tensor_cdata(a->u.tensor), sim_tensor_cdata(b->u.tensor),
                      a->u.tensor->nbytes) == 0;
    case SIM_V_LIST:
        if (a->u.list.len != b->u.list.len)
            return false;
        for (size_t i = 0; i < a->u.list.len; i++)
            if (!same_value(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    case SIM_V_MAP:
        if (a->u.map.len != b->u.map.len)
            return false;
        for (size_t i = 0; i < a->u.map.len; i++)
            if (strcmp(a->u.map.keys[i], b->u.map.keys[i]) != 0 ||
                !same_value(a->u.map.vals[i], b->u.map.vals[i]))
                return false;
        return true;
    default: return sim_value_equal(a, b);
    }
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

Test(kernels, the_same_run_twice_gives_the_same_op_log)
{
    for (size_t k = 0; k < sim_kernel_count(); k++) {
        const char *name = sim_kernel_at(k)->name;
        struct sim_run *a = run_clean(TINY, name), *b = run_clean(TINY, name);
        size_t na, nb;
        struct sim_op_record *const *ra = records(a, &na);
        struct sim_op_record *const *rb = records(b, &nb);
        cr_assert_eq(na, nb, "%s", name);
        for (size_t i = 0; i < na; i++) {
            cr_assert(ra[i]->t_start == rb[i]->t_start && ra[i]->t_end == rb[i]->t_end, "%s #%zu",
                      name, i);
            cr_assert_str_eq(ra[i]->component_id, rb[i]->component_id);
            cr_assert_str_eq(ra[i]->op_name, rb[i]->op_name);
            cr_assert(same_value(ra[i]->params, rb[i]->params), "%s #%zu %s", name, i,
                      ra[i]->op_name);
            cr_assert(same_str(ra[i]->note.layer_id, rb[i]->note.layer_id));
            cr_assert(same_str(ra[i]->note.tile_id, rb[i]->note.tile_id));
        }
        struct sim_chip *ca = sim_run_chip(a), *cb = sim_run_chip(b);
        cr_assert_eq(sim_chip_marker_count(ca), sim_chip_marker_count(cb));
        for (size_t i = 0; i < sim_chip_marker_count(ca); i++)
            cr_assert(sim_chip_marker(ca, i)->t_ns == sim_chip_marker(cb, i)->t_ns &&
                      strcmp(sim_chip_marker(ca, i)->name, sim_chip_marker(cb, i)->name) == 0);
        cr_assert_eq(sim_chip_token_count(ca), sim_chip_token_count(cb));
        sim_run_free(a);
        sim_run_free(b);
    }
}

Test(kernels, another_seed_gives_other_data)
{
    struct sim_run *a = run_clean(TINY, "sparse_scale:seed=1");
    struct sim_run *b = run_clean(TINY, "sparse_scale:seed=2");
    size_t na, nb;
    struct sim_op_record *const *ra = records(a, &na);
    struct sim_op_record *const *rb = records(b, &nb);
    bool differ = na != nb;
    for (size_t i = 0; !differ && i < na; i++)
        differ = strcmp(ra[i]->op_name, rb[i]->op_name) != 0 || ra[i]->t_start != rb[i]->t_start ||
                 !same_value(ra[i]->params, rb[i]->params);
    cr_assert(differ, "another mask, another op log");
    sim_run_free(a);
    sim_run_free(b);
}

/* ---- parameters ---------------------------------------------------------------------------- */

static void expect_refused(const char *chip_file, const char *spec, int code, const char *msg)
{
    struct sim_run_opts o = {.chip_file = chip_file, .kernel_spec = spec};
    struct sim_run *r = NULL;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_run_new(&o, &r, &d), -code, "%s", spec);
    cr_assert_null(r);
    cr_assert(strstr(d.msg, msg), "%s: '%s' lacks '%s'", spec, d.msg, msg);
    cr_assert_null(strchr(d.msg, '\n'), "one line");
}

Test(kernels, bad_parameters_are_refused_before_the_run)
{
    expect_refused(NULL, "gemm:m=abc", SIM_EINVAL, "-k gemm: key 'm': 'abc' is not an integer");
    expect_refused(NULL, "gemm:m=0", SIM_EINVAL, "-k gemm: key 'm': 0, must be >= 1");
    expect_refused(NULL, "gemm:dtype=i16", SIM_EINVAL,
                   "-k gemm: key 'dtype': i16 is not supported (f32, f16, bf16, i8)");
    expect_refused(NULL, "softmax:dtype=i8", SIM_EINVAL, "key 'dtype': i8 is not supported");
    expect_refused(TINY, "softmax:pes=3", SIM_EINVAL,
                   "-k softmax: key 'pes': 3, must be 0 (every PE) to 2 (the chip's PEs)");
    expect_refused(NULL, "gemm:k=0", SIM_EINVAL, "-k gemm: key 'k': 0, must be >= 1");
    expect_refused(NULL, "llm_decode:dim=30,heads=4", SIM_EINVAL,
                   "-k llm_decode: key 'dim': 30 does not divide by heads (4)");
    expect_refused(NULL, "llm_decode:gen=-1", SIM_EINVAL, "key 'gen': -1, must be >= 0");
    expect_refused(NULL, "sparse_scale:n=100,tile=7", SIM_EINVAL,
                   "key 'n': 100 does not divide by tile (7)");
    expect_refused(NULL, "allreduce_ring:n=0", SIM_EINVAL, "key 'n': 0, must be >= 1");
    expect_refused(NULL, "llm_decode:heads=4,kv_heads=3", SIM_EINVAL,
                   "-k llm_decode: key 'kv_heads': 3 does not divide heads (4)");
    expect_refused(NULL, "llm_decode:ff=0", SIM_EINVAL, "-k llm_decode: key 'ff': 0, must be >= 1");
    expect_refused(TINY, "llm_decode:dim=4096,heads=8", SIM_EINVAL,
                   "-k llm_decode: key 'dim': 4096: a step of one token needs");
    expect_refused(TINY, "gemm_explicit:m=2,n=3000", SIM_EINVAL,
                   "-k gemm_explicit: key 'n': 3000: a row of B with a row of C's accumulator "
                   "needs");
    expect_refused(NULL, "softmax:cols=0", SIM_EINVAL, "-k softmax: key 'cols': 0, must be >= 1");
    expect_refused(NULL, "rmsnorm:eps=-1", SIM_EINVAL, "key 'eps': -1, must be >= 0");
    expect_refused(NULL, "nosuch", SIM_ENOENT, "unknown kernel 'nosuch'");
}

/* ---- tl_tile_gemm and the IPCQ slots, directly ----------------------------------------------- */

static void bad_tile(struct tl *tl, const struct kargs *a)
{
    (void)a;
    struct kshard s = {0, 0, 0, 0x0, 64, 0};
    struct karg arg = {.is_tensor = true,
                       .has_dtype = true,
                       .dtype = SIM_F32,
                       .ndim = 2,
                       .shape = {4, 4},
                       .shards = &s,
                       .n_shards = 1,
                       .mine = 0};
    struct kargs ka = {.n = 1, .v = &arg};
    struct tl_tensor *t = tl_arg(tl, &ka, 0);
    struct tl_tensor *b = tl_load(tl, t);
    int64_t wide[2] = {2, 8};
    tl_tile_gemm(tl, t, b, tl_reshape(tl, t, 2, wide));
}

Test(kernels, tl_tile_gemm_refuses_shapes_that_do_not_match, .init = own_setup,
     .fini = own_teardown)
{
    int64_t n = 16;
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n);
    sim_chip_mem_write(own_chip, "hbm", sim_chip_dev_addr(0, 0x0), t, "t");
    sim_tensor_unref(t);
    struct sim_proc *p = sim_runner_run(own_chip, "bad_tile", bad_tile, NULL, 0);
    sim_engine_run(sim_chip_engine(own_chip), SIM_RUN_END, 0);
    cr_assert(sim_proc_done(p));
    const char *err = sim_proc_error(p);
    cr_assert_not_null(err);
    cr_assert(strstr(err, "kernel 'bad_tile' on sip0.cube0.pe0: tl_tile_gemm(): a (4, 4) by b "
                          "(4, 4) into (2, 8): the shapes do not match"),
              "%s", err);
    cr_assert_eq(sim_oplog_count(sim_chip_oplog(own_chip)), 1, "nothing issued after the load");
}

static double got_ipcq[2];
static char got_space[2][8];

static void pingpong(struct tl *tl, const struct kargs *a)
{
    (void)a;
    int64_t one = 1;
    struct kshard s = {0, 0, (int)tl_rank(tl), 0x0, 4, 0};
    struct karg arg = {.is_tensor = true,
                       .has_dtype = true,
                       .dtype = SIM_F32,
                       .ndim = 1,
                       .shape = {1},
                       .shards = &s,
                       .n_shards = 1,
                       .mine = 0};
    struct kargs ka = {.n = 1, .v = &arg};
    struct tl_tensor *mine = tl_load(tl, tl_reshape(tl, tl_arg(tl, &ka, 0), 1, &one));
    struct tl_tensor *h = tl_ipcq_send(tl, 1 - tl_rank(tl), mine);
    struct tl_tensor *in = tl_ipcq_recv(tl);
    got_ipcq[tl_rank(tl)] = tl_get(tl, in, 0);
    snprintf(got_space[tl_rank(tl)], sizeof(got_space[0]), "%s", tl_space(in));
    tl_load(tl, in); /* from the slot into TCM */
    tl_wait(tl, h);
}

static const struct sim_kernel pingpong_kernel = {.name = "pingpong", .fn = pingpong};

Test(kernels, ipcq_arrivals_land_in_an_sram_slot_with_their_data, .init = own_setup,
     .fini = own_teardown)
{
    for (int g = 0; g < 2; g++) {
        int64_t one = 1;
        struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &one);
        sim_tensor_set(t, 0, 10 + g);
        sim_chip_mem_write(own_chip, "hbm", sim_chip_dev_addr(g, 0x0), t, "v");
        sim_tensor_unref(t);
    }
    struct sim_kernel_launch kl = {0};
    int pes[2] = {0, 1};
    struct sim_launch_group *grp = sim_runner_group_new(own_chip, &pingpong_kernel, &kl, pes, 2, 0);
    struct sim_proc *p0 = sim_runner_start(grp, 0), *p1 = sim_runner_start(grp, 1);
    sim_engine_run(sim_chip_engine(own_chip), SIM_RUN_END, 0);
    cr_assert_null(sim_proc_error(p0), "%s", sim_proc_error(p0));
    cr_assert_null(sim_proc_error(p1), "%s", sim_proc_error(p1));
    cr_assert_float_eq(got_ipcq[0], 11, 0);
    cr_assert_float_eq(got_ipcq[1], 10, 0);
    cr_assert_str_eq(got_space[0], "sram");
    cr_assert_str_eq(got_space[1], "sram");
    /* the receiver's DMA wrote its cube's SRAM; the loads read it back */
    int sram = sim_topo_find(sim_chip_topo(own_chip), "sip0.cube0.sram");
    const struct sim_component *c = sim_chip_component(own_chip, sram);
    cr_assert_eq(c->stats.bytes_written, 8);
    cr_assert_eq(c->stats.bytes_read, 8);
}

/* ---- phase 2 against the references (run --verify) ------------------------------------------ */

/* Phase 2 of spec's run on chip agrees with the kernel's reference on every output. */
static void expect_verified(const char *chip_file, const char *spec)
{
    struct sim_run_opts ro = {.chip_file = chip_file, .kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s: %s", spec, d.msg);
    struct sim_verify_capture *cap = sim_verify_capture_attach(r);
    sim_run_advance(r, SIM_RUN_END, 0);
    expect_clean(r, spec);
    struct sim_verify_report rep;
    cr_assert_eq(sim_verify_phase2(r, cap, &(struct sim_verify_opts){.compare = true}, &rep, &d), 0,
                 "%s: %s", spec, d.msg);
    char *text = sim_verify_report_text(&rep);
    cr_assert(rep.pass, "%s:\n%s", spec, text);
    cr_assert_geq(rep.n_outputs, 1, "%s compares its outputs:\n%s", spec, text);
    cr_assert_eq(rep.n_notes, 0, "%s has a reference:\n%s", spec, text);
    cr_assert_gt(rep.exec.executed, 0, "%s", spec);
    if (strncmp(spec, "gemm_explicit", 13) == 0)
        cr_assert_eq(rep.exec.skipped, 0, "%s: every TileToken stage is replayed", spec);
    free(text);
    sim_verify_report_fini(&rep);
    sim_verify_capture_free(cap);
    sim_run_free(r);
}

Test(kernels, phase_2_agrees_with_each_kernels_reference, .timeout = 120)
{
    static const char *const tiny[] = {
        "gemm",
        "gemm:dtype=f16",
        "gemm:dtype=bf16",
        "gemm:dtype=i8",
        "gemm_explicit",
        "gemm_explicit:dtype=f16",
        "gemm_explicit:dtype=bf16",
        "gemm_explicit:dtype=i8",
        "softmax",
        "softmax:dtype=f16",
        "softmax:dtype=bf16",
        "rmsnorm",
        "rmsnorm:dtype=f16",
        "rmsnorm:dtype=bf16",
        "layernorm",
        "layernorm:dtype=f16",
        "layernorm:dtype=bf16",
        "allreduce_ring",
        "allreduce_ring:dtype=f16",
        "allreduce_ring:dtype=bf16",
        "allreduce_ring:dtype=i32",
        "sparse_scale",
        "sparse_scale:dtype=f16",
        "sparse_scale:dtype=bf16",
        "llm_decode",
        "llm_decode:dtype=f16",
        "llm_decode:dtype=bf16",
        "llm_decode:pes=2,layers=3,gen=6",
    };
    for (size_t i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++)
        expect_verified(TINY, tiny[i]);
    /* eight PEs: a longer ring, more shards */
    expect_verified(NULL, "allreduce_ring");
    expect_verified(NULL, "gemm_explicit:m=256,n=64,k=64,dtype=bf16");
    expect_verified(NULL, "llm_decode:pes=8,dim=64,ff=128,heads=4");
}

Test(kernels, phase_2_agrees_at_odd_sizes, .timeout = 120)
{
    /* sizes 1, primes, rows that do not divide by the PEs (some PEs idle or one row short),
     * one past a tile boundary (64 rows per tile, 16384-element pieces), rows and
     * reductions longer than the TCM (tiny: 11264 bytes) */
    static const char *const tiny[] = {
        "vector_add:n=1,pes=2",
        "vector_add:n=16385,pes=2",
        "gemm:m=1,n=1,k=1",
        "gemm:m=3,n=7,k=131,dtype=f16",
        "gemm_explicit:m=65,n=13,k=97",
        "gemm_explicit:m=5,n=67,k=257,dtype=bf16",
        "softmax:rows=1,cols=1",
        "softmax:rows=3,cols=4099",
        "rmsnorm:rows=7,d=3001,dtype=f16",
        "layernorm:rows=65,d=13",
        "layernorm:rows=2,d=2999,dtype=bf16",
        "allreduce_ring:n=1",
        "allreduce_ring:n=16387,dtype=f16",
        "sparse_scale:n=7,tile=7",
        "sparse_scale:n=1001,tile=7,dtype=f16",
        "llm_decode:dim=24,heads=3,ff=37,prompt=5,gen=2,layers=1",
        "llm_decode:dim=128,heads=4,kv_heads=2,ff=129,prompt=9,gen=2,dtype=f16",
    };
    for (size_t i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++)
        expect_verified(TINY, tiny[i]);
    static const char *const eight[] = {
        "softmax:rows=3,cols=17",
        "rmsnorm:rows=13,d=31",
        "gemm:m=13,n=5,k=1031",
        "gemm_explicit:m=9,n=3,k=2",
        "allreduce_ring:n=5,dtype=i32",
        "sparse_scale:n=39,tile=3",
        "llm_decode:dim=48,heads=6,kv_heads=2,ff=100,prompt=3,gen=2,dtype=bf16",
    };
    for (size_t i = 0; i < sizeof(eight) / sizeof(eight[0]); i++)
        expect_verified(NULL, eight[i]);
}

/* ---- uneven splits and idle PEs ---------------------------------------------------------------
 */

/* PEs that hold a shard of tensor argument i of the launch, and the rows of each. */
static int shard_rows(struct sim_run *r, size_t i, int64_t *rows, int max)
{
    const struct sim_kernel_launch *kl = the_launch(r);
    const struct sim_kernel_arg *a = &kl->args[i];
    int64_t row = sim_dtype_size(a->tensor_dtype);
    for (unsigned d = 1; d < a->ndim; d++)
        row *= a->shape[d];
    int n = 0;
    for (size_t j = 0; j < a->n_shards; j++) {
        const struct sim_tensor_shard *sh = &a->shards[j];
        int g = sim_chip_pe_index(sim_run_chip(r), (int)sh->sip, (int)sh->cube, (int)sh->pe);
        cr_assert(g >= 0 && g < max);
        rows[g] = sh->nbytes / row;
        cr_assert_eq(sh->offset_bytes % row, 0);
        n++;
    }
    return n;
}

Test(kernels, rows_split_unevenly_and_spare_pes_idle)
{
    int64_t rows[32] = {0};
    /* 3 rows over 8 PEs: PEs 0..2 get one each, the others none and are not launched */
    struct sim_run *r = run_clean(NULL, "softmax:rows=3");
    cr_assert_eq(shard_rows(r, 1, rows, 8), 3);
    for (int g = 0; g < 3; g++)
        cr_assert_eq(rows[g], 1);
    for (int g = 3; g < 8; g++)
        cr_assert_eq(count(r, "dma_read", g), 0, "PE %d idles", g);
    sim_run_free(r);
    /* 300 rows over 32 PEs: the first 12 get 10, the other 20 get 9 */
    memset(rows, 0, sizeof(rows));
    r = run_clean("sim/configs/large.yaml", "rmsnorm:rows=300,d=8");
    cr_assert_eq(shard_rows(r, 2, rows, 32), 32);
    for (int g = 0; g < 32; g++)
        cr_assert_eq(rows[g], g < 12 ? 10 : 9, "PE %d", g);
    sim_run_free(r);
    /* a prime number of rows: 13 over 8 PEs, 5 PEs of 2 and 3 of 1 */
    memset(rows, 0, sizeof(rows));
    r = run_clean(NULL, "gemm:m=13,n=8,k=8");
    cr_assert_eq(shard_rows(r, 2, rows, 8), 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(rows[g], g < 5 ? 2 : 1, "PE %d", g);
    sim_run_free(r);
}

Test(kernels, the_even_split_of_the_builder)
{
    int64_t lo, hi, total = 0;
    for (int64_t p = 0; p < 7; p++) {
        sim_kutil_split(23, 7, p, &lo, &hi);
        cr_assert_eq(lo, total, "parts follow each other");
        cr_assert_eq(hi - lo, p < 2 ? 4 : 3, "23 over 7: two parts of 4, five of 3");
        total = hi;
    }
    cr_assert_eq(total, 23);
    sim_kutil_split(1, 4, 0, &lo, &hi);
    cr_assert(lo == 0 && hi == 1);
    sim_kutil_split(1, 4, 3, &lo, &hi);
    cr_assert_eq(hi - lo, 0, "an empty part");
    sim_kutil_split(11008, 30, 29, &lo, &hi);
    cr_assert(lo == 11008 - 366 && hi == 11008, "ff 11008 over 30 PEs: the last gets 366");
    sim_kutil_split(32, 24, 7, &lo, &hi);
    cr_assert_eq(hi - lo, 2, "32 heads over 24 PEs: the first 8 get 2");
    sim_kutil_split(32, 24, 8, &lo, &hi);
    cr_assert_eq(hi - lo, 1);
}

/* ---- references against hand-computed values ------------------------------------------------- */

static struct sim_tensor *tensor_n(enum sim_dtype dt, unsigned nd, const int64_t *shape,
                                   const double *v, size_t n)
{
    struct sim_tensor *t = sim_tensor_new(dt, nd, shape);
    cr_assert_eq(sim_tensor_numel(t), n);
    for (size_t i = 0; i < n; i++)
        sim_tensor_set(t, i, v[i]);
    return t;
}

/* tensor(dtype, ndim, shape, v0, v1, ...): a tensor holding exactly these values. */
#define tensor(dt, nd, shape, ...)                                                                 \
    tensor_n((dt), (nd), (shape), (const double[]){__VA_ARGS__},                                   \
             sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

/* zeros(dtype, ndim, shape) */
static struct sim_tensor *zeros(enum sim_dtype dt, unsigned nd, const int64_t *shape)
{
    return sim_tensor_new(dt, nd, shape);
}

static void expect_values_n(const struct sim_tensor *t, const double *want, size_t n, double tol)
{
    cr_assert_eq(sim_tensor_numel(t), n);
    for (size_t i = 0; i < n; i++)
        cr_assert_float_eq(sim_tensor_get(t, i), want[i], tol, "element %zu: %.9g, want %.9g", i,
                           sim_tensor_get(t, i), want[i]);
}

/* expect_values(t, tol, v0, v1, ...): t holds exactly these values. */
#define expect_values(t, tol, ...)                                                                 \
    expect_values_n((t), (const double[]){__VA_ARGS__},                                            \
                    sizeof((const double[]){__VA_ARGS__}) / sizeof(double), (tol))

Test(kernels, gemm_reference)
{
    struct sim_tensor *a = tensor(SIM_F32, 2, ((int64_t[]){2, 3}), 1, 2, 3, 4, 5, 6);
    struct sim_tensor *b = tensor(SIM_F32, 2, ((int64_t[]){3, 2}), 7, 8, 9, 10, 11, 12);
    struct sim_tensor *c = zeros(SIM_F32, 2, (int64_t[]){2, 2});
    sim_kref_gemm(a, b, c, NULL);
    /* [1 2 3; 4 5 6] [7 8; 9 10; 11 12] = [58 64; 139 154] */
    expect_values(c, 0, 58, 64, 139, 154);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
    sim_tensor_unref(c);
    /* i8 -> i32, beyond i8's range */
    a = tensor(SIM_I8, 2, ((int64_t[]){1, 2}), -128, 127);
    b = tensor(SIM_I8, 2, ((int64_t[]){2, 1}), -128, -128);
    c = zeros(SIM_I32, 2, (int64_t[]){1, 1});
    sim_kref_gemm(a, b, c, NULL);
    expect_values(c, 0, 16384 - 16256);
    sim_tensor_unref(a);
    sim_tensor_unref(b);
    sim_tensor_unref(c);
}

Test(kernels, softmax_reference)
{
    /* softmax(0, ln 2, ln 3) = (1, 2, 3) / 6; a constant row is uniform; adding a constant
     * to a row changes nothing */
    struct sim_tensor *x = tensor(SIM_F32, 2, ((int64_t[]){3, 3}), 0, log(2), log(3), 5, 5, 5, 100,
                                  100 + log(2), 100 + log(3));
    struct sim_tensor *y = zeros(SIM_F32, 2, (int64_t[]){3, 3});
    sim_kref_softmax(x, y, NULL);
    expect_values(y, 1e-6, 1 / 6.0, 2 / 6.0, 3 / 6.0, 1 / 3.0, 1 / 3.0, 1 / 3.0, 1 / 6.0, 2 / 6.0,
                  3 / 6.0);
    sim_tensor_unref(x);
    sim_tensor_unref(y);
}

Test(kernels, norm_references)
{
    /* rmsnorm (3, 4): mean square 12.5, so x / sqrt(12.5) * (1, 2) */
    struct sim_tensor *x = tensor(SIM_F32, 2, ((int64_t[]){1, 2}), 3, 4);
    struct sim_tensor *w = tensor(SIM_F32, 1, ((int64_t[]){2}), 1, 2);
    struct sim_tensor *o = zeros(SIM_F32, 2, (int64_t[]){1, 2});
    sim_kref_rmsnorm(x, w, 0, o, NULL);
    expect_values(o, 1e-6, 0.848528137, 2.262741700);
    /* eps joins the mean square: (3, 4) with eps 3.5: / sqrt(16) */
    sim_kref_rmsnorm(x, w, 3.5, o, NULL);
    expect_values(o, 1e-6, 0.75, 2);
    sim_tensor_unref(x);
    sim_tensor_unref(w);
    sim_tensor_unref(o);
    /* layernorm (1, 2, 3, 4): mean 2.5, variance 1.25; gamma 2, beta 1 */
    x = tensor(SIM_F32, 2, ((int64_t[]){1, 4}), 1, 2, 3, 4);
    struct sim_tensor *g = tensor(SIM_F32, 1, ((int64_t[]){4}), 2, 2, 2, 2);
    struct sim_tensor *b = tensor(SIM_F32, 1, ((int64_t[]){4}), 1, 1, 1, 1);
    o = zeros(SIM_F32, 2, (int64_t[]){1, 4});
    sim_kref_layernorm(x, g, b, 0, o, NULL);
    expect_values(o, 1e-6, 1 - 2 * 1.341640786, 1 - 2 * 0.447213595, 1 + 2 * 0.447213595,
                  1 + 2 * 1.341640786);
    sim_tensor_unref(x);
    sim_tensor_unref(g);
    sim_tensor_unref(b);
    sim_tensor_unref(o);
}

Test(kernels, allreduce_reference)
{
    struct sim_tensor *x =
        tensor(SIM_I32, 2, ((int64_t[]){3, 4}), 1, 2, 3, 4, 10, 20, 30, 40, 100, 200, 300, 400);
    struct sim_tensor *o = zeros(SIM_I32, 2, (int64_t[]){3, 4});
    sim_kref_allreduce(x, o);
    expect_values(o, 0, 111, 222, 333, 444, 111, 222, 333, 444, 111, 222, 333, 444);
    sim_tensor_unref(x);
    sim_tensor_unref(o);
    /* in bf16 (8 significant bits: 256 + 1 rounds to 256, 258 is exact) the ring rounds
     * every partial sum, in its order: 3 PEs holding (256, 256, 256), (1, 1, 1), (1, 1, 1);
     * chunk c is element c and starts on PE c: element 0 is (256 + 1) + 1 = 256, element 1
     * (1 + 1) + 256 = 258, element 2 (1 + 256) + 1 = 256 */
    x = tensor(SIM_BF16, 2, ((int64_t[]){3, 3}), 256, 256, 256, 1, 1, 1, 1, 1, 1);
    o = zeros(SIM_BF16, 2, (int64_t[]){3, 3});
    sim_kref_allreduce(x, o);
    expect_values(o, 0, 256, 258, 256, 256, 258, 256, 256, 258, 256);
    sim_tensor_unref(x);
    sim_tensor_unref(o);
}

Test(kernels, sparse_scale_reference)
{
    struct sim_tensor *x = tensor(SIM_F32, 1, ((int64_t[]){6}), 1, 2, 3, 4, 5, 6);
    struct sim_tensor *m = tensor(SIM_I32, 1, ((int64_t[]){3}), 1, 0, 1);
    struct sim_tensor *o = zeros(SIM_F32, 1, (int64_t[]){6});
    sim_kref_sparse_scale(x, m, 2, 3, o);
    expect_values(o, 0, 3, 6, 0, 0, 15, 18);
    sim_tensor_unref(x);
    sim_tensor_unref(m);
    sim_tensor_unref(o);
}

Test(kernels, llm_decode_reference)
{
    /*
     * d = 1, one head, one layer, ff 1, eps 0: rmsnorm of a scalar is its sign. Weights:
     * wq = wk = wv = wo = 0.5, w1 = w3 = 1, w2 = 2. Prompt (2, -2), nothing generated.
     * t = 0: h = 1; k = v = q = 0.5; one position: o = 0.5; x = 2 + 0.25 = 2.25;
     *        MLP: h = 1, g = silu(1) * 1 = 0.731058579, x = 2.25 + 1.462117157.
     * t = 1: h = -1; k = v = q = -0.5; scores q.k = (-0.25, 0.25); softmax:
     *        p = (1 / (1 + e^0.5), e^0.5 / (1 + e^0.5)) = (0.377540669, 0.622459331);
     *        o = 0.5 p0 - 0.5 p1 = -0.122459331; x = -2 - 0.061229666 = -2.061229666;
     *        MLP: h = -1, g = silu(-1) * -1 = 0.268941421, x = -2.061229666 + 0.537882843.
     */
    struct sim_kref_llm s = {
        .layers = 1, .d = 1, .heads = 1, .kv_heads = 1, .ff = 1, .prompt = 2, .gen = 0, .ranks = 1};
    int64_t s21[2] = {2, 1}, s4[4] = {1, 1, 1, 1}, s3[3] = {1, 1, 1};
    int64_t c2[4] = {1, 1, 2, 1};
    struct sim_tensor *prompt = tensor(SIM_F32, 2, s21, 2, -2);
    struct sim_tensor *half = tensor(SIM_F32, 4, s4, 0.5);
    struct sim_tensor *w1 = tensor(SIM_F32, 3, s3, 1);
    struct sim_tensor *w2 = tensor(SIM_F32, 3, s3, 2);
    struct sim_tensor *kc = zeros(SIM_F32, 4, c2), *vc = zeros(SIM_F32, 4, c2);
    struct sim_tensor *out = zeros(SIM_F32, 2, s21);
    double bk[2] = {0}, bv[2] = {0}, bo[2] = {0};
    struct sim_kref_llm_io io = {.prompt = prompt,
                                 .wq = half,
                                 .wk = half,
                                 .wv = half,
                                 .wo = half,
                                 .w1 = w1,
                                 .w3 = w1,
                                 .w2 = w2,
                                 .kcache = kc,
                                 .vcache = vc,
                                 .out = out,
                                 .bound_k = bk,
                                 .bound_v = bv,
                                 .bound_out = bo};
    sim_kref_llm_decode(&s, &io);
    expect_values(kc, 1e-7, 0.5, -0.5);
    expect_values(vc, 1e-7, 0.5, -0.5);
    expect_values(out, 1e-6, 2.25 + 1.462117157, -2.061229666 + 0.537882843);
    /* the bounds: one-term dot products (gamma_1 |h w|), ... small and positive */
    cr_assert(bk[0] > 0 && bk[0] < 1e-6 && bo[1] > 0 && bo[1] < 1e-5, "%g %g", bk[0], bo[1]);
    /* prompt (2), then one generated token whose input is out[0] = 3.712...: its sign is 1
     * too, so the cache holds 0.5 at both positions */
    s.prompt = 1;
    s.gen = 1;
    sim_kref_llm_decode(&s, &io);
    /* t = 1: h = 1, equal scores, o = 0.5, x = 3.712117157 + 0.25, + 1.462117157 */
    expect_values(out, 1e-6, 3.712117157, 3.712117157 + 0.25 + 1.462117157);
    expect_values(kc, 1e-7, 0.5, 0.5);
    /* with the kernel's own results: the generated token starts from the kernel's out[0],
     * and attention reads the kernel's keys and values */
    struct sim_tensor *gout = tensor(SIM_F32, 2, s21, -7, 0);
    struct sim_tensor *gk = tensor(SIM_F32, 4, c2, 0.5, 0.5), *gv = tensor(SIM_F32, 4, c2, 1, 3);
    io.got_out = gout;
    io.got_k = gk;
    io.got_v = gv;
    sim_kref_llm_decode(&s, &io);
    /* t = 0: attention reads the kernel's value 1: o = 1, x = 2 + 0.5, + 1.462117157;
     * t = 1 from x = -7: h = -1, k = v = q = -0.5 (the expected cache row); scores over the
     * kernel's keys (0.5, 0.5) are equal: o = (1 + 3) / 2 = 2, x = -7 + 1 = -6; MLP: h = -1,
     * g = 0.268941421, x = -6 + 0.537882843 */
    expect_values(kc, 1e-7, 0.5, -0.5);
    expect_values(out, 1e-6, 2.5 + 1.462117157, -6 + 0.537882843);
    sim_tensor_unref(gout);
    sim_tensor_unref(gk);
    sim_tensor_unref(gv);
    sim_tensor_unref(prompt);
    sim_tensor_unref(half);
    sim_tensor_unref(w1);
    sim_tensor_unref(w2);
    sim_tensor_unref(kc);
    sim_tensor_unref(vc);
    sim_tensor_unref(out);
}
