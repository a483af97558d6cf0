/*
 * Per-region accounting of a trace model. A trace is split into regions (the whole run,
 * its kernel launches, the spans between markers, its layers) and each region is
 * accounted per engine kind, per track (component) and per op name: busy cycles, op
 * count, total op duration, DRAM bytes; per op name also the span of its ops and their
 * busy cycles per engine kind (what the TUI's layer breakdown shows when a layer is
 * unfolded). Utilization is busy cycles over the region's length. The rules (what belongs to a
 * region, how launches are named) are those of trace/FORMAT.md, "Regions"; npuscope diff compares
 * two traces region by region with them (trace/diff/diff.h). Works on any finished model, loaded or
 * live (in-flight ops count up to "now").
 */
#ifndef TRACE_REGIONS_H
#define TRACE_REGIONS_H

#include "trace/model/model.h"
#include "trace/model/progress.h"

#include <stddef.h>
#include <stdint.h>

/* How a trace is split. */
enum trace_region_kind {
    TRACE_REGION_RUN,    /* one region: the whole run, [0, last end) */
    TRACE_REGION_LAUNCH, /* the ENGINE_EVENTs of one cmdq_id (npuscope: one host message,
                            a kernel launch), in cmdq_id order */
    TRACE_REGION_MARKER, /* from a marker to the next marker of another name; before the
                            first marker, the region "(start)" */
    TRACE_REGION_LAYER,  /* the ENGINE_EVENTs of one layer_id, in order of their first start */
    TRACE_REGION_KIND_COUNT,
};

/* Name of the region "(start)": the span of a marker split before its first marker. */
#define TRACE_REGION_START_NAME "(start)"

/* What a set of ops did. busy and the bytes and ops are over the same set of ops; see
 * struct trace_region for which ops belong to a region. */
struct trace_usage {
    uint64_t busy;        /* cycles with at least one of the ops running (overlaps once) */
    uint64_t ops;         /* number of ops */
    uint64_t op_cycles;   /* sum of their durations (overlapping ops each count) */
    uint64_t read_bytes;  /* DRAM -> chip bytes of their transfers (FORMAT.md, DRAM traffic) */
    uint64_t write_bytes; /* chip -> DRAM bytes */
};

/* The usage of one track (a Gantt row: a component, or "DMA 0" in a spec trace). */
struct trace_track_usage {
    uint32_t track; /* index into the model's tracks */
    struct trace_usage u;
};

/* The ops of one op name in a region, each counted whole (also in a window split). */
struct trace_op_usage {
    uint32_t op;         /* interned op name (the model's string id) */
    uint64_t count;      /* ops of that name */
    uint64_t cycles;     /* their total duration */
    uint64_t start, end; /* the first start and the last end of those ops */
    uint64_t busy;       /* cycles with at least one of them running, on any engine */
    uint64_t engine_busy[TRACE_ENGINE_COUNT]; /* the same per engine kind (the union over
                                                 the engines of that kind) */
    uint64_t read_bytes, write_bytes;         /* DRAM bytes of their transfers */
};

/*
 * One region. Which ops belong to it: for RUN and MARKER regions (windows of time), the
 * ops whose start lies in [start, end), while busy is what ran inside the window (an op
 * crossing a boundary counts on each side for the part it spent there, so the busy cycles
 * of consecutive windows add up to the run's); for LAUNCH and LAYER regions, the ops with
 * its cmdq_id or layer_id, wherever they lie, and busy counts them whole.
 */
struct trace_region {
    enum trace_region_kind kind;
    const char *name;       /* owned by the region set: the kernel ("vector_add"; "cmdq 7"
                               when the trace does not name it), the marker, the layer_id;
                               "run" for the whole run. Raw text from the trace: escape it */
    uint32_t occurrence;    /* how many earlier regions of the set have the same name */
    uint32_t layer;         /* LAYER: its interned layer_id; else TRACE_NO_STR */
    int32_t cmdq_id;        /* LAUNCH: its cmdq_id; else TRACE_NO_CMDQ */
    uint64_t start, end;    /* RUN, MARKER: the window; LAUNCH, LAYER: the first start and
                               the last end of its ops (and of the launch's markers and tokens) */
    struct trace_usage all; /* every op of the region */
    struct trace_usage engine[TRACE_ENGINE_COUNT]; /* its ops per engine kind */
    struct trace_track_usage *tracks;              /* owned: per track with ops or busy
                                                      cycles here, by track index */
    size_t ntracks;
    struct trace_op_usage *ops; /* owned: per op name, by string id */
    size_t nops;
};

struct trace_regions;

/*
 * Split m (finished: trace_model_finish) as kind says and account every region. m is
 * borrowed and must outlive the result. A split that finds nothing (a launch split of a
 * trace without cmdq_ids, a marker split without markers) has no regions. Free with
 * trace_regions_free.
 */
struct trace_regions *trace_regions_new(const struct trace_model *m, enum trace_region_kind kind);
/* trace_regions_new reporting its progress through p (may be NULL); when p is cancelled it
 * returns early with an incomplete set, to be freed. */
struct trace_regions *trace_regions_new_progress(const struct trace_model *m,
                                                 enum trace_region_kind kind,
                                                 struct trace_progress *p);
/* trace_regions_new_progress without each op name's busy cycles (busy and engine_busy of
 * every struct trace_op_usage 0; the rest as accounted): what needs only the usage per
 * region, engine kind and track (the verdict) is spared uniting every op name's intervals. */
struct trace_regions *trace_regions_new_light(const struct trace_model *m,
                                              enum trace_region_kind kind,
                                              struct trace_progress *p);
/* The split alone, not accounted (every usage 0, no tracks or op names): the regions'
 * names, spans and occurrences and which region each event belongs to, in one pass over
 * the events; what finding a launch by its cmdq_id or by a cycle needs. */
struct trace_regions *trace_regions_new_split(const struct trace_model *m,
                                              enum trace_region_kind kind);
/*
 * The launch split of m with the whole run's usage, in one pass over the events (from the
 * last): what the bottleneck verdict reads. Each launch as trace_regions_new_light gives it,
 * but without tracks or op names (ntracks and nops 0), and into run the region of the whole run
 * as trace_regions_new_light(m, TRACE_REGION_RUN) accounts it, but for its DRAM bytes, in all
 * only (none per engine kind), and its tracks and op names (none; its name static, nothing
 * owned). The pass needs the ops of some length in end order (as npuscope writes them: none
 * ends before an op earlier in the model) and the transfers in event order: otherwise, and
 * when p is cancelled, it returns NULL, run then unset. Free with trace_regions_free. threads 0:
 * a model of a million events and more is passed over in two halves, the later on a second
 * thread, and the two joined (the same result); 1: in one pass on the calling thread; 2: in
 * two halves whatever its size.
 */
struct trace_regions *trace_regions_new_launch_run(const struct trace_model *m,
                                                   struct trace_region *run,
                                                   struct trace_progress *p, unsigned threads);
/* The events of region r of a set from trace_regions_new_launch_run, in event order, into evs
 * (room for the region's all.ops; NULL: only counted); returns how many. SIZE_MAX when the set
 * is another's (find them with trace_regions_of_event). */
size_t trace_regions_events(const struct trace_regions *rs, size_t r, uint64_t *evs);
/* Whether the events of region r (as trace_regions_events's) are one run, those from *first
 * (NULL: not asked) on: false when not, or when the set is another's. */
bool trace_regions_one_run(const struct trace_regions *rs, size_t r, uint64_t *first);
/* Free a region set (NULL is a no-op). */
void trace_regions_free(struct trace_regions *rs);

/* The model and the kind of split the set was made with. */
const struct trace_model *trace_regions_model(const struct trace_regions *rs);
enum trace_region_kind trace_regions_kind(const struct trace_regions *rs);

/* Number of regions, and region i (borrowed; valid until the set is freed), in the order
 * the kind of split defines. */
size_t trace_regions_count(const struct trace_regions *rs);
const struct trace_region *trace_regions_get(const struct trace_regions *rs, size_t i);

/* The region model event ev belongs to, or SIZE_MAX when none (an op without a cmdq_id
 * in a launch split, without a layer_id in a layer split). */
size_t trace_regions_of_event(const struct trace_regions *rs, uint64_t ev);

/* The index of the region containing cycle t in a RUN or MARKER split (the last whose
 * start is <= t), or SIZE_MAX when there is none or the split is of another kind. */
size_t trace_regions_at(const struct trace_regions *rs, uint64_t t);

/* The usage of track in r, or NULL when the track did nothing there. */
const struct trace_track_usage *trace_region_track(const struct trace_region *r, uint32_t track);

/* The usage of op name op (an interned string id) in r, or NULL when it has none. */
const struct trace_op_usage *trace_region_op(const struct trace_region *r, uint32_t op);

/* Length of r in cycles (end - start), and busy / length (0 for an empty region). */
uint64_t trace_region_length(const struct trace_region *r);
double trace_region_util(const struct trace_region *r, uint64_t busy);

/* Busy cycles of every engine kind of r (or of op name u in it) added: what a layer's
 * share of the run is (this over cycles_total), where busy (any engine) counts overlaps of
 * two kinds once. */
uint64_t trace_region_kinds_busy(const struct trace_region *r);
uint64_t trace_op_kinds_busy(const struct trace_op_usage *u);

/* "run", "launch", "marker", "layer". */
const char *trace_region_kind_name(enum trace_region_kind k);

#endif
