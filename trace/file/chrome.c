/* Chrome Trace Event Format export (see chrome.h). */
#include "trace/file/chrome.h"

#include "sim/util/xalloc.h"
#include "trace/file/detsrc.h"
#include "trace/file/jsonout.h"
#include "trace/analysis/metrics.h"
#include "trace/analysis/regions.h"
#include "trace/verdict/critpath.h"
#include "trace/verdict/verdict.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Where each slice goes. A thread holds slices that never overlap (Perfetto nests or
 * misdraws overlapping slices on one thread), so the ops of a track that run at the same
 * time (a DMA engine's channels) and tokens of several sequences spread over lanes: lane
 * 0 is the track's own thread, lane k a thread "NAME (k+1)" beside it.
 */
struct layout {
    uint32_t *pid;       /* owned: per track */
    uint32_t *tid;       /* owned: per track, the thread of its lane 0; lane k is tid + k */
    uint32_t *lanes;     /* owned: per track, at least 1 */
    uint32_t *ev_lane;   /* owned: per event, its lane in its track */
    uint32_t *tok_lane;  /* owned: per token, its lane in its phase */
    uint32_t tok_tid[2]; /* thread of lane 0 of PREFILL, DECODE tokens */
    uint32_t tok_lanes[2];
    int nsips;     /* sips seen: pids 1..nsips */
    int other_pid; /* tracks not under a sip, or 0 when there are none */
    int token_pid;
    int dram_pid;
    int res_pid; /* the HBMs' and links' counters */
};

/* Lanes, in start order: the lowest lane free at the start (its last slice ended by then),
 * else a new one. Returns the lane; *lane_end (n lanes, capacity *cap) grows. */
static uint32_t take_lane(uint64_t start, uint64_t end, uint64_t **lane_end, uint32_t *n,
                          uint32_t *cap)
{
    uint32_t k = 0;
    while (k < *n && (*lane_end)[k] > start)
        k++;
    if (k == *n) {
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 4;
            *lane_end = sim_xreallocarray(*lane_end, *cap, sizeof(**lane_end));
        }
        (*n)++;
    }
    (*lane_end)[k] = end;
    return k;
}

/* An event's end as exported: an op in flight runs until now. */
static uint64_t event_end(const struct trace_model *m, const struct trace_event *e)
{
    return trace_event_end_at(e, trace_model_now(m));
}

/* A token in start order (ties: in model order). */
struct token_at {
    uint64_t start;
    size_t i;
};

static int cmp_token(const void *a, const void *b)
{
    const struct token_at *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void plan_lanes(const struct trace_model *m, struct layout *L)
{
    size_t nt = trace_model_track_count(m);
    uint64_t ne = trace_model_event_count(m);
    L->tid = sim_xcalloc(nt ? nt : 1, sizeof(*L->tid));
    L->lanes = sim_xcalloc(nt ? nt : 1, sizeof(*L->lanes));
    L->ev_lane = sim_xcalloc(ne ? ne : 1, sizeof(*L->ev_lane));
    uint64_t *lane_end = NULL;
    uint32_t cap = 0, next_tid = 3; /* 1 and 2: the PREFILL and DECODE threads */
    for (uint32_t t = 0; t < nt; t++) {
        const uint32_t *idx;
        size_t n = trace_model_track_events(m, t, &idx);
        uint32_t lanes = 0;
        for (size_t k = 0; k < n; k++) {
            const struct trace_event *e = trace_model_event(m, idx[k]);
            L->ev_lane[idx[k]] = take_lane(e->start, event_end(m, e), &lane_end, &lanes, &cap);
        }
        L->lanes[t] = lanes ? lanes : 1;
        L->tid[t] = next_tid;
        next_tid += L->lanes[t];
    }
    /* tokens: a lane set per phase, in start order */
    size_t nk = trace_model_token_count(m);
    struct token_at *order = sim_xcalloc(nk ? nk : 1, sizeof(*order));
    for (size_t i = 0; i < nk; i++)
        order[i] = (struct token_at){trace_model_token(m, i)->start, i};
    qsort(order, nk, sizeof(*order), cmp_token);
    L->tok_lane = sim_xcalloc(nk ? nk : 1, sizeof(*L->tok_lane));
    uint64_t *tok_end[2] = {NULL, NULL};
    uint32_t tok_cap[2] = {0, 0}, tok_n[2] = {0, 0};
    for (size_t k = 0; k < nk; k++) {
        const struct trace_token *tk = trace_model_token(m, order[k].i);
        int ph = tk->decode ? 1 : 0;
        L->tok_lane[order[k].i] =
            take_lane(tk->start, tk->end, &tok_end[ph], &tok_n[ph], &tok_cap[ph]);
    }
    /* PREFILL keeps thread 1 and DECODE thread 2; their further lanes come after */
    L->tok_tid[0] = 1;
    L->tok_tid[1] = 2;
    for (int ph = 0; ph < 2; ph++)
        L->tok_lanes[ph] = tok_n[ph] ? tok_n[ph] : 1;
    free(order);
    free(tok_end[0]);
    free(tok_end[1]);
    free(lane_end);
}

/* The thread of lane `lane` of the PREFILL (ph 0) or DECODE (ph 1) tokens: lane 0 is thread
 * 1 or 2, further lanes follow, PREFILL's first. */
static uint64_t token_tid(const struct layout *L, int ph, uint32_t lane)
{
    if (lane == 0)
        return L->tok_tid[ph];
    return 2 + (ph ? L->tok_lanes[0] - 1 : 0) + lane;
}

/* sipN of a track name "sipN.cube0...", or -1. */
static int sip_of(const char *name)
{
    if (strncmp(name, "sip", 3) != 0)
        return -1;
    char *end;
    long n = strtol(name + 3, &end, 10);
    if (end == name + 3 || (*end != '.' && *end) || n < 0 || n > 100000)
        return -1;
    return (int)n;
}

static void plan(const struct trace_model *m, struct layout *L)
{
    size_t nt = trace_model_track_count(m);
    L->pid = sim_xcalloc(nt ? nt : 1, sizeof(*L->pid));
    L->nsips = 0;
    bool other = false;
    for (uint32_t t = 0; t < nt; t++) {
        int s = sip_of(trace_model_str(m, trace_model_track_get(m, t)->name));
        if (s >= L->nsips)
            L->nsips = s + 1;
        other |= s < 0;
    }
    L->other_pid = other ? L->nsips + 1 : 0;
    for (uint32_t t = 0; t < nt; t++) {
        int s = sip_of(trace_model_str(m, trace_model_track_get(m, t)->name));
        L->pid[t] = (uint32_t)(s >= 0 ? s + 1 : L->other_pid);
    }
    int next = (other ? L->other_pid : L->nsips) + 1;
    L->token_pid = next++;
    L->dram_pid = next++;
    L->res_pid = next;
    plan_lanes(m, L);
}

enum { TIME_CACHE_BITS = 12 };

/* A time printed (out_time): the bits of its double and its text. */
struct time_text {
    uint64_t bits;
    uint8_t n; /* 0: empty */
    char s[31];
};

struct out {
    struct trace_out o;
    bool first;
    double us_per_cycle;
    struct trace_detsrc *src;                      /* the events' details, or NULL: the model's */
    struct time_text times[1u << TIME_CACHE_BITS]; /* by a hash of the bits */
};

static void begin(struct out *w)
{
    trace_out_lit(&w->o, w->first ? "\n{" : ",\n{");
    w->first = false;
}

static void num_field(struct out *w, const char *k, uint64_t v)
{
    trace_out_lit(&w->o, k);
    trace_out_u64(&w->o, v);
}

/*
 * trace_out_double(o, v) for a time in microseconds, in fewer steps for the times that
 * need 16 or 17 significant digits (cycles times a clock's period mostly do):
 * trace_fmt_double prints the fewest digits that read back; when 15 do not, none fewer do
 * (more digits never read back worse), nor do the 3 decimals of its fast path.
 */
static size_t fmt_time(char *p, double v)
{
    char tmp[48];
    if (!isfinite(v) || fabs(v) >= 1e12)
        return trace_fmt_double(p, v);
    snprintf(tmp, sizeof(tmp), "%.15g", v);
    if (strtod(tmp, NULL) == v)
        return trace_fmt_double(p, v);
    int n = snprintf(tmp, sizeof(tmp), "%.16g", v);
    if (strtod(tmp, NULL) != v)
        n = snprintf(tmp, sizeof(tmp), "%.17g", v);
    if (!strpbrk(tmp, ".e"))
        tmp[n++] = '.', tmp[n++] = '0';
    memcpy(p, tmp, (size_t)n);
    return (size_t)n;
}

/* A time as text, through the cache of the times printed last (durations repeat). */
static void out_time(struct out *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    struct time_text *c = &w->times[(bits * 0x9E3779B97F4A7C15ull) >> (64 - TIME_CACHE_BITS)];
    if (!c->n || c->bits != bits) {
        char tmp[64];
        size_t n = fmt_time(tmp, v);
        if (n > sizeof(c->s)) {
            trace_out_raw(&w->o, tmp, n);
            return;
        }
        memcpy(c->s, tmp, n);
        c->n = (uint8_t)n, c->bits = bits;
    }
    trace_out_raw(&w->o, c->s, c->n);
}

static void ts_field(struct out *w, const char *k, uint64_t cycles)
{
    trace_out_lit(&w->o, k);
    out_time(w, (double)cycles * w->us_per_cycle);
}

/*
 * ts and dur of a slice over cycles [start, end) (end exclusive, as everywhere in a trace):
 * dur is the difference of the two instants in microseconds, so a slice ending at cycle c
 * ends where one starting at c starts.
 */
static void span_fields(struct out *w, uint64_t start, uint64_t end)
{
    double ts = (double)start * w->us_per_cycle, te = (double)end * w->us_per_cycle;
    trace_out_lit(&w->o, ",\"ts\":");
    out_time(w, ts);
    trace_out_lit(&w->o, ",\"dur\":");
    out_time(w, te - ts);
}

static void name_meta(struct out *w, const char *what, uint32_t pid, uint64_t tid, const char *name,
                      size_t len)
{
    begin(w);
    trace_out_lit(&w->o, "\"ph\":\"M\",\"name\":\"");
    trace_out_lit(&w->o, what);
    num_field(w, "\",\"pid\":", pid);
    num_field(w, ",\"tid\":", tid);
    trace_out_lit(&w->o, ",\"args\":{\"name\":");
    trace_out_str(&w->o, name, len);
    trace_out_lit(&w->o, "}}");
}

static void sort_meta(struct out *w, uint32_t pid, uint64_t tid, uint64_t index)
{
    begin(w);
    num_field(w, "\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":", pid);
    num_field(w, ",\"tid\":", tid);
    num_field(w, ",\"args\":{\"sort_index\":", index);
    trace_out_lit(&w->o, "}}");
}

/* A lane's thread: named after its track (lane 0) or "NAME (k+1)", sorted by index. */
static void lane_meta(struct out *w, uint32_t pid, uint64_t tid, const char *name, size_t len,
                      uint32_t lane, uint64_t index)
{
    if (lane == 0) {
        name_meta(w, "thread_name", pid, tid, name, len);
    } else {
        char *n = sim_xmalloc(len + 16);
        memcpy(n, name, len);
        int k = snprintf(n + len, 16, " (%u)", lane + 1);
        name_meta(w, "thread_name", pid, tid, n, len + (size_t)k);
        free(n);
    }
    sort_meta(w, pid, tid, index);
}

/* The engine events [a, b) of m, into w. */
static void engine_range(struct out *w, const struct trace_model *m, const struct layout *L,
                         uint64_t a, uint64_t b)
{
    for (uint64_t i = a; i < b; i++) {
        const struct trace_event *e = trace_model_event(m, i);
        uint64_t end = event_end(m, e);
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"X\",\"name\":");
        trace_out_str(&w->o, trace_model_str(m, e->op), trace_model_str_len(m, e->op));
        trace_out_lit(&w->o, ",\"cat\":\"");
        trace_out_lit(&w->o, trace_op_kind_name((enum trace_op_kind)e->op_kind));
        num_field(w, "\",\"pid\":", L->pid[e->track]);
        num_field(w, ",\"tid\":", (uint64_t)L->tid[e->track] + L->ev_lane[i]);
        span_fields(w, e->start, end);
        num_field(w, ",\"args\":{\"start_cycle\":", e->start);
        num_field(w, ",\"end_cycle\":", end);
        if (e->cmdq_id != TRACE_NO_CMDQ) {
            trace_out_lit(&w->o, ",\"cmdq_id\":");
            trace_out_i64(&w->o, e->cmdq_id);
        }
        if (e->layer != TRACE_NO_STR) {
            trace_out_lit(&w->o, ",\"layer_id\":");
            trace_out_str(&w->o, trace_model_str(m, e->layer), trace_model_str_len(m, e->layer));
        }
        if (e->tile != TRACE_NO_STR) {
            trace_out_lit(&w->o, ",\"tile_id\":");
            trace_out_str(&w->o, trace_model_str(m, e->tile), trace_model_str_len(m, e->tile));
        }
        trace_detsrc_write(w->src, m, i, ",\"details\":", &w->o);
        trace_out_lit(&w->o, "}}");
    }
}

/*
 * The engine events on two threads (most of an export's time: formatting numbers, copying
 * each event's details): pieces of PIECE events, each taken in turn by whichever thread is
 * free, formatted into a buffer of its own (PIECES of them, a piece's at its index modulo
 * PIECES), and the buffers written to the file in order by the calling thread, between its
 * own pieces. Each thread has its own struct out (its cache of times, its reader of the
 * details), so the text is the same as on one thread. From PAR_MIN events.
 */
enum { PIECE = 1 << 14, PIECES = 4, PAR_MIN = 1 << 17 };

struct par {
    const struct trace_model *m;
    const struct layout *L;
    uint64_t n, npieces;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next;    /* the next piece to take */
    uint64_t written; /* the pieces written to the file */
    struct {
        struct trace_out o; /* in memory */
        bool ready;         /* formatted: its text in o */
    } buf[PIECES];
    struct out *helper; /* owned: the second thread's */
};

/* Whether a piece is left to take and its buffer is free (p->mu held). */
static bool par_free(const struct par *p)
{
    return p->next < p->npieces && p->next < p->written + PIECES;
}

/* Take the next piece when its buffer is free (false: none left to take). */
static bool par_take(struct par *p, uint64_t *k)
{
    pthread_mutex_lock(&p->mu);
    while (p->next < p->npieces && !par_free(p))
        pthread_cond_wait(&p->cv, &p->mu);
    bool got = p->next < p->npieces;
    if (got)
        *k = p->next++;
    pthread_mutex_unlock(&p->mu);
    return got;
}

/* Format piece k with w into its buffer, then say it is ready. */
static void par_format(struct par *p, struct out *w, uint64_t k)
{
    struct trace_out *o = &p->buf[k % PIECES].o;
    struct trace_out keep = w->o;
    w->o = *o; /* (w's text goes to the piece's buffer meanwhile) */
    uint64_t a = k * PIECE, b = a + PIECE < p->n ? a + PIECE : p->n;
    engine_range(w, p->m, p->L, a, b);
    *o = w->o;
    w->o = keep;
    pthread_mutex_lock(&p->mu);
    p->buf[k % PIECES].ready = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *par_helper(void *arg)
{
    struct par *p = arg;
    uint64_t k;
    while (par_take(p, &k))
        par_format(p, p->helper, k);
    return NULL;
}

/* The calling thread's part: the pieces written to w's file in order, each as soon as it is
 * ready (first), and pieces taken and formatted while the next to write is not ready. */
static void par_run(struct par *p, struct out *w)
{
    pthread_mutex_lock(&p->mu);
    while (p->written < p->npieces) {
        uint64_t k = p->written;
        if (p->buf[k % PIECES].ready) {
            pthread_mutex_unlock(&p->mu);
            struct trace_out *o = &p->buf[k % PIECES].o; /* (this thread's until written) */
            trace_out_raw(&w->o, o->buf, o->len);
            o->len = 0;
            pthread_mutex_lock(&p->mu);
            p->buf[k % PIECES].ready = false;
            p->written++;
            pthread_cond_broadcast(&p->cv); /* (its buffer free for the piece PIECES on) */
        } else if (par_free(p)) {
            k = p->next++;
            pthread_mutex_unlock(&p->mu);
            par_format(p, w, k);
            pthread_mutex_lock(&p->mu);
        } else {
            pthread_cond_wait(&p->cv, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
}

/* The engine events of m into w: on two threads when threads is 2 or more, or 0 and there are
 * PAR_MIN events or more (details read from trace_path, as w's, when it is not NULL). */
static void engine_events(struct out *w, const struct trace_model *m, const struct layout *L,
                          const char *trace_path, unsigned threads)
{
    uint64_t n = trace_model_event_count(m);
    struct par *p = NULL;
    if (n && (threads >= 2 || (threads == 0 && n >= PAR_MIN))) {
        p = sim_xcalloc(1, sizeof(*p));
        *p = (struct par){.m = m, .L = L, .n = n, .npieces = (n + PIECE - 1) / PIECE};
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->cv, NULL);
        for (int i = 0; i < PIECES; i++)
            trace_out_open_mem(&p->buf[i].o);
        p->helper = sim_xcalloc(1, sizeof(*p->helper)); /* (its cache of times is large) */
        p->helper->us_per_cycle = w->us_per_cycle;
        p->helper->src = trace_path && w->src ? trace_detsrc_open(trace_path) : NULL;
    }
    pthread_t th;
    if (!p || pthread_create(&th, NULL, par_helper, p) != 0) {
        engine_range(w, m, L, 0, n); /* (no second thread: this one alone) */
    } else {
        par_run(p, w);
        pthread_join(th, NULL);
    }
    if (!p)
        return;
    for (int i = 0; i < PIECES; i++)
        trace_out_abort(&p->buf[i].o);
    trace_detsrc_close(p->helper->src);
    free(p->helper);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

static void markers(struct out *w, const struct trace_model *m, const struct layout *L)
{
    size_t nt = trace_model_track_count(m);
    for (size_t i = 0; i < trace_model_marker_count(m); i++) {
        const struct trace_marker *k = trace_model_marker(m, i);
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"i\",\"name\":");
        trace_out_str(&w->o, trace_model_str(m, k->name), trace_model_str_len(m, k->name));
        trace_out_lit(&w->o, ",\"cat\":\"marker\"");
        if (k->track < nt) { /* on its track */
            num_field(w, ",\"s\":\"t\",\"pid\":", L->pid[k->track]);
            num_field(w, ",\"tid\":", (uint64_t)L->tid[k->track]);
        } else { /* across the whole trace */
            num_field(w, ",\"s\":\"g\",\"pid\":", (uint64_t)L->token_pid);
            trace_out_lit(&w->o, ",\"tid\":0");
        }
        ts_field(w, ",\"ts\":", k->cycle);
        if (k->details) {
            trace_out_lit(&w->o, ",\"args\":");
            trace_out_value(&w->o, k->details);
        }
        trace_out_char(&w->o, '}');
    }
}

static void tokens(struct out *w, const struct trace_model *m, const struct layout *L)
{
    for (size_t i = 0; i < trace_model_token_count(m); i++) {
        const struct trace_token *t = trace_model_token(m, i);
        char name[64];
        int n = snprintf(name, sizeof(name), "%s token %lld", t->decode ? "DECODE" : "PREFILL",
                         (long long)t->token_index);
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"X\",\"name\":");
        trace_out_str(&w->o, name, (size_t)n);
        trace_out_lit(&w->o, t->decode ? ",\"cat\":\"DECODE\"" : ",\"cat\":\"PREFILL\"");
        num_field(w, ",\"pid\":", (uint64_t)L->token_pid);
        num_field(w, ",\"tid\":", token_tid(L, t->decode ? 1 : 0, L->tok_lane[i]));
        span_fields(w, t->start, t->end);
        trace_out_lit(&w->o, ",\"args\":{\"token_index\":");
        trace_out_i64(&w->o, t->token_index);
        num_field(w, ",\"start_cycle\":", t->start);
        num_field(w, ",\"end_cycle\":", t->end);
        if (t->details) {
            trace_out_lit(&w->o, ",\"details\":");
            trace_out_value(&w->o, t->details);
        }
        trace_out_lit(&w->o, "}}");
    }
}

static void counter(struct out *w, const struct layout *L, uint64_t cycle, double rd, double wr)
{
    begin(w);
    trace_out_lit(&w->o, "\"ph\":\"C\",\"name\":\"DRAM bytes/cycle\"");
    num_field(w, ",\"pid\":", (uint64_t)L->dram_pid);
    ts_field(w, ",\"ts\":", cycle);
    trace_out_lit(&w->o, ",\"args\":{\"read\":");
    trace_out_double(&w->o, rd);
    trace_out_lit(&w->o, ",\"write\":");
    trace_out_double(&w->o, wr);
    trace_out_lit(&w->o, "}}");
}

static void bandwidth(struct out *w, const struct trace_model *m, const struct layout *L,
                      uint64_t window)
{
    struct trace_bw_sample *s;
    size_t n = trace_metrics_bandwidth(m, window, &s);
    for (size_t i = 0; i < n; i++) {
        double win = s[i].window ? (double)s[i].window : 1;
        counter(w, L, s[i].cycle, (double)s[i].read_bytes / win, (double)s[i].write_bytes / win);
        uint64_t end = s[i].cycle + s[i].window;
        if (i + 1 == n || s[i + 1].cycle > end) /* back to zero until the next sample */
            counter(w, L, end, 0, 0);
    }
    free(s);
}

/* ---- each HBM's and link's bandwidth ------------------------------------------------------ */

/* A resource sample in (resource, cycle) order. */
struct res_at {
    uint32_t resource;
    uint64_t cycle;
    size_t i;
};

static int cmp_res(const void *a, const void *b)
{
    const struct res_at *x = a, *y = b;
    if (x->resource != y->resource)
        return x->resource < y->resource ? -1 : 1;
    if (x->cycle != y->cycle)
        return x->cycle < y->cycle ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void res_counter(struct out *w, const struct trace_model *m, const struct layout *L,
                        uint32_t res, uint64_t cycle, double rd, double wr)
{
    begin(w);
    trace_out_lit(&w->o, "\"ph\":\"C\",\"name\":");
    char name[256];
    int n = snprintf(name, sizeof(name), "%.*s bytes/cycle", (int)trace_model_str_len(m, res),
                     trace_model_str(m, res));
    trace_out_str(&w->o, name, n < (int)sizeof(name) ? (size_t)n : sizeof(name) - 1);
    trace_out_lit(&w->o, ",\"cat\":\"bandwidth\"");
    num_field(w, ",\"pid\":", (uint64_t)L->res_pid);
    ts_field(w, ",\"ts\":", cycle);
    trace_out_lit(&w->o, ",\"args\":{\"read\":");
    trace_out_double(&w->o, rd);
    trace_out_lit(&w->o, ",\"write\":");
    trace_out_double(&w->o, wr);
    trace_out_lit(&w->o, "}}");
}

/* A counter per resource (an HBM, a link) from its samples, back to zero after a gap.
 * Returns how many resources there were. */
static size_t resource_bandwidth(struct out *w, const struct trace_model *m, const struct layout *L)
{
    size_t ns = trace_model_bw_sample_count(m), k = 0;
    struct res_at *v = sim_xcalloc(ns ? ns : 1, sizeof(*v));
    for (size_t i = 0; i < ns; i++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, i);
        if (!trace_bw_sample_is_dram(s))
            v[k++] = (struct res_at){s->resource, s->cycle, i};
    }
    if (k)
        qsort(v, k, sizeof(*v), cmp_res);
    size_t nres = 0;
    for (size_t j = 0; j < k; j++) {
        const struct trace_bw_sample *s = trace_model_bw_sample(m, v[j].i);
        nres += j == 0 || v[j - 1].resource != s->resource;
        double win = s->window ? (double)s->window : 1;
        res_counter(w, m, L, s->resource, s->cycle, (double)s->read_bytes / win,
                    (double)s->write_bytes / win);
        uint64_t end = s->cycle + s->window;
        if (j + 1 == k || v[j + 1].resource != s->resource || v[j + 1].cycle > end)
            res_counter(w, m, L, s->resource, end, 0, 0);
    }
    free(v);
    return nres;
}

/* ---- flows: dependency_ids and each launch's critical path -------------------------------- */

/*
 * One arrow from the slice of event from to that of event to (v1 flow events: "s" inside
 * the first slice, "f" with "bp": "e" inside the second, bound to the slices enclosing
 * their times; each pair has an id of its own within its category).
 */
static void flow(struct out *w, const struct trace_model *m, const struct layout *L,
                 const char *cat, const char *name, uint64_t id, uint64_t from, uint64_t to)
{
    static const char *const ph[2] = {"s", "f"};
    uint64_t ev[2] = {from, to};
    for (int k = 0; k < 2; k++) {
        const struct trace_event *e = trace_model_event(m, ev[k]);
        begin(w);
        trace_out_lit(&w->o, "\"ph\":\"");
        trace_out_lit(&w->o, ph[k]);
        trace_out_lit(&w->o, k ? "\",\"bp\":\"e\",\"name\":" : "\",\"name\":");
        trace_out_str(&w->o, name, strlen(name));
        trace_out_lit(&w->o, ",\"cat\":\"");
        trace_out_lit(&w->o, cat);
        num_field(w, "\",\"id\":", id);
        num_field(w, ",\"pid\":", L->pid[e->track]);
        num_field(w, ",\"tid\":", (uint64_t)L->tid[e->track] + L->ev_lane[ev[k]]);
        ts_field(w, ",\"ts\":", e->start);
        trace_out_char(&w->o, '}');
    }
}

/* An arrow from each event to every event it depends on (dependency_ids). */
static void dependency_flows(struct out *w, const struct trace_model *m, const struct layout *L)
{
    uint64_t id = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++) {
        const uint64_t *on;
        size_t n = trace_model_event_deps(m, i, &on);
        for (size_t k = 0; k < n; k++)
            if (on[k] < trace_model_event_count(m))
                flow(w, m, L, "dependency", "dependency", ++id, on[k], i);
    }
}

/* The path judged of launch x: the one item of the verdict for the same launch (its cmdq_id,
 * occurrence and span), when it has a path; else NULL. */
static const struct trace_critpath *judged_path(const struct trace_verdict *v,
                                                const struct trace_region *x)
{
    const struct trace_critpath *p = NULL;
    for (size_t i = 0; v && i < v->nlaunches; i++) {
        const struct trace_region *y = v->launches[i].region;
        if (y->cmdq_id == x->cmdq_id && y->occurrence == x->occurrence && y->start == x->start &&
            y->end == x->end) {
            if (p)
                return NULL; /* two: which one is not known */
            p = &v->launches[i].path;
        }
    }
    return p && p->n ? p : NULL;
}

/* The events of each of rs's nr regions, grouped by a counting sort: region r's are
 * (*evs)[first[r], first[r + 1]). Returns first (nr + 1 entries); both are the caller's. */
static size_t *group_events(const struct trace_model *m, const struct trace_regions *rs, size_t nr,
                            uint64_t **evs)
{
    uint64_t ne = trace_model_event_count(m);
    size_t *first = sim_xcalloc(nr + 1, sizeof(*first));
    for (uint64_t i = 0; i < ne; i++) {
        size_t r = trace_regions_of_event(rs, i);
        if (r < nr)
            first[r + 1]++;
    }
    for (size_t r = 0; r < nr; r++)
        first[r + 1] += first[r];
    *evs = sim_xcalloc(first[nr] ? first[nr] : 1, sizeof(**evs));
    size_t *fill = sim_xcalloc(nr ? nr : 1, sizeof(*fill));
    for (uint64_t i = 0; i < ne; i++) {
        size_t r = trace_regions_of_event(rs, i);
        if (r < nr)
            (*evs)[first[r] + fill[r]++] = i;
    }
    free(fill);
    return first;
}

/* The critical path of each kernel launch as a chain of arrows, one step to the next (taken
 * from judged when it has that launch's; the events grouped by launch only when some
 * launch's path is to be computed). */
static void critical_paths(struct out *w, const struct trace_model *m, const struct layout *L,
                           const struct trace_verdict *judged)
{
    /* names, starts and which launch each event is in: the split alone, not accounted */
    struct trace_regions *rs = trace_regions_new_split(m, TRACE_REGION_LAUNCH);
    size_t nr = trace_regions_count(rs);
    const struct trace_critpath **jps = sim_xcalloc(nr ? nr : 1, sizeof(*jps));
    bool compute = false;
    for (size_t r = 0; r < nr; r++)
        compute |= !(jps[r] = judged_path(judged, trace_regions_get(rs, r)));
    uint64_t *evs = NULL;
    size_t *first = compute ? group_events(m, rs, nr, &evs) : NULL;
    uint64_t id = 0;
    for (size_t r = 0; r < nr; r++) {
        const struct trace_region *x = trace_regions_get(rs, r);
        struct trace_critpath own = {0};
        const struct trace_critpath *pp = jps[r] ? jps[r] : &own;
        if (!jps[r]) {
            struct trace_critpath_input in = {.m = m,
                                              .events = evs + first[r],
                                              .n = first[r + 1] - first[r],
                                              .start = x->start,
                                              /* (as the viewer's path: the verdict's) */
                                              .with_details = trace_critpath_details_bounded};
            in.each_ctx = &in.n;
            trace_critpath_compute(&in, &own);
        }
        char name[160];
        if (x->occurrence)
            snprintf(name, sizeof(name), "critical path: %s #%u", x->name, x->occurrence + 1);
        else
            snprintf(name, sizeof(name), "critical path: %s", x->name);
        for (size_t k = 1; k < pp->n; k++)
            flow(w, m, L, "critical_path", name, ++id, pp->steps[k - 1].ev, pp->steps[k].ev);
        if (!jps[r])
            trace_critpath_fini(&own);
    }
    free(jps);
    free(evs);
    free(first);
    trace_regions_free(rs);
}

int trace_chrome_write(const struct trace_model *m, const char *path, uint64_t bw_window,
                       struct diag *d)
{
    return trace_chrome_export(m, NULL, path, bw_window, d);
}

int trace_chrome_export(const struct trace_model *m, const char *trace_path, const char *path,
                        uint64_t bw_window, struct diag *d)
{
    return trace_chrome_export_with(m, trace_path, path, bw_window, 0, NULL, d);
}

int trace_chrome_export_with(const struct trace_model *m, const char *trace_path, const char *path,
                             uint64_t bw_window, unsigned threads,
                             const struct trace_verdict *judged, struct diag *d)
{
    struct out *w = sim_xcalloc(1, sizeof(*w)); /* the cache of times is large */
    w->first = true;
    int rc = trace_out_open(&w->o, path, d);
    if (rc < 0) {
        free(w);
        return rc;
    }
    w->src = trace_path ? trace_detsrc_open(trace_path) : NULL;
    double ghz = trace_model_clock_ghz(m);
    w->us_per_cycle = 1.0 / ((ghz > 0 ? ghz : 1.0) * 1000.0);
    struct layout L;
    plan(m, &L);

    trace_out_lit(&w->o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    char name[32];
    for (int s = 0; s < L.nsips; s++) {
        int n = snprintf(name, sizeof(name), "sip%d", s);
        name_meta(w, "process_name", (uint32_t)s + 1, 0, name, (size_t)n);
    }
    if (L.other_pid)
        name_meta(w, "process_name", (uint32_t)L.other_pid, 0, L.nsips ? "other" : "npu",
                  strlen(L.nsips ? "other" : "npu"));
    name_meta(w, "process_name", (uint32_t)L.token_pid, 0, "tokens and markers", 18);
    name_meta(w, "process_name", (uint32_t)L.dram_pid, 0, "DRAM", 4);
    name_meta(w, "process_name", (uint32_t)L.res_pid, 0, "HBMs and links", 14);
    static const char *const phase[2] = {"PREFILL", "DECODE"};
    for (int ph = 0; ph < 2; ph++)
        for (uint32_t k = 0; k < L.tok_lanes[ph]; k++)
            lane_meta(w, (uint32_t)L.token_pid, token_tid(&L, ph, k), phase[ph], strlen(phase[ph]),
                      k, (ph ? L.tok_lanes[0] : 0) + k);
    for (uint32_t t = 0; t < trace_model_track_count(m); t++) {
        uint32_t nm = trace_model_track_get(m, t)->name;
        for (uint32_t k = 0; k < L.lanes[t]; k++)
            lane_meta(w, L.pid[t], (uint64_t)L.tid[t] + k, trace_model_str(m, nm),
                      trace_model_str_len(m, nm), k, L.tid[t] + k);
    }
    engine_events(w, m, &L, trace_path, threads);
    markers(w, m, &L);
    tokens(w, m, &L);
    bandwidth(w, m, &L, bw_window);
    resource_bandwidth(w, m, &L);
    dependency_flows(w, m, &L);
    critical_paths(w, m, &L, judged);
    trace_out_lit(&w->o, "\n]}\n");
    free(L.pid);
    free(L.tid);
    free(L.lanes);
    free(L.ev_lane);
    free(L.tok_lane);
    trace_detsrc_close(w->src);
    rc = trace_out_commit(&w->o, d);
    free(w);
    return rc;
}
