/*
 * Anomalies of a trace (see anomaly.h): slow ops by sorting the ops by (engine kind, op
 * name, duration); idle gaps by walking each engine track's ops in start order; bandwidth
 * windows from the same samples as the summary's; INVALID_TRACE markers as they are.
 */
#include "trace/anomaly.h"

#include "sim/data/value.h"
#include "sim/util/xalloc.h"
#include "trace/metrics.h"

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

struct list {
    struct trace_anomaly *v; /* owned */
    size_t n, cap;
};

static void push(struct list *l, const struct trace_anomaly *a)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = sim_xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    l->v[l->n++] = *a;
}

static uint64_t ev_end(const struct trace_model *m, const struct trace_event *ev)
{
    if (ev->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(m);
        return now > ev->start ? now : ev->start;
    }
    return ev->end;
}

static void find_invalid(const struct trace_model *m, struct list *l)
{
    for (size_t i = 0; i < trace_model_marker_count(m); i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        if (is_invalid(m, k))
            push(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_INVALID,
                                            .start = k->cycle,
                                            .end = k->cycle,
                                            .event = UINT64_MAX,
                                            .track = k->track,
                                            .marker = i});
    }
}

/* An op by (engine kind, op name) and duration. */
struct opdur {
    uint64_t key; /* op name << 8 | engine kind */
    uint64_t dur;
    uint64_t ev;
};

static int cmp_opdur(const void *a, const void *b)
{
    const struct opdur *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur < y->dur ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static void find_slow(const struct trace_model *m, const struct trace_anomaly_opts *o,
                      struct list *l)
{
    uint64_t n = trace_model_event_count(m);
    struct opdur *v = sim_xreallocarray(NULL, n ? n : 1, sizeof(*v));
    for (uint64_t i = 0; i < n; i++) {
        const struct trace_event *e = trace_model_event(m, i);
        uint64_t eng = (uint64_t)trace_model_track_get(m, e->track)->engine;
        v[i] = (struct opdur){(uint64_t)e->op << 8 | eng, ev_end(m, e) - e->start, i};
    }
    qsort(v, n, sizeof(*v), cmp_opdur);
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i;
        while (j < n && v[j].key == v[i].key)
            j++;
        uint64_t count = j - i, median = v[i + (count - 1) / 2].dur;
        /* the group is sorted by duration: the slow ones are at its end */
        for (uint64_t k = j; count >= o->slow_min_ops && k-- > i;) {
            uint64_t d = v[k].dur;
            if (d < o->slow_min_cycles || !((double)d > o->slow_factor * (double)median))
                break;
            const struct trace_event *e = trace_model_event(m, v[k].ev);
            push(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_SLOW_OP,
                                            .start = e->start,
                                            .end = e->start + d,
                                            .event = v[k].ev,
                                            .track = e->track,
                                            .marker = SIZE_MAX,
                                            .value = (double)d,
                                            .reference = (double)median,
                                            .count = count});
        }
        i = j;
    }
    free(v);
}

/* A gap on a track: its length, and the op after it. */
struct gap {
    uint64_t s, e;
    uint64_t next;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void find_idle(const struct trace_model *m, const struct trace_anomaly_opts *o,
                      struct list *l)
{
    struct gap *g = NULL;
    uint64_t *len = NULL;
    size_t cap = 0;
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        enum trace_engine eng = trace_model_track_get(m, t)->engine;
        if (eng != TRACE_ENGINE_DMA && eng != TRACE_ENGINE_TE && eng != TRACE_ENGINE_VE)
            continue; /* the host and CPUs wait for others by design */
        const uint64_t *idx;
        size_t n = trace_model_track_events(m, t, &idx), ng = 0;
        if (n + 1 > cap) {
            cap = n + 1;
            g = sim_xreallocarray(g, cap, sizeof(*g));
            len = sim_xreallocarray(len, cap, sizeof(*len));
        }
        /* gaps between the merged busy intervals, where the op that ended last before the
         * gap and the op after it belong to the same launch */
        uint64_t busy_end = 0;
        int32_t last_cmdq = TRACE_NO_CMDQ;
        for (size_t k = 0; k < n; k++) {
            const struct trace_event *e = trace_model_event(m, idx[k]);
            uint64_t end = ev_end(m, e);
            if (k > 0 && e->start > busy_end && e->cmdq_id == last_cmdq)
                g[ng++] = (struct gap){busy_end, e->start, idx[k]};
            if (k == 0 || end >= busy_end) {
                busy_end = end;
                last_cmdq = e->cmdq_id;
            }
        }
        if (ng < o->idle_min_gaps)
            continue;
        for (size_t k = 0; k < ng; k++)
            len[k] = g[k].e - g[k].s;
        qsort(len, ng, sizeof(*len), cmp_u64);
        uint64_t median = len[(ng - 1) / 2];
        for (size_t k = 0; k < ng; k++) {
            uint64_t d = g[k].e - g[k].s;
            if (d < o->idle_min_cycles || !((double)d > o->idle_factor * (double)median))
                continue;
            push(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_IDLE_GAP,
                                            .start = g[k].s,
                                            .end = g[k].e,
                                            .event = g[k].next,
                                            .track = t,
                                            .marker = SIZE_MAX,
                                            .value = (double)d,
                                            .reference = (double)median,
                                            .count = ng});
        }
    }
    free(g);
    free(len);
}

static void find_bandwidth(const struct trace_model *m, const struct trace_anomaly_opts *o,
                           double peak, struct list *l)
{
    if (!(peak > 0))
        return;
    struct trace_bw_sample *s = NULL;
    size_t n = trace_metrics_bandwidth(m, o->bw_window, &s);
    for (size_t i = 0; i < n; i++) {
        uint64_t w = s[i].window ? s[i].window : 1;
        double rate = (double)(s[i].read_bytes + s[i].write_bytes) / (double)w;
        if (rate > peak * (1 + 1e-9))
            push(l, &(struct trace_anomaly){.kind = TRACE_ANOMALY_BANDWIDTH,
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

static int cmp_time(const void *pa, const void *pb)
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
static void keep(struct list *out, struct list *l, size_t max)
{
    if (max && l->n > max)
        qsort(l->v, l->n, sizeof(*l->v), cmp_severity);
    for (size_t i = 0; i < l->n && (!max || i < max); i++)
        push(out, &l->v[i]);
    free(l->v);
    *l = (struct list){0};
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
    for (int k = 0; k < TRACE_ANOMALY_KIND_COUNT; k++) {
        switch (k) {
        case TRACE_ANOMALY_INVALID: find_invalid(m, &one); break;
        case TRACE_ANOMALY_SLOW_OP: find_slow(m, o, &one); break;
        case TRACE_ANOMALY_IDLE_GAP: find_idle(m, o, &one); break;
        default: find_bandwidth(m, o, out->bw_peak, &one); break;
        }
        out->found[k] = one.n;
        keep(&all, &one, k == TRACE_ANOMALY_INVALID ? 0 : o->max_per_kind);
    }
    if (all.n)
        qsort(all.v, all.n, sizeof(*all.v), cmp_time);
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
        snprintf(buf, size, "%s on %s: %.0f cycles, %.1fx the median %.0f of %llu %s ops",
                 trace_model_str(m, e->op), trace_model_str(m, t->name), a->value, ratio,
                 a->reference, (unsigned long long)a->count, trace_engine_name(t->engine));
        break;
    }
    case TRACE_ANOMALY_IDLE_GAP: {
        const struct trace_event *e = trace_model_event(m, a->event);
        char launch[48] = "";
        if (e->cmdq_id != TRACE_NO_CMDQ)
            snprintf(launch, sizeof(launch), " of launch cmdq %d", (int)e->cmdq_id);
        snprintf(buf, size, "%s idle %.0f cycles between two ops%s, %.1fx its median gap %.0f",
                 track_name(m, a->track), a->value, launch, ratio, a->reference);
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
