/*
 * The terminal: the only module that calls curses. It checks that the terminal can run a
 * full-screen UI, draws a canvas (only the cells that changed since the last frame),
 * maps semantic styles to attributes through the active theme and what the terminal can
 * show (256, 16, 8 or no colours; NO_COLOR), reads keys, mouse and resizes, and restores
 * the terminal on every way out: a normal close, a signal (SIGINT, SIGTERM, SIGHUP: the
 * handlers only note the signal, the main loop ends), a fatal error (sim_die runs the
 * fatal hook), and a crash (the tty modes and screen are reset before the default
 * action).
 */
#ifndef TUI_TERM_H
#define TUI_TERM_H

#include "sim/util/diag.h"
#include "tui/term/canvas.h"
#include "tui/term/theme.h"

#include <stdbool.h>

struct tui_term;

enum tui_input_kind {
    TUI_IN_NONE,   /* the timeout passed */
    TUI_IN_KEY,    /* key: a code point or TUI_KEY_* */
    TUI_IN_MOUSE,  /* x, y, button: 1 click, 4 wheel up, 5 wheel down */
    TUI_IN_RESIZE, /* the window changed size */
    TUI_IN_SIGNAL, /* signo arrived: SIGINT, SIGTERM or SIGHUP (also: the terminal went away) */
    TUI_IN_READY,  /* the descriptor given to tui_term_wait_fd is readable */
};

struct tui_input {
    enum tui_input_kind kind;
    int key;
    int x, y, button;
    int signo;
};

/*
 * Check, without touching it, that the terminal on standard input and output can run
 * the viewer (what tui_term_open checks first). Returns 0 or a negative code with d
 * filled.
 */
int tui_term_check(struct diag *d);

/* Put the terminal back as it was before tui_term_open, with async-signal-safe calls only
 * (for a fatal-signal handler that reports and exits). No-op when no terminal is open. */
void tui_term_crash_restore(void);

/*
 * Take over the terminal on standard input and output. Fails, leaving the terminal
 * untouched, when they are not a terminal, TERM is unset or unknown, or the terminal
 * cannot address the cursor (TERM=dumb): returns a negative code with d saying so in one
 * line. The locale must be set (setlocale) before.
 */
int tui_term_open(struct tui_term **out, struct diag *d);

/* Give the terminal back as it was. NULL is a no-op. */
void tui_term_close(struct tui_term *t);

/* The terminal went away: from now on SIGHUP is ignored by every thread of the process,
 * also once t is closed. A hang-up may be signalled more than once (to the process group,
 * passed on by a supervisor, after its end was read on the terminal), and what follows it
 * (the trace written) must not be cut short by the default action, which a thread that
 * does not block the signal would take. */
void tui_term_ignore_hangups(struct tui_term *t);

void tui_term_size(struct tui_term *t, int *w, int *h);

/*
 * Whether the UI may draw Unicode (block and box characters): the locale's character set
 * is UTF-8 (call setlocale first) and the terminal is not one that shows only ASCII and
 * its line-drawing set (TERM vt52, vt100, vt102, vt220 and their variants, ansi, dumb),
 * whatever the locale says. The ASCII set is used otherwise.
 */
bool tui_term_unicode(void);

/* Colours in use: 256, 16, 8, or 0 (none, or NO_COLOR set). */
int tui_term_colours(const struct tui_term *t);

/* Use th for every style from now on (the next draw repaints everything). */
void tui_term_set_theme(struct tui_term *t, const struct tui_theme *th);

/* Forget what is on screen: the next draw repaints everything (Ctrl-L). */
void tui_term_invalidate(struct tui_term *t);

/* Show the canvas: cells that differ from the last frame are sent. */
void tui_term_draw(struct tui_term *t, const struct tui_canvas *c);

/* Wait up to timeout_ms (-1: forever, 0: just look) for input. */
void tui_term_wait(struct tui_term *t, int timeout_ms, struct tui_input *in);

/* The same, also ending with TUI_IN_READY when fd (ignored when negative) is readable: a
 * served run's socket, watched with the keyboard. Keys already typed come first. */
void tui_term_wait_fd(struct tui_term *t, int timeout_ms, int fd, struct tui_input *in);

#endif
