/*
 * npuscope view FILE.json [--diff B.json]: load a saved trace and open it in the TUI
 * (POST-MORTEM), with --diff compared with a second one (tui/panes/diffview.h).
 * Everything that can go wrong before the screen is taken over (an unknown theme, a file
 * that is not a trace, a terminal that cannot run a full-screen UI) is one line on stderr
 * and exit status 2; after it, the terminal is restored on every way out, and the process
 * then ends at once, without freeing the model (cli_exit_now).
 *
 * While the trace loads, a line on the terminal says how far it is (a bar and the share of
 * the file read, the events so far, the time left; for a compressed trace, first how far
 * its decompression is), a few times a second; q ends the load and the
 * program (exit 0), and so do Ctrl-C and the other signals (exit 128 + the signal), the
 * terminal as it was.
 *
 * The second trace of --diff is loaded once the screen is open, on the comparison's worker
 * as D loads it (its progress in the comparison, keys answered, D or Esc closing it). One
 * that cannot be opened is refused before the screen opens; one that turns out not to be a
 * trace it can compare ends the program with the same line and status 2, the terminal
 * restored.
 */
#include "tui/cli/cli.h"

#include "sim/util/diag.h"
#include "sim/util/escape.h"
#include "tui/app/app.h"
#include "tui/source/source.h"
#include "tui/term/term.h"
#include "tui/term/theme.h"

#include "trace/file/loader.h"
#include "trace/model/budget.h"

#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int fail(const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
    fprintf(stderr, "npuscope view: %s\n", diag_format(d, line, sizeof(line)));
    return CLI_EXIT_USAGE;
}

int cli_theme_check(const char *cmd, const char *theme, const char *user_dir)
{
    if (!theme)
        return 0;
    struct tui_theme th;
    struct diag d;
    diag_clear(&d);
    if (tui_theme_load(&th, theme, user_dir, &d) != -SIM_ENOENT)
        return 0; /* a broken theme file is reported in the TUI */
    if (strchr(theme, '/')) {
        char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
        fprintf(stderr, "npuscope %s: %s\n", cmd, diag_format(&d, line, sizeof(line)));
        return CLI_EXIT_USAGE;
    }
    struct tui_theme_list l;
    tui_theme_list_init(&l, user_dir);
    char names[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < l.len && used + 2 < sizeof(names); i++) {
        int k = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", l.names[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    tui_theme_list_fini(&l);
    char *safe = sim_escape_dup(theme);
    fprintf(stderr, "npuscope %s: no theme named '%s' (themes: %s)\n", cmd, safe, names);
    free(safe);
    return CLI_EXIT_USAGE;
}

/* ---- loading ------------------------------------------------------------------------------ */

/* The terminal as it was before the load read keys one at a time (signal handlers restore
 * it: file scope). */
static struct termios load_saved;
static volatile sig_atomic_t load_raw;
static const int load_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void load_restore(void)
{
    if (load_raw) {
        tcsetattr(STDIN_FILENO, TCSANOW, &load_saved);
        load_raw = 0;
    }
}

static void load_on_signal(int signo)
{
    load_restore();
    static const char erase[] = "\r\033[K";
    ssize_t k = write(STDERR_FILENO, erase, sizeof(erase) - 1);
    (void)k;
    _exit(128 + signo);
}

enum { LOAD_BAR = 20 }; /* cells of the progress bar */

struct loading {
    char name[128]; /* escaped */
    double t0, shown;
    bool line, quit;
    bool inflating;    /* the phase the estimate counts from t0: decompressing, or parsing */
    unsigned delay_ms; /* NPUSCOPE_TEST_LOAD_DELAY_MS: tests make a small load last */
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int load_progress(void *ctx, uint64_t done, uint64_t total, uint64_t events)
{
    struct loading *L = ctx;
    if (L->delay_ms)
        usleep(L->delay_ms * 1000u);
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    while (load_raw && poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
        char c;
        if (read(STDIN_FILENO, &c, 1) != 1)
            break;
        if (c == 'q' || c == 'Q') {
            L->quit = true;
            return 1;
        }
    }
    double now = mono_s();
    bool inflating = events == TRACE_LOAD_DECOMPRESSING;
    if (inflating != L->inflating) { /* a new phase: its own estimate */
        L->inflating = inflating;
        L->t0 = now;
    }
    if (now - L->shown < 0.2 || !total)
        return 0;
    L->shown = now;
    double frac = (double)done / (double)total, took = now - L->t0;
    frac = frac > 1 ? 1 : frac;
    char left[32] = "", bar[LOAD_BAR + 1], what[40] = "";
    if (frac > 0.01 && took > 0.5)
        snprintf(left, sizeof(left), "%s%.0f s left", inflating ? "" : ", ",
                 took * (1 - frac) / frac);
    int full = (int)(frac * LOAD_BAR);
    for (int k = 0; k < LOAD_BAR; k++)
        bar[k] = k < full ? '#' : '-';
    bar[LOAD_BAR] = '\0';
    if (!inflating)
        snprintf(what, sizeof(what), "%llu events", (unsigned long long)events);
    fprintf(stderr, "\rnpuscope: %s %s: [%s] %.0f%% (%s%s; q quits)\033[K",
            inflating ? "decompressing" : "loading", L->name, bar, 100 * frac, what, left);
    fflush(stderr);
    L->line = true;
    return 0;
}

/* Load file with the progress line and q (when stderr is a terminal). NULL with d set
 * when it fails; *quit set when the user ended it. */
static struct tui_source *load(const char *file, bool cache, bool recover, struct diag *d,
                               bool *quit)
{
    *quit = false;
    if (!isatty(STDERR_FILENO))
        return tui_source_file_open_progress(file, cache, recover, d, NULL);
    struct loading L = {.t0 = mono_s()};
    L.shown = L.t0;
    sim_escape(file, strlen(file), L.name, sizeof(L.name));
    const char *delay = getenv("NPUSCOPE_TEST_LOAD_DELAY_MS");
    L.delay_ms = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
    struct sigaction sa = {.sa_handler = load_on_signal}, old[3];
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(load_signals[i], &sa, &old[i]);
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &load_saved) == 0) {
        struct termios raw = load_saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
            load_raw = 1;
    }
    struct trace_load_progress p = {load_progress, &L, L.delay_ms ? 64 : 4096};
    struct tui_source *src = tui_source_file_open_progress(file, cache, recover, d, &p);
    load_restore();
    if (L.line)
        fprintf(stderr, "\r\033[K");
    for (int i = 0; i < 3; i++)
        sigaction(load_signals[i], &old[i], NULL);
    *quit = L.quit;
    return src;
}

/* Whether path can be opened to read, and is not a directory. */
static bool openable(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
    close(fd);
    return ok;
}

int cli_view(const char *file, const char *theme, const char *diff, bool no_cache, bool recover)
{
    setlocale(LC_ALL, "");
    bool unicode = tui_term_unicode();
    struct diag d;
    diag_clear(&d);
    char *user_dir = tui_theme_user_dir();
    int status = CLI_EXIT_USAGE;
    struct tui_source *src = NULL;
    struct tui_term *term = NULL;
    if (cli_theme_check("view", theme, user_dir) != 0)
        goto out;
    if (tui_term_check(&d) < 0) {
        status = fail(&d);
        goto out;
    }
    struct trace_model *second = NULL;
    if (diff && openable(file) && !openable(diff)) {
        /* said now, as the loader says it (or, there by now, loaded) */
        if (!(second = cli_diff_load("view", diff)))
            goto out;
    }
    /* a big trace's arrays live in the memory budget's file (trace/model/budget.h): a small
     * process of its own closes it once this one is gone, so that leaving is at once. Made
     * now, while the process is small */
    trace_budget_keeper_start();
    bool quit;
    src = load(file, !no_cache, recover, &d, &quit);
    if (!src) {
        trace_model_free(second);
        status = quit ? CLI_EXIT_OK : fail(&d);
        goto out;
    }
    if (tui_term_open(&term, &d) < 0) {
        trace_model_free(second);
        status = fail(&d);
        goto out;
    }
    int w, h;
    tui_term_size(term, &w, &h);
    struct tui_app *app = tui_app_new(src, w, h, unicode, theme, user_dir, NULL, &d);
    if (second)
        tui_app_diff_take(app, second, diff);
    else if (diff)
        tui_app_diff_load(app, diff);
    status = tui_app_run(app, term);
    tui_term_close(term);
    uint64_t errors;
    if (status == TUI_APP_DIFF_FAILED && tui_app_diff_failure(app, &d, &errors)) {
        cli_diff_load_fail("view", diff, &d, errors);
        status = CLI_EXIT_USAGE;
    }
    if (!cli_exit_frees()) {
        tui_source_file_leave(src); /* an index half written goes with the process */
        tui_app_leave(app);
    }
    cli_exit_now(status); /* at once: the model and the analyses are the kernel's to free */
    tui_app_free(app);
out:
    tui_source_free(src);
    free(user_dir);
    return status;
}
