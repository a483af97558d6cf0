/*
 * The live memory inspector (see memlive.h). The list and the values are read through the
 * memory view (tui/source/memview.h) at each redraw; the pane keeps only what the user looks at
 * (space, row, the tensor shown by its address, scroll positions).
 */
#include "tui/panes/memlive.h"

#include "sim/chip/chip.h"
#include "sim/data/dtype.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"
#include "tui/source/memview.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tui_memlive {
    struct tui_memview *mem; /* borrowed */
    uint64_t gen_drawn;      /* memory generation last drawn */
    size_t tab;              /* space shown */
    size_t sel, top;         /* list: selected row, first row shown */
    bool values;             /* showing the values of one tensor */
    bool hex;                /* values as raw bytes */
    uint64_t addr;           /* the tensor shown, by address in the tab's space */
    size_t vtop;             /* first row of the value table */
    int rows_visible;
    size_t vrows; /* rows of the value table at the last draw */
    bool dirty;
};

struct tui_memlive *tui_memlive_new(struct tui_memview *mem, struct tui_view *v)
{
    (void)v;
    struct tui_memlive *p = sim_xcalloc(1, sizeof(*p));
    p->mem = mem;
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
    size_t n = p->mem->ops->space_count(p->mem);
    return p->tab < n ? p->mem->ops->space_name(p->mem, p->tab) : NULL;
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

static void fmt_shape(const struct tui_mem_entry *t, char *buf, size_t size)
{
    sim_shape_format(t->ndim, t->shape, buf, size);
}

/* ---- drawing ------------------------------------------------------------------------------ */

static void draw_tabs(struct tui_memlive *p, struct tui_canvas *c, struct tui_rect r, bool focused)
{
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    int x = r.x + tui_canvas_text(c, r.x, r.y, r.w, ts, " Memory (live) ", 0);
    size_t n = p->mem->ops->space_count(p->mem);
    for (size_t i = 0; i < n && x < r.x + r.w; i++) {
        const char *name = p->mem->ops->space_name(p->mem, i);
        char label[64];
        snprintf(label, sizeof(label), " %.40s %zu ", name ? name : "?",
                 p->mem->ops->space_len(p->mem, i));
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
    const struct tui_mem_entry *e = space ? p->mem->ops->entries(p->mem, p->tab, &n) : NULL;
    if (!n) {
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        "nothing in the memory store yet", TUI_TEXT_ELLIPSIS);
        return;
    }
    bool wide = r.w >= 72;
    char head[160];
    snprintf(head, sizeof(head), " %-16s %-14s %-5s %9s  %s", "address", "shape", "dtype", "bytes",
             wide ? "last writer       at          tensor" : "writer");
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
        const struct tui_mem_entry *x = &e[row];
        int y = r.y + 2 + k;
        enum tui_style st =
            row == p->sel ? (focused ? TUI_STYLE_SELECTION : TUI_STYLE_VALUE) : TUI_STYLE_NORMAL;
        tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
        char addr[40], shape[48], bytes[24], t[24], line[200];
        fmt_addr(x->addr, addr, sizeof(addr));
        fmt_shape(x, shape, sizeof(shape));
        tui_fmt_bytes(bytes, sizeof(bytes), (double)x->nbytes);
        fmt_time(x->t_ns, t, sizeof(t));
        int used = snprintf(line, sizeof(line), " %-16s %-14.14s %-5s %9s  ", addr, shape,
                            sim_dtype_name((enum sim_dtype)x->dtype), bytes);
        tui_canvas_text(c, r.x, y, r.w, st, line, 0);
        /* a pattern region: one row, its pattern as the writer */
        const char *by = x->pattern ? x->pattern : x->writer ? x->writer : "-";
        char who[160];
        /* the kernel argument it belongs to, where the launch's argument table names it */
        snprintf(who, sizeof(who), wide ? "%-16.16s  %-10s  %s" : "%s", by, t,
                 x->name ? x->name : "");
        tui_canvas_text(c, r.x + used, y, r.w - used, st, who,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
}

static void draw_values(struct tui_memlive *p, struct tui_canvas *c, struct tui_rect r)
{
    const char *space = space_name(p);
    size_t n = 0;
    const struct tui_mem_entry *e = space ? p->mem->ops->entries(p->mem, p->tab, &n) : NULL;
    const struct tui_mem_entry *t = NULL;
    for (size_t i = 0; i < n && !t; i++)
        if (e[i].addr == p->addr)
            t = &e[i];
    if (!t) {
        p->values = false;
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        "this tensor is no longer in the store (Esc: the list)", TUI_TEXT_ELLIPSIS);
        return;
    }
    /* the line about the tensor: where, what, who wrote it */
    enum sim_dtype dtype = (enum sim_dtype)t->dtype;
    char addr[40], shape[48], bytes[24], t_at[24], line[320];
    fmt_addr(p->addr, addr, sizeof(addr));
    fmt_shape(t, shape, sizeof(shape));
    tui_fmt_bytes(bytes, sizeof(bytes), (double)t->nbytes);
    fmt_time(t->t_ns, t_at, sizeof(t_at));
    const char *pend = p->mem->ops->pending
                           ? p->mem->ops->pending(p->mem, p->tab, t->addr, 0, (size_t)t->nbytes)
                           : NULL;
    char pnote[96] = "";
    if (pend) /* a result stored before it was computed: phase 2 (--verify) has its values */
        snprintf(pnote, sizeof(pnote), "; pend: %.40s's result, computed with --verify", pend);
    snprintf(line, sizeof(line), " %s%s%s %s %s %s %s, written by %s at %s%s%s%s  (%s; Esc: list)",
             t->name ? t->name : "", t->name ? " " : "", space, addr, shape, sim_dtype_name(dtype),
             bytes, t->writer ? t->writer : "-", t_at, t->pattern ? ", " : "",
             t->pattern ? t->pattern : "", pnote, p->hex ? "x: values" : "x: hex");
    if (r.h > 1)
        tui_canvas_text(c, r.x, r.y + 1, r.w, TUI_STYLE_VALUE, line,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    p->rows_visible = r.h - 2;
    size_t es = p->hex ? 1 : sim_dtype_size(dtype);
    size_t count = es ? (size_t)t->nbytes / es : 0;
    uint64_t tensor_addr = t->addr;
    /* row label "[     123] " then as many cells as fit */
    char lab[32];
    int lw = snprintf(lab, sizeof(lab), "%zu", count ? count - 1 : 0) + 3;
    int cw = p->hex ? 3 : cell_width(dtype);
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
            /* a value at a time: a pattern region's without materialising it, a served
             * run's fetched a window at a time */
            char v[48];
            unsigned char el[8];
            int got = p->mem->ops->read(p->mem, p->tab, tensor_addr, j * es, es, el);
            if (pend && p->mem->ops->pending(p->mem, p->tab, tensor_addr, j * es, es))
                snprintf(v, sizeof(v), "pend"); /* not computed in a timing run */
            else if (got <= 0)
                snprintf(v, sizeof(v), "%s", got ? "?" : ".");
            else if (p->hex)
                snprintf(v, sizeof(v), "%02x", el[0]);
            else
                tui_memlive_format(dtype, el, 0, v, sizeof(v));
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
    p->gen_drawn = p->mem->ops->generation(p->mem);
    p->dirty = false;
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    if (p->tab >= p->mem->ops->space_count(p->mem))
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
    return p->dirty || p->mem->ops->generation(p->mem) != p->gen_drawn;
}

static enum tui_result ml_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_memlive *p = self;
    (void)v;
    size_t nspaces = p->mem->ops->space_count(p->mem);
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
        if (p->values || !space_name(p) || !p->mem->ops->space_len(p->mem, p->tab))
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
