/*
 * The what-if experiment (see whatif.h): the resources and the config keys they scale,
 * what a trace ran, one run in a worker process (the model of trace/live measured with
 * trace/analysis/regions.h, as the verdict measures it), the pool of workers, and the
 * result as a value.
 */
#include "tui/sweep/whatif.h"

#include "sim/host/run.h"
#include "sim/kernel/loader.h"
#include "sim/util/num.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/regions.h"
#include "trace/file/jsonout.h"
#include "trace/live/live.h"
#include "trace/model/json.h"
#include "tui/sweep/sweep.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the resources ---------------------------------------------------------------------- */

enum scale {
    SCALE_RATE, /* a bandwidth or throughput: times the factor */
    SCALE_TIME, /* a latency or setup time: divided by it */
    SCALE_INT,  /* a whole number of lanes: times the factor, rounded, at least 1 */
};

static const struct {
    const char *key, *name;
    enum trace_bound bound;
    enum scale scale;
    const char *keys[4]; /* dotted chip config keys */
} res[TUI_WHATIF_RES_COUNT] = {
    [TUI_WHATIF_HBM_BW] =
        {"hbm_bw", "HBM bandwidth", TRACE_BOUND_MEMORY, SCALE_RATE, {"memory.hbm.gbps"}},
    [TUI_WHATIF_HBM_LAT] =
        {"hbm_lat", "HBM latency", TRACE_BOUND_DMA_FIXED, SCALE_TIME, {"memory.hbm.latency_ns"}},
    [TUI_WHATIF_DMA_SETUP] =
        {"dma_setup", "DMA setup", TRACE_BOUND_DMA_FIXED, SCALE_TIME, {"pe.dma.setup_ns"}},
    [TUI_WHATIF_DMA_BW] =
        {"dma_bw", "DMA bandwidth", TRACE_BOUND_MEMORY, SCALE_RATE, {"pe.dma.gbps"}},
    [TUI_WHATIF_LINK_PE] = {"link_pe", "pe links", TRACE_BOUND_LINK, SCALE_RATE, {"noc.pe.gbps"}},
    [TUI_WHATIF_LINK_CUBE] =
        {"link_cube", "cube links", TRACE_BOUND_LINK, SCALE_RATE, {"noc.cube.gbps"}},
    [TUI_WHATIF_LINK_CC] =
        {"link_cube_cube", "cube_cube links", TRACE_BOUND_LINK, SCALE_RATE, {"noc.cube_cube.gbps"}},
    [TUI_WHATIF_LINK_SS] =
        {"link_sip_sip", "sip_sip links", TRACE_BOUND_LINK, SCALE_RATE, {"noc.sip_sip.gbps"}},
    [TUI_WHATIF_TE] = {"te",
                       "TE throughput",
                       TRACE_BOUND_COMPUTE,
                       SCALE_RATE,
                       {"pe.gemm.macs_per_cycle.f32", "pe.gemm.macs_per_cycle.f16",
                        "pe.gemm.macs_per_cycle.bf16", "pe.gemm.macs_per_cycle.i8"}},
    [TUI_WHATIF_VE] = {"ve", "VE throughput", TRACE_BOUND_VECTOR, SCALE_INT, {"pe.math.lanes"}},
    [TUI_WHATIF_HOST] = {"host", "host link", TRACE_BOUND_HOST, SCALE_RATE, {"noc.host.gbps"}},
};

const char *tui_whatif_res_key(enum tui_whatif_res r)
{
    return r < TUI_WHATIF_RES_COUNT ? res[r].key : "?";
}

const char *tui_whatif_res_name(enum tui_whatif_res r)
{
    return r < TUI_WHATIF_RES_COUNT ? res[r].name : "?";
}

enum trace_bound tui_whatif_res_bound(enum tui_whatif_res r)
{
    return r < TUI_WHATIF_RES_COUNT ? res[r].bound : TRACE_BOUND_NONE;
}

int tui_whatif_res_parse(const char *key, enum tui_whatif_res *out)
{
    for (int r = 0; r < TUI_WHATIF_RES_COUNT; r++)
        if (strcmp(key, res[r].key) == 0) {
            *out = (enum tui_whatif_res)r;
            return 0;
        }
    return -1;
}

/* The value at a dotted key of tree, or NULL. */
static const struct sim_value *at_key(const struct sim_value *tree, const char *dotted)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", dotted);
    const struct sim_value *v = tree;
    for (char *save = NULL, *part = strtok_r(buf, ".", &save); part && v;
         part = strtok_r(NULL, ".", &save))
        v = sim_value_map_get(v, part);
    return v; /* cppcheck-suppress CastIntegerToAddressAtReturn ; a pointer, as declared */
}

static double number(const struct sim_value *v)
{
    if (!v)
        return NAN;
    if (v->type == SIM_V_INT)
        return (double)v->u.i;
    if (v->type == SIM_V_FLOAT)
        return v->u.f;
    return NAN;
}

/* Whether resource r means anything on the chip of tree: its keys hold numbers, not all 0,
 * and its links exist. */
static bool applies(const struct sim_value *tree, enum tui_whatif_res r)
{
    if (r == TUI_WHATIF_LINK_CC && !(number(at_key(tree, "chip.cubes_per_sip")) > 1))
        return false;
    if (r == TUI_WHATIF_LINK_SS && !(number(at_key(tree, "chip.sips")) > 1))
        return false;
    bool any = false;
    for (size_t k = 0; k < 4 && res[r].keys[k]; k++)
        any |= number(at_key(tree, res[r].keys[k])) > 0;
    return any;
}

/* tree with the resources of mask sped up by factor f. Caller frees. */
static struct sim_value *scaled(const struct sim_value *tree, unsigned mask, double f)
{
    struct sim_value *t = sim_value_clone(tree);
    for (int r = 0; r < TUI_WHATIF_RES_COUNT; r++)
        for (size_t k = 0; (mask & (1u << r)) && k < 4 && res[r].keys[k]; k++) {
            double x = number(at_key(t, res[r].keys[k]));
            if (!(x > 0))
                continue;
            struct sim_value *nv;
            switch (res[r].scale) {
            case SCALE_TIME: nv = sim_value_float(x / f); break;
            case SCALE_INT: {
                double y = floor(x * f + 0.5);
                nv = sim_value_int(y < 1 ? 1 : (int64_t)y);
                break;
            }
            default: nv = sim_value_float(x * f); break;
            }
            struct diag d;
            tui_sweep_apply_key(t, res[r].keys[k], nv, &d);
            sim_value_free(nv);
        }
    return t;
}

/* ---- what a trace ran ------------------------------------------------------------------- */

void tui_whatif_workload_fini(struct tui_whatif_workload *w)
{
    sim_value_free(w->chip);
    free(w->kernel_spec);
    free(w->workload);
    free(w->what);
    for (size_t i = 0; i < w->nplugins; i++)
        free(w->plugins[i]);
    free(w->plugins);
    memset(w, 0, sizeof(*w));
}

void tui_whatif_workload_set_plugins(struct tui_whatif_workload *w, const char *const *files,
                                     size_t n)
{
    for (size_t i = 0; i < w->nplugins; i++)
        free(w->plugins[i]);
    free(w->plugins);
    w->plugins = n ? sim_xcalloc(n, sizeof(*w->plugins)) : NULL;
    for (size_t i = 0; i < n; i++)
        w->plugins[i] = sim_xstrdup(files[i]);
    w->nplugins = n;
}

int tui_whatif_workload_from_model(const struct trace_model *m, const char *trace_dir,
                                   struct tui_whatif_workload *w, struct diag *d)
{
    memset(w, 0, sizeof(*w));
    const struct sim_value *md = trace_model_metadata(m), *cfg = trace_model_config(m);
    const char *notes = sim_value_get_str(md, "notes", "");
    const char *cmdq = sim_value_get_str(md, "cmdq_file", "");
    if (strncmp(notes, "npuscope ", 9) != 0)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, "run_metadata.notes",
                        "not a trace of npuscope: what ran cannot be run again");
    if (!cfg || cfg->type != SIM_V_MAP)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, "config_snapshot",
                        "the trace has no chip config to run on");
    if (strncmp(cmdq, "kernel:", 7) == 0 && cmdq[7]) {
        w->kernel_spec = sim_xstrdup(cmdq + 7);
    } else if (strncmp(cmdq, "embedded:", 9) == 0) {
        if (strcmp(cmdq + 9, SIM_WORKLOAD_DEMO) != 0)
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, "run_metadata.cmdq_file",
                            "no embedded workload '%s'", cmdq + 9);
    } else if (cmdq[0]) {
        struct stat st;
        char path[4096];
        snprintf(path, sizeof(path), "%s", cmdq);
        if (stat(path, &st) != 0 && cmdq[0] != '/' && trace_dir)
            snprintf(path, sizeof(path), "%s/%s", trace_dir, cmdq);
        if (stat(path, &st) != 0)
            return diag_set(d, SIM_ENOENT, NULL, 0, 0, "run_metadata.cmdq_file",
                            "the workload file '%s' is gone: what ran cannot be run again", cmdq);
        w->workload = sim_xstrdup(path);
    } else {
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, "run_metadata.cmdq_file",
                        "the trace does not say what ran");
    }
    const struct sim_value *pl = sim_value_map_get(md, "plugins");
    if (pl && pl->type == SIM_V_LIST && pl->u.list.len) {
        w->plugins = sim_xcalloc(pl->u.list.len, sizeof(*w->plugins));
        for (size_t i = 0; i < pl->u.list.len; i++)
            if (pl->u.list.items[i]->type == SIM_V_STR)
                w->plugins[w->nplugins++] = sim_xstrdup(pl->u.list.items[i]->u.str.s);
    }
    w->chip = sim_value_clone(cfg);
    const char *chip = sim_value_get_str(sim_value_map_get(cfg, "chip"), "name", "a chip");
    size_t n = strlen(cmdq) + strlen(chip) + 8;
    w->what = sim_xmalloc(n);
    snprintf(w->what, n, "%s on %s",
             w->kernel_spec ? w->kernel_spec
             : w->workload  ? cmdq
                            : "the demo workload",
             chip);
    return 0;
}

/* ---- one run, in a worker --------------------------------------------------------------- */

/* A launch that ran ops on an engine (not only host messages and their CPUs), as the
 * verdict's tables count kernel launches. */
static bool kernel_launch(const struct trace_region *r)
{
    return r->all.ops > r->engine[TRACE_ENGINE_HOST].ops;
}

static void put_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

/* Run w on tree (NULL: w's own) and write to fd: "run CYCLES", then "launch CMDQ OCC
 * CYCLES NAME" per kernel launch; or "error MESSAGE". */
static void run_one(const struct tui_whatif_workload *w, const struct sim_value *tree, int fd)
{
    struct sim_run_opts ro = {
        .chip_tree = tree ? tree : w->chip,
        .kernel_spec = w->kernel_spec,
        .workload_file = w->workload,
    };
    struct sim_run *r = NULL;
    struct trace_live *l = NULL;
    struct diag d = {0};
    char line[1024];
    if (sim_run_new(&ro, &r, &d) < 0) {
        snprintf(line, sizeof(line), "error %s\n", d.msg);
        put_all(fd, line);
        return;
    }
    sim_run_timing_only(r);
    struct trace_live_opts lo = {.prefill_tokens = -1, .decode_tokens = -1};
    if (trace_live_new(sim_run_chip(r), &lo, &l, &d) < 0) {
        snprintf(line, sizeof(line), "error %s\n", d.msg);
        put_all(fd, line);
        sim_run_free(r);
        return;
    }
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 100000);
        trace_live_sync(l);
    }
    const struct trace_model *m = trace_live_model(l);
    struct trace_regions *run = trace_regions_new(m, TRACE_REGION_RUN);
    struct trace_regions *ls = trace_regions_new(m, TRACE_REGION_LAUNCH);
    const struct trace_region *rr = trace_regions_get(run, 0);
    snprintf(line, sizeof(line), "run %llu\n",
             (unsigned long long)(rr ? trace_region_length(rr) : 0));
    put_all(fd, line);
    for (size_t i = 0; i < trace_regions_count(ls); i++) {
        const struct trace_region *x = trace_regions_get(ls, i);
        if (!kernel_launch(x))
            continue;
        snprintf(line, sizeof(line), "launch %d %u %llu %.200s\n", (int)x->cmdq_id, x->occurrence,
                 (unsigned long long)trace_region_length(x), x->name);
        put_all(fd, line);
    }
    trace_regions_free(ls);
    trace_regions_free(run);
    trace_live_free(l);
    sim_run_free(r);
}

/* ---- the pool --------------------------------------------------------------------------- */

struct job {
    struct tui_whatif_point *pt;
    pid_t pid;
    int fd;
    char *out; /* owned: what the worker wrote */
    size_t len;
    int status; /* its exit status */
    bool ended;
};

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In a child just forked by parent: its end tied to the parent's. SIGTERM (its default
 * action) comes when the parent ends, however it ends: a viewer that leaves at once, without
 * stopping its experiment, or one killed, leaves no run of it behind. */
static void end_with_parent(pid_t parent)
{
    signal(SIGTERM, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) /* ended before the prctl */
        _exit(1);
}

static int start(const struct tui_whatif_workload *w, struct job *j, struct diag *d)
{
    int p[2];
    if (pipe(p) < 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start a worker: %s", strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start a worker: %s", strerror(errno));
    }
    if (pid == 0) {
        end_with_parent(parent);
        close(p[0]);
        const struct tui_whatif_point *pt = j->pt;
        struct sim_value *t =
            pt->factor == 1 ? NULL
                            : scaled(w->chip, pt->joint ? pt->joint : 1u << pt->res, pt->factor);
        run_one(w, t, p[1]);
        sim_value_free(t);
        close(p[1]);
        _exit(0);
    }
    close(p[1]);
    j->pid = pid;
    j->fd = p[0];
    j->out = NULL;
    j->len = 0;
    return 0;
}

/* ---- reading what a worker wrote -------------------------------------------------------- */

/* The rest of line ln after word and a blank, or NULL when ln is no such line. */
static const char *after_word(const char *ln, const char *word)
{
    size_t n = strlen(word);
    return strncmp(ln, word, n) == 0 && ln[n] == ' ' ? ln + n + 1 : NULL;
}

/* What the worker of j wrote, into its point (launches matched to the base's by
 * cmdq_id); the base's launches are taken from it. */
static void parse(struct tui_whatif_result *r, struct job *j)
{
    int status = j->status;
    struct tui_whatif_point *pt = j->pt;
    bool base = pt == &r->base;
    char *save = NULL;
    bool ran = false;
    for (char *ln = j->out ? strtok_r(j->out, "\n", &save) : NULL; ln;
         ln = strtok_r(NULL, "\n", &save)) {
        unsigned long long cyc, occ;
        int cmdq;
        const char *p;
        if ((p = after_word(ln, "error"))) {
            free(pt->error);
            pt->error = sim_xstrdup(p);
        } else if ((p = after_word(ln, "run")) && sim_take_unsigned(&p, 10, ULLONG_MAX, &cyc)) {
            pt->cycles = (double)cyc;
            ran = true;
        } else if ((p = after_word(ln, "launch")) && sim_take_int(&p, &cmdq) &&
                   sim_take_unsigned(&p, 10, UINT_MAX, &occ) &&
                   sim_take_unsigned(&p, 10, ULLONG_MAX, &cyc)) {
            const char *name = p + strspn(p, " \t");
            if (base) {
                r->launches =
                    sim_xreallocarray(r->launches, r->nlaunches + 1, sizeof(*r->launches));
                r->launches[r->nlaunches++] = (struct tui_whatif_launch){
                    .name = sim_xstrdup(name), .occurrence = (unsigned)occ, .cmdq_id = cmdq};
                pt->launch = sim_xreallocarray(pt->launch, r->nlaunches, sizeof(*pt->launch));
                pt->launch[r->nlaunches - 1] = (double)cyc;
                continue;
            }
            for (size_t i = 0; i < r->nlaunches && pt->launch; i++)
                if (r->launches[i].cmdq_id == cmdq)
                    pt->launch[i] = (double)cyc;
        }
    }
    if (!ran) {
        pt->cycles = NAN;
        if (!pt->error) {
            char msg[96];
            if (WIFSIGNALED(status))
                snprintf(msg, sizeof(msg), "the run ended on signal %d", WTERMSIG(status));
            else
                snprintf(msg, sizeof(msg), "the run ended without a result");
            pt->error = sim_xstrdup(msg);
        }
    }
}

/* Run the points of jobs[0..n) on at most `workers` processes at once; what each wrote
 * stays in its job. */
static int pool(const struct tui_whatif_workload *w, struct job *jobs, size_t n, unsigned workers,
                const struct tui_whatif_opts *o, struct diag *d)
{
    size_t total = n;
    size_t next = 0, done = 0;
    struct job **act = sim_xcalloc(workers, sizeof(*act));
    struct pollfd *pf = sim_xcalloc(workers, sizeof(*pf));
    size_t nact = 0;
    int rc = 0;
    while (done < n) {
        while (rc == 0 && nact < workers && next < n) {
            if ((rc = start(w, &jobs[next], d)) < 0)
                break;
            act[nact++] = &jobs[next++];
        }
        if (rc < 0 && !nact)
            break;
        if (rc < 0 && next < n) /* no more workers: drain those running, then stop */
            n = next;
        for (size_t i = 0; i < nact; i++)
            pf[i] = (struct pollfd){.fd = act[i]->fd, .events = POLLIN};
        if (poll(pf, nact, -1) < 0) {
            if (errno == EINTR)
                continue;
            rc = diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "waiting for the workers: %s",
                          strerror(errno));
            break;
        }
        for (size_t i = 0; i < nact; i++) {
            if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            struct job *j = act[i];
            char buf[4096];
            ssize_t k = read(j->fd, buf, sizeof(buf));
            if (k < 0 && errno == EINTR)
                continue;
            if (k > 0) {
                j->out = sim_xrealloc(j->out, j->len + (size_t)k + 1);
                memcpy(j->out + j->len, buf, (size_t)k);
                j->len += (size_t)k;
                j->out[j->len] = '\0';
                continue;
            }
            /* the end of what it writes: it has exited or is about to */
            close(j->fd);
            while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
                ;
            j->ended = true;
            act[i] = act[--nact];
            pf[i] = pf[nact];
            i--;
            done++;
            if (o->progress)
                o->progress(o->ctx, done, total);
        }
    }
    /* on an error, the workers still running are not needed */
    for (size_t i = 0; i < nact; i++) {
        kill(act[i]->pid, SIGTERM);
        close(act[i]->fd);
        waitpid(act[i]->pid, NULL, 0);
    }
    free(act);
    free(pf);
    return rc;
}

/* The change of launch (SIZE_MAX: the run) with resource k alone at factor f, NAN when
 * not run. */
static double change_of(const struct tui_whatif_result *r, enum tui_whatif_res k, double f,
                        size_t launch)
{
    for (size_t i = 0; i < r->npoints; i++)
        if (!r->points[i].joint && r->points[i].res == k && r->points[i].factor == f)
            return tui_whatif_change(r, &r->points[i], launch);
    return NAN;
}

/* The resources at a shared limit for launch (SIZE_MAX: the run), as a mask: slowed down
 * by `low`, each costs it 10% or more, while sped up by `top` alone it gains less than a
 * quarter of that (a resource that bounds it alone gains about half: its time halves). */
static unsigned sensitive(const struct tui_whatif_result *r, double low, double top, size_t launch)
{
    unsigned mask = 0;
    for (int k = 0; k < TUI_WHATIF_RES_COUNT; k++) {
        double loss = change_of(r, (enum tui_whatif_res)k, low, launch);
        double gain = -change_of(r, (enum tui_whatif_res)k, top, launch);
        if (!isnan(loss) && !isnan(gain) && loss >= 0.1 && gain < loss / 4)
            mask |= 1u << k;
    }
    return mask;
}

/* The second round: each set of two or more resources sharing a limit, sped up together
 * by the largest factor. */
static int joint_points(const struct tui_whatif_workload *w, const struct tui_whatif_opts *o,
                        struct tui_whatif_result *r, struct diag *d)
{
    double top = 1, low = 1;
    for (size_t i = 0; i < r->npoints; i++) {
        top = r->points[i].factor > top ? r->points[i].factor : top;
        low = r->points[i].factor < low ? r->points[i].factor : low;
    }
    if (!(top > 1) || !(low < 1))
        return 0;
    unsigned sets[64] = {0};
    size_t nsets = 0;
    for (size_t l = 0; l <= r->nlaunches && nsets < 64; l++) {
        unsigned m = sensitive(r, low, top, l == r->nlaunches ? SIZE_MAX : l);
        bool seen = __builtin_popcount(m) < 2;
        for (size_t k = 0; k < nsets && !seen; k++)
            seen = sets[k] == m;
        if (!seen)
            sets[nsets++] = m;
    }
    if (!nsets)
        return 0;
    size_t first = r->npoints;
    r->points = sim_xreallocarray(r->points, r->npoints + nsets, sizeof(*r->points));
    struct job *jobs = sim_xcalloc(nsets, sizeof(*jobs));
    for (size_t k = 0; k < nsets; k++) {
        struct tui_whatif_point *p = &r->points[r->npoints++];
        *p = (struct tui_whatif_point){.factor = top, .cycles = NAN, .joint = sets[k]};
        char name[256] = "";
        for (int x = TUI_WHATIF_RES_COUNT - 1; x >= 0; x--)
            if (sets[k] & (1u << x))
                p->res = (enum tui_whatif_res)x;
        for (int x = 0; x < TUI_WHATIF_RES_COUNT; x++)
            if (sets[k] & (1u << x)) {
                size_t len = strlen(name);
                snprintf(name + len, sizeof(name) - len, "%s%s", len ? " + " : "", res[x].name);
            }
        p->name = sim_xstrdup(name);
        p->launch = sim_xcalloc(r->nlaunches ? r->nlaunches : 1, sizeof(double));
        for (size_t l = 0; l < r->nlaunches; l++)
            p->launch[l] = NAN;
    }
    for (size_t k = 0; k < nsets; k++)
        jobs[k].pt = &r->points[first + k];
    int rc = pool(w, jobs, nsets, r->workers, o, d);
    for (size_t k = 0; k < nsets; k++) {
        if (jobs[k].ended)
            parse(r, &jobs[k]);
        free(jobs[k].out);
    }
    free(jobs);
    return rc;
}

const char *tui_whatif_point_name(const struct tui_whatif_point *p)
{
    return p->joint && p->name ? p->name : tui_whatif_res_name(p->res);
}

int tui_whatif_run(const struct tui_whatif_workload *w, const struct tui_whatif_opts *o,
                   struct tui_whatif_result *r, struct diag *d)
{
    memset(r, 0, sizeof(*r));
    for (size_t i = 0; i < w->nplugins; i++) {
        int rc = sim_plugin_load(w->plugins[i], d);
        if (rc < 0)
            return rc;
    }
    double t0 = wall();
    r->what = sim_xstrdup(w->what ? w->what : "");
    r->clock_ghz = number(at_key(w->chip, "chip.clock_ghz"));
    if (!(r->clock_ghz > 0))
        r->clock_ghz = number(at_key(w->chip, "clock_ghz"));
    double factors[TUI_WHATIF_MAX_FACTORS] = {2, 0.5};
    size_t nf = 2;
    if (o->nfactors) {
        nf = o->nfactors < TUI_WHATIF_MAX_FACTORS ? o->nfactors : TUI_WHATIF_MAX_FACTORS;
        memcpy(factors, o->factors, nf * sizeof(*factors));
    }
    unsigned mask = o->resources ? o->resources : (1u << TUI_WHATIF_RES_COUNT) - 1;
    r->workers = o->jobs ? o->jobs : 2;
    for (int k = 0; k < TUI_WHATIF_RES_COUNT; k++)
        if ((mask & (1u << k)) && applies(w->chip, (enum tui_whatif_res)k))
            r->npoints += nf;
    r->points = sim_xcalloc(r->npoints ? r->npoints : 1, sizeof(*r->points));
    size_t p = 0;
    for (int k = 0; k < TUI_WHATIF_RES_COUNT; k++)
        if ((mask & (1u << k)) && applies(w->chip, (enum tui_whatif_res)k))
            for (size_t f = 0; f < nf; f++)
                r->points[p++] = (struct tui_whatif_point){
                    .res = (enum tui_whatif_res)k, .factor = factors[f], .cycles = NAN};
    r->base = (struct tui_whatif_point){.factor = 1, .cycles = NAN};

    /* every run at once, the base first; read back once all have ended, the base first
     * (it names the launches the others are matched to) */
    size_t n = r->npoints + 1;
    struct job *jobs = sim_xcalloc(n, sizeof(*jobs));
    jobs[0].pt = &r->base;
    for (size_t i = 0; i < r->npoints; i++)
        jobs[i + 1].pt = &r->points[i];
    int rc = pool(w, jobs, n, r->workers, o, d);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i == 1) {
            for (size_t k = 0; k < r->npoints; k++) {
                r->points[k].launch = sim_xcalloc(r->nlaunches ? r->nlaunches : 1, sizeof(double));
                for (size_t l = 0; l < r->nlaunches; l++)
                    r->points[k].launch[l] = NAN;
            }
        }
        if (jobs[i].ended)
            parse(r, &jobs[i]);
        if (i == 0 && r->base.error)
            rc = diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "%s", r->base.error);
    }
    for (size_t i = 0; i < n; i++)
        free(jobs[i].out);
    free(jobs);
    if (rc == 0)
        rc = joint_points(w, o, r, d);
    r->seconds = wall() - t0;
    if (rc < 0)
        tui_whatif_result_fini(r);
    return rc;
}

static void point_fini(struct tui_whatif_point *p)
{
    free(p->launch);
    free(p->error);
    free(p->name);
}

void tui_whatif_result_fini(struct tui_whatif_result *r)
{
    free(r->what);
    for (size_t i = 0; i < r->nlaunches; i++)
        free(r->launches[i].name);
    free(r->launches);
    point_fini(&r->base);
    for (size_t i = 0; i < r->npoints; i++)
        point_fini(&r->points[i]);
    free(r->points);
    memset(r, 0, sizeof(*r));
}

/* ---- reading the result ----------------------------------------------------------------- */

double tui_whatif_change(const struct tui_whatif_result *r, const struct tui_whatif_point *p,
                         size_t launch)
{
    double b, x;
    if (launch == SIZE_MAX) {
        b = r->base.cycles, x = p->cycles;
    } else {
        if (launch >= r->nlaunches || !r->base.launch || !p->launch)
            return NAN;
        b = r->base.launch[launch], x = p->launch[launch];
    }
    return b > 0 && !isnan(x) ? x / b - 1 : NAN;
}

/* The best finding for launch (SIZE_MAX: the run) among the points of the largest factor
 * above 1. */
static struct trace_verdict_check best(const struct tui_whatif_result *r, size_t launch)
{
    struct trace_verdict_check c = {.cmdq_id = launch == SIZE_MAX ? TRACE_NO_CMDQ
                                                                  : r->launches[launch].cmdq_id};
    double top = 1;
    for (size_t i = 0; i < r->npoints; i++)
        if (r->points[i].factor > top)
            top = r->points[i].factor;
    if (!(top > 1))
        return c;
    double bestc = -0.01; /* a change by 1% at least */
    for (size_t i = 0; i < r->npoints; i++) {
        const struct tui_whatif_point *p = &r->points[i];
        double ch = tui_whatif_change(r, p, launch);
        if (p->factor != top || isnan(ch) || !(ch <= bestc))
            continue;
        if (c.resource && ch == bestc)
            continue; /* the first listed wins a tie */
        bestc = ch;
        c.resource = tui_whatif_point_name(p);
        c.bound = tui_whatif_res_bound(p->res);
        c.factor = top;
        c.change = ch;
    }
    return c;
}

size_t tui_whatif_checks(const struct tui_whatif_result *r, struct trace_verdict_check *out,
                         size_t max)
{
    size_t n = 0;
    if (n < max)
        out[n++] = best(r, SIZE_MAX);
    for (size_t l = 0; l < r->nlaunches && n < max; l++)
        out[n++] = best(r, l);
    return n;
}

/* ---- as a value ------------------------------------------------------------------------- */

static void set_num(struct sim_value *x, const char *key, double v)
{
    if (isnan(v))
        sim_value_map_set_take(x, key, sim_value_null());
    else
        sim_value_map_set_float(x, key, v);
}

static struct sim_value *point_value(const struct tui_whatif_result *r,
                                     const struct tui_whatif_point *p, bool base)
{
    struct sim_value *x = sim_value_map();
    if (!base) {
        char key[256] = "";
        for (int k = 0; k < TUI_WHATIF_RES_COUNT; k++)
            if (p->joint ? p->joint & (1u << k) : k == (int)p->res) {
                size_t len = strlen(key);
                snprintf(key + len, sizeof(key) - len, "%s%s", len ? "+" : "", res[k].key);
            }
        sim_value_map_set_str(x, "resource", key);
        sim_value_map_set_str(x, "name", tui_whatif_point_name(p));
        sim_value_map_set_float(x, "factor", p->factor);
    }
    set_num(x, "cycles", p->cycles);
    if (!base)
        set_num(x, "change", tui_whatif_change(r, p, SIZE_MAX));
    struct sim_value *ls = sim_value_map_set_take(x, "launches", sim_value_list());
    for (size_t i = 0; i < r->nlaunches; i++) {
        struct sim_value *l = sim_value_list_push_take(ls, sim_value_map());
        set_num(l, "cycles", p->launch ? p->launch[i] : NAN);
        if (!base)
            set_num(l, "change", tui_whatif_change(r, p, i));
    }
    if (p->error)
        sim_value_map_set_str(x, "error", p->error);
    return x;
}

struct sim_value *tui_whatif_to_value(const struct tui_whatif_result *r)
{
    struct sim_value *x = sim_value_map();
    sim_value_map_set_str(x, "workload", r->what ? r->what : "");
    set_num(x, "clock_ghz", r->clock_ghz);
    sim_value_map_set_int(x, "runs", (int64_t)r->npoints + 1);
    sim_value_map_set_int(x, "workers", r->workers);
    sim_value_map_set_float(x, "seconds", r->seconds);
    struct sim_value *ls = sim_value_map_set_take(x, "launches", sim_value_list());
    for (size_t i = 0; i < r->nlaunches; i++) {
        struct sim_value *l = sim_value_list_push_take(ls, sim_value_map());
        sim_value_map_set_str(l, "name", r->launches[i].name);
        sim_value_map_set_int(l, "occurrence", r->launches[i].occurrence);
        sim_value_map_set_int(l, "cmdq_id", r->launches[i].cmdq_id);
    }
    sim_value_map_set_take(x, "base", point_value(r, &r->base, true));
    struct sim_value *ps = sim_value_map_set_take(x, "changes", sim_value_list());
    for (size_t i = 0; i < r->npoints; i++)
        sim_value_list_push_take(ps, point_value(r, &r->points[i], false));
    return x;
}

static double num_or_nan(const struct sim_value *m, const char *key)
{
    const struct sim_value *v = sim_value_map_get(m, key);
    double x = number(v);
    return v && !isnan(x) ? x : NAN;
}

static void point_from(const struct sim_value *v, size_t nl, struct tui_whatif_point *p)
{
    p->cycles = num_or_nan(v, "cycles");
    const char *e = sim_value_get_str(v, "error", NULL);
    p->error = e ? sim_xstrdup(e) : NULL;
    p->launch = sim_xcalloc(nl ? nl : 1, sizeof(double));
    const struct sim_value *ls = sim_value_map_get(v, "launches");
    for (size_t i = 0; i < nl; i++)
        p->launch[i] = ls && ls->type == SIM_V_LIST && i < ls->u.list.len
                           ? num_or_nan(ls->u.list.items[i], "cycles")
                           : NAN;
}

int tui_whatif_from_value(const struct sim_value *v, struct tui_whatif_result *r)
{
    memset(r, 0, sizeof(*r));
    const struct sim_value *ls = sim_value_map_get(v, "launches");
    const struct sim_value *ps = sim_value_map_get(v, "changes");
    const struct sim_value *b = sim_value_map_get(v, "base");
    if (!ls || ls->type != SIM_V_LIST || !ps || ps->type != SIM_V_LIST || !b ||
        b->type != SIM_V_MAP)
        return -1;
    r->what = sim_xstrdup(sim_value_get_str(v, "workload", ""));
    r->clock_ghz = num_or_nan(v, "clock_ghz");
    r->workers = (unsigned)sim_value_get_int(v, "workers", 0);
    r->seconds = sim_value_get_float(v, "seconds", 0);
    r->nlaunches = ls->u.list.len;
    r->launches = sim_xcalloc(r->nlaunches ? r->nlaunches : 1, sizeof(*r->launches));
    for (size_t i = 0; i < r->nlaunches; i++) {
        const struct sim_value *l = ls->u.list.items[i];
        r->launches[i].name = sim_xstrdup(sim_value_get_str(l, "name", ""));
        r->launches[i].occurrence = (uint32_t)sim_value_get_int(l, "occurrence", 0);
        r->launches[i].cmdq_id = (int32_t)sim_value_get_int(l, "cmdq_id", TRACE_NO_CMDQ);
    }
    point_from(b, r->nlaunches, &r->base);
    r->base.factor = 1;
    r->points = sim_xcalloc(ps->u.list.len ? ps->u.list.len : 1, sizeof(*r->points));
    for (size_t i = 0; i < ps->u.list.len; i++) {
        const struct sim_value *p = ps->u.list.items[i];
        char keys[256];
        snprintf(keys, sizeof(keys), "%s", sim_value_get_str(p, "resource", ""));
        unsigned mask = 0;
        enum tui_whatif_res k, first = TUI_WHATIF_RES_COUNT;
        for (char *save = NULL, *q = strtok_r(keys, "+", &save); q; q = strtok_r(NULL, "+", &save))
            if (tui_whatif_res_parse(q, &k) == 0) {
                mask |= 1u << k;
                first = first == TUI_WHATIF_RES_COUNT ? k : first;
            }
        if (!mask)
            continue;
        struct tui_whatif_point *pt = &r->points[r->npoints++];
        point_from(p, r->nlaunches, pt);
        pt->res = first;
        if (__builtin_popcount(mask) > 1) {
            pt->joint = mask;
            pt->name = sim_xstrdup(sim_value_get_str(p, "name", ""));
        }
        pt->factor = sim_value_get_float(p, "factor", 1);
    }
    return 0;
}

/* ---- in the background ------------------------------------------------------------------ */

struct tui_whatif_bg {
    pid_t pid; /* the experiment, leader of its process group; 0 once reaped */
    int fd;    /* what it writes: "progress D T" lines, then "result" and the JSON */
    char *buf; /* owned */
    size_t len;
    size_t done, total;
};

static void bg_progress(void *ctx, size_t done, size_t total)
{
    char line[64];
    snprintf(line, sizeof(line), "progress %zu %zu\n", done, total);
    put_all(*(int *)ctx, line);
}

int tui_whatif_bg_start(const struct tui_whatif_workload *w, const struct tui_whatif_opts *o,
                        struct tui_whatif_bg **out, struct diag *d)
{
    int p[2];
    if (pipe(p) < 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start the experiment: %s",
                        strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "cannot start the experiment: %s",
                        strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0); /* its workers with it: stopped together */
        /* below the viewer (its workers inherit it); a nice refused leaves it as it was */
        if (setpriority(PRIO_PROCESS, 0, TUI_WHATIF_BG_NICE) != 0)
            errno = 0;
        end_with_parent(parent);
        /* the viewer's signal handlers are not its own: the SIGTERM of tui_whatif_bg_free
         * (the viewer quitting) must end it, not be passed on to the viewer's pipe */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        close(p[0]);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) { /* nothing of it reaches the viewer's terminal */
            dup2(devnull, STDIN_FILENO);
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
            close(devnull);
        }
        struct tui_whatif_opts oo = *o;
        oo.progress = bg_progress;
        oo.ctx = &p[1];
        struct tui_whatif_result r;
        struct diag dd = {0};
        if (tui_whatif_run(w, &oo, &r, &dd) < 0) {
            char line[SIM_DIAG_MSG_MAX + 16];
            snprintf(line, sizeof(line), "error %s\n", dd.msg);
            put_all(p[1], line);
            _exit(1);
        }
        put_all(p[1], "result\n");
        struct sim_value *v = tui_whatif_to_value(&r);
        struct trace_out to;
        trace_out_open_fd(&to, p[1]);
        trace_out_value(&to, v);
        trace_out_commit(&to, &dd);
        _exit(0);
    }
    setpgid(pid, pid);
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    struct tui_whatif_bg *b = sim_xcalloc(1, sizeof(*b));
    b->pid = pid;
    b->fd = p[0];
    *out = b;
    return 0;
}

int tui_whatif_bg_poll(struct tui_whatif_bg *b, size_t *done, size_t *total,
                       struct tui_whatif_result *r, struct diag *d)
{
    bool eof = false;
    for (;;) {
        char chunk[8192];
        ssize_t k = read(b->fd, chunk, sizeof(chunk));
        if (k > 0) {
            b->buf = sim_xrealloc(b->buf, b->len + (size_t)k + 1);
            memcpy(b->buf + b->len, chunk, (size_t)k);
            b->len += (size_t)k;
            b->buf[b->len] = '\0';
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        eof = k == 0;
        break;
    }
    /* the last progress line */
    char *at = b->buf ? strstr(b->buf, "result\n") : NULL;
    for (char *ln = b->buf; ln && (!at || ln < at);) {
        const char *p = after_word(ln, "progress");
        unsigned long long dn, tt;
        if (p && sim_take_unsigned(&p, 10, SIZE_MAX, &dn) &&
            sim_take_unsigned(&p, 10, SIZE_MAX, &tt))
            b->done = (size_t)dn, b->total = (size_t)tt;
        char *nl = strchr(ln, '\n');
        ln = nl ? nl + 1 : NULL;
    }
    *done = b->done;
    *total = b->total;
    if (!eof)
        return 1;
    int status = 0;
    if (b->pid > 0)
        waitpid(b->pid, &status, 0);
    b->pid = 0;
    if (!at) {
        char *err = b->buf ? strstr(b->buf, "error ") : NULL;
        if (err) {
            err[strcspn(err, "\n")] = '\0';
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "%s", err + 6), -1;
        }
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "the experiment ended without a result"), -1;
    }
    cJSON *j = cJSON_Parse(at + 7);
    struct sim_value *v = j ? trace_json_to_value(j) : NULL;
    cJSON_Delete(j);
    int rc = v ? tui_whatif_from_value(v, r) : -1;
    sim_value_free(v);
    if (rc < 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "the experiment's result is unreadable"), -1;
    return 0;
}

void tui_whatif_bg_free(struct tui_whatif_bg *b)
{
    if (!b)
        return;
    if (b->pid > 0) {
        kill(-b->pid, SIGTERM);
        waitpid(b->pid, NULL, 0);
    }
    close(b->fd);
    free(b->buf);
    free(b);
}
