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
 * transfer starts or ends), or they step up by v (step: a transfer of length 0); seq, the
 * order it was made in, which a tie of cycles keeps. */
struct bp {
    uint64_t t;
    double v;
    uint32_t seq;
    uint8_t chans, step;
};

/* The breakpoints, in the order they are taken once sorted by (t, seq): the starts and
 * steps in one array and the ends in another. Each, made in the order of the transfers
 * (a trace's, nearly in order of time), is nearly in order of its cycles, which the sort
 * takes in place; the two interleaved are not (an end comes after the next starts), and
 * would be sorted digit by digit, pass after pass over the whole: half the tokens' time at
 * ten million events. More breakpoints than seq counts: all in the first array. */
struct bps {
    struct bp *v; /* owned */
    size_t n, cap;
};

struct sweep {
    struct bps starts, ends;
    uint64_t made; /* the breakpoints made so far */
};

static void bp_push(struct sweep *sw, uint64_t t, double v, int ch, int ch2, bool step, bool end)
{
    struct bps *s = end && sw->made < UINT32_MAX ? &sw->ends : &sw->starts;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = sim_xreallocarray(s->v, s->cap, sizeof(*s->v));
    }
    uint32_t seq = sw->made < UINT32_MAX ? (uint32_t)sw->made : UINT32_MAX;
    s->v[s->n++] = (struct bp){t, v, seq, (uint8_t)(1u << ch | (ch2 >= 0 ? 1u << ch2 : 0u)), step};
    sw->made++;
}

/* Room for n more breakpoints in each array (as many as the transfers). */
static void bp_reserve(struct sweep *sw, size_t n)
{
    struct bps *a[2] = {&sw->starts, &sw->ends};
    for (int k = 0; k < 2; k++)
        if (a[k]->cap - a[k]->n < n) {
            a[k]->cap = a[k]->n + n;
            a[k]->v = sim_xreallocarray(a[k]->v, a[k]->cap, sizeof(*a[k]->v));
        }
}

/* bytes of channels ch (and ch2 when >= 0) spread over [s, e). */
static void add_traffic(struct sweep *sw, uint64_t s, uint64_t e, uint64_t bytes, int ch, int ch2)
{
    if (!bytes)
        return;
    if (e <= s) {
        bp_push(sw, s, (double)bytes, ch, ch2, true, false);
        return;
    }
    double r = (double)bytes / (double)(e - s);
    bp_push(sw, s, r, ch, ch2, false, false);
    bp_push(sw, e, -r, ch, ch2, false, true);
}

/* The next breakpoint of sw (*a: the starts taken, *b: the ends) before cycle t, taken;
 * NULL when none. */
static inline const struct bp *bp_next(const struct sweep *sw, size_t *a, size_t *b, uint64_t t)
{
    const struct bp *x = *a < sw->starts.n ? &sw->starts.v[*a] : NULL;
    const struct bp *y = *b < sw->ends.n ? &sw->ends.v[*b] : NULL;
    if (y && (!x || y->t < x->t || (y->t == x->t && y->seq < x->seq))) {
        if (y->t >= t)
            return NULL;
        ++*b;
        return y;
    }
    if (!x || x->t >= t)
        return NULL;
    ++*a;
    return x;
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
        bp_reserve(sw, trace_model_transfer_count(m));
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
    /* each by cycle, stably (millions of them: linear, where a comparison sort was not) */
    trace_radix_sort(sw->starts.v, sw->starts.n, sizeof(struct bp), offsetof(struct bp, t));
    trace_radix_sort(sw->ends.v, sw->ends.n, sizeof(struct bp), offsetof(struct bp, t));
    double val[CH_COUNT] = {0}, slope[CH_COUNT] = {0};
    uint64_t at = 0; /* val holds F(at) */
    size_t a = 0, b = 0;
    for (size_t k = 0; k < nq; k++) {
        /* breakpoints strictly before the query: F(t) counts a step at c only when c < t */
        for (const struct bp *x; (x = bp_next(sw, &a, &b, q[k].t));) {
            for (int c = 0; c < CH_COUNT; c++) {
                val[c] += slope[c] * (double)(x->t - at);
                if (!(x->chans >> c & 1))
                    continue;
                if (x->step)
                    val[c] += x->v;
                else
                    slope[c] += x->v;
            }
            at = x->t;
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

/* Every token as a row, in the profile's order; no bytes yet. */
static void rows_of(const struct trace_model *m, struct trace_token_profile *p)
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
}

/* The latency figures over the rows. */
static void latencies(struct trace_token_profile *p)
{
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

void trace_token_profile_compute_progress(const struct trace_model *m, struct trace_progress *pg,
                                          struct trace_token_profile *p)
{
    rows_of(m, p);
    struct sweep sw = {0};
    trace_progress_step(pg, "tokens: DRAM traffic", 0);
    collect(m, p, &sw);
    trace_progress_step(pg, "tokens: bytes of each token", sw.starts.n + sw.ends.n);
    if (!trace_progress_at(pg, 0))
        bytes_of_rows(p, &sw);
    free(sw.starts.v), free(sw.ends.v);
    latencies(p);
}

void trace_token_profile_fini(struct trace_token_profile *p)
{
    free(p->rows);
    memset(p, 0, sizeof(*p));
}

/* ---- kept up to date --------------------------------------------------------------------------
 */

/* A breakpoint with its place in the order collect pushes them (2 x transfer, + 1 for an end):
 * among breakpoints of one cycle the sweep takes them in that order. */
struct ibp {
    uint64_t t, seq;
    double v;
    uint8_t chans, step;
};

struct trace_token_inc {
    const struct trace_model *m;
    size_t xf;            /* transfers [0, xf) folded in */
    size_t xseen;         /* transfers checked for their order */
    uint64_t last_xstart; /* the start of the last of those */
    uint64_t pass;        /* the sweep has taken every breakpoint before this cycle */
    double val[CH_COUNT], slope[CH_COUNT]; /* F(at) and its slope */
    uint64_t at;
    struct ibp *pend; /* owned: folded breakpoints not taken yet (at pass or later) */
    size_t npend, cappend;
    bool has_kv;
    size_t ntok;              /* tokens known */
    uint64_t token_reach;     /* the latest end of those */
    double (*f)[2][CH_COUNT]; /* owned: F at each token's start and end, once passed */
    bool (*known)[2];         /* owned: which of those are */
};

struct trace_token_inc *trace_token_inc_new(void)
{
    return sim_xcalloc(1, sizeof(struct trace_token_inc));
}

static void inc_reset(struct trace_token_inc *st)
{
    free(st->pend);
    free(st->f);
    free(st->known);
    memset(st, 0, sizeof(*st));
}

void trace_token_inc_free(struct trace_token_inc *st)
{
    if (!st)
        return;
    inc_reset(st);
    free(st);
}

/* Take breakpoint x into the sweep (as bytes_of_rows does). */
static inline void take_bp(double *val, double *slope, uint64_t *at, const struct ibp *x)
{
    for (int c = 0; c < CH_COUNT; c++) {
        val[c] += slope[c] * (double)(x->t - *at);
        if (!(x->chans >> c & 1))
            continue;
        if (x->step)
            val[c] += x->v;
        else
            slope[c] += x->v;
    }
    *at = x->t;
}

static void ibp_push(struct ibp **v, size_t *n, size_t *cap, uint64_t t, uint64_t seq, double val,
                     int ch, int ch2, bool step)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *v = sim_xreallocarray(*v, *cap, sizeof(**v));
    }
    (*v)[(*n)++] =
        (struct ibp){t, seq, val, (uint8_t)(1u << ch | (ch2 >= 0 ? 1u << ch2 : 0u)), step};
}

/* Transfer k's breakpoints (as add_traffic makes them), with its op's end. */
static void transfer_bps(const struct trace_model *m, size_t k, struct ibp **v, size_t *n,
                         size_t *cap, bool *has_kv)
{
    const struct trace_transfer *x = trace_model_transfer(m, k);
    const struct trace_event *ev = trace_model_event(m, x->event);
    bool w = x->flags & TRACE_XFER_WRITE, kv = x->flags & TRACE_XFER_KV;
    *has_kv |= kv;
    if (!x->bytes)
        return;
    int ch = w ? CH_WRITE : CH_READ, ch2 = kv ? (w ? CH_KV_WRITE : CH_KV_READ) : -1;
    uint64_t s = ev->start, e = ev_end(m, ev);
    if (e <= s) {
        ibp_push(v, n, cap, s, 2 * (uint64_t)k, (double)x->bytes, ch, ch2, true);
        return;
    }
    double r = (double)x->bytes / (double)(e - s);
    ibp_push(v, n, cap, s, 2 * (uint64_t)k, r, ch, ch2, false);
    ibp_push(v, n, cap, e, 2 * (uint64_t)k + 1, -r, ch, ch2, false);
}

/* A token's start (which 0) or end (1) to answer. */
struct tq {
    uint64_t t;
    size_t tok;
    int which;
};

static int cmp_tq(const void *a, const void *b)
{
    const struct tq *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The tokens added since; false when one starts where the sweep has passed. */
static bool learn_tokens(struct trace_token_inc *st, const struct trace_model *m)
{
    size_t nt = trace_model_token_count(m);
    if (nt < st->ntok)
        return false;
    for (size_t k = st->ntok; k < nt; k++)
        if (trace_model_token(m, k)->start < st->pass)
            return false;
    st->f = sim_xreallocarray(st->f, nt ? nt : 1, sizeof(*st->f));
    st->known = sim_xreallocarray(st->known, nt ? nt : 1, sizeof(*st->known));
    for (size_t k = st->ntok; k < nt; k++) {
        const struct trace_token *t = trace_model_token(m, k);
        st->known[k][0] = st->known[k][1] = false;
        st->token_reach = t->end > st->token_reach ? t->end : st->token_reach;
    }
    st->ntok = nt;
    return true;
}

/* Check the transfers added since: their ops in start order, none starting before pass. */
static bool transfers_in_order(struct trace_token_inc *st, const struct trace_model *m)
{
    size_t nx = trace_model_transfer_count(m);
    if (nx < st->xseen)
        return false;
    for (size_t k = st->xseen; k < nx; k++) {
        uint64_t s = trace_model_event(m, trace_model_transfer(m, k)->event)->start;
        if (s < st->pass || s < st->last_xstart)
            return false;
        st->last_xstart = s;
    }
    st->xseen = nx;
    return true;
}

/* The unanswered token queries, by cycle. */
static struct tq *open_queries(const struct trace_token_inc *st, const struct trace_model *m,
                               size_t *nq)
{
    struct tq *q = sim_xreallocarray(NULL, 2 * st->ntok + 1, sizeof(*q));
    size_t n = 0;
    for (size_t k = 0; k < st->ntok; k++)
        for (int w = 0; w < 2; w++)
            if (!st->known[k][w]) {
                const struct trace_token *t = trace_model_token(m, k);
                q[n++] = (struct tq){w ? t->end : t->start, k, w};
            }
    qsort(q, n, sizeof(*q), cmp_tq);
    *nq = n;
    return q;
}

/* Sweep the pending breakpoints up to (not including) cycle to, answering the queries before
 * it (from *qi on). */
static void advance(struct trace_token_inc *st, uint64_t to, const struct tq *q, size_t nq,
                    size_t *qi)
{
    trace_radix_sort(st->pend, st->npend, sizeof(*st->pend), offsetof(struct ibp, t));
    size_t b = 0;
    for (; *qi < nq && q[*qi].t <= to; (*qi)++) {
        while (b < st->npend && st->pend[b].t < q[*qi].t)
            take_bp(st->val, st->slope, &st->at, &st->pend[b++]);
        for (int c = 0; c < CH_COUNT; c++)
            st->f[q[*qi].tok][q[*qi].which][c] =
                st->val[c] + st->slope[c] * (double)(q[*qi].t - st->at);
        st->known[q[*qi].tok][q[*qi].which] = true;
    }
    while (b < st->npend && st->pend[b].t < to)
        take_bp(st->val, st->slope, &st->at, &st->pend[b++]);
    if (st->npend > b)
        memmove(st->pend, st->pend + b, (st->npend - b) * sizeof(*st->pend));
    st->npend -= b;
    st->pass = to > st->pass ? to : st->pass;
}

enum { FOLD_CHUNK = 1 << 20 }; /* transfers folded in between two advances */

void trace_token_inc_update(struct trace_token_inc *st, const struct trace_model *m,
                            struct trace_progress *pg, struct trace_token_profile *p)
{
    if (st->m != m || trace_metrics_dram_source(m) != TRACE_DRAM_TRANSFERS)
        inc_reset(st);
    st->m = m;
    if (trace_metrics_dram_source(m) != TRACE_DRAM_TRANSFERS || !learn_tokens(st, m) ||
        !transfers_in_order(st, m)) {
        inc_reset(st);
        st->m = m;
        if (trace_metrics_dram_source(m) != TRACE_DRAM_TRANSFERS || !learn_tokens(st, m) ||
            !transfers_in_order(st, m)) {
            inc_reset(st);
            trace_token_profile_compute_progress(m, pg, p);
            return;
        }
    }
    uint64_t ne = trace_model_event_count(m);
    uint64_t latest = ne ? trace_model_event(m, ne - 1)->start : 0;
    size_t nx = trace_model_transfer_count(m), nq, qi = 0;
    struct tq *q = open_queries(st, m, &nq);
    trace_progress_step(pg, "tokens: new DRAM traffic", nx - st->xf);
    size_t from = st->xf;
    for (;;) { /* fold in a chunk of ended transfers, then sweep as far as is final */
        size_t end = st->xf + FOLD_CHUNK < nx ? st->xf + FOLD_CHUNK : nx;
        for (; st->xf < end; st->xf++) {
            const struct trace_transfer *x = trace_model_transfer(m, st->xf);
            if (trace_model_event(m, x->event)->flags & TRACE_EV_INFLIGHT)
                break;
            transfer_bps(m, st->xf, &st->pend, &st->npend, &st->cappend, &st->has_kv);
        }
        uint64_t to = st->token_reach < latest ? st->token_reach : latest;
        if (st->xf < nx) {
            uint64_t s = trace_model_event(m, trace_model_transfer(m, st->xf)->event)->start;
            to = s < to ? s : to;
        }
        advance(st, to, q, nq, &qi);
        if (st->xf == nx || st->xf < end || trace_progress_at(pg, st->xf - from))
            break;
    }
    if (trace_progress_cancelled(pg)) { /* the state holds what it folded in */
        free(q);
        rows_of(m, p);
        return;
    }
    /* the rest on a copy: the pending breakpoints and those of the transfers not folded in */
    struct ibp *v = NULL;
    size_t nv = 0, capv = 0;
    bool has_kv = st->has_kv;
    for (size_t k = st->xf; k < nx; k++)
        transfer_bps(m, k, &v, &nv, &capv, &has_kv);
    trace_radix_sort(v, nv, sizeof(*v), offsetof(struct ibp, t));
    double val[CH_COUNT], slope[CH_COUNT];
    memcpy(val, st->val, sizeof(val));
    memcpy(slope, st->slope, sizeof(slope));
    uint64_t at = st->at;
    double(*fr)[2][CH_COUNT] = sim_xcalloc(st->ntok ? st->ntok : 1, sizeof(*fr));
    memcpy(fr, st->f, st->ntok * sizeof(*fr));
    size_t a = 0, b = 0; /* pending (earlier transfers first on a tie), then the rest */
    for (;; qi++) {
        uint64_t until = qi < nq ? q[qi].t : UINT64_MAX;
        for (;;) {
            const struct ibp *x = NULL;
            if (a < st->npend && st->pend[a].t < until && (b >= nv || st->pend[a].t <= v[b].t))
                x = &st->pend[a++];
            else if (b < nv && v[b].t < until)
                x = &v[b++];
            if (!x)
                break;
            take_bp(val, slope, &at, x);
        }
        if (qi >= nq)
            break;
        for (int c = 0; c < CH_COUNT; c++)
            fr[q[qi].tok][q[qi].which][c] = val[c] + slope[c] * (double)(q[qi].t - at);
    }
    free(v);
    free(q);
    rows_of(m, p);
    p->source = TRACE_DRAM_TRANSFERS;
    p->has_kv = has_kv;
    for (size_t i = 0; i < p->n; i++) {
        const double *s = fr[p->rows[i].token][0], *e = fr[p->rows[i].token][1];
        p->rows[i].read_bytes = to_bytes(e[CH_READ] - s[CH_READ]);
        p->rows[i].write_bytes = to_bytes(e[CH_WRITE] - s[CH_WRITE]);
        p->rows[i].kv_read = to_bytes(e[CH_KV_READ] - s[CH_KV_READ]);
        p->rows[i].kv_write = to_bytes(e[CH_KV_WRITE] - s[CH_KV_WRITE]);
    }
    free(fr);
    latencies(p);
}
