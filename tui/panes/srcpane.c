/*
 * The source pane (see srcpane.h): the profile, the rows (source lines, then the kernel's
 * other lines), the live per-PE markers, and the walk over a line's ops.
 */
#include "tui/panes/srcpane.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/srcprof.h"
#include "trace/analysis/srcstep.h"
#include "trace/file/srctext.h"
#include "tui/panes/task.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    REFRESH_NS = 1000 * 1000 * 1000,
    WALK_HERE = 1 << 20, /* ops a walk looks at on the main loop before the worker goes on */
};

/* A row: line n of the source (1-based, with its profile line or none), or a profile line
 * of another file (n 0). */
struct row {
    uint32_t n;
    int32_t line; /* index into the kernel's lines, or -1 */
};

struct tui_srcpane {
    const struct trace_model *m; /* borrowed */
    struct trace_srcprof *prof;  /* owned */
    struct tui_task *task;       /* owned: computes next (tui/panes/task.h) */
    struct trace_srcprof *next;  /* owned: the profile being computed (the task's while it runs) */
    /* walking a line's ops (Enter, n, N): on a worker past the first WALK_HERE ops */
    struct tui_task *walk_task; /* owned */
    uint64_t walk_at, walk_left, walk_found;
    uint16_t walk_site;
    int walk_dir;
    uint64_t gen, drawn_gen, computed_at, drawn_rev;
    bool valid;
    size_t kernel;              /* index into prof->k */
    uint64_t for_ev;            /* the focus event the kernel was chosen for */
    struct trace_srctext *text; /* owned: the kernel's file, or NULL */
    uint32_t text_file;         /* interned name text is for */
    struct row *rows;           /* owned */
    size_t nrows, sel, top;
    uint32_t *pes_at;                 /* owned, per row: PEs whose last op came from its line */
    uint64_t marked_at, marked_focus; /* the time and focused op pes_at is for */
    size_t sel_pe_row;                /* the row of the focused op's PE, or SIZE_MAX */
    int rows_visible, list_y;
};

static void walk_discard(void *arg);
static bool walk_work(struct tui_srcpane *p, struct tui_view *v);

/* A live profile cancelled before it was done (tui_task_release): dropped, stale again. */
static void discard(void *arg)
{
    struct tui_srcpane *p = arg;
    trace_srcprof_free(p->next);
    p->next = NULL;
    p->gen = UINT64_MAX;
}

struct tui_srcpane *tui_srcpane_new(struct tui_view *v)
{
    struct tui_srcpane *p = sim_xcalloc(1, sizeof(*p));
    p->m = v->m;
    p->task = tui_task_new();
    p->walk_task = tui_task_new();
    if (v->live) {
        tui_task_set_live(p->task, discard);
        tui_task_set_live(p->walk_task, walk_discard);
    }
    p->for_ev = TUI_NO_EVENT;
    p->sel_pe_row = SIZE_MAX;
    return p;
}

void tui_srcpane_free(struct tui_srcpane *p)
{
    if (!p)
        return;
    tui_task_free(p->task);
    tui_task_free(p->walk_task);
    trace_srcprof_free(p->next);
    trace_srcprof_free(p->prof);
    trace_srctext_free(p->text);
    free(p->rows);
    free(p->pes_at);
    free(p);
}

static const struct trace_srckernel *kernel(const struct tui_srcpane *p)
{
    return p->prof && p->kernel < p->prof->nk ? &p->prof->k[p->kernel] : NULL;
}

static bool row_line_of(const struct trace_srckernel *k, struct row r)
{
    return k && r.line >= 0;
}

/* The rows of the current kernel, and the live markers. */
static void build_rows(struct tui_srcpane *p)
{
    free(p->rows);
    free(p->pes_at);
    p->rows = NULL;
    p->pes_at = NULL;
    p->nrows = 0;
    const struct trace_srckernel *k = kernel(p);
    if (!k)
        return;
    if (k->file != p->text_file || !p->text) {
        trace_srctext_free(p->text);
        p->text = k->file != TRACE_NO_STR ? trace_srctext_find(trace_model_str(p->m, k->file), NULL)
                                          : NULL;
        p->text_file = k->file;
    }
    size_t nsrc = p->text ? p->text->nlines : 0;
    p->rows = sim_xcalloc(nsrc + k->nlines + 1, sizeof(*p->rows));
    for (size_t i = 0; i < nsrc; i++)
        p->rows[p->nrows++] = (struct row){(uint32_t)i + 1, -1};
    for (size_t i = 0; i < k->nlines; i++) {
        const struct trace_site *s = trace_model_site_get(p->m, k->lines[i].site);
        if (p->text && s && s->file == k->file && s->line >= 1 && s->line <= nsrc)
            p->rows[s->line - 1].line = (int32_t)i;
        else
            p->rows[p->nrows++] = (struct row){0, (int32_t)i};
    }
    p->pes_at = sim_xcalloc(p->nrows + 1, sizeof(*p->pes_at));
    if (p->sel == 0) /* start on the first line that issued ops */
        for (size_t r = 0; r < p->nrows && !row_line_of(k, p->rows[r]); r++)
            p->sel = r + 1 < p->nrows ? r + 1 : 0;
    p->marked_at = UINT64_MAX - 1; /* markers() recomputes them */
}

/* The per-PE markers: each PE (a track's name up to its last '.') at the line of its latest
 * op with a call site, as of now (live) or of the time cursor (a saved trace); the PE of the
 * focused op is the selected one. */
static void markers(struct tui_srcpane *p, const struct tui_view *v)
{
    const struct trace_srckernel *k = kernel(p);
    uint64_t time = v->live ? UINT64_MAX : v->cursor;
    uint64_t focus = tui_view_focus_event(v);
    if (!k || !p->pes_at || (time == p->marked_at && focus == p->marked_focus))
        return;
    p->marked_at = time;
    p->marked_focus = focus;
    memset(p->pes_at, 0, p->nrows * sizeof(*p->pes_at));
    size_t was = p->sel_pe_row;
    p->sel_pe_row = SIZE_MAX;
    char sel_pe[128];
    trace_srcstep_pe_of(p->m, focus, sel_pe, sizeof(sel_pe));
    size_t ntr = trace_model_track_count(p->m);
    uint64_t *last = sim_xcalloc(ntr + 1, sizeof(*last));
    for (size_t t = 0; t < ntr; t++)
        last[t] = trace_srcstep_track_last(p->m, (uint32_t)t, time);
    for (size_t t = 0; t < ntr; t++) {
        if (last[t] == UINT64_MAX)
            continue;
        const struct trace_event *e = trace_model_event(p->m, last[t]);
        const char *name = trace_model_str(p->m, trace_model_track_get(p->m, (uint32_t)t)->name);
        const char *dot = strrchr(name, '.');
        size_t len = dot ? (size_t)(dot - name) : strlen(name);
        bool later = false; /* another engine of the same PE issued later */
        for (size_t u = 0; u < ntr && !later; u++) {
            if (u == t || last[u] == UINT64_MAX)
                continue;
            const char *o = trace_model_str(p->m, trace_model_track_get(p->m, (uint32_t)u)->name);
            uint64_t su = trace_model_event(p->m, last[u])->start;
            later = strncmp(o, name, len) == 0 && o[len] == '.' &&
                    (su > e->start || (su == e->start && u < t));
        }
        if (later)
            continue;
        bool selected = sel_pe[0] && strlen(sel_pe) == len && strncmp(sel_pe, name, len) == 0;
        for (size_t r = 0; r < p->nrows; r++)
            if (p->rows[r].line >= 0 && k->lines[p->rows[r].line].site == e->site) {
                p->pes_at[r]++;
                if (selected)
                    p->sel_pe_row = r;
            }
    }
    free(last);
    if (p->sel_pe_row != SIZE_MAX && p->sel_pe_row != was)
        p->sel = p->sel_pe_row; /* the selected PE moved to another line: follow it */
}

static void run(void *arg, struct trace_progress *pg)
{
    struct tui_srcpane *p = arg;
    p->next = trace_srcprof_new_progress(p->m, pg);
}

/* Take a finished profile: its kernel the focused op's. Returns true when one was taken. */
static bool take(struct tui_srcpane *p, const struct tui_view *v)
{
    if (!tui_task_take_done(p->task))
        return false;
    if (!p->next) /* cancelled */
        return false;
    trace_srcprof_free(p->prof);
    p->prof = p->next;
    p->next = NULL;
    size_t k = trace_srcprof_kernel_of(p->prof, p->m, tui_view_focus_event(v));
    p->for_ev = tui_view_focus_event(v);
    p->kernel = k != SIZE_MAX ? k : (p->kernel < p->prof->nk ? p->kernel : 0);
    p->computed_at = tui_now_ns();
    p->valid = true;
    build_rows(p);
    if (p->sel >= p->nrows)
        p->sel = p->nrows ? p->nrows - 1 : 0;
    return true;
}

/* Compute the profile: one pass over every op (171 ms at ten million), so on the worker,
 * take picking it up; live, over the model held still meanwhile (tui/panes/task.h). */
static void compute(struct tui_srcpane *p, const struct tui_view *v)
{
    if (tui_task_running(p->task) || take(p, v)) /* a run that ended since the last look */
        return;
    p->gen = trace_model_generation(p->m);
    tui_task_start(p->task, run, p, true);
    take(p, v);
}

static bool stale(const struct tui_srcpane *p)
{
    return !p->valid || p->gen != trace_model_generation(p->m);
}

static bool src_sync(void *self, struct tui_view *v)
{
    struct tui_srcpane *p = self;
    bool took = take(p, v);
    if (stale(p) &&
        (!p->valid || (tui_now_ns() - p->computed_at >= REFRESH_NS && tui_task_due(p->task))))
        compute(p, v);
    uint64_t f = tui_view_focus_event(v);
    if (p->valid && f != p->for_ev) {
        p->for_ev = f;
        size_t k = trace_srcprof_kernel_of(p->prof, p->m, f);
        if (k != SIZE_MAX && k != p->kernel) {
            p->kernel = k;
            p->sel = p->top = 0;
            build_rows(p);
            return true;
        }
    }
    return took || tui_task_running(p->task) ||
           (p->valid && (p->gen != p->drawn_gen || v->rev != p->drawn_rev));
}

static bool src_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_srcpane *p = self;
    (void)budget_ns;
    if (walk_work(p, v))
        return true;
    if (take(p, v)) {
        v->result = true; /* drawn once more, at once */
        return true;
    }
    if (tui_task_running(p->task))
        return true;
    if (!stale(p))
        return false;
    if (!p->valid || (tui_now_ns() - p->computed_at >= REFRESH_NS && tui_task_due(p->task)))
        compute(p, v);
    return stale(p) || tui_task_running(p->task);
}

/* The profile line of row r, or NULL. */
static const struct trace_srcline *row_line(const struct tui_srcpane *p, size_t r)
{
    const struct trace_srckernel *k = kernel(p);
    return k && r < p->nrows && p->rows[r].line >= 0 ? &k->lines[p->rows[r].line] : NULL;
}

static void src_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                       bool focused)
{
    struct tui_srcpane *p = self;
    if (!p->valid)
        compute(p, v);
    p->drawn_gen = p->gen;
    p->drawn_rev = v->rev;
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    const struct trace_srckernel *k = kernel(p);
    char title[400];
    if (!p->valid) { /* the first profile, on the worker: its progress */
        tui_canvas_text(c, r.x, r.y, r.w, ts, " Source", TUI_TEXT_ELLIPSIS);
        if (r.h > 1)
            tui_task_draw(p->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1},
                          "line profile");
        tui_canvas_unclip(c);
        return;
    }
    if (!k || !p->prof->with_site) {
        snprintf(title, sizeof(title), " Source");
        tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
        if (r.h > 1)
            tui_canvas_text(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM,
                            "no call sites in this trace (details.src): no line to show",
                            TUI_TEXT_ELLIPSIS);
        tui_canvas_unclip(c);
        return;
    }
    char name[64], file[64];
    sim_escape(k->name, strlen(k->name), name, sizeof(name));
    const char *f = k->file != TRACE_NO_STR ? trace_model_str(p->m, k->file) : "";
    sim_escape(f, strlen(f), file, sizeof(file));
    snprintf(title, sizeof(title), " Source  %s  %s  %llu ops %llu cyc%s  Enter ops  n/N next/prev",
             name, file, (unsigned long long)k->ops, (unsigned long long)k->cycles,
             p->text ? "" : "  (source not found: per-line table)");
    tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
    if (r.h < 3) {
        tui_canvas_unclip(c);
        return;
    }
    char head[200];
    snprintf(head, sizeof(head), "%2s %6s %6s %7s %9s %9s %9s  %s", "", "line", "share", "ops",
             "DMA", "TE", "VE", "source");
    tui_canvas_text(c, r.x, r.y + 1, r.w, TUI_STYLE_DIM, head, TUI_TEXT_ELLIPSIS);
    p->list_y = r.y + 2;
    p->rows_visible = r.h - 2;
    markers(p, v);
    if (p->sel < p->top)
        p->top = p->sel;
    if (p->rows_visible > 0 && p->sel >= p->top + (size_t)p->rows_visible)
        p->top = p->sel - (size_t)p->rows_visible + 1;
    for (int y = 0; y < p->rows_visible && p->top + (size_t)y < p->nrows; y++) {
        size_t i = p->top + (size_t)y;
        const struct trace_srcline *L = row_line(p, i);
        bool sel = i == p->sel;
        bool marked = L && v->mark_site != TRACE_NO_SITE && L->site == v->mark_site;
        enum tui_style st = sel && focused ? TUI_STYLE_SELECTION
                            : sel          ? TUI_STYLE_LABEL_SEL
                            : marked       ? TUI_STYLE_MATCH
                            : L            ? TUI_STYLE_NORMAL
                                           : TUI_STYLE_DIM;
        int yy = p->list_y + y;
        tui_canvas_fill(c, (struct tui_rect){r.x, yy, r.w, 1}, ' ', st);
        char pes[8] = "", ln[48], stats[120], textbuf[512];
        if (p->pes_at && p->pes_at[i]) /* '*': the selected op's PE is among them */
            snprintf(pes, sizeof(pes), p->pes_at[i] > 9 ? "%c+" : "%c%u",
                     i == p->sel_pe_row ? '*' : '>', p->pes_at[i]);
        const char *text = "";
        if (p->rows[i].n) {
            snprintf(ln, sizeof(ln), "%u", p->rows[i].n);
            text = trace_srctext_line(p->text, p->rows[i].n, textbuf, sizeof(textbuf));
        } else {
            assert(L); /* a row with no source line is a profile line's */
            const struct trace_site *s = trace_model_site_get(p->m, L->site);
            if (!s)
                snprintf(textbuf, sizeof(textbuf), "(no call site)");
            else if (!s->line)
                snprintf(textbuf, sizeof(textbuf), "malformed src \"%s\"",
                         trace_model_str(p->m, s->file));
            else
                trace_model_site_text(p->m, L->site, textbuf, sizeof(textbuf));
            text = textbuf;
            snprintf(ln, sizeof(ln), "-");
        }
        if (L)
            snprintf(stats, sizeof(stats), "%5.1f%% %7llu %9llu %9llu %9llu", 100.0 * L->share,
                     (unsigned long long)L->ops, (unsigned long long)L->engine[TRACE_ENGINE_DMA],
                     (unsigned long long)L->engine[TRACE_ENGINE_TE],
                     (unsigned long long)L->engine[TRACE_ENGINE_VE]);
        else
            snprintf(stats, sizeof(stats), "%6s %7s %9s %9s %9s", "", "", "", "", "");
        char lead[200];
        snprintf(lead, sizeof(lead), "%-2s %6s %s  ", pes, ln, stats);
        int x = r.x + tui_canvas_text(c, r.x, yy, r.w, st, lead, 0);
        tui_canvas_text(c, x, yy, r.x + r.w - x, st, text ? text : "",
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
    tui_canvas_unclip(c);
}

/* Show op i of the line walked (site): the Gantt to it, what it is in the status line. */
static void walk_show(struct tui_srcpane *p, struct tui_view *v, uint16_t site, uint64_t i)
{
    const struct trace_event *e = trace_model_event(p->m, i);
    uint64_t len = e->end > e->start ? e->end - e->start : 1;
    tui_view_goto(v, e->start > 4 * len ? e->start - 4 * len : 0, e->end + 4 * len, e->start, i);
    char s[160], esc[200];
    trace_model_site_text(p->m, site, s, sizeof(s));
    sim_escape(s, strlen(s), esc, sizeof(esc));
    tui_view_message(v, TUI_STYLE_STATUS, "line %s: op %llu of the trace", esc,
                     (unsigned long long)i);
    p->for_ev = i; /* stay on this kernel */
}

/* Look for the walk's op from walk_at over walk_left ops, at most max of them: found, its
 * index in walk_found; else where to go on. Returns false when pg cancelled it. */
static bool walk_scan(struct tui_srcpane *p, uint64_t max, struct trace_progress *pg)
{
    uint64_t n = trace_model_event_count(p->m), i = p->walk_at;
    trace_progress_step(pg, "the line's next op", p->walk_left);
    for (uint64_t k = 0; k < max && p->walk_left; k++, p->walk_left--) {
        if (pg && k && k % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, k))
            return false;
        if (trace_model_event(p->m, i)->site == p->walk_site) {
            p->walk_found = i;
            return true;
        }
        i = p->walk_dir < 0 ? (i + n - 1) % n : (i + 1) % n;
        p->walk_at = i;
    }
    return true;
}

static void walk_run(void *arg, struct trace_progress *pg)
{
    struct tui_srcpane *p = arg;
    walk_scan(p, UINT64_MAX, pg);
}

/* A live walk cancelled (tui_task_release): nothing found. */
static void walk_discard(void *arg)
{
    struct tui_srcpane *p = arg;
    p->walk_found = UINT64_MAX;
}

/*
 * Select the next (dir 1) or previous (-1) op of site after (before) the view's selected
 * op, around; or the first one (dir 0). The first WALK_HERE ops are looked at here (tens of
 * milliseconds); a line whose next op is further (a whole pass over ten million ops takes
 * 0.2 s) is looked for on a worker, src_work showing it once found.
 */
static void walk(struct tui_srcpane *p, struct tui_view *v, uint16_t site, int dir)
{
    uint64_t n = trace_model_event_count(p->m), from = v->selected;
    if (!n)
        return;
    if (tui_task_running(p->walk_task)) {
        tui_view_message(v, TUI_STYLE_STATUS, "still looking for the line's next op");
        return;
    }
    p->walk_at = dir == 0 || from == TUI_NO_EVENT || from >= n ? (dir < 0 ? n - 1 : 0)
                 : dir > 0                                     ? (from + 1) % n
                                                               : (from + n - 1) % n;
    p->walk_left = n;
    p->walk_site = site;
    p->walk_dir = dir;
    p->walk_found = UINT64_MAX;
    walk_scan(p, WALK_HERE, NULL);
    if (p->walk_found != UINT64_MAX) {
        walk_show(p, v, site, p->walk_found);
        return;
    }
    if (!p->walk_left)
        return; /* the line has no op */
    tui_task_start(p->walk_task, walk_run, p, true);
    tui_view_message(v, TUI_STYLE_STATUS, "looking for the line's next op...");
}

/* The walk on the worker: shown once found. Returns true while it runs, and once more. */
static bool walk_work(struct tui_srcpane *p, struct tui_view *v)
{
    bool running = tui_task_running(p->walk_task); /* before the take: it may end between */
    if (tui_task_take_done(p->walk_task)) {
        if (p->walk_found != UINT64_MAX)
            walk_show(p, v, p->walk_site, p->walk_found);
        return true;
    }
    return running;
}

void tui_srcpane_step_line(struct tui_view *v)
{
    const struct trace_model *m = v->m;
    uint64_t from = tui_view_focus_event(v);
    char pe[128];
    if (from >= trace_model_event_count(m))
        from = UINT64_MAX;
    trace_srcstep_pe_of(m, from, pe, sizeof(pe));
    uint16_t site = from != UINT64_MAX ? trace_model_event(m, from)->site : TRACE_NO_SITE;
    uint64_t next = trace_srcstep_next(m, pe, from, site);
    char pe_esc[160];
    sim_escape(pe, strlen(pe), pe_esc, sizeof(pe_esc));
    if (next == UINT64_MAX) {
        tui_view_message(v, TUI_STYLE_STATUS, "%s%sno later tl call on another line", pe_esc,
                         pe[0] ? ": " : "");
        return;
    }
    const struct trace_event *e = trace_model_event(m, next);
    uint64_t len = e->end > e->start ? e->end - e->start : 1;
    tui_view_goto(v, e->start > 8 * len ? e->start - 8 * len : 0, e->end + 8 * len, e->start, next);
    char src[160], text[400], esc[400];
    trace_srcstep_pe_of(m, next, pe, sizeof(pe));
    trace_model_site_text(m, e->site, src, sizeof(src));
    snprintf(text, sizeof(text), "%s at %s: %s on %s", pe, src, trace_model_str(m, e->op),
             trace_model_str(m, trace_model_track_get(m, e->track)->name));
    sim_escape(text, strlen(text), esc, sizeof(esc));
    tui_view_message(v, TUI_STYLE_STATUS, "%s (op %llu of the trace)", esc,
                     (unsigned long long)next);
}

static enum tui_result src_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_srcpane *p = self;
    if (!p->valid) {
        compute(p, v);
        if (!p->valid)
            return TUI_RES_IGNORED; /* no lines yet: the key is the app's */
    }
    size_t n = p->nrows, sel = p->sel;
    size_t page = p->rows_visible > 1 ? (size_t)p->rows_visible - 1 : 1;
    switch (a) {
    case TUI_ACT_UP: p->sel = p->sel ? p->sel - 1 : 0; break;
    case TUI_ACT_DOWN: p->sel = p->sel + 1 < n ? p->sel + 1 : p->sel; break;
    case TUI_ACT_PAGE_UP: p->sel = p->sel > page ? p->sel - page : 0; break;
    case TUI_ACT_PAGE_DOWN: p->sel = p->sel + page < n ? p->sel + page : (n ? n - 1 : 0); break;
    case TUI_ACT_START: p->sel = 0; break;
    case TUI_ACT_END: p->sel = n ? n - 1 : 0; break;
    case TUI_ACT_NEXT_OP:
    case TUI_ACT_PREV_OP: /* the next line that issued ops */
        for (size_t i = p->sel, k = 0; k < n; k++) {
            i = a == TUI_ACT_NEXT_OP ? (i + 1) % n : (i + n - 1) % n;
            if (row_line(p, i)) {
                p->sel = i;
                break;
            }
        }
        break;
    case TUI_ACT_SELECT:
    case TUI_ACT_SEARCH_NEXT:
    case TUI_ACT_SEARCH_PREV: {
        const struct trace_srcline *L = row_line(p, p->sel);
        uint16_t site = a == TUI_ACT_SELECT || v->mark_site == TRACE_NO_SITE
                            ? (L ? L->site : TRACE_NO_SITE)
                            : v->mark_site;
        if (!L && a == TUI_ACT_SELECT) {
            tui_view_message(v, TUI_STYLE_STATUS, "no op came from this line");
            return TUI_RES_REDRAW;
        }
        if (site == TRACE_NO_SITE && !L)
            return TUI_RES_HANDLED;
        tui_view_mark_site(v, site);
        walk(p, v, site, a == TUI_ACT_SELECT ? 0 : a == TUI_ACT_SEARCH_NEXT ? 1 : -1);
        return TUI_RES_REDRAW;
    }
    case TUI_ACT_CLEAR:
        if (v->mark_site == TRACE_NO_SITE)
            return TUI_RES_IGNORED;
        tui_view_mark_site(v, TRACE_NO_SITE);
        return TUI_RES_REDRAW;
    default: return TUI_RES_IGNORED;
    }
    return p->sel != sel ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static enum tui_result src_mouse(void *self, int x, int y, int button, struct tui_view *v)
{
    struct tui_srcpane *p = self;
    (void)x;
    if (button == 4 || button == 5)
        return src_action(p, button == 4 ? TUI_ACT_UP : TUI_ACT_DOWN, v);
    if (button == 1 && y >= p->list_y && p->top + (size_t)(y - p->list_y) < p->nrows)
        p->sel = p->top + (size_t)(y - p->list_y);
    return TUI_RES_REDRAW;
}

static void src_free(void *self)
{
    tui_srcpane_free(self);
}

const struct tui_pane_ops tui_srcpane_ops = {
    .name = "Source",
    .sync = src_sync,
    .render = src_render,
    .action = src_action,
    .mouse = src_mouse,
    .work = src_work,
    .free = src_free,
    .uses_view = true,
};
