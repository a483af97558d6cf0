/*
 * npuscope run on a terminal (and npuscope with no arguments): the simulation runs inside
 * the TUI (LIVE, PAUSED, FINISHED; tui/source/source_live.c). With --listen the same live source
 * is served to viewers instead (tui/source/serve.h), and with --keep-on-hangup a TUI run whose
 * terminal goes away carries on that way. What can go wrong before the screen is taken
 * over (a bad chip or workload, an unknown theme, a trace file that cannot be created, a
 * socket that cannot be made) is one line on stderr and exit status 2. After the UI (or
 * the serving) ends, the trace file given with -o is completed (or written up to now and
 * marked incomplete when the simulation did not finish), and --chrome written; then the
 * process ends at once (cli_exit_now), the model left to the kernel. With
 * --verify or --dump, phase 2 runs when the simulation finishes: the header shows the
 * verdict, and the full report is printed at the end.
 */
#include "tui/cli/cli.h"

#include "sim/kernel/guard.h"
#include "sim/phase2/dump.h"
#include "sim/util/escape.h"
#include "sim/host/run.h"
#include "sim/phase2/verify.h"
#include "sim/util/xalloc.h"
#include "trace/file/chrome.h"
#include "trace/live/live.h"
#include "trace/model/budget.h"
#include "tui/app/app.h"
#include "tui/panes/task.h"
#include "tui/source/ckpt.h"
#include "tui/source/serve.h"
#include "tui/source/source.h"
#include "tui/term/term.h"
#include "tui/term/theme.h"
#include "tui/term/view.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
    diag_format(d, line, sizeof(line));
    fprintf(stderr, "%s%s\n", d->file[0] ? "" : "npuscope: ", line);
    return CLI_EXIT_USAGE;
}

/* Phase 2 in the TUI: what it needs and what it found. */
struct verify_ctx {
    const struct cli_run_opts *o;
    struct sim_verify_capture *cap; /* owned */
    bool ran;
    char *report; /* owned: the text report, printed after the UI */
    int status;   /* the exit status it calls for */
};

/* The live source's verify hook: phase 2 once the simulation has finished. */
static int verify_hook(struct sim_run *run, char *line, size_t size, void *ctx)
{
    struct verify_ctx *v = ctx;
    const struct cli_run_opts *o = v->o;
    v->ran = true;
    struct sim_verify_opts vo = {
        .compare = o->verify != CLI_VERIFY_NONE,
        .ops = o->verify == CLI_VERIFY_OPS,
    };
    const char *corrupt = getenv("NPUSCOPE_TEST_CORRUPT_OP"); /* as headless: a test hook */
    if (corrupt && *corrupt) {
        vo.exec.corrupt = true;
        vo.exec.corrupt_index = (size_t)strtoull(corrupt, NULL, 10);
    }
    struct sim_verify_report rep;
    struct diag d;
    diag_clear(&d);
    if (sim_verify_phase2(run, v->cap, &vo, &rep, &d) < 0) {
        char msg[600];
        snprintf(line, size, "phase 2 failed: %s", diag_format(&d, msg, sizeof(msg)));
        v->status = CLI_EXIT_FAIL;
        return -SIM_EINVAL;
    }
    int n = 0;
    if (o->verify) {
        v->report = sim_verify_report_text(&rep);
        size_t bad = 0;
        for (size_t i = 0; i < rep.n_outputs; i++)
            bad += !rep.outputs[i].pass;
        if (rep.op_failed)
            n = snprintf(line, size, "verify: FAIL at op %zu (%s)", rep.first_op.index,
                         rep.first_op.op_name ? rep.first_op.op_name : "?");
        else
            n = snprintf(line, size, "verify: %s, %zu of %zu output%s agree%s",
                         rep.pass ? "PASS" : "FAIL", rep.n_outputs - bad, rep.n_outputs,
                         rep.n_outputs == 1 ? "" : "s", rep.n_notes ? " (some unchecked)" : "");
        if (!rep.pass)
            v->status = CLI_EXIT_FAIL;
    }
    if (o->dump_dir && n >= 0 && (size_t)n < size) {
        if (sim_dump_launches(o->dump_dir, v->cap, &d) < 0) {
            char msg[600];
            snprintf(line + n, size - (size_t)n, "%sdump failed: %s", n ? "; " : "",
                     diag_format(&d, msg, sizeof(msg)));
            v->status = CLI_EXIT_USAGE;
        } else {
            snprintf(line + n, size - (size_t)n, "%sdumped %zu launch%s", n ? "; " : "",
                     sim_verify_capture_count(v->cap),
                     sim_verify_capture_count(v->cap) == 1 ? "" : "es");
        }
    }
    bool pass = rep.pass;
    sim_verify_report_fini(&rep);
    return pass ? 0 : 1;
}

/* The guard's finish (a plug-in kernel crashed or looped): the trace up to now, with its
 * INVALID_TRACE marker. */
static void crash_finish(void *ctx)
{
    struct tui_source *src = ctx;
    struct diag d;
    diag_clear(&d);
    tui_task_release(); /* the analyses stop reading the model: the run's last events join it */
    tui_source_live_let_go(src);
    if (tui_source_live_finish(src, &d) < 0) {
        char line[1024];
        fprintf(stderr, "npuscope: %s\n", diag_format(&d, line, sizeof(line)));
    }
}

/* ---- Ctrl-R: the plug-ins reloaded, the run started again ------------------------------- *
 * A process cannot load a new build of a shared object it has loaded (dlopen finds the old
 * one by its name), so the run starts again in a fresh image of this program, with the same
 * arguments: first a copy checks that it would start (NPUSCOPE_RELOAD_CHECK: the plug-ins
 * load, the chip config, the workload or kernel are fine; it stops there, before any output
 * file is touched), and its one line of error keeps the old run on screen; then this
 * process ends its checkpoints, gives the terminal back and executes itself again, handing
 * on what the next run keeps through a file named by NPUSCOPE_RELOAD_STATE. */

#define RELOAD_CHECK_ENV "NPUSCOPE_RELOAD_CHECK"
#define RELOAD_STATE_ENV "NPUSCOPE_RELOAD_STATE"
enum { RELOAD_CHECK_S = 60 }; /* a check that takes longer is given up */

/* This process's arguments (from /proc/self/cmdline), NULL-terminated; NULL when unknown. */
static char **self_argv(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len = 0, cap = 4096;
    char *buf = sim_xmalloc(cap);
    for (;;) {
        if (len + 1 >= cap)
            buf = sim_xrealloc(buf, cap *= 2);
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += buf[i] == '\0';
    char **argv = sim_xcalloc(n + 2, sizeof(*argv));
    size_t k = 0;
    for (size_t i = 0; i < len && k <= n; i += strlen(buf + i) + 1)
        argv[k++] = buf + i; /* buf stays allocated for the exec */
    if (!k) {
        free(buf);
        free(argv);
        return NULL;
    }
    return argv;
}

/* The app's reload check: a copy of this program started with the same arguments stops
 * where the run would begin; its first line on stderr says what is wrong. */
static int reload_check(void *ctx, struct diag *d)
{
    (void)ctx;
    char **argv = self_argv();
    if (!argv)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL,
                        "cannot read this process's arguments (/proc/self/cmdline)");
    int err[2];
    if (pipe2(err, O_CLOEXEC) < 0) {
        free(argv[0]);
        free(argv);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
        }
        dup2(err[1], STDERR_FILENO);
        setenv(RELOAD_CHECK_ENV, "1", 1);
        unsetenv(RELOAD_STATE_ENV);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(err[1]);
    free(argv[0]);
    free(argv);
    if (pid < 0) {
        close(err[0]);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "fork: %s", strerror(errno));
    }
    char msg[1024];
    size_t len = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool timed_out = false;
    for (;;) {
        struct pollfd p = {err[0], POLLIN, 0};
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > RELOAD_CHECK_S) {
            timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        if (poll(&p, 1, 1000) <= 0)
            continue;
        char tmp[512];
        ssize_t r = read(err[0], tmp, sizeof(tmp));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t take = (size_t)r < sizeof(msg) - 1 - len ? (size_t)r : sizeof(msg) - 1 - len;
        memcpy(msg + len, tmp, take);
        len += take;
    }
    close(err[0]);
    msg[len] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL,
                        "the run did not start within %d s (a plug-in's setup that hangs?)",
                        RELOAD_CHECK_S);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char *nl = strchr(msg, '\n');
    if (nl)
        *nl = '\0';
    if (!msg[0])
        snprintf(msg, sizeof(msg), "the run would not start (%s %d)",
                 WIFSIGNALED(status) ? "signal" : "exit status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    const char *m = strncmp(msg, "npuscope: ", 10) == 0 ? msg + 10 : msg;
    return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "%s", m);
}

/* What the last run handed on (NPUSCOPE_RELOAD_STATE), read and forgotten; 0: nothing. */
static size_t reload_state_take(void *buf, size_t size)
{
    const char *path = getenv(RELOAD_STATE_ENV);
    if (!path || !*path)
        return 0;
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (len < size &&
               ((r = read(fd, (char *)buf + len, size - len)) > 0 || (r < 0 && errno == EINTR)))
            len += r > 0 ? (size_t)r : 0;
        close(fd);
    }
    unlink(path);
    unsetenv(RELOAD_STATE_ENV);
    return len;
}

/* Start the run again in a fresh image of this program with carry[0..len) handed on.
 * Returns only when it could not (with d filled). */
static void reload_exec(const void *carry, size_t len, struct diag *d)
{
    char **argv = self_argv();
    if (!argv) {
        diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "reload: cannot read this process's arguments");
        return;
    }
    const char *dir = getenv("TMPDIR");
    char *path = sim_xasprintf("%s/npuscope-reload.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    bool ok = fd >= 0 && write(fd, carry, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    if (ok) {
        setenv(RELOAD_STATE_ENV, path, 1);
        tui_ckpt_hand_on(); /* the next image goes on under this one's supervisor */
        execv("/proc/self/exe", argv);
    }
    diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "reload: cannot start npuscope again: %s",
             strerror(errno));
    if (fd >= 0)
        unlink(path);
    free(path);
    free(argv[0]);
    free(argv);
}

/* The kernel, the workload file, or the demo: what the header names. */
static const char *run_name(const struct cli_run_opts *o)
{
    return o->workload ? o->workload : o->kernel ? o->kernel : "the demo workload";
}

/* After a hang-up nothing of the terminal is used again: its descriptors lead nowhere. */
static void leave_terminal(void)
{
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    for (int i = 0; i < 3; i++)
        dup2(fd, i);
    if (fd > 2)
        close(fd);
}

/*
 * Serve src to viewers until the run ends (tui/source/serve.h). hung_up: the TUI's terminal has
 * gone (--keep-on-hangup), the message goes to it while it may still be there, then the
 * terminal is left. Returns the exit status: 0 (finished and nobody watching, or stopped),
 * 128 + a signal, or 2 when the socket cannot be made (d says why).
 */
static int serve(const struct cli_run_opts *o, struct tui_source *src, const char *run_id,
                 bool hung_up, struct diag *d)
{
    struct tui_serve_opts so = {
        .path = o->listen_path,
        .run_id = run_id,
        .name = run_name(o),
        .trace_path = o->trace,
    };
    struct tui_server *srv;
    /* viewers cannot go back: the checkpoints (a TUI run's, before its hang-up) would only
     * hold memory, and new ones the served connections */
    tui_source_live_forget_past(src);
    if (tui_server_new(src, &so, &srv, d) < 0) {
        if (hung_up)
            leave_terminal();
        return hung_up ? 128 + SIGHUP : CLI_EXIT_USAGE;
    }
    char *id = sim_escape_dup(run_id), *path = sim_escape_dup(tui_server_path(srv));
    fprintf(stderr,
            "npuscope: %sserving run %s on %s: npuscope attach %s (npuscope stop %s ends "
            "it)\n",
            hung_up ? "the terminal hung up; the run carries on, " : "", id, path, id, id);
    fflush(stderr);
    free(id);
    free(path);
    if (hung_up)
        leave_terminal();
    int signo = 0;
    enum tui_serve_end end = tui_server_run(srv, &signo);
    char reason[96];
    snprintf(reason, sizeof(reason), "%s",
             end == TUI_SERVE_STOPPED     ? "the run was stopped (npuscope stop)"
             : end == TUI_SERVE_SIGNALLED ? "the run was ended by a signal"
                                          : "the run has finished");
    tui_server_free(srv, reason);
    return end == TUI_SERVE_SIGNALLED ? 128 + signo : 0;
}

/* The one line a served run prints at its end (stdout). */
static void served_summary(const struct cli_run_opts *o, struct tui_source *src, const char *run_id)
{
    struct tui_source_status st;
    src->ops->status(src, &st);
    char t[32];
    tui_fmt_ns(
        t, sizeof(t),
        sim_ticks_to_ns(sim_engine_now(sim_chip_engine(sim_run_chip(tui_source_live_run(src))))));
    char *id = sim_escape_dup(run_id);
    printf("npuscope run: %s %s after %llu events, %s simulated", id,
           st.mode == TUI_MODE_FINISHED ? "finished" : "stopped",
           (unsigned long long)st.events_done, t);
    free(id);
    if (o->trace) {
        char *p = sim_escape_dup(o->trace);
        printf("; trace written to %s%s", p, st.mode == TUI_MODE_FINISHED ? "" : " (incomplete)");
        free(p);
    }
    printf("\n");
}

int cli_live(const struct cli_run_opts *o)
{
    setlocale(LC_ALL, "");
    bool unicode = tui_term_unicode();
    struct diag d;
    diag_clear(&d);
    char *user_dir = tui_theme_user_dir();
    int status = CLI_EXIT_USAGE;
    struct sim_run *run = NULL;
    struct trace_live *feed = NULL;
    struct tui_source *src = NULL;
    struct tui_term *term = NULL;
    struct verify_ctx v = {.o = o};
    char *served_id = NULL;
    if (!o->listen && cli_theme_check("run", o->theme, user_dir) != 0)
        goto out;
    struct sim_run_opts ro = {
        .chip_file = o->chip,
        .workload_file = o->workload,
        .kernel_spec = o->kernel,
        .real_data = o->verify != CLI_VERIFY_NONE || o->dump_dir, /* phase 2 */
    };
    if (sim_run_new(&ro, &run, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    if (getenv(RELOAD_CHECK_ENV)) { /* Ctrl-R's check: the run would start */
        status = 0;
        goto out;
    }
    static unsigned char carry[TUI_SOURCE_CARRY_MAX];
    size_t carry_len = reload_state_take(carry, sizeof(carry));
    /* phase 2 costs nothing when off: no input snapshots in the op log, no capture */
    sim_set_fatal_where(sim_run_progress, run); /* out of memory: say how far it got */
    if (o->verify != CLI_VERIFY_NONE || o->dump_dir)
        v.cap = sim_verify_capture_attach(run);
    else
        sim_run_timing_only(run);
    struct cli_trace_meta meta;
    cli_run_trace_opts(o, run, &meta);
    /* a served run's id names its socket: unique even when SOURCE_DATE_EPOCH pins the
     * trace's */
    served_id =
        meta.run_id[0] ? sim_xstrdup(meta.run_id) : sim_xasprintf("npuscope-%ld", (long)getpid());
    if (o->chrome && cli_check_output(o->chrome, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    if (trace_live_new(sim_run_chip(run), &meta.lo, &feed, &d) < 0) {
        status = fail(&d);
        goto out;
    }
    struct tui_live_opts lo = {
        .name = run_name(o),
        .paused = o->paused,
        .speed = o->speed,
        .verify = v.cap ? verify_hook : NULL,
        .verify_ctx = &v,
        .carry = carry_len ? carry : NULL,
        .carry_len = carry_len,
        .reload_check = o->listen ? NULL : reload_check,
    };
    /* going back: this process stays as the supervisor of the live process and its
     * checkpoints (tui/source/ckpt.h); without a terminal there is nothing to go back in, and a
     * served run's viewers have no way back */
    if (!o->no_reverse && !o->listen && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
        struct diag cd;
        diag_clear(&cd);
        lo.reverse = tui_ckpt_supervise(&cd) == 0;
    }
    /* the memory budget's file is closed by a small process of its own once this one (and
     * its checkpoints) are gone: leaving a run of any length is at once. Made now, while the
     * process is small and after the supervisor, which must not have it as a child */
    trace_budget_keeper_start();
    struct sim_chip *chip = sim_run_chip(run);
    src = tui_source_live_take(run, feed, &lo);
    run = NULL, feed = NULL; /* the source has them */
    if (o->listen && cli_guard(chip, o->watchdog_s, NULL, crash_finish, src) != 0)
        goto out;
    if (o->listen) {
        status = serve(o, src, served_id, false, &d);
        if (status == CLI_EXIT_USAGE) {
            fail(&d);
            goto out;
        }
    } else {
        if (tui_term_open(&term, &d) < 0) {
            status = fail(&d);
            goto out;
        }
        /* after the terminal's own crash handlers: the guard's report restores it */
        if (cli_guard(chip, o->watchdog_s, tui_term_crash_restore, crash_finish, src) != 0) {
            tui_term_close(term);
            goto out;
        }
        int w, h;
        tui_term_size(term, &w, &h);
        struct tui_app *app = tui_app_new(src, w, h, unicode, o->theme, user_dir, NULL, &d);
        status = tui_app_run(app, term);
        size_t n = status == 0 ? tui_source_live_reload_carry(src, carry, sizeof(carry)) : 0;
        if (n) { /* Ctrl-R: this run ends here, the next starts in a fresh image */
            tui_term_close(term);
            tui_app_free(app);
            cli_unguard();
            sim_guard_disarm();
            sim_verify_capture_free(v.cap); /* while the run it watches still exists */
            v.cap = NULL;
            tui_source_free(src); /* its checkpoints end */
            src = NULL;
            diag_clear(&d);
            reload_exec(carry, n, &d);
            status = fail(&d);
            goto out;
        }
        bool hung_up = status == 128 + SIGHUP;
        if (hung_up) /* (a hang-up signalled again must not stop the trace being written) */
            tui_term_ignore_hangups(term);
        tui_term_close(term);
        /* NPUSCOPE_TEST_HANGUP_DELAY_MS: tests signal the hang-up again meanwhile */
        const char *hup_delay = hung_up ? getenv("NPUSCOPE_TEST_HANGUP_DELAY_MS") : NULL;
        if (hup_delay) {
            unsigned long ms = strtoul(hup_delay, NULL, 10);
            struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        /* nobody is left to go back: the checkpoints end now, their memory given back while
         * the trace is written, not after it */
        tui_source_live_forget_past(src);
        /* the analyses' workers stop before the trace is finished from the model they
         * read, or the run carries on served; else they are left to the process's end */
        if (o->trace || o->chrome || (hung_up && o->keep_on_hangup) || cli_exit_frees()) {
            tui_app_free(app);
            tui_source_live_let_go(src); /* what the run did while they read it */
        }
        /* the terminal went away: the run carries on, served (--keep-on-hangup) */
        if (hung_up && o->keep_on_hangup)
            status = serve(o, src, served_id, true, &d);
    }

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
    if (o->listen) {
        served_summary(o, src, served_id);
    } else if (o->trace && status != 128 + SIGHUP) { /* the TUI is gone: where its trace went */
        struct tui_source_status st;
        src->ops->status(src, &st);
        char *p = sim_escape_dup(o->trace);
        fprintf(stderr, "npuscope: trace written to %s%s\n", p,
                st.mode == TUI_MODE_FINISHED ? "" : " (incomplete: the run was stopped)");
        free(p);
    }
    if (v.report)
        fputs(v.report, stdout);
    else if (v.cap && !v.ran)
        fputs("npuscope: the simulation did not finish: phase 2 did not run\n", stderr);
    if (status < 128 && v.status > status) /* a signal's status stays */
        status = v.status;
    cli_exit_now(status); /* everything written: the rest is the kernel's to take back */
out:
    cli_unguard();
    sim_verify_capture_free(v.cap); /* while the run it watches still exists */
    free(v.report);
    free(served_id);
    tui_source_free(src);
    trace_live_free(feed);
    sim_set_fatal_where(NULL, NULL);
    sim_run_free(run);
    free(user_dir);
    return status;
}
