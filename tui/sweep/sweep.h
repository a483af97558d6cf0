/*
 * Design-space sweeps: a sweep file (YAML) names a base chip config, a kernel or a
 * workload, fixed settings and axes, and the kernel plug-ins it needs (plugins: a list of
 * files, loaded to check the points and passed to each point's run with --plugin). This module
 * expands it into points (a grid, or a listed set), applies each point's dotted chip config keys to
 * the base config's value tree, validates every point with the chip config's own loader and the
 * kernel's parameter table before anything runs, writes the sweep directory (each point's chip
 * config, DIR/points.jsonl) and reads the results back into one table. It does no
 * terminal I/O: callers show the diagnostics and the table (tui/cli/cli_sweep.c,
 * tui/panes/sweepview.c). Running the points is tui/sweep/sweep_run.h's. sweep.c reads the sweep
 * file; sweep_dir.c writes the directory and reads the results.
 *
 * A sweep directory:
 *
 *     DIR/sweep.yaml      the sweep file as given
 *     DIR/sweep.json      what the sweep is: its axes, the point count, the id width
 *     DIR/points.jsonl    one line per point: id, parameters, paths (relative to DIR)
 *     DIR/points/ID/      chip.yaml and point.json before the run; the run adds started,
 *                         trace.json, summary.json, run.log, err.log and, last,
 *                         result.json (status, first error line, npuscope version, host)
 */
#ifndef TUI_SWEEP_H
#define TUI_SWEEP_H

#include "sim/util/diag.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>

/* Most points one sweep may have. */
enum { TUI_SWEEP_MAX_POINTS = 100000 };

/* What a key of axes, points, chip_args or kernel_args sets. */
enum tui_sweep_key_kind {
    TUI_SWEEP_KEY_CHIP_KEY,   /* a dotted chip config key: "pe.dma.gbps" */
    TUI_SWEEP_KEY_KERNEL_ARG, /* a kernel parameter (no dot): "n" */
    TUI_SWEEP_KEY_CHIP,       /* "chip": the base chip config */
    TUI_SWEEP_KEY_KERNEL,     /* "kernel": the kernel */
    TUI_SWEEP_KEY_WORKLOAD,   /* "workload": a workload file */
};

/* The kind of key k as written. */
enum tui_sweep_key_kind tui_sweep_key_kind(const char *k);

/* An axis: a column of the results table. */
struct tui_sweep_axis {
    char *key; /* owned: as written ("pe.dma.gbps", "n") */
    enum tui_sweep_key_kind kind;
    int line, col; /* where the key is written in the sweep file (0 when unknown) */
};

/* One point of the sweep. */
struct tui_sweep_point {
    char id[16];              /* "0003": its directory is points/ID */
    struct sim_value *params; /* owned: a map axis key -> value as written, in axis order
                                 (a listed point may leave an axis out) */
    char *chip;               /* owned: the base chip, an embedded name or a path */
    char *kernel_spec;        /* owned: "NAME[:key=value,...]" for -k, or NULL */
    char *workload;           /* owned: the workload file (absolute), or NULL */
};

struct tui_sweep; /* opaque */

/*
 * Load the sweep file at path: parse it, expand its points and validate every one of
 * them (the chip config through sim_config_from_value, each kernel argument through the
 * kernel's parameter table, each workload file through its loader). Relative paths in the
 * file are relative to the file's directory. Returns 0 and *out (free with
 * tui_sweep_free), or a negative sim_err with d filled as one line naming the sweep
 * file's line and column and the key ("sweep.yaml:4:3: key 'pe.dma.gbsp': unknown key
 * (did you mean 'gbps'?)"). Nothing is written.
 */
int tui_sweep_load(const char *path, struct tui_sweep **out, struct diag *d);

/* The same for a sweep file's text (len bytes); file names it and relative paths are
 * relative to its directory. */
int tui_sweep_parse(const char *buf, size_t len, const char *file, struct tui_sweep **out,
                    struct diag *d);

/* Free a sweep (NULL is a no-op). */
void tui_sweep_free(struct tui_sweep *s);

/* The points, the axes (borrowed), and the width of the point ids. */
size_t tui_sweep_count(const struct tui_sweep *s);
const struct tui_sweep_point *tui_sweep_point(const struct tui_sweep *s, size_t i);
size_t tui_sweep_axes(const struct tui_sweep *s, const struct tui_sweep_axis **out);
const char *tui_sweep_file(const struct tui_sweep *s);

/*
 * The chip config tree of point i: the base config's tree with the sweep's chip_args and
 * the point's chip keys applied. Returns 0 and *out (the caller frees it), or a negative
 * sim_err with d filled.
 */
int tui_sweep_point_chip(const struct tui_sweep *s, size_t i, struct sim_value **out,
                         struct diag *d);

/*
 * Set the dotted key ("pe.dma.gbps") in the map root to a copy of v, creating the maps on
 * the way that are missing. Returns 0, or -SIM_EINVAL with d->msg saying which part of
 * the key is not a map (the caller adds the file and position).
 */
int tui_sweep_apply_key(struct sim_value *root, const char *dotted, const struct sim_value *v,
                        struct diag *d);

/* A value tree as YAML text (block maps, flow lists, strings double-quoted) that
 * sim_yaml_parse reads back to an equal tree. Caller frees. */
char *tui_sweep_yaml_text(const struct sim_value *root);

/*
 * Write the sweep directory dir for s (created with its parents when missing). A
 * directory that already holds a sweep is refused unless resume is set, and then only
 * when it holds this very sweep (the same points.jsonl). A directory that exists and is
 * not empty, but holds no sweep, is refused. Returns 0 or a negative sim_err with d
 * filled.
 */
int tui_sweep_write_dir(const struct tui_sweep *s, const char *dir, bool resume, struct diag *d);

/* "a=1, b=2": the parameters of a point for messages (untrusted text: escape it before
 * it reaches a terminal). Caller frees. */
char *tui_sweep_params_text(const struct sim_value *params);

/* ---- results --------------------------------------------------------------------------- */

enum tui_sweep_status {
    TUI_SWEEP_PENDING, /* no result yet (not run, or running) */
    TUI_SWEEP_OK,      /* the run finished with exit status 0 */
    TUI_SWEEP_FAILED,  /* the run failed: error holds its first error line */
};

/* The headline metrics of a point (NAN when unknown). */
struct tui_sweep_metrics {
    double cycles_total;
    double time_ns;    /* cycles_total / clock_ghz */
    double dma_util;   /* 0..1: cycles with a DMA transfer running */
    double te_util;    /* 0..1: cycles with a GEMM engine running */
    double ve_util;    /* 0..1: cycles with a vector engine running */
    double dram_read;  /* bytes */
    double dram_write; /* bytes */
    double hbm_gbps;   /* (dram_read + dram_write) / time_ns */
    double seconds;    /* wall time of the run */
    /* the kernel launches alone (the verdict's launches of kind "kernel"), without the host
     * transfers around them: the sum of their spans, and each engine kind's busy share over
     * that sum (0..1) */
    double kernel_cycles;
    double kernel_dma, kernel_te, kernel_ve;
    /* the energy (NAN when unknown: trace/analysis/energy.h): joules, average watts, and
     * GFLOP/s per watt (2 x MACs + MATH element ops per joule, / 1e9) */
    double energy_j, avg_power_w, perf_per_watt;
};

struct tui_sweep_row {
    char id[16];
    struct sim_value *params; /* owned: map axis key -> value */
    enum tui_sweep_status status;
    int exit_code; /* of npuscope run, -1 when unknown */
    struct tui_sweep_metrics m;
    char *error;   /* owned: the first error line of a failed point, or NULL */
    char *version; /* owned: npuscope version the point ran with, or NULL */
    char *host;    /* owned: where it ran, or NULL */
    char *trace;   /* owned: path of its trace (DIR/points/ID/trace.json), NULL when none */
};

/* The results of a sweep directory. */
struct tui_sweep_table {
    char *dir;        /* owned */
    char *sweep_file; /* owned: the sweep file's name as given, or "" */
    char **axes;      /* owned: axis keys, in order */
    size_t naxes;
    struct tui_sweep_row *rows; /* owned: in point order */
    size_t nrows;
    size_t n_ok, n_failed, n_pending;
    char **versions; /* owned: the distinct npuscope versions the points ran with */
    size_t nversions;
};

/* True when dir holds a sweep (DIR/points.jsonl exists). */
bool tui_sweep_is_dir(const char *dir);

/*
 * Read the results of the sweep in dir: a row per point with its parameters, status,
 * metrics (from DIR/points/ID/summary.json and result.json) and error. A point without
 * result.json is pending. Returns 0 and fills t (free with tui_sweep_table_fini), or a
 * negative sim_err with d filled when dir holds no readable sweep.
 */
int tui_sweep_collect(const char *dir, struct tui_sweep_table *t, struct diag *d);
void tui_sweep_table_fini(struct tui_sweep_table *t);

/*
 * The columns of the results table after the id and the axes: metrics and what is known
 * of each run. Another metric (a bottleneck verdict, say) is one more entry in this list
 * and shows up in --collect's text, CSV and JSON and in the TUI table alike.
 */
enum tui_sweep_col_kind {
    TUI_SWEEP_COL_NUMBER, /* a metric; num holds it, NAN when unknown */
    TUI_SWEEP_COL_PERCENT,
    TUI_SWEEP_COL_TEXT,
};

struct tui_sweep_column {
    const char *name; /* the header, the CSV column and the JSON key */
    enum tui_sweep_col_kind kind;
    bool brief; /* shown in the text table and the TUI (the others in CSV and JSON) */
};

/* The metric columns (borrowed, static), and *n their count. */
const struct tui_sweep_column *tui_sweep_columns(size_t *n);

/*
 * Column c (an index into tui_sweep_columns) of row r: for numbers *num (NAN when
 * unknown) and the text as shown in the text table into buf ("" when unknown). Text
 * columns (status, error...) come from files: escape before showing. Returns buf.
 */
const char *tui_sweep_cell(const struct tui_sweep_row *r, size_t c, double *num, char *buf,
                           size_t size);

/* A parameter value as text: "16", "0.5", "f16" (no quotes). Returns buf. */
const char *tui_sweep_value_text(const struct sim_value *v, char *buf, size_t size);

#endif
