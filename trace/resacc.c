/*
 * Per-resource bandwidth samples filled live (see resacc.h): per resource, its windows with
 * traffic in window order, each with the index of its sample in the model. Reports come
 * roughly in time order, so the window a report falls in is found from the newest back.
 */
#include "trace/resacc.h"

#include "sim/util/xalloc.h"
#include "trace/metrics.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct ent {
    uint64_t k; /* window index */
    size_t idx; /* its sample in the model */
};

struct series {
    struct ent *v; /* owned, by k */
    size_t n, cap;
};

struct trace_resacc {
    struct trace_model *m; /* borrowed */
    uint64_t w;            /* window, cycles */
    size_t nres;
    uint32_t *names;  /* owned: interned resource names */
    struct series *r; /* owned: per resource */
    size_t *spare;    /* owned: samples emptied by a merge, to be used again */
    size_t nspare, capspare;
};

struct trace_resacc *trace_resacc_new(struct trace_model *m, uint64_t window, size_t nres,
                                      const uint32_t *names)
{
    struct trace_resacc *a = sim_xcalloc(1, sizeof(*a));
    a->m = m;
    a->w = window ? window : TRACE_BW_WINDOW_DEFAULT;
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

/* A model sample for window k of resource res holding the given bytes. */
static size_t new_sample(struct trace_resacc *a, uint32_t res, uint64_t k, uint64_t rd, uint64_t wr)
{
    struct trace_bw_sample s = {k * a->w, a->w, rd, wr, a->names[res]};
    if (a->nspare) {
        size_t i = a->spare[--a->nspare];
        trace_model_bw_sample_set(a->m, i, &s);
        return i;
    }
    return trace_model_add_bw_sample(a->m, &s);
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
    if (found) {
        trace_model_bw_sample_add(a->m, s->v[i].idx, write ? 0 : b, write ? b : 0);
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = sim_xreallocarray(s->v, s->cap, sizeof(*s->v));
    }
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
    s->v[i] = (struct ent){k, new_sample(a, res, k, write ? 0 : b, write ? b : 0)};
    s->n++;
}

/* Double the window: each pair of windows becomes one sample, the other emptied. */
static void widen(struct trace_resacc *a)
{
    a->w *= 2;
    for (size_t r = 0; r < a->nres; r++) {
        struct series *s = &a->r[r];
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++) {
            uint64_t k = s->v[i].k / 2;
            const struct trace_bw_sample *old = trace_model_bw_sample(a->m, s->v[i].idx);
            if (n && s->v[n - 1].k == k) {
                trace_model_bw_sample_add(a->m, s->v[n - 1].idx, old->read_bytes, old->write_bytes);
                struct trace_bw_sample empty = {0, a->w, 0, 0, a->names[r]};
                trace_model_bw_sample_set(a->m, s->v[i].idx, &empty);
                if (a->nspare == a->capspare) {
                    a->capspare = a->capspare ? 2 * a->capspare : 64;
                    a->spare = sim_xreallocarray(a->spare, a->capspare, sizeof(*a->spare));
                }
                a->spare[a->nspare++] = s->v[i].idx;
                continue;
            }
            struct trace_bw_sample merged = *old;
            merged.cycle = k * a->w;
            merged.window = a->w;
            trace_model_bw_sample_set(a->m, s->v[i].idx, &merged);
            s->v[n++] = (struct ent){k, s->v[i].idx};
        }
        s->n = n;
    }
}

void trace_resacc_add(struct trace_resacc *a, uint32_t res, bool write, uint64_t bytes, uint64_t c0,
                      uint64_t c1)
{
    assert(res < a->nres);
    if (c1 < c0)
        c1 = c0;
    while (c1 / a->w >= TRACE_RESACC_MAX_WINDOWS)
        widen(a);
    uint64_t w = a->w;
    if (c1 == c0) {
        credit(a, res, c0 / w, write, bytes);
        return;
    }
    /* window k gets floor(B*C_k/L) - floor(B*C_(k-1)/L), C_k the overlap up to the end of
     * window k: the shares add up to exactly B */
    uint64_t len = c1 - c0, given = 0;
    for (uint64_t k = c0 / w; k <= (c1 - 1) / w; k++) {
        uint64_t wend = k * w + w;
        uint64_t c = (wend < c1 ? wend : c1) - c0;
        uint64_t upto = (uint64_t)(((unsigned __int128)bytes * c) / len);
        credit(a, res, k, write, upto - given);
        given = upto;
    }
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
    const struct trace_bw_sample *s = trace_model_bw_sample(a->m, a->r[res].v[i].idx);
    *read = s->read_bytes;
    *write = s->write_bytes;
    return true;
}
