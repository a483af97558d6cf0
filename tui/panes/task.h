/*
 * An analysis of a pane run without blocking the screen: over a loaded trace (whose model
 * no longer changes) on a worker thread, while the main loop goes on answering keys and
 * drawing its progress; over a live model (which changes between frames) in the pane's own
 * slice of work, at once. Leaving the program cancels it: the worker stops at its next
 * check (trace/model/progress.h).
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

/* Whether a threaded run has not finished yet. */
bool tui_task_running(const struct tui_task *t);

/* True once after a run finished (its result is the caller's to take); false while it
 * runs or when nothing ran since the last call. */
bool tui_task_take_done(struct tui_task *t);

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
