/*
 * Summary metrics and bandwidth samples accumulated as a live run goes, so that a trace
 * streamed to its file can be closed without keeping its events (trace/live/live.h): the same
 * definitions as trace/analysis/metrics.h computes over a finished model (trace/FORMAT.md,
 * "Summary metrics", "Bandwidth samples"), with exactly the same results.
 *
 * Ops are reported as a simulation produces them: starts and ends in the order of their
 * cycles (ties in any order). Busy time is then a count of ops in flight per engine: a
 * span of busy time opens when the count leaves 0 and closes when it comes back, which is
 * the measure of the union of the ops' spans. The peak of DMA transfers in flight is read
 * once all the reports of a cycle are in. Bandwidth samples are kept in a dense array of
 * windows; when the run grows past what trace_metrics_widen allows, the window doubles and
 * the samples so far are merged in pairs.
 *
 * Memory: a few words per engine, and at most about 2^21 windows of 16 bytes.
 */
#ifndef TRACE_SUMACC_H
#define TRACE_SUMACC_H

#include "trace/analysis/metrics.h"
#include "trace/model/model.h"

#include <stdint.h>

struct trace_sumacc;

/* An accumulator with bandwidth windows of window cycles (0: TRACE_BW_WINDOW_DEFAULT). */
struct trace_sumacc *trace_sumacc_new(uint64_t window);
void trace_sumacc_free(struct trace_sumacc *a); /* NULL is a no-op */

/* An op on track (a model track id) of engine eng and engine_id id starts at cycle t. */
void trace_sumacc_start(struct trace_sumacc *a, uint32_t track, enum trace_engine eng, int32_t id,
                        uint64_t t);
/* That op ends at cycle e (its start s, e >= s); x[0..nx) its DRAM transfers. Every op
 * started must end before the metrics are read: one still in flight ends at now. */
void trace_sumacc_end(struct trace_sumacc *a, uint32_t track, uint64_t s, uint64_t e,
                      const struct trace_transfer *x, int nx);

/* An instant or an end the trace reaches (an event not counted as an op: a host span). */
void trace_sumacc_time(struct trace_sumacc *a, uint64_t t);

/*
 * The metrics of the run so far into out (free with trace_metrics_fini): cycles_total is
 * the latest of what was reported and m's t_max (markers, tokens, now), the tokens' part
 * comes from m's tokens. Ops still in flight are busy up to m's now; their DRAM bytes
 * count once they end. Once every op has ended, these are exactly trace_metrics_compute's.
 */
void trace_sumacc_metrics(const struct trace_sumacc *a, const struct trace_model *m,
                          struct trace_metrics *out);

/* The bandwidth samples so far, as trace_metrics_bandwidth gives them (owned array, NULL
 * when empty); returns the count. */
size_t trace_sumacc_bandwidth(const struct trace_sumacc *a, struct trace_bw_sample **out);

#endif
