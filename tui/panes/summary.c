/*
 * The summary pane. The figures are trace/analysis/metrics.h's (the same `npuscope summary`
 * prints), plus the busiest components from the model's busy-time index. While a live
 * model grows they are computed again at most a few times a second. A big loaded trace's are
 * summed up on a worker from the moment the pane is made (a few tenths of a second at ten
 * million events), beside the rest of the first frame's work: the pane says so until they
 * are in, a frame or two later.
 */
#include "tui/panes/summary.h"

#include "sim/util/xalloc.h"
#include "trace/analysis/energy.h"
#include "trace/analysis/metrics.h"
#include "trace/live/sumacc.h"
#include "tui/panes/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    TOP_BUSY = 5,
    ENGINE_LINES = 4, /* engines of one kind listed one by one up to this many */
    REFRESH_NS = 250 * 1000 * 1000,
    STILL_NS = 50 * 1000 * 1000, /* a model unchanged this long holds still: summed up at once */
    /* a loaded trace's figures are summed up on a worker from this many events (below, a
     * few ms at most: the first frame computes them), and the first frame waits this long
     * for them */
    FIRST_WORKER = 1 << 18,
    FIRST_WAIT_NS = 30 * 1000 * 1000,
};

struct busy_track {
    uint32_t track;
    double util;
};

struct tui_summary {
    const struct trace_model *m; /* borrowed */
    uint64_t gen;                /* generation the figures are for */
    uint64_t drawn_gen;          /* generation of the figures last drawn */
    uint64_t computed_at;        /* tui_now_ns() of the last computation */
    uint64_t interval;           /* wait at least this long before the next one */
    uint64_t seen_gen, seen_at;  /* the model's generation last seen, and since when */
    bool valid;
    int scroll;       /* first line shown */
    int lines_drawn;  /* lines of the last render, for scrolling */
    int rows_visible; /* lines that fit */
    struct trace_metrics x;
    struct busy_track top[TOP_BUSY];
    int ntop;
    double bw_min, bw_mean, bw_max, bw_peak; /* bytes per cycle */
    bool have_bw;
    struct trace_energy energy; /* known: false when unknown */
    struct tui_task *first;     /* owned, a loaded trace's: its figures, summed up on a worker
                                   (the fields above are the worker's until it is done) */
};

static void figures(struct tui_summary *s, const struct trace_sumacc *acc,
                    struct trace_progress *p);
static void first_run(void *arg, struct trace_progress *p);

struct tui_summary *tui_summary_new(struct tui_view *v)
{
    struct tui_summary *s = sim_xcalloc(1, sizeof(*s));
    s->m = v->m;
    if (!v->live && trace_model_event_count(s->m) >= FIRST_WORKER) {
        s->first = tui_task_new();
        tui_task_set_narrow(s->first, true);  /* (one thread: a core left to the verdict ahead) */
        tui_task_set_unasked(s->first, true); /* (a key pressed meanwhile comes first) */
        s->gen = trace_model_generation(s->m);
        tui_task_start(s->first, first_run, s, true);
    }
    return s;
}

void tui_summary_free(struct tui_summary *s)
{
    if (!s)
        return;
    tui_task_free(s->first); /* a run not finished stops at its next progress check */
    trace_metrics_fini(&s->x);
    free(s);
}

/* Busiest first; equal ones in track order. */
static int cmp_busy(const void *pa, const void *pb)
{
    const struct busy_track *a = pa, *b = pb;
    if (a->util != b->util)
        return a->util > b->util ? -1 : 1;
    return a->track < b->track ? -1 : a->track > b->track;
}

static void compute_bandwidth(struct tui_summary *s, const struct trace_sumacc *acc,
                              struct trace_progress *p)
{
    struct trace_bw_sample *smp = NULL;
    size_t n =
        acc ? trace_sumacc_bandwidth(acc, &smp) : trace_metrics_bandwidth_at(s->m, 0, &smp, p);
    uint64_t total = s->x.dram_read + s->x.dram_write, span = s->x.cycles_total;
    s->have_bw = n > 0;
    s->bw_min = s->bw_max = 0;
    s->bw_mean = span ? (double)total / (double)span : 0;
    uint64_t covered = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t w = smp[i].window ? smp[i].window : 1;
        double r = (double)(smp[i].read_bytes + smp[i].write_bytes) / (double)w;
        s->bw_min = i == 0 || r < s->bw_min ? r : s->bw_min;
        s->bw_max = r > s->bw_max ? r : s->bw_max;
        covered += w;
    }
    if (covered < span) /* windows without traffic are not listed: they are the minimum */
        s->bw_min = 0;
    free(smp);
    const struct sim_value *mem = sim_value_map_get(trace_model_config(s->m), "memory");
    s->bw_peak = sim_value_get_float(mem, "dram_peak_bw_bytes_per_cycle", 0);
}

/* The figures: from the counts a live run keeps (acc), else summed up from the model. Reads
 * only the model and writes only the figures' fields. */
static void figures(struct tui_summary *s, const struct trace_sumacc *acc, struct trace_progress *p)
{
    const struct trace_model *m = s->m;
    trace_metrics_fini(&s->x);
    if (acc)
        trace_sumacc_metrics(acc, m, &s->x);
    else if (!trace_metrics_compute_at(m, &s->x, p))
        return; /* (cancelled: the pane goes with it) */
    size_t nt = trace_model_track_count(m);
    struct busy_track *all = sim_xcalloc(nt + 1, sizeof(*all));
    uint64_t span = s->x.cycles_total;
    for (uint32_t t = 0; t < nt; t++) {
        double busy = (double)trace_model_track_busy(m, t, 0, span);
        all[t] = (struct busy_track){t, span ? busy / (double)span : 0};
    }
    if (nt > 1)
        qsort(all, nt, sizeof(*all), cmp_busy);
    s->ntop = nt < TOP_BUSY ? (int)nt : TOP_BUSY;
    memcpy(s->top, all, (size_t)s->ntop * sizeof(*all));
    free(all);
    compute_bandwidth(s, acc, p);
    trace_energy_held(m, &s->energy); /* a loaded file's or a live run's block */
}

static void first_run(void *arg, struct trace_progress *p)
{
    /* a few tenths of a second: it checks p as it goes through the events (it waits there
     * while hidden behind a pane of the user's that computes) */
    trace_progress_step(p, "summary", 1);
    if (!trace_progress_at(p, 0))
        figures(arg, NULL, p);
}

/* The loaded trace's figures once the worker is done with them: true when taken now. With
 * wait_ns, waits that long at most for them (a small trace's are there by then). */
static bool take_first(struct tui_summary *s, uint64_t wait_ns)
{
    if (!s->first)
        return false;
    for (uint64_t t0 = tui_now_ns();
         wait_ns && tui_task_running(s->first) && tui_now_ns() - t0 < wait_ns;)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    if (!tui_task_take_done(s->first))
        return false;
    tui_task_free(s->first);
    s->first = NULL;
    s->computed_at = tui_now_ns();
    s->interval = REFRESH_NS;
    s->valid = true;
    return true;
}

/* The figures now, here: the first of a live run, or again as the model grows. */
static void compute(struct tui_summary *s, const struct tui_view *v)
{
    uint64_t t0 = tui_now_ns();
    figures(s, v->acc, NULL);
    s->gen = trace_model_generation(s->m);
    /* summing up a growing model costs more as it grows: keep it to a tenth of the time,
     * so that a run of millions of events is not slowed down by its own summary */
    uint64_t now = tui_now_ns();
    uint64_t cost = now - t0;
    s->interval = 10 * cost > REFRESH_NS ? 10 * cost : REFRESH_NS;
    s->computed_at = now;
    s->valid = true;
}

static bool stale(const struct tui_summary *s)
{
    return !s->valid || s->gen != trace_model_generation(s->m);
}

/* Whether a stale summary is summed up again now: the first; while the model grows, at most
 * every s->interval (at least REFRESH_NS, ten times what the last summing up took); once it
 * holds still (STILL_NS without a change: a run paused, stepped or gone back), at once, so
 * that the figures of a run that stopped are its own. */
static bool due(struct tui_summary *s)
{
    uint64_t now = tui_now_ns(), gen = trace_model_generation(s->m);
    if (gen != s->seen_gen) {
        s->seen_gen = gen;
        s->seen_at = now;
    }
    return !s->valid || now - s->computed_at >= s->interval || now - s->seen_at >= STILL_NS;
}

static bool summary_sync(void *self, struct tui_view *v)
{
    struct tui_summary *s = self;
    if (s->first)
        return take_first(s, 0) || s->first;
    if (stale(s) && due(s))
        compute(s, v);
    return s->valid && s->gen != s->drawn_gen;
}

/* A refresh that sync held back, once it is due; true while one is still waiting. */
static bool summary_work(void *self, struct tui_view *v, uint64_t budget_ns)
{
    struct tui_summary *s = self;
    (void)budget_ns;
    if (s->first)
        return !take_first(s, 0); /* taken: drawn once more; else still waiting */
    if (!stale(s))
        return false;
    if (due(s))
        compute(s, v);
    return stale(s);
}

/* A meter of width w for a fraction in [0, 1], in eighths of a cell. */
static void meter(struct tui_canvas *c, int x, int y, int w, double frac)
{
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    long eighths = lround(frac * w * 8);
    for (int i = 0; i < w; i++) {
        long e = eighths - (long)i * 8;
        if (e >= 8)
            tui_canvas_put(c, x + i, y, gl->eighths[8], TUI_STYLE_BAR);
        else if (e > 0)
            tui_canvas_put(c, x + i, y, gl->eighths[e], TUI_STYLE_BAR);
        else
            tui_canvas_put(c, x + i, y, gl->shade[1], TUI_STYLE_BAR_EMPTY);
    }
}

/* One line: a label, a meter, a percentage. */
static void meter_line(struct tui_canvas *c, struct tui_rect r, int y, const char *label,
                       double frac)
{
    enum { LW = 8, PW = 7 };
    tui_canvas_text(c, r.x, y, LW, TUI_STYLE_NORMAL, label, TUI_TEXT_ELLIPSIS);
    if (r.w - LW - PW >= 4)
        meter(c, r.x + LW, y, r.w - LW - PW, frac);
    tui_canvas_printf(c, r.x + r.w - PW, y, PW, TUI_STYLE_VALUE, "%6.1f%%", frac * 100);
}

static void engine_lines(struct tui_canvas *c, struct tui_rect r, int y, int *n, const char *kind,
                         const struct trace_engine_use *u, size_t count, double kind_util)
{
    char label[32];
    if (count <= ENGINE_LINES) {
        for (size_t i = 0; i < count; i++) {
            snprintf(label, sizeof(label), "%s %d", kind, (int)u[i].id);
            meter_line(c, r, y + (*n)++, label, u[i].util);
        }
        return;
    }
    double lo = 1, hi = 0;
    for (size_t i = 0; i < count; i++) {
        lo = u[i].util < lo ? u[i].util : lo;
        hi = u[i].util > hi ? u[i].util : hi;
    }
    /* the kind as the verdict counts it: cycles with any of its engines busy */
    snprintf(label, sizeof(label), "%s x%zu", kind, count);
    meter_line(c, r, y + (*n)++, label, kind_util);
    tui_canvas_printf(c, r.x + 8, y + (*n)++, r.w - 8, TUI_STYLE_DIM,
                      "any %s busy; each %.1f%% to %.1f%%", kind, lo * 100, hi * 100);
}

/* "400 cyc (400 ns)", or "400 cyc" without a clock. */
static char *fmt_cyc(char *buf, size_t n, double cycles, double ghz)
{
    char a[32], b[32];
    snprintf(a, sizeof(a), "%.0f", cycles);
    if (ghz > 0)
        snprintf(buf, n, "%s cyc (%s)", a, tui_fmt_ns(b, sizeof(b), cycles / ghz));
    else
        snprintf(buf, n, "%s cyc", a);
    return buf;
}

/* Bytes per cycle, and GB/s when the clock is known. */
static char *fmt_bw(char *buf, size_t n, double bpc, double ghz)
{
    char a[32];
    if (ghz > 0)
        snprintf(buf, n, "%s B/cyc (%.1f GB/s)", tui_fmt_si(a, sizeof(a), bpc), bpc * ghz);
    else
        snprintf(buf, n, "%s B/cyc", tui_fmt_si(a, sizeof(a), bpc));
    return buf;
}

/* The energy (trace/analysis/energy.h): total and average power, its parts, where it goes;
 * "energy unknown" without an energy table. */
static void energy_lines(struct tui_canvas *c, struct tui_rect r, int y, int *n,
                         const struct trace_energy *e)
{
    char a[32], b[32], line[192];
    if (!e->known) {
        tui_canvas_text(c, r.x, y + (*n)++, r.w, TUI_STYLE_DIM, "energy unknown", 0);
        return;
    }
    tui_canvas_printf(c, r.x, y + (*n)++, r.w, TUI_STYLE_NORMAL, "energy %s, avg %s",
                      trace_energy_fmt(e->total_j, "J", a, sizeof(a)),
                      trace_energy_fmt(e->avg_power_w, "W", b, sizeof(b)));
    tui_canvas_printf(c, r.x + 2, y + (*n)++, r.w - 2, TUI_STYLE_DIM, "dynamic %s  static %s",
                      trace_energy_fmt(e->dynamic_j, "J", a, sizeof(a)),
                      trace_energy_fmt(e->static_j, "J", b, sizeof(b)));
    tui_canvas_text(c, r.x + 2, y + (*n)++, r.w - 2, TUI_STYLE_DIM,
                    trace_energy_where(e, line, sizeof(line)), TUI_TEXT_ELLIPSIS);
}

static void summary_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                           bool focused)
{
    struct tui_summary *s = self;
    take_first(s, FIRST_WAIT_NS);
    if (!s->valid && !s->first)
        compute(s, v);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    enum tui_style ts = focused ? TUI_STYLE_TITLE_FOCUS : TUI_STYLE_TITLE;
    tui_canvas_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', ts);
    tui_canvas_text(c, r.x, r.y, r.w, ts, " Summary", 0);
    if (s->first) { /* the worker's still */
        char n[32];
        tui_canvas_printf(c, r.x + 1, r.y + 1, r.w - 1, TUI_STYLE_DIM, "summing up %s events...",
                          tui_fmt_si(n, sizeof(n), (double)trace_model_event_count(s->m)));
        tui_canvas_unclip(c);
        return;
    }
    s->drawn_gen = s->gen;
    s->rows_visible = r.h - 1;
    int max = s->lines_drawn > s->rows_visible ? s->lines_drawn - s->rows_visible : 0;
    s->scroll = s->scroll > max ? max : s->scroll;
    struct tui_rect body = {r.x + 1, r.y + 1, r.w - 1, r.h - 1};
    tui_canvas_clip(c, body);
    int y = body.y - s->scroll, n = 0;
    const struct trace_metrics *x = &s->x;
    double ghz = trace_model_clock_ghz(s->m);
    char a[64], b[64], line[256];

    tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_DIM, "utilization of %s",
                      fmt_cyc(a, sizeof(a), (double)x->cycles_total, ghz));
    if (x->has_dma) {
        meter_line(c, body, y + n++, "DMA", x->dma_util);
        tui_canvas_printf(c, body.x + 8, y + n++, body.w - 8, TUI_STYLE_DIM,
                          "any DMA busy; at most %llu at once",
                          (unsigned long long)x->dma_max_concurrent);
    }
    engine_lines(c, body, y, &n, "TE", x->te, x->nte, x->te_util);
    engine_lines(c, body, y, &n, "VE", x->ve, x->nve, x->ve_util);
    if ((x->nte && x->nte <= ENGINE_LINES) || (x->nve && x->nve <= ENGINE_LINES))
        tui_canvas_text(c, body.x + 8, y + n++, body.w - 8, TUI_STYLE_DIM,
                        "n: its place on the chip (engine_id)", TUI_TEXT_ELLIPSIS);
    if (x->dram_source != TRACE_DRAM_NONE) {
        tui_fmt_bytes(a, sizeof(a), (double)x->dram_read);
        tui_fmt_bytes(b, sizeof(b), (double)x->dram_write);
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_NORMAL, "DRAM read %s  write %s", a,
                          b);
    }
    if (x->has_kv) {
        tui_fmt_bytes(a, sizeof(a), (double)x->kv_read);
        tui_fmt_bytes(b, sizeof(b), (double)x->kv_write);
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_NORMAL, "KV   read %s  write %s", a,
                          b);
    }
    if (s->have_bw) {
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_NORMAL, "BW   mean %s",
                          fmt_bw(line, sizeof(line), s->bw_mean, ghz));
        int k = snprintf(line, sizeof(line), "     min %s  max %s",
                         tui_fmt_si(a, sizeof(a), s->bw_min), tui_fmt_si(b, sizeof(b), s->bw_max));
        if (s->bw_peak > 0)
            snprintf(line + k, sizeof(line) - (size_t)k, "  peak %s (max is %.0f%% of it)",
                     tui_fmt_si(a, sizeof(a), s->bw_peak), s->bw_max / s->bw_peak * 100);
        tui_canvas_text(c, body.x, y + n++, body.w, TUI_STYLE_NORMAL, line, TUI_TEXT_ELLIPSIS);
    }
    if (s->ntop) {
        tui_canvas_text(c, body.x, y + n++, body.w, TUI_STYLE_DIM, "busiest", 0);
        for (int i = 0; i < s->ntop; i++) {
            uint32_t name = trace_model_track_get(s->m, s->top[i].track)->name;
            tui_canvas_printf(c, body.x + body.w - 7, y + n, 7, TUI_STYLE_VALUE, "%6.1f%%",
                              s->top[i].util * 100);
            tui_canvas_textn(c, body.x + 1, y + n++, body.w - 9, TUI_STYLE_NORMAL,
                             trace_model_str(s->m, name), trace_model_str_len(s->m, name),
                             TUI_TEXT_UNTRUSTED | TUI_TEXT_ELLIPSIS);
        }
    }
    if (x->has_prefill)
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_NORMAL, "prefill latency %s",
                          fmt_cyc(a, sizeof(a), (double)x->prefill_latency, ghz));
    if (x->has_decode)
        tui_canvas_printf(c, body.x, y + n++, body.w, TUI_STYLE_NORMAL,
                          "decode %llu tokens, avg %s", (unsigned long long)x->ndecode,
                          fmt_cyc(a, sizeof(a), x->avg_decode_latency, ghz));
    energy_lines(c, body, y, &n, &s->energy);
    if (trace_model_event_count(s->m) == 0)
        tui_canvas_text(c, body.x, y + n++, body.w, TUI_STYLE_DIM, "no ENGINE_EVENTs", 0);
    s->lines_drawn = n;
    tui_canvas_unclip(c);
}

static enum tui_result summary_action(void *self, enum tui_action a, struct tui_view *v)
{
    struct tui_summary *s = self;
    (void)v;
    int max = s->lines_drawn > s->rows_visible ? s->lines_drawn - s->rows_visible : 0;
    int before = s->scroll;
    switch (a) {
    case TUI_ACT_UP: s->scroll--; break;
    case TUI_ACT_DOWN: s->scroll++; break;
    case TUI_ACT_PAGE_UP: s->scroll -= s->rows_visible; break;
    case TUI_ACT_PAGE_DOWN: s->scroll += s->rows_visible; break;
    default: return TUI_RES_IGNORED;
    }
    s->scroll = s->scroll < 0 ? 0 : s->scroll > max ? max : s->scroll;
    return s->scroll != before ? TUI_RES_REDRAW : TUI_RES_HANDLED;
}

static void summary_hidden(void *self, bool hidden)
{
    struct tui_summary *s = self;
    if (s->first)
        tui_task_set_hidden(s->first, hidden);
}

static void summary_free(void *self)
{
    tui_summary_free(self);
}

const struct tui_pane_ops tui_summary_ops = {
    .name = "Summary",
    .sync = summary_sync,
    .render = summary_render,
    .action = summary_action,
    .work = summary_work,
    .hidden = summary_hidden,
    .free = summary_free,
    .uses_view = false,
};
