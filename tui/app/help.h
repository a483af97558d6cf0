/*
 * The help overlay: every key of the key map with what it does (the simulation keys only
 * when the source can step), and a legend of what the Gantt's cells mean.
 */
#ifndef TUI_HELP_H
#define TUI_HELP_H

#include "tui/term/canvas.h"

#include <stdbool.h>

/*
 * Draw the help in a box centred in r, from line scroll on. live: list the keys of a
 * running simulation too. Returns the number of lines the help has and stores in
 * *visible how many fit, so the caller can bound scrolling.
 */
int tui_help_render(struct tui_canvas *c, struct tui_rect r, int scroll, bool live, int *visible);

#endif
