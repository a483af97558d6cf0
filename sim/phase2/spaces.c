/*
 * The executor's store (see exec_int.h): its spaces with their address index (a tensor's
 * range inside a larger one), where phase 2's computed data lies, and reads and writes of
 * operands against the store's tensors.
 */
#include "sim/phase2/exec_int.h"

#include "sim/data/memstore.h"
#include "sim/util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

uint32_t sim_exec_space_id(struct sim_exec *x, const char *name)
{
    for (size_t i = 0; i < x->n_spaces; i++)
        if (strcmp(x->spaces[i].name, name) == 0)
            return (uint32_t)i;
    x->spaces = sim_xreallocarray(x->spaces, x->n_spaces + 1, sizeof(*x->spaces));
    x->spaces[x->n_spaces] = (struct space){.name = sim_xstrdup(name)};
    return (uint32_t)x->n_spaces++;
}

/* First position whose addr >= addr. */
size_t sim_exec_index_lower(const struct space *sp, uint64_t addr)
{
    size_t lo = 0, hi = sp->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp->e[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void sim_exec_index_set(struct space *sp, uint64_t addr, uint64_t nbytes)
{
    size_t i = sim_exec_index_lower(sp, addr);
    if (i < sp->n && sp->e[i].addr == addr) {
        sp->e[i].nbytes = nbytes;
    } else {
        if (sp->n == sp->cap) {
            sp->cap = sp->cap ? 2 * sp->cap : 64;
            sp->e = sim_xreallocarray(sp->e, sp->cap, sizeof(*sp->e));
        }
        memmove(&sp->e[i + 1], &sp->e[i], (sp->n - i) * sizeof(*sp->e));
        sp->e[i] = (struct sentry){addr, nbytes};
        sp->n++;
    }
    if (nbytes > sp->max_nbytes)
        sp->max_nbytes = nbytes;
}

/*
 * Provenance: phase 1 never holds computed data (compute results are pending, ADR-0020
 * D3), so a snapshot phase 1 took of bytes that phase 2 computes is stale. A copy whose
 * source phase 2 computed reads it live even when the record carries a snapshot; the
 * snapshot serves for data phase 1 had (ADR-0052 D4's race avoidance).
 */

/* Mark [lo, hi) as computed by phase 2 (derived) or not. */
void sim_exec_derived_set(struct space *sp, uint64_t lo, uint64_t hi, bool derived)
{
    if (lo >= hi || (!derived && sp->dn == 0))
        return;
    /* keep the parts of existing ranges outside [lo, hi), then add [lo, hi) if derived */
    struct ival keep[2];
    size_t nk = 0, first = 0;
    while (first < sp->dn && sp->dv[first].hi <= lo)
        first++;
    size_t last = first;
    while (last < sp->dn && sp->dv[last].lo < hi) {
        if (sp->dv[last].lo < lo)
            keep[nk++] = (struct ival){sp->dv[last].lo, lo};
        if (sp->dv[last].hi > hi)
            keep[nk++] = (struct ival){hi, sp->dv[last].hi};
        last++;
    }
    struct ival add[3];
    size_t na = 0;
    if (derived) {
        /* merged with the kept parts and the touching neighbours below */
        uint64_t a = lo, b = hi;
        for (size_t k = 0; k < nk; k++) {
            a = keep[k].lo < a ? keep[k].lo : a;
            b = keep[k].hi > b ? keep[k].hi : b;
        }
        add[na++] = (struct ival){a, b};
    } else {
        for (size_t k = 0; k < nk; k++)
            add[na++] = keep[k];
    }
    size_t removed = last - first, need = sp->dn - removed + na;
    if (need > sp->dcap) {
        sp->dcap = need * 2 + 8;
        sp->dv = sim_xreallocarray(sp->dv, sp->dcap, sizeof(*sp->dv));
    }
    memmove(&sp->dv[first + na], &sp->dv[last], (sp->dn - last) * sizeof(*sp->dv));
    memcpy(&sp->dv[first], add, na * sizeof(*add));
    sp->dn = need;
}

/* True when some byte of [lo, hi) was computed by phase 2. */
bool sim_exec_derived_any(const struct space *sp, uint64_t lo, uint64_t hi)
{
    size_t a = 0, b = sp->dn;
    while (a < b) { /* the first range ending after lo */
        size_t mid = a + (b - a) / 2;
        if (sp->dv[mid].hi <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a < sp->dn && sp->dv[a].lo < hi;
}

/*
 * The stored tensor whose bytes hold [addr, addr + n), other than one stored at addr with
 * exactly n bytes, or NULL; *key receives its address. Among several, the nearest below.
 */
static struct sim_tensor *find_container(struct sim_exec *x, uint32_t sid, uint64_t addr,
                                         uint64_t n, uint64_t *key)
{
    const struct space *sp = &x->spaces[sid];
    uint64_t end = addr + n;
    /* a holder starts at or below addr and no lower than end - max_nbytes */
    uint64_t floor = end > sp->max_nbytes ? end - sp->max_nbytes : 0;
    for (size_t i = sim_exec_index_lower(sp, addr + 1); i-- > 0;) {
        const struct sentry *e = &sp->e[i];
        if (e->addr < floor)
            break;
        if (e->addr + e->nbytes < end || (e->addr == addr && e->nbytes == n))
            continue;
        struct sim_tensor *t = sim_memstore_get(x->store, sp->name, e->addr);
        if (t && t->nbytes == e->nbytes) {
            *key = e->addr;
            return t;
        }
    }
    return NULL;
}

/* A tensor viewing n bytes of t's data at byte offset off, as dtype and shape (sharing
 * them: a copy of part of a tensor costs nothing, as a copy of a whole one). Where the
 * bytes would not be aligned for dtype (a 16-bit tensor holding them at an odd element:
 * an f32 operand read out of a row of f16 cut at an odd column), a copy of them. */
static struct sim_tensor *offset_view(struct sim_tensor *t, size_t off, enum sim_dtype dtype,
                                      unsigned ndim, const int64_t *shape, size_t nbytes)
{
    (void)nbytes; /* the shape's */
    if ((t->offset + off) % sim_dtype_size(dtype) != 0)
        return sim_tensor_copy_range(t, off, dtype, ndim, shape);
    return sim_tensor_view_at(t, off, dtype, ndim, shape);
}

/*
 * Read operand o from the store into *out (a new reference): the tensor at its address,
 * reinterpreted, or the part of a larger tensor that holds its range.
 */
int sim_exec_mem_read(struct sim_exec *x, const struct operand *o, struct sim_tensor **out,
                      struct diag *d)
{
    const char *space = x->spaces[o->sid].name;
    struct sim_tensor *t = sim_memstore_get(x->store, space, o->addr);
    if (t && t->nbytes == o->nbytes) {
        if (o->dtype == AS_STORED ||
            (t->dtype == o->dtype && t->ndim == o->ndim &&
             memcmp(t->shape, o->shape, o->ndim * sizeof(*o->shape)) == 0)) {
            *out = sim_tensor_ref(t);
            return 0;
        }
        *out = sim_tensor_view(t, o->dtype, o->ndim, o->shape, d);
        return *out ? 0 : -SIM_EINVAL;
    }
    uint64_t key;
    struct sim_tensor *c = find_container(x, o->sid, o->addr, o->nbytes, &key);
    if (c) {
        if (o->dtype == AS_STORED) {
            int64_t n = (int64_t)o->nbytes;
            *out = offset_view(c, o->addr - key, SIM_U8, 1, &n, o->nbytes);
        } else {
            *out = offset_view(c, o->addr - key, o->dtype, o->ndim, o->shape, o->nbytes);
        }
        return 0;
    }
    if (t)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "%s 0x%" PRIx64 ": holds %zu bytes, the op reads %zu", space, o->addr,
                        t->nbytes, o->nbytes);
    return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                    "%s 0x%" PRIx64 ": no tensor holds these %zu bytes", space, o->addr, o->nbytes);
}

/* Write t (not an offset view) to (sid, addr): replace the tensor at addr when it has
 * t's size, else write into a larger tensor holding the range (the one at addr included),
 * else store t at addr. */
void sim_exec_mem_write(struct sim_exec *x, uint32_t sid, uint64_t addr, struct sim_tensor *t,
                        const struct sim_op_record *r)
{
    struct space *sp = &x->spaces[sid];
    struct sim_memstore_writer w = {r->op_name, r->t_start};
    struct sim_tensor *e = sim_memstore_get(x->store, sp->name, addr);
    if (!e || e->nbytes != t->nbytes) {
        uint64_t key;
        struct sim_tensor *c = find_container(x, sid, addr, t->nbytes, &key);
        if (c) {
            if (c->base || c->refs != 1) {
                /* shared with phase 1, a record or a view: never mutate, copy */
                struct sim_tensor *own = sim_tensor_copy(c);
                sim_memstore_write(x->store, sp->name, key, own, &w);
                sim_tensor_unref(own);
                c = own;
            }
            if (t->nbytes)
                memcpy((unsigned char *)sim_tensor_data(c) + (addr - key), sim_tensor_cdata(t),
                       t->nbytes);
            return;
        }
    }
    sim_memstore_write(x->store, sp->name, addr, t, &w);
    sim_exec_index_set(sp, addr, t->nbytes);
}
