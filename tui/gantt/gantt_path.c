/*
 * The critical path on the Gantt (see gantt_int.h): C computes the path of the launch at
 * the cursor (trace/verdict/critpath.h) and highlights its ops; ( and ) walk the cursor along it,
 * op by op, saying in the status line how long each op waited and on what (the details
 * pane says it too). The bottleneck pane asks for a launch's path through the view.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/regions.h"
#include "trace/model/radix.h"
#include "trace/verdict/critpath.h"
#include "trace/verdict/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Free path p (NULL: nothing), its steps too unless borrowed (the verdict's). */
static void path_drop(struct trace_critpath *p, bool borrowed)
{
    if (p && !borrowed)
        trace_critpath_fini(p);
    free(p);
}

void tui_gantt_path_free(struct tui_gantt *g, struct tui_view *v)
{
    if (v) /* (the view's path is the Gantt's: read freed otherwise) */
        tui_view_set_path(v, NULL, 0);
    path_drop(g->path, g->path_borrowed);
    if (g->path_borrowed && v) /* the verdict, given back (freed once it is retired) */
        v->verdict_lent = NULL;
    g->path_borrowed = false;
    g->path = NULL;
    free(g->path_spans);
    g->path_spans = NULL;
    g->path_nspans = 0;
}

bool tui_gantt_on_path(const struct tui_gantt *g, uint32_t track, uint64_t a, uint64_t b)
{
    /* the track's last span that starts before b: some op of the path overlaps [a, b) when
     * the latest end up to it (its reach) is past a */
    const uint64_t *sp = g->path_spans;
    size_t lo = 0, hi = g->path_nspans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sp[mid * 3] < track || (sp[mid * 3] == track && sp[mid * 3 + 1] < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && sp[(lo - 1) * 3] == track && sp[(lo - 1) * 3 + 2] > a;
}

/* The first of n messages that fits the status line (w columns), else the last: what a
 * narrow window cannot show is left out by priority, not cut at its end. */
static void say_fitting(struct tui_view *v, int w, char (*msgs)[640], int n)
{
    int i = 0;
    while (i + 1 < n && (int)strlen(msgs[i]) > w)
        i++;
    tui_view_message(v, TUI_STYLE_STATUS, "%s", msgs[i]);
}

/* A length as cycles and time ("103954 (104 us)"), or the time alone (short). */
static char *fmt_len(char *buf, size_t n, uint64_t cycles, double ghz, bool short_form)
{
    if (short_form && ghz > 0)
        return tui_fmt_ns(buf, n, (double)cycles / ghz);
    return tui_fmt_cycles_ns(buf, n, cycles, ghz);
}

/* Move to step k: the op selected, the cursor at its start, the status line saying why it
 * waited. */
static void go_to(struct tui_gantt *g, struct tui_view *v, size_t k)
{
    const struct trace_critpath *p = g->path;
    const struct trace_path_step *s = &p->steps[k];
    tui_gantt_select_event(g, v, s->ev);
    tui_view_set_path(v, p, k);
    const struct trace_event *e = trace_model_event(g->m, s->ev);
    double ghz = trace_model_clock_ghz(g->m);
    char op[64], w[64], why[160], pred[64] = "the start";
    sim_escape(trace_model_str(g->m, e->op), trace_model_str_len(g->m, e->op), op, sizeof(op));
    if (s->pred != UINT64_MAX) {
        const struct trace_event *pe = trace_model_event(g->m, s->pred);
        sim_escape(trace_model_str(g->m, pe->op), trace_model_str_len(g->m, pe->op), pred,
                   sizeof(pred));
    }
    char ws[64], m[4][640];
    fmt_len(w, sizeof(w), s->wait, ghz, false);
    fmt_len(ws, sizeof(ws), s->wait, ghz, true);
    trace_critpath_why(p, s, why, sizeof(why));
    /* by priority: the cycles, then the op waited on, then the reason go */
    snprintf(m[0], sizeof(m[0]), "path %zu/%zu: %s waited %s after %s (%s)", k + 1, p->n, op, w,
             pred, why);
    snprintf(m[1], sizeof(m[1]), "path %zu/%zu: %s waited %s after %s (%s)", k + 1, p->n, op, ws,
             pred, why);
    snprintf(m[2], sizeof(m[2]), "path %zu/%zu: %s waited %s (%s)", k + 1, p->n, op, ws, why);
    snprintf(m[3], sizeof(m[3]), "path %zu/%zu: %s waited %s", k + 1, p->n, op, ws);
    say_fitting(v, g->rect.w, m, 4);
}

/* A launch's name as the status line says it: its kernel's, escaped, with its occurrence
 * ("gemm #2"). */
static void launch_name(const struct trace_region *x, char *name, size_t size)
{
    char q[80];
    sim_escape(x->name, strlen(x->name), q, sizeof(q));
    if (x->occurrence)
        snprintf(name, size, "%s #%u", q, x->occurrence + 1);
    else
        snprintf(name, size, "%s", q);
}

/* The events of the launch with cmdq_id (all events for TRACE_NO_CMDQ), and its start; split:
 * the model's launch split if one is at hand (borrowed), else NULL (made here). With most
 * (not 0), NULL as soon as the launch has more events than that (nothing else set). */
static uint64_t *launch_events(const struct trace_model *m, int32_t cmdq,
                               const struct trace_regions *split, size_t *n, uint64_t *start,
                               char *name, size_t size, struct trace_progress *pg, size_t most)
{
    uint64_t ne = trace_model_event_count(m);
    size_t cap = most && most < ne ? most : ne;
    uint64_t *evs = sim_xreallocarray(NULL, cap ? cap : 1, sizeof(*evs));
    size_t k = 0;
    uint64_t s = UINT64_MAX;
    trace_progress_step(pg, "critical path: the launch's ops", ne);
    for (uint64_t i = 0; i < ne; i++) {
        if (i && i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i))
            break; /* cancelled: the caller drops the result */
        const struct trace_event *e = trace_model_event(m, i);
        if (cmdq != TRACE_NO_CMDQ && e->cmdq_id != cmdq)
            continue;
        if (k == cap) { /* (past most) */
            free(evs);
            return NULL;
        }
        evs[k++] = i;
        s = e->start < s ? e->start : s;
    }
    *n = k;
    *start = k ? s : 0;
    snprintf(name, size, "the run");
    if (cmdq == TRACE_NO_CMDQ) {
        *start = 0; /* the run's span, from cycle 0, as the verdict judges the run */
        return evs;
    }
    struct trace_regions *own = split ? NULL : trace_regions_new_split(m, TRACE_REGION_LAUNCH);
    const struct trace_regions *rs = split ? split : own;
    for (size_t r = 0; r < trace_regions_count(rs); r++) {
        const struct trace_region *x = trace_regions_get(rs, r);
        if (x->cmdq_id != cmdq)
            continue;
        launch_name(x, name, size);
        *start = x->start;
    }
    trace_regions_free(own);
    return evs;
}

/* The launch whose ops span cycle t (the last that does: launches run one after another),
 * else TRACE_NO_CMDQ (the run). *split: the launch split made to find it (the caller frees
 * it). */
static int32_t launch_at(const struct trace_model *m, uint64_t t, struct trace_regions **split)
{
    struct trace_regions *rs = trace_regions_new_split(m, TRACE_REGION_LAUNCH);
    int32_t c = TRACE_NO_CMDQ;
    for (size_t r = 0; r < trace_regions_count(rs); r++) {
        const struct trace_region *x = trace_regions_get(rs, r);
        if (x->start <= t && t < x->end)
            c = x->cmdq_id;
    }
    *split = rs;
    return c;
}

/* A finished launch's path, kept: a launch whose ops have all ended, and whose count of ops,
 * last op and start are still those, has that path still (ops are only added to a model,
 * and an op that has ended does not change). */
struct tui_gantt_kept_path {
    int32_t cmdq;
    size_t n;
    uint64_t last, start;
    struct trace_critpath path;
};

enum { PATHS_KEPT = 32 }; /* the most recent; the oldest is dropped */

/* While a saved trace's verdict is under way, the path of a launch of at most this many ops
 * is computed at once (milliseconds; finding its ops, a pass over the model's events), that
 * of a larger one taken from the verdict (seconds at ten million ops: not twice). */
enum { PATH_SMALL = TRACE_CRITPATH_THREAD_MIN };

/* The key of the launch cmdq's path if it may be kept (live, a launch, every op ended), else
 * NULL. */
static struct tui_gantt_kept_path *keep_key(const struct tui_gantt *g, bool live, int32_t cmdq,
                                            const uint64_t *evs, size_t n, uint64_t start)
{
    if (!live || cmdq == TRACE_NO_CMDQ || !n)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (trace_model_event(g->m, evs[i])->flags & TRACE_EV_INFLIGHT)
            return NULL;
    struct tui_gantt_kept_path *k = sim_xcalloc(1, sizeof(*k));
    *k = (struct tui_gantt_kept_path){cmdq, n, evs[n - 1], start, {0}};
    return k;
}

static struct tui_gantt_kept_path *kept(const struct tui_gantt *g,
                                        const struct tui_gantt_kept_path *key)
{
    for (size_t i = 0; i < g->path_nkept; i++) {
        struct tui_gantt_kept_path *k = &g->path_kept[i];
        if (k->cmdq == key->cmdq && k->n == key->n && k->last == key->last &&
            k->start == key->start)
            return k;
    }
    return NULL;
}

/* Keep the path just computed under key (taken). */
static void keep_path(struct tui_gantt *g, struct tui_gantt_kept_path *key,
                      const struct trace_critpath *p)
{
    if (g->path_nkept == PATHS_KEPT) {
        trace_critpath_fini(&g->path_kept[0].path);
        memmove(g->path_kept, g->path_kept + 1, (PATHS_KEPT - 1) * sizeof(*g->path_kept));
        g->path_nkept--;
    }
    if (!g->path_kept)
        g->path_kept = sim_xcalloc(PATHS_KEPT, sizeof(*g->path_kept));
    trace_critpath_copy(&key->path, p);
    g->path_kept[g->path_nkept++] = *key;
    free(key);
}

static void kept_free(struct tui_gantt *g)
{
    for (size_t i = 0; i < g->path_nkept; i++)
        trace_critpath_fini(&g->path_kept[i].path);
    free(g->path_kept);
    g->path_kept = NULL;
    g->path_nkept = 0;
    free(g->path_next_key);
    g->path_next_key = NULL;
}

/* The spans of the n steps kept with a path (os), by track (their order kept) into sp, as
 * tui_gantt_ev_end draws an op (one of no length takes a cycle): a counting sort, in one
 * pass over them after one over their tracks, rather than the path's events looked up (a
 * miss of the caches each) and sorted twice. False when cancelled. */
static bool spans_by_track(const struct tui_gantt *g, const struct trace_op_span *os, size_t n,
                           uint64_t *sp, struct trace_progress *pg)
{
    size_t nt = trace_model_track_count(g->m); /* (each op's track is one of them) */
    size_t *at = sim_xcalloc(nt + 1, sizeof(*at));
    for (size_t i = 0; i < n; i++)
        at[os[i].track + 1]++;
    for (size_t t = 0; t < nt; t++)
        at[t + 1] += at[t];
    bool cancelled = false;
    for (size_t i = 0; i < n && !cancelled; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0)
            cancelled = trace_progress_at(pg, i);
        size_t j = at[os[i].track]++;
        sp[j * 3] = os[i].track;
        sp[j * 3 + 1] = os[i].start;
        sp[j * 3 + 2] = os[i].end > os[i].start ? os[i].end : os[i].start + 1;
    }
    free(at);
    return !cancelled;
}

/* On the worker: the spans of path_next's ops, by track and start, and its waits added up
 * (a path of a million steps: a million ops sorted, a tenth of a second's work that held the
 * keys when it was the main loop's). */
static void path_spans(struct tui_gantt *g, struct trace_progress *pg)
{
    const struct trace_critpath *p = g->path_next;
    trace_progress_step(pg, "critical path: its ops on the Gantt", p->n);
    uint64_t *sp = sim_xreallocarray(NULL, p->n ? p->n : 1, 3 * sizeof(uint64_t)), waits = 0;
    for (size_t i = 0; i < p->n; i++)
        waits += p->steps[i].wait;
    /* by track, then start: the spans kept with the path by track (a path's steps come in
     * start order, but for an op that starts a cycle before the engine's last one ends),
     * else the events looked up, by start, then stably by track */
    bool by_track = p->spans && spans_by_track(g, p->spans, p->n, sp, pg);
    for (size_t i = 0; i < p->n && !p->spans; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(pg, i))
            break; /* cancelled: the caller drops the result */
        const struct trace_event *e = trace_model_event(g->m, p->steps[i].ev);
        sp[i * 3] = e->track;
        sp[i * 3 + 1] = e->start;
        sp[i * 3 + 2] = tui_gantt_ev_end(g, e);
    }
    bool sorted = by_track;
    for (size_t i = 1; i < p->n && sorted; i++)
        sorted = sp[i * 3] != sp[(i - 1) * 3] || sp[i * 3 + 1] >= sp[(i - 1) * 3 + 1];
    if (!trace_progress_cancelled(pg)) {
        if (!sorted) {
            trace_radix_sort(sp, p->n, 3 * sizeof(uint64_t), sizeof(uint64_t));
            trace_radix_sort(sp, p->n, 3 * sizeof(uint64_t), 0);
        }
        /* each span's end then the latest of its track up to it */
        for (size_t i = 1; i < p->n; i++)
            if (sp[i * 3] == sp[(i - 1) * 3] && sp[(i - 1) * 3 + 2] > sp[i * 3 + 2])
                sp[i * 3 + 2] = sp[(i - 1) * 3 + 2];
    }
    g->path_next_spans = sp;
    g->path_next_waits = waits;
}

/* On the worker: the launch (found at the cursor when path_find), its ops, its path (the
 * verdict's as it is, when judged), its spans. */
static void path_run(void *arg, struct trace_progress *pg)
{
    struct tui_gantt *g = arg;
    if (g->path_judged) {
        path_spans(g, pg);
        return;
    }
    struct trace_regions *split = NULL;
    int32_t cmdq = g->path_cmdq;
    if (g->path_find) {
        trace_progress_step(pg, "critical path: the launch at the cursor", 0);
        cmdq = launch_at(g->m, g->path_cursor, &split);
    }
    size_t n;
    uint64_t *evs = launch_events(g->m, cmdq, split, &n, &g->path_next_start, g->path_next_name,
                                  sizeof(g->path_next_name), pg, g->path_small ? PATH_SMALL : 0);
    trace_regions_free(split);
    g->path_too_big = !evs;
    if (!evs)
        return; /* (C waits for the verdict's) */
    atomic_store_explicit(&g->path_named, 1, memory_order_release);
    /* a finished launch's path, as computed before (the kept paths change only on the main
     * loop's thread, and not while this runs) */
    struct tui_gantt_kept_path *key = keep_key(g, g->path_live, cmdq, evs, n, g->path_next_start);
    const struct tui_gantt_kept_path *had = key ? kept(g, key) : NULL;
    g->path_was_kept = had != NULL;
    if (had) {
        free(key);
        trace_critpath_copy(g->path_next, &had->path);
        g->path_in = (struct trace_critpath_input){.events = evs};
        path_spans(g, pg);
        return;
    }
    g->path_next_key = key;
    g->path_in = (struct trace_critpath_input){.m = g->m,
                                               .events = evs,
                                               .n = n,
                                               .start = g->path_next_start,
                                               .with_details = trace_critpath_details_bounded,
                                               .each_ctx = &g->path_in.n,
                                               .progress = pg,
                                               .step_spans = true};
    if (!trace_progress_cancelled(pg))
        trace_critpath_compute(&g->path_in, g->path_next);
    g->path_in.progress = NULL;
    path_spans(g, pg);
}

static void say_waiting(struct tui_gantt *g, struct tui_view *v, bool first);

/* Show the path just computed. */
static void path_show(struct tui_gantt *g, struct tui_view *v)
{
    if (g->path_too_big) { /* a launch of many ops: the verdict under way computes its path */
        path_drop(g->path_next, false);
        g->path_next = NULL;
        g->path_too_big = false;
        g->path_wait = true; /* (taken at the next slice if it came meanwhile) */
        if (!v->verdict && v->verdict_pending) {
            v->verdict_wanted = true;
            say_waiting(g, v, true);
        }
        return;
    }
    if (g->path_next_key && g->path_next->n) /* a launch's ops: never an empty path */
        keep_path(g, g->path_next_key, g->path_next);
    else
        free(g->path_next_key);
    g->path_next_key = NULL;
    g->path = g->path_next;
    g->path_borrowed = g->path_judged; /* (the verdict stays lent while it shows) */
    g->path_next = NULL;
    free((uint64_t *)g->path_in.events);
    g->path_in.events = NULL;
    uint64_t start = g->path_next_start;
    const char *name = g->path_next_name;
    if (!g->path->n) {
        free(g->path_next_spans);
        g->path_next_spans = NULL;
        tui_gantt_path_free(g, v);
        tui_view_message(v, TUI_STYLE_STATUS, "no ops in %s: no critical path", name);
        return;
    }
    g->path_nspans = g->path->n;
    g->path_spans = g->path_next_spans;
    g->path_next_spans = NULL;
    uint64_t waits = g->path_next_waits;
    snprintf(g->path_name, sizeof(g->path_name), "%s", name);
    /* the launch in view, the cursor on its first op */
    uint64_t end = g->path->end > start ? g->path->end : start + 1;
    double span = (double)(end - start);
    if (span / g->cpc > g->plot_w || span / g->cpc < g->plot_w / 4.0) {
        g->cpc = span * 1.1 / (g->plot_w > 0 ? g->plot_w : 1);
        g->cpc = g->cpc < 1 ? 1 : g->cpc;
    }
    g->t0 = (double)start - span * 0.05;
    g->fit = false;
    tui_gantt_view_clamp(g);
    go_to(g, v, 0);
    char w[64], l[64], ws[64], ls[64], m[4][640];
    double ghz = trace_model_clock_ghz(g->m);
    fmt_len(l, sizeof(l), end - start, ghz, false);
    fmt_len(w, sizeof(w), waits, ghz, false);
    fmt_len(ls, sizeof(ls), end - start, ghz, true);
    fmt_len(ws, sizeof(ws), waits, ghz, true);
    /* a kept path (a finished launch's, as computed before) says so */
    const char *kn = g->path_was_kept ? " (kept: its launch has ended)" : "";
    const char *ks = g->path_was_kept ? " (kept)" : "";
    snprintf(m[0], sizeof(m[0]),
             "critical path of %s%s: %zu ops over %s, %s waiting; ) next, ( previous, C hides",
             name, kn, g->path->n, l, w);
    snprintf(m[1], sizeof(m[1]),
             "critical path of %s%s: %zu ops over %s, %s waiting; ) next, ( previous, C hides",
             name, ks, g->path->n, ls, ws);
    snprintf(m[2], sizeof(m[2]), "critical path of %s%s: %zu ops over %s, %s waiting; ) ( walk it",
             name, ks, g->path->n, ls, ws);
    snprintf(m[3], sizeof(m[3]), "path of %s%s: %zu ops, %s, %s waiting", name, ks, g->path->n, ls,
             ws);
    say_fitting(v, g->rect.w, m, 4);
}

/* A live path cancelled before it was done (tui_task_release): dropped. */
static void path_discard(void *arg)
{
    struct tui_gantt *g = arg;
    path_drop(g->path_next, g->path_judged);
    g->path_next = NULL;
    free(g->path_next_spans);
    g->path_next_spans = NULL;
    free((uint64_t *)g->path_in.events);
    g->path_in.events = NULL;
    free(g->path_next_key);
    g->path_next_key = NULL;
}

/* g->path_next: the verdict's path p, its steps borrowed: the verdict lent
 * (tui_view.verdict_lent) until the path is no longer shown. */
static void take_judged(struct tui_gantt *g, struct tui_view *v, const struct trace_critpath *p)
{
    g->path_next = sim_xcalloc(1, sizeof(*g->path_next));
    *g->path_next = *p;
    v->verdict_lent = v->verdict;
}

/*
 * The path of launch cmdq (find: of the launch at cursor, the last whose span holds it; the
 * run when none does) as the verdict of a saved trace judged it (v->verdict), into
 * g->path_next with its name and start: false when there is none (live, not judged yet, the
 * run of a trace with launches, a launch whose cmdq_id two share, a path the verdict did not
 * get to). The same path as computed here,
 * over the same ops from the same start with the same rules; copied (the verdict's stays
 * the pane's) on the worker, a moment's work where computing it again took seconds at ten
 * million ops.
 */
static bool path_judged(struct tui_gantt *g, struct tui_view *v, int32_t cmdq, bool find,
                        uint64_t cursor)
{
    const struct trace_verdict *vd = v->live ? NULL : v->verdict;
    if (!vd)
        return false;
    const struct trace_verdict_item *it = NULL;
    size_t same = 0;
    for (size_t i = 0; i < vd->nlaunches; i++) {
        const struct trace_region *x = vd->launches[i].region;
        if (find && x->start <= cursor && cursor < x->end)
            cmdq = x->cmdq_id;
    }
    if (cmdq == TRACE_NO_CMDQ) {
        /* the run: judged on its own path when it has no launches (else from theirs) */
        if (vd->nlaunches || !vd->run.path.n)
            return false;
        take_judged(g, v, &vd->run.path);
        g->path_next_start = vd->run_region.start;
        snprintf(g->path_next_name, sizeof(g->path_next_name), "the run");
        return true;
    }
    for (size_t i = 0; i < vd->nlaunches; i++)
        if (vd->launches[i].region->cmdq_id == cmdq)
            it = &vd->launches[i], same++;
    if (same != 1 || !it->path.n)
        return false;
    take_judged(g, v, &it->path);
    g->path_next_start = it->region->start;
    launch_name(it->region, g->path_next_name, sizeof(g->path_next_name));
    return true;
}

/* The status line while C waits for the verdict under way: its progress, at first and
 * then when it changed. */
static void say_waiting(struct tui_gantt *g, struct tui_view *v, bool first)
{
    if (!first && strcmp(v->verdict_status, g->path_status) == 0)
        return;
    snprintf(g->path_status, sizeof(g->path_status), "%s", v->verdict_status);
    if (v->verdict_status[0])
        tui_view_message(v, TUI_STYLE_STATUS, "computing the critical path with the verdict: %s",
                         v->verdict_status);
    else /* (not started yet) */
        tui_view_message(v, TUI_STYLE_STATUS, "computing the critical path with the verdict...");
}

/* Compute and show the path of launch cmdq (find: of the launch at cursor) on a worker
 * (tui_gantt_path_work shows it when it is ready); live, over the model held still meanwhile
 * (tui/panes/task.h). Finding the launch, its ops and its name are the worker's too: at ten
 * million ops they take a tenth of a second. While the verdict of a saved trace is under way
 * (computed ahead from the first frame), it computes the paths of the launches, and of the
 * run of a trace without any: C waits for it, its run raised to the user's, rather than
 * computing the same path beside it (the verdict would give way to it, and v wait twice). */
static void show_path(struct tui_gantt *g, struct tui_view *v, int32_t cmdq, bool find,
                      uint64_t cursor)
{
    if (!g->path_task) {
        g->path_task = tui_task_new();
        if (v->live)
            tui_task_set_live(g->path_task, path_discard);
    }
    if (tui_task_running(g->path_task) || g->path_wait) {
        tui_view_message(v, TUI_STYLE_STATUS, "the critical path is still being computed");
        return;
    }
    tui_gantt_path_free(g, v);
    free(g->path_next_key);
    g->path_next_key = NULL;
    g->path_was_kept = false;
    g->path_cmdq = cmdq;
    g->path_find = find;
    g->path_live = v->live;
    g->path_cursor = cursor;
    /* while the verdict of a saved trace is under way: the path of a launch of a few ops (the
     * host's first messages, where the first frame's cursor is) computed at once, that of one
     * of many (or of the launch at the cursor, which only a split finds) taken from the
     * verdict once it comes */
    g->path_small = !v->live && !v->verdict && v->verdict_pending && !find;
    if (!v->live && !v->verdict && v->verdict_pending && find) {
        g->path_wait = true;
        v->verdict_wanted = true;
        say_waiting(g, v, true);
        return;
    }
    g->path_judged = path_judged(g, v, cmdq, find, cursor);
    if (!g->path_judged)
        g->path_next = sim_xcalloc(1, sizeof(*g->path_next));
    if (!g->path_judged)
        g->path_next_name[0] = '\0';
    g->path_status[0] = '\0';
    atomic_store(&g->path_named, g->path_judged);
    tui_task_start(g->path_task, path_run, g, true);
    if (tui_task_take_done(g->path_task))
        path_show(g, v);
    else
        tui_gantt_path_work(g, v);
}

bool tui_gantt_path_work(struct tui_gantt *g, struct tui_view *v)
{
    if (g->path_wait) { /* the verdict's path, once it is taken (or computed, if none comes) */
        if (!v->verdict && v->verdict_pending) {
            v->verdict_wanted = true;
            say_waiting(g, v, false);
            return true;
        }
        g->path_wait = false;
        show_path(g, v, g->path_cmdq, g->path_find, g->path_cursor);
        return true;
    }
    if (!g->path_task)
        return false;
    if (tui_task_take_done(g->path_task)) {
        path_show(g, v);
        return true; /* drawn once more with the path */
    }
    if (!tui_task_running(g->path_task))
        return false;
    char st[96], key[100];
    tui_task_status(g->path_task, st, sizeof(st));
    /* the launch's name once the worker has found it (it writes it no more) */
    bool named = atomic_load_explicit(&g->path_named, memory_order_acquire) != 0;
    snprintf(key, sizeof(key), "%d%s", named, st);
    if (strcmp(key, g->path_status) != 0) { /* the status line follows, once a step */
        snprintf(g->path_status, sizeof(g->path_status), "%s", key);
        if (named)
            tui_view_message(v, TUI_STYLE_STATUS, "computing the critical path of %s: %s",
                             g->path_next_name, st);
        else
            tui_view_message(v, TUI_STYLE_STATUS, "computing the critical path: %s", st);
    }
    return true;
}

void tui_gantt_path_stop(struct tui_gantt *g)
{
    tui_task_free(g->path_task);
    g->path_task = NULL;
    path_drop(g->path_next, g->path_judged);
    g->path_next = NULL;
    free(g->path_next_spans);
    g->path_next_spans = NULL;
    free((uint64_t *)g->path_in.events);
    g->path_in.events = NULL;
    kept_free(g);
}

enum tui_result tui_gantt_path_toggle(struct tui_gantt *g, struct tui_view *v)
{
    if (g->path) {
        tui_gantt_path_free(g, v);
        tui_view_message(v, TUI_STYLE_STATUS, "critical path hidden");
        return TUI_RES_REDRAW;
    }
    /* the launch the user means: that of the selected op, else of the op under the cursor,
     * else the one whose ops span the cursor (found on the worker), else the run */
    uint64_t f = tui_view_focus_event(v);
    int32_t cmdq = f != TUI_NO_EVENT ? trace_model_event(g->m, f)->cmdq_id : TRACE_NO_CMDQ;
    show_path(g, v, cmdq, cmdq == TRACE_NO_CMDQ, v->cursor);
    return TUI_RES_REDRAW;
}

enum tui_result tui_gantt_path_step(struct tui_gantt *g, struct tui_view *v, int dir)
{
    if (!g->path) {
        tui_view_message(v, TUI_STYLE_STATUS, "no critical path shown: C shows it");
        return TUI_RES_REDRAW;
    }
    size_t k = v->path == g->path ? v->path_step : 0;
    if (dir > 0 && k + 1 >= g->path->n) {
        tui_view_message(v, TUI_STYLE_STATUS, "the last op of the path (%zu of %zu)", k + 1,
                         g->path->n);
        return TUI_RES_REDRAW;
    }
    if (dir < 0 && k == 0) {
        tui_view_message(v, TUI_STYLE_STATUS, "the first op of the path");
        return TUI_RES_REDRAW;
    }
    go_to(g, v, dir > 0 ? k + 1 : k - 1);
    return TUI_RES_REDRAW;
}

bool tui_gantt_path_sync(struct tui_gantt *g, struct tui_view *v)
{
    if (!v->path_requested)
        return false;
    v->path_requested = false;
    show_path(g, v, v->path_request, false, v->cursor);
    return true;
}
