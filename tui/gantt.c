/*
 * The Gantt pane: rows (a tree of groups over the model's tracks), the view of time
 * (start, cycles per column, the cursor), and the drawing of each cell from the model's
 * busy-time index. Every cell costs a few binary searches, whatever the zoom, so a frame
 * of a trace of millions of events is drawn in milliseconds.
 */
#include "tui/gantt.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    LABEL_MIN = 8,
    LABEL_MAX = 28,
    BAND_ROWS = 4,      /* track rows kept free of the markers, tokens and bandwidth bands */
    SAMPLE_EVENTS = 24, /* events looked at to colour one cell */
    SCAN_EVENTS = 64,   /* events stepped over at most for one cell */
    HOVER_SCAN = 4096,  /* events stepped over to find the op under the cursor */
    TEXT_EVENTS = 512,  /* at most this many ops in view get their name written */
};

/* A row of the tree: a group (sip0, sip0.cube0, "DMA") or a track. */
struct gnode {
    char *label; /* owned: what the row shows */
    char *key;   /* owned: identity across rebuilds (the group's path, or "#track") */
    int parent;  /* -1 for the root */
    int depth;   /* 0 for children of the root */
    bool is_track;
    bool folded;
    bool engine_group; /* a spec trace's engine kind group */
    uint32_t track;    /* when is_track */
    int *kids;         /* owned */
    size_t nkids, capkids;
    uint32_t *tracks; /* owned: the tracks below (groups) */
    size_t ntracks;
};

/* bandwidth_samples sorted by cycle, with prefix sums of bytes, for any window's rate. */
struct bw_index {
    uint64_t *start, *end; /* owned */
    double *pre;           /* owned: pre[i] = bytes of samples [0, i) */
    size_t n;
    double max_rate; /* bytes per cycle of the busiest sample */
};

struct tui_gantt {
    const struct trace_model *m; /* borrowed */
    struct gnode *nodes;         /* owned; nodes[0] is the root */
    size_t nnodes, capnodes;
    size_t tracks_built; /* track count the tree was built for */
    int *rows;           /* owned: visible rows, as node indices */
    size_t nrows;
    bool rows_stale;
    int rows_engine, rows_kind; /* filters the rows were built for */

    uint8_t *kinds; /* owned: per track, a bit per op kind it has */
    uint64_t kinds_scanned;
    bool any_inflight; /* an in-flight op was seen (live): cells must be looked at */
    size_t kinds_cap;

    struct bw_index bw;
    size_t bw_built;

    /* the view of time */
    double t0, cpc; /* first visible cycle, cycles per column (>= 1) */
    bool fit;       /* follow the whole trace until the user zooms or pans */
    uint64_t fit_min, fit_max;
    bool follow;        /* live: keep the right edge at "now" (the end of the trace) */
    uint64_t follow_at; /* the end of the trace when the view last followed it */

    /* layout of the last render (or of tui_gantt_layout) */
    struct tui_rect rect;
    int label_w, plot_x, plot_w, rows_y, rows_h;
    int ruler_rows, band_markers, band_tokens, band_bw; /* y of each band, -1 when absent */

    size_t sel, top;      /* selected row, first row shown */
    uint64_t cursor_seen; /* the cursor as the Gantt last set or saw it */
    int sel_node;         /* the selected row's node (survives rebuilding the rows), or -1 */
    int label_want;       /* widest label of the rows */
    uint64_t seen_gen;

    /* per frame: busy cycles of each track per column, computed on demand */
    uint64_t *busy;     /* owned: track * plot_w */
    uint8_t *busy_done; /* owned: per track */
    size_t busy_cap, busy_done_cap;

    /* search: whether each op name matches, cached by string id */
    char *pattern; /* owned, lower case */
    uint32_t *match_keys;
    uint8_t *match_vals; /* 1 no, 2 yes */
    size_t match_cap, match_len;
};

/* ---- tree --------------------------------------------------------------------------------- */

static int node_new(struct tui_gantt *g, int parent, const char *label, const char *key)
{
    if (g->nnodes == g->capnodes) {
        g->capnodes = g->capnodes ? g->capnodes * 2 : 64;
        g->nodes = sim_xreallocarray(g->nodes, g->capnodes, sizeof(*g->nodes));
    }
    int i = (int)g->nnodes++;
    g->nodes[i] =
        (struct gnode){.label = sim_xstrdup(label), .key = sim_xstrdup(key), .parent = parent};
    if (parent >= 0) {
        struct gnode *p = &g->nodes[parent];
        if (p->nkids == p->capkids) {
            p->capkids = p->capkids ? p->capkids * 2 : 4;
            p->kids = sim_xreallocarray(p->kids, p->capkids, sizeof(*p->kids));
        }
        p->kids[p->nkids++] = i;
    }
    return i;
}

static void tree_free(struct tui_gantt *g)
{
    for (size_t i = 0; i < g->nnodes; i++) {
        free(g->nodes[i].label);
        free(g->nodes[i].key);
        free(g->nodes[i].kids);
        free(g->nodes[i].tracks);
    }
    free(g->nodes);
    g->nodes = NULL;
    g->nnodes = g->capnodes = 0;
}

/* The child group of parent labelled label, created when missing. */
static int group_child(struct tui_gantt *g, int parent, const char *label, const char *key)
{
    for (size_t k = 0; k < g->nodes[parent].nkids; k++) {
        int c = g->nodes[parent].kids[k];
        if (!g->nodes[c].is_track && strcmp(g->nodes[c].label, label) == 0)
            return c;
    }
    return node_new(g, parent, label, key);
}

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

static struct tui_gantt *sort_ctx;

static int engine_rank(const struct tui_gantt *g, const struct gnode *n)
{
    if (n->is_track)
        return (int)trace_model_track_get(g->m, n->track)->engine;
    if (n->engine_group && n->ntracks)
        return (int)trace_model_track_get(g->m, n->tracks[0])->engine;
    return -1; /* dotted groups first */
}

static int kid_cmp(const void *pa, const void *pb)
{
    const struct gnode *a = &sort_ctx->nodes[*(const int *)pa];
    const struct gnode *b = &sort_ctx->nodes[*(const int *)pb];
    int ra = engine_rank(sort_ctx, a), rb = engine_rank(sort_ctx, b);
    if ((a->engine_group || b->engine_group) && ra != rb)
        return ra < rb ? -1 : 1;
    if (a->is_track && b->is_track && !strchr(a->label, '.') && !strchr(b->label, '.')) {
        const struct trace_track *ta = trace_model_track_get(sort_ctx->m, a->track);
        const struct trace_track *tb = trace_model_track_get(sort_ctx->m, b->track);
        if (ta->engine == tb->engine && ta->engine_id != tb->engine_id && ta->engine_id >= 0 &&
            tb->engine_id >= 0)
            return ta->engine_id < tb->engine_id ? -1 : 1;
    }
    int c = natural_cmp(a->label, b->label);
    return c ? c : (a->key && b->key ? strcmp(a->key, b->key) : 0);
}

/* Collect the tracks below each group (post-order), simplify, sort, set depths. */
static void tree_finish(struct tui_gantt *g, int n, int depth)
{
    struct gnode *node = &g->nodes[n];
    /* a group holding a single group is one row: "sip0.cube0" */
    while (!node->is_track && n != 0 && node->nkids == 1 && !g->nodes[node->kids[0]].is_track) {
        struct gnode *kid = &g->nodes[node->kids[0]];
        char *label = sim_xasprintf("%s.%s", node->label, kid->label);
        free(node->label);
        node->label = label;
        free(node->key);
        node->key = kid->key;
        kid->key = NULL;
        free(node->kids);
        node->kids = kid->kids, node->nkids = kid->nkids, node->capkids = kid->capkids;
        kid->kids = NULL, kid->nkids = kid->capkids = 0;
        for (size_t k = 0; k < node->nkids; k++)
            g->nodes[node->kids[k]].parent = n;
    }
    node->depth = depth;
    for (size_t k = 0; k < g->nodes[n].nkids; k++) {
        int c = g->nodes[n].kids[k];
        tree_finish(g, c, n == 0 ? 0 : depth + 1);
        /* a group holding a single track is that track's row */
        struct gnode *cn = &g->nodes[c];
        if (!cn->is_track && cn->nkids == 1 && g->nodes[cn->kids[0]].is_track) {
            int t = cn->kids[0];
            struct gnode *tn = &g->nodes[t];
            if (!cn->engine_group) {
                char *label = sim_xasprintf("%s.%s", cn->label, tn->label);
                free(tn->label);
                tn->label = label;
            }
            tn->parent = n;
            tn->depth = cn->depth;
            g->nodes[n].kids[k] = t;
            cn->nkids = 0; /* orphaned: never reached again */
        }
    }
    node = &g->nodes[n];
    if (node->is_track)
        return;
    size_t total = 0;
    for (size_t k = 0; k < node->nkids; k++) {
        struct gnode *cn = &g->nodes[node->kids[k]];
        total += cn->is_track ? 1 : cn->ntracks;
    }
    free(node->tracks);
    node->tracks = sim_xcalloc(total + 1, sizeof(*node->tracks));
    node->ntracks = 0;
    for (size_t k = 0; k < node->nkids; k++) {
        struct gnode *cn = &g->nodes[node->kids[k]];
        if (cn->is_track)
            node->tracks[node->ntracks++] = cn->track;
        for (size_t j = 0; !cn->is_track && j < cn->ntracks; j++)
            node->tracks[node->ntracks++] = cn->tracks[j];
    }
    if (node->nkids > 1) {
        sort_ctx = g;
        qsort(node->kids, node->nkids, sizeof(*node->kids), kid_cmp);
        sort_ctx = NULL;
    }
}

/* Rebuild the tree from the model's tracks, keeping which groups were folded and which
 * row was selected. */
static void tree_build(struct tui_gantt *g)
{
    size_t nold = g->nnodes;
    char **folded = sim_xcalloc(nold + 1, sizeof(*folded));
    size_t nfolded = 0;
    char *selkey = NULL;
    for (size_t i = 0; i < nold; i++)
        if (g->nodes[i].folded && g->nodes[i].key)
            folded[nfolded++] = sim_xstrdup(g->nodes[i].key);
    if (g->sel_node >= 0 && g->nodes[g->sel_node].key)
        selkey = sim_xstrdup(g->nodes[g->sel_node].key);
    tree_free(g);

    node_new(g, -1, "", "");
    size_t nt = trace_model_track_count(g->m);
    for (uint32_t t = 0; t < nt; t++) {
        const struct trace_track *tr = trace_model_track_get(g->m, t);
        const char *name = trace_model_str(g->m, tr->name);
        char key[32];
        snprintf(key, sizeof(key), "#%u", (unsigned)t);
        int parent = 0;
        const char *leaf = name;
        if (strchr(name, '.')) {
            const char *p = name;
            for (const char *dot; (dot = strchr(p, '.'));) {
                char *seg = sim_xstrndup(p, (size_t)(dot - p));
                char *path = sim_xstrndup(name, (size_t)(dot - name));
                parent = group_child(g, parent, seg, path);
                free(seg);
                free(path);
                p = dot + 1;
            }
            leaf = p;
        } else {
            const char *kind = trace_engine_name(tr->engine);
            char path[32];
            snprintf(path, sizeof(path), "@%s", kind);
            parent = group_child(g, 0, kind, path);
            g->nodes[parent].engine_group = true;
        }
        int n = node_new(g, parent, leaf, key);
        g->nodes[n].is_track = true;
        g->nodes[n].track = t;
    }
    tree_finish(g, 0, 0);
    for (size_t i = 0; i < g->nnodes; i++)
        for (size_t k = 0; k < nfolded; k++)
            if (g->nodes[i].key && !g->nodes[i].is_track && strcmp(g->nodes[i].key, folded[k]) == 0)
                g->nodes[i].folded = true;
    for (size_t k = 0; k < nfolded; k++)
        free(folded[k]);
    free(folded);
    g->tracks_built = nt;
    g->rows_stale = true;
    free(g->rows);
    g->rows = NULL;
    g->nrows = 0;
    g->sel_node = -1;
    for (size_t i = 0; selkey && i < g->nnodes; i++)
        if (g->nodes[i].key && strcmp(g->nodes[i].key, selkey) == 0)
            g->sel_node = (int)i;
    free(selkey);
}

/* ---- which tracks pass the filters ------------------------------------------------------ */

/* Bring the per-track op kind bits up to date (events are only ever appended). */
static void kinds_update(struct tui_gantt *g)
{
    size_t nt = trace_model_track_count(g->m);
    if (nt > g->kinds_cap) {
        g->kinds = sim_xrealloc(g->kinds, nt);
        memset(g->kinds + g->kinds_cap, 0, nt - g->kinds_cap);
        g->kinds_cap = nt;
    }
    uint64_t n = trace_model_event_count(g->m);
    for (uint64_t i = g->kinds_scanned; i < n; i++) {
        const struct trace_event *e = trace_model_event(g->m, i);
        g->kinds[e->track] |=
            (uint8_t)(1u << (e->op_kind < TRACE_KIND_COUNT ? e->op_kind : TRACE_KIND_UNKNOWN));
        if (e->flags & TRACE_EV_INFLIGHT)
            g->any_inflight = true;
    }
    g->kinds_scanned = n;
}

static bool track_passes(struct tui_gantt *g, const struct tui_view *v, uint32_t t)
{
    if (v->filter_engine >= 0 && (int)trace_model_track_get(g->m, t)->engine != v->filter_engine)
        return false;
    if (v->filter_kind >= 0) {
        kinds_update(g);
        if (!(g->kinds[t] & (1u << v->filter_kind)))
            return false;
    }
    return true;
}

static bool node_passes(struct tui_gantt *g, const struct tui_view *v, int n)
{
    const struct gnode *node = &g->nodes[n];
    if (node->is_track)
        return track_passes(g, v, node->track);
    for (size_t k = 0; k < node->ntracks; k++)
        if (track_passes(g, v, node->tracks[k]))
            return true;
    return false;
}

static void rows_add(struct tui_gantt *g, const struct tui_view *v, int n, size_t *cap)
{
    for (size_t k = 0; k < g->nodes[n].nkids; k++) {
        int c = g->nodes[n].kids[k];
        if (!node_passes(g, v, c))
            continue;
        if (g->nrows == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            g->rows = sim_xreallocarray(g->rows, *cap, sizeof(*g->rows));
        }
        g->rows[g->nrows++] = c;
        if (!g->nodes[c].is_track && !g->nodes[c].folded)
            rows_add(g, v, c, cap);
    }
}

static int node_label_width(const struct tui_gantt *g, int n, bool unicode)
{
    const struct gnode *node = &g->nodes[n];
    return node->depth + 2 +
           tui_text_width(node->label, strlen(node->label), unicode, TUI_TEXT_UNTRUSTED);
}

static void set_sel(struct tui_gantt *g, size_t row)
{
    g->sel = row;
    g->sel_node = row < g->nrows ? g->rows[row] : -1;
}

/* Rebuild the visible rows, keeping the selected node selected when it is still shown,
 * else selecting its nearest shown ancestor. */
static void rows_build(struct tui_gantt *g, const struct tui_view *v)
{
    size_t cap = 0;
    free(g->rows);
    g->rows = NULL;
    g->nrows = 0;
    rows_add(g, v, 0, &cap);
    size_t sel = 0;
    bool found = false;
    for (int a = g->sel_node; a > 0 && !found; a = g->nodes[a].parent)
        for (size_t i = 0; i < g->nrows && !found; i++)
            if (g->rows[i] == a)
                sel = i, found = true;
    if (found && g->rows[sel] == g->sel_node)
        g->sel = sel; /* keep the identity even when it is not on screen yet */
    else
        set_sel(g, sel);
    g->label_want = LABEL_MIN;
    for (size_t i = 0; i < g->nrows; i++) {
        int w = node_label_width(g, g->rows[i], v->unicode);
        if (w > g->label_want)
            g->label_want = w;
    }
    g->rows_stale = false;
    g->rows_engine = v->filter_engine;
    g->rows_kind = v->filter_kind;
}

/* Unfold every group above node n. */
static void unfold_to(struct tui_gantt *g, int n)
{
    for (int a = g->nodes[n].parent; a > 0; a = g->nodes[a].parent)
        if (g->nodes[a].folded)
            g->nodes[a].folded = false, g->rows_stale = true;
}

static int track_node(const struct tui_gantt *g, uint32_t track)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].is_track && g->nodes[i].track == track)
            return (int)i;
    return -1;
}

/* ---- bandwidth index ---------------------------------------------------------------------- */

static int cmp_u64pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

static void bw_build(struct tui_gantt *g)
{
    size_t n = trace_model_bw_sample_count(g->m);
    if (n == g->bw_built)
        return;
    struct bw_index *b = &g->bw;
    free(b->start), free(b->end), free(b->pre);
    uint64_t *tmp = sim_xcalloc(n * 3 + 1, sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(g->m, i);
        tmp[i * 3] = s->cycle;
        tmp[i * 3 + 1] = s->window ? s->window : 1;
        tmp[i * 3 + 2] = s->read_bytes + s->write_bytes;
    }
    qsort(tmp, n, 3 * sizeof(uint64_t), cmp_u64pair);
    b->start = sim_xcalloc(n + 1, sizeof(*b->start));
    b->end = sim_xcalloc(n + 1, sizeof(*b->end));
    b->pre = sim_xcalloc(n + 1, sizeof(*b->pre));
    b->max_rate = 0;
    for (size_t i = 0; i < n; i++) {
        b->start[i] = tmp[i * 3];
        b->end[i] = tmp[i * 3] + tmp[i * 3 + 1];
        b->pre[i + 1] = b->pre[i] + (double)tmp[i * 3 + 2];
        double rate = (double)tmp[i * 3 + 2] / (double)tmp[i * 3 + 1];
        if (rate > b->max_rate)
            b->max_rate = rate;
    }
    b->n = n;
    free(tmp);
    g->bw_built = n;
}

/* Bytes moved within [a, b), each sample's bytes spread evenly over its window. */
static double bw_bytes(const struct bw_index *b, uint64_t a, uint64_t e)
{
    /* first sample that starts at or after a, stepping back over one that overlaps a */
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->start[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    double bytes = 0;
    size_t i = lo;
    if (i > 0 && b->end[i - 1] > a) {
        size_t k = i - 1;
        uint64_t s = a, f = b->end[k] < e ? b->end[k] : e;
        bytes += (b->pre[k + 1] - b->pre[k]) * (double)(f - s) / (double)(b->end[k] - b->start[k]);
    }
    /* samples starting inside [a, e) */
    size_t j;
    lo = i, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->start[mid] < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    j = lo; /* [i, j) start inside */
    if (j > i) {
        bytes += b->pre[j - 1] - b->pre[i]; /* all but the last, assumed inside */
        size_t k = j - 1;
        uint64_t f = b->end[k] < e ? b->end[k] : e;
        bytes += (b->pre[k + 1] - b->pre[k]) * (double)(f - b->start[k]) /
                 (double)(b->end[k] - b->start[k]);
    }
    return bytes;
}

/* ---- the view of time --------------------------------------------------------------------- */

static uint64_t t_min(const struct tui_gantt *g)
{
    return trace_model_t_min(g->m);
}

static uint64_t t_max(const struct tui_gantt *g)
{
    uint64_t a = trace_model_t_min(g->m), b = trace_model_t_max(g->m);
    return b > a ? b : a + 1;
}

static double fit_cpc(const struct tui_gantt *g)
{
    double span = (double)(t_max(g) - t_min(g));
    double cpc = g->plot_w > 0 ? span / g->plot_w : 1;
    return cpc < 1 ? 1 : cpc;
}

static void view_clamp(struct tui_gantt *g)
{
    double maxc = fit_cpc(g);
    if (g->cpc > maxc)
        g->cpc = maxc;
    if (g->cpc < 1)
        g->cpc = 1;
    double lo = (double)t_min(g), hi = (double)t_max(g) - g->plot_w * g->cpc;
    if (g->t0 > hi)
        g->t0 = hi;
    if (g->t0 < lo)
        g->t0 = lo;
    g->t0 = floor(g->t0);
}

static void view_fit(struct tui_gantt *g)
{
    g->cpc = fit_cpc(g);
    g->t0 = (double)t_min(g);
    g->fit = true;
    g->fit_min = t_min(g);
    g->fit_max = t_max(g);
}

/* Cycles covered by column i: [*a, *b). */
static void cell_range(const struct tui_gantt *g, int i, uint64_t *a, uint64_t *b)
{
    double x = g->t0 + i * g->cpc;
    *a = (uint64_t)floor(x);
    *b = (uint64_t)floor(x + g->cpc);
    if (*b <= *a)
        *b = *a + 1;
}

static uint64_t view_end(const struct tui_gantt *g)
{
    uint64_t a, b;
    cell_range(g, g->plot_w > 0 ? g->plot_w - 1 : 0, &a, &b);
    return b;
}

/* Column of time t (may be outside [0, plot_w)). */
static long col_of(const struct tui_gantt *g, uint64_t t)
{
    return (long)floor(((double)t - g->t0) / g->cpc);
}

/* Keep the cursor inside the trace and inside the view. */
static void cursor_clamp(struct tui_gantt *g, struct tui_view *v)
{
    uint64_t c = v->cursor;
    uint64_t a, b;
    if (c < t_min(g))
        c = t_min(g);
    if (c >= t_max(g))
        c = t_max(g) - 1;
    cell_range(g, 0, &a, &b);
    if (c < a)
        c = a;
    uint64_t e = view_end(g);
    if (c >= e)
        c = e - 1;
    tui_view_set_cursor(v, c);
}

/* Pan the view so that time t is shown, about a quarter in from the edge it was beyond. */
static void show_time(struct tui_gantt *g, uint64_t t)
{
    long col = col_of(g, t);
    if (col >= 0 && col < g->plot_w)
        return;
    g->t0 = (double)t - g->plot_w * g->cpc / 4;
    if (col >= g->plot_w)
        g->t0 = (double)t - g->plot_w * g->cpc * 3 / 4;
    g->fit = false;
    view_clamp(g);
}

/* ---- events --------------------------------------------------------------------------------- */

static uint64_t ev_end(const struct tui_gantt *g, const struct trace_event *e)
{
    if (e->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(g->m);
        return now > e->start ? now : e->start + 1;
    }
    return e->end > e->start ? e->end : e->start + 1;
}

static bool event_passes(const struct tui_gantt *g, const struct tui_view *v,
                         const struct trace_event *e)
{
    if (v->filter_kind >= 0 && e->op_kind != v->filter_kind)
        return false;
    if (v->filter_engine >= 0 &&
        (int)trace_model_track_get(g->m, e->track)->engine != v->filter_engine)
        return false;
    return true;
}

/* The op of track under time t: the latest-starting op covering t, else the op covering
 * most of the column [a, b). TUI_NO_EVENT when none. */
static uint64_t op_at(const struct tui_gantt *g, const struct tui_view *v, uint32_t track,
                      uint64_t t, uint64_t a, uint64_t b)
{
    const uint64_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    uint64_t best = TUI_NO_EVENT, best_start = 0;
    for (size_t k = trace_model_track_seek(g->m, track, t), s = 0; k < n && s < HOVER_SCAN;
         k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start > t)
            break;
        if (ev_end(g, e) > t && event_passes(g, v, e) &&
            (best == TUI_NO_EVENT || e->start >= best_start))
            best = idx[k], best_start = e->start;
    }
    if (best != TUI_NO_EVENT)
        return best;
    uint64_t best_ov = 0;
    for (size_t k = trace_model_track_seek(g->m, track, a), s = 0; k < n && s < SCAN_EVENTS;
         k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start >= b)
            break;
        uint64_t end = ev_end(g, e);
        uint64_t lo = e->start > a ? e->start : a, hi = end < b ? end : b;
        if (hi > lo && hi - lo > best_ov && event_passes(g, v, e))
            best = idx[k], best_ov = hi - lo;
    }
    return best;
}

static void update_hover(struct tui_gantt *g, struct tui_view *v)
{
    uint64_t h = TUI_NO_EVENT;
    if (g->sel < g->nrows && g->nodes[g->rows[g->sel]].is_track) {
        uint64_t a, b;
        long col = col_of(g, v->cursor);
        cell_range(g, (int)(col < 0 ? 0 : col), &a, &b);
        h = op_at(g, v, g->nodes[g->rows[g->sel]].track, v->cursor, a, b);
    }
    tui_view_hover(v, h);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

struct tui_gantt *tui_gantt_new(struct tui_view *v)
{
    struct tui_gantt *g = sim_xcalloc(1, sizeof(*g));
    g->m = v->m;
    g->fit = true;
    g->follow = true;
    g->cpc = 1;
    g->t0 = (double)trace_model_t_min(v->m);
    g->band_markers = g->band_tokens = g->band_bw = -1;
    g->sel_node = -1;
    g->cursor_seen = v->cursor;
    tree_build(g);
    rows_build(g, v);
    update_hover(g, v);
    g->seen_gen = trace_model_generation(v->m);
    return g;
}

void tui_gantt_free(struct tui_gantt *g)
{
    if (!g)
        return;
    tree_free(g);
    free(g->rows);
    free(g->kinds);
    free(g->bw.start), free(g->bw.end), free(g->bw.pre);
    free(g->busy);
    free(g->busy_done);
    free(g->pattern);
    free(g->match_keys);
    free(g->match_vals);
    free(g);
}

static void gantt_free(void *self)
{
    tui_gantt_free(self);
}

/* Live: keep the right edge at the end of the trace ("now") at the same zoom. */
static void follow_now(struct tui_gantt *g)
{
    uint64_t end = t_max(g);
    if (end == g->follow_at)
        return;
    if (g->follow && !g->fit) {
        g->t0 = (double)end - g->plot_w * g->cpc;
        view_clamp(g);
    }
    g->follow_at = end;
}

/* After the user moved the view: it follows "now" while its last column shows it. */
static void update_follow(struct tui_gantt *g)
{
    g->follow = g->fit || (double)view_end(g) + g->cpc >= (double)t_max(g);
    g->follow_at = t_max(g);
}

/* Bring the rows and the view up to date with the model and the filters. */
static bool gantt_sync(void *self, struct tui_view *v)
{
    struct tui_gantt *g = self;
    bool changed = false;
    uint64_t gen = trace_model_generation(g->m);
    if (trace_model_track_count(g->m) != g->tracks_built)
        tree_build(g), changed = true;
    if (g->rows_stale || g->rows_engine != v->filter_engine || g->rows_kind != v->filter_kind) {
        rows_build(g, v);
        changed = true;
    }
    if (gen != g->seen_gen) {
        g->seen_gen = gen;
        changed = true;
        if (g->fit && (g->fit_min != t_min(g) || g->fit_max != t_max(g)))
            view_fit(g);
        if (v->live)
            follow_now(g);
    }
    if (v->cursor != g->cursor_seen) { /* moved by another pane: bring it into view */
        show_time(g, v->cursor);
        g->cursor_seen = v->cursor;
        changed = true;
    }
    if (changed)
        update_hover(g, v);
    return changed;
}

/* ---- layout -------------------------------------------------------------------------------- */

static void layout(struct tui_gantt *g, struct tui_rect r, const struct tui_view *v)
{
    bool ns_ruler = trace_model_clock_ghz(g->m) > 0 && r.h >= 12;
    (void)v;
    int want = g->label_want;
    if (want > LABEL_MAX)
        want = LABEL_MAX;
    if (want > r.w / 3)
        want = r.w / 3 > LABEL_MIN ? r.w / 3 : LABEL_MIN;
    int old_w = g->plot_w;
    g->rect = r;
    g->label_w = want;
    g->plot_x = r.x + want + 1;
    g->plot_w = r.w - want - 1;
    if (g->plot_w < 1)
        g->plot_w = 1;
    int y = r.y + 1; /* below the title */
    g->ruler_rows = ns_ruler ? 2 : 1;
    y += g->ruler_rows;
    /* a band only where at least BAND_ROWS rows of tracks remain below it */
    int end = r.y + r.h;
    g->band_markers = trace_model_marker_count(g->m) && end - y > BAND_ROWS ? y++ : -1;
    g->band_tokens = trace_model_token_count(g->m) && end - y > BAND_ROWS ? y++ : -1;
    g->band_bw = trace_model_bw_sample_count(g->m) && end - y > BAND_ROWS ? y++ : -1;
    g->rows_y = y;
    g->rows_h = r.y + r.h - y;
    if (g->rows_h < 0)
        g->rows_h = 0;
    if (g->fit || old_w != g->plot_w) {
        if (g->fit)
            view_fit(g);
        else
            view_clamp(g);
    }
}

static void scroll_to_sel(struct tui_gantt *g)
{
    if (g->rows_h <= 0)
        return;
    if (g->sel < g->top)
        g->top = g->sel;
    if (g->sel >= g->top + (size_t)g->rows_h)
        g->top = g->sel - (size_t)g->rows_h + 1;
    if (g->top + (size_t)g->rows_h > g->nrows)
        g->top = g->nrows > (size_t)g->rows_h ? g->nrows - (size_t)g->rows_h : 0;
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* The smallest step of 1, 2 or 5 times a power of ten that is at least min. */
static double nice_step(double min)
{
    double p = 1;
    while (p * 10 <= min)
        p *= 10;
    for (;;) {
        if (p >= min)
            return p;
        if (2 * p >= min)
            return 2 * p;
        if (5 * p >= min)
            return 5 * p;
        p *= 10;
    }
}

/* A tick label in cycles: exact, shortened with k / M / G when the step allows. */
static void cycle_label(char *buf, size_t n, uint64_t t, uint64_t step)
{
    if (step % 1000000000 == 0)
        snprintf(buf, n, "%lluG", (unsigned long long)(t / 1000000000));
    else if (step % 1000000 == 0)
        snprintf(buf, n, "%lluM", (unsigned long long)(t / 1000000));
    else if (step % 1000 == 0)
        snprintf(buf, n, "%lluk", (unsigned long long)(t / 1000));
    else
        snprintf(buf, n, "%llu", (unsigned long long)t);
}

static void draw_ruler(struct tui_gantt *g, struct tui_canvas *c, int y,
                       const struct tui_glyphs *gl)
{
    char probe[32];
    cycle_label(probe, sizeof(probe), t_max(g), 1);
    double step = nice_step(g->cpc * ((double)strlen(probe) + 2));
    uint64_t s = (uint64_t)step;
    tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ', TUI_STYLE_RULER);
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_RULER, "cycles", 0);
    uint64_t first = (uint64_t)ceil(g->t0 / step) * s;
    for (uint64_t t = first; t < view_end(g); t += s) {
        long col = col_of(g, t);
        if (col < 0 || col >= g->plot_w)
            continue;
        char label[32];
        cycle_label(label, sizeof(label), t, s);
        tui_canvas_put(c, g->plot_x + (int)col, y, gl->tick, TUI_STYLE_RULER);
        tui_canvas_text(c, g->plot_x + (int)col + 1, y, g->plot_w - (int)col - 1, TUI_STYLE_RULER,
                        label, 0);
    }
}

static void draw_ns_ruler(struct tui_gantt *g, struct tui_canvas *c, int y,
                          const struct tui_glyphs *gl)
{
    double ghz = trace_model_clock_ghz(g->m);
    char probe[32];
    tui_fmt_ns(probe, sizeof(probe), (double)t_max(g) / ghz);
    double step = nice_step(g->cpc / ghz * ((double)strlen(probe) + 2));
    tui_canvas_fill(c, (struct tui_rect){g->plot_x, y, g->plot_w, 1}, ' ', TUI_STYLE_RULER);
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_RULER, "ns", 0);
    double first = ceil(g->t0 / ghz / step) * step;
    for (double ns = first; ns * ghz < (double)view_end(g); ns += step) {
        long col = (long)floor((ns * ghz - g->t0) / g->cpc);
        if (col < 0 || col >= g->plot_w)
            continue;
        char label[32];
        tui_fmt_ns(label, sizeof(label), ns);
        tui_canvas_put(c, g->plot_x + (int)col, y, gl->tick, TUI_STYLE_RULER);
        tui_canvas_text(c, g->plot_x + (int)col + 1, y, g->plot_w - (int)col - 1, TUI_STYLE_RULER,
                        label, 0);
    }
}

static int cmp_marker_col(const void *a, const void *b)
{
    const long *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Markers in view as (column, marker index) pairs sorted by column; caller frees. */
static long *markers_in_view(const struct tui_gantt *g, size_t *n)
{
    size_t nm = trace_model_marker_count(g->m), k = 0;
    long *cols = sim_xcalloc(nm * 2 + 2, sizeof(long));
    for (size_t i = 0; i < nm; i++) {
        long col = col_of(g, trace_model_marker(g->m, i)->cycle);
        if (col >= 0 && col < g->plot_w)
            cols[k * 2] = col, cols[k * 2 + 1] = (long)i, k++;
    }
    qsort(cols, k, 2 * sizeof(long), cmp_marker_col);
    *n = k;
    return cols;
}

static void draw_markers_band(struct tui_gantt *g, struct tui_canvas *c, int y,
                              const struct tui_glyphs *gl)
{
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_MARKER, "markers", 0);
    size_t n;
    long *cols = markers_in_view(g, &n);
    for (size_t k = 0; k < n; k++) {
        long col = cols[k * 2];
        const struct trace_marker *mk = trace_model_marker(g->m, (size_t)cols[k * 2 + 1]);
        tui_canvas_put(c, g->plot_x + (int)col, y, gl->marker_mark, TUI_STYLE_MARKER);
        long next = k + 1 < n ? cols[(k + 1) * 2] : g->plot_w;
        int room = (int)(next - col - 2);
        if (room > 0)
            tui_canvas_textn(c, g->plot_x + (int)col + 1, y, room, TUI_STYLE_MARKER,
                             trace_model_str(g->m, mk->name), trace_model_str_len(g->m, mk->name),
                             TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
    free(cols);
}

static void draw_tokens_band(struct tui_gantt *g, struct tui_canvas *c, int y,
                             const struct tui_glyphs *gl)
{
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_LABEL, "tokens", 0);
    size_t n = trace_model_token_count(g->m);
    uint64_t a0, b0, e = view_end(g);
    cell_range(g, 0, &a0, &b0);
    for (size_t i = 0; i < n; i++) {
        const struct trace_token *t = trace_model_token(g->m, i);
        if (t->end <= a0 || t->start >= e)
            continue;
        long c0 = col_of(g, t->start), c1 = (long)ceil(((double)t->end - g->t0) / g->cpc);
        if (c0 < 0)
            c0 = 0;
        if (c1 > g->plot_w)
            c1 = g->plot_w;
        if (c1 <= c0)
            c1 = c0 + 1;
        bool alt = (t->token_index & 1) != 0;
        enum tui_style st = !t->decode ? TUI_STYLE_TOKEN_PREFILL
                            : alt      ? TUI_STYLE_TOKEN_ALT
                                       : TUI_STYLE_TOKEN_DECODE;
        uint32_t glyph = alt ? gl->shade[3] : gl->eighths[8];
        for (long x = c0; x < c1; x++)
            tui_canvas_put(c, g->plot_x + (int)x, y, glyph, st);
    }
}

static double bw_peak(const struct tui_gantt *g)
{
    const struct sim_value *mem = sim_value_map_get(trace_model_config(g->m), "memory");
    double peak = sim_value_get_float(mem, "dram_peak_bw_bytes_per_cycle", 0);
    return peak > 0 ? peak : 0;
}

static void draw_bw_band(struct tui_gantt *g, struct tui_canvas *c, int y,
                         const struct tui_glyphs *gl)
{
    bw_build(g);
    tui_canvas_text(c, g->rect.x, y, g->label_w, TUI_STYLE_LABEL, "DRAM bw", 0);
    double scale = bw_peak(g);
    if (scale < g->bw.max_rate)
        scale = g->bw.max_rate;
    if (scale <= 0)
        return;
    for (int i = 0; i < g->plot_w; i++) {
        uint64_t a, b;
        cell_range(g, i, &a, &b);
        double rate = bw_bytes(&g->bw, a, b) / (double)(b - a);
        if (rate <= 0)
            continue;
        int level = (int)ceil(rate / scale * 8 - 1e-9);
        level = level < 1 ? 1 : level > 8 ? 8 : level;
        tui_canvas_put(c, g->plot_x + i, y, gl->spark[level], TUI_STYLE_BANDWIDTH);
    }
}

/* Busy cycles of track in column i, computed once per frame. */
static uint64_t busy_at(struct tui_gantt *g, uint32_t track, int i)
{
    if (!g->busy_done[track]) {
        uint64_t *row = g->busy + (size_t)track * (size_t)g->plot_w;
        for (int k = 0; k < g->plot_w; k++) {
            uint64_t a, b;
            cell_range(g, k, &a, &b);
            row[k] = trace_model_track_busy(g->m, track, a, b);
        }
        g->busy_done[track] = 1;
    }
    return g->busy[(size_t)track * (size_t)g->plot_w + (size_t)i];
}

static void busy_reset(struct tui_gantt *g)
{
    size_t nt = trace_model_track_count(g->m);
    size_t need = nt * (size_t)g->plot_w;
    if (need > g->busy_cap) {
        free(g->busy);
        g->busy = sim_xcalloc(need, sizeof(*g->busy));
        g->busy_cap = need;
    }
    if (nt > g->busy_done_cap) {
        free(g->busy_done);
        g->busy_done = sim_xcalloc(nt, 1);
        g->busy_done_cap = nt;
    }
    if (nt)
        memset(g->busy_done, 0, nt);
}

static const enum tui_style kind_styles[TRACE_KIND_COUNT] = {
    [TRACE_KIND_MEMORY] = TUI_STYLE_OP_MEMORY,
    [TRACE_KIND_GEMM] = TUI_STYLE_OP_GEMM,
    [TRACE_KIND_MATH] = TUI_STYLE_OP_MATH,
    [TRACE_KIND_UNKNOWN] = TUI_STYLE_OP_UNKNOWN,
};

/* The style of a busy cell: the selected op, an op in flight, or the op kind with the
 * most time in the cell (dimmed when the kind filter hides it). */
static enum tui_style cell_style(const struct tui_gantt *g, const struct tui_view *v,
                                 uint32_t track, uint64_t a, uint64_t b)
{
    if (v->selected != TUI_NO_EVENT) {
        const struct trace_event *s = trace_model_event(g->m, v->selected);
        if (s->track == track && s->start < b && ev_end(g, s) > a)
            return TUI_STYLE_OP_SELECTED;
    }
    /* a track with ops of one kind only (the usual engine) needs no look at its ops */
    uint8_t kb = g->kinds[track];
    if (!g->any_inflight && kb && !(kb & (kb - 1))) {
        int kind = __builtin_ctz(kb);
        return v->filter_kind >= 0 && kind != v->filter_kind ? TUI_STYLE_DIM : kind_styles[kind];
    }
    const uint64_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    uint64_t w[TRACE_KIND_COUNT] = {0};
    bool inflight = false;
    size_t seen = 0;
    for (size_t k = trace_model_track_seek(g->m, track, a), s = 0;
         k < n && s < SCAN_EVENTS && seen < SAMPLE_EVENTS; k++, s++) {
        const struct trace_event *e = trace_model_event(g->m, idx[k]);
        if (e->start >= b)
            break;
        uint64_t end = ev_end(g, e);
        if (end <= a)
            continue;
        seen++;
        uint64_t lo = e->start > a ? e->start : a, hi = end < b ? end : b;
        w[e->op_kind < TRACE_KIND_COUNT ? e->op_kind : TRACE_KIND_UNKNOWN] += hi - lo;
        if (e->flags & TRACE_EV_INFLIGHT)
            inflight = true;
    }
    if (inflight)
        return TUI_STYLE_OP_INFLIGHT;
    int best = TRACE_KIND_UNKNOWN;
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (w[k] > w[best])
            best = k;
    if (v->filter_kind >= 0 && best != v->filter_kind)
        return TUI_STYLE_DIM;
    return kind_styles[best];
}

/* The glyph of a cell busy for busy of its cycles [a, b): full; a bar edge (left or
 * right aligned block) when the busy part is one run touching an edge; else a shade. */
static uint32_t cell_glyph(const struct tui_gantt *g, uint32_t track, uint64_t a, uint64_t b,
                           uint64_t busy, const struct tui_glyphs *gl)
{
    uint64_t w = b - a;
    if (busy >= w)
        return gl->eighths[8];
    uint64_t e8 = (busy * 8 + w / 2) / w;
    e8 = e8 < 1 ? 1 : e8 > 7 ? 7 : e8;
    if (trace_model_track_busy(g->m, track, a, a + busy) == busy)
        return gl->eighths[e8];
    if (trace_model_track_busy(g->m, track, b - busy, b) == busy)
        return e8 >= 4 ? gl->right_half : gl->right_8th;
    return busy * 3 <= w ? gl->shade[1] : busy * 3 <= 2 * w ? gl->shade[2] : gl->shade[3];
}

static void draw_track_row(struct tui_gantt *g, struct tui_canvas *c, const struct tui_view *v,
                           int y, uint32_t track, const struct tui_glyphs *gl)
{
    for (int i = 0; i < g->plot_w; i++) {
        uint64_t busy = busy_at(g, track, i);
        if (!busy)
            continue;
        uint64_t a, b;
        cell_range(g, i, &a, &b);
        tui_canvas_put(c, g->plot_x + i, y, cell_glyph(g, track, a, b, busy, gl),
                       cell_style(g, v, track, a, b));
    }
    /* names on the ops wide enough to hold them */
    const uint64_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    uint64_t a0, b0, e = view_end(g);
    cell_range(g, 0, &a0, &b0);
    for (size_t k = trace_model_track_seek(g->m, track, a0), s = 0; k < n && s < TEXT_EVENTS;
         k++, s++) {
        const struct trace_event *ev = trace_model_event(g->m, idx[k]);
        if (ev->start >= e)
            break;
        uint64_t end = ev_end(g, ev);
        long c0 = (long)ceil(((double)ev->start - g->t0) / g->cpc);
        long c1 = (long)floor(((double)end - g->t0) / g->cpc);
        if (c0 < 0)
            c0 = 0;
        if (c1 > g->plot_w)
            c1 = g->plot_w;
        if (c1 - c0 < 5 || !event_passes(g, v, ev))
            continue;
        const char *name = trace_model_str(g->m, ev->op);
        size_t len = trace_model_str_len(g->m, ev->op);
        int room = (int)(c1 - c0 - 2);
        if (room < 6 && room < tui_text_width(name, len, c->unicode, TUI_TEXT_UNTRUSTED))
            continue; /* a few letters and an ellipsis would only be noise */
        enum tui_style st = idx[k] == v->selected ? TUI_STYLE_OP_SELECTED : TUI_STYLE_OP_TEXT;
        tui_canvas_textn(c, g->plot_x + (int)c0 + 1, y, room, st, name, len,
                         TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
    }
}

/* A group row: how busy its tracks are on average, as a shade. */
static void draw_group_row(struct tui_gantt *g, struct tui_canvas *c, const struct tui_view *v,
                           int y, int node, const struct tui_glyphs *gl)
{
    const struct gnode *gn = &g->nodes[node];
    uint32_t *tracks = sim_xcalloc(gn->ntracks + 1, sizeof(*tracks));
    size_t nt = 0;
    for (size_t k = 0; k < gn->ntracks; k++)
        if (track_passes(g, v, gn->tracks[k]))
            tracks[nt++] = gn->tracks[k];
    for (int i = 0; nt && i < g->plot_w; i++) {
        uint64_t a, b, busy = 0;
        cell_range(g, i, &a, &b);
        for (size_t k = 0; k < nt; k++)
            busy += busy_at(g, tracks[k], i);
        if (!busy)
            continue;
        uint64_t w = (b - a) * nt;
        uint32_t glyph = busy >= w           ? gl->eighths[8]
                         : busy * 3 <= w     ? gl->shade[1]
                         : busy * 3 <= 2 * w ? gl->shade[2]
                                             : gl->shade[3];
        tui_canvas_put(c, g->plot_x + i, y, glyph, TUI_STYLE_GROUP);
    }
    free(tracks);
}

static void draw_label(struct tui_gantt *g, struct tui_canvas *c, int y, size_t row, bool focused,
                       const struct tui_glyphs *gl)
{
    const struct gnode *n = &g->nodes[g->rows[row]];
    bool sel = row == g->sel;
    enum tui_style st = sel && focused ? TUI_STYLE_LABEL_SEL
                        : sel          ? TUI_STYLE_SELECTION
                        : n->is_track  ? TUI_STYLE_LABEL
                                       : TUI_STYLE_GROUP;
    tui_canvas_fill(c, (struct tui_rect){g->rect.x, y, g->label_w, 1}, ' ', st);
    int x = g->rect.x + n->depth;
    if (!n->is_track) {
        tui_canvas_put(c, x, y, n->folded ? gl->fold_closed : gl->fold_open, st);
        x += 2;
    } else {
        x += 1;
    }
    tui_canvas_text(c, x, y, g->rect.x + g->label_w - x, st, n->label,
                    TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
}

static void draw_title(struct tui_gantt *g, struct tui_canvas *c, const struct tui_view *v,
                       bool focused)
{
    struct tui_rect r = g->rect;
    enum tui_style st = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', st);
    char buf[256], cpc[32];
    int n = snprintf(buf, sizeof(buf), " Gantt  %s cyc/col", tui_fmt_si(cpc, sizeof(cpc), g->cpc));
    if (g->fit)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, " (fit)");
    if (v->live && !g->follow)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  not following now (L)");
    if (v->filter_engine >= 0)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  engine=%s",
                      trace_engine_name((enum trace_engine)v->filter_engine));
    if (v->filter_kind >= 0)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "  kind=%s",
                      trace_op_kind_name((enum trace_op_kind)v->filter_kind));
    if (g->nrows > (size_t)g->rows_h && g->rows_h > 0)
        snprintf(buf + n, sizeof(buf) - (size_t)n, "  rows %zu-%zu/%zu", g->top + 1,
                 g->top + (size_t)g->rows_h < g->nrows ? g->top + (size_t)g->rows_h : g->nrows,
                 g->nrows);
    tui_canvas_text(c, r.x, r.y, r.w, st, buf, TUI_TEXT_ELLIPSIS);
}

static void gantt_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                         bool focused)
{
    struct tui_gantt *g = self;
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    layout(g, r, v);
    scroll_to_sel(g);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    draw_title(g, c, v, focused);
    if (r.h < 2) {
        tui_canvas_unclip(c);
        return;
    }
    for (int y = r.y + 1; y < r.y + r.h; y++)
        tui_canvas_put(c, g->plot_x - 1, y, gl->vline, TUI_STYLE_BORDER);
    draw_ruler(g, c, r.y + 1, gl);
    if (g->ruler_rows > 1)
        draw_ns_ruler(g, c, r.y + 2, gl);
    if (g->band_markers >= 0)
        draw_markers_band(g, c, g->band_markers, gl);
    if (g->band_tokens >= 0)
        draw_tokens_band(g, c, g->band_tokens, gl);
    if (g->band_bw >= 0)
        draw_bw_band(g, c, g->band_bw, gl);

    busy_reset(g);
    kinds_update(g);
    if (trace_model_event_count(g->m) == 0 && g->rows_h > 0)
        tui_canvas_text(c, g->plot_x + 1, g->rows_y, g->plot_w - 1, TUI_STYLE_DIM,
                        "no ENGINE_EVENTs in this trace", TUI_TEXT_ELLIPSIS);
    else if (g->nrows == 0 && g->rows_h > 0)
        tui_canvas_text(c, g->plot_x + 1, g->rows_y, g->plot_w - 1, TUI_STYLE_DIM,
                        "no rows pass the filters (Esc clears them)", TUI_TEXT_ELLIPSIS);
    for (int k = 0; k < g->rows_h && g->top + (size_t)k < g->nrows; k++) {
        size_t row = g->top + (size_t)k;
        int y = g->rows_y + k;
        draw_label(g, c, y, row, focused, gl);
        const struct gnode *n = &g->nodes[g->rows[row]];
        if (n->is_track)
            draw_track_row(g, c, v, y, n->track, gl);
        else
            draw_group_row(g, c, v, y, g->rows[row], gl);
    }
    /* marker lines through empty cells of the rows */
    size_t nm;
    long *cols = markers_in_view(g, &nm);
    for (size_t k = 0; k < nm; k++) {
        for (int y = g->rows_y; y < g->rows_y + g->rows_h; y++) {
            const struct tui_cell *cell = tui_canvas_cell(c, g->plot_x + (int)cols[k * 2], y);
            if (cell && cell->cp == ' ')
                tui_canvas_put(c, g->plot_x + (int)cols[k * 2], y, gl->vline_light,
                               TUI_STYLE_MARKER);
        }
    }
    free(cols);
    /* the time cursor */
    long cc = col_of(g, v->cursor);
    if (cc >= 0 && cc < g->plot_w) {
        int x = g->plot_x + (int)cc;
        tui_canvas_put(c, x, r.y + 1, gl->cursor_mark, TUI_STYLE_CURSOR);
        for (int y = r.y + 2; y < r.y + r.h; y++) {
            const struct tui_cell *cell = tui_canvas_cell(c, x, y);
            if (!cell)
                continue;
            if (cell->cp == ' ' || (cell->cp == gl->vline_light && y >= g->rows_y))
                tui_canvas_put(c, x, y, gl->vline, TUI_STYLE_CURSOR);
            else
                tui_canvas_restyle(c, x, y, TUI_STYLE_CURSOR);
        }
    }
    tui_canvas_unclip(c);
}

/* ---- actions ----------------------------------------------------------------------------- */

static void zoom(struct tui_gantt *g, struct tui_view *v, double factor)
{
    long col = col_of(g, v->cursor);
    if (col < 0 || col >= g->plot_w)
        col = g->plot_w / 2;
    double cpc = g->cpc * factor;
    double maxc = fit_cpc(g);
    if (cpc >= maxc) {
        view_fit(g);
        return;
    }
    g->cpc = cpc < 1 ? 1 : cpc;
    g->t0 = (double)v->cursor - (double)col * g->cpc;
    g->fit = false;
    view_clamp(g);
}

static void pan(struct tui_gantt *g, struct tui_view *v, int dir)
{
    double cols = g->plot_w / 8 > 1 ? g->plot_w / 8 : 1;
    double before = g->t0;
    g->t0 += dir * cols * g->cpc;
    g->fit = false;
    view_clamp(g);
    double moved = g->t0 - before;
    double c = (double)v->cursor + moved;
    tui_view_set_cursor(v, c < 0 ? 0 : (uint64_t)c);
    cursor_clamp(g, v);
}

static void cursor_move(struct tui_gantt *g, struct tui_view *v, int dir)
{
    uint64_t step = (uint64_t)ceil(g->cpc);
    uint64_t c = v->cursor;
    if (dir < 0)
        c = c > t_min(g) + step ? c - step : t_min(g);
    else
        c = c + step < t_max(g) ? c + step : t_max(g) - 1;
    tui_view_set_cursor(v, c);
    long col = col_of(g, c);
    if (col < 0 || col >= g->plot_w) {
        g->t0 += (col < 0 ? -1 : 1) * (g->plot_w / 8 > 1 ? g->plot_w / 8 : 1) * g->cpc;
        g->fit = false;
        view_clamp(g);
    }
    cursor_clamp(g, v);
}

/* Select event i: its row (unfolded), the cursor at its start, the view showing it. */
static void select_event(struct tui_gantt *g, struct tui_view *v, uint64_t i)
{
    const struct trace_event *e = trace_model_event(g->m, i);
    int n = track_node(g, e->track);
    if (n >= 0) {
        unfold_to(g, n);
        if (g->rows_stale)
            rows_build(g, v);
        for (size_t r = 0; r < g->nrows; r++)
            if (g->rows[r] == n)
                set_sel(g, r);
    }
    tui_view_select(v, i);
    show_time(g, e->start);
    tui_view_set_cursor(v, e->start);
    cursor_clamp(g, v);
    scroll_to_sel(g);
    update_hover(g, v);
    g->cursor_seen = v->cursor;
}

/* In track t, the first op starting after (dir > 0) or the last starting before time t. */
static uint64_t track_step(const struct tui_gantt *g, const struct tui_view *v, uint32_t track,
                           uint64_t t, int dir)
{
    const uint64_t *idx;
    size_t n = trace_model_track_events(g->m, track, &idx);
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first with start > t */
        size_t mid = lo + (hi - lo) / 2;
        if (trace_model_event(g->m, idx[mid])->start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (dir > 0) {
        for (size_t k = lo, s = 0; k < n && s < HOVER_SCAN; k++, s++)
            if (event_passes(g, v, trace_model_event(g->m, idx[k])))
                return idx[k];
        return TUI_NO_EVENT;
    }
    /* last with start < t */
    lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (trace_model_event(g->m, idx[mid])->start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo, s = 0; k > 0 && s < HOVER_SCAN; k--, s++)
        if (event_passes(g, v, trace_model_event(g->m, idx[k - 1])))
            return idx[k - 1];
    return TUI_NO_EVENT;
}

static enum tui_result next_op(struct tui_gantt *g, struct tui_view *v, int dir)
{
    if (g->sel >= g->nrows)
        return TUI_RES_HANDLED;
    const struct gnode *n = &g->nodes[g->rows[g->sel]];
    uint64_t best = TUI_NO_EVENT;
    for (size_t k = 0; k < (n->is_track ? 1 : n->ntracks); k++) {
        uint32_t t = n->is_track ? n->track : n->tracks[k];
        if (!n->is_track && !track_passes(g, v, t))
            continue;
        uint64_t e = track_step(g, v, t, v->cursor, dir);
        if (e == TUI_NO_EVENT)
            continue;
        uint64_t s = trace_model_event(g->m, e)->start;
        if (best == TUI_NO_EVENT || (dir > 0 ? s < trace_model_event(g->m, best)->start
                                             : s > trace_model_event(g->m, best)->start))
            best = e;
    }
    if (best == TUI_NO_EVENT) {
        tui_view_message(v, TUI_STYLE_STATUS,
                         dir > 0 ? "no later op on this row" : "no earlier op on this row");
        return TUI_RES_REDRAW;
    }
    int sel_node = g->rows[g->sel];
    select_event(g, v, best);
    /* stay on a group row when stepping through a group */
    for (size_t r = 0; r < g->nrows; r++)
        if (g->rows[r] == sel_node)
            set_sel(g, r);
    update_hover(g, v);
    return TUI_RES_REDRAW;
}

static enum tui_result enter(struct tui_gantt *g, struct tui_view *v)
{
    if (g->sel >= g->nrows)
        return TUI_RES_HANDLED;
    struct gnode *n = &g->nodes[g->rows[g->sel]];
    if (!n->is_track) {
        n->folded = !n->folded;
        rows_build(g, v);
        return TUI_RES_REDRAW;
    }
    if (v->hover == TUI_NO_EVENT) {
        tui_view_message(v, TUI_STYLE_STATUS, "no op under the cursor on this row");
        return TUI_RES_REDRAW;
    }
    tui_view_select(v, v->hover);
    return TUI_RES_REDRAW;
}

static void fold_all(struct tui_gantt *g, struct tui_view *v)
{
    bool any_open = false;
    for (size_t i = 1; i < g->nnodes; i++)
        if (!g->nodes[i].is_track && g->nodes[i].nkids && !g->nodes[i].folded && g->nodes[i].key)
            any_open = true;
    for (size_t i = 1; i < g->nnodes; i++)
        if (!g->nodes[i].is_track)
            g->nodes[i].folded = any_open;
    rows_build(g, v);
}

/* The next value of a filter: -1 (all), then each value some track or event has. */
static int next_engine(struct tui_gantt *g, int cur)
{
    size_t nt = trace_model_track_count(g->m);
    for (int e = cur + 1; e < TRACE_ENGINE_COUNT; e++)
        for (uint32_t t = 0; t < nt; t++)
            if ((int)trace_model_track_get(g->m, t)->engine == e)
                return e;
    return -1;
}

static int next_kind(struct tui_gantt *g, int cur)
{
    kinds_update(g);
    size_t nt = trace_model_track_count(g->m);
    for (int k = cur + 1; k < TRACE_KIND_COUNT; k++)
        for (uint32_t t = 0; t < nt; t++)
            if (g->kinds[t] & (1u << k))
                return k;
    return -1;
}

static enum tui_result gantt_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_gantt *g = self;
    size_t page = g->rows_h > 1 ? (size_t)g->rows_h - 1 : 1;
    switch (a) {
    case TUI_ACT_ZOOM_IN: zoom(g, v, 0.5); break;
    case TUI_ACT_ZOOM_OUT: zoom(g, v, 2); break;
    case TUI_ACT_FIT: view_fit(g); break;
    case TUI_ACT_PAN_LEFT: pan(g, v, -1); break;
    case TUI_ACT_PAN_RIGHT: pan(g, v, 1); break;
    case TUI_ACT_CURSOR_LEFT: cursor_move(g, v, -1); break;
    case TUI_ACT_CURSOR_RIGHT: cursor_move(g, v, 1); break;
    case TUI_ACT_START:
        tui_view_set_cursor(v, t_min(g));
        show_time(g, t_min(g));
        break;
    case TUI_ACT_END:
        tui_view_set_cursor(v, t_max(g) - 1);
        show_time(g, t_max(g) - 1);
        break;
    case TUI_ACT_UP: set_sel(g, g->sel > 0 ? g->sel - 1 : 0); break;
    case TUI_ACT_DOWN: set_sel(g, g->sel + 1 < g->nrows ? g->sel + 1 : g->sel); break;
    case TUI_ACT_PAGE_UP: set_sel(g, g->sel > page ? g->sel - page : 0); break;
    case TUI_ACT_PAGE_DOWN:
        set_sel(g, g->sel + page < g->nrows ? g->sel + page : (g->nrows ? g->nrows - 1 : 0));
        break;
    case TUI_ACT_SELECT: return enter(g, v);
    case TUI_ACT_NEXT_OP: return next_op(g, v, 1);
    case TUI_ACT_PREV_OP: return next_op(g, v, -1);
    case TUI_ACT_FOLD_ALL: fold_all(g, v); break;
    case TUI_ACT_FILTER_ENGINE: tui_view_filter(v, next_engine(g, v->filter_engine), -1); break;
    case TUI_ACT_FILTER_KIND: tui_view_filter(v, -1, next_kind(g, v->filter_kind)); break;
    case TUI_ACT_FOLLOW:
        if (!v->live)
            return TUI_RES_IGNORED;
        if (!g->fit)
            g->t0 = (double)t_max(g) - g->plot_w * g->cpc;
        view_clamp(g);
        tui_view_set_cursor(v, t_max(g) - 1);
        break;
    default: return TUI_RES_IGNORED;
    }
    if (g->rows_engine != v->filter_engine || g->rows_kind != v->filter_kind)
        rows_build(g, v);
    if (a == TUI_ACT_FILTER_ENGINE || a == TUI_ACT_FILTER_KIND) {
        if (v->selected != TUI_NO_EVENT &&
            !event_passes(g, v, trace_model_event(g->m, v->selected)))
            tui_view_select(v, TUI_NO_EVENT);
    }
    cursor_clamp(g, v);
    scroll_to_sel(g);
    update_hover(g, v);
    g->cursor_seen = v->cursor;
    update_follow(g);
    return TUI_RES_REDRAW;
}

static enum tui_result gantt_mouse(void *self, int x, int y, int button, struct tui_view *v)
{
    struct tui_gantt *g = self;
    long col = x - g->plot_x;
    if (y >= g->rows_y && y < g->rows_y + g->rows_h && button == 1) {
        size_t row = g->top + (size_t)(y - g->rows_y);
        if (row >= g->nrows)
            return TUI_RES_HANDLED;
        set_sel(g, row);
        if (col < 0 && !g->nodes[g->rows[row]].is_track)
            return enter(g, v);
    }
    if (col >= 0 && col < g->plot_w) {
        uint64_t a, b;
        cell_range(g, (int)col, &a, &b);
        tui_view_set_cursor(v, a);
        if (button == 4)
            zoom(g, v, 0.5);
        else if (button == 5)
            zoom(g, v, 2);
    }
    cursor_clamp(g, v);
    update_hover(g, v);
    g->cursor_seen = v->cursor;
    if (button == 1 && v->hover != TUI_NO_EVENT && y >= g->rows_y)
        tui_view_select(v, v->hover);
    update_follow(g);
    return TUI_RES_REDRAW;
}

const struct tui_pane_ops tui_gantt_ops = {
    .name = "Gantt",
    .sync = gantt_sync,
    .render = gantt_render,
    .action = gantt_action,
    .mouse = gantt_mouse,
    .free = gantt_free,
    .uses_view = true,
};

/* ---- search ---------------------------------------------------------------------------- */

/* Whether the string with id s matches the pattern, cached. */
static bool str_matches(struct tui_gantt *g, uint32_t s)
{
    if (!g->match_vals || g->match_len * 2 >= g->match_cap) {
        size_t cap = g->match_cap ? g->match_cap * 2 : 1024;
        uint32_t *keys = sim_xcalloc(cap, sizeof(*keys));
        uint8_t *vals = sim_xcalloc(cap, 1);
        for (size_t i = 0; g->match_vals && i < g->match_cap; i++) {
            if (!g->match_vals[i])
                continue;
            size_t h = (g->match_keys[i] * 2654435761u) & (cap - 1);
            while (vals[h])
                h = (h + 1) & (cap - 1);
            keys[h] = g->match_keys[i], vals[h] = g->match_vals[i];
        }
        free(g->match_keys), free(g->match_vals);
        g->match_keys = keys, g->match_vals = vals, g->match_cap = cap;
    }
    size_t h = (s * 2654435761u) & (g->match_cap - 1);
    while (g->match_vals[h]) {
        if (g->match_keys[h] == s)
            return g->match_vals[h] == 2;
        h = (h + 1) & (g->match_cap - 1);
    }
    bool m = strcasestr(trace_model_str(g->m, s), g->pattern) != NULL;
    g->match_keys[h] = s, g->match_vals[h] = m ? 2 : 1;
    g->match_len++;
    return m;
}

uint64_t tui_gantt_search(struct tui_gantt *g, struct tui_view *v, const char *pattern, int dir,
                          bool *wrapped)
{
    *wrapped = false;
    if (!g->pattern || strcmp(g->pattern, pattern) != 0) {
        free(g->pattern);
        g->pattern = sim_xstrdup(pattern);
        g->match_len = 0;
        if (g->match_vals)
            memset(g->match_vals, 0, g->match_cap);
    }
    size_t nt = trace_model_track_count(g->m);
    bool *track_match = sim_xcalloc(nt + 1, sizeof(bool));
    for (uint32_t t = 0; t < nt; t++)
        track_match[t] = str_matches(g, trace_model_track_get(g->m, t)->name);
    /* order: (start, index); from the selected op, else from the cursor (an op starting
     * at the cursor counts as after it) */
    bool has_sel = v->selected != TUI_NO_EVENT;
    uint64_t cs = has_sel ? trace_model_event(g->m, v->selected)->start : v->cursor;
    uint64_t ci = has_sel ? v->selected : 0;
    uint64_t n = trace_model_event_count(g->m), count = 0;
    uint64_t best = TUI_NO_EVENT, bs = 0, wrap = TUI_NO_EVENT, ws = 0;
    for (uint64_t i = 0; i < n; i++) {
        const struct trace_event *e = trace_model_event(g->m, i);
        if (!(track_match[e->track] || str_matches(g, e->op)) || !event_passes(g, v, e))
            continue;
        count++;
        uint64_t s = e->start;
        bool after = s > cs || (s == cs && (!has_sel || i > ci));
        bool before = s < cs || (has_sel && s == cs && i < ci);
        if (dir > 0) {
            if (after && (best == TUI_NO_EVENT || s < bs))
                best = i, bs = s;
            if (wrap == TUI_NO_EVENT || s < ws)
                wrap = i, ws = s;
        } else {
            if (before && (best == TUI_NO_EVENT || s >= bs))
                best = i, bs = s;
            if (wrap == TUI_NO_EVENT || s >= ws)
                wrap = i, ws = s;
        }
    }
    free(track_match);
    if (count == 0)
        return 0;
    if (best == TUI_NO_EVENT)
        best = wrap, *wrapped = true;
    select_event(g, v, best);
    update_follow(g);
    return count;
}

void tui_gantt_select(struct tui_gantt *g, struct tui_view *v, uint64_t i)
{
    if (i >= trace_model_event_count(g->m))
        return;
    if (trace_model_track_count(g->m) != g->tracks_built) {
        tree_build(g);
        rows_build(g, v);
    }
    select_event(g, v, i);
    update_follow(g);
}

bool tui_gantt_following(const struct tui_gantt *g)
{
    return g->follow;
}

void tui_gantt_span(const struct tui_gantt *g, uint64_t *t0, uint64_t *t1, double *cpc)
{
    uint64_t a, b;
    cell_range(g, 0, &a, &b);
    *t0 = a;
    *t1 = view_end(g);
    *cpc = g->cpc;
}

const char *tui_gantt_selected_label(const struct tui_gantt *g)
{
    if (g->sel >= g->nrows)
        return "";
    return g->nodes[g->rows[g->sel]].label;
}
