/*
 * The memory store (see memstore.h). Each space is an open-addressing hash table keyed by
 * addr (linear probing, Fibonacci hashing, at most half full), so a write or read of an
 * existing key is a name lookup and one or two probes. Spaces are found through a second
 * small table keyed by name and kept in an array in creation order for the inspector.
 * Writer labels are interned in a pool shared by a store and its snapshots, so a write with
 * a label allocates nothing once the label has been seen. Each slot keeps the generation of
 * its write and whether the tensor was a pattern then, for the chip's layering of writes
 * over pattern regions.
 */
#include "sim/data/memstore.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct slot {
    uint64_t addr;
    struct sim_tensor *t; /* owned reference; NULL marks an empty slot */
    const char *op;       /* borrowed from the label pool, or NULL */
    double t_ns;
    uint64_t order; /* the generation right after the write << 1 | 1 when t was
                       pattern-backed then (one word, written at once) */
    bool over;      /* written over since (sim_memstore_touch) */
};

#define SEQ(s)     ((s)->order >> 1)
#define PATTERN(s) (((s)->order & 1) != 0)

struct space {
    char *name;         /* owned */
    struct slot *slots; /* owned, cap entries */
    size_t cap;         /* a power of two */
    unsigned shift;     /* 64 - log2(cap), for the hash */
    size_t len;         /* occupied slots */
    size_t bytes;       /* sum of the stored tensors' nbytes */
};

/* Interned writer labels; append-only, shared by a store and its snapshots. */
struct label_pool {
    unsigned refs;
    char **set; /* owned strings; NULL marks an empty slot */
    size_t cap, len;
};

struct sim_memstore {
    struct space **spaces; /* owned, creation order */
    size_t nspaces, spaces_cap;
    uint32_t *by_name; /* index + 1 into spaces, 0 empty; name_cap entries */
    size_t name_cap;
    struct label_pool *labels; /* shared reference */
    const char *last_label;    /* the label of the last write, for a fast repeat */
    uint64_t generation;
};

enum { SPACE_INIT_CAP = 16, NAME_INIT_CAP = 16, LABEL_INIT_CAP = 32 };

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t addr_index(const struct space *sp, uint64_t addr)
{
    return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> sp->shift);
}

static unsigned log2_pow2(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n)
        k++;
    return k;
}

/* --- writer labels ---------------------------------------------------------------------- */

static struct label_pool *labels_new(void)
{
    struct label_pool *p = sim_xcalloc(1, sizeof(*p));
    p->refs = 1;
    p->cap = LABEL_INIT_CAP;
    p->set = sim_xcalloc(p->cap, sizeof(*p->set));
    return p;
}

static void labels_unref(struct label_pool *p)
{
    if (--p->refs > 0)
        return;
    for (size_t i = 0; i < p->cap; i++)
        free(p->set[i]);
    free(p->set);
    free(p);
}

static void labels_insert(char **set, size_t cap, char *s)
{
    size_t i = (size_t)hash_str(s) & (cap - 1);
    while (set[i])
        i = (i + 1) & (cap - 1);
    set[i] = s;
}

static const char *labels_intern(struct label_pool *p, const char *s)
{
    size_t i = (size_t)hash_str(s) & (p->cap - 1);
    for (; p->set[i]; i = (i + 1) & (p->cap - 1))
        if (strcmp(p->set[i], s) == 0)
            return p->set[i];
    if ((p->len + 1) * 2 > p->cap) {
        size_t cap = p->cap * 2;
        char **set = sim_xcalloc(cap, sizeof(*set));
        for (size_t k = 0; k < p->cap; k++)
            if (p->set[k])
                labels_insert(set, cap, p->set[k]);
        free(p->set);
        p->set = set;
        p->cap = cap;
    }
    char *copy = sim_xstrdup(s);
    labels_insert(p->set, p->cap, copy);
    p->len++;
    return copy;
}

/* --- spaces ----------------------------------------------------------------------------- */

static struct space *space_new(const char *name, size_t cap)
{
    struct space *sp = sim_xcalloc(1, sizeof(*sp));
    sp->name = sim_xstrdup(name);
    sp->cap = cap;
    sp->shift = 64 - log2_pow2(cap);
    sp->slots = sim_xcalloc(cap, sizeof(*sp->slots));
    return sp;
}

static void space_free(struct space *sp)
{
    for (size_t i = 0; i < sp->cap; i++)
        sim_tensor_unref(sp->slots[i].t);
    free(sp->slots);
    free(sp->name);
    free(sp);
}

/* The slot holding addr, or the empty slot where it would go. */
static struct slot *space_probe(const struct space *sp, uint64_t addr)
{
    size_t mask = sp->cap - 1;
    for (size_t i = addr_index(sp, addr);; i = (i + 1) & mask) {
        struct slot *s = &sp->slots[i];
        if (!s->t || s->addr == addr)
            return s;
    }
}

static void space_grow(struct space *sp)
{
    struct slot *old = sp->slots;
    size_t old_cap = sp->cap;
    sp->cap *= 2;
    sp->shift--;
    sp->slots = sim_xcalloc(sp->cap, sizeof(*sp->slots));
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].t)
            *space_probe(sp, old[i].addr) = old[i];
    free(old);
}

/* Empty slot s (occupied) of sp, moving later slots of its probe run back so that every
 * key stays reachable (backward-shift deletion). Returns the tensor reference it held. */
static struct sim_tensor *space_remove(struct space *sp, struct slot *s)
{
    size_t mask = sp->cap - 1, hole = (size_t)(s - sp->slots);
    struct sim_tensor *t = s->t;
    sp->bytes -= t->nbytes;
    sp->len--;
    for (size_t i = (hole + 1) & mask; sp->slots[i].t; i = (i + 1) & mask) {
        size_t home = addr_index(sp, sp->slots[i].addr);
        /* the entry at i may fill the hole when its home is not between hole and i */
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (!stays) {
            sp->slots[hole] = sp->slots[i];
            hole = i;
        }
    }
    memset(&sp->slots[hole], 0, sizeof(sp->slots[hole]));
    return t;
}

static void names_insert(struct sim_memstore *m, size_t index)
{
    size_t mask = m->name_cap - 1;
    size_t i = (size_t)hash_str(m->spaces[index]->name) & mask;
    while (m->by_name[i])
        i = (i + 1) & mask;
    m->by_name[i] = (uint32_t)(index + 1);
}

static struct space *find_space(const struct sim_memstore *m, const char *name)
{
    size_t mask = m->name_cap - 1;
    for (size_t i = (size_t)hash_str(name) & mask; m->by_name[i]; i = (i + 1) & mask) {
        struct space *sp = m->spaces[m->by_name[i] - 1];
        if (strcmp(sp->name, name) == 0)
            return sp;
    }
    return NULL;
}

/* Append sp to the creation-ordered list and index it by name. */
static void add_space(struct sim_memstore *m, struct space *sp)
{
    if (m->nspaces == m->spaces_cap) {
        m->spaces_cap = m->spaces_cap ? m->spaces_cap * 2 : 8;
        m->spaces = sim_xreallocarray(m->spaces, m->spaces_cap, sizeof(struct space *));
    }
    m->spaces[m->nspaces++] = sp;
    if (m->nspaces * 2 > m->name_cap) {
        free(m->by_name);
        m->name_cap *= 2;
        m->by_name = sim_xcalloc(m->name_cap, sizeof(*m->by_name));
        for (size_t i = 0; i < m->nspaces; i++)
            names_insert(m, i);
    } else {
        names_insert(m, m->nspaces - 1);
    }
}

/* --- the store -------------------------------------------------------------------------- */

static struct sim_memstore *store_alloc(struct label_pool *labels)
{
    struct sim_memstore *m = sim_xcalloc(1, sizeof(*m));
    m->name_cap = NAME_INIT_CAP;
    m->by_name = sim_xcalloc(m->name_cap, sizeof(*m->by_name));
    m->labels = labels;
    return m;
}

struct sim_memstore *sim_memstore_new(void)
{
    return store_alloc(labels_new());
}

void sim_memstore_free(struct sim_memstore *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nspaces; i++)
        space_free(m->spaces[i]);
    free(m->spaces);
    free(m->by_name);
    labels_unref(m->labels);
    free(m);
}

void sim_memstore_write(struct sim_memstore *m, const char *space, uint64_t addr,
                        struct sim_tensor *t, const struct sim_memstore_writer *w)
{
    assert(t);
    struct space *sp = find_space(m, space);
    if (!sp) {
        sp = space_new(space, SPACE_INIT_CAP);
        add_space(m, sp);
    }
    struct slot *s = space_probe(sp, addr);
    if (!s->t && (sp->len + 1) * 2 > sp->cap) {
        space_grow(sp);
        s = space_probe(sp, addr);
    }
    sim_tensor_ref(t); /* before the unref: rewriting the same tensor must not free it */
    if (s->t) {
        sp->bytes -= s->t->nbytes;
        sim_tensor_unref(s->t);
    } else {
        sp->len++;
    }
    s->addr = addr;
    s->t = t;
    sp->bytes += t->nbytes;
    if (w && w->op) {
        if (!m->last_label || strcmp(m->last_label, w->op) != 0)
            m->last_label = labels_intern(m->labels, w->op);
        s->op = m->last_label;
    } else {
        s->op = NULL;
    }
    s->t_ns = w ? w->t_ns : NAN;
    s->order = ++m->generation << 1 | sim_tensor_is_lazy(t);
    s->over = false;
}

void sim_memstore_touch(struct sim_memstore *m, const char *space, uint64_t addr,
                        const struct sim_memstore_writer *w)
{
    struct space *sp = find_space(m, space);
    struct slot *s = sp ? space_probe(sp, addr) : NULL;
    if (!s || !s->t || !w)
        return;
    if (w->op) {
        if (!m->last_label || strcmp(m->last_label, w->op) != 0)
            m->last_label = labels_intern(m->labels, w->op);
        s->op = m->last_label;
    }
    s->t_ns = w->t_ns;
    s->over = true;
    m->generation++;
}

void sim_memstore_split(struct sim_memstore *m, const char *space, uint64_t from, uint64_t to,
                        struct sim_tensor *t)
{
    struct space *sp = find_space(m, space);
    assert(sp && space_probe(sp, from)->t && "the entry split exists");
    struct slot old = *space_probe(sp, from);
    sim_memstore_write(m, space, to, t, NULL);
    struct slot *s = space_probe(sp, to);
    s->op = old.op;
    s->t_ns = old.t_ns;
    s->order = old.order;
    s->over = old.over;
}

static const struct slot *find_slot(const struct sim_memstore *m, const char *space, uint64_t addr)
{
    const struct space *sp = find_space(m, space);
    if (!sp)
        return NULL;
    const struct slot *s = space_probe(sp, addr);
    return s->t ? s : NULL;
}

struct sim_tensor *sim_memstore_get(const struct sim_memstore *m, const char *space, uint64_t addr)
{
    const struct slot *s = find_slot(m, space, addr);
    return s ? s->t : NULL;
}

bool sim_memstore_has(const struct sim_memstore *m, const char *space, uint64_t addr)
{
    return find_slot(m, space, addr) != NULL;
}

/* The view numpy's arr.view(dtype) gives: the last dimension rescaled to the new size. */
static struct sim_tensor *view_as_dtype(struct sim_tensor *t, enum sim_dtype dtype, struct diag *d)
{
    size_t old_size = sim_dtype_size(t->dtype), new_size = sim_dtype_size(dtype);
    if (old_size == new_size)
        return sim_tensor_view(t, dtype, t->ndim, t->shape, d);
    char sh[SIM_MAX_DIMS * 22 + 8];
    sim_shape_format(t->ndim, t->shape, sh, sizeof(sh));
    if (t->ndim == 0) {
        diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                 "cannot view %s %s (%zu bytes) as %s: a scalar cannot change its element size",
                 sim_dtype_name(t->dtype), sh, t->nbytes, sim_dtype_name(dtype));
        return NULL;
    }
    int64_t shape[SIM_MAX_DIMS];
    memcpy(shape, t->shape, t->ndim * sizeof(shape[0]));
    size_t last = (size_t)shape[t->ndim - 1] * old_size;
    if (last % new_size != 0) {
        diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                 "cannot view %s %s (%zu bytes) as %s: the last dimension (%zu bytes) is not a "
                 "multiple of %zu bytes",
                 sim_dtype_name(t->dtype), sh, t->nbytes, sim_dtype_name(dtype), last, new_size);
        return NULL;
    }
    shape[t->ndim - 1] = (int64_t)(last / new_size);
    return sim_tensor_view(t, dtype, t->ndim, shape, d);
}

int sim_memstore_read(struct sim_memstore *m, const char *space, uint64_t addr,
                      enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                      struct sim_tensor **out, struct diag *d)
{
    const struct slot *s = find_slot(m, space, addr);
    if (!s)
        return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                        "read of space '%s' addr 0x%" PRIx64 ": no tensor written there", space,
                        addr);
    struct sim_tensor *t = s->t;
    enum sim_dtype want = dtype == SIM_MEMSTORE_SAME_DTYPE ? t->dtype : dtype;
    assert((unsigned)want < SIM_DTYPE_COUNT);
    struct sim_tensor *v;
    if (!shape) {
        if (want == t->dtype) {
            *out = sim_tensor_ref(t);
            return 0;
        }
        v = view_as_dtype(t, want, d);
    } else {
        if (want == t->dtype && ndim == t->ndim &&
            (ndim == 0 || memcmp(shape, t->shape, ndim * sizeof(shape[0])) == 0)) {
            *out = sim_tensor_ref(t);
            return 0;
        }
        v = sim_tensor_view(t, want, ndim, shape, d);
    }
    if (!v) {
        diag_prefix(d, "read of space '%s' addr 0x%" PRIx64, space, addr);
        return -SIM_EINVAL;
    }
    *out = v;
    return 0;
}

struct sim_memstore *sim_memstore_snapshot(const struct sim_memstore *m)
{
    m->labels->refs++;
    struct sim_memstore *c = store_alloc(m->labels);
    c->generation = m->generation;
    for (size_t i = 0; i < m->nspaces; i++) {
        const struct space *sp = m->spaces[i];
        struct space *cp = space_new(sp->name, sp->cap);
        memcpy(cp->slots, sp->slots, sp->cap * sizeof(*sp->slots));
        for (size_t k = 0; k < cp->cap; k++)
            if (cp->slots[k].t)
                sim_tensor_ref(cp->slots[k].t);
        cp->len = sp->len;
        cp->bytes = sp->bytes;
        add_space(c, cp);
    }
    return c;
}

/* --- materialising pattern regions -------------------------------------------------------- */

struct mslot {
    uint64_t addr, end, seq;
    struct slot *s;
    bool drop;
};

static int mslot_by_addr(const void *a, const void *b)
{
    const struct mslot *x = a, *y = b;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

static int mslot_by_seq(const void *a, const void *b)
{
    const struct mslot *x = *(const struct mslot *const *)a, *y = *(const struct mslot *const *)b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The pattern regions of sp that later entries overlap, made plain tensors (see .h). */
static size_t materialize_space(struct space *sp)
{
    size_t n = 0, done = 0;
    struct mslot *v = sim_xcalloc(sp->len ? sp->len : 1, sizeof(*v));
    for (size_t i = 0; i < sp->cap; i++)
        if (sp->slots[i].t)
            v[n++] = (struct mslot){sp->slots[i].addr, sp->slots[i].addr + sp->slots[i].t->nbytes,
                                    SEQ(&sp->slots[i]), &sp->slots[i], false};
    qsort(v, n, sizeof(*v), mslot_by_addr);
    /* maxend[i]: the furthest end among v[0..i], so the entries overlapping a range start at
     * the first i whose maxend passes its start */
    uint64_t *maxend = sim_xcalloc(n ? n : 1, sizeof(*maxend));
    for (size_t i = 0; i < n; i++)
        maxend[i] = i && maxend[i - 1] > v[i].end ? maxend[i - 1] : v[i].end;
    struct sim_tensor **repl = sim_xcalloc(n ? n : 1, sizeof(*repl));
    struct mslot **later = sim_xcalloc(n ? n : 1, sizeof(*later));
    for (size_t i = 0; i < n; i++) {
        const struct mslot *p = &v[i];
        if (!PATTERN(p->s))
            continue;
        size_t lo = 0, hi = n, nl = 0;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (maxend[mid] <= p->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < n && v[j].addr < p->end; j++)
            if (j != i && v[j].end > p->addr && v[j].seq > p->seq)
                later[nl++] = &v[j];
        if (!nl)
            continue;
        qsort(later, nl, sizeof(*later), mslot_by_seq);
        const struct sim_tensor *t = p->s->t;
        struct sim_tensor *c = sim_tensor_new_uninit(t->dtype, t->ndim, t->shape);
        unsigned char *bytes = sim_tensor_data(c);
        sim_tensor_read_bytes(t, 0, t->nbytes, bytes);
        for (size_t k = 0; k < nl; k++) {
            struct mslot *e = later[k];
            uint64_t a = e->addr > p->addr ? e->addr : p->addr;
            uint64_t b = e->end < p->end ? e->end : p->end;
            sim_tensor_read_bytes(e->s->t, a - e->addr, b - a, bytes + (a - p->addr));
            if (e->addr >= p->addr && e->end <= p->end)
                e->drop = true; /* wholly inside: its bytes live in the region now */
        }
        repl[i] = c;
    }
    for (size_t i = 0; i < n; i++) {
        if (!repl[i])
            continue;
        struct slot *s = v[i].s;
        sim_tensor_unref(s->t); /* same size: the space's byte count is unchanged */
        s->t = repl[i];
        s->order &= ~(uint64_t)1;
        done++;
    }
    /* removals last: they move slots, which v points at (look each up again by addr) */
    for (size_t i = 0; i < n; i++)
        if (v[i].drop)
            sim_tensor_unref(space_remove(sp, space_probe(sp, v[i].addr)));
    free(later);
    free(repl);
    free(maxend);
    free(v);
    return done;
}

size_t sim_memstore_materialize(struct sim_memstore *m)
{
    size_t done = 0;
    for (size_t i = 0; i < m->nspaces; i++)
        done += materialize_space(m->spaces[i]);
    if (done)
        m->generation++;
    return done;
}

uint64_t sim_memstore_generation(const struct sim_memstore *m)
{
    return m->generation;
}

size_t sim_memstore_space_count(const struct sim_memstore *m)
{
    return m->nspaces;
}

const char *sim_memstore_space_name(const struct sim_memstore *m, size_t i)
{
    assert(i < m->nspaces);
    return m->spaces[i]->name;
}

size_t sim_memstore_space_len(const struct sim_memstore *m, const char *space)
{
    const struct space *sp = find_space(m, space);
    return sp ? sp->len : 0;
}

size_t sim_memstore_space_bytes(const struct sim_memstore *m, const char *space)
{
    const struct space *sp = find_space(m, space);
    return sp ? sp->bytes : 0;
}

static int entry_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct sim_memstore_entry *)a)->addr;
    uint64_t y = ((const struct sim_memstore_entry *)b)->addr;
    return (x > y) - (x < y);
}

struct sim_memstore_entry *sim_memstore_entries(const struct sim_memstore *m, const char *space,
                                                size_t *n)
{
    const struct space *sp = find_space(m, space);
    *n = 0;
    if (!sp || sp->len == 0)
        return NULL;
    struct sim_memstore_entry *e = sim_xcalloc(sp->len, sizeof(*e));
    for (size_t i = 0; i < sp->cap; i++) {
        const struct slot *s = &sp->slots[i];
        if (s->t)
            e[(*n)++] = (struct sim_memstore_entry){s->addr, s->t,       s->op,  s->t_ns,
                                                    SEQ(s),  PATTERN(s), s->over};
    }
    assert(*n == sp->len);
    qsort(e, *n, sizeof(*e), entry_cmp);
    return e;
}
