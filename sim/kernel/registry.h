/*
 * The kernel registry's side for the plug-in loader (loader.c), defined in kernel.c: adding
 * a plug-in's kernels and saying where a kernel came from. Private to the binary: a
 * plug-in declares its kernels in its descriptor (plugin.h) instead.
 */
#ifndef SIM_REGISTRY_H
#define SIM_REGISTRY_H

#include "sim/kernel/kernel.h"
#include "sim/util/diag.h"

#include <stddef.h>

/*
 * Add k (a plug-in's kernel, borrowed: it must outlive the process's use of the registry)
 * to the registry, with origin (copied) the file it came from. Checks it first: a name that
 * is a C identifier, a fn, parameters with a type, a doc and a default of that type, at
 * most SIM_KPARAM_MAX - 2 of them. Returns 0, or -SIM_EINVAL with d saying what is wrong
 * ("kernel 'vector_add' is already defined (built in)"). A kernel without a setup runs
 * from workloads only (-k refuses it).
 */
int sim_kernel_register(const struct sim_kernel *k, const char *origin, struct diag *d);

/* Drop the kernels registered after the first n of sim_kernel_count (a plug-in that failed
 * half-way through registering its kernels). */
void sim_kernel_unregister_from(size_t n);

/* The file a registered kernel came from, or NULL for a built-in one. */
const char *sim_kernel_origin(const struct sim_kernel *k);

#endif
