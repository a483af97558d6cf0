/*
 * What the files of the Gantt pane share (private to tui/; the pane's API is gantt.h): the
 * pane's state and the functions one of its files calls in another. gantt.c holds the
 * pane's life and its sync; gantt_search.c the search; gantt_rows.c the tree of rows and the
 * filters; gantt_view.c the view of time and the layout; gantt_draw.c the drawing; gantt_res.c the
 * utilization rows of the HBMs and links; gantt_actions.c keys and the mouse.
 */
#ifndef TUI_GANTT_INT_H
#define TUI_GANTT_INT_H

#include "trace/verdict/critpath.h"
#include "tui/gantt/gantt.h"
#include "tui/panes/task.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    LABEL_MIN = 8,
    LABEL_MAX = 28,
    BAND_ROWS = 4,      /* track rows kept free of the markers, tokens and bandwidth bands */
    SAMPLE_EVENTS = 24, /* events looked at to colour one cell */
    SCAN_EVENTS = 64,   /* events stepped over at most for one cell */
    HOVER_SCAN = 4096,  /* events stepped over to find the op under the cursor */
    TEXT_EVENTS = 512,  /* at most this many ops in view get their name written */
};

/* A row of the tree: a group (sip0, sip0.cube0, "DMA") or a track. */
struct gnode {
    char *label; /* owned: what the row shows */
    char *key;   /* owned: identity across rebuilds (the group's path, or "#track") */
    int parent;  /* -1 for the root */
    int depth;   /* 0 for children of the root */
    bool is_track;
    bool is_res; /* a resource's utilization row (an HBM, a link): neither track nor group */
    bool folded;
    bool engine_group; /* a spec trace's engine kind group */
    bool res_group;    /* the group of the links, after everything else */
    uint32_t track;    /* when is_track */
    size_t res;        /* when is_res: index in the Gantt's resources */
    int *kids;         /* owned */
    size_t nkids, capkids;
    uint32_t *tracks; /* owned: the tracks below (groups) */
    size_t ntracks;
};

/* bandwidth_samples sorted by cycle, with prefix sums of bytes, for any window's rate. */
struct bw_index {
    uint64_t *start, *end; /* owned */
    double *pre;           /* owned: pre[i] = bytes of samples [0, i) */
    size_t n;
    double max_rate; /* bytes per cycle of the busiest sample */
};

struct trace_resources;

struct tui_gantt {
    const struct trace_model *m; /* borrowed */
    struct trace_resources *res; /* owned: the HBMs and links with samples */
    size_t res_built;            /* resources the tree was built for */
    uint64_t res_synced;         /* when they were last brought up to date (ns) */
    uint64_t res_cost;           /* what that took (ns) */
    bool links_seen;             /* the group of links existed: it keeps its fold */
    struct gnode *nodes;         /* owned; nodes[0] is the root */
    size_t nnodes, capnodes;
    size_t tracks_built; /* track count the tree was built for */
    int *rows;           /* owned: visible rows, as node indices */
    size_t nrows;
    bool rows_stale;
    int rows_engine, rows_kind; /* filters the rows were built for */

    struct bw_index bw;
    size_t bw_built;

    /* the view of time */
    double t0, cpc;   /* first visible cycle, cycles per column (>= 1) */
    bool fit;         /* follow the whole trace until the user zooms or pans */
    bool zoom_wanted; /* a zoom to show once the trace reaches its end (tui_gantt_want_zoom) */
    double want_t0, want_cpc;
    uint64_t fit_min, fit_max;
    bool follow;        /* live: keep the right edge at "now" (the end of the trace) */
    uint64_t follow_at; /* the end of the trace when the view last followed it */

    /* layout of the last render (or of tui_gantt_layout) */
    struct tui_rect rect;
    int label_w, plot_x, plot_w, rows_y, rows_h;
    int ruler_rows, band_markers, band_tokens, band_bw; /* y of each band, -1 when absent */

    size_t sel, top;      /* selected row, first row shown */
    uint64_t cursor_seen; /* the cursor as the Gantt last set or saw it */
    int sel_node;         /* the selected row's node (survives rebuilding the rows), or -1 */
    int label_want;       /* widest label of the rows */
    uint64_t seen_gen;

    /* per frame: busy cycles of each track per column, computed on demand */
    uint64_t *busy;     /* owned: track * plot_w pairs of bounds (gantt_draw.c) */
    uint8_t *busy_done; /* owned: per track */
    size_t busy_cap, busy_done_cap;

    /* the critical path shown (gantt_path.c) */
    struct trace_critpath *path; /* owned, or NULL; its steps the verdict's when borrowed */
    bool path_borrowed;   /* path is the verdict's: its steps lent (tui_view.verdict_lent) while
                             it shows, not owned (a million steps copied were 80 MB of fresh
                             pages and a tenth of a second) */
    char path_name[96];   /* the launch it is of (escaped) */
    uint64_t *path_spans; /* owned: (track, start, reach) of its ops, by track and start;
                             reach: the latest end of the track's up to this one */
    size_t path_nspans;
    /* the path being computed on a worker (tui/panes/task.h) */
    struct tui_task *path_task;          /* owned */
    struct trace_critpath *path_next;    /* owned: the task's while it runs */
    struct trace_critpath_input path_in; /* its input; events owned */
    char path_next_name[96];
    char path_status[100]; /* its progress last said in the status line */
    uint64_t path_next_start;
    bool path_judged;          /* path_next is the verdict's, its steps lent: the worker spans it */
    uint64_t *path_next_spans; /* owned: path_next's spans (as path_spans), made on the worker */
    uint64_t path_next_waits;  /* its waits added up */
    /* live: the paths of finished launches, each computed once (gantt_path.c) */
    struct tui_gantt_kept_path *path_kept; /* owned */
    size_t path_nkept;
    struct tui_gantt_kept_path *path_next_key; /* owned: the one being computed is to be kept */
    int32_t path_cmdq;                         /* the launch asked for (TRACE_NO_CMDQ: the run) */
    bool path_find;                            /* find it at path_cursor instead (on the worker) */
    bool path_live;                            /* a live view: a finished launch's path is kept */
    bool path_was_kept;                        /* the worker found the path among the kept ones */
    uint64_t path_cursor;                      /* the cursor when asked */
    /* C waits for the verdict under way (tui_view.verdict_pending), which computes the path
     * asked for (path_cmdq, path_find at path_cursor), rather than computing it beside it */
    bool path_wait;
    /* ... but the path of a launch of at most PATH_SMALL ops is computed at once (path_small:
     * the worker gives up past that, path_too_big, and C waits then) */
    bool path_small, path_too_big;
    /* the worker has written path_next_name and path_next_start (0 or 1); a whole word, so
     * that no load of the plain fields beside it reads it too */
    _Atomic uint64_t path_named;

    /* the strips under the rows (gantt_strip.c): y of their first row, -1 when absent */
    bool show_util, show_heat;
    int util_y, util_h, heat_y, heat_h;
    int strip_label_want; /* the width the heatmap's labels want (the layout makes room) */
    int show_power;       /* the power strip (gantt_power.c): 0 hidden, 1 total, 2 by kind */
    int power_y, power_h;

    /* search (gantt_search.c): whether each op name matches, cached by string id */
    char *pattern; /* owned, lower case */
    uint32_t *match_keys;
    uint8_t *match_vals; /* 1 no, 2 yes */
    size_t match_cap, match_len;
    struct tui_task *search_task; /* owned: the app's search, on a worker */
    struct gantt_search *search;  /* owned: its input and result while it runs */
};

/* ---- gantt_rows.c: the tree of rows and the filters ------------------------------------- */

/* Build the tree of groups over the model's tracks (keeping folds and the selection by
 * key); free it. */
void tui_gantt_tree_build(struct tui_gantt *g);
/* A new node under parent (the tree's building block). */
int tui_gantt_node_new(struct tui_gantt *g, int parent, const char *label, const char *key);
/* The group child of parent labelled label, created when missing. */
int tui_gantt_group_child(struct tui_gantt *g, int parent, const char *label, const char *key);
void tui_gantt_tree_free(struct tui_gantt *g);
/* Whether track t passes the view's engine and kind filters. */
bool tui_gantt_track_passes(struct tui_gantt *g, const struct tui_view *v, uint32_t t);
/* Rebuild the visible rows; select row; unfold the groups above node n. */
void tui_gantt_rows_build(struct tui_gantt *g, const struct tui_view *v);
void tui_gantt_set_sel(struct tui_gantt *g, size_t row);
void tui_gantt_unfold_to(struct tui_gantt *g, int n);
/* The node of a track, or -1. */
int tui_gantt_track_node(const struct tui_gantt *g, uint32_t track);
/* Scroll the rows so that the selected one shows. */
void tui_gantt_scroll_to_sel(struct tui_gantt *g);

/* Add a row per resource to the tree being built: an HBM under its cube, the links under a
 * group of their own, folded when it first appears (gantt_rows.c). */
void tui_gantt_res_tree(struct tui_gantt *g);

/* ---- gantt_res.c: utilization rows of the HBMs and links -------------------------------- */

/* Bring the resources up to date with the model (a live one at most a few times a
 * second); true when their set changed, so the tree must be rebuilt. */
bool tui_gantt_res_sync(struct tui_gantt *g);
/* Draw a resource's row, or a group of resources as their busiest one. */
void tui_gantt_draw_res_row(struct tui_gantt *g, struct tui_canvas *c, int y, int node,
                            const struct tui_glyphs *gl);
/* A status line on resource row node at the cursor (Enter on it). */
void tui_gantt_res_describe(struct tui_gantt *g, struct tui_view *v, int node);
/* Whether node is a group holding resources only. */
bool tui_gantt_res_only(const struct tui_gantt *g, int node);

/* ---- gantt_path.c: the critical path ----------------------------------------------------- */

/* P: show the critical path of the launch at the cursor, or hide the one shown; ( and ):
 * the cursor to the previous or next op along it. */
enum tui_result tui_gantt_path_toggle(struct tui_gantt *g, struct tui_view *v);
enum tui_result tui_gantt_path_step(struct tui_gantt *g, struct tui_view *v, int dir);
/* Carry out a pane's request for a launch's path (tui_view_request_path); true when it did. */
bool tui_gantt_path_sync(struct tui_gantt *g, struct tui_view *v);
/* The path being computed: its progress in the status line, shown once ready. Returns
 * true while it is computed (the pane's work). */
bool tui_gantt_path_work(struct tui_gantt *g, struct tui_view *v);
/* Stop a path being computed (the pane is freed). */
void tui_gantt_path_stop(struct tui_gantt *g);
/* Whether an op of the path runs on track within [a, b). */
bool tui_gantt_on_path(const struct tui_gantt *g, uint32_t track, uint64_t a, uint64_t b);
void tui_gantt_path_free(struct tui_gantt *g, struct tui_view *v);

/* ---- gantt_strip.c: utilization over time and the bandwidth heatmap ------------------------ */

/* Take the rows of the strips that are on from the bottom of the laid-out rows (after
 * tui_gantt_layout), keeping BAND_ROWS rows of tracks; then draw them. */
void tui_gantt_strip_layout(struct tui_gantt *g);
/* The power strip (gantt_power.c): the rows it wants (0 when hidden), and drawing it at
 * g->power_y. */
int tui_gantt_power_rows(const struct tui_gantt *g);
void tui_gantt_draw_power(struct tui_gantt *g, struct tui_canvas *c, const struct tui_glyphs *gl);
void tui_gantt_draw_strips(struct tui_gantt *g, struct tui_canvas *c, const struct tui_glyphs *gl);
/* Within a frame (gantt_busy.c): forget the last frame's busy cycles; bounds on the busy
 * cycles of track in column i (from the model's level-of-detail summary), and the busy
 * cycles themselves (reading the track's index). */
void tui_gantt_busy_reset(struct tui_gantt *g);
void tui_gantt_busy_bounds(struct tui_gantt *g, uint32_t track, int i, uint64_t *lo, uint64_t *hi);
uint64_t tui_gantt_busy_exact(struct tui_gantt *g, uint32_t track, int i);
/* The widest label of the heatmap's rows, for strip_label_want. */
int tui_gantt_strip_label_width(const struct tui_gantt *g, bool unicode);

/* ---- gantt_search.c: the search ------------------------------------------------------------ */

/* The search started by tui_gantt_search_start: its progress in the status line, and once it
 * is done the op it found selected. Returns true while it runs, and once more when it ended. */
bool tui_gantt_search_work(struct tui_gantt *g, struct tui_view *v);
/* Stop a search being computed and free the search's state (the pane is freed). */
void tui_gantt_search_free(struct tui_gantt *g);

/* ---- gantt_view.c: the view of time ---------------------------------------------------- */

/* The trace's first and last cycle; the cycles per column that fit it all. */
uint64_t tui_gantt_t_min(const struct tui_gantt *g);
uint64_t tui_gantt_t_max(const struct tui_gantt *g);
double tui_gantt_fit_cpc(const struct tui_gantt *g);
/* Keep the view inside the trace; fit the whole trace. */
void tui_gantt_view_clamp(struct tui_gantt *g);
void tui_gantt_view_fit(struct tui_gantt *g);
/* The cycles [*a, *b) of column i; the end of the visible span; the column of cycle t. */
void tui_gantt_cell_range(const struct tui_gantt *g, int i, uint64_t *a, uint64_t *b);
uint64_t tui_gantt_view_end(const struct tui_gantt *g);
long tui_gantt_col_of(const struct tui_gantt *g, uint64_t t);
/* Keep the cursor in the trace and in view; scroll so that cycle t shows. */
void tui_gantt_cursor_clamp(struct tui_gantt *g, struct tui_view *v);
void tui_gantt_show_time(struct tui_gantt *g, uint64_t t);
/* An event's end (now for one in flight); whether it passes the view's filters. */
uint64_t tui_gantt_ev_end(const struct tui_gantt *g, const struct trace_event *e);
bool tui_gantt_event_passes(const struct tui_gantt *g, const struct tui_view *v,
                            const struct trace_event *e);
/* Point the view's hover at the op under the cursor on the selected row. */
void tui_gantt_update_hover(struct tui_gantt *g, struct tui_view *v);
/* Live: keep the right edge at "now"; after the user moved the view, whether it follows. */
void tui_gantt_follow_now(struct tui_gantt *g);
void tui_gantt_update_follow(struct tui_gantt *g);
/* Lay the pane out in r: label column, plot, ruler and bands. */
void tui_gantt_layout(struct tui_gantt *g, struct tui_rect r, const struct tui_view *v);

/* ---- gantt_draw.c: drawing ------------------------------------------------------------- */

/* Draw the pane into c at r (the pane's render operation). */
void tui_gantt_render(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                      bool focused);

/* ---- gantt_actions.c: keys and the mouse ------------------------------------------------ */

/* The pane's action and mouse operations (tui/panes/pane.h). */
enum tui_result tui_gantt_action(void *self, enum tui_action a, struct tui_view *v);
enum tui_result tui_gantt_mouse(void *self, int x, int y, int button, struct tui_view *v);
/* Select model event i: its row unfolded and selected, the cursor at its start. */
void tui_gantt_select_event(struct tui_gantt *g, struct tui_view *v, uint64_t i);

#endif
