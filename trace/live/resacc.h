/*
 * Per-resource bandwidth samples filled live: the chip reports the bytes each HBM and each
 * link carries over an interval (sim/chip/chip.h, on_traffic); this accumulator spreads
 * them over windows of the resource samples (trace/FORMAT.md, "Resource samples"), one
 * sample per resource and window with traffic, and writes them into the trace model at
 * each flush. The work per report is a few additions (a search from the newest window
 * back), no allocation but the growth of arrays. So that a long run keeps a bounded number
 * of samples, the window doubles (and the samples so far are merged in pairs) whenever the
 * run passes TRACE_RESACC_MAX_WINDOWS windows.
 */
#ifndef TRACE_RESACC_H
#define TRACE_RESACC_H

#include "trace/model/model.h"

#include <stdbool.h>
#include <stdint.h>

/* Windows a run may span before the window doubles. */
#define TRACE_RESACC_MAX_WINDOWS 8192u

struct trace_resacc;

/* An accumulator adding samples of nres resources, named by names[] (interned in m), to m
 * (borrowed), window cycles wide (0: TRACE_BW_WINDOW_DEFAULT). */
struct trace_resacc *trace_resacc_new(struct trace_model *m, uint64_t window, size_t nres,
                                      const uint32_t *names);
/* Free it (the samples stay in the model). NULL is a no-op. */
void trace_resacc_free(struct trace_resacc *a);

/*
 * bytes crossed resource res over cycles [c0, c1) (c1 < c0 is taken as c0), in the write
 * direction or the read one: spread over the windows they overlap in proportion to the
 * overlap, with integer shares that add up to bytes (as trace_metrics_bandwidth does).
 */
void trace_resacc_add(struct trace_resacc *a, uint32_t res, bool write, uint64_t bytes, uint64_t c0,
                      uint64_t c1);

/* Whether trace_resacc_add of [c0, c1) leaves the model as it is until the next flush (it
 * would not widen the windows, which writes the samples so far into the model). */
bool trace_resacc_fits(const struct trace_resacc *a, uint64_t c0, uint64_t c1);

/* Bring the model's samples up to date with the bytes reported since the last flush. */
void trace_resacc_flush(struct trace_resacc *a);

/* The current window in cycles. */
uint64_t trace_resacc_window(const struct trace_resacc *a);

/* The resources, and the interned name of resource res. */
size_t trace_resacc_count(const struct trace_resacc *a);
uint32_t trace_resacc_name(const struct trace_resacc *a, uint32_t res);

/* Bytes read and written on res in window k (cycles [k x window, (k+1) x window)), as
 * reported so far (flushed or not); false when the window has no traffic. */
bool trace_resacc_get(const struct trace_resacc *a, uint32_t res, uint64_t k, uint64_t *read,
                      uint64_t *write);

#endif
