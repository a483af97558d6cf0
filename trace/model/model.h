/*
 * The trace model: the one in-memory representation of a trace, filled either by a live
 * simulation (through the op log observers, see trace/live/live.h) or by the loader (a JSON
 * file, see trace/file/loader.h). The TUI reads only this (plus live handles for stepping and
 * the memory store), so a live run and a saved trace look the same to it.
 *
 * Compact by design, for traces of millions of events: strings are interned (32-bit ids),
 * an ENGINE_EVENT is a fixed 48-byte record whose details stay in the file (or, live, in a
 * side table) until asked for; each track (a component, or an engine and its id for spec
 * traces) keeps its events sorted by start with a running maximum of their ends, and a
 * level-of-detail summary: the union of its busy intervals with prefix sums, so the busy
 * time of any window is two binary searches, whatever the zoom.
 *
 * Times are cycles (the trace format's unit); end is exclusive. The clock (GHz), when
 * known from config_snapshot, converts them to ns.
 */
#ifndef TRACE_MODEL_H
#define TRACE_MODEL_H

#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct trace_model;

/* ENGINE_EVENT.engine (trace format §6.1). */
enum trace_engine {
    TRACE_ENGINE_DMA,
    TRACE_ENGINE_TE,
    TRACE_ENGINE_VE,
    TRACE_ENGINE_HOST,
    TRACE_ENGINE_OTHER,
    TRACE_ENGINE_COUNT,
};

/* ADR-0052 op_kind, kept with each event (bars are coloured by it). Spec traces from
 * other simulators have no op_kind: it is guessed from the engine (DMA -> memory, TE ->
 * gemm, VE -> math, others unknown). */
enum trace_op_kind {
    TRACE_KIND_MEMORY,
    TRACE_KIND_GEMM,
    TRACE_KIND_MATH,
    TRACE_KIND_UNKNOWN,
    TRACE_KIND_COUNT,
};

/* The bit of op kind k in a set of kinds (trace_model_track_kinds); out of range: UNKNOWN's. */
static inline uint8_t trace_kind_bit(unsigned k)
{
    return (uint8_t)(1u << (k < TRACE_KIND_COUNT ? k : TRACE_KIND_UNKNOWN));
}

/* Event flags. */
enum {
    TRACE_EV_INFLIGHT = 1 << 0,    /* live: started, not ended; end is "now" */
    TRACE_EV_OWN_DETAILS = 1 << 1, /* details indexes the model's details table (set by
                                      trace_model_set_details_take) */
    TRACE_EV_TRANSFER = 1 << 2,    /* its DRAM traffic is recorded (struct trace_transfer) */
    TRACE_EV_PACKED = 1 << 3,      /* live, ended: details is the offset of its packed details
                                      in the model's spill (trace_model_set_details_packed) */
};

#define TRACE_NO_STR  0u /* interned id of "no string" (null layer_id, ...) */
#define TRACE_NO_CMDQ INT32_MIN

/* One ENGINE_EVENT, as stored (48 bytes). */
struct trace_event {
    uint64_t start;   /* start_cycle, inclusive */
    uint64_t end;     /* end_cycle, exclusive (>= start) */
    uint64_t details; /* loaded: byte offset of the event object in the file; live: index
                         into the model's details table, or an offset in its spill; see
                         trace_model_event_details */
    uint32_t track;   /* index of its track */
    uint32_t op;      /* interned op name */
    uint32_t layer;   /* interned layer_id, or TRACE_NO_STR */
    uint32_t tile;    /* interned tile_id, or TRACE_NO_STR */
    int32_t cmdq_id;  /* or TRACE_NO_CMDQ */
    uint8_t op_kind;  /* enum trace_op_kind */
    uint8_t flags;    /* TRACE_EV_* */
    uint16_t site;    /* the kernel line that issued it (trace_model_site_get), or TRACE_NO_SITE */
};

/* The end of event e at cycle now (the model's trace_model_now): one in flight runs until
 * now, never ending before it starts. */
static inline uint64_t trace_event_end_at(const struct trace_event *e, uint64_t now)
{
    return e->flags & TRACE_EV_INFLIGHT ? (now > e->start ? now : e->start) : e->end;
}

/* A track: one Gantt row. */
struct trace_track {
    uint32_t name; /* interned: the component id ("sip0.cube0.pe0.pe_dma"), or
                      "DMA 0" for a spec trace without component ids */
    enum trace_engine engine;
    int32_t engine_id; /* index among engines of that kind, or -1 */
};

/* MEM_ACCESS_EVENT (§6.2), compact. */
struct trace_mem_access {
    uint64_t cycle;
    uint64_t addr;
    uint64_t bytes;
    uint32_t mem_type; /* interned "DRAM" / "SPM" */
    uint32_t track;    /* track of the source engine, or UINT32_MAX */
    int32_t cmdq_id;
    bool write;
};

/* TOKEN_EVENT (§6.3). */
struct trace_token {
    uint64_t start, end;
    int64_t token_index;
    bool decode;               /* phase DECODE, else PREFILL */
    struct sim_value *details; /* owned, may be NULL */
};

/* MARKER_EVENT (§6.4). */
struct trace_marker {
    uint64_t cycle;
    uint32_t name;             /* interned */
    uint32_t track;            /* track it was raised on (extension), or UINT32_MAX */
    struct sim_value *details; /* owned, may be NULL */
};

/* bandwidth_samples (§7). A sample of one resource (an HBM, a link: the extension field
 * "resource", trace/FORMAT.md) has its interned name in resource; the samples of §7, the
 * chip's DRAM as a whole, have TRACE_NO_STR. Whatever counts DRAM traffic takes only
 * those (trace_bw_sample_is_dram). For a link, read_bytes went towards the host and
 * write_bytes away from it. */
struct trace_bw_sample {
    uint64_t cycle;
    uint64_t window;
    uint64_t read_bytes;
    uint64_t write_bytes;
    uint32_t resource; /* interned resource name, or TRACE_NO_STR: the whole DRAM */
};

/* True for a sample of the whole DRAM (spec §7), false for one resource's. */
static inline bool trace_bw_sample_is_dram(const struct trace_bw_sample *s)
{
    return s->resource == TRACE_NO_STR;
}

/* ---- building ------------------------------------------------------------------------- */

/* An empty model. */
struct trace_model *trace_model_new(void);
void trace_model_free(struct trace_model *m);

/* Intern a string (any bytes; len may include NULs). Returns its id (never TRACE_NO_STR,
 * which interns nothing). */
uint32_t trace_model_intern(struct trace_model *m, const char *s, size_t len);
/* The interned string (NUL-terminated; borrowed, valid until the model is freed). */
const char *trace_model_str(const struct trace_model *m, uint32_t id);
/* Length in bytes of an interned string. */
size_t trace_model_str_len(const struct trace_model *m, uint32_t id);
/* Number of string ids: every id below it is valid (id 0 is TRACE_NO_STR); ids are handed
 * out in order, so a copy of a model interns [its count, this count) to catch up. */
uint32_t trace_model_str_count(const struct trace_model *m);

/*
 * Call sites: the kernel source lines ops were issued from (the extension details.src and
 * details.src_func of trace/FORMAT.md). A site is a file's basename, a line and a
 * function, interned; an event names its site by a 16-bit id (struct trace_event.site).
 * A site with line 0 stands for a details.src that could not be read as "file:line": its
 * file is the text as given.
 */
#define TRACE_NO_SITE 0u
struct trace_site {
    uint32_t file; /* interned basename ("vector_add.c"), or the malformed text (line 0) */
    uint32_t func; /* interned function name, or TRACE_NO_STR */
    uint32_t line; /* >= 1; 0: malformed */
};
/* The id of site (file, func, line), added when new; TRACE_NO_SITE when the table is full
 * (65535 sites). */
uint16_t trace_model_site(struct trace_model *m, uint32_t file, uint32_t func, uint32_t line);
/* The id of the site "file:line" (text as details.src has it, len bytes) with function
 * func (NULL: none): a text that is not "name:line" gives a malformed site. */
uint16_t trace_model_site_parse(struct trace_model *m, const char *src, size_t len,
                                const char *func);
/* Set the call site of event i (a site id of m, or TRACE_NO_SITE): a model mirrored from a
 * served run learns its events' sites apart from the events (trace/wire/mirror.h). */
void trace_model_set_event_site(struct trace_model *m, uint64_t i, uint16_t site);
/* Site id, or NULL for TRACE_NO_SITE and unknown ids. */
const struct trace_site *trace_model_site_get(const struct trace_model *m, uint16_t id);
/* Number of site ids: ids [1, count) are valid; a copy of a model adds [its count, count). */
uint32_t trace_model_site_count(const struct trace_model *m);
/* "file:line" of site id into buf (size bytes); "" for none. Returns buf. */
const char *trace_model_site_text(const struct trace_model *m, uint16_t id, char *buf, size_t size);

/* The track named name, created (with engine and engine_id) when new. */
uint32_t trace_model_track(struct trace_model *m, const char *name, enum trace_engine engine,
                           int32_t engine_id);

/*
 * Append an ENGINE_EVENT (ev->track must exist). Returns its index. Events may arrive in
 * any order; trace_model_finish sorts what needs sorting. details: see struct
 * trace_event. Live runs append in start order and call trace_model_event_end later.
 */
uint64_t trace_model_add_event(struct trace_model *m, const struct trace_event *ev);

/*
 * About n events are coming (a loader's guess from the size of its file): the per-event
 * arrays, at their first growth, make room for n at once instead of doubling from a few
 * (each doubling copies the array). Only their capacity changes, never the model.
 */
void trace_model_expect(struct trace_model *m, uint64_t n);

/* Live: set the end of event i, clear its INFLIGHT flag. */
void trace_model_end_event(struct trace_model *m, uint64_t i, uint64_t end);

/* Live: keep params (taking ownership) as the details of event i. */
void trace_model_set_details_take(struct trace_model *m, uint64_t i, struct sim_value *details);

/*
 * Live: the details of event i as an op record's packed params (sim/oppack.h: the params
 * map, then the replay annotations; copied), with the op's exact times in ns (t_end_ns NaN
 * while it runs). While the event is in flight they stay in memory; once it has ended they
 * move to the model's spill file, so the model's memory stays a few dozen bytes per event
 * (trace/model/spill.h). trace_model_event_details gives them as trace_details_from_op does.
 * Its DRAM traffic is not read from them: the feed says it (trace_model_set_transfers).
 */
void trace_model_set_details_packed(struct trace_model *m, uint64_t i, double t_start_ns,
                                    double t_end_ns, const uint8_t *packed, size_t len);

struct trace_transfer;
/* The DRAM traffic of live event i, from what its op record says it moves (struct
 * sim_op_mem, trace_dram_from_mem): n transfers, their event field set here. */
void trace_model_set_transfers(struct trace_model *m, uint64_t i, const struct trace_transfer *x,
                               int n);

/* Live: the packed details of event i as given to trace_model_set_details_packed (a new
 * buffer, *len bytes: the caller frees it), or NULL when it has none (details of another
 * kind, or the spill cannot be read). */
uint8_t *trace_model_event_packed(const struct trace_model *m, uint64_t i, size_t *len);

/* The exact times given with trace_model_set_details_packed; false for other events (or
 * when the spill cannot be read). */
bool trace_model_event_ns(const struct trace_model *m, uint64_t i, double *t_start_ns,
                          double *t_end_ns);

/* Bytes the model keeps resident for its events (event records, per-track indexes,
 * transfers, in-flight details; arrays counted by what is in use), for the benchmarks'
 * bytes per event. */
uint64_t trace_model_event_bytes(const struct trace_model *m);

void trace_model_add_mem_access(struct trace_model *m, const struct trace_mem_access *a);
/* Token and marker details are taken (owned by the model from now on). */
void trace_model_add_token(struct trace_model *m, const struct trace_token *t);
void trace_model_add_marker(struct trace_model *m, const struct trace_marker *k);
/* Returns the sample's index. */
size_t trace_model_add_bw_sample(struct trace_model *m, const struct trace_bw_sample *s);
/* Live: add bytes to sample i (a resource's window filling up as the run goes); replace
 * sample i (its window widened, or emptied: a sample without bytes is not written). */
void trace_model_bw_sample_add(struct trace_model *m, size_t i, uint64_t read_bytes,
                               uint64_t write_bytes);
void trace_model_bw_sample_set(struct trace_model *m, size_t i, const struct trace_bw_sample *s);
/* Changes of samples after they were added: their count so far, and the count when sample i
 * last changed (0: never). A served run's viewers are sent the samples that changed. */
uint64_t trace_model_bw_revs(const struct trace_model *m);
uint64_t trace_model_bw_sample_rev(const struct trace_model *m, size_t i);

/* Top-level blocks, taken: run_metadata, config_snapshot, and summary_metrics as found in
 * a loaded file (recomputed metrics come from trace/analysis/metrics.h). */
void trace_model_set_metadata_take(struct trace_model *m, struct sim_value *run_metadata);
void trace_model_set_config_take(struct trace_model *m, struct sim_value *config_snapshot);
void trace_model_set_file_summary_take(struct trace_model *m, struct sim_value *summary);

/*
 * Energy (trace/analysis/energy.h, trace/FORMAT.md "Energy"): the summary_metrics.energy
 * block and the power samples, as a loaded file has them or a live run last published
 * them. A power sample is the energy of one window of cycles, by component kind (the
 * kinds of trace/analysis/energy.h, in its order; the last is static).
 */
enum { TRACE_POWER_KINDS = 8 };
struct trace_power_sample {
    uint64_t cycle;  /* the window's first cycle */
    uint64_t window; /* its length in cycles */
    double joules[TRACE_POWER_KINDS];
};
/* Replace both (taken; NULL energy: unknown). Samples in cycle order. */
void trace_model_set_energy_take(struct trace_model *m, struct sim_value *energy,
                                 struct trace_power_sample *samples, size_t n);
/* The energy block, or NULL when the energy is unknown. */
const struct sim_value *trace_model_energy(const struct trace_model *m);
size_t trace_model_power_count(const struct trace_model *m);
const struct trace_power_sample *trace_model_power(const struct trace_model *m, size_t i);
/* How many times the energy was set (0: never): it moves with each trace_model_set_energy_take. */
uint64_t trace_model_energy_gen(const struct trace_model *m);

/* Set "now" for a live model: in-flight events extend to it, the time range covers it. */
void trace_model_set_now(struct trace_model *m, uint64_t now);

/* Count something the loader skipped (unknown event types, unknown fields). */
void trace_model_count_ignored(struct trace_model *m, bool event);

/*
 * Bring the per-track indexes and level-of-detail summary up to date. Cheap when only
 * a few events were added since the last call (live runs call it once per frame); a
 * loaded file calls it once.
 */
void trace_model_finish(struct trace_model *m);

/*
 * Put the events added since the last trace_model_finish (or trace_model_stage) in their
 * tracks' indexes now, ahead of the next finish, which then has only the rest to do:
 * nothing is published (what readers see changes at the finish only). For a loader that
 * adds many events on a thread of its own before the one finish: the work is done while
 * the events are still in the cache, and beside the parse rather than after it.
 */
void trace_model_stage(struct trace_model *m);

/* ---- reading -------------------------------------------------------------------------- */

/* Bumps whenever the model changes (events added or ended, now moved). */
uint64_t trace_model_generation(const struct trace_model *m);

size_t trace_model_track_count(const struct trace_model *m);
const struct trace_track *trace_model_track_get(const struct trace_model *m, uint32_t track);

uint64_t trace_model_event_count(const struct trace_model *m);
const struct trace_event *trace_model_event(const struct trace_model *m, uint64_t i);

/*
 * The events of a track sorted by start: *idx receives a borrowed array of event indices
 * (valid until the next trace_model_finish), the return value its length. An index is 32
 * bits, 4 bytes an event: a model holds fewer than 2^32 events, as its transfers and the
 * critical path's ops count them too.
 */
size_t trace_model_track_events(const struct trace_model *m, uint32_t track, const uint32_t **idx);

/* Position in the track's sorted event array of the first event whose end > t (events
 * overlapping or after t); equals the length when none. */
size_t trace_model_track_seek(const struct trace_model *m, uint32_t track, uint64_t t);

/* Start of the track's earliest op in flight (as of the last trace_model_finish), or
 * UINT64_MAX when none is: no op of the track that starts before it is in flight, so a
 * reader of a window before it need not look at the ops for that. */
uint64_t trace_model_track_inflight_start(const struct trace_model *m, uint32_t track);

/* The op kinds of the track's events (published or not): bit k set when an event of
 * op_kind k is among them (an op_kind out of range counts as TRACE_KIND_UNKNOWN); 0 when it
 * has none. Kept as events come, so that a reader need not look at them for it. */
uint8_t trace_model_track_kinds(const struct trace_model *m, uint32_t track);

/* Busy cycles of track before x: trace_model_track_busy(m, track, 0, x), so that the busy
 * time of consecutive windows costs one call per boundary (the Gantt's columns). */
uint64_t trace_model_track_cover(const struct trace_model *m, uint32_t track, uint64_t x);

/* Busy cycles of track within [a, b): the measure of the union of its events clipped to
 * the window (overlapping events count once). In-flight events count up to now. */
uint64_t trace_model_track_busy(const struct trace_model *m, uint32_t track, uint64_t a,
                                uint64_t b);

/* The event's details as a value tree: parsed from the file on demand (loaded) or the
 * stored params (live). The caller frees the result. NULL when there are none. */
struct sim_value *trace_model_event_details(const struct trace_model *m, uint64_t i);

/*
 * Op columns: a few bytes per event that the analyses read instead of its details (what
 * trace/analysis/opinfo.h decodes from them, packed by trace_opinfo_pack), filled once when
 * the event is loaded. The model keeps them as given; an event without them has its details
 * read as before. trace_model_opcol returns the bytes of event i (*n set; borrowed, valid
 * until the next set), or NULL when it has none.
 */
enum { TRACE_OPCOL_MAX = 255 };
void trace_model_set_opcol(struct trace_model *m, uint64_t i, const uint8_t *p, size_t n);
const uint8_t *trace_model_opcol(const struct trace_model *m, uint64_t i, size_t *n);
/* Whether event i has op columns, their bytes not read: a pass that only asks this of
 * millions of events leaves their pages alone. */
bool trace_model_has_opcol(const struct trace_model *m, uint64_t i);

size_t trace_model_mem_access_count(const struct trace_model *m);
const struct trace_mem_access *trace_model_mem_access(const struct trace_model *m, size_t i);
size_t trace_model_token_count(const struct trace_model *m);
const struct trace_token *trace_model_token(const struct trace_model *m, size_t i);
size_t trace_model_marker_count(const struct trace_model *m);
const struct trace_marker *trace_model_marker(const struct trace_model *m, size_t i);
/* Every sample, the DRAM's and each resource's, in the order they were added. */
size_t trace_model_bw_sample_count(const struct trace_model *m);
const struct trace_bw_sample *trace_model_bw_sample(const struct trace_model *m, size_t i);
/* How many of them are the DRAM's (trace_bw_sample_is_dram). */
size_t trace_model_dram_sample_count(const struct trace_model *m);

const struct sim_value *trace_model_metadata(const struct trace_model *m);
const struct sim_value *trace_model_config(const struct trace_model *m);
const struct sim_value *trace_model_file_summary(const struct trace_model *m);

/* The time range covered: first start and last end over every event, marker and token
 * (and now, live). Both 0 for an empty model. */
uint64_t trace_model_t_min(const struct trace_model *m);
uint64_t trace_model_t_max(const struct trace_model *m);

/* Clock in GHz from config_snapshot ("clock_ghz" at its top level), or 0 when unknown. */
double trace_model_clock_ghz(const struct trace_model *m);

/* What the loader skipped: unknown event types and unknown fields. */
uint64_t trace_model_ignored_events(const struct trace_model *m);
uint64_t trace_model_ignored_fields(const struct trace_model *m);

/* ---- additions: the file behind a loaded model, DRAM traffic ------------------------------ */

/*
 * Attach the bytes a loaded model's events were read from (the mapped file): event
 * details are parsed from them on demand, at the byte offset each event records.
 * release(ctx) runs when the model is freed (NULL when nothing is to be released).
 */
void trace_model_attach_source(struct trace_model *m, const char *data, size_t len,
                               void (*release)(void *ctx), void *ctx);

/* "now" of a live model (0 until trace_model_set_now is called). */
uint64_t trace_model_now(const struct trace_model *m);

/* Flags of a transfer. */
enum {
    TRACE_XFER_WRITE = 1 << 0, /* chip -> DRAM (else DRAM -> chip, a read) */
    TRACE_XFER_KV = 1 << 1,    /* KV-cache traffic (details.tensor_role "kv") */
    TRACE_XFER_FLAGS = 3,      /* all of them */
};

/* The most bytes a transfer keeps (2^62 - 1, 4 EiB): a trace that says more of one event
 * is taken at that (trace_dram_rule). */
#define TRACE_XFER_BYTES_MAX ((UINT64_C(1) << 62) - 1)

/*
 * The DRAM traffic of one ENGINE_EVENT, as trace/FORMAT.md defines it: bytes moved between
 * DRAM (HBM) and the chip over the event's [start, end). An ipcq_copy from HBM to HBM has
 * two (a read and a write). Metrics and bandwidth samples are computed from these.
 */
struct __attribute__((packed, aligned(4))) trace_transfer {
    uint64_t bytes : 62; /* at most TRACE_XFER_BYTES_MAX */
    uint64_t flags : 2;  /* TRACE_XFER_* */
    uint32_t event;      /* index of the ENGINE_EVENT (a model holds fewer than 2^32) */
};

/*
 * Explicit dependencies (the extension field dependency_ids, trace/FORMAT.md): event ev
 * depends on event on. trace_model_event_deps gives those of ev (a borrowed array, valid
 * until the next dependency is added) and returns their count.
 */
void trace_model_add_dep(struct trace_model *m, uint64_t ev, uint64_t on);
size_t trace_model_event_deps(const struct trace_model *m, uint64_t ev, const uint64_t **on);
/* How many dependencies the model holds. */
size_t trace_model_dep_count(const struct trace_model *m);

/* Record a transfer (the loader does, from each DMA event's details; so does
 * trace_model_set_details_take for a live event on a DMA track, once per event). */
void trace_model_add_transfer(struct trace_model *m, const struct trace_transfer *x);
size_t trace_model_transfer_count(const struct trace_model *m);
const struct trace_transfer *trace_model_transfer(const struct trace_model *m, size_t i);

/* Names of the enums, as written in trace files ("DMA", "TE"...; "memory", "gemm"...). */
const char *trace_engine_name(enum trace_engine e);
int trace_engine_parse(const char *s, enum trace_engine *out);
const char *trace_op_kind_name(enum trace_op_kind k);
int trace_op_kind_parse(const char *s, enum trace_op_kind *out);

#endif
