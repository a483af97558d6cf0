/*
 * What the files of the TUI application share (private to tui/app/; the API is app.h): the
 * application's state, and the prompt and breakpoint-list calls prompt.c gives app.c.
 * app.c holds the layout, drawing, key dispatch and the main loop; prompt.c the footer
 * prompt's breakpoints and times and the breakpoint list.
 */
#ifndef TUI_APP_INT_H
#define TUI_APP_INT_H

#include "tui/app/app.h"
#include "tui/gantt/gantt.h"
#include "tui/panes/pane.h"
#include "tui/source/source.h"
#include "tui/term/canvas.h"
#include "tui/term/theme.h"
#include "tui/term/view.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    P_GANTT,
    P_SUMMARY,
    P_MEMORY,
    P_DETAILS,
    P_LAYERS,
    P_TOKENS,
    P_ANOMALIES,
    P_BOTTLENECK,
    P_SOURCE,
    P_COUNT
};

enum {
    FRAME_NS = 50 * 1000 * 1000, /* at most 20 redraws a second while running */
    FRAME_SHARE = 40,            /* ... and at most every 40 times a frame's cost */
    WORK_NS = 10 * 1000 * 1000,  /* time box of a batch of work per frame */
    IDLE_WORK_NS = 1000 * 1000,  /* a work slice this short found nothing to do yet */
    IDLE_WAIT_MS = 5,            /* then the loop waits this long for input */
    HOLD_WAIT_MS = 20,           /* a run held by an analysis (tui/panes/task.h): input, or a
                                    frame of its progress, this often */
    BIG_BODY = 16,               /* from this body height on, the bottom panes show */
    WIDE = 90,                   /* from this width on, two bottom panes side by side */
};

/* What the footer prompt asks for. */
enum prompt_kind {
    PROMPT_SEARCH, /* / */
    PROMPT_BREAK,  /* a breakpoint */
    PROMPT_UNTIL,  /* a time to run until */
    PROMPT_DIFF,   /* a second trace to compare with */
    PROMPT_BACK,   /* a time to go back to */
};

struct pane {
    const struct tui_pane_ops *ops;
    void *self;
    struct tui_rect rect;
    bool shown;
    bool dirty;
    bool working;      /* its background work was not finished at the last slice */
    uint64_t gen, rev; /* model generation and view revision it last drew */
};

/* What n and N step through: the last of these the user asked to walk. */
enum walk {
    WALK_PANE,      /* nothing yet: the focused pane's (anomalies, source lines), else search */
    WALK_SEARCH,    /* the matches of the last / search */
    WALK_ANOMALIES, /* the anomalies (A, Enter or n there) */
    WALK_SOURCE,    /* the ops of a source line (K, Enter or n there) */
};

struct tui_app {
    struct tui_source *src;      /* borrowed */
    const struct trace_model *m; /* borrowed from the source */
    struct tui_view view;
    struct pane panes[P_COUNT];
    int focus;            /* P_* */
    int left;             /* the pane of the left bottom slot: the summary, memory, layers, tokens,
                             anomalies or bottleneck */
    uint64_t goto_seen;   /* the view's goto_rev last carried out */
    uint64_t invalid_gen; /* the model generation invalid_* are for */
    size_t invalid_n;     /* INVALID_TRACE markers in the model, and the first one's */
    char invalid_text[256]; /* header text, escaped */
    bool maximized, bottom_hidden;
    bool help, help_dirty;
    int help_scroll, help_lines, help_visible;
    bool prompt;
    enum prompt_kind pkind; /* what the prompt asks for */
    char pbuf[128];
    size_t plen;
    bool bplist; /* the breakpoint list is open */
    size_t bp_sel;
    uint64_t notice_seen;    /* the source's notice_rev last shown */
    unsigned long cuts_seen; /* sim_mapguard_cuts last said (a trace cut short on disk) */
    char search[128];        /* the last search, "" when none */
    int walk;                /* what n and N walk: enum walk, the last thing the user walked */
    struct tui_gantt_zoom diff_zoom; /* the Gantt's zoom when a comparison opened */
    struct tui_canvas *canvas;
    bool too_small;
    bool single; /* one pane takes the whole body */
    bool full;   /* everything must be drawn again */
    bool header_dirty, footer_dirty;
    bool held;    /* an analysis held the run at the last work (tui/panes/task.h) */
    bool ahead;   /* ... and the run went on meanwhile (tui/source/source.h, tick_ahead) */
    int border_x; /* column between the two bottom panes, or -1 */
    uint64_t drawn_gen, drawn_rev, drawn_msg;
    struct tui_source_status drawn_status;
    bool work_pending;
    bool drawn_once; /* a frame was drawn: the verdict may be computed ahead */
    bool result;     /* a pane's background work ended since the last frame: its result to
                        show (tui_app_frame_held) */
    bool repaint;
    struct tui_theme theme;
    uint64_t theme_rev;
    struct tui_theme_list themes;
    size_t theme_idx;
    char *user_dir;            /* owned, may be NULL */
    struct tui_diffview *diff; /* owned: the comparison that takes the body, or NULL */
    bool diff_fatal;           /* its second trace's failed load ends the run (tui_app_diff_load) */
    bool diff_failed;          /* it did: why in diff_err, diff_errors */
    struct diag diff_err;
    uint64_t diff_errors;
    bool resumed; /* became the live process by going back: check the size */
};

/* What a copy resumed by going back keeps of the app (the rest is as it was then). */
struct app_carry {
    int focus, left;
    bool maximized, bottom_hidden;
    size_t theme_idx;
    int filter_engine, filter_kind;
    bool reload;                /* a run started again (Ctrl-R): its zoom as well */
    struct tui_gantt_zoom zoom; /* the user's, not the checkpoint's */
};

/* Open the footer prompt for k (live sources only; a saved trace says so instead). */
enum tui_result tui_app_open_prompt(struct tui_app *a, enum prompt_kind k);

/* Add the breakpoint the prompt's text describes, or say why it cannot be. */
void tui_app_add_breakpoint(struct tui_app *a, const char *text);

/*
 * A time from the prompt: cycles ("12000"), or a time with a unit ("12.5us", "800 ns",
 * "3ms"); "+" makes it relative to now. Returns 0 with *out in cycles, or -1.
 */
int tui_app_parse_time(const char *text, uint64_t now, double ghz, uint64_t *out);

/* A key while the breakpoint list is open. */
enum tui_result tui_app_bplist_key(struct tui_app *a, int key);

/* Draw the breakpoint list over the body. */
void tui_app_draw_bplist(struct tui_app *a);

#endif
