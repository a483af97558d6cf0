/*
 * The TUI application: the panes and their layout, the header and footer, keys turned
 * into actions, the search prompt, themes, and the main loop. Everything but the main
 * loop works without a terminal: a test creates an app, feeds it keys and compares the
 * canvas it renders; tui_app_run adds the terminal (tui/term/term.h).
 *
 * The main loop waits for input with a timeout; while the source is running it runs a
 * time-boxed batch (source->tick) per frame and redraws at most ~30 times a second; when
 * nothing runs it blocks on input. Only what changed is drawn again: each pane remembers
 * the model generation and view revision it last drew.
 */
#ifndef TUI_APP_H
#define TUI_APP_H

#include "sim/util/diag.h"
#include "tui/term/canvas.h"
#include "tui/term/keymap.h"
#include "tui/source/source.h"
#include "tui/term/theme.h"

#include <stdbool.h>
#include <stdint.h>

struct tui_app;
struct tui_term;

enum {
    TUI_MIN_W = 40, /* smaller windows show "window too small" */
    TUI_MIN_H = 10,
};

/*
 * An app over src (borrowed; it must outlive the app) drawing a w x h canvas. unicode:
 * the terminal shows UTF-8 (block glyphs), else ASCII only. theme: a theme name or path
 * (NULL: default), looked up with user_dir (NULL: none) for the user's own themes. When
 * the theme cannot be loaded the default is used, the status line says why, and
 * *theme_err (when not NULL) receives the code (-SIM_ENOENT for an unknown name) with d
 * filled.
 */
struct tui_app *tui_app_new(struct tui_source *src, int w, int h, bool unicode, const char *theme,
                            const char *user_dir, int *theme_err, struct diag *d);
void tui_app_free(struct tui_app *a);
/* The process is about to end without freeing a: what its panes still write for a later
 * view (the verdict kept beside a trace's index) is given a moment to finish. */
void tui_app_leave(struct tui_app *a);

/*
 * Compare the source's trace with b (taken; a saved trace's model) named name: the
 * comparison view (tui/panes/diffview.h) takes the body until D closes it. A comparison already
 * open is replaced.
 */
struct trace_model;
void tui_app_diff_take(struct tui_app *a, struct trace_model *b, const char *name);
/*
 * Compare the source's trace with the trace at path, loaded on the comparison's worker as D
 * loads it: its progress drawn, keys answered meanwhile, D or Esc closing it. Should its load
 * fail while the comparison is open, tui_app_run ends with TUI_APP_DIFF_FAILED and
 * tui_app_diff_failure says why.
 */
void tui_app_diff_load(struct tui_app *a, const char *path);
/* What tui_app_run returns when the load of tui_app_diff_load failed (the usage status). */
enum { TUI_APP_DIFF_FAILED = 2 };
/* Whether that load failed: then *d says why and *errors how many errors the trace has. */
bool tui_app_diff_failure(const struct tui_app *a, struct diag *d, uint64_t *errors);

/* The terminal changed size. */
void tui_app_resize(struct tui_app *a, int w, int h);

/* A key (a code point or TUI_KEY_*); returns TUI_RES_QUIT when the user quits. */
enum tui_result tui_app_key(struct tui_app *a, int key);

/* A mouse click (button 1) or wheel (4 up, 5 down) at (x, y). */
enum tui_result tui_app_mouse(struct tui_app *a, int x, int y, int button);

/* True while the source runs or a pane has background work. */
bool tui_app_busy(struct tui_app *a);

/* The main loop's frame rule, for a loop iteration: true when a frame that is due to be
 * drawn waits, since_ns after the last one and frame_ns apart. Frames wait only while
 * there is work (busy) and nobody typed (answer false); a run that has just stopped
 * (was_running, no longer running: finished or at a breakpoint) is drawn at once, and so is
 * a pane's result (result: tui_app_result) while the source does not run. */
bool tui_app_frame_held(bool busy, bool was_running, bool running, bool answer, bool result,
                        uint64_t since_ns, uint64_t frame_ns);

/*
 * The main loop's pace while running: the time from one frame to the next once a frame cost
 * cost_ns of the main thread's CPU time (what drawing took from the run; not the time other
 * processes held the CPU meanwhile, on a loaded machine most of the wall time): FRAME_SHARE
 * (40) times the frames' cost, averaged in *avg_ns (0 before the first frame) so that one
 * costly frame (the full repaint after a pane opens) does not hold the screen still for 40
 * times its own cost; at least FRAME_NS (a twentieth of a second). Returns the pace in ns.
 */
uint64_t tui_app_frame_pace(uint64_t *avg_ns, uint64_t cost_ns);

/* Run the source and the panes' background work for at most budget_ns. */
void tui_app_work(struct tui_app *a, uint64_t budget_ns);

/* True when something changed since the last render. */
bool tui_app_needs_render(struct tui_app *a);

/* Whether a pane's result waits to be shown at once (tui_app_frame_held's result): a pane's
 * background work ended, or a pane took an analysis's result (a verdict while its
 * experiment goes on). The main loop says it was shown once it has drawn a frame. */
bool tui_app_result(const struct tui_app *a);
void tui_app_result_shown(struct tui_app *a);

/* Bring the canvas up to date (redrawing only what changed) and return it (borrowed). */
const struct tui_canvas *tui_app_render(struct tui_app *a);

/* The active theme, and a counter that moves when it changes. */
const struct tui_theme *tui_app_theme(const struct tui_app *a, uint64_t *rev);

/* True once after Ctrl-L: the terminal should repaint everything. */
bool tui_app_take_repaint(struct tui_app *a);

/*
 * Run the app on a terminal until the user quits or a signal arrives. Returns the exit
 * status: 0, 128 + the signal number, or TUI_APP_DIFF_FAILED (tui_app_diff_load).
 */
int tui_app_run(struct tui_app *a, struct tui_term *t);

#endif
