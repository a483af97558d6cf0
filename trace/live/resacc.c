/*
 * Per-resource bandwidth samples filled live (see resacc.h): per resource, its windows with
 * traffic in window order, each with its bytes so far and the index of its sample in the
 * model. Reports come roughly in time order, so the window a report falls in is found from
 * the newest back, and the bytes are added here; the model's samples follow at each flush
 * (trace_live_sync), from the oldest window changed since the last one.
 */
#include "trace/live/resacc.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/metrics.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define NO_SAMPLE SIZE_MAX

struct ent {
    uint64_t k;      /* window index */
    uint64_t rd, wr; /* bytes so far */
    size_t idx;      /* its sample in the model, or NO_SAMPLE before the first flush */
};

struct series {
    struct ent *v; /* owned, by k */
    size_t n, cap;
    size_t dirty;    /* entries [dirty, n) changed since the last flush */
    uint64_t lo, hi; /* cycles [lo, hi) of the newest entry's window (lo == hi: none) */
};

struct trace_resacc {
    struct trace_model *m; /* borrowed */
    uint64_t w;            /* window, cycles */
    uint64_t limit;        /* w x TRACE_RESACC_MAX_WINDOWS (saturated): past it, widen */
    size_t nres;
    uint32_t *names;  /* owned: interned resource names */
    struct series *r; /* owned: per resource */
    size_t *spare;    /* owned: samples emptied by a merge, to be used again */
    size_t nspare, capspare;
    bool dirty; /* some series changed since the last flush */
};

static void set_limit(struct trace_resacc *a)
{
    a->limit =
        a->w > UINT64_MAX / TRACE_RESACC_MAX_WINDOWS ? UINT64_MAX : a->w * TRACE_RESACC_MAX_WINDOWS;
}

/* Remember the window of s's newest entry, for trace_resacc_add's fast path. */
static void set_newest(struct series *s, uint64_t w)
{
    s->lo = s->hi = 0;
    if (s->n) {
        s->lo = s->v[s->n - 1].k * w;
        s->hi = s->lo + w;
    }
}

struct trace_resacc *trace_resacc_new(struct trace_model *m, uint64_t window, size_t nres,
                                      const uint32_t *names)
{
    struct trace_resacc *a = sim_xcalloc(1, sizeof(*a));
    a->m = m;
    a->w = window ? window : TRACE_BW_WINDOW_DEFAULT;
    set_limit(a);
    a->nres = nres;
    a->names = sim_xreallocarray(NULL, nres ? nres : 1, sizeof(*a->names));
    if (nres)
        memcpy(a->names, names, nres * sizeof(*names));
    a->r = sim_xcalloc(nres ? nres : 1, sizeof(*a->r));
    return a;
}

void trace_resacc_free(struct trace_resacc *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nres; i++)
        free(a->r[i].v);
    free(a->r);
    free(a->names);
    free(a->spare);
    free(a);
}

uint64_t trace_resacc_window(const struct trace_resacc *a)
{
    return a->w;
}

size_t trace_resacc_count(const struct trace_resacc *a)
{
    return a->nres;
}

uint32_t trace_resacc_name(const struct trace_resacc *a, uint32_t res)
{
    assert(res < a->nres);
    return a->names[res];
}

/* Position in s of window k: the entry holding it, or where it goes (*found false). */
static size_t find(const struct series *s, uint64_t k, bool *found)
{
    size_t i = s->n;
    while (i > 0 && s->v[i - 1].k > k)
        i--;
    *found = i > 0 && s->v[i - 1].k == k;
    return *found ? i - 1 : i;
}

static void credit(struct trace_resacc *a, uint32_t res, uint64_t k, bool write, uint64_t b)
{
    if (!b)
        return;
    struct series *s = &a->r[res];
    bool found;
    size_t i = find(s, k, &found);
    if (!found) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->v = sim_xreallocarray(s->v, s->cap, sizeof(*s->v));
        }
        if (i < s->n) /* a report for an earlier window than the newest: rare */
            memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
        s->v[i] = (struct ent){k, 0, 0, NO_SAMPLE};
        s->n++;
    }
    *(write ? &s->v[i].wr : &s->v[i].rd) += b;
    if (i < s->dirty)
        s->dirty = i;
    a->dirty = true;
    if (i + 1 == s->n)
        set_newest(s, a->w);
}

void trace_resacc_flush(struct trace_resacc *a)
{
    if (!a->dirty)
        return;
    for (size_t r = 0; r < a->nres; r++) {
        struct series *s = &a->r[r];
        for (size_t i = s->dirty; i < s->n; i++) {
            struct ent *e = &s->v[i];
            struct trace_bw_sample x = {e->k * a->w, a->w, e->rd, e->wr, a->names[r]};
            if (e->idx != NO_SAMPLE)
                trace_model_bw_sample_set(a->m, e->idx, &x);
            else if (a->nspare)
                trace_model_bw_sample_set(a->m, e->idx = a->spare[--a->nspare], &x);
            else
                e->idx = trace_model_add_bw_sample(a->m, &x);
        }
        s->dirty = s->n;
    }
    a->dirty = false;
}

static int by_index_desc(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a < b) - (a > b);
}

/* Double the window: each pair of windows becomes one entry; the samples of the entries
 * merged away are emptied and kept for new windows. */
static void widen(struct trace_resacc *a)
{
    trace_resacc_flush(a);
    a->w *= 2;
    set_limit(a);
    for (size_t r = 0; r < a->nres; r++) {
        struct series *s = &a->r[r];
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++) {
            struct ent e = s->v[i];
            e.k /= 2;
            if (n && s->v[n - 1].k == e.k) {
                s->v[n - 1].rd += e.rd;
                s->v[n - 1].wr += e.wr;
                struct trace_bw_sample empty = {0, a->w, 0, 0, a->names[r]};
                trace_model_bw_sample_set(a->m, e.idx, &empty);
                if (a->nspare == a->capspare) {
                    a->capspare = a->capspare ? 2 * a->capspare : 64;
                    a->spare = sim_xreallocarray(a->spare, a->capspare, sizeof(*a->spare));
                }
                a->spare[a->nspare++] = e.idx;
                continue;
            }
            s->v[n++] = e;
        }
        s->n = n;
        s->dirty = 0;
        set_newest(s, a->w);
    }
    /* used again from the lowest, so new windows fill the emptied samples in order (and a
     * checkpoint's copy of the model is written page by page, not all over) */
    if (a->nspare > 1) /* none: no array to sort */
        qsort(a->spare, a->nspare, sizeof(*a->spare), by_index_desc);
    a->dirty = true;
    trace_resacc_flush(a);
}

void trace_resacc_add(struct trace_resacc *a, uint32_t res, bool write, uint64_t bytes, uint64_t c0,
                      uint64_t c1)
{
    assert(res < a->nres);
    if (!bytes)
        return;
    if (c1 < c0)
        c1 = c0;
    uint64_t last = c1 > c0 ? c1 - 1 : c0; /* the last cycle covered */
    struct series *s = &a->r[res];
    if (c0 >= s->lo && last < s->hi) { /* within the newest window again: no division */
        struct ent *e = &s->v[s->n - 1];
        *(write ? &e->wr : &e->rd) += bytes;
        if (s->dirty == s->n)
            s->dirty = s->n - 1;
        a->dirty = true;
        return;
    }
    while (last >= a->limit)
        widen(a);
    uint64_t w = a->w, k0 = c0 / w, k1 = last / w;
    if (k0 == k1) { /* the usual case: one window */
        credit(a, res, k0, write, bytes);
        return;
    }
    /* window k gets floor(B*C_k/L) - floor(B*C_(k-1)/L), C_k the overlap up to the end of
     * window k: the shares add up to exactly B */
    uint64_t len = c1 - c0, given = 0;
    bool narrow = bytes <= UINT32_MAX && len <= UINT32_MAX;
    for (uint64_t k = k0; k <= k1; k++) {
        uint64_t wend = k * w + w;
        uint64_t c = (wend < c1 ? wend : c1) - c0;
        uint64_t upto = narrow ? bytes * c / len : (uint64_t)(((unsigned __int128)bytes * c) / len);
        credit(a, res, k, write, upto - given);
        given = upto;
    }
}

bool trace_resacc_fits(const struct trace_resacc *a, uint64_t c0, uint64_t c1)
{
    uint64_t last = c1 > c0 ? c1 - 1 : c0;
    return last < a->limit;
}

bool trace_resacc_get(const struct trace_resacc *a, uint32_t res, uint64_t k, uint64_t *read,
                      uint64_t *write)
{
    *read = *write = 0;
    if (res >= a->nres)
        return false;
    bool found;
    size_t i = find(&a->r[res], k, &found);
    if (!found)
        return false;
    *read = a->r[res].v[i].rd;
    *write = a->r[res].v[i].wr;
    return true;
}
