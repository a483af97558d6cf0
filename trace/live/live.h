/*
 * The live trace feed: a chip's op log observers fill a trace model as the simulation
 * runs, so a live run and a loaded trace look the same to the TUI and to the metrics. An
 * op start appends an in-flight ENGINE_EVENT, its end sets the end and the details;
 * markers, tokens and "now" are picked up at each sync. With a trace file, every op is
 * streamed to the writer as it ends (trace/file/writer.h: the writer's memory does not grow
 * with the run) and the file appears atomically when the feed is finished.
 *
 * The mapping from op records to events is trace/FORMAT.md's ("From op records to
 * ENGINE_EVENTs", "Live runs"), through trace/model/format.h.
 */
#ifndef TRACE_LIVE_H
#define TRACE_LIVE_H

#include "sim/chip/chip.h"
#include "sim/util/diag.h"
#include "trace/model/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_live;

/* What run_metadata says about the run and how the trace is recorded. Strings are copied. */
struct trace_live_opts {
    const char *trace_path;     /* -o: stream the trace to this file; NULL: model only */
    uint64_t bw_window;         /* cycles per bandwidth sample, 0: TRACE_BW_WINDOW_DEFAULT */
    bool mem_events;            /* also record MEM_ACCESS_EVENTs (one per DRAM transfer) */
    const char *run_id;         /* NULL: "npuscope-" and the timestamp */
    int64_t timestamp;          /* when the run started, seconds since the Unix epoch (UTC) */
    const char *model_name;     /* run_metadata.model_name: the kernel or workload */
    const char *workload_type;  /* "CUSTOM", "LLM_DECODE", ...; NULL: "CUSTOM" */
    const char *cmdq_file;      /* the host program the run executes (its file) */
    const char *notes;          /* NULL: left out */
    int64_t prefill_tokens;     /* run_metadata.tokens, when the program declares them; */
    int64_t decode_tokens;      /* -1 (both): no tokens block */
    const char *const *plugins; /* run_metadata.plugins: the plug-in files the run loaded */
    size_t nplugins;            /* (0: left out) */
    /* With trace_path: the file is the only record of the events. The model keeps no
     * engine events (markers, tokens and tracks only), and summary_metrics and
     * bandwidth_samples are accumulated as the run goes (trace/live/sumacc.h), so memory does
     * not grow with the run. For a run that goes to its end without a viewer (headless):
     * trace_live_write refuses, and trace_live_finish closes the stream even when the run
     * stopped early. */
    bool stream_only;
};

/*
 * Subscribe to chip's op log and start a model with run_metadata and config_snapshot
 * (the chip config's value tree, with clock_ghz also at its top level). With
 * o->trace_path, the trace file is opened (a temporary file beside it). Must be called
 * before the chip runs its first event. The chip is borrowed and must outlive the feed.
 * Returns 0 and *out, or a negative code with d filled when the trace file cannot be
 * created ("t.json: cannot create: Permission denied"; nothing is left behind).
 */
int trace_live_new(struct sim_chip *chip, const struct trace_live_opts *o, struct trace_live **out,
                   struct diag *d);

/* Unsubscribe and free; an unfinished trace file is abandoned (its temporary file
 * removed, an older file under the name left as it was). NULL is a no-op. */
void trace_live_free(struct trace_live *l);

/* The model (borrowed; valid until the feed is freed). Up to date as of the last sync. */
struct trace_model *trace_live_model(const struct trace_live *l);

/*
 * Bring the model up to the chip's present: "now" from the engine clock, markers raised
 * and tokens closed since the last sync (streamed too), then trace_model_finish. Call it
 * after running events, before reading the model (the TUI: once per frame).
 */
void trace_live_sync(struct trace_live *l);

/*
 * Hold the model still (hold true) while the run goes on: until it is let go (hold false),
 * what the feed hears (op starts and ends, host spans, bytes on resources that would
 * change the model) is kept in order (trace/live/defer.h) instead of changing the model,
 * and trace_live_sync leaves it as it is. So an analysis may read the model on another
 * thread while the simulation runs on this one. Let go, the model is behind the run until
 * trace_live_catch_up has applied all it kept; meanwhile what the feed hears is kept
 * after it, and trace_live_sync brings the model to the run's time of the last entry
 * applied (its markers and tokens up to then; the bandwidth samples and the energy as they
 * were), so that the model is always the run as it was at some instant. trace_live_write
 * and trace_live_finish catch up first once it is let go (held, they write the model as it
 * stands: let it go once nothing reads it on another thread).
 */
void trace_live_defer(struct trace_live *l, bool hold);

/* The entries kept and not applied yet, and into *bytes (may be NULL) the memory they take. */
size_t trace_live_deferred(const struct trace_live *l, size_t *bytes);

/* Apply up to max of the entries kept (SIZE_MAX: all; none while held), oldest first;
 * returns how many are left. Call trace_live_sync after. */
size_t trace_live_catch_up(struct trace_live *l, size_t max);

/* The model index of the ENGINE_EVENT of op record id (sim_op_note.id), or UINT64_MAX
 * when the feed has not seen that record start (or its start is kept, not applied yet). */
uint64_t trace_live_event_of_record(const struct trace_live *l, uint64_t id);

/* Op starts plus op ends seen so far: it moves exactly when an op record starts or ends
 * (the TUI's "step to the next op record"). */
uint64_t trace_live_op_changes(const struct trace_live *l);

/*
 * Finish the trace file given at trace_live_new (a no-op returning 0 without one, or a
 * second time). complete: the simulation ran to its end; the streamed file is completed
 * with ops still in flight and tokens still open ended at now, bandwidth_samples and
 * summary_metrics from the model, and renamed into place. Otherwise (stopped early) the
 * stream is dropped and the trace up to now is written whole (trace_live_write) with
 * run_metadata.incomplete true. The model stays usable. Returns 0, or a negative code
 * with d filled (the destination untouched, no temporary file left).
 */
int trace_live_finish(struct trace_live *l, bool complete, struct diag *d);

/*
 * Write the trace as it stands now to path, atomically: every event of the model (ops in
 * flight ended at now; tokens still open left out), markers, bandwidth_samples and
 * summary_metrics from the model; run_metadata.incomplete true when incomplete. Does not
 * disturb the stream. Returns 0 or a negative code with d filled.
 */
int trace_live_write(struct trace_live *l, const char *path, bool incomplete, struct diag *d);

/*
 * This process is a copy resumed from a checkpoint (a fork taken earlier in the run, see
 * tui/source/ckpt.h): the streamed file is cut back to what this copy had written, so the ops it
 * runs again are written once. The spill needs nothing: it reads and writes at explicit
 * offsets, and what a copy writes again is the same bytes at the same offsets.
 */
void trace_live_resumed(struct trace_live *l);
/* The bandwidth samples of the chip's resources being filled (borrowed; trace/live/resacc.h). */
struct trace_resacc;
const struct trace_resacc *trace_live_resources(const struct trace_live *l);

/* The summary metrics and bandwidth samples of the run so far, counted as it goes (borrowed;
 * trace/live/sumacc.h): what a viewer shows without summing up the model again. */
struct trace_sumacc;
const struct trace_sumacc *trace_live_sumacc(const struct trace_live *l);

/* The chip the feed records (borrowed). */
struct sim_chip *trace_live_chip(const struct trace_live *l);

/* The trace file given at trace_live_new (borrowed), or NULL. */
const char *trace_live_path(const struct trace_live *l);

#endif
