/*
 * Verification (ADR-0020 D11): phase 2's results compared with a reference. Default mode
 * compares every output a host program reads back after a kernel launch with what the
 * kernel's reference computes from the launch's inputs as they were deployed, with the
 * per-dtype tolerances of D11 (numpy allclose: |got - expected| <= atol + rtol *
 * |expected|, NaN never equal; integer types exact). Debug mode (--verify=ops) checks
 * every op as phase 2 replays it: its result against a straightforward recomputation from
 * the inputs it read (with the same bounds: a GEMM's tolerance is widened by the forward
 * error bound of its k-term dot products, as the output check's is), and its inputs against what
 * phase 1 recorded in the op log (the input snapshots of math ops), and names the first op that
 * diverges.
 *
 * The report is a struct (the TUI shows it) and a text form (the command line prints it).
 * Nothing here prints.
 */
#ifndef SIM_VERIFY_H
#define SIM_VERIFY_H

#include "sim/util/diag.h"
#include "sim/data/dtype.h"
#include "sim/phase2/exec.h"
#include "sim/data/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_run;

/* ---- tolerances and comparison ------------------------------------------------------------ */

struct sim_verify_tol {
    double rtol, atol;
    bool exact; /* integer and bool types: equal values only */
};

/* The tolerance of D11 for dtype: f32 1e-5 / 1e-5, f16 1e-3 / 1e-3, bf16 1e-2 / 1e-2,
 * integers and bool exact. */
struct sim_verify_tol sim_verify_tolerance(enum sim_dtype dtype);

/* The comparison of one output with its expected value. */
struct sim_verify_output {
    char *name; /* owned */
    enum sim_dtype dtype;
    unsigned ndim;
    int64_t shape[SIM_MAX_DIMS];
    struct sim_verify_tol tol;
    bool pass;
    char *problem;      /* owned: why the tensors could not be compared element by element
                           (another dtype or shape), or NULL */
    size_t n_elements;  /* compared */
    size_t n_mismatch;  /* out of tolerance */
    double max_abs_err; /* over the pairs of finite values */
    double max_rel_err; /* |got - expected| / |expected|, over nonzero expected values */
    bool has_first;     /* the first mismatch: */
    size_t first_index; /* flat (row-major) index */
    int64_t first_multi[SIM_MAX_DIMS]; /* the same as a multi-index (ndim entries) */
    double first_got, first_expected;
    double first_tol; /* the tolerance of that element (D11's, plus its bound) */
    char *bound_what; /* owned: the forward error bound that widened D11's tolerance (what
                         the reference said it is), or NULL when D11's alone applied */
    double max_bound; /* the largest per-element bound */
};

/*
 * Compare got with expected (expected's dtype and shape are the reference's) into *out,
 * which the caller finalizes with sim_verify_output_fini. name is copied.
 */
void sim_verify_compare(const char *name, const struct sim_tensor *got,
                        const struct sim_tensor *expected, struct sim_verify_output *out);

/*
 * The same, element i's tolerance widened by bound[i] (the forward error bound of its
 * computation: |got - expected| <= atol + rtol * |expected| + bound[i]); bound NULL is
 * sim_verify_compare. what (copied) says what the bound is, for the report.
 */
void sim_verify_compare_bounded(const char *name, const struct sim_tensor *got,
                                const struct sim_tensor *expected, const double *bound,
                                const char *what, struct sim_verify_output *out);

void sim_verify_output_fini(struct sim_verify_output *o);

/* ---- checking op by op (--verify=ops) ------------------------------------------------------ */

/* The first op whose result diverged. */
struct sim_verify_op_failure {
    size_t index;       /* record index in the op log */
    char *op_name;      /* owned */
    char *component_id; /* owned */
    double t_start;     /* ns */
    char *what;         /* owned: what differs, e.g. "result element 0: got 2, expected 1" */
};

struct sim_verify_ops;

/* A new checker, to install as the executor's op hook (sim_verify_ops_hook, ctx the
 * checker). */
struct sim_verify_ops *sim_verify_ops_new(void);
void sim_verify_ops_free(struct sim_verify_ops *v);

/*
 * The op hook (a sim_exec_op_fn): checks one op, records the first failure and returns 1
 * then (which stops the replay), else 0. Checks: a copy's result holds its source's bytes;
 * a GEMM's and a math op's result agree with a recomputation in double from the inputs
 * (GEMMs within the D11 tolerance plus gamma_k sum |a b|, sim_kref_gamma, the bound of a
 * k-term dot product in the accumulation dtype, as the output check uses); a math
 * op's input agrees byte for byte with its phase-1 snapshot when no op replayed in phase 2
 * produced it (else the last op that wrote it is named). The recomputation is naive: a
 * debug mode, slow on large GEMMs.
 */
int sim_verify_ops_hook(void *ctx, const struct sim_exec_op_data *op);

/* Ops checked so far, and those with nothing to check against. */
size_t sim_verify_ops_checked(const struct sim_verify_ops *v);
/* The first failure, or NULL. */
const struct sim_verify_op_failure *sim_verify_ops_failure(const struct sim_verify_ops *v);

/* ---- launches: their inputs as deployed, their outputs as read back ------------------------ */

struct sim_launch_arg {
    char *name; /* owned: its name in the built-in kernel's argument table, else (a tensor)
                   the workload's label of it (its MemoryWrite's debug_label), else "argN" */
    bool is_tensor;
    bool is_output;              /* a MemoryRead after the launch reads (part of) it back */
    struct sim_tensor *deployed; /* owned: the whole tensor when the launch started, read from
                                    the HBM of its shards' PEs (NULL for a scalar) */
    struct sim_tensor *result;   /* owned: an output read back from phase 2's HBM, or NULL */
    bool pending_input;          /* part of it was a phase-1 pending result when the launch
                                    started (its deployed data is not the real input) */
    enum sim_dtype scalar_dtype;
    int64_t i;
    double f;
};

struct sim_launch {
    char *kernel;      /* owned: kernel_ref.name */
    size_t host_index; /* the KernelLaunch's place in the host program */
    unsigned npes;     /* PEs it was fanned out to */
    struct sim_launch_arg *args;
    size_t n_args;
};

struct sim_verify_capture;

/*
 * Watch run r (before it runs) for kernel launches: when the first op of one starts, its
 * tensor arguments are read from the memory store (the inputs as deployed: the host has
 * finished the messages before the launch) and its outputs identified (the tensors a later
 * MemoryRead reads back). A kernel whose very first call stores into one of its own inputs
 * would show that input as stored. A launch that logs no op is not seen.
 * Costs nothing until a launch starts; free after the run with sim_verify_capture_free
 * (the run must still exist).
 */
struct sim_verify_capture *sim_verify_capture_attach(struct sim_run *r);
void sim_verify_capture_free(struct sim_verify_capture *c);

/* Launches seen, in order. Borrowed. */
size_t sim_verify_capture_count(const struct sim_verify_capture *c);
const struct sim_launch *sim_verify_capture_launch(const struct sim_verify_capture *c, size_t i);

/* ---- phase 2 of a run and its report -------------------------------------------------------- */

struct sim_verify_opts {
    bool compare;              /* compare outputs with the kernels' references */
    bool ops;                  /* check op by op too (--verify=ops) */
    struct sim_exec_opts exec; /* the executor's options (threads, test hooks) */
};

/* What verification found. */
struct sim_verify_report {
    bool pass;                  /* no mismatch anywhere (outputs without a reference do not fail) */
    struct sim_exec_stats exec; /* the replay */
    bool stopped;               /* the replay stopped at the first diverging op */

    struct sim_verify_output *outputs; /* owned */
    size_t n_outputs;
    char **notes; /* owned: outputs that could not be verified and why ("kernel 'gemm' has
                     no reference") */
    size_t n_notes;

    bool ops_mode;
    size_t ops_checked;
    bool op_failed;
    struct sim_verify_op_failure first_op; /* valid when op_failed */
};

void sim_verify_report_fini(struct sim_verify_report *r);

/*
 * Phase 2 of run r (finished): replay its op log with the executor (on a snapshot of its
 * memory store), then read back the outputs of every launch cap saw into their result
 * tensors, and with o->compare compare them with each kernel's reference. Fills *rep
 * (finalize with sim_verify_report_fini). Returns 0, or a negative sim_err with d filled
 * when the replay failed (a malformed record, a missing input).
 */
int sim_verify_phase2(struct sim_run *r, struct sim_verify_capture *cap,
                      const struct sim_verify_opts *o, struct sim_verify_report *rep,
                      struct diag *d);

/*
 * The report as text, one line per output (name, dtype, shape, errors, tolerance,
 * PASS/FAIL, the first mismatch with its multi-index and both values), a line per note,
 * the op check in ops mode, and a last line "verify: PASS" or "verify: FAIL". Untrusted
 * names are escaped. Returns a new string (the caller frees it).
 */
char *sim_verify_report_text(const struct sim_verify_report *r);

#endif
