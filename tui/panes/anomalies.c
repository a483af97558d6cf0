/*
 * The anomaly pane (see anomalies.h): the list, and the jump to each one on the Gantt.
 */
#include "tui/panes/anomalies.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/verdict/anomaly.h"
#include "tui/panes/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    REFRESH_NS = 1000 * 1000 * 1000,
};

struct tui_anomalies {
    const struct trace_model *m; /* borrowed */
    struct trace_anomalies a;
    struct tui_task *task;         /* owned: computes next */
    struct trace_anomaly_inc *inc; /* owned, live: the list kept up to date */
    bool ran, caught_up;           /* live: a run finished; the last one caught up from event 0 */
    struct trace_anomalies next;   /* the list being computed (the task's while it runs) */
    uint64_t gen, drawn_gen, computed_at;
    bool valid;
    size_t sel, top;
    bool shown; /* an anomaly was shown on the Gantt: n and N go on from the selected one */
    int rows_visible;
    int list_y; /* y of the first row in the last render */
};

/* A live list cancelled before it was done (tui_task_release): dropped, stale again. */
static void discard(void *arg)
{
    struct tui_anomalies *p = arg;
    trace_anomalies_fini(&p->next);
    memset(&p->next, 0, sizeof(p->next));
    p->gen = UINT64_MAX;
}

struct tui_anomalies *tui_anomalies_new(struct tui_view *v)
{
    struct tui_anomalies *p = sim_xcalloc(1, sizeof(*p));
    p->m = v->m;
    p->task = tui_task_new();
    tui_task_set_narrow(p->task, true); /* (one thread: a core left to the verdict ahead) */
    if (v->live) {
        tui_task_set_live(p->task, discard);
        p->inc = trace_anomaly_inc_new(NULL);
    }
    return p;
}

void tui_anomalies_free(struct tui_anomalies *p)
{
    if (!p)
        return;
    tui_task_free(p->task);
    trace_anomaly_inc_free(p->inc);
    trace_anomalies_fini(&p->next);
    trace_anomalies_fini(&p->a);
    free(p);
}

static void run(void *arg, struct trace_progress *pg)
{
    struct tui_anomalies *p = arg;
    if (p->inc) { /* live: from where the last run left it (trace/verdict/anomaly.h) */
        trace_anomaly_inc_update(p->inc, p->m, pg, &p->next);
        p->caught_up = !p->ran;
        p->ran = true;
        return;
    }
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.progress = pg;
    trace_anomalies_find(p->m, &o, &p->next);
}

/* Take a finished list. Returns true when one was taken. */
static bool take(struct tui_anomalies *p)
{
    if (!tui_task_take_done(p->task))
        return false;
    trace_anomalies_fini(&p->a);
    p->a = p->next;
    memset(&p->next, 0, sizeof(p->next));
    if (p->sel >= p->a.n)
        p->sel = p->a.n ? p->a.n - 1 : 0;
    p->computed_at = tui_now_ns();
    p->valid = true;
    return true;
}

/* Find the anomalies: started on the worker (take picks them up); live, over the model held
 * still meanwhile (tui/panes/task.h). */
static void compute(struct tui_anomalies *p)
{
    if (tui_task_running(p->task))
        return;
    p->gen = trace_model_generation(p->m);
    tui_task_start(p->task, run, p, true);
    take(p);
}

/* Whether a live run may start again: the wait of tui_task_due after a run, but none after
 * the first, which caught up from event 0 (the next ones fold in only what came since). */
static bool due(const struct tui_anomalies *p)
{
    return !tui_task_running(p->task) && (p->caught_up || tui_task_due(p->task));
}

static bool stale(const struct tui_anomalies *p)
{
    return !p->valid || p->gen != trace_model_generation(p->m);
}

static bool anomalies_sync(void *self, struct tui_view *v)
{
    struct tui_anomalies *p = self;
    (void)v;
    bool took = take(p);
    if (stale(p) && (!p->valid || (tui_now_ns() - p->computed_at >= REFRESH_NS && due(p))))
        compute(p);
    return took || tui_task_running(p->task) || (p->valid && p->gen != p->drawn_gen);
}

static bool anomalies_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_anomalies *p = self;
    (void)v, (void)budget_ns;
    bool running = tui_task_running(p->task); /* before the take: it may end between */
    if (take(p)) {
        v->result = true; /* drawn once more, at once */
        return true;
    }
    if (running)
        return true;
    if (!stale(p))
        return false;
    if (tui_now_ns() - p->computed_at >= REFRESH_NS && due(p))
        compute(p);
    return stale(p) || tui_task_running(p->task);
}

static const enum tui_style kind_style[TRACE_ANOMALY_KIND_COUNT] = {
    [TRACE_ANOMALY_INVALID] = TUI_STYLE_ERROR,
    [TRACE_ANOMALY_SLOW_OP] = TUI_STYLE_VALUE,
    [TRACE_ANOMALY_IDLE_GAP] = TUI_STYLE_VALUE,
    [TRACE_ANOMALY_BANDWIDTH] = TUI_STYLE_VALUE,
};

static void anomalies_render(void *self, struct tui_canvas *c, struct tui_rect r,
                             struct tui_view *v, bool focused)
{
    struct tui_anomalies *p = self;
    (void)v;
    take(p);
    if (!p->valid)
        compute(p);
    p->drawn_gen = p->gen;
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    if (!p->valid) {
        tui_canvas_text(c, r.x, r.y, r.w, ts, " Anomalies", TUI_TEXT_ELLIPSIS);
        tui_task_draw(p->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1},
                      "anomalies");
        tui_canvas_unclip(c);
        return;
    }
    size_t total = 0;
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        total += p->a.found[k];
    char title[200];
    int n = snprintf(title, sizeof(title), " Anomalies  %zu", total);
    const char *sep = " (";
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++)
        if (p->a.found[k]) {
            n += snprintf(title + n, sizeof(title) - (size_t)n, "%s%zu %s", sep, p->a.found[k],
                          trace_anomaly_kind_name((enum trace_anomaly_kind)k));
            sep = ", ";
        }
    if (total)
        n += snprintf(title + n, sizeof(title) - (size_t)n, ")");
    if (total > p->a.n)
        n += snprintf(title + n, sizeof(title) - (size_t)n, ", the %zu most severe listed", p->a.n);
    if (p->a.n)
        snprintf(title + n, sizeof(title) - (size_t)n, "  Enter show  n/N next/previous");
    tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
    p->list_y = r.y + 1;
    p->rows_visible = r.h - 1;
    if (r.h < 2) {
        tui_canvas_unclip(c);
        return;
    }
    if (!p->a.n) {
        char none[160];
        snprintf(none, sizeof(none),
                 "none: no failure marker, no op over 5x its median, no launch idle over 10x "
                 "its usual gap%s",
                 p->a.bw_peak > 0 ? ", no bandwidth over the peak" : "");
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM, none, TUI_TEXT_ELLIPSIS);
        tui_canvas_unclip(c);
        return;
    }
    if (p->sel < p->top)
        p->top = p->sel;
    if (p->rows_visible > 0 && p->sel >= p->top + (size_t)p->rows_visible)
        p->top = p->sel - (size_t)p->rows_visible + 1;
    for (int k = 0; k < p->rows_visible && p->top + (size_t)k < p->a.n; k++) {
        size_t i = p->top + (size_t)k;
        const struct trace_anomaly *an = &p->a.v[i];
        int y = p->list_y + k;
        bool sel = i == p->sel;
        enum tui_style st = sel && focused ? TUI_STYLE_SELECTION
                            : sel          ? TUI_STYLE_LABEL_SEL
                                           : TUI_STYLE_NORMAL;
        tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
        char at[32], line[1024];
        snprintf(at, sizeof(at), "%10llu", (unsigned long long)an->start);
        int x = r.x + 1;
        x += tui_canvas_text(c, x, y, r.w - 1, st, at, 0) + 1;
        x += tui_canvas_text(c, x, y, r.x + r.w - x, sel ? st : kind_style[an->kind],
                             trace_anomaly_kind_name(an->kind), 0);
        x = x < r.x + 21 ? r.x + 21 : x + 1; /* the descriptions line up */
        trace_anomaly_describe(p->m, an, line, sizeof(line));
        tui_canvas_text(c, x, y, r.x + r.w - x, st, line, TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
    tui_canvas_unclip(c);
}

/* Show anomaly i on the Gantt: zoomed to it with some of what surrounds it, its op
 * selected; a marker in a window around it. */
static void show(struct tui_anomalies *p, struct tui_view *v, size_t i)
{
    if (i >= p->a.n)
        return;
    p->sel = i;
    p->shown = true;
    const struct trace_anomaly *an = &p->a.v[i];
    uint64_t len = an->end - an->start, s, e;
    if (an->kind == TRACE_ANOMALY_INVALID) {
        uint64_t around = trace_model_t_max(p->m) / 20 + 10;
        s = an->start > around ? an->start - around : 0;
        e = an->start + around;
    } else {
        s = an->start > len / 2 ? an->start - len / 2 : 0;
        e = an->end + len / 2;
    }
    uint64_t ev = an->kind == TRACE_ANOMALY_SLOW_OP || an->kind == TRACE_ANOMALY_IDLE_GAP
                      ? an->event
                      : TUI_NO_EVENT;
    tui_view_goto(v, s, e, an->start, ev);
    char line[1024];
    trace_anomaly_describe(p->m, an, line, sizeof(line));
    char esc[300];
    sim_escape(line, strlen(line), esc, sizeof(esc));
    tui_view_message(v, an->kind == TRACE_ANOMALY_INVALID ? TUI_STYLE_ERROR : TUI_STYLE_STATUS,
                     "anomaly %zu/%zu: %s", i + 1, p->a.n, esc);
}

static enum tui_result anomalies_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_anomalies *p = self;
    take(p);
    if (!p->valid)
        compute(p);
    if (!p->valid) { /* still computing: n and N are not the Gantt's search meanwhile */
        if (a != TUI_ACT_SEARCH_NEXT && a != TUI_ACT_SEARCH_PREV)
            return TUI_RES_IGNORED;
        tui_view_message(v, TUI_STYLE_STATUS, "the anomalies are still being found");
        return TUI_RES_REDRAW;
    }
    size_t n = p->a.n, sel = p->sel;
    size_t page = p->rows_visible > 1 ? (size_t)p->rows_visible - 1 : 1;
    switch (a) {
    case TUI_ACT_UP: p->sel = p->sel ? p->sel - 1 : 0; break;
    case TUI_ACT_DOWN: p->sel = p->sel + 1 < n ? p->sel + 1 : p->sel; break;
    case TUI_ACT_PAGE_UP: p->sel = p->sel > page ? p->sel - page : 0; break;
    case TUI_ACT_PAGE_DOWN: p->sel = p->sel + page < n ? p->sel + page : (n ? n - 1 : 0); break;
    case TUI_ACT_START: p->sel = 0; break;
    case TUI_ACT_END: p->sel = n ? n - 1 : 0; break;
    case TUI_ACT_SELECT:
    case TUI_ACT_SEARCH_NEXT:
    case TUI_ACT_SEARCH_PREV:
        if (!n) {
            tui_view_message(v, TUI_STYLE_STATUS, "no anomalies in this trace");
            return TUI_RES_REDRAW;
        }
        /* the first n or N shows the selected one, then they step, around */
        if (a == TUI_ACT_SEARCH_NEXT && p->shown)
            sel = p->sel + 1 < n ? p->sel + 1 : 0;
        else if (a == TUI_ACT_SEARCH_PREV && p->shown)
            sel = p->sel ? p->sel - 1 : n - 1;
        show(p, v, sel);
        return TUI_RES_REDRAW;
    default: return TUI_RES_IGNORED;
    }
    return p->sel != sel ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static enum tui_result anomalies_mouse(void *self, int x, int y, int button, struct tui_view *v)
{
    struct tui_anomalies *p = self;
    (void)x;
    if (button == 4 || button == 5)
        return anomalies_action(p, button == 4 ? TUI_ACT_UP : TUI_ACT_DOWN, v);
    if (button == 1 && y >= p->list_y && p->top + (size_t)(y - p->list_y) < p->a.n)
        p->sel = p->top + (size_t)(y - p->list_y);
    return TUI_RES_REDRAW;
}

static void anomalies_hidden(void *self, bool hidden)
{
    struct tui_anomalies *p = self;
    tui_task_set_hidden(p->task, hidden);
}

static void anomalies_free(void *self)
{
    tui_anomalies_free(self);
}

const struct tui_pane_ops tui_anomalies_ops = {
    .name = "Anomalies",
    .sync = anomalies_sync,
    .render = anomalies_render,
    .action = anomalies_action,
    .mouse = anomalies_mouse,
    .work = anomalies_work,
    .hidden = anomalies_hidden,
    .free = anomalies_free,
    .uses_view = false,
};
