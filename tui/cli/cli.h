/*
 * What the command line hands to the rest of the program: the parsed options of each
 * subcommand and the functions that carry them out. main.c parses; these do the work and
 * return the process exit status (CLI_EXIT_*).
 */
#ifndef TUI_CLI_H
#define TUI_CLI_H

#include "trace/live/live.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    CLI_EXIT_OK = 0,    /* success */
    CLI_EXIT_FAIL = 1,  /* the run or check failed (mismatch, validation warnings) */
    CLI_EXIT_USAGE = 2, /* bad usage or invalid input */
};

enum cli_verify {
    CLI_VERIFY_NONE = 0,
    CLI_VERIFY_OUTPUTS, /* --verify: compare final outputs */
    CLI_VERIFY_OPS,     /* --verify=ops: compare every op's result too */
};

/* The fastest pace --speed takes, events per second (beyond it, say max). */
#define CLI_SPEED_MAX 1000000000ull

/* Options of "npuscope run" (and of npuscope with no arguments: the demo's speed, the rest
 * zero). Borrowed strings point into argv. */
struct cli_run_opts {
    const char *chip;     /* -c FILE.yaml, or NULL for the embedded default */
    const char *workload; /* -w FILE.yaml, or NULL */
    const char *kernel;   /* -k NAME[:ARGS], or NULL */
    const char *trace;    /* -o FILE.json, or NULL */
    const char *dump_dir; /* --dump DIR, or NULL */
    const char *theme;    /* --theme NAME, or NULL */
    const char *chrome;   /* --chrome FILE.json, or NULL */
    uint64_t bw_window;   /* --bw-window CYCLES, 0 for the default */
    uint64_t speed;       /* --speed: live TUI events per second, 0 as fast as possible */
    enum cli_verify verify;
    bool headless;
    bool paused;
    bool no_reverse; /* live TUI: no checkpoints, no going back */
    bool speed_set;  /* --speed was given (not the demo's default) */
    bool mem_events;
    bool listen;             /* --listen[=PATH]: serve the run to viewers (no TUI) */
    const char *listen_path; /* its PATH, or NULL for the default socket */
    bool keep_on_hangup;     /* --keep-on-hangup: a TUI run goes on served when its terminal
                                goes away */
    bool all;                /* --all: every component, memory and link in the summary */
    double watchdog_s;       /* --watchdog SECONDS (plug-ins loaded): 0 disables */
};

/* Rows of each table of a headless run's summary without --all: the busiest. */
#define CLI_RUN_TOP 10

/* The most --plugin options one command takes. */
#define CLI_MAX_PLUGINS 64

/*
 * Load the plug-ins a command names (--plugin, files[0..n), in order), then those of the
 * search path (NPUSCOPE_PLUGIN_PATH, $XDG_DATA_HOME/npuscope/plugins, the install's
 * plugindir; sim/kernel/loader.h). Returns 0, or CLI_EXIT_USAGE after one line on stderr
 * naming the file and the problem.
 */
int cli_load_plugins(const char *const *files, size_t n);

/*
 * Watch a run that has plug-ins loaded (sim/kernel/guard.h): a kernel that crashes or
 * loops ends it with the terminal restored (restore, may be NULL), finish(ctx) called to
 * write the partial trace, one line, exit status 1. No-op without plug-ins. Returns 0, or
 * CLI_EXIT_USAGE after one line on stderr.
 */
struct sim_chip;
int cli_guard(struct sim_chip *chip, double watchdog_s, void (*restore)(void),
              void (*finish)(void *ctx), void *ctx);
/* End cli_guard's watch (before the chip is freed). */
void cli_unguard(void);

/* npuscope kernel new NAME [DIR] (tui/cli/cli_kernel.c): write a plug-in project. */
int cli_kernel_new(const char *name, const char *dir);

int cli_run(const struct cli_run_opts *o);

/* The live TUI of a run (cli_run on a terminal without --headless), or the run served to
 * viewers (--listen; a TUI run with --keep-on-hangup once its terminal has gone). */
int cli_live(const struct cli_run_opts *o);

/* Refuse a --theme that names no theme (a path that cannot be read, or a name that is not
 * one): "npuscope CMD: no theme named 'X' (themes: ...)" on stderr, and CLI_EXIT_USAGE.
 * 0 when theme is NULL or found (a broken theme file is reported in the TUI). */
int cli_theme_check(const char *cmd, const char *theme, const char *user_dir);

/* npuscope attach [RUN_ID|PATH]: the live TUI on a served run (tui/cli/cli_attach.c). */
int cli_attach(const char *what, const char *theme);
/* npuscope ps: the served runs of this user. */
int cli_ps(void);
/* npuscope stop RUN_ID|PATH: end a served run (its trace written). */
int cli_stop(const char *what);

/* Refuse before a run an output file that could not be written at its end: a missing or
 * read-only directory, or a directory under that name. Returns 0 or a negative code with
 * d filled ("FILE: cannot create: No such file or directory"). */
struct diag;
int cli_check_output(const char *path, struct diag *d);

/*
 * The end of a command whose TUI has closed (q, Ctrl-C, a hang-up), once every output the
 * user asked for is written and the terminal restored: the process ends at once with
 * status, its stdio flushed, without freeing the model and the analyses' structures (at
 * a hundred million events freeing them took most of a second; the kernel takes them back
 * at once), whatever worker is still computing. Returns, and the caller frees as usual,
 * only when cli_exit_frees().
 */
void cli_exit_now(int status);
/* True in builds with AddressSanitizer, whose leak check needs everything freed. */
bool cli_exit_frees(void);

/* The most plug-in files a trace's run_metadata names (the first ones loaded). */
#define CLI_MAX_TRACE_PLUGINS 32

/* What a run's trace says about it (run_metadata), with the storage its strings use. */
struct cli_trace_meta {
    struct trace_live_opts lo; /* strings point into the buffers below */
    char model[128];
    char cmdq[1024];
    char notes[1024];
    char run_id[96];
    const char *plugins[CLI_MAX_TRACE_PLUGINS]; /* into plugin_files */
    char plugin_files[8192];                    /* the loaded plug-ins' files, absolute */
};

struct sim_run;

/* The trace feed options of run r started with o: -o, --mem-events, --bw-window, and
 * run_metadata (model_name and cmdq_file from -k / -w, the time from SOURCE_DATE_EPOCH
 * when set, else the clock, the files of the plug-ins loaded). Returns 0. */
int cli_run_trace_opts(const struct cli_run_opts *o, const struct sim_run *r,
                       struct cli_trace_meta *m);
/* Open file in the TUI; with diff (not NULL), compared with that second trace; through the
 * trace's index (trace/cache/index.h) unless no_cache; recover: a cut trace up to its cut. */
int cli_view(const char *file, const char *theme, const char *diff, bool no_cache, bool recover);
/* Check file and list its problems (at most max_errors, 0: all); strict: notes count as
 * warnings. Returns the exit status: 0 valid, 1 with warnings, 2 invalid. */
int cli_validate(const char *file, unsigned long long max_errors, bool strict);
int cli_summary(const char *file, bool json, bool recover, bool no_cache);
/* npuscope annotate FILE [--kernel NAME] [--json] [--sort]: the line profile of each kernel
 * (tui/cli/cli_annotate.c). Exit 1 when the trace has no call sites, 2 when it cannot be
 * read or has no kernel NAME. */
int cli_annotate(const char *file, const char *kernel, bool json, bool sort);

/* What summary prints after the metrics (tui/cli/cli_views.c): INVALID_TRACE markers, the
 * layer breakdown, the tokens and the anomalies of m, as text on stdout; or as members of
 * the --json object out ("invalid_trace", "layers", "token_profile", "anomalies").
 * cycles_total is the run's length (a layer's share is its busy cycles over it). */
struct trace_model;
struct sim_value;
void cli_print_views(const struct trace_model *m, uint64_t cycles_total);
void cli_views_json(const struct trace_model *m, uint64_t cycles_total, struct sim_value *out);
/* summary's "where the time goes" (tui/cli/cli_verdict.c): the verdict of the run and of each
 * kernel launch with its evidence, as text on stdout; and as the value of --json's
 * "bottleneck" (caller frees). kept_from: the path of a saved trace m was opened from
 * through the cache, whose verdict may be kept beside its index (trace/cache/vcache.h);
 * else NULL. */
void cli_print_verdict(const struct trace_model *m, const char *kept_from);
struct sim_value *cli_verdict_value(const struct trace_model *m, const char *kept_from);
/* summary's energy (tui/cli/cli_energy.c): total, dynamic and static, average power, the
 * share by component kind, the dominant action and the energy per decode token, or
 * "energy: unknown", as text on stdout; and as the value of --json's "energy" (null when
 * unknown; caller frees). */
void cli_print_energy(const struct trace_model *m);
struct sim_value *cli_energy_value(const struct trace_model *m);
int cli_export_chrome(const char *in, const char *out);
/* npuscope kernels: every kernel, built in or from a plug-in (with its file). */
int cli_kernels(void);

struct trace_diffcond;

/* Options of "npuscope diff". Borrowed strings point into argv. */
struct cli_diff_opts {
    const char *a, *b;            /* the two traces */
    bool json;                    /* --json */
    struct trace_diffcond *conds; /* --fail-if conditions (borrowed array), or NULL */
    size_t nconds;
    uint64_t top;       /* --top N: rows per list (0: all) */
    uint64_t bw_window; /* --bw-window CYCLES, 0 for the default */
};

/* Compare two traces and print the changes; exit status 1 when a condition holds. */
int cli_diff(const struct cli_diff_opts *o);

/* Load a trace to compare (trace_diff_load), or say in one line on stderr, as
 * "npuscope CMD: ...", why it cannot be: the loader's message, or validate's for its first
 * error. Returns the model (the caller frees it) or NULL. */
struct trace_model;
struct trace_model *cli_diff_load(const char *cmd, const char *path);
/* Say in one line on stderr why the trace at path could not be loaded to compare, as
 * cli_diff_load does: d the loader's diagnostic, errors the count of trace_diff_load. */
struct diag;
void cli_diff_load_fail(const char *cmd, const char *path, const struct diag *d, uint64_t errors);

/* npuscope whatif (tui/cli/cli_whatif.c): argv[0] is "whatif"; parses its own options.
 * Exit 1 when a run of the experiment failed. */
int cli_whatif(int argc, char **argv);

/* npuscope sweep (tui/cli/cli_sweep.c): argv[0] is "sweep"; parses its own options. */
int cli_sweep(int argc, char **argv);
/* True when path is a sweep directory; npuscope view then shows its table. */
bool cli_sweep_dir(const char *path);
int cli_sweep_view(const char *dir, const char *theme);

#endif
