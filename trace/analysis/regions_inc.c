/*
 * The regions of a growing model (see regions_inc.h). The state keeps, per region (a layer_id
 * or a cmdq_id), per (region, track) and per (region, op name), what the folded-in events
 * add up to, and for each union of busy intervals its recent part as merged intervals (an
 * interval set: what a late event may still overlap) with the length of the rest, found
 * through open-addressed tables. An update folds in every event that ended since (the new
 * ones and those it left in flight), then adds the events still in flight to the same
 * accumulators, saving each before its first change: counts and sums as they are, busy
 * cycles as the part of [their earliest start, now) the union does not cover yet; it builds
 * the region set from the accumulators and puts back what it saved.
 */
#include "trace/analysis/regions_inc.h"

#include "sim/data/value.h"
#include "sim/util/keytab.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/regions_int.h"
#include "trace/model/radix.h"

#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KINDS = TRACE_ENGINE_COUNT };

#define NONE UINT32_MAX

/* ---- the accumulators --------------------------------------------------------------------- */

/* The recent part of a union of intervals: merged, disjoint, sorted [v[2i], v[2i + 1]); the
 * intervals ending at or before the state's truncation are dropped (their length is in the
 * busy cycles already; no event still to come can overlap them). */
struct ivset {
    uint64_t *v; /* owned */
    uint32_t n, cap;
};

/* What a region's events add up to (the part saved and put back around the events in flight;
 * an ivset's intervals are never changed by those, so its copy shares them). */
struct racc {
    uint64_t start, end; /* first start, last end of its events */
    bool seen;           /* it has an event */
    uint32_t stamp;      /* the update that saved it last */
    struct trace_usage all, engine[KINDS];
    struct ivset kind_iv[KINDS], all_iv;
    uint64_t kind_tmin[KINDS], all_tmin; /* the earliest start in flight (UINT64_MAX: none) */
};

/* A region's key and lists (never put back: what the events in flight add stays, empty). */
struct rlist {
    uint64_t key;      /* layer_id, or cmdq_id as uint32_t */
    char *host_name;   /* owned, LAUNCH: from the first folded-in HOST event that names it */
    uint64_t host_ev;  /* that event */
    uint32_t *tr, *op; /* owned: its track and op name accumulators */
    size_t ntr, captr, nop, capop;
};

struct tacc {
    uint32_t track, stamp;
    struct trace_usage u;
    struct ivset iv;
    uint64_t tmin;
};

struct oacc {
    uint32_t op, stamp;
    uint64_t count, cycles, start, end, rd, wr, busy;
    uint64_t ebusy[KINDS];
    struct ivset iv[KINDS + 1]; /* per engine kind, and on any */
    uint64_t tmin[KINDS + 1];
};

/* What a launch's markers and tokens say of it (by cmdq_id, whether it has events or not). */
struct linfo {
    uint64_t mk_min, mk_max; /* the span of its markers */
    bool has_mk;
    size_t mk_name, tok_name; /* the first marker, token naming its kernel; SIZE_MAX: none */
};

struct save_r {
    uint32_t i;
    struct racc c;
};
struct save_t {
    uint32_t i;
    struct tacc c;
};
struct save_o {
    uint32_t i;
    struct oacc c;
};

struct trace_regions_inc {
    enum trace_region_kind kind;
    enum trace_regions_depth depth;
    const struct trace_model *m; /* the model of the last update */
    uint64_t scanned;            /* events [0, scanned) were seen: all folded in but pend */
    uint64_t *pend;              /* owned: those seen in flight, not folded in yet */
    size_t npend, cappend;
    struct trace_event last_ev; /* event scanned - 1 as it was seen */
    uint64_t trunc;             /* no event still to come starts before this */
    uint64_t max_start;         /* the latest start seen */
    uint64_t max_late;          /* the most an event started before one seen earlier */
    size_t xseen;               /* transfers checked for their order */
    size_t xpos;                /* a cursor into the transfers (bytes_of) */
    size_t nmk, ntok;           /* markers and tokens read */
    uint32_t stamp;             /* of the current update's events in flight */
    bool saving;                /* applying events in flight: save before changing */
    struct sim_keytab rmap, tmap, omap, lmap; /* ids: indexes into r, t, o, li */
    struct racc *r;
    struct rlist *rl;
    size_t nr, capr;
    struct tacc *t;
    size_t nt, capt;
    struct oacc *o;
    size_t no, capo;
    struct linfo *li;
    size_t nli, capli;
    uint8_t *engine_of; /* per track: its engine kind */
    bool *host;         /* per track: a HOST track */
    size_t ntracks;
    struct save_r *sr;
    size_t nsr, capsr;
    struct save_t *st;
    size_t nst, capst;
    struct save_o *so;
    size_t nso, capso;
    uint32_t last_key_slot; /* the region of the last event (a layer's ops come in runs) */
    uint64_t last_key;
    uint64_t *tcache, *ocache; /* owned: per track, per op name: the last (region << 32 |
                                  accumulator) + 1 it was found in (0: none) */
    size_t ntcache, nocache;
};

/* ---- interval sets ------------------------------------------------------------------------- */

/* Add [s, e) (e > s) to iv, dropping what ends at or before trunc; returns the cycles it adds
 * to the union. */
static uint64_t iv_add(struct ivset *iv, uint64_t s, uint64_t e, uint64_t trunc)
{
    uint32_t n = iv->n;
    if (n && s >= iv->v[2 * n - 2] && s <= iv->v[2 * n - 1]) { /* on the last one: in order */
        uint64_t *end = &iv->v[2 * n - 1];
        uint64_t covered = (e < *end ? e : *end) - s;
        *end = e > *end ? e : *end;
        return (e - s) - covered;
    }
    if (n && iv->v[2 * n - 1] < s) { /* after the last one */
        if (iv->v[1] <= trunc) {     /* drop the old ones first */
            uint32_t d = 0;
            while (d < n && iv->v[2 * d + 1] <= trunc)
                d++;
            memmove(iv->v, iv->v + 2 * d, 2 * (size_t)(n - d) * sizeof(*iv->v));
            n = iv->n = n - d;
        }
        if (n == iv->cap) {
            iv->cap = iv->cap ? 2 * iv->cap : 4;
            iv->v = sim_xreallocarray(iv->v, 2 * (size_t)iv->cap, sizeof(*iv->v));
        }
        iv->v[2 * n] = s;
        iv->v[2 * n + 1] = e;
        iv->n = n + 1;
        return e - s;
    }
    /* the first interval ending at or after s, and the first starting after e */
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (iv->v[2 * mid + 1] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t a = lo, b = lo;
    uint64_t covered = 0, ns = s, ne = e;
    for (; b < n && iv->v[2 * b] <= e; b++) {
        uint64_t x = iv->v[2 * b], y = iv->v[2 * b + 1];
        uint64_t p = x > s ? x : s, q = y < e ? y : e;
        covered += q > p ? q - p : 0;
        ns = x < ns ? x : ns;
        ne = y > ne ? y : ne;
    }
    /* intervals [a, b) become [ns, ne) */
    if (a == b) {
        if (n == iv->cap) {
            iv->cap = iv->cap ? 2 * iv->cap : 4;
            iv->v = sim_xreallocarray(iv->v, 2 * (size_t)iv->cap, sizeof(*iv->v));
        }
        memmove(iv->v + 2 * (a + 1), iv->v + 2 * a, 2 * (size_t)(n - a) * sizeof(*iv->v));
        iv->n = n + 1;
    } else if (b - a > 1) {
        memmove(iv->v + 2 * (a + 1), iv->v + 2 * b, 2 * (size_t)(n - b) * sizeof(*iv->v));
        iv->n = n - (b - a - 1);
    }
    iv->v[2 * a] = ns;
    iv->v[2 * a + 1] = ne;
    return (e - s) - covered;
}

/* The cycles of [s, e) that iv does not cover. */
static uint64_t iv_uncovered(const struct ivset *iv, uint64_t s, uint64_t e)
{
    if (e <= s)
        return 0;
    uint32_t lo = 0, hi = iv->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (iv->v[2 * mid + 1] <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t covered = 0;
    for (uint32_t b = lo; b < iv->n && iv->v[2 * b] < e; b++) {
        uint64_t x = iv->v[2 * b], y = iv->v[2 * b + 1];
        uint64_t p = x > s ? x : s, q = y < e ? y : e;
        covered += q > p ? q - p : 0;
    }
    return (e - s) - covered;
}

#define GROW(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : 16;                                                        \
            (arr) = sim_xreallocarray((arr), (cap), sizeof(*(arr)));                               \
        }                                                                                          \
    } while (0)

struct trace_regions_inc *trace_regions_inc_new(enum trace_region_kind kind,
                                                enum trace_regions_depth depth)
{
    struct trace_regions_inc *st = sim_xcalloc(1, sizeof(*st));
    st->kind = kind;
    st->depth = depth;
    st->last_key_slot = NONE;
    return st;
}

static void iv_free(struct ivset *iv)
{
    free(iv->v);
}

/* Forget everything folded in (not how late events came: that stays a lesson). */
static void reset(struct trace_regions_inc *st)
{
    for (size_t i = 0; i < st->nr; i++) {
        free(st->rl[i].host_name);
        free(st->rl[i].tr);
        free(st->rl[i].op);
        for (int k = 0; k < KINDS; k++)
            iv_free(&st->r[i].kind_iv[k]);
        iv_free(&st->r[i].all_iv);
    }
    for (size_t i = 0; i < st->nt; i++)
        iv_free(&st->t[i].iv);
    for (size_t i = 0; i < st->no; i++)
        for (int k = 0; k <= KINDS; k++)
            iv_free(&st->o[i].iv[k]);
    free(st->r), free(st->rl), free(st->t), free(st->o), free(st->li);
    free(st->engine_of), free(st->host), free(st->pend), free(st->tcache), free(st->ocache);
    free(st->sr), free(st->st), free(st->so);
    sim_keytab_free(&st->rmap), sim_keytab_free(&st->tmap);
    sim_keytab_free(&st->omap), sim_keytab_free(&st->lmap);
    enum trace_region_kind kind = st->kind;
    enum trace_regions_depth depth = st->depth;
    uint64_t late = st->max_late;
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    st->depth = depth;
    st->max_late = late;
    st->last_key_slot = NONE;
}

void trace_regions_inc_free(struct trace_regions_inc *st)
{
    if (!st)
        return;
    reset(st);
    free(st);
}

uint64_t trace_regions_inc_folded(const struct trace_regions_inc *st)
{
    return st->scanned - st->npend;
}

/* The tracks' engine kinds, for tracks added since. */
static void learn_tracks(struct trace_regions_inc *st, const struct trace_model *m)
{
    size_t nt = trace_model_track_count(m);
    if (nt <= st->ntracks)
        return;
    st->engine_of = sim_xreallocarray(st->engine_of, nt, sizeof(*st->engine_of));
    st->host = sim_xreallocarray(st->host, nt, sizeof(*st->host));
    for (size_t t = st->ntracks; t < nt; t++) {
        enum trace_engine k = trace_model_track_get(m, (uint32_t)t)->engine;
        st->engine_of[t] = (uint8_t)(k < TRACE_ENGINE_COUNT ? k : TRACE_ENGINE_OTHER);
        st->host[t] = k == TRACE_ENGINE_HOST;
    }
    st->ntracks = nt;
}

/* The region key of an event, or false when it belongs to none. */
static bool key_of(const struct trace_regions_inc *st, const struct trace_event *e, uint64_t *key)
{
    if (st->kind == TRACE_REGION_LAYER) {
        *key = e->layer;
        return e->layer != TRACE_NO_STR;
    }
    *key = (uint32_t)e->cmdq_id;
    return e->cmdq_id != TRACE_NO_CMDQ;
}

static uint32_t region_slot(struct trace_regions_inc *st, uint64_t key)
{
    if (st->last_key_slot != NONE && st->last_key == key)
        return st->last_key_slot;
    uint32_t s = sim_keytab_id(&st->rmap, key);
    if (s == st->nr) { /* new */
        if (st->nr == st->capr) {
            st->capr = st->capr ? 2 * st->capr : 16;
            st->r = sim_xreallocarray(st->r, st->capr, sizeof(*st->r));
            st->rl = sim_xreallocarray(st->rl, st->capr, sizeof(*st->rl));
        }
        s = (uint32_t)st->nr++;
        st->r[s] = (struct racc){.all_tmin = UINT64_MAX};
        for (int k = 0; k < KINDS; k++)
            st->r[s].kind_tmin[k] = UINT64_MAX;
        st->rl[s] = (struct rlist){.key = key};
    }
    st->last_key = key;
    st->last_key_slot = s;
    return s;
}

static struct racc *racc_w(struct trace_regions_inc *st, uint32_t s)
{
    struct racc *r = &st->r[s];
    if (st->saving && r->stamp != st->stamp) {
        GROW(st->sr, st->nsr, st->capsr);
        st->sr[st->nsr++] = (struct save_r){s, *r};
        r->stamp = st->stamp;
    }
    return r;
}

/* The accumulator of (region s, id) from cache[id] (size *n, grown), else from map. */
static uint32_t cached_get(uint64_t **cache, size_t *n, const struct sim_keytab *map, uint32_t s,
                           uint32_t id)
{
    if (id >= *n) {
        size_t m = (size_t)id + 64;
        *cache = sim_xreallocarray(*cache, m, sizeof(**cache));
        memset(*cache + *n, 0, (m - *n) * sizeof(**cache));
        *n = m;
    }
    uint64_t c = (*cache)[id];
    if (c && (uint32_t)((c - 1) >> 32) == s)
        return (uint32_t)(c - 1);
    uint32_t i = sim_keytab_find(map, (uint64_t)s << 32 | id);
    if (i != SIM_KEYTAB_NONE)
        (*cache)[id] = ((uint64_t)s << 32 | i) + 1;
    return i;
}

static struct tacc *tacc_w(struct trace_regions_inc *st, uint32_t s, uint32_t track)
{
    uint64_t k = (uint64_t)s << 32 | track;
    uint32_t i = cached_get(&st->tcache, &st->ntcache, &st->tmap, s, track);
    if (i == NONE) {
        GROW(st->t, st->nt, st->capt);
        i = sim_keytab_id(&st->tmap, k); /* st->nt */
        st->nt++;
        st->t[i] = (struct tacc){.track = track, .tmin = UINT64_MAX};
        struct rlist *l = &st->rl[s];
        GROW(l->tr, l->ntr, l->captr);
        l->tr[l->ntr++] = i;
    }
    struct tacc *t = &st->t[i];
    if (st->saving && t->stamp != st->stamp) {
        GROW(st->st, st->nst, st->capst);
        st->st[st->nst++] = (struct save_t){i, *t};
        t->stamp = st->stamp;
    }
    return t;
}

static struct oacc *oacc_w(struct trace_regions_inc *st, uint32_t s, uint32_t op)
{
    uint64_t k = (uint64_t)s << 32 | op;
    uint32_t i = cached_get(&st->ocache, &st->nocache, &st->omap, s, op);
    if (i == NONE) {
        GROW(st->o, st->no, st->capo);
        i = sim_keytab_id(&st->omap, k); /* st->no */
        st->no++;
        st->o[i] = (struct oacc){.op = op};
        for (int j = 0; j <= KINDS; j++)
            st->o[i].tmin[j] = UINT64_MAX;
        struct rlist *l = &st->rl[s];
        GROW(l->op, l->nop, l->capop);
        l->op[l->nop++] = i;
    }
    struct oacc *o = &st->o[i];
    if (st->saving && o->stamp != st->stamp) {
        GROW(st->so, st->nso, st->capso);
        st->so[st->nso++] = (struct save_o){i, *o};
        o->stamp = st->stamp;
    }
    return o;
}

/* Put back what the events in flight changed. */
static void restore(struct trace_regions_inc *st)
{
    for (size_t i = 0; i < st->nsr; i++)
        st->r[st->sr[i].i] = st->sr[i].c;
    for (size_t i = 0; i < st->nst; i++)
        st->t[st->st[i].i] = st->st[i].c;
    for (size_t i = 0; i < st->nso; i++)
        st->o[st->so[i].i] = st->so[i].c;
    st->nsr = st->nst = st->nso = 0;
}

static void usage_add(struct trace_usage *to, const struct trace_usage *u)
{
    to->busy += u->busy;
    to->ops += u->ops;
    to->op_cycles += u->op_cycles;
    to->read_bytes += u->read_bytes;
    to->write_bytes += u->write_bytes;
}

static inline void tmin_at(uint64_t *t, uint64_t s)
{
    *t = s < *t ? s : *t;
}

/* Add an event of region s, over [start, end), with its DRAM bytes, to the accumulators; one
 * in flight (st->saving) adds its start to the unions' earliest in flight instead. */
static void apply(struct trace_regions_inc *st, uint32_t s, const struct trace_event *e,
                  uint64_t end, uint64_t rd, uint64_t wr)
{
    struct racc *r = racc_w(st, s);
    if (!r->seen || e->start < r->start)
        r->start = e->start;
    if (!r->seen || end > r->end)
        r->end = end;
    r->seen = true;
    if (st->depth == TRACE_REGIONS_SPLIT)
        return;
    uint32_t k = e->track < st->ntracks ? st->engine_of[e->track] : TRACE_ENGINE_OTHER;
    uint64_t len = end - e->start;
    struct trace_usage u = {.ops = 1, .op_cycles = len, .read_bytes = rd, .write_bytes = wr};
    usage_add(&r->all, &u);
    usage_add(&r->engine[k], &u);
    struct tacc *t = tacc_w(st, s, e->track);
    usage_add(&t->u, &u);
    struct oacc *o = oacc_w(st, s, e->op);
    if (!o->count) {
        o->start = e->start;
        o->end = end;
    }
    o->count++;
    o->cycles += len;
    o->start = e->start < o->start ? e->start : o->start;
    o->end = end > o->end ? end : o->end;
    o->rd += rd;
    o->wr += wr;
    if (!len)
        return;
    bool ob = st->depth == TRACE_REGIONS_FULL;
    if (st->saving) {
        tmin_at(&t->tmin, e->start);
        tmin_at(&r->kind_tmin[k], e->start);
        tmin_at(&r->all_tmin, e->start);
        if (ob) {
            tmin_at(&o->tmin[k], e->start);
            tmin_at(&o->tmin[KINDS], e->start);
        }
        return;
    }
    uint64_t tr = st->trunc;
    t->u.busy += iv_add(&t->iv, e->start, end, tr);
    r->engine[k].busy += iv_add(&r->kind_iv[k], e->start, end, tr);
    r->all.busy += iv_add(&r->all_iv, e->start, end, tr);
    if (ob) {
        o->ebusy[k] += iv_add(&o->iv[k], e->start, end, tr);
        o->busy += iv_add(&o->iv[KINDS], e->start, end, tr);
    }
}

/* The busy cycles the events in flight add, [the earliest start, now) past each union: every
 * accumulator they touched was saved. */
static void add_in_flight(struct trace_regions_inc *st, uint64_t now)
{
    for (size_t i = 0; i < st->nsr; i++) {
        struct racc *r = &st->r[st->sr[i].i];
        for (int k = 0; k < KINDS; k++)
            if (r->kind_tmin[k] != UINT64_MAX)
                r->engine[k].busy += iv_uncovered(&r->kind_iv[k], r->kind_tmin[k], now);
        if (r->all_tmin != UINT64_MAX)
            r->all.busy += iv_uncovered(&r->all_iv, r->all_tmin, now);
    }
    for (size_t i = 0; i < st->nst; i++) {
        struct tacc *t = &st->t[st->st[i].i];
        if (t->tmin != UINT64_MAX)
            t->u.busy += iv_uncovered(&t->iv, t->tmin, now);
    }
    for (size_t i = 0; i < st->nso; i++) {
        struct oacc *o = &st->o[st->so[i].i];
        for (int k = 0; k < KINDS; k++)
            if (o->tmin[k] != UINT64_MAX)
                o->ebusy[k] += iv_uncovered(&o->iv[k], o->tmin[k], now);
        if (o->tmin[KINDS] != UINT64_MAX)
            o->busy += iv_uncovered(&o->iv[KINDS], o->tmin[KINDS], now);
    }
}

/* ---- launches: names and markers ---------------------------------------------------------- */

/* The cmdq_id a marker's or token's details name, or false. */
static bool details_cmdq(const struct sim_value *d, int32_t *cmdq)
{
    const struct sim_value *id = sim_value_map_get(d, "cmdq_id");
    if (!id || id->type != SIM_V_INT || id->u.i < INT32_MIN || id->u.i > INT32_MAX)
        return false;
    *cmdq = (int32_t)id->u.i;
    return true;
}

static const char *details_kernel(const struct sim_value *d)
{
    const char *k = sim_value_get_str(d, "kernel", NULL);
    return k && k[0] ? k : NULL;
}

static struct linfo *linfo_of(struct trace_regions_inc *st, int32_t cmdq)
{
    uint64_t key = (uint32_t)cmdq;
    uint32_t i = sim_keytab_id(&st->lmap, key);
    if (i == st->nli) { /* new */
        GROW(st->li, st->nli, st->capli);
        st->nli++;
        st->li[i] = (struct linfo){.mk_name = SIZE_MAX, .tok_name = SIZE_MAX};
    }
    return &st->li[i];
}

/* The markers and tokens added since (a model's markers and tokens are only appended). */
static void learn_launch_info(struct trace_regions_inc *st, const struct trace_model *m)
{
    int32_t c;
    for (size_t k = st->nmk; k < trace_model_marker_count(m); k++) {
        const struct trace_marker *mk = trace_model_marker(m, k);
        if (!details_cmdq(mk->details, &c))
            continue;
        struct linfo *li = linfo_of(st, c);
        li->mk_min = !li->has_mk || mk->cycle < li->mk_min ? mk->cycle : li->mk_min;
        li->mk_max = !li->has_mk || mk->cycle > li->mk_max ? mk->cycle : li->mk_max;
        li->has_mk = true;
        if (li->mk_name == SIZE_MAX && details_kernel(mk->details))
            li->mk_name = k;
    }
    st->nmk = trace_model_marker_count(m);
    for (size_t k = st->ntok; k < trace_model_token_count(m); k++) {
        const struct trace_token *t = trace_model_token(m, k);
        if (!details_cmdq(t->details, &c) || !details_kernel(t->details))
            continue;
        struct linfo *li = linfo_of(st, c);
        if (li->tok_name == SIZE_MAX)
            li->tok_name = k;
    }
    st->ntok = trace_model_token_count(m);
}

/* ---- building the set ----------------------------------------------------------------------- */

static _Thread_local const struct trace_regions_inc *sort_st; /* for qsort */

static int cmp_layer(const void *a, const void *b)
{
    const struct racc *x = &sort_st->r[*(const uint32_t *)a],
                      *y = &sort_st->r[*(const uint32_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    uint64_t p = sort_st->rl[*(const uint32_t *)a].key, q = sort_st->rl[*(const uint32_t *)b].key;
    return p < q ? -1 : p > q;
}

static int cmp_launch(const void *a, const void *b)
{
    int32_t x = (int32_t)(uint32_t)sort_st->rl[*(const uint32_t *)a].key;
    int32_t y = (int32_t)(uint32_t)sort_st->rl[*(const uint32_t *)b].key;
    return x < y ? -1 : x > y;
}

static int cmp_tacc(const void *a, const void *b)
{
    uint32_t x = sort_st->t[*(const uint32_t *)a].track, y = sort_st->t[*(const uint32_t *)b].track;
    return x < y ? -1 : x > y;
}

static int cmp_oacc(const void *a, const void *b)
{
    uint32_t x = sort_st->o[*(const uint32_t *)a].op, y = sort_st->o[*(const uint32_t *)b].op;
    return x < y ? -1 : x > y;
}

/* Region s's usage per track and op name into reg. */
static void emit_usage(const struct trace_regions_inc *st, uint32_t s, struct trace_region *reg)
{
    const struct racc *r = &st->r[s];
    const struct rlist *l = &st->rl[s];
    reg->all = r->all;
    memcpy(reg->engine, r->engine, sizeof(reg->engine));
    uint32_t *idx = sim_xreallocarray(NULL, l->ntr + l->nop + 1, sizeof(*idx));
    size_t n = 0;
    for (size_t i = 0; i < l->ntr; i++)
        if (st->t[l->tr[i]].u.ops)
            idx[n++] = l->tr[i];
    qsort(idx, n, sizeof(*idx), cmp_tacc);
    reg->tracks = sim_xreallocarray(NULL, n ? n : 1, sizeof(*reg->tracks));
    for (size_t i = 0; i < n; i++)
        reg->tracks[reg->ntracks++] =
            (struct trace_track_usage){st->t[idx[i]].track, st->t[idx[i]].u};
    n = 0;
    for (size_t i = 0; i < l->nop; i++)
        if (st->o[l->op[i]].count)
            idx[n++] = l->op[i];
    qsort(idx, n, sizeof(*idx), cmp_oacc);
    reg->ops = sim_xreallocarray(NULL, n ? n : 1, sizeof(*reg->ops));
    for (size_t i = 0; i < n; i++) {
        const struct oacc *o = &st->o[idx[i]];
        struct trace_op_usage *u = &reg->ops[reg->nops++];
        *u = (struct trace_op_usage){.op = o->op,
                                     .count = o->count,
                                     .cycles = o->cycles,
                                     .start = o->start,
                                     .end = o->end,
                                     .busy = o->busy,
                                     .read_bytes = o->rd,
                                     .write_bytes = o->wr};
        memcpy(u->engine_busy, o->ebusy, sizeof(u->engine_busy));
    }
    free(idx);
}

/* The region set from the accumulators; tail_name[s] (may be NULL) names a launch from a HOST
 * event in flight when its folded ones did not. */
static struct trace_regions *build(struct trace_regions_inc *st, const struct trace_model *m,
                                   char *const *tail_name)
{
    struct trace_regions *rs = sim_xcalloc(1, sizeof(*rs));
    rs->m = m;
    rs->kind = st->kind;
    rs->no_op_busy = st->depth != TRACE_REGIONS_FULL;
    rs->nevents = trace_model_event_count(m);
    rs->ev = rs->nevents ? trace_model_event(m, 0) : NULL;
    uint32_t *order = sim_xreallocarray(NULL, st->nr ? st->nr : 1, sizeof(*order));
    size_t n = 0;
    for (size_t s = 0; s < st->nr; s++)
        if (st->r[s].seen)
            order[n++] = (uint32_t)s;
    sort_st = st;
    qsort(order, n, sizeof(*order), st->kind == TRACE_REGION_LAYER ? cmp_layer : cmp_launch);
    if (st->kind == TRACE_REGION_LAYER) {
        rs->nlayer_ids = trace_model_str_count(m);
        rs->by_layer =
            sim_xreallocarray(NULL, rs->nlayer_ids ? rs->nlayer_ids : 1, sizeof(*rs->by_layer));
        for (size_t i = 0; i < rs->nlayer_ids; i++)
            rs->by_layer[i] = NO_REGION;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t s = order[i];
        const struct racc *r = &st->r[s];
        struct trace_region *reg;
        if (st->kind == TRACE_REGION_LAYER) {
            uint32_t l = (uint32_t)st->rl[s].key;
            reg = trace_regions_add_(rs, trace_model_str(m, l), TRACE_NO_CMDQ, r->start, r->end);
            reg->layer = l;
            if (l < rs->nlayer_ids)
                rs->by_layer[l] = (uint32_t)i;
        } else {
            int32_t c = (int32_t)(uint32_t)st->rl[s].key;
            uint32_t li = sim_keytab_find(&st->lmap, (uint32_t)c);
            const struct linfo *info = li == NONE ? NULL : &st->li[li];
            const char *name = NULL;
            if (info && info->mk_name != SIZE_MAX)
                name = details_kernel(trace_model_marker(m, info->mk_name)->details);
            else if (info && info->tok_name != SIZE_MAX)
                name = details_kernel(trace_model_token(m, info->tok_name)->details);
            else if (tail_name && tail_name[s]) /* before the folded-in one in event order */
                name = tail_name[s];
            else if (st->rl[s].host_name)
                name = st->rl[s].host_name;
            char fallback[32];
            snprintf(fallback, sizeof(fallback), "cmdq %d", (int)c);
            uint64_t a = r->start, b = r->end;
            if (info && info->has_mk) {
                a = info->mk_min < a ? info->mk_min : a;
                b = info->mk_max > b ? info->mk_max : b;
            }
            reg = trace_regions_add_(rs, name ? name : fallback, c, a, b);
        }
        if (st->depth != TRACE_REGIONS_SPLIT)
            emit_usage(st, s, reg);
    }
    sort_st = NULL;
    free(order);
    trace_regions_number_(rs);
    return rs;
}

/* ---- the update ------------------------------------------------------------------------------ */

static uint64_t ev_end(const struct trace_model *m, const struct trace_event *ev)
{
    if (ev->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(m);
        return now > ev->start ? now : ev->start;
    }
    return ev->end;
}

static struct trace_regions *from_scratch(const struct trace_regions_inc *st,
                                          const struct trace_model *m, struct trace_progress *p)
{
    struct trace_regions *rs =
        st->depth == TRACE_REGIONS_FULL    ? trace_regions_new_progress(m, st->kind, p)
        : st->depth == TRACE_REGIONS_LIGHT ? trace_regions_new_light(m, st->kind, p)
                                           : trace_regions_new_split(m, st->kind);
    if (trace_progress_cancelled(p)) {
        trace_regions_free(rs);
        return NULL;
    }
    return rs;
}

/* Whether the model still holds what was seen: the same model, no fewer events, the last
 * event seen unchanged (its end and details may have changed since). */
static bool still_valid(const struct trace_regions_inc *st, const struct trace_model *m)
{
    if (st->m != m || trace_model_event_count(m) < st->scanned)
        return false;
    if (!st->scanned)
        return true;
    const struct trace_event *e = trace_model_event(m, st->scanned - 1), *f = &st->last_ev;
    return e->start == f->start && e->track == f->track && e->op == f->op && e->layer == f->layer &&
           e->cmdq_id == f->cmdq_id;
}

/* Whether event i is one of those seen in flight (pend is in event order). */
static bool pending(const struct trace_regions_inc *st, uint64_t i)
{
    size_t lo = 0, hi = st->npend;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->pend[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->npend && st->pend[lo] == i;
}

/* Check the transfers added since: in event order, none of an event folded in. */
static bool transfers_ok(struct trace_regions_inc *st, const struct trace_model *m)
{
    size_t nx = trace_model_transfer_count(m);
    if (nx < st->xseen)
        return false;
    const struct trace_transfer *xs = nx ? trace_model_transfer(m, 0) : NULL;
    for (size_t k = st->xseen; k < nx; k++) {
        if (k && xs[k].event < xs[k - 1].event)
            return false;
        if (xs[k].event < st->scanned && !pending(st, xs[k].event))
            return false;
    }
    st->xseen = nx;
    return true;
}

/* The first of xs[lo..hi) of event i or later (xs in event order). */
static size_t first_of(const struct trace_transfer *xs, size_t lo, size_t hi, uint64_t i)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (xs[mid].event < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The DRAM bytes of event i, from the transfers (in event order): galloping forward from where
 * the last search ended, or searched before it. */
static void bytes_of(struct trace_regions_inc *st, const struct trace_transfer *xs, size_t nx,
                     uint64_t i, uint64_t *rd, uint64_t *wr)
{
    size_t x = st->xpos < nx ? st->xpos : nx;
    if (x && xs[x - 1].event >= i) {
        x = first_of(xs, 0, x, i);
    } else if (x < nx && xs[x].event < i) {
        size_t step = 1, lo = x;
        while (x + step < nx && xs[x + step].event < i) {
            lo = x + step;
            step *= 2;
        }
        x = first_of(xs, lo, x + step < nx ? x + step + 1 : nx, i);
    }
    *rd = *wr = 0;
    for (; x < nx && xs[x].event == i; x++)
        *(xs[x].flags & TRACE_XFER_WRITE ? wr : rd) += xs[x].bytes;
    st->xpos = x;
}

/* Fold in event i, ended. */
static void fold(struct trace_regions_inc *st, const struct trace_model *m, uint64_t i,
                 const struct trace_transfer *xs, size_t nx)
{
    const struct trace_event *e = trace_model_event(m, i);
    uint64_t key;
    if (!key_of(st, e, &key))
        return;
    uint64_t rd, wr;
    bytes_of(st, xs, nx, i, &rd, &wr);
    uint32_t s = region_slot(st, key);
    apply(st, s, e, e->end, rd, wr);
    struct rlist *l = &st->rl[s];
    if (st->kind == TRACE_REGION_LAUNCH && e->track < st->ntracks && st->host[e->track] &&
        (!l->host_name || i < l->host_ev)) {
        char *name = trace_regions_host_name_(m, i);
        if (name) {
            free(l->host_name);
            l->host_name = name;
            l->host_ev = i;
        }
    }
}

struct trace_regions *trace_regions_inc_update(struct trace_regions_inc *st,
                                               const struct trace_model *m,
                                               struct trace_progress *p)
{
    if (st->kind == TRACE_REGION_RUN || st->kind == TRACE_REGION_MARKER)
        return from_scratch(st, m, p);
    if (!still_valid(st, m))
        reset(st);
    st->m = m;
    if (!transfers_ok(st, m)) {
        reset(st);
        st->m = m;
        if (!transfers_ok(st, m)) /* out of event order: no folding in */
            return from_scratch(st, m, p);
    }
    uint64_t n = trace_model_event_count(m);
    const struct trace_event *evs = n ? trace_model_event(m, 0) : NULL;
    /* the new events must not start before what was given up of the unions */
    for (uint64_t i = st->scanned; i < n; i++) {
        uint64_t s = evs[i].start;
        if (s < st->max_start && st->max_start - s > st->max_late)
            st->max_late = st->max_start - s;
        if (s > st->max_start)
            st->max_start = s;
        if (s < st->trunc) { /* later than ever: start over, more careful */
            reset(st);
            st->m = m;
            transfers_ok(st, m);
            break;
        }
    }
    learn_tracks(st, m);
    if (st->kind == TRACE_REGION_LAUNCH)
        learn_launch_info(st, m);
    size_t nx = trace_model_transfer_count(m);
    const struct trace_transfer *xs = nx ? trace_model_transfer(m, 0) : NULL;
    assert(evs || (!st->scanned && !st->npend)); /* scanned <= n, and pend is below scanned */
    /* fold in the events seen in flight that have ended, then the new ones */
    uint64_t todo = st->npend + (n - st->scanned), done = 0;
    trace_progress_step(p, "regions: new events", todo);
    size_t kept = 0;
    for (size_t k = 0; k < st->npend; k++) {
        uint64_t i = st->pend[k];
        if (evs[i].flags & TRACE_EV_INFLIGHT)
            st->pend[kept++] = i;
        else
            fold(st, m, i, xs, nx);
    }
    st->npend = kept;
    done = st->npend;
    /* what no event still to come starts before, as the fold goes: the events in flight, and
     * the latest start so far less twice the most an event has come late (an event later than
     * that makes the next update start over); the unions forget what ends before it */
    uint64_t minpend = UINT64_MAX, run_max = 0, slack = 2 * st->max_late + 1024;
    for (size_t k = 0; k < st->npend; k++)
        minpend = evs[st->pend[k]].start < minpend ? evs[st->pend[k]].start : minpend;
    for (; st->scanned < n; st->scanned++, done++) {
        if (done % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(p, done))
            break;
        uint64_t i = st->scanned;
        if (evs[i].start > run_max) {
            run_max = evs[i].start;
            uint64_t t = run_max > slack ? run_max - slack : 0;
            t = minpend < t ? minpend : t;
            st->trunc = t > st->trunc ? t : st->trunc;
        }
        if (evs[i].flags & TRACE_EV_INFLIGHT) {
            if (st->npend == st->cappend) {
                st->cappend = st->cappend ? 2 * st->cappend : 64;
                st->pend = sim_xreallocarray(st->pend, st->cappend, sizeof(*st->pend));
            }
            st->pend[st->npend++] = i;
        } else {
            fold(st, m, i, xs, nx);
        }
    }
    if (st->scanned)
        st->last_ev = evs[st->scanned - 1];
    /* what no event still to come starts before: the events in flight, and the latest start
     * less the most an event has come late so far, twice over */
    uint64_t t =
        st->max_start > 2 * st->max_late + 1024 ? st->max_start - 2 * st->max_late - 1024 : 0;
    for (size_t k = 0; k < st->npend; k++)
        t = evs[st->pend[k]].start < t ? evs[st->pend[k]].start : t;
    st->trunc = t > st->trunc ? t : st->trunc;
    if (trace_progress_cancelled(p))
        return NULL;
    /* the events in flight, applied on top and put back afterwards */
    st->stamp++;
    st->saving = true;
    uint32_t saved_slot = st->last_key_slot;
    uint64_t saved_key = st->last_key;
    char **tail_name = NULL;
    uint64_t now = trace_model_now(m);
    for (size_t k = 0; k < st->npend; k++) {
        uint64_t i = st->pend[k];
        const struct trace_event *e = &evs[i];
        uint64_t key;
        if (!key_of(st, e, &key))
            continue;
        uint64_t rd, wr;
        bytes_of(st, xs, nx, i, &rd, &wr);
        uint32_t s = region_slot(st, key);
        apply(st, s, e, ev_end(m, e), rd, wr);
        if (st->kind == TRACE_REGION_LAUNCH && e->track < st->ntracks && st->host[e->track]) {
            if (!tail_name)
                tail_name = sim_xcalloc(st->nr + st->npend, sizeof(*tail_name));
            /* the first in event order names it: a folded-in one before it, or this */
            if (!tail_name[s] && (!st->rl[s].host_name || i < st->rl[s].host_ev))
                tail_name[s] = trace_regions_host_name_(m, i);
        }
    }
    add_in_flight(st, now);
    struct trace_regions *rs = build(st, m, tail_name);
    st->saving = false;
    restore(st);
    st->last_key_slot = saved_slot;
    st->last_key = saved_key;
    if (tail_name) {
        for (size_t s = 0; s < st->nr; s++)
            free(tail_name[s]);
        free(tail_name);
    }
    return rs;
}
