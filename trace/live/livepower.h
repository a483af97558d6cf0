/*
 * A live run's energy (trace/analysis/energy.h), counted as the run goes from what the
 * feed hears: each op record as it ends (its work decoded from its params), each CPU
 * message span, and the bytes on every HBM and metered link. The live feed
 * (trace/live/live.h) publishes it into its model (trace_model_set_energy_take) and writes
 * it with the trace: summary_metrics.energy and power_samples. The same counts as
 * trace_energy_compute gives for the trace loaded back.
 */
#ifndef TRACE_LIVEPOWER_H
#define TRACE_LIVEPOWER_H

#include "sim/chip/chip.h"
#include "sim/chip/oplog.h"
#include "trace/analysis/energy.h"
#include "trace/model/model.h"

#include <stdbool.h>
#include <stdint.h>

struct trace_livepower;

/* The energy of a run on chip with power windows of window cycles (0: the default, as
 * trace_energy_acc_new), or NULL when its config has no energy table. */
struct trace_livepower *trace_livepower_new(struct sim_chip *chip, uint64_t window);
void trace_livepower_free(struct trace_livepower *p); /* NULL is a no-op */

/* Op record rec started on model track `track` (composite ops are followed per track). */
void trace_livepower_op_start(struct trace_livepower *p, uint32_t track,
                              const struct sim_op_record *rec);
/* It ended: its work over cycles [s, e) on the track named name. */
void trace_livepower_op_end(struct trace_livepower *p, uint32_t track, const char *name,
                            const struct sim_op_record *rec, uint64_t s, uint64_t e);
/* A span of CPU work on the track named name over [s, e) (a message serviced). */
void trace_livepower_span(struct trace_livepower *p, const char *name, uint64_t s, uint64_t e);
/* nbytes on metered resource res (sim_chip_resource) over cycles [s, e). */
void trace_livepower_traffic(struct trace_livepower *p, uint32_t res, bool write, uint64_t nbytes,
                             uint64_t s, uint64_t e);

/* The energy so far for a run of cycles_total cycles: its summary block (caller frees) and
 * power samples (owned, *n set). */
struct sim_value *trace_livepower_result(const struct trace_livepower *p, uint64_t cycles_total,
                                         struct trace_power_sample **samples, size_t *n);

/* Publish the energy so far into m (its summary block and power samples: up to a few
 * hundred microseconds of work; trace/live/live.h says when a feed does). */
void trace_livepower_publish(const struct trace_livepower *p, struct trace_model *m,
                             uint64_t cycles_total);

#endif
