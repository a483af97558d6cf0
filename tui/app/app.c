/*
 * The TUI application: layout, header and footer, key dispatch, search prompt, themes,
 * dirty tracking, and the main loop (the only part that needs a terminal).
 */
#include "tui/app/app_int.h"

#include "sim/util/escape.h"
#include "sim/util/mapguard.h"
#include "sim/util/xalloc.h"
#include "trace/analysis/srcstep.h"
#include "trace/model/budget.h"
#include "trace/verdict/anomaly.h"
#include "tui/panes/task.h"
#include "tui/panes/anomalies.h"
#include "tui/source/ckpt.h"
#include "tui/source/linebp.h"
#include "tui/panes/bottleneck.h"
#include "tui/panes/details.h"
#include "tui/panes/diffview.h"
#include "tui/gantt/gantt.h"
#include "tui/app/help.h"
#include "tui/panes/layers.h"
#include "tui/panes/srcpane.h"
#include "tui/panes/meminspect.h"
#include "tui/panes/memlive.h"
#include "tui/panes/summary.h"
#include "tui/term/term.h"
#include "tui/panes/tokens.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- layout ------------------------------------------------------------------------------ */

static int left_slot(const struct tui_app *a)
{
    return a->left;
}

/* A narrow window has room for one bottom pane: the focused one, else the details of a
 * selected op, else the summary (or memory). */
static int narrow_slot(const struct tui_app *a)
{
    if (a->focus != P_GANTT)
        return a->focus;
    return a->view.selected != TUI_NO_EVENT ? P_DETAILS : left_slot(a);
}

static void place(struct tui_app *a)
{
    int W = a->canvas->w, H = a->canvas->h;
    a->too_small = W < TUI_MIN_W || H < TUI_MIN_H;
    a->full = true;
    a->border_x = -1;
    for (int i = 0; i < P_COUNT; i++)
        a->panes[i].shown = false;
    if (a->too_small)
        return;
    struct tui_rect body = {0, 1, W, H - 2};
    int left = left_slot(a);
    if (a->focus != P_GANTT && a->focus != P_DETAILS)
        a->focus = left;
    bool single = a->maximized || body.h < BIG_BODY || (a->bottom_hidden && a->focus != P_GANTT);
    a->single = single;
    if (single) {
        a->panes[a->focus].rect = body;
        a->panes[a->focus].shown = true;
        return;
    }
    struct pane *g = &a->panes[P_GANTT];
    g->shown = true;
    if (a->bottom_hidden) {
        g->rect = body;
        return;
    }
    int bh = body.h * 2 / 5;
    bh = bh < 7 ? 7 : bh > 14 ? 14 : bh;
    g->rect = (struct tui_rect){0, 1, W, body.h - bh};
    int by = 1 + body.h - bh;
    if (W >= WIDE) {
        int lw = W / 2;
        a->panes[left].rect = (struct tui_rect){0, by, lw, bh};
        a->panes[left].shown = true;
        a->panes[P_DETAILS].rect = (struct tui_rect){lw + 1, by, W - lw - 1, bh};
        a->panes[P_DETAILS].shown = true;
        a->border_x = lw;
    } else {
        int which = narrow_slot(a);
        a->panes[which].rect = (struct tui_rect){0, by, W, bh};
        a->panes[which].shown = true;
    }
}

/* Lay the panes out; a pane that left the screen, or came back, is told (its run under way
 * goes on behind what is shown). */
static void layout(struct tui_app *a)
{
    bool was[P_COUNT];
    for (int i = 0; i < P_COUNT; i++)
        was[i] = a->panes[i].shown;
    place(a);
    for (int i = 0; i < P_COUNT; i++) {
        struct pane *p = &a->panes[i];
        if (p->shown != was[i] && p->ops && p->ops->hidden)
            p->ops->hidden(p->self, !p->shown);
    }
}

/* ---- creation ---------------------------------------------------------------------------- */

struct tui_app *tui_app_new(struct tui_source *src, int w, int h, bool unicode, const char *theme,
                            const char *user_dir, int *theme_err, struct diag *d)
{
    struct tui_app *a = sim_xcalloc(1, sizeof(*a));
    a->src = src;
    a->m = src->ops->model(src);
    tui_view_init(&a->view, a->m, unicode);
    /* before the panes: a pane of a model that does not grow may read it on a worker */
    a->view.live = src->ops->control != NULL;
    a->view.acc = src->ops->sumacc ? src->ops->sumacc(src) : NULL;
    a->view.kept_from = tui_source_file_kept(src);
    tui_source_file_pause_while(src, tui_task_users()); /* (the index behind the first frame) */
    a->panes[P_GANTT] = (struct pane){.ops = &tui_gantt_ops, .self = tui_gantt_new(&a->view)};
    a->panes[P_SUMMARY] = (struct pane){.ops = &tui_summary_ops, .self = tui_summary_new(&a->view)};
    struct tui_memview *mem = src->ops->memory ? src->ops->memory(src) : NULL;
    if (mem) /* a simulation, in the process or served: its memory store itself */
        a->panes[P_MEMORY] =
            (struct pane){.ops = &tui_memlive_ops, .self = tui_memlive_new(mem, &a->view)};
    else
        a->panes[P_MEMORY] =
            (struct pane){.ops = &tui_meminspect_ops, .self = tui_meminspect_new(&a->view)};
    a->panes[P_DETAILS] = (struct pane){.ops = &tui_details_ops, .self = tui_details_new(&a->view)};
    a->panes[P_LAYERS] = (struct pane){.ops = &tui_layers_ops, .self = tui_layers_new(&a->view)};
    a->panes[P_TOKENS] = (struct pane){.ops = &tui_tokens_ops, .self = tui_tokens_new(&a->view)};
    a->panes[P_ANOMALIES] =
        (struct pane){.ops = &tui_anomalies_ops, .self = tui_anomalies_new(&a->view)};
    a->panes[P_BOTTLENECK] =
        (struct pane){.ops = &tui_bottleneck_ops, .self = tui_bottleneck_new(&a->view)};
    a->panes[P_SOURCE] = (struct pane){.ops = &tui_srcpane_ops, .self = tui_srcpane_new(&a->view)};
    a->left = P_SUMMARY;
    a->invalid_gen = UINT64_MAX;
    a->canvas = tui_canvas_new(w, h, unicode);
    a->user_dir = user_dir ? sim_xstrdup(user_dir) : NULL;
    tui_theme_list_init(&a->themes, a->user_dir);
    const char *name = theme ? theme : "default";
    int rc = tui_theme_load(&a->theme, name, a->user_dir, d);
    if (theme_err)
        *theme_err = rc;
    if (rc < 0 && d) {
        char line[700];
        tui_view_message(&a->view, TUI_STYLE_ERROR, "theme: %s (using the default)",
                         diag_format(d, line, sizeof(line)));
    }
    for (size_t i = 0; i < a->themes.len; i++)
        if (rc == 0 && strcmp(a->themes.names[i], name) == 0)
            a->theme_idx = i;
    struct tui_source_status st;
    src->ops->status(src, &st);
    if (st.notice && rc == 0)
        tui_view_message(&a->view, TUI_STYLE_STATUS, "%s", st.notice);
    a->notice_seen = st.notice_rev;
    if (src->ops->take_focus) { /* a served run's viewer: the op the run stopped at */
        uint64_t ev = src->ops->take_focus(src);
        if (ev != UINT64_MAX)
            tui_gantt_select(a->panes[P_GANTT].self, &a->view, ev);
    }
    a->work_pending = true;
    layout(a);
    return a;
}

void tui_app_leave(struct tui_app *a)
{
    tui_bottleneck_leave(a->panes[P_BOTTLENECK].self);
}

void tui_app_free(struct tui_app *a)
{
    if (!a)
        return;
    for (int i = 0; i < P_COUNT; i++)
        a->panes[i].ops->free(a->panes[i].self);
    tui_diffview_free(a->diff);
    tui_canvas_free(a->canvas);
    tui_theme_list_fini(&a->themes);
    free(a->user_dir);
    free(a);
}

void tui_app_resize(struct tui_app *a, int w, int h)
{
    if (w == a->canvas->w && h == a->canvas->h)
        return;
    tui_canvas_resize(a->canvas, w, h);
    layout(a);
}

const struct tui_theme *tui_app_theme(const struct tui_app *a, uint64_t *rev)
{
    if (rev)
        *rev = a->theme_rev;
    return &a->theme;
}

bool tui_app_take_repaint(struct tui_app *a)
{
    bool r = a->repaint;
    a->repaint = false;
    return r;
}

/* ---- header and footer ------------------------------------------------------------------ */

static const char *mode_name(enum tui_mode m)
{
    switch (m) {
    case TUI_MODE_LIVE: return "LIVE";
    case TUI_MODE_PAUSED: return "PAUSED";
    case TUI_MODE_FINISHED: return "FINISHED";
    default: return "POST-MORTEM";
    }
}

/* A trace that records a failure (INVALID_TRACE markers, trace format §11) says so in the
 * header: a badge (when invalid_n), and the first failure's error, cut short (escaped;
 * "" when there is none). */
static const char *invalid_warning(struct tui_app *a)
{
    uint64_t gen = trace_model_generation(a->m);
    if (gen == a->invalid_gen)
        return a->invalid_text;
    a->invalid_gen = gen;
    size_t first;
    a->invalid_n = trace_invalid_markers(a->m, &first);
    a->invalid_text[0] = '\0';
    const char *err = a->invalid_n ? trace_invalid_error(a->m, first) : NULL;
    if (err) {
        char e[200];
        sim_escape(err, strlen(err), e, sizeof(e));
        snprintf(a->invalid_text, sizeof(a->invalid_text), "%.60s%s (A lists)", e,
                 strlen(e) > 60 ? "..." : "");
    }
    return a->invalid_text;
}

/* The header's parts, in order. When they do not fit, the least needed go first: the
 * program's name, the file's directory, the run and model names, the total of cycles, the
 * speed; what stays is cut short at the right edge. */
static void draw_header(struct tui_app *a)
{
    struct tui_canvas *c = a->canvas;
    struct tui_source_status *st = &a->drawn_status;
    a->src->ops->status(a->src, st);
    tui_canvas_fill(c, (struct tui_rect){0, 0, c->w, 1}, ' ', TUI_STYLE_HEADER);
    char ckpt[64] = "", mem[24] = "";
    if (st->ckpt_bytes)
        tui_fmt_bytes(mem, sizeof(mem), (double)st->ckpt_bytes);
    if (st->ckpt_count) /* going back: checkpoints held, and their memory */
        snprintf(ckpt, sizeof(ckpt), "ckpt %zu/%d%s%s", st->ckpt_count, TUI_CKPT_MAX,
                 mem[0] ? " " : "", mem);
    char mode[32], now[96] = "", events[64] = "", rate[64] = "", speed[48] = "", run[256] = "",
                   total[64], cursor[96], a1[64], viewers[32] = "";
    double ghz = trace_model_clock_ghz(a->m);
    snprintf(mode, sizeof(mode), " %s ", mode_name(st->mode));
    if (st->mode != TUI_MODE_POSTMORTEM) {
        snprintf(now, sizeof(now), "now %s", tui_fmt_cycles_ns(a1, sizeof(a1), st->now, ghz));
        snprintf(events, sizeof(events), "events: %llu%s", (unsigned long long)st->events_done,
                 st->backwards ? " (reached backwards)" : "");
        if (st->events_per_sec > 0 && st->mode == TUI_MODE_LIVE)
            snprintf(rate, sizeof(rate), "%s ev/s", tui_fmt_si(a1, sizeof(a1), st->events_per_sec));
        if (st->mode == TUI_MODE_LIVE && tui_task_holding()) { /* tui/panes/task.h */
            char on[32] = "";                                  /* the run goes on meanwhile */
            if (a->ahead && st->events_per_sec > 0)
                snprintf(on, sizeof(on), "%.20s ev/s, ",
                         tui_fmt_si(a1, sizeof(a1), st->events_per_sec));
            snprintf(rate, sizeof(rate), "%sview held by an analysis", on);
        }
        if (st->speed && strcmp(st->speed, "max") != 0 && st->mode != TUI_MODE_FINISHED)
            snprintf(speed, sizeof(speed), "speed %s", st->speed);
    }
    if (st->viewers) /* a served run: who else is watching */
        snprintf(viewers, sizeof(viewers), "%u viewer%s", st->viewers, st->viewers == 1 ? "" : "s");
    const struct sim_value *meta = trace_model_metadata(a->m);
    const char *rid = sim_value_get_str(meta, "run_id", NULL);
    const char *model = sim_value_get_str(meta, "model_name", NULL);
    if (st->mode == TUI_MODE_POSTMORTEM && (rid || model))
        snprintf(run, sizeof(run), "%s%s%s", rid ? rid : "", rid && model ? " / " : "",
                 model ? model : "");
    const char *invalid = invalid_warning(a);
    snprintf(total, sizeof(total), "%llu cyc", (unsigned long long)trace_model_t_max(a->m));
    if (st->mode != TUI_MODE_POSTMORTEM)
        total[0] = '\0'; /* "now" says it */
    snprintf(cursor, sizeof(cursor), "cursor %s",
             tui_fmt_cycles_ns(a1, sizeof(a1), a->view.cursor, ghz));
    const char *name = st->name ? st->name : "";
    char both[600];
    if (a->diff) { /* comparing: both files, without their directories */
        const char *b = tui_diffview_name_b(a->diff);
        snprintf(both, sizeof(both), "%s vs %s", strrchr(name, '/') ? strrchr(name, '/') + 1 : name,
                 strrchr(b, '/') ? strrchr(b, '/') + 1 : b);
        name = both;
    }
    struct part {
        const char *text;
        enum tui_style st;
        unsigned flags;
        int keep; /* parts with the lowest value go first when the line is too long */
    } parts[] = {
        {" npuscope", TUI_STYLE_HEADER, 0, 0},
        {mode, TUI_STYLE_HEADER_MODE, 0, 8},
        {a->invalid_n ? " INVALID TRACE " : "", TUI_STYLE_ERROR, 0, 8},
        {st->mode == TUI_MODE_POSTMORTEM && sim_value_get_bool(meta, "incomplete", false)
             ? " INCOMPLETE: written before the run ended "
             : "",
         TUI_STYLE_ERROR, 0, 8},
        {invalid, TUI_STYLE_ERROR, 0, 3},
        {now, TUI_STYLE_HEADER, 0, 8},
        {events, TUI_STYLE_HEADER, 0, 8},
        {rate, TUI_STYLE_HEADER, 0, 4},
        {speed, TUI_STYLE_HEADER, 0, 4},
        {viewers, TUI_STYLE_HEADER, 0, 6},
        {st->verify ? st->verify : "", TUI_STYLE_VALUE, TUI_TEXT_UNTRUSTED, 7},
        {st->fired ? st->fired : "", TUI_STYLE_HEADER_MODE, 0, 8},
        {st->last_event ? st->last_event : "", TUI_STYLE_HEADER, 0, 7},
        {name, TUI_STYLE_HEADER, TUI_TEXT_UNTRUSTED, 7},
        {run, TUI_STYLE_HEADER, TUI_TEXT_UNTRUSTED, 2},
        {total, TUI_STYLE_HEADER, 0, 3},
        {cursor, TUI_STYLE_HEADER, 0, 7},
        {ckpt, TUI_STYLE_HEADER, 0, 1},
    };
    enum { NPARTS = sizeof(parts) / sizeof(parts[0]) };
    for (int keep = 0; keep < 7; keep++) { /* level 1: the file's name without its directory */
        int need = 1;
        for (int i = 0; i < NPARTS; i++)
            if (parts[i].text[0])
                need += tui_text_width(parts[i].text, strlen(parts[i].text), c->unicode,
                                       parts[i].flags) +
                        2;
        if (need <= c->w)
            break;
        if (keep == 1 && strrchr(name, '/'))
            for (int i = 0; i < NPARTS; i++)
                if (parts[i].text == name) /* the name's part */
                    parts[i].text = strrchr(name, '/') + 1;
        for (int i = 0; i < NPARTS; i++)
            if (parts[i].keep == keep)
                parts[i].text = "";
    }
    int x = 0;
    for (int i = 0; i < NPARTS && x < c->w; i++) {
        if (!parts[i].text[0])
            continue;
        x += tui_canvas_text(c, x, 0, c->w - x, parts[i].st, parts[i].text,
                             parts[i].flags | TUI_TEXT_ELLIPSIS);
        x += 2;
    }
}

static void draw_footer(struct tui_app *a)
{
    struct tui_canvas *c = a->canvas;
    int y = c->h - 1;
    tui_canvas_fill(c, (struct tui_rect){0, y, c->w, 1}, ' ', TUI_STYLE_FOOTER);
    if (a->prompt) {
        static const char *const label[] = {
            "search: /",
            "break on (c GLOB, o NAME, m NAME, hbm.util > 0.9): ", "run until (cycles, 12us, +N): ",
            "compare with trace: ", "back to (cycles, 12us, -N): "};
        static const char *const hint[] = {"Enter search  Esc cancel", "Enter add  Esc cancel",
                                           "Enter run  Esc cancel", "Enter compare  Esc cancel",
                                           "Enter go back  Esc cancel"};
        int x = tui_canvas_text(c, 0, y, c->w, TUI_STYLE_PROMPT, label[a->pkind], 0);
        x += tui_canvas_textn(c, x, y, c->w - x - 1, TUI_STYLE_PROMPT, a->pbuf, a->plen, 0);
        tui_canvas_put(c, x++, y, tui_glyphs(c->unicode)->eighths[8], TUI_STYLE_PROMPT);
        tui_canvas_text(c, x + 2, y, c->w - x - 2, TUI_STYLE_FOOTER, hint[a->pkind],
                        TUI_TEXT_ELLIPSIS);
        return;
    }
    if (a->view.message[0]) {
        char fit[sizeof(a->view.message) + 8];
        tui_canvas_text(c, 0, y, c->w, a->view.message_style,
                        tui_fit_path(a->view.message, c->w, c->unicode, fit, sizeof(fit)),
                        TUI_TEXT_ELLIPSIS);
        return;
    }
    int x = 0;
    if (a->single && !a->maximized) { /* too low for more than one pane: say the others exist */
        x += 1 + tui_canvas_text(c, 1, y, c->w - 1, TUI_STYLE_FOOTER_KEY, "Tab", 0);
        x += 1 + tui_canvas_text(c, x + 1, y, c->w - x - 1, TUI_STYLE_FOOTER,
                                 "other panes (one at a time here)", TUI_TEXT_ELLIPSIS);
        x++;
    }
    static const char *const keys[][2] = {
        {"q", "quit"},    {"?", "help"},
        {"/", "search"},  {"+-", "zoom"},
        {"hl", "pan"},    {"jk", "row"},
        {"Enter", "op"},  {"Tab", "pane"},
        {"v", "verdict"}, {"y T A", "layers tokens anomalies"},
        {"C", "path"},    {"m", "memory"},
        {"H", "heat"},    {"E", "util"},
        {"f", "fit"},     {"t", "theme"},
    };
    static const char *const live_keys[][2] = {{"space", "pause"}, {"s", "step"}, {"p", "back"}};
    static const char *const diff_keys[][2] = {
        {"q", "quit"}, {"?", "help"}, {"D", "close"},  {"a", "align"}, {"+-", "zoom"},
        {"hl", "pan"}, {"jk", "row"}, {"Enter", "op"}, {"[]", "ops"},  {"Tab", "pane"},
    };
    for (int pass = 0; pass < 2; pass++) { /* a live simulation's keys first */
        size_t n = !pass     ? (a->src->ops->control ? (a->src->ops->back ? 3 : 2) : 0)
                   : a->diff ? sizeof(diff_keys) / sizeof(diff_keys[0])
                             : sizeof(keys) / sizeof(keys[0]);
        for (size_t i = 0; i < n; i++) {
            const char *k = !pass ? live_keys[i][0] : a->diff ? diff_keys[i][0] : keys[i][0];
            const char *what = !pass ? live_keys[i][1] : a->diff ? diff_keys[i][1] : keys[i][1];
            int need = (int)(strlen(k) + strlen(what) + 3);
            if (x + need > c->w)
                return;
            x += 1 + tui_canvas_text(c, x + 1, y, c->w - x - 1, TUI_STYLE_FOOTER_KEY, k, 0);
            x += 1 + tui_canvas_text(c, x + 1, y, c->w - x - 1, TUI_STYLE_FOOTER, what, 0);
            x++;
        }
    }
}

/* ---- rendering --------------------------------------------------------------------------- */

bool tui_app_result(const struct tui_app *a)
{
    return a->result || a->view.result;
}

void tui_app_result_shown(struct tui_app *a)
{
    a->result = false;
    a->view.result = false; /* (one a pane took as it drew: on the frame just drawn) */
}

bool tui_app_needs_render(struct tui_app *a)
{
    if (a->full || a->header_dirty || a->footer_dirty || a->help_dirty)
        return true;
    if (a->diff && tui_diffview_dirty(a->diff))
        return true;
    if (sim_mapguard_cuts() != a->cuts_seen)
        return true;
    if (trace_model_generation(a->m) != a->drawn_gen || a->view.rev != a->drawn_rev ||
        a->view.message_rev != a->drawn_msg)
        return true;
    for (int i = 0; i < P_COUNT; i++)
        if (a->panes[i].shown && a->panes[i].dirty)
            return true;
    struct tui_source_status st;
    a->src->ops->status(a->src, &st);
    return st.mode != a->drawn_status.mode || st.now != a->drawn_status.now ||
           st.events_done != a->drawn_status.events_done || st.viewers != a->drawn_status.viewers;
}

static void diff_note(struct tui_app *a);

const struct tui_canvas *tui_app_render(struct tui_app *a)
{
    if (a->diff)
        diff_note(a); /* the comparison computed on its worker is ready */
    unsigned long cuts = sim_mapguard_cuts();
    if (cuts != a->cuts_seen) { /* a read past the new end of a trace cut short on disk */
        a->cuts_seen = cuts;
        tui_view_message(&a->view, TUI_STYLE_ERROR,
                         "the trace file was cut short on disk while open: the ops past its new "
                         "end show no details");
    }
    if (a->too_small) {
        tui_canvas_too_small(a->canvas, TUI_MIN_W, TUI_MIN_H);
        a->full = false;
        return a->canvas;
    }
    if (!a->too_small && !a->single && !a->bottom_hidden && a->border_x < 0 &&
        !a->panes[narrow_slot(a)].shown)
        layout(a); /* an op was selected or cleared: the details take the bottom, or leave it */
    uint64_t focus = tui_view_focus_event(&a->view);
    if (a->src->ops->want_details && focus != TUI_NO_EVENT && a->panes[P_DETAILS].shown)
        a->src->ops->want_details(a->src, focus); /* a served run's come later */
    for (int i = 0; i < P_COUNT; i++) {
        struct pane *p = &a->panes[i];
        if (p->shown && p->ops->sync && p->ops->sync(p->self, &a->view))
            p->dirty = true;
    }
    uint64_t gen = trace_model_generation(a->m), rev = a->view.rev;
    if (a->full)
        tui_canvas_fill(a->canvas, (struct tui_rect){0, 0, a->canvas->w, a->canvas->h}, ' ',
                        TUI_STYLE_NORMAL);
    if (a->diff && (a->full || tui_diffview_dirty(a->diff)))
        tui_diffview_render(a->diff, a->canvas,
                            (struct tui_rect){0, 1, a->canvas->w, a->canvas->h - 2});
    for (int i = 0; i < P_COUNT && !a->diff; i++) {
        struct pane *p = &a->panes[i];
        if (!p->shown)
            continue;
        if (a->full || p->dirty || p->gen != gen || (p->ops->uses_view && p->rev != rev)) {
            p->ops->render(p->self, a->canvas, p->rect, &a->view, a->focus == i);
            p->dirty = false;
            p->gen = gen;
            p->rev = rev;
            a->work_pending = true;
            /* the pane with the keys says so in its title's first cell, with or without
             * colours (the title's style alone is lost on a monochrome terminal) */
            if (a->focus == i && p->rect.w > 0 && p->rect.h > 0)
                tui_canvas_put(a->canvas, p->rect.x, p->rect.y,
                               a->canvas->unicode ? 0x25B6 /* ▶ */ : '>', TUI_STYLE_TITLE_FOCUS);
        }
    }
    if (a->full && a->border_x >= 0 && !a->diff) {
        const struct tui_rect *r = &a->panes[P_DETAILS].rect;
        for (int y = r->y; y < r->y + r->h; y++)
            tui_canvas_put(a->canvas, a->border_x, y, tui_glyphs(a->canvas->unicode)->vline,
                           TUI_STYLE_BORDER);
    }
    struct tui_source_status st;
    a->src->ops->status(a->src, &st);
    if (a->full || a->header_dirty || gen != a->drawn_gen || rev != a->drawn_rev ||
        st.mode != a->drawn_status.mode || st.now != a->drawn_status.now ||
        st.events_done != a->drawn_status.events_done || st.viewers != a->drawn_status.viewers)
        draw_header(a);
    if (a->full || a->footer_dirty || a->view.message_rev != a->drawn_msg)
        draw_footer(a);
    for (int pass = 0; a->help && pass < 2; pass++) {
        struct tui_rect body = {0, 1, a->canvas->w, a->canvas->h - 2};
        a->help_lines = tui_help_render(a->canvas, body, a->help_scroll,
                                        a->src->ops->control != NULL, &a->help_visible);
        int max = a->help_lines > a->help_visible ? a->help_lines - a->help_visible : 0;
        if (a->help_scroll <= max)
            break;
        a->help_scroll = max; /* keys came before the help was first drawn */
    }
    if (a->bplist && !a->help)
        tui_app_draw_bplist(a);
    a->full = a->header_dirty = a->footer_dirty = a->help_dirty = false;
    a->drawn_gen = gen;
    a->drawn_rev = rev;
    a->drawn_msg = a->view.message_rev;
    if (!a->drawn_once)
        a->work_pending = true; /* tui_app_work starts the verdict ahead */
    a->drawn_once = true;
    return a->canvas;
}

/* ---- work ----------------------------------------------------------------------------------- */

/* What the source wants shown: a new notice in the status line, an op to select. */
static void load_theme(struct tui_app *a, size_t idx);

/* This process became the live one by going back: the app as it was when the checkpoint
 * was taken, with the layout, theme and filters of the process that went back. */
static void resumed(struct tui_app *a, const struct app_carry *k)
{
    if (k->left >= 0 && k->left < P_COUNT)
        a->left = k->left;
    a->maximized = k->maximized;
    a->bottom_hidden = k->bottom_hidden;
    if (k->focus >= 0 && k->focus < P_COUNT)
        a->focus = k->focus;
    if (k->theme_idx != a->theme_idx && k->theme_idx < a->themes.len)
        load_theme(a, k->theme_idx);
    tui_view_filter(&a->view, k->filter_engine, k->filter_kind);
    if (k->reload)
        tui_gantt_want_zoom(a->panes[P_GANTT].self, &k->zoom);
    else
        tui_gantt_zoom_set(a->panes[P_GANTT].self, &k->zoom);
    a->prompt = a->bplist = a->help = false;
    a->help_dirty = a->header_dirty = a->footer_dirty = true;
    a->repaint = a->resumed = true;
    layout(a);
    for (int i = 0; i < P_COUNT; i++)
        a->panes[i].dirty = true;
}

/* What the source has to tell after a call: a notice, an op to show, or that this process
 * just became the live one by going back (returns true then). */
static bool source_news(struct tui_app *a)
{
    struct tui_source_status st;
    bool back = false;
    if (a->src->ops->take_resumed) {
        struct app_carry k;
        if (a->src->ops->take_resumed(a->src, &k, sizeof(k)) == sizeof(k)) {
            resumed(a, &k);
            back = true;
        }
    }
    a->src->ops->status(a->src, &st);
    if (st.mode == TUI_MODE_FINISHED) /* a zoom kept for a run started again: now or never */
        tui_gantt_settle_zoom(a->panes[P_GANTT].self);
    if (st.notice_rev != a->notice_seen) {
        a->notice_seen = st.notice_rev;
        if (st.notice)
            tui_view_message(&a->view, TUI_STYLE_STATUS, "%s", st.notice);
    }
    if (a->src->ops->take_focus) {
        uint64_t ev = a->src->ops->take_focus(a->src);
        if (ev != UINT64_MAX) {
            tui_gantt_select(a->panes[P_GANTT].self, &a->view, ev);
            a->panes[P_GANTT].dirty = true;
            a->header_dirty = true;
        }
    }
    return back;
}

bool tui_app_busy(struct tui_app *a)
{
    return a->src->ops->running(a->src) || a->work_pending || tui_diffview_computing(a->diff);
}

void tui_app_work(struct tui_app *a, uint64_t budget_ns)
{
    uint64_t t0 = tui_now_ns();
    /* an analysis reading the live model on a worker holds the run (tui/panes/task.h) */
    bool held = tui_task_holding();
    if (held != a->held)
        a->header_dirty = true; /* it says so */
    a->held = held;
    /* the run goes on meanwhile when it can, what it does applied once the model is let go */
    a->ahead = held && a->src->ops->running(a->src) && a->src->ops->tick_ahead &&
               a->src->ops->tick_ahead(a->src, budget_ns) > 0;
    tui_task_set_run_on(a->ahead);
    if (a->ahead)
        a->header_dirty = true; /* its events and rate */
    if (a->src->ops->running(a->src) && !held) {
        struct diag d;
        diag_clear(&d);
        if (a->src->ops->tick(a->src, budget_ns, &d) < 0) {
            char line[700];
            tui_view_message(&a->view, TUI_STYLE_ERROR, "%s", diag_format(&d, line, sizeof(line)));
        }
        source_news(a);
        /* the memory pane reads more than the model: a served run's answers come later */
        struct pane *mp = &a->panes[P_MEMORY];
        if (mp->shown && mp->ops->sync && mp->ops->sync(mp->self, &a->view))
            mp->dirty = true;
    }
    bool pending = false;
    for (int i = 0; i < P_COUNT; i++) {
        struct pane *p = &a->panes[i];
        if (!p->shown || !p->ops->work)
            continue;
        uint64_t spent = tui_now_ns() - t0;
        uint64_t left = spent < budget_ns ? budget_ns - spent : 0;
        bool more = p->ops->work(p->self, &a->view, left);
        if (more || p->working)
            p->dirty = true; /* progress, or the last of it, to show */
        if ((p->working && !more) || a->view.result)
            a->result = true; /* the last of it, or a result taken: to show at once */
        a->view.result = false;
        p->working = more;
        pending |= more;
    }
    if (a->drawn_once && a->src->ops->drawn)
        a->src->ops->drawn(a->src); /* what the screen need not wait for (source.h) */
    struct pane *bp = &a->panes[P_BOTTLENECK];
    /* the verdict ahead of v (bottleneck.h): a loaded trace's once the first frame is drawn,
     * beside the work that frame asked for (its run, at the lowest priority, waits for the
     * user's runs that are not narrow, and takes the core a narrow one leaves: task.h); a
     * live run's once that work is done */
    if (a->drawn_once && (!pending || !a->view.live) && !bp->shown && !a->diff)
        pending |= tui_bottleneck_ahead(bp->self, &a->view);
    else if (a->diff && !bp->shown) /* (none judges it meanwhile: what would wait for it
                                     * computes its own) */
        a->view.verdict_pending = false;
    /* then a loaded trace's layers, ahead of y (layers.h) */
    struct pane *lp = &a->panes[P_LAYERS];
    if (a->drawn_once && !pending && !a->view.live && !lp->shown && !a->diff)
        pending |= tui_layers_ahead(lp->self, &a->view);
    a->work_pending = pending;
}

/* ---- actions --------------------------------------------------------------------------------- */

static void mark(struct tui_app *a, int pane)
{
    a->panes[pane].dirty = true;
    a->header_dirty = a->footer_dirty = true;
}

static void do_search(struct tui_app *a, int dir)
{
    /* on a worker: the Gantt says its progress, then selects what it found */
    tui_gantt_search_start(a->panes[P_GANTT].self, &a->view, a->search, dir);
    a->work_pending = true;
    mark(a, P_GANTT);
}

static void load_theme(struct tui_app *a, size_t idx)
{
    a->theme_idx = idx;
    const char *name = a->themes.names[a->theme_idx];
    struct diag d;
    if (tui_theme_load(&a->theme, name, a->user_dir, &d) < 0) {
        char line[700];
        tui_view_message(&a->view, TUI_STYLE_ERROR, "theme: %s (using the default)",
                         diag_format(&d, line, sizeof(line)));
    } else {
        char q[128];
        sim_escape(name, strlen(name), q, sizeof(q));
        tui_view_message(&a->view, TUI_STYLE_STATUS, "theme: %s", q);
    }
    a->theme_rev++;
}

static void next_theme(struct tui_app *a)
{
    if (a->themes.len)
        load_theme(a, (a->theme_idx + 1) % a->themes.len);
}

static int focus_order(const struct tui_app *a, int i)
{
    const int order[3] = {P_GANTT, left_slot(a), P_DETAILS};
    return order[i];
}

static void cycle_focus(struct tui_app *a, int dir)
{
    int i = 0;
    for (int k = 0; k < 3; k++)
        if (focus_order(a, k) == a->focus)
            i = k;
    a->focus = focus_order(a, (i + 3 + dir) % 3);
    layout(a);
}

static enum tui_result control(struct tui_app *a, enum tui_control c)
{
    if (!a->src->ops->control) {
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "a saved trace: nothing to run (space, s, S, c drive a live simulation)");
        return TUI_RES_REDRAW;
    }
    tui_task_release(); /* the model is about to change: live analyses are cancelled */
    struct diag d;
    diag_clear(&d);
    if (a->src->ops->control(a->src, c, &d) < 0) {
        char line[700];
        tui_view_message(&a->view, TUI_STYLE_ERROR, "%s", diag_format(&d, line, sizeof(line)));
    } else {
        source_news(a);
    }
    a->header_dirty = true;
    return TUI_RES_REDRAW;
}

/* J: the selected op's PE (any PE when none is selected) to its next tl call on another line:
 * run by a live source, walked over the events of a saved trace or a finished run. */
static enum tui_result step_line(struct tui_app *a)
{
    struct tui_source_status st;
    a->src->ops->status(a->src, &st);
    if (!a->src->ops->step_line || st.mode == TUI_MODE_FINISHED || st.mode == TUI_MODE_POSTMORTEM) {
        tui_srcpane_step_line(&a->view);
        return TUI_RES_REDRAW;
    }
    char pe[128];
    trace_srcstep_pe_of(a->m, tui_view_focus_event(&a->view), pe, sizeof(pe));
    tui_task_release();
    struct diag d;
    diag_clear(&d);
    if (a->src->ops->step_line(a->src, pe, &d) < 0) {
        char line[700];
        tui_view_message(&a->view, TUI_STYLE_ERROR, "%s", diag_format(&d, line, sizeof(line)));
    } else {
        source_news(a);
    }
    a->header_dirty = true;
    return TUI_RES_REDRAW;
}

/* Go back (live sources with checkpoints). Returns only when it could not. */
static enum tui_result go_back(struct tui_app *a, enum tui_back how, uint64_t arg)
{
    if (!a->src->ops->back) {
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         a->src->ops->control
                             ? "going back needs checkpoints: not in this session"
                             : "a saved trace: nothing to run (these keys drive a live "
                               "simulation)");
        return TUI_RES_REDRAW;
    }
    struct app_carry k = {.focus = a->focus,
                          .left = a->left,
                          .maximized = a->maximized,
                          .bottom_hidden = a->bottom_hidden,
                          .theme_idx = a->theme_idx,
                          .filter_engine = a->view.filter_engine,
                          .filter_kind = a->view.filter_kind};
    tui_gantt_zoom_get(a->panes[P_GANTT].self, &k.zoom);
    tui_task_release();
    struct diag d;
    diag_clear(&d);
    if (a->src->ops->back(a->src, how, arg, &k, sizeof(k), &d) < 0) {
        char line[700];
        tui_view_message(&a->view, TUI_STYLE_ERROR, "%s", diag_format(&d, line, sizeof(line)));
    }
    a->header_dirty = true;
    return TUI_RES_REDRAW;
}

/* Ctrl-R: the plug-ins reloaded and the run started again (the source's reload), the app's
 * layout, filters and zoom kept; when it cannot, this run stays and the status line says why. */
static enum tui_result reload(struct tui_app *a)
{
    if (!a->src->ops->reload) {
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "Ctrl-R reloads the plug-ins of a run started here (npuscope run)");
        return TUI_RES_REDRAW;
    }
    struct app_carry k = {.focus = a->focus,
                          .left = a->left,
                          .maximized = a->maximized,
                          .bottom_hidden = a->bottom_hidden,
                          .theme_idx = a->theme_idx,
                          .filter_engine = a->view.filter_engine,
                          .filter_kind = a->view.filter_kind,
                          .reload = true};
    tui_gantt_zoom_get(a->panes[P_GANTT].self, &k.zoom);
    tui_task_release();
    struct diag d;
    diag_clear(&d);
    if (a->src->ops->reload(a->src, &k, sizeof(k), &d) == 0)
        return TUI_RES_QUIT;
    char line[700];
    tui_view_message(&a->view, TUI_STYLE_ERROR, "reload failed, this run stays: %s",
                     diag_format(&d, line, sizeof(line)));
    return TUI_RES_REDRAW;
}

static void run_until(struct tui_app *a, const char *text)
{
    struct tui_source_status st;
    a->src->ops->status(a->src, &st);
    uint64_t t;
    if (tui_app_parse_time(text, st.now, trace_model_clock_ghz(a->m), &t) < 0) {
        tui_view_message(&a->view, TUI_STYLE_ERROR,
                         "not a time: cycles (12000), a time with ns/us/ms (12.5us), or +N");
        return;
    }
    tui_task_release();
    struct diag d;
    diag_clear(&d);
    if (a->src->ops->run_until(a->src, t, &d) < 0) {
        char line[700];
        tui_view_message(&a->view, TUI_STYLE_ERROR, "%s", diag_format(&d, line, sizeof(line)));
        return;
    }
    if (source_news(a))
        return; /* a copy resumed from the checkpoint taken on the way: it went back */
    char a1[64];
    tui_view_message(&a->view, TUI_STYLE_STATUS, "running until %s",
                     tui_fmt_cycles_ns(a1, sizeof(a1), t, trace_model_clock_ghz(a->m)));
    a->header_dirty = true;
}

static void back_until(struct tui_app *a, const char *text)
{
    struct tui_source_status st;
    a->src->ops->status(a->src, &st);
    while (*text == ' ')
        text++;
    bool before_now = *text == '-';
    uint64_t t = 0;
    if (tui_app_parse_time(before_now ? text + 1 : text, before_now ? 0 : st.now,
                           trace_model_clock_ghz(a->m), &t) < 0) {
        tui_view_message(&a->view, TUI_STYLE_ERROR,
                         "not a time: cycles (12000), a time with ns/us/ms (12.5us), or -N");
        return;
    }
    if (before_now) /* -N: N before now */
        t = t < st.now ? st.now - t : 0;
    go_back(a, TUI_BACK_UNTIL, t);
}

/* ---- comparing two traces -------------------------------------------------------------- */

/* Close the comparison: the Gantt as it was before it opened. */
static void diff_close(struct tui_app *a)
{
    tui_diffview_close(a->diff);
    a->diff = NULL;
    a->diff_fatal = false;
    tui_gantt_zoom_set(a->panes[P_GANTT].self, &a->diff_zoom);
    mark(a, P_GANTT);
    a->full = a->header_dirty = true;
}

/* The comparison's note in the status line, once it is ready; the comparison closed with
 * why in the status line when its second trace could not be loaded. */
static void diff_note(struct tui_app *a)
{
    char err[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 128];
    if (a->diff_fatal && tui_diffview_load_failure(a->diff, &a->diff_err, &a->diff_errors))
        a->diff_failed = true; /* the run ends: said by its caller */
    if (tui_diffview_take_error(a->diff, err, sizeof(err))) {
        diff_close(a);
        tui_view_message(&a->view, TUI_STYLE_ERROR, "%s", err);
        return;
    }
    const char *note = tui_diffview_take_note(a->diff);
    if (!note)
        return;
    if (note[0])
        tui_view_message(&a->view, TUI_STYLE_STATUS, "%s", note);
    else
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "comparing: a aligns, Enter shows an op and its match, D closes");
    a->full = a->header_dirty = true;
}

/* Open the comparison with b, or (b NULL) with the trace at path, loaded on the worker;
 * fatal: a failed load ends the run. */
static void diff_open(struct tui_app *a, struct trace_model *b, const char *path, bool fatal)
{
    struct tui_source_status st;
    a->src->ops->status(a->src, &st);
    if (!a->diff) /* the Gantt's zoom, put back when the comparison closes */
        tui_gantt_zoom_get(a->panes[P_GANTT].self, &a->diff_zoom);
    tui_diffview_free(a->diff);
    a->diff_fatal = fatal;
    a->diff = b ? tui_diffview_new_take(a->m, st.name, b, path, a->view.cursor)
                : tui_diffview_new_load(a->m, st.name, path, a->view.cursor);
    a->full = a->header_dirty = true;
    diff_note(a); /* on a worker: said once it is ready */
}

void tui_app_diff_take(struct tui_app *a, struct trace_model *b, const char *name)
{
    diff_open(a, b, name, false);
}

void tui_app_diff_load(struct tui_app *a, const char *path)
{
    diff_open(a, NULL, path, true);
}

bool tui_app_diff_failure(const struct tui_app *a, struct diag *d, uint64_t *errors)
{
    if (!a->diff_failed)
        return false;
    *d = a->diff_err;
    *errors = a->diff_errors;
    return true;
}

/* D: open the prompt for a second trace, or close the comparison. */
static enum tui_result diff_toggle(struct tui_app *a)
{
    if (a->diff) {
        diff_close(a);
        tui_view_message(&a->view, TUI_STYLE_STATUS, "comparison closed");
        return TUI_RES_REDRAW;
    }
    if (a->src->ops->control) {
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "D compares saved traces: write this one (w), then npuscope view it");
        return TUI_RES_REDRAW;
    }
    a->prompt = true;
    a->pkind = PROMPT_DIFF;
    a->plen = 0;
    a->footer_dirty = true;
    return TUI_RES_REDRAW;
}

/* The prompt's file: loaded and compared on the worker, its progress shown meanwhile (D or
 * Esc closes it, q quits), or why not in the status line once the load failed. */
static void open_diff(struct tui_app *a, const char *path)
{
    diff_open(a, NULL, path, false);
}

/* y, T, A, m: show pane p in the left bottom slot with the keyboard, or when it has both
 * already, go back to the summary. */
static enum tui_result toggle_left(struct tui_app *a, int p)
{
    if (a->left == p && a->focus == p) {
        a->left = P_SUMMARY;
        a->focus = P_SUMMARY;
    } else {
        a->left = p;
        a->focus = p;
    }
    layout(a);
    return TUI_RES_REDRAW;
}

static enum tui_result global_action(struct tui_app *a, enum tui_action act)
{
    switch (act) {
    case TUI_ACT_QUIT: return TUI_RES_QUIT;
    case TUI_ACT_HELP:
        a->help = a->help_dirty = true;
        a->help_scroll = 0;
        return TUI_RES_REDRAW;
    case TUI_ACT_REDRAW:
        a->repaint = true;
        a->full = true;
        return TUI_RES_REDRAW;
    case TUI_ACT_NEXT_PANE: cycle_focus(a, 1); return TUI_RES_REDRAW;
    case TUI_ACT_PREV_PANE: cycle_focus(a, -1); return TUI_RES_REDRAW;
    case TUI_ACT_MEMORY: return toggle_left(a, P_MEMORY);
    case TUI_ACT_LAYERS: return toggle_left(a, P_LAYERS);
    case TUI_ACT_TOKENS: return toggle_left(a, P_TOKENS);
    case TUI_ACT_ANOMALIES: return toggle_left(a, P_ANOMALIES);
    case TUI_ACT_SOURCE: return toggle_left(a, P_SOURCE);
    case TUI_ACT_REVERSE:
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "r reverses the order of the layer breakdown (y shows it)");
        return TUI_RES_REDRAW;
    case TUI_ACT_BOTTLENECK:
        a->bottom_hidden = false; /* v shows the pane even when b hid the bottom */
        return toggle_left(a, P_BOTTLENECK);
    case TUI_ACT_MAXIMIZE:
        a->maximized = !a->maximized;
        layout(a);
        return TUI_RES_REDRAW;
    case TUI_ACT_TOGGLE_BOTTOM:
        a->bottom_hidden = !a->bottom_hidden;
        a->focus = P_GANTT;
        layout(a);
        return TUI_RES_REDRAW;
    case TUI_ACT_THEME: next_theme(a); return TUI_RES_REDRAW;
    case TUI_ACT_SEARCH:
        a->prompt = true;
        a->pkind = PROMPT_SEARCH;
        a->plen = 0;
        a->footer_dirty = true;
        return TUI_RES_REDRAW;
    case TUI_ACT_SEARCH_NEXT:
    case TUI_ACT_SEARCH_PREV:
        if (!a->search[0])
            tui_view_message(&a->view, TUI_STYLE_STATUS, "no search yet: / starts one");
        else
            do_search(a, act == TUI_ACT_SEARCH_NEXT ? 1 : -1);
        return TUI_RES_REDRAW;
    case TUI_ACT_CLEAR:
        tui_view_select(&a->view, TUI_NO_EVENT);
        tui_view_filter(&a->view, -1, -1);
        tui_view_mark(&a->view, TRACE_NO_STR, TRACE_NO_STR);
        mark(a, P_GANTT);
        return TUI_RES_REDRAW;
    case TUI_ACT_PAUSE: return control(a, TUI_CTL_PAUSE);
    case TUI_ACT_STEP: return control(a, TUI_CTL_STEP);
    case TUI_ACT_STEP_OP: return control(a, TUI_CTL_STEP_OP);
    case TUI_ACT_STEP_LINE: return step_line(a);
    case TUI_ACT_CONTINUE: return control(a, TUI_CTL_CONTINUE);
    case TUI_ACT_FASTER: return control(a, TUI_CTL_FASTER);
    case TUI_ACT_SLOWER: return control(a, TUI_CTL_SLOWER);
    case TUI_ACT_WRITE: return control(a, TUI_CTL_WRITE);
    case TUI_ACT_RUN_UNTIL: return tui_app_open_prompt(a, PROMPT_UNTIL);
    case TUI_ACT_BACK_STEP: return go_back(a, TUI_BACK_EVENT, 0);
    case TUI_ACT_BACK_OP: return go_back(a, TUI_BACK_OP, 0);
    case TUI_ACT_BACK_BREAK: return go_back(a, TUI_BACK_BREAK, 0);
    case TUI_ACT_RELOAD: return reload(a);
    case TUI_ACT_BACK_UNTIL:
        if (!a->src->ops->back)
            return go_back(a, TUI_BACK_UNTIL, 0); /* says why not */
        return tui_app_open_prompt(a, PROMPT_BACK);
    case TUI_ACT_BREAK_ADD: return tui_app_open_prompt(a, PROMPT_BREAK);
    case TUI_ACT_BREAK_LIST:
        if (!a->src->ops->break_count)
            return tui_app_open_prompt(a, PROMPT_BREAK); /* says there is nothing to run */
        a->bplist = a->help_dirty = true;
        return TUI_RES_REDRAW;
    case TUI_ACT_FOLLOW:
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "a saved trace: there is no \"now\" to follow");
        return TUI_RES_REDRAW;
    case TUI_ACT_HEX:
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "x: in the live memory pane (m), a tensor's values as hex");
        return TUI_RES_REDRAW;
    case TUI_ACT_DIFF: return diff_toggle(a);
    case TUI_ACT_DIFF_ALIGN:
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "a aligns the two traces of a comparison (D opens one)");
        return TUI_RES_REDRAW;
    default: return TUI_RES_HANDLED;
    }
}

/* Keys while comparing: the comparison's own, then the few global ones. */
static enum tui_result diff_key(struct tui_app *a, enum tui_action act)
{
    if (act == TUI_ACT_CLEAR && tui_diffview_computing(a->diff)) /* Esc: as D */
        return diff_toggle(a);
    enum tui_result r = tui_diffview_action(a->diff, act, &a->view);
    if (r != TUI_RES_IGNORED) {
        a->header_dirty = a->footer_dirty = true;
        return r;
    }
    switch (act) {
    case TUI_ACT_QUIT:
    case TUI_ACT_HELP:
    case TUI_ACT_REDRAW:
    case TUI_ACT_THEME:
    case TUI_ACT_DIFF: return global_action(a, act);
    default: {
        char keys[64];
        size_t n;
        const struct tui_action_info *acts = tui_keymap_actions(&n);
        const char *what = "that";
        for (size_t i = 0; i < n; i++)
            if (acts[i].action == act)
                what = acts[i].help;
        tui_keymap_keys(act, keys, sizeof(keys));
        tui_view_message(&a->view, TUI_STYLE_STATUS, "%s (%s): not while comparing (D closes)",
                         keys, what);
        return TUI_RES_REDRAW;
    }
    }
}

/* Actions on the time axis and the rows reach the Gantt whichever pane has the keyboard. */
static bool gantt_wide(enum tui_action act)
{
    switch (act) {
    case TUI_ACT_ZOOM_IN:
    case TUI_ACT_ZOOM_OUT:
    case TUI_ACT_FIT:
    case TUI_ACT_PAN_LEFT:
    case TUI_ACT_PAN_RIGHT:
    case TUI_ACT_CURSOR_LEFT:
    case TUI_ACT_CURSOR_RIGHT:
    case TUI_ACT_START:
    case TUI_ACT_END:
    case TUI_ACT_NEXT_OP:
    case TUI_ACT_PREV_OP:
    case TUI_ACT_FOLD_ALL:
    case TUI_ACT_FILTER_ENGINE:
    case TUI_ACT_FILTER_KIND:
    case TUI_ACT_FOLLOW:
    case TUI_ACT_PATH:
    case TUI_ACT_PATH_NEXT:
    case TUI_ACT_PATH_PREV:
    case TUI_ACT_HEATMAP:
    case TUI_ACT_UTILIZATION:
    case TUI_ACT_POWER: return true;
    default: return false;
    }
}

/* n and N: the next or previous of what the user walked last (search matches, anomalies,
 * a source line's ops), whichever pane has the focus; the status line says which. Once the
 * pane of a walked list is closed, the last search again (or nothing). */
static enum tui_result walk_next(struct tui_app *a, enum tui_action act)
{
    int p = a->walk == WALK_ANOMALIES ? P_ANOMALIES : a->walk == WALK_SOURCE ? P_SOURCE : -1;
    if (p >= 0 && a->left != p) { /* its pane was closed: back to the last search */
        a->walk = a->search[0] ? WALK_SEARCH : WALK_PANE;
        if (!a->search[0]) {
            tui_view_message(&a->view, TUI_STYLE_STATUS,
                             "nothing to walk: the %s pane is closed and there is no search "
                             "(/ starts one)",
                             p == P_ANOMALIES ? "anomalies" : "source");
            return TUI_RES_REDRAW;
        }
        p = -1;
    }
    if (p < 0) {
        if (!a->search[0])
            tui_view_message(&a->view, TUI_STYLE_STATUS, "no search yet: / starts one");
        else
            do_search(a, act == TUI_ACT_SEARCH_NEXT ? 1 : -1);
        return TUI_RES_REDRAW;
    }
    enum tui_result r = a->panes[p].ops->action(a->panes[p].self, act, &a->view);
    mark(a, p);
    return r == TUI_RES_IGNORED ? TUI_RES_HANDLED : r;
}

static enum tui_result dispatch(struct tui_app *a, enum tui_action act)
{
    bool walking = act == TUI_ACT_SEARCH_NEXT || act == TUI_ACT_SEARCH_PREV;
    if (walking && a->walk != WALK_PANE)
        return walk_next(a, act);
    if ((walking || act == TUI_ACT_SELECT) && (a->focus == P_ANOMALIES || a->focus == P_SOURCE))
        a->walk = a->focus == P_ANOMALIES ? WALK_ANOMALIES : WALK_SOURCE; /* walked from here */
    struct pane *f = &a->panes[a->focus];
    enum tui_result r = TUI_RES_IGNORED;
    int handler = a->focus;
    if (f->ops->action)
        r = f->ops->action(f->self, act, &a->view);
    if (r == TUI_RES_IGNORED && a->focus != P_GANTT && gantt_wide(act)) {
        handler = P_GANTT;
        r = tui_gantt_ops.action(a->panes[P_GANTT].self, act, &a->view);
    }
    if (r == TUI_RES_IGNORED)
        return global_action(a, act);
    if (r == TUI_RES_REDRAW)
        mark(a, handler);
    return r;
}

/* A pane asked the Gantt to show something (tui_view_goto): select its op, zoom to it,
 * move the cursor. */
static void apply_goto(struct tui_app *a)
{
    struct tui_view *v = &a->view;
    if (v->goto_rev == a->goto_seen)
        return;
    a->goto_seen = v->goto_rev;
    struct tui_gantt *g = a->panes[P_GANTT].self;
    if (v->goto_event != TUI_NO_EVENT)
        tui_gantt_select(g, v, v->goto_event);
    tui_gantt_show_span(g, v, v->goto_t0, v->goto_t1, v->goto_cursor);
    mark(a, P_GANTT);
}

static void prompt_key(struct tui_app *a, int key)
{
    a->footer_dirty = true;
    if (key == TUI_KEY_ESC) {
        a->prompt = false;
        return;
    }
    if (key == TUI_KEY_ENTER || key == '\r' || key == '\n') {
        a->prompt = false;
        if (!a->plen)
            return;
        char text[sizeof(a->pbuf)];
        memcpy(text, a->pbuf, a->plen);
        text[a->plen] = '\0';
        if (a->pkind == PROMPT_BREAK) {
            tui_app_add_breakpoint(a, text);
        } else if (a->pkind == PROMPT_UNTIL) {
            run_until(a, text);
        } else if (a->pkind == PROMPT_DIFF) {
            open_diff(a, text);
        } else if (a->pkind == PROMPT_BACK) {
            back_until(a, text);
        } else {
            memcpy(a->search, text, a->plen + 1);
            a->walk = WALK_SEARCH;
            tui_view_select(&a->view, TUI_NO_EVENT);
            do_search(a, 1);
        }
        return;
    }
    if (key == TUI_KEY_BACKSPACE || key == 0x7F || key == 0x08) {
        while (a->plen > 0 && ((unsigned char)a->pbuf[a->plen - 1] & 0xC0) == 0x80)
            a->plen--; /* continuation bytes of the last character */
        if (a->plen > 0)
            a->plen--;
        return;
    }
    if (key == TUI_KEY_CTRL('u')) {
        a->plen = 0;
        return;
    }
    if (key < 0x20 || key >= 0x110000 || sim_escape_needed((uint32_t)key))
        return;
    char enc[4];
    size_t n = sim_utf8_encode((uint32_t)key, enc);
    if (a->plen + n < sizeof(a->pbuf)) {
        memcpy(a->pbuf + a->plen, enc, n);
        a->plen += n;
    }
}

enum tui_result tui_app_key(struct tui_app *a, int key)
{
    enum tui_action act = tui_keymap_lookup(key);
    if (a->too_small) {
        if (act == TUI_ACT_QUIT)
            return TUI_RES_QUIT;
        return TUI_RES_HANDLED;
    }
    if (a->help) {
        int max = a->help_lines > a->help_visible ? a->help_lines - a->help_visible : 0;
        int page = a->help_visible > 1 ? a->help_visible - 1 : 10;
        if (act == TUI_ACT_DOWN || act == TUI_ACT_PAGE_DOWN)
            a->help_scroll += act == TUI_ACT_DOWN ? 1 : page;
        else if (act == TUI_ACT_UP || act == TUI_ACT_PAGE_UP)
            a->help_scroll -= act == TUI_ACT_UP ? 1 : page;
        else
            a->help = false, a->full = true;
        a->help_dirty = true;
        if (a->help_scroll < 0)
            a->help_scroll = 0;
        if (a->help_lines && a->help_scroll > max)
            a->help_scroll = max;
        return TUI_RES_REDRAW;
    }
    if (a->bplist)
        return tui_app_bplist_key(a, key);
    if (a->prompt) {
        prompt_key(a, key);
        return TUI_RES_REDRAW;
    }
    if (a->view.message[0])
        tui_view_message(&a->view, TUI_STYLE_NORMAL, "%s", "");
    if (act == TUI_ACT_NONE) {
        char name[16];
        tui_key_name(key, name, sizeof(name));
        tui_view_message(&a->view, TUI_STYLE_STATUS, "key %s does nothing here (? lists the keys)",
                         name);
        return TUI_RES_REDRAW;
    }
    if (a->diff)
        return diff_key(a, act);
    enum tui_result r = dispatch(a, act);
    apply_goto(a);
    return r;
}

enum tui_result tui_app_mouse(struct tui_app *a, int x, int y, int button)
{
    if (a->too_small || a->prompt || (a->diff && !a->help))
        return TUI_RES_HANDLED;
    if (a->help) {
        a->help = false;
        a->full = true;
        return TUI_RES_REDRAW;
    }
    for (int i = 0; i < P_COUNT; i++) {
        struct pane *p = &a->panes[i];
        struct tui_rect r = p->rect;
        if (!p->shown || x < r.x || x >= r.x + r.w || y < r.y || y >= r.y + r.h)
            continue;
        if (a->focus != i) {
            mark(a, a->focus);
            a->focus = i;
            mark(a, i);
        }
        if (!p->ops->mouse)
            return TUI_RES_REDRAW;
        enum tui_result res = p->ops->mouse(p->self, x, y, button, &a->view);
        if (res == TUI_RES_REDRAW)
            mark(a, i);
        apply_goto(a);
        return res;
    }
    return TUI_RES_HANDLED;
}

/* ---- the main loop -------------------------------------------------------------------------- */

bool tui_app_frame_held(bool busy, bool was_running, bool running, bool answer, bool result,
                        uint64_t since_ns, uint64_t frame_ns)
{
    bool stopped = was_running && !running;
    return busy && !stopped && !answer && !(result && !running) && since_ns < frame_ns;
}

uint64_t tui_app_frame_pace(uint64_t *avg_ns, uint64_t cost_ns)
{
    *avg_ns = *avg_ns ? (3 * *avg_ns + cost_ns) / 4 : cost_ns;
    uint64_t pace = FRAME_SHARE * *avg_ns;
    return pace > FRAME_NS ? pace : FRAME_NS;
}

int tui_app_run(struct tui_app *a, struct tui_term *t)
{
    uint64_t theme_seen = UINT64_MAX, last_draw = 0;
    /* while running, the screen follows the run at most every frame_ns: a frame, or
     * FRAME_SHARE times what the frames take to draw when drawing costs more, so that
     * drawing takes at most a fortieth of the time (a long run's Gantt costs a few ms a
     * frame; tui_app_frame_pace); what a person types is answered at once, ahead of the
     * next slice of work */
    uint64_t frame_ns = FRAME_NS, frame_avg = 0;
    bool answer = false, paced = false;
    int w, h;
    tui_term_size(t, &w, &h);
    tui_app_resize(a, w, h);
    a->canvas->mono = tui_term_colours(t) == 0;
    source_news(a); /* a run started again: what the last one handed on */
    for (;;) {
        uint64_t rev;
        const struct tui_theme *th = tui_app_theme(a, &rev);
        if (rev != theme_seen) {
            tui_term_set_theme(t, th);
            theme_seen = rev;
        }
        if (a->diff_fatal)
            diff_note(a); /* a second trace given at the start that failed to load: the end */
        if (a->diff_failed)
            return TUI_APP_DIFF_FAILED;
        bool busy = tui_app_busy(a);
        bool was_running = a->src->ops->running(a->src);
        uint64_t spent = 0;
        if (busy && !answer) {
            uint64_t w0 = tui_now_ns();
            tui_app_work(a, WORK_NS);
            spent = tui_now_ns() - w0;
        }
        if (a->resumed) { /* the terminal may have changed size since the checkpoint */
            a->resumed = false;
            tui_term_size(t, &w, &h);
            tui_app_resize(a, w, h);
            last_draw = 0;
        }
        uint64_t now = tui_now_ns();
        bool throttled = tui_app_frame_held(busy, was_running, a->src->ops->running(a->src), answer,
                                            a->result, now - last_draw, frame_ns);
        if (!throttled && tui_app_needs_render(a)) {
            uint64_t cpu0 = tui_cpu_ns();
            if (tui_app_take_repaint(a))
                tui_term_invalidate(t);
            tui_term_draw(t, tui_app_render(a));
            trace_budget_check(); /* what the frame mapped, given back now if due */
            /* the first frame builds what the next ones reuse (the Gantt's kinds, a pane's
             * first figures): its cost says nothing of theirs */
            if (paced)
                frame_ns = tui_app_frame_pace(&frame_avg, tui_cpu_ns() - cpu0);
            paced = true;
            last_draw = now;
            tui_app_result_shown(a);
        }
        answer = false;
        /* wait for input: not at all while there is work, else until something happens;
         * a slowed-down simulation until its next event is due; panes whose last slice had
         * nothing to do yet (a refresh that is not due) a few ms; a frame held back until
         * it may be drawn. Then take every input already queued before drawing again. */
        int timeout = -1;
        if (a->src->ops->running(a->src))
            timeout = tui_task_holding() && !a->ahead ? HOLD_WAIT_MS
                      : a->src->ops->wait_ms          ? a->src->ops->wait_ms(a->src)
                                                      : 0;
        if (a->work_pending) {
            int wk = spent < IDLE_WORK_NS ? IDLE_WAIT_MS : 0;
            timeout = timeout < 0 || wk < timeout ? wk : timeout;
        }
        if (timeout != 0 && tui_app_needs_render(a)) {
            uint64_t since = tui_now_ns() - last_draw;
            int frame_ms = since >= frame_ns ? 0 : (int)((frame_ns - since) / 1000000) + 1;
            timeout = timeout < 0 || frame_ms < timeout ? frame_ms : timeout;
        }
        int fd = a->src->ops->wait_fd ? a->src->ops->wait_fd(a->src) : -1;
        for (int k = 0; k < 64; k++) {
            struct tui_input in;
            tui_term_wait_fd(t, k == 0 ? timeout : 0, fd, &in);
            if (in.kind == TUI_IN_NONE || in.kind == TUI_IN_READY)
                break;
            if (in.kind == TUI_IN_SIGNAL) {
                tui_task_exit_status(128 + in.signo);
                return 128 + in.signo;
            }
            answer = true;
            if (in.kind == TUI_IN_RESIZE) {
                tui_term_size(t, &w, &h);
                tui_app_resize(a, w, h);
            } else if (in.kind == TUI_IN_MOUSE) {
                tui_app_mouse(a, in.x, in.y, in.button);
            } else if (tui_app_key(a, in.key) == TUI_RES_QUIT) {
                return 0;
            }
        }
    }
}
