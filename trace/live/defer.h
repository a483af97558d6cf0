/*
 * What a live feed hears while its model is held still (trace/live/live.h, trace_live_defer):
 * op starts and ends, host spans and, when they cannot be counted at once, bytes on a
 * resource, each copied as it comes (the op log's records and the chip's spans are lent for
 * the call only), to be handed back in the same order once the model may change again. The
 * copies go into blocks of a megabyte, appended to and emptied as a whole: no allocation per
 * entry, and the memory they hold is counted.
 *
 * Only what the feed needs of an entry is kept: an op record's interned names (the op log's,
 * valid as long as it is), its times, note, packed params, dependencies and what it moves
 * (those strings copied); never its params map or replay annotations (an op replayed has
 * them packed, as every record an observer hears of does).
 */
#ifndef TRACE_DEFER_H
#define TRACE_DEFER_H

#include "sim/chip/oplog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_defer;

/* A host span as the feed keeps it: what it takes from the chip's span while it is lent
 * (its op name and packed details; trace/analysis/hostspan.h). */
struct trace_defer_span {
    int kind; /* enum sim_span_kind */
    int node;
    int64_t cmdq_id;
    double t_start_ns, t_end_ns;
    const char *op; /* NUL-terminated */
    const uint8_t *packed;
    size_t packed_len;
};

/* Where the entries go back to, in the order they came: at (the run's time when the next
 * was heard), then op (end false: its start; true: its end), span or traffic (nbytes on
 * resource res over cycles [c0, c1)). */
struct trace_defer_sink {
    void (*at)(void *ctx, double at_ns);
    void (*op)(void *ctx, bool end, const struct sim_op_record *rec);
    void (*span)(void *ctx, const struct trace_defer_span *s);
    void (*traffic)(void *ctx, uint32_t res, bool write, uint64_t nbytes, uint64_t c0, uint64_t c1);
    void *ctx;
};

struct trace_defer *trace_defer_new(void);
void trace_defer_free(struct trace_defer *q); /* NULL is a no-op */

/* The entries held, and the bytes of memory they take (their blocks). */
size_t trace_defer_count(const struct trace_defer *q);
size_t trace_defer_bytes(const struct trace_defer *q);

/* Keep a copy of an op record's start (end false) or end, of a span, of a report of bytes,
 * heard at the run's time at_ns. */
void trace_defer_op(struct trace_defer *q, double at_ns, bool end, const struct sim_op_record *rec);
void trace_defer_span(struct trace_defer *q, double at_ns, const struct trace_defer_span *s);
void trace_defer_traffic(struct trace_defer *q, double at_ns, uint32_t res, bool write,
                         uint64_t nbytes, uint64_t c0, uint64_t c1);

/*
 * Hand the oldest entries back to sink, in order, and forget them: at most max of them
 * (SIZE_MAX: all). Returns how many were handed back. The sink may not add to q.
 */
size_t trace_defer_replay(struct trace_defer *q, const struct trace_defer_sink *sink, size_t max);

#endif
