/*
 * The critical path of a growing set of ops (a live launch): a state that takes the ops
 * appended to the set since the last call and gives the path trace_critpath_compute gives
 * over the whole set (its steps, waits, reasons, ranges, flags and spaces), at a cost that
 * follows the ops added rather than the set.
 *
 * Why it can: critpath.h's sweep takes every op's start and end (seen a cycle early) in
 * time order, and an op's start picks its predecessor among the ops whose ends came before
 * it (explicit, RAW through the interval maps, tile, engine, PE order, order: each reads
 * only what the ends swept so far published). So once every point before a time F is
 * known and final, the sweep up to F is the same whatever comes after. A live model appends
 * its ops at their starts, in start order, at "now" (trace_model_now), and ends them later,
 * at now or after: the points before F = now - 1 are those of the ops started and ended by
 * then, final (an op in flight ends at now in the set as it is, a cycle early: at F). The
 * state sweeps up to F once and keeps the sweep's state (the interval maps, the last op of
 * each tile, track and PE, the last to end, each op's predecessor); each call sweeps the
 * points from there to F', then the rest (the ops in flight, those ending at now) on a copy
 * of what they change (an undo log, the maps' writes laid over them), which the next call
 * sweeps again. The path is walked back from the op ending last until it meets the last
 * call's path at an op whose start was swept for good: the steps before it are the same.
 * A call given many new ops takes them in parts the same way, each swept up to the least
 * start of the ops after it (their points come at it or later): what a part needs for its
 * sweep is then a few megabytes, whatever the number of ops since the last call.
 *
 * What it checks, and when it starts over (sweeping the whole set as the first call does):
 * another model or set (the events given before are not a prefix of these), an op appended
 * with a start before F, an op that was in flight ending before F, events not in model
 * order, the composite ops of the set left out now and not before (a first stage after a
 * composite op), the decode budget (max_decode) crossed, opinfo given by the caller.
 */
#ifndef TRACE_CRITINC_H
#define TRACE_CRITINC_H

#include "trace/verdict/critpath.h"

#include <stdbool.h>
#include <stddef.h>

struct trace_critinc;

/* A state for the paths of one growing set of ops. */
struct trace_critinc *trace_critinc_new(void);

/* Free st (NULL: nothing). */
void trace_critinc_free(struct trace_critinc *st);

/*
 * The path of in (as trace_critpath_compute's, into out: free with trace_critpath_fini),
 * its events those of the last call with st and then new ones. in->each_info is called
 * with the ops read for the first time (the new ones, in the order of events; all of them
 * when it starts over); in->info must be NULL (else it computes from scratch, and starts
 * over next time); in->threads is not used. Cancelled through in->progress: an empty path,
 * and the state starts over next time.
 */
void trace_critinc_update(struct trace_critinc *st, const struct trace_critpath_input *in,
                          struct trace_critpath *out);

/* Give st room for the path of its next call: steps, from malloc, with room for n, owned by
 * st from then on and counted in trace_critinc_bytes (the steps of a path it gave that its
 * caller is done with, whose pages are there already: a path of millions of steps is copied
 * out once a call). */
void trace_critinc_give_room(struct trace_critinc *st, struct trace_path_step *steps, size_t n);

/* Have st take the new events of a call in parts of at most events (0: its default), each
 * part swept up to the least start of the events after it (for tests: the path is the
 * same whatever the parts). */
void trace_critinc_set_part(struct trace_critinc *st, size_t events);

/* About how many bytes st holds (its arrays), for a caller bounding its memory. */
size_t trace_critinc_bytes(const struct trace_critinc *st);

/* How many steps at the head of the path the last call gave are, as they are, the first
 * steps of the path the call before gave (0: none, or the state started over): a caller
 * working out sums over a path's steps may take them on from there. */
size_t trace_critinc_kept_steps(const struct trace_critinc *st);

/* How many times st started over (its first call included), for tests and benchmarks. */
size_t trace_critinc_restarts(const struct trace_critinc *st);

#endif
