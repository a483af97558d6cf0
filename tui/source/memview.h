/*
 * What the live memory pane reads: the spaces of a simulation's memory store, the tensors
 * of a space and the bytes of one of them. A run in this process reads its store directly
 * (tui_memview_store_new); a served run's viewer reads the same through the socket, a
 * space's list and a window of a tensor's bytes at a time, fetched when asked for
 * (tui/source/source_remote.c). The served run answers those questions through this interface
 * too, so both paths show the same thing.
 */
#ifndef TUI_MEMVIEW_H
#define TUI_MEMVIEW_H

#include "sim/data/tensor.h"

#include <stddef.h>
#include <stdint.h>

struct sim_memstore;
struct sim_chip;

/* A tensor of a space, as the pane lists it. */
struct tui_mem_entry {
    uint64_t addr;
    int dtype; /* enum sim_dtype */
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    uint64_t nbytes;
    const char *writer;  /* the op that last wrote it, or NULL; borrowed, untrusted text */
    double t_ns;         /* when, NaN when unknown */
    const char *pattern; /* a pattern region's pattern ("pattern zero", "fill 0x3c00"), or
                            NULL for an ordinary tensor or a region written over since (its
                            values are then the region's with the writes on top); borrowed */
    const char *name;    /* the kernel argument it is part of ("kcache"), or NULL; borrowed */
};

struct tui_memview;

struct tui_memview_ops {
    /* Moves whenever anything below would answer differently (a write to the store, an
     * answer that arrived). */
    uint64_t (*generation)(struct tui_memview *v);
    size_t (*space_count)(struct tui_memview *v);
    /* Space i's name (borrowed until the next call) and how many tensors it holds. */
    const char *(*space_name)(struct tui_memview *v, size_t i);
    size_t (*space_len)(struct tui_memview *v, size_t i);
    /* The tensors of space i sorted by address: *n entries, borrowed until the next call
     * of entries or a change of generation. */
    const struct tui_mem_entry *(*entries)(struct tui_memview *v, size_t i, size_t *n);
    /* Bytes [off, off + n) of the tensor at addr in space i into buf: 1 done, 0 not here
     * yet (asked for: the generation moves when they come), -1 no such tensor or range. */
    int (*read)(struct tui_memview *v, size_t space, uint64_t addr, uint64_t off, size_t n,
                void *buf);
    /* Optional: the op whose result phase 2 computes into bytes [off, off + n) of the tensor
     * at addr (a store of a result not computed yet), or NULL when they are known. */
    const char *(*pending)(struct tui_memview *v, size_t space, uint64_t addr, uint64_t off,
                           size_t n);
    void (*free)(struct tui_memview *v);
};

/* Embedded first in each implementation. */
struct tui_memview {
    const struct tui_memview_ops *ops;
};

/* The memory of a simulation in this process: store is borrowed and must outlive the
 * view. */
struct tui_memview *tui_memview_store_new(struct sim_memstore *store);

/* The memory of a chip in this process (borrowed, must outlive the view): its store, with
 * each tensor's bytes as the chip reads them (the writes laid over a pattern region painted
 * on it), the names of the kernel arguments they belong to, and pending results. */
struct tui_memview *tui_memview_chip_new(struct sim_chip *chip);

/* Free a view (NULL is a no-op). */
void tui_memview_free(struct tui_memview *v);

#endif
