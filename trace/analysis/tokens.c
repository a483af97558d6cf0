/*
 * Per-token figures (see tokens.h). The bytes of a token are F(end) - F(start), where F(t)
 * is the cumulative DRAM traffic up to cycle t (each transfer rising linearly over its
 * span, a transfer of length 0 a step just after its cycle): one sweep over the transfers'
 * breakpoints answers every token, in O((transfers + tokens) log) whatever their overlap.
 */
#include "trace/analysis/tokens.h"

#include "sim/util/xalloc.h"
#include "trace/model/radix.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The four quantities a token sums. */
enum { CH_READ, CH_WRITE, CH_KV_READ, CH_KV_WRITE, CH_COUNT };

/* A breakpoint of F: at cycle t the slope of channels chans (a bit each) changes by v (a
 * transfer starts or ends), or they step up by v (step: a transfer of length 0). */
struct bp {
    uint64_t t;
    double v;
    uint8_t chans, step;
};

struct sweep {
    struct bp *v; /* owned */
    size_t n, cap;
};

static void bp_push(struct sweep *s, uint64_t t, double v, int ch, int ch2, bool step)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = sim_xreallocarray(s->v, s->cap, sizeof(*s->v));
    }
    s->v[s->n++] = (struct bp){t, v, (uint8_t)(1u << ch | (ch2 >= 0 ? 1u << ch2 : 0u)), step};
}

/* bytes of channels ch (and ch2 when >= 0) spread over [s, e). */
static void add_traffic(struct sweep *sw, uint64_t s, uint64_t e, uint64_t bytes, int ch, int ch2)
{
    if (!bytes)
        return;
    if (e <= s) {
        bp_push(sw, s, (double)bytes, ch, ch2, true);
        return;
    }
    double r = (double)bytes / (double)(e - s);
    bp_push(sw, s, r, ch, ch2, false);
    bp_push(sw, e, -r, ch, ch2, false);
}

/* A query: F at cycle t, for the start (which 0) or the end (1) of row. */
struct query {
    uint64_t t;
    size_t row;
    int which;
};

static int cmp_query(const void *a, const void *b)
{
    const struct query *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static uint64_t ev_end(const struct trace_model *m, const struct trace_event *ev)
{
    if (ev->flags & TRACE_EV_INFLIGHT) {
        uint64_t now = trace_model_now(m);
        return now > ev->start ? now : ev->start;
    }
    return ev->end;
}

/* The traffic of m's DRAM source as breakpoints. */
static void collect(const struct trace_model *m, struct trace_token_profile *p, struct sweep *sw)
{
    p->source = trace_metrics_dram_source(m);
    if (p->source == TRACE_DRAM_TRANSFERS) {
        for (size_t i = 0; i < trace_model_transfer_count(m); i++) {
            const struct trace_transfer *x = trace_model_transfer(m, i);
            const struct trace_event *ev = trace_model_event(m, x->event);
            bool w = x->flags & TRACE_XFER_WRITE, kv = x->flags & TRACE_XFER_KV;
            p->has_kv |= kv;
            add_traffic(sw, ev->start, ev_end(m, ev), x->bytes, w ? CH_WRITE : CH_READ,
                        kv ? (w ? CH_KV_WRITE : CH_KV_READ) : -1);
        }
    } else if (p->source == TRACE_DRAM_MEM_EVENTS) {
        for (size_t i = 0; i < trace_model_mem_access_count(m); i++) {
            const struct trace_mem_access *a = trace_model_mem_access(m, i);
            if (strcmp(trace_model_str(m, a->mem_type), "DRAM") == 0)
                add_traffic(sw, a->cycle, a->cycle, a->bytes, a->write ? CH_WRITE : CH_READ, -1);
        }
    } else if (p->source == TRACE_DRAM_SAMPLES) {
        for (size_t i = 0; i < trace_model_bw_sample_count(m); i++) {
            const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
            if (!trace_bw_sample_is_dram(s))
                continue; /* an HBM's or a link's: its bytes are in the DRAM samples too */
            uint64_t e = s->cycle + s->window;
            add_traffic(sw, s->cycle, e, s->read_bytes, CH_READ, -1);
            add_traffic(sw, s->cycle, e, s->write_bytes, CH_WRITE, -1);
        }
    }
}

/* Token order: PREFILL first, then by token_index, then by start, then model order. */
static int cmp_row(const void *a, const void *b)
{
    const struct trace_token_row *x = a, *y = b;
    if (x->decode != y->decode)
        return x->decode ? 1 : -1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->token < y->token ? -1 : x->token > y->token;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t to_bytes(double v)
{
    return v > 0.5 ? (uint64_t)llround(v) : 0;
}

/* Fill each row's bytes: F at every start and end, in one sweep. */
static void bytes_of_rows(struct trace_token_profile *p, struct sweep *sw)
{
    size_t nq = 2 * p->n;
    struct query *q = sim_xreallocarray(NULL, nq ? nq : 1, sizeof(*q));
    double(*f)[CH_COUNT] = sim_xcalloc(nq ? nq : 1, sizeof(*f)); /* F at query 2 row + which */
    for (size_t i = 0; i < p->n; i++) {
        q[2 * i] = (struct query){p->rows[i].start, i, 0};
        q[2 * i + 1] = (struct query){p->rows[i].end, i, 1};
    }
    qsort(q, nq, sizeof(*q), cmp_query);
    /* by cycle, stably (millions of them: linear, where a comparison sort was not) */
    trace_radix_sort(sw->v, sw->n, sizeof(*sw->v), offsetof(struct bp, t));
    double val[CH_COUNT] = {0}, slope[CH_COUNT] = {0};
    uint64_t at = 0; /* val holds F(at) */
    size_t b = 0;
    for (size_t k = 0; k < nq; k++) {
        /* breakpoints strictly before the query: F(t) counts a step at c only when c < t */
        while (b < sw->n && sw->v[b].t < q[k].t) {
            const struct bp *x = &sw->v[b];
            for (int c = 0; c < CH_COUNT; c++) {
                val[c] += slope[c] * (double)(x->t - at);
                if (!(x->chans >> c & 1))
                    continue;
                if (x->step)
                    val[c] += x->v;
                else
                    slope[c] += x->v;
            }
            at = sw->v[b].t;
            b++;
        }
        for (int c = 0; c < CH_COUNT; c++)
            f[2 * q[k].row + (size_t)q[k].which][c] = val[c] + slope[c] * (double)(q[k].t - at);
    }
    for (size_t i = 0; i < p->n; i++) {
        const double *s = f[2 * i], *e = f[2 * i + 1];
        p->rows[i].read_bytes = to_bytes(e[CH_READ] - s[CH_READ]);
        p->rows[i].write_bytes = to_bytes(e[CH_WRITE] - s[CH_WRITE]);
        p->rows[i].kv_read = to_bytes(e[CH_KV_READ] - s[CH_KV_READ]);
        p->rows[i].kv_write = to_bytes(e[CH_KV_WRITE] - s[CH_KV_WRITE]);
    }
    free(f);
    free(q);
}

void trace_token_profile_compute(const struct trace_model *m, struct trace_token_profile *p)
{
    trace_token_profile_compute_progress(m, NULL, p);
}

void trace_token_profile_compute_progress(const struct trace_model *m, struct trace_progress *pg,
                                          struct trace_token_profile *p)
{
    memset(p, 0, sizeof(*p));
    size_t n = trace_model_token_count(m);
    p->rows = sim_xcalloc(n ? n : 1, sizeof(*p->rows));
    for (size_t i = 0; i < n; i++) {
        const struct trace_token *t = trace_model_token(m, i);
        p->rows[p->n++] = (struct trace_token_row){
            .token = i,
            .decode = t->decode,
            .index = t->token_index,
            .start = t->start,
            .end = t->end,
            .latency = t->end - t->start,
        };
        *(t->decode ? &p->ndecode : &p->nprefill) += 1;
    }
    qsort(p->rows, p->n, sizeof(*p->rows), cmp_row);
    struct sweep sw = {0};
    trace_progress_step(pg, "tokens: DRAM traffic", 0);
    collect(m, p, &sw);
    trace_progress_step(pg, "tokens: bytes of each token", sw.n);
    if (!trace_progress_at(pg, 0))
        bytes_of_rows(p, &sw);
    free(sw.v);

    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < p->nprefill; i++) {
        first = p->rows[i].start < first ? p->rows[i].start : first;
        last = p->rows[i].end > last ? p->rows[i].end : last;
    }
    p->prefill_latency = p->nprefill ? last - first : 0;
    if (p->ndecode) {
        uint64_t *lat = sim_xreallocarray(NULL, p->ndecode, sizeof(*lat));
        double sum = 0;
        for (size_t i = 0; i < p->ndecode; i++) {
            lat[i] = p->rows[p->nprefill + i].latency;
            sum += (double)lat[i];
        }
        qsort(lat, p->ndecode, sizeof(*lat), cmp_u64);
        p->decode_min = lat[0];
        p->decode_max = lat[p->ndecode - 1];
        p->decode_median = lat[(p->ndecode - 1) / 2];
        p->decode_mean = sum / (double)p->ndecode;
        free(lat);
    }
}

void trace_token_profile_fini(struct trace_token_profile *p)
{
    free(p->rows);
    memset(p, 0, sizeof(*p));
}
