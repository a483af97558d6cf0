/*
 * Summary metrics (trace format §8) and bandwidth samples (§7) computed from a trace
 * model, the same way for a live run and for a loaded file, so a run's summary and the
 * summary of its trace loaded back are identical. Definitions: trace/FORMAT.md,
 * "Summary metrics" and "Bandwidth samples". The model must be finished
 * (trace_model_finish) before metrics are computed.
 */
#ifndef TRACE_METRICS_H
#define TRACE_METRICS_H

#include "sim/data/value.h"
#include "trace/model/model.h"
#include "trace/model/progress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bandwidth window in cycles when none is asked for. */
#define TRACE_BW_WINDOW_DEFAULT 1024u

/* Busy time of one engine (te / ve per_engine). */
struct trace_engine_use {
    int32_t id;      /* engine_id */
    uint64_t active; /* cycles with at least one event running */
    double util;     /* active / cycles_total (0 when cycles_total is 0) */
};

/* Where DRAM traffic is counted from (FORMAT.md, "DRAM traffic"), first that applies. */
enum trace_dram_source {
    TRACE_DRAM_NONE,       /* nothing to count */
    TRACE_DRAM_TRANSFERS,  /* the DMA events' transfers (struct trace_transfer) */
    TRACE_DRAM_MEM_EVENTS, /* DRAM MEM_ACCESS_EVENTs */
    TRACE_DRAM_SAMPLES,    /* the bandwidth_samples found in the file */
};

/* The source trace_metrics_compute and trace_metrics_bandwidth use for m. */
enum trace_dram_source trace_metrics_dram_source(const struct trace_model *m);

struct trace_metrics {
    uint64_t cycles_total; /* the model's last end (trace_model_t_max) */
    uint64_t dram_read, dram_write;
    enum trace_dram_source dram_source;
    bool has_dma;        /* the model has DMA tracks */
    uint64_t dma_active; /* cycles with at least one DMA event running */
    double dma_util;     /* dma_active / cycles_total */
    uint64_t dma_max_concurrent;
    struct trace_engine_use *te, *ve; /* owned, by id */
    size_t nte, nve;
    /* the kind as a whole, as dma_active: cycles with at least one of its events running
     * (the verdict's busy share of the kind), over cycles_total */
    uint64_t te_active, ve_active;
    double te_util, ve_util;
    bool has_kv; /* some transfer is KV-cache traffic */
    uint64_t kv_read, kv_write;
    bool has_prefill;         /* PREFILL tokens exist */
    uint64_t prefill_latency; /* last PREFILL end - first PREFILL start */
    bool has_decode;
    uint64_t ndecode;
    double avg_decode_latency; /* mean end - start of DECODE tokens */
};

/* Compute every metric of m into out (free with trace_metrics_fini). */
void trace_metrics_compute(const struct trace_model *m, struct trace_metrics *out);

/* trace_metrics_compute checking p (NULL: never) as it goes through the events, where the
 * caller's run may wait (trace_progress.yielding) or stop: false when p was cancelled (out is
 * then of no use but to free). */
bool trace_metrics_compute_at(const struct trace_model *m, struct trace_metrics *out,
                              struct trace_progress *p);
void trace_metrics_fini(struct trace_metrics *x);

/* The summary_metrics block for x (blocks that do not apply are left out). Caller frees. */
struct sim_value *trace_metrics_to_value(const struct trace_metrics *x);

/* The tokens' part of x (has_prefill to avg_decode_latency) from m's tokens. */
void trace_metrics_tokens(const struct trace_model *m, struct trace_metrics *x);

/* compute + to_value in one call. */
struct sim_value *trace_metrics_summary(const struct trace_model *m);

/*
 * Bandwidth samples of m: windows of window cycles (0: TRACE_BW_WINDOW_DEFAULT) aligned
 * on multiples of it, each transfer's bytes spread over the windows it overlaps in
 * proportion to the overlap, rounded so that each transfer's shares add up exactly to
 * its bytes (a DRAM MEM_ACCESS_EVENT falls in the window of its cycle). Only windows with
 * traffic are returned, in cycle order. With only the file's samples to go by
 * (TRACE_DRAM_SAMPLES) those are returned as they are. Either way the samples add up to
 * the dram_read / dram_write of trace_metrics_compute. When the trace is
 * so long or its transfers so many that this would need more than about 2^21 windows or
 * 2^25 shares, the window is doubled until it does not (trace_metrics_widen; every
 * sample's window_cycles says which was used).
 * *out receives an owned array (NULL when empty); returns its length.
 */
size_t trace_metrics_bandwidth(const struct trace_model *m, uint64_t window,
                               struct trace_bw_sample **out);

/* trace_metrics_bandwidth checking p (NULL: never) as trace_metrics_compute_at does: none
 * (0, *out NULL) when p was cancelled. */
size_t trace_metrics_bandwidth_at(const struct trace_model *m, uint64_t window,
                                  struct trace_bw_sample **out, struct trace_progress *p);

/*
 * The window bandwidth samples use for transfers spanning cycles [lo, hi] whose lengths add
 * up to sum_len: window (0: TRACE_BW_WINDOW_DEFAULT) doubled until about 2^21 windows and
 * 2^25 shares suffice. Doubling keeps the windows aligned, so samples taken at a narrower
 * window merge in pairs into exactly the samples of a wider one (trace/live/sumacc.h).
 */
uint64_t trace_metrics_widen(uint64_t window, uint64_t lo, uint64_t hi, uint64_t sum_len);

/* b bytes over cycles [s, e) (an instant when e <= s) added to acc, whose element 0 is the
 * window first of w cycles: each window gets its share, and the shares add up to exactly
 * b (trace/FORMAT.md, "Bandwidth samples"). */
void trace_metrics_spread(uint64_t *acc, uint64_t first, uint64_t w, uint64_t s, uint64_t e,
                          uint64_t b);

/* The samples of windows [first, first + nwin) of w cycles, read and written bytes in rd
 * and wr: one per window with traffic, in window order, into *out (owned, NULL when none);
 * returns their count. */
size_t trace_metrics_samples(const uint64_t *rd, const uint64_t *wr, size_t nwin, uint64_t first,
                             uint64_t w, struct trace_bw_sample **out);

#endif
