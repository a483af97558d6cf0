/*
 * What if one resource were faster or slower: a causal experiment, as Coz's profiles are,
 * but with real re-runs. The workload a trace ran (its run_metadata says which kernel or
 * workload file, its config_snapshot on what chip) is simulated again with one resource
 * of the chip config scaled at a time, and the time of the run and of each kernel launch
 * is measured. The runs go to a pool of forked worker processes (two by default: fork, a
 * pipe each, waitpid; nothing more), so the whole experiment costs about runs / workers
 * simulations. No terminal I/O: npuscope whatif (tui/cli/cli_whatif.c) prints the result,
 * the bottleneck pane runs it in the background (tui/panes/bottleneck.c), and the verdict
 * is checked against it (trace_verdict_check, trace/verdict/verdict.h).
 *
 * A factor is a speed-up: 2 doubles a bandwidth or a throughput and halves a latency or a
 * setup time; 0.5 does the opposite.
 */
#ifndef TUI_WHATIF_H
#define TUI_WHATIF_H

#include "sim/data/value.h"
#include "sim/util/diag.h"
#include "trace/model/model.h"
#include "trace/verdict/verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The resources an experiment may change, in the order they are listed. */
enum tui_whatif_res {
    TUI_WHATIF_HBM_BW,    /* "hbm_bw": memory.hbm.gbps */
    TUI_WHATIF_HBM_LAT,   /* "hbm_lat": memory.hbm.latency_ns */
    TUI_WHATIF_DMA_SETUP, /* "dma_setup": pe.dma.setup_ns */
    TUI_WHATIF_DMA_BW,    /* "dma_bw": pe.dma.gbps */
    TUI_WHATIF_LINK_PE,   /* "link_pe": noc.pe.gbps */
    TUI_WHATIF_LINK_CUBE, /* "link_cube": noc.cube.gbps */
    TUI_WHATIF_LINK_CC,   /* "link_cube_cube": noc.cube_cube.gbps (chips of 2 cubes or more) */
    TUI_WHATIF_LINK_SS,   /* "link_sip_sip": noc.sip_sip.gbps (chips of 2 sips or more) */
    TUI_WHATIF_TE,        /* "te": pe.gemm.macs_per_cycle, every dtype */
    TUI_WHATIF_VE,        /* "ve": pe.math.lanes */
    TUI_WHATIF_HOST,      /* "host": noc.host.gbps */
    TUI_WHATIF_RES_COUNT,
};

/* A resource's key on the command line ("hbm_bw"), its name ("HBM bandwidth") and the
 * verdict's bound it is part of. */
const char *tui_whatif_res_key(enum tui_whatif_res r);
const char *tui_whatif_res_name(enum tui_whatif_res r);
enum trace_bound tui_whatif_res_bound(enum tui_whatif_res r);

/* The resource called key; returns 0, or -1 for an unknown key. */
int tui_whatif_res_parse(const char *key, enum tui_whatif_res *out);

/* What to run again. */
struct tui_whatif_workload {
    struct sim_value *chip; /* owned: the chip config tree */
    char *kernel_spec;      /* owned: "NAME[:ARGS]" for -k, or NULL */
    char *workload;         /* owned: a workload file, or NULL (both NULL: the demo) */
    char *what;             /* owned: for messages ("kernel:llm_decode on npu-large") */
    char **plugins;         /* owned: plug-in files loaded before the runs (the kernels */
    size_t nplugins;        /* they register run as the built-in ones) */
};

/*
 * What m's trace ran, from its run_metadata and config_snapshot (trace_dir: the directory
 * of its file, where a relative workload path is also looked for; may be NULL), with the
 * plug-in files its run_metadata.plugins names. Returns 0,
 * or a negative sim_err with d filled when the trace does not say what ran in a way that
 * can be run again (another producer's trace, a workload file that is gone, a config
 * snapshot that is not a chip config).
 */
int tui_whatif_workload_from_model(const struct trace_model *m, const char *trace_dir,
                                   struct tui_whatif_workload *w, struct diag *d);
/* Free what w owns (w itself is the caller's). */
void tui_whatif_workload_fini(struct tui_whatif_workload *w);
/* Replace w's plug-in files with files[0 .. n) (copied). */
void tui_whatif_workload_set_plugins(struct tui_whatif_workload *w, const char *const *files,
                                     size_t n);

/* Most factors and kernel launches one experiment measures. */
enum { TUI_WHATIF_MAX_FACTORS = 8 };

struct tui_whatif_opts {
    double factors[TUI_WHATIF_MAX_FACTORS]; /* speed-ups, each > 0 and not 1 */
    size_t nfactors;                        /* 0: 2 and 0.5 */
    unsigned resources;                     /* a bit per enum tui_whatif_res; 0: all */
    unsigned jobs;                          /* worker processes; 0: 2 */
    /* called after each run ends (may be NULL) */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *ctx;
};

/* A kernel launch of the workload (the verdict's launches that ran a kernel). */
struct tui_whatif_launch {
    char *name; /* owned: the kernel */
    uint32_t occurrence;
    int32_t cmdq_id;
};

/* One run: the base (factor 1), one resource changed, or several together. */
struct tui_whatif_point {
    enum tui_whatif_res res; /* unused for the base; a joint point: its first resource */
    unsigned joint;          /* several resources at once: a bit per enum tui_whatif_res;
                                0: res alone */
    char *name;              /* owned: a joint point's name ("HBM bandwidth + cube links") */
    double factor;           /* 1 for the base */
    double cycles;           /* the run's length; NAN when it failed */
    double *launch;          /* owned: cycles per launch (the result's order), NAN unknown */
    char *error;             /* owned: why the run failed, or NULL */
};

struct tui_whatif_result {
    char *what;                         /* owned: the workload, for the heading */
    double clock_ghz;                   /* of the base config */
    struct tui_whatif_launch *launches; /* owned */
    size_t nlaunches;
    struct tui_whatif_point base;
    struct tui_whatif_point *points; /* owned: each resource with each factor, in
                                        resource order then factor order */
    size_t npoints;
    unsigned workers;
    double seconds; /* wall time of the whole experiment */
};

/*
 * Run the experiment on w (its plug-ins loaded first, into this process: the same file
 * loaded before is a no-op): the base, then each resource of o (those the chip has: no
 * cube-to-cube link on a chip of one cube, nothing to scale in a time of 0) at each factor.
 * Resources that share a limit (each costing the run or a launch 10% or more when slowed,
 * as an HBM and the link as wide as it do: speeding up either alone gains nothing) are
 * then sped up together, by the largest factor, in one more run per such set.
 * Returns 0 and fills r (free with tui_whatif_result_fini; a run that failed has its
 * error), or a negative sim_err with d filled when a plug-in does not load, the base
 * cannot be run or a worker cannot be started.
 */
int tui_whatif_run(const struct tui_whatif_workload *w, const struct tui_whatif_opts *o,
                   struct tui_whatif_result *r, struct diag *d);
void tui_whatif_result_fini(struct tui_whatif_result *r);

/* A point's name: its resource's, or a joint point's. */
const char *tui_whatif_point_name(const struct tui_whatif_point *p);

/* The relative change of a point's time against the base's (-0.41: 41% shorter): of the
 * run for launch SIZE_MAX, else of launch i. NAN when unknown. */
double tui_whatif_change(const struct tui_whatif_result *r, const struct tui_whatif_point *p,
                         size_t launch);

/*
 * The experiment's answer per launch and for the run, for trace_verdict_check: the
 * resource whose largest speed-up (factor > 1) shortened it most, when it did by 1% or
 * more. Fills out[0 .. nlaunches + 1) (the run first); returns how many.
 */
size_t tui_whatif_checks(const struct tui_whatif_result *r, struct trace_verdict_check *out,
                         size_t max);

/* The result as a value (npuscope whatif --json) and back (a background experiment's
 * answer read by the pane). from_value returns 0, or -1 when v is not such a value. */
struct sim_value *tui_whatif_to_value(const struct tui_whatif_result *r);
int tui_whatif_from_value(const struct sim_value *v, struct tui_whatif_result *r);

/* ---- in the background ---------------------------------------------------------------- */

/* An experiment run by a forked process of its own (a process group with its workers),
 * read without blocking: what a viewer runs while its user goes on. It and its workers run
 * at the lowest priority (nice TUI_WHATIF_BG_NICE): the analyses the user asks for meanwhile
 * (a critical path, the layers) take the cores first, the experiment the rest, which on an
 * idle machine is all of them. */
struct tui_whatif_bg;

enum { TUI_WHATIF_BG_NICE = 19 };

/* Start the experiment on w (copied; o's callbacks are ignored) in the background.
 * Returns 0 and *out, or a negative sim_err with d filled when no process can be started. */
int tui_whatif_bg_start(const struct tui_whatif_workload *w, const struct tui_whatif_opts *o,
                        struct tui_whatif_bg **out, struct diag *d);
/*
 * Read what the experiment has written so far, without blocking. Returns 1 while it runs
 * (*done of *total runs ended), 0 once it has ended and r is filled (free with
 * tui_whatif_result_fini; call no more), or -1 with d filled when it failed.
 */
int tui_whatif_bg_poll(struct tui_whatif_bg *b, size_t *done, size_t *total,
                       struct tui_whatif_result *r, struct diag *d);
/* Stop the experiment if it still runs (its workers too) and free b (NULL is a no-op). */
void tui_whatif_bg_free(struct tui_whatif_bg *b);

#endif
