/*
 * The canvas: cells in memory, written only through the functions below. Text goes
 * through sim/util/escape.h before it becomes cells, so no cell can carry a control character.
 */
#include "tui/term/canvas.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static void blank_all(struct tui_canvas *c)
{
    for (int i = 0; i < c->w * c->h; i++)
        c->cells[i] = (struct tui_cell){' ', TUI_STYLE_NORMAL, 1};
}

struct tui_canvas *tui_canvas_new(int w, int h, bool unicode)
{
    struct tui_canvas *c = sim_xcalloc(1, sizeof(*c));
    c->unicode = unicode;
    tui_canvas_resize(c, w, h);
    return c;
}

void tui_canvas_free(struct tui_canvas *c)
{
    if (!c)
        return;
    free(c->cells);
    free(c);
}

void tui_canvas_resize(struct tui_canvas *c, int w, int h)
{
    c->w = w > 0 ? w : 0;
    c->h = h > 0 ? h : 0;
    free(c->cells);
    c->cells = sim_xcalloc((size_t)c->w * (size_t)c->h + 1, sizeof(*c->cells));
    blank_all(c);
    tui_canvas_unclip(c);
}

void tui_canvas_clip(struct tui_canvas *c, struct tui_rect r)
{
    int x0 = r.x < 0 ? 0 : r.x, y0 = r.y < 0 ? 0 : r.y;
    int x1 = r.x + r.w > c->w ? c->w : r.x + r.w;
    int y1 = r.y + r.h > c->h ? c->h : r.y + r.h;
    c->clip = (struct tui_rect){x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
}

void tui_canvas_unclip(struct tui_canvas *c)
{
    c->clip = (struct tui_rect){0, 0, c->w, c->h};
}

static bool in_clip(const struct tui_canvas *c, int x, int y)
{
    return x >= c->clip.x && x < c->clip.x + c->clip.w && y >= c->clip.y &&
           y < c->clip.y + c->clip.h;
}

const struct tui_cell *tui_canvas_cell(const struct tui_canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return NULL;
    return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

static struct tui_cell *cell_at(struct tui_canvas *c, int x, int y)
{
    return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

/* Width of cp on this canvas, or -1 when it cannot be shown as itself. */
static int char_width(const struct tui_canvas *c, uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || (cp != '\\' && sim_escape_needed(cp)))
        return -1;
    if (cp < 0x7F)
        return 1;
    if (!c->unicode)
        return -1;
    int w = wcwidth((wchar_t)cp);
    return w >= 1 && w <= 2 ? w : -1;
}

/* Before overwriting cell (x, y), turn any double-width character it is half of into
 * plain spaces, so no half character is left behind. */
static void split_wide(struct tui_canvas *c, int x, int y)
{
    struct tui_cell *cell = cell_at(c, x, y);
    if (cell->width == 0 && x > 0)
        *cell_at(c, x - 1, y) = (struct tui_cell){' ', cell_at(c, x - 1, y)->style, 1};
    else if (cell->width == 2 && x + 1 < c->w)
        *cell_at(c, x + 1, y) = (struct tui_cell){' ', cell->style, 1};
}

int tui_canvas_put(struct tui_canvas *c, int x, int y, uint32_t cp, enum tui_style st)
{
    if (!in_clip(c, x, y))
        return 0;
    int w = char_width(c, cp);
    if (w < 0)
        cp = '?', w = 1;
    if (w == 2 && !in_clip(c, x + 1, y))
        cp = ' ', w = 1;
    split_wide(c, x, y);
    *cell_at(c, x, y) = (struct tui_cell){cp, (uint8_t)st, (uint8_t)w};
    if (w == 2) {
        split_wide(c, x + 1, y);
        *cell_at(c, x + 1, y) = (struct tui_cell){0, (uint8_t)st, 0};
    }
    return w;
}

void tui_canvas_fill(struct tui_canvas *c, struct tui_rect r, uint32_t cp, enum tui_style st)
{
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            tui_canvas_put(c, x, y, cp, st);
}

void tui_canvas_restyle(struct tui_canvas *c, int x, int y, enum tui_style st)
{
    if (!in_clip(c, x, y))
        return;
    struct tui_cell *cell = cell_at(c, x, y);
    cell->style = (uint8_t)st;
    if (cell->width == 2 && x + 1 < c->w)
        cell_at(c, x + 1, y)->style = (uint8_t)st;
    else if (cell->width == 0 && x > 0)
        cell_at(c, x - 1, y)->style = (uint8_t)st;
}

/* Splits text into the characters that will be drawn: printable characters as
 * themselves, everything else as the ASCII characters of its escape. */
struct text_iter {
    const char *s;
    size_t n, i;
    bool unicode, untrusted;
    char pend[16]; /* the rest of an escape being emitted */
    size_t plen, ppos;
};

static bool text_next(struct text_iter *it, const struct tui_canvas *c, uint32_t *cp, int *w)
{
    if (it->ppos < it->plen) {
        *cp = (unsigned char)it->pend[it->ppos++];
        *w = 1;
        return true;
    }
    if (it->i >= it->n)
        return false;
    uint32_t v;
    size_t k = sim_utf8_decode(it->s + it->i, it->n - it->i, &v);
    it->i += k;
    bool escape = sim_escape_needed(v) && (v != '\\' || it->untrusted);
    int width = escape ? -1 : char_width(c, v);
    if (v == 0xFFFD && width < 0 && !escape) {
        *cp = '?', *w = 1; /* invalid UTF-8 on an ASCII canvas */
        return true;
    }
    if (width < 0) {
        it->plen = sim_escape_cp(v, it->pend);
        it->ppos = 1;
        *cp = (unsigned char)it->pend[0];
        *w = 1;
        return true;
    }
    *cp = v, *w = width;
    return true;
}

static struct text_iter text_iter(const char *s, size_t n, bool unicode, unsigned flags)
{
    return (struct text_iter){
        .s = s, .n = n, .unicode = unicode, .untrusted = (flags & TUI_TEXT_UNTRUSTED) != 0};
}

int tui_text_width(const char *s, size_t n, bool unicode, unsigned flags)
{
    struct tui_canvas probe = {.unicode = unicode};
    struct text_iter it = text_iter(s, n, unicode, flags);
    uint32_t cp;
    int w, total = 0;
    while (text_next(&it, &probe, &cp, &w))
        total += w;
    return total;
}

int tui_canvas_textn(struct tui_canvas *c, int x, int y, int maxw, enum tui_style st, const char *s,
                     size_t n, unsigned flags)
{
    if (maxw <= 0)
        return 0;
    int total = tui_text_width(s, n, c->unicode, flags);
    int room = maxw;
    bool cut = total > maxw;
    if (cut && (flags & TUI_TEXT_ELLIPSIS))
        room = maxw - 1;
    if (!cut && (flags & TUI_TEXT_RIGHT))
        x += maxw - total;
    struct text_iter it = text_iter(s, n, c->unicode, flags);
    uint32_t cp;
    int w, used = 0;
    while (text_next(&it, c, &cp, &w)) {
        if (used + w > room)
            break;
        tui_canvas_put(c, x + used, y, cp, st);
        used += w;
    }
    if (cut && (flags & TUI_TEXT_ELLIPSIS)) {
        while (used < room) /* a double-width character did not fit */
            tui_canvas_put(c, x + used++, y, ' ', st);
        tui_canvas_put(c, x + used++, y, tui_glyphs(c->unicode)->ellipsis, st);
    }
    return used;
}

void tui_canvas_too_small(struct tui_canvas *c, int need_w, int need_h)
{
    tui_canvas_fill(c, (struct tui_rect){0, 0, c->w, c->h}, ' ', TUI_STYLE_NORMAL);
    const char *msg = c->w >= 16 ? "window too small" : "too small";
    int w = (int)strlen(msg);
    int y = c->h / 2 > 0 ? c->h / 2 - 1 : 0;
    tui_canvas_text(c, c->w > w ? (c->w - w) / 2 : 0, y, c->w, TUI_STYLE_ERROR, msg, 0);
    /* what it needs and has, never cut: on two lines when one is too narrow */
    char need[64], have[32];
    snprintf(have, sizeof(have), "have %dx%d", c->w, c->h);
    snprintf(need, sizeof(need), "need %dx%d, %s", need_w, need_h, have);
    if ((int)strlen(need) > c->w) {
        snprintf(need, sizeof(need), "need %dx%d", need_w, need_h);
        w = (int)strlen(have);
        tui_canvas_text(c, c->w > w ? (c->w - w) / 2 : 0, y + 2, c->w, TUI_STYLE_DIM, have, 0);
    }
    w = (int)strlen(need);
    tui_canvas_text(c, c->w > w ? (c->w - w) / 2 : 0, y + 1, c->w, TUI_STYLE_DIM, need, 0);
}

size_t tui_text_wrap(const char *s, size_t len, int w, size_t *next)
{
    size_t i = 0, space = SIZE_MAX;
    for (int col = 0; i < len && col < (w > 0 ? w : 1); col++) {
        if (s[i] == ' ')
            space = i;
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
    }
    size_t cut = i;
    if (i < len && s[i] != ' ' && space != SIZE_MAX && space > 0)
        cut = space; /* the word at the edge goes to the next line */
    size_t nx = cut;
    while (nx < len && s[nx] == ' ')
        nx++;
    *next = nx;
    return cut;
}

int tui_canvas_text(struct tui_canvas *c, int x, int y, int maxw, enum tui_style st, const char *s,
                    unsigned flags)
{
    return tui_canvas_textn(c, x, y, maxw, st, s, strlen(s), flags);
}

int tui_canvas_printf(struct tui_canvas *c, int x, int y, int maxw, enum tui_style st,
                      const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return tui_canvas_text(c, x, y, maxw, st, buf, 0);
}

static const char style_chars[TUI_STYLE_COUNT + 1] = {
    [TUI_STYLE_NORMAL] = '.',      [TUI_STYLE_DIM] = ',',           [TUI_STYLE_HEADER] = 'H',
    [TUI_STYLE_HEADER_MODE] = 'h', [TUI_STYLE_FOOTER] = 'F',        [TUI_STYLE_FOOTER_KEY] = 'f',
    [TUI_STYLE_STATUS] = 's',      [TUI_STYLE_ERROR] = '!',         [TUI_STYLE_PROMPT] = '>',
    [TUI_STYLE_BORDER] = '|',      [TUI_STYLE_TITLE] = 'T',         [TUI_STYLE_TITLE_FOCUS] = 't',
    [TUI_STYLE_RULER] = 'r',       [TUI_STYLE_CURSOR] = 'C',        [TUI_STYLE_MARKER] = 'k',
    [TUI_STYLE_LABEL] = 'L',       [TUI_STYLE_LABEL_SEL] = 'l',     [TUI_STYLE_GROUP] = 'g',
    [TUI_STYLE_OP_MEMORY] = 'M',   [TUI_STYLE_OP_GEMM] = 'G',       [TUI_STYLE_OP_MATH] = 'A',
    [TUI_STYLE_OP_UNKNOWN] = 'U',  [TUI_STYLE_OP_INFLIGHT] = 'I',   [TUI_STYLE_OP_SELECTED] = 'S',
    [TUI_STYLE_OP_TEXT] = 'o',     [TUI_STYLE_TOKEN_PREFILL] = 'P', [TUI_STYLE_TOKEN_DECODE] = 'D',
    [TUI_STYLE_TOKEN_ALT] = 'd',   [TUI_STYLE_BANDWIDTH] = 'W',     [TUI_STYLE_BAR] = 'B',
    [TUI_STYLE_BAR_EMPTY] = 'b',   [TUI_STYLE_VALUE] = 'v',         [TUI_STYLE_KEY] = 'K',
    [TUI_STYLE_TAB] = 'n',         [TUI_STYLE_TAB_ACTIVE] = 'N',    [TUI_STYLE_MEM_LIVE] = 'Y',
    [TUI_STYLE_SELECTION] = 'x',   [TUI_STYLE_MATCH] = 'm',
};

char tui_canvas_style_char(enum tui_style st)
{
    if ((unsigned)st >= TUI_STYLE_COUNT || !style_chars[st])
        return '?';
    return style_chars[st];
}

char *tui_canvas_dump(const struct tui_canvas *c, bool styles)
{
    size_t cap = (size_t)(c->w * 4 + 1) * (size_t)c->h * (styles ? 2 : 1) + 1;
    char *out = sim_xmalloc(cap), *p = out;
    for (int y = 0; y < c->h; y++) {
        char *end = p;
        for (int x = 0; x < c->w; x++) {
            const struct tui_cell *cell = tui_canvas_cell(c, x, y);
            if (cell->width == 0)
                continue;
            p += sim_utf8_encode(cell->cp, p);
            if (cell->cp != ' ')
                end = p;
        }
        p = end;
        *p++ = '\n';
        if (styles) {
            end = p;
            for (int x = 0; x < c->w; x++) {
                *p++ = tui_canvas_style_char(tui_canvas_cell(c, x, y)->style);
                if (tui_canvas_cell(c, x, y)->style != TUI_STYLE_NORMAL)
                    end = p;
            }
            p = end;
            *p++ = '\n';
        }
    }
    *p = '\0';
    return out;
}

static const struct tui_glyphs glyphs_unicode = {
    .eighths = {' ', 0x258F, 0x258E, 0x258D, 0x258C, 0x258B, 0x258A, 0x2589, 0x2588},
    .right_half = 0x2590,
    .right_8th = 0x2595,
    .shade = {' ', 0x2591, 0x2592, 0x2593},
    .spark = {' ', 0x2581, 0x2582, 0x2583, 0x2584, 0x2585, 0x2586, 0x2587, 0x2588},
    .hline = 0x2500,
    .vline = 0x2502,
    .vline_light = 0x250A,
    .tick = 0x2502,
    .cursor_mark = 0x25BC,
    .marker_mark = 0x25C6,
    .fold_open = 0x25BE,
    .fold_closed = 0x25B8,
    .ellipsis = 0x2026,
    .up = 0x25B2,
    .down = 0x25BC,
    .live = 0x25CF,
};

static const struct tui_glyphs glyphs_ascii = {
    .eighths = {' ', '.', '.', '-', '-', '=', '=', '#', '#'},
    .right_half = '=',
    .right_8th = '.',
    .shade = {' ', '.', ':', '+'},
    .spark = {' ', '_', '_', '.', '-', '=', '+', '*', '#'},
    .hline = '-',
    .vline = '|',
    .vline_light = ':',
    .tick = '|',
    .cursor_mark = 'v',
    .marker_mark = '*',
    .fold_open = '-',
    .fold_closed = '+',
    .ellipsis = '~',
    .up = '^',
    .down = 'v',
    .live = '*',
};

uint32_t tui_mono_fill(enum tui_style st)
{
    switch (st) {
    case TUI_STYLE_OP_MEMORY: return '=';
    case TUI_STYLE_OP_GEMM: return '#';
    case TUI_STYLE_OP_MATH: return '+';
    case TUI_STYLE_OP_UNKNOWN: return '%';
    case TUI_STYLE_OP_INFLIGHT: return '~';
    case TUI_STYLE_OP_SELECTED: return '@';
    case TUI_STYLE_CRITICAL: return '!';
    default: return 0;
    }
}

const struct tui_glyphs *tui_glyphs(bool unicode)
{
    return unicode ? &glyphs_unicode : &glyphs_ascii;
}

void tui_canvas_box(struct tui_canvas *c, struct tui_rect r, const char *title)
{
    const struct tui_glyphs *gl = tui_glyphs(c->unicode);
    tui_canvas_clip(c, r);
    tui_canvas_fill(c, r, ' ', TUI_STYLE_NORMAL);
    for (int x = r.x; x < r.x + r.w; x++) {
        tui_canvas_put(c, x, r.y, gl->hline, TUI_STYLE_BORDER);
        tui_canvas_put(c, x, r.y + r.h - 1, gl->hline, TUI_STYLE_BORDER);
    }
    for (int y = r.y; y < r.y + r.h; y++) {
        tui_canvas_put(c, r.x, y, gl->vline, TUI_STYLE_BORDER);
        tui_canvas_put(c, r.x + r.w - 1, y, gl->vline, TUI_STYLE_BORDER);
    }
    tui_canvas_text(c, r.x + 2, r.y, r.w - 4, TUI_STYLE_TITLE_FOCUS, title, TUI_TEXT_ELLIPSIS);
}
