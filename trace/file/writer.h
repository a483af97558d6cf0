/*
 * The trace writer: streams a trace file (trace format v1.0, trace/FORMAT.md) while a
 * simulation runs. open writes version, run_metadata, config_snapshot and opens
 * timeline_events; each event is formatted and buffered as it comes (memory does not
 * grow with the number of events); close writes bandwidth_samples and summary_metrics.
 * The file appears atomically under its name at close: a crash, a full disk or any
 * error leaves the old file (if any) as it was and no temporary file behind.
 */
#ifndef TRACE_WRITER_H
#define TRACE_WRITER_H

#include "sim/util/diag.h"
#include "sim/data/value.h"
#include "trace/model/model.h"

#include <stdbool.h>
#include <stdint.h>

struct trace_writer;

/* An ENGINE_EVENT as written (strings borrowed for the call). */
struct trace_writer_event {
    enum trace_engine engine;
    int32_t engine_id;               /* written as is (>= 0 in a valid trace) */
    int32_t cmdq_id;                 /* TRACE_NO_CMDQ: null */
    const char *layer_id;            /* NULL: null */
    const char *tile_id;             /* NULL: null */
    const char *op;                  /* the op_name */
    uint64_t start_cycle;            /* inclusive */
    uint64_t end_cycle;              /* exclusive, >= start_cycle */
    const char *component_id;        /* extension; NULL: left out */
    int op_kind;                     /* extension: enum trace_op_kind, or -1 to leave it out */
    double t_start_ns;               /* extension; NaN: left out */
    double t_end_ns;                 /* extension; NaN: left out */
    const struct sim_value *details; /* NULL: the packed details below, or left out */
    /* An op record's packed params (sim/oppack.h: params, then replay annotations),
     * written as trace_details_from_op would turn them into details, without building a
     * tree; used when details is NULL, left out when NULL too. */
    const uint8_t *packed;
    size_t packed_len;
    /* extension: indices in timeline_events of the ENGINE_EVENTs it depends on (op
     * records' dependency_ids); ndeps 0: left out */
    const uint64_t *deps;
    size_t ndeps;
    /* extension: the call site that issued it (details.src "vector_add.c:42", src_func),
     * added to packed details (value details carry their own); NULL: none */
    const char *src;
    const char *src_func;
    char src_buf[160]; /* room for src, for the caller's use */
};

/* A MEM_ACCESS_EVENT as written. */
struct trace_writer_mem {
    const char *mem_type; /* "DRAM" or "SPM" */
    uint64_t cycle;
    bool write;
    uint64_t bytes;
    uint64_t addr;
    enum trace_engine source_engine;
    int32_t source_engine_id;
    int32_t cmdq_id;          /* TRACE_NO_CMDQ: null */
    const char *component_id; /* extension; NULL: left out */
};

/* A TOKEN_EVENT as written. */
struct trace_writer_token {
    bool decode; /* phase "DECODE", else "PREFILL" */
    int64_t token_index;
    uint64_t start_cycle, end_cycle;
    const struct sim_value *details; /* NULL: left out */
};

/* A MARKER_EVENT as written. */
struct trace_writer_marker {
    const char *name;
    uint64_t cycle;
    const char *component_id;        /* extension; NULL: left out */
    const struct sim_value *details; /* NULL: left out */
};

/*
 * Start writing path (through a temporary file beside it). run_metadata and
 * config_snapshot are written at once (NULL: an empty object). Returns the writer, or
 * NULL with d filled when the temporary file cannot be created.
 */
struct trace_writer *trace_writer_open(const char *path, const struct sim_value *run_metadata,
                                       const struct sim_value *config_snapshot, struct diag *d);

/*
 * Append one event. Returns 0, or a negative code once writing has failed (the error is
 * sticky; close reports it with its reason). Events may come in any order (a live run
 * writes an op when it ends).
 */
int trace_writer_engine_event(struct trace_writer *w, const struct trace_writer_event *e);
int trace_writer_mem_access(struct trace_writer *w, const struct trace_writer_mem *a);
int trace_writer_token(struct trace_writer *w, const struct trace_writer_token *t);
int trace_writer_marker(struct trace_writer *w, const struct trace_writer_marker *k);

/*
 * Have close also write the samples of each resource (an HBM, a link) that m holds, with
 * their extension field "resource" (trace/FORMAT.md), after the DRAM's: by resource, then
 * by cycle, windows without traffic left out. m is borrowed until close.
 */
void trace_writer_resource_samples(struct trace_writer *w, const struct trace_model *m);

/* Have close also write power_samples (trace/FORMAT.md, "Energy"): n samples, borrowed
 * until close. */
void trace_writer_power_samples(struct trace_writer *w, const struct trace_power_sample *s,
                                size_t n);

/*
 * Finish: bandwidth_samples (the n of the whole DRAM among samples; then the resources'
 * of trace_writer_resource_samples) and summary_metrics (NULL: an empty object), then
 * fsync and rename onto the destination. Frees w in every case. Returns 0, or a negative
 * code with d filled ("FILE: cannot write: No space left on device"); then the
 * destination is untouched and the temporary file removed.
 */
int trace_writer_close(struct trace_writer *w, const struct trace_bw_sample *samples, size_t n,
                       const struct sim_value *summary_metrics, struct diag *d);

/* Give up: remove the temporary file and free w (NULL is a no-op). */
void trace_writer_abort(struct trace_writer *w);

/* A copy of the process resumed from an earlier state: the file back to what this copy
 * wrote (trace_out_rewind). NULL is a no-op. */
void trace_writer_rewind(struct trace_writer *w);

/* Bytes written so far (for progress and benchmarks). */
uint64_t trace_writer_bytes(const struct trace_writer *w);

/*
 * Write a whole model: its metadata and config, every event (details as the model gives
 * them), bandwidth samples and summary_metrics computed from the model (trace/analysis/metrics.h;
 * bw_window cycles per sample, 0 for the default), so the two agree. Returns 0 or a
 * negative code with d filled.
 */
int trace_writer_write_model(const struct trace_model *m, const char *path, uint64_t bw_window,
                             struct diag *d);

#endif
