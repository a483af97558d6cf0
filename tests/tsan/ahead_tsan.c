/*
 * ThreadSanitizer driver for runs ahead (tui/panes/task.h; make tsan): a run ahead counts
 * through its progress checks while the user's runs start and end on another task and its
 * pane opens and closes from the main thread, as the viewer does with the verdict computed
 * ahead and the other panes' analyses, beside a run no key asked for (the first frame's
 * summary, narrow), which waits while the verdict is the user's. Exit 0 when every run ended
 * (a run ahead or unasked that waited for itself would never end); a data race between the
 * worker threads and the main thread makes ThreadSanitizer report and fail the run.
 */
#include "tui/panes/task.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

struct work {
    atomic_int stop;
    atomic_ulong checks;
};

static void counting(void *arg, struct trace_progress *p)
{
    struct work *w = arg;
    for (uint64_t i = 0; !trace_progress_at(p, i) && !atomic_load(&w->stop); i++) {
        atomic_fetch_add(&w->checks, 1);
        struct timespec ts = {0, 50 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void short_run(void *arg, struct trace_progress *p)
{
    struct work *w = arg;
    for (uint64_t i = 0; i < 20 && !trace_progress_at(p, i); i++)
        atomic_fetch_add(&w->checks, 1);
}

int main(void)
{
    struct tui_task *ahead = tui_task_new(), *user = tui_task_new(), *first = tui_task_new();
    struct work a = {0}, u = {0}, f = {0};
    tui_task_set_narrow(first, true);
    tui_task_set_unasked(first, true);
    for (int round = 0; round < 40; round++) {
        atomic_store(&a.stop, 0);
        atomic_store(&f.stop, 0);
        tui_task_set_ahead(ahead, true);
        tui_task_start(ahead, counting, &a, true);
        tui_task_start(first, counting, &f, true);
        for (int k = 0; k < 10; k++) {
            if (!tui_task_running(user))
                tui_task_start(user, short_run, &u, true);
            if (k == 5 + round % 3)
                tui_task_set_ahead(ahead, false); /* its pane opens */
            if (k == 8 && round % 2)
                tui_task_set_ahead(ahead, true); /* and closes */
            struct timespec ts = {0, 300 * 1000};
            nanosleep(&ts, NULL);
            tui_task_take_done(user);
        }
        atomic_store(&a.stop, 1);
        atomic_store(&f.stop, 1);
        for (int i = 0;
             tui_task_running(ahead) || tui_task_running(user) || tui_task_running(first); i++) {
            if (i > 5000) {
                fprintf(stderr, "ahead_tsan: a run did not end (round %d)\n", round);
                return 1;
            }
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        tui_task_take_done(ahead);
        tui_task_take_done(user);
        tui_task_take_done(first);
    }
    tui_task_free(first);
    tui_task_free(user);
    tui_task_free(ahead);
    printf("ahead_tsan: %lu checks ahead, %lu of the user's, %lu unasked\n", atomic_load(&a.checks),
           atomic_load(&u.checks), atomic_load(&f.checks));
    return 0;
}
