/*
 * A model's per-event arrays lent from outside (see mapped.h): handing them over, reading
 * them raw for the index, and copying them into the model's memory before it changes
 * them.
 */
#include "trace/model/mapped.h"

#include "sim/util/xalloc.h"
#include "trace/model/budget.h"
#include "trace/model/model_impl.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert((int)TRACE_MODEL_TRACK_BLOCK == (int)TRACK_BLOCK, "one block size");

size_t trace_model_block_size(void)
{
    return sizeof(struct run_state);
}

const void *trace_model_track_blocks(const struct trace_model *m, uint32_t track, size_t *nblock)
{
    assert(track < m->ntracks);
    *nblock = m->tracks[track].nblock;
    return m->tracks[track].block;
}

const uint64_t *trace_model_opcol_table(const struct trace_model *m, const uint8_t **col,
                                        uint64_t *ncol)
{
    *col = m->col, *ncol = m->ncol;
    if (!m->col_off || !m->nev)
        return NULL;
    if (m->capcol_off < m->nev) { /* events added after the last column: they have none */
        struct trace_model *w = (struct trace_model *)m;
        w->col_off = trace_budget_realloc(w->col_off, m->capcol_off * sizeof(*w->col_off),
                                          m->nev * sizeof(*w->col_off));
        for (uint64_t k = m->capcol_off; k < m->nev; k++)
            w->col_off[k] = NO_COL;
        w->capcol_off = m->nev;
    }
    return m->col_off;
}

const uint64_t *trace_model_dep_table(const struct trace_model *m, const uint64_t **on)
{
    *on = m->dep_on;
    return m->dep_ev;
}

/*
 * The give-backs of a model lent from a file run on a thread of its own: each walks the page
 * tables of every lent array (a gigabyte of mappings for ten million events: a third of a
 * millisecond), and a pass over millions of events asks for one every so many, which the
 * thread asking need not wait for. The thread starts when the model is lent from its file,
 * at the priority of the thread opening it (not at that of the first analysis asking: a run
 * ahead of the user's key, at nice 19). One asked while one is under way runs once more
 * after it (a give-back covers what was read before it began). The thread is stopped before
 * anything lent is released or changes.
 */
struct lent_pager {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool asked;   /* a give-back is due */
    bool busy;    /* one is under way */
    bool quit;    /* the thread is to end */
    bool started; /* the thread runs (else give-backs run on the thread asking); set once */
    pthread_t th;
};

static void giveback_all(const struct trace_model *m);

static void *pager_main(void *arg)
{
    const struct trace_model *m = arg;
    struct lent_pager *p = m->pager;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->asked && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->quit)
            break;
        p->asked = false, p->busy = true;
        pthread_mutex_unlock(&p->mu);
        giveback_all(m);
        pthread_mutex_lock(&p->mu);
        p->busy = false;
        pthread_cond_broadcast(&p->cv); /* (to trace_model_lent_settle) */
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* End m's pager and free it (nothing when it has none). */
static void pager_stop(struct trace_model *m)
{
    struct lent_pager *p = m->pager;
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->quit = true;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
    m->pager = NULL;
}

void trace_model_lent_from_file(struct trace_model *m)
{
    m->ext_pages = m->ext;
    if (m->ext_pages && !m->pager) {
        struct lent_pager *p = m->pager = sim_xcalloc(1, sizeof(*m->pager));
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->cv, NULL);
        p->started = pthread_create(&p->th, NULL, pager_main, m) == 0;
    }
}

bool trace_model_is_lent(const struct trace_model *m)
{
    return m->ext;
}

/* Tell the memory budget about the lent arrays (their pages may be given back while they
 * are read: the span from the first to the end of the last, when it is all a read-only
 * mapping of a file), or that they go. */
static void lend_all(struct trace_model *m, bool lend)
{
    if (!lend) {
        trace_budget_unlend(m);
        return;
    }
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    const void *first = NULL; /* the array at lo */
    const void *p[] = {m->ev, m->col_off, m->col, m->xf, m->dep_ev, m->dep_on};
    size_t n[] = {
        m->nev * sizeof(*m->ev), m->capcol_off * sizeof(*m->col_off), m->ncol,
        m->nxf * sizeof(*m->xf), m->ndep * sizeof(*m->dep_ev),        m->ndep * sizeof(*m->dep_on)};
    for (size_t k = 0; k < sizeof(p) / sizeof(p[0]); k++)
        if (p[k] && n[k]) {
            if ((uintptr_t)p[k] < lo)
                lo = (uintptr_t)p[k], first = p[k];
            hi = (uintptr_t)p[k] + n[k] > hi ? (uintptr_t)p[k] + n[k] : hi;
        }
    for (uint32_t k = 0; k < m->ntracks; k++) {
        const struct track_data *t = &m->tracks[k];
        if (t->idx && t->n) {
            if ((uintptr_t)t->idx < lo)
                lo = (uintptr_t)t->idx, first = t->idx;
            uintptr_t e = (uintptr_t)(t->idx + t->n), f = (uintptr_t)(t->block + t->nblock);
            hi = e > hi ? e : hi;
            hi = t->block && f > hi ? f : hi;
        }
    }
    if (lo < hi)
        trace_budget_lend(m, first, hi - lo);
}

void trace_model_lend(struct trace_model *m, const struct trace_model_lent *a,
                      void (*release)(void *ctx), void *ctx)
{
    assert(m->nev == 0 && !m->ext);
    m->ev = (struct trace_event *)a->ev;
    m->nev = m->capev = m->nev_done = a->nev;
    m->col_off = (uint64_t *)a->col_off;
    m->capcol_off = a->col_off ? a->nev : 0;
    m->col = (uint8_t *)a->col;
    m->ncol = m->capcol = a->col_off ? a->ncol : 0;
    m->xf = (struct trace_transfer *)a->xf;
    m->nxf = m->capxf = a->nxf;
    m->dep_ev = (uint64_t *)a->dep_ev;
    m->dep_on = (uint64_t *)a->dep_on;
    m->ndep = m->capdep = a->ndep;
    for (uint32_t k = 0; k < m->ntracks; k++) {
        struct track_data *t = &m->tracks[k];
        t->idx = (uint32_t *)a->idx[k];
        t->n = t->cap = a->nidx[k];
        t->block = (struct run_state *)a->block[k];
        t->nblock = t->capblock = a->nblock[k];
        t->dirty_from = SIZE_MAX;
        t->inflight_from = t->n;
        t->ninflight = 0;
        t->kinds = a->kinds[k];
        t->unsorted = t->touched = false;
    }
    if (a->nev) {
        if (!m->have_time) {
            m->tmin = a->tmin, m->tmax = a->tmax, m->have_time = true;
        } else {
            m->tmin = a->tmin < m->tmin ? a->tmin : m->tmin;
            m->tmax = a->tmax > m->tmax ? a->tmax : m->tmax;
        }
    }
    lend_all(m, true);
    m->ext = true;
    m->ext_pages = false;
    m->ext_release = release, m->ext_ctx = ctx;
    trace_lod_rebuild(m);
    m->gen++;
}

/* A copy of n elements of size bytes at p in the model's memory (NULL for none). */
static void *own(const void *p, size_t n, size_t size)
{
    if (!p || !n)
        return NULL;
    void *q = trace_budget_realloc(NULL, 0, n * size);
    memcpy(q, p, n * size);
    return q;
}

void trace_model_ext_unshare(struct trace_model *m)
{
    if (!m->ext)
        return;
    pager_stop(m);
    lend_all(m, false);
    m->ev = own(m->ev, m->nev, sizeof(*m->ev));
    m->capev = m->ev ? m->nev : 0;
    m->col_off = own(m->col_off, m->capcol_off, sizeof(*m->col_off));
    m->capcol_off = m->col_off ? m->capcol_off : 0;
    m->col = own(m->col, m->ncol, 1);
    m->capcol = m->col ? m->ncol : 0;
    m->xf = own(m->xf, m->nxf, sizeof(*m->xf));
    m->capxf = m->xf ? m->nxf : 0;
    m->dep_ev = own(m->dep_ev, m->ndep, sizeof(*m->dep_ev));
    m->dep_on = own(m->dep_on, m->ndep, sizeof(*m->dep_on));
    m->capdep = m->dep_ev ? m->ndep : 0;
    for (uint32_t k = 0; k < m->ntracks; k++) {
        struct track_data *t = &m->tracks[k];
        t->idx = own(t->idx, t->n, sizeof(*t->idx));
        t->cap = t->idx ? t->n : 0;
        t->block = own(t->block, t->nblock, sizeof(*t->block));
        t->capblock = t->block ? t->nblock : 0;
    }
    m->ext = m->ext_pages = false;
    if (m->ext_release)
        m->ext_release(m->ext_ctx);
    m->ext_release = NULL, m->ext_ctx = NULL;
}

void trace_model_ext_drop(struct trace_model *m)
{
    pager_stop(m);
    if (!m->ext)
        return;
    lend_all(m, false);
    m->ev = NULL, m->col_off = NULL, m->col = NULL, m->xf = NULL;
    m->dep_ev = m->dep_on = NULL;
    for (uint32_t k = 0; k < m->ntracks; k++)
        m->tracks[k].idx = NULL, m->tracks[k].block = NULL;
    m->ext = m->ext_pages = false;
    if (m->ext_release)
        m->ext_release(m->ext_ctx);
    m->ext_release = NULL, m->ext_ctx = NULL;
}

/* Give back the whole pages inside the n bytes at p. */
static void giveback(const void *p, size_t n)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) / page * page, b = ((uintptr_t)p + n) / page * page;
    if (p && b > a)
        madvise((char *)p + (a - (uintptr_t)p), b - a, MADV_DONTNEED);
}

static void giveback_all(const struct trace_model *m)
{
    giveback(m->ev, m->nev * sizeof(*m->ev));
    giveback(m->col_off, m->capcol_off * sizeof(*m->col_off));
    giveback(m->col, m->ncol);
    giveback(m->xf, m->nxf * sizeof(*m->xf));
    giveback(m->dep_ev, m->ndep * sizeof(*m->dep_ev));
    giveback(m->dep_on, m->ndep * sizeof(*m->dep_on));
    for (uint32_t k = 0; k < m->ntracks; k++) {
        giveback(m->tracks[k].idx, m->tracks[k].n * sizeof(*m->tracks[k].idx));
        giveback(m->tracks[k].block, m->tracks[k].nblock * sizeof(*m->tracks[k].block));
    }
}

/* Map in the pages holding the n bytes at p (n > 0), inside a lent array. */
static void ahead(const void *p, size_t n)
{
#ifdef MADV_POPULATE_READ
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p / page * page, b = ((uintptr_t)p + n + page - 1) / page * page;
    /* (the pages of the first and last bytes lie inside the mapping) */
    madvise((char *)p - ((uintptr_t)p - a), b - a, MADV_POPULATE_READ);
#else
    (void)p, (void)n;
#endif
}

void trace_model_lent_ahead(const struct trace_model *m, uint64_t lo, uint64_t hi)
{
    if (!m->ext_pages || lo >= hi || hi > m->nev)
        return;
    ahead(m->ev + lo, (hi - lo) * sizeof(*m->ev));
    if (m->col_off && hi <= m->capcol_off)
        ahead(m->col_off + lo, (hi - lo) * sizeof(*m->col_off));
}

void trace_model_lent_giveback(const struct trace_model *m)
{
    if (!m->ext || !m->ext_pages)
        return;
    struct lent_pager *p = m->pager;
    if (!p->started) { /* (no thread to be had) */
        giveback_all(m);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->asked = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void trace_model_lent_settle(const struct trace_model *m)
{
    struct lent_pager *p = m->ext && m->ext_pages ? m->pager : NULL;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    while (p->started && (p->asked || p->busy))
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
