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

/* Below this many records, an insertion sort; below WIDE_MIN, 8-bit digits. */
enum { SMALL = 32, WIDE_MIN = 1 << 16 };

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
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(v + i * size, key_offset);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
        sorted &= k >= prev;
        prev = k;
    }
    if (sorted)
        return;
    unsigned bits = n < WIDE_MIN ? 8 : 16, ndig = 0;
    for (uint64_t r = hi - lo; r; r >>= bits)
        ndig++;
    size_t radix = (size_t)1 << bits;
    uint64_t mask = radix - 1;
    size_t *count = sim_xcalloc(ndig * radix, sizeof(*count));
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(v + i * size, key_offset) - lo;
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
        scatter_any(dst, src, n, size, key_offset, lo, d * bits, mask, c);
        char *t = src;
        src = dst, dst = t;
    }
    if (src != v)
        memcpy(v, src, n * size);
    free(tmp);
    free(count);
}

void trace_radix_sort_u64(uint64_t *v, size_t n)
{
    trace_radix_sort(v, n, sizeof(*v), 0);
}
