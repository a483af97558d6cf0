/*
 * Comparing two traces: what changed from A to B. Both are split into regions
 * (trace/analysis/regions.h: the whole run, kernel launches, marker-delimited regions), regions
 * are matched by name and order, tracks by name, ops by track, op name and order within
 * matched regions, and every matched pair is compared per engine kind, per track and per
 * op name. The rules are those of trace/FORMAT.md, "Comparing traces". Bandwidth and the
 * config_snapshot keys that differ complete the picture. No printing here: npuscope diff
 * and the TUI's side-by-side view present it.
 */
#ifndef TRACE_DIFF_H
#define TRACE_DIFF_H

#include "sim/data/value.h"
#include "sim/util/diag.h"
#include "trace/model/model.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/regions.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether a compared thing is in both traces or in one. */
enum trace_diff_status {
    TRACE_DIFF_MATCHED, /* in both */
    TRACE_DIFF_REMOVED, /* only in A */
    TRACE_DIFF_ADDED,   /* only in B */
};

/* An engine kind, a track or an op name, on both sides (zero where it is missing). */
struct trace_diff_item {
    const char *name; /* borrowed from a model or a region set ("DMA", a component id, an op
                         name): raw text from the trace, escape it */
    enum trace_diff_status status;
    struct trace_usage a, b;
};

/* A region of A and its match in B. */
struct trace_diff_region {
    const char *name;    /* borrowed from a region set; raw text, escape it */
    uint32_t occurrence; /* the name's k-th region on each side (from 0) */
    enum trace_diff_status status;
    const struct trace_region *a, *b; /* borrowed; NULL on the side it is missing from */
    struct trace_diff_item engines[TRACE_ENGINE_COUNT]; /* by enum trace_engine */
    struct trace_diff_item *tracks; /* owned: by absolute change of busy cycles, largest
                                       first, then by name */
    size_t ntracks;
    struct trace_diff_item *ops; /* owned: by absolute change of total duration */
    size_t nops;
    uint64_t ops_removed, ops_added; /* ops of A without a match in B, and of B in A */
};

/* A config_snapshot key whose value differs. */
struct trace_diff_config {
    char *key;                     /* owned: "pe.dma.gbps", "memory.hbm[0]" */
    const struct sim_value *a, *b; /* borrowed from the models; NULL when missing */
};

/* DRAM bandwidth of one side (trace/analysis/metrics.h: trace_metrics_bandwidth). */
struct trace_diff_bw {
    uint64_t window;      /* window_cycles of the samples */
    uint64_t read, write; /* bytes */
    double mean;          /* (read + write) / cycles of the run, bytes per cycle */
    double peak;          /* busiest window's (read + write) / window_cycles */
};

/* What trace_diff_new is asked for. */
struct trace_diff_opts {
    uint64_t bw_window; /* bandwidth window in cycles (0: TRACE_BW_WINDOW_DEFAULT) */
    bool no_pairs;      /* for a report: do not keep who matched whom (trace_diff_match_event
                           then answers TRACE_DIFF_NONE), count each group's ops instead of
                           sorting them, account regions without each op name's busy cycles
                           (trace_regions_new_light: the comparison reads none) */
};

struct trace_diff {
    const struct trace_model *a, *b;  /* borrowed */
    uint64_t cycles_a, cycles_b;      /* length of each run (cycles_total) */
    struct trace_diff_config *config; /* owned: differing keys, in key order */
    size_t nconfig;
    bool config_truncated;              /* a config_snapshot too large to compare whole */
    struct trace_diff_region run;       /* the whole runs */
    struct trace_diff_region *launches; /* owned: A's launches in order, with their match,
                                           then the launches only in B */
    size_t nlaunches;
    struct trace_diff_region *markers; /* owned: likewise, the marker-delimited regions */
    size_t nmarkers;
    enum trace_region_kind match; /* the regions ops were matched in (and the view aligns):
                                     LAUNCH, MARKER, or RUN when none are in common */
    const char *note;             /* static text when the runs were compared whole for want
                                     of regions in common, else NULL */
    struct trace_diff_bw bw_a, bw_b;
    struct trace_energy energy_a, energy_b; /* each run's energy (known: false when unknown) */
    int main_engine;  /* enum trace_engine whose busy cycles changed most, or -1 (none did) */
    uint64_t changes; /* how many compared quantities differ: config keys, the cycles, the
                         usage of each engine kind, component and op name of the run, ops and
                         regions added or removed, region lengths, DRAM bytes; 0: the traces
                         are the same in everything compared */

    /* owned, for the functions below */
    struct trace_regions *regions[2][TRACE_REGION_KIND_COUNT]; /* [side][kind], or NULL */
    uint64_t *pair[2]; /* the matched op of each event of A in B ([0]) and of B in A
                          (NULL: no_pairs) */
    bool no_pairs;
    uint64_t (*align)[2]; /* starts (A, B) of the matched regions, by A's start */
    size_t nalign;
};

/* No match (trace_diff_match_event). */
#define TRACE_DIFF_NONE UINT64_MAX

/*
 * Load a trace to compare (trace_index_load: from its index when it has a valid one, else
 * from its JSON, writing the index). A file that is not a trace fails as there; a
 * trace with errors fails too: d holds its first error as npuscope validate words it (the
 * file, the JSON path, the problem) and *errors (may be NULL) how many it has. Warnings
 * do not matter. Returns 0 with *out set to a finished model, or a negative code.
 */
int trace_diff_load(const char *path, struct trace_model **out, uint64_t *errors, struct diag *d);
/* The same, reporting the load's progress to p (trace/file/loader.h; NULL: none); a load p
 * stops fails with SIM_ESTATE. */
struct trace_load_progress;
int trace_diff_load_progress(const char *path, struct trace_model **out, uint64_t *errors,
                             struct diag *d, const struct trace_load_progress *p);

/* Compare a with b (both finished models, borrowed: they must outlive the result). o may
 * be NULL. Free with trace_diff_free. */
struct trace_diff *trace_diff_new(const struct trace_model *a, const struct trace_model *b,
                                  const struct trace_diff_opts *o);
/* The same, reporting its progress to p (trace/model/progress.h; NULL: as trace_diff_new);
 * NULL when p was cancelled before it was done. */
struct trace_progress;
struct trace_diff *trace_diff_new_progress(const struct trace_model *a, const struct trace_model *b,
                                           const struct trace_diff_opts *o,
                                           struct trace_progress *p);
/* Free a comparison (NULL is a no-op). */
void trace_diff_free(struct trace_diff *d);

/* The op of the other trace matched with event ev of side (0: A, 1: B), or
 * TRACE_DIFF_NONE. */
uint64_t trace_diff_match_event(const struct trace_diff *d, int side, uint64_t ev);

/* The regions of side (0: A, 1: B) the ops were matched in (d->match). Borrowed. */
const struct trace_regions *trace_diff_regions(const struct trace_diff *d, int side);

/* The diff regions of the kind ops were matched in (d->launches or d->markers), or the run
 * alone; *n receives the count. */
const struct trace_diff_region *trace_diff_matched_regions(const struct trace_diff *d, size_t *n);

/*
 * Where side B's cycle for side A's cycle t is when the matched regions are aligned at
 * their starts: t shifted by the offset between the starts of the region of A that holds
 * t (the last matched one starting at or before t) and its match. Without matched
 * regions, t itself.
 */
uint64_t trace_diff_align(const struct trace_diff *d, uint64_t t);

/* Text of a config value for a report (a scalar as JSON writes it; a list or map as
 * "[...]", "{...}"); NULL as "(missing)". Raw: may hold text from the trace. Returns buf. */
char *trace_diff_value_text(const struct sim_value *v, char *buf, size_t size);

/* b - a and (b - a) / a (+/-infinity when a is 0 and b is not, 0 when both are). */
double trace_diff_change(double a, double b);
double trace_diff_rel(double a, double b);

#endif
