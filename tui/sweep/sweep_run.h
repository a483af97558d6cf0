/*
 * Running the points of a sweep directory (tui/sweep/sweep.h) through an engine that exists
 * already: GNU parallel (local job slots, or ssh hosts with --sshlogin; its joblog gives
 * --resume and --retries), a Slurm job array (a script for sbatch, submitted on request),
 * or, with no dependency, a plain local process pool. Every engine runs the same task in
 * the sweep directory, `npuscope sweep --run-point points/ID`, which runs the point
 * (`npuscope run --headless`), writes its summary and, last, its result.json; progress is
 * read from those files, so it looks the same whichever engine runs the points. No
 * terminal I/O: progress goes to a callback.
 */
#ifndef TUI_SWEEP_RUN_H
#define TUI_SWEEP_RUN_H

#include "sim/util/diag.h"

#include <stdbool.h>
#include <stddef.h>

enum tui_sweep_engine {
    TUI_SWEEP_ENGINE_PARALLEL, /* GNU parallel (Debian package parallel) */
    TUI_SWEEP_ENGINE_SLURM,    /* a Slurm job array (sbatch, Debian package slurm-client) */
    TUI_SWEEP_ENGINE_LOCAL,    /* a process pool of our own: fork, exec, waitpid */
};

/* "parallel", "slurm", "local". */
const char *tui_sweep_engine_name(enum tui_sweep_engine e);

/* The engine called name; returns 0, or -1 for an unknown name. */
int tui_sweep_engine_parse(const char *name, enum tui_sweep_engine *out);

/* True when GNU parallel is on PATH (not another program called parallel). */
bool tui_sweep_have_gnu_parallel(void);

/* True when an executable called name is on PATH. */
bool tui_sweep_have_program(const char *name);

/* Where a sweep stands, from the points' files. */
struct tui_sweep_progress {
    size_t total;       /* points in the sweep */
    size_t ok, failed;  /* points with a result */
    size_t running;     /* points started since the engine was, with no result yet */
    size_t done_before; /* points that had a result when the engine started */
    double elapsed;     /* seconds since the engine started */
    double eta;         /* seconds left, estimated; < 0 while unknown */
};

struct tui_sweep_run_opts {
    enum tui_sweep_engine engine;
    unsigned jobs;        /* -j: points at once (per host for parallel; the array's %MAX
                             for Slurm); 0: the engine's default (one per CPU) */
    unsigned retries;     /* tries of a failing point (0 or 1: one) */
    const char *sshlogin; /* parallel: the hosts (GNU parallel's --sshlogin), or NULL */
    const char *bin;      /* the npuscope the tasks run: NULL for self on this machine,
                             "npuscope" (found on PATH) on ssh hosts and Slurm nodes */
    const char *self;     /* the running binary (/proc/self/exe) */
    bool resume;          /* run only the points that are not done */
    bool submit;          /* slurm: submit the script with sbatch */
    bool wait;            /* slurm: after submitting, wait for every task to end */
    /* called a few times a second while points run, and once at the end (may be NULL) */
    void (*progress)(void *ctx, const struct tui_sweep_progress *p, bool final);
    void *ctx;
};

/* What an engine did. */
struct tui_sweep_outcome {
    size_t started;    /* points handed to the engine */
    bool script_only;  /* slurm without --submit: the script was written, nothing ran */
    bool submitted;    /* slurm: sbatch accepted the job */
    char job_id[64];   /* slurm: its job id */
    char script[4096]; /* slurm: the script's path */
};

/*
 * Run the points ids (n of them, their directories points/ID in dir) through the engine
 * of o; with o->resume only those that are not done (for parallel: not in its joblog;
 * for the others: without a result.json). Returns 0 when the engine ran to its end (some
 * points may have failed: their result.json says so), or a negative sim_err with d
 * filled when the engine could not run (missing, refused the job, killed).
 */
int tui_sweep_run(const char *dir, const char *const *ids, size_t n,
                  const struct tui_sweep_run_opts *o, struct tui_sweep_outcome *out,
                  struct diag *d);

/*
 * The Slurm batch script of a sweep: a job array over the indices of array (sbatch's
 * --array syntax, "%MAX" included), each task running `CMD sweep --run-point
 * points/ID` in absdir, ID being $SLURM_ARRAY_TASK_ID zero-padded to id_width digits.
 * cmd is the npuscope the tasks run. Caller frees.
 */
char *tui_sweep_sbatch_script(const char *absdir, const char *array, int id_width, const char *cmd);

/* An sbatch --array value for the sorted indices idx: ranges joined by commas, and
 * "%max" when max > 0: {0,1,2,5} and 2 give "0-2,5%2". Caller frees. */
char *tui_sweep_array_spec(const size_t *idx, size_t n, unsigned max);

/*
 * The task of every engine: run the point in pdir (relative to the current directory,
 * the sweep's): `self run --headless -c pdir/chip.yaml -k SPEC (or -w FILE) -o
 * pdir/trace.json` with its output in pdir/run.log and pdir/err.log, then pdir/summary.json
 * (as npuscope summary --json writes it) and pdir/result.json: status, exit status, the
 * first error line of a failed run, the npuscope version, the host, the wall time.
 * Returns the exit status the task ends with (0 the point ran, 1 it failed), or a
 * negative sim_err with d filled when pdir is not a point.
 */
int tui_sweep_run_point(const char *self, const char *pdir, struct diag *d);

#endif
