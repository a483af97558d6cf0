/*
 * The run's usage for the verdict (see runusage.h): the union of the ops' spans per engine kind
 * within the run's window [0, t_max), swept in start order, from scratch or kept up to date.
 */
#include "trace/verdict/runusage.h"

#include "sim/util/xalloc.h"
#include "trace/model/radix.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { KINDS = TRACE_ENGINE_COUNT };

/* Engine kind of each track of m (malloc'd). */
static uint8_t *kinds_of(const struct trace_model *m)
{
    size_t nt = trace_model_track_count(m);
    uint8_t *kind_of = sim_xreallocarray(NULL, nt ? nt : 1, 1);
    for (size_t t = 0; t < nt; t++) {
        enum trace_engine k = trace_model_track_get(m, (uint32_t)t)->engine;
        kind_of[t] = (uint8_t)(k < TRACE_ENGINE_COUNT ? k : TRACE_ENGINE_OTHER);
    }
    return kind_of;
}

/* An op's span and engine kind, for the union of the run's busy cycles. */
struct bspan {
    uint64_t s, e;
    uint8_t kind;
};

/* The part of [s, e) past *reach that lies before we (the reach still moves to e): one op of
 * a sweep in start order uniting the ops' spans within the window [0, we). */
static uint64_t gain_before(uint64_t s, uint64_t e, uint64_t *reach, uint64_t we)
{
    uint64_t r = *reach;
    if (e <= r)
        return 0;
    *reach = e;
    uint64_t a = s > r ? s : r, b = e < we ? e : we;
    return b > a ? b - a : 0;
}

/* Add span x to the run r's busy cycles (reach: per engine kind, then every engine). */
static void run_unite(struct trace_region *r, uint64_t *reach, const struct bspan *x)
{
    r->engine[x->kind].busy += gain_before(x->s, x->e, &reach[x->kind], r->end);
    r->all.busy += gain_before(x->s, x->e, &reach[TRACE_ENGINE_COUNT], r->end);
}

/*
 * From scratch: one pass over the events in their order, uniting their spans as it goes when
 * their starts come in order (a loaded trace's); those that come late (a live host's, or a
 * file's written in end order) are put aside and sorted, and a second pass merges them in by
 * start. The verdict runs it right after the launch split, whose passes left the events' pages
 * resident.
 */
void trace_run_usage(const struct trace_model *m, struct trace_region *r)
{
    *r = (struct trace_region){.kind = TRACE_REGION_RUN,
                               .name = "run",
                               .cmdq_id = TRACE_NO_CMDQ,
                               .end = trace_model_t_max(m)};
    uint64_t nev = trace_model_event_count(m), now = trace_model_now(m);
    uint8_t *kind_of = kinds_of(m);
    uint64_t reach[TRACE_ENGINE_COUNT + 1] = {0}, last = 0;
    struct bspan *late = NULL; /* the ops out of start order, then sorted */
    uint64_t *late_ev = NULL;  /* their events, in event order */
    size_t nlate = 0, cap = 0;
    const struct trace_event *ev = nev ? trace_model_event(m, 0) : NULL;
    for (uint64_t i = 0; i < nev; i++) {
        const struct trace_event *e = &ev[i];
        uint64_t end = trace_event_end_at(e, now);
        uint8_t k = kind_of[e->track];
        r->all.ops++;
        r->all.op_cycles += end - e->start;
        r->engine[k].ops++;
        r->engine[k].op_cycles += end - e->start;
        if (end <= e->start)
            continue;
        struct bspan x = {e->start, end, k};
        if (e->start >= last) {
            last = e->start;
            if (!nlate)
                run_unite(r, reach, &x);
            continue;
        }
        if (nlate == cap) {
            cap = cap ? 2 * cap : 1024;
            late = sim_xreallocarray(late, cap, sizeof(*late));
            late_ev = sim_xreallocarray(late_ev, cap, sizeof(*late_ev));
        }
        late[nlate] = x;
        late_ev[nlate++] = i;
    }
    if (nlate) { /* again, the ops in order merged with those put aside, by start */
        trace_radix_sort(late, nlate, sizeof(*late), offsetof(struct bspan, s));
        memset(reach, 0, sizeof(reach));
        r->all.busy = 0;
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            r->engine[k].busy = 0;
        size_t a = 0, b = 0; /* late[a]: the next put aside by start; late_ev[b]: by event */
        for (uint64_t i = 0; i < nev; i++) {
            if (b < nlate && late_ev[b] == i) {
                b++;
                continue;
            }
            const struct trace_event *e = &ev[i];
            uint64_t end = trace_event_end_at(e, now);
            if (end <= e->start)
                continue;
            for (; a < nlate && late[a].s <= e->start; a++)
                run_unite(r, reach, &late[a]);
            run_unite(r, reach, &(struct bspan){e->start, end, kind_of[e->track]});
        }
        for (; a < nlate; a++)
            run_unite(r, reach, &late[a]);
    }
    free(late);
    free(late_ev);
    free(kind_of);
    size_t nx = trace_model_transfer_count(m);
    for (size_t j = 0; j < nx; j++) {
        const struct trace_transfer *x = trace_model_transfer(m, j);
        if (x->event < nev)
            *(x->flags & TRACE_XFER_WRITE ? &r->all.write_bytes : &r->all.read_bytes) += x->bytes;
    }
}

/* ---- a growing model's ------------------------------------------------------------------ */

/* A union of spans: disjoint, in time order, none touching the next. */
struct ivs {
    uint64_t (*v)[2];
    size_t n, cap;
    uint64_t len; /* their total length */
};

struct trace_run_usage_inc {
    const struct trace_model *m;
    uint64_t folded;                    /* events [0, folded) are in */
    struct trace_event last;            /* event folded - 1 (the model changed when it differs) */
    size_t nx;                          /* transfers summed */
    uint64_t read, write;               /* their bytes (of events the model had) */
    uint64_t ops[KINDS], cycles[KINDS]; /* of the events in */
    struct ivs u[KINDS + 1];            /* per engine kind, then every engine */
    uint64_t forgot[KINDS + 1];         /* length of the union before the horizon */
    uint64_t horizon;                   /* the unions hold nothing that ends before it */
    uint64_t max_start, late;           /* the latest start in; the most an event came late */
    uint64_t max_end;                   /* the latest end in */
};

struct trace_run_usage_inc *trace_run_usage_inc_new(void)
{
    return sim_xcalloc(1, sizeof(struct trace_run_usage_inc));
}

static void inc_reset(struct trace_run_usage_inc *st)
{
    uint64_t late = st->late; /* what was learned of the model stays */
    for (int k = 0; k <= KINDS; k++)
        free(st->u[k].v);
    memset(st, 0, sizeof(*st));
    st->late = late;
}

void trace_run_usage_inc_free(struct trace_run_usage_inc *st)
{
    if (!st)
        return;
    for (int k = 0; k <= KINDS; k++)
        free(st->u[k].v);
    free(st);
}

uint64_t trace_run_usage_inc_folded(const struct trace_run_usage_inc *st)
{
    return st ? st->folded : 0;
}

/* The first span of u that ends at t or later. */
static size_t ivs_from(const struct ivs *u, uint64_t t)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->v[mid][1] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Unite [s, e) into u. */
static void ivs_add(struct ivs *u, uint64_t s, uint64_t e)
{
    size_t i = ivs_from(u, s), j = i; /* [i, j): the spans it meets or touches */
    uint64_t ns = s, ne = e, gone = 0;
    for (; j < u->n && u->v[j][0] <= e; j++) {
        ns = u->v[j][0] < ns ? u->v[j][0] : ns;
        ne = u->v[j][1] > ne ? u->v[j][1] : ne;
        gone += u->v[j][1] - u->v[j][0];
    }
    if (i == j) { /* a span of its own */
        if (u->n == u->cap) {
            u->cap = u->cap ? 2 * u->cap : 64;
            u->v = sim_xreallocarray(u->v, u->cap, sizeof(*u->v));
        }
        memmove(u->v + i + 1, u->v + i, (u->n - i) * sizeof(*u->v));
        u->n++;
    } else if (j > i + 1) {
        memmove(u->v + i + 1, u->v + j, (u->n - j) * sizeof(*u->v));
        u->n -= j - i - 1;
    }
    u->v[i][0] = ns, u->v[i][1] = ne;
    u->len += (ne - ns) - gone;
}

/* The length of [s, e) that u does not cover. */
static uint64_t ivs_outside(const struct ivs *u, uint64_t s, uint64_t e)
{
    uint64_t in = 0;
    for (size_t i = ivs_from(u, s + 1); i < u->n && u->v[i][0] < e; i++) {
        uint64_t a = u->v[i][0] > s ? u->v[i][0] : s, b = u->v[i][1] < e ? u->v[i][1] : e;
        in += b > a ? b - a : 0;
    }
    return (e - s) - in;
}

/* Move what ends before t out of the unions. */
static void inc_forget(struct trace_run_usage_inc *st, uint64_t t)
{
    if (t <= st->horizon)
        return;
    st->horizon = t;
    for (int k = 0; k <= KINDS; k++) {
        struct ivs *u = &st->u[k];
        size_t i = 0;
        uint64_t len = 0;
        for (; i < u->n && u->v[i][1] <= t; i++)
            len += u->v[i][1] - u->v[i][0];
        if (i) /* (an empty union has no array) */
            memmove(u->v, u->v + i, (u->n - i) * sizeof(*u->v));
        u->n -= i;
        u->len -= len;
        st->forgot[k] += len;
    }
}

/* The horizon the latest start and the lateness allow. */
static uint64_t late_horizon(const struct trace_run_usage_inc *st)
{
    return st->max_start > 2 * st->late ? st->max_start - 2 * st->late : 0;
}

/* A span of kind k, taken in start order with the others not folded in. */
struct pend {
    uint64_t s, e;
    uint8_t kind;
};

enum { FORGET_EVERY = 1 << 16 };

/* Fold in the events that ended, in event order, up to the first in flight. False when one
 * starts before the horizon (the state is then to start over). */
static bool inc_fold(struct trace_run_usage_inc *st, const struct trace_model *m,
                     const uint8_t *kind_of, uint64_t nev)
{
    assert(st->folded <= nev); /* (inc_same) */
    const struct trace_event *ev = nev ? trace_model_event(m, 0) : NULL;
    uint64_t i = st->folded;
    for (; i < nev && !(ev[i].flags & TRACE_EV_INFLIGHT); i++) {
        const struct trace_event *e = &ev[i];
        if (e->start < st->horizon && e->end > e->start)
            return false;
        if (e->start < st->max_start)
            st->late = st->max_start - e->start > st->late ? st->max_start - e->start : st->late;
        else
            st->max_start = e->start;
        uint8_t k = kind_of[e->track];
        st->ops[k]++;
        st->cycles[k] += e->end - e->start;
        if (e->end > e->start) {
            ivs_add(&st->u[k], e->start, e->end);
            ivs_add(&st->u[KINDS], e->start, e->end);
            st->max_end = e->end > st->max_end ? e->end : st->max_end;
        }
        if (i % FORGET_EVERY == FORGET_EVERY - 1)
            inc_forget(st, late_horizon(st));
    }
    st->folded = i;
    if (i)
        st->last = ev[i - 1];
    return true;
}

/* Whether m is the model st folded in, grown. */
static bool inc_same(const struct trace_run_usage_inc *st, const struct trace_model *m)
{
    if (st->m != m || trace_model_event_count(m) < st->folded ||
        trace_model_transfer_count(m) < st->nx)
        return false;
    if (!st->folded)
        return true;
    const struct trace_event *e = trace_model_event(m, st->folded - 1), *f = &st->last;
    return e->start == f->start && e->end == f->end && e->track == f->track && e->op == f->op &&
           e->flags == f->flags;
}

void trace_run_usage_inc_update(struct trace_run_usage_inc *st, const struct trace_model *m,
                                struct trace_region *r)
{
    if (!inc_same(st, m))
        inc_reset(st);
    st->m = m;
    uint64_t nev = trace_model_event_count(m), now = trace_model_now(m);
    uint8_t *kind_of = kinds_of(m);
    if (!inc_fold(st, m, kind_of, nev)) {
        free(kind_of);
        inc_reset(st);
        trace_run_usage(m, r);
        return;
    }
    /* the transfers (of the events the model has) */
    size_t nx = trace_model_transfer_count(m);
    for (; st->nx < nx; st->nx++) {
        const struct trace_transfer *x = trace_model_transfer(m, st->nx);
        if (x->event >= nev)
            break;
        *(x->flags & TRACE_XFER_WRITE ? &st->write : &st->read) += x->bytes;
    }
    uint64_t read = st->read, write = st->write;
    for (size_t j = st->nx; j < nx; j++) {
        const struct trace_transfer *x = trace_model_transfer(m, j);
        if (x->event < nev)
            *(x->flags & TRACE_XFER_WRITE ? &write : &read) += x->bytes;
    }
    *r = (struct trace_region){.kind = TRACE_REGION_RUN,
                               .name = "run",
                               .cmdq_id = TRACE_NO_CMDQ,
                               .end = trace_model_t_max(m)};
    r->all.read_bytes = read, r->all.write_bytes = write;
    /* the events not folded in, on top: their spans in start order, united */
    size_t np = (size_t)(nev - st->folded);
    struct pend *p = sim_xreallocarray(NULL, np ? np : 1, sizeof(*p));
    size_t n = 0;
    uint64_t low = UINT64_MAX, max_end = st->max_end;
    for (uint64_t i = st->folded; i < nev; i++) {
        const struct trace_event *e = trace_model_event(m, i);
        uint64_t end = trace_event_end_at(e, now);
        uint8_t k = kind_of[e->track];
        r->engine[k].ops++;
        r->engine[k].op_cycles += end - e->start;
        low = e->start < low ? e->start : low;
        if (end > e->start) {
            p[n++] = (struct pend){e->start, end, k};
            max_end = end > max_end ? end : max_end;
        }
    }
    free(kind_of);
    bool before = false; /* one of them starts before the horizon */
    for (size_t j = 0; j < n; j++)
        before |= p[j].s < st->horizon;
    if (before || max_end > r->end) { /* (a span past the window: cut, from scratch) */
        free(p);
        inc_reset(st);
        trace_run_usage(m, r);
        return;
    }
    trace_radix_sort(p, n, sizeof(*p), offsetof(struct pend, s));
    uint64_t reach[KINDS + 1] = {0}, extra[KINDS + 1] = {0};
    for (size_t j = 0; j < n; j++) { /* each span's part past its kind's reach, outside */
        for (int k = 0; k <= KINDS; k++) {
            if (k != p[j].kind && k != KINDS)
                continue;
            uint64_t s = p[j].s > reach[k] ? p[j].s : reach[k];
            if (p[j].e > s)
                extra[k] += ivs_outside(&st->u[k], s, p[j].e);
            reach[k] = p[j].e > reach[k] ? p[j].e : reach[k];
        }
    }
    free(p);
    for (int k = 0; k < KINDS; k++) {
        r->engine[k].ops += st->ops[k];
        r->engine[k].op_cycles += st->cycles[k];
        r->engine[k].busy = st->forgot[k] + st->u[k].len + extra[k];
        r->all.ops += r->engine[k].ops;
        r->all.op_cycles += r->engine[k].op_cycles;
    }
    r->all.busy = st->forgot[KINDS] + st->u[KINDS].len + extra[KINDS];
    /* what no event still to come is expected to start before: the oldest start not in, the
     * latest start less twice the most an event came late */
    uint64_t h = late_horizon(st);
    inc_forget(st, low < h ? low : h);
}
