/*
 * The live memory inspector (see memlive.h). The list and the values are read from the
 * memory store at each redraw; the pane keeps only what the user looks at (space, row,
 * the tensor shown by its address, scroll positions).
 */
#include "tui/memlive.h"

#include "sim/chip/chip.h"
#include "sim/data/dtype.h"
#include "sim/data/memstore.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tui_memlive {
    struct sim_memstore *store; /* borrowed */
    uint64_t gen_drawn;         /* store generation last drawn */
    size_t tab;                 /* space shown */
    size_t sel, top;            /* list: selected row, first row shown */
    bool values;                /* showing the values of one tensor */
    bool hex;                   /* values as raw bytes */
    uint64_t addr;              /* the tensor shown, by address in the tab's space */
    size_t vtop;                /* first row of the value table */
    int rows_visible;
    size_t vrows; /* rows of the value table at the last draw */
    bool dirty;
};

struct tui_memlive *tui_memlive_new(struct sim_memstore *store, struct tui_view *v)
{
    (void)v;
    struct tui_memlive *p = sim_xcalloc(1, sizeof(*p));
    p->store = store;
    p->gen_drawn = UINT64_MAX;
    return p;
}

void tui_memlive_free(struct tui_memlive *p)
{
    free(p);
}

/* ---- values ------------------------------------------------------------------------------- */

char *tui_memlive_format(int dtype, const void *data, size_t i, char *buf, size_t size)
{
    const unsigned char *b =
        (const unsigned char *)data + i * sim_dtype_size((enum sim_dtype)dtype);
    union {
        float f;
        uint16_t u16;
        int16_t i16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
    } x;
    switch ((enum sim_dtype)dtype) {
    case SIM_F32:
        memcpy(&x.f, b, 4);
        snprintf(buf, size, "%.6g", (double)x.f);
        break;
    case SIM_F16:
        memcpy(&x.u16, b, 2);
        snprintf(buf, size, "%.6g", (double)sim_f16_to_f32(x.u16));
        break;
    case SIM_BF16:
        memcpy(&x.u16, b, 2);
        snprintf(buf, size, "%.6g", (double)sim_bf16_to_f32(x.u16));
        break;
    case SIM_I8: snprintf(buf, size, "%d", (int)(signed char)b[0]); break;
    case SIM_U8: snprintf(buf, size, "%u", (unsigned)b[0]); break;
    case SIM_I16:
        memcpy(&x.i16, b, 2);
        snprintf(buf, size, "%d", (int)x.i16);
        break;
    case SIM_U16:
        memcpy(&x.u16, b, 2);
        snprintf(buf, size, "%u", (unsigned)x.u16);
        break;
    case SIM_I32:
        memcpy(&x.i32, b, 4);
        snprintf(buf, size, "%" PRId32, x.i32);
        break;
    case SIM_U32:
        memcpy(&x.u32, b, 4);
        snprintf(buf, size, "%" PRIu32, x.u32);
        break;
    case SIM_I64:
        memcpy(&x.i64, b, 8);
        snprintf(buf, size, "%" PRId64, x.i64);
        break;
    case SIM_BOOL: snprintf(buf, size, "%d", b[0] != 0); break;
    default: snprintf(buf, size, "?"); break;
    }
    return buf;
}

/* Width of a value cell for dtype: the widest value it can format, plus a space. */
static int cell_width(enum sim_dtype t)
{
    switch (t) {
    case SIM_I8: return 5;
    case SIM_U8: return 4;
    case SIM_I16: return 7;
    case SIM_U16: return 6;
    case SIM_I32: return 12;
    case SIM_U32: return 11;
    case SIM_I64: return 21;
    case SIM_BOOL: return 2;
    default: return 13; /* "-1.23457e+38" */
    }
}

/* ---- the store ---------------------------------------------------------------------------- */

static const char *space_name(const struct tui_memlive *p)
{
    size_t n = sim_memstore_space_count(p->store);
    return p->tab < n ? sim_memstore_space_name(p->store, p->tab) : NULL;
}

/* "p1:0x000000001000": the PE window and the PA of a device address (sim/chip/chip.h). */
static void fmt_addr(uint64_t a, char *buf, size_t size)
{
    snprintf(buf, size, "p%d:0x%010" PRIx64, sim_chip_addr_pe(a), sim_chip_addr_pa(a));
}

static void fmt_time(double ns, char *buf, size_t size)
{
    if (isnan(ns))
        snprintf(buf, size, "-");
    else
        tui_fmt_ns(buf, size, ns);
}

static void fmt_shape(const struct sim_tensor *t, char *buf, size_t size)
{
    sim_shape_format(t->ndim, t->shape, buf, size);
}

/* The pattern of a pattern region ("pattern zero", "fill 0x3c00") into buf, or NULL when
 * the entry is an ordinary tensor (or its pattern has been materialised since). */
static const char *fmt_pattern(const struct sim_memstore_entry *x, char *buf, size_t size)
{
    struct sim_fill f;
    if (!x->pattern || !sim_tensor_pattern(x->tensor, &f))
        return NULL;
    return sim_fill_format(&f, buf, size);
}

/* ---- drawing ------------------------------------------------------------------------------ */

static void draw_tabs(struct tui_memlive *p, struct tui_canvas *c, struct tui_rect r, bool focused)
{
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    int x = r.x + tui_canvas_text(c, r.x, r.y, r.w, ts, " Memory (live) ", 0);
    size_t n = sim_memstore_space_count(p->store);
    for (size_t i = 0; i < n && x < r.x + r.w; i++) {
        const char *name = sim_memstore_space_name(p->store, i);
        char label[64];
        snprintf(label, sizeof(label), " %.40s %zu ", name, sim_memstore_space_len(p->store, name));
        x += tui_canvas_text(c, x, r.y, r.x + r.w - x,
                             i == p->tab ? TUI_STYLE_TAB_ACTIVE : TUI_STYLE_TAB, label,
                             TUI_TEXT_UNTRUSTED) +
             1;
    }
}

static void draw_list(struct tui_memlive *p, struct tui_canvas *c, struct tui_rect r, bool focused)
{
    const char *space = space_name(p);
    size_t n = 0;
    struct sim_memstore_entry *e = space ? sim_memstore_entries(p->store, space, &n) : NULL;
    if (!n) {
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        "nothing in the memory store yet", TUI_TEXT_ELLIPSIS);
        free(e);
        return;
    }
    bool wide = r.w >= 72;
    char head[160];
    snprintf(head, sizeof(head), " %-16s %-14s %-5s %9s  %s", "address", "shape", "dtype", "bytes",
             wide ? "last writer       at" : "writer");
    if (r.h > 1)
        tui_canvas_text(c, r.x, r.y + 1, r.w, TUI_STYLE_DIM, head, TUI_TEXT_ELLIPSIS);
    p->rows_visible = r.h - 2;
    if (p->sel >= n)
        p->sel = n - 1;
    if (p->rows_visible > 0) {
        if (p->sel < p->top)
            p->top = p->sel;
        if (p->sel >= p->top + (size_t)p->rows_visible)
            p->top = p->sel - (size_t)p->rows_visible + 1;
    }
    p->addr = e[p->sel].addr;
    for (int k = 0; k < p->rows_visible && p->top + (size_t)k < n; k++) {
        size_t row = p->top + (size_t)k;
        const struct sim_memstore_entry *x = &e[row];
        int y = r.y + 2 + k;
        enum tui_style st =
            row == p->sel ? (focused ? TUI_STYLE_SELECTION : TUI_STYLE_VALUE) : TUI_STYLE_NORMAL;
        tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
        char addr[40], shape[48], bytes[24], t[24], line[200];
        fmt_addr(x->addr, addr, sizeof(addr));
        fmt_shape(x->tensor, shape, sizeof(shape));
        tui_fmt_bytes(bytes, sizeof(bytes), (double)x->tensor->nbytes);
        fmt_time(x->t_ns, t, sizeof(t));
        int used = snprintf(line, sizeof(line), " %-16s %-14.14s %-5s %9s  ", addr, shape,
                            sim_dtype_name(x->tensor->dtype), bytes);
        tui_canvas_text(c, r.x, y, r.w, st, line, 0);
        char who[96], pat[48];
        /* a pattern region: one row, its pattern as the writer */
        const char *by = fmt_pattern(x, pat, sizeof(pat));
        if (!by)
            by = x->op ? x->op : "-";
        snprintf(who, sizeof(who), wide ? "%-16.16s  %s" : "%s", by, t);
        tui_canvas_text(c, r.x + used, y, r.w - used, st, who,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
    free(e);
}

static void draw_values(struct tui_memlive *p, struct tui_canvas *c, struct tui_rect r)
{
    const char *space = space_name(p);
    struct sim_tensor *t = space ? sim_memstore_get(p->store, space, p->addr) : NULL;
    if (!t) {
        p->values = false;
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        "this tensor is no longer in the store (Esc: the list)", TUI_TEXT_ELLIPSIS);
        return;
    }
    /* the line about the tensor: where, what, who wrote it */
    char addr[40], shape[48], bytes[24], t_at[24], line[320];
    fmt_addr(p->addr, addr, sizeof(addr));
    fmt_shape(t, shape, sizeof(shape));
    tui_fmt_bytes(bytes, sizeof(bytes), (double)t->nbytes);
    size_t n = 0;
    struct sim_memstore_entry *e = sim_memstore_entries(p->store, space, &n);
    const char *op = NULL, *pattern = NULL;
    char pat[48];
    double when = NAN;
    for (size_t i = 0; i < n; i++)
        if (e[i].addr == p->addr) {
            op = e[i].op, when = e[i].t_ns;
            pattern = fmt_pattern(&e[i], pat, sizeof(pat));
        }
    fmt_time(when, t_at, sizeof(t_at));
    snprintf(line, sizeof(line), " %s %s %s %s %s, written by %s at %s%s%s  (%s; Esc: list)", space,
             addr, shape, sim_dtype_name(t->dtype), bytes, op ? op : "-", t_at, pattern ? ", " : "",
             pattern ? pattern : "", p->hex ? "x: values" : "x: hex");
    free(e);
    if (r.h > 1)
        tui_canvas_text(c, r.x, r.y + 1, r.w, TUI_STYLE_VALUE, line,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    p->rows_visible = r.h - 2;
    size_t count = p->hex ? t->nbytes : sim_tensor_numel(t);
    /* row label "[     123] " then as many cells as fit */
    char lab[32];
    int lw = snprintf(lab, sizeof(lab), "%zu", count ? count - 1 : 0) + 3;
    int cw = p->hex ? 3 : cell_width(t->dtype);
    size_t per = (size_t)((r.w - lw - 1) / cw);
    if (p->hex && per >= 16)
        per = per / 16 * 16; /* whole lines of 16 bytes */
    else if (p->hex && per >= 8)
        per = 8;
    if (per < 1)
        per = 1;
    size_t rows = (count + per - 1) / per;
    p->vrows = rows;
    if (p->rows_visible > 0 && p->vtop + (size_t)p->rows_visible > rows)
        p->vtop = rows > (size_t)p->rows_visible ? rows - (size_t)p->rows_visible : 0;
    for (int k = 0; k < p->rows_visible && p->vtop + (size_t)k < rows; k++) {
        size_t first = (p->vtop + (size_t)k) * per;
        int y = r.y + 2 + k;
        char idx[40];
        snprintf(idx, sizeof(idx), p->hex ? "%*zx: " : "[%*zu] ", lw - 3, first);
        int x = r.x + tui_canvas_text(c, r.x, y, r.w, TUI_STYLE_DIM, idx, 0);
        for (size_t j = first; j < first + per && j < count; j++) {
            /* a value at a time: a pattern region's values without materialising it */
            char v[48];
            unsigned char el[8];
            size_t es = p->hex ? 1 : sim_dtype_size(t->dtype);
            sim_tensor_read_bytes(t, j * es, es, el);
            if (p->hex)
                snprintf(v, sizeof(v), "%02x", el[0]);
            else
                tui_memlive_format(t->dtype, el, 0, v, sizeof(v));
            char cell[64];
            snprintf(cell, sizeof(cell), "%*s", cw - 1, v);
            x += tui_canvas_text(c, x, y, r.x + r.w - x, TUI_STYLE_NORMAL, cell, 0) + 1;
        }
    }
}

static void ml_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                      bool focused)
{
    struct tui_memlive *p = self;
    (void)v;
    p->gen_drawn = sim_memstore_generation(p->store);
    p->dirty = false;
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    if (p->tab >= sim_memstore_space_count(p->store))
        p->tab = 0;
    draw_tabs(p, c, r, focused);
    if (p->values)
        draw_values(p, c, r);
    else
        draw_list(p, c, r, focused);
    tui_canvas_unclip(c);
}

static bool ml_sync(void *self, struct tui_view *v)
{
    struct tui_memlive *p = self;
    (void)v;
    return p->dirty || sim_memstore_generation(p->store) != p->gen_drawn;
}

static enum tui_result ml_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_memlive *p = self;
    (void)v;
    size_t nspaces = sim_memstore_space_count(p->store);
    size_t page = p->rows_visible > 1 ? (size_t)p->rows_visible - 1 : 1;
    size_t *pos = p->values ? &p->vtop : &p->sel;
    switch (a) {
    case TUI_ACT_PAN_LEFT:
    case TUI_ACT_PAN_RIGHT:
        if (p->values || !nspaces)
            return TUI_RES_HANDLED;
        p->tab = (p->tab + (a == TUI_ACT_PAN_RIGHT ? 1 : nspaces - 1)) % nspaces;
        p->sel = p->top = 0;
        break;
    case TUI_ACT_UP: *pos = *pos ? *pos - 1 : 0; break;
    case TUI_ACT_DOWN: *pos = *pos + 1; break; /* clamped when drawn */
    case TUI_ACT_PAGE_UP: *pos = *pos > page ? *pos - page : 0; break;
    case TUI_ACT_PAGE_DOWN: *pos += page; break;
    case TUI_ACT_START: *pos = 0; break;
    case TUI_ACT_END: *pos = SIZE_MAX / 2; break;
    case TUI_ACT_SELECT:
        if (p->values || !space_name(p) || !sim_memstore_space_len(p->store, space_name(p)))
            return TUI_RES_HANDLED;
        p->values = true;
        p->vtop = 0;
        break;
    case TUI_ACT_CLEAR:
        if (!p->values)
            return TUI_RES_IGNORED;
        p->values = false;
        break;
    case TUI_ACT_HEX:
        p->hex = !p->hex;
        p->vtop = 0;
        break;
    default: return TUI_RES_IGNORED;
    }
    p->dirty = true;
    return TUI_RES_REDRAW;
}

static void ml_free(void *self)
{
    tui_memlive_free(self);
}

const struct tui_pane_ops tui_memlive_ops = {
    .name = "Memory",
    .sync = ml_sync,
    .render = ml_render,
    .action = ml_action,
    .free = ml_free,
    .uses_view = false,
};
