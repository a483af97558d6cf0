/*
 * The comparison view (see diffview.h): rows, the view of time shared by both traces,
 * drawing of the two Gantt blocks from the models' busy-time indexes, the summary with
 * its delta column and the two-sided details of the selected op. The comparison itself (every
 * op matched: seconds at ten million) is computed on a worker (tui/panes/task.h), the view
 * showing its progress until it is ready; so is the load of the second trace when the view
 * is given its file (D's prompt).
 */
#include "tui/panes/diffview.h"

#include "sim/data/value.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/file/loader.h"
#include "tui/panes/task.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    LABEL_MIN = 8,
    LABEL_MAX = 28,
    DELTA_W = 7,       /* the delta column beside B's rows */
    BIG_BODY = 16,     /* from this body height on, the bottom panes show */
    WIDE = 90,         /* from this width on, summary and details side by side */
    KEY_W = 11,        /* the first column of the summary and the details */
    LOAD_EVERY = 4096, /* records of the second trace between two progress checks */
};

enum focus { F_GANTT, F_SUMMARY, F_DETAILS, F_COUNT };

#define NO_TRACK UINT32_MAX

/* A row: a component (track name) and its track in each trace. */
struct row {
    const char *name; /* borrowed from a model */
    uint32_t track[2];
    const struct trace_diff_item *item; /* its comparison over the run, or NULL */
};

struct tui_diffview {
    const struct trace_model *m[2];        /* A borrowed, B owned */
    char *name[2];                         /* owned */
    struct trace_diff *d;                  /* owned; NULL until the worker is done */
    struct tui_task *task;                 /* owned: computes next */
    struct trace_diff *next;               /* owned: the comparison being computed (the task's) */
    struct trace_progress *_Atomic task_p; /* the task's progress (set by its worker) */
    char *path_b;           /* owned: the second trace, loaded by the worker; NULL: given */
    int load_rc;            /* the worker's: 0, or why loading path_b failed (load_err) */
    struct diag load_err;   /* the worker's, read once it is done */
    uint64_t load_errors;   /* the errors of a trace that has some */
    bool failed, fail_said; /* the worker ended without a comparison; its error was told */
    bool note_said;         /* tui_diffview_take_note told of d's note */
    uint64_t want_cursor;   /* the cursor asked for at creation */
    struct row *rows;       /* owned */
    size_t nrows;

    /* the view of time, in A's cycles */
    double t0, cpc;
    bool fit;
    uint64_t cursor;
    bool aligned; /* B shifted so that matched regions start together */

    size_t sel, top; /* selected row, first row shown */
    int sel_side;    /* the op shown in the details: its side and index, or none */
    uint64_t sel_ev;
    struct sim_value *details[2]; /* owned: the details of the shown op and its match */

    int focus;
    bool bottom_hidden;
    int scroll[F_COUNT]; /* first line shown of the summary and the details */
    int lines[F_COUNT];  /* their line counts at the last render */
    bool dirty;

    /* layout of the last render */
    struct tui_rect body, gantt, summary, det;
    int label_w, plot_x, plot_w, rows_h, border_x;
    bool delta_col;
};

/* ---- rows ------------------------------------------------------------------------------- */

/* Compare labels so that "pe2" sorts before "pe10". */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
            if (na != nb)
                return na < nb ? -1 : 1;
            int c = strncmp(a, b, na);
            if (c)
                return c;
            a += na, b += nb;
        } else {
            if (*a != *b)
                return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
            a++, b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_row(const void *pa, const void *pb)
{
    const struct row *x = pa, *y = pb;
    int c = natural_cmp(x->name, y->name);
    return c ? c : strcmp(x->name, y->name);
}

/* One row per track name of either trace, tracks without ops left out. */
static void rows_build(struct tui_diffview *dv)
{
    size_t cap = trace_model_track_count(dv->m[0]) + trace_model_track_count(dv->m[1]);
    dv->rows = sim_xcalloc(cap ? cap : 1, sizeof(*dv->rows));
    for (int s = 0; s < 2; s++) {
        const struct trace_model *m = dv->m[s];
        for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
            const uint32_t *idx;
            if (!trace_model_track_events(m, t, &idx))
                continue;
            const char *name = trace_model_str(m, trace_model_track_get(m, t)->name);
            size_t k = 0;
            while (k < dv->nrows && strcmp(dv->rows[k].name, name) != 0)
                k++;
            if (k == dv->nrows)
                dv->rows[dv->nrows++] = (struct row){name, {NO_TRACK, NO_TRACK}, NULL};
            dv->rows[k].track[s] = t;
        }
    }
    qsort(dv->rows, dv->nrows, sizeof(*dv->rows), cmp_row);
    for (size_t k = 0; k < dv->nrows; k++)
        for (size_t i = 0; i < dv->d->run.ntracks; i++)
            if (strcmp(dv->d->run.tracks[i].name, dv->rows[k].name) == 0)
                dv->rows[k].item = &dv->d->run.tracks[i];
}

static uint64_t t_end(const struct tui_diffview *dv)
{
    uint64_t a = trace_model_t_max(dv->m[0]), b = trace_model_t_max(dv->m[1]);
    uint64_t e = a > b ? a : b;
    return e ? e : 1;
}

/* ---- creation ----------------------------------------------------------------------------- */

static const char LOADING[] = "loading the second trace";
static const char INFLATING[] = "loading the second trace: decompressing";

/* The second trace's load as the task's progress; non-zero (the load stops) once cancelled. */
static int load_progress(void *ctx, uint64_t done, uint64_t total, uint64_t events)
{
    struct trace_progress *p = ctx;
    const char *what = events == TRACE_LOAD_DECOMPRESSING ? INFLATING : LOADING;
    if (atomic_load_explicit(&p->what, memory_order_relaxed) != what ||
        atomic_load_explicit(&p->total, memory_order_relaxed) != total)
        trace_progress_step(p, what, total);
    return trace_progress_at(p, done);
}

static void run(void *arg, struct trace_progress *p)
{
    struct tui_diffview *dv = arg;
    atomic_store(&dv->task_p, p);
    if (dv->path_b) {
        struct trace_model *b = NULL;
        struct trace_load_progress lp = {load_progress, p, LOAD_EVERY};
        trace_progress_step(p, LOADING, 0);
        dv->load_rc =
            trace_diff_load_progress(dv->path_b, &b, &dv->load_errors, &dv->load_err, &lp);
        if (dv->load_rc < 0)
            return;
        trace_model_finish(b);
        dv->m[1] = b; /* read by the main loop once the task is done */
        if (trace_progress_cancelled(p))
            return;
    }
    dv->next = trace_diff_new_progress(dv->m[0], dv->m[1], NULL, p);
}

/* Take the finished comparison: the rows, the view. Returns true when there is one. */
static bool take(struct tui_diffview *dv)
{
    if (dv->d)
        return true;
    if (dv->failed || !tui_task_take_done(dv->task))
        return false;
    if (!dv->next) { /* the load failed (or the run was cancelled) */
        dv->failed = true;
        return false;
    }
    dv->d = dv->next;
    dv->next = NULL;
    rows_build(dv);
    dv->cursor = dv->want_cursor < t_end(dv) ? dv->want_cursor : t_end(dv) - 1;
    dv->dirty = true;
    return true;
}

/* The view, its worker started: b given (finished), or loaded from path_b (copied). */
static struct tui_diffview *create(const struct trace_model *a, const char *name_a,
                                   struct trace_model *b, const char *path_b, const char *name_b,
                                   uint64_t cursor)
{
    struct tui_diffview *dv = sim_xcalloc(1, sizeof(*dv));
    dv->m[0] = a;
    dv->m[1] = b;
    dv->path_b = path_b ? sim_xstrdup(path_b) : NULL;
    diag_clear(&dv->load_err);
    dv->name[0] = sim_xstrdup(name_a ? name_a : "A");
    dv->name[1] = sim_xstrdup(name_b ? name_b : "B");
    dv->fit = true;
    dv->cpc = 1;
    dv->want_cursor = cursor;
    dv->sel_ev = TUI_NO_EVENT;
    dv->dirty = true;
    dv->task = tui_task_new();
    tui_task_start(dv->task, run, dv, true);
    take(dv);
    return dv;
}

struct tui_diffview *tui_diffview_new_take(const struct trace_model *a, const char *name_a,
                                           struct trace_model *b, const char *name_b,
                                           uint64_t cursor)
{
    trace_model_finish(b);
    return create(a, name_a, b, NULL, name_b, cursor);
}

struct tui_diffview *tui_diffview_new_load(const struct trace_model *a, const char *name_a,
                                           const char *path_b, uint64_t cursor)
{
    return create(a, name_a, NULL, path_b, path_b, cursor);
}

bool tui_diffview_computing(struct tui_diffview *dv)
{
    return dv && !take(dv) && !dv->failed;
}

bool tui_diffview_take_error(struct tui_diffview *dv, char *buf, size_t size)
{
    if (!dv || take(dv) || !dv->failed || dv->fail_said || dv->load_rc == 0)
        return false;
    dv->fail_said = true;
    char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
    diag_format(&dv->load_err, line, sizeof(line));
    if (dv->load_errors > 1)
        snprintf(buf, size, "%s (and %" PRIu64 " more errors: npuscope validate lists them)", line,
                 dv->load_errors - 1);
    else
        snprintf(buf, size, "%s", line);
    return true;
}

bool tui_diffview_load_failure(struct tui_diffview *dv, struct diag *d, uint64_t *errors)
{
    if (!dv || take(dv) || !dv->failed || dv->load_rc == 0)
        return false;
    *d = dv->load_err;
    if (errors)
        *errors = dv->load_errors;
    return true;
}

const char *tui_diffview_take_note(struct tui_diffview *dv)
{
    if (!dv || !take(dv) || dv->note_said)
        return NULL;
    dv->note_said = true;
    return dv->d->note ? dv->d->note : "";
}

void tui_diffview_close(struct tui_diffview *dv)
{
    if (dv && tui_task_running(dv->task)) {
        /* stopped at its next check (a few ms, up to a step that cannot be interrupted:
         * a sort), waited for, however long: the view is closed, not the program */
        struct trace_progress *p;
        while (!(p = atomic_load(&dv->task_p)) && tui_task_running(dv->task))
            ;
        if (p)
            atomic_store(&p->cancel, true);
        while (tui_task_running(dv->task)) {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    tui_diffview_free(dv);
}

void tui_diffview_free(struct tui_diffview *dv)
{
    if (!dv)
        return;
    tui_task_free(dv->task); /* before the models it reads */
    trace_diff_free(dv->next);
    sim_value_free(dv->details[0]);
    sim_value_free(dv->details[1]);
    trace_diff_free(dv->d);
    trace_model_free((struct trace_model *)dv->m[1]);
    free(dv->rows);
    free(dv->path_b);
    free(dv->name[0]);
    free(dv->name[1]);
    free(dv);
}

const char *tui_diffview_name_b(const struct tui_diffview *dv)
{
    return dv->name[1];
}

const struct trace_diff *tui_diffview_diff(const struct tui_diffview *dv)
{
    return dv->d;
}

bool tui_diffview_dirty(const struct tui_diffview *dv)
{
    return dv->dirty || !dv->d; /* while it computes: its progress */
}

/* ---- time ------------------------------------------------------------------------------------ */

/* B's cycle for A's cycle t. */
static uint64_t to_b(const struct tui_diffview *dv, uint64_t t)
{
    return dv->aligned ? trace_diff_align(dv->d, t) : t;
}

static void view_clamp(struct tui_diffview *dv)
{
    double span = dv->cpc * dv->plot_w;
    if (dv->t0 > (double)t_end(dv) - span / 2)
        dv->t0 = (double)t_end(dv) - span / 2;
    if (dv->t0 < 0)
        dv->t0 = 0;
}

static void view_fit(struct tui_diffview *dv)
{
    dv->t0 = 0;
    dv->cpc = dv->plot_w > 0 ? (double)t_end(dv) / dv->plot_w : 1;
    if (dv->cpc < 1)
        dv->cpc = 1;
}

static void cell_range(const struct tui_diffview *dv, int i, uint64_t *a, uint64_t *b)
{
    *a = (uint64_t)floor(dv->t0 + i * dv->cpc);
    *b = (uint64_t)floor(dv->t0 + (i + 1) * dv->cpc);
    if (*b <= *a)
        *b = *a + 1;
}

static long col_of(const struct tui_diffview *dv, uint64_t t)
{
    return (long)floor(((double)t - dv->t0) / dv->cpc);
}

/* Keep the cursor in view by scrolling. */
static void show_cursor(struct tui_diffview *dv)
{
    long col = col_of(dv, dv->cursor);
    if (col < 0 || col >= dv->plot_w) {
        dv->fit = false;
        dv->t0 = (double)dv->cursor - dv->cpc * dv->plot_w / 2;
        view_clamp(dv);
    }
}

/* ---- layout -------------------------------------------------------------------------------------
 */

static void layout(struct tui_diffview *dv, struct tui_rect r, bool unicode)
{
    dv->body = r;
    dv->summary = dv->det = (struct tui_rect){0, 0, 0, 0};
    dv->border_x = -1;
    bool bottom = !dv->bottom_hidden && r.h >= BIG_BODY;
    dv->gantt = r;
    if (!bottom && dv->focus != F_GANTT) { /* a small screen: the focused pane alone */
        *(dv->focus == F_SUMMARY ? &dv->summary : &dv->det) = r;
        dv->gantt = (struct tui_rect){0, 0, 0, 0};
    } else if (bottom) {
        int bh = r.h * 2 / 5;
        bh = bh < 7 ? 7 : bh > 14 ? 14 : bh;
        /* a Gantt with few rows leaves the rest to the panes below */
        int need = 4 + 2 * (int)dv->nrows;
        if (r.h - bh > need)
            bh = r.h - need;
        dv->gantt.h = r.h - bh;
        int by = r.y + r.h - bh;
        if (r.w >= WIDE) {
            int lw = r.w / 2;
            dv->summary = (struct tui_rect){r.x, by, lw, bh};
            dv->det = (struct tui_rect){r.x + lw + 1, by, r.w - lw - 1, bh};
            dv->border_x = r.x + lw;
        } else if (dv->focus == F_DETAILS || (dv->focus == F_GANTT && dv->sel_ev != TUI_NO_EVENT)) {
            dv->det = (struct tui_rect){r.x, by, r.w, bh};
        } else {
            dv->summary = (struct tui_rect){r.x, by, r.w, bh};
        }
    }
    struct tui_rect g = dv->gantt;
    int want = LABEL_MIN;
    for (size_t k = 0; k < dv->nrows; k++) {
        int w = tui_text_width(dv->rows[k].name, strlen(dv->rows[k].name), unicode,
                               TUI_TEXT_UNTRUSTED) +
                2;
        if (w > want)
            want = w;
    }
    if (want > LABEL_MAX)
        want = LABEL_MAX;
    if (want > g.w / 3)
        want = g.w / 3 > LABEL_MIN ? g.w / 3 : LABEL_MIN;
    int old_w = dv->plot_w;
    dv->label_w = want;
    dv->plot_x = g.x + want + 1;
    dv->delta_col = g.w - want - 1 >= 20 + DELTA_W + 1;
    dv->plot_w = g.w - want - 1 - (dv->delta_col ? DELTA_W + 1 : 0);
    if (dv->plot_w < 1)
        dv->plot_w = 1;
    /* title, ruler, then two blocks of a heading and rows */
    dv->rows_h = g.h > 4 ? (g.h - 4) / 2 : 0;
    if (dv->fit)
        view_fit(dv);
    else if (old_w != dv->plot_w)
        view_clamp(dv);
    if (dv->sel >= dv->top + (size_t)dv->rows_h && dv->rows_h > 0)
        dv->top = dv->sel - (size_t)dv->rows_h + 1;
    if (dv->sel < dv->top)
        dv->top = dv->sel;
}

/* ---- the Gantt blocks ------------------------------------------------------------------------ */

static const enum tui_style kind_styles[TRACE_KIND_COUNT] = {
    [TRACE_KIND_MEMORY] = TUI_STYLE_OP_MEMORY,
    [TRACE_KIND_GEMM] = TUI_STYLE_OP_GEMM,
    [TRACE_KIND_MATH] = TUI_STYLE_OP_MATH,
    [TRACE_KIND_UNKNOWN] = TUI_STYLE_OP_UNKNOWN,
};

/* The op of side s shown as selected (the selected op, or its match), or TUI_NO_EVENT. */
static uint64_t shown_op(const struct tui_diffview *dv, int s)
{
    if (dv->sel_ev == TUI_NO_EVENT)
        return TUI_NO_EVENT;
    if (s == dv->sel_side)
        return dv->sel_ev;
    uint64_t o = trace_diff_match_event(dv->d, dv->sel_side, dv->sel_ev);
    return o == TRACE_DIFF_NONE ? TUI_NO_EVENT : o;
}

/* The style of a busy cell [a, b) of track on side s: the shown op, else the kind of the
 * first op in it. */
static enum tui_style cell_style(const struct tui_diffview *dv, int s, uint32_t track, uint64_t a,
                                 uint64_t b)
{
    const struct trace_model *m = dv->m[s];
    uint64_t shown = shown_op(dv, s);
    if (shown != TUI_NO_EVENT) {
        const struct trace_event *e = trace_model_event(m, shown);
        if (e->track == track && e->start < b && e->end > a)
            return TUI_STYLE_OP_SELECTED;
    }
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, track, &idx);
    size_t k = trace_model_track_seek(m, track, a);
    if (k < n) {
        const struct trace_event *e = trace_model_event(m, idx[k]);
        if (e->start < b && e->op_kind < TRACE_KIND_COUNT)
            return kind_styles[e->op_kind];
    }
    return TUI_STYLE_OP_UNKNOWN;
}

static void draw_row(struct tui_diffview *dv, struct tui_canvas *c, int y, size_t k, int s,
                     const struct tui_glyphs *gl, bool focused)
{
    const struct row *r = &dv->rows[k];
    bool sel = k == dv->sel;
    uint32_t track = r->track[s];
    enum tui_style ls = sel && focused      ? TUI_STYLE_LABEL_SEL
                        : sel               ? TUI_STYLE_SELECTION
                        : track == NO_TRACK ? TUI_STYLE_DIM
                                            : TUI_STYLE_LABEL;
    tui_canvas_fill(c, (struct tui_rect){dv->gantt.x, y, dv->label_w, 1}, ' ', ls);
    tui_canvas_text(c, dv->gantt.x + 1, y, dv->label_w - 1, ls, r->name,
                    TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    if (track == NO_TRACK) {
        tui_canvas_text(c, dv->plot_x, y, dv->plot_w, TUI_STYLE_DIM,
                        s ? "(only in A)" : "(only in B)", 0);
    } else {
        for (int i = 0; i < dv->plot_w; i++) {
            uint64_t a, b;
            cell_range(dv, i, &a, &b);
            if (s) {
                uint64_t w = b - a;
                a = to_b(dv, a);
                b = a + w;
            }
            uint64_t busy = trace_model_track_busy(dv->m[s], track, a, b), w = b - a;
            if (!busy)
                continue;
            uint32_t glyph = busy >= w           ? gl->eighths[8]
                             : busy * 3 <= w     ? gl->shade[1]
                             : busy * 3 <= 2 * w ? gl->shade[2]
                                                 : gl->shade[3];
            tui_canvas_put(c, dv->plot_x + i, y, glyph, cell_style(dv, s, track, a, b));
        }
    }
    long cc = col_of(dv, dv->cursor);
    if (cc >= 0 && cc < dv->plot_w) {
        const struct tui_cell *cell = tui_canvas_cell(c, dv->plot_x + (int)cc, y);
        if (cell && cell->cp == ' ')
            tui_canvas_put(c, dv->plot_x + (int)cc, y, gl->vline_light, TUI_STYLE_CURSOR);
    }
    if (s == 1 && dv->delta_col && r->item) {
        /* B's rows: the change of the component's busy cycles over the run */
        const struct trace_diff_item *it = r->item;
        char buf[32];
        double rel = trace_diff_rel((double)it->a.busy, (double)it->b.busy);
        if (it->a.busy == it->b.busy)
            snprintf(buf, sizeof(buf), "=");
        else if (isinf(rel))
            snprintf(buf, sizeof(buf), "new");
        else
            snprintf(buf, sizeof(buf), "%+.0f%%", rel * 100);
        tui_canvas_text(c, dv->plot_x + dv->plot_w + 1, y, DELTA_W,
                        it->a.busy == it->b.busy ? TUI_STYLE_DIM : TUI_STYLE_VALUE, buf,
                        TUI_TEXT_RIGHT);
    }
}

static void draw_ruler(struct tui_diffview *dv, struct tui_canvas *c, int y,
                       const struct tui_glyphs *gl)
{
    char probe[32];
    snprintf(probe, sizeof(probe), "%llu", (unsigned long long)t_end(dv));
    double step = tui_ruler_step(dv->cpc * ((double)strlen(probe) + 2));
    uint64_t s = (uint64_t)step;
    tui_canvas_fill(c, (struct tui_rect){dv->gantt.x, y, dv->gantt.w, 1}, ' ', TUI_STYLE_RULER);
    tui_canvas_text(c, dv->gantt.x, y, dv->label_w, TUI_STYLE_RULER, "cycles", 0);
    double end = dv->t0 + dv->cpc * dv->plot_w;
    for (uint64_t t = (uint64_t)ceil(dv->t0 / step) * s; (double)t < end; t += s) {
        long col = col_of(dv, t);
        if (col < 0 || col >= dv->plot_w)
            continue;
        char label[32];
        tui_fmt_cycle_tick(label, sizeof(label), t, s);
        tui_canvas_put(c, dv->plot_x + (int)col, y, gl->tick, TUI_STYLE_RULER);
        tui_canvas_text(c, dv->plot_x + (int)col + 1, y, dv->plot_w - (int)col - 1, TUI_STYLE_RULER,
                        label, 0);
    }
    long cc = col_of(dv, dv->cursor);
    if (cc >= 0 && cc < dv->plot_w)
        tui_canvas_put(c, dv->plot_x + (int)cc, y, gl->cursor_mark, TUI_STYLE_CURSOR);
}

static const char *match_kind(const struct trace_diff *d)
{
    return d->match == TRACE_REGION_LAUNCH   ? "launch"
           : d->match == TRACE_REGION_MARKER ? "marker region"
                                             : "run";
}

static void draw_heading(struct tui_diffview *dv, struct tui_canvas *c, int y, int s)
{
    struct tui_rect g = dv->gantt;
    tui_canvas_fill(c, (struct tui_rect){g.x, y, g.w, 1}, ' ', TUI_STYLE_GROUP);
    int x = g.x + tui_canvas_text(c, g.x, y, g.w, TUI_STYLE_GROUP, s ? " B  " : " A  ", 0);
    x += tui_canvas_text(c, x, y, g.x + g.w - x, TUI_STYLE_GROUP, dv->name[s],
                         TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    char buf[160];
    uint64_t cyc = s ? dv->d->cycles_b : dv->d->cycles_a;
    int n = snprintf(buf, sizeof(buf), "  %llu cyc", (unsigned long long)cyc);
    if (s && dv->d->cycles_a) {
        double rel = trace_diff_rel((double)dv->d->cycles_a, (double)dv->d->cycles_b);
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, " (%+.1f%%)", rel * 100);
    }
    if (s && dv->aligned) {
        long long off = (long long)to_b(dv, dv->cursor) - (long long)dv->cursor;
        snprintf(buf + n, sizeof(buf) - (size_t)n, "  shifted %+lld cyc at the cursor", off);
    }
    tui_canvas_text(c, x, y, g.x + g.w - x, TUI_STYLE_GROUP, buf, TUI_TEXT_ELLIPSIS);
    if (s && dv->delta_col)
        tui_canvas_text(c, dv->plot_x + dv->plot_w + 1, y, DELTA_W, TUI_STYLE_GROUP,
                        c->unicode ? "Δbusy" : "d busy", TUI_TEXT_RIGHT);
}

static void draw_gantt(struct tui_diffview *dv, struct tui_canvas *c)
{
    struct tui_rect g = dv->gantt;
    if (g.w <= 0 || g.h <= 0)
        return;
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    bool focused = dv->focus == F_GANTT;
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){g.x, g.y, g.w, 1}, ' ', ts);
    char buf[256], cpc[32];
    int n =
        snprintf(buf, sizeof(buf), " Compare  %s  %s cyc/col%s", dv->aligned ? "" : "one time axis",
                 tui_fmt_si(cpc, sizeof(cpc), dv->cpc), dv->fit ? " (fit)" : "");
    if (dv->aligned) {
        n = snprintf(buf, sizeof(buf), " Compare  aligned at each matched %s  %s cyc/col%s",
                     match_kind(dv->d), tui_fmt_si(cpc, sizeof(cpc), dv->cpc),
                     dv->fit ? " (fit)" : "");
    }
    if (dv->nrows > (size_t)dv->rows_h && dv->rows_h > 0)
        snprintf(buf + n, sizeof(buf) - (size_t)n, "  rows %zu-%zu/%zu", dv->top + 1,
                 dv->top + (size_t)dv->rows_h < dv->nrows ? dv->top + (size_t)dv->rows_h
                                                          : dv->nrows,
                 dv->nrows);
    tui_canvas_text(c, g.x, g.y, g.w, ts, buf, TUI_TEXT_ELLIPSIS);
    if (g.h < 2)
        return;
    draw_ruler(dv, c, g.y + 1, gl);
    int y = g.y + 2;
    for (int s = 0; s < 2 && y < g.y + g.h; s++) {
        draw_heading(dv, c, y++, s);
        for (int k = 0; k < dv->rows_h && y < g.y + g.h; k++, y++) {
            size_t row = dv->top + (size_t)k;
            tui_canvas_fill(c, (struct tui_rect){g.x, y, g.w, 1}, ' ', TUI_STYLE_NORMAL);
            if (row < dv->nrows)
                draw_row(dv, c, y, row, s, gl, focused);
        }
    }
    for (; y < g.y + g.h; y++)
        tui_canvas_fill(c, (struct tui_rect){g.x, y, g.w, 1}, ' ', TUI_STYLE_NORMAL);
}

/* ---- lines of the summary and the details ------------------------------------------------- */

/* Lines written into a rectangle from a scroll position on. */
struct lines {
    struct tui_canvas *c;
    struct tui_rect r; /* below the title */
    int scroll, n;
};

/* The y of the next line, or -1 when it is scrolled away or below the rectangle. */
static int line_y(struct lines *l)
{
    int y = l->r.y + l->n - l->scroll;
    l->n++;
    return y >= l->r.y && y < l->r.y + l->r.h ? y : -1;
}

/* A line of columns: key (untrusted text), then up to three values at their columns. */
static void line_cols(struct lines *l, enum tui_style ks, const char *key, int cw, const char *a,
                      const char *b, const char *ch, enum tui_style chs)
{
    int y = line_y(l);
    if (y < 0)
        return;
    struct tui_rect r = l->r;
    tui_canvas_text(l->c, r.x + 1, y, KEY_W, ks, key, TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    int x = r.x + 1 + KEY_W + 1;
    const char *v[3] = {a, b, ch};
    for (int i = 0; i < 3 && x < r.x + r.w; i++) {
        int w = i < 2 ? cw : r.x + r.w - x;
        if (v[i])
            tui_canvas_text(l->c, x, y, w, i == 2 ? chs : TUI_STYLE_NORMAL, v[i],
                            TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        x += w + 1;
    }
}

static void line_text(struct lines *l, enum tui_style st, const char *text)
{
    int y = line_y(l);
    if (y >= 0)
        tui_canvas_text(l->c, l->r.x + 1, y, l->r.w - 1, st, text,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
}

static void pane_title(struct tui_canvas *c, struct tui_rect r, bool focused, const char *title,
                       int scroll, int lines)
{
    enum tui_style st = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', st);
    char buf[160];
    if (lines > r.h - 1 && r.h > 1)
        snprintf(buf, sizeof(buf), "%s  lines %d-%d/%d", title, scroll + 1,
                 scroll + r.h - 1 < lines ? scroll + r.h - 1 : lines, lines);
    else
        snprintf(buf, sizeof(buf), "%s", title);
    tui_canvas_text(c, r.x, r.y, r.w, st, buf, TUI_TEXT_ELLIPSIS);
}

/* "+12288 (+89.9%)", "=", "new". */
static const char *change_text(double a, double b, char *buf, size_t size)
{
    double rel = trace_diff_rel(a, b);
    if (a == b)
        snprintf(buf, size, "=");
    else if (isinf(rel))
        snprintf(buf, size, "%+.6g (new)", b - a);
    else
        snprintf(buf, size, "%+.6g (%+.1f%%)", b - a, rel * 100);
    return buf;
}

static enum tui_style change_style(double a, double b)
{
    return a == b ? TUI_STYLE_DIM : TUI_STYLE_VALUE;
}

/* A row of numbers: key, A, B, the change. */
static void num_row(struct lines *l, int cw, const char *key, double a, double b)
{
    char sa[32], sb[32], ch[64];
    snprintf(sa, sizeof(sa), "%.6g", a);
    snprintf(sb, sizeof(sb), "%.6g", b);
    line_cols(l, TUI_STYLE_NORMAL, key, cw, sa, sb, change_text(a, b, ch, sizeof(ch)),
              change_style(a, b));
}

static void util_row(struct lines *l, int cw, const char *key, double a, double b)
{
    char sa[32], sb[32], ch[64];
    snprintf(sa, sizeof(sa), "%.1f%%", a * 100);
    snprintf(sb, sizeof(sb), "%.1f%%", b * 100);
    if (fabs(b - a) < 0.0005)
        snprintf(ch, sizeof(ch), "=");
    else
        snprintf(ch, sizeof(ch), "%+.1f pt", (b - a) * 100);
    line_cols(l, TUI_STYLE_NORMAL, key, cw, sa, sb, ch, change_style(a, b));
}

static void draw_summary(struct tui_diffview *dv, struct tui_canvas *c)
{
    struct tui_rect r = dv->summary;
    if (r.w <= 0 || r.h <= 0)
        return;
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    const struct trace_diff *d = dv->d;
    struct lines l = {c, {r.x, r.y + 1, r.w, r.h - 1}, dv->scroll[F_SUMMARY], 0};
    int cw = (r.w - KEY_W - 3) / 4;
    cw = cw < 8 ? 8 : cw > 14 ? 14 : cw;
    line_cols(&l, TUI_STYLE_GROUP, "", cw, "A", "B", "change", TUI_STYLE_GROUP);
    char key[64], buf[256], a1[48], a2[48];
    num_row(&l, cw, "cycles", (double)d->cycles_a, (double)d->cycles_b);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++) {
        const struct trace_diff_item *it = &d->run.engines[e];
        if (!it->a.ops && !it->b.ops)
            continue;
        snprintf(key, sizeof(key), "%s busy", it->name);
        num_row(&l, cw, key, (double)it->a.busy, (double)it->b.busy);
        snprintf(key, sizeof(key), "%s util", it->name);
        util_row(&l, cw, key, d->cycles_a ? (double)it->a.busy / (double)d->cycles_a : 0,
                 d->cycles_b ? (double)it->b.busy / (double)d->cycles_b : 0);
    }
    num_row(&l, cw, "ops", (double)d->run.a->all.ops, (double)d->run.b->all.ops);
    snprintf(a1, sizeof(a1), "%llu removed", (unsigned long long)d->run.ops_removed);
    snprintf(a2, sizeof(a2), "%llu added", (unsigned long long)d->run.ops_added);
    line_cols(&l, TUI_STYLE_NORMAL, "ops +/-", cw, a1, a2, "",
              d->run.ops_added || d->run.ops_removed ? TUI_STYLE_VALUE : TUI_STYLE_DIM);
    num_row(&l, cw, "DRAM read", (double)d->bw_a.read, (double)d->bw_b.read);
    num_row(&l, cw, "DRAM write", (double)d->bw_a.write, (double)d->bw_b.write);
    num_row(&l, cw, "peak B/cyc", round(d->bw_a.peak * 1000) / 1000,
            round(d->bw_b.peak * 1000) / 1000);
    if (d->main_engine >= 0) {
        const struct trace_diff_item *it = &d->run.engines[d->main_engine];
        snprintf(buf, sizeof(buf), "main change: %s busy %s", it->name,
                 change_text((double)it->a.busy, (double)it->b.busy, a1, sizeof(a1)));
        line_text(&l, TUI_STYLE_VALUE, buf);
    } else if (!d->changes) {
        line_text(&l, TUI_STYLE_STATUS, "no change: the same in everything compared");
    }
    if (d->note)
        line_text(&l, TUI_STYLE_STATUS, d->note);
    snprintf(buf, sizeof(buf), "config_snapshot: %zu key%s differ%s", d->nconfig,
             d->nconfig == 1 ? "" : "s", d->nconfig == 1 ? "s" : "");
    line_text(&l, TUI_STYLE_GROUP, buf);
    for (size_t i = 0; i < d->nconfig; i++) {
        char va[64], vb[64];
        snprintf(buf, sizeof(buf), "%s: %s -> %s", d->config[i].key,
                 trace_diff_value_text(d->config[i].a, va, sizeof(va)),
                 trace_diff_value_text(d->config[i].b, vb, sizeof(vb)));
        line_text(&l, TUI_STYLE_NORMAL, buf);
    }
    size_t nr;
    const struct trace_diff_region *rg = trace_diff_matched_regions(d, &nr);
    if (d->match != TRACE_REGION_RUN) {
        snprintf(buf, sizeof(buf), "%s (cycles)",
                 d->match == TRACE_REGION_LAUNCH ? "kernel launches" : "marker regions");
        line_text(&l, TUI_STYLE_GROUP, buf);
        for (size_t i = 0; i < nr; i++) {
            const struct trace_diff_region *x = &rg[i];
            snprintf(key, sizeof(key), "%s%s", x->name, x->occurrence ? " #" : "");
            if (x->occurrence)
                snprintf(key + strlen(key), sizeof(key) - strlen(key), "%u", x->occurrence + 1);
            char sa[32] = "-", sb[32] = "-", ch[64] = "";
            if (x->a)
                snprintf(sa, sizeof(sa), "%llu", (unsigned long long)trace_region_length(x->a));
            if (x->b)
                snprintf(sb, sizeof(sb), "%llu", (unsigned long long)trace_region_length(x->b));
            if (x->a && x->b)
                change_text((double)trace_region_length(x->a), (double)trace_region_length(x->b),
                            ch, sizeof(ch));
            else
                snprintf(ch, sizeof(ch), "only in %s", x->a ? "A" : "B");
            line_cols(&l, TUI_STYLE_NORMAL, key, cw, sa, sb, ch,
                      x->a && x->b && trace_region_length(x->a) == trace_region_length(x->b)
                          ? TUI_STYLE_DIM
                          : TUI_STYLE_VALUE);
        }
    }
    dv->lines[F_SUMMARY] = l.n;
    pane_title(c, r, dv->focus == F_SUMMARY, " Summary  A -> B", dv->scroll[F_SUMMARY], l.n);
}

/* A value in one line: scalars as JSON writes them, lists and maps inline. */
static void value_inline(const struct sim_value *v, char *buf, size_t size)
{
    if (!v || (v->type != SIM_V_LIST && v->type != SIM_V_MAP)) {
        trace_diff_value_text(v, buf, size);
        return;
    }
    bool map = v->type == SIM_V_MAP;
    size_t n = map ? v->u.map.len : v->u.list.len, used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "%c", map ? '{' : '[');
    for (size_t i = 0; i < n && used + 8 < size; i++) {
        char item[128];
        value_inline(map ? v->u.map.vals[i] : v->u.list.items[i], item, sizeof(item));
        int k = map ? snprintf(buf + used, size - used, "%s%s: %s", i ? ", " : "", v->u.map.keys[i],
                               item)
                    : snprintf(buf + used, size - used, "%s%s", i ? ", " : "", item);
        used = k < 0 || used + (size_t)k >= size ? size - 1 : used + (size_t)k;
    }
    if (used + 2 <= size)
        snprintf(buf + used, size - used, "%c", map ? '}' : ']');
}

static void ev_field(const struct trace_model *m, uint64_t ev, int f, char *buf, size_t size)
{
    buf[0] = '\0';
    if (ev == TUI_NO_EVENT)
        return;
    const struct trace_event *e = trace_model_event(m, ev);
    switch (f) {
    case 0: snprintf(buf, size, "%s", trace_model_str(m, e->op)); break;
    case 1:
        snprintf(buf, size, "%s", trace_model_str(m, trace_model_track_get(m, e->track)->name));
        break;
    case 2: snprintf(buf, size, "%llu", (unsigned long long)e->start); break;
    case 3: snprintf(buf, size, "%llu", (unsigned long long)e->end); break;
    case 4: snprintf(buf, size, "%llu", (unsigned long long)(e->end - e->start)); break;
    case 5:
        if (e->cmdq_id != TRACE_NO_CMDQ)
            snprintf(buf, size, "%d", (int)e->cmdq_id);
        break;
    case 6:
        if (e->layer != TRACE_NO_STR)
            snprintf(buf, size, "%s", trace_model_str(m, e->layer));
        break;
    default:
        if (e->tile != TRACE_NO_STR)
            snprintf(buf, size, "%s", trace_model_str(m, e->tile));
        break;
    }
}

static void draw_details(struct tui_diffview *dv, struct tui_canvas *c)
{
    struct tui_rect r = dv->det;
    if (r.w <= 0 || r.h <= 0)
        return;
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    struct lines l = {c, {r.x, r.y + 1, r.w, r.h - 1}, dv->scroll[F_DETAILS], 0};
    int cw = (r.w - KEY_W - 3) / 2;
    if (dv->sel_ev == TUI_NO_EVENT) {
        line_text(&l, TUI_STYLE_DIM, "Enter: the op under the cursor on the selected row,");
        line_text(&l, TUI_STYLE_DIM, "with its match in the other trace; [ ] the previous or");
        line_text(&l, TUI_STYLE_DIM, "next op; a: one time axis or aligned regions.");
    } else {
        uint64_t ev[2] = {shown_op(dv, 0), shown_op(dv, 1)};
        line_cols(&l, TUI_STYLE_GROUP, "", cw, "A", "B", NULL, TUI_STYLE_GROUP);
        static const char *const keys[] = {"op",     "on",   "start", "end",
                                           "cycles", "cmdq", "layer", "tile"};
        for (int f = 0; f < 8; f++) {
            char va[256], vb[256];
            ev_field(dv->m[0], ev[0], f, va, sizeof(va));
            ev_field(dv->m[1], ev[1], f, vb, sizeof(vb));
            if (ev[0] == TUI_NO_EVENT)
                snprintf(va, sizeof(va), "%s", f ? "" : "(no match: only in B)");
            if (ev[1] == TUI_NO_EVENT)
                snprintf(vb, sizeof(vb), "%s", f ? "" : "(no match: only in A)");
            if (f >= 5 && !va[0] && !vb[0])
                continue;
            int y = line_y(&l);
            if (y < 0)
                continue;
            bool same = strcmp(va, vb) == 0;
            tui_canvas_text(c, r.x + 1, y, KEY_W, TUI_STYLE_NORMAL, keys[f], 0);
            tui_canvas_text(c, r.x + KEY_W + 2, y, cw, TUI_STYLE_NORMAL, va,
                            TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
            tui_canvas_text(c, r.x + KEY_W + 3 + cw, y, r.w - KEY_W - 3 - cw,
                            same || ev[0] == TUI_NO_EVENT || ev[1] == TUI_NO_EVENT
                                ? TUI_STYLE_NORMAL
                                : TUI_STYLE_VALUE,
                            vb, TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        }
        if (ev[0] != TUI_NO_EVENT && ev[1] != TUI_NO_EVENT) {
            const struct trace_event *ea = trace_model_event(dv->m[0], ev[0]);
            const struct trace_event *eb = trace_model_event(dv->m[1], ev[1]);
            double la = (double)(ea->end - ea->start), lb = (double)(eb->end - eb->start);
            char ch[64], text[96];
            snprintf(text, sizeof(text), "cycles %s", change_text(la, lb, ch, sizeof(ch)));
            int y = line_y(&l);
            if (y >= 0) {
                tui_canvas_text(c, r.x + 1, y, KEY_W, TUI_STYLE_NORMAL, "change", 0);
                tui_canvas_text(c, r.x + KEY_W + 2, y, r.w - KEY_W - 2, change_style(la, lb), text,
                                0);
            }
        }
        /* the details (params) of both, A's keys first */
        const struct sim_value *da = dv->details[0], *db = dv->details[1];
        for (int s = 0; s < 2; s++) {
            const struct sim_value *mine = s ? db : da, *other = s ? da : db;
            if (!mine || mine->type != SIM_V_MAP)
                continue;
            for (size_t i = 0; i < mine->u.map.len; i++) {
                const char *k = mine->u.map.keys[i];
                if (s && other && other->type == SIM_V_MAP && sim_value_map_get(other, k))
                    continue; /* shown with A's */
                const struct sim_value *va = s ? NULL : mine->u.map.vals[i];
                const struct sim_value *vb = s ? mine->u.map.vals[i] : sim_value_map_get(db, k);
                char ta[256] = "", tb[256] = "";
                if (va || ev[0] != TUI_NO_EVENT)
                    value_inline(va, ta, sizeof(ta));
                if (vb || ev[1] != TUI_NO_EVENT)
                    value_inline(vb, tb, sizeof(tb));
                int y = line_y(&l);
                if (y < 0)
                    continue;
                bool same = va && vb && sim_value_equal(va, vb);
                tui_canvas_text(c, r.x + 1, y, KEY_W, TUI_STYLE_DIM, k,
                                TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
                tui_canvas_text(c, r.x + KEY_W + 2, y, cw, TUI_STYLE_NORMAL, ta,
                                TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
                tui_canvas_text(c, r.x + KEY_W + 3 + cw, y, r.w - KEY_W - 3 - cw,
                                same || ev[0] == TUI_NO_EVENT || ev[1] == TUI_NO_EVENT
                                    ? TUI_STYLE_NORMAL
                                    : TUI_STYLE_VALUE,
                                tb, TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
            }
        }
    }
    dv->lines[F_DETAILS] = l.n;
    pane_title(c, r, dv->focus == F_DETAILS, " Details  A | B", dv->scroll[F_DETAILS], l.n);
}

void tui_diffview_render(struct tui_diffview *dv, struct tui_canvas *c, struct tui_rect r)
{
    if (!take(dv)) { /* still comparing: its progress */
        tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
        char title[200], a[64], b[64];
        sim_escape(dv->name[0], strlen(dv->name[0]), a, sizeof(a));
        sim_escape(dv->name[1], strlen(dv->name[1]), b, sizeof(b));
        snprintf(title, sizeof(title), " Comparing %s with %s", a, b);
        tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', TUI_STYLE_TITLE_FOCUS);
        tui_canvas_text(c, r.x, r.y, r.w, TUI_STYLE_TITLE_FOCUS, title, TUI_TEXT_ELLIPSIS);
        if (r.h > 1)
            tui_task_draw(dv->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1},
                          "comparison");
        if (r.h > 6)
            tui_canvas_text(c, r.x + 1, r.y + 5, r.w - 1, TUI_STYLE_DIM, "D closes the comparison",
                            0);
        return;
    }
    layout(dv, r, c->unicode);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    draw_gantt(dv, c);
    draw_summary(dv, c);
    draw_details(dv, c);
    if (dv->border_x >= 0)
        for (int y = dv->summary.y; y < dv->summary.y + dv->summary.h; y++)
            tui_canvas_put(c, dv->border_x, y, tui_glyphs(c->unicode)->vline, TUI_STYLE_BORDER);
    dv->dirty = false;
}

/* ---- actions -------------------------------------------------------------------------------- */

static void set_cursor(struct tui_diffview *dv, struct tui_view *v, uint64_t t)
{
    uint64_t e = t_end(dv);
    dv->cursor = t >= e ? e - 1 : t;
    show_cursor(dv);
    tui_view_set_cursor(v, dv->cursor);
}

/* Select op ev of side s (TUI_NO_EVENT: none) and load the details of it and its match. */
static void select_op(struct tui_diffview *dv, int s, uint64_t ev)
{
    dv->sel_side = s;
    dv->sel_ev = ev;
    for (int k = 0; k < 2; k++) {
        sim_value_free(dv->details[k]);
        dv->details[k] = NULL;
    }
    for (int k = 0; k < 2 && ev != TUI_NO_EVENT; k++) {
        uint64_t o = shown_op(dv, k);
        if (o != TUI_NO_EVENT)
            dv->details[k] = trace_model_event_details(dv->m[k], o);
    }
    dv->scroll[F_DETAILS] = 0;
}

/* The op of track on side s running at t (the last one starting at or before it), or
 * TUI_NO_EVENT. */
static uint64_t op_at(const struct trace_model *m, uint32_t track, uint64_t t)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, track, &idx);
    uint64_t found = TUI_NO_EVENT;
    for (size_t k = trace_model_track_seek(m, track, t); k < n; k++) {
        const struct trace_event *e = trace_model_event(m, idx[k]);
        if (e->start > t)
            break;
        if (e->end > t || (e->start == t && e->end == t))
            found = idx[k];
    }
    return found;
}

static enum tui_result select_at_cursor(struct tui_diffview *dv, struct tui_view *v)
{
    if (!dv->nrows)
        return TUI_RES_HANDLED;
    const struct row *r = &dv->rows[dv->sel];
    for (int s = 0; s < 2; s++) {
        if (r->track[s] == NO_TRACK)
            continue;
        uint64_t t = s ? to_b(dv, dv->cursor) : dv->cursor;
        uint64_t ev = op_at(dv->m[s], r->track[s], t);
        if (ev != TUI_NO_EVENT) {
            select_op(dv, s, ev);
            return TUI_RES_REDRAW;
        }
    }
    tui_view_message(v, TUI_STYLE_STATUS, "no op under the cursor on this row ([ ] find one)");
    return TUI_RES_REDRAW;
}

/*
 * The next (dir > 0) or previous op on the selected row, on A's track (B's for a row only
 * in B): after or before the selected op when it is on this row, else the first starting
 * at or after the cursor, or the last before it. Selected, the cursor at its start.
 */
static enum tui_result step_op(struct tui_diffview *dv, struct tui_view *v, int dir)
{
    if (!dv->nrows)
        return TUI_RES_HANDLED;
    const struct row *r = &dv->rows[dv->sel];
    int s = r->track[0] != NO_TRACK ? 0 : 1;
    const struct trace_model *m = dv->m[s];
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, r->track[s], &idx);
    uint64_t t = s ? to_b(dv, dv->cursor) : dv->cursor;
    size_t at = n; /* the selected op's position in the row, or n */
    for (size_t k = 0; dv->sel_ev != TUI_NO_EVENT && dv->sel_side == s && k < n && at == n; k++)
        if (idx[k] == dv->sel_ev)
            at = k;
    size_t pick = n;
    if (at < n) {
        pick = dir > 0 ? at + 1 : at > 0 ? at - 1 : n;
    } else {
        for (size_t k = 0; k < n; k++) { /* idx is sorted by start */
            uint64_t start = trace_model_event(m, idx[k])->start;
            if (dir > 0 && start >= t) {
                pick = k;
                break;
            }
            if (dir < 0 && start < t)
                pick = k;
        }
    }
    if (pick >= n) {
        tui_view_message(v, TUI_STYLE_STATUS, "no %s op on this row",
                         dir > 0 ? "later" : "earlier");
        return TUI_RES_REDRAW;
    }
    select_op(dv, s, idx[pick]);
    uint64_t start = trace_model_event(m, idx[pick])->start;
    /* a B op: the cursor where its start is drawn */
    set_cursor(dv, v, s && dv->aligned ? start - (to_b(dv, dv->cursor) - dv->cursor) : start);
    return TUI_RES_REDRAW;
}

static void zoom(struct tui_diffview *dv, double factor)
{
    double at = (double)dv->cursor;
    long col = col_of(dv, dv->cursor);
    if (col < 0 || col >= dv->plot_w)
        at = dv->t0 + dv->cpc * dv->plot_w / 2;
    double ncpc = dv->cpc * factor;
    if (ncpc < 1.0 / 8)
        ncpc = 1.0 / 8;
    double max = (double)t_end(dv) / (dv->plot_w > 0 ? dv->plot_w : 1);
    if (ncpc > max && max >= 1.0 / 8)
        ncpc = max;
    dv->t0 = at - (at - dv->t0) * ncpc / dv->cpc;
    dv->cpc = ncpc;
    dv->fit = false;
    view_clamp(dv);
}

static void scroll_pane(struct tui_diffview *dv, int f, int delta)
{
    int h = (f == F_SUMMARY ? dv->summary.h : dv->det.h) - 1;
    int max = dv->lines[f] > h ? dv->lines[f] - h : 0;
    dv->scroll[f] += delta;
    if (dv->scroll[f] > max)
        dv->scroll[f] = max;
    if (dv->scroll[f] < 0)
        dv->scroll[f] = 0;
}

static void move_row(struct tui_diffview *dv, long delta)
{
    if (!dv->nrows)
        return;
    long s = (long)dv->sel + delta;
    dv->sel = s < 0 ? 0 : (size_t)s >= dv->nrows ? dv->nrows - 1 : (size_t)s;
}

enum tui_result tui_diffview_action(struct tui_diffview *dv, enum tui_action act,
                                    struct tui_view *v)
{
    if (!take(dv))
        return TUI_RES_IGNORED; /* still comparing: the app's keys only */
    int page = dv->rows_h > 1 ? dv->rows_h - 1 : 1;
    enum tui_result res = TUI_RES_REDRAW;
    switch (act) {
    case TUI_ACT_ZOOM_IN: zoom(dv, 0.5); break;
    case TUI_ACT_ZOOM_OUT: zoom(dv, 2); break;
    case TUI_ACT_FIT: dv->fit = true; break;
    case TUI_ACT_PAN_LEFT:
    case TUI_ACT_PAN_RIGHT: {
        int cols = dv->plot_w / 4 + 1; /* a quarter of the plot */
        dv->fit = false;
        dv->t0 += (act == TUI_ACT_PAN_LEFT ? -1 : 1) * dv->cpc * cols;
        view_clamp(dv);
        break;
    }
    case TUI_ACT_CURSOR_LEFT: {
        uint64_t step = dv->cpc < 1 ? 1 : (uint64_t)dv->cpc;
        set_cursor(dv, v, dv->cursor > step ? dv->cursor - step : 0);
        break;
    }
    case TUI_ACT_CURSOR_RIGHT:
        set_cursor(dv, v, dv->cursor + (dv->cpc < 1 ? 1 : (uint64_t)dv->cpc));
        break;
    case TUI_ACT_START: set_cursor(dv, v, 0); break;
    case TUI_ACT_END: set_cursor(dv, v, t_end(dv) - 1); break;
    case TUI_ACT_UP:
    case TUI_ACT_DOWN:
    case TUI_ACT_PAGE_UP:
    case TUI_ACT_PAGE_DOWN: {
        int dir = act == TUI_ACT_UP || act == TUI_ACT_PAGE_UP ? -1 : 1;
        bool pg = act == TUI_ACT_PAGE_UP || act == TUI_ACT_PAGE_DOWN;
        if (dv->focus == F_GANTT)
            move_row(dv, dir * (pg ? page : 1));
        else
            scroll_pane(dv, dv->focus, dir * (pg ? 10 : 1));
        break;
    }
    case TUI_ACT_SELECT: res = select_at_cursor(dv, v); break;
    case TUI_ACT_NEXT_OP: res = step_op(dv, v, 1); break;
    case TUI_ACT_PREV_OP: res = step_op(dv, v, -1); break;
    case TUI_ACT_CLEAR: select_op(dv, 0, TUI_NO_EVENT); break;
    case TUI_ACT_NEXT_PANE: dv->focus = (dv->focus + 1) % F_COUNT; break;
    case TUI_ACT_PREV_PANE: dv->focus = (dv->focus + F_COUNT - 1) % F_COUNT; break;
    case TUI_ACT_TOGGLE_BOTTOM:
        dv->bottom_hidden = !dv->bottom_hidden;
        dv->focus = F_GANTT;
        break;
    case TUI_ACT_DIFF_ALIGN:
        dv->aligned = !dv->aligned;
        if (dv->aligned && dv->d->match == TRACE_REGION_RUN)
            tui_view_message(v, TUI_STYLE_STATUS,
                             "aligned: no launch or region in common, so nothing moves");
        else if (dv->aligned)
            tui_view_message(v, TUI_STYLE_STATUS, "B aligned at the start of each matched %s",
                             match_kind(dv->d));
        else
            tui_view_message(v, TUI_STYLE_STATUS, "one time axis");
        break;
    default: return TUI_RES_IGNORED;
    }
    dv->dirty = true;
    return res;
}
