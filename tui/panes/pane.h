/*
 * The pane interface: each pane (Gantt, summary, memory, details) is a const struct of
 * function pointers over its own state. A pane holds view state only (scroll, zoom,
 * selection, what it last drew) and borrows the model through the shared view; it renders
 * into a rectangle of the canvas and never touches the terminal.
 */
#ifndef TUI_PANE_H
#define TUI_PANE_H

#include "tui/term/canvas.h"
#include "tui/term/keymap.h"
#include "tui/term/view.h"

#include <stdbool.h>
#include <stdint.h>

struct tui_pane_ops {
    const char *name; /* "Gantt", "Summary"... */
    /* Catch up with the model and the view before a frame (new tracks, a moved "now");
     * returns true when the pane must be redrawn. May be NULL. */
    bool (*sync)(void *self, struct tui_view *v);
    /* Draw into r. focused: the pane has the keyboard. */
    void (*render)(void *self, struct tui_canvas *c, struct tui_rect r, struct tui_view *v,
                   bool focused);
    /* Carry out an action; TUI_RES_IGNORED when it is not for this pane. May be NULL. */
    enum tui_result (*action)(void *self, enum tui_action a, struct tui_view *v);
    /* A mouse click (button 1) or wheel (4 up, 5 down) at (x, y) inside the pane's last
     * rectangle. May be NULL. */
    enum tui_result (*mouse)(void *self, int x, int y, int button, struct tui_view *v);
    /* Background work for at most budget_ns; returns true while more remains. May be
     * NULL. */
    bool (*work)(void *self, struct tui_view *v, uint64_t budget_ns);
    /* The pane left the screen (hidden true) or came back: its run under way, if any, goes
     * on behind what is shown (tui_task_set_hidden). May be NULL. */
    void (*hidden)(void *self, bool hidden);
    void (*free)(void *self);
    bool uses_view; /* redraw when the shared view changes */
};

#endif
