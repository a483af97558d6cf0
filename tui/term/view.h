/*
 * What the panes share about what the user is looking at: the time cursor, the selected
 * op, the op under the cursor, the filters, and a message for the status line. The Gantt
 * and the search change it; the header, details and memory panes read it. Every change
 * goes through the functions below, which bump rev, so the app knows which panes to
 * redraw by comparing revisions. Also: the number formats all panes use.
 */
#ifndef TUI_VIEW_H
#define TUI_VIEW_H

#include "trace/model/model.h"
#include "tui/term/style.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUI_NO_EVENT UINT64_MAX

struct trace_sumacc;
struct trace_verdict;

struct tui_view {
    const struct trace_model *m;    /* borrowed */
    bool unicode;                   /* the canvas may use Unicode glyphs */
    bool live;                      /* the model grows (a live simulation): views follow "now" */
    const struct trace_sumacc *acc; /* live: the summary metrics counted as the run goes
                                       (borrowed), or NULL: sum up the model */
    const char *kept_from;          /* a saved trace opened through the cache: its path (the
                                       source's), beside whose index what is judged of it
                                       may be kept (trace/cache/vcache.h); else NULL */
    uint64_t cursor;                /* time cursor, cycles */
    uint64_t selected;              /* the op chosen (Enter, search, next op), or TUI_NO_EVENT */
    uint64_t hover;                 /* the op under the cursor on the selected row, or none */
    int filter_engine;              /* enum trace_engine shown alone, or -1 */
    int filter_kind;                /* enum trace_op_kind shown alone, or -1 */
    uint32_t mark_layer;            /* the ops of this layer_id (interned) are highlighted on the
                                       Gantt, or TRACE_NO_STR: none */
    uint32_t mark_op;               /* ... only those of this op name, or TRACE_NO_STR: all */
    uint16_t mark_site;             /* the ops of this call site (a kernel line) are highlighted, or
                                       TRACE_NO_SITE: none */
    uint64_t rev;                   /* bumps on every change above */
    /* a request to the Gantt from another pane (tui_view_goto): the app carries it out */
    uint64_t goto_rev;         /* bumps with each request */
    uint64_t goto_t0, goto_t1; /* show [t0, t1) */
    uint64_t goto_cursor;      /* the cursor's new place */
    uint64_t goto_event;       /* the op to select, or TUI_NO_EVENT */
    char message[256];         /* for the status line ("" when none) */
    enum tui_style message_style;
    uint64_t message_rev; /* bumps when the message changes */

    /* a saved trace's verdict once judged (the bottleneck pane's, borrowed: set and cleared
     * by it, on this thread), or NULL (live, or not judged yet): the Gantt shows a launch's
     * critical path from it rather than computing it again */
    const struct trace_verdict *verdict;
    /* that verdict while the Gantt's worker copies a path of it (set and cleared by the Gantt,
     * on this thread), else NULL: the bottleneck pane frees it only once it is cleared */
    const struct trace_verdict *verdict_lent;
    /* a saved trace's first verdict under way, not taken yet (the bottleneck pane says so each
     * frame), with its progress as tui_task_status says it; verdict_wanted: a pane waits for
     * it (the Gantt's C, for a path the verdict computes): its run goes on as the user's */
    bool verdict_pending;
    bool verdict_wanted;
    char verdict_status[96];
    /* the critical path shown on the Gantt (computed and owned by the Gantt), or NULL */
    const struct trace_critpath *path;
    size_t path_step;     /* the step of the path the cursor walked to */
    int32_t path_request; /* a launch (cmdq_id) whose path another pane asked for */
    bool path_requested;  /* path_request is pending */
    /* a pane took an analysis's result in its work: the next frame shows it at once, not
     * held back to the frame pace (the app clears it) */
    bool result;
};

struct trace_critpath;

/* Start with the cursor at the trace's start, nothing selected, no filters. */
void tui_view_init(struct tui_view *v, const struct trace_model *m, bool unicode);

/* Changes; each bumps rev when the value is new. event: an index or TUI_NO_EVENT; engine
 * and kind: enum values or -1 for all. */
void tui_view_set_cursor(struct tui_view *v, uint64_t t);
void tui_view_select(struct tui_view *v, uint64_t event);
void tui_view_hover(struct tui_view *v, uint64_t event);
void tui_view_filter(struct tui_view *v, int engine, int kind);
/* Highlight the ops of layer (an interned layer_id), only those named op when op is not
 * TRACE_NO_STR; TRACE_NO_STR for both: none. */
void tui_view_mark(struct tui_view *v, uint32_t layer, uint32_t op);
/* Highlight the ops of call site site (a kernel line; TRACE_NO_SITE: none). */
void tui_view_mark_site(struct tui_view *v, uint16_t site);

/* Ask the Gantt to show [t0, t1) (zoomed to fit it, with a little room around it), put the
 * cursor at cursor and select event (TUI_NO_EVENT: leave the selection). */
void tui_view_goto(struct tui_view *v, uint64_t t0, uint64_t t1, uint64_t cursor, uint64_t event);

/* Show the critical path p (borrowed, NULL to hide it) at step; ask the Gantt for the
 * path of the launch with cmdq_id (another pane's request). Each bumps rev. */
void tui_view_set_path(struct tui_view *v, const struct trace_critpath *p, size_t step);
void tui_view_request_path(struct tui_view *v, int32_t cmdq_id);

/* The op the details pane shows: the selected one, else the one under the cursor. */
uint64_t tui_view_focus_event(const struct tui_view *v);

/* Set the status line message (printf-style, trusted text; quote file strings through
 * sim_escape first). An empty format clears it. */
void tui_view_message(struct tui_view *v, enum tui_style st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A monotonic clock in ns, for time budgets. */
uint64_t tui_now_ns(void);
/* The calling thread's CPU time so far, in ns (the monotonic clock where it cannot be read). */
uint64_t tui_cpu_ns(void);

/* Formats, into buf (returned). */
char *tui_fmt_si(char *buf, size_t n, double v);  /* 950, 12.3k, 4.56M, 1.2G */
char *tui_fmt_ns(char *buf, size_t n, double ns); /* 850 ns, 1.20 us, 3.4 ms */
/* A ruler's label at ns for ticks step ns apart: tui_fmt_ns's unit, with as many decimals as
 * the step needs for two ticks to read differently (41.87 us, 41.88 us). */
char *tui_fmt_ns_tick(char *buf, size_t n, double ns, double step);
/* msg in w columns: when it is longer, the longest path in it loses its first directories
 * ("…/runs/g.json", "..." without unicode) rather than the message its end. Returns msg
 * itself or buf (size bytes). */
const char *tui_fit_path(const char *msg, int w, bool unicode, char *buf, size_t size);
char *tui_fmt_bytes(char *buf, size_t n, double bytes); /* 512 B, 4.0 KiB, 1.5 MiB */
char *tui_fmt_cycles_ns(char *buf, size_t n, uint64_t cycles, double ghz); /* "1200 (1.20 us)" */
/* A ruler's tick label in cycles: exact, shortened with k / M / G when the step between
 * ticks allows (20k for 20000 on a ruler of 10k steps), so every ruler reads alike. */
char *tui_fmt_cycle_tick(char *buf, size_t n, uint64_t t, uint64_t step);
/* A ruler's step: the smallest 1, 2 or 5 times a power of ten that is at least min. */
double tui_ruler_step(double min);

#endif
