/*
 * The anomalies of a growing model (see anomaly.h, trace_anomaly_inc_update): the slow ops by
 * (group, duration) with their ops in event order, each launch's covered time as merged
 * pieces (the gaps before the recent ones final: counted by length, kept when long), the
 * bandwidth windows of the transfers of ended ops; the ops in flight are added on top for
 * each update, on copies or put back, and the list built as anomaly.c builds it.
 */
#include "trace/verdict/anomaly.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/metrics.h"
#include "trace/verdict/anomaly_int.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t ev_end(const struct trace_model *m, const struct trace_event *ev)
{
    return trace_anomaly_ev_end_(m, ev);
}

/* The ops of one (group, duration) of the slow ops, in event order. */
struct dent {
    uint64_t dur;
    uint32_t *ev; /* owned */
    size_t n, cap;
};

/* A group of the slow ops (op name, HOST track, engine kind): its durations. */
struct sgroup {
    uint64_t key;
    size_t count;
    uint32_t *d; /* owned: its dents, sorted by duration up to nsorted */
    size_t nd, capd, nsorted;
};

/* A covered piece [a, b] of a launch's time (its ops' spans merged; a zero-length op is a
 * point), and the first op in event order that starts at a. */
struct piece {
    uint64_t a, b, aev;
};

/* A gap length and how many gaps have it. */
struct glen {
    uint64_t len, n;
};

/* A launch of the idle gaps: its recent pieces, and the gaps before them, final. */
struct ilaunch {
    int32_t cmdq;
    struct piece *p; /* owned: sorted, disjoint, apart */
    size_t np, capp;
    size_t nold;     /* final gaps */
    struct glen *hl; /* owned: their lengths, sorted */
    size_t nhl, caphl;
    struct trace_anomaly *big; /* owned: those of idle_min_cycles or more, in time order */
    size_t nbig, capbig;
};

struct trace_anomaly_inc {
    struct trace_anomaly_opts o;
    const struct trace_model *m;
    uint64_t scanned; /* events [0, scanned) seen: all folded in but pend */
    uint64_t *pend;   /* owned: those seen in flight, in event order */
    size_t npend, cappend;
    struct trace_event last_ev;
    uint64_t trunc, max_start, max_late; /* as trace/analysis/regions_inc.c's */
    /* slow ops */
    struct sim_keytab gk; /* group key -> group */
    struct sgroup *g;     /* owned */
    size_t ng, capg;
    struct sim_keytab dk; /* (group, duration) -> dent, through dkey */
    struct dent *d;       /* owned */
    size_t nd, capd;
    /* idle gaps */
    struct sim_keytab lk; /* cmdq_id -> launch */
    struct ilaunch *l;
    size_t nl, capl;
    /* bandwidth windows of the transfers of ended ops */
    size_t xseen;      /* transfers seen: all of folded or pending ops */
    uint64_t w, base;  /* window; the first window's index */
    uint64_t *rd, *wr; /* owned: per window from base */
    size_t nwin;
    uint64_t lo, hi, sum; /* of the folded transfers' spans (lo UINT64_MAX: none) */
    bool any_x;
    /* the work of the ops a group's slow ops were held against (their details read once) */
    struct sim_keytab wk; /* event -> its work */
    double *work;
    size_t nwork, capwork;
};

#define GROWA(arr, n, cap)                                                                         \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : 8;                                                         \
            (arr) = sim_xreallocarray((arr), (cap), sizeof(*(arr)));                               \
        }                                                                                          \
    } while (0)

struct trace_anomaly_inc *trace_anomaly_inc_new(const struct trace_anomaly_opts *o)
{
    struct trace_anomaly_inc *st = sim_xcalloc(1, sizeof(*st));
    if (o)
        st->o = *o;
    else
        trace_anomaly_opts_default(&st->o);
    st->o.progress = NULL;
    st->lo = UINT64_MAX;
    return st;
}

static void inc_reset(struct trace_anomaly_inc *st)
{
    for (size_t i = 0; i < st->ng; i++)
        free(st->g[i].d);
    for (size_t i = 0; i < st->nd; i++)
        free(st->d[i].ev);
    for (size_t i = 0; i < st->nl; i++) {
        free(st->l[i].p);
        free(st->l[i].hl);
        free(st->l[i].big);
    }
    free(st->g), free(st->d), free(st->l), free(st->pend), free(st->rd), free(st->wr);
    sim_keytab_free(&st->gk), sim_keytab_free(&st->dk), sim_keytab_free(&st->lk);
    sim_keytab_free(&st->wk), free(st->work);
    *st = (struct trace_anomaly_inc){.o = st->o, .max_late = st->max_late, .lo = UINT64_MAX};
}

void trace_anomaly_inc_free(struct trace_anomaly_inc *st)
{
    if (!st)
        return;
    inc_reset(st);
    free(st);
}

/* The slow ops' group key of event e (as find_slow makes it). */
static uint64_t slow_key(const struct trace_model *m, const struct trace_event *e)
{
    uint64_t eng = (uint64_t)trace_model_track_get(m, e->track)->engine;
    uint64_t where = eng == TRACE_ENGINE_HOST ? (uint64_t)e->track & 0xffffff : 0;
    return (uint64_t)e->op << 32 | where << 8 | eng;
}

static uint32_t group_of(struct trace_anomaly_inc *st, uint64_t key)
{
    uint32_t id = sim_keytab_id(&st->gk, key);
    if (id == st->ng) {
        GROWA(st->g, st->ng, st->capg);
        st->g[st->ng++] = (struct sgroup){.key = key};
    }
    return id;
}

/* Whether a (group, duration) pair fits one key of the table: durations below 2^40 cycles
 * and fewer than 2^24 groups (beyond, the state gives up: found from scratch). */
static bool pair_fits(uint32_t gid, uint64_t dur)
{
    return dur < ((uint64_t)1 << 40) && gid < (1u << 23);
}

/* Fold op i (ended, duration dur) into its group. */
static void slow_fold(struct trace_anomaly_inc *st, uint32_t gid, uint64_t dur, uint64_t i)
{
    uint32_t id = sim_keytab_id(&st->dk, (uint64_t)gid << 40 | dur);
    if (id == st->nd) {
        GROWA(st->d, st->nd, st->capd);
        st->d[st->nd++] = (struct dent){.dur = dur};
        struct sgroup *g = &st->g[gid];
        GROWA(g->d, g->nd, g->capd);
        g->d[g->nd++] = id;
    }
    struct dent *x = &st->d[id];
    GROWA(x->ev, x->n, x->cap);
    size_t at = x->n; /* in event order: a late op goes before the later ones */
    while (at && x->ev[at - 1] > i)
        at--;
    memmove(x->ev + at + 1, x->ev + at, (x->n - at) * sizeof(*x->ev));
    x->ev[at] = (uint32_t)i;
    x->n++;
    st->g[gid].count++;
}

/* The work of op ev (trace_anomaly_work_), read once: its details do not change. */
static double work_kept(void *ctx, const struct trace_model *m, uint64_t ev)
{
    struct trace_anomaly_inc *st = ctx;
    uint32_t id = sim_keytab_id(&st->wk, ev);
    if (id == st->nwork) {
        GROWA(st->work, st->nwork, st->capwork);
        st->work[st->nwork++] = trace_anomaly_work_(m, ev);
    }
    return st->work[id];
}

/* An op in flight among the slow ops: its group, duration, event. */
struct tslow {
    uint32_t gid;
    uint64_t dur, ev;
};

static int cmp_tslow(const void *pa, const void *pb)
{
    const struct tslow *a = pa, *b = pb;
    if (a->gid != b->gid)
        return a->gid < b->gid ? -1 : 1;
    if (a->dur != b->dur)
        return a->dur < b->dur ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static _Thread_local const struct trace_anomaly_inc *inc_ctx; /* for qsort */

static int cmp_dent(const void *pa, const void *pb)
{
    uint64_t x = inc_ctx->d[*(const uint32_t *)pa].dur, y = inc_ctx->d[*(const uint32_t *)pb].dur;
    return x < y ? -1 : x > y;
}

static int cmp_gkey(const void *pa, const void *pb)
{
    uint64_t x = inc_ctx->g[*(const uint32_t *)pa].key, y = inc_ctx->g[*(const uint32_t *)pb].key;
    return x < y ? -1 : x > y;
}

/* The slow ops, as find_slow gives them: the groups' folded durations with those in flight
 * t[0..nt) (sorted by group, duration, event). */
static void slow_out(struct trace_anomaly_inc *st, const struct trace_model *m,
                     const struct tslow *t, size_t nt, struct list *l)
{
    const struct trace_anomaly_opts *o = &st->o;
    uint32_t *order = sim_xreallocarray(NULL, st->ng ? st->ng : 1, sizeof(*order));
    for (size_t g = 0; g < st->ng; g++)
        order[g] = (uint32_t)g;
    inc_ctx = st;
    qsort(order, st->ng, sizeof(*order), cmp_gkey);
    struct list group = {0};
    struct opdur *cand = NULL;
    size_t ccap = 0;
    for (size_t oi = 0; oi < st->ng; oi++) {
        uint32_t gid = order[oi];
        struct sgroup *g = &st->g[gid];
        if (g->nsorted != g->nd) {
            qsort(g->d, g->nd, sizeof(*g->d), cmp_dent);
            g->nsorted = g->nd;
        }
        size_t ta = 0, tb; /* its ops in flight */
        for (size_t lo = 0, hi = nt; lo < hi;) {
            size_t mid = lo + (hi - lo) / 2;
            if (t[mid].gid < gid)
                lo = mid + 1, ta = lo;
            else
                hi = mid, ta = lo;
        }
        for (tb = ta; tb < nt && t[tb].gid == gid; tb++)
            ;
        size_t count = g->count + (tb - ta);
        if (count < o->slow_min_ops || !count)
            continue;
        size_t mid = (count - 1) / 2, cum = 0, i = 0, j = ta;
        uint64_t median = 0;
        const struct dent *md = NULL; /* the folded ops of the median's duration */
        size_t mj = ta;               /* the first in flight of it */
        while (i < g->nd || j < tb) {
            uint64_t v = i < g->nd && (j >= tb || st->d[g->d[i]].dur <= t[j].dur)
                             ? st->d[g->d[i]].dur
                             : t[j].dur;
            const struct dent *x = i < g->nd && st->d[g->d[i]].dur == v ? &st->d[g->d[i]] : NULL;
            size_t j0 = j, n = x ? x->n : 0;
            while (j < tb && t[j].dur == v)
                j++;
            n += j - j0;
            if (x)
                i++;
            if (cum + n > mid) {
                median = v, md = x, mj = j0;
                break;
            }
            cum += n;
        }
        /* the median op: of those of the median's duration in event order, the one at the
         * median's rank */
        size_t want = mid - cum, fi = 0, ti = mj, k = 0;
        uint64_t median_ev = UINT64_MAX;
        size_t fn = md ? md->n : 0;
        while (fi < fn || (ti < tb && t[ti].dur == median)) {
            bool folded = fi < fn && (!(ti < tb && t[ti].dur == median) || md->ev[fi] < t[ti].ev);
            uint64_t ev = folded ? md->ev[fi++] : t[ti++].ev;
            if (k++ == want) {
                median_ev = ev;
                break;
            }
        }
        size_t nc = 0;
        for (size_t x = 0; x < g->nd; x++) {
            const struct dent *e = &st->d[g->d[x]];
            if (e->dur < o->slow_min_cycles || !((double)e->dur > o->slow_factor * (double)median))
                continue;
            for (size_t q = 0; q < e->n; q++) {
                GROWA(cand, nc, ccap);
                cand[nc++] = (struct opdur){0, e->dur, e->ev[q]};
            }
        }
        for (size_t x = ta; x < tb; x++) {
            if (t[x].dur < o->slow_min_cycles ||
                !((double)t[x].dur > o->slow_factor * (double)median))
                continue;
            GROWA(cand, nc, ccap);
            cand[nc++] = (struct opdur){0, t[x].dur, t[x].ev};
        }
        trace_anomaly_slow_group_(m, o, count, median, median_ev, cand, nc, &group, l, work_kept,
                                  st);
    }
    inc_ctx = NULL;
    free(cand);
    free(group.v);
    free(order);
}

/* ---- idle gaps ---- */

static struct ilaunch *launch_of(struct trace_anomaly_inc *st, int32_t cmdq)
{
    uint32_t id = sim_keytab_id(&st->lk, (uint64_t)(uint32_t)cmdq);
    if (id == st->nl) {
        GROWA(st->l, st->nl, st->capl);
        st->l[st->nl++] = (struct ilaunch){.cmdq = cmdq};
    }
    return &st->l[id];
}

/* Add an op's span [s, e] (event ev) to pieces p. */
static void piece_add(struct piece **p, size_t *np, size_t *cap, uint64_t s, uint64_t e,
                      uint64_t ev)
{
    size_t lo = 0, hi = *np; /* the first piece ending at or after s */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((*p)[mid].b < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct piece x = {s, e, ev};
    size_t j = lo;
    for (; j < *np && (*p)[j].a <= e; j++) {
        const struct piece *q = &(*p)[j];
        if (q->a < x.a)
            x.a = q->a, x.aev = q->aev;
        else if (q->a == x.a && q->aev < x.aev)
            x.aev = q->aev;
        x.b = q->b > x.b ? q->b : x.b;
    }
    if (j == lo) { /* apart from all: inserted */
        GROWA(*p, *np, *cap);
        memmove(*p + lo + 1, *p + lo, (*np - lo) * sizeof(**p));
        (*np)++;
    } else if (j - lo > 1) {
        memmove(*p + lo + 1, *p + j, (*np - j) * sizeof(**p));
        *np -= j - lo - 1;
    }
    (*p)[lo] = x;
}

/* Gap g of launch L is final: counted, kept when long. */
static void gap_final(struct trace_anomaly_inc *st, const struct trace_model *m, struct ilaunch *L,
                      uint64_t start, uint64_t end, uint64_t ev)
{
    uint64_t d = end - start;
    L->nold++;
    size_t lo = 0, hi = L->nhl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->hl[mid].len < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < L->nhl && L->hl[lo].len == d) {
        L->hl[lo].n++;
    } else {
        GROWA(L->hl, L->nhl, L->caphl);
        memmove(L->hl + lo + 1, L->hl + lo, (L->nhl - lo) * sizeof(*L->hl));
        L->hl[lo] = (struct glen){d, 1};
        L->nhl++;
    }
    if (d >= st->o.idle_min_cycles) {
        GROWA(L->big, L->nbig, L->capbig);
        L->big[L->nbig++] = (struct trace_anomaly){.kind = TRACE_ANOMALY_IDLE_GAP,
                                                   .start = start,
                                                   .end = end,
                                                   .event = ev,
                                                   .track = trace_model_event(m, ev)->track,
                                                   .marker = SIZE_MAX,
                                                   .value = (double)d};
    }
}

/* Fold a non-HOST op of launch L, ended, over [s, e]; the pieces before trunc become gaps. */
static void idle_fold(struct trace_anomaly_inc *st, const struct trace_model *m, struct ilaunch *L,
                      uint64_t s, uint64_t e, uint64_t ev)
{
    piece_add(&L->p, &L->np, &L->capp, s, e, ev);
    size_t d = 0;
    while (d + 1 < L->np && L->p[d + 1].a < st->trunc) {
        gap_final(st, m, L, L->p[d].b, L->p[d + 1].a, L->p[d + 1].aev);
        d++;
    }
    if (d) {
        memmove(L->p, L->p + d, (L->np - d) * sizeof(*L->p));
        L->np -= d;
    }
}

static _Thread_local const struct trace_anomaly_inc *launch_ctx;

static int cmp_ilaunch(const void *pa, const void *pb)
{
    int32_t x = launch_ctx->l[*(const uint32_t *)pa].cmdq,
            y = launch_ctx->l[*(const uint32_t *)pb].cmdq;
    return x < y ? -1 : x > y;
}

/* An op in flight among the idle gaps: its launch and span. */
struct tidle {
    uint32_t launch;
    uint64_t s, e, ev;
};

static int cmp_tidle(const void *pa, const void *pb)
{
    const struct tidle *a = pa, *b = pb;
    return a->launch < b->launch ? -1 : a->launch > b->launch;
}

/* The idle gaps, as find_idle gives them: each launch's final gaps and those between its
 * pieces (with the ops in flight t[0..nt), sorted by launch, added to a copy). */
static void idle_out(struct trace_anomaly_inc *st, const struct trace_model *m,
                     const struct tidle *t, size_t nt, struct list *l)
{
    const struct trace_anomaly_opts *o = &st->o;
    uint32_t *order = sim_xreallocarray(NULL, st->nl ? st->nl : 1, sizeof(*order));
    for (size_t i = 0; i < st->nl; i++)
        order[i] = (uint32_t)i;
    launch_ctx = st;
    qsort(order, st->nl, sizeof(*order), cmp_ilaunch);
    launch_ctx = NULL;
    struct piece *p = NULL;
    size_t capp = 0;
    uint64_t *len = NULL;
    size_t caplen = 0;
    for (size_t oi = 0; oi < st->nl; oi++) {
        uint32_t li = order[oi];
        const struct ilaunch *L = &st->l[li];
        size_t ta = 0, tb;
        for (size_t lo = 0, hi = nt; lo < hi;) {
            size_t mid = lo + (hi - lo) / 2;
            if (t[mid].launch < li)
                lo = mid + 1, ta = lo;
            else
                hi = mid, ta = lo;
        }
        for (tb = ta; tb < nt && t[tb].launch == li; tb++)
            ;
        size_t np = L->np;
        const struct piece *P = L->p;
        if (tb > ta) {
            if (np + (tb - ta) > capp) {
                capp = np + (tb - ta);
                p = sim_xreallocarray(p, capp, sizeof(*p));
            }
            if (np)
                memcpy(p, L->p, np * sizeof(*p));
            for (size_t k = ta; k < tb; k++)
                piece_add(&p, &np, &capp, t[k].s, t[k].e, t[k].ev);
            P = p;
        }
        size_t nrec = np ? np - 1 : 0, ng = L->nold + nrec;
        if (!ng)
            continue;
        if (nrec > caplen) {
            caplen = nrec;
            len = sim_xreallocarray(len, caplen, sizeof(*len));
        }
        for (size_t k = 0; k < nrec; k++)
            len[k] = P[k + 1].a - P[k].b;
        if (nrec) /* (len may be NULL then) */
            qsort(len, nrec, sizeof(*len), cmp_u64);
        /* the median of the final lengths and these */
        size_t want = (ng - 1) / 2, cum = 0, h = 0, r = 0;
        uint64_t median = 0;
        for (;;) {
            bool old = h < L->nhl && (r >= nrec || L->hl[h].len <= len[r]);
            assert(old || r < nrec); /* the ng lengths hold the median: it is met first */
            uint64_t v = old ? L->hl[h].len : len[r];
            size_t n = old ? L->hl[h++].n : 1;
            if (!old)
                r++;
            if (cum + n > want) {
                median = v;
                break;
            }
            cum += n;
        }
        double limit = ng >= o->idle_min_gaps ? o->idle_factor * (double)median : 0;
        for (size_t k = 0; k < L->nbig; k++) {
            uint64_t d = (uint64_t)L->big[k].value;
            if (d >= o->idle_min_cycles && (double)d > limit) {
                struct trace_anomaly a = L->big[k];
                a.reference = (double)median;
                a.count = ng;
                trace_anomaly_push_(l, &a);
            }
        }
        for (size_t k = 0; k < nrec; k++) {
            uint64_t d = P[k + 1].a - P[k].b;
            if (d >= o->idle_min_cycles && (double)d > limit)
                trace_anomaly_push_(
                    l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_IDLE_GAP,
                                               .start = P[k].b,
                                               .end = P[k + 1].a,
                                               .event = P[k + 1].aev,
                                               .track = trace_model_event(m, P[k + 1].aev)->track,
                                               .marker = SIZE_MAX,
                                               .value = (double)d,
                                               .reference = (double)median,
                                               .count = ng});
        }
    }
    free(len);
    free(p);
    free(order);
}

/* ---- bandwidth windows ---- */

/* Windows [k0, k1] (absolute indexes at st->w) made addressable. */
static void bw_room(struct trace_anomaly_inc *st, uint64_t k0, uint64_t k1)
{
    if (!st->nwin) {
        st->base = k0;
        st->nwin = (size_t)(k1 - k0 + 1);
        st->rd = sim_xcalloc(st->nwin, sizeof(*st->rd));
        st->wr = sim_xcalloc(st->nwin, sizeof(*st->wr));
        return;
    }
    uint64_t b = st->base, e = st->base + st->nwin - 1;
    if (k0 >= b && k1 <= e)
        return;
    /* room for as many again on the side that grows: growing costs a copy of the whole */
    if (k0 < b) {
        uint64_t more = b - k0 > st->nwin ? b - k0 : st->nwin;
        b = b > more ? b - more : 0;
    }
    if (k1 > e) {
        uint64_t more = k1 - e > st->nwin ? k1 - e : st->nwin;
        e += more;
    }
    size_t n = (size_t)(e - b + 1), off = (size_t)(st->base - b);
    uint64_t *rd = sim_xcalloc(n, sizeof(*rd)), *wr = sim_xcalloc(n, sizeof(*wr));
    memcpy(rd + off, st->rd, st->nwin * sizeof(*rd));
    memcpy(wr + off, st->wr, st->nwin * sizeof(*wr));
    free(st->rd), free(st->wr);
    st->rd = rd, st->wr = wr, st->base = b, st->nwin = n;
}

/* The windows widened to w (a multiple of st->w: window k's bytes go to k * st->w / w, which
 * is what spreading at w gives, the shares telescoping). */
static void bw_widen(struct trace_anomaly_inc *st, uint64_t w)
{
    if (w <= st->w)
        return;
    if (st->nwin) {
        uint64_t b = st->base * st->w / w, e = (st->base + st->nwin - 1) * st->w / w;
        size_t n = (size_t)(e - b + 1);
        uint64_t *rd = sim_xcalloc(n, sizeof(*rd)), *wr = sim_xcalloc(n, sizeof(*wr));
        for (size_t k = 0; k < st->nwin; k++) {
            size_t to = (size_t)((st->base + k) * st->w / w - b);
            rd[to] += st->rd[k];
            wr[to] += st->wr[k];
        }
        free(st->rd), free(st->wr);
        st->rd = rd, st->wr = wr, st->base = b, st->nwin = n;
    }
    st->w = w;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Spread a transfer over the windows (at st->w). */
static void bw_fold(struct trace_anomaly_inc *st, uint64_t s, uint64_t e, uint64_t bytes,
                    bool write)
{
    uint64_t k0 = s / st->w, k1 = e > s ? (e - 1) / st->w : k0;
    bw_room(st, k0, k1);
    trace_metrics_spread(write ? st->wr : st->rd, st->base, st->w, s, e, bytes);
    st->lo = s < st->lo ? s : st->lo;
    st->hi = e > st->hi ? e : st->hi;
    st->sum = sat_add(st->sum, e - s);
    st->any_x = true;
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

/* The transfers of event i: [*a, *b) of xs (in event order), found from a cursor: galloping
 * forward from it, or searched before it. */
static void transfers_of(const struct trace_transfer *xs, size_t nx, uint64_t i, size_t *cursor,
                         size_t *a, size_t *b)
{
    size_t x = *cursor < nx ? *cursor : nx;
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
    *a = x;
    while (x < nx && xs[x].event == i)
        x++;
    *b = *cursor = x;
}

/* A window's bytes saved before the ops in flight spread theirs. */
struct wsave {
    size_t k;
    uint64_t rd, wr;
};

/* The bandwidth windows above peak, as find_bandwidth gives them: the folded transfers' windows
 * with those of the ops in flight spread on top (and taken off again); w, lo, hi: of all the
 * transfers. */
static void bw_out(struct trace_anomaly_inc *st, const struct trace_model *m,
                   const struct trace_anomaly_opts *o, double peak, uint64_t w, uint64_t lo,
                   uint64_t hi, struct list *l)
{
    if (!(peak > 0))
        return;
    size_t nx = trace_model_transfer_count(m);
    if (!nx) { /* the DRAM accesses or the file's samples: as they are */
        trace_anomaly_find_bandwidth_(m, o, peak, NULL, l);
        return;
    }
    assert(w > 0); /* (the window of transfers) */
    const struct trace_transfer *xs = trace_model_transfer(m, 0);
    struct wsave *sv = NULL;
    size_t nsv = 0, capsv = 0, cursor = 0;
    for (size_t k = 0; k < st->npend; k++) {
        const struct trace_event *e = trace_model_event(m, st->pend[k]);
        size_t a, b;
        transfers_of(xs, nx, st->pend[k], &cursor, &a, &b);
        for (size_t x = a; x < b; x++) {
            uint64_t s = e->start, en = ev_end(m, e);
            uint64_t k0 = s / st->w, k1 = en > s ? (en - 1) / st->w : k0;
            bw_room(st, k0, k1);
            for (uint64_t q = k0; q <= k1; q++) {
                GROWA(sv, nsv, capsv);
                size_t at = (size_t)(q - st->base);
                sv[nsv++] = (struct wsave){at, st->rd[at], st->wr[at]};
            }
            trace_metrics_spread(xs[x].flags & TRACE_XFER_WRITE ? st->wr : st->rd, st->base, st->w,
                                 s, en, xs[x].bytes);
        }
    }
    for (uint64_t k = lo / w; k <= hi / w; k++) {
        size_t at = (size_t)(k - st->base);
        if (k < st->base || at >= st->nwin || !(st->rd[at] || st->wr[at]))
            continue;
        double rate = (double)(st->rd[at] + st->wr[at]) / (double)w;
        if (rate > peak * (1 + 1e-9))
            trace_anomaly_push_(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_BANDWIDTH,
                                                           .start = k * w,
                                                           .end = k * w + w,
                                                           .event = UINT64_MAX,
                                                           .track = UINT32_MAX,
                                                           .marker = SIZE_MAX,
                                                           .value = rate,
                                                           .reference = peak});
    }
    while (nsv) { /* last saved first: a window saved twice gets its first value back */
        nsv--;
        st->rd[sv[nsv].k] = sv[nsv].rd;
        st->wr[sv[nsv].k] = sv[nsv].wr;
    }
    free(sv);
}

/* ---- the update ---- */

static bool inc_still_valid(const struct trace_anomaly_inc *st, const struct trace_model *m)
{
    if (st->m != m || trace_model_event_count(m) < st->scanned ||
        trace_model_transfer_count(m) < st->xseen)
        return false;
    if (!st->scanned)
        return true;
    const struct trace_event *e = trace_model_event(m, st->scanned - 1), *f = &st->last_ev;
    return e->start == f->start && e->track == f->track && e->op == f->op &&
           e->cmdq_id == f->cmdq_id;
}

/* Fold ended op i into the slow ops, the idle gaps and the windows. */
static void inc_fold(struct trace_anomaly_inc *st, const struct trace_model *m, uint64_t i,
                     const struct trace_transfer *xs, size_t nx, size_t *cursor)
{
    const struct trace_event *e = trace_model_event(m, i);
    slow_fold(st, group_of(st, slow_key(m, e)), e->end - e->start, i);
    if (trace_model_track_get(m, e->track)->engine != TRACE_ENGINE_HOST)
        idle_fold(st, m, launch_of(st, e->cmdq_id), e->start, e->end, i);
    if (!nx) /* (xs is NULL then) */
        return;
    size_t a, b;
    transfers_of(xs, nx, i, cursor, &a, &b);
    for (size_t k = a; k < b; k++)
        bw_fold(st, e->start, e->end, xs[k].bytes, xs[k].flags & TRACE_XFER_WRITE);
}

void trace_anomaly_inc_update(struct trace_anomaly_inc *st, const struct trace_model *m,
                              struct trace_progress *pg, struct trace_anomalies *out)
{
    struct trace_anomaly_opts o = st->o;
    o.progress = pg;
    if (!inc_still_valid(st, m))
        inc_reset(st);
    st->m = m;
    uint64_t n = trace_model_event_count(m);
    if (!n) { /* nothing to fold in (nor a transfer: each is an event's) */
        inc_reset(st);
        trace_anomalies_find(m, &o, out);
        return;
    }
    size_t nx = trace_model_transfer_count(m);
    const struct trace_event *evs = trace_model_event(m, 0);
    const struct trace_transfer *xs = nx ? trace_model_transfer(m, 0) : NULL;
    /* what breaks the state: transfers out of event order or of an op folded in, an op later
     * than what the idle gaps gave up, durations or groups past the table's keys */
    bool ok = true;
    for (size_t k = st->xseen; k < nx && ok; k++)
        ok = (!k || xs[k].event >= xs[k - 1].event) && xs[k].event >= st->scanned;
    for (uint64_t i = st->scanned; i < n && ok; i++) {
        uint64_t s = evs[i].start;
        if (s < st->max_start && st->max_start - s > st->max_late)
            st->max_late = st->max_start - s;
        st->max_start = s > st->max_start ? s : st->max_start;
        ok = s >= st->trunc;
    }
    if (!ok || st->ng >= (1u << 22)) {
        inc_reset(st);
        trace_anomalies_find(m, &o, out);
        return;
    }
    /* the widest window the spans of all the transfers ask for, before spreading */
    uint64_t lo = st->lo, hi = st->hi, sum = st->sum;
    bool any = st->any_x;
    for (size_t k = st->xseen; k < nx; k++) {
        const struct trace_event *e = &evs[xs[k].event];
        uint64_t s = e->start, en = ev_end(m, e);
        lo = s < lo ? s : lo, hi = en > hi ? en : hi, sum = sat_add(sum, en - s), any = true;
    }
    for (size_t k = 0; k < st->npend; k++) {
        size_t cur = 0, a, b;
        transfers_of(xs, nx, st->pend[k], &cur, &a, &b);
        const struct trace_event *e = &evs[st->pend[k]];
        for (size_t x = a; x < b; x++) {
            uint64_t en = ev_end(m, e);
            lo = e->start < lo ? e->start : lo, hi = en > hi ? en : hi;
            sum = sat_add(sum, en - e->start), any = true;
        }
    }
    uint64_t w_all = any ? trace_metrics_widen(o.bw_window, lo, hi, sum) : 0;
    if (any) {
        if (!st->w)
            st->w = w_all;
        bw_widen(st, w_all);
    }
    st->xseen = nx;
    /* fold in the ops that ended: those seen in flight, then the new ones */
    size_t cursor = 0, kept = 0;
    for (size_t k = 0; k < st->npend; k++) {
        uint64_t i = st->pend[k];
        if (evs[i].flags & TRACE_EV_INFLIGHT)
            st->pend[kept++] = i;
        else
            inc_fold(st, m, i, xs, nx, &cursor);
    }
    st->npend = kept;
    uint64_t minpend = UINT64_MAX, run_max = 0, slack = 2 * st->max_late + 1024;
    for (size_t k = 0; k < st->npend; k++)
        minpend = evs[st->pend[k]].start < minpend ? evs[st->pend[k]].start : minpend;
    trace_progress_step(pg, "anomalies: new ops", n - st->scanned);
    uint64_t from = st->scanned;
    for (; st->scanned < n; st->scanned++) {
        uint64_t i = st->scanned;
        if ((i - from) % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i - from))
            break;
        if (evs[i].start > run_max) {
            run_max = evs[i].start;
            uint64_t t = run_max > slack ? run_max - slack : 0;
            t = minpend < t ? minpend : t;
            st->trunc = t > st->trunc ? t : st->trunc;
        }
        if (!pair_fits((uint32_t)st->ng, evs[i].end - evs[i].start) &&
            !(evs[i].flags & TRACE_EV_INFLIGHT)) {
            st->scanned = 0; /* not kept: from scratch (the state starts over next time) */
            break;
        }
        if (evs[i].flags & TRACE_EV_INFLIGHT) {
            GROWA(st->pend, st->npend, st->cappend);
            st->pend[st->npend++] = i;
        } else {
            inc_fold(st, m, i, xs, nx, &cursor);
        }
    }
    if (!st->scanned && n) {
        inc_reset(st);
        trace_anomalies_find(m, &o, out);
        return;
    }
    if (st->scanned)
        st->last_ev = evs[st->scanned - 1];
    memset(out, 0, sizeof(*out));
    if (trace_progress_cancelled(pg))
        return;
    out->bw_peak = o.bw_peak > 0 ? o.bw_peak : trace_dram_peak(m);
    /* the ops in flight, on top */
    struct tslow *ts = sim_xreallocarray(NULL, st->npend + 1, sizeof(*ts));
    struct tidle *ti = sim_xreallocarray(NULL, st->npend + 1, sizeof(*ti));
    size_t nts = 0, nti = 0;
    for (size_t k = 0; k < st->npend; k++) {
        uint64_t i = st->pend[k];
        const struct trace_event *e = &evs[i];
        ts[nts++] = (struct tslow){group_of(st, slow_key(m, e)), ev_end(m, e) - e->start, i};
        if (trace_model_track_get(m, e->track)->engine != TRACE_ENGINE_HOST) {
            struct ilaunch *L = launch_of(st, e->cmdq_id);
            ti[nti++] = (struct tidle){(uint32_t)(L - st->l), e->start, ev_end(m, e), i};
        }
    }
    qsort(ts, nts, sizeof(*ts), cmp_tslow);
    qsort(ti, nti, sizeof(*ti), cmp_tidle); /* stable enough: ties keep no order, and the
                                                pieces do not depend on it */
    struct list all = {0}, one = {0};
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++) {
        switch (k) {
        case TRACE_ANOMALY_INVALID: trace_anomaly_find_invalid_(m, &one); break;
        case TRACE_ANOMALY_SLOW_OP: slow_out(st, m, ts, nts, &one); break;
        case TRACE_ANOMALY_IDLE_GAP: idle_out(st, m, ti, nti, &one); break;
        default: bw_out(st, m, &o, out->bw_peak, w_all, lo, hi, &one); break;
        }
        out->found[k] = one.n;
        trace_anomaly_keep_(&all, &one, k == TRACE_ANOMALY_INVALID ? 0 : o.max_per_kind);
    }
    free(ts);
    free(ti);
    if (all.n)
        qsort(all.v, all.n, sizeof(*all.v), trace_anomaly_cmp_time_);
    out->v = all.v;
    out->n = all.n;
}
