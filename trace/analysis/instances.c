/*
 * Layer instances (see instances.h): one pass over the ops, each placed in its token by a
 * binary search over the tokens sorted by start, then per layer the instances its ops
 * touched. Kept up to date for a growing model: the cells of the ops placed for good stay,
 * the others are placed on top and put back.
 */
#include "trace/analysis/instances.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* A token's span and its index in the model. */
struct tspan {
    uint64_t start, end;
    uint32_t index;
};

static int cmp_tspan(const void *a, const void *b)
{
    const struct tspan *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The token (index into t) whose span holds cycle c, or SIZE_MAX. *hint: where the search
 * for the cycle before ended (the first token starting after it), kept for the next: ops
 * come nearly in time order, so that token, or the one after it, most often holds the next
 * cycle too, and the search over every token is not needed. */
static inline size_t token_at(const struct tspan *t, size_t n, uint64_t c, size_t *hint)
{
    size_t lo = *hint; /* the first token starting after c */
    if (!(lo <= n && (lo == 0 || t[lo - 1].start <= c) && (lo == n || t[lo].start > c))) {
        if (lo < n && t[lo].start <= c && (lo + 1 == n || t[lo + 1].start > c)) {
            lo++;
        } else {
            size_t hi = n;
            for (lo = 0; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;
                if (t[mid].start <= c)
                    lo = mid + 1;
                else
                    hi = mid;
            }
        }
        *hint = lo;
    }
    return lo && c < t[lo - 1].end ? lo - 1 : lo && t[lo - 1].start == c ? lo - 1 : SIZE_MAX;
}

void trace_instances_compute(const struct trace_regions *rs, struct trace_instances *out)
{
    memset(out, 0, sizeof(*out));
    const struct trace_model *m = trace_regions_model(rs);
    size_t nl = trace_regions_count(rs), nt = trace_model_token_count(m);
    out->nlayers = nl;
    out->layers = sim_xcalloc(nl ? nl : 1, sizeof(*out->layers));
    /* a grid of layers x tokens past 4 M cells (96 MiB) is not built: whole spans then */
    out->per_token = nt > 0 && nl <= ((size_t)1 << 22) / nt;
    if (!out->per_token) { /* one instance each: the whole span */
        for (size_t i = 0; i < nl; i++) {
            const struct trace_region *r = trace_regions_get(rs, i);
            struct trace_layer_insts *L = &out->layers[i];
            L->v = sim_xcalloc(1, sizeof(*L->v));
            L->v[0] = (struct trace_layer_inst){r->start, r->end, 0};
            L->n = 1;
            L->sum = r->end - r->start;
        }
        return;
    }
    struct tspan *t = sim_xreallocarray(NULL, nt, sizeof(*t));
    for (size_t k = 0; k < nt; k++) {
        const struct trace_token *tok = trace_model_token(m, k);
        t[k] = (struct tspan){tok->start, tok->end, (uint32_t)k};
    }
    qsort(t, nt, sizeof(*t), cmp_tspan);
    /* per (layer, token): the first start and the last end of its ops there; dense, since
     * a layer split has few layers; a pair no op touched keeps start > end */
    size_t cells = nl * nt;
    struct trace_layer_inst *grid = sim_xreallocarray(NULL, cells ? cells : 1, sizeof(*grid));
    for (size_t i = 0; i < cells; i++)
        grid[i] = (struct trace_layer_inst){UINT64_MAX, 0, (uint32_t)(i % nt)};
    uint64_t ne = trace_model_event_count(m);
    const struct trace_event *evs = ne ? trace_model_event(m, 0) : NULL;
    size_t hint = 0;
    for (uint64_t e = 0; e < ne; e++) {
        size_t r = trace_regions_of_event(rs, e);
        if (r == SIZE_MAX)
            continue;
        const struct trace_event *ev = &evs[e];
        size_t k = token_at(t, nt, ev->start, &hint);
        if (k == SIZE_MAX)
            continue;
        struct trace_layer_inst *g = &grid[r * nt + k];
        uint64_t end = ev->end > ev->start ? ev->end : ev->start;
        if (ev->start < g->start)
            g->start = ev->start;
        if (end > g->end)
            g->end = end;
    }
    for (size_t i = 0; i < nl; i++) {
        struct trace_layer_insts *L = &out->layers[i];
        size_t n = 0;
        for (size_t k = 0; k < nt; k++)
            n += grid[i * nt + k].start != UINT64_MAX;
        L->v = sim_xcalloc(n ? n : 1, sizeof(*L->v));
        for (size_t k = 0; k < nt; k++) {
            const struct trace_layer_inst *g = &grid[i * nt + k];
            if (g->start == UINT64_MAX)
                continue;
            struct trace_layer_inst x = {g->start, g->end, t[k].index};
            L->v[L->n] = x;
            L->sum += x.end - x.start;
            if (x.end - x.start > L->v[L->slowest].end - L->v[L->slowest].start)
                L->slowest = L->n;
            L->n++;
        }
    }
    free(grid);
    free(t);
}

void trace_instances_fini(struct trace_instances *in)
{
    for (size_t i = 0; in->layers && i < in->nlayers; i++)
        free(in->layers[i].v);
    free(in->layers);
    memset(in, 0, sizeof(*in));
}

/* ---- kept up to date ------------------------------------------------------------------------ */

/* The cells of one layer_id: its span in each token (by the token's index in the model). */
struct lcells {
    struct trace_layer_inst *v; /* owned; start UINT64_MAX: no op there */
    size_t n;
};

struct trace_instances_inc {
    const struct trace_model *m;
    uint64_t scanned; /* events [0, scanned) were seen: all placed for good but pend */
    uint64_t *pend;   /* owned: those seen in flight or past the horizon, in order */
    size_t npend, cappend;
    uint64_t horizon;     /* the latest end of the tokens known: an op starting before it is
                             in its token for good */
    size_t ntok;          /* tokens known */
    struct tspan *t;      /* owned: those tokens by start */
    struct lcells *layer; /* owned: per interned layer_id */
    size_t nlayer;
    struct trace_layer_inst **saved_at; /* owned: cells the ops in pend changed, ... */
    struct trace_layer_inst *saved;     /* ... what they held */
    size_t nsaved, capsaved;
    size_t hint; /* token_at's, for the next op */
};

struct trace_instances_inc *trace_instances_inc_new(void)
{
    return sim_xcalloc(1, sizeof(struct trace_instances_inc));
}

static void inc_reset(struct trace_instances_inc *st)
{
    for (size_t i = 0; i < st->nlayer; i++)
        free(st->layer[i].v);
    free(st->layer);
    free(st->t);
    free(st->saved_at);
    free(st->saved);
    free(st->pend);
    memset(st, 0, sizeof(*st));
}

void trace_instances_inc_free(struct trace_instances_inc *st)
{
    if (!st)
        return;
    inc_reset(st);
    free(st);
}

/* Room in c for n tokens. */
static void grow_cells(struct lcells *c, size_t n)
{
    c->v = sim_xreallocarray(c->v, n, sizeof(*c->v));
    for (size_t i = c->n; i < n; i++)
        c->v[i] = (struct trace_layer_inst){UINT64_MAX, 0, (uint32_t)i};
    c->n = n;
}

/* The cell of (layer l, token k), made when new (a layer's cells have room for every token
 * known, so that a cell does not move while the ops in pend are placed). save: keep
 * what it held first. */
static struct trace_layer_inst *cell(struct trace_instances_inc *st, uint32_t l, uint32_t k,
                                     bool save)
{
    if (l >= st->nlayer) {
        size_t n = (size_t)l + 1;
        st->layer = sim_xreallocarray(st->layer, n, sizeof(*st->layer));
        memset(st->layer + st->nlayer, 0, (n - st->nlayer) * sizeof(*st->layer));
        st->nlayer = n;
    }
    struct lcells *c = &st->layer[l];
    if (k >= c->n)
        grow_cells(c, st->ntok > k ? st->ntok : (size_t)k + 1);
    struct trace_layer_inst *g = &c->v[k];
    if (save) {
        if (st->nsaved == st->capsaved) {
            st->capsaved = st->capsaved ? 2 * st->capsaved : 64;
            st->saved_at = sim_xreallocarray(st->saved_at, st->capsaved, sizeof(*st->saved_at));
            st->saved = sim_xreallocarray(st->saved, st->capsaved, sizeof(*st->saved));
        }
        st->saved_at[st->nsaved] = g;
        st->saved[st->nsaved++] = *g;
    }
    return g;
}

/* Place event ev in its cell (saving the cell first when save). */
static void place(struct trace_instances_inc *st, const struct trace_event *ev, bool save)
{
    if (ev->layer == TRACE_NO_STR)
        return;
    size_t k = token_at(st->t, st->ntok, ev->start, &st->hint);
    if (k == SIZE_MAX)
        return;
    struct trace_layer_inst *g = cell(st, ev->layer, st->t[k].index, save);
    uint64_t end = ev->end > ev->start ? ev->end : ev->start;
    if (ev->start < g->start)
        g->start = ev->start;
    if (end > g->end)
        g->end = end;
}

/* The tokens added since; false when one could move an op placed for good to another token. */
static bool learn_tokens(struct trace_instances_inc *st, const struct trace_model *m)
{
    size_t nt = trace_model_token_count(m);
    if (nt < st->ntok)
        return false;
    if (nt == st->ntok)
        return true;
    st->t = sim_xreallocarray(st->t, nt, sizeof(*st->t));
    uint64_t horizon = st->horizon;
    for (size_t k = st->ntok; k < nt; k++) {
        const struct trace_token *tok = trace_model_token(m, k);
        if (st->scanned && tok->start < st->horizon)
            return false;
        st->t[k] = (struct tspan){tok->start, tok->end, (uint32_t)k};
        horizon = tok->end > horizon ? tok->end : horizon;
    }
    st->ntok = nt;
    st->horizon = horizon;
    qsort(st->t, nt, sizeof(*st->t), cmp_tspan);
    return true;
}

void trace_instances_inc_update(struct trace_instances_inc *st, const struct trace_regions *rs,
                                struct trace_instances *out)
{
    const struct trace_model *m = trace_regions_model(rs);
    size_t nl = trace_regions_count(rs), nt = trace_model_token_count(m);
    if (st->m != m || trace_model_event_count(m) < st->scanned)
        inc_reset(st);
    st->m = m;
    if (!learn_tokens(st, m)) {
        inc_reset(st);
        st->m = m;
        learn_tokens(st, m);
    }
    bool per_token = nt > 0 && nl <= ((size_t)1 << 22) / nt;
    if (!per_token) { /* whole spans, as trace_instances_compute gives them */
        trace_instances_compute(rs, out);
        return;
    }
    uint64_t n = trace_model_event_count(m);
    const struct trace_event *evs = n ? trace_model_event(m, 0) : NULL;
    assert(evs || !st->npend); /* pend holds events below scanned <= n */
    /* an op is placed for good once it has ended and starts before the horizon */
    size_t kept = 0;
    for (size_t k = 0; k < st->npend; k++) {
        const struct trace_event *ev = &evs[st->pend[k]];
        if ((ev->flags & TRACE_EV_INFLIGHT) || ev->start >= st->horizon)
            st->pend[kept++] = st->pend[k];
        else
            place(st, ev, false);
    }
    st->npend = kept;
    for (; st->scanned < n; st->scanned++) {
        const struct trace_event *ev = &evs[st->scanned];
        if (!(ev->flags & TRACE_EV_INFLIGHT) && ev->start < st->horizon) {
            place(st, ev, false);
            continue;
        }
        if (st->npend == st->cappend) {
            st->cappend = st->cappend ? 2 * st->cappend : 256;
            st->pend = sim_xreallocarray(st->pend, st->cappend, sizeof(*st->pend));
        }
        st->pend[st->npend++] = st->scanned;
    }
    for (size_t l = 0; l < st->nlayer; l++)
        if (st->layer[l].v && st->layer[l].n < st->ntok)
            grow_cells(&st->layer[l], st->ntok);
    for (size_t k = 0; k < st->npend; k++)
        place(st, &evs[st->pend[k]], true);
    memset(out, 0, sizeof(*out));
    out->nlayers = nl;
    out->layers = sim_xcalloc(nl ? nl : 1, sizeof(*out->layers));
    out->per_token = true;
    for (size_t i = 0; i < nl; i++) {
        struct trace_layer_insts *L = &out->layers[i];
        uint32_t l = trace_regions_get(rs, i)->layer;
        const struct lcells *c = l < st->nlayer && st->layer[l].v ? &st->layer[l] : NULL;
        size_t cnt = 0;
        for (size_t k = 0; c && k < nt; k++)
            cnt += st->t[k].index < c->n && c->v[st->t[k].index].start != UINT64_MAX;
        L->v = sim_xcalloc(cnt ? cnt : 1, sizeof(*L->v));
        for (size_t k = 0; c && k < nt; k++) {
            uint32_t ti = st->t[k].index;
            if (ti >= c->n || c->v[ti].start == UINT64_MAX)
                continue;
            struct trace_layer_inst x = {c->v[ti].start, c->v[ti].end, ti};
            L->v[L->n] = x;
            L->sum += x.end - x.start;
            if (x.end - x.start > L->v[L->slowest].end - L->v[L->slowest].start)
                L->slowest = L->n;
            L->n++;
        }
    }
    while (st->nsaved) { /* put back, last change first */
        st->nsaved--;
        *st->saved_at[st->nsaved] = st->saved[st->nsaved];
    }
}
