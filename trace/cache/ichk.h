/*
 * The checks of a binary index (trace/cache/index.h), apart from its reading and writing:
 * the checksum of its payload (fast, not cryptographic: it finds damage, not malice), the
 * payload's checked as it is read into buffers on threads of their own, and the content
 * checks behind the checksum (every event's fields in range, every column and index inside
 * its arrays), which read the mapped arrays through the file rather than mapping their pages
 * in one by one to look at them once.
 */
#ifndef TRACE_CACHE_ICHK_H
#define TRACE_CACHE_ICHK_H

#include "trace/model/mapped.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The payload's checksum: its TRACE_ICHK_BLOCK-byte blocks chained in two chains, the even
 * blocks' and the odd ones' (so that two threads check an index at once), each block folded
 * into its chain by trace_ichk_wide, then the two chains folded (trace_ichk_fold).
 * TRACE_ICHK_SEED starts both.
 */
#define TRACE_ICHK_BLOCK ((size_t)1 << 20)
#define TRACE_ICHK_SEED  0x6e707573636f7065ull

/* The checksum of n bytes at p, from h (a short block: the header, the trace's key). */
uint64_t trace_ichk_block(const unsigned char *p, size_t n, uint64_t h);
/* A payload block's checksum, from h (its chain so far). */
uint64_t trace_ichk_wide(const unsigned char *p, size_t n, uint64_t h);
/* The two chains folded: the payload's checksum. */
uint64_t trace_ichk_fold(const uint64_t chain[2]);

/* The checksum of the n payload bytes at offset skip of the file fd into *out, the odd
 * blocks' chain on a second thread; false when they cannot be read. */
bool trace_ichk_payload(int fd, size_t skip, size_t n, uint64_t *out);

/* A chain of a payload's checksum, read from the file (private to ichk.c). */
struct trace_ichk_chain {
    int fd;
    size_t skip, n, k;
    uint64_t h;
    bool bad; /* a block could not be read whole */
    pthread_t th;
};

/* The payload's checksum computed beside the caller: trace_ichk_start, then trace_ichk_end
 * (always, once started: it joins the thread). */
struct trace_ichk_beside {
    struct trace_ichk_chain j[2];
    pthread_t th;
    bool started;
};

void trace_ichk_start(struct trace_ichk_beside *c, int fd, size_t skip, size_t n);
/* Whether the payload checked: read whole, its checksum equal to want. */
bool trace_ichk_end(struct trace_ichk_beside *c, uint64_t want);

/* The content checks' reads of the mapped file map (from its first byte) through fd; buf
 * (owned, grown as needed) freed by the caller. fd < 0: the mapping itself is read. */
struct trace_ichk_rd {
    int fd;
    const void *map;
    unsigned char *buf;
    size_t cap;
};

/* The events as stored: every field that indexes something in range for the model's
 * strings (ns), tracks (nt) and sites (nsite) and the trace's bytes; their first start and
 * last end, and per track how many (count, nt entries) and of which op kinds (kinds, nt
 * entries, trace_kind_bit). */
bool trace_ichk_events(struct trace_ichk_rd *rd, const struct trace_event *ev, uint64_t ne,
                       uint32_t nt, uint32_t ns, uint32_t nsite, uint64_t trace_size,
                       uint64_t *tmin, uint64_t *tmax, uint64_t *count, uint8_t *kinds);

/* The other lent arrays: every column inside the columns' bytes, every event index below
 * the count, the dependencies sorted, each track's index as long as its events are many
 * (count, from trace_ichk_events). rd reads the offsets, rc the columns. */
bool trace_ichk_lent(struct trace_ichk_rd *rd, struct trace_ichk_rd *rc,
                     const struct trace_model_lent *a, uint32_t nt, const uint64_t *count);

#endif
