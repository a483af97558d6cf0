/*
 * The trace model (see model.h): interned strings in an arena with an open-addressing hash
 * table, a flat array of 48-byte ENGINE_EVENTs, and per track a sorted index with, every
 * TRACK_BLOCK positions, the running maximum of ends and the running length of the union of
 * the events so far (busy time of any window and seek in O(log n + TRACK_BLOCK), about one
 * byte per event). trace_model_finish brings the per-track structures up to date
 * incrementally: appended events in start order cost O(1) each and an ended in-flight event
 * re-scans the positions after it, so a live run can call it every frame.
 */
#include "trace/model/model.h"

#include "sim/chip/oplog.h"
#include "sim/chip/oppack.h"
#include "sim/util/xalloc.h"
#include "trace/model/budget.h"
#include "trace/model/format.h"
#include "trace/model/json.h"
#include "trace/model/model_impl.h"
#include "trace/model/spill.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(sizeof(struct trace_event) == 48, "an ENGINE_EVENT record is 48 bytes");
_Static_assert(sizeof(struct trace_transfer) == 12, "a transfer is 12 bytes");
/* What precedes packed details in the spill. */
struct spill_head {
    uint32_t len;
    double t_start_ns, t_end_ns;
};

enum {
    ARENA_CHUNK = 64 * 1024, /* strings are packed into chunks of this size */
    ARENA_BIG = 8 * 1024,    /* longer strings get a chunk of their own */
    FINISH_TWO = 1 << 20,    /* new events from which a finish sorts tracks on two threads */
    STAGE_NEAR = 64,         /* positions an event out of start order is moved back at most */
};

/* ---- small helpers ------------------------------------------------------------------- */

/* Grow *p (elements of size sz) so it holds at least need; cap doubles. */
static void grow(void *pp, size_t *cap, size_t need, size_t sz)
{
    void **p = pp;
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    *p = sim_xreallocarray(*p, c, sz);
    *cap = c;
}

/* grow for the big per-event arrays: they move into the memory budget's file past the
 * budget (trace/model/budget.h); trace_budget_free frees them. The first growth makes room
 * for first elements (a loaded trace's expected size, trace_model_expect): each doubling
 * after it copies the whole array, which past the budget faults in every page of the copy
 * in the budget's file (a third of the loading thread's time on 10 M events, perf). */
static void grow_big_from(void *pp, size_t *cap, size_t need, size_t sz, size_t first)
{
    void **p = pp;
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : first > 16 ? first : 16;
    while (c < need)
        c *= 2;
    *p = trace_budget_realloc(*p, *cap * sz, c * sz);
    *cap = c;
}

static void grow_big(void *pp, size_t *cap, size_t need, size_t sz)
{
    grow_big_from(pp, cap, need, sz, 16);
}

/* Before changing n bytes at p of a big array in place (appends too): the memory budget saves
 * the pages a checkpoint sharing its file may read (trace_budget_ckpt_mark). */
#define WILL_WRITE(p, n) trace_budget_will_write((p), (n))

static void see_time(struct trace_model *m, uint64_t a, uint64_t b)
{
    if (!m->have_time) {
        m->tmin = a, m->tmax = b, m->have_time = true;
        return;
    }
    if (a < m->tmin)
        m->tmin = a;
    if (b > m->tmax)
        m->tmax = b;
}

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        s += 8, n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0x94D049BB133111EBull;
    h ^= h >> 29;
    return (uint32_t)h ^ (uint32_t)(h >> 32);
}

/* ---- strings --------------------------------------------------------------------------- */

static char *arena_alloc(struct trace_model *m, size_t n)
{
    if (n > m->arena_left) {
        size_t size = n > ARENA_BIG ? n : ARENA_CHUNK;
        grow(&m->chunks, &m->capchunks, m->nchunks + 1, sizeof(char *));
        char *c = sim_xmalloc(size);
        m->chunks[m->nchunks++] = c;
        if (n > ARENA_BIG)
            return c; /* a chunk of its own; the current chunk stays current */
        m->arena = c, m->arena_left = size;
    }
    char *p = m->arena;
    m->arena += n, m->arena_left -= n;
    return p;
}

static void str_rehash(struct trace_model *m)
{
    uint32_t cap = m->hcap ? m->hcap * 2 : 1024;
    uint32_t *t = sim_xcalloc(cap, sizeof(*t));
    for (uint32_t id = 1; id < m->nstr; id++) {
        uint32_t i = m->strs[id].hash & (cap - 1);
        while (t[i])
            i = (i + 1) & (cap - 1);
        t[i] = id;
    }
    free(m->htab);
    m->htab = t, m->hcap = cap;
}

uint32_t trace_model_intern(struct trace_model *m, const char *s, size_t len)
{
    assert(len < UINT32_MAX);
    uint32_t h = hash_bytes(s, len);
    uint32_t i = h & (m->hcap - 1);
    for (uint32_t id; (id = m->htab[i]); i = (i + 1) & (m->hcap - 1)) {
        const struct str_entry *e = &m->strs[id];
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
            return id;
    }
    assert(m->nstr < UINT32_MAX - 1);
    char *p = arena_alloc(m, len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    size_t cap = m->capstr;
    grow(&m->strs, &cap, (size_t)m->nstr + 1, sizeof(*m->strs));
    m->capstr = (uint32_t)cap;
    uint32_t id = m->nstr++;
    m->strs[id] = (struct str_entry){p, (uint32_t)len, h};
    if ((uint64_t)m->nstr * 2 > m->hcap) {
        str_rehash(m);
    } else {
        m->htab[i] = id;
    }
    return id;
}

const char *trace_model_str(const struct trace_model *m, uint32_t id)
{
    assert(id < m->nstr);
    return m->strs[id].s;
}

size_t trace_model_str_len(const struct trace_model *m, uint32_t id)
{
    assert(id < m->nstr);
    return m->strs[id].len;
}

uint32_t trace_model_str_count(const struct trace_model *m)
{
    return m->nstr;
}

/* ---- life ------------------------------------------------------------------------------ */

struct trace_model *trace_model_new(void)
{
    struct trace_model *m = sim_xcalloc(1, sizeof(*m));
    m->capstr = 1024;
    m->strs = sim_xcalloc(m->capstr, sizeof(*m->strs));
    m->strs[0] = (struct str_entry){"", 0, 0};
    m->nstr = 1;
    str_rehash(m);
    return m;
}

static void track_fini(struct track_data *t)
{
    trace_budget_free(t->idx, t->cap * sizeof(*t->idx));
    trace_budget_free(t->block, t->capblock * sizeof(*t->block));
    free(t->lod);
}

void trace_model_free(struct trace_model *m)
{
    if (!m)
        return;
    trace_model_ext_drop(m);
    free(m->sites);
    free(m->sitehash);
    for (size_t i = 0; i < m->nchunks; i++)
        free(m->chunks[i]);
    free(m->chunks);
    free(m->strs);
    free(m->htab);
    for (uint32_t i = 0; i < m->ntracks; i++)
        track_fini(&m->tracks[i]);
    free(m->tracks);
    free(m->thtab);
    trace_budget_free(m->ev, m->capev * sizeof(*m->ev));
    trace_budget_free(m->col_off, m->capcol_off * sizeof(*m->col_off));
    trace_budget_free(m->col, m->capcol);
    free(m->ended);
    free(m->touched);
    for (size_t i = 0; i < m->ndet; i++)
        sim_value_free(m->det[i]);
    free(m->det);
    trace_spill_free(m->spill);
    for (size_t i = 0; i < m->cappend; i++)
        if (m->pend[i].ev != UINT64_MAX)
            free(m->pend[i].p);
    free(m->pend);
    for (size_t i = 0; i < m->nspare; i++)
        free(m->spare[i].p);
    free(m->mem);
    for (size_t i = 0; i < m->ntok; i++)
        sim_value_free(m->tok[i].details);
    free(m->tok);
    for (size_t i = 0; i < m->nmk; i++)
        sim_value_free(m->mk[i].details);
    free(m->mk);
    free(m->bw);
    free(m->bw_rev);
    trace_budget_free(m->xf, m->capxf * sizeof(*m->xf));
    trace_budget_free(m->dep_ev, m->capdep * sizeof(*m->dep_ev));
    trace_budget_free(m->dep_on, m->capdep * sizeof(*m->dep_on));
    sim_value_free(m->metadata);
    sim_value_free(m->config);
    sim_value_free(m->file_summary);
    sim_value_free(m->energy);
    free(m->power);
    if (m->src_release)
        m->src_release(m->src_ctx);
    free(m);
}

void trace_model_attach_source(struct trace_model *m, const char *data, size_t len,
                               void (*release)(void *ctx), void *ctx)
{
    if (m->src_release)
        m->src_release(m->src_ctx);
    m->src = data, m->src_len = len;
    m->src_release = release, m->src_ctx = ctx;
}

/* ---- tracks ---------------------------------------------------------------------------- */

static void track_rehash(struct trace_model *m)
{
    uint32_t cap = m->thcap ? m->thcap * 2 : 64;
    uint32_t *t = sim_xcalloc(cap, sizeof(*t));
    for (uint32_t k = 0; k < m->ntracks; k++) {
        uint32_t i = m->strs[m->tracks[k].pub.name].hash & (cap - 1);
        while (t[i])
            i = (i + 1) & (cap - 1);
        t[i] = k + 1;
    }
    free(m->thtab);
    m->thtab = t, m->thcap = cap;
}

uint32_t trace_model_track(struct trace_model *m, const char *name, enum trace_engine engine,
                           int32_t engine_id)
{
    assert((unsigned)engine < TRACE_ENGINE_COUNT);
    uint32_t id = trace_model_intern(m, name, strlen(name));
    if (!m->thcap)
        track_rehash(m);
    uint32_t i = m->strs[id].hash & (m->thcap - 1);
    for (uint32_t k; (k = m->thtab[i]); i = (i + 1) & (m->thcap - 1))
        if (m->tracks[k - 1].pub.name == id)
            return k - 1;
    size_t cap = m->captracks;
    grow(&m->tracks, &cap, (size_t)m->ntracks + 1, sizeof(*m->tracks));
    m->captracks = (uint32_t)cap;
    uint32_t k = m->ntracks++;
    m->tracks[k] = (struct track_data){.pub = {id, engine, engine_id}, .dirty_from = SIZE_MAX};
    m->touched = sim_xreallocarray(m->touched, m->captracks, sizeof(*m->touched));
    if ((uint64_t)m->ntracks * 2 > m->thcap)
        track_rehash(m);
    else
        m->thtab[i] = k + 1;
    m->gen++;
    return k;
}

uint8_t trace_model_track_kinds(const struct trace_model *m, uint32_t track)
{
    assert(track < m->ntracks);
    return m->tracks[track].kinds;
}

size_t trace_model_track_count(const struct trace_model *m)
{
    return m->ntracks;
}

const struct trace_track *trace_model_track_get(const struct trace_model *m, uint32_t track)
{
    assert(track < m->ntracks);
    return &m->tracks[track].pub;
}

/* ---- events ---------------------------------------------------------------------------- */

uint64_t trace_model_add_event(struct trace_model *m, const struct trace_event *ev)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(ev->track < m->ntracks);
    assert((ev->flags & TRACE_EV_INFLIGHT) || ev->end >= ev->start);
    if (m->nev == m->capev) {
        size_t cap = (size_t)m->capev;
        grow_big_from(&m->ev, &cap, (size_t)m->nev + 1, sizeof(*m->ev), (size_t)m->expect);
        m->capev = cap;
    }
    m->tracks[ev->track].pending++;
    m->tracks[ev->track].kinds |= trace_kind_bit(ev->op_kind);
    uint64_t i = m->nev++;
    WILL_WRITE(&m->ev[i], sizeof(*m->ev));
    m->ev[i] = *ev;
    m->ev[i].flags &= (uint8_t) ~(TRACE_EV_OWN_DETAILS | TRACE_EV_TRANSFER | TRACE_EV_PACKED);
    if (ev->flags & TRACE_EV_INFLIGHT) {
        m->ev[i].end = ev->start;
        m->tracks[ev->track].ninflight++;
        see_time(m, ev->start, ev->start);
    } else {
        see_time(m, ev->start, ev->end);
    }
    m->gen++;
    return i;
}

void trace_model_expect(struct trace_model *m, uint64_t n)
{
    m->expect = n;
}

void trace_model_end_event(struct trace_model *m, uint64_t i, uint64_t end)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(i < m->nev);
    struct trace_event *e = &m->ev[i];
    assert(e->flags & TRACE_EV_INFLIGHT);
    assert(end >= e->start);
    WILL_WRITE(e, sizeof(*e));
    e->end = end;
    e->flags &= (uint8_t)~TRACE_EV_INFLIGHT;
    m->tracks[e->track].ninflight--;
    grow(&m->ended, &m->capended, m->nended + 1, sizeof(*m->ended));
    m->ended[m->nended++] = i;
    see_time(m, e->start, end);
    m->gen++;
}

static struct pend_det *pend_find(const struct trace_model *m, uint64_t ev);
static void pend_del(struct trace_model *m, struct pend_det *d);

void trace_model_set_details_take(struct trace_model *m, uint64_t i, struct sim_value *details)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(i < m->nev);
    struct trace_event *e = &m->ev[i];
    struct pend_det *pd = pend_find(m, i);
    if (pd)
        pend_del(m, pd);
    WILL_WRITE(e, sizeof(*e));
    e->flags &= (uint8_t)~TRACE_EV_PACKED;
    if (e->flags & TRACE_EV_OWN_DETAILS) {
        sim_value_free(m->det[e->details]);
        m->det[e->details] = details;
    } else {
        grow(&m->det, &m->capdet, m->ndet + 1, sizeof(struct sim_value *));
        m->det[m->ndet] = details;
        e->details = m->ndet++;
        e->flags |= TRACE_EV_OWN_DETAILS;
    }
    if (!(e->flags & TRACE_EV_TRANSFER)) {
        struct trace_transfer x[2];
        int k = trace_dram_from_value(m->tracks[e->track].pub.engine, trace_model_str(m, e->op),
                                      details, x);
        for (int j = 0; j < k; j++) {
            x[j].event = (uint32_t)i;
            trace_model_add_transfer(m, &x[j]); /* sets TRACE_EV_TRANSFER */
        }
    }
    m->gen++;
}

/* ---- packed details (live) --------------------------------------------------------------- */

static size_t pend_slot(const struct trace_model *m, uint64_t ev)
{
    return (size_t)((ev * 0x9E3779B97F4A7C15ull) >> 20) & (m->cappend - 1);
}

static struct pend_det *pend_find(const struct trace_model *m, uint64_t ev)
{
    if (!m->cappend)
        return NULL;
    for (size_t i = pend_slot(m, ev);; i = (i + 1) & (m->cappend - 1)) {
        if (m->pend[i].ev == ev)
            return &m->pend[i];
        if (m->pend[i].ev == UINT64_MAX)
            return NULL;
    }
}

static void pend_put(struct trace_model *m, const struct pend_det *d)
{
    if (2 * (m->npend + 1) > m->cappend) {
        size_t cap = m->cappend ? 2 * m->cappend : 64;
        struct pend_det *old = m->pend;
        size_t oldcap = m->cappend;
        m->pend = sim_xmalloc(cap * sizeof(*m->pend));
        for (size_t i = 0; i < cap; i++)
            m->pend[i].ev = UINT64_MAX;
        m->cappend = cap;
        for (size_t i = 0; i < oldcap; i++) {
            if (old[i].ev == UINT64_MAX)
                continue;
            size_t j = pend_slot(m, old[i].ev);
            while (m->pend[j].ev != UINT64_MAX)
                j = (j + 1) & (cap - 1);
            m->pend[j] = old[i];
        }
        free(old);
    }
    size_t j = pend_slot(m, d->ev);
    while (m->pend[j].ev != UINT64_MAX)
        j = (j + 1) & (m->cappend - 1);
    m->pend[j] = *d;
    m->npend++;
}

/* Remove slot d (linear probing: shift the following entries back). */
static void pend_del(struct trace_model *m, struct pend_det *d)
{
    size_t i = (size_t)(d - m->pend), cap = m->cappend;
    if (m->nspare < SPARE_BUFS)
        m->spare[m->nspare++] = (struct spare_buf){d->p, d->cap};
    else
        free(d->p);
    m->pend[i].ev = UINT64_MAX;
    m->npend--;
    for (size_t j = (i + 1) & (cap - 1); m->pend[j].ev != UINT64_MAX; j = (j + 1) & (cap - 1)) {
        size_t home = pend_slot(m, m->pend[j].ev);
        /* move j back to i when its home does not lie in (i, j] */
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->pend[i] = m->pend[j];
            m->pend[j].ev = UINT64_MAX;
            i = j;
        }
    }
}

void trace_model_set_transfers(struct trace_model *m, uint64_t i, const struct trace_transfer *x,
                               int n)
{
    assert(i < m->nev);
    for (int j = 0; j < n; j++) {
        struct trace_transfer t = x[j];
        t.event = (uint32_t)i;
        trace_model_add_transfer(m, &t);
    }
}

void trace_model_set_details_packed(struct trace_model *m, uint64_t i, double t_start_ns,
                                    double t_end_ns, const uint8_t *packed, size_t len)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(i < m->nev && len < UINT32_MAX);
    struct trace_event *e = &m->ev[i];
    struct pend_det *old = pend_find(m, i);
    if (old)
        pend_del(m, old);
    if (e->flags & TRACE_EV_INFLIGHT) {
        struct pend_det d = {i, t_start_ns, NULL, len, 0};
        for (size_t k = m->nspare; k-- > 0 && !d.p;) {
            if (m->spare[k].cap >= len) {
                d.p = m->spare[k].p, d.cap = m->spare[k].cap;
                m->spare[k] = m->spare[--m->nspare];
            }
        }
        if (!d.p) {
            d.cap = len > 256 ? len : 256;
            d.p = sim_xmalloc(d.cap);
        }
        memcpy(d.p, packed, len);
        pend_put(m, &d);
    } else {
        if (!m->spill)
            m->spill = trace_spill_new();
        struct spill_head h = {(uint32_t)len, t_start_ns, t_end_ns};
        WILL_WRITE(e, sizeof(*e));
        e->details = trace_spill_append(m->spill, &h, sizeof(h));
        trace_spill_append(m->spill, packed, len);
        e->flags = (uint8_t)((e->flags & ~TRACE_EV_OWN_DETAILS) | TRACE_EV_PACKED);
    }
    m->gen++;
}

/* The packed details of event i (a new buffer) and its times, or NULL. */
static uint8_t *packed_of(const struct trace_model *m, uint64_t i, size_t *len, double *t0,
                          double *t1)
{
    const struct trace_event *e = &m->ev[i];
    if (e->flags & TRACE_EV_INFLIGHT) {
        const struct pend_det *d = pend_find(m, i);
        if (!d)
            return NULL;
        uint8_t *p = sim_xmalloc(d->len ? d->len : 1);
        memcpy(p, d->p, d->len);
        *len = d->len, *t0 = d->t_start_ns, *t1 = NAN;
        return p;
    }
    if (!(e->flags & TRACE_EV_PACKED) || !m->spill)
        return NULL;
    struct spill_head h;
    if (trace_spill_read(m->spill, e->details, &h, sizeof(h)) < 0)
        return NULL;
    uint8_t *p = sim_xmalloc(h.len ? h.len : 1);
    if (trace_spill_read(m->spill, e->details + sizeof(h), p, h.len) < 0) {
        free(p);
        return NULL;
    }
    *len = h.len, *t0 = h.t_start_ns, *t1 = h.t_end_ns;
    return p;
}

bool trace_model_event_ns(const struct trace_model *m, uint64_t i, double *t_start_ns,
                          double *t_end_ns)
{
    assert(i < m->nev);
    const struct trace_event *e = &m->ev[i];
    if (e->flags & TRACE_EV_INFLIGHT) {
        const struct pend_det *d = pend_find(m, i);
        if (!d)
            return false;
        *t_start_ns = d->t_start_ns, *t_end_ns = NAN;
        return true;
    }
    struct spill_head h;
    if (!(e->flags & TRACE_EV_PACKED) || !m->spill ||
        trace_spill_read(m->spill, e->details, &h, sizeof(h)) < 0)
        return false;
    *t_start_ns = h.t_start_ns, *t_end_ns = h.t_end_ns;
    return true;
}

uint64_t trace_model_event_bytes(const struct trace_model *m)
{
    /* what is in use: the arrays grow by doubling, and the pages of their spare capacity
     * are never touched (large blocks are mapped), so this is what they keep resident */
    uint64_t b = m->nev * sizeof(*m->ev) + m->nxf * sizeof(*m->xf) + m->nended * sizeof(*m->ended) +
                 m->cappend * sizeof(*m->pend) + (m->col_off ? m->nev * sizeof(*m->col_off) : 0) +
                 m->ncol;
    for (size_t i = 0; i < m->cappend; i++)
        if (m->pend[i].ev != UINT64_MAX)
            b += m->pend[i].len;
    for (uint32_t k = 0; k < m->ntracks; k++)
        b += m->tracks[k].n * sizeof(*m->tracks[k].idx) +
             m->tracks[k].nblock * sizeof(struct run_state);
    return b;
}

uint64_t trace_model_event_count(const struct trace_model *m)
{
    return m->nev;
}

/* ---- call sites ---------------------------------------------------------------------------- */

enum { SITE_MAX = 65535, SITE_HASH = 1 << 17 };

static size_t site_slot(uint32_t file, uint32_t func, uint32_t line)
{
    uint64_t h = ((uint64_t)file * 0x9E3779B97F4A7C15ull) ^
                 ((uint64_t)func * 0xC2B2AE3D27D4EB4Full) ^
                 ((uint64_t)line * 0x165667B19E3779F9ull);
    return (size_t)(h >> 40) & (SITE_HASH - 1);
}

uint16_t trace_model_site(struct trace_model *m, uint32_t file, uint32_t func, uint32_t line)
{
    if (!m->sitehash) {
        m->sitehash = sim_xcalloc(SITE_HASH, sizeof(*m->sitehash));
        m->nsites = 1;
    }
    size_t k = site_slot(file, func, line);
    for (; m->sitehash[k]; k = (k + 1) & (SITE_HASH - 1)) {
        const struct trace_site *s = &m->sites[m->sitehash[k]];
        if (s->file == file && s->func == func && s->line == line)
            return m->sitehash[k];
    }
    if (m->nsites > SITE_MAX)
        return TRACE_NO_SITE;
    grow(&m->sites, &m->capsites, m->nsites + 1, sizeof(*m->sites));
    uint16_t id = (uint16_t)m->nsites++;
    m->sites[id] = (struct trace_site){file, func, line};
    m->sitehash[k] = id;
    m->gen++;
    return id;
}

uint16_t trace_model_site_parse(struct trace_model *m, const char *src, size_t len,
                                const char *func)
{
    size_t colon = len;
    while (colon > 0 && src[colon - 1] != ':')
        colon--;
    uint32_t line = 0;
    bool ok = colon > 1 && colon < len && len - colon <= 9;
    for (size_t i = colon; ok && i < len; i++) {
        if (src[i] < '0' || src[i] > '9')
            ok = false;
        else
            line = line * 10 + (uint32_t)(src[i] - '0');
    }
    if (!ok || line == 0)
        return trace_model_site(m, trace_model_intern(m, src, len), TRACE_NO_STR, 0);
    uint32_t fn = func && *func ? trace_model_intern(m, func, strlen(func)) : TRACE_NO_STR;
    return trace_model_site(m, trace_model_intern(m, src, colon - 1), fn, line);
}

void trace_model_set_event_site(struct trace_model *m, uint64_t i, uint16_t site)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(i < m->nev);
    assert(site == TRACE_NO_SITE || site < m->nsites);
    WILL_WRITE(&m->ev[i], sizeof(*m->ev));
    m->ev[i].site = site;
    m->gen++;
}

const struct trace_site *trace_model_site_get(const struct trace_model *m, uint16_t id)
{
    return id != TRACE_NO_SITE && id < m->nsites ? &m->sites[id] : NULL;
}

uint32_t trace_model_site_count(const struct trace_model *m)
{
    return m->nsites ? m->nsites : 1;
}

const char *trace_model_site_text(const struct trace_model *m, uint16_t id, char *buf, size_t size)
{
    const struct trace_site *s = trace_model_site_get(m, id);
    if (!s)
        snprintf(buf, size, "%s", "");
    else if (!s->line)
        snprintf(buf, size, "%s", trace_model_str(m, s->file));
    else
        snprintf(buf, size, "%s:%u", trace_model_str(m, s->file), (unsigned)s->line);
    return buf;
}

/* details with the call site of event e added (as the file has them), when it has one and
 * they do not say it already. */
static struct sim_value *with_site(const struct trace_model *m, const struct trace_event *e,
                                   struct sim_value *d)
{
    const struct trace_site *s = trace_model_site_get(m, e->site);
    if (!s || (d && sim_value_map_get(d, TRACE_DETAILS_SRC)))
        return d;
    if (!d)
        d = sim_value_map();
    char buf[512];
    sim_value_map_set_take(d, TRACE_DETAILS_SRC,
                           sim_value_str(trace_model_site_text(m, e->site, buf, sizeof(buf))));
    if (s->func != TRACE_NO_STR)
        sim_value_map_set_take(d, TRACE_DETAILS_SRC_FUNC,
                               sim_value_str(trace_model_str(m, s->func)));
    return d;
}

const struct trace_event *trace_model_event(const struct trace_model *m, uint64_t i)
{
    assert(i < m->nev);
    return &m->ev[i];
}

uint8_t *trace_model_event_packed(const struct trace_model *m, uint64_t i, size_t *len)
{
    assert(i < m->nev);
    if (m->ev[i].flags & TRACE_EV_OWN_DETAILS)
        return NULL;
    double t0, t1;
    return packed_of(m, i, len, &t0, &t1);
}

struct sim_value *trace_model_event_details(const struct trace_model *m, uint64_t i)
{
    assert(i < m->nev);
    const struct trace_event *e = &m->ev[i];
    if (e->flags & TRACE_EV_OWN_DETAILS)
        return with_site(m, e, sim_value_clone(m->det[e->details]));
    size_t len;
    double t0, t1;
    uint8_t *p = packed_of(m, i, &len, &t0, &t1);
    if (p) {
        struct sim_value *replay = NULL;
        struct sim_value *params = sim_op_params_unpack(p, len, &replay);
        struct sim_value *d = trace_details_from_op(params, replay);
        sim_value_free(params);
        sim_value_free(replay);
        free(p);
        return with_site(m, e, d);
    }
    if (e->flags & (TRACE_EV_PACKED | TRACE_EV_INFLIGHT))
        return NULL;
    if (!m->src || e->details >= m->src_len)
        return NULL;
    const char *end;
    cJSON *j = cJSON_ParseWithLengthOpts(m->src + e->details, m->src_len - e->details, &end, 0);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "details");
    struct sim_value *v = d && !cJSON_IsNull(d) ? trace_json_to_value(d) : NULL;
    cJSON_Delete(j);
    return v;
}

/* ---- op columns ------------------------------------------------------------------------ */

void trace_model_set_opcol(struct trace_model *m, uint64_t i, const uint8_t *p, size_t n)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(i < m->nev && n <= TRACE_OPCOL_MAX);
    if (i >= m->capcol_off) {
        uint64_t cap = m->capcol_off ? m->capcol_off : m->expect > 1024 ? m->expect : 1024;
        while (cap <= i)
            cap *= 2;
        m->col_off = trace_budget_realloc(m->col_off, m->capcol_off * sizeof(*m->col_off),
                                          cap * sizeof(*m->col_off));
        WILL_WRITE(m->col_off + m->capcol_off, (cap - m->capcol_off) * sizeof(*m->col_off));
        for (uint64_t k = m->capcol_off; k < cap; k++)
            m->col_off[k] = NO_COL;
        m->capcol_off = cap;
    }
    if (m->ncol + n + 1 > m->capcol) {
        uint64_t cap = m->capcol                     ? m->capcol
                       : m->expect * 24 > (1u << 16) ? m->expect * 24 /* ~22 bytes an op */
                                                     : 1u << 16;
        while (cap < m->ncol + n + 1)
            cap *= 2;
        m->col = trace_budget_realloc(m->col, m->capcol, cap);
        m->capcol = cap;
    }
    WILL_WRITE(&m->col_off[i], sizeof(*m->col_off));
    WILL_WRITE(m->col + m->ncol, n + 1);
    m->col_off[i] = m->ncol;
    m->col[m->ncol] = (uint8_t)n;
    memcpy(m->col + m->ncol + 1, p, n);
    m->ncol += n + 1;
}

bool trace_model_has_opcol(const struct trace_model *m, uint64_t i)
{
    return i < m->capcol_off && i < m->nev && m->col_off[i] != NO_COL;
}

const uint8_t *trace_model_opcol(const struct trace_model *m, uint64_t i, size_t *n)
{
    if (!trace_model_has_opcol(m, i))
        return NULL;
    *n = m->col[m->col_off[i]];
    return m->col + m->col_off[i] + 1;
}

/* ---- other records --------------------------------------------------------------------- */

void trace_model_add_mem_access(struct trace_model *m, const struct trace_mem_access *a)
{
    grow(&m->mem, &m->capmem, m->nmem + 1, sizeof(*m->mem));
    m->mem[m->nmem++] = *a;
    see_time(m, a->cycle, a->cycle);
    m->gen++;
}

void trace_model_add_token(struct trace_model *m, const struct trace_token *t)
{
    assert(t->end >= t->start);
    grow(&m->tok, &m->captok, m->ntok + 1, sizeof(*m->tok));
    m->tok[m->ntok++] = *t;
    see_time(m, t->start, t->end);
    m->gen++;
}

void trace_model_add_marker(struct trace_model *m, const struct trace_marker *k)
{
    grow(&m->mk, &m->capmk, m->nmk + 1, sizeof(*m->mk));
    m->mk[m->nmk++] = *k;
    see_time(m, k->cycle, k->cycle);
    m->gen++;
}

size_t trace_model_add_bw_sample(struct trace_model *m, const struct trace_bw_sample *s)
{
    size_t cap = m->capbw;
    grow(&m->bw, &m->capbw, m->nbw + 1, sizeof(*m->bw));
    if (m->capbw != cap)
        m->bw_rev = sim_xreallocarray(m->bw_rev, m->capbw, sizeof(*m->bw_rev));
    m->bw_rev[m->nbw] = 0;
    m->bw[m->nbw] = *s;
    m->nbw_dram += trace_bw_sample_is_dram(s);
    m->gen++;
    return m->nbw++;
}

void trace_model_bw_sample_add(struct trace_model *m, size_t i, uint64_t read_bytes,
                               uint64_t write_bytes)
{
    assert(i < m->nbw);
    m->bw[i].read_bytes += read_bytes;
    m->bw[i].write_bytes += write_bytes;
    m->bw_rev[i] = ++m->bw_revs;
    m->gen++;
}

void trace_model_bw_sample_set(struct trace_model *m, size_t i, const struct trace_bw_sample *s)
{
    assert(i < m->nbw);
    m->nbw_dram -= trace_bw_sample_is_dram(&m->bw[i]);
    m->bw[i] = *s;
    m->nbw_dram += trace_bw_sample_is_dram(s);
    m->bw_rev[i] = ++m->bw_revs;
    m->gen++;
}

uint64_t trace_model_bw_revs(const struct trace_model *m)
{
    return m->bw_revs;
}

uint64_t trace_model_bw_sample_rev(const struct trace_model *m, size_t i)
{
    assert(i < m->nbw);
    return m->bw_rev[i];
}

size_t trace_model_dram_sample_count(const struct trace_model *m)
{
    return m->nbw_dram;
}

void trace_model_add_transfer(struct trace_model *m, const struct trace_transfer *x)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(x->event < m->nev);
    grow_big_from(&m->xf, &m->capxf, m->nxf + 1, sizeof(*m->xf), (size_t)(m->expect / 4));
    WILL_WRITE(&m->xf[m->nxf], sizeof(*m->xf));
    WILL_WRITE(&m->ev[x->event], sizeof(*m->ev));
    m->xf[m->nxf++] = *x;
    m->ev[x->event].flags |= TRACE_EV_TRANSFER;
    m->gen++;
}

void trace_model_add_dep(struct trace_model *m, uint64_t ev, uint64_t on)
{
    if (m->ext)
        trace_model_ext_unshare(m);
    assert(ev < m->nev && on < m->nev);
    size_t cap = m->capdep;
    grow_big(&m->dep_ev, &cap, m->ndep + 1, sizeof(*m->dep_ev));
    cap = m->capdep;
    grow_big(&m->dep_on, &cap, m->ndep + 1, sizeof(*m->dep_on));
    m->capdep = cap;
    size_t i = m->ndep; /* kept sorted by ev; files and runs add them in that order */
    while (i > 0 && m->dep_ev[i - 1] > ev)
        i--;
    WILL_WRITE(&m->dep_ev[i], (m->ndep - i + 1) * sizeof(*m->dep_ev));
    WILL_WRITE(&m->dep_on[i], (m->ndep - i + 1) * sizeof(*m->dep_on));
    memmove(&m->dep_ev[i + 1], &m->dep_ev[i], (m->ndep - i) * sizeof(*m->dep_ev));
    memmove(&m->dep_on[i + 1], &m->dep_on[i], (m->ndep - i) * sizeof(*m->dep_on));
    m->dep_ev[i] = ev;
    m->dep_on[i] = on;
    m->ndep++;
    m->gen++;
}

size_t trace_model_event_deps(const struct trace_model *m, uint64_t ev, const uint64_t **on)
{
    size_t lo = 0, hi = m->ndep;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->dep_ev[mid] < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < m->ndep && m->dep_ev[lo + n] == ev)
        n++;
    *on = n ? &m->dep_on[lo] : NULL;
    return n;
}

size_t trace_model_dep_count(const struct trace_model *m)
{
    return m->ndep;
}

size_t trace_model_transfer_count(const struct trace_model *m)
{
    return m->nxf;
}

const struct trace_transfer *trace_model_transfer(const struct trace_model *m, size_t i)
{
    assert(i < m->nxf);
    return &m->xf[i];
}

void trace_model_set_metadata_take(struct trace_model *m, struct sim_value *run_metadata)
{
    sim_value_free(m->metadata);
    m->metadata = run_metadata;
    m->gen++;
}

void trace_model_set_config_take(struct trace_model *m, struct sim_value *config_snapshot)
{
    sim_value_free(m->config);
    m->config = config_snapshot;
    m->gen++;
}

void trace_model_set_file_summary_take(struct trace_model *m, struct sim_value *summary)
{
    sim_value_free(m->file_summary);
    m->file_summary = summary;
    m->gen++;
}

void trace_model_set_energy_take(struct trace_model *m, struct sim_value *energy,
                                 struct trace_power_sample *samples, size_t n)
{
    sim_value_free(m->energy);
    free(m->power);
    m->energy = energy;
    m->power = samples;
    m->npower = samples ? n : 0;
    m->energy_gen++;
    m->gen++;
}

uint64_t trace_model_energy_gen(const struct trace_model *m)
{
    return m->energy_gen;
}

const struct sim_value *trace_model_energy(const struct trace_model *m)
{
    return m->energy;
}

size_t trace_model_power_count(const struct trace_model *m)
{
    return m->npower;
}

const struct trace_power_sample *trace_model_power(const struct trace_model *m, size_t i)
{
    return i < m->npower ? &m->power[i] : NULL;
}

void trace_model_set_now(struct trace_model *m, uint64_t now)
{
    m->now = now;
    if (!m->have_time) {
        m->tmin = 0, m->tmax = now, m->have_time = true;
    } else if (now > m->tmax) {
        m->tmax = now;
    }
    m->gen++;
}

uint64_t trace_model_now(const struct trace_model *m)
{
    return m->now;
}

void trace_model_count_ignored(struct trace_model *m, bool event)
{
    if (event)
        m->ignored_events++;
    else
        m->ignored_fields++;
}

/* ---- per-track indexes ----------------------------------------------------------------- */

/* Order of a track's index: start, then event index (insertion order). */
static bool before(const struct trace_model *m, uint64_t a, uint64_t b)
{
    uint64_t sa = m->ev[a].start, sb = m->ev[b].start;
    return sa < sb || (sa == sb && a < b);
}

static int cmp_pos(const void *pa, const void *pb, void *ctx)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (a == b)
        return 0;
    return before(ctx, a, b) ? -1 : 1;
}

static void touch(struct trace_model *m, uint32_t t, size_t *ntouched)
{
    if (!m->tracks[t].touched) {
        m->tracks[t].touched = true;
        m->touched[(*ntouched)++] = t;
    }
}

/* Recount the block states from position from on (to the track's published length). */
static void track_recount(struct trace_model *m, struct track_data *t, size_t from)
{
    size_t need = t->n / TRACK_BLOCK + 1;
    if (need > t->capblock) {
        size_t c = t->capblock ? t->capblock : 4;
        while (c < need)
            c *= 2;
        t->block =
            trace_budget_realloc(t->block, t->capblock * sizeof(*t->block), c * sizeof(*t->block));
        t->capblock = c;
    }
    if (!t->nblock) {
        WILL_WRITE(&t->block[0], sizeof(*t->block));
        t->block[0] = (struct run_state){0, 0, UINT64_MAX};
        t->nblock = 1;
    }
    size_t b = from / TRACK_BLOCK;
    if (b >= t->nblock)
        b = t->nblock - 1;
    struct run_state st = t->block[b];
    WILL_WRITE(&t->block[b], (need - b) * sizeof(*t->block));
    for (size_t k = b * TRACK_BLOCK; k < t->n; k++) {
        if (k % TRACK_BLOCK == 0) /* a block's first start: the search goes by blocks first */
            t->block[k / TRACK_BLOCK].first = m->ev[t->idx[k]].start;
        run_add(m, t, k, &st);
        if ((k + 1) % TRACK_BLOCK == 0) {
            st.first = UINT64_MAX;
            t->block[(k + 1) / TRACK_BLOCK] = st;
        }
    }
    t->nblock = need;
    t->dirty_from = SIZE_MAX;
    if (m->lod_mu)
        pthread_mutex_lock(m->lod_mu);
    trace_lod_track_update(m, t, b, &st);
    if (m->lod_mu)
        pthread_mutex_unlock(m->lod_mu);
}

/* A track's index in (start, event) order: an LSD radix sort on the starts, 11 bits a pass
 * (stable: every index holds equal starts in event order, as events are appended in order
 * and staging moves one back past greater starts only), qsort for a few. Millions of events
 * sort in a fraction of the comparison sort's time, which chases starts through memory. */
static void sort_track(const struct trace_model *m, struct track_data *t)
{
    size_t n = t->n, k;
    WILL_WRITE(t->idx, n * sizeof(*t->idx));
    if (n < 1024) {
        qsort_r(t->idx, n, sizeof(*t->idx), cmp_pos, (void *)m);
        return;
    }
    struct key {
        uint64_t start, ev;
    } *a = sim_xreallocarray(NULL, n, sizeof(*a)), *b = sim_xreallocarray(NULL, n, sizeof(*b));
    uint64_t bits = 0;
    bool sorted = true;
    for (k = 0; k < n; k++) {
        a[k] = (struct key){m->ev[t->idx[k]].start, t->idx[k]};
        bits |= a[k].start;
        sorted &= k == 0 || a[k - 1].start <= a[k].start;
    }
    for (unsigned shift = 0; !sorted && shift < 64 && (bits >> shift); shift += 11) {
        size_t count[2048] = {0};
        for (k = 0; k < n; k++)
            count[(a[k].start >> shift) & 2047]++;
        size_t sum = 0;
        for (size_t d = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (k = 0; k < n; k++)
            b[count[(a[k].start >> shift) & 2047]++] = a[k];
        struct key *tmp = a;
        a = b, b = tmp;
    }
    for (k = 0; k < n; k++)
        t->idx[k] = (uint32_t)a[k].ev;
    free(a);
    free(b);
}

/* Rebuild everything of a track from its (re-sorted) index. */
static void track_rebuild(struct trace_model *m, struct track_data *t)
{
    sort_track(m, t);
    t->inflight_from = t->n;
    for (size_t k = 0; k < t->n && t->inflight_from == t->n; k++)
        if (m->ev[t->idx[k]].flags & TRACE_EV_INFLIGHT)
            t->inflight_from = k;
    t->nblock = 0;
    track_recount(m, t, 0);
    t->unsorted = false;
}

/* Position of event i in a track's published index, or SIZE_MAX. */
static size_t track_find(const struct trace_model *m, const struct track_data *t, uint64_t i)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(m, t->idx[mid], i))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->idx[lo] == i ? lo : SIZE_MAX;
}

/* Step 3 of trace_model_finish for the changed track tr (old_n: the tracks' lengths before
 * the new events, or NULL). */
static void finish_track(struct trace_model *m, uint32_t tr, const size_t *old_n)
{
    struct track_data *t = &m->tracks[tr];
    t->touched = false;
    if (t->unsorted) {
        track_rebuild(m, t);
        return;
    }
    size_t from = old_n ? old_n[tr] : t->n;
    track_recount(m, t, from < t->dirty_from ? from : t->dirty_from);
    if (t->ninflight == 0) {
        t->inflight_from = t->n;
    } else {
        size_t k = t->inflight_from < from ? t->inflight_from : from;
        while (k < t->n && !(m->ev[t->idx[k]].flags & TRACE_EV_INFLIGHT))
            k++;
        t->inflight_from = k;
    }
}

/* The changed tracks m->touched[0, n), taken one at a time by one or two threads (each
 * track's index and states are its own; the events are only read): the loading thread from
 * the front (the biggest first), the other from the back, so that the biggest two tracks'
 * sorts (their memory) do not add up. */
struct finish_work {
    struct trace_model *m;
    const size_t *old_n;
    pthread_mutex_t mu;
    size_t lo, hi; /* the tracks [lo, hi) are left (mu) */
};

static void finish_run(struct finish_work *w, bool back)
{
    for (;;) {
        pthread_mutex_lock(&w->mu);
        size_t q = w->lo < w->hi ? (back ? --w->hi : w->lo++) : SIZE_MAX;
        pthread_mutex_unlock(&w->mu);
        if (q == SIZE_MAX)
            return;
        finish_track(w->m, w->m->touched[q], w->old_n);
        if ((q & 63) == 63) /* a big batch maps pages fast: the budget looks too */
            trace_budget_check();
    }
}

static void *finish_worker(void *arg)
{
    finish_run(arg, true);
    return NULL;
}

static int cmp_track_size(const void *a, const void *b, void *ctx)
{
    const struct trace_model *m = ctx;
    size_t x = m->tracks[*(const uint32_t *)a].n, y = m->tracks[*(const uint32_t *)b].n;
    return (x < y) - (x > y);
}

/* Step 2 of trace_model_finish too: past the tracks' published lengths, m->touched kept. */
void trace_model_stage(struct trace_model *m)
{
    if (m->nev_staged < m->nev_done)
        m->nev_staged = m->nev_done;
    /* where the new events go (past the room: saved as it grows) */
    for (uint32_t k = 0; k < m->ntracks && m->nev_staged < m->nev; k++) {
        struct track_data *t = &m->tracks[k];
        size_t len = t->n + t->staged, room = t->cap - len;
        if (t->pending && room)
            WILL_WRITE(t->idx + len, (t->pending < room ? t->pending : room) * sizeof(*t->idx));
    }
    for (uint64_t i = m->nev_staged; i < m->nev; i++) {
        uint32_t tr = m->ev[i].track;
        struct track_data *t = &m->tracks[tr];
        size_t len = t->n + t->staged;
        if (len == t->cap) { /* room for all its new events at once: a copy is a fault a page */
            size_t c = t->cap ? t->cap * 2 : 64;
            c = c < len + t->pending ? len + t->pending : c;
            t->idx = trace_budget_realloc(t->idx, t->cap * sizeof(*t->idx), c * sizeof(*t->idx));
            t->cap = c;
            WILL_WRITE(t->idx + len, t->pending * sizeof(*t->idx)); /* grown in place, maybe */
        }
        size_t k = len;
        if (len && !t->unsorted && before(m, i, t->idx[len - 1])) {
            /* a little out of start order (overlapping ops end in another order): in its
             * place among the staged, after equal starts, as the sort puts it; else sorted */
            while (k > t->n && len - k < STAGE_NEAR && before(m, i, t->idx[k - 1]))
                k--;
            if (k > 0 && before(m, i, t->idx[k - 1])) {
                t->unsorted = true;
                k = len;
            } else {
                WILL_WRITE(&t->idx[k], (len - k + 1) * sizeof(*t->idx));
                memmove(&t->idx[k + 1], &t->idx[k], (len - k) * sizeof(*t->idx));
            }
        }
        t->idx[k] = (uint32_t)i;
        t->staged++;
        t->pending -= t->pending > 0;
        touch(m, tr, &m->ntouched);
        if ((i & 0xffff) == 0xffff) /* a big batch maps pages fast: the budget looks too */
            trace_budget_check();
    }
    m->nev_staged = m->nev;
}

void trace_model_finish(struct trace_model *m)
{
    size_t *old_n = NULL;
    uint64_t nev_before = m->nev_done;

    /* 1. ended events already in an index: the block states after them change */
    for (size_t q = 0; q < m->nended; q++) {
        uint64_t i = m->ended[q];
        if (i >= m->nev_done)
            continue; /* appended in this batch: handled with the new positions */
        const struct trace_event *e = &m->ev[i];
        struct track_data *t = &m->tracks[e->track];
        if (t->unsorted)
            continue;
        size_t p = track_find(m, t, i);
        assert(p != SIZE_MAX);
        if (p < t->dirty_from)
            t->dirty_from = p;
        touch(m, e->track, &m->ntouched);
    }
    m->nended = 0;

    /* 2. new events (not staged yet) to their tracks, noting where their new parts start */
    if (m->nev_done < m->nev) {
        old_n = sim_xcalloc(m->ntracks ? m->ntracks : 1, sizeof(*old_n));
        for (uint32_t k = 0; k < m->ntracks; k++)
            old_n[k] = m->tracks[k].n;
    }
    trace_model_stage(m);
    size_t ntouched = m->ntouched;
    m->ntouched = 0;
    for (size_t q = 0; q < ntouched; q++) { /* published */
        struct track_data *t = &m->tracks[m->touched[q]];
        t->n += t->staged;
        t->staged = 0;
    }
    m->nev_done = m->nev;

    /* 3. per changed track: new positions, in-flight start, or a full rebuild (a loaded
     * trace's tracks shared with a second thread: sorting them was most of this) */
    struct finish_work w = {
        .m = m, .old_n = old_n, .mu = PTHREAD_MUTEX_INITIALIZER, .hi = ntouched};
    pthread_t th;
    bool two =
        m->nev - nev_before >= FINISH_TWO && ntouched > 1 && sysconf(_SC_NPROCESSORS_ONLN) > 1;
    if (two) /* the biggest first (finish_work) */
        qsort_r(m->touched, ntouched, sizeof(*m->touched), cmp_track_size, m);
    pthread_mutex_t lod_mu = PTHREAD_MUTEX_INITIALIZER;
    m->lod_mu = two ? &lod_mu : NULL; /* before the thread reads it */
    two = two && pthread_create(&th, NULL, finish_worker, &w) == 0;
    finish_run(&w, false);
    if (two)
        pthread_join(th, NULL);
    m->lod_mu = NULL;
    pthread_mutex_destroy(&lod_mu);
    pthread_mutex_destroy(&w.mu);
    free(old_n);
    m->gen++;
}

/* ---- reading --------------------------------------------------------------------------- */

uint64_t trace_model_generation(const struct trace_model *m)
{
    return m->gen;
}

size_t trace_model_track_events(const struct trace_model *m, uint32_t track, const uint32_t **idx)
{
    assert(track < m->ntracks);
    *idx = m->tracks[track].idx;
    return m->tracks[track].n;
}

size_t trace_model_mem_access_count(const struct trace_model *m)
{
    return m->nmem;
}

const struct trace_mem_access *trace_model_mem_access(const struct trace_model *m, size_t i)
{
    assert(i < m->nmem);
    return &m->mem[i];
}

size_t trace_model_token_count(const struct trace_model *m)
{
    return m->ntok;
}

const struct trace_token *trace_model_token(const struct trace_model *m, size_t i)
{
    assert(i < m->ntok);
    return &m->tok[i];
}

size_t trace_model_marker_count(const struct trace_model *m)
{
    return m->nmk;
}

const struct trace_marker *trace_model_marker(const struct trace_model *m, size_t i)
{
    assert(i < m->nmk);
    return &m->mk[i];
}

size_t trace_model_bw_sample_count(const struct trace_model *m)
{
    return m->nbw;
}

const struct trace_bw_sample *trace_model_bw_sample(const struct trace_model *m, size_t i)
{
    assert(i < m->nbw);
    return &m->bw[i];
}

const struct sim_value *trace_model_metadata(const struct trace_model *m)
{
    return m->metadata;
}

const struct sim_value *trace_model_config(const struct trace_model *m)
{
    return m->config;
}

const struct sim_value *trace_model_file_summary(const struct trace_model *m)
{
    return m->file_summary;
}

uint64_t trace_model_t_min(const struct trace_model *m)
{
    return m->have_time ? m->tmin : 0;
}

uint64_t trace_model_t_max(const struct trace_model *m)
{
    return m->have_time ? m->tmax : 0;
}

double trace_model_clock_ghz(const struct trace_model *m)
{
    double g = sim_value_get_float(m->config, "clock_ghz", 0);
    return g > 0 && g < 1e9 ? g : 0;
}

uint64_t trace_model_ignored_events(const struct trace_model *m)
{
    return m->ignored_events;
}

uint64_t trace_model_ignored_fields(const struct trace_model *m)
{
    return m->ignored_fields;
}
