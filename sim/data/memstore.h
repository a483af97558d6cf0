/*
 * The memory store (ADR-0052 D6, ADR-0020 D7): tensors keyed by (space, addr). Spaces are
 * strings ("hbm", "tcm", "sram", "reg", any other) created lazily by the first write; addr
 * is a plain integer key (PA or VA, the store does not care). Phase 1 writes and reads it on
 * every tl_load / tl_store; phase 2 replays the op log on a snapshot of it; the memory
 * inspector lists it.
 *
 * Reference semantics (D6.3): write stores a reference to the caller's tensor, read returns
 * a reference, so a mutation of the tensor after a write is visible to later reads. Rewriting
 * an address replaces the tensor there as a whole (no partial overwrite). To detach data,
 * copy it (sim_tensor_copy).
 *
 * Pattern regions: a pattern-backed tensor (sim/tensor.h) is stored like any other and costs
 * its header whatever its size; reads, views, has and snapshots never materialise it. Each
 * entry remembers the order of its write and whether it was a pattern then: the chip
 * (sim/chip.h) lays later writes over a pattern region instead of writing into it, and
 * assembles ranges from the entries in write order. sim_memstore_materialize turns such
 * layers back into plain tensors for phase 2.
 */
#ifndef SIM_MEMSTORE_H
#define SIM_MEMSTORE_H

#include "sim/util/diag.h"
#include "sim/data/dtype.h"
#include "sim/data/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_memstore;

/* For read: keep the stored dtype (no reinterpretation). */
#define SIM_MEMSTORE_SAME_DTYPE ((enum sim_dtype)SIM_DTYPE_COUNT)

/* Who wrote a tensor, for the memory inspector. */
struct sim_memstore_writer {
    const char *op; /* op label, e.g. "dma_write" or "tl_store"; copied; NULL = unknown */
    double t_ns;    /* simulation time of the write, in ns */
};

/* One entry of a space, as listed for the inspector. */
struct sim_memstore_entry {
    uint64_t addr;
    const struct sim_tensor *tensor; /* borrowed: valid until addr is rewritten or the store
                                        is freed; shape, dtype, nbytes are its fields */
    const char *op;                  /* borrowed label of the last writer, NULL when unknown */
    double t_ns;                     /* time of the last write; NaN when no writer was given */
    uint64_t seq;                    /* the store's generation right after that write: later
                                        writes have larger numbers */
    bool pattern;                    /* the tensor was pattern-backed when written (a pattern
                                        region: later writes over it are laid on top) */
    bool over;                       /* written over since (sim_memstore_touch): op and t_ns
                                        are the latest write over part of it */
};

/* A new, empty store (no spaces). */
struct sim_memstore *sim_memstore_new(void);

/* Free the store and drop its tensor references. NULL is a no-op. */
void sim_memstore_free(struct sim_memstore *m);

/*
 * Store a reference to t at (space, addr), creating the space on first use and replacing
 * (and unreferencing) whatever was there. The store takes its own reference: the caller
 * keeps its one. w describes the write for the inspector (NULL: unknown writer). Bumps the
 * store's generation. Cannot fail.
 */
void sim_memstore_write(struct sim_memstore *m, const char *space, uint64_t addr,
                        struct sim_tensor *t, const struct sim_memstore_writer *w);

/*
 * Store t at (space, to) as the continuation of the entry at (space, from) (which must
 * exist: assert): the new entry carries that entry's writer, time, write order (seq) and
 * pattern flag, as the part of an earlier write it is, so what was written over that range
 * since still counts as later. Replaces whatever was at to. Bumps the generation. For the
 * chip, when a write takes the start of a pattern region and the rest of it moves on.
 */
void sim_memstore_split(struct sim_memstore *m, const char *space, uint64_t from, uint64_t to,
                        struct sim_tensor *t);

/*
 * A write landed over part of the entry at (space, addr) without replacing it (laid on top
 * of a pattern region, or bound to a result phase 2 computes): the entry's last writer
 * becomes w and it is marked written over; its tensor, write order and pattern flag stay.
 * Nothing when no entry is there. Bumps the generation.
 */
void sim_memstore_touch(struct sim_memstore *m, const char *space, uint64_t addr,
                        const struct sim_memstore_writer *w);

/*
 * Read the tensor at (space, addr) into *out as a new reference (the caller unrefs it).
 *
 * dtype is SIM_MEMSTORE_SAME_DTYPE to keep the stored one; shape NULL keeps the stored shape
 * (ndim is then ignored; a scalar is ndim 0 with a non-NULL shape). When both match the
 * stored tensor, *out is that tensor itself. Otherwise *out is a view sharing its bytes:
 * - dtype and shape given: the stored bytes as that layout, when the byte counts are equal;
 * - only a dtype of another size: like numpy's view, the last dimension is rescaled (its
 *   bytes must divide by the new size; a scalar cannot change size);
 * - only a shape: a reshape, when the byte counts are equal.
 * Errors (with *out untouched): -SIM_ENOENT when nothing is stored there ("hbm 0x1000: no
 * tensor written at this address"), -SIM_EINVAL when the layouts do not fit, naming both.
 */
int sim_memstore_read(struct sim_memstore *m, const char *space, uint64_t addr,
                      enum sim_dtype dtype, unsigned ndim, const int64_t *shape,
                      struct sim_tensor **out, struct diag *d);

/* The tensor at (space, addr), borrowed, or NULL. Creates nothing. */
struct sim_tensor *sim_memstore_get(const struct sim_memstore *m, const char *space, uint64_t addr);

/* True when a tensor is stored at (space, addr). Creates nothing. */
bool sim_memstore_has(const struct sim_memstore *m, const char *space, uint64_t addr);

/*
 * A shallow copy (D6.5): new tables with the same entries, the tensors shared by reference
 * (each gains one). Writes to either store do not show in the other; mutating a shared
 * tensor's data shows in both. The copy starts at m's generation.
 */
struct sim_memstore *sim_memstore_snapshot(const struct sim_memstore *m);

/*
 * Make every pattern region that later writes were laid over (entries written after it
 * overlapping its range) a plain tensor again, as a store without pattern regions would
 * hold it: its slot gets a new, materialised tensor with the region's bytes and every later
 * overlapping entry's bytes on top, in write order, and the later entries lying wholly
 * inside it are dropped (their bytes are in it). Tensors are replaced, never written into,
 * so a snapshot sharing them is unaffected. Pattern regions nothing was laid over stay
 * pattern-backed. Costs the bytes of the regions it materialises. Returns how many.
 */
size_t sim_memstore_materialize(struct sim_memstore *m);

/*
 * A counter that changes on every write, so a viewer knows when to refresh. Starts at 0 for
 * a new store.
 */
uint64_t sim_memstore_generation(const struct sim_memstore *m);

/* Number of spaces; space i (0 <= i < count) in creation order. */
size_t sim_memstore_space_count(const struct sim_memstore *m);
const char *sim_memstore_space_name(const struct sim_memstore *m, size_t i);

/* Number of entries, and their total bytes (pattern regions counted at their size), in a
 * space (0 for an unknown space). */
size_t sim_memstore_space_len(const struct sim_memstore *m, const char *space);
size_t sim_memstore_space_bytes(const struct sim_memstore *m, const char *space);

/*
 * The entries of a space sorted by addr, in a new array of *n entries (NULL and 0 for an
 * unknown or empty space). The caller frees the array with free(); the pointers inside are
 * borrowed from the store (see struct sim_memstore_entry).
 */
struct sim_memstore_entry *sim_memstore_entries(const struct sim_memstore *m, const char *space,
                                                size_t *n);

#endif
