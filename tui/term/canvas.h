/*
 * The canvas: the screen as cells of (character, semantic style) in memory. Panes render
 * into a canvas and the terminal layer (tui/term/term.h) draws it afterwards, so every pane can
 * be tested headlessly by dumping the canvas as text and comparing it with a golden file.
 *
 * Invariant: a cell never holds a control character, a bidi override or a zero-width
 * character. Text from trace files goes through the escaping of sim/util/escape.h on its way
 * in, and widths are those of wcwidth(3) on the escaped text, so what is drawn is exactly
 * what was measured. Writes outside the canvas or its clip rectangle are dropped.
 */
#ifndef TUI_CANVAS_H
#define TUI_CANVAS_H

#include "tui/term/style.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One screen cell. */
struct tui_cell {
    uint32_t cp;   /* code point; 0 in the right half of a double-width character */
    uint8_t style; /* enum tui_style */
    uint8_t width; /* 1, 2 for a double-width character, 0 for its right half */
};

struct tui_rect {
    int x, y, w, h;
};

struct tui_canvas {
    int w, h;
    bool unicode;           /* may hold non-ASCII characters (a UTF-8 locale) */
    bool mono;              /* shown without colours (a monochrome terminal, NO_COLOR): a
                               Gantt cell's character says its op kind (tui_mono_fill) */
    struct tui_rect clip;   /* writes outside are dropped */
    struct tui_cell *cells; /* owned, w * h, row-major */
};

/* A canvas of w x h blank cells (sizes below 0 count as 0). unicode: see the struct. */
struct tui_canvas *tui_canvas_new(int w, int h, bool unicode);
/* Free the canvas (NULL is a no-op). */
void tui_canvas_free(struct tui_canvas *c);

/* Change the size; every cell becomes blank and the clip is reset to the whole canvas. */
void tui_canvas_resize(struct tui_canvas *c, int w, int h);

/* Restrict writes to r (intersected with the canvas); tui_canvas_unclip lifts it. */
void tui_canvas_clip(struct tui_canvas *c, struct tui_rect r);
void tui_canvas_unclip(struct tui_canvas *c);

/* The cell at (x, y), or NULL outside the canvas. */
const struct tui_cell *tui_canvas_cell(const struct tui_canvas *c, int x, int y);

/*
 * Put one character. A character that is not printable here (a control, a character
 * wcwidth cannot measure, non-ASCII on an ASCII canvas) is replaced by '?'. A
 * double-width character that does not fit is replaced by a space. Returns the columns
 * used (0 when clipped).
 */
int tui_canvas_put(struct tui_canvas *c, int x, int y, uint32_t cp, enum tui_style st);

/* Fill r with cp in style st. */
void tui_canvas_fill(struct tui_canvas *c, struct tui_rect r, uint32_t cp, enum tui_style st);

/*
 * An overlay box: clip to r, clear it, draw its border and its title (trusted text) on
 * the top edge. Leaves the clip set to r for the caller's content.
 */
void tui_canvas_box(struct tui_canvas *c, struct tui_rect r, const char *title);

/* Change the style of the cell at (x, y), keeping its character. */
void tui_canvas_restyle(struct tui_canvas *c, int x, int y, enum tui_style st);

enum {
    TUI_TEXT_UNTRUSTED = 1 << 0, /* from a file: backslashes are escaped too, so every
                                    escape shown is unambiguous */
    TUI_TEXT_ELLIPSIS = 1 << 1,  /* mark truncated text with a final ellipsis */
    TUI_TEXT_RIGHT = 1 << 2,     /* right-align within maxw */
};

/*
 * Write UTF-8 text at (x, y) in at most maxw columns (flags: TUI_TEXT_*). Characters that
 * must not reach a terminal appear as their escape (\e, \x07, \u202e); invalid UTF-8 as
 * U+FFFD ('?' on an ASCII canvas). Returns the columns written.
 */
int tui_canvas_text(struct tui_canvas *c, int x, int y, int maxw, enum tui_style st, const char *s,
                    unsigned flags);

/* The whole canvas says the window is too small: "window too small", then what it needs
 * and has ("need 40x10, have 20x5"), on two lines when one is too narrow, never cut. */
void tui_canvas_too_small(struct tui_canvas *c, int need_w, int need_h);

/*
 * Where to break text for lines of w columns: the bytes of s[0, len) that go on the first
 * line (up to the last space that fits; a word longer than the line is cut), and in *next
 * where the next line starts (the spaces at the break skipped). A UTF-8 character is one
 * column. Escape untrusted text before (sim_escape), as its escapes take columns.
 */
size_t tui_text_wrap(const char *s, size_t len, int w, size_t *next);

/* The same for n bytes of s (which may contain NULs). */
int tui_canvas_textn(struct tui_canvas *c, int x, int y, int maxw, enum tui_style st, const char *s,
                     size_t n, unsigned flags);

/* printf-style tui_canvas_text of trusted text. */
int tui_canvas_printf(struct tui_canvas *c, int x, int y, int maxw, enum tui_style st,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Columns that tui_canvas_textn would use without a limit, for an ASCII or Unicode
 * canvas. */
int tui_text_width(const char *s, size_t n, bool unicode, unsigned flags);

/*
 * The canvas as UTF-8 text, one line per row ended by '\n', trailing spaces removed
 * (caller frees). With styles, each line is followed by a line giving each cell's style
 * as one character (tui_canvas_style_char), for tests that check colouring.
 */
char *tui_canvas_dump(const struct tui_canvas *c, bool styles);

/* One printable character per style, for dumps: '.' normal, 'G' op_gemm... */
char tui_canvas_style_char(enum tui_style st);

/* The glyphs panes draw with: Unicode block and box characters, or ASCII. */
struct tui_glyphs {
    uint32_t eighths[9]; /* left-aligned blocks: 0/8 (space) .. 8/8 (full) */
    uint32_t right_half; /* a block filling the right half of a cell */
    uint32_t right_8th;  /* a block filling the right eighth */
    uint32_t shade[4];   /* density: none, light, medium, dark */
    uint32_t spark[9];   /* sparkline levels, 0 (space) .. 8 (full) */
    uint32_t hline, vline, vline_light, tick, cursor_mark, marker_mark;
    uint32_t fold_open, fold_closed, ellipsis, up, down, live;
};

const struct tui_glyphs *tui_glyphs(bool unicode);

/* The character a busy Gantt cell of style st is filled with when there are no colours to
 * tell op kinds apart: '=' memory, '#' gemm, '+' math, '%' unknown, '~' in flight, '@'
 * selected, '!' on the critical path; 0 for other styles (draw the usual glyph). */
uint32_t tui_mono_fill(enum tui_style st);

#endif
