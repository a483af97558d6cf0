/*
 * Stable sorts of many records by a 64-bit key, in linear time: what the analyses of a
 * trace of millions of events use where a comparison sort (qsort chasing its comparison
 * function, and each key through memory) took seconds. An LSD radix sort, up to 16 bits a
 * digit (8 below 65536 records), on the keys' distance to their minimum: only as many
 * passes as the keys' range needs, a digit that every key shares skipped, an array already
 * in order left as it is; records nearly in order (a trace's ops as they were written) by
 * insertion, in place; a few records by insertion. Records of 8, 16, 24 and 32 bytes are
 * moved word by word; others by memcpy.
 */
#ifndef TRACE_RADIX_H
#define TRACE_RADIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Sort the n records of size bytes at base by the uint64_t key at byte offset key_offset
 * of each (any alignment), stably: records of equal keys keep their order. Allocates
 * scratch of n records (aborts when out of memory, as sim_xmalloc). size >= 8 and
 * key_offset + 8 <= size.
 */
void trace_radix_sort(void *base, size_t n, size_t size, size_t key_offset);

/* Sort the n keys at v in increasing order (a record that is its key alone). */
void trace_radix_sort_u64(uint64_t *v, size_t n);

#endif
