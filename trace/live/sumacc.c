/* Summary metrics and bandwidth samples accumulated as a run goes (see sumacc.h). */
#include "trace/live/sumacc.h"

#include "sim/util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Ops in flight on one engine (a kind and an engine_id, over all its tracks). */
struct busy {
    uint64_t open;   /* when the count last left 0 */
    uint64_t active; /* closed busy time */
    uint32_t count;  /* ops in flight */
};

struct group {
    enum trace_engine eng;
    int32_t id;
    struct busy b;
};

struct trace_sumacc {
    uint32_t *group_of; /* owned, per track: its group + 1, 0 until its first op */
    size_t ntracks;
    struct group *g; /* owned */
    size_t ng;

    bool has_dma;
    struct busy dma;            /* every DMA track together */
    struct busy te, ve;         /* every TE track together, every VE track */
    uint64_t dma_cur, dma_peak; /* the cycle being reported, the peak before it */
    bool have_time;
    uint64_t tmax;

    bool has_kv;
    uint64_t dram_read, dram_write, kv_read, kv_write;

    /* bandwidth: windows [first, first + nwin) of w cycles, dense */
    uint64_t window, w, first;
    uint64_t *rd, *wr; /* owned */
    size_t nwin, cap;
    bool have_xfer;
    uint64_t lo, hi, sum_len;
    uint64_t range_ok, len_ok; /* hi - lo below this and sum_len up to this need no wider w */
};

struct trace_sumacc *trace_sumacc_new(uint64_t window)
{
    struct trace_sumacc *a = sim_xcalloc(1, sizeof(*a));
    a->window = a->w = window ? window : TRACE_BW_WINDOW_DEFAULT;
    return a;
}

void trace_sumacc_free(struct trace_sumacc *a)
{
    if (!a)
        return;
    free(a->group_of);
    free(a->g);
    free(a->rd);
    free(a->wr);
    free(a);
}

static void see(struct trace_sumacc *a, uint64_t t)
{
    if (!a->have_time || t > a->tmax)
        a->tmax = t;
    a->have_time = true;
}

static void busy_up(struct busy *b, uint64_t t)
{
    if (b->count++ == 0)
        b->open = t;
}

static void busy_down(struct busy *b, uint64_t t)
{
    if (b->count && --b->count == 0)
        b->active += t > b->open ? t - b->open : 0;
}

/* The DMA count as of the end of cycle t's reports: read it before moving on to t. */
static void dma_at(struct trace_sumacc *a, uint64_t t)
{
    if (t > a->dma_cur) {
        if (a->dma.count > a->dma_peak)
            a->dma_peak = a->dma.count;
        a->dma_cur = t;
    }
}

void trace_sumacc_start(struct trace_sumacc *a, uint32_t track, enum trace_engine eng, int32_t id,
                        uint64_t t)
{
    if (track >= a->ntracks) {
        size_t n = a->ntracks ? a->ntracks : 16;
        while (n <= track)
            n *= 2;
        a->group_of = sim_xreallocarray(a->group_of, n, sizeof(*a->group_of));
        memset(a->group_of + a->ntracks, 0, (n - a->ntracks) * sizeof(*a->group_of));
        a->ntracks = n;
    }
    if (!a->group_of[track]) {
        size_t k = 0;
        while (k < a->ng && (a->g[k].eng != eng || a->g[k].id != id))
            k++;
        if (k == a->ng) {
            a->g = sim_xreallocarray(a->g, a->ng + 1, sizeof(*a->g));
            a->g[a->ng++] = (struct group){.eng = eng, .id = id};
        }
        a->group_of[track] = (uint32_t)k + 1;
    }
    see(a, t);
    busy_up(&a->g[a->group_of[track] - 1].b, t);
    if (eng == TRACE_ENGINE_TE || eng == TRACE_ENGINE_VE)
        busy_up(eng == TRACE_ENGINE_TE ? &a->te : &a->ve, t);
    if (eng == TRACE_ENGINE_DMA) {
        a->has_dma = true;
        dma_at(a, t);
        busy_up(&a->dma, t);
    }
}

/* ---- bandwidth --------------------------------------------------------------------------- */

/* Double the window: window 2k and 2k + 1 become window k. */
static void merge_pairs(struct trace_sumacc *a)
{
    a->w *= 2;
    if (!a->nwin)
        return;
    uint64_t nfirst = a->first / 2;
    for (size_t j = 0; j < a->nwin; j++) {
        size_t to = (size_t)((a->first + j) / 2 - nfirst);
        uint64_t r = a->rd[j], w = a->wr[j];
        a->rd[j] = a->wr[j] = 0;
        a->rd[to] += r;
        a->wr[to] += w;
    }
    a->nwin = (size_t)((a->first + a->nwin - 1) / 2 - nfirst + 1);
    a->first = nfirst;
}

/* Make windows [k0, k1] present (zeroed where new). */
static void cover(struct trace_sumacc *a, uint64_t k0, uint64_t k1)
{
    if (a->nwin && k0 >= a->first && k1 - a->first < a->nwin)
        return; /* the common case: a transfer within the run so far */
    if (!a->nwin) {
        a->first = k0;
    } else {
        if (k0 > a->first)
            k0 = a->first;
        if (k1 < a->first + a->nwin - 1)
            k1 = a->first + a->nwin - 1;
    }
    size_t need = (size_t)(k1 - k0 + 1), below = (size_t)(a->first - k0);
    if (need > a->cap) {
        size_t c = a->cap ? a->cap : 1024;
        while (c < need)
            c *= 2;
        a->rd = sim_xreallocarray(a->rd, c, sizeof(*a->rd));
        a->wr = sim_xreallocarray(a->wr, c, sizeof(*a->wr));
        a->cap = c;
    }
    if (below && a->nwin) { /* an op that started before the earliest so far */
        memmove(a->rd + below, a->rd, a->nwin * sizeof(*a->rd));
        memmove(a->wr + below, a->wr, a->nwin * sizeof(*a->wr));
    }
    if (a->nwin) {
        memset(a->rd, 0, below * sizeof(*a->rd));
        memset(a->wr, 0, below * sizeof(*a->wr));
    }
    size_t old_end = a->nwin ? below + a->nwin : 0;
    memset(a->rd + old_end, 0, (need - old_end) * sizeof(*a->rd));
    memset(a->wr + old_end, 0, (need - old_end) * sizeof(*a->wr));
    a->first = k0;
    a->nwin = need;
}

/* bytes over [s, e), spread as trace_metrics_bandwidth spreads them. */
static void sample(struct trace_sumacc *a, uint64_t s, uint64_t e, uint64_t b, bool write)
{
    if (!a->have_xfer) {
        a->lo = s, a->hi = e, a->have_xfer = true;
    } else {
        a->lo = s < a->lo ? s : a->lo;
        a->hi = e > a->hi ? e : a->hi;
    }
    uint64_t len = e - s;
    a->sum_len = a->sum_len + len < a->sum_len ? UINT64_MAX : a->sum_len + len;
    if (a->hi - a->lo >= a->range_ok || a->sum_len > a->len_ok) {
        uint64_t want = trace_metrics_widen(a->window, a->lo, a->hi, a->sum_len);
        while (a->w < want)
            merge_pairs(a);
        /* what this window still allows (trace_metrics_widen's bounds): no call until then */
        a->range_ok = a->w >> (63 - 21) ? UINT64_MAX : a->w << 21;
        a->len_ok = a->w >> (63 - 25) ? UINT64_MAX : a->w << 25;
    }
    cover(a, s / a->w, (e > s ? e - 1 : s) / a->w);
    trace_metrics_spread(write ? a->wr : a->rd, a->first, a->w, s, e, b);
}

void trace_sumacc_end(struct trace_sumacc *a, uint32_t track, uint64_t s, uint64_t e,
                      const struct trace_transfer *x, int nx)
{
    if (e < s)
        e = s;
    see(a, e);
    if (track < a->ntracks && a->group_of[track]) {
        struct group *g = &a->g[a->group_of[track] - 1];
        busy_down(&g->b, e);
        if (g->eng == TRACE_ENGINE_TE || g->eng == TRACE_ENGINE_VE)
            busy_down(g->eng == TRACE_ENGINE_TE ? &a->te : &a->ve, e);
        if (g->eng == TRACE_ENGINE_DMA) {
            dma_at(a, e);
            busy_down(&a->dma, e);
        }
    }
    for (int j = 0; j < nx; j++) {
        bool w = x[j].flags & TRACE_XFER_WRITE;
        *(w ? &a->dram_write : &a->dram_read) += x[j].bytes;
        if (x[j].flags & TRACE_XFER_KV) {
            a->has_kv = true;
            *(w ? &a->kv_write : &a->kv_read) += x[j].bytes;
        }
        sample(a, s, e, x[j].bytes, w);
    }
}

void trace_sumacc_time(struct trace_sumacc *a, uint64_t t)
{
    see(a, t);
}

/* ---- results ----------------------------------------------------------------------------- */

static int cmp_use(const void *x, const void *y)
{
    const struct trace_engine_use *p = x, *q = y;
    return p->id < q->id ? -1 : p->id > q->id;
}

/* Busy time up to now, a span still open included. */
static uint64_t busy_upto(const struct busy *b, uint64_t now)
{
    return b->active + (b->count && now > b->open ? now - b->open : 0);
}

static struct trace_engine_use *uses(const struct trace_sumacc *a, enum trace_engine eng,
                                     uint64_t total, uint64_t now, size_t *count)
{
    size_t n = 0;
    struct trace_engine_use *u = sim_xreallocarray(NULL, a->ng ? a->ng : 1, sizeof(*u));
    for (size_t k = 0; k < a->ng; k++) {
        if (a->g[k].eng != eng)
            continue;
        uint64_t active = busy_upto(&a->g[k].b, now);
        u[n++] = (struct trace_engine_use){
            .id = a->g[k].id,
            .active = active,
            .util = total ? (double)active / (double)total : 0,
        };
    }
    if (!n) {
        free(u);
        u = NULL;
    } else {
        qsort(u, n, sizeof(*u), cmp_use);
    }
    *count = n;
    return u;
}

void trace_sumacc_metrics(const struct trace_sumacc *a, const struct trace_model *m,
                          struct trace_metrics *x)
{
    memset(x, 0, sizeof(*x));
    uint64_t now = trace_model_now(m), t = trace_model_t_max(m);
    x->cycles_total = a->have_time && a->tmax > t ? a->tmax : t;
    x->dram_read = a->dram_read;
    x->dram_write = a->dram_write;
    x->dram_source = a->have_xfer ? TRACE_DRAM_TRANSFERS : TRACE_DRAM_NONE;
    x->has_kv = a->has_kv;
    x->kv_read = a->kv_read;
    x->kv_write = a->kv_write;
    if (a->has_dma) {
        x->has_dma = true;
        x->dma_active = busy_upto(&a->dma, now);
        x->dma_max_concurrent = a->dma.count > a->dma_peak ? a->dma.count : a->dma_peak;
        x->dma_util = x->cycles_total ? (double)x->dma_active / (double)x->cycles_total : 0;
    }
    x->te = uses(a, TRACE_ENGINE_TE, x->cycles_total, now, &x->nte);
    x->ve = uses(a, TRACE_ENGINE_VE, x->cycles_total, now, &x->nve);
    x->te_active = x->nte ? busy_upto(&a->te, now) : 0;
    x->ve_active = x->nve ? busy_upto(&a->ve, now) : 0;
    x->te_util = x->cycles_total ? (double)x->te_active / (double)x->cycles_total : 0;
    x->ve_util = x->cycles_total ? (double)x->ve_active / (double)x->cycles_total : 0;
    trace_metrics_tokens(m, x);
}

size_t trace_sumacc_bandwidth(const struct trace_sumacc *a, struct trace_bw_sample **out)
{
    return trace_metrics_samples(a->rd, a->wr, a->nwin, a->first, a->w, out);
}
