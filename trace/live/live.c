/*
 * The live trace feed (see live.h): op log observers turn op records into model events as
 * they start and end, and stream each finished op to the trace writer; sync picks up what
 * the chip reports besides op records (markers, tokens) and the clock.
 */
#include "trace/live/live.h"

#include "sim/chip/msg.h"
#include "sim/chip/oplog.h"
#include "sim/chip/topology.h"
#include "sim/util/srcsite.h"
#include "sim/util/xalloc.h"
#include "trace/model/format.h"
#include "trace/analysis/hostspan.h"
#include "trace/analysis/metrics.h"
#include "trace/live/defer.h"
#include "trace/live/livepower.h"
#include "trace/live/resacc.h"
#include "trace/live/sumacc.h"
#include "trace/file/writer.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* A run of op records whose events are consecutive: record first_id + k is event
 * first_ev + k for k < n. A live run appends an event per record start, in record order,
 * so one run covers a whole simulation unless something else adds events in between. */
struct id_run {
    uint64_t first_id, first_ev, n;
};

/* A small cache from an interned string's address (op records carry the op log's interned
 * names) to the model's string id. */
enum { STR_CACHE = 256 };
struct str_cache_ent {
    const char *s;
    uint32_t id;
};

/* The track of an op record's component, keyed by the address of its interned id. */
struct track_ent {
    const char *component;
    uint32_t track;
};

struct trace_live {
    struct sim_chip *chip;       /* borrowed */
    struct sim_oplog *log;       /* borrowed: the chip's */
    const struct sim_topo *topo; /* borrowed */
    int observer;                /* our subscription */
    double clock_ghz;
    double cycles_per_tick; /* clock_ghz / SIM_TICKS_PER_NS */
    struct trace_model *m;  /* owned */
    uint16_t *site_of;      /* owned: model site of each call site id (sim/util/srcsite.h), 0:
                               not looked up yet */
    uint32_t nsite_of;
    struct sim_value *meta; /* owned: run_metadata as streamed */
    struct trace_writer *w; /* owned: the stream, NULL when none or finished */
    char *path;             /* owned: the trace file, or NULL */
    uint64_t bw_window;
    bool mem_events;
    bool finished;
    struct trace_sumacc *acc; /* owned: the summary metrics, counted as the run goes */
    bool stream_only;         /* the model keeps no events (trace_live_opts.stream_only) */
    uint64_t nev;             /* a stream-only feed's events so far (none in the model) */

    /* tracks per topology node, created with the node's first record */
    uint32_t *node_track; /* owned: UINT32_MAX until created */
    int32_t *node_eid;    /* owned: index among the nodes of the same engine */
    size_t nnodes;
    int32_t extra_eid[TRACE_ENGINE_COUNT]; /* next id for components outside the topology */
    uint32_t dram;                         /* interned "DRAM" */

    /* op record id -> event index */
    struct id_run *runs; /* owned, by first_id */
    size_t nruns, capruns;
    struct str_cache_ent cache[STR_CACHE];
    const char *kind_s[TRACE_KIND_COUNT]; /* op kinds seen (the op log's static strings) */
    uint8_t kind_v[TRACE_KIND_COUNT];
    int nkinds;
    struct track_ent *tracks; /* owned: open addressing by the component's address */
    size_t ntracks, captracks;
    uint32_t host_track; /* the host's, UINT32_MAX until its first span */
    uint64_t changes;    /* op starts + ends */
    bool dirty;          /* the model changed since the last trace_model_finish */

    bool end_checked;                   /* check_end has seen the run over */
    int chip_observer;                  /* our subscription to spans and traffic */
    struct trace_resacc *res;           /* owned: the resources' bandwidth samples */
    struct trace_livepower *power;      /* owned: the energy, NULL when unknown */
    struct sim_pack span_pack;          /* owned: a span's details being packed */
    const struct sim_host_msg **req_of; /* owned array of borrowed requests, by cmdq_id */
    size_t nreq;

    /* held still (trace_live_defer): what was heard meanwhile, applied once it may change */
    struct trace_defer *q; /* owned */
    bool hold;             /* the model is held still: whatever is heard is kept in q */
    bool q_traffic;        /* bytes on a resource were kept in q: so are the next ones */
    double q_now_ns;       /* the run's time when the last entry applied from q was heard */

    size_t markers_done; /* chip markers already in the model */
    size_t tok_first;    /* chip tokens before it are all in the model */
    uint8_t *tok_done;   /* owned: per chip token, 1 once in the model */
    size_t captok;
};

/* ---- helpers --------------------------------------------------------------------------- */

/* The cycle of an instant (an op's or token's start or end, a marker); up: rounded up,
 * for the run's length only (trace_cycles_from_ns). */
static uint64_t cycles(const struct trace_live *l, double ns, bool up)
{
    return trace_cycles_from_ns(ns, l->clock_ghz, up);
}

static double now_ns(const struct trace_live *l)
{
    return sim_ticks_to_ns(sim_engine_now(sim_chip_engine(l->chip)));
}

static uint32_t intern_opt(struct trace_model *m, const char *s)
{
    return s ? trace_model_intern(m, s, strlen(s)) : TRACE_NO_STR;
}

/* intern_opt for strings that live as long as the run (the op log's interned names): the
 * address is the key, so the common case is one comparison. */
static uint32_t intern_cached(struct trace_live *l, const char *s)
{
    if (!s)
        return TRACE_NO_STR;
    struct str_cache_ent *c = &l->cache[((uintptr_t)s >> 4) % STR_CACHE];
    if (c->s != s) {
        c->s = s;
        c->id = intern_opt(l->m, s);
    }
    return c->id;
}

static const char *str_opt(const struct trace_model *m, uint32_t id)
{
    return id == TRACE_NO_STR ? NULL : trace_model_str(m, id);
}

static uint32_t track_lookup(struct trace_live *l, const char *component);

static size_t track_slot(const struct track_ent *t, size_t cap, const char *component)
{
    size_t i = (size_t)(((uint64_t)(uintptr_t)component * 0x9E3779B97F4A7C15u) >> 40);
    for (i &= cap - 1; t[i].component && t[i].component != component; i = (i + 1) & (cap - 1))
        ;
    return i;
}

/* The track of a component: per topology node, engine ids in topology order. Op records
 * name their component with the op log's interned string, so its address is a key: each
 * distinct one is looked up by name once. */
static uint32_t track_of(struct trace_live *l, const char *component)
{
    size_t i = track_slot(l->tracks, l->captracks, component);
    if (l->tracks[i].component)
        return l->tracks[i].track;
    uint32_t t = track_lookup(l, component);
    if (2 * (l->ntracks + 1) > l->captracks) {
        size_t cap = 2 * l->captracks;
        struct track_ent *n = sim_xcalloc(cap, sizeof(*n));
        for (size_t j = 0; j < l->captracks; j++)
            if (l->tracks[j].component)
                n[track_slot(n, cap, l->tracks[j].component)] = l->tracks[j];
        free(l->tracks);
        sim_pack_fini(&l->span_pack);
        l->tracks = n;
        l->captracks = cap;
        i = track_slot(n, cap, component);
    }
    l->tracks[i] = (struct track_ent){component, t};
    l->ntracks++;
    return t;
}

/* The track of topology node `node`, made with its first event. */
static uint32_t node_track(struct trace_live *l, int node)
{
    if (l->node_track[node] == UINT32_MAX) {
        const char *id = sim_topo_node(l->topo, node)->id;
        l->node_track[node] =
            trace_model_track(l->m, id, trace_engine_for_component(id), l->node_eid[node]);
    }
    return l->node_track[node];
}

static uint32_t track_lookup(struct trace_live *l, const char *component)
{
    enum trace_engine eng = trace_engine_for_component(component);
    int node = sim_topo_find(l->topo, component);
    if (node >= 0)
        return node_track(l, node);
    /* not a node of the chip ("host"): ids after the chip's engines of that kind */
    size_t before = trace_model_track_count(l->m);
    uint32_t t = trace_model_track(l->m, component, eng, l->extra_eid[eng]);
    if (trace_model_track_count(l->m) > before)
        l->extra_eid[eng]++;
    return t;
}

static void remember_id(struct trace_live *l, uint64_t id, uint64_t ev)
{
    struct id_run *r = l->nruns ? &l->runs[l->nruns - 1] : NULL;
    if (r && id == r->first_id + r->n && ev == r->first_ev + r->n) {
        r->n++;
        return;
    }
    /* records arrive in id order, except one started before the feed subscribed and
     * seen at its end: it gets a run of its own, kept in id order */
    if (l->nruns == l->capruns) {
        l->capruns = l->capruns ? 2 * l->capruns : 16;
        l->runs = sim_xreallocarray(l->runs, l->capruns, sizeof(*l->runs));
    }
    assert(l->runs);
    size_t at = l->nruns;
    while (at && l->runs[at - 1].first_id > id)
        at--;
    memmove(&l->runs[at + 1], &l->runs[at], (l->nruns - at) * sizeof(*l->runs));
    l->runs[at] = (struct id_run){id, ev, 1};
    l->nruns++;
}

uint64_t trace_live_event_of_record(const struct trace_live *l, uint64_t id)
{
    /* the last run with first_id <= id */
    size_t lo = 0, hi = l->nruns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->runs[mid].first_id <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo || id - l->runs[lo - 1].first_id >= l->runs[lo - 1].n)
        return UINT64_MAX;
    return l->runs[lo - 1].first_ev + (id - l->runs[lo - 1].first_id);
}

/* ---- op records ------------------------------------------------------------------------- */

/* The kind of an op record: its op_kind is one of a few static strings, so each is parsed
 * once and then known by its address. */
static enum trace_op_kind kind_of(struct trace_live *l, const char *s)
{
    enum trace_op_kind kind;
    if (!s)
        return TRACE_KIND_UNKNOWN;
    for (int i = 0; i < l->nkinds; i++)
        if (l->kind_s[i] == s)
            return (enum trace_op_kind)l->kind_v[i];
    if (trace_op_kind_parse(s, &kind) < 0)
        kind = TRACE_KIND_UNKNOWN;
    if (l->nkinds < TRACE_KIND_COUNT) {
        l->kind_s[l->nkinds] = s;
        l->kind_v[l->nkinds++] = (uint8_t)kind;
    }
    return kind;
}

/* The model's site of call site id (sim/util/srcsite.h), added on first sight. */
static uint16_t site_of(struct trace_live *l, uint32_t id)
{
    if (id < l->nsite_of && l->site_of[id])
        return l->site_of[id];
    const struct sim_srcsite *s = sim_srcsite_get(id);
    if (!s)
        return TRACE_NO_SITE;
    if (id >= l->nsite_of) {
        uint32_t n = id + 64;
        l->site_of = sim_xreallocarray(l->site_of, n, sizeof(*l->site_of));
        memset(l->site_of + l->nsite_of, 0, (n - l->nsite_of) * sizeof(*l->site_of));
        l->nsite_of = n;
    }
    const char *base = sim_srcsite_basename(s->file);
    uint32_t file = trace_model_intern(l->m, base, strlen(base));
    uint32_t func = *s->func ? trace_model_intern(l->m, s->func, strlen(s->func)) : TRACE_NO_STR;
    return l->site_of[id] = trace_model_site(l->m, file, func, (uint32_t)s->line);
}

/* The ENGINE_EVENT of op record rec, in flight. */
static void op_event(struct trace_live *l, const struct sim_op_record *rec, struct trace_event *out)
{
    enum trace_op_kind kind = kind_of(l, rec->op_kind);
    int64_t cmdq = rec->note.cmdq_id;
    *out = (struct trace_event){
        .start = cycles(l, rec->t_start, false),
        .track = track_of(l, rec->component_id),
        .op = rec->op_name ? intern_cached(l, rec->op_name) : intern_opt(l->m, "unknown"),
        .layer = intern_cached(l, rec->note.layer_id),
        .tile = intern_cached(l, rec->note.tile_id),
        .cmdq_id = cmdq >= 0 && cmdq <= INT32_MAX ? (int32_t)cmdq : TRACE_NO_CMDQ,
        .op_kind = (uint8_t)kind,
        .flags = TRACE_EV_INFLIGHT,
        .site = rec->note.site ? site_of(l, rec->note.site) : TRACE_NO_SITE,
    };
}

/* A stream-only feed's op starting: counted, not kept. */
static void acc_start(struct trace_live *l, const struct sim_op_record *rec)
{
    struct trace_event ev;
    op_event(l, rec, &ev);
    const struct trace_track *t = trace_model_track_get(l->m, ev.track);
    trace_sumacc_start(l->acc, ev.track, t->engine, t->engine_id, ev.start);
    trace_livepower_op_start(l->power, ev.track, rec);
    remember_id(l, rec->note.id, l->nev++);
}

static uint64_t add_op(struct trace_live *l, const struct sim_op_record *rec)
{
    struct trace_event ev;
    op_event(l, rec, &ev);
    uint64_t i = trace_model_add_event(l->m, &ev);
    remember_id(l, rec->note.id, i);
    /* its DRAM traffic, from what the record says it moves (not from its params) */
    struct trace_transfer x[2];
    const struct trace_track *t = trace_model_track_get(l->m, ev.track);
    trace_model_set_transfers(l->m, i, x,
                              trace_dram_from_mem(t->engine, rec->op_name, &rec->mem, x));
    /* the params are known at the start: an op in flight shows them already */
    trace_model_set_details_packed(l->m, i, rec->t_start, NAN, rec->packed, rec->packed_len);
    return i;
}

static bool deferred(struct trace_live *l);

static void apply_start(struct trace_live *l, const struct sim_op_record *rec)
{
    if (l->stream_only) {
        acc_start(l, rec);
    } else {
        const struct trace_event *ev = trace_model_event(l->m, add_op(l, rec));
        const struct trace_track *t = trace_model_track_get(l->m, ev->track);
        trace_sumacc_start(l->acc, ev->track, t->engine, t->engine_id, ev->start);
        trace_livepower_op_start(l->power, ev->track, rec);
    }
    l->changes++;
    l->dirty = true;
}

/* The ENGINE_EVENT ev as the writer takes it. */
static void writer_event(const struct trace_live *l, const struct trace_event *ev, uint64_t end,
                         double start_ns, double end_ns, const struct sim_value *details,
                         struct trace_writer_event *out)
{
    const struct trace_track *t = trace_model_track_get(l->m, ev->track);
    *out = (struct trace_writer_event){
        .engine = t->engine,
        .engine_id = t->engine_id,
        .cmdq_id = ev->cmdq_id,
        .layer_id = str_opt(l->m, ev->layer),
        .tile_id = str_opt(l->m, ev->tile),
        .op = trace_model_str(l->m, ev->op),
        .start_cycle = ev->start,
        .end_cycle = end,
        .component_id = trace_model_str(l->m, t->name),
        .op_kind = ev->op_kind,
        .t_start_ns = start_ns,
        .t_end_ns = end_ns,
        .details = details,
    };
    const struct trace_site *s = trace_model_site_get(l->m, ev->site);
    if (s) {
        trace_model_site_text(l->m, ev->site, out->src_buf, sizeof(out->src_buf));
        out->src = out->src_buf;
        out->src_func = s->func != TRACE_NO_STR ? trace_model_str(l->m, s->func) : NULL;
    }
}

/* MEM_ACCESS_EVENTs of a finished DMA op ev: one per DRAM transfer, at its start (in the
 * model unless the feed is stream-only). */
static void add_mem_events(struct trace_live *l, const struct trace_event *ev,
                           const struct sim_value *details)
{
    const struct trace_track *t = trace_model_track_get(l->m, ev->track);
    struct trace_transfer x[2];
    int k = trace_dram_from_value(t->engine, trace_model_str(l->m, ev->op), details, x);
    for (int j = 0; j < k; j++) {
        bool write = x[j].flags & TRACE_XFER_WRITE;
        int64_t addr = sim_value_get_int(details, write ? "dst_addr" : "src_addr", 0);
        struct trace_mem_access a = {
            .cycle = ev->start,
            .addr = addr > 0 ? (uint64_t)addr : 0,
            .bytes = x[j].bytes,
            .mem_type = l->dram,
            .track = ev->track,
            .cmdq_id = ev->cmdq_id,
            .write = write,
        };
        if (!l->stream_only)
            trace_model_add_mem_access(l->m, &a);
        if (l->w) {
            struct trace_writer_mem wm = {
                .mem_type = "DRAM",
                .cycle = a.cycle,
                .write = write,
                .bytes = a.bytes,
                .addr = a.addr,
                .source_engine = t->engine,
                .source_engine_id = t->engine_id,
                .cmdq_id = a.cmdq_id,
                .component_id = trace_model_str(l->m, t->name),
            };
            trace_writer_mem_access(l->w, &wm);
        }
    }
}

/* MEM_ACCESS_EVENTs of a finished op, when asked for. */
static void mem_events_of(struct trace_live *l, const struct sim_op_record *rec,
                          const struct trace_event *ev)
{
    struct sim_value *replay = NULL;
    struct sim_value *params = sim_op_record_params(rec, &replay);
    struct sim_value *details = trace_details_from_op(params, replay);
    add_mem_events(l, ev, details);
    sim_value_free(params);
    sim_value_free(replay);
    sim_value_free(details);
}

/* A finished op ev (record rec, ending at cycle end, end_ns) to the trace file being
 * streamed, and its MEM_ACCESS_EVENTs when asked for. */
static void written_op(struct trace_live *l, const struct sim_op_record *rec,
                       const struct trace_event *ev, uint64_t end, double end_ns)
{
    if (l->w) {
        struct trace_writer_event we;
        writer_event(l, ev, end, rec->t_start, end_ns, NULL, &we);
        we.packed = rec->packed;
        we.packed_len = rec->packed_len;
        trace_writer_engine_event(l->w, &we);
    }
    if (l->mem_events)
        mem_events_of(l, rec, ev);
}

/* A stream-only feed's op ending at end (or still in flight then): counted and written. */
static void acc_end(struct trace_live *l, const struct sim_op_record *rec, uint64_t end,
                    double end_ns)
{
    struct trace_event ev;
    op_event(l, rec, &ev);
    if (trace_live_event_of_record(l, rec->note.id) == UINT64_MAX)
        acc_start(l, rec); /* started before the feed subscribed */
    if (end < ev.start)
        end = ev.start;
    const struct trace_track *t = trace_model_track_get(l->m, ev.track);
    struct trace_transfer x[2];
    int nx = trace_dram_from_mem(t->engine, rec->op_name, &rec->mem, x);
    trace_sumacc_end(l->acc, ev.track, ev.start, end, x, nx);
    trace_livepower_op_end(l->power, ev.track, trace_model_str(l->m, t->name), rec, ev.start, end);
    written_op(l, rec, &ev, end, end_ns);
}

static void on_start(void *ctx, const struct sim_op_record *rec)
{
    struct trace_live *l = ctx;
    if (deferred(l))
        trace_defer_op(l->q, now_ns(l), false, rec);
    else
        apply_start(l, rec);
}

static void apply_end(struct trace_live *l, const struct sim_op_record *rec)
{
    if (l->stream_only) {
        acc_end(l, rec, cycles(l, rec->t_end, false), rec->t_end);
        l->changes++;
        l->dirty = true;
        return;
    }
    uint64_t i = trace_live_event_of_record(l, rec->note.id);
    if (i == UINT64_MAX)
        i = add_op(l, rec); /* started before the feed subscribed */
    const struct trace_event *ev = trace_model_event(l->m, i);
    uint64_t end = cycles(l, rec->t_end, false);
    if (end < ev->start)
        end = ev->start;
    trace_model_end_event(l->m, i, end);
    trace_model_set_details_packed(l->m, i, rec->t_start, rec->t_end, rec->packed, rec->packed_len);
    struct trace_transfer x[2];
    int nx = trace_dram_from_mem(trace_model_track_get(l->m, ev->track)->engine, rec->op_name,
                                 &rec->mem, x);
    trace_sumacc_end(l->acc, ev->track, ev->start, end, x, nx);
    trace_livepower_op_end(l->power, ev->track,
                           trace_model_str(l->m, trace_model_track_get(l->m, ev->track)->name), rec,
                           ev->start, end);
    for (size_t k = 0; k < rec->n_dependency_ids; k++) { /* ADR-0052 D1, when a kernel sets them */
        uint64_t on = rec->dependency_ids[k] >= 0
                          ? trace_live_event_of_record(l, (uint64_t)rec->dependency_ids[k])
                          : UINT64_MAX;
        if (on != UINT64_MAX && on != i)
            trace_model_add_dep(l->m, i, on);
    }
    written_op(l, rec, trace_model_event(l->m, i), end, rec->t_end);
    l->changes++;
    l->dirty = true;
}

static void on_end(void *ctx, const struct sim_op_record *rec)
{
    struct trace_live *l = ctx;
    if (deferred(l))
        trace_defer_op(l->q, now_ns(l), true, rec);
    else
        apply_end(l, rec);
}

/* ---- host spans and traffic ------------------------------------------------------------- */

/* The request a span belongs to: the one it carries (remembered for its cmdq_id), or the
 * one seen last for its cmdq_id (a CPU servicing a "Done"). */
static const struct sim_host_msg *span_request(struct trace_live *l, const struct sim_span *s)
{
    const struct sim_host_msg *req = trace_hostspan_request(s);
    int64_t cmdq = s->msg ? s->msg->cmdq_id : -1;
    if (cmdq < 0 || cmdq > INT32_MAX)
        return req;
    size_t i = (size_t)cmdq;
    if (req) {
        if (i >= l->nreq) {
            size_t n = l->nreq ? l->nreq : 16;
            while (n <= i)
                n *= 2;
            l->req_of = sim_xreallocarray(l->req_of, n, sizeof(*l->req_of));
            memset(l->req_of + l->nreq, 0, (n - l->nreq) * sizeof(*l->req_of));
            l->nreq = n;
        }
        l->req_of[i] = req;
        return req;
    }
    return i < l->nreq ? l->req_of[i] : NULL;
}

/* A span of host traffic or CPU work: a finished HOST ENGINE_EVENT with its details. */
static void apply_span(struct trace_live *l, const struct trace_defer_span *s)
{
    if (s->kind == SIM_SPAN_HOST_LINK && l->host_track == UINT32_MAX)
        l->host_track = track_lookup(l, TRACE_HOST_COMPONENT);
    double t0 = s->t_start_ns, t1 = s->t_end_ns;
    int64_t cmdq = s->cmdq_id;
    uint64_t start = cycles(l, t0, false), end = cycles(l, t1, true);
    struct trace_event ev = {
        .start = start,
        .end = end > start ? end : start,
        .track = s->kind == SIM_SPAN_HOST_LINK ? l->host_track : node_track(l, s->node),
        .op = intern_opt(l->m, s->op), /* a control message names itself in an array */
        .cmdq_id = cmdq >= 0 && cmdq <= INT32_MAX ? (int32_t)cmdq : TRACE_NO_CMDQ,
        .op_kind = TRACE_KIND_UNKNOWN,
    };
    if (l->w) {
        struct trace_writer_event we;
        writer_event(l, &ev, ev.end, t0, t1, NULL, &we);
        we.packed = s->packed;
        we.packed_len = s->packed_len;
        trace_writer_engine_event(l->w, &we);
    }
    trace_sumacc_time(l->acc, ev.end);
    trace_livepower_span(l->power,
                         trace_model_str(l->m, trace_model_track_get(l->m, ev.track)->name),
                         ev.start, ev.end);
    if (l->stream_only) {
        l->nev++;
    } else {
        uint64_t i = trace_model_add_event(l->m, &ev);
        trace_model_set_details_packed(l->m, i, t0, t1, s->packed, s->packed_len);
    }
    l->dirty = true;
}

static void on_span(void *ctx, const struct sim_span *s)
{
    struct trace_live *l = ctx;
    l->span_pack.len = 0; /* the buffer is reused: no allocation once it has grown */
    trace_hostspan_pack(s, span_request(l, s), &l->span_pack);
    struct trace_defer_span d = {
        .kind = (int)s->kind,
        .node = s->node,
        .cmdq_id = s->msg ? s->msg->cmdq_id : -1,
        .t_start_ns = sim_ticks_to_ns(s->t_start),
        .t_end_ns = sim_ticks_to_ns(s->t_end),
        .op = trace_hostspan_op(s),
        .packed = l->span_pack.p,
        .packed_len = l->span_pack.len,
    };
    if (deferred(l))
        trace_defer_span(l->q, now_ns(l), &d);
    else
        apply_span(l, &d);
}

static void apply_traffic(struct trace_live *l, uint32_t res, bool write, uint64_t nbytes,
                          uint64_t c0, uint64_t c1)
{
    trace_resacc_add(l->res, res, write, nbytes, c0, c1);
    trace_livepower_traffic(l->power, res, write, nbytes, c0, c1);
    l->dirty = true;
}

/* Bytes on an HBM or a link: into the resource's bandwidth samples. Called for every
 * memory access and link crossing: ticks become cycles by one multiplication (the exact
 * rounding of event times does not matter to a window). Counted at once even while the
 * model is held (the samples reach it at the next sync), unless they would widen the
 * samples' windows, which writes the model: then kept, with every report after them. */
static void on_traffic(void *ctx, uint32_t res, bool write, uint64_t nbytes, sim_time_t t0,
                       sim_time_t t1)
{
    struct trace_live *l = ctx;
    double c0 = (double)t0 * l->cycles_per_tick, c1 = ceil((double)t1 * l->cycles_per_tick);
    if (deferred(l) && (l->q_traffic || !trace_resacc_fits(l->res, (uint64_t)c0, (uint64_t)c1))) {
        l->q_traffic = true;
        trace_defer_traffic(l->q, now_ns(l), res, write, nbytes, (uint64_t)c0, (uint64_t)c1);
        return;
    }
    apply_traffic(l, res, write, nbytes, (uint64_t)c0, (uint64_t)c1);
}

/* ---- held still ------------------------------------------------------------------------ */

/* Whether what is heard now waits in q: while the model is held still, and after, until q
 * is applied (what comes after it must not reach the model before it). */
static bool deferred(struct trace_live *l)
{
    return l->hold || trace_defer_count(l->q);
}

static void replay_at(void *ctx, double at_ns)
{
    struct trace_live *l = ctx;
    l->q_now_ns = at_ns > l->q_now_ns ? at_ns : l->q_now_ns;
}

static void replay_op(void *ctx, bool end, const struct sim_op_record *rec)
{
    if (end)
        apply_end(ctx, rec);
    else
        apply_start(ctx, rec);
}

static void replay_span(void *ctx, const struct trace_defer_span *s)
{
    apply_span(ctx, s);
}

static void replay_traffic(void *ctx, uint32_t res, bool write, uint64_t nbytes, uint64_t c0,
                           uint64_t c1)
{
    apply_traffic(ctx, res, write, nbytes, c0, c1);
}

void trace_live_defer(struct trace_live *l, bool hold)
{
    l->hold = hold;
}

size_t trace_live_deferred(const struct trace_live *l, size_t *bytes)
{
    if (bytes)
        *bytes = trace_defer_bytes(l->q);
    return trace_defer_count(l->q);
}

size_t trace_live_catch_up(struct trace_live *l, size_t max)
{
    if (l->hold)
        return trace_defer_count(l->q);
    struct trace_defer_sink sink = {replay_at, replay_op, replay_span, replay_traffic, l};
    trace_defer_replay(l->q, &sink, max);
    size_t left = trace_defer_count(l->q);
    if (!left)
        l->q_traffic = false;
    return left;
}

/* ---- markers and tokens ------------------------------------------------------------------ */

static struct sim_value *origin_details(const char *kernel, int64_t cmdq_id)
{
    if (!kernel && cmdq_id < 0)
        return NULL;
    struct sim_value *v = sim_value_map();
    if (kernel)
        sim_value_map_set_str(v, "kernel", kernel);
    if (cmdq_id >= 0)
        sim_value_map_set_int(v, "cmdq_id", cmdq_id);
    return v;
}

/* The chip's markers raised since the last sync, up to cycle upto (UINT64_MAX: all). */
static void sync_markers(struct trace_live *l, uint64_t upto)
{
    size_t n = sim_chip_marker_count(l->chip);
    for (; l->markers_done < n; l->markers_done++) {
        const struct sim_chip_marker *k = sim_chip_marker(l->chip, l->markers_done);
        if (cycles(l, k->t_ns, false) > upto)
            break; /* (the model is behind the run: the next syncs take it) */
        struct trace_marker mk = {
            .cycle = cycles(l, k->t_ns, false),
            .name = intern_opt(l->m, k->name ? k->name : ""),
            .track = k->component ? track_of(l, k->component) : UINT32_MAX,
            .details = origin_details(k->kernel, k->cmdq_id),
        };
        if (k->error) { /* a failure's marker says what failed */
            if (!mk.details)
                mk.details = sim_value_map();
            sim_value_map_set_str(mk.details, "error", k->error);
        }
        if (l->w) {
            struct trace_writer_marker wm = {
                .name = trace_model_str(l->m, mk.name),
                .cycle = mk.cycle,
                .component_id = k->component,
                .details = mk.details,
            };
            trace_writer_marker(l->w, &wm);
        }
        trace_model_add_marker(l->m, &mk);
        l->dirty = true;
    }
}

/* The chip's tokens closed since the last sync, those ending by cycle upto. */
static void sync_tokens(struct trace_live *l, uint64_t upto)
{
    size_t n = sim_chip_token_count(l->chip);
    if (n > l->captok) {
        size_t c = l->captok ? l->captok : 64;
        while (c < n)
            c *= 2;
        l->tok_done = sim_xreallocarray(l->tok_done, c, 1);
        memset(l->tok_done + l->captok, 0, c - l->captok);
        l->captok = c;
    }
    for (size_t i = l->tok_first; i < n; i++) {
        const struct sim_chip_token *t = sim_chip_token(l->chip, i);
        if (l->tok_done[i] || t->open)
            continue;
        uint64_t s = cycles(l, t->t_start_ns, false), e = cycles(l, t->t_end_ns, false);
        if (e > upto)
            continue;
        struct trace_token tk = {
            .start = s,
            .end = e > s ? e : s,
            .token_index = t->index,
            .decode = t->decode,
            .details = origin_details(t->kernel, t->cmdq_id),
        };
        if (tk.details && t->component)
            sim_value_map_set_str(tk.details, "component_id", t->component);
        if (l->w) {
            struct trace_writer_token wt = {tk.decode, tk.token_index, tk.start, tk.end,
                                            tk.details};
            trace_writer_token(l->w, &wt);
        }
        trace_model_add_token(l->m, &tk);
        l->tok_done[i] = 1;
        l->dirty = true;
    }
    while (l->tok_first < n && l->tok_done[l->tok_first])
        l->tok_first++;
}

/* The run is over (nothing left to run) but not finished: ops that never ended, processes
 * still waiting (a deadlock). Said once, as a failure at the end. */
static void check_end(struct trace_live *l)
{
    struct sim_engine *e = sim_chip_engine(l->chip);
    struct sim_step_info next;
    if (l->end_checked || sim_engine_peek(e, &next))
        return;
    l->end_checked = true;
    size_t pending = sim_oplog_pending_count(l->log), waiting = sim_engine_live_procs(e);
    char what[160];
    if (pending)
        snprintf(what, sizeof(what), "the run ended with %zu op record%s started and never ended",
                 pending, pending == 1 ? "" : "s");
    else if (waiting)
        snprintf(what, sizeof(what), "the run ended with %zu process%s still waiting (a deadlock)",
                 waiting, waiting == 1 ? "" : "es");
    else
        return;
    sim_chip_add_failure(l->chip, what, NULL, NULL, -1);
}

void trace_live_sync(struct trace_live *l)
{
    if (l->hold)
        return; /* held still: nothing changes it */
    /* behind the run (what was heard while it was held not all applied yet): the model as
     * the run was when the last of it applied was heard, its samples and energy as they
     * were, the run's end not yet */
    bool behind = trace_defer_count(l->q) > 0;
    if (!behind)
        check_end(l);
    uint64_t now = cycles(l, behind ? l->q_now_ns : now_ns(l), true);
    if (behind && now < trace_model_now(l->m))
        now = trace_model_now(l->m);
    if (now != trace_model_now(l->m) || trace_model_t_max(l->m) < now) {
        trace_model_set_now(l->m, now);
        l->dirty = true;
    }
    sync_markers(l, behind ? now : UINT64_MAX);
    sync_tokens(l, behind ? now : UINT64_MAX);
    if (!behind)
        trace_resacc_flush(l->res);
    /* the energy, with the model: the same at every step (a stream-only feed's model is
     * never shown: its energy goes to the file when it closes) */
    if (l->power && l->dirty && !l->stream_only && !behind)
        trace_livepower_publish(l->power, l->m, trace_model_t_max(l->m));
    if (l->dirty) /* the model's generation moves only when something did */
        trace_model_finish(l->m);
    l->dirty = false;
}

/* ---- life ------------------------------------------------------------------------------ */

static void iso8601(int64_t t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "1970-01-01T00:00:00Z");
}

static struct sim_value *metadata(const struct trace_live_opts *o)
{
    char ts[32];
    iso8601(o->timestamp, ts, sizeof(ts));
    struct sim_value *v = sim_value_map();
    if (o->run_id) {
        sim_value_map_set_str(v, "run_id", o->run_id);
    } else {
        char id[48], compact[32];
        time_t tt = (time_t)o->timestamp;
        struct tm tm;
        if (!gmtime_r(&tt, &tm) || !strftime(compact, sizeof(compact), "%Y%m%dT%H%M%SZ", &tm))
            snprintf(compact, sizeof(compact), "0");
        snprintf(id, sizeof(id), "npuscope-%s", compact);
        sim_value_map_set_str(v, "run_id", id);
    }
    sim_value_map_set_str(v, "timestamp", ts);
    sim_value_map_set_str(v, "model_name", o->model_name ? o->model_name : "");
    sim_value_map_set_str(v, "workload_type", o->workload_type ? o->workload_type : "CUSTOM");
    if (o->prefill_tokens >= 0 || o->decode_tokens >= 0) {
        struct sim_value *tk = sim_value_map();
        sim_value_map_set_int(tk, "prefill_tokens", o->prefill_tokens > 0 ? o->prefill_tokens : 0);
        sim_value_map_set_int(tk, "decode_tokens", o->decode_tokens > 0 ? o->decode_tokens : 0);
        sim_value_map_set_take(v, "tokens", tk);
    }
    sim_value_map_set_str(v, "cmdq_file", o->cmdq_file ? o->cmdq_file : "");
    if (o->notes)
        sim_value_map_set_str(v, "notes", o->notes);
    if (o->nplugins) {
        struct sim_value *pl = sim_value_list();
        for (size_t i = 0; i < o->nplugins; i++)
            sim_value_list_push_take(pl, sim_value_str(o->plugins[i]));
        sim_value_map_set_take(v, "plugins", pl);
    }
    sim_value_map_set_bool(v, "incomplete", false);
    return v;
}

/* config_snapshot: clock_ghz at the top (where readers look for it), then the config. */
static struct sim_value *config_snapshot(const struct sim_config *cfg)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_float(v, "clock_ghz", cfg->clock_ghz);
    const struct sim_value *s = cfg->snapshot;
    if (s && s->type == SIM_V_MAP)
        for (size_t i = 0; i < s->u.map.len; i++)
            if (strcmp(s->u.map.keys[i], "clock_ghz") != 0)
                sim_value_map_set_take(v, s->u.map.keys[i], sim_value_clone(s->u.map.vals[i]));
    return v;
}

int trace_live_new(struct sim_chip *chip, const struct trace_live_opts *o, struct trace_live **out,
                   struct diag *d)
{
    struct trace_live *l = sim_xcalloc(1, sizeof(*l));
    l->observer = l->chip_observer = -1;
    l->chip = chip;
    l->log = sim_chip_oplog(chip);
    l->topo = sim_chip_topo(chip);
    l->clock_ghz = sim_chip_config(chip)->clock_ghz;
    l->cycles_per_tick = l->clock_ghz / SIM_TICKS_PER_NS;
    l->bw_window = o->bw_window;
    l->mem_events = o->mem_events;
    l->m = trace_model_new();
    l->q = trace_defer_new();
    l->meta = metadata(o);
    trace_model_set_metadata_take(l->m, sim_value_clone(l->meta));
    trace_model_set_config_take(l->m, config_snapshot(sim_chip_config(chip)));
    l->dram = trace_model_intern(l->m, "DRAM", 4);

    l->nnodes = sim_topo_node_count(l->topo);
    l->node_track = sim_xreallocarray(NULL, l->nnodes ? l->nnodes : 1, sizeof(*l->node_track));
    l->node_eid = sim_xreallocarray(NULL, l->nnodes ? l->nnodes : 1, sizeof(*l->node_eid));
    l->captracks = 64;
    l->tracks = sim_xcalloc(l->captracks, sizeof(*l->tracks));
    l->host_track = UINT32_MAX;
    int32_t count[TRACE_ENGINE_COUNT] = {0};
    for (size_t i = 0; i < l->nnodes; i++) {
        enum trace_engine e = trace_engine_for_component(sim_topo_node(l->topo, (int)i)->id);
        l->node_track[i] = UINT32_MAX;
        l->node_eid[i] = count[e]++;
    }
    memcpy(l->extra_eid, count, sizeof(count));

    if (o->trace_path) {
        struct stat st;
        if (stat(o->trace_path, &st) == 0 && S_ISDIR(st.st_mode)) {
            trace_live_free(l);
            return diag_set(d, SIM_EIO, o->trace_path, 0, 0, NULL,
                            "cannot write the trace: it is a directory");
        }
        l->w = trace_writer_open(o->trace_path, l->meta, trace_model_config(l->m), d);
        if (!l->w) {
            trace_live_free(l);
            return -SIM_EIO;
        }
        l->path = sim_xstrdup(o->trace_path);
        l->stream_only = o->stream_only;
    }
    l->acc = trace_sumacc_new(l->bw_window);
    size_t nres = sim_chip_resource_count(chip);
    uint32_t *names = sim_xreallocarray(NULL, nres ? nres : 1, sizeof(*names));
    for (size_t i = 0; i < nres; i++) {
        struct sim_chip_resource r;
        sim_chip_resource(chip, i, &r);
        names[i] = intern_opt(l->m, r.name);
    }
    l->res = trace_resacc_new(l->m, l->bw_window, nres, names);
    free(names);
    l->power = trace_livepower_new(chip, l->bw_window);
    struct sim_oplog_observer obs = {.on_start = on_start, .on_end = on_end, .ctx = l};
    l->observer = sim_oplog_observe(l->log, &obs);
    struct sim_chip_observer cobs = {.on_span = on_span, .on_traffic = on_traffic, .ctx = l};
    l->chip_observer = sim_chip_observe(chip, &cobs);
    trace_model_set_now(l->m, cycles(l, now_ns(l), true));
    l->dirty = true;
    *out = l;
    return 0;
}

void trace_live_resumed(struct trace_live *l)
{
    trace_writer_rewind(l->w);
}

void trace_live_free(struct trace_live *l)
{
    if (!l)
        return;
    if (l->observer >= 0)
        sim_oplog_unobserve(l->log, l->observer);
    if (l->chip_observer >= 0)
        sim_chip_unobserve(l->chip, l->chip_observer);
    trace_defer_free(l->q);
    trace_resacc_free(l->res);
    trace_livepower_free(l->power);
    trace_sumacc_free(l->acc);
    free(l->req_of);
    trace_writer_abort(l->w);
    trace_model_free(l->m);
    sim_value_free(l->meta);
    free(l->path);
    free(l->node_track);
    free(l->tracks);
    sim_pack_fini(&l->span_pack);
    free(l->node_eid);
    free(l->runs);
    free(l->tok_done);
    free(l->site_of);
    free(l);
}

struct trace_model *trace_live_model(const struct trace_live *l)
{
    return l->m;
}

uint64_t trace_live_op_changes(const struct trace_live *l)
{
    return l->changes;
}

const struct trace_resacc *trace_live_resources(const struct trace_live *l)
{
    return l->res;
}

const struct trace_sumacc *trace_live_sumacc(const struct trace_live *l)
{
    return l->acc;
}

struct sim_chip *trace_live_chip(const struct trace_live *l)
{
    return l->chip;
}

const char *trace_live_path(const struct trace_live *l)
{
    return l->path;
}

/* ---- writing --------------------------------------------------------------------------- */

/* End of an event as written: in-flight ops end at now. */
static uint64_t written_end(const struct trace_live *l, const struct trace_event *ev)
{
    if (!(ev->flags & TRACE_EV_INFLIGHT))
        return ev->end;
    uint64_t now = trace_model_now(l->m);
    return now > ev->start ? now : ev->start;
}

/* bandwidth_samples and summary_metrics (accumulated by a stream-only feed, else from the
 * model), then commit. */
static int close_writer(struct trace_live *l, struct trace_writer *w, struct diag *d)
{
    struct trace_bw_sample *samples;
    size_t n;
    struct sim_value *summary;
    struct trace_metrics x;
    if (l->stream_only) {
        n = trace_sumacc_bandwidth(l->acc, &samples);
        trace_sumacc_metrics(l->acc, l->m, &x);
    } else {
        n = trace_metrics_bandwidth(l->m, l->bw_window, &samples);
        trace_metrics_compute(l->m, &x);
    }
    summary = trace_metrics_to_value(&x);
    uint64_t cycles_total = x.cycles_total;
    trace_metrics_fini(&x);
    trace_writer_resource_samples(w, l->m);
    struct trace_power_sample *power = NULL;
    size_t npower = 0;
    if (l->power) { /* summary_metrics.energy and power_samples (trace/FORMAT.md) */
        struct sim_value *e = trace_livepower_result(l->power, cycles_total, &power, &npower);
        sim_value_map_set_take(summary, "energy", e);
        trace_writer_power_samples(w, power, npower);
    }
    int rc = trace_writer_close(w, samples, n, summary, d);
    sim_value_free(summary);
    free(samples);
    free(power);
    return rc;
}

int trace_live_write(struct trace_live *l, const char *path, bool incomplete, struct diag *d)
{
    if (l->stream_only)
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        "cannot write the trace: the run keeps no events (it streams them)");
    trace_live_catch_up(l, SIZE_MAX);
    trace_live_sync(l);
    struct sim_value *meta = sim_value_clone(l->meta);
    sim_value_map_set_bool(meta, "incomplete", incomplete);
    struct trace_writer *w = trace_writer_open(path, meta, trace_model_config(l->m), d);
    sim_value_free(meta);
    if (!w)
        return -SIM_EIO;
    const struct trace_model *m = l->m;
    double now = now_ns(l);
    int err = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m) && !err; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        struct sim_value *det = trace_model_event_details(m, i);
        bool inflight = ev->flags & TRACE_EV_INFLIGHT;
        double t0 = NAN, t1 = NAN;
        trace_model_event_ns(m, i, &t0, &t1);
        struct trace_writer_event we;
        writer_event(l, ev, written_end(l, ev), t0, inflight ? now : t1, det, &we);
        we.ndeps = trace_model_event_deps(m, i, &we.deps); /* events first, in model order */
        err = trace_writer_engine_event(w, &we);
        sim_value_free(det);
    }
    for (size_t i = 0; i < trace_model_mem_access_count(m) && !err; i++) {
        const struct trace_mem_access *a = trace_model_mem_access(m, i);
        const struct trace_track *t = trace_model_track_get(m, a->track);
        struct trace_writer_mem wm = {
            .mem_type = trace_model_str(m, a->mem_type),
            .cycle = a->cycle,
            .write = a->write,
            .bytes = a->bytes,
            .addr = a->addr,
            .source_engine = t->engine,
            .source_engine_id = t->engine_id,
            .cmdq_id = a->cmdq_id,
            .component_id = trace_model_str(m, t->name),
        };
        err = trace_writer_mem_access(w, &wm);
    }
    for (size_t i = 0; i < trace_model_token_count(m) && !err; i++) {
        const struct trace_token *tk = trace_model_token(m, i);
        struct trace_writer_token wt = {tk->decode, tk->token_index, tk->start, tk->end,
                                        tk->details};
        err = trace_writer_token(w, &wt);
    }
    for (size_t i = 0; i < trace_model_marker_count(m) && !err; i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        struct trace_writer_marker wm = {
            .name = trace_model_str(m, k->name),
            .cycle = k->cycle,
            .component_id = k->track != UINT32_MAX
                                ? trace_model_str(m, trace_model_track_get(m, k->track)->name)
                                : NULL,
            .details = k->details,
        };
        err = trace_writer_marker(w, &wm);
    }
    return close_writer(l, w, d); /* reports a failed write with its reason */
}

int trace_live_finish(struct trace_live *l, bool complete, struct diag *d)
{
    if (!l->path || l->finished)
        return 0;
    l->finished = true;
    trace_live_catch_up(l, SIZE_MAX);
    trace_live_sync(l);
    struct trace_writer *w = l->w;
    l->w = NULL; /* nothing more goes to the stream */
    if (!complete && !l->stream_only) {
        trace_writer_abort(w);
        return trace_live_write(l, l->path, true, d);
    }
    /* ops still in flight (a program that never finished) end at now */
    double now = now_ns(l);
    if (l->stream_only) {
        l->w = w; /* acc_end writes to the stream */
        for (size_t k = 0; k < sim_oplog_pending_count(l->log); k++)
            acc_end(l, sim_oplog_pending(l->log, k), trace_model_now(l->m), now);
        l->w = NULL;
        return close_writer(l, w, d);
    }
    for (size_t k = 0; k < sim_oplog_pending_count(l->log); k++) {
        uint64_t i = trace_live_event_of_record(l, sim_oplog_pending(l->log, k)->note.id);
        if (i == UINT64_MAX)
            continue;
        const struct trace_event *ev = trace_model_event(l->m, i);
        struct sim_value *det = trace_model_event_details(l->m, i);
        double t0 = NAN, t1 = NAN;
        trace_model_event_ns(l->m, i, &t0, &t1);
        struct trace_writer_event we;
        writer_event(l, ev, written_end(l, ev), t0, now, det, &we);
        trace_writer_engine_event(w, &we);
        sim_value_free(det);
    }
    return close_writer(l, w, d);
}
