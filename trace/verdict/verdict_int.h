/*
 * The inside of the bottleneck verdict (trace/verdict/verdict.h) that verdict.c, which judges
 * a model, shares with verdict_inc.c, which keeps what a growing model's verdict leaves for
 * the next (trace_verdict_opts.inc): the launch still running, taken on from its new ops, and
 * the items of the launches that ended. Nothing outside trace/verdict uses it.
 */
#ifndef TRACE_VERDICT_INT_H
#define TRACE_VERDICT_INT_H

#include "trace/analysis/regions.h"
#include "trace/analysis/resources.h"
#include "trace/model/model.h"
#include "trace/verdict/critinc.h"
#include "trace/verdict/verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the path's time adds up over its steps (judge): by category, the waits, by reason,
 * the longest; and (live) the latest cycle a step's op or wait reached, and whether a step's
 * op was in flight (its end, now's, moves on). */
struct path_sums {
    double time[TRACE_PCAT_COUNT];
    uint64_t waits, wait_by[TRACE_DEP_COUNT];
    uint64_t longest_wait, longest_wait_ev;
    uint64_t reach;
    bool open;
};

/* A live launch's path sums are kept after every PATH_EVERY-th step of its path. */
enum { PATH_EVERY = 4096 };

/*
 * The launch still running in a growing model (a live decode is one launch that runs
 * as long as the run), judged from what the last verdict left rather than from its first
 * op: its events so far, what scan_ops found in them, its critical path's incremental
 * state (trace/verdict/critinc.h) and the arithmetic counted so far, each taken on from
 * the new ops, in their order (the sums add in the same order: the same doubles).
 */
struct live {
    int32_t cmdq;  /* TRACE_NO_CMDQ: none */
    uint64_t *evs; /* owned: its events so far */
    size_t n, cap;
    uint64_t seen; /* the model's events looked at */
    struct trace_critinc *path;
    /* scan_ops's findings over evs[0 .. scanned) */
    size_t scanned, uncached, ncomp, ute, uve;
    uint8_t *track; /* owned: per track, as scan_ops's */
    size_t ntrack;
    bool any_arith, request, completed;
    uint64_t *inflight; /* owned: its events in flight when looked at */
    size_t ninflight, capinflight;
    /* the arithmetic of evs[0 .. next), and their DMA ops' bytes */
    size_t next;
    uint32_t *bytes; /* owned (as struct arith's) */
    size_t capbytes;
    double flops, te_flops[5];
    uint64_t dma_ops, dma_bytes;
    size_t starts; /* the paths computed from the first op by the states freed */
    /* the sums of the last path's time after each every-th step of it, before step 0 included
     * (sums[j]: over steps [0, j * every)), and what they were worked out with: the next path's
     * are taken on from the last of them before its steps differ, or the samples did */
    struct path_sums *sums;
    size_t nsums, capsums, every;
    bool sums_details;  /* whether its DMA steps' bytes were read */
    size_t sums_nres;   /* the resources then */
    size_t sums_reused; /* the steps the last verdict took from them */
};

/* A launch's item kept from an earlier verdict: the launch had ended (every op, and its
 * Completion back), and its usage, span and op count say it has not changed since. */
struct kept {
    int32_t cmdq;
    struct trace_usage all, engine[TRACE_ENGINE_COUNT]; /* the launch's, as judged */
    uint64_t start, end;
    size_t uncached;              /* its ops without op columns */
    bool details;                 /* whether their details were read (within the budget) */
    struct trace_verdict_item it; /* owned path; region unset */
};

/* A resource as the kept items were judged against it. */
struct res_key {
    uint32_t name;
    enum trace_res_kind kind;
    double peak, max_rate;
};

struct trace_verdict_inc {
    const struct trace_model *m;     /* the model of the last verdict */
    struct trace_regions_inc *split; /* owned: the launches */
    struct trace_run_usage_inc *run; /* owned: the run's usage */
    struct kept *kept;               /* owned, by cmdq_id */
    size_t nkept;
    struct res_key *res; /* owned: the resources then */
    size_t nres;
    uint64_t nsamples, revs; /* the model's bandwidth samples then, and their changes */
    uint64_t from;           /* every event before it belongs to a kept launch, or to none */
    uint64_t nev;            /* the model's events then */
    struct trace_event last; /* its last event then (the model changed when it differs) */
    size_t reused;           /* items the last verdict took from those kept */
    struct live live;        /* the launch still running with the most ops */
    size_t path_every;       /* its path's sums kept after every this many steps (0: PATH_EVERY) */
};

/* Free lv's path state, counting its starts. */
void trace_verdict_live_path_free_(struct live *lv);
/* Free what lv holds: no launch taken on. */
void trace_verdict_live_reset_(struct live *lv);
/* Drop st's kept items. */
void trace_verdict_kept_clear_(struct trace_verdict_inc *st);
/* Whether m is the model of the last verdict grown: no fewer events, its last event then
 * unchanged. */
bool trace_verdict_same_model_(const struct trace_verdict_inc *st, const struct trace_model *m);
/* Whether the resources are those the kept items were judged against. */
bool trace_verdict_same_resources_(const struct trace_verdict_inc *st,
                                   const struct trace_resources *rs);
/* The first cycle a bandwidth sample added or changed since the last verdict covers
 * (UINT64_MAX: none). */
uint64_t trace_verdict_samples_changed_from_(const struct trace_verdict_inc *st,
                                             const struct trace_model *m);
/* The kept item of launch r if it is still what judging r would give (but for the budget,
 * which the caller checks), else NULL; low: trace_verdict_samples_changed_from_'s. */
const struct kept *trace_verdict_kept_for_(const struct trace_verdict_inc *st,
                                           const struct trace_region *r, uint64_t low);
/* After a complete verdict v: keep the items of the launches that have ended for the next
 * (see verdict_inc.c). */
void trace_verdict_inc_keep_(struct trace_verdict_inc *st, const struct trace_verdict *v,
                             const struct trace_resources *rs, const size_t *uncached,
                             const bool *details, const uint64_t *first,
                             const struct kept *const *used, size_t lr);

#endif
