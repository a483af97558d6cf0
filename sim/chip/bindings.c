/*
 * Pending bindings (see bindings.h): disjoint ranges sorted by address, kept in blocks of
 * at most BLOCK ranges; an array of block pointers in the same order. The ranges do not
 * overlap, so their ends are sorted too, and "the first range ending after a" is a binary
 * search over the blocks' last ends, then one inside a block. The last ends are kept in an
 * array of their own beside the block pointers: a long run binds tens of thousands of
 * blocks, and a search that read each probe's block would miss the cache at every step.
 */
#include "sim/chip/bindings.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 64 };

struct range {
    uint64_t addr, n;
    const char *op; /* borrowed */
};

struct block {
    unsigned n;
    struct range r[BLOCK];
};

struct sim_bindings {
    struct block **blk; /* owned, nblk of them, none empty */
    uint64_t *last;     /* owned: last[i] is the end of blk[i]'s last range */
    size_t nblk, cap;
    size_t total;
};

static uint64_t end_of(const struct range *r)
{
    return r->addr + r->n;
}

struct sim_bindings *sim_bindings_new(void)
{
    return sim_xcalloc(1, sizeof(struct sim_bindings));
}

void sim_bindings_free(struct sim_bindings *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nblk; i++)
        free(b->blk[i]);
    free(b->blk);
    free(b->last);
    free(b);
}

size_t sim_bindings_count(const struct sim_bindings *b)
{
    return b->total;
}

/* The first block whose last range ends after a, or nblk. */
static size_t block_for(const struct sim_bindings *b, uint64_t a)
{
    size_t lo = 0, hi = b->nblk;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->last[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first range of k ending after a, or k->n. */
static unsigned pos_in(const struct block *k, uint64_t a)
{
    unsigned lo = 0, hi = k->n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (end_of(&k->r[mid]) <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Bring last[i] up to date with block i's last range. */
static void update_last(struct sim_bindings *b, size_t i)
{
    const struct block *k = b->blk[i];
    b->last[i] = end_of(&k->r[k->n - 1]);
}

static void blocks_insert(struct sim_bindings *b, size_t at, struct block *k)
{
    if (b->nblk == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->blk = sim_xreallocarray(b->blk, b->cap, sizeof(*b->blk));
        b->last = sim_xreallocarray(b->last, b->cap, sizeof(*b->last));
    }
    memmove(&b->blk[at + 1], &b->blk[at], (b->nblk - at) * sizeof(*b->blk));
    memmove(&b->last[at + 1], &b->last[at], (b->nblk - at) * sizeof(*b->last));
    b->blk[at] = k;
    b->nblk++;
    update_last(b, at);
}

/* Remove range p of block i (and the block when it empties). */
static void remove_at(struct sim_bindings *b, size_t i, unsigned p)
{
    struct block *k = b->blk[i];
    memmove(&k->r[p], &k->r[p + 1], (k->n - p - 1) * sizeof(k->r[0]));
    k->n--;
    b->total--;
    if (!k->n) {
        free(k);
        memmove(&b->blk[i], &b->blk[i + 1], (b->nblk - i - 1) * sizeof(*b->blk));
        memmove(&b->last[i], &b->last[i + 1], (b->nblk - i - 1) * sizeof(*b->last));
        b->nblk--;
    } else if (p == k->n) { /* it was the last range */
        update_last(b, i);
    }
}

/* Add r, which overlaps no range of the set, as range p of block i (its place in the
 * order: between range p - 1 and range p of that block). */
static void insert_at(struct sim_bindings *b, size_t i, unsigned p, struct range r)
{
    b->total++;
    struct block *k = b->blk[i];
    if (k->n == BLOCK) { /* split in halves first */
        struct block *hi = sim_xmalloc(sizeof(*hi));
        hi->n = BLOCK / 2;
        memcpy(hi->r, &k->r[BLOCK / 2], (BLOCK / 2) * sizeof(k->r[0]));
        k->n = BLOCK / 2;
        update_last(b, i);
        blocks_insert(b, i + 1, hi);
        if (p > BLOCK / 2) {
            k = hi;
            i++;
            p -= BLOCK / 2;
        }
    }
    memmove(&k->r[p + 1], &k->r[p], (k->n - p) * sizeof(k->r[0]));
    k->r[p] = r;
    k->n++;
    if (p == k->n - 1)
        update_last(b, i);
}

/* Add r, which overlaps no range of the set, in its place. */
static void insert(struct sim_bindings *b, struct range r)
{
    if (!b->nblk) {
        struct block *k = sim_xmalloc(sizeof(*k));
        k->n = 1;
        k->r[0] = r;
        b->total++;
        blocks_insert(b, 0, k);
        return;
    }
    size_t i = block_for(b, r.addr);
    if (i == b->nblk) /* after every range: the end of the last block */
        insert_at(b, i - 1, b->blk[i - 1]->n, r);
    else
        insert_at(b, i, pos_in(b->blk[i], r.addr), r);
}

void sim_bindings_clear(struct sim_bindings *b, uint64_t addr, uint64_t n)
{
    uint64_t stop = addr + n;
    for (;;) {
        size_t i = block_for(b, addr);
        if (i == b->nblk)
            return;
        unsigned p = pos_in(b->blk[i], addr);
        assert(p < b->blk[i]->n);
        struct range r = b->blk[i]->r[p];
        if (r.addr >= stop)
            return;
        remove_at(b, i, p);
        if (r.addr < addr)
            insert(b, (struct range){r.addr, addr - r.addr, r.op});
        if (end_of(&r) > stop) {
            insert(b, (struct range){stop, end_of(&r) - stop, r.op});
            return; /* it reached past the range: nothing further overlaps */
        }
    }
}

void sim_bindings_set(struct sim_bindings *b, uint64_t addr, uint64_t n, const char *op)
{
    if (!n)
        n = 1;
    struct range r = {addr, n, op};
    /* The common cases with one search: nothing bound overlaps the range, or it is bound
     * as a whole already. */
    size_t i = b->nblk ? block_for(b, addr) : 0;
    if (i == b->nblk && i > 0) { /* after every range */
        insert_at(b, i - 1, b->blk[i - 1]->n, r);
        return;
    }
    if (i < b->nblk) {
        struct block *k = b->blk[i];
        unsigned p = pos_in(k, addr);
        if (k->r[p].addr >= addr + n) {
            insert_at(b, i, p, r);
            return;
        }
        if (k->r[p].addr == addr && k->r[p].n == n) {
            k->r[p].op = op;
            return;
        }
    }
    sim_bindings_clear(b, addr, n);
    insert(b, r);
}

const char *sim_bindings_find(const struct sim_bindings *b, uint64_t addr, uint64_t n)
{
    size_t i = block_for(b, addr);
    if (i == b->nblk)
        return NULL;
    const struct range *r = &b->blk[i]->r[pos_in(b->blk[i], addr)];
    return r->addr < addr + (n ? n : 1) ? r->op : NULL;
}
