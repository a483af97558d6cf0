/*
 * Energy and power: the chip config's energy model (sim/configs/README.md, "energy")
 * applied to what a run did, the same way for a live run and a loaded trace. What is
 * counted are actions (MACs by dtype, element ops, bytes read and written at each memory
 * kind, bytes per link class, messages), as integers, so a total does not depend on the
 * order the ops are reported in; each action's energy is its count times its pJ. The
 * energy is also spread over windows of cycles (power samples): an op's over its span,
 * static power over every window, so the samples add up to the total.
 *
 * The counts come from three feeds: ops (trace_energy_acc_event, with what
 * trace/analysis/opinfo.h decodes), bytes on HBMs and links (trace_energy_acc_traffic, the
 * resource samples' bytes), and CPU messages (HOST events on io_cpu and m_cpu tracks).
 * trace/FORMAT.md ("Energy") documents summary_metrics.energy and power_samples.
 */
#ifndef TRACE_ENERGY_H
#define TRACE_ENERGY_H

#include "sim/chip/config.h"
#include "sim/data/value.h"
#include "trace/analysis/opinfo.h"
#include "trace/model/model.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Actions, each with its pJ per unit. */
enum trace_energy_action {
    TRACE_EA_MAC_F32, /* GEMM multiply-accumulates by input dtype */
    TRACE_EA_MAC_F16,
    TRACE_EA_MAC_BF16,
    TRACE_EA_MAC_I8,
    TRACE_EA_MATH_OP,  /* MATH element ops */
    TRACE_EA_HBM_READ, /* bytes */
    TRACE_EA_HBM_WRITE,
    TRACE_EA_SRAM_READ,
    TRACE_EA_SRAM_WRITE,
    TRACE_EA_TCM_READ,
    TRACE_EA_TCM_WRITE,
    TRACE_EA_NOC_PE, /* bytes x hops, by link class */
    TRACE_EA_NOC_CUBE,
    TRACE_EA_NOC_CUBE_CUBE,
    TRACE_EA_NOC_HOST,
    TRACE_EA_NOC_SIP_SIP,
    TRACE_EA_PE_CPU_MSG, /* messages */
    TRACE_EA_IO_CPU_MSG,
    TRACE_EA_M_CPU_MSG,
    TRACE_EA_COUNT,
};

/* Component kinds (power samples and the breakdown), TRACE_POWER_KINDS of them. */
enum trace_energy_kind {
    TRACE_EK_GEMM,
    TRACE_EK_MATH,
    TRACE_EK_HBM,
    TRACE_EK_SRAM,
    TRACE_EK_TCM,
    TRACE_EK_NOC,
    TRACE_EK_CPU,
    TRACE_EK_STATIC,
};

/* The name of an action as written ("hbm_read") and as said ("HBM reads"); of a kind
 * ("hbm"). */
const char *trace_energy_action_key(enum trace_energy_action a);
const char *trace_energy_action_label(enum trace_energy_action a);
const char *trace_energy_kind_name(enum trace_energy_kind k);
/* The kind an action belongs to. */
enum trace_energy_kind trace_energy_action_kind(enum trace_energy_action a);

/* The energy model of a chip: pJ per action, static power, the clock. */
struct trace_energy_model {
    double pj[TRACE_EA_COUNT];
    double static_w;  /* the whole chip's leakage */
    double clock_ghz; /* > 0 */
};

/* The model of a config with an energy table (false when it has none). */
bool trace_energy_model_of_config(const struct sim_config *cfg, struct trace_energy_model *out);
/* The model of a trace's config_snapshot (its `energy` map, chip shape and clock); false
 * when it has no energy table or it cannot be read. */
bool trace_energy_model_of_snapshot(const struct sim_value *snap, struct trace_energy_model *out);

/* A run's energy. */
struct trace_energy {
    bool known;
    uint64_t count[TRACE_EA_COUNT];
    double action_j[TRACE_EA_COUNT];
    double kind_j[TRACE_POWER_KINDS]; /* static included, as the last kind */
    double dynamic_j, static_j, total_j;
    double seconds;     /* cycles_total at the clock */
    double avg_power_w; /* total_j / seconds (0 for an empty run) */
    double static_w;
};

/* ---- accumulating ------------------------------------------------------------------------ */

struct trace_energy_acc;

/* An accumulator for model em (copied), power windows of window cycles (0: 1024; doubled
 * as the run grows so that there are at most TRACE_ENERGY_MAX_WINDOWS). */
enum { TRACE_ENERGY_MAX_WINDOWS = 4096 };
struct trace_energy_acc *trace_energy_acc_new(const struct trace_energy_model *em, uint64_t window);
void trace_energy_acc_free(struct trace_energy_acc *a); /* NULL is a no-op */

/* count units of action a over cycles [s, e) (an instant when e <= s). */
void trace_energy_acc_add(struct trace_energy_acc *a, enum trace_energy_action act, uint64_t count,
                          uint64_t s, uint64_t e);

/*
 * An event on the track named track over [s, e): a message on an io_cpu or m_cpu track;
 * otherwise an op named op of kind kind whose work o says (o's spaces named by sp; NULL:
 * none), in_composite when it lies within a composite op on its own engine (a GEMM stage
 * there is not counted again). Other tracks (the host's) count nothing here.
 */
void trace_energy_acc_event(struct trace_energy_acc *a, const char *track, const char *op,
                            enum trace_op_kind kind, const struct trace_opinfo *o,
                            const struct trace_spaces *sp, bool in_composite, uint64_t s,
                            uint64_t e);

/* What a track's name makes of its events in trace_energy_acc_event: messages of an io_cpu
 * or an m_cpu, the ops of a PE engine (pe_dma, pe_gemm, pe_math), or nothing. */
enum trace_energy_track {
    TRACE_ET_NONE,
    TRACE_ET_IO_CPU,
    TRACE_ET_M_CPU,
    TRACE_ET_ENGINE,
};
enum trace_energy_track trace_energy_track_of(const char *track);

/* trace_energy_acc_event on a track of class cls (trace_energy_track_of): a caller that
 * sees many events of one track classifies it once. */
void trace_energy_acc_track_event(struct trace_energy_acc *a, enum trace_energy_track cls,
                                  const char *op, enum trace_op_kind kind,
                                  const struct trace_opinfo *o, const struct trace_spaces *sp,
                                  bool in_composite, uint64_t s, uint64_t e);

/* The action of bytes on a metered resource named name ("sip0.cube0.hbm", a link
 * "a<->b"), written or read; -1 when the name says neither. */
int trace_energy_resource_action(const char *name, bool write);

/*
 * The energy so far, for a run of cycles_total cycles, into out, and its power samples
 * (one per window over [0, cycles_total), owned, NULL when none) into *samples; returns
 * their count. samples may be NULL.
 */
size_t trace_energy_acc_result(const struct trace_energy_acc *a, uint64_t cycles_total,
                               struct trace_energy *out, struct trace_power_sample **samples);

/* ---- models and values ---------------------------------------------------------------------- */

/* The summary_metrics.energy block of e (known), or NULL when unknown. Caller frees. */
struct sim_value *trace_energy_to_value(const struct trace_energy *e);
/* Read a summary_metrics.energy block back (out->known false when v is not one). */
bool trace_energy_from_value(const struct sim_value *v, struct trace_energy *out);

/*
 * The energy of m computed from its events, resource samples and config_snapshot (false,
 * out->known false, when the snapshot has no energy table), with its power samples of
 * window cycles (0: the default) into *samples (may be NULL).
 */
bool trace_energy_compute(const struct trace_model *m, uint64_t window, struct trace_energy *out,
                          struct trace_power_sample **samples, size_t *nsamples);

/* The energy of m: the block the model holds (a loaded file's, a live run's), else
 * computed from its config_snapshot when it has an energy table; false when unknown. */
bool trace_energy_of_model(const struct trace_model *m, struct trace_energy *out);

/* The block the model holds alone (nothing computed: cheap enough for a view refreshed
 * while a run grows); false when it holds none. */
bool trace_energy_held(const struct trace_model *m, struct trace_energy *out);

/* The energy in m's power samples over cycles [a, b) (each window's share in proportion to
 * its overlap), all kinds; NaN when m has no samples. */
double trace_energy_between(const struct trace_model *m, uint64_t a, uint64_t b);

/* A power sample read from its JSON (trace/FORMAT.md); false when j is not one. */
bool trace_energy_sample_from_json(const cJSON *j, struct trace_power_sample *out);

/* Append the sample j is to *arr (n used, cap allocated; grown as needed); false, adding
 * nothing, when j is not one. */
bool trace_energy_sample_push(const cJSON *j, struct trace_power_sample **arr, size_t *n,
                              size_t *cap);

/* A loaded model's energy: the file summary's `energy` block and the n samples of *samples
 * (taken, *samples set to NULL, when the block is read: then true). True without taking
 * them when there is no block (the energy is unknown); false when the block is malformed. */
bool trace_energy_take_file(struct trace_model *m, struct trace_power_sample **samples, size_t n);

/* The same for one component kind (enum trace_energy_kind; kind < 0: all of them); the
 * samples must be in cycle order. */
double trace_energy_kind_between(const struct trace_model *m, uint64_t a, uint64_t b, int kind);

/* The action with the most energy (its share of the total in *share), or -1 when none. */
int trace_energy_top_action(const struct trace_energy *e, double *share);

/* Where the energy goes, in a phrase, into buf: "HBM reads: 71% of the energy" (the
 * action that dominates), or "static power (leakage): 95% of the energy; of the dynamic,
 * HBM reads 80%" when leakage outweighs every action. Returns buf. */
const char *trace_energy_where(const struct trace_energy *e, char *buf, size_t size);

/* v with an SI prefix and unit into buf ("271 uJ", "3.76 W", "0 J"); returns buf. */
const char *trace_energy_fmt(double v, const char *unit, char *buf, size_t size);

#endif
