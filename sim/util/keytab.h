/*
 * A table of distinct 64-bit keys, each given a small id in the order keys were first added
 * (0, 1, 2...): open addressing with linear probing, at most half full. The analyses use it
 * to map a key (an op group, a launch, a region and a track...) to the index of its entry
 * in an array of their own. UINT64_MAX cannot be a key.
 */
#ifndef SIM_KEYTAB_H
#define SIM_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

#define SIM_KEYTAB_NONE UINT32_MAX /* sim_keytab_find: not in the table */

struct sim_keytab {
    uint64_t *key; /* owned; UINT64_MAX: empty */
    uint32_t *id;  /* owned */
    size_t cap, n; /* cap a power of two (0 when empty), n keys */
};

/* The id of key in t, added as id t->n when new. A zeroed table is an empty one. */
uint32_t sim_keytab_id(struct sim_keytab *t, uint64_t key);

/* The id of key in t, or SIM_KEYTAB_NONE when it is not there. */
uint32_t sim_keytab_find(const struct sim_keytab *t, uint64_t key);

/* Free the table's arrays and leave it empty. */
void sim_keytab_free(struct sim_keytab *t);

#endif
