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

/* Run r to its end, keeping the trace feed (may be NULL) up to date. */
static void run_to_end(struct sim_run *r, struct trace_live *live)
{
    bool tty = isatty(STDERR_FILENO);
    double start = wall_seconds(), last = 0;
    bool shown = false;
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 20000);
        if (live)
            trace_live_sync(live);
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
    printf("simulated time   %.3f ns (%.0f cycles)\n", s->sim_ns, s->sim_ns * cfg->clock_ghz);
    printf("events           %llu\n", (unsigned long long)s->events);
    printf("op records       %zu\n", s->op_records);
    printf("host requests    %zu of %zu answered, %zu failed\n", s->completed, s->requests,
           s->failed);
    const struct sim_kdata_info *kd = sim_run_kdata(r);
    if (kd) {
        char data[128];
        printf("data             %s\n", sim_kdata_format(kd, data, sizeof(data)));
    }

    printf("\n%-36s %14s %7s %8s\n", "component", "busy ns", "util", "msgs");
    for (size_t i = 0; i < s->n_components; i++) {
        const struct sim_run_component *c = &s->components[i];
        bool memory =
            c->kind == SIM_NODE_HBM || c->kind == SIM_NODE_SRAM || c->kind == SIM_NODE_TCM;
        if (memory || (!c->msgs && c->busy_ns == 0))
            continue;
        printf("%-36s %14.3f %6.1f%% %8llu\n", c->id, c->busy_ns, 100.0 * c->utilization,
               (unsigned long long)c->msgs);
    }

    printf("\n%-36s %14s %14s %7s\n", "memory", "bytes read", "bytes written", "util");
    for (size_t i = 0; i < s->n_components; i++) {
        const struct sim_run_component *c = &s->components[i];
        bool memory =
            c->kind == SIM_NODE_HBM || c->kind == SIM_NODE_SRAM || c->kind == SIM_NODE_TCM;
        if (!memory || (!c->bytes_read && !c->bytes_written))
            continue;
        printf("%-36s %14llu %14llu %6.1f%%\n", c->id, (unsigned long long)c->bytes_read,
               (unsigned long long)c->bytes_written, 100.0 * c->utilization);
    }

    printf("\n%-52s %14s %7s\n", "link", "bytes", "util");
    for (size_t i = 0; i < s->n_links; i++)
        printf("%-52s %14llu %6.1f%%\n", s->links[i].name, (unsigned long long)s->links[i].bytes,
               100.0 * s->links[i].utilization);

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
    if (o->listen) /* served: the live source without a terminal */
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
    run_to_end(r, live);
    bool traces_ok = !live || write_traces(o, live, sim_run_over(r));
    struct sim_run_summary s;
    sim_run_summarize(r, &s);
    print_summary(o, r, &s);
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
                                                         : "dtype";
            printf("%s %s=%s (%s: %s)", j ? "\n           " : "", p->key, p->dflt, type, p->doc);
        }
        printf("\n");
        if (i + 1 < sim_kernel_count())
            printf("\n");
    }
    printf("\nrun one: npuscope run -k NAME[:key=value,...]\n");
    return CLI_EXIT_OK;
}
