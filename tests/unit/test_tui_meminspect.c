/* The memory pane derived from a trace's events (tui/panes/meminspect.c), headless: regions
 * from op params, math operands, a spec trace's DRAM addresses. */
#include "test_tui_pane.h"
#include "tui/panes/meminspect.h"

TestSuite(tui_meminspect, .init = tui_test_locale);

Test(tui_meminspect, memory_regions_from_op_params)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_set_cursor(&v, 550);
    struct tui_meminspect *mi = tui_meminspect_new(&v);
    struct tui_canvas *c = tui_canvas_new(100, 10, true);
    /* nothing is scanned before the pane is first shown */
    cr_assert(!tui_meminspect_ops.work(mi, &v, 1000000000));
    cr_assert_eq(tui_meminspect_space_count(mi), 0u);
    render(&tui_meminspect_ops, mi, c, &v, true);
    while (tui_meminspect_ops.work(mi, &v, 1000000000))
        ;
    render(&tui_meminspect_ops, mi, c, &v, true);
    /* spaces in the order the events name them: the dma_read's hbm, then the gemm's tcm */
    cr_assert_eq(tui_meminspect_space_count(mi), 2u);
    cr_assert_str_eq(tui_meminspect_space_name(mi, 0), "hbm");
    cr_assert_str_eq(tui_meminspect_space_name(mi, 1), "tcm");
    cr_assert_eq(tui_meminspect_region_count(mi, 0), 2u); /* 0x1000 read, 0x8000 written */
    cr_assert_eq(tui_meminspect_region_count(mi, 1), 3u); /* 0x0, 0x100 read; 0x200 both */
    char *d = dump(c);
    cr_assert(strstr(d, " Memory  hbm   tcm\n"), "%s", d);
    /* hbm 0x1000: read by the dma_read over [0,100); 0x8000 written by the dma_write over
     * [510,600), live at the cursor (550) */
    cr_assert(strstr(d, "  0x000000001000  4.00 KiB "), "%s", d);
    cr_assert(strstr(d, "0..100"), "%s", d);
    cr_assert(strstr(d, "\u25cf 0x000000008000  2.00 KiB 16x32     f32"), "%s", d);
    cr_assert(strstr(d, "510..600"), "%s", d);
    cr_assert(strstr(d, "0/1   sip0.cube0.pe0.pe_dma"), "%s", d);
    tui_test_golden("memory_hbm", d);
    free(d);
    /* the tcm tab: 0x200 written by the gemm, read by the dma_write: live from 200 to 600 */
    cr_assert_eq(tui_meminspect_ops.action(mi, TUI_ACT_PAN_RIGHT, &v), TUI_RES_REDRAW);
    render(&tui_meminspect_ops, mi, c, &v, true);
    d = dump(c);
    cr_assert(strstr(d, "0x000000000200"), "%s", d);
    cr_assert(strstr(d, "200..600"), "%s", d);
    cr_assert(strstr(d, "1/1   sip0.cube0.pe0.pe_gemm"), "%s", d);
    cr_assert(strstr(d, "16x16     f32"), "%s", d);
    /* the gemm gives no byte counts: its 16x16 f16 inputs are 256 x 2 bytes each */
    cr_assert(strstr(d, "  0x000000000000     512 B 16x16     f16 "), "%s", d);
    cr_assert(strstr(d, "  0x000000000100     512 B 16x16     f16 "), "%s", d);
    tui_test_golden("memory_tcm", d);
    cr_assert_eq(tui_canvas_cell(c, 0, 4)->cp, 0x25CFu, "0x200 is live at 550");
    free(d);
    /* Enter moves the time cursor to the selected region's first access */
    tui_meminspect_ops.action(mi, TUI_ACT_DOWN, &v);
    tui_meminspect_ops.action(mi, TUI_ACT_SELECT, &v);
    cr_assert_eq(v.cursor, 200u);
    tui_canvas_free(c);
    tui_meminspect_free(mi);
    trace_model_free(m);
}

/* The details of a math op (ADR-0052 D3.4) with the given inputs, in tcm. */
static struct sim_value *math_details(const int64_t *addrs, const struct sim_value *shapes,
                                      const char *const *dtypes, size_t n)
{
    struct sim_value *d = sim_value_map();
    sim_value_map_set_take(d, "input_addrs", sim_value_int_list(addrs, n));
    sim_value_map_set_take(d, "input_shapes", sim_value_clone(shapes));
    struct sim_value *dt = sim_value_map_set_take(d, "input_dtypes", sim_value_list());
    struct sim_value *sp = sim_value_map_set_take(d, "input_spaces", sim_value_list());
    for (size_t i = 0; i < n; i++) {
        sim_value_list_push_take(dt, sim_value_str(dtypes[i]));
        sim_value_list_push_take(sp, sim_value_str("tcm"));
    }
    return d;
}

Test(tui_meminspect, memory_bytes_of_math_operands_come_from_shape_and_dtype)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube0.pe0.pe_math", TRACE_ENGINE_VE, 0);
    /* an add of an 8x4 bf16 and a 4-long i32 into an 8x4 f32 */
    struct sim_value *shapes = sim_value_list();
    sim_value_list_push_take(shapes, sim_value_int_list((int64_t[]){8, 4}, 2));
    sim_value_list_push_take(shapes, sim_value_int_list((int64_t[]){4}, 1));
    struct sim_value *d =
        math_details((int64_t[]){0x400, 0x800}, shapes, (const char *const[]){"bf16", "i32"}, 2);
    sim_value_map_set_int(d, "dst_addr", 0xc00);
    sim_value_map_set_str(d, "dst_space", "tcm");
    sim_value_map_set_take(d, "shape_out", sim_value_int_list((int64_t[]){8, 4}, 2));
    sim_value_map_set_str(d, "dtype", "f32");
    trace_model_set_details_take(m, tui_test_event(m, t, "add", TRACE_KIND_MATH, 0, 10), d);
    sim_value_free(shapes);
    /* inputs a trace may get wrong: no size is made up for them */
    shapes = sim_value_list();
    sim_value_list_push_take(shapes, sim_value_int_list((int64_t[]){-8, 4}, 2));
    sim_value_list_push_take(shapes, sim_value_int_list((int64_t[]){4}, 1));
    sim_value_list_push_take(shapes, sim_value_int_list((int64_t[]){INT64_MAX, 4}, 2));
    sim_value_list_push_take(shapes, sim_value_str("8x4"));
    d = math_details((int64_t[]){0x1000, 0x1100, 0x1200, 0x1300}, shapes,
                     (const char *const[]){"f32", "f64", "f32", "f32"}, 4);
    trace_model_set_details_take(m, tui_test_event(m, t, "add", TRACE_KIND_MATH, 20, 30), d);
    sim_value_free(shapes);
    trace_model_finish(m);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_meminspect *mi = tui_meminspect_new(&v);
    struct tui_canvas *c = tui_canvas_new(100, 10, true);
    render(&tui_meminspect_ops, mi, c, &v, true);
    while (tui_meminspect_ops.work(mi, &v, 1000000000))
        ;
    cr_assert_eq(tui_meminspect_space_count(mi), 1u);
    cr_assert_eq(tui_meminspect_region_count(mi, 0), 7u);
    render(&tui_meminspect_ops, mi, c, &v, true);
    char *out = dump(c);
    cr_assert(strstr(out, "0x000000000400      64 B 8x4       bf16"), "%s", out); /* 32 x 2 */
    cr_assert(strstr(out, "0x000000000800      16 B 4         i32"), "%s", out);  /* 4 x 4 */
    cr_assert(strstr(out, "0x000000000c00     128 B 8x4       f32"), "%s", out);  /* 32 x 4 */
    cr_assert(strstr(out, "0x000000001000         - "), "%s", out); /* a negative dimension */
    cr_assert(strstr(out, "0x000000001100         - "), "%s", out); /* an unknown dtype */
    cr_assert(strstr(out, "0x000000001200         - "), "%s", out); /* too big to be true */
    cr_assert(strstr(out, "0x000000001300         - "), "%s", out); /* not a list */
    free(out);
    tui_canvas_free(c);
    tui_meminspect_free(mi);
    trace_model_free(m);
}

Test(tui_meminspect, memory_of_a_spec_trace_comes_from_dram_addresses_and_mem_events)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint64_t e = tui_test_event(m, t, "DMA_LOAD_TILE", TRACE_KIND_MEMORY, 8000, 8200);
    struct sim_value *d = sim_value_map();
    sim_value_map_set_str(d, "direction", "read");
    sim_value_map_set_int(d, "bytes", 2048);
    sim_value_map_set_int(d, "dram_addr", 120000);
    sim_value_map_set_int(d, "spm_bank", 2);
    sim_value_map_set_int(d, "spm_offset", 8192);
    trace_model_set_details_take(m, e, d);
    struct trace_mem_access a = {
        .cycle = 8010, .addr = 4096, .bytes = 32, .track = t, .write = true};
    a.mem_type = trace_model_intern(m, "DRAM", 4);
    trace_model_add_mem_access(m, &a);
    trace_model_finish(m);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_meminspect *mi = tui_meminspect_new(&v);
    struct tui_canvas *c = tui_canvas_new(100, 8, true);
    render(&tui_meminspect_ops, mi, c, &v, true);
    while (tui_meminspect_ops.work(mi, &v, 1000000000))
        ;
    cr_assert_eq(tui_meminspect_space_count(mi), 2u);
    cr_assert_str_eq(tui_meminspect_space_name(mi, 0), "dram");
    cr_assert_str_eq(tui_meminspect_space_name(mi, 1), "spm");
    cr_assert_eq(tui_meminspect_region_count(mi, 0), 2u, "120000 (the DMA) and 4096 (access)");
    render(&tui_meminspect_ops, mi, c, &v, true);
    char *out = dump(c);
    cr_assert(strstr(out, "0x00000001d4c0  2.00 KiB"), "%s", out); /* 120000 */
    cr_assert(strstr(out, "0x000000001000      32 B"), "%s", out);
    free(out);
    tui_canvas_free(c);
    tui_meminspect_free(mi);
    trace_model_free(m);
}

Test(tui_meminspect, memory_pane_says_when_there_are_no_addresses)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    tui_test_event(m, t, "TE_GEMM_TILE", TRACE_KIND_GEMM, 0, 10);
    trace_model_finish(m);
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_meminspect *mi = tui_meminspect_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 6, true);
    render(&tui_meminspect_ops, mi, c, &v, false);
    while (tui_meminspect_ops.work(mi, &v, 1000000000))
        ;
    render(&tui_meminspect_ops, mi, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "no memory addresses in this trace's events"), "%s", d);
    free(d);
    tui_canvas_free(c);
    tui_meminspect_free(mi);
    trace_model_free(m);
}
