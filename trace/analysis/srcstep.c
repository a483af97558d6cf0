/*
 * Stepping through a kernel's lines on a model (srcstep.h): binary searches in each of a
 * PE's tracks' events sorted by start, so a step costs a few searches per engine of the PE
 * whatever the trace's size.
 */
#include "trace/analysis/srcstep.h"

#include <stdio.h>
#include <string.h>

enum { LOOK_BACK = 512 }; /* events without a call site skipped looking back */

bool trace_srcstep_pe_of(const struct trace_model *m, uint64_t i, char *buf, size_t size)
{
    buf[0] = '\0';
    if (i >= trace_model_event_count(m))
        return false;
    const char *name =
        trace_model_str(m, trace_model_track_get(m, trace_model_event(m, i)->track)->name);
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    snprintf(buf, size, "%.*s", (int)(dot - name), name);
    return true;
}

bool trace_srcstep_track_of(const struct trace_model *m, uint32_t t, const char *pe)
{
    const char *name = trace_model_str(m, trace_model_track_get(m, t)->name);
    if (!pe || !*pe)
        return strchr(name, '.') != NULL;
    size_t n = strlen(pe);
    return strncmp(name, pe, n) == 0 && name[n] == '.' && !strchr(name + n + 1, '.');
}

uint64_t trace_srcstep_track_last(const struct trace_model *m, uint32_t t, uint64_t time)
{
    const uint32_t *idx;
    size_t n = trace_model_track_events(m, t, &idx);
    size_t lo = 0, hi = n; /* the first whose start > time */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (trace_model_event(m, idx[mid])->start <= time)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = 0; k < LOOK_BACK && lo > 0; k++, lo--)
        if (trace_model_event(m, idx[lo - 1])->site != TRACE_NO_SITE)
            return idx[lo - 1];
    return UINT64_MAX;
}

/* Whether event a comes before event b in (start, index) order. */
static bool before(const struct trace_model *m, uint64_t a, uint64_t b)
{
    uint64_t sa = trace_model_event(m, a)->start, sb = trace_model_event(m, b)->start;
    return sa < sb || (sa == sb && a < b);
}

uint64_t trace_srcstep_last(const struct trace_model *m, const char *pe, uint64_t time)
{
    uint64_t best = UINT64_MAX;
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        if (!trace_srcstep_track_of(m, t, pe))
            continue;
        uint64_t e = trace_srcstep_track_last(m, t, time);
        if (e != UINT64_MAX && (best == UINT64_MAX || before(m, best, e)))
            best = e;
    }
    return best;
}

uint64_t trace_srcstep_next(const struct trace_model *m, const char *pe, uint64_t from,
                            uint16_t site)
{
    uint64_t best = UINT64_MAX;
    uint64_t t0 = from != UINT64_MAX ? trace_model_event(m, from)->start : 0;
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        if (!trace_srcstep_track_of(m, t, pe))
            continue;
        const uint32_t *idx;
        size_t n = trace_model_track_events(m, t, &idx);
        size_t lo = 0, hi = n; /* the first whose start >= t0 */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (trace_model_event(m, idx[mid])->start < t0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k < n; k++) {
            uint64_t e = idx[k];
            const struct trace_event *ev = trace_model_event(m, e);
            if (best != UINT64_MAX && !before(m, e, best))
                break; /* this track has nothing earlier than what another has */
            if (ev->site == TRACE_NO_SITE || ev->site == site ||
                (from != UINT64_MAX && !before(m, from, e)))
                continue;
            best = e;
            break;
        }
    }
    return best;
}
