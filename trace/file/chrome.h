/*
 * Export of a trace model to the Chrome Trace Event Format (chrome://tracing, Perfetto,
 * speedscope): {"traceEvents": [...], "displayTimeUnit": "ns"}. Layout (trace/FORMAT.md,
 * "Chrome export"): a process per sip (pid N+1 for sipN; tracks not under a sip share one
 * more process), a thread per track (and one more per op running alongside another: no
 * two slices of a thread overlap), each ENGINE_EVENT a complete event ("X") with its
 * op as name, op_kind as category and the ids and details as args; markers as instants
 * ("i"); DRAM bandwidth as a counter ("C"), and each HBM's and link's in a process of
 * their own; dependency_ids and each launch's critical path as arrows (flow events "s" and
 * "f"); tokens as slices in a process of their own.
 * Times are microseconds: cycles / (clock_ghz x 1000), 1 cycle = 1 ns when the clock is
 * unknown. The file is written atomically (trace/file/jsonout.h).
 */
#ifndef TRACE_CHROME_H
#define TRACE_CHROME_H

#include "sim/util/diag.h"
#include "trace/model/model.h"

#include <stdint.h>

/* Write m (finished) to path. bw_window: cycles per bandwidth sample, 0 for the default.
 * Returns 0 or a negative code with d filled. */
int trace_chrome_write(const struct trace_model *m, const char *path, uint64_t bw_window,
                       struct diag *d);

/* trace_chrome_write for a model loaded from the trace file at trace_path (NULL: none):
 * the events' details are read again from that file in order, in bounded memory
 * (trace/file/detsrc.h); the output is the same. */
int trace_chrome_export(const struct trace_model *m, const char *trace_path, const char *path,
                        uint64_t bw_window, struct diag *d);

struct trace_verdict;

/* trace_chrome_export on threads threads: 1 for the calling thread alone, 2 with a second
 * thread formatting events beside it, 0 as it chooses (two from 131,072 events on). The file
 * is the same. judged (NULL: none): m's verdict (kept beside its index by an earlier view or
 * summary), whose launches' critical paths are drawn as they are rather than computed again
 * (the same paths: trace/verdict/verdict.h); a launch it has no path for is computed. */
int trace_chrome_export_with(const struct trace_model *m, const char *trace_path, const char *path,
                             uint64_t bw_window, unsigned threads,
                             const struct trace_verdict *judged, struct diag *d);

#endif
