/*
 * The Gantt's search (see gantt.h): the next or previous op whose op name or component
 * matches a pattern, in the order of (start, index) from the selected op. Whether a string
 * matches is cached by its id, so a scan costs a look-up per op; at ten million ops it still
 * takes tens of milliseconds, and many times that live, so the app's search (/, n, N) scans
 * on a worker (tui/panes/task.h; live, over the model held still), its progress in the
 * status line, and selects the op it found once it is done.
 */
#include "tui/gantt/gantt_int.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A search: what it looks for and from where (taken when it starts: the main loop may move
 * the selection and change the filters while it runs), and what it found. */
struct gantt_search {
    const struct trace_model *m;
    char *pattern; /* owned: as typed */
    int dir;
    int filter_engine, filter_kind; /* the view's filters */
    bool has_sel;                   /* from the selected op ci, else from the cursor cs */
    uint64_t cs, ci;
    bool *track_match; /* owned: per track, whether its name matches */
    /* the result */
    uint64_t count, best;
    bool wrapped;
    /* the app's search: more n (+1) or N (-1) pressed while it ran, to walk once it is done */
    int more;
    bool cancelled;  /* a live search dropped because the model was to change */
    char status[96]; /* its progress last said in the status line */
};

/* Whether the string with id s matches g's pattern, cached. */
static bool str_matches(struct tui_gantt *g, uint32_t s)
{
    if (!g->match_vals || g->match_len * 2 >= g->match_cap) {
        size_t cap = g->match_cap ? g->match_cap * 2 : 1024;
        uint32_t *keys = sim_xcalloc(cap, sizeof(*keys));
        uint8_t *vals = sim_xcalloc(cap, 1);
        for (size_t i = 0; g->match_vals && i < g->match_cap; i++) {
            if (!g->match_vals[i])
                continue;
            size_t h = (g->match_keys[i] * 2654435761u) & (cap - 1);
            while (vals[h])
                h = (h + 1) & (cap - 1);
            keys[h] = g->match_keys[i], vals[h] = g->match_vals[i];
        }
        free(g->match_keys), free(g->match_vals);
        g->match_keys = keys, g->match_vals = vals, g->match_cap = cap;
    }
    size_t h = (s * 2654435761u) & (g->match_cap - 1);
    while (g->match_vals[h]) {
        if (g->match_keys[h] == s)
            return g->match_vals[h] == 2;
        h = (h + 1) & (g->match_cap - 1);
    }
    bool m = strcasestr(trace_model_str(g->m, s), g->pattern) != NULL;
    g->match_keys[h] = s, g->match_vals[h] = m ? 2 : 1;
    g->match_len++;
    return m;
}

/* A search of pattern from what v selects (or its cursor): its input taken now, the match
 * cache set to pattern. */
static struct gantt_search *search_new(struct tui_gantt *g, const struct tui_view *v,
                                       const char *pattern, int dir)
{
    if (!g->pattern || strcmp(g->pattern, pattern) != 0) {
        free(g->pattern);
        g->pattern = sim_xstrdup(pattern);
        g->match_len = 0;
        if (g->match_vals)
            memset(g->match_vals, 0, g->match_cap);
    }
    struct gantt_search *s = sim_xcalloc(1, sizeof(*s));
    s->m = g->m;
    s->pattern = sim_xstrdup(pattern);
    s->dir = dir;
    s->filter_engine = v->filter_engine;
    s->filter_kind = v->filter_kind;
    size_t nt = trace_model_track_count(g->m);
    s->track_match = sim_xcalloc(nt + 1, sizeof(bool));
    for (uint32_t t = 0; t < nt; t++)
        s->track_match[t] = str_matches(g, trace_model_track_get(g->m, t)->name);
    /* order: (start, index); from the selected op, else from the cursor (an op starting
     * at the cursor counts as after it) */
    s->has_sel = v->selected != TUI_NO_EVENT && v->selected < trace_model_event_count(g->m);
    s->cs = s->has_sel ? trace_model_event(g->m, v->selected)->start : v->cursor;
    s->ci = s->has_sel ? v->selected : 0;
    s->best = TUI_NO_EVENT;
    return s;
}

static void search_free(struct gantt_search *s)
{
    if (!s)
        return;
    free(s->pattern);
    free(s->track_match);
    free(s);
}

/* The scan: every op of the model in order. Reads the model and g's match cache only (on a
 * worker, nothing else of g). Returns false when p cancelled it. */
static bool search_scan(struct tui_gantt *g, struct gantt_search *s, struct trace_progress *p)
{
    const struct trace_model *m = s->m;
    uint64_t n = trace_model_event_count(m), count = 0;
    uint64_t best = TUI_NO_EVENT, bs = 0, wrap = TUI_NO_EVENT, ws = 0;
    trace_progress_step(p, "searching the ops", n);
    for (uint64_t i = 0; i < n; i++) {
        if (i % TRACE_PROGRESS_EVERY == 0 && trace_progress_at(p, i))
            return false;
        const struct trace_event *e = trace_model_event(m, i);
        if (!(s->track_match[e->track] || str_matches(g, e->op)))
            continue;
        if (s->filter_kind >= 0 && e->op_kind != s->filter_kind)
            continue;
        if (s->filter_engine >= 0 &&
            (int)trace_model_track_get(m, e->track)->engine != s->filter_engine)
            continue;
        count++;
        uint64_t st = e->start;
        bool after = st > s->cs || (st == s->cs && (!s->has_sel || i > s->ci));
        bool before = st < s->cs || (s->has_sel && st == s->cs && i < s->ci);
        if (s->dir > 0) {
            if (after && (best == TUI_NO_EVENT || st < bs))
                best = i, bs = st;
            if (wrap == TUI_NO_EVENT || st < ws)
                wrap = i, ws = st;
        } else {
            if (before && (best == TUI_NO_EVENT || st >= bs))
                best = i, bs = st;
            if (wrap == TUI_NO_EVENT || st >= ws)
                wrap = i, ws = st;
        }
    }
    s->count = count;
    s->wrapped = count && best == TUI_NO_EVENT;
    s->best = best == TUI_NO_EVENT ? wrap : best;
    trace_progress_at(p, n);
    return true;
}

/* Select what s found (when it found anything). Returns its count. */
static uint64_t search_select(struct tui_gantt *g, struct tui_view *v, const struct gantt_search *s)
{
    if (!s->count || s->best >= trace_model_event_count(g->m))
        return 0;
    tui_gantt_select_event(g, v, s->best);
    tui_gantt_update_follow(g);
    return s->count;
}

uint64_t tui_gantt_search(struct tui_gantt *g, struct tui_view *v, const char *pattern, int dir,
                          bool *wrapped)
{
    *wrapped = false;
    if (g->search_task && tui_task_running(g->search_task))
        return 0; /* the worker reads the match cache */
    struct gantt_search *s = search_new(g, v, pattern, dir);
    search_scan(g, s, NULL);
    uint64_t n = search_select(g, v, s);
    *wrapped = s->wrapped;
    search_free(s);
    return n;
}

/* ---- the app's search, on a worker ---------------------------------------------------------- */

static void search_run(void *arg, struct trace_progress *p)
{
    struct tui_gantt *g = arg;
    search_scan(g, g->search, p);
}

/* A live search cancelled before it was done (tui_task_release): said once it is seen. */
static void search_discard(void *arg)
{
    struct tui_gantt *g = arg;
    if (g->search)
        g->search->cancelled = true;
}

/* The status line after a search of pattern found count ops. */
static void search_say(struct tui_view *v, const char *pattern, uint64_t count, bool wrapped,
                       int dir)
{
    char pat[300];
    sim_escape(pattern, strlen(pattern), pat, sizeof(pat));
    if (count == 0) {
        tui_view_message(v, TUI_STYLE_ERROR, "no match for '%s'", pat);
        return;
    }
    tui_view_message(v, TUI_STYLE_STATUS, "search '%s': %llu match%s%s (n next, N previous)", pat,
                     (unsigned long long)count, count == 1 ? "" : "es",
                     wrapped ? dir > 0 ? ", wrapped to the start" : ", wrapped to the end" : "");
}

/* tui_gantt_search_start, with more presses of n (> 0) or N (< 0) to walk once it is done:
 * set before the run starts, as a run that ends at once is taken before this returns. */
static void search_start(struct tui_gantt *g, struct tui_view *v, const char *pattern, int dir,
                         int more)
{
    if (!g->search_task) {
        g->search_task = tui_task_new();
        if (v->live)
            tui_task_set_live(g->search_task, search_discard);
    }
    if (tui_task_running(g->search_task)) {
        if (strcmp(g->search->pattern, pattern) == 0) { /* n or N again: walked once done */
            g->search->more += dir > 0 ? 1 : -1;
            return;
        }
        tui_task_free(g->search_task); /* another pattern: this one is dropped */
        g->search_task = tui_task_new();
        if (v->live)
            tui_task_set_live(g->search_task, search_discard);
    }
    search_free(g->search);
    g->search = search_new(g, v, pattern, dir);
    g->search->status[0] = '\0';
    g->search->more = more;
    tui_task_start(g->search_task, search_run, g, true);
    tui_gantt_search_work(g, v);
}

void tui_gantt_search_start(struct tui_gantt *g, struct tui_view *v, const char *pattern, int dir)
{
    search_start(g, v, pattern, dir, 0);
}

bool tui_gantt_search_work(struct tui_gantt *g, struct tui_view *v)
{
    struct gantt_search *s = g->search;
    if (!g->search_task || !s)
        return false;
    bool running = tui_task_running(g->search_task); /* before the take: it may end between */
    if (tui_task_take_done(g->search_task)) {
        uint64_t n = search_select(g, v, s);
        search_say(v, s->pattern, n, s->wrapped, s->dir);
        int more = s->more;
        if (n && more) { /* the n or N pressed meanwhile, one at a time */
            char *pattern = sim_xstrdup(s->pattern);
            search_start(g, v, pattern, more > 0 ? 1 : -1, more > 0 ? more - 1 : more + 1);
            free(pattern);
        } else {
            search_free(g->search);
            g->search = NULL;
        }
        return true; /* drawn once more with the op selected */
    }
    if (!running) {
        if (s->cancelled) {
            char pat[300];
            sim_escape(s->pattern, strlen(s->pattern), pat, sizeof(pat));
            tui_view_message(v, TUI_STYLE_STATUS,
                             "search '%s' stopped: the run moved on (n searches again)", pat);
        }
        search_free(g->search);
        g->search = NULL;
        return s != NULL;
    }
    char st[96];
    tui_task_status(g->search_task, st, sizeof(st));
    if (strcmp(st, s->status) != 0) { /* the status line follows, once a step */
        snprintf(s->status, sizeof(s->status), "%s", st);
        char pat[300];
        sim_escape(s->pattern, strlen(s->pattern), pat, sizeof(pat));
        tui_view_message(v, TUI_STYLE_STATUS, "search '%s': %s (any key works meanwhile)", pat, st);
    }
    return true;
}

bool tui_gantt_searching(const struct tui_gantt *g)
{
    return g->search_task && tui_task_running(g->search_task);
}

void tui_gantt_search_free(struct tui_gantt *g)
{
    tui_task_free(g->search_task);
    g->search_task = NULL;
    search_free(g->search);
    g->search = NULL;
    free(g->pattern);
    free(g->match_keys);
    free(g->match_vals);
}
