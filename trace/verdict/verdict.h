/*
 * Where the time goes: a bottleneck verdict per kernel launch and for the whole run, built
 * on the per-region accounting of trace/analysis/regions.h (busy cycles per engine kind, DRAM
 * bytes), the critical path of each launch (trace/verdict/critpath.h), the arithmetic of its ops
 * (trace/analysis/opinfo.h), the bandwidth of each HBM and link (trace/analysis/resources.h) and
 * the peaks of config_snapshot. The rules are trace/FORMAT.md's ("Bottleneck verdict"):
 *
 *   the critical path's time is split into what bounded each op: a TE op's compute time,
 *   a VE op's vector time, a DMA op's transfer time at the rate its channel and HBM allow
 *   (the rest contention when its HBM was busy, else the DMA's per-transfer cost, with its
 *   setup), the host link's bytes at its bandwidth; every other fixed cost (an engine's
 *   setup, a link's latency), the control work of the CPUs and every wait between ops is
 *   dependency latency. The category with the most time is the bound; memory becomes
 *   "NoC link L" when a link was busier than 90% and than every HBM.
 *
 * That is a heuristic. npuscope can re-run a trace's workload with one resource changed
 * at a time (npuscope whatif, tui/sweep/whatif.h): trace_verdict_check then puts the
 * experiment's answer in its place, and the evidence says which of the two a verdict is.
 *
 * With the evidence: busy shares, FLOP/s and HBM bytes/s against the peaks (the roofline
 * point), resource utilizations, the waits on the path by reason, and what the trace
 * lacked (a trace from another producer).
 */
#ifndef TRACE_VERDICT_H
#define TRACE_VERDICT_H

#include "sim/data/value.h"
#include "trace/verdict/critpath.h"
#include "trace/analysis/energy.h"
#include "trace/model/model.h"
#include "trace/analysis/regions.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What bounded a launch. */
enum trace_bound {
    TRACE_BOUND_NONE,      /* nothing ran */
    TRACE_BOUND_COMPUTE,   /* "compute (TE)" */
    TRACE_BOUND_VECTOR,    /* "vector (VE)" */
    TRACE_BOUND_MEMORY,    /* "DMA / HBM bandwidth" */
    TRACE_BOUND_LINK,      /* "NoC link L" */
    TRACE_BOUND_HOST,      /* "host transfer" */
    TRACE_BOUND_LATENCY,   /* "dependency latency" */
    TRACE_BOUND_DMA_FIXED, /* "DMA per-transfer cost": many small transfers, each paying
                              the DMA's setup and its memory's and links' latency */
    TRACE_BOUND_COUNT,
};

/* Where the critical path's time went. */
enum trace_pcat {
    TRACE_PCAT_COMPUTE,
    TRACE_PCAT_VECTOR,
    TRACE_PCAT_MEMORY,
    TRACE_PCAT_HOST,
    TRACE_PCAT_LATENCY,
    TRACE_PCAT_DMA_FIXED, /* a DMA op's time beyond its bytes at full rate, its HBM idle */
    TRACE_PCAT_COUNT,
};

/* Evidence the trace did not have. */
enum {
    TRACE_MISSING_PEAKS = 1 << 0,     /* config_snapshot without the clock or the peaks */
    TRACE_MISSING_DEPS = 1 << 1,      /* no dependency_ids, addresses or tiles: the path
                                         follows engine and launch order only */
    TRACE_MISSING_RESOURCES = 1 << 2, /* no per-resource bandwidth samples */
    TRACE_MISSING_LAUNCHES = 1 << 3,  /* no cmdq_ids: the run only */
    TRACE_MISSING_DETAILS = 1 << 4,   /* too many ops without op columns to read every
                                         op's details */
    TRACE_MISSING_FLOPS = 1 << 5,     /* no GEMM or math op with sizes in its details */
};

struct trace_verdict_item {
    const struct trace_region *region; /* borrowed from the verdict */
    bool running;                      /* live: an op of it in flight, or its Completion not
                                          back yet */
    enum trace_bound bound;
    uint32_t link;                         /* LINK: the link's interned name */
    double share;                          /* the bound's share of the path's time, 0 to 1 */
    uint64_t length;                       /* cycles */
    double busy[TRACE_ENGINE_COUNT];       /* busy cycles / length per engine kind */
    double time[TRACE_PCAT_COUNT];         /* cycles of the critical path per category */
    double flops;                          /* GEMM and math arithmetic */
    double peak_flops;                     /* per cycle, the engines it used; 0: unknown */
    uint64_t dram_bytes;                   /* DRAM read + written (the HBM samples' when the
                                              ops record none) */
    double peak_bw;                        /* bytes per cycle of the HBMs it used; 0: unknown */
    double hbm_util, link_util, host_util; /* busiest over its span, -1: unknown */
    uint32_t hbm, busiest_link, host_link; /* their names (TRACE_NO_STR: none) */
    uint64_t waits;                        /* cycles waited on the path */
    uint64_t wait_by[TRACE_DEP_COUNT];     /* by reason */
    uint64_t longest_wait_ev;              /* the op after the longest wait, or UINT64_MAX */
    uint64_t longest_wait;
    struct trace_critpath path; /* empty for the run of a trace with launches */
    unsigned missing;           /* TRACE_MISSING_* */
    uint64_t dma_ops;           /* DMA transfers (ops on DMA engines with their bytes known) */
    uint64_t dma_bytes;         /* and their bytes */
    /* the experiment (trace_verdict_check) */
    enum trace_bound heuristic; /* the bound the path's split gave */
    bool checked;               /* an experiment re-ran it; bound is then the experiment's */
    const char *resource;       /* checked: the resource whose speed-up shortened it most
                                   ("HBM bandwidth", borrowed from the check), NULL when none
                                   did by 1% */
    double factor, change;      /* that speed-up ("x2") and the change of the time (-0.41) */
};

struct trace_verdict {
    const struct trace_model *m; /* borrowed */
    struct trace_verdict_item run;
    struct trace_verdict_item *launches; /* owned, in launch order */
    size_t nlaunches;
    struct trace_region run_region;  /* the run's span and usage (its ops and busy cycles in all
                                        and per engine kind, its DRAM bytes in all; no tracks or
                                        op names), as trace_regions_new_light accounts it */
    struct trace_regions *rs_launch; /* owned: the launches (usage in all and per engine kind;
                                        tracks and op names may be left out) */
    double clock_ghz;                /* 0 when unknown */
    bool own;                        /* written by npuscope (run_metadata.notes):
                                        what ran can be run again */
    struct trace_energy energy;      /* the run's (trace/analysis/energy.h); known false: unknown */
};

/* What an experiment found for one launch: the resource whose speed-up shortened it most. */
struct trace_verdict_check {
    int32_t cmdq_id;        /* the launch; TRACE_NO_CMDQ: the run */
    enum trace_bound bound; /* the bound that resource is part of */
    const char *resource;   /* borrowed (must outlive the verdict): "HBM bandwidth"; NULL: no
                               resource's speed-up changed the time by 1% or more */
    double factor;          /* its speed-up: 2 doubles a bandwidth, halves a latency */
    double change;          /* relative change of the launch's time (-0.41: 41% shorter) */
};

/*
 * Check the verdict v against an experiment's findings c[0..n): each launch (and the run)
 * with a finding is marked checked; when its resource belongs to another bound than the
 * heuristic's, the experiment's bound replaces it (heuristic keeps the old one). A finding
 * without a resource leaves the bound as it is, checked.
 */
void trace_verdict_check(struct trace_verdict *v, const struct trace_verdict_check *c, size_t n);

/* What a verdict rests on, for a line of evidence: "checked by experiment: HBM bandwidth x2
 * shortens it 41%", "heuristic (npuscope whatif checks it by experiment)", "heuristic: the
 * trace's producer is not npuscope, it cannot be run again"... Returns buf. */
char *trace_verdict_basis_text(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size);

/*
 * The verdicts of a growing model (a live run), each from what the last left: the launches
 * split by an incremental region state (trace/analysis/regions_inc.h, light), the run's usage
 * kept up to date (trace/verdict/runusage.h), and the items of
 * the launches that had ended (every op, and the Completion of a host message back) kept and
 * judged again only when something they rest on changed: the launch's ops, span or usage, the
 * resources or their peaks, a bandwidth sample over its span, the decode budget left to it. The
 * launches still running, the new ones and the run are judged each time; of those, the one
 * with the most ops (a live decode's, running as long as the run) is taken on from its ops
 * added since: its events, their arithmetic and its critical path (trace/verdict/critinc.h)
 * are kept from verdict to verdict. A verdict made with the state equals the one
 * trace_verdict_new makes without it.
 */
struct trace_verdict_inc;

/* A state for the verdicts of one growing model (the first verdict's). */
struct trace_verdict_inc *trace_verdict_inc_new(void);
/* Free a state (NULL is a no-op); the verdicts made with it stay valid. */
void trace_verdict_inc_free(struct trace_verdict_inc *st);
/* How many launch items the last complete verdict made with st took from those kept (for
 * tests and benchmarks). */
size_t trace_verdict_inc_reused(const struct trace_verdict_inc *st);
/* How many times the path of the launch still running was computed from its first op (the
 * first time, or its incremental state started over: trace/verdict/critinc.h), for tests
 * and benchmarks. */
size_t trace_verdict_inc_path_starts(const struct trace_verdict_inc *st);
/* The time of that launch's path is added up step by step; st keeps the sums after every
 * this many steps (0: its default, a few thousand), and the next verdict takes them on from
 * the last its path and the bandwidth samples still agree with (for tests: the verdict is
 * the same whatever the number). */
void trace_verdict_inc_set_path_every(struct trace_verdict_inc *st, size_t steps);
/* Hand the room of v's longest path to st for its next verdict's (v is being freed: its
 * path is left empty; st must not be in use by a verdict under way): the path of a launch
 * that runs as long as the run is copied out once a verdict, into pages already there. */
void trace_verdict_inc_recycle(struct trace_verdict_inc *st, struct trace_verdict *v);
/* How many of its path's steps the last verdict took from those sums, not worked out again
 * (for tests and benchmarks). */
size_t trace_verdict_inc_path_reused(const struct trace_verdict_inc *st);

/* About how many bytes st holds for the launch it takes on from its new ops. */
size_t trace_verdict_inc_bytes(const struct trace_verdict_inc *st);
/* Drop what st holds for that launch (it is judged from its first op next time); the kept
 * items stay. */
void trace_verdict_inc_trim(struct trace_verdict_inc *st);
struct trace_verdict_opts {
    size_t max_decode; /* ops without op columns (trace/model/model.h) whose details may be
                          read in all (0: 2,000,000) */
    struct trace_progress *progress; /* may be NULL; when cancelled the verdict returned is
                                        incomplete: free it (the state keeps what it had) */
    struct trace_verdict_inc *inc;   /* may be NULL; live: the state of the verdicts of the
                                        same model (one verdict at a time), which this one
                                        starts from and updates */
    /* 0: the utilisations of the resources during the waits of a long path are worked out
     * on a second thread while this one splits its ops' time (both read the model alone;
     * the verdict the same); 1: on the calling thread alone; 2: on a second thread whatever
     * the path's length */
    unsigned threads;
    /* keep the spans of each path's steps (trace_critpath.spans), for a timeline that draws
     * the paths */
    bool step_spans;
};

/* The verdict of m (finished; borrowed, must outlive it). o may be NULL. */
struct trace_verdict *trace_verdict_new(const struct trace_model *m,
                                        const struct trace_verdict_opts *o);
/* Free a verdict (NULL is a no-op). */
void trace_verdict_free(struct trace_verdict *v);
/* The start of trace_verdict_new for a loaded m: its launches split (rs_launch) and the
 * run's usage (run_region), nothing judged (nlaunches 0), for a verdict whose items come
 * from elsewhere (trace/cache/vcache.h); NULL when pg (may be NULL) was cancelled. */
struct trace_verdict *trace_verdict_split(const struct trace_model *m, struct trace_progress *pg);

/* "compute (TE)", "vector (VE)", "DMA / HBM bandwidth", "NoC link", "host transfer",
 * "dependency latency", "DMA per-transfer cost", "nothing ran". */
const char *trace_bound_name(enum trace_bound b);
/* The short key of a bound for JSON: "compute", "vector", "memory", "link", "host",
 * "latency", "dma_fixed", "none". */
const char *trace_bound_key(enum trace_bound b);

/* The bound as shown: its name, with the link's for LINK (escaped); checked by an
 * experiment, a memory or link bound names the resource ("HBM bandwidth"). Returns buf. */
char *trace_verdict_bound_text(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size);

/*
 * The evidence of it as lines of text for a terminal (names from the trace escaped):
 * time, path split, busy shares, roofline, resources, waits, missing evidence. Fills up to
 * max lines of lines[][width]; returns how many.
 */
enum { TRACE_VERDICT_LINE = 200 };
size_t trace_verdict_evidence(const struct trace_verdict *v, const struct trace_verdict_item *it,
                              char (*lines)[TRACE_VERDICT_LINE], size_t max);

/* The verdict as a value (npuscope summary --json's "bottleneck"): the run and each launch
 * with bound, share and evidence. Caller frees. */
struct sim_value *trace_verdict_to_value(const struct trace_verdict *v);

#endif
