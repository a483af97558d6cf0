/*
 * Level-of-detail summaries of the model's tracks (see lod.h): every (1 << lod_level)-th
 * block state of each track, copied into the heap as trace_model_finish recounts them,
 * and the bounds on a track's busy time that follow from them.
 *
 * Why the bounds hold: let A be the state at the first position of a summary block whose
 * first start f is below x, and B the state at the next block's first position (or after
 * the last position), whose first start is at or past x. Every event before B's position
 * that counts below x is in the union B stands for, and the events after it start at or
 * past x; every event before A's position starts at or before f, so the part of A's union
 * at or past x is [x, A.maxend), and its part at or past f is [f, A.maxend). Hence
 *   A.cover - max(0, A.maxend - x) <= cover(x) <= that + max(0, x - max(f, A.maxend)),
 *   B.cover - max(0, B.maxend - x) <= cover(x) <= B.cover,
 * the first exact while x <= max(f, A.maxend) and both together wherever the block's
 * events from A.maxend on are one run.
 */
#include "trace/model/lod.h"

#include "sim/util/xalloc.h"
#include "trace/model/budget.h"
#include "trace/model/model_impl.h"

#include <assert.h>
#include <stdlib.h>

enum {
    LOD_MIN_ENTRIES = 1024, /* the summaries may always hold this many entries */
    SHAPE_POINTS = 48,      /* block starts looked at for one trace_model_track_shape */
};

/* Entries the summaries of every track may hold together. */
static size_t lod_cap(void)
{
    uint64_t n = trace_budget_get() / 32 / sizeof(struct run_state);
    return n > LOD_MIN_ENTRIES ? (size_t)n : LOD_MIN_ENTRIES;
}

/* Entries of a track of nblock block states at level lv. */
static size_t entries(size_t nblock, unsigned lv)
{
    return nblock ? ((nblock - 1) >> lv) + 1 : 0;
}

static void reserve(struct track_data *t, size_t n)
{
    if (n <= t->caplod)
        return;
    size_t c = t->caplod ? t->caplod : 16;
    while (c < n)
        c *= 2;
    t->lod = sim_xreallocarray(t->lod, c, sizeof(*t->lod));
    t->caplod = c;
}

/* One level coarser for every track: keep every other entry. */
static void level_up(struct trace_model *m)
{
    m->lod_level++;
    m->lod_total = 0;
    for (uint32_t k = 0; k < m->ntracks; k++) {
        struct track_data *t = &m->tracks[k];
        size_t n = (t->nlod + 1) / 2;
        for (size_t j = 1; j < n; j++)
            t->lod[j] = t->lod[2 * j];
        t->nlod = n;
        m->lod_total += n;
        if (n && n < t->caplod / 2) { /* the memory too */
            t->lod = sim_xreallocarray(t->lod, n, sizeof(*t->lod));
            t->caplod = n;
        }
    }
}

void trace_lod_track_update(struct trace_model *m, struct track_data *t, size_t b,
                            const struct run_state *state)
{
    unsigned lv = m->lod_level;
    size_t n = entries(t->nblock, lv);
    reserve(t, n);
    size_t from = b >> lv;
    if (from > t->nlod)
        from = t->nlod;
    for (size_t j = from; j < n; j++)
        t->lod[j] = t->block[j << lv];
    m->lod_total += n - t->nlod; /* entries only ever get more at one level */
    t->nlod = n;
    t->lod_end = *state;
    while (m->lod_total > lod_cap())
        level_up(m);
}

/* The state after all positions of t (events in flight count for nothing, as in the
 * block states). */
static struct run_state state_at_end(const struct trace_model *m, const struct track_data *t)
{
    struct run_state st = t->block[t->nblock - 1];
    for (size_t k = (t->nblock - 1) * TRACK_BLOCK; k < t->n; k++) {
        const struct trace_event *e = &m->ev[t->idx[k]];
        if (e->flags & TRACE_EV_INFLIGHT)
            continue;
        uint64_t from = e->start > st.maxend ? e->start : st.maxend;
        if (e->end > from)
            st.cover += e->end - from;
        if (e->end > st.maxend)
            st.maxend = e->end;
    }
    return st;
}

void trace_lod_rebuild(struct trace_model *m)
{
    size_t blocks = 0;
    for (uint32_t k = 0; k < m->ntracks; k++)
        blocks += entries(m->tracks[k].nblock, 0);
    unsigned lv = 0;
    for (size_t cap = lod_cap(), total = blocks; total > cap; lv++) {
        total = 0;
        for (uint32_t k = 0; k < m->ntracks; k++)
            total += entries(m->tracks[k].nblock, lv + 1);
    }
    m->lod_level = lv;
    m->lod_total = 0;
    for (uint32_t k = 0; k < m->ntracks; k++) {
        struct track_data *t = &m->tracks[k];
        t->nlod = 0;
        if (!t->nblock) {
            t->lod_end = (struct run_state){0, 0, UINT64_MAX};
            continue;
        }
        struct run_state end = state_at_end(m, t);
        trace_lod_track_update(m, t, 0, &end);
    }
}

/* The first entry of t's summary from j on whose first start is x or more. */
static size_t lod_from(const struct track_data *t, size_t j, uint64_t x)
{
    size_t hi = t->nlod;
    while (j < hi) {
        size_t mid = j + (hi - j) / 2;
        if (t->lod[mid].first < x)
            j = mid + 1;
        else
            hi = mid;
    }
    return j;
}

void trace_model_track_cover_bounds(const struct trace_model *m, uint32_t track, uint64_t x,
                                    uint64_t *lo, uint64_t *hi)
{
    assert(track < m->ntracks);
    const struct track_data *t = &m->tracks[track];
    if (t->inflight_from < t->n) {
        /* as trace_model_track_cover: past the earliest op in flight, all is busy to now */
        uint64_t s0 = m->ev[t->idx[t->inflight_from]].start;
        if (x > s0) {
            trace_model_track_cover_bounds(m, track, s0, lo, hi);
            *lo += (x < m->now ? x : m->now) - s0;
            *hi += (x < m->now ? x : m->now) - s0;
            return;
        }
    }
    /* the last entry whose first start is below x: a - 1 */
    size_t a = lod_from(t, 0, x);
    if (a == 0) { /* no event starts below x */
        *lo = *hi = 0;
        return;
    }
    const struct run_state *A = &t->lod[a - 1];
    const struct run_state *B = a < t->nlod ? &t->lod[a] : &t->lod_end;
    uint64_t ca = A->cover - (A->maxend > x ? A->maxend - x : 0);
    uint64_t p = A->first > A->maxend ? A->first : A->maxend;
    uint64_t h = ca + (x > p ? x - p : 0);
    uint64_t after = B->maxend > x ? B->maxend - x : 0; /* at most this much of B's union */
    uint64_t l = B->cover > after ? B->cover - after : 0;
    *lo = l > ca ? l : ca;
    *hi = h < B->cover ? h : B->cover;
    if (*hi < *lo) /* an op ended since the last trace_model_finish: no bound holds */
        *hi = *lo;
}

unsigned trace_model_track_shape(const struct trace_model *m, uint32_t track, uint64_t a,
                                 uint64_t b)
{
    assert(track < m->ntracks);
    const struct track_data *t = &m->tracks[track];
    if (b <= a)
        return 0;
    /* the entries whose first start lies in (a, b): exact points between a and b (a < b,
     * so a + 1 does not wrap) */
    size_t j0 = lod_from(t, 0, a + 1), j1 = lod_from(t, j0, b);
    size_t step = j1 - j0 > SHAPE_POINTS ? (j1 - j0 + SHAPE_POINTS - 1) / SHAPE_POINTS : 1;
    uint64_t px = a, plo, phi;
    trace_model_track_cover_bounds(m, track, a, &plo, &phi);
    bool idle = false, busy = false;
    unsigned bits = 0;
    for (size_t j = j0;; j += step) {
        uint64_t x = j < j1 ? t->lod[j].first : b, xlo, xhi;
        if (x <= px)
            continue;
        trace_model_track_cover_bounds(m, track, x, &xlo, &xhi);
        bool seg_busy = xlo > phi, seg_idle = xhi - plo < x - px;
        if (seg_busy && idle)
            bits |= TRACE_SHAPE_IDLE_BUSY;
        if (seg_idle && busy)
            bits |= TRACE_SHAPE_BUSY_IDLE;
        idle |= seg_idle, busy |= seg_busy;
        if (x == b || bits == (TRACE_SHAPE_IDLE_BUSY | TRACE_SHAPE_BUSY_IDLE))
            break;
        px = x, plo = xlo, phi = xhi;
    }
    return bits;
}

size_t trace_model_lod_bytes(const struct trace_model *m)
{
    size_t n = 0;
    for (uint32_t k = 0; k < m->ntracks; k++)
        n += m->tracks[k].caplod * sizeof(struct run_state);
    return n;
}

size_t trace_model_lod_stride(const struct trace_model *m)
{
    return (size_t)TRACK_BLOCK << m->lod_level;
}
