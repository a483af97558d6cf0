/*
 * The launch split with the run's usage in one pass from the last event (see regions.h,
 * trace_regions_new_launch_run): what the verdict reads. The ops of some length come in end
 * order, so each union of busy spans is swept from the last op met: an op adds its part
 * before the earliest start of those met (gain_down). A big model is passed over in two
 * halves on two threads, joined after.
 */
#include "trace/analysis/regions.h"

#include "trace/analysis/regions_int.h"

#include "trace/model/mapped.h"

#include "sim/util/keytab.h"
#include "sim/util/xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* How many events ahead the pass asks for an event; per engine kind. */
enum {
    PREFETCH = 16,
    KINDS = TRACE_ENGINE_COUNT,
    AHEAD = 1 << 16, /* events mapped in at once (trace_model_lent_ahead) */
};

/* A model of at least this many events is split in two halves, the later on a second thread
 * (trace_regions_new_launch_run's threads 0). */
enum { SPLIT_THREAD_MIN = 1 << 20 };

/* A launch as trace_regions_new_launch_run meets it: its usage and span, and the reach of the
 * sweep of its unions. */
struct lacc {
    int32_t cmdq;
    uint64_t start, end;
    struct trace_usage all, engine[KINDS];
    uint64_t low[KINDS + 1]; /* per engine kind, then on any: the earliest start met */
};

/* What [s, e) (e > s) adds to the union of spans met before it, none of which ends before e (a
 * sweep in end order from the last): the part before *low, the earliest start among them
 * (UINT64_MAX: none), which moves to s when s is earlier. */
static inline uint64_t gain_down(uint64_t s, uint64_t e, uint64_t *low)
{
    uint64_t l = *low, b = e < l ? e : l;
    *low = s < l ? s : l;
    return b > s ? b - s : 0;
}

/* A new slot at the end of acc (grown as needed). */
static struct lacc *lacc_add(struct lacc **acc, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *acc = sim_xreallocarray(*acc, *cap, sizeof(**acc));
    }
    return &(*acc)[(*n)++];
}

/* A fresh launch of cmdq c in acc, first met at event e ending at end. */
static struct lacc *lacc_new(struct lacc **acc, size_t *n, size_t *cap, int32_t c,
                             const struct trace_event *e, uint64_t end)
{
    struct lacc *a = lacc_add(acc, n, cap);
    *a = (struct lacc){.cmdq = c, .start = e->start, .end = end};
    for (int k = 0; k <= KINDS; k++)
        a->low[k] = UINT64_MAX;
    return a;
}

/* The current launch's sums, kept in locals as the pass goes (its usage over all engines,
 * the earliest start met on any, its span), back into a. */
static void lacc_put(struct lacc *a, const struct trace_usage *all, uint64_t low, uint64_t start,
                     uint64_t end)
{
    a->all = *all;
    a->low[KINDS] = low;
    a->start = start, a->end = end;
}

/* Append x to the array *v of *n (capacity *cap). */
static void push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = sim_xreallocarray(*v, *cap, sizeof(**v));
    }
    (*v)[(*n)++] = x;
}

static _Thread_local const struct lacc *lacc_ctx; /* for qsort (one per thread) */

static int cmp_lacc(const void *a, const void *b)
{
    int32_t x = lacc_ctx[*(const uint32_t *)a].cmdq, y = lacc_ctx[*(const uint32_t *)b].cmdq;
    return x < y ? -1 : x > y;
}

/* The launches of the pass (acc, n of them; runs[k] the slot in acc of the k-th run from the
 * last, with its first event first[k]) into rs, in cmdq_id order, named as split_launch names
 * them (hosts: the HOST events of a launch, from the last), with the runs of each. */
static void launch_run_emit(struct trace_regions *rs, const struct lacc *acc, size_t n,
                            const uint64_t *first, const uint64_t *slot, size_t nrun,
                            uint64_t *hosts, size_t nhost)
{
    uint32_t *order = sim_xreallocarray(NULL, n ? n : 1, sizeof(*order));
    for (size_t k = 0; k < n; k++)
        order[k] = (uint32_t)k;
    lacc_ctx = acc;
    qsort(order, n, sizeof(*order), cmp_lacc);
    lacc_ctx = NULL;
    int32_t *ids = sim_xreallocarray(NULL, n ? n : 1, sizeof(*ids));
    uint32_t *region_of = sim_xreallocarray(NULL, n ? n : 1, sizeof(*region_of));
    for (size_t k = 0; k < n; k++) {
        ids[k] = acc[order[k]].cmdq;
        region_of[order[k]] = (uint32_t)k;
    }
    for (size_t a = 0, b = nhost; a + 1 < b; a++, b--) { /* into event order */
        uint64_t t = hosts[a];
        hosts[a] = hosts[b - 1];
        hosts[b - 1] = t;
    }
    trace_regions_add_launches_(rs, ids, n, hosts, nhost);
    bool *seen = sim_xreallocarray(NULL, n ? n : 1, sizeof(*seen));
    for (size_t k = 0; k < n; k++) {
        const struct lacc *a = &acc[order[k]];
        struct trace_region *r = &rs->v[k];
        r->start = a->start;
        r->end = a->end;
        r->all = a->all;
        memcpy(r->engine, a->engine, sizeof(r->engine));
        seen[k] = true;
    }
    trace_regions_extend_by_markers_(rs, ids, n, seen);
    free(seen);
    /* the runs of the launches in event order, and those of each launch */
    size_t nl = 0;
    for (size_t k = 0; k < nrun; k++)
        nl += slot[k] != NO_REGION;
    rs->run_first = sim_xreallocarray(NULL, nl ? nl : 1, sizeof(*rs->run_first));
    rs->run_len = sim_xreallocarray(NULL, nl ? nl : 1, sizeof(*rs->run_len));
    rs->run_off = sim_xcalloc(n + 1, sizeof(*rs->run_off));
    rs->run_idx = sim_xreallocarray(NULL, nl ? nl : 1, sizeof(*rs->run_idx));
    uint32_t *reg = sim_xreallocarray(NULL, nl ? nl : 1, sizeof(*reg));
    size_t j = 0;
    for (size_t k = nrun; k-- > 0;) {
        if (slot[k] == NO_REGION)
            continue;
        uint64_t to = k > 0 ? first[k - 1] : rs->nevents;
        rs->run_first[j] = first[k];
        rs->run_len[j] = to - first[k];
        reg[j] = region_of[slot[k]];
        rs->run_off[reg[j] + 1]++;
        j++;
    }
    for (size_t r = 0; r < n; r++)
        rs->run_off[r + 1] += rs->run_off[r];
    size_t *pos = sim_xreallocarray(NULL, n ? n : 1, sizeof(*pos));
    memcpy(pos, rs->run_off, n * sizeof(*pos));
    for (size_t k = 0; k < nl; k++)
        rs->run_idx[pos[reg[k]]++] = k;
    free(pos);
    free(reg);
    free(region_of);
    free(ids);
    free(order);
    trace_regions_number_(rs);
}

/* A pass of the launch split over the events [lo, hi), from the last: the run's usage, the
 * launches met (acc, by cmdq_id in slots) with theirs, the runs of consecutive events of one
 * launch (first, slot: from the last) and the HOST events (from the last), as the pass over
 * every event would find them had it begun at hi, each union swept from none. */
struct lpass {
    const struct trace_model *m;
    const struct trace_event *ev;
    const uint8_t *engine_of;
    const struct trace_transfer *xs;
    size_t x; /* xs[0, x): the transfers of the events below hi */
    uint64_t lo, hi, now, we;
    struct trace_progress *p; /* (its done counted twice when it is one of two halves) */
    unsigned scale;
    const atomic_bool *stop; /* the other half's pass failed (NULL: none) */
    /* what it found: whether the ops of some length met came in end order (and it was not
     * cancelled); the ends of the first and last of them (UINT64_MAX: none) */
    bool ok;
    uint64_t first_end, prev_end;
    struct trace_usage all, engine[KINDS];
    uint64_t low[KINDS + 1];
    struct sim_keytab slots;
    struct lacc *acc;
    size_t nacc, capacc;
    uint64_t *first, *slot, *hosts;
    size_t nrun, caprun, capslot, nhost, caphost;
};

/* A run of launch slot sl (NO_REGION: of no launch) after ps's: its index (its first event
 * set by the caller). */
static size_t lpass_run_add(struct lpass *ps, uint64_t sl)
{
    push_u64(&ps->slot, &ps->nrun, &ps->capslot, sl);
    if (ps->caprun < ps->capslot) {
        ps->caprun = ps->capslot;
        ps->first = sim_xreallocarray(ps->first, ps->caprun, sizeof(*ps->first));
    }
    return ps->nrun - 1;
}

static void lpass_run(struct lpass *ps)
{
    const struct trace_event *ev = ps->ev;
    const uint8_t *engine_of = ps->engine_of;
    const struct trace_transfer *xs = ps->xs;
    uint64_t now = ps->now, we = ps->we;
    size_t x = ps->x;
    for (int k = 0; k <= KINDS; k++)
        ps->low[k] = UINT64_MAX;
    ps->ok = true;
    ps->first_end = ps->prev_end = UINT64_MAX;
    struct lacc *cur = NULL;
    /* the sums every event adds to (the run's over all engines, the current launch's) kept
     * in locals, out of memory: through the structs, each event's sums would wait for the
     * stores of the last's */
    struct trace_usage ra = {0}, ca = {0};
    uint64_t rlow = UINT64_MAX, clow = 0, cstart = 0, cend = 0;
    /* from the last event to the first: the unions of ops met in end order, each op's part
     * before the earliest start of those met (gain_down) */
    uint64_t mapped = ps->hi; /* the events from here on mapped in */
    for (uint64_t i = ps->hi; i-- > ps->lo;) {
        uint64_t done = ps->hi - 1 - i;
        if (i < mapped) {
            mapped = i - ps->lo >= AHEAD ? i + 1 - AHEAD : ps->lo;
            trace_model_lent_ahead(ps->m, mapped, i + 1);
        }
        if (done % TRACE_PROGRESS_EVERY == 0 &&
            (trace_progress_at(ps->p, ps->scale * done) || (ps->stop && atomic_load(ps->stop)))) {
            ps->ok = false;
            break;
        }
        if (i >= PREFETCH)
            __builtin_prefetch(&ev[i - PREFETCH]);
        const struct trace_event *e = &ev[i];
        uint64_t s = e->start, end = e->end;
        if (e->flags & TRACE_EV_INFLIGHT) /* runs until now */
            end = now > s ? now : s;
        if (end > s) {
            if (end > ps->prev_end) {
                ps->ok = false; /* not in end order */
                break;
            }
            if (ps->prev_end == UINT64_MAX)
                ps->first_end = end;
            ps->prev_end = end;
        }
        if (!ps->nrun || e->cmdq_id != (cur ? cur->cmdq : TRACE_NO_CMDQ)) {
            if (cur)
                lacc_put(cur, &ca, clow, cstart, cend);
            cur = NULL;
            uint64_t sl = NO_REGION;
            if (e->cmdq_id != TRACE_NO_CMDQ) {
                sl = sim_keytab_id(&ps->slots, (uint32_t)e->cmdq_id);
                cur = sl == ps->nacc
                          ? lacc_new(&ps->acc, &ps->nacc, &ps->capacc, e->cmdq_id, e, end)
                          : &ps->acc[sl];
                ca = cur->all, clow = cur->low[KINDS], cstart = cur->start, cend = cur->end;
            }
            if (ps->nrun)
                ps->first[ps->nrun - 1] = i + 1;
            lpass_run_add(ps, sl);
        }
        /* (the bytes summed in registers: through a pointer into u, each sum would wait for
         * the store before it, and u's copies below for the last) */
        uint64_t rd = 0, wr = 0;
        for (; x > 0 && xs[x - 1].event == i; x--) {
            if (xs[x - 1].flags & TRACE_XFER_WRITE)
                wr += xs[x - 1].bytes;
            else
                rd += xs[x - 1].bytes;
        }
        struct trace_usage u = {
            .ops = 1, .op_cycles = end - s, .read_bytes = rd, .write_bytes = wr};
        uint8_t k = engine_of[e->track];
        ra.ops++;
        ra.op_cycles += u.op_cycles;
        ps->engine[k].ops++;
        ps->engine[k].op_cycles += u.op_cycles;
        ra.read_bytes += u.read_bytes;
        ra.write_bytes += u.write_bytes;
        uint64_t cut = end < we ? end : we; /* the run's window ends at we */
        if (cut > s) {
            ps->engine[k].busy += gain_down(s, cut, &ps->low[k]);
            ra.busy += gain_down(s, cut, &rlow);
        }
        if (!cur)
            continue;
        trace_usage_add_(&ca, &u);
        trace_usage_add_(&cur->engine[k], &u);
        if (end > s) {
            cur->engine[k].busy += gain_down(s, end, &cur->low[k]);
            ca.busy += gain_down(s, end, &clow);
        }
        cstart = s < cstart ? s : cstart;
        cend = end > cend ? end : cend;
        if (engine_of[e->track] == TRACE_ENGINE_HOST)
            push_u64(&ps->hosts, &ps->nhost, &ps->caphost, i);
    }
    if (cur)
        lacc_put(cur, &ca, clow, cstart, cend);
    ps->all = ra;
    ps->low[KINDS] = rlow;
    if (ps->nrun)
        ps->first[ps->nrun - 1] = ps->lo;
}

static void lpass_free(struct lpass *ps)
{
    sim_keytab_free(&ps->slots);
    free(ps->acc);
    free(ps->first);
    free(ps->slot);
    free(ps->hosts);
}

/* The later half's pass on a thread of its own, which tells the earlier half when it fails. */
struct lhalf {
    struct lpass ps;
    atomic_bool failed;
};

static void *lhalf_main(void *arg)
{
    struct lhalf *h = arg;
    lpass_run(&h->ps);
    if (!h->ps.ok)
        atomic_store(&h->failed, true);
    return NULL;
}

/* What a gain_down over [s, e) from the low *mine (a half's own sweep, from none) added
 * beyond what it adds from the lower of *mine and b (the later half's last low: UINT64_MAX,
 * none), *mine moved on: a union swept from more spans met only shrinks what is new. */
static inline uint64_t gain_excess(uint64_t s, uint64_t e, uint64_t b, uint64_t *mine)
{
    uint64_t l = *mine, t = l < b ? l : b;
    uint64_t had = (e < l ? e : l) > s ? (e < l ? e : l) - s : 0;
    uint64_t want = (e < t ? e : t) > s ? (e < t ? e : t) - s : 0;
    *mine = s < l ? s : l;
    return had - want;
}

/* A union the earlier half swept from none that the later half had begun: the later half's
 * low and the earlier's own as the fix goes (see lpass_join). */
struct lfix {
    uint64_t b, mine;
};

static int cmp_lfix_b(const void *x, const void *y)
{
    uint64_t p = (*(const struct lfix *const *)x)->b, q = (*(const struct lfix *const *)y)->b;
    return p < q ? -1 : p > q;
}

/* Take [s, e) into fix f (NULL: none), subtracting the excess from *busy. */
static inline void lfix_take(struct lfix *f, uint64_t s, uint64_t e, uint64_t *busy)
{
    if (f && f->mine > f->b)
        *busy -= gain_excess(s, e, f->b, &f->mine);
}

/*
 * The earlier half a (events [0, a->hi)) after the later half b, into b: b's runs, then a's
 * (the first of a's the last of b's when the events at the boundary are of one launch); b's
 * launches, then those a met first; the usage summed, but for the unions a swept from none
 * that b had begun: swept again over a's events from the last, from b's lows, while an event
 * may add less to one of them than it did (until its end is below the lows of every union
 * a's sweep has not reached the low of). False when the two halves are not in end order
 * across the boundary.
 */
static bool lpass_join(struct lpass *b, struct lpass *a)
{
    if (a->first_end != UINT64_MAX && b->prev_end != UINT64_MAX && a->first_end > b->prev_end)
        return false;
    const struct trace_event *ev = a->ev;
    size_t nb = b->nacc, nf = (nb + 1) * (KINDS + 1);
    /* the fixes: the run's (row 0), then each launch b met's, per engine kind, then on any */
    struct lfix *fix = sim_xreallocarray(NULL, nf, sizeof(*fix));
    for (int k = 0; k <= KINDS; k++)
        fix[k] = (struct lfix){b->low[k], UINT64_MAX};
    for (size_t j = 0; j < nb; j++)
        for (int k = 0; k <= KINDS; k++)
            fix[(j + 1) * (KINDS + 1) + (size_t)k] = (struct lfix){b->acc[j].low[k], UINT64_MAX};
    /* a's launches into b's: summed, or added after them */
    uint64_t *to = sim_xreallocarray(NULL, a->nacc ? a->nacc : 1, sizeof(*to));
    for (size_t j = 0; j < a->nacc; j++) {
        const struct lacc *y = &a->acc[j];
        uint32_t id = sim_keytab_id(&b->slots, (uint32_t)y->cmdq);
        to[j] = id;
        if (id == b->nacc) {
            *lacc_add(&b->acc, &b->nacc, &b->capacc) = *y;
            continue;
        }
        struct lacc *z = &b->acc[id];
        trace_usage_add_(&z->all, &y->all);
        for (int k = 0; k < KINDS; k++)
            trace_usage_add_(&z->engine[k], &y->engine[k]);
        for (int k = 0; k <= KINDS; k++)
            z->low[k] = y->low[k] < z->low[k] ? y->low[k] : z->low[k];
        z->start = y->start < z->start ? y->start : z->start;
        z->end = y->end > z->end ? y->end : z->end;
    }
    trace_usage_add_(&b->all, &a->all);
    for (int k = 0; k < KINDS; k++)
        trace_usage_add_(&b->engine[k], &a->engine[k]);
    for (int k = 0; k <= KINDS; k++)
        b->low[k] = a->low[k] < b->low[k] ? a->low[k] : b->low[k];
    /* the fixes by their later half's low: an event ending at or below the lowest of those
     * still to reach theirs adds to each what it added */
    struct lfix **by = sim_xreallocarray(NULL, nf, sizeof(*by));
    size_t nby = 0;
    for (size_t q = 0; q < nf; q++)
        if (fix[q].b != UINT64_MAX)
            by[nby++] = &fix[q];
    qsort(by, nby, sizeof(*by), cmp_lfix_b);
    size_t lowest = 0; /* by[lowest]: the lowest of those still to reach theirs */
    int32_t cq = TRACE_NO_CMDQ;
    size_t row = 0; /* the current event's launch's fixes (0: none of b's) */
    for (uint64_t i = a->hi; i-- > 0;) {
        while (lowest < nby && by[lowest]->mine <= by[lowest]->b)
            lowest++;
        if (lowest == nby)
            break;
        const struct trace_event *e = &ev[i];
        uint64_t s = e->start, end = e->end;
        if (e->flags & TRACE_EV_INFLIGHT)
            end = a->now > s ? a->now : s;
        if (end <= s) /* (of no length: in no order) */
            continue;
        if (end <= by[lowest]->b)
            break;
        uint8_t k = a->engine_of[e->track];
        uint64_t cut = end < a->we ? end : a->we;
        if (cut > s) {
            lfix_take(&fix[k], s, cut, &b->engine[k].busy);
            lfix_take(&fix[KINDS], s, cut, &b->all.busy);
        }
        if (e->cmdq_id != cq) {
            cq = e->cmdq_id;
            uint32_t id =
                cq == TRACE_NO_CMDQ ? SIM_KEYTAB_NONE : sim_keytab_find(&b->slots, (uint32_t)cq);
            row = id != SIM_KEYTAB_NONE && id < nb ? (size_t)id + 1 : 0;
        }
        if (!row)
            continue;
        struct lacc *z = &b->acc[row - 1];
        struct lfix *f = &fix[row * (KINDS + 1)];
        lfix_take(&f[k], s, end, &z->engine[k].busy);
        lfix_take(&f[KINDS], s, end, &z->all.busy);
    }
    free(by);
    free(fix);
    /* the runs, a's after b's, and the HOST events */
    size_t from = 0;
    if (b->nrun && a->nrun && ev[a->hi - 1].cmdq_id == ev[a->hi].cmdq_id) {
        b->first[b->nrun - 1] = a->first[0]; /* one run across the boundary */
        from = 1;
    }
    for (size_t k = from; k < a->nrun; k++) {
        size_t r = lpass_run_add(b, a->slot[k] == NO_REGION ? NO_REGION : to[a->slot[k]]);
        b->first[r] = a->first[k]; /* (after the add: it may move first) */
    }
    for (size_t k = 0; k < a->nhost; k++)
        push_u64(&b->hosts, &b->nhost, &b->caphost, a->hosts[k]);
    free(to);
    return true;
}

struct trace_regions *trace_regions_new_launch_run(const struct trace_model *m,
                                                   struct trace_region *run,
                                                   struct trace_progress *p, unsigned threads)
{
    uint64_t nev = trace_model_event_count(m);
    size_t nx = trace_model_transfer_count(m);
    const struct trace_transfer *xs = nx ? trace_model_transfer(m, 0) : NULL;
    for (size_t k = 1; k < nx; k++)
        if (xs[k].event < xs[k - 1].event)
            return NULL; /* the transfers out of event order */
    size_t nt = trace_model_track_count(m);
    uint8_t *engine_of = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*engine_of));
    for (uint32_t t = 0; t < nt; t++) {
        enum trace_engine k = trace_model_track_get(m, t)->engine;
        engine_of[t] = (uint8_t)(k < TRACE_ENGINE_COUNT ? k : TRACE_ENGINE_OTHER);
    }
    uint64_t we = trace_model_t_max(m);
    *run = (struct trace_region){
        .kind = TRACE_REGION_RUN, .name = "run", .cmdq_id = TRACE_NO_CMDQ, .end = we};
    const struct trace_event *ev = nev ? trace_model_event(m, 0) : NULL;
    /* two halves, the later on a second thread, for a big model (or when asked) */
    bool halves = threads != 1 && nev >= 2 && (threads == 2 || nev >= SPLIT_THREAD_MIN);
    uint64_t mid = halves ? nev / 2 : 0;
    struct lhalf *h = sim_xcalloc(1, sizeof(*h));
    struct lpass *b = &h->ps, a = {0};
    atomic_init(&h->failed, false);
    *b = (struct lpass){.m = m,
                        .ev = ev,
                        .engine_of = engine_of,
                        .xs = xs,
                        .x = nx,
                        .lo = mid,
                        .hi = nev,
                        .now = trace_model_now(m),
                        .we = we,
                        .p = p,
                        .scale = 1};
    while (b->x > 0 && xs[b->x - 1].event >= nev)
        b->x--;
    trace_progress_step(p, "verdict: the launches and the run", nev);
    bool ok;
    if (halves) {
        a = *b;
        a.lo = 0, a.hi = mid, a.scale = 2, a.stop = &h->failed;
        b->stop = &h->failed;
        while (a.x > 0 && xs[a.x - 1].event >= mid)
            a.x--;
        b->p = NULL; /* (the earlier half's pass reports and checks for both) */
        pthread_t th;
        bool apart = pthread_create(&th, NULL, lhalf_main, h) == 0;
        lpass_run(&a);
        if (!a.ok)
            atomic_store(&h->failed, true);
        if (apart)
            pthread_join(th, NULL);
        else
            lhalf_main(h);
        ok = a.ok && b->ok && !trace_progress_cancelled(p) && lpass_join(b, &a);
        lpass_free(&a);
    } else {
        lpass_run(b);
        ok = b->ok;
    }
    free(engine_of);
    struct trace_regions *rs = NULL;
    if (ok) {
        run->all = b->all;
        memcpy(run->engine, b->engine, sizeof(b->engine));
        rs = sim_xcalloc(1, sizeof(*rs));
        rs->m = m;
        rs->kind = TRACE_REGION_LAUNCH;
        rs->no_op_busy = true;
        rs->nevents = nev;
        rs->ev = ev;
        launch_run_emit(rs, b->acc, b->nacc, b->first, b->slot, b->nrun, b->hosts, b->nhost);
    }
    lpass_free(b);
    free(h);
    return rs;
}

size_t trace_regions_events(const struct trace_regions *rs, size_t r, uint64_t *evs)
{
    if (!rs->run_off || r >= rs->n)
        return SIZE_MAX;
    size_t n = 0;
    for (size_t k = rs->run_off[r]; k < rs->run_off[r + 1]; k++) {
        size_t j = rs->run_idx[k];
        if (evs)
            for (uint64_t i = 0; i < rs->run_len[j]; i++)
                evs[n + i] = rs->run_first[j] + i;
        n += rs->run_len[j];
    }
    return n;
}

bool trace_regions_one_run(const struct trace_regions *rs, size_t r, uint64_t *first)
{
    if (!rs->run_off || r >= rs->n)
        return false;
    uint64_t from = 0, next = 0;
    bool any = false;
    for (size_t k = rs->run_off[r]; k < rs->run_off[r + 1]; k++) {
        size_t j = rs->run_idx[k];
        if (!rs->run_len[j])
            continue;
        if (any && rs->run_first[j] != next)
            return false;
        if (!any)
            from = rs->run_first[j], any = true;
        next = rs->run_first[j] + rs->run_len[j];
    }
    if (first)
        *first = from;
    return true;
}
