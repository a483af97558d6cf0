/*
 * Per-region accounting (see regions.h): first the split (which region each op belongs
 * to, and each region's span), then one pass over each region's ops (taken in the model's
 * order) for counts, durations and bytes, and one sweep over them sorted by start for the
 * busy cycles per track, per engine kind, over every engine and per op name. Window splits
 * (run, marker) sweep their windows one after the other, so their busy cycles come from one
 * sweep over the run in start order, cut at each window's edges. The work is O(n) in the
 * events, whatever the number of regions.
 */
#include "trace/analysis/regions.h"

#include "trace/analysis/regions_int.h"

#include "sim/data/value.h"
#include "sim/util/keytab.h"
#include "sim/util/xalloc.h"
#include "trace/model/radix.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* End of an event: in-flight events run until now. */
static uint64_t ev_end(const struct trace_model *m, const struct trace_event *ev)
{
    if (ev->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(m);
        return now > ev->start ? now : ev->start;
    }
    return ev->end;
}

struct trace_region *trace_regions_add_(struct trace_regions *rs, const char *name, int32_t cmdq,
                                        uint64_t start, uint64_t end)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 16;
        rs->v = sim_xreallocarray(rs->v, rs->cap, sizeof(*rs->v));
    }
    struct trace_region *r = &rs->v[rs->n++];
    *r = (struct trace_region){.kind = rs->kind,
                               .name = sim_xstrdup(name),
                               .cmdq_id = cmdq,
                               .start = start,
                               .end = end > start ? end : start};
    return r;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort and remove duplicates; returns the new length. */
static size_t uniq(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (!n)
        return 0;
    qsort(base, n, size, cmp);
    char *p = base;
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (cmp(p + (i - 1) * size, p + i * size) != 0)
            memmove(p + k++ * size, p + i * size, size);
    return k;
}

/* ---- the splits ------------------------------------------------------------------------ */

static void split_run(struct trace_regions *rs)
{
    trace_regions_add_(rs, "run", TRACE_NO_CMDQ, 0, trace_model_t_max(rs->m));
    for (uint64_t i = 0; i < rs->nevents; i++)
        rs->of[i] = 0;
}

/* The launch's kernel name from a marker's or token's details ({"kernel", "cmdq_id"}, as
 * npuscope writes them), into names[] at the launch's position. */
static void launch_name_from(const struct sim_value *details, const int32_t *ids, size_t n,
                             const char **names)
{
    const char *kernel = sim_value_get_str(details, "kernel", NULL);
    const struct sim_value *id = sim_value_map_get(details, "cmdq_id");
    if (!kernel || !kernel[0] || !id || id->type != SIM_V_INT || id->u.i < INT32_MIN ||
        id->u.i > INT32_MAX)
        return;
    int32_t key = (int32_t)id->u.i;
    const int32_t *hit = bsearch(&key, ids, n, sizeof(*ids), cmp_i32);
    if (hit && !names[hit - ids])
        names[hit - ids] = kernel;
}

/* The name of a host message from its HOST event i: a KernelLaunch's kernel (details
 * "kernel"), else the message type ("MemoryWrite", "MemoryRead"); NULL for another op. */
char *trace_regions_host_name_(const struct trace_model *m, uint64_t i)
{
    const char *op = trace_model_str(m, trace_model_event(m, i)->op);
    if (strcmp(op, "MemoryWrite") == 0 || strcmp(op, "MemoryRead") == 0)
        return sim_xstrdup(op);
    if (strcmp(op, "KernelLaunch") != 0)
        return NULL;
    struct sim_value *d = trace_model_event_details(m, i);
    const char *k = sim_value_get_str(d, "kernel", NULL);
    char *name = sim_xstrdup(k && k[0] ? k : op);
    sim_value_free(d);
    return name;
}

/* Where cmdq c is in ids[0..n) (sorted), or NULL. *last holds the previous hit: a launch's
 * ops come in runs, so most lookups are answered without a search. */
static const int32_t *find_cmdq(const int32_t *ids, size_t n, int32_t c, const int32_t **last)
{
    if (*last && **last == c)
        return *last; /* cppcheck-suppress identicalInnerCondition ; the hit, not a test */
    const int32_t *hit = bsearch(&c, ids, n, sizeof(*ids), cmp_i32);
    if (hit)
        *last = hit;
    return hit;
}

static void extend(struct trace_region *r, uint64_t s, uint64_t e, bool *seen)
{
    if (!*seen || s < r->start)
        r->start = s;
    if (!*seen || e > r->end)
        r->end = e;
    *seen = true;
}

/* A run of consecutive events of one cmdq_id (or of none) in the model's order: where it
 * begins, and the first start and the latest end of its events. */
struct lrun {
    uint64_t first, start, end;
    int32_t cmdq;
};

/* Append the launches of cmdq_ids ids[0..n) (sorted, distinct), each named by its kernel: from
 * a marker's or token's details, else from its first HOST event hosts[] (in event order, nhost
 * of them) that names a host message; "cmdq N" when nothing does. Their spans are left 0. */
void trace_regions_add_launches_(struct trace_regions *rs, const int32_t *ids, size_t n,
                                 const uint64_t *hosts, size_t nhost)
{
    const struct trace_model *m = rs->m;
    const char **names = sim_xcalloc(n ? n : 1, sizeof(*names));
    for (size_t k = 0; k < trace_model_marker_count(m); k++)
        launch_name_from(trace_model_marker(m, k)->details, ids, n, names);
    for (size_t k = 0; k < trace_model_token_count(m); k++)
        launch_name_from(trace_model_token(m, k)->details, ids, n, names);
    /* a launch that says nothing of its kernel, or a host message: from its HOST events */
    char **owned = sim_xcalloc(n ? n : 1, sizeof(*owned));
    const int32_t *last = NULL;
    for (size_t k = 0; k < nhost; k++) {
        const int32_t *hit = find_cmdq(ids, n, rs->ev[hosts[k]].cmdq_id, &last);
        if (!hit || names[hit - ids])
            continue;
        char *name = trace_regions_host_name_(m, hosts[k]);
        if (name)
            names[hit - ids] = owned[hit - ids] = name;
    }
    for (size_t k = 0; k < n; k++) {
        char fallback[32];
        snprintf(fallback, sizeof(fallback), "cmdq %d", (int)ids[k]);
        trace_regions_add_(rs, names[k] ? names[k] : fallback, ids[k], 0, 0);
        free(owned[k]);
    }
    free(owned);
    free(names);
}

/* Widen the span of each launch seen (of cmdq_ids ids[0..n), the set's regions) to its own
 * markers (a kernel's begin and end markers). */
void trace_regions_extend_by_markers_(struct trace_regions *rs, const int32_t *ids, size_t n,
                                      bool *seen)
{
    const struct trace_model *m = rs->m;
    for (size_t k = 0; k < trace_model_marker_count(m); k++) {
        const struct trace_marker *mk = trace_model_marker(m, k);
        const struct sim_value *id = sim_value_map_get(mk->details, "cmdq_id");
        if (!id || id->type != SIM_V_INT || id->u.i < INT32_MIN || id->u.i > INT32_MAX)
            continue;
        int32_t key = (int32_t)id->u.i;
        const int32_t *hit = bsearch(&key, ids, n, sizeof(*ids), cmp_i32);
        if (hit && seen[hit - ids])
            extend(&rs->v[hit - ids], mk->cycle, mk->cycle, &seen[hit - ids]);
    }
}

static void split_launch(struct trace_regions *rs)
{
    const struct trace_model *m = rs->m;
    size_t nt = trace_model_track_count(m);
    bool *host = sim_xcalloc(nt ? nt : 1, sizeof(*host));
    for (uint32_t t = 0; t < nt; t++)
        host[t] = trace_model_track_get(m, t)->engine == TRACE_ENGINE_HOST;
    /* one pass over the events: their runs (a launch's ops come in runs) and the HOST
     * events of a launch */
    struct lrun *run = NULL;
    uint64_t *hosts = NULL;
    size_t nrun = 0, caprun = 0, nhost = 0, caphost = 0;
    for (uint64_t i = 0; i < rs->nevents; i++) {
        const struct trace_event *ev = &rs->ev[i];
        uint64_t end = ev_end(m, ev);
        if (!nrun || run[nrun - 1].cmdq != ev->cmdq_id) {
            if (nrun == caprun) {
                caprun = caprun ? caprun * 2 : 64;
                run = sim_xreallocarray(run, caprun, sizeof(*run));
            }
            run[nrun++] = (struct lrun){i, ev->start, end, ev->cmdq_id};
        }
        struct lrun *r = &run[nrun - 1];
        r->start = ev->start < r->start ? ev->start : r->start;
        r->end = end > r->end ? end : r->end;
        if (ev->cmdq_id != TRACE_NO_CMDQ && ev->track < nt && host[ev->track]) {
            if (nhost == caphost) {
                caphost = caphost ? caphost * 2 : 64;
                hosts = sim_xreallocarray(hosts, caphost, sizeof(*hosts));
            }
            hosts[nhost++] = i;
        }
    }
    free(host);
    int32_t *ids = sim_xreallocarray(NULL, nrun ? nrun : 1, sizeof(*ids));
    size_t n = 0;
    for (size_t k = 0; k < nrun; k++)
        if (run[k].cmdq != TRACE_NO_CMDQ)
            ids[n++] = run[k].cmdq;
    n = uniq(ids, n, sizeof(*ids), cmp_i32);
    trace_regions_add_launches_(rs, ids, n, hosts, nhost);
    free(hosts);
    bool *seen = sim_xcalloc(n ? n : 1, sizeof(*seen));
    const int32_t *last = NULL;
    for (size_t k = 0; k < nrun; k++) {
        const int32_t *hit =
            run[k].cmdq == TRACE_NO_CMDQ ? NULL : find_cmdq(ids, n, run[k].cmdq, &last);
        uint32_t of = hit ? (uint32_t)(hit - ids) : NO_REGION;
        uint64_t to = k + 1 < nrun ? run[k + 1].first : rs->nevents;
        for (uint64_t i = run[k].first; i < to; i++)
            rs->of[i] = of;
        if (hit)
            extend(&rs->v[hit - ids], run[k].start, run[k].end, &seen[hit - ids]);
    }
    free(run);
    trace_regions_extend_by_markers_(rs, ids, n, seen);
    free(seen);
    free(ids);
}

struct mref {
    uint64_t cycle;
    size_t index;
};

static int cmp_mref(const void *a, const void *b)
{
    const struct mref *x = a, *y = b;
    if (x->cycle != y->cycle)
        return x->cycle < y->cycle ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void split_marker(struct trace_regions *rs)
{
    const struct trace_model *m = rs->m;
    size_t nm = trace_model_marker_count(m);
    if (!nm) {
        for (uint64_t i = 0; i < rs->nevents; i++)
            rs->of[i] = NO_REGION;
        return;
    }
    struct mref *v = sim_xreallocarray(NULL, nm, sizeof(*v));
    for (size_t k = 0; k < nm; k++)
        v[k] = (struct mref){trace_model_marker(m, k)->cycle, k};
    qsort(v, nm, sizeof(*v), cmp_mref);
    uint64_t tmax = trace_model_t_max(m);
    if (v[0].cycle > 0)
        trace_regions_add_(rs, TRACE_REGION_START_NAME, TRACE_NO_CMDQ, 0, v[0].cycle);
    uint32_t last = TRACE_NO_STR;
    for (size_t k = 0; k < nm; k++) {
        uint32_t name = trace_model_marker(m, v[k].index)->name;
        if (k > 0 && name == last)
            continue; /* the same marker raised again (on each PE): one boundary */
        last = name;
        if (rs->n)
            rs->v[rs->n - 1].end = v[k].cycle;
        trace_regions_add_(rs, name == TRACE_NO_STR ? "" : trace_model_str(m, name), TRACE_NO_CMDQ,
                           v[k].cycle, tmax);
    }
    free(v);
    size_t w = SIZE_MAX; /* the window of the event before: most often this one's */
    for (uint64_t i = 0; i < rs->nevents; i++) {
        uint64_t s = rs->ev[i].start;
        if (w >= rs->n || rs->v[w].start > s || (w + 1 < rs->n && rs->v[w + 1].start <= s))
            w = trace_regions_at(rs, s);
        rs->of[i] = (uint32_t)w;
    }
}

struct lref {
    uint32_t layer;
    uint64_t first; /* first start of its events */
};

static int cmp_lref_first(const void *a, const void *b)
{
    const struct lref *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->layer < y->layer ? -1 : x->layer > y->layer;
}

/* The layers by their first op, each a region: one pass over the events finds each layer's
 * span by its string id (in tables of the model's strings) and notes that id as the
 * event's region, one pass over those notes turns them into the regions. */
static void split_layer(struct trace_regions *rs)
{
    const struct trace_model *m = rs->m;
    size_t nstr = trace_model_str_count(m);
    uint64_t *first = sim_xreallocarray(NULL, nstr ? nstr : 1, sizeof(*first));
    uint64_t *last = sim_xcalloc(nstr ? nstr : 1, sizeof(*last)); /* the latest end */
    for (size_t k = 0; k < nstr; k++)
        first[k] = UINT64_MAX;
    for (uint64_t i = 0; i < rs->nevents; i++) {
        const struct trace_event *ev = &rs->ev[i];
        uint32_t l = ev->layer;
        rs->of[i] = NO_REGION;
        if (l == TRACE_NO_STR || l >= nstr)
            continue;
        rs->of[i] = l;
        uint64_t end = ev_end(m, ev);
        first[l] = ev->start < first[l] ? ev->start : first[l];
        last[l] = end > last[l] ? end : last[l];
    }
    size_t n = 0;
    for (size_t k = 0; k < nstr; k++)
        n += first[k] != UINT64_MAX;
    struct lref *lr = sim_xreallocarray(NULL, n ? n : 1, sizeof(*lr));
    n = 0;
    for (size_t k = 0; k < nstr; k++)
        if (first[k] != UINT64_MAX)
            lr[n++] = (struct lref){(uint32_t)k, first[k]};
    qsort(lr, n, sizeof(*lr), cmp_lref_first);
    uint32_t *region_of = sim_xreallocarray(NULL, nstr ? nstr : 1, sizeof(*region_of));
    for (size_t k = 0; k < n; k++) {
        uint32_t l = lr[k].layer;
        trace_regions_add_(rs, trace_model_str(m, l), TRACE_NO_CMDQ, first[l], last[l])->layer = l;
        region_of[l] = (uint32_t)k;
    }
    for (uint64_t i = 0; i < rs->nevents; i++)
        if (rs->of[i] != NO_REGION)
            rs->of[i] = region_of[rs->of[i]];
    free(region_of);
    free(lr);
    free(last);
    free(first);
}

/* ---- occurrences ----------------------------------------------------------------------- */

static _Thread_local const struct trace_regions *occ_ctx; /* for qsort (one per thread) */

static int cmp_by_name(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(occ_ctx->v[x].name, occ_ctx->v[y].name);
    return c ? c : x < y ? -1 : x > y;
}

/* occurrence = how many earlier regions have the same name. */
void trace_regions_number_(struct trace_regions *rs)
{
    if (!rs->n)
        return;
    size_t *idx = sim_xreallocarray(NULL, rs->n, sizeof(*idx));
    for (size_t i = 0; i < rs->n; i++)
        idx[i] = i;
    occ_ctx = rs;
    qsort(idx, rs->n, sizeof(*idx), cmp_by_name);
    occ_ctx = NULL;
    for (size_t i = 0; i < rs->n; i++) {
        bool same = i > 0 && strcmp(rs->v[idx[i]].name, rs->v[idx[i - 1]].name) == 0;
        rs->v[idx[i]].occurrence = same ? rs->v[idx[i - 1]].occurrence + 1 : 0;
    }
    free(idx);
}

/* ---- accounting ------------------------------------------------------------------------ */

/* An op of a region, for the sweep in start order: its span, track and op name. */
struct rop {
    uint64_t s, e;
    uint32_t track, op;
};

/* The scratch of one region's pass: usage per track and per op name, with the lists of
 * those touched, so that a region costs what it holds, not the model's size; and the
 * sweep's reach (the latest end so far) of each track, engine kind and op name. */
struct scratch {
    struct trace_usage *track; /* owned: per track */
    uint32_t *tracks;          /* owned: the tracks touched */
    bool *listed;              /* owned: per track, whether it is in tracks */
    size_t ntracks;
    uint64_t *op_count, *op_cycles; /* owned: per op name (string id) */
    uint64_t *op_start, *op_end;    /* owned: per op name: first start, last end */
    uint64_t *op_read, *op_write;   /* owned: per op name: DRAM bytes */
    uint64_t *op_busy;              /* owned: per op name, on any engine (the sweep's) */
    uint64_t *op_ebusy;             /* owned: per op name and engine kind (the sweep's) */
    uint64_t *op_reach;             /* owned: per op name, engine kind and any (KINDS + 1) */
    uint64_t *track_reach;          /* owned: per track */
    uint64_t kind_reach[TRACE_ENGINE_COUNT], all_reach; /* window splits: over the run */
    uint32_t *carry; /* owned, window splits: the tracks busy past the window's start */
    size_t ncarry;
    uint32_t *ops; /* owned: the op names touched */
    size_t nops;
    struct rop *rop; /* owned: the region's ops of some length, for the sweep */
    size_t nrop, caprop;
};

static bool windows(const struct trace_regions *rs)
{
    return rs->kind == TRACE_REGION_RUN || rs->kind == TRACE_REGION_MARKER;
}

/* How many events ahead the accounting asks for an event's memory. */
enum { PREFETCH = 16 };

/* Ask for event i of evs (and its DRAM bytes in rd and wr, when not NULL) ahead of its use. */
static void prefetch_event(const struct trace_event *evs, uint64_t i, const uint64_t *rd,
                           const uint64_t *wr)
{
    __builtin_prefetch(&evs[i]);
    if (rd) {
        __builtin_prefetch(&rd[i]);
        __builtin_prefetch(&wr[i]);
    }
}

static void touch_track(struct scratch *sc, uint32_t t)
{
    if (!sc->listed[t]) {
        sc->listed[t] = true;
        sc->tracks[sc->ntracks++] = t;
    }
}

/* The usage of op name op in r (its ops sorted by op name), or NULL. */
static struct trace_op_usage *find_op(const struct trace_region *r, uint32_t op)
{
    size_t lo = 0, hi = r->nops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->ops[mid].op < op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nops && r->ops[lo].op == op ? &r->ops[lo] : NULL;
}

/* The part of [s, e) past *reach, the latest end of a set of intervals met in start order
 * (s never below an earlier one's): what [s, e) adds to their union. */
static inline uint64_t gain(uint64_t s, uint64_t e, uint64_t *reach)
{
    uint64_t r = *reach;
    if (e <= r)
        return 0;
    *reach = e;
    return e - (s > r ? s : r);
}

enum { KINDS = TRACE_ENGINE_COUNT };

/* The part of [s, e) past *reach that lies before we: gain cut at a window's end (the reach
 * still moves to e, for the windows after). */
static inline uint64_t gain_before(uint64_t s, uint64_t e, uint64_t *reach, uint64_t we)
{
    uint64_t r = *reach;
    if (e <= r)
        return 0;
    *reach = e;
    uint64_t a = s > r ? s : r, b = e < we ? e : we;
    return b > a ? b - a : 0;
}

/* What a reach from the windows before covers of [ws, we). */
static inline uint64_t carried(uint64_t reach, uint64_t ws, uint64_t we)
{
    uint64_t b = reach < we ? reach : we;
    return b > ws ? b - ws : 0;
}

/*
 * The busy cycles of a region: its ops sorted by start (the shared radix sort), then one
 * sweep that adds each op's part past the reach of its track, of its engine kind and of
 * every engine, and of its op name on its engine kind and on any (when op_busy). The union
 * of a set of intervals is the sum of these parts whatever the order of equal starts.
 * Window splits (windowed) take their windows in time order, each window's ops starting in
 * it, so the sweep over the windows one after the other is one sweep in start order over
 * the run: the track, kind and all reaches go on from window to window, each part is cut at
 * the window's end, and what the windows before reach past this window's start (ops
 * straddling its edge: [ws, reach), as every such op starts before ws) counts first.
 */
static void sweep_region(struct trace_region *reg, struct scratch *sc, const uint8_t *engine_of,
                         bool windowed, bool op_busy)
{
    struct rop *v = sc->rop;
    size_t n = sc->nrop;
    trace_radix_sort(v, n, sizeof(*v), offsetof(struct rop, s));
    uint64_t kind_reach[KINDS] = {0}, all_reach = 0;
    if (windowed) {
        uint64_t ws = reg->start, we = reg->end;
        for (size_t i = 0; i < sc->ncarry; i++) {
            uint32_t t = sc->carry[i];
            uint64_t b = carried(sc->track_reach[t], ws, we);
            if (b) {
                touch_track(sc, t);
                sc->track[t].busy += b;
            }
        }
        for (int k = 0; k < KINDS; k++)
            reg->engine[k].busy += carried(sc->kind_reach[k], ws, we);
        reg->all.busy += carried(sc->all_reach, ws, we);
        for (size_t i = 0; i < n; i++) {
            uint64_t s = v[i].s, e = v[i].e;
            uint32_t t = v[i].track, k = engine_of[t];
            sc->track[t].busy += gain_before(s, e, &sc->track_reach[t], we);
            reg->engine[k].busy += gain_before(s, e, &sc->kind_reach[k], we);
            reg->all.busy += gain_before(s, e, &sc->all_reach, we);
            if (op_busy) {
                uint64_t *r = &sc->op_reach[(size_t)v[i].op * (KINDS + 1)];
                sc->op_ebusy[(size_t)v[i].op * KINDS + k] += gain(s, e, &r[k]);
                sc->op_busy[v[i].op] += gain(s, e, &r[KINDS]);
            }
        }
        /* the tracks whose reach goes past this window: from those it carried in and those
         * it touched (before emit_region clears them) */
        size_t nc = 0;
        for (size_t i = 0; i < sc->ncarry; i++) {
            uint32_t t = sc->carry[i];
            if (!sc->listed[t] && sc->track_reach[t] > we)
                sc->carry[nc++] = t;
        }
        for (size_t i = 0; i < sc->ntracks; i++)
            if (sc->track_reach[sc->tracks[i]] > we)
                sc->carry[nc++] = sc->tracks[i];
        sc->ncarry = nc;
        sc->nrop = 0;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t s = v[i].s, e = v[i].e;
        uint32_t t = v[i].track, k = engine_of[t];
        sc->track[t].busy += gain(s, e, &sc->track_reach[t]);
        reg->engine[k].busy += gain(s, e, &kind_reach[k]);
        reg->all.busy += gain(s, e, &all_reach);
        if (op_busy) {
            uint64_t *r = &sc->op_reach[(size_t)v[i].op * (KINDS + 1)];
            sc->op_ebusy[(size_t)v[i].op * KINDS + k] += gain(s, e, &r[k]);
            sc->op_busy[v[i].op] += gain(s, e, &r[KINDS]);
        }
    }
    sc->nrop = 0;
}

/* The region's tracks and op names, from the scratch, sorted; the scratch reset. */
static void emit_region(struct trace_region *r, struct scratch *sc, bool windowed)
{
    qsort(sc->tracks, sc->ntracks, sizeof(*sc->tracks), cmp_u32);
    r->tracks = sim_xreallocarray(NULL, sc->ntracks ? sc->ntracks : 1, sizeof(*r->tracks));
    for (size_t i = 0; i < sc->ntracks; i++) {
        uint32_t t = sc->tracks[i];
        r->tracks[r->ntracks++] = (struct trace_track_usage){t, sc->track[t]};
        sc->track[t] = (struct trace_usage){0};
        if (!windowed)
            sc->track_reach[t] = 0;
        sc->listed[t] = false;
    }
    sc->ntracks = 0;
    qsort(sc->ops, sc->nops, sizeof(*sc->ops), cmp_u32);
    r->ops = sim_xreallocarray(NULL, sc->nops ? sc->nops : 1, sizeof(*r->ops));
    for (size_t i = 0; i < sc->nops; i++) {
        uint32_t op = sc->ops[i];
        struct trace_op_usage *u = &r->ops[r->nops++];
        *u = (struct trace_op_usage){.op = op,
                                     .count = sc->op_count[op],
                                     .cycles = sc->op_cycles[op],
                                     .start = sc->op_start[op],
                                     .end = sc->op_end[op],
                                     .busy = sc->op_busy[op],
                                     .read_bytes = sc->op_read[op],
                                     .write_bytes = sc->op_write[op]};
        for (int k = 0; k < KINDS; k++) {
            u->engine_busy[k] = sc->op_ebusy[(size_t)op * KINDS + (size_t)k];
            sc->op_ebusy[(size_t)op * KINDS + (size_t)k] = 0;
        }
        for (int k = 0; k <= KINDS; k++)
            sc->op_reach[(size_t)op * (KINDS + 1) + (size_t)k] = 0;
        sc->op_count[op] = sc->op_cycles[op] = sc->op_read[op] = sc->op_write[op] = 0;
        sc->op_busy[op] = 0;
    }
    sc->nops = 0;
}

/* The first of transfers xs[x..nx) (in event order) of event i or later: galloping from x, so
 * that the next event of a region costs the log of the transfers between, not their number
 * (a layer's events are spread over the run). */
static size_t transfer_from(const struct trace_transfer *xs, size_t nx, size_t x, uint64_t i)
{
    if (x >= nx || xs[x].event >= i)
        return x;
    size_t lo = x, step = 1, hi = x + 1; /* xs[lo] is before i; hi: the answer is <= hi */
    while (hi < nx && xs[hi].event < i) {
        lo = hi;
        step *= 2;
        hi = lo + step < nx ? lo + step : nx;
    }
    for (lo++; lo < hi;) { /* the first of (lo, hi] of event i or later */
        size_t mid = lo + (hi - lo) / 2;
        if (xs[mid].event < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return hi;
}

/*
 * Count, sum and unite. The events are bucketed by region in event order (one pass over
 * the model's events in memory order, rather than track by track through the tracks'
 * indexes), so each region is one pass over its own events, then one sort of their spans
 * by start and one sweep (sweep_region).
 */
static void account(struct trace_regions *rs)
{
    const struct trace_model *m = rs->m;
    size_t nr = rs->n, nt = trace_model_track_count(m);
    size_t *off = sim_xcalloc(nr + 1, sizeof(*off));
    bool in_order = true; /* every event in a region, the regions in event order (a run) */
    if (rs->kind == TRACE_REGION_RUN)
        off[1] = rs->nevents; /* every event, in order */
    else
        for (uint64_t i = 0; i < rs->nevents; i++) {
            uint32_t r = rs->of[i];
            in_order &= r != NO_REGION && (i == 0 || r >= rs->of[i - 1]);
            if (r != NO_REGION)
                off[r + 1]++;
        }
    for (size_t r = 0; r < nr; r++)
        off[r + 1] += off[r];
    /* the events of each region, one region after the other; NULL: in their own order (32
     * bits each, as a model's track indexes hold them: half the fresh memory) */
    uint32_t *ev = NULL;
    if (!in_order) {
        ev = sim_xreallocarray(NULL, off[nr] ? off[nr] : 1, sizeof(*ev));
        size_t *pos = sim_xreallocarray(NULL, nr, sizeof(*pos));
        memcpy(pos, off, nr * sizeof(*pos));
        for (uint64_t i = 0; i < rs->nevents; i++)
            if (rs->of[i] != NO_REGION)
                ev[pos[rs->of[i]]++] = (uint32_t)i;
        free(pos);
    }
    uint8_t *engine_of = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*engine_of));
    for (uint32_t t = 0; t < nt; t++) {
        enum trace_engine k = trace_model_track_get(m, t)->engine;
        engine_of[t] = (uint8_t)(k < TRACE_ENGINE_COUNT ? k : TRACE_ENGINE_OTHER);
    }
    /* each event's DRAM bytes: from the transfers in their order when they come in event
     * order (as a model records them; a region's events are taken in event order), else
     * from tables by event */
    uint64_t *rd = NULL, *wr = NULL;
    size_t nx = trace_model_transfer_count(m);
    const struct trace_transfer *xs = nx ? trace_model_transfer(m, 0) : NULL;
    for (size_t k = 1; k < nx && xs; k++)
        if (xs[k].event < xs[k - 1].event)
            xs = NULL;
    if (nx && !xs) {
        rd = sim_xcalloc(rs->nevents, sizeof(*rd));
        wr = sim_xcalloc(rs->nevents, sizeof(*wr));
        for (size_t k = 0; k < nx; k++) {
            const struct trace_transfer *x = trace_model_transfer(m, k);
            if (x->event < rs->nevents)
                *(x->flags & TRACE_XFER_WRITE ? &wr[x->event] : &rd[x->event]) += x->bytes;
        }
    }
    size_t nop = trace_model_str_count(m) + 1; /* an op name is a string id */
    struct scratch sc = {
        .track = sim_xcalloc(nt ? nt : 1, sizeof(*sc.track)),
        .tracks = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*sc.tracks)),
        .listed = sim_xcalloc(nt ? nt : 1, sizeof(*sc.listed)),
        .op_count = sim_xcalloc(nop, sizeof(*sc.op_count)),
        .op_cycles = sim_xcalloc(nop, sizeof(*sc.op_cycles)),
        .op_start = sim_xcalloc(nop, sizeof(*sc.op_start)),
        .op_end = sim_xcalloc(nop, sizeof(*sc.op_end)),
        .op_read = sim_xcalloc(nop, sizeof(*sc.op_read)),
        .op_write = sim_xcalloc(nop, sizeof(*sc.op_write)),
        .op_busy = sim_xcalloc(nop, sizeof(*sc.op_busy)),
        .op_ebusy = sim_xcalloc(nop * KINDS, sizeof(*sc.op_ebusy)),
        .op_reach = sim_xcalloc(nop * (KINDS + 1), sizeof(*sc.op_reach)),
        .track_reach = sim_xcalloc(nt ? nt : 1, sizeof(*sc.track_reach)),
        .ops = sim_xreallocarray(NULL, nop, sizeof(*sc.ops)),
    };
    bool windowed = windows(rs), op_busy = !rs->no_op_busy;
    if (windowed)
        sc.carry = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*sc.carry));
    trace_progress_step(rs->progress, "regions: ops", off[nr]);
    bool stop = trace_progress_cancelled(rs->progress);
    for (size_t r = 0; r < nr && !stop; r++) {
        struct trace_region *reg = &rs->v[r];
        size_t x = 0; /* xs: no transfer before x is of the region's next event or later */
        for (size_t k = off[r]; k < off[r + 1]; k++) {
            if (k % TRACE_PROGRESS_EVERY == 0 && (stop = trace_progress_at(rs->progress, k)))
                break;
            if (k + PREFETCH < off[r + 1]) /* a region's events are spread over the model */
                prefetch_event(rs->ev, ev ? ev[k + PREFETCH] : k + PREFETCH, rd, wr);
            uint64_t i = ev ? ev[k] : k;
            const struct trace_event *e = &rs->ev[i];
            uint64_t end = ev_end(m, e);
            struct trace_usage u = {.ops = 1, .op_cycles = end - e->start};
            if (rd) {
                u.read_bytes = rd[i], u.write_bytes = wr[i];
            } else if (xs) {
                x = transfer_from(xs, nx, x, i);
                for (; x < nx && xs[x].event == i; x++)
                    *(xs[x].flags & TRACE_XFER_WRITE ? &u.write_bytes : &u.read_bytes) +=
                        xs[x].bytes;
            }
            touch_track(&sc, e->track);
            trace_usage_add_(&sc.track[e->track], &u);
            trace_usage_add_(&reg->all, &u);
            trace_usage_add_(&reg->engine[engine_of[e->track]], &u);
            if (!sc.op_count[e->op]) {
                sc.ops[sc.nops++] = e->op;
                sc.op_start[e->op] = e->start;
                sc.op_end[e->op] = end;
            }
            sc.op_count[e->op]++;
            sc.op_cycles[e->op] += end - e->start;
            sc.op_start[e->op] = e->start < sc.op_start[e->op] ? e->start : sc.op_start[e->op];
            sc.op_end[e->op] = end > sc.op_end[e->op] ? end : sc.op_end[e->op];
            sc.op_read[e->op] += u.read_bytes;
            sc.op_write[e->op] += u.write_bytes;
            if (end > e->start) {
                if (sc.nrop == sc.caprop) {
                    sc.caprop = sc.caprop ? sc.caprop * 2 : 64;
                    sc.rop = sim_xreallocarray(sc.rop, sc.caprop, sizeof(*sc.rop));
                }
                sc.rop[sc.nrop++] = (struct rop){e->start, end, e->track, e->op};
            }
        }
        if (stop)
            break; /* an incomplete set: its caller frees it */
        sweep_region(reg, &sc, engine_of, windowed, op_busy);
        emit_region(reg, &sc, windowed);
    }
    free(sc.track);
    free(sc.tracks);
    free(sc.listed);
    free(sc.op_count);
    free(sc.op_cycles);
    free(sc.op_start);
    free(sc.op_end);
    free(sc.op_read);
    free(sc.op_write);
    free(sc.op_busy);
    free(sc.op_ebusy);
    free(sc.op_reach);
    free(sc.track_reach);
    free(sc.ops);
    free(sc.rop);
    free(engine_of);
    free(sc.carry);
    free(rd);
    free(wr);
    free(ev);
    free(off);
}

/* ---- the set ------------------------------------------------------------------------------ */

/* The split of m as kind says, accounted when account_usage is set, with each op name's
 * busy cycles when op_busy is. */
static struct trace_regions *regions_new(const struct trace_model *m, enum trace_region_kind kind,
                                         bool account_usage, bool op_busy, struct trace_progress *p)
{
    struct trace_regions *rs = sim_xcalloc(1, sizeof(*rs));
    rs->m = m;
    rs->no_op_busy = !op_busy;
    rs->kind = kind;
    rs->progress = p;
    rs->nevents = trace_model_event_count(m);
    rs->ev = rs->nevents ? trace_model_event(m, 0) : NULL;
    rs->of = sim_xreallocarray(NULL, rs->nevents ? rs->nevents : 1, sizeof(*rs->of));
    trace_progress_step(p, "regions: splitting", 0);
    switch (kind) {
    case TRACE_REGION_LAUNCH: split_launch(rs); break;
    case TRACE_REGION_MARKER: split_marker(rs); break;
    case TRACE_REGION_LAYER: split_layer(rs); break;
    default: split_run(rs); break;
    }
    trace_regions_number_(rs);
    if (rs->n && account_usage && !trace_progress_cancelled(p))
        account(rs);
    rs->progress = NULL;
    return rs;
}

struct trace_regions *trace_regions_new(const struct trace_model *m, enum trace_region_kind kind)
{
    return regions_new(m, kind, true, true, NULL);
}

struct trace_regions *trace_regions_new_progress(const struct trace_model *m,
                                                 enum trace_region_kind kind,
                                                 struct trace_progress *p)
{
    return regions_new(m, kind, true, true, p);
}

struct trace_regions *trace_regions_new_light(const struct trace_model *m,
                                              enum trace_region_kind kind, struct trace_progress *p)
{
    return regions_new(m, kind, true, false, p);
}

struct trace_regions *trace_regions_new_split(const struct trace_model *m,
                                              enum trace_region_kind kind)
{
    return regions_new(m, kind, false, false, NULL);
}

void trace_regions_free(struct trace_regions *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n; i++) {
        free((char *)rs->v[i].name);
        free(rs->v[i].tracks);
        free(rs->v[i].ops);
    }
    free(rs->v);
    free(rs->of);
    free(rs->by_layer);
    free(rs->run_first);
    free(rs->run_len);
    free(rs->run_off);
    free(rs->run_idx);
    free(rs);
}

const struct trace_model *trace_regions_model(const struct trace_regions *rs)
{
    return rs->m;
}

enum trace_region_kind trace_regions_kind(const struct trace_regions *rs)
{
    return rs->kind;
}

size_t trace_regions_count(const struct trace_regions *rs)
{
    return rs->n;
}

const struct trace_region *trace_regions_get(const struct trace_regions *rs, size_t i)
{
    return i < rs->n ? &rs->v[i] : NULL;
}

size_t trace_regions_of_event(const struct trace_regions *rs, uint64_t ev)
{
    if (ev >= rs->nevents)
        return SIZE_MAX;
    if (rs->of)
        return rs->of[ev] != NO_REGION ? rs->of[ev] : SIZE_MAX;
    const struct trace_event *e = &rs->ev[ev];
    if (rs->kind == TRACE_REGION_LAYER)
        return e->layer < rs->nlayer_ids && rs->by_layer[e->layer] != NO_REGION
                   ? rs->by_layer[e->layer]
                   : SIZE_MAX;
    if (rs->kind != TRACE_REGION_LAUNCH || e->cmdq_id == TRACE_NO_CMDQ)
        return SIZE_MAX;
    size_t lo = 0, hi = rs->n; /* the launches in cmdq_id order */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->v[mid].cmdq_id < e->cmdq_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < rs->n && rs->v[lo].cmdq_id == e->cmdq_id ? lo : SIZE_MAX;
}

size_t trace_regions_at(const struct trace_regions *rs, uint64_t t)
{
    if (!windows(rs) || !rs->n || rs->v[0].start > t)
        return SIZE_MAX;
    size_t lo = 0, hi = rs->n; /* the last region whose start is <= t */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs->v[mid].start <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

const struct trace_track_usage *trace_region_track(const struct trace_region *r, uint32_t track)
{
    size_t lo = 0, hi = r->ntracks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->tracks[mid].track < track)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->ntracks && r->tracks[lo].track == track ? &r->tracks[lo] : NULL;
}

const struct trace_op_usage *trace_region_op(const struct trace_region *r, uint32_t op)
{
    return find_op(r, op);
}

uint64_t trace_region_length(const struct trace_region *r)
{
    return r->end - r->start;
}

double trace_region_util(const struct trace_region *r, uint64_t busy)
{
    uint64_t len = trace_region_length(r);
    return len ? (double)busy / (double)len : 0;
}

uint64_t trace_region_kinds_busy(const struct trace_region *r)
{
    uint64_t b = 0;
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        b += r->engine[k].busy;
    return b;
}

uint64_t trace_op_kinds_busy(const struct trace_op_usage *u)
{
    uint64_t b = 0;
    for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
        b += u->engine_busy[k];
    return b;
}

const char *trace_region_kind_name(enum trace_region_kind k)
{
    static const char *const names[] = {"run", "launch", "marker", "layer"};
    return k < TRACE_REGION_KIND_COUNT ? names[k] : "?";
}
