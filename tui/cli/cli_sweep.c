/*
 * npuscope sweep: design-space sweeps on the command line. `sweep SWEEP.yaml -o DIR`
 * validates every point (tui/sweep/sweep.h), writes DIR and runs the points through an engine
 * (tui/sweep/sweep_run.h) with a progress bar on a terminal; `sweep --collect DIR` prints the
 * results table; `sweep --run-point points/ID` is the task the engines run; `view DIR`
 * browses a sweep in the TUI (tui/panes/sweepview.h). Everything read from files is escaped
 * before it reaches the terminal.
 */
#include "tui/cli/cli.h"

#include "trace/diff/diff.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/diff/diff.h"
#include "trace/file/jsonout.h"
#include "tui/app/app.h"
#include "tui/source/source.h"
#include "tui/sweep/sweep.h"
#include "tui/sweep/sweep_run.h"
#include "tui/panes/sweepview.h"
#include "tui/term/term.h"
#include "tui/term/theme.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_sweep[] =
    "usage: npuscope sweep SWEEP.yaml -o DIR [OPTIONS]\n"
    "       npuscope sweep --collect DIR [--csv | --json]\n"
    "\n"
    "Run a design-space sweep: expand the points of SWEEP.yaml (a grid of axes, or a list\n"
    "of points), validate every one, write DIR (each point's chip config, points.jsonl) and\n"
    "run each point headless through an engine. npuscope view DIR browses the results.\n"
    "\n"
    "  -o, --output DIR       the sweep directory (new, or --resume to finish it)\n"
    "      --engine ENGINE    parallel: GNU parallel (the default when it is installed)\n"
    "                         slurm: a Slurm job array, DIR/sweep.sbatch\n"
    "                         local: a process pool of npuscope's own\n"
    "  -j, --jobs N           points at once (per host with parallel, the array's %N\n"
    "                         with slurm; default: one per CPU)\n"
    "      --retries N        tries of a failing point (parallel, local)\n"
    "  -S, --sshlogin HOSTS   parallel: spread the points over ssh hosts (GNU parallel's\n"
    "                         --sshlogin, e.g. 'host1,8/host2,:' where ':' is this one)\n"
    "      --bin PATH         the npuscope the points run (default: this binary here,\n"
    "                         'npuscope' on PATH on ssh hosts and Slurm nodes)\n"
    "      --resume           run only the points that are not done yet\n"
    "      --submit           slurm: submit DIR/sweep.sbatch with sbatch\n"
    "      --wait             slurm: with --submit, wait for every point to end\n"
    "      --collect DIR      print the results table of the sweep in DIR\n"
    "      --csv, --json      the table as CSV or JSON\n"
    "      --run-point PDIR   run one point (what the engines run, in DIR)\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit status: 0 every point ran, 1 a point failed (the others still ran), 2 bad usage\n"
    "or an invalid sweep (nothing ran).\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char *safe = sim_escape_dup(msg);
    fprintf(stderr, "npuscope sweep: %s (see npuscope sweep --help)\n", safe);
    free(safe);
    return CLI_EXIT_USAGE;
}

/* One line on stderr: a file's problem like a compiler's, else "npuscope sweep: ...". */
static void print_diag(const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
    diag_format(d, line, sizeof(line));
    fprintf(stderr, "%s%s\n", d->file[0] ? "" : "npuscope sweep: ", line);
}

static void put_safe(FILE *f, const char *s)
{
    char *e = sim_escape_dup(s ? s : "");
    fputs(e, f);
    free(e);
}

/* The running binary, for the engines that run points on this machine. */
static void self_path(char *buf, size_t size, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n > 0) {
        buf[n] = '\0';
        return;
    }
    snprintf(buf, size, "%s", argv0 && strchr(argv0, '/') ? argv0 : "npuscope");
}

/* ---- progress --------------------------------------------------------------------------- */

struct progress_ctx {
    bool tty;
    bool shown;
};

static void fmt_duration(double s, char *buf, size_t size)
{
    if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)s % 3600 / 60);
}

static void show_progress(void *ctx, const struct tui_sweep_progress *p, bool final)
{
    struct progress_ctx *pc = ctx;
    if (!pc->tty)
        return;
    if (final) {
        if (pc->shown)
            fputs("\r\033[K", stderr);
        pc->shown = false;
        return;
    }
    enum { WIDTH = 24 };
    size_t done = p->ok + p->failed;
    size_t fill = p->total ? done * WIDTH / p->total : WIDTH;
    char bar[WIDTH + 1];
    for (size_t i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    char eta[64] = "";
    if (p->eta >= 0) {
        char d[24];
        fmt_duration(p->eta, d, sizeof(d));
        snprintf(eta, sizeof(eta), ", about %s left", d);
    }
    fprintf(stderr, "\r\033[K[%s] %zu/%zu points done, %zu failed, %zu running%s", bar, done,
            p->total, p->failed, p->running, eta);
    fflush(stderr);
    pc->shown = true;
}

/* ---- sweep SWEEP.yaml -o DIR --------------------------------------------------------------- */

struct sweep_args {
    const char *file, *dir, *collect, *run_point;
    bool csv, json, engine_given;
    struct tui_sweep_run_opts o;
};

static void free_ids(char **ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
}

/* Whether point id of dir has a result (ran, ok or failed), before the engine starts. */
static bool point_done(const char *dir, const char *id)
{
    char *p = sim_xasprintf("%s/points/%s/result.json", dir, id);
    struct stat st;
    bool done = stat(p, &st) == 0;
    free(p);
    return done;
}

/* After the engine: the counts on stdout, each failed point on stderr. before: the ids of
 * the points that had a result when the engine started (sorted as in the directory), or
 * NULL when none did. */
static int report(const char *dir, double seconds, const char *const *before, size_t nbefore)
{
    struct tui_sweep_table t;
    struct diag d;
    diag_clear(&d);
    if (tui_sweep_collect(dir, &t, &d) < 0) {
        print_diag(&d);
        return CLI_EXIT_FAIL;
    }
    enum { SHOW = 20 };
    size_t shown = 0;
    for (size_t i = 0; i < t.nrows; i++) {
        const struct tui_sweep_row *r = &t.rows[i];
        if (r->status != TUI_SWEEP_FAILED)
            continue;
        if (shown++ == SHOW) {
            fprintf(stderr, "npuscope sweep: %zu more failed points\n", t.n_failed - SHOW);
            break;
        }
        char *params = tui_sweep_params_text(r->params);
        fprintf(stderr, "npuscope sweep: point %s (", r->id);
        put_safe(stderr, params);
        fputs(") failed: ", stderr);
        put_safe(stderr, r->error);
        fputc('\n', stderr);
        free(params);
    }
    size_t ran = 0, ran_failed = 0, j = 0;
    for (size_t i = 0; i < t.nrows; i++) {
        const struct tui_sweep_row *r = &t.rows[i];
        while (j < nbefore && strcmp(before[j], r->id) < 0)
            j++;
        if ((j < nbefore && strcmp(before[j], r->id) == 0) || r->status == TUI_SWEEP_PENDING)
            continue;
        ran++;
        ran_failed += r->status == TUI_SWEEP_FAILED;
    }
    printf("npuscope sweep: %zu point%s in ", t.nrows, t.nrows == 1 ? "" : "s");
    put_safe(stdout, dir);
    if (nbefore)
        printf(": %zu done before, %zu ran now (%zu failed); %zu ok, %zu failed in all", nbefore,
               ran, ran_failed, t.n_ok, t.n_failed);
    else
        printf(": %zu ok, %zu failed", t.n_ok, t.n_failed);
    if (t.n_pending)
        printf(", %zu not run", t.n_pending);
    printf(" (%.1f s); the table: npuscope sweep --collect ", seconds);
    put_safe(stdout, dir);
    printf("\n");
    int rc = t.n_failed || t.n_pending ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    tui_sweep_table_fini(&t);
    return rc;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_sweep(struct sweep_args *a)
{
    struct tui_sweep *s = NULL;
    struct diag d;
    diag_clear(&d);
    if (tui_sweep_load(a->file, &s, &d) < 0) {
        print_diag(&d);
        return CLI_EXIT_USAGE;
    }
    struct tui_sweep_run_opts *o = &a->o;
    if (o->engine == TUI_SWEEP_ENGINE_PARALLEL && !tui_sweep_have_gnu_parallel()) {
        if (a->engine_given) {
            fputs("npuscope sweep: --engine parallel needs GNU parallel, which is not "
                  "installed (Debian package: parallel)\n",
                  stderr);
            tui_sweep_free(s);
            return CLI_EXIT_USAGE;
        }
        fputs("npuscope sweep: GNU parallel is not installed (Debian package: parallel): "
              "running the points with --engine local\n",
              stderr);
        o->engine = TUI_SWEEP_ENGINE_LOCAL;
    }
    if (o->engine == TUI_SWEEP_ENGINE_SLURM && o->submit && !tui_sweep_have_program("sbatch")) {
        fputs("npuscope sweep: --submit needs Slurm's sbatch, which is not installed (Debian "
              "package: slurm-client)\n",
              stderr);
        tui_sweep_free(s);
        return CLI_EXIT_USAGE;
    }
    if (tui_sweep_write_dir(s, a->dir, o->resume, &d) < 0) {
        print_diag(&d);
        tui_sweep_free(s);
        return CLI_EXIT_USAGE;
    }
    size_t n = tui_sweep_count(s), nbefore = 0;
    const char **ids = sim_xcalloc(n ? n : 1, sizeof(*ids));
    char **before = sim_xcalloc(n ? n : 1, sizeof(*before));
    for (size_t i = 0; i < n; i++) {
        ids[i] = tui_sweep_point(s, i)->id;
        if (o->resume && point_done(a->dir, ids[i]))
            before[nbefore++] = sim_xstrdup(ids[i]);
    }
    struct progress_ctx pc = {.tty = isatty(STDERR_FILENO) != 0};
    o->progress = show_progress;
    o->ctx = &pc;
    if (pc.tty && !(o->engine == TUI_SWEEP_ENGINE_SLURM && !o->wait)) {
        fprintf(stderr, "npuscope sweep: %zu point%s in ", n, n == 1 ? "" : "s");
        put_safe(stderr, a->dir);
        fprintf(stderr, " through %s\n", tui_sweep_engine_name(o->engine));
    }
    struct tui_sweep_outcome out;
    double t0 = wall();
    int rc = tui_sweep_run(a->dir, ids, n, o, &out, &d);
    free(ids);
    tui_sweep_free(s);
    if (rc < 0) {
        print_diag(&d);
        free_ids(before, nbefore);
        return CLI_EXIT_FAIL;
    }
    if (o->engine == TUI_SWEEP_ENGINE_SLURM && out.started == 0) {
        printf("npuscope sweep: every point of ");
        put_safe(stdout, a->dir);
        printf(" is done already\n");
        rc = report(a->dir, 0, (const char *const *)before, nbefore);
        free_ids(before, nbefore);
        return rc;
    }
    if (out.script_only || (o->engine == TUI_SWEEP_ENGINE_SLURM && !o->wait))
        free_ids(before, nbefore), before = NULL, nbefore = 0;
    if (out.script_only) {
        printf("npuscope sweep: wrote ");
        put_safe(stdout, out.script);
        printf(" (%zu array task%s); submit it with: sbatch ", out.started,
               out.started == 1 ? "" : "s");
        put_safe(stdout, out.script);
        printf("\n");
        return CLI_EXIT_OK;
    }
    if (o->engine == TUI_SWEEP_ENGINE_SLURM && !o->wait) {
        printf("npuscope sweep: submitted Slurm job %s (%zu array task%s); npuscope view ",
               out.job_id, out.started, out.started == 1 ? "" : "s");
        put_safe(stdout, a->dir);
        printf(" follows it, npuscope sweep --collect ");
        put_safe(stdout, a->dir);
        printf(" prints the table\n");
        return CLI_EXIT_OK;
    }
    rc = report(a->dir, wall() - t0, (const char *const *)before, nbefore);
    free_ids(before, nbefore);
    return rc;
}

/* ---- sweep --collect DIR -------------------------------------------------------------------- */

/* Display width of UTF-8 text: one column per code point (table alignment). */
static int width_of(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Table cells as text (escaped), a row per point, the id and the axes first. */
struct text_table {
    size_t ncols, nrows;
    char **cells; /* owned: (nrows + 1) x ncols, the header first */
    bool *right;  /* owned: per column: numbers are right-aligned */
};

static void shortest(double v, char *buf, size_t size)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* The table of t: brief columns only (text), or every column with raw numbers (CSV). */
static void build_text(const struct tui_sweep_table *t, bool all, struct text_table *tt)
{
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    size_t *cols = sim_xcalloc(nm, sizeof(*cols));
    size_t k = 0;
    for (size_t c = 0; c < nm; c++)
        if (all || mc[c].brief)
            cols[k++] = c;
    tt->ncols = 1 + t->naxes + k;
    tt->nrows = t->nrows;
    tt->cells = sim_xcalloc((t->nrows + 1) * tt->ncols, sizeof(char *));
    tt->right = sim_xcalloc(tt->ncols, sizeof(bool));
    char **h = tt->cells;
    h[0] = sim_xstrdup("id");
    for (size_t a = 0; a < t->naxes; a++) {
        h[1 + a] = sim_escape_dup(t->axes[a]);
        tt->right[1 + a] = true;
        for (size_t i = 0; i < t->nrows; i++) {
            const struct sim_value *p = sim_value_map_get(t->rows[i].params, t->axes[a]);
            if (p && p->type != SIM_V_INT && p->type != SIM_V_FLOAT)
                tt->right[1 + a] = false;
        }
    }
    for (size_t j = 0; j < k; j++) {
        h[1 + t->naxes + j] = sim_xstrdup(mc[cols[j]].name);
        tt->right[1 + t->naxes + j] = mc[cols[j]].kind != TUI_SWEEP_COL_TEXT;
    }
    for (size_t i = 0; i < t->nrows; i++) {
        const struct tui_sweep_row *r = &t->rows[i];
        char **row = &tt->cells[(i + 1) * tt->ncols];
        row[0] = sim_xstrdup(r->id);
        for (size_t a = 0; a < t->naxes; a++) {
            char buf[256];
            row[1 + a] = sim_escape_dup(
                tui_sweep_value_text(sim_value_map_get(r->params, t->axes[a]), buf, sizeof(buf)));
        }
        for (size_t j = 0; j < k; j++) {
            char buf[1024];
            double num;
            tui_sweep_cell(r, cols[j], &num, buf, sizeof(buf));
            if (all && mc[cols[j]].kind != TUI_SWEEP_COL_TEXT) {
                if (isnan(num))
                    buf[0] = '\0';
                else
                    shortest(num, buf, sizeof(buf));
            }
            row[1 + t->naxes + j] = sim_escape_dup(buf);
        }
    }
    free(cols);
}

static void free_text(struct text_table *tt)
{
    for (size_t i = 0; i < (tt->nrows + 1) * tt->ncols; i++)
        free(tt->cells[i]);
    free(tt->cells);
    free(tt->right);
}

static void print_text(const struct tui_sweep_table *t)
{
    struct text_table tt;
    build_text(t, false, &tt);
    int *w = sim_xcalloc(tt.ncols, sizeof(int));
    for (size_t i = 0; i <= tt.nrows; i++)
        for (size_t c = 0; c < tt.ncols; c++) {
            int cw = width_of(tt.cells[i * tt.ncols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    for (size_t i = 0; i <= tt.nrows; i++) {
        size_t len = 0, cap = 256;
        char *line = sim_xmalloc(cap);
        for (size_t c = 0; c < tt.ncols; c++) {
            const char *cs = tt.cells[i * tt.ncols + c];
            int pad = w[c] - width_of(cs);
            size_t need = len + strlen(cs) + (size_t)(pad > 0 ? pad : 0) + 3;
            if (need > cap) {
                cap = need * 2;
                line = sim_xrealloc(line, cap);
            }
            if (tt.right[c])
                len += (size_t)sprintf(line + len, "%*s%s", pad, "", cs);
            else
                len += (size_t)sprintf(line + len, "%s%*s", cs, pad, "");
            if (c + 1 < tt.ncols)
                len += (size_t)sprintf(line + len, "  ");
        }
        while (len && line[len - 1] == ' ')
            len--;
        printf("%.*s\n", (int)len, line);
        free(line);
    }
    free(w);
    free_text(&tt);
}

static void csv_field(const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void print_csv(const struct tui_sweep_table *t)
{
    struct text_table tt;
    build_text(t, true, &tt);
    for (size_t i = 0; i <= tt.nrows; i++) {
        for (size_t c = 0; c < tt.ncols; c++) {
            if (c)
                putchar(',');
            csv_field(tt.cells[i * tt.ncols + c]);
        }
        putchar('\n');
    }
    free_text(&tt);
}

static int print_json(const struct tui_sweep_table *t)
{
    size_t nm;
    const struct tui_sweep_column *mc = tui_sweep_columns(&nm);
    struct sim_value *root = sim_value_map();
    sim_value_map_set_str(root, "sweep", t->dir);
    sim_value_map_set_str(root, "sweep_file", t->sweep_file);
    struct sim_value *axes = sim_value_map_set_take(root, "axes", sim_value_list());
    for (size_t a = 0; a < t->naxes; a++)
        sim_value_list_push_take(axes, sim_value_str(t->axes[a]));
    struct sim_value *vers = sim_value_map_set_take(root, "npuscope_versions", sim_value_list());
    for (size_t k = 0; k < t->nversions; k++)
        sim_value_list_push_take(vers, sim_value_str(t->versions[k]));
    struct sim_value *pts = sim_value_map_set_take(root, "points", sim_value_list());
    for (size_t i = 0; i < t->nrows; i++) {
        const struct tui_sweep_row *r = &t->rows[i];
        struct sim_value *p = sim_value_list_push_take(pts, sim_value_map());
        sim_value_map_set_str(p, "id", r->id);
        sim_value_map_set_take(p, "params", sim_value_clone(r->params));
        for (size_t c = 0; c < nm; c++) {
            char buf[1024];
            double num;
            tui_sweep_cell(r, c, &num, buf, sizeof(buf));
            struct sim_value *v;
            if (mc[c].kind == TUI_SWEEP_COL_TEXT)
                v = buf[0] ? sim_value_str(buf) : sim_value_null();
            else if (isnan(num))
                v = sim_value_null();
            else if (num == floor(num) && fabs(num) < 9e15)
                v = sim_value_int((int64_t)num);
            else
                v = sim_value_float(num);
            sim_value_map_set_take(p, mc[c].name, v);
        }
    }
    struct trace_out o;
    fflush(stdout);
    trace_out_open_fd(&o, STDOUT_FILENO);
    trace_out_value(&o, root);
    trace_out_char(&o, '\n');
    struct diag d;
    diag_clear(&d);
    int rc = trace_out_commit(&o, &d);
    sim_value_free(root);
    if (rc < 0) {
        fprintf(stderr, "npuscope sweep: standard output: %s\n", d.msg);
        return -1;
    }
    return 0;
}

/* A warning when the points ran on different npuscope versions. */
static void warn_versions(const struct tui_sweep_table *t)
{
    if (t->nversions < 2)
        return;
    fputs("npuscope sweep: warning: the points ran on different npuscope versions (", stderr);
    for (size_t k = 0; k < t->nversions; k++) {
        size_t count = 0;
        for (size_t i = 0; i < t->nrows; i++)
            count += t->rows[i].version && strcmp(t->rows[i].version, t->versions[k]) == 0;
        fputs(k ? ", " : "", stderr);
        put_safe(stderr, t->versions[k]);
        fprintf(stderr, " on %zu", count);
    }
    fputs("): their figures may not compare\n", stderr);
}

static int collect(const char *dir, bool csv, bool json)
{
    struct tui_sweep_table t;
    struct diag d;
    diag_clear(&d);
    if (tui_sweep_collect(dir, &t, &d) < 0) {
        print_diag(&d);
        return CLI_EXIT_USAGE;
    }
    warn_versions(&t);
    int rc = 0;
    if (json)
        rc = print_json(&t);
    else if (csv)
        print_csv(&t);
    else
        print_text(&t);
    if (fflush(stdout) != 0)
        rc = -1;
    int status = rc < 0 ? CLI_EXIT_FAIL : t.n_failed || t.n_pending ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    tui_sweep_table_fini(&t);
    return status;
}

/* ---- the command line ------------------------------------------------------------------------ */

enum {
    OPT_ENGINE = 256,
    OPT_RETRIES,
    OPT_BIN,
    OPT_RESUME,
    OPT_SUBMIT,
    OPT_WAIT,
    OPT_COLLECT,
    OPT_CSV,
    OPT_JSON,
    OPT_RUN_POINT,
};

static int parse_uint(const char *opt, const char *s, unsigned *out, unsigned min)
{
    char *end;
    errno = 0;
    unsigned long v = s && *s && *s != '-' ? strtoul(s, &end, 10) : 0;
    if (!s || !*s || *s == '-' || errno || *end || v < min || v > 100000) {
        usage_error("option '%s' needs an integer from %u, got '%s'", opt, min, s ? s : "");
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int cli_sweep(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"engine", required_argument, 0, OPT_ENGINE},
        {"jobs", required_argument, 0, 'j'},
        {"retries", required_argument, 0, OPT_RETRIES},
        {"sshlogin", required_argument, 0, 'S'},
        {"bin", required_argument, 0, OPT_BIN},
        {"resume", no_argument, 0, OPT_RESUME},
        {"submit", no_argument, 0, OPT_SUBMIT},
        {"wait", no_argument, 0, OPT_WAIT},
        {"collect", required_argument, 0, OPT_COLLECT},
        {"csv", no_argument, 0, OPT_CSV},
        {"json", no_argument, 0, OPT_JSON},
        {"run-point", required_argument, 0, OPT_RUN_POINT},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct sweep_args a = {0};
    a.o.engine = TUI_SWEEP_ENGINE_PARALLEL;
    char self[PATH_MAX];
    self_path(self, sizeof(self), argv[0]);
    a.o.self = self;
    int c;
    while ((c = getopt_long(argc, argv, ":o:j:S:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a.dir = optarg; break;
        case OPT_ENGINE:
            if (tui_sweep_engine_parse(optarg, &a.o.engine) < 0)
                return usage_error("unknown engine '%s' (parallel, slurm, local)", optarg);
            a.engine_given = true;
            break;
        case 'j':
            if (parse_uint("-j", optarg, &a.o.jobs, 1) < 0)
                return CLI_EXIT_USAGE;
            break;
        case OPT_RETRIES:
            if (parse_uint("--retries", optarg, &a.o.retries, 1) < 0)
                return CLI_EXIT_USAGE;
            break;
        case 'S': a.o.sshlogin = optarg; break;
        case OPT_BIN: a.o.bin = optarg; break;
        case OPT_RESUME: a.o.resume = true; break;
        case OPT_SUBMIT: a.o.submit = true; break;
        case OPT_WAIT: a.o.wait = true; break;
        case OPT_COLLECT: a.collect = optarg; break;
        case OPT_CSV: a.csv = true; break;
        case OPT_JSON: a.json = true; break;
        case OPT_RUN_POINT: a.run_point = optarg; break;
        case 'h': fputs(usage_sweep, stdout); return CLI_EXIT_OK;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (a.run_point) {
        if (optind < argc)
            return usage_error("unexpected argument '%s'", argv[optind]);
        struct diag d;
        diag_clear(&d);
        int rc = tui_sweep_run_point(self, a.run_point, &d);
        if (rc < 0) {
            print_diag(&d);
            return CLI_EXIT_USAGE;
        }
        return rc;
    }
    if (a.collect) {
        if (optind < argc)
            return usage_error("unexpected argument '%s'", argv[optind]);
        if (a.csv && a.json)
            return usage_error("--csv and --json cannot be used together");
        return collect(a.collect, a.csv, a.json);
    }
    if (a.csv || a.json)
        return usage_error("--csv and --json go with --collect DIR");
    if (optind >= argc)
        return usage_error("missing the sweep file (npuscope sweep SWEEP.yaml -o DIR)");
    if (optind + 1 < argc)
        return usage_error("unexpected argument '%s'", argv[optind + 1]);
    a.file = argv[optind];
    if (!a.dir)
        return usage_error("missing -o DIR, the sweep directory");
    if (a.o.sshlogin && a.o.engine != TUI_SWEEP_ENGINE_PARALLEL)
        return usage_error("--sshlogin goes with --engine parallel");
    if ((a.o.submit || a.o.wait) && a.o.engine != TUI_SWEEP_ENGINE_SLURM)
        return usage_error("--%s goes with --engine slurm", a.o.submit ? "submit" : "wait");
    if (a.o.wait && !a.o.submit)
        return usage_error("--wait goes with --submit");
    if (a.o.retries > 1 && a.o.engine == TUI_SWEEP_ENGINE_SLURM)
        return usage_error("--retries goes with --engine parallel or local");
    /* the kernels of the user's plug-in directories are checked like the built-in ones */
    int rc = cli_load_plugins(NULL, 0);
    return rc ? rc : run_sweep(&a);
}

/* ---- npuscope view DIR ------------------------------------------------------------------------
 */

bool cli_sweep_dir(const char *path)
{
    return tui_sweep_is_dir(path);
}

/*
 * Comparing two points: the hook for the diff view of two traces. Until npuscope has
 * one, the status line says which two traces a comparison would show.
 */
/* Open point r's trace in the trace viewer on the same terminal, compared with point b's
 * when b is given (the diff view: the two Gantts one above the other); q comes back.
 * Returns 0, or 128 + a signal number that ended it. */
static int open_trace(struct tui_sweepview *v, struct tui_term *term, const char *theme,
                      const char *user_dir, bool unicode, const struct tui_sweep_row *r,
                      const struct tui_sweep_row *b)
{
    const struct tui_sweep_row *missing = !r->trace ? r : b && !b->trace ? b : NULL;
    if (missing) {
        tui_sweepview_status(v, true, "point %s has no trace (%s)", missing->id,
                             missing->status == TUI_SWEEP_PENDING ? "it has not run yet"
                                                                  : "its run failed");
        return 0;
    }
    struct diag d;
    diag_clear(&d);
    /* compared, the two are named by their points ("0003 vs 0002") */
    struct tui_source *src = NULL;
    struct trace_model *first = NULL;
    if (!b)
        src = tui_source_file_open(r->trace, &d);
    else if (trace_diff_load(r->trace, &first, NULL, &d) == 0)
        src = tui_source_model_take(first, r->id);
    if (!src) {
        char line[1024];
        tui_sweepview_status(v, true, "%s", diag_format(&d, line, sizeof(line)));
        return 0;
    }
    struct trace_model *second = NULL;
    if (b && trace_diff_load(b->trace, &second, NULL, &d) < 0) {
        char line[1024];
        tui_sweepview_status(v, true, "%s", diag_format(&d, line, sizeof(line)));
        tui_source_free(src);
        return 0;
    }
    int w, h;
    tui_term_size(term, &w, &h);
    struct tui_app *app = tui_app_new(src, w, h, unicode, theme, user_dir, NULL, &d);
    if (second)
        tui_app_diff_take(app, second, b->id);
    int rc = tui_app_run(app, term);
    tui_app_free(app);
    tui_source_free(src);
    tui_term_invalidate(term);
    return rc;
}

int cli_sweep_view(const char *dir, const char *theme_name)
{
    setlocale(LC_ALL, "");
    bool unicode = tui_term_unicode();
    struct diag d;
    diag_clear(&d);
    struct tui_sweep_table t;
    if (tui_sweep_collect(dir, &t, &d) < 0) {
        char line[2048];
        fprintf(stderr, "npuscope view: %s\n", diag_format(&d, line, sizeof(line)));
        return CLI_EXIT_USAGE;
    }
    warn_versions(&t);
    char *user_dir = tui_theme_user_dir();
    struct tui_theme theme;
    int status = CLI_EXIT_USAGE;
    struct tui_term *term = NULL;
    if (cli_theme_check("view", theme_name, user_dir) != 0)
        goto out;
    tui_theme_load(&theme, theme_name ? theme_name : "default", user_dir, &d);
    diag_clear(&d); /* a broken theme file: its defaults, as in the other views */
    if (tui_term_check(&d) < 0 || tui_term_open(&term, &d) < 0) {
        char line[2048];
        fprintf(stderr, "npuscope view: %s\n", diag_format(&d, line, sizeof(line)));
        goto out;
    }
    int w, h;
    tui_term_size(term, &w, &h);
    struct tui_canvas *canvas = tui_canvas_new(w, h, unicode);
    struct tui_sweepview *v = tui_sweepview_new(&t);
    status = CLI_EXIT_OK;
    bool dirty = true;
    for (;;) {
        if (dirty) {
            tui_term_set_theme(term, &theme);
            tui_sweepview_render(v, canvas);
            tui_term_draw(term, canvas);
            dirty = false;
        }
        struct tui_input in;
        /* while points are pending (a sweep still running) the table reads them again */
        tui_term_wait(term, t.n_pending ? 2000 : -1, &in);
        enum tui_sweepview_event ev = TUI_SWEEPVIEW_NONE;
        if (in.kind == TUI_IN_SIGNAL) {
            status = 128 + in.signo;
            break;
        } else if (in.kind == TUI_IN_RESIZE) {
            tui_term_size(term, &w, &h);
            tui_canvas_resize(canvas, w, h);
            dirty = true;
        } else if (in.kind == TUI_IN_NONE) {
            ev = TUI_SWEEPVIEW_RELOAD;
        } else if (in.kind == TUI_IN_KEY && in.key == TUI_KEY_CTRL('l')) {
            tui_term_invalidate(term);
            dirty = true;
        } else if (in.kind == TUI_IN_KEY) {
            ev = tui_sweepview_key(v, in.key);
        }
        if (ev == TUI_SWEEPVIEW_QUIT)
            break;
        if (ev == TUI_SWEEPVIEW_OPEN || ev == TUI_SWEEPVIEW_COMPARE) {
            const struct tui_sweep_row *b =
                ev == TUI_SWEEPVIEW_COMPARE ? tui_sweepview_selected(v) : NULL;
            int rc = open_trace(v, term, theme_name, user_dir, unicode,
                                ev == TUI_SWEEPVIEW_COMPARE ? tui_sweepview_marked(v)
                                                            : tui_sweepview_selected(v),
                                b);
            if (rc >= 128) {
                status = rc;
                break;
            }
            tui_term_size(term, &w, &h);
            tui_canvas_resize(canvas, w, h);
        } else if (ev == TUI_SWEEPVIEW_RELOAD) {
            struct tui_sweep_table nt;
            if (tui_sweep_collect(dir, &nt, &d) == 0) {
                tui_sweepview_set_table(v, &nt);
                tui_sweep_table_fini(&t);
                t = nt;
                tui_sweepview_set_table(v, &t);
            }
        }
        dirty = dirty || ev != TUI_SWEEPVIEW_NONE;
    }
    tui_term_close(term);
    tui_sweepview_free(v);
    tui_canvas_free(canvas);
out:
    tui_sweep_table_fini(&t);
    free(user_dir);
    return status;
}
