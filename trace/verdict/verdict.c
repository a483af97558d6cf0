/*
 * The bottleneck verdict (see verdict.h): per launch, its ops' details decoded once (the
 * arithmetic and the memory ranges), its critical path, the path's time split by what
 * bounded each step, the evidence; the run from its launches (or, without launches, from a
 * path over every op).
 */
#include "trace/verdict/verdict.h"
#include "trace/verdict/verdict_int.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/hostspan.h"
#include "trace/analysis/regions_inc.h"
#include "trace/analysis/resources.h"
#include "trace/model/mapped.h"
#include "trace/verdict/critinc.h"
#include "trace/verdict/pathtime.h"
#include "trace/verdict/runusage.h"

#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DECODE_DEFAULT = 2000000 };

/* Events of a pass between two give-backs of the pages of the model's mapped arrays it read
 * (trace_model_lent_giveback). */
enum { GIVEBACK_EVERY = 1 << 20 };
/* The same for a pass over a path's steps: one every few ops of the set, whose events and
 * op columns a million steps would touch all of. */
enum { PATH_GIVEBACK_EVERY = 1 << 16 };
/* Paths of at least this many steps have their waits' utilisations worked out on a second
 * thread (trace_verdict_opts.threads 0). */
enum { WAITS_THREAD_MIN = 1 << 15, WAITS_SHARE = 3 /* the calling thread's: a third */ };
/* A launch of at least this many ops has the big arrays of its critical path freed once
 * the verdict is made, behind the caller (a million ops: about 60 MB of them). */
enum { RELEASE_MIN = 1 << 20 };
/* How many steps of a path ahead a pass over them asks for their events. */
enum { STEP_PREFETCH = 16 };

struct ctx {
    const struct trace_model *m;
    const struct trace_event *ev; /* the model's events, in one array */
    uint8_t *engine_of;           /* owned: per track, its engine kind */
    uint32_t *bytes;              /* owned: per op of the launch judged, as struct arith's */
    size_t capbytes;
    struct trace_resources *res; /* owned */
    struct trace_peaks pk;
    size_t *hbm_of_track;            /* owned: per track, its cube's HBM resource (SIZE_MAX: none),
                                        SIZE_MAX - 1 until looked up */
    size_t budget;                   /* ops whose details may still be read */
    struct trace_progress *progress; /* the region judged reports to it (NULL: not) */
    uint8_t *composite; /* owned: per op name (string id), 0 not looked at, else 1 + whether
                           it names a composite op */
    size_t nnames;
    /* owned, per resource: where the last search of its samples ended, for the waits and
       for the DMA ops of the path (each asked in time order) */
    size_t *hint_wait, *hint_dma;
    /* the last launch judged: its ops without op columns, and whether their details were
       read (within the budget) */
    size_t last_uncached;
    bool last_details;
    uint64_t low;             /* live: the first cycle a bandwidth sample changed since the
                                 last verdict covers (UINT64_MAX: none) */
    size_t path_every;        /* live: steps between the path's sums kept (struct live) */
    unsigned threads;         /* trace_verdict_opts's */
    bool step_spans;          /* trace_verdict_opts's */
    struct trace_pathtime pt; /* over the above */
    uint64_t *evs;            /* owned: room for capevs events of the launches judged */
    size_t capevs;
    /* the big arrays of the critical paths of big launches, freed once the verdict is made,
     * behind the caller (ctx_fini): ten million ops' half a gigabyte, whose unmapping the
     * user need not wait for, nor anything the verdict does after them (freed behind at once,
     * the judging thread would wait for the unmapping at its next big allocation) */
    struct sim_release big;
};

/* ---- the config ------------------------------------------------------------------------- */

static double cfg2(const struct sim_value *c, const char *a, const char *b, const char *k)
{
    return sim_value_get_float(sim_value_map_get(sim_value_map_get(c, a), b), k, 0);
}

static void read_peaks(const struct trace_model *m, struct trace_peaks *p)
{
    const struct sim_value *c = trace_model_config(m);
    memset(p, 0, sizeof(*p));
    p->ghz = trace_model_clock_ghz(m);
    if (!(p->ghz > 0))
        return;
    p->dma_setup = cfg2(c, "pe", "dma", "setup_ns") * p->ghz;
    p->dma_rate = cfg2(c, "pe", "dma", "gbps") / p->ghz;
    p->hbm_rate = cfg2(c, "memory", "hbm", "gbps") / p->ghz;
    if (!(p->hbm_rate > 0))
        p->hbm_rate =
            sim_value_get_float(sim_value_map_get(c, "memory"), "dram_peak_bw_bytes_per_cycle", 0);
    p->gemm_setup = cfg2(c, "pe", "gemm", "setup_ns") * p->ghz;
    p->math_setup = cfg2(c, "pe", "math", "setup_ns") * p->ghz;
    p->lanes = cfg2(c, "pe", "math", "lanes");
    p->host_rate = cfg2(c, "noc", "host", "gbps") / p->ghz;
    p->macs =
        sim_value_map_get(sim_value_map_get(sim_value_map_get(c, "pe"), "gemm"), "macs_per_cycle");
}

static bool peaks_known(const struct trace_peaks *p)
{
    return p->ghz > 0 && (p->hbm_rate > 0 || p->macs);
}

/* ---- the path's time: trace/verdict/pathtime.h ---------------------------------------- */

/* The waits' utilisations of the first steps of a path (to s1) worked out on a second
 * thread (trace_pathtime_waits), a part at a time (WAITS_PARTS of them), while the calling
 * thread works out the others', then splits the ops' durations and adds each step's wait
 * and op in order as the parts come: both read the model, the resources and the path alone;
 * each its own hints and steps of mh. */
enum { WAITS_PARTS = 32 };

struct waits_job {
    const struct trace_pathtime *t;
    const struct trace_critpath *p;
    size_t s1;
    size_t *hint; /* owned */
    double (*mh)[2];
    _Atomic size_t done; /* the steps before it are worked out */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
};

static void *waits_main(void *arg)
{
    struct waits_job *j = arg;
    size_t part = j->s1 / WAITS_PARTS + 1;
    for (size_t a = 0; a < j->s1;) {
        size_t b = j->s1 - a > part ? a + part : j->s1;
        trace_pathtime_waits(j->t, j->p, a, b, j->hint, j->mh);
        pthread_mutex_lock(&j->mu);
        atomic_store(&j->done, b);
        pthread_cond_signal(&j->cv);
        pthread_mutex_unlock(&j->mu);
        a = b;
    }
    return NULL;
}

/* Wait until the wait of step s (below j->s1) is worked out. */
static void waits_await(struct waits_job *j, size_t s)
{
    if (s < atomic_load(&j->done))
        return;
    pthread_mutex_lock(&j->mu);
    while (s >= atomic_load(&j->done))
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

/* ---- fresh pages, faulted in ahead ------------------------------------------------------- */

/* c's array of events with room for n (a launch of several runs of events: one of a single
 * run needs none, judge_launches). */
static uint64_t *ctx_evs(struct ctx *c, size_t n)
{
    if (!c->evs || c->capevs < n) {
        free(c->evs);
        c->evs = sim_xreallocarray(NULL, n ? n : 1, sizeof(*c->evs));
        c->capevs = n;
    }
    return c->evs;
}

/* ---- one region ------------------------------------------------------------------------- */

static const char *const dtypes[] = {"f32", "f16", "bf16", "i8"};

/* is_composite of a name not looked at before (apart: asked of a few names, its call kept
 * out of the look of every event, which then saves no registers). */
static bool __attribute__((noinline, cold)) is_composite_first(struct ctx *c, uint32_t op)
{
    bool comp = strncmp(trace_model_str(c->m, op), "composite_", 10) == 0;
    if (op < c->nnames)
        c->composite[op] = (uint8_t)(1 + comp);
    return comp;
}

/* Whether op name op (a string id) is a composite op's, looked at once per name (asked of
 * every event of a launch of millions: inline, its first look apart). */
static inline bool is_composite(struct ctx *c, uint32_t op)
{
    if (op < c->nnames && c->composite[op])
        return c->composite[op] == 2;
    return is_composite_first(c, op);
}

/* A composite op's span on its engine. */
struct span {
    uint32_t track;
    uint64_t start, end;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether event e lies within one of the composite ops spans[0..n) (sorted by cmp_span),
 * on its own engine: a stage of that op, whose arithmetic the op counts. */
static bool within_composite(const struct span *spans, size_t n, const struct trace_event *e)
{
    size_t lo = 0, hi = n; /* the first span after (track, start) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct span *x = &spans[mid];
        if (x->track < e->track || (x->track == e->track && x->start <= e->start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && spans[lo - 1].track == e->track && spans[lo - 1].end >= e->end;
}

/* The arithmetic and the DMA transfers of a region's ops, counted op by op in their order
 * from their info (read once: the critical path reads it and hands it on). */
struct arith {
    /* (in cache lines of its own: the critical path's second thread counts into it while the
     * calling thread sweeps) */
    _Alignas(64) struct ctx *c;
    const uint64_t *evs; /* NULL: the region's events are first, first + 1, ... */
    uint64_t first;
    struct trace_verdict_item *it;
    struct trace_spaces *spaces; /* for the ops the path does not read */
    struct span *comp;           /* owned: the composite ops, sorted */
    size_t ncomp;
    double te_flops[5]; /* by dtype; [4] others */
    size_t next;        /* the ops before it are counted */
    double flops;       /* the counts so far, in the order of the ops */
    uint64_t dma_ops, dma_bytes;
    uint32_t *bytes;    /* per op, a DMA op's bytes for the path's DMA steps (ARITH_BIG: read
                           again); NULL: read again */
    struct judging *jg; /* the region's (judge) */
};

/* Op k's event. */
static inline uint64_t arith_ev(const struct arith *a, size_t k)
{
    return a->evs ? a->evs[k] : a->first + k;
}

/* An op's bytes kept for the path as ARITH_BIG are read again (4 GiB and more in one op:
 * the bytes of ten million ops kept in 4 bytes each). */
#define ARITH_BIG UINT32_MAX

/* Count op k (its event arith_ev, on track: UINT32_MAX, its event's, read here): of its info
 * (or raw details), its bytes, flops, dtype and whether it is a stage. */
static void arith_count(struct arith *a, size_t k, uint32_t track, uint64_t bytes, double flops,
                        const char *dtype, bool stage)
{
    if (a->bytes)
        a->bytes[k] =
            bytes < ARITH_BIG ? (uint32_t)bytes : ARITH_BIG; /* for the path's DMA steps */
    if (!bytes && !(flops > 0))
        return; /* (nothing to count: its event not read) */
    const struct trace_event *ev = a->c->ev;
    enum trace_engine eng = a->c->engine_of[track != UINT32_MAX ? track : ev[arith_ev(a, k)].track];
    if (eng == TRACE_ENGINE_DMA && bytes) {
        a->dma_ops++;
        a->dma_bytes += bytes;
    }
    if (!(flops > 0))
        return;
    if (stage && within_composite(a->comp, a->ncomp, &ev[arith_ev(a, k)]))
        return; /* counted by its composite op */
    a->flops += flops;
    if (eng == TRACE_ENGINE_TE) {
        size_t d = 0;
        while (d < 4 && strcmp(dtype, dtypes[d]) != 0)
            d++;
        a->te_flops[d] += flops;
    }
}

/* Count the ops before k the path did not read, reading them here. */
static void arith_upto(struct arith *a, size_t k)
{
    for (; a->next < k; a->next++) {
        struct trace_opinfo oi;
        trace_opinfo_of_event(a->c->m, arith_ev(a, a->next), a->spaces, &oi);
        arith_count(a, a->next, UINT32_MAX, oi.bytes, oi.flops, oi.dtype, oi.stage);
    }
}

/* Op i handed by the path: the ops before it it did not hand counted first (a growing set's
 * path handing them again from the first: from none). */
static void arith_before(struct arith *a, size_t i)
{
    if (i < a->next) {
        a->next = 0;
        a->flops = 0, a->dma_ops = a->dma_bytes = 0;
        memset(a->te_flops, 0, sizeof(a->te_flops));
    }
    if (a->next < i)
        arith_upto(a, i);
}

/* trace_critpath_input.each_info: op i read by the path. */
static void arith_each(void *ctx, size_t i, const struct trace_opinfo *oi)
{
    struct arith *a = ctx;
    arith_before(a, i);
    arith_count(a, i, UINT32_MAX, oi->bytes, oi->flops, oi->dtype, oi->stage);
    a->next = i + 1;
}

/* trace_critpath_input.each_raw: op i (on track) read by the path's second thread, every op
 * before it handed (nothing to read here). */
static void arith_each_raw(void *ctx, size_t i, uint32_t track, const struct trace_opinfo_raw *r)
{
    struct arith *a = ctx;
    arith_before(a, i);
    arith_count(a, i, track, r->bytes, r->flops, r->dtype, r->stage);
    a->next = i + 1;
}

/* What one pass over a region's events finds. */
struct scan {
    size_t uncached;   /* ops without op columns (their details must be read) */
    struct span *comp; /* owned: the composite ops, sorted (cmp_span); NULL when none */
    size_t ncomp;
    size_t ute, uve; /* TE and VE engines used */
    bool any_arith;  /* some op is a GEMM or a math op */
    /* still running: an op in flight, or, in a live model, a request the host sent whose
     * Completion has not crossed back yet (between two of its ops no op is in flight) */
    bool running;
};

/* A track met for the first time by a scan: counted among the TE or VE engines used; its
 * mark (1, or 5 for the host's own component). */
static uint8_t track_seen(const struct trace_model *m, uint32_t track, size_t *ute, size_t *uve)
{
    const struct trace_track *tr = trace_model_track_get(m, track);
    if (tr->engine == TRACE_ENGINE_TE || tr->engine == TRACE_ENGINE_VE)
        *(tr->engine == TRACE_ENGINE_TE ? ute : uve) += 1;
    bool host = tr->engine == TRACE_ENGINE_HOST &&
                strcmp(trace_model_str(m, tr->name), TRACE_HOST_COMPONENT) == 0;
    return (uint8_t)(1 + (host ? 4 : 0));
}

/* A pass over a region's events for what struct scan says (made by its critical path's
 * pass that gathers its ops, which gives back the model's mapped pages as it goes): struct
 * scan so far, and what it needs until the end. */
struct scanning {
    struct ctx *c;
    struct scan *sc;
    size_t n; /* the events to look at */
    /* per track: 0 not looked at, else 1 + whether it is used; 4 + that when it is the
     * host component */
    uint8_t *track; /* owned */
    bool live, inflight, request, completed;
};

static void scan_begin(struct scanning *s, struct ctx *c, size_t n, struct scan *sc)
{
    memset(sc, 0, sizeof(*sc));
    size_t nt = trace_model_track_count(c->m);
    *s = (struct scanning){.c = c,
                           .sc = sc,
                           .n = n,
                           .track = sim_xcalloc(nt ? nt : 1, 1),
                           .live = trace_model_now(c->m) > 0};
}

/* What any event e of the scan may set: some op is a GEMM or a math op, one is in flight. */
static inline void scan_flags(struct scanning *s, const struct trace_event *e)
{
    s->sc->any_arith |= e->op_kind == TRACE_KIND_GEMM || e->op_kind == TRACE_KIND_MATH;
    s->inflight |= (e->flags & TRACE_EV_INFLIGHT) != 0;
}

/* Event e (k-th of the n): all of struct scan but the ops without op columns. */
static inline void scan_event(struct scanning *s, size_t k, const struct trace_event *e)
{
    (void)k;
    struct scan *sc = s->sc;
    const struct trace_model *m = s->c->m;
    if (is_composite(s->c, e->op)) {
        if (!sc->comp)
            sc->comp = sim_xreallocarray(NULL, s->n, sizeof(*sc->comp));
        sc->comp[sc->ncomp++] = (struct span){e->track, e->start, e->end};
    }
    uint8_t *t = &s->track[e->track];
    if (!*t)
        *t = track_seen(m, e->track, &sc->ute, &sc->uve);
    scan_flags(s, e);
    if (s->live && *t >= 4) {
        if (strcmp(trace_model_str(m, e->op), "Completion") == 0)
            s->completed = true;
        else
            s->request = true;
    }
}

static void scan_end(struct scanning *s)
{
    struct scan *sc = s->sc;
    free(s->track);
    s->track = NULL;
    if (sc->ncomp)
        qsort(sc->comp, sc->ncomp, sizeof(*sc->comp), cmp_span);
    sc->running = s->inflight || (s->request && !s->completed);
}

/* scan_ops over lv's events, from those it has looked at on (no composite op list: with
 * one, lv->ncomp says so and the caller scans them all). */
static void scan_live(struct ctx *c, struct live *lv, struct scan *sc)
{
    const struct trace_model *m = c->m;
    size_t nt = trace_model_track_count(m);
    if (nt > lv->ntrack) {
        lv->track = sim_xreallocarray(lv->track, nt, 1);
        memset(lv->track + lv->ntrack, 0, nt - lv->ntrack);
        lv->ntrack = nt;
    }
    for (size_t k = lv->scanned; k < lv->n; k++) {
        if (k % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m);
        const struct trace_event *e = &c->ev[lv->evs[k]];
        lv->uncached += !trace_opinfo_cached(m, lv->evs[k]);
        lv->ncomp += is_composite(c, e->op);
        uint8_t *t = &lv->track[e->track];
        if (!*t)
            *t = track_seen(m, e->track, &lv->ute, &lv->uve);
        if (e->op_kind == TRACE_KIND_GEMM || e->op_kind == TRACE_KIND_MATH)
            lv->any_arith = true;
        if (e->flags & TRACE_EV_INFLIGHT) {
            if (lv->ninflight == lv->capinflight) {
                lv->capinflight = lv->capinflight ? 2 * lv->capinflight : 64;
                lv->inflight =
                    sim_xreallocarray(lv->inflight, lv->capinflight, sizeof(*lv->inflight));
            }
            lv->inflight[lv->ninflight++] = lv->evs[k];
        }
        if (*t >= 4) {
            if (strcmp(trace_model_str(m, e->op), "Completion") == 0)
                lv->completed = true;
            else
                lv->request = true;
        }
    }
    lv->scanned = lv->n;
    size_t still = 0; /* those in flight before that still are */
    for (size_t i = 0; i < lv->ninflight; i++)
        if (c->ev[lv->inflight[i]].flags & TRACE_EV_INFLIGHT)
            lv->inflight[still++] = lv->inflight[i];
    lv->ninflight = still;
    memset(sc, 0, sizeof(*sc));
    sc->uncached = lv->uncached;
    sc->ute = lv->ute, sc->uve = lv->uve;
    sc->any_arith = lv->any_arith;
    sc->running = lv->ninflight || (lv->request && !lv->completed);
}

/* The bytes of DMA op ev, one of the region's (ar's events): those arith_count noted when it
 * counted it, else read again. *pos: where the last one was (the path's steps come mostly in
 * the order of their events). */
static uint64_t step_bytes(struct ctx *c, const struct arith *ar, struct trace_spaces *spaces,
                           uint64_t ev, size_t *pos)
{
    size_t lo = 0, hi = ar->next; /* the ops counted: evs[0 .. next), sorted */
    if (!ar->evs) {               /* first, first + 1, ... */
        lo = ev >= ar->first && ev - ar->first < hi ? (size_t)(ev - ar->first) : hi;
        hi = lo;
    } else if (*pos < hi && ar->evs[*pos] <= ev) { /* ahead of the last: galloping from it */
        size_t step = 1;
        lo = *pos;
        while (lo + step < hi && ar->evs[lo + step] <= ev) {
            lo += step;
            step *= 2;
        }
        hi = lo + step < hi ? lo + step : hi; /* evs[lo] <= ev < evs[hi] (or the end) */
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ar->evs[mid] < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    if (ar->bytes && lo < ar->next && arith_ev(ar, lo) == ev && ar->bytes[lo] != ARITH_BIG)
        return ar->bytes[lo];
    struct trace_opinfo oi;
    trace_opinfo_of_event(c->m, ev, spaces, &oi);
    return oi.bytes;
}

/* One region being judged: what its scan found, whether its ops' details are read. */
struct judging {
    struct ctx *c;
    struct trace_verdict_item *it;
    struct live *lv; /* NULL: not from what the last verdict left */
    size_t n;        /* its events */
    struct scan *sc;
    struct scanning scanning; /* (without lv: the scan's pass, in the critical path's) */
    struct arith *ar;
    bool details;
};

/* What the scan found (uncached: the events without op columns) taken: whether the details
 * are read (within the budget), the arithmetic's counts set up for them. */
static void judge_details(struct judging *jg, size_t uncached)
{
    struct ctx *c = jg->c;
    struct scan *sc = jg->sc;
    struct live *lv = jg->lv;
    struct arith *ar = jg->ar;
    size_t n = jg->n;
    sc->uncached = uncached;
    jg->it->running = sc->running;
    c->last_uncached = sc->uncached;
    c->last_details = sc->uncached <= c->budget;
    jg->details = false;
    if (sc->uncached <= c->budget) {
        c->budget -= sc->uncached;
        jg->details = true;
    } else if (n) {
        jg->it->missing |= TRACE_MISSING_DETAILS;
    }
    if (lv && jg->details) { /* the counts so far */
        if (n > lv->capbytes) {
            lv->capbytes = n > 2 * lv->capbytes ? n : 2 * lv->capbytes;
            lv->bytes = sim_xreallocarray(lv->bytes, lv->capbytes, sizeof(*lv->bytes));
        }
        ar->bytes = lv->bytes;
        ar->next = lv->next;
        ar->flops = lv->flops, ar->dma_ops = lv->dma_ops, ar->dma_bytes = lv->dma_bytes;
        memcpy(ar->te_flops, lv->te_flops, sizeof(ar->te_flops));
    } else if (jg->details) {
        ar->comp = sc->comp, ar->ncomp = sc->ncomp;
        if (n > c->capbytes) { /* one array for every launch (its pages fresh as written) */
            c->capbytes = (size_t)trace_model_event_count(c->m);
            c->capbytes = n > c->capbytes ? n : c->capbytes;
            free(c->bytes);
            c->bytes = sim_xreallocarray(NULL, c->capbytes, sizeof(*c->bytes));
        }
        ar->bytes = c->bytes;
    } else {
        free(sc->comp);
        sc->comp = NULL;
    }
}

/* judge_event of an event other than the common one. */
static void __attribute__((noinline))
judge_event_apart(struct scanning *s, size_t i, const struct trace_event *e)
{
    scan_event(s, i, e);
}

/* trace_critpath_input.each_event: event i of the region, scanned as the path gathers it. */
static void judge_event(void *ctx, size_t i, const struct trace_event *e)
{
    struct scanning *s = &((struct arith *)ctx)->jg->scanning;
    const struct ctx *c = s->c;
    /* (the common event first, in few registers: a known name not a composite op's, on a
     * track met before other than the host's) */
    if (e->op < c->nnames && c->composite[e->op] == 1 && s->track[e->track] == 1) {
        scan_flags(s, e);
        return;
    }
    judge_event_apart(s, i, e);
}

/* trace_critpath_input.with_details: the scan ended. */
static bool judge_with_details(void *ctx, size_t uncached)
{
    struct judging *jg = ((struct arith *)ctx)->jg;
    scan_end(&jg->scanning);
    judge_details(jg, uncached);
    return jg->details;
}

/*
 * Where the path of live launch lv (its DMA steps' bytes read when details) needs its time
 * worked out from: the last of lv's sums whose steps p still has as they were, and whose ops
 * and waits end before the samples changed (their resources' use is as it was), into *sums;
 * lv's sums after it dropped. (The last path's last step, which may have been in flight, is
 * in none of them: each is kept before the step it is marked at.)
 */
static size_t path_from(const struct ctx *c, struct live *lv, bool details, struct path_sums *sums)
{
    size_t every = c->path_every ? c->path_every : PATH_EVERY;
    size_t kept = trace_critinc_kept_steps(lv->path);
    if (!lv->nsums || lv->every != every || lv->sums_details != details ||
        lv->sums_nres != trace_resources_count(c->res))
        kept = 0, lv->nsums = 0;
    size_t j = kept / every;
    j = j < lv->nsums ? j : lv->nsums ? lv->nsums - 1 : 0;
    while (j > 0 && (lv->sums[j].reach > c->low || lv->sums[j].open))
        j--;
    lv->every = every;
    lv->nsums = lv->nsums ? j + 1 : 0;
    *sums = lv->nsums ? lv->sums[j] : (struct path_sums){.longest_wait_ev = UINT64_MAX};
    lv->sums_reused = j * every;
    return j * every;
}

/* Keep sums as lv's after the first s steps of its path (s a multiple of its every). */
static void path_mark(struct live *lv, size_t s, const struct path_sums *sums)
{
    size_t j = s / lv->every;
    if (j < lv->nsums)
        return; /* (kept: the same) */
    if (j >= lv->capsums) {
        lv->capsums = lv->capsums ? 2 * lv->capsums : 64;
        lv->sums = sim_xreallocarray(lv->sums, lv->capsums, sizeof(*lv->sums));
    }
    lv->sums[j] = *sums;
    lv->nsums = j + 1;
}

/* The usage, path, arithmetic and resources of one region over its events evs (n of them,
 * sorted by index; NULL: the n from first on), and whether it is still running. */
static void judge(struct ctx *c, const struct trace_region *r, uint64_t *evs, uint64_t first,
                  size_t n, struct trace_verdict_item *it, struct live *lv)
{
    const struct trace_model *m = c->m;
    memset(it, 0, sizeof(*it));
    it->region = r;
    it->longest_wait_ev = UINT64_MAX;
    it->length = trace_region_length(r);
    for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
        it->busy[e] = trace_region_util(r, r->engine[e].busy);
    it->dram_bytes = r->all.read_bytes + r->all.write_bytes;
    if (!peaks_known(&c->pk))
        it->missing |= TRACE_MISSING_PEAKS;

    /* the details: the arithmetic op by op, from the info the critical path reads (keeping
     * the ranges alone: an opinfo of every op of a launch of millions would hold
     * gigabytes) */
    struct trace_spaces spaces;
    trace_spaces_init(&spaces);
    struct scan sc = {0};             /* (set by scan_live or scan_begin below) */
    if (lv && trace_model_now(m) > 0) /* (the host's requests are looked at when live) */
        scan_live(c, lv, &sc);
    if (lv && (lv->ncomp || !(trace_model_now(m) > 0))) { /* (a stage may be in a later one) */
        trace_verdict_live_path_free_(lv);
        lv->next = 0;
        lv = NULL;
    }
    struct arith ar = {.c = c, .evs = evs, .first = first, .it = it, .spaces = &spaces};
    struct judging jg = {.c = c, .it = it, .lv = lv, .n = n, .sc = &sc, .ar = &ar};
    ar.jg = &jg;
    if (lv)
        judge_details(&jg, sc.uncached);
    /* else the scan's pass is the critical path's own, its findings taken before it reads
     * any op's details (judge_event, judge_with_details) */
    else
        scan_begin(&jg.scanning, c, n, &sc);

    /* the critical path, reading the details (and counting the arithmetic) as it goes; its
     * ops' spans, when the release holds them, read for the path's time below */
    const struct trace_op_span *spans = NULL;
    struct trace_critpath_input in = {.m = m,
                                      .events = evs,
                                      .first = first,
                                      .n = n,
                                      .start = r->start,
                                      /* 1: no details: order, tiles and engines only */
                                      .max_decode = lv && !jg.details ? 1 : 0,
                                      .progress = c->progress,
                                      .each_info = !lv || jg.details ? arith_each : NULL,
                                      .each_raw = !lv || jg.details ? arith_each_raw : NULL,
                                      .each_event = lv ? NULL : judge_event,
                                      .with_details = lv ? NULL : judge_with_details,
                                      .each_ctx = &ar,
                                      .release =
                                          c->threads != 1 && n >= RELEASE_MIN ? &c->big : NULL,
                                      .spans = &spans,
                                      .step_spans = c->step_spans};
    if (lv) {
        if (!lv->path)
            lv->path = trace_critinc_new();
        trace_critinc_update(lv->path, &in, &it->path);
    } else {
        trace_critpath_compute(&in, &it->path);
    }
    bool details = jg.details;
    if (details && !trace_progress_cancelled(c->progress)) /* (cancelled: left unread) */
        arith_upto(&ar, n);
    free(ar.comp);
    it->flops = ar.flops, it->dma_ops = ar.dma_ops, it->dma_bytes = ar.dma_bytes;
    if (lv) { /* the counts so far, for the next (none without the details) */
        lv->next = details ? ar.next : 0;
        lv->flops = details ? ar.flops : 0;
        lv->dma_ops = details ? ar.dma_ops : 0, lv->dma_bytes = details ? ar.dma_bytes : 0;
        memcpy(lv->te_flops, ar.te_flops, sizeof(lv->te_flops));
        if (!details) {
            memset(lv->te_flops, 0, sizeof(lv->te_flops));
            free(lv->bytes); /* (past the decode budget: not read again) */
            lv->bytes = NULL;
            lv->capbytes = 0;
        }
    }
    double *te_flops = ar.te_flops;
    size_t ute = sc.ute, uve = sc.uve;
    if (sc.any_arith && !(it->flops > 0))
        it->missing |= TRACE_MISSING_FLOPS;

    /* the peaks of the engines and HBMs it used */
    const struct trace_peaks *p = &c->pk;
    if (ute && p->macs) {
        size_t best = 0;
        for (size_t d = 1; d < 4; d++)
            if (te_flops[d] > te_flops[best])
                best = d;
        double macs = sim_value_get_float(p->macs, dtypes[best], 0);
        it->peak_flops = (double)ute * 2 * macs;
    } else if (uve && p->lanes > 0) {
        it->peak_flops = (double)uve * p->lanes;
    }

    /* resources over its span */
    it->hbm_util = it->link_util = it->host_util = -1;
    uint64_t a = r->start, b = r->end > r->start ? r->end : r->start + 1;
    size_t nres = trace_resources_count(c->res), nhbm = 0;
    double hbm_bytes = 0;
    if (!nres)
        it->missing |= TRACE_MISSING_RESOURCES;
    for (size_t i = 0; i < nres; i++) {
        const struct trace_resource *x = trace_resources_get(c->res, i);
        double u = trace_resources_util(c->res, i, a, b);
        double *slot = x->kind == TRACE_RES_HBM         ? &it->hbm_util
                       : x->kind == TRACE_RES_HOST_LINK ? &it->host_util
                                                        : &it->link_util;
        uint32_t *name = x->kind == TRACE_RES_HBM         ? &it->hbm
                         : x->kind == TRACE_RES_HOST_LINK ? &it->host_link
                                                          : &it->busiest_link;
        if (x->kind == TRACE_RES_HBM) {
            double rd, wr;
            trace_resources_bytes(c->res, i, a, b, &rd, &wr);
            nhbm += rd + wr > 0;
            hbm_bytes += rd + wr;
        }
        if (u > *slot)
            *slot = u, *name = x->name;
    }
    /* ops whose DRAM traffic the trace does not record (a composite op's stages): the
     * bytes the HBMs' samples saw */
    if (!it->dram_bytes && hbm_bytes >= 1)
        it->dram_bytes = (uint64_t)hbm_bytes;
    if (p->hbm_rate > 0)
        it->peak_bw = (double)(nhbm ? nhbm : 1) * p->hbm_rate;

    /* what the path's time went to */
    if (!it->path.with_addresses && !it->path.with_tiles && !it->path.with_explicit && n)
        it->missing |= TRACE_MISSING_DEPS;
    /* each step's wait (by the resources busy during it) and op (trace/verdict/pathtime.h),
     * in the order of the steps; a long path's first waits on a second thread while this one
     * works out the others', then splits the ops, adding each step's as its wait comes */
    size_t np = it->path.n;
    /* live, the steps whose time the last verdict's sums hold are not worked out again: from
     * s0 on, the path's tail */
    struct path_sums sums = {.longest_wait_ev = UINT64_MAX};
    bool marks = lv && !spans && !it->path.spans;
    size_t s0 = marks ? path_from(c, lv, details, &sums) : 0;
    struct trace_critpath tail = it->path;
    tail.steps += s0;
    tail.n = np - s0;
    size_t nq = tail.n;
    double(*mh)[2] = sim_xreallocarray(NULL, nq ? nq : 1, sizeof(*mh));
    /* (the second thread's share, two thirds: the split of the ops, read from the path's
     * spans, costs this one about a third of the waits') */
    c->pt.spans = spans; /* (before the second thread reads it; none after the path's time) */
    struct waits_job wj = {.t = &c->pt, .p = &tail, .s1 = nq - nq / WAITS_SHARE, .mh = mh};
    bool apart = c->threads != 1 && (c->threads == 2 || nq >= WAITS_THREAD_MIN);
    if (apart) {
        wj.hint = sim_xcalloc(nres ? nres : 1, sizeof(*wj.hint));
        atomic_init(&wj.done, 0);
        pthread_mutex_init(&wj.mu, NULL);
        pthread_cond_init(&wj.cv, NULL);
        apart = pthread_create(&wj.th, NULL, waits_main, &wj) == 0;
        if (!apart) {
            pthread_mutex_destroy(&wj.mu);
            pthread_cond_destroy(&wj.cv);
            free(wj.hint);
        }
    }
    trace_pathtime_waits(&c->pt, &tail, apart ? wj.s1 : 0, nq, c->hint_wait, mh);
    size_t pos = 0; /* step_bytes's cursor */
    uint64_t now = trace_model_now(m);
    trace_progress_step(c->progress, "verdict: the path's time", np);
    for (size_t q = 0; q < nq; q++) {
        size_t s = s0 + q;
        const struct trace_path_step *st = &tail.steps[q];
        if (marks && s % lv->every == 0)
            path_mark(lv, s, &sums);
        if (s % TRACE_PROGRESS_EVERY == 0) /* (its parts are added up to the end) */
            trace_progress_at(c->progress, s);
        if (s % PATH_GIVEBACK_EVERY == PATH_GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m);
        if (q + STEP_PREFETCH < nq) { /* the steps' ops are spread over the launch */
            const struct trace_path_step *ahead = &tail.steps[q + STEP_PREFETCH];
            __builtin_prefetch(spans ? (const void *)&spans[ahead->op] : &c->ev[ahead->ev]);
        }
        /* a DMA op's bytes alone are of use: as the arithmetic counted them */
        uint64_t bytes = 0;
        uint32_t track = spans ? spans[st->op].track : c->ev[st->ev].track;
        if (details && c->engine_of[track] == TRACE_ENGINE_DMA)
            bytes = step_bytes(c, &ar, &spaces, st->ev, &pos);
        struct trace_pathtime_part op;
        trace_pathtime_op(&c->pt, st, bytes, &op);
        if (apart && q < wj.s1)
            waits_await(&wj, q);
        trace_pathtime_wait(st, mh[q], sums.time);
        trace_pathtime_add(&op, sums.time);
        sums.waits += st->wait;
        sums.wait_by[st->why] += st->wait;
        if (st->wait > sums.longest_wait || sums.longest_wait_ev == UINT64_MAX)
            sums.longest_wait = st->wait, sums.longest_wait_ev = st->ev;
        if (marks) { /* (the op's span, as the resources were asked, bounds its wait's) */
            const struct trace_event *e = &c->ev[st->ev];
            uint64_t end = trace_event_end_at(e, now);
            end = end > e->start ? end : e->start + 1;
            sums.reach = end > sums.reach ? end : sums.reach;
            sums.open |= (e->flags & TRACE_EV_INFLIGHT) != 0;
        }
    }
    if (marks) {
        lv->sums_details = details;
        lv->sums_nres = nres;
    }
    memcpy(it->time, sums.time, sizeof(it->time));
    it->waits = sums.waits;
    memcpy(it->wait_by, sums.wait_by, sizeof(it->wait_by));
    it->longest_wait = sums.longest_wait, it->longest_wait_ev = sums.longest_wait_ev;
    if (apart) {
        pthread_join(wj.th, NULL);
        pthread_mutex_destroy(&wj.mu);
        pthread_cond_destroy(&wj.cv);
        free(wj.hint);
    }
    c->pt.spans = NULL; /* (the release frees them) */
    free(mh);
    trace_model_lent_giveback(m); /* the path's events and op columns */
}

/* The bound: the category with the most of the path's time (compute, vector, memory, host,
 * latency on a tie); memory is a link's when a link was busier than 90% and than every
 * HBM. */
static void decide(struct trace_verdict_item *it)
{
    double total = 0;
    int best = -1;
    for (int k = 0; k < TRACE_PCAT_COUNT; k++) {
        total += it->time[k];
        if (it->time[k] > 0 && (best < 0 || it->time[k] > it->time[best]))
            best = k;
    }
    if (best < 0 || !(total > 0)) {
        it->bound = it->heuristic = TRACE_BOUND_NONE;
        return;
    }
    static const enum trace_bound of[TRACE_PCAT_COUNT] = {
        TRACE_BOUND_COMPUTE, TRACE_BOUND_VECTOR,  TRACE_BOUND_MEMORY,
        TRACE_BOUND_HOST,    TRACE_BOUND_LATENCY, TRACE_BOUND_DMA_FIXED};
    it->bound = of[best];
    it->share = it->time[best] / total;
    if (it->bound == TRACE_BOUND_MEMORY && it->link_util >= 0.9 && it->link_util > it->hbm_util &&
        it->busiest_link != TRACE_NO_STR) {
        it->bound = TRACE_BOUND_LINK;
        it->link = it->busiest_link;
    }
    it->heuristic = it->bound;
}

/* The events of launch r of rs from event from on, into evs (n of them at most; returns
 * how many). */
static size_t launch_events(const struct trace_regions *rs, size_t r, uint64_t from, uint64_t nev,
                            uint64_t *evs)
{
    size_t n = 0;
    for (uint64_t i = from; i < nev; i++)
        if (trace_regions_of_event(rs, i) == r)
            evs[n++] = i;
    return n;
}

/*
 * The launches of v judged (for a growing model, with st: from its incremental split,
 * keeping the items of the launches that ended as the last verdict judged them, judging
 * the others), their events read from the model. Returns false when cancelled.
 */
static bool judge_launches(struct ctx *c, struct trace_verdict *v, struct trace_verdict_inc *st,
                           struct trace_progress *pg)
{
    const struct trace_model *m = c->m;
    size_t nl = trace_regions_count(v->rs_launch);
    uint64_t nev = trace_model_event_count(m);
    /* what may be kept: the same model grown, the resources as they were */
    const struct kept **had = sim_xcalloc(nl ? nl : 1, sizeof(*had));
    uint64_t from = 0;
    size_t reused = 0;
    if (st && !trace_verdict_same_model_(st, m))
        trace_verdict_live_reset_(&st->live);
    if (st && (!trace_verdict_same_model_(st, m) || !trace_verdict_same_resources_(st, c->res))) {
        trace_verdict_kept_clear_(st);
        st->live.nsums = 0; /* (judged against other resources) */
    }
    c->low = st ? trace_verdict_samples_changed_from_(st, m) : 0;
    c->path_every = st ? st->path_every : 0;
    if (st && st->nkept) {
        uint64_t low = c->low;
        size_t found = 0;
        for (size_t r = 0; r < nl; r++)
            found += (had[r] = trace_verdict_kept_for_(st, trace_regions_get(v->rs_launch, r),
                                                       low)) != NULL;
        /* a kept launch judged again: its events before st->from are needed too */
        from = found == st->nkept ? st->from : 0;
    }
    /* the launch judged from what the last verdict left, its events taken on: the last
     * verdict's (its events before st->from are its own), else the one with the most ops
     * of those judged (a live decode's, running as long as the run) */
    struct live *lv = NULL;
    size_t lr = SIZE_MAX;
    for (size_t r = 0; st && st->live.cmdq != TRACE_NO_CMDQ && r < nl && lr == SIZE_MAX; r++)
        if (!had[r] && trace_regions_get(v->rs_launch, r)->cmdq_id == st->live.cmdq)
            lr = r;
    if (st && lr == SIZE_MAX) {
        trace_verdict_live_reset_(&st->live);
        for (size_t r = 0; r < nl; r++) {
            const struct trace_region *x = trace_regions_get(v->rs_launch, r);
            if (!had[r] && x->cmdq_id != TRACE_NO_CMDQ &&
                (lr == SIZE_MAX || x->all.ops > trace_regions_get(v->rs_launch, lr)->all.ops))
                lr = r;
        }
        if (lr != SIZE_MAX) { /* (its events are at from or after: it was not kept) */
            st->live.cmdq = trace_regions_get(v->rs_launch, lr)->cmdq_id;
            st->live.seen = from;
        }
    }
    if (lr != SIZE_MAX) {
        lv = &st->live;
        for (uint64_t i = lv->seen; i < nev; i++) {
            if (i % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
                trace_model_lent_giveback(m);
            if (trace_regions_of_event(v->rs_launch, i) != lr)
                continue;
            if (lv->n == lv->cap) {
                lv->cap = lv->cap ? 2 * lv->cap : 1024;
                lv->evs = sim_xreallocarray(lv->evs, lv->cap, sizeof(*lv->evs));
            }
            lv->evs[lv->n++] = i;
        }
        lv->seen = nev;
    }
    /* the events of each launch judged, by index: from the split's runs of them, each
     * launch's when it is judged (into evs, as large as the largest launch), else all at
     * once from one pass (into evs, one launch after the other) */
    size_t *off = sim_xcalloc(nl + 1, sizeof(*off));
    bool by_runs = !st && nl && trace_regions_events(v->rs_launch, 0, NULL) != SIZE_MAX;
    size_t most = 0;
    if (by_runs) {
        for (size_t r = 0; r < nl; r++) {
            off[r + 1] = trace_regions_events(v->rs_launch, r, NULL);
            most = off[r + 1] > most ? off[r + 1] : most;
        }
    } else {
        for (uint64_t i = from; i < nev; i++) {
            size_t r = trace_regions_of_event(v->rs_launch, i);
            if (r != SIZE_MAX && !had[r] && r != lr)
                off[r + 1]++;
        }
    }
    for (size_t r = 0; r < nl; r++)
        off[r + 1] += off[r];
    size_t room = by_runs ? most : off[nl];
    /* (none when every launch is one run of events: ten million events, 80 MB) */
    bool one_runs = by_runs;
    for (size_t r = 0; one_runs && r < nl; r++)
        one_runs = trace_regions_one_run(v->rs_launch, r, NULL);
    uint64_t *evs = one_runs ? NULL : ctx_evs(c, room);
    if (!by_runs) {
        size_t *pos = sim_xcalloc(nl ? nl : 1, sizeof(*pos));
        for (size_t r = 0; r < nl; r++)
            pos[r] = off[r];
        for (uint64_t i = from; i < nev; i++) {
            size_t r = trace_regions_of_event(v->rs_launch, i);
            if (r != SIZE_MAX && !had[r] && r != lr)
                evs[pos[r]++] = i;
        }
        free(pos);
    }
    trace_model_lent_giveback(m); /* the events the splits read */
    v->nlaunches = nl;
    v->launches = sim_xcalloc(nl ? nl : 1, sizeof(*v->launches));
    size_t *uncached = st ? sim_xcalloc(nl ? nl : 1, sizeof(*uncached)) : NULL;
    bool *details = st ? sim_xcalloc(nl ? nl : 1, sizeof(*details)) : NULL;
    uint64_t *first = st ? sim_xcalloc(nl ? nl : 1, sizeof(*first)) : NULL;
    const struct kept **used = st ? sim_xcalloc(nl ? nl : 1, sizeof(*used)) : NULL;
    bool done = true;
    trace_progress_step(pg, "verdict: each launch's critical path", off[nl]);
    for (size_t r = 0; r < nl; r++) {
        if (trace_progress_at(pg, off[r])) {
            v->nlaunches = r; /* cancelled: those judged so far */
            done = false;
            break;
        }
        struct trace_verdict_item *it = &v->launches[r];
        const struct trace_region *reg = trace_regions_get(v->rs_launch, r);
        const struct kept *k = had[r]; /* (had is filled from st alone) */
        assert(!k || st);
        if (k && (k->uncached <= c->budget) == k->details) { /* as judged then */
            *it = k->it;
            it->region = reg;
            trace_critpath_copy(&it->path, &k->it.path);
            c->budget -= k->details ? k->uncached : 0;
            uncached[r] = k->uncached, details[r] = k->details;
            first[r] = 0;
            used[r] = k;
            reused++;
            continue;
        }
        uint64_t *e = by_runs ? evs : evs + off[r], *mine = NULL, e_first = 0;
        size_t n = by_runs ? trace_regions_events(v->rs_launch, r, evs) : off[r + 1] - off[r];
        if (one_runs)
            trace_regions_one_run(v->rs_launch, r, &e_first);
        if (k) { /* kept, but the budget left differs: its events, read again */
            mine = sim_xreallocarray(NULL, reg->all.ops ? reg->all.ops : 1, sizeof(*mine));
            n = launch_events(v->rs_launch, r, 0, nev, mine);
            e = mine;
        }
        if (r == lr)
            e = lv->evs, n = lv->n;
        /* a loaded launch's path says how far it got (a launch of ten million ops takes a
         * second); the live one's does not (cancelled, its state would start over) */
        c->progress = r == lr ? NULL : pg;
        judge(c, reg, e, e_first, n, it, r == lr ? lv : NULL);
        c->progress = NULL;
        if (r != lr) /* the verdict's step again, this launch done */
            trace_progress_resume(pg, "verdict: each launch's critical path", off[nl], off[r + 1]);
        decide(it);
        if (st) {
            uncached[r] = c->last_uncached, details[r] = c->last_details;
            first[r] = n ? (e ? e[0] : e_first) : UINT64_MAX;
        }
        free(mine);
    }
    if (st && done) {
        trace_verdict_inc_keep_(st, v, c->res, uncached, details, first, used, lr);
        st->reused = reused;
    }
    free(uncached);
    free(details);
    free(first);
    free(used);
    free(off);
    free(had);
    return done;
}

/* ---- the verdict ------------------------------------------------------------------------ */

static void ctx_fini(struct ctx *c)
{
    free(c->engine_of);
    if (c->big.n) { /* (a big launch's: so are the events' and bytes' arrays) */
        sim_release_add(&c->big, c->evs);
        sim_release_add(&c->big, c->bytes);
        c->evs = NULL, c->bytes = NULL;
    }
    sim_release_go(&c->big, true);
    free(c->evs);
    free(c->bytes);
    free(c->hbm_of_track);
    free(c->composite);
    free(c->hint_wait);
    free(c->hint_dma);
    trace_resources_free(c->res);
}

/* A verdict of m with nothing found yet. */
static struct trace_verdict *verdict_alloc(const struct trace_model *m)
{
    struct trace_verdict *v = sim_xcalloc(1, sizeof(*v));
    v->m = m;
    v->clock_ghz = trace_model_clock_ghz(m);
    v->own = strncmp(sim_value_get_str(trace_model_metadata(m), "notes", ""), "npuscope ", 9) == 0;
    trace_energy_held(m, &v->energy);
    return v;
}

/* The launches of a loaded model split (rs_launch) and the run's usage (run_region): false
 * when pg was cancelled first (then no launches, the run a span of no usage). */
static bool split_launches(struct trace_verdict *v, struct trace_progress *pg, unsigned threads)
{
    const struct trace_model *m = v->m;
    v->rs_launch = trace_regions_new_launch_run(m, &v->run_region, pg, threads);
    bool run_done = v->rs_launch != NULL;               /* the run's usage came with the launches */
    if (!v->rs_launch && !trace_progress_cancelled(pg)) /* not in the order it needs */
        v->rs_launch = trace_regions_new_light(m, TRACE_REGION_LAUNCH, pg);
    if (!v->rs_launch) {
        v->run_region = (struct trace_region){.kind = TRACE_REGION_RUN, .name = "run"};
        return false;
    }
    trace_progress_step(pg, "verdict: the run", 0);
    if (!run_done)
        trace_run_usage(m, &v->run_region);
    return true;
}

struct trace_verdict *trace_verdict_split(const struct trace_model *m, struct trace_progress *pg)
{
    struct trace_verdict *v = verdict_alloc(m);
    if (!split_launches(v, pg, 0)) {
        trace_verdict_free(v);
        return NULL;
    }
    return v;
}

struct trace_verdict *trace_verdict_new(const struct trace_model *m,
                                        const struct trace_verdict_opts *o)
{
    struct trace_verdict *v = verdict_alloc(m);
    struct ctx c = {.m = m, .res = trace_resources_new(m)};
    size_t nres = trace_resources_count(c.res);
    c.hint_wait = sim_xcalloc(nres ? nres : 1, sizeof(*c.hint_wait));
    c.hint_dma = sim_xcalloc(nres ? nres : 1, sizeof(*c.hint_dma));
    read_peaks(m, &c.pk);
    c.nnames = trace_model_str_count(m);
    c.composite = sim_xcalloc(c.nnames ? c.nnames : 1, sizeof(*c.composite));
    c.budget = o && o->max_decode ? o->max_decode : MAX_DECODE_DEFAULT;
    c.threads = o ? o->threads : 0;
    c.step_spans = o && o->step_spans;
    size_t nt = trace_model_track_count(m);
    c.hbm_of_track = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*c.hbm_of_track));
    c.engine_of = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*c.engine_of));
    for (size_t t = 0; t < nt; t++) {
        c.hbm_of_track[t] = SIZE_MAX - 1;
        enum trace_engine k = trace_model_track_get(m, (uint32_t)t)->engine;
        c.engine_of[t] = (uint8_t)(k < TRACE_ENGINE_COUNT ? k : TRACE_ENGINE_OTHER);
    }
    c.ev = trace_model_event_count(m) ? trace_model_event(m, 0) : NULL;
    c.pt = (struct trace_pathtime){.m = m,
                                   .ev = c.ev,
                                   .engine_of = c.engine_of,
                                   .res = c.res,
                                   .pk = c.pk,
                                   .hbm_of_track = c.hbm_of_track,
                                   .hint_dma = c.hint_dma};

    struct trace_progress *pg = o ? o->progress : NULL;
    struct trace_verdict_inc *st = o ? o->inc : NULL;
    if (st) {
        v->rs_launch = trace_regions_inc_update(st->split, m, pg);
        if (v->rs_launch) {
            trace_progress_step(pg, "verdict: the run", 0);
            /* over the events the split left resident */
            trace_run_usage_inc_update(st->run, m, &v->run_region);
        } else {
            v->run_region = (struct trace_region){.kind = TRACE_REGION_RUN, .name = "run"};
        }
    } else {
        split_launches(v, pg, c.threads);
    }
    if (!v->rs_launch) { /* cancelled */
        ctx_fini(&c);
        return v;
    }
    size_t nl = trace_regions_count(v->rs_launch);
    uint64_t nev = trace_model_event_count(m);
    judge_launches(&c, v, st, pg);

    /* the run: from its launches, or from all its ops */
    struct trace_verdict_item *run = &v->run;
    const struct trace_region *rr = &v->run_region;
    if (rr && nl) {
        uint64_t *none = NULL;
        judge(&c, rr, none, 0, 0, run,
              NULL); /* usage and resources; the path comes from the launches */
        uint64_t covered = 0;
        for (size_t r = 0; r < nl; r++) {
            const struct trace_verdict_item *it = &v->launches[r];
            for (int k = 0; k < TRACE_PCAT_COUNT; k++)
                run->time[k] += it->time[k];
            run->flops += it->flops;
            run->dma_ops += it->dma_ops;
            run->dma_bytes += it->dma_bytes;
            run->waits += it->waits;
            for (int d = 0; d < TRACE_DEP_COUNT; d++)
                run->wait_by[d] += it->wait_by[d];
            run->running |= it->running;
            run->missing |= it->missing;
            covered += it->length;
            if (it->peak_flops > run->peak_flops)
                run->peak_flops = it->peak_flops;
            if (it->longest_wait_ev != UINT64_MAX &&
                (run->longest_wait_ev == UINT64_MAX || it->longest_wait > run->longest_wait))
                run->longest_wait = it->longest_wait, run->longest_wait_ev = it->longest_wait_ev;
        }
        /* time outside every launch: the host between messages */
        if (run->length > covered)
            run->time[TRACE_PCAT_LATENCY] += (double)(run->length - covered);
        run->missing &= ~(unsigned)TRACE_MISSING_DEPS;
        decide(run);
    } else if (rr) {
        c.progress = pg;
        judge(&c, rr, NULL, 0, (size_t)nev, run, NULL); /* (every event: 0, 1, ...) */
        if (nev)
            run->missing |= TRACE_MISSING_LAUNCHES;
        decide(run);
    }
    ctx_fini(&c);
    return v;
}

static void item_fini(struct trace_verdict_item *it)
{
    trace_critpath_fini(&it->path);
}

void trace_verdict_free(struct trace_verdict *v)
{
    if (!v)
        return;
    item_fini(&v->run);
    for (size_t i = 0; i < v->nlaunches; i++)
        item_fini(&v->launches[i]);
    free(v->launches);
    trace_regions_free(v->rs_launch);
    free(v);
}

/* ---- the experiment --------------------------------------------------------------------- */

static void check_item(struct trace_verdict_item *it, const struct trace_verdict_check *c)
{
    it->checked = true;
    it->resource = c->resource;
    it->factor = c->factor;
    it->change = c->change;
    if (!c->resource || c->bound == TRACE_BOUND_NONE)
        return;
    it->bound = c->bound;
    /* the share of the path that category had (a link's bytes are memory time) */
    static const int cat[TRACE_BOUND_COUNT] = {
        [TRACE_BOUND_COMPUTE] = TRACE_PCAT_COMPUTE,    [TRACE_BOUND_VECTOR] = TRACE_PCAT_VECTOR,
        [TRACE_BOUND_MEMORY] = TRACE_PCAT_MEMORY,      [TRACE_BOUND_LINK] = TRACE_PCAT_MEMORY,
        [TRACE_BOUND_HOST] = TRACE_PCAT_HOST,          [TRACE_BOUND_LATENCY] = TRACE_PCAT_LATENCY,
        [TRACE_BOUND_DMA_FIXED] = TRACE_PCAT_DMA_FIXED};
    double total = 0;
    for (int k = 0; k < TRACE_PCAT_COUNT; k++)
        total += it->time[k];
    it->share = total > 0 ? it->time[cat[c->bound]] / total : 0;
    if (c->bound == TRACE_BOUND_LINK && it->heuristic != TRACE_BOUND_LINK)
        it->link = TRACE_NO_STR;
}

void trace_verdict_check(struct trace_verdict *v, const struct trace_verdict_check *c, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (c[k].cmdq_id == TRACE_NO_CMDQ) {
            check_item(&v->run, &c[k]);
            continue;
        }
        for (size_t i = 0; i < v->nlaunches; i++)
            if (v->launches[i].region && v->launches[i].region->cmdq_id == c[k].cmdq_id)
                check_item(&v->launches[i], &c[k]);
    }
}
