/*
 * Where each PE's kernel is in its source: the line of its latest tl call at a time (the
 * call site of its latest op, trace/model/model.h "Call sites"), and the next call it made
 * from another line. A PE is the component prefix of its engines' tracks ("sip0.cube0.pe3"
 * for "sip0.cube0.pe3.pe_dma"). What stepping by line moves to, post-mortem, and the source
 * pane's per-PE markers. Reads the per-track indexes: the model must be finished
 * (trace_model_finish) since its last events were added.
 */
#ifndef TRACE_SRCSTEP_H
#define TRACE_SRCSTEP_H

#include "trace/model/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The PE of event i (its track's name up to the last '.') into buf (size bytes); false,
 * buf "", when the track's name has no '.'. */
bool trace_srcstep_pe_of(const struct trace_model *m, uint64_t i, char *buf, size_t size);

/* Whether track t is an engine of PE pe (its name is pe, a '.', and no other '.'); any
 * track with a '.' when pe is NULL or "". */
bool trace_srcstep_track_of(const struct trace_model *m, uint32_t t, const char *pe);

/* The latest event of track t with a call site that starts at or before time (the last
 * one, time UINT64_MAX), or UINT64_MAX. Looks at most a few hundred events back. */
uint64_t trace_srcstep_track_last(const struct trace_model *m, uint32_t t, uint64_t time);

/* The latest event of PE pe (NULL or "": any) with a call site that starts at or before
 * time, or UINT64_MAX. */
uint64_t trace_srcstep_last(const struct trace_model *m, const char *pe, uint64_t time);

/*
 * The first event of PE pe (NULL or "": any PE) after event from in (start, index) order
 * (from UINT64_MAX: from the beginning) whose call site is neither TRACE_NO_SITE nor site:
 * the next tl call of the PE's kernel on another line. UINT64_MAX when there is none.
 */
uint64_t trace_srcstep_next(const struct trace_model *m, const char *pe, uint64_t from,
                            uint16_t site);

#endif
