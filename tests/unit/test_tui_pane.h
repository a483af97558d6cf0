/*
 * Helpers of the pane tests (test_tui_summary.c, test_tui_details.c,
 * test_tui_meminspect.c, test_tui_help.c): a pane rendered headlessly into a canvas, the
 * canvas as text, and an event of the fixture model found by name.
 */
#ifndef TEST_TUI_PANE_H
#define TEST_TUI_PANE_H

#include "test_tui_util.h"
#include "tui/panes/pane.h"

#include <time.h>

static inline char *dump(const struct tui_canvas *c)
{
    return tui_canvas_dump(c, false);
}

/* Render, and when that started an analysis (on a worker over a loaded model), wait for
 * it and render again with its result, as the main loop would. */
static inline void render(const struct tui_pane_ops *ops, void *self, struct tui_canvas *c,
                          struct tui_view *v, bool focused)
{
    if (ops->sync)
        ops->sync(self, v);
    ops->render(self, c, (struct tui_rect){0, 0, c->w, c->h}, v, focused);
    if (!ops->work || !ops->work(self, v, 1000000000))
        return;
    while (ops->work(self, v, 1000000000))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (ops->sync)
        ops->sync(self, v);
    ops->render(self, c, (struct tui_rect){0, 0, c->w, c->h}, v, focused);
}

/* The index of the first event named op. */
static inline uint64_t event_named(const struct trace_model *m, const char *op)
{
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        if (strcmp(trace_model_str(m, trace_model_event(m, i)->op), op) == 0)
            return i;
    cr_assert_fail("no event %s", op);
    return 0;
}

#endif
