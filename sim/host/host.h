/*
 * The host program and the IO_CPU (ADR-0012): a workload's messages are executed in
 * order on a chip, each one a request that crosses the host link into the target sip's
 * IO_CPU, is serviced there, and travels on along explicit routes:
 *
 *   MemoryWrite   host -> io_cpu -> ... -> the destination memory (HBM of the PE's cube, or
 *                 its TCM): the data, from a pattern or a host buffer, lands in the memory
 *                 store as a typed tensor; a completion goes back.
 *   MemoryRead    host -> io_cpu -> ... -> the source memory, and the bytes back to the
 *                 host; the response carries their count and FNV-1a checksum.
 *   KernelLaunch  host -> io_cpu, which fans out to every PE named by the shards' (sip,
 *                 cube, pe) tags: io_cpu -> m_cpu of the PE's cube -> pe_cpu, where the
 *                 kernel instance runs on its own coroutine; each instance's completion
 *                 goes back to the io_cpu, which answers per failure_policy (fail_fast:
 *                 at the first failed instance; collect_all: when all are done, naming
 *                 every failure).
 *
 * Responses are matched to requests by (correlation_id, request_id) and kept in program
 * order; every hop of a request (links with their times, services) is recorded.
 *
 * Error codes of failed completions: E_NO_DEVICE (target_device names no sip), E_NO_PE
 * (a placement tag names no PE of the chip), E_BAD_ADDRESS (a PA beyond the PE's window),
 * E_NO_KERNEL (no built-in kernel of that name), E_BAD_BUFFER (a host buffer that cannot
 * be read or has the wrong size), E_KERNEL (a kernel instance failed).
 */
#ifndef SIM_HOST_H
#define SIM_HOST_H

#include "sim/chip/chip.h"
#include "sim/program/host_buffers.h"
#include "sim/kernel/kernel.h"
#include "sim/program/workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- execution --------------------------------------------------------------------------- */

/* A failed kernel instance. */
struct sim_host_kernel_error {
    char *kernel;  /* owned */
    char *pe;      /* owned: "sip0.cube0.pe1" */
    char *message; /* owned: the diagnostic, naming kernel, PE, call and rule */
};

/* The outcome of one request. */
struct sim_host_result {
    const struct sim_host_msg *msg;       /* borrowed from the workload */
    size_t index;                         /* position in the program (cmdq_id) */
    bool done;                            /* its response arrived */
    struct sim_host_response resp;        /* ids, completion, read stats */
    struct sim_hop_log hops;              /* every hop of the request and its response */
    double t_issue_ns, t_done_ns;         /* the host sent it / got the response */
    unsigned pes;                         /* KernelLaunch: instances launched */
    struct sim_host_kernel_error *errors; /* KernelLaunch: failed instances, in PE order */
    size_t n_errors;
};

struct sim_host;

/*
 * Start executing wl on chip: a host process is spawned (it runs as the engine is
 * driven). wl and bufs (may be NULL) are borrowed and must outlive the chip. The host
 * state is freed with the chip.
 */
struct sim_host *sim_host_start(struct sim_chip *chip, const struct sim_workload *wl,
                                const struct sim_host_buffers *bufs);

/* Make kernel k (borrowed, static) launchable by name in this host program, ahead of the
 * built-in registry: for tests and tools that bring kernels of their own. */
void sim_host_add_kernel(struct sim_host *h, const struct sim_kernel *k);

/* True once the last response has arrived. */
bool sim_host_done(const struct sim_host *h);

/* Requests issued so far, and the results of the program's requests (in program order;
 * a result is done once its response arrived). */
size_t sim_host_issued(const struct sim_host *h);
size_t sim_host_result_count(const struct sim_host *h);
const struct sim_host_result *sim_host_result(const struct sim_host *h, size_t i);

/* The result answering (correlation_id, request_id), or NULL. */
const struct sim_host_result *sim_host_find(const struct sim_host *h, const char *correlation_id,
                                            const char *request_id);

#endif
