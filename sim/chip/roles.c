/*
 * Roles of memory regions (see roles.h): tags sorted by their start, looked up by binary
 * search; the strings (a few spaces and roles) are interned in a small table of their own.
 */
#include "sim/chip/roles.h"

#include "sim/util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tag {
    const char *space, *role; /* interned in the table */
    uint64_t start, end;
    int64_t owner;
    uint64_t seq; /* order of tagging: the latest tag wins */
};

/* Tags sorted by start, with the largest end of each prefix beside them: a look-up walks
 * back from the last tag starting before the range only while some earlier tag can still
 * reach it, so a DMA op pays O(log n) whatever the number of shards tagged. */
struct sim_roles {
    struct tag *v;    /* owned, sorted by start */
    uint64_t *maxend; /* owned: maxend[i] = the largest end of v[0..i] */
    size_t n, cap;
    uint64_t seq;
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
    free(r->maxend);
    free(r);
}

static const char *lookup(const struct sim_roles *r, const char *s)
{
    for (size_t i = 0; i < r->nstrs; i++)
        if (strcmp(r->strs[i], s) == 0)
            return r->strs[i];
    return NULL;
}

static const char *intern(struct sim_roles *r, const char *s)
{
    const char *k = lookup(r, s);
    if (k)
        return k;
    r->strs = sim_xreallocarray(r->strs, r->nstrs + 1, sizeof(*r->strs));
    return r->strs[r->nstrs++] = sim_xstrdup(s);
}

static void prefix_from(struct sim_roles *r, size_t i)
{
    for (; i < r->n; i++) {
        uint64_t e = r->v[i].end;
        r->maxend[i] = i && r->maxend[i - 1] > e ? r->maxend[i - 1] : e;
    }
}

/* The number of tags starting before x (or at x too, when at is true). */
static size_t starting_before(const struct sim_roles *r, uint64_t x, bool at)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid].start < x || (at && r->v[mid].start == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void sim_roles_tag(struct sim_roles *r, const char *space, uint64_t addr, uint64_t nbytes,
                   const char *role, int64_t owner)
{
    if (!nbytes || !role || !space)
        return;
    uint64_t e0 = addr + nbytes < addr ? UINT64_MAX : addr + nbytes;
    if (owner < 0) /* kept until replaced: the same range of the same space is retagged */
        for (size_t i = starting_before(r, addr, false); i < r->n && r->v[i].start == addr; i++)
            if (r->v[i].end == e0 && r->v[i].owner < 0 && strcmp(r->v[i].space, space) == 0) {
                r->v[i].role = intern(r, role);
                r->v[i].seq = r->seq++;
                return;
            }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->v = sim_xreallocarray(r->v, r->cap, sizeof(*r->v));
        r->maxend = sim_xreallocarray(r->maxend, r->cap, sizeof(*r->maxend));
    }
    uint64_t end = addr + nbytes < addr ? UINT64_MAX : addr + nbytes;
    size_t at = starting_before(r, addr, true); /* after the tags starting at addr too */
    memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof(*r->v));
    r->v[at] = (struct tag){intern(r, space), intern(r, role), addr, end, owner, r->seq++};
    r->n++;
    prefix_from(r, at);
}

void sim_roles_drop(struct sim_roles *r, int64_t owner)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].owner != owner)
            r->v[k++] = r->v[i];
    r->n = k;
    prefix_from(r, 0);
}

const char *sim_roles_find(const struct sim_roles *r, const char *space, uint64_t addr,
                           uint64_t nbytes)
{
    if (!r || !space || !r->n)
        return NULL;
    const char *sp = lookup(r, space);
    if (!sp)
        return NULL;
    uint64_t span = nbytes ? nbytes : 1;
    uint64_t end = addr + span < addr ? UINT64_MAX : addr + span;
    const struct tag *best = NULL;
    for (size_t i = starting_before(r, end, false); i-- > 0 && r->maxend[i] > addr;) {
        const struct tag *t = &r->v[i];
        if (t->end > addr && t->space == sp && (!best || t->seq > best->seq))
            best = t;
    }
    return best ? best->role : NULL;
}

size_t sim_roles_count(const struct sim_roles *r)
{
    return r->n;
}
