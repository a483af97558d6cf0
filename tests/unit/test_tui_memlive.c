/*
 * The live memory inspector headlessly: values formatted for each dtype, the list of a
 * space's tensors (address as PE window and PA, shape, dtype, bytes, last writer and its
 * time), the value table and its hex view, and a redraw after a write (the store's
 * generation); a pattern region of gigabytes as one row whose values show without
 * materialising it.
 */
#include "sim/chip/chip.h"
#include "sim/data/dtype.h"
#include "sim/data/memstore.h"
#include "sim/data/tensor.h"
#include "trace/model/model.h"
#include "tui/panes/memlive.h"
#include "tui/source/memview.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *fmt(enum sim_dtype t, const void *bytes)
{
    static char buf[64];
    return tui_memlive_format(t, bytes, 0, buf, sizeof(buf));
}

Test(memlive, values_are_formatted_for_their_dtype)
{
    float f = 1.5f;
    cr_assert_str_eq(fmt(SIM_F32, &f), "1.5");
    f = -3.0e38f;
    cr_assert_str_eq(fmt(SIM_F32, &f), "-3e+38");
    uint16_t h = 0x3C00; /* 1.0 in IEEE half */
    cr_assert_str_eq(fmt(SIM_F16, &h), "1");
    h = 0xC500; /* -5.0 */
    cr_assert_str_eq(fmt(SIM_F16, &h), "-5");
    uint16_t b = 0x3FC0; /* 1.5 in bfloat16 */
    cr_assert_str_eq(fmt(SIM_BF16, &b), "1.5");
    int8_t i8 = -3;
    cr_assert_str_eq(fmt(SIM_I8, &i8), "-3");
    uint8_t u8 = 250;
    cr_assert_str_eq(fmt(SIM_U8, &u8), "250");
    int16_t i16 = -30000;
    cr_assert_str_eq(fmt(SIM_I16, &i16), "-30000");
    uint16_t u16 = 60000;
    cr_assert_str_eq(fmt(SIM_U16, &u16), "60000");
    int32_t i32 = -2000000000;
    cr_assert_str_eq(fmt(SIM_I32, &i32), "-2000000000");
    uint32_t u32 = 4000000000u;
    cr_assert_str_eq(fmt(SIM_U32, &u32), "4000000000");
    int64_t i64 = INT64_MIN + 1; /* beyond a double's 53 bits: exact */
    cr_assert_str_eq(fmt(SIM_I64, &i64), "-9223372036854775807");
    uint8_t t = 7;
    cr_assert_str_eq(fmt(SIM_BOOL, &t), "1");
    /* element i of an array */
    float v[3] = {0.25f, 2, 1e-7f};
    char buf[32];
    cr_assert_str_eq(tui_memlive_format(SIM_F32, v, 2, buf, sizeof(buf)), "1e-07");
}

static struct sim_tensor *f32_tensor(int64_t rows, int64_t cols, float first)
{
    int64_t shape[2] = {rows, cols};
    struct sim_tensor *t = sim_tensor_new(SIM_F32, 2, shape);
    for (size_t i = 0; i < sim_tensor_numel(t); i++)
        ((float *)sim_tensor_data(t))[i] = first + (float)i;
    return t;
}

static char *render(struct tui_memlive *p, struct tui_view *v, int w, int h)
{
    struct tui_canvas *c = tui_canvas_new(w, h, true);
    tui_memlive_ops.render(p, c, (struct tui_rect){0, 0, w, h}, v, true);
    char *d = tui_canvas_dump(c, false);
    tui_canvas_free(c);
    return d;
}

Test(memlive, lists_a_space_shows_values_and_follows_writes)
{
    struct sim_memstore *store = sim_memstore_new();
    struct trace_model *m = trace_model_new();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_memview *mem = tui_memview_store_new(store);
    struct tui_memlive *p = tui_memlive_new(mem, &v);

    char *d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "nothing in the memory store yet"), "%s", d);
    free(d);

    uint64_t addr = sim_chip_dev_addr(1, 0x1000); /* PE 1's window, PA 0x1000 */
    struct sim_tensor *t = f32_tensor(2, 3, 0);
    struct sim_memstore_writer w = {"dma_write", 1234.0};
    sim_memstore_write(store, "hbm", addr, t, &w);
    sim_tensor_unref(t);
    t = f32_tensor(1, 4, 0);
    sim_memstore_write(store, "tcm", 0x40, t, NULL);
    sim_tensor_unref(t);
    cr_assert(tui_memlive_ops.sync(p, &v), "a write: redraw");

    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "hbm 1") && strstr(d, "tcm 1"), "a tab per space, with counts: %s", d);
    cr_assert(strstr(d, "p1:0x0000001000"), "%s", d);
    cr_assert(strstr(d, "(2, 3)") && strstr(d, "f32") && strstr(d, "24 B"), "%s", d);
    cr_assert(strstr(d, "dma_write") && strstr(d, "1.23 us"), "the last writer and when: %s", d);
    free(d);
    cr_assert_not(tui_memlive_ops.sync(p, &v), "nothing changed");

    /* Enter: the values, in one row at this width */
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_SELECT, &v), TUI_RES_REDRAW);
    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "hbm p1:0x0000001000 (2, 3) f32 24 B, written by dma_write"), "%s", d);
    cr_assert(strstr(d, "[0]            0            1            2            3            4"),
              "%s", d);
    free(d);

    /* written again (a step of the simulation): the table shows the new values */
    t = f32_tensor(2, 3, 10);
    struct sim_memstore_writer w2 = {"tl_store", 2000.0};
    sim_memstore_write(store, "hbm", addr, t, &w2);
    sim_tensor_unref(t);
    cr_assert(tui_memlive_ops.sync(p, &v));
    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "written by tl_store at 2.00 us"), "%s", d);
    cr_assert(strstr(d, "[0]           10           11           12"), "%s", d);
    free(d);

    /* x: the bytes; 10.0f is 0x41200000, little-endian */
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_HEX, &v), TUI_RES_REDRAW);
    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, " 0: 00 00 20 41 00 00 30 41"), "%s", d);
    free(d);

    /* Esc: back to the list; Right: the next space */
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_CLEAR, &v), TUI_RES_REDRAW);
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_PAN_RIGHT, &v), TUI_RES_REDRAW);
    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "p0:0x0000000040") && strstr(d, "(1, 4)"), "%s", d);
    free(d);
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_CLEAR, &v), TUI_RES_IGNORED,
                 "Esc in the list is the app's");

    tui_memlive_free(p);
    tui_memview_free(mem);
    trace_model_free(m);
    sim_memstore_free(store);
}

Test(memlive, a_pattern_region_is_one_row_and_its_values_cost_nothing)
{
    struct sim_memstore *store = sim_memstore_new();
    struct trace_model *m = trace_model_new();
    struct tui_view v;
    tui_view_init(&v, m, true);
    struct tui_memview *mem = tui_memview_store_new(store);
    struct tui_memlive *p = tui_memlive_new(mem, &v);

    int64_t shape[] = {1 << 16, 1 << 16}; /* 8 GiB of f16 1.0 */
    struct sim_fill f;
    cr_assert_eq(sim_fill_from_value(SIM_F16, 1.0, &f), 0);
    struct sim_tensor *t = sim_tensor_new_fill(SIM_F16, 2, shape, &f);
    sim_memstore_write(store, "hbm", 0x1000, t, &(struct sim_memstore_writer){"MemoryWrite", 0});
    struct sim_fill z;
    sim_fill_set(&z, (const unsigned char[]){0}, 1);
    int64_t n = 1 << 20;
    struct sim_tensor *zt = sim_tensor_new_fill(SIM_F32, 1, &n, &z);
    sim_memstore_write(store, "hbm", 0x100000000, zt,
                       &(struct sim_memstore_writer){"MemoryWrite", 0});
    sim_tensor_unref(zt);

    char *d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "hbm 2"), "two rows: %s", d);
    cr_assert(strstr(d, "(65536, 65536)") && strstr(d, "f16") && strstr(d, "8.00 GiB"), "%s", d);
    cr_assert(strstr(d, "fill 0x3c00"), "the pattern as the writer: %s", d);
    cr_assert(strstr(d, "pattern zero"), "%s", d);
    free(d);

    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_SELECT, &v), TUI_RES_REDRAW);
    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, "written by MemoryWrite at 0 ns, fill 0x3c00"), "%s", d);
    cr_assert(strstr(d, "0]            1            1            1"), "%s", d);
    free(d);
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_HEX, &v), TUI_RES_REDRAW);
    cr_assert_eq(tui_memlive_ops.action(p, TUI_ACT_END, &v), TUI_RES_REDRAW);
    d = render(p, &v, 100, 12);
    cr_assert(strstr(d, ": 00 3c 00 3c"), "the last bytes: %s", d);
    free(d);
    cr_assert(sim_tensor_is_lazy(t), "nothing was materialised");
    sim_tensor_unref(t);

    tui_memlive_free(p);
    tui_memview_free(mem);
    trace_model_free(m);
    sim_memstore_free(store);
}
