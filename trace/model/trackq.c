/*
 * Questions to a track's index of the trace model (see model.h): where a time falls among
 * its events (trace_model_track_seek) and how busy it was up to a time or over a window
 * (trace_model_track_cover, trace_model_track_busy), each from the running states the model
 * keeps every TRACK_BLOCK positions (model_impl.h) and at most a block of its events, with an
 * op in flight busy until now.
 */
#include "trace/model/model.h"
#include "trace/model/model_impl.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* Effective running maximum of ends over positions [0, k]: in-flight events end at now. */
static uint64_t eff_maxend(const struct trace_model *m, const struct track_data *t, size_t k)
{
    uint64_t v = run_at(m, t, k + 1).maxend;
    if (k >= t->inflight_from && m->now > v)
        v = m->now;
    return v;
}

size_t trace_model_track_seek(const struct trace_model *m, uint32_t track, uint64_t t_)
{
    assert(track < m->ntracks);
    const struct track_data *t = &m->tracks[track];
    if (!t->n)
        return 0;
    /* whole blocks first (their stored states), then positions inside one */
    size_t lo = 0, hi = t->n;
    size_t blo = 1, bhi = t->nblock;
    while (blo < bhi) { /* first stored state past t_ */
        size_t mid = blo + (bhi - blo) / 2;
        size_t last = mid * TRACK_BLOCK - 1;
        uint64_t v = t->block[mid].maxend;
        if (last >= t->inflight_from && m->now > v)
            v = m->now;
        if (v > t_)
            bhi = mid;
        else
            blo = mid + 1;
    }
    lo = (blo - 1) * TRACK_BLOCK;
    if (blo < t->nblock)
        hi = blo * TRACK_BLOCK;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (eff_maxend(m, t, mid) > t_)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Busy cycles of the union of ended events within [0, x). */
static uint64_t union_upto(const struct trace_model *m, const struct track_data *t, uint64_t x)
{
    if (!t->nblock)
        return 0;
    /* the last block whose first start is below x (the blocks' states are one small array:
     * the search touches the events themselves only inside that block) */
    size_t lo = 0, hi = t->nblock;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->block[mid].first < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t b = lo ? lo - 1 : 0;
    struct run_state st = t->block[b];
    /* a track's events lie far apart in the model (every other track's are between them):
     * ask for the block's cache lines at once rather than miss them one by one */
    size_t kend = (b + 1) * TRACK_BLOCK < t->n ? (b + 1) * TRACK_BLOCK : t->n;
    for (size_t k = b * TRACK_BLOCK; k < kend; k++)
        __builtin_prefetch(&m->ev[t->idx[k]]);
    for (size_t k = b * TRACK_BLOCK; k < t->n && m->ev[t->idx[k]].start < x; k++)
        run_add(m, t, k, &st); /* at most a block: the next one starts at or after x */
    return st.cover - (st.maxend > x ? st.maxend - x : 0);
}

uint64_t trace_model_track_cover(const struct trace_model *m, uint32_t track, uint64_t x)
{
    assert(track < m->ntracks);
    const struct track_data *t = &m->tracks[track];
    if (t->inflight_from < t->n) {
        /* the earliest in-flight event runs from s0 to now: all of [s0, min(x, now)) is
         * busy, and no ended event reaches past now, so past s0 the cover is that of the
         * ended events before s0 plus the time since */
        uint64_t s0 = m->ev[t->idx[t->inflight_from]].start;
        if (x > s0)
            return union_upto(m, t, s0) + ((x < m->now ? x : m->now) - s0);
    }
    return union_upto(m, t, x);
}

uint64_t trace_model_track_inflight_start(const struct trace_model *m, uint32_t track)
{
    assert(track < m->ntracks);
    const struct track_data *t = &m->tracks[track];
    return t->inflight_from < t->n ? m->ev[t->idx[t->inflight_from]].start : UINT64_MAX;
}

uint64_t trace_model_track_busy(const struct trace_model *m, uint32_t track, uint64_t a, uint64_t b)
{
    if (b <= a)
        return 0;
    return trace_model_track_cover(m, track, b) - trace_model_track_cover(m, track, a);
}
