/*
 * npuscope's main(): the command line. Parses the subcommand and its options (SPEC §3),
 * reports usage errors as one line with a hint and exit status 2, and hands the parsed
 * options to the module that does the work.
 */
#include "tui/cli/cli.h"

#include "sim/kernel/guard.h"
#include "sim/util/escape.h"
#include "trace/diff/diffcond.h"
#include "trace/model/budget.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_main[] =
    "usage: npuscope [COMMAND] [OPTIONS]\n"
    "\n"
    "An NPU simulator with an interactive terminal profiler and trace viewer.\n"
    "With no command, runs the embedded default chip and demo workload in the TUI\n"
    "(headless, printing a summary, when standard output is not a terminal).\n"
    "\n"
    "commands:\n"
    "  run [OPTIONS]               run a simulation (npuscope run --help)\n"
    "  view FILE.json              open a saved trace in the TUI (--diff B.json: compared)\n"
    "  validate FILE.json          check a trace against the format\n"
    "  summary FILE.json [--json]  print summary metrics of a trace\n"
    "  annotate FILE.json          per source line of each kernel: ops, cycles, share\n"
    "  whatif FILE.json            re-run it with one resource changed at a time\n"
    "  export --chrome IN -o OUT   convert a trace to Chrome Trace Event JSON\n"
    "  diff A.json B.json          compare two traces (--json, --fail-if COND)\n"
    "  kernels [--plugin PATH.so]  list the kernels (built in and from plug-ins)\n"
    "  kernel new NAME [DIR]       write a kernel plug-in project to start from\n"
    "  sweep SWEEP.yaml -o DIR     run a design-space sweep (npuscope sweep --help)\n"
    "  sweep --collect DIR         print a sweep's results; view DIR browses them\n"
    "  attach [RUN_ID|PATH]        the live TUI on a served run (run --listen)\n"
    "  ps                          list your served runs\n"
    "  stop RUN_ID|PATH            end a served run (its trace written)\n"
    "\n"
    "options:\n"
    "  -h, --help                  show this help (COMMAND --help for a command's)\n"
    "  -V, --version               show the version\n"
    "\n"
    "Exit status: 0 success, 1 the run or check failed, 2 bad usage or invalid input.\n";

static const char usage_run[] =
    "usage: npuscope run [OPTIONS]\n"
    "\n"
    "Run a simulation: in the TUI on a terminal, headless otherwise.\n"
    "\n"
    "  -c, --chip FILE.yaml       chip config (default: the embedded one)\n"
    "  -w, --workload FILE.yaml   host program (MemoryWrite / KernelLaunch / MemoryRead)\n"
    "  -k, --kernel NAME[:ARGS]   run one kernel with generated data\n"
    "                             (ARGS: key=value,...; see npuscope kernels)\n"
    "      --headless             no TUI; print the summary (the busiest 10\n"
    "                             components, memories and links of each table)\n"
    "      --all                  headless: list every component, memory and link\n"
    "      --plugin PATH.so       load a kernel plug-in (repeatable; also loaded: the\n"
    "                             dirs or files of NPUSCOPE_PLUGIN_PATH, then\n"
    "                             $XDG_DATA_HOME/npuscope/plugins, the install's plugindir)\n"
    "      --watchdog SECONDS     with plug-ins: stop a kernel that runs this long without\n"
    "                             an engine event or a tl call (default 10, 0: never)\n"
    "  -o, --trace FILE.json      write the trace (atomically)\n"
    "      --paused               open the TUI paused before the first event\n"
    "      --no-reverse           take no checkpoints: the TUI cannot go back (p P U R)\n"
    "      --verify[=ops]         run phase 2 and verify outputs (=ops: every op);\n"
    "                             exit 1 on a mismatch\n"
    "      --dump DIR             write input and output tensors as .npy and a manifest\n"
    "      --theme NAME           colour theme\n"
    "      --chrome FILE.json     also write Chrome Trace Event JSON\n"
    "      --mem-events           also record MEM_ACCESS_EVENTs\n"
    "      --bw-window CYCLES     bandwidth sampling window in cycles\n"
    "      --speed EV/S|max       pace of the run in the TUI: engine events per second\n"
    "                             (default max; the keys { and } change it)\n"
    "      --listen[=PATH]        no TUI: serve the run to viewers on a Unix socket\n"
    "                             (default $XDG_RUNTIME_DIR/npuscope/RUN_ID.sock);\n"
    "                             npuscope attach watches and steers it, npuscope stop\n"
    "                             ends it; with --paused it waits for a viewer\n"
    "      --keep-on-hangup       when the TUI's terminal goes away (SIGHUP), carry on\n"
    "                             served as with --listen instead of stopping\n"
    "      --mem-budget SIZE      keep the process's resident memory near SIZE (default\n"
    "                             1G; 512M, 2G...): past it the trace model's events\n"
    "                             live in a temporary file, read back as needed\n"
    "  -h, --help                 show this help\n"
    "\n"
    "SIGINT, SIGTERM and (without --keep-on-hangup) SIGHUP end a run early: its trace is\n"
    "written up to then and marked incomplete.\n";

static const char usage_attach[] =
    "usage: npuscope attach [--theme NAME] [RUN_ID|PATH]\n"
    "\n"
    "Open the live TUI on a run served with npuscope run --listen (or a TUI run with\n"
    "--keep-on-hangup whose terminal went away): the Gantt, summary and memory panes, and\n"
    "every live control (pause, step, breakpoints, run until, speed, write the trace).\n"
    "RUN_ID may be any unique part of a run's id (npuscope ps lists them); with none, the\n"
    "only run there is. Several viewers may watch one run; q leaves, and the run carries\n"
    "on. Only the user who started a run may attach to it.\n"
    "\n"
    "      --theme NAME    colour theme\n"
    "  -h, --help          show this help\n";

static const char usage_ps[] = "usage: npuscope ps\n"
                               "\n"
                               "List your served runs: run id, process, workload, simulated\n"
                               "time, events, state and viewers attached.\n"
                               "\n"
                               "  -h, --help   show this help\n";

static const char usage_stop[] = "usage: npuscope stop RUN_ID|PATH\n"
                                 "\n"
                                 "End a served run cleanly: its trace is written (marked\n"
                                 "incomplete when it had not finished) before this returns.\n"
                                 "\n"
                                 "  -h, --help   show this help\n";

static const char usage_view[] =
    "usage: npuscope view [--theme NAME] [--diff B.json] [--no-cache] [--recover]\n"
    "                     [--mem-budget SIZE] FILE.json | DIR\n"
    "\n"
    "Open a saved trace in the TUI (post-mortem), or the table of a sweep directory\n"
    "(npuscope sweep).\n"
    "\n"
    "      --theme NAME    colour theme\n"
    "      --diff B.json   compare with a second trace: the two Gantts one above the other,\n"
    "                      the summary with the changes (D in the viewer picks one too)\n"
    "      --no-cache      neither read nor write the trace's index in\n"
    "                      $XDG_CACHE_HOME/npuscope/ (it makes the next open fast)\n"
    "      --recover       a cut trace (a run killed, a full disk): open every complete\n"
    "                      event before the cut (the header says it was recovered)\n"
    "      --mem-budget SIZE  keep the resident memory near SIZE (default 1G): past it\n"
    "                      the trace's arrays are read from their files as needed\n"
    "  -h, --help          show this help\n";

static const char usage_diff[] =
    "usage: npuscope diff [OPTIONS] A.json B.json\n"
    "\n"
    "Compare two traces (npuscope's or another producer's): the config_snapshot keys that\n"
    "differ; total cycles; per engine kind, component and op name: busy cycles, utilization,\n"
    "op count and total duration; DRAM bandwidth; then each kernel launch and marker region,\n"
    "matched by name and order (trace/FORMAT.md, \"Comparing traces\"). Lists are sorted by\n"
    "absolute change.\n"
    "\n"
    "      --json             print the comparison as JSON\n"
    "      --fail-if COND     exit 1 when COND holds (repeat it, or separate with commas)\n"
    "      --top N            rows per list (default 10, 0: all)\n"
    "      --bw-window CYCLES bandwidth window in cycles (default 1024)\n"
    "  -h, --help             show this help\n"
    "\n"
    "COND is METRIC CMP VALUE:\n"
    "  METRIC  cycles, ops, ops.added, ops.removed, dram.read, dram.write, dram.bytes,\n"
    "          bw.mean, bw.peak (bytes per cycle), energy (J), power (W),\n"
    "          ENGINE.busy, ENGINE.util (0..1),\n"
    "          ENGINE.ops, with ENGINE one of dma, te, ve, host, other\n"
    "  CMP     >  >=  <  <=\n"
    "  VALUE   +5% or 5%   relative change from A to B, in percent\n"
    "          1.05x       ratio B / A\n"
    "          +0.05, -10  absolute change B - A, in the metric's unit\n"
    "          100000      B's value itself\n"
    "  e.g.    --fail-if 'cycles>+5%' --fail-if 'te.busy<-10%,dma.util>+0.05'\n"
    "\n"
    "Exit status: 0 no condition holds, 1 a condition holds, 2 bad usage or an invalid trace\n"
    "(the message npuscope validate gives for it).\n";

static const char usage_validate[] =
    "usage: npuscope validate [--strict] [--max-errors N] FILE.json\n"
    "\n"
    "Check a trace against the trace format v1 and print each problem with its JSON path.\n"
    "Errors and warnings are the format's rules (spec section 11, JSON, field types);\n"
    "notes are consistency checks the format does not ask for (e.g. summary totals against\n"
    "the bandwidth samples): printed and counted, they leave the exit status alone.\n"
    "Exit status: 0 valid, 1 valid with warnings, 2 invalid.\n"
    "\n"
    "      --strict         notes count as warnings\n"
    "      --max-errors N   stop listing after N problems (default 100, 0: no limit)\n"
    "  -h, --help           show this help\n";

static const char usage_summary[] =
    "usage: npuscope summary [--json] [--recover] [--no-cache] FILE.json\n"
    "\n"
    "Print the summary metrics of a trace.\n"
    "\n"
    "      --json      print them as JSON\n"
    "      --recover   a cut trace (a run killed, a full disk): summarize every complete\n"
    "                  event before the cut, and say where it is\n"
    "      --no-cache  neither read nor write the trace's index in\n"
    "                  $XDG_CACHE_HOME/npuscope/ (as view does)\n"
    "  -h, --help      show this help\n";

static const char usage_annotate[] =
    "usage: npuscope annotate [--kernel NAME] [--json] [--sort] FILE.json\n"
    "\n"
    "The line profile of each kernel of a trace, like perf annotate: per line of the\n"
    "kernel's source that called the kernel API (the ops' details.src), the ops it\n"
    "issued, their cycles per engine kind and their share of the kernel's cycles, with\n"
    "the line's text when the source is found (next to the trace, in the current\n"
    "directory, or built in for the built-in kernels). Exit status 1 when the trace has\n"
    "no call sites.\n"
    "\n"
    "      --kernel NAME   only the kernel NAME\n"
    "      --json          one object per source line, grouped per kernel\n"
    "      --sort          hottest lines first (else in source order)\n"
    "  -h, --help          show this help\n";

static const char usage_export[] =
    "usage: npuscope export --chrome IN.json -o OUT.json\n"
    "\n"
    "Convert a trace to Chrome Trace Event Format (Perfetto, chrome://tracing).\n"
    "\n"
    "      --chrome IN.json    the trace to convert\n"
    "  -o, --output OUT.json   where to write the result (atomically)\n"
    "  -h, --help              show this help\n";

static const char usage_kernels[] =
    "usage: npuscope kernels [--plugin PATH.so]...\n"
    "\n"
    "List the kernels, their arguments and defaults: the built-in ones, then those of the\n"
    "plug-ins loaded (--plugin, NPUSCOPE_PLUGIN_PATH, $XDG_DATA_HOME/npuscope/plugins, the\n"
    "install's plugindir) with the file each came from.\n"
    "\n"
    "      --plugin PATH.so   load a kernel plug-in (repeatable)\n"
    "  -h, --help             show this help\n";

static const char usage_kernel[] =
    "usage: npuscope kernel new NAME [DIR]\n"
    "\n"
    "Write a kernel plug-in project to start from in DIR (default ./NAME, which must not\n"
    "exist or be empty): NAME.c (a kernel tiled through the TCM, its argument table,\n"
    "setup and reference), a Makefile (headers from pkg-config --cflags npuscope, or\n"
    "NPUSCOPE_INCLUDE=DIR) and a README. Then:\n"
    "\n"
    "    cd DIR && make && npuscope run --plugin ./NAME.so -k NAME --verify\n"
    "\n"
    "  -h, --help   show this help\n";

/*
 * Print a usage error as one line with a hint and return the usage exit status. The
 * message is escaped: it often quotes what the user typed.
 */
__attribute__((format(printf, 2, 3))) static int usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char *safe = sim_escape_dup(msg);
    fprintf(stderr, "npuscope%s%s: %s (see npuscope%s%s --help)\n", cmd ? " " : "", cmd ? cmd : "",
            safe, cmd ? " " : "", cmd ? cmd : "");
    free(safe);
    return CLI_EXIT_USAGE;
}

/*
 * Report what getopt_long rejected. optstring starts with ':' so a missing argument is
 * ':' and an unknown option '?'; optopt is 0 for an unknown long option.
 */
static int getopt_error(const char *cmd, int c, char **argv)
{
    const char *arg = argv[optind - 1];
    char shortopt[3] = {'-', (char)optopt, '\0'};
    bool is_long = strncmp(arg, "--", 2) == 0;
    int namelen = is_long && strchr(arg, '=') ? (int)(strchr(arg, '=') - arg) : (int)strlen(arg);
    if (c == ':')
        return usage_error(cmd, "option '%s' needs a value", is_long ? arg : shortopt);
    if (is_long && optopt && arg[namelen] == '=')
        return usage_error(cmd, "option '%.*s' takes no value", namelen, arg);
    if (is_long)
        return usage_error(cmd, "unknown option '%.*s'", namelen, arg);
    return usage_error(cmd, "unknown option '%s'", shortopt);
}

/* Parse a non-negative integer option value; returns 0 on success, else reports it. */
static int parse_count(const char *cmd, const char *opt, const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (s && *s && *s != '-') {
        *out = strtoull(s, &end, 10);
        if (!errno && !*end)
            return 0;
    }
    usage_error(cmd, "option '%s' needs a non-negative integer, got '%s'", opt, s ? s : "");
    return -1;
}

/* --speed: events per second from 1 to CLI_SPEED_MAX, or "max" (0). Returns 0 or -1. */
static int parse_speed(const char *s, uint64_t *out)
{
    if (!s)
        return -1;
    if (strcmp(s, "max") == 0) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < 1 || v > CLI_SPEED_MAX)
        return -1;
    *out = v;
    return 0;
}

enum {
    OPT_HEADLESS = 256,
    OPT_PAUSED,
    OPT_NO_REVERSE,
    OPT_VERIFY,
    OPT_DUMP,
    OPT_THEME,
    OPT_CHROME,
    OPT_MEM_EVENTS,
    OPT_BW_WINDOW,
    OPT_SPEED,
    OPT_MAX_ERRORS,
    OPT_STRICT,
    OPT_JSON,
    OPT_DIFF,
    OPT_FAIL_IF,
    OPT_TOP,
    OPT_LISTEN,
    OPT_KEEP_ON_HANGUP,
    OPT_ALL,
    OPT_PLUGIN,
    OPT_WATCHDOG,
    OPT_MEM_BUDGET,
};

/* --mem-budget SIZE (trace/model/budget.h): set the process's budget, or a usage error. */
static int mem_budget_opt(const char *cmd, const char *arg)
{
    uint64_t v;
    if (trace_budget_parse(arg, &v) < 0)
        return usage_error(
            cmd, "--mem-budget takes a size of at least 1M, such as 512M or 2G, got '%s'", arg);
    trace_budget_set(v);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"chip", required_argument, 0, 'c'},
        {"workload", required_argument, 0, 'w'},
        {"kernel", required_argument, 0, 'k'},
        {"headless", no_argument, 0, OPT_HEADLESS},
        {"trace", required_argument, 0, 'o'},
        {"paused", no_argument, 0, OPT_PAUSED},
        {"no-reverse", no_argument, 0, OPT_NO_REVERSE},
        {"verify", optional_argument, 0, OPT_VERIFY},
        {"dump", required_argument, 0, OPT_DUMP},
        {"theme", required_argument, 0, OPT_THEME},
        {"chrome", required_argument, 0, OPT_CHROME},
        {"mem-events", no_argument, 0, OPT_MEM_EVENTS},
        {"bw-window", required_argument, 0, OPT_BW_WINDOW},
        {"speed", required_argument, 0, OPT_SPEED},
        {"listen", optional_argument, 0, OPT_LISTEN},
        {"keep-on-hangup", no_argument, 0, OPT_KEEP_ON_HANGUP},
        {"all", no_argument, 0, OPT_ALL},
        {"plugin", required_argument, 0, OPT_PLUGIN},
        {"watchdog", required_argument, 0, OPT_WATCHDOG},
        {"mem-budget", required_argument, 0, OPT_MEM_BUDGET},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct cli_run_opts o = {.watchdog_s = SIM_GUARD_WATCHDOG_DEFAULT};
    const char *plugins[CLI_MAX_PLUGINS];
    size_t n_plugins = 0;
    int c, rc = -1;
    while ((c = getopt_long(argc, argv, ":c:w:k:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o.chip = optarg; break;
        case 'w': o.workload = optarg; break;
        case 'k': o.kernel = optarg; break;
        case 'o': o.trace = optarg; break;
        case OPT_HEADLESS: o.headless = true; break;
        case OPT_PAUSED: o.paused = true; break;
        case OPT_NO_REVERSE: o.no_reverse = true; break;
        case OPT_VERIFY:
            if (optarg && strcmp(optarg, "ops") != 0)
                return usage_error("run", "--verify takes no value or '=ops', got '%s'", optarg);
            o.verify = optarg ? CLI_VERIFY_OPS : CLI_VERIFY_OUTPUTS;
            break;
        case OPT_DUMP: o.dump_dir = optarg; break;
        case OPT_THEME: o.theme = optarg; break;
        case OPT_CHROME: o.chrome = optarg; break;
        case OPT_MEM_EVENTS: o.mem_events = true; break;
        case OPT_BW_WINDOW: {
            unsigned long long v;
            if (parse_count("run", "--bw-window", optarg, &v) < 0)
                return CLI_EXIT_USAGE;
            if (v == 0)
                return usage_error("run", "--bw-window must be at least 1 cycle, got '%s'", optarg);
            o.bw_window = v;
            break;
        }
        case OPT_SPEED:
            if (parse_speed(optarg, &o.speed) < 0)
                return usage_error("run",
                                   "--speed takes events per second (1 to %llu) or 'max', got '%s'",
                                   (unsigned long long)CLI_SPEED_MAX, optarg);
            o.speed_set = true;
            break;
        case OPT_LISTEN:
            if (optarg && !*optarg)
                return usage_error("run", "%s", "--listen= needs a socket path");
            o.listen = true;
            o.listen_path = optarg;
            break;
        case OPT_KEEP_ON_HANGUP: o.keep_on_hangup = true; break;
        case OPT_ALL: o.all = true; break;
        case OPT_PLUGIN:
            if (n_plugins == CLI_MAX_PLUGINS)
                return usage_error("run", "at most %d --plugin", CLI_MAX_PLUGINS);
            plugins[n_plugins++] = optarg;
            break;
        case OPT_WATCHDOG: {
            char *end;
            errno = 0;
            /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): getopt_long sets it */
            double v = strtod(optarg, &end);
            if (!*optarg || *end || errno || !(v >= 0) || v > 1e6)
                return usage_error("run", "--watchdog takes seconds (0 to 1000000), got '%s'",
                                   optarg);
            o.watchdog_s = v;
            break;
        }
        case OPT_MEM_BUDGET:
            if (mem_budget_opt("run", optarg))
                return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(usage_run, stdout); return 0;
        default: return getopt_error("run", c, argv);
        }
    }
    if (optind < argc)
        return usage_error("run", "unexpected argument '%s'", argv[optind]);
    if (o.kernel && o.workload)
        return usage_error("run", "%s", "--kernel and --workload cannot be used together");
    if (o.keep_on_hangup && o.headless && !o.listen)
        return usage_error("run", "%s",
                           "--keep-on-hangup is for the TUI (a headless run serves viewers with "
                           "--listen)");
    rc = cli_load_plugins(plugins, n_plugins);
    return rc ? rc : cli_run(&o);
}

/* The commands that take exactly one trace file and a few flags share this parser. */
static int cmd_view(int argc, char **argv)
{
    enum { OPT_NO_CACHE = 1100, OPT_RECOVER };
    static const struct option longopts[] = {
        {"theme", required_argument, 0, OPT_THEME},
        {"diff", required_argument, 0, OPT_DIFF},
        {"no-cache", no_argument, 0, OPT_NO_CACHE},
        {"recover", no_argument, 0, OPT_RECOVER},
        {"mem-budget", required_argument, 0, OPT_MEM_BUDGET},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *theme = NULL, *diff = NULL;
    bool no_cache = false, recover = false;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_THEME: theme = optarg; break;
        case OPT_DIFF: diff = optarg; break;
        case OPT_NO_CACHE: no_cache = true; break;
        case OPT_RECOVER: recover = true; break;
        case OPT_MEM_BUDGET:
            if (mem_budget_opt("view", optarg))
                return CLI_EXIT_USAGE;
            break;
        case 'h': fputs(usage_view, stdout); return 0;
        default: return getopt_error("view", c, argv);
        }
    }
    if (optind >= argc)
        return usage_error("view", "%s", "missing the trace file to open");
    if (optind + 1 < argc)
        return usage_error("view", "unexpected argument '%s'", argv[optind + 1]);
    if (cli_sweep_dir(argv[optind])) {
        if (diff)
            return usage_error("view", "%s", "--diff compares two traces, not sweep directories");
        return cli_sweep_view(argv[optind], theme);
    }
    struct stat st;
    if (stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)) {
        char *e = sim_escape_dup(argv[optind]);
        fprintf(stderr,
                "npuscope view: %s: a directory, and not a sweep (no points.jsonl; npuscope "
                "sweep SWEEP.yaml -o DIR makes one)\n",
                e);
        free(e);
        return CLI_EXIT_USAGE;
    }
    return cli_view(argv[optind], theme, diff, no_cache, recover);
}

static int cmd_validate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"max-errors", required_argument, 0, OPT_MAX_ERRORS},
        {"strict", no_argument, 0, OPT_STRICT},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    unsigned long long max_errors = 100;
    bool strict = false;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MAX_ERRORS:
            if (parse_count("validate", "--max-errors", optarg, &max_errors) < 0)
                return CLI_EXIT_USAGE;
            break;
        case OPT_STRICT: strict = true; break;
        case 'h': fputs(usage_validate, stdout); return 0;
        default: return getopt_error("validate", c, argv);
        }
    }
    if (optind >= argc)
        return usage_error("validate", "%s", "missing the trace file to check");
    if (optind + 1 < argc)
        return usage_error("validate", "unexpected argument '%s'", argv[optind + 1]);
    return cli_validate(argv[optind], max_errors, strict);
}

static int cmd_summary(int argc, char **argv)
{
    enum { OPT_RECOVER = 1101, OPT_NO_CACHE };
    static const struct option longopts[] = {
        {"json", no_argument, 0, OPT_JSON},
        {"recover", no_argument, 0, OPT_RECOVER},
        {"no-cache", no_argument, 0, OPT_NO_CACHE},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    bool json = false, recover = false, no_cache = false;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: json = true; break;
        case OPT_RECOVER: recover = true; break;
        case OPT_NO_CACHE: no_cache = true; break;
        case 'h': fputs(usage_summary, stdout); return 0;
        default: return getopt_error("summary", c, argv);
        }
    }
    if (optind >= argc)
        return usage_error("summary", "%s", "missing the trace file to summarize");
    if (optind + 1 < argc)
        return usage_error("summary", "unexpected argument '%s'", argv[optind + 1]);
    return cli_summary(argv[optind], json, recover, no_cache);
}

static int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"chrome", required_argument, 0, OPT_CHROME},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *in = NULL, *out = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_CHROME: in = optarg; break;
        case 'o': out = optarg; break;
        case 'h': fputs(usage_export, stdout); return 0;
        default: return getopt_error("export", c, argv);
        }
    }
    if (optind < argc)
        return usage_error("export", "unexpected argument '%s'", argv[optind]);
    if (!in)
        return usage_error("export", "%s", "missing --chrome IN.json (the only export format)");
    if (!out)
        return usage_error("export", "%s", "missing -o OUT.json");
    return cli_export_chrome(in, out);
}

static int cmd_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, OPT_JSON},     {"fail-if", required_argument, 0, OPT_FAIL_IF},
        {"top", required_argument, 0, OPT_TOP}, {"bw-window", required_argument, 0, OPT_BW_WINDOW},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0},
    };
    struct cli_diff_opts o = {.top = 10};
    int c, rc = -1;
    while (rc < 0 && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: o.json = true; break;
        case OPT_FAIL_IF: {
            struct diag d;
            if (trace_diffcond_parse(optarg, &o.conds, &o.nconds, &d) < 0)
                rc = usage_error("diff", "--fail-if: %s", d.msg);
            break;
        }
        case OPT_TOP: {
            unsigned long long v = 0;
            if (parse_count("diff", "--top", optarg, &v) < 0)
                rc = CLI_EXIT_USAGE;
            else
                o.top = v;
            break;
        }
        case OPT_BW_WINDOW: {
            unsigned long long v = 0;
            if (parse_count("diff", "--bw-window", optarg, &v) < 0)
                rc = CLI_EXIT_USAGE;
            else if (v == 0)
                rc = usage_error("diff", "--bw-window must be at least 1 cycle, got '%s'", optarg);
            else
                o.bw_window = v;
            break;
        }
        case 'h':
            fputs(usage_diff, stdout);
            rc = 0;
            break;
        default: rc = getopt_error("diff", c, argv); break;
        }
    }
    if (rc < 0 && argc - optind < 2)
        rc = usage_error("diff", "%s",
                         argc - optind ? "missing the second trace (B.json)"
                                       : "missing the traces to compare (A.json B.json)");
    if (rc < 0 && argc - optind > 2)
        rc = usage_error("diff", "unexpected argument '%s'", argv[optind + 2]);
    if (rc < 0) {
        o.a = argv[optind];
        o.b = argv[optind + 1];
        rc = cli_diff(&o);
    }
    free(o.conds);
    return rc;
}

static int cmd_kernels(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"plugin", required_argument, 0, OPT_PLUGIN},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *plugins[CLI_MAX_PLUGINS];
    size_t n_plugins = 0;
    int c, rc = -1;
    while (rc < 0 && (c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_PLUGIN:
            if (n_plugins == CLI_MAX_PLUGINS)
                rc = usage_error("kernels", "at most %d --plugin", CLI_MAX_PLUGINS);
            else
                plugins[n_plugins++] = optarg;
            break;
        case 'h':
            fputs(usage_kernels, stdout);
            rc = 0;
            break;
        default: rc = getopt_error("kernels", c, argv); break;
        }
    }
    if (rc < 0 && optind < argc)
        rc = usage_error("kernels", "unexpected argument '%s'", argv[optind]);
    if (rc < 0)
        rc = cli_load_plugins(plugins, n_plugins);
    return rc ? rc : cli_kernels();
}

/* npuscope kernel new NAME [DIR] */
static int cmd_kernel(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(usage_kernel, stdout); return 0;
        default: return getopt_error("kernel", c, argv);
        }
    }
    if (optind >= argc)
        return usage_error("kernel", "%s", "missing the action: new NAME [DIR]");
    if (strcmp(argv[optind], "new") != 0)
        return usage_error("kernel", "unknown action '%s' (the one action is: new NAME [DIR])",
                           argv[optind]);
    if (optind + 1 >= argc)
        return usage_error("kernel", "%s", "new: missing the kernel's NAME");
    if (optind + 3 < argc)
        return usage_error("kernel", "unexpected argument '%s'", argv[optind + 3]);
    return cli_kernel_new(argv[optind + 1], optind + 2 < argc ? argv[optind + 2] : NULL);
}

/* attach, ps, stop: at most one argument, and --theme for attach. */
static int cmd_served(const char *cmd, const char *usage, bool theme_opt, bool need_arg, int argc,
                      char **argv)
{
    static const struct option longopts[] = {
        {"theme", required_argument, 0, OPT_THEME},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *theme = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_THEME:
            if (!theme_opt)
                return usage_error(cmd, "%s", "unknown option '--theme'");
            theme = optarg;
            break;
        case 'h': fputs(usage, stdout); return 0;
        default: return getopt_error(cmd, c, argv);
        }
    }
    int max = strcmp(cmd, "ps") == 0 ? 0 : 1;
    if (argc - optind > max)
        return usage_error(cmd, "unexpected argument '%s'", argv[optind + max]);
    if (need_arg && optind >= argc)
        return usage_error(cmd, "%s", "missing the run to stop (RUN_ID or PATH; npuscope ps)");
    const char *what = optind < argc ? argv[optind] : NULL;
    if (strcmp(cmd, "attach") == 0)
        return cli_attach(what, theme);
    if (strcmp(cmd, "stop") == 0)
        return cli_stop(what);
    return cli_ps();
}

static int cmd_annotate(int argc, char **argv)
{
    enum { OPT_KERNEL = 1000, OPT_SORT };
    static const struct option longopts[] = {
        {"kernel", required_argument, 0, OPT_KERNEL},
        {"json", no_argument, 0, OPT_JSON},
        {"sort", no_argument, 0, OPT_SORT},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    bool json = false, sort = false;
    const char *kernel = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_KERNEL: kernel = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_SORT: sort = true; break;
        case 'h': fputs(usage_annotate, stdout); return 0;
        default: return getopt_error("annotate", c, argv);
        }
    }
    if (optind >= argc)
        return usage_error("annotate", "%s", "missing the trace file to annotate");
    if (optind + 1 < argc)
        return usage_error("annotate", "unexpected argument '%s'", argv[optind + 1]);
    return cli_annotate(argv[optind], kernel, json, sort);
}

static int cmd_attach(int argc, char **argv)
{
    return cmd_served("attach", usage_attach, true, false, argc, argv);
}

static int cmd_ps(int argc, char **argv)
{
    return cmd_served("ps", usage_ps, false, false, argc, argv);
}

static int cmd_stop(int argc, char **argv)
{
    return cmd_served("stop", usage_stop, false, true, argc, argv);
}

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} commands[] = {
    {"run", cmd_run},           {"view", cmd_view},     {"validate", cmd_validate},
    {"summary", cmd_summary},   {"export", cmd_export}, {"kernels", cmd_kernels},
    {"kernel", cmd_kernel},     {"diff", cmd_diff},     {"sweep", cli_sweep},
    {"attach", cmd_attach},     {"ps", cmd_ps},         {"stop", cmd_stop},
    {"annotate", cmd_annotate}, {"whatif", cli_whatif},
};

/*
 * Phase 2 runs its GEMMs on npuscope's own workers, each calling BLAS single-threaded, and
 * the simulation itself is single-threaded: OpenBLAS's thread pool, which the library starts
 * before main and whose idle threads spin for a while, only takes a core from them (on a
 * 2-core machine a run took twice as long). Unless the user chose a BLAS thread count,
 * npuscope asks for 1 and runs itself again, once, before doing anything else.
 */
static void single_threaded_blas(char **argv)
{
    if (getenv("OPENBLAS_NUM_THREADS"))
        return;
    /* by its own path, so that ps, top and pgrep still call the process npuscope */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0 || (size_t)n >= sizeof(self) - 1)
        return;
    self[n] = '\0';
    if (setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0)
        execv(self, argv);
    /* no /proc, or exec refused: carry on with the pool */
}

int main(int argc, char **argv)
{
    single_threaded_blas(argv);
    if (argc < 2) {
        /* the demo, at a pace a person can watch: about ten seconds, faster with '}' */
        struct cli_run_opts o = {.speed = 1000};
        return cli_run(&o);
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("npuscope %s\n", NPUSCOPE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(cmd, commands[i].name) == 0) {
            optind = 1;
            return commands[i].fn(argc - 1, argv + 1);
        }
    }
    if (cmd[0] == '-')
        return usage_error(NULL, "unknown option '%s'", cmd);
    return usage_error(NULL, "unknown command '%s'", cmd);
}
