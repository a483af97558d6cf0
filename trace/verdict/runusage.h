/*
 * The run's usage as the bottleneck verdict reads it (trace/verdict/verdict.h): the region of
 * the whole run as trace_regions_new_light(m, TRACE_REGION_RUN) accounts it, as far as the
 * verdict needs it (its span; its ops, op cycles and busy cycles, in all and per engine kind;
 * its DRAM bytes in all; no tracks, no op names, no bytes per engine kind), from scratch or,
 * for a growing model (a live run), kept up to date from what the last update folded in.
 */
#ifndef TRACE_RUNUSAGE_H
#define TRACE_RUNUSAGE_H

#include "trace/analysis/regions.h"

/* The run of m (finished) into r (its name static, nothing owned). */
void trace_run_usage(const struct trace_model *m, struct trace_region *r);

/*
 * A growing model's run usage. An update folds in the events that have ended in event order
 * up to the first still in flight (their spans united per engine kind, the union kept back
 * to a horizon no event still to come is expected to start before: the oldest start not
 * folded in, and the latest start less twice the most an event has come late), and adds
 * those not folded in on top without keeping them. An event that starts before the horizon,
 * a model that changed under it or another model, make it account the run from scratch
 * that time and start over. The region an update gives equals trace_run_usage's.
 */
struct trace_run_usage_inc;

struct trace_run_usage_inc *trace_run_usage_inc_new(void);
/* The run of m into r, as trace_run_usage gives it. m must not change during the call. */
void trace_run_usage_inc_update(struct trace_run_usage_inc *st, const struct trace_model *m,
                                struct trace_region *r);
/* How many of the model's events st holds folded in (for tests and benchmarks). */
uint64_t trace_run_usage_inc_folded(const struct trace_run_usage_inc *st);
/* Free a state (NULL is a no-op). */
void trace_run_usage_inc_free(struct trace_run_usage_inc *st);

#endif
