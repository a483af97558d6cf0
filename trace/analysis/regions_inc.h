/*
 * The regions of a growing model (a live run), kept up to date rather than accounted again
 * from event 0 (trace/analysis/regions.h). A state remembers what the events it has folded in
 * yield: each launch's or layer's span, usage per engine kind, track and op name, and of each
 * union of busy intervals the length and the recent intervals a late event may still overlap;
 * an update folds in the events that have ended since (in any order), and adds those still in
 * flight on top without keeping them. The set an update returns equals what trace_regions_new
 * (or _light, _split) would return for the model at that moment.
 *
 * An event is final once it has ended. Events may come out of start order (a host records its
 * launches late): the unions keep their intervals back to what no event still to come can start
 * before (the oldest start in flight, and the latest start less twice the most an event has
 * come late so far). An event later than that, a DRAM transfer of an event already folded in or
 * out of event order, a model that shrank or changed under it, make the state start over; a
 * model whose transfers are out of event order is accounted from scratch at every update.
 *
 * Launch and layer splits are kept incrementally; run and marker splits (windows of time)
 * are accounted from scratch by each update.
 */
#ifndef TRACE_REGIONS_INC_H
#define TRACE_REGIONS_INC_H

#include "trace/analysis/regions.h"

#include <stdbool.h>

/* What an update returns, as regions.h names it. */
enum trace_regions_depth {
    TRACE_REGIONS_FULL,  /* trace_regions_new: every figure */
    TRACE_REGIONS_LIGHT, /* trace_regions_new_light: no busy cycles per op name */
    TRACE_REGIONS_SPLIT, /* trace_regions_new_split: spans and names, nothing accounted */
};

struct trace_regions_inc;

/* A state for splits of the kind, to the depth, of one model (the first update's). */
struct trace_regions_inc *trace_regions_inc_new(enum trace_region_kind kind,
                                                enum trace_regions_depth depth);

/*
 * Fold in m's events that became final since the last update and return m's region set
 * (free it with trace_regions_free; m borrowed as by trace_regions_new), reporting through p
 * (may be NULL). When p is cancelled it returns NULL; the state keeps what it folded in and
 * stays valid. m must not change during the call; between calls it may grow (events added
 * and ended, tokens and markers added, now moved). Another model than the last one's starts
 * the state over.
 */
struct trace_regions *trace_regions_inc_update(struct trace_regions_inc *st,
                                               const struct trace_model *m,
                                               struct trace_progress *p);

/* How many of the model's events the state holds folded in (for tests and benchmarks). */
uint64_t trace_regions_inc_folded(const struct trace_regions_inc *st);

/* Free a state (NULL is a no-op). */
void trace_regions_inc_free(struct trace_regions_inc *st);

#endif
