/*
 * Big blocks freed behind the thread everyone waits for. Freeing an array of hundreds of
 * megabytes unmaps its pages there and then: tens of milliseconds an analysis's caller waits
 * for once its result is made. Handed here, the blocks are freed on a thread of their own
 * while the caller goes on. For blocks of tens of megabytes and more: a small one costs
 * more to hand over than to free. Hand them over once the analysis that made them is done:
 * the unmapping holds the process's map, so a thread that goes on allocating and faulting
 * big arrays meanwhile waits for it.
 */
#ifndef SIM_RELEASE_H
#define SIM_RELEASE_H

#include <stdbool.h>
#include <stddef.h>

enum { SIM_RELEASE_MAX = 16 };

/* Blocks gathered to be freed together (zero-initialised: none). */
struct sim_release {
    void *p[SIM_RELEASE_MAX];
    size_t n;
};

/* Add p (NULL: nothing) to r; past SIM_RELEASE_MAX blocks, p is freed at once. */
void sim_release_add(struct sim_release *r, void *p);

/* Free r's blocks: behind, on a new thread which nobody waits for (here when none can be
 * started), else here; r is empty after. */
void sim_release_go(struct sim_release *r, bool behind);

#endif
