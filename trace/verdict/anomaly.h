/*
 * Anomalies of a trace, for post-mortem work (trace format §1, "이상 패턴 탐지"): what a
 * person scanning the Gantt would want pointed out. Four kinds:
 *
 *   - a failure the run recorded: an INVALID_TRACE marker (§11);
 *   - a slow op: it lasted far longer than the median of its op name on its engine kind
 *     (and, when their details say how much work each did, per unit of work); the slow
 *     ops of one name on one component are one entry with their count, so a pattern that
 *     repeats (the same copy of every all-reduce) is listed once, not thousands of times;
 *   - an idle gap: nothing of a kernel launch ran anywhere (the host aside) between two of
 *     its ops, so that work was left but none was under way, for long: far longer than the
 *     launch's usual gap;
 *   - a bandwidth window whose DRAM traffic exceeds the configured peak.
 *
 * The rules and their thresholds are trace/FORMAT.md's ("Anomalies"). The TUI lists them
 * in a pane and jumps to each; `npuscope summary` prints them. Works on any finished
 * model, loaded or live.
 */
#ifndef TRACE_ANOMALY_H
#define TRACE_ANOMALY_H

#include "trace/model/model.h"
#include "trace/model/progress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The marker a simulator leaves where the run met a failure (trace format §11). */
#define TRACE_INVALID_MARKER "INVALID_TRACE"

enum trace_anomaly_kind {
    TRACE_ANOMALY_INVALID,   /* an INVALID_TRACE marker */
    TRACE_ANOMALY_SLOW_OP,   /* an op far slower than its op name's median */
    TRACE_ANOMALY_IDLE_GAP,  /* a launch idle far longer than usual */
    TRACE_ANOMALY_BANDWIDTH, /* a bandwidth window above the configured peak */
    TRACE_ANOMALY_KIND_COUNT,
};

struct trace_anomaly {
    enum trace_anomaly_kind kind;
    uint64_t start, end;  /* where it lies: the op, the gap, the window; a marker's cycle
                             (start == end) */
    uint64_t event;       /* SLOW_OP: the op; IDLE_GAP: the launch's op after the gap; else
                             UINT64_MAX */
    uint32_t track;       /* SLOW_OP, IDLE_GAP: the op's track; INVALID: the marker's track
                             (UINT32_MAX when none); else UINT32_MAX */
    size_t marker;        /* INVALID: the marker's index in the model; else SIZE_MAX */
    double value;         /* SLOW_OP: the op's cycles; IDLE_GAP: the gap's cycles;
                             BANDWIDTH: the window's bytes per cycle; INVALID: 0 */
    double reference;     /* what value was compared with: the median cycles of the op name,
                             the launch's median gap, the peak bytes per cycle;
                             INVALID: 0 */
    double per_work;      /* SLOW_OP: its cycles per unit of work over the median op's, when
                             both details say how much work they did; else 0 */
    uint64_t count;       /* SLOW_OP: the ops of its name and kind; IDLE_GAP: the gaps of its
                             launch the median is over; else 0 */
    uint64_t repeats;     /* SLOW_OP: how many ops of its name on its track were slow: a
                             pattern repeated, listed once (this is the slowest of them); 1
                             for one; else 0 */
    uint64_t first, last; /* SLOW_OP: the starts of the first and the last of them */
};

/* The thresholds (trace_anomaly_opts_default gives FORMAT.md's). */
struct trace_anomaly_opts {
    double slow_factor;              /* an op is slow above slow_factor x its median (5) */
    uint64_t slow_min_ops;           /* ... among at least this many ops of its name and kind (5) */
    uint64_t slow_min_cycles;        /* ... and when it lasts at least this many cycles (16) */
    double idle_factor;              /* a gap is long above idle_factor x the median gap of its
                                        launch (10), ... */
    uint64_t idle_min_gaps;          /* ... when there are at least this many gaps (4), */
    uint64_t idle_min_cycles;        /* ... and when it lasts at least this many cycles (100) */
    uint64_t bw_window;              /* bandwidth window (0: TRACE_BW_WINDOW_DEFAULT) */
    double bw_peak;                  /* peak DRAM bytes per cycle (0: from config_snapshot) */
    size_t max_per_kind;             /* keep the most severe this many of each kind (0: all) */
    struct trace_progress *progress; /* may be NULL; when cancelled the result is incomplete */
    unsigned threads;                /* 0: npuscope's choice (a second thread for the bandwidth
                                        windows from TRACE_ANOMALY_THREAD_MIN events); 1: this
                                        thread alone; 2: a second thread at any size */
};

/* The events from which trace_anomalies_find finds the bandwidth windows on a second thread,
 * beside the slow ops and the idle gaps. */
enum { TRACE_ANOMALY_THREAD_MIN = 1 << 18 };

struct trace_anomalies {
    struct trace_anomaly *v; /* owned, in time order (start, then kind) */
    size_t n;
    size_t found[TRACE_ANOMALY_KIND_COUNT]; /* how many of each kind there were, kept or not */
    double bw_peak; /* the peak the windows were held against; 0: unknown (no check) */
};

void trace_anomaly_opts_default(struct trace_anomaly_opts *o);

/* Find the anomalies of m (finished) under o (NULL: the defaults). Free with
 * trace_anomalies_fini. */
void trace_anomalies_find(const struct trace_model *m, const struct trace_anomaly_opts *o,
                          struct trace_anomalies *out);
void trace_anomalies_fini(struct trace_anomalies *a);

/*
 * The anomalies of a growing model (a live run), kept up to date rather than found from event
 * 0: each (op group, duration)'s ops in event order, each launch's covered time as pieces
 * (the gaps before the recent ones counted and kept when long), the bandwidth windows of the
 * transfers; an update folds in the ops that ended since, in any order, and adds those in
 * flight on top. What it gives equals trace_anomalies_find's under the same options at every
 * update. An op that starts before what the gaps gave up (later than any before it by far),
 * a transfer of an op already seen, another model: the state starts over (found from scratch
 * that time).
 */
struct trace_anomaly_inc;
/* A state for the options o (NULL: the defaults; o->progress is not kept). */
struct trace_anomaly_inc *trace_anomaly_inc_new(const struct trace_anomaly_opts *o);
/* The anomalies of m as it is now into out (free with trace_anomalies_fini), reporting through
 * pg (may be NULL; when cancelled out is empty and the state keeps what it folded in). */
void trace_anomaly_inc_update(struct trace_anomaly_inc *st, const struct trace_model *m,
                              struct trace_progress *pg, struct trace_anomalies *out);
/* Free a state (NULL is a no-op). */
void trace_anomaly_inc_free(struct trace_anomaly_inc *st);

/* "invalid", "slow op", "idle gap", "bandwidth". */
const char *trace_anomaly_kind_name(enum trace_anomaly_kind k);

/*
 * One line saying what a is, e.g. "dma_read on sip0.cube0.pe0.pe_dma: 1200 cycles, 10.0x
 * the median 120 of 40 ops" or "INVALID_TRACE: kernel 'x' on sip0.cube0.pe0: ...". It holds
 * raw text from the trace (op, track and marker names, an error message): escape it before
 * it reaches a terminal. Returns buf.
 */
char *trace_anomaly_describe(const struct trace_model *m, const struct trace_anomaly *a, char *buf,
                             size_t size);

/* How many INVALID_TRACE markers m has; *first (may be NULL) receives the index of the
 * earliest (SIZE_MAX when none). */
size_t trace_invalid_markers(const struct trace_model *m, size_t *first);

/* The error an INVALID_TRACE marker's details carry ("error", a string), or NULL.
 * Borrowed from the model. Raw text from the trace. */
const char *trace_invalid_error(const struct trace_model *m, size_t marker);

/* Peak DRAM bytes per cycle from m's config_snapshot: memory.dram_peak_bw_bytes_per_cycle
 * (the specification's key), else npuscope's memory.hbm.gbps x the cubes of the chip /
 * clock_ghz. 0 when neither is there. */
double trace_dram_peak(const struct trace_model *m);

#endif
