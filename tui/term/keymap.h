/*
 * Keys and actions. The terminal layer turns input into key codes (characters as their
 * code point, special keys as TUI_KEY_*); one table maps each key to an action; the app
 * carries actions out, and each handler returns what must happen next (TUI_RES_*). The
 * help overlay is generated from the same table, so it lists every key there is.
 */
#ifndef TUI_KEYMAP_H
#define TUI_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>

/* Special keys, beyond the last Unicode code point. */
enum tui_key {
    TUI_KEY_UP = 0x110000,
    TUI_KEY_DOWN,
    TUI_KEY_LEFT,
    TUI_KEY_RIGHT,
    TUI_KEY_SHIFT_LEFT,
    TUI_KEY_SHIFT_RIGHT,
    TUI_KEY_PAGE_UP,
    TUI_KEY_PAGE_DOWN,
    TUI_KEY_HOME,
    TUI_KEY_END,
    TUI_KEY_ENTER,
    TUI_KEY_BACKSPACE,
    TUI_KEY_DELETE,
    TUI_KEY_BACKTAB,
    TUI_KEY_F1,
    TUI_KEY_ESC = 0x1B,
    TUI_KEY_TAB = '\t',
};

/* A control key: TUI_KEY_CTRL('l'). */
#define TUI_KEY_CTRL(c) ((c)&0x1F)

enum tui_action {
    TUI_ACT_NONE,
    /* the view of time */
    TUI_ACT_ZOOM_IN,
    TUI_ACT_ZOOM_OUT,
    TUI_ACT_FIT,
    TUI_ACT_PAN_LEFT,
    TUI_ACT_PAN_RIGHT,
    TUI_ACT_CURSOR_LEFT,
    TUI_ACT_CURSOR_RIGHT,
    TUI_ACT_START,
    TUI_ACT_END,
    /* rows and ops */
    TUI_ACT_UP,
    TUI_ACT_DOWN,
    TUI_ACT_PAGE_UP,
    TUI_ACT_PAGE_DOWN,
    TUI_ACT_SELECT,
    TUI_ACT_NEXT_OP,
    TUI_ACT_PREV_OP,
    TUI_ACT_FOLD_ALL,
    TUI_ACT_FILTER_ENGINE,
    TUI_ACT_FILTER_KIND,
    TUI_ACT_CLEAR,
    /* search */
    TUI_ACT_SEARCH,
    TUI_ACT_SEARCH_NEXT,
    TUI_ACT_SEARCH_PREV,
    /* panes */
    TUI_ACT_NEXT_PANE,
    TUI_ACT_PREV_PANE,
    TUI_ACT_MEMORY,
    TUI_ACT_HEX,
    TUI_ACT_MAXIMIZE,
    TUI_ACT_TOGGLE_BOTTOM,
    TUI_ACT_THEME,
    TUI_ACT_HELP,
    TUI_ACT_REDRAW,
    TUI_ACT_QUIT,
    /* comparing two traces */
    TUI_ACT_DIFF,
    TUI_ACT_DIFF_ALIGN,
    /* analysis panes */
    TUI_ACT_LAYERS,
    TUI_ACT_TOKENS,
    TUI_ACT_ANOMALIES,
    TUI_ACT_SOURCE,    /* the source pane: per line of the selected op's kernel */
    TUI_ACT_STEP_LINE, /* the selected PE's kernel to its next tl call on another line */
    TUI_ACT_REVERSE,
    /* where the time goes */
    TUI_ACT_BOTTLENECK,  /* the bottleneck pane */
    TUI_ACT_PATH,        /* the critical path on the Gantt */
    TUI_ACT_PATH_NEXT,   /* the cursor to its next op */
    TUI_ACT_PATH_PREV,   /* ... its previous op */
    TUI_ACT_HEATMAP,     /* the bandwidth heatmap under the Gantt */
    TUI_ACT_UTILIZATION, /* the utilization strip under the Gantt */
    TUI_ACT_POWER,       /* the power strip under the Gantt (total, by kind, hidden) */
    /* a live simulation */
    TUI_ACT_PAUSE,
    TUI_ACT_STEP,
    TUI_ACT_STEP_OP,
    TUI_ACT_CONTINUE,
    TUI_ACT_RUN_UNTIL,
    TUI_ACT_SLOWER,
    TUI_ACT_FASTER,
    TUI_ACT_FOLLOW,
    TUI_ACT_BREAK_ADD,
    TUI_ACT_BREAK_LIST,
    TUI_ACT_WRITE,
    /* going back in a live simulation */
    TUI_ACT_BACK_STEP,
    TUI_ACT_BACK_OP,
    TUI_ACT_BACK_UNTIL,
    TUI_ACT_BACK_BREAK,
    TUI_ACT_RELOAD, /* reload the plug-ins and run again from event 0 */
    TUI_ACT_COUNT,
};

/* What a handler reports. */
enum tui_result {
    TUI_RES_IGNORED, /* not for this handler: try the next one */
    TUI_RES_HANDLED, /* done, nothing on screen changed */
    TUI_RES_REDRAW,  /* done, something must be redrawn (the handler marked what) */
    TUI_RES_QUIT,    /* leave the program */
};

/* The action bound to key, or TUI_ACT_NONE. */
enum tui_action tui_keymap_lookup(int key);

/* How the help describes an action. */
struct tui_action_info {
    enum tui_action action;
    const char *group; /* heading it is listed under */
    const char *help;  /* what it does */
    bool live;         /* only meaningful while a simulation runs */
};

/* Every action, in the order the help lists them; *n receives the count. */
const struct tui_action_info *tui_keymap_actions(size_t *n);

/* The keys bound to action as text ("+ =", "Left h"), in table order. Returns buf. */
char *tui_keymap_keys(enum tui_action action, char *buf, size_t size);

/* The name of a key ("Enter", "^L", "space", "x"). Returns buf. */
char *tui_key_name(int key, char *buf, size_t size);

#endif
