/*
 * The comparison view: two traces one above the other on one time axis (or with B
 * shifted so that each matched launch or region starts where it does in A), a row per
 * component matched by name, a delta column beside them and a summary with A, B and the
 * change, and the details of a matched op on both sides. While a comparison is open
 * (npuscope view A --diff B, or D in the viewer) it takes the body of the screen; the app
 * keeps the header, the footer, the help and the keys that are not the view's. It reads
 * the comparison of trace/diff/diff.h and draws into the canvas like the panes.
 */
#ifndef TUI_DIFFVIEW_H
#define TUI_DIFFVIEW_H

#include "trace/diff/diff.h"
#include "trace/model/model.h"
#include "tui/term/canvas.h"
#include "tui/term/keymap.h"
#include "tui/term/view.h"

#include <stdbool.h>

struct tui_diffview;

/*
 * Compare a (borrowed: it must outlive the view) with b (taken, finished), both named for
 * the titles (copied), the time cursor at cursor (A's cycles). The comparison is computed
 * once, on a worker thread (tui/panes/task.h): until it is ready the view draws its
 * progress, is dirty at every frame, and leaves every key to the app (D, q, ?).
 */
struct tui_diffview *tui_diffview_new_take(const struct trace_model *a, const char *name_a,
                                           struct trace_model *b, const char *name_b,
                                           uint64_t cursor);
/*
 * The same with the second trace loaded from path_b (trace_diff_load) on the worker first,
 * its progress drawn meanwhile; named path_b. A load that fails leaves the view without a
 * comparison: tui_diffview_take_error says why.
 */
struct tui_diffview *tui_diffview_new_load(const struct trace_model *a, const char *name_a,
                                           const char *path_b, uint64_t cursor);
/* Free the view and the second trace (NULL is a no-op). A comparison still computed is
 * cancelled; a worker that does not stop within TUI_TASK_STOP_MS ends the program
 * (tui_task_free): for leaving the program. */
void tui_diffview_free(struct tui_diffview *dv);
/* The same for closing the view (D): a comparison still computed is cancelled and waited
 * for, however long its step that cannot be interrupted takes. */
void tui_diffview_close(struct tui_diffview *dv);

/* Whether the comparison is still being computed. */
bool tui_diffview_computing(struct tui_diffview *dv);
/* Once loading the second trace failed, the first call writes why into buf (one line: the
 * file, where, what is wrong, and how many more errors it has) and returns true; false
 * before, after, and for a view that loads nothing or loaded its trace. The view is then
 * only to be freed. */
bool tui_diffview_take_error(struct tui_diffview *dv, char *buf, size_t size);
/* Whether loading the second trace failed: then *d says why and *errors (when not NULL)
 * how many errors the trace has (trace_diff_load's); false while it loads, once it loaded,
 * and for a view that loads nothing. */
bool tui_diffview_load_failure(struct tui_diffview *dv, struct diag *d, uint64_t *errors);
/* Once the comparison is ready, the first call returns its note (trace_diff's note, "" when
 * none) for the status line; NULL before, and after. */
const char *tui_diffview_take_note(struct tui_diffview *dv);

/*
 * Carry out an action (messages go to v's status line; v's cursor follows the view's).
 * Returns TUI_RES_IGNORED for the actions that are not the view's own (quit, help, theme,
 * search...), which the app handles or refuses.
 */
enum tui_result tui_diffview_action(struct tui_diffview *dv, enum tui_action act,
                                    struct tui_view *v);

/* True when something changed since the view was last drawn. */
bool tui_diffview_dirty(const struct tui_diffview *dv);

/* Draw the view into r. */
void tui_diffview_render(struct tui_diffview *dv, struct tui_canvas *c, struct tui_rect r);

/* The second trace's name (borrowed), and the comparison (borrowed; NULL while it is
 * computed). */
const char *tui_diffview_name_b(const struct tui_diffview *dv);
const struct trace_diff *tui_diffview_diff(const struct tui_diffview *dv);

#endif
