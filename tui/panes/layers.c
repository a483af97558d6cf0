/*
 * The layer breakdown pane (see layers.h): the layer split of trace/analysis/regions.h as a table.
 * The rows are the layers in the chosen order, each followed by its op names when unfolded;
 * the columns that do not fit the width are left out, least needed first.
 */
#include "tui/panes/layers.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/instances.h"
#include "trace/analysis/regions.h"
#include "trace/analysis/regions_inc.h"
#include "tui/panes/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    REFRESH_NS = 500 * 1000 * 1000, /* a growing model is accounted again at most this often */
    NAME_MIN = 10,
    NAME_MAX = 32,
};

enum col {
    C_NAME,
    C_START,
    C_SPAN,
    C_SLOW,
    C_DMA,
    C_TE,
    C_VE,
    C_HOST,
    C_OTHER,
    C_SHARE,
    C_BYTES,
    C_ENERGY,
    C_OPS,
    C_COUNT
};

/* The columns: header, width, and which go first when the pane is narrow (the highest). */
static const struct {
    const char *head;
    int w;
    int drop; /* 0: never dropped */
} cols[C_COUNT] = {
    [C_NAME] = {"layer", 0, 0},    [C_START] = {"start", 9, 5}, [C_SPAN] = {"span", 8, 2},
    [C_SLOW] = {"slowest", 8, 3},  [C_DMA] = {"DMA", 8, 0},     [C_TE] = {"TE", 8, 0},
    [C_VE] = {"VE", 8, 0},         [C_HOST] = {"HOST", 8, 4},   [C_OTHER] = {"OTHER", 8, 4},
    [C_SHARE] = {"share", 6, 1},   [C_BYTES] = {"DRAM", 9, 2},  [C_OPS] = {"ops", 6, 6},
    [C_ENERGY] = {"energy", 9, 6},
};

/* A row of the table: a layer (op and inst SIZE_MAX), one of its op names, or one of its
 * instances (its ops within one token). */
struct row {
    size_t region;
    size_t op;
    size_t inst;
};

struct tui_layers {
    const struct trace_model *m;   /* borrowed */
    struct trace_regions *rs;      /* owned: the layer split, or NULL before the first compute */
    struct trace_instances inst;   /* owned: each layer's instances (per token) */
    uint32_t *layer_id;            /* owned: per region, its interned layer_id */
    bool *open;                    /* owned: per region, unfolded */
    uint64_t total;                /* cycles_total the shares are of */
    struct tui_task *task;         /* owned: computes the next_ fields */
    struct trace_regions_inc *inc; /* owned, live: the layers kept up to date */
    struct trace_instances_inc *inst_inc; /* owned, live: their instances */
    bool ran, caught_up;           /* live: a run finished; the last one caught up from event 0 */
    struct trace_regions *next_rs; /* the task's while it runs, then taken */
    struct trace_instances next_inst;
    uint32_t *next_ids;
    uint64_t gen, drawn_gen, computed_at;
    bool valid;
    struct row *rows; /* owned: the visible rows in order */
    size_t nrows;
    size_t sel, top;
    int rows_visible;
    int list_y; /* y of the first row in the last render */
    enum col sort;
    bool ascending;
    bool shown[C_COUNT]; /* columns of the last render */
};

/* Live layers cancelled before they were done (tui_task_release): dropped, stale again. */
static void discard(void *arg)
{
    struct tui_layers *l = arg;
    trace_regions_free(l->next_rs);
    l->next_rs = NULL;
    trace_instances_fini(&l->next_inst);
    memset(&l->next_inst, 0, sizeof(l->next_inst));
    free(l->next_ids);
    l->next_ids = NULL;
    l->gen = UINT64_MAX;
}

struct tui_layers *tui_layers_new(struct tui_view *v)
{
    struct tui_layers *l = sim_xcalloc(1, sizeof(*l));
    l->m = v->m;
    l->sort = C_START;
    l->ascending = true;
    l->task = tui_task_new();
    tui_task_set_narrow(l->task, true); /* (one thread: a core left to the verdict ahead) */
    if (v->live) {
        tui_task_set_live(l->task, discard);
        l->inc = trace_regions_inc_new(TRACE_REGION_LAYER, TRACE_REGIONS_FULL);
        l->inst_inc = trace_instances_inc_new();
    }
    return l;
}

void tui_layers_free(struct tui_layers *l)
{
    if (!l)
        return;
    tui_task_free(l->task);
    trace_regions_inc_free(l->inc);
    trace_instances_inc_free(l->inst_inc);
    trace_regions_free(l->next_rs);
    trace_instances_fini(&l->next_inst);
    free(l->next_ids);
    trace_regions_free(l->rs);
    trace_instances_fini(&l->inst);
    free(l->layer_id);
    free(l->open);
    free(l->rows);
    free(l);
}

/* ---- the numbers ------------------------------------------------------------------------- */

static const enum trace_engine col_engine[C_COUNT] = {
    [C_DMA] = TRACE_ENGINE_DMA,   [C_TE] = TRACE_ENGINE_TE,       [C_VE] = TRACE_ENGINE_VE,
    [C_HOST] = TRACE_ENGINE_HOST, [C_OTHER] = TRACE_ENGINE_OTHER,
};

static uint64_t inst_span(const struct trace_layer_inst *x)
{
    return x->end - x->start;
}

/* The energy of a layer: the chip's over each of its instances' spans, from the power samples
 * (trace/analysis/energy.h); NAN when the energy is unknown. */
static double layer_energy(const struct tui_layers *l, const struct trace_layer_insts *li)
{
    double j = 0;
    for (size_t k = 0; k < li->n; k++)
        j += trace_energy_between(l->m, li->v[k].start, li->v[k].end);
    return li->n ? j : NAN;
}

/* The value of a row in a numeric column (NAN: none). A layer's span is the sum of its
 * instances' spans: a layer every token passes would otherwise span the whole run. */
static double value(const struct tui_layers *l, const struct row *rw, enum col c)
{
    const struct trace_region *r = trace_regions_get(l->rs, rw->region);
    const struct trace_layer_insts *li = &l->inst.layers[rw->region];
    if (rw->inst != SIZE_MAX) {
        const struct trace_layer_inst *x = &li->v[rw->inst];
        return c == C_START    ? (double)x->start
               : c == C_SPAN   ? (double)inst_span(x)
               : c == C_ENERGY ? trace_energy_between(l->m, x->start, x->end)
                               : NAN;
    }
    const struct trace_op_usage *u = rw->op == SIZE_MAX ? NULL : &r->ops[rw->op];
    switch (c) {
    case C_START: return (double)(u ? u->start : r->start);
    case C_SPAN: return (double)(u ? u->end - u->start : li->sum);
    case C_SLOW: return u || !li->n ? NAN : (double)inst_span(&li->v[li->slowest]);
    case C_DMA:
    case C_TE:
    case C_VE:
    case C_HOST:
    case C_OTHER:
        return (double)(u ? u->engine_busy[col_engine[c]] : r->engine[col_engine[c]].busy);
    case C_SHARE: /* every engine kind's busy cycles, over cycles_total */
        return l->total ? (double)(u ? trace_op_kinds_busy(u) : trace_region_kinds_busy(r)) /
                              (double)l->total
                        : 0;
    case C_BYTES:
        return (double)(u ? u->read_bytes + u->write_bytes
                          : r->all.read_bytes + r->all.write_bytes);
    case C_OPS: return (double)(u ? u->count : r->all.ops);
    case C_ENERGY: return u ? NAN : layer_energy(l, li);
    default: return 0;
    }
}

/* A row's name; an instance's ("tok 12 decode", " *" on the slowest of several) in buf. */
static const char *row_name_buf(const struct tui_layers *l, const struct row *rw, char *buf,
                                size_t size)
{
    const struct trace_region *r = trace_regions_get(l->rs, rw->region);
    if (rw->inst != SIZE_MAX) {
        const struct trace_layer_insts *li = &l->inst.layers[rw->region];
        const struct trace_token *t = trace_model_token(l->m, li->v[rw->inst].token);
        snprintf(buf, size, "tok %lld %s%s", (long long)t->token_index,
                 t->decode ? "decode" : "prefill",
                 rw->inst == li->slowest && li->n > 1 ? " *" : "");
        return buf;
    }
    return rw->op == SIZE_MAX ? r->name : trace_model_str(l->m, r->ops[rw->op].op);
}

static const char *row_name(const struct tui_layers *l, const struct row *rw)
{
    static char buf[64];
    return row_name_buf(l, rw, buf, sizeof(buf));
}

static const struct tui_layers *sort_ctx;

/* The chosen column and direction; ties in the split's order (layers by their first op). */
static int cmp_rows(const void *pa, const void *pb)
{
    const struct tui_layers *l = sort_ctx;
    const struct row *a = pa, *b = pb;
    int c = 0;
    if (l->sort == C_NAME) {
        char x[64], y[64];
        c = strcmp(row_name_buf(l, a, x, sizeof(x)), row_name_buf(l, b, y, sizeof(y)));
    } else {
        double x = value(l, a, l->sort), y = value(l, b, l->sort);
        c = isnan(x) || isnan(y) ? 0 : x < y ? -1 : x > y;
    }
    if (!l->ascending)
        c = -c;
    if (c)
        return c;
    if (a->region != b->region)
        return a->region < b->region ? -1 : 1;
    return a->op < b->op ? -1 : a->op > b->op;
}

/* The instance rows of an unfolded layer: one per token when the trace has tokens. */
static size_t instances_shown(const struct tui_layers *l, size_t region)
{
    return l->inst.per_token ? l->inst.layers[region].n : 0;
}

/* The rows in order: the layers sorted, each followed by its sorted op names and its
 * instances when open. */
static void build_rows(struct tui_layers *l)
{
    size_t nl = l->rs ? trace_regions_count(l->rs) : 0, n = nl;
    for (size_t i = 0; i < nl; i++)
        n += l->open[i] ? trace_regions_get(l->rs, i)->nops + instances_shown(l, i) : 0;
    free(l->rows);
    l->rows = sim_xcalloc(n ? n : 1, sizeof(*l->rows));
    struct row *layers = sim_xcalloc(nl ? nl : 1, sizeof(*layers));
    for (size_t i = 0; i < nl; i++)
        layers[i] = (struct row){i, SIZE_MAX, SIZE_MAX};
    sort_ctx = l;
    qsort(layers, nl, sizeof(*layers), cmp_rows);
    l->nrows = 0;
    for (size_t i = 0; i < nl; i++) {
        l->rows[l->nrows++] = layers[i];
        if (!l->open[layers[i].region])
            continue;
        const struct trace_region *r = trace_regions_get(l->rs, layers[i].region);
        struct row *first = &l->rows[l->nrows];
        for (size_t k = 0; k < r->nops; k++)
            l->rows[l->nrows++] = (struct row){layers[i].region, k, SIZE_MAX};
        qsort(first, r->nops, sizeof(*first), cmp_rows);
        /* then its instances, in token order */
        for (size_t k = 0; k < instances_shown(l, layers[i].region); k++)
            l->rows[l->nrows++] = (struct row){layers[i].region, SIZE_MAX, k};
    }
    sort_ctx = NULL;
    free(layers);
    if (l->sel >= l->nrows)
        l->sel = l->nrows ? l->nrows - 1 : 0;
}

/* The layers accounted (on the worker): the split, each region's layer_id, the instances;
 * live, kept up to date from what the last run left (trace/analysis/regions_inc.h). */
static void run(void *arg, struct trace_progress *pg)
{
    struct tui_layers *l = arg;
    struct trace_regions *rs = l->inc ? trace_regions_inc_update(l->inc, l->m, pg)
                                      : trace_regions_new_progress(l->m, TRACE_REGION_LAYER, pg);
    if (!rs)
        return; /* cancelled: nothing to take */
    l->caught_up = l->inc && !l->ran;
    l->ran = true;
    size_t n = trace_regions_count(rs);
    uint32_t *ids = sim_xcalloc(n ? n : 1, sizeof(*ids));
    for (size_t r = 0; r < n; r++)
        ids[r] = trace_regions_get(rs, r)->layer;
    trace_progress_step(pg, "layers: instances per token", 0);
    if (!trace_progress_at(pg, 0)) { /* a pass over every op: stopped before it, if asked */
        if (l->inst_inc)
            trace_instances_inc_update(l->inst_inc, rs, &l->next_inst);
        else
            trace_instances_compute(rs, &l->next_inst);
    }
    l->next_rs = rs;
    l->next_ids = ids;
}

/* Take finished layers, keeping the unfolded ones and the selected row by name. Returns
 * true when they were taken. */
static bool take(struct tui_layers *l)
{
    if (!tui_task_take_done(l->task))
        return false;
    if (!l->next_rs)
        return false;
    char *keep_layer = NULL, *keep_op = NULL;
    if (l->rs && l->sel < l->nrows) {
        keep_layer = sim_xstrdup(trace_regions_get(l->rs, l->rows[l->sel].region)->name);
        if (l->rows[l->sel].op != SIZE_MAX || l->rows[l->sel].inst != SIZE_MAX)
            keep_op = sim_xstrdup(row_name(l, &l->rows[l->sel]));
    }
    struct trace_regions *rs = l->next_rs;
    size_t n = trace_regions_count(rs);
    bool *open = sim_xcalloc(n ? n : 1, sizeof(*open));
    for (size_t i = 0; l->rs && i < n; i++)
        for (size_t j = 0; j < trace_regions_count(l->rs); j++)
            if (l->open[j] &&
                strcmp(trace_regions_get(l->rs, j)->name, trace_regions_get(rs, i)->name) == 0)
                open[i] = true;
    trace_regions_free(l->rs);
    trace_instances_fini(&l->inst);
    l->inst = l->next_inst;
    memset(&l->next_inst, 0, sizeof(l->next_inst));
    free(l->open);
    free(l->layer_id);
    l->rs = rs;
    l->open = open;
    l->layer_id = l->next_ids;
    l->next_rs = NULL;
    l->next_ids = NULL;
    l->total = trace_model_t_max(l->m);
    build_rows(l);
    for (size_t i = 0; keep_layer && i < l->nrows; i++) {
        const struct row *rw = &l->rows[i];
        if (strcmp(trace_regions_get(l->rs, rw->region)->name, keep_layer) == 0 &&
            (keep_op ? (rw->op != SIZE_MAX || rw->inst != SIZE_MAX) &&
                           strcmp(row_name(l, rw), keep_op) == 0
                     : rw->op == SIZE_MAX && rw->inst == SIZE_MAX)) {
            l->sel = i;
            break;
        }
    }
    free(keep_layer);
    free(keep_op);
    l->computed_at = tui_now_ns();
    l->valid = true;
    return true;
}

/* Account the layers again: started on the worker (take picks them up); live, over the model
 * held still meanwhile (tui/panes/task.h). */
static void compute(struct tui_layers *l)
{
    if (tui_task_running(l->task))
        return;
    l->gen = trace_model_generation(l->m);
    tui_task_start(l->task, run, l, true);
    take(l);
}

/* Whether a live run may start again: the wait of tui_task_due after a run, but none after
 * the first, which caught up from event 0 (the next ones fold in only what came since). */
static bool due(const struct tui_layers *l)
{
    return !tui_task_running(l->task) && (l->caught_up || tui_task_due(l->task));
}

static bool stale(const struct tui_layers *l)
{
    return !l->valid || l->gen != trace_model_generation(l->m);
}

bool tui_layers_ahead(struct tui_layers *l, const struct tui_view *v)
{
    if (v->live)
        return false;
    tui_task_set_ahead(l->task, true);
    take(l);
    if (!l->valid && !tui_task_running(l->task))
        compute(l); /* once: a loaded trace's model no longer changes */
    return tui_task_running(l->task);
}

static bool layers_sync(void *self, struct tui_view *v)
{
    struct tui_layers *l = self;
    (void)v;
    tui_task_set_ahead(l->task, false); /* the pane is open: a run under way is its own */
    bool took = take(l);
    if (stale(l) && (!l->valid || (tui_now_ns() - l->computed_at >= REFRESH_NS && due(l))))
        compute(l);
    return took || tui_task_running(l->task) || (l->valid && l->gen != l->drawn_gen);
}

static bool layers_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_layers *l = self;
    (void)v, (void)budget_ns;
    tui_task_set_ahead(l->task, false);
    bool running = tui_task_running(l->task); /* before the take: it may end between */
    if (take(l)) {
        v->result = true; /* drawn once more, at once */
        return true;
    }
    if (running)
        return true;
    if (!stale(l))
        return false;
    if (tui_now_ns() - l->computed_at >= REFRESH_NS && due(l))
        compute(l);
    return stale(l) || tui_task_running(l->task);
}

/* ---- drawing ----------------------------------------------------------------------------- */

/* v in w columns: the integer when it fits, else 12.3k. */
static char *num(char *buf, size_t size, double v, int w)
{
    snprintf(buf, size, "%.0f", v);
    if ((int)strlen(buf) > w)
        tui_fmt_si(buf, size, v);
    return buf;
}

/* Which columns fit w, and the name column's width. */
static int choose_columns(struct tui_layers *l, int w)
{
    bool any[TRACE_ENGINE_COUNT] = {0};
    for (size_t i = 0; i < trace_regions_count(l->rs); i++)
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            any[k] |= trace_regions_get(l->rs, i)->engine[k].busy > 0;
    for (int c = 0; c < C_COUNT; c++)
        l->shown[c] = true;
    l->shown[C_HOST] = any[TRACE_ENGINE_HOST];
    l->shown[C_OTHER] = any[TRACE_ENGINE_OTHER];
    l->shown[C_ENERGY] = trace_model_power_count(l->m) > 0;
    for (int drop = 6;; drop--) {
        int need = NAME_MIN + 2;
        for (int c = 1; c < C_COUNT; c++)
            need += l->shown[c] ? cols[c].w + 1 : 0;
        if (need <= w || drop == 0) {
            int name = w - need + NAME_MIN;
            return name > NAME_MAX ? NAME_MAX : name < NAME_MIN ? NAME_MIN : name;
        }
        for (int c = 1; c < C_COUNT; c++)
            if (cols[c].drop == drop)
                l->shown[c] = false;
    }
}

static const char *sort_name(enum col c)
{
    return c == C_NAME ? "name" : cols[c].head;
}

static void layers_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                          bool focused)
{
    struct tui_layers *l = self;
    take(l);
    if (!l->valid)
        compute(l);
    l->drawn_gen = l->gen;
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    if (!l->valid) {
        tui_canvas_text(c, r.x, r.y, r.w, ts, " Layers", TUI_TEXT_ELLIPSIS);
        tui_task_draw(l->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1}, "layers");
        tui_canvas_unclip(c);
        return;
    }
    size_t nl = trace_regions_count(l->rs);
    char title[160];
    snprintf(title, sizeof(title),
             " Layers  %zu layer%s, by %s %s  Enter zoom  F fold  r reverse  * slowest", nl,
             nl == 1 ? "" : "s", sort_name(l->sort), l->ascending ? "up" : "down");
    tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
    l->rows_visible = r.h - 2;
    l->list_y = r.y + 2;
    if (r.h < 2) {
        tui_canvas_unclip(c);
        return;
    }
    if (!nl) {
        tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                        "no layer_ids in this trace's ENGINE_EVENTs", TUI_TEXT_ELLIPSIS);
        tui_canvas_unclip(c);
        return;
    }
    int namew = choose_columns(l, r.w - 1);
    /* the header: the sort column stands out, with its direction */
    int x = r.x + 1;
    for (int k = 0; k < C_COUNT; k++) {
        if (!l->shown[k])
            continue;
        int w = k == C_NAME ? namew : cols[k].w;
        enum tui_style st = (enum col)k == l->sort ? TUI_STYLE_TAB_ACTIVE : TUI_STYLE_DIM;
        char head[24];
        snprintf(head, sizeof(head), "%s", cols[k].head);
        tui_canvas_fill(c, (struct tui_rect){x, r.y + 1, w, 1}, ' ', st);
        tui_canvas_text(c, x, r.y + 1, w, st, head, k == C_NAME ? 0 : TUI_TEXT_RIGHT);
        if ((enum col)k == l->sort) /* the direction beside the name */
            tui_canvas_put(c,
                           k == C_NAME ? x + (int)strlen(head) + 1 : x + w - (int)strlen(head) - 1,
                           r.y + 1, l->ascending ? gl->up : gl->down, st);
        x += w + 1;
    }
    if (l->sel < l->top)
        l->top = l->sel;
    if (l->rows_visible > 0 && l->sel >= l->top + (size_t)l->rows_visible)
        l->top = l->sel - (size_t)l->rows_visible + 1;
    for (int k = 0; k < l->rows_visible && l->top + (size_t)k < l->nrows; k++) {
        size_t i = l->top + (size_t)k;
        const struct row *rw = &l->rows[i];
        const struct trace_region *reg = trace_regions_get(l->rs, rw->region);
        int y = r.y + 2 + k;
        bool layer = rw->op == SIZE_MAX && rw->inst == SIZE_MAX;
        bool marked = v->mark_layer != TRACE_NO_STR && v->mark_layer == l->layer_id[rw->region] &&
                      rw->inst == SIZE_MAX &&
                      (layer ? v->mark_op == TRACE_NO_STR : v->mark_op == reg->ops[rw->op].op);
        enum tui_style st = i == l->sel && focused ? TUI_STYLE_SELECTION
                            : i == l->sel          ? TUI_STYLE_LABEL_SEL
                            : marked               ? TUI_STYLE_OP_SELECTED
                            : layer                ? TUI_STYLE_NORMAL
                                                   : TUI_STYLE_DIM;
        tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
        x = r.x + 1;
        if (layer)
            tui_canvas_put(c, x, y, l->open[rw->region] ? gl->fold_open : gl->fold_closed, st);
        tui_canvas_text(c, x + 2, y, namew - 2, st, row_name(l, rw),
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        x += namew + 1;
        for (int col = 1; col < C_COUNT; col++) {
            if (!l->shown[col])
                continue;
            char buf[32];
            double val = value(l, rw, (enum col)col);
            if (isnan(val))
                buf[0] = '\0';
            else if (col == C_SHARE)
                snprintf(buf, sizeof(buf), "%.1f%%", val * 100);
            else if (col == C_BYTES)
                tui_fmt_bytes(buf, sizeof(buf), val);
            else if (col == C_ENERGY)
                trace_energy_fmt(val, "J", buf, sizeof(buf));
            else
                num(buf, sizeof(buf), val, cols[col].w);
            tui_canvas_text(c, x, y, cols[col].w, st, buf, TUI_TEXT_RIGHT);
            x += cols[col].w + 1;
        }
    }
    tui_canvas_unclip(c);
}

/* ---- keys -------------------------------------------------------------------------------- */

/* Enter: the Gantt shows the row's ops, highlighted; a layer unfolds. */
static void zoom_to(struct tui_layers *l, struct tui_view *v)
{
    if (l->sel >= l->nrows)
        return;
    const struct row rw = l->rows[l->sel]; /* a copy: unfolding rebuilds the rows */
    const struct trace_region *r = trace_regions_get(l->rs, rw.region);
    uint32_t layer = l->layer_id[rw.region];
    uint64_t s = r->start, e = r->end;
    if (rw.inst != SIZE_MAX) {
        const struct trace_layer_inst *x = &l->inst.layers[rw.region].v[rw.inst];
        s = x->start, e = x->end > x->start ? x->end : x->start + 1;
        tui_view_mark(v, layer, TRACE_NO_STR);
    } else if (rw.op == SIZE_MAX) {
        tui_view_mark(v, layer, TRACE_NO_STR);
        if (!l->open[rw.region]) {
            l->open[rw.region] = true;
            build_rows(l);
        }
    } else {
        s = r->ops[rw.op].start, e = r->ops[rw.op].end;
        tui_view_mark(v, layer, r->ops[rw.op].op);
    }
    tui_view_goto(v, s, e, s, TUI_NO_EVENT);
    char name[128];
    const char *n = row_name(l, &rw);
    sim_escape(n, strlen(n), name, sizeof(name));
    tui_view_message(v, TUI_STYLE_STATUS, "%s %s: its ops highlighted on the Gantt (Esc clears)",
                     rw.inst != SIZE_MAX ? "instance"
                     : rw.op == SIZE_MAX ? "layer"
                                         : "op",
                     name);
}

static enum tui_result layers_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_layers *l = self;
    take(l);
    if (!l->valid)
        compute(l);
    if (!l->valid)
        return TUI_RES_IGNORED; /* still computing */
    size_t page = l->rows_visible > 1 ? (size_t)l->rows_visible - 1 : 1;
    size_t sel = l->sel;
    switch (a) {
    case TUI_ACT_UP: l->sel = l->sel ? l->sel - 1 : 0; break;
    case TUI_ACT_DOWN: l->sel = l->sel + 1 < l->nrows ? l->sel + 1 : l->sel; break;
    case TUI_ACT_PAGE_UP: l->sel = l->sel > page ? l->sel - page : 0; break;
    case TUI_ACT_PAGE_DOWN:
        l->sel = l->sel + page < l->nrows ? l->sel + page : (l->nrows ? l->nrows - 1 : 0);
        break;
    case TUI_ACT_START: l->sel = 0; break;
    case TUI_ACT_END: l->sel = l->nrows ? l->nrows - 1 : 0; break;
    case TUI_ACT_PAN_LEFT:
    case TUI_ACT_PAN_RIGHT: {
        int c = (int)l->sort;
        do /* the next column shown, around */
            c = (c + (a == TUI_ACT_PAN_RIGHT ? 1 : C_COUNT - 1)) % C_COUNT;
        while (!l->shown[c] && c != (int)l->sort);
        l->sort = (enum col)c;
        l->ascending = c == C_NAME || c == C_START;
        build_rows(l);
        return TUI_RES_REDRAW;
    }
    case TUI_ACT_REVERSE:
        l->ascending = !l->ascending;
        build_rows(l);
        return TUI_RES_REDRAW;
    case TUI_ACT_FOLD_ALL: {
        size_t n = trace_regions_count(l->rs);
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any |= l->open[i];
        size_t region = l->sel < l->nrows ? l->rows[l->sel].region : 0;
        for (size_t i = 0; i < n; i++)
            l->open[i] = !any;
        build_rows(l);
        for (size_t i = 0; i < l->nrows; i++) /* stay on the layer */
            if (l->rows[i].region == region && l->rows[i].op == SIZE_MAX &&
                l->rows[i].inst == SIZE_MAX)
                l->sel = i;
        return TUI_RES_REDRAW;
    }
    case TUI_ACT_SELECT: zoom_to(l, v); return TUI_RES_REDRAW;
    default: return TUI_RES_IGNORED;
    }
    return l->sel != sel ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static enum tui_result layers_mouse(void *self, int x, int y, int button, struct tui_view *v)
{
    struct tui_layers *l = self;
    (void)x;
    if (button == 4 || button == 5)
        return layers_action(l, button == 4 ? TUI_ACT_UP : TUI_ACT_DOWN, v);
    if (button == 1 && y >= l->list_y && l->top + (size_t)(y - l->list_y) < l->nrows)
        l->sel = l->top + (size_t)(y - l->list_y);
    return TUI_RES_REDRAW;
}

static void layers_hidden(void *self, bool hidden)
{
    struct tui_layers *l = self;
    tui_task_set_hidden(l->task, hidden);
}

static void layers_free(void *self)
{
    tui_layers_free(self);
}

const struct tui_pane_ops tui_layers_ops = {
    .name = "Layers",
    .sync = layers_sync,
    .render = layers_render,
    .action = layers_action,
    .mouse = layers_mouse,
    .work = layers_work,
    .hidden = layers_hidden,
    .free = layers_free,
    .uses_view = true,
};
