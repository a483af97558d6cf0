/* A table of distinct 64-bit keys with ids in order of addition (see keytab.h). */
#include "sim/util/keytab.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

/* Double t's slots (256 at first) and place its keys again. */
static void keytab_grow(struct sim_keytab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    uint64_t *key = sim_xreallocarray(NULL, cap, sizeof(*key));
    uint32_t *id = sim_xreallocarray(NULL, cap, sizeof(*id));
    for (size_t i = 0; i < cap; i++)
        key[i] = UINT64_MAX;
    for (size_t i = 0; i < t->cap; i++)
        if (t->key[i] != UINT64_MAX) {
            size_t h = slot_of(t->key[i], cap);
            while (key[h] != UINT64_MAX)
                h = (h + 1) & (cap - 1);
            key[h] = t->key[i], id[h] = t->id[i];
        }
    free(t->key), free(t->id);
    t->key = key, t->id = id, t->cap = cap;
}

uint32_t sim_keytab_id(struct sim_keytab *t, uint64_t key)
{
    if (2 * (t->n + 1) > t->cap)
        keytab_grow(t);
    size_t h = slot_of(key, t->cap);
    while (t->key[h] != UINT64_MAX && t->key[h] != key)
        h = (h + 1) & (t->cap - 1);
    if (t->key[h] == UINT64_MAX)
        t->key[h] = key, t->id[h] = (uint32_t)t->n++;
    return t->id[h];
}

uint32_t sim_keytab_find(const struct sim_keytab *t, uint64_t key)
{
    if (!t->cap)
        return SIM_KEYTAB_NONE;
    for (size_t h = slot_of(key, t->cap);; h = (h + 1) & (t->cap - 1)) {
        if (t->key[h] == key)
            return t->id[h];
        if (t->key[h] == UINT64_MAX)
            return SIM_KEYTAB_NONE;
    }
}

void sim_keytab_free(struct sim_keytab *t)
{
    free(t->key), free(t->id);
    *t = (struct sim_keytab){0};
}
