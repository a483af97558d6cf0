/*
 * The op log against ADR-0052: the seven fields, params per op_name with exactly the keys
 * and types of D3.1-D3.7, the snapshot policy of D4, TileToken stage capture (D5) and the
 * stable t_start order of D2; observers of op starts and ends.
 */
#include "sim/data/memstore.h"
#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"
#include "sim/data/tensor.h"
#include "sim/data/value.h"
#include "sim/util/xalloc.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define NS(x) ((sim_time_t)(x)*SIM_TICKS_PER_NS)

/* A 1-d f32 tensor holding vals. */
static struct sim_tensor *vec(const double *vals, int64_t n)
{
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 1, &n);
    for (int64_t i = 0; i < n; i++)
        sim_tensor_set(t, (size_t)i, vals[i]);
    return t;
}

static void handle(struct sim_handle *h, const char *space, uint64_t addr, int64_t n,
                   const char *id)
{
    sim_handle_set(h, space, addr, SIM_F32, 1, &n, id);
}

/* Assert that map p has exactly the keys (in this order) with the value types given. */
static void expect_keys(const struct sim_value *p, const char *const *keys,
                        const enum sim_vtype *types, size_t n)
{
    cr_assert_eq(p->type, SIM_V_MAP);
    cr_assert_eq(p->u.map.len, n, "expected %zu keys, got %zu", n, p->u.map.len);
    for (size_t i = 0; i < n; i++) {
        cr_assert_str_eq(p->u.map.keys[i], keys[i], "key %zu", i);
        cr_assert_eq(p->u.map.vals[i]->type, types[i], "key '%s': %s, expected %s", keys[i],
                     sim_vtype_name(p->u.map.vals[i]->type), sim_vtype_name(types[i]));
    }
}

/* Every item of list l has type t. */
static void expect_list_of(const struct sim_value *l, enum sim_vtype t, size_t n)
{
    cr_assert_eq(l->type, SIM_V_LIST);
    cr_assert_eq(l->u.list.len, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(l->u.list.items[i]->type, t, "item %zu: %s", i,
                     sim_vtype_name(l->u.list.items[i]->type));
}

static const struct sim_op_record *only_record(struct sim_oplog *log)
{
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    cr_assert_eq(n, 1);
    return r[0];
}

static const struct sim_op_record *run_one(struct sim_oplog *log, struct sim_msg *m,
                                           const char *comp, sim_time_t t0, sim_time_t t1)
{
    sim_oplog_record_start(log, t0, comp, m);
    sim_oplog_record_end(log, t1, comp, m);
    return only_record(log);
}

/* ---- D1 and D3: fields and params --------------------------------------------------------- */

Test(oplog, dma_read_record_has_the_seven_fields_d3_1_params_and_its_destination)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_READ);
    handle(&m.u.dma_read.src, "hbm", 0x1000, 16, "x");
    handle(&m.u.dma_read.dst, "tcm", 0x40, 16, "sip0.cube0.pe0/h1");
    /* 1234567 ps = 1234.567 ns exactly; 2000000 ps = 2000 ns */
    const struct sim_op_record *r = run_one(log, &m, "sip0.cube0.pe0.pe_dma", 1234567, 2000000);
    cr_assert_float_eq(r->t_start, 1234.567, 1e-9);
    cr_assert_float_eq(r->t_end, 2000.0, 1e-9);
    cr_assert_str_eq(r->component_id, "sip0.cube0.pe0.pe_dma");
    cr_assert_str_eq(r->op_kind, "memory");
    cr_assert_str_eq(r->op_name, "dma_read");
    cr_assert_eq(r->n_dependency_ids, 0);
    /* exactly D3.1's three keys */
    static const char *const keys[] = {"src_addr", "nbytes", "handle_id"};
    static const enum sim_vtype types[] = {SIM_V_INT, SIM_V_INT, SIM_V_STR};
    expect_keys(r->params, keys, types, 3);
    cr_assert_eq(sim_value_get_int(r->params, "src_addr", -1), 0x1000);
    cr_assert_eq(sim_value_get_int(r->params, "nbytes", -1), 64); /* 16 x 4 bytes */
    cr_assert_str_eq(sim_value_get_str(r->params, "handle_id", ""), "sip0.cube0.pe0/h1");
    /* ADR-0020 D5's destination, for phase 2's replay, is an annotation beside them */
    static const char *const rkeys[] = {"src_space", "dst_space", "dst_addr", "shape", "dtype"};
    static const enum sim_vtype rtypes[] = {SIM_V_STR, SIM_V_STR, SIM_V_INT, SIM_V_LIST, SIM_V_STR};
    expect_keys(r->note.replay, rkeys, rtypes, 5);
    cr_assert_str_eq(sim_value_get_str(r->note.replay, "src_space", ""), "hbm");
    cr_assert_str_eq(sim_value_get_str(r->note.replay, "dst_space", ""), "tcm");
    cr_assert_eq(sim_value_get_int(r->note.replay, "dst_addr", -1), 0x40);
    cr_assert_str_eq(sim_value_get_str(r->note.replay, "dtype", ""), "f32");
    cr_assert_not(r->note.in_flight);
    sim_oplog_free(log);
}

Test(oplog, dma_write_params_follow_d3_2)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_WRITE);
    int64_t shape[2] = {4, 8};
    sim_handle_set(&m.u.dma_write.src, "tcm", 0x80, SIM_F16, 2, shape, "h7");
    sim_handle_set(&m.u.dma_write.dst, "hbm", 0x2000, SIM_F16, 2, shape, NULL);
    const struct sim_op_record *r = run_one(log, &m, "sip0.cube0.pe0.pe_dma", NS(1), NS(2));
    cr_assert_str_eq(r->op_kind, "memory");
    cr_assert_str_eq(r->op_name, "dma_write");
    static const char *const keys[] = {"src_space", "src_addr", "shape",     "dtype",   "dst_space",
                                       "dst_addr",  "nbytes",   "handle_id", "snapshot"};
    static const enum sim_vtype types[] = {SIM_V_STR, SIM_V_INT, SIM_V_LIST, SIM_V_STR, SIM_V_STR,
                                           SIM_V_INT, SIM_V_INT, SIM_V_STR,  SIM_V_NULL};
    expect_keys(r->params, keys, types, 9);
    cr_assert_str_eq(sim_value_get_str(r->params, "src_space", ""), "tcm");
    cr_assert_str_eq(sim_value_get_str(r->params, "dst_space", ""), "hbm");
    cr_assert_str_eq(sim_value_get_str(r->params, "dtype", ""), "f16");
    cr_assert_eq(sim_value_get_int(r->params, "nbytes", 0), 64); /* 4 x 8 x 2 bytes */
    cr_assert_eq(sim_value_get_int(r->params, "dst_addr", 0), 0x2000);
    expect_list_of(sim_value_map_get(r->params, "shape"), SIM_V_INT, 2);
    sim_oplog_free(log);
}

Test(oplog, gemm_params_follow_d3_3_and_name_the_input_dtype)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_GEMM);
    int64_t sa[2] = {128, 256}, sb[2] = {256, 64}, so[2] = {128, 64};
    sim_handle_set(&m.u.gemm.a, "tcm", 0x0, SIM_F16, 2, sa, NULL);
    sim_handle_set(&m.u.gemm.b, "tcm", 0x10000, SIM_F16, 2, sb, NULL);
    sim_handle_set(&m.u.gemm.out, "tcm", 0x20000, SIM_F32, 2, so, NULL);
    const struct sim_op_record *r = run_one(log, &m, "sip0.cube0.pe0.pe_gemm", NS(0), NS(9));
    cr_assert_str_eq(r->op_kind, "gemm");
    cr_assert_str_eq(r->op_name, "gemm_f16");
    /* exactly D3.3's keys */
    static const char *const keys[] = {"src_a_addr",  "src_b_addr", "dst_addr", "shape_a",
                                       "shape_b",     "shape_out",  "dtype_in", "dtype_out",
                                       "m",           "k",          "n",        "src_a_space",
                                       "src_b_space", "dst_space"};
    static const enum sim_vtype types[] = {SIM_V_INT,  SIM_V_INT, SIM_V_INT, SIM_V_LIST, SIM_V_LIST,
                                           SIM_V_LIST, SIM_V_STR, SIM_V_STR, SIM_V_INT,  SIM_V_INT,
                                           SIM_V_INT,  SIM_V_STR, SIM_V_STR, SIM_V_STR};
    expect_keys(r->params, keys, types, 14);
    /* ADR-0020 D5's transpose flags and accumulation dtype are replay annotations */
    static const char *const rkeys[] = {"transpose_a", "transpose_b", "dtype_acc"};
    static const enum sim_vtype rtypes[] = {SIM_V_BOOL, SIM_V_BOOL, SIM_V_STR};
    expect_keys(r->note.replay, rkeys, rtypes, 3);
    cr_assert_not(sim_value_get_bool(r->note.replay, "transpose_a", true));
    cr_assert_eq(sim_value_get_int(r->params, "m", 0), 128);
    cr_assert_eq(sim_value_get_int(r->params, "k", 0), 256);
    cr_assert_eq(sim_value_get_int(r->params, "n", 0), 64);
    cr_assert_str_eq(sim_value_get_str(r->params, "dtype_out", ""), "f32");
    sim_oplog_free(log);
}

Test(oplog, gemm_m_k_n_follow_the_transpose_flags)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_GEMM);
    /* A stored as (k=32, m=16) and transposed; B stored as (n=8, k=32) and transposed */
    int64_t sa[2] = {32, 16}, sb[2] = {8, 32}, so[2] = {16, 8};
    sim_handle_set(&m.u.gemm.a, "tcm", 0, SIM_BF16, 2, sa, NULL);
    sim_handle_set(&m.u.gemm.b, "tcm", 4096, SIM_BF16, 2, sb, NULL);
    sim_handle_set(&m.u.gemm.out, "tcm", 8192, SIM_F32, 2, so, NULL);
    m.u.gemm.transpose_a = m.u.gemm.transpose_b = true;
    const struct sim_op_record *r = run_one(log, &m, "pe_gemm", 0, 1);
    cr_assert_str_eq(r->op_name, "gemm_bf16");
    cr_assert_eq(sim_value_get_int(r->params, "m", 0), 16);
    cr_assert_eq(sim_value_get_int(r->params, "k", 0), 32);
    cr_assert_eq(sim_value_get_int(r->params, "n", 0), 8);
    cr_assert(sim_value_get_bool(r->note.replay, "transpose_a", false));
    cr_assert(sim_value_get_bool(r->note.replay, "transpose_b", false));
    sim_oplog_free(log);
}

Test(oplog, math_params_follow_d3_4_with_axis_int_or_null)
{
    struct sim_memstore *ms = sim_memstore_new();
    struct sim_oplog *log = sim_oplog_new(ms);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MATH);
    snprintf(m.u.math.op, sizeof(m.u.math.op), "sum");
    m.u.math.n_inputs = 1;
    int64_t s[2] = {4, 8}, so[2] = {4, 1};
    sim_handle_set(&m.u.math.inputs[0], "tcm", 0x100, SIM_F32, 2, s, NULL);
    sim_handle_set(&m.u.math.out, "tcm", 0x200, SIM_F32, 2, so, NULL);
    m.u.math.has_axis = true;
    m.u.math.axis = 1;
    const struct sim_op_record *r = run_one(log, &m, "sip0.cube0.pe0.pe_math", 0, NS(3));
    cr_assert_str_eq(r->op_kind, "math");
    cr_assert_str_eq(r->op_name, "sum");
    static const char *const keys[] = {
        "input_addrs", "input_shapes", "input_spaces", "input_dtypes", "dst_addr",
        "dst_space",   "shape_out",    "dtype",        "axis",         "input_snapshots"};
    static const enum sim_vtype types[] = {SIM_V_LIST, SIM_V_LIST, SIM_V_LIST, SIM_V_LIST,
                                           SIM_V_INT,  SIM_V_STR,  SIM_V_LIST, SIM_V_STR,
                                           SIM_V_INT,  SIM_V_LIST};
    expect_keys(r->params, keys, types, 10);
    expect_list_of(sim_value_map_get(r->params, "input_addrs"), SIM_V_INT, 1);
    expect_list_of(sim_value_map_get(r->params, "input_shapes"), SIM_V_LIST, 1);
    expect_list_of(sim_value_map_get(r->params, "input_spaces"), SIM_V_STR, 1);
    expect_list_of(sim_value_map_get(r->params, "input_dtypes"), SIM_V_STR, 1);
    /* nothing stored at 0x100: the read fails, the snapshot is null (D4) */
    expect_list_of(sim_value_map_get(r->params, "input_snapshots"), SIM_V_NULL, 1);
    cr_assert_eq(sim_value_get_int(r->params, "axis", -1), 1);
    sim_oplog_free(log);

    /* an elementwise op has axis None */
    log = sim_oplog_new(ms);
    sim_msg_init(&m, SIM_MK_MATH);
    snprintf(m.u.math.op, sizeof(m.u.math.op), "exp");
    m.u.math.n_inputs = 1;
    sim_handle_set(&m.u.math.inputs[0], "tcm", 0x100, SIM_F32, 2, s, NULL);
    sim_handle_set(&m.u.math.out, "tcm", 0x300, SIM_F32, 2, s, NULL);
    r = run_one(log, &m, "pe_math", 0, 1);
    cr_assert_str_eq(r->op_name, "exp");
    cr_assert_eq(sim_value_map_get(r->params, "axis")->type, SIM_V_NULL);
    sim_oplog_free(log);
    sim_memstore_free(ms);
}

Test(oplog, composite_gemm_params_follow_d3_5)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_COMPOSITE);
    snprintf(m.u.composite.op, sizeof(m.u.composite.op), "gemm");
    int64_t sa[2] = {64, 32}, sb[2] = {32, 16}, so[2] = {64, 16};
    sim_handle_set(&m.u.composite.a, "hbm", 0x1000, SIM_F16, 2, sa, NULL);
    sim_handle_set(&m.u.composite.b, "hbm", 0x2000, SIM_F16, 2, sb, NULL);
    sim_handle_set(&m.u.composite.out, "hbm", 0x3000, SIM_F16, 2, so, NULL);
    const struct sim_op_record *r = run_one(log, &m, "sip0.cube0.pe0.pe_gemm", 0, NS(50));
    cr_assert_str_eq(r->op_kind, "gemm");
    cr_assert_str_eq(r->op_name, "composite_gemm");
    static const char *const keys[] = {
        "op",       "out_addr",  "out_nbytes",  "src_a_addr",  "src_b_addr", "shape_a", "shape_b",
        "dtype_in", "dtype_out", "src_a_space", "src_b_space", "dst_space",  "dst_addr"};
    static const enum sim_vtype types[] = {SIM_V_STR,  SIM_V_INT,  SIM_V_INT, SIM_V_INT, SIM_V_INT,
                                           SIM_V_LIST, SIM_V_LIST, SIM_V_STR, SIM_V_STR, SIM_V_STR,
                                           SIM_V_STR,  SIM_V_STR,  SIM_V_INT};
    expect_keys(r->params, keys, types, 13);
    cr_assert_eq(sim_value_get_int(r->params, "out_nbytes", 0), 64 * 16 * 2);
    cr_assert_eq(sim_value_get_int(r->params, "dst_addr", 0), 0x3000);
    sim_oplog_free(log);
}

Test(oplog, composite_math_is_op_kind_math_with_three_params)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_COMPOSITE);
    snprintf(m.u.composite.op, sizeof(m.u.composite.op), "math");
    int64_t s[1] = {256};
    sim_handle_set(&m.u.composite.a, "hbm", 0x1000, SIM_F32, 1, s, NULL);
    sim_handle_set(&m.u.composite.out, "hbm", 0x3000, SIM_F32, 1, s, NULL);
    const struct sim_op_record *r = run_one(log, &m, "pe_math", 0, 1);
    cr_assert_str_eq(r->op_kind, "math");
    cr_assert_str_eq(r->op_name, "composite_math");
    static const char *const keys[] = {"op", "out_addr", "out_nbytes"};
    static const enum sim_vtype types[] = {SIM_V_STR, SIM_V_INT, SIM_V_INT};
    expect_keys(r->params, keys, types, 3);
    sim_oplog_free(log);
}

Test(oplog, ipcq_copy_params_follow_d3_6)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_handle src, dst;
    handle(&src, "tcm", 0x100, 8, NULL);
    handle(&dst, "sram", 0x900, 8, NULL);
    sim_oplog_record_copy(log, NS(5), NS(7), "sip0.cube0.pe1.pe_dma", &src, &dst, NULL, NULL);
    const struct sim_op_record *r = only_record(log);
    cr_assert_str_eq(r->op_kind, "memory");
    cr_assert_str_eq(r->op_name, "ipcq_copy");
    cr_assert_float_eq(r->t_start, 5.0, 1e-12);
    cr_assert_float_eq(r->t_end, 7.0, 1e-12);
    static const char *const keys[] = {"src_space", "src_addr", "dst_space", "dst_addr",
                                       "shape",     "dtype",    "nbytes",    "snapshot"};
    static const enum sim_vtype types[] = {SIM_V_STR,  SIM_V_INT, SIM_V_STR, SIM_V_INT,
                                           SIM_V_LIST, SIM_V_STR, SIM_V_INT, SIM_V_NULL};
    expect_keys(r->params, keys, types, 8);
    cr_assert_str_eq(sim_value_get_str(r->params, "dst_space", ""), "sram");
    cr_assert_eq(sim_value_get_int(r->params, "nbytes", 0), 32);
    sim_oplog_free(log);
}

Test(oplog, unknown_messages_fall_back_to_their_type_name_with_empty_params)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_KERNEL_LAUNCH);
    const struct sim_op_record *r = run_one(log, &m, "sip0.io_cpu", 0, NS(1));
    cr_assert_str_eq(r->op_kind, "unknown");
    cr_assert_str_eq(r->op_name, "KernelLaunch");
    cr_assert_eq(r->params->type, SIM_V_MAP);
    cr_assert_eq(r->params->u.map.len, 0);
    sim_oplog_free(log);

    /* a control message made a data op is logged under its own name */
    log = sim_oplog_new(NULL);
    sim_msg_init_control(&m, "Doorbell", 8);
    m.data_op = true;
    r = run_one(log, &m, "sip0.cube0.m_cpu", 0, 1);
    cr_assert_str_eq(r->op_kind, "unknown");
    cr_assert_str_eq(r->op_name, "Doorbell");
    cr_assert_eq(r->params->u.map.len, 0);
    sim_oplog_free(log);
}

/* ---- D5: TileToken ---------------------------------------------------------------------- */

Test(oplog, tile_token_stage_is_captured_at_start_and_renamed)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_TILE_TOKEN);
    struct sim_value *p0 = sim_value_map();
    sim_value_map_set_int(p0, "nbytes", 4096);
    sim_value_map_set_int(p0, "src_addr", 0x1000);
    struct sim_value *p1 = sim_value_map();
    sim_value_map_set_int(p1, "m", 32);
    sim_tile_add_stage_take(&m, SIM_STAGE_DMA_READ, 0, 4096, 0, p0);
    sim_tile_add_stage_take(&m, SIM_STAGE_GEMM, 1, 0, 2 * 32 * 32 * 32, p1);

    sim_oplog_record_start(log, NS(10), "sip0.cube0.pe0.pe_dma", &m);
    /* the token moves on before the end hook runs, and its old stage params change */
    sim_value_map_set_int(m.u.tile.stages[0].params, "nbytes", 1);
    m.u.tile.stage_idx = 1;
    sim_oplog_record_end(log, NS(20), "sip0.cube0.pe0.pe_dma", &m);

    const struct sim_op_record *r = only_record(log);
    cr_assert_str_eq(r->op_kind, "unknown");
    cr_assert_str_eq(r->op_name, "TileToken/DMA_READ");
    static const char *const keys[] = {"stage_type", "nbytes", "src_addr"};
    static const enum sim_vtype types[] = {SIM_V_STR, SIM_V_INT, SIM_V_INT};
    expect_keys(r->params, keys, types, 3);
    cr_assert_str_eq(sim_value_get_str(r->params, "stage_type", ""), "DMA_READ");
    cr_assert_eq(sim_value_get_int(r->params, "nbytes", 0), 4096, "the start-time copy");
    cr_assert_null(sim_value_map_get(r->params, "m"), "not the next stage's params");
    sim_msg_fini(&m);
    sim_oplog_free(log);
}

Test(oplog, tile_token_stages_on_one_component_are_told_apart)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_TILE_TOKEN);
    sim_tile_add_stage_take(&m, SIM_STAGE_DMA_READ, 0, 64, 0, NULL);
    sim_tile_add_stage_take(&m, SIM_STAGE_GEMM, 1, 0, 100, NULL);
    sim_tile_add_stage_take(&m, SIM_STAGE_DMA_WRITE, 0, 64, 0, NULL);
    for (unsigned s = 0; s < 3; s++) {
        m.u.tile.stage_idx = s;
        const char *comp = s == 1 ? "pe_gemm" : "pe_dma";
        sim_oplog_record_start(log, NS(10 * s), comp, &m);
        sim_oplog_record_end(log, NS(10 * s + 5), comp, &m);
    }
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(r[0]->op_name, "TileToken/DMA_READ");
    cr_assert_str_eq(r[1]->op_name, "TileToken/GEMM");
    cr_assert_str_eq(r[1]->component_id, "pe_gemm");
    cr_assert_str_eq(r[2]->op_name, "TileToken/DMA_WRITE");
    sim_msg_fini(&m);
    sim_oplog_free(log);
}

/* ---- D2: order --------------------------------------------------------------------------- */

Test(oplog, records_are_sorted_by_t_start_when_ends_arrive_out_of_order)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg longop, shortop;
    sim_msg_init(&longop, SIM_MK_DMA_READ);
    sim_msg_init(&shortop, SIM_MK_DMA_WRITE);
    sim_oplog_record_start(log, NS(0), "a", &longop);
    sim_oplog_record_start(log, NS(5), "b", &shortop);
    sim_oplog_record_end(log, NS(7), "b", &shortop); /* appended first */
    sim_oplog_record_end(log, NS(100), "a", &longop);
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(r[0]->op_name, "dma_read");
    cr_assert_float_eq(r[0]->t_start, 0.0, 1e-12);
    cr_assert_str_eq(r[1]->op_name, "dma_write");
    /* ids follow the starts, whatever the order of the ends */
    cr_assert_eq(r[0]->note.id, 0);
    cr_assert_eq(r[1]->note.id, 1);
    sim_oplog_free(log);
}

Test(oplog, equal_t_start_keeps_insertion_order)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m[5];
    const char *names[5] = {"m0", "m1", "m2", "m3", "m4"};
    for (int i = 0; i < 5; i++) {
        sim_msg_init_control(&m[i], names[i], 0);
        m[i].data_op = true;
    }
    /* m3 starts earlier; m0, m1, m2, m4 all start at 10 ns and are appended (ended) in the
     * order m2, m0, m4, m1 */
    sim_oplog_record_start(log, NS(10), "c", &m[0]);
    sim_oplog_record_start(log, NS(10), "c", &m[1]);
    sim_oplog_record_start(log, NS(10), "c", &m[2]);
    sim_oplog_record_start(log, NS(3), "c", &m[3]);
    sim_oplog_record_start(log, NS(10), "c", &m[4]);
    sim_oplog_record_end(log, NS(11), "c", &m[2]);
    sim_oplog_record_end(log, NS(12), "c", &m[0]);
    /* an access in between sorts; later appends must keep the order stable */
    size_t n;
    sim_oplog_records(log, &n);
    cr_assert_eq(n, 2);
    sim_oplog_record_end(log, NS(13), "c", &m[4]);
    sim_oplog_record_end(log, NS(14), "c", &m[3]);
    sim_oplog_record_end(log, NS(15), "c", &m[1]);
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    cr_assert_eq(n, 5);
    const char *expect[5] = {"m3", "m2", "m0", "m4", "m1"};
    for (int i = 0; i < 5; i++)
        cr_assert_str_eq(r[i]->op_name, expect[i], "position %d", i);
    sim_oplog_free(log);
}

/* ---- D4: snapshots ----------------------------------------------------------------------- */

Test(oplog, math_snapshot_is_a_copy_that_later_writes_do_not_change)
{
    struct sim_memstore *ms = sim_memstore_new();
    struct sim_oplog *log = sim_oplog_new(ms);
    double a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    struct sim_tensor *ta = vec(a, 3), *tb = vec(b, 3);
    sim_memstore_write(ms, "tcm", 0x0, ta, NULL);
    sim_memstore_write(ms, "tcm", 0x40, tb, NULL);

    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MATH);
    snprintf(m.u.math.op, sizeof(m.u.math.op), "add");
    m.u.math.n_inputs = 2;
    handle(&m.u.math.inputs[0], "tcm", 0x0, 3, NULL);
    handle(&m.u.math.inputs[1], "tcm", 0x40, 3, NULL);
    handle(&m.u.math.out, "tcm", 0x80, 3, NULL);
    sim_oplog_record_start(log, 0, "pe_math", &m);
    /* A2: the snapshot is taken at record_end, so a write before the end is seen */
    sim_tensor_set(ta, 0, 5);
    sim_oplog_record_end(log, NS(1), "pe_math", &m);

    /* later: the stored tensor is mutated in place (reference store) and replaced */
    sim_tensor_set(ta, 1, -1);
    sim_tensor_set(tb, 2, -1);
    double c[3] = {7, 7, 7};
    struct sim_tensor *tc = vec(c, 3);
    sim_memstore_write(ms, "tcm", 0x0, tc, NULL);

    const struct sim_op_record *r = only_record(log);
    const struct sim_value *snaps = sim_value_map_get(r->params, "input_snapshots");
    expect_list_of(snaps, SIM_V_TENSOR, 2);
    const struct sim_tensor *s0 = snaps->u.list.items[0]->u.tensor;
    const struct sim_tensor *s1 = snaps->u.list.items[1]->u.tensor;
    cr_assert_neq(s0, ta, "a copy, not the stored tensor");
    cr_assert_float_eq(sim_tensor_get(s0, 0), 5.0, 0);
    cr_assert_float_eq(sim_tensor_get(s0, 1), 2.0, 0);
    cr_assert_float_eq(sim_tensor_get(s0, 2), 3.0, 0);
    cr_assert_float_eq(sim_tensor_get(s1, 2), 30.0, 0);
    sim_tensor_unref(ta);
    sim_tensor_unref(tb);
    sim_tensor_unref(tc);
    sim_oplog_free(log);
    sim_memstore_free(ms);
}

Test(oplog, math_snapshot_of_an_unreadable_input_is_null)
{
    struct sim_memstore *ms = sim_memstore_new();
    struct sim_oplog *log = sim_oplog_new(ms);
    double a[3] = {1, 2, 3};
    struct sim_tensor *ta = vec(a, 3);
    sim_memstore_write(ms, "tcm", 0x0, ta, NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_MATH);
    snprintf(m.u.math.op, sizeof(m.u.math.op), "mul");
    m.u.math.n_inputs = 2;
    handle(&m.u.math.inputs[0], "tcm", 0x0, 3, NULL);
    handle(&m.u.math.inputs[1], "tcm", 0x0, 5, NULL); /* 20 bytes over 12 stored: fails */
    handle(&m.u.math.out, "tcm", 0x80, 3, NULL);
    const struct sim_op_record *r = run_one(log, &m, "pe_math", 0, 1);
    const struct sim_value *snaps = sim_value_map_get(r->params, "input_snapshots");
    cr_assert_eq(snaps->u.list.items[0]->type, SIM_V_TENSOR);
    cr_assert_eq(snaps->u.list.items[1]->type, SIM_V_NULL);
    sim_tensor_unref(ta);
    sim_oplog_free(log);
    sim_memstore_free(ms);
}

static const struct sim_op_record *dma_write_from(struct sim_oplog *log, const char *space)
{
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_WRITE);
    handle(&m.u.dma_write.src, space, 0x100, 3, "h");
    handle(&m.u.dma_write.dst, "hbm", 0x8000, 3, NULL);
    return run_one(log, &m, "pe_dma", 0, NS(2));
}

Test(oplog, dma_write_snapshots_only_hbm_sources)
{
    struct sim_memstore *ms = sim_memstore_new();
    double a[3] = {4, 5, 6};
    struct sim_tensor *t = vec(a, 3);
    sim_memstore_write(ms, "tcm", 0x100, t, NULL);
    sim_memstore_write(ms, "hbm", 0x100, t, NULL);

    struct sim_oplog *log = sim_oplog_new(ms);
    const struct sim_op_record *r = dma_write_from(log, "tcm");
    cr_assert_eq(sim_value_map_get(r->params, "snapshot")->type, SIM_V_NULL,
                 "a TCM source is deliberately not snapshotted");
    sim_oplog_free(log);

    log = sim_oplog_new(ms);
    r = dma_write_from(log, "hbm");
    const struct sim_value *s = sim_value_map_get(r->params, "snapshot");
    cr_assert_eq(s->type, SIM_V_TENSOR);
    cr_assert_neq(s->u.tensor, t);
    sim_tensor_set(t, 0, 99);
    cr_assert_float_eq(sim_tensor_get(s->u.tensor, 0), 4.0, 0);
    sim_oplog_free(log);

    /* with no memory store attached, snapshots are skipped */
    log = sim_oplog_new(NULL);
    r = dma_write_from(log, "hbm");
    cr_assert_eq(sim_value_map_get(r->params, "snapshot")->type, SIM_V_NULL);
    sim_oplog_free(log);
    sim_tensor_unref(t);
    sim_memstore_free(ms);
}

Test(oplog, ipcq_copy_takes_the_callers_snapshot_else_a_fresh_read)
{
    struct sim_memstore *ms = sim_memstore_new();
    double a[2] = {1, 2}, inflight[2] = {8, 9};
    struct sim_tensor *t = vec(a, 2), *fly = vec(inflight, 2);
    sim_memstore_write(ms, "tcm", 0x10, t, NULL);
    struct sim_handle src, dst;
    handle(&src, "tcm", 0x10, 2, NULL);
    handle(&dst, "tcm", 0x9010, 2, NULL);

    struct sim_oplog *log = sim_oplog_new(ms);
    sim_oplog_record_copy(log, 0, NS(1), "pe_dma", &src, &dst, fly, NULL);
    sim_oplog_record_copy(log, NS(2), NS(3), "pe_dma", &src, &dst, NULL, NULL);
    sim_tensor_set(fly, 0, 0);
    sim_tensor_set(t, 0, 0);
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    cr_assert_eq(n, 2);
    const struct sim_value *s0 = sim_value_map_get(r[0]->params, "snapshot");
    const struct sim_value *s1 = sim_value_map_get(r[1]->params, "snapshot");
    cr_assert_eq(s0->type, SIM_V_TENSOR);
    cr_assert_float_eq(sim_tensor_get(s0->u.tensor, 0), 8.0, 0, "the caller's data, copied");
    cr_assert_eq(s1->type, SIM_V_TENSOR);
    cr_assert_float_eq(sim_tensor_get(s1->u.tensor, 0), 1.0, 0, "a fresh read, copied");
    sim_oplog_free(log);

    /* the message path takes the message's snapshot the same way */
    log = sim_oplog_new(ms);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_IPCQ_COPY);
    m.u.ipcq.src = src;
    m.u.ipcq.dst = dst;
    m.u.ipcq.snapshot = sim_tensor_ref(fly);
    const struct sim_op_record *rr = run_one(log, &m, "pe_dma", 0, 1);
    cr_assert_str_eq(rr->op_name, "ipcq_copy");
    cr_assert_eq(sim_value_map_get(rr->params, "snapshot")->type, SIM_V_TENSOR);
    sim_msg_fini(&m);
    sim_oplog_free(log);

    sim_tensor_unref(t);
    sim_tensor_unref(fly);
    sim_memstore_free(ms);
}

/* ---- annotations and observers ------------------------------------------------------------ */

struct seen_params {
    int starts, ends;
    uint64_t start_id, end_id;
    char start_comp[64], start_name[64];
    bool start_in_flight;
    double end_t_end;
    size_t pending_at_start;
    struct sim_oplog *log;
};

static void on_start(void *ctx, const struct sim_op_record *r)
{
    struct seen_params *s = ctx;
    s->starts++;
    s->start_id = r->note.id;
    snprintf(s->start_comp, sizeof(s->start_comp), "%s", r->component_id);
    snprintf(s->start_name, sizeof(s->start_name), "%s", r->op_name);
    s->start_in_flight = r->note.in_flight;
    s->pending_at_start = sim_oplog_pending_count(s->log);
}

static void on_end(void *ctx, const struct sim_op_record *r)
{
    struct seen_params *s = ctx;
    s->ends++;
    s->end_id = r->note.id;
    s->end_t_end = r->t_end;
}

Test(oplog, observers_hear_starts_with_the_pending_record_and_ends)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct seen_params s = {.log = log};
    int id = sim_oplog_observe(log, &(struct sim_oplog_observer){on_start, on_end, &s});
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_READ);
    m.cmdq_id = 3;
    m.kernel = "vector_add";
    sim_oplog_record_start(log, NS(4), "sip0.cube0.pe2.pe_dma", &m);
    cr_assert_eq(s.starts, 1);
    cr_assert(s.start_in_flight);
    cr_assert_str_eq(s.start_comp, "sip0.cube0.pe2.pe_dma");
    cr_assert_str_eq(s.start_name, "dma_read");
    cr_assert_eq(s.pending_at_start, 1);
    cr_assert_eq(sim_oplog_count(log), 0);
    const struct sim_op_record *p = sim_oplog_pending(log, 0);
    cr_assert_eq(p->note.cmdq_id, 3);
    cr_assert_str_eq(p->note.kernel, "vector_add");

    sim_oplog_record_end(log, NS(9), "sip0.cube0.pe2.pe_dma", &m);
    cr_assert_eq(s.ends, 1);
    cr_assert_eq(s.end_id, s.start_id);
    cr_assert_float_eq(s.end_t_end, 9.0, 1e-12);
    cr_assert_eq(sim_oplog_pending_count(log), 0);

    sim_oplog_unobserve(log, id);
    sim_oplog_record_start(log, NS(10), "x", &m);
    sim_oplog_record_end(log, NS(11), "x", &m);
    cr_assert_eq(s.starts, 1, "an unsubscribed observer hears nothing");
    size_t n;
    struct sim_op_record *const *r = sim_oplog_records(log, &n);
    cr_assert_eq(n, 2);
    cr_assert_eq(r[0]->note.cmdq_id, 3);
    cr_assert_null(r[0]->note.layer_id);
    sim_oplog_free(log);
}

Test(oplog, ticks_convert_to_ns_exactly)
{
    cr_assert_float_eq(sim_ticks_to_ns(1), 0.001, 1e-15);
    cr_assert_float_eq(sim_ticks_to_ns(123456789012345ULL), 123456789012.345, 1e-3);
    cr_assert_eq(sim_ns_to_ticks(2.5), 2500);
    cr_assert_eq(sim_ns_to_ticks(0.0004), 0);
}

/* ---- records that are not kept: packed params, expanded on demand ------------------------- */

/* What an observer of a log that keeps nothing expands, at start and at end. */
struct unkept {
    struct sim_value *start, *start_replay, *end, *end_replay;
    const char *op_name;
    bool in_flight_at_start;
};

static void unkept_start(void *ctx, const struct sim_op_record *r)
{
    struct unkept *s = ctx;
    cr_assert_null(r->params, "a record that is not kept has no tree");
    s->start = sim_op_record_params(r, &s->start_replay);
    s->in_flight_at_start = r->note.in_flight;
}

static void unkept_end(void *ctx, const struct sim_op_record *r)
{
    struct unkept *s = ctx;
    s->end = sim_op_record_params(r, &s->end_replay);
    s->op_name = r->op_name;
}

/* The messages of every kind D3 names, as the kernel API builds them. */
static void every_kind(struct sim_msg *m, size_t *n)
{
    size_t k = 0;
    int64_t s2[2] = {4, 8}, sa[2] = {16, 32}, sb[2] = {32, 8}, so[2] = {16, 8}, s1[1] = {256};
    sim_msg_init(&m[k], SIM_MK_DMA_READ);
    sim_handle_set(&m[k].u.dma_read.src, "hbm", 0x1000, SIM_F16, 2, s2, "x");
    sim_handle_set(&m[k++].u.dma_read.dst, "tcm", 0x40, SIM_F16, 2, s2, "sip0.cube0.pe0/h1");
    sim_msg_init(&m[k], SIM_MK_DMA_WRITE);
    sim_handle_set(&m[k].u.dma_write.src, "tcm", 0x80, SIM_F32, 2, s2, "h7");
    sim_handle_set(&m[k++].u.dma_write.dst, "hbm", 0x2000, SIM_F32, 2, s2, NULL);
    sim_msg_init(&m[k], SIM_MK_GEMM);
    sim_handle_set(&m[k].u.gemm.a, "tcm", 0, SIM_BF16, 2, sa, NULL);
    sim_handle_set(&m[k].u.gemm.b, "tcm", 0x400, SIM_BF16, 2, sb, NULL);
    sim_handle_set(&m[k].u.gemm.out, "tcm", 0x800, SIM_F32, 2, so, NULL);
    m[k].u.gemm.transpose_b = true;
    m[k++].u.gemm.dtype_acc = SIM_F32;
    sim_msg_init(&m[k], SIM_MK_MATH);
    sim_strlcpy(m[k].u.math.op, "where", sizeof(m[k].u.math.op));
    m[k].u.math.n_inputs = 3;
    for (int i = 0; i < 3; i++)
        sim_handle_set(&m[k].u.math.inputs[i], "tcm", 0x100u * (unsigned)i, SIM_F32, 1, s1, NULL);
    sim_handle_set(&m[k++].u.math.out, "tcm", 0x900, SIM_F32, 1, s1, NULL);
    sim_msg_init(&m[k], SIM_MK_MATH);
    sim_strlcpy(m[k].u.math.op, "sum", sizeof(m[k].u.math.op));
    m[k].u.math.n_inputs = 1;
    sim_handle_set(&m[k].u.math.inputs[0], "tcm", 0, SIM_F32, 2, s2, NULL);
    sim_handle_set(&m[k].u.math.out, "tcm", 0x900, SIM_F32, 2, s2, NULL);
    m[k].u.math.has_axis = true;
    m[k++].u.math.axis = -1;
    sim_msg_init(&m[k], SIM_MK_COMPOSITE);
    sim_strlcpy(m[k].u.composite.op, "gemm", sizeof(m[k].u.composite.op));
    sim_handle_set(&m[k].u.composite.a, "hbm", 0x1000, SIM_F16, 2, sa, NULL);
    sim_handle_set(&m[k].u.composite.b, "hbm", 0x2000, SIM_F16, 2, sb, NULL);
    sim_handle_set(&m[k++].u.composite.out, "hbm", 0x3000, SIM_F16, 2, so, NULL);
    sim_msg_init(&m[k], SIM_MK_COMPOSITE);
    sim_strlcpy(m[k].u.composite.op, "math", sizeof(m[k].u.composite.op));
    sim_strlcpy(m[k].u.composite.math_op, "exp", sizeof(m[k].u.composite.math_op));
    sim_handle_set(&m[k].u.composite.a, "hbm", 0x1000, SIM_F32, 1, s1, NULL);
    sim_handle_set(&m[k++].u.composite.out, "hbm", 0x3000, SIM_F32, 1, s1, NULL);
    sim_msg_init(&m[k], SIM_MK_IPCQ_COPY);
    sim_handle_set(&m[k].u.ipcq.src, "tcm", 0x100, SIM_I8, 1, s1, NULL);
    sim_handle_set(&m[k++].u.ipcq.dst, "sram", 0x900, SIM_I8, 1, s1, NULL);
    sim_msg_init(&m[k], SIM_MK_TILE_TOKEN);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "nbytes", 4096);
    sim_value_map_set_str(p, "a key outside the table", "kept");
    sim_tile_add_stage_take(&m[k++], SIM_STAGE_DMA_READ, 0, 4096, 0, p);
    sim_msg_init_control(&m[k++], "Issue", 64); /* D3.7 */
    *n = k;
}

Test(oplog, a_log_that_keeps_nothing_shows_observers_exactly_the_kept_params)
{
    struct sim_msg m[16];
    size_t n;
    every_kind(m, &n);
    struct sim_oplog *kept = sim_oplog_new(NULL), *gone = sim_oplog_new(NULL);
    sim_oplog_set_retain(gone, false);
    for (size_t i = 0; i < n; i++) {
        struct unkept s = {0};
        struct sim_oplog_observer o = {.on_start = unkept_start, .on_end = unkept_end, .ctx = &s};
        int id = sim_oplog_observe(gone, &o);
        sim_oplog_record_start(kept, NS(i), "c", &m[i]);
        sim_oplog_record_end(kept, NS(i + 1), "c", &m[i]);
        sim_oplog_record_start(gone, NS(i), "c", &m[i]);
        sim_oplog_record_end(gone, NS(i + 1), "c", &m[i]);
        sim_oplog_unobserve(gone, id);

        size_t nk;
        const struct sim_op_record *r = sim_oplog_records(kept, &nk)[nk - 1];
        cr_assert_str_eq(s.op_name, r->op_name);
        cr_assert(sim_value_equal(s.end, r->params), "%s: the same params, key for key",
                  r->op_name);
        cr_assert(sim_value_equal(s.start, r->params), "%s: known at the start already",
                  r->op_name);
        cr_assert(s.in_flight_at_start);
        /* the replay annotations too (an empty map when the record has none) */
        if (r->note.replay)
            cr_assert(sim_value_equal(s.end_replay, r->note.replay), "%s", r->op_name);
        else
            cr_assert_eq(s.end_replay->u.map.len, 0, "%s", r->op_name);
        /* and what the retained record expands to is its tree */
        struct sim_value *rp = NULL, *pp = sim_op_record_params(r, &rp);
        cr_assert(sim_value_equal(pp, r->params));
        sim_value_free(pp);
        sim_value_free(rp);
        sim_value_free(s.start);
        sim_value_free(s.start_replay);
        sim_value_free(s.end);
        sim_value_free(s.end_replay);
    }
    size_t left;
    sim_oplog_records(gone, &left);
    cr_assert_eq(left, 0, "nothing kept");
    cr_assert_eq(sim_oplog_count(gone), n, "but every record counted");
    cr_assert_eq(sim_oplog_count(kept), n);
    for (size_t i = 0; i < n; i++)
        sim_msg_fini(&m[i]);
    sim_oplog_free(kept);
    sim_oplog_free(gone);
}

Test(oplog, a_tile_token_in_flight_shows_its_stage_and_params)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_TILE_TOKEN);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_int(p, "nbytes", 4096);
    sim_tile_add_stage_take(&m, SIM_STAGE_DMA_READ, 0, 4096, 0, p);
    sim_oplog_record_start(log, NS(1), "sip0.cube0.pe0.pe_dma", &m);
    const struct sim_op_record *r = sim_oplog_pending(log, 0);
    cr_assert_str_eq(r->op_name, "TileToken/DMA_READ");
    struct sim_value *params = sim_op_record_params(r, NULL);
    cr_assert_str_eq(sim_value_get_str(params, "stage_type", ""), "DMA_READ");
    cr_assert_eq(sim_value_get_int(params, "nbytes", 0), 4096);
    sim_value_free(params);
    sim_oplog_record_end(log, NS(2), "sip0.cube0.pe0.pe_dma", &m);
    sim_msg_fini(&m);
    sim_oplog_free(log);
}

Test(oplog, names_are_interned_and_outlive_the_callers_strings)
{
    struct sim_oplog *log = sim_oplog_new(NULL);
    struct sim_msg m;
    sim_msg_init(&m, SIM_MK_DMA_READ);
    int64_t n = 4;
    sim_handle_set(&m.u.dma_read.src, "hbm", 0, SIM_F32, 1, &n, "x");
    sim_handle_set(&m.u.dma_read.dst, "tcm", 0, SIM_F32, 1, &n, "y");
    char comp[32], layer[16];
    for (int i = 0; i < 4; i++) {
        snprintf(comp, sizeof(comp), "sip0.cube0.pe%d.pe_dma", i % 2);
        snprintf(layer, sizeof(layer), "layer%d", i % 2); /* the same buffer, new text */
        m.layer_id = layer;
        sim_oplog_record_start(log, NS(i), comp, &m);
        sim_oplog_record_end(log, NS(i + 1), comp, &m);
    }
    strcpy(comp, "gone");
    strcpy(layer, "gone");
    size_t k;
    struct sim_op_record *const *r = sim_oplog_records(log, &k);
    cr_assert_eq(k, 4);
    cr_assert_str_eq(r[1]->component_id, "sip0.cube0.pe1.pe_dma");
    cr_assert_str_eq(r[2]->note.layer_id, "layer0");
    cr_assert_eq(r[0]->component_id, r[2]->component_id, "one copy per distinct name");
    cr_assert_eq(r[1]->note.layer_id, r[3]->note.layer_id);
    sim_oplog_free(log);
}
