/* The details pane (tui/panes/details.c), headless, on the fixture model. */
#include "test_tui_pane.h"
#include "tui/panes/details.h"

TestSuite(tui_details, .init = tui_test_locale);

Test(tui_details, details_of_an_op)
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

Test(tui_details, details_without_an_op_show_the_cursor_time)
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
    cr_assert(strstr(d, "token     DECODE #1 (token_index 1), cycles 700 .. 1000"), "%s", d);
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

Test(tui_details, details_of_hostile_strings_are_escaped)
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

/* A TileToken stage (ADR-0052 D5) in flight and finished: the same kind line, the
 * record's op_kind ("unknown", D3.7) and what engine work the stage is, and every param
 * known at its start. */
Test(tui_details, a_tiletoken_stage_in_flight_and_finished)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "sip0.cube1.pe0.pe_dma", TRACE_ENGINE_DMA, 4);
    struct trace_event ev = {.start = 100,
                             .end = 100,
                             .track = t,
                             .cmdq_id = 17,
                             .op_kind = TRACE_KIND_UNKNOWN,
                             .flags = TRACE_EV_INFLIGHT};
    ev.op = trace_model_intern(m, "TileToken/DMA_READ", 18);
    uint64_t e = trace_model_add_event(m, &ev);
    struct sim_value *p = sim_value_map();
    sim_value_map_set_str(p, "stage_type", "DMA_READ");
    sim_value_map_set_str(p, "src_space", "hbm");
    sim_value_map_set_int(p, "src_addr", 0);
    sim_value_map_set_str(p, "dst_space", "tcm");
    sim_value_map_set_int(p, "dst_addr", 8192);
    sim_value_map_set_int(p, "nbytes", 4096);
    trace_model_set_details_take(m, e, p);
    trace_model_set_now(m, 150);
    trace_model_finish(m);
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_select(&v, e);
    struct tui_details *dt = tui_details_new(&v);
    struct tui_canvas *c = tui_canvas_new(90, 20, true);
    render(&tui_details_ops, dt, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "op        TileToken/DMA_READ"), "%s", d);
    cr_assert(strstr(d, "kind      unknown (TileToken stage DMA_READ: memory), engine DMA 4, "
                        "in flight"),
              "%s", d);
    cr_assert(strstr(d, "cycles    100 .. 150 (now)"), "%s", d);
    cr_assert(strstr(d, "stage_type: DMA_READ"), "%s", d);
    cr_assert(strstr(d, "dst_addr: 0x2000 (8192)"), "%s", d);
    cr_assert(strstr(d, "nbytes: 4096"), "%s", d);
    cr_assert_null(strstr(d, "no details"), "%s", d);
    free(d);

    trace_model_end_event(m, e, 244);
    trace_model_finish(m);
    render(&tui_details_ops, dt, c, &v, false);
    d = dump(c);
    cr_assert(strstr(d, "kind      unknown (TileToken stage DMA_READ: memory), engine DMA 4\n"),
              "%s", d);
    cr_assert(strstr(d, "stage_type: DMA_READ"), "%s", d);
    free(d);
    tui_canvas_free(c);
    tui_details_free(dt);
    trace_model_free(m);
}

Test(tui_details, a_tiletoken_stage_without_details_takes_its_stage_from_the_name)
{
    struct trace_model *m = trace_model_new();
    uint32_t t = trace_model_track(m, "TE 0", TRACE_ENGINE_TE, 0);
    uint64_t e = tui_test_event(m, t, "TileToken/GEMM", TRACE_KIND_UNKNOWN, 0, 10);
    uint64_t x = tui_test_event(m, t, "TileToken/PREFETCH", TRACE_KIND_UNKNOWN, 10, 20);
    trace_model_finish(m);
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_select(&v, e);
    struct tui_details *dt = tui_details_new(&v);
    struct tui_canvas *c = tui_canvas_new(80, 12, true);
    render(&tui_details_ops, dt, c, &v, false);
    char *d = dump(c);
    cr_assert(strstr(d, "kind      unknown (TileToken stage GEMM: gemm), engine TE 0"), "%s", d);
    free(d);
    tui_view_select(&v, x);
    render(&tui_details_ops, dt, c, &v, false);
    d = dump(c);
    cr_assert(strstr(d, "kind      unknown (TileToken stage PREFETCH), engine TE 0"), "%s", d);
    free(d);
    tui_canvas_free(c);
    tui_details_free(dt);
    trace_model_free(m);
}

Test(tui_details, a_long_value_wraps_in_a_narrow_pane)
{
    struct trace_model *m = tui_test_model();
    struct tui_view v;
    tui_view_init(&v, m, true);
    tui_view_select(&v, event_named(m, "gemm_f16"));
    struct tui_details *dt = tui_details_new(&v);
    struct tui_canvas *c = tui_canvas_new(30, 40, true);
    render(&tui_details_ops, dt, c, &v, false);
    char *d = dump(c);
    /* "cycles    200 (200 ns) .. 500 (500 ns)" is 38 columns: its end on the next line, under
     * the value, nothing cut */
    cr_assert(strstr(d, "cycles    200 (200 ns) .. 500\n"), "%s", d);
    cr_assert(strstr(d, "\n           (500 ns)"), "%s", d);
    cr_assert_null(strstr(d, "\xe2\x80\xa6"), "no ellipsis: %s", d);
    free(d);
    tui_canvas_free(c);
    tui_details_free(dt);
    trace_model_free(m);
}
