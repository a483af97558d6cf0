/*
 * Pending bindings of one memory space (ADR-0020 D3): disjoint byte ranges, each bound to
 * the compute op whose result will fill it in phase 2. A tl_store of a pending result binds
 * its destination; a later write or binding of the range replaces what it covers; a load of
 * a bound range gets a pending handle. A long LLM decode keeps hundreds of thousands of KV
 * cache rows bound for the whole run, so the ranges live in blocks of a sorted order (a
 * B+-tree of two levels): setting, clearing and finding cost O(log n + a block), never a
 * shift of the whole set.
 */
#ifndef SIM_CHIP_BINDINGS_H
#define SIM_CHIP_BINDINGS_H

#include <stddef.h>
#include <stdint.h>

struct sim_bindings;

/* An empty set. */
struct sim_bindings *sim_bindings_new(void);

/* Free the set. NULL is a no-op. */
void sim_bindings_free(struct sim_bindings *b);

/* Unbind [addr, addr + n): ranges partly inside keep their parts outside. */
void sim_bindings_clear(struct sim_bindings *b, uint64_t addr, uint64_t n);

/* Bind [addr, addr + n) (n 0 counts as 1) to op, replacing what it covers. op is borrowed
 * and must outlive the set (the chip passes its interned names). */
void sim_bindings_set(struct sim_bindings *b, uint64_t addr, uint64_t n, const char *op);

/* The op of the first range overlapping [addr, addr + n) (n 0 counts as 1), or NULL. */
const char *sim_bindings_find(const struct sim_bindings *b, uint64_t addr, uint64_t n);

/* Number of ranges. */
size_t sim_bindings_count(const struct sim_bindings *b);

#endif
