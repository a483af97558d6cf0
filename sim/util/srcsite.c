/*
 * The process's table of call sites (srcsite.h): an array indexed by id and an open
 * addressing hash on (file, func, line) to find a site already interned.
 */
#include "sim/util/srcsite.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static struct sim_srcsite *sites; /* [0] unused: id 0 is "no site" */
static uint32_t n_sites = 1, cap_sites;
static uint32_t *slots; /* ids, 0 empty; a power of two long */
static size_t n_slots;

static uint64_t site_hash(const char *file, const char *func, int line)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)line;
    for (const char *s = file; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *s = func; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void rehash(size_t n)
{
    free(slots);
    slots = sim_xcalloc(n, sizeof(*slots));
    n_slots = n;
    for (uint32_t id = 1; id < n_sites; id++) {
        size_t k = site_hash(sites[id].file, sites[id].func, sites[id].line) & (n - 1);
        while (slots[k])
            k = (k + 1) & (n - 1);
        slots[k] = id;
    }
}

uint32_t sim_srcsite_intern(const char *file, const char *func, int line)
{
    if (!file)
        file = "";
    if (!func)
        func = "";
    if (2 * (size_t)n_sites >= n_slots)
        rehash(n_slots ? 2 * n_slots : 64);
    size_t k = site_hash(file, func, line) & (n_slots - 1);
    for (; slots[k]; k = (k + 1) & (n_slots - 1)) {
        const struct sim_srcsite *s = &sites[slots[k]];
        if (s->line == line && strcmp(s->file, file) == 0 && strcmp(s->func, func) == 0)
            return slots[k];
    }
    if (n_sites == cap_sites || !sites) {
        cap_sites = cap_sites ? 2 * cap_sites : 64;
        sites = sim_xreallocarray(sites, cap_sites, sizeof(*sites));
    }
    uint32_t id = n_sites++;
    sites[id] = (struct sim_srcsite){sim_xstrdup(file), sim_xstrdup(func), line};
    slots[k] = id;
    return id;
}

const struct sim_srcsite *sim_srcsite_get(uint32_t id)
{
    return id && id < n_sites ? &sites[id] : NULL;
}

const char *sim_srcsite_basename(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "";
}
