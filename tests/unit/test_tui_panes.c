/*
 * The summary, details, memory and help panes, headless, on the fixture model whose
 * figures are worked out by hand in each test.
 */
#include "test_tui_util.h"
#include "tui/details.h"
#include "tui/help.h"
#include "tui/meminspect.h"
#include "tui/summary.h"

TestSuite(tui_panes, .init = tui_test_locale);

static char *dump(const struct tui_canvas *c)
{
    return tui_canvas_dump(c, false);
}

static void render(const struct tui_pane_ops *ops, void *self, struct tui_canvas *c,
                   struct tui_view *v, bool focused)
{
    if (ops->sync)
        ops->sync(self, v);
    ops->render(self, c, (struct tui_rect){0, 0, c->w, c->h}, v, focused);
}

/* The index of the first event named op. */
static uint64_t event_named(const struct trace_model *m, const char *op)
{
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        if (strcmp(trace_model_str(m, trace_model_event(m, i)->op), op) == 0)
            return i;
    cr_assert_fail("no event %s", op);
    return 0;
}

Test(tui_panes, summary_figures)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_summary *s = tui_summary_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 20, true);
    render(&tui_summary_ops, s, c, &v, false);
    char *d = dump(c);
    /* 1000 cycles. DMA busy: pe0 [0,200) and [510,600), pe1 inside [0,110): union 290.
     * TE 0: the gemm [200,500), 300. VE 0: ten 5-cycle ops and [800,1000): 250. */
    cr_assert(strstr(d, "utilization of 1000 cyc (1.00 us)"), "%s", d);
    cr_assert(strstr(d, " 29.0%"), "%s", d);
    cr_assert(strstr(d, "at most 2 at once"), "%s", d);
    cr_assert(strstr(d, "TE 0"), "%s", d);
    cr_assert(strstr(d, " 30.0%"), "%s", d);
    cr_assert(strstr(d, "VE 0"), "%s", d);
    cr_assert(strstr(d, " 25.0%"), "%s", d);
    /* DRAM: the dma_read's 4096 bytes from HBM, the dma_write's 2048 to HBM; in one
     * 1024-cycle window: 6144 / 1024 = 6 B/cycle max, 6144 / 1000 = 6.14 mean */
    cr_assert(strstr(d, "DRAM read 4.00 KiB  write 2.00 KiB"), "%s", d);
    cr_assert(strstr(d, "BW   mean 6.14 B/cyc (6.1 GB/s)"), "%s", d);
    cr_assert(strstr(d, "min 6  max 6  peak 64 (max is 9% of it)"), "%s", d);
    /* busiest: pe0.pe_gemm 30%, pe0.pe_dma 29%, pe1.pe_math 25%, pe1.pe_dma 10% */
    const char *g = strstr(d, "sip0.cube0.pe0.pe_gemm"), *a = strstr(d, "sip0.cube0.pe0.pe_dma");
    const char *mm = strstr(d, "sip0.cube0.pe1.pe_math"), *b = strstr(d, "sip0.cube0.pe1.pe_dma");
    cr_assert(g && a && mm && b && g < a && a < mm && mm < b, "%s", d);
    /* tokens: prefill [0,400); decode [400,700) and [700,1000) */
    cr_assert(strstr(d, "prefill latency 400 cyc (400 ns)"), "%s", d);
    cr_assert(strstr(d, "decode 2 tokens, avg 300 cyc (300 ns)"), "%s", d);
    tui_test_golden("summary", d);
    free(d);
    tui_canvas_free(c);
    tui_summary_free(s);
    trace_model_free(m);
}

Test(tui_panes, summary_scrolls_when_focused)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_summary *s = tui_summary_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 6, true);
    render(&tui_summary_ops, s, c, &v, true);
    char *before = dump(c);
    cr_assert_eq(tui_summary_ops.action(s, TUI_ACT_DOWN, &v), TUI_RES_REDRAW);
    render(&tui_summary_ops, s, c, &v, true);
    char *after = dump(c);
    cr_assert_str_neq(before, after);
    cr_assert_eq(tui_summary_ops.action(s, TUI_ACT_ZOOM_IN, &v), TUI_RES_IGNORED);
    for (int i = 0; i < 50; i++)
        tui_summary_ops.action(s, TUI_ACT_DOWN, &v);
    render(&tui_summary_ops, s, c, &v, true);
    char *end = dump(c);
    cr_assert(strstr(end, "decode 2 tokens"), "scrolled to the last line: %s", end);
    cr_assert_eq(tui_summary_ops.action(s, TUI_ACT_DOWN, &v), TUI_RES_HANDLED, "no further");
    free(before), free(after), free(end);
    tui_canvas_free(c);
    tui_summary_free(s);
    trace_model_free(m);
}

Test(tui_panes, details_of_an_op)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_select(&v, event_named(m, "gemm_f16"));
    struct tui_details *dt = tui_details_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 22, true);
    render(&tui_details_ops, dt, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, " Details: selected op"), "%s", d);
    cr_assert(strstr(d, "op        gemm_f16"), "%s", d);
    cr_assert(strstr(d, "on        sip0.cube0.pe0.pe_gemm"), "%s", d);
    cr_assert(strstr(d, "kind      gemm, engine TE 0"), "%s", d);
    cr_assert(strstr(d, "cycles    200 (200 ns) .. 500 (500 ns)"), "%s", d);
    cr_assert(strstr(d, "duration  300 (300 ns)"), "%s", d);
    /* every param, addresses in hex too */
    cr_assert(strstr(d, "src_b_addr: 0x100 (256)"), "%s", d);
    cr_assert(strstr(d, "shape_a: [16, 16]"), "%s", d);
    cr_assert(strstr(d, "dtype_out: f32"), "%s", d);
    cr_assert(strstr(d, "dst_space: tcm"), "%s", d);
    tui_test_golden("details_gemm", d);
    free(d);
    tui_canvas_free(c);
    tui_details_free(dt);
    trace_model_free(m);
}

Test(tui_panes, details_without_an_op_show_the_cursor_time)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_set_cursor(&v, 750);
    struct tui_details *dt = tui_details_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 20, true);
    render(&tui_details_ops, dt, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "no op at the cursor"), "%s", d);
    cr_assert(strstr(d, "cursor    750 (750 ns)"), "%s", d);
    cr_assert(strstr(d, "token     DECODE #1, cycles 700 .. 1000"), "%s", d);
    cr_assert(strstr(d, "marker    PREFILL_DONE at 700"), "%s", d);
    free(d);
    /* the op under the cursor, when there is one */
    tui_view_hover(&v, event_named(m, "dma_write"));
    render(&tui_details_ops, dt, c, &v, false);
    d = dump(c);
    cr_assert(strstr(d, " Details: op under the cursor"), "%s", d);
    cr_assert(strstr(d, "dst_addr: 0x8000 (32768)"), "%s", d);
    free(d);
    tui_canvas_free(c);
    tui_details_free(dt);
    trace_model_free(m);
}

Test(tui_panes, details_of_hostile_strings_are_escaped)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "DMA 0", TRACE_ENGINE_DMA, 0);
    uint64_t e = tui_test_event(m, t, "op", TRACE_KIND_MEMORY, 0, 10);
    struct sim_value *d = sim_value_map();
    sim_value_map_set_str(d, "\x1b]0;key\x07", "\x1b]52;c;eA==\x07");
    struct sim_value *inner = sim_value_map_set_take(d, "nested", sim_value_map());
    sim_value_map_set_str(inner, "line", "a\r\nb");
    trace_model_set_details_take(m, e, d);
    trace_model_finish(m);
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_select(&v, e);
    struct tui_details *dt = tui_details_new(&v);
    struct tui_canvas *c = tui_canvas_new(60, 14, true);
    render(&tui_details_ops, dt, c, &v, false);
    char *out = dump(c);
    cr_assert_null(strchr(out, 0x1b));
    cr_assert_null(strchr(out, '\r'));
    cr_assert(strstr(out, "\\e]0;key\\x07: \\e]52;c;eA==\\x07"), "%s", out);
    cr_assert(strstr(out, "nested:"), "%s", out);
    cr_assert(strstr(out, "  line: a\\r\\nb"), "%s", out);
    free(out);
    tui_canvas_free(c);
    tui_details_free(dt);
    trace_model_free(m);
}

Test(tui_panes, memory_regions_from_op_params)
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

Test(tui_panes, memory_bytes_of_math_operands_come_from_shape_and_dtype)
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

Test(tui_panes, memory_of_a_spec_trace_comes_from_dram_addresses_and_mem_events)
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

Test(tui_panes, memory_pane_says_when_there_are_no_addresses)
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

Test(tui_panes, help_lists_every_key)
{
    struct tui_canvas *c = tui_canvas_new(80, 120, true);
    int visible;
    int n = tui_help_render(c, (struct tui_rect){0, 0, 80, 120}, 0, false, &visible);
    char *d = dump(c);
    size_t na;
    const struct tui_action_info *acts = tui_keymap_actions(&na);
    for (size_t i = 0; i < na; i++) {
        char keys[64];
        tui_keymap_keys(acts[i].action, keys, sizeof(keys));
        if (acts[i].live)
            cr_assert_null(strstr(d, acts[i].help), "live key listed for a saved trace");
        else
            cr_assert(strstr(d, acts[i].help), "help misses '%s'", acts[i].help);
    }
    cr_assert(strstr(d, "│ + =               zoom in around the cursor"), "%s", d);
    cr_assert(strstr(d, "│ q                 quit"), "%s", d);
    cr_assert_null(strstr(d, "pause or resume"), "no simulation keys for a saved trace");
    cr_assert_null(strstr(d, "│ space "), "no simulation keys for a saved trace");
    cr_assert_gt(n, 40);
    tui_test_golden("help", d);
    free(d);
    /* a live source lists the simulation keys */
    tui_help_render(c, (struct tui_rect){0, 0, 80, 120}, 0, true, &visible);
    d = dump(c);
    cr_assert(strstr(d, "│ space             pause or resume"), "%s", d);
    cr_assert(strstr(d, "│ s                 step one event"), "%s", d);
    free(d);
    tui_canvas_free(c);
}
