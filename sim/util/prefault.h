/*
 * Fresh pages faulted in ahead of their first write, on a core that would otherwise be idle.
 * A big analysis writes hundreds of megabytes of new arrays once; each first touch of a page
 * costs a fault and the page's clearing, which a machine (a virtual one above all) may take
 * longer to give than the analysis takes to fill it. Faulting them in on a second core while
 * the first does work that does not touch them takes that off the thread everyone waits for.
 * MADV_POPULATE_WRITE (Linux 5.14) leaves what is in a page as it is: the owner may write
 * the array meanwhile. Where the system cannot, nothing is done and the writer faults them
 * in as before.
 */
#ifndef SIM_PREFAULT_H
#define SIM_PREFAULT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* How much one call faults in at most between two looks at the stop flag. */
#define SIM_PREFAULT_STEP ((size_t)1 << 20)

/* Fault in the whole pages inside the n bytes at p, a step at a time, until *stop (NULL:
 * never) is set; false when the system cannot (the rest is left to the writer). */
bool sim_prefault(void *p, size_t n, const atomic_bool *stop);

enum { SIM_PREFAULT_RANGES = 4 };

/* Ranges faulted in, in order, on a thread of their own (sim_prefault_start). */
struct sim_prefault {
    struct {
        void *p;
        size_t n;
    } r[SIM_PREFAULT_RANGES];
    unsigned nr;
    atomic_bool stop;
    bool started;
    pthread_t th;
};

/* Start faulting in f's ranges (r[0 .. nr), set by the caller) on a new thread, which runs
 * only when a core would be idle otherwise (SCHED_IDLE): false when none could be started
 * (the writer faults them in). */
bool sim_prefault_start(struct sim_prefault *f);

/* Stop at the next step and wait for the thread (nothing when none was started): the pages
 * not faulted in yet are the writer's. */
void sim_prefault_stop(struct sim_prefault *f);

#endif
