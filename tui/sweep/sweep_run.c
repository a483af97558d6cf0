/*
 * The engines of a sweep (tui/sweep/sweep_run.h): GNU parallel and sbatch are run as they are,
 * the local pool is fork, exec and waitpid. While an engine runs, the points' files are
 * looked at a few times a second for the progress callback. The per-point task, which
 * every engine runs, is here too.
 */
#include "tui/sweep/sweep_run.h"

#include "sim/util/xalloc.h"
#include "trace/model/json.h"
#include "trace/file/jsonout.h"
#include "trace/file/loader.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/metrics.h"
#include "trace/analysis/regions.h"
#include "trace/model/model.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *tui_sweep_engine_name(enum tui_sweep_engine e)
{
    switch (e) {
    case TUI_SWEEP_ENGINE_PARALLEL: return "parallel";
    case TUI_SWEEP_ENGINE_SLURM: return "slurm";
    case TUI_SWEEP_ENGINE_LOCAL: return "local";
    }
    return "?";
}

int tui_sweep_engine_parse(const char *name, enum tui_sweep_engine *out)
{
    static const enum tui_sweep_engine all[] = {TUI_SWEEP_ENGINE_PARALLEL, TUI_SWEEP_ENGINE_SLURM,
                                                TUI_SWEEP_ENGINE_LOCAL};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(name, tui_sweep_engine_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

bool tui_sweep_have_program(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        char *full = sim_xasprintf("%.*s/%s", (int)n, n ? p : ".", name);
        struct stat st;
        bool yes = stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0;
        free(full);
        if (yes)
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/*
 * Start argv (argv[0] looked up on PATH) in cwd (NULL: here), its standard input from
 * /dev/null, its output to out_fd and err_fd (-1: ours). Returns the pid, or -1 with
 * errno when fork fails; a program that cannot be executed exits 127.
 */
static pid_t spawn(char *const argv[], const char *cwd, int out_fd, int err_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (cwd && chdir(cwd) != 0) {
        dprintf(STDERR_FILENO, "npuscope: %s: %s\n", cwd, strerror(errno));
        _exit(127);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) {
        dup2(nul, STDIN_FILENO);
        close(nul);
    }
    if (out_fd >= 0)
        dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0)
        dup2(err_fd, STDERR_FILENO);
    execvp(argv[0], argv);
    dprintf(STDERR_FILENO, "npuscope: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* waitpid, again when a signal interrupts it. */
static pid_t wait_for(pid_t pid, int *status, int flags)
{
    pid_t r;
    do
        r = waitpid(pid, status, flags);
    while (r < 0 && errno == EINTR);
    return r;
}

/* Run argv to its end with its standard output read into buf (size bytes), its standard
 * error thrown away. Returns its wait status, or -1 when it could not start. */
static int capture(char *const argv[], char *buf, size_t size)
{
    int fds[2];
    buf[0] = '\0';
    if (pipe(fds) != 0)
        return -1;
    int nul = open("/dev/null", O_WRONLY);
    pid_t pid = spawn(argv, NULL, fds[1], nul);
    close(fds[1]);
    if (nul >= 0)
        close(nul);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    size_t used = 0;
    for (;;) {
        char tmp[512];
        ssize_t k = read(fds[0], tmp, sizeof(tmp));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        size_t take = (size_t)k < size - 1 - used ? (size_t)k : size - 1 - used;
        memcpy(buf + used, tmp, take);
        used += take;
    }
    buf[used] = '\0';
    close(fds[0]);
    int st = 0;
    wait_for(pid, &st, 0);
    return st;
}

bool tui_sweep_have_gnu_parallel(void)
{
    if (!tui_sweep_have_program("parallel"))
        return false;
    char *argv[] = {(char *)"parallel", (char *)"--version", NULL};
    char out[1024];
    int st = capture(argv, out, sizeof(out));
    return st >= 0 && strstr(out, "GNU parallel") != NULL;
}

/* ---- files of a point ------------------------------------------------------------------- */

static char *read_small(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = sim_xmalloc(max + 1);
    size_t n = fread(buf, 1, max, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static struct sim_value *read_json(const char *path)
{
    char *text = read_small(path, 1 << 20);
    if (!text)
        return NULL;
    cJSON *j = cJSON_Parse(text);
    free(text);
    struct sim_value *v = trace_json_to_value(j);
    cJSON_Delete(j);
    return v;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* True when point id of dir has a result. */
static bool has_result(const char *dir, const char *id)
{
    char *p = sim_xasprintf("%s/points/%s/result.json", dir, id);
    bool yes = exists(p);
    free(p);
    return yes;
}

/* ---- progress ------------------------------------------------------------------------------ */

struct tracker {
    const char *dir;
    const char *const *ids;
    size_t n;
    unsigned char *state;   /* owned: per point 0 no result, 1 ok, 2 failed */
    struct timespec *mtime; /* owned: of the result.json the state was read from */
    time_t started_wall;    /* the engine's start, for "running" */
    double started;
    double last_report;
    int interval_ms; /* between looks: longer for large sweeps */
    struct tui_sweep_progress p;
    const struct tui_sweep_run_opts *o;
};

static void tracker_scan(struct tracker *t)
{
    size_t ok = 0, failed = 0, running = 0;
    char path[PATH_MAX];
    for (size_t i = 0; i < t->n; i++) {
        struct stat st;
        snprintf(path, sizeof(path), "%s/points/%s/result.json", t->dir, t->ids[i]);
        if (stat(path, &st) == 0) {
            if (!t->state[i] || st.st_mtim.tv_sec != t->mtime[i].tv_sec ||
                st.st_mtim.tv_nsec != t->mtime[i].tv_nsec) {
                struct sim_value *r = read_json(path);
                t->state[i] = strcmp(sim_value_get_str(r, "status", ""), "ok") == 0 ? 1 : 2;
                t->mtime[i] = st.st_mtim;
                sim_value_free(r);
            }
        } else {
            t->state[i] = 0;
            snprintf(path, sizeof(path), "%s/points/%s/started", t->dir, t->ids[i]);
            if (stat(path, &st) == 0 && st.st_mtime >= t->started_wall)
                running++;
        }
        ok += t->state[i] == 1;
        failed += t->state[i] == 2;
    }
    struct tui_sweep_progress *p = &t->p;
    p->total = t->n;
    p->ok = ok;
    p->failed = failed;
    p->running = running;
    p->elapsed = now_s() - t->started;
    size_t done = ok + failed;
    size_t fresh = done > p->done_before ? done - p->done_before : 0;
    p->eta = fresh ? p->elapsed / (double)fresh * (double)(t->n - done) : -1;
}

static void tracker_init(struct tracker *t, const char *dir, const char *const *ids, size_t n,
                         const struct tui_sweep_run_opts *o)
{
    memset(t, 0, sizeof(*t));
    t->dir = dir;
    t->ids = ids;
    t->n = n;
    t->o = o;
    t->state = sim_xcalloc(n ? n : 1, 1);
    t->mtime = sim_xcalloc(n ? n : 1, sizeof(*t->mtime));
    t->interval_ms = 200 + (int)(n / 100 > 2000 ? 2000 : n / 100);
    t->started = now_s();
    t->started_wall = time(NULL);
    tracker_scan(t);
    t->p.done_before = t->p.ok + t->p.failed;
    t->p.eta = -1;
}

/* Look again and tell the callback, when it is time (or final). */
static void tracker_tick(struct tracker *t, bool final)
{
    double now = now_s();
    if (!final && now - t->last_report < (double)t->interval_ms / 1000.0)
        return;
    t->last_report = now;
    tracker_scan(t);
    if (t->o->progress)
        t->o->progress(t->o->ctx, &t->p, final);
}

static void tracker_fini(struct tracker *t)
{
    free(t->state);
    free(t->mtime);
}

/* The npuscope the tasks run: --bin, else this very binary (local engines) or
 * "npuscope" from PATH (ssh hosts, Slurm nodes). */
static const char *task_bin(const struct tui_sweep_run_opts *o, bool remote)
{
    if (o->bin)
        return o->bin;
    return remote ? "npuscope" : o->self;
}

static unsigned cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* ---- local: a process pool ----------------------------------------------------------------- */

struct slot {
    pid_t pid; /* 0: free */
    size_t point;
    unsigned tries;
};

static int run_local(const char *dir, const char *const *ids, size_t n,
                     const struct tui_sweep_run_opts *o, struct tui_sweep_outcome *out,
                     struct diag *d)
{
    unsigned jobs = o->jobs ? o->jobs : cpus();
    unsigned max_tries = o->retries > 1 ? o->retries : 1;
    struct slot *slots = sim_xcalloc(jobs, sizeof(*slots));
    /* the queue: points to run, with the tries they had */
    size_t *queue = sim_xcalloc(n ? n : 1, sizeof(*queue));
    unsigned *tries = sim_xcalloc(n ? n : 1, sizeof(*tries));
    size_t qhead = 0, qtail = 0, qcap = n ? n : 1;
    for (size_t i = 0; i < n; i++)
        if (!o->resume || !has_result(dir, ids[i]))
            queue[qtail++ % qcap] = i;
    struct tracker t;
    tracker_init(&t, dir, ids, n, o);
    const char *bin = task_bin(o, false);
    unsigned running = 0;
    int rc = 0;
    bool stop = false;
    while ((qhead != qtail && !stop) || running) {
        while (!stop && running < jobs && qhead != qtail) {
            size_t i = queue[qhead++ % qcap];
            char pdir[64];
            snprintf(pdir, sizeof(pdir), "points/%s", ids[i]);
            char *argv[] = {(char *)bin, (char *)"sweep", (char *)"--run-point", pdir, NULL};
            pid_t pid = spawn(argv, dir, -1, -1);
            if (pid < 0) {
                rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start a point: %s",
                              strerror(errno));
                stop = true;
                break;
            }
            for (unsigned k = 0; k < jobs; k++)
                if (!slots[k].pid) {
                    slots[k] = (struct slot){pid, i, ++tries[i]};
                    break;
                }
            running++;
            out->started++;
        }
        bool reaped = false;
        for (unsigned k = 0; k < jobs; k++) {
            int st;
            if (!slots[k].pid || wait_for(slots[k].pid, &st, WNOHANG) <= 0)
                continue;
            reaped = true;
            running--;
            size_t i = slots[k].point;
            slots[k].pid = 0;
            bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !has_result(dir, ids[i]) && !stop) {
                rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL,
                              "could not run '%s sweep --run-point' (exit status 127)", bin);
                stop = true;
            } else if (!ok && tries[i] < max_tries && !stop) {
                queue[qtail++ % qcap] = i;
            }
        }
        tracker_tick(&t, false);
        if (!reaped)
            sleep_ms(20);
    }
    tracker_tick(&t, true);
    tracker_fini(&t);
    free(queue);
    free(tries);
    free(slots);
    return rc;
}

/* ---- GNU parallel --------------------------------------------------------------------------- */

/* A word as a shell reads it back. Caller frees. */
static char *shell_quote(const char *w)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_-./:=,+@%";
    if (*w && !w[strspn(w, safe)])
        return sim_xstrdup(w);
    size_t n = 2;
    for (const char *p = w; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = sim_xmalloc(n + 1), *o = q;
    *o++ = '\'';
    for (const char *p = w; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}

static int write_text(const char *path, const char *text, struct diag *d)
{
    struct trace_out w;
    int rc = trace_out_open(&w, path, d);
    if (rc < 0)
        return rc;
    trace_out_raw(&w, text, strlen(text));
    return trace_out_commit(&w, d);
}

/* DIR/points.ids: the input GNU parallel reads, one point id a line. */
static int write_ids(const char *dir, const char *const *ids, size_t n, bool unfinished_only,
                     size_t *count, struct diag *d)
{
    size_t cap = 1, len = 0;
    char *text = sim_xmalloc(cap);
    text[0] = '\0';
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (unfinished_only && has_result(dir, ids[i]))
            continue;
        size_t k = strlen(ids[i]);
        if (len + k + 2 > cap) {
            cap = (len + k + 2) * 2;
            text = sim_xrealloc(text, cap);
        }
        memcpy(text + len, ids[i], k);
        len += k;
        text[len++] = '\n';
        text[len] = '\0';
        (*count)++;
    }
    char *p = sim_xasprintf("%s/points.ids", dir);
    int rc = write_text(p, text, d);
    free(p);
    free(text);
    return rc;
}

static int run_parallel(const char *dir, const char *const *ids, size_t n,
                        const struct tui_sweep_run_opts *o, struct tui_sweep_outcome *out,
                        struct diag *d)
{
    char *joblog = sim_xasprintf("%s/joblog", dir);
    char *idsfile = sim_xasprintf("%s/points.ids", dir);
    /* GNU parallel's --resume needs the same input, command and joblog as the run it
     * resumes: the input list is kept as it was. Without a joblog (a sweep started by
     * another engine), the points without a result are the input of a fresh one. */
    bool use_resume = o->resume && exists(joblog) && exists(idsfile);
    int rc = 0;
    size_t count = n;
    if (!use_resume) {
        unlink(joblog);
        rc = write_ids(dir, ids, n, o->resume, &count, d);
    }
    free(joblog);
    free(idsfile);
    if (rc < 0)
        return rc;

    bool remote = o->sshlogin != NULL;
    char *bin = shell_quote(task_bin(o, remote));
    char *cmd = sim_xasprintf("%s sweep --run-point points/{}", bin);
    free(bin);
    char jobs[32], retries[32];
    snprintf(jobs, sizeof(jobs), "%u", o->jobs);
    snprintf(retries, sizeof(retries), "%u", o->retries);
    const char *argv[32];
    size_t a = 0;
    argv[a++] = "parallel";
    argv[a++] = "--joblog";
    argv[a++] = "joblog";
    if (use_resume)
        argv[a++] = "--resume";
    if (o->jobs) {
        argv[a++] = "-j";
        argv[a++] = jobs;
    }
    if (o->retries > 1) {
        argv[a++] = "--retries";
        argv[a++] = retries;
    }
    if (remote) {
        /* the point's directory goes to the host and comes back with its results, in a
         * working directory of its own there (~/.parallel/tmp/, removed afterwards) */
        argv[a++] = "--sshlogin";
        argv[a++] = o->sshlogin;
        argv[a++] = "--workdir";
        argv[a++] = "...";
        argv[a++] = "--transferfile";
        argv[a++] = "points/{}";
        argv[a++] = "--return";
        argv[a++] = "points/{}";
        argv[a++] = "--cleanup";
    }
    argv[a++] = cmd;
    argv[a++] = "::::";
    argv[a++] = "points.ids";
    argv[a] = NULL;

    /* GNU parallel runs each remote command through $SHELL: a sweep started where it is
     * unset (cron, a CI job, a systemd unit) would lose every point of an ssh host */
    if (remote && !getenv("SHELL"))
        setenv("SHELL", "/bin/sh", 0);
    struct tracker t;
    tracker_init(&t, dir, ids, n, o);
    pid_t pid = spawn((char *const *)argv, dir, -1, -1);
    if (pid < 0) {
        rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start GNU parallel: %s",
                      strerror(errno));
    } else {
        out->started = count;
        int st = 0;
        while (wait_for(pid, &st, WNOHANG) == 0) {
            tracker_tick(&t, false);
            sleep_ms(50);
        }
        /* GNU parallel exits with the number of failed jobs (101: more than 100), 255 on
         * its own errors */
        if (WIFSIGNALED(st))
            rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "GNU parallel was killed by signal %d",
                          WTERMSIG(st));
        else if (WEXITSTATUS(st) > 101)
            rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL,
                          "GNU parallel failed (exit status %d; its message is above)",
                          WEXITSTATUS(st));
    }
    tracker_tick(&t, true);
    tracker_fini(&t);
    free(cmd);
    return rc;
}

/* ---- Slurm ------------------------------------------------------------------------------------
 */

char *tui_sweep_array_spec(const size_t *idx, size_t n, unsigned max)
{
    size_t cap = 64 + n * 24, len = 0;
    char *s = sim_xmalloc(cap);
    s[0] = '\0';
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && idx[j + 1] == idx[j] + 1)
            j++;
        int k = j > i ? snprintf(s + len, cap - len, "%s%zu-%zu", len ? "," : "", idx[i], idx[j])
                      : snprintf(s + len, cap - len, "%s%zu", len ? "," : "", idx[i]);
        len += k > 0 ? (size_t)k : 0;
        i = j + 1;
    }
    if (max)
        snprintf(s + len, cap - len, "%%%u", max);
    return s;
}

char *tui_sweep_sbatch_script(const char *absdir, const char *array, int id_width, const char *cmd)
{
    char *q = shell_quote(cmd);
    const char *base = strrchr(absdir, '/');
    base = base && base[1] ? base + 1 : absdir;
    char *s = sim_xasprintf(
        "#!/bin/sh\n"
        "# npuscope sweep: a Slurm job array, one task per point of the sweep in\n"
        "# %s. Written by npuscope sweep --engine slurm; submit it with\n"
        "#   sbatch %s/sweep.sbatch\n"
        "# (npuscope sweep --engine slurm --submit does). Each task runs one point; its\n"
        "# results land in points/ID/, and npuscope sweep --collect reads them.\n"
        "#SBATCH --job-name=npuscope-sweep-%s\n"
        "#SBATCH --array=%s\n"
        "#SBATCH --ntasks=1\n"
        "#SBATCH --cpus-per-task=1\n"
        "#SBATCH --chdir=%s\n"
        "#SBATCH --output=%s/slurm/%%A_%%a.out\n"
        "set -eu\n"
        "id=$(printf '%%0%dd' \"$SLURM_ARRAY_TASK_ID\")\n"
        "exec %s sweep --run-point \"points/$id\"\n",
        absdir, absdir, base, array, absdir, absdir, id_width, q);
    free(q);
    return s;
}

static int run_slurm(const char *dir, const char *const *ids, size_t n,
                     const struct tui_sweep_run_opts *o, struct tui_sweep_outcome *out,
                     struct diag *d)
{
    char *abs = realpath(dir, NULL);
    if (!abs)
        return diag_set(d, SIM_EIO, dir, 0, 0, NULL, "%s", strerror(errno));
    int rc = 0;
    if (strpbrk(abs, " \t\n\"'\\%$`")) {
        rc = diag_set(d, SIM_EINVAL, abs, 0, 0, NULL,
                      "a sweep directory for Slurm cannot have spaces, quotes, '%%' or '$' in "
                      "its path (#SBATCH lines name it)");
        free(abs);
        return rc;
    }
    size_t *idx = sim_xcalloc(n ? n : 1, sizeof(*idx));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!o->resume || !has_result(dir, ids[i]))
            idx[k++] = (size_t)strtoull(ids[i], NULL, 10);
    char *slurmdir = sim_xasprintf("%s/slurm", abs);
    if (mkdir(slurmdir, 0777) != 0 && errno != EEXIST)
        rc = diag_set(d, SIM_EIO, slurmdir, 0, 0, NULL, "cannot create: %s", strerror(errno));
    free(slurmdir);
    snprintf(out->script, sizeof(out->script), "%s/sweep.sbatch", abs);
    if (rc == 0 && k == 0) {
        /* nothing left to run */
        unlink(out->script);
        out->script_only = !o->submit;
    } else if (rc == 0) {
        char *array = tui_sweep_array_spec(idx, k, o->jobs);
        char *script =
            tui_sweep_sbatch_script(abs, array, n ? (int)strlen(ids[0]) : 4, task_bin(o, true));
        rc = write_text(out->script, script, d);
        free(script);
        free(array);
        out->started = k;
        out->script_only = !o->submit;
    }
    free(idx);
    if (rc < 0 || !o->submit || k == 0) {
        free(abs);
        return rc;
    }

    const char *argv[6];
    size_t a = 0;
    argv[a++] = "sbatch";
    argv[a++] = "--parsable";
    if (o->wait)
        argv[a++] = "--wait";
    argv[a++] = out->script;
    argv[a] = NULL;
    int fds[2];
    if (pipe(fds) != 0) {
        free(abs);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "pipe: %s", strerror(errno));
    }
    struct tracker t;
    tracker_init(&t, dir, ids, n, o);
    pid_t pid = spawn((char *const *)argv, abs, fds[1], -1);
    close(fds[1]);
    char buf[256] = "";
    size_t used = 0;
    int st = 0;
    if (pid < 0) {
        rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start sbatch: %s", strerror(errno));
    } else {
        /* sbatch --wait returns when every task has ended; meanwhile the points' files
         * tell how far they are */
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        for (;;) {
            ssize_t r = read(fds[0], buf + used, sizeof(buf) - 1 - used);
            if (r > 0)
                used += (size_t)r;
            if (wait_for(pid, &st, WNOHANG) != 0)
                break;
            if (o->wait)
                tracker_tick(&t, false);
            sleep_ms(50);
        }
        ssize_t r;
        while (used < sizeof(buf) - 1 && (r = read(fds[0], buf + used, sizeof(buf) - 1 - used)) > 0)
            used += (size_t)r;
        buf[used] = '\0';
        /* --parsable prints "jobid" or "jobid;cluster" */
        size_t idlen = strspn(buf, "0123456789");
        if (idlen && idlen < sizeof(out->job_id)) {
            memcpy(out->job_id, buf, idlen);
            out->job_id[idlen] = '\0';
            out->submitted = true;
        } else {
            rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL,
                          "sbatch did not accept the job (exit status %d; its message is above)",
                          WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        }
    }
    close(fds[0]);
    if (o->wait && out->submitted)
        tracker_tick(&t, true);
    tracker_fini(&t);
    free(abs);
    return rc;
}

int tui_sweep_run(const char *dir, const char *const *ids, size_t n,
                  const struct tui_sweep_run_opts *o, struct tui_sweep_outcome *out, struct diag *d)
{
    memset(out, 0, sizeof(*out));
    switch (o->engine) {
    case TUI_SWEEP_ENGINE_PARALLEL: return run_parallel(dir, ids, n, o, out, d);
    case TUI_SWEEP_ENGINE_SLURM: return run_slurm(dir, ids, n, o, out, d);
    case TUI_SWEEP_ENGINE_LOCAL: return run_local(dir, ids, n, o, out, d);
    }
    return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "unknown engine");
}

/* ---- the task: one point ----------------------------------------------------------------------
 */

/* The first line of path with text on it (trimmed, at most size - 1 bytes), or "". */
static void first_line(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    char *text = read_small(path, 1 << 16);
    if (!text)
        return;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        while (*line == ' ' || *line == '\t' || *line == '\r')
            line++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == ' ' || line[n - 1] == '\r' || line[n - 1] == '\t'))
            n--;
        if (!n)
            continue;
        /* "npuscope: " adds nothing in a table of npuscope runs */
        if (n > 10 && strncmp(line, "npuscope: ", 10) == 0) {
            line += 10;
            n -= 10;
        }
        snprintf(buf, size, "%.*s", (int)n, line);
        break;
    }
    free(text);
}

static int write_value(const char *path, const struct sim_value *v, struct diag *d)
{
    struct trace_out w;
    int rc = trace_out_open(&w, path, d);
    if (rc < 0)
        return rc;
    trace_out_value(&w, v);
    trace_out_char(&w, '\n');
    return trace_out_commit(&w, d);
}

/*
 * The kernel launches' own figures (the launches that ran ops on an engine, not only host
 * messages): "kernel_cycles", the sum of their spans, and "kernel_busy", each engine
 * kind's busy cycles over that sum. A short kernel's run is dominated by the host's
 * transfers around it; these are what a change of the chip does to the kernel.
 */
static void add_kernel_figures(const struct trace_model *m, struct sim_value *v)
{
    struct trace_regions *rs = trace_regions_new(m, TRACE_REGION_LAUNCH);
    uint64_t cycles = 0, busy[TRACE_ENGINE_COUNT] = {0};
    for (size_t i = 0; i < trace_regions_count(rs); i++) {
        const struct trace_region *r = trace_regions_get(rs, i);
        if (r->all.ops <= r->engine[TRACE_ENGINE_HOST].ops)
            continue;
        cycles += trace_region_length(r);
        for (int k = 0; k < TRACE_ENGINE_COUNT; k++)
            busy[k] += r->engine[k].busy;
    }
    trace_regions_free(rs);
    sim_value_map_set_int(v, "kernel_cycles", (int64_t)cycles);
    struct sim_value *b = sim_value_map();
    static const struct {
        const char *key;
        enum trace_engine e;
    } kinds[] = {{"DMA", TRACE_ENGINE_DMA}, {"TE", TRACE_ENGINE_TE}, {"VE", TRACE_ENGINE_VE}};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        sim_value_map_set_float(b, kinds[k].key,
                                cycles ? (double)busy[kinds[k].e] / (double)cycles : 0);
    sim_value_map_set_take(v, "kernel_busy", b);
}

/* summary.json from the point's trace (what npuscope summary --json prints); the clock
 * of the trace's config into *clock. */
static int write_summary(const char *trace, const char *path, double *clock, struct diag *d)
{
    struct trace_model *m = NULL;
    int rc = trace_load_file(trace, NULL, &m, d);
    if (rc < 0)
        return rc;
    struct trace_metrics x;
    trace_metrics_compute(m, &x);
    struct sim_value *v = trace_metrics_to_value(&x);
    add_kernel_figures(m, v);
    struct trace_energy e; /* its energy (trace/analysis/energy.h), when known */
    if (trace_energy_of_model(m, &e))
        sim_value_map_set_take(v, "energy", trace_energy_to_value(&e));
    rc = write_value(path, v, d);
    *clock = trace_model_clock_ghz(m);
    sim_value_free(v);
    trace_metrics_fini(&x);
    trace_model_free(m);
    return rc;
}

int tui_sweep_run_point(const char *self, const char *pdir, struct diag *d)
{
    char *pj = sim_xasprintf("%s/point.json", pdir);
    struct sim_value *point = read_json(pj);
    free(pj);
    const char *id = sim_value_get_str(point, "id", NULL);
    const char *kernel = sim_value_get_str(point, "kernel", NULL);
    const char *workload = sim_value_get_str(point, "workload", NULL);
    if (!id || (!kernel && !workload)) {
        sim_value_free(point);
        return diag_set(d, SIM_EINVAL, pdir, 0, 0, NULL,
                        "not a sweep point (no readable point.json naming a kernel or a "
                        "workload)");
    }
    char *chip = sim_xasprintf("%s/chip.yaml", pdir);
    char *trace = sim_xasprintf("%s/trace.json", pdir);
    char *summary = sim_xasprintf("%s/summary.json", pdir);
    char *result = sim_xasprintf("%s/result.json", pdir);
    char *runlog = sim_xasprintf("%s/run.log", pdir);
    char *errlog = sim_xasprintf("%s/err.log", pdir);
    char *started = sim_xasprintf("%s/started", pdir);
    /* a point run again (a retry, a resumed sweep) starts clean */
    unlink(result);
    unlink(summary);
    unlink(trace);
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    struct sim_value *sv = sim_value_map();
    sim_value_map_set_str(sv, "host", host);
    sim_value_map_set_int(sv, "pid", (int64_t)getpid());
    sim_value_map_set_int(sv, "started_at", (int64_t)time(NULL));
    int rc = write_value(started, sv, d);
    sim_value_free(sv);

    int out = -1, err = -1;
    if (rc == 0) {
        out = open(runlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        err = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (out < 0 || err < 0)
            rc = diag_set(d, SIM_EIO, out < 0 ? runlog : errlog, 0, 0, NULL, "cannot create: %s",
                          strerror(errno));
    }
    int status = -1, sig = 0;
    double secs = 0;
    if (rc == 0) {
        /* the plug-ins the sweep file names, then the run */
        const struct sim_value *pl = sim_value_map_get(point, "plugins");
        size_t np = pl && pl->type == SIM_V_LIST ? pl->u.list.len : 0, a = 0;
        const char **argv = sim_xcalloc(2 * np + 10, sizeof(*argv));
        argv[a++] = self;
        argv[a++] = "run";
        argv[a++] = "--headless";
        for (size_t k = 0; k < np; k++) {
            if (pl->u.list.items[k]->type != SIM_V_STR)
                continue;
            argv[a++] = "--plugin";
            argv[a++] = pl->u.list.items[k]->u.str.s;
        }
        argv[a++] = "-c";
        argv[a++] = chip;
        argv[a++] = kernel ? "-k" : "-w";
        argv[a++] = kernel ? kernel : workload;
        argv[a++] = "-o";
        argv[a++] = trace;
        double t0 = now_s();
        pid_t pid = spawn((char *const *)argv, NULL, out, err);
        int st = 0;
        if (pid < 0)
            rc =
                diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start the run: %s", strerror(errno));
        else
            wait_for(pid, &st, 0);
        free(argv);
        secs = now_s() - t0;
        if (WIFEXITED(st))
            status = WEXITSTATUS(st);
        else if (WIFSIGNALED(st))
            sig = WTERMSIG(st);
    }
    if (out >= 0)
        close(out);
    if (err >= 0)
        close(err);

    char error[512] = "";
    double clock = 0;
    bool ok = rc == 0 && status == 0;
    if (rc == 0 && exists(trace)) {
        struct diag sd;
        diag_clear(&sd);
        if (write_summary(trace, summary, &clock, &sd) < 0) {
            char line[2048];
            snprintf(error, sizeof(error), "summary: %s", diag_format(&sd, line, sizeof(line)));
            ok = false;
        }
    } else if (ok) {
        snprintf(error, sizeof(error), "the run wrote no trace");
        ok = false;
    }
    if (!ok && !error[0]) {
        first_line(errlog, error, sizeof(error));
        if (!error[0] && sig)
            snprintf(error, sizeof(error), "killed by signal %d (%s)", sig, strsignal(sig));
        else if (!error[0] && rc < 0)
            diag_format(d, error, sizeof(error));
        else if (!error[0])
            snprintf(error, sizeof(error), "exit status %d", status);
    }

    struct sim_value *r = sim_value_map();
    sim_value_map_set_str(r, "id", id);
    sim_value_map_set_str(r, "status", ok ? "ok" : "failed");
    sim_value_map_set_int(r, "exit", status);
    if (sig)
        sim_value_map_set_int(r, "signal", sig);
    if (error[0])
        sim_value_map_set_str(r, "error", error);
    else
        sim_value_map_set_take(r, "error", sim_value_null());
    sim_value_map_set_str(r, "npuscope_version", NPUSCOPE_VERSION);
    sim_value_map_set_str(r, "host", host);
    sim_value_map_set_float(r, "seconds", secs);
    if (clock > 0)
        sim_value_map_set_float(r, "clock_ghz", clock);
    sim_value_map_set_int(r, "finished_at", (int64_t)time(NULL));
    struct diag wd;
    diag_clear(&wd);
    int wrc = write_value(result, r, &wd);
    sim_value_free(r);
    if (wrc < 0 && rc == 0) {
        *d = wd;
        rc = wrc;
    }
    free(chip);
    free(trace);
    free(summary);
    free(result);
    free(runlog);
    free(errlog);
    free(started);
    sim_value_free(point);
    if (rc < 0)
        return rc;
    return ok ? 0 : 1;
}
