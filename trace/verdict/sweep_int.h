/*
 * What the critical path's two sweeps share (critpath.c over a whole set, critinc.c over a
 * growing one; internal to trace/verdict/): a small open-addressing map from a tile's string
 * id (trace_event.tile) to a 32-bit value (the op of that tile that ended last, or the tile's
 * index among those met), and the rule choosing an op's predecessor among its candidates.
 * The map's key 0 is the empty slot (TRACE_NO_STR is never stored); a new key's value is
 * TRACE_TILEMAP_NONE.
 */
#ifndef TRACE_VERDICT_SWEEP_INT_H
#define TRACE_VERDICT_SWEEP_INT_H

#include "sim/util/xalloc.h"
#include "trace/verdict/critpath.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define TRACE_TILEMAP_NONE UINT32_MAX

struct tilemap {
    uint32_t *key, *val; /* owned (free both) */
    size_t cap, n;
};

/* The slot of key, made (valued TRACE_TILEMAP_NONE) when new; the map may grow, which
 * moves the slots. */
static inline uint32_t *tile_slot(struct tilemap *t, uint32_t key)
{
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        uint32_t *k = sim_xcalloc(cap, sizeof(*k)), *v = sim_xcalloc(cap, sizeof(*v));
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->key[i])
                continue;
            size_t h = (t->key[i] * 2654435761u) & (cap - 1);
            while (k[h])
                h = (h + 1) & (cap - 1);
            k[h] = t->key[i], v[h] = t->val[i];
        }
        free(t->key), free(t->val);
        t->key = k, t->val = v, t->cap = cap;
    }
    size_t h = (key * 2654435761u) & (t->cap - 1);
    while (t->key[h] && t->key[h] != key)
        h = (h + 1) & (t->cap - 1);
    if (!t->key[h]) {
        t->key[h] = key;
        t->val[h] = TRACE_TILEMAP_NONE;
        t->n++;
    }
    return &t->val[h];
}

/* The slot of a key met before (none is made: pointers to the slots stay valid). */
static inline uint32_t *tile_find(struct tilemap *t, uint32_t key)
{
    size_t h = (key * 2654435761u) & (t->cap - 1);
    while (t->key[h] != key)
        h = (h + 1) & (t->cap - 1);
    return &t->val[h];
}

/* Whether a candidate ending at cand_end, for reason why, is a better predecessor than best
 * (TRACE_TILEMAP_NONE: none yet; ending at best_end, for best_why): the one that ended last;
 * on a tie, in the order explicit, RAW, tile, engine. */
static inline bool better(uint64_t cand_end, enum trace_dep why, uint32_t best, uint64_t best_end,
                          enum trace_dep best_why)
{
    if (best == TRACE_TILEMAP_NONE)
        return true;
    if (cand_end != best_end)
        return cand_end > best_end;
    return why < best_why;
}

#endif
