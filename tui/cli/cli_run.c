/*
 * `npuscope run` headless and `npuscope kernels`: load the chip and the host program, run
 * the simulation to its end (a progress bar on stderr when it is a terminal and the run
 * takes more than a second), print the summary on stdout, and turn failures into one line
 * each on stderr and the exit status. With -o / --chrome the live trace feed
 * (trace/live/live.h) records the run and the files are written at its end. With --verify or
 * --dump, phase 2 replays the op log with real data afterwards (sim/phase2/verify.h) and its
 * report follows the summary.
 */
#include "tui/cli/cli.h"

#include "sim/chip/models.h"
#include "sim/phase2/dump.h"
#include "sim/util/escape.h"
#include "sim/kernel/kernel.h"
#include "sim/kernel/registry.h"
#include "sim/host/run.h"
#include "sim/phase2/verify.h"
#include "sim/util/xalloc.h"
#include "trace/file/chrome.h"
#include "trace/live/live.h"
#include "tui/term/term.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(const struct sim_run *r, bool clear)
{
    if (clear) {
        fputs("\r\033[K", stderr);
        return;
    }
    size_t done = sim_run_requests_done(r), all = sim_run_requests(r);
    enum { WIDTH = 30 };
    size_t fill = all ? done * WIDTH / all : WIDTH;
    char bar[WIDTH + 1];
    for (size_t i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    double ns = sim_ticks_to_ns(sim_engine_now(sim_chip_engine(sim_run_chip(r))));
    fprintf(stderr, "\r[%s] %zu/%zu requests, %.3f us simulated", bar, done, all, ns / 1000.0);
    fflush(stderr);
}

/*
 * The model the verdict is computed from, when the run keeps none for its files: kept
 * while it is small, dropped once it passes CLI_VERDICT_EVENTS events, so that a headless
 * run of any length stays in bounded memory.
 */
struct verdict_feed {
    struct trace_live *live; /* owned, or NULL (none, or dropped) */
    bool dropped;            /* the run outgrew it */
};

#define CLI_VERDICT_EVENTS 500000

static void verdict_sync(struct verdict_feed *vf)
{
    if (!vf->live)
        return;
    trace_live_sync(vf->live);
    if (trace_model_event_count(trace_live_model(vf->live)) > CLI_VERDICT_EVENTS) {
        trace_live_free(vf->live);
        vf->live = NULL;
        vf->dropped = true;
    }
}

/* Run r to its end, keeping the trace feed (may be NULL) and the verdict's model up to
 * date. */
static void run_to_end(struct sim_run *r, struct trace_live *live, struct verdict_feed *vf)
{
    bool tty = isatty(STDERR_FILENO);
    double start = wall_seconds(), last = 0;
    bool shown = false;
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 20000);
        if (live)
            trace_live_sync(live);
        verdict_sync(vf);
        if (!tty)
            continue;
        double t = wall_seconds();
        if (t - start > 1.0 && t - last > 0.1) {
            progress(r, false);
            shown = true;
            last = t;
        }
    }
    if (shown)
        progress(r, true);
}

/* fputs of untrusted text, escaped. */
static void put_safe(FILE *f, const char *s)
{
    char *e = sim_escape_dup(s ? s : "");
    fputs(e, f);
    free(e);
}

static const char *source_name(const struct cli_run_opts *o)
{
    return o->workload ? o->workload : o->kernel ? o->kernel : "the demo workload";
}

/* The rows of the run's tables: the busiest first (utilization, then bytes or busy time),
 * ties in the chip's order. */
static const struct sim_run_summary *sort_summary;
static bool sort_links;

static bool is_memory(const struct sim_run_component *c)
{
    return c->kind == SIM_NODE_HBM || c->kind == SIM_NODE_SRAM || c->kind == SIM_NODE_TCM;
}

static void row_key(size_t i, double *util, double *amount)
{
    if (sort_links) {
        *util = sort_summary->links[i].utilization;
        *amount = (double)sort_summary->links[i].bytes;
    } else {
        const struct sim_run_component *c = &sort_summary->components[i];
        *util = c->utilization;
        *amount =
            is_memory(c) ? (double)(c->bytes_read + c->bytes_written) : (double)c->busy_cycles;
    }
}

static int busiest_first(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double ui, ai, uj, aj;
    row_key(i, &ui, &ai);
    row_key(j, &uj, &aj);
    if (ui != uj)
        return ui > uj ? -1 : 1;
    if (ai != aj)
        return ai > aj ? -1 : 1;
    return i < j ? -1 : i > j;
}

static void sort_rows(size_t *rows, size_t n, const struct sim_run_summary *s, bool links)
{
    sort_summary = s;
    sort_links = links;
    qsort(rows, n, sizeof(*rows), busiest_first);
}

/* How many of a table's n rows are printed: all with --all, else the busiest CLI_RUN_TOP. */
static size_t shown(const struct cli_run_opts *o, size_t n)
{
    return o->all || n <= CLI_RUN_TOP ? n : CLI_RUN_TOP;
}

static void print_rest(const struct cli_run_opts *o, size_t n, const char *what)
{
    if (n > shown(o, n))
        printf("%-36s (%zu more %s; --all lists every one)\n", "...", n - shown(o, n), what);
}

static void print_summary(const struct cli_run_opts *o, const struct sim_run *r,
                          const struct sim_run_summary *s)
{
    const struct sim_config *cfg = sim_run_config(r);
    printf("npuscope run: ");
    put_safe(stdout, source_name(o));
    printf(" on ");
    put_safe(stdout, cfg->name);
    printf(" (%u sip x %u cube x %u PE, %g GHz)\n", cfg->sips, cfg->cubes_per_sip,
           cfg->pes_per_cube, cfg->clock_ghz);
    /* a cycle begun is a cycle of the run, as the trace's cycles_total counts it */
    printf("simulated time   %.3f ns (%llu cycles)\n", s->sim_ns, (unsigned long long)s->cycles);
    printf("events           %llu\n", (unsigned long long)s->events);
    printf("op records       %zu\n", s->op_records);
    printf("host requests    %zu of %zu answered, %zu failed\n", s->completed, s->requests,
           s->failed);
    const struct sim_kdata_info *kd = sim_run_kdata(r);
    if (kd) {
        char data[128];
        printf("data             %s\n", sim_kdata_format(kd, data, sizeof(data)));
    }
    for (int k = 0; k < SIM_NODE_KIND_COUNT; k++) { /* the timing models a plug-in brought */
        const char *name = cfg->model[k];
        const struct sim_component_ops *ops =
            name ? sim_models_find((enum sim_node_kind)k, name, NULL) : NULL;
        const char *from = ops ? sim_models_origin_of(ops) : NULL;
        if (!from)
            continue;
        printf("model            %s: ", sim_models_section((enum sim_node_kind)k));
        put_safe(stdout, name);
        printf(" (from ");
        put_safe(stdout, from);
        printf(")\n");
    }

    size_t *rows = sim_xcalloc(s->n_components + s->n_links + 1, sizeof(*rows));
    size_t n = 0;
    for (size_t i = 0; i < s->n_components; i++) {
        const struct sim_run_component *c = &s->components[i];
        if (!is_memory(c) && (c->msgs || c->busy_cycles > 0))
            rows[n++] = i;
    }
    sort_rows(rows, n, s, false);
    /* busy: the union of the component's ops (its trace track's busy cycles), over the run */
    printf("\nbusy: cycles with one of a component's ops running; util: busy / the run's %llu "
           "cycles\n",
           (unsigned long long)s->cycles);
    printf("%-36s %14s %7s %8s\n", "component", "busy cycles", "util", "msgs");
    for (size_t j = 0; j < shown(o, n); j++) {
        const struct sim_run_component *c = &s->components[rows[j]];
        printf("%-36s %14llu %6.1f%% %8llu\n", c->id, (unsigned long long)c->busy_cycles,
               100.0 * c->utilization, (unsigned long long)c->msgs);
    }
    print_rest(o, n, "components");

    n = 0;
    for (size_t i = 0; i < s->n_components; i++) {
        const struct sim_run_component *c = &s->components[i];
        if (is_memory(c) && (c->bytes_read || c->bytes_written))
            rows[n++] = i;
    }
    sort_rows(rows, n, s, false);
    printf("\n%-36s %14s %14s %7s\n", "memory", "bytes read", "bytes written", "util");
    for (size_t j = 0; j < shown(o, n); j++) {
        const struct sim_run_component *c = &s->components[rows[j]];
        printf("%-36s %14llu %14llu %6.1f%%\n", c->id, (unsigned long long)c->bytes_read,
               (unsigned long long)c->bytes_written, 100.0 * c->utilization);
    }
    print_rest(o, n, "memories");

    for (n = 0; n < s->n_links; n++)
        rows[n] = n;
    sort_rows(rows, n, s, true);
    printf("\n%-52s %14s %7s\n", "link", "bytes", "util");
    for (size_t j = 0; j < shown(o, n); j++) {
        const struct sim_run_link *l = &s->links[rows[j]];
        printf("%-52s %14llu %6.1f%%\n", l->name, (unsigned long long)l->bytes,
               100.0 * l->utilization);
    }
    print_rest(o, n, "links");
    free(rows);

    if (s->n_failures) {
        printf("\nfailed completions\n");
        for (size_t i = 0; i < s->n_failures; i++) {
            const struct sim_run_failure *f = &s->failures[i];
            if (f->kernel)
                continue;
            printf("  ");
            put_safe(stdout, f->request);
            printf("  %s: ", f->error_code ? f->error_code : "?");
            put_safe(stdout, f->message);
            printf("\n");
        }
    }
    if (!s->host_finished)
        printf("\nthe host program did not finish: %zu of %zu requests answered, %zu processes "
               "still blocked\n",
               s->completed, s->requests, s->blocked);
}

/* One diagnostic on stderr, as a file's problem (like a compiler's) or prefixed with
 * "npuscope: ", then what (may be NULL). */
static void print_diag(const struct diag *d, const char *what)
{
    char line[2048];
    diag_format(d, line, sizeof(line));
    fprintf(stderr, "%s%s%s\n", d->file[0] ? "" : "npuscope: ", what ? what : "", line);
}

/* Phase 2 after the run (--verify, --dump): the report on stdout. Returns the exit status
 * it calls for (OK when all agree). */
static int phase2(const struct cli_run_opts *o, struct sim_run *r, struct sim_verify_capture *cap)
{
    struct sim_verify_opts vo = {
        .compare = o->verify != CLI_VERIFY_NONE,
        .ops = o->verify == CLI_VERIFY_OPS,
    };
    /* test hook (tests/e2e/test_verify.sh): perturb the result of op record N, so the
     * end-to-end tests see a mismatch caught and reported */
    const char *corrupt = getenv("NPUSCOPE_TEST_CORRUPT_OP");
    if (corrupt && *corrupt) {
        vo.exec.corrupt = true;
        vo.exec.corrupt_index = (size_t)strtoull(corrupt, NULL, 10);
    }
    struct sim_verify_report rep;
    struct diag d;
    diag_clear(&d);
    if (sim_verify_phase2(r, cap, &vo, &rep, &d) < 0) {
        print_diag(&d, "phase 2: ");
        return CLI_EXIT_FAIL;
    }
    int status = CLI_EXIT_OK;
    printf("\n");
    if (o->verify) {
        char *text = sim_verify_report_text(&rep);
        fputs(text, stdout);
        free(text);
        if (!rep.pass)
            status = CLI_EXIT_FAIL;
    }
    if (o->dump_dir) {
        if (sim_dump_launches(o->dump_dir, cap, &d) < 0) {
            fflush(stdout);
            print_diag(&d, NULL);
            status = CLI_EXIT_USAGE;
        } else {
            printf("dump: inputs and outputs of %zu launch%s in ", sim_verify_capture_count(cap),
                   sim_verify_capture_count(cap) == 1 ? "" : "es");
            put_safe(stdout, o->dump_dir);
            printf("/ (manifest.json)\n");
        }
    }
    sim_verify_report_fini(&rep);
    return status;
}

/* The guard's finish (a plug-in kernel crashed or looped): the trace up to now, with its
 * INVALID_TRACE marker, marked incomplete. */
static void crash_finish(void *ctx)
{
    struct trace_live *live = ctx;
    if (!live)
        return;
    struct diag d;
    diag_clear(&d);
    trace_live_sync(live);
    if (trace_live_finish(live, false, &d) < 0) {
        char line[1024];
        fprintf(stderr, "npuscope: %s\n", diag_format(&d, line, sizeof(line)));
    }
}

/* Write the trace files of a run that is over (complete) or stopped; false on failure. */
static bool write_traces(const struct cli_run_opts *o, struct trace_live *live, bool complete)
{
    struct diag d;
    diag_clear(&d);
    if (trace_live_finish(live, complete, &d) < 0) {
        print_diag(&d, NULL);
        return false;
    }
    if (o->chrome && trace_chrome_write(trace_live_model(live), o->chrome, o->bw_window, &d) < 0) {
        print_diag(&d, NULL);
        return false;
    }
    return true;
}

int cli_run(const struct cli_run_opts *o)
{
    if (o->listen || getenv("NPUSCOPE_RELOAD_CHECK")) /* served, or Ctrl-R's check */
        return cli_live(o);
    if (!o->headless && isatty(STDOUT_FILENO)) {
        struct diag td;
        diag_clear(&td);
        if (tui_term_check(&td) == 0)
            return cli_live(o);
        char line[1024]; /* TERM=dumb and the like: the summary is still useful */
        fprintf(stderr, "npuscope: no TUI (%s): running headless\n",
                diag_format(&td, line, sizeof(line)));
    }
    if (o->paused)
        fputs("npuscope: --paused is for the TUI (stdout is not a terminal, or --headless): "
              "running to the end\n",
              stderr);
    if (o->speed_set)
        fputs("npuscope: --speed is for the TUI (stdout is not a terminal, or --headless): "
              "running as fast as possible\n",
              stderr);
    if (o->keep_on_hangup)
        fputs("npuscope: --keep-on-hangup is for the TUI (stdout is not a terminal): running "
              "headless\n",
              stderr);

    struct sim_run_opts ro = {
        .chip_file = o->chip,
        .workload_file = o->workload,
        .kernel_spec = o->kernel,
        .real_data = o->verify != CLI_VERIFY_NONE || o->dump_dir, /* phase 2 */
    };
    struct sim_run *r;
    struct diag d;
    diag_clear(&d);
    if (sim_run_new(&ro, &r, &d) < 0) {
        print_diag(&d, NULL);
        return CLI_EXIT_USAGE;
    }
    /* phase 2 costs nothing when off: no input snapshots in the op log (ADR-0052 D4's
     * timing-only mode), no capture */
    sim_set_fatal_where(sim_run_progress, r); /* out of memory: say how far it got */
    bool with_phase2 = o->verify != CLI_VERIFY_NONE || o->dump_dir;
    struct sim_verify_capture *cap = NULL;
    if (with_phase2)
        cap = sim_verify_capture_attach(r);
    else
        sim_run_timing_only(r);
    struct trace_live *live = NULL;
    if (o->chrome && cli_check_output(o->chrome, &d) < 0) {
        print_diag(&d, NULL);
        sim_verify_capture_free(cap);
        sim_set_fatal_where(NULL, NULL);
        sim_run_free(r);
        return CLI_EXIT_USAGE;
    }
    if (o->trace || o->chrome) {
        struct cli_trace_meta meta;
        cli_run_trace_opts(o, r, &meta);
        meta.lo.stream_only = !o->chrome; /* nothing else reads the events: keep none */
        if (trace_live_new(sim_run_chip(r), &meta.lo, &live, &d) < 0) {
            print_diag(&d, NULL);
            sim_verify_capture_free(cap);
            sim_set_fatal_where(NULL, NULL);
            sim_run_free(r);
            return CLI_EXIT_USAGE;
        }
    }
    if (cli_guard(sim_run_chip(r), o->watchdog_s, NULL, crash_finish, live) != 0) {
        sim_verify_capture_free(cap);
        trace_live_free(live);
        sim_set_fatal_where(NULL, NULL);
        sim_run_free(r);
        return CLI_EXIT_USAGE;
    }
    /* the verdict reads a kept model: the Chrome export's, else one of its own */
    struct verdict_feed vf = {0};
    if (!o->chrome) {
        struct cli_trace_meta vmeta;
        cli_run_trace_opts(o, r, &vmeta);
        vmeta.lo.trace_path = NULL;
        vmeta.lo.stream_only = false;
        if (trace_live_new(sim_run_chip(r), &vmeta.lo, &vf.live, &d) < 0)
            vf.live = NULL; /* no file is opened: it cannot fail but on memory */
    }
    run_to_end(r, live, &vf);
    bool traces_ok = !live || write_traces(o, live, sim_run_over(r));
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    print_summary(o, r, &s);
    verdict_sync(&vf);
    printf("\n");
    if (o->chrome && live) {
        cli_print_verdict(trace_live_model(live), NULL);
    } else if (vf.live) {
        cli_print_verdict(trace_live_model(vf.live), NULL);
    } else {
        printf("where the time goes: not kept past %d events", CLI_VERDICT_EVENTS);
        if (o->trace) {
            printf(" (npuscope summary ");
            put_safe(stdout, o->trace);
            printf(" gives it)\n");
        } else {
            printf(" (write the trace with -o and run npuscope summary on it)\n");
        }
    }
    trace_live_free(vf.live);
    fflush(stdout);

    /* each failure once on stderr: kernel instances with their own diagnostic, other
     * failed completions with their request */
    for (size_t i = 0; i < s.n_failures; i++) {
        const struct sim_run_failure *f = &s.failures[i];
        if (!f->kernel && f->error_code && strcmp(f->error_code, "E_KERNEL") == 0)
            continue; /* the instances say it better */
        fputs("npuscope: ", stderr);
        if (f->kernel) {
            put_safe(stderr, f->message);
        } else {
            put_safe(stderr, f->request);
            fprintf(stderr, ": %s: ", f->error_code ? f->error_code : "?");
            put_safe(stderr, f->message);
        }
        fputc('\n', stderr);
    }
    if (!s.host_finished)
        fprintf(stderr, "npuscope: the host program did not finish (%zu processes blocked)\n",
                s.blocked);
    int status = !traces_ok                         ? CLI_EXIT_USAGE
                 : s.n_failures || !s.host_finished ? CLI_EXIT_FAIL
                                                    : CLI_EXIT_OK;
    if (with_phase2) {
        int p2 = phase2(o, r, cap);
        if (p2 > status)
            status = p2;
        sim_verify_capture_free(cap);
    }
    cli_unguard();
    sim_run_summary_fini(&s);
    trace_live_free(live);
    sim_set_fatal_where(NULL, NULL);
    sim_run_free(r);
    return status;
}

int cli_kernels(void)
{
    for (size_t i = 0; i < sim_kernel_count(); i++) {
        const struct sim_kernel *k = sim_kernel_at(i);
        char *args = sim_kernel_args_text(k);
        printf("%s\n    %s\n", k->name, k->summary ? k->summary : "");
        const char *from = sim_kernel_origin(k);
        if (from) {
            printf("    from:   ");
            put_safe(stdout, from);
            printf("\n");
        }
        printf("    args:   %s\n    params:", args);
        free(args);
        /* the kernel's own, then the seed and data every kernel has */
        for (size_t j = 0; j < sim_kernel_param_count(k); j++) {
            const struct sim_kparam *p = sim_kernel_param(k, j);
            const char *type = p->type == SIM_KP_INT     ? "int"
                               : p->type == SIM_KP_FLOAT ? "float"
                               : p->type == SIM_KP_DATA  ? "data"
                               : p->type == SIM_KP_TEXT  ? "text"
                                                         : "dtype";
            printf("%s %s=%s (%s: %s)", j ? "\n           " : "", p->key, p->dflt, type, p->doc);
        }
        printf("\n");
        if (i + 1 < sim_kernel_count())
            printf("\n");
    }
    for (size_t i = 0; i < sim_models_count(); i++) { /* the timing models of plug-ins */
        const struct sim_component_ops *m = sim_models_at(i);
        printf("\nmodel %s (%s)\n    ", m->name, m->kind);
        put_safe(stdout, m->doc ? m->doc : "");
        printf("\n    from:   ");
        put_safe(stdout, sim_models_origin(i));
        printf("\n");
    }
    printf("\nrun one: npuscope run -k NAME[:key=value,...]\n");
    return CLI_EXIT_OK;
}
