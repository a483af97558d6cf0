/*
 * Colour themes: a table from each semantic style (tui/term/style.h) to colours and attributes,
 * read from YAML (the files of themes/, compiled into the binary; a user's own in
 * $XDG_CONFIG_HOME/npuscope/themes/, which override the embedded ones of the same name).
 *
 * A theme file is a flat map of style name -> {fg, bg, attrs, mono}:
 *
 *     description: dark background (the default)
 *     header:   {fg: black, bg: cyan, attrs: bold}
 *     op_gemm:  {fg: "#5fafff"}
 *     cursor:   {bg: 240, mono: reverse}
 *
 * Colours are "default", a name (black, red, ..., white, bright-black .. bright-white,
 * grey), an index 0-255 or "#rrggbb"; they are brought down to what the terminal has
 * (256, 16, 8 colours) by tui_theme_resolve. attrs and mono are a name or a list of names
 * (bold, dim, underline, reverse, italic, standout); mono is used instead of the colours
 * when there are none (a monochrome terminal, NO_COLOR). Styles a file leaves out keep the
 * values of the default theme.
 */
#ifndef TUI_THEME_H
#define TUI_THEME_H

#include "sim/util/diag.h"
#include "tui/term/style.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tui_colour_kind {
    TUI_COLOUR_DEFAULT, /* the terminal's own foreground or background */
    TUI_COLOUR_INDEX,   /* a palette index 0-255 */
    TUI_COLOUR_RGB,     /* 0xRRGGBB */
};

struct tui_colour {
    enum tui_colour_kind kind;
    uint32_t value; /* the index or the RGB value */
};

enum {
    TUI_ATTR_BOLD = 1 << 0,
    TUI_ATTR_DIM = 1 << 1,
    TUI_ATTR_UNDERLINE = 1 << 2,
    TUI_ATTR_REVERSE = 1 << 3,
    TUI_ATTR_ITALIC = 1 << 4,
    TUI_ATTR_STANDOUT = 1 << 5,
};

struct tui_theme_style {
    struct tui_colour fg, bg;
    unsigned attrs; /* TUI_ATTR_* with colours */
    unsigned mono;  /* TUI_ATTR_* without colours */
};

struct tui_theme {
    char name[64];         /* as asked for: "default", or the file's path */
    char description[128]; /* from the file, escaped; may be empty */
    struct tui_theme_style styles[TUI_STYLE_COUNT];
};

/* A theme with the terminal's default colours and the built-in monochrome attributes. */
void tui_theme_init_plain(struct tui_theme *th);

/*
 * Parse a theme file's text over th (styles it does not set keep their values). file
 * names the source in diagnostics. Returns 0, or a negative SIM_E* code with d filled
 * ("FILE:LINE:COL: key 'header.fg': unknown colour 'pink'"); th is then unspecified.
 */
int tui_theme_parse(struct tui_theme *th, const char *text, size_t len, const char *file,
                    struct diag *d);

/*
 * Load a theme by name ("light": user_dir/light.yaml when it exists, else the embedded
 * themes/light.yaml) or by path (a name containing '/' or ending in ".yaml"), on top of
 * the default theme. user_dir may be NULL. Returns 0, -SIM_ENOENT for an unknown name, or
 * another negative code with d filled; th then holds the default theme.
 */
int tui_theme_load(struct tui_theme *th, const char *name, const char *user_dir, struct diag *d);

/* The directory of a user's themes: $XDG_CONFIG_HOME/npuscope/themes, else
 * $HOME/.config/npuscope/themes; NULL when neither is set. Caller frees. */
char *tui_theme_user_dir(void);

/* The names of the available themes: the embedded ones (default first), then the user's
 * own in alphabetical order. */
struct tui_theme_list {
    char **names; /* owned */
    size_t len;
};
void tui_theme_list_init(struct tui_theme_list *l, const char *user_dir);
void tui_theme_list_fini(struct tui_theme_list *l);

/* A style as a terminal with ncolours colours (0, 8, 16 or 256) should show it: palette
 * indices (-1: the default colour) and TUI_ATTR_* attributes. */
struct tui_theme_resolved {
    int fg, bg;
    unsigned attrs;
};
struct tui_theme_resolved tui_theme_resolve(const struct tui_theme *th, enum tui_style st,
                                            int ncolours);

/* The nearest palette index to an RGB value among the first n colours (16 or 256). */
int tui_colour_nearest(uint32_t rgb, int n);

#endif
