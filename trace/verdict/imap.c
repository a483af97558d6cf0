/*
 * The critical path's interval map (see imap.h): disjoint intervals by lo, in blocks (never
 * empty), each holding its intervals whole, side by side (an interval's bounds, op and end
 * in one cache line), and the map its blocks' last his, so that a search reads few cache
 * lines. A write finds the run of intervals it covers and replaces it by its own interval and
 * the parts left of the first and right of the last, moving the rest of the block once, by
 * the difference in count (not at all when an op rewrites what one op wrote before it: the
 * common case). Blocks hold up to a size that grows with the map's (from BLOCK_MIN to
 * BLOCK_MAX intervals): a map of a few hundred ranges rewritten millions of times moves a
 * few dozen at a write, one of millions a few hundred, not its whole array of blocks at each
 * split. A buffer written in order moves nothing: a write between two blocks goes at the end
 * of the first, and a block split after a write that goes on from the range before it ends
 * with that write. The blocks' intervals live in slabs the map carves them from (a block freed is
 * kept for the next of its size): a map of a million ranges fills tens of megabytes of fresh pages,
 * whose faults a second thread takes, a slab ahead, when the map is asked to (trace_imap_ahead).
 */
#include "trace/verdict/imap.h"

#include "sim/util/prefault.h"
#include "sim/util/xalloc.h"

#include <sanitizer/asan_interface.h>
#include <stdlib.h>
#include <string.h>

/* A block holds at most cap intervals between writes, and room for the two a write may add
 * beyond (cap + ROOM). */
enum { BLOCK_MIN = 32, BLOCK_MAX = 512, ROOM = 3 };

struct trace_iblock {
    struct trace_ival *v; /* owned: room for cap + ROOM */
    uint32_t n, cap;
};

/* The largest block size fit for a map of count intervals: the smallest power of two from
 * BLOCK_MIN whose cube is at least 8 * count (a write moves about a third of a block, a split
 * a half of the map's blocks), at most BLOCK_MAX. */
static uint32_t block_size_for(size_t count)
{
    uint32_t c = BLOCK_MIN;
    while (c < BLOCK_MAX && (uint64_t)c * c * c < 8 * (uint64_t)count)
        c *= 2;
    return c;
}

/* The slabs: chunks of SLAB_MIN bytes, then twice the last up to SLAB_MAX, each carved from
 * its start; a block's room of cap intervals (a power of two from BLOCK_MIN to BLOCK_MAX: one
 * of CLASSES sizes) freed is kept for the next of that size (its first bytes point to the
 * next kept). Ahead, the chunk after the one in use is made at once and faulted in on a
 * thread of its own (sim/util/prefault.h) from SLAB_AHEAD bytes on. */
enum { SLAB_MIN = 64 << 10, SLAB_MAX = 4 << 20, SLAB_AHEAD = 1 << 20, CLASSES = 5 };
_Static_assert((SLAB_MIN << 6) == SLAB_MAX, "chunk_size");

struct trace_islab {
    void **chunk; /* owned, each owned */
    size_t nchunk, capchunk;
    uint8_t *at, *end;      /* the room left in the last chunk */
    void *spare;            /* owned: the next chunk (ahead), being faulted in by pf */
    struct sim_prefault pf; /* (started: faulting spare in) */
    void *kept[CLASSES];    /* the rooms freed, by size */
};

/* The size of the k-th chunk. */
static size_t chunk_size(size_t k)
{
    return k < 6 ? (size_t)SLAB_MIN << k : SLAB_MAX; /* (SLAB_MIN << 6 == SLAB_MAX) */
}

static size_t room_bytes(uint32_t cap)
{
    return (cap + ROOM) * sizeof(struct trace_ival);
}

static unsigned room_class(uint32_t cap)
{
    unsigned c = 0;
    while (((uint32_t)BLOCK_MIN << c) < cap)
        c++;
    return c;
}

/* The next chunk into use: the spare when ahead (its helper stopped: what it did not fault in
 * is this thread's), else a fresh one; the one after it made and faulted in ahead. */
static void slab_grow(struct trace_imap *m, struct trace_islab *s)
{
    size_t size = chunk_size(s->nchunk);
    void *c = s->spare;
    if (c)
        sim_prefault_stop(&s->pf);
    else
        c = sim_xmalloc(size);
    s->spare = NULL;
    if (s->nchunk == s->capchunk) {
        s->capchunk = s->capchunk ? 2 * s->capchunk : 16;
        s->chunk = sim_xreallocarray(s->chunk, s->capchunk, sizeof(*s->chunk));
    }
    s->chunk[s->nchunk++] = c;
    s->at = c, s->end = (uint8_t *)c + size;
    ASAN_POISON_MEMORY_REGION(c, size); /* (each room open once carved: ASan sees a use past
                                           it, or of one kept) */
    size_t next = chunk_size(s->nchunk);
    if (m->ahead && next >= SLAB_AHEAD) {
        s->spare = sim_xmalloc(next);
        s->pf = (struct sim_prefault){.r = {{s->spare, next}}, .nr = 1};
        sim_prefault_start(&s->pf); /* (none: the pages are this thread's to fault in) */
    }
}

/* Room for a block of cap intervals (and ROOM more). */
static struct trace_ival *room_alloc(struct trace_imap *m, uint32_t cap)
{
    if (!m->slab)
        m->slab = sim_xcalloc(1, sizeof(*m->slab));
    struct trace_islab *s = m->slab;
    unsigned c = room_class(cap);
    size_t need = room_bytes(cap);
    if (s->kept[c]) {
        void *r = s->kept[c];
        ASAN_UNPOISON_MEMORY_REGION(r, need);
        memcpy(&s->kept[c], r, sizeof(void *));
        return r;
    }
    if ((size_t)(s->end - s->at) < need)
        slab_grow(m, s);
    void *r = s->at;
    s->at += need;
    ASAN_UNPOISON_MEMORY_REGION(r, need);
    return r;
}

/* Room from room_alloc(m, cap) kept for the next block of its size. */
static void room_free(struct trace_imap *m, struct trace_ival *v, uint32_t cap)
{
    unsigned c = room_class(cap);
    /* (the room's first bytes hold the next kept: a pointer's size, meant) */
    memcpy(v, &m->slab->kept[c], sizeof(void *)); /* cppcheck-suppress pointerSize */
    m->slab->kept[c] = v;
    ASAN_POISON_MEMORY_REGION(v, room_bytes(cap));
}

void trace_imap_ahead(struct trace_imap *m)
{
    m->ahead = true;
}

/* A new empty block of room cap at position at. */
static void block_insert(struct trace_imap *m, size_t at, uint32_t cap)
{
    if (m->nb == m->capb) {
        m->capb = m->capb ? 2 * m->capb : 16;
        m->b = sim_xreallocarray(m->b, m->capb, sizeof(*m->b));
        m->top = sim_xreallocarray(m->top, m->capb, sizeof(*m->top));
    }
    memmove(&m->b[at + 1], &m->b[at], (m->nb - at) * sizeof(*m->b));
    memmove(&m->top[at + 1], &m->top[at], (m->nb - at) * sizeof(*m->top));
    m->b[at] = (struct trace_iblock){room_alloc(m, cap), 0, cap};
    m->nb++;
}

static void block_remove(struct trace_imap *m, size_t at)
{
    room_free(m, m->b[at].v, m->b[at].cap);
    memmove(&m->b[at], &m->b[at + 1], (m->nb - at - 1) * sizeof(*m->b));
    memmove(&m->top[at], &m->top[at + 1], (m->nb - at - 1) * sizeof(*m->top));
    m->nb--;
}

/* The first interval of block a whose hi is above lo (the block's top is), searched from
 * interval i on when it lies a few intervals from there, else by halves (without branches:
 * which half is as likely as not). */
static struct trace_imap_pos search_block(const struct trace_imap *m, size_t a, size_t i,
                                          uint64_t lo)
{
    const struct trace_ival *v = m->b[a].v;
    size_t n = m->b[a].n;
    i = i < n ? i : n - 1;
    for (unsigned step = 0; step < 4; step++) {
        if (v[i].hi <= lo)
            i++; /* below i: not past n - 1, whose hi is above lo */
        else if (i && v[i - 1].hi > lo)
            i--;
        else
            return (struct trace_imap_pos){a, i};
    }
    /* the intervals whose hi is at most lo are the first x: base <= x <= base + len */
    size_t base = 0, len = n;
    while (len > 1) {
        size_t half = len / 2;
        base = v[base + half].hi <= lo ? base + half : base;
        len -= half;
    }
    return (struct trace_imap_pos){a, base + (v[base].hi <= lo)};
}

static struct trace_imap_pos search(const struct trace_imap *m, uint64_t lo)
{
    if (!m->nb || m->top[m->nb - 1] <= lo)
        return (struct trace_imap_pos){m->nb, 0};
    size_t base = 0, len = m->nb; /* as in search_block, over the blocks' tops */
    while (len > 1) {
        size_t half = len / 2;
        base = m->top[base + half] <= lo ? base + half : base;
        len -= half;
    }
    size_t a = base + (m->top[base] <= lo);
    return search_block(m, a, m->b[a].n / 2, lo);
}

/* The slots by address (trace_imap.hit: where a search of the address ended and the interval
 * written there, in one slot, so that a write reads and writes one line of the caches for
 * both), then the guesses by the address's NEAR_BITS-aligned block (as many: a write just past
 * the one before it, as a kernel writes a buffer in order, is searched for from there). Each
 * table has 2^bits slots: from SLOT_BITS_MIN, twice as many as the map has ranges, up to
 * SLOT_BITS_MAX. A table larger than its map needs spreads its few addresses over more lines
 * of the caches, which the sweep's other arrays then push out (a TCM of a few hundred ranges
 * rewritten millions of times); a map of a million ranges would not keep their addresses in
 * thousands of slots either (its slots keep the addresses of the last few hundred ops). */
enum { SLOT_BITS_MIN = 6, SLOT_BITS_MAX = 10, NEAR_BITS = 12 };

/* Whether p is the first interval of m whose hi is above lo. */
static inline bool first_at(const struct trace_imap *m, struct trace_imap_pos p, uint64_t lo)
{
    if (p.b >= m->nb || p.i >= m->b[p.b].n || m->b[p.b].v[p.i].hi <= lo)
        return false;
    return p.i ? m->b[p.b].v[p.i - 1].hi <= lo : p.b == 0 || m->top[p.b - 1] <= lo;
}

/* The slot of address lo in the table by address (m->hit made). */
static inline size_t hit_slot(const struct trace_imap *m, uint64_t lo)
{
    return trace_imap_slot_(lo, m->bits);
}

/* The slot of address lo's block in the guesses by block (m->guess made). */
static inline size_t near_slot(const struct trace_imap *m, uint64_t lo)
{
    return trace_imap_slot_(lo >> NEAR_BITS, m->bits);
}

/* The tables' size: set at the first made. */
static inline size_t slots(struct trace_imap *m)
{
    if (!m->bits)
        m->bits = SLOT_BITS_MIN;
    return (size_t)1 << m->bits;
}

/* Whether m has more ranges than half its slots (or none made yet), short of SLOT_BITS_MAX. */
static inline bool slots_short(const struct trace_imap *m)
{
    return m->bits < SLOT_BITS_MAX && m->count > ((size_t)1 << m->bits) / 2;
}

/* The map has grown past half its slots: tables twice the size or more (the slots are hints:
 * the new tables start empty, made at their first use). */
static void slots_grow(struct trace_imap *m)
{
    (void)slots(m);
    while (slots_short(m))
        m->bits++;
    free(m->hit), free(m->guess);
    m->hit = NULL, m->guess = NULL;
}

/* The slot of lo in the table by address (made at the first use). */
static inline struct trace_imap_hit *slot_of(struct trace_imap *m, uint64_t lo)
{
    if (!m->hit) {
        size_t ns = slots(m);
        m->hit = sim_xreallocarray(NULL, ns, sizeof(*m->hit));
        for (size_t k = 0; k < ns; k++)
            m->hit[k] = (struct trace_imap_hit){.lo = 0, .len = 0, .b = UINT32_MAX};
    }
    return &m->hit[hit_slot(m, lo)];
}

/* Remember p as where a search of lo ended, by lo's block. */
static inline void near_put(struct trace_imap *m, uint64_t lo, struct trace_imap_pos p)
{
    if (!m->guess)
        m->guess = sim_xcalloc(slots(m), sizeof(*m->guess));
    struct trace_imap_guess *g = &m->guess[near_slot(m, lo)];
    g->lo = lo >> NEAR_BITS, g->b = (uint32_t)p.b, g->i = (uint32_t)p.i;
}

/* Remember p as where lo was found, by lo (the interval kept there for lo stays; another
 * address's goes) and by its block. */
static inline void guess_put(struct trace_imap *m, uint64_t lo, struct trace_imap_pos p)
{
    struct trace_imap_hit *h = slot_of(m, lo);
    if (h->lo != lo)
        h->lo = lo, h->len = 0;
    h->b = (uint32_t)p.b, h->i = (uint32_t)p.i;
    near_put(m, lo, p);
}

/* The len a slot keeps of [lo, hi): 0 (none) of no length, or longer than a len holds. */
static inline uint32_t hit_len(uint64_t lo, uint64_t hi)
{
    return lo < hi && hi - lo <= UINT32_MAX ? (uint32_t)(hi - lo) : 0;
}

/* The interval [lo, hi) of the map, written by op ending at end, at p: kept in its slot. */
static inline void hit_put(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t op,
                           uint64_t end, struct trace_imap_pos p)
{
    struct trace_imap_hit *h = slot_of(m, lo);
    h->lo = lo, h->end = end, h->len = hit_len(lo, hi), h->op = op;
    h->b = (uint32_t)p.b, h->i = (uint32_t)p.i;
}

/* The interval starting at lo is cut or gone: dropped from its slot (another of the same lo,
 * of no length beside it, drops it too: a hit less, never a wrong one). */
static inline void hit_drop(struct trace_imap *m, uint64_t lo)
{
    struct trace_imap_hit *h = m->hit ? &m->hit[hit_slot(m, lo)] : NULL;
    if (h && h->lo == lo)
        h->len = 0;
}

/* The first interval whose hi is above lo, searched from the guess g when lo falls in its
 * block or the next: false (*p unset) when neither holds it. */
static bool search_near(const struct trace_imap *m, uint32_t gb, uint32_t gi, uint64_t lo,
                        struct trace_imap_pos *p)
{
    size_t b = gb, i = gi;
    if (b >= m->nb)
        return false;
    if (m->top[b] <= lo) /* past its block: at the head of the next, or past the end */
        b++, i = 0;
    else if (b && m->top[b - 1] > lo)
        return false;
    if (b == m->nb)
        *p = (struct trace_imap_pos){b, 0};
    else if (m->top[b] > lo)
        *p = search_block(m, b, i, lo);
    else
        return false;
    return true;
}

/* The interval [lo, hi) itself, when the guess by lo points at it (the common case: an op
 * reads or rewrites the bytes one op wrote), else NULL; of no length, NULL (several of no
 * length may start at lo). Intervals are disjoint, none of no length inside another: it is
 * then the first whose hi is above lo, and the only one [lo, hi) overlaps. */
static inline struct trace_ival *exact(const struct trace_imap *m, uint64_t lo, uint64_t hi)
{
    if (!m->hit || lo >= hi)
        return NULL;
    const struct trace_imap_hit *h = &m->hit[hit_slot(m, lo)];
    if (h->lo != lo || h->b >= m->nb || h->i >= m->b[h->b].n)
        return NULL;
    struct trace_ival *v = &m->b[h->b].v[h->i];
    return v->lo == lo && v->hi == hi ? v : NULL;
}

/* trace_imap_first, inline in the map's own writes and searches. */
static inline struct trace_imap_pos first_pos(struct trace_imap *m, uint64_t lo)
{
    struct trace_imap_pos p;
    if (m->hit) {
        const struct trace_imap_hit *h = &m->hit[hit_slot(m, lo)];
        if (h->lo == lo && h->b != UINT32_MAX) {
            p = (struct trace_imap_pos){h->b, h->i};
            if (first_at(m, p, lo))
                return p;
            /* moved within its block (a write before it changed the count) or to a block
             * split from it */
            if (search_near(m, h->b, h->i, lo, &p)) {
                guess_put(m, lo, p);
                return p;
            }
        }
    }
    if (m->guess) {
        const struct trace_imap_guess *g = &m->guess[near_slot(m, lo)];
        if (g->lo == lo >> NEAR_BITS && search_near(m, g->b, g->i, lo, &p)) {
            guess_put(m, lo, p);
            return p;
        }
    }
    p = search(m, lo);
    if (p.b < m->nb)
        guess_put(m, lo, p);
    return p;
}

struct trace_imap_pos trace_imap_first(struct trace_imap *m, uint64_t lo)
{
    return first_pos(m, lo);
}

bool trace_imap_next(const struct trace_imap *m, struct trace_imap_pos *p, struct trace_ival *x)
{
    if (p->b < m->nb && p->i == m->b[p->b].n)
        p->b++, p->i = 0;
    if (p->b >= m->nb)
        return false;
    *x = m->b[p->b].v[p->i++];
    return true;
}

/* Block at.b has grown past its size: give it more room while the map's size allows a
 * bigger block, else split it in two; *mine (the index of an interval in it) follows. */
static void block_overflow(struct trace_imap *m, struct trace_imap_pos *mine)
{
    struct trace_iblock *a = &m->b[mine->b];
    uint32_t want = block_size_for(m->count);
    if (a->cap < want) {
        struct trace_ival *v = room_alloc(m, want);
        memcpy(v, a->v, a->n * sizeof(*v));
        room_free(m, a->v, a->cap);
        a->v = v, a->cap = want;
        return;
    }
    block_insert(m, mine->b + 1, a->cap);
    a = &m->b[mine->b];
    struct trace_iblock *b = &m->b[mine->b + 1];
    /* in two halves; but a write that goes on from the range before it, up to a gap (a
     * kernel writing a buffer in order), ends the first: the writes after it then fall
     * between the two blocks, at the end of the first (a write at the block's end starts
     * the second alone) */
    const struct trace_ival *v = a->v;
    uint32_t i = (uint32_t)mine->i, half = a->n / 2;
    if (i == a->n - 1)
        half = i;
    else if (i && v[i - 1].hi == v[i].lo && v[i].hi < v[i + 1].lo)
        half = i + 1;
    uint32_t c = a->n - half;
    memcpy(b->v, &a->v[half], c * sizeof(*a->v));
    b->n = c;
    a->n = half;
    m->top[mine->b] = a->v[half - 1].hi;
    m->top[mine->b + 1] = b->v[c - 1].hi;
    if (mine->i >= half)
        mine->b++, mine->i -= half;
}

void trace_imap_assign(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t op, uint64_t end)
{
    struct trace_ival *same = exact(m, lo, hi);
    if (same) { /* the bytes of one interval, rewritten: in place */
        same->op = op, same->end = end;
        struct trace_imap_hit *h = &m->hit[hit_slot(m, lo)]; /* (exact found lo's slot) */
        h->len = hit_len(lo, hi), h->op = op, h->end = end;
        return;
    }
    struct trace_imap_pos at = first_pos(m, lo);
    if (at.b < m->nb) { /* the bytes of one interval, rewritten: in place */
        struct trace_ival *e = &m->b[at.b].v[at.i];
        if (e->lo == lo && e->hi == hi) {
            e->op = op, e->end = end;
            hit_put(m, lo, hi, op, end, at);
            return;
        }
    }
    struct trace_ival put[3];
    size_t np = 0;
    if (at.b == m->nb) { /* past every interval: at the end of the last block */
        if (!m->nb)
            block_insert(m, 0, BLOCK_MIN);
        at = (struct trace_imap_pos){m->nb - 1, m->b[m->nb - 1].n};
    } else if (at.i == 0 && at.b && hi <= m->b[at.b].v[0].lo) {
        /* between two blocks, overlapping neither: at the end of the first (a kernel writing
         * a buffer in order, up to the next buffer, moves nothing) */
        at = (struct trace_imap_pos){at.b - 1, m->b[at.b - 1].n};
    }
    struct trace_iblock *k = &m->b[at.b];
    /* the run [at.i, j) of k that [lo, hi) covers, and what is left of its ends */
    size_t j = at.i;
    bool has_right = false;
    struct trace_ival right = {0};
    if (j < k->n && k->v[j].lo < hi && k->v[j].lo < lo)
        put[np++] = (struct trace_ival){k->v[j].lo, lo, k->v[j].op, k->v[j].end};
    for (; j < k->n && k->v[j].lo < hi; j++) {
        hit_drop(m, k->v[j].lo); /* cut or covered */
        if (k->v[j].hi > hi)
            right = (struct trace_ival){hi, k->v[j].hi, k->v[j].op, k->v[j].end}, has_right = true;
    }
    if (j == k->n) { /* the run may go on in the next blocks: their covered heads go */
        for (size_t b = at.b + 1; b < m->nb;) {
            struct trace_iblock *q = &m->b[b];
            size_t c = 0;
            for (; c < q->n && q->v[c].lo < hi; c++) {
                hit_drop(m, q->v[c].lo);
                if (q->v[c].hi > hi)
                    right = (struct trace_ival){hi, q->v[c].hi, q->v[c].op, q->v[c].end},
                    has_right = true;
            }
            m->count -= c;
            if (c < q->n) {
                /* its last interval, hence top, stays */
                if (c) {
                    memmove(q->v, &q->v[c], (q->n - c) * sizeof(*q->v));
                    q->n -= (uint32_t)c;
                }
                break;
            }
            block_remove(m, b);
        }
        k = &m->b[at.b];
    }
    put[np++] = (struct trace_ival){lo, hi, op, end};
    if (has_right)
        put[np++] = right;
    if (j != at.i + np)
        memmove(&k->v[at.i + np], &k->v[j], (k->n - j) * sizeof(*k->v));
    /* (one to three intervals, each copied whole: a memcpy of so few bytes costs more) */
    k->v[at.i] = put[0];
    if (np > 1)
        k->v[at.i + 1] = put[1];
    if (np > 2)
        k->v[at.i + 2] = put[2];
    k->n = (uint32_t)(k->n - (j - at.i) + np);
    m->count = m->count - (j - at.i) + np;
    m->top[at.b] = k->v[k->n - 1].hi;
    /* [lo, hi): the first interval above lo */
    struct trace_imap_pos mine = {at.b, at.i + np - 1 - has_right};
    if (k->n > k->cap)
        block_overflow(m, &mine);
    if (slots_short(m))
        slots_grow(m);
    /* the next search of lo, or just past it, starts here; the interval as written */
    near_put(m, lo, mine);
    hit_put(m, lo, hi, op, end, mine);
}

bool trace_imap_latest_(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t skip,
                        struct trace_ival *x)
{
    const struct trace_ival *best = exact(m, lo, hi);
    if (best) { /* the bytes one op wrote: its interval alone */
        if (best->op == skip)
            return false;
        *x = *best;
        return true;
    }
    struct trace_imap_pos p = first_pos(m, lo);
    for (size_t b = p.b, i = p.i; b < m->nb; b++, i = 0) {
        const struct trace_ival *v = m->b[b].v;
        for (size_t n = m->b[b].n; i < n; i++) {
            if (v[i].lo >= hi)
                goto done;
            if (v[i].op != skip && (!best || v[i].end > best->end))
                best = &v[i];
        }
    }
done:
    if (best)
        *x = *best;
    return best != NULL;
}

size_t trace_imap_count(const struct trace_imap *m)
{
    return m->count;
}

void trace_imap_fini(struct trace_imap *m)
{
    struct trace_islab *s = m->slab;
    if (s) {
        if (s->spare)
            sim_prefault_stop(&s->pf);
        free(s->spare);
        for (size_t k = 0; k < s->nchunk; k++) {
            ASAN_UNPOISON_MEMORY_REGION(s->chunk[k], chunk_size(k));
            free(s->chunk[k]);
        }
        free(s->chunk);
        free(s);
    }
    free(m->guess);
    free(m->hit);
    free(m->b);
    free(m->top);
    memset(m, 0, sizeof(*m));
}
