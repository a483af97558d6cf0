/*
 * An analysis of a pane run without blocking the screen: on a worker thread, while the main
 * loop goes on answering keys and drawing its progress. Leaving the program cancels it: the
 * worker stops at its next check (trace/model/progress.h).
 *
 * A loaded trace's model no longer changes. A live model does (the simulation runs on the
 * main loop's thread and appends to arrays that move as they grow), so an analysis of a live
 * model reads a model that is held still: while it runs (tui_task_holding) the main loop
 * leaves the model as it is, and whatever would change it (stepping, going back) first
 * cancels the analysis (tui_task_release). A run to the end goes on meanwhile, what it does
 * kept aside and applied to the model once the analysis is done (tui/source/source.h,
 * tick_ahead); a run that must stop at a breakpoint or a step waits for the analysis. A live
 * task runs again only after TUI_TASK_HOLD_FACTOR times its last run has passed since
 * (tui_task_due), so that the model catches up in between and a run that waits keeps at least
 * 10/11 of its speed; the pane shows the last result meanwhile, and keys are answered
 * throughout.
 */
#ifndef TUI_TASK_H
#define TUI_TASK_H

#include "trace/model/progress.h"
#include "tui/term/canvas.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tui_task;

/* The analysis: computes into what arg points at, reporting to p; returns when done or
 * when p is cancelled. On a worker thread it may read the model and nothing else the main
 * loop touches. */
typedef void (*tui_task_fn)(void *arg, struct trace_progress *p);

/* A task that is not running. NPUSCOPE_TEST_ANALYSIS_DELAY_US (tests only) slows every
 * progress check of its analyses by that many microseconds, so that a small trace's
 * analysis lasts long enough to be interrupted. */
struct tui_task *tui_task_new(void);

/* Run fn(arg): on a worker thread when threaded (it must not be running), else here and
 * now. Returns at once when threaded. */
void tui_task_start(struct tui_task *t, tui_task_fn fn, void *arg, bool threaded);

/*
 * Mark t's runs as reading a live model (see above). discard(arg), when not NULL, frees what a
 * cancelled run left in arg (tui_task_release); it runs on the main loop's thread.
 */
typedef void (*tui_task_discard_fn)(void *arg);
void tui_task_set_live(struct tui_task *t, tui_task_discard_fn discard);

/* Whether a live task is running: the model must not change until it ends. */
bool tui_task_holding(void);

/* Whether the live run goes on while a live task holds its model (set by the main loop): the
 * task's progress says so, or that the run waits for it. */
void tui_task_set_run_on(bool on);

/* Cancel every running live task and wait for it (a few ms: the next progress check), its
 * result discarded: the model may change afterwards. */
void tui_task_release(void);

/* A live task runs again once this many times its last run has passed since it ended. */
enum { TUI_TASK_HOLD_FACTOR = 10 };

/* Whether t may start now: always for a task that is not live, and for a live task that never
 * ran; else not before TUI_TASK_HOLD_FACTOR times its last run has passed since it ended. */
bool tui_task_due(const struct tui_task *t);

/*
 * A task run ahead: an analysis computed before anyone asked for it (the verdict of a loaded
 * trace, its pane closed), so that its pane shows the result at once when it opens. The
 * user's analyses come first: while a threaded run that is not ahead is under way, a run
 * ahead waits at its progress checks (trace_progress.yielding), and goes on once none is;
 * beside the user's narrow runs (tui_task_set_narrow) alone, it goes on.
 * When the process may raise a thread's priority back (RLIMIT_NICE or CAP_SYS_NICE), it also
 * runs at the lowest priority (its thread's nice TUI_TASK_AHEAD_NICE), so that on busy cores
 * it yields the time to the rest of the process too; else it keeps the process's priority.
 * Set ahead false once the pane opens: the run under way goes on as the pane's own (one of
 * the user's from then on, even if ahead is set again), its priority raised back.
 */
enum { TUI_TASK_AHEAD_NICE = 19 };
void tui_task_set_ahead(struct tui_task *t, bool ahead);

/*
 * A task whose pane is hidden (another pane took its place on screen, or the terminal is
 * too small): the user looks at something else, which comes first. Its run under way waits
 * at its progress checks while a run of the user's on screen, not narrow, is under way (as
 * a run ahead does; a hidden run is not one of those), and goes on at the lowest priority
 * (TUI_TASK_AHEAD_NICE) while the process may raise it back, as a run ahead does; the
 * threads its analysis started before are left as they are, those it starts after take the
 * lowered priority. Shown again, the run gets back the priority it had and waits no more. A
 * run started while hidden starts so. A live task is left as it is (it holds the run while
 * it works). Called by the main loop's thread.
 */
void tui_task_set_hidden(struct tui_task *t, bool hidden);

/*
 * A narrow task: its analysis runs on its worker alone (one thread), so that one of its runs
 * of the user's on screen leaves the other cores free: runs ahead and hidden runs go on
 * beside it, at the lowest priority when they may, rather than waiting for it, as they do
 * for the user's other runs. Set before its runs start. Called by the main loop's thread.
 */
void tui_task_set_narrow(struct tui_task *t, bool narrow);

/*
 * An unasked task: its runs start on their own, not for a key (a loaded trace's summary,
 * made for the first frame). Such a run on screen keeps its priority, but waits at its
 * progress checks while a run the user waits for, not narrow, is under way (an analysis
 * whose key was pressed, or one ahead that a key now waits for): what the user asked for
 * comes first. Set before its runs start. Called by the main loop's thread.
 */
void tui_task_set_unasked(struct tui_task *t, bool unasked);

/* Whether runs ahead started from the calling thread lower their priority: the thread may
 * set a thread's nice value back to its own (RLIMIT_NICE allows it, or CAP_SYS_NICE). */
bool tui_task_may_lower(void);

/* How many threaded runs under way are the user's (not ahead) and on screen: what
 * background work of the process gives way to while it is not zero (read it from any
 * thread). */
const atomic_uint *tui_task_users(void);

/* Whether a threaded run the user waits for, not narrow, is under way (what runs ahead wait
 * for: an analysis whose key was pressed). */
bool tui_task_user_waits(void);

/* Whether a threaded run has not finished yet. */
bool tui_task_running(const struct tui_task *t);

/* True once after a run finished (its result is the caller's to take); false while it
 * runs, when nothing ran since the last call, or when the run was cancelled. */
bool tui_task_take_done(struct tui_task *t);

/* Whether a run is under way or has finished without its result taken yet
 * (tui_task_take_done): what a caller polls for, since nothing wakes it when a run ends. */
bool tui_task_pending(const struct tui_task *t);

/* Draw the progress of the running task in r: what it is doing, a bar with the percent,
 * how long it has run, and that the pane may be left meanwhile. */
void tui_task_draw(const struct tui_task *t, struct tui_canvas *c, struct tui_rect r,
                   const char *title);

/* The progress of the running task as one line ("critical path: dependencies, 42%"; the
 * percent in steps of 5, so that the line changes a few times a run) into buf. Returns
 * buf. */
char *tui_task_status(const struct tui_task *t, char *buf, size_t size);

/* Cancel a run and wait for the worker; NULL is a no-op. A worker that has not stopped
 * within TUI_TASK_STOP_MS (a step that cannot be interrupted) is left to the process's
 * end: the program then ends at once (_exit), since the model it reads is about to be
 * freed and the terminal is already restored. */
enum { TUI_TASK_STOP_MS = 300 };
void tui_task_free(struct tui_task *t);

/* The exit status of such an end (0 until set): the program's, set as it leaves its main
 * loop (128 + the signal's number when a signal ended it). */
void tui_task_exit_status(int status);

#endif
