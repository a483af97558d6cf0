/*
 * The rows of the Gantt pane (see gantt_int.h): a tree of groups over the model's tracks
 * (by the dotted component id, or by engine kind for spec traces), sorted naturally, and
 * the visible rows: unfolded, passing the engine and kind filters.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/resources.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tui_gantt_node_new(struct tui_gantt *g, int parent, const char *label, const char *key)
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

void tui_gantt_tree_free(struct tui_gantt *g)
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

int tui_gantt_group_child(struct tui_gantt *g, int parent, const char *label, const char *key)
{
    for (size_t k = 0; k < g->nodes[parent].nkids; k++) {
        int c = g->nodes[parent].kids[k];
        if (!g->nodes[c].is_track && !g->nodes[c].is_res && strcmp(g->nodes[c].label, label) == 0)
            return c;
    }
    return tui_gantt_node_new(g, parent, label, key);
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
    if (n->res_group)
        return TRACE_ENGINE_COUNT; /* the links last */
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
    if ((a->engine_group || b->engine_group || a->res_group || b->res_group) && ra != rb)
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
    while (!node->is_track && !node->is_res && n != 0 && node->nkids == 1 &&
           !g->nodes[node->kids[0]].is_track && !g->nodes[node->kids[0]].is_res &&
           !node->res_group) {
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
        /* a group holding a single track (or resource) is that row */
        struct gnode *cn = &g->nodes[c];
        if (!cn->is_track && !cn->is_res && !cn->res_group && cn->nkids == 1 &&
            (g->nodes[cn->kids[0]].is_track || g->nodes[cn->kids[0]].is_res)) {
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
    if (node->is_track || node->is_res)
        return;
    size_t total = 0;
    for (size_t k = 0; k < node->nkids; k++) {
        struct gnode *cn = &g->nodes[node->kids[k]];
        total += cn->is_track ? 1 : cn->is_res ? 0 : cn->ntracks;
    }
    free(node->tracks);
    node->tracks = sim_xcalloc(total + 1, sizeof(*node->tracks));
    node->ntracks = 0;
    for (size_t k = 0; k < node->nkids; k++) {
        struct gnode *cn = &g->nodes[node->kids[k]];
        if (cn->is_track)
            node->tracks[node->ntracks++] = cn->track;
        for (size_t j = 0; !cn->is_track && !cn->is_res && j < cn->ntracks; j++)
            node->tracks[node->ntracks++] = cn->tracks[j];
    }
    if (node->nkids > 1) {
        sort_ctx = g;
        qsort(node->kids, node->nkids, sizeof(*node->kids), kid_cmp);
        sort_ctx = NULL;
    }
}

/* ---- rows of the resources (drawn by gantt_res.c) ------------------------------------- */

/* The group of a dotted name ("sip0.cube0.hbm": sip0 > cube0, made as needed), and in
 * *leaf its last part. */
static int dotted_parent(struct tui_gantt *g, const char *name, const char **leaf)
{
    int parent = 0;
    const char *p = name;
    for (const char *dot; (dot = strchr(p, '.'));) {
        char *seg = sim_xstrndup(p, (size_t)(dot - p));
        char *path = sim_xstrndup(name, (size_t)(dot - name));
        parent = tui_gantt_group_child(g, parent, seg, path);
        free(seg);
        free(path);
        p = dot + 1;
    }
    *leaf = p;
    return parent;
}

/* Add the row of an HBM: under its cube, like the components. */
static void add_dotted(struct tui_gantt *g, const char *name, size_t i)
{
    const char *leaf;
    int parent = dotted_parent(g, name, &leaf);
    char key[32];
    snprintf(key, sizeof(key), "$%zu", i);
    int n = tui_gantt_node_new(g, parent, leaf, key);
    g->nodes[n].is_res = true;
    g->nodes[n].res = i;
}

/* Add the row of a link "A<->B" under the links' group: grouped by the dotted parts both
 * ends share, labelled by the rest ("noc<->hbm" under links.sip0.cube0). */
static void add_link(struct tui_gantt *g, int links, const char *name, size_t i)
{
    const char *sep = strstr(name, "<->");
    const char *a = name, *b = sep + 3;
    size_t shared = 0; /* bytes of the common prefix of whole dotted parts */
    for (size_t k = 0; a + k < sep && b[k] && a[k] == b[k]; k++)
        if (a[k] == '.')
            shared = k + 1;
    int parent = links;
    const char *p = a;
    while (p < a + shared) {
        const char *dot = strchr(p, '.');
        char *seg = sim_xstrndup(p, (size_t)(dot - p));
        char *path = sim_xasprintf("@links.%.*s", (int)(dot - a), a);
        parent = tui_gantt_group_child(g, parent, seg, path);
        free(seg);
        free(path);
        p = dot + 1;
    }
    char *label =
        sim_xasprintf("%.*s<->%s", (int)(sep - a - (ptrdiff_t)shared), a + shared, b + shared);
    char key[32];
    snprintf(key, sizeof(key), "$%zu", i);
    int n = tui_gantt_node_new(g, parent, label, key);
    free(label);
    g->nodes[n].is_res = true;
    g->nodes[n].res = i;
}

void tui_gantt_res_tree(struct tui_gantt *g)
{
    size_t n = g->res ? trace_resources_count(g->res) : 0;
    int links = -1;
    for (size_t i = 0; i < n; i++) {
        const struct trace_resource *r = trace_resources_get(g->res, i);
        const char *name = trace_model_str(g->m, r->name);
        if (!strstr(name, "<->")) {
            add_dotted(g, name, i);
            continue;
        }
        if (links < 0) {
            links = tui_gantt_group_child(g, 0, "links", "@links");
            g->nodes[links].res_group = true;
            if (!g->links_seen)
                g->nodes[links].folded = true;
            g->links_seen = true;
        }
        add_link(g, links, name, i);
    }
    g->res_built = n;
}

bool tui_gantt_res_only(const struct tui_gantt *g, int node)
{
    const struct gnode *n = &g->nodes[node];
    return !n->is_track && !n->is_res && n->ntracks == 0 && n->nkids > 0;
}

/* Rebuild the tree from the model's tracks, keeping which groups were folded and which
 * row was selected. */
void tui_gantt_tree_build(struct tui_gantt *g)
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
    tui_gantt_tree_free(g);

    tui_gantt_node_new(g, -1, "", "");
    size_t nt = trace_model_track_count(g->m);
    for (uint32_t t = 0; t < nt; t++) {
        const struct trace_track *tr = trace_model_track_get(g->m, t);
        const char *name = trace_model_str(g->m, tr->name);
        char key[32];
        snprintf(key, sizeof(key), "#%u", (unsigned)t);
        int parent = 0;
        const char *leaf = name;
        if (strchr(name, '.')) {
            parent = dotted_parent(g, name, &leaf);
        } else {
            const char *kind = trace_engine_name(tr->engine);
            char path[32];
            snprintf(path, sizeof(path), "@%s", kind);
            parent = tui_gantt_group_child(g, 0, kind, path);
            g->nodes[parent].engine_group = true;
        }
        int n = tui_gantt_node_new(g, parent, leaf, key);
        g->nodes[n].is_track = true;
        g->nodes[n].track = t;
    }
    tui_gantt_res_tree(g);
    tree_finish(g, 0, 0);
    for (size_t i = 0; i < g->nnodes; i++)
        for (size_t k = 0; k < nfolded; k++)
            if (g->nodes[i].key && !g->nodes[i].is_track && !g->nodes[i].is_res &&
                strcmp(g->nodes[i].key, folded[k]) == 0)
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

bool tui_gantt_track_passes(struct tui_gantt *g, const struct tui_view *v, uint32_t t)
{
    if (v->filter_engine >= 0 && (int)trace_model_track_get(g->m, t)->engine != v->filter_engine)
        return false;
    return v->filter_kind < 0 || (trace_model_track_kinds(g->m, t) & (1u << v->filter_kind));
}

static bool node_passes(struct tui_gantt *g, const struct tui_view *v, int n)
{
    const struct gnode *node = &g->nodes[n];
    if (node->is_track)
        return tui_gantt_track_passes(g, v, node->track);
    if (node->is_res || tui_gantt_res_only(g, n)) /* a resource carries no ops to filter */
        return v->filter_engine < 0 && v->filter_kind < 0;
    for (size_t k = 0; k < node->ntracks; k++)
        if (tui_gantt_track_passes(g, v, node->tracks[k]))
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
        if (!g->nodes[c].is_track && !g->nodes[c].is_res && !g->nodes[c].folded)
            rows_add(g, v, c, cap);
    }
}

static int node_label_width(const struct tui_gantt *g, int n, bool unicode)
{
    const struct gnode *node = &g->nodes[n];
    return node->depth + 2 +
           tui_text_width(node->label, strlen(node->label), unicode, TUI_TEXT_UNTRUSTED);
}

void tui_gantt_set_sel(struct tui_gantt *g, size_t row)
{
    g->sel = row;
    g->sel_node = row < g->nrows ? g->rows[row] : -1;
}

/* Rebuild the visible rows, keeping the selected node selected when it is still shown,
 * else selecting its nearest shown ancestor. */
void tui_gantt_rows_build(struct tui_gantt *g, const struct tui_view *v)
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
        tui_gantt_set_sel(g, sel);
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
void tui_gantt_unfold_to(struct tui_gantt *g, int n)
{
    for (int a = g->nodes[n].parent; a > 0; a = g->nodes[a].parent)
        if (g->nodes[a].folded)
            g->nodes[a].folded = false, g->rows_stale = true;
}

int tui_gantt_track_node(const struct tui_gantt *g, uint32_t track)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].is_track && g->nodes[i].track == track)
            return (int)i;
    return -1;
}

void tui_gantt_scroll_to_sel(struct tui_gantt *g)
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
