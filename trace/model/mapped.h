/*
 * A model's big per-event arrays lent from outside: the binary index of a trace
 * (trace/cache/index.h) keeps the events, op columns, transfers, dependencies and each
 * track's sorted index and block states in the model's own layout, and the next open maps
 * that file and hands the model those arrays in place instead of copying them. The model
 * reads them as its own; the first change to any of them (an event added, an op column
 * set...) copies them into the model's memory first, and the lender's release runs when
 * the model is freed or has copied them.
 *
 * The arrays are trusted as given: the lender checks them first (every stored index in
 * range, trace_model_lend's conditions below).
 */
#ifndef TRACE_MODEL_MAPPED_H
#define TRACE_MODEL_MAPPED_H

#include "trace/model/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of one block state of a track's index (the per-track array after the sorted event
 * indices): a track of n events keeps n / TRACE_MODEL_TRACK_BLOCK + 1 of them (none when it
 * has no events). */
size_t trace_model_block_size(void);
enum { TRACE_MODEL_TRACK_BLOCK = 16 };

/* A track's sorted index as kept (see trace_model_track_events) and its block states
 * (*nblock of them, trace_model_block_size bytes each; borrowed). */
const void *trace_model_track_blocks(const struct trace_model *m, uint32_t track, size_t *nblock);

/* The op columns as kept: per event the offset of its column in *col (UINT64_MAX: none),
 * *ncol bytes of columns, each its length byte then its bytes. NULL (no op columns at all)
 * or a borrowed array of trace_model_event_count entries. */
const uint64_t *trace_model_opcol_table(const struct trace_model *m, const uint8_t **col,
                                        uint64_t *ncol);

/* The dependencies as kept: *on the events they depend on, the return value the dependent
 * events (sorted), trace_model_dep_count of each (borrowed). */
const uint64_t *trace_model_dep_table(const struct trace_model *m, const uint64_t **on);

/* What trace_model_lend hands over. Per track (trace_model_track_count entries in the
 * per-track arrays): its sorted event indices and its block states. */
struct trace_model_lent {
    const struct trace_event *ev; /* nev events, 8-byte aligned like every array here */
    uint64_t nev;
    const uint64_t *col_off; /* NULL, or nev offsets into col (UINT64_MAX: none) */
    const uint8_t *col;
    uint64_t ncol;
    const struct trace_transfer *xf;
    size_t nxf;
    const uint64_t *dep_ev, *dep_on; /* ndep each, dep_ev sorted */
    size_t ndep;
    const uint32_t *const *idx; /* per track */
    const size_t *nidx;
    const void *const *block;
    const size_t *nblock;
    const uint8_t *kinds; /* per track, its events' op kinds (trace_model_track_kinds) */
    uint64_t tmin, tmax;  /* the events' first start and last end (nev > 0) */
};

/*
 * Give m, which has its tracks and no events, the arrays of a (not copied: they must stay
 * valid until release(ctx) runs, when m is freed or first changes them). The caller has
 * checked them: every event's track, strings, site and op kind valid for m, ends >= starts,
 * no flag but TRACE_EV_TRANSFER; every column offset NO_COL or a whole column inside col;
 * every transfer's, dependency's and track index's event below nev; each track's indices
 * its own events sorted by (start, index) and its block states as trace_model_finish
 * leaves them. m is finished as if the events had been added and trace_model_finish run.
 */
void trace_model_lend(struct trace_model *m, const struct trace_model_lent *a,
                      void (*release)(void *ctx), void *ctx);

/* Say that the arrays m was lent are pages of a read-only private file mapping, never
 * written: pages given back (trace_model_lent_giveback) are read again from the file. */
void trace_model_lent_from_file(struct trace_model *m);

/* True while m reads arrays lent by trace_model_lend. */
bool trace_model_is_lent(const struct trace_model *m);

/*
 * Give back the resident pages of the arrays m was lent from a file mapping (file_pages):
 * the next read of them faults them in again from the page cache, the same bytes. What a
 * pass over millions of events calls once it is done with a stretch of them, so that the
 * pages it touched do not stay in the process's RSS. Nothing when m's arrays are its own.
 * Safe while other threads read m. It is done behind the caller, on a thread of m's (here
 * when none can be started), soon after: what was read before the call is given back.
 */
void trace_model_lent_giveback(const struct trace_model *m);

/*
 * Map in, in one call, the pages of the lent events [lo, hi) and of their op columns'
 * offsets, which a pass is about to read: read page by page they would take a fault each
 * 64 KiB, which a virtual machine makes dear (a pass over ten million events spent half
 * its time in them). A stretch of a few megabytes, read at once after: a give-back (the
 * caller's, the memory budget's) may drop it before, and what it dropped faults in as
 * before. Nothing when m's arrays are its own, or where the system cannot.
 */
void trace_model_lent_ahead(const struct trace_model *m, uint64_t lo, uint64_t hi);

/* Wait for the give-backs asked of m so far to be done. */
void trace_model_lent_settle(const struct trace_model *m);

#endif
