/*
 * The trace model's own layout (see model.h), shared by the sources of trace/model/ that
 * reach inside it: model.c, which keeps it, trackq.c, which answers questions about its
 * tracks, and mapped.c, which gives a model arrays it does not own (a mapped index,
 * trace/model/mapped.h). Nothing outside trace/model/ includes this.
 */
#ifndef TRACE_MODEL_IMPL_H
#define TRACE_MODEL_IMPL_H

#include "trace/model/model.h"

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NO_COL UINT64_MAX /* col_off of an event without an op column */
/* The packed details of an event in flight (trace_model_set_details_packed). */
struct pend_det {
    uint64_t ev; /* UINT64_MAX: an empty slot */
    double t_start_ns;
    uint8_t *p; /* owned */
    size_t len, cap;
};

/* Buffers of ended in-flight details kept for the next ones (a live run starts and ends an
 * op every few engine events). */
enum { SPARE_BUFS = 256 };
struct spare_buf {
    uint8_t *p;
    size_t cap;
};

struct str_entry {
    const char *s; /* in the arena, NUL-terminated */
    uint32_t len;
    uint32_t hash;
};

/*
 * The state of a track's index after its first positions, ended events only, taken in
 * start order: the greatest end so far, and the length of the union of their intervals.
 * With events in start order, the union's part at or after any x below the next start is
 * exactly [x, max end): so the busy time before x is cover - max(0, maxend - x).
 */
struct run_state {
    uint64_t maxend;
    uint64_t cover;
    uint64_t first; /* start of the event at the block's first position (UINT64_MAX: none) */
};

enum { TRACK_BLOCK = 16 }; /* positions per stored run_state */

/* Per-track indexes. Positions are indices into the sorted array idx. */
struct track_data {
    struct trace_track pub;
    uint32_t *idx;           /* owned: event indices sorted by (start, index) */
    size_t n, cap;           /* published length (the index as of the last finish) */
    struct run_state *block; /* owned: block[b] = state after positions [0, b * TRACK_BLOCK) */
    size_t nblock, capblock; /* n / TRACK_BLOCK + 1 once built */
    size_t dirty_from;       /* block states from this position on need a recount */
    size_t inflight_from;    /* first position holding an in-flight event, or n */
    size_t ninflight;        /* in-flight events of the track (published or not) */
    uint8_t kinds;           /* its events' op kinds (published or not): trace_model_track_kinds */
    size_t pending;          /* events added since the last finish (its index grows once) */
    size_t staged;           /* idx[n, n + staged): events added, put in ahead of the
                                next finish (trace_model_stage), not yet published */
    bool unsorted;           /* an event arrived out of start order: rebuild at finish */
    bool touched;            /* in the current finish's list of changed tracks */
    /* the level-of-detail summary (lod.c): lod[j] = block[j << the model's lod_level], in
     * the heap (never given back), and the state after all n positions */
    struct run_state *lod; /* owned */
    size_t nlod, caplod;
    struct run_state lod_end;
};

struct trace_model {
    /* strings: id 0 is TRACE_NO_STR (the empty string) */
    struct str_entry *strs; /* owned */
    uint32_t nstr, capstr;
    uint32_t *htab; /* owned: string ids, 0 = empty slot; capacity a power of two */
    uint32_t hcap;
    char **chunks; /* owned: arena chunks */
    size_t nchunks, capchunks;
    char *arena; /* free space in the current chunk */
    size_t arena_left;

    struct track_data *tracks; /* owned */
    uint32_t ntracks, captracks;
    uint32_t *thtab; /* owned: track index + 1 by name id hash, 0 = empty */
    uint32_t thcap;

    struct trace_event *ev; /* owned */
    uint64_t nev, capev;
    uint64_t expect;   /* events expected in all (trace_model_expect), or 0 */
    uint64_t nev_done; /* events [0, nev_done) are in their tracks' indexes */
    uint64_t *ended;   /* owned: events ended since the last finish */
    size_t nended, capended;
    uint32_t *touched;   /* owned: tracks changed during the current finish */
    size_t ntouched;     /* how many: kept from trace_model_stage to the finish */
    uint64_t nev_staged; /* events [nev_done, nev_staged) are staged in their tracks */

    struct sim_value **det; /* owned: live details table */
    size_t ndet, capdet;
    struct trace_spill *spill; /* owned: packed details of ended live events, or NULL */
    struct pend_det *pend;     /* owned: packed details of events in flight, open addressing */
    size_t npend, cappend;     /* cappend a power of two */
    struct spare_buf spare[SPARE_BUFS]; /* owned */
    size_t nspare;

    struct trace_mem_access *mem;
    size_t nmem, capmem;
    struct trace_token *tok;
    size_t ntok, captok;
    struct trace_marker *mk;
    size_t nmk, capmk;
    struct trace_bw_sample *bw;
    size_t nbw, capbw;
    size_t nbw_dram;  /* samples of the whole DRAM among them */
    uint64_t *bw_rev; /* owned, per sample: bw_revs when it last changed (0: as added) */
    uint64_t bw_revs; /* changes of samples after they were added */
    struct trace_transfer *xf;
    size_t nxf, capxf;
    uint64_t *dep_ev, *dep_on; /* owned: explicit dependencies, by dep_ev */
    size_t ndep, capdep;

    struct sim_value *metadata, *config, *file_summary; /* owned */
    struct sim_value *energy;                           /* owned: summary_metrics.energy */
    struct trace_power_sample *power;                   /* owned: power_samples */
    size_t npower;
    uint64_t energy_gen; /* trace_model_set_energy_take calls */

    uint64_t now;
    bool have_time;
    uint64_t tmin, tmax;
    uint64_t gen;
    uint64_t ignored_events, ignored_fields;

    uint64_t *col_off; /* owned: per event, its op column's offset in col, or NO_COL */
    uint64_t capcol_off;
    uint8_t *col; /* owned: op columns, each its length byte then its bytes */
    uint64_t ncol, capcol;
    struct trace_site *sites; /* owned: [0] unused (TRACE_NO_SITE) */
    uint32_t nsites;
    size_t capsites;
    uint16_t *sitehash; /* owned: site ids, 0 empty, SITE_HASH long once the first is added */

    unsigned lod_level; /* lod.c: the summaries keep every (1 << lod_level)-th block state */
    size_t lod_total;   /* entries of every track's summary */
    void *lod_mu;       /* a finish on two threads: the pthread_mutex_t the summaries'
                           updates take (they share lod_level and lod_total); else NULL */

    /* mapped.c: ev, col_off and col, xf, dep_ev and dep_on, and each track's idx and block
     * are lent (not owned) while ext is set; ext_release(ext_ctx) gives them back */
    bool ext;
    bool ext_pages;           /* the lent arrays are pages of a file mapping: may be given back */
    struct lent_pager *pager; /* owned: the thread that gives them back, or NULL */
    void (*ext_release)(void *ctx);
    void *ext_ctx;

    const char *src; /* borrowed, released through src_release */
    size_t src_len;
    void (*src_release)(void *ctx);
    void *src_ctx;
};

/* Mapped arrays (mapped.c): copy every array the model does not own into its own memory
 * and release what it was lent, before the model changes them; free calls drop first so
 * that nothing lent is freed. */
void trace_model_ext_unshare(struct trace_model *m);
void trace_model_ext_drop(struct trace_model *m);

/* Level-of-detail summaries (lod.c): bring track t's up to date after its block states from
 * block b on changed (state: the state after its n positions); rebuild every track's from
 * their block states (a model lent its arrays). */
void trace_lod_track_update(struct trace_model *m, struct track_data *t, size_t b,
                            const struct run_state *state);
void trace_lod_rebuild(struct trace_model *m);

/* ---- a track's running states (model.c keeps them, trackq.c reads them) ---- */

/* Take the event at position k into a running state. */
static inline void run_add(const struct trace_model *m, const struct track_data *t, size_t k,
                           struct run_state *st)
{
    const struct trace_event *e = &m->ev[t->idx[k]];
    if (e->flags & TRACE_EV_INFLIGHT)
        return;
    uint64_t from = e->start > st->maxend ? e->start : st->maxend;
    if (e->end > from)
        st->cover += e->end - from;
    if (e->end > st->maxend)
        st->maxend = e->end;
}

/* The state after positions [0, k). */
static inline struct run_state run_at(const struct trace_model *m, const struct track_data *t,
                                      size_t k)
{
    size_t b = k / TRACK_BLOCK;
    if (!t->nblock)
        return (struct run_state){0, 0, UINT64_MAX}; /* no events published yet */
    assert(b < t->nblock);
    struct run_state st = t->block[b];
    for (size_t j = b * TRACK_BLOCK; j < k; j++)
        run_add(m, t, j, &st);
    return st;
}

#endif
