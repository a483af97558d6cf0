/*
 * Per-token figures of an LLM trace (trace format §6.3 TOKEN_EVENT, §7 "token별 bandwidth
 * profile"): for every token its phase, latency, and the DRAM bytes read and written within
 * its span, KV-cache bytes among them; over the decode tokens, their latency statistics.
 * The TUI's token pane and `npuscope summary` show them. Definitions: trace/FORMAT.md,
 * "Tokens". Works on any finished model, loaded or live (in-flight transfers count up to
 * "now").
 */
#ifndef TRACE_TOKENS_H
#define TRACE_TOKENS_H

#include "trace/analysis/metrics.h"
#include "trace/model/model.h"
#include "trace/model/progress.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One token. */
struct trace_token_row {
    size_t token;         /* index of its TOKEN_EVENT in the model */
    bool decode;          /* DECODE, else PREFILL */
    int64_t index;        /* token_index */
    uint64_t start, end;  /* its span [start, end) */
    uint64_t latency;     /* end - start */
    uint64_t read_bytes;  /* DRAM -> chip bytes within the span */
    uint64_t write_bytes; /* chip -> DRAM bytes within the span */
    uint64_t kv_read;     /* of those, KV-cache traffic (details.tensor_role "kv") */
    uint64_t kv_write;
};

struct trace_token_profile {
    struct trace_token_row *rows; /* owned: every token, PREFILL ones first, each phase in
                                     order of token_index (then start) */
    size_t n;
    size_t nprefill, ndecode;      /* rows [0, nprefill) are PREFILL, the rest DECODE */
    enum trace_dram_source source; /* where the bytes come from (as trace/analysis/metrics.h) */
    bool has_kv;                   /* some transfer is KV-cache traffic */
    uint64_t prefill_latency;      /* last PREFILL end - first PREFILL start (0: none) */
    /* DECODE latencies (all 0 without decode tokens); the median of an even count is the
     * lower of the two middle ones */
    uint64_t decode_min, decode_max, decode_median;
    double decode_mean;
};

/*
 * The profile of m (finished). A token's bytes are the DRAM traffic that lies within its
 * span: a transfer over [s, e) contributes its bytes in proportion to the part of [s, e)
 * inside the token (all of them when it lies inside; a transfer of length 0 or a
 * MEM_ACCESS_EVENT at cycle c all of them when the token holds c), rounded to whole bytes. The
 * traffic comes from the source trace_metrics_dram_source names (the DMA transfers, the
 * DRAM MEM_ACCESS_EVENTs, or the file's bandwidth_samples, each sample spread over its
 * window). Free with trace_token_profile_fini.
 */
void trace_token_profile_compute(const struct trace_model *m, struct trace_token_profile *out);
/* The same, reporting its progress through pg (may be NULL); when pg is cancelled the
 * profile is incomplete (free it). */
void trace_token_profile_compute_progress(const struct trace_model *m, struct trace_progress *pg,
                                          struct trace_token_profile *p);
void trace_token_profile_fini(struct trace_token_profile *p);

/*
 * The profile of a growing model (a live run), kept up to date rather than computed from
 * event 0: the sweep over the transfers' breakpoints goes on from where the last update left
 * it. A transfer is folded in once its op has ended and every transfer before it has been;
 * the sweep goes as far as no breakpoint can still appear before (the start of the oldest
 * transfer not folded in, of the latest op, and the end of the latest token), answering the
 * token ends and starts it passes; the rest is swept afresh at each update, on a copy. The
 * profile an update gives equals trace_token_profile_compute_progress's. A model whose
 * transfers do not come in start order, a token that starts where the sweep has passed,
 * another model or DRAM traffic from another source than transfers: computed from scratch.
 */
struct trace_token_inc;
struct trace_token_inc *trace_token_inc_new(void);
/* The profile of m as it is now into p (free with trace_token_profile_fini), reporting through
 * pg (may be NULL; when cancelled the profile is incomplete, the state stays valid). */
void trace_token_inc_update(struct trace_token_inc *st, const struct trace_model *m,
                            struct trace_progress *pg, struct trace_token_profile *p);
/* Free a state (NULL is a no-op). */
void trace_token_inc_free(struct trace_token_inc *st);

#endif
