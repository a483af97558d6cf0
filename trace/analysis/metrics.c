/* Summary metrics and bandwidth sampling from a trace model (see metrics.h). */
#include "trace/analysis/metrics.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum {
    MAX_WINDOWS_LOG2 = 21, /* dense window array: 2^21 x 16 bytes at most */
    MAX_SHARES_LOG2 = 25,  /* window shares computed over all transfers */
};

struct span {
    uint64_t s, e;
};

/* End of an event as metrics see it: in-flight events run until now. */
static uint64_t event_end(const struct trace_model *m, const struct trace_event *ev)
{
    if (ev->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(m);
        return now > ev->start ? now : ev->start;
    }
    return ev->end;
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Measure of the union of spans (sorted here). */
static uint64_t union_length(struct span *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_span);
    uint64_t total = 0, cs = 0, ce = 0;
    bool open = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i].e <= v[i].s)
            continue;
        if (open && v[i].s <= ce) {
            if (v[i].e > ce)
                ce = v[i].e;
            continue;
        }
        if (open)
            total += ce - cs;
        cs = v[i].s, ce = v[i].e, open = true;
    }
    return open ? total + (ce - cs) : total;
}

/* ---- DMA: a sweep over every DMA track in start order ------------------------------------ */

/* A binary min-heap of uint64 keys with a payload (the track, or nothing). */
struct heap {
    uint64_t *key;
    uint32_t *val;
    size_t n, cap;
};

static void heap_push(struct heap *h, uint64_t key, uint32_t val)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->key = sim_xreallocarray(h->key, h->cap, sizeof(*h->key));
        h->val = sim_xreallocarray(h->val, h->cap, sizeof(*h->val));
    }
    size_t i = h->n++;
    while (i && h->key[(i - 1) / 2] > key) {
        h->key[i] = h->key[(i - 1) / 2];
        h->val[i] = h->val[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->key[i] = key;
    h->val[i] = val;
}

static void heap_pop(struct heap *h)
{
    uint64_t key = h->key[--h->n];
    uint32_t val = h->val[h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->key[c + 1] < h->key[c])
            c++;
        if (h->key[c] >= key)
            break;
        h->key[i] = h->key[c];
        h->val[i] = h->val[c];
        i = c;
    }
    if (h->n) {
        h->key[i] = key;
        h->val[i] = val;
    }
}

/* A kind's spans taken in start order: the measure of their union (closed spans' total, the
 * open one [cs, ce)) and, with want_peak, the most in flight at once (an end at t frees its
 * slot before a start at t). */
struct sweep {
    uint64_t total, cs, ce;
    bool open, want_peak;
    struct heap ends; /* ends of the spans in flight */
    uint64_t best;
};

static void sweep_add(struct sweep *w, uint64_t s, uint64_t e)
{
    if (e <= s)
        return; /* an empty span counts for nothing */
    if (w->want_peak) {
        while (w->ends.n && w->ends.key[0] <= s)
            heap_pop(&w->ends);
        heap_push(&w->ends, e, 0);
        if (w->ends.n > w->best)
            w->best = w->ends.n;
    }
    if (w->open && s <= w->ce) {
        if (e > w->ce)
            w->ce = e;
        return;
    }
    if (w->open)
        w->total += w->ce - w->cs;
    w->cs = s, w->ce = e, w->open = true;
}

/* The measure of the union; frees the sweep. */
static uint64_t sweep_end(struct sweep *w)
{
    free(w->ends.key);
    free(w->ends.val);
    return w->open ? w->total + (w->ce - w->cs) : w->total;
}

/*
 * Busy cycles of an engine kind: the union of every span of its events (one busy
 * definition: the measure of the union, overlaps once) and the peak number covering one
 * cycle (an end at t frees its slot before a start at t), by merging the kind's tracks'
 * indexes, which the model keeps sorted by start: O(n log tracks) with no copy of the
 * events. peak may be NULL. This is the way for events in any order; kinds_sweep's one pass
 * in the events' own order is the fast one for the usual nearly sorted ones.
 */
static void kind_sweep(const struct trace_model *m, enum trace_engine eng, uint64_t *active,
                       uint64_t *peak)
{
    size_t ntr = trace_model_track_count(m);
    struct heap tracks = {0};
    struct sweep w = {.want_peak = peak != NULL};
    const uint32_t **idx = sim_xcalloc(ntr ? ntr : 1, sizeof(*idx));
    size_t *len = sim_xcalloc(ntr ? ntr : 1, sizeof(*len)),
           *pos = sim_xcalloc(ntr ? ntr : 1, sizeof(*pos));
    for (uint32_t t = 0; t < ntr; t++) {
        if (trace_model_track_get(m, t)->engine != eng)
            continue;
        len[t] = trace_model_track_events(m, t, &idx[t]);
        if (len[t])
            heap_push(&tracks, trace_model_event(m, idx[t][0])->start, t);
    }
    while (tracks.n) {
        uint32_t t = tracks.val[0];
        const struct trace_event *ev = trace_model_event(m, idx[t][pos[t]]);
        heap_pop(&tracks);
        if (++pos[t] < len[t])
            heap_push(&tracks, trace_model_event(m, idx[t][pos[t]])->start, t);
        sweep_add(&w, ev->start, event_end(m, ev));
    }
    if (peak)
        *peak = w.best;
    *active = sweep_end(&w);
    free(tracks.key);
    free(tracks.val);
    free(idx);
    free(len);
    free(pos);
}

/* ---- the three kinds in one pass over the events, in their order -------------------------- */

/*
 * A trace's events come nearly in start order, and reading them in their own order is a
 * single stream through memory, where merging the tracks' indexes (kind_sweep) reads a
 * stream per track: at 10 M events, a few times faster. Each kind's events are buffered and
 * fed to its sweep in start order, SWEEP_CHUNK at a time: the buffer (twice that) is sorted
 * (insertion sort, linear on a nearly sorted buffer) and its smaller half fed. That is the
 * order kind_sweep's merge gives, up to events starting together, which the union and the
 * peak do not tell apart; unless an event comes in after one starting later was fed: the
 * kind is then given up (broken) and swept by kind_sweep instead.
 */
enum { SWEEP_CHUNK = 8192 };

struct kind_pass {
    struct span *buf; /* the spans not fed yet (SWEEP_CHUNK * 2 at most) */
    size_t n;
    uint64_t fed;     /* start of the last span fed */
    bool broken, any; /* any: a span was fed */
    struct sweep w;
};

/* Sort v[0..n) by start: by insertion while the buffer is nearly sorted, else qsort. */
static void sort_nearly(struct span *v, size_t n)
{
    size_t moves = 0, limit = 8 * n;
    for (size_t i = 1; i < n; i++) {
        struct span x = v[i];
        size_t j = i;
        while (j && v[j - 1].s > x.s) {
            v[j] = v[j - 1];
            j--;
            if (++moves > limit) {
                v[j] = x; /* v[0..i] is a permutation again: the rest is qsort's */
                qsort(v, n, sizeof(*v), cmp_span);
                return;
            }
        }
        v[j] = x;
    }
}

/* Feed the first n spans of k's buffer (sorted) to its sweep and drop them. */
static void pass_feed(struct kind_pass *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sweep_add(&k->w, k->buf[i].s, k->buf[i].e);
    if (n) {
        k->fed = k->buf[n - 1].s;
        k->any = true;
    }
    memmove(k->buf, k->buf + n, (k->n - n) * sizeof(*k->buf));
    k->n -= n;
}

static void pass_add(struct kind_pass *k, uint64_t s, uint64_t e)
{
    if (k->broken || e <= s) /* an empty span counts for nothing (sweep_add) */
        return;
    if (k->any && s < k->fed) {
        k->broken = true;
        return;
    }
    k->buf[k->n++] = (struct span){s, e};
    if (k->n == 2 * SWEEP_CHUNK) {
        sort_nearly(k->buf, k->n);
        pass_feed(k, SWEEP_CHUNK);
    }
}

/* Busy cycles (and, for DMA, the peak) of DMA, TE and VE as kind_sweep gives them, into
 * active[] and *dma_peak. */
/* (false: p was cancelled, the sums left half done) */
static bool kinds_sweep(const struct trace_model *m, uint64_t active[3], uint64_t *dma_peak,
                        struct trace_progress *p)
{
    static const enum trace_engine kinds[3] = {TRACE_ENGINE_DMA, TRACE_ENGINE_TE, TRACE_ENGINE_VE};
    size_t ntr = trace_model_track_count(m);
    uint8_t *of = sim_xcalloc(ntr ? ntr : 1, 1); /* the track's kind + 1, 0: none */
    for (uint32_t t = 0; t < ntr; t++)
        for (uint8_t k = 0; k < 3; k++)
            if (trace_model_track_get(m, t)->engine == kinds[k])
                of[t] = (uint8_t)(k + 1);
    struct kind_pass ks[3] = {{.w.want_peak = true}, {0}, {0}};
    uint64_t n = trace_model_event_count(m);
    size_t cap = n < 2 * SWEEP_CHUNK ? (size_t)n + 1 : 2 * SWEEP_CHUNK; /* a small trace's: small */
    for (int k = 0; k < 3; k++)
        ks[k].buf = sim_xreallocarray(NULL, cap, sizeof(*ks[k].buf));
    bool cancelled = false;
    for (uint64_t i = 0; i < n; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && (cancelled = trace_progress_at(p, i)))
            break;
        const struct trace_event *ev = trace_model_event(m, i);
        uint8_t k = of[ev->track];
        if (k)
            pass_add(&ks[k - 1], ev->start, event_end(m, ev));
    }
    *dma_peak = 0;
    for (int k = 0; k < 3; k++) {
        struct kind_pass *x = &ks[k];
        if (cancelled) {
            sweep_end(&x->w);
        } else if (!x->broken) {
            sort_nearly(x->buf, x->n);
            pass_feed(x, x->n);
            if (k == 0)
                *dma_peak = x->w.best;
            active[k] = sweep_end(&x->w);
        } else {
            sweep_end(&x->w);
            kind_sweep(m, kinds[k], &active[k], k == 0 ? dma_peak : NULL);
        }
        free(x->buf);
    }
    free(of);
    return !cancelled;
}

static int cmp_use(const void *a, const void *b)
{
    const struct trace_engine_use *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Per-engine busy time of every track of engine e, grouped by engine_id. */
static struct trace_engine_use *engine_use(const struct trace_model *m, enum trace_engine eng,
                                           uint64_t total, size_t *count)
{
    size_t ntr = trace_model_track_count(m), n = 0;
    struct trace_engine_use *u = NULL;
    for (uint32_t t = 0; t < ntr; t++) {
        const struct trace_track *tr = trace_model_track_get(m, t);
        const uint32_t *idx0;
        if (tr->engine != eng || trace_model_track_events(m, t, &idx0) == 0)
            continue; /* an engine without events is not listed (FORMAT.md) */
        size_t j = 0;
        while (j < n && u[j].id != tr->engine_id)
            j++;
        if (j < n)
            continue; /* this id was done with all its tracks */
        /* every track with this id: one track is the common case */
        size_t ntracks = 0, nev = 0;
        for (uint32_t k = t; k < ntr; k++) {
            const struct trace_track *o = trace_model_track_get(m, k);
            if (o->engine == eng && o->engine_id == tr->engine_id) {
                const uint32_t *idx;
                nev += trace_model_track_events(m, k, &idx);
                ntracks++;
            }
        }
        uint64_t active;
        if (ntracks == 1) {
            active = trace_model_track_busy(m, t, 0, UINT64_MAX);
        } else {
            struct span *v = sim_xreallocarray(NULL, nev ? nev : 1, sizeof(*v));
            size_t q = 0;
            for (uint32_t k = t; k < ntr; k++) {
                const struct trace_track *o = trace_model_track_get(m, k);
                if (o->engine != eng || o->engine_id != tr->engine_id)
                    continue;
                const uint32_t *idx;
                size_t len = trace_model_track_events(m, k, &idx);
                for (size_t p = 0; p < len; p++) {
                    const struct trace_event *ev = trace_model_event(m, idx[p]);
                    v[q++] = (struct span){ev->start, event_end(m, ev)};
                }
            }
            active = union_length(v, q);
            free(v);
        }
        u = sim_xreallocarray(u, n + 1, sizeof(*u));
        u[n++] = (struct trace_engine_use){
            .id = tr->engine_id,
            .active = active,
            .util = total ? (double)active / (double)total : 0,
        };
    }
    if (n)
        qsort(u, n, sizeof(*u), cmp_use);
    *count = n;
    return u;
}

static bool is_dram(const struct trace_model *m, const struct trace_mem_access *a)
{
    return strcmp(trace_model_str(m, a->mem_type), "DRAM") == 0;
}

enum trace_dram_source trace_metrics_dram_source(const struct trace_model *m)
{
    if (trace_model_transfer_count(m))
        return TRACE_DRAM_TRANSFERS;
    size_t nm = trace_model_mem_access_count(m);
    for (size_t i = 0; i < nm; i++)
        if (is_dram(m, trace_model_mem_access(m, i)))
            return TRACE_DRAM_MEM_EVENTS;
    /* only the samples of the whole DRAM: a resource's (an HBM, a link) are not DRAM traffic */
    return trace_model_dram_sample_count(m) ? TRACE_DRAM_SAMPLES : TRACE_DRAM_NONE;
}

void trace_metrics_compute(const struct trace_model *m, struct trace_metrics *x)
{
    trace_metrics_compute_at(m, x, NULL);
}

bool trace_metrics_compute_at(const struct trace_model *m, struct trace_metrics *x,
                              struct trace_progress *p)
{
    memset(x, 0, sizeof(*x));
    x->cycles_total = trace_model_t_max(m);

    /* DRAM traffic: the transfers, or else the DRAM MEM_ACCESS_EVENTs, or else the samples */
    x->dram_source = trace_metrics_dram_source(m);
    size_t nx = trace_model_transfer_count(m);
    /* (a progress check every so many: a run waiting for the user's waits there, not after
     * a pass over millions) */
    trace_progress_step(p, "the DRAM traffic", nx);
    for (size_t i = 0; i < nx; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(p, i))
            return false;
        const struct trace_transfer *t = trace_model_transfer(m, i);
        bool w = t->flags & TRACE_XFER_WRITE;
        *(w ? &x->dram_write : &x->dram_read) += t->bytes;
        if (t->flags & TRACE_XFER_KV) {
            x->has_kv = true;
            *(w ? &x->kv_write : &x->kv_read) += t->bytes;
        }
    }
    if (x->dram_source == TRACE_DRAM_MEM_EVENTS) {
        size_t nm = trace_model_mem_access_count(m);
        for (size_t i = 0; i < nm; i++) {
            if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(p, i))
                return false;
            const struct trace_mem_access *a = trace_model_mem_access(m, i);
            if (is_dram(m, a))
                *(a->write ? &x->dram_write : &x->dram_read) += a->bytes;
        }
    } else if (x->dram_source == TRACE_DRAM_SAMPLES) {
        size_t ns = trace_model_bw_sample_count(m);
        for (size_t i = 0; i < ns; i++) {
            const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
            if (!trace_bw_sample_is_dram(s))
                continue;
            x->dram_read += s->read_bytes;
            x->dram_write += s->write_bytes;
        }
    }

    /* DMA: union over every DMA track, and the peak of concurrent transfers */
    size_t ntr = trace_model_track_count(m);
    for (uint32_t t = 0; t < ntr; t++)
        if (trace_model_track_get(m, t)->engine == TRACE_ENGINE_DMA) {
            const uint32_t *idx;
            x->has_dma |= trace_model_track_events(m, t, &idx) > 0;
        }
    uint64_t active[3] = {0}, peak = 0;
    trace_progress_step(p, "the engines' busy time", trace_model_event_count(m));
    if (!kinds_sweep(m, active, &peak, p))
        return false;
    if (x->has_dma) {
        x->dma_active = active[0];
        x->dma_max_concurrent = peak;
        x->dma_util = x->cycles_total ? (double)x->dma_active / (double)x->cycles_total : 0;
    }

    x->te = engine_use(m, TRACE_ENGINE_TE, x->cycles_total, &x->nte);
    x->ve = engine_use(m, TRACE_ENGINE_VE, x->cycles_total, &x->nve);
    if (x->nte)
        x->te_active = active[1];
    if (x->nve)
        x->ve_active = active[2];
    x->te_util = x->cycles_total ? (double)x->te_active / (double)x->cycles_total : 0;
    x->ve_util = x->cycles_total ? (double)x->ve_active / (double)x->cycles_total : 0;

    trace_metrics_tokens(m, x);
    return true;
}

void trace_metrics_tokens(const struct trace_model *m, struct trace_metrics *x)
{
    uint64_t pmin = UINT64_MAX, pmax = 0, dsum = 0;
    size_t ntok = trace_model_token_count(m);
    x->has_prefill = x->has_decode = false;
    x->ndecode = 0;
    for (size_t i = 0; i < ntok; i++) {
        const struct trace_token *t = trace_model_token(m, i);
        if (t->decode) {
            x->has_decode = true;
            x->ndecode++;
            dsum += t->end - t->start;
        } else {
            x->has_prefill = true;
            if (t->start < pmin)
                pmin = t->start;
            if (t->end > pmax)
                pmax = t->end;
        }
    }
    if (x->has_prefill)
        x->prefill_latency = pmax - pmin;
    if (x->has_decode)
        x->avg_decode_latency = (double)dsum / (double)x->ndecode;
}

void trace_metrics_fini(struct trace_metrics *x)
{
    free(x->te);
    free(x->ve);
    x->te = x->ve = NULL;
    x->nte = x->nve = 0;
}

static struct sim_value *per_engine(const struct trace_engine_use *u, size_t n, uint64_t active,
                                    double util)
{
    struct sim_value *blk = sim_value_map();
    sim_value_map_set_float(blk, "utilization", util); /* the kind: any of its engines busy */
    sim_value_map_set_int(blk, "active_cycles", (int64_t)active);
    struct sim_value *l = sim_value_map_set_take(blk, "per_engine", sim_value_list());
    for (size_t i = 0; i < n; i++) {
        struct sim_value *e = sim_value_list_push_take(l, sim_value_map());
        sim_value_map_set_int(e, "id", u[i].id);
        sim_value_map_set_float(e, "utilization", u[i].util);
        sim_value_map_set_int(e, "active_cycles", (int64_t)u[i].active);
    }
    return blk;
}

struct sim_value *trace_metrics_to_value(const struct trace_metrics *x)
{
    struct sim_value *v = sim_value_map();
    sim_value_map_set_int(v, "cycles_total", (int64_t)x->cycles_total);
    sim_value_map_set_int(v, "dram_bytes_read", (int64_t)x->dram_read);
    sim_value_map_set_int(v, "dram_bytes_write", (int64_t)x->dram_write);
    if (x->has_dma) {
        struct sim_value *d = sim_value_map_set_take(v, "dma", sim_value_map());
        sim_value_map_set_float(d, "utilization", x->dma_util);
        sim_value_map_set_int(d, "max_concurrent_transfers", (int64_t)x->dma_max_concurrent);
    }
    if (x->nte)
        sim_value_map_set_take(v, "te", per_engine(x->te, x->nte, x->te_active, x->te_util));
    if (x->nve)
        sim_value_map_set_take(v, "ve", per_engine(x->ve, x->nve, x->ve_active, x->ve_util));
    if (x->has_kv) {
        struct sim_value *k = sim_value_map_set_take(v, "kv_cache", sim_value_map());
        sim_value_map_set_int(k, "bytes_read", (int64_t)x->kv_read);
        sim_value_map_set_int(k, "bytes_written", (int64_t)x->kv_write);
    }
    if (x->has_prefill || x->has_decode) {
        struct sim_value *t = sim_value_map_set_take(v, "tokens", sim_value_map());
        if (x->has_prefill)
            sim_value_map_set_int(t, "prefill_latency_cycles", (int64_t)x->prefill_latency);
        if (x->has_decode)
            sim_value_map_set_float(t, "avg_decode_latency_cycles", x->avg_decode_latency);
    }
    return v;
}

struct sim_value *trace_metrics_summary(const struct trace_model *m)
{
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    struct sim_value *v = trace_metrics_to_value(&x);
    trace_metrics_fini(&x);
    return v;
}

/* ---- bandwidth ------------------------------------------------------------------------- */

struct xfer {
    uint64_t s, e, bytes;
    bool write;
};

/* Transfer i of m (xfers), else its memory access i: false for an access not to DRAM. */
static bool xfer_at(const struct trace_model *m, bool xfers, size_t i, struct xfer *x)
{
    if (xfers) {
        const struct trace_transfer *t = trace_model_transfer(m, i);
        const struct trace_event *ev = trace_model_event(m, t->event);
        *x = (struct xfer){ev->start, event_end(m, ev), t->bytes,
                           (t->flags & TRACE_XFER_WRITE) != 0};
        return true;
    }
    const struct trace_mem_access *a = trace_model_mem_access(m, i);
    *x = (struct xfer){a->cycle, a->cycle, a->bytes, a->write};
    return is_dram(m, a);
}

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

uint64_t trace_metrics_widen(uint64_t window, uint64_t lo, uint64_t hi, uint64_t sum_len)
{
    uint64_t need = ((hi - lo) >> MAX_WINDOWS_LOG2) + 1;
    uint64_t shares = div_ceil(sum_len, (uint64_t)1 << MAX_SHARES_LOG2);
    if (shares > need)
        need = shares;
    uint64_t w = window ? window : TRACE_BW_WINDOW_DEFAULT;
    while (w < need)
        w = w > UINT64_MAX / 2 ? need : 2 * w;
    return w;
}

size_t trace_metrics_bandwidth(const struct trace_model *m, uint64_t window,
                               struct trace_bw_sample **out)
{
    return trace_metrics_bandwidth_at(m, window, out, NULL);
}

size_t trace_metrics_bandwidth_at(const struct trace_model *m, uint64_t window,
                                  struct trace_bw_sample **out, struct trace_progress *p)
{
    *out = NULL;
    uint64_t w = window ? window : TRACE_BW_WINDOW_DEFAULT;

    /* the transfers, or else the DRAM accesses (instantaneous), or else the file's samples */
    enum trace_dram_source src = trace_metrics_dram_source(m);
    if (src == TRACE_DRAM_SAMPLES) {
        size_t ns = trace_model_bw_sample_count(m), k = 0;
        struct trace_bw_sample *s = sim_xreallocarray(NULL, ns, sizeof(*s));
        for (size_t i = 0; i < ns; i++)
            if (trace_bw_sample_is_dram(trace_model_bw_sample(m, i)))
                s[k++] = *trace_model_bw_sample(m, i);
        *out = s;
        return k;
    }
    /* the transfers (or accesses) are read twice, for the windows' range and then spread,
     * rather than copied once: a copy of 3.3 M of them was 106 MB of fresh pages, slower
     * to fault in than a second pass over the model is to read */
    bool xfers = trace_model_transfer_count(m) != 0;
    size_t nx = xfers ? trace_model_transfer_count(m) : trace_model_mem_access_count(m), n = 0;
    uint64_t lo = UINT64_MAX, hi = 0, sum_len = 0;
    struct xfer x;
    trace_progress_step(p, "the bandwidth: its windows", nx);
    for (size_t i = 0; i < nx; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(p, i))
            return 0; /* (cancelled: nothing made yet) */
        if (!xfer_at(m, xfers, i, &x))
            continue;
        n++;
        lo = x.s < lo ? x.s : lo;
        hi = x.e > hi ? x.e : hi;
        uint64_t len = x.e - x.s;
        sum_len = sum_len + len < sum_len ? UINT64_MAX : sum_len + len;
    }
    if (!n)
        return 0;
    /* widen the window when the dense array or the work would be too large */
    w = trace_metrics_widen(w, lo, hi, sum_len);

    uint64_t first = lo / w, last = hi / w;
    size_t nwin = (size_t)(last - first + 1);
    uint64_t *rd = sim_xcalloc(nwin, sizeof(*rd));
    uint64_t *wr = sim_xcalloc(nwin, sizeof(*wr));
    trace_progress_step(p, "the bandwidth", nx);
    bool cancelled = false;
    for (size_t i = 0; i < nx; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && (cancelled = trace_progress_at(p, i)))
            break;
        if (!xfer_at(m, xfers, i, &x))
            continue;
        /* (the same values as the first pass read: the model is held still meanwhile;
         * kept within the windows all the same) */
        x.s = x.s < lo ? lo : x.s > hi ? hi : x.s;
        x.e = x.e < x.s ? x.s : x.e > hi ? hi : x.e;
        trace_metrics_spread(x.write ? wr : rd, first, w, x.s, x.e, x.bytes);
    }
    if (cancelled) {
        free(rd);
        free(wr);
        return 0;
    }
    size_t ns = trace_metrics_samples(rd, wr, nwin, first, w, out);
    free(rd);
    free(wr);
    return ns;
}

void trace_metrics_spread(uint64_t *acc, uint64_t first, uint64_t w, uint64_t s, uint64_t e,
                          uint64_t b)
{
    if (e <= s) {
        acc[s / w - first] += b;
        return;
    }
    /* window k gets floor(B*C_k/L) - floor(B*C_{k-1}/L), C_k the overlap up to the end of
     * window k: the shares telescope to exactly B */
    uint64_t len = e - s, given = 0;
    for (uint64_t k = s / w; k <= (e - 1) / w; k++) {
        uint64_t wend = k * w > UINT64_MAX - w ? UINT64_MAX : k * w + w;
        uint64_t c = (wend < e ? wend : e) - s;
        uint64_t upto = (uint64_t)(((unsigned __int128)b * c) / len);
        acc[k - first] += upto - given;
        given = upto;
    }
}

size_t trace_metrics_samples(const uint64_t *rd, const uint64_t *wr, size_t nwin, uint64_t first,
                             uint64_t w, struct trace_bw_sample **out)
{
    *out = NULL;
    size_t ns = 0;
    for (size_t k = 0; k < nwin; k++)
        ns += rd[k] || wr[k];
    if (!ns)
        return 0;
    struct trace_bw_sample *s = sim_xreallocarray(NULL, ns, sizeof(*s));
    size_t q = 0;
    for (size_t k = 0; k < nwin; k++)
        if (rd[k] || wr[k])
            s[q++] = (struct trace_bw_sample){(first + k) * w, w, rd[k], wr[k], TRACE_NO_STR};
    *out = s;
    return ns;
}
