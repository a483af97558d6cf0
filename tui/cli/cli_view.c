/*
 * npuscope view FILE.json [--diff B.json]: load a saved trace and open it in the TUI
 * (POST-MORTEM), with --diff compared with a second one (tui/panes/diffview.h).
 * Everything that can go wrong before the screen is taken over (an unknown theme, a file
 * that is not a trace, a terminal that cannot run a full-screen UI) is one line on stderr
 * and exit status 2; after it, the terminal is restored on every way out.
 */
#include "tui/cli/cli.h"

#include "sim/util/diag.h"
#include "sim/util/escape.h"
#include "tui/app/app.h"
#include "tui/source/source.h"
#include "tui/term/term.h"
#include "tui/term/theme.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int cli_view(const char *file, const char *theme, const char *diff)
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
    struct stat st;
    if (isatty(STDERR_FILENO) && stat(file, &st) == 0 && st.st_size > (16 << 20)) {
        char *safe = sim_escape_dup(file);
        fprintf(stderr, "npuscope: loading %s (%lld MiB)...\n", safe,
                (long long)(st.st_size >> 20));
        free(safe);
    }
    src = tui_source_file_open(file, &d);
    if (!src) {
        status = fail(&d);
        goto out;
    }
    struct trace_model *second = NULL;
    if (diff && !(second = cli_diff_load("view", diff)))
        goto out;
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
    status = tui_app_run(app, term);
    tui_term_close(term);
    tui_app_free(app);
out:
    tui_source_free(src);
    free(user_dir);
    return status;
}
