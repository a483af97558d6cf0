/* The help overlay, generated from the key map. */
#include "tui/app/help.h"

#include "tui/term/keymap.h"

#include <stdio.h>
#include <string.h>

/* One entry of the help: a heading, a key binding, or legend text; text too long for the box
 * goes on as many lines as it needs, under itself. */
static void emit(struct tui_canvas *c, struct tui_rect box, int *n, int scroll, int kw,
                 const char *keys, const char *text, enum tui_style text_style)
{
    int x = box.x + 2, w = box.w - 4;
    if (keys)
        x += kw, w -= kw;
    size_t len = strlen(text), at = 0, next;
    do {
        int y = box.y + 1 + *n - scroll;
        (*n)++;
        size_t k = tui_text_wrap(text + at, len - at, w, &next);
        if (y <= box.y || y >= box.y + box.h - 1) {
            at += next;
            continue;
        }
        if (keys && at == 0)
            tui_canvas_text(c, box.x + 2, y, kw, TUI_STYLE_KEY, keys, TUI_TEXT_ELLIPSIS);
        tui_canvas_textn(c, x, y, w, text_style, text + at, k, 0);
        at += next;
    } while (at < len);
}

/* A legend line: a glyph in a style, then what it means. */
static void legend(struct tui_canvas *c, struct tui_rect box, int *n, int scroll, int kw,
                   const uint32_t *glyphs, const enum tui_style *styles, int count,
                   const char *text)
{
    int y = box.y + 1 + *n - scroll;
    emit(c, box, n, scroll, kw, "", text, TUI_STYLE_NORMAL);
    if (y <= box.y || y >= box.y + box.h - 1)
        return;
    for (int i = 0; i < count && i < kw - 1; i++)
        tui_canvas_put(c, box.x + 2 + i, y, glyphs[i], styles[i]);
}

int tui_help_render(struct tui_canvas *c, struct tui_rect r, int scroll, bool live, int *visible)
{
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    int w = r.w - 4 < 76 ? r.w - 4 : 76, h = r.h - 2;
    if (w < 20)
        w = r.w;
    if (h < 3)
        h = r.h;
    struct tui_rect box = {r.x + (r.w - w) / 2, r.y + (r.h - h) / 2, w, h};
    tui_canvas_box(c, box, " npuscope keys (Up/Down scroll, any other key closes) ");
    int kw = 18, n = 0;
    size_t na;
    const struct tui_action_info *acts = tui_keymap_actions(&na);
    const char *group = NULL;
    for (size_t i = 0; i < na; i++) {
        if (acts[i].live && !live)
            continue;
        if (!group || strcmp(group, acts[i].group) != 0) {
            if (group)
                emit(c, box, &n, scroll, 0, NULL, "", TUI_STYLE_NORMAL);
            group = acts[i].group;
            emit(c, box, &n, scroll, 0, NULL, group, TUI_STYLE_GROUP);
        }
        char keys[64];
        tui_keymap_keys(acts[i].action, keys, sizeof(keys));
        emit(c, box, &n, scroll, kw, keys, acts[i].help, TUI_STYLE_NORMAL);
    }
    emit(c, box, &n, scroll, 0, NULL, "", TUI_STYLE_NORMAL);
    emit(c, box, &n, scroll, 0, NULL, "Gantt cells", TUI_STYLE_GROUP);
    const enum tui_style kinds[] = {TUI_STYLE_OP_MEMORY,   TUI_STYLE_OP_GEMM,
                                    TUI_STYLE_OP_MATH,     TUI_STYLE_OP_UNKNOWN,
                                    TUI_STYLE_OP_INFLIGHT, TUI_STYLE_OP_SELECTED};
    uint32_t full[6];
    for (size_t k = 0; k < 6; k++) /* without colours each kind has its character */
        full[k] = c->mono ? tui_mono_fill(kinds[k]) : gl->eighths[8];
    legend(c, box, &n, scroll, kw, full, kinds, 6,
           "memory, gemm, math, unknown ops; in flight; selected");
    const enum tui_style bar[] = {TUI_STYLE_OP_GEMM, TUI_STYLE_OP_GEMM, TUI_STYLE_OP_GEMM,
                                  TUI_STYLE_OP_GEMM};
    const uint32_t edges[] = {gl->eighths[8], gl->eighths[3], gl->right_half, gl->eighths[8]};
    legend(c, box, &n, scroll, kw, edges, bar, 4,
           "busy the whole column; an op starts or ends in it");
    const uint32_t shades[] = {gl->shade[1], gl->shade[2], gl->shade[3]};
    legend(c, box, &n, scroll, kw, shades, bar, 3, "work spread out: busy up to 1/3, 2/3, or more");
    const enum tui_style grp[] = {TUI_STYLE_GROUP, TUI_STYLE_GROUP, TUI_STYLE_GROUP};
    legend(c, box, &n, scroll, kw, shades, grp, 3, "a group row: the average of its rows");
    const uint32_t marks[] = {gl->cursor_mark, gl->vline, ' ', gl->marker_mark, gl->vline_light};
    const enum tui_style ms[] = {TUI_STYLE_CURSOR, TUI_STYLE_CURSOR, TUI_STYLE_NORMAL,
                                 TUI_STYLE_MARKER, TUI_STYLE_MARKER};
    legend(c, box, &n, scroll, kw, marks, ms, 5, "the time cursor; a marker");
    const enum tui_style crit[] = {TUI_STYLE_CRITICAL, TUI_STYLE_CRITICAL};
    const uint32_t crit_fill = c->mono ? tui_mono_fill(TUI_STYLE_CRITICAL) : gl->eighths[8];
    const uint32_t full2[] = {crit_fill, crit_fill};
    legend(c, box, &n, scroll, kw, full2, crit, 2, "an op on the critical path (C)");
    const uint32_t spark[] = {gl->spark[1], gl->spark[3], gl->spark[6], gl->spark[8]};
    const enum tui_style bws[] = {TUI_STYLE_BANDWIDTH, TUI_STYLE_BANDWIDTH, TUI_STYLE_BANDWIDTH,
                                  TUI_STYLE_BANDWIDTH};
    legend(c, box, &n, scroll, kw, spark, bws, 4,
           "an HBM, a link, a utilization strip: share of peak");
    const uint32_t heat[] = {gl->shade[1], gl->shade[2], gl->shade[3], gl->eighths[8]};
    const enum tui_style hs[] = {TUI_STYLE_HEAT_1, TUI_STYLE_HEAT_2, TUI_STYLE_HEAT_3,
                                 TUI_STYLE_HEAT_4};
    legend(c, box, &n, scroll, kw, heat, hs, 4, "heatmap: up to 1/4, 1/2, 3/4 of the peak, more");
    *visible = box.h - 2;
    tui_canvas_unclip(c);
    return n;
}
