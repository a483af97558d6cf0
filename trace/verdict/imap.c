/*
 * The critical path's interval map (see imap.h): disjoint intervals by lo, in blocks of at
 * most 2 * IBLOCK (never empty), each keeping its intervals' fields side by side (and the map
 * its blocks' last his) so that a search reads few cache lines. A write finds the run of
 * intervals it covers and replaces it by its own interval and the parts left of the first and
 * right of the last, moving the rest of the block once, by the difference in count (not at
 * all when an op rewrites what one op wrote before it: the common case).
 */
#include "trace/verdict/imap.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

enum { IBLOCK = 256, IROOM = 2 * IBLOCK + 3 };

struct trace_iblock {
    uint64_t *lo, *hi, *end; /* owned, room for IROOM each */
    uint32_t *op;            /* owned */
    size_t n;
};

static struct trace_ival blk_get(const struct trace_iblock *k, size_t i)
{
    return (struct trace_ival){k->lo[i], k->hi[i], k->op[i], k->end[i]};
}

static void blk_set(struct trace_iblock *k, size_t i, const struct trace_ival *x)
{
    k->lo[i] = x->lo, k->hi[i] = x->hi, k->op[i] = x->op, k->end[i] = x->end;
}

/* Move the intervals [from, k->n) of k to position to (room permitting). */
static void blk_shift(struct trace_iblock *k, size_t from, size_t to)
{
    size_t c = k->n - from;
    if (!c || from == to)
        return;
    memmove(&k->lo[to], &k->lo[from], c * sizeof(*k->lo));
    memmove(&k->hi[to], &k->hi[from], c * sizeof(*k->hi));
    memmove(&k->end[to], &k->end[from], c * sizeof(*k->end));
    memmove(&k->op[to], &k->op[from], c * sizeof(*k->op));
}

static void blk_free(struct trace_iblock *k)
{
    free(k->lo), free(k->hi), free(k->end), free(k->op);
}

/* A new empty block at position at. */
static void block_insert(struct trace_imap *m, size_t at)
{
    if (m->nb == m->capb) {
        m->capb = m->capb ? 2 * m->capb : 16;
        m->b = sim_xreallocarray(m->b, m->capb, sizeof(*m->b));
        m->top = sim_xreallocarray(m->top, m->capb, sizeof(*m->top));
    }
    memmove(&m->b[at + 1], &m->b[at], (m->nb - at) * sizeof(*m->b));
    memmove(&m->top[at + 1], &m->top[at], (m->nb - at) * sizeof(*m->top));
    m->b[at] = (struct trace_iblock){sim_xreallocarray(NULL, IROOM, sizeof(uint64_t)),
                                     sim_xreallocarray(NULL, IROOM, sizeof(uint64_t)),
                                     sim_xreallocarray(NULL, IROOM, sizeof(uint64_t)),
                                     sim_xreallocarray(NULL, IROOM, sizeof(uint32_t)), 0};
    m->nb++;
}

static void block_remove(struct trace_imap *m, size_t at)
{
    blk_free(&m->b[at]);
    memmove(&m->b[at], &m->b[at + 1], (m->nb - at - 1) * sizeof(*m->b));
    memmove(&m->top[at], &m->top[at + 1], (m->nb - at - 1) * sizeof(*m->top));
    m->nb--;
}

/* The first interval of block a whose hi is above lo (the block's top is), searched from
 * interval i on when it lies a few intervals from there. */
static struct trace_imap_pos search_block(const struct trace_imap *m, size_t a, size_t i,
                                          uint64_t lo)
{
    const uint64_t *hi = m->b[a].hi;
    size_t n = m->b[a].n;
    i = i < n ? i : n - 1;
    for (unsigned step = 0; step < 4; step++) {
        if (hi[i] <= lo)
            i++; /* below i: not past n - 1, whose hi is above lo */
        else if (i && hi[i - 1] > lo)
            i--;
        else
            return (struct trace_imap_pos){a, i};
    }
    size_t x = 0, y = n;
    while (x < y) {
        size_t mid = x + (y - x) / 2;
        if (hi[mid] <= lo)
            x = mid + 1;
        else
            y = mid;
    }
    return (struct trace_imap_pos){a, x};
}

static struct trace_imap_pos search(const struct trace_imap *m, uint64_t lo)
{
    size_t a = 0, z = m->nb;
    while (a < z) {
        size_t mid = a + (z - a) / 2;
        if (m->top[mid] <= lo)
            a = mid + 1;
        else
            z = mid;
    }
    if (a == m->nb)
        return (struct trace_imap_pos){a, 0};
    return search_block(m, a, m->b[a].n / 2, lo);
}

enum { GUESSES = 4096 };

/* Whether p is the first interval of m whose hi is above lo. */
static bool first_at(const struct trace_imap *m, struct trace_imap_pos p, uint64_t lo)
{
    if (p.b >= m->nb || p.i >= m->b[p.b].n || m->b[p.b].hi[p.i] <= lo)
        return false;
    return p.i ? m->b[p.b].hi[p.i - 1] <= lo : p.b == 0 || m->top[p.b - 1] <= lo;
}

/* The guess slot of address lo. */
static size_t guess_slot(uint64_t lo)
{
    return (size_t)((lo * 0x9e3779b97f4a7c15u) >> 52); /* 12 bits: GUESSES */
}

struct trace_imap_pos trace_imap_first(struct trace_imap *m, uint64_t lo)
{
    size_t h = guess_slot(lo);
    struct trace_imap_pos p;
    if (m->guess && m->guess[h].lo == lo) {
        p = (struct trace_imap_pos){m->guess[h].b, m->guess[h].i};
        if (first_at(m, p, lo))
            return p;
        /* moved within its block (a write before it changed the count) or to a block split
         * from it: search that block alone when lo still falls in it */
        if (p.b < m->nb && m->top[p.b] > lo && (p.b == 0 || m->top[p.b - 1] <= lo)) {
            p = search_block(m, p.b, p.i, lo);
            m->guess[h].i = (uint32_t)p.i;
            return p;
        }
    }
    p = search(m, lo);
    if (p.b < m->nb) {
        if (!m->guess)
            m->guess = sim_xcalloc(GUESSES, sizeof(*m->guess));
        m->guess[h].lo = lo, m->guess[h].b = (uint32_t)p.b, m->guess[h].i = (uint32_t)p.i;
    }
    return p;
}

bool trace_imap_next(const struct trace_imap *m, struct trace_imap_pos *p, struct trace_ival *x)
{
    if (p->b < m->nb && p->i == m->b[p->b].n)
        p->b++, p->i = 0;
    if (p->b >= m->nb)
        return false;
    *x = blk_get(&m->b[p->b], p->i++);
    return true;
}

void trace_imap_assign(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t op, uint64_t end)
{
    struct trace_imap_pos at = trace_imap_first(m, lo);
    struct trace_ival put[3];
    size_t np = 0;
    if (at.b == m->nb) { /* past every interval: at the end of the last block */
        if (!m->nb)
            block_insert(m, 0);
        at = (struct trace_imap_pos){m->nb - 1, m->b[m->nb - 1].n};
    }
    struct trace_iblock *k = &m->b[at.b];
    /* the run [at.i, j) of k that [lo, hi) covers, and what is left of its ends */
    size_t j = at.i;
    bool has_right = false;
    struct trace_ival right = {0};
    if (j < k->n && k->lo[j] < hi && k->lo[j] < lo)
        put[np++] = (struct trace_ival){k->lo[j], lo, k->op[j], k->end[j]};
    for (; j < k->n && k->lo[j] < hi; j++)
        if (k->hi[j] > hi)
            right = (struct trace_ival){hi, k->hi[j], k->op[j], k->end[j]}, has_right = true;
    if (j == k->n) { /* the run may go on in the next blocks: their covered heads go */
        for (size_t b = at.b + 1; b < m->nb;) {
            struct trace_iblock *q = &m->b[b];
            size_t c = 0;
            for (; c < q->n && q->lo[c] < hi; c++)
                if (q->hi[c] > hi)
                    right = (struct trace_ival){hi, q->hi[c], q->op[c], q->end[c]},
                    has_right = true;
            if (c < q->n) {
                blk_shift(q, c, 0); /* its last interval, hence top, stays */
                q->n -= c;
                break;
            }
            block_remove(m, b);
        }
        k = &m->b[at.b];
    }
    put[np++] = (struct trace_ival){lo, hi, op, end};
    if (has_right)
        put[np++] = right;
    blk_shift(k, j, at.i + np);
    for (size_t q = 0; q < np; q++)
        blk_set(k, at.i + q, &put[q]);
    k->n = k->n - (j - at.i) + np;
    m->top[at.b] = k->hi[k->n - 1];
    size_t mine = at.i + np - 1 - has_right; /* [lo, hi): the first interval above lo */
    if (k->n > 2 * IBLOCK) {                 /* split it in two */
        block_insert(m, at.b + 1);
        struct trace_iblock *a = &m->b[at.b], *b = &m->b[at.b + 1];
        size_t half = a->n / 2, c = a->n - half;
        memcpy(b->lo, &a->lo[half], c * sizeof(*a->lo));
        memcpy(b->hi, &a->hi[half], c * sizeof(*a->hi));
        memcpy(b->end, &a->end[half], c * sizeof(*a->end));
        memcpy(b->op, &a->op[half], c * sizeof(*a->op));
        b->n = c;
        a->n = half;
        m->top[at.b] = a->hi[half - 1];
        m->top[at.b + 1] = b->hi[c - 1];
        if (mine >= half)
            at.b++, mine -= half;
    }
    if (m->guess) { /* the next search of lo finds it here */
        size_t h = guess_slot(lo);
        m->guess[h].lo = lo, m->guess[h].b = (uint32_t)at.b, m->guess[h].i = (uint32_t)mine;
    }
}

size_t trace_imap_count(const struct trace_imap *m)
{
    size_t n = 0;
    for (size_t b = 0; b < m->nb; b++)
        n += m->b[b].n;
    return n;
}

void trace_imap_fini(struct trace_imap *m)
{
    for (size_t k = 0; k < m->nb; k++)
        blk_free(&m->b[k]);
    free(m->guess);
    free(m->b);
    free(m->top);
    memset(m, 0, sizeof(*m));
}
