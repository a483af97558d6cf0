/*
 * The critical path (see critpath.h): one sweep over the ops' starts and ends in time
 * order. An op's end publishes what it wrote (an interval map per space: each byte range
 * to the op that wrote it last), its tile's and its track's last op; an op's start picks
 * its predecessor among what has ended by then. Walking the predecessors back from the op
 * that ends last gives the path. O(n log n) in the ops, plus the ranges' overlaps. For a
 * set of many ops, a second thread reads their details ahead of the sweep (the feed).
 */
#include "trace/verdict/critpath.h"

#include "trace/model/mapped.h"
#include "trace/verdict/imap.h"
#include "trace/verdict/sweep_int.h"

#include "sim/util/prefault.h"
#include "sim/util/xalloc.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONE UINT32_MAX

/* Points of the sweep between two give-backs of the pages of the model's mapped arrays it
 * read (trace_model_lent_giveback): a launch of ten million ops would otherwise keep every
 * op column resident. */
enum { GIVEBACK_EVERY = 1 << 20 };
/* How many ops of the path ahead its walk asks for their figures. */
enum { WALK_PREFETCH = 16 };

/* The length of the PE part of a component id ("sip0.cube0.pe0" of "sip0.cube0.pe0.pe_dma"),
 * or 0 when it names no PE's engine. */
static size_t pe_prefix(const char *name)
{
    const char *last = strrchr(name, '.');
    if (!last || strncmp(last + 1, "pe_", 3) != 0)
        return 0;
    return (size_t)(last - name);
}

static _Thread_local const struct trace_model *pe_m; /* for qsort; analyses may run on a worker */

static int cmp_pe(const void *a, const void *b)
{
    const char *x = trace_model_str(pe_m, trace_model_track_get(pe_m, *(const uint32_t *)a)->name);
    const char *y = trace_model_str(pe_m, trace_model_track_get(pe_m, *(const uint32_t *)b)->name);
    size_t nx = pe_prefix(x), ny = pe_prefix(y);
    int c = strncmp(x, y, nx < ny ? nx : ny);
    return c ? c : nx < ny ? -1 : nx > ny;
}

/* Per track, the index of its PE (tracks of one PE's engines share it), or NONE. */
static uint32_t *pe_of_tracks(const struct trace_model *m, size_t nt)
{
    uint32_t *pe = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*pe));
    uint32_t *order = sim_xreallocarray(NULL, nt ? nt : 1, sizeof(*order));
    size_t n = 0;
    for (uint32_t t = 0; t < nt; t++) {
        pe[t] = NONE;
        if (pe_prefix(trace_model_str(m, trace_model_track_get(m, t)->name)))
            order[n++] = t;
    }
    pe_m = m;
    qsort(order, n, sizeof(*order), cmp_pe);
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && cmp_pe(&order[i - 1], &order[i]) != 0)
            id++;
        pe[order[i]] = id;
    }
    pe_m = NULL;
    free(order);
    return pe;
}

/* By the first of two uint64_t. */
static int cmp_u64pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The ops of the set are struct trace_op_span (critpath.h): op k's index in the input's
 * events is k, or src[k] when umbrella ops were left out; its tile the index of its tile
 * among those of the set (a tilemap's), or NONE. */

/* The index in the input's events of op k. */
static size_t op_src(const uint32_t *src, size_t k)
{
    return src ? src[k] : k;
}

/* Event i of the input's set: events[i], or first + i without an array (see
 * trace_critpath_input). */
static inline uint64_t set_ev(const uint64_t *events, uint64_t first, size_t i)
{
    return events ? events[i] : first + i;
}

enum { EVENTS_AHEAD = 1 << 16 }; /* ops whose events are mapped in at once */

/* Map in the events of ops [i, i + EVENTS_AHEAD) of in, read next, when they lie close
 * together among the model's (trace_model_lent_ahead). */
static void events_ahead(const struct trace_critpath_input *in, size_t i)
{
    size_t j = in->n - i > EVENTS_AHEAD ? i + EVENTS_AHEAD : in->n;
    uint64_t lo = set_ev(in->events, in->first, i), hi = set_ev(in->events, in->first, j - 1) + 1;
    if (hi - lo <= 2 * (uint64_t)EVENTS_AHEAD)
        trace_model_lent_ahead(in->m, lo, hi);
}

static uint64_t end_point(const struct trace_op_span *o)
{
    return o->end > o->start ? o->end - 1 : o->end;
}

static unsigned end_kind(const struct trace_op_span *o)
{
    return o->end > o->start + 1 ? 0 : 2;
}

/* The sweep's points: each op's start, and its end seen a cycle early (times are rounded out
 * to whole cycles, so an op that starts as its predecessor ends may start in the
 * predecessor's last cycle); an op of no length ends at its start, after it, and so does an
 * op of one cycle (its end seen a cycle early is its start: before its start, it would be
 * the op's own predecessor and cut the path there). In time order,
 * ends (kind 0) before starts (kind 1) before the ends of ops of no length or one cycle
 * (kind 2), then by
 * op: two arrays of op indices (the starts, the ends) each sorted so, merged as the sweep
 * goes, in 8 bytes an op rather than two sorted 16-byte points (and qsort's copy of them). */
/* The key of op k: its start, or its end point. */
static uint64_t op_key(const struct trace_op_span *ops, uint32_t k, bool ends)
{
    return ends ? end_point(&ops[k]) : ops[k].start;
}

/* What one pass over the ops finds, as they are gathered: whether their starts are in op
 * order, and their end points (each of kind 0: one of kind 2 comes after those of kind 0 of
 * its time), whether one has a tile, the op that ends last (the latest start on a tie). */
struct scan {
    bool starts_in_order, ends_in_order, with_tiles;
    uint32_t last;
};

/* Take op k (the ops before it taken) into s. */
static inline void scan_op(struct scan *s, const struct trace_op_span *ops, size_t k)
{
    const struct trace_op_span *o = &ops[k], *l = &ops[s->last];
    s->with_tiles |= o->tile != NONE;
    if (end_kind(o) != 0)
        s->ends_in_order = false;
    if (k && o->start < ops[k - 1].start)
        s->starts_in_order = false;
    if (k && end_point(o) < end_point(&ops[k - 1]))
        s->ends_in_order = false;
    if (o->end > l->end || (o->end == l->end && o->start > l->start))
        s->last = (uint32_t)k;
}

/* Merge the sorted runs [0, mid) and [mid, n) of key/idx stably (the first run's on a
 * tie) through tk/ti (room for n), back into key/idx. */
static void merge_runs(uint64_t *key, uint32_t *idx, size_t mid, size_t n, uint64_t *tk,
                       uint32_t *ti)
{
    size_t a = 0, b = mid, o = 0;
    while (a < mid && b < n) {
        bool second = key[b] < key[a];
        size_t from = second ? b++ : a++;
        tk[o] = key[from], ti[o++] = idx[from];
    }
    for (; a < mid; a++)
        tk[o] = key[a], ti[o++] = idx[a];
    for (; b < n; b++)
        tk[o] = key[b], ti[o++] = idx[b];
    memcpy(key, tk, n * sizeof(*key));
    memcpy(idx, ti, n * sizeof(*idx));
}

/* Insertion sort of idx (stable) by the ops' keys, giving up once it has moved more than
 * budget elements: then [0, i) is sorted and [i, n) as it was, i returned (n when done).
 * The keys are read from the ops, not copied: nearly sorted, an op moves a few places. */
static size_t insertion_sort(uint32_t *idx, size_t n, const struct trace_op_span *ops, bool ends,
                             size_t budget)
{
    size_t moved = 0;
    uint64_t prev = op_key(ops, idx[0], ends);
    for (size_t i = 1; i < n; i++) {
        uint32_t xi = idx[i];
        uint64_t x = op_key(ops, xi, ends);
        if (prev <= x) {
            prev = x;
            continue;
        }
        size_t j = i;
        while (j > 0 && op_key(ops, idx[j - 1], ends) > x) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = xi;
        moved += i - j;
        if (moved > budget)
            return i + 1;
        /* prev, the largest key of [0, i], is unchanged */
    }
    return n;
}

/*
 * Sort idx[0..n) (op indices) stably by their keys (op_key): a tie keeps the order idx
 * had. A model's events come in the order they ended, so the ends are one or two sorted
 * runs (merged), the starts nearly sorted (an insertion sort while it moves few, reading
 * the keys from the ops, else a radix sort of the keys, in as few digits as their range
 * needs). key, tk and ti have room for n, and are written only when the insertion sort
 * gives up or two runs are merged (a launch of millions of ops would map hundreds of
 * megabytes afresh for them).
 */
static void sort_ops_by(uint32_t *idx, size_t n, const struct trace_op_span *ops, bool ends,
                        uint64_t *key, uint64_t *tk, uint32_t *ti)
{
    if (n < 2)
        return;
    size_t descents = 0, at = 0;
    uint64_t prev = op_key(ops, idx[0], ends);
    for (size_t i = 1; i < n; i++) {
        uint64_t x = op_key(ops, idx[i], ends);
        if (x < prev)
            descents++, at = i;
        prev = x;
    }
    if (!descents)
        return;
    if (descents == 1) {
        for (size_t i = 0; i < n; i++)
            key[i] = op_key(ops, idx[i], ends);
        merge_runs(key, idx, at, n, tk, ti);
        return;
    }
    size_t from = insertion_sort(idx, n, ops, ends, 4 * n);
    if (from == n)
        return;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = op_key(ops, idx[i], ends);
        key[i] = x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    /* [0, from) sorted, [from, n) as it was: every element of the first came before every
     * element of the second, so a stable sort of the whole keeps ties in idx's order */
    unsigned bits = 0;
    while (bits < 64 && ((hi - lo) >> bits) != 0)
        bits++;
    unsigned passes = (bits + 15) / 16, width = (bits + passes - 1) / passes;
    size_t nb = (size_t)1 << width, mask = nb - 1;
    size_t *count = sim_xmalloc(nb * sizeof(*count));
    uint64_t *sk = key, *dk = tk;
    uint32_t *si = idx, *di = ti;
    for (unsigned p = 0; p < passes; p++) {
        unsigned shift = p * width;
        memset(count, 0, nb * sizeof(*count));
        for (size_t i = 0; i < n; i++)
            count[((sk[i] - lo) >> shift) & mask]++;
        size_t sum = 0;
        for (size_t d = 0; d < nb; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t o = count[((sk[i] - lo) >> shift) & mask]++;
            dk[o] = sk[i], di[o] = si[i];
        }
        uint64_t *t = sk;
        sk = dk, dk = t;
        uint32_t *u = si;
        si = di, di = u;
    }
    if (si != idx)
        memcpy(idx, si, n * sizeof(*idx));
    free(count);
}

/*
 * The feed: a second thread reading the ops' columns in op order (trace_opinfo_unpack_raw:
 * the model alone, read-only) into a ring of FEED slots, op j's at j % FEED, while the
 * calling thread sweeps; it takes them in the same order, looks their spaces up in its own
 * registry (trace_opinfo_resolve: the registry sees what one thread's reads would show it,
 * in the same order; the reader names the spaces of an op itself when the calling thread
 * has looked each of its names up before, which changes nothing in the registry) and hands
 * them on as it did reading them itself. Before it reads, the thread faults in the pages of
 * the sweep's big arrays while the calling thread gathers the ops. Each side publishes
 * how far it got every FEED_BATCH ops (and before it waits). The reader, faster, fills the
 * ring and sleeps until half of it is free again (a wake-up for every few hundred ops, not
 * one per batch); the taker that catches up sleeps until the reader is a quarter of it ahead
 * (the same). A side that sleeps says until when
 * (reader_wait, taker_wait), and the other wakes it only then. The reader stops at the end,
 * when asked (the sweep ended or was cancelled) or when the input's progress is cancelled;
 * an op it did not read (or could not) the calling thread reads itself.
 */
/* (FEED: a wake-up of the reader every FEED / 2 ops, a system call on this thread; a ring of
 * a few thousand slots still sits in the caches) */
enum { FEED = 8192, FEED_BATCH = 64, FEED_NAMES = 32, FEED_RANGES = 3 };
/* (the taker asks for the line of the op TAKE_AHEAD past the one it takes, read already:
 * it comes from the reader's core, a wait of a miss of every cache otherwise) */
enum { TAKE_AHEAD = 8 };
/* (the taker that caught up sleeps until the reader is this many ops ahead: woken for every
 * batch, a system call each on the reader's thread, a reader slowed down by the host falls
 * further behind with every wake-up) */
enum { TAKE_LAG = FEED / 4 };
/* (reading, the parts of the sweep's block it reaches next are faulted in AHEAD ops past
 * the op read, AHEAD_STEP bytes or more at a time) */
enum { AHEAD = 1 << 16, AHEAD_STEP = 1 << 20 };
/* (the gathering says how far it got every this many ops) */
enum { GATHER_STEP = 1 << 12 };
_Static_assert(EVENTS_AHEAD % GATHER_STEP == 0 && TRACE_PROGRESS_EVERY % GATHER_STEP == 0 &&
                   GIVEBACK_EVERY % TRACE_PROGRESS_EVERY == 0,
               "the loops' checks between their runs");

struct feed {
    const struct trace_model *m;
    const uint64_t *events; /* (see set_ev) */
    uint64_t first;
    const uint32_t *src;
    size_t n;
    struct trace_progress *progress;
    /* the input's each_raw (NULL: none), and whether the reader still hands the ops to it:
     * from the first it cannot (whose columns do not unpack) on, the taker hands each op to
     * each_info */
    void (*each_raw)(void *ctx, size_t i, uint32_t track, const struct trace_opinfo_raw *raw);
    void *each_ctx;
    bool handing;
    /* op j's at j % FEED: a line of the caches an op, written here and read there (an op
     * of a few ranges, named and handed on, whole in it; else in its full slot) */
    struct feed_slot {
        _Alignas(64) bool ok; /* the op's columns were read (else: none, or they do not unpack) */
        bool handed;          /* to each_raw */
        bool compact; /* its ranges, named, are here (ok and handed): none in its full slot */
        uint8_t nreads, has_write;
        uint8_t space[FEED_RANGES]; /* the write's (when has_write), then the reads' */
        uint64_t lohi[FEED_RANGES][2];
    } * slot; /* owned: FEED */
    struct feed_full {
        bool resolved; /* into oi (their spaces' names all known), else into raw */
        union {
            struct trace_opinfo_raw raw;
            struct trace_opinfo oi;
        } u;
    } * full; /* owned: FEED */
    /* the spaces' names the taker has looked up in its registry, each (string id << 8 | its
     * id), nnamed of them: the reader names the spaces of an op whose names are all among
     * them itself (trace_opinfo_resolve_known), the taker the others */
    _Atomic uint64_t named[FEED_NAMES];
    _Atomic unsigned nnamed;
    uint32_t rnames[FEED_NAMES]; /* the reader's copy of named, rn of them */
    uint8_t rids[FEED_NAMES];
    unsigned rn;
    uint32_t tnames[FEED_NAMES]; /* the taker's: the names it put in named */
    unsigned tn;
    /* the reader's: ops read (published), whether it stopped (head final then), until when
     * it sleeps (the tail it waits for; SIZE_MAX: awake) */
    _Alignas(64) _Atomic size_t head;
    atomic_bool ended;
    _Atomic size_t reader_wait;
    /* the taker's: ops taken (published), whether the reader must stop, until when it
     * sleeps (the op it waits for; SIZE_MAX: awake); the head it last read */
    _Alignas(64) _Atomic size_t tail;
    atomic_bool stop;
    _Atomic size_t taker_wait;
    size_t seen;
    /* the sweep's arrays, whose fresh pages it faults in (sim/util/prefault.h): before it
     * reads, the ops' (ops, nops bytes), then the parts of the block (arena) in the order
     * the sweep writes them, laid out for the set's ops (pred, flags, then rng: below), until
     * go or stop (hold); then, as it reads, the parts of rng and pred the sweep reaches next,
     * AHEAD ops past the op it reads (at, for each, the address faulted in up to) */
    void *ops;
    size_t nops;
    _Atomic size_t gathered; /* the ops gathered so far (every GATHER_STEP of them) */
    uint32_t *groom; /* (the gathering's array of starts, as the ops' a sixth of their bytes) */
    uint8_t *arena;
    atomic_bool hold;
    uintptr_t at_rng, at_pred;
    atomic_bool go;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
};

static void feed_broadcast(struct feed *f)
{
    pthread_mutex_lock(&f->mu);
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* The reader: ops before j read; wake the taker if it waits for one of them. */
static void feed_publish_head(struct feed *f, size_t j)
{
    atomic_store(&f->head, j);
    size_t w = atomic_load(&f->taker_wait);
    if (w != SIZE_MAX && w < j)
        feed_broadcast(f);
}

/* The taker: ops before j done with; wake the reader if it waits for that. */
static void feed_publish_tail(struct feed *f, size_t j)
{
    atomic_store(&f->tail, j);
    size_t w = atomic_load(&f->reader_wait);
    if (w != SIZE_MAX && w <= j)
        feed_broadcast(f);
}

/* The page boundary at or below address x. */
static uintptr_t page_down(uintptr_t x)
{
    static uintptr_t page;
    if (!page)
        page = (uintptr_t)sysconf(_SC_PAGESIZE);
    return x / page * page;
}

/* Reading op j (go given, n set): fault in the next part of a part of the block (per bytes
 * an op, at base, for n ops) when the sweep comes within AHEAD ops of where it was faulted
 * in up to (*at), AHEAD_STEP bytes or more. */
static void feed_ahead(struct feed *f, uint8_t *base, size_t per, size_t j, uintptr_t *at)
{
    uintptr_t end = page_down((uintptr_t)(base + per * f->n));
    uintptr_t want = (uintptr_t)(base + per * (j + AHEAD < f->n ? j + AHEAD : f->n));
    if (*at >= end || want <= *at)
        return;
    uintptr_t to = page_down(*at + AHEAD_STEP > want ? *at + AHEAD_STEP : want);
    to = to < end ? to : end;
    if (to > *at) /* (the address, from base's pointer) */
        sim_prefault(base + (intptr_t)(*at - (uintptr_t)base), to - *at, &f->stop);
    *at = to;
}

static void *feed_main(void *arg)
{
    struct feed *f = arg;
    /* (the block's parts at the offsets of the set's ops: those left out, if any, move them
     * down, which the faulting in as it reads makes up for) */
    size_t n0 = f->nops / sizeof(struct trace_op_span);
    /* the ops' and the starts' arrays side by side, as the gathering fills both; past where
     * it has got to (a model in memory is gathered faster than its pages are faulted in:
     * the two then fault in different parts, rather than this one the parts the other
     * faulted in already) */
    for (size_t k = 0; k < n0 && !atomic_load(&f->hold); k += AHEAD) {
        size_t got = atomic_load_explicit(&f->gathered, memory_order_relaxed);
        if (k < got + AHEAD / 4) /* caught up: on from well past it */
            k = (got + AHEAD) / AHEAD * AHEAD;
        if (k >= n0)
            break;
        size_t c = n0 - k < AHEAD ? n0 - k : AHEAD;
        sim_prefault((struct trace_op_span *)f->ops + k, c * sizeof(struct trace_op_span),
                     &f->hold);
        sim_prefault(f->groom + k, c * sizeof(*f->groom), &f->hold);
    }
    sim_prefault(f->arena + 16 * n0, 5 * n0, &f->hold); /* pred, flags */
    sim_prefault(f->arena, 16 * n0, &f->hold);          /* rng */
    pthread_mutex_lock(&f->mu);
    while (!atomic_load(&f->go) && !atomic_load(&f->stop))
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
    f->at_rng = page_down((uintptr_t)f->arena);
    f->at_pred = page_down((uintptr_t)(f->arena + 16 * f->n));
    size_t j = 0;
    for (; j < f->n && !atomic_load(&f->stop); j++) {
        if (j % FEED_BATCH == 0) {
            feed_publish_head(f, j);
            feed_ahead(f, f->arena, 16, j, &f->at_rng);
            feed_ahead(f, f->arena + 16 * f->n, 4, j, &f->at_pred);
            for (unsigned c = atomic_load(&f->nnamed); f->rn < c; f->rn++) {
                uint64_t x = atomic_load(&f->named[f->rn]);
                f->rnames[f->rn] = (uint32_t)(x >> 8), f->rids[f->rn] = (uint8_t)x;
            }
            if ((j % TRACE_PROGRESS_EVERY == 0 && trace_progress_cancelled(f->progress)) ||
                atomic_load(&f->stop))
                break;
            if (j + FEED_BATCH - atomic_load(&f->tail) > FEED) { /* full: until half free */
                size_t want = j + FEED_BATCH - FEED / 2;
                pthread_mutex_lock(&f->mu);
                atomic_store(&f->reader_wait, want);
                while (atomic_load(&f->tail) < want && !atomic_load(&f->stop))
                    pthread_cond_wait(&f->cv, &f->mu);
                atomic_store(&f->reader_wait, SIZE_MAX);
                pthread_mutex_unlock(&f->mu);
                if (atomic_load(&f->stop))
                    break;
            }
        }
        struct feed_slot *s = &f->slot[j % FEED];
        size_t len;
        const uint8_t *col =
            trace_model_opcol(f->m, set_ev(f->events, f->first, op_src(f->src, j)), &len);
        struct trace_opinfo_raw raw;
        s->ok = col && trace_opinfo_unpack_raw(f->m, col, len, &raw);
        f->handing &= s->ok;
        s->handed = f->handing;
        s->compact = false; /* (until known: the slot's last op's may say true) */
        if (!s->ok)
            continue;
        if (s->handed) /* (the ops' tracks gathered: no event read again here) */
            f->each_raw(f->each_ctx, j, ((const struct trace_op_span *)f->ops)[j].track, &raw);
        /* (named here, on this thread's stack: the full slot is written only for an op
         * that does not fit in its line) */
        struct trace_opinfo oi;
        bool resolved = trace_opinfo_resolve_known(&raw, f->rnames, f->rids, f->rn, &oi);
        s->compact = s->handed && resolved && oi.nreads + (oi.has_write ? 1u : 0u) <= FEED_RANGES;
        if (s->compact) {
            unsigned w = oi.has_write ? 1 : 0;
            s->nreads = (uint8_t)oi.nreads, s->has_write = (uint8_t)w;
            if (w) {
                s->space[0] = oi.write.space;
                s->lohi[0][0] = oi.write.lo, s->lohi[0][1] = oi.write.hi;
            }
            for (unsigned i = 0; i < oi.nreads; i++) {
                s->space[w + i] = oi.reads[i].space;
                s->lohi[w + i][0] = oi.reads[i].lo, s->lohi[w + i][1] = oi.reads[i].hi;
            }
            continue;
        }
        struct feed_full *ff = &f->full[j % FEED];
        ff->resolved = resolved;
        if (resolved)
            ff->u.oi = oi;
        else
            ff->u.raw = raw;
    }
    atomic_store(&f->ended, true);
    atomic_store(&f->head, j);
    if (atomic_load(&f->taker_wait) != SIZE_MAX)
        feed_broadcast(f);
    return NULL;
}

/* Start the second thread, faulting in the arrays of a set of many ops (ops, the room for
 * the starts groom, the sweep's block arena: in->n ops each) as this thread gathers the
 * ops, then waiting: NULL when no thread could be started. */
static struct feed *feed_start(const struct trace_critpath_input *in, struct trace_op_span *ops,
                               uint32_t *groom, uint8_t *arena)
{
    struct feed *f = sim_xcalloc(1, sizeof(*f));
    f->m = in->m, f->events = in->events, f->first = in->first, f->progress = in->progress;
    f->ops = ops, f->nops = in->n * sizeof(*ops), f->groom = groom, f->arena = arena;
    atomic_init(&f->hold, false);
    atomic_init(&f->gathered, 0);
    f->slot = aligned_alloc(64, FEED * sizeof(*f->slot));
    if (!f->slot)
        sim_die("out of memory (allocating the critical path's ring)");
    f->full = sim_xreallocarray(NULL, FEED, sizeof(*f->full));
    atomic_init(&f->head, 0);
    atomic_init(&f->ended, false);
    atomic_init(&f->reader_wait, SIZE_MAX);
    atomic_init(&f->tail, 0);
    atomic_init(&f->stop, false);
    atomic_init(&f->taker_wait, SIZE_MAX);
    atomic_init(&f->go, false);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    if (pthread_create(&f->th, NULL, feed_main, f) != 0) {
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->cv);
        free(f->slot), free(f->full);
        free(f);
        return NULL;
    }
    return f;
}

/* Have f read the n ops of the input (op k's event events[op_src(src, k)]), handing them to
 * each_raw (NULL: not) as it reads them. */
static void feed_go(struct feed *f, const uint32_t *src, size_t n,
                    void (*each_raw)(void *, size_t, uint32_t, const struct trace_opinfo_raw *),
                    void *ctx)
{
    pthread_mutex_lock(&f->mu);
    f->src = src, f->n = n;
    f->each_raw = each_raw, f->each_ctx = ctx, f->handing = each_raw != NULL;
    atomic_store(&f->hold, true);
    atomic_store(&f->go, true);
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Op j's slot, the ops before it taken: NULL when the reader stopped before it. */
static const struct feed_slot *feed_take(struct feed *f, size_t j)
{
    if (j % FEED_BATCH == 0) /* the ops before it are done with */
        feed_publish_tail(f, j);
    if (j < f->seen) {
        if (j + TAKE_AHEAD < f->seen)
            __builtin_prefetch(&f->slot[(j + TAKE_AHEAD) % FEED]);
        return &f->slot[j % FEED];
    }
    f->seen = atomic_load(&f->head);
    if (j >= f->seen && !atomic_load(&f->ended)) { /* caught up: wait */
        feed_publish_tail(f, j);
        for (unsigned spin = 0;
             spin < 1000 && j >= atomic_load(&f->head) && !atomic_load(&f->ended); spin++)
            ;
        if (j >= atomic_load(&f->head)) { /* asleep until the reader is TAKE_LAG ahead */
            pthread_mutex_lock(&f->mu);
            atomic_store(&f->taker_wait, j + TAKE_LAG);
            while (j + TAKE_LAG >= atomic_load(&f->head) && !atomic_load(&f->ended))
                pthread_cond_wait(&f->cv, &f->mu);
            atomic_store(&f->taker_wait, SIZE_MAX);
            pthread_mutex_unlock(&f->mu);
        }
        f->seen = atomic_load(&f->head);
    }
    return j < f->seen ? &f->slot[j % FEED] : NULL;
}

/* The taker has named the spaces of raw in sp: tell the reader the names it did not know,
 * with their ids (asked again, sp changes nothing). */
static void feed_learn(struct feed *f, const struct trace_opinfo_raw *raw, struct trace_spaces *sp)
{
    for (unsigned i = raw->has_write ? 0 : 1; i <= raw->nreads && f->tn < FEED_NAMES; i++) {
        uint32_t name = raw->name[i];
        unsigned k = 0;
        while (k < f->tn && f->tnames[k] != name)
            k++;
        if (k < f->tn)
            continue;
        int id = trace_opinfo_space_of(f->m, sp, name);
        if (id < 0)
            continue; /* (the registry is full: its ranges are dropped, as the taker does) */
        f->tnames[f->tn] = name;
        atomic_store(&f->named[f->tn], (uint64_t)name << 8 | (uint8_t)id);
        atomic_store(&f->nnamed, ++f->tn);
    }
}

/* Stop the reader and free f (NULL: nothing). */
static void feed_stop(struct feed *f)
{
    if (!f)
        return;
    atomic_store(&f->hold, true);
    atomic_store(&f->stop, true);
    feed_broadcast(f);
    pthread_join(f->th, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f->slot), free(f->full);
    free(f);
}

/* The memory ranges of the ops, in one of three forms: the caller's opinfo (info, op k's at
 * info[op_src(src, k)]); read again from the model's op columns as the sweep needs them (cols:
 * every op had columns: nothing kept, where the ranges of a launch of ten million ops would
 * hold half a gigabyte); or decoded once and kept as ranges alone (op k's reads at
 * [first[k], ..), then its write when write[k]; first[n] the end; a range's bytes in lohi,
 * its space in space: 17 bytes), a tenth of an opinfo for an op of a read and a write. */
enum { WCACHE = 1 << 12, RING = 1 << 10, RING_IN_ORDER = 64 };

struct ranges {
    const struct trace_opinfo *info;
    const uint32_t *src; /* as op_src's */
    bool cols;
    const struct trace_model *m;
    const uint64_t *events; /* (see set_ev) */
    uint64_t ev_first;
    struct trace_spaces *spaces;
    /* cols: the writes of the ops whose starts were swept last, by op (WCACHE of them,
     * op k's at k % WCACHE when tag says k), for their ends not to read them again */
    struct wcached {
        uint32_t tag;
        bool has;
        struct trace_range w;
    } * wcache; /* owned */
    /* fused (cols, the caller wants each op's info): the details are not read in a pass of
     * their own but as the sweep reaches the ops' starts, in op order (next: the ops before
     * it are read), each op's ranges kept in the ring (op k's at k % nring when its tag says
     * k) until its start is swept, rather than read a second time */
    bool fused;
    size_t next;
    const struct trace_critpath_input *in;
    struct feed *feed; /* fused: the ops read ahead on a second thread, or NULL */
    struct rcached {
        uint32_t tag;
        struct trace_op_ranges v;
    } * ring; /* owned: nring of them (a power of two) */
    size_t nring;
    size_t *first;       /* owned: n + 1 of them */
    bool *write;         /* owned */
    uint64_t (*lohi)[2]; /* owned */
    uint8_t *space;      /* owned */
    size_t npool, cap;
};

static void ranges_put(struct ranges *r, const struct trace_range *x)
{
    r->lohi[r->npool][0] = x->lo, r->lohi[r->npool][1] = x->hi;
    r->space[r->npool++] = x->space;
}

static struct trace_range ranges_at(const struct ranges *r, size_t i)
{
    return (struct trace_range){r->space[i], r->lohi[i][0], r->lohi[i][1]};
}

/* Keep op k's ranges (its first[k]) at the pool's end. */
static void ranges_keep(struct ranges *r, size_t k, const struct trace_range *reads,
                        unsigned nreads, const struct trace_range *w)
{
    r->first[k] = r->npool;
    size_t need = r->npool + nreads + (w ? 1 : 0);
    if (need > r->cap) {
        r->cap = need > 2 * r->cap ? need : 2 * r->cap;
        r->cap = r->cap < 1024 ? 1024 : r->cap;
        r->lohi = sim_xreallocarray(r->lohi, r->cap, sizeof(*r->lohi));
        r->space = sim_xreallocarray(r->space, r->cap, sizeof(*r->space));
    }
    for (unsigned i = 0; i < nreads; i++)
        ranges_put(r, &reads[i]);
    if (w) {
        ranges_put(r, w);
        r->write[k] = true;
    }
}

/* The ranges of an opinfo, into v. */
static void ranges_of_info(const struct trace_opinfo *oi, struct trace_op_ranges *v)
{
    for (unsigned i = 0; i < oi->nreads; i++)
        v->reads[i] = oi->reads[i];
    v->nreads = oi->nreads;
    v->has_write = oi->has_write;
    v->write = oi->write;
}

/* The ranges of op k from its op columns (or, fused, from its details when they do not
 * unpack, as its info was read). */
static void ranges_of_cols(const struct ranges *r, uint32_t k, struct trace_op_ranges *v)
{
    size_t len;
    uint64_t ev = set_ev(r->events, r->ev_first, op_src(r->src, k));
    const uint8_t *p = trace_model_opcol(r->m, ev, &len);
    if (p && trace_opinfo_unpack_ranges(r->m, p, len, r->spaces, v))
        return;
    v->nreads = 0, v->has_write = false; /* not met unfused: they unpacked before */
    if (r->fused) {
        struct trace_opinfo oi;
        trace_opinfo_of_event(r->m, ev, r->spaces, &oi);
        ranges_of_info(&oi, v);
    }
}

/* Fused: read the ops [r->next, k] in order, each's info to the caller, its ranges into the
 * ring. */
static void ranges_ahead(struct ranges *r, size_t k)
{
    for (; r->next <= k; r->next++) {
        size_t j = r->next;
        struct trace_opinfo oi;
        const struct trace_opinfo *po = &oi;
        const struct feed_slot *fs = r->feed ? feed_take(r->feed, j) : NULL;
        struct rcached *c = &r->ring[j & (r->nring - 1)];
        struct wcached *wc = &r->wcache[j % WCACHE];
        if (fs && fs->compact) { /* (handed on: only its ranges wanted) */
            unsigned w = fs->has_write;
            c->tag = (uint32_t)j;
            c->v.nreads = fs->nreads, c->v.has_write = w != 0;
            wc->tag = (uint32_t)j, wc->has = w != 0;
            if (w) {
                c->v.write = (struct trace_range){fs->space[0], fs->lohi[0][0], fs->lohi[0][1]};
                /* (from the slot, not from the ring's stores just made: a load of those
                 * would wait for them to reach the cache) */
                wc->w.space = fs->space[0], wc->w.lo = fs->lohi[0][0], wc->w.hi = fs->lohi[0][1];
            }
            for (unsigned i = 0; i < fs->nreads; i++)
                c->v.reads[i] =
                    (struct trace_range){fs->space[w + i], fs->lohi[w + i][0], fs->lohi[w + i][1]};
            r->npool += fs->nreads + w; /* counted only */
            continue;
        }
        const struct feed_full *ff = fs && fs->ok ? &r->feed->full[j % FEED] : NULL;
        if (ff && ff->resolved) {
            po = &ff->u.oi;
        } else if (ff) {
            trace_opinfo_resolve(r->m, &ff->u.raw, r->spaces, &oi);
            feed_learn(r->feed, &ff->u.raw, r->spaces);
        } else {
            uint64_t ev = set_ev(r->events, r->ev_first, op_src(r->src, j));
            size_t len;
            const uint8_t *col = trace_model_opcol(r->m, ev, &len);
            if (!col || !trace_opinfo_unpack(r->m, col, len, r->spaces, &oi))
                trace_opinfo_of_event(r->m, ev, r->spaces, &oi);
        }
        if (r->in->each_info && !(fs && fs->handed)) /* (else handed on the reader's thread) */
            r->in->each_info(r->in->each_ctx, op_src(r->src, j), po);
        r->npool += po->nreads + (po->has_write ? 1 : 0); /* counted only */
        c->tag = (uint32_t)j;
        ranges_of_info(po, &c->v); /* (the reads it has alone) */
        *wc = (struct wcached){(uint32_t)j, po->has_write, po->write};
    }
}

/* Decode the ranges of ops[0..n) into r, handing each op's info to in->each_info; false
 * when in->progress was cancelled. While every op has op columns nothing is kept (they are
 * read again in the sweep); the first without has those before it kept, and all after. */
static bool ranges_decode(struct ranges *r, const struct trace_model *m, const uint32_t *src,
                          size_t n, struct trace_spaces *spaces,
                          const struct trace_critpath_input *in)
{
    struct trace_progress *p = in->progress;
    *r = (struct ranges){.src = src,
                         .cols = true,
                         .m = m,
                         .events = in->events,
                         .ev_first = in->first,
                         .spaces = spaces};
    for (size_t k = 0; k < n; k++) {
        if (k % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(p, k))
            return false;
        if (k % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m); /* the events and op columns read so far */
        struct trace_opinfo oi;
        uint64_t ev = set_ev(in->events, in->first, op_src(src, k));
        size_t len;
        const uint8_t *col = trace_model_opcol(m, ev, &len);
        bool from_cols = col && trace_opinfo_unpack(m, col, len, spaces, &oi);
        if (!from_cols)
            trace_opinfo_of_event(m, ev, spaces, &oi);
        if (in->each_info)
            in->each_info(in->each_ctx, op_src(src, k), &oi);
        if (r->cols && !from_cols) { /* keep them from here on, and those before */
            r->cols = false;
            r->npool = 0;
            r->first = sim_xreallocarray(NULL, n + 1, sizeof(*r->first));
            r->write = sim_xcalloc(n ? n : 1, sizeof(*r->write));
            for (size_t j = 0; j < k; j++) {
                struct trace_op_ranges v;
                ranges_of_cols(r, (uint32_t)j, &v);
                ranges_keep(r, j, v.reads, v.nreads, v.has_write ? &v.write : NULL);
            }
        }
        if (r->cols)
            r->npool += oi.nreads + (oi.has_write ? 1 : 0); /* counted only */
        else
            ranges_keep(r, k, oi.reads, oi.nreads, oi.has_write ? &oi.write : NULL);
    }
    if (r->cols) {
        r->wcache = sim_xreallocarray(NULL, WCACHE, sizeof(*r->wcache));
        for (size_t i = 0; i < WCACHE; i++)
            r->wcache[i].tag = UINT32_MAX; /* no op's: n < UINT32_MAX */
        return true;
    }
    r->first[n] = r->npool;
    if (r->npool && r->npool < r->cap) { /* the room doubling left over, back */
        r->lohi = sim_xreallocarray(r->lohi, r->npool, sizeof(*r->lohi));
        r->space = sim_xreallocarray(r->space, r->npool, sizeof(*r->space));
        r->cap = r->npool;
    }
    return true;
}

static void ranges_fini(struct ranges *r)
{
    feed_stop(r->feed);
    free(r->ring);
    free(r->wcache);
    free(r->first);
    free(r->write);
    free(r->lohi);
    free(r->space);
}

/* The ranges of op k, into v. */
static void op_ranges(const struct ranges *r, uint32_t k, struct trace_op_ranges *v)
{
    if (r->info) {
        const struct trace_opinfo *oi = &r->info[op_src(r->src, k)];
        memcpy(v->reads, oi->reads, oi->nreads * sizeof(*v->reads));
        v->nreads = oi->nreads;
        v->has_write = oi->has_write;
        v->write = oi->write;
        return;
    }
    if (r->cols) {
        ranges_of_cols(r, k, v);
        return;
    }
    if (!r->space) { /* (no op had a range: the pool was never made) */
        v->nreads = 0, v->has_write = false;
        return;
    }
    size_t nr = r->first[k + 1] - r->first[k] - (r->write[k] ? 1 : 0);
    for (size_t i = 0; i < nr; i++)
        v->reads[i] = ranges_at(r, r->first[k] + i);
    v->nreads = (unsigned)nr;
    v->has_write = r->write[k];
    if (r->write[k])
        v->write = ranges_at(r, r->first[k + 1] - 1);
}

/* The write of op k, into *w: whether it has one. */
static bool op_write(struct ranges *r, uint32_t k, struct trace_range *w)
{
    if (r->cols && r->wcache[k % WCACHE].tag == k) {
        *w = r->wcache[k % WCACHE].w;
        return r->wcache[k % WCACHE].has;
    }
    struct trace_op_ranges v;
    op_ranges(r, k, &v);
    *w = v.write;
    return v.has_write;
}

/* The reads of op k: in the ring (fused) or read into *buf; its write kept for op_write. */
static const struct trace_op_ranges *op_reads(struct ranges *r, uint32_t k,
                                              struct trace_op_ranges *buf)
{
    const struct trace_op_ranges *v = buf;
    if (r->fused && k >= r->next && k - r->next < RING / 2) /* (with starts in order: k) */
        ranges_ahead(r, k);
    if (r->fused && r->ring[k & (r->nring - 1)].tag == k)
        return &r->ring[k & (r->nring - 1)].v; /* (its write kept as it was read) */
    op_ranges(r, k, buf);
    if (r->cols)
        r->wcache[k % WCACHE] = (struct wcached){k, v->has_write, v->write};
    return v;
}

/* Free *starts (NULL after) unless it is groom, the room faulted in ahead, freed last (the
 * feed may still be faulting it in). */
static void starts_drop(uint32_t **starts, const uint32_t *groom)
{
    if (*starts != groom)
        free(*starts);
    *starts = NULL;
}

/* Whether a second thread is worth its start for n items of in's work (see its threads). */
static bool apart(const struct trace_critpath_input *in, size_t n)
{
    return in->threads != 1 && (in->threads == 2 || n >= TRACE_CRITPATH_THREAD_MIN);
}

/* An op's flags in the sweep: why it waited (enum trace_dep), the space of the bytes it read
 * of a RAW predecessor, whether it has ended. */
enum { FL_WHY = 7, FL_SPACE = 3, FL_ENDED = 128 };
_Static_assert(TRACE_DEP_COUNT <= FL_WHY + 1 && TRACE_OPINFO_MAX_SPACES <= 16, "flags' room");

void trace_critpath_compute(const struct trace_critpath_input *in_, struct trace_critpath *out)
{
    /* (a copy: with_details may take the details away) */
    struct trace_critpath_input in_copy = *in_;
    const struct trace_critpath_input *in = &in_copy;
    memset(out, 0, sizeof(*out));
    if (in->spans)
        *in->spans = NULL;
    trace_spaces_init(&out->spaces);
    const struct trace_model *m = in->m;
    out->start = in->start;
    out->end = in->start;
    /* the ops: stages rather than the composite ops that hold them */
    /* per op name (string id): 0 not looked at, else 1 + whether it is a stage (or a
     * composite op): a few names for millions of ops */
    size_t nstr = trace_model_str_count(m);
    uint8_t *stage_of = sim_xcalloc(nstr ? nstr : 1, 1), *comp_of = sim_xcalloc(nstr ? nstr : 1, 1);
    bool stages = false;
    struct trace_op_span *ops = sim_xreallocarray(NULL, in->n ? in->n : 1, sizeof(*ops));
    /* the sweep's block (below), allocated now: for a set of many ops the second thread
     * faults in the pages of both while this one gathers the ops, then reads their details
     * if they are read as the sweep goes */
    uint8_t *arena = sim_xreallocarray(NULL, in->n ? in->n : 1, 21);
    struct feed *feed = NULL;
    uint32_t *groom = NULL; /* the room for gstarts (below), faulted in ahead with the ops' */
    if (apart(in, in->n)) {
        groom = sim_xreallocarray(NULL, in->n + 1, sizeof(*groom)); /* (+1: the path's, below) */
        feed = feed_start(in, ops, groom, arena);
    }
    uint8_t *composite = NULL; /* per op, whether it is a composite op; NULL: none */
    size_t n = 0;
    uint64_t now = trace_model_now(m);
    struct tilemap tiles = {0};
    uint32_t ntiles = 0, tile_str = TRACE_NO_STR, tile = NONE; /* the last op's tile */
    struct scan sc = {true, true, false, 0};
    /* whether every op has op columns (their details may be read as the sweep goes), looked
     * at in the same pass where the details may be read (the set, umbrella ops left out,
     * is no larger) */
    bool look = !in->info && (!in->max_decode || in->n <= in->max_decode), every_col = true;
    size_t uncached = 0; /* (counted for with_details) */
    /* the ops by start, sorted as they are gathered (each put in place from the back, stably:
     * the starts of a model's events come nearly in order) while that moves few of them
     * (sort_ops_by's budget), else sorted after; made at the first start out of order (until
     * then the ops' own order: a launch of ten million ops in order needs no such array) */
    uint32_t *gstarts = NULL;
    bool gsorting = in->n > 1; /* (false once given up) */
    size_t gmoved = 0;
    bool cancelled = false;
    trace_progress_step(in->progress, "critical path: the ops", in->n);
    /* (in runs of GATHER_STEP ops, the checks between two runs rather than at every op) */
    for (size_t i = 0; i < in->n;) {
        if (i % TRACE_PROGRESS_EVERY == 0 && (cancelled = trace_progress_at(in->progress, i)))
            break; /* (the caller's pass still ends: with_details below) */
        if (i && i % GIVEBACK_EVERY == 0)
            trace_model_lent_giveback(m); /* the events and op columns read so far */
        if (i % EVENTS_AHEAD == 0)
            events_ahead(in, i);
        size_t until = in->n - i > GATHER_STEP ? i + GATHER_STEP : in->n;
        for (; i < until; i++) {
            if (in->with_details) {
                bool cached = trace_opinfo_cached(m, set_ev(in->events, in->first, i));
                uncached += !cached;
                every_col &= cached;
            } else if (look && every_col) {
                every_col = trace_opinfo_cached(m, set_ev(in->events, in->first, i));
            }
            const struct trace_event *e = trace_model_event(m, set_ev(in->events, in->first, i));
            if (in->each_event)
                in->each_event(in->each_ctx, i, e);
            uint32_t op = e->op;
            if (op < nstr && !stage_of[op]) {
                const char *name = trace_model_str(m, op);
                stage_of[op] = 1 + (strncmp(name, "TileToken/", 10) == 0);
                comp_of[op] = 1 + (strncmp(name, "composite_", 10) == 0);
            }
            bool stage = op < nstr ? stage_of[op] == 2
                                   : strncmp(trace_model_str(m, op), "TileToken/", 10) == 0;
            bool comp = op < nstr ? comp_of[op] == 2
                                  : strncmp(trace_model_str(m, op), "composite_", 10) == 0;
            stages |= stage;
            if (comp) {
                if (!composite)
                    composite = sim_xcalloc(in->n, 1);
                composite[n] = 1;
            }
            uint64_t end = trace_event_end_at(e, now);
            if (e->tile != tile_str) {
                tile_str = e->tile, tile = NONE;
                if (e->tile != TRACE_NO_STR) {
                    uint32_t *slot = tile_slot(&tiles, e->tile);
                    if (*slot == NONE)
                        *slot = ntiles++;
                    tile = *slot;
                }
            }
            ops[n] = (struct trace_op_span){e->start, end, e->track, tile};
            if (gsorting && !gstarts && n && ops[n - 1].start > e->start) {
                gstarts = groom ? groom : sim_xreallocarray(NULL, in->n, sizeof(*gstarts));
                for (size_t k = 0; k < n; k++)
                    gstarts[k] = (uint32_t)k;
            }
            if (gstarts) {
                size_t j = n;
                while (j > 0 && ops[gstarts[j - 1]].start > e->start) {
                    gstarts[j] = gstarts[j - 1];
                    j--;
                }
                gstarts[j] = (uint32_t)n;
                gmoved += n - j;
                if (gmoved > 4 * in->n) { /* sorted after */
                    starts_drop(&gstarts, groom);
                    gsorting = false;
                }
            }
            scan_op(&sc, ops, n++);
        }
        if (feed) /* (for its faulting in ahead) */
            atomic_store_explicit(&feed->gathered, n, memory_order_relaxed);
    }
    if (in->with_details && !in->with_details(in->each_ctx, uncached)) {
        /* no details: as with max_decode 1 (look, with every op looked at, says no less) */
        in_copy.max_decode = 1;
        in_copy.each_info = NULL, in_copy.each_raw = NULL;
        look = !in->info && in->n <= 1;
    }
    if (cancelled) /* an empty path: as for an empty set, below */
        n = 0, stages = false;
    uint32_t *src = NULL;      /* see op_src */
    if (stages && composite) { /* the stages are in the set: leave their composite ops out */
        size_t kept = 0;
        src = sim_xreallocarray(NULL, n, sizeof(*src));
        for (size_t k = 0; k < n; k++)
            if (!composite[k])
                src[kept] = (uint32_t)k, ops[kept++] = ops[k];
        n = kept;
        starts_drop(&gstarts, groom); /* (of the ops before some were left out) */
        sc = (struct scan){true, true, false, 0};
        for (size_t k = 0; k < n; k++)
            scan_op(&sc, ops, k);
    }
    free(composite);
    free(stage_of), free(comp_of);
    free(tiles.key), free(tiles.val);
    out->ops = n;
    if (!n || sc.starts_in_order)
        starts_drop(&gstarts, groom);
    if (!n) {
        feed_stop(feed);
        free(ops), free(src), free(arena), free(groom);
        return;
    }
    /* their memory ranges: the caller's opinfo (op k's is info[op_src(src, k)]), not copied (a
     * launch of a million ops would copy 150 MB), or decoded here and kept as ranges alone */
    struct ranges rg = {0};
    bool decode = !in->max_decode || n <= in->max_decode;
    bool all_cols = decode && !in->info && every_col; /* (not looked at unless read) */
    for (size_t i = 0; all_cols && !look && i < in->n; i++) {
        if (i % GIVEBACK_EVERY == GIVEBACK_EVERY - 1)
            trace_model_lent_giveback(m); /* the op columns looked at so far */
        all_cols = trace_opinfo_cached(m, set_ev(in->events, in->first, i));
    }
    if (in->info) {
        rg.info = in->info;
        rg.src = src;
        if (in->info_spaces)
            out->spaces = *in->info_spaces;
        out->decoded = n;
    } else if (all_cols) {
        /* fused: read as the sweep goes */
        rg = (struct ranges){.src = src,
                             .cols = true,
                             .m = m,
                             .events = in->events,
                             .ev_first = in->first,
                             .spaces = &out->spaces,
                             .fused = true,
                             .in = in};
        /* with starts in op order each op's start comes as it is read: a ring of a few
         * (of 4 MB, rewritten op by op, the ring would keep the caches missing) */
        rg.nring = sc.starts_in_order ? RING_IN_ORDER : RING;
        rg.ring = sim_xreallocarray(NULL, rg.nring, sizeof(*rg.ring));
        for (size_t i = 0; i < rg.nring; i++)
            rg.ring[i].tag = UINT32_MAX; /* no op's: n < UINT32_MAX */
        rg.wcache = sim_xreallocarray(NULL, WCACHE, sizeof(*rg.wcache));
        for (size_t i = 0; i < WCACHE; i++)
            rg.wcache[i].tag = UINT32_MAX;
        if (feed) {
            bool raw = in->each_info && in->each_raw && !src; /* (see op_src) */
            feed_go(feed, src, n, raw ? in->each_raw : NULL, in->each_ctx);
            rg.feed = feed, feed = NULL;
        }
        out->decoded = n;
    } else if (decode) {
        trace_progress_step(in->progress, "critical path: op details", n);
        if (!ranges_decode(&rg, m, src, n, &out->spaces, in)) {
            feed_stop(feed);
            ranges_fini(&rg);
            starts_drop(&gstarts, groom);
            free(ops), free(src), free(arena), free(groom);
            return; /* cancelled: an empty path */
        }
        out->decoded = n;
    } else {
        out->truncated = true;
    }
    trace_model_lent_giveback(m); /* the events and op columns read so far */
    bool with_info = rg.info || rg.cols || rg.first;
    out->with_addresses = !rg.info && rg.npool; /* an op read or wrote a range (fused: below) */
    for (size_t k = 0; rg.info && k < n && !out->with_addresses; k++) {
        struct trace_op_ranges v;
        op_ranges(&rg, (uint32_t)k, &v);
        if (v.nreads || v.has_write)
            out->with_addresses = true;
    }

    /* the sweep */
    /* one block of 21 bytes an op, the sort's keys first (key, tk: 8 bytes each; ti: 4),
     * then the sweep's results over them (rng: the bytes read of a RAW predecessor, 16;
     * pred, 4; flags, 1): a launch of ten million ops maps and faults it in once */
    feed_stop(feed); /* (not reading: the pages are faulted in, or this thread does it) */
    feed = NULL;
    /* the ops by start and by end point (NULL: in op order, as a model's events mostly are:
     * ten million ops need neither array nor sort) */
    uint32_t *starts = NULL, *ends = NULL;
    uint32_t last = sc.last;
    out->with_tiles = sc.with_tiles;
    {
        uint64_t *key = (uint64_t *)arena, *tk = key + n;
        uint32_t *ti = (uint32_t *)(arena + 16 * n);
        if (gstarts) { /* sorted as gathered */
            starts = gstarts;
        } else if (!sc.starts_in_order) {
            starts = sim_xreallocarray(NULL, n, sizeof(*starts));
            for (size_t k = 0; k < n; k++)
                starts[k] = (uint32_t)k;
            sort_ops_by(starts, n, ops, false, key, tk, ti);
        }
        if (!sc.ends_in_order) {
            /* the ends of kind 0 first, then those of kind 2, each in op order (those of kind
             * 2 are put from the back, then turned round), so that the stable sort by time
             * leaves a tie in (kind, op) order */
            ends = sim_xreallocarray(NULL, n, sizeof(*ends));
            size_t n0 = 0, n2 = 0;
            for (size_t k = 0; k < n; k++) {
                if (end_kind(&ops[k]) == 0)
                    ends[n0++] = (uint32_t)k;
                else
                    ends[n - 1 - n2++] = (uint32_t)k;
            }
            for (size_t a = n0, z = n - 1; n2 && a < z; a++, z--) {
                uint32_t t = ends[a];
                ends[a] = ends[z], ends[z] = t;
            }
            sort_ops_by(ends, n, ops, true, key, tk, ti);
        }
    }
    uint64_t(*rng)[2] = (uint64_t(*)[2])arena; /* set where flags say RAW */
    uint32_t *pred = (uint32_t *)(arena + 16 * n);
    uint8_t *flags = arena + 20 * n; /* enum trace_dep, the space of rng << FL_SPACE, FL_ENDED */
    memset(flags, 0, n);
    struct trace_imap maps[TRACE_OPINFO_MAX_SPACES];
    memset(maps, 0, sizeof(maps));
    /* (a space of a million ranges fills tens of megabytes: faulted in on a second thread) */
    for (size_t s = 0; s < TRACE_OPINFO_MAX_SPACES && apart(in, n); s++)
        trace_imap_ahead(&maps[s]);
    size_t ntracks = trace_model_track_count(m);
    uint32_t *last_on_track = sim_xreallocarray(NULL, ntracks ? ntracks : 1, sizeof(uint32_t));
    for (size_t t = 0; t < ntracks; t++)
        last_on_track[t] = NONE;
    /* explicit dependencies: the ops of the set by event, to find each dependency's op */
    uint64_t(*by_ev)[2] = NULL;
    if (trace_model_dep_count(m)) {
        by_ev = sim_xreallocarray(NULL, n, sizeof(*by_ev));
        for (size_t k = 0; k < n; k++)
            by_ev[k][0] = set_ev(in->events, in->first, op_src(src, k)), by_ev[k][1] = k;
        qsort(by_ev, n, sizeof(*by_ev), cmp_u64pair);
    }
    uint32_t *last_on_tile = sim_xreallocarray(NULL, ntiles ? ntiles : 1, sizeof(uint32_t));
    for (size_t t = 0; t < ntiles; t++)
        last_on_tile[t] = NONE;
    uint32_t *pe_of = pe_of_tracks(m, ntracks);
    uint32_t *last_on_pe = sim_xreallocarray(NULL, ntracks ? ntracks : 1, sizeof(uint32_t));
    for (size_t t = 0; t < ntracks; t++)
        last_on_pe[t] = NONE;
    uint32_t last_ended = NONE;
    bool stop = false;
    trace_progress_step(in->progress, "critical path: dependencies", 2 * n);
    /* the next end (its op, its point, whether of kind 0) and the next start (its op and
     * time): each read again only once it is swept */
    uint32_t ke = ends ? ends[0] : 0, ks = starts ? starts[0] : 0;
    uint64_t te = end_point(&ops[ke]), ts = ops[ks].start;
    bool ke0 = end_kind(&ops[ke]) == 0;
    /* (in runs of TRACE_PROGRESS_EVERY points, the checks between two runs) */
    for (size_t p = 0, si = 0, ei = 0; p < 2 * n;) {
        if ((stop = trace_progress_at(in->progress, p)))
            break; /* cancelled: an empty path */
        if (p && p % GIVEBACK_EVERY == 0)
            trace_model_lent_giveback(m); /* the op columns swept so far */
        size_t until = 2 * n - p > TRACE_PROGRESS_EVERY ? p + TRACE_PROGRESS_EVERY : 2 * n;
        for (; p < until; p++) {
            /* the next point: the next end unless the next start comes before it */
            bool is_end = si == n || (ei < n && (te < ts || (te == ts && ke0)));
            uint32_t k = is_end ? ke : ks;
            if (is_end && ++ei < n) {
                ke = ends ? ends[ei] : (uint32_t)ei;
                te = end_point(&ops[ke]), ke0 = end_kind(&ops[ke]) == 0;
            } else if (!is_end && ++si < n) {
                ks = starts ? starts[si] : (uint32_t)si;
                ts = ops[ks].start;
            }
            if (is_end) { /* an end: publish what it wrote, its tile, its track */
                flags[k] |= FL_ENDED;
                struct trace_range w;
                if (with_info && op_write(&rg, k, &w))
                    trace_imap_assign(&maps[w.space], w.lo, w.hi, k, ops[k].end);
                if (ops[k].tile != NONE)
                    last_on_tile[ops[k].tile] = k;
                uint32_t *lt = &last_on_track[ops[k].track];
                if (*lt == NONE || ops[*lt].end <= ops[k].end)
                    *lt = k;
                if (pe_of[ops[k].track] != NONE) {
                    uint32_t *lp = &last_on_pe[pe_of[ops[k].track]];
                    if (*lp == NONE || ops[*lp].end <= ops[k].end)
                        *lp = k;
                }
                if (last_ended == NONE || ops[last_ended].end <= ops[k].end)
                    last_ended = k;
                continue;
            }
            /* a start: the predecessor */
            uint32_t best = NONE;
            uint64_t best_end = 0;
            enum trace_dep bw = TRACE_DEP_ORDER;
            struct trace_range brange = {0};
            const uint64_t *on;
            size_t nd =
                by_ev
                    ? trace_model_event_deps(m, set_ev(in->events, in->first, op_src(src, k)), &on)
                    : 0;
            for (size_t q = 0; q < nd; q++) {
                out->with_explicit = true;
                uint64_t key[2] = {on[q], 0};
                const uint64_t(*hit)[2] = bsearch(key, by_ev, n, sizeof(*by_ev), cmp_u64pair);
                uint32_t c = hit ? (uint32_t)(*hit)[1] : NONE;
                if (c != NONE && c != k && (flags[c] & FL_ENDED) &&
                    better(ops[c].end, TRACE_DEP_EXPLICIT, best, best_end, bw))
                    best = c, best_end = ops[c].end, bw = TRACE_DEP_EXPLICIT;
            }
            struct trace_op_ranges buf;
            const struct trace_op_ranges *v = &buf;
            buf.nreads = 0; /* (not the whole: a start would clear 128 bytes) */
            if (with_info)
                v = op_reads(&rg, k, &buf);
            for (size_t r = 0; r < v->nreads; r++) {
                const struct trace_range *rd = &v->reads[r];
                /* of the ranges it reads, the first written last (by an op not itself): the
                 * candidate that would win of them one by one */
                struct trace_ival x;
                if (trace_imap_latest(&maps[rd->space], rd->lo, rd->hi, k, &x) &&
                    better(x.end, TRACE_DEP_RAW, best, best_end, bw)) {
                    best = x.op, best_end = x.end, bw = TRACE_DEP_RAW;
                    uint64_t lo = x.lo > rd->lo ? x.lo : rd->lo;
                    uint64_t hi = x.hi < rd->hi ? x.hi : rd->hi;
                    brange = (struct trace_range){rd->space, lo, hi};
                }
            }
            if (ops[k].tile != NONE) {
                uint32_t c = last_on_tile[ops[k].tile];
                if (c != NONE && c != k && better(ops[c].end, TRACE_DEP_TILE, best, best_end, bw))
                    best = c, best_end = ops[c].end, bw = TRACE_DEP_TILE;
            }
            uint32_t c = last_on_track[ops[k].track];
            if (c != NONE && c != k && ops[c].end <= ops[k].start + 1 &&
                ops[c].end + 1 >= ops[k].start &&
                better(ops[c].end, TRACE_DEP_ENGINE, best, best_end, bw))
                best = c, best_end = ops[c].end, bw = TRACE_DEP_ENGINE;
            if (pe_of[ops[k].track] != NONE) {
                c = last_on_pe[pe_of[ops[k].track]];
                if (c != NONE && c != k && better(ops[c].end, TRACE_DEP_PE, best, best_end, bw))
                    best = c, bw = TRACE_DEP_PE; /* (the last candidate: its end not kept) */
            }
            if (best == NONE && last_ended != NONE && last_ended != k)
                best = last_ended, bw = TRACE_DEP_ORDER;
            pred[k] = best;
            flags[k] = (uint8_t)((flags[k] & FL_ENDED) | (best == NONE ? TRACE_DEP_START : bw));
            if (bw == TRACE_DEP_RAW) {
                flags[k] |= (uint8_t)(brange.space << FL_SPACE);
                rng[k][0] = brange.lo, rng[k][1] = brange.hi;
            }
        }
    }

    if (rg.fused && !stop) { /* every op read (the last start swept reads up to it) */
        ranges_ahead(&rg, n - 1);
        out->with_addresses = rg.npool != 0;
    }
    feed_stop(rg.feed);
    rg.feed = NULL;
    trace_model_lent_giveback(m);
    /* back from the op that ends last */
    if (stop)
        last = 0;
    out->end = ops[last].end;
    /* the ops of the path from the last (one chase of the predecessors, each a miss of the
     * caches in a launch of millions; the ops' figures then asked for ahead) */
    /* (in the starts' room when there is one, done with: its pages faulted in already, and
     * room for n + 1, as many as the chase takes) */
    size_t len = 0, cap = groom ? n + 1 : 0;
    uint32_t *chain = groom;
    for (uint32_t k = last; k != NONE && len <= n && !stop; k = pred[k]) {
        if (len == cap) {
            cap = cap ? 2 * cap : 1024;
            chain = sim_xreallocarray(chain, cap, sizeof(*chain));
        }
        chain[len++] = k;
    }
    out->steps = sim_xreallocarray(NULL, len ? len : 1, sizeof(*out->steps));
    out->n = len;
    if (in->step_spans)
        out->spans = sim_xreallocarray(NULL, len ? len : 1, sizeof(*out->spans));
    /* the steps are written from the last; a second thread faults in their fresh pages from
     * the first meanwhile (a path of a million steps: 50 MB), until the two meet */
    struct sim_prefault pf = {.r = {{out->steps, len * sizeof(*out->steps)},
                                    {out->spans, out->spans ? len * sizeof(*out->spans) : 0}},
                              .nr = 2};
    if (apart(in, len))
        sim_prefault_start(&pf);
    for (size_t i = 0; i < len; i++) {
        if (i + WALK_PREFETCH < len) {
            uint32_t f = chain[i + WALK_PREFETCH];
            __builtin_prefetch(&ops[f]);
            if (in->events)
                __builtin_prefetch(&in->events[op_src(src, f)]);
            __builtin_prefetch(&flags[f]);
        }
        uint32_t k = chain[i];
        struct trace_path_step *s = &out->steps[len - 1 - i];
        uint32_t pk = pred[k];
        uint64_t from = pk == NONE ? in->start : ops[pk].end;
        *s = (struct trace_path_step){
            .ev = set_ev(in->events, in->first, op_src(src, k)),
            .pred = pk == NONE ? UINT64_MAX : set_ev(in->events, in->first, op_src(src, pk)),
            .wait = ops[k].start > from ? ops[k].start - from : 0,
            .why = (enum trace_dep)(flags[k] & FL_WHY),
            .op = k,
        };
        if (s->why == TRACE_DEP_RAW)
            s->range =
                (struct trace_range){(uint8_t)(flags[k] >> FL_SPACE & 15), rng[k][0], rng[k][1]};
        if (out->spans)
            out->spans[len - 1 - i] = ops[k];
    }
    sim_prefault_stop(&pf);
    if (chain != groom)
        free(chain);
    for (size_t s = 0; s < TRACE_OPINFO_MAX_SPACES; s++)
        trace_imap_fini(&maps[s]);
    free(last_on_tile);
    free(by_ev);
    free(last_on_pe);
    free(pe_of);
    free(last_on_track);
    if (in->release) { /* (the caller frees them once its analysis is done) */
        if (in->spans)
            *in->spans = ops;
        if (starts != groom)
            sim_release_add(in->release, starts);
        void *each[] = {arena, groom, ends, ops, src, rg.first, rg.write, rg.lohi, rg.space};
        for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++)
            sim_release_add(in->release, each[i]);
        rg.first = NULL, rg.write = NULL, rg.lohi = NULL, rg.space = NULL;
        arena = NULL, groom = NULL, ends = NULL, ops = NULL, src = NULL;
        starts = NULL;
    }
    free(arena);
    starts_drop(&starts, groom);
    free(groom); /* (the feed, which faulted it in, is stopped) */
    free(ends);
    ranges_fini(&rg);
    free(ops), free(src);
}

bool trace_critpath_details_bounded(void *ctx, size_t uncached)
{
    const size_t *n = ctx;
    return uncached == 0 || *n <= TRACE_CRITPATH_KEEP_MAX;
}

void trace_critpath_fini(struct trace_critpath *p)
{
    free(p->steps);
    free(p->spans);
    memset(p, 0, sizeof(*p));
}

void trace_critpath_copy(struct trace_critpath *to, const struct trace_critpath *p)
{
    *to = *p;
    to->steps = sim_xreallocarray(NULL, p->n ? p->n : 1, sizeof(*p->steps));
    if (p->n)
        memcpy(to->steps, p->steps, p->n * sizeof(*p->steps));
    if (p->spans) {
        to->spans = sim_xreallocarray(NULL, p->n ? p->n : 1, sizeof(*p->spans));
        if (p->n)
            memcpy(to->spans, p->spans, p->n * sizeof(*p->spans));
    }
}

size_t trace_critpath_find(const struct trace_critpath *p, uint64_t ev)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->steps[i].ev == ev)
            return i;
    return SIZE_MAX;
}

const char *trace_dep_name(enum trace_dep d)
{
    static const char *const names[TRACE_DEP_COUNT] = {"start",  "dependency_ids", "RAW",  "tile",
                                                       "engine", "PE order",       "order"};
    return d < TRACE_DEP_COUNT ? names[d] : "?";
}

char *trace_critpath_why(const struct trace_critpath *p, const struct trace_path_step *s, char *buf,
                         size_t size)
{
    switch (s->why) {
    case TRACE_DEP_START: snprintf(buf, size, "the first op: from the start"); break;
    case TRACE_DEP_EXPLICIT: snprintf(buf, size, "its dependency_ids name it"); break;
    case TRACE_DEP_RAW:
        snprintf(buf, size, "reads %s 0x%" PRIx64 "..0x%" PRIx64 " it wrote",
                 s->range.space < p->spaces.n ? p->spaces.names[s->range.space] : "?", s->range.lo,
                 s->range.hi);
        break;
    case TRACE_DEP_TILE: snprintf(buf, size, "the previous op of its tile"); break;
    case TRACE_DEP_ENGINE: snprintf(buf, size, "its engine was busy with it"); break;
    case TRACE_DEP_PE: snprintf(buf, size, "the last op of its PE before it"); break;
    default: snprintf(buf, size, "the last op to end before it started"); break;
    }
    return buf;
}
