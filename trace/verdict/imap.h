/*
 * An interval map for the critical path (critpath.h): which op wrote each byte range of a
 * memory space last, and when that op ended. Disjoint intervals kept in address order in
 * blocks (a write in the middle of millions of ranges moves part of a block, not the map's
 * ranges); a write that replaces ranges by as many moves nothing.
 */
#ifndef TRACE_IMAP_H
#define TRACE_IMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One interval [lo, hi) and the op that wrote it, ending at end. */
struct trace_ival {
    uint64_t lo, hi;
    uint32_t op;
    uint64_t end;
};

struct trace_iblock; /* a block of intervals (imap.c) */
struct trace_islab;  /* where the blocks' intervals live (imap.c) */

/* The map: zero-initialised is empty. */
struct trace_imap {
    struct trace_iblock *b; /* owned, in order */
    uint64_t *top;          /* owned: the hi of each block's last interval */
    size_t nb, capb;
    size_t count; /* intervals */
    /* addresses by a hash of each (one line of the caches holds two; as many slots as twice
     * the map's ranges, up to a thousand, with as many guesses below): where
     * the last search of it ended (b, i; b UINT32_MAX: none), tried first, as most ops
     * read what was written or read at the same address just before; and the op and end of
     * the interval [lo, lo + len) the map holds as it was written there (len 0: none; a
     * write that cuts or covers it drops it): a read of the bytes one op wrote, the common
     * case, answered from it alone rather than from the blocks */
    struct trace_imap_hit {
        uint64_t lo, end;
        uint32_t len, op;
        uint32_t b, i;
    } * hit; /* owned; NULL before the first search or write */
    /* where searches ended by a hash of the address's aligned block, tried next: a write
     * just past the one before it, as a kernel writes a buffer in order */
    struct trace_imap_guess {
        uint64_t lo;
        uint32_t b, i;
    } * guess;                /* owned; NULL before the first search */
    struct trace_islab *slab; /* owned; NULL before the first write */
    unsigned bits;            /* log2 of the slots of hit and of guess (0: none made yet) */
    bool ahead;               /* trace_imap_ahead */
};

/* A position in a map: block b, interval i (b == nb: past the end). */
struct trace_imap_pos {
    size_t b, i;
};

/* [lo, hi) was written by op, ending at end: it replaces what the map said of those bytes
 * (an interval partly covered keeps its parts outside [lo, hi)). */
void trace_imap_assign(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t op, uint64_t end);

/* The first interval whose hi is above lo (m remembers where it was, to try first when lo
 * is asked again). */
struct trace_imap_pos trace_imap_first(struct trace_imap *m, uint64_t lo);

/* The interval at *p, then *p moved to the next one: false past the end. */
bool trace_imap_next(const struct trace_imap *m, struct trace_imap_pos *p, struct trace_ival *x);

/* The slot of key x (an address, or an aligned block's) in a table of 2^bits slots (bits from
 * 1 to 63). */
static inline size_t trace_imap_slot_(uint64_t x, unsigned bits)
{
    return (size_t)((x * 0x9e3779b97f4a7c15u) >> (64 - bits));
}

/* trace_imap_latest past its hit table (imap.c). */
bool trace_imap_latest_(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t skip,
                        struct trace_ival *x);

/* Of the intervals from the first whose hi is above lo on while their lo is below hi (those
 * [lo, hi) overlaps) whose op is not skip, the first of those whose end is the latest, into
 * *x: false when there is none. (Inline: most reads are of the bytes one op wrote, as it
 * wrote them, which the hit table answers; millions of them a sweep.) */
static inline bool trace_imap_latest(struct trace_imap *m, uint64_t lo, uint64_t hi, uint32_t skip,
                                     struct trace_ival *x)
{
    const struct trace_imap_hit *h =
        m->hit && lo < hi ? &m->hit[trace_imap_slot_(lo, m->bits)] : NULL;
    if (h && h->lo == lo && h->len && h->len == hi - lo) { /* the bytes one op wrote */
        if (h->op == skip)
            return false;
        *x = (struct trace_ival){lo, hi, h->op, h->end};
        return true;
    }
    return trace_imap_latest_(m, lo, hi, skip, x);
}

/* Have m fault in the pages it fills next on a second thread, a slab ahead of the one it
 * fills (a map of a million ranges fills tens of megabytes of fresh pages; the thread runs
 * only on a core that would be idle otherwise). Before its first write. */
void trace_imap_ahead(struct trace_imap *m);

/* The number of intervals in m. */
size_t trace_imap_count(const struct trace_imap *m);

/* Free m's memory (it is empty then). */
void trace_imap_fini(struct trace_imap *m);

#endif
