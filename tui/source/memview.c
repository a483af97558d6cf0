/*
 * The memory view of a store in this process (see memview.h): a thin layer over the
 * memory store's listing, keeping the last list it made until it is asked again. Bytes
 * are read without materialising a pattern region.
 */
#include "tui/source/memview.h"

#include "sim/chip/chip.h"
#include "sim/chip/roles.h"
#include "sim/data/memstore.h"
#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct store_view {
    struct tui_memview base;
    struct sim_memstore *store; /* borrowed */
    struct sim_chip *chip;      /* borrowed, or NULL: a store alone */
    struct tui_mem_entry *list; /* owned: the last listing */
    char (*pattern)[48];        /* owned: its entries' patterns */
    size_t cap;
};

static struct store_view *S_of(struct tui_memview *v)
{
    return (struct store_view *)v;
}

static uint64_t sv_generation(struct tui_memview *v)
{
    return sim_memstore_generation(S_of(v)->store);
}

static size_t sv_space_count(struct tui_memview *v)
{
    return sim_memstore_space_count(S_of(v)->store);
}

static const char *sv_space_name(struct tui_memview *v, size_t i)
{
    struct sim_memstore *st = S_of(v)->store;
    return i < sim_memstore_space_count(st) ? sim_memstore_space_name(st, i) : NULL;
}

static size_t sv_space_len(struct tui_memview *v, size_t i)
{
    const char *name = sv_space_name(v, i);
    return name ? sim_memstore_space_len(S_of(v)->store, name) : 0;
}

static const struct tui_mem_entry *sv_entries(struct tui_memview *v, size_t i, size_t *n)
{
    struct store_view *s = S_of(v);
    const char *name = sv_space_name(v, i);
    *n = 0;
    size_t k = 0;
    struct sim_memstore_entry *e = name ? sim_memstore_entries(s->store, name, &k) : NULL;
    if (k > s->cap) {
        s->cap = k;
        s->list = sim_xreallocarray(s->list, k, sizeof(*s->list));
        s->pattern = sim_xreallocarray(s->pattern, k, sizeof(*s->pattern));
    }
    for (size_t j = 0; j < k; j++) {
        const struct sim_tensor *t = e[j].tensor;
        struct tui_mem_entry *x = &s->list[j];
        x->addr = e[j].addr;
        x->dtype = (int)t->dtype;
        x->ndim = t->ndim;
        memcpy(x->shape, t->shape, sizeof(x->shape));
        x->nbytes = t->nbytes;
        x->writer = e[j].op;
        x->t_ns = e[j].t_ns;
        /* a pattern region (unless it has been materialised or written over since) */
        struct sim_fill f;
        x->pattern = e[j].pattern && !e[j].over && sim_tensor_pattern(t, &f)
                         ? sim_fill_format(&f, s->pattern[j], sizeof(s->pattern[j]))
                         : NULL;
        x->name =
            s->chip ? sim_roles_find(sim_chip_names(s->chip), name, e[j].addr, t->nbytes) : NULL;
    }
    free(e);
    *n = k;
    return s->list;
}

static int sv_read(struct tui_memview *v, size_t space, uint64_t addr, uint64_t off, size_t n,
                   void *buf)
{
    const char *name = sv_space_name(v, space);
    const struct sim_tensor *t = name ? sim_memstore_get(S_of(v)->store, name, addr) : NULL;
    if (!t || off > t->nbytes || n > t->nbytes - off)
        return -1;
    if (S_of(v)->chip) /* as the chip reads them: later writes over a region painted on it */
        sim_chip_mem_read_bytes(S_of(v)->chip, name, addr + off, n, buf);
    else
        sim_tensor_read_bytes(t, (size_t)off, n, buf); /* a pattern is not materialised */
    return 1;
}

static const char *sv_pending(struct tui_memview *v, size_t space, uint64_t addr, uint64_t off,
                              size_t n)
{
    const char *name = sv_space_name(v, space);
    return name && S_of(v)->chip ? sim_chip_pending(S_of(v)->chip, name, addr + off, n) : NULL;
}

static void sv_free(struct tui_memview *v)
{
    struct store_view *s = S_of(v);
    free(s->list);
    free(s->pattern);
    free(s);
}

static const struct tui_memview_ops store_ops = {
    .generation = sv_generation,
    .space_count = sv_space_count,
    .space_name = sv_space_name,
    .space_len = sv_space_len,
    .entries = sv_entries,
    .read = sv_read,
    .pending = sv_pending,
    .free = sv_free,
};

struct tui_memview *tui_memview_store_new(struct sim_memstore *store)
{
    struct store_view *s = sim_xcalloc(1, sizeof(*s));
    s->base.ops = &store_ops;
    s->store = store;
    return &s->base;
}

struct tui_memview *tui_memview_chip_new(struct sim_chip *chip)
{
    struct tui_memview *v = tui_memview_store_new(sim_chip_store(chip));
    S_of(v)->chip = chip;
    return v;
}

void tui_memview_free(struct tui_memview *v)
{
    if (v)
        v->ops->free(v);
}
