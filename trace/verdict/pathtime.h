/*
 * The time of a critical path (trace/verdict/critpath.h) split by what bounded it, for the
 * verdict (trace/verdict/verdict.h, whose FORMAT.md rules it follows): each step's op by its
 * engine (a DMA op's bytes at the rate its channel and HBM allow, the rest its fixed cost or
 * contention), each wait by the HBMs and links busy during it (trace/analysis/resources.h).
 * The waits of a long path may be worked out in parts on two threads, the parts added in
 * the steps' order: the sums are the same doubles.
 */
#ifndef TRACE_PATHTIME_H
#define TRACE_PATHTIME_H

#include "sim/data/value.h"
#include "trace/analysis/resources.h"
#include "trace/model/model.h"
#include "trace/verdict/critpath.h"

#include <stddef.h>
#include <stdint.h>

/* The peaks and fixed costs of config_snapshot, in cycles. */
struct trace_peaks {
    double ghz;
    double dma_setup, dma_rate; /* cycles; bytes per cycle of one channel */
    double hbm_rate;            /* bytes per cycle of one HBM */
    double gemm_setup, math_setup;
    double lanes;
    double host_rate;             /* bytes per cycle of a host link */
    const struct sim_value *macs; /* pe.gemm.macs_per_cycle */
};

/* What the split reads (borrowed) and the cursors it keeps. */
struct trace_pathtime {
    const struct trace_model *m;
    const struct trace_event *ev; /* the model's events, in one array */
    const uint8_t *engine_of;     /* per track, its engine kind */
    const struct trace_resources *res;
    struct trace_peaks pk;
    size_t *hbm_of_track; /* per track, its cube's HBM resource (SIZE_MAX: none), SIZE_MAX - 1
                             until looked up */
    size_t *hint_dma;     /* per resource: where the last search for a DMA step ended */
    /* the path's ops (each step's at its op) when set (trace_critpath_input.spans): their
     * start, end and track read there, not from ev */
    const struct trace_op_span *spans;
};

/* What the op of a step adds to the path's categories (enum trace_pcat): v[0] to cat[0],
 * then v[1] to cat[1]. */
struct trace_pathtime_part {
    uint8_t cat[2];
    double v[2];
};

/*
 * The busiest HBM or link (mh[s][0]) and host link (mh[s][1]) during the wait of each step s
 * of path p from s0 to s1 that waited ([its start - wait, its start)), 0 when none; hint
 * (per resource) where each resource's last search ended. The busiest of a window is the
 * same whatever steps are asked with it: two threads may ask for two parts of a path at
 * once (t only read), each with its own hints.
 */
void trace_pathtime_waits(const struct trace_pathtime *t, const struct trace_critpath *p, size_t s0,
                          size_t s1, size_t *hint, double (*mh)[2]);

/* Add the wait before step s to path's categories: the time its busiest resource (mh, its
 * trace_pathtime_waits's) was busy during it is memory's or the host's, the rest latency. */
void trace_pathtime_wait(const struct trace_path_step *s, const double *mh, double *path);

/* The split of the op of step s (bytes: a DMA op's, 0 when unknown or another engine's)
 * into the path's categories, into *o. */
void trace_pathtime_op(struct trace_pathtime *t, const struct trace_path_step *s, uint64_t bytes,
                       struct trace_pathtime_part *o);

/* Add o to path's categories. */
void trace_pathtime_add(const struct trace_pathtime_part *o, double *path);

#endif
