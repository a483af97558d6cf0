/*
 * Per-region accounting (see regions.h): first the split (which region each op belongs
 * to, and each region's span), then one pass over the ops for counts, durations and
 * bytes, and three passes over sorted spans for busy cycles per track, per engine kind
 * and over every engine. The work is O(n log n) in the events, whatever the number of
 * regions.
 */
#include "trace/regions.h"

#include "sim/data/value.h"
#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_REGION UINT32_MAX

struct trace_regions {
    const struct trace_model *m; /* borrowed */
    enum trace_region_kind kind;
    struct trace_region *v; /* owned */
    size_t n, cap;
    uint32_t *of; /* owned: the region of each event, or NO_REGION */
    uint64_t nevents;
};

/* A span of time keyed by what it is accounted to: region << 32 | sub (a track, an
 * engine kind, or 0 for every engine). */
struct kspan {
    uint64_t key, s, e;
};

/* One contribution to a track's usage in a region, combined after sorting. */
struct tacc {
    uint32_t region, track;
    struct trace_usage u;
};

/* One op's contribution to its op name in a region. */
struct oacc {
    uint32_t region, op;
    uint64_t cycles;
};

/* The contributions to tracks, collected before they are combined. */
struct taccs {
    struct tacc *v; /* owned */
    size_t n, cap;
};

enum level { LEVEL_TRACK, LEVEL_ENGINE, LEVEL_ALL };

/* End of an event: in-flight events run until now. */
static uint64_t ev_end(const struct trace_model *m, const struct trace_event *ev)
{
    if (ev->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(m);
        return now > ev->start ? now : ev->start;
    }
    return ev->end;
}

static struct trace_region *region_add(struct trace_regions *rs, const char *name, int32_t cmdq,
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

static void taccs_push(struct taccs *a, uint32_t region, uint32_t track, struct trace_usage u)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->v = sim_xreallocarray(a->v, a->cap, sizeof(*a->v));
    }
    a->v[a->n++] = (struct tacc){region, track, u};
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
    region_add(rs, "run", TRACE_NO_CMDQ, 0, trace_model_t_max(rs->m));
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

static void extend(struct trace_region *r, uint64_t s, uint64_t e, bool *seen)
{
    if (!*seen || s < r->start)
        r->start = s;
    if (!*seen || e > r->end)
        r->end = e;
    *seen = true;
}

static void split_launch(struct trace_regions *rs)
{
    const struct trace_model *m = rs->m;
    int32_t *ids = sim_xreallocarray(NULL, rs->nevents ? rs->nevents : 1, sizeof(*ids));
    size_t n = 0;
    for (uint64_t i = 0; i < rs->nevents; i++) {
        int32_t c = trace_model_event(m, i)->cmdq_id;
        if (c != TRACE_NO_CMDQ)
            ids[n++] = c;
    }
    n = uniq(ids, n, sizeof(*ids), cmp_i32);
    const char **names = sim_xcalloc(n ? n : 1, sizeof(*names));
    for (size_t k = 0; k < trace_model_marker_count(m); k++)
        launch_name_from(trace_model_marker(m, k)->details, ids, n, names);
    for (size_t k = 0; k < trace_model_token_count(m); k++)
        launch_name_from(trace_model_token(m, k)->details, ids, n, names);
    bool *seen = sim_xcalloc(n ? n : 1, sizeof(*seen));
    for (size_t k = 0; k < n; k++) {
        char fallback[32];
        snprintf(fallback, sizeof(fallback), "cmdq %d", (int)ids[k]);
        region_add(rs, names[k] ? names[k] : fallback, ids[k], 0, 0);
    }
    for (uint64_t i = 0; i < rs->nevents; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        const int32_t *hit = ev->cmdq_id == TRACE_NO_CMDQ
                                 ? NULL
                                 : bsearch(&ev->cmdq_id, ids, n, sizeof(*ids), cmp_i32);
        rs->of[i] = hit ? (uint32_t)(hit - ids) : NO_REGION;
        if (hit)
            extend(&rs->v[hit - ids], ev->start, ev_end(m, ev), &seen[hit - ids]);
    }
    /* the launch's own markers widen its span (a kernel's begin and end markers) */
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
    free(seen);
    free(names);
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
        region_add(rs, TRACE_REGION_START_NAME, TRACE_NO_CMDQ, 0, v[0].cycle);
    uint32_t last = TRACE_NO_STR;
    for (size_t k = 0; k < nm; k++) {
        uint32_t name = trace_model_marker(m, v[k].index)->name;
        if (k > 0 && name == last)
            continue; /* the same marker raised again (on each PE): one boundary */
        last = name;
        if (rs->n)
            rs->v[rs->n - 1].end = v[k].cycle;
        region_add(rs, name == TRACE_NO_STR ? "" : trace_model_str(m, name), TRACE_NO_CMDQ,
                   v[k].cycle, tmax);
    }
    free(v);
    for (uint64_t i = 0; i < rs->nevents; i++)
        rs->of[i] = (uint32_t)trace_regions_at(rs, trace_model_event(m, i)->start);
}

struct lref {
    uint32_t layer;
    uint64_t first; /* first start of its events */
};

static int cmp_lref_layer(const void *a, const void *b)
{
    const struct lref *x = a, *y = b;
    return x->layer < y->layer ? -1 : x->layer > y->layer;
}

static int cmp_lref_first(const void *a, const void *b)
{
    const struct lref *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->layer < y->layer ? -1 : x->layer > y->layer;
}

static void split_layer(struct trace_regions *rs)
{
    const struct trace_model *m = rs->m;
    uint32_t *ids = sim_xreallocarray(NULL, rs->nevents ? rs->nevents : 1, sizeof(*ids));
    size_t n = 0;
    for (uint64_t i = 0; i < rs->nevents; i++) {
        uint32_t l = trace_model_event(m, i)->layer;
        if (l != TRACE_NO_STR)
            ids[n++] = l;
    }
    n = uniq(ids, n, sizeof(*ids), cmp_u32);
    /* order the layers by their first op, then give each its region */
    struct lref *lr = sim_xreallocarray(NULL, n ? n : 1, sizeof(*lr));
    for (size_t k = 0; k < n; k++)
        lr[k] = (struct lref){ids[k], UINT64_MAX};
    for (uint64_t i = 0; i < rs->nevents; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        if (ev->layer == TRACE_NO_STR)
            continue;
        struct lref key = {ev->layer, 0};
        struct lref *hit = bsearch(&key, lr, n, sizeof(*lr), cmp_lref_layer);
        if (hit && ev->start < hit->first)
            hit->first = ev->start;
    }
    qsort(lr, n, sizeof(*lr), cmp_lref_first);
    uint32_t *region_of = sim_xreallocarray(NULL, n ? n : 1, sizeof(*region_of));
    for (size_t k = 0; k < n; k++) {
        region_add(rs, trace_model_str(m, lr[k].layer), TRACE_NO_CMDQ, 0, 0);
        uint32_t *pos = bsearch(&lr[k].layer, ids, n, sizeof(*ids), cmp_u32);
        if (pos)
            region_of[pos - ids] = (uint32_t)k;
    }
    bool *seen = sim_xcalloc(n ? n : 1, sizeof(*seen));
    for (uint64_t i = 0; i < rs->nevents; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        rs->of[i] = NO_REGION;
        if (ev->layer == TRACE_NO_STR)
            continue;
        uint32_t *pos = bsearch(&ev->layer, ids, n, sizeof(*ids), cmp_u32);
        if (!pos)
            continue;
        uint32_t r = region_of[pos - ids];
        rs->of[i] = r;
        extend(&rs->v[r], ev->start, ev_end(m, ev), &seen[r]);
    }
    free(seen);
    free(region_of);
    free(lr);
    free(ids);
}

/* ---- occurrences ----------------------------------------------------------------------- */

static const struct trace_regions *occ_ctx;

static int cmp_by_name(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(occ_ctx->v[x].name, occ_ctx->v[y].name);
    return c ? c : x < y ? -1 : x > y;
}

/* occurrence = how many earlier regions have the same name. */
static void number_occurrences(struct trace_regions *rs)
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

/* ---- busy cycles ----------------------------------------------------------------------- */

static int cmp_kspan(const void *a, const void *b)
{
    const struct kspan *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

static bool windows(const struct trace_regions *rs)
{
    return rs->kind == TRACE_REGION_RUN || rs->kind == TRACE_REGION_MARKER;
}

static void credit(struct trace_regions *rs, struct taccs *acc, enum level lv, uint32_t region,
                   uint32_t sub, uint64_t busy)
{
    struct trace_region *r = &rs->v[region];
    if (lv == LEVEL_ALL)
        r->all.busy += busy;
    else if (lv == LEVEL_ENGINE)
        r->engine[sub].busy += busy;
    else
        taccs_push(acc, region, sub, (struct trace_usage){.busy = busy});
}

/* A merged busy interval [s, e) of key: to its region (membership splits), or spread over
 * the windows it overlaps (window splits). */
static void credit_interval(struct trace_regions *rs, struct taccs *acc, enum level lv,
                            uint64_t key, uint64_t s, uint64_t e)
{
    uint32_t sub = (uint32_t)key;
    if (!windows(rs)) {
        credit(rs, acc, lv, (uint32_t)(key >> 32), sub, e - s);
        return;
    }
    for (size_t k = trace_regions_at(rs, s); k < rs->n && rs->v[k].start < e; k++) {
        uint64_t a = s > rs->v[k].start ? s : rs->v[k].start;
        uint64_t b = e < rs->v[k].end ? e : rs->v[k].end;
        if (b > a)
            credit(rs, acc, lv, (uint32_t)k, sub, b - a);
    }
}

/* Busy cycles at one level: the union of the spans of each key. */
static void busy_pass(struct trace_regions *rs, struct taccs *acc, enum level lv, struct kspan *v)
{
    const struct trace_model *m = rs->m;
    size_t n = 0;
    for (uint64_t i = 0; i < rs->nevents; i++) {
        const struct trace_event *ev = trace_model_event(m, i);
        uint64_t e = ev_end(m, ev);
        if (rs->of[i] == NO_REGION || e <= ev->start)
            continue;
        uint64_t sub = lv == LEVEL_TRACK    ? ev->track
                       : lv == LEVEL_ENGINE ? (uint64_t)trace_model_track_get(m, ev->track)->engine
                                            : 0;
        uint64_t region = windows(rs) ? 0 : rs->of[i];
        v[n++] = (struct kspan){region << 32 | sub, ev->start, e};
    }
    qsort(v, n, sizeof(*v), cmp_kspan);
    for (size_t i = 0; i < n;) {
        uint64_t key = v[i].key, s = v[i].s, e = v[i].e;
        for (i++; i < n && v[i].key == key && v[i].s <= e; i++)
            if (v[i].e > e)
                e = v[i].e;
        credit_interval(rs, acc, lv, key, s, e);
    }
}

/* ---- counts, durations, bytes ------------------------------------------------------------ */

static void usage_add(struct trace_usage *to, const struct trace_usage *u)
{
    to->busy += u->busy;
    to->ops += u->ops;
    to->op_cycles += u->op_cycles;
    to->read_bytes += u->read_bytes;
    to->write_bytes += u->write_bytes;
}

static int cmp_tacc(const void *a, const void *b)
{
    const struct tacc *x = a, *y = b;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return x->track < y->track ? -1 : x->track > y->track;
}

static int cmp_oacc(const void *a, const void *b)
{
    const struct oacc *x = a, *y = b;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static void count_ops(struct trace_regions *rs, struct taccs *acc)
{
    const struct trace_model *m = rs->m;
    struct oacc *ov = sim_xreallocarray(NULL, rs->nevents ? rs->nevents : 1, sizeof(*ov));
    size_t no = 0;
    for (uint64_t i = 0; i < rs->nevents; i++) {
        uint32_t r = rs->of[i];
        if (r == NO_REGION)
            continue;
        const struct trace_event *ev = trace_model_event(m, i);
        uint64_t dur = ev_end(m, ev) - ev->start;
        struct trace_usage u = {.ops = 1, .op_cycles = dur};
        enum trace_engine eng = trace_model_track_get(m, ev->track)->engine;
        usage_add(&rs->v[r].all, &u);
        usage_add(&rs->v[r].engine[eng], &u);
        taccs_push(acc, r, ev->track, u);
        ov[no++] = (struct oacc){r, ev->op, dur};
    }
    size_t nx = trace_model_transfer_count(m);
    for (size_t k = 0; k < nx; k++) {
        const struct trace_transfer *x = trace_model_transfer(m, k);
        if (x->event >= rs->nevents || rs->of[x->event] == NO_REGION)
            continue;
        uint32_t r = rs->of[x->event];
        const struct trace_event *ev = trace_model_event(m, x->event);
        struct trace_usage u = {0};
        *(x->flags & TRACE_XFER_WRITE ? &u.write_bytes : &u.read_bytes) = x->bytes;
        usage_add(&rs->v[r].all, &u);
        usage_add(&rs->v[r].engine[trace_model_track_get(m, ev->track)->engine], &u);
        taccs_push(acc, r, ev->track, u);
    }
    /* per op name */
    qsort(ov, no, sizeof(*ov), cmp_oacc);
    for (size_t i = 0; i < no;) {
        struct trace_region *r = &rs->v[ov[i].region];
        size_t j = i;
        while (j < no && ov[j].region == ov[i].region)
            j++;
        r->ops = sim_xreallocarray(NULL, j - i, sizeof(*r->ops));
        for (size_t k = i; k < j;) {
            struct trace_op_usage *o = &r->ops[r->nops++];
            *o = (struct trace_op_usage){.op = ov[k].op};
            for (uint32_t op = ov[k].op; k < j && ov[k].op == op; k++)
                o->count++, o->cycles += ov[k].cycles;
        }
        i = j;
    }
    free(ov);
}

/* Combine the contributions to tracks into each region's sorted array. */
static void combine_tracks(struct trace_regions *rs, struct taccs *acc)
{
    if (!acc->n)
        return;
    qsort(acc->v, acc->n, sizeof(*acc->v), cmp_tacc);
    for (size_t i = 0; i < acc->n;) {
        struct trace_region *r = &rs->v[acc->v[i].region];
        size_t j = i;
        while (j < acc->n && acc->v[j].region == acc->v[i].region)
            j++;
        r->tracks = sim_xreallocarray(NULL, j - i, sizeof(*r->tracks));
        for (size_t k = i; k < j;) {
            struct trace_track_usage *t = &r->tracks[r->ntracks++];
            *t = (struct trace_track_usage){.track = acc->v[k].track};
            for (uint32_t tr = acc->v[k].track; k < j && acc->v[k].track == tr; k++)
                usage_add(&t->u, &acc->v[k].u);
        }
        i = j;
    }
}

/* ---- the set ------------------------------------------------------------------------------ */

struct trace_regions *trace_regions_new(const struct trace_model *m, enum trace_region_kind kind)
{
    struct trace_regions *rs = sim_xcalloc(1, sizeof(*rs));
    rs->m = m;
    rs->kind = kind;
    rs->nevents = trace_model_event_count(m);
    rs->of = sim_xreallocarray(NULL, rs->nevents ? rs->nevents : 1, sizeof(*rs->of));
    switch (kind) {
    case TRACE_REGION_LAUNCH: split_launch(rs); break;
    case TRACE_REGION_MARKER: split_marker(rs); break;
    case TRACE_REGION_LAYER: split_layer(rs); break;
    default: split_run(rs); break;
    }
    number_occurrences(rs);
    if (!rs->n)
        return rs;
    struct taccs acc = {0};
    count_ops(rs, &acc);
    struct kspan *v = sim_xreallocarray(NULL, rs->nevents ? rs->nevents : 1, sizeof(*v));
    busy_pass(rs, &acc, LEVEL_ALL, v);
    busy_pass(rs, &acc, LEVEL_ENGINE, v);
    busy_pass(rs, &acc, LEVEL_TRACK, v);
    free(v);
    combine_tracks(rs, &acc);
    free(acc.v);
    return rs;
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
    return ev < rs->nevents && rs->of[ev] != NO_REGION ? rs->of[ev] : SIZE_MAX;
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

uint64_t trace_region_length(const struct trace_region *r)
{
    return r->end - r->start;
}

double trace_region_util(const struct trace_region *r, uint64_t busy)
{
    uint64_t len = trace_region_length(r);
    return len ? (double)busy / (double)len : 0;
}

const char *trace_region_kind_name(enum trace_region_kind k)
{
    static const char *const names[] = {"run", "launch", "marker", "layer"};
    return k < TRACE_REGION_KIND_COUNT ? names[k] : "?";
}
