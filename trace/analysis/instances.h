/*
 * The instances of each layer of a trace: a layer's ops within one token's span (a decode
 * step passes every layer once, so each layer has an instance per token). A layer's span
 * from its first op to its last covers the whole run when every token passes it; the sum
 * of its instances' spans, and the slowest instance, say what the layer costs. Works on
 * the layer split of trace/analysis/regions.h; a trace without TOKEN_EVENTs (or with more
 * than 4 M layer x token pairs) has one instance per layer, its whole span.
 */
#ifndef TRACE_INSTANCES_H
#define TRACE_INSTANCES_H

#include "trace/analysis/regions.h"

#include <stddef.h>
#include <stdint.h>

/* One instance: the layer's ops whose start lies in token `token`'s span. */
struct trace_layer_inst {
    uint64_t start, end; /* its first op's start, its last op's end */
    uint32_t token;      /* index into the model's tokens (0 without tokens) */
};

/* The instances of one layer, in token order. */
struct trace_layer_insts {
    struct trace_layer_inst *v; /* owned */
    size_t n;
    uint64_t sum;   /* the sum of their spans */
    size_t slowest; /* index in v of the longest (the first of equals); 0 when n is 0 */
};

/* The instances of every layer of a layer split. */
struct trace_instances {
    struct trace_layer_insts *layers; /* owned: per region of the split, in its order */
    size_t nlayers;
    bool per_token; /* instances are per token (else one per layer: its whole span) */
};

/* Find the instances of each layer of rs (a TRACE_REGION_LAYER split; its model borrowed).
 * Free with trace_instances_fini. */
void trace_instances_compute(const struct trace_regions *rs, struct trace_instances *out);
void trace_instances_fini(struct trace_instances *in);

/*
 * The instances of a growing model's layers (a live run), kept up to date: each (layer,
 * token) pair's span over the ops placed for good, an op placed once it has ended and its token
 * can no longer change (it starts before the end of the latest token known; tokens are
 * appended in time order), the others placed afresh at each update. A token that starts
 * before that end, or another model, starts the state over.
 */
struct trace_instances_inc;
struct trace_instances_inc *trace_instances_inc_new(void);
/* The instances of rs (a TRACE_REGION_LAYER split of the model as it is now) into out, equal
 * to trace_instances_compute's. */
void trace_instances_inc_update(struct trace_instances_inc *st, const struct trace_regions *rs,
                                struct trace_instances *out);
/* Free a state (NULL is a no-op). */
void trace_instances_inc_free(struct trace_instances_inc *st);

#endif
