/*
 * Call sites of kernel code: the file, function and line a tl call was made from
 * (sim/kernel/tl.h, "Call sites"), interned in one table for the whole process so that an
 * op record carries a 32-bit site id instead of strings. Id 0 means "no call site" (an op
 * no kernel line issued: a host message, an op of a kernel built without call sites).
 * Sites are interned once per call site of the source and never freed; the strings are
 * copied. Single-threaded, like the simulator that interns them.
 */
#ifndef SIM_SRCSITE_H
#define SIM_SRCSITE_H

#include <stdbool.h>
#include <stdint.h>

/* A call site as interned. */
struct sim_srcsite {
    const char *file; /* as the compiler named it (__FILE__), e.g. "sim/kernels/gemm.c" */
    const char *func; /* the function, or "" */
    int line;
};

/* The id of the site (file, func, line), interned (copied) on first sight: the same
 * file, function and line give the same id. Never 0. file and func may be NULL (""). */
uint32_t sim_srcsite_intern(const char *file, const char *func, int line);

/* The site of id, or NULL for 0 and ids never handed out. Valid for the process. */
const struct sim_srcsite *sim_srcsite_get(uint32_t id);

/* The last component of path (after its last '/'): what the trace writes, "gemm.c". */
const char *sim_srcsite_basename(const char *path);

#endif
