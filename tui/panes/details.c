/*
 * The details pane. An op's details are parsed from the trace file on demand
 * (trace_model_event_details) and kept until another op is shown or the model changes.
 */
#include "tui/panes/details.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/verdict/critpath.h"
#include "trace/model/format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tui_details {
    const struct trace_model *m; /* borrowed */
    uint64_t ev;                 /* event the cache is for, or TUI_NO_EVENT */
    uint64_t gen;
    struct sim_value *det; /* owned: its details, may be NULL */
    int scroll, lines_drawn, rows_visible;
};

struct tui_details *tui_details_new(struct tui_view *v)
{
    struct tui_details *d = sim_xcalloc(1, sizeof(*d));
    d->m = v->m;
    d->ev = TUI_NO_EVENT;
    return d;
}

void tui_details_free(struct tui_details *d)
{
    if (!d)
        return;
    sim_value_free(d->det);
    free(d);
}

/* Where the next line goes: lines before the scroll offset are clipped away. */
struct lines {
    struct tui_canvas *c;
    struct tui_rect r; /* the text area */
    int n;             /* lines emitted */
    int scroll;
};

static int line_y(const struct lines *L)
{
    return L->r.y + L->n - L->scroll;
}

/* Text from column x to the right edge, wrapped onto the lines below (at x) when it is
 * longer; untrusted text escaped first. The current line is where it starts. */
static void wrapped(struct lines *L, int x, enum tui_style st, const char *text, unsigned flags)
{
    char esc[2048];
    size_t len = strlen(text);
    if (flags & TUI_TEXT_UNTRUSTED)
        len = sim_escape(text, len, esc, sizeof(esc)), text = esc;
    int w = L->r.x + L->r.w - x;
    size_t at = 0, next;
    do {
        size_t k = tui_text_wrap(text + at, len - at, w, &next);
        tui_canvas_textn(L->c, x, line_y(L), w, st, text + at, k, 0);
        L->n++;
        at += next;
    } while (at < len);
}

/* "key  value" with the key in a column of kw, the value wrapped in its column. */
static void field(struct lines *L, int kw, const char *key, const char *val, unsigned flags)
{
    tui_canvas_text(L->c, L->r.x, line_y(L), kw, TUI_STYLE_DIM, key, 0);
    wrapped(L, L->r.x + kw, TUI_STYLE_NORMAL, val, flags);
}

static bool is_scalar(const struct sim_value *v)
{
    return v->type != SIM_V_LIST && v->type != SIM_V_MAP;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A scalar as text; addresses in hex. Returns the TUI_TEXT_* flags it needs. */
static unsigned scalar_text(const struct sim_value *v, const char *key, char *buf, size_t n)
{
    switch (v->type) {
    case SIM_V_NULL: snprintf(buf, n, "null"); return 0;
    case SIM_V_BOOL: snprintf(buf, n, "%s", v->u.b ? "true" : "false"); return 0;
    case SIM_V_INT:
        if (key && (ends_with(key, "addr") || ends_with(key, "_offset")) && v->u.i >= 0)
            snprintf(buf, n, "0x%" PRIx64 " (%" PRId64 ")", (uint64_t)v->u.i, v->u.i);
        else
            snprintf(buf, n, "%" PRId64, v->u.i);
        return 0;
    case SIM_V_FLOAT: snprintf(buf, n, "%g", v->u.f); return 0;
    case SIM_V_STR: snprintf(buf, n, "%s", v->u.str.s); return TUI_TEXT_UNTRUSTED;
    case SIM_V_TENSOR: snprintf(buf, n, "<tensor>"); return 0;
    default: snprintf(buf, n, "..."); return 0;
    }
}

/* A list of scalars on one line: [1, 2, 3]. */
static unsigned list_text(const struct sim_value *v, const char *key, char *buf, size_t n)
{
    size_t used = 0;
    unsigned flags = 0;
    used += (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < v->u.list.len && used + 8 < n; i++) {
        char item[128];
        flags |= scalar_text(v->u.list.items[i], key, item, sizeof(item));
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", item);
    }
    if (used + 2 < n)
        snprintf(buf + used, n - used, "]");
    return flags;
}

static bool all_scalars(const struct sim_value *v)
{
    for (size_t i = 0; i < v->u.list.len; i++)
        if (!is_scalar(v->u.list.items[i]))
            return false;
    return true;
}

/* One value of the details tree, indented by depth. */
static void tree(struct lines *L, const char *key, const struct sim_value *v, int depth)
{
    int x = L->r.x + depth * 2;
    int y = line_y(L);
    int kw = 0;
    if (key) {
        kw = tui_canvas_text(L->c, x, y, L->r.x + L->r.w - x, TUI_STYLE_DIM, key,
                             TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        kw += tui_canvas_text(L->c, x + kw, y, L->r.x + L->r.w - x - kw, TUI_STYLE_DIM, ": ", 0);
    }
    char buf[1024];
    if (is_scalar(v) || (v->type == SIM_V_LIST && all_scalars(v))) {
        unsigned flags = v->type == SIM_V_LIST ? list_text(v, key, buf, sizeof(buf))
                                               : scalar_text(v, key, buf, sizeof(buf));
        wrapped(L, x + kw, TUI_STYLE_VALUE, buf, flags);
        return;
    }
    if (key)
        L->n++;
    if (v->type == SIM_V_MAP) {
        for (size_t i = 0; i < v->u.map.len; i++)
            tree(L, v->u.map.keys[i], v->u.map.vals[i], key ? depth + 1 : depth);
        return;
    }
    for (size_t i = 0; i < v->u.list.len; i++) {
        snprintf(buf, sizeof(buf), "[%zu]", i);
        tree(L, buf, v->u.list.items[i], key ? depth + 1 : depth);
    }
}

/*
 * The op's kind: its record's op_kind, as the message gives it. A TileToken stage's is
 * "unknown" (ADR-0052 D3.7), so its stage type (D5: known from the op's start, in flight
 * as when finished) says what engine work it is: "unknown (TileToken stage DMA_READ:
 * memory)". The stage type may come from a trace file: the text is untrusted.
 */
static void kind_text(const struct tui_details *d, const struct trace_event *e, char *buf,
                      size_t size)
{
    const char *kind = trace_op_kind_name((enum trace_op_kind)e->op_kind);
    const char *stage = trace_stage_of_op(trace_model_str(d->m, e->op));
    if (!stage) {
        snprintf(buf, size, "%s", kind);
        return;
    }
    const struct sim_value *st = d->det ? sim_value_map_get(d->det, "stage_type") : NULL;
    if (st && st->type == SIM_V_STR)
        stage = st->u.str.s;
    enum trace_op_kind work = trace_kind_for_stage(stage);
    if (work == TRACE_KIND_UNKNOWN)
        snprintf(buf, size, "%s (TileToken stage %s)", kind, stage);
    else
        snprintf(buf, size, "%s (TileToken stage %s: %s)", kind, stage, trace_op_kind_name(work));
}

static void show_event(struct tui_details *d, struct lines *L, const struct tui_view *v)
{
    const struct trace_model *m = d->m;
    const struct trace_event *e = trace_model_event(m, d->ev);
    const struct trace_track *t = trace_model_track_get(m, e->track);
    double ghz = trace_model_clock_ghz(m);
    char buf[256], a[64], b[64];
    bool inflight = (e->flags & TRACE_EV_INFLIGHT) != 0;
    uint64_t end = inflight ? trace_model_now(m) : e->end;
    enum { KW = 10 };
    field(L, KW, "op", trace_model_str(m, e->op), TUI_TEXT_UNTRUSTED);
    field(L, KW, "on", trace_model_str(m, t->name), TUI_TEXT_UNTRUSTED);
    kind_text(d, e, buf, sizeof(buf));
    size_t used = strlen(buf);
    if (t->engine_id >= 0)
        snprintf(buf + used, sizeof(buf) - used, ", engine %s %d%s", trace_engine_name(t->engine),
                 (int)t->engine_id, inflight ? ", in flight" : "");
    else
        snprintf(buf + used, sizeof(buf) - used, ", engine %s%s", trace_engine_name(t->engine),
                 inflight ? ", in flight" : "");
    field(L, KW, "kind", buf, TUI_TEXT_UNTRUSTED);
    tui_fmt_cycles_ns(a, sizeof(a), e->start, ghz);
    tui_fmt_cycles_ns(b, sizeof(b), end, ghz);
    snprintf(buf, sizeof(buf), "%s .. %s%s", a, b, inflight ? " (now)" : "");
    field(L, KW, "cycles", buf, 0);
    field(L, KW, "duration",
          tui_fmt_cycles_ns(a, sizeof(a), end > e->start ? end - e->start : 0, ghz), 0);
    if (e->layer != TRACE_NO_STR)
        field(L, KW, "layer", trace_model_str(m, e->layer), TUI_TEXT_UNTRUSTED);
    if (e->tile != TRACE_NO_STR)
        field(L, KW, "tile", trace_model_str(m, e->tile), TUI_TEXT_UNTRUSTED);
    if (e->cmdq_id != TRACE_NO_CMDQ) {
        snprintf(buf, sizeof(buf), "%d", (int)e->cmdq_id);
        field(L, KW, "cmdq", buf, 0);
    }
    size_t k = v->path ? trace_critpath_find(v->path, d->ev) : SIZE_MAX;
    if (k != SIZE_MAX) { /* on the critical path: how long it waited, and on what */
        const struct trace_path_step *st = &v->path->steps[k];
        char why[160], pred[64] = "the start"; /* (of the launch, or of the run) */
        if (st->pred != UINT64_MAX) {
            const struct trace_event *pe = trace_model_event(m, st->pred);
            sim_escape(trace_model_str(m, pe->op), trace_model_str_len(m, pe->op), pred,
                       sizeof(pred));
        }
        snprintf(buf, sizeof(buf), "critical, op %zu of %zu", k + 1, v->path->n);
        field(L, KW, "path", buf, 0);
        snprintf(buf, sizeof(buf), "%s after %s", tui_fmt_cycles_ns(a, sizeof(a), st->wait, ghz),
                 pred);
        field(L, KW, "waited", buf, 0);
        field(L, KW, "because", trace_critpath_why(v->path, st, why, sizeof(why)), 0);
    }
    if (d->det && (d->det->type != SIM_V_MAP || d->det->u.map.len)) {
        tui_canvas_text(L->c, L->r.x, line_y(L), L->r.w, TUI_STYLE_DIM, "details", 0);
        L->n++;
        tree(L, NULL, d->det, 1);
    } else {
        tui_canvas_text(L->c, L->r.x, line_y(L), L->r.w, TUI_STYLE_DIM, "no details", 0);
        L->n++;
    }
}

/* No op: what is at the cursor's time. */
static void show_cursor(struct tui_details *d, struct lines *L, const struct tui_view *v)
{
    const struct trace_model *m = d->m;
    char buf[256], a[64];
    tui_canvas_text(L->c, L->r.x, line_y(L), L->r.w, TUI_STYLE_DIM,
                    "no op at the cursor on this row", TUI_TEXT_ELLIPSIS);
    L->n++;
    tui_canvas_text(L->c, L->r.x, line_y(L), L->r.w, TUI_STYLE_DIM,
                    "Enter: details of the op under the cursor; [ ]: previous / next op",
                    TUI_TEXT_ELLIPSIS);
    L->n++;
    field(L, 10, "cursor", tui_fmt_cycles_ns(a, sizeof(a), v->cursor, trace_model_clock_ghz(m)), 0);
    size_t nt = trace_model_token_count(m);
    for (size_t i = 0; i < nt; i++) {
        const struct trace_token *t = trace_model_token(m, i);
        if (t->start <= v->cursor && v->cursor < t->end) {
            /* its place among the tokens of its phase, as the tokens pane numbers it */
            size_t nth = 0;
            for (size_t j = 0; j < nt; j++) {
                const struct trace_token *o = trace_model_token(m, j);
                nth += o->decode == t->decode && o->token_index < t->token_index;
            }
            snprintf(buf, sizeof(buf), "%s #%zu (token_index %lld), cycles %llu .. %llu",
                     t->decode ? "DECODE" : "PREFILL", nth, (long long)t->token_index,
                     (unsigned long long)t->start, (unsigned long long)t->end);
            field(L, 10, "token", buf, 0);
        }
    }
    const struct trace_marker *last = NULL;
    size_t nm = trace_model_marker_count(m);
    for (size_t i = 0; i < nm; i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        if (k->cycle <= v->cursor && (!last || k->cycle >= last->cycle))
            last = k;
    }
    if (last) {
        int y = line_y(L);
        tui_canvas_text(L->c, L->r.x, y, 10, TUI_STYLE_DIM, "marker", 0);
        int w = tui_canvas_textn(L->c, L->r.x + 10, y, L->r.w - 10, TUI_STYLE_MARKER,
                                 trace_model_str(m, last->name), trace_model_str_len(m, last->name),
                                 TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        tui_canvas_printf(L->c, L->r.x + 10 + w, y, L->r.w - 10 - w, TUI_STYLE_NORMAL, " at %llu",
                          (unsigned long long)last->cycle);
        L->n++;
    }
}

static bool details_sync(void *self, struct tui_view *v)
{
    struct tui_details *d = self;
    uint64_t ev = tui_view_focus_event(v);
    uint64_t gen = trace_model_generation(d->m);
    if (ev == d->ev && gen == d->gen)
        return false;
    if (ev != d->ev)
        d->scroll = 0;
    sim_value_free(d->det);
    d->det = ev != TUI_NO_EVENT ? trace_model_event_details(d->m, ev) : NULL;
    d->ev = ev;
    d->gen = gen;
    return true;
}

static void details_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                           bool focused)
{
    struct tui_details *d = self;
    details_sync(d, v);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    tui_canvas_text(c, r.x, r.y, r.w, ts,
                    d->ev == TUI_NO_EVENT  ? " Details"
                    : d->ev == v->selected ? " Details: selected op"
                                           : " Details: op under the cursor",
                    TUI_TEXT_ELLIPSIS);
    d->rows_visible = r.h - 1;
    struct tui_rect body = {r.x + 1, r.y + 1, r.w - 1, r.h - 1};
    tui_canvas_clip(c, body);
    struct lines L = {c, body, 0, d->scroll};
    if (d->ev != TUI_NO_EVENT)
        show_event(d, &L, v);
    else
        show_cursor(d, &L, v);
    d->lines_drawn = L.n;
    tui_canvas_unclip(c);
}

static enum tui_result details_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_details *d = self;
    (void)v;
    int max = d->lines_drawn > d->rows_visible ? d->lines_drawn - d->rows_visible : 0;
    int before = d->scroll;
    switch (a) {
    case TUI_ACT_UP: d->scroll--; break;
    case TUI_ACT_DOWN: d->scroll++; break;
    case TUI_ACT_PAGE_UP: d->scroll -= d->rows_visible; break;
    case TUI_ACT_PAGE_DOWN: d->scroll += d->rows_visible; break;
    default: return TUI_RES_IGNORED;
    }
    d->scroll = d->scroll < 0 ? 0 : d->scroll > max ? max : d->scroll;
    return d->scroll != before ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static void details_free(void *self)
{
    tui_details_free(self);
}

const struct tui_pane_ops tui_details_ops = {
    .name = "Details",
    .sync = details_sync,
    .render = details_render,
    .action = details_action,
    .free = details_free,
    .uses_view = true,
};
