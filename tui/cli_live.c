/*
 * npuscope run on a terminal (and npuscope with no arguments): the simulation runs inside
 * the TUI (LIVE, PAUSED, FINISHED; tui/source_live.c). What can go wrong before the
 * screen is taken over (a bad chip or workload, an unknown theme, a trace file that
 * cannot be created, a terminal that cannot run the UI) is one line on stderr and exit
 * status 2. After the UI ends, the trace file given with -o is completed (or written up
 * to now and marked incomplete when the simulation did not finish), and --chrome written.
 */
#include "tui/cli.h"

#include "sim/escape.h"
#include "sim/run.h"
#include "trace/chrome.h"
#include "trace/live.h"
#include "tui/app.h"
#include "tui/source.h"
#include "tui/term.h"
#include "tui/theme.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
    diag_format(d, line, sizeof(line));
    fprintf(stderr, "%s%s\n", d->file[0] ? "" : "npuscope: ", line);
    return CLI_EXIT_USAGE;
}

/* The kernel, the workload file, or the demo: what the header names. */
static const char *run_name(const struct cli_run_opts *o)
{
    return o->workload ? o->workload : o->kernel ? o->kernel : "the demo workload";
}

int cli_live(const struct cli_run_opts *o)
{
    setlocale(LC_ALL, "");
    bool unicode = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    struct diag d;
    diag_clear(&d);
    char *user_dir = tui_theme_user_dir();
    int status = CLI_EXIT_USAGE;
    struct sim_run *run = NULL;
    struct trace_live *feed = NULL;
    struct tui_source *src = NULL;
    struct tui_term *term = NULL;
    if (o->theme) {
        struct tui_theme th;
        if (tui_theme_load(&th, o->theme, user_dir, &d) == -SIM_ENOENT) {
            char *safe = sim_escape_dup(o->theme);
            fprintf(stderr, "npuscope run: no theme named '%s' (npuscope view --help)\n", safe);
            free(safe);
            goto out;
        }
        diag_clear(&d); /* a broken theme file is reported in the TUI */
    }
    struct sim_run_opts ro = {
        .chip_file = o->chip,
        .workload_file = o->workload,
        .kernel_spec = o->kernel,
    };
    if (sim_run_new(&ro, &run, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    struct cli_trace_meta meta;
    cli_run_trace_opts(o, run, &meta);
    if (o->chrome && cli_check_output(o->chrome, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    if (trace_live_new(sim_run_chip(run), &meta.lo, &feed, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    struct tui_live_opts lo = {.name = run_name(o), .paused = o->paused};
    src = tui_source_live_take(run, feed, &lo);
    run = NULL, feed = NULL; /* the source has them */
    if (tui_term_open(&term, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    int w, h;
    tui_term_size(term, &w, &h);
    struct tui_app *app = tui_app_new(src, w, h, unicode, o->theme, user_dir, NULL, &d);
    status = tui_app_run(app, term);
    tui_term_close(term);
    tui_app_free(app);

    /* the trace: complete when the simulation ended, else up to now (q, a signal) */
    diag_clear(&d);
    if (tui_source_live_finish(src, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    if (o->chrome && trace_chrome_write(src->ops->model(src), o->chrome, o->bw_window, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    if (status == 0) {
        struct sim_run_summary s;
        sim_run_summarize(tui_source_live_run(src), &s);
        if (s.host_finished && s.n_failures)
            status = CLI_EXIT_FAIL; /* the run failed, as headless says */
        sim_run_summary_fini(&s);
    }
out:
    tui_source_free(src);
    trace_live_free(feed);
    sim_run_free(run);
    free(user_dir);
    return status;
}
