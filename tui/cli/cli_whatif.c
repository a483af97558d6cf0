/*
 * npuscope whatif: re-run what a trace ran (or -c CHIP -k KERNEL / -w WORKLOAD) with one
 * resource changed at a time (tui/sweep/whatif.h), print each change's effect on the
 * run's time and each kernel launch's, ranked, and the bottleneck verdict checked against
 * the experiment (trace/verdict/verdict.h). --json gives the same as one object.
 */
#include "tui/cli/cli.h"

#include "sim/host/run.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/live/live.h"
#include "trace/verdict/verdict.h"
#include "tui/sweep/whatif.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: npuscope whatif [OPTIONS] TRACE.json\n"
    "       npuscope whatif [OPTIONS] [-c CHIP.yaml] -k NAME[:ARGS] | -w WORKLOAD.yaml\n"
    "\n"
    "Run again what a trace ran (its run_metadata and config_snapshot say what, on which\n"
    "chip), or the kernel or workload given, with one resource of the chip changed at a\n"
    "time; print each change's effect on the run's time and on each kernel launch's,\n"
    "ranked, and the bottleneck verdict checked against the experiment. A factor is a\n"
    "speed-up: 2 doubles a bandwidth or a throughput and halves a latency or a setup time.\n"
    "\n"
    "options:\n"
    "  --factors F,F...     the speed-ups to try (default 2,0.5)\n"
    "  --resources R,R...   the resources to change (default all the chip has):\n"
    "                       hbm_bw hbm_lat dma_setup dma_bw link_pe link_cube\n"
    "                       link_cube_cube link_sip_sip te ve host\n"
    "  -j, --jobs N         worker processes (default 2)\n"
    "  -c, --chip FILE      with -k or -w: the chip config (default: the embedded one)\n"
    "  -k, --kernel SPEC    run a built-in kernel, as npuscope run -k\n"
    "  -w, --workload FILE  run a workload file, as npuscope run -w\n"
    "  --plugin PATH.so     load a kernel plug-in (repeatable), as npuscope run --plugin;\n"
    "                       given, it replaces the plug-ins a trace's run loaded\n"
    "                       (run_metadata.plugins), which are loaded otherwise\n"
    "  --json               the result as JSON on stdout\n"
    "  -h, --help           show this help\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("npuscope whatif: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (npuscope whatif --help)\n", stderr);
    return CLI_EXIT_USAGE;
}

static void fail_diag(const char *what, const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX * 2 + SIM_DIAG_PATH_MAX * 2 + SIM_DIAG_MSG_MAX * 2 + 64];
    char *w = sim_escape_dup(what ? what : "");
    fprintf(stderr, "npuscope whatif: %s%s%s\n", w, what ? ": " : "",
            diag_format(d, line, sizeof(line)));
    free(w);
}

static int parse_factors(const char *s, struct tui_whatif_opts *o)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    o->nfactors = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end;
        double f = strtod(p, &end);
        if (end == p || *end || !(f > 0) || f == 1 || !isfinite(f))
            return usage_error("--factors: '%s' is not a speed-up (a number > 0, not 1)", p);
        if (o->nfactors == TUI_WHATIF_MAX_FACTORS)
            return usage_error("--factors: at most %d factors", TUI_WHATIF_MAX_FACTORS);
        o->factors[o->nfactors++] = f;
    }
    return o->nfactors ? 0 : usage_error("--factors: no factor given");
}

static int parse_resources(const char *s, struct tui_whatif_opts *o)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", s);
    o->resources = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        enum tui_whatif_res r;
        if (tui_whatif_res_parse(p, &r) < 0) {
            char *e = sim_escape_dup(p);
            int rc = usage_error("--resources: no resource '%s'", e);
            free(e);
            return rc;
        }
        o->resources |= 1u << r;
    }
    return o->resources ? 0 : usage_error("--resources: no resource given");
}

/* The model of a run of o's chip and kernel or workload, made here (the experiment's
 * verdict is checked on it). */
static struct trace_model *run_model(const char *chip, const char *kernel, const char *workload,
                                     struct sim_run **rp, struct trace_live **lp)
{
    struct sim_run_opts ro = {.chip_file = chip, .kernel_spec = kernel, .workload_file = workload};
    struct diag d = {0};
    if (sim_run_new(&ro, rp, &d) < 0) {
        fail_diag(NULL, &d);
        return NULL;
    }
    sim_run_timing_only(*rp);
    struct cli_run_opts co = {.chip = chip, .kernel = kernel, .workload = workload};
    static struct cli_trace_meta meta;
    cli_run_trace_opts(&co, *rp, &meta);
    if (trace_live_new(sim_run_chip(*rp), &meta.lo, lp, &d) < 0) {
        fail_diag(NULL, &d);
        return NULL;
    }
    while (!sim_run_over(*rp)) {
        sim_run_advance(*rp, SIM_RUN_EVENTS, 100000);
        trace_live_sync(*lp);
    }
    return (struct trace_model *)trace_live_model(*lp);
}

/* Row order: the resources by the best change of the run's time among their factors
 * (the most shortened first), a resource's factors together in the order given. */
static const struct tui_whatif_result *sort_r;

static unsigned group(const struct tui_whatif_point *p)
{
    return p->joint ? p->joint : 1u << p->res;
}

static double res_best(const struct tui_whatif_result *r, unsigned g)
{
    double b = INFINITY;
    for (size_t i = 0; i < r->npoints; i++)
        if (group(&r->points[i]) == g) {
            double c = tui_whatif_change(r, &r->points[i], SIZE_MAX);
            if (!isnan(c) && c < b)
                b = c;
        }
    return b;
}

static int by_effect(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct tui_whatif_point *p = &sort_r->points[i], *q = &sort_r->points[j];
    if (group(p) != group(q)) {
        double x = res_best(sort_r, group(p)), y = res_best(sort_r, group(q));
        if (x != y)
            return x < y ? -1 : 1;
        return i < j ? -1 : 1;
    }
    return i < j ? -1 : i > j;
}

static const char *pct(double c, char *buf, size_t size)
{
    if (isnan(c))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%+.1f%%", 100 * c);
    return buf;
}

enum { MAX_COLS = 6 };

static void print_table(const struct tui_whatif_result *r)
{
    char *what = sim_escape_dup(r->what);
    printf("npuscope whatif: %s\n", what);
    free(what);
    printf("%zu runs (the base and %zu changes) on %u workers in %.1f s\n\n", r->npoints + 1,
           r->npoints, r->workers, r->seconds);
    size_t ncols = r->nlaunches < MAX_COLS ? r->nlaunches : MAX_COLS;
    printf("%-28s %-7s %13s %8s", "resource", "factor", "cycles", "change");
    for (size_t l = 0; l < ncols; l++) {
        char name[64], q[48];
        sim_escape(r->launches[l].name, strlen(r->launches[l].name), q, sizeof(q));
        if (r->launches[l].occurrence)
            snprintf(name, sizeof(name), "%s #%u", q, r->launches[l].occurrence + 1);
        else
            snprintf(name, sizeof(name), "%s", q);
        printf(" %12.12s", name);
    }
    printf("\n%-28s %-7s %13.0f %8s", "as it is", "", r->base.cycles, "");
    for (size_t l = 0; l < ncols; l++)
        printf(" %12.0f", r->base.launch ? r->base.launch[l] : NAN);
    printf("\n");
    size_t *order = sim_xcalloc(r->npoints ? r->npoints : 1, sizeof(*order));
    for (size_t i = 0; i < r->npoints; i++)
        order[i] = i;
    sort_r = r;
    qsort(order, r->npoints, sizeof(*order), by_effect);
    for (size_t k = 0; k < r->npoints; k++) {
        const struct tui_whatif_point *p = &r->points[order[k]];
        char f[16], c[16];
        snprintf(f, sizeof(f), "x%g", p->factor);
        if (p->error) {
            char *e = sim_escape_dup(p->error);
            printf("%-28s %-7s failed: %s\n", tui_whatif_point_name(p), f, e);
            free(e);
            continue;
        }
        printf("%-28s %-7s %13.0f %8s", tui_whatif_point_name(p), f, p->cycles,
               pct(tui_whatif_change(r, p, SIZE_MAX), c, sizeof(c)));
        for (size_t l = 0; l < ncols; l++)
            printf(" %12s", pct(tui_whatif_change(r, p, l), c, sizeof(c)));
        printf("\n");
    }
    free(order);
    if (r->nlaunches > ncols)
        printf("(%zu more launches: --json has them all)\n", r->nlaunches - ncols);
}

/* The verdict of m checked against r: the run's and each kernel launch's. */
static void print_checked(const struct trace_verdict *v)
{
    printf("\nthe verdict, checked by experiment\n");
    for (size_t i = 0; i <= v->nlaunches; i++) {
        const struct trace_verdict_item *it = i == 0 ? &v->run : &v->launches[i - 1];
        if (i && !it->checked)
            continue; /* host messages: no kernel ran */
        char name[96], bound[200], basis[200], q[64];
        if (i == 0) {
            snprintf(name, sizeof(name), "run");
        } else {
            sim_escape(it->region->name, strlen(it->region->name), q, sizeof(q));
            if (it->region->occurrence)
                snprintf(name, sizeof(name), "%s #%u", q, it->region->occurrence + 1);
            else
                snprintf(name, sizeof(name), "%s", q);
        }
        trace_verdict_bound_text(v, it, bound, sizeof(bound));
        printf("  %-16s %s\n", name, bound);
        printf("  %-16s %s\n", "", trace_verdict_basis_text(v, it, basis, sizeof(basis)));
        if (it->bound == TRACE_BOUND_DMA_FIXED && it->dma_ops)
            printf("  %-16s %llu DMA transfers, mean %.1f B\n", "", (unsigned long long)it->dma_ops,
                   (double)it->dma_bytes / (double)it->dma_ops);
    }
}

static void progress(void *ctx, size_t done, size_t total)
{
    (void)ctx;
    fprintf(stderr, "\r%zu of %zu runs", done, total);
    if (done == total)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

int cli_whatif(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"factors", required_argument, NULL, 'F'}, {"resources", required_argument, NULL, 'R'},
        {"jobs", required_argument, NULL, 'j'},    {"chip", required_argument, NULL, 'c'},
        {"kernel", required_argument, NULL, 'k'},  {"workload", required_argument, NULL, 'w'},
        {"json", no_argument, NULL, 'J'},          {"plugin", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    struct tui_whatif_opts o = {0};
    const char *chip = NULL, *kernel = NULL, *workload = NULL;
    const char *plugins[CLI_MAX_PLUGINS];
    size_t n_plugins = 0;
    bool json = false;
    int c, rc;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":j:c:k:w:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'F':
            if ((rc = parse_factors(optarg, &o)) != 0)
                return rc;
            break;
        case 'R':
            if ((rc = parse_resources(optarg, &o)) != 0)
                return rc;
            break;
        case 'j': {
            char *end;
            long j = strtol(optarg, &end, 10);
            if (end == optarg || *end || j < 1 || j > 256)
                return usage_error("--jobs needs a number of workers from 1 to 256, got '%s'",
                                   optarg);
            o.jobs = (unsigned)j;
            break;
        }
        case 'c': chip = optarg; break;
        case 'k': kernel = optarg; break;
        case 'w': workload = optarg; break;
        case 'J': json = true; break;
        case 'P':
            if (n_plugins == CLI_MAX_PLUGINS)
                return usage_error("at most %d --plugin", CLI_MAX_PLUGINS);
            plugins[n_plugins++] = optarg;
            break;
        case 'h': fputs(usage, stdout); return CLI_EXIT_OK;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    const char *file = optind < argc ? argv[optind] : NULL;
    if (optind + 1 < argc)
        return usage_error("unexpected argument '%s'", argv[optind + 1]);
    if (kernel && workload)
        return usage_error("-k and -w: one or the other");
    if (file && (chip || kernel || workload))
        return usage_error("a trace or -c/-k/-w, not both");
    if (!file && !kernel && !workload)
        return usage_error("missing the trace (or -k KERNEL, -w WORKLOAD) to run again");

    struct trace_model *loaded = NULL, *m;
    struct sim_run *run = NULL;
    struct trace_live *live = NULL;
    if (file) {
        struct diag d = {0};
        if (trace_load_file(file, NULL, &loaded, &d) < 0) {
            fail_diag(NULL, &d);
            return CLI_EXIT_USAGE;
        }
        m = loaded;
    } else {
        if ((rc = cli_load_plugins(plugins, n_plugins)) != 0)
            return rc;
        m = run_model(chip, kernel, workload, &run, &live);
        if (!m) {
            trace_live_free(live);
            sim_run_free(run);
            return CLI_EXIT_USAGE;
        }
    }
    char *dir = NULL;
    if (file) {
        const char *slash = strrchr(file, '/');
        dir = slash ? sim_xstrndup(file, (size_t)(slash - file)) : sim_xstrdup(".");
    }
    struct tui_whatif_workload w;
    struct diag d = {0};
    rc = tui_whatif_workload_from_model(m, dir, &w, &d);
    free(dir);
    if (rc < 0) {
        fail_diag(file, &d);
        trace_model_free(loaded);
        trace_live_free(live);
        sim_run_free(run);
        return CLI_EXIT_USAGE;
    }
    if (n_plugins) /* these, not those the trace's run loaded */
        tui_whatif_workload_set_plugins(&w, plugins, n_plugins);
    if (file && (rc = cli_load_plugins((const char *const *)w.plugins, w.nplugins)) != 0) {
        tui_whatif_workload_fini(&w);
        trace_model_free(loaded);
        return rc;
    }
    if (!json && isatty(STDERR_FILENO))
        o.progress = progress;
    struct tui_whatif_result r;
    rc = tui_whatif_run(&w, &o, &r, &d);
    tui_whatif_workload_fini(&w);
    if (rc < 0) {
        fail_diag(file, &d);
        trace_model_free(loaded);
        trace_live_free(live);
        sim_run_free(run);
        return CLI_EXIT_FAIL;
    }
    struct trace_verdict *v = trace_verdict_new(m, NULL);
    struct trace_verdict_check checks[256];
    size_t nc = tui_whatif_checks(&r, checks, sizeof(checks) / sizeof(checks[0]));
    trace_verdict_check(v, checks, nc);
    size_t failed = 0;
    for (size_t i = 0; i < r.npoints; i++)
        failed += r.points[i].error != NULL;
    if (json) {
        struct sim_value *x = tui_whatif_to_value(&r);
        sim_value_map_set_take(x, "bottleneck", trace_verdict_to_value(v));
        struct trace_out out;
        fflush(stdout);
        trace_out_open_fd(&out, STDOUT_FILENO);
        trace_out_value(&out, x);
        trace_out_char(&out, '\n');
        if (trace_out_commit(&out, &d) < 0) {
            fprintf(stderr, "npuscope whatif: standard output: %s\n", d.msg);
            failed++;
        }
        sim_value_free(x);
    } else {
        print_table(&r);
        print_checked(v);
    }
    trace_verdict_free(v);
    tui_whatif_result_fini(&r);
    trace_model_free(loaded);
    trace_live_free(live);
    sim_run_free(run);
    return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
