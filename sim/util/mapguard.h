/*
 * Files mapped for reading that may be cut short while they are mapped: a trace rewritten in
 * place (cp over it, an editor, a run killed as it rewrote it) while npuscope views it. A
 * read of a page past the file's new end raises SIGBUS, which would end the process. Within a
 * guarded mapping that page is replaced by a page of zeros and the read goes on: what the
 * reader finds there is not JSON, and it says so as of any other bad text. A process that
 * crashes for its own reasons still does (the signal goes on to the handler there was).
 *
 * The handler for SIGBUS is installed at the first sim_mapguard_add; a handler installed
 * later for SIGBUS (the terminal's, which restores the screen on a crash) must call
 * sim_mapguard_fault first.
 */
#ifndef SIM_MAPGUARD_H
#define SIM_MAPGUARD_H

#include <stdbool.h>
#include <stddef.h>

/* How many mappings may be guarded at once; past it, sim_mapguard_add returns false. */
enum { SIM_MAPGUARD_MAX = 16 };

/* Guard the n bytes mapped at p (read-only, private); false when there is no room left. */
bool sim_mapguard_add(const void *p, size_t n);

/* Stop guarding the mapping at p, before it is unmapped (no mapping there: nothing). */
void sim_mapguard_remove(const void *p);

/* For a SIGBUS at addr (async-signal-safe): when addr is in a guarded mapping, its page is
 * replaced by zeros and true is returned (the faulting read may go on); false otherwise. */
bool sim_mapguard_fault(const void *addr);

/* Pages replaced so far: how often a guarded file was found cut short. */
unsigned long sim_mapguard_cuts(void);

#endif
