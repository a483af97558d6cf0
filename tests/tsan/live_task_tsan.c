/*
 * ThreadSanitizer driver for the analyses of a live run (tui/panes/task.h; make tsan): the
 * app's main loop runs a growing model (growing.h) while the verdict, the layers, the
 * anomalies, the tokens and a critical path read it on the worker thread; frames are drawn,
 * the run is paused, stepped and resumed in the middle of them (each cancels what computes).
 * Exit 0 when the run got to its end with an analysis holding it at least once; any data race
 * between the worker and the loop (the model changed under an analysis) makes
 * ThreadSanitizer report and fail the run.
 */
#include "growing.h"

int main(void)
{
    /* each analysis pane in turn, the run moving under it between its runs */
    const int keys[] = {'v', 'y', 'A', 'T', 'v', 'C'};
    return growing_run(&(struct growing_drive){.name = "live_task_tsan",
                                               .keys = keys,
                                               .nkeys = sizeof(keys) / sizeof(keys[0]),
                                               .end = 30000,
                                               .key_every = 400,
                                               .key_at = 200,
                                               .pause_every = 1000,
                                               .pause_at = 777});
}
