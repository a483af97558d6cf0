/*
 * Layer instances (see instances.h): one pass over the ops, each placed in its token by a
 * binary search over the tokens sorted by start, then per layer the instances its ops
 * touched.
 */
#include "trace/analysis/instances.h"

#include "sim/util/xalloc.h"

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

/* The token (index into t) whose span holds cycle c, or SIZE_MAX. */
static size_t token_at(const struct tspan *t, size_t n, uint64_t c)
{
    size_t lo = 0, hi = n; /* the first token starting after c */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid].start <= c)
            lo = mid + 1;
        else
            hi = mid;
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
    for (uint64_t e = 0; e < ne; e++) {
        size_t r = trace_regions_of_event(rs, e);
        if (r == SIZE_MAX)
            continue;
        const struct trace_event *ev = trace_model_event(m, e);
        size_t k = token_at(t, nt, ev->start);
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
