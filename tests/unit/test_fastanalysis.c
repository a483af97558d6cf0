/* The fast analyses against computations from scratch by their definitions (trace/FORMAT.md),
 * at several steps of a growing model (a run that goes on, finished after each step): the
 * slow ops and idle gaps of trace/verdict/anomaly.h (grouped with a counting sort and a
 * selection rather than a sort of every op), the tokens' bytes of trace/analysis/tokens.h
 * (breakpoints radix-sorted), the launch split alone and the light accounting of
 * trace/analysis/regions.h against the full one; and that a cancelled analysis returns at
 * once with something that can be freed (trace/model/progress.h). */
#include "trace/analysis/regions.h"
#include "trace/analysis/tokens.h"
#include "trace/model/model.h"
#include "trace/model/progress.h"
#include "trace/verdict/anomaly.h"
#include "trace/verdict/critpath.h"
#include "trace/verdict/verdict.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A deterministic generator (xorshift), so that failures reproduce. */
static uint64_t rng_state;
static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

enum { NTRACKS = 6, NNAMES = 5 };

struct run {
    struct trace_model *m;
    uint32_t tracks[NTRACKS];
    uint32_t names[NNAMES];
    uint64_t t[NTRACKS]; /* each track's time so far */
    int32_t cmdq;
};

static void run_init(struct run *r)
{
    r->m = trace_model_new();
    static const enum trace_engine eng[NTRACKS] = {TRACE_ENGINE_DMA,  TRACE_ENGINE_DMA,
                                                   TRACE_ENGINE_TE,   TRACE_ENGINE_VE,
                                                   TRACE_ENGINE_HOST, TRACE_ENGINE_HOST};
    static const char *const tn[NTRACKS] = {"sip0.cube0.pe0.pe_dma",
                                            "sip0.cube0.pe1.pe_dma",
                                            "sip0.cube0.pe0.pe_gemm",
                                            "sip0.cube0.pe0.pe_math",
                                            "host",
                                            "sip0.io_cpu"};
    static const char *const on[NNAMES] = {"dma_read", "dma_write", "gemm", "add", "MemoryWrite"};
    for (int i = 0; i < NTRACKS; i++)
        r->tracks[i] = trace_model_track(r->m, tn[i], eng[i], 0);
    for (int i = 0; i < NNAMES; i++)
        r->names[i] = trace_model_intern(r->m, on[i], strlen(on[i]));
    memset(r->t, 0, sizeof(r->t));
    r->cmdq = 1;
}

/* n more ops: durations mostly alike with a few far slower, gaps now and then, a new
 * launch every few hundred ops, DRAM transfers on the DMA tracks, a token every 100. */
static void run_grow(struct run *r, int n)
{
    for (int i = 0; i < n; i++) {
        int k = (int)rnd(NTRACKS);
        uint64_t dur = 20 + rnd(10);
        if (rnd(50) == 0)
            dur *= 10 + rnd(5); /* slow */
        uint64_t gap = rnd(40) == 0 ? 500 + rnd(2000) : rnd(3);
        if (rnd(300) == 0)
            r->cmdq++;
        uint64_t s = r->t[k] + gap;
        struct trace_event ev = {.start = s,
                                 .end = s + dur,
                                 .track = r->tracks[k],
                                 .op = r->names[(k + (int)rnd(2)) % NNAMES],
                                 .cmdq_id = r->cmdq,
                                 .layer = TRACE_NO_STR};
        uint64_t e = trace_model_add_event(r->m, &ev);
        if (k < 2)
            trace_model_add_transfer(r->m, &(struct trace_transfer){
                                               .bytes = 64 + rnd(4096),
                                               .event = (uint32_t)e,
                                               .flags = (uint32_t)rnd(4),
                                           });
        r->t[k] = s + dur;
        if (trace_model_event_count(r->m) % 100 == 0) {
            uint64_t ts = s > 300 ? s - 300 : 0;
            trace_model_add_token(r->m, &(struct trace_token){.start = ts,
                                                              .end = s + rnd(200),
                                                              .token_index = (int64_t)e,
                                                              .decode = e > 200});
        }
    }
    trace_model_finish(r->m);
}

/* ---- slow ops and idle gaps from scratch ------------------------------------------------- */

struct ref_op {
    uint64_t key, dur, ev;
};

static int cmp_ref_op(const void *a, const void *b)
{
    const struct ref_op *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur < y->dur ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* Per op, whether it is slow by the definition (its median and group size in median[],
 * count[]): its group (op name, engine kind, the track for HOST) sorted by (duration,
 * event), the median the middle one; the op at least the minimum cycles and above factor x
 * the median, in a group of at least the minimum ops. The details say nothing of work
 * here. Returns how many are slow. */
static uint64_t ref_slow(const struct trace_model *m, const struct trace_anomaly_opts *o,
                         bool *slow, uint64_t *median, uint64_t *count)
{
    uint64_t n = trace_model_event_count(m), nslow = 0;
    struct ref_op *v = calloc(n, sizeof(*v));
    for (uint64_t i = 0; i < n; i++) {
        const struct trace_event *e = trace_model_event(m, i);
        uint64_t eng = trace_model_track_get(m, e->track)->engine;
        uint64_t where = eng == TRACE_ENGINE_HOST ? e->track : 0;
        v[i] = (struct ref_op){(uint64_t)e->op << 32 | where << 8 | eng, e->end - e->start, i};
    }
    qsort(v, n, sizeof(*v), cmp_ref_op);
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i;
        while (j < n && v[j].key == v[i].key)
            j++;
        uint64_t med = v[i + (j - i - 1) / 2].dur;
        for (uint64_t k = i; k < j; k++) {
            median[v[k].ev] = med;
            count[v[k].ev] = j - i;
            slow[v[k].ev] = j - i >= o->slow_min_ops && v[k].dur >= o->slow_min_cycles &&
                            (double)v[k].dur > o->slow_factor * (double)med;
            nslow += slow[v[k].ev];
        }
        i = j;
    }
    free(v);
    return nslow;
}

static void check_slow(const struct trace_model *m, const struct trace_anomalies *a,
                       const struct trace_anomaly_opts *o)
{
    /* every entry: its op slow by the definition, with its median and count; the slow ops
     * of each (name, kind, track) group counted in repeats, so they add up */
    uint64_t n = trace_model_event_count(m), listed = 0;
    bool *slow = calloc(n, sizeof(*slow));
    uint64_t *median = calloc(n, sizeof(*median)), *count = calloc(n, sizeof(*count));
    uint64_t nslow = ref_slow(m, o, slow, median, count);
    for (size_t i = 0; i < a->n; i++) {
        const struct trace_anomaly *x = &a->v[i];
        if (x->kind != TRACE_ANOMALY_SLOW_OP)
            continue;
        cr_assert(slow[x->event], "event %llu is not slow", (unsigned long long)x->event);
        cr_assert_float_eq(x->reference, (double)median[x->event], 1e-9);
        cr_assert_eq(x->count, count[x->event]);
        listed += x->repeats;
    }
    cr_assert_eq(listed, nslow, "%llu slow ops listed, %llu by the definition",
                 (unsigned long long)listed, (unsigned long long)nslow);
    free(slow), free(median), free(count);
}

struct ref_gap {
    uint64_t start, end;
};

/* The idle gaps of every launch above the threshold, by the definition, in no order. */
static size_t ref_gaps(const struct trace_model *m, const struct trace_anomaly_opts *o,
                       struct ref_gap *out)
{
    size_t nout = 0;
    uint64_t n = trace_model_event_count(m);
    int32_t seen[4096];
    size_t nseen = 0;
    for (uint64_t i = 0; i < n; i++) {
        int32_t c = trace_model_event(m, i)->cmdq_id;
        bool known = false;
        for (size_t j = 0; j < nseen && !known; j++)
            known = seen[j] == c;
        if (known)
            continue;
        seen[nseen++] = c;
        /* the launch's non-host ops by (start, event): selection sort is fine here */
        uint64_t *ev = calloc(n, sizeof(*ev));
        size_t k = 0;
        for (uint64_t j = 0; j < n; j++) {
            const struct trace_event *e = trace_model_event(m, j);
            if (e->cmdq_id == c && trace_model_track_get(m, e->track)->engine != TRACE_ENGINE_HOST)
                ev[k++] = j;
        }
        for (size_t a = 0; a < k; a++)
            for (size_t b = a + 1; b < k; b++)
                if (trace_model_event(m, ev[b])->start < trace_model_event(m, ev[a])->start) {
                    uint64_t t = ev[a];
                    ev[a] = ev[b], ev[b] = t;
                }
        uint64_t *len = calloc(k + 1, sizeof(*len));
        size_t ng = 0;
        uint64_t busy_end = k ? trace_model_event(m, ev[0])->end : 0;
        for (size_t a = 1; a < k; a++) {
            const struct trace_event *e = trace_model_event(m, ev[a]);
            if (e->start > busy_end)
                len[ng++] = e->start - busy_end;
            busy_end = e->end > busy_end ? e->end : busy_end;
        }
        if (ng) {
            for (size_t a = 0; a < ng; a++)
                for (size_t b = a + 1; b < ng; b++)
                    if (len[b] < len[a]) {
                        uint64_t t = len[a];
                        len[a] = len[b], len[b] = t;
                    }
            uint64_t median = len[(ng - 1) / 2];
            double limit = ng >= o->idle_min_gaps ? o->idle_factor * (double)median : 0;
            busy_end = trace_model_event(m, ev[0])->end;
            for (size_t a = 1; a < k; a++) {
                const struct trace_event *e = trace_model_event(m, ev[a]);
                if (e->start > busy_end) {
                    uint64_t d = e->start - busy_end;
                    if (d >= o->idle_min_cycles && (double)d > limit)
                        out[nout++] = (struct ref_gap){busy_end, e->start};
                }
                busy_end = e->end > busy_end ? e->end : busy_end;
            }
        }
        free(len);
        free(ev);
    }
    return nout;
}

static void check_gaps(const struct trace_model *m, const struct trace_anomalies *a,
                       const struct trace_anomaly_opts *o)
{
    struct ref_gap *g = calloc(trace_model_event_count(m) + 1, sizeof(*g));
    size_t ng = ref_gaps(m, o, g), listed = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct trace_anomaly *x = &a->v[i];
        if (x->kind != TRACE_ANOMALY_IDLE_GAP)
            continue;
        listed++;
        bool found = false;
        for (size_t j = 0; j < ng && !found; j++)
            found = g[j].start == x->start && g[j].end == x->end;
        cr_assert(found, "gap %llu..%llu is not one by the definition",
                  (unsigned long long)x->start, (unsigned long long)x->end);
    }
    cr_assert_eq(listed, ng, "%zu gaps listed, %zu by the definition", listed, ng);
    free(g);
}

Test(fastanalysis, anomalies_equal_the_definition_as_the_model_grows)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    struct run r;
    run_init(&r);
    struct trace_anomaly_opts o;
    trace_anomaly_opts_default(&o);
    o.max_per_kind = 0; /* every one listed */
    size_t slow_seen = 0, gaps_seen = 0;
    for (int step = 0; step < 4; step++) {
        run_grow(&r, 400 << step);
        struct trace_anomalies a;
        trace_anomalies_find(r.m, &o, &a);
        check_slow(r.m, &a, &o);
        check_gaps(r.m, &a, &o);
        slow_seen += a.found[TRACE_ANOMALY_SLOW_OP];
        gaps_seen += a.found[TRACE_ANOMALY_IDLE_GAP];
        trace_anomalies_fini(&a);
    }
    cr_assert(slow_seen > 0 && gaps_seen > 0, "the runs have slow ops (%zu) and gaps (%zu)",
              slow_seen, gaps_seen);
    trace_model_free(r.m);
}

/* ---- tokens' bytes from scratch ---------------------------------------------------------- */

Test(fastanalysis, token_bytes_equal_the_definition_as_the_model_grows)
{
    rng_state = 12345;
    struct run r;
    run_init(&r);
    for (int step = 0; step < 4; step++) {
        run_grow(&r, 500 << step);
        struct trace_token_profile p;
        trace_token_profile_compute(r.m, &p);
        cr_assert_eq(p.n, trace_model_token_count(r.m));
        for (size_t i = 0; i < p.n; i++) {
            const struct trace_token_row *row = &p.rows[i];
            /* each transfer's bytes in proportion to the part of its span inside the token */
            double rd = 0, wr = 0;
            for (size_t x = 0; x < trace_model_transfer_count(r.m); x++) {
                const struct trace_transfer *t = trace_model_transfer(r.m, x);
                const struct trace_event *e = trace_model_event(r.m, t->event);
                uint64_t a = e->start > row->start ? e->start : row->start;
                uint64_t b = e->end < row->end ? e->end : row->end;
                if (b <= a)
                    continue;
                double part = (double)t->bytes * (double)(b - a) / (double)(e->end - e->start);
                *(t->flags & TRACE_XFER_WRITE ? &wr : &rd) += part;
            }
            cr_assert(fabs((double)row->read_bytes - rd) <= 1.0,
                      "token %zu: read %llu, by the "
                      "definition %.1f",
                      i, (unsigned long long)row->read_bytes, rd);
            cr_assert(fabs((double)row->write_bytes - wr) <= 1.0,
                      "token %zu: written %llu, by "
                      "the definition %.1f",
                      i, (unsigned long long)row->write_bytes, wr);
        }
        trace_token_profile_fini(&p);
    }
    trace_model_free(r.m);
}

/* ---- regions: the split alone, the light accounting ------------------------------------- */

Test(fastanalysis, launch_split_and_light_accounting_equal_the_full_one)
{
    rng_state = 777;
    struct run r;
    run_init(&r);
    for (int step = 0; step < 3; step++) {
        run_grow(&r, 1000 << step);
        struct trace_regions *full = trace_regions_new(r.m, TRACE_REGION_LAUNCH);
        struct trace_regions *split = trace_regions_new_split(r.m, TRACE_REGION_LAUNCH);
        struct trace_regions *light = trace_regions_new_light(r.m, TRACE_REGION_LAUNCH, NULL);
        size_t n = trace_regions_count(full);
        cr_assert(n > 1);
        cr_assert_eq(trace_regions_count(split), n);
        cr_assert_eq(trace_regions_count(light), n);
        for (size_t i = 0; i < n; i++) {
            const struct trace_region *f = trace_regions_get(full, i);
            const struct trace_region *s = trace_regions_get(split, i);
            const struct trace_region *l = trace_regions_get(light, i);
            cr_assert_str_eq(s->name, f->name);
            cr_assert_eq(s->cmdq_id, f->cmdq_id);
            cr_assert_eq(s->occurrence, f->occurrence);
            cr_assert_eq(s->start, f->start);
            cr_assert_eq(s->end, f->end);
            cr_assert_eq(s->all.ops, 0, "the split alone is not accounted");
            cr_assert_eq(memcmp(&l->all, &f->all, sizeof(f->all)), 0);
            cr_assert_eq(memcmp(l->engine, f->engine, sizeof(f->engine)), 0);
            cr_assert_eq(l->ntracks, f->ntracks);
            for (size_t k = 0; k < f->ntracks; k++) {
                cr_assert_eq(l->tracks[k].track, f->tracks[k].track);
                cr_assert_eq(memcmp(&l->tracks[k].u, &f->tracks[k].u, sizeof(f->tracks[k].u)), 0);
            }
            cr_assert_eq(l->nops, f->nops);
            for (size_t k = 0; k < f->nops; k++) {
                cr_assert_eq(l->ops[k].op, f->ops[k].op);
                cr_assert_eq(l->ops[k].count, f->ops[k].count);
                cr_assert_eq(l->ops[k].cycles, f->ops[k].cycles);
                cr_assert_eq(l->ops[k].busy, 0, "no op name's busy time in the light one");
            }
        }
        for (uint64_t e = 0; e < trace_model_event_count(r.m); e++)
            cr_assert_eq(trace_regions_of_event(split, e), trace_regions_of_event(full, e));
        trace_regions_free(full);
        trace_regions_free(split);
        trace_regions_free(light);
    }
    trace_model_free(r.m);
}

/* ---- cancelled ---------------------------------------------------------------------------- */

Test(fastanalysis, a_cancelled_analysis_returns_something_to_free)
{
    rng_state = 4242;
    struct run r;
    run_init(&r);
    run_grow(&r, 40000);
    struct trace_progress p = {0};
    atomic_store(&p.cancel, true);

    struct trace_verdict_opts vo = {.progress = &p};
    struct trace_verdict *v = trace_verdict_new(r.m, &vo);
    cr_assert_eq(v->nlaunches, 0, "no launch judged once cancelled");
    trace_verdict_free(v);

    struct trace_anomaly_opts ao;
    trace_anomaly_opts_default(&ao);
    ao.progress = &p;
    struct trace_anomalies a;
    trace_anomalies_find(r.m, &ao, &a);
    cr_assert_eq(a.found[TRACE_ANOMALY_SLOW_OP] + a.found[TRACE_ANOMALY_IDLE_GAP], 0);
    trace_anomalies_fini(&a);

    struct trace_token_profile t;
    trace_token_profile_compute_progress(r.m, &p, &t);
    trace_token_profile_fini(&t);

    trace_regions_free(trace_regions_new_progress(r.m, TRACE_REGION_LAYER, &p));

    uint64_t n = trace_model_event_count(r.m);
    uint64_t *evs = calloc(n, sizeof(*evs));
    for (uint64_t i = 0; i < n; i++)
        evs[i] = i;
    struct trace_critpath cp;
    struct trace_critpath_input in = {.m = r.m, .events = evs, .n = n, .progress = &p};
    trace_critpath_compute(&in, &cp);
    cr_assert_eq(cp.n, 0, "an empty path once cancelled");
    trace_critpath_fini(&cp);

    /* not cancelled: progress was reported */
    atomic_store(&p.cancel, false);
    trace_critpath_compute(&in, &cp);
    cr_assert_gt(cp.n, 0);
    cr_assert_str_eq(atomic_load(&p.what), "critical path: dependencies");
    cr_assert_gt(atomic_load(&p.done), 0);
    trace_critpath_fini(&cp);
    free(evs);
    trace_model_free(r.m);
}
