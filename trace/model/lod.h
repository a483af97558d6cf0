/*
 * Level-of-detail summaries of the trace model's tracks: per track, the running state (the
 * union's length and the greatest end so far, see model_impl.h) at the first position of
 * every block of positions, a few dozen bytes per block, kept in the heap whatever the
 * memory budget (trace/model/budget.h) does with the events. Blocks grow coarser (twice as
 * many positions, half the entries) as the run grows, so the summaries stay under a
 * thirty-second of the budget whatever the run's length. They are brought up to date by
 * trace_model_finish and when a model is lent a mapped index.
 *
 * From them alone, without reading an event, the busy time of a track before any time is
 * known within bounds, exactly at the blocks' first starts and wherever the track's busy
 * intervals are one run across a block; a reader that draws a cell spanning many blocks
 * decides most of what it draws from the bounds and asks trace_model_track_cover only when
 * they do not settle it, so that a view of a long run reads few events.
 */
#ifndef TRACE_MODEL_LOD_H
#define TRACE_MODEL_LOD_H

#include "trace/model/model.h"

#include <stddef.h>
#include <stdint.h>

/* Bounds on trace_model_track_cover(m, track, x) from the summary: *lo <= cover <= *hi
 * (equal when the summary settles it). Reads no event but the track's earliest in flight. */
void trace_model_track_cover_bounds(const struct trace_model *m, uint32_t track, uint64_t x,
                                    uint64_t *lo, uint64_t *hi);

/* What the summary proves about the shape of track's busy time within [a, b): bits of
 * TRACE_SHAPE_*. A bit not set proves nothing. */
enum {
    TRACE_SHAPE_IDLE_BUSY = 1 << 0, /* some idle time comes before some busy time */
    TRACE_SHAPE_BUSY_IDLE = 1 << 1, /* some busy time comes before some idle time */
};
unsigned trace_model_track_shape(const struct trace_model *m, uint32_t track, uint64_t a,
                                 uint64_t b);

/* Bytes the summaries take, and the number of block states each entry stands for. */
size_t trace_model_lod_bytes(const struct trace_model *m);
size_t trace_model_lod_stride(const struct trace_model *m);

#endif
