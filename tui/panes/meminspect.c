/*
 * The memory pane. Regions are keyed by (space, address), as the memory store keys its
 * tensors (ADR-0052 D6); each event's details name the addresses it reads and writes. The
 * scan is incremental (events are only ever appended), so the same code follows a live
 * run.
 */
#include "tui/panes/meminspect.h"

#include "sim/data/dtype.h"
#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NO_TRACK = UINT32_MAX };

struct region {
    uint64_t addr;
    uint64_t bytes; /* 0 when unknown */
    uint64_t first, last;
    uint32_t reads, writes;
    uint32_t last_writer; /* track, or NO_TRACK */
    uint32_t last_track;  /* track of the last access */
    char shape[24];       /* "64x128", or "" */
    char dtype[8];
};

struct space {
    char *name; /* owned, lower case */
    struct region *r;
    size_t n, cap;
    uint64_t *hkeys; /* addr -> index + 1 */
    uint32_t *hvals;
    size_t hcap;
    uint32_t *order; /* region indices sorted by address */
    size_t norder;
};

struct tui_meminspect {
    const struct trace_model *m; /* borrowed */
    struct space *spaces;
    size_t nspaces;
    bool started;          /* the pane was shown: scanning may run */
    uint64_t ev_scanned;   /* events looked at */
    size_t acc_scanned;    /* MEM_ACCESS_EVENTs looked at */
    uint64_t ev_with_addr; /* events that named an address */
    size_t tab, sel, top;
    int rows_visible;
    uint64_t seen_gen;
    uint64_t drawn_scanned; /* events scanned when last drawn */
};

struct tui_meminspect *tui_meminspect_new(struct tui_view *v)
{
    struct tui_meminspect *mi = sim_xcalloc(1, sizeof(*mi));
    mi->m = v->m;
    return mi;
}

void tui_meminspect_free(struct tui_meminspect *mi)
{
    if (!mi)
        return;
    for (size_t i = 0; i < mi->nspaces; i++) {
        struct space *s = &mi->spaces[i];
        free(s->name), free(s->r), free(s->hkeys), free(s->hvals), free(s->order);
    }
    free(mi->spaces);
    free(mi);
}

static struct space *space_get(struct tui_meminspect *mi, const char *name, size_t len)
{
    char low[32];
    if (len >= sizeof(low))
        len = sizeof(low) - 1;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[len] = '\0';
    for (size_t i = 0; i < mi->nspaces; i++)
        if (strcmp(mi->spaces[i].name, low) == 0)
            return &mi->spaces[i];
    mi->spaces = sim_xreallocarray(mi->spaces, mi->nspaces + 1, sizeof(*mi->spaces));
    struct space *s = &mi->spaces[mi->nspaces++];
    *s = (struct space){.name = sim_xstrdup(low)};
    return s;
}

static uint64_t hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static void space_rehash(struct space *s)
{
    size_t cap = s->hcap ? s->hcap * 2 : 256;
    uint64_t *keys = sim_xcalloc(cap, sizeof(*keys));
    uint32_t *vals = sim_xcalloc(cap, sizeof(*vals));
    for (size_t i = 0; i < s->n; i++) {
        size_t h = hash64(s->r[i].addr) & (cap - 1);
        while (vals[h])
            h = (h + 1) & (cap - 1);
        keys[h] = s->r[i].addr, vals[h] = (uint32_t)i + 1;
    }
    free(s->hkeys), free(s->hvals);
    s->hkeys = keys, s->hvals = vals, s->hcap = cap;
}

static struct region *region_get(struct space *s, uint64_t addr)
{
    if (s->n * 2 >= s->hcap)
        space_rehash(s);
    size_t h = hash64(addr) & (s->hcap - 1);
    while (s->hvals[h]) {
        if (s->hkeys[h] == addr)
            return &s->r[s->hvals[h] - 1];
        h = (h + 1) & (s->hcap - 1);
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->r = sim_xreallocarray(s->r, s->cap, sizeof(*s->r));
    }
    s->hkeys[h] = addr;
    s->hvals[h] = (uint32_t)s->n + 1;
    struct region *r = &s->r[s->n++];
    *r = (struct region){
        .addr = addr, .first = UINT64_MAX, .last_writer = NO_TRACK, .last_track = NO_TRACK};
    return r;
}

/* What one access says about a region. */
struct access {
    const char *space;
    size_t space_len;
    uint64_t addr, bytes; /* bytes 0: unknown */
    uint64_t start, end;
    uint32_t track;
    bool write;
    const struct sim_value *shape; /* list of ints, or NULL */
    const char *dtype;             /* or NULL */
};

static void record(struct tui_meminspect *mi, const struct access *a)
{
    struct region *r = region_get(space_get(mi, a->space, a->space_len), a->addr);
    if (a->bytes > r->bytes || (a->write && a->bytes))
        r->bytes = a->bytes;
    if (a->start < r->first)
        r->first = a->start;
    if (a->end > r->last)
        r->last = a->end;
    if (a->write) {
        r->writes++;
        r->last_writer = a->track;
    } else {
        r->reads++;
    }
    r->last_track = a->track;
    if (a->shape && a->shape->type == SIM_V_LIST && (a->write || !r->shape[0])) {
        size_t used = 0;
        r->shape[0] = '\0';
        for (size_t i = 0; i < a->shape->u.list.len && used + 2 < sizeof(r->shape); i++) {
            const struct sim_value *d = a->shape->u.list.items[i];
            int k = snprintf(r->shape + used, sizeof(r->shape) - used, "%s%" PRId64, i ? "x" : "",
                             d->type == SIM_V_INT ? d->u.i : 0);
            used = k > 0 && (size_t)k < sizeof(r->shape) - used ? used + (size_t)k : used;
        }
    }
    if (a->dtype && (a->write || !r->dtype[0]))
        snprintf(r->dtype, sizeof(r->dtype), "%s", a->dtype);
}

static bool get_uint(const struct sim_value *map, const char *key, uint64_t *out)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (!v || v->type != SIM_V_INT || v->u.i < 0)
        return false;
    *out = (uint64_t)v->u.i;
    return true;
}

static void str_of(const struct sim_value *map, const char *key, const char **s, size_t *n)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (v && v->type == SIM_V_STR && v->u.str.len)
        *s = v->u.str.s, *n = v->u.str.len;
}

/* The bytes of an operand of this shape (a list of ints) and dtype (a dtype name), or 0
 * when either is missing, unknown or out of range. */
static uint64_t operand_bytes(const struct sim_value *shape, const char *dtype)
{
    enum sim_dtype t;
    if (!shape || shape->type != SIM_V_LIST || shape->u.list.len > SIM_MAX_DIMS || !dtype ||
        sim_dtype_parse(dtype, &t) < 0)
        return 0;
    int64_t dims[SIM_MAX_DIMS];
    for (size_t i = 0; i < shape->u.list.len; i++) {
        const struct sim_value *d = shape->u.list.items[i];
        if (d->type != SIM_V_INT)
            return 0;
        dims[i] = d->u.i;
    }
    size_t n;
    if (sim_shape_nbytes(t, (unsigned)shape->u.list.len, dims, &n) < 0)
        return 0;
    return n;
}

/* The addresses an op's details name (ADR-0052 D3), and a spec trace's DMA fields. */
static void scan_details(struct tui_meminspect *mi, const struct trace_event *e,
                         const struct sim_value *d)
{
    static const struct {
        const char *space, *addr, *shape, *dtype;
        bool write;
    } operands[] = {
        {"src_space", "src_addr", "shape", "dtype", false},
        {"src_a_space", "src_a_addr", "shape_a", "dtype_in", false},
        {"src_b_space", "src_b_addr", "shape_b", "dtype_in", false},
        {"dst_space", "dst_addr", "shape_out", "dtype_out", true},
    };
    struct access a = {.start = e->start, .end = e->end, .track = e->track};
    uint64_t nbytes = 0;
    get_uint(d, "nbytes", &nbytes);
    bool any = false;
    for (size_t i = 0; i < sizeof(operands) / sizeof(operands[0]); i++) {
        if (!get_uint(d, operands[i].addr, &a.addr))
            continue;
        a.space = "hbm", a.space_len = 3;
        str_of(d, operands[i].space, &a.space, &a.space_len);
        a.write = operands[i].write;
        a.bytes = nbytes;
        a.shape = sim_value_map_get(d, operands[i].shape);
        if (!a.shape)
            a.shape = sim_value_map_get(d, "shape");
        a.dtype = sim_value_get_str(d, operands[i].dtype, NULL);
        if (!a.dtype)
            a.dtype = sim_value_get_str(d, operands[i].write ? "dtype" : "dtype_in", NULL);
        if (!a.bytes) /* GEMM and math operands: from their shape and dtype */
            a.bytes = operand_bytes(a.shape, a.dtype);
        record(mi, &a);
        any = true;
    }
    /* composite ops: out_addr / out_nbytes in dst_space (hbm) */
    if (!sim_value_map_get(d, "dst_addr") && get_uint(d, "out_addr", &a.addr)) {
        a.space = "hbm", a.space_len = 3;
        str_of(d, "dst_space", &a.space, &a.space_len);
        a.write = true;
        a.bytes = 0;
        get_uint(d, "out_nbytes", &a.bytes);
        a.shape = NULL, a.dtype = NULL;
        record(mi, &a);
        any = true;
    }
    /* math ops: lists of inputs */
    const struct sim_value *addrs = sim_value_map_get(d, "input_addrs");
    if (addrs && addrs->type == SIM_V_LIST) {
        const struct sim_value *spaces = sim_value_map_get(d, "input_spaces");
        const struct sim_value *shapes = sim_value_map_get(d, "input_shapes");
        const struct sim_value *dtypes = sim_value_map_get(d, "input_dtypes");
        for (size_t i = 0; i < addrs->u.list.len; i++) {
            const struct sim_value *av = addrs->u.list.items[i];
            if (av->type != SIM_V_INT || av->u.i < 0)
                continue;
            a = (struct access){.addr = (uint64_t)av->u.i,
                                .start = e->start,
                                .end = e->end,
                                .track = e->track,
                                .space = "hbm",
                                .space_len = 3};
            if (spaces && spaces->type == SIM_V_LIST && i < spaces->u.list.len &&
                spaces->u.list.items[i]->type == SIM_V_STR)
                a.space = spaces->u.list.items[i]->u.str.s,
                a.space_len = spaces->u.list.items[i]->u.str.len;
            if (shapes && shapes->type == SIM_V_LIST && i < shapes->u.list.len)
                a.shape = shapes->u.list.items[i];
            if (dtypes && dtypes->type == SIM_V_LIST && i < dtypes->u.list.len &&
                dtypes->u.list.items[i]->type == SIM_V_STR)
                a.dtype = dtypes->u.list.items[i]->u.str.s;
            a.bytes = operand_bytes(a.shape, a.dtype);
            record(mi, &a);
            any = true;
        }
    }
    /* spec traces: DMA details name a DRAM address, bytes and a direction, and an SPM
     * bank and offset on the other side */
    uint64_t dram;
    if (get_uint(d, "dram_addr", &dram)) {
        const char *dir = sim_value_get_str(d, "direction", "read");
        bool to_dram = strcmp(dir, "write") == 0;
        uint64_t bytes = 0;
        get_uint(d, "bytes", &bytes);
        a = (struct access){.space = "dram",
                            .space_len = 4,
                            .addr = dram,
                            .bytes = bytes,
                            .start = e->start,
                            .end = e->end,
                            .track = e->track,
                            .write = to_dram};
        record(mi, &a);
        uint64_t bank, off;
        if (get_uint(d, "spm_bank", &bank) && get_uint(d, "spm_offset", &off)) {
            const struct sim_value *mem = sim_value_map_get(trace_model_config(mi->m), "memory");
            int64_t bank_size = sim_value_get_int(mem, "spm_bank_size_bytes", 0);
            a.space = "spm", a.space_len = 3;
            a.addr = bank_size > 0 ? bank * (uint64_t)bank_size + off : bank << 32 | off;
            a.write = !to_dram;
            record(mi, &a);
        }
        any = true;
    }
    if (any)
        mi->ev_with_addr++;
}

static int cmp_addr_ctx(const void *a, const void *b, void *ctx)
{
    const struct space *s = ctx;
    uint64_t x = s->r[*(const uint32_t *)a].addr, y = s->r[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

static void sort_spaces(struct tui_meminspect *mi)
{
    for (size_t i = 0; i < mi->nspaces; i++) {
        struct space *s = &mi->spaces[i];
        if (s->norder == s->n)
            continue;
        s->order = sim_xreallocarray(s->order, s->n + 1, sizeof(*s->order));
        for (size_t k = 0; k < s->n; k++)
            s->order[k] = (uint32_t)k;
        qsort_r(s->order, s->n, sizeof(*s->order), cmp_addr_ctx, s);
        s->norder = s->n;
    }
}

static bool pending(const struct tui_meminspect *mi)
{
    return mi->ev_scanned < trace_model_event_count(mi->m) ||
           mi->acc_scanned < trace_model_mem_access_count(mi->m);
}

static bool mem_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_meminspect *mi = self;
    (void)v;
    if (!mi->started)
        return false;
    uint64_t t0 = tui_now_ns();
    uint64_t n = trace_model_event_count(mi->m);
    while (mi->ev_scanned < n) {
        const struct trace_event *e = trace_model_event(mi->m, mi->ev_scanned);
        /* in-flight ops are looked at once they end */
        if (e->flags & TRACE_EV_INFLIGHT)
            break;
        if (e->op_kind != TRACE_KIND_UNKNOWN ||
            trace_model_track_get(mi->m, e->track)->engine == TRACE_ENGINE_DMA) {
            struct sim_value *d = trace_model_event_details(mi->m, mi->ev_scanned);
            if (d && d->type == SIM_V_MAP)
                scan_details(mi, e, d);
            sim_value_free(d);
        }
        mi->ev_scanned++;
        if ((mi->ev_scanned & 255) == 0 && tui_now_ns() - t0 > budget_ns)
            return true;
    }
    size_t na = trace_model_mem_access_count(mi->m);
    for (; mi->acc_scanned < na; mi->acc_scanned++) {
        const struct trace_mem_access *x = trace_model_mem_access(mi->m, mi->acc_scanned);
        struct access a = {.addr = x->addr,
                           .bytes = x->bytes,
                           .start = x->cycle,
                           .end = x->cycle + 1,
                           .track = x->track,
                           .write = x->write};
        a.space = trace_model_str(mi->m, x->mem_type);
        a.space_len = trace_model_str_len(mi->m, x->mem_type);
        if (!a.space_len)
            a.space = "dram", a.space_len = 4;
        record(mi, &a);
    }
    return pending(mi);
}

static bool mem_sync(void *self, struct tui_view *v)
{
    struct tui_meminspect *mi = self;
    (void)v;
    uint64_t gen = trace_model_generation(mi->m);
    if (gen == mi->seen_gen && mi->drawn_scanned == mi->ev_scanned + mi->acc_scanned)
        return false;
    mi->seen_gen = gen;
    return true;
}

static void draw_tabs(struct tui_meminspect *mi, struct tui_canvas *c, struct tui_rect r,
                      bool focused)
{
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    int x = r.x + tui_canvas_text(c, r.x, r.y, r.w, ts, " Memory ", 0);
    for (size_t i = 0; i < mi->nspaces && x < r.x + r.w; i++) {
        char label[48];
        snprintf(label, sizeof(label), " %s ", mi->spaces[i].name);
        x += tui_canvas_text(c, x, r.y, r.x + r.w - x,
                             i == mi->tab ? TUI_STYLE_TAB_ACTIVE : TUI_STYLE_TAB, label,
                             TUI_TEXT_UNTRUSTED);
        x++;
    }
    if (pending(mi)) {
        uint64_t n = trace_model_event_count(mi->m);
        char buf[48];
        snprintf(buf, sizeof(buf), " scanning %" PRIu64 "%%",
                 n ? mi->ev_scanned * 100 / n : (uint64_t)100);
        tui_canvas_text(c, x, r.y, r.x + r.w - x, ts, buf, 0);
    }
}

static void mem_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                       bool focused)
{
    struct tui_meminspect *mi = self;
    if (!mi->started) {
        mi->started = true;
        mem_work(mi, v, 20 * 1000000u); /* a first slice, so the pane is not empty */
    }
    sort_spaces(mi);
    mi->drawn_scanned = mi->ev_scanned + mi->acc_scanned;
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    draw_tabs(mi, c, r, focused);
    mi->rows_visible = r.h - 2;
    if (mi->nspaces == 0) {
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        pending(mi) ? "looking for memory addresses in the events..."
                                    : "no memory addresses in this trace's events",
                        TUI_TEXT_ELLIPSIS);
        tui_canvas_unclip(c);
        return;
    }
    if (mi->tab >= mi->nspaces)
        mi->tab = 0;
    struct space *s = &mi->spaces[mi->tab];
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    /* columns: live mark, address, bytes, then as the width allows first..last, R/W, the
     * last writer, and (wider still) shape and dtype before the times */
    bool span_col = r.w >= 49, rw_col = r.w >= 57, shape_col = r.w >= 84;
    /* the header uses the widths of the rows below */
    char head[256];
    int hn = snprintf(head, sizeof(head), "  %-14s %9s ", "address", "bytes");
    if (shape_col)
        hn += snprintf(head + hn, sizeof(head) - (size_t)hn, "%-9s %-4s ", "shape", "type");
    if (span_col)
        hn += snprintf(head + hn, sizeof(head) - (size_t)hn, "%10s..%-10s", "first", "last");
    if (rw_col)
        snprintf(head + hn, sizeof(head) - (size_t)hn, " %7s %s", "R/W  ", "last writer");
    if (r.h > 1)
        tui_canvas_text(c, r.x, r.y + 1, r.w, TUI_STYLE_DIM, head, TUI_TEXT_ELLIPSIS);
    if (mi->sel >= s->norder)
        mi->sel = s->norder ? s->norder - 1 : 0;
    if (mi->rows_visible > 0) {
        if (mi->sel < mi->top)
            mi->top = mi->sel;
        if (mi->sel >= mi->top + (size_t)mi->rows_visible)
            mi->top = mi->sel - (size_t)mi->rows_visible + 1;
    }
    for (int k = 0; k < mi->rows_visible && mi->top + (size_t)k < s->norder; k++) {
        size_t row = mi->top + (size_t)k;
        const struct region *g = &s->r[s->order[row]];
        int y = r.y + 2 + k;
        bool live = g->first <= v->cursor && v->cursor < g->last;
        enum tui_style st = row == mi->sel && focused ? TUI_STYLE_SELECTION
                            : live                    ? TUI_STYLE_MEM_LIVE
                                                      : TUI_STYLE_NORMAL;
        tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
        if (live)
            tui_canvas_put(c, r.x, y, gl->live, st);
        char bytes[32], line[256];
        if (g->bytes)
            tui_fmt_bytes(bytes, sizeof(bytes), (double)g->bytes);
        else
            snprintf(bytes, sizeof(bytes), "-");
        int n = snprintf(line, sizeof(line), "0x%012" PRIx64 " %9s ", g->addr, bytes);
        if (shape_col)
            n += snprintf(line + n, sizeof(line) - (size_t)n, "%-9.9s %-4.4s ", g->shape, g->dtype);
        if (span_col)
            n += snprintf(line + n, sizeof(line) - (size_t)n, "%10" PRIu64 "..%-10" PRIu64,
                          g->first, g->last);
        if (rw_col)
            snprintf(line + n, sizeof(line) - (size_t)n, " %3u/%-3u", g->reads, g->writes);
        int used = tui_canvas_text(c, r.x + 2, y, r.w - 2, st, line, TUI_TEXT_ELLIPSIS);
        uint32_t who = g->last_writer != NO_TRACK ? g->last_writer : g->last_track;
        if (rw_col && who != NO_TRACK && who < trace_model_track_count(mi->m)) {
            uint32_t name = trace_model_track_get(mi->m, who)->name;
            tui_canvas_textn(c, r.x + 2 + used + 1, y, r.w - used - 3, st,
                             trace_model_str(mi->m, name), trace_model_str_len(mi->m, name),
                             TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        }
    }
    tui_canvas_unclip(c);
}

static enum tui_result mem_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_meminspect *mi = self;
    size_t n = mi->tab < mi->nspaces ? mi->spaces[mi->tab].norder : 0;
    size_t page = mi->rows_visible > 1 ? (size_t)mi->rows_visible - 1 : 1;
    switch (a) {
    case TUI_ACT_PAN_LEFT:
        if (mi->nspaces)
            mi->tab = (mi->tab + mi->nspaces - 1) % mi->nspaces, mi->sel = mi->top = 0;
        break;
    case TUI_ACT_PAN_RIGHT:
        if (mi->nspaces)
            mi->tab = (mi->tab + 1) % mi->nspaces, mi->sel = mi->top = 0;
        break;
    case TUI_ACT_UP: mi->sel = mi->sel ? mi->sel - 1 : 0; break;
    case TUI_ACT_DOWN: mi->sel = mi->sel + 1 < n ? mi->sel + 1 : mi->sel; break;
    case TUI_ACT_PAGE_UP: mi->sel = mi->sel > page ? mi->sel - page : 0; break;
    case TUI_ACT_PAGE_DOWN: mi->sel = mi->sel + page < n ? mi->sel + page : (n ? n - 1 : 0); break;
    case TUI_ACT_SELECT:
        /* move the time cursor to the region's first access */
        if (mi->sel < n) {
            const struct space *s = &mi->spaces[mi->tab];
            tui_view_set_cursor(v, s->r[s->order[mi->sel]].first);
        }
        break;
    default: return TUI_RES_IGNORED;
    }
    return TUI_RES_REDRAW;
}

static void mem_free(void *self)
{
    tui_meminspect_free(self);
}

const struct tui_pane_ops tui_meminspect_ops = {
    .name = "Memory",
    .sync = mem_sync,
    .render = mem_render,
    .action = mem_action,
    .work = mem_work,
    .free = mem_free,
    .uses_view = true,
};

size_t tui_meminspect_space_count(const struct tui_meminspect *mi)
{
    return mi->nspaces;
}

const char *tui_meminspect_space_name(const struct tui_meminspect *mi, size_t i)
{
    return i < mi->nspaces ? mi->spaces[i].name : NULL;
}

size_t tui_meminspect_region_count(const struct tui_meminspect *mi, size_t space)
{
    return space < mi->nspaces ? mi->spaces[space].n : 0;
}
