/*
 * The model mirror (see mirror.h). A model message is a list of sections, each a kind
 * byte, a 4-byte length and its items (trace/wire/PROTOCOL.md lists them); a receiver skips a
 * section of a kind it does not know, so a later minor version can add some. The items
 * of a list section follow the index of its first item, which must be the receiver's
 * count: a gap or an overlap is an error, never a silent divergence.
 */
#include "trace/wire/mirror.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum section {
    SEC_HEAD = 1,  /* run_metadata, config_snapshot */
    SEC_STRINGS,   /* interned strings */
    SEC_TRACKS,    /* tracks */
    SEC_ENDS,      /* ends of events sent in flight */
    SEC_EVENTS,    /* ENGINE_EVENTs */
    SEC_TRANSFERS, /* DRAM transfers of events */
    SEC_MEM,       /* MEM_ACCESS_EVENTs */
    SEC_TOKENS,    /* TOKEN_EVENTs */
    SEC_MARKERS,   /* MARKER_EVENTs */
    SEC_BW,        /* bandwidth samples */
    SEC_NOW,       /* the model's "now" */
    SEC_BW_SET,    /* bandwidth samples that changed after they were sent */
    SEC_SITES,     /* call sites (2.1) */
    SEC_EV_SITES,  /* the call sites of events just sent (2.1) */
    SEC_ENERGY,    /* the energy block and the power samples, whole (2.2) */
};

/* A marker or memory access raised on no track (tracks travel as their index + 1). */
enum { NO_TRACK = 0 };

void trace_mirror_tx_fini(struct trace_mirror_tx *tx)
{
    free(tx->inflight);
    free(tx->power_hash);
    *tx = (struct trace_mirror_tx){0};
}

static bool ended_pending(const struct trace_mirror_tx *tx, const struct trace_model *m)
{
    for (size_t i = 0; i < tx->ninflight; i++)
        if (!(trace_model_event(m, tx->inflight[i])->flags & TRACE_EV_INFLIGHT))
            return true;
    return false;
}

/* Pending but for the energy. */
static bool lists_pending(const struct trace_mirror_tx *tx, const struct trace_model *m)
{
    return !tx->head_sent || tx->nstr < trace_model_str_count(m) ||
           (tx->nsites ? tx->nsites : 1) < trace_model_site_count(m) ||
           tx->ntracks < trace_model_track_count(m) || tx->nev < trace_model_event_count(m) ||
           tx->nxf < trace_model_transfer_count(m) || tx->nmem < trace_model_mem_access_count(m) ||
           tx->ntok < trace_model_token_count(m) || tx->nmk < trace_model_marker_count(m) ||
           tx->nbw < trace_model_bw_sample_count(m) || tx->bw_from < trace_model_bw_revs(m) ||
           !tx->now_sent || tx->now != trace_model_now(m) || ended_pending(tx, m);
}

bool trace_mirror_pending(const struct trace_mirror_tx *tx, const struct trace_model *m)
{
    return lists_pending(tx, m) || tx->energy_gen != trace_model_energy_gen(m);
}

/* ---- sending ------------------------------------------------------------------------------ */

struct enc {
    struct trace_wire_buf *b;
    size_t start, budget;
    size_t sec; /* where the open section starts */
};

static bool full(const struct enc *e)
{
    return e->b->len - e->start >= e->budget;
}

static void sec_begin(struct enc *e, enum section kind)
{
    e->sec = e->b->len;
    trace_wire_put_u8(e->b, (uint8_t)kind);
    trace_wire_put_raw(e->b, "\0\0\0\0", 4);
}

/* Close the open section; an empty one (nothing after its first index) is taken back. */
static void sec_end(struct enc *e, size_t min_len)
{
    size_t len = e->b->len - e->sec - 5;
    if (len <= min_len) {
        e->b->len = e->sec;
        return;
    }
    uint8_t *p = e->b->p + e->sec + 1;
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(len >> (8 * i));
}

static void put_inflight(struct trace_mirror_tx *tx, uint64_t ev)
{
    if (tx->ninflight == tx->capinflight) {
        tx->capinflight = tx->capinflight ? 2 * tx->capinflight : 64;
        tx->inflight = sim_xreallocarray(tx->inflight, tx->capinflight, sizeof(*tx->inflight));
    }
    tx->inflight[tx->ninflight++] = ev;
}

/* Strings and tracks: all of them, or nothing else may follow (they are named). */
static bool send_names(struct trace_mirror_tx *tx, const struct trace_model *m, struct enc *e)
{
    if (tx->nstr == 0)
        tx->nstr = 1; /* TRACE_NO_STR exists on both sides */
    uint32_t nstr = trace_model_str_count(m);
    if (tx->nstr < nstr) {
        sec_begin(e, SEC_STRINGS);
        trace_wire_put_uv(e->b, tx->nstr);
        while (tx->nstr < nstr && !full(e)) {
            trace_wire_put_bytes(e->b, trace_model_str(m, tx->nstr),
                                 trace_model_str_len(m, tx->nstr));
            tx->nstr++;
        }
        sec_end(e, 0);
        if (tx->nstr < nstr)
            return false;
    }
    if (tx->nsites == 0)
        tx->nsites = 1; /* TRACE_NO_SITE exists on both sides */
    uint32_t nsites = trace_model_site_count(m);
    if (tx->nsites < nsites) {
        sec_begin(e, SEC_SITES);
        trace_wire_put_uv(e->b, tx->nsites);
        while (tx->nsites < nsites && !full(e)) {
            const struct trace_site *st = trace_model_site_get(m, (uint16_t)tx->nsites);
            trace_wire_put_uv(e->b, st->file);
            trace_wire_put_uv(e->b, st->func);
            trace_wire_put_uv(e->b, st->line);
            tx->nsites++;
        }
        sec_end(e, 0);
        if (tx->nsites < nsites)
            return false;
    }
    uint32_t ntracks = (uint32_t)trace_model_track_count(m);
    if (tx->ntracks < ntracks) {
        sec_begin(e, SEC_TRACKS);
        trace_wire_put_uv(e->b, tx->ntracks);
        while (tx->ntracks < ntracks && !full(e)) {
            const struct trace_track *t = trace_model_track_get(m, tx->ntracks);
            trace_wire_put_uv(e->b, t->name);
            trace_wire_put_u8(e->b, (uint8_t)t->engine);
            trace_wire_put_sv(e->b, t->engine_id);
            tx->ntracks++;
        }
        sec_end(e, 0);
        if (tx->ntracks < ntracks)
            return false;
    }
    return true;
}

static void send_ends(struct trace_mirror_tx *tx, const struct trace_model *m, struct enc *e)
{
    sec_begin(e, SEC_ENDS);
    for (size_t i = 0; i < tx->ninflight && !full(e);) {
        const struct trace_event *ev = trace_model_event(m, tx->inflight[i]);
        if (ev->flags & TRACE_EV_INFLIGHT) {
            i++;
            continue;
        }
        trace_wire_put_uv(e->b, tx->inflight[i]);
        trace_wire_put_uv(e->b, ev->end - ev->start);
        tx->inflight[i] = tx->inflight[--tx->ninflight];
    }
    sec_end(e, 0);
}

static void send_events(struct trace_mirror_tx *tx, const struct trace_model *m, struct enc *e)
{
    uint64_t n = trace_model_event_count(m);
    if (tx->nev >= n)
        return;
    sec_begin(e, SEC_EVENTS);
    trace_wire_put_uv(e->b, tx->nev);
    uint64_t prev = 0, first = tx->nev;
    while (tx->nev < n && !full(e)) {
        const struct trace_event *ev = trace_model_event(m, tx->nev);
        bool inflight = ev->flags & TRACE_EV_INFLIGHT;
        trace_wire_put_uv(e->b, ev->track);
        trace_wire_put_uv(e->b, ev->op);
        trace_wire_put_uv(e->b, ev->layer);
        trace_wire_put_uv(e->b, ev->tile);
        trace_wire_put_sv(e->b, ev->cmdq_id);
        trace_wire_put_u8(e->b, ev->op_kind);
        trace_wire_put_u8(e->b, inflight ? 1 : 0);
        trace_wire_put_sv(e->b, (int64_t)(ev->start - prev));
        if (!inflight)
            trace_wire_put_uv(e->b, ev->end - ev->start);
        else
            put_inflight(tx, tx->nev);
        prev = ev->start;
        tx->nev++;
    }
    sec_end(e, 0);
    /* their call sites, when any has one (a viewer of 2.0 skips the section) */
    bool any = false;
    for (uint64_t i = first; i < tx->nev && !any; i++)
        any = trace_model_event(m, i)->site != TRACE_NO_SITE;
    if (!any)
        return;
    sec_begin(e, SEC_EV_SITES);
    trace_wire_put_uv(e->b, first);
    for (uint64_t i = first; i < tx->nev; i++)
        trace_wire_put_uv(e->b, trace_model_event(m, i)->site);
    sec_end(e, 0);
}

/* Samples sent before that changed since (a resource's window filling up, or widened). */
static void send_bw_changes(struct trace_mirror_tx *tx, const struct trace_model *m, struct enc *e)
{
    uint64_t revs = trace_model_bw_revs(m);
    if (tx->bw_from >= revs || !tx->nbw)
        return;
    if (tx->bw_scan == 0)
        tx->bw_upto = revs; /* a new pass: what changed up to now */
    sec_begin(e, SEC_BW_SET);
    for (; tx->bw_scan < tx->nbw && !full(e); tx->bw_scan++) {
        if (trace_model_bw_sample_rev(m, tx->bw_scan) <= tx->bw_from)
            continue;
        const struct trace_bw_sample *s = trace_model_bw_sample(m, tx->bw_scan);
        if (s->resource >= tx->nstr)
            break; /* its resource's name goes first */
        trace_wire_put_uv(e->b, tx->bw_scan);
        trace_wire_put_uv(e->b, s->cycle);
        trace_wire_put_uv(e->b, s->window);
        trace_wire_put_uv(e->b, s->read_bytes);
        trace_wire_put_uv(e->b, s->write_bytes);
        trace_wire_put_uv(e->b, s->resource);
    }
    sec_end(e, 0);
    if (tx->bw_scan == tx->nbw) { /* the pass is over */
        tx->bw_from = tx->bw_upto;
        tx->bw_scan = 0;
    }
}

/* The list sections after the events: each item names only what was sent before it. */
static void send_lists(struct trace_mirror_tx *tx, const struct trace_model *m, struct enc *e)
{
    size_t n = trace_model_transfer_count(m);
    if (tx->nxf < n && !full(e)) {
        sec_begin(e, SEC_TRANSFERS);
        trace_wire_put_uv(e->b, tx->nxf);
        size_t first = e->b->len;
        while (tx->nxf < n && !full(e)) {
            const struct trace_transfer *x = trace_model_transfer(m, tx->nxf);
            if (x->event >= tx->nev)
                break; /* its event goes first, in a later message */
            trace_wire_put_uv(e->b, x->event);
            trace_wire_put_uv(e->b, x->bytes);
            trace_wire_put_uv(e->b, x->flags);
            tx->nxf++;
        }
        sec_end(e, first - e->sec - 5);
    }
    n = trace_model_mem_access_count(m);
    if (tx->nmem < n && !full(e)) {
        sec_begin(e, SEC_MEM);
        trace_wire_put_uv(e->b, tx->nmem);
        while (tx->nmem < n && !full(e)) {
            const struct trace_mem_access *a = trace_model_mem_access(m, tx->nmem);
            trace_wire_put_uv(e->b, a->cycle);
            trace_wire_put_uv(e->b, a->addr);
            trace_wire_put_uv(e->b, a->bytes);
            trace_wire_put_uv(e->b, a->mem_type);
            trace_wire_put_uv(e->b, a->track == UINT32_MAX ? NO_TRACK : (uint64_t)a->track + 1);
            trace_wire_put_sv(e->b, a->cmdq_id);
            trace_wire_put_u8(e->b, a->write ? 1 : 0);
            tx->nmem++;
        }
        sec_end(e, 0);
    }
    n = trace_model_token_count(m);
    if (tx->ntok < n && !full(e)) {
        sec_begin(e, SEC_TOKENS);
        trace_wire_put_uv(e->b, tx->ntok);
        while (tx->ntok < n && !full(e)) {
            const struct trace_token *t = trace_model_token(m, tx->ntok);
            trace_wire_put_uv(e->b, t->start);
            trace_wire_put_uv(e->b, t->end - t->start);
            trace_wire_put_sv(e->b, t->token_index);
            trace_wire_put_u8(e->b, t->decode ? 1 : 0);
            trace_wire_put_value(e->b, t->details);
            tx->ntok++;
        }
        sec_end(e, 0);
    }
    n = trace_model_marker_count(m);
    if (tx->nmk < n && !full(e)) {
        sec_begin(e, SEC_MARKERS);
        trace_wire_put_uv(e->b, tx->nmk);
        while (tx->nmk < n && !full(e)) {
            const struct trace_marker *k = trace_model_marker(m, tx->nmk);
            trace_wire_put_uv(e->b, k->cycle);
            trace_wire_put_uv(e->b, k->name);
            trace_wire_put_uv(e->b, k->track == UINT32_MAX ? NO_TRACK : (uint64_t)k->track + 1);
            trace_wire_put_value(e->b, k->details);
            tx->nmk++;
        }
        sec_end(e, 0);
    }
    n = trace_model_bw_sample_count(m);
    if (tx->nbw < n && !full(e)) {
        sec_begin(e, SEC_BW);
        trace_wire_put_uv(e->b, tx->nbw);
        while (tx->nbw < n && !full(e)) {
            const struct trace_bw_sample *s = trace_model_bw_sample(m, tx->nbw);
            if (s->resource >= tx->nstr)
                break; /* its resource's name goes first */
            trace_wire_put_uv(e->b, s->cycle);
            trace_wire_put_uv(e->b, s->window);
            trace_wire_put_uv(e->b, s->read_bytes);
            trace_wire_put_uv(e->b, s->write_bytes);
            trace_wire_put_uv(e->b, s->resource);
            tx->nbw++;
        }
        sec_end(e, 0);
    }
}

/* FNV-1a of a power sample's bytes. */
static uint64_t sample_hash(const struct trace_power_sample *p)
{
    uint64_t h = 14695981039346656037u;
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < sizeof(*p); i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

static void put_sample(struct trace_wire_buf *out, const struct trace_power_sample *p)
{
    trace_wire_put_uv(out, p->cycle);
    trace_wire_put_uv(out, p->window);
    for (int k = 0; k < TRACE_POWER_KINDS; k++)
        trace_wire_put_f64(out, p->joules[k]);
}

/* The energy block and the power samples that changed since they were sent (a live run
 * recomputes them as it goes: the windows of ops that ended, the new ones, all of them when
 * the windows widen), as runs of consecutive samples. */
static void send_energy(struct trace_mirror_tx *tx, const struct trace_model *m, struct enc *e)
{
    struct trace_wire_buf *out = e->b;
    size_t n = trace_model_power_count(m);
    sec_begin(e, SEC_ENERGY);
    trace_wire_put_value(out, trace_model_energy(m));
    trace_wire_put_uv(out, n);
    if (n > tx->cappower_hash) {
        tx->power_hash = sim_xreallocarray(tx->power_hash, n, sizeof(*tx->power_hash));
        tx->cappower_hash = n;
    }
    for (size_t i = 0; i < n;) {
        uint64_t h = sample_hash(trace_model_power(m, i));
        if (i < tx->npower_hash && tx->power_hash[i] == h) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n) {
            uint64_t hj = j == i ? h : sample_hash(trace_model_power(m, j));
            if (j < tx->npower_hash && tx->power_hash[j] == hj)
                break;
            tx->power_hash[j++] = hj;
        }
        trace_wire_put_uv(out, i);
        trace_wire_put_uv(out, j - i);
        for (size_t k = i; k < j; k++)
            put_sample(out, trace_model_power(m, k));
        i = j;
    }
    tx->npower_hash = n;
    sec_end(e, 0);
    tx->energy_gen = trace_model_energy_gen(m);
}

bool trace_mirror_encode(struct trace_mirror_tx *tx, const struct trace_model *m,
                         struct trace_wire_buf *out, size_t budget)
{
    struct enc e = {out, out->len, budget, 0};
    if (!tx->head_sent) {
        sec_begin(&e, SEC_HEAD);
        trace_wire_put_value(out, trace_model_metadata(m));
        trace_wire_put_value(out, trace_model_config(m));
        sec_end(&e, 0);
        tx->head_sent = true;
    }
    /* "now" first: the model it is set on covers time from 0, as the run's does */
    uint64_t now = trace_model_now(m);
    if (!tx->now_sent || tx->now != now) {
        sec_begin(&e, SEC_NOW);
        trace_wire_put_uv(out, now);
        sec_end(&e, 0);
        tx->now = now;
        tx->now_sent = true;
    }
    if (!send_names(tx, m, &e))
        return false;
    if (tx->ninflight)
        send_ends(tx, m, &e);
    if (!full(&e))
        send_events(tx, m, &e);
    send_bw_changes(tx, m, &e);
    send_lists(tx, m, &e);
    /* the energy once the rest is sent (it sums them up) */
    if (!lists_pending(tx, m) && tx->energy_gen != trace_model_energy_gen(m))
        send_energy(tx, m, &e);
    return !trace_mirror_pending(tx, m);
}

/* ---- receiving ---------------------------------------------------------------------------- */

/* The first index of a list section must be what the model holds. */
static bool first_ok(struct trace_wire_rd *r, uint64_t have)
{
    uint64_t first = trace_wire_get_uv(r);
    if (trace_wire_rd_ok(r) && first != have)
        return trace_wire_rd_fail(r, "a list continues at the wrong index");
    return trace_wire_rd_ok(r);
}

static bool str_ok(const struct trace_model *m, uint64_t id)
{
    return id < trace_model_str_count(m);
}

static bool track_ok(const struct trace_model *m, uint64_t t)
{
    return t < trace_model_track_count(m);
}

static void apply_strings(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_str_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        size_t len;
        const uint8_t *s = trace_wire_get_bytes(r, UINT32_MAX - 1, &len);
        if (!s)
            return;
        if (trace_model_str_count(m) >= UINT32_MAX - 2) {
            trace_wire_rd_fail(r, "too many strings");
            return;
        }
        uint32_t want = trace_model_str_count(m);
        if (trace_model_intern(m, (const char *)s, len) != want) {
            trace_wire_rd_fail(r, "a string sent twice");
            return;
        }
    }
}

static void apply_tracks(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_track_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        uint64_t name = trace_wire_get_uv(r);
        uint8_t eng = trace_wire_get_u8(r);
        int64_t eid = trace_wire_get_sv(r);
        if (!trace_wire_rd_ok(r))
            return;
        if (!str_ok(m, name) || name == TRACE_NO_STR || eng >= TRACE_ENGINE_COUNT ||
            eid < INT32_MIN || eid > INT32_MAX || trace_model_track_count(m) >= UINT32_MAX - 1) {
            trace_wire_rd_fail(r, "a track with an unknown name or engine");
            return;
        }
        const char *s = trace_model_str(m, (uint32_t)name);
        if (strlen(s) != trace_model_str_len(m, (uint32_t)name)) {
            trace_wire_rd_fail(r, "a track name holds a NUL byte");
            return;
        }
        size_t want = trace_model_track_count(m);
        if (trace_model_track(m, s, (enum trace_engine)eng, (int32_t)eid) != want) {
            trace_wire_rd_fail(r, "a track sent twice");
            return;
        }
    }
}

static void apply_sites(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_site_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        uint64_t file = trace_wire_get_uv(r), func = trace_wire_get_uv(r);
        uint64_t line = trace_wire_get_uv(r);
        if (!trace_wire_rd_ok(r))
            return;
        if (!str_ok(m, file) || file == TRACE_NO_STR || !str_ok(m, func) || line > UINT32_MAX) {
            trace_wire_rd_fail(r, "a call site with an unknown file or function");
            return;
        }
        uint32_t want = trace_model_site_count(m);
        if (trace_model_site(m, (uint32_t)file, (uint32_t)func, (uint32_t)line) != want) {
            trace_wire_rd_fail(r, "a call site sent twice, or too many");
            return;
        }
    }
}

/* The sites of events [first, first + n): events and sites the model holds. */
static void apply_ev_sites(struct trace_model *m, struct trace_wire_rd *r)
{
    uint64_t i = trace_wire_get_uv(r);
    while (trace_wire_rd_ok(r) && trace_wire_rd_left(r)) {
        uint64_t site = trace_wire_get_uv(r);
        if (!trace_wire_rd_ok(r))
            return;
        if (i >= trace_model_event_count(m) || site >= trace_model_site_count(m)) {
            trace_wire_rd_fail(r, "the call site of an unknown event, or an unknown site");
            return;
        }
        trace_model_set_event_site(m, i++, (uint16_t)site);
    }
}

static void apply_ends(struct trace_model *m, struct trace_wire_rd *r)
{
    while (trace_wire_rd_left(r)) {
        uint64_t i = trace_wire_get_uv(r);
        uint64_t dur = trace_wire_get_uv(r);
        if (!trace_wire_rd_ok(r))
            return;
        if (i >= trace_model_event_count(m) ||
            !(trace_model_event(m, i)->flags & TRACE_EV_INFLIGHT)) {
            trace_wire_rd_fail(r, "the end of an event not in flight");
            return;
        }
        uint64_t start = trace_model_event(m, i)->start;
        if (dur > UINT64_MAX - start) {
            trace_wire_rd_fail(r, "an event ends beyond the end of time");
            return;
        }
        trace_model_end_event(m, i, start + dur);
    }
}

static void apply_events(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_event_count(m)))
        return;
    uint64_t prev = 0;
    while (trace_wire_rd_left(r)) {
        struct trace_event ev = {0};
        uint64_t track = trace_wire_get_uv(r), op = trace_wire_get_uv(r);
        uint64_t layer = trace_wire_get_uv(r), tile = trace_wire_get_uv(r);
        int64_t cmdq = trace_wire_get_sv(r);
        uint8_t kind = trace_wire_get_u8(r), inflight = trace_wire_get_u8(r);
        int64_t delta = trace_wire_get_sv(r);
        uint64_t dur = inflight == 0 ? trace_wire_get_uv(r) : 0;
        if (!trace_wire_rd_ok(r))
            return;
        uint64_t start = prev + (uint64_t)delta;
        if (!track_ok(m, track) || !str_ok(m, op) || !str_ok(m, layer) || !str_ok(m, tile) ||
            cmdq < INT32_MIN || cmdq > INT32_MAX || kind >= TRACE_KIND_COUNT || inflight > 1 ||
            (delta < 0 && (uint64_t)0 - (uint64_t)delta > prev) || (delta > 0 && start < prev) ||
            dur > UINT64_MAX - start || trace_model_event_count(m) >= UINT32_MAX - 1) {
            trace_wire_rd_fail(r, "an event that does not fit the model");
            return;
        }
        ev.track = (uint32_t)track;
        ev.op = (uint32_t)op;
        ev.layer = (uint32_t)layer;
        ev.tile = (uint32_t)tile;
        ev.cmdq_id = (int32_t)cmdq;
        ev.op_kind = kind;
        ev.start = start;
        ev.end = start + dur;
        ev.flags = inflight ? TRACE_EV_INFLIGHT : 0;
        ev.details = 0;
        trace_model_add_event(m, &ev);
        prev = start;
    }
}

static void apply_transfers(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_transfer_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        uint64_t ev = trace_wire_get_uv(r), bytes = trace_wire_get_uv(r);
        uint64_t flags = trace_wire_get_uv(r);
        if (!trace_wire_rd_ok(r))
            return;
        if (ev >= trace_model_event_count(m)) {
            trace_wire_rd_fail(r, "a transfer of an unknown event");
            return;
        }
        if (bytes > TRACE_XFER_BYTES_MAX || (flags & ~(uint64_t)TRACE_XFER_FLAGS)) {
            trace_wire_rd_fail(r, "a transfer no trace model holds");
            return;
        }
        struct trace_transfer x = {.bytes = bytes, .flags = flags, .event = (uint32_t)ev};
        trace_model_add_transfer(m, &x);
    }
}

/* A track reference: 0 none, else the track + 1. */
static bool opt_track(const struct trace_model *m, uint64_t t, uint32_t *out)
{
    if (t == NO_TRACK) {
        *out = UINT32_MAX;
        return true;
    }
    *out = (uint32_t)(t - 1);
    return track_ok(m, t - 1);
}

static void apply_mem(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_mem_access_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        struct trace_mem_access a = {0};
        a.cycle = trace_wire_get_uv(r);
        a.addr = trace_wire_get_uv(r);
        a.bytes = trace_wire_get_uv(r);
        uint64_t type = trace_wire_get_uv(r), track = trace_wire_get_uv(r);
        int64_t cmdq = trace_wire_get_sv(r);
        uint8_t write = trace_wire_get_u8(r);
        if (!trace_wire_rd_ok(r))
            return;
        if (!str_ok(m, type) || !opt_track(m, track, &a.track) || cmdq < INT32_MIN ||
            cmdq > INT32_MAX || write > 1) {
            trace_wire_rd_fail(r, "a memory access that does not fit the model");
            return;
        }
        a.mem_type = (uint32_t)type;
        a.cmdq_id = (int32_t)cmdq;
        a.write = write;
        trace_model_add_mem_access(m, &a);
    }
}

static void apply_tokens(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_token_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        struct trace_token t = {0};
        t.start = trace_wire_get_uv(r);
        uint64_t dur = trace_wire_get_uv(r);
        t.token_index = trace_wire_get_sv(r);
        uint8_t decode = trace_wire_get_u8(r);
        if (trace_wire_rd_ok(r) && (decode > 1 || dur > UINT64_MAX - t.start))
            trace_wire_rd_fail(r, "a token that does not fit the model");
        t.details = trace_wire_get_value(r);
        if (!trace_wire_rd_ok(r)) {
            sim_value_free(t.details);
            return;
        }
        t.end = t.start + dur;
        t.decode = decode;
        trace_model_add_token(m, &t);
    }
}

static void apply_markers(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_marker_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        struct trace_marker k = {0};
        k.cycle = trace_wire_get_uv(r);
        uint64_t name = trace_wire_get_uv(r), track = trace_wire_get_uv(r);
        if (trace_wire_rd_ok(r) && (!str_ok(m, name) || !opt_track(m, track, &k.track)))
            trace_wire_rd_fail(r, "a marker that does not fit the model");
        k.details = trace_wire_get_value(r);
        if (!trace_wire_rd_ok(r)) {
            sim_value_free(k.details);
            return;
        }
        k.name = (uint32_t)name;
        trace_model_add_marker(m, &k);
    }
}

static void apply_bw(struct trace_model *m, struct trace_wire_rd *r)
{
    if (!first_ok(r, trace_model_bw_sample_count(m)))
        return;
    while (trace_wire_rd_left(r)) {
        struct trace_bw_sample s;
        s.cycle = trace_wire_get_uv(r);
        s.window = trace_wire_get_uv(r);
        s.read_bytes = trace_wire_get_uv(r);
        s.write_bytes = trace_wire_get_uv(r);
        uint64_t res = trace_wire_get_uv(r);
        if (trace_wire_rd_ok(r) && !str_ok(m, res))
            trace_wire_rd_fail(r, "a bandwidth sample of an unknown resource");
        if (!trace_wire_rd_ok(r))
            return;
        s.resource = (uint32_t)res; /* TRACE_NO_STR: the whole DRAM */
        trace_model_add_bw_sample(m, &s);
    }
}

static void apply_bw_set(struct trace_model *m, struct trace_wire_rd *r)
{
    while (trace_wire_rd_left(r)) {
        uint64_t i = trace_wire_get_uv(r);
        struct trace_bw_sample s;
        s.cycle = trace_wire_get_uv(r);
        s.window = trace_wire_get_uv(r);
        s.read_bytes = trace_wire_get_uv(r);
        s.write_bytes = trace_wire_get_uv(r);
        uint64_t res = trace_wire_get_uv(r);
        if (trace_wire_rd_ok(r) && i >= trace_model_bw_sample_count(m))
            trace_wire_rd_fail(r, "a change to a bandwidth sample not sent");
        if (trace_wire_rd_ok(r) && !str_ok(m, res))
            trace_wire_rd_fail(r, "a bandwidth sample of an unknown resource");
        if (!trace_wire_rd_ok(r))
            return;
        s.resource = (uint32_t)res;
        trace_model_bw_sample_set(m, (size_t)i, &s);
    }
}

static void apply_head(struct trace_model *m, struct trace_wire_rd *r)
{
    struct sim_value *meta = trace_wire_get_value(r);
    struct sim_value *config = trace_wire_get_value(r);
    if (trace_wire_rd_ok(r) &&
        ((meta && meta->type != SIM_V_MAP) || (config && config->type != SIM_V_MAP)))
        trace_wire_rd_fail(r, "run_metadata or config_snapshot is not a map");
    if (!trace_wire_rd_ok(r)) {
        sim_value_free(meta);
        sim_value_free(config);
        return;
    }
    trace_model_set_metadata_take(m, meta);
    trace_model_set_config_take(m, config);
}

/* The energy (null: unknown) and the power samples: the count the run now has, then runs
 * of those that changed (every one the viewer does not hold yet among them). */
static void apply_energy(struct trace_model *m, struct trace_wire_rd *r)
{
    struct sim_value *energy = trace_wire_get_value(r);
    if (trace_wire_rd_ok(r) && energy && energy->type != SIM_V_MAP)
        trace_wire_rd_fail(r, "the energy is not a map");
    uint64_t n = trace_wire_get_uv(r);
    size_t held = trace_model_power_count(m);
    /* a sample takes at least 2 + 8 * 8 bytes: more new ones than the section holds is a lie */
    if (trace_wire_rd_ok(r) && n > held &&
        n - held > trace_wire_rd_left(r) / (2 + 8 * TRACE_POWER_KINDS))
        trace_wire_rd_fail(r, "more power samples than the section holds");
    if (!trace_wire_rd_ok(r)) {
        sim_value_free(energy);
        return;
    }
    struct trace_power_sample *s = n ? sim_xcalloc((size_t)n, sizeof(*s)) : NULL;
    for (size_t i = 0; i < held && i < n; i++)
        s[i] = *trace_model_power(m, i);
    uint64_t covered = held, next = 0; /* [held, covered): sent; runs ascend from next */
    while (trace_wire_rd_ok(r) && trace_wire_rd_left(r)) {
        uint64_t first = trace_wire_get_uv(r), k = trace_wire_get_uv(r);
        if (!trace_wire_rd_ok(r))
            break;
        if (first < next || k == 0 || first > n || k > n - first) {
            trace_wire_rd_fail(r, "a run of power samples out of order or range");
            break;
        }
        if (first > covered && covered < n) {
            trace_wire_rd_fail(r, "a power sample the viewer does not hold is missing");
            break;
        }
        for (uint64_t i = first; i < first + k && trace_wire_rd_ok(r); i++) {
            s[i].cycle = trace_wire_get_uv(r);
            s[i].window = trace_wire_get_uv(r);
            for (int j = 0; j < TRACE_POWER_KINDS; j++)
                s[i].joules[j] = trace_wire_get_f64(r);
        }
        next = first + k;
        if (next > covered)
            covered = next;
    }
    if (trace_wire_rd_ok(r) && covered < n)
        trace_wire_rd_fail(r, "a power sample the viewer does not hold is missing");
    for (size_t i = 1; i < n && trace_wire_rd_ok(r); i++)
        if (s[i].cycle < s[i - 1].cycle)
            trace_wire_rd_fail(r, "power samples out of cycle order");
    if (!trace_wire_rd_ok(r)) {
        sim_value_free(energy);
        free(s);
        return;
    }
    trace_model_set_energy_take(m, energy, s, (size_t)n);
}

int trace_mirror_apply(struct trace_model *m, const uint8_t *p, size_t len, struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, len);
    while (trace_wire_rd_left(&r)) {
        uint8_t kind = trace_wire_get_u8(&r);
        const uint8_t *l = trace_wire_get_raw(&r, 4);
        if (!l)
            break;
        size_t n = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
        const uint8_t *body = trace_wire_get_raw(&r, n);
        if (!body)
            break;
        struct trace_wire_rd s;
        trace_wire_rd_init(&s, body, n);
        switch (kind) {
        case SEC_HEAD: apply_head(m, &s); break;
        case SEC_STRINGS: apply_strings(m, &s); break;
        case SEC_TRACKS: apply_tracks(m, &s); break;
        case SEC_ENDS: apply_ends(m, &s); break;
        case SEC_EVENTS: apply_events(m, &s); break;
        case SEC_TRANSFERS: apply_transfers(m, &s); break;
        case SEC_MEM: apply_mem(m, &s); break;
        case SEC_TOKENS: apply_tokens(m, &s); break;
        case SEC_MARKERS: apply_markers(m, &s); break;
        case SEC_BW: apply_bw(m, &s); break;
        case SEC_BW_SET: apply_bw_set(m, &s); break;
        case SEC_SITES: apply_sites(m, &s); break;
        case SEC_EV_SITES: apply_ev_sites(m, &s); break;
        case SEC_ENERGY: apply_energy(m, &s); break;
        case SEC_NOW: {
            uint64_t now = trace_wire_get_uv(&s);
            if (trace_wire_rd_ok(&s) && trace_wire_rd_left(&s))
                trace_wire_rd_fail(&s, "trailing bytes");
            if (trace_wire_rd_ok(&s))
                trace_model_set_now(m, now);
            break;
        }
        default: break; /* a section of a later minor version */
        }
        if (!trace_wire_rd_ok(&s)) {
            trace_wire_rd_fail(&r, s.what);
            break;
        }
    }
    trace_model_finish(m);
    if (!trace_wire_rd_ok(&r))
        return diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "model message: %s", r.what);
    return 0;
}
