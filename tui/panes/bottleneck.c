/*
 * The bottleneck pane (see bottleneck.h): the verdict of trace/verdict/verdict.h as a table of
 * launches and the evidence of the selected one (live, each verdict made from the last: the
 * launches that ended are kept, trace_verdict_opts.inc); below, the experiment of
 * tui/sweep/whatif.h run in the background, which the verdict is then checked against.
 */
#include "tui/panes/bottleneck.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/model/budget.h"
#include "trace/cache/vcache.h"
#include "trace/verdict/verdict.h"
#include "tui/sweep/whatif.h"

#include <math.h>
#include <pthread.h>
#include "tui/panes/task.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    MIN_REFRESH_NS = 500 * 1000 * 1000, /* a live verdict, at most twice a second */
    COST_FACTOR = 10,                   /* ... and at most a tenth of the time */
    EVIDENCE = 12,                      /* evidence lines of the selected row */
    STILL_NS = 1000 * 1000 * 1000,      /* live: the run stood still this long (paused or
                                           finished): the experiment may start */
    AHEAD_LIVE_EVENTS = 1 << 16,        /* live: kept warm past this many events (below, the
                                           verdict from scratch takes a fraction of a second) */
    AHEAD_COST_FACTOR = 40,             /* live, kept warm with the pane closed: at most a
                                           41st of the time (the pane shows the last one at
                                           once when it opens, and follows from there) */
};

/* A line of the table: the run, a kernel launch, or the host messages together. */
struct row {
    const struct trace_verdict_item *it; /* NULL: the host messages */
    char name[96];                       /* escaped */
};

struct tui_bottleneck {
    const struct trace_model *m;    /* borrowed */
    struct tui_view *view;          /* borrowed: its verdict is v, of a saved trace */
    const char *kept_from;          /* borrowed: the saved trace whose verdict may be kept
                                       beside its index (tui_view.kept_from), or NULL */
    bool judged;                    /* the task judged next (not read back), not cancelled
                                       (the task's while it runs) */
    bool to_keep;                   /* v was judged, and is not kept yet */
    struct trace_vcache_pack *kept; /* owned: the pack keeper fills from v and writes, or NULL */
    pthread_t keeper;               /* packs and writes v once it is on screen (v is not
                                       changed or freed before it is joined) */
    bool keeping;                   /* keeper was started and not joined */
    atomic_bool kept_done;          /* keeper has ended (set by it) */
    struct trace_verdict *v;        /* owned, or NULL until computed */
    struct tui_task *task;          /* owned: computes next */
    struct trace_verdict *next;     /* the verdict being computed (the task's while it runs) */
    struct trace_verdict *retired;  /* owned: one replaced while the Gantt copied a path of it
                                       (tui_view.verdict_lent), freed once it is done */
    struct trace_verdict_inc *inc;  /* owned, live: what the next verdict starts from (the
                                       launches that ended, kept; the task's while it runs) */
    uint64_t started;               /* when the task started (tui_now_ns) */
    uint64_t gen;                   /* the model generation it was computed for */
    uint64_t as_of, as_of_next;     /* the model's end (cycles) it was computed at; of next */
    uint64_t at, cost;              /* when (tui_now_ns) and how long it took */
    struct row *rows;               /* owned */
    size_t nrows, sel;
    size_t nhost; /* host messages summed in the last row */
    double host_time[TRACE_PCAT_COUNT];
    uint64_t host_length;
    int scroll, lines_drawn, rows_visible;
    bool dirty;
    bool fresh; /* a verdict was taken since the last frame asked (tui_view.result) */
    /* the experiment */
    struct tui_whatif_bg *bg;            /* owned: running, or NULL */
    bool exp_started, exp_done;          /* started (or found impossible); its result in exp */
    struct tui_whatif_result exp;        /* owned once exp_done */
    size_t exp_runs, exp_total;          /* progress */
    char exp_msg[SIM_DIAG_MSG_MAX + 32]; /* why there is none, or what failed */
    uint64_t exp_t0;
    uint64_t seen_gen, seen_at; /* live: the model's generation, and since when (tui_now_ns) */
    bool ahead_off;             /* live: no longer kept warm with the pane closed (its state
                                   outgrew the memory budget's share) */
};

/* A live verdict cancelled before it was done (tui_task_release): dropped, due again. */
static void discard(void *arg)
{
    struct tui_bottleneck *b = arg;
    trace_verdict_free(b->next);
    b->next = NULL;
    b->gen = UINT64_MAX;
}

struct tui_bottleneck *tui_bottleneck_new(struct tui_view *v)
{
    struct tui_bottleneck *b = sim_xcalloc(1, sizeof(*b));
    b->m = v->m;
    b->view = v;
    b->kept_from = v->live ? NULL : v->kept_from;
    b->task = tui_task_new();
    if (v->live) {
        tui_task_set_live(b->task, discard);
        b->inc = trace_verdict_inc_new();
    }
    /* a saved trace's is judged ahead from the first frame on: a key of that frame (C)
     * waits for it as for one under way */
    v->verdict_pending = !v->live;
    return b;
}

/* Wait for the verdict being kept to be written. */
static void keep_join(struct tui_bottleneck *b)
{
    if (b->keeping)
        pthread_join(b->keeper, NULL);
    b->keeping = false;
    trace_vcache_pack_free(b->kept);
    b->kept = NULL;
}

static void *keep_main(void *arg)
{
    struct tui_bottleneck *b = arg;
    trace_vcache_pack_fill(b->kept, b->v);
    trace_vcache_write(b->kept, NULL);
    atomic_store(&b->kept_done, true);
    return NULL;
}

/* Keep the verdict taken (once the frame that shows it is drawn), as judged: packed and
 * written on a thread of its own (the screen does not wait), begun here (its temporary file
 * made on the thread that leaves: tui_bottleneck_leave). */
static void keep(struct tui_bottleneck *b)
{
    if (!b->to_keep || !b->kept_from)
        return;
    b->to_keep = false;
    keep_join(b);
    struct trace_verdict_opts o = {0};
    b->kept = trace_vcache_pack_begin(b->v, b->kept_from, &o, NULL);
    if (!b->kept || trace_vcache_pack_create(b->kept, NULL) < 0) {
        trace_vcache_pack_free(b->kept); /* (nothing kept: the cache cannot be written) */
        b->kept = NULL;
        return;
    }
    atomic_store(&b->kept_done, false);
    b->keeping = pthread_create(&b->keeper, NULL, keep_main, b) == 0;
    if (!b->keeping)
        keep_main(b);
}

void tui_bottleneck_leave(struct tui_bottleneck *b)
{
    if (b)
        keep(b); /* (a verdict taken in the last frame) */
    if (!b || !b->keeping)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += TUI_BOTTLENECK_KEEP_WAIT_MS * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    if (pthread_timedjoin_np(b->keeper, NULL, &until) == 0)
        b->keeping = false;
    else /* given up: no temporary file left (a rename after this fails) */
        unlink(trace_vcache_pack_tmp(b->kept));
}

void tui_bottleneck_free(struct tui_bottleneck *b)
{
    if (!b)
        return;
    tui_task_free(b->task);
    keep_join(b);
    trace_verdict_inc_free(b->inc);
    trace_verdict_free(b->next);
    trace_verdict_free(b->retired); /* (the Gantt is freed first, its worker joined) */
    if (b->view->verdict == b->v)
        b->view->verdict = NULL;
    b->view->verdict_pending = b->view->verdict_wanted = false;
    trace_verdict_free(b->v);
    free(b->rows);
    tui_whatif_bg_free(b->bg);
    if (b->exp_done)
        tui_whatif_result_fini(&b->exp);
    free(b);
}

/* The experiment's findings put into the verdict. */
static void apply_checks(struct tui_bottleneck *b)
{
    if (!b->exp_done || !b->v)
        return;
    keep(b); /* (kept as judged: before the checks) */
    keep_join(b);
    struct trace_verdict_check c[256];
    size_t n = tui_whatif_checks(&b->exp, c, sizeof(c) / sizeof(c[0]));
    trace_verdict_check(b->v, c, n);
}

/* Start the experiment on what the model ran (once); say why when it cannot be. */
static void exp_start(struct tui_bottleneck *b)
{
    b->exp_started = true;
    b->dirty = true;
    b->exp_msg[0] = 0;
    struct tui_whatif_workload w;
    struct diag d = {0};
    /* with the plug-ins its run loaded (run_metadata.plugins): the experiment loads them */
    if (tui_whatif_workload_from_model(b->m, NULL, &w, &d) < 0) {
        snprintf(b->exp_msg, sizeof(b->exp_msg), "none: %s", d.msg);
        return;
    }
    struct tui_whatif_opts o = {0};
    if (tui_whatif_bg_start(&w, &o, &b->bg, &d) < 0)
        snprintf(b->exp_msg, sizeof(b->exp_msg), "not started: %s", d.msg);
    b->exp_t0 = tui_now_ns();
    tui_whatif_workload_fini(&w);
}

/* Read the experiment's progress; true when something changed. */
static bool exp_poll(struct tui_bottleneck *b)
{
    if (!b->bg)
        return false;
    size_t done = b->exp_runs, total = b->exp_total;
    struct diag d = {0};
    int rc = tui_whatif_bg_poll(b->bg, &done, &total, &b->exp, &d);
    bool changed = done != b->exp_runs || total != b->exp_total;
    b->exp_runs = done;
    b->exp_total = total;
    if (rc == 1)
        return changed;
    tui_whatif_bg_free(b->bg);
    b->bg = NULL;
    if (rc == 0) {
        b->exp_done = true;
        apply_checks(b);
    } else {
        snprintf(b->exp_msg, sizeof(b->exp_msg), "failed: %s", d.msg);
    }
    return true;
}

/* Whether the experiment may start: at once for a loaded trace; live, once the run has stood
 * still for STILL_NS, since the experiment runs the workload again beside it, taking the cores
 * the run uses (with the run going, it would slow it down by half on two cores). */
static bool run_still(struct tui_bottleneck *b, const struct tui_view *v)
{
    if (!v->live)
        return true;
    uint64_t g = trace_model_generation(b->m), now = tui_now_ns();
    if (g != b->seen_gen || !b->seen_at) {
        b->seen_gen = g;
        b->seen_at = now;
        return false;
    }
    return now - b->seen_at >= STILL_NS;
}

static bool kernel_launch(const struct trace_verdict_item *it)
{
    const struct trace_region *r = it->region;
    return r && r->all.ops > r->engine[TRACE_ENGINE_HOST].ops;
}

static void run(void *arg, struct trace_progress *pg)
{
    struct tui_bottleneck *b = arg;
    /* (a saved trace's paths with their spans: the Gantt draws one at C or Enter) */
    struct trace_verdict_opts o = {.progress = pg, .inc = b->inc, .step_spans = !b->inc};
    b->judged = false;
    /* a saved trace's verdict, kept from an earlier view of it; else judged (and kept) */
    if (b->kept_from && (b->next = trace_vcache_load(b->m, b->kept_from, &o, NULL)))
        return;
    b->next = trace_verdict_new(b->m, &o);
    b->judged = !trace_progress_cancelled(pg); /* (kept once taken: keep) */
}

/* A verdict taken since the last frame (fresh) is shown at once (tui_view.result). */
static void shown_fresh(struct tui_bottleneck *b, struct tui_view *v)
{
    if (b->fresh)
        v->result = true;
    b->fresh = false;
}

/* Free verdict v; live, its longest path's room handed to the next verdict's while none
 * is under way (the path of the launch running as long as the run: copied out once a
 * verdict, into pages already there). */
static void drop(struct tui_bottleneck *b, struct trace_verdict *v)
{
    if (b->inc && !tui_task_running(b->task))
        trace_verdict_inc_recycle(b->inc, v);
    trace_verdict_free(v);
}

/* Free verdict v, now or, while the Gantt's worker copies a path of it, once it is done. */
static void retire(struct tui_bottleneck *b, struct trace_verdict *v)
{
    if (b->retired && b->retired != b->view->verdict_lent) {
        drop(b, b->retired);
        b->retired = NULL;
    }
    if (v && v == b->view->verdict_lent)
        b->retired = v; /* (one is lent at a time: none was retired) */
    else
        drop(b, v);
}

/* Take a finished verdict. Returns true when one was taken. */
static bool take(struct tui_bottleneck *b)
{
    retire(b, NULL); /* (one the Gantt is done with) */
    if (!tui_task_take_done(b->task))
        return false;
    uint64_t t0 = b->started;
    /* keep the selection on the same launch */
    int32_t sel_cmdq = TRACE_NO_CMDQ;
    if (b->sel < b->nrows && b->rows[b->sel].it && b->rows[b->sel].it->region)
        sel_cmdq = b->rows[b->sel].it->region->cmdq_id;
    keep_join(b); /* (it reads v) */
    retire(b, b->v);
    b->v = b->next;
    b->next = NULL;
    b->view->verdict = b->view->live ? NULL : b->v;
    b->to_keep = b->judged;
    b->as_of = b->as_of_next;
    free(b->rows);
    b->rows = sim_xcalloc(b->v->nlaunches + 2, sizeof(*b->rows));
    b->nrows = 0;
    b->rows[b->nrows].it = &b->v->run;
    snprintf(b->rows[b->nrows++].name, sizeof(b->rows[0].name), "run");
    b->nhost = 0;
    b->host_length = 0;
    memset(b->host_time, 0, sizeof(b->host_time));
    size_t sel = 0;
    for (size_t i = 0; i < b->v->nlaunches; i++) {
        const struct trace_verdict_item *it = &b->v->launches[i];
        if (!kernel_launch(it)) {
            b->nhost++;
            b->host_length += it->length;
            for (int k = 0; k < TRACE_PCAT_COUNT; k++)
                b->host_time[k] += it->time[k];
            continue;
        }
        struct row *r = &b->rows[b->nrows];
        r->it = it;
        char q[80];
        sim_escape(it->region->name, strlen(it->region->name), q, sizeof(q));
        if (it->region->occurrence)
            snprintf(r->name, sizeof(r->name), "%s #%u", q, it->region->occurrence + 1);
        else
            snprintf(r->name, sizeof(r->name), "%s", q);
        if (it->region->cmdq_id == sel_cmdq)
            sel = b->nrows;
        b->nrows++;
    }
    if (b->nhost) {
        b->rows[b->nrows].it = NULL;
        snprintf(b->rows[b->nrows++].name, sizeof(b->rows[0].name), "host messages");
    }
    b->sel = sel < b->nrows ? sel : 0;
    b->at = tui_now_ns();
    b->cost = b->at - t0;
    b->dirty = true;
    b->fresh = true;
    apply_checks(b);
    return true;
}

/* Judge the run: started on the worker (take picks it up); live, over the model held still
 * meanwhile (tui/panes/task.h). */
static void compute(struct tui_bottleneck *b)
{
    /* a verdict that ended since the caller took last is taken, not lost to the next run
     * (which would write over it) */
    if (tui_task_running(b->task) || take(b))
        return;
    b->started = tui_now_ns();
    b->gen = trace_model_generation(b->m);
    b->as_of_next = trace_model_t_max(b->m);
    tui_task_start(b->task, run, b, true);
    take(b);
}

/* What the view says of the verdict under way (tui_view.verdict_pending): a saved trace's
 * first, until it is taken (not only while it runs: one that ended and waits for its take
 * is still the one a C pressed meanwhile wants, rather than a path of its own computed from
 * the start); one a pane waits for goes on as the user's, its priority raised. */
static void publish(struct tui_bottleneck *b)
{
    struct tui_view *v = b->view;
    v->verdict_pending = !v->live && !b->v;
    if (!v->verdict_pending) {
        v->verdict_wanted = false;
        return;
    }
    if (v->verdict_wanted)
        tui_task_set_ahead(b->task, false);
    tui_task_status(b->task, v->verdict_status, sizeof(v->verdict_status));
}

/* Whether the verdict is behind the model and may be computed again now. */
static bool due(const struct tui_bottleneck *b, const struct tui_view *v)
{
    if (tui_task_running(b->task))
        return false;
    if (!b->v)
        return true;
    if (trace_model_generation(b->m) == b->gen)
        return false;
    if (!v->live)
        return true;
    uint64_t wait = b->cost * COST_FACTOR;
    wait = wait > MIN_REFRESH_NS ? wait : MIN_REFRESH_NS;
    return tui_now_ns() - b->at >= wait && tui_task_due(b->task);
}

bool tui_bottleneck_ahead(struct tui_bottleneck *b, struct tui_view *v)
{
    /* live, kept warm as when the pane is open (each verdict taken on from the last: the
     * launch still running from its new ops), but four times less often (the run keeps 40/41
     * of its speed at the least, against 10/11 with the pane open); not lowered: it holds the
     * run while it works */
    if (v->live) {
        take(b);
        /* what it keeps between verdicts is the heap's, which the memory budget does not
         * bound: kept while it is within a quarter of the budget and the process within
         * half, else dropped and no longer kept warm (the pane computes it when it opens) */
        if (!b->ahead_off && !tui_task_running(b->task) &&
            (trace_verdict_inc_bytes(b->inc) > trace_budget_get() / 4 ||
             trace_budget_rss() > trace_budget_get() / 2)) {
            trace_verdict_inc_trim(b->inc);
            b->ahead_off = true;
        }
        if (!b->ahead_off && trace_model_event_count(b->m) >= AHEAD_LIVE_EVENTS && due(b, v) &&
            (!b->v || tui_now_ns() - b->at >= (uint64_t)AHEAD_COST_FACTOR * b->cost))
            compute(b);
        return false;
    }
    tui_task_set_ahead(b->task, true);
    take(b);
    if (!tui_task_user_waits()) /* (kept behind what the user waits for: C's path) */
        keep(b);
    if (!b->v && !tui_task_running(b->task))
        compute(b); /* once: a loaded trace's model no longer changes */
    publish(b);
    return tui_task_pending(b->task) || (b->to_keep && b->kept_from);
}

static bool bn_sync(void *self, struct tui_view *v)
{
    struct tui_bottleneck *b = self;
    tui_task_set_ahead(b->task, false); /* the pane is open: a run under way is its own */
    take(b);
    publish(b);
    shown_fresh(b, v);
    bool d = b->dirty || tui_task_running(b->task);
    b->dirty = false;
    return d;
}

static bool bn_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_bottleneck *b = self;
    (void)budget_ns;
    tui_task_set_ahead(b->task, false);
    keep(b);                                  /* (the verdict taken last time on screen by now) */
    bool running = tui_task_running(b->task); /* before the take: it may end between */
    bool took = take(b);
    publish(b);
    if (took) {
        shown_fresh(b, v);
        return true; /* drawn once more with the result */
    }
    if (running)
        return true;
    if (due(b, v))
        compute(b);
    shown_fresh(b, v); /* (a verdict judged at once) */
    bool news = !b->exp_started;
    /* (once the verdict is kept: the experiment's runs would take the cores from the keeping,
     * which a quick q gives up) */
    bool keeping = b->keeping && !atomic_load(&b->kept_done);
    if (news && !run_still(b, v))
        snprintf(b->exp_msg, sizeof(b->exp_msg),
                 "starts once the run is paused or finished (it runs the workload again, on the "
                 "cores the run uses)");
    else if (news && !keeping)
        exp_start(b);
    if (exp_poll(b))
        news = b->dirty = true;
    /* live, a newer model keeps the pane asking for slices until the verdict follows; a
     * running experiment, until it ends; news of it, for one more frame */
    return (b->v && trace_model_generation(b->m) != b->gen) || b->bg || news || !b->exp_started;
}

/* The experiment's lines for the selected row (launch: its index in the experiment, or
 * SIZE_MAX for the run). Returns the lines drawn. */
static int exp_render(struct tui_bottleneck *b, struct tui_canvas *c, int x, int y, int w,
                      const struct trace_verdict_item *it)
{
    int n = 0;
    if (!b->exp_done) {
        if (b->bg)
            tui_canvas_printf(c, x, y + n++, w, TUI_STYLE_DIM,
                              "experiment: running the workload again with one resource changed "
                              "at a time, %zu of %zu runs (%.0f s; the pane can be left)",
                              b->exp_runs, b->exp_total, (double)(tui_now_ns() - b->exp_t0) / 1e9);
        else if (b->exp_msg[0])
            tui_canvas_printf(c, x, y + n++, w, TUI_STYLE_DIM, "experiment: %s", b->exp_msg);
        return n;
    }
    const struct tui_whatif_result *r = &b->exp;
    size_t launch = SIZE_MAX;
    if (it && it->region && it->region->kind == TRACE_REGION_LAUNCH) {
        launch = r->nlaunches;
        for (size_t i = 0; i < r->nlaunches; i++)
            if (r->launches[i].cmdq_id == it->region->cmdq_id)
                launch = i;
    }
    tui_canvas_printf(c, x, y + n++, w, TUI_STYLE_GROUP,
                      "experiment: %zu runs on %u workers in %.1f s, the time of %s with one "
                      "resource changed",
                      r->npoints + 1, r->workers, r->seconds,
                      launch == SIZE_MAX ? "the run" : "this launch");
    if (launch == r->nlaunches)
        return n;
    /* the changes, the most shortening first */
    size_t order[128], k = 0;
    for (size_t i = 0; i < r->npoints && k < 128; i++)
        if (!isnan(tui_whatif_change(r, &r->points[i], launch)))
            order[k++] = i;
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && tui_whatif_change(r, &r->points[order[j]], launch) <
                                        tui_whatif_change(r, &r->points[order[j - 1]], launch);
             j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 0; i < k && i < 4; i++) {
        const struct tui_whatif_point *p = &r->points[order[i]];
        tui_canvas_printf(c, x + 1, y + n++, w - 1, TUI_STYLE_NORMAL, "%-30.30s x%-5g %+6.1f%%",
                          tui_whatif_point_name(p), p->factor,
                          100 * tui_whatif_change(r, p, launch));
    }
    return n;
}

static const char *bound_short(const struct trace_verdict *v, const struct trace_verdict_item *it,
                               char *buf, size_t size)
{
    trace_verdict_bound_text(v, it, buf, size);
    size_t n = strlen(buf);
    if (it->bound != TRACE_BOUND_NONE && n < size)
        snprintf(buf + n, size - n, " %d%%", (int)(100 * it->share + 0.5));
    return buf;
}

/* The columns of the launch table for a pane w wide: the bound column as wide as its widest
 * text (at most 26), "running" only when a launch runs, and of the busy shares as many as
 * fit, by priority (TE, VE, DMA, HOST): a column that does not fit is left out whole. */
struct cols {
    int bound_w;
    bool running;
    int nbusy;
};

static const struct {
    const char *name;
    enum trace_engine e;
} busy_cols[] = {{"TE", TRACE_ENGINE_TE},
                 {"VE", TRACE_ENGINE_VE},
                 {"DMA", TRACE_ENGINE_DMA},
                 {"HOST", TRACE_ENGINE_HOST}};

static struct cols table_cols(struct tui_bottleneck *b, int w)
{
    struct cols k = {5, false, 0};
    for (size_t i = 0; i < b->nrows; i++) {
        char bound[200];
        const struct trace_verdict_item *it = b->rows[i].it;
        if (!it)
            continue;
        int n = (int)strlen(bound_short(b->v, it, bound, sizeof(bound)));
        k.bound_w = n > k.bound_w ? n : k.bound_w;
        k.running |= it->running;
    }
    k.bound_w = k.bound_w > 26 ? 26 : k.bound_w;
    int used = 18 + 1 + 9 + 1 + (k.running ? 8 : 0) + k.bound_w;
    for (size_t i = 0; i < sizeof(busy_cols) / sizeof(busy_cols[0]); i++) {
        int cw = (int)strlen(busy_cols[i].name) + 6; /* " TE 100%" */
        if (used + cw > w)
            break;
        used += cw;
        k.nbusy++;
    }
    return k;
}

static void row_line(struct tui_bottleneck *b, const struct row *r, char *line, size_t size,
                     double ghz, const struct cols *tc)
{
    char len[32], bound[160];
    if (!r->it) {
        double total = 0;
        int best = TRACE_PCAT_LATENCY;
        for (int k = 0; k < TRACE_PCAT_COUNT; k++) {
            total += b->host_time[k];
            if (b->host_time[k] > b->host_time[best])
                best = k;
        }
        static const char *const cat[TRACE_PCAT_COUNT] = {
            "compute (TE)",  "vector (VE)",        "DMA / HBM bandwidth",
            "host transfer", "dependency latency", "DMA per-transfer cost"};
        tui_fmt_ns(len, sizeof(len), ghz > 0 ? (double)b->host_length / ghz : 0);
        if (!(ghz > 0))
            snprintf(len, sizeof(len), "%llu cyc", (unsigned long long)b->host_length);
        char name[128];
        snprintf(name, sizeof(name), "%s (%zu)", r->name, b->nhost);
        snprintf(line, size, "%-18.18s %9s%s %s %.0f%%", name, len, tc->running ? "        " : "",
                 cat[best], total > 0 ? 100 * b->host_time[best] / total : 0);
        return;
    }
    const struct trace_verdict_item *it = r->it;
    if (ghz > 0)
        tui_fmt_ns(len, sizeof(len), (double)it->length / ghz);
    else
        snprintf(len, sizeof(len), "%llu cyc", (unsigned long long)it->length);
    bound_short(b->v, it, bound, sizeof(bound));
    /* "running" right after the time, which is the time so far: within a half-screen pane */
    int n = snprintf(line, size, "%-18.18s %9s%s%s %-*.*s", r->name, len, tc->running ? " " : "",
                     tc->running ? (it->running ? "running" : "       ") : "", tc->bound_w,
                     tc->bound_w, bound);
    for (int i = 0; i < tc->nbusy && n > 0 && (size_t)n < size; i++)
        n += snprintf(line + n, size - (size_t)n, " %s %3.0f%%", busy_cols[i].name,
                      100 * it->busy[busy_cols[i].e]);
}

static void bn_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                      bool focused)
{
    struct tui_bottleneck *b = self;
    tui_task_set_ahead(b->task, false);
    take(b);
    if (!b->v)
        compute(b);
    shown_fresh(b, v);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    if (!b->v) {
        tui_canvas_text(c, r.x, r.y, r.w, ts, " Bottleneck", TUI_TEXT_ELLIPSIS);
        tui_task_draw(b->task, c, (struct tui_rect){r.x + 1, r.y + 1, r.w - 1, r.h - 1}, "verdict");
        tui_canvas_unclip(c);
        return;
    }
    char title[256], bound[200];
    const struct trace_verdict_item *run = &b->v->run;
    snprintf(title, sizeof(title), " Bottleneck  run: %s%s",
             bound_short(b->v, run, bound, sizeof(bound)), run->running ? " (running)" : "");
    if (v->live && (trace_model_generation(b->m) != b->gen || tui_task_running(b->task))) {
        char t[48], st[96];
        double ghz = trace_model_clock_ghz(b->m);
        size_t n = strlen(title);
        snprintf(title + n, sizeof(title) - n, "  as of %s",
                 ghz > 0 ? tui_fmt_ns(t, sizeof(t), (double)b->as_of / ghz)
                         : tui_fmt_si(t, sizeof(t), (double)b->as_of));
        n = strlen(title);
        if (tui_task_running(b->task)) /* the run waits for it (tui/panes/task.h) */
            snprintf(title + n, sizeof(title) - n, ", refreshing: %s",
                     tui_task_status(b->task, st, sizeof(st)));
    }
    tui_canvas_text(c, r.x, r.y, r.w, ts, title, TUI_TEXT_ELLIPSIS);
    b->rows_visible = r.h - 1;
    int max = b->lines_drawn > b->rows_visible ? b->lines_drawn - b->rows_visible : 0;
    b->scroll = b->scroll > max ? max : b->scroll;
    struct tui_rect body = {r.x + 1, r.y + 1, r.w - 1, r.h - 1};
    tui_canvas_clip(c, body);
    int y = body.y - b->scroll, n = 0;
    double ghz = trace_model_clock_ghz(b->m);
    struct cols tc = table_cols(b, body.w);
    char head[160];
    snprintf(head, sizeof(head), "%-18s %9s%s %-*s%s", "launch", "time",
             tc.running ? "        " : "", tc.bound_w,
             tc.bound_w >= 24 ? "bound, share of the path" : "bound, share",
             tc.nbusy ? " busy" : "");
    tui_canvas_text(c, body.x, y + n++, body.w, TUI_STYLE_DIM, head, TUI_TEXT_ELLIPSIS);
    for (size_t i = 0; i < b->nrows; i++) {
        char line[320];
        row_line(b, &b->rows[i], line, sizeof(line), ghz, &tc);
        enum tui_style st =
            i == b->sel ? (focused ? TUI_STYLE_LABEL_SEL : TUI_STYLE_SELECTION) : TUI_STYLE_NORMAL;
        if (i == b->sel)
            tui_canvas_fill(c, (struct tui_rect){body.x, y + n, body.w, 1}, ' ', st);
        tui_canvas_text(c, body.x, y + n++, body.w, st, line, TUI_TEXT_ELLIPSIS);
    }
    const struct trace_verdict_item *it = b->sel < b->nrows ? b->rows[b->sel].it : NULL;
    if (it) {
        char lines[EVIDENCE][TRACE_VERDICT_LINE];
        size_t k = trace_verdict_evidence(b->v, it, lines, EVIDENCE);
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_GROUP, "%s%s", b->rows[b->sel].name,
                          it->region && it->region->kind == TRACE_REGION_LAUNCH
                              ? ": Enter shows its critical path on the Gantt"
                              : "");
        for (size_t i = 0; i < k; i++)
            tui_canvas_text(c, body.x + 1, y + n++, body.w - 1,
                            strncmp(lines[i], "missing", 7) == 0 ? TUI_STYLE_DIM : TUI_STYLE_NORMAL,
                            lines[i], TUI_TEXT_ELLIPSIS);
    }
    n += exp_render(b, c, body.x, y + n, body.w, it); /* below the evidence it checks */
    b->lines_drawn = n;
    tui_canvas_unclip(c);
}

static enum tui_result bn_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_bottleneck *b = self;
    if (!b->v)
        return TUI_RES_IGNORED; /* still computing */
    size_t before = b->sel;
    int scroll = b->scroll;
    switch (a) {
    case TUI_ACT_UP: b->sel = b->sel ? b->sel - 1 : 0; break;
    case TUI_ACT_DOWN: b->sel = b->sel + 1 < b->nrows ? b->sel + 1 : b->sel; break;
    case TUI_ACT_PAGE_UP: b->scroll -= b->rows_visible; break;
    case TUI_ACT_PAGE_DOWN: b->scroll += b->rows_visible; break;
    case TUI_ACT_SELECT: {
        const struct trace_verdict_item *it = b->sel < b->nrows ? b->rows[b->sel].it : NULL;
        if (!it || !it->region) {
            tui_view_message(v, TUI_STYLE_STATUS, "host messages: select a launch for its path");
            return TUI_RES_REDRAW;
        }
        tui_view_request_path(v, it->region->kind == TRACE_REGION_LAUNCH ? it->region->cmdq_id
                                                                         : TRACE_NO_CMDQ);
        tui_view_set_cursor(v, it->region->start);
        return TUI_RES_REDRAW;
    }
    default: return TUI_RES_IGNORED;
    }
    b->scroll = b->scroll < 0 ? 0 : b->scroll;
    return b->sel != before || b->scroll != scroll ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static void bn_hidden(void *self, bool hidden)
{
    struct tui_bottleneck *b = self;
    tui_task_set_hidden(b->task, hidden);
}

static void bn_free(void *self)
{
    tui_bottleneck_free(self);
}

const struct tui_pane_ops tui_bottleneck_ops = {
    .name = "Bottleneck",
    .sync = bn_sync,
    .render = bn_render,
    .action = bn_action,
    .work = bn_work,
    .hidden = bn_hidden,
    .free = bn_free,
    .uses_view = false,
};
