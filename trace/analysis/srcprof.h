/*
 * The line profile of a trace: for each kernel, what each line of its source caused. An
 * op's line is its call site (trace/model/model.h, "Call sites": the trace's details.src);
 * its kernel is the name of its launch (the kernel a marker, a token or the KernelLaunch
 * of its cmdq_id names, as the launch regions of analysis/regions.h; "cmdq N" when none
 * does). Per line: the ops it issued, their cycles per engine kind (the sum of their
 * durations: overlapping ops each count, like samples) and their share of the kernel's.
 * HOST events (host messages) belong to no line and are not counted; an op of a kernel
 * with no call site counts under the line TRACE_NO_SITE ("(no call site)").
 * What `npuscope annotate` prints and the TUI's source pane shows.
 */
#ifndef TRACE_SRCPROF_H
#define TRACE_SRCPROF_H

#include "trace/model/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One source line of one kernel. */
struct trace_srcline {
    uint16_t site;   /* the model's call site, or TRACE_NO_SITE */
    uint64_t ops;    /* ops it issued */
    uint64_t cycles; /* their total duration (in flight: up to the model's now) */
    uint64_t engine[TRACE_ENGINE_COUNT]; /* the same per engine kind of their tracks */
    double share;                        /* cycles over the kernel's cycles (0 when none) */
};

/* One kernel: its lines in (file, line) order. */
struct trace_srckernel {
    char *name;    /* owned: raw text from the trace (escape it) */
    uint32_t file; /* interned basename of the file most of its ops come from, or
                      TRACE_NO_STR (no call sites) */
    uint64_t ops, cycles;
    uint64_t engine[TRACE_ENGINE_COUNT];
    struct trace_srcline *lines; /* owned */
    size_t nlines;
};

struct trace_srcprof {
    struct trace_srckernel *k; /* owned, in order of their first op */
    size_t nk;
    uint64_t with_site; /* ops that carry a call site: 0 for a trace without call sites */
};

/* The profile of m (any finished or live model): one pass over its events. */
struct trace_srcprof *trace_srcprof_new(const struct trace_model *m);
/* The same, reporting to pg (trace/model/progress.h; NULL: as trace_srcprof_new); NULL when
 * pg was cancelled before it was done. */
struct trace_progress;
struct trace_srcprof *trace_srcprof_new_progress(const struct trace_model *m,
                                                 struct trace_progress *pg);
void trace_srcprof_free(struct trace_srcprof *p);

/* Kernel named name, or NULL. */
const struct trace_srckernel *trace_srcprof_find(const struct trace_srcprof *p, const char *name);

/* Order k's lines hottest first (cycles, then ops, descending; ties by file and line). */
void trace_srcprof_sort_hot(const struct trace_model *m, struct trace_srckernel *k);

/* The kernel (index into p->k) event i belongs to, or SIZE_MAX (a HOST event, or an event
 * the profile was not built with). */
size_t trace_srcprof_kernel_of(const struct trace_srcprof *p, const struct trace_model *m,
                               uint64_t i);

#endif
