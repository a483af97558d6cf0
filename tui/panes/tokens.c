/*
 * The token pane (see tokens.h). The chart has a column per decode token while they fit
 * (else per group of consecutive tokens, showing the slowest of the group) and a height in
 * eighths of a cell, scaled to the slowest token; the selected token's column stands out.
 * The table below lists every token.
 */
#include "tui/panes/tokens.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/tokens.h"
#include "tui/panes/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    REFRESH_NS = 500 * 1000 * 1000,
    AXIS_W = 8,      /* the chart's left column of labels */
    CHART_MAX_H = 6, /* rows of the chart at most */
};

struct tui_tokens {
    const struct trace_model *m; /* borrowed */
    struct trace_token_profile p;
    struct tui_task *task;           /* owned: computes next */
    struct trace_token_inc *inc;     /* owned, live: the profile kept up to date */
    bool ran, caught_up;             /* live: a run finished; the last one caught up from event 0 */
    struct trace_token_profile next; /* the profile being computed (the task's while it runs) */
    uint64_t gen, drawn_gen, computed_at;
    bool valid;
    size_t sel, top;
    int rows_visible;
    struct tui_rect rect;
    int table_y; /* y of the table's first row in the last render */
};

/* A live profile cancelled before it was done (tui_task_release): dropped, stale again. */
static void discard(void *arg)
{
    struct tui_tokens *t = arg;
    trace_token_profile_fini(&t->next);
    memset(&t->next, 0, sizeof(t->next));
    t->gen = UINT64_MAX;
}

struct tui_tokens *tui_tokens_new(struct tui_view *v)
{
    struct tui_tokens *t = sim_xcalloc(1, sizeof(*t));
    t->m = v->m;
    t->task = tui_task_new();
    tui_task_set_narrow(t->task, true); /* (one thread: a core left to the verdict ahead) */
    if (v->live) {
        tui_task_set_live(t->task, discard);
        t->inc = trace_token_inc_new();
    }
    return t;
}

void tui_tokens_free(struct tui_tokens *t)
{
    if (!t)
        return;
    tui_task_free(t->task);
    trace_token_inc_free(t->inc);
    trace_token_profile_fini(&t->next);
    trace_token_profile_fini(&t->p);
    free(t);
}

static void run(void *arg, struct trace_progress *pg)
{
    struct tui_tokens *t = arg;
    if (t->inc) { /* live: from where the last run left it (trace/analysis/tokens.h) */
        trace_token_inc_update(t->inc, t->m, pg, &t->next);
        t->caught_up = !t->ran;
        t->ran = true;
    } else
        trace_token_profile_compute_progress(t->m, pg, &t->next);
}

/* Take a finished profile. Returns true when one was taken. */
static bool take(struct tui_tokens *t)
{
    if (!tui_task_take_done(t->task))
        return false;
    trace_token_profile_fini(&t->p);
    t->p = t->next;
    memset(&t->next, 0, sizeof(t->next));
    if (t->sel >= t->p.n)
        t->sel = t->p.n ? t->p.n - 1 : 0;
    t->computed_at = tui_now_ns();
    t->valid = true;
    return true;
}

/* Compute the profile: started on the worker (take picks it up); live, over the model held
 * still meanwhile (tui/panes/task.h). */
static void compute(struct tui_tokens *t)
{
    if (tui_task_running(t->task))
        return;
    t->gen = trace_model_generation(t->m);
    tui_task_start(t->task, run, t, true);
    take(t);
}

/* Whether a live run may start again: the wait of tui_task_due after a run, but none after
 * the first, which caught up from event 0 (the next ones fold in only what came since). */
static bool due(const struct tui_tokens *t)
{
    return !tui_task_running(t->task) && (t->caught_up || tui_task_due(t->task));
}

static bool stale(const struct tui_tokens *t)
{
    return !t->valid || t->gen != trace_model_generation(t->m);
}

static bool tokens_sync(void *self, struct tui_view *v)
{
    struct tui_tokens *t = self;
    (void)v;
    bool took = take(t);
    if (stale(t) && (!t->valid || (tui_now_ns() - t->computed_at >= REFRESH_NS && due(t))))
        compute(t);
    return took || tui_task_running(t->task) || (t->valid && t->gen != t->drawn_gen);
}

static bool tokens_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_tokens *t = self;
    (void)v, (void)budget_ns;
    bool running = tui_task_running(t->task); /* before the take: it may end between */
    if (take(t)) {
        v->result = true; /* drawn once more, at once */
        return true;
    }
    if (running)
        return true;
    if (!stale(t))
        return false;
    if (tui_now_ns() - t->computed_at >= REFRESH_NS && due(t))
        compute(t);
    return stale(t) || tui_task_running(t->task);
}

/* ---- drawing ----------------------------------------------------------------------------- */

/* "1200", or 12.3k when it does not fit w. */
static char *num(char *buf, size_t size, double v, int w)
{
    snprintf(buf, size, "%.0f", v);
    if ((int)strlen(buf) > w)
        tui_fmt_si(buf, size, v);
    return buf;
}

/* The token's number as a user counts it: its place among the tokens of its phase (rows
 * list PREFILL first, each phase by token_index), from 0. token_index itself is what the
 * producer wrote (llm_decode: the token's position in the sequence). */
static size_t ordinal(const struct trace_token_profile *p, size_t i)
{
    size_t k = i;
    while (k > 0 && p->rows[k - 1].decode == p->rows[i].decode)
        k--;
    return i - k;
}

/*
 * Decode latency over the token index in r: a column per token (or per group of tokens,
 * the slowest of the group), bars in eighths of a cell scaled to the slowest token.
 */
static void draw_chart(struct tui_tokens *t, struct tui_canvas *c, struct tui_rect r)
{
    const struct trace_token_profile *p = &t->p;
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    int w = r.w - AXIS_W, h = r.h - 1; /* the last row: the token axis */
    if (w < 4 || h < 1 || !p->ndecode)
        return;
    const struct trace_token_row *d = p->rows + p->nprefill;
    size_t per = (p->ndecode + (size_t)w - 1) / (size_t)w; /* tokens per column */
    int cw = per == 1 ? w / (int)p->ndecode : 1;           /* columns per token */
    cw = cw > 4 ? 4 : cw < 1 ? 1 : cw;
    double max = (double)p->decode_max;
    char buf[32];
    tui_canvas_printf(c, r.x, r.y, AXIS_W - 1, TUI_STYLE_DIM, "%*s", AXIS_W - 1,
                      num(buf, sizeof(buf), max, AXIS_W - 1));
    tui_canvas_text(c, r.x, r.y + h - 1, AXIS_W - 1, TUI_STYLE_DIM, "cycles", 0);
    size_t sel_dec = t->sel >= p->nprefill ? t->sel - p->nprefill : SIZE_MAX;
    size_t ncols = (p->ndecode + per - 1) / per;
    for (size_t col = 0; col < ncols; col++) {
        uint64_t v = 0;
        for (size_t k = col * per; k < p->ndecode && k < (col + 1) * per; k++)
            v = d[k].latency > v ? d[k].latency : v;
        bool sel = sel_dec != SIZE_MAX && sel_dec / per == col;
        /* every other bar in the other token style, so that neighbours stay apart */
        enum tui_style st = sel       ? TUI_STYLE_OP_SELECTED
                            : col % 2 ? TUI_STYLE_TOKEN_ALT
                                      : TUI_STYLE_TOKEN_DECODE;
        long eighths = max > 0 ? lround((double)v / max * h * 8) : 0;
        if (v > 0 && eighths == 0)
            eighths = 1; /* a token that took any time shows */
        for (int row = 0; row < h; row++) {
            long e = eighths - (long)row * 8;
            if (e <= 0)
                break;
            for (int k = 0; k < cw; k++)
                tui_canvas_put(c, r.x + AXIS_W + (int)col * cw + k, r.y + h - 1 - row,
                               gl->spark[e > 8 ? 8 : e], st);
        }
    }
    /* the token axis: the first and last index under their columns */
    int y = r.y + h;
    tui_canvas_text(c, r.x, y, AXIS_W - 1, TUI_STYLE_DIM, "token", 0);
    int used = (int)ncols * cw;
    (void)d; /* numbered as the table numbers them: from 0 in their phase */
    tui_canvas_printf(c, r.x + AXIS_W, y, w, TUI_STYLE_DIM, "%d", 0);
    snprintf(buf, sizeof(buf), "%zu", p->ndecode - 1);
    int lx = r.x + AXIS_W + used - (int)strlen(buf);
    if (ncols > 1 && lx > r.x + AXIS_W + (int)strlen(buf))
        tui_canvas_text(c, lx, y, (int)strlen(buf), TUI_STYLE_DIM, buf, 0);
    if (per > 1) {
        char note[80];
        snprintf(note, sizeof(note), "%zu tokens per column, the slowest", per);
        int nx = r.x + AXIS_W + used + 2;
        tui_canvas_text(c, nx, y, r.x + r.w - nx, TUI_STYLE_DIM, note, TUI_TEXT_ELLIPSIS);
    }
}

static void tokens_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                          bool focused)
{
    struct tui_tokens *t = self;
    (void)v;
    take(t);
    if (!t->valid)
        compute(t);
    t->drawn_gen = t->gen;
    t->rect = r;
    const struct trace_token_profile *p = &t->p;
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    if (!t->valid) {
        tui_canvas_text(c, r.x, r.y, r.w, ts, " Tokens", TUI_TEXT_ELLIPSIS);
        tui_task_draw(t->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1}, "tokens");
        tui_canvas_unclip(c);
        return;
    }
    char title[200];
    int n =
        snprintf(title, sizeof(title), " Tokens  %zu prefill, %zu decode", p->nprefill, p->ndecode);
    if (p->nprefill)
        n += snprintf(title + n, sizeof(title) - (size_t)n, "  prefill %llu cyc",
                      (unsigned long long)p->prefill_latency);
    if (p->ndecode)
        snprintf(title + n, sizeof(title) - (size_t)n,
                 "  decode min %llu, median %llu, mean %.1f, max %llu cyc",
                 (unsigned long long)p->decode_min, (unsigned long long)p->decode_median,
                 p->decode_mean, (unsigned long long)p->decode_max);
    tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
    t->rows_visible = 0;
    if (r.h < 2) {
        tui_canvas_unclip(c);
        return;
    }
    if (!p->n) {
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        "no TOKEN_EVENTs in this trace", TUI_TEXT_ELLIPSIS);
        tui_canvas_unclip(c);
        return;
    }
    /* the chart takes a third of the height (2 to CHART_MAX_H rows and its axis) when there
     * are decode tokens and the table keeps at least 3 rows */
    int body = r.h - 1, ch = 0;
    if (p->ndecode) {
        ch = body / 3 + 1;
        ch = ch > CHART_MAX_H + 1 ? CHART_MAX_H + 1 : ch;
        if (body - ch < 4)
            ch = body - 4 >= 3 ? body - 4 : 0;
    }
    if (ch)
        draw_chart(t, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, ch});
    int hy = r.y + 1 + ch;
    char head[160];
    int hn = snprintf(head, sizeof(head), "%-7s %6s %10s %9s %10s %10s", "phase", "#", "start",
                      "latency", "read", "written");
    bool energy = trace_model_power_count(t->m) > 0; /* each token's share of the power */
    if (energy)
        hn += snprintf(head + hn, sizeof(head) - (size_t)hn, " %9s", "energy");
    if (p->has_kv)
        snprintf(head + hn, sizeof(head) - (size_t)hn, " %10s %10s", "KV read", "KV written");
    tui_canvas_text(c, r.x + 1, hy, r.w - 1, TUI_STYLE_DIM, head, TUI_TEXT_ELLIPSIS);
    t->table_y = hy + 1;
    t->rows_visible = r.y + r.h - t->table_y;
    if (t->sel < t->top)
        t->top = t->sel;
    if (t->rows_visible > 0 && t->sel >= t->top + (size_t)t->rows_visible)
        t->top = t->sel - (size_t)t->rows_visible + 1;
    for (int k = 0; k < t->rows_visible && t->top + (size_t)k < p->n; k++) {
        size_t i = t->top + (size_t)k;
        const struct trace_token_row *row = &p->rows[i];
        int y = t->table_y + k;
        enum tui_style st = i == t->sel && focused ? TUI_STYLE_SELECTION
                            : i == t->sel          ? TUI_STYLE_LABEL_SEL
                                                   : TUI_STYLE_NORMAL;
        tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
        char a[32], b[32], line[200], s[32], lat[32];
        int ln = snprintf(line, sizeof(line), "%-7s %6zu %10s %9s %10s %10s",
                          row->decode ? "DECODE" : "PREFILL", ordinal(p, i),
                          num(s, sizeof(s), (double)row->start, 10),
                          num(lat, sizeof(lat), (double)row->latency, 9),
                          tui_fmt_bytes(a, sizeof(a), (double)row->read_bytes),
                          tui_fmt_bytes(b, sizeof(b), (double)row->write_bytes));
        if (energy)
            ln += snprintf(line + ln, sizeof(line) - (size_t)ln, " %9s",
                           trace_energy_fmt(trace_energy_between(t->m, row->start, row->end), "J",
                                            a, sizeof(a)));
        if (p->has_kv)
            snprintf(line + ln, sizeof(line) - (size_t)ln, " %10s %10s",
                     tui_fmt_bytes(a, sizeof(a), (double)row->kv_read),
                     tui_fmt_bytes(b, sizeof(b), (double)row->kv_write));
        tui_canvas_text(c, r.x + 1, y, r.w - 1, st, line, TUI_TEXT_ELLIPSIS);
    }
    tui_canvas_unclip(c);
}

/* ---- keys -------------------------------------------------------------------------------- */

static enum tui_result tokens_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_tokens *t = self;
    take(t);
    if (!t->valid)
        compute(t);
    if (!t->valid)
        return TUI_RES_IGNORED; /* still computing */
    size_t n = t->p.n, sel = t->sel;
    size_t page = t->rows_visible > 1 ? (size_t)t->rows_visible - 1 : 1;
    switch (a) {
    case TUI_ACT_UP: t->sel = t->sel ? t->sel - 1 : 0; break;
    case TUI_ACT_DOWN: t->sel = t->sel + 1 < n ? t->sel + 1 : t->sel; break;
    case TUI_ACT_PAGE_UP: t->sel = t->sel > page ? t->sel - page : 0; break;
    case TUI_ACT_PAGE_DOWN: t->sel = t->sel + page < n ? t->sel + page : (n ? n - 1 : 0); break;
    case TUI_ACT_START: t->sel = 0; break;
    case TUI_ACT_END: t->sel = n ? n - 1 : 0; break;
    case TUI_ACT_SELECT:
        if (t->sel < n) {
            const struct trace_token_row *row = &t->p.rows[t->sel];
            tui_view_goto(v, row->start, row->end, row->start, TUI_NO_EVENT);
            tui_view_message(
                v, TUI_STYLE_STATUS, "%s token #%zu (token_index %lld): %llu cycles from %llu",
                row->decode ? "DECODE" : "PREFILL", ordinal(&t->p, t->sel), (long long)row->index,
                (unsigned long long)row->latency, (unsigned long long)row->start);
        }
        return TUI_RES_REDRAW;
    default: return TUI_RES_IGNORED;
    }
    return t->sel != sel ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static enum tui_result tokens_mouse(void *self, int x, int y, int button, struct tui_view *v)
{
    struct tui_tokens *t = self;
    (void)x;
    if (button == 4 || button == 5)
        return tokens_action(t, button == 4 ? TUI_ACT_UP : TUI_ACT_DOWN, v);
    if (button == 1 && y >= t->table_y && t->top + (size_t)(y - t->table_y) < t->p.n)
        t->sel = t->top + (size_t)(y - t->table_y);
    return TUI_RES_REDRAW;
}

static void tokens_hidden(void *self, bool hidden)
{
    struct tui_tokens *t = self;
    tui_task_set_hidden(t->task, hidden);
}

static void tokens_free(void *self)
{
    tui_tokens_free(self);
}

const struct tui_pane_ops tui_tokens_ops = {
    .name = "Tokens",
    .sync = tokens_sync,
    .render = tokens_render,
    .action = tokens_action,
    .mouse = tokens_mouse,
    .work = tokens_work,
    .hidden = tokens_hidden,
    .free = tokens_free,
    .uses_view = false,
};
