/*
 * Dependencies between the ops of a chunk (see exec_int.h): conflicts of their read and
 * write ranges (RAW, WAR, WAW), found from the distinct ranges sorted by address, with
 * about one edge per access (so a chunk costs n log n, not n^2, also when every op updates
 * one accumulator), and the check that they and the dependency_ids leave no cycle.
 */
#include "sim/phase2/exec_int.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

bool sim_exec_overlaps(const struct range *a, const struct range *b)
{
    return a->sid == b->sid && a->lo < b->hi && b->lo < a->hi;
}

/* One access of a chunk's op: a range it reads or writes. */
struct item {
    uint32_t pos;  /* the op's position in the chunk */
    uint32_t next; /* the next access of the same range, in chunk order, or UINT32_MAX */
    bool write;
};

/* A class: every access to one exact range, in chunk order (a list through item.next). */
struct cls {
    uint32_t sid;
    uint64_t lo, hi;
    uint32_t first, last;
};

/* The conflict finder's scratch, kept in the run between chunks (R->items). */
struct finder {
    struct item *it;
    struct cls *cl;
    uint32_t *slot;    /* hash of (sid, lo, hi) -> class, UINT32_MAX empty; cap_slot entries */
    uint32_t *order;   /* classes by address */
    uint32_t *tmp;     /* merge scratch, then the classes still open */
    uint32_t *ra, *rb; /* reads since the last write, of each side */
    size_t cap, cap_slot;
};

/* A hash of a range whose low bits are all mixed (addresses are aligned: their low bits
 * are zeros, which a plain multiply keeps). */
static uint64_t range_hash(uint32_t sid, uint64_t lo, uint64_t hi)
{
    uint64_t h = lo ^ (hi * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)sid << 56);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static bool cls_before(const struct cls *x, const struct cls *y)
{
    if (x->sid != y->sid)
        return x->sid < y->sid;
    if (x->lo != y->lo)
        return x->lo < y->lo;
    return x->hi < y->hi;
}

/* The classes v[0..n) ordered by address: a merge sort with tmp as its buffer (the C
 * library's qsort would allocate one per call). */
static void sort_classes(const struct cls *cl, uint32_t *v, uint32_t *tmp, size_t n)
{
    uint32_t *src = v, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = cls_before(&cl[src[b]], &cl[src[a]]) ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof(*v));
}

/* The later of two positions depends on the earlier. */
static void add_conflict(struct run *R, uint32_t a, uint32_t b)
{
    if (a < b)
        sim_exec_add_pred(R, b, a);
    else if (b < a)
        sim_exec_add_pred(R, a, b);
}

/* What an access sequence leaves for the accesses after it: its last write, and the
 * reads since. */
struct state {
    int64_t last_write;
    uint32_t *reads; /* scratch */
    size_t n_reads;
};

/* Access it of one class or of two overlapping ones, against what the other side (o) left;
 * then what it leaves on its own side (s). Each access depends on the other side's last
 * write, a write also on its reads since: every earlier conflicting access is then before
 * it through these edges and those of the sides' own sequences. */
static void access(struct run *R, const struct item *it, struct state *s, const struct state *o)
{
    if (o->last_write >= 0)
        add_conflict(R, (uint32_t)o->last_write, it->pos);
    if (it->write) {
        for (size_t q = 0; q < o->n_reads; q++)
            add_conflict(R, o->reads[q], it->pos);
        s->last_write = it->pos;
        s->n_reads = 0;
    } else {
        s->reads[s->n_reads++] = it->pos;
    }
}

static void grow(struct finder *f, size_t n)
{
    if (n <= f->cap)
        return;
    f->cap = n;
    f->it = sim_xreallocarray(f->it, n, sizeof(*f->it));
    f->cl = sim_xreallocarray(f->cl, n, sizeof(*f->cl));
    f->order = sim_xreallocarray(f->order, n, sizeof(*f->order));
    f->tmp = sim_xreallocarray(f->tmp, n, sizeof(*f->tmp));
    f->ra = sim_xreallocarray(f->ra, n, sizeof(*f->ra));
    f->rb = sim_xreallocarray(f->rb, n, sizeof(*f->rb));
    size_t cs = 16;
    while (cs < 2 * n)
        cs *= 2;
    f->cap_slot = cs;
    f->slot = sim_xreallocarray(f->slot, cs, sizeof(*f->slot));
}

void sim_exec_find_conflicts(struct run *R, size_t g)
{
    size_t n = 0;
    for (size_t j = 0; j < g; j++)
        n += R->order[j]->n_reads + 1;
    if (!R->items)
        R->items = sim_xcalloc(1, sizeof(struct finder));
    struct finder *f = R->items;
    grow(f, n);
    memset(f->slot, 0xff, f->cap_slot * sizeof(*f->slot));
    /*
     * Classes: the accesses to one exact range, found through a hash as the ops come in
     * chunk order (so each class's list is in chunk order, an op's reads before its write).
     * Within a class, and between two classes that overlap (found by a sweep over the
     * classes sorted by address), accesses in chunk order get the edges of access(): as
     * many as accesses plus the reads a write follows, not one per pair of accesses (an
     * accumulator updated by every op of the chunk stays linear).
     */
    size_t ni = 0, nc = 0;
    for (size_t j = 0; j < g; j++) {
        const struct xop *o = R->order[j];
        for (unsigned i = 0; i <= o->n_reads; i++) {
            const struct range *r = i < o->n_reads ? &o->reads[i] : &o->write;
            if (r->lo >= r->hi) /* an empty range overlaps nothing */
                continue;
            size_t h = (size_t)range_hash(r->sid, r->lo, r->hi) & (f->cap_slot - 1);
            while (f->slot[h] != UINT32_MAX) {
                const struct cls *c = &f->cl[f->slot[h]];
                if (c->sid == r->sid && c->lo == r->lo && c->hi == r->hi)
                    break;
                h = (h + 1) & (f->cap_slot - 1);
            }
            f->it[ni] = (struct item){(uint32_t)j, UINT32_MAX, i == o->n_reads};
            if (f->slot[h] == UINT32_MAX) {
                f->slot[h] = (uint32_t)nc;
                f->cl[nc++] = (struct cls){r->sid, r->lo, r->hi, (uint32_t)ni, (uint32_t)ni};
            } else {
                struct cls *c = &f->cl[f->slot[h]];
                f->it[c->last].next = (uint32_t)ni;
                c->last = (uint32_t)ni;
            }
            ni++;
        }
    }
    for (size_t c = 0; c < nc; c++)
        f->order[c] = (uint32_t)c;
    sort_classes(f->cl, f->order, f->tmp, nc);
    uint32_t *active = f->tmp; /* free again */
    struct state a = {.reads = f->ra}, b = {.reads = f->rb};
    size_t na = 0;
    for (size_t q = 0; q < nc; q++) {
        const struct cls *c = &f->cl[f->order[q]];
        size_t k = 0;
        for (size_t p = 0; p < na; p++) {
            const struct cls *o = &f->cl[active[p]];
            if (o->sid != c->sid || o->hi <= c->lo)
                continue; /* ends before: no later class overlaps it */
            active[k++] = active[p];
            /* the two classes merged in chunk order */
            a.last_write = b.last_write = -1;
            a.n_reads = b.n_reads = 0;
            for (uint32_t x = o->first, y = c->first; x != UINT32_MAX || y != UINT32_MAX;) {
                bool take_a = y == UINT32_MAX || (x != UINT32_MAX && f->it[x].pos <= f->it[y].pos);
                const struct item *t = &f->it[take_a ? x : y];
                if (take_a) {
                    access(R, t, &a, &b);
                    x = t->next;
                } else {
                    access(R, t, &b, &a);
                    y = t->next;
                }
                /* one side is done and the other has written since: what follows of it is
                 * after that write, which is after the done side's accesses */
                if (t->write && (take_a ? y : x) == UINT32_MAX)
                    break;
            }
        }
        na = k;
        active[na++] = f->order[q];
        /* the class against itself */
        a.last_write = -1;
        a.n_reads = 0;
        for (uint32_t x = c->first; x != UINT32_MAX; x = f->it[x].next) {
            b = a; /* the same side: what it left before this access */
            access(R, &f->it[x], &a, &b);
        }
    }
}

void sim_exec_finder_free(struct run *R)
{
    struct finder *f = R->items;
    if (!f)
        return;
    free(f->it);
    free(f->cl);
    free(f->slot);
    free(f->order);
    free(f->tmp);
    free(f->ra);
    free(f->rb);
    free(f);
    R->items = NULL;
}

/* Kahn's algorithm on a copy of the counts: whether every op can run. */
bool sim_exec_acyclic(struct run *R, size_t g)
{
    size_t *left = R->pending, *stack = R->stack, top = 0, seen = 0;
    for (size_t j = 0; j < g; j++)
        if ((left[j] = R->n_preds[j]) == 0)
            stack[top++] = j;
    while (top) {
        size_t j = stack[--top];
        seen++;
        for (size_t q = R->succ_at[j]; q < R->succ_at[j + 1]; q++)
            if (--left[R->succ[q]] == 0)
                stack[top++] = R->succ[q];
    }
    return seen == g;
}

void sim_exec_add_pred(struct run *R, size_t j, size_t i)
{
    if (R->n_preds[j] && R->preds[j][R->n_preds[j] - 1] == i)
        return; /* the same edge again (another range of the same two ops) */
    if (R->n_preds[j] == R->cap_preds[j]) {
        R->cap_preds[j] = R->cap_preds[j] ? 2 * R->cap_preds[j] : 8;
        R->preds[j] = sim_xreallocarray(R->preds[j], R->cap_preds[j], sizeof(size_t));
    }
    R->preds[j][R->n_preds[j]++] = i;
}
