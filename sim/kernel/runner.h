/*
 * The kernel runner (ADR-0020 D3's KernelRunner): the bridge between a kernel, a plain C
 * function calling sim/kernel/tl.h, and the engine. A launch on N PEs is a group of N kernel
 * instances, each with its own tl context (its PE, its view of the arguments, its TCM
 * allocator, its IPCQ inbox) and, once started, its own process: the coroutine the kernel
 * runs on. The runner never logs: the component hooks do (single source of truth).
 */
#ifndef SIM_RUNNER_H
#define SIM_RUNNER_H

#include "sim/chip/chip.h"
#include "sim/kernel/kernel.h"
#include "sim/program/workload.h"

#include <stddef.h>
#include <stdint.h>

struct sim_launch_group;

/*
 * The kernel instances of one launch of kernel k with the arguments of launch (borrowed:
 * must outlive the chip) on the global PEs pes[0..n) (rank i runs on pes[i]). cmdq_id
 * annotates their op records. The group is freed with the chip.
 */
struct sim_launch_group *sim_runner_group_new(struct sim_chip *chip, const struct sim_kernel *k,
                                              const struct sim_kernel_launch *launch,
                                              const int *pes, unsigned n, int64_t cmdq_id);

/* Start rank's kernel in a new process (named "KERNEL@PE"), at the current time. */
struct sim_proc *sim_runner_start(struct sim_launch_group *g, unsigned rank);

/* The tl context of rank (for tests). */
struct tl *sim_runner_tl(struct sim_launch_group *g, unsigned rank);

/*
 * Run kernel k once on global PE pe with the given arguments, outside any host program:
 * builds a one-PE group whose argument list is args (borrowed; its shards must outlive
 * the chip), and starts it. For tests and tools.
 */
struct sim_proc *sim_runner_run(struct sim_chip *chip, const char *name, sim_kernel_fn fn,
                                const struct kargs *args, int pe);

/* The kernel instance whose coroutine runs now on chip's engine, or NULL (between
 * processes, or another process runs). Reads only: a crash handler may call it. */
struct tl *sim_runner_current(const struct sim_chip *chip);

#endif
