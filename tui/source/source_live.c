/*
 * The live source: the simulation runs in the TUI's process, one engine event at a time
 * (sim_engine_step), so a pause, a breakpoint or the end of a step always falls between
 * two events. Each tick runs events for at most ~10 ms (or as many as the chosen speed
 * allows), then brings the trace model up to date (trace_live_sync); the app redraws.
 * Breakpoints on op starts are checked by an op log observer, marker breakpoints after
 * each event.
 */
#include "tui/source/live_state.h"

#include "sim/data/yaml.h"
#include "sim/util/escape.h"
#include "sim/host/host.h"
#include "sim/host/run.h"
#include "sim/util/srcsite.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/srcstep.h"
#include "trace/model/budget.h"
#include "trace/model/format.h"
#include "trace/live/live.h"
#include "tui/source/ckpt.h"
#include "tui/source/linebp.h"
#include "trace/live/watch.h"
#include "tui/source/memview.h"
#include "tui/term/view.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    TICK_NS = 10 * 1000 * 1000,       /* most a tick runs events for */
    RATE_NS = 500 * 1000 * 1000,      /* window of the events-per-second measure */
    CHECK_EVERY = 8,                  /* events between two looks at the clock (some take ms) */
    PACE_MAX_WAIT_MS = 250,           /* a slowed run still looks at input this often */
    CKPT_WORK_NS = 250 * 1000 * 1000, /* running between two checkpoints, at most */
    CKPT_SHARE = 200,                 /* ... or this many times what the last fork took (the
                                         pages it then copies cost about ten times more) */
    CKPT_SPREAD = 16,                 /* ... or this fraction of the running so far */
    CKPT_MIN_EVENTS = 4096,           /* and at least this many events */
    CKPT_MAX_EVENTS = 1 << 20,        /* events run by hand (steps) between two, at most */
    CATCH_UP_SLICE = 4096,            /* entries kept for the model applied between two looks
                                         at the clock */
};

/* The steps of the speed keys, events per second; past the last: as fast as possible. A
 * run may start at any other speed (run --speed): the keys go to the next step from it. */
static const uint64_t speeds[] = {1, 10, 100, 1000, 10000, 100000};
enum { NSPEEDS = sizeof(speeds) / sizeof(speeds[0]) };

static struct source_live *L_of(struct tui_source *s)
{
    return (struct source_live *)s;
}

static void notice(struct source_live *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void notice(struct source_live *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->notice, sizeof(L->notice), fmt, ap);
    va_end(ap);
    L->notice_rev++;
}

static uint64_t now_cycles(const struct source_live *L)
{
    return trace_model_now(trace_live_model(L->feed));
}

/* ---- breakpoints ------------------------------------------------------------------------ */

static bool matches(const char *pattern, const char *s)
{
    return s && fnmatch(pattern, s, 0) == 0;
}

/* Remember the event running now as one that started or ended an op. */
static void mark_change(struct source_live *L, uint64_t record, bool started)
{
    uint64_t ev = sim_engine_events(L->eng);
    struct opmark *last = L->nmarks ? &L->marks[(L->nmarks - 1) % MARKS] : NULL;
    if (!last || last->event != ev)
        last = &L->marks[L->nmarks++ % MARKS];
    *last = (struct opmark){ev, record, started};
}

/* Remember a breakpoint hit by the event running now (hit_text says which). */
static void mark_hit(struct source_live *L, uint64_t record)
{
    uint64_t ev = sim_engine_events(L->eng);
    struct hitmark *last = L->nhits ? &L->hitm[(L->nhits - 1) % HITS] : NULL;
    if (last && last->event == ev)
        return; /* the first hit of an event is the one shown */
    struct hitmark *h = &L->hitm[L->nhits++ % HITS];
    h->event = ev;
    h->record = record;
    snprintf(h->text, sizeof(h->text), "%s", L->hit_text);
}

/* Whether rec is an op of the PE a step by line follows, from another line than it was at. */
static bool other_line(const struct source_live *L, const struct sim_op_record *rec)
{
    const struct sim_srcsite *site = sim_srcsite_get(rec->note.site);
    if (!site)
        return false;
    size_t n = strlen(L->line_pe);
    const char *c = rec->component_id;
    if (n ? strncmp(c, L->line_pe, n) != 0 || c[n] != '.' : !strchr(c, '.'))
        return false;
    return (uint32_t)site->line != L->line_no ||
           strcmp(sim_srcsite_basename(site->file), L->line_file) != 0;
}

static void on_start(void *ctx, const struct sim_op_record *rec)
{
    struct source_live *L = ctx;
    L->changed_record = rec->note.id;
    L->changed_started = true;
    mark_change(L, rec->note.id, true);
    if (L->goal == GOAL_STEP_LINE && !L->line_hit && !L->silent && other_line(L, rec)) {
        L->line_hit = true;
        L->line_record = rec->note.id;
        sim_engine_stop(L->eng);
    }
    for (size_t i = 0; i < L->nbp && !L->hit; i++) {
        struct bp *b = &L->bps[i];
        bool hit = (b->kind == TUI_BREAK_COMPONENT && matches(b->pattern, rec->component_id)) ||
                   (b->kind == TUI_BREAK_OP && matches(b->pattern, rec->op_name)) ||
                   (b->kind == TUI_BREAK_LINE && b->line &&
                    tui_linebp_hits(b->line, rec->note.site, rec->component_id));
        if (!hit)
            continue;
        L->hit = true;
        L->hit_record = rec->note.id;
        char comp[96], op[64];
        sim_escape(rec->component_id, strlen(rec->component_id), comp, sizeof(comp));
        sim_escape(rec->op_name, strlen(rec->op_name), op, sizeof(op));
        if (b->kind == TUI_BREAK_LINE) {
            char src[64];
            sim_escape(b->line->file, strlen(b->line->file), src, sizeof(src));
            snprintf(L->hit_text, sizeof(L->hit_text),
                     "breakpoint %u: %.63s:%u issues %.40s on %.80s", b->number, src,
                     (unsigned)b->line->line, op, comp);
        } else {
            snprintf(L->hit_text, sizeof(L->hit_text), "breakpoint %u: %s starts on %s", b->number,
                     op, comp);
        }
        mark_hit(L, rec->note.id);
        if (L->silent) {
            L->hit = false; /* going back: remembered, not stopped at */
            continue;
        }
        b->hits++;
        sim_engine_stop(L->eng); /* a batch ends right after this event */
    }
}

static void on_end(void *ctx, const struct sim_op_record *rec)
{
    struct source_live *L = ctx;
    L->changed_record = rec->note.id;
    L->changed_started = false;
    mark_change(L, rec->note.id, false);
}

/* Markers raised by the last event: a marker breakpoint? */
static void check_markers(struct source_live *L)
{
    size_t n = sim_chip_marker_count(L->chip);
    for (; L->markers_seen < n; L->markers_seen++) {
        const struct sim_chip_marker *k = sim_chip_marker(L->chip, L->markers_seen);
        for (size_t i = 0; i < L->nbp && !L->hit; i++) {
            struct bp *b = &L->bps[i];
            if (b->kind != TUI_BREAK_MARKER || !matches(b->pattern, k->name))
                continue;
            L->hit = true;
            L->hit_record = UINT64_MAX;
            char name[96], comp[96];
            sim_escape(k->name, strlen(k->name), name, sizeof(name));
            sim_escape(k->component ? k->component : "", k->component ? strlen(k->component) : 0,
                       comp, sizeof(comp));
            snprintf(L->hit_text, sizeof(L->hit_text), "breakpoint %u: marker %s on %s", b->number,
                     name, comp);
            mark_hit(L, UINT64_MAX);
            if (L->silent) {
                L->hit = false;
                continue;
            }
            b->hits++;
        }
    }
}

/* After an event: a METRIC breakpoint's condition that came to hold? */
static void check_watch(struct source_live *L)
{
    int id;
    uint64_t ev;
    char text[200];
    if (!L->watch || L->hit || !trace_watch_check(L->watch, &id, &ev, text, sizeof(text)))
        return;
    for (size_t i = 0; i < L->nbp; i++) {
        struct bp *b = &L->bps[i];
        if (b->kind != TUI_BREAK_METRIC || b->id != id)
            continue;
        L->hit = true;
        L->hit_record = UINT64_MAX;
        L->hit_event = ev;
        snprintf(L->hit_text, sizeof(L->hit_text), "breakpoint %u: %s", b->number, text);
        mark_hit(L, UINT64_MAX);
        if (L->silent) { /* going back: remembered, not stopped at */
            L->hit = false;
            L->hit_event = UINT64_MAX;
            return;
        }
        b->hits++;
        return;
    }
}

/* Whether any op the model has seen so far has a name pattern matches; the closest
 * name seen into best (may stay "") when none does. */
static bool op_seen(const struct source_live *L, const char *pattern, char *best, size_t size)
{
    /* the distinct op names first (by their interned ids), then the pattern against each */
    const struct trace_model *m = trace_live_model(L->feed);
    uint32_t n = trace_model_str_count(m);
    bool *used = sim_xcalloc((size_t)n + 1, sizeof(*used));
    for (uint64_t e = 0, ne = trace_model_event_count(m); e < ne; e++) {
        uint32_t op = trace_model_event(m, e)->op;
        if (op < n)
            used[op] = true;
    }
    const char **names = sim_xcalloc((size_t)n + 1, sizeof(*names));
    size_t k = 0;
    bool seen = false;
    for (uint32_t id = 0; id < n && !seen; id++)
        if (used[id]) {
            names[k++] = trace_model_str(m, id);
            seen = matches(pattern, names[k - 1]);
        }
    const char *c = seen ? NULL : sim_yaml_closest(pattern, names);
    snprintf(best, size, "%s", c ? c : "");
    free(names);
    free(used);
    return seen;
}

/*
 * Refuse a breakpoint that cannot match, with the reason: a component pattern that no
 * component of this chip matches, an op name with a space (no op has one), or, once the
 * run is over, an op name no op had. While the run goes, an op name not seen yet may still
 * come: it is kept.
 */
static int check_pattern(const struct source_live *L, enum tui_break_kind kind, const char *pattern,
                         struct diag *d)
{
    char pat[128];
    sim_escape(pattern, strlen(pattern), pat, sizeof(pat));
    if (kind == TUI_BREAK_COMPONENT) {
        for (size_t i = 0, n = sim_chip_component_count(L->chip); i < n; i++)
            if (matches(pattern, sim_chip_component(L->chip, (int)i)->id))
                return 0;
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "no component of this chip matches '%s' (components are named like "
                        "sip0.cube0.pe0.pe_dma; * and ? match any)",
                        pat);
    }
    if (kind == TUI_BREAK_LINE) {
        struct tui_linebp bp;
        int rc = tui_linebp_parse(pattern, &bp, d);
        return rc < 0 ? rc
                      : tui_linebp_check(&bp, trace_live_model(L->feed), sim_run_over(L->run), d);
    }
    if (kind != TUI_BREAK_OP)
        return 0;
    if (strpbrk(pattern, " \t"))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "'%s' cannot match: op names have no spaces (o NAME, c GLOB, m NAME or a "
                        "condition such as hbm.util > 0.9)",
                        pat);
    char best[64];
    if (sim_run_over(L->run) && !op_seen(L, pattern, best, sizeof(best)))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "the run is over and no op was named '%s'%s%s%s", pat,
                        best[0] ? " (did you mean '" : "", best, best[0] ? "'?)" : "");
    return 0;
}

static int live_break_add(struct tui_source *s, enum tui_break_kind kind, const char *pattern,
                          struct diag *d)
{
    struct source_live *L = L_of(s);
    while (pattern && (*pattern == ' ' || *pattern == '\t'))
        pattern++;
    if (!pattern || !*pattern)
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "a breakpoint needs a pattern");
    struct bp b = {kind, NULL, 0, -1, NULL, 0};
    int rc = check_pattern(L, kind, pattern, d);
    if (rc < 0)
        return rc;
    if (kind == TUI_BREAK_METRIC) {
        struct trace_watch_cond c;
        rc = trace_watch_parse(pattern, clock_ghz(L), &c, d);
        if (rc < 0)
            return rc;
        if (!L->watch)
            L->watch = trace_watch_new(L->feed);
        b.id = L->next_watch_id++;
        trace_watch_add(L->watch, b.id, &c);
        b.pattern = sim_xstrdup(c.text);
    } else {
        b.pattern = sim_xstrdup(pattern);
        b.line = tui_live_line_of(kind, pattern);
    }
    b.number = ++L->next_bp_number;
    L->bps = sim_xreallocarray(L->bps, L->nbp + 1, sizeof(*L->bps));
    L->bps[L->nbp++] = b;
    return 0;
}

static size_t live_break_count(struct tui_source *s)
{
    return L_of(s)->nbp;
}

static void live_break_describe(struct tui_source *s, size_t i, char *buf, size_t size)
{
    struct source_live *L = L_of(s);
    if (i >= L->nbp) {
        snprintf(buf, size, "?");
        return;
    }
    const struct bp *b = &L->bps[i];
    static const char *const what[] = {"an op starts on", "op", "marker", "when", "line"};
    char pat[128];
    sim_escape(b->pattern, strlen(b->pattern), pat, sizeof(pat));
    if (b->kind == TUI_BREAK_METRIC) {
        snprintf(buf, size, "%u: when %s, hit %" PRIu64 " time%s", b->number, pat, b->hits,
                 b->hits == 1 ? "" : "s");
        return;
    }
    snprintf(buf, size, "%u: %s %s%s, hit %" PRIu64 " time%s", b->number, what[b->kind], pat,
             b->kind == TUI_BREAK_OP       ? " starts"
             : b->kind == TUI_BREAK_MARKER ? " is raised"
             : b->kind == TUI_BREAK_LINE   ? " issues an op"
                                           : "",
             b->hits, b->hits == 1 ? "" : "s");
}

static void live_break_remove(struct tui_source *s, size_t i)
{
    struct source_live *L = L_of(s);
    if (i >= L->nbp)
        return;
    if (L->bps[i].kind == TUI_BREAK_METRIC)
        trace_watch_remove(L->watch, L->bps[i].id);
    free(L->bps[i].pattern);
    free(L->bps[i].line);
    memmove(&L->bps[i], &L->bps[i + 1], (L->nbp - i - 1) * sizeof(*L->bps));
    L->nbp--;
}

/* ---- running ------------------------------------------------------------------------------ */

static const char *kind_text(enum sim_event_kind k)
{
    switch (k) {
    case SIM_EV_START: return "process starts";
    case SIM_EV_TIMEOUT: return "delay elapsed";
    case SIM_EV_EVENT: return "event fired";
    case SIM_EV_REQUEST: return "request granted";
    case SIM_EV_RELEASE: return "released";
    case SIM_EV_PUT: return "put";
    case SIM_EV_GET: return "got";
    case SIM_EV_TRANSFER: return "transfer done";
    case SIM_EV_EXIT: return "process ends";
    }
    return "?";
}

/* "ev 12 at 1.234 us: transfer done sip0.io_cpu->host (host)" */
static void describe_last(struct source_live *L)
{
    const struct sim_step_info *i = &L->last;
    char t[32], what[112], proc[96];
    tui_fmt_ns(t, sizeof(t), sim_ticks_to_ns(i->time));
    sim_escape(i->what, strlen(i->what), what, sizeof(what));
    sim_escape(i->proc, strlen(i->proc), proc, sizeof(proc));
    snprintf(L->last_text, sizeof(L->last_text), "ev %" PRIu64 " at %s: %s%s%s%s%s%s",
             sim_engine_events(L->eng), t, kind_text(i->kind), what[0] ? " " : "", what,
             proc[0] ? " (" : "", proc, proc[0] ? ")" : "");
}

/* Run one engine event. False when there was none (the simulation is over). */
static bool step_one(struct source_live *L)
{
    L->hit = false;
    L->hit_event = UINT64_MAX;
    struct sim_step_info info;
    if (sim_engine_step(L->eng, &info) != 1)
        return false;
    L->last = info;
    L->have_last = true;
    check_markers(L);
    check_watch(L);
    return true;
}

/* The simulation ran out of events: finish the trace file, verify. */
static void finished(struct source_live *L)
{
    if (L->state == ST_FINISHED)
        return;
    L->state = ST_FINISHED;
    trace_live_sync(L->feed);
    struct sim_run_summary sum;
    sim_run_summarize(L->run, &sum);
    char done[160];
    snprintf(done, sizeof(done), "finished: %zu of %zu requests answered, %zu failed%s",
             sum.completed, sum.requests, sum.failed,
             sum.host_finished ? "" : " (the program did not finish)");
    sim_run_summary_fini(&sum);
    if (L->verify && !L->verified) {
        L->verified = true;
        int rc = L->verify(L->run, L->verify_text, sizeof(L->verify_text), L->verify_ctx);
        if (rc < 0 && !L->verify_text[0])
            snprintf(L->verify_text, sizeof(L->verify_text), "verify: could not run phase 2");
    }
    const char *path = trace_live_path(L->feed);
    if (path && !L->trace_done) {
        L->trace_done = true;
        char p[160];
        sim_escape(path, strlen(path), p, sizeof(p));
        L->trace_rc = trace_live_finish(L->feed, true, &L->trace_diag);
        if (L->trace_rc < 0) {
            char line[400];
            notice(L, "%s; the trace could not be written: %s", done,
                   diag_format(&L->trace_diag, line, sizeof(line)));
            return;
        }
        notice(L, "%s; trace written to %s", done, p);
        return;
    }
    notice(L, "%s", done);
}

static void pause_with(struct source_live *L, const char *why)
{
    L->state = ST_PAUSED;
    L->goal = GOAL_END;
    if (L->have_last)
        describe_last(L);
    if (why)
        notice(L, "%s", why);
}

static void start_running(struct source_live *L, enum goal g)
{
    if (L->state == ST_FINISHED)
        return;
    L->fired_text[0] = '\0';
    L->state = ST_RUNNING;
    L->goal = g;
    L->pace_t0 = tui_now_ns();
    L->pace_ev0 = sim_engine_events(L->eng);
    L->rate_t0 = L->pace_t0;
    L->rate_ev0 = L->pace_ev0;
}

static void notice_line(struct source_live *L, uint64_t record);

/* After an event that hit a breakpoint or ended a step-op: pause and show the op. */
static bool check_stop(struct source_live *L)
{
    if (L->hit) {
        uint64_t ev = L->hit_record != UINT64_MAX
                          ? trace_live_event_of_record(L->feed, L->hit_record)
                          : L->hit_event;
        L->focus = ev;
        snprintf(L->fired_text, sizeof(L->fired_text), "%s", L->hit_text);
        pause_with(L, L->hit_text);
        return true;
    }
    if (L->goal == GOAL_STEP_LINE && L->line_hit) {
        L->line_hit = false;
        pause_with(L, NULL);
        notice_line(L, L->line_record);
        return true;
    }
    if (L->goal == GOAL_STEP_OP && trace_live_op_changes(L->feed) != L->goal_changes) {
        L->focus = trace_live_event_of_record(L->feed, L->changed_record);
        pause_with(L, NULL);
        const struct trace_model *m = trace_live_model(L->feed);
        if (L->focus != UINT64_MAX) {
            const struct trace_event *e = trace_model_event(m, L->focus);
            uint32_t comp = trace_model_track_get(m, e->track)->name;
            char op[64], c[96];
            sim_escape(trace_model_str(m, e->op), trace_model_str_len(m, e->op), op, sizeof(op));
            sim_escape(trace_model_str(m, comp), trace_model_str_len(m, comp), c, sizeof(c));
            notice(L, "op %s: %s on %s", L->changed_started ? "starts" : "ends", op, c);
        }
        return true;
    }
    return false;
}

/* The next step of the speed keys above speed (0, as fast as possible, stays). */
static uint64_t faster(uint64_t speed)
{
    for (size_t i = 0; speed && i < NSPEEDS; i++)
        if (speeds[i] > speed)
            return speeds[i];
    return 0;
}

/* The next step below speed; the slowest stays. */
static uint64_t slower(uint64_t speed)
{
    for (size_t i = NSPEEDS; i-- > 0;)
        if (!speed || speeds[i] < speed)
            return speeds[i];
    return speed;
}

/* Events the chosen speed allows now (UINT64_MAX: no limit). */
static uint64_t allowed(const struct source_live *L, uint64_t t)
{
    uint64_t rate = L->speed;
    if (!rate)
        return UINT64_MAX;
    double due = (double)(t - L->pace_t0) * 1e-9 * (double)rate;
    uint64_t done = sim_engine_events(L->eng) - L->pace_ev0;
    /* at least one event when a stretch starts, so a step of speed 1 shows at once */
    uint64_t may = (uint64_t)floor(due) + 1;
    return may > done ? may - done : 0;
}

static void measure(struct source_live *L, uint64_t t)
{
    if (t - L->rate_t0 < RATE_NS)
        return;
    uint64_t ev = sim_engine_events(L->eng);
    L->eps = (double)(ev - L->rate_ev0) / ((double)(t - L->rate_t0) * 1e-9);
    L->rate_t0 = t;
    L->rate_ev0 = ev;
}

/* Breakpoints that need a look after every event (markers, conditions on metrics). */
static bool has_marker_breaks(const struct source_live *L)
{
    for (size_t i = 0; i < L->nbp; i++)
        if (L->bps[i].kind == TUI_BREAK_MARKER || L->bps[i].kind == TUI_BREAK_METRIC)
            return true;
    return false;
}

/*
 * Run up to may events in batches of the engine, as a headless run does, looking at the
 * clock between batches: the per-event checks are not needed when running to the end
 * with no marker breakpoint (an op breakpoint stops the engine from the op log's observer,
 * right after the event that started the op).
 */
static void run_batches(struct source_live *L, uint64_t may, uint64_t t0, uint64_t budget_ns)
{
    enum { BATCH = 256 };
    uint64_t done = 0;
    while (done < may) {
        uint64_t want = may - done < BATCH ? may - done : BATCH;
        L->hit = false;
        uint64_t ran = sim_engine_run_last(L->eng, SIM_RUN_EVENTS, want, &L->last);
        if (ran)
            L->have_last = true;
        done += ran;
        check_markers(L); /* keeps count of the markers seen */
        if (ran < want && !L->hit) {
            if (L->ahead)
                L->end_ahead = true; /* finished once the model has caught up */
            else
                finished(L);
            return;
        }
        if (check_stop(L) || tui_now_ns() - t0 > budget_ns)
            return;
    }
}

/* ---- running on while an analysis holds the model --------------------------------------- */

/* The model let go: what the run did while it was held applied to it, for at most budget_ns
 * (UINT64_MAX: all of it), and synced. Returns whether some is left. */
static bool catch_up(struct source_live *L, uint64_t budget_ns)
{
    L->ahead = false;
    trace_live_defer(L->feed, false);
    if (!trace_live_deferred(L->feed, NULL))
        return false;
    uint64_t t0 = tui_now_ns();
    size_t left;
    do
        left = trace_live_catch_up(L->feed, budget_ns == UINT64_MAX ? SIZE_MAX : CATCH_UP_SLICE);
    while (left && tui_now_ns() - t0 < budget_ns);
    trace_live_sync(L->feed);
    if (!left)
        L->end_ahead = false;
    return left > 0;
}

/* What is kept for the model while it is held, at most: an eighth of the memory budget. */
static size_t ahead_cap(void)
{
    uint64_t cap = trace_budget_get() / 8;
    return cap < ((size_t)16 << 20) ? (size_t)16 << 20 : cap > SIZE_MAX ? SIZE_MAX : (size_t)cap;
}

/* The time and events a tick ran for, counted for checkpoints and the rate shown. */
static void ticked(struct source_live *L, uint64_t t0, uint64_t ev0)
{
    uint64_t t1 = tui_now_ns();
    L->ckpt_work += t1 - t0;
    L->run_work += t1 - t0;
    L->ckpt_ticked += sim_engine_events(L->eng) - ev0;
    measure(L, t1);
}

/* Running on while an analysis reads the model: to the end only, with no breakpoint to
 * check (they stop at an op the model must show), no checkpoint taken (a copy would
 * resume with the analysis gone), the run's end left for when the model has caught up. */
static int live_tick_ahead(struct tui_source *s, uint64_t budget_ns)
{
    struct source_live *L = L_of(s);
    size_t kept;
    trace_live_deferred(L->feed, &kept);
    if (L->state != ST_RUNNING || L->goal != GOAL_END || L->nbp || L->silent || L->end_ahead ||
        kept >= ahead_cap())
        return 0;
    uint64_t t0 = tui_now_ns(), ev0 = sim_engine_events(L->eng);
    L->ahead = true;
    trace_live_defer(L->feed, true); /* until the next tick or control lets it go */
    run_batches(L, allowed(L, t0), t0, budget_ns < TICK_NS ? budget_ns : TICK_NS);
    ticked(L, t0, ev0);
    return 1;
}

/* ---- going back ------------------------------------------------------------------------ */

enum { REQ_EVENT, REQ_UNTIL };

static const struct opmark *mark_at(const struct source_live *L, uint64_t before)
{
    for (uint64_t k = L->nmarks; k > 0 && L->nmarks - k < MARKS; k--)
        if (L->marks[(k - 1) % MARKS].event < before)
            return &L->marks[(k - 1) % MARKS];
    return NULL;
}

static const struct hitmark *hit_at(const struct source_live *L, uint64_t before)
{
    for (uint64_t k = L->nhits; k > 0 && L->nhits - k < HITS; k--)
        if (L->hitm[(k - 1) % HITS].event < before)
            return &L->hitm[(k - 1) % HITS];
    return NULL;
}

/* "op starts: NAME on COMPONENT", and the op to show, for an op record. */
static void notice_op(struct source_live *L, uint64_t record, bool started)
{
    L->focus = trace_live_event_of_record(L->feed, record);
    if (L->focus == UINT64_MAX)
        return;
    const struct trace_model *m = trace_live_model(L->feed);
    const struct trace_event *e = trace_model_event(m, L->focus);
    uint32_t comp = trace_model_track_get(m, e->track)->name;
    char op[64], c[96];
    sim_escape(trace_model_str(m, e->op), trace_model_str_len(m, e->op), op, sizeof(op));
    sim_escape(trace_model_str(m, comp), trace_model_str_len(m, comp), c, sizeof(c));
    notice(L, "op %s: %s on %s", started ? "starts" : "ends", op, c);
}

/* In a copy resumed from a checkpoint: run silently to the target, then take over. */
static void resumed_run(struct source_live *L)
{
    const struct tui_ckpt_req *r = L->req;
    uint64_t from = sim_engine_events(L->eng);
    uint32_t how = tui_live_carry_unpack(L);
    /* the model's arrays in the memory budget's file, shared with the process that goes on:
     * as they were at the checkpoint. From here on this copy replaces that future: it takes
     * over whatever happens */
    bool shared = L->ckpt_mark != UINT64_MAX;
    if (shared && trace_budget_ckpt_restore(L->ckpt_mark) < 0) {
        tui_ckpt_took_over(L->ckpt, r, 0, false);
        _exit(1);
    }
    if (!L->trace_done)
        trace_live_resumed(L->feed); /* the stream file back to this copy's length */
    L->silent = true;
    bool ok = true;
    if (r->kind == REQ_UNTIL) {
        struct sim_step_info next;
        while (sim_engine_peek(L->eng, &next) && next.time <= r->arg)
            if (!step_one(L))
                break;
    } else {
        while (ok && sim_engine_events(L->eng) < r->arg)
            ok = step_one(L);
    }
    L->silent = false;
    L->hit = false;
    if (!ok && !shared) {
        tui_ckpt_took_over(L->ckpt, r, 0, false);
        _exit(1);
    }
    trace_live_sync(L->feed);
    L->state = ST_PAUSED;
    L->goal = GOAL_END;
    L->backwards = true;
    L->focus = UINT64_MAX;
    L->ckpt_work = 0;
    if (L->have_last)
        describe_last(L);
    uint64_t ev = sim_engine_events(L->eng);
    const struct opmark *m = mark_at(L, ev + 1);
    const struct hitmark *h = hit_at(L, ev + 1);
    char via[160];
    tui_ckpt_from_text(r, from, via, sizeof(via));
    bool said = false;
    if (how == TUI_BACK_OP && m && m->event == ev) {
        notice_op(L, m->record, m->started);
    } else if (how == TUI_BACK_BREAK && h && h->event == ev) {
        L->focus =
            h->record != UINT64_MAX ? trace_live_event_of_record(L->feed, h->record) : UINT64_MAX;
        notice(L, "back at %s", h->text);
    } else {
        notice(L, "back at event %" PRIu64 " (%s)", ev, via);
        said = true;
    }
    if (r->nlost && !said) { /* (nearer checkpoints lost: why the re-run took longer) */
        size_t k = strlen(L->notice);
        snprintf(L->notice + k, sizeof(L->notice) - k, " (%s)", via);
    }
    tui_ckpt_took_over(L->ckpt, r, ev, true);
    trace_budget_keeper_adopt(); /* the live process now: its files outlive it in the keeper */
}

/* Take a checkpoint when one is due: by the spacing below while running, and, going forward
 * again from a pause that a run (not steps by hand) reached, at the event where it stood,
 * whatever the spacing: going back to where the user stopped then re-runs nothing. True in a
 * copy resumed from it (it has taken over: the caller returns at once). Past the memory
 * budget the copy shares the budget's file, which keeps the pages this process changes
 * after the copy's mark (trace_budget_ckpt_mark). */
static bool maybe_checkpoint(struct source_live *L)
{
    if (!L->ckpt || L->silent)
        return false;
    uint64_t ev = sim_engine_events(L->eng);
    uint64_t last = tui_ckpt_last_event(L->ckpt);
    if (last != UINT64_MAX) {
        if (ev <= last)
            return false;
        uint64_t since = ev - last;
        /* every CKPT_WORK_NS of running, or CKPT_SHARE times what the last fork took (a
         * large process takes longer to fork, and its pages are copied as it writes them),
         * or a CKPT_SPREAD-th of the run so far: the table thins old checkpoints to
         * exponential spacing anyway, so a long run needs new ones less often */
        uint64_t every =
            CKPT_SHARE * L->ckpt_cost > CKPT_WORK_NS ? CKPT_SHARE * L->ckpt_cost : CKPT_WORK_NS;
        if (L->run_work / CKPT_SPREAD > every)
            every = L->run_work / CKPT_SPREAD;
        /* events run by hand (steps, which take no running time) count apart: a run at
         * full speed goes through a million events in a fraction of a second */
        uint64_t by_hand = since > L->ckpt_ticked ? since - L->ckpt_ticked : 0;
        bool stood = L->state == ST_PAUSED && L->ckpt_ticked >= CKPT_MIN_EVENTS;
        if (!((since >= CKPT_MIN_EVENTS && L->ckpt_work >= every) || by_hand >= CKPT_MAX_EVENTS ||
              stood))
            return false;
    }
    uint64_t mark = trace_budget_ckpt_mark();
    if (mark == UINT64_MAX && trace_budget_engaged())
        return false; /* the pages could not be kept: no copy could be trusted */
    L->ckpt_mark = mark;
    L->ckpt_work = 0;
    L->ckpt_ticked = 0;
    /* the fork's cost in this thread's CPU time: on a loaded machine the wall time also counts
     * whatever ran in its place, which made one checkpoint space the next ones up to 20 times
     * further apart */
    uint64_t t0 = tui_cpu_ns();
    int taken = tui_ckpt_take(L->ckpt, ev, sim_engine_now(L->eng), L->req);
    if (taken != 1) {
        L->ckpt_cost = tui_cpu_ns() - t0;
        return false;
    }
    resumed_run(L);
    return true;
}

static int live_back(struct tui_source *s, enum tui_back how, uint64_t arg, const void *ui,
                     size_t ui_len, struct diag *d)
{
    struct source_live *L = L_of(s);
    catch_up(L, UINT64_MAX); /* a checkpoint taken now holds all the run did */
    uint64_t n = sim_engine_events(L->eng), target = 0, until = 0;
    if (!n)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "at the first event already: there is nothing before it");
    if (!L->ckpt || !tui_ckpt_count(L->ckpt))
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "going back needs checkpoints: none were taken in this session");
    uint32_t kind = REQ_EVENT;
    switch (how) {
    case TUI_BACK_EVENT: /* n > 0: at the first event, going back is refused above */
        target = n - 1;
        break;
    case TUI_BACK_OP: {
        const struct opmark *m = mark_at(L, n);
        if (!m)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "no op started or ended before this event");
        target = m->event;
        break;
    }
    case TUI_BACK_BREAK: {
        const struct hitmark *h = hit_at(L, n);
        if (!h)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "no breakpoint hit before this event (B adds one; hits are "
                            "found running forward)");
        target = h->event;
        break;
    }
    case TUI_BACK_UNTIL: {
        until = sim_ns_to_ticks((double)arg / clock_ghz(L));
        if (until >= sim_engine_now(L->eng))
            return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                            "cycle %" PRIu64 " is not behind now (%" PRIu64 ")", arg,
                            now_cycles(L));
        kind = REQ_UNTIL;
        break;
    }
    }
    tui_live_carry_pack(L, (uint32_t)how, ui, ui_len);
    L->req->kind = kind;
    L->req->arg = kind == REQ_UNTIL ? until : target;
    L->req->nlost = 0;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < tui_ckpt_count(L->ckpt); i++) {
            const struct tui_ckpt_entry *e = tui_ckpt_entry(L->ckpt, i);
            if (kind == REQ_UNTIL ? e->time <= until : e->event <= target)
                best = i;
        }
        if (best == SIZE_MAX)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "no checkpoint before the target is left");
        if (tui_ckpt_resume(L->ckpt, best, L->req, d) < 0)
            continue; /* that one is gone (noted in the request): an older one */
    }
}

static int live_reload(struct tui_source *s, const void *ui, size_t ui_len, struct diag *d)
{
    struct source_live *L = L_of(s);
    if (!L->reload_check)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "this run cannot be reloaded");
    int rc = L->reload_check(L->reload_ctx, d);
    if (rc < 0)
        return rc;
    L->reload_len = ui_len < sizeof(L->reload_ui) ? ui_len : sizeof(L->reload_ui);
    memcpy(L->reload_ui, ui, L->reload_len);
    return 0;
}

static size_t live_take_resumed(struct tui_source *s, void *ui, size_t size)
{
    struct source_live *L = L_of(s);
    size_t n = L->ui_len;
    if (!n)
        return 0;
    memcpy(ui, L->ui, n < size ? n : size);
    L->ui_len = 0;
    return n;
}

static int live_tick(struct tui_source *s, uint64_t budget_ns, struct diag *d)
{
    struct source_live *L = L_of(s);
    (void)d;
    if (L->state != ST_RUNNING)
        return 0;
    if (budget_ns > TICK_NS)
        budget_ns = TICK_NS;
    uint64_t t0 = tui_now_ns(), ev0 = sim_engine_events(L->eng);
    /* what ran while an analysis held the model first: the events after it wait (they
     * would be kept behind it anyway) */
    if (catch_up(L, budget_ns)) {
        ticked(L, t0, ev0);
        return 0;
    }
    if (maybe_checkpoint(L))
        return 0;
    uint64_t may = allowed(L, t0);
    if (L->goal == GOAL_END && !has_marker_breaks(L)) {
        run_batches(L, may, t0, budget_ns);
        may = 0;
    }
    for (uint64_t n = 0; n < may; n++) {
        if (L->goal == GOAL_UNTIL) {
            struct sim_step_info next;
            if (sim_engine_peek(L->eng, &next) && next.time > L->goal_until) {
                char t[32];
                tui_fmt_ns(t, sizeof(t), sim_ticks_to_ns(L->goal_until));
                pause_with(L, NULL);
                notice(L, "reached %s", t);
                break;
            }
        }
        if (!step_one(L)) {
            finished(L);
            break;
        }
        if (check_stop(L))
            break;
        if ((n + 1) % CHECK_EVERY == 0 && tui_now_ns() - t0 > budget_ns)
            break;
    }
    if (L->state == ST_RUNNING && sim_run_over(L->run))
        finished(L);
    trace_live_sync(L->feed);
    ticked(L, t0, ev0);
    return 0;
}

static int live_wait_ms(struct tui_source *s)
{
    struct source_live *L = L_of(s);
    if (L->state != ST_RUNNING || !L->speed)
        return 0;
    uint64_t t = tui_now_ns();
    if (allowed(L, t))
        return 0;
    /* the next event is due when (done) events fit in the elapsed time */
    uint64_t done = sim_engine_events(L->eng) - L->pace_ev0;
    double due_ns = (double)done * 1e9 / (double)L->speed;
    double wait = due_ns - (double)(t - L->pace_t0);
    int ms = (int)ceil(wait / 1e6);
    return ms < 1 ? 1 : ms > PACE_MAX_WAIT_MS ? PACE_MAX_WAIT_MS : ms;
}

static bool live_running(struct tui_source *s)
{
    return L_of(s)->state == ST_RUNNING;
}

static int live_control(struct tui_source *s, enum tui_control c, struct diag *d)
{
    struct source_live *L = L_of(s);
    bool forward = c == TUI_CTL_STEP || c == TUI_CTL_STEP_OP || c == TUI_CTL_CONTINUE ||
                   (c == TUI_CTL_PAUSE && L->state == ST_PAUSED);
    catch_up(L, UINT64_MAX); /* (the analyses are stopped: tui/panes/task.h) */
    if (forward && L->state != ST_FINISHED) {
        if (maybe_checkpoint(L))
            return 0; /* a copy that went back: it stands where it was asked to */
        L->backwards = false;
    }
    switch (c) {
    case TUI_CTL_PAUSE:
        if (L->state == ST_FINISHED)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the simulation has finished");
        if (L->state == ST_RUNNING)
            pause_with(L, NULL);
        else
            start_running(L, GOAL_END);
        return 0;
    case TUI_CTL_STEP:
        if (L->state == ST_FINISHED)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the simulation has finished");
        L->state = ST_PAUSED;
        L->goal = GOAL_END;
        L->fired_text[0] = '\0';
        if (!step_one(L)) {
            finished(L);
        } else {
            describe_last(L);
            if (L->hit) {
                L->focus = L->hit_record != UINT64_MAX
                               ? trace_live_event_of_record(L->feed, L->hit_record)
                               : L->hit_event;
                snprintf(L->fired_text, sizeof(L->fired_text), "%s", L->hit_text);
                notice(L, "%s", L->hit_text);
            }
            if (sim_run_over(L->run))
                finished(L);
        }
        trace_live_sync(L->feed);
        return 0;
    case TUI_CTL_STEP_OP:
        if (L->state == ST_FINISHED)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the simulation has finished");
        L->goal_changes = trace_live_op_changes(L->feed);
        start_running(L, GOAL_STEP_OP);
        return 0;
    case TUI_CTL_CONTINUE:
        if (L->state == ST_FINISHED)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the simulation has finished");
        /* to the end means now: at full speed, whatever pace space had */
        L->speed = 0;
        set_speed_text(L);
        start_running(L, GOAL_END);
        notice(L, "%s",
               "running to the end at full speed (breakpoints still stop it; { sets a pace)");
        return 0;
    case TUI_CTL_FASTER:
    case TUI_CTL_SLOWER:
        L->speed = c == TUI_CTL_FASTER ? faster(L->speed) : slower(L->speed);
        L->pace_t0 = tui_now_ns();
        L->pace_ev0 = sim_engine_events(L->eng);
        set_speed_text(L);
        notice(L, "speed: %s", L->speed ? L->speed_text : "as fast as possible");
        return 0;
    case TUI_CTL_WRITE: {
        const char *path = trace_live_path(L->feed);
        if (!path)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "no trace file: start with -o FILE.json to write one");
        bool over = L->state == ST_FINISHED;
        if (trace_live_write(L->feed, path, !over, d) < 0)
            return -SIM_EIO;
        char p[160];
        sim_escape(path, strlen(path), p, sizeof(p));
        notice(L, "trace written to %s%s", p, over ? "" : " (up to now, marked incomplete)");
        return 0;
    }
    }
    return 0;
}

static int live_run_until(struct tui_source *s, uint64_t cycle, struct diag *d)
{
    struct source_live *L = L_of(s);
    catch_up(L, UINT64_MAX);
    if (L->state == ST_FINISHED)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the simulation has finished");
    double ns = (double)cycle / clock_ghz(L);
    sim_time_t until = sim_ns_to_ticks(ns);
    if (until <= sim_engine_now(L->eng) && cycle <= now_cycles(L))
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "cycle %" PRIu64 " is not ahead of now (%" PRIu64 ")", cycle,
                        now_cycles(L));
    if (maybe_checkpoint(L))
        return 0;
    L->backwards = false;
    L->goal_until = until;
    start_running(L, GOAL_UNTIL);
    return 0;
}

/* "sip0.cube0.pe0 at vector_add.c:46: dma_read on sip0.cube0.pe0.pe_dma", and the op to
 * show, for the op record a step by line stopped at. */
static void notice_line(struct source_live *L, uint64_t record)
{
    L->focus = trace_live_event_of_record(L->feed, record);
    if (L->focus == UINT64_MAX)
        return;
    const struct trace_model *m = trace_live_model(L->feed);
    const struct trace_event *e = trace_model_event(m, L->focus);
    char pe[128], src[160], text[400];
    trace_srcstep_pe_of(m, L->focus, pe, sizeof(pe));
    trace_model_site_text(m, e->site, src, sizeof(src));
    snprintf(text, sizeof(text), "%s at %s: %s on %s", pe, src, trace_model_str(m, e->op),
             trace_model_str(m, trace_model_track_get(m, e->track)->name));
    char esc[400];
    sim_escape(text, strlen(text), esc, sizeof(esc));
    notice(L, "%s", esc);
}

static int live_step_line(struct tui_source *s, const char *pe, struct diag *d)
{
    struct source_live *L = L_of(s);
    catch_up(L, UINT64_MAX);
    if (L->state == ST_FINISHED)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the simulation has finished");
    if (maybe_checkpoint(L))
        return 0;
    L->backwards = false;
    const struct trace_model *m = trace_live_model(L->feed);
    snprintf(L->line_pe, sizeof(L->line_pe), "%s", pe ? pe : "");
    L->line_file[0] = '\0';
    L->line_no = 0;
    uint64_t last = L->line_pe[0] ? trace_srcstep_last(m, L->line_pe, UINT64_MAX) : UINT64_MAX;
    const struct trace_site *site =
        last != UINT64_MAX ? trace_model_site_get(m, trace_model_event(m, last)->site) : NULL;
    if (site) {
        snprintf(L->line_file, sizeof(L->line_file), "%s", trace_model_str(m, site->file));
        L->line_no = site->line;
    }
    L->line_hit = false;
    start_running(L, GOAL_STEP_LINE);
    return 0;
}

static uint64_t live_take_focus(struct tui_source *s)
{
    struct source_live *L = L_of(s);
    uint64_t f = L->focus;
    L->focus = UINT64_MAX;
    return f;
}

/* ---- status ------------------------------------------------------------------------------ */

static const struct trace_model *live_model(struct tui_source *s)
{
    return trace_live_model(L_of(s)->feed);
}

static void live_status(struct tui_source *s, struct tui_source_status *out)
{
    struct source_live *L = L_of(s);
    *out = (struct tui_source_status){
        .mode = L->state == ST_FINISHED ? TUI_MODE_FINISHED
                : L->state == ST_PAUSED ? TUI_MODE_PAUSED
                                        : TUI_MODE_LIVE,
        .name = L->name,
        .now = now_cycles(L),
        .events_done = sim_engine_events(L->eng),
        .events_per_sec = L->state == ST_RUNNING ? L->eps : 0,
        .notice = L->notice[0] ? L->notice : NULL,
        .notice_rev = L->notice_rev,
        .last_event = L->state == ST_PAUSED && L->have_last ? L->last_text : NULL,
        .speed = L->speed_text,
        .verify = L->verify_text[0] ? L->verify_text : NULL,
        .backwards = L->backwards && L->state == ST_PAUSED,
        .ckpt_count = L->ckpt ? tui_ckpt_count(L->ckpt) : 0,
        .ckpt_bytes = L->ckpt ? tui_ckpt_memory(L->ckpt) : 0,
        .fired = L->state == ST_PAUSED && L->fired_text[0] ? L->fired_text : NULL,
    };
}

static struct sim_memstore *live_memstore(struct tui_source *s)
{
    return sim_chip_store(L_of(s)->chip);
}

static struct tui_memview *live_memory(struct tui_source *s)
{
    return L_of(s)->mem;
}

static void live_free(struct tui_source *s)
{
    struct source_live *L = L_of(s);
    sim_oplog_unobserve(sim_chip_oplog(L->chip), L->observer);
    tui_ckpt_free(L->ckpt);
    free(L->req);
    for (size_t i = 0; i < L->nbp; i++) {
        free(L->bps[i].pattern);
        free(L->bps[i].line);
    }
    free(L->bps);
    trace_watch_free(L->watch);
    tui_memview_free(L->mem);
    trace_live_free(L->feed);
    sim_run_free(L->run);
    free(L->name);
    free(L);
}

static const struct trace_sumacc *live_sumacc(struct tui_source *s)
{
    return trace_live_sumacc(L_of(s)->feed);
}

static const struct tui_source_ops live_ops = {
    .kind = "live",
    .model = live_model,
    .status = live_status,
    .running = live_running,
    .tick = live_tick,
    .control = live_control,
    .memstore = live_memstore,
    .free = live_free,
    .wait_ms = live_wait_ms,
    .tick_ahead = live_tick_ahead,
    .run_until = live_run_until,
    .break_add = live_break_add,
    .break_count = live_break_count,
    .break_describe = live_break_describe,
    .break_remove = live_break_remove,
    .take_focus = live_take_focus,
    .back = live_back,
    .take_resumed = live_take_resumed,
    .reload = live_reload,
    .memory = live_memory,
    .sumacc = live_sumacc,
    .step_line = live_step_line,
};

struct tui_source *tui_source_live_take(struct sim_run *run, struct trace_live *feed,
                                        const struct tui_live_opts *o)
{
    struct source_live *L = sim_xcalloc(1, sizeof(*L));
    L->base.ops = &live_ops;
    L->run = run;
    L->feed = feed;
    L->chip = sim_run_chip(run);
    L->eng = sim_chip_engine(L->chip);
    L->mem = tui_memview_chip_new(L->chip);
    L->name = sim_xstrdup(o && o->name ? o->name : "");
    L->speed = o ? o->speed : 0;
    set_speed_text(L);
    L->focus = UINT64_MAX;
    L->hit_record = L->changed_record = L->hit_event = UINT64_MAX;
    L->verify = o ? o->verify : NULL;
    L->verify_ctx = o ? o->verify_ctx : NULL;
    L->reload_check = o ? o->reload_check : NULL;
    L->reload_ctx = o ? o->reload_ctx : NULL;
    if (o && o->reverse && tui_ckpt_available()) {
        L->ckpt = tui_ckpt_new();
        L->req = sim_xcalloc(1, sizeof(*L->req));
    }
    if (o && o->carry_len) { /* a run started again (reloaded): what the last one had */
        struct tui_ckpt_req *saved = L->req, *r = sim_xcalloc(1, sizeof(*r));
        r->carry_len =
            (uint32_t)(o->carry_len < sizeof(r->carry) ? o->carry_len : sizeof(r->carry));
        memcpy(r->carry, o->carry, r->carry_len);
        L->req = r;
        tui_live_carry_unpack(L);
        L->req = saved;
        free(r);
        for (size_t i = 0; i < L->nbp; i++) /* a new run: nothing hit yet */
            L->bps[i].hits = 0;
    }
    struct sim_oplog_observer obs = {.on_start = on_start, .on_end = on_end, .ctx = L};
    L->observer = sim_oplog_observe(sim_chip_oplog(L->chip), &obs);
    diag_clear(&L->trace_diag);
    trace_live_sync(feed);
    if (sim_run_over(run)) {
        finished(L);
    } else if (o && o->paused) {
        L->state = ST_PAUSED;
        notice(L, "paused before the first event: s steps, space runs, ? lists the keys");
    } else {
        start_running(L, GOAL_END);
    }
    return &L->base;
}

size_t tui_source_live_reload_carry(struct tui_source *s, void *out, size_t size)
{
    struct source_live *L = L_of(s);
    if (!L->reload_len)
        return 0;
    struct tui_ckpt_req *saved = L->req, *r = sim_xcalloc(1, sizeof(*r));
    bool done = L->trace_done;
    L->req = r;
    L->trace_done = false; /* the next run writes its own trace */
    tui_live_carry_pack(L, 0, L->reload_ui, L->reload_len);
    L->req = saved;
    L->trace_done = done;
    size_t n = r->carry_len <= size ? r->carry_len : 0;
    memcpy(out, r->carry, n);
    free(r);
    return n;
}

void tui_source_live_forget_past(struct tui_source *s)
{
    struct source_live *L = L_of(s);
    tui_ckpt_free(L->ckpt);
    L->ckpt = NULL;
}

void tui_source_live_let_go(struct tui_source *s)
{
    catch_up(L_of(s), UINT64_MAX);
}

int tui_source_live_finish(struct tui_source *s, struct diag *d)
{
    struct source_live *L = L_of(s);
    if (!L->trace_done) {
        L->trace_done = true;
        L->trace_rc = trace_live_finish(L->feed, sim_run_over(L->run), &L->trace_diag);
    }
    if (L->trace_rc < 0 && d)
        *d = L->trace_diag;
    return L->trace_rc;
}

struct sim_run *tui_source_live_run(struct tui_source *s)
{
    return L_of(s)->run;
}

struct trace_live *tui_source_live_feed(struct tui_source *s)
{
    return L_of(s)->feed;
}
