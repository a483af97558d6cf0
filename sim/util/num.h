/*
 * Numbers read from text npuscope did not write itself (the kernel's files under /proc,
 * another process's lines, the environment): strtoull and strtol with where they ended and
 * errno checked, which sscanf and atoi do not tell.
 */
#ifndef SIM_NUM_H
#define SIM_NUM_H

#include <stdbool.h>

/* The unsigned number in base after the blanks at *s, at most max: into *v, *s moved past
 * it; false (both left as they were) when there is none, it is signed or out of range. */
bool sim_take_unsigned(const char **s, int base, unsigned long long max, unsigned long long *v);

/* The same for a decimal int, signed or not. */
bool sim_take_int(const char **s, int *v);

#endif
