/*
 * Roles of memory regions (see roles.h): a list of tags, newest last. A launch tags a few
 * shards per argument with a role, so the list stays short and a look-up walks it from the
 * newest; the strings are interned in a small table of their own.
 */
#include "sim/chip/roles.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct tag {
    const char *space, *role; /* interned in the table */
    uint64_t start, end;
    int64_t owner;
};

struct sim_roles {
    struct tag *v; /* owned */
    size_t n, cap;
    char **strs; /* owned: interned strings */
    size_t nstrs;
};

struct sim_roles *sim_roles_new(void)
{
    return sim_xcalloc(1, sizeof(struct sim_roles));
}

void sim_roles_free(struct sim_roles *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nstrs; i++)
        free(r->strs[i]);
    free(r->strs);
    free(r->v);
    free(r);
}

static const char *intern(struct sim_roles *r, const char *s)
{
    for (size_t i = 0; i < r->nstrs; i++)
        if (strcmp(r->strs[i], s) == 0)
            return r->strs[i];
    r->strs = sim_xreallocarray(r->strs, r->nstrs + 1, sizeof(*r->strs));
    return r->strs[r->nstrs++] = sim_xstrdup(s);
}

void sim_roles_tag(struct sim_roles *r, const char *space, uint64_t addr, uint64_t nbytes,
                   const char *role, int64_t owner)
{
    if (!nbytes || !role || !space)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = sim_xreallocarray(r->v, r->cap, sizeof(*r->v));
    }
    uint64_t end = addr + nbytes < addr ? UINT64_MAX : addr + nbytes;
    r->v[r->n++] = (struct tag){intern(r, space), intern(r, role), addr, end, owner};
}

void sim_roles_drop(struct sim_roles *r, int64_t owner)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].owner != owner)
            r->v[k++] = r->v[i];
    r->n = k;
}

const char *sim_roles_find(const struct sim_roles *r, const char *space, uint64_t addr,
                           uint64_t nbytes)
{
    if (!r || !space)
        return NULL;
    uint64_t span = nbytes ? nbytes : 1;
    uint64_t end = addr + span < addr ? UINT64_MAX : addr + span;
    for (size_t i = r->n; i-- > 0;) {
        const struct tag *t = &r->v[i];
        if (t->start < end && addr < t->end && strcmp(t->space, space) == 0)
            return t->role;
    }
    return NULL;
}

size_t sim_roles_count(const struct sim_roles *r)
{
    return r->n;
}
