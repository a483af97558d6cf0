/*
 * What a growing model's verdict leaves for the next (see verdict.h, trace_verdict_opts.inc;
 * verdict_int.h): the launch still running, its state freed or dropped, the items of the
 * launches that ended, kept while what they rest on (their events, the resources, the
 * bandwidth samples over their span) is as it was.
 */
#include "trace/verdict/verdict_int.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/regions_inc.h"
#include "trace/verdict/runusage.h"

#include <stdlib.h>
#include <string.h>

/* Free lv's path state, counting its starts. */
void trace_verdict_live_path_free_(struct live *lv)
{
    lv->starts += lv->path ? trace_critinc_restarts(lv->path) : 0;
    trace_critinc_free(lv->path);
    lv->path = NULL;
    lv->nsums = 0; /* (sums of its paths) */
}

void trace_verdict_live_reset_(struct live *lv)
{
    trace_verdict_live_path_free_(lv);
    free(lv->evs);
    free(lv->track);
    free(lv->inflight);
    free(lv->bytes);
    free(lv->sums);
    size_t starts = lv->starts;
    memset(lv, 0, sizeof(*lv));
    lv->cmdq = TRACE_NO_CMDQ;
    lv->starts = starts;
}

/* ---- the state kept from verdict to verdict ---------------------------------------------- */

struct trace_verdict_inc *trace_verdict_inc_new(void)
{
    struct trace_verdict_inc *st = sim_xcalloc(1, sizeof(*st));
    st->split = trace_regions_inc_new(TRACE_REGION_LAUNCH, TRACE_REGIONS_LIGHT);
    st->run = trace_run_usage_inc_new();
    st->live.cmdq = TRACE_NO_CMDQ;
    return st;
}

void trace_verdict_kept_clear_(struct trace_verdict_inc *st)
{
    for (size_t i = 0; i < st->nkept; i++)
        trace_critpath_fini(&st->kept[i].it.path);
    free(st->kept);
    st->kept = NULL;
    st->nkept = 0;
    st->from = 0;
}

void trace_verdict_inc_free(struct trace_verdict_inc *st)
{
    if (!st)
        return;
    trace_verdict_kept_clear_(st);
    trace_verdict_live_reset_(&st->live);
    trace_regions_inc_free(st->split);
    trace_run_usage_inc_free(st->run);
    free(st->res);
    free(st);
}

size_t trace_verdict_inc_reused(const struct trace_verdict_inc *st)
{
    return st ? st->reused : 0;
}

size_t trace_verdict_inc_bytes(const struct trace_verdict_inc *st)
{
    if (!st)
        return 0;
    const struct live *lv = &st->live;
    return trace_critinc_bytes(lv->path) + lv->cap * sizeof(*lv->evs) +
           lv->capsums * sizeof(*lv->sums) + lv->capbytes * sizeof(*lv->bytes) +
           lv->capinflight * sizeof(*lv->inflight) + lv->ntrack;
}

void trace_verdict_inc_trim(struct trace_verdict_inc *st)
{
    if (!st)
        return;
    if (st->live.n && st->live.evs[0] < st->from) /* its events are read from there again */
        st->from = st->live.evs[0];
    trace_verdict_live_reset_(&st->live);
}

void trace_verdict_inc_set_path_every(struct trace_verdict_inc *st, size_t steps)
{
    st->path_every = steps;
}

void trace_verdict_inc_recycle(struct trace_verdict_inc *st, struct trace_verdict *v)
{
    if (!st || !v || !st->live.path)
        return;
    struct trace_critpath *best = NULL;
    for (size_t i = 0; i < v->nlaunches; i++)
        if (!best || v->launches[i].path.n > best->n)
            best = &v->launches[i].path;
    if (!best || !best->steps)
        return;
    trace_critinc_give_room(st->live.path, best->steps, best->n);
    best->steps = NULL;
    best->n = 0;
}

size_t trace_verdict_inc_path_reused(const struct trace_verdict_inc *st)
{
    return st ? st->live.sums_reused : 0;
}

size_t trace_verdict_inc_path_starts(const struct trace_verdict_inc *st)
{
    return st ? st->live.starts + (st->live.path ? trace_critinc_restarts(st->live.path) : 0) : 0;
}

/* Whether m is the model of the last verdict grown: no fewer events, its last event then
 * unchanged. */
bool trace_verdict_same_model_(const struct trace_verdict_inc *st, const struct trace_model *m)
{
    uint64_t nev = trace_model_event_count(m);
    if (st->m != m || nev < st->nev)
        return false;
    if (!st->nev)
        return true;
    const struct trace_event *e = trace_model_event(m, st->nev - 1), *f = &st->last;
    return e->start == f->start && e->track == f->track && e->op == f->op &&
           e->cmdq_id == f->cmdq_id;
}

/* Whether the resources are those the kept items were judged against. A resource's
 * busiest sample counts only when the config gives it no peak (its use is then measured
 * against that sample): a live run's samples are merged into wider windows as it goes, and
 * its busiest sample changes with them, while the use of a resource with a peak over any
 * span the changed samples do not reach stays what it was
 * (trace_verdict_samples_changed_from_). */
bool trace_verdict_same_resources_(const struct trace_verdict_inc *st,
                                   const struct trace_resources *rs)
{
    if (trace_resources_count(rs) != st->nres)
        return false;
    for (size_t i = 0; i < st->nres; i++) {
        const struct trace_resource *x = trace_resources_get(rs, i);
        const struct res_key *k = &st->res[i];
        if (x->name != k->name || x->kind != k->kind || x->peak != k->peak ||
            (!(x->peak > 0) && x->max_rate != k->max_rate))
            return false;
    }
    return true;
}

/* The first cycle a bandwidth sample added or changed since the last verdict covers
 * (UINT64_MAX: none): a kept item whose span reaches it is judged again. */
uint64_t trace_verdict_samples_changed_from_(const struct trace_verdict_inc *st,
                                             const struct trace_model *m)
{
    uint64_t low = UINT64_MAX;
    size_t n = trace_model_bw_sample_count(m);
    for (size_t i = 0; i < n; i++)
        if (i >= st->nsamples || trace_model_bw_sample_rev(m, i) > st->revs) {
            uint64_t c = trace_model_bw_sample(m, i)->cycle;
            low = c < low ? c : low;
        }
    return low;
}

static int cmp_kept(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = ((const struct kept *)b)->cmdq;
    return x < y ? -1 : x > y;
}

/* The kept item of launch r if it is still what judging r would give (but for the budget,
 * which the caller checks), else NULL. */
const struct kept *trace_verdict_kept_for_(const struct trace_verdict_inc *st,
                                           const struct trace_region *r, uint64_t low)
{
    const struct kept *k = bsearch(&r->cmdq_id, st->kept, st->nkept, sizeof(*st->kept), cmp_kept);
    if (!k || k->start != r->start || k->end != r->end ||
        memcmp(&k->all, &r->all, sizeof(k->all)) != 0 ||
        memcmp(k->engine, r->engine, sizeof(k->engine)) != 0)
        return NULL;
    uint64_t b = r->end > r->start ? r->end : r->start + 1; /* the span the resources gave */
    return b <= low ? k : NULL;
}
/* After a complete verdict v: keep the items of the launches that have ended, whose
 * resource samples are in (their span before the latest sample's window: the samples of a
 * window fill up as the run goes), for the next. */
void trace_verdict_inc_keep_(struct trace_verdict_inc *st, const struct trace_verdict *v,
                             const struct trace_resources *rs, const size_t *uncached,
                             const bool *details, const uint64_t *first,
                             const struct kept *const *used, size_t lr)
{
    const struct trace_model *m = v->m;
    uint64_t horizon = 0;
    size_t ns = trace_model_bw_sample_count(m);
    for (size_t i = 0; i < ns; i++) {
        uint64_t c = trace_model_bw_sample(m, i)->cycle;
        horizon = c > horizon ? c : horizon;
    }
    st->m = m;
    st->nev = trace_model_event_count(m);
    if (st->nev)
        st->last = *trace_model_event(m, st->nev - 1);
    st->nsamples = ns;
    st->revs = trace_model_bw_revs(m);
    st->nres = trace_resources_count(rs);
    st->res = sim_xreallocarray(st->res, st->nres ? st->nres : 1, sizeof(*st->res));
    for (size_t i = 0; i < st->nres; i++) {
        const struct trace_resource *x = trace_resources_get(rs, i);
        st->res[i] = (struct res_key){x->name, x->kind, x->peak, x->max_rate};
    }
    struct kept *old = st->kept;
    size_t nold = st->nkept;
    bool *moved = sim_xcalloc(nold ? nold : 1, sizeof(*moved));
    st->kept = sim_xreallocarray(NULL, v->nlaunches ? v->nlaunches : 1, sizeof(*st->kept));
    st->nkept = 0;
    st->from = st->nev;
    for (size_t i = 0; i < v->nlaunches; i++) {
        const struct trace_verdict_item *it = &v->launches[i];
        const struct trace_region *r = it->region;
        uint64_t b = r->end > r->start ? r->end : r->start + 1;
        bool keep = !it->running && r->cmdq_id != TRACE_NO_CMDQ && (!ns || b <= horizon);
        if (i == lr && keep) /* it ended: the next is another's */
            trace_verdict_live_reset_(&st->live);
        if (i == lr && !keep)
            continue; /* its events are its own, not read again from st->from */
        if (!keep) {  /* (its first event; 0 when it was kept before: not known) */
            st->from = first[i] < st->from ? first[i] : st->from;
            continue;
        }
        struct kept *k = &st->kept[st->nkept++];
        if (used[i]) { /* kept still: moved over */
            *k = *used[i];
            moved[used[i] - old] = true;
            continue;
        }
        *k = (struct kept){.cmdq = r->cmdq_id,
                           .all = r->all,
                           .start = r->start,
                           .end = r->end,
                           .uncached = uncached[i],
                           .details = details[i],
                           .it = *it};
        memcpy(k->engine, r->engine, sizeof(k->engine));
        k->it.region = NULL;
        trace_critpath_copy(&k->it.path, &it->path);
    }
    for (size_t i = 0; i < nold; i++)
        if (!moved[i])
            trace_critpath_fini(&old[i].it.path);
    free(old);
    free(moved);
}
