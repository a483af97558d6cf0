/*
 * The footer prompt's breakpoints and times, and the breakpoint list (X), of the TUI
 * application (tui/app/app_int.h).
 */
#include "tui/app/app_int.h"

#include "tui/source/linebp.h"
#include "tui/term/keymap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open the footer prompt for a breakpoint or a time (live sources only). */
enum tui_result tui_app_open_prompt(struct tui_app *a, enum prompt_kind k)
{
    if (!a->src->ops->control) {
        tui_view_message(&a->view, TUI_STYLE_STATUS,
                         "a saved trace: nothing to run (these keys drive a live simulation)");
        return TUI_RES_REDRAW;
    }
    a->prompt = true;
    a->pkind = k;
    a->plen = 0;
    a->footer_dirty = true;
    return TUI_RES_REDRAW;
}

/* A breakpoint from the prompt: "c GLOB" (component), "o NAME" (op), "m NAME" (marker),
 * "FILE:LINE [pe=N]" (a kernel line), or a condition on a metric ("hbm.util > 0.9", "idle(te) >
 * 5us", "op.duration > 2us"); without a kind, a pattern with a dot is a component, else an op name.
 */
void tui_app_add_breakpoint(struct tui_app *a, const char *text)
{
    while (*text == ' ')
        text++;
    enum tui_break_kind kind = strchr(text, '.') ? TUI_BREAK_COMPONENT : TUI_BREAK_OP;
    if (strchr(text, '<') || strchr(text, '>'))
        kind = TUI_BREAK_METRIC;
    if (tui_linebp_looks(text))
        kind = TUI_BREAK_LINE; /* vector_add.c:47 [pe=3] */
    static const struct {
        const char *word;
        enum tui_break_kind kind;
    } words[] = {{"c", TUI_BREAK_COMPONENT}, {"component", TUI_BREAK_COMPONENT},
                 {"o", TUI_BREAK_OP},        {"op", TUI_BREAK_OP},
                 {"m", TUI_BREAK_MARKER},    {"marker", TUI_BREAK_MARKER}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t n = strlen(words[i].word);
        if (strncmp(text, words[i].word, n) == 0 && text[n] == ' ') {
            kind = words[i].kind;
            text += n;
            break;
        }
    }
    struct diag d;
    diag_clear(&d);
    if (a->src->ops->break_add(a->src, kind, text, &d) < 0) {
        tui_view_message(&a->view, TUI_STYLE_ERROR,
                         "%s (c GLOB, o NAME, m NAME, FILE:LINE or a condition)", d.msg);
        return;
    }
    char what[200];
    size_t n = a->src->ops->break_count(a->src);
    a->src->ops->break_describe(a->src, n - 1, what, sizeof(what));
    tui_view_message(&a->view, TUI_STYLE_STATUS, "breakpoint %s (X lists them)", what);
}

/*
 * A time from the prompt: cycles ("12000"), or a time with a unit ("12.5us", "800 ns",
 * "3ms"); "+" makes it relative to now. Returns 0 with *out in cycles, or -1.
 */
int tui_app_parse_time(const char *text, uint64_t now, double ghz, uint64_t *out)
{
    while (*text == ' ')
        text++;
    bool rel = *text == '+';
    if (rel)
        text++;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !(v >= 0) || !isfinite(v))
        return -1;
    while (*end == ' ')
        end++;
    double cycles = v;
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    if (*end) {
        size_t k = 0;
        while (k < sizeof(units) / sizeof(units[0]) && strcmp(end, units[k].unit) != 0)
            k++;
        if (k == sizeof(units) / sizeof(units[0]) || !(ghz > 0))
            return -1;
        cycles = v * units[k].ns * ghz;
    }
    cycles = rel ? (double)now + cycles : cycles;
    if (cycles > 9e15)
        return -1;
    *out = (uint64_t)llround(cycles);
    return 0;
}

/* The breakpoint list: keys while it is open. */
enum tui_result tui_app_bplist_key(struct tui_app *a, int key)
{
    size_t n = a->src->ops->break_count ? a->src->ops->break_count(a->src) : 0;
    enum tui_action act = tui_keymap_lookup(key);
    a->help_dirty = true;
    if ((key == 'd' || key == TUI_KEY_DELETE || key == TUI_KEY_BACKSPACE) && n) {
        char what[200];
        a->src->ops->break_describe(a->src, a->bp_sel, what, sizeof(what));
        a->src->ops->break_remove(a->src, a->bp_sel);
        tui_view_message(&a->view, TUI_STYLE_STATUS, "breakpoint %.*s removed",
                         (int)strcspn(what, ":"), what);
        if (a->bp_sel + 1 >= n && a->bp_sel > 0)
            a->bp_sel--;
        return TUI_RES_REDRAW;
    }
    if (act == TUI_ACT_UP) {
        a->bp_sel = a->bp_sel ? a->bp_sel - 1 : 0;
        return TUI_RES_REDRAW;
    }
    if (act == TUI_ACT_DOWN) {
        a->bp_sel = a->bp_sel + 1 < n ? a->bp_sel + 1 : a->bp_sel;
        return TUI_RES_REDRAW;
    }
    a->bplist = false;
    a->full = true;
    if (act == TUI_ACT_BREAK_ADD)
        return tui_app_open_prompt(a, PROMPT_BREAK);
    return TUI_RES_REDRAW;
}

/* The breakpoint list, over the body. */
void tui_app_draw_bplist(struct tui_app *a)
{
    struct tui_canvas *c = a->canvas;
    size_t n = a->src->ops->break_count(a->src);
    int w = c->w - 4 < 76 ? c->w - 4 : 76;
    int h = (int)n + 4 < c->h - 2 ? (int)n + 4 : c->h - 2;
    if (h < 5)
        h = 5 < c->h - 2 ? 5 : c->h - 2;
    struct tui_rect box = {(c->w - w) / 2, 1 + (c->h - 2 - h) / 2, w, h};
    tui_canvas_box(c, box, " Breakpoints (d remove, B add, any other key closes) ");
    if (!n)
        tui_canvas_text(c, box.x + 2, box.y + 1, box.w - 4, TUI_STYLE_DIM,
                        "none: B adds one (c GLOB, o NAME, m NAME, hbm.util > 0.9)",
                        TUI_TEXT_ELLIPSIS);
    if (a->bp_sel >= n)
        a->bp_sel = n ? n - 1 : 0;
    int rows = box.h - 2;
    size_t top = a->bp_sel >= (size_t)rows ? a->bp_sel - (size_t)rows + 1 : 0;
    for (int k = 0; k < rows && top + (size_t)k < n; k++) {
        size_t i = top + (size_t)k;
        char what[200], line[240];
        a->src->ops->break_describe(a->src, i, what, sizeof(what));
        snprintf(line, sizeof(line), " %s", what);
        enum tui_style st = i == a->bp_sel ? TUI_STYLE_SELECTION : TUI_STYLE_NORMAL;
        tui_canvas_fill(c, (struct tui_rect){box.x + 1, box.y + 1 + k, box.w - 2, 1}, ' ', st);
        tui_canvas_text(c, box.x + 2, box.y + 1 + k, box.w - 4, st, line, TUI_TEXT_ELLIPSIS);
    }
    tui_canvas_unclip(c);
}
