/*
 * Semantic styles: what a cell of the TUI means (a header, a GEMM bar, the time cursor),
 * never how it looks. Panes draw with these; the active theme (tui/term/theme.h) maps each one
 * to colours and attributes, so switching themes is one table lookup in the terminal
 * layer and panes can be tested without a terminal.
 */
#ifndef TUI_STYLE_H
#define TUI_STYLE_H

enum tui_style {
    TUI_STYLE_NORMAL,      /* plain text */
    TUI_STYLE_DIM,         /* secondary text, filtered-out ops */
    TUI_STYLE_HEADER,      /* the top line */
    TUI_STYLE_HEADER_MODE, /* the mode badge in the header (POST-MORTEM, LIVE...) */
    TUI_STYLE_FOOTER,      /* the bottom line */
    TUI_STYLE_FOOTER_KEY,  /* a key name in the footer */
    TUI_STYLE_STATUS,      /* a status message in the footer */
    TUI_STYLE_ERROR,       /* an error message */
    TUI_STYLE_PROMPT,      /* the search prompt */
    TUI_STYLE_BORDER,      /* separators between panes */
    TUI_STYLE_TITLE,       /* a pane's title bar */
    TUI_STYLE_TITLE_FOCUS, /* the focused pane's title bar */
    TUI_STYLE_RULER,       /* the time ruler */
    TUI_STYLE_CURSOR,      /* the time cursor */
    TUI_STYLE_MARKER,      /* marker lines and names */
    TUI_STYLE_LABEL,       /* a Gantt row label */
    TUI_STYLE_LABEL_SEL,   /* the selected row's label */
    TUI_STYLE_GROUP,       /* a group row (sip, cube, PE, engine kind) */
    TUI_STYLE_OP_MEMORY,   /* bars by op kind */
    TUI_STYLE_OP_GEMM,
    TUI_STYLE_OP_MATH,
    TUI_STYLE_OP_UNKNOWN,
    TUI_STYLE_OP_INFLIGHT, /* an op that started and has not ended (live) */
    TUI_STYLE_OP_SELECTED, /* the selected op */
    TUI_STYLE_OP_TEXT,     /* an op name written over its bar */
    TUI_STYLE_TOKEN_PREFILL,
    TUI_STYLE_TOKEN_DECODE,
    TUI_STYLE_TOKEN_ALT, /* every other token, so boundaries show */
    TUI_STYLE_BANDWIDTH, /* the bandwidth sparkline */
    TUI_STYLE_BAR,       /* filled part of a meter */
    TUI_STYLE_BAR_EMPTY, /* empty part of a meter */
    TUI_STYLE_VALUE,     /* a number worth noticing */
    TUI_STYLE_KEY,       /* a key name in the help */
    TUI_STYLE_TAB,       /* a tab of the memory pane */
    TUI_STYLE_TAB_ACTIVE,
    TUI_STYLE_MEM_LIVE,  /* a memory region live at the cursor's time */
    TUI_STYLE_SELECTION, /* the selected line of a list */
    TUI_STYLE_MATCH,     /* a search match */
    TUI_STYLE_CRITICAL,  /* an op on the critical path */
    TUI_STYLE_HEAT_1,    /* heatmap cells: up to a quarter of the peak */
    TUI_STYLE_HEAT_2,    /* up to half */
    TUI_STYLE_HEAT_3,    /* up to three quarters */
    TUI_STYLE_HEAT_4,    /* more */
    TUI_STYLE_COUNT,
};

/* The name used in theme files ("op_gemm"), or NULL for an out-of-range style. */
const char *tui_style_name(enum tui_style s);

/* The style called name; returns 0, or -1 for an unknown name. */
int tui_style_parse(const char *name, enum tui_style *out);

#endif
