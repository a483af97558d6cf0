/*
 * The critical path of a set of ops (a kernel launch, a whole run): the chain of ops, each
 * waiting on the one before it, whose durations and waits add up to the set's span. An op
 * waits on its predecessors:
 *
 *   explicit   its dependency_ids (trace/FORMAT.md: the dependency_ids extension)
 *   RAW        it reads bytes an earlier op wrote (ranges from the details,
 * trace/analysis/opinfo.h, the read-after-write dependencies phase 2 infers, ADR-0020 D6) tile the
 * op of the same tile_id that ended last before it started engine     the op that kept its
 * component busy until the moment it started PE order   the op of the same PE (a kernel issues its
 * ops in order) that ended last before it started
 *
 * and of those it waits on the one that ended last (on a tie, in the order above). An op
 * with none waits on whatever of the set ended last before it started (launch order: the
 * host messages, the first op a kernel runs on a PE). Walking back from the op that ends
 * last gives the path; each step says how long the op waited after its predecessor ended
 * and why. Ops are taken in start order; umbrella ops (composite_*, whose TileToken stages
 * are in the set too) are left out.
 */
#ifndef TRACE_CRITPATH_H
#define TRACE_CRITPATH_H

#include "sim/util/release.h"
#include "trace/model/model.h"
#include "trace/model/progress.h"
#include "trace/analysis/opinfo.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why an op on the path waited on its predecessor. */
enum trace_dep {
    TRACE_DEP_START,    /* the first op: from the start of the set's span */
    TRACE_DEP_EXPLICIT, /* its dependency_ids name the predecessor */
    TRACE_DEP_RAW,      /* it reads bytes the predecessor wrote */
    TRACE_DEP_TILE,     /* the predecessor is the previous op of its tile */
    TRACE_DEP_ENGINE,   /* its component was busy with the predecessor until it started */
    TRACE_DEP_PE,       /* the op of its PE that ended last before it started */
    TRACE_DEP_ORDER,    /* nothing else: the op that ended last before it started */
    TRACE_DEP_COUNT,
};

struct trace_path_step {
    uint64_t ev;              /* the model event */
    uint64_t pred;            /* its predecessor on the path, or UINT64_MAX (the first) */
    uint64_t wait;            /* cycles from pred's end (the span's start) to its start */
    enum trace_dep why;       /* why it waited on pred */
    uint32_t op;              /* trace_critpath_compute's: its op among the set's spans
                                 (trace_critpath_input.spans); 0 in a path made otherwise */
    struct trace_range range; /* RAW: the first bytes it read that pred wrote */
};

/* An op of a set as its path saw it: its start, its end (an op in flight: ending when the
 * path was computed), its track, its tile's index among those of the set (UINT32_MAX:
 * none). */
struct trace_op_span {
    uint64_t start, end;
    uint32_t track, tile;
};

struct trace_critpath {
    struct trace_path_step *steps; /* owned: from the first op to the last */
    size_t n;
    uint64_t start, end;        /* the span: the set's start, the last op's end */
    uint64_t ops;               /* ops considered */
    uint64_t decoded;           /* of those, ops whose details were read */
    bool with_addresses;        /* some op had memory ranges in its details */
    bool with_tiles;            /* some op had a tile_id */
    bool with_explicit;         /* some op had dependency_ids */
    bool truncated;             /* more ops than the decode budget: no ranges were read */
    struct trace_spaces spaces; /* the names of the ranges' spaces */
    /* owned, or NULL: step i's op as the set's spans had it (its start, end and track), kept
     * when asked for (trace_critpath_input.step_spans), so that a path drawn on a timeline
     * is not looked up again among the model's events */
    struct trace_op_span *spans;
};

/* What trace_critpath_compute works on. */
struct trace_critpath_input {
    const struct trace_model *m; /* finished */
    const uint64_t *events;      /* the set's events (any order); n of them */
    size_t n;
    /* events NULL: the set is the n events from first on, in order (a launch of one run of
     * events needs no array of them: ten million, 80 MB of fresh pages) */
    uint64_t first;
    uint64_t start; /* the span's start (the first step waits from it) */
    /* per events[i], decoded already (NULL: read here, from the op columns or the details,
     * for at most max_decode ops: with more, no ranges are read, which bounds the memory of
     * a path over millions); spaces are then those of info_spaces */
    const struct trace_opinfo *info;
    const struct trace_spaces *info_spaces;
    size_t max_decode;               /* 0: no limit */
    struct trace_progress *progress; /* may be NULL; cancelled: an empty path */
    /* may be NULL: called with each op whose details it reads here (its index in events,
     * its info), in the order of events, so that a caller needing them too reads them once
     * (the umbrella ops it leaves out are not read) */
    void (*each_info)(void *ctx, size_t i, const struct trace_opinfo *oi);
    void *each_ctx;
    /* may be NULL: with each_info, when the details are read ahead on a second thread and
     * no umbrella op is left out, an op read there is handed to this there rather than to
     * each_info (its index in events, its event's track, its details before their spaces
     * are named: the same arithmetic, bytes, dtype and stage); each op to one of the two, in
     * the order of events, a call seeing every call before it done */
    void (*each_raw)(void *ctx, size_t i, uint32_t track, const struct trace_opinfo_raw *raw);
    /* may be NULL: called with each event of the set (its index in events, the event), in
     * the order of events, in the pass that gathers the ops (a caller looking at every
     * event too does it in the same pass), before any op's details are read */
    void (*each_event)(void *ctx, size_t i, const struct trace_event *e);
    /* may be NULL: called once after that pass (and each_event's calls) with the number of
     * events of the set without op columns (trace_opinfo_cached false), before any op's
     * details are read: false, none are read (as with max_decode 1, each_info and each_raw
     * never called) */
    bool (*with_details)(void *ctx, size_t uncached);
    /* 0: the details read here are read ahead on a second thread for a set of at least
     * TRACE_CRITPATH_THREAD_MIN ops (it reads the model alone; the callbacks but each_raw
     * stay on the calling thread, in the same order, the path the same); 1: on the calling
     * thread alone;
     * 2: on a second thread whatever the set's size */
    unsigned threads;
    /* may be NULL: the arrays sized by the set's ops (for ten million ops, half a gigabyte)
     * are handed to it rather than freed here, for the caller to free once its analysis is
     * done (sim/util/release.h), behind it */
    struct sim_release *release;
    /* may be NULL: set to the set's ops' spans, each step's at its op, when release takes
     * them (valid until it frees them: the path's ops read there rather than from the
     * model's events, which its pass may have given back), else to NULL */
    const struct trace_op_span **spans;
    /* keep each step's span in the path (trace_critpath.spans: 24 bytes a step, taken as the
     * path is walked; trace_critinc_update keeps none) */
    bool step_spans;
};

enum { TRACE_CRITPATH_THREAD_MIN = 1 << 15 };

/* The ops of a path asked for in a viewer (the Gantt's C) whose memory ranges may be
 * decoded from their details and kept (17 bytes a range): at most this many. */
enum { TRACE_CRITPATH_KEEP_MAX = 200000 };

/* A with_details for such a path (each_ctx: the set's count of ops, a size_t): its ops'
 * ranges are read when every op has its op columns (read as the sweep goes, nothing kept,
 * whatever their number: a launch of ten million ops gets the path the verdict judges it
 * by, its reads after their writes included) or when the set has at most
 * TRACE_CRITPATH_KEEP_MAX ops; else none are (the path says truncated). */
bool trace_critpath_details_bounded(void *ctx, size_t uncached);

/* Compute the path of in into out (free with trace_critpath_fini). An empty set gives an
 * empty path. */
void trace_critpath_compute(const struct trace_critpath_input *in, struct trace_critpath *out);
void trace_critpath_fini(struct trace_critpath *p);

/* A copy of p into to, its steps its own (free with trace_critpath_fini). */
void trace_critpath_copy(struct trace_critpath *to, const struct trace_critpath *p);

/* The step of event ev on the path, or SIZE_MAX. */
size_t trace_critpath_find(const struct trace_critpath *p, uint64_t ev);

/* "start", "dependency_ids", "RAW", "tile", "engine", "PE order", "order". */
const char *trace_dep_name(enum trace_dep d);

/* Text of why step s waited ("reads tcm 0x200..0x400 it wrote"), into buf. Returns buf. */
char *trace_critpath_why(const struct trace_critpath *p, const struct trace_path_step *s, char *buf,
                         size_t size);

#endif
