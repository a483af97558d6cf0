/*
 * The sweep table (tui/panes/sweepview.h): columns are the point id, one per axis, then the
 * headline metrics of tui_sweep_columns; a column cursor picks what `s` sorts by and
 * what the plot shows (a metric column: the metric; an axis column: the axis).
 */
#include "tui/panes/sweepview.h"
#include "tui/panes/sweepscatter.h"

#include "sim/util/xalloc.h"
#include "tui/term/keymap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_CELL = 28, /* widest a column gets (the error column takes what is left) */
    PLOT_MIN_H = 7,
    MIN_W = 40,
    MIN_H = 10,
};

/* A column of the view. */
struct vcol {
    enum { VC_ID, VC_AXIS, VC_METRIC } kind;
    size_t index; /* VC_AXIS: the axis; VC_METRIC: the tui_sweep_columns entry */
};

struct tui_sweepview {
    const struct tui_sweep_table *t; /* borrowed */
    struct vcol *cols;               /* owned */
    size_t ncols;
    size_t *order;      /* owned: row indices in display order */
    size_t sel;         /* position in order */
    size_t top;         /* first row shown */
    size_t cursor;      /* column under the cursor */
    size_t first;       /* first scrolled column after the id */
    ptrdiff_t sort_col; /* -1: point order */
    bool desc;
    bool plot;
    bool scatter;       /* the plot is time against energy (sweepscatter.h) */
    size_t plot_axis;   /* axis index */
    size_t plot_metric; /* tui_sweep_columns index */
    char mark[16];      /* id of the marked point, "" when none */
    bool help;
    char status[256];
    bool status_error;
    int rows_visible;
};

static void build_cols(struct tui_sweepview *v)
{
    free(v->cols);
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    v->cols = sim_xcalloc(1 + v->t->naxes + nm, sizeof(*v->cols));
    v->ncols = 0;
    v->cols[v->ncols++] = (struct vcol){VC_ID, 0};
    for (size_t a = 0; a < v->t->naxes; a++)
        v->cols[v->ncols++] = (struct vcol){VC_AXIS, a};
    for (size_t c = 0; c < nm; c++)
        if (mc[c].brief)
            v->cols[v->ncols++] = (struct vcol){VC_METRIC, c};
}

/* The text of view column c of row r (untrusted), and its number (NAN: not a number). */
static const char *cell(const struct tui_sweepview *v, const struct tui_sweep_row *r, size_t c,
                        double *num, char *buf, size_t size)
{
    *num = NAN;
    const struct vcol *vc = &v->cols[c];
    if (vc->kind == VC_ID) {
        snprintf(buf, size, "%s", r->id);
        *num = strtod(r->id, NULL);
        return buf;
    }
    if (vc->kind == VC_METRIC)
        return tui_sweep_cell(r, vc->index, num, buf, size);
    const struct sim_value *p = sim_value_map_get(r->params, v->t->axes[vc->index]);
    if (p && p->type == SIM_V_INT)
        *num = (double)p->u.i;
    else if (p && p->type == SIM_V_FLOAT)
        *num = p->u.f;
    return tui_sweep_value_text(p, buf, size);
}

static const char *col_name(const struct tui_sweepview *v, size_t c)
{
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    switch (v->cols[c].kind) {
    case VC_ID: return "id";
    case VC_AXIS: return v->t->axes[v->cols[c].index];
    case VC_METRIC: return mc[v->cols[c].index].name;
    }
    return "";
}

static bool col_numeric(const struct tui_sweepview *v, size_t c)
{
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    if (v->cols[c].kind == VC_METRIC)
        return mc[v->cols[c].index].kind != TUI_SWEEP_COL_TEXT;
    if (v->cols[c].kind == VC_ID)
        return true;
    /* an axis is numeric when its values are */
    for (size_t i = 0; i < v->t->nrows; i++) {
        const struct sim_value *p =
            sim_value_map_get(v->t->rows[i].params, v->t->axes[v->cols[c].index]);
        if (p && p->type != SIM_V_INT && p->type != SIM_V_FLOAT)
            return false;
    }
    return true;
}

/* Sorting: a context for qsort's comparison (one sort at a time, in one thread). */
static const struct tui_sweepview *sorting;

static int cmp_rows(const void *pa, const void *pb)
{
    const struct tui_sweepview *v = sorting;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    size_t c = (size_t)v->sort_col;
    char ta[256], tb[256];
    double na, nb;
    cell(v, &v->t->rows[a], c, &na, ta, sizeof(ta));
    cell(v, &v->t->rows[b], c, &nb, tb, sizeof(tb));
    int r;
    if (col_numeric(v, c)) {
        /* unknown values last, whichever the direction */
        if (isnan(na) || isnan(nb))
            return isnan(na) && isnan(nb) ? (a > b) - (a < b) : isnan(na) ? 1 : -1;
        r = (na > nb) - (na < nb);
    } else {
        if (!*ta || !*tb)
            return !*ta && !*tb ? (a > b) - (a < b) : !*ta ? 1 : -1;
        r = strcmp(ta, tb);
    }
    if (v->desc)
        r = -r;
    return r ? r : (a > b) - (a < b);
}

static void sort_rows(struct tui_sweepview *v)
{
    const char *sel_id = v->t->nrows ? v->t->rows[v->order[v->sel]].id : NULL;
    char keep[16] = "";
    if (sel_id)
        snprintf(keep, sizeof(keep), "%s", sel_id);
    for (size_t i = 0; i < v->t->nrows; i++)
        v->order[i] = i;
    if (v->sort_col >= 0 && (size_t)v->sort_col < v->ncols) {
        sorting = v;
        qsort(v->order, v->t->nrows, sizeof(*v->order), cmp_rows);
        sorting = NULL;
    }
    v->sel = 0;
    for (size_t i = 0; i < v->t->nrows; i++)
        if (strcmp(v->t->rows[v->order[i]].id, keep) == 0)
            v->sel = i;
}

static size_t metric_index(const char *name)
{
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    for (size_t c = 0; c < nm; c++)
        if (strcmp(mc[c].name, name) == 0)
            return c;
    return 0;
}

struct tui_sweepview *tui_sweepview_new(const struct tui_sweep_table *t)
{
    struct tui_sweepview *v = sim_xcalloc(1, sizeof(*v));
    v->sort_col = -1;
    v->plot = true;
    v->plot_metric = metric_index("cycles_total");
    tui_sweepview_set_table(v, t);
    return v;
}

void tui_sweepview_free(struct tui_sweepview *v)
{
    if (!v)
        return;
    free(v->cols);
    free(v->order);
    free(v);
}

void tui_sweepview_set_table(struct tui_sweepview *v, const struct tui_sweep_table *t)
{
    char keep[16] = "";
    if (v->t && v->t->nrows && v->sel < v->t->nrows)
        snprintf(keep, sizeof(keep), "%s", v->t->rows[v->order[v->sel]].id);
    size_t old_ncols = v->ncols;
    v->t = t;
    build_cols(v);
    if (v->ncols != old_ncols && old_ncols) {
        v->cursor = 0;
        v->sort_col = -1;
    }
    if (v->cursor >= v->ncols)
        v->cursor = 0;
    if (v->plot_axis >= t->naxes)
        v->plot_axis = 0;
    free(v->order);
    v->order = sim_xcalloc(t->nrows ? t->nrows : 1, sizeof(*v->order));
    v->sel = 0;
    for (size_t i = 0; i < t->nrows; i++)
        v->order[i] = i;
    if (keep[0]) {
        for (size_t i = 0; i < t->nrows; i++)
            if (strcmp(t->rows[i].id, keep) == 0)
                v->sel = i;
    }
    sort_rows(v);
}

const struct tui_sweep_row *tui_sweepview_selected(const struct tui_sweepview *v)
{
    return v->t->nrows ? &v->t->rows[v->order[v->sel]] : NULL;
}

const struct tui_sweep_row *tui_sweepview_marked(const struct tui_sweepview *v)
{
    for (size_t i = 0; v->mark[0] && i < v->t->nrows; i++)
        if (strcmp(v->t->rows[i].id, v->mark) == 0)
            return &v->t->rows[i];
    return NULL;
}

void tui_sweepview_status(struct tui_sweepview *v, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->status, sizeof(v->status), fmt, ap);
    va_end(ap);
    v->status_error = error;
}

/* The plot follows the column cursor: an axis column sets the axis, a number column the
 * metric. */
static void follow_cursor(struct tui_sweepview *v)
{
    const struct vcol *vc = &v->cols[v->cursor];
    if (vc->kind == VC_AXIS)
        v->plot_axis = vc->index;
    else if (vc->kind == VC_METRIC && col_numeric(v, v->cursor))
        v->plot_metric = vc->index;
}

static void move_sel(struct tui_sweepview *v, long delta)
{
    if (!v->t->nrows)
        return;
    long s = (long)v->sel + delta;
    if (s < 0)
        s = 0;
    if (s >= (long)v->t->nrows)
        s = (long)v->t->nrows - 1;
    v->sel = (size_t)s;
}

enum tui_sweepview_event tui_sweepview_key(struct tui_sweepview *v, int key)
{
    v->status[0] = '\0';
    if (v->help) {
        v->help = false; /* any key closes the help */
        return TUI_SWEEPVIEW_REDRAW;
    }
    long page = v->rows_visible > 1 ? v->rows_visible - 1 : 1;
    switch (key) {
    case 'q':
    case 'Q': return TUI_SWEEPVIEW_QUIT;
    case TUI_KEY_UP:
    case 'k': move_sel(v, -1); break;
    case TUI_KEY_DOWN:
    case 'j': move_sel(v, 1); break;
    case TUI_KEY_PAGE_UP: move_sel(v, -page); break;
    case TUI_KEY_PAGE_DOWN: move_sel(v, page); break;
    case TUI_KEY_HOME:
    case 'g': move_sel(v, -(long)v->t->nrows); break;
    case TUI_KEY_END:
    case 'G': move_sel(v, (long)v->t->nrows); break;
    case TUI_KEY_LEFT:
    case 'h':
        if (v->cursor > 0)
            v->cursor--;
        follow_cursor(v);
        break;
    case TUI_KEY_RIGHT:
    case 'l':
        if (v->cursor + 1 < v->ncols)
            v->cursor++;
        follow_cursor(v);
        break;
    case 's':
        if (v->sort_col == (ptrdiff_t)v->cursor) {
            v->desc = !v->desc;
        } else {
            v->sort_col = (ptrdiff_t)v->cursor;
            v->desc = false;
        }
        sort_rows(v);
        break;
    case 'S':
        v->sort_col = -1;
        v->desc = false;
        sort_rows(v);
        break;
    case TUI_KEY_ENTER:
    case '\r':
    case '\n': return v->t->nrows ? TUI_SWEEPVIEW_OPEN : TUI_SWEEPVIEW_NONE;
    case 'p': v->plot = !v->plot; break;
    case 'e': /* time against energy, the Pareto front marked; again: the metric plot */
        v->scatter = !v->scatter;
        v->plot = true;
        break;
    case 'a':
        if (v->t->naxes)
            v->plot_axis = (v->plot_axis + 1) % v->t->naxes;
        v->plot = true;
        break;
    case ' ': {
        const struct tui_sweep_row *r = tui_sweepview_selected(v);
        if (!r)
            break;
        if (strcmp(v->mark, r->id) == 0) {
            v->mark[0] = '\0';
        } else {
            snprintf(v->mark, sizeof(v->mark), "%s", r->id);
            tui_sweepview_status(v, false, "point %s marked: d on another point compares them",
                                 r->id);
        }
        break;
    }
    case 'd': {
        const struct tui_sweep_row *m = tui_sweepview_marked(v), *r = tui_sweepview_selected(v);
        if (!m) {
            tui_sweepview_status(v, true, "mark a point with Space first, then d on another one");
            break;
        }
        if (m == r) {
            tui_sweepview_status(v, true, "select another point than the marked %s to compare",
                                 m->id);
            break;
        }
        return TUI_SWEEPVIEW_COMPARE;
    }
    case 'r': return TUI_SWEEPVIEW_RELOAD;
    case '?':
    case TUI_KEY_F1: v->help = true; break;
    case TUI_KEY_ESC: break;
    default: return TUI_SWEEPVIEW_NONE;
    }
    return TUI_SWEEPVIEW_REDRAW;
}

/* ---- rendering ---------------------------------------------------------------------------- */

static int text_w(const char *s, bool unicode)
{
    return tui_text_width(s, strlen(s), unicode, TUI_TEXT_UNTRUSTED);
}

/* Column widths for the rows there are. */
static void col_widths(const struct tui_sweepview *v, bool unicode, int *w)
{
    for (size_t c = 0; c < v->ncols; c++) {
        w[c] = text_w(col_name(v, c), unicode);
        if (v->cols[c].kind == VC_ID || v->sort_col == (ptrdiff_t)c)
            w[c] += 1; /* the mark, the sort's arrow */
    }
    for (size_t i = 0; i < v->t->nrows; i++)
        for (size_t c = 0; c < v->ncols; c++) {
            char buf[256];
            double num;
            int cw = text_w(cell(v, &v->t->rows[i], c, &num, buf, sizeof(buf)), unicode);
            cw += v->cols[c].kind == VC_ID;
            if (cw > w[c])
                w[c] = cw > MAX_CELL ? MAX_CELL : cw;
        }
}

static enum tui_style status_style(const struct tui_sweep_row *r)
{
    return r->status == TUI_SWEEP_FAILED ? TUI_STYLE_ERROR
           : r->status == TUI_SWEEP_OK   ? TUI_STYLE_NORMAL
                                         : TUI_STYLE_DIM;
}

/* The x of each shown column (-1: not shown) from the first scrolled column; returns
 * the x after the last. */
static int layout(const struct tui_sweepview *v, const int *w, size_t first, int width, int *x)
{
    int at = 1;
    for (size_t c = 0; c < v->ncols; c++) {
        x[c] = -1;
        if (c > 0 && c < first)
            continue;
        if (at >= width)
            continue;
        x[c] = at;
        at += w[c] + 2;
    }
    return at;
}

static void render_table(struct tui_sweepview *v, struct tui_canvas *c, struct tui_rect r)
{
    int *w = sim_xcalloc(v->ncols, sizeof(int));
    int *x = sim_xcalloc(v->ncols, sizeof(int));
    col_widths(v, c->unicode, w);
    /* scroll the columns so that the cursor's is whole on screen */
    if (v->first < 1)
        v->first = 1;
    if (v->cursor > 0 && v->cursor < v->first)
        v->first = v->cursor;
    for (;;) {
        layout(v, w, v->first, r.w, x);
        if (v->cursor == 0 || (x[v->cursor] >= 0 && x[v->cursor] + w[v->cursor] <= r.w) ||
            v->first >= v->cursor)
            break;
        v->first++;
    }
    /* the last column shown (error text) may take the rest of the line */
    size_t last = 0;
    for (size_t k = 0; k < v->ncols; k++)
        if (x[k] >= 0)
            last = k;

    /* the header line of the columns */
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', TUI_STYLE_TITLE);
    for (size_t k = 0; k < v->ncols; k++) {
        if (x[k] < 0)
            continue;
        char name[96];
        const char *arrow = "";
        if (v->sort_col == (ptrdiff_t)k)
            arrow = v->desc ? (c->unicode ? "▼" : "v") : (c->unicode ? "▲" : "^");
        snprintf(name, sizeof(name), "%s%s", col_name(v, k), arrow);
        int cw = k == last ? r.w - x[k] : w[k];
        enum tui_style st = k == v->cursor ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
        bool right = col_numeric(v, k) && v->cols[k].kind != VC_ID;
        tui_canvas_text(c, r.x + x[k], r.y, cw, st, name,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS | (right ? TUI_TEXT_RIGHT : 0));
    }
    if (v->first > 1)
        tui_canvas_put(c, r.x, r.y, c->unicode ? 0x2039 : '<', TUI_STYLE_TITLE);

    int rows = r.h - 1;
    v->rows_visible = rows;
    if (v->sel < v->top)
        v->top = v->sel;
    if (rows > 0 && v->sel >= v->top + (size_t)rows)
        v->top = v->sel - (size_t)rows + 1;
    for (int i = 0; i < rows; i++) {
        size_t pos = v->top + (size_t)i;
        int y = r.y + 1 + i;
        if (pos >= v->t->nrows)
            break;
        const struct tui_sweep_row *row = &v->t->rows[v->order[pos]];
        bool selected = pos == v->sel;
        if (selected)
            tui_canvas_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', TUI_STYLE_SELECTION);
        for (size_t k = 0; k < v->ncols; k++) {
            if (x[k] < 0)
                continue;
            char buf[512];
            double num;
            cell(v, row, k, &num, buf, sizeof(buf));
            int cw = k == last ? r.w - x[k] : w[k];
            enum tui_style st = TUI_STYLE_NORMAL;
            if (v->cols[k].kind == VC_METRIC && strcmp(col_name(v, k), "status") == 0)
                st = status_style(row);
            else if (v->cols[k].kind == VC_METRIC && strcmp(col_name(v, k), "error") == 0)
                st = TUI_STYLE_ERROR;
            if (selected)
                st = TUI_STYLE_SELECTION;
            int cx = r.x + x[k];
            if (v->cols[k].kind == VC_ID) {
                bool marked = strcmp(v->mark, row->id) == 0;
                tui_canvas_put(c, cx, y, marked ? '*' : ' ', selected ? st : TUI_STYLE_VALUE);
                cx++;
                cw--;
            }
            bool right = col_numeric(v, k) && v->cols[k].kind != VC_ID;
            tui_canvas_text(c, cx, y, cw, st, buf,
                            TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS | (right ? TUI_TEXT_RIGHT : 0));
        }
    }
    free(w);
    free(x);
}

/* Number text for the plot's labels in at most maxw columns: 85826, 0.412, 85.8k. */
static void short_num(double v, char *buf, size_t size, int maxw)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.3g", v);
    if ((int)strlen(buf) <= maxw)
        return;
    static const char units[] = "kMGTP";
    double a = v;
    for (int u = 0; u < 5; u++) {
        a /= 1000;
        snprintf(buf, size, "%.3g%c", a, units[u]);
        if ((int)strlen(buf) <= maxw || fabs(a) < 1000)
            return;
    }
}

struct plot_pt {
    const struct sim_value *x; /* borrowed */
    double xnum;
    double y;
    bool selected;
};

static int cmp_plot(const void *pa, const void *pb)
{
    const struct plot_pt *a = pa, *b = pb;
    if (!isnan(a->xnum) && !isnan(b->xnum))
        return (a->xnum > b->xnum) - (a->xnum < b->xnum);
    char ta[128], tb[128];
    return strcmp(tui_sweep_value_text(a->x, ta, sizeof(ta)),
                  tui_sweep_value_text(b->x, tb, sizeof(tb)));
}

/* The points of the selected row's slice: the other axes at its values. */
static size_t plot_points(const struct tui_sweepview *v, struct plot_pt *pts, char *fixed,
                          size_t fsize)
{
    const struct tui_sweep_row *sel = tui_sweepview_selected(v);
    const char *axis = v->t->axes[v->plot_axis];
    size_t used = 0;
    fixed[0] = '\0';
    for (size_t a = 0; a < v->t->naxes; a++) {
        if (a == v->plot_axis)
            continue;
        char val[64];
        tui_sweep_value_text(sim_value_map_get(sel->params, v->t->axes[a]), val, sizeof(val));
        int k =
            snprintf(fixed + used, fsize - used, "%s%s=%s", used ? ", " : "", v->t->axes[a], val);
        if (k > 0 && (size_t)k < fsize - used)
            used += (size_t)k;
    }
    size_t n = 0;
    for (size_t i = 0; i < v->t->nrows; i++) {
        const struct tui_sweep_row *r = &v->t->rows[i];
        bool same = true;
        for (size_t a = 0; a < v->t->naxes && same; a++) {
            if (a == v->plot_axis)
                continue;
            const struct sim_value *pa = sim_value_map_get(r->params, v->t->axes[a]);
            const struct sim_value *pb = sim_value_map_get(sel->params, v->t->axes[a]);
            same = (!pa && !pb) || (pa && pb && sim_value_equal(pa, pb));
        }
        if (!same)
            continue;
        const struct sim_value *x = sim_value_map_get(r->params, axis);
        char buf[64];
        double y;
        tui_sweep_cell(r, v->plot_metric, &y, buf, sizeof(buf));
        pts[n++] = (struct plot_pt){
            x,
            x && x->type == SIM_V_INT     ? (double)x->u.i
            : x && x->type == SIM_V_FLOAT ? x->u.f
                                          : NAN,
            y,
            r == sel,
        };
    }
    qsort(pts, n, sizeof(*pts), cmp_plot);
    return n;
}

static void render_plot(struct tui_sweepview *v, struct tui_canvas *c, struct tui_rect r)
{
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    const char *metric = mc[v->plot_metric].name;
    if (!v->t->naxes || !v->t->nrows) {
        tui_canvas_box(c, r, " plot ");
        tui_canvas_text(c, r.x + 2, r.y + 1, r.w - 4, TUI_STYLE_DIM, "no axis to plot against", 0);
        tui_canvas_unclip(c);
        return;
    }
    struct plot_pt *pts = sim_xcalloc(v->t->nrows, sizeof(*pts));
    char fixed[256], title[512];
    size_t n = plot_points(v, pts, fixed, sizeof(fixed));
    snprintf(title, sizeof(title), " %s vs %s%s%s%s ", metric, v->t->axes[v->plot_axis],
             fixed[0] ? " (" : "", fixed, fixed[0] ? ")" : "");
    tui_canvas_box(c, r, "");
    tui_canvas_text(c, r.x + 2, r.y, r.w - 4, TUI_STYLE_TITLE_FOCUS, title,
                    TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    double ymax = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++)
        if (!isnan(pts[i].y)) {
            ymax = any && ymax > pts[i].y ? ymax : pts[i].y;
            any = true;
        }
    struct tui_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (!any || ymax <= 0) {
        tui_canvas_text(c, in.x + 1, in.y, in.w - 2, TUI_STYLE_DIM,
                        any ? "every value is 0" : "no values yet", 0);
        tui_canvas_unclip(c);
        free(pts);
        return;
    }
    /* y labels on the left: the top of the scale and 0 */
    char top[32];
    short_num(ymax, top, sizeof(top), 8);
    int lw = (int)strlen(top) + 1;
    /* the last line holds the x labels, the first the value over the tallest bar */
    int bars_h = in.h - 2;
    int base = in.y + in.h - 2; /* the bars' lowest line */
    tui_canvas_text(c, in.x, base - bars_h + 1, lw - 1, TUI_STYLE_RULER, top, TUI_TEXT_RIGHT);
    tui_canvas_text(c, in.x, base, lw - 1, TUI_STYLE_RULER, "0", TUI_TEXT_RIGHT);
    int avail = in.w - lw;
    int slot = n ? avail / (int)n : avail;
    if (slot < 2) {
        tui_canvas_text(c, in.x + lw, in.y, avail, TUI_STYLE_DIM, "too many points to plot here",
                        0);
        tui_canvas_unclip(c);
        free(pts);
        return;
    }
    int bw = slot - 1 < 8 ? slot - 1 : 8;
    for (size_t i = 0; i < n; i++) {
        int x0 = in.x + lw + (int)i * slot + (slot - bw) / 2;
        enum tui_style st = pts[i].selected ? TUI_STYLE_VALUE : TUI_STYLE_BAR;
        char lab[64];
        tui_sweep_value_text(pts[i].x, lab, sizeof(lab));
        int labw = text_w(lab, c->unicode);
        int lx = in.x + lw + (int)i * slot + (slot - (labw < slot ? labw : slot)) / 2;
        tui_canvas_text(c, lx, base + 1, slot, pts[i].selected ? TUI_STYLE_VALUE : TUI_STYLE_RULER,
                        lab, TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        if (isnan(pts[i].y))
            continue;
        long eighths = lround(pts[i].y / ymax * bars_h * 8);
        if (eighths < 1 && pts[i].y > 0)
            eighths = 1;
        for (int row = 0; row < bars_h && eighths > 0; row++, eighths -= 8) {
            uint32_t g = gl->spark[eighths >= 8 ? 8 : eighths];
            for (int k = 0; k < bw; k++)
                tui_canvas_put(c, x0 + k, base - row, g, st);
        }
        /* the value above its bar */
        long rows_used = (lround(pts[i].y / ymax * bars_h * 8) + 7) / 8;
        int vy = base - (int)rows_used;
        if (vy >= in.y) {
            char val[32];
            short_num(pts[i].y, val, sizeof(val), slot - 1);
            int vw = (int)strlen(val), s0 = in.x + lw + (int)i * slot;
            int vx = x0 + bw / 2 - vw / 2;
            vx = vx + vw > s0 + slot - 1 ? s0 + slot - 1 - vw : vx;
            tui_canvas_text(c, vx < s0 ? s0 : vx, vy, slot - 1, st, val, 0);
        }
    }
    tui_canvas_unclip(c);
    free(pts);
}

static const struct {
    const char *keys, *help;
} helps[] = {
    {"Up/Down j/k", "select a point (PgUp/PgDn, g/G: a page, the ends)"},
    {"Left/Right h/l", "move the column cursor"},
    {"s", "sort by the cursor's column (again: reverse); S: point order"},
    {"Enter", "open the point's trace (q there comes back)"},
    {"p", "show or hide the plot"},
    {"a", "plot against the next axis"},
    {"e", "plot time against energy, the Pareto front marked (again: back)"},
    {"", "the plot follows the cursor: an axis column, a metric column"},
    {"Space", "mark the point to compare"},
    {"d", "compare the marked point with the selected one"},
    {"r", "read the results again (automatic while points are pending)"},
    {"Ctrl-L", "redraw the screen"},
    {"?", "this help"},
    {"q", "quit"},
};

static void render_help(struct tui_canvas *c)
{
    int w = c->w - 4 < 70 ? c->w - 4 : 70;
    int h = (int)(sizeof(helps) / sizeof(helps[0])) + 2;
    if (h > c->h - 2)
        h = c->h - 2;
    struct tui_rect box = {(c->w - w) / 2, (c->h - h) / 2, w, h};
    tui_canvas_box(c, box, " sweep table keys (any key closes) ");
    for (int i = 0; i < h - 2; i++) {
        tui_canvas_text(c, box.x + 2, box.y + 1 + i, 16, TUI_STYLE_KEY, helps[i].keys, 0);
        tui_canvas_text(c, box.x + 18, box.y + 1 + i, w - 20, TUI_STYLE_NORMAL, helps[i].help,
                        TUI_TEXT_ELLIPSIS);
    }
    tui_canvas_unclip(c);
}

static void render_footer(const struct tui_sweepview *v, struct tui_canvas *c, int y)
{
    static const char *const keys[][2] = {
        {"Enter", "trace"}, {"s", "sort"},   {"p", "plot"}, {"Space", "mark"},
        {"d", "compare"},   {"r", "reload"}, {"?", "help"}, {"q", "quit"},
    };
    tui_canvas_fill(c, (struct tui_rect){0, y, c->w, 1}, ' ', TUI_STYLE_FOOTER);
    int x = 1;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && x < c->w; i++) {
        x += tui_canvas_text(c, x, y, c->w - x, TUI_STYLE_FOOTER_KEY, keys[i][0], 0);
        x += tui_canvas_printf(c, x, y, c->w - x, TUI_STYLE_FOOTER, " %s  ", keys[i][1]);
    }
    (void)v;
}

void tui_sweepview_render(struct tui_sweepview *v, struct tui_canvas *c)
{
    tui_canvas_unclip(c);
    tui_canvas_fill(c, (struct tui_rect){0, 0, c->w, c->h}, ' ', TUI_STYLE_NORMAL);
    if (c->w < MIN_W || c->h < MIN_H) {
        tui_canvas_printf(c, 0, 0, c->w, TUI_STYLE_ERROR, "window too small (%dx%d, need %dx%d)",
                          c->w, c->h, MIN_W, MIN_H);
        return;
    }
    const struct tui_sweep_table *t = v->t;
    /* header */
    tui_canvas_fill(c, (struct tui_rect){0, 0, c->w, 1}, ' ', TUI_STYLE_HEADER);
    int x = tui_canvas_text(c, 0, 0, c->w, TUI_STYLE_HEADER_MODE, " SWEEP ", 0);
    x += 1;
    x += tui_canvas_text(c, x, 0, c->w - x, TUI_STYLE_HEADER, t->dir,
                         TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    char counts[160];
    int k = snprintf(counts, sizeof(counts), "  %zu point%s: %zu ok", t->nrows,
                     t->nrows == 1 ? "" : "s", t->n_ok);
    if (t->n_failed && k > 0)
        k += snprintf(counts + k, sizeof(counts) - (size_t)k, ", %zu failed", t->n_failed);
    if (t->n_pending && k > 0)
        k += snprintf(counts + k, sizeof(counts) - (size_t)k, ", %zu pending", t->n_pending);
    if (t->nversions > 1 && k > 0)
        snprintf(counts + k, sizeof(counts) - (size_t)k, "  (%zu npuscope versions!)",
                 t->nversions);
    tui_canvas_text(c, x, 0, c->w - x, TUI_STYLE_HEADER, counts, TUI_TEXT_ELLIPSIS);

    int footer = c->h - 1, detail = c->h - 2;
    int plot_h = 0;
    if (v->plot && c->h >= 18) {
        plot_h = c->h / 3;
        if (plot_h < PLOT_MIN_H)
            plot_h = PLOT_MIN_H;
    }
    struct tui_rect table = {0, 1, c->w, detail - 1 - plot_h};
    render_table(v, c, table);
    if (plot_h && v->scatter)
        tui_sweep_scatter_render(t, tui_sweepview_selected(v), c,
                                 (struct tui_rect){0, detail - plot_h, c->w, plot_h});
    else if (plot_h)
        render_plot(v, c, (struct tui_rect){0, detail - plot_h, c->w, plot_h});

    /* the status line: a message, else what the selected point is */
    const struct tui_sweep_row *sel = tui_sweepview_selected(v);
    if (v->status[0]) {
        tui_canvas_text(c, 1, detail, c->w - 2,
                        v->status_error ? TUI_STYLE_ERROR : TUI_STYLE_STATUS, v->status,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    } else if (sel) {
        char *params = tui_sweep_params_text(sel->params);
        char line[1024];
        snprintf(line, sizeof(line), "point %s  %s", sel->id, params);
        free(params);
        int used = tui_canvas_text(c, 1, detail, c->w - 2, TUI_STYLE_DIM, line,
                                   TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        const char *more = sel->error ? sel->error : sel->trace ? "Enter opens its trace" : "";
        tui_canvas_text(c, 1 + used + 2, detail, c->w - used - 4,
                        sel->error ? TUI_STYLE_ERROR : TUI_STYLE_DIM, more,
                        TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
    render_footer(v, c, footer);
    if (v->help)
        render_help(c);
}
