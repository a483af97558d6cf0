/*
 * The bottleneck pane (see bottleneck.h): the verdict of trace/verdict/verdict.h as a table of
 * launches and the evidence of the selected one.
 */
#include "tui/panes/bottleneck.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/verdict/verdict.h"
#include "tui/panes/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MIN_REFRESH_NS = 500 * 1000 * 1000, /* a live verdict, at most twice a second */
    COST_FACTOR = 10,                   /* ... and at most a tenth of the time */
    EVIDENCE = 12,                      /* evidence lines of the selected row */
};

/* A line of the table: the run, a kernel launch, or the host messages together. */
struct row {
    const struct trace_verdict_item *it; /* NULL: the host messages */
    char name[96];                       /* escaped */
};

struct tui_bottleneck {
    const struct trace_model *m; /* borrowed */
    struct trace_verdict *v;     /* owned, or NULL until computed */
    struct tui_task *task;       /* owned: computes next */
    struct trace_verdict *next;  /* the verdict being computed (the task's while it runs) */
    bool threaded;               /* a loaded trace: computed on a worker thread */
    uint64_t started;            /* when the task started (tui_now_ns) */
    uint64_t gen;                /* the model generation it was computed for */
    uint64_t at, cost;           /* when (tui_now_ns) and how long it took */
    struct row *rows;            /* owned */
    size_t nrows, sel;
    size_t nhost; /* host messages summed in the last row */
    double host_time[TRACE_PCAT_COUNT];
    uint64_t host_length;
    int scroll, lines_drawn, rows_visible;
    bool dirty;
};

struct tui_bottleneck *tui_bottleneck_new(struct tui_view *v)
{
    struct tui_bottleneck *b = sim_xcalloc(1, sizeof(*b));
    b->m = v->m;
    b->task = tui_task_new();
    b->threaded = !v->live;
    return b;
}

void tui_bottleneck_free(struct tui_bottleneck *b)
{
    if (!b)
        return;
    tui_task_free(b->task);
    trace_verdict_free(b->next);
    trace_verdict_free(b->v);
    free(b->rows);
    free(b);
}

static bool kernel_launch(const struct trace_verdict_item *it)
{
    const struct trace_region *r = it->region;
    return r && r->all.ops > r->engine[TRACE_ENGINE_HOST].ops;
}

static void run(void *arg, struct trace_progress *pg)
{
    struct tui_bottleneck *b = arg;
    struct trace_verdict_opts o = {.progress = pg};
    b->next = trace_verdict_new(b->m, &o);
}

/* Take a finished verdict. Returns true when one was taken. */
static bool take(struct tui_bottleneck *b)
{
    if (!tui_task_take_done(b->task))
        return false;
    uint64_t t0 = b->started;
    /* keep the selection on the same launch */
    int32_t sel_cmdq = TRACE_NO_CMDQ;
    if (b->sel < b->nrows && b->rows[b->sel].it && b->rows[b->sel].it->region)
        sel_cmdq = b->rows[b->sel].it->region->cmdq_id;
    trace_verdict_free(b->v);
    b->v = b->next;
    b->next = NULL;
    free(b->rows);
    b->rows = sim_xcalloc(b->v->nlaunches + 2, sizeof(*b->rows));
    b->nrows = 0;
    b->rows[b->nrows].it = &b->v->run;
    snprintf(b->rows[b->nrows++].name, sizeof(b->rows[0].name), "run");
    b->nhost = 0;
    b->host_length = 0;
    memset(b->host_time, 0, sizeof(b->host_time));
    size_t sel = 0;
    for (size_t i = 0; i < b->v->nlaunches; i++) {
        const struct trace_verdict_item *it = &b->v->launches[i];
        if (!kernel_launch(it)) {
            b->nhost++;
            b->host_length += it->length;
            for (int k = 0; k < TRACE_PCAT_COUNT; k++)
                b->host_time[k] += it->time[k];
            continue;
        }
        struct row *r = &b->rows[b->nrows];
        r->it = it;
        char q[80];
        sim_escape(it->region->name, strlen(it->region->name), q, sizeof(q));
        if (it->region->occurrence)
            snprintf(r->name, sizeof(r->name), "%s #%u", q, it->region->occurrence + 1);
        else
            snprintf(r->name, sizeof(r->name), "%s", q);
        if (it->region->cmdq_id == sel_cmdq)
            sel = b->nrows;
        b->nrows++;
    }
    if (b->nhost) {
        b->rows[b->nrows].it = NULL;
        snprintf(b->rows[b->nrows++].name, sizeof(b->rows[0].name), "host messages");
    }
    b->sel = sel < b->nrows ? sel : 0;
    b->at = tui_now_ns();
    b->cost = b->at - t0;
    b->dirty = true;
    return true;
}

/* Judge the run: at once for a live model, else started on the worker (take picks it
 * up). */
static void compute(struct tui_bottleneck *b)
{
    if (tui_task_running(b->task))
        return;
    b->started = tui_now_ns();
    b->gen = trace_model_generation(b->m);
    tui_task_start(b->task, run, b, b->threaded);
    take(b);
}

/* Whether the verdict is behind the model and may be computed again now. */
static bool due(const struct tui_bottleneck *b, const struct tui_view *v)
{
    if (tui_task_running(b->task))
        return false;
    if (!b->v)
        return true;
    if (trace_model_generation(b->m) == b->gen)
        return false;
    if (!v->live)
        return true;
    uint64_t wait = b->cost * COST_FACTOR;
    wait = wait > MIN_REFRESH_NS ? wait : MIN_REFRESH_NS;
    return tui_now_ns() - b->at >= wait;
}

static bool bn_sync(void *self, struct tui_view *v)
{
    struct tui_bottleneck *b = self;
    take(b);
    bool d = b->dirty || tui_task_running(b->task);
    b->dirty = false;
    (void)v;
    return d;
}

static bool bn_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_bottleneck *b = self;
    (void)budget_ns;
    if (take(b))
        return true; /* drawn once more with the result */
    if (tui_task_running(b->task))
        return true;
    if (due(b, v))
        compute(b);
    /* live, a newer model keeps the pane asking for slices until the verdict follows */
    return b->v && trace_model_generation(b->m) != b->gen;
}

static const char *bound_short(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size)
{
    trace_verdict_bound_text(v, it, buf, size);
    size_t n = strlen(buf);
    if (it->bound != TRACE_BOUND_NONE && n < size)
        snprintf(buf + n, size - n, " %d%%", (int)(100 * it->share + 0.5));
    return buf;
}

static void row_line(struct tui_bottleneck *b, const struct row *r, char *line, size_t size,
                     double ghz)
{
    char len[32], bound[160];
    if (!r->it) {
        double total = 0;
        int best = TRACE_PCAT_LATENCY;
        for (int k = 0; k < TRACE_PCAT_COUNT; k++) {
            total += b->host_time[k];
            if (b->host_time[k] > b->host_time[best])
                best = k;
        }
        static const char *const cat[TRACE_PCAT_COUNT] = {"compute (TE)", "vector (VE)",
                                                          "DMA / HBM bandwidth", "host transfer",
                                                          "dependency latency"};
        tui_fmt_ns(len, sizeof(len), ghz > 0 ? (double)b->host_length / ghz : 0);
        if (!(ghz > 0))
            snprintf(len, sizeof(len), "%llu cyc", (unsigned long long)b->host_length);
        char name[128];
        snprintf(name, sizeof(name), "%s (%zu)", r->name, b->nhost);
        snprintf(line, size, "%-18.18s %9s %7s %s %.0f%%", name, len, "", cat[best],
                 total > 0 ? 100 * b->host_time[best] / total : 0);
        return;
    }
    const struct trace_verdict_item *it = r->it;
    if (ghz > 0)
        tui_fmt_ns(len, sizeof(len), (double)it->length / ghz);
    else
        snprintf(len, sizeof(len), "%llu cyc", (unsigned long long)it->length);
    bound_short(b->v, it, bound, sizeof(bound));
    /* "running" right after the time, which is the time so far: within a half-screen pane */
    snprintf(line, size,
             "%-18.18s %9s %-7s %-26.26s TE %3.0f%% VE %3.0f%% DMA %3.0f%% HOST %3.0f%%", r->name,
             len, it->running ? "running" : "", bound, 100 * it->busy[TRACE_ENGINE_TE],
             100 * it->busy[TRACE_ENGINE_VE], 100 * it->busy[TRACE_ENGINE_DMA],
             100 * it->busy[TRACE_ENGINE_HOST]);
}

static void bn_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                      bool focused)
{
    struct tui_bottleneck *b = self;
    take(b);
    if (!b->v)
        compute(b);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    if (!b->v) {
        tui_canvas_text(c, r.x, r.y, r.w, ts, " Bottleneck", TUI_TEXT_ELLIPSIS);
        tui_task_draw(b->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1}, "verdict");
        tui_canvas_unclip(c);
        return;
    }
    char title[256], bound[200];
    const struct trace_verdict_item *run = &b->v->run;
    snprintf(title, sizeof(title), " Bottleneck  run: %s%s",
             bound_short(b->v, run, bound, sizeof(bound)), run->running ? " (running)" : "");
    if (v->live && trace_model_generation(b->m) != b->gen) {
        char t[48];
        double ghz = trace_model_clock_ghz(b->m);
        size_t n = strlen(title);
        snprintf(title + n, sizeof(title) - n, "  as of %s",
                 ghz > 0 ? tui_fmt_ns(t, sizeof(t), (double)trace_model_t_max(b->m) / ghz)
                         : tui_fmt_si(t, sizeof(t), (double)trace_model_t_max(b->m)));
    }
    tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
    b->rows_visible = r.h - 1;
    int max = b->lines_drawn > b->rows_visible ? b->lines_drawn - b->rows_visible : 0;
    b->scroll = b->scroll > max ? max : b->scroll;
    struct tui_rect body = {r.x + 1, r.y + 1, r.w - 1, r.h - 1};
    tui_canvas_clip(c, body);
    int y = body.y - b->scroll, n = 0;
    double ghz = trace_model_clock_ghz(b->m);
    tui_canvas_text(c, body.x, y + n++, body.w, TUI_STYLE_DIM,
                    "launch                  time         bound, share of the path   busy",
                    TUI_TEXT_ELLIPSIS);
    for (size_t i = 0; i < b->nrows; i++) {
        char line[320];
        row_line(b, &b->rows[i], line, sizeof(line), ghz);
        enum tui_style st =
            i == b->sel ? (focused ? TUI_STYLE_LABEL_SEL : TUI_STYLE_SELECTION) : TUI_STYLE_NORMAL;
        if (i == b->sel)
            tui_canvas_fill(c, (struct tui_rect){body.x, y + n, body.w, 1}, ' ', st);
        tui_canvas_text(c, body.x, y + n++, body.w, st, line, TUI_TEXT_ELLIPSIS);
    }
    const struct trace_verdict_item *it = b->sel < b->nrows ? b->rows[b->sel].it : NULL;
    if (it) {
        char lines[EVIDENCE][TRACE_VERDICT_LINE];
        size_t k = trace_verdict_evidence(b->v, it, lines, EVIDENCE);
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_GROUP, "%s%s", b->rows[b->sel].name,
                          it->region && it->region->kind == TRACE_REGION_LAUNCH
                              ? ": Enter shows its critical path on the Gantt"
                              : "");
        for (size_t i = 0; i < k; i++)
            tui_canvas_text(c, body.x + 1, y + n++, body.w - 1,
                            strncmp(lines[i], "missing", 7) == 0 ? TUI_STYLE_DIM : TUI_STYLE_NORMAL,
                            lines[i], TUI_TEXT_ELLIPSIS);
    }
    b->lines_drawn = n;
    tui_canvas_unclip(c);
}

static enum tui_result bn_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_bottleneck *b = self;
    if (!b->v)
        return TUI_RES_IGNORED; /* still computing */
    size_t before = b->sel;
    int scroll = b->scroll;
    switch (a) {
    case TUI_ACT_UP: b->sel = b->sel ? b->sel - 1 : 0; break;
    case TUI_ACT_DOWN: b->sel = b->sel + 1 < b->nrows ? b->sel + 1 : b->sel; break;
    case TUI_ACT_PAGE_UP: b->scroll -= b->rows_visible; break;
    case TUI_ACT_PAGE_DOWN: b->scroll += b->rows_visible; break;
    case TUI_ACT_SELECT: {
        const struct trace_verdict_item *it = b->sel < b->nrows ? b->rows[b->sel].it : NULL;
        if (!it || !it->region) {
            tui_view_message(v, TUI_STYLE_STATUS, "host messages: select a launch for its path");
            return TUI_RES_REDRAW;
        }
        tui_view_request_path(v, it->region->kind == TRACE_REGION_LAUNCH ? it->region->cmdq_id
                                                                         : TRACE_NO_CMDQ);
        tui_view_set_cursor(v, it->region->start);
        return TUI_RES_REDRAW;
    }
    default: return TUI_RES_IGNORED;
    }
    b->scroll = b->scroll < 0 ? 0 : b->scroll;
    return b->sel != before || b->scroll != scroll ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static void bn_free(void *self)
{
    tui_bottleneck_free(self);
}

const struct tui_pane_ops tui_bottleneck_ops = {
    .name = "Bottleneck",
    .sync = bn_sync,
    .render = bn_render,
    .action = bn_action,
    .work = bn_work,
    .free = bn_free,
    .uses_view = false,
};
