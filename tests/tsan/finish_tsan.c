/*
 * ThreadSanitizer driver for the model's finish on two threads (trace/model/model.c: a
 * loaded trace's tracks sorted and counted by two threads at once; make tsan): a model of
 * more events than a finish shares out, on many tracks, out of start order so that each
 * track is sorted, finished at once (two threads) and again in batches too small to share
 * (one thread); the tracks' indexes and busy times must agree. Exit 0 when they do; any data
 * race makes ThreadSanitizer report and fail the run.
 */
#include "trace/model/model.h"

#include <stdio.h>
#include <string.h>

enum { EVENTS = (1 << 20) + 4096, TRACKS = 9, BATCH = 1 << 18 };

static struct trace_model *build(size_t batch)
{
    struct trace_model *m = trace_model_new();
    char name[16];
    for (int k = 0; k < TRACKS; k++) {
        snprintf(name, sizeof(name), "t%d", k);
        trace_model_track(m, name, TRACE_ENGINE_TE, k);
    }
    uint32_t op = trace_model_intern(m, "op", 2);
    for (uint64_t i = 0; i < EVENTS; i++) {
        uint64_t s = (i * 2654435761u) % 1000003u; /* out of order */
        struct trace_event ev = {.start = s,
                                 .end = s + 1 + i % 17,
                                 .track = (uint32_t)((i * i) % TRACKS),
                                 .op = op,
                                 .cmdq_id = TRACE_NO_CMDQ};
        trace_model_add_event(m, &ev);
        if (batch && (i + 1) % batch == 0)
            trace_model_finish(m);
    }
    trace_model_finish(m);
    return m;
}

int main(void)
{
    struct trace_model *a = build(0), *b = build(BATCH);
    int bad = 0;
    for (uint32_t k = 0; k < TRACKS && !bad; k++) {
        const uint32_t *ia, *ib;
        size_t na = trace_model_track_events(a, k, &ia), nb = trace_model_track_events(b, k, &ib);
        bad = na != nb || memcmp(ia, ib, na * sizeof(*ia)) != 0 ||
              trace_model_track_busy(a, k, 0, 1000003u) !=
                  trace_model_track_busy(b, k, 0, 1000003u) ||
              trace_model_track_busy(a, k, 5000, 700000) !=
                  trace_model_track_busy(b, k, 5000, 700000);
        if (bad)
            fprintf(stderr, "finish_tsan: track %u differs (%zu and %zu events)\n", k, na, nb);
    }
    trace_model_free(a);
    trace_model_free(b);
    if (!bad)
        printf("finish_tsan: %d events on %d tracks, finished at once and in batches\n", EVENTS,
               TRACKS);
    return bad;
}
