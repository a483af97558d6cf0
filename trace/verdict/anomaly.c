/*
 * Anomalies of a trace (see anomaly.h): slow ops by sorting the ops by (engine kind, op
 * name, duration); idle gaps by walking each engine track's ops in start order; bandwidth
 * windows from the same samples as the summary's; INVALID_TRACE markers as they are.
 */
#include "trace/verdict/anomaly.h"

#include "trace/verdict/anomaly_int.h"

#include "sim/data/value.h"
#include "sim/util/keytab.h"
#include "sim/util/prefault.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/metrics.h"
#include "trace/model/radix.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void trace_anomaly_opts_default(struct trace_anomaly_opts *o)
{
    *o = (struct trace_anomaly_opts){
        .slow_factor = 5,
        .slow_min_ops = 5,
        .slow_min_cycles = 16,
        .idle_factor = 10,
        .idle_min_gaps = 4,
        .idle_min_cycles = 100,
        .max_per_kind = 1000,
    };
}

const char *trace_anomaly_kind_name(enum trace_anomaly_kind k)
{
    static const char *const names[] = {"invalid", "slow op", "idle gap", "bandwidth"};
    return k < TRACE_ANOMALY_KIND_COUNT ? names[k] : "?";
}

/* ---- INVALID_TRACE markers ------------------------------------------------------------- */

static bool is_invalid(const struct trace_model *m, const struct trace_marker *k)
{
    return k->name != TRACE_NO_STR &&
           strcmp(trace_model_str(m, k->name), TRACE_INVALID_MARKER) == 0;
}

size_t trace_invalid_markers(const struct trace_model *m, size_t *first)
{
    size_t n = 0, best = SIZE_MAX;
    for (size_t i = 0; i < trace_model_marker_count(m); i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        if (!is_invalid(m, k))
            continue;
        n++;
        if (best == SIZE_MAX || k->cycle < trace_model_marker(m, best)->cycle)
            best = i;
    }
    if (first)
        *first = best;
    return n;
}

const char *trace_invalid_error(const struct trace_model *m, size_t marker)
{
    if (marker >= trace_model_marker_count(m))
        return NULL;
    return sim_value_get_str(trace_model_marker(m, marker)->details, "error", NULL);
}

double trace_dram_peak(const struct trace_model *m)
{
    const struct sim_value *cfg = trace_model_config(m);
    const struct sim_value *mem = sim_value_map_get(cfg, "memory");
    double peak = sim_value_get_float(mem, "dram_peak_bw_bytes_per_cycle", 0);
    if (peak > 0)
        return peak;
    double gbps = sim_value_get_float(sim_value_map_get(mem, "hbm"), "gbps", 0);
    const struct sim_value *chip = sim_value_map_get(cfg, "chip");
    int64_t sips = sim_value_get_int(chip, "sips", 0);
    int64_t cubes = sim_value_get_int(chip, "cubes_per_sip", 0);
    double ghz = trace_model_clock_ghz(m);
    if (!(gbps > 0) || sips <= 0 || cubes <= 0 || !(ghz > 0))
        return 0;
    return gbps * (double)sips * (double)cubes / ghz;
}

/* ---- collecting ------------------------------------------------------------------------ */

void trace_anomaly_push_(struct list *l, const struct trace_anomaly *a)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = sim_xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    l->v[l->n++] = *a;
}

uint64_t trace_anomaly_ev_end_(const struct trace_model *m, const struct trace_event *ev)
{
    return trace_event_end_at(ev, trace_model_now(m));
}

void trace_anomaly_find_invalid_(const struct trace_model *m, struct list *l)
{
    for (size_t i = 0; i < trace_model_marker_count(m); i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        if (is_invalid(m, k))
            trace_anomaly_push_(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_INVALID,
                                                           .start = k->cycle,
                                                           .end = k->cycle,
                                                           .event = UINT64_MAX,
                                                           .track = k->track,
                                                           .marker = i});
    }
}

static int cmp_opdur(const void *a, const void *b)
{
    const struct opdur *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur < y->dur ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The work an op does, from its details (ADR-0052 D3 params, spec details): m x n x k of a
 * GEMM, else the bytes it moves, else the elements of its largest input or output; 0 when
 * the details say nothing of it. */
static double work_of(const struct sim_value *d)
{
    int64_t mm = sim_value_get_int(d, "m", -1), nn = sim_value_get_int(d, "n", -1);
    int64_t kk = sim_value_get_int(d, "k", -1);
    if (mm > 0 && nn > 0 && kk > 0)
        return (double)mm * (double)nn * (double)kk;
    static const char *const bytes[] = {"nbytes", "bytes", "out_nbytes"};
    for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
        int64_t b = sim_value_get_int(d, bytes[i], -1);
        if (b > 0)
            return (double)b;
    }
    double most = 0;
    const struct sim_value *shapes[3] = {sim_value_map_get(d, "input_shapes"), NULL, NULL};
    const struct sim_value *out = sim_value_map_get(d, "shape_out");
    for (int pass = 0; pass < 2; pass++) {
        const struct sim_value *l = pass ? out : shapes[0];
        if (!l || l->type != SIM_V_LIST)
            continue;
        /* a list of shapes, or one shape */
        bool nested = l->u.list.len && l->u.list.items[0]->type == SIM_V_LIST;
        for (size_t i = 0; i < (nested ? l->u.list.len : 1); i++) {
            const struct sim_value *sh = nested ? l->u.list.items[i] : l;
            double el = 1;
            for (size_t k = 0; k < sh->u.list.len; k++)
                el *= sh->u.list.items[k]->type == SIM_V_INT ? (double)sh->u.list.items[k]->u.i : 1;
            most = el > most ? el : most;
        }
    }
    return most;
}

double trace_anomaly_work_(const struct trace_model *m, uint64_t ev)
{
    struct sim_value *d = trace_model_event_details(m, ev);
    double w = d ? work_of(d) : 0;
    sim_value_free(d);
    return w;
}

/* Slow ops of one group by track, then by start. */
static int cmp_track_start(const void *pa, const void *pb)
{
    const struct trace_anomaly *a = pa, *b = pb;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* The slow ops of one op name and kind (g, emptied) into l, one entry per track: the
 * slowest of them, with how many there were and when the first and last started. */
static void merge_repeats(struct list *g, struct list *l)
{
    if (g->n > 1)
        qsort(g->v, g->n, sizeof(*g->v), cmp_track_start);
    for (size_t a = 0; a < g->n;) {
        size_t b = a, worst = a;
        while (b < g->n && g->v[b].track == g->v[a].track) {
            if (g->v[b].value > g->v[worst].value)
                worst = b;
            b++;
        }
        struct trace_anomaly x = g->v[worst];
        x.repeats = b - a;
        x.first = g->v[a].start;
        x.last = g->v[b - 1].start;
        trace_anomaly_push_(l, &x);
        a = b;
    }
    g->n = 0;
}

/* The k-th smallest of v[0..n) (v reordered). */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                uint64_t t = v[i];
                v[i] = v[j], v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

static int cmp_opdur_desc(const void *a, const void *b)
{
    return cmp_opdur(b, a);
}

/* The slow ops of one group (count ops, the median and the median op) from its candidates
 * (reordered), slowest first, into l: those slow per unit of work too, one entry per track. */
void trace_anomaly_slow_group_(
    const struct trace_model *m, const struct trace_anomaly_opts *o, size_t count, uint64_t median,
    uint64_t median_ev, struct opdur *cand, size_t nc, struct list *group, struct list *l,
    double (*work_of_event)(void *ctx, const struct trace_model *m, uint64_t ev), void *ctx)
{
    if (nc > 1)
        qsort(cand, nc, sizeof(*cand), cmp_opdur_desc);
    double median_work = -1; /* looked up with the first candidate */
    for (size_t c = 0; c < nc; c++) {
        uint64_t d = cand[c].dur;
        /* an op that did more work than the median one may take longer: compare the
         * cycles per unit of work when both say how much they did */
        if (median_work < 0)
            median_work = work_of_event ? work_of_event(ctx, m, median_ev)
                                        : trace_anomaly_work_(m, median_ev);
        double work = median_work <= 0 ? 0
                      : work_of_event  ? work_of_event(ctx, m, cand[c].ev)
                                       : trace_anomaly_work_(m, cand[c].ev),
               per_work = 0;
        if (work > 0) {
            per_work = median ? ((double)d / work) / ((double)median / median_work) : 0;
            if (median && !(per_work > o->slow_factor))
                continue;
        }
        const struct trace_event *e = trace_model_event(m, cand[c].ev);
        trace_anomaly_push_(group, &(struct trace_anomaly){.kind = TRACE_ANOMALY_SLOW_OP,
                                                           .start = e->start,
                                                           .end = e->start + d,
                                                           .event = cand[c].ev,
                                                           .track = e->track,
                                                           .marker = SIZE_MAX,
                                                           .value = (double)d,
                                                           .reference = (double)median,
                                                           .per_work = per_work,
                                                           .count = count,
                                                           .repeats = 1,
                                                           .first = e->start,
                                                           .last = e->start});
    }
    merge_repeats(group, l);
}

/* Bytes an op of the scratch that the slow ops (three uint64_t and a uint32_t an op) and
 * then the idle gaps (a struct uop and a uint32_t) use. */
#define SCRATCH_PER_OP (3 * sizeof(uint64_t) + sizeof(uint32_t))

/*
 * Slow ops. The ops are grouped by (op name, HOST track, engine kind) with a counting sort
 * (a few hundred groups), each group's median found by selection, and only the ops above
 * the threshold sorted: linear in the ops, as the sort of every op by duration it replaces
 * was not. The result is the same: groups in key order, candidates slowest first (the
 * later event first on a tie), the median op the one a sort by (duration, event) puts in
 * the middle.
 */
static void find_slow(const struct trace_model *m, const struct trace_anomaly_opts *o,
                      struct list *l, struct trace_progress *pg, uint64_t n, void *scratch)
{
    struct list group = {0};
    uint64_t *dur_ev = scratch;        /* each op's duration, by event */
    uint64_t *evs = dur_ev + n;        /* the ops by group, in order */
    uint64_t *dur = evs + n;           /* and their durations */
    uint32_t *gid = (void *)(dur + n); /* each op's group */
    struct sim_keytab kt = {0};
    /* the group of an op name on an engine kind but the host's, straight from a table */
    size_t nstr = trace_model_str_count(m);
    uint32_t *by_name =
        sim_xreallocarray(NULL, nstr ? nstr * TRACE_ENGINE_COUNT : 1, sizeof(*by_name));
    for (size_t k = 0; k < nstr * TRACE_ENGINE_COUNT; k++)
        by_name[k] = UINT32_MAX;
    trace_progress_step(pg, "anomalies: ops by name", n);
    for (uint64_t i = 0; i < n; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i)) {
            free(by_name);
            goto out_gid;
        }
        const struct trace_event *e = trace_model_event(m, i);
        uint64_t eng = (uint64_t)trace_model_track_get(m, e->track)->engine;
        uint32_t *slot = eng != TRACE_ENGINE_HOST && eng < TRACE_ENGINE_COUNT && e->op < nstr
                             ? &by_name[(size_t)e->op * TRACE_ENGINE_COUNT + eng]
                             : NULL;
        dur_ev[i] = trace_anomaly_ev_end_(m, e) - e->start;
        if (slot && *slot != UINT32_MAX) {
            gid[i] = *slot;
            continue;
        }
        /* a host message is a transfer on the host's link, then a service on an io_cpu:
         * two distributions of one name, told apart by their track */
        uint64_t where = eng == TRACE_ENGINE_HOST ? (uint64_t)e->track & 0xffffff : 0;
        gid[i] = sim_keytab_id(&kt, (uint64_t)e->op << 32 | where << 8 | eng);
        if (slot)
            *slot = gid[i];
    }
    free(by_name);
    size_t ng = kt.n;
    /* the groups in key order */
    uint64_t *keys = sim_xreallocarray(NULL, ng ? ng : 1, sizeof(*keys));
    uint32_t *rank = sim_xreallocarray(NULL, ng ? ng : 1, sizeof(*rank));
    for (size_t i = 0; i < kt.cap; i++)
        if (kt.key[i] != UINT64_MAX)
            keys[kt.id[i]] = kt.key[i];
    struct opdur *ok = sim_xreallocarray(NULL, ng ? ng : 1, sizeof(*ok));
    for (size_t g = 0; g < ng; g++)
        ok[g] = (struct opdur){keys[g], 0, g};
    qsort(ok, ng, sizeof(*ok), cmp_opdur);
    for (size_t g = 0; g < ng; g++)
        rank[ok[g].ev] = (uint32_t)g;
    free(ok);
    size_t *off = sim_xcalloc(ng + 1, sizeof(*off));
    for (uint64_t i = 0; i < n; i++)
        off[rank[gid[i]] + 1]++;
    for (size_t g = 0; g < ng; g++)
        off[g + 1] += off[g];
    size_t *pos = sim_xreallocarray(NULL, ng ? ng : 1, sizeof(*pos));
    memcpy(pos, off, ng * sizeof(*pos));
    for (uint64_t i = 0; i < n; i++) {
        size_t at = pos[rank[gid[i]]]++;
        evs[at] = i;
        dur[at] = dur_ev[i];
    }
    size_t most = 1; /* the most ops of a group */
    for (size_t g = 0; g < ng; g++)
        most = off[g + 1] - off[g] > most ? off[g + 1] - off[g] : most;
    uint64_t *tmp = sim_xreallocarray(NULL, most, sizeof(*tmp));
    struct opdur *cand = NULL;
    size_t ccap = 0;
    trace_progress_step(pg, "anomalies: slow ops", n);
    for (size_t g = 0; g < ng; g++) {
        size_t a = off[g], count = off[g + 1] - a;
        if (trace_progress_at(pg, a))
            break;
        if (count < o->slow_min_ops || !count)
            continue;
        memcpy(tmp, dur + a, count * sizeof(*tmp));
        size_t mid = (count - 1) / 2;
        uint64_t median = select_kth(tmp, count, mid);
        /* the median op: among those of the median's duration, in event order, the one at
         * the median's rank */
        size_t less = 0;
        for (size_t k = 0; k < count; k++)
            less += dur[a + k] < median;
        size_t want = mid - less, seen = 0;
        uint64_t median_ev = UINT64_MAX;
        size_t nc = 0;
        for (size_t k = 0; k < count; k++) {
            uint64_t d = dur[a + k];
            if (d == median && seen++ == want)
                median_ev = evs[a + k];
            if (d < o->slow_min_cycles || !((double)d > o->slow_factor * (double)median))
                continue;
            if (nc == ccap) {
                ccap = ccap ? 2 * ccap : 64;
                cand = sim_xreallocarray(cand, ccap, sizeof(*cand));
            }
            cand[nc++] = (struct opdur){0, d, evs[a + k]};
        }
        trace_anomaly_slow_group_(m, o, count, median, median_ev, cand, nc, &group, l, NULL, NULL);
    }
    free(cand);
    free(tmp);
    free(pos);
    free(off);
    free(rank);
    free(keys);
out_gid:
    sim_keytab_free(&kt);
    free(group.v);
}

/* An op of the idle-gap sweep: its span. */
struct uop {
    uint64_t s, e, ev;
};

/* A launch of the idle-gap sweep: its cmdq_id and its group in the key table. */
struct launch {
    int32_t cmdq;
    uint32_t id;
};

static int cmp_launch(const void *a, const void *b)
{
    const struct launch *x = a, *y = b;
    return x->cmdq < y->cmdq ? -1 : x->cmdq > y->cmdq;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The gaps of one launch, its ops [a, b) of v: those above the threshold. */
static void idle_group(const struct trace_anomaly_opts *o, const struct uop *v, size_t a, size_t b,
                       const struct trace_model *m, struct list *l, uint64_t *len)
{
    size_t ng = 0;
    uint64_t busy_end = v[a].e;
    for (size_t k = a + 1; k < b; k++) {
        if (v[k].s > busy_end)
            len[ng++] = v[k].s - busy_end;
        busy_end = v[k].e > busy_end ? v[k].e : busy_end;
    }
    if (!ng)
        return;
    qsort(len, ng, sizeof(*len), cmp_u64);
    uint64_t median = len[(ng - 1) / 2];
    double limit = ng >= o->idle_min_gaps ? o->idle_factor * (double)median : 0;
    busy_end = v[a].e;
    for (size_t k = a + 1; k < b; k++) {
        if (v[k].s > busy_end) {
            uint64_t d = v[k].s - busy_end;
            if (d >= o->idle_min_cycles && (double)d > limit)
                trace_anomaly_push_(
                    l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_IDLE_GAP,
                                               .start = busy_end,
                                               .end = v[k].s,
                                               .event = v[k].ev,
                                               .track = trace_model_event(m, v[k].ev)->track,
                                               .marker = SIZE_MAX,
                                               .value = (double)d,
                                               .reference = (double)median,
                                               .count = ng});
        }
        busy_end = v[k].e > busy_end ? v[k].e : busy_end;
    }
}

/* Launches of which nothing ran for long between two of their ops; the host, which waits
 * for its launches by design, is left out. */
static void find_idle(const struct trace_model *m, const struct trace_anomaly_opts *o,
                      struct list *l, struct trace_progress *pg, uint64_t n, void *scratch)
{
    struct uop *v = scratch, *owned = NULL;
    uint32_t *cid = (void *)(v + n); /* each op's launch */
    size_t nv = 0;
    struct sim_keytab kt = {0};
    int32_t last = 0;
    uint32_t last_id = UINT32_MAX; /* a launch's ops come in runs: its group, remembered */
    trace_progress_step(pg, "anomalies: idle gaps", n);
    for (uint64_t i = 0; i < n; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i)) {
            sim_keytab_free(&kt);
            return;
        }
        const struct trace_event *e = trace_model_event(m, i);
        if (trace_model_track_get(m, e->track)->engine == TRACE_ENGINE_HOST)
            continue;
        if (last_id == UINT32_MAX || e->cmdq_id != last) {
            last = e->cmdq_id;
            last_id = sim_keytab_id(&kt, (uint64_t)(uint32_t)e->cmdq_id);
        }
        cid[nv] = last_id;
        v[nv++] = (struct uop){e->start, trace_anomaly_ev_end_(m, e), i};
    }
    /* by (cmdq_id, start, event): the ops come in event order; grouped by launch, then
     * each launch's ops sorted by start with the stable radix sort (a launch's ops fit in
     * the cache, where a sort of all of them by start scattered them over memory) */
    size_t nc = kt.n;
    struct launch *ids = sim_xreallocarray(NULL, nc ? nc : 1, sizeof(*ids));
    for (size_t i = 0; i < kt.cap; i++)
        if (kt.key[i] != UINT64_MAX)
            ids[kt.id[i]] = (struct launch){(int32_t)(uint32_t)kt.key[i], kt.id[i]};
    qsort(ids, nc, sizeof(*ids), cmp_launch);
    /* each launch's ops at [first, first + count) of v, in the order of their cmdq_ids;
     * when each launch's ops come in one run (as a run writes them), v is that already */
    size_t *first = sim_xreallocarray(NULL, nc ? nc : 1, sizeof(*first));
    size_t *count = sim_xcalloc(nc ? nc : 1, sizeof(*count));
    size_t runs = 0;
    for (size_t k = 0; k < nv; k++) {
        if (k == 0 || cid[k] != cid[k - 1])
            runs++, first[cid[k]] = k;
        count[cid[k]]++;
    }
    if (runs > nc) { /* launches interleaved: a stable counting sort by launch */
        size_t at = 0;
        for (size_t c = 0; c < nc; c++)
            first[ids[c].id] = at, at += count[ids[c].id];
        struct uop *w = sim_xreallocarray(NULL, nv ? nv : 1, sizeof(*w));
        size_t *pos = sim_xreallocarray(NULL, nc ? nc : 1, sizeof(*pos));
        memcpy(pos, first, nc * sizeof(*pos));
        for (size_t k = 0; k < nv; k++)
            w[pos[cid[k]]++] = v[k];
        free(pos);
        v = owned = w;
    }
    sim_keytab_free(&kt);
    for (size_t c = 0; c < nc; c++)
        trace_radix_sort(v + first[c], count[c], sizeof(*v), offsetof(struct uop, s));
    size_t most = 1; /* the most ops of a launch */
    for (size_t c = 0; c < nc; c++)
        most = count[c] > most ? count[c] : most;
    uint64_t *len = sim_xreallocarray(NULL, most, sizeof(*len));
    for (size_t c = 0; c < nc; c++) {
        size_t a = first[ids[c].id];
        idle_group(o, v, a, a + count[ids[c].id], m, l, len);
    }
    free(len);
    free(ids);
    free(first);
    free(count);
    free(owned);
}

void trace_anomaly_find_bandwidth_(const struct trace_model *m, const struct trace_anomaly_opts *o,
                                   double peak, struct trace_progress *pg, struct list *l)
{
    if (!(peak > 0))
        return;
    struct trace_bw_sample *s = NULL;
    size_t n = trace_metrics_bandwidth_at(m, o->bw_window, &s, pg);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = s[i].window ? s[i].window : 1;
        double rate = (double)(s[i].read_bytes + s[i].write_bytes) / (double)w;
        if (rate > peak * (1 + 1e-9))
            trace_anomaly_push_(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_BANDWIDTH,
                                                           .start = s[i].cycle,
                                                           .end = s[i].cycle + w,
                                                           .event = UINT64_MAX,
                                                           .track = UINT32_MAX,
                                                           .marker = SIZE_MAX,
                                                           .value = rate,
                                                           .reference = peak});
    }
    free(s);
}

/* ---- ordering ---------------------------------------------------------------------------- */

static double severity(const struct trace_anomaly *a)
{
    return a->reference > 0 ? a->value / a->reference : a->value;
}

/* Most severe first; ties in time order. */
static int cmp_severity(const void *pa, const void *pb)
{
    const struct trace_anomaly *a = pa, *b = pb;
    double x = severity(a), y = severity(b);
    if (x != y)
        return x > y ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

int trace_anomaly_cmp_time_(const void *pa, const void *pb)
{
    const struct trace_anomaly *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    return a->event < b->event ? -1 : a->event > b->event;
}

/* Keep the most severe max of l's anomalies, appended to out. */
void trace_anomaly_keep_(struct list *out, struct list *l, size_t max)
{
    if (max && l->n > max)
        qsort(l->v, l->n, sizeof(*l->v), cmp_severity);
    for (size_t i = 0; i < l->n && (!max || i < max); i++)
        trace_anomaly_push_(out, &l->v[i]);
    free(l->v);
    *l = (struct list){0};
}

/* The bandwidth windows found on a thread of their own (trace_anomalies_find), with a
 * progress of their own (the caller's says what the caller does), cancelled with the
 * caller's. */
struct bw_job {
    const struct trace_model *m;
    const struct trace_anomaly_opts *o;
    double peak;
    struct trace_progress p;
    struct list l;
};

static void *bw_main(void *arg)
{
    struct bw_job *j = arg;
    trace_anomaly_find_bandwidth_(j->m, j->o, j->peak, &j->p, &j->l);
    return NULL;
}

void trace_anomalies_find(const struct trace_model *m, const struct trace_anomaly_opts *o,
                          struct trace_anomalies *out)
{
    struct trace_anomaly_opts dflt;
    if (!o) {
        trace_anomaly_opts_default(&dflt);
        o = &dflt;
    }
    memset(out, 0, sizeof(*out));
    out->bw_peak = o->bw_peak > 0 ? o->bw_peak : trace_dram_peak(m);
    struct list all = {0}, one = {0};
    /* the slow ops' arrays of an op, then the idle gaps' in the same pages, mapped once */
    uint64_t n = trace_model_event_count(m);
    void *scratch = sim_xreallocarray(NULL, n ? n : 1, SCRATCH_PER_OP);
    /* on two cores: the bandwidth windows (a quarter of the work at ten million events, a
     * pass of the transfers of their own) beside the rest, and the scratch's fresh pages
     * faulted in ahead of the slow ops' first pass over it */
    bool two = o->threads == 2 || (o->threads != 1 && n >= TRACE_ANOMALY_THREAD_MIN);
    struct bw_job bw = {.m = m, .o = o, .peak = out->bw_peak, .p.parent = o->progress};
    pthread_t th;
    bool apart = two && pthread_create(&th, NULL, bw_main, &bw) == 0;
    struct sim_prefault pf = {.r = {{scratch, n * SCRATCH_PER_OP}}, .nr = 1};
    if (apart)
        sim_prefault_start(&pf);
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++) {
        switch (k) {
        case TRACE_ANOMALY_INVALID: trace_anomaly_find_invalid_(m, &one); break;
        case TRACE_ANOMALY_SLOW_OP: find_slow(m, o, &one, o->progress, n, scratch); break;
        case TRACE_ANOMALY_IDLE_GAP: find_idle(m, o, &one, o->progress, n, scratch); break;
        default:
            if (apart) {
                sim_prefault_stop(&pf);
                pthread_join(th, NULL);
                one = bw.l;
            } else {
                trace_anomaly_find_bandwidth_(m, o, out->bw_peak, o->progress, &one);
            }
            break;
        }
        out->found[k] = one.n;
        trace_anomaly_keep_(&all, &one, k == TRACE_ANOMALY_INVALID ? 0 : o->max_per_kind);
    }
    free(scratch);
    if (all.n)
        qsort(all.v, all.n, sizeof(*all.v),
              trace_anomaly_cmp_time_); /* cancelled: incomplete, but valid */
    out->v = all.v;
    out->n = all.n;
}

void trace_anomalies_fini(struct trace_anomalies *a)
{
    free(a->v);
    memset(a, 0, sizeof(*a));
}

/* ---- words ---------------------------------------------------------------------------- */

static const char *track_name(const struct trace_model *m, uint32_t t)
{
    return t < trace_model_track_count(m) ? trace_model_str(m, trace_model_track_get(m, t)->name)
                                          : "";
}

/* "; 2951 times from cycle A to B, once per decode token" for a repeated slow op: per
 * token when the repeats are a whole multiple of the tokens (or of the decode tokens). */
static void repeats_text(const struct trace_model *m, const struct trace_anomaly *a, char *buf,
                         size_t size)
{
    size_t ntok = trace_model_token_count(m), ndec = 0;
    for (size_t i = 0; i < ntok; i++)
        ndec += trace_model_token(m, i)->decode;
    const char *per = NULL;
    uint64_t times = 0;
    if (ntok && a->repeats % ntok == 0) {
        per = "token";
        times = a->repeats / ntok;
    } else if (ndec && a->repeats % ndec == 0) {
        per = "decode token";
        times = a->repeats / ndec;
    }
    int k =
        snprintf(buf, size, "; %llu times from cycle %llu to %llu", (unsigned long long)a->repeats,
                 (unsigned long long)a->first, (unsigned long long)a->last);
    if (!per || k < 0 || (size_t)k >= size)
        return;
    if (times == 1)
        snprintf(buf + k, size - (size_t)k, ", once per %s", per);
    else
        snprintf(buf + k, size - (size_t)k, ", %llu per %s", (unsigned long long)times, per);
}

char *trace_anomaly_describe(const struct trace_model *m, const struct trace_anomaly *a, char *buf,
                             size_t size)
{
    double ratio = a->reference > 0 ? a->value / a->reference : 0;
    switch (a->kind) {
    case TRACE_ANOMALY_INVALID: {
        const char *err = trace_invalid_error(m, a->marker);
        const char *where = track_name(m, a->track);
        snprintf(buf, size, "%s%s%s: %s", TRACE_INVALID_MARKER, where[0] ? " on " : "", where,
                 err ? err : "the run met a failure (no error given)");
        break;
    }
    case TRACE_ANOMALY_SLOW_OP: {
        const struct trace_event *e = trace_model_event(m, a->event);
        const struct trace_track *t = trace_model_track_get(m, e->track);
        int k = snprintf(buf, size, "%s on %s: %.0f cycles, %.1fx the median %.0f of %llu %s ops",
                         trace_model_str(m, e->op), trace_model_str(m, t->name), a->value, ratio,
                         a->reference, (unsigned long long)a->count, trace_engine_name(t->engine));
        if (a->per_work > 0 && k > 0 && (size_t)k < size)
            k += snprintf(buf + k, size - (size_t)k, " (%.1fx per unit of work)", a->per_work);
        if (a->repeats > 1 && k > 0 && (size_t)k < size)
            repeats_text(m, a, buf + k, size - (size_t)k);
        break;
    }
    case TRACE_ANOMALY_IDLE_GAP: {
        const struct trace_event *e = trace_model_event(m, a->event);
        char launch[48] = "ops without a launch";
        if (e->cmdq_id != TRACE_NO_CMDQ)
            snprintf(launch, sizeof(launch), "launch cmdq %d", (int)e->cmdq_id);
        snprintf(buf, size,
                 "%s: nothing ran for %.0f cycles (%.1fx its median gap %.0f), then %s on %s",
                 launch, a->value, ratio, a->reference, trace_model_str(m, e->op),
                 track_name(m, e->track));
        break;
    }
    default:
        snprintf(buf, size, "DRAM %.1f bytes/cycle over [%llu, %llu), %.0f%% of the peak %.1f",
                 a->value, (unsigned long long)a->start, (unsigned long long)a->end, ratio * 100,
                 a->reference);
        break;
    }
    return buf;
}
