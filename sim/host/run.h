/*
 * A run: a chip config, a host program (a workload file, a built-in kernel with generated
 * data, or the embedded demo) and the chip instance executing it, driven by the caller
 * (headless to the end, or a batch at a time by the TUI). When it is over, a summary:
 * simulated time, events, per component its busy time and utilization, bytes per memory
 * and link, and every completion that failed. Nothing here prints.
 */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include "sim/chip/chip.h"
#include "sim/chip/config.h"
#include "sim/util/diag.h"
#include "sim/engine/engine.h"
#include "sim/host/host.h"
#include "sim/kernel/kernel.h"
#include "sim/program/workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_run_opts {
    const char *chip_file;             /* chip config YAML, or NULL for the embedded default */
    const struct sim_value *chip_tree; /* a chip config as a value tree (a trace's
                                          config_snapshot: its clock_ghz at the top is
                                          ignored), used instead of chip_file, which then
                                          only names it in diagnostics; NULL: none */
    const char *workload_file;         /* workload YAML, or NULL */
    const char *kernel_spec;           /* "NAME[:key=value,...]", or NULL; with no workload either,
                                          the embedded demo workload runs */
    size_t stack_size;                 /* coroutine stacks (0: the engine's default) */
    bool real_data;                    /* phase 2 will run (--verify, --dump): a kernel's data=auto
                                          is random, and the data must fit in memory_limit */
    uint64_t memory_limit;             /* bytes the run's data may hold in memory; 0: half of the
                                          physical memory (sim_workload_memory_limit) */
};

struct sim_run;

/*
 * Load the config and the host program and build the chip, ready to run (nothing has run
 * yet). Returns 0 and *out (free with sim_run_free), or a negative sim_err with d filled:
 * a bad chip or workload file (file, line, column, key), an unknown kernel or bad -k
 * argument; -SIM_ELIMIT, before any data is made, when with real_data the whole data as
 * phase 2 holds it would pass the memory limit.
 */
int sim_run_new(const struct sim_run_opts *o, struct sim_run **out, struct diag *d);

void sim_run_free(struct sim_run *r);

/* The data a built-in kernel's generated launch got (the `data` parameter), or NULL when
 * the run is not of -k. Borrowed. */
const struct sim_kdata_info *sim_run_kdata(const struct sim_run *r);

/* Borrowed parts. */
struct sim_chip *sim_run_chip(const struct sim_run *r);
const struct sim_config *sim_run_config(const struct sim_run *r);
const struct sim_workload *sim_run_workload(const struct sim_run *r);
const struct sim_host *sim_run_host(const struct sim_run *r);

/*
 * Phase 2 will not run: the op log takes no snapshots (ADR-0052 D4's timing-only mode) and
 * keeps no record once its observers have seen it, so a run's memory does not grow with
 * its op count. Call before the first event.
 */
void sim_run_timing_only(struct sim_run *r);

/* "after N op records, at T us simulated": how far r got, for a fatal message
 * (sim_set_fatal_where). Allocates nothing. */
void sim_run_progress(char *buf, size_t size, void *r);

/* Drive the engine (see sim_engine_run); returns the events processed. */
uint64_t sim_run_advance(struct sim_run *r, enum sim_run_mode mode, uint64_t arg);

/* True when nothing is left to run (the engine's queue is empty). */
bool sim_run_over(const struct sim_run *r);

/* Host requests answered so far, and in all. */
size_t sim_run_requests_done(const struct sim_run *r);
size_t sim_run_requests(const struct sim_run *r);

/* ---- the summary --------------------------------------------------------------------------- */

struct sim_run_component {
    const char *id; /* borrowed */
    enum sim_node_kind kind;
    double busy_ns;       /* a memory: its port's data phase; else busy_cycles in ns */
    uint64_t busy_cycles; /* the union of its ops' and spans' intervals (its trace track's) */
    double utilization;   /* a memory: busy_ns / sim_ns; else busy_cycles / cycles, 0..1 */
    uint64_t msgs;
    uint64_t bytes_read, bytes_written;
};

struct sim_run_link {
    const char *name; /* borrowed */
    enum sim_link_class cls;
    uint64_t bytes;
    double busy_ns;     /* time with at least one transfer on it */
    double utilization; /* bytes / (bandwidth x the run's time): at most 1 */
};

/* A request whose completion failed (ok false), or a kernel instance that failed. */
struct sim_run_failure {
    char *request;    /* owned: "correlation_id/request_id" */
    char *error_code; /* owned */
    char *message;    /* owned, may be NULL */
    char *kernel;     /* owned: a kernel instance's failure: the kernel, else NULL */
    char *pe;         /* owned: its PE, else NULL */
};

struct sim_run_summary {
    double sim_ns;      /* simulated time at the end */
    uint64_t cycles;    /* sim_ns in cycles, rounded up: the trace's cycles_total */
    uint64_t events;    /* engine events processed */
    size_t op_records;  /* op log records */
    size_t requests;    /* host requests in the program */
    size_t completed;   /* requests answered */
    size_t failed;      /* answered with ok false */
    bool host_finished; /* every request answered */
    size_t blocked;     /* processes still waiting when the run ended (a deadlock) */
    struct sim_run_component *components; /* owned, in topology order */
    size_t n_components;
    struct sim_run_link *links; /* owned: the links that carried bytes */
    size_t n_links;
    struct sim_run_failure *failures; /* owned: failed requests, then failed instances */
    size_t n_failures;
    size_t kernel_failures; /* failures that are kernel instances */
};

/* The summary of r at its current state. */
void sim_run_summarize(const struct sim_run *r, struct sim_run_summary *s);
void sim_run_summary_fini(struct sim_run_summary *s);

#endif
