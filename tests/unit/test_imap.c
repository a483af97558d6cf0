/* The critical path's interval map (trace/verdict/imap.h) against a plain array of intervals
 * doing the same replacements: random writes (of no length, equal, adjacent, overlapping,
 * covering thousands of ranges across blocks), the map's whole contents, lookups and the
 * latest writer of a range (any, and exactly one the map holds) compared after each. */
#include "trace/verdict/imap.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* The reference: intervals in order in one array. */
struct ref {
    struct trace_ival *v;
    size_t n, cap;
};

static void ref_assign(struct ref *r, uint64_t lo, uint64_t hi, uint32_t op, uint64_t end)
{
    size_t a = 0;
    while (a < r->n && r->v[a].hi <= lo)
        a++;
    size_t b = a;
    struct trace_ival put[3];
    size_t np = 0;
    if (b < r->n && r->v[b].lo < hi && r->v[b].lo < lo)
        put[np++] = (struct trace_ival){r->v[b].lo, lo, r->v[b].op, r->v[b].end};
    struct trace_ival right = {0};
    bool has_right = false;
    for (; b < r->n && r->v[b].lo < hi; b++)
        if (r->v[b].hi > hi)
            right = (struct trace_ival){hi, r->v[b].hi, r->v[b].op, r->v[b].end}, has_right = true;
    put[np++] = (struct trace_ival){lo, hi, op, end};
    if (has_right)
        put[np++] = right;
    if (r->n + np > r->cap) {
        r->cap = 2 * (r->n + np);
        r->v = realloc(r->v, r->cap * sizeof(*r->v));
    }
    memmove(&r->v[a + np], &r->v[b], (r->n - b) * sizeof(*r->v));
    memcpy(&r->v[a], put, np * sizeof(*put));
    r->n = r->n - (b - a) + np;
}

static void check_same(struct trace_imap *m, const struct ref *r, uint64_t probe)
{
    cr_assert_eq(trace_imap_count(m), r->n);
    struct trace_imap_pos p = {0, 0}; /* the first interval, of no length at 0 too */
    struct trace_ival x;
    for (size_t i = 0; i < r->n; i++) {
        cr_assert(trace_imap_next(m, &p, &x), "interval %zu missing", i);
        cr_assert(
            x.lo == r->v[i].lo && x.hi == r->v[i].hi && x.op == r->v[i].op && x.end == r->v[i].end,
            "interval %zu: [%lu, %lu) op %u", i, (unsigned long)x.lo, (unsigned long)x.hi, x.op);
    }
    cr_assert_not(trace_imap_next(m, &p, &x));
    /* a lookup starts at the first interval ending above the probe */
    size_t a = 0;
    while (a < r->n && r->v[a].hi <= probe)
        a++;
    p = trace_imap_first(m, probe);
    bool got = trace_imap_next(m, &p, &x);
    cr_assert_eq(got, a < r->n);
    if (got)
        cr_assert(x.lo == r->v[a].lo && x.hi == r->v[a].hi && x.op == r->v[a].op);
    /* of those [probe, hi) overlaps, less one op's, the first written last */
    uint64_t hi = probe + probe % 7 * 3;
    uint32_t skip = a < r->n && probe % 2 ? r->v[a].op : UINT32_MAX;
    const struct trace_ival *want = NULL;
    for (size_t i = a; i < r->n && r->v[i].lo < hi; i++)
        if (r->v[i].op != skip && (!want || r->v[i].end > want->end))
            want = &r->v[i];
    got = trace_imap_latest(m, probe, hi, skip, &x);
    cr_assert_eq(got, want != NULL, "latest of [%lu, %lu)", (unsigned long)probe,
                 (unsigned long)hi);
    if (got)
        cr_assert(x.lo == want->lo && x.hi == want->hi && x.op == want->op && x.end == want->end,
                  "latest of [%lu, %lu): op %u, not %u", (unsigned long)probe, (unsigned long)hi,
                  x.op, want->op);
    /* the bytes of one range exactly (of no length too), asked twice (the second time the
     * map knows where it is), less its op or not */
    if (!r->n)
        return;
    const struct trace_ival *e = &r->v[probe % r->n];
    for (int k = 0; k < 3; k++) {
        skip = k == 2 ? e->op : UINT32_MAX;
        want = NULL;
        size_t i = 0;
        while (i < r->n && r->v[i].hi <= e->lo)
            i++;
        for (; i < r->n && r->v[i].lo < e->hi; i++)
            if (r->v[i].op != skip && (!want || r->v[i].end > want->end))
                want = &r->v[i];
        got = trace_imap_latest(m, e->lo, e->hi, skip, &x);
        cr_assert_eq(got, want != NULL, "latest of the range [%lu, %lu)", (unsigned long)e->lo,
                     (unsigned long)e->hi);
        if (got)
            cr_assert(x.lo == want->lo && x.hi == want->hi && x.op == want->op,
                      "latest of the range [%lu, %lu)", (unsigned long)e->lo, (unsigned long)e->hi);
    }
}

static void random_run_as(unsigned seed, uint64_t space, uint64_t maxlen, size_t steps, bool ahead)
{
    srand(seed);
    struct trace_imap m = {0};
    if (ahead)
        trace_imap_ahead(&m);
    struct ref r = {0};
    for (size_t s = 0; s < steps; s++) {
        uint64_t lo = (uint64_t)rand() % space, len;
        int kind = rand() % 16;
        if (kind == 0)
            len = 0; /* of no length */
        else if (kind == 1)
            len = (uint64_t)rand() % (space / 2 + 1); /* across many ranges and blocks */
        else if (kind == 2 && r.n) { /* exactly an existing range, or next to one */
            const struct trace_ival *e = &r.v[(size_t)rand() % r.n];
            lo = rand() % 2 ? e->lo : e->hi;
            len = e->hi - e->lo;
        } else
            len = 1 + (uint64_t)rand() % maxlen;
        uint64_t end = (uint64_t)rand() % 1000;
        trace_imap_assign(&m, lo, lo + len, (uint32_t)s, end);
        ref_assign(&r, lo, lo + len, (uint32_t)s, end);
        check_same(&m, &r, (uint64_t)rand() % (space + 10));
    }
    trace_imap_fini(&m);
    free(r.v);
}

static void random_run(unsigned seed, uint64_t space, uint64_t maxlen, size_t steps)
{
    random_run_as(seed, space, maxlen, steps, false);
}

Test(imap, small_random_writes_match_a_plain_array)
{
    random_run(1, 64, 8, 3000); /* few bytes: equal, adjacent and overlapping all the time */
}

Test(imap, thousands_of_ranges_over_many_blocks_match_a_plain_array)
{
    random_run(2, 200000, 40, 6000); /* blocks split, emptied and merged over */
    random_run(3, 5000, 3, 6000);
}

/* Short writes over a wide space: its blocks grow with the map, then split at their new size;
 * then writes across many blocks empty whole ones and cut others. */
static void grown_run(bool ahead)
{
    srand(4);
    struct trace_imap m = {0};
    if (ahead)
        trace_imap_ahead(&m);
    struct ref r = {0};
    for (uint32_t s = 0; s < 45000; s++) {
        uint64_t lo = (uint64_t)rand() % 4000000, len = 1 + (uint64_t)rand() % 30;
        trace_imap_assign(&m, lo, lo + len, s, s);
        ref_assign(&r, lo, lo + len, s, s);
        if (s % 997 == 0)
            check_same(&m, &r, (uint64_t)rand() % 4000010);
    }
    check_same(&m, &r, 0);
    cr_assert_gt(r.n, 40000);
    for (uint32_t s = 0; s < 4000; s++) {
        uint64_t lo = (uint64_t)rand() % 4000000;
        uint64_t len = s % 200 == 0 ? (uint64_t)rand() % 200000 : 1 + (uint64_t)rand() % 30;
        trace_imap_assign(&m, lo, lo + len, 45000 + s, s);
        ref_assign(&r, lo, lo + len, 45000 + s, s);
        if (s % 200 == 0)
            check_same(&m, &r, lo + (uint64_t)rand() % (len + 1));
    }
    check_same(&m, &r, 5);
    trace_imap_fini(&m);
    free(r.v);
}

Test(imap, a_map_grown_to_tens_of_thousands_of_ranges_matches_a_plain_array)
{
    grown_run(false);
}

/* Its pages faulted in on a second thread, a slab (of a megabyte and more) ahead of the one
 * it fills: the same map, and the rooms of blocks emptied or grown used again. */
Test(imap, a_map_faulted_in_ahead_matches_a_plain_array)
{
    grown_run(true);
    random_run_as(2, 200000, 40, 6000, true);
}

Test(imap, one_write_equal_writes_and_neighbours)
{
    struct trace_imap m = {0};
    struct trace_imap_pos p = trace_imap_first(&m, 0);
    struct trace_ival x;
    cr_assert_not(trace_imap_next(&m, &p, &x)); /* empty */
    trace_imap_assign(&m, 0x100, 0x200, 7, 50);
    p = trace_imap_first(&m, 0x1ff);
    cr_assert(trace_imap_next(&m, &p, &x));
    cr_assert(x.lo == 0x100 && x.hi == 0x200 && x.op == 7 && x.end == 50);
    p = trace_imap_first(&m, 0x200);
    cr_assert_not(trace_imap_next(&m, &p, &x)); /* ends are exclusive */
    trace_imap_assign(&m, 0x100, 0x200, 8, 60); /* the same bytes: replaced, not added */
    cr_assert_eq(trace_imap_count(&m), 1);
    trace_imap_assign(&m, 0x200, 0x280, 9, 70);  /* adjacent: both kept */
    trace_imap_assign(&m, 0x180, 0x240, 10, 80); /* overlapping both: cut into three + one */
    cr_assert_eq(trace_imap_count(&m), 3);
    p = trace_imap_first(&m, 0);
    uint64_t want[3][3] = {{0x100, 0x180, 8}, {0x180, 0x240, 10}, {0x240, 0x280, 9}};
    for (int i = 0; i < 3; i++) {
        cr_assert(trace_imap_next(&m, &p, &x));
        cr_assert(x.lo == want[i][0] && x.hi == want[i][1] && x.op == want[i][2]);
    }
    trace_imap_fini(&m);
    cr_assert_eq(trace_imap_count(&m), 0);
}

/* A read of exactly the bytes one op wrote is answered as they are now: rewritten, cut by a
 * write over part of them, or covered with their neighbours by one over several blocks. */
Test(imap, a_read_of_the_bytes_one_op_wrote_sees_the_writes_since)
{
    struct trace_imap m = {0};
    struct trace_ival x;
    for (uint32_t k = 0; k < 2000; k++) /* many blocks */
        trace_imap_assign(&m, 0x100 * k, 0x100 * k + 0x100, k, k);
    cr_assert(trace_imap_latest(&m, 0x500, 0x600, UINT32_MAX, &x) && x.op == 5 && x.end == 5);
    trace_imap_assign(&m, 0x500, 0x600, 3000, 1); /* rewritten */
    cr_assert(trace_imap_latest(&m, 0x500, 0x600, UINT32_MAX, &x) && x.op == 3000 && x.end == 1);
    cr_assert_not(trace_imap_latest(&m, 0x500, 0x600, 3000, &x), "its own op skipped");
    trace_imap_assign(&m, 0x580, 0x680, 3001, 0); /* cut: [0x500, 0x580) left of it */
    cr_assert(trace_imap_latest(&m, 0x500, 0x600, UINT32_MAX, &x));
    cr_assert(x.op == 3000 && x.lo == 0x500 && x.hi == 0x580, "op %u [%lx, %lx)", x.op,
              (unsigned long)x.lo, (unsigned long)x.hi);
    cr_assert(trace_imap_latest(&m, 0x600, 0x700, 3001, &x) && x.op == 6 && x.lo == 0x680);
    trace_imap_assign(&m, 0x1000, 0x60000, 4000, 0); /* covers thousands, over blocks */
    for (uint64_t k = 0x10; k < 0x600; k += 0x10) {
        cr_assert(trace_imap_latest(&m, 0x100 * k, 0x100 * k + 0x100, UINT32_MAX, &x));
        cr_assert(x.op == 4000 && x.lo == 0x1000, "range %lx: op %u", (unsigned long)k, x.op);
    }
    trace_imap_fini(&m);
}

/* Kernels write their buffers in order, several at once, each up to the next buffer's first
 * bytes (written already), then write them over again: each write falls between two ranges,
 * often between two blocks, and fills blocks from their ends. Now and then a write of no
 * length at a buffer's edge, or one across two buffers. */
Test(imap, buffers_written_in_order_side_by_side_match_a_plain_array)
{
    enum { BUFS = 5, SIZE = 64 * 3000, PIECE = 64 };
    struct trace_imap m = {0};
    struct ref r = {0};
    uint32_t op = 0;
    for (int b = 0; b < BUFS; b++) { /* each buffer's first piece first */
        trace_imap_assign(&m, (uint64_t)b * SIZE, (uint64_t)b * SIZE + PIECE, op, op);
        ref_assign(&r, (uint64_t)b * SIZE, (uint64_t)b * SIZE + PIECE, op, op);
        op++;
    }
    srand(5);
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t at = pass ? 0 : PIECE; at < SIZE; at += PIECE)
            for (int b = 0; b < BUFS; b++) {
                uint64_t lo = (uint64_t)b * SIZE + at, hi = lo + PIECE;
                if (rand() % 500 == 0)
                    hi = lo; /* of no length */
                else if (rand() % 2000 == 0)
                    hi = lo + SIZE; /* into the next buffer */
                trace_imap_assign(&m, lo, hi, op, op);
                ref_assign(&r, lo, hi, op, op);
                op++;
                if (op % 1499 == 0)
                    check_same(&m, &r, lo + (uint64_t)rand() % (2 * PIECE));
            }
    check_same(&m, &r, SIZE - 1);
    cr_assert_gt(r.n, 5000, "ranges over many blocks");
    trace_imap_fini(&m);
    free(r.v);
}

/* Two addresses of one slot (the slot keeps where a search ended and the interval written,
 * for one address at a time): each takes it from the other, by a write or by a search alone,
 * and no answer comes from the other's interval, or from an interval cut meanwhile. */
Test(imap, two_addresses_of_one_slot_take_it_in_turn)
{
    uint64_t a = 0x1000, b = a + 64;
    struct trace_imap m = {0};
    struct trace_ival x;
    trace_imap_assign(&m, a, a + 64, 1, 10);
    while (trace_imap_slot_(b, m.bits) != trace_imap_slot_(a, m.bits))
        b += 64;
    trace_imap_assign(&m, b, b + 64, 2, 20); /* the slot b's */
    for (int k = 0; k < 2; k++) {            /* (the first search of each takes the slot) */
        cr_assert(trace_imap_latest(&m, a, a + 64, UINT32_MAX, &x) && x.op == 1 && x.end == 10);
        cr_assert(trace_imap_latest(&m, b, b + 64, UINT32_MAX, &x) && x.op == 2 && x.end == 20);
    }
    /* a search of b alone (the range read is not one written) */
    cr_assert(trace_imap_latest(&m, b, b + 4, UINT32_MAX, &x) && x.op == 2);
    /* a's interval cut while the slot is b's, then the slot a's again by a search: the cut
     * interval is not answered whole */
    trace_imap_assign(&m, a + 16, a + 32, 3, 30);
    cr_assert(trace_imap_latest(&m, a + 8, a + 12, UINT32_MAX, &x) && x.op == 1);
    for (int k = 0; k < 2; k++) {
        cr_assert(trace_imap_latest(&m, a, a + 64, UINT32_MAX, &x) && x.op == 3 && x.end == 30);
        cr_assert(trace_imap_latest(&m, a, a + 64, 3, &x) && x.op == 1 && x.lo == a &&
                  x.hi == a + 16);
    }
    /* both rewritten whole, each then answered whole, less its own op or not */
    trace_imap_assign(&m, a, a + 64, 4, 40);
    trace_imap_assign(&m, b, b + 64, 5, 50);
    for (int k = 0; k < 2; k++) {
        cr_assert(trace_imap_latest(&m, a, a + 64, UINT32_MAX, &x) && x.op == 4 && x.end == 40);
        cr_assert(trace_imap_latest(&m, b, b + 64, UINT32_MAX, &x) && x.op == 5 && x.end == 50);
        cr_assert_not(trace_imap_latest(&m, a, a + 64, 4, &x));
    }
    cr_assert_eq(trace_imap_slot_(b, m.bits), trace_imap_slot_(a, m.bits), "still one slot");
    trace_imap_fini(&m);
}

/* The slots grow with the map (each time it passes half of them, tables twice the size, made
 * again empty): every range, read back whole as it was written, at every size on the way,
 * before and after each growth; and a map of a hundred ranges keeps a table of a few hundred
 * slots, not thousands. */
Test(imap, ranges_read_back_whole_while_the_slots_grow)
{
    struct trace_imap m = {0};
    struct trace_ival x;
    unsigned bits = 0;
    enum { N = 3000 };
    for (uint32_t k = 0; k < N; k++) {
        uint64_t lo = 0x10000 + 256 * (uint64_t)((k * 7919u) % N); /* (not in order) */
        trace_imap_assign(&m, lo, lo + 128, k, 1000 + k);
        cr_assert_geq(m.bits, bits, "the slots never shrink");
        if (k == 99)
            cr_assert_leq(1u << m.bits, 256, "%u slots for 100 ranges", 1u << m.bits);
        bool grew = m.bits != bits;
        bits = m.bits;
        /* each range so far, whole (the slots answer, or the blocks once they were made
         * anew), and a part of it (the blocks) */
        for (uint32_t j = 0; j <= k; j += grew || k < 64 ? 1 : 97) {
            uint64_t l = 0x10000 + 256 * (uint64_t)((j * 7919u) % N);
            cr_assert(trace_imap_latest(&m, l, l + 128, UINT32_MAX, &x), "range %u at %u", j, k);
            cr_assert(x.op == j && x.end == 1000 + j && x.lo == l && x.hi == l + 128);
            cr_assert(trace_imap_latest(&m, l + 64, l + 72, UINT32_MAX, &x) && x.op == j);
            cr_assert_not(trace_imap_latest(&m, l, l + 128, j, &x), "less its own op");
        }
    }
    cr_assert_eq(trace_imap_count(&m), N);
    trace_imap_fini(&m);
}
