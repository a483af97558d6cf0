/*
 * Stable radix sorts by a 64-bit key (see radix.h). One read of the records finds the keys'
 * minimum and maximum, whether they are in order, and the histogram of every digit; then
 * one scatter per digit that the keys do not all share, between the array and a scratch
 * copy.
 */
#include "trace/model/radix.h"

#include "sim/util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Below this many records, an insertion sort; below WIDE_MIN, digits of 8 bits at most,
 * else of MAX_BITS. The fewest passes win: 6.6 M breakpoints of a 27-bit range sort in
 * 0.32 s CPU in two passes of 14 bits, 0.43 s in three of 9. */
enum { SMALL = 32, WIDE_MIN = 1 << 16, MAX_BITS = 16 };

/* Nearly in order: at most one descent in NEAR_DESCENTS records; then buckets of about
 * NEAR_BUCKET records, each sorted by insertion unless it takes NEAR_MOVES moves a record. */
enum { NEAR_DESCENTS = 4, NEAR_BUCKET = 256, NEAR_MOVES = 16 };

static inline uint64_t key_at(const char *rec, size_t key_offset)
{
    uint64_t k;
    memcpy(&k, rec + key_offset, sizeof(k));
    return k;
}

/* Copy one record of size bytes (a constant where it is inlined: a few moves). */
static inline __attribute__((always_inline)) void copy_rec(char *dst, const char *src, size_t size)
{
    memcpy(dst, src, size);
}

static void insertion(char *v, size_t n, size_t size, size_t koff)
{
    char tmp[256];
    char *held = size <= sizeof(tmp) ? tmp : sim_xmalloc(size);
    for (size_t i = 1; i < n; i++) {
        uint64_t k = key_at(v + i * size, koff);
        size_t j = i;
        if (key_at(v + (j - 1) * size, koff) <= k)
            continue;
        memcpy(held, v + i * size, size);
        while (j > 0 && key_at(v + (j - 1) * size, koff) > k) {
            memcpy(v + j * size, v + (j - 1) * size, size);
            j--;
        }
        memcpy(v + j * size, held, size);
    }
    if (held != tmp)
        free(held);
}

/* One counting pass: src's records to dst by digit (key - lo) >> shift & mask, at the
 * offsets in pos (advanced). size is a constant where this is inlined. */
static inline __attribute__((always_inline)) void scatter(char *dst, const char *src, size_t n,
                                                          size_t size, size_t koff, uint64_t lo,
                                                          unsigned shift, uint64_t mask,
                                                          size_t *pos)
{
    for (size_t i = 0; i < n; i++) {
        const char *r = src + i * size;
        size_t d = (size_t)(((key_at(r, koff) - lo) >> shift) & mask);
        copy_rec(dst + pos[d]++ * size, r, size);
    }
}

static void scatter_any(char *dst, const char *src, size_t n, size_t size, size_t koff, uint64_t lo,
                        unsigned shift, uint64_t mask, size_t *pos)
{
    switch (size) {
    case 8: scatter(dst, src, n, 8, koff, lo, shift, mask, pos); break;
    case 16: scatter(dst, src, n, 16, koff, lo, shift, mask, pos); break;
    case 24: scatter(dst, src, n, 24, koff, lo, shift, mask, pos); break;
    case 32: scatter(dst, src, n, 32, koff, lo, shift, mask, pos); break;
    default: scatter(dst, src, n, size, koff, lo, shift, mask, pos); break;
    }
}

/* Bits of x: the position of its highest set bit, plus one (0 for 0). */
static unsigned bit_length(uint64_t x)
{
    unsigned b = 0;
    for (; x; x >>= 1)
        b++;
    return b;
}

/* The LSD sort of v (keys in [lo, lo + 2^range_bits)). */
static void lsd(char *v, size_t n, size_t size, size_t koff, uint64_t lo, unsigned range_bits)
{
    /* the fewest digits of at most MAX_BITS (8 for fewer records) that cover the range,
     * as wide as each other */
    unsigned most = n < WIDE_MIN ? 8 : MAX_BITS;
    unsigned ndig = (range_bits + most - 1) / most;
    unsigned bits = (range_bits + ndig - 1) / ndig;
    size_t radix = (size_t)1 << bits;
    uint64_t mask = radix - 1;
    size_t *count = sim_xcalloc(ndig * radix, sizeof(*count));
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(v + i * size, koff) - lo;
        for (unsigned d = 0; d < ndig; d++)
            count[d * radix + (size_t)((k >> (d * bits)) & mask)]++;
    }
    char *tmp = sim_xmalloc(n * size), *src = v, *dst = tmp;
    for (unsigned d = 0; d < ndig; d++) {
        size_t *c = count + d * radix, at = 0;
        bool shared = false;
        for (size_t x = 0; x < radix; x++) {
            size_t k = c[x];
            shared |= k == n;
            c[x] = at;
            at += k;
        }
        if (shared)
            continue; /* every key has this digit: the pass would change nothing */
        scatter_any(dst, src, n, size, koff, lo, d * bits, mask, c);
        char *t = src;
        src = dst, dst = t;
    }
    if (src != v)
        memcpy(v, src, n * size);
    free(tmp);
    free(count);
}

/* Insertion sort of v, giving up (false) past budget moves: v then holds the same records,
 * equal keys still in their first order. */
static inline __attribute__((always_inline)) bool insert_within(char *v, size_t n, size_t size,
                                                                size_t koff, size_t budget)
{
    char held[256];
    for (size_t i = 1; i < n; i++) {
        uint64_t k = key_at(v + i * size, koff);
        if (key_at(v + (i - 1) * size, koff) <= k)
            continue;
        size_t j = i;
        copy_rec(held, v + i * size, size);
        while (j > 0 && key_at(v + (j - 1) * size, koff) > k) {
            copy_rec(v + j * size, v + (j - 1) * size, size);
            j--;
        }
        copy_rec(v + j * size, held, size);
        if ((budget -= budget < i - j ? budget : i - j) == 0)
            return false;
    }
    return true;
}

static bool insertion_within(char *v, size_t n, size_t size, size_t koff, size_t budget)
{
    switch (size) {
    case 8: return insert_within(v, n, 8, koff, budget);
    case 16: return insert_within(v, n, 16, koff, budget);
    case 24: return insert_within(v, n, 24, koff, budget);
    case 32: return insert_within(v, n, 32, koff, budget);
    default: return size <= 256 && insert_within(v, n, size, koff, budget);
    }
}

/*
 * Nearly in order (few descents, as the ops of a trace in the order they were written):
 * one stable counting pass on the keys' top bits into buckets of some hundred records,
 * then each bucket, back in v and in the cache, by insertion; a bucket that takes too many
 * moves by the LSD sort instead.
 */
static void nearly(char *v, size_t n, size_t size, size_t koff, uint64_t lo, unsigned range_bits)
{
    unsigned bits = bit_length(n / NEAR_BUCKET);
    bits = bits > range_bits ? range_bits : bits;
    unsigned shift = range_bits - bits;
    size_t nb = (size_t)1 << bits;
    size_t *pos = sim_xcalloc(nb + 1, sizeof(*pos));
    for (size_t i = 0; i < n; i++)
        pos[(size_t)((key_at(v + i * size, koff) - lo) >> shift) + 1]++;
    for (size_t b = 0; b < nb; b++)
        pos[b + 1] += pos[b];
    size_t *at = sim_xreallocarray(NULL, nb, sizeof(*at));
    memcpy(at, pos, nb * sizeof(*at));
    char *tmp = sim_xmalloc(n * size);
    scatter_any(tmp, v, n, size, koff, lo, shift, UINT64_MAX, at);
    for (size_t b = 0; b < nb; b++) {
        size_t a = pos[b], c = pos[b + 1] - a;
        memcpy(v + a * size, tmp + a * size, c * size);
        if (c > 1 && !insertion_within(v + a * size, c, size, koff, NEAR_MOVES * c))
            lsd(v + a * size, c, size, koff, lo, shift ? shift : 1);
    }
    free(tmp);
    free(at);
    free(pos);
}

void trace_radix_sort(void *base, size_t n, size_t size, size_t key_offset)
{
    char *v = base;
    if (n < 2)
        return;
    if (n < SMALL) {
        insertion(v, n, size, key_offset);
        return;
    }
    uint64_t lo = UINT64_MAX, hi = 0, prev = 0;
    size_t descents = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(v + i * size, key_offset);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        descents += k < prev;
        prev = k;
    }
    if (!descents)
        return;
    unsigned range_bits = bit_length(hi - lo);
    if (n >= WIDE_MIN && descents <= n / NEAR_DESCENTS) {
        /* most records a few places from theirs: in place, when that is so */
        if (!insertion_within(v, n, size, key_offset, NEAR_MOVES * n))
            nearly(v, n, size, key_offset, lo, range_bits);
    } else
        lsd(v, n, size, key_offset, lo, range_bits);
}

void trace_radix_sort_u64(uint64_t *v, size_t n)
{
    trace_radix_sort(v, n, sizeof(*v), 0);
}
