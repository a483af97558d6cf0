/*
 * Two traces compared line by line of their kernels' sources: the line profile of each
 * (trace/analysis/srcprof.h) matched by kernel name, file and line, so that npuscope diff
 * can say which kernel lines got slower. Only for traces that both have call sites.
 */
#ifndef TRACE_SRCDIFF_H
#define TRACE_SRCDIFF_H

#include "trace/model/model.h"

#include <stddef.h>
#include <stdint.h>

/* One kernel line, on both sides (zero on the side it is missing from). */
struct trace_srcdiff_line {
    char *kernel;  /* owned: raw text from the trace, escape it */
    char *file;    /* owned: the basename, or a malformed details.src as given (line 0), or
                      "" for ops without a call site */
    uint32_t line; /* 0: malformed, or no call site */
    uint64_t ops_a, ops_b;
    uint64_t cycles_a, cycles_b; /* the line's ops' total duration */
};

struct trace_srcdiff {
    struct trace_srcdiff_line *v; /* owned: by absolute change of cycles, largest first, then
                                     by kernel, file and line */
    size_t n;
};

/* The per-line comparison of a and b; NULL when either has no call sites. */
struct trace_srcdiff *trace_srcdiff_new(const struct trace_model *a, const struct trace_model *b);
void trace_srcdiff_free(struct trace_srcdiff *d);

#endif
